//! The live monitor's header: a facts line (host, OS, uptime, load, CPU model and
//! count), meters (CPU, memory, swap, each disk, network, disk I/O) as many to a
//! line as the width holds, then a compact row per accelerator. A missing reading
//! shows `–`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::text::sanitize;
use crate::ui::host::{DeviceRow, Meter};
use crate::ui::layout;
use crate::ui::theme::Theme;
use crate::ui::widget::fit::{fit, put, width};
use crate::ui::widget::format;
use crate::ui::App;

const DASH: &str = "–";
/// Columns of a meter's label and of its value text.
const LABEL_W: usize = 6;
const VALUE_W: usize = 17;

/// One meter: label, fill (0..=1, none when unknown) and value text.
struct Bar {
    label: String,
    fill: Option<f64>,
    value: String,
    /// A rate: no bar (a rate has no natural maximum), the values take the cell.
    rate: bool,
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.to_owned(), |p| format!("{p:.1}%"))
}

fn size(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.to_owned(), format::bytes_short)
}

fn rate(v: Option<f64>) -> String {
    v.map_or_else(
        || DASH.to_owned(),
        |r| format!("{}/s", format::bytes_short(r)),
    )
}

fn meter(label: &str, m: &Meter) -> Bar {
    let value = if m.used.is_some() || m.total.is_some() {
        format!("{} {}/{}", pct(m.percent), size(m.used), size(m.total))
    } else {
        pct(m.percent)
    };
    Bar {
        label: label.to_owned(),
        fill: m.percent.map(|p| p / 100.0),
        value,
        rate: false,
    }
}

fn bars(app: &App) -> Vec<Bar> {
    let h = &app.host.header;
    let mut out = vec![
        Bar {
            label: "CPU".into(),
            fill: h.cpu.map(|c| c / 100.0),
            value: pct(h.cpu),
            rate: false,
        },
        meter("Mem", &h.memory),
        meter("Swap", &h.swap),
    ];
    let paths: Vec<&str> = h.disks.iter().map(|d| d.0.as_str()).collect();
    let tails = crate::ui::system::path_tails(&paths);
    for ((_, p, used), label) in h.disks.iter().zip(tails) {
        out.push(Bar {
            label: sanitize(&label),
            fill: p.map(|p| p / 100.0),
            value: format!("{} {}", pct(*p), size(*used)),
            rate: false,
        });
    }
    out.push(Bar {
        label: "Net".into(),
        fill: None,
        value: format!("↓ {}  ↑ {}", rate(h.net.0), rate(h.net.1)),
        rate: true,
    });
    out.push(Bar {
        label: "I/O".into(),
        fill: None,
        value: format!("read {}  write {}", rate(h.io.0), rate(h.io.1)),
        rate: true,
    });
    out
}

fn facts(app: &App) -> String {
    let h = &app.host.header;
    let mut parts = vec![sanitize(&app.shown.run.info.host)];
    if !h.os.is_empty() {
        parts.push(sanitize(&h.os));
    }
    // A host opened from the cluster screen that is down or stale: its state, not
    // an uptime that reads as "up".
    let opened = (app.host.cluster.as_deref()).and_then(crate::ui::cluster::opened);
    match opened.filter(|o| o.state != crate::store::cluster::HostState::Up) {
        // The meters below hold what was read before it stopped: dimmed, and
        // said so here.
        Some(o) => parts.push(format!("{} · meters last known", o.words())),
        None => parts.push(format!(
            "up {}",
            h.uptime.map_or_else(|| DASH.to_owned(), format::uptime)
        )),
    }
    let load: Vec<String> = h
        .load
        .iter()
        .map(|l| l.map_or_else(|| DASH.to_owned(), |v| format!("{v:.2}")))
        .collect();
    parts.push(format!("load {}", load.join(" ")));
    let model = sanitize(&h.cpu_model);
    match (model.is_empty(), h.cpu_count) {
        (false, Some(n)) => parts.push(format!("{model} ×{n}")),
        (false, None) => parts.push(model),
        (true, Some(n)) => parts.push(format!("{n} CPUs")),
        (true, None) => {}
    }
    parts.retain(|p| !p.is_empty());
    parts.join("  ")
}

