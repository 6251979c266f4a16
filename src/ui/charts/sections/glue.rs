//! The sections in the app: rebuilt with the shown charts, the page in view (drawn
//! by the view, hit by the mouse) and the section keys.

use ratatui::layout::{Position, Rect};

use super::{place, Item, Slot, Tree};
use crate::ui::action::Action;
use crate::ui::charts::grid::GridState;
use crate::ui::charts::Charts;
use crate::ui::panels::{Pane, Panels};
use crate::ui::Effect;

/// The page of a sectioned grid in view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// Each header and chart on the page, where it goes.
    pub slots: Vec<(Rect, Slot)>,
    /// The page (0-based) and how many there are.
    pub page: usize,
    pub pages: usize,
    /// The first and last chart on the page (positions in `shown`), if any.
    pub charts: Option<(usize, usize)>,
}

impl GridState {
    /// The focused page of a sectioned grid drawn in `body` (None: a flat grid).
    #[must_use]
    pub fn section_view(&self, body: Rect) -> Option<View> {
        if !self.sectioned() {
            return None;
        }
        let rows = self.section_rows();
        let pages = super::pages(&rows, body.height, self.rows, self.per_page());
        let page = self.section_page(&rows, &pages);
        let slots = pages
            .get(page)
            .map(|p| place(p, &rows, body, self.cols, self.rows))
            .unwrap_or_default();
        let charts: Vec<usize> = slots
            .iter()
            .filter_map(|(_, s)| match s {
                Slot::Chart(p) => Some(*p),
                Slot::Header { .. } => None,
            })
            .collect();
        let charts = charts.first().zip(charts.last()).map(|(&a, &b)| (a, b));
        Some(View {
            slots,
            page,
            pages: pages.len(),
            charts,
        })
    }
}

/// The sections' part of the charts: what they see besides is the panels (the
/// focus, full screen) and, for the mouse, the grid's area.
impl Charts {
    /// The shown charts changed (filter, keys): sections again from every key
    /// (none in the live monitor, `host`), the shown charts in their order, the
    /// focus on the same chart (`keep`) or the first, a focused header kept while
    /// its section is there.
    pub(crate) fn sections_refiltered(&mut self, host: bool, keep: bool) {
        let s = &self.grid.sections;
        let header = s
            .header
            .and_then(|h| s.tree.sections.get(h))
            .map(|sec| sec.path.clone());
        let focused = self.shown.get(self.grid.focus).copied();
        let (tree, order) = if host {
            (Tree::default(), std::mem::take(&mut self.shown))
        } else {
            Tree::build(&self.metric_keys, &self.shown)
        };
        self.grid.focus = focused
            .filter(|_| keep)
            .and_then(|m| order.iter().position(|&x| x == m))
            .unwrap_or(0);
        self.shown = order;
        self.grid.sections.header =
            header.and_then(|p| tree.sections.iter().position(|s| s.path == p));
        self.grid.sections.tree = tree;
        self.grid.settle_sections(self.shown.len());
    }

    /// The header or chart of the grid's page under `pos` (sectioned grid only),
    /// the grid drawn in `grid`.
    pub(crate) fn section_slot_at(
        &self,
        panels: &Panels,
        grid: Rect,
        pos: Position,
    ) -> Option<(Rect, Slot)> {
        if panels.fullscreen || !grid.contains(pos) {
            return None;
        }
        let view = self.grid.section_view(self.grid.body)?;
        view.slots.into_iter().find(|(r, _)| r.contains(pos))
    }

    /// A click on a header: it takes the focus, and its section collapses or
    /// expands (a repeated header's too).
    pub(crate) fn click_section(&mut self, panels: &mut Panels, sec: usize) -> Effect {
        panels.focus = Pane::Grid;
        self.grid.set_item(Item::Header(sec));
        self.grid.sections.toggle(sec);
        self.grid.settle_sections(self.shown.len());
        Effect::REDRAW
    }

    /// The section keys (and enter on a header); None: not one of them here.
    pub(crate) fn act_sections(&mut self, panels: &mut Panels, a: Action) -> Option<Effect> {
        let n = self.shown.len();
        let grid = panels.focus == Pane::Grid && !panels.fullscreen;
        match a {
            _ if !self.grid.sectioned() => None,
            Action::Fullscreen if grid && self.grid.sections.header.is_some() => {
                self.grid.toggle_focused_section(n);
                Some(Effect::REDRAW)
            }
            Action::ToggleSection if grid => {
                self.grid.toggle_focused_section(n);
                Some(Effect::REDRAW)
            }
            Action::CollapseAllSections | Action::ExpandAllSections => {
                panels.fullscreen = false;
                self.grid.collapse_all(a == Action::CollapseAllSections, n);
                Some(Effect::REDRAW)
            }
            _ => None,
        }
    }
}
