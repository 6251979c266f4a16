//! The record inspector, full screen: a title line (the file, how many records,
//! the index's and the filter's progress), the list of records (number, offset,
//! type, hint) beside the selected record's body, and a status line (the filter
//! being typed, or the keys).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use crate::msg::{kind_name, RecordRow};
use crate::text::{sanitize, sanitize_path};
use crate::ui::action::Action;
use crate::ui::inspector::{areas, Focus, Inspector};
use crate::ui::keymap::{hint_line, Keymap, Mode};
use crate::ui::overlay::Kind;
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{self, fit, put};
use crate::ui::widget::format;
use crate::ui::{App, FilterTarget};

/// Digits of `n` (at least `min`).
fn digits(n: u64, min: usize) -> usize {
    n.to_string().len().max(min)
}

/// Percent done of `part` in `whole`, floored (100 only when done).
fn percent(part: u64, whole: u64) -> u64 {
    if whole == 0 || part >= whole {
        return 100;
    }
    let p = (u128::from(part) * 100 / u128::from(whole)) as u64;
    p.min(99)
}

/// A row's number: the record's own (`leet inspect --json`'s `num`); a damaged
/// span has none.
fn num_text(r: &RecordRow) -> String {
    r.num.map_or_else(|| "·".to_owned(), |n| n.to_string())
}

/// A list row: number, offset, type, hint, in `w` columns.
fn row_text(r: &RecordRow, num_w: usize, off_w: usize, w: usize) -> String {
    let text = format!(
        "{:>num_w$} @{:<off_w$} {:<11} {}",
        num_text(r),
        r.offset,
        kind_name(r.kind),
        r.hint
    );
    fit(&text, w)
}

fn block(title: &str, focused: bool, theme: Theme, w: u16) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(fit(title, usize::from(w.saturating_sub(4))))
        .title_style(theme.title(focused))
}

/// What the title line says after the file's name.
fn progress(i: &Inspector) -> String {
    let p = &i.page;
    // Damaged spans are rows, not records: counted apart.
    let spans = p
        .kinds
        .iter()
        .find(|(k, _)| *k == crate::msg::KIND_SKIP)
        .map_or(0, |&(_, n)| n);
    let mut s = format!(
        "{} records · {}",
        p.indexed.saturating_sub(spans),
        format::bytes(p.file_len as f64)
    );
    if spans > 0 {
        s.push_str(&format!(" · {spans} damaged span(s)"));
    }
    if p.indexing {
        s.push_str(&format!(" · indexing {}%", percent(p.scanned, p.file_len)));
    }
    let kind = i.kind.map(kind_name);
    if kind.is_some() || i.filter.is_active() {
        s.push_str(" · filter");
        if let Some(k) = kind {
            s.push_str(&format!(" type={k}"));
        }
        if i.filter.is_active() {
            s.push_str(&format!(" /{}/", sanitize(&i.filter.text)));
        }
        s.push_str(&format!(": {} match", p.total));
        if p.total != 1 {
            s.push_str("es");
        }
        if i.filtering() {
            s.push_str(&format!(" (checked {}%)", percent(p.checked, p.indexed)));
        }
    }
    if i.follow {
        s.push_str(" · following");
    }
    if let Some((_, len)) = p.open_damage {
        s.push_str(&format!(" · ⚠ {len} damaged bytes at the end"));
    }
    s
}

/// Draw the inspector over the whole screen.
pub(crate) fn render_inspector(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    let Some(i) = app.overlay.inspector() else {
        return;
    };
    Clear.render(area, buf);
    let a = areas(area);
    // Title line.
    // The file's name: its directory is in the run's, and would crowd the line.
    let name = i.path.file_name().map_or_else(
        || sanitize_path(&i.path),
        |n| sanitize(&n.to_string_lossy()),
    );
    let title = format!(" Records · {name} · {}", progress(i));
    let used = put(
        buf,
        a.title.x,
        a.title.y,
        &fit(&title, usize::from(a.title.width)),
        a.title.width,
        theme.heading(),
    );
    if let Some(e) = &i.page.error {
        let room = a.title.width.saturating_sub(used + 3);
        put(
            buf,
            a.title.x + used + 3,
            a.title.y,
            &fit(&format!("✗ {}", sanitize(e)), usize::from(room)),
            room,
            theme.bad(),
        );
    }
    render_list(buf, a.list, i, theme);
    render_body(buf, a.body, i, theme);
    render_status(buf, a.status, app, i, theme);
}

fn render_list(buf: &mut Buffer, area: Rect, i: &Inspector, theme: Theme) {
    let p = &i.page;
    let shown = if p.total == 0 {
        " Records ".to_owned()
    } else {
        format!(" Records {}/{} ", i.selected + 1, p.total)
    };
    let b = block(&shown, i.focus == Focus::List, theme, area.width);
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if p.total == 0 {
        // Nothing yet: the index, the filter or the answer to the last request is
        // still to come.
        let msg = if p.indexing || i.filtering() || p.gen != i.gen {
            "reading…"
        } else if i.kind.is_some() || i.filter.is_active() {
            "no record matches the filter (ctrl+l clears it)"
        } else {
            "no records yet"
        };
        put(
            buf,
            inner.x,
            inner.y,
            &fit(msg, usize::from(inner.width)),
            inner.width,
            theme.dim(),
        );
        return;
    }
    // Numbers past the rows' count after records lost to damage widen the column.
    let top = p.rows.iter().filter_map(|r| r.num).max().unwrap_or(0);
    let num_w = digits(p.indexed.max(top), 3);
    let off_w = digits(p.file_len, 4);
    let w = usize::from(inner.width);
    for y in 0..inner.height {
        let pos = i.from + u64::from(y);
        if pos >= p.total {
            break;
        }
        let sel = pos == i.selected;
        let style = if sel {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            theme.text()
        };
        let text = match p.rows.iter().find(|r| r.pos == pos) {
            Some(r) => row_text(r, num_w, off_w, w),
            None => fit("…", w),
        };
        let text = if sel { format!("{text:<w$}") } else { text };
        put(buf, inner.x, inner.y + y, &text, inner.width, style);
    }
}

