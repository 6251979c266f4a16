//! The charts' parts of the status bar: the focused chart's name, the filter of
//! the metrics, a prefix key waiting for its digit.

use super::Charts;
use crate::text::sanitize;
use crate::ui::status::part::{FilterStatus, Part};
use crate::ui::theme::Theme;
use crate::ui::Pending;

impl Charts {
    /// `▸` and the name of the focused chart (a section header names its section);
    /// the live monitor's (`host`) charts by their titles.
    pub(crate) fn focus_part(&self, host: bool, theme: Theme) -> Option<Part> {
        let name = if let Some(name) = self.grid.focused_header_name() {
            format!("section {}", sanitize(name))
        } else {
            let &i = self.shown.get(self.grid.focus)?;
            if host {
                self.sys.get(i).map(|c| sanitize(&c.display_title()))?
            } else {
                self.metric_keys.get(i).map(|k| sanitize(k))?
            }
        };
        Some(Part::cut(format!("▸ {name}"), theme.key(), 5))
    }

    /// The metrics' filter (`/`), with how many charts pass it.
    pub(crate) fn filter_status(&self) -> FilterStatus<'_> {
        FilterStatus {
            filter: &self.filter,
            sigil: '/',
            label: "/",
            count: format!("[{}/{}]", self.shown.len(), self.metric_keys.len()),
        }
    }

    /// The prefix key (`c`, `r`) waiting for its digit.
    pub(crate) fn pending_part(&self, theme: Theme) -> Option<Part> {
        let text = match self.pending? {
            Pending::Columns => "columns: press 1-9 (0 = auto)",
            Pending::Rows => "rows: press 1-9 (0 = auto)",
        };
        Some(Part::whole(text.into(), theme.key(), 1))
    }
}
