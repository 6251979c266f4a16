//! The min–max band of a chart (`b` hides or shows it): where a chart has more
//! points in view than dot columns, each series is drawn as its columns' mean
//! line with a faint band from each column's min to its max beneath it, so the
//! trend reads at a glance and a spike of one point still reaches its height.
//! (Without the band the line itself zigzags through each column's min and max.)

use std::sync::{Mutex, PoisonError};

use ratatui::style::{Modifier, Style};

use super::chart::Band;
use crate::store::series::{ColumnBand, Point, Series};

/// Series views held at most: a full screen of charts, each with a few runs.
const MEMO_CAP: usize = 128;

/// The views of series drawn lately (a band, or the downsampled line where a
/// series has none), so an unchanged chart costs a copy of its columns instead of
/// a walk over its points each frame. Keyed on the series' version, the x range
/// and the columns; the least recently used is dropped past [`MEMO_CAP`].
#[derive(Default)]
pub(crate) struct ViewMemo {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    views: Vec<(ViewKey, u64, View)>,
    /// Bumped on each look-up: the order of use.
    clock: u64,
}

#[derive(Clone, Copy, PartialEq)]
struct ViewKey {
    series: (u64, u64, usize),
    x: (u64, u64),
    cols: usize,
    band: bool,
}

#[derive(Clone)]
enum View {
    Band(ColumnBand),
    Line(Vec<Point>),
}

impl ViewMemo {
    /// `s`'s band over `x` in `cols` columns ([`Series::column_band`]).
    pub(crate) fn band(&self, s: &Series, x: (f64, f64), cols: usize) -> ColumnBand {
        let view = self.view(s, x, cols, true, || {
            let mut b = ColumnBand::default();
            s.column_band(x.0, x.1, cols, &mut b);
            View::Band(b)
        });
        match view {
            View::Band(b) => b,
            View::Line(_) => ColumnBand::default(),
        }
    }

    /// `s`'s points over `x` downsampled to `cols` columns ([`Series::downsample`]).
    pub(crate) fn line(&self, s: &Series, x: (f64, f64), cols: usize) -> Vec<Point> {
        let view = self.view(s, x, cols, false, || {
            let mut pts = Vec::with_capacity(cols * 2 + 4);
            s.downsample(x.0, x.1, cols, &mut pts);
            View::Line(pts)
        });
        match view {
            View::Line(p) => p,
            View::Band(_) => Vec::new(),
        }
    }

    /// Drop every view (a benchmark of the uncached frame).
    pub(crate) fn clear(&self) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.views.clear();
    }

    fn view(
        &self,
        s: &Series,
        x: (f64, f64),
        cols: usize,
        band: bool,
        make: impl FnOnce() -> View,
    ) -> View {
        let key = ViewKey {
            series: s.version(),
            x: (x.0.to_bits(), x.1.to_bits()),
            cols,
            band,
        };
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.clock += 1;
        let now = held.clock;
        if let Some(e) = held.views.iter_mut().find(|e| e.0 == key) {
            e.1 = now;
            return e.2.clone();
        }
        // Computed under the lock: only the loop thread draws, so nobody waits.
        let v = make();
        if held.views.len() >= MEMO_CAP {
            if let Some(old) = (0..held.views.len()).min_by_key(|&i| held.views[i].1) {
                held.views.swap_remove(old);
            }
        }
        held.views.push((key, now, v.clone()));
        v
    }
}

