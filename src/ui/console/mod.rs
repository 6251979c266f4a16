//! The console pane: the run's console output. Its state is [`ConsolePane`]
//! (the scroll and the filter), its scroll limits are in `ui/scroll.rs`, and
//! here is its drawing.

pub(crate) mod view;

use crate::ui::filter::FilterState;

/// The console pane (`4`).
#[derive(Debug, Clone, Default)]
pub struct ConsolePane {
    /// Filter of the lines (`/` while the console has focus).
    pub filter: FilterState,
    /// Lines scrolled back from the end (0 = following the tail).
    pub back: usize,
}
