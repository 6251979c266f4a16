//! The status bar at 80 columns: state, step and the damage warning whole, the
//! focused chart named, help texts whole or not at all; lower-priority parts (the
//! run's name first) go to make room.

use crate::common;

use common::screen::{app_from, screen};
use crossterm::event::KeyCode;
use leet::msg::Msg;

fn status(fixture: &str, keys: &[Msg]) -> String {
    let mut app = app_from(fixture, 80, 24);
    for k in keys {
        app.update(k.clone());
    }
    screen(&app, 80, 24).lines().nth(23).unwrap().to_owned()
}

#[test]
fn the_focused_chart_is_named_in_the_status_bar() {
    // tiny's grid starts on `acc`; `d` moves the focus right, to `loss`.
    let s = status("tiny", &[]);
    assert!(s.contains("▸ acc"), "{s}");
    let s = status("tiny", &[Msg::char('d')]);
    assert!(s.contains("▸ loss") && !s.contains("acc"), "{s}");
    // Full screen: the chart shown is the one named.
    let s = status("tiny", &[Msg::char('d'), Msg::key(KeyCode::Enter)]);
    assert!(s.contains("▸ loss"), "{s}");
}

#[test]
fn typing_a_filter_keeps_step_prompt_and_whole_help_at_80_columns() {
    let mut keys = vec![Msg::char('/')];
    keys.extend("loss".chars().map(Msg::char));
    let s = status("many_metrics", &keys);
    assert!(s.contains("step 19"), "{s}");
    assert!(s.contains("/loss▏[2/195]"), "{s}");
    assert!(s.contains("tab: glob · enter keep · esc restore"), "{s}");
    // `h: help` is whole or gone (here gone: the prompt's own help comes first).
    assert!(s.ends_with("h: help") || !s.contains("h: h"), "{s}");
    // The run's name went first, not cut in the middle.
    assert!(!s.contains("many0001") && !s.contains('…'), "{s}");
}

#[test]
fn a_crashed_run_keeps_its_state_and_step_whole_at_80_columns() {
    let s = status("crashed", &[]);
    assert!(s.contains("crashed?"), "{s}");
    assert!(s.contains("step 250"), "{s}");
    assert!(s.ends_with("h: help"), "{s}");
}

#[test]
fn user_metric_charts_get_no_invented_unit() {
    let mut app = app_from("tiny", 120, 40);
    app.update(Msg::char('d'));
    let s = screen(&app, 120, 40);
    // The chart titles are the keys as logged: `acc`, `loss`, nothing added.
    assert!(s.contains("╭acc─") || s.contains("┏acc━"), "{s}");
    assert!(s.contains("┏loss━"), "{s}");
    assert!(!s.contains("acc (") && !s.contains("loss ("), "{s}");
}
