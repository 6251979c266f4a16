//! The one-row status bar: state, run name and id, step, the focused chart,
//! loading progress, filter input or filters in force with match counts, damage,
//! last error; help hint.
//!
//! Every part has a priority. When the bar is too narrow the lowest-priority part
//! goes first (a long name or error is cut to fit with `…` when that is enough),
//! so state, step and the damage warning stay whole, and a help text (the `h: help`
//! hint, `enter keep · esc restore`) is shown whole or not at all.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::theme::Theme;
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::Mode;
use crate::ui::overview::view::state_label;
use crate::ui::widget::fit::{fit, width};
use crate::ui::widget::format;
use crate::ui::{App, FilterTarget, Pending};

pub(crate) fn render_status(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    buf.set_style(area, theme.status_bar());
    let mut parts: Vec<Part> = Vec::new();
    let ws_list = app.in_workspace_list();
    run_parts(app, ws_list, area.width, theme, &mut parts);
    progress_parts(app, area.width, theme, &mut parts);
    filter_parts(app, area.width, theme, &mut parts);
    notice_parts(app, theme, &mut parts);
    let hint = hint(app, ws_list);
    draw_parts(buf, area, parts, hint, theme);
}

/// The run's parts: the workspace's (in its list), else the state, the run's
/// name and its step.
fn run_parts(app: &App, ws_list: bool, width: u16, theme: Theme, parts: &mut Vec<Part>) {
    if ws_list {
        // The workspace: where, what is drawn, the runs filter or prompt typed.
        let mut ws = Vec::new();
        crate::ui::workspace::view::status_parts(app, width, theme, &mut ws);
        parts.extend(workspace_parts(ws, theme));
    }
    let (state, style) = state_label(app, theme);
    if !ws_list {
        // The state whole; its detail in brackets goes before anything but the name.
        match state.split_once(" (") {
            Some((word, detail)) => {
                parts.push(Part::whole(format!(" {word} "), style, 0));
                parts.push(Part {
                    glue: true,
                    ..Part::whole(format!("({detail} "), style, 7)
                });
            }
            None => parts.push(Part::whole(format!(" {state} "), style, 0)),
        }
    }
    let i = &app.shown.run.info;
    let name = match (i.display_name.is_empty(), i.run_id.is_empty()) {
        (false, false) => format!("{} ({})", sanitize(&i.display_name), sanitize(&i.run_id)),
        (false, true) => sanitize(&i.display_name),
        (true, false) => sanitize(&i.run_id),
        (true, true) => String::new(),
    };
    if !name.is_empty() && !ws_list {
        parts.push(Part::cut(name, theme.text(), 9));
    }
    if app.shown.run.history_rows > 0 && !ws_list {
        parts.push(Part::whole(
            format!("step {}", app.shown.run.step()),
            theme.label(),
            1,
        ));
    }
}

/// What is shown and read: the focused chart, the live monitor's samples and
/// its process, the file awaited, the loading progress.
fn progress_parts(app: &App, width: u16, theme: Theme, parts: &mut Vec<Part>) {
    if let Some(chart) = focused_chart(app) {
        parts.push(Part::cut(format!("▸ {chart}"), theme.key(), 5));
    }
    if app.is_host() {
        let s = if app.host.samples == 1 { "" } else { "s" };
        // The live monitor's step: as whole as the viewer's.
        parts.push(Part::whole(
            format!("{} sample{s}", app.host.samples),
            theme.label(),
            1,
        ));
    }
    if app.is_host() && !app.host.procs.process_keys_shown() {
        // The process charts are hidden until a process is picked: say how.
        let text = if width >= 110 {
            "no process monitored — enter on a process to follow it"
        } else {
            "no process monitored (enter on one)"
        };
        parts.push(Part::whole(text.to_owned(), theme.warn(), 4));
    }
    if let Some(d) = &app.shown.source.waiting {
        parts.push(Part::cut(
            format!("waiting for a .wandb file in {d}"),
            theme.warn(),
            2,
        ));
    }
    if app.shown.source.loading() {
        let pct = app.shown.source.read_to as f64 * 100.0 / app.shown.source.file_len.max(1) as f64;
        parts.push(Part::whole(format!("loading {pct:.0}%"), theme.warn(), 2));
        parts.push(Part {
            glue: true,
            ..Part::whole(
                format!(
                    " {}/{}",
                    format::bytes(app.shown.source.read_to as f64),
                    format::bytes(app.shown.source.file_len as f64)
                ),
                theme.warn(),
                6,
            )
        });
    }
}