fn render_body(buf: &mut Buffer, area: Rect, i: &Inspector, theme: Theme) {
    let sel = i.page.rows.iter().find(|r| r.pos == i.selected);
    let title = match sel {
        Some(r) if r.num.is_none() => format!(" {} @{} ", kind_name(r.kind), r.offset),
        Some(r) => format!(" #{} {} @{} ", num_text(r), kind_name(r.kind), r.offset),
        None => " Record ".to_owned(),
    };
    let b = block(&title, i.focus == Focus::Body, theme, area.width);
    let inner = b.inner(area);
    b.render(area, buf);
    let (w, h) = (usize::from(inner.width), usize::from(inner.height));
    // Wrapped as the keys scroll it; drawn at another width (a frame before the
    // resize reached the state), wrapped here for this frame.
    let fresh;
    let wrap = if i.wrap.width() == w {
        &i.wrap
    } else {
        fresh = super::wrap::BodyWrap::new(&i.body, w);
        &fresh
    };
    let top = i.body_scroll.min(wrap.total().saturating_sub(h));
    let (line, skip) = wrap.locate(top);
    let rows = i
        .body
        .iter()
        .skip(line)
        .flat_map(|l| super::wrap::split(l, w))
        .skip(skip)
        .take(h);
    for (y, row) in rows.enumerate() {
        put(
            buf,
            inner.x,
            inner.y + y as u16,
            row,
            inner.width,
            theme.text(),
        );
    }
    let more = wrap.total().saturating_sub(top + h);
    if (more > 0 || top > 0) && area.height > 2 && area.width > 8 {
        let hint = format!(
            " {}–{} of {} ",
            top + 1,
            (top + h).min(wrap.total()),
            wrap.total()
        );
        let hint = fit(&hint, usize::from(area.width - 4));
        let x = area.right().saturating_sub(hint.chars().count() as u16 + 2);
        put(
            buf,
            x,
            area.bottom() - 1,
            &hint,
            area.width - 4,
            theme.dim(),
        );
    }
}

/// The browser's keys in its status bar, as the key map binds them: while a
/// text filter still reads the file, how to stop it.
fn status_keys(km: &Keymap, i: &Inspector) -> String {
    let m = Mode::Overlay(Kind::Inspector);
    let key = |a: &[Action]| km.hint_key(m, a);
    let select = km.hint_pair(m, (Action::FocusUp, Action::FocusDown), "");
    if i.filtering() && i.filter.is_active() {
        let stop = key(&[Action::Back]).map(|k| format!("filtering… {k} stops"));
        return hint_line([
            (stop, ""),
            (select, "select"),
            (key(&[Action::CycleRecordType]), "type"),
            (key(&[Action::ClearFilters]), "clear"),
            (key(&[Action::Quit]), "quit"),
        ]);
    }
    // `leet inspect` has nothing to go back to: back quits.
    let back = key(&[Action::Back, Action::InspectRecords]);
    let back_does = if i.standalone { "quit" } else { "back" };
    hint_line([
        (select, "select"),
        (key(&[Action::CyclePaneFocus]), "body"),
        (key(&[Action::CycleRecordType]), "type"),
        (key(&[Action::StartFilter]), "filter"),
        (key(&[Action::LastPage]), "follow"),
        (back, back_does),
        (key(&[Action::Quit]), "quit"),
    ])
}

fn render_status(buf: &mut Buffer, area: Rect, app: &App, i: &Inspector, theme: Theme) {
    if area.height == 0 {
        return;
    }
    for x in area.left()..area.right() {
        buf[(x, area.y)].set_style(theme.status_bar());
    }
    let text = if app.filter_target == Some(FilterTarget::Records) {
        let f = &i.filter;
        let tail = match &f.error {
            Some(e) => format!("  ✗ {}", sanitize(e)),
            None => {
                let km = &app.screen.keymap;
                let keys = hint_line([
                    (km.hint_key(Mode::Filter, &[Action::FilterApply]), "keep"),
                    (
                        km.hint_key(Mode::Filter, &[Action::FilterCancel]),
                        "restore",
                    ),
                ]);
                format!("  {keys}")
            }
        };
        format!(" /{}▏{tail}", sanitize(&f.draft))
    } else {
        format!(" {}", status_keys(&app.screen.keymap, i))
    };
    let n = put(
        buf,
        area.x,
        area.y,
        &fit(&text, usize::from(area.width)),
        area.width,
        theme.status_bar(),
    );
    let f = &i.filter;
    if app.filter_target == Some(FilterTarget::Records) && f.selected {
        let sel = fit::width(&sanitize(&f.draft));
        fit::reverse(buf, (area.x + 2, area.y), sel, area.x + n);
    }
}
