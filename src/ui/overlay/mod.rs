//! The overlays: what is drawn in front of the panes (help, run picker, media
//! viewer, statistics table, record inspector, the x axis's metric picker), at
//! most one at a time, each holding its own state (a closed overlay holds nothing).
//!
//! `front.rs` lists them once (`overlays!`): the `Overlay` variant and its state,
//! and the keys it reads (its keymap.toml section, which is its key-map mode, or
//! the filter's); its keys and drawing go through one `match` each there
//! ([`Overlay::act`], [`Overlay::render`]) or, for those that see more, in the
//! router (`App::act_overlay`). This file holds what the overlays and the key map
//! share without a cycle: the keys' description, what a key did, and the boxes
//! most overlays are drawn in: cleared, with a rounded border, a title on top and
//! a key hint on the bottom border.

mod front;
pub(crate) mod help;
pub mod media;
pub mod stats;

pub(crate) use front::OverlayCx;
pub use front::{Kind, Overlay};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::action::Action;
use super::theme::Theme;
use super::Effect;
use crate::ui::widget::fit::fit;

/// The keys an overlay reads.
#[derive(Debug, Clone, Copy)]
pub enum Keys {
    /// Its own keymap.toml section (its key-map mode).
    Own(Section),
    /// The filter's (`[filter]`): it is typed into.
    Filter,
}

/// An overlay's keymap.toml section: its name, its heading in the help overlay,
/// and the help's line for each action that means something particular there
/// (the others show their own line).
#[derive(Debug, Clone, Copy)]
pub struct Section {
    pub name: &'static str,
    pub title: &'static str,
    pub help: &'static [(&'static [Action], &'static str)],
}

/// What a key did to the overlay in front, for the router to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It stays (changed in place, or not); the loop does this.
    Stay(Effect),
    /// It closes: the panes under it are shown again.
    Close,
}

/// Where a box of at most `w` columns and `rows` lines of content goes: centred,
/// with a cell of margin; None when the screen is too small for `min_w` columns.
#[must_use]
pub(crate) fn place(size: Rect, w: u16, rows: usize, min_w: u16) -> Option<Rect> {
    let h = u16::try_from(rows.saturating_add(2)).unwrap_or(u16::MAX);
    let area = crate::ui::layout::centered(
        size,
        w.min(size.width.saturating_sub(2)),
        h.min(size.height.saturating_sub(2)),
    );
    (area.width >= min_w && area.height >= 3).then_some(area)
}

/// Clear `area`, draw the box with `title` (cut to fit), and return its inside.
pub(crate) fn open(buf: &mut Buffer, area: Rect, title: &str, theme: Theme) -> Rect {
    // A wide character just left of the box (CJK, an emoji) would be drawn over
    // its left border, in the cell it covers: a space takes its place.
    if area.x > buf.area.x {
        for y in area.top()..area.bottom() {
            if let Some(c) = buf.cell_mut((area.x - 1, y)) {
                if unicode_width::UnicodeWidthStr::width(c.symbol()) > 1 {
                    c.set_symbol(" ");
                }
            }
        }
    }
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border(true))
        .title(fit(title, usize::from(area.width.saturating_sub(4))))
        .title_style(theme.heading());
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// `hint` on the bottom border, right-aligned, cut to stay inside the corners.
pub(crate) fn hint(buf: &mut Buffer, area: Rect, hint: &str, theme: Theme) {
    if area.width < 6 || area.height < 2 {
        return;
    }
    let room = usize::from(area.width - 4);
    let text = fit(hint, room);
    let w = text.chars().count() as u16;
    let x = area.right().saturating_sub(w + 2);
    buf.set_stringn(x, area.bottom() - 1, &text, room, theme.dim());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::palette::Palette;

    /// A wide character whose second half is under the box's left border gives
    /// way to a space: the border is drawn whole.
    #[test]
    fn a_wide_character_under_the_left_border_gives_way() {
        let area = Rect::new(0, 0, 20, 4);
        let mut buf = Buffer::empty(area);
        for y in 0..4 {
            buf.set_string(3, y, "文字文字", ratatui::style::Style::default());
        }
        open(
            &mut buf,
            Rect::new(4, 0, 10, 4),
            "t",
            Theme::new(false, Palette::Default),
        );
        for y in 0..4 {
            assert_eq!(buf[(3, y)].symbol(), " ", "row {y}");
            assert_ne!(buf[(4, y)].symbol(), " ", "row {y}: no border");
        }
    }

    #[test]
    fn a_long_hint_stays_inside_the_box() {
        let area = Rect::new(0, 0, 20, 4);
        let mut buf = Buffer::empty(area);
        let inner = open(
            &mut buf,
            area,
            " a title ",
            Theme::new(false, Palette::Default),
        );
        assert_eq!(inner, Rect::new(1, 1, 18, 2));
        hint(
            &mut buf,
            area,
            " enter open · space compare · esc close ",
            Theme::new(false, Palette::Default),
        );
        assert_eq!(buf[(0, 3)].symbol(), "╰");
        assert_eq!(buf[(19, 3)].symbol(), "╯");
    }
}
