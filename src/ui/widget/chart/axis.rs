//! The y axis: its top and bottom labels, and round ticks between them where the
//! rows allow, every label written with the same scale and decimals.

use crate::ui::widget::format::{self, AxisScale};
use crate::ui::widget::unit::Unit;

/// Rows from one label to the next, at the least.
pub(super) const MIN_GAP: i64 = 3;

/// Significant digits a label shows at most: past them a series is flat to the
/// eye (41.0425800001% against 41.0425800009% says nothing).
const MOST_DIGITS: usize = 6;

/// The labels of one y axis.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct YAxis {
    /// (plot row from the top, label): the top end first, then the bottom end
    /// (absent when it would read the same as the top), then the ticks.
    pub labels: Vec<(u16, String)>,
    /// The rows of the ticks between the ends, top down (where guides go).
    pub ticks: Vec<u16>,
    /// The range the plot draws (log10 values on a log axis) where it is not the
    /// one asked for: a linear axis moves its ends out to the values their labels
    /// write, so that a label is the value on its row (`0.0`, not `0.1` for 0.0831).
    pub range: Option<(f64, f64)>,
}

/// Maps an axis value (log10 of the value on a log axis) to its plot row, as the
/// raster places a dot: `rows * 4` dot rows over `lo..=hi`.
#[derive(Clone, Copy)]
struct Rows {
    lo: f64,
    hi: f64,
    rows: u16,
}

impl Rows {
    fn row(self, v: f64) -> i64 {
        let dots = f64::from(self.rows) * 4.0 - 1.0;
        let py = ((self.hi - v) * dots / (self.hi - self.lo)).round() as i64;
        py.div_euclid(4)
    }

    fn last(self) -> i64 {
        i64::from(self.rows) - 1
    }

    /// A tick at `row` keeps [`MIN_GAP`] rows from both ends.
    fn inside(self, row: i64) -> bool {
        row >= MIN_GAP && row <= self.last() - MIN_GAP
    }
}

/// The smallest 1, 2 or 5 × 10ᵏ at least `raw` (positive, finite).
pub(super) fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// Decimals a step of 1, 2 or 5 × 10ᵏ needs (0 for k ≥ 0).
fn step_decimals(step: f64) -> usize {
    let k = (step.log10() + 1e-9).floor() as i64;
    usize::try_from(-k).unwrap_or(0)
}

/// Decimals that give `v` (in display units) `sig` significant digits.
fn sig_decimals(v: f64, sig: usize) -> usize {
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    let mag = v.abs().log10().floor() as i64;
    usize::try_from(i64::try_from(sig).unwrap_or(3) - 1 - mag).unwrap_or(0)
}

/// The y axis of a plot `rows` high over `lo..hi` (log10 values when `log`), in
/// unit `unit`.
#[cfg(test)]
pub(super) fn y_axis(lo: f64, hi: f64, rows: u16, log: bool, unit: Unit) -> YAxis {
    y_axis_within(lo, hi, rows, log, unit, usize::MAX)
}

/// [`y_axis`] whose labels are at most `width` characters where they can be: a
/// linear axis gives up decimals (down to one label saying the value) rather
/// than have its labels cut.
pub(super) fn y_axis_within(
    lo: f64,
    hi: f64,
    rows: u16,
    log: bool,
    unit: Unit,
    width: usize,
) -> YAxis {
    if rows == 0 || !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return YAxis::default();
    }
    let at = Rows { lo, hi, rows };
    if log && hi - lo >= 1.0 {
        return log_axis(at, unit);
    }
    // A log axis within a decade: round log values where one falls inside, else
    // ticked as the linear one of its values.
    if log {
        short_log_axis(at, unit)
            .unwrap_or_else(|| linear_axis(10f64.powf(lo), 10f64.powf(hi), rows, unit, true, width))
    } else {
        linear_axis(lo, hi, rows, unit, false, width)
    }
}