/// The match counts of each filter: metrics, system, console, overview, processes.
struct Counts {
    mcount: String,
    scount: String,
    ccount: String,
    ocount: String,
    pcount: String,
}

impl Counts {
    fn of(app: &App) -> Self {
        let mcount = format!(
            "[{}/{}]",
            app.charts.shown.len(),
            app.charts.metric_keys.len()
        );
        let scount = format!(
            "[{}/{}]",
            app.panes.system.shown.len(),
            app.charts.sys.len()
        );
        let ccount = if app.filter_target == Some(FilterTarget::Console) {
            let v = app.console_view();
            format!("[{}/{} lines]", v.len(), v.total())
        } else {
            String::new()
        };
        // Per section, as `wandb leet` counts them (only while typed or in force).
        // With the raw number of a time that matches (the sidebar shows it as a date).
        let mut ocount = format!("[{}]", app.panes.overview.filter_counts());
        if app.panes.overview.filter.is_active() {
            let times = app.panes.overview.filtered_times();
            if let Some((k, t)) = times.first() {
                ocount.push_str(&format!(" {k} = {}", crate::ui::Row::raw_time(*t)));
                if times.len() > 1 {
                    ocount.push_str(&format!(" (+{} more)", times.len() - 1));
                }
            }
        }
        let pcount = format!("[{} processes]", app.host.procs.rows.len());
        Self {
            mcount,
            scount,
            ccount,
            ocount,
            pcount,
        }
    }
}

/// The filter being typed (its prompt, then its error or its keys), or the
/// filters in force with their match counts.
fn filter_parts(app: &App, width: u16, theme: Theme, parts: &mut Vec<Part>) {
    let counts = Counts::of(app);
    let Counts {
        mcount,
        scount,
        ccount,
        ocount,
        pcount,
    } = &counts;
    let typing = app.filter_target.filter(|t| {
        !matches!(
            t,
            FilterTarget::Runs | FilterTarget::Group | FilterTarget::Column
        )
    });
    let Some(t) = typing else {
        filters_in_force(app, &counts, theme, parts);
        return;
    };
    let (f, sigil, count) = match t {
        FilterTarget::Metrics => (&app.charts.filter, '/', mcount),
        FilterTarget::System => (&app.panes.system.filter, '\\', scount),
        FilterTarget::Overview => (&app.panes.overview.filter, 'o', ocount),
        FilterTarget::Console => (&app.panes.console.filter, '/', ccount),
        FilterTarget::Stats => (&app.stats.filter, '/', &app.stats_count()),
        _ => (&app.host.procs.filter, '/', pcount),
    };
    typing_parts((t, f, sigil, count), width, theme, parts);
}

/// The filter being typed: its prompt (`sigil`, the draft, the `count`), then
/// its error or the keys that switch, keep or restore it.
fn typing_parts(
    (t, f, sigil, count): (FilterTarget, &crate::ui::filter::FilterState, char, &str),
    width: u16,
    theme: Theme,
    parts: &mut Vec<Part>,
) {
    let prompt = if t == FilterTarget::Overview {
        format!(
            "Overview filter ({}): {}▏ {count}",
            f.mode_name(),
            sanitize(&f.draft)
        )
    } else {
        format!("{sigil}{}▏{count}", sanitize(&f.draft))
    };
    parts.push(Part::cut(prompt, theme.input(), 1));
    if let Some(e) = &f.error {
        parts.push(Part::cut(format!("✗ {}", sanitize(e)), theme.bad(), 2));
    } else {
        let other = if f.glob { "regex" } else { "glob" };
        // Narrow: the short form, so the hint is shown whole, not dropped.
        let hint = if width < 100 {
            format!("tab: {other} · enter keep · esc restore")
        } else {
            format!(
                "tab: {} → {other} · enter keep · esc restore",
                f.mode_name()
            )
        };
        parts.push(Part::whole(hint, theme.dim(), 3));
    }
}

