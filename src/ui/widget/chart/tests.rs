//! Unit tests of the chart widget.

use super::*;
use crate::ui::palette::Palette;
use crate::ui::widget::format;
use crate::ui::widget::unit::Unit;
use ratatui::style::{Color, Modifier};

fn screen(points: &[Point]) -> String {
    let area = Rect::new(0, 0, 30, 8);
    let mut buf = Buffer::empty(area);
    let spec = ChartSpec {
        title: "disk",
        corner: None,
        lines: vec![Line {
            points,
            style: Style::default(),
            breaks: &[],
            mark: None,
        }],
        bands: Vec::new(),
        cursor: None,
        x: (0.0, 1.0),
        log_y: false,
        focused: false,
        fmt_x: &format::compact,
        x_ticks: XTicks::Round,
        y_unit: Unit::Percent,
        guides: Guides::Off,
        legend: Vec::new(),
        legend_rows: 1,
        gaps: Vec::new(),
        note: None,
    };
    render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
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
        breaks: &[],
        mark: None,
    };
    assert_eq!(
        y_range(&[line(&[(0.0, 0.0), (1.0, 0.0)])], &[], false, Unit::Plain),
        Some((0.0, 1.0))
    );
    assert_eq!(
        y_range(&[line(&[(0.0, 5.0), (1.0, 5.0)])], &[], false, Unit::Plain),
        Some((4.5, 5.5))
    );
    assert_eq!(
        y_range(
            &[line(&[(0.0, -2.0), (1.0, -2.0)])],
            &[],
            false,
            Unit::Plain
        ),
        Some((-2.2, -1.8))
    );
}

#[test]
fn narrow_range_gets_enough_digits_to_tell_its_ends_apart() {
    // (the ends are exact: 13.34% would stand for 13.341%)
    let s = screen(&[(0.0, 13.312), (1.0, 13.341)]);
    assert!(s.contains("13.341%") && s.contains("13.312%"), "{s}");
    // a wide range keeps the short labels
    let s = screen(&[(0.0, 1.0), (1.0, 90.0)]);
    assert!(s.contains("90%") && s.contains("1%"), "{s}");
    // ends that differ only past what a label shows: one label, not 9e15 / 9e15
    let s = screen(&[
        (0.0, 9_007_199_254_740_993.0),
        (1.0, 9_007_199_254_741_011.0),
    ]);
    assert_eq!(s.matches("e15%").count(), 1, "{s}");
    assert!(s.contains("9.007e15%"), "{s}");
}

/// The y axis of `lo..hi` on `rows` rows: (row, label), top down.
fn labels(lo: f64, hi: f64, rows: u16, log: bool, unit: Unit) -> Vec<(u16, String)> {
    let mut l = axis::y_axis(lo, hi, rows, log, unit).labels;
    l.sort_by_key(|x| x.0);
    l
}

fn texts(l: &[(u16, String)]) -> Vec<&str> {
    l.iter().map(|x| x.1.as_str()).collect()
}

/// Decimals of a label's number.
fn decimals(label: &str) -> usize {
    let num: String = label
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
        .collect();
    num.split_once('.').map_or(0, |(_, d)| d.len())
}

#[test]
fn the_tick_step_is_1_2_or_5_and_keeps_3_rows_between_labels() {
    assert_eq!(axis::nice_step(0.3), 0.5);
    assert_eq!(axis::nice_step(1.0), 1.0);
    assert_eq!(axis::nice_step(1.2), 2.0);
    assert_eq!(axis::nice_step(3.0), 5.0);
    assert_eq!(axis::nice_step(7.0), 10.0);
    assert_eq!(axis::nice_step(0.012), 0.02);
    // 0..100 on 41 rows: 3 rows are 7.5, so a step of 10
    let l = labels(0.0, 100.0, 41, false, Unit::Plain);
    assert_eq!(
        texts(&l),
        ["100", "90", "80", "70", "60", "50", "40", "30", "20", "10", "0"]
    );
    for w in l.windows(2) {
        assert!(w[1].0 - w[0].0 >= 3, "{l:?}");
    }
    // fewer rows, a wider step
    assert_eq!(
        texts(&labels(0.0, 100.0, 17, false, Unit::Plain)),
        ["100", "80", "60", "40", "20", "0"]
    );
    // too few rows for a tick: only the ends
    assert_eq!(
        texts(&labels(0.0, 100.0, 6, false, Unit::Plain)),
        ["100", "0"]
    );
    // the rows of round values are where the raster draws them
    let l = labels(0.0, 100.0, 41, false, Unit::Plain);
    assert_eq!(l[5], (20, "50".to_owned()));
}

