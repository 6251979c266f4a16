//! The workspace's runs list (the left pane, `[`) and its status bar: per run its
//! mark (drawn ■ in its colour, pinned ▲), state, name, id, start, runtime and the
//! chosen summary value; zebra rows; the filter as typed, with its error.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use crate::msg::RunStatus;
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::{hint_line, Keymap, Mode};
use crate::ui::overview::view::{render_overview, state_words};
use crate::ui::panels::Pane;
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{self, put};
use crate::ui::widget::format;
use crate::ui::workspace::runs::Runs;
use crate::ui::workspace::{Prompt, Workspace, WsRun};
use crate::ui::{App, FilterTarget};

/// The state column: word and style (a narrow list shows only the glyph). A file
/// with no run record yet is `starting` while it is fresh (the SDK writes the
/// header first, and an offline run's first records may follow seconds later) and
/// `empty` once it has been quiet past the stale limit (killed before it wrote);
/// `unknown` is left for a directory without a readable run file.
fn state(r: &WsRun, ws: &Workspace, now: f64, theme: Theme) -> (&'static str, &'static str, Style) {
    if r.reading() {
        return ("reading…", "…", theme.dim());
    }
    if r.unreadable() {
        return ("bad file", "!", theme.bad());
    }
    match r.state() {
        RunStatus::Running => ("● live", "●", theme.good()),
        RunStatus::Finished => ("finished", "✓", theme.label()),
        RunStatus::Failed => ("failed", "✗", theme.bad()),
        RunStatus::Crashed => ("crashed?", "?", theme.warn()),
        RunStatus::Unknown => match r.waiting_for_first_record(now) {
            Some(quiet) if quiet < ws.stale_after.as_secs_f64() => ("starting", "…", theme.dim()),
            Some(_) => ("empty", "∅", theme.bad()),
            None => ("unknown", "…", theme.dim()),
        },
    }
}

/// `MM-DD HH:MM` (UTC) of Unix seconds.
fn start_text(t: Option<f64>) -> String {
    t.and_then(|t| crate::text::rfc3339(t.floor() as i64, 0))
        .and_then(|s| s.get(5..16).map(|s| s.replace('T', " ")))
        .unwrap_or_default()
}

/// `MM-DD HH:MM:SS` (UTC) of Unix seconds.
fn start_secs(t: Option<f64>) -> String {
    t.and_then(|t| crate::text::rfc3339(t.floor() as i64, 0))
        .and_then(|s| s.get(5..19).map(|s| s.replace('T', " ")))
        .unwrap_or_else(|| "?".to_owned())
}

/// A summary value as the list shows it.
fn value_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::Number(n)) => n.as_f64().map(format::value).unwrap_or_default(),
        Some(serde_json::Value::String(s)) => sanitize(s),
        Some(serde_json::Value::Bool(b)) => b.to_string(),
        Some(serde_json::Value::Null) | None => "–".to_owned(),
        // A logged histogram as the overview lists it, not its raw JSON.
        Some(serde_json::Value::Object(o))
            if o.get("_type").and_then(serde_json::Value::as_str) == Some("histogram") =>
        {
            sanitize(&leet_text::histogram_text(o))
        }
        Some(v) => sanitize(&v.to_string()),
    }
}

/// Columns that fit in `w` cells: (state wide, id, start, runtime, value).
fn columns(w: usize, value: bool) -> (bool, bool, bool, bool, bool) {
    // mark 2 + state 9 + name ≥ 12, then value 10, runtime 8, start 12, id 9.
    let mut left = w.saturating_sub(2 + 12);
    let mut take = |n: usize| {
        if left >= n {
            left -= n;
            true
        } else {
            false
        }
    };
    let wide = take(9) || {
        take(2);
        false
    };
    let value = value && take(11);
    let runtime = take(9);
    let start = take(12);
    let id = take(10);
    (wide, id, start, runtime, value)
}

/// The runs pane: the list, and the highlighted run's overview below it.
pub(crate) fn render_runs_pane(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    let Some(ws) = app.runs.workspace.as_deref() else {
        return;
    };
    if area.width < 6 || area.height < 2 {
        return;
    }
    // The separator on the right, as the overview's.
    for y in area.y..area.bottom() {
        put(buf, area.right() - 1, y, "│", 1, theme.dim());
    }
    let (list, overview) = ws.split(area);
    render_list(buf, list, app, ws, theme);
    if let (Some(o), Some(r)) = (overview, ws.cursor_run()) {
        render_highlighted(buf, o, app, ws, r, theme);
    }
}

