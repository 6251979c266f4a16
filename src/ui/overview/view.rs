//! Left sidebar (run overview: facts, Summary, Config, Environment) and right
//! sidebar (system metric charts, grouped by family).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::text::sanitize;
use crate::ui::layout;
use crate::ui::overview::OverviewLayout;
use crate::ui::panels::Pane;
use crate::ui::system;
use crate::ui::system::view::render_sys_chart;
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{fit, fit_key, fit_words};
use crate::ui::widget::format;
use crate::ui::{App, LiveState, OverviewPane, Row};

fn separator(buf: &mut Buffer, x: u16, area: Rect, theme: Theme) {
    for y in area.y..area.bottom() {
        buf.set_string(x, y, "│", theme.dim());
    }
}

/// The run file is there but holds no record yet (no byte, only the W&B header,
/// the first record not whole yet, or nothing readable: a run that has not
/// written its first record): a log that is empty, not a running or crashed run,
/// however long it stays so (as `leet inspect --summary` and the workspace say;
/// damage, if any, is the status bar's warning).
fn empty_file(app: &App) -> bool {
    app.shown.source.file.is_some()
        && app.shown.run.counts.total == 0
        && app.shown.run.exit_code.is_none()
        && app.unreadable().is_none()
}

/// A run directory without its file yet: nothing is known of the run, so nothing
/// says running (the status bar says what is awaited, and where).
fn no_file_yet(app: &App) -> bool {
    app.shown.source.file.is_none() && app.shown.source.waiting.is_some()
}

/// State word and style for the overview and the status bar.
#[must_use]
pub(crate) fn state_label(app: &App, theme: Theme) -> (String, Style) {
    if app.is_host() {
        if let Some(o) = (app.host.cluster.as_deref()).and_then(crate::ui::cluster::opened) {
            // A host of the cluster: its state is the server's word on it, not
            // whether samples come (they come from the server for a dead host too).
            return match o.state {
                crate::store::cluster::HostState::Up => ("live ●".into(), theme.good()),
                crate::store::cluster::HostState::Down => (o.words(), theme.bad()),
                crate::store::cluster::HostState::Stale => (o.words(), theme.warn()),
            };
        }
        return match app.live_state() {
            LiveState::Live => ("live ●".into(), theme.good()),
            _ => ("live (no sample lately)".into(), theme.warn()),
        };
    }
    if empty_file(app) {
        // A process that made the file and died writes no more: past the stale
        // limit, how long nothing has come is said, not that a record is coming.
        if let LiveState::MaybeCrashed(q) = app.live_state() {
            return (
                format!("empty: nothing written for {}", format::duration(q)),
                theme.bad(),
            );
        }
        return ("empty: waiting for the first record".into(), theme.warn());
    }
    if no_file_yet(app) {
        return ("no file yet".into(), theme.warn());
    }
    let state = app.live_state();
    // Marked preempting (`wandb.mark_preempting()`): a run that then went quiet
    // was most likely preempted, not crashed.
    if app.shown.run.preempting {
        match state {
            LiveState::MaybeCrashed(q) => {
                return (
                    format!(
                        "preempted? (marked preempting, quiet {})",
                        format::duration(q)
                    ),
                    theme.warn(),
                );
            }
            LiveState::Live | LiveState::Running(_) => {
                let (w, _) = state_words(state, theme);
                return (format!("{w} · preempting"), theme.warn());
            }
            _ => {}
        }
    }
    state_words(state, theme)
}

/// A run's state in words (with how long it has been quiet), and its style.
#[must_use]
pub(crate) fn state_words(state: LiveState, theme: Theme) -> (String, Style) {
    match state {
        LiveState::Finished => ("finished".into(), theme.good()),
        LiveState::Loading => ("loading…".into(), theme.warn()),
        LiveState::Unreadable => ("unreadable".into(), theme.bad()),
        LiveState::Failed(c) => (format!("failed (exit {c})"), theme.bad()),
        LiveState::Live => ("running ●".into(), theme.good()),
        LiveState::Running(q) => (
            format!("running (quiet {})", format::duration(q)),
            theme.warn(),
        ),
        LiveState::MaybeCrashed(q) => (
            format!("crashed? (no exit record, quiet {})", format::duration(q)),
            theme.bad(),
        ),
    }
}

