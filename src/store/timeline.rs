//! What charting against something other than `_step` needs, bounded: per run the
//! time of each history row (its `_timestamp`, and its `_runtime` when logged) by
//! `_step`, and, for the metrics a `define_metric` steps by another metric, their
//! values by `_step` too (their own series are over that metric). One push per row
//! (and one per value of a row with metric definitions, the slow path already).

use super::metrics::{MetricStore, DEFAULT_SERIES_CAP};
use super::series::{Point, Series};

/// Points shared by the metrics kept by `_step` beside their step-metric series.
const BY_STEP_BUDGET: usize = 1 << 20;

/// Row times and step-metric'd values, by `_step`.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// (`_step`, `_timestamp`) of each row that has one.
    pub wall: Series,
    /// (`_step`, `_runtime`) of each row that logged it.
    pub runtime: Series,
    /// Metrics charted over a step metric, by `_step` as well.
    pub by_step: MetricStore,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            wall: Series::new(DEFAULT_SERIES_CAP),
            runtime: Series::new(DEFAULT_SERIES_CAP),
            by_step: MetricStore::new(BY_STEP_BUDGET, DEFAULT_SERIES_CAP),
        }
    }
}

impl Timeline {
    /// One complete history row at `step`.
    #[inline]
    pub(crate) fn row(&mut self, step: f64, time: Option<f64>, runtime: Option<f64>) {
        if let Some(t) = time.filter(|t| t.is_finite()) {
            self.wall.push(step, t);
        }
        if let Some(r) = runtime {
            self.runtime.push(step, r);
        }
    }
}

/// A lookup table (x, y) sorted by x: a series' held points and its newest one.
/// Mapping through it interpolates; outside its x range there is no value.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pts: Vec<Point>,
}

impl Table {
    /// `s`'s held points with finite y, and its last point when it is newer than
    /// them (the group being gathered is not held yet); sorted by x (a rewound
    /// step logged again keeps its latest value).
    #[must_use]
    pub fn of(s: &Series) -> Self {
        let mut pts: Vec<Point> = s
            .points()
            .iter()
            .copied()
            .filter(|p| p.1.is_finite())
            .collect();
        if let Some(l) = s.last().filter(|l| l.1.is_finite()) {
            if pts.last().is_none_or(|p| p.0 < l.0) {
                pts.push(l);
            }
        }
        if !pts.windows(2).all(|w| w[0].0 <= w[1].0) {
            // Stable: of equal x the later (newer) comes last.
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        Self { pts }
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pts.is_empty()
    }

    /// The first y (the earliest logged).
    #[must_use]
    pub fn first_y(&self) -> Option<f64> {
        self.pts.first().map(|p| p.1)
    }

    /// y at `x`, interpolated between the table's neighbours of x; None outside.
    #[must_use]
    pub fn at(&self, x: f64) -> Option<f64> {
        let i = self.pts.partition_point(|p| p.0 < x);
        let after = self.pts.get(i)?;
        if after.0 == x {
            // The last of equal x: the newest value logged at that step.
            let j = self.pts[i..].partition_point(|p| p.0 <= x) + i - 1;
            return Some(self.pts[j].1);
        }
        let before = self.pts.get(i.checked_sub(1)?)?;
        let t = (x - before.0) / (after.0 - before.0);
        Some(before.1 + (after.1 - before.1) * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_inside_and_has_nothing_outside() {
        let mut s = Series::new(64);
        for (x, y) in [(0.0, 10.0), (2.0, 20.0), (4.0, 40.0)] {
            s.push(x, y);
        }
        let t = Table::of(&s);
        assert_eq!(t.at(0.0), Some(10.0));
        assert_eq!(t.at(1.0), Some(15.0));
        assert_eq!(t.at(3.0), Some(30.0));
        assert_eq!(t.at(4.0), Some(40.0));
        assert_eq!(t.at(-1.0), None);
        assert_eq!(t.at(4.5), None);
        assert_eq!(Table::default().at(0.0), None);
    }

    #[test]
    fn table_keeps_the_newest_point_of_a_compacted_series_and_sorts_a_rewind() {
        // Past the cap the series gathers groups; its newest point is not held yet.
        let mut s = Series::new(64);
        for i in 0..1001 {
            s.push(f64::from(i), f64::from(i) * 2.0);
        }
        let t = Table::of(&s);
        assert_eq!(t.at(1000.0), Some(2000.0));
        assert_eq!(t.at(0.0), Some(0.0));
        // A rewound run: step 1 logged again, later; its newest value wins.
        let mut r = Series::new(64);
        for (x, y) in [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (1.0, 5.0)] {
            r.push(x, y);
        }
        let t = Table::of(&r);
        assert_eq!(t.at(1.0), Some(5.0));
        assert_eq!(t.at(2.0), Some(2.0));
    }

    #[test]
    fn a_row_pushes_one_time_point_each() {
        let mut t = Timeline::default();
        t.row(0.0, Some(100.0), Some(0.5));
        t.row(1.0, Some(101.0), None);
        t.row(2.0, None, Some(2.5));
        assert_eq!(t.wall.count(), 2);
        assert_eq!(t.runtime.count(), 2);
        assert_eq!(Table::of(&t.wall).at(0.5), Some(100.5));
    }
}