/// The highlighted run's overview (the app's overview holds its rows while the
/// list is shown), its state as the list decides it.
fn render_highlighted(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    ws: &Workspace,
    r: &WsRun,
    theme: Theme,
) {
    let inner = Rect::new(area.x + 1, area.y, area.width - 2, area.height);
    let p = r.pinned(app.shown.now);
    let (state, style) = match (p.state, &p.error) {
        _ if r.reading() => ("reading…".to_owned(), theme.dim()),
        (Some(s), _) => state_words(s, theme),
        (None, Some(e)) => (format!("unreadable: {}", sanitize(e)), theme.bad()),
        (None, None) => match r.waiting_for_first_record(app.shown.now) {
            // Said as the viewer's header says it of the same file.
            Some(q) if q >= ws.stale_after.as_secs_f64() => (
                format!("empty: nothing written for {}", format::duration(q)),
                theme.bad(),
            ),
            Some(_) => (
                "empty: waiting for the first record".to_owned(),
                theme.warn(),
            ),
            None => ("no run record yet".to_owned(), theme.dim()),
        },
    };
    let mut fixed = vec![
        ("State".to_owned(), state, style),
        ("ID".to_owned(), sanitize(&p.id), theme.text()),
    ];
    if let Some(t) = p.runtime {
        fixed.push(("Runtime".into(), format::duration(t), theme.text()));
    }
    if let Some(s) = p.step {
        fixed.push(("Step".into(), s.to_string(), theme.text()));
    }
    let focused = app.panels.focus == Pane::Left && ws.overview.focus;
    render_overview(buf, inner, &app.panes.overview, &fixed, focused, theme);
}

/// The runs list in `area` (the top of the pane).
fn render_list(buf: &mut Buffer, area: Rect, app: &App, ws: &Workspace, theme: Theme) {
    let inner = Rect::new(area.x + 1, area.y, area.width - 2, area.height);
    let w = usize::from(inner.width);
    let focused = app.panels.focus == Pane::Left && !ws.overview.focus;
    let total = ws.runs.len();
    let title = list_title(ws);
    put(
        buf,
        inner.x,
        inner.y,
        &title,
        inner.width,
        theme.title(focused).patch(theme.heading()),
    );
    if !ws.indexed {
        put(
            buf,
            inner.x + 1,
            inner.y + 1,
            "reading the runs…",
            inner.width,
            theme.dim(),
        );
        return;
    }
    if ws.shown.is_empty() {
        render_no_runs(buf, inner, ws, total, theme);
        return;
    }
    let col = ws.summary_column.as_deref();
    let (wide, id, start, runtime, value) = columns(w, col.is_some());
    let fixed = 2
        + if wide { 9 } else { 2 }
        + if value { 11 } else { 0 }
        + if runtime { 9 } else { 0 }
        + if start { 12 } else { 0 }
        + if id { 10 } else { 0 };
    let name_w = w.saturating_sub(fixed).max(1);
    // Column header.
    let head = list_head((wide, id, start, runtime, value), name_w, col);
    put(buf, inner.x, inner.y + 1, &head, inner.width, theme.dim());
    let rows = crate::ui::layout::runs_list_rows(inner);
    let twins = twin_names(ws);
    // The highlighted run's details on the last line: its directory, or a resumed
    // run's segments with each one's start.
    if let Some(r) = ws.cursor_run() {
        // Cut with `…` as every other cut text: a directory name cut bare reads
        // as a whole (shorter) one.
        let text = fit::fit(&run_detail(r), w);
        put(
            buf,
            inner.x,
            inner.bottom() - 1,
            &text,
            inner.width,
            theme.dim(),
        );
    }
    for (n, &i) in ws.shown.iter().enumerate().skip(ws.scroll).take(rows) {
        let r = &ws.runs[i];
        let y = inner.y + 2 + (n - ws.scroll) as u16;
        let cursor = n == ws.cursor;
        let base = if cursor && focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else if cursor {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else if n % 2 == 1 {
            theme.zebra()
        } else {
            Style::new()
        };
        buf.set_style(Rect::new(inner.x, y, inner.width, 1), base);
        row(
            buf,
            inner.x,
            y,
            w,
            ws,
            (
                r,
                app.runs.key_color(&r.key).unwrap_or(r.color),
                twins.get(&r.label()).copied().filter(|_| !id),
            ),
            base,
            theme,
            (wide, id, start, runtime, value),
            name_w,
            (col, app.shown.now),
        );
    }
}

/// The list with no row to show: no runs yet (the directory watched: the first
/// to start is listed and drawn), or none the filter matches.
fn render_no_runs(buf: &mut Buffer, inner: Rect, ws: &Workspace, total: usize, theme: Theme) {
    let dir = format!("in {}", crate::text::sanitize_path(&ws.dir));
    let lines: &[&str] = if total == 0 {
        &["no runs yet: waiting for one to start", &dir]
    } else {
        &["no run matches the filter"]
    };
    // Wrapped within the pane after its cell of margin (the directory whole, a
    // long one over several rows), as many rows as it has.
    let w = inner.width.saturating_sub(1);
    let rows = lines
        .iter()
        .flat_map(|l| crate::ui::widget::fit::word_wrap(l, usize::from(w)));
    for (y, line) in (inner.y + 2..inner.y + inner.height).zip(rows) {
        put(buf, inner.x + 1, y, &line, w, theme.dim());
    }
}

/// The names more than one run in the list goes by (the same script run again),
/// each with the fewest leading characters of its runs' ids that tell them apart:
/// where the id column does not fit, such a run's name is followed by its id.
fn twin_names(ws: &Workspace) -> std::collections::HashMap<String, usize> {
    let mut ids: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    for r in &ws.runs {
        let v = ids.entry(r.label()).or_default();
        let id = r.id();
        if !v.contains(&id) {
            v.push(id);
        }
    }
    ids.into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(l, v)| {
            let v: Vec<&str> = v.iter().map(String::as_str).collect();
            (l, crate::text::distinct_prefix_len(&v, 4))
        })
        .collect()
}

