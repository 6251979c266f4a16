//! One metric series with a hard point cap.
//!
//! While under its cap a series keeps every point. When it reaches the cap it is
//! *compacted*: each run of four stored points is replaced by its minimum and maximum
//! (kept in x order), and from then on incoming points are gathered into groups of
//! the same width before their min/max pair is stored. So a finished run still shows
//! from its first step to its last, spikes survive (exact extremes are kept), and the
//! memory stays below `cap × 16 bytes` whatever the run's length.
//!
//! A series can instead be a *window* (live system metrics): points older than
//! `last_x - window` are dropped, a true ring over time.

use std::sync::atomic::{AtomicU64, Ordering};

mod band;
pub(crate) use band::column_of;
pub use band::ColumnBand;

/// One drawn point: (x, y). NaN y marks a gap.
pub type Point = (f64, f64);

/// Which series (or which copy of one) this is, so a view computed from one is
/// never taken for another's of the same length: a copy gets a stamp of its own.
#[derive(Debug)]
struct Stamp(u64);

impl Stamp {
    fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Clone for Stamp {
    fn clone(&self) -> Self {
        Self::new()
    }
}

#[derive(Debug, Clone, Copy)]
struct Group {
    n: usize,
    lo: Point,
    hi: Point,
    has_nan: bool,
}

/// A capped, min/max-compacting series of (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    pts: Vec<Point>,
    cap: usize,
    /// Raw points represented by each stored min/max pair; 1 while uncompacted.
    stride: usize,
    group: Option<Group>,
    window: Option<f64>,
    count: u64,
    first: Option<Point>,
    last: Option<Point>,
    y_min: f64,
    y_max: f64,
    /// x of the first point at `y_min` / `y_max`.
    x_at_min: f64,
    x_at_max: f64,
    /// Sum and number of the finite y (the mean's terms): those of magnitude
    /// [`HUGE`] or more summed apart, scaled down, so that no sum overflows.
    sum: f64,
    sum_huge: f64,
    finite: u64,
    x_min: f64,
    x_max: f64,
    monotonic: bool,
    stamp: Stamp,
}

/// Exact statistics of a series over every point pushed to it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    /// Points logged (NaN and ±inf included).
    pub count: u64,
    /// Of those, the NaN and ±inf ones: not in `min`, `max` or `mean`.
    pub non_finite: u64,
    /// The latest point (its y may be NaN).
    pub last: Option<Point>,
    /// (x, y) of the smallest finite y, its first occurrence.
    pub min: Option<Point>,
    /// (x, y) of the largest finite y, its first occurrence.
    pub max: Option<Point>,
    /// Mean of the finite y.
    pub mean: Option<f64>,
    /// The smallest / largest as logged, where it is an integer past what its
    /// double holds (2^53 and beyond; see `store::exact`).
    pub min_exact: Option<i128>,
    pub max_exact: Option<i128>,
}

/// A y this large (2^960) is summed apart, times 2^-64: below it, 2^60 points
/// sum to at most 2^1020; at or above it, 2^63 points to at most 2^1023. Neither
/// sum overflows, so the mean of finite values is finite.
const HUGE: f64 = f64::from_bits((1023 + 960) << 52);
const HUGE_SCALE: f64 = f64::from_bits((1023 + 64) << 52);

/// Smallest cap we allow: a compaction must leave room to grow.
pub const MIN_CAP: usize = 64;

impl Series {
    /// A series that keeps at most `cap` points (rounded up to [`MIN_CAP`]).
    #[must_use]
    pub fn new(cap: usize) -> Self {
        Self {
            pts: Vec::new(),
            cap: cap.max(MIN_CAP),
            stride: 1,
            group: None,
            window: None,
            count: 0,
            first: None,
            last: None,
            y_min: f64::INFINITY,
            y_max: f64::NEG_INFINITY,
            x_at_min: f64::NAN,
            x_at_max: f64::NAN,
            sum: 0.0,
            sum_huge: 0.0,
            finite: 0,
            x_min: f64::INFINITY,
            x_max: f64::NEG_INFINITY,
            monotonic: true,
            stamp: Stamp::new(),
        }
    }

