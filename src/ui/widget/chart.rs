//! The chart widget: a braille raster (2×4 dots per cell) of lines in data
//! coordinates, NaN/Inf as gaps, shaded bands beneath them, round y ticks and
//! compact axis labels.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::fit::{fit, put, width};
use super::guides::Guides;
use super::unit::Unit;
use crate::store::series::Point;
use crate::ui::theme::Theme;
use gaps::{crosses, draw_gap_marks, gap_columns};
use raster::Raster;

mod axis;
mod gaps;
pub(crate) use axis::XTicks;
mod raster;

/// One line of a chart: points in data coordinates (NaN/Inf = gap).
pub(crate) struct Line<'a> {
    pub points: &'a [Point],
    pub style: Style,
    /// x ranges (last x before, first x after) whose points were lost: no
    /// segment is drawn across one; the points either side stay.
    pub breaks: &'a [(f64, f64)],
}

/// A shaded area between two curves (a group's min–max envelope), drawn beneath
/// the lines. `lo[i]` and `hi[i]` share an x (`lo`'s is used); a point with a
/// non-finite value in either is a gap.
pub(crate) struct Band<'a> {
    pub lo: &'a [Point],
    pub hi: &'a [Point],
    pub style: Style,
}

/// Everything needed to draw one chart.
pub(crate) struct ChartSpec<'a> {
    pub title: &'a str,
    /// Shown at the top right of the border.
    pub corner: Option<String>,
    pub lines: Vec<Line<'a>>,
    /// Drawn first, beneath the lines; the y range covers them.
    pub bands: Vec<Band<'a>>,
    /// The crosshair's x (data coordinates): a dim vertical line where no data is.
    pub cursor: Option<f64>,
    pub x: (f64, f64),
    pub log_y: bool,
    pub focused: bool,
    pub fmt_x: &'a dyn Fn(f64) -> String,
    /// Where the x ticks go (round numbers, durations, decades).
    pub x_ticks: XTicks,
    /// The unit of the y labels: one scale and one number of decimals for every
    /// label of the axis (`0%` … `100%`, `2GiB` … `16GiB`).
    pub y_unit: Unit,
    /// Horizontal guides at the y ticks, beneath the data.
    pub guides: Guides,
    /// Legend entries (label, style), drawn below the x labels when non-empty.
    pub legend: Vec<(String, Style)>,
    /// Skipped x ranges (lost to damage, or between a resumed run's segments):
    /// marked on the x axis row, `┄┄╳┄┄` over the columns they skip.
    pub gaps: Vec<(f64, f64)>,
    /// What the gaps are (`steps 101–199 lost`), on the legend row after the
    /// entries.
    pub note: Option<String>,
}