/// The filters in force, each with its match count.
fn filters_in_force(app: &App, counts: &Counts, theme: Theme, parts: &mut Vec<Part>) {
    let Counts {
        mcount,
        scount,
        ocount,
        pcount,
        ..
    } = counts;
    if app.charts.filter.is_active() {
        parts.push(Part::cut(
            format!(
                "/{}{} {mcount}",
                sanitize(&app.charts.filter.text),
                glob_mark(&app.charts.filter)
            ),
            theme.key(),
            3,
        ));
    }
    if app.panes.system.filter.is_active() {
        parts.push(Part::cut(
            format!(
                "\\{}{} {scount}",
                sanitize(&app.panes.system.filter.text),
                glob_mark(&app.panes.system.filter)
            ),
            theme.key(),
            3,
        ));
    }
    if app.panes.overview.filter.is_active() {
        parts.push(Part::cut(
            format!(
                "overview: {}{} {ocount}",
                sanitize(&app.panes.overview.filter.text),
                glob_mark(&app.panes.overview.filter)
            ),
            theme.key(),
            3,
        ));
    }
    if app.host.procs.filter.is_active() {
        parts.push(Part::cut(
            format!(
                "processes /{}{} {pcount}",
                sanitize(&app.host.procs.filter.text),
                glob_mark(&app.host.procs.filter)
            ),
            theme.key(),
            3,
        ));
    }
}

/// A prefix key waiting for its digit, the damage, the settings' note, the
/// last error.
fn notice_parts(app: &App, theme: Theme, parts: &mut Vec<Part>) {
    match app.charts.pending {
        Some(Pending::Columns) => parts.push(Part::whole(
            "columns: press 1-9 (0 = auto)".into(),
            theme.key(),
            1,
        )),
        Some(Pending::Rows) => parts.push(Part::whole(
            "rows: press 1-9 (0 = auto)".into(),
            theme.key(),
            1,
        )),
        None => {}
    }
    let d = &app.shown.run.damage;
    if !d.is_clean() {
        // Whole: how many spans; then how much, then the steps lost, as room allows.
        parts.push(Part::whole(
            format!("⚠ {} corrupt span(s)", d.skipped_spans),
            theme.warn(),
            1,
        ));
        parts.push(Part {
            glue: true,
            ..Part::whole(
                format!(" skipped ({})", format::bytes(d.skipped_bytes as f64)),
                theme.warn(),
                6,
            )
        });
        if let Some(lost) = steps_lost(app.shown.run.breaks.spans()) {
            parts.push(Part {
                glue: true,
                ..Part::whole(format!(", {lost}"), theme.warn(), 8)
            });
        }
    }
    if let Some(note) = app.settings_note() {
        parts.push(Part::cut(note.to_owned(), theme.key(), 2));
    }
    if let Some(e) = &app.shown.source.error {
        parts.push(Part::cut(format!("error: {e}"), theme.bad(), 2));
    }
}

/// The help hint: the keys to all runs, to the other runs here, to help.
fn hint(app: &App, ws_list: bool) -> Option<String> {
    // Hints name the keys the live key map binds (a remapped key shows as such).
    let key_of = |a: Action| {
        app.screen
            .keymap
            .keys_for(Mode::Normal, a)
            .next()
            .map(|k| k.to_string())
    };
    let mut hint = String::from(" ");
    if app.runs.workspace.is_some() && !ws_list && app.panels.focus == crate::ui::panels::Pane::Grid
    {
        if let Some(k) = key_of(Action::Back) {
            hint.push_str(&format!("{k}: all runs · "));
        }
    }
    if app.shown.source.runs_here > 1 && !ws_list {
        if let Some(k) = key_of(Action::PickRun) {
            hint.push_str(&format!("{k}: {} runs · ", app.shown.source.runs_here));
        }
    }
    if let Some(k) = key_of(Action::Help) {
        hint.push_str(&format!("{k}: help "));
    }
    (hint.len() > 1).then_some(hint)
}

/// ` (glob)` after a filter in force that is a glob (a regex goes unmarked).
fn glob_mark(f: &crate::ui::filter::FilterState) -> &'static str {
    if f.glob {
        " (glob)"
    } else {
        ""
    }
}

/// Priority of the help hint: after state, step, damage and errors, before the
/// rest.
const HINT_PRIO: u8 = 3;

/// The narrowest a part is cut to (`…` included); narrower, it goes.
const MIN_CUT: usize = 10;

/// One part of the bar.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    text: String,
    style: Style,
    /// 0 stays whatever the width; higher goes first.
    prio: u8,
    /// May be cut to fit (a name, an error); else shown whole or not at all.
    cut: bool,
    /// Continues the part before it, with no bar between (its detail): goes with
    /// it, and before it (a higher `prio`).
    glue: bool,
}

impl Part {
    fn whole(text: String, style: Style, prio: u8) -> Self {
        Self {
            text,
            style,
            prio,
            cut: false,
            glue: false,
        }
    }

    fn cut(text: String, style: Style, prio: u8) -> Self {
        Self {
            cut: true,
            ..Self::whole(text, style, prio)
        }
    }
}