/// Runtime in seconds: from the exit record, else the data's time span.
#[must_use]
pub(crate) fn runtime(app: &App) -> Option<f64> {
    app.shown.run.runtime()
}

/// Width of the overview's key column (the key and one space): as wide as the
/// longest key, within 8 columns and the lesser of 19 and 45% of the pane, so
/// values stay readable.
fn key_column(pane: &OverviewPane, fixed: &[(String, String, Style)], w: usize) -> usize {
    use unicode_width::UnicodeWidthStr;
    let cap = (w * 45 / 100).clamp(8, 19);
    let keys = fixed
        .iter()
        .map(|(k, _, _)| k.as_str())
        .chain(pane.rows.iter().filter_map(|r| match r {
            Row::Item(k, _)
            | Row::Bytes(k, _)
            | Row::Metric(k, _)
            | Row::Note(k, _)
            | Row::Time(k, _) => Some(k.as_str()),
            Row::Header(_) => None,
        }));
    let mut longest = 0;
    for k in keys {
        longest = longest.max(k.width() + 1);
        if longest >= cap {
            break;
        }
    }
    longest.clamp(8.min(cap), cap).min(w)
}

/// The run overview.
pub(crate) fn render_left(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 4 || area.height == 0 {
        return;
    }
    separator(buf, area.right() - 1, area, theme);
    let inner = Rect::new(area.x + 1, area.y, area.width - 2, area.height);
    let (state, style) = state_label(app, theme);
    let i = &app.shown.run.info;
    let mut fixed: Vec<(String, String, Style)> = vec![("State".into(), state, style)];
    // An empty file, or none yet, has no run record: no blank ID row.
    if !((empty_file(app) || no_file_yet(app)) && i.run_id.is_empty()) {
        fixed.push(("ID".into(), sanitize(&i.run_id), theme.text()));
    }
    if let Some(r) = runtime(app) {
        fixed.push(("Runtime".into(), format::duration(r), theme.text()));
    }
    if app.shown.run.history_rows > 0 {
        fixed.push((
            "Step".into(),
            app.shown.run.step().to_string(),
            theme.text(),
        ));
    }
    let focused = app.panels.focus == Pane::Left;
    render_overview(buf, inner, &app.panes.overview, &fixed, focused, theme);
}

/// An overview pane's rows in `inner`: its title, the `fixed` rows pinned under
/// it, then the facts and each section under its title, paged on its own (the
/// run overview, and the workspace's highlighted run's).
pub(crate) fn render_overview(
    buf: &mut Buffer,
    inner: Rect,
    ov: &OverviewPane,
    fixed: &[(String, String, Style)],
    focused: bool,
    theme: Theme,
) {
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let w = inner.width;
    buf.set_stringn(
        inner.x,
        inner.y,
        "Run Overview",
        usize::from(w),
        theme.title(focused).patch(theme.heading()),
    );
    let key_w = key_column(ov, fixed, usize::from(w));
    let note_w = note_width(ov);
    let mut y = inner.y + 1;
    let bottom = inner.bottom();
    let row = |buf: &mut Buffer, y: u16, k: &str, v: &str, vs: Style| {
        let k = fit_key(k, key_w.saturating_sub(1));
        buf.set_stringn(inner.x, y, &k, key_w, theme.label());
        let vw = usize::from(w).saturating_sub(key_w);
        buf.set_stringn(inner.x + key_w as u16, y, fit(v, vw), vw, vs);
    };
    for (k, v, s) in fixed {
        if y >= bottom {
            return;
        }
        row(buf, y, k, v, *s);
        y += 1;
    }
    // The facts, then each section under its title, paged on its own.
    let room = layout::overview_list_rows(inner, fixed.len());
    let lay = ov.layout(room);
    let draw = |buf: &mut Buffer, y: u16, r: &Row| match r {
        Row::Header(h) => {
            buf.set_stringn(
                inner.x,
                y,
                fit(h, usize::from(w)),
                usize::from(w),
                theme.heading(),
            );
        }
        Row::Item(k, v) => row(buf, y, k, v, theme.text()),
        Row::Bytes(k, b) => row(buf, y, k, &format::bytes(*b), theme.text()),
        Row::Metric(k, v) => row(buf, y, k, &system::reading(k, *v), theme.text()),
        // Its raw number is on the filter row (the status bar) while filtering.
        Row::Time(k, t) => row(buf, y, k, &Row::date(*t), theme.text()),
        Row::Note(k, v) => {
            // Family names are short: the reason gets the rest of the line.
            let kw = (note_w + 2).min(key_w);
            let k = fit(k, kw.saturating_sub(1));
            buf.set_stringn(inner.x, y, &k, kw, theme.label());
            let vw = usize::from(w).saturating_sub(kw);
            buf.set_stringn(inner.x + kw as u16, y, fit_words(v, vw), vw, theme.warn());
        }
    };
    for r in &ov.facts()[..lay.facts] {
        if y >= bottom {
            return;
        }
        draw(buf, y, r);
        y += 1;
    }
    for i in 0..ov.sections.len() {
        if lay.heights.get(i).copied().unwrap_or(0) == 0 || y >= bottom {
            continue;
        }
        let active = focused && i == ov.active;
        section_title(buf, (inner, y), (ov, i, &lay), active, theme);
        y += 1;
        let (first, shown) = ov.window(i, &lay);
        for r in ov.section_rows(i).iter().skip(first).take(shown) {
            if y >= bottom {
                return;
            }
            draw(buf, y, r);
            y += 1;
        }
    }
}