    /// A ring that keeps only points within `window` of the newest x.
    #[must_use]
    pub fn windowed(cap: usize, window: f64) -> Self {
        Self {
            window: Some(window),
            ..Self::new(cap)
        }
    }

    /// Add one point (inlined: a big run's first load pushes tens of millions).
    #[inline(always)]
    pub fn push(&mut self, x: f64, y: f64) {
        if !x.is_finite() {
            return;
        }
        self.count += 1;
        if let Some((lx, _)) = self.last {
            if x < lx {
                self.monotonic = false;
            }
        }
        if self.first.is_none() {
            self.first = Some((x, y));
        }
        self.last = Some((x, y));
        // x is finite and the bounds never NaN: plain comparisons do what
        // `f64::min`/`max` do.
        if x < self.x_min {
            self.x_min = x;
        }
        if x > self.x_max {
            self.x_max = x;
        }
        if y.is_finite() {
            if y < self.y_min {
                self.y_min = y;
                self.x_at_min = x;
            }
            if y > self.y_max {
                self.y_max = y;
                self.x_at_max = x;
            }
            if y.abs() < HUGE {
                self.sum += y;
            } else {
                self.sum_huge += y * HUGE_SCALE.recip();
            }
            self.finite += 1;
        }
        if let Some(w) = self.window {
            if self.pts.len() == self.pts.capacity() {
                // Doubling would leave up to twice the cap allocated in every
                // ring of a long window; the ring never holds more than the cap.
                let want = (self.pts.len() * 2).clamp(16, self.cap);
                self.pts
                    .reserve_exact(want.saturating_sub(self.pts.len()).max(1));
            }
            self.pts.push((x, y));
            let cut = x - w;
            if self.pts.first().is_some_and(|p| p.0 < cut) && self.pts.len() >= self.cap / 2 {
                let keep_from = self.pts.partition_point(|p| p.0 < cut);
                self.pts.drain(..keep_from);
            }
            if self.pts.len() >= self.cap {
                self.pts.drain(..self.cap / 2);
            }
            return;
        }
        if self.stride == 1 {
            self.pts.push((x, y));
        } else {
            match &mut self.group {
                None => {
                    // A group's first point (the stride is 4 or more: it does not
                    // end here).
                    self.group = Some(Group {
                        n: 1,
                        lo: (x, y),
                        hi: (x, y),
                        has_nan: y.is_nan(),
                    });
                }
                Some(g) => {
                    g.n += 1;
                    if y.is_nan() {
                        g.has_nan = true;
                    } else {
                        // Below the low one, or the low one is NaN (so is the
                        // high one then): one unordered comparison.
                        #[allow(clippy::neg_cmp_op_on_partial_ord)]
                        if !(y >= g.lo.1) {
                            g.lo = (x, y);
                        }
                        #[allow(clippy::neg_cmp_op_on_partial_ord)]
                        if !(y <= g.hi.1) {
                            g.hi = (x, y);
                        }
                    }
                    if g.n >= self.stride {
                        let g = *g;
                        self.group = None;
                        self.emit_group(g);
                    }
                }
            }
        }
        if self.pts.len() >= self.cap {
            self.compact();
        }
    }

    fn emit_group(&mut self, g: Group) {
        let (a, b) = if g.lo.0 <= g.hi.0 {
            (g.lo, g.hi)
        } else {
            (g.hi, g.lo)
        };
        if a.1.is_nan() && g.has_nan {
            self.pts.push((a.0, f64::NAN));
            return;
        }
        self.pts.push(a);
        if g.has_nan {
            self.pts.push((b.0, f64::NAN));
        }
        self.pts.push(b);
    }

