//! Smoothing a series as it streams by, in bounded memory: the same numbers as
//! [`Smoothing::apply`] over the whole series, bit for bit, holding only the points
//! a value still waits on (none for TWEMA and EMA; the window for the running
//! average and the Gaussian).
//!
//! Two facts about the whole series are needed before the first value: its finite
//! x range (TWEMA's decay scale) and whether it is constant (EMA leaves a constant
//! series as it is). [`Prep`] gathers them on a first pass that keeps nothing else.

use std::collections::VecDeque;

use super::{Smoothing, VIEWPORT_SCALE};

/// What a first pass over a series learns for [`Stream`]: 40 bytes per series.
#[derive(Debug, Clone, Copy)]
pub struct Prep {
    lo: f64,
    hi: f64,
    first: Option<f64>,
    constant: bool,
}

impl Default for Prep {
    fn default() -> Self {
        Self {
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            first: None,
            constant: true,
        }
    }
}

impl Prep {
    /// Take one point `(x, y)` of the series into account.
    pub fn see(&mut self, x: f64, y: f64) {
        if !y.is_finite() {
            return;
        }
        if x.is_finite() {
            self.lo = self.lo.min(x);
            self.hi = self.hi.max(x);
        }
        match self.first {
            None => self.first = Some(y),
            Some(f) if f != y => self.constant = false,
            Some(_) => {}
        }
    }

    /// The finite x range, as `finite_range` gives it (1 when empty or a point).
    fn range(&self) -> f64 {
        let r = self.hi - self.lo;
        if r.is_finite() && r > 0.0 {
            r
        } else {
            1.0
        }
    }
}

/// A point waiting for its value: its position among the finite points (None for
/// a non-finite one, whose value is NaN) and its value once known.
#[derive(Debug, Clone, Copy)]
struct Slot {
    finite: Option<u64>,
    value: Option<f64>,
}

/// The per-kind state.
#[derive(Debug)]
enum State {
    Plain,
    Twema {
        w: f64,
        range: f64,
        last: f64,
        debias: f64,
        prev_x: Option<f64>,
    },
    Ema {
        w: f64,
        constant: bool,
        last: f64,
        count: i32,
    },
    /// Prefix sums of the finite points: `prefix[i - base]` is the sum of the first
    /// `i` of them, accumulated in order (as `running_average` does).
    Average {
        before: u64,
        after: u64,
        acc: f64,
        prefix: VecDeque<f64>,
        base: u64,
    },
    /// The finite points from the Gaussian's window start on: `pts[i - base]` is
    /// finite point `i`; `start` as `gaussian` moves it.
    Gaussian {
        sigma: f64,
        pts: VecDeque<(f64, f64)>,
        base: u64,
        start: u64,
    },
}

/// A streaming smoother: [`Stream::push`] each point in logged order, take the
/// values in the same order with [`Stream::pop`]; [`Stream::finish`] after the last
/// point releases the ones still waiting.
#[derive(Debug)]
pub struct Stream {
    state: State,
    slots: VecDeque<Slot>,
    /// Finite points pushed.
    finite: u64,
    /// The finite point the front's oldest unresolved finite slot is (resolution
    /// goes in order).
    next: u64,
    done: bool,
    /// No later point has an x below this ([`Stream::advance`]).
    mark: f64,
}

impl Stream {
    /// A smoother of kind `s` for a series whose first pass gave `prep`.
    #[must_use]
    pub fn new(s: Smoothing, prep: &Prep) -> Self {
        let state = match s {
            Smoothing::None => State::Plain,
            Smoothing::Twema(p) => State::Twema {
                w: p.max(0.0).sqrt().min(0.999),
                range: prep.range(),
                last: 0.0,
                debias: 0.0,
                prev_x: None,
            },
            Smoothing::Ema(w) => State::Ema {
                w,
                constant: prep.constant,
                last: 0.0,
                count: 0,
            },
            Smoothing::RunningAverage(k) => State::Average {
                before: (k / 2) as u64,
                after: (k.saturating_sub(1) / 2) as u64,
                acc: 0.0,
                prefix: VecDeque::from([0.0]),
                base: 0,
            },
            Smoothing::Gaussian(sigma) => State::Gaussian {
                sigma,
                pts: VecDeque::new(),
                base: 0,
                start: 0,
            },
        };
        Self {
            state,
            slots: VecDeque::new(),
            finite: 0,
            next: 0,
            done: false,
            mark: f64::NEG_INFINITY,
        }
    }

    /// Points pushed whose value has not been popped yet.
    #[must_use]
    pub fn waiting(&self) -> usize {
        self.slots.len()
    }

