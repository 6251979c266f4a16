//! The crosshair: reading values off the charts. `C` cycles it off → on the focused
//! chart → on every visible chart at the same x (synced); while it is on, `←`/`→`
//! move it point by point along the focused chart's drawn series (the next x any of
//! them logged: a compared run that goes on past the main run's last step is read
//! too), `home`/`end` to the first/last of them, and a right click
//! or a right-button drag puts it under the pointer (as `wandb leet` does). The view
//! shows x and each drawn series' value at its point nearest to x.

use super::xaxis::view::Placer;
use super::xaxis::{chart_series, own_x, series_in};
use super::Charts;
use crate::store::{Run, Series};

/// Where the crosshair is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crosshair {
    /// The x it stands at (a logged point's x of the focused chart).
    pub x: f64,
    /// Shown on every visible chart, not only the focused one.
    pub synced: bool,
}

/// The crosshair's keys and clicks change the charts' state; what they see
/// besides is `runs`, the runs drawn (the main run first, then compared ones).
impl Charts {
    /// The focused metric chart's first series with points (the main run's, else a
    /// compared run's).
    fn focused_series<'r>(&self, runs: &[&'r Run]) -> Option<&'r Series> {
        let key = self.focused_key()?;
        chart_series(runs, key).into_iter().find(|s| !s.is_empty())
    }

    /// `C`: off → on the focused chart (at its last point) → synced → off.
    pub(crate) fn cycle_crosshair(&mut self, runs: &[&Run]) {
        self.crosshair = match self.crosshair {
            None => self
                .focused_placed(runs)
                .into_iter()
                .next()
                .and_then(|(s, p)| {
                    let zoom = self.zoom.get(self.focused_key().unwrap_or_default());
                    match zoom {
                        // The last point inside the zoomed range that reads an x
                        // (the nearest to its end could be just past it).
                        Some(&(x0, x1)) => {
                            let at = nearest_inside(s, (x0, x1), x1)?;
                            match &p {
                                Some(p) if !p.placed(at) => placed_from(s, Some(p), at, false)
                                    .filter(|x| (x0..=x1).contains(x)),
                                _ => Some(at),
                            }
                        }
                        // Else at the newest point.
                        None => placed_near(s, p.as_ref(), s.last()?.0),
                    }
                })
                .map(|x| Crosshair { x, synced: false }),
            Some(c) if !c.synced => Some(Crosshair { synced: true, ..c }),
            Some(_) => None,
        };
    }

    /// Every drawn run's series of the focused chart that has points, each with
    /// what tells which of its points read an x in the x picked for the chart
    /// (None: the chart's own x, where all do): the crosshair stands only where
    /// its corner can say the x, as long as any point can.
    fn focused_placed<'r>(&self, runs: &[&'r Run]) -> Vec<(&'r Series, Option<Placer<'r>>)> {
        let Some(key) = self.focused_key() else {
            return Vec::new();
        };
        let own = own_x(runs, key);
        let mut all: Vec<_> = (runs.iter())
            .filter_map(|r| {
                let s = series_in(r, key, own).filter(|s| !s.is_empty())?;
                Some((s, Placer::new(&self.xaxis, r, key, own)))
            })
            .collect();
        // In another x the crosshair's step is read through the first run's x
        // (the corner's): it steps along that run's points alone (another run's
        // x may come at other steps: `home` on its first read `no x here`).
        if all.first().is_some_and(|(_, p)| p.is_some()) {
            all.truncate(1);
        }
        all
    }

    /// `←`/`→` with the crosshair on: to the previous / next point any drawn run
    /// logged on the focused chart.
    pub(crate) fn step_crosshair(&mut self, runs: &[&Run], forward: bool) {
        let Some(c) = self.crosshair else {
            return;
        };
        // Standing outside the focused chart's zoom (a synced crosshair, focus
        // moved): the first step brings it into the window shown.
        let zoom = self.focused_key().and_then(|k| self.zoom.get(k));
        if zoom.is_some_and(|&(x0, x1)| !(x0..=x1).contains(&c.x)) {
            self.keep_crosshair_in_zoom(runs);
            return;
        }
        // The nearest x past this one that any drawn series logged (a synced
        // crosshair may stand between this chart's points: the next one is taken).
        let next = (self.focused_placed(runs).iter())
            .filter_map(|(s, p)| placed_from(s, p.as_ref(), c.x, forward))
            .reduce(|a, b| if forward { a.min(b) } else { a.max(b) });
        if let (Some(x), Some(ch)) = (next, self.crosshair.as_mut()) {
            ch.x = x;
            self.pan_to(runs, x);
        }
    }

    /// The focused chart's zoom window moved (its width kept, within the drawn
    /// runs' data) so that `x` is inside it: stepping the crosshair past an edge
    /// pans the view along, as a cursor scrolls a page, instead of leaving the
    /// crosshair where nothing is drawn.
    fn pan_to(&mut self, runs: &[&Run], x: f64) {
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return;
        };
        let Some(&(x0, x1)) = self.zoom.get(&key) else {
            return;
        };
        if (x0..=x1).contains(&x) {
            return;
        }
        let shift = if x < x0 { x - x0 } else { x - x1 };
        let (mut n0, mut n1) = (x0 + shift, x1 + shift);
        if let Some((f0, f1)) = data_bounds(runs, &key) {
            if n0 < f0 {
                (n0, n1) = (f0, n1 + (f0 - n0));
            }
            if n1 > f1 {
                (n0, n1) = ((n0 - (n1 - f1)).max(f0), f1);
            }
        }
        self.zoom.insert(key, (n0, n1));
    }

    /// After the focused chart's zoom changed: the crosshair at the point nearest
    /// to it inside the window shown, so that it never reads a value off screen.
    pub(crate) fn keep_crosshair_in_zoom(&mut self, runs: &[&Run]) {
        let (Some(c), Some(key)) = (self.crosshair, self.focused_key()) else {
            return;
        };
        let Some(&(x0, x1)) = self.zoom.get(key) else {
            return;
        };
        if (x0..=x1).contains(&c.x) {
            return;
        }
        // The point nearest to the edge it is past, on this side of it.
        let edge = if c.x > x1 { x1 } else { x0 };
        let inside = (self.focused_series(runs)).and_then(|s| nearest_inside(s, (x0, x1), edge));
        if let (Some(x), Some(ch)) = (inside, self.crosshair.as_mut()) {
            ch.x = x;
        }
    }

    /// `home`/`end` with the crosshair on: to the first / last (`last`) point in
    /// view, of the focused chart's zoom window or else of its drawn series.
    pub(crate) fn crosshair_to_end(&mut self, runs: &[&Run], last: bool) {
        let Some(key) = self.focused_key() else {
            return;
        };
        let Some((x0, x1)) = (self.zoom.get(key).copied()).or_else(|| data_bounds(runs, key))
        else {
            return;
        };
        let edge = if last { x1 } else { x0 };
        let all = self.focused_placed(runs);
        let x = (all.iter())
            .filter_map(|(s, p)| {
                let at = nearest_inside(s, (x0, x1), edge)?;
                // Not placed: the next placed point inward, still in view.
                match p {
                    Some(p) if !p.placed(at) => {
                        placed_from(s, Some(p), at, !last).filter(|x| (x0..=x1).contains(x))
                    }
                    _ => Some(at),
                }
            })
            .reduce(|a, b| if last { a.max(b) } else { a.min(b) });
        if let (Some(x), Some(ch)) = (x, self.crosshair.as_mut()) {
            ch.x = x;
        }
    }

    /// A right click or drag at `frac` (0 = left edge, 1 = right edge) of the
    /// focused chart's x range: the crosshair at the point nearest there.
    pub(crate) fn point_crosshair(&mut self, runs: &[&Run], x: f64) {
        let first = self.focused_placed(runs).into_iter().next();
        let Some(x) = first.and_then(|(s, p)| placed_near(s, p.as_ref(), x)) else {
            return;
        };
        let synced = self.crosshair.is_some_and(|c| c.synced);
        self.crosshair = Some(Crosshair { x, synced });
        self.keep_crosshair_in_zoom(runs);
    }
}

