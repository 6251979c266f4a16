//! The cluster screen drawn: a title line, the header table (one row per host),
//! the heatmap of every GPU's utilisation (one row per host:GPU, in the table's
//! order), charts per metric (one line per host, or the hosts' mean with their
//! min–max band when they outnumber the palette's colours) and the status line
//! (the last refresh, or why the server gave nothing and since when).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::{ClusterScreen, SortBy};
use crate::store::cluster::{gpu_key, is_core, ClusterModel, HeaderRow, HostState};
use crate::store::series::Point;
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::{hint_line, Mode};
use crate::ui::overlay::Kind;
use crate::ui::theme::Theme;
use crate::ui::widget::chart::{mark_of, render_chart, Band, ChartSpec, Line, XTicks};
use crate::ui::widget::fit::{self, fit, put};
use crate::ui::widget::format;
use crate::ui::widget::guides::Guides;
use crate::ui::widget::heatmap::{band_rows, render_heatmap, HeatSpec};
use crate::ui::widget::unit::Unit;
use crate::ui::App;

/// What one chart of the cluster draws per host.
#[derive(Debug, Clone, Copy)]
enum Metric {
    /// A host-wide key.
    Key(&'static str),
    /// The host's CPU: the mean of its cores' busy shares.
    Cores,
    /// The mean over the host's GPUs of `gpu.N.<field>`.
    GpuMean(&'static str),
    /// The sum over the host's GPUs of `gpu.N.<field>`.
    GpuSum(&'static str),
}

/// The charts, in order: title, what each host contributes, unit.
const CHARTS: [(&str, Metric, Unit); 4] = [
    ("Host CPU (mean of cores)", Metric::Cores, Unit::Percent),
    ("Memory", Metric::Key("memory_percent"), Unit::Percent),
    (
        "GPU utilisation (mean)",
        Metric::GpuMean("gpu"),
        Unit::Percent,
    ),
    ("GPU power", Metric::GpuSum("powerWatts"), Unit::Watts),
];

/// The cluster screen's parts: the title line, the header table, the heatmap, the
/// charts and the status line.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parts {
    pub title: Rect,
    pub table: Rect,
    pub heat: Rect,
    pub charts: Rect,
    pub status: Rect,
}

/// The parts of `area` for `hosts` rows in the table and `gpus` in the heatmap
/// (the keys that scroll the heatmap see it as it is drawn).
pub(super) fn parts(area: Rect, hosts: usize, gpus: usize) -> Parts {
    let title = Rect::new(area.x, area.y, area.width, 1);
    let status = Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1);
    let body_h = area.height.saturating_sub(2);
    let table_h = u16::try_from(hosts + 1)
        .unwrap_or(u16::MAX)
        .min((body_h * 2 / 5).max(3))
        .min(body_h);
    let table = Rect::new(area.x, area.y + 1, area.width, table_h);
    let rest = Rect::new(
        area.x,
        table.bottom(),
        area.width,
        body_h.saturating_sub(table_h),
    );
    let heat_h = u16::try_from(gpus + 4)
        .unwrap_or(u16::MAX)
        .min(rest.height / 2);
    let heat = Rect::new(rest.x, rest.y, rest.width, heat_h);
    let charts = Rect::new(
        rest.x,
        heat.bottom(),
        rest.width,
        rest.height.saturating_sub(heat_h),
    );
    Parts {
        title,
        table,
        heat,
        charts,
        status,
    }
}

/// The first heatmap row shown, of `n`, `seen` at once: the selected host's first
/// GPU (`base`) moved by the rows scrolled past it, within the rows there are.
pub(super) fn heat_top(base: usize, scroll: isize, n: usize, seen: usize) -> usize {
    if n <= seen {
        return 0;
    }
    base.saturating_add_signed(scroll).min(n - seen)
}

/// Draw the cluster screen into `area`.
pub(crate) fn render_cluster(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    let Some(c) = app.host.cluster.as_deref() else {
        return;
    };
    if area.width < 10 || area.height < 4 {
        return;
    }
    let rows = c.rows();
    let gpus = rows.iter().map(|r| r.gpus).sum();
    let p = parts(area, rows.len(), gpus);
    render_title(buf, p.title, c, &rows, theme);
    render_status(buf, p.status, app, c, theme);
    render_table(buf, p.table, c, &rows, theme);
    let seen = band_rows(p.heat);
    let top = heat_top(super::heat_base(c, &rows), c.heat_scroll, gpus, seen);
    let heat_rows = heat_rows(c, &rows, usize::from(area.width), top..top + seen);
    render_heat(buf, p.heat, c, (&heat_rows, top), theme);
    render_charts(buf, p.charts, c, &rows, theme);
}

fn render_title(buf: &mut Buffer, area: Rect, c: &ClusterScreen, rows: &[HeaderRow], theme: Theme) {
    let count = |s: HostState| rows.iter().filter(|r| r.state == s).count();
    let all = c.model.hosts().count();
    let hosts = if c.filter.is_active() {
        format!("{} of {}", rows.len(), counted(all, "host"))
    } else {
        counted(rows.len(), "host")
    };
    let text = format!(
        " leet cluster · {} · {hosts}: {} up, {} down, {} stale · sort {} {} · window {}",
        sanitize(c.model.server()),
        count(HostState::Up),
        count(HostState::Down),
        count(HostState::Stale),
        c.sort.name(),
        arrow(c, c.sort),
        leet_text::duration::format(c.model.window()),
    );
    put(
        buf,
        area.x,
        area.y,
        &fit(&text, usize::from(area.width)),
        area.width,
        theme.heading(),
    );
}

/// The sort's direction: `▼` highest (or last) first, `▲` lowest (or first) first,
/// whichever the column's own order is.
fn arrow(c: &ClusterScreen, s: SortBy) -> &'static str {
    if s.descending() == c.reverse {
        "▲"
    } else {
        "▼"
    }
}

