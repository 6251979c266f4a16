//! The crosshair: reading values off the charts, by key (`C`, `←`/`→`), synced
//! across the visible charts, and by mouse (right click or drag). Snapshots at three
//! sizes, and the values it shows checked against the fixture's records.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use leet::msg::Msg;
use leet::ui::App;

fn keys(app: &mut App, keys: &[Msg]) {
    for k in keys {
        app.update(k.clone());
    }
}

/// The value a fixture's history logs for `key` at step `step`.
fn recorded(fixture: &str, key: &str, step: f64) -> f64 {
    let text = std::fs::read_to_string(common::runs_dir().join(format!("{fixture}.records.jsonl")))
        .unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let item = &v["history"]["item"];
        if item["_step"].as_f64() == Some(step) {
            if let Some(y) = item[key].as_f64() {
                return y;
            }
        }
    }
    panic!("{fixture}: no {key} at step {step}");
}

#[test]
fn crosshair_by_key_steps_point_by_point_and_shows_the_recorded_value() {
    for (w, h) in SIZES {
        let mut app = app_from("tiny", w, h);
        keys(
            &mut app,
            &[
                Msg::char('C'),
                Msg::key(KeyCode::Left),
                Msg::key(KeyCode::Left),
                Msg::key(KeyCode::Left),
            ],
        );
        let c = app.charts.crosshair.unwrap();
        assert!(!c.synced);
        let key = app.focused_key().unwrap().to_owned();
        // Three points back from the last one.
        let last = app.shown.run.metrics.get(&key).unwrap().last().unwrap().0;
        let s = app.shown.run.metrics.get(&key).unwrap();
        let mut x = last;
        for _ in 0..3 {
            x = s.step_from(x, false).unwrap();
        }
        assert_eq!(c.x, x);
        let want = leet::ui::widget::format::value(recorded("tiny", &key, c.x));
        let shot = screen(&app, w, h);
        assert!(
            shot.contains(&format!(
                "x={} · {want}",
                leet::ui::widget::format::value(c.x)
            )),
            "{key} at {}: {want} not shown\n{shot}",
            c.x
        );
        insta::assert_snapshot!(format!("crosshair_key_{w}x{h}"), shot);
    }
}

#[test]
fn synced_crosshair_is_on_every_visible_chart_and_esc_hides_it() {
    for (w, h) in SIZES {
        let mut app = app_from("multi", w, h);
        keys(
            &mut app,
            &[Msg::char('C'), Msg::char('C'), Msg::key(KeyCode::Left)],
        );
        let c = app.charts.crosshair.unwrap();
        assert!(c.synced);
        let shot = screen(&app, w, h);
        // Both charts of the run show their value at that x.
        for key in ["acc", "loss"] {
            let want = leet::ui::widget::format::value(recorded(
                "multi.offline-run-20261130_175142-multi005",
                key,
                c.x,
            ));
            assert!(shot.contains(&want), "{key}: {want}\n{shot}");
        }
        insta::assert_snapshot!(format!("crosshair_synced_{w}x{h}"), shot);
        // C again: off. Esc also hides it (before leaving full screen or focus).
        app.update(Msg::char('C'));
        assert!(app.charts.crosshair.is_none());
        app.update(Msg::char('C'));
        app.update(Msg::key(KeyCode::Esc));
        assert!(app.charts.crosshair.is_none());
    }
}

#[test]
fn a_right_click_puts_the_crosshair_under_the_pointer_and_a_drag_moves_it() {
    let mut app = app_from("tiny", 120, 40);
    let grid = app.screen.areas.grid;
    let body = leet::ui::layout::grid_body(grid);
    let cell = leet::ui::layout::grid_cell(body, app.charts.grid.cols, app.charts.grid.rows, 0);
    let at = |kind, col: u16| {
        Msg::Mouse(MouseEvent {
            kind,
            column: col,
            row: cell.y + cell.height / 2,
            modifiers: KeyModifiers::NONE,
        })
    };
    // The left edge: the first point; the right edge: the last.
    app.update(at(MouseEventKind::Down(MouseButton::Right), cell.x + 1));
    let key = app.focused_key().unwrap().to_owned();
    let s = app.shown.run.metrics.get(&key).unwrap();
    assert_eq!(app.charts.crosshair.map(|c| c.x), s.first().map(|p| p.0));
    app.update(at(
        MouseEventKind::Drag(MouseButton::Right),
        cell.right() - 1,
    ));
    let s = app.shown.run.metrics.get(&key).unwrap();
    assert_eq!(app.charts.crosshair.map(|c| c.x), s.last().map(|p| p.0));
}

