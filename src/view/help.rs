//! Help overlay, generated from the live key map.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::theme::Theme;
use crate::app::action::{Action, GROUPS};
use crate::app::keymap::{Keymap, Mode};
use crate::app::{App, Overlay};

/// Help lines: (keys, description) rows and group headings (keys empty).
#[must_use]
pub(crate) fn help_lines(km: &Keymap, live: bool) -> Vec<(String, String)> {
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
        (Mode::Help, "This help"),
    ] {
        let mut rows: Vec<(String, String)> = Vec::new();
        for a in Action::ALL {
            let keys: Vec<String> = km.keys_for(mode, a).map(|k| k.to_string()).collect();
            if keys.is_empty() {
                continue;
            }
            let desc = match (mode, a) {
                (Mode::Fullscreen, Action::FocusLeft) => "Previous chart",
                (Mode::Fullscreen, Action::FocusRight) => "Next chart",
                (Mode::Fullscreen, Action::Back) => "Back to the grid",
                (Mode::Help, Action::FocusUp | Action::PrevPage | Action::FirstPage) => "Scroll up",
                (Mode::Help, Action::FocusDown | Action::NextPage | Action::LastPage) => {
                    "Scroll down"
                }
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
                _ => a.describe(),
            };
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

pub(crate) fn render_help(buf: &mut Buffer, size: Rect, app: &App, theme: Theme) {
    let lines = help_lines(&app.keymap, app.is_host());
    let key_w = lines
        .iter()
        .filter(|l| !l.0.is_empty())
        .map(|l| l.0.chars().count())
        .max()
        .unwrap_or(0)
        .min(28);
    let Some(area) = super::overlay::place(size, 80, lines.len() + 2, 10) else {
        return;
    };
    let inner = super::overlay::open(buf, area, " leet · keys (from the live key map) ", theme);
    let rows = usize::from(inner.height);
    let max_scroll = lines.len().saturating_sub(rows);
    let scroll = match app.overlay {
        Overlay::Help { scroll } => scroll.min(max_scroll),
        _ => 0,
    };
    for (i, (k, d)) in lines.iter().skip(scroll).take(rows).enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        let y = inner.y + i as u16;
        let w = usize::from(inner.width.saturating_sub(2));
        if k.is_empty() {
            buf.set_stringn(inner.x + 1, y, d, w, theme.heading());
        } else {
            buf.set_stringn(
                inner.x + 3,
                y,
                super::fit::fit(k, key_w),
                key_w,
                theme.key(),
            );
            #[allow(clippy::cast_possible_truncation)]
            let x = inner.x + 3 + key_w as u16 + 2;
            let rest = usize::from(inner.right().saturating_sub(x));
            buf.set_stringn(x, y, d, rest, theme.text());
        }
    }
    if max_scroll > 0 {
        let more = if scroll < max_scroll {
            " ↓ more (down/pgdown) "
        } else {
            " ↑ (up/pgup) "
        };
        super::overlay::hint(buf, area, more, theme);
    }
}