/// The workspace's parts: where (whole), its help text (dim: whole or gone),
/// the rest cut to fit.
fn workspace_parts(ws: Vec<(String, Style)>, theme: Theme) -> Vec<Part> {
    ws.into_iter()
        .enumerate()
        .map(|(i, (text, style))| match i {
            0 => Part::whole(text, style, 0),
            _ if style == theme.dim() => Part::whole(text, style, HINT_PRIO + 2),
            _ => Part::cut(text, style, 6),
        })
        .collect()
}

/// The name of the focused chart, when the grid has the focus.
fn focused_chart(app: &App) -> Option<String> {
    // A table or browser in front hides the grid: no chart is in view to name.
    if app.panels.focus != crate::ui::panels::Pane::Grid || app.overlay.covers() {
        return None;
    }
    // A focused section header names its section.
    if let Some(name) = app.charts.grid.focused_header_name() {
        return Some(format!("section {}", sanitize(name)));
    }
    let &i = app.charts.shown.get(app.charts.grid.focus)?;
    if app.is_host() {
        app.charts.sys.get(i).map(|c| sanitize(&c.display_title()))
    } else {
        app.charts.metric_keys.get(i).map(|k| sanitize(k))
    }
}

/// `steps 126–167 lost` for the first break (and how many more).
fn steps_lost(breaks: &[(f64, f64)]) -> Option<String> {
    let &(a, b) = breaks.first()?;
    let (first, last) = (a + 1.0, b - 1.0);
    let mut s = if last > first {
        format!("steps {first:.0}–{last:.0} lost")
    } else {
        format!("step {first:.0} lost")
    };
    if breaks.len() > 1 {
        s.push_str(&format!(" (+{} more)", breaks.len() - 1));
    }
    Some(s)
}

/// Width of the parts drawn in a row, bars included.
fn parts_width(parts: &[Part]) -> usize {
    parts
        .iter()
        .enumerate()
        .map(|(n, p)| usize::from(width(&p.text)) + if n > 0 && !p.glue { 3 } else { 0 })
        .sum()
}

/// Drop the lowest-priority parts (and the hint) until the rest fit in `w`: a
/// part that may be cut is cut instead when that leaves it [`MIN_CUT`] wide.
fn fit_parts(parts: &mut Vec<Part>, hint: &mut Option<String>, w: usize) {
    loop {
        let hint_w = hint.as_deref().map_or(0, |h| usize::from(width(h)));
        let total = parts_width(parts) + hint_w;
        if total <= w {
            return;
        }
        // The lowest priority, the later of equals.
        let worst = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.prio > 0)
            .max_by_key(|&(i, p)| (p.prio, i))
            .map(|(i, p)| (i, p.prio));
        match (worst, hint.is_some()) {
            (Some((_, prio)), true) if prio <= HINT_PRIO => *hint = None,
            (None, true) => *hint = None,
            (None, false) => return,
            (Some((i, _)), _) => {
                let over = total - w;
                let pw = usize::from(width(&parts[i].text));
                if parts[i].cut && pw >= over + MIN_CUT {
                    parts[i].text = fit(&parts[i].text, pw - over);
                    return;
                }
                parts.remove(i);
                while parts.get(i).is_some_and(|p| p.glue) {
                    parts.remove(i);
                }
            }
        }
    }
}

/// The parts left to right, separated by bars, with the hint at the right end:
/// what does not fit dropped first (see [`fit_parts`]).
fn draw_parts(
    buf: &mut Buffer,
    area: Rect,
    mut parts: Vec<Part>,
    mut hint: Option<String>,
    theme: Theme,
) {
    fit_parts(&mut parts, &mut hint, usize::from(area.width));
    let hint_w = hint.as_deref().map_or(0, width);
    let limit = area.right() - hint_w.min(area.width);
    let mut x = area.x;
    let mut first = true;
    for p in &parts {
        if x >= limit {
            break;
        }
        if !first && !p.glue {
            let (nx, _) = buf.set_stringn(x, area.y, " │ ", usize::from(limit - x), theme.dim());
            x = nx;
        }
        first = false;
        let (nx, _) = buf.set_stringn(
            x,
            area.y,
            &p.text,
            usize::from(limit.saturating_sub(x)),
            p.style,
        );
        x = nx;
    }
    if let Some(h) = hint {
        buf.set_stringn(limit, area.y, &h, usize::from(hint_w), theme.dim());
    }
}

#[cfg(test)]
mod tests;
