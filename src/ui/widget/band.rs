//! The min–max band of a chart (`b` hides or shows it): where a chart has more
//! points in view than dot columns, each series is drawn as its columns' mean
//! line with a faint band from each column's min to its max beneath it, so the
//! trend reads at a glance and a spike of one point still reaches its height.
//! (Without the band the line itself zigzags through each column's min and max.)

use ratatui::style::{Modifier, Style};

use super::chart::Band;
use crate::store::series::{ColumnBand, Point, Series};

/// The bands of one chart's series, by the series' index (its run's, in the
/// chart's list of drawn runs).
#[derive(Default)]
pub(crate) struct MinMax {
    bands: Vec<(usize, ColumnBand)>,
}

impl MinMax {
    /// The bands of `series` ((index, series) pairs) over `x` in `cols` dot
    /// columns, for those with more points in view than columns; none when `on`
    /// is false. `breaks(index)`: the x ranges lost to damage, which the band does
    /// not bridge (as the line does not).
    pub(crate) fn of<'b>(
        on: bool,
        series: &[(usize, &Series)],
        x: (f64, f64),
        cols: usize,
        breaks: impl Fn(usize) -> &'b [(f64, f64)],
    ) -> Self {
        let mut bands = Vec::new();
        if !on {
            return Self { bands };
        }
        for &(i, s) in series {
            let mut b = ColumnBand::default();
            s.column_band(x.0, x.1, cols, &mut b);
            if b.is_dense(cols) {
                bands.push((i, split_at_breaks(b, breaks(i))));
            }
        }
        Self { bands }
    }

    /// The line of series `i` when it has a band: its columns' means.
    pub(crate) fn line(&self, i: usize) -> Option<&[Point]> {
        self.bands
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, b)| b.mid.as_slice())
    }

    /// The chart's bands, faint in their series' style (`style(index)`).
    pub(crate) fn bands(&self, style: impl Fn(usize) -> Style) -> Vec<Band<'_>> {
        self.bands
            .iter()
            .map(|(i, b)| Band {
                lo: &b.lo,
                hi: &b.hi,
                style: style(*i).add_modifier(Modifier::DIM),
            })
            .collect()
    }
}

/// `b` with a gap marker between two neighbouring columns that a break lies
/// between (the last x before it in one, the first after in the other, or beyond).
fn split_at_breaks(b: ColumnBand, breaks: &[(f64, f64)]) -> ColumnBand {
    if breaks.is_empty() || b.mid.len() < 2 {
        return b;
    }
    let crosses = |a: f64, c: f64| breaks.iter().any(|&(s, e)| a <= s && c >= e);
    let mut out = ColumnBand {
        points: b.points,
        ..ColumnBand::default()
    };
    let mut prev: Option<f64> = None;
    for ((lo, hi), mid) in b.lo.into_iter().zip(b.hi).zip(b.mid) {
        if mid.1.is_nan() {
            prev = None;
        } else {
            if let Some(p) = prev.filter(|&p| crosses(p, mid.0)) {
                let gap = (p, f64::NAN);
                out.lo.push(gap);
                out.hi.push(gap);
                out.mid.push(gap);
            }
            prev = Some(mid.0);
        }
        out.lo.push(lo);
        out.hi.push(hi);
        out.mid.push(mid);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(n: u32) -> Series {
        let mut s = Series::new(100_000);
        for i in 0..n {
            s.push(f64::from(i), f64::from(i % 5));
        }
        s
    }

    #[test]
    fn only_series_denser_than_the_columns_get_a_band() {
        let (dense, sparse) = (noisy(1000), noisy(50));
        let all = [(0, &dense), (1, &sparse)];
        // Columns of about ten points, 0 to 4 twice: a mean about 2.
        let m = MinMax::of(true, &all, (0.0, 1000.0), 100, |_| &[]);
        assert_eq!(m.line(0).map(<[Point]>::len), Some(100));
        assert!(m
            .line(0)
            .is_some_and(|l| l.iter().all(|p| (p.1 - 2.0).abs() < 0.5)));
        assert!(m.line(1).is_none());
        let bands = m.bands(|_| Style::default());
        assert_eq!(bands.len(), 1);
        assert!(bands[0].style.add_modifier.contains(Modifier::DIM));
        assert!(bands[0].lo.iter().all(|p| p.1 == 0.0));
        assert!(bands[0].hi.iter().all(|p| p.1 == 4.0));
        // Off: none.
        let m = MinMax::of(false, &all, (0.0, 1000.0), 100, |_| &[]);
        assert!(m.line(0).is_none() && m.bands(|_| Style::default()).is_empty());
    }

    #[test]
    fn a_break_splits_the_band() {
        let mut s = Series::new(10_000);
        // Steps 400..600 lost: the break is (399, 600).
        for i in (0..400).chain(600..1000) {
            s.push(f64::from(i), f64::from(i % 3));
        }
        let breaks = [(399.0, 600.0)];
        let m = MinMax::of(true, &[(0, &s)], (0.0, 999.0), 50, |_| &breaks);
        let line = m.line(0).expect("banded");
        let gaps: Vec<f64> = line.iter().filter(|p| p.1.is_nan()).map(|p| p.0).collect();
        assert_eq!(gaps.len(), 1, "{line:?}");
        assert!(gaps[0] < 399.0, "{gaps:?}");
        // Without the break, the columns either side are joined.
        let m = MinMax::of(true, &[(0, &s)], (0.0, 999.0), 50, |_| &[]);
        assert!(m.line(0).is_some_and(|l| l.iter().all(|p| p.1.is_finite())));
    }
}
