//! A resumed run on one step axis. Its segments (one run file each, same run id) are
//! taken in start order, as W&B's server keeps the history of a resumed run: a
//! segment whose steps go on past the last one seen simply follows; a segment that
//! rewinds (its first step at or before the last one seen: resumed from a
//! checkpoint, or an offline restart at 0) wins from its first step, and the rows
//! of the segments before it from that step on are dropped. So each segment is
//! charted up to its *cut*, the smallest first step of the segments after it, and
//! the run's series, segment after segment, never go back in step. No offset is
//! guessed: a segment that restarts at step 0 replaces everything before it.
//!
//! The cut applies as rows are folded (see [`Stitch::row`]), so the series and
//! their exact statistics hold only what is charted; the view draws each segment's
//! series as it is, in the run's colour, and no frame does any stitching.

use super::series::Stats;

/// A run file's place on its run's step axis: where its rows are, and where a
/// later segment of the same resumed run takes over.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stitch {
    /// Step of the first complete history row.
    pub first: Option<f64>,
    /// Largest step of a complete row.
    pub last: Option<f64>,
    /// Largest step of a charted row.
    pub charted: Option<f64>,
    /// Rows at this step or later are not charted: a later segment logged them.
    pub cut: Option<f64>,
}

impl Stitch {
    /// A complete row at `step` was read: noted; whether it is charted.
    #[inline]
    pub fn row(&mut self, step: f64) -> bool {
        if self.first.is_none() {
            self.first = Some(step);
        }
        if self.last.is_none_or(|l| step > l) {
            self.last = Some(step);
        }
        if self.cut.is_some_and(|c| step >= c) {
            return false;
        }
        if self.charted.is_none_or(|l| step > l) {
            self.charted = Some(step);
        }
        true
    }

    /// Whether moving the cut to `cut` needs the file read again: rows charted
    /// that it leaves out (their points, and the exact statistics over them,
    /// cannot be taken back), or rows left out that it now keeps.
    #[must_use]
    pub fn rereads_for(&self, cut: Option<f64>) -> bool {
        let charted_past = matches!((cut, self.charted), (Some(c), Some(m)) if m >= c);
        let left_out_kept = match (self.cut, self.last) {
            (Some(old), Some(last)) if last >= old => cut.is_none_or(|c| c > old),
            _ => false,
        };
        charted_past || left_out_kept
    }
}

/// Each segment's cut, the segments in start order given their first steps (None:
/// no row yet): the smallest first step of the segments after it (None where no
/// later segment has a row).
#[must_use]
pub fn cuts(firsts: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut out = vec![None; firsts.len()];
    let mut min: Option<f64> = None;
    for (cut, first) in out.iter_mut().zip(firsts).rev() {
        *cut = min;
        if let Some(f) = *first {
            min = Some(min.map_or(f, |m| m.min(f)));
        }
    }
    out
}

/// The statistics of a run's series from those of its segments (in start order,
/// each over the points it charts): counts added, the mean weighted by them, the
/// last point the latest segment's, and of equal extremes the earliest kept. None
/// when no segment has the series.
#[must_use]
pub fn stats(parts: impl IntoIterator<Item = Stats>) -> Option<Stats> {
    let mut parts = parts.into_iter();
    let mut acc = parts.next()?;
    for s in parts {
        acc = join(acc, s);
    }
    Some(acc)
}

/// `a` then `b`.
fn join(a: Stats, b: Stats) -> Stats {
    // The mean's terms: the number of finite points.
    let finite = |s: &Stats| (s.count - s.non_finite) as f64;
    let mean = match (a.mean, b.mean) {
        (Some(x), Some(y)) => Some((x * finite(&a) + y * finite(&b)) / (finite(&a) + finite(&b))),
        (x, y) => x.or(y),
    };
    // The extreme of `a` or `b` (an exact one where it is: it orders ties of
    // its double), with its exact value.
    type Ext = (Option<(f64, f64)>, Option<i128>);
    let pick = |x: Ext, y: Ext, better: fn(f64, f64) -> bool, exact: fn(i128, i128) -> bool| match (
        x, y,
    ) {
        ((Some(p), pe), (Some(q), qe)) => {
            let won = match (pe, qe) {
                (Some(e), Some(f)) => exact(f, e),
                _ => better(q.1, p.1),
            };
            if won {
                (Some(q), qe)
            } else {
                (Some(p), pe)
            }
        }
        ((Some(p), pe), _) => (Some(p), pe),
        ((None, _), q) => q,
    };
    let (min, min_exact) = pick(
        (a.min, a.min_exact),
        (b.min, b.min_exact),
        |q, p| q < p,
        |q, p| q < p,
    );
    let (max, max_exact) = pick(
        (a.max, a.max_exact),
        (b.max, b.max_exact),
        |q, p| q > p,
        |q, p| q > p,
    );
    Stats {
        count: a.count + b.count,
        non_finite: a.non_finite + b.non_finite,
        last: b.last.or(a.last),
        min,
        max,
        mean,
        min_exact,
        max_exact,
    }
}

#[cfg(test)]
mod tests;
