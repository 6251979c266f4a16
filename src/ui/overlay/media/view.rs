//! The media pane and its full-screen viewer: the selected image drawn with half
//! blocks (two pixels a cell, true colour), scaled to fit; luminance characters when
//! colour is off.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::{Block, Borders, Widget};

use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::{hint_line, Mode};
use crate::ui::overlay::media::{Image, MediaSources, MediaState};
use crate::ui::overlay::{self, Kind};
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{fit, word_wrap};
use crate::ui::widget::format;
use crate::ui::App;

/// Characters from dark to light, for `NO_COLOR`.
const RAMP: &[u8] = b" .:-=+*#%@";

/// Draw `img` scaled (nearest pixel) to fit `area`, centred.
fn draw_image(buf: &mut Buffer, area: Rect, img: &Image, color: bool) {
    if img.width == 0 || img.height == 0 || area.width == 0 || area.height == 0 {
        return;
    }
    let (w, h) = (f64::from(img.width), f64::from(img.height));
    // A cell holds one pixel across and two down.
    let scale = (f64::from(area.width) / w).min(f64::from(area.height) * 2.0 / h);
    let (cw, ch) = (
        ((w * scale).floor() as u16).clamp(1, area.width),
        ((h * scale / 2.0).floor() as u16).clamp(1, area.height),
    );
    let x0 = area.x + (area.width - cw) / 2;
    let y0 = area.y + (area.height - ch) / 2;
    let px = |cx: u16, sub: u16| {
        let x = ((f64::from(cx) + 0.5) / scale) as u32;
        let y = ((f64::from(sub) + 0.5) / scale) as u32;
        img.rgb(x.min(img.width - 1), y.min(img.height - 1))
    };
    for cy in 0..ch {
        for cx in 0..cw {
            let top = px(cx, cy * 2);
            let bottom = px(cx, cy * 2 + 1);
            let Some(cell) = buf.cell_mut((x0 + cx, y0 + cy)) else {
                continue;
            };
            if color {
                cell.set_char('▀').set_style(
                    Style::new()
                        .fg(Color::Rgb(top.0, top.1, top.2))
                        .bg(Color::Rgb(bottom.0, bottom.1, bottom.2)),
                );
            } else {
                let lum = |p: (u8, u8, u8)| {
                    0.2126 * f64::from(p.0) + 0.7152 * f64::from(p.1) + 0.0722 * f64::from(p.2)
                };
                #[allow(clippy::manual_midpoint, reason = "lums are at most 255: no overflow")]
                let l = (lum(top) + lum(bottom)) / 2.0 / 255.0;
                let i = ((l * (RAMP.len() - 1) as f64).round() as usize).min(RAMP.len() - 1);
                cell.set_char(char::from(RAMP[i]));
            }
        }
    }
}

/// The selected image's title: key, step, position, caption, size.
fn media_title(app: &App, sources: &MediaSources<'_>) -> String {
    match app.panes.media.selected(sources.clone()) {
        Some((key, item, n)) => {
            let mut t = format!(
                " {} · {} {} ({}/{n})",
                sanitize(key),
                sanitize(app.shown.run.x_axis_of(key)),
                format::value(item.step),
                app.panes.media.item + 1
            );
            let older = sources.dropped(key);
            if older > 0 {
                t.push_str(&format!(" · {older} older not kept"));
            }
            if !item.caption.is_empty() {
                t.push_str(&format!(" · {}", sanitize(&item.caption)));
            }
            if let Some(img) = &app.panes.media.image {
                t.push_str(&format!(" · {}×{}", img.width, img.height));
                if let Some(note) = img.note {
                    t.push_str(&format!(" · {note}"));
                }
            }
            t.push(' ');
            t
        }
        None => " media ".to_owned(),
    }
}