    /// The next point of the series.
    pub fn push(&mut self, x: f64, y: f64) {
        let value = match &mut self.state {
            State::Plain => Some(y),
            State::Twema {
                w,
                range,
                last,
                debias,
                prev_x,
            } => Some(if !y.is_finite() || !x.is_finite() {
                f64::NAN
            } else {
                let dx = prev_x.map_or(0.0, |px| (x - px) / *range * VIEWPORT_SCALE);
                *prev_x = Some(x);
                let adj = w.powf(dx);
                *last = *last * adj + y;
                *debias = *debias * adj + 1.0;
                *last / *debias
            }),
            State::Ema {
                w,
                constant,
                last,
                count,
            } => Some(if !y.is_finite() {
                f64::NAN
            } else if *constant {
                y
            } else {
                *last = *last * *w + (1.0 - *w) * y;
                *count = count.saturating_add(1);
                let debias = if *w == 1.0 { 1.0 } else { 1.0 - w.powi(*count) };
                *last / debias
            }),
            State::Average { acc, prefix, .. } => {
                if y.is_finite() {
                    *acc += y;
                    prefix.push_back(*acc);
                    None
                } else {
                    Some(f64::NAN)
                }
            }
            State::Gaussian { pts, .. } => {
                if y.is_finite() && x.is_finite() {
                    pts.push_back((x, y));
                    None
                } else {
                    Some(f64::NAN)
                }
            }
        };
        let finite = value.is_none().then(|| {
            self.finite += 1;
            self.finite - 1
        });
        self.slots.push_back(Slot { finite, value });
        self.resolve();
    }

    /// Promise that no later point has an x below `x` (the rows of a file whose
    /// steps never go back): a Gaussian value whose window ends before `x` is known
    /// then, without waiting for this series' next point. Exact only when the
    /// promise holds.
    pub fn advance(&mut self, x: f64) {
        if x > self.mark {
            self.mark = x;
            self.resolve();
        }
    }

    /// No more points: every value is known now.
    pub fn finish(&mut self) {
        self.done = true;
        self.resolve();
    }

    /// The next value in push order, once it is known.
    pub fn pop(&mut self) -> Option<f64> {
        let v = self.slots.front()?.value?;
        self.slots.pop_front();
        Some(v)
    }

    /// Compute the values of the waiting finite points that can be computed now, in
    /// order.
    fn resolve(&mut self) {
        while self.next < self.finite {
            let j = self.next;
            let Some(v) = self.value_of(j) else {
                return;
            };
            if let Some(s) = self.slots.iter_mut().find(|s| s.finite == Some(j)) {
                s.value = Some(v);
            }
            self.next += 1;
            self.trim();
        }
    }

    /// Finite point `j`'s value, when the points it depends on are all in.
    fn value_of(&self, j: u64) -> Option<f64> {
        let n = self.finite;
        match &self.state {
            State::Average {
                before,
                after,
                prefix,
                base,
                ..
            } => {
                let b = j + after + 1;
                if b > n && !self.done {
                    return None;
                }
                let b = b.min(n);
                let a = j.saturating_sub(*before);
                let at = |i: u64| prefix.get(usize::try_from(i - base).ok()?).copied();
                Some((at(b)? - at(a)?) / (b - a) as f64)
            }
            State::Gaussian {
                sigma,
                pts,
                base,
                start,
            } => {
                let get = |i: u64| pts.get(usize::try_from(i - base).ok()?).copied();
                let (x, _) = get(j)?;
                let reach = 3.0 * sigma;
                // `start` as `gaussian` moves it for point j.
                let mut s = *start;
                while s < j && get(s).is_some_and(|p| p.0 < x - reach) {
                    s += 1;
                }
                let (mut num, mut den) = (0.0, 0.0);
                let mut broke = false;
                for i in s..n {
                    let (xj, yj) = get(i)?;
                    if xj > x + reach {
                        broke = true;
                        break;
                    }
                    let d = xj - x;
                    let wgt = (-(d * d) / (2.0 * sigma * sigma)).exp();
                    num += wgt * yj;
                    den += wgt;
                }
                (broke || self.done || self.mark > x + reach).then_some(num / den)
            }
            // The other kinds give every value at its push.
            State::Plain | State::Twema { .. } | State::Ema { .. } => None,
        }
    }

