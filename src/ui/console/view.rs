//! Console pane: the run's console output, following the tail unless scrolled back.
//! Long lines wrap onto the following rows (by display width); scrolling moves
//! whole lines, `console_back` of them back from the newest.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Widget};

use crate::store::console::Stream;
use crate::text::{sanitize, wrap, wrapped_rows};
use crate::ui::layout;
use crate::ui::panels::Pane;
use crate::ui::theme::Theme;
use crate::ui::widget::format;
use crate::ui::App;

/// Rows `take` of line `line`'s wrapped rows, from row `skip`.
struct Slice {
    line: usize,
    skip: usize,
    take: usize,
}

pub(crate) fn render_console(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 3 || area.height < 2 {
        return;
    }
    let focused = app.panels.focus == Pane::Console;
    // Finished lines, then a last line without its newline yet (a progress bar, a
    // prompt), through the console filter.
    let view = app.console_view();
    let total = view.len();
    let line_at = |i: usize| view.get(i);
    let text_at = |i: usize| line_at(i).map(|l| sanitize(&l.text)).unwrap_or_default();
    let rows = layout::console_rows(area);
    let tw = layout::console_text_width(area);
    let height = |i: usize| wrapped_rows(&text_at(i), tw);
    // The limit the app keeps for its console area (the one keys scroll against).
    let max_back = if app.screen.areas.console == Some(area) {
        app.screen.limits.console_max
    } else {
        layout::console_max_back(total, rows, (0..total).map(height))
    };
    let back = app.panes.console.back.min(max_back);

    let (slices, above) = slices(total, rows, (back, max_back), height);
    let first = slices.first().map_or(0, |s| s.line);
    let mut title = if back > 0 {
        format!(
            "Console Logs [{}-{} of {total}] ↓ {back} newer",
            first + 1,
            total - back
        )
    } else {
        match total {
            1 => "Console Logs [1 line]".to_owned(),
            n => format!("Console Logs [{n} lines]"),
        }
    };
    if app.panes.console.filter.is_active() {
        title.push_str(&format!(
            " filtered from {} by /{}",
            view.total(),
            sanitize(&app.panes.console.filter.text)
        ));
    }
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border(focused))
        .title(title)
        .title_style(theme.title(focused));
    let inner = block.inner(area);
    block.render(area, buf);
    let w = usize::from(inner.width.saturating_sub(1));
    let mut y = inner.y;
    if above > 0 && rows > 1 {
        buf.set_stringn(inner.x + 1, y, format!("↑ {above} more"), w, theme.dim());
        y += 1;
    }
    for s in &slices {
        let Some(line) = line_at(s.line) else {
            continue;
        };
        let style = if line.stream == Stream::Stderr {
            theme.warn()
        } else {
            theme.text()
        };
        let text = sanitize(&line.text);
        for (r, part) in wrap(&text, tw).iter().enumerate().skip(s.skip).take(s.take) {
            if y >= inner.bottom() {
                return;
            }
            if r == 0 {
                let t = line
                    .time
                    .map_or_else(|| "        ".to_owned(), |(s, _)| format::time_of_day(s));
                buf.set_stringn(inner.x + 1, y, &t, w, theme.dim());
            }
            buf.set_stringn(inner.x + 10, y, part, tw, style);
            y += 1;
        }
    }
}

/// Which rows of which lines show, top to bottom, and how many lines are hidden
/// above them: `total` lines of `height(i)` rows each in `rows` rows, scrolled
/// `back` lines of at most `max_back`.
fn slices(
    total: usize,
    rows: usize,
    (back, max_back): (usize, usize),
    height: impl Fn(usize) -> usize,
) -> (Vec<Slice>, usize) {
    let mut slices: Vec<Slice> = Vec::new();
    let mut above = 0;
    if back >= max_back {
        // From the oldest line down (everything fits, or scrolled all the way back).
        let mut left = rows;
        for i in 0..total {
            if left == 0 {
                break;
            }
            let take = height(i).min(left);
            slices.push(Slice {
                line: i,
                skip: 0,
                take,
            });
            left -= take;
        }
    } else {
        // From the newest shown line up; older lines exist above, so the top row
        // says how many.
        let mut left = if rows > 1 { rows - 1 } else { rows };
        let end = total - back;
        above = end;
        for i in (0..end).rev() {
            if left == 0 {
                break;
            }
            let h = height(i);
            let take = h.min(left);
            // Scrolled back to a line taller than the pane: show its start (time and
            // first words); at the tail, its end (the latest output) matters more.
            let skip = if back > 0 && i + 1 == end {
                0
            } else {
                h - take
            };
            slices.push(Slice {
                line: i,
                skip,
                take,
            });
            left -= take;
            if take == h {
                above = i;
            }
        }
        slices.reverse();
    }
    (slices, above)
}