/// The image, or what stands in its place, in `inner`.
/// `no_keys`: the run logged no image.
fn render_media_body(buf: &mut Buffer, inner: Rect, app: &App, no_keys: bool, theme: Theme) {
    let msg = if no_keys {
        Some("no images logged in this run (wandb.Image)".to_owned())
    } else if app.panes.media.loading {
        Some("reading the image…".to_owned())
    } else if let Some(e) = &app.panes.media.error {
        Some(format!("cannot show this image: {e}"))
    } else if app.panes.media.image.is_none() {
        Some("image not loaded (the run's files/ directory is not next to it)".to_owned())
    } else {
        None
    };
    match (msg, &app.panes.media.image) {
        (Some(m), _) => {
            // Wrapped, centred: a reason and its limit are read whole.
            let w = usize::from(inner.width.saturating_sub(2));
            let rows = word_wrap(&m, w.max(1));
            let n = u16::try_from(rows.len())
                .unwrap_or(u16::MAX)
                .min(inner.height);
            let top = inner.y + inner.height.saturating_sub(n) / 2;
            for (i, row) in rows.iter().take(usize::from(n)).enumerate() {
                let y = top + u16::try_from(i).unwrap_or(0);
                let last = i + 1 == usize::from(n) && rows.len() > usize::from(n);
                let text = if last {
                    fit(&format!("{row}…"), w)
                } else {
                    fit(row, w)
                };
                buf.set_stringn(inner.x + 1, y, text, w, theme.dim());
            }
        }
        (None, Some(img)) => draw_image(buf, inner, img, app.screen.color),
        (None, None) => {}
    }
}

/// The full-screen media viewer (`enter` on the media pane).
pub(crate) fn render_media(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 10 || area.height < 4 {
        return;
    }
    // The images listed once a frame: the title, the hint and the body share them.
    let sources = crate::ui::media_sources(&app.shown, &app.runs);
    let keys = MediaState::keys(sources.clone());
    let inner = overlay::open(buf, area, &media_title(app, &sources), theme);
    let (km, m) = (&app.screen.keymap, Mode::Overlay(Kind::Media));
    let which = format!("key ({}/{})", app.panes.media.key + 1, keys.len());
    let hint = hint_line([
        (
            km.hint_pair(m, (Action::FocusLeft, Action::FocusRight), "/"),
            "step",
        ),
        (
            km.hint_pair(m, (Action::FocusUp, Action::FocusDown), "/")
                .filter(|_| keys.len() > 1),
            &which,
        ),
        (
            km.hint_key(m, &[Action::Back, Action::ToggleMedia]),
            "close",
        ),
    ]);
    if !hint.is_empty() {
        overlay::hint(buf, area, &format!(" {hint} "), theme);
    }
    render_media_body(buf, inner, app, keys.is_empty(), theme);
}

/// The media pane (`3`) beside the charts: the same image, its title on the top
/// border; focused (`tab`), the arrows step through the images and `enter` shows it
/// full screen.
pub(crate) fn render_media_pane(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 4 || area.height < 3 {
        return;
    }
    let focused = app.panels.focus == crate::ui::panels::Pane::Media;
    let sources = crate::ui::media_sources(&app.shown, &app.runs);
    let mut title = media_title(app, &sources);
    let keys = MediaState::keys(sources).len();
    if focused && keys > 0 {
        title.push_str(if keys > 1 {
            "· ←/→ ↑/↓ enter "
        } else {
            "· ←/→ enter "
        });
    }
    let block = Block::default()
        .borders(Borders::TOP | Borders::LEFT)
        .border_style(theme.border(focused))
        .title(fit(&title, usize::from(area.width.saturating_sub(2))))
        .title_style(theme.title(focused));
    let inner = block.inner(area);
    block.render(area, buf);
    render_media_body(buf, inner, app, keys == 0, theme);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_blocks_carry_two_pixels_and_the_image_is_scaled_to_fit() {
        // 2×2: red, green / blue, white.
        let img = Image {
            width: 2,
            height: 2,
            rgba: vec![
                255, 0, 0, 255, 0, 255, 0, 255, //
                0, 0, 255, 255, 255, 255, 255, 255,
            ],
            note: None,
        };
        let area = Rect::new(0, 0, 4, 2);
        let mut buf = Buffer::empty(area);
        draw_image(&mut buf, area, &img, true);
        // Scaled ×2: 4 cells across, 2 rows of half blocks.
        let c = &buf[(0, 0)];
        assert_eq!(c.symbol(), "▀");
        assert_eq!(c.fg, Color::Rgb(255, 0, 0));
        assert_eq!(c.bg, Color::Rgb(255, 0, 0));
        let c = &buf[(3, 1)];
        assert_eq!(
            (c.fg, c.bg),
            (Color::Rgb(255, 255, 255), Color::Rgb(255, 255, 255))
        );
        let c = &buf[(0, 1)];
        assert_eq!(c.fg, Color::Rgb(0, 0, 255));
        // Without colour: dark and light characters.
        let mut buf = Buffer::empty(area);
        draw_image(&mut buf, area, &img, false);
        assert_eq!(buf[(3, 1)].symbol(), "@");
    }
}
