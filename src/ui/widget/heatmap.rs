//! The heatmap mode of a percentage chart of several series (every core's CPU, every
//! GPU's utilisation), as W&B's heatmap draws it: one band per series over the
//! chart's time window, one time bucket per column, coloured by value 0–100 % on a
//! perceptual ramp (viridis); a label column names the series and a scale line reads
//! the colours. Missing data is an empty cell.
//!
//! A column's value comes from the downsampled points the line chart draws (at most
//! two per column), so the work per frame is bounded by the area, never by the run.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

use super::chart::{frame, x_labels};
use super::fit::{fit, put, width};
use crate::store::series::Point;
use crate::ui::theme::Theme;

/// Everything needed to draw one heatmap.
pub(crate) struct HeatSpec<'a> {
    pub title: &'a str,
    pub focused: bool,
    pub x: (f64, f64),
    pub fmt_x: &'a dyn Fn(f64) -> String,
    /// One label per series (sanitized), in band order.
    pub labels: &'a [String],
    /// Series `i` downsampled across `cols` columns of the window, into `out`.
    pub points: &'a dyn Fn(usize, usize, &mut Vec<Point>),
}

/// Viridis at nine even steps (matplotlib's `viridis`, 0 → 1): dark purple for 0 %,
/// yellow for 100 %, lightness rising all the way, readable by colour-blind eyes.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (72, 40, 120),
    (62, 73, 137),
    (49, 104, 142),
    (38, 130, 142),
    (31, 158, 137),
    (53, 183, 121),
    (110, 206, 88),
    (253, 231, 37),
];

/// Without colour (NO_COLOR) the value is the shade of the block, one per quarter.
const SHADES: [&str; 4] = ["░", "▒", "▓", "█"];

/// The colour of `v` % (clamped to 0–100; NaN as 0) on the ramp, interpolated
/// between stops.
pub(crate) fn ramp(v: f64) -> Color {
    let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 100.0) };
    let f = v / 100.0 * 8.0;
    let i = (f.floor() as usize).min(7);
    let t = f - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |p: u8, q: u8| {
        let m = f64::from(p) + (f64::from(q) - f64::from(p)) * t;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let m = m.round().clamp(0.0, 255.0) as u8;
        m
    };
    Color::Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The symbol and style of a cell of value `v` %.
fn cell(v: f64, theme: Theme) -> (&'static str, Style) {
    if theme.color {
        let c = ramp(v);
        ("█", Style::new().fg(c).bg(c))
    } else {
        let q = ((v.clamp(0.0, 100.0) / 25.0).floor() as usize).min(3);
        (SHADES[q], Style::new())
    }
}

/// Values of `points` (x-sorted, NaN = gap) in `out.len()` time buckets over `x`:
/// each bucket the highest reading in it (a spike is not averaged away, as the line
/// chart's envelope shows it), clamped to 0–100; a bucket with no reading holds the
/// one before it (samples sparser than columns), except after a gap or past the last
/// reading; `None` is an empty cell. Points before `x.0` only seed the first buckets,
/// points after `x.1` only let the last reading run to the end.
pub(crate) fn buckets(points: &[Point], x: (f64, f64), out: &mut [Option<f64>]) {
    out.fill(None);
    let cols = out.len();
    if cols == 0 {
        return;
    }
    let scale = if x.1 > x.0 {
        cols as f64 / (x.1 - x.0)
    } else {
        0.0
    };
    // The value carried into empty buckets, and the next bucket it may fill.
    let mut hold: Option<f64> = None;
    let mut next = 0;
    for &(px, py) in points {
        let v = py.is_finite().then(|| py.clamp(0.0, 100.0));
        if !px.is_finite() {
            continue;
        }
        if px < x.0 {
            hold = v;
            continue;
        }
        let c = if px > x.1 {
            cols
        } else if scale > 0.0 {
            let c = ((px - x.0) * scale).floor() as usize;
            c.min(cols - 1)
        } else {
            cols - 1
        };
        if let Some(h) = hold {
            for b in &mut out[next.min(c)..c] {
                b.get_or_insert(h);
            }
        }
        if c >= cols {
            return;
        }
        match v {
            Some(v) => {
                out[c] = Some(out[c].map_or(v, |o| o.max(v)));
                hold = Some(v);
            }
            None => hold = None,
        }
        next = c + 1;
    }
}