/// `n hosts`, or `1 host`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A percentage, a number of watts, or `–`.
fn cell(v: Option<f64>, unit: &str) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| "–".to_owned(), |v| format!("{v:.0}{unit}"))
}

/// The table's columns after the host: heading, width, the sort it stands for.
const COLUMNS: [(&str, u16, SortBy); 7] = [
    ("STATE", 7, SortBy::State),
    ("CPU", 6, SortBy::Cpu),
    ("MEM", 6, SortBy::Memory),
    ("GPU MEAN", 10, SortBy::GpuMean),
    ("GPU MIN", 9, SortBy::GpuMin),
    ("GPU MEM", 9, SortBy::GpuMemory),
    ("POWER", 8, SortBy::Power),
];

/// The GPUs' mean and how many there are; GPUs whose values are not current
/// (their exporter stopped giving them) are left out and said: `40%×1/2` (one of
/// two current), `stale×2` (none).
fn gpu_mean_cell(r: &HeaderRow) -> String {
    let current = r.gpus.saturating_sub(r.gpus_stale);
    match (r.gpus, current) {
        (0, _) => "–".to_owned(),
        (n, 0) => format!("stale×{n}"),
        (n, c) if c == n => format!("{}×{n}", cell(r.gpu_mean, "%")),
        (n, c) => format!("{}×{c}/{n}", cell(r.gpu_mean, "%")),
    }
}

/// A host-wide value, or `stale` where its family is behind (left out, not
/// missing).
fn host_cell(v: Option<f64>, family: &str, r: &HeaderRow) -> String {
    match v {
        None if r.behind.iter().any(|f| f == family) => "stale".to_owned(),
        v => cell(v, "%"),
    }
}

