//! What the features hand the status bar: its parts, and a filter with its match
//! count. A leaf, so that a feature can describe its parts without depending on
//! the bar that gathers them.

use ratatui::style::Style;

use crate::ui::filter::FilterState;

/// A filter as the status bar shows it, as the feature it filters describes it:
/// typed (after its sigil) or in force (after its label), with its match count.
pub(crate) struct FilterStatus<'a> {
    pub filter: &'a FilterState,
    /// Before the draft being typed: `/`, `\`, `o`.
    pub sigil: char,
    /// Before the text in force: `/`, `overview: `, `processes /`.
    pub label: &'static str,
    /// How much passes it: `[3/40]`, `[12 processes]`.
    pub count: String,
}

/// One part of the bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub(super) text: String,
    pub(super) style: Style,
    /// 0 stays whatever the width; higher goes first.
    pub(super) prio: u8,
    /// May be cut to fit (a name, an error); else shown whole or not at all.
    pub(super) cut: bool,
    /// Continues the part before it, with no bar between (its detail): goes with
    /// it, and before it (a higher `prio`).
    pub(super) glue: bool,
    /// Columns (from, how many) drawn reversed: a prompt's selected prefill.
    pub(super) mark: Option<(u16, u16)>,
}

impl Part {
    /// A part shown whole or not at all; `prio` 0 stays, higher goes first.
    pub(crate) fn whole(text: String, style: Style, prio: u8) -> Self {
        Self {
            text,
            style,
            prio,
            cut: false,
            glue: false,
            mark: None,
        }
    }

    /// The same part with columns `from..from + n` drawn reversed (a prompt's
    /// selected prefill); none where `n` is 0.
    #[must_use]
    pub(crate) fn marked(self, from: u16, n: u16) -> Self {
        Self {
            mark: (n > 0).then_some((from, n)),
            ..self
        }
    }

    /// A part that may be cut to fit (a name, an error).
    pub(crate) fn cut(text: String, style: Style, prio: u8) -> Self {
        Self {
            cut: true,
            ..Self::whole(text, style, prio)
        }
    }
}
