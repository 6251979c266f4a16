//! Panel visibility (`[` `]` `4`), pane focus (Tab), the help overlay and scroll
//! positions of the scrollable panes.

use crate::app::layout::PanelFlags;

/// A pane that can hold focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Grid,
    Left,
    Right,
    Console,
}

/// Panels and overlays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panels {
    pub left: bool,
    pub right: bool,
    pub console: bool,
    pub help: bool,
    /// The run picker is open.
    pub runs: bool,
    pub fullscreen: bool,
    pub focus: Pane,
    /// First overview row shown.
    pub left_scroll: usize,
    /// First system chart shown.
    pub right_scroll: usize,
    /// Lines scrolled back from the console's end (0 = following the tail).
    pub console_back: usize,
    pub help_scroll: usize,
}

impl Default for Panels {
    fn default() -> Self {
        Self {
            left: true,
            right: true,
            console: false,
            help: false,
            runs: false,
            fullscreen: false,
            focus: Pane::Grid,
            left_scroll: 0,
            right_scroll: 0,
            console_back: 0,
            help_scroll: 0,
        }
    }
}

impl Panels {
    #[must_use]
    pub fn flags(&self) -> PanelFlags {
        PanelFlags {
            left: self.left,
            right: self.right,
            console: self.console,
        }
    }
}
