//! The help overlay's lines, generated from the live key map: the view draws them,
//! the app bounds the overlay's scroll by their count.

use super::{Keymap, Mode};
use crate::ui::action::{Action, GROUPS};
use crate::ui::overlay::Keys;

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
    // Full screen and the overlays (their sections' headings, in the overlays'
    // order): only what differs from normal.
    let overlays = Mode::ALL.into_iter().filter_map(|m| match m {
        Mode::Overlay(k) => match k.keys() {
            Keys::Own(s) => Some((m, s.title)),
            Keys::Filter => None,
        },
        _ => None,
    });
    for (mode, title) in std::iter::once((Mode::Fullscreen, "Full-screen chart")).chain(overlays) {
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
/// something more particular than its help line (an overlay's are in its row of
/// `overlays!`).
fn in_mode(mode: Mode, a: Action) -> &'static str {
    let particular = match mode {
        Mode::Fullscreen => match a {
            Action::FocusLeft => Some("Previous chart"),
            Action::FocusRight => Some("Next chart"),
            Action::Back => Some("Back to the grid"),
            _ => None,
        },
        Mode::Overlay(k) => match k.keys() {
            Keys::Own(s) => s.help.iter().find(|r| r.0.contains(&a)).map(|r| r.1),
            Keys::Filter => None,
        },
        Mode::Normal | Mode::Filter => None,
    };
    particular.unwrap_or_else(|| a.describe())
}