#[test]
fn every_label_of_an_axis_has_the_same_decimals() {
    for (lo, hi, rows) in [
        (0.0239, 0.999, 30),
        (0.0239, 0.999, 6),
        (13.32, 13.321, 6),
        (13.312, 13.341, 20),
        (63.0, 73.4, 6),
        (0.104, 2.01, 36),
        (-3.7, 12.25, 25),
    ] {
        let l = labels(lo, hi, rows, false, Unit::Percent);
        let d: Vec<usize> = l.iter().map(|x| decimals(&x.1)).collect();
        assert!(d.windows(2).all(|w| w[0] == w[1]), "{lo}..{hi}: {l:?}");
    }
    // the pair once reported wrong: 13.321% / 13.32% reads 13.321% / 13.320%
    assert_eq!(
        texts(&labels(13.32, 13.321, 6, false, Unit::Percent)),
        ["13.321%", "13.320%"]
    );
    // trailing zeros every label has go
    assert_eq!(
        texts(&labels(0.0, 59.0, 6, false, Unit::Plain)),
        ["59", "0"]
    );
}

#[test]
fn no_two_labels_of_an_axis_read_the_same() {
    for rows in [2, 5, 8, 17, 36, 56] {
        for (lo, hi) in [
            (0.0, 1.0),
            (0.104, 2.01),
            (13.312, 13.341),
            (41.042_58, 41.042_59),
            (999.0, 1001.0),
            (1e-7, 3e-7),
            (-1e9, 1e9),
        ] {
            let l = labels(lo, hi, rows, false, Unit::Plain);
            let t = texts(&l);
            let mut u = t.clone();
            u.sort_unstable();
            u.dedup();
            assert_eq!(u.len(), t.len(), "{lo}..{hi} on {rows}: {l:?}");
            // one label per row
            let mut r: Vec<u16> = l.iter().map(|x| x.0).collect();
            r.dedup();
            assert_eq!(r.len(), l.len(), "{l:?}");
        }
    }
}

#[test]
fn a_nearly_flat_series_shows_one_label_not_duplicates() {
    let l = labels(41.042_58, 41.042_580_001, 36, false, Unit::Percent);
    assert_eq!(texts(&l), ["41.04%"]);
    assert_eq!(l[0].0, 0);
    // a flat line is padded by y_range (±10%), so it gets its round ticks
    let line = [Line {
        points: &[(0.0, 5.0), (1.0, 5.0)],
        style: Style::default(),
        breaks: &[],
        mark: None,
    }];
    let (lo, hi) = y_range(&line, &[], false, Unit::Plain).expect("a range");
    assert_eq!(
        texts(&labels(lo, hi, 17, false, Unit::Plain)),
        ["5.5", "5.0", "4.5"]
    );
}

#[test]
fn negative_ranges_tick_through_zero() {
    assert_eq!(
        texts(&labels(-10.0, 10.0, 21, false, Unit::Plain)),
        ["10", "5", "0", "-5", "-10"]
    );
    // -0.73..-0.11 runs from -0.8 to 0.0, ends on its ticks' step of 0.2
    assert_eq!(
        texts(&labels(-0.73, -0.11, 21, false, Unit::Plain)),
        ["0.0", "-0.2", "-0.4", "-0.6", "-0.8"]
    );
}

#[test]
fn a_1e15_scale_range_shares_its_exponent() {
    assert_eq!(
        texts(&labels(8.1e15, 9.9e15, 21, false, Unit::Plain)),
        ["1.00e16", "0.95e16", "0.90e16", "0.85e16", "0.80e16"]
    );
    // differences below the labels' reach: one label
    let l = labels(
        9_007_199_254_740_993.0,
        9_007_199_254_741_011.0,
        36,
        false,
        Unit::Plain,
    );
    assert_eq!(texts(&l), ["9.007e15"]);
}

#[test]
fn percent_and_byte_axes_tick_in_their_units() {
    assert_eq!(
        texts(&labels(0.0, 100.0, 17, false, Unit::Percent)),
        ["100%", "80%", "60%", "40%", "20%", "0%"]
    );
    assert_eq!(
        texts(&labels(12.5, 87.5, 13, false, Unit::Percent)),
        ["100%", "50%", "0%"]
    );
    // bytes step in binary units: 2 GiB, not 2.147 GB
    let gib = 1_073_741_824.0;
    assert_eq!(
        texts(&labels(0.0, 8.0 * gib, 13, false, Unit::Bytes)),
        ["8GiB", "6GiB", "4GiB", "2GiB", "0GiB"]
    );
    assert_eq!(
        texts(&labels(0.4 * gib, 2.3 * gib, 17, false, Unit::Bytes)),
        ["2.5GiB", "2.0GiB", "1.5GiB", "1.0GiB", "0.5GiB", "0.0GiB"]
    );
    // MiB values step in GiB once they pass 1024 MiB
    assert_eq!(
        texts(&labels(0.0, 4096.0, 17, false, Unit::MiB)),
        ["4GiB", "3GiB", "2GiB", "1GiB", "0GiB"]
    );
}

