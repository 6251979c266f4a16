//! The one-row status bar: state, run name and id, step, loading progress, filter
//! input or filters in force with match counts, damage, last error; help hint.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::format;
use super::sidebar::state_label;
use super::theme::Theme;
use crate::app::action::Action;
use crate::app::keymap::Mode;
use crate::app::{App, FilterTarget, Pending};
use crate::text::sanitize;

pub(crate) fn render_status(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    buf.set_style(area, theme.status_bar());
    let mut parts: Vec<(String, Style)> = Vec::new();
    let ws_list = app.in_workspace_list();
    if ws_list {
        // The workspace: where, what is drawn, the runs filter or prompt typed.
        super::workspace::status_parts(app, area.width, theme, &mut parts);
    }
    let (state, style) = state_label(app, theme);
    if !ws_list {
        parts.push((format!(" {state} "), style));
    }
    let i = &app.run.info;
    let name = match (i.display_name.is_empty(), i.run_id.is_empty()) {
        (false, false) => format!("{} ({})", sanitize(&i.display_name), sanitize(&i.run_id)),
        (false, true) => sanitize(&i.display_name),
        (true, false) => sanitize(&i.run_id),
        (true, true) => String::new(),
    };
    // While a filter is typed on a narrow screen, its prompt gets the room.
    let squeeze = app.filter_target.is_some() && area.width < 120;
    if !name.is_empty() && !ws_list && !squeeze {
        parts.push((name, theme.text()));
    }
    if app.run.history_rows > 0 && !ws_list && !squeeze {
        parts.push((format!("step {}", app.run.step()), theme.label()));
    }
    if app.is_host() {
        let s = if app.samples == 1 { "" } else { "s" };
        parts.push((format!("{} sample{s}", app.samples), theme.label()));
    }
    if app.is_host() && !app.procs.process_keys_shown() {
        // The process charts are hidden until a process is picked: say how.
        let text = if area.width >= 110 {
            "no process monitored — enter on a process to follow it"
        } else {
            "no process monitored (enter on one)"
        };
        parts.push((text.to_owned(), theme.warn()));
    }
    if let Some(d) = &app.source.waiting {
        parts.push((format!("waiting for a .wandb file in {d}"), theme.warn()));
    }
    if app.source.loading() {
        #[allow(clippy::cast_precision_loss)]
        let pct = app.source.read_to as f64 * 100.0 / app.source.file_len.max(1) as f64;
        #[allow(clippy::cast_precision_loss)]
        parts.push((
            format!(
                "loading {pct:.0}% {}/{}",
                format::bytes(app.source.read_to as f64),
                format::bytes(app.source.file_len as f64)
            ),
            theme.warn(),
        ));
    }
    let mcount = format!("[{}/{}]", app.charts.shown.len(), app.metric_keys.len());
    let scount = format!("[{}/{}]", app.system.shown.len(), app.sys_charts.len());
    let ccount = if app.filter_target == Some(FilterTarget::Console) {
        let v = app.console_view();
        format!("[{}/{} lines]", v.len(), v.total())
    } else {
        String::new()
    };
    // Per section, as `wandb leet` counts them (only while typed or in force).
    // With the raw number of a time that matches (the sidebar shows it as a date).
    let mut ocount = format!("[{}]", app.overview.filter_counts());
    if app.overview.filter.is_active() {
        let times = app.overview.filtered_times();
        if let Some((k, t)) = times.first() {
            ocount.push_str(&format!(" {k} = {}", crate::app::Row::raw_time(*t)));
            if times.len() > 1 {
                ocount.push_str(&format!(" (+{} more)", times.len() - 1));
            }
        }
    }
    let pcount = format!("[{} processes]", app.procs.rows.len());
    let typing = app.filter_target.filter(|t| {
        !matches!(
            t,
            FilterTarget::Runs | FilterTarget::Group | FilterTarget::Column
        )
    });
    match typing {
        Some(t) => {
            let (f, sigil, count) = match t {
                FilterTarget::Metrics => (&app.charts.filter, '/', &mcount),
                FilterTarget::System => (&app.system.filter, '\\', &scount),
                FilterTarget::Overview => (&app.overview.filter, 'o', &ocount),
                FilterTarget::Console => (&app.console.filter, '/', &ccount),
                FilterTarget::Stats => (&app.stats.filter, '/', &app.stats_count()),
                _ => (&app.procs.filter, '/', &pcount),
            };
            let prompt = if t == FilterTarget::Overview {
                format!(
                    "Overview filter ({}): {}▏ {count}",
                    f.mode_name(),
                    sanitize(&f.draft)
                )
            } else {
                format!("{sigil}{}▏{count}", sanitize(&f.draft))
            };
            parts.push((prompt, theme.input()));
            if let Some(e) = &f.error {
                parts.push((format!("✗ {}", sanitize(e)), theme.bad()));
            } else {
                let other = if f.glob { "regex" } else { "glob" };
                parts.push((
                    format!(
                        "tab: {} → {other} · enter keep · esc restore",
                        f.mode_name()
                    ),
                    theme.dim(),
                ));
            }
        }
        None => {
            if app.charts.filter.is_active() {
                parts.push((
                    format!(
                        "/{}{} {mcount}",
                        sanitize(&app.charts.filter.text),
                        glob_mark(&app.charts.filter)
                    ),
                    theme.key(),
                ));
            }
            if app.system.filter.is_active() {
                parts.push((
                    format!(
                        "\\{}{} {scount}",
                        sanitize(&app.system.filter.text),
                        glob_mark(&app.system.filter)
                    ),
                    theme.key(),
                ));
            }
            if app.overview.filter.is_active() {
                parts.push((
                    format!(
                        "overview: {}{} {ocount}",
                        sanitize(&app.overview.filter.text),
                        glob_mark(&app.overview.filter)
                    ),
                    theme.key(),
                ));
            }
            if app.procs.filter.is_active() {
                parts.push((
                    format!(
                        "processes /{}{} {pcount}",
                        sanitize(&app.procs.filter.text),
                        glob_mark(&app.procs.filter)
                    ),
                    theme.key(),
                ));
            }
        }
    }
    match app.pending {
        Some(Pending::Columns) => parts.push(("columns: press 1-9 (0 = auto)".into(), theme.key())),
        Some(Pending::Rows) => parts.push(("rows: press 1-9 (0 = auto)".into(), theme.key())),
        None => {}
    }
    let d = &app.run.damage;
    if !d.is_clean() {
        #[allow(clippy::cast_precision_loss)]
        parts.push((
            format!(
                "⚠ {} corrupt span(s) skipped ({})",
                d.skipped_spans,
                format::bytes(d.skipped_bytes as f64)
            ),
            theme.warn(),
        ));
    }
    if let Some(e) = &app.source.error {
        parts.push((format!("error: {e}"), theme.bad()));
    }
    // Hints name the keys the live key map binds (a remapped key shows as such).
    let key_of = |a: Action| {
        app.keymap
            .keys_for(Mode::Normal, a)
            .next()
            .map(|k| k.to_string())
    };
    let mut hint = String::from(" ");
    if app.workspace.is_some() && !ws_list && app.panels.focus == crate::app::panels::Pane::Grid {
        if let Some(k) = key_of(Action::Back) {
            hint.push_str(&format!("{k}: all runs · "));
        }
    }
    if app.source.runs_here > 1 && !ws_list {
        if let Some(k) = key_of(Action::PickRun) {
            hint.push_str(&format!("{k}: {} runs · ", app.source.runs_here));
        }
    }
    if let Some(k) = key_of(Action::Help) {
        hint.push_str(&format!("{k}: help "));
    }
    draw_parts(buf, area, &parts, &hint, theme);
}

/// ` (glob)` after a filter in force that is a glob (a regex goes unmarked).
fn glob_mark(f: &crate::app::filter::FilterState) -> &'static str {
    if f.glob {
        " (glob)"
    } else {
        ""
    }
}

/// The parts left to right, separated by bars, with the hint at the right end.
fn draw_parts(buf: &mut Buffer, area: Rect, parts: &[(String, Style)], hint: &str, theme: Theme) {
    let hint_w = u16::try_from(hint.chars().count()).unwrap_or(0);
    let limit = if area.width > hint_w + 20 {
        area.right() - hint_w
    } else {
        area.right()
    };
    let mut x = area.x;
    for (n, (text, style)) in parts.iter().enumerate() {
        if x >= limit {
            break;
        }
        if n > 0 {
            let (nx, _) = buf.set_stringn(x, area.y, " │ ", usize::from(limit - x), theme.dim());
            x = nx;
        }
        let (nx, _) = buf.set_stringn(
            x,
            area.y,
            text,
            usize::from(limit.saturating_sub(x)),
            *style,
        );
        x = nx;
    }
    if limit < area.right() {
        buf.set_stringn(limit, area.y, hint, usize::from(hint_w), theme.dim());
    }
}
