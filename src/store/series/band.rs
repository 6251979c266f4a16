//! A series' min–max band: per chart column, the extremes of the points the
//! series holds there, and their mean (the chart's line when the band is drawn).

use super::{Point, Series};

#[cfg(test)]
mod reference;

/// More columns than a terminal has braille dot columns only costs memory.
const MAX_COLUMNS: usize = 2 * u16::MAX as usize;

/// A series over equal x-columns (see [`Series::column_band`]).
///
/// `lo`, `hi` and `mid` have the same length and the same x at each index, in
/// column order; a point with NaN y (in all three) is a gap marker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnBand {
    /// Each column's smallest y.
    pub lo: Vec<Point>,
    /// Each column's largest y.
    pub hi: Vec<Point>,
    /// Each column's mean y (clamped into [lo, hi] against rounding).
    pub mid: Vec<Point>,
    /// Finite points inside the range (of those the series holds).
    pub points: usize,
}

impl ColumnBand {
    /// Whether some column holds more than one point on average: there are more
    /// points in range than columns, so the line alone would be a zigzag.
    #[must_use]
    pub fn is_dense(&self, cols: usize) -> bool {
        self.points > cols
    }

    fn clear(&mut self) {
        self.lo.clear();
        self.hi.clear();
        self.mid.clear();
        self.points = 0;
    }

    fn push(&mut self, x: f64, lo: f64, hi: f64, mid: f64) {
        self.lo.push((x, lo));
        self.hi.push((x, hi));
        self.mid.push((x, mid));
    }

    fn gap(&mut self, x: f64) {
        if self.mid.last().is_some_and(|p| !p.1.is_nan()) {
            self.push(x, f64::NAN, f64::NAN, f64::NAN);
        }
    }
}

/// One column's points so far.
#[derive(Clone, Copy, Default)]
struct Column {
    n: usize,
    /// Sums of x and y: their means are divided out once, at the end (a running
    /// mean costs two divisions per point, most of a frame's band). A sum that
    /// overflows (values near ±f64::MAX) is recomputed as a running mean.
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
    /// x of the first NaN point here, if any.
    nan: Option<f64>,
}

/// Which of `n` (at least 1) equal columns spanning `[x0, x1]` an x falls in: the
/// last is closed on the right, x outside saturates to the first or last, and a
/// range of no width is column 0.
pub(crate) fn column_of(x0: f64, x1: f64, n: usize) -> impl Fn(f64) -> usize {
    // Halves keep the span finite for ranges near ±f64::MAX.
    let (h0, span) = (x0 * 0.5, x1 * 0.5 - x0 * 0.5);
    let nf = n as f64;
    move |x: f64| -> usize {
        if span > 0.0 {
            // `as` saturates (a negative or NaN index is 0) and truncates, which
            // for the non-negative is `floor()` without a libm call per point.
            (((x * 0.5 - h0) / span * nf) as usize).min(n.saturating_sub(1))
        } else {
            0
        }
    }
}