/// The runs list's title: how many runs (of how many, filtered), how many
/// drawn, what they are grouped by.
fn list_title(ws: &Workspace) -> String {
    let total = ws.runs.len();
    let mut title = if ws.filter.is_active() {
        format!("Runs [{} of {total}]", ws.shown.len())
    } else {
        format!("Runs [{total}]")
    };
    if !ws.selected.is_empty() {
        title.push_str(&format!(" · {} drawn", ws.selected.len()));
    }
    if let Some(g) = &ws.group_by {
        title.push_str(&format!(" · by {}", sanitize(g)));
    }
    title
}

/// The runs list's column header: the columns that fit (`cols`: wide state, id,
/// start, runtime, value), the name `name_w` wide, the value column `col`.
fn list_head(
    (wide, id, start, runtime, value): (bool, bool, bool, bool, bool),
    name_w: usize,
    col: Option<&str>,
) -> String {
    let mut head = format!(
        "  {:<sw$}{:<name_w$}",
        if wide { "state" } else { "" },
        "name",
        sw = if wide { 9 } else { 2 }
    );
    if id {
        head.push_str(&format!(" {:<9}", "id"));
    }
    if start {
        head.push_str(&format!(" {:<11}", "start (UTC)"));
    }
    if runtime {
        head.push_str(&format!(" {:>8}", "runtime"));
    }
    if value {
        head.push_str(&format!(
            " {}",
            fit::fit_pad(&sanitize(col.unwrap_or("")), 10, true)
        ));
    }
    head
}

/// The highlighted run's details: its directory (and why it is unreadable), or
/// a resumed run's segments with each one's start.
fn run_detail(r: &WsRun) -> String {
    if r.node_count() > 0 {
        let dirs: Vec<String> = r
            .segments
            .iter()
            .chain(&r.nodes)
            .filter_map(|s| s.dir.file_name())
            .map(|n| sanitize(&n.to_string_lossy()))
            .collect();
        format!("{} nodes: {}", r.node_count(), dirs.join(" · "))
    } else if r.resumed() {
        let starts: Vec<String> = r
            .segments
            .iter()
            .map(|s| start_secs(s.start_time))
            .collect();
        format!(
            "↻ {} segments, started {}",
            r.segments.len(),
            starts.join(" · ")
        )
    } else {
        let dir = r
            .latest()
            .dir
            .file_name()
            .map(|n| sanitize(&n.to_string_lossy()))
            .unwrap_or_default();
        match r.read_error() {
            Some(e) if r.unreadable() => format!("unreadable: {} · {dir}", sanitize(e)),
            _ => dir,
        }
    }
}