/// The width of the widest key of the overview's notes.
fn note_width(ov: &OverviewPane) -> usize {
    ov.rows
        .iter()
        .filter_map(|r| match r {
            Row::Note(k, _) => Some(crate::ui::widget::fit::width(k).into()),
            _ => None,
        })
        .max()
        .unwrap_or(0usize)
}

/// Section `i`'s title on row `y` of `inner` (marked when it is the `active` one).
fn section_title(
    buf: &mut Buffer,
    (inner, y): (Rect, u16),
    (ov, i, lay): (&OverviewPane, usize, &OverviewLayout),
    active: bool,
    theme: Theme,
) {
    let w = inner.width;
    let title = if active {
        format!("▸ {}", ov.title(i, lay))
    } else {
        ov.title(i, lay)
    };
    let style = if active {
        theme.title(true).patch(theme.heading())
    } else {
        theme.heading()
    };
    buf.set_stringn(
        inner.x,
        y,
        fit(&title, usize::from(w)),
        usize::from(w),
        style,
    );
}

/// The system metrics sidebar.
pub(crate) fn render_right(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 4 || area.height == 0 {
        return;
    }
    separator(buf, area.x, area, theme);
    let focused = app.panels.focus == Pane::Right;
    let n = app.panes.system.shown.len();
    let per = if app.screen.areas.right == Some(area) {
        app.screen.limits.system_page
    } else {
        layout::sys_per_page(area)
    };
    let start = app.panes.system.top(per);
    let end = (start + per).min(n);
    // Focused, as the overview's active section: marked, and in the focused
    // title's style (the console's convention), so that the arrows' target shows.
    let mark = if focused { "▸ " } else { "" };
    let mut header = if n == 0 {
        format!("{mark}System Metrics")
    } else {
        format!("{mark}System Metrics [{}-{end} of {n}]", start + 1)
    };
    if app.panes.system.filter.is_active() {
        header.push_str(&format!(" \\{}", sanitize(&app.panes.system.filter.text)));
    }
    let left_out = app.panes.system.nodes_left_out;
    if left_out > 0 {
        let s = if left_out == 1 { "" } else { "s" };
        header.push_str(&format!(" +{left_out} node{s} not drawn"));
    }
    let w = usize::from(area.width.saturating_sub(2));
    buf.set_stringn(area.x + 2, area.y, fit(&header, w), w, theme.title(focused));
    if n == 0 {
        let msg = if app.charts.sys.is_empty() {
            "no system metrics"
        } else {
            "no chart matches the filter"
        };
        if area.height > 2 {
            buf.set_stringn(area.x + 2, area.y + 2, msg, w, theme.dim());
        }
        return;
    }
    for (slot, i) in (start..end).enumerate() {
        let cell = layout::sys_cell(area, slot).intersection(area);
        if cell.height < 3 {
            break;
        }
        if let Some(chart) = app.panes.system.chart(&app.charts.sys, i) {
            render_sys_chart(buf, cell, app, &chart, false, theme);
        }
    }
}
