//! What the keys the router hands on mean to the panes: a motion key to the pane
//! it moves (an arrow steps, a page key pages or goes to either end: the router
//! hands the [`Motion`] to the pane in focus, the grid's is in
//! `charts/grid/keys.rs`; the side panes' scroll positions are worked out here
//! from their limits), and an edit to the filter typed into ([`Filters`]).

use super::action::Action;
use super::filter::{FilterState, FilterTarget};
use super::host::procs::ProcsPane;
use super::layout;
use super::overview::{OverviewLayout, OverviewPane};
use super::{ConsolePane, SystemPane};

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

    /// The system sidebar's first chart, of `len` charts, `page` on a page: at
    /// most the last page's first, so that the last page is full (as the grid's).
    pub(crate) fn system(self, first: usize, len: usize, page: usize) -> usize {
        let max = len.saturating_sub(page);
        let by = |d: isize| first.min(max).saturating_add_signed(d).min(max);
        match self {
            Motion::Step { dy, .. } => by(dy),
            Motion::Page {
                to: Some(false), ..
            } => 0,
            Motion::Page { to: Some(true), .. } => max,
            Motion::Page { delta, to: None } => by(delta * signed(page)),
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

/// The filters typed into on the router's screen (the inspector's is in its
/// overlay; the workspace's prompts are typed through `type_workspace`), lent
/// with what each keeps beside its pattern: the position it scrolls back to.
pub(crate) struct Filters<'a> {
    pub metrics: &'a mut FilterState,
    pub system: &'a mut SystemPane,
    pub overview: &'a mut FilterState,
    pub console: &'a mut ConsolePane,
    pub procs: &'a mut ProcsPane,
    pub stats: &'a mut FilterState,
}

/// The list a filter's change leaves to be rebuilt by its feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refilter {
    Metrics,
    System,
    Overview,
    /// The statistics table's rows (its cursor starts over).
    Stats,
    /// None, or the one the filter's own pane rebuilt.
    Done,
}

impl Filters<'_> {
    /// The filter typed into as `t` (None: one typed elsewhere).
    pub(crate) fn get(&mut self, t: FilterTarget) -> Option<&mut FilterState> {
        Some(match t {
            FilterTarget::Metrics => self.metrics,
            FilterTarget::System => &mut self.system.filter,
            FilterTarget::Overview => self.overview,
            FilterTarget::Console => &mut self.console.filter,
            FilterTarget::Procs => &mut self.procs.filter,
            FilterTarget::Stats => self.stats,
            FilterTarget::Records
            | FilterTarget::Hosts
            | FilterTarget::Runs
            | FilterTarget::Group
            | FilterTarget::Column => return None,
        })
    }

    /// Edit the filter `t` with `f`: a changed filter starts again from its
    /// first match, as a search does; the list left to rebuild.
    pub(crate) fn edit<R>(
        mut self,
        t: FilterTarget,
        f: impl FnOnce(&mut FilterState) -> R,
    ) -> Refilter {
        let Some(filter) = self.get(t) else {
            return Refilter::Done;
        };
        f(filter);
        match t {
            FilterTarget::Metrics => Refilter::Metrics,
            FilterTarget::System => {
                self.system.scroll = 0;
                Refilter::System
            }
            FilterTarget::Overview => Refilter::Overview,
            FilterTarget::Console => {
                self.console.back = 0;
                Refilter::Done
            }
            FilterTarget::Procs => {
                self.procs.sel = 0;
                self.procs.scroll = 0;
                self.procs.rebuild();
                Refilter::Done
            }
            FilterTarget::Stats => Refilter::Stats,
            _ => Refilter::Done,
        }
    }

    /// Every filter cleared (the process table rebuilt); the router
    /// rebuilds the other lists.
    pub(crate) fn clear_all(self) {
        self.metrics.clear();
        self.system.filter.clear();
        self.overview.clear();
        self.console.filter.clear();
        self.procs.filter.clear();
        self.procs.rebuild();
    }
}

/// `pos` moved by `d`, within `len` positions.
pub(super) fn scroll(pos: usize, d: isize, len: usize) -> usize {
    pos.saturating_add_signed(d).min(len.saturating_sub(1))
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn motion(a: Action) -> Motion {
        Motion::of(a).unwrap()
    }

    #[test]
    fn the_console_scrolls_back_from_its_newest_line() {
        let (max, page) = (50, 10);
        // Up is back in time, down towards the newest line (0 lines back).
        assert_eq!(motion(Action::FocusUp).console(0, max, page), 1);
        assert_eq!(motion(Action::FocusDown).console(0, max, page), 0);
        assert_eq!(motion(Action::FocusUp).console(max, max, page), max);
        // The first page is the oldest line's, the last the newest's.
        assert_eq!(motion(Action::FirstPage).console(7, max, page), max);
        assert_eq!(motion(Action::LastPage).console(7, max, page), 0);
        assert_eq!(motion(Action::PrevPage).console(7, max, page), 17);
        assert_eq!(motion(Action::NextPage).console(7, max, page), 0);
        // A position past the limit (the console shrank) counts from the limit.
        assert_eq!(motion(Action::FocusDown).console(80, max, page), max - 1);
    }

    #[test]
    fn help_and_the_system_sidebar_stay_within_their_limits() {
        assert_eq!(motion(Action::FocusDown).help(4, 4), 4);
        assert_eq!(motion(Action::NextPage).help(0, 25), 10);
        assert_eq!(motion(Action::LastPage).help(0, 25), 25);
        assert_eq!(motion(Action::FirstPage).help(9, 25), 0);
        // 12 charts, 5 on a page: the last page starts at the 8th.
        assert_eq!(motion(Action::LastPage).system(0, 12, 5), 7);
        // It scrolls no further: the last chart stays at the bottom.
        assert_eq!(motion(Action::NextPage).system(0, 12, 5), 5);
        assert_eq!(motion(Action::NextPage).system(5, 12, 5), 7);
        assert_eq!(motion(Action::FocusDown).system(7, 12, 5), 7);
        assert_eq!(motion(Action::FocusDown).system(6, 12, 5), 7);
        // A position past it (the sidebar grew) counts from it.
        assert_eq!(motion(Action::FocusUp).system(11, 12, 5), 6);
        assert_eq!(motion(Action::FocusUp).system(0, 12, 5), 0);
        // All charts on one page: nothing to scroll.
        assert_eq!(motion(Action::FocusDown).system(0, 3, 5), 0);
        // A page of the process table moves by its list's page.
        let (d, to) = motion(Action::PrevPage).procs(8);
        assert_eq!(
            (d, to),
            (-isize::try_from(layout::list_page(8)).unwrap(), None)
        );
        assert_eq!(motion(Action::LastPage).procs(8).1, Some(true));
        assert_eq!(Motion::of(Action::Quit), None);
    }
}
