//! Colours and styles in one place; with `color == false` (NO_COLOR) only bold,
//! reverse and dim are used.

use ratatui::style::{Color, Modifier, Style};

/// Styles for one frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub color: bool,
}

/// Line colours of multi-series charts.
const PALETTE: [Color; 8] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::Green,
    Color::LightBlue,
    Color::LightRed,
    Color::LightCyan,
    Color::LightMagenta,
];

impl Theme {
    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    #[must_use]
    pub fn text(self) -> Style {
        Style::new()
    }

    #[must_use]
    pub fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    #[must_use]
    pub fn label(self) -> Style {
        self.fg(Color::Gray)
    }

    #[must_use]
    pub fn heading(self) -> Style {
        self.fg(Color::LightYellow).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn key(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn border(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::LightYellow).add_modifier(Modifier::BOLD)
        } else {
            self.dim()
        }
    }

    #[must_use]
    pub fn title(self, focused: bool) -> Style {
        if focused {
            let s = self.fg(Color::LightYellow).add_modifier(Modifier::BOLD);
            if self.color {
                s
            } else {
                s.add_modifier(Modifier::REVERSED)
            }
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    #[must_use]
    pub fn series(self, i: usize) -> Style {
        self.fg(PALETTE[i % PALETTE.len()])
    }

    #[must_use]
    pub fn good(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn bad(self) -> Style {
        self.fg(Color::LightRed).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn status_bar(self) -> Style {
        if self.color {
            Style::new().bg(Color::Rgb(30, 30, 40))
        } else {
            Style::new()
        }
    }

    /// Every other row of a long list (no background under NO_COLOR).
    #[must_use]
    pub fn zebra(self) -> Style {
        if self.color {
            Style::new().bg(Color::Rgb(26, 26, 34))
        } else {
            Style::new()
        }
    }

    #[must_use]
    pub fn input(self) -> Style {
        self.fg(Color::White).add_modifier(Modifier::BOLD)
    }
}