#[test]
fn a_log_axis_ticks_at_powers_of_ten_then_2_and_5() {
    // 1..10^4 on 13 rows: the decades only
    assert_eq!(
        texts(&labels(0.0, 4.0, 13, true, Unit::Plain)),
        ["10k", "1k", "100", "10", "1"]
    );
    // one decade on 33 rows: 2× and 5× fit
    assert_eq!(
        texts(&labels(0.0, 2.0, 33, true, Unit::Plain)),
        ["100", "50", "20", "10", "5", "2", "1"]
    );
    // bytes: round binary units (1KiB, 10KiB, 1MiB), not 977KiB
    assert_eq!(
        texts(&labels(3.0, 9.5, 30, true, Unit::Bytes)),
        ["5GiB", "1GiB", "100MiB", "10MiB", "1MiB", "100KiB", "10KiB", "500B"]
    );
    // 12 decades on 13 rows: every 5th
    assert_eq!(
        texts(&labels(-6.0, 6.0, 13, true, Unit::Plain)),
        ["1M", "1", "1e-6"]
    );
}

fn band<'a>(lo: &'a [Point], hi: &'a [Point], style: Style) -> Band<'a> {
    Band { lo, hi, style }
}

/// A 30×8 chart over x 0..1 with plain number labels.
fn draw(lines: Vec<Line<'_>>, bands: Vec<Band<'_>>, x: (f64, f64), log_y: bool) -> Buffer {
    let area = Rect::new(0, 0, 30, 8);
    let mut buf = Buffer::empty(area);
    let spec = ChartSpec {
        title: "band",
        corner: None,
        lines,
        bands,
        cursor: None,
        x,
        log_y,
        focused: false,
        fmt_x: &format::compact,
        x_ticks: XTicks::Round,
        y_unit: Unit::Plain,
        guides: Guides::Off,
        legend: Vec::new(),
        legend_rows: 1,
        gaps: Vec::new(),
        note: None,
    };
    render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
    buf
}

/// The plot's cells, rows top down: right of the y axis, inside the border, above
/// the x labels (5 rows).
fn plot(buf: &Buffer) -> Vec<Vec<(String, Color)>> {
    let axis = (1..29)
        .find(|&x| buf[(x, 1)].symbol() == "│")
        .expect("a y axis");
    (1..6)
        .map(|y| {
            (axis + 1..29)
                .map(|x| (buf[(x, y)].symbol().to_string(), buf[(x, y)].fg))
                .collect()
        })
        .collect()
}

fn column(cells: &[Vec<(String, Color)>], x: usize) -> Vec<&str> {
    cells.iter().map(|row| row[x].0.as_str()).collect()
}

#[test]
fn a_band_shades_the_cells_between_its_curves() {
    // lo rises 0 → 1, hi 2 → 3: y range 0..3 over 20 dot rows (dot = (3 - y)·19/3).
    let lo: &[Point] = &[(0.0, 0.0), (1.0, 1.0)];
    let hi: &[Point] = &[(0.0, 2.0), (1.0, 3.0)];
    let buf = draw(
        Vec::new(),
        vec![band(lo, hi, Style::default())],
        (0.0, 1.0),
        false,
    );
    let cells = plot(&buf);
    assert_eq!(cells[0].len(), 26);
    // left: dots 6..=19 (hi 2 → 6.3, lo 0 → 19); right: dots 0..=13 (hi 3, lo 1 → 12.7)
    assert_eq!(column(&cells, 0), [" ", "⣤", "⣿", "⣿", "⣿"]);
    assert_eq!(column(&cells, 25), ["⣿", "⣿", "⣿", "⠛", " "]);
    // every column is one unbroken run of shading, full in the middle rows
    for x in 0..26 {
        let col = column(&cells, x);
        let filled: Vec<usize> = (0..5).filter(|&r| col[r] != " ").collect();
        assert!(filled.len() >= 4, "column {x}: {col:?}");
        assert_eq!(filled.last().map(|l| l - filled[0] + 1), Some(filled.len()));
        assert_eq!(col[2], "⣿", "column {x}: {col:?}");
    }
}

#[test]
fn a_line_over_a_band_keeps_its_colour_and_its_shape() {
    let band_style = Style::new().fg(Color::Blue).add_modifier(Modifier::DIM);
    let line_style = Style::new().fg(Color::Red);
    let (lo, hi): (&[Point], &[Point]) = (&[(0.0, 0.0), (1.0, 0.0)], &[(0.0, 2.0), (1.0, 2.0)]);
    let line: &[Point] = &[(0.0, 1.0), (1.0, 1.0)];
    let buf = draw(
        vec![Line {
            points: line,
            style: line_style,
            breaks: &[],
            mark: None,
        }],
        vec![band(lo, hi, band_style)],
        (0.0, 1.0),
        false,
    );
    let cells = plot(&buf);
    // y 1 of 0..2 is dot row 9.5 → 10: row 2, third dot row (⠤), in the line's
    // colour; the band's dots in that cell give way to the line's.
    for x in 0..26 {
        for (r, row) in cells.iter().enumerate() {
            let want = if r == 2 {
                ("⠤", Color::Red)
            } else {
                ("⣿", Color::Blue)
            };
            assert_eq!((row[x].0.as_str(), row[x].1), want, "row {r}, column {x}");
        }
    }
}

