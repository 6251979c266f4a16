//! The run picker overlay (`R`): the runs of the wandb directory, newest first.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::{hint_line, Mode};
use crate::ui::overlay::{self, Kind};
use crate::ui::theme::Theme;
use crate::ui::widget::fit::fit_pad;
use crate::ui::widget::format;
use crate::ui::App;

/// One picker row: marker, run directory, name, size, age.
fn row(app: &App, i: usize, w: usize) -> String {
    let r = &app.runs.list[i];
    let current = app
        .shown
        .source
        .file
        .as_deref()
        .and_then(std::path::Path::parent)
        == Some(r.dir.as_path());
    // The directory name without its constant prefix: start time and run id.
    let dir = r
        .dir
        .file_name()
        .map(|n| {
            let n = n.to_string_lossy();
            let short = n.trim_start_matches("offline-").trim_start_matches("run-");
            sanitize(short)
        })
        .unwrap_or_default();
    let mut name = sanitize(&r.name);
    if r.segments > 1 && r.nodes {
        // As the workspace's list names a distributed run.
        name.push_str(&format!(" ({} nodes)", r.segments));
    } else if r.segments > 1 {
        name.push_str(&format!(" ↻{}", r.segments));
    }
    let size = if r.file.is_some() {
        format::bytes(r.size as f64)
    } else {
        "no file yet".to_owned()
    };
    let age = r
        .modified
        .filter(|_| app.shown.now > 0.0)
        .map(|m| format!("{} ago", format::duration((app.shown.now - m).max(0.0))))
        .unwrap_or_default();
    let tail = format!("{size:>10}  {age:>10}");
    let marker = if current {
        "● "
    } else if app.runs.is_compared(&r.dir).is_some() {
        "■ "
    } else {
        "  "
    };
    // The directory (start time and run id) tells runs apart; it gets room first.
    let avail = w.saturating_sub(2 + 2 + tail.chars().count() + 2);
    let dir_w = dir.chars().count().max(8).min(avail * 2 / 3).max(1);
    let name_w = avail.saturating_sub(dir_w);
    format!(
        "{marker}{}  {}  {tail}",
        fit_pad(&dir, dir_w, false),
        fit_pad(&name, name_w, false),
    )
}

pub(crate) fn render_runs(buf: &mut Buffer, size: Rect, app: &App, theme: Theme) {
    let Some(area) = overlay::place(size, 100, app.runs.list.len().max(1), 20) else {
        return;
    };
    let dir = app
        .runs
        .list
        .first()
        .and_then(|r| r.dir.parent())
        .map(|d| sanitize(&d.display().to_string()))
        .unwrap_or_default();
    let title = format!(" runs in {dir} [{}] ", app.runs.list.len());
    let inner = overlay::open(buf, area, &title, theme);
    let w = usize::from(inner.width.saturating_sub(2));
    if app.runs.list.is_empty() {
        buf.set_stringn(
            inner.x + 1,
            inner.y,
            "this run is not in a wandb directory with other runs",
            w,
            theme.dim(),
        );
        return;
    }
    let rows = usize::from(inner.height);
    // Keep the selection on screen, a few rows from the edge when it can be.
    let start = app
        .runs
        .sel
        .saturating_sub(rows.saturating_sub(1))
        .min(app.runs.list.len().saturating_sub(rows));
    for (slot, i) in (start..app.runs.list.len()).take(rows).enumerate() {
        let y = inner.y + slot as u16;
        let style = if i == app.runs.sel {
            theme.text().add_modifier(Modifier::REVERSED)
        } else {
            theme.text()
        };
        buf.set_stringn(inner.x + 1, y, row(app, i, w), w, style);
        // A compared run's marker in the colour of its lines.
        if let Some(c) = app.runs.is_compared(&app.runs.list[i].dir) {
            let color = app.runs.compared_color(&app.runs.compare[c]);
            buf.set_stringn(inner.x + 1, y, "■", 1, theme.series(color));
        }
    }
    let (km, m) = (&app.screen.keymap, Mode::Overlay(Kind::Runs));
    let keys = hint_line([
        (km.hint_key(m, &[Action::OpenRun]), "open"),
        (km.hint_key(m, &[Action::ToggleCompare]), "compare"),
        (km.hint_key(m, &[Action::Back]), "close"),
    ]);
    if !keys.is_empty() {
        overlay::hint(buf, area, &format!(" {keys} "), theme);
    }
}
