//! The colour palette chosen (`palette` in the settings file, `P` on screen) and
//! how many colours the terminal shows. The palette is a name here; its colours
//! are the view's (`ui::theme`), matched exhaustively, so a new palette cannot
//! be left without them.

use std::fmt;
use std::str::FromStr;

/// A set of series colours and UI accents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Palette {
    /// The terminal's own 16 colours (what leet always drew with).
    #[default]
    Default,
    /// `wandb leet`'s default scheme, for its users' eyes.
    WandbVibe10,
    /// Okabe & Ito's colour-blind-safe set.
    OkabeIto,
    /// Paul Tol's "bright" colour-blind-safe set.
    TolBright,
    /// Dark lines and text for a light terminal background.
    Light,
}

impl Palette {
    /// Every palette, in the order `P` cycles through them.
    pub const ALL: [Palette; 5] = [
        Palette::Default,
        Palette::WandbVibe10,
        Palette::OkabeIto,
        Palette::TolBright,
        Palette::Light,
    ];

    /// The settings file's spelling (W&B's kebab case).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Palette::Default => "default",
            Palette::WandbVibe10 => "wandb-vibe-10",
            Palette::OkabeIto => "okabe-ito",
            Palette::TolBright => "tol-bright",
            Palette::Light => "light",
        }
    }

    /// The next palette (`P`), back to the first after the last.
    #[must_use]
    pub fn next(self) -> Palette {
        let i = Self::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// The names, for messages: `default, …, tol-bright or light`.
    #[must_use]
    pub fn expected() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

impl fmt::Display for Palette {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Palette {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown palette '{s}' (expected {})", Self::expected()))
    }
}

/// Whether the terminal shows 24-bit colour, from the value of `COLORTERM`
/// (`truecolor` or `24bit`, as terminals that have it set it). Without it RGB
/// colours are drawn as their nearest of the xterm 256: a terminal that does not
/// know RGB would otherwise show a wrong colour or none.
#[must_use]
pub fn true_color(colorterm: Option<&str>) -> bool {
    colorterm.is_some_and(|v| {
        let v = v.trim();
        v.eq_ignore_ascii_case("truecolor") || v.eq_ignore_ascii_case("24bit")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_next_visits_every_palette_once() {
        let mut p = Palette::Default;
        let mut seen = Vec::new();
        for _ in Palette::ALL {
            assert_eq!(p.name().parse::<Palette>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
            seen.push(p);
            p = p.next();
        }
        assert_eq!(p, Palette::Default);
        assert_eq!(seen, Palette::ALL);
        assert_eq!(
            "solarized".parse::<Palette>(),
            Err(
                "unknown palette 'solarized' (expected default, wandb-vibe-10, okabe-ito, \
                 tol-bright or light)"
                    .into()
            )
        );
        assert!("Default".parse::<Palette>().is_err());
    }

    #[test]
    fn only_truecolor_or_24bit_mean_rgb() {
        for v in ["truecolor", "24bit", "TrueColor", " 24bit\n"] {
            assert!(true_color(Some(v)), "{v:?}");
        }
        for v in [None, Some(""), Some("256"), Some("yes"), Some("8bit")] {
            assert!(!true_color(v), "{v:?}");
        }
    }
}