/// One run's row at (x, y).
#[allow(clippy::too_many_arguments)]
fn row(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    w: usize,
    ws: &Workspace,
    (r, color, twin): (&WsRun, usize, Option<usize>),
    base: Style,
    theme: Theme,
    (wide, id, start, runtime, value): (bool, bool, bool, bool, bool),
    name_w: usize,
    (col, now): (Option<&str>, f64),
) {
    let max = u16::try_from(w).unwrap_or(u16::MAX);
    let end = x + max;
    let mut at = x;
    let mut put_s = |at: &mut u16, s: &str, style: Style| {
        if *at < end {
            *at += put(buf, *at, y, s, end - *at, base.patch(style));
        }
    };
    let selected = ws.is_selected(&r.key);
    let pinned = ws.pinned.as_deref() == Some(r.key.as_str());
    let mark = if pinned {
        "▲ "
    } else if selected {
        "■ "
    } else {
        "  "
    };
    put_s(&mut at, mark, theme.series(color));
    let (word, glyph, style) = state(r, ws, now, theme);
    if wide {
        put_s(&mut at, &format!("{word:<9}"), style);
    } else {
        put_s(&mut at, &format!("{glyph} "), style);
    }
    let mut name = r.label();
    if let Some(n) = twin {
        name.push_str(&format!(" ({})", crate::text::prefix(&r.id(), n)));
    }
    if r.resumed() {
        name.push_str(&format!(" ↻{}", r.segments.len()));
    } else if r.node_count() > 0 {
        name.push_str(&format!(" ({} nodes)", r.node_count()));
    }
    let name_style = if selected {
        theme.series(color)
    } else {
        theme.text()
    };
    put_s(&mut at, &fit::fit_pad(&name, name_w, false), name_style);
    if id {
        let i = r.id();
        put_s(
            &mut at,
            &format!(" {}", fit::fit_pad(&i, 9, false)),
            theme.dim(),
        );
    }
    if start {
        put_s(
            &mut at,
            &format!(" {:<11}", start_text(r.start())),
            theme.label(),
        );
    }
    if runtime {
        let t = r.runtime().map(format::duration).unwrap_or_default();
        put_s(
            &mut at,
            &format!(" {}", fit::fit_pad(&t, 8, true)),
            theme.label(),
        );
    }
    if value {
        let v = value_text(col.and_then(|c| r.summary_value(c)));
        put_s(
            &mut at,
            &format!(" {}", fit::fit_pad(&v, 10, true)),
            theme.text(),
        );
    }
}

/// Most characters of a query being typed the status bar shows: its end, where
/// the typing is, with room left for what is wrong with it.
const DRAFT_SHOWN: usize = 60;

/// The end of a long draft, `…` before it.
fn draft_tail(s: &str) -> String {
    let n = s.chars().count();
    if n <= DRAFT_SHOWN {
        return s.to_owned();
    }
    let tail: String = s.chars().skip(n - (DRAFT_SHOWN - 1)).collect();
    format!("…{tail}")
}