/// `lo..hi` with its ends moved out to the nearest values written with `decimals`
/// decimals in `scale` (`0.0831..0.4837` with one: `0.0..0.5`); None where the
/// values are past what a float counts in those steps.
fn round_out(lo: f64, hi: f64, scale: &AxisScale, decimals: usize) -> Option<(f64, f64)> {
    let ten_d = 10f64.powi(i32::try_from(decimals).ok()?);
    // In steps of the last decimal; a value already on a step stays there (0.3 / 0.1
    // is 2.9999999999999996).
    let slack = |steps: f64| steps.abs().max(1.0) * 1e-9;
    let low = lo / scale.div * ten_d;
    let high = hi / scale.div * ten_d;
    let (low, high) = ((low + slack(low)).floor(), (high - slack(high)).ceil());
    let counted = low.is_finite() && high.is_finite() && high.abs().max(low.abs()) < 2f64.powi(52);
    if !counted || high <= low {
        return None;
    }
    // k / 10ᵈ, not k · 10⁻ᵈ: the decimal that a label writes.
    Some((low / ten_d * scale.div, high / ten_d * scale.div))
}
/// `lo..hi` with its ends moved out to multiples of `step` (in display units of
/// `scale`, a 1, 2 or 5 × 10ᵏ), so that the axis starts and ends on ticks of its
/// own step (`0.953..0.979` in steps of 0.005: `0.950..0.980`); None where the
/// values are past what a float counts in those steps.
fn round_to_step(lo: f64, hi: f64, scale: &AxisScale, step: f64) -> Option<(f64, f64)> {
    let slack = |steps: f64| steps.abs().max(1.0) * 1e-9;
    let (low, high) = (lo / scale.div / step, hi / scale.div / step);
    let (low, high) = ((low + slack(low)).floor(), (high - slack(high)).ceil());
    let counted = low.is_finite() && high.is_finite() && high.abs().max(low.abs()) < 2f64.powi(52);
    if !counted || high <= low {
        return None;
    }
    // k · step written as the decimal its label writes (3 × 0.1 is 0.30000000000000004).
    let ten_d = 10f64.powi(i32::try_from(step_decimals(step)).ok()?);
    // `+ 0.0`: a top end of -0 is written `0`.
    let at = |k: f64| (k * step * ten_d).round() / ten_d * scale.div + 0.0;
    Some((at(low), at(high)))
}

/// How far (a share of the data's range) an axis end may go out to reach its
/// tick step; further, it stays at the data, rounded to its last decimal.
const STEP_END_ROOM: f64 = 0.25;

/// The largest 1, 2 or 5 × 10ᵏ at most `v` (positive, finite): where a log axis
/// whose low end would round to zero starts instead.
fn nice_floor(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s <= v * (1.0 + 1e-9))
        .unwrap_or(mag / 2.0)
}

/// `lo..hi` rounded out on a step's multiples (`step`) or else to `decimals`
/// decimals, with the decimals its ends are written with. A log axis cannot reach
/// zero: where its low end would, it goes down to a round 1, 2 or 5 × 10ᵏ instead.
fn round_ends(
    (lo, hi): (f64, f64),
    scale: &AxisScale,
    step: Option<f64>,
    decimals: usize,
    log: bool,
) -> Option<(f64, f64, usize)> {
    let plain = round_out(lo, hi, scale, decimals);
    let (low, high, d) = match step.and_then(|st| Some((round_to_step(lo, hi, scale, st)?, st))) {
        Some(((l, h), st)) => {
            // An end goes out to the step only where that costs little of the
            // plot's height: on a short chart a step of 0.5 over data up to
            // 1.1 would leave a third of it empty (W&B's own charts end at the
            // data). Such an end is rounded to its last decimal instead.
            let room = (hi - lo) * STEP_END_ROOM;
            let (pl, ph) = plain.unwrap_or((lo, hi));
            let (l, lp) = if lo - l <= room {
                (l, false)
            } else {
                (pl, true)
            };
            let (h, hp) = if h - hi <= room {
                (h, false)
            } else {
                (ph, true)
            };
            let d = if lp || hp {
                decimals.max(step_decimals(st))
            } else {
                step_decimals(st)
            };
            (l, h, d)
        }
        None => {
            let (l, h) = plain?;
            (l, h, decimals)
        }
    };
    if log && low <= 0.0 {
        if lo <= 0.0 {
            return Some((lo, high, d));
        }
        let floor = nice_floor(lo / scale.div);
        return Some((floor * scale.div, high, d.max(step_decimals(floor))));
    }
    Some((low, high, d))
}