fn row_cells(r: &HeaderRow) -> [String; 7] {
    let state = match r.state {
        // Up, but some families stopped: the status line names them when the
        // host is selected.
        HostState::Up if !r.behind.is_empty() => "up*",
        HostState::Up => "up",
        HostState::Down => "down",
        HostState::Stale => "stale",
    };
    [
        state.to_owned(),
        host_cell(r.cpu, "cpu", r),
        host_cell(r.memory, "memory_percent", r),
        gpu_mean_cell(r),
        cell(r.gpu_min, "%"),
        cell(r.gpu_memory, "%"),
        cell(r.power, " W"),
    ]
}

fn render_table(buf: &mut Buffer, area: Rect, c: &ClusterScreen, rows: &[HeaderRow], theme: Theme) {
    if area.height == 0 {
        return;
    }
    // At least the heading's room (`  HOST▼` and a space), with no host too.
    let host_w = (rows
        .iter()
        .map(|r| r.host.chars().count())
        .max()
        .unwrap_or(0))
    .clamp(5, 40) as u16
        + 3;
    let mark = |s: SortBy| if c.sort == s { arrow(c, s) } else { "" };
    let mut x = area.x
        + put(
            buf,
            area.x,
            area.y,
            &format!("  HOST{}", mark(SortBy::Host)),
            host_w,
            theme.label(),
        );
    x = x.max(area.x + host_w);
    for (name, w, s) in COLUMNS {
        let w = w.min(area.right().saturating_sub(x));
        put(
            buf,
            x,
            area.y,
            &format!("{name}{}", mark(s)),
            w,
            theme.label(),
        );
        x += w;
    }
    let shown = usize::from(area.height - 1);
    let at = c.selected_index(rows).unwrap_or(0);
    let first = at.saturating_sub(shown.saturating_sub(1));
    for (i, r) in rows.iter().enumerate().skip(first).take(shown) {
        let y = area.y + 1 + u16::try_from(i - first).unwrap_or(0);
        let selected = i == at;
        let base = if selected {
            theme.text().add_modifier(Modifier::REVERSED)
        } else {
            theme.text()
        };
        if selected {
            buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        }
        let host = format!("{} {}", if selected { "›" } else { " " }, sanitize(&r.host));
        put(
            buf,
            area.x,
            y,
            &fit(&host, usize::from(host_w - 1)),
            host_w - 1,
            base,
        );
        let mut x = area.x + host_w;
        for (i, (text, (_, w, _))) in row_cells(r).iter().zip(COLUMNS).enumerate() {
            let w = w.min(area.right().saturating_sub(x));
            let style = match (i, r.state) {
                (0, HostState::Up) if !r.behind.is_empty() => theme.warn(),
                (0, HostState::Up) => theme.good(),
                (0, HostState::Down) => theme.bad(),
                (0, HostState::Stale) => theme.warn(),
                _ => base,
            };
            let style = if selected {
                style.add_modifier(Modifier::REVERSED)
            } else {
                style
            };
            put(buf, x, y, text, w, style);
            x += w;
        }
    }
}

/// A heatmap row: its label and one cell per bucket.
type HeatRow = (String, Vec<Option<f64>>);

/// The heatmap's rows: (label, cells), every GPU of the hosts in the table's
/// order, over `buckets` columns of the window; the rows outside `drawn` with
/// their labels alone (counted, not drawn: a frame walks the points of the rows
/// it shows, not of every GPU of the cluster).
pub(super) fn heat_rows(
    c: &ClusterScreen,
    rows: &[HeaderRow],
    buckets: usize,
    drawn: std::ops::Range<usize>,
) -> Vec<HeatRow> {
    let mut out = Vec::new();
    for r in rows {
        let at = out.len();
        let b = if at < drawn.end && at + r.gpus > drawn.start {
            buckets
        } else {
            0
        };
        for h in c.model.host_heat(&r.host, c.now, b) {
            out.push((format!("{}:{}", sanitize(&r.host), h.gpu), h.cells));
        }
    }
    out
}

