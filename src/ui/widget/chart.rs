//! The chart widget: a braille raster (2×4 dots per cell) of lines in data
//! coordinates, NaN/Inf as gaps, shaded bands beneath them, round y ticks and
//! compact axis labels.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::fit::{fit, put, width};
use super::guides::Guides;
use super::unit::Unit;
use crate::store::series::Point;
use crate::ui::theme::Theme;
use gaps::{draw_gap_marks, gap_columns};
use raster::Raster;

mod axis;
mod gaps;
pub(crate) use axis::XTicks;
mod plot;
mod raster;

/// One line of a chart: points in data coordinates (NaN/Inf = gap).
pub(crate) struct Line<'a> {
    pub points: &'a [Point],
    pub style: Style,
    /// x ranges (last x before, first x after) whose points were lost: no
    /// segment is drawn across one; the points either side stay.
    pub breaks: &'a [(f64, f64)],
    /// A letter drawn at the line's newest point in the plot: lines told apart
    /// without colour (the legend names the letters).
    pub mark: Option<char>,
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
    /// Rows the legend may take: 1 keeps the entries that fit the chart's width;
    /// more wraps an entry that does not fit onto the next row (while the plot
    /// keeps three rows). Entries left out are counted (`+N`), never cut.
    pub legend_rows: u16,
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
    // The corner takes what a short title leaves, and half the edge beside a
    // long one (a narrow chart's `acc` leaves the crosshair's `x=46 · 0.9641` whole).
    let title_w = usize::from(crate::ui::widget::fit::width(title));
    let corner_w = if corner.is_empty() || room < 12 {
        0
    } else {
        (corner.chars().count() + 2).min((room / 2).max(room.saturating_sub(title_w + 1)))
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
    if x.1 <= x.0 {
        // One x (a single point, or points at one step): drawn mid-plot, and
        // labelled under it.
        let aw = width(&a).min(plot.width);
        let start = plot.x + (plot.width - aw) / 2;
        put(buf, start, y, &a, aw, theme.label());
        return;
    }
    let used = put(buf, plot.x, y, &a, plot.width, theme.label());
    let bw = width(&b);
    // A label says where a column is; the same text twice (a span shorter than
    // the format's step: `0:01 0:01`) says nothing but that it cannot tell them.
    if x.1 > x.0 && used + bw < plot.width && a != b {
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
        let mut before = a;
        for v in ticks {
            let t = fmt_x(v);
            if t == before || t == b {
                continue;
            }
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
                before = t;
            }
        }
    }
}

/// Draw one chart into `area` (border included).
pub(crate) fn render_chart(buf: &mut Buffer, area: Rect, spec: &ChartSpec<'_>, theme: Theme) {
    let yr = y_range(&spec.lines, &spec.bands, spec.log_y, spec.y_unit);
    render_chart_over(buf, area, spec, yr, theme);
}