/// The ends `lo..hi` of an axis on `rows` rows are rounded out to (in `scale`,
/// for labels of at most `most` decimals over values up to `top`), its tick step
/// and the decimals its ends are written with (None: too flat to round).
///
/// Where ticks fit, the ends go out to the step's multiples, so that the axis
/// reads in even steps from end to end (`0.950..0.980` by 0.005, not
/// `0.953..0.979`). That widens the range, which can call for a wider step: the
/// data is rounded out again with that one until the step holds (by the second
/// round). Where no tick would stand between ends rounded to their last decimal
/// and the step's multiples stand none either or widen the range by more than
/// half (a short chart), the ends are rounded to their last decimal instead: two
/// labels show no step, and the step's multiples would only shrink the plot
/// (0..59 on 8 rows drawn over 0..100).
fn round_axis(
    (lo0, hi0): (f64, f64),
    rows: u16,
    scale: &AxisScale,
    (top, most): (f64, usize),
    log: bool,
) -> (f64, f64, Option<f64>, Option<usize>) {
    let last = i64::from(rows) - 1;
    let (mut lo, mut hi) = (lo0, hi0);
    let mut step = tick_step(lo, hi, last, scale, most);
    let mut exact = None;
    for _ in 0..4 {
        let Some(ends) = ends_decimals(hi0 - lo0, step, scale, top, most) else {
            break;
        };
        let Some((low, high, ends)) = round_ends((lo0, hi0), scale, step, ends, log) else {
            break;
        };
        (lo, hi) = (low, high);
        exact = Some(ends);
        let wider = tick_step(lo, hi, last, scale, most);
        if step.is_none() || wider <= step {
            break;
        }
        step = wider;
    }
    let ticks_in = |lo: f64, hi: f64, s: f64| {
        let fwd = |v: f64| if log { v.log10() } else { v };
        let at = Rows {
            lo: fwd(lo),
            hi: fwd(hi),
            rows,
        };
        linear_ticks(lo, hi, s * scale.div, at, &|v| at.row(fwd(v))).len()
    };
    let costly = hi - lo > 1.5 * (hi0 - lo0);
    if let Some(s) = step.filter(|&s| exact.is_some() && (costly || ticks_in(lo, hi, s) == 0)) {
        let plain = ends_decimals(hi0 - lo0, step, scale, top, most)
            .and_then(|d| round_ends((lo0, hi0), scale, None, d, log));
        if let Some((low, high, d)) = plain.filter(|p| ticks_in(p.0, p.1, s) == 0) {
            return (low, high, step, Some(d));
        }
    }
    (lo, hi, step, exact)
}

/// The tick step (in display units) of `lo..hi` on rows `0..=last`: the value
/// [`MIN_GAP`] rows cover, rounded up to 1, 2 or 5 × 10ᵏ; None where too few rows
/// or a step below what a label shows (9e15 ± 18).
fn tick_step(lo: f64, hi: f64, last: i64, scale: &AxisScale, most: usize) -> Option<f64> {
    let raw = (hi - lo) * MIN_GAP as f64 / last.max(1) as f64 / scale.div;
    (last >= 2 * MIN_GAP && raw.is_finite() && raw > 0.0)
        .then(|| nice_step(raw))
        .filter(|&s| step_decimals(s) <= most)
}

/// Decimals the ends of a `span` wide axis are rounded out to: the tick step's
/// (without ticks, three significant digits of `top`), more where one step of the
/// last decimal is over a quarter of the span, so that rounding out widens the axis
/// by half its span at the most; None where even `most` decimals are too coarse.
fn ends_decimals(
    span: f64,
    step: Option<f64>,
    scale: &AxisScale,
    top: f64,
    most: usize,
) -> Option<usize> {
    let span = span / scale.div;
    let digit = |d: usize| 10f64.powi(-i32::try_from(d).unwrap_or(0));
    let mut d = step.map_or_else(|| sig_decimals(top, 3), step_decimals);
    while d < most && digit(d) * 4.0 > span {
        d += 1;
    }
    (digit(d) * 4.0 <= span).then_some(d)
}