/// The heatmap, its rows from `top` on (the widget says how many more are
/// below; the title, which are shown of how many).
fn render_heat(
    buf: &mut Buffer,
    area: Rect,
    c: &ClusterScreen,
    (all, top): (&[HeatRow], usize),
    theme: Theme,
) {
    if area.height < 3 {
        return;
    }
    let rows = all.get(top..).unwrap_or_default();
    let span = c.model.window().as_secs_f64();
    let x = (c.now - span, c.now);
    let labels: Vec<String> = rows.iter().map(|(l, _)| l.clone()).collect();
    let points = |i: usize, _cols: usize, out: &mut Vec<Point>| {
        out.clear();
        let Some((_, cells)) = rows.get(i) else {
            return;
        };
        let w = span / cells.len().max(1) as f64;
        for (j, v) in cells.iter().enumerate() {
            if let Some(v) = v {
                out.push((x.0 + (j as f64 + 0.5) * w, *v));
            }
        }
    };
    let fmt_x = |v: f64| format::time_of_day(v.floor() as i64);
    let seen = band_rows(area);
    let title = if all.len() > seen && seen > 0 {
        // Past the room, one row says how many more: the rest are seen.
        let last = if rows.len() > seen {
            top + seen - 1
        } else {
            all.len()
        };
        if last > top {
            format!(
                "GPU utilisation · {} · {}–{last} shown",
                counted(all.len(), "GPU"),
                top + 1
            )
        } else {
            // One row, the widget's `+N more`: no GPU's row is in it.
            format!(
                "GPU utilisation · {} · none shown",
                counted(all.len(), "GPU")
            )
        }
    } else {
        format!("GPU utilisation · {}", counted(all.len(), "GPU"))
    };
    let spec = HeatSpec {
        title: &title,
        focused: false,
        x,
        fmt_x: &fmt_x,
        labels: &labels,
        points: &points,
    };
    render_heatmap(buf, area, &spec, theme);
}

/// Points of many time-ordered lines gathered by time (to the millisecond), in
/// time order. Each line is merged into what is gathered in one pass: a map
/// entry per point cost most of a frame with a hundred hosts of long series.
#[derive(Debug, Default)]
struct Gathered {
    at: Vec<Acc>,
    spare: Vec<Acc>,
}

/// The points at one time: the first one's time, the lowest, highest, sum and
/// number of their values.
#[derive(Debug, Clone, Copy)]
struct Acc {
    key: i64,
    t: f64,
    lo: f64,
    hi: f64,
    sum: f64,
    n: u32,
}

impl Acc {
    fn of(t: f64, v: f64) -> Self {
        // As a join into an empty one: a NaN is no lowest or highest.
        Acc {
            key: (t * 1000.0).round() as i64,
            t,
            lo: f64::INFINITY.min(v),
            hi: f64::NEG_INFINITY.max(v),
            sum: 0.0 + v,
            n: 1,
        }
    }

    fn join(&mut self, o: &Acc) {
        self.lo = self.lo.min(o.lo);
        self.hi = self.hi.max(o.hi);
        self.sum += o.sum;
        self.n += o.n;
    }
}

impl Gathered {
    /// Gather `line`'s points (in time order) whose value `keep` passes.
    fn add(&mut self, line: &[Point], keep: impl Fn(f64) -> bool) {
        if self.join_aligned(line, &keep) {
            return;
        }
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        out.reserve(self.at.len() + line.len());
        let mut old = self.at.iter().copied().peekable();
        let mut new = (line.iter())
            .filter(|p| keep(p.1))
            .map(|&(t, v)| Acc::of(t, v))
            .peekable();
        loop {
            // At one time, what was gathered first: its time is the one kept.
            let next = match (old.peek(), new.peek()) {
                (Some(a), Some(b)) if a.key <= b.key => old.next(),
                (Some(_), Some(_)) | (None, _) => new.next(),
                (Some(_), None) => old.next(),
            };
            let Some(p) = next else { break };
            match out.last_mut() {
                Some(l) if l.key == p.key => l.join(&p),
                _ => out.push(p),
            }
        }
        self.spare = std::mem::replace(&mut self.at, out);
    }

