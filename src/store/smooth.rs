//! Smoothing of a metric series: pure math on the `(x, y)` points of one series,
//! always over every logged point (never the decimated points a chart draws), so
//! the smoothed value at a step does not depend on what is drawn or zoomed.
//!
//! The kinds follow W&B's documented definitions ("Smooth line plots"):
//!
//! - TWEMA (W&B's default): `w = min(sqrt(p), 0.999)`; for point `i`,
//!   `dx = (x[i] - x[i-1]) / range * VIEWPORT_SCALE`, `w' = w^dx`,
//!   `last = last * w' + y[i]`, `debias = debias * w' + 1`, value `last / debias`.
//!   `range` is the x range of the WHOLE series (W&B uses the chart's, so its
//!   curve changes when you zoom; this one does not).
//! - EMA: TensorBoard's debiased EMA (`vz_line_chart2/line-chart.ts`):
//!   `last = last * w + (1 - w) * y[i]`, `n += 1`, value `last / (1 - w^n)`;
//!   a constant series is left as it is.
//! - Running average: the mean of the `N` points centred on the point (index
//!   `i - N/2 ..= i + (N-1)/2`, fewer at either end).
//! - Gaussian: the mean of the points weighted by `exp(-(x[j]-x[i])² / 2σ²)`, σ in
//!   x units (steps), over the points with `|x[j]-x[i]| <= 3σ`.
//!
//! A non-finite `y` (NaN, ±inf) is a gap: its smoothed value is NaN and it is not
//! folded into the state of any kind (TWEMA's `dx` runs from the previous finite
//! point).

use std::fmt;

/// W&B's TWEMA scale: the x distance of the whole range counts as this many
/// "unit steps" of decay. W&B's frontend is not public and its docs name the
/// constant without its value; 1000 is taken here.
pub const VIEWPORT_SCALE: f64 = 1000.0;

/// Largest EMA weight: at 1 the average never moves off its start (0), so every
/// value would be 0; TensorBoard's slider stops at 0.999 too.
pub const EMA_MAX: f64 = 0.999;
/// Most points of a running average.
pub const AVG_MAX: usize = 1_000_000;
/// Gaussian σ bounds, in x units (steps; seconds with `--system`). Below the
/// lower one no two x are told apart (a Unix time's f64 spacing is 2.4e-7 s), and
/// far below it `2σ²` is 0 and every value NaN; above the upper one the window
/// (3σ) passes the integers an f64 holds exactly (2^53), so it has no edge left.
pub const SIGMA_MIN: f64 = 1e-6;
pub const SIGMA_MAX: f64 = 1e15;

/// A smoothing kind and its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Smoothing {
    #[default]
    None,
    /// Time-weighted EMA, parameter in [0, 1].
    Twema(f64),
    /// TensorBoard's debiased EMA, weight in [0, 0.999].
    Ema(f64),
    /// Centred running average of this many points (1 to 1000000).
    RunningAverage(usize),
    /// Gaussian kernel with this standard deviation in x units (1e-6 to 1e15).
    Gaussian(f64),
}

impl fmt::Display for Smoothing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Smoothing::None => write!(f, "none"),
            Smoothing::Twema(p) => write!(f, "twema:{p}"),
            Smoothing::Ema(p) => write!(f, "ema:{p}"),
            Smoothing::RunningAverage(n) => write!(f, "avg:{n}"),
            Smoothing::Gaussian(s) => write!(f, "gauss:{s}"),
        }
    }
}

/// A bound as an error message writes it: `0.999`, `1e-6`, `1e15`.
fn bound(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

impl std::str::FromStr for Smoothing {
    type Err = String;

    /// `none`, `twema:P`, `ema:W`, `avg:N`, `gauss:SIGMA`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (kind, param) = s.split_once(':').unwrap_or((s, ""));
        let kind = kind.trim().to_ascii_lowercase();
        if kind == "none" && param.is_empty() {
            return Ok(Smoothing::None);
        }
        let float = |lo: f64, hi: f64, what: &str| -> Result<f64, String> {
            match param.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
                _ => Err(format!(
                    "{kind} needs {what} from {} to {} after ':', got {param:?}",
                    bound(lo),
                    bound(hi)
                )),
            }
        };
        match kind.as_str() {
            "twema" => float(0.0, 1.0, "a weight").map(Smoothing::Twema),
            "ema" => float(0.0, EMA_MAX, "a weight").map(Smoothing::Ema),
            "avg" | "running" | "running-average" => match param.trim().parse::<usize>() {
                Ok(n) if (1..=AVG_MAX).contains(&n) => Ok(Smoothing::RunningAverage(n)),
                _ => Err(format!(
                    "avg needs a whole number of points from 1 to {AVG_MAX} after ':', got {param:?}"
                )),
            },
            "gauss" | "gaussian" => float(SIGMA_MIN, SIGMA_MAX, "a standard deviation (x units)")
                .map(Smoothing::Gaussian),
            _ => Err(format!(
                "unknown smoothing {kind:?} (none, twema:P, ema:W, avg:N, gauss:SIGMA)"
            )),
        }
    }
}