    fn compact(&mut self) {
        let old = std::mem::take(&mut self.pts);
        let mut out = Vec::with_capacity(self.cap);
        for chunk in old.chunks(4) {
            let mut lo: Option<Point> = None;
            let mut hi: Option<Point> = None;
            let mut nan_at: Option<f64> = None;
            for &p in chunk {
                if p.1.is_nan() {
                    nan_at.get_or_insert(p.0);
                    continue;
                }
                if lo.is_none_or(|l| p.1 < l.1) {
                    lo = Some(p);
                }
                if hi.is_none_or(|h| p.1 > h.1) {
                    hi = Some(p);
                }
            }
            match (lo, hi) {
                (Some(l), Some(h)) => {
                    let (a, b) = if l.0 <= h.0 { (l, h) } else { (h, l) };
                    out.push(a);
                    if let Some(nx) = nan_at {
                        out.push((nx, f64::NAN));
                    }
                    if b != a {
                        out.push(b);
                    }
                }
                _ => {
                    if let Some(nx) = nan_at {
                        out.push((nx, f64::NAN));
                    }
                }
            }
        }
        self.pts = out;
        self.stride = if self.stride == 1 { 4 } else { self.stride * 2 };
    }

    /// Lower the cap (the store shares one budget among all series); compacts now if needed.
    pub fn set_cap(&mut self, cap: usize) {
        self.cap = cap.max(MIN_CAP);
        while self.window.is_none() && self.pts.len() >= self.cap {
            self.compact();
        }
    }

    /// Raw points pushed so far (including those compacted away).
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Changes whenever what the series holds may have: a push counts, a lower
    /// cap compacts, and each series (and each copy of one) has its own stamp.
    #[must_use]
    pub fn version(&self) -> (u64, u64, usize) {
        (self.stamp.0, self.count, self.pts.len())
    }

    /// Points held in memory.
    #[must_use]
    pub fn stored(&self) -> usize {
        self.pts.len()
    }

    /// Make room at once for `n` more points of a window's ring (as many as its
    /// cap holds at most): a window read whole grows the ring once, not through
    /// every doubling (each leaving a hole in the heap behind).
    pub fn reserve_window(&mut self, n: usize) {
        if self.window.is_some() {
            let want = (self.pts.len() + n).min(self.cap);
            self.pts.reserve_exact(want.saturating_sub(self.pts.len()));
        }
    }