#[test]
fn a_band_alone_sets_the_y_range_and_draws() {
    let (lo, hi): (&[Point], &[Point]) = (&[(0.0, 5.0), (1.0, 5.0)], &[(0.0, 10.0), (1.0, 10.0)]);
    let buf = draw(
        Vec::new(),
        vec![band(lo, hi, Style::default())],
        (0.0, 1.0),
        false,
    );
    let text: String = buf
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(text.contains("10") && !text.contains("no data"), "{text}");
    assert_eq!(buf[(2, 5)].symbol(), "5", "{text}");
    let cells = plot(&buf);
    assert!(cells.iter().flatten().all(|(s, _)| s == "⣿"), "{text}");
    // without the band there is nothing to draw
    let buf = draw(Vec::new(), Vec::new(), (0.0, 1.0), false);
    let text: String = buf
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(text.contains("no data"), "{text}");
}

#[test]
fn the_y_range_covers_the_bands() {
    let points: &[Point] = &[(0.0, 1.0), (1.0, 2.0)];
    let line = [Line {
        points,
        style: Style::default(),
        breaks: &[],
        mark: None,
    }];
    let (lo, hi): (&[Point], &[Point]) = (&[(0.0, 0.5), (1.0, 0.0)], &[(0.0, 4.0), (1.0, 5.0)]);
    let bands = [band(lo, hi, Style::default())];
    assert_eq!(y_range(&line, &[], false, Unit::Plain), Some((1.0, 2.0)));
    assert_eq!(y_range(&line, &bands, false, Unit::Plain), Some((0.0, 5.0)));
    // log: the band's 0 is skipped, its 0.5 and 5 count
    let (l, h) = y_range(&line, &bands, true, Unit::Plain).expect("a range");
    assert!((l - 0.5f64.log10()).abs() < 1e-12 && (h - 5f64.log10()).abs() < 1e-12);
}

#[test]
fn a_log_band_skips_non_positive_points() {
    // The first point's lo is 0: a gap on a log axis, so shading starts at x 0.5
    // and spans 10⁰..10² (every dot row). Labels "100" leave 24 cells: dot column
    // 47 / 2 = 23.5 → 24, cell 12.
    let lo: &[Point] = &[(0.0, 0.0), (0.5, 1.0), (1.0, 1.0)];
    let hi: &[Point] = &[(0.0, 100.0), (0.5, 100.0), (1.0, 100.0)];
    let buf = draw(
        Vec::new(),
        vec![band(lo, hi, Style::default())],
        (0.0, 1.0),
        true,
    );
    let text: String = buf
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(text.contains("100"), "{text}");
    let cells = plot(&buf);
    assert_eq!(cells[0].len(), 24);
    for x in 0..24 {
        let want = if x < 12 { " " } else { "⣿" };
        assert_eq!(column(&cells, x), [want; 5], "column {x}: {text}");
    }
}

#[test]
fn a_band_point_between_gaps_shades_its_own_dot_column() {
    let nan = f64::NAN;
    let lo: &[Point] = &[(0.0, 0.0), (0.5, nan), (1.0, 0.0)];
    let hi: &[Point] = &[(0.0, 1.0), (0.5, 1.0), (1.0, 1.0)];
    let buf = draw(
        Vec::new(),
        vec![band(lo, hi, Style::default())],
        (0.0, 1.0),
        false,
    );
    let cells = plot(&buf);
    // x 0 is the left dot column of cell 0, x 1 the right one of cell 25
    assert_eq!(column(&cells, 0), ["⡇"; 5]);
    assert_eq!(column(&cells, 25), ["⢸"; 5]);
    for x in 1..25 {
        assert_eq!(column(&cells, x), [" "; 5], "column {x}");
    }
}

#[test]
fn band_points_in_any_order_or_past_the_range_shade_the_same_dots() {
    let s = Style::default();
    let (lo, hi): (&[Point], &[Point]) = (&[(0.0, 0.0), (1.0, 1.0)], &[(0.0, 2.0), (1.0, 3.0)]);
    let want = plot(&draw(Vec::new(), vec![band(lo, hi, s)], (0.0, 1.0), false));
    // reversed
    let (rlo, rhi): (&[Point], &[Point]) = (&[(1.0, 1.0), (0.0, 0.0)], &[(1.0, 3.0), (0.0, 2.0)]);
    assert_eq!(
        plot(&draw(
            Vec::new(),
            vec![band(rlo, rhi, s)],
            (0.0, 1.0),
            false
        )),
        want
    );
    // lo and hi swapped
    assert_eq!(
        plot(&draw(Vec::new(), vec![band(hi, lo, s)], (0.0, 1.0), false)),
        want
    );
    // the same straight edges from x -1 to 2, clipped to 0..1; the y range counts
    // the points outside x too (as a line's does), so a line pins both to -1..4
    let (wlo, whi): (&[Point], &[Point]) =
        (&[(-1.0, -1.0), (2.0, 2.0)], &[(-1.0, 1.0), (2.0, 4.0)]);
    let pin: &[Point] = &[(0.0, -1.0), (0.0, 4.0)];
    let pinned = |bands| {
        plot(&draw(
            vec![Line {
                points: pin,
                style: s,
                breaks: &[],
                mark: None,
            }],
            bands,
            (0.0, 1.0),
            false,
        ))
    };
    assert_eq!(
        pinned(vec![band(wlo, whi, s)]),
        pinned(vec![band(lo, hi, s)])
    );
}