/// Round ticks `step` apart strictly inside `lo..hi`, at rows [`MIN_GAP`] from the
/// ends and from each other: (row, value).
fn linear_ticks(
    lo: f64,
    hi: f64,
    step: f64,
    at: Rows,
    place: &dyn Fn(f64) -> i64,
) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = Vec::new();
    let first = (lo / step).ceil();
    // Bounded: no more ticks than rows, and far from zero k + 1 can round to k.
    let mut k = first;
    for _ in 0..=at.rows {
        let v = k * step;
        if v > hi {
            break;
        }
        let r = place(v);
        let clear = out.last().is_none_or(|&(p, _)| (p - r).abs() >= MIN_GAP);
        if v > lo && v < hi && at.inside(r) && clear {
            out.push((r, if v == 0.0 { 0.0 } else { v }));
        }
        k += 1.0;
    }
    out.reverse();
    out
}

/// The linear axis of values `lo..hi` on `rows` rows (placed at their log10 on a
/// log axis within a decade). Its ends move out to the nearest values its labels
/// write with the decimals of the tick step (without ticks: three significant
/// digits; more where one step of the last decimal is over a quarter of the range).
fn linear_axis(lo: f64, hi: f64, rows: u16, unit: Unit, log: bool, width: usize) -> YAxis {
    linear_axis_at(
        lo,
        hi,
        rows,
        (unit, lo.abs().max(hi.abs())),
        log,
        width,
        true,
    )
}

/// [`linear_axis`] written in the scale of values up to `scale_of` (in `unit`).
/// Rounded out, the ends can pass into the next scale (9.9e15 up to 10.0e15): the
/// axis is made again in the scale of its rounded ends (`again`), so no label
/// reads `10.0e15` or `1000k`.
fn linear_axis_at(
    lo: f64,
    hi: f64,
    rows: u16,
    (unit, scale_of): (Unit, f64),
    log: bool,
    width: usize,
    again: bool,
) -> YAxis {
    let (lo0, hi0) = (lo, hi);
    let scale = AxisScale::new(unit, scale_of);
    let last = i64::from(rows) - 1;
    let top = hi.abs().max(lo.abs()) / scale.div;
    let most = sig_decimals(top, MOST_DIGITS).max(sig_decimals(top, 3));
    let (lo, hi, step, exact) = round_axis((lo, hi), rows, &scale, (top, most), log);
    if again {
        let ends = AxisScale::new(unit, lo.abs().max(hi.abs()));
        if ends.div != scale.div {
            let max = lo.abs().max(hi.abs());
            return linear_axis_at(lo0, hi0, rows, (unit, max), log, width, false);
        }
    }
    let fwd = |v: f64| if log { v.log10() } else { v };
    let at = Rows {
        lo: fwd(lo),
        hi: fwd(hi),
        rows,
    };
    let place = |v: f64| at.row(fwd(v));
    let ticks = step.map_or_else(Vec::new, |s| {
        linear_ticks(lo, hi, s * scale.div, at, &place)
    });
    let tick_decimals = step.filter(|_| !ticks.is_empty()).map(step_decimals);
    let mut decimals = match (exact, tick_decimals) {
        (Some(e), t) => e.max(t.unwrap_or(0)),
        (None, Some(t)) => t,
        (None, None) => sig_decimals(top, 3),
    };
    let values = |d: usize| -> Vec<String> {
        std::iter::once(hi)
            .chain(ticks.iter().map(|t| t.1))
            .chain(std::iter::once(lo))
            .map(|v| scale.label(v, d))
            .collect()
    };
    // Without ticks, trailing zeros every label has go (`59`, `0`; not `59.0`).
    if ticks.is_empty() {
        while decimals > 0 && values(decimals).iter().all(|l| ends_in_zero(l)) {
            decimals -= 1;
        }
    }
    // More decimals until neighbours differ (13.31% / 13.34%).
    let distinct = |l: &[String]| l.windows(2).all(|w| w[0] != w[1]);
    let mut d = decimals;
    while d < most && !distinct(&values(d)) {
        d += 1;
    }
    let fits = |l: &[String]| l.iter().all(|s| s.chars().count() <= width);
    let mut labels = values(d);
    // Too wide for the room: fewer decimals while the labels still differ (a label
    // cut in its unit, `22.9418G…`, says less than `22.942GiB`).
    while !fits(&labels) && d > 0 && distinct(&values(d - 1)) {
        d -= 1;
        labels = values(d);
    }
    let range = Some((at.lo, at.hi));
    if !distinct(&labels) || !fits(&labels) {
        // Nearly flat, or too fine for the room: the labels cannot tell the values
        // apart, so one says it (with four digits, as a shown value, fewer where
        // the room is short).
        let mut sig = 4;
        let mut one = scale.label(hi, sig_decimals(top, sig));
        while one.chars().count() > width && sig > 1 {
            sig -= 1;
            one = scale.label(hi, sig_decimals(top, sig));
        }
        return YAxis {
            labels: vec![(0, one)],
            ticks: Vec::new(),
            range,
        };
    }
    YAxis {
        range,
        ..placed(&labels, &ticks, u16::try_from(last).unwrap_or(0))
    }
}

