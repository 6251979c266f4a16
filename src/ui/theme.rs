//! Colours and styles in one place: the active palette's (`app.screen.palette`); with
//! `color == false` (NO_COLOR) only bold, reverse and dim are used. Where the
//! terminal has no 24-bit colour, `render` maps the RGB colours of each frame to
//! their nearest of the xterm 256 ([`xterm256`]).

use ratatui::style::{Color, Modifier, Style};

use crate::store::console::{Sgr, SgrColor};
use crate::ui::palette::Palette;

pub(crate) mod xterm256;

/// Styles for one frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub color: bool,
    colors: &'static Colors,
}

/// What a palette gives: the series' colours and every UI accent.
#[derive(Debug)]
pub(crate) struct Colors {
    /// Line colours of charts, runs and legends, in order (cycled).
    pub series: &'static [Color],
    /// Plain text (None: the terminal's own foreground).
    pub text: Option<Color>,
    /// Keys of key–value rows, secondary text.
    pub label: Color,
    /// Borders, axes, guides, hints.
    pub dim: Color,
    /// Headings, the focused pane's border and title.
    pub heading: Color,
    /// Keys in the help, prompts.
    pub key: Color,
    pub good: Color,
    pub bad: Color,
    pub warn: Color,
    /// Text being typed.
    pub input: Color,
    /// The status bar's background.
    pub bar: Color,
    /// Every other row of long lists.
    pub zebra: Color,
}

/// Text over a dark palette's fixed backgrounds (the status bar, zebra rows).
const ON_DARK: Color = Color::Rgb(0xD0, 0xD0, 0xD0);

/// The terminal's 16 colours: what leet drew before it had palettes.
const DEFAULT: Colors = Colors {
    series: &[
        Color::Cyan,
        Color::Magenta,
        Color::Yellow,
        Color::Green,
        Color::LightBlue,
        Color::LightRed,
        Color::LightCyan,
        Color::LightMagenta,
    ],
    text: None,
    label: Color::Gray,
    dim: Color::DarkGray,
    heading: Color::LightYellow,
    key: Color::Cyan,
    good: Color::Green,
    bad: Color::LightRed,
    warn: Color::Yellow,
    input: Color::White,
    bar: Color::Rgb(30, 30, 40),
    zebra: Color::Rgb(26, 26, 34),
};

/// `wandb leet`'s default scheme (its colours for dark backgrounds) and its
/// accents: W&B gold headings, teal keys.
const WANDB_VIBE_10: Colors = Colors {
    series: &[
        Color::Rgb(0xB1, 0xB4, 0xB9),
        Color::Rgb(0x58, 0xD3, 0xDB),
        Color::Rgb(0x5E, 0xD6, 0xA4),
        Color::Rgb(0xFC, 0xA3, 0x6F),
        Color::Rgb(0xFF, 0x7A, 0x88),
        Color::Rgb(0x7D, 0xB1, 0xFA),
        Color::Rgb(0xBB, 0xE0, 0x6B),
        Color::Rgb(0xFF, 0xCF, 0x4D),
        Color::Rgb(0xE1, 0x80, 0xFF),
        Color::Rgb(0xB1, 0x99, 0xFF),
    ],
    text: None,
    label: Color::Rgb(0xBC, 0xBC, 0xBC),
    dim: Color::Rgb(0x6C, 0x6C, 0x6C),
    heading: Color::Rgb(0xFC, 0xBC, 0x32),
    key: Color::Rgb(0x58, 0xD3, 0xDB),
    good: Color::Rgb(0x5E, 0xD6, 0xA4),
    bad: Color::Rgb(0xFF, 0x7A, 0x88),
    warn: Color::Rgb(0xFF, 0xCF, 0x4D),
    input: Color::Rgb(0xEE, 0xEE, 0xEE),
    bar: Color::Rgb(30, 30, 40),
    zebra: Color::Rgb(26, 26, 34),
};

