//! Unit tests of the x mapping, its thinning and its labels.

use super::*;
use crate::store::series::Series;

#[test]
fn relative_time_labels() {
    assert_eq!(rel_time(0.0, 7200.0), "0s");
    assert_eq!(rel_time(30.0, 7200.0), "30s");
    assert_eq!(rel_time(60.0, 7200.0), "1m");
    assert_eq!(rel_time(90.0, 7200.0), "1m30s");
    assert_eq!(rel_time(3720.0, 7200.0), "1h02m");
    assert_eq!(rel_time(7200.0, 7200.0), "2h");
    assert_eq!(rel_time(86_400.0 * 2.0 + 3.0 * 3600.0, 1e6), "2d03h");
    assert_eq!(rel_time(-5.0, 100.0), "-5s");
    // A run of a fraction of a second: decimals that tell its ticks apart.
    assert_eq!(rel_time(0.385, 0.02), "0.385s");
    assert_eq!(rel_time(0.39, 0.02), "0.39s");
    assert_eq!(rel_time(2.5, 8.0), "2.5s");
    assert_eq!(rel_time(f64::NAN, 1.0), "?");
}

#[test]
fn wall_time_labels() {
    // 2026-11-30 17:48:29 UTC.
    let t = 1_796_060_909.0;
    assert_eq!(wall_time(t, (t - 600.0, t)), "17:48:29");
    // Across midnight: the date.
    assert_eq!(wall_time(t, (t - 86_400.0, t)), "11-30 17:48");
    assert_eq!(wall_time(t - 86_400.0, (t - 86_400.0, t)), "11-29 17:48");
    // Under ten seconds: fractions, truncated as a clock's.
    assert_eq!(wall_time(t + 0.5849, (t, t + 0.02)), "17:48:29.584");
    assert_eq!(wall_time(t + 0.9999, (t, t + 5.0)), "17:48:29.9");
    assert_eq!(month_day(0), (1, 1));
    assert_eq!(month_day(20_787), (11, 30));
    assert_eq!(month_day(20_788), (12, 1));
}

#[test]
fn thinning_keeps_logged_order_for_an_x_that_goes_back() {
    // epoch logged 0, 2, 1, 3: the line goes point to point as logged.
    let pts = [(0.0, 1.0), (2.0, 2.0), (1.0, 3.0), (3.0, 4.0)];
    assert_eq!(thin(&pts, (0.0, 3.0), 100), pts.to_vec());
    // Many points in one column: its min and max, in logged order.
    let pts: Vec<Point> = (0..100)
        .map(|i| (f64::from(i) / 1000.0, f64::from(i % 7)))
        .collect();
    let out = thin(&pts, (0.0, 1.0), 10);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].1, 0.0);
    assert_eq!(out[1].1, 6.0);
    // Gaps stay.
    let pts = [(0.0, 1.0), (0.5, f64::NAN), (1.0, 2.0)];
    assert!(thin(&pts, (0.0, 1.0), 4)[1].1.is_nan());
}

/// Log x thinned in log space: a 100k-point series over 1..=100k (five decades)
/// has as many points in the first decade's columns as in the last one's. Thinned
/// in linear x first (as W&B's sampling does), the first decade is one column.
#[test]
fn log_x_thins_in_log_space_and_keeps_the_first_decade() {
    let mut s = Series::new(200_000);
    for i in 1..=100_000u32 {
        s.push(f64::from(i), (f64::from(i) * 0.37).sin());
    }
    let width = 200;
    let logged: Vec<Point> = s
        .points()
        .iter()
        .filter_map(|&(x, y)| axis_value(x, true).map(|v| (v, y)))
        .collect();
    let out = thin(&logged, (0.0, 5.0), width);
    let cols = |from: f64, to: f64| {
        let mut c: Vec<i64> = out
            .iter()
            .filter(|p| p.0 >= from && p.0 < to)
            .map(|p| (p.0 / 5.0 * width as f64).floor() as i64)
            .collect();
        c.dedup();
        c.len()
    };
    // x 1..10 has nine points (log10 0..1: 40 columns); each its own column.
    assert_eq!(cols(0.0, 1.0), 9);
    // 10..100 fills most of its 40 columns, the last decade all of them.
    assert!(cols(1.0, 2.0) >= 30, "{}", cols(1.0, 2.0));
    assert!(cols(4.0, 5.0) >= 39, "{}", cols(4.0, 5.0));
    assert!(out.len() <= 2 * width + 4, "{}", out.len());
    // The linear-first way: thinned over 1..100k, then logged.
    let mut lin = Vec::new();
    s.downsample(1.0, 100_000.0, width, &mut lin);
    let first = lin.iter().filter(|p| p.0 < 10.0).count();
    assert!(first <= 2, "{first}");
}