impl Smoothing {
    /// The smoothed value of every point of the series `(xs[i], ys[i])`, x in
    /// logged order (non-decreasing). Non-finite `y` give NaN and are skipped.
    #[must_use]
    pub fn apply(&self, xs: &[f64], ys: &[f64]) -> Vec<f64> {
        let n = xs.len().min(ys.len());
        let (xs, ys) = (&xs[..n], &ys[..n]);
        match *self {
            Smoothing::None => ys.to_vec(),
            Smoothing::Twema(p) => twema(xs, ys, p),
            Smoothing::Ema(w) => ema(ys, w),
            Smoothing::RunningAverage(k) => running_average(ys, k),
            Smoothing::Gaussian(s) => gaussian(xs, ys, s),
        }
    }

    /// The smoothed values of the points whose x lies in `lo..=hi` (a zoomed
    /// view), computed from the whole series: the same numbers as the whole
    /// series' smoothing at those points, whatever the window.
    #[must_use]
    pub fn apply_in(&self, xs: &[f64], ys: &[f64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
        self.apply(xs, ys)
            .into_iter()
            .zip(xs)
            .filter(|(_, x)| (lo..=hi).contains(*x))
            .map(|(v, x)| (*x, v))
            .collect()
    }
}

fn finite_range(xs: &[f64], ys: &[f64]) -> f64 {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (x, y) in xs.iter().zip(ys) {
        if y.is_finite() && x.is_finite() {
            lo = lo.min(*x);
            hi = hi.max(*x);
        }
    }
    let r = hi - lo;
    if r.is_finite() && r > 0.0 {
        r
    } else {
        1.0
    }
}

fn twema(xs: &[f64], ys: &[f64], p: f64) -> Vec<f64> {
    let w = p.max(0.0).sqrt().min(0.999);
    let range = finite_range(xs, ys);
    let mut last = 0.0;
    let mut debias = 0.0;
    let mut prev_x: Option<f64> = None;
    xs.iter()
        .zip(ys)
        .map(|(&x, &y)| {
            if !y.is_finite() || !x.is_finite() {
                return f64::NAN;
            }
            let dx = prev_x.map_or(0.0, |px| (x - px) / range * VIEWPORT_SCALE);
            prev_x = Some(x);
            let adj = w.powf(dx);
            last = last * adj + y;
            debias = debias * adj + 1.0;
            last / debias
        })
        .collect()
}

fn ema(ys: &[f64], w: f64) -> Vec<f64> {
    let first = ys.iter().find(|y| y.is_finite());
    let constant = first.is_none_or(|f| ys.iter().filter(|y| y.is_finite()).all(|y| y == f));
    let mut last = 0.0;
    let mut count = 0i32;
    ys.iter()
        .map(|&y| {
            if !y.is_finite() {
                return f64::NAN;
            }
            if constant {
                return y;
            }
            last = last * w + (1.0 - w) * y;
            count = count.saturating_add(1);
            let debias = if w == 1.0 { 1.0 } else { 1.0 - w.powi(count) };
            last / debias
        })
        .collect()
}

fn running_average(ys: &[f64], k: usize) -> Vec<f64> {
    // Over the finite points only; gaps stay NaN.
    let idx: Vec<usize> = (0..ys.len()).filter(|&i| ys[i].is_finite()).collect();
    let mut prefix = Vec::with_capacity(idx.len() + 1);
    prefix.push(0.0);
    let mut acc = 0.0;
    for &i in &idx {
        acc += ys[i];
        prefix.push(acc);
    }
    let mut out = vec![f64::NAN; ys.len()];
    let before = k / 2;
    let after = (k - 1) / 2;
    for (j, &i) in idx.iter().enumerate() {
        let a = j.saturating_sub(before);
        let b = (j + after + 1).min(idx.len());
        {
            out[i] = (prefix[b] - prefix[a]) / (b - a) as f64;
        }
    }
    out
}

fn gaussian(xs: &[f64], ys: &[f64], sigma: f64) -> Vec<f64> {
    let pts: Vec<(usize, f64, f64)> = (0..ys.len())
        .filter(|&i| ys[i].is_finite() && xs[i].is_finite())
        .map(|i| (i, xs[i], ys[i]))
        .collect();
    let mut out = vec![f64::NAN; ys.len()];
    let reach = 3.0 * sigma;
    let mut start = 0;
    for (j, &(i, x, _)) in pts.iter().enumerate() {
        while start < j && pts[start].1 < x - reach {
            start += 1;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for &(_, xj, yj) in &pts[start..] {
            if xj > x + reach {
                break;
            }
            let d = xj - x;
            let wgt = (-(d * d) / (2.0 * sigma * sigma)).exp();
            num += wgt * yj;
            den += wgt;
        }
        out[i] = num / den;
    }
    out
}

pub mod stream;

#[cfg(test)]
#[path = "smooth/tests.rs"]
mod tests;
