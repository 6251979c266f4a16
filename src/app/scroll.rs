//! Scroll limits of the overview pane, from the same layout math the view draws
//! with, so a key never scrolls past what the screen can show.

use super::App;
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
}