/// [`render_chart`] over the y range `yr` of its curves (as [`y_range`] finds
/// it; None: no finite value), decided by the caller.
pub(crate) fn render_chart_over(
    buf: &mut Buffer,
    area: Rect,
    spec: &ChartSpec<'_>,
    yr: Option<(f64, f64)>,
    theme: Theme,
) {
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
    let legend_rows = legend_height(spec, inner);
    let xlabel_rows = u16::from(inner.height >= 3);
    let plot_h = inner.height - legend_rows - xlabel_rows;
    let yaxis = yr.map_or_else(axis::YAxis::default, |(lo, hi)| {
        let room = usize::from(inner.width / 3);
        axis::y_axis_within(lo, hi, plot_h, spec.log_y, spec.y_unit, room)
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
        draw_y_axis(buf, (inner, lw, plot_h), xlabel_rows == 0, &yaxis, theme);
    }
    // X labels, and the marks of the gaps on their row.
    if xlabel_rows == 1 {
        draw_x_row(buf, spec, (inner, lw, axis == 1), plot, theme);
    }
    // Legend.
    if legend_rows > 0 {
        let rows = Rect::new(
            inner.x,
            inner.y + plot_h + xlabel_rows,
            inner.width,
            legend_rows,
        );
        draw_legend(buf, spec, rows, theme);
    }
    // The lines.
    let Some(y) = yr else {
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
    let (raster, to, styles) = plot::rasterize(spec, plot, y);
    raster.draw(buf, plot, &styles);
    draw_guides(buf, plot, &raster, &yaxis.ticks, spec.guides, theme);
    draw_marks(buf, spec, plot, &to);
    let (x0, x1) = spec.x;
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

/// The y axis line left of the plot (`plot_h` rows, its foot a corner when no
/// x labels row follows), and the y labels in the `lw` columns before it.
fn draw_y_axis(
    buf: &mut Buffer,
    (inner, lw, plot_h): (Rect, u16, u16),
    corner: bool,
    yaxis: &axis::YAxis,
    theme: Theme,
) {
    for r in 0..plot_h {
        let ch = if r == plot_h - 1 && corner {
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

/// The x labels under `plot` (the axis' corner before them, when it has an
/// axis), and the marks of the gaps on their row.
fn draw_x_row(
    buf: &mut Buffer,
    spec: &ChartSpec<'_>,
    (inner, lw, axis): (Rect, u16, bool),
    plot: Rect,
    theme: Theme,
) {
    let y = plot.bottom();
    if axis {
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

/// The `n`th series' letter: `A`, `B`, … (after `Z`, `A` again).
pub(crate) fn mark_of(n: usize) -> char {
    char::from(b'A' + (n % 26) as u8)
}

/// Each marked line's letter at its newest point inside the plot, bold in the
/// line's style; lines ending in one cell have their letters stacked in the rows
/// nearest it, so none hides another.
fn draw_marks(buf: &mut Buffer, spec: &ChartSpec<'_>, plot: Rect, to: &plot::Map) {
    let (w, h) = (f64::from(plot.width) * 2.0, f64::from(plot.height) * 4.0);
    let mut used: Vec<(u16, u16)> = Vec::new();
    for line in &spec.lines {
        let Some(mark) = line.mark else {
            continue;
        };
        let newest = (line.points.iter().rev())
            .filter_map(|&p| to.dot(p))
            .find(|&(x, y)| (0.0..w).contains(&x) && (0.0..h).contains(&y));
        let Some((x, y)) = newest else {
            continue;
        };
        let (col, row) = ((x / 2.0) as u16, (y / 4.0) as u16);
        let free = (0..plot.height)
            .flat_map(|d| [row.checked_sub(d), row.checked_add(d)])
            .flatten()
            .find(|&r| r < plot.height && !used.contains(&(col, r)));
        if let Some(r) = free {
            used.push((col, r));
            if let Some(cell) = buf.cell_mut((plot.x + col, plot.y + r)) {
                cell.set_char(mark)
                    .set_style(line.style.add_modifier(Modifier::BOLD));
            }
        }
    }
}

/// Where the legend's entries go in `area`, and what says how many were left out.
struct LegendPlan {
    /// (x, row) of each entry drawn, in order: the first ones.
    places: Vec<(u16, u16)>,
    /// `+N` (x, row, N): the entries that did not fit, counted where the last
    /// row ends, so no run goes unlabelled without a word.
    more: Option<(u16, u16, usize)>,
}

/// Where each legend entry goes in `area`: (x, row), an entry that does not fit
/// what is left of its row starting the next one while there is one. An entry
/// is drawn whole or not at all (one alone on its row wider than the chart is
/// cut at its edge); those past the last row are counted in a `+N` at its end,
/// for which entries before it make room.
fn legend_places(spec: &ChartSpec<'_>, area: Rect) -> LegendPlan {
    use unicode_width::UnicodeWidthStr;
    let swatch = u16::from(!spec.lines.iter().any(|l| l.mark.is_some()));
    let width =
        |label: &str| swatch.saturating_add(u16::try_from(label.width()).unwrap_or(u16::MAX));
    let (mut x, mut row, mut places) = (area.x, 0, Vec::new());
    for (label, _) in &spec.legend {
        let w = width(label);
        if x > area.x && x.saturating_add(w) > area.right() && row + 1 < area.height {
            (x, row) = (area.x, row + 1);
        }
        if x >= area.right() || (x > area.x && x.saturating_add(w) > area.right()) {
            break;
        }
        places.push((x, row));
        x = x.saturating_add(w).saturating_add(1);
    }
    let mut left = spec.legend.len() - places.len();
    if left == 0 {
        return LegendPlan { places, more: None };
    }
    // Room for `+N` after the last entry kept, on the last row.
    loop {
        let text = u16::try_from(format!("+{left}").len()).unwrap_or(u16::MAX);
        let (at, row) = match places.last() {
            Some(&(at, row)) => {
                let end = at.saturating_add(width(&spec.legend[places.len() - 1].0));
                (end.saturating_add(1), row)
            }
            None => (area.x, 0),
        };
        if places.is_empty() || at.saturating_add(text) <= area.right() {
            return LegendPlan {
                places,
                more: Some((at, row, left)),
            };
        }
        places.pop();
        left += 1;
    }
}

/// Rows the legend takes in `inner`: none in a chart too low for it; else the rows
/// its entries need, at most `spec.legend_rows`, leaving the plot three rows.
fn legend_height(spec: &ChartSpec<'_>, inner: Rect) -> u16 {
    if (spec.legend.is_empty() && spec.note.is_none()) || inner.height < 5 {
        return 0;
    }
    let most = spec.legend_rows.min(inner.height - 4).max(1);
    if most == 1 {
        return 1;
    }
    let area = Rect::new(inner.x, 0, inner.width, most);
    let plan = legend_places(spec, area);
    let last = plan.places.last().map(|&(_, row)| row);
    last.max(plan.more.map(|(_, row, _)| row))
        .map_or(1, |row| row + 1)
}

/// The legend's entries in `area` (its rows below the x labels), then the note on
/// the gaps. Each after a swatch of its colour, except where the lines are marked
/// with letters (drawn without colour): then its label starts with its letter.
fn draw_legend(buf: &mut Buffer, spec: &ChartSpec<'_>, area: Rect, theme: Theme) {
    let swatch = !spec.lines.iter().any(|l| l.mark.is_some());
    let (mut x, mut y) = (area.x, area.y);
    let plan = legend_places(spec, area);
    for ((label, style), &(at, row)) in spec.legend.iter().zip(&plan.places) {
        (x, y) = (at, area.y + row);
        if swatch {
            x += put(buf, x, y, "■", area.right() - x, *style);
        }
        let w = put(
            buf,
            x,
            y,
            label,
            area.right().saturating_sub(x),
            theme.label(),
        );
        x += w + 1;
    }
    if let Some((at, row, n)) = plan.more {
        y = area.y + row;
        x =
            at + put(
                buf,
                at,
                y,
                &format!("+{n}"),
                area.right().saturating_sub(at),
                theme.dim(),
            ) + 1;
    }
    if let Some(note) = &spec.note {
        if x < area.right() {
            put(
                buf,
                x,
                y,
                &format!("╳ {note}"),
                area.right() - x,
                theme.warn(),
            );
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

#[cfg(test)]
mod tests;
