//! The sections in the app: rebuilt with the shown charts, the page in view (drawn
//! by the view, hit by the mouse) and the section keys.

use ratatui::layout::{Position, Rect};

use super::{place, Item, Slot, Tree};
use crate::ui::action::Action;
use crate::ui::charts::grid::GridState;
use crate::ui::panels::Pane;
use crate::ui::{App, Effect};

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
        let pages = super::pages(&rows, body.height, self.rows);
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

impl App {
    /// The shown charts changed (filter, keys): sections again from every key,
    /// the shown charts in their order, the focus on the same chart (`keep`) or the
    /// first, a focused header kept while its section is there.
    pub(crate) fn sections_refiltered(&mut self, keep: bool) {
        let s = &self.charts.grid.sections;
        let header = s
            .header
            .and_then(|h| s.tree.sections.get(h))
            .map(|sec| sec.path.clone());
        let focused = self.charts.shown.get(self.charts.grid.focus).copied();
        let (tree, order) = if self.is_host() {
            (Tree::default(), std::mem::take(&mut self.charts.shown))
        } else {
            Tree::build(&self.charts.metric_keys, &self.charts.shown)
        };
        self.charts.grid.focus = focused
            .filter(|_| keep)
            .and_then(|m| order.iter().position(|&x| x == m))
            .unwrap_or(0);
        self.charts.shown = order;
        self.charts.grid.sections.header =
            header.and_then(|p| tree.sections.iter().position(|s| s.path == p));
        self.charts.grid.sections.tree = tree;
        self.charts.grid.settle_sections(self.charts.shown.len());
    }

    /// The header or chart of the grid's page under `pos` (sectioned grid only).
    pub(crate) fn section_slot_at(&self, pos: Position) -> Option<(Rect, Slot)> {
        if self.panels.fullscreen || !self.screen.areas.grid.contains(pos) {
            return None;
        }
        let view = self.charts.grid.section_view(self.charts.grid.body)?;
        view.slots.into_iter().find(|(r, _)| r.contains(pos))
    }

    /// A click on a header: it takes the focus, and its section collapses or
    /// expands (a repeated header's too).
    pub(crate) fn click_section(&mut self, sec: usize) -> Effect {
        self.panels.focus = Pane::Grid;
        self.charts.grid.set_item(Item::Header(sec));
        self.charts.grid.sections.toggle(sec);
        self.charts.grid.settle_sections(self.charts.shown.len());
        Effect::REDRAW
    }

    /// The section keys (and enter on a header); None: not one of them here.
    pub(crate) fn act_sections(&mut self, a: Action) -> Option<Effect> {
        let n = self.charts.shown.len();
        let grid = self.panels.focus == Pane::Grid && !self.panels.fullscreen;
        match a {
            _ if !self.charts.grid.sectioned() => None,
            Action::Fullscreen if grid && self.charts.grid.sections.header.is_some() => {
                self.charts.grid.toggle_focused_section(n);
                Some(Effect::REDRAW)
            }
            Action::ToggleSection if grid => {
                self.charts.grid.toggle_focused_section(n);
                Some(Effect::REDRAW)
            }
            Action::CollapseAllSections | Action::ExpandAllSections => {
                self.panels.fullscreen = false;
                self.charts
                    .grid
                    .collapse_all(a == Action::CollapseAllSections, n);
                Some(Effect::REDRAW)
            }
            _ => None,
        }
    }
}
