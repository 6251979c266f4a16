//! Each kind against a straight transcription of its reference (W&B's documented
//! TWEMA code, TensorBoard's `resmoothDataset`, the documented running average and
//! Gaussian), on a series longer than the store's per-series cap.

use super::*;

/// More points than any per-series cap the store keeps (`--max-points` default).
const N: usize = 200_000;

fn series() -> (Vec<f64>, Vec<f64>) {
    const { assert!(N > crate::store::metrics::DEFAULT_SERIES_CAP) };
    // Deterministic noise (an LCG), uneven x spacing, and a few gaps.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut x = 0.0;
    let mut xs = Vec::with_capacity(N);
    let mut ys = Vec::with_capacity(N);
    for i in 0..N {
        s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let r = (s >> 11) as f64 / (1u64 << 53) as f64;
        x += 1.0 + f64::from(u8::from(i % 7 == 0)) * 3.0;
        xs.push(x);
        let y = (i as f64 / 5000.0).sin() + r - 0.5;
        ys.push(match i % 9973 {
            17 => f64::NAN,
            18 => f64::INFINITY,
            _ => y,
        });
    }
    (xs, ys)
}

/// The finite points only: the references know no gaps.
fn finite(xs: &[f64], ys: &[f64]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let idx: Vec<usize> = (0..ys.len()).filter(|&i| ys[i].is_finite()).collect();
    let fx = idx.iter().map(|&i| xs[i]).collect();
    let fy = idx.iter().map(|&i| ys[i]).collect();
    (idx, fx, fy)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// Compare ours (all points) with the reference (finite points): equal at every
/// finite point, NaN at every gap.
fn check(ours: &[f64], idx: &[usize], reference: &[(usize, f64)], n: usize) {
    assert_eq!(ours.len(), n);
    for (i, v) in ours.iter().enumerate() {
        if idx.binary_search(&i).is_err() {
            assert!(v.is_nan(), "gap at {i} smoothed to {v}");
        }
    }
    assert!(!reference.is_empty());
    for &(j, want) in reference {
        let got = ours[idx[j]];
        assert!(close(got, want), "point {j}: {got} != reference {want}");
    }
}

/// W&B docs, "Smooth line plots", TWEMA sample code, transcribed; rangeOfX is the
/// whole series' x range.
fn wandb_twema(x: &[f64], y: &[f64], param: f64) -> Vec<f64> {
    let smoothing_weight = param.sqrt().min(0.999);
    let mut last_y = if y.is_empty() { f64::NAN } else { 0.0 };
    let mut debias_weight = 0.0;
    let range_of_x = x[x.len() - 1] - x[0];
    (0..y.len())
        .map(|index| {
            let prev_x = if index > 0 { index - 1 } else { 0 };
            let change_in_x = ((x[index] - x[prev_x]) / range_of_x) * VIEWPORT_SCALE;
            let adj = smoothing_weight.powf(change_in_x);
            last_y = last_y * adj + y[index];
            debias_weight = debias_weight * adj + 1.0;
            last_y / debias_weight
        })
        .collect()
}

/// TensorBoard `vz_line_chart2/line-chart.ts` `resmoothDataset`, transcribed.
fn tensorboard_ema(data: &[f64], smoothing_weight: f64) -> Vec<f64> {
    let mut last = if data.is_empty() { f64::NAN } else { 0.0 };
    let mut num_accum = 0;
    let is_constant = data.iter().all(|v| *v == data[0]);
    data.iter()
        .map(|&next_val| {
            if is_constant || !next_val.is_finite() {
                next_val
            } else {
                last = last * smoothing_weight + (1.0 - smoothing_weight) * next_val;
                num_accum += 1;
                let mut debias_weight = 1.0;
                if smoothing_weight != 1.0 {
                    debias_weight = 1.0 - smoothing_weight.powi(num_accum);
                }
                last / debias_weight
            }
        })
        .collect()
}

#[test]
fn twema_matches_wandbs_documented_code_on_more_points_than_the_cap() {
    let (xs, ys) = series();
    let (idx, fx, fy) = finite(&xs, &ys);
    for p in [0.0, 0.3, 0.6, 0.99, 1.0] {
        let ours = Smoothing::Twema(p).apply(&xs, &ys);
        let want: Vec<(usize, f64)> = wandb_twema(&fx, &fy, p).into_iter().enumerate().collect();
        check(&ours, &idx, &want, N);
    }
}

#[test]
fn ema_matches_tensorboards_resmooth_on_more_points_than_the_cap() {
    let (xs, ys) = series();
    let (idx, _, fy) = finite(&xs, &ys);
    for w in [0.0, 0.6, 0.9, 0.999] {
        let ours = Smoothing::Ema(w).apply(&xs, &ys);
        let want: Vec<(usize, f64)> = tensorboard_ema(&fy, w).into_iter().enumerate().collect();
        check(&ours, &idx, &want, N);
    }
    // A constant series is left as it is (TensorBoard's isConstant).
    let c = Smoothing::Ema(0.9).apply(&[1.0, 2.0, 3.0], &[0.1, 0.1, 0.1]);
    assert_eq!(c, vec![0.1, 0.1, 0.1]);
}

#[test]
fn running_average_is_the_mean_of_the_window_of_n_points_around_each_point() {
    let (xs, ys) = series();
    let (idx, _, fy) = finite(&xs, &ys);
    for k in [1usize, 2, 10, 101] {
        let ours = Smoothing::RunningAverage(k).apply(&xs, &ys);
        let want: Vec<(usize, f64)> = (0..fy.len())
            .map(|j| {
                let lo = j.saturating_sub(k / 2);
                let hi = (j + (k - 1) / 2).min(fy.len() - 1);
                let w = &fy[lo..=hi];
                (j, w.iter().sum::<f64>() / w.len() as f64)
            })
            .collect();
        check(&ours, &idx, &want, N);
    }
}

#[test]
fn gaussian_is_the_kernel_weighted_mean_with_sigma_in_steps() {
    let (xs, ys) = series();
    let (idx, fx, fy) = finite(&xs, &ys);
    for sigma in [0.5, 2.0, 25.0] {
        let ours = Smoothing::Gaussian(sigma).apply(&xs, &ys);
        // Every point's weight, over the whole series, at 200 spread-out points
        // (both ends included).
        let want: Vec<(usize, f64)> = (0..200)
            .map(|k| k * (fy.len() - 1) / 199)
            .map(|j| {
                let (mut num, mut den) = (0.0, 0.0);
                for (x, y) in fx.iter().zip(&fy) {
                    let d = x - fx[j];
                    if d.abs() <= 3.0 * sigma {
                        let w = (-(d * d) / (2.0 * sigma * sigma)).exp();
                        num += w * y;
                        den += w;
                    }
                }
                (j, num / den)
            })
            .collect();
        check(&ours, &idx, &want, N);
    }
}

#[test]
fn zooming_leaves_every_smoothed_value_unchanged() {
    let (xs, ys) = series();
    let (lo, hi) = (xs[N / 3], xs[N / 3 + 5000]);
    for kind in [
        Smoothing::None,
        Smoothing::Twema(0.6),
        Smoothing::Ema(0.9),
        Smoothing::RunningAverage(10),
        Smoothing::Gaussian(2.0),
    ] {
        let full = kind.apply(&xs, &ys);
        let zoomed = kind.apply_in(&xs, &ys, lo, hi);
        assert_eq!(zoomed.len(), 5001, "{kind}");
        let start = xs.partition_point(|a| *a < lo);
        for (j, (x, v)) in zoomed.into_iter().enumerate() {
            let i = start + j;
            assert_eq!(xs[i].to_bits(), x.to_bits());
            assert!(
                v.to_bits() == full[i].to_bits(),
                "{kind} at x={x}: zoomed {v} != full {}",
                full[i]
            );
        }
    }
    // What W&B does, smoothing the zoomed points over the viewport's range, gives
    // other numbers: the contract above is not trivially met by any TWEMA.
    let (_, fx, fy) = finite(&xs, &ys);
    let a = fx.partition_point(|x| *x < lo);
    let b = fx.partition_point(|x| *x <= hi);
    let viewport = wandb_twema(&fx[a..b], &fy[a..b], 0.6);
    let whole = wandb_twema(&fx, &fy, 0.6);
    assert!(viewport
        .iter()
        .zip(&whole[a..b])
        .any(|(v, w)| !close(*v, *w)));
}

#[test]
fn smoothing_parses_kind_colon_param_and_names_bad_input() {
    assert_eq!("twema:0.6".parse(), Ok(Smoothing::Twema(0.6)));
    assert_eq!("EMA:0.9".parse(), Ok(Smoothing::Ema(0.9)));
    assert_eq!("avg:10".parse(), Ok(Smoothing::RunningAverage(10)));
    assert_eq!("gauss:2".parse(), Ok(Smoothing::Gaussian(2.0)));
    assert_eq!("none".parse(), Ok(Smoothing::None));
    for bad in [
        "twema:1.5",
        "ema:x",
        "avg:0",
        "avg:2.5",
        "gauss:0",
        "gauss:-1",
        "box:3",
        "ema:nan",
    ] {
        let e = bad.parse::<Smoothing>();
        assert!(e.is_err(), "{bad} parsed as {e:?}");
    }
    for k in [
        Smoothing::Twema(0.6),
        Smoothing::RunningAverage(3),
        Smoothing::Gaussian(2.5),
    ] {
        assert_eq!(k.to_string().parse(), Ok(k));
    }
}

#[test]
fn every_parameter_has_bounds_and_the_error_states_them() {
    let ok = [
        ("twema:0", Smoothing::Twema(0.0)),
        ("twema:1", Smoothing::Twema(1.0)),
        ("ema:0", Smoothing::Ema(0.0)),
        ("ema:0.999", Smoothing::Ema(0.999)),
        ("avg:1", Smoothing::RunningAverage(1)),
        ("avg:1000000", Smoothing::RunningAverage(1_000_000)),
        ("gauss:1e-6", Smoothing::Gaussian(1e-6)),
        ("gauss:1e15", Smoothing::Gaussian(1e15)),
    ];
    for (text, want) in ok {
        assert_eq!(text.parse(), Ok(want), "{text}");
    }
    let bad = [
        ("twema:1.0001", "twema needs a weight from 0 to 1 after ':'"),
        ("twema:-0.1", "twema needs a weight from 0 to 1 after ':'"),
        ("ema:1", "ema needs a weight from 0 to 0.999 after ':'"),
        ("ema:inf", "ema needs a weight from 0 to 0.999 after ':'"),
        (
            "avg:1000001",
            "avg needs a whole number of points from 1 to 1000000",
        ),
        (
            "gauss:1e-170",
            "gauss needs a standard deviation (x units) from 1e-6 to 1e15",
        ),
        (
            "gauss:9e-7",
            "gauss needs a standard deviation (x units) from 1e-6 to 1e15",
        ),
        (
            "gauss:1e308",
            "gauss needs a standard deviation (x units) from 1e-6 to 1e15",
        ),
        (
            "gauss:0",
            "gauss needs a standard deviation (x units) from 1e-6 to 1e15",
        ),
        (
            "gauss:nan",
            "gauss needs a standard deviation (x units) from 1e-6 to 1e15",
        ),
    ];
    for (text, want) in bad {
        let e = text.parse::<Smoothing>().err().unwrap_or_default();
        assert!(e.starts_with(want), "{text}: {e}");
    }
    // At the ends every finite point keeps a finite smoothed value.
    let xs: Vec<f64> = (0..50).map(f64::from).collect();
    let ys: Vec<f64> = xs.iter().map(|x| (x * 0.3).sin()).collect();
    for s in [
        Smoothing::Gaussian(1e-6),
        Smoothing::Gaussian(1e15),
        Smoothing::Ema(0.999),
        Smoothing::Twema(1.0),
    ] {
        let out = s.apply(&xs, &ys);
        assert!(out.iter().all(|v| v.is_finite()), "{s}: {out:?}");
    }
    // EMA's top weight still moves with the data (at 1 every value was 0).
    let out = Smoothing::Ema(0.999).apply(&xs, &ys);
    assert!(out.iter().any(|v| *v != 0.0));
}