    /// Join `line` in place where it is at the times gathered, each point kept:
    /// the usual case, the server evaluating every series at the same steps, then
    /// costs no copy of what is gathered. Whether it was.
    fn join_aligned(&mut self, line: &[Point], keep: &impl Fn(f64) -> bool) -> bool {
        let aligned = self.at.len() == line.len()
            && (self.at.iter().zip(line)).all(|(a, &(t, v))| keep(v) && a.key == Acc::of(t, v).key);
        if aligned {
            for (a, &(t, v)) in self.at.iter_mut().zip(line) {
                a.join(&Acc::of(t, v));
            }
        }
        aligned
    }
}

/// Host `name`'s points of `metric` (a GPU field's mean or sum over its GPUs at
/// each time).
fn host_points(model: &ClusterModel, name: &str, metric: Metric) -> Vec<Point> {
    let Some(h) = model.host(name) else {
        return Vec::new();
    };
    let (field, mean) = match metric {
        Metric::Key(k) => return h.series(k).map(|s| s.points().to_vec()).unwrap_or_default(),
        Metric::Cores => ("", true),
        Metric::GpuMean(f) => (f, true),
        Metric::GpuSum(f) => (f, false),
    };
    let pick = |k: &str| match metric {
        Metric::Cores => is_core(k),
        _ => gpu_key(k).is_some_and(|(_, f)| f == field),
    };
    let mut at = Gathered::default();
    for key in h.keys().filter(|k| pick(k)) {
        let points = h.series(key).map(|s| s.points()).unwrap_or_default();
        at.add(points, f64::is_finite);
    }
    (at.at.into_iter())
        .map(|a| (a.t, if mean { a.sum / f64::from(a.n) } else { a.sum }))
        .collect()
}

/// Across hosts, at each time: (lowest, highest, mean).
fn envelope(lines: &[Vec<Point>]) -> (Vec<Point>, Vec<Point>, Vec<Point>) {
    let mut at = Gathered::default();
    for line in lines {
        at.add(line, |_| true);
    }
    let (mut lo, mut hi, mut mid) = (Vec::new(), Vec::new(), Vec::new());
    for a in at.at {
        lo.push((a.t, a.lo));
        hi.push((a.t, a.hi));
        mid.push((a.t, a.sum / f64::from(a.n)));
    }
    (lo, hi, mid)
}

fn render_charts(
    buf: &mut Buffer,
    area: Rect,
    c: &ClusterScreen,
    rows: &[HeaderRow],
    theme: Theme,
) {
    if area.height < 4 || area.width < 10 {
        return;
    }
    let cols = if area.width >= 100 { 2 } else { 1 };
    let per_row = u16::try_from(CHARTS.len().div_ceil(cols)).unwrap_or(1);
    let h = (area.height / per_row).max(4);
    let w = area.width / u16::try_from(cols).unwrap_or(1);
    for (i, (title, metric, unit)) in CHARTS.into_iter().enumerate() {
        let (r, col) = (i / cols, i % cols);
        let y = area.y + u16::try_from(r).unwrap_or(0) * h;
        if y + h > area.bottom() {
            break;
        }
        let x = area.x + u16::try_from(col).unwrap_or(0) * w;
        let lines: Vec<Vec<Point>> = rows
            .iter()
            .map(|row| host_points(&c.model, &row.host, metric))
            .collect();
        render_metric(
            buf,
            Rect::new(x, y, w, h),
            (title, unit),
            c,
            (rows, &lines),
            theme,
        );
    }
}

