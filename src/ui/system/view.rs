//! One system chart (a grouped metric: every GPU's utilisation, ...): in the
//! system sidebar, and as a grid item in the live host monitor.

use crate::ui::charts::model::below_zero;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::store::series::Point;
use crate::text::sanitize;
use crate::ui::charts::grid::YScale;
use crate::ui::system::{node_name, split_node, SysChart};
use crate::ui::theme::Theme;
use crate::ui::widget::band::MinMax;
use crate::ui::widget::chart::{render_chart, ChartSpec, Line, XTicks};
use crate::ui::widget::fit::width as text_width;
use crate::ui::widget::format;
use crate::ui::widget::heatmap::{render_heatmap, HeatSpec};
use crate::ui::{App, Subject};

/// Downsampled points of a system series (rates for counters), bounded by `width`.
fn sys_points(
    app: &App,
    key: &str,
    rate: Option<f64>,
    x: (f64, f64),
    width: usize,
    out: &mut Vec<Point>,
) {
    out.clear();
    let parts = sys_series(app, key);
    if parts.is_empty() {
        return;
    }
    let mut raw = Vec::with_capacity(width * 2 + 4);
    let mut part = Vec::new();
    for s in parts {
        s.downsample(x.0, x.1, width, &mut part);
        // The time between two segments is no line: a break before the next.
        if let (Some(_), Some(&(px, _))) = (raw.last(), part.first()) {
            raw.push((px, f64::NAN));
        }
        raw.append(&mut part);
    }
    let Some(factor) = rate else {
        *out = raw;
        return;
    };
    let min_dx = (x.1 - x.0) / width.max(1) as f64;
    let mut anchor: Option<Point> = None;
    for &(px, py) in &raw {
        if !py.is_finite() {
            anchor = None;
            out.push((px, f64::NAN));
            continue;
        }
        match anchor {
            None => anchor = Some((px, py)),
            Some((ax, ay)) => {
                let dx = px - ax;
                if dx > 0.0 && dx >= min_dx {
                    let r = (py - ay) / dx * factor;
                    out.push((px, if r >= 0.0 { r } else { f64::NAN }));
                    anchor = Some((px, py));
                }
            }
        }
    }
}

/// The series of system key `key` of each segment of the run shown, oldest
/// first (the run's own alone where it is no resumed run): a resumed run's
/// samples are all of its segments'.
fn sys_series<'a>(app: &'a App, key: &str) -> Vec<&'a crate::store::Series> {
    app.segment_runs()
        .into_iter()
        .filter_map(|r| r.system.get(key))
        .collect()
}

/// The chart's title with its unit (`Process CPU (%)`) where that fits in
/// `room` columns, else without it: a process chart's command and pid name the
/// chart better than its unit, which the corner value shows too.
fn fitted_title(chart: &SysChart, room: usize) -> String {
    let full = sanitize(&chart.display_title());
    if usize::from(text_width(&full)) <= room {
        full
    } else {
        sanitize(&chart.title)
    }
}

/// One system chart.
pub(crate) fn render_sys_chart(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    chart: &SysChart,
    focused: bool,
    theme: Theme,
) {
    let x = sys_x(app, chart);
    // From the start of the run: of its first segment, for a resumed run.
    let t0 = app
        .segment_runs()
        .iter()
        .find_map(|r| r.info.start_time)
        .map_or(x.0, |(s, n)| s as f64 + f64::from(n) * 1e-9);
    let live = app.is_host();
    let fmt_x = move |v: f64| {
        if live {
            format::time_of_day(v.floor() as i64)
        } else {
            format::clock(v - t0)
        }
    };
    let scale = app.charts.grid.scales.system(chart);
    // Room for the title on the top border (the corner value takes up to 10).
    let room = usize::from(area.width.saturating_sub(2));
    if scale == YScale::Heatmap {
        render_sys_heatmap(buf, (area, room), (app, chart), (x, &fmt_x), focused, theme);
        return;
    }
    let width = usize::from(area.width.saturating_sub(4)).max(1) * 2;
    let mut pts: Vec<Vec<Point>> = Vec::with_capacity(chart.series.len());
    for s in &chart.series {
        let mut v = Vec::new();
        sys_points(app, &s.key, s.rate, x, width, &mut v);
        pts.push(v);
    }
    let unit = chart.unit;
    // The min–max band: of the series charted as read (not rates); a band is of
    // one series, so none where a resumed run's segments make up the line.
    let read: Vec<(usize, &crate::store::Series)> = (chart.series.iter().enumerate())
        .filter(|(_, s)| s.rate.is_none())
        .flat_map(|(i, s)| sys_series(app, &s.key).into_iter().map(move |r| (i, r)))
        .collect();
    let one_each = read.windows(2).all(|w| w[0].0 != w[1].0);
    let minmax = MinMax::of(
        (app.charts.band && one_each, &app.charts.views),
        &read,
        x,
        width,
        |_| &[],
    );
    let lines: Vec<Line<'_>> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| Line {
            points: minmax.line(i).unwrap_or(p),
            style: theme.series(i),
            breaks: &[],
            mark: None,
        })
        .collect();
    let (legend, corner) = legend_and_corner(chart, &pts, theme);
    let nodes = chart.series.iter().any(|s| split_node(&s.key).1.is_some());
    let log = scale == YScale::Log;
    let corner = if log {
        below_zero(corner, &read, x, (room / 2, false))
    } else {
        corner
    };
    let corner_w = corner
        .as_ref()
        .map_or(0, |c| usize::from(text_width(c)) + 3);
    let title = fitted_title(
        chart,
        room.saturating_sub(corner_w + if log { 6 } else { 0 }),
    );
    let title = if log {
        format!("{title} · log")
    } else {
        title
    };
    let spec = ChartSpec {
        title: &title,
        corner,
        lines,
        bands: minmax.bands(|i| theme.series(i)),
        cursor: None,
        x,
        log_y: log,
        focused,
        fmt_x: &fmt_x,
        x_ticks: XTicks::Round,
        y_unit: unit,
        guides: app.charts.grid.guides,
        legend,
        legend_rows: if nodes { LEGEND_ROWS } else { 1 },
        gaps: Vec::new(),
        note: None,
    };
    render_chart(buf, area, &spec, theme);
}

