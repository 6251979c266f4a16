//! Panel visibility (`[` `]` `4`, the grid `1`), pane sizes (dragged with the
//! mouse, `0` resets them), full screen, pane focus (Tab), and the layout they
//! give: computed here on resize and panel changes, stored in `Screen::areas`.

use ratatui::layout::{Position, Rect};

use super::layout::{self, Areas, PaneSizes, PanelFlags};
use super::{Asks, OverviewPane};

/// A pane that can hold focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Grid,
    Left,
    Right,
    Console,
    /// The live monitor's process table.
    Procs,
    /// The media pane (`3`).
    Media,
}

/// A pane border the mouse can drag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Border {
    /// The left sidebar's right edge.
    Left,
    /// The right sidebar's left edge.
    Right,
    /// The console's top edge.
    Console,
}

/// Panels and overlays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panels {
    pub left: bool,
    pub right: bool,
    pub console: bool,
    pub fullscreen: bool,
    /// Full screen is the system sidebar's top chart (entered from the sidebar),
    /// not the grid's focused one.
    pub system_full: bool,
    pub focus: Pane,
    /// Live monitor: the overview shows only on a screen wide enough for it beside
    /// the charts and the process table, until the user toggles it (`[`).
    pub auto_left: bool,
    /// The metrics grid (`1`).
    pub grid: bool,
    /// Sizes dragged with the mouse.
    pub sizes: PaneSizes,
    /// The border being dragged (left button held since it was pressed on it).
    pub drag: Option<Border>,
    /// The media pane (`3`).
    pub media: bool,
}

impl Default for Panels {
    fn default() -> Self {
        Self {
            left: true,
            right: true,
            console: false,
            fullscreen: false,
            system_full: false,
            focus: Pane::Grid,
            auto_left: false,
            grid: true,
            sizes: PaneSizes::default(),
            drag: None,
            media: false,
        }
    }
}

impl Panels {
    #[must_use]
    pub fn flags(&self) -> PanelFlags {
        PanelFlags {
            left: self.left,
            right: self.right,
            console: self.console,
            grid: self.grid,
            sizes: self.sizes,
            live: None,
            procs: true,
            wide_left: false,
            media: self.media,
        }
    }
}

/// What the layout takes from outside the panels: the screen, whether the run
/// has system charts, whether the workspace's runs list is in the left pane, and
/// the live monitor's header lines.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Around {
    pub size: Rect,
    /// No system charts: the system sidebar gives its width to the charts.
    pub no_system: bool,
    /// The workspace's runs list is in the left pane (it may be wider).
    pub wide_left: bool,
    /// Live: the header's height in lines.
    pub live: Option<u16>,
    /// Live: the process table is laid out (not on a host read from Prometheus).
    pub procs: bool,
}

/// The panes shown in `a`, in focus order (the grid alone on a screen too
/// small for any).
pub(crate) fn visible_panes(a: &Areas) -> Vec<Pane> {
    let mut v = Vec::new();
    if !a.grid.is_empty() {
        v.push(Pane::Grid);
    }
    if a.media.is_some() {
        v.push(Pane::Media);
    }
    if a.left.is_some() {
        v.push(Pane::Left);
    }
    if a.right.is_some() {
        v.push(Pane::Right);
    }
    if a.console.is_some() {
        v.push(Pane::Console);
    }
    if a.procs.is_some() {
        v.push(Pane::Procs);
    }
    if v.is_empty() {
        // Too small a screen: nothing is laid out.
        v.push(Pane::Grid);
    }
    v
}

/// The panels' keys and drags change the panels; what they see besides is the
/// areas laid out now and what the layout takes from outside ([`Around`]). Each
/// change asks the router to lay out again; what it needs of the new layout it
/// computes with the same function.
impl Panels {
    /// The panels to lay out: the user's choice, less a system sidebar with
    /// nothing to show; in the live monitor, an automatic overview where the
    /// screen is wide enough, and the header.
    #[must_use]
    pub(crate) fn flags_in(&self, at: Around) -> PanelFlags {
        let mut f = self.flags();
        f.right &= !at.no_system;
        f.wide_left = at.wide_left;
        if let Some(lines) = at.live {
            if self.auto_left {
                f.left = at.size.width >= layout::LIVE_AUTO_LEFT_W;
            }
            f.live = Some(lines);
            f.procs = at.procs;
        }
        f
    }

