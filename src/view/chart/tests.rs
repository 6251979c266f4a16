//! Unit tests of the chart widget.

use super::*;
use crate::app::system::Unit;
use crate::view::format;

fn screen(points: &[Point]) -> String {
    let area = Rect::new(0, 0, 30, 8);
    let mut buf = Buffer::empty(area);
    let fmt_y = |v: f64, d: i32| format::unit_digits(v, Unit::Percent, d);
    let spec = ChartSpec {
        title: "disk",
        corner: None,
        lines: vec![Line {
            points,
            style: Style::default(),
        }],
        bands: Vec::new(),
        x: (0.0, 1.0),
        log_y: false,
        focused: false,
        fmt_x: &format::compact,
        fmt_y: &fmt_y,
        legend: Vec::new(),
    };
    render_chart(&mut buf, area, &spec, Theme { color: false });
    buf.content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect()
}

#[test]
fn round_ticks_inside_the_range() {
    assert_eq!(nice_ticks(0.0, 49.0, 4), [10.0, 20.0, 30.0, 40.0]);
    assert_eq!(nice_ticks(0.0, 100.0, 1), [50.0]);
    // a round step that fits once would be 50: outside (0, 49), so none
    assert!(nice_ticks(0.0, 49.0, 1).is_empty());
    assert_eq!(nice_ticks(0.0, 1.0, 3), [0.5]);
    assert_eq!(nice_ticks(0.1, 0.7, 5), [0.2, 0.3, 0.4, 0.5, 0.6]);
    assert_eq!(nice_ticks(-1.0, 1.0, 3), [-0.5, 0.0, 0.5]);
    assert!(nice_ticks(5.0, 5.0, 3).is_empty());
    assert!(nice_ticks(0.0, 10.0, 0).is_empty());
    assert!(nice_ticks(0.0, 1e300 * 10.0, 3).len() <= 3);
    // far from zero the step is below float resolution: ends, no endless loop
    assert!(nice_ticks(1e17, 1e17 + 64.0, 4).len() <= 4);
}

#[test]
fn a_flat_non_negative_line_keeps_a_zero_floor() {
    let line = |pts: &'static [Point]| Line {
        points: pts,
        style: Style::default(),
    };
    assert_eq!(
        y_range(&[line(&[(0.0, 0.0), (1.0, 0.0)])], &[], false),
        Some((0.0, 1.0))
    );
    assert_eq!(
        y_range(&[line(&[(0.0, 5.0), (1.0, 5.0)])], &[], false),
        Some((4.5, 5.5))
    );
    assert_eq!(
        y_range(&[line(&[(0.0, -2.0), (1.0, -2.0)])], &[], false),
        Some((-2.2, -1.8))
    );
}

#[test]
fn narrow_range_gets_enough_digits_to_tell_its_ends_apart() {
    let s = screen(&[(0.0, 13.312), (1.0, 13.341)]);
    assert!(s.contains("13.34%") && s.contains("13.31%"), "{s}");
    // a wide range keeps the short labels
    let s = screen(&[(0.0, 1.0), (1.0, 90.0)]);
    assert!(s.contains("90%") && s.contains("1%"), "{s}");
    // ends that differ only past 5 digits keep the short label
    let s = screen(&[
        (0.0, 9_007_199_254_740_993.0),
        (1.0, 9_007_199_254_741_011.0),
    ]);
    assert!(s.contains("9e15%") && !s.contains("9.007"), "{s}");
}