/// Whether the number in `label` ends in a `0` after its decimal point.
fn ends_in_zero(label: &str) -> bool {
    let num: String = label
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
        .collect();
    num.contains('.') && num.ends_with('0') || !num.contains('.') && num == "0"
}

/// A log axis over at least one decade: ticks at powers of 10 (every 2nd, 5th,
/// ... decade where rows are few), and at 2× and 5× where the rows allow.
fn log_axis(at: Rows, unit: Unit) -> YAxis {
    let (lo, hi) = log_ends(at.lo, at.hi, unit, &[1.0, 2.0, 5.0]);
    let at = Rows {
        lo,
        hi,
        rows: at.rows,
    };
    let raw = (hi - lo) * MIN_GAP as f64 / at.last().max(1) as f64;
    let step = nice_step(raw).max(1.0);
    let mut ticks: Vec<(i64, f64)> = Vec::new();
    if at.last() >= 2 * MIN_GAP {
        // Decades k·step, and (with a one-decade step) 2× and 5× when every kept
        // tick stays MIN_GAP rows from the next.
        let sets: &[&[f64]] = if step <= 1.0 {
            &[&[1.0, 2.0, 5.0], &[1.0, 5.0], &[1.0]]
        } else {
            &[&[1.0]]
        };
        for set in sets {
            let mut cand = log_candidates(lo, hi, step, set, unit, at.rows);
            cand.sort_by(|a, b| a.1.total_cmp(&b.1));
            // (row, value)
            let mut cand: Vec<(i64, f64)> = cand
                .into_iter()
                .filter(|&(_, e)| e > lo && e < hi)
                .map(|(v, e)| (at.row(e), v))
                .collect();
            let spaced = cand.windows(2).all(|w| (w[0].0 - w[1].0).abs() >= MIN_GAP);
            cand.retain(|&(r, _)| at.inside(r));
            if spaced || set.len() == 1 {
                ticks = cand;
                break;
            }
        }
        // Thinned decades could still crowd each other through rounding.
        let mut kept: Vec<(i64, f64)> = Vec::new();
        for t in ticks {
            if kept.last().is_none_or(|p| (p.0 - t.0).abs() >= MIN_GAP) {
                kept.push(t);
            }
        }
        ticks = kept;
        ticks.reverse();
    }
    log_labels(at, &ticks, unit)
}

/// The mantissas a log axis under a decade is ticked at, in the order they are
/// given room: 1, then 2 and 5 (the axis over decades' ticks), then the other
/// single digits (the minor ticks of a log scale).
const SHORT_LOG_TIERS: [&[f64]; 3] = [&[1.0], &[2.0, 5.0], &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0]];

/// A log axis over less than a decade, with round ends and at least one round
/// tick between them: 1, 2 or 5 × 10ᵏ (0.197..1.78 reads `2 1 0.5 0.2 0.1`), else
/// any single digit × 10ᵏ (0.020..0.042 reads `0.05 0.04 0.03 0.02`). None where
/// neither has a tick inside the range, or the ends would leave the data under
/// half the axis (0.0420..0.0425): the caller ticks it as linear values.
fn short_log_axis(at: Rows, unit: Unit) -> Option<YAxis> {
    let room = at.last() >= 2 * MIN_GAP;
    for tiers in [&SHORT_LOG_TIERS[..2], &SHORT_LOG_TIERS[..]] {
        let set: Vec<f64> = tiers.iter().flat_map(|t| t.iter().copied()).collect();
        let (lo, hi) = log_ends(at.lo, at.hi, unit, &set);
        if hi <= lo || at.hi - at.lo < 0.5 * (hi - lo) {
            continue;
        }
        let r = Rows {
            lo,
            hi,
            rows: at.rows,
        };
        // The rounder mantissas first, each kept where it is MIN_GAP rows from
        // the ends and from every tick kept.
        let mut ticks: Vec<(i64, f64)> = Vec::new();
        for tier in tiers {
            for (v, e) in log_candidates(lo, hi, 1.0, tier, unit, at.rows) {
                let row = r.row(e);
                let clear = ticks.iter().all(|t| (t.0 - row).abs() >= MIN_GAP);
                if e > lo && e < hi && r.inside(row) && clear {
                    ticks.push((row, v));
                }
            }
        }
        // Too few rows for any tick: the round ends alone.
        if !ticks.is_empty() || !room {
            ticks.sort_by_key(|t| t.0);
            return Some(log_labels(r, &ticks, unit));
        }
    }
    None
}