/// Points looked past, at most, for a placed one (the series hold at most
/// `--max-points`; this bounds a key press on a larger cap).
const MAX_SKIP: usize = 20_000;

/// The x of `s`'s first point after (`forward`) or before `x` that `p` places.
fn placed_from(s: &Series, p: Option<&Placer<'_>>, x: f64, forward: bool) -> Option<f64> {
    if p.is_some_and(Placer::places_none) {
        return None;
    }
    let mut at = x;
    for _ in 0..MAX_SKIP {
        at = s.step_from(at, forward)?;
        if p.is_none_or(|p| p.placed(at)) {
            return Some(at);
        }
    }
    None
}

/// The x of `s`'s point nearest to `x` that `p` places; the nearest point at all
/// where none is placed (the crosshair still stands, reading `x=–`).
fn placed_near(s: &Series, p: Option<&Placer<'_>>, x: f64) -> Option<f64> {
    let near = s.nearest(x)?.0;
    let Some(p) = p.filter(|p| !p.placed(near)) else {
        return Some(near);
    };
    let before = placed_from(s, Some(p), near, false);
    let after = placed_from(s, Some(p), near, true);
    let best = match (before, after) {
        (Some(b), Some(a)) => Some(if (x - b).abs() <= (a - x).abs() { b } else { a }),
        (b, a) => b.or(a),
    };
    best.or(Some(near))
}