/// Which series get a band in `rows` rows: (bands shown, rows each, series left
/// out). With more series than rows, each band is one row and the last row says
/// how many are not shown.
pub(crate) fn bands(n: usize, rows: usize) -> (usize, usize, usize) {
    if n == 0 || rows == 0 {
        return (0, 0, n);
    }
    if n <= rows {
        return (n, rows / n, 0);
    }
    let shown = rows - 1;
    (shown, 1, n - shown)
}

/// Rows for bands in an inner height: less the scale line (from 4 rows) and the
/// time labels (from 3).
fn band_rows_in(inner: u16) -> u16 {
    inner - u16::from(inner >= 4) - u16::from(inner >= 3)
}

/// Rows for bands in a heatmap drawn into `area` (border included): a caller
/// that scrolls the series knows how many are seen at once.
#[must_use]
pub(crate) fn band_rows(area: Rect) -> usize {
    if area.width < 4 || area.height < 3 {
        return 0;
    }
    usize::from(band_rows_in(area.height - 2))
}

/// Draw one heatmap into `area` (border included).
pub(crate) fn render_heatmap(buf: &mut Buffer, area: Rect, spec: &HeatSpec<'_>, theme: Theme) {
    if area.width < 3 || area.height < 2 {
        return;
    }
    let inner = frame(buf, area, spec.title, None, spec.focused, theme);
    if inner.width < 2 || inner.height < 1 {
        return;
    }
    let scale_rows = u16::from(inner.height >= 4);
    let xlabel_rows = u16::from(inner.height >= 3);
    let rows = band_rows_in(inner.height);
    let label_w = spec.labels.iter().map(|l| width(l)).max().unwrap_or(0);
    let lw = if label_w > 0 && inner.width >= label_w + 1 + 8 {
        label_w.min(inner.width / 3) + 1
    } else {
        0
    };
    let plot = Rect::new(inner.x + lw, inner.y, inner.width - lw, rows);
    let (shown, h, more) = bands(spec.labels.len(), usize::from(rows));
    let cols = usize::from(plot.width);
    let mut pts = Vec::with_capacity(cols * 2 + 4);
    let mut vals = vec![None; cols];
    for (i, label) in spec.labels.iter().enumerate().take(shown) {
        let top = plot.y + u16::try_from(i * h).unwrap_or(u16::MAX);
        let h16 = u16::try_from(h).unwrap_or(1);
        if lw > 0 {
            let l = fit(label, usize::from(lw - 1));
            put(buf, inner.x, top + (h16 - 1) / 2, &l, lw - 1, theme.label());
        }
        (spec.points)(i, cols, &mut pts);
        buckets(&pts, spec.x, &mut vals);
        for (cx, v) in (plot.x..).zip(&vals) {
            let Some(v) = *v else { continue };
            let (sym, style) = cell(v, theme);
            for y in top..top + h16 {
                if let Some(c) = buf.cell_mut((cx, y)) {
                    c.set_symbol(sym);
                    c.set_style(style);
                }
            }
        }
    }
    if more > 0 && rows > 0 {
        let y = plot.y + rows - 1;
        put(
            buf,
            inner.x,
            y,
            &format!("+{more} more"),
            inner.width,
            theme.dim(),
        );
    }
    if xlabel_rows == 1 {
        x_labels(buf, plot, inner.y + rows, spec.x, spec.fmt_x, theme);
    }
    if scale_rows == 1 {
        render_scale(
            buf,
            Rect::new(plot.x, inner.bottom() - 1, plot.width, 1),
            theme,
        );
    }
}