/// Okabe & Ito (2008): told apart with each common colour-vision deficiency.
/// Good and bad are its bluish green and vermillion, which stay distinct too.
const OKABE_ITO: Colors = Colors {
    series: &[
        Color::Rgb(0xE6, 0x9F, 0x00),
        Color::Rgb(0x56, 0xB4, 0xE9),
        Color::Rgb(0x00, 0x9E, 0x73),
        Color::Rgb(0xF0, 0xE4, 0x42),
        Color::Rgb(0x00, 0x72, 0xB2),
        Color::Rgb(0xD5, 0x5E, 0x00),
        Color::Rgb(0xCC, 0x79, 0xA7),
        Color::Rgb(0x99, 0x99, 0x99),
    ],
    text: None,
    label: Color::Rgb(0xBE, 0xBE, 0xBE),
    dim: Color::Rgb(0x6E, 0x6E, 0x6E),
    heading: Color::Rgb(0xF0, 0xE4, 0x42),
    key: Color::Rgb(0x56, 0xB4, 0xE9),
    good: Color::Rgb(0x00, 0x9E, 0x73),
    bad: Color::Rgb(0xD5, 0x5E, 0x00),
    warn: Color::Rgb(0xE6, 0x9F, 0x00),
    input: Color::Rgb(0xEE, 0xEE, 0xEE),
    bar: Color::Rgb(30, 30, 40),
    zebra: Color::Rgb(26, 26, 34),
};

/// Paul Tol's "bright" scheme (colour-blind safe), its lighter colours first so
/// the first lines drawn read best on a dark background.
const TOL_BRIGHT: Colors = Colors {
    series: &[
        Color::Rgb(0x66, 0xCC, 0xEE),
        Color::Rgb(0xEE, 0x66, 0x77),
        Color::Rgb(0xCC, 0xBB, 0x44),
        Color::Rgb(0x22, 0x88, 0x33),
        Color::Rgb(0x44, 0x77, 0xAA),
        Color::Rgb(0xAA, 0x33, 0x77),
        Color::Rgb(0xBB, 0xBB, 0xBB),
    ],
    text: None,
    label: Color::Rgb(0xBB, 0xBB, 0xBB),
    dim: Color::Rgb(0x6E, 0x6E, 0x6E),
    heading: Color::Rgb(0xCC, 0xBB, 0x44),
    key: Color::Rgb(0x66, 0xCC, 0xEE),
    good: Color::Rgb(0x22, 0x88, 0x33),
    bad: Color::Rgb(0xEE, 0x66, 0x77),
    warn: Color::Rgb(0xCC, 0xBB, 0x44),
    input: Color::Rgb(0xEE, 0xEE, 0xEE),
    bar: Color::Rgb(30, 30, 40),
    zebra: Color::Rgb(26, 26, 34),
};

/// For a light background: dark series colours (Okabe–Ito's and Tol's darker
/// ones), dark text, and grey axes and borders that read on white; light bars.
const LIGHT: Colors = Colors {
    series: &[
        Color::Rgb(0x00, 0x72, 0xB2),
        Color::Rgb(0xC0, 0x4A, 0x00),
        Color::Rgb(0x11, 0x77, 0x33),
        Color::Rgb(0xAA, 0x33, 0x77),
        Color::Rgb(0x86, 0x6A, 0x00),
        Color::Rgb(0x33, 0x22, 0x88),
        Color::Rgb(0x00, 0x75, 0x6F),
        Color::Rgb(0x55, 0x55, 0x55),
    ],
    text: Some(Color::Rgb(0x1E, 0x1E, 0x1E)),
    label: Color::Rgb(0x44, 0x44, 0x44),
    dim: Color::Rgb(0x78, 0x78, 0x78),
    heading: Color::Rgb(0x94, 0x4A, 0x00),
    key: Color::Rgb(0x00, 0x5A, 0x96),
    good: Color::Rgb(0x11, 0x77, 0x33),
    bad: Color::Rgb(0xB2, 0x18, 0x2B),
    warn: Color::Rgb(0x86, 0x6A, 0x00),
    input: Color::Rgb(0x00, 0x00, 0x00),
    bar: Color::Rgb(0xDE, 0xDE, 0xE4),
    zebra: Color::Rgb(0xEE, 0xEE, 0xF3),
};

/// A palette's colours.
#[must_use]
pub(crate) fn colors(p: Palette) -> &'static Colors {
    match p {
        Palette::Default => &DEFAULT,
        Palette::WandbVibe10 => &WANDB_VIBE_10,
        Palette::OkabeIto => &OKABE_ITO,
        Palette::TolBright => &TOL_BRIGHT,
        Palette::Light => &LIGHT,
    }
}

