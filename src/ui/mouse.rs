//! The mouse: a click focuses the chart or pane under it (and selects the process
//! table row under it); the wheel zooms the chart under it about the pointer, or
//! scrolls the pane under it; a pane's border (a sidebar's inner edge, the
//! console's top) dragged with the left button resizes the pane. Hits are tested against the areas in state, the ones
//! the view draws.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::action::Action;
use super::layout;
use super::panels::Pane;
use super::{App, Effect, Overlay};

impl App {
    /// The side pane (overview, system sidebar, console, media) under a mouse position.
    fn pane_at(&self, pos: Position) -> Option<Pane> {
        [
            (self.screen.areas.left, Pane::Left),
            (self.screen.areas.right, Pane::Right),
            (self.screen.areas.console, Pane::Console),
            (self.screen.areas.procs, Pane::Procs),
            (self.screen.areas.media, Pane::Media),
        ]
        .into_iter()
        .find_map(|(area, pane)| area.is_some_and(|r| r.contains(pos)).then_some(pane))
    }

    /// The chart under `pos`: its index in the shown charts and its area.
    fn chart_at(&self, pos: Position) -> Option<(usize, ratatui::layout::Rect)> {
        if self.panels.fullscreen {
            // The chart drawn over the whole body (see `ui::render::render_buffer`).
            Some((self.charts.grid.focus, self.screen.areas.body))
        } else if self.charts.grid.sectioned() {
            match self
                .charts
                .section_slot_at(&self.panels, self.screen.areas.grid, pos)?
            {
                (r, crate::ui::charts::sections::Slot::Chart(i)) => Some((i, r)),
                (_, crate::ui::charts::sections::Slot::Header { .. }) => None,
            }
        } else if self.screen.areas.grid.contains(pos) {
            let body = layout::grid_body(self.screen.areas.grid);
            let start = self.charts.grid.page_start();
            (0..self.charts.grid.per_page())
                .take_while(|i| start + i < self.charts.shown.len())
                .map(|i| {
                    (
                        start + i,
                        self.charts.grid.cell(body, self.charts.shown.len(), i),
                    )
                })
                .find(|(_, r)| r.contains(pos))
        } else {
            None
        }
    }