    /// `[` / `]`: hide the sidebar if it is on screen (in `now`), otherwise show
    /// it; when the terminal has no room for both sidebars, the other one gives
    /// way, so the key always does what it says.
    pub(crate) fn toggle_sidebar(&mut self, right: bool, now: &Areas, at: Around, asks: &mut Asks) {
        if !right && self.auto_left {
            // From now on the user decides.
            self.auto_left = false;
            self.left = now.left.is_some();
        }
        let shown = |a: &Areas| {
            if right {
                a.right.is_some()
            } else {
                a.left.is_some()
            }
        };
        if shown(now) {
            *self.side(right) = false;
        } else {
            *self.side(right) = true;
            let flags = self.flags_in(at);
            if !shown(&layout::areas(at.size, flags)) {
                let mut alone = flags;
                if right {
                    alone.left = false;
                } else {
                    alone.right = false;
                }
                if shown(&layout::areas(at.size, alone)) {
                    *self.side(!right) = false;
                }
            }
        }
        asks.relayout();
    }

    fn side(&mut self, right: bool) -> &mut bool {
        if right {
            &mut self.right
        } else {
            &mut self.left
        }
    }

    /// The focus moves off a pane that is not laid out in `a`.
    pub(crate) fn refocus(&mut self, a: &Areas) {
        let visible = match self.focus {
            Pane::Grid => !a.grid.is_empty(),
            Pane::Left => a.left.is_some(),
            Pane::Right => a.right.is_some(),
            Pane::Console => a.console.is_some(),
            Pane::Procs => a.procs.is_some(),
            Pane::Media => a.media.is_some(),
        };
        if !visible {
            self.focus = visible_panes(a)[0];
        }
    }

    /// `4`: show the console or hide it; the pane to focus once laid out (the
    /// console shown again, where it gets room: [`Panels::focus_if_shown`]).
    pub(crate) fn toggle_console(&mut self, asks: &mut Asks) -> Option<Pane> {
        self.console = !self.console;
        asks.relayout();
        self.console.then_some(Pane::Console)
    }

    /// `1`: hide the metrics grid (the other panes take its room), or show it;
    /// the pane to focus once laid out (the grid shown again).
    pub(crate) fn toggle_grid(&mut self, asks: &mut Asks) -> Option<Pane> {
        self.grid = !self.grid;
        asks.relayout();
        self.grid.then_some(Pane::Grid)
    }

    /// After a toggle was laid out in `a`: focus `p` if it is shown (the grid
    /// also where nothing is: it is the focus then).
    pub(crate) fn focus_if_shown(&mut self, p: Option<Pane>, a: &Areas) {
        if let Some(p) = p.filter(|p| visible_panes(a).contains(p)) {
            self.focus = p;
        }
    }

    /// Escape, after the overlays and the crosshair: out of full screen, else
    /// the focus back to the grid; whether it did either.
    pub(crate) fn back(&mut self) -> bool {
        if self.fullscreen {
            self.fullscreen = false;
        } else if self.focus != Pane::Grid {
            self.focus = Pane::Grid;
        } else {
            return false;
        }
        true
    }

    /// Tab (`forward`) or back-tab: the next pane shown in `a`. In the overview
    /// (not the workspace's runs list: `in_list`), tab visits its sections
    /// before the next pane.
    pub(crate) fn cycle_focus(
        &mut self,
        forward: bool,
        a: &Areas,
        overview: &mut OverviewPane,
        in_list: bool,
    ) {
        if self.focus == Pane::Left
            && !self.fullscreen
            && a.left.is_some()
            && !in_list
            && overview.step_section(forward)
        {
            return;
        }
        let panes = visible_panes(a);
        let i = panes.iter().position(|&p| p == self.focus).unwrap_or(0);
        let j = if forward {
            (i + 1) % panes.len()
        } else {
            (i + panes.len() - 1) % panes.len()
        };
        self.focus = panes[j];
        if panes[j] == Pane::Left {
            overview.enter(forward);
        }
    }

    /// `0`: every pane back to its default size.
    pub(crate) fn reset_sizes(&mut self, asks: &mut Asks) {
        self.sizes = PaneSizes::default();
        self.drag = None;
        asks.relayout();
    }