impl Series {
    /// The series over `cols` equal x-columns spanning `[x0, x1]` (a chart's braille
    /// dot columns): per column with finite points, at their mean x, their min,
    /// max and mean y. A column holding a NaN point (a gap) gives a gap marker
    /// (NaN y at that point's x), before or after the column's values as the NaN
    /// lies before or after their mean x; a run of gap-only columns gives one, and
    /// none leads. Columns without points give nothing (the chart joins their
    /// neighbours). Points outside the range are ignored; x need not be monotonic.
    ///
    /// The extremes are those of every point logged while the series is under its
    /// cap; past it, of the min/max pairs it keeps, which are exact. The mean is
    /// that of the points held (past the cap: of the kept pairs). The work is
    /// bounded by the cap (and `cols`, at most 131,070), never by the run's length.
    /// A reversed or non-finite range, or `cols == 0`, gives nothing.
    pub fn column_band(&self, x0: f64, x1: f64, cols: usize, out: &mut ColumnBand) {
        out.clear();
        if cols == 0 || !x0.is_finite() || !x1.is_finite() || x1 < x0 {
            return;
        }
        let n = if x1 > x0 { cols.min(MAX_COLUMNS) } else { 1 };
        let column = column_of(x0, x1, n);
        let span_pts: &[Point] = if self.monotonic {
            let a = self.pts.partition_point(|p| p.0 < x0);
            let b = self.pts.partition_point(|p| p.0 <= x1);
            &self.pts[a..b.max(a)]
        } else {
            &self.pts
        };
        let tail = self.group.iter().flat_map(|g| [g.lo, g.hi]);
        let mut acc = vec![Column::default(); n];
        for (px, py) in span_pts.iter().copied().chain(tail) {
            if !(px >= x0 && px <= x1) {
                continue;
            }
            let c = &mut acc[column(px)];
            if py.is_nan() {
                c.nan.get_or_insert(px);
                continue;
            }
            if !py.is_finite() {
                continue;
            }
            out.points += 1;
            c.n += 1;
            c.x += px;
            c.y += py;
            (c.lo, c.hi) = if c.n == 1 {
                (py, py)
            } else {
                (c.lo.min(py), c.hi.max(py))
            };
        }
        let mut overflowed = false;
        for c in &mut acc {
            if c.n > 0 {
                let k = c.n as f64;
                (c.x, c.y) = (c.x / k, c.y / k);
                overflowed |= !(c.x.is_finite() && c.y.is_finite());
            }
        }
        if overflowed {
            let tail: Vec<Point> = self.group.iter().flat_map(|g| [g.lo, g.hi]).collect();
            running_means(span_pts, &tail, (x0, x1), &column, &mut acc);
        }
        for c in &acc {
            let x = c.x.max(x0).min(x1);
            match c.nan {
                Some(g) if c.n == 0 || g < x => out.gap(g),
                _ => {}
            }
            if c.n > 0 {
                out.push(x, c.lo, c.hi, c.y.max(c.lo).min(c.hi));
            }
            match c.nan {
                Some(g) if c.n > 0 && g >= x => out.gap(g),
                _ => {}
            }
        }
    }
}

