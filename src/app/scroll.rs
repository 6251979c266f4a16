//! Scroll limits of the overview and console panes, from the same layout math the
//! view draws with, so a key never scrolls past what the screen can show.

use super::App;
use crate::text;
use crate::view::layout;

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

    /// How many lines back the console can scroll (its oldest line on top).
    pub(super) fn console_max_back(&self) -> usize {
        let Some(area) = self.areas.console else {
            return 0;
        };
        let lines = self.run.console.lines();
        let unfinished: Vec<_> = self.run.console.unfinished().collect();
        let tw = layout::console_text_width(area);
        let heights = lines
            .iter()
            .chain(&unfinished)
            .map(|l| text::wrapped_rows(&text::sanitize(&l.text), tw));
        layout::console_max_back(
            lines.len() + unfinished.len(),
            layout::console_rows(area),
            heights,
        )
    }

    /// Console lines one page key moves.
    pub(super) fn console_page(&self) -> usize {
        let rows = self.areas.console.map_or(1, layout::console_rows);
        rows.saturating_sub(1).max(1)
    }
}
