//! Statistics of a group of runs' series (runs that differ only by, say, `seed`):
//! per x-bucket the mean over the members and the min–max envelope, drawn as a
//! line with a faint band around it.

use crate::store::series::Point;

/// One group's statistics over `buckets` equal x-buckets spanning `x`.
///
/// `mean`, `lo` and `hi` have the same length and the same x at each index. A
/// point with NaN y (in all three) is a gap marker: the chart breaks the line and
/// the band there.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct GroupStats {
    pub mean: Vec<Point>,
    pub lo: Vec<Point>,
    pub hi: Vec<Point>,
}

/// More buckets than a terminal has braille dot columns only costs memory.
const MAX_BUCKETS: usize = 2 * u16::MAX as usize;

/// One member's points in one bucket: how many, and their mean y.
#[derive(Clone, Copy, Default)]
struct Cell {
    n: usize,
    y: f64,
    lo: f64,
    hi: f64,
    /// An in-range point with a non-finite y fell here.
    gap: bool,
}

/// All members in one bucket.
#[derive(Clone, Copy)]
struct Acc {
    /// Members with a value here.
    members: usize,
    /// Finite points of any member here; their mean x is the bucket's x.
    points: usize,
    x: f64,
    mean: f64,
    lo: f64,
    hi: f64,
    gap: bool,
}

impl Default for Acc {
    fn default() -> Self {
        Self {
            members: 0,
            points: 0,
            x: 0.0,
            mean: 0.0,
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            gap: false,
        }
    }
}

impl Acc {
    /// One more member's value here.
    fn add(&mut self, y: f64) {
        self.members += 1;
        // Running means, divided before they are subtracted: no sum or
        // difference of large values overflows.
        let k = self.members as f64;
        self.mean += y / k - self.mean / k;
        self.lo = self.lo.min(y);
        self.hi = self.hi.max(y);
    }
}

/// `members`' statistics over `buckets` equal x-buckets spanning `x`.
///
/// A bucket's x is the mean x of the finite points of every member that fall in
/// it (so sparse data keeps its own x rather than a bucket centre). A member's
/// value in a bucket is the mean of its finite points there; where it has none
/// but its line passes (between two of its finite points, not across a NaN/Inf
/// one), its value is read from that line at the bucket's x: a run that logs
/// every 10th step still counts at the steps between, as drawn, and the mean
/// does not jump to the other runs' wherever it logged nothing. Before its first
/// point and after its last, a member does not count. Points outside `x` are
/// not bucketed (they still end a line crossing into `x`), non-finite x never.
///
/// A bucket with a member's point gives one point, with the mean, min and max of
/// the members' values (the mean clamped into [min, max] against rounding). A
/// bucket with no point gives nothing, so logging at a coarser step than the
/// buckets leaves no holes; but a stretch of buckets where members logged only
/// NaN/Inf (a real gap) gives one gap marker (NaN y at the first such bucket's
/// centre) between two points.
///
/// `x.0 == x.1` is one bucket holding the points at exactly that x; a reversed
/// range is taken in order; a non-finite range gives nothing; `buckets == 0` is
/// taken as 1, and at most 131,070 buckets are used. Memory is O(buckets), time
/// O(points + members × buckets).
pub(crate) fn group_stats(members: &[&[Point]], x: (f64, f64), buckets: usize) -> GroupStats {
    let (x0, x1) = if x.0 <= x.1 { x } else { (x.1, x.0) };
    if !x0.is_finite() || !x1.is_finite() || members.is_empty() {
        return GroupStats::default();
    }
    let n = if x1 > x0 {
        buckets.clamp(1, MAX_BUCKETS)
    } else {
        1
    };
    let bucket = crate::store::series::column_of(x0, x1, n);
    let in_range = |px: f64| px >= x0 && px <= x1;
    let mut acc = vec![Acc::default(); n];
    for &(px, py) in members.iter().flat_map(|p| p.iter()) {
        if in_range(px) && py.is_finite() {
            let a = &mut acc[bucket(px)];
            a.points += 1;
            let k = a.points as f64;
            a.x += px / k - a.x / k;
        }
    }
    let mut cells = vec![Cell::default(); n];
    let mut touched: Vec<usize> = Vec::with_capacity(n);
    for points in members {
        for &(px, py) in *points {
            if !in_range(px) {
                continue;
            }
            let b = bucket(px);
            let c = &mut cells[b];
            if c.n == 0 && !c.gap {
                touched.push(b);
            }
            if !py.is_finite() {
                c.gap = true;
                continue;
            }
            c.n += 1;
            let k = c.n as f64;
            c.y += py / k - c.y / k;
            (c.lo, c.hi) = if c.n == 1 {
                (py, py)
            } else {
                (c.lo.min(py), c.hi.max(py))
            };
        }
        along_line(points, (x0, x1), &bucket, &cells, &mut acc);
        for b in touched.drain(..) {
            let c = std::mem::take(&mut cells[b]);
            if c.n == 0 {
                acc[b].gap = true;
                continue;
            }
            // Kept inside the member's own range against rounding (a mean of three
            // 0.1s) and overflow (a running mean of ±f64::MAX).
            acc[b].add(c.y.max(c.lo).min(c.hi));
        }
    }
    emit(&acc, (x0, x1))
}