impl Theme {
    /// The styles of `palette`, or none of its colours with `color == false`.
    #[must_use]
    pub fn new(color: bool, palette: Palette) -> Self {
        Self {
            color,
            colors: colors(palette),
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    fn bg(self, c: Color) -> Style {
        if self.color {
            Style::new().bg(c)
        } else {
            Style::new()
        }
    }

    #[must_use]
    pub fn text(self) -> Style {
        match self.colors.text {
            Some(c) => self.fg(c),
            None => Style::new(),
        }
    }

    #[must_use]
    pub fn dim(self) -> Style {
        if self.color {
            Style::new().fg(self.colors.dim)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    #[must_use]
    pub fn label(self) -> Style {
        self.fg(self.colors.label)
    }

    #[must_use]
    pub fn heading(self) -> Style {
        self.fg(self.colors.heading).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn key(self) -> Style {
        self.fg(self.colors.key).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn border(self, focused: bool) -> Style {
        if focused {
            self.heading()
        } else {
            self.dim()
        }
    }

    #[must_use]
    pub fn title(self, focused: bool) -> Style {
        if focused {
            let s = self.heading();
            if self.color {
                s
            } else {
                s.add_modifier(Modifier::REVERSED)
            }
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    /// How many series colours the palette has before they repeat.
    #[must_use]
    pub fn series_colors(self) -> usize {
        self.colors.series.len()
    }

    #[must_use]
    pub fn series(self, i: usize) -> Style {
        let s = self.colors.series;
        self.fg(s[i % s.len()])
    }

    #[must_use]
    pub fn good(self) -> Style {
        self.fg(self.colors.good).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn bad(self) -> Style {
        self.fg(self.colors.bad).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn warn(self) -> Style {
        self.fg(self.colors.warn).add_modifier(Modifier::BOLD)
    }

    #[must_use]
    pub fn status_bar(self) -> Style {
        self.on_fixed(self.colors.bar)
    }

    /// Every other row of a long list (no background under NO_COLOR).
    #[must_use]
    pub fn zebra(self) -> Style {
        self.on_fixed(self.colors.zebra)
    }

    /// The palette's fixed background `bg`, with text over it readable whatever
    /// the terminal's own foreground: where the palette leaves text in the
    /// terminal's colour (dark in a light theme), a light one over its dark
    /// background.
    fn on_fixed(self, bg: Color) -> Style {
        let s = self.bg(bg);
        if self.color && self.colors.text.is_none() {
            s.fg(ON_DARK)
        } else {
            s
        }
    }

    /// The style an SGR sequence gave console text: its attributes always, its
    /// colours only with colour on (ANSI colours as the terminal's own 16, so they
    /// follow its theme; RGB as the rest of the frame's, 256 where it has no more).
    #[must_use]
    pub fn console(self, s: Sgr) -> Style {
        const ATTRS: [(u8, Modifier); 5] = [
            (Sgr::BOLD, Modifier::BOLD),
            (Sgr::DIM, Modifier::DIM),
            (Sgr::ITALIC, Modifier::ITALIC),
            (Sgr::UNDERLINE, Modifier::UNDERLINED),
            (Sgr::REVERSE, Modifier::REVERSED),
        ];
        let mut style = Style::new();
        for (a, m) in ATTRS {
            if s.has(a) {
                style = style.add_modifier(m);
            }
        }
        if self.color {
            if let Some(c) = sgr_color(s.fg) {
                style = style.fg(c);
            }
            if let Some(c) = sgr_color(s.bg) {
                style = style.bg(c);
            }
        }
        style
    }

    #[must_use]
    pub fn input(self) -> Style {
        self.fg(self.colors.input).add_modifier(Modifier::BOLD)
    }
}

/// An SGR colour as ratatui's (`None`: the terminal's default, nothing set).
fn sgr_color(c: SgrColor) -> Option<Color> {
    const ANSI: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    match c {
        SgrColor::Default => None,
        SgrColor::Ansi(n) => ANSI.get(usize::from(n)).copied(),
        SgrColor::Indexed(n) => Some(Color::Indexed(n)),
        SgrColor::Rgb(r, g, b) => Some(Color::Rgb(r, g, b)),
    }
}

#[cfg(test)]
mod tests;
