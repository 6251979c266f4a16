//! Help overlay, generated from the live key map.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::ui::action::Action;
use crate::ui::keymap::{help_lines_for, Mode};
use crate::ui::overlay::{Kind, Outcome};
use crate::ui::theme::Theme;
use crate::ui::{App, Effect, Overlay};

/// Its keys' lines in the help.
pub(crate) const HELP: &[(&[Action], &str)] = &[
    (
        &[Action::FocusUp, Action::PrevPage, Action::FirstPage],
        "Scroll up",
    ),
    (
        &[Action::FocusDown, Action::NextPage, Action::LastPage],
        "Scroll down",
    ),
    (&[Action::Back, Action::Help], "Close help"),
];

/// A key while the help is open, scrolled `scroll` lines of at most `max` (the
/// app's `help_max`, the count the drawing shows): moved or closed, or None for
/// the keys it lets through (quit).
pub(crate) fn act(scroll: &mut usize, a: Action, max: usize) -> Option<Outcome> {
    // Bounded by the overlay's real last offset, so `end` then `up` moves.
    if let Some(m) = crate::ui::act::Motion::of(a) {
        *scroll = m.help(*scroll, max);
    } else if matches!(a, Action::Back | Action::Help) {
        return Some(Outcome::Close);
    } else {
        return None;
    }
    Some(Outcome::Stay(Effect::REDRAW))
}

/// ` (down/pgdown)`: the first key of each of the help's two ways to scroll that
/// way, by name, as its key map binds them; empty when neither is bound.
fn scroll_keys(app: &App, (line, page): (Action, Action)) -> String {
    let km = &app.screen.keymap;
    let keys: Vec<String> = [line, page]
        .into_iter()
        .filter_map(|a| km.keys_for(Mode::Overlay(Kind::Help), a).next())
        .map(|k| k.to_string())
        .collect();
    if keys.is_empty() {
        String::new()
    } else {
        format!(" ({})", keys.join("/"))
    }
}

/// Below this many columns inside the box, the keys are not put in one column.
const NARROW: u16 = 60;

pub(crate) fn render_help(buf: &mut Buffer, size: Rect, app: &App, theme: Theme) {
    let lines = help_lines_for(&app.screen.keymap, app.help_for());
    let key_w = lines
        .iter()
        .filter(|l| !l.0.is_empty())
        .map(|l| l.0.chars().count())
        .max()
        .unwrap_or(0)
        .min(23);
    let Some(area) = crate::ui::overlay::place(size, 80, lines.len() + 2, 10) else {
        return;
    };
    let inner = crate::ui::overlay::open(buf, area, " leet · keys (from the live key map) ", theme);
    let rows = usize::from(inner.height);
    let max_scroll = lines.len().saturating_sub(rows);
    // Kept within `app.screen.limits.help_max` (the same count) by the app.
    let scroll = match app.overlay {
        Overlay::Help { scroll } => scroll.min(max_scroll),
        _ => 0,
    };
    for (i, (k, d)) in lines.iter().skip(scroll).take(rows).enumerate() {
        let y = inner.y + i as u16;
        let w = usize::from(inner.width.saturating_sub(2));
        if k.is_empty() {
            buf.set_stringn(inner.x + 1, y, d, w, theme.heading());
        } else {
            // Narrow (a 40-column pane): each line's keys take their own width,
            // not the widest's, so its words have room.
            let key_w = if inner.width < NARROW {
                crate::ui::widget::fit::width(k).min(key_w as u16) as usize
            } else {
                key_w
            };
            buf.set_stringn(
                inner.x + 3,
                y,
                crate::ui::widget::fit::fit(k, key_w),
                key_w,
                theme.key(),
            );
            let x = inner.x + 3 + key_w as u16 + 2;
            let rest = usize::from(inner.right().saturating_sub(x));
            buf.set_stringn(x, y, d, rest, theme.text());
        }
    }
    if max_scroll > 0 {
        let more = if scroll < max_scroll {
            format!(
                " ↓ more{} ",
                scroll_keys(app, (Action::FocusDown, Action::NextPage))
            )
        } else {
            format!(
                " ↑{} ",
                scroll_keys(app, (Action::FocusUp, Action::PrevPage))
            )
        };
        crate::ui::overlay::hint(buf, area, &more, theme);
    }
}