impl Clone for ViewMemo {
    /// A copy starts empty: the views are a cache, not state.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for ViewMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewMemo").finish_non_exhaustive()
    }
}

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
    /// The views come from `memo`.
    pub(crate) fn of<'b>(
        (on, memo): (bool, &ViewMemo),
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
            let b = memo.band(s, x, cols);
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
        let m = MinMax::of(
            (true, &ViewMemo::default()),
            &all,
            (0.0, 1000.0),
            100,
            |_| &[],
        );
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
        let m = MinMax::of(
            (false, &ViewMemo::default()),
            &all,
            (0.0, 1000.0),
            100,
            |_| &[],
        );
        assert!(m.line(0).is_none() && m.bands(|_| Style::default()).is_empty());
    }

    /// The same bits (NaN equal to NaN).
    fn same(a: &[Point], b: &[Point]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.0.to_bits() == q.0.to_bits() && p.1.to_bits() == q.1.to_bits())
    }

    /// What a chart draws of `s` computed afresh: its band's means where it is
    /// denser than the columns, else its downsampled points.
    fn fresh(s: &Series, x: (f64, f64), cols: usize) -> (Vec<Point>, bool) {
        let mut b = ColumnBand::default();
        s.column_band(x.0, x.1, cols, &mut b);
        if b.is_dense(cols) {
            return (b.mid, true);
        }
        let mut line = Vec::new();
        s.downsample(x.0, x.1, cols, &mut line);
        (line, false)
    }

    /// What the chart draws through the memo.
    fn kept(memo: &ViewMemo, s: &Series, x: (f64, f64), cols: usize) -> (Vec<Point>, bool) {
        let m = MinMax::of((true, memo), &[(0, s)], x, cols, |_| &[]);
        match m.line(0) {
            Some(l) => (l.to_vec(), true),
            None => (memo.line(s, x, cols), false),
        }
    }

    #[test]
    fn kept_views_are_those_computed_afresh_until_the_series_changes() {
        let memo = ViewMemo::default();
        let mut s = Series::new(256);
        let mut other = Series::new(256);
        let x = (0.0, 999.0);
        for i in 0..2000u32 {
            let y = if i % 97 == 0 {
                f64::NAN
            } else {
                f64::from(i % 13)
            };
            s.push(f64::from(i % 1000), y);
            other.push(f64::from(i % 1000), -y);
            if i % 250 == 0 {
                // Asked twice: the second comes from the memo, and equals.
                for cols in [1, 40, 5000] {
                    for _ in 0..2 {
                        let (a, b) = (kept(&memo, &s, x, cols), fresh(&s, x, cols));
                        assert!(a.1 == b.1 && same(&a.0, &b.0), "{i} {cols}");
                    }
                }
            }
        }
        let before = kept(&memo, &s, x, 40);
        assert!(before.1 && same(&before.0, &fresh(&s, x, 40).0));
        // Another series of the same length and a copy: their own views.
        assert!(same(&kept(&memo, &other, x, 40).0, &fresh(&other, x, 40).0));
        let mut copy = s.clone();
        assert_ne!(copy.version().0, s.version().0);
        copy.push(1000.0, 1e6);
        assert!(same(&kept(&memo, &copy, x, 40).0, &fresh(&copy, x, 40).0));
        // A lower cap compacts without a push: a new view.
        s.set_cap(64);
        let after = kept(&memo, &s, x, 40);
        assert!(same(&after.0, &fresh(&s, x, 40).0));
        assert!(!same(&after.0, &before.0));
        // Bounded: past the cap the oldest views go.
        for k in 0..300u32 {
            let _ = memo.line(&s, (0.0, f64::from(k + 1)), 10);
        }
        let held = memo.held.lock().map(|h| h.views.len()).unwrap_or_default();
        assert_eq!(held, MEMO_CAP);
    }

    #[test]
    fn a_break_splits_the_band() {
        let mut s = Series::new(10_000);
        // Steps 400..600 lost: the break is (399, 600).
        for i in (0..400).chain(600..1000) {
            s.push(f64::from(i), f64::from(i % 3));
        }
        let breaks = [(399.0, 600.0)];
        let m = MinMax::of(
            (true, &ViewMemo::default()),
            &[(0, &s)],
            (0.0, 999.0),
            50,
            |_| &breaks,
        );
        let line = m.line(0).expect("banded");
        let gaps: Vec<f64> = line.iter().filter(|p| p.1.is_nan()).map(|p| p.0).collect();
        assert_eq!(gaps.len(), 1, "{line:?}");
        assert!(gaps[0] < 399.0, "{gaps:?}");
        // Without the break, the columns either side are joined.
        let m = MinMax::of(
            (true, &ViewMemo::default()),
            &[(0, &s)],
            (0.0, 999.0),
            50,
            |_| &[],
        );
        assert!(m.line(0).is_some_and(|l| l.iter().all(|p| p.1.is_finite())));
    }
}