/// The workspace's parts of the status bar.
impl Workspace {
    /// Where, how many runs, what is drawn, and the filter or prompt being typed
    /// (`typing`, with what is wrong in it, where), in a bar `width` wide. Returns
    /// the prompt's selected prefill, if any: (its part, from which column, how
    /// many columns).
    pub(crate) fn status_parts(
        &self,
        typing: Option<FilterTarget>,
        width: u16,
        (theme, runs, keymap): (Theme, &Runs, &Keymap),
        parts: &mut Vec<(String, Style)>,
    ) -> Option<(usize, u16, u16)> {
        let ws = self;
        let mut selected = None;
        parts.push((
            " workspace ".to_owned(),
            theme.key().add_modifier(Modifier::REVERSED),
        ));
        // While typing, the prompt and what is wrong with it get the room.
        if typing.is_none() {
            if width >= 120 || !ws.filter.is_active() {
                parts.push((format!("wandb dir: {}", sanitize(&ws.label)), theme.text()));
            }
            let drawn = if ws.selected.is_empty() && !ws.is_complete() {
                "indexing…".to_owned()
            } else if ws.runs.is_empty() {
                "waiting for the first".to_owned()
            } else if ws.selected.is_empty() {
                "none drawn: space on a run".to_owned()
            } else {
                format!("{} drawn", ws.selected.len())
            };
            let s = if ws.runs.len() == 1 { "" } else { "s" };
            parts.push((format!("{} run{s} · {drawn}", ws.runs.len()), theme.label()));
            let reading = ws.runs.iter().filter(|r| r.reading()).count();
            if reading > 0 {
                parts.push((format!("reading {reading} more…"), theme.dim()));
            }
        }
        match typing {
            Some(FilterTarget::Runs) => {
                let f = &ws.filter;
                let mode = if f.glob { "glob" } else { "regex" };
                let draft = draft_tail(&sanitize(&f.draft));
                if f.selected {
                    selected = Some((parts.len(), 2, fit::width(&draft)));
                }
                parts.push((
                    format!("f {draft}▏[{} of {} runs]", ws.shown.len(), ws.runs.len()),
                    theme.input(),
                ));
                if let Some(e) = &f.error {
                    let detail = e
                        .detail
                        .as_deref()
                        .map(|d| format!(": {}", sanitize(d)))
                        .unwrap_or_default();
                    parts.push((
                        format!("✗ {} at column {}{detail}", sanitize(&e.message), e.at + 1),
                        theme.bad(),
                    ));
                } else {
                    let hint = keymap.filter_hint(f.glob, Some(mode));
                    if !hint.is_empty() {
                        parts.push((hint, theme.dim()));
                    }
                }
            }
            Some(FilterTarget::Group | FilterTarget::Column) => {
                selected = ws.prompt_parts((theme, keymap), parts);
            }
            _ => {
                if ws.filter.is_active() {
                    parts.push((
                        format!(
                            "f {} [{} of {} runs]",
                            sanitize(&ws.filter.text),
                            ws.shown.len(),
                            ws.runs.len()
                        ),
                        theme.key(),
                    ));
                }
                if let Some(p) = ws.pinned.as_deref().and_then(|p| ws.run(p)) {
                    parts.push((
                        format!("▲ {}", p.label()),
                        theme.series(runs.key_color(&p.key).unwrap_or(p.color)),
                    ));
                }
            }
        }
        selected
    }

    /// The `G` or `v` prompt being typed, and its hint. Returns its selected
    /// prefill, if any: (its part, from which column, how many columns).
    fn prompt_parts(
        &self,
        (theme, keymap): (Theme, &Keymap),
        parts: &mut Vec<(String, Style)>,
    ) -> Option<(usize, u16, u16)> {
        let ws = self;
        let (kind, text) = ws.prompt.as_ref()?;
        let mut selected = None;
        let label = match kind {
            Prompt::Group => "group by config key",
            Prompt::Column => "summary value",
        };
        let draft = sanitize(&text.text);
        if text.selected {
            let from = fit::width(label) + 2;
            selected = Some((parts.len(), from, fit::width(&draft)));
        }
        parts.push((format!("{label}: {draft}▏"), theme.input()));
        let key = |a: Action| keymap.hint_key(Mode::Filter, &[a]);
        let (keep, esc) = (key(Action::FilterApply), key(Action::FilterCancel));
        let hint = match kind {
            Prompt::Group => {
                let keys = ws.differing_config_keys();
                if keys.is_empty() {
                    hint_line([(keep, "keep (empty: no groups)"), (esc, "")])
                } else {
                    format!("differ: {} · empty: no groups", sanitize(&keys.join(" ")))
                }
            }
            Prompt::Column => hint_line([
                (Some("e.g. val/loss".into()), ""),
                (Some("empty: none".into()), ""),
                (keep, "keep"),
                (esc, ""),
            ]),
        };
        parts.push((hint, theme.dim()));
        selected
    }
}

#[cfg(test)]
mod tests {
    /// A histogram chosen as the summary column reads as the overview lists it.
    #[test]
    fn a_histogram_summary_value_is_one_short_text() {
        let h = serde_json::json!({"_type": "histogram", "values": [1, 2, 3], "bins": [0.0, 1.0, 2.0, 3.0]});
        let t = super::value_text(Some(&h));
        assert!(t.starts_with("histogram · 3 bins"), "{t}");
        assert!(!t.contains('{'), "{t}");
    }
}
