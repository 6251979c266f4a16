//! Console pane: the run's console output, following the tail unless scrolled back.
//! Long lines wrap onto the following rows (by display width); scrolling moves
//! whole lines, `console_back` of them back from the newest.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Block, Borders, Widget};

use crate::store::console::{Line, Stream, TAB_STOP as TAB};
use crate::text::{sanitize, wrap, wrapped_rows};
use crate::ui::layout;
use crate::ui::panels::Pane;
use crate::ui::scroll::ConsoleView;
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
    let text_at = |i: usize| {
        line_at(i)
            .map(|l| crate::text::sanitize_tabs(&l.text, &mut 0, TAB))
            .unwrap_or_default()
    };
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
    let (title, above) = title(app, &view, (first, back, above));
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
        let (text, styled) = styled_text(line, style, theme);
        let rows = wrap(&text, tw);
        let mut off = 0;
        for (r, part) in rows.iter().enumerate() {
            let at = off;
            off += part.len();
            if r < s.skip || r >= s.skip + s.take {
                continue;
            }
            if y >= inner.bottom() {
                return;
            }
            // A long line's later parts go on under its time, as wrapped rows do.
            // The time it was finished: lines are listed in that order.
            if r == 0 && !line.cont {
                let t = line
                    .ended
                    .or(line.time)
                    .map_or_else(|| "        ".to_owned(), |(s, _)| format::time_of_day(s));
                buf.set_stringn(inner.x + 1, y, &t, w, theme.dim());
            }
            draw_row(buf, (inner.x + 10, y), (part, at), &styled, (tw, style));
            y += 1;
        }
    }
}

/// The pane's title (lines as written, the scroll, the filter, lines no longer
/// kept), and how many lines as written are above the pane, for `first` (the
/// first line piece drawn), `back` (pieces scrolled back) and `above` (pieces
/// above the pane).
fn title(
    app: &App,
    view: &ConsoleView<'_>,
    (first, back, above): (usize, usize, usize),
) -> (String, usize) {
    let total = view.len();
    // Lines as written before piece `n`: a line longer than the console keeps in
    // one is kept as pieces, and counts once (a walk only where there are such).
    let written = view.written();
    let heads = |n: usize| {
        if written == total {
            n
        } else {
            (0..n)
                .filter(|&i| view.get(i).is_some_and(|l| !l.cont))
                .count()
        }
    };
    let above = heads(above);
    let mut title = if back > 0 {
        let last = heads(total - back);
        format!(
            "Console Logs [{}-{last} of {written}] ↓ {} newer",
            heads(first + 1).max(1),
            written - last
        )
    } else {
        match written {
            1 => "Console Logs [1 line]".to_owned(),
            n => format!("Console Logs [{n} lines]"),
        }
    };
    if app.panes.console.filter.is_active() {
        title.push_str(&format!(
            " filtered from {} by /{}",
            view.total_written(),
            sanitize(&app.panes.console.filter.text)
        ));
    }
    // Lines past what the console keeps: said, not silently gone.
    let console = &app.shown.run.console;
    let kept = (console.lines().len() - console.kept_conts()) as u64;
    let older = console.logical_total().saturating_sub(kept);
    if older > 0 {
        title.push_str(&format!(" · {older} older not kept"));
    }
    (title, above)
}

/// A line's text as drawn ([`sanitize`]d, tabs out to their stops, as the
/// wrapping and the scroll limits see it) and the styles its SGR sequences gave, as byte ranges of that text,
/// each over `base` (the stream's style).
fn styled_text(line: &Line, base: Style, theme: Theme) -> (String, Vec<(Range<usize>, Style)>) {
    let mut text = String::with_capacity(line.text.len());
    let mut styled = Vec::with_capacity(line.spans.len());
    let mut at = 0;
    let mut col = 0;
    for span in &line.spans {
        let (start, end) = (span.start as usize, span.end as usize);
        // The store's ranges are in order at character boundaries; one that is not
        // is drawn plain rather than trusted.
        let (Some(gap), Some(inside)) = (line.text.get(at..start), line.text.get(start..end))
        else {
            continue;
        };
        // Sanitising the pieces one by one gives the whole's text: the store
        // already took every escape sequence out, so each character stands alone
        // (and a tab goes to its stop from where the pieces before it ended).
        text.push_str(&crate::text::sanitize_tabs(gap, &mut col, TAB));
        let from = text.len();
        text.push_str(&crate::text::sanitize_tabs(inside, &mut col, TAB));
        styled.push((from..text.len(), base.patch(theme.console(span.style))));
        at = end;
    }
    let rest = line.text.get(at..).unwrap_or_default();
    text.push_str(&crate::text::sanitize_tabs(rest, &mut col, TAB));
    (text, styled)
}

/// Draw one wrapped row, `row` at byte `at` of its line's text, from `(x, y)` in at
/// most `width` columns: in `base`, but where `styled` (ranges of the line's text)
/// says otherwise.
fn draw_row(
    buf: &mut Buffer,
    (mut x, y): (u16, u16),
    (row, at): (&str, usize),
    styled: &[(Range<usize>, Style)],
    (mut width, base): (usize, Style),
) {
    let mut put = |piece: &str, style: Style| {
        let (nx, _) = buf.set_stringn(x, y, piece, width, style);
        width = width.saturating_sub(usize::from(nx.saturating_sub(x)));
        x = nx;
    };
    let mut done = 0;
    for (range, style) in styled {
        let start = range.start.saturating_sub(at).min(row.len());
        let end = range.end.saturating_sub(at).min(row.len());
        if end <= done {
            continue;
        }
        put(row.get(done..start).unwrap_or_default(), base);
        put(row.get(start.max(done)..end).unwrap_or_default(), *style);
        done = end;
    }
    put(row.get(done..).unwrap_or_default(), base);
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