/// The x of `s`'s point nearest to `edge` (an end of `x0..=x1`) inside that range.
fn nearest_inside(s: &Series, (x0, x1): (f64, f64), edge: f64) -> Option<f64> {
    let inside = |x: &f64| (x0..=x1).contains(x);
    (s.nearest(edge).map(|p| p.0).filter(inside))
        .or_else(|| s.step_from(edge, edge <= x0))
        .filter(inside)
}

/// The x range of every drawn run's `key` series, in the chart's own x.
pub(crate) fn data_bounds(runs: &[&Run], key: &str) -> Option<(f64, f64)> {
    chart_series(runs, key)
        .into_iter()
        .filter_map(Series::x_bounds)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run that logged `k` = step at `steps`.
    fn run(steps: std::ops::Range<u32>) -> Run {
        let mut r = Run::new();
        for s in steps {
            r.metrics.push("k", f64::from(s), f64::from(s));
        }
        r
    }

    #[test]
    fn the_crosshair_reaches_every_drawn_run_s_points_not_only_the_main_run_s() {
        let mut c = Charts {
            metric_keys: vec!["k".into()],
            shown: vec![0],
            ..Charts::default()
        };
        let (main, longer, later) = (run(0..25), run(0..50), run(60..61));
        let runs = [&main, &longer, &later];
        let at = |c: &Charts| c.crosshair.map(|c| c.x);
        c.cycle_crosshair(&runs);
        assert_eq!(at(&c), Some(24.0), "at the main run's newest point");
        c.step_crosshair(&runs, true);
        assert_eq!(at(&c), Some(25.0), "on into the longer run");
        c.crosshair_to_end(&runs, true);
        assert_eq!(at(&c), Some(60.0));
        c.step_crosshair(&runs, false);
        assert_eq!(at(&c), Some(49.0));
        c.step_crosshair(&runs, true);
        c.step_crosshair(&runs, true);
        assert_eq!(at(&c), Some(60.0), "stays at the last point");
        c.crosshair_to_end(&runs, false);
        assert_eq!(at(&c), Some(0.0));
        c.step_crosshair(&runs, false);
        assert_eq!(at(&c), Some(0.0), "stays at the first point");
    }
}