#[test]
fn axis_values_on_a_log_axis_drop_zero_and_below() {
    assert_eq!(axis_value(100.0, true), Some(2.0));
    assert_eq!(axis_value(0.0, true), None);
    assert_eq!(axis_value(-3.0, true), None);
    assert_eq!(axis_value(-3.0, false), Some(-3.0));
    assert_eq!(axis_value(f64::NAN, false), None);
}

#[test]
fn the_crosshair_reads_a_long_time_axis_finer_than_its_labels() {
    // An 11 s axis: labels in whole seconds, the crosshair to the ms.
    let t0 = 1_796_060_000.0 + 17.0 * 3600.0 + 51.0 * 60.0 + 32.0;
    let m = |kind, x: (f64, f64)| Mapped {
        x,
        pts: Vec::new(),
        dropped: 0,
        floor: false,
        log: false,
        ticks: XTicks::Seconds,
        name: None,
        cursor: None,
        at: Vec::new(),
        unplaced: Vec::new(),
        own: "_step".into(),
        kind,
    };
    let wall = m(Kind::Wall, (t0, t0 + 11.0));
    let a = wall.cursor_label(t0 + 11.348);
    let b = wall.cursor_label(t0 + 11.342);
    assert_ne!(a, b);
    assert!(a.ends_with(".348"), "{a}");
    assert_eq!(wall.label(t0 + 11.348), wall.label(t0 + 11.342));
    let rel = m(Kind::Relative, (0.0, 40.0));
    assert_eq!(rel.cursor_label(12.345), "12.345s");
    // Under ten seconds the axis's own decimals already tell steps apart.
    let short = m(Kind::Relative, (0.343, 0.407));
    assert_eq!(short.cursor_label(0.348), short.label(0.348));
}

#[test]
fn each_step_moves_the_crosshair_on_a_relative_time_axis() {
    // A point every 0.5 s for five minutes: whole-second labels, the crosshair
    // to the half second, past the minute too.
    let m = |kind, x: (f64, f64), log| Mapped {
        x,
        pts: Vec::new(),
        dropped: 0,
        floor: false,
        log,
        ticks: XTicks::Seconds,
        name: None,
        cursor: None,
        at: Vec::new(),
        unplaced: Vec::new(),
        own: "_step".into(),
        kind,
    };
    let rel = m(Kind::Relative, (0.0, 301.5), false);
    let read: Vec<String> = [301.5, 301.0, 300.5, 300.0, 299.5, 299.0]
        .iter()
        .map(|&v| rel.cursor_label(v))
        .collect();
    assert_eq!(
        read,
        ["5m01.5s", "5m01s", "5m00.5s", "5m00s", "4m59.5s", "4m59s"]
    );
    assert_eq!(rel.cursor_label(3723.0), "1h02m03s");
    assert_eq!(rel.cursor_label(12.25), "12.25s");
    // Zoomed to a few seconds past the minute: still apart.
    let short = m(Kind::Relative, (61.0, 64.0), false);
    assert_ne!(short.cursor_label(62.1), short.cursor_label(62.2));
    // A step (log x over steps too) reads in full.
    let steps = m(Kind::Number, (0.0, 19_999.0), false);
    assert_eq!(steps.cursor_label(19_999.0), "19999");
    assert_eq!(steps.cursor_label(19_995.0), "19995");
    let log = m(Kind::Number, (0.0, 19_999f64.log10()), true);
    assert_eq!(log.cursor_label(19_999f64.log10()), "19999");
}

/// The points log x cannot draw, counted in the corner; a floor (`≥`) once a
/// series is past its point cap, whose groups keep only their extremes.
#[test]
fn the_count_of_points_not_drawn_is_a_floor_past_the_point_cap() {
    let m = |floor| Mapped {
        x: (0.0, 4.0),
        pts: Vec::new(),
        dropped: 3,
        floor,
        log: true,
        ticks: XTicks::Log10,
        name: None,
        cursor: None,
        at: Vec::new(),
        unplaced: Vec::new(),
        own: "_step".into(),
        kind: Kind::Number,
    };
    assert_eq!(
        m(false).corner(false, None, Some(1.0), 40).as_deref(),
        Some("1 · 3 x≤0")
    );
    assert_eq!(
        m(true).corner(false, None, Some(1.0), 40).as_deref(),
        Some("1 · ≥3 x≤0")
    );
}