    /// Points the series has room for without allocating: what its points cost
    /// in memory, 16 bytes each.
    #[must_use]
    pub fn allocated(&self) -> usize {
        self.pts.capacity()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The latest point pushed.
    #[must_use]
    pub fn last(&self) -> Option<Point> {
        self.last
    }

    /// The first point pushed.
    #[must_use]
    pub fn first(&self) -> Option<Point> {
        self.first
    }

    /// Exact (min, max) of finite y over every point pushed, or None if there is none.
    #[must_use]
    pub fn y_bounds(&self) -> Option<(f64, f64)> {
        (self.y_min <= self.y_max).then_some((self.y_min, self.y_max))
    }

    /// Exact statistics over every point pushed (compaction and a window's cut
    /// drop none of them).
    #[must_use]
    pub fn stats(&self) -> Stats {
        let mean = (self.finite > 0).then(|| {
            let n = self.finite as f64;
            // Within the extremes, as a mean is, whatever the rounding.
            (self.sum / n + self.sum_huge / n * HUGE_SCALE).clamp(self.y_min, self.y_max)
        });
        let some = self.finite > 0;
        Stats {
            count: self.count,
            non_finite: self.count - self.finite,
            last: self.last,
            min: some.then_some((self.x_at_min, self.y_min)),
            max: some.then_some((self.x_at_max, self.y_max)),
            mean,
            min_exact: None,
            max_exact: None,
        }
    }

    /// (min, max) of x over every point pushed (for a window: the held points).
    #[must_use]
    pub fn x_bounds(&self) -> Option<(f64, f64)> {
        if self.window.is_some() {
            let a = self.pts.first()?.0;
            return Some((a, self.pts.last()?.0));
        }
        (self.x_min <= self.x_max).then_some((self.x_min, self.x_max))
    }

    /// Held points, in arrival order.
    #[must_use]
    pub fn points(&self) -> &[Point] {
        &self.pts
    }

    /// The stored point nearest to `x` (the pending group's too), whatever its y:
    /// a NaN point reads as the gap it is, never as its neighbour's value (on a
    /// tie, the earlier point). Exact recorded values while the series is under
    /// its cap; after compaction, the kept extremes. A binary search where x
    /// only grows.
    #[must_use]
    pub fn nearest(&self, x: f64) -> Option<Point> {
        if x.is_nan() {
            return None;
        }
        let dist = |p: &Point| (p.0 - x).abs();
        let tail = self.group.iter().flat_map(|g| [g.lo, g.hi]);
        let around: &[Point] = if self.monotonic {
            // The points on either side of x.
            let i = self.pts.partition_point(|p| p.0 < x);
            &self.pts[i.saturating_sub(1)..(i + 1).min(self.pts.len())]
        } else {
            &self.pts
        };
        around
            .iter()
            .copied()
            .chain(tail)
            .min_by(|a, b| dist(a).total_cmp(&dist(b)))
    }

    /// The x of the stored point after (`forward`) or before `x`, NaN points
    /// included: the crosshair's step, point by point. A binary search where x
    /// only grows.
    #[must_use]
    pub fn step_from(&self, x: f64, forward: bool) -> Option<f64> {
        let tail = self.group.iter().flat_map(|g| [g.lo.0, g.hi.0]);
        let own: &[Point] = if self.monotonic {
            let i = self.pts.partition_point(|p| p.0 <= x);
            let j = self.pts.partition_point(|p| p.0 < x);
            if forward {
                self.pts
                    .get(i..(i + 1).min(self.pts.len()))
                    .unwrap_or_default()
            } else {
                self.pts.get(j.saturating_sub(1)..j).unwrap_or_default()
            }
        } else {
            &self.pts
        };
        let xs = own.iter().map(|p| p.0).chain(tail);
        if forward {
            xs.filter(|&v| v > x).min_by(f64::total_cmp)
        } else {
            xs.filter(|&v| v < x).max_by(f64::total_cmp)
        }
    }

    /// Whether it holds fewer points than were pushed (past its cap, each group
    /// of values kept as its extremes).
    #[must_use]
    pub fn compacted(&self) -> bool {
        self.stride > 1
    }

    /// How many stored points (the pending group's too) in `x0..=x1` have a
    /// finite y ≤ 0: what a log y axis cannot draw. Bounded by the cap; a binary
    /// search where x only grows.
    #[must_use]
    pub fn nonpositive_in(&self, (x0, x1): (f64, f64)) -> usize {
        let span: &[Point] = if self.monotonic {
            let a = self.pts.partition_point(|p| p.0 < x0);
            let b = self.pts.partition_point(|p| p.0 <= x1).max(a);
            &self.pts[a..b]
        } else {
            &self.pts
        };
        let tail = self.group.iter().flat_map(|g| [g.lo, g.hi]);
        span.iter()
            .copied()
            .chain(tail)
            .filter(|p| (x0..=x1).contains(&p.0) && p.1 <= 0.0)
            .count()
    }

    /// Points to draw `[x0, x1]` across `width` columns: at most about two per column
    /// (each column's min and max in x order), NaN points kept as gap markers. The work
    /// is bounded by the cap, never by the run's length.
    pub fn downsample(&self, x0: f64, x1: f64, width: usize, out: &mut Vec<Point>) {
        out.clear();
        if width == 0 || x1.is_nan() || x0.is_nan() {
            return;
        }
        let tail = self.group.map(|g| {
            let (a, b) = if g.lo.0 <= g.hi.0 {
                (g.lo, g.hi)
            } else {
                (g.hi, g.lo)
            };
            [a, b]
        });
        let span: &[Point] = if self.monotonic {
            let a = self.pts.partition_point(|p| p.0 < x0);
            let b = self.pts.partition_point(|p| p.0 <= x1);
            // A reversed range (b < a) spans nothing rather than panicking.
            let a = a.saturating_sub(1);
            &self.pts[a..(b + 1).min(self.pts.len()).max(a)]
        } else {
            &self.pts
        };
        let extra = tail.iter().flatten().copied().filter(|_| true);
        let all = span.iter().copied().chain(extra);
        let scale = if x1 > x0 {
            width as f64 / (x1 - x0)
        } else {
            0.0
        };
        let mut cur: Option<(i64, Point, Point, usize)> = None; // bucket, lo, hi, first index in out
        for p in all {
            let bucket = floor_i64((p.0 - x0) * scale);
            if p.1.is_nan() {
                if let Some((_, lo, hi, _)) = cur.take() {
                    push_pair(out, lo, hi);
                }
                out.push(p);
                continue;
            }
            match &mut cur {
                Some((b, lo, hi, _)) if *b == bucket => {
                    if p.1 < lo.1 {
                        *lo = p;
                    }
                    if p.1 > hi.1 {
                        *hi = p;
                    }
                }
                _ => {
                    if let Some((_, lo, hi, _)) = cur.take() {
                        push_pair(out, lo, hi);
                    }
                    cur = Some((bucket, p, p, out.len()));
                }
            }
        }
        if let Some((_, lo, hi, _)) = cur {
            push_pair(out, lo, hi);
        }
        if !self.monotonic {
            out.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
}

/// `v.floor() as i64` without a libm call per point (the build targets
/// x86-64 without SSE4.1's rounding instruction): `as` truncates towards zero
/// and saturates, so a negative fraction steps down one.
#[inline]
fn floor_i64(v: f64) -> i64 {
    let t = v as i64;
    if (t as f64) > v {
        t.saturating_sub(1)
    } else {
        t
    }
}

fn push_pair(out: &mut Vec<Point>, lo: Point, hi: Point) {
    let (a, b) = if lo.0 <= hi.0 { (lo, hi) } else { (hi, lo) };
    out.push(a);
    if b != a {
        out.push(b);
    }
}

// What smoothing reads.
impl Series {
    /// Every point the series keeps: the held points, then the min/max pair of the
    /// group still being gathered (in x order), so a copy reaches the last point.
    pub(crate) fn kept(&self) -> Vec<Point> {
        let mut out = self.pts.clone();
        if let Some(g) = self.group {
            let (a, b) = if g.lo.0 <= g.hi.0 {
                (g.lo, g.hi)
            } else {
                (g.hi, g.lo)
            };
            out.push(a);
            if b != a {
                out.push(b);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_exact_past_compaction_with_first_extremes_and_nan_apart() {
        let mut s = Series::new(64);
        let mut sum = 0.0;
        for i in 0..10_000u32 {
            let x = f64::from(i);
            // A repeated minimum (first at x=7) and maximum (first at x=9000).
            let y = match i {
                7 | 20 => -5.0,
                9000 | 9500 => 50.0,
                13 => f64::NAN,
                14 => f64::INFINITY,
                _ => f64::from(i % 10),
            };
            if y.is_finite() {
                sum += y;
            }
            s.push(x, y);
        }
        assert!(s.stored() < 64);
        let st = s.stats();
        assert_eq!(st.count, 10_000);
        assert_eq!(st.non_finite, 2);
        assert_eq!(st.min, Some((7.0, -5.0)));
        assert_eq!(st.max, Some((9000.0, 50.0)));
        assert_eq!(st.last, Some((9999.0, 9.0)));
        assert_eq!(st.mean, Some(sum / 9998.0));
        assert_eq!(Series::new(64).stats(), Stats::default());
    }

    /// Finite values near the largest double have a finite mean (their plain sum
    /// overflows to inf), mixed with small ones too.
    #[test]
    fn the_mean_of_huge_finite_values_is_finite() {
        for n in 1..40u32 {
            let mut s = Series::new(64);
            for i in 0..n {
                s.push(f64::from(i), f64::MAX);
            }
            assert_eq!(s.stats().mean, Some(f64::MAX), "{n} points");
            s.push(f64::from(n), -f64::MAX);
            let mean = s.stats().mean.unwrap();
            let want = f64::MAX * (f64::from(n) - 1.0) / (f64::from(n) + 1.0);
            assert!(
                (mean - want).abs() <= want.abs() * 1e-12,
                "{n}: {mean} {want}"
            );
        }
        let mut s = Series::new(64);
        for (x, y) in [(0.0, 1e300), (1.0, 1e308), (2.0, 1e308), (3.0, 1.0)] {
            s.push(x, y);
        }
        let mean = s.stats().mean.unwrap();
        assert!((mean - 5.000_000_025e307).abs() < 1e295, "{mean}");
    }

    #[test]
    fn keeps_everything_under_cap() {
        let mut s = Series::new(1000);
        for i in 0..500 {
            s.push(f64::from(i), f64::from(i * 2));
        }
        assert_eq!(s.stored(), 500);
        assert_eq!(s.y_bounds(), Some((0.0, 998.0)));
    }

    #[test]
    fn compaction_bounds_memory_and_keeps_extremes_and_span() {
        let mut s = Series::new(256);
        let n: u32 = 1_000_000;
        for i in 0..n {
            let x = f64::from(i);
            let y = if i == 123_457 {
                1e9
            } else if i == 777_777 {
                -1e9
            } else {
                (x / 1000.0).sin()
            };
            s.push(x, y);
        }
        assert!(s.stored() <= 256, "{}", s.stored());
        assert_eq!(s.count(), u64::from(n));
        let ys: Vec<f64> = s.points().iter().map(|p| p.1).collect();
        assert!(ys.contains(&1e9));
        assert!(ys.contains(&-1e9));
        assert_eq!(s.x_bounds(), Some((0.0, f64::from(n - 1))));
        let mut out = Vec::new();
        s.downsample(0.0, f64::from(n - 1), 100, &mut out);
        assert!(out.len() <= 260);
        assert!(out.first().is_some_and(|p| p.0 < 10_000.0));
        assert!(out.last().is_some_and(|p| p.0 > f64::from(n) - 10_000.0));
        assert!(out.iter().any(|p| p.1 == 1e9));
    }

    #[test]
    fn downsample_gives_two_points_per_column_and_gaps() {
        let mut s = Series::new(10_000);
        for i in 0..1000 {
            let y = if i == 500 { f64::NAN } else { f64::from(i % 7) };
            s.push(f64::from(i), y);
        }
        let mut out = Vec::new();
        s.downsample(0.0, 999.0, 50, &mut out);
        assert!(out.len() <= 2 * 51 + 1);
        assert!(out.iter().any(|p| p.1.is_nan()));
        s.downsample(100.0, 200.0, 10, &mut out);
        assert!(out.iter().all(|p| p.0 >= 99.0 && p.0 <= 201.0));
    }

    #[test]
    fn window_is_a_ring_over_time() {
        let mut s = Series::windowed(1000, 60.0);
        for i in 0..10_000 {
            s.push(f64::from(i), 1.0);
        }
        assert!(s.stored() <= 1000);
        let (a, b) = s.x_bounds().expect("bounds");
        assert_eq!(b, 9999.0);
        assert!(a >= 9999.0 - 60.0 - 1000.0);
    }

    #[test]
    fn nearest_and_step_find_recorded_points() {
        let mut s = Series::new(1024);
        for i in 0..10 {
            let y = if i == 5 {
                f64::NAN
            } else {
                f64::from(i) * 10.0
            };
            s.push(f64::from(i), y);
        }
        assert_eq!(s.nearest(3.2), Some((3.0, 30.0)));
        assert_eq!(s.nearest(3.6), Some((4.0, 40.0)));
        // A gap's point reads as the gap, not as a neighbour's value.
        assert!(matches!(s.nearest(5.0), Some((5.0, y)) if y.is_nan()));
        assert_eq!(s.nearest(5.4).map(|p| p.0), Some(5.0));
        assert_eq!(s.step_from(4.0, true), Some(5.0));
        assert_eq!(s.step_from(5.0, true), Some(6.0));
        assert_eq!(s.step_from(6.0, false), Some(5.0));
        assert_eq!(s.step_from(5.0, false), Some(4.0));
        assert_eq!(s.nearest(-5.0), Some((0.0, 0.0)));
        assert_eq!(s.nearest(50.0), Some((9.0, 90.0)));
        assert_eq!(s.step_from(3.0, true), Some(4.0));
        assert_eq!(s.step_from(3.0, false), Some(2.0));
        assert_eq!(s.step_from(9.0, true), None);
        assert_eq!(s.step_from(0.0, false), None);
        assert_eq!(Series::new(64).nearest(1.0), None);
    }
}
