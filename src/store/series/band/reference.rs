//! The band and the downsampled line as they were computed before the floor went
//! (a libm call per point), kept to prove today's equal on random series.

use super::super::{push_pair, Point, Series};
use super::{ColumnBand, MAX_COLUMNS};

/// One column's points so far, with running means (as before the sums).
#[derive(Clone, Copy, Default)]
struct Column {
    n: usize,
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
    nan: Option<f64>,
}
use crate::decode::test_rng::Rng;

fn column_of_floor(x0: f64, x1: f64, n: usize) -> impl Fn(f64) -> usize {
    let (h0, span) = (x0 * 0.5, x1 * 0.5 - x0 * 0.5);
    let nf = n as f64;
    move |x: f64| -> usize {
        if span > 0.0 {
            (((x * 0.5 - h0) / span * nf).floor() as usize).min(n.saturating_sub(1))
        } else {
            0
        }
    }
}

fn column_band_floor(s: &Series, x0: f64, x1: f64, cols: usize) -> ColumnBand {
    let mut out = ColumnBand::default();
    if cols == 0 || !x0.is_finite() || !x1.is_finite() || x1 < x0 {
        return out;
    }
    let n = if x1 > x0 { cols.min(MAX_COLUMNS) } else { 1 };
    let column = column_of_floor(x0, x1, n);
    let span_pts: &[Point] = if s.monotonic {
        let a = s.pts.partition_point(|p| p.0 < x0);
        let b = s.pts.partition_point(|p| p.0 <= x1);
        &s.pts[a..b.max(a)]
    } else {
        &s.pts
    };
    let tail = s.group.iter().flat_map(|g| [g.lo, g.hi]);
    let mut acc = vec![Column::default(); n];
    for (px, py) in span_pts.iter().copied().chain(tail) {
        if !(px >= x0 && px <= x1) {
            continue;
        }
        let c = &mut acc[column(px)];
        if py.is_nan() {
            c.nan.get_or_insert(px);
            continue;
        }
        if !py.is_finite() {
            continue;
        }
        out.points += 1;
        c.n += 1;
        let k = c.n as f64;
        c.x += px / k - c.x / k;
        c.y += py / k - c.y / k;
        (c.lo, c.hi) = if c.n == 1 {
            (py, py)
        } else {
            (c.lo.min(py), c.hi.max(py))
        };
    }
    for c in &acc {
        let x = c.x.max(x0).min(x1);
        match c.nan {
            Some(g) if c.n == 0 || g < x => out.gap(g),
            _ => {}
        }
        if c.n > 0 {
            out.push(x, c.lo, c.hi, c.y.max(c.lo).min(c.hi));
        }
        match c.nan {
            Some(g) if c.n > 0 && g >= x => out.gap(g),
            _ => {}
        }
    }
    out
}

fn downsample_floor(s: &Series, x0: f64, x1: f64, width: usize) -> Vec<Point> {
    let mut out = Vec::new();
    if width == 0 || x1.is_nan() || x0.is_nan() {
        return out;
    }
    let tail = s.group.map(|g| {
        if g.lo.0 <= g.hi.0 {
            [g.lo, g.hi]
        } else {
            [g.hi, g.lo]
        }
    });
    let span: &[Point] = if s.monotonic {
        let a = s.pts.partition_point(|p| p.0 < x0);
        let b = s.pts.partition_point(|p| p.0 <= x1);
        let a = a.saturating_sub(1);
        // The one change: a reversed range panicked here.
        &s.pts[a..(b + 1).min(s.pts.len()).max(a)]
    } else {
        &s.pts
    };
    let all = span.iter().copied().chain(tail.iter().flatten().copied());
    let scale = if x1 > x0 {
        width as f64 / (x1 - x0)
    } else {
        0.0
    };
    let mut cur: Option<(i64, Point, Point)> = None;
    for p in all {
        let bucket = ((p.0 - x0) * scale).floor() as i64;
        if p.1.is_nan() {
            if let Some((_, lo, hi)) = cur.take() {
                push_pair(&mut out, lo, hi);
            }
            out.push(p);
            continue;
        }
        match &mut cur {
            Some((b, lo, hi)) if *b == bucket => {
                if p.1 < lo.1 {
                    *lo = p;
                }
                if p.1 > hi.1 {
                    *hi = p;
                }
            }
            _ => {
                if let Some((_, lo, hi)) = cur.take() {
                    push_pair(&mut out, lo, hi);
                }
                cur = Some((bucket, p, p));
            }
        }
    }
    if let Some((_, lo, hi)) = cur {
        push_pair(&mut out, lo, hi);
    }
    if !s.monotonic {
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// Equal to within 1e-12 of `scale` (the magnitude of what was averaged), NaN
/// equal to NaN.
fn close(a: f64, b: f64, scale: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * scale.max(a.abs()).max(b.abs())
}

/// The same bits (NaN equal to NaN).
fn same(a: &[Point], b: &[Point]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| p.0.to_bits() == q.0.to_bits() && p.1.to_bits() == q.1.to_bits())
}

/// A random series: ragged or backward x, gaps, ±inf, values from 1e-300 to
/// 1e300 (a log axis's), from none to past its cap.
fn random_series(rng: &mut Rng) -> Series {
    let mut s = Series::new(64 + rng.below(400) as usize);
    let n = match rng.below(6) {
        0 => rng.below(2),
        1 => rng.below(20),
        _ => rng.below(5000),
    };
    let backward = rng.below(4) == 0;
    let scale = 10f64.powi(rng.below(600) as i32 - 300);
    let mut x = rng.unit() * 100.0 - 50.0;
    for _ in 0..n {
        x += match rng.below(8) {
            0 => 0.0,
            1 => rng.unit() * 1000.0,
            _ => rng.unit() * 3.0,
        };
        let px = if backward && rng.below(5) == 0 {
            x - rng.unit() * 500.0
        } else {
            x
        };
        let y = match rng.below(40) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -f64::INFINITY,
            _ => (rng.unit() - 0.3) * scale,
        };
        s.push(px, y);
    }
    s
}