    /// Drop what no waiting point needs any more (after point `next - 1` got its
    /// value), and move the Gaussian's window start as `gaussian` does.
    fn trim(&mut self) {
        let next = self.next;
        match &mut self.state {
            State::Average {
                before,
                prefix,
                base,
                ..
            } => {
                let keep = next.saturating_sub(*before);
                while *base < keep && prefix.len() > 1 {
                    prefix.pop_front();
                    *base += 1;
                }
            }
            State::Gaussian {
                sigma,
                pts,
                base,
                start,
            } => {
                // Move `start` for the point just resolved (the same moves the
                // computation made), then drop the points before it.
                let j = next - 1;
                let reach = 3.0 * *sigma;
                if let Some(&(x, _)) = usize::try_from(j - *base).ok().and_then(|i| pts.get(i)) {
                    while *start < j
                        && usize::try_from(*start - *base)
                            .ok()
                            .and_then(|i| pts.get(i))
                            .is_some_and(|p| p.0 < x - reach)
                    {
                        *start += 1;
                    }
                }
                while *base < *start {
                    pts.pop_front();
                    *base += 1;
                }
            }
            State::Plain | State::Twema { .. } | State::Ema { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(s: Smoothing, xs: &[f64], ys: &[f64]) -> (Vec<f64>, usize) {
        let mut prep = Prep::default();
        for (&x, &y) in xs.iter().zip(ys) {
            prep.see(x, y);
        }
        let mut st = Stream::new(s, &prep);
        let mut out = Vec::new();
        let mut most = 0;
        for (&x, &y) in xs.iter().zip(ys) {
            st.push(x, y);
            most = most.max(st.waiting());
            while let Some(v) = st.pop() {
                out.push(v);
            }
        }
        st.finish();
        while let Some(v) = st.pop() {
            out.push(v);
        }
        (out, most)
    }

    fn same(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
    }

    /// A noisy series with gaps (NaN, inf), repeated and skipped steps.
    fn series(n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        let mut x = 0.0;
        for i in 0..n {
            x += match i % 17 {
                0 => 0.0,
                5 => 7.0,
                _ => 1.0,
            };
            xs.push(x);
            ys.push(match i % 29 {
                3 => f64::NAN,
                11 => f64::INFINITY,
                _ => (i as f64 * 0.01).sin() + rnd(),
            });
        }
        (xs, ys)
    }

    const KINDS: [Smoothing; 9] = [
        Smoothing::None,
        Smoothing::Twema(0.6),
        Smoothing::Twema(0.99),
        Smoothing::Ema(0.6),
        Smoothing::Ema(1.0),
        Smoothing::RunningAverage(1),
        Smoothing::RunningAverage(10),
        Smoothing::RunningAverage(11),
        Smoothing::Gaussian(5.0),
    ];

    #[test]
    fn every_kind_streams_the_same_bits_as_the_whole_series_smoothing() {
        let (xs, ys) = series(5_000);
        for s in KINDS {
            let (got, _) = streamed(s, &xs, &ys);
            assert!(same(&got, &s.apply(&xs, &ys)), "{s}");
        }
        // Short, empty, all-gap and constant series too.
        for (xs, ys) in [
            (vec![], vec![]),
            (vec![1.0], vec![2.0]),
            (vec![1.0, 2.0, 3.0], vec![f64::NAN, f64::NAN, f64::NAN]),
            (vec![1.0, 2.0, 3.0, 4.0], vec![5.0, 5.0, f64::NAN, 5.0]),
            (vec![1.0, f64::NAN, 3.0], vec![1.0, 2.0, 3.0]),
        ] {
            for s in KINDS {
                let (got, _) = streamed(s, &xs, &ys);
                assert!(same(&got, &s.apply(&xs, &ys)), "{s} on {xs:?} {ys:?}");
            }
        }
    }

    #[test]
    fn unordered_x_streams_the_same_bits_too() {
        let xs: Vec<f64> = (0..400).map(|i| f64::from((i * 37) % 101)).collect();
        let ys: Vec<f64> = (0..400).map(|i| f64::from(i % 13)).collect();
        for s in KINDS {
            let (got, _) = streamed(s, &xs, &ys);
            assert!(same(&got, &s.apply(&xs, &ys)), "{s}");
        }
    }

    #[test]
    fn a_promised_x_releases_a_gaussian_value_before_the_next_point() {
        let mut st = Stream::new(Smoothing::Gaussian(1.0), &Prep::default());
        st.push(0.0, 1.0);
        st.push(1.0, 3.0);
        assert_eq!(st.pop(), None);
        st.advance(3.5);
        // x=0's window ends at 3: its value is known; x=1's (to 4) is not.
        let want = Smoothing::Gaussian(1.0).apply(&[0.0, 1.0], &[1.0, 3.0]);
        assert_eq!(st.pop(), Some(want[0]));
        assert_eq!(st.pop(), None);
        st.finish();
        assert_eq!(st.pop(), Some(want[1]));
    }

    #[test]
    fn what_it_holds_is_the_window_not_the_series() {
        let (xs, ys) = series(50_000);
        for (s, most) in [
            (Smoothing::Twema(0.6), 1),
            (Smoothing::Ema(0.6), 1),
            (Smoothing::RunningAverage(10), 8),
            (Smoothing::Gaussian(5.0), 40),
        ] {
            let (_, held) = streamed(s, &xs, &ys);
            assert!(held <= most, "{s} held {held} points");
        }
    }
}