/// A member's values read from its line (`points`, in their order) in the
/// buckets between two of its finite points where it has no point of its own
/// (`cells`) but another member has (the bucket's x is known). Only where the
/// line moves right past the buckets it already passed, so a member costs at
/// most one walk over the buckets whatever its x does.
fn along_line(
    points: &[Point],
    (x0, x1): (f64, f64),
    bucket: &impl Fn(f64) -> usize,
    cells: &[Cell],
    acc: &mut [Acc],
) {
    let n = acc.len();
    let mut prev: Option<Point> = None;
    let mut reached = 0;
    for &(px, py) in points {
        if !px.is_finite() {
            continue;
        }
        if !py.is_finite() {
            // The drawn line breaks at a NaN/Inf.
            prev = None;
            continue;
        }
        if let Some((ax, ay)) = prev.filter(|p| px > p.0) {
            let from = if ax < x0 { 0 } else { bucket(ax) + 1 };
            let to = if px > x1 { n } else { bucket(px) };
            for b in from.max(reached)..to {
                let a = &mut acc[b];
                if cells[b].n > 0 || cells[b].gap || a.points == 0 {
                    continue;
                }
                // Halves keep the spans finite for x near ±f64::MAX.
                let f = ((a.x * 0.5 - ax * 0.5) / (px * 0.5 - ax * 0.5)).clamp(0.0, 1.0);
                let y = (ay * (1.0 - f) + py * f).clamp(ay.min(py), ay.max(py));
                a.add(y);
            }
            reached = reached.max(to);
        }
        prev = Some((px, py));
    }
}