/// The y range of the curves: their lowest and highest values (log10 of them on a
/// log axis), a flat line padded by a tenth of its value. The padding of a
/// percentage stays within 0–100 % where the values do.
pub(crate) fn y_range(
    lines: &[Line<'_>],
    bands: &[Band<'_>],
    log: bool,
    unit: Unit,
) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let curves = lines
        .iter()
        .map(|l| l.points)
        .chain(bands.iter().flat_map(|b| [b.lo, b.hi]));
    for points in curves {
        for &(_, y) in points {
            let y = if log { log_y(y) } else { y };
            if y.is_finite() {
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
    }
    if lo > hi {
        return None;
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1e-300) {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        // A flat line of non-negative values (0 B/s, 0 errors) keeps a floor of 0
        // rather than showing a negative rate or count on the axis.
        let floor = if lo >= 0.0 && !log {
            0.0
        } else {
            f64::NEG_INFINITY
        };
        let ceiling = if unit == Unit::Percent {
            let full: f64 = if log { 2.0 } else { 100.0 };
            full.max(hi)
        } else {
            f64::INFINITY
        };
        return Some(((lo - pad).max(floor), (hi + pad).min(ceiling)));
    }
    Some((lo, hi))
}

fn log_y(y: f64) -> f64 {
    if y > 0.0 {
        y.log10()
    } else {
        f64::NAN
    }
}

/// At most `most` round values (1, 2 or 5 × 10ⁿ apart) strictly inside (lo, hi).
fn nice_ticks(lo: f64, hi: f64, most: usize) -> Vec<f64> {
    let span = hi - lo;
    if most == 0 || !span.is_finite() || span <= 0.0 {
        return Vec::new();
    }
    let raw = span / (most + 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag);
    // Ticks are k·step; dividing by 1/step (an integer when step < 1) keeps 0.3 from
    // printing as 0.30000000000000004.
    let at = |k: f64| {
        if step < 1.0 {
            k / (1.0 / step).round()
        } else {
            k * step
        }
    };
    axis::multiples_at(lo, hi, step, most, at)
}

/// The border and the title (and corner text) on its top edge; the area inside.
pub(super) fn frame(
    buf: &mut Buffer,
    area: Rect,
    title: &str,
    corner: Option<&str>,
    focused: bool,
    theme: Theme,
) -> Rect {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(theme.border(focused));
    let inner = block.inner(area);
    block.render(area, buf);
    // Title and corner on the top border.
    let room = usize::from(area.width.saturating_sub(2));
    let corner = corner.unwrap_or("");
    let corner_w = if corner.is_empty() || room < 12 {
        0
    } else {
        (corner.chars().count() + 2).min(room / 2)
    };
    let title = fit(
        title,
        room.saturating_sub(corner_w + usize::from(corner_w > 0)),
    );
    put(
        buf,
        area.x + 1,
        area.y,
        &title,
        area.width - 2,
        theme.title(focused),
    );
    if corner_w > 0 {
        let c = fit(corner, corner_w - 2);
        let cw = c.chars().count() as u16;
        let x = area.right() - 2 - cw;
        put(buf, x, area.y, &c, cw, theme.text());
    }
    inner
}

/// The x labels of `plot` on row `y`: both ends, and round values between them
/// where they fit.
pub(super) fn x_labels(
    buf: &mut Buffer,
    plot: Rect,
    y: u16,
    x: (f64, f64),
    fmt_x: &dyn Fn(f64) -> String,
    theme: Theme,
) {
    x_labels_around(buf, plot, y, x, (fmt_x, XTicks::Round), &[], theme);
}

/// [`x_labels`], the round values in between kept off the columns `avoid`
/// (inclusive ranges: where gap marks go).
fn x_labels_around(
    buf: &mut Buffer,
    plot: Rect,
    y: u16,
    x: (f64, f64),
    (fmt_x, kind): (&dyn Fn(f64) -> String, XTicks),
    avoid: &[(u16, u16)],
    theme: Theme,
) {
    let a = fmt_x(x.0);
    let b = fmt_x(x.1);
    let used = put(buf, plot.x, y, &a, plot.width, theme.label());
    let bw = width(&b);
    if x.1 > x.0 && used + bw < plot.width {
        put(buf, plot.right() - bw, y, &b, bw, theme.label());
        // Round-number ticks in between, where they fit with a gap on each side.
        let gap = 3;
        let mut free_from = plot.x + used + gap;
        let free_to = (plot.right() - bw).saturating_sub(gap);
        // About one label per 12 cells, at most 9 in between: a scale, not a ruler.
        let label_w = (width(&a).max(bw) + gap).max(12);
        let most = usize::from(plot.width / label_w).saturating_sub(1).min(9);
        let ticks =
            axis::x_ticks(kind, x.0, x.1, most).unwrap_or_else(|| nice_ticks(x.0, x.1, most));
        for v in ticks {
            let t = fmt_x(v);
            let tw = width(&t);
            let f = (v - x.0) / (x.1 - x.0);
            let c = plot.x + (f * f64::from(plot.width.saturating_sub(1))).round() as u16;
            let start = c.saturating_sub(tw / 2);
            let clear = !avoid
                .iter()
                .any(|&(a, b)| start <= b + 1 && start + tw >= a);
            if start >= free_from && start + tw <= free_to && clear {
                put(buf, start, y, &t, tw, theme.label());
                free_from = start + tw + gap;
            }
        }
    }
}

/// Draw one chart into `area` (border included).
pub(crate) fn render_chart(buf: &mut Buffer, area: Rect, spec: &ChartSpec<'_>, theme: Theme) {
    if area.width < 3 || area.height < 2 {
        return;
    }
    let inner = frame(
        buf,
        area,
        spec.title,
        spec.corner.as_deref(),
        spec.focused,
        theme,
    );
    if inner.width < 2 || inner.height < 1 {
        return;
    }
    let legend_rows =
        u16::from((!spec.legend.is_empty() || spec.note.is_some()) && inner.height >= 5);
    let xlabel_rows = u16::from(inner.height >= 3);
    let plot_h = inner.height - legend_rows - xlabel_rows;
    let yr = y_range(&spec.lines, &spec.bands, spec.log_y, spec.y_unit);
    let yaxis = yr.map_or_else(axis::YAxis::default, |(lo, hi)| {
        axis::y_axis(lo, hi, plot_h, spec.log_y, spec.y_unit)
    });
    // The plot spans what the axis labels.
    let yr = yaxis.range.or(yr);
    let lw = (yaxis
        .labels
        .iter()
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(0) as u16)
        .min(inner.width / 3);
    let axis = u16::from(lw > 0 && inner.width > lw + 4);
    let lw = if axis == 1 { lw } else { 0 };
    let plot = Rect::new(
        inner.x + lw + axis,
        inner.y,
        inner.width - lw - axis,
        plot_h,
    );
    // Axis and y labels.
    if axis == 1 {
        for r in 0..plot_h {
            let ch = if r == plot_h - 1 && xlabel_rows == 0 {
                "└"
            } else {
                "│"
            };
            put(buf, inner.x + lw, inner.y + r, ch, 1, theme.dim());
        }
        for (r, label) in &yaxis.labels {
            if *r >= plot_h {
                continue;
            }
            let t = fit(label, usize::from(lw));
            put(
                buf,
                inner.x + lw - width(&t),
                inner.y + r,
                &t,
                lw,
                theme.label(),
            );
        }
    }
    // X labels, and the marks of the gaps on their row.
    if xlabel_rows == 1 {
        let y = inner.y + plot_h;
        if axis == 1 {
            put(buf, inner.x + lw, y, "└", 1, theme.dim());
        }
        let marks = gap_columns(&spec.gaps, spec.x, plot.width);
        let abs: Vec<(u16, u16)> = marks
            .iter()
            .map(|&(a, b, _)| (plot.x + a, plot.x + b))
            .collect();
        let fmt = (spec.fmt_x, spec.x_ticks);
        x_labels_around(buf, plot, y, spec.x, fmt, &abs, theme);
        draw_gap_marks(buf, plot.x, y, &marks, theme);
    }
    // Legend.
    if legend_rows == 1 {
        let y = inner.y + plot_h + xlabel_rows;
        let mut x = inner.x;
        for (label, style) in &spec.legend {
            if x >= inner.right() {
                break;
            }
            let w = put(buf, x, y, "■", inner.right() - x, *style);
            x += w;
            let w = put(
                buf,
                x,
                y,
                label,
                inner.right().saturating_sub(x),
                theme.label(),
            );
            x += w + 1;
        }
        if let Some(note) = &spec.note {
            if x < inner.right() {
                put(
                    buf,
                    x,
                    y,
                    &format!("╳ {note}"),
                    inner.right() - x,
                    theme.warn(),
                );
            }
        }
    }
    // The lines.
    let Some((y0, y1)) = yr else {
        if plot.height > 0 && plot.width > 6 {
            put(
                buf,
                plot.x + 1,
                plot.y + plot.height / 2,
                "no data",
                plot.width - 1,
                theme.dim(),
            );
        }
        return;
    };
    if plot.width == 0 || plot.height == 0 {
        return;
    }
    let pw = usize::from(plot.width) * 2;
    let ph = usize::from(plot.height) * 4;
    let mut raster = Raster::new(usize::from(plot.width), usize::from(plot.height));
    let (x0, x1) = spec.x;
    let (fw, fh) = ((pw - 1) as f64, (ph - 1) as f64);
    let sx = if x1 > x0 { fw / (x1 - x0) } else { 0.0 };
    let sy = if y1 > y0 { fh / (y1 - y0) } else { 0.0 };
    let to = Map {
        x: (x0, x1),
        y1,
        sx,
        sy,
        mid: fw / 2.0,
        log: spec.log_y,
    };
    let to_px =
        |x: f64, y: f64| -> (i64, i64) { (to.px(x).round() as i64, to.py(y).round() as i64) };
    // Colour indices: the lines' styles, then the bands'.
    let mut styles: Vec<Style> = spec.lines.iter().map(|l| l.style).collect();
    for band in &spec.bands {
        let c = u16::try_from(styles.len()).unwrap_or(u16::MAX);
        styles.push(band.style);
        shade_band(&mut raster, band, &to, c);
    }
    for (li, line) in spec.lines.iter().enumerate() {
        let c = u16::try_from(li).unwrap_or(u16::MAX);
        let mut prev: Option<Point> = None;
        for &(x, y) in line.points {
            let y = if spec.log_y { log_y(y) } else { y };
            if !y.is_finite() || !x.is_finite() {
                prev = None;
                continue;
            }
            // Across a break: the point starts afresh, as after a gap.
            if prev.is_some_and(|p| crosses(line.breaks, p.0, x)) {
                prev = None;
            }
            match prev {
                Some(p) => {
                    if let Some((a, b)) = clip_x(p, (x, y), x0, x1) {
                        raster.line(to_px(a.0, a.1), to_px(b.0, b.1), c);
                    }
                }
                None => {
                    if x >= x0 && x <= x1 {
                        let (px, py) = to_px(x, y);
                        raster.dot(px, py, c);
                    }
                }
            }
            prev = Some((x, y));
        }
    }
    raster.draw(buf, plot, &styles);
    draw_guides(buf, plot, &raster, &yaxis.ticks, spec.guides, theme);
    if let Some(cx) = spec.cursor.filter(|&c| c >= x0.min(x1) && c <= x0.max(x1)) {
        let col = (to.px(cx) / 2.0).round().max(0.0) as u16;
        if col < plot.width {
            for y in plot.y..plot.bottom() {
                let cell = &mut buf[(plot.x + col, y)];
                if raster_empty(&raster, col, y - plot.y) {
                    cell.set_symbol("│").set_style(theme.dim());
                }
            }
        }
    }
}

/// Whether the raster left the cell at (col, row) of the plot empty.
fn raster_empty(raster: &Raster, col: u16, row: u16) -> bool {
    !raster.filled(usize::from(col), usize::from(row))
}

/// Guides across `plot` at the tick rows, in the cells the data left empty.
fn draw_guides(
    buf: &mut Buffer,
    plot: Rect,
    raster: &Raster,
    rows: &[u16],
    guides: Guides,
    theme: Theme,
) {
    let ch = match guides {
        Guides::Off => return,
        Guides::Dots => "·",
        Guides::Lines => "─",
    };
    for &r in rows {
        if r >= plot.height {
            continue;
        }
        for x in plot.x..plot.right() {
            // Dots every other cell: a dotted row, lighter than a line.
            if guides == Guides::Dots && (x - plot.x) % 2 == 1
                || raster.filled(usize::from(x - plot.x), usize::from(r))
            {
                continue;
            }
            if let Some(cell) = buf.cell_mut((x, plot.y + r)) {
                cell.set_symbol(ch);
                cell.set_style(theme.dim());
            }
        }
    }
}

/// Data to dot coordinates, unrounded: x from the left, y from the top.
struct Map {
    x: (f64, f64),
    y1: f64,
    sx: f64,
    sy: f64,
    /// The dot column of every x when the x range is one value.
    mid: f64,
    log: bool,
}

impl Map {
    fn px(&self, x: f64) -> f64 {
        if self.x.1 > self.x.0 {
            (x - self.x.0) * self.sx
        } else {
            self.mid
        }
    }

    fn py(&self, y: f64) -> f64 {
        (self.y1 - y) * self.sy
    }

    /// Band point `i` as (x, low, high) in plot values, or `None` for a gap.
    fn band_point(&self, band: &Band<'_>, i: usize) -> Option<(f64, f64, f64)> {
        let (x, a) = *band.lo.get(i)?;
        let (_, b) = *band.hi.get(i)?;
        let (a, b) = if self.log {
            (log_y(a), log_y(b))
        } else {
            (a, b)
        };
        (x.is_finite() && a.is_finite() && b.is_finite()).then(|| (x, a.min(b), a.max(b)))
    }
}

/// Shade the dots between a band's curves: per dot column between consecutive
/// points, from the interpolated high value down to the low one; a point between
/// two gaps shades its own column.
fn shade_band(raster: &mut Raster, band: &Band<'_>, to: &Map, c: u16) {
    let n = band.lo.len().min(band.hi.len());
    let mut prev = None;
    for i in 0..n {
        let cur = to.band_point(band, i);
        match (prev, cur) {
            (Some(a), Some(b)) => shade_segment(raster, a, b, to, c),
            (None, Some(b)) if to.band_point(band, i + 1).is_none() => {
                shade_segment(raster, b, b, to, c);
            }
            _ => {}
        }
        prev = cur;
    }
}

/// Shade between two band points (x, low, high), clipped to the plot's x range.
fn shade_segment(raster: &mut Raster, a: (f64, f64, f64), b: (f64, f64, f64), to: &Map, c: u16) {
    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    let (x0, x1) = to.x;
    if b.0 < x0 || a.0 > x1 {
        return;
    }
    let at = |x: f64| {
        let t = if b.0 > a.0 {
            (x - a.0) / (b.0 - a.0)
        } else {
            0.0
        };
        (x, a.1 + (b.1 - a.1) * t, a.2 + (b.2 - a.2) * t)
    };
    let a = if a.0 < x0 { at(x0) } else { a };
    let b = if b.0 > x1 { at(x1) } else { b };
    let (pa, pb) = (to.px(a.0), to.px(b.0));
    let last = i64::try_from(raster.dot_columns()).unwrap_or(i64::MAX) - 1;
    let mut column = |col: i64, lo: f64, hi: f64| {
        let (top, bottom) = (to.py(hi).round() as i64, to.py(lo).round() as i64);
        raster.shade_column(col, top, bottom, c);
    };
    let (ca, cb) = ((pa.round() as i64).max(0), (pb.round() as i64).min(last));
    if ca >= cb {
        // Both ends in one column: it holds both.
        column(ca.min(last), a.1, a.2);
        column(ca.min(last), b.1, b.2);
        return;
    }
    // Clipped to the plot, so at most one pass over its columns.
    for col in ca..=cb {
        let t = ((col as f64 - pa) / (pb - pa)).clamp(0.0, 1.0);
        column(col, a.1 + (b.1 - a.1) * t, a.2 + (b.2 - a.2) * t);
    }
}

/// Clip a segment to x in [x0, x1].
fn clip_x(a: Point, b: Point, x0: f64, x1: f64) -> Option<(Point, Point)> {
    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    if b.0 < x0 || a.0 > x1 {
        return None;
    }
    let at = |x: f64| {
        if b.0 > a.0 {
            (x, a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
        } else {
            (x, a.1)
        }
    };
    let a2 = if a.0 < x0 { at(x0) } else { a };
    let b2 = if b.0 > x1 { at(x1) } else { b };
    Some((a2, b2))
}

#[cfg(test)]
mod tests;
