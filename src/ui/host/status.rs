//! The live monitor's parts of the status bar: the samples taken, a hint while no
//! process is monitored, and the process table's filter.

use super::procs::ProcsPane;
use super::Host;
use crate::ui::status::part::{FilterStatus, Part};
use crate::ui::theme::Theme;

impl Host {
    /// How many samples came (the live monitor's step: as whole as the viewer's),
    /// and how to pick a process while the process charts are hidden, in a bar
    /// `width` columns wide.
    pub(crate) fn status_parts(&self, width: u16, theme: Theme) -> Vec<Part> {
        // A host opened from the cluster screen: its data is the server's, not
        // this host's samples, and it has no process table.
        if let Some(c) = self.cluster.as_deref().filter(|c| c.opened.is_some()) {
            let server = crate::text::sanitize(c.model.server());
            let mut parts = vec![Part::whole(
                format!("from {server} · esc: every host"),
                theme.label(),
                1,
            )];
            // The families an exporter stopped giving: their last values are not now.
            if let Some(behind) = crate::ui::cluster::opened(c).and_then(|o| o.behind_words()) {
                parts.push(Part::whole(behind, theme.warn(), 2));
            }
            return parts;
        }
        let s = if self.samples == 1 { "" } else { "s" };
        let mut parts = vec![Part::whole(
            format!("{} sample{s}", self.samples),
            theme.label(),
            1,
        )];
        if !self.procs.process_keys_shown() {
            let text = if width >= 110 {
                "no process monitored — enter on a process to follow it"
            } else {
                "no process monitored (enter on one)"
            };
            parts.push(Part::whole(text.to_owned(), theme.warn(), 4));
        }
        parts
    }
}

impl ProcsPane {
    /// The table's filter, with how many processes pass it.
    pub(crate) fn filter_status(&self) -> FilterStatus<'_> {
        FilterStatus {
            filter: &self.filter,
            sigil: '/',
            label: "processes /",
            count: match self.rows.len() {
                1 => "[1 process]".to_owned(),
                n => format!("[{n} processes]"),
            },
        }
    }
}