#[test]
fn bad_band_input_on_any_area_does_not_panic() {
    let nan = f64::NAN;
    let lo: &[Point] = &[(0.0, 1.0), (nan, 2.0), (0.3, f64::INFINITY), (2.0, -1e308)];
    let hi: &[Point] = &[(0.0, 3.0), (0.5, nan)];
    let big: &[Point] = &[(0.0, f64::MAX), (1.0, -f64::MAX)];
    for (w, h) in (0..14).flat_map(|w| (0..9).map(move |h| (w, h))) {
        for x in [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)] {
            for log in [false, true] {
                let area = Rect::new(0, 0, w, h);
                let mut buf = Buffer::empty(area);
                let spec = ChartSpec {
                    title: "t",
                    corner: None,
                    lines: Vec::new(),
                    bands: vec![
                        band(lo, hi, Style::default()),
                        band(hi, lo, Style::default()),
                        band(big, big, Style::default()),
                        band(&[], lo, Style::default()),
                    ],
                    cursor: None,
                    x,
                    log_y: log,
                    focused: false,
                    fmt_x: &format::compact,
                    x_ticks: XTicks::Round,
                    y_unit: Unit::Plain,
                    guides: Guides::Off,
                    legend: Vec::new(),
                    legend_rows: 1,
                    gaps: Vec::new(),
                    note: None,
                };
                render_chart(&mut buf, area, &spec, Theme::new(true, Palette::Default));
            }
        }
    }
    // a one-value x range shades the middle dot column: 51 / 2 = 25.5 → 26, cell 13
    let (lo, hi): (&[Point], &[Point]) = (&[(0.5, 0.0)], &[(0.5, 1.0)]);
    let cells = plot(&draw(
        Vec::new(),
        vec![band(lo, hi, Style::default())],
        (0.5, 0.5),
        false,
    ));
    let shaded: Vec<usize> = (0..26).filter(|&x| column(&cells, x)[2] != " ").collect();
    assert_eq!(shaded, [13]);
}

/// A 30×20 chart of `points` (0..100 %) with `guides`.
fn guided(points: &[Point], guides: Guides) -> Buffer {
    let area = Rect::new(0, 0, 30, 20);
    let mut buf = Buffer::empty(area);
    let spec = ChartSpec {
        title: "g",
        corner: None,
        lines: vec![Line {
            points,
            style: Style::new().fg(Color::Red),
            breaks: &[],
            mark: None,
        }],
        bands: Vec::new(),
        cursor: None,
        x: (0.0, 1.0),
        log_y: false,
        focused: false,
        fmt_x: &format::compact,
        x_ticks: XTicks::Round,
        y_unit: Unit::Percent,
        guides,
        legend: Vec::new(),
        legend_rows: 1,
        gaps: Vec::new(),
        note: None,
    };
    render_chart(&mut buf, area, &spec, Theme::new(true, Palette::Default));
    buf
}

#[test]
fn guides_run_along_the_tick_rows_beneath_the_data() {
    // a vertical line at x 0.5 crosses every row
    let pts: &[Point] = &[(0.5, 0.0), (0.5, 100.0)];
    let off = guided(pts, Guides::Off);
    let lines = guided(pts, Guides::Lines);
    let dots = guided(pts, Guides::Dots);
    let row = |buf: &Buffer, y: u16| -> String { (0..30).map(|x| buf[(x, y)].symbol()).collect() };
    // the tick rows: where a label sits between the top and bottom ones
    let ticks: Vec<u16> = (2..17).filter(|&y| row(&off, y).contains("%│")).collect();
    assert!(ticks.len() >= 2, "{ticks:?}");
    for y in 1..19 {
        let (o, l, d) = (row(&off, y), row(&lines, y), row(&dots, y));
        if ticks.contains(&y) {
            assert!(l.contains("────") && !o.contains('─'), "row {y}: {l}");
            assert!(d.contains("· · ·") && !o.contains('·'), "row {y}: {d}");
        } else {
            assert_eq!(l, o, "row {y}");
            assert_eq!(d, o, "row {y}");
        }
    }
    // the data keeps its cell and its style; the guide is dim
    let y = ticks[0];
    let data_x = (0..30)
        .find(|&x| ('⠁'..='⣿').contains(&off[(x, y)].symbol().chars().next().unwrap_or(' ')))
        .expect("the line crosses the tick row");
    assert_eq!(lines[(data_x, y)], off[(data_x, y)]);
    let guide_x = data_x + 3;
    assert_eq!(lines[(guide_x, y)].symbol(), "─");
    assert_eq!(lines[(guide_x, y)].fg, Color::DarkGray);
    assert_eq!(lines[(data_x, y)].fg, Color::Red);
}

