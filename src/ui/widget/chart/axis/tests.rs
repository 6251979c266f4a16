//! The y axis: a label is the value on its row, and a percentage's axis stays
//! within 0–100 % where its values do.

use super::super::{y_range, Line};
use super::*;
use ratatui::style::Style;

/// The number a plain or percent label writes (`1.0k` in thousands).
fn number(label: &str) -> f64 {
    let (num, times) = match label.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => (label.trim_end_matches('%'), 1.0),
    };
    num.parse::<f64>()
        .unwrap_or_else(|_| panic!("not a number: {label}"))
        * times
}

/// `a` and `b` are one value, to float error.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn texts(ax: &YAxis) -> Vec<&str> {
    let mut l: Vec<&(u16, String)> = ax.labels.iter().collect();
    l.sort_by_key(|x| x.0);
    l.iter().map(|x| x.1.as_str()).collect()
}

#[test]
fn every_label_is_the_value_on_its_row() {
    let ranges = [
        (0.0831, 0.4837),
        (12.5, 87.5),
        (-0.73, -0.11),
        (0.104, 2.01),
        (63.04, 73.41),
        (3.9, 5.1),
        (13.312, 13.341),
        (0.0239, 0.999),
        (-3.7, 12.25),
        (1.0, 90.0),
        (4.5, 5.5),
        (0.0, 59.0),
        (210.3, 990.7),
    ];
    for rows in [5u16, 7, 8, 13, 17, 21, 36, 56] {
        for (lo, hi) in ranges {
            for unit in [Unit::Plain, Unit::Percent] {
                let ax = y_axis(lo, hi, rows, false, unit);
                let (a, b) = ax.range.expect("a linear axis says its range");
                let case = format!("{lo}..{hi} on {rows}: {a}..{b} {:?}", ax.labels);
                // It covers the values; with ticks its ends are on their step
                // (the labels' least difference) and at most a step out, without
                // (two labels show no step) it widens by half at the most.
                assert!(a <= lo && b >= hi, "{case}");
                let mut vs: Vec<f64> = ax.labels.iter().map(|(_, l)| number(l)).collect();
                vs.sort_by(f64::total_cmp);
                let step = vs
                    .windows(2)
                    .map(|w| w[1] - w[0])
                    .fold(f64::INFINITY, f64::min);
                assert!(b - a <= 1.5 * (hi - lo) + 1e-12, "{case}");
                if !ax.ticks.is_empty() {
                    // An end is on the step (at most a step out) where that is at
                    // most a quarter of the range out; else near the data.
                    for (v, d) in [(a, lo), (b, hi)] {
                        let k = v / step;
                        let on = (k - k.round()).abs() < 1e-6 && (v - d).abs() < step + 1e-12;
                        let near = (v - d).abs() <= 0.25 * (hi - lo) + 1e-12;
                        assert!(
                            on || near,
                            "end {v} neither on step {step} nor near {d}: {case}"
                        );
                    }
                }
                let at = Rows { lo: a, hi: b, rows };
                for (r, l) in &ax.labels {
                    let v = number(l);
                    match i64::from(*r) {
                        0 => assert!(same(v, b), "top {l}: {case}"),
                        r if r == at.last() => assert!(same(v, a), "bottom {l}: {case}"),
                        r => assert_eq!(at.row(v), r, "tick {l}: {case}"),
                    }
                }
            }
        }
    }
}

#[test]
fn the_ends_are_round_values_not_the_data_rounded() {
    // 0.0831 at the bottom was labelled `0.1`, 0.4837 at the top `0.5`: the axis
    // now runs from 0.0 to 0.5, and its labels say so.
    let ax = y_axis(0.0831, 0.4837, 17, false, Unit::Plain);
    assert_eq!(ax.range, Some((0.0, 0.5)));
    assert_eq!(texts(&ax), ["0.5", "0.4", "0.3", "0.2", "0.1", "0.0"]);
    // -0.73 was `-0.7`; the ends are on the ticks' step (0.2), -0.11 not `-0.1`.
    let ax = y_axis(-0.73, -0.11, 21, false, Unit::Plain);
    assert_eq!(ax.range, Some((-0.8, 0.0)));
    assert_eq!(texts(&ax), ["0.0", "-0.2", "-0.4", "-0.6", "-0.8"]);
    // A short chart whose step (50) would stand no tick between 0 and 59 and
    // widen it to 0..100: its ends stay on their last decimal.
    let ax = y_axis(0.0, 59.0, 8, false, Unit::Plain);
    assert_eq!(texts(&ax), ["59", "0"]);
    // The low end was `0.00073` under ticks 0.001 apart.
    let ax = y_axis(0.000_73, 0.004_2, 17, false, Unit::Plain);
    assert_eq!(
        texts(&ax),
        ["0.005", "0.004", "0.003", "0.002", "0.001", "0.000"]
    );
    // A log axis within a decade: its low end cannot be 0, so a round 1, 2 or 5
    // × 10ᵏ (was `0.00073`), ticked at them as over decades.
    let ax = y_axis(
        0.000_73_f64.log10(),
        0.004_2_f64.log10(),
        17,
        true,
        Unit::Plain,
    );
    let l = texts(&ax);
    assert_eq!(l, ["0.005", "0.002", "0.001", "5e-4"]);
    // Over decades, the ends are on 1, 2 or 5 × 10ᵏ too (were `0.00073`, `42`).
    let ax = y_axis(0.000_73_f64.log10(), 42_f64.log10(), 30, true, Unit::Plain);
    let l = texts(&ax);
    assert_eq!((l[0], l[l.len() - 1]), ("50", "5e-4"), "{l:?}");
    // Without ticks, the ends keep three significant digits and are exact.
    let ax = y_axis(63.04, 73.41, 6, false, Unit::Plain);
    assert_eq!(texts(&ax), ["73.5", "63.0"]);
    assert_eq!(ax.range, Some((63.0, 73.5)));
}

