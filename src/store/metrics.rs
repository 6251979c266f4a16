//! Named series sharing one memory budget.

use rustc_hash::FxHashMap;

use super::series::{Series, MIN_CAP};

/// Default point budget of one store: 8 Mi points ≈ 128 MiB at most.
pub const DEFAULT_BUDGET: usize = 8 << 20;
/// Most points one series keeps (plenty for any screen, and for zooming in).
pub const DEFAULT_SERIES_CAP: usize = 16 * 1024;

/// Series by key, in first-seen order. The per-series cap shrinks as series are
/// added, so the whole store never holds more than `budget` points.
#[derive(Debug, Clone)]
pub struct MetricStore {
    keys: Vec<String>,
    index: FxHashMap<String, usize>,
    series: Vec<Series>,
    budget: usize,
    series_cap: usize,
    window: Option<f64>,
    /// The per-series cap last applied to every series.
    applied_cap: usize,
}

impl Default for MetricStore {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET, DEFAULT_SERIES_CAP)
    }
}

impl MetricStore {
    #[must_use]
    pub fn new(budget: usize, series_cap: usize) -> Self {
        Self {
            keys: Vec::new(),
            index: FxHashMap::default(),
            series: Vec::new(),
            budget: budget.max(MIN_CAP),
            series_cap: series_cap.max(MIN_CAP),
            window: None,
            applied_cap: series_cap.max(MIN_CAP),
        }
    }

    /// A store of rings over the last `window` x units (live system metrics).
    #[must_use]
    pub fn windowed(series_cap: usize, window: f64) -> Self {
        Self {
            window: Some(window),
            ..Self::new(DEFAULT_BUDGET, series_cap)
        }
    }

    fn cap_now(&self) -> usize {
        (self.budget / self.series.len().max(1)).clamp(MIN_CAP, self.series_cap)
    }

    /// Index of `key`'s series, created if new.
    pub fn slot(&mut self, key: &str) -> usize {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        let i = self.series.len();
        self.keys.push(key.to_owned());
        self.index.insert(key.to_owned(), i);
        let cap = (self.budget / (i + 1)).clamp(MIN_CAP, self.series_cap);
        self.series.push(match self.window {
            Some(w) => Series::windowed(cap, w),
            None => Series::new(cap),
        });
        // Shrink the others when the share per series has dropped by an eighth since
        // the last time: a logarithmic number of passes however many keys arrive, and
        // the budget is exceeded by at most that eighth in between.
        let cap = self.cap_now();
        if cap < self.applied_cap - self.applied_cap / 8 {
            for s in &mut self.series {
                s.set_cap(cap);
            }
            self.applied_cap = cap;
        }
        i
    }

    /// Change the point budget; every series is capped again (a smaller budget
    /// drops points now, decimating as the series do).
    pub fn set_budget(&mut self, budget: usize) {
        self.budget = budget.max(MIN_CAP);
        let cap = self.cap_now();
        for s in &mut self.series {
            s.set_cap(cap);
        }
        self.applied_cap = cap;
    }

    /// Push a point to `key`.
    pub fn push(&mut self, key: &str, x: f64, y: f64) {
        let i = self.slot(key);
        self.series[i].push(x, y);
    }

    /// Push a point to a series by index (from [`MetricStore::slot`]).
    #[inline]
    pub fn push_at(&mut self, i: usize, x: f64, y: f64) {
        if let Some(s) = self.series.get_mut(i) {
            s.push(x, y);
        }
    }

    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Series> {
        self.index.get(key).map(|&i| &self.series[i])
    }

    /// Keys in first-seen order.
    #[must_use]
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// (key, series) pairs in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Series)> {
        self.keys.iter().map(String::as_str).zip(&self.series)
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.series.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Points held in memory across all series.
    #[must_use]
    pub fn stored_points(&self) -> usize {
        self.series.iter().map(Series::stored).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_keys_stay_cheap_and_bounded() {
        // 100k keys: re-capping every series on each new key (quadratic) would make
        // this test take minutes; the store must stay within budget either way.
        let mut m = MetricStore::new(1 << 20, 4096);
        for k in 0..100_000 {
            for i in 0..20 {
                m.push(&format!("k{k}"), f64::from(i), 1.0);
            }
        }
        assert_eq!(m.len(), 100_000);
        assert!(
            m.stored_points() <= 100_000 * MIN_CAP,
            "{}",
            m.stored_points()
        );
    }

    #[test]
    fn a_smaller_budget_caps_the_series_already_there() {
        let mut m = MetricStore::new(1 << 20, 4096);
        for k in 0..10 {
            for i in 0..4000 {
                m.push(&format!("m{k}"), f64::from(i), 1.0);
            }
        }
        assert_eq!(m.stored_points(), 40_000);
        m.set_budget(10_000);
        assert!(
            m.stored_points() <= 10_000 + 10 * 4,
            "{}",
            m.stored_points()
        );
        // Decimated, not cut: the whole x range is kept, and the count of points seen.
        assert_eq!(m.get("m3").map(Series::count), Some(4000));
        assert_eq!(m.get("m3").and_then(Series::x_bounds), Some((0.0, 3999.0)));
    }

    #[test]
    fn budget_is_shared() {
        let mut m = MetricStore::new(10_000, 4096);
        for k in 0..100 {
            for i in 0..1000 {
                m.push(&format!("m{k}"), f64::from(i), 1.0);
            }
        }
        assert!(
            m.stored_points() <= 10_000 + 100 * 4,
            "{}",
            m.stored_points()
        );
        assert_eq!(m.len(), 100);
        assert_eq!(m.get("m5").map(Series::count), Some(1000));
    }
}