#[test]
fn the_crosshair_is_a_dim_column_where_no_data_is() {
    let area = Rect::new(0, 0, 30, 8);
    let draw = |cursor: Option<f64>| {
        let mut buf = Buffer::empty(area);
        let pts: &[Point] = &[(0.0, 0.0), (10.0, 10.0)];
        let spec = ChartSpec {
            title: "t",
            corner: None,
            lines: vec![Line {
                points: pts,
                style: Style::default(),
                breaks: &[],
                mark: None,
            }],
            bands: Vec::new(),
            cursor,
            x: (0.0, 10.0),
            log_y: false,
            focused: false,
            fmt_x: &format::compact,
            x_ticks: XTicks::Round,
            y_unit: Unit::Plain,
            guides: Guides::Off,
            legend: Vec::new(),
            legend_rows: 1,
            gaps: Vec::new(),
            note: None,
        };
        render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
        buf
    };
    let plain = draw(None);
    let with = draw(Some(5.0));
    let bars: Vec<(u16, u16)> = (0..area.height)
        .flat_map(|y| (0..area.width).map(move |x| (x, y)))
        .filter(|&(x, y)| with[(x, y)].symbol() == "│" && plain[(x, y)].symbol() != "│")
        .collect();
    // One column, several rows, never over a cell of the line.
    assert!(bars.len() >= 3, "{bars:?}");
    assert!(bars.iter().all(|&(x, _)| x == bars[0].0), "{bars:?}");
    assert!(bars.iter().all(|&p| plain[p].symbol() == " "));
    // Outside the x range: none.
    let out = draw(Some(50.0));
    assert!((0..area.height)
        .flat_map(|y| (0..area.width).map(move |x| (x, y)))
        .all(|p| out[p].symbol() == plain[p].symbol()));
}

