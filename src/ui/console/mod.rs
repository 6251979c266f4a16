//! The console pane: the run's console output. Its state is [`ConsolePane`]
//! (the scroll and the filter), its scroll limits are in `ui/scroll.rs`, and
//! here is its drawing.

pub(crate) mod view;

use crate::ui::filter::FilterState;
use crate::ui::scroll::ConsoleView;
use crate::ui::status::part::FilterStatus;

/// The console pane (`4`).
#[derive(Debug, Clone, Default)]
pub struct ConsolePane {
    /// Filter of the lines (`/` while the console has focus).
    pub filter: FilterState,
    /// Lines scrolled back from the end (0 = following the tail).
    pub back: usize,
}

impl ConsolePane {
    /// The lines' filter, with how many of the lines the pane shows (`view`)
    /// pass it: the status bar's while it is typed.
    pub(crate) fn filter_status(&self, view: &ConsoleView<'_>) -> FilterStatus<'_> {
        FilterStatus {
            filter: &self.filter,
            sigil: '/',
            label: "/",
            count: format!("[{}/{} lines]", view.written(), view.total_written()),
        }
    }
}
