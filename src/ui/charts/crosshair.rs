//! The crosshair: reading values off the charts. `C` cycles it off → on the focused
//! chart → on every visible chart at the same x (synced); while it is on, `←`/`→`
//! move it point by point along the focused chart's first series, and a right click
//! or a right-button drag puts it under the pointer (as `wandb leet` does). The view
//! shows x and each drawn series' value at its point nearest to x.

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
        runs.iter()
            .filter_map(|r| r.metrics.get(key))
            .find(|s| !s.is_empty())
    }

    /// `C`: off → on the focused chart (at its last point) → synced → off.
    pub(crate) fn cycle_crosshair(&mut self, runs: &[&Run]) {
        self.crosshair = match self.crosshair {
            None => self
                .focused_series(runs)
                .and_then(|s| {
                    let x = self.zoom.get(self.focused_key().unwrap_or_default());
                    // Inside the zoomed range, else at the newest point.
                    let at = x.map_or_else(|| s.last().map(|p| p.0), |&(_, x1)| Some(x1));
                    at.and_then(|x| s.nearest(x))
                })
                .map(|p| Crosshair {
                    x: p.0,
                    synced: false,
                }),
            Some(c) if !c.synced => Some(Crosshair { synced: true, ..c }),
            Some(_) => None,
        };
    }

    /// `←`/`→` with the crosshair on: to the previous / next logged point.
    pub(crate) fn step_crosshair(&mut self, runs: &[&Run], forward: bool) {
        let Some(c) = self.crosshair else {
            return;
        };
        let next = self.focused_series(runs).and_then(|s| {
            // From the focused chart's own point nearest to x (a synced crosshair
            // may stand between this chart's points).
            let here = s.nearest(c.x).map_or(c.x, |p| p.0);
            let moved = if (here - c.x).abs() > 0.0 && (here > c.x) == forward {
                Some(here)
            } else {
                s.step_from(here, forward)
            };
            moved.or(Some(here))
        });
        if let (Some(x), Some(ch)) = (next, self.crosshair.as_mut()) {
            ch.x = x;
        }
    }

    /// A right click or drag at `frac` (0 = left edge, 1 = right edge) of the
    /// focused chart's x range: the crosshair at the point nearest there.
    pub(crate) fn point_crosshair(&mut self, runs: &[&Run], x: f64) {
        let Some(p) = self.focused_series(runs).and_then(|s| s.nearest(x)) else {
            return;
        };
        let synced = self.crosshair.is_some_and(|c| c.synced);
        self.crosshair = Some(Crosshair { x: p.0, synced });
    }
}
