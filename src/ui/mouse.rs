//! The mouse: a click focuses the chart or pane under it (and selects the process
//! table row under it); the wheel zooms the chart under it about the pointer, or
//! scrolls the pane under it; a pane's border (a sidebar's inner edge, the
//! console's top) dragged with the left button resizes the pane. Hits are tested
//! against the areas in state, the ones the view draws ([`Hits`]); the router
//! (`App::on_mouse`) hands what was hit to its feature.

use ratatui::layout::{Position, Rect};

use super::charts::crosshair::data_bounds;
use super::charts::grid::GridState;
use super::charts::sections::{Item, Slot};
use super::charts::xaxis::view::Placer;
use super::charts::Charts;
use super::layout::{self, Areas};
use super::panels::Pane;
use super::workspace::Workspace;
use crate::store::{Run, Series};

/// What the mouse hits: the areas laid out and the grid of `n` charts as drawn
/// (one chart over the whole body when `fullscreen`).
pub(crate) struct Hits<'a> {
    pub areas: &'a Areas,
    pub grid: &'a GridState,
    pub n: usize,
    pub fullscreen: bool,
}

impl Hits<'_> {
    /// The side pane (overview, system sidebar, console, media) under `pos`.
    pub(crate) fn pane_at(&self, pos: Position) -> Option<Pane> {
        let a = self.areas;
        [
            (a.left, Pane::Left),
            (a.right, Pane::Right),
            (a.console, Pane::Console),
            (a.procs, Pane::Procs),
            (a.media, Pane::Media),
        ]
        .into_iter()
        .find_map(|(area, pane)| area.is_some_and(|r| r.contains(pos)).then_some(pane))
    }

    /// The chart under `pos`: its index in the shown charts and its area. `slot`:
    /// the sectioned grid's header or chart under `pos`.
    pub(crate) fn chart_at(
        &self,
        pos: Position,
        slot: Option<(Rect, Slot)>,
    ) -> Option<(usize, Rect)> {
        if self.fullscreen {
            // The chart drawn over the whole body (see `ui::render::render_buffer`).
            Some((self.grid.focus, self.areas.body))
        } else if self.grid.sectioned() {
            match slot? {
                (r, Slot::Chart(i)) => Some((i, r)),
                (_, Slot::Header { .. }) => None,
            }
        } else if self.areas.grid.contains(pos) {
            let body = layout::grid_body(self.areas.grid);
            let start = self.grid.page_start();
            (0..self.grid.per_page())
                .take_while(|i| start + i < self.n)
                .map(|i| (start + i, self.grid.cell(body, self.n, i)))
                .find(|(_, r)| r.contains(pos))
        } else {
            None
        }
    }
}

/// Where `column` falls across a chart drawn in `rect` (inside its border), from
/// 0 to 1; the middle of a chart too narrow to tell.
fn across(rect: Rect, column: u16) -> f64 {
    if rect.width > 2 {
        (f64::from(column.saturating_sub(rect.x + 1)) / f64::from(rect.width - 2)).clamp(0.0, 1.0)
    } else {
        0.5
    }
}