/// A log axis's labels: its ends (`at`, log10 values) and `ticks` (row, value),
/// top down.
fn log_labels(at: Rows, ticks: &[(i64, f64)], unit: Unit) -> YAxis {
    let (lo, hi) = (at.lo, at.hi);
    // Each label with its own significant digits (decades do not share decimals),
    // more where neighbours would read the same.
    let values = |d: i32| -> Vec<String> {
        std::iter::once(10f64.powf(hi))
            .chain(ticks.iter().map(|t| t.1))
            .chain(std::iter::once(10f64.powf(lo)))
            .map(|v| format::unit_digits(v, unit, d))
            .collect()
    };
    let mut d = 3;
    while d < 6 && !values(d).windows(2).all(|w| w[0] != w[1]) {
        d += 1;
    }
    let labels = values(d);
    YAxis {
        range: Some((lo, hi)),
        ..placed(&labels, ticks, u16::try_from(at.last()).unwrap_or(0))
    }
}

/// A log axis's ends (log10 values) moved out to the nearest round values its
/// ticks could be (1, 2 or 5 × 10ᵏ; in a binary unit 1, 2 or 5 × 1, 10 or 100 ×
/// 1024ⁱ bytes), so that its end labels read as round as its ticks; where there
/// is none, the end stays.
fn log_ends(lo: f64, hi: f64, unit: Unit, set: &[f64]) -> (f64, f64) {
    // Every decade of the range and one beyond each end.
    let decades = u16::try_from((hi - lo).ceil() as i64 + 3).unwrap_or(u16::MAX);
    let cand = log_candidates(lo - 1.0, hi + 1.0, 1.0, set, unit, decades);
    let eps = 1e-9;
    let low = (cand.iter().map(|c| c.1))
        .filter(|&e| e <= lo + eps)
        .max_by(f64::total_cmp);
    let high = (cand.iter().map(|c| c.1))
        .filter(|&e| e >= hi - eps)
        .min_by(f64::total_cmp);
    (low.unwrap_or(lo), high.unwrap_or(hi))
}

/// The axis from its labels (top, the ticks' top down, bottom) and the ticks'
/// rows: the top label on row 0, the bottom one on row `last` (unless it reads as
/// the top one), each tick's on its row.
fn placed(labels: &[String], ticks: &[(i64, f64)], last: u16) -> YAxis {
    let n = labels.len();
    let mut out = YAxis::default();
    out.labels.push((0, labels[0].clone()));
    if last > 0 && labels[n - 1] != labels[0] {
        out.labels.push((last, labels[n - 1].clone()));
    }
    for (&(r, _), l) in ticks.iter().zip(&labels[1..n - 1]) {
        let r = u16::try_from(r).unwrap_or(0);
        out.labels.push((r, l.clone()));
        out.ticks.push(r);
    }
    out
}

/// The bytes per unit of a binary unit (`None` for the others).
fn bytes_per(unit: Unit) -> Option<f64> {
    match unit {
        Unit::Bytes | Unit::BytesPerSec => Some(1.0),
        Unit::MiB => Some(1_048_576.0),
        Unit::GiB => Some(1_073_741_824.0),
        _ => None,
    }
}