fn render_metric(
    buf: &mut Buffer,
    area: Rect,
    (title, unit): (&str, Unit),
    c: &ClusterScreen,
    (rows, lines): (&[HeaderRow], &[Vec<Point>]),
    theme: Theme,
) {
    let span = c.model.window().as_secs_f64();
    let x = (c.now - span, c.now);
    let fmt_x = |v: f64| format::time_of_day(v.floor() as i64);
    let banded = rows.len() > theme.series_colors();
    let envelope = banded.then(|| envelope(lines));
    let (chart_lines, bands, legend) = match &envelope {
        Some((lo, hi, mid)) => (
            vec![Line {
                points: mid,
                style: theme.series(0),
                breaks: &[],
                mark: None,
            }],
            vec![Band {
                lo,
                hi,
                style: theme.series(0).add_modifier(Modifier::DIM),
            }],
            vec![(
                format!("mean of {} hosts, min–max band", rows.len()),
                theme.series(0),
            )],
        ),
        None => (
            (lines.iter().enumerate())
                .map(|(i, p)| Line {
                    points: p,
                    style: theme.series(i),
                    breaks: &[],
                    // Without colour, each host's line ends in its letter.
                    mark: (!theme.color && lines.len() > 1).then(|| mark_of(i)),
                })
                .collect(),
            Vec::new(),
            (rows.iter().enumerate())
                .map(|(i, r)| {
                    let host = sanitize(&r.host);
                    let label = if theme.color || lines.len() < 2 {
                        host
                    } else {
                        format!("{} {host}", mark_of(i))
                    };
                    (label, theme.series(i))
                })
                .collect(),
        ),
    };
    // The legend needs room a short chart lacks: the title says what a band is.
    let title = if banded {
        format!("{title} · mean, min–max of {} hosts", rows.len())
    } else {
        title.to_owned()
    };
    let spec = ChartSpec {
        title: &title,
        corner: None,
        lines: chart_lines,
        bands,
        cursor: None,
        x,
        log_y: false,
        focused: false,
        fmt_x: &fmt_x,
        x_ticks: XTicks::Round,
        y_unit: unit,
        guides: Guides::default(),
        legend,
        legend_rows: 1,
        gaps: Vec::new(),
        note: None,
    };
    render_chart(buf, area, &spec, theme);
}

/// The status line: the host filter being typed, else what the server said last.
fn render_status(buf: &mut Buffer, area: Rect, app: &App, c: &ClusterScreen, theme: Theme) {
    buf.set_style(area, theme.status_bar());
    let typing = app.filter_target == Some(crate::ui::FilterTarget::Hosts);
    let (text, style) = if typing {
        let draft = format!(" hosts /{}", sanitize(&c.filter.draft));
        let n = put(
            buf,
            area.x,
            area.y,
            &fit(&draft, usize::from(area.width)),
            area.width,
            theme.input(),
        );
        if c.filter.selected {
            let sel = fit::width(&c.filter.draft);
            fit::reverse(buf, (area.x + 8, area.y), sel, area.x + n);
        }
        // As the run viewer's filters say it: what is wrong, in the error's colour.
        let (after, style) = match c.filter.error.as_deref() {
            Some(e) => (format!("  ✗ {}", sanitize(e)), theme.bad()),
            None => (
                format!("  {} · enter keep · esc restore", shown_of(c)),
                theme.status_bar(),
            ),
        };
        let x = area.x + n;
        let room = area.right().saturating_sub(x);
        put(buf, x, area.y, &fit(&after, usize::from(room)), room, style);
        return;
    } else if let Some((error, at)) = c.model.error() {
        let since = c.model.last_ok().map_or_else(
            || "nothing read yet".to_owned(),
            |t| {
                format!(
                    "showing what was read by {}",
                    format::time_of_day(t.floor() as i64)
                )
            },
        );
        (
            format!(
                " prometheus failing since {}: {} · {since}",
                format::time_of_day(at.floor() as i64),
                sanitize(error)
            ),
            theme.bad(),
        )
    } else if let Some(text) = selected_behind(c) {
        (text, theme.warn())
    } else {
        let last = c.model.last_ok().map_or_else(
            || "waiting for the first answer".to_owned(),
            |t| format!("read at {}", format::time_of_day(t.floor() as i64)),
        );
        let refused = match c.model.refused().len() {
            0 => String::new(),
            n => format!(" · {n} queries refused"),
        };
        let filter = if c.filter.is_active() {
            format!(" · hosts /{}", c.filter.text)
        } else {
            String::new()
        };
        let (km, m) = (&app.screen.keymap, Mode::Overlay(Kind::Cluster));
        let keys = hint_line([
            (km.hint_key(m, &[Action::OpenHost]), "host"),
            (km.hint_key(m, &[Action::StartFilter]), "filter"),
            (km.hint_key(m, &[Action::CycleProcessSort]), "sort"),
            (km.hint_key(m, &[Action::Help]), "help"),
            (km.hint_key(m, &[Action::Quit]), "quit"),
        ]);
        let keys = if keys.is_empty() {
            keys
        } else {
            format!(" · {keys}")
        };
        (
            format!(
                " {last} · every {}{refused}{filter}{keys}",
                leet_text::duration::format(c.model.interval())
            ),
            theme.status_bar(),
        )
    };
    let style: Style = style;
    put(
        buf,
        area.x,
        area.y,
        &fit(&text, usize::from(area.width)),
        area.width,
        style,
    );
}