/// The focused chart's zoom window (`>` around the crosshair).
fn zoomed(app: &App) -> (f64, f64) {
    let key = app.focused_key().unwrap().to_owned();
    *app.charts.zoom.get(&key).expect("the chart is zoomed")
}

#[test]
fn the_crosshair_stepped_past_a_zoomed_edge_pans_the_window_along() {
    let mut app = app_from("tiny", 120, 40);
    keys(&mut app, &[Msg::char('C')]);
    keys(&mut app, &[Msg::char('>'), Msg::char('>'), Msg::char('>')]);
    let (x0, x1) = zoomed(&app);
    let width = x1 - x0;
    // Far more steps left than the window holds points.
    for _ in 0..60 {
        app.update(Msg::key(KeyCode::Left));
        let c = app.charts.crosshair.unwrap();
        let (a, b) = zoomed(&app);
        assert!((a..=b).contains(&c.x), "x={} outside {a}..{b}", c.x);
        assert!(((b - a) - width).abs() < 1e-9, "the window keeps its width");
    }
    // At the run's first point, the window starts there.
    let key = app.focused_key().unwrap().to_owned();
    let first = app
        .shown
        .run
        .metrics
        .get(&key)
        .unwrap()
        .x_bounds()
        .unwrap()
        .0;
    assert_eq!(app.charts.crosshair.unwrap().x, first);
    assert_eq!(zoomed(&app).0, first);
    // And back the other way, to the last point.
    for _ in 0..60 {
        app.update(Msg::key(KeyCode::Right));
        let c = app.charts.crosshair.unwrap();
        let (a, b) = zoomed(&app);
        assert!((a..=b).contains(&c.x), "x={} outside {a}..{b}", c.x);
    }
    let shot = screen(&app, 120, 40);
    let c = app.charts.crosshair.unwrap();
    assert!(
        shot.contains(&format!("x={}", leet::ui::widget::format::value(c.x))),
        "{shot}"
    );
}

#[test]
fn a_zoom_that_leaves_the_crosshair_outside_brings_it_in() {
    let mut app = app_from("tiny", 120, 40);
    // The crosshair at the last point, the view zoomed in around the middle
    // (the wheel at the chart's left edge) so that the crosshair is left out.
    keys(&mut app, &[Msg::char('C')]);
    let body = leet::ui::layout::grid_body(app.screen.areas.grid);
    let cell = leet::ui::layout::grid_cell(body, app.charts.grid.cols, app.charts.grid.rows, 0);
    for _ in 0..4 {
        app.update(Msg::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollUp,
            column: cell.x + 1,
            row: cell.y + cell.height / 2,
            modifiers: KeyModifiers::NONE,
        }));
    }
    let (a, b) = zoomed(&app);
    let c = app.charts.crosshair.unwrap();
    assert!((a..=b).contains(&c.x), "x={} outside {a}..{b}", c.x);
}

#[test]
fn home_and_end_put_the_crosshair_at_the_first_and_last_point_in_view() {
    let mut app = app_from("tiny", 120, 40);
    keys(&mut app, &[Msg::char('C'), Msg::char('>'), Msg::char('>')]);
    let (a, b) = zoomed(&app);
    let key = app.focused_key().unwrap().to_owned();
    let xs: Vec<f64> = (app.shown.run.metrics.get(&key).unwrap().points().iter())
        .map(|p| p.0)
        .filter(|x| (a..=b).contains(x))
        .collect();
    app.update(Msg::key(KeyCode::Home));
    assert_eq!(app.charts.crosshair.unwrap().x, xs[0]);
    app.update(Msg::key(KeyCode::End));
    assert_eq!(app.charts.crosshair.unwrap().x, xs[xs.len() - 1]);
    // The view and the grid's page stay.
    assert_eq!(zoomed(&app), (a, b));
    assert_eq!(app.focused_key(), Some(key.as_str()));
}