/// The mouse on a chart changes the charts' state; what it sees besides is the
/// runs drawn (the main run first).
impl Charts {
    /// A right click or right-button drag on chart `i` (in `rect`): it takes
    /// focus and the crosshair stands at the point nearest the pointer's x.
    pub(crate) fn crosshair_at(&mut self, runs: &[&Run], i: usize, rect: Rect, column: u16) {
        self.grid.set_item(Item::Chart(i));
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return;
        };
        // The x range the chart draws: its zoom, else every drawn run's.
        let full = data_bounds(runs, &key);
        let Some((x0, x1)) = self.zoom.get(&key).copied().or(full) else {
            return;
        };
        let x = self
            .under_pointer(runs, &key, (x0, x1), across(rect, column))
            .unwrap_or(x0 + (x1 - x0) * across(rect, column));
        self.point_crosshair(runs, x);
    }

    /// The chart's own x (a step) of the point under the pointer at `frac` across
    /// a chart drawn in another x (a metric, time): the drawn runs' point whose x
    /// drawn is nearest there, of those in `window` (own x) that read an x. None
    /// where the chart is drawn in its own linear x (a fraction of `window` is it).
    fn under_pointer(
        &self,
        runs: &[&Run],
        key: &str,
        window: (f64, f64),
        frac: f64,
    ) -> Option<f64> {
        let placed = self.placed_points(runs, key)?;
        let inside: Vec<(f64, f64)> = (placed.into_iter())
            .filter(|(s, _)| (window.0..=window.1).contains(s))
            .collect();
        let lo = inside.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = inside.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let target = lo + (hi - lo) * frac;
        (inside.iter())
            .min_by(|a, b| (a.1 - target).abs().total_cmp(&(b.1 - target).abs()))
            .map(|p| p.0)
    }

    /// Every drawn run's points of chart `key` that read an x in the x picked for
    /// it, as (own x, x drawn); None where the chart is drawn in its own linear x.
    fn placed_points(&self, runs: &[&Run], key: &str) -> Option<Vec<(f64, f64)>> {
        let own = crate::ui::charts::xaxis::own_x(runs, key);
        let mut out = Vec::new();
        for run in runs {
            let Some(series) = crate::ui::charts::xaxis::series_in(run, key, own) else {
                continue;
            };
            let placer = Placer::new(&self.xaxis, run, key, own)?;
            let tail = (series.last()).filter(|l| series.points().last().is_none_or(|p| p.0 < l.0));
            out.extend(
                (series.points().iter().chain(tail.iter()))
                    .filter_map(|&(s, _)| Some((s, placer.x_at(s)?))),
            );
        }
        Some(out)
    }

    /// The wheel over chart `i` (in `rect`) at `column`: zooms in (`zin`) or out
    /// around the x under the pointer, within the main run's data (`runs`: the
    /// drawn runs, the main one first).
    pub(crate) fn wheel_zoom(
        &mut self,
        runs: &[&Run],
        i: usize,
        rect: Rect,
        column: u16,
        zin: bool,
    ) {
        self.grid.set_item(Item::Chart(i));
        let key = self.metric_keys[self.shown[i]].clone();
        self.zoom_around(runs, key, Anchor::Across(across(rect, column)), zin);
    }

    /// `>` / `<`: the focused chart's x zoomed in (`zin`) or out around the
    /// crosshair's x when it stands inside the range shown, else the middle.
    pub(crate) fn key_zoom(&mut self, runs: &[&Run], zin: bool) {
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return;
        };
        let cross = self.crosshair.as_ref().map(|c| c.x);
        self.zoom_around(runs, key, Anchor::Crosshair(cross), zin);
    }

    /// Chart `key`'s x zoomed in or out around `anchor` in the range shown,
    /// within the main run's data (`runs[0]`); the crosshair stays inside it. The
    /// window is in the chart's own x (steps); on a chart drawn in another x (a
    /// metric, time) the data are the drawn runs' points that read an x (a
    /// compared run's rows too: its x may come at other steps), and the pointer's
    /// place is the point drawn there, so a notch narrows around what is under it
    /// (it narrowed around a step at that fraction of all steps, into rows with no
    /// x: `no data`).
    fn zoom_around(&mut self, runs: &[&Run], key: String, anchor: Anchor, zin: bool) {
        let own = crate::ui::charts::xaxis::own_x(runs, &key);
        let main = (runs.first()).and_then(|r| crate::ui::charts::xaxis::series_in(r, &key, own));
        let placed = self.placed_points(runs, &key);
        let bounds = match &placed {
            Some(p) => {
                (p.iter().map(|q| q.0).reduce(f64::min)).zip(p.iter().map(|q| q.0).reduce(f64::max))
            }
            None => main.and_then(Series::x_bounds),
        };
        let Some((fx0, fx1)) = bounds else {
            return;
        };
        let (x0, x1) = self.zoom.get(&key).copied().unwrap_or((fx0, fx1));
        let at = match anchor {
            Anchor::Across(f) => self
                .under_pointer(runs, &key, (x0, x1), f)
                .unwrap_or(x0 + (x1 - x0) * f),
            Anchor::Crosshair(c) => c
                .filter(|x| (x0..=x1).contains(x))
                .unwrap_or(f64::midpoint(x0, x1)),
        };
        let k = if zin { 0.7 } else { 1.0 / 0.7 };
        let mut nx0 = at - (at - x0) * k;
        let mut nx1 = at + (x1 - at) * k;
        if nx1 - nx0 < 1e-9 * (fx1 - fx0).abs().max(1e-300) || nx1 - nx0 < 1.0 && fx1 - fx0 >= 2.0 {
            return;
        }
        nx0 = nx0.max(fx0);
        nx1 = nx1.min(fx1);
        if nx0 <= fx0 && nx1 >= fx1 {
            self.zoom.remove(&key);
        } else {
            self.zoom.insert(key, (nx0, nx1));
        }
        self.keep_crosshair_in_zoom(runs);
    }
}

/// What a zoom narrows around.
enum Anchor {
    /// The pointer, this far across the chart (0 = left edge, 1 = right edge).
    Across(f64),
    /// The crosshair's x (own x) where it stands inside the range shown, else the
    /// middle.
    Crosshair(Option<f64>),
}

impl Workspace {
    /// The mouse on the runs list (in `area`), or on the highlighted run's
    /// overview below it (`on_overview`): a click on the list highlights the
    /// row, the wheel (`wheel_up`) moves the highlight.
    pub(crate) fn mouse(
        &mut self,
        pos: Position,
        area: Rect,
        on_overview: bool,
        wheel_up: Option<bool>,
    ) {
        let rows = layout::runs_list_rows(area);
        self.overview.focus = on_overview;
        match wheel_up {
            _ if on_overview => {}
            None => {
                let row = usize::from(pos.y.saturating_sub(area.y));
                if (2..2 + rows).contains(&row) {
                    let i = self.scroll + row - 2;
                    if i < self.shown.len() {
                        self.cursor = i;
                    }
                }
            }
            Some(true) => self.cursor = self.cursor.saturating_sub(1),
            Some(false) => self.cursor = (self.cursor + 1).min(self.shown.len().saturating_sub(1)),
        }
    }
}