/// The scale line: `0% ░▒▓█ 100%`, the ramp's colours (or shades) in between.
fn render_scale(buf: &mut Buffer, area: Rect, theme: Theme) {
    let x = area.x + put(buf, area.x, area.y, "0% ", area.width, theme.label());
    let room = area.right().saturating_sub(x);
    if room < 6 {
        return;
    }
    let steps = (room - 5).min(20);
    for k in 0..steps {
        let v = if steps > 1 {
            f64::from(k) * 100.0 / f64::from(steps - 1)
        } else {
            100.0
        };
        let (sym, style) = cell(v, theme);
        if let Some(c) = buf.cell_mut((x + k, area.y)) {
            c.set_symbol(sym);
            c.set_style(style);
        }
    }
    put(buf, x + steps, area.y, " 100%", 5, theme.label());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::palette::Palette;

    fn cells(points: &[Point], x: (f64, f64), n: usize) -> Vec<Option<f64>> {
        let mut out = vec![Some(-1.0); n];
        buckets(points, x, &mut out);
        out
    }

    #[test]
    fn each_column_is_one_time_bucket_with_its_highest_reading() {
        // 4 columns over 0..8 s: 2 s each; downsampled views give a column's lo and hi.
        let pts = [
            (0.0, 10.0),
            (1.0, 30.0),
            (2.5, 50.0),
            (3.0, 40.0),
            (5.0, 70.0),
            (7.0, 90.0),
            (8.0, 100.0),
        ];
        assert_eq!(
            cells(&pts, (0.0, 8.0), 4),
            [Some(30.0), Some(50.0), Some(70.0), Some(100.0)]
        );
    }

    #[test]
    fn sparse_samples_hold_across_columns_but_not_across_gaps_or_past_the_end() {
        // A sample every 4 s over 8 columns of 1 s: each fills the columns up to the next.
        let pts = [(0.0, 20.0), (4.0, 60.0)];
        assert_eq!(
            cells(&pts, (0.0, 8.0), 8),
            [
                Some(20.0),
                Some(20.0),
                Some(20.0),
                Some(20.0),
                Some(60.0),
                None,
                None,
                None
            ]
        );
        // A NaN is a gap: nothing is carried over it.
        let pts = [(0.0, 20.0), (2.0, f64::NAN), (6.0, 80.0)];
        assert_eq!(
            cells(&pts, (0.0, 8.0), 8),
            [
                Some(20.0),
                Some(20.0),
                None,
                None,
                None,
                None,
                Some(80.0),
                None
            ]
        );
        // A reading before the window seeds it; one after it lets the last run on.
        let pts = [(-3.0, 40.0), (5.0, 50.0), (12.0, 50.0)];
        assert_eq!(
            cells(&pts, (0.0, 8.0), 4),
            [Some(40.0), Some(40.0), Some(50.0), Some(50.0)]
        );
        // Only a NaN, or nothing: empty.
        assert_eq!(cells(&[(1.0, f64::NAN)], (0.0, 8.0), 2), [None, None]);
        assert_eq!(cells(&[], (0.0, 8.0), 2), [None, None]);
    }

    #[test]
    fn values_outside_0_to_100_are_clamped_and_odd_input_is_harmless() {
        let pts = [(0.0, -5.0), (1.0, 250.0), (2.0, f64::INFINITY)];
        assert_eq!(cells(&pts, (0.0, 3.0), 3), [Some(0.0), Some(100.0), None]);
        // The colour of a clamped value is the ramp's end.
        assert_eq!(ramp(-5.0), ramp(0.0));
        assert_eq!(ramp(250.0), Color::Rgb(253, 231, 37));
        assert_eq!(ramp(0.0), Color::Rgb(68, 1, 84));
        assert_eq!(ramp(f64::NAN), ramp(0.0));
        // One sample (an empty window) lands in the last column; no columns: nothing.
        assert_eq!(cells(&[(5.0, 7.0)], (5.0, 5.0), 3), [None, None, Some(7.0)]);
        assert!(cells(&[(5.0, 7.0)], (0.0, 9.0), 0).is_empty());
    }

    #[test]
    fn the_ramp_gets_lighter_all_the_way() {
        let luma = |c: Color| match c {
            Color::Rgb(r, g, b) => {
                0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b)
            }
            _ => f64::NAN,
        };
        let mut last = -1.0;
        for v in 0..=100 {
            let l = luma(ramp(f64::from(v)));
            assert!(l > last, "{v}%: {l} after {last}");
            last = l;
        }
    }

    #[test]
    fn more_series_than_rows_get_one_row_each_and_a_count_of_the_rest() {
        // Rows shared out: 2 series in 9 rows get 4 each.
        assert_eq!(bands(2, 9), (2, 4, 0));
        assert_eq!(bands(8, 8), (8, 1, 0));
        // 16 cores in 10 rows: 9 bands of one row, and "+7 more" in the last.
        assert_eq!(bands(16, 10), (9, 1, 7));
        assert_eq!(bands(16, 1), (0, 1, 16));
        assert_eq!(bands(3, 0), (0, 0, 3));
        assert_eq!(bands(0, 5), (0, 0, 0));
    }

    fn draw(n: usize, w: u16, h: u16, theme: Theme) -> Buffer {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        let labels: Vec<String> = (0..n).map(|i| format!("cpu {i}")).collect();
        let fmt_x = |v: f64| format!("{v}");
        // Series i is flat at i × 10 %; series 1 has no data at all.
        let points = |i: usize, _cols: usize, out: &mut Vec<Point>| {
            out.clear();
            if i != 1 {
                let v = i as f64 * 10.0;
                out.extend([(0.0, v), (10.0, v)]);
            }
        };
        let spec = HeatSpec {
            title: "CPU · heatmap",
            focused: false,
            x: (0.0, 10.0),
            fmt_x: &fmt_x,
            labels: &labels,
            points: &points,
        };
        render_heatmap(&mut buf, area, &spec, theme);
        buf
    }

    fn row(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
    }

    #[test]
    fn bands_labels_scale_and_more() {
        // 16 series, 8 rows inside the border less the x labels and the scale: 6 rows.
        let buf = draw(16, 40, 10, Theme::new(false, Palette::Default));
        let text: Vec<String> = (0..10).map(|y| row(&buf, y)).collect();
        assert!(text[0].contains("CPU · heatmap"), "{text:#?}");
        // Labels take the width of the longest ("cpu 15") and a space.
        assert!(text[1].starts_with("│cpu 0  ░░░"), "{text:#?}");
        // series 1 has no data: its band is empty
        assert_eq!(
            text[2].trim_end_matches('│').trim_end(),
            "│cpu 1",
            "{text:#?}"
        );
        assert!(text[5].starts_with("│cpu 4  ▒▒"), "{text:#?}");
        assert!(text[6].contains("+11 more"), "{text:#?}");
        assert!(
            text[8].contains("0% ░") && text[8].contains("█ 100%"),
            "{text:#?}"
        );
        // In colour, a cell's colour is its value on the ramp.
        let buf = draw(16, 40, 10, Theme::new(true, Palette::Default));
        let c = &buf[(20, 5)];
        assert_eq!(c.symbol(), "█");
        assert_eq!(c.fg, ramp(40.0));
        assert_eq!(c.bg, ramp(40.0));
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        for (w, h) in [(0, 0), (1, 1), (3, 2), (4, 3), (10, 3), (12, 4), (80, 2)] {
            for n in [0, 1, 2, 64] {
                let _ = draw(n, w, h, Theme::new(true, Palette::Default));
            }
        }
    }
}