/// `chart` as a heatmap in `area` (its title fitted in `room`): a row per
/// series, over `x` (written by `fmt_x`).
fn render_sys_heatmap(
    buf: &mut Buffer,
    (area, room): (Rect, usize),
    (app, chart): (&App, &SysChart),
    (x, fmt_x): ((f64, f64), &dyn Fn(f64) -> String),
    focused: bool,
    theme: Theme,
) {
    let title = format!("{} · heatmap", fitted_title(chart, room.saturating_sub(10)));
    let labels: Vec<String> = chart.series.iter().map(|s| sanitize(&s.label)).collect();
    let points = |i: usize, cols: usize, out: &mut Vec<Point>| match chart.series.get(i) {
        Some(s) => sys_points(app, &s.key, s.rate, x, cols, out),
        None => out.clear(),
    };
    let spec = HeatSpec {
        title: &title,
        focused,
        x,
        fmt_x,
        labels: &labels,
        points: &points,
    };
    render_heatmap(buf, area, &spec, theme);
}

/// The x range of `chart`'s series; live, the window that follows the newest
/// sample, as the metric charts do.
fn sys_x(app: &App, chart: &SysChart) -> (f64, f64) {
    let mut x = (f64::INFINITY, f64::NEG_INFINITY);
    for s in &chart.series {
        for (a, b) in sys_series(app, &s.key)
            .into_iter()
            .filter_map(crate::store::Series::x_bounds)
        {
            x = (x.0.min(a), x.1.max(b));
        }
    }
    if x.0 > x.1 {
        x = (0.0, 0.0);
    }
    if let Subject::Host { window: w } = app.shown.subject {
        let end = app.shown.run.last_time.unwrap_or(x.1);
        x = ((end - w).max(x.0.min(end)), end);
    }
    x
}

/// Rows the legend of a multi-node run's chart may take: wrapped rather than cut
/// in a narrow sidebar.
const LEGEND_ROWS: u16 = 2;

