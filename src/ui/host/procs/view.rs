//! The live monitor's process table: a title line (count, sort, filter, the
//! monitored process), the column names with the sort column marked `▼`, and the
//! rows from the table's scroll offset; the selected row reversed, the monitored
//! process marked `▶`. Text was sanitized when the scan was taken.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use crate::text::sanitize;
use crate::ui::host::procs::{ProcSort, ShownRow};
use crate::ui::layout;
use crate::ui::panels::Pane;
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{fit, put, width};
use crate::ui::widget::format;
use crate::ui::App;

/// A column: name, width, right-aligned, the sort it marks.
struct Col {
    name: &'static str,
    w: usize,
    right: bool,
    sort: Option<ProcSort>,
}

/// The columns at a width: under 72 columns USER narrows and THR goes.
fn columns(w: u16) -> Vec<Col> {
    let c = |name, w, right, sort| Col {
        name,
        w,
        right,
        sort,
    };
    let narrow = w < 72;
    let mut v = vec![
        c("PID", 7, true, None),
        c("USER", if narrow { 7 } else { 9 }, false, None),
        c("CPU%", 6, true, Some(ProcSort::Cpu)),
        c("RSS", 7, true, Some(ProcSort::Memory)),
        c("GPU MEM", 8, true, Some(ProcSort::GpuMemory)),
    ];
    if !narrow {
        v.push(c("THR", 4, true, None));
    }
    v
}

fn cells(r: &ShownRow, narrow: bool) -> Vec<String> {
    let mut v = vec![
        r.pid.to_string(),
        r.user.clone(),
        format!("{:.1}", r.cpu),
        format::bytes_short(r.rss as f64),
        r.gpu_memory
            .map_or_else(String::new, |g| format::bytes_short(g as f64)),
    ];
    if !narrow {
        v.push(r.threads.to_string());
    }
    v
}

/// Write `cols` cells from `x` (one space between), then the command in the rest.
fn line(
    buf: &mut Buffer,
    area: Rect,
    y: u16,
    cols: &[Col],
    texts: &[String],
    command: &str,
    style: ratatui::style::Style,
) {
    let mut x = area.x + 2;
    for (c, t) in cols.iter().zip(texts) {
        let t = fit(t, c.w);
        let pad = u16::try_from(c.w).unwrap_or(0).saturating_sub(width(&t));
        let tx = if c.right { x + pad } else { x };
        put(buf, tx, y, &t, area.right().saturating_sub(tx), style);
        x += u16::try_from(c.w + 1).unwrap_or(u16::MAX);
        if x >= area.right() {
            return;
        }
    }
    let rest = area.right().saturating_sub(x);
    put(buf, x, y, &fit(command, usize::from(rest)), rest, style);
}

pub(crate) fn render_procs(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width < 20 || area.height < layout::PROCS_HEAD {
        return;
    }
    let p = &app.host.procs;
    let focused = app.panels.focus == Pane::Procs;
    let sort = match p.sort {
        ProcSort::Cpu => "CPU",
        ProcSort::Memory => "memory",
        ProcSort::GpuMemory => "GPU memory",
    };
    let mut title = format!("Processes [{}] by {sort}", p.rows.len());
    if p.filter.is_active() {
        title.push_str(&format!(" /{}", sanitize(&p.filter.text)));
    }
    if let Some((pid, cmd)) = &p.monitored {
        title.push_str(&format!(" · ▶ {pid} {cmd}"));
    }
    // CPU% here is top's (100 = one core, summed over threads); the monitored
    // process's chart is W&B's `cpu`, a share of all cores: said, as they differ
    // (last, as the least needed part where the title is cut).
    title.push_str(" · CPU% of one core");
    let tw = area.width.saturating_sub(1);
    put(
        buf,
        area.x + 1,
        area.y,
        &fit(&title, usize::from(tw)),
        tw,
        theme.title(focused).patch(theme.heading()),
    );
    let cols = columns(area.width);
    let narrow = cols.len() < 6;
    let names: Vec<String> = cols
        .iter()
        .map(|c| {
            if c.sort == Some(p.sort) {
                format!("{}▼", c.name)
            } else {
                c.name.to_owned()
            }
        })
        .collect();
    line(
        buf,
        area,
        area.y + 1,
        &cols,
        &names,
        "COMMAND",
        theme.label(),
    );
    let top = area.y + layout::PROCS_HEAD;
    if p.rows.is_empty() {
        let msg = if !p.scanned {
            "waiting for the first process scan…"
        } else if p.filter.is_active() {
            "no process matches the filter"
        } else {
            "no processes"
        };
        if top < area.bottom() {
            put(
                buf,
                area.x + 2,
                top,
                msg,
                area.width.saturating_sub(2),
                theme.dim(),
            );
        }
        return;
    }
    let room = layout::procs_rows(area);
    let monitored = p.monitored.as_ref().map(|m| m.0);
    for (i, r) in p.rows.iter().enumerate().skip(p.scroll).take(room) {
        let y = top + u16::try_from(i - p.scroll).unwrap_or(u16::MAX);
        if y >= area.bottom() {
            break;
        }
        let mut style = theme.text();
        if i == p.sel {
            // Reversed while the table has focus, bold otherwise (still findable).
            style = if focused {
                style.add_modifier(Modifier::REVERSED)
            } else {
                style.add_modifier(Modifier::BOLD)
            };
            buf.set_style(Rect::new(area.x + 1, y, area.width - 1, 1), style);
        }
        if monitored == Some(r.pid) {
            put(buf, area.x + 1, y, "▶", 1, style.patch(theme.good()));
        }
        line(buf, area, y, &cols, &cells(r, narrow), &r.command, style);
    }
}
