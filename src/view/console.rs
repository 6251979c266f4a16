//! Console pane: the run's console output, following the tail unless scrolled back.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Widget};

use super::charts::fit;
use super::format;
use super::theme::Theme;
use crate::app::panels::Pane;
use crate::app::App;
use crate::store::console::Stream;
use crate::text::sanitize;

pub fn render_console(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 3 || area.height < 3 {
        return;
    }
    let focused = app.panels.focus == Pane::Console;
    let lines = app.run.console.lines();
    // A last line without its newline yet (a progress bar, a prompt) is shown too.
    let unfinished: Vec<_> = app.run.console.unfinished().collect();
    let total = lines.len() + unfinished.len();
    let line_at = |i: usize| lines.get(i).or_else(|| unfinished.get(i - lines.len()));
    let rows = usize::from(area.height - 2);
    let back = app.panels.console_back.min(total.saturating_sub(rows));
    let end = total - back;
    let start = end.saturating_sub(rows);
    let title = if back > 0 {
        format!(
            "Console Logs [{}-{end} of {total}] ↓ {back} newer",
            start + 1
        )
    } else {
        format!("Console Logs [{total} lines]")
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border(focused))
        .title(title)
        .title_style(theme.title(focused));
    let inner = block.inner(area);
    block.render(area, buf);
    let w = usize::from(inner.width.saturating_sub(1));
    for (i, line) in (start..end).filter_map(line_at).enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        let y = inner.y + i as u16;
        if y >= inner.bottom() {
            break;
        }
        let t = line
            .time
            .map_or_else(|| "        ".to_owned(), |(s, _)| format::time_of_day(s));
        buf.set_stringn(inner.x + 1, y, &t, w, theme.dim());
        let style = if line.stream == Stream::Stderr {
            theme.warn()
        } else {
            theme.text()
        };
        let tw = w.saturating_sub(9);
        buf.set_stringn(inner.x + 10, y, fit(&sanitize(&line.text), tw), tw, style);
    }
}