/// Log tick candidates (value, log10 value) in `lo..=hi` (log10): `m` × 10ᵏ for
/// each mantissa `m` and every `step`-th decade; in a binary unit `m` × 1, 10 or
/// 100 × 1024ⁱ bytes instead (`1KiB`, `10KiB`, `100KiB`, `1MiB`), so that the labels
/// read round.
fn log_candidates(
    lo: f64,
    hi: f64,
    step: f64,
    set: &[f64],
    unit: Unit,
    rows: u16,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    if let Some(f) = bytes_per(unit) {
        // Past 3 decades a step, one tick per binary unit.
        let tens: &[f64] = if step >= 3.0 {
            &[1.0]
        } else {
            &[1.0, 10.0, 100.0]
        };
        let mut unit_bytes = 1.0;
        for _ in 0..=6 {
            for &t in tens {
                for &m in set {
                    let v = m * t * unit_bytes / f;
                    let e = v.log10();
                    if e >= lo && e <= hi {
                        out.push((v, e));
                    }
                }
            }
            unit_bytes *= 1024.0;
        }
        return out;
    }
    let mut k = (lo / step).floor();
    // Bounded: no more decades than rows (and far from zero k + 1 can round to k).
    for _ in 0..=rows {
        if k * step > hi {
            break;
        }
        let p = 10f64.powi((k * step) as i32);
        for &m in set {
            let v = m * p;
            let e = v.log10();
            if e >= lo && e <= hi {
                out.push((v, e));
            }
        }
        k += 1.0;
    }
    out
}

/// How a chart's x axis is ticked: round numbers, round durations (seconds: a
/// relative time, or a Unix time whose ticks fall on round times of day), or
/// decades (the axis is log10 of the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum XTicks {
    #[default]
    Round,
    /// Round numbers that are whole (a `_step` axis: no `2.5` between steps).
    Whole,
    Seconds,
    Log10,
}

/// Round durations a time axis is ticked by, in seconds.
const TIME_STEPS: [f64; 22] = [
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10_800.0,
    21_600.0,
    43_200.0,
    86_400.0,
    172_800.0,
    604_800.0,
    2_592_000.0,
    31_536_000.0,
];

/// At most `most` tick values strictly inside (lo, hi) for a `kind` axis; None:
/// round numbers ([`XTicks::Round`], and a time axis under a few seconds).
pub(super) fn x_ticks(kind: XTicks, lo: f64, hi: f64, most: usize) -> Option<Vec<f64>> {
    let span = hi - lo;
    if most == 0 || !span.is_finite() || span <= 0.0 {
        return Some(Vec::new());
    }
    let raw = span / (most + 1) as f64;
    match kind {
        XTicks::Round => None,
        XTicks::Whole => Some(multiples(lo, hi, nice_step(raw).max(1.0), most)),
        XTicks::Seconds => {
            let step = TIME_STEPS.into_iter().find(|&s| s >= raw)?;
            (raw >= 1.0 || span >= 5.0).then(|| multiples(lo, hi, step, most))
        }
        XTicks::Log10 if span >= 1.0 => Some(multiples(lo, hi, nice_step(raw).max(1.0), most)),
        // Within a decade: round values, placed at their log10.
        XTicks::Log10 => {
            let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
            let step = nice_step((b - a) / (most + 1) as f64);
            Some(
                multiples(a, b, step, most)
                    .into_iter()
                    .filter(|&v| v > 0.0)
                    .map(f64::log10)
                    .collect(),
            )
        }
    }
}

/// k·`step` strictly inside (lo, hi), at most `most` of them.
fn multiples(lo: f64, hi: f64, step: f64, most: usize) -> Vec<f64> {
    multiples_at(lo, hi, step, most, |k| k * step)
}

/// `at(k)` for the k after `lo / step` on, strictly inside (lo, hi), at most `most`
/// of them (`at(k)` is k·`step`, computed as the caller needs it).
pub(super) fn multiples_at(
    lo: f64,
    hi: f64,
    step: f64,
    most: usize,
    at: impl Fn(f64) -> f64,
) -> Vec<f64> {
    let mut out = Vec::new();
    let mut k = (lo / step).floor() + 1.0;
    // Bounded: far from zero, k + 1 can round back to k.
    for _ in 0..=most + 1 {
        let v = at(k);
        if v >= hi - step * 1e-9 || out.len() == most {
            break;
        }
        if v > lo + step * 1e-9 {
            out.push(if v == 0.0 { 0.0 } else { v });
        }
        k += 1.0;
    }
    out
}

#[cfg(test)]
mod tests;
