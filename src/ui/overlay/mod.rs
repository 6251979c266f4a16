//! The boxes drawn over the screen (help, run picker, media viewer): cleared, with a
//! rounded border, a title on top and a key hint on the bottom border.

pub(crate) mod help;
pub mod media;
pub mod stats;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::theme::Theme;
use crate::ui::widget::fit::fit;

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
