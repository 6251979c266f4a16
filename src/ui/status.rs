//! The one-row status bar: state, run name and id, step, the focused chart,
//! loading progress, filter input or filters in force with match counts, damage,
//! last error; help hint.
//!
//! Each feature contributes its own parts (the workspace's in `workspace/view.rs`,
//! the charts' in `charts/status.rs`, the live monitor's in `host/status.rs`, each
//! pane's filter with its match count as a [`FilterStatus`]); the run's are here.
//! This gathers them in their order and lays them out.
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
use crate::ui::filter::FilterState;
use crate::ui::keymap::{Keymap, Mode};
use crate::ui::overview::view::state_label;
use crate::ui::panels::Pane;
use crate::ui::source::{Shown, SourceState};
use crate::ui::widget::fit::{fit, reverse, width};
use crate::ui::widget::format;
use crate::ui::{App, FilterTarget};
use part::{FilterStatus, Part};

pub(crate) mod part;

pub(crate) fn render_status(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    buf.set_style(area, theme.status_bar());
    let mut parts: Vec<Part> = Vec::new();
    let ws_list = app.runs.in_workspace_list();
    if ws_list {
        // The workspace: where, what is drawn, the runs filter or prompt typed.
        let mut ws = Vec::new();
        let selected = (app.runs.workspace.as_deref()).and_then(|w| {
            w.status_parts(
                app.filter_target,
                area.width,
                (theme, &app.runs, &app.screen.keymap),
                &mut ws,
            )
        });
        let mut ws = workspace_parts(ws, theme);
        if let Some((i, from, n)) = selected {
            if let Some(p) = ws.get_mut(i) {
                p.mark = Some((from, n)).filter(|_| n > 0);
            }
        }
        parts.extend(ws);
    } else {
        run_parts(app, theme, &mut parts);
    }
    // A table or browser in front hides the grid: no chart is in view to name.
    if app.panels.focus == Pane::Grid && !app.overlay.covers() {
        parts.extend(app.charts.focus_part(app.is_host(), theme));
    }
    if app.is_host() {
        parts.extend(app.host.status_parts(area.width, theme));
    }
    source_parts(&app.shown.source, theme, &mut parts);
    filter_parts(app, area.width, theme, &mut parts);
    parts.extend(app.charts.pending_part(theme));
    damage_parts(&app.shown, theme, &mut parts);
    if let Some(note) = app.settings_note() {
        parts.push(Part::cut(note.to_owned(), theme.key(), 2));
    }
    if let Some(note) = &app.screen.note {
        parts.push(Part::cut(note.clone(), theme.warn(), 2));
    }
    if let Some(e) = &app.shown.source.error {
        parts.push(Part::cut(format!("error: {e}"), theme.bad(), 2));
    }
    let hint = hint(app, ws_list);
    draw_parts(buf, area, parts, hint, theme);
}

/// The run's parts: the state, the run's name and its step.
fn run_parts(app: &App, theme: Theme, parts: &mut Vec<Part>) {
    let (state, style) = state_label(app, theme);
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
    let i = &app.shown.run.info;
    let name = match (
        crate::text::visible_name(&i.display_name),
        i.run_id.is_empty(),
    ) {
        (Some(n), false) => format!("{n} ({})", sanitize(&i.run_id)),
        (Some(n), true) => n,
        (None, false) => sanitize(&i.run_id),
        (None, true) => String::new(),
    };
    if !name.is_empty() {
        parts.push(Part::cut(name, theme.text(), 9));
    }
    if app.shown.run.history_rows > 0 {
        parts.push(Part::whole(
            format!("step {}", app.shown.run.step()),
            theme.label(),
            1,
        ));
    }
}

/// What is read: the file awaited, the loading progress.
fn source_parts(source: &SourceState, theme: Theme, parts: &mut Vec<Part>) {
    if let Some(d) = &source.waiting {
        parts.push(Part::cut(
            format!("waiting for a .wandb file in {d}"),
            theme.warn(),
            2,
        ));
    }
    if source.loading() {
        let pct = source.read_to as f64 * 100.0 / source.file_len.max(1) as f64;
        parts.push(Part::whole(format!("loading {pct:.0}%"), theme.warn(), 2));
        parts.push(Part {
            glue: true,
            ..Part::whole(
                format!(
                    " {}/{}",
                    format::bytes(source.read_to as f64),
                    format::bytes(source.file_len as f64)
                ),
                theme.warn(),
                6,
            )
        });
    }
}

/// The filter being typed (its prompt, then its error or its keys), or the
/// filters in force with their match counts.
fn filter_parts(app: &App, width: u16, theme: Theme, parts: &mut Vec<Part>) {
    let typing = app.filter_target.filter(|t| {
        !matches!(
            t,
            FilterTarget::Runs | FilterTarget::Group | FilterTarget::Column
        )
    });
    let Some(t) = typing else {
        // The filters in force, each with its match count.
        let in_force = [
            app.charts.filter_status(),
            app.panes.system.filter_status(app.charts.sys.len()),
            app.panes.overview.filter_status(),
            app.host.procs.filter_status(),
        ];
        for f in in_force.iter().filter(|f| f.filter.is_active()) {
            let text = format!(
                "{}{}{} {}",
                f.label,
                sanitize(&f.filter.text),
                glob_mark(f.filter),
                f.count
            );
            parts.push(Part::cut(text, theme.key(), 3));
        }
        return;
    };
    let f = match t {
        FilterTarget::Metrics => app.charts.filter_status(),
        FilterTarget::System => app.panes.system.filter_status(app.charts.sys.len()),
        FilterTarget::Overview => app.panes.overview.filter_status(),
        FilterTarget::Console => app.panes.console.filter_status(&app.console_view()),
        FilterTarget::Stats => FilterStatus {
            filter: &app.stats.filter,
            sigil: '/',
            label: "/",
            count: app.stats_count(),
        },
        _ => app.host.procs.filter_status(),
    };
    typing_parts(t, &f, width, (theme, &app.screen.keymap), parts);
}