#[test]
fn home_and_end_move_the_crosshair_on_a_full_screen_chart_too() {
    let mut app = app_from("tiny", 160, 45);
    keys(&mut app, &[Msg::key(KeyCode::Enter), Msg::char('C')]);
    assert!(app.panels.fullscreen);
    let key = app.focused_key().unwrap().to_owned();
    let pts = app.shown.run.metrics.get(&key).unwrap().points();
    let (first, last) = (pts[0].0, pts[pts.len() - 1].0);
    app.update(Msg::key(KeyCode::Home));
    assert_eq!(app.charts.crosshair.unwrap().x, first);
    keys(
        &mut app,
        &[Msg::key(KeyCode::Right), Msg::key(KeyCode::End)],
    );
    assert_eq!(app.charts.crosshair.unwrap().x, last);
    // The chart shown stays the same, full screen.
    assert!(app.panels.fullscreen);
    assert_eq!(app.focused_key(), Some(key.as_str()));
    assert!(
        screen(&app, 160, 45).contains(&format!("x={} · ", leet::ui::widget::format::value(last)))
    );
    // With the crosshair off they go to the first / last chart, still full screen.
    keys(
        &mut app,
        &[Msg::char('C'), Msg::char('C'), Msg::key(KeyCode::End)],
    );
    assert!(app.charts.crosshair.is_none() && app.panels.fullscreen);
    let name = |i: Option<&usize>| i.map(|&i| app.charts.metric_keys[i].clone());
    let (first, last) = (
        name(app.charts.shown.first()),
        name(app.charts.shown.last()),
    );
    assert_eq!(app.focused_key().map(str::to_owned), last);
    app.update(Msg::key(KeyCode::Home));
    assert_eq!(app.focused_key().map(str::to_owned), first);
}

#[test]
fn the_crosshair_steps_onto_a_nan_point_reads_nan_and_steps_past_it() {
    // `nan_metric`: [0, NaN] [1, 0.5] [2, 1] [3, NaN] … [17, 8.5] [18, NaN] [19, 9.5].
    let mut app = app_from("many_metrics", 120, 40);
    app.update(Msg::char('/'));
    for c in "^nan_metric$".chars() {
        app.update(Msg::char(c));
    }
    keys(
        &mut app,
        &[
            Msg::key(KeyCode::Enter),
            Msg::char('C'),
            Msg::key(KeyCode::Home),
        ],
    );
    assert_eq!(app.focused_key(), Some("nan_metric"));
    let x = |app: &App| app.charts.crosshair.unwrap().x;
    // The first point is a NaN one: `home` goes there all the same.
    assert_eq!(x(&app), 0.0);
    assert!(screen(&app, 120, 40).contains("x=0 · NaN"));
    let mut seen = Vec::new();
    for _ in 0..4 {
        app.update(Msg::key(KeyCode::Right));
        seen.push(x(&app));
        if x(&app) == 3.0 {
            let shot = screen(&app, 120, 40);
            assert!(shot.contains("x=3 · NaN"), "{shot}");
        }
    }
    assert_eq!(seen, [1.0, 2.0, 3.0, 4.0]);
    app.update(Msg::key(KeyCode::End));
    let mut seen = Vec::new();
    for _ in 0..3 {
        app.update(Msg::key(KeyCode::Left));
        seen.push(x(&app));
        if x(&app) == 18.0 {
            let shot = screen(&app, 120, 40);
            assert!(shot.contains("x=18 · NaN"), "{shot}");
        }
    }
    assert_eq!(seen, [18.0, 17.0, 16.0]);
}