    /// A right click or right-button drag on a metric chart: it takes focus and the
    /// crosshair stands at the point nearest the pointer's x.
    fn mouse_crosshair(&mut self, pos: Position) -> Effect {
        if self.is_host() || self.overlay.covers() || self.filter_target.is_some() {
            return Effect::NONE;
        }
        let Some((i, rect)) = self.chart_at(pos) else {
            return Effect::NONE;
        };
        self.charts
            .grid
            .set_item(crate::ui::charts::sections::Item::Chart(i));
        self.panels.focus = Pane::Grid;
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return Effect::REDRAW;
        };
        // The x range the chart draws: its zoom, else every drawn run's.
        let runs = super::drawn_runs(&self.shown.run, &self.runs);
        let full = runs
            .iter()
            .filter_map(|r| r.metrics.get(&key).and_then(crate::store::Series::x_bounds))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        let Some((x0, x1)) = self.charts.zoom.get(&key).copied().or(full) else {
            return Effect::REDRAW;
        };
        let frac = if rect.width > 2 {
            (f64::from(pos.x.saturating_sub(rect.x + 1)) / f64::from(rect.width - 2))
                .clamp(0.0, 1.0)
        } else {
            0.5
        };
        self.charts.point_crosshair(&runs, x0 + (x1 - x0) * frac);
        Effect::REDRAW
    }

    pub(super) fn on_mouse(&mut self, m: MouseEvent) -> Effect {
        let pos = Position::new(m.column, m.row);
        if matches!(
            m.kind,
            MouseEventKind::Down(MouseButton::Right) | MouseEventKind::Drag(MouseButton::Right)
        ) {
            return self.mouse_crosshair(pos);
        }
        match m.kind {
            MouseEventKind::Drag(MouseButton::Left) => {
                return match self.panels.drag {
                    Some(b) => {
                        self.drag_border(b, pos);
                        Effect::REDRAW
                    }
                    None => Effect::NONE,
                };
            }
            MouseEventKind::Up(_) => {
                self.panels.drag = None;
                return Effect::NONE;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                // A press on a border may start a drag; it is a click too.
                let free = !self.overlay.covers() && self.filter_target.is_none();
                self.panels.drag = self.border_at(pos).filter(|_| free);
            }
            _ => {}
        }
        let zoom_in = match m.kind {
            MouseEventKind::Down(MouseButton::Left) => None,
            MouseEventKind::ScrollUp => Some(true),
            MouseEventKind::ScrollDown => Some(false),
            _ => return Effect::NONE,
        };
        if matches!(self.overlay, Overlay::Help { .. }) || self.filter_target.is_some() {
            return Effect::NONE;
        }
        if let Some(fx) = self.mouse_on_runs(pos, zoom_in) {
            return fx;
        }
        // A click on a section header toggles the section.
        if let (None, Some((_, crate::ui::charts::sections::Slot::Header { sec, .. }))) = (
            zoom_in,
            self.charts
                .section_slot_at(&self.panels, self.screen.areas.grid, pos),
        ) {
            return self.charts.click_section(&mut self.panels, sec);
        }
        // Which chart is under the pointer?
        let hit = self.chart_at(pos);
        match zoom_in {
            None => {
                if let Some((i, _)) = hit {
                    self.charts
                        .grid
                        .set_item(crate::ui::charts::sections::Item::Chart(i));
                    self.panels.focus = Pane::Grid;
                } else if self.screen.areas.procs.is_some_and(|r| r.contains(pos)) {
                    // A click on a row selects it (the same rows the view draws).
                    self.host
                        .procs
                        .click(self.screen.areas.procs, pos.y, &mut self.panels);
                } else if let Some(p) = self.pane_at(pos) {
                    self.panels.focus = p;
                } else {
                    return Effect::NONE;
                }
                Effect::REDRAW
            }
            Some(zin) => {
                let Some((i, rect)) = hit else {
                    return self.wheel_pane(pos, zin);
                };
                self.wheel_zoom(i, rect, m.column, zin)
            }
        }
    }

    /// The wheel over a pane that is no chart: scrolls that pane.
    fn wheel_pane(&mut self, pos: Position, zin: bool) -> Effect {
        let dy = if zin { -1 } else { 1 };
        let old = self.panels.focus;
        let Some(p) = self.pane_at(pos) else {
            return Effect::NONE;
        };
        self.panels.focus = p;
        self.move_focus(if dy < 0 {
            Action::FocusUp
        } else {
            Action::FocusDown
        });
        self.panels.focus = old;
        Effect::REDRAW
    }

    /// The wheel over chart `i` (in `rect`) at `column`: zooms in (`zin`) or
    /// out around the x under the pointer, within the chart's data.
    fn wheel_zoom(&mut self, i: usize, rect: Rect, column: u16, zin: bool) -> Effect {
        self.charts
            .grid
            .set_item(crate::ui::charts::sections::Item::Chart(i));
        let key = self.charts.metric_keys[self.charts.shown[i]].clone();
        let Some((fx0, fx1)) = self
            .shown
            .run
            .metrics
            .get(&key)
            .and_then(crate::store::Series::x_bounds)
        else {
            return Effect::REDRAW;
        };
        let (x0, x1) = self.charts.zoom.get(&key).copied().unwrap_or((fx0, fx1));
        let frac = if rect.width > 2 {
            (f64::from(column.saturating_sub(rect.x + 1)) / f64::from(rect.width - 2))
                .clamp(0.0, 1.0)
        } else {
            0.5
        };
        let at = x0 + (x1 - x0) * frac;
        let k = if zin { 0.7 } else { 1.0 / 0.7 };
        let mut nx0 = at - (at - x0) * k;
        let mut nx1 = at + (x1 - at) * k;
        if nx1 - nx0 < 1e-9 * (fx1 - fx0).abs().max(1e-300) || nx1 - nx0 < 1.0 && fx1 - fx0 >= 2.0 {
            return Effect::REDRAW;
        }
        nx0 = nx0.max(fx0);
        nx1 = nx1.min(fx1);
        if nx0 <= fx0 && nx1 >= fx1 {
            self.charts.zoom.remove(&key);
        } else {
            self.charts.zoom.insert(key, (nx0, nx1));
        }
        Effect::REDRAW
    }
}

impl App {
    /// The workspace's runs pane under the pointer: a click on the list highlights
    /// the row (and focuses the list), the wheel moves the highlight; on the
    /// highlighted run's overview below it, a click focuses the overview and the
    /// wheel scrolls its active section.
    fn mouse_on_runs(&mut self, pos: Position, wheel_up: Option<bool>) -> Option<Effect> {
        if !self.runs.in_workspace_list() || self.panels.fullscreen {
            return None;
        }
        let left = self.screen.areas.left.filter(|r| r.contains(pos))?;
        let (area, overview) = self.runs.workspace.as_deref()?.split(left);
        self.panels.focus = Pane::Left;
        let on_overview = overview.is_some_and(|r| r.contains(pos));
        if on_overview && wheel_up.is_some() {
            let lay = self.panes.overview.layout(self.screen.limits.overview_room);
            self.panes
                .overview
                .scroll_by(&lay, if wheel_up == Some(true) { -1 } else { 1 });
        }
        let rows = layout::runs_list_rows(area);
        let ws = self.runs.workspace.as_mut()?;
        ws.overview.focus = on_overview;
        match wheel_up {
            _ if on_overview => {}
            None => {
                let row = usize::from(pos.y.saturating_sub(area.y));
                if (2..2 + rows).contains(&row) {
                    let i = ws.scroll + row - 2;
                    if i < ws.shown.len() {
                        ws.cursor = i;
                    }
                }
            }
            Some(true) => ws.cursor = ws.cursor.saturating_sub(1),
            Some(false) => ws.cursor = (ws.cursor + 1).min(ws.shown.len().saturating_sub(1)),
        }
        self.sync_overview(false);
        Some(Effect::REDRAW)
    }
}