/// The filter `f` being typed (into `t`): its prompt (the sigil, the draft, the
/// count), then its error or the keys that switch, keep or restore it.
fn typing_parts(
    t: FilterTarget,
    f: &FilterStatus,
    width: u16,
    (theme, keymap): (Theme, &Keymap),
    parts: &mut Vec<Part>,
) {
    let FilterStatus {
        filter: f,
        sigil,
        count,
        ..
    } = f;
    let head = if t == FilterTarget::Overview {
        format!("Overview filter ({}): ", f.mode_name())
    } else {
        sigil.to_string()
    };
    let draft = sanitize(&f.draft);
    let gap = if t == FilterTarget::Overview { " " } else { "" };
    let prompt = format!("{head}{draft}▏{gap}{count}");
    let cols = crate::ui::widget::fit::width;
    let sel = if f.selected { cols(&draft) } else { 0 };
    parts.push(Part::cut(prompt, theme.input(), 1).marked(cols(&head), sel));
    if let Some(e) = &f.error {
        parts.push(Part::cut(format!("✗ {}", sanitize(e)), theme.bad(), 2));
    } else {
        // Narrow: the short form, so the hint is shown whole, not dropped.
        let from = (width >= 100).then(|| f.mode_name());
        let hint = keymap.filter_hint(f.glob, from);
        if !hint.is_empty() {
            parts.push(Part::whole(hint, theme.dim(), 3));
        }
    }
}

/// The damage: how many spans, how much was skipped, the steps lost.
fn damage_parts(shown: &Shown, theme: Theme, parts: &mut Vec<Part>) {
    let d = &shown.run.damage;
    let tail = shown.run.unfinished_tail();
    if tail > 0 {
        parts.push(Part::whole(
            format!("⚠ {} unreadable at the end", format::bytes(tail as f64)),
            theme.warn(),
            1,
        ));
    }
    if d.is_clean() {
        return;
    }
    if let Some(a) = d.appended {
        parts.push(Part::whole(
            format!(
                "⚠ another run file joined on at {}: not read",
                format::bytes(a.offset as f64)
            ),
            theme.warn(),
            1,
        ));
    }
    let (spans, bytes) = d.corrupt();
    if spans == 0 {
        return;
    }
    // Whole: how many spans; then how much, then the steps lost, as room allows.
    parts.push(Part::whole(
        format!("⚠ {spans} corrupt span(s)"),
        theme.warn(),
        1,
    ));
    parts.push(Part {
        glue: true,
        ..Part::whole(
            format!(" skipped ({})", format::bytes(bytes as f64)),
            theme.warn(),
            6,
        )
    });
    if let Some(lost) = steps_lost(shown.run.breaks.spans()) {
        parts.push(Part {
            glue: true,
            ..Part::whole(format!(", {lost}"), theme.warn(), 8)
        });
    }
}

/// The help hint: the keys to all runs (out of a full-screen chart), to the other
/// runs here, to help.
fn hint(app: &App, ws_list: bool) -> Option<String> {
    // Hints name the keys the live key map binds in the mode in force (a remapped
    // key shows as such; one unbound there is not named).
    let full = app.panels.fullscreen;
    let mode = if full { Mode::Fullscreen } else { Mode::Normal };
    let key_of = |a: Action| app.screen.keymap.hint_key(mode, &[a]);
    let mut hint = String::from(" ");
    if full {
        if let Some(k) = key_of(Action::Back) {
            hint.push_str(&format!("{k}: grid · "));
        }
    } else if app.runs.workspace.is_some() && !ws_list && app.panels.focus == Pane::Grid {
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
fn glob_mark(f: &FilterState) -> &'static str {
    if f.text_glob {
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

/// The workspace's parts: where (whole), what is being typed (cut last, as the
/// run view's prompt), its help text (dim: whole or gone), the rest cut to fit.
fn workspace_parts(ws: Vec<(String, Style)>, theme: Theme) -> Vec<Part> {
    ws.into_iter()
        .enumerate()
        .map(|(i, (text, style))| match i {
            0 => Part::whole(text, style, 0),
            _ if style == theme.input() => Part::cut(text, style, 1),
            _ if style == theme.dim() => Part::whole(text, style, HINT_PRIO + 2),
            _ => Part::cut(text, style, 6),
        })
        .collect()
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
        if let Some((from, n)) = p.mark {
            reverse(buf, (x.saturating_add(from), area.y), n, nx);
        }
        x = nx;
    }
    if let Some(h) = hint {
        buf.set_stringn(limit, area.y, &h, usize::from(hint_w), theme.dim());
    }
}

#[cfg(test)]
mod tests;