fn flat(v: f64) -> [(f64, f64); 2] {
    [(0.0, v), (1.0, v)]
}

fn range_of(points: &[(f64, f64)], log: bool, unit: Unit) -> Option<(f64, f64)> {
    let line = Line {
        points,
        style: Style::default(),
        breaks: &[],
        mark: None,
    };
    y_range(&[line], &[], log, unit)
}

#[test]
fn a_percent_axis_ends_at_100_unless_the_values_pass_it() {
    // A flat 100 % (every core busy) was padded to 110 %.
    assert_eq!(
        range_of(&flat(100.0), false, Unit::Percent),
        Some((90.0, 100.0))
    );
    let ax = y_axis(90.0, 100.0, 13, false, Unit::Percent);
    assert_eq!(texts(&ax).first(), Some(&"100%"));
    let (_, hi) = range_of(&flat(100.0), true, Unit::Percent).expect("a range");
    assert!(same(hi, 2.0), "{hi}");
    // Nor below 0 %, nor past the values where they pass 100 %.
    assert_eq!(range_of(&flat(0.0), false, Unit::Percent), Some((0.0, 1.0)));
    assert_eq!(
        range_of(&flat(300.0), false, Unit::Percent),
        Some((270.0, 300.0))
    );
    // Other units keep their padding both ways.
    assert_eq!(
        range_of(&flat(100.0), false, Unit::Plain),
        Some((90.0, 110.0))
    );
    // A range within 0..100 % keeps its ends within it once rounded out.
    for rows in [5u16, 8, 13, 21, 40] {
        for (lo, hi) in [(0.3, 99.7), (0.04, 99.96), (12.5, 99.95)] {
            let (a, b) = y_axis(lo, hi, rows, false, Unit::Percent)
                .range
                .expect("a range");
            assert!(a >= 0.0 && b <= 100.0, "{lo}..{hi} on {rows}: {a}..{b}");
        }
    }
}

#[test]
fn labels_give_up_decimals_before_they_are_cut_and_one_label_says_a_flat_value() {
    // Memory available moving by a few hundred KiB around 22.94 GiB: six digits
    // of GiB write `22.9418GiB`, wider than a 27-column chart's 9.
    let gib = 1024.0 * 1024.0 * 1024.0;
    let (lo, hi) = (22.9410 * gib, 22.9418 * gib);
    let free = texts(&y_axis(lo, hi, 12, false, Unit::Bytes)).len();
    assert!(free > 1);
    let ax = y_axis_within(lo, hi, 12, false, Unit::Bytes, 9);
    let labels = texts(&ax);
    assert!(labels.iter().all(|l| l.chars().count() <= 9), "{labels:?}");
    assert!(labels.windows(2).all(|w| w[0] != w[1]), "{labels:?}");
    // No room at all for a difference: one label, the value, fitting.
    let ax = y_axis_within(lo, hi, 12, false, Unit::Bytes, 6);
    let labels = texts(&ax);
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert!(labels[0].chars().count() <= 6, "{labels:?}");
    // With room, the axis is as before.
    assert_eq!(
        y_axis_within(lo, hi, 12, false, Unit::Bytes, 40),
        y_axis(lo, hi, 12, false, Unit::Bytes)
    );
}

#[test]
fn a_step_axis_is_ticked_at_whole_steps_only() {
    // Five steps, room for eight ticks: 1, 2, 3 (not 0.5, 1, 1.5, …).
    assert_eq!(
        x_ticks(XTicks::Whole, 0.0, 4.0, 8),
        Some(vec![1.0, 2.0, 3.0])
    );
    // A long run: round whole numbers as before.
    assert_eq!(
        x_ticks(XTicks::Whole, 0.0, 1000.0, 4),
        Some(vec![200.0, 400.0, 600.0, 800.0])
    );
    assert_eq!(x_ticks(XTicks::Whole, 0.0, 1.0, 8), Some(Vec::new()));
}

#[test]
fn ends_rounded_into_the_next_scale_are_written_in_it() {
    // A flat line at 9.007e15 drawn over ±10 %: 8.1e15..9.9e15, its top rounded
    // out to 1.0e16 (not `10.0e15`).
    let v = 9_007_199_254_740_993.0_f64;
    let labels: Vec<String> = texts(&y_axis(0.9 * v, 1.1 * v, 12, false, Unit::Plain))
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(labels.iter().all(|l| !l.starts_with("10.")), "{labels:?}");
    assert!(labels.iter().any(|l| l.ends_with("e16")), "{labels:?}");
    // 999 k rounded up to a million: `1.0M`-style, never `1000k`.
    let labels: Vec<String> = texts(&y_axis(900_000.0, 999_000.0, 12, false, Unit::Plain))
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(labels.iter().all(|l| !l.starts_with("1000")), "{labels:?}");
}
