//! The help overlay's lines, generated from the live key map: the view draws them,
//! the app bounds the overlay's scroll by their count.

use super::{Keymap, Mode};
use crate::ui::action::{Action, GROUPS};

/// Help lines: (keys, description) rows and group headings (keys empty).
#[must_use]
pub fn help_lines(km: &Keymap, live: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for group in GROUPS {
        // The process table is the live monitor's alone.
        if group == "Processes" && !live {
            continue;
        }
        let mut rows = Vec::new();
        for a in Action::ALL {
            if a.group() != group || a == Action::None {
                continue;
            }
            let mode = if group == "Filter"
                && a != Action::StartFilter
                && a != Action::StartSystemFilter
                && a != Action::StartOverviewFilter
                && a != Action::ClearFilters
            {
                Mode::Filter
            } else {
                Mode::Normal
            };
            let keys: Vec<String> = km.keys_for(mode, a).map(|k| k.to_string()).collect();
            if keys.is_empty() {
                continue;
            }
            rows.push((keys.join(", "), a.describe().to_owned()));
        }
        if !rows.is_empty() {
            out.push((String::new(), group.to_owned()));
            out.extend(rows);
        }
    }
    // Full-screen and help modes: only what differs from normal.
    for (mode, title) in [
        (Mode::Fullscreen, "Full-screen chart"),
        (Mode::Runs, "Run picker"),
        (Mode::Media, "Media viewer"),
        (Mode::Stats, "Statistics table"),
        (Mode::Inspector, "Record inspector"),
        (Mode::Help, "This help"),
    ] {
        let mut rows: Vec<(String, String)> = Vec::new();
        for a in Action::ALL {
            let keys: Vec<String> = km.keys_for(mode, a).map(|k| k.to_string()).collect();
            if keys.is_empty() {
                continue;
            }
            let desc = in_mode(mode, a);
            if let Some(r) = rows.iter_mut().find(|r| r.1 == desc) {
                r.0.push_str(", ");
                r.0.push_str(&keys.join(", "));
            } else {
                rows.push((keys.join(", "), desc.to_owned()));
            }
        }
        if !rows.is_empty() {
            out.push((String::new(), title.to_owned()));
            out.extend(rows);
        }
    }
    out.push((String::new(), "Mouse".to_owned()));
    out.push(("click".into(), "Focus a chart or pane".into()));
    out.push(("wheel".into(), "Zoom the chart's x-range (z resets)".into()));
    out.push(("ctrl+c".into(), "Always quits, in every mode".into()));
    out
}

/// An action's line in the help of a mode other than normal, where it means
/// something more particular than its help line.
fn in_mode(mode: Mode, a: Action) -> &'static str {
    match (mode, a) {
        (Mode::Fullscreen, Action::FocusLeft) => "Previous chart",
        (Mode::Fullscreen, Action::FocusRight) => "Next chart",
        (Mode::Fullscreen, Action::Back) => "Back to the grid",
        (Mode::Help, Action::FocusUp | Action::PrevPage | Action::FirstPage) => "Scroll up",
        (Mode::Help, Action::FocusDown | Action::NextPage | Action::LastPage) => "Scroll down",
        (Mode::Help, Action::Back | Action::Help) => "Close help",
        (Mode::Runs, Action::FocusUp | Action::PrevPage | Action::FirstPage) => {
            "Select an earlier row"
        }
        (Mode::Runs, Action::FocusDown | Action::NextPage | Action::LastPage) => {
            "Select a later row"
        }
        (Mode::Runs, Action::Back) => "Close the picker",
        (Mode::Media, Action::FocusLeft) => "Previous image (earlier step)",
        (Mode::Media, Action::FocusRight) => "Next image (later step)",
        (Mode::Media, Action::FocusUp) => "Previous media key",
        (Mode::Media, Action::FocusDown) => "Next media key",
        (Mode::Media, Action::FirstPage) => "First image",
        (Mode::Media, Action::LastPage) => "Last image",
        (Mode::Media, Action::Back | Action::ToggleMedia) => "Close the viewer",
        (Mode::Stats, Action::FocusUp | Action::FocusDown) => "Select a metric",
        (Mode::Stats, Action::PrevPage | Action::NextPage) => "Select a page up / down",
        (Mode::Stats, Action::FirstPage | Action::LastPage) => "Select the first / last",
        (Mode::Stats, Action::FocusLeft | Action::FocusRight) => "Sort by another column",
        (Mode::Stats, Action::CyclePaneFocus | Action::CyclePaneFocusBack) => {
            "Same column of the next / previous run"
        }
        (Mode::Stats, Action::StartFilter) => "Filter the metrics by name",
        (Mode::Stats, Action::ClearFilters) => "Clear the filter",
        (Mode::Stats, Action::Back | Action::ToggleStats) => "Close the table",
        (Mode::Inspector, Action::FocusUp | Action::PrevPage | Action::FirstPage) => {
            "Earlier record (body pane: scroll up)"
        }
        (Mode::Inspector, Action::FocusDown | Action::NextPage) => {
            "Later record (body pane: scroll down)"
        }
        (Mode::Inspector, Action::LastPage) => "Last record, following the file",
        (Mode::Inspector, Action::CyclePaneFocus | Action::CyclePaneFocusBack) => {
            "Switch between the list and the body"
        }
        (Mode::Inspector, Action::StartFilter) => "Filter records by regex (JSON text)",
        (Mode::Inspector, Action::ClearFilters) => "Clear the type and text filters",
        (Mode::Inspector, Action::Back | Action::InspectRecords) => {
            "Close the inspector (a running filter: stop it)"
        }
        _ => a.describe(),
    }
}