/// The legend (each series' label and last value) of a chart of several series,
/// else the corner (its one series' last value). Of a multi-node run's, a node is
/// named once, by its first entry (`node-1:gpu 0`); the entries after it of the
/// same node say only what differs (`gpu 1`), so they fit a narrow sidebar.
fn legend_and_corner(
    chart: &SysChart,
    pts: &[Vec<Point>],
    theme: Theme,
) -> (Vec<(String, Style)>, Option<String>) {
    let last = |p: &Vec<Point>| p.iter().rev().find(|q| q.1.is_finite()).map(|q| q.1);
    let unit = chart.unit;
    let multi = chart.series.len() > 1;
    let mut prev: Option<&str> = None;
    let legend = if multi {
        chart
            .series
            .iter()
            .zip(pts)
            .enumerate()
            .map(|(i, (s, p))| {
                let v = last(p).map_or(String::new(), |v| format!(" {}", format::unit(v, unit)));
                let node = split_node(&s.key).1;
                let label = sanitize(&s.label);
                let label = match node {
                    Some(n) if prev == Some(n) => {
                        let named = format!("{}:", node_name(n));
                        label
                            .strip_prefix(&named)
                            .map_or(label.clone(), str::to_owned)
                    }
                    _ => label,
                };
                prev = node;
                (format!("{label}{v}"), theme.series(i))
            })
            .collect()
    } else {
        Vec::new()
    };
    let corner = if multi {
        None
    } else {
        pts.first().and_then(last).map(|v| format::unit(v, unit))
    };
    (legend, corner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::system::{group, Unit};
    use crate::ui::widget::format::AxisScale;

    const UNITS: [Unit; 14] = [
        Unit::Plain,
        Unit::Percent,
        Unit::MiB,
        Unit::GiB,
        Unit::Bytes,
        Unit::Celsius,
        Unit::Watts,
        Unit::Joules,
        Unit::MilliJoules,
        Unit::Micros,
        Unit::Seconds,
        Unit::MHz,
        Unit::BytesPerSec,
        Unit::Mbps,
    ];

    /// Whether `label` is a number written in `unit` as it is: no prefix between
    /// them (`23.2GiB` is not in MiB, `1.2k%` not in %).
    fn in_unit(label: &str, unit: &str) -> bool {
        label
            .strip_suffix(unit)
            .is_some_and(|n| n.parse::<f64>().is_ok())
    }

    #[test]
    fn a_title_names_a_unit_only_where_every_label_is_written_in_it() {
        let values = [
            0.0, 0.004, 0.5, 42.0, 99.5, 640.0, 1500.0, 23_639.4, 5e6, 3e9, 7e13,
        ];
        for u in UNITS {
            let chart = SysChart {
                title: "Chart".into(),
                unit: u,
                series: Vec::new(),
            };
            let title = chart.display_title();
            let Some(named) = title
                .strip_prefix("Chart (")
                .and_then(|t| t.strip_suffix(')'))
            else {
                assert_eq!(title, "Chart", "{u:?}");
                continue;
            };
            for v in values {
                let axis = AxisScale::new(u, v);
                for label in [format::unit(v, u), axis.label(v, 1), axis.label(v, 0)] {
                    assert!(in_unit(&label, named), "{title}: {label}");
                }
            }
        }
    }

    #[test]
    fn the_system_fixture_charts_say_no_unit_their_labels_contradict() {
        // The keys of the `system` fixture, and the memory and clock ones of a GPU host.
        let keys = [
            "disk./.usagePercent",
            "disk./.usageGB",
            "disk.in",
            "network.sent",
            "cpu",
            "proc.cpu.threads",
            "proc.memory.percent",
            "proc.memory.rssMB",
            "proc.memory.availableMB",
            "memory_percent",
            "gpu.0.memoryAllocatedBytes",
            "gpu.0.smClock",
            "gpu.0.powerWatts",
            "gpu.0.temp",
        ];
        let titles: Vec<String> = group(keys).iter().map(SysChart::display_title).collect();
        assert_eq!(
            titles,
            [
                "GPU Memory Used",
                "GPU Temperature (°C)",
                "GPU Power",
                "GPU Clocks",
                "Process CPU (%)",
                "Process Memory",
                "Memory (%)",
                "Memory Available",
                "Disk Usage (%)",
                "Disk Used",
                "Disk I/O",
                "Network",
                "Process Threads",
            ]
        );
        // `Memory Available` is MiB as logged and labelled in GiB past 1024 MiB.
        assert_eq!(format::unit(23_639.4, Unit::MiB), "23.1GiB");
    }

    /// A system chart on log y counts the readings it cannot draw (an idle GPU's
    /// 0 %) as the metric charts do: in the window shown, a floor past the cap.
    #[test]
    fn log_y_counts_the_readings_it_cannot_draw() {
        let mut idle = crate::store::Series::new(1024);
        let mut busy = crate::store::Series::new(1024);
        for t in 0..10 {
            let t = f64::from(t);
            idle.push(t, if t < 6.0 { 0.0 } else { 5.0 });
            busy.push(t, 50.0);
        }
        let read = [(0, &idle), (1, &busy)];
        let c = || Some("5%".to_owned());
        assert_eq!(
            below_zero(c(), &read, (0.0, 9.0), (40, false)).as_deref(),
            Some("5% · 6 y≤0")
        );
        assert_eq!(
            below_zero(c(), &read, (4.0, 9.0), (40, false)).as_deref(),
            Some("5% · 2 y≤0")
        );
        assert_eq!(
            below_zero(c(), &read, (6.0, 9.0), (40, false)).as_deref(),
            Some("5%")
        );
        // Short of room: the count alone; no room for it: the corner alone.
        let at = |room| below_zero(c(), &read, (0.0, 9.0), (room, false));
        assert_eq!(at(9).as_deref(), Some("6 y≤0"));
        assert_eq!(at(4).as_deref(), Some("6y≤0"));
        assert_eq!(at(3).as_deref(), Some("5%"));
        // A corner asked for (the crosshair's reading) is kept.
        let kept = below_zero(c(), &read, (0.0, 9.0), (9, true));
        assert_eq!(kept.as_deref(), Some("5%"));
        let mut long = crate::store::Series::new(64);
        for t in 0..1000 {
            long.push(f64::from(t), if t % 2 == 0 { 0.0 } else { 1.0 });
        }
        let got = below_zero(None, &[(0, &long)], (0.0, 999.0), (40, false)).expect("a count");
        assert!(got.starts_with('≥') && got.ends_with(" y≤0"), "{got}");
    }
}