/// A flat line over x 0..10 with points at 0, 1, 9 and 10, drawn 40×8 with the
/// given breaks and gaps: the screen's rows.
fn broken(breaks: &[(f64, f64)], gaps: Vec<(f64, f64)>) -> Vec<String> {
    let area = Rect::new(0, 0, 40, 8);
    let mut buf = Buffer::empty(area);
    let pts = [(0.0, 1.0), (1.0, 2.0), (9.0, 2.0), (10.0, 1.0)];
    let spec = ChartSpec {
        title: "loss",
        corner: None,
        lines: vec![Line {
            points: &pts,
            style: Style::default(),
            breaks,
            mark: None,
        }],
        bands: Vec::new(),
        cursor: None,
        x: (0.0, 10.0),
        log_y: false,
        focused: false,
        fmt_x: &format::compact,
        x_ticks: XTicks::Round,
        y_unit: Unit::Plain,
        guides: Guides::Off,
        legend: Vec::new(),
        note: (!gaps.is_empty()).then(|| "steps 2–8 lost".to_owned()),
        legend_rows: 1,
        gaps,
    };
    render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
    (0..8)
        .map(|y| (0..40).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// Braille cells in columns `from..to` of the plot rows.
fn braille_between(rows: &[String], from: usize, to: usize) -> usize {
    rows.iter()
        .map(|r| {
            r.chars()
                .skip(from)
                .take(to - from)
                .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
                .count()
        })
        .sum()
}

#[test]
fn no_line_is_drawn_across_a_break_and_the_points_either_side_stay() {
    let whole = broken(&[], Vec::new());
    let cut = broken(&[(1.0, 9.0)], vec![(1.0, 9.0)]);
    // The middle of the plot (x 3..7): the line runs through it, the cut one not.
    assert!(braille_between(&whole[1..6], 16, 28) > 0, "{whole:#?}");
    assert_eq!(braille_between(&cut[1..6], 12, 32), 0, "{cut:#?}");
    // Both ends still drawn, the points beside the break included.
    assert!(braille_between(&cut[1..6], 0, 12) > 0, "{cut:#?}");
    assert!(braille_between(&cut[1..6], 32, 40) > 0, "{cut:#?}");
}

#[test]
fn a_gap_is_marked_on_the_x_axis_row_with_its_note() {
    let rows = broken(&[(1.0, 9.0)], vec![(1.0, 9.0)]);
    // Rows: title, plot, x labels, legend, bottom border.
    let labels = &rows[5];
    let mid = labels.chars().position(|c| c == '╳').expect(labels);
    let dashes = labels.chars().filter(|&c| c == '┄').count();
    assert!(dashes >= 10, "{labels}");
    // The mark sits between x 1 and x 9 (plot columns from about 6 to 37).
    assert!((14..30).contains(&mid), "{labels}");
    assert!(rows[6].contains("╳ steps 2–8 lost"), "{rows:#?}");
    // The end labels are kept.
    assert!(labels.contains('0') && labels.contains("10"), "{labels}");
    // No gap: no mark, no note row.
    let plain = broken(&[], Vec::new());
    assert!(!plain.concat().contains('╳'), "{plain:#?}");
}

#[test]
fn gap_columns_cover_the_skipped_columns_or_one_when_adjacent() {
    // 11 columns over 0..10: one column per unit.
    assert_eq!(gap_columns(&[(2.0, 6.0)], (0.0, 10.0), 11), [(3, 5, 4)]);
    assert_eq!(gap_columns(&[(2.0, 3.0)], (0.0, 10.0), 11), [(2, 2, 2)]);
    // Outside the range, or empty: none.
    assert!(gap_columns(&[(20.0, 30.0)], (0.0, 10.0), 11).is_empty());
    assert!(gap_columns(&[(2.0, 6.0)], (5.0, 5.0), 11).is_empty());
}

/// Without colour, marked lines carry their letters at their newest points (two
/// ending in one cell stacked, neither hidden) and the legend names the letters
/// with no swatch; unmarked, the legend keeps its swatches.
#[test]
fn marked_lines_are_told_apart_by_letters_without_colour() {
    let a: [Point; 3] = [(0.0, 0.0), (5.0, 1.0), (10.0, 2.0)];
    let b: [Point; 3] = [(0.0, 2.0), (5.0, 1.5), (10.0, 2.0)];
    let c: [Point; 2] = [(0.0, 1.0), (4.0, 1.0)];
    let draw = |marked: bool| {
        let area = Rect::new(0, 0, 40, 12);
        let mut buf = Buffer::empty(area);
        let line = |points: &'static [Point], n: usize| Line {
            points,
            style: Style::default(),
            breaks: &[],
            mark: marked.then(|| mark_of(n)),
        };
        let leak = |p: &[Point]| -> &'static [Point] { Box::leak(p.to_vec().into_boxed_slice()) };
        let spec = ChartSpec {
            title: "loss",
            corner: None,
            lines: vec![line(leak(&a), 0), line(leak(&b), 1), line(leak(&c), 2)],
            bands: Vec::new(),
            cursor: None,
            x: (0.0, 10.0),
            log_y: false,
            focused: false,
            fmt_x: &format::compact,
            x_ticks: XTicks::Round,
            y_unit: Unit::Plain,
            guides: Guides::Off,
            legend: ["A one", "B two", "C three"]
                .iter()
                .map(|l| ((*l).to_owned(), Style::default()))
                .collect(),
            legend_rows: 1,
            gaps: Vec::new(),
            note: None,
        };
        render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
    };
    let rows = draw(true);
    let text = rows.join("\n");
    // A and B end at x = 10, y = 2: one cell, so one of them moved a row.
    let right: Vec<char> = rows
        .iter()
        .filter_map(|r| r.chars().rev().nth(1))
        .filter(char::is_ascii_uppercase)
        .collect();
    assert!(right.contains(&'A') && right.contains(&'B'), "{text}");
    // C ends mid-chart, at x = 4.
    assert!(
        rows.iter().any(|r| r.contains('C') && !r.ends_with("C│")),
        "{text}"
    );
    assert!(text.contains("A one B two C three"), "{text}");
    assert!(!text.contains('■'), "{text}");
    let plain = draw(false).join("\n");
    assert!(plain.contains("■A one ■B two"), "{plain}");
    assert!(!plain.lines().take(9).any(|r| r.contains("A│")), "{plain}");
}

/// A chart in `area` of one line per entry of `legend`, `rows` legend rows
/// allowed.
fn legend_chart(legend: &[&str], rows: u16, area: Rect) -> Buffer {
    let mut buf = Buffer::empty(area);
    let pts: &[Point] = &[(0.0, 1.0), (1.0, 2.0)];
    let spec = ChartSpec {
        title: "gpu",
        corner: None,
        lines: (0..legend.len())
            .map(|_| Line {
                points: pts,
                style: Style::default(),
                breaks: &[],
                mark: None,
            })
            .collect(),
        bands: Vec::new(),
        cursor: None,
        x: (0.0, 1.0),
        log_y: false,
        focused: false,
        fmt_x: &format::compact,
        x_ticks: XTicks::Round,
        y_unit: Unit::Percent,
        guides: Guides::Off,
        legend: (legend.iter())
            .map(|l| ((*l).to_owned(), Style::default()))
            .collect(),
        legend_rows: rows,
        gaps: Vec::new(),
        note: None,
    };
    render_chart(&mut buf, area, &spec, Theme::new(false, Palette::Default));
    buf
}

/// A chart of three lines with `legend` at 24×`h`, its rows as text.
fn with_legend(legend: &[&str], rows: u16, h: u16) -> Vec<String> {
    let buf = legend_chart(legend, rows, Rect::new(0, 0, 24, h));
    (0..h)
        .map(|y| (0..24).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

#[test]
fn a_legend_allowed_rows_wraps_whole_entries_and_keeps_the_plot_three_rows() {
    let legend = ["node-0:gpu 0 82%", "gpu 1 75%", "node-1:gpu 0 9%"];
    // One row: the entries that fit whole, then how many are left out.
    let one = with_legend(&legend, 1, 10);
    assert_eq!(one[8], "│■node-0:gpu 0 82% +2  │");
    // Three allowed: an entry that does not fit starts the next row.
    let three = with_legend(&legend, 3, 10);
    assert_eq!(three[6], "│■node-0:gpu 0 82%     │", "{three:#?}");
    assert_eq!(three[7], "│■gpu 1 75%            │", "{three:#?}");
    assert_eq!(three[8], "│■node-1:gpu 0 9%      │", "{three:#?}");
    // A low chart: the plot keeps three rows, the last legend row counts what
    // it has no room for.
    let low = with_legend(&legend, 3, 8);
    assert_eq!(low[5], "│■node-0:gpu 0 82%     │", "{low:#?}");
    assert_eq!(low[6], "│■gpu 1 75% +1         │", "{low:#?}");
    // What fits on one row stays on one.
    let short = with_legend(&["a 1%", "b 2%"], 3, 10);
    assert_eq!(short[8], "│■a 1% ■b 2%           │", "{short:#?}");
}

/// The legend's rows of a 30×12 chart of `names`.
fn legend_row(names: &[&str], rows: u16) -> Vec<String> {
    let area = Rect::new(0, 0, 30, 12);
    let buf = legend_chart(names, rows, area);
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .filter(|l| l.contains('■') || l.contains('+'))
        .filter(|l| !l.contains('┌') && !l.contains('└'))
        .map(|l| {
            l.trim_start_matches('│')
                .trim_end_matches('│')
                .trim()
                .to_owned()
        })
        .collect()
}

#[test]
fn a_legend_that_does_not_fit_ends_at_a_whole_entry_and_counts_the_rest() {
    let names = ["multi-0", "multi-1", "multi-2", "multi-3", "multi-4"];
    // 28 columns: three entries (8 + 1 + 8 + 1 + 8) and no room for "+2" after them.
    assert_eq!(legend_row(&names, 1), ["■multi-0 ■multi-1 +3"]);
    // Two rows: the second ends in what is left out.
    assert_eq!(
        legend_row(&names, 2),
        ["■multi-0 ■multi-1 ■multi-2", "■multi-3 ■multi-4"]
    );
    let seven: Vec<String> = (0..7).map(|i| format!("multi-{i}")).collect();
    let seven: Vec<&str> = seven.iter().map(String::as_str).collect();
    assert_eq!(
        legend_row(&seven, 2),
        ["■multi-0 ■multi-1 ■multi-2", "■multi-3 ■multi-4 +2"]
    );
    // All fit: no count.
    assert_eq!(legend_row(&names[..2], 1), ["■multi-0 ■multi-1"]);
}

#[test]
fn a_log_axis_under_a_decade_reads_round_log_values() {
    let l = |lo: f64, hi: f64, rows: u16| labels(lo.log10(), hi.log10(), rows, true, Unit::Plain);
    // 0.197..1.78: 1, 2 and 5 × 10ᵏ, the ends rounded out to them.
    assert_eq!(texts(&l(0.197, 1.778, 20)), ["2", "1", "0.5", "0.2", "0.1"]);
    // 0.020..0.042: no 1, 2 or 5 inside, so the other single digits.
    assert_eq!(
        texts(&l(0.0201, 0.042, 16)),
        ["0.05", "0.04", "0.03", "0.02"]
    );
    // Few rows: fewer ticks, never crowded; the round ones kept first.
    assert_eq!(texts(&l(0.0201, 0.042, 8)), ["0.05", "0.03", "0.02"]);
    // No tick rows at all: the round ends alone.
    assert_eq!(texts(&l(0.0201, 0.042, 4)), ["0.05", "0.02"]);
    // Too short for round log values to leave the data half the axis: its
    // linear values, as before.
    let short = l(0.0420, 0.0425, 16);
    assert!(short.len() >= 3, "{short:?}");
    assert!(!texts(&short).contains(&"0.05"), "{short:?}");
    // No two ticks closer than MIN_GAP rows.
    for rows in 5..40 {
        let got = l(0.0201, 0.042, rows);
        for w in got.windows(2) {
            assert!(w[1].0 - w[0].0 >= 3, "{rows} rows: {got:?}");
        }
    }
}

/// Labels that read the same (a span shorter than the format's step: seconds of a
/// clock over 2 s) are drawn once: `0:01 0:01 0:03` said nothing the first did not.
#[test]
fn an_x_label_is_never_drawn_twice() {
    let secs = |v: f64| format!("0:{:02}", v.floor() as i64);
    let row = |x: (f64, f64)| {
        x_label_row(60, x, &secs)
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let labels = row((1.2, 3.4));
    let mut once = labels.clone();
    once.dedup();
    assert_eq!(labels, once, "{labels:?}");
    assert_eq!(labels.first().map(String::as_str), Some("0:01"));
    assert_eq!(labels.last().map(String::as_str), Some("0:03"));
    // Both ends alike: the one label.
    assert_eq!(row((1.2, 1.7)), ["0:01"]);
}

/// One x (a metric logged once): the point is drawn mid-plot, its label under it,
/// not at the left edge.
#[test]
fn a_chart_of_one_x_labels_it_under_the_point() {
    assert_eq!(
        x_label_row(21, (200.0, 200.0), &format::compact),
        "         200         "
    );
}

/// The x labels of a plot `width` columns wide over `x`, as their row reads.
fn x_label_row(width: u16, x: (f64, f64), fmt: &dyn Fn(f64) -> String) -> String {
    let area = Rect::new(0, 0, width, 1);
    let mut buf = Buffer::empty(area);
    x_labels(
        &mut buf,
        area,
        0,
        x,
        fmt,
        Theme::new(false, Palette::Default),
    );
    buf.content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect()
}
