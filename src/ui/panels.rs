//! Panel visibility (`[` `]` `4`, the grid `1`), pane sizes (dragged with the
//! mouse, `0` resets them), full screen, pane focus (Tab), and the layout they
//! give: computed here on resize and panel changes, stored in `Screen::areas`.

use ratatui::layout::Position;

use super::layout::{self, PaneSizes, PanelFlags};
use super::App;

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
            wide_left: false,
            media: self.media,
        }
    }
}

impl App {
    /// The panels to lay out: the user's choice, less a system sidebar with nothing to
    /// show (a run without system metrics gives its width to the charts).
    #[must_use]
    pub fn panel_flags(&self) -> layout::PanelFlags {
        let mut f = self.panels.flags();
        f.right &= !self.charts.sys.is_empty();
        f.wide_left = self.runs.in_workspace_list();
        if self.is_host() {
            if self.panels.auto_left {
                f.left = self.screen.size.width >= layout::LIVE_AUTO_LEFT_W;
            }
            let h = &self.host.header;
            f.live = Some(layout::header_lines(
                self.screen.size.width,
                h.bars(),
                h.devices.len(),
            ));
        }
        f
    }

    /// `[` / `]`: hide the sidebar if it is on screen, otherwise show it; when the
    /// terminal has no room for both sidebars, the other one gives way, so the key
    /// always does what it says.
    pub(super) fn toggle_sidebar(&mut self, right: bool) {
        if !right && self.panels.auto_left {
            // From now on the user decides.
            self.panels.auto_left = false;
            self.panels.left = self.screen.areas.left.is_some();
        }
        let shown = |a: &layout::Areas| {
            if right {
                a.right.is_some()
            } else {
                a.left.is_some()
            }
        };
        if shown(&self.screen.areas) {
            if right {
                self.panels.right = false;
            } else {
                self.panels.left = false;
            }
        } else {
            if right {
                self.panels.right = true;
            } else {
                self.panels.left = true;
            }
            let flags = self.panel_flags();
            if !shown(&layout::areas(self.screen.size, flags)) {
                let mut alone = flags;
                if right {
                    alone.left = false;
                } else {
                    alone.right = false;
                }
                if shown(&layout::areas(self.screen.size, alone)) {
                    if right {
                        self.panels.left = false;
                    } else {
                        self.panels.right = false;
                    }
                }
            }
        }
        self.relayout();
    }

    pub(super) fn relayout(&mut self) {
        self.screen.areas = layout::areas(self.screen.size, self.panel_flags());
        self.charts.grid.relayout(self.screen.areas.grid);
        let visible = |p: Pane| match p {
            Pane::Grid => !self.screen.areas.grid.is_empty(),
            Pane::Left => self.screen.areas.left.is_some(),
            Pane::Right => self.screen.areas.right.is_some(),
            Pane::Console => self.screen.areas.console.is_some(),
            Pane::Procs => self.screen.areas.procs.is_some(),
            Pane::Media => self.screen.areas.media.is_some(),
        };
        if !visible(self.panels.focus) {
            self.panels.focus = self.visible_panes()[0];
        }
        if self.screen.areas.left.is_some() {
            if let Some(ws) = self.runs.workspace.as_mut().filter(|w| w.focus_list) {
                ws.focus_list = false;
                self.panels.focus = Pane::Left;
            }
        }
        // The process table's selection stays in view at the new height.
        self.host.procs.keep_in_view(self.screen.areas.procs);
        if self.is_host() && self.host.procs.monitored.is_some() {
            // The process charts' titles are shortened to the new cell width (this
            // lays out again only if the charts appear or vanish, which they do not).
            self.regroup();
        }
    }

    pub(super) fn visible_panes(&self) -> Vec<Pane> {
        let mut v = Vec::new();
        if !self.screen.areas.grid.is_empty() {
            v.push(Pane::Grid);
        }
        if self.screen.areas.media.is_some() {
            v.push(Pane::Media);
        }
        if self.screen.areas.left.is_some() {
            v.push(Pane::Left);
        }
        if self.screen.areas.right.is_some() {
            v.push(Pane::Right);
        }
        if self.screen.areas.console.is_some() {
            v.push(Pane::Console);
        }
        if self.screen.areas.procs.is_some() {
            v.push(Pane::Procs);
        }
        if v.is_empty() {
            // Too small a screen: nothing is laid out.
            v.push(Pane::Grid);
        }
        v
    }

    /// `1`: hide the metrics grid (the other panes take its room), or show it.
    pub(super) fn toggle_grid(&mut self) {
        self.panels.grid = !self.panels.grid;
        self.relayout();
        if self.panels.grid {
            self.panels.focus = Pane::Grid;
        }
    }

    /// `0`: every pane back to its default size.
    pub(super) fn reset_pane_sizes(&mut self) {
        self.panels.sizes = PaneSizes::default();
        self.panels.drag = None;
        self.relayout();
    }

    /// The border under `pos`: the left sidebar's last column, the right
    /// sidebar's first, the console's top line (with the grid beside them: a
    /// sidebar that fills the grid's room has no border to drag).
    pub(super) fn border_at(&self, pos: Position) -> Option<Border> {
        if self.panels.fullscreen || self.screen.areas.grid.is_empty() {
            return None;
        }
        let a = &self.screen.areas;
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

    /// Drag border `b` to `pos`: the pane's new size, clamped by the layout, and
    /// kept as laid out.
    pub(super) fn drag_border(&mut self, b: Border, pos: Position) {
        let a = self.screen.areas;
        match b {
            Border::Left => {
                if let Some(r) = a.left {
                    self.panels.sizes.left = Some((pos.x + 1).saturating_sub(r.x).max(1));
                }
            }
            Border::Right => {
                if let Some(r) = a.right {
                    self.panels.sizes.right = Some(r.right().saturating_sub(pos.x).max(1));
                }
            }
            Border::Console => {
                if let Some(r) = a.console {
                    self.panels.sizes.console = Some(r.bottom().saturating_sub(pos.y).max(1));
                }
            }
        }
        self.relayout();
        // What the layout made of it (a drag past a limit stops at the limit).
        let s = &mut self.panels.sizes;
        match b {
            Border::Left => s.left = self.screen.areas.left.map(|r| r.width).or(s.left),
            Border::Right => s.right = self.screen.areas.right.map(|r| r.width).or(s.right),
            Border::Console => {
                s.console = self.screen.areas.console.map(|r| r.height).or(s.console);
            }
        }
    }
}