    /// The left button pressed at `pos`: on a border of the panes in `a`, a
    /// drag starts (only with nothing in front of the panes: `free`).
    pub(crate) fn press(&mut self, a: &Areas, pos: Position, free: bool) {
        self.drag = self.border_at(a, pos).filter(|_| free);
    }

    /// The border under `pos` in `a`: the left sidebar's last column, the right
    /// sidebar's first, the console's top line (with the grid beside them: a
    /// sidebar that fills the grid's room has no border to drag).
    fn border_at(&self, a: &Areas, pos: Position) -> Option<Border> {
        if self.fullscreen || a.grid.is_empty() {
            return None;
        }
        if a.left
            .is_some_and(|r| r.contains(pos) && pos.x + 1 == r.right())
        {
            return Some(Border::Left);
        }
        if a.right.is_some_and(|r| r.contains(pos) && pos.x == r.x) {
            return Some(Border::Right);
        }
        if a.console.is_some_and(|r| r.contains(pos) && pos.y == r.y) {
            return Some(Border::Console);
        }
        None
    }

    /// Drag border `b` (of the panes in `a`) to `pos`: the pane's new size,
    /// clamped by the layout ([`Panels::dragged`] once laid out).
    pub(crate) fn drag_border(&mut self, b: Border, pos: Position, a: &Areas, asks: &mut Asks) {
        match b {
            Border::Left => {
                if let Some(r) = a.left {
                    self.sizes.left = Some((pos.x + 1).saturating_sub(r.x).max(1));
                }
            }
            Border::Right => {
                if let Some(r) = a.right {
                    self.sizes.right = Some(r.right().saturating_sub(pos.x).max(1));
                }
            }
            Border::Console => {
                if let Some(r) = a.console {
                    self.sizes.console = Some(r.bottom().saturating_sub(pos.y).max(1));
                }
            }
        }
        asks.relayout();
    }

    /// What the layout (`a`) made of a drag of border `b` is kept (a drag past a
    /// limit stops at the limit).
    pub(crate) fn dragged(&mut self, b: Border, a: &Areas) {
        let s = &mut self.sizes;
        match b {
            Border::Left => s.left = a.left.map(|r| r.width).or(s.left),
            Border::Right => s.right = a.right.map(|r| r.width).or(s.right),
            Border::Console => {
                s.console = a.console.map(|r| r.height).or(s.console);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(width: u16) -> Around {
        Around {
            size: Rect::new(0, 0, width, 40),
            no_system: false,
            wide_left: false,
            live: None,
            procs: true,
        }
    }

    #[test]
    fn a_sidebar_shown_where_there_is_no_room_for_both_makes_the_other_give_way() {
        let at = at(80);
        let mut p = Panels::default();
        let now = layout::areas(at.size, p.flags_in(at));
        // 80 columns: the overview, no system sidebar.
        assert!(now.left.is_some() && now.right.is_none());
        let mut asks = Asks::default();
        p.toggle_sidebar(true, &now, at, &mut asks);
        assert!(p.right && !p.left && asks.relayout);
        let after = layout::areas(at.size, p.flags_in(at));
        assert!(after.right.is_some() && after.left.is_none());
        // And back: `]` hides what is shown.
        p.toggle_sidebar(true, &after, at, &mut asks);
        assert!(!p.right && !p.left);
    }

    #[test]
    fn the_focus_leaves_a_pane_that_is_not_laid_out() {
        let at = at(120);
        let mut p = Panels {
            focus: Pane::Console,
            ..Panels::default()
        };
        p.refocus(&layout::areas(at.size, p.flags_in(at)));
        assert_eq!(p.focus, Pane::Grid);
        // The console toggled on takes focus once laid out.
        let mut asks = Asks::default();
        let then = p.toggle_console(&mut asks);
        p.focus_if_shown(then, &layout::areas(at.size, p.flags_in(at)));
        assert_eq!(p.focus, Pane::Console);
        // The right sidebar of a run without system charts is not laid out.
        let bare = Around {
            no_system: true,
            ..at
        };
        assert!(layout::areas(bare.size, p.flags_in(bare)).right.is_none());
    }
}
