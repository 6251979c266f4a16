//! Y axis snapshots: round ticks on a tall chart, the guides `g` cycles (off →
//! dots → lines), a log-y chart and a nearly flat series, driven through keys.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::KeyCode;
use leet::msg::Msg;

/// `fixture` at `w`×`h` after `keys`.
fn shown(fixture: &str, w: u16, h: u16, keys: &[Msg]) -> String {
    let mut app = app_from(fixture, w, h);
    for k in keys {
        app.update(k.clone());
    }
    screen(&app, w, h)
}

/// The y labels of a full-screen chart: the text left of its `│` axis, top down.
fn y_labels(s: &str) -> Vec<String> {
    s.lines()
        .filter_map(|l| {
            let body = l.strip_prefix('┃')?;
            let (label, _) = body.split_once('│')?;
            let label = label.trim();
            (!label.is_empty()).then(|| label.to_owned())
        })
        .collect()
}

/// tiny's `loss` chart full screen.
fn fullscreen() -> Vec<Msg> {
    vec![Msg::char('d'), Msg::key(KeyCode::Enter)]
}

#[test]
fn a_tall_chart_has_round_ticks_between_its_ends() {
    for (w, h) in SIZES {
        let s = shown("tiny", w, h, &fullscreen());
        let labels = y_labels(&s);
        // the ends and at least two round values between them, every one with
        // the same decimals and none twice
        assert!(labels.len() >= 4, "{w}x{h}: {labels:?}\n{s}");
        let decimals: Vec<usize> = labels
            .iter()
            .map(|l| l.split_once('.').map_or(0, |(_, d)| d.len()))
            .collect();
        assert!(decimals.windows(2).all(|p| p[0] == p[1]), "{labels:?}");
        let mut u = labels.clone();
        u.sort();
        u.dedup();
        assert_eq!(u.len(), labels.len(), "{labels:?}");
        insta::assert_snapshot!(format!("tiny_{w}x{h}_fullscreen_ticks"), s);
    }
}

#[test]
fn g_cycles_the_guides_dots_then_lines_then_off() {
    for (w, h) in SIZES {
        let off = shown("tiny", w, h, &fullscreen());
        let mut keys = fullscreen();
        keys.push(Msg::char('g'));
        let dots = shown("tiny", w, h, &keys);
        // (The status bar's hint has a `·` between its keys: a guide is a row of them.)
        assert!(dots.contains("· · ·") && !off.contains("· ·"), "{dots}");
        insta::assert_snapshot!(format!("tiny_{w}x{h}_guides_dots"), dots);
        keys.push(Msg::char('g'));
        let lines = shown("tiny", w, h, &keys);
        assert!(lines.contains("───") && !lines.contains("· ·"), "{lines}");
        insta::assert_snapshot!(format!("tiny_{w}x{h}_guides_lines"), lines);
        // the labels stay where they were
        assert_eq!(y_labels(&lines), y_labels(&off));
        keys.push(Msg::char('g'));
        assert_eq!(shown("tiny", w, h, &keys), off);
    }
}

#[test]
fn guides_work_in_the_grid_too() {
    let s = shown("tiny", 200, 60, &[Msg::char('g'), Msg::char('g')]);
    assert!(s.contains("───"), "{s}");
}

#[test]
fn a_log_y_chart_ticks_at_powers_of_ten() {
    for (w, h) in SIZES {
        let mut keys = fullscreen();
        keys.push(Msg::char('y'));
        let s = shown("tiny", w, h, &keys);
        assert!(s.contains("loss · log"), "{s}");
        let labels = y_labels(&s);
        assert!(labels.len() >= 3, "{w}x{h}: {labels:?}\n{s}");
        // loss runs 0.104..2.01: the axis from 0.1 to 5 (round ends, as its
        // ticks are), ticked at 1 and its 2× and 5× around it
        assert_eq!(labels.first().map(String::as_str), Some("5"), "{labels:?}");
        assert_eq!(labels.last().map(String::as_str), Some("0.1"), "{labels:?}");
        let ticks = &labels[1..labels.len() - 1];
        for t in ticks {
            assert!(
                ["2", "1", "0.5", "0.2"].contains(&t.as_str()),
                "{w}x{h}: {labels:?}"
            );
        }
        assert!(ticks.iter().any(|t| t == "1"), "{labels:?}");
        insta::assert_snapshot!(format!("tiny_{w}x{h}_log_ticks"), s);
    }
}

#[test]
fn a_nearly_flat_series_has_consistent_labels() {
    // system's Disk Usage barely moves (13.3200% to 13.3206%): the sidebar chart
    // shows both ends with the same decimals, never 13.321% beside 13.32%, and
    // as many as make them the axis's ends (13.321% would be past the top).
    // (The 200-column sidebar is the one tall enough to show it.)
    let s = shown("system", 200, 60, &[]);
    assert!(s.contains("13.3206%") && s.contains("13.3200%"), "{s}");
    assert!(!s.contains(" 13.32%│"), "{s}");
    // Disk Used: 12.1041GiB to 12.1047GiB, both ends told apart, once each
    assert!(s.contains("12.1047GiB") && s.contains("12.1041GiB"), "{s}");
    insta::assert_snapshot!("system_200x60_nearly_flat", s);
}
