//! The plot of a chart: its bands and lines rasterised into braille dots.

use ratatui::layout::Rect;
use ratatui::style::Style;

use super::gaps::crosses;
use super::raster::Raster;
use super::{log_y, Band, ChartSpec};
use crate::store::series::Point;

/// The raster of the chart's bands and lines in `plot`, whose rows span `y`
/// (log10 of the values on a log axis); the map from data to dots; the colours
/// the raster's indices stand for (the lines' styles, then the bands').
pub(super) fn rasterize(
    spec: &ChartSpec<'_>,
    plot: Rect,
    (y0, y1): (f64, f64),
) -> (Raster, Map, Vec<Style>) {
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
    (raster, to, styles)
}

/// Data to dot coordinates, unrounded: x from the left, y from the top.
pub(super) struct Map {
    x: (f64, f64),
    y1: f64,
    sx: f64,
    sy: f64,
    /// The dot column of every x when the x range is one value.
    mid: f64,
    log: bool,
}

impl Map {
    pub(super) fn px(&self, x: f64) -> f64 {
        if self.x.1 > self.x.0 {
            (x - self.x.0) * self.sx
        } else {
            self.mid
        }
    }

    fn py(&self, y: f64) -> f64 {
        (self.y1 - y) * self.sy
    }

    /// A data point in dot coordinates (x from the left, y from the top), on a
    /// log axis by its log; None where it is not finite.
    pub(super) fn dot(&self, (x, y): Point) -> Option<(f64, f64)> {
        let y = if self.log { log_y(y) } else { y };
        (x.is_finite() && y.is_finite()).then(|| (self.px(x), self.py(y)))
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