/// A range to chart `s` over: its own, a window inside or past it, one x, a
/// reversed or non-finite one.
fn random_range(rng: &mut Rng, s: &Series) -> (f64, f64) {
    let (a, b) = s.x_bounds().unwrap_or((0.0, 1.0));
    let w = b - a;
    match rng.below(8) {
        0 => (a, a),
        1 => (b, a - 1.0),
        2 => (f64::NAN, b),
        3 => (a - w, a - w * 0.5),
        4 => (a - 1e-9, b + 7.0),
        5 | 6 => {
            let (u, v) = (rng.unit(), rng.unit());
            (a + w * u.min(v), a + w * u.max(v))
        }
        _ => (a, b),
    }
}

#[test]
fn the_band_and_the_line_equal_those_of_the_floor_on_random_series() {
    let mut rng = Rng(0x5EED_F4A3_0001);
    for case in 0..3000 {
        let s = random_series(&mut rng);
        let (x0, x1) = random_range(&mut rng, &s);
        // From one column to many more than the points.
        let cols = match rng.below(4) {
            0 => 1 + rng.below(3) as usize,
            1 => 5000 + rng.below(5000) as usize,
            _ => 1 + rng.below(400) as usize,
        };
        let mut band = ColumnBand::default();
        s.column_band(x0, x1, cols, &mut band);
        let old = column_band_floor(&s, x0, x1, cols);
        assert_eq!(band.points, old.points, "case {case}");
        // The extremes are the same bits; the means (x of every column, the mid
        // line's y) were a running mean and are now a sum divided once: equal to
        // within rounding of the column's magnitudes.
        let ys = |p: &[Point]| p.iter().map(|p| p.1.to_bits()).collect::<Vec<_>>();
        assert_eq!(ys(&band.lo), ys(&old.lo), "case {case}");
        assert_eq!(ys(&band.hi), ys(&old.hi), "case {case}");
        assert_eq!(band.mid.len(), old.mid.len(), "case {case}");
        let scale_x = x0.abs().max(x1.abs());
        for (i, (new, old)) in band.mid.iter().zip(&old.mid).enumerate() {
            let scale_y = band.lo[i].1.abs().max(band.hi[i].1.abs());
            assert!(
                close(new.0, old.0, scale_x),
                "case {case} x: {new:?} {old:?}"
            );
            assert!(
                close(new.1, old.1, scale_y),
                "case {case} y: {new:?} {old:?}"
            );
            assert_eq!(new.0, band.lo[i].0, "case {case}");
            assert_eq!(new.0, band.hi[i].0, "case {case}");
        }
        let mut line = Vec::new();
        s.downsample(x0, x1, cols, &mut line);
        let old = downsample_floor(&s, x0, x1, cols);
        assert!(same(&line, &old), "case {case}: {line:?} != {old:?}");
    }
}

#[test]
fn the_floor_by_truncation_is_the_floor_everywhere() {
    let mut rng = Rng(0xF100_0002);
    let edges = [
        0.0,
        -0.0,
        -0.5,
        -1.0,
        -1.5,
        0.999_999_999_999,
        -1e-300,
        9.3e18,
        -9.3e18,
        -9.223_372_036_854_776e18,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        -f64::INFINITY,
        f64::NAN,
    ];
    let random = (0..100_000).map(|_| (rng.unit() - 0.5) * 10f64.powi(rng.below(40) as i32 - 10));
    for v in edges.into_iter().chain(random) {
        assert_eq!(super::super::floor_i64(v), v.floor() as i64, "{v}");
    }
    for (x0, x1, n) in [
        (0.0, 1.0, 7),
        (-5.0, 3.0, 100),
        (-f64::MAX, f64::MAX, 3),
        (2.0, 2.0, 1),
    ] {
        let (new, old) = (super::column_of(x0, x1, n), column_of_floor(x0, x1, n));
        for _ in 0..10_000 {
            let x = x0 - 1.0 + (x1 - x0 + 2.0) * rng.unit();
            assert_eq!(new(x), old(x), "{x} in {x0}..{x1} / {n}");
        }
        for x in [f64::NAN, f64::INFINITY, -f64::INFINITY, x0, x1] {
            assert_eq!(new(x), old(x), "{x} in {x0}..{x1} / {n}");
        }
    }
}