/// The means of the columns whose sums overflowed, recomputed as running means
/// (each point divided before it is added, so no partial sum leaves the range of
/// the values). Only values near ±f64::MAX get here.
fn running_means(
    pts: &[Point],
    tail: &[Point],
    (x0, x1): (f64, f64),
    column: &impl Fn(f64) -> usize,
    acc: &mut [Column],
) {
    let redo: Vec<bool> = acc
        .iter()
        .map(|c| c.n > 0 && !(c.x.is_finite() && c.y.is_finite()))
        .collect();
    let mut seen = vec![0usize; acc.len()];
    for &(px, py) in pts.iter().chain(tail) {
        if !(px >= x0 && px <= x1 && py.is_finite()) {
            continue;
        }
        let i = column(px);
        if !redo[i] {
            continue;
        }
        let c = &mut acc[i];
        if seen[i] == 0 {
            (c.x, c.y) = (0.0, 0.0);
        }
        seen[i] += 1;
        let k = seen[i] as f64;
        c.x += px / k - c.x / k;
        c.y += py / k - c.y / k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(s: &Series, x0: f64, x1: f64, cols: usize) -> ColumnBand {
        let mut out = ColumnBand::default();
        s.column_band(x0, x1, cols, &mut out);
        assert_eq!(out.lo.len(), out.hi.len());
        assert_eq!(out.lo.len(), out.mid.len());
        for ((l, h), m) in out.lo.iter().zip(&out.hi).zip(&out.mid) {
            assert!(l.0 == h.0 && l.0 == m.0, "{l:?} {h:?} {m:?}");
            if m.1.is_nan() {
                assert!(l.1.is_nan() && h.1.is_nan());
            } else {
                assert!(l.1 <= m.1 && m.1 <= h.1, "{l:?} {m:?} {h:?}");
            }
        }
        out
    }

    fn ys(p: &[Point]) -> Vec<f64> {
        p.iter().map(|p| p.1).collect()
    }

    #[test]
    fn means_of_values_near_the_largest_float_do_not_overflow() {
        let mut s = Series::new(1000);
        let big = f64::MAX * 0.75;
        // Column 0: two huge values of one sign (their sum overflows); column 1:
        // huge of both signs; column 2: ordinary values, summed as usual.
        for (x, y) in [
            (0.0, big),
            (1.0, big * 0.5),
            (2.0, -big),
            (3.0, big),
            (4.0, 1.0),
            (5.0, 2.0),
        ] {
            s.push(x, y);
        }
        let b = band(&s, 0.0, 6.0, 3);
        assert_eq!(ys(&b.mid), [big * 0.75, 0.0, 1.5]);
        let xs: Vec<f64> = b.mid.iter().map(|p| p.0).collect();
        assert_eq!(xs, [0.5, 2.5, 4.5]);
        // x near the largest float too.
        let mut s = Series::new(1000);
        let x = f64::MAX * 0.9;
        s.push(x * 0.99, 1.0);
        s.push(x, 3.0);
        let b = band(&s, x * 0.98, x, 1);
        assert!(
            b.mid[0].0.is_finite() && b.mid[0].0 > x * 0.98,
            "{:?}",
            b.mid
        );
        assert_eq!(ys(&b.mid), [2.0]);
    }

    #[test]
    fn each_column_gets_its_min_max_and_mean_at_its_mean_x() {
        let mut s = Series::new(1000);
        // Columns of width 2 over [0, 8]: x 0..=7 → two points per column.
        for (x, y) in [1.0, 5.0, 2.0, 2.0, -3.0, 7.0, 0.0, 4.0]
            .into_iter()
            .enumerate()
        {
            s.push(x as f64, y);
        }
        let b = band(&s, 0.0, 8.0, 4);
        assert_eq!(b.points, 8);
        assert!(b.is_dense(4) && !b.is_dense(8));
        assert_eq!(ys(&b.lo), [1.0, 2.0, -3.0, 0.0]);
        assert_eq!(ys(&b.hi), [5.0, 2.0, 7.0, 4.0]);
        assert_eq!(ys(&b.mid), [3.0, 2.0, 2.0, 2.0]);
        let xs: Vec<f64> = b.mid.iter().map(|p| p.0).collect();
        assert_eq!(xs, [0.5, 2.5, 4.5, 6.5]);
    }

    #[test]
    fn extremes_survive_compaction_and_the_work_is_bounded_by_the_cap() {
        let mut s = Series::new(512);
        let n = 1_000_000u32;
        for i in 0..n {
            let x = f64::from(i);
            let y = match i {
                123_457 => 1e9,
                777_777 => -1e9,
                _ => (x / 997.0).sin(),
            };
            s.push(x, y);
        }
        assert!(s.stored() <= 512);
        let b = band(&s, 0.0, f64::from(n - 1), 100);
        assert!(b.points <= 512 + 2, "{}", b.points);
        assert!(b.lo.len() <= 100);
        let (hi, lo) = (ys(&b.hi), ys(&b.lo));
        // Each extreme in its own column, the others within the sine's range.
        let top = hi.iter().position(|&y| y == 1e9).expect("the spike up");
        let bottom = lo.iter().position(|&y| y == -1e9).expect("the spike down");
        assert!(b.hi[top].0 > 100_000.0 && b.hi[top].0 < 140_000.0);
        assert!(b.lo[bottom].0 > 760_000.0 && b.lo[bottom].0 < 790_000.0);
        assert!(hi.iter().filter(|&&y| y > 1.0).count() == 1);
        // The mean is pulled up by the spike but stays inside the column's range.
        assert!(b.mid[top].1 > 1.0 && b.mid[top].1 < 1e9);
        // The pending group counts too: the last point is in the last column.
        s.push(f64::from(n), 5e8);
        let b = band(&s, 0.0, f64::from(n), 100);
        assert_eq!(b.hi.last().map(|p| p.1), Some(5e8));
    }

    #[test]
    fn gaps_are_markers_between_the_columns() {
        let mut s = Series::new(1000);
        // Columns of width 10 over [0, 60]: column 2 holds only NaN (x 20..29),
        // column 3 too; column 4 holds a NaN after its values.
        for i in 0..60u32 {
            let x = f64::from(i);
            let y = if (20..40).contains(&i) || i == 48 {
                f64::NAN
            } else {
                x
            };
            s.push(x, y);
        }
        let b = band(&s, 0.0, 60.0, 6);
        let nan: Vec<bool> = b.mid.iter().map(|p| p.1.is_nan()).collect();
        // c0, c1, gap (the run of two NaN columns is one marker), c4 (its NaN at
        // 48 is after its mean x 44.1), gap, c5.
        assert_eq!(nan, [false, false, true, false, true, false], "{:?}", b.mid);
        assert_eq!(b.mid[2].0, 20.0);
        assert_eq!(b.mid[4].0, 48.0);
        // A NaN before a column's values goes before them; none leads the band.
        let mut s = Series::new(1000);
        for (x, y) in [
            (0.0, f64::NAN),
            (1.0, 1.0),
            (2.0, 2.0),
            (4.0, f64::NAN),
            (6.0, 3.0),
        ] {
            s.push(x, y);
        }
        let b = band(&s, 0.0, 7.0, 2);
        let nan: Vec<bool> = b.mid.iter().map(|p| p.1.is_nan()).collect();
        assert_eq!(nan, [false, true, false], "{:?}", b.mid);
        // ±inf is no point and no gap.
        let mut s = Series::new(64);
        s.push(0.0, f64::INFINITY);
        s.push(1.0, 1.0);
        let b = band(&s, 0.0, 1.0, 4);
        assert_eq!((b.points, ys(&b.mid)), (1, vec![1.0]));
    }

    #[test]
    fn non_monotonic_x_is_bucketed_by_x() {
        let mut s = Series::new(1000);
        // A metric x axis that goes back and forth.
        for (x, y) in [
            (5.0, 1.0),
            (1.0, 2.0),
            (9.0, 3.0),
            (2.0, 4.0),
            (8.0, 5.0),
            (4.9, 6.0),
        ] {
            s.push(x, y);
        }
        let b = band(&s, 0.0, 10.0, 2);
        // Column 0 ([0, 5)): 2, 4, 6 at x 1, 2, 4.9; column 1: 1, 3, 5.
        assert_eq!(ys(&b.lo), [2.0, 1.0]);
        assert_eq!(ys(&b.hi), [6.0, 5.0]);
        assert_eq!(ys(&b.mid), [4.0, 3.0]);
        assert!((b.mid[0].0 - 7.9 / 3.0).abs() < 1e-12);
        // A window inside the points: only those in it.
        let b = band(&s, 4.0, 8.5, 1);
        assert_eq!((ys(&b.lo), ys(&b.hi), b.points), (vec![1.0], vec![6.0], 3));
    }

    #[test]
    fn a_windowed_series_bands_its_window_and_ranges_are_clipped() {
        let mut s = Series::windowed(256, 60.0);
        for i in 0..10_000u32 {
            s.push(f64::from(i), f64::from(i % 7));
        }
        let (a, end) = s.x_bounds().expect("bounds");
        let b = band(&s, end - 60.0, end, 30);
        assert_eq!(b.points, 61);
        assert_eq!(b.lo.len(), 30);
        assert!(b.lo.iter().all(|p| p.0 >= end - 60.0 && p.0 <= end));
        assert!(b.lo.iter().all(|p| p.1 >= 0.0) && b.hi.iter().all(|p| p.1 <= 6.0));
        // Zoomed: only the points inside; before the held ones: nothing.
        let b = band(&s, end - 10.0, end, 100);
        assert_eq!(b.points, 11);
        assert!(!b.is_dense(100));
        assert_eq!(band(&s, 0.0, a - 1.0, 10), ColumnBand::default());
    }

    #[test]
    fn degenerate_ranges_give_nothing_or_one_column() {
        let mut s = Series::new(64);
        for i in 0..10u32 {
            s.push(f64::from(i), f64::from(i));
        }
        assert_eq!(band(&s, 0.0, 9.0, 0), ColumnBand::default());
        assert_eq!(band(&s, 9.0, 0.0, 4), ColumnBand::default());
        assert_eq!(band(&s, f64::NAN, 9.0, 4), ColumnBand::default());
        assert_eq!(band(&s, 0.0, f64::INFINITY, 4), ColumnBand::default());
        // One x: one column of the points exactly there.
        let b = band(&s, 3.0, 3.0, 50);
        assert_eq!((ys(&b.mid), b.points), (vec![3.0], 1));
        // A huge column count is capped, not allocated; a huge range still buckets.
        let b = band(&s, 0.0, 9.0, usize::MAX);
        assert_eq!(b.mid.len(), 10);
        let mut s = Series::new(64);
        s.push(-f64::MAX, 1.0);
        s.push(f64::MAX, 2.0);
        let b = band(&s, -f64::MAX, f64::MAX, 2);
        assert_eq!(ys(&b.mid), [1.0, 2.0]);
    }
}
