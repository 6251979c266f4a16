//! Scroll limits of the scrollable panes, from the same layout math the view draws
//! with, kept in state (`Screen::limits`) so a key never scrolls past what the screen
//! can show.

use super::layout;
use super::{App, Overlay};
use crate::store::console::Line;
use crate::text;

/// The console lines the pane shows: finished lines, then the unfinished ones, through
/// the console filter when one is set. Built per use; the console keeps at most its
/// cap of lines, so this is bounded.
pub struct ConsoleView<'a> {
    finished: &'a std::collections::VecDeque<Line>,
    unfinished: Vec<Line>,
    /// Indices (over finished then unfinished) that pass the filter; None = all.
    shown: Option<Vec<usize>>,
}

impl ConsoleView<'_> {
    /// Lines shown.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shown
            .as_ref()
            .map_or(self.finished.len() + self.unfinished.len(), Vec::len)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines before filtering.
    #[must_use]
    pub fn total(&self) -> usize {
        self.finished.len() + self.unfinished.len()
    }

    /// The `i`-th line shown.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&Line> {
        let j = match &self.shown {
            Some(v) => *v.get(i)?,
            None => i,
        };
        self.finished
            .get(j)
            .or_else(|| self.unfinished.get(j - self.finished.len()))
    }
}

/// How far each pane scrolls, and how far a page key moves it, for the current
/// areas and contents (recomputed after every update that may change them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Lines of the overview below its title and pinned rows, which its facts and
    /// sections share ([`OverviewPane::layout`](crate::ui::OverviewPane::layout)).
    pub overview_room: usize,
    /// System charts on one page of the sidebar.
    pub system_page: usize,
    /// How many lines back the console can scroll (its oldest line on top).
    pub console_max: usize,
    /// Console lines one page key moves.
    pub console_page: usize,
    /// Rows of the workspace's runs list (what a page key moves).
    pub runs_page: usize,
    /// The help overlay's largest scroll offset (its last line on its last row);
    /// 0 while it is closed.
    pub help_max: usize,
}

impl App {
    /// Lines the overview's facts and sections get (below its title and pinned
    /// rows: state, id, runtime when known, step when there is history).
    fn overview_room(&self) -> usize {
        // The workspace's list: the highlighted run's overview below it.
        if let Some(room) = self
            .runs
            .overview_room(self.screen.areas.left, self.shown.now)
        {
            return room;
        }
        let fixed = 2
            + usize::from(self.shown.run.runtime().is_some())
            + usize::from(self.shown.run.history_rows > 0);
        self.screen
            .areas
            .left
            .map_or(0, |r| layout::overview_list_rows(r, fixed))
    }

    /// The help overlay's largest scroll offset: its lines less the rows its box
    /// gets (as the view places it: above the status line, centred with a cell of
    /// margin, its border and a line of padding each side). 0 while it is closed.
    fn help_max(&self) -> usize {
        if !matches!(self.overlay, Overlay::Help { .. }) {
            return 0;
        }
        let lines = super::keymap::help_lines(&self.screen.keymap, self.is_host()).len();
        let screen = usize::from(self.screen.size.height.saturating_sub(1).saturating_sub(2));
        let rows = (lines + 4).min(screen).saturating_sub(2);
        lines.saturating_sub(rows)
    }

    /// Recompute [`Limits`] for the areas and contents now.
    pub(super) fn update_limits(&mut self) {
        self.screen.limits = Limits {
            overview_room: self.overview_room(),
            system_page: self.screen.areas.right.map_or(1, layout::sys_per_page),
            console_max: self.console_max_back(),
            console_page: self
                .screen
                .areas
                .console
                .map_or(1, layout::console_rows)
                .saturating_sub(1)
                .max(1),
            runs_page: self
                .runs
                .list_area(self.screen.areas.left)
                .map_or(1, layout::runs_list_rows)
                .max(1),
            help_max: self.help_max(),
        };
        if let Overlay::Help { scroll } = &mut self.overlay {
            *scroll = (*scroll).min(self.screen.limits.help_max);
        }
        // The runs list keeps its highlighted row in view.
        let rows = self.screen.limits.runs_page;
        if let Some(ws) = &mut self.runs.workspace {
            if ws.cursor < ws.scroll {
                ws.scroll = ws.cursor;
            } else if ws.cursor >= ws.scroll + rows {
                ws.scroll = ws.cursor + 1 - rows;
            }
            ws.scroll = ws.scroll.min(ws.shown.len().saturating_sub(rows));
        }
    }

    /// The console lines the pane shows (see [`ConsoleView`]).
    #[must_use]
    pub fn console_view(&self) -> ConsoleView<'_> {
        let finished = self.shown.run.console.lines();
        let unfinished: Vec<Line> = self.shown.run.console.unfinished().collect();
        let f = &self.panes.console.filter;
        let shown = f.is_active().then(|| {
            finished
                .iter()
                .chain(&unfinished)
                .enumerate()
                .filter(|(_, l)| f.matches(&text::sanitize(&l.text)))
                .map(|(i, _)| i)
                .collect()
        });
        ConsoleView {
            finished,
            unfinished,
            shown,
        }
    }

    /// How many lines back the console can scroll (0 while it is not shown).
    fn console_max_back(&self) -> usize {
        let Some(area) = self.screen.areas.console else {
            return 0;
        };
        let view = self.console_view();
        let tw = layout::console_text_width(area);
        let heights = (0..view.len()).map(|i| {
            view.get(i)
                .map_or(1, |l| text::wrapped_rows(&text::sanitize(&l.text), tw))
        });
        layout::console_max_back(view.len(), layout::console_rows(area), heights)
    }
}