/// The points of the buckets `acc` over `x`, with a gap marker for a stretch of
/// buckets that held only NaN/Inf.
fn emit(acc: &[Acc], (x0, x1): (f64, f64)) -> GroupStats {
    let n = acc.len();
    // A bucket's centre, for its gap marker (halves as `column_of` takes them).
    let (h0, span) = (x0 * 0.5, x1 * 0.5 - x0 * 0.5);
    let nf = n as f64;
    let mut out = GroupStats {
        mean: Vec::with_capacity(n),
        lo: Vec::with_capacity(n),
        hi: Vec::with_capacity(n),
    };
    // A gap marker waits for the next point so none leads, trails or repeats.
    let mut gap_at: Option<f64> = None;
    for (b, a) in acc.iter().enumerate() {
        if a.members == 0 {
            if a.gap && gap_at.is_none() && !out.mean.is_empty() {
                let centre = (h0 + span * ((b as f64 + 0.5) / nf)) * 2.0;
                gap_at = Some(centre);
            }
            continue;
        }
        if let Some(g) = gap_at.take() {
            out.mean.push((g, f64::NAN));
            out.lo.push((g, f64::NAN));
            out.hi.push((g, f64::NAN));
        }
        let px = a.x.max(x0).min(x1);
        out.mean.push((px, a.mean.max(a.lo).min(a.hi)));
        out.lo.push((px, a.lo));
        out.hi.push((px, a.hi));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    fn assert_points(got: &[Point], want: &[Point]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            let same_y = (g.1.is_nan() && w.1.is_nan()) || close(g.1, w.1);
            assert!(close(g.0, w.0) && same_y, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn two_members_on_different_x_grids() {
        // Buckets of width 1 over [0, 4): a logs at 0, 1, 2, 3; b at 0.5, 2.5.
        let a: &[Point] = &[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)];
        let b: &[Point] = &[(0.5, 3.0), (2.5, 1.0)];
        let s = group_stats(&[a, b], (0.0, 4.0), 4);
        // bucket 0: a=1 (x 0), b=3 (x 0.5) → x 0.25, mean 2, lo 1, hi 3
        // bucket 1: a=2 at x 1, b's line there (3 at 0.5 to 1 at 2.5) 2.5
        // bucket 2: a=3 (x 2), b=1 (x 2.5); bucket 3: a=4, past b's last point
        assert_points(
            &s.mean,
            &[(0.25, 2.0), (1.0, 2.25), (2.25, 2.0), (3.0, 4.0)],
        );
        assert_points(&s.lo, &[(0.25, 1.0), (1.0, 2.0), (2.25, 1.0), (3.0, 4.0)]);
        assert_points(&s.hi, &[(0.25, 3.0), (1.0, 2.5), (2.25, 3.0), (3.0, 4.0)]);
    }

    #[test]
    fn a_sparser_member_counts_along_its_line_not_only_where_it_logged() {
        // a logs 0 at every step 0..=29, b logs 10 at every 10th step 0..=20;
        // one bucket per step. The mean is 5 wherever b's line runs (0..=20),
        // not 5 at 0, 10, 20 and 0 between; past b's last point a is alone.
        let a: Vec<Point> = (0..30).map(|s| (f64::from(s), 0.0)).collect();
        let b: Vec<Point> = (0..3).map(|s| (f64::from(s * 10), 10.0)).collect();
        let s = group_stats(&[&a, &b], (0.0, 29.0), 30);
        assert_eq!(s.mean.len(), 30);
        for (i, ((m, l), h)) in s.mean.iter().zip(&s.lo).zip(&s.hi).enumerate() {
            let (want, lo, hi) = if i <= 20 {
                (5.0, 0.0, 10.0)
            } else {
                (0.0, 0.0, 0.0)
            };
            assert!(close(m.0, i as f64) && close(m.1, want), "{i}: {m:?}");
            assert!(close(l.1, lo) && close(h.1, hi), "{i}: {l:?} {h:?}");
        }
        // Read from the line at the bucket's x: b rising from 0 to 10 over 0..10.
        let c: &[Point] = &[(0.0, 0.0), (10.0, 10.0)];
        let s = group_stats(&[&a[..11], c], (0.0, 10.0), 11);
        assert_points(&s.mean[3..4], &[(3.0, 1.5)]);
        // A NaN/Inf between two points breaks the line: no value read across it.
        let d: &[Point] = &[(0.0, 10.0), (5.0, f64::NAN), (10.0, 10.0)];
        let s = group_stats(&[&a[..11], d], (0.0, 10.0), 11);
        assert_points(&s.mean[2..3], &[(2.0, 0.0)]);
        assert_points(&s.mean[..1], &[(0.0, 5.0)]);
    }

    #[test]
    fn a_member_with_several_points_in_a_bucket_counts_once() {
        // a has three points in bucket 0 (mean 2), b one (6): the group mean is
        // the mean of the members' values (4), not of the four points (3); the x
        // is the mean of the four points' x.
        let a: &[Point] = &[(0.0, 1.0), (0.2, 2.0), (0.4, 3.0)];
        let b: &[Point] = &[(0.6, 6.0)];
        let s = group_stats(&[a, b], (0.0, 2.0), 2);
        assert_points(&s.mean, &[(0.3, 4.0)]);
        assert_points(&s.lo, &[(0.3, 2.0)]);
        assert_points(&s.hi, &[(0.3, 6.0)]);
    }

    #[test]
    fn three_members() {
        let a: &[Point] = &[(0.0, 1.0), (10.0, 5.0)];
        let b: &[Point] = &[(0.0, 4.0), (10.0, 5.0)];
        let c: &[Point] = &[(0.0, 7.0), (10.0, 8.0)];
        let s = group_stats(&[a, b, c], (0.0, 10.0), 2);
        // 10.0 is the right end: it belongs to the last bucket.
        assert_points(&s.mean, &[(0.0, 4.0), (10.0, 6.0)]);
        assert_points(&s.lo, &[(0.0, 1.0), (10.0, 5.0)]);
        assert_points(&s.hi, &[(0.0, 7.0), (10.0, 8.0)]);
    }

    #[test]
    fn a_nan_only_stretch_is_one_gap_marker_and_an_empty_one_is_bridged() {
        // Buckets of width 1 over [0, 6). Bucket 1 and 2: only NaN/Inf → one gap
        // marker at bucket 1's centre. Bucket 4: nothing logged → no point.
        let a: &[Point] = &[
            (0.0, 1.0),
            (1.0, f64::NAN),
            (2.0, f64::INFINITY),
            (3.0, 2.0),
            (5.0, 3.0),
        ];
        let s = group_stats(&[a], (0.0, 6.0), 6);
        let nan = f64::NAN;
        assert_points(&s.mean, &[(0.0, 1.0), (1.5, nan), (3.0, 2.0), (5.0, 3.0)]);
        assert_points(&s.lo, &[(0.0, 1.0), (1.5, nan), (3.0, 2.0), (5.0, 3.0)]);
        assert_points(&s.hi, &[(0.0, 1.0), (1.5, nan), (3.0, 2.0), (5.0, 3.0)]);
        // A NaN beside another member's value is no gap: b's value fills bucket 1
        // (a's NaN does not contribute); bucket 2 is still a's Inf alone.
        let b: &[Point] = &[(1.0, 9.0)];
        let s = group_stats(&[a, b], (0.0, 6.0), 6);
        assert_points(
            &s.mean,
            &[(0.0, 1.0), (1.0, 9.0), (2.5, nan), (3.0, 2.0), (5.0, 3.0)],
        );
        assert_points(
            &s.lo,
            &[(0.0, 1.0), (1.0, 9.0), (2.5, nan), (3.0, 2.0), (5.0, 3.0)],
        );
        // A NaN beside a finite point of the same member in a bucket is ignored.
        let c: &[Point] = &[(0.0, f64::NAN), (0.5, 4.0)];
        let s = group_stats(&[c], (0.0, 6.0), 6);
        assert_points(&s.mean, &[(0.5, 4.0)]);
        // No gap marker leads or trails.
        let d: &[Point] = &[(0.0, f64::NAN), (3.0, 1.0), (5.0, f64::NAN)];
        let s = group_stats(&[d], (0.0, 6.0), 6);
        assert_points(&s.mean, &[(3.0, 1.0)]);
    }

    #[test]
    fn points_outside_the_range_and_non_finite_x_are_ignored() {
        let a: &[Point] = &[
            (-1.0, 100.0),
            (0.0, 1.0),
            (f64::NAN, 50.0),
            (f64::INFINITY, 50.0),
            (2.0, 3.0),
            (2.1, 100.0),
        ];
        let s = group_stats(&[a], (0.0, 2.0), 2);
        assert_points(&s.mean, &[(0.0, 1.0), (2.0, 3.0)]);
        assert_points(&s.hi, &[(0.0, 1.0), (2.0, 3.0)]);
    }

    #[test]
    #[allow(
        clippy::manual_midpoint,
        reason = "the expected value, written as it is worked out"
    )]
    fn degenerate_ranges_and_bucket_counts() {
        let a: &[Point] = &[(5.0, 1.0), (5.0, 3.0), (6.0, 10.0)];
        let b: &[Point] = &[(5.0, 5.0)];
        // x.0 == x.1: one bucket of the points at exactly that x.
        let s = group_stats(&[a, b], (5.0, 5.0), 100);
        assert_points(&s.mean, &[(5.0, 3.5)]);
        assert_points(&s.lo, &[(5.0, 2.0)]);
        assert_points(&s.hi, &[(5.0, 5.0)]);
        // buckets == 0 is one bucket.
        let s = group_stats(&[a, b], (5.0, 6.0), 0);
        // a: mean of 1, 3, 10 = 14/3 at x 16/3; b: 5 at x 5 → x (16 + 5) / 4
        assert_points(&s.mean, &[(5.25, (14.0 / 3.0 + 5.0) / 2.0)]);
        // a reversed range is the same range
        assert_eq!(
            group_stats(&[a, b], (6.0, 5.0), 0),
            group_stats(&[a, b], (5.0, 6.0), 0)
        );
        // empty members, empty series, a non-finite range: nothing, no panic
        assert_eq!(group_stats(&[], (0.0, 1.0), 10), GroupStats::default());
        assert_eq!(group_stats(&[&[]], (0.0, 1.0), 10), GroupStats::default());
        assert_eq!(
            group_stats(&[a], (0.0, f64::NAN), 10),
            GroupStats::default()
        );
        assert_eq!(
            group_stats(&[a], (f64::NEG_INFINITY, 10.0), 10),
            GroupStats::default()
        );
        // a huge bucket count is capped, not allocated
        let s = group_stats(&[a], (5.0, 6.0), usize::MAX);
        assert_points(&s.mean, &[(5.0, 2.0), (6.0, 10.0)]);
        // values near ±f64::MAX average without overflowing, within a member and
        // across members
        let huge: &[Point] = &[(5.0, f64::MAX), (5.0, -f64::MAX)];
        let s = group_stats(&[huge], (5.0, 5.0), 1);
        assert_points(&s.mean, &[(5.0, 0.0)]);
        let (up, down): (&[Point], &[Point]) = (&[(5.0, f64::MAX)], &[(5.0, -f64::MAX)]);
        let s = group_stats(&[up, down], (5.0, 5.0), 1);
        assert_points(&s.mean, &[(5.0, 0.0)]);
        assert_points(&s.lo, &[(5.0, -f64::MAX)]);
        // a range spanning most of f64 still buckets
        let big: &[Point] = &[(-f64::MAX, 1.0), (f64::MAX, 2.0)];
        let s = group_stats(&[big], (-f64::MAX, f64::MAX), 2);
        assert_points(&s.mean, &[(-f64::MAX, 1.0), (f64::MAX, 2.0)]);
    }

    #[test]
    fn a_single_member_is_its_own_envelope() {
        let a: &[Point] = &[(0.0, 1.0), (0.5, 3.0), (1.0, -2.0)];
        let s = group_stats(&[a], (0.0, 1.0), 2);
        // bucket 0: 1; bucket 1: 3 and -2 → 0.5 at x 0.75
        assert_points(&s.mean, &[(0.0, 1.0), (0.75, 0.5)]);
        assert_eq!(s.mean, s.lo);
        assert_eq!(s.mean, s.hi);
    }

    use crate::decode::test_rng::Rng;

    #[test]
    #[allow(
        clippy::range_plus_one,
        reason = "1 to 5 members, as the generator reads"
    )]
    fn lo_mean_hi_are_ordered_and_share_x_everywhere() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..300 {
            let members: Vec<Vec<Point>> = (0..1 + rng.next() % 5)
                .map(|_| {
                    (0..rng.next() % 40)
                        .map(|_| {
                            let x = rng.unit() * 120.0 - 10.0;
                            let y = match rng.next() % 12 {
                                0 => f64::NAN,
                                1 => f64::INFINITY,
                                // repeated values: a mean of equal values must not
                                // round past them
                                2 => 0.1,
                                3 => 1e300,
                                4 => f64::MAX,
                                5 => -f64::MAX,
                                _ => rng.unit() * 2e3 - 1e3,
                            };
                            (x, y)
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[Point]> = members.iter().map(Vec::as_slice).collect();
            let buckets = (rng.next() % 64) as usize;
            let s = group_stats(&refs, (0.0, 100.0), buckets);
            assert_eq!(s.mean.len(), s.lo.len(), "case {case}");
            assert_eq!(s.mean.len(), s.hi.len(), "case {case}");
            assert!(s.mean.len() <= buckets.max(1), "case {case}");
            let mut prev_x = f64::NEG_INFINITY;
            for ((m, l), h) in s.mean.iter().zip(&s.lo).zip(&s.hi) {
                assert!(m.0 == l.0 && m.0 == h.0, "case {case}: {m:?} {l:?} {h:?}");
                assert!((0.0..=100.0).contains(&m.0), "case {case}: {m:?}");
                assert!(m.0 >= prev_x, "case {case}: x out of order");
                prev_x = m.0;
                if m.1.is_nan() {
                    assert!(l.1.is_nan() && h.1.is_nan(), "case {case}");
                    continue;
                }
                assert!(
                    l.1 <= m.1 && m.1 <= h.1 && l.1.is_finite() && h.1.is_finite(),
                    "case {case}: {l:?} <= {m:?} <= {h:?}"
                );
            }
        }
    }
}
