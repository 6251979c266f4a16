//! Scroll limits of the overview and console panes, from the same layout math the
//! view draws with, so a key never scrolls past what the screen can show.

use super::App;
use crate::app::layout;
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

impl App {
    /// Lines the overview's scrolled list gets (below its title and pinned facts:
    /// state, id, runtime when known, step when there is history).
    fn overview_room(&self) -> usize {
        let fixed =
            2 + usize::from(self.run.runtime().is_some()) + usize::from(self.run.history_rows > 0);
        self.areas
            .left
            .map_or(0, |r| layout::overview_list_rows(r, fixed))
    }

    /// The overview's largest scroll offset: its last row on the last line.
    pub(super) fn overview_max_scroll(&self) -> usize {
        layout::list_max_scroll(self.overview.len(), self.overview_room())
    }

    /// Overview rows one page key moves.
    pub(super) fn overview_page(&self) -> usize {
        layout::list_page(self.overview_room())
    }

    /// The console lines the pane shows (see [`ConsoleView`]).
    #[must_use]
    pub fn console_view(&self) -> ConsoleView<'_> {
        let finished = self.run.console.lines();
        let unfinished: Vec<Line> = self.run.console.unfinished().collect();
        let f = &self.console_filter;
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

    /// How many lines back the console can scroll (its oldest line on top).
    pub(super) fn console_max_back(&self) -> usize {
        let Some(area) = self.areas.console else {
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

    /// Console lines one page key moves.
    pub(super) fn console_page(&self) -> usize {
        let rows = self.areas.console.map_or(1, layout::console_rows);
        rows.saturating_sub(1).max(1)
    }
}
