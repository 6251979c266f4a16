//! What a motion key means to the pane it moves: an arrow steps, a page key
//! pages or goes to either end. The router hands the [`Motion`] to the pane in
//! focus (the grid's is `charts/grid/motion.rs`); the side panes' scroll
//! positions are worked out here from their limits.

use super::action::Action;
use super::layout;
use super::overview::{OverviewLayout, OverviewPane};

/// A motion key, as the panes take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Motion {
    /// An arrow: one step right/down (positive) or left/up.
    Step { dx: isize, dy: isize },
    /// A page key: `delta` pages on, or (`to`) to the first (`Some(false)`) or
    /// last (`Some(true)`) page.
    Page { delta: isize, to: Option<bool> },
}

impl Motion {
    /// The motion an action is (None: not a motion key).
    pub(crate) fn of(a: Action) -> Option<Motion> {
        let (dx, dy) = match a {
            Action::FocusUp => (0, -1),
            Action::FocusDown => (0, 1),
            Action::FocusLeft => (-1, 0),
            Action::FocusRight => (1, 0),
            Action::NextPage => return Some(Motion::Page { delta: 1, to: None }),
            Action::PrevPage => {
                return Some(Motion::Page {
                    delta: -1,
                    to: None,
                })
            }
            Action::FirstPage => {
                return Some(Motion::Page {
                    delta: 0,
                    to: Some(false),
                })
            }
            Action::LastPage => {
                return Some(Motion::Page {
                    delta: 0,
                    to: Some(true),
                })
            }
            _ => return None,
        };
        Some(Motion::Step { dx, dy })
    }

    /// The help overlay's scroll, bounded by its real last offset (so `end`
    /// then `up` moves); a page is ten lines.
    pub(crate) fn help(self, scroll: usize, max: usize) -> usize {
        match self {
            Motion::Step { dy, .. } => scroll.saturating_add_signed(dy).min(max),
            Motion::Page {
                to: Some(false), ..
            } => 0,
            Motion::Page { to: Some(true), .. } => max,
            Motion::Page { delta, to: None } => scroll.saturating_add_signed(delta * 10).min(max),
        }
    }

    /// The overview's scroll (its layout: `lay`).
    pub(crate) fn overview(self, pane: &mut OverviewPane, lay: &OverviewLayout) {
        match self {
            Motion::Step { dy, .. } => pane.scroll_by(lay, dy),
            Motion::Page { to: Some(end), .. } => pane.scroll_to(lay, end),
            Motion::Page { delta, to: None } => pane.page_by(lay, delta),
        }
    }

    /// The system sidebar's first chart, of `len` charts, `page` on a page.
    pub(crate) fn system(self, first: usize, len: usize, page: usize) -> usize {
        match self {
            Motion::Step { dy, .. } => scroll(first, dy, len),
            Motion::Page {
                to: Some(false), ..
            } => 0,
            Motion::Page { to: Some(true), .. } => len.saturating_sub(page),
            Motion::Page { delta, to: None } => scroll(first, delta * signed(page), len),
        }
    }

    /// The console's lines back from the end, at most `max`, `page` lines a page
    /// (down is towards the end).
    pub(crate) fn console(self, back: usize, max: usize, page: usize) -> usize {
        let at = back.min(max);
        match self {
            Motion::Step { dy, .. } => scroll(at, -dy, max + 1),
            Motion::Page {
                to: Some(false), ..
            } => max,
            Motion::Page { to: Some(true), .. } => 0,
            Motion::Page { delta, to: None } => scroll(at, -delta * signed(page), max + 1),
        }
    }

    /// The process table's selection move, in `room` rows: by how many rows, or
    /// to the first or last.
    pub(crate) fn procs(self, room: usize) -> (isize, Option<bool>) {
        match self {
            Motion::Step { dy, .. } => (dy, None),
            Motion::Page { delta, to } => (delta * signed(layout::list_page(room)), to),
        }
    }
}

/// `pos` moved by `d`, within `len` positions.
pub(super) fn scroll(pos: usize, d: isize, len: usize) -> usize {
    pos.saturating_add_signed(d).min(len.saturating_sub(1))
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}