/// The selected host's families that stopped while its others go on, in words:
/// ` node-0 · gpu: no sample since 10:01:02 · enter: its screen`.
fn selected_behind(c: &ClusterScreen) -> Option<String> {
    let rows = c.rows();
    let row = rows.get(c.selected_index(&rows)?)?;
    if row.state != HostState::Up {
        return None;
    }
    let words = super::opened_of(c, &row.host)?.behind_words()?;
    Some(format!(
        " {} · {words} · enter: its screen",
        sanitize(&row.host)
    ))
}

/// `[3 of 100 hosts]`: how many the host filter passes.
fn shown_of(c: &ClusterScreen) -> String {
    let all = c.model.hosts().count();
    format!("[{} of {}]", c.rows().len(), counted(all, "host"))
}

#[cfg(test)]
mod tests {
    use super::envelope;

    #[test]
    fn the_envelope_merges_lines_at_other_times_in_time_order() {
        // Lines sampled at different instants (and one with a gap in it): every
        // time once, in order, its lowest, highest and mean over the lines there.
        let a = vec![(0.0, 1.0), (10.0, 3.0), (20.0, 5.0)];
        let b = vec![(5.0, 2.0), (10.0, 7.0), (30.0, 1.0)];
        let c = vec![(10.0004, 2.0), (20.0, f64::NAN)];
        let (lo, hi, mid) = envelope(&[a, b, c]);
        let times: Vec<f64> = lo.iter().map(|p| p.0).collect();
        assert_eq!(times, [0.0, 5.0, 10.0, 20.0, 30.0]);
        assert_eq!(lo[2], (10.0, 2.0));
        assert_eq!(hi[2], (10.0, 7.0));
        assert_eq!(mid[2], (10.0, 4.0));
        // A NaN is no lowest or highest, but the mean says the gap.
        assert_eq!((lo[3].1, hi[3].1), (5.0, 5.0));
        assert!(mid[3].1.is_nan());
        assert_eq!(mid[4], (30.0, 1.0));
        // Lines at the same times (joined in place), then one that is not.
        let same = |v: f64| vec![(0.0, v), (10.0, v + 1.0)];
        let (lo, hi, mid) = envelope(&[same(1.0), same(3.0), vec![(10.0, 9.0)]]);
        assert_eq!(lo, [(0.0, 1.0), (10.0, 2.0)]);
        assert_eq!(hi, [(0.0, 3.0), (10.0, 9.0)]);
        assert_eq!(mid, [(0.0, 2.0), (10.0, 5.0)]);
    }
}