/// Draw one meter; `last_known`: the host stopped giving samples (a host of the
/// cluster that is down or stale), so its values are drawn dim, not as current.
fn draw_bar(buf: &mut Buffer, (x, y, w): (u16, u16, u16), b: &Bar, last_known: bool, theme: Theme) {
    let w = usize::from(w);
    if w < LABEL_W + 4 {
        return;
    }
    let label = fit(&b.label, LABEL_W - 1);
    put(buf, x, y, &label, LABEL_W as u16, theme.label());
    let text_style = if last_known {
        theme.dim()
    } else {
        theme.text()
    };
    if b.rate {
        let v = fit(&b.value, w - LABEL_W);
        put(
            buf,
            x + LABEL_W as u16,
            y,
            &v,
            (w - LABEL_W) as u16,
            text_style,
        );
        return;
    }
    let value_w = VALUE_W.min(w - LABEL_W - 3);
    let bar_w = w.saturating_sub(LABEL_W + value_w + 3);
    let mut cx = x + LABEL_W as u16;
    if bar_w >= 3 {
        put(buf, cx, y, "▕", 1, theme.dim());
        let n = b
            .fill
            .map_or(0, |f| (f.clamp(0.0, 1.0) * bar_w as f64).round() as usize);
        let fill: String = "█".repeat(n);
        let rest: String = "·".repeat(bar_w - n);
        {
            // Green, yellow from 70 %, red from 90 % (as htop and btop colour them).
            let style = match b.fill {
                _ if last_known => theme.dim(),
                Some(f) if f >= 0.9 => theme.bad(),
                Some(f) if f >= 0.7 => theme.warn(),
                _ => theme.good(),
            };
            put(buf, cx + 1, y, &fill, bar_w as u16, style);
            put(buf, cx + 1 + n as u16, y, &rest, bar_w as u16, theme.dim());
            put(buf, cx + 1 + bar_w as u16, y, "▏", 1, theme.dim());
            cx += bar_w as u16 + 2;
        }
    }
    let v = fit(&b.value, value_w);
    let vx = cx
        + u16::try_from(value_w)
            .unwrap_or(0)
            .saturating_sub(width(&v));
    put(
        buf,
        vx,
        y,
        &v,
        u16::try_from(value_w).unwrap_or(0),
        text_style,
    );
}

fn device_text(d: &DeviceRow) -> String {
    let util = d
        .util
        .map_or_else(|| DASH.to_owned(), |u| format!("{u:.0}%"));
    let mem = match (d.mem_used, d.mem_total) {
        (None, None) => DASH.to_owned(),
        (u, t) => format!("{}/{}", size(u), size(t)),
    };
    let temp = d
        .temp
        .map_or_else(|| DASH.to_owned(), |t| format!("{t:.0}°C"));
    let power = match (d.power, d.power_limit) {
        (Some(p), Some(l)) => format!("{p:.0}/{l:.0}W"),
        (Some(p), None) => format!("{p:.0}W"),
        (None, _) => DASH.to_owned(),
    };
    format!("{util:>4} {mem:>11} {temp:>5} {power:>9}")
}

/// Draw the header in `area`.
pub(crate) fn render_header(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    put(
        buf,
        area.x + 1,
        area.y,
        &fit(&facts(app), usize::from(area.width.saturating_sub(2))),
        area.width.saturating_sub(1),
        theme.heading(),
    );
    let cols = layout::header_cols(area.width);
    let cell_w = area.width / cols;
    let mut y = area.y + 1;
    let cell = |i: usize| {
        let c = u16::try_from(i % usize::from(cols)).unwrap_or(0);
        area.x + 1 + c * cell_w
    };
    let bars = bars(app);
    let opened = (app.host.cluster.as_deref()).and_then(crate::ui::cluster::opened);
    let last_known = opened
        .as_ref()
        .is_some_and(|o| o.state != crate::store::cluster::HostState::Up);
    // An up host whose CPU or memory family stopped while others go on (`up*`):
    // that meter holds its last value, drawn as such.
    let stopped = |label: &str| {
        opened.as_ref().is_some_and(|o| {
            o.behind.iter().any(|(f, _)| match label {
                "CPU" => f == "cpu",
                "Mem" => f.starts_with("memory"),
                "Swap" => f.starts_with("swap"),
                _ => false,
            })
        })
    };
    for (i, b) in bars.iter().enumerate() {
        if i > 0 && i % usize::from(cols) == 0 {
            y += 1;
        }
        if y >= area.bottom() {
            return;
        }
        draw_bar(
            buf,
            (cell(i), y, cell_w.saturating_sub(2)),
            b,
            last_known || stopped(&b.label),
            theme,
        );
    }
    let devs = &app.host.header.devices;
    // A host of the cluster whose exporter stopped giving a device family: its
    // last values are not now, and are not shown as if they were.
    let behind = opened.map(|o| o.behind).unwrap_or_default();
    for (i, d) in devs.iter().enumerate() {
        if i % usize::from(cols) == 0 {
            y += 1;
        }
        if y >= area.bottom() {
            return;
        }
        let x = cell(i);
        let w = cell_w.saturating_sub(2);
        let label = fit(&sanitize(&d.label), LABEL_W - 1);
        put(buf, x, y, &label, LABEL_W as u16, theme.label());
        let family = d.label.trim_end_matches(|c: char| c.is_ascii_digit());
        let (text, style) = match behind.iter().find(|(f, _)| f == family) {
            Some((_, t)) => (
                format!("no sample since {}", format::time_of_day(t.floor() as i64)),
                theme.warn(),
            ),
            None if last_known => (device_text(d), theme.dim()),
            None => (device_text(d), theme.text()),
        };
        put(
            buf,
            x + LABEL_W as u16,
            y,
            &fit(&text, usize::from(w).saturating_sub(LABEL_W)),
            w.saturating_sub(LABEL_W as u16),
            style,
        );
    }
}
