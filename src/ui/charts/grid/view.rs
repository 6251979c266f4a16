//! The metrics grid: its header line and the focused page of charts (metric
//! charts, or the live monitor's grouped system charts), or one chart full screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use crate::store::series::Point;
use crate::text::sanitize;
use crate::ui::charts::group::{group_stats, GroupStats};
use crate::ui::layout;
use crate::ui::system::view::render_sys_chart;
use crate::ui::system::Unit;
use crate::ui::theme::Theme;
use crate::ui::widget::band::MinMax;
use crate::ui::widget::chart::{render_chart, Band, ChartSpec, Line, XTicks};
use crate::ui::widget::fit::{put, word_wrap};
use crate::ui::widget::format;
use crate::ui::{App, Subject};

use crate::ui::charts::model::gaps::{gap_note, resume_gaps};
use crate::ui::charts::model::smooth;

/// The metric chart of `key` in `area`.
pub(crate) fn render_metric_chart(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    key: &str,
    focused: bool,
    theme: Theme,
) {
    // The main run's series, then those of the runs compared with it (colour i + 1;
    // in a workspace each run's own colour, the pinned run last, on top), if they
    // chart the key against the same x (a run that steps `val` by `epoch` does not
    // share an axis with one that steps it by `_step`).
    let drawn = drawn_runs(app);
    let with_key: Vec<(usize, &crate::store::Run)> = drawn
        .iter()
        .enumerate()
        .filter(|(_, d)| d.run.metrics.get(key).is_some())
        .map(|(i, d)| (i, d.run))
        .collect();
    let Some(&(_, first_run)) = with_key.first() else {
        return;
    };
    let xname = first_run.x_axis_of(key);
    let all: Vec<(usize, &crate::store::series::Series)> = with_key
        .iter()
        .filter(|(_, r)| r.x_axis_of(key) == xname)
        .filter_map(|&(i, r)| r.metrics.get(key).map(|s| (i, s)))
        .collect();
    let Some(&(_, first)) = all.first() else {
        return;
    };
    let full = all
        .iter()
        .filter_map(|(_, s)| s.x_bounds())
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0.0, 0.0));
    // Live: a sliding window that follows the newest sample.
    let full = match app.shown.subject {
        Subject::Host { window: w } => {
            // Until the window fills, the data spans the whole chart.
            let end = app.shown.run.last_time.unwrap_or(full.1);
            ((end - w).max(full.0.min(end)), end)
        }
        Subject::Run => full,
    };
    let (x0, x1) = app.charts.zoom.get(key).copied().unwrap_or(full);
    let px = usize::from(area.width.saturating_sub(4)).max(1) * 2;
    let pts: Vec<Vec<Point>> = all
        .iter()
        .map(|(_, s)| {
            let mut pts = Vec::with_capacity(px * 2 + 4);
            s.downsample(x0, x1, px, &mut pts);
            pts
        })
        .collect();
    // Another x or log x maps the points (None: as drawn).
    let cross_x = app
        .charts
        .crosshair
        .filter(|c| c.synced || focused)
        .map(|c| c.x);
    let runs: Vec<&crate::store::Run> = all.iter().map(|&(i, _)| drawn[i].run).collect();
    let zoom = app.charts.zoom.get(key).copied();
    let mapped = crate::ui::charts::xaxis::view::map_chart(app, key, &runs, zoom, px, cross_x);
    let (pts, (x0, x1)) = match mapped.as_ref() {
        Some(m) => (m.pts.clone(), m.x),
        None => (pts, (x0, x1)),
    };
    let shown_x = mapped
        .as_ref()
        .and_then(|m| m.name.as_deref())
        .unwrap_or(xname);
    let log = app.charts.grid.scales.metric(key) == crate::ui::charts::grid::YScale::Log;
    let title = sanitize(key);
    let mut flags = String::new();
    if log {
        flags.push_str(" log");
    }
    if mapped.as_ref().is_some_and(|m| m.log) {
        flags.push_str(" logx");
    }
    if app.charts.zoom.contains_key(key) {
        flags.push_str(" zoom");
    }
    let title = if flags.is_empty() && shown_x == "_step" {
        title
    } else if shown_x == "_step" {
        format!("{title} ·{flags}")
    } else {
        format!("{title} · x={}{flags}", sanitize(shown_x))
    };
    // The crosshair (on this chart when it is focused, on every chart when synced):
    // x, and each series' value at its point nearest to x.
    let cross = app
        .charts
        .crosshair
        .filter(|c| (c.synced || focused) && !app.is_host());
    let at: Vec<Option<Point>> = match cross {
        Some(c) => all.iter().map(|(_, s)| s.nearest(c.x)).collect(),
        None => Vec::new(),
    };
    let corner = match cross {
        Some(c) if all.len() == 1 => Some(format!(
            "x={} · {}",
            format::value(c.x),
            at.first()
                .copied()
                .flatten()
                .map_or_else(|| "–".to_owned(), |p| format::value(p.1))
        )),
        Some(c) => Some(format!("x={}", format::value(c.x))),
        None => first.last().map(|(_, y)| format::value(y)),
    };
    let corner = match &mapped {
        Some(m) => m.corner(
            cross.is_some(),
            (all.len() == 1).then(|| at.first().copied().flatten().map(|p| p.1)),
            first.last().map(|p| p.1),
            usize::from(area.width.saturating_sub(6))
                .saturating_sub(crate::ui::widget::fit::width(&title).into()),
        ),
        None => corner,
    };
    // Grouped (`G` in the workspace): per group its mean line and min–max band.
    let groups = groups_of(&drawn, &all, &pts, (x0, x1), px);
    // Smoothing: not of a group's mean.
    // In another x (or log x) the smoothed series is mapped as the raw ones are.
    let map_x = |run: &crate::store::Run, s: &crate::store::series::Series| {
        let m = mapped.as_ref()?;
        crate::ui::charts::xaxis::view::map_points(app, key, run, s, zoom, m, px)
    };
    let smoothing = smooth::of_chart(
        app,
        key,
        runs.iter().copied(),
        ((x0, x1), px),
        mapped.is_some().then_some(&map_x as smooth::MapX<'_>),
        groups.is_some(),
    );
    let title = smoothing.title(title);
    let legend = if let Some(groups) = &groups {
        groups
            .iter()
            .map(|g| (format!("{} ({})", g.label, g.runs), theme.series(g.color)))
            .collect()
    } else if app.runs.workspace.is_none() && app.runs.compare.is_empty() {
        Vec::new()
    } else {
        // One entry per run (the segments of a resumed run share one).
        let mut legend: Vec<(String, ratatui::style::Style)> = Vec::new();
        let mut keys: Vec<Option<&str>> = Vec::new();
        for &(i, _) in &all {
            let d = &drawn[i];
            if d.key.is_some() && keys.contains(&d.key) {
                continue;
            }
            keys.push(d.key);
            let mut label = if d.pinned {
                format!("▲{}", d.label)
            } else {
                d.label.clone()
            };
            if cross.is_some() {
                let v = all
                    .iter()
                    .position(|&(j, _)| j == i)
                    .and_then(|k| at.get(k).copied().flatten());
                label.push_str(&format!(
                    " {}",
                    v.map_or_else(|| "–".to_owned(), |p| format::value(p.1))
                ));
            }
            legend.push((label, theme.series(d.color)));
        }
        // One run drawn in all: no legend needed. Several: every chart says whose
        // lines it draws, also when only one of them logged its metric.
        let runs_drawn = {
            let mut keys: Vec<Option<&str>> = drawn.iter().map(|d| d.key).collect();
            keys.sort_unstable();
            keys.dedup();
            keys.len()
                + drawn
                    .iter()
                    .filter(|d| d.key.is_none())
                    .count()
                    .saturating_sub(1)
        };
        if runs_drawn < 2 {
            legend.clear();
        }
        legend
    };
    // Steps lost to damage (each run's own breaks: its line is not drawn across
    // them) and steps between a resumed run's segments (drawn as separate lines
    // already): both marked on the x axis. Breaks are `_step` ranges.
    let on_step = xname == "_step" && mapped.is_none();
    let breaks_of = |i: usize| -> &[(f64, f64)] {
        if on_step {
            drawn[i].run.breaks.spans()
        } else {
            &[]
        }
    };
    let lost: Vec<(f64, f64)> = all
        .iter()
        .flat_map(|&(i, _)| breaks_of(i))
        .copied()
        .collect();
    let missing = if on_step {
        let spans: Vec<(Option<&str>, (f64, f64))> = all
            .iter()
            .filter_map(|&(i, s)| Some((drawn[i].key, s.x_bounds()?)))
            .collect();
        resume_gaps(&spans)
    } else {
        Vec::new()
    };
    let note = gap_note(&lost, &missing, (x0, x1));
    let gaps: Vec<(f64, f64)> = lost.iter().chain(&missing).copied().collect();
    // The min–max band: in the series' own x only (a chart mapped to another x
    // is thinned there instead).
    let minmax = MinMax::of(
        app.charts.band && groups.is_none() && mapped.is_none(),
        &all,
        (x0, x1),
        px,
        breaks_of,
    );
    let (lines, bands) = match &groups {
        Some(groups) => (
            groups
                .iter()
                .map(|g| Line {
                    points: &g.stats.mean,
                    style: theme.series(g.color),
                    breaks: &[],
                })
                .collect(),
            groups
                .iter()
                .map(|g| Band {
                    lo: &g.stats.lo,
                    hi: &g.stats.hi,
                    style: theme.series(g.color).add_modifier(Modifier::DIM),
                })
                .collect(),
        ),
        None => (
            // Smoothing: raw lines faint under the smoothed.
            smoothing.lines(
                all.iter()
                    .zip(&pts)
                    .map(|(&(i, _), p)| Line {
                        points: minmax.line(i).unwrap_or(p),
                        style: theme.series(drawn[i].color),
                        breaks: breaks_of(i),
                    })
                    .collect(),
            ),
            minmax.bands(|i| theme.series(drawn[i].color)),
        ),
    };
    let fmt_x = |v: f64| {
        mapped
            .as_ref()
            .map_or_else(|| format::compact(v), |m| m.label(v))
    };
    let spec = ChartSpec {
        title: &title,
        corner,
        lines,
        bands,
        cursor: mapped.as_ref().map_or(cross.map(|c| c.x), |m| m.cursor),
        x: (x0, x1),
        log_y: log,
        focused,
        fmt_x: if app.is_host() { &clock_x } else { &fmt_x },
        x_ticks: mapped.as_ref().map_or(XTicks::Round, |m| m.ticks),
        y_unit: Unit::Plain,
        guides: app.charts.grid.guides,
        legend,
        gaps,
        note,
    };
    render_chart(buf, area, &spec, theme);
    if focused {
        crate::ui::charts::xaxis::view::render_picker(buf, area, app, key, theme);
    }
}

/// A run drawn in the metric charts, as the chart needs it.
struct Drawn<'a> {
    run: &'a crate::store::Run,
    color: usize,
    label: String,
    pinned: bool,
    /// The workspace run it belongs to.
    key: Option<&'a str>,
    /// Its group (`G`), in the workspace's list.
    group: Option<&'a str>,
}

/// One group of runs in a chart: its legend text, colour, number of runs (a
/// resumed run's segments count once) and statistics.
struct Group {
    label: String,
    color: usize,
    runs: usize,
    stats: GroupStats,
}

/// The groups of the drawn series `all` (with their points `pts`), when the
/// workspace groups runs; in order of first appearance, coloured as their first run.
fn groups_of(
    drawn: &[Drawn<'_>],
    all: &[(usize, &crate::store::series::Series)],
    pts: &[Vec<Point>],
    x: (f64, f64),
    buckets: usize,
) -> Option<Vec<Group>> {
    // Per group: its label, colour, members' points and runs (by workspace key).
    type Members<'p> = (&'p str, usize, Vec<&'p [Point]>, Vec<Option<&'p str>>);
    let mut order: Vec<Members<'_>> = Vec::new();
    for (&(i, _), p) in all.iter().zip(pts) {
        let d = &drawn[i];
        let g = d.group?;
        let at = match order.iter().position(|o| o.0 == g) {
            Some(at) => at,
            None => {
                order.push((g, d.color, Vec::new(), Vec::new()));
                order.len() - 1
            }
        };
        let o = &mut order[at];
        o.2.push(p);
        if !o.3.contains(&d.key) {
            o.3.push(d.key);
        }
    }
    Some(
        order
            .into_iter()
            .map(|(label, color, members, keys)| Group {
                label: label.to_owned(),
                color,
                runs: keys.len(),
                stats: group_stats(&members, x, buckets),
            })
            .collect(),
    )
}

/// The runs drawn, bottom first: the main run and the compared ones, in a
/// workspace with their own colours and the pinned run last (on top).
fn drawn_runs(app: &App) -> Vec<Drawn<'_>> {
    let mut v: Vec<Drawn<'_>> = Vec::with_capacity(1 + app.runs.compare.len());
    let main = app
        .runs
        .main_tag
        .as_ref()
        .filter(|_| app.runs.workspace.is_some());
    let grouped = app.in_workspace_list();
    v.push(Drawn {
        run: &app.shown.run,
        color: main.map_or(0, |t| t.color),
        label: main.map_or_else(|| app.run_label(), |t| t.label.clone()),
        pinned: main.is_some_and(|t| t.pinned),
        key: main.map(|t| t.key.as_str()),
        group: main.and_then(|t| t.group.as_deref()).filter(|_| grouped),
    });
    for (i, c) in app.runs.compare.iter().enumerate() {
        let t = c.ws.as_ref().filter(|_| app.runs.workspace.is_some());
        v.push(Drawn {
            run: &c.run,
            color: t.map_or(i + 1, |t| t.color),
            label: c.label.clone(),
            pinned: t.is_some_and(|t| t.pinned),
            key: t.map(|t| t.key.as_str()),
            group: t.and_then(|t| t.group.as_deref()).filter(|_| grouped),
        });
    }
    v.sort_by_key(|d| d.pinned);
    v
}

/// The metrics grid (header line + the focused page), or the focused chart full
/// screen.
pub(crate) fn render_grid(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let n = app.charts.shown.len();
    let total = app.charts.metric_keys.len();
    let (cols, rows) = if app.charts.grid.cols == 0 {
        layout::grid_dims(
            layout::grid_body(area),
            app.charts.grid.cols_setting,
            app.charts.grid.rows_setting,
        )
    } else {
        (app.charts.grid.cols, app.charts.grid.rows)
    };
    let per_page = usize::from(cols) * usize::from(rows);
    let start = app.charts.grid.focus / per_page * per_page;
    let end = (start + per_page).min(n);
    // The page of a sectioned grid, and what it shows.
    let paged = (app.charts.grid.cols > 0)
        .then(|| app.charts.grid.section_view(layout::grid_body(area)))
        .flatten();
    let (start, end, page, pages) = match &paged {
        Some(v) => {
            let (a, b) = v.charts.map_or((n, n), |(a, b)| (a, b + 1));
            (a, b, v.page, v.pages)
        }
        None => (start, end, start / per_page, n.div_ceil(per_page)),
    };
    let focused_pane = app.panels.focus == crate::ui::panels::Pane::Grid;
    let mut header = if n == 0 {
        "Metrics [0]".to_owned()
    } else if start >= end {
        format!("Metrics [{n}]")
    } else {
        format!("Metrics [{}-{end} of {n}]", start + 1)
    };
    if app.charts.filter.is_active() {
        header.push_str(&format!(
            " filtered from {total} by /{}",
            sanitize(&app.charts.filter.text)
        ));
    }
    if app.charts.hidden > 0 {
        let key = app
            .screen
            .keymap
            .keys_for(
                crate::ui::keymap::Mode::Normal,
                crate::ui::action::Action::ToggleHidden,
            )
            .next()
            .map(|k| k.to_string());
        let (what, verb) = if app.charts.show_hidden {
            ("hidden shown", "hides")
        } else {
            ("hidden", "shows")
        };
        header.push_str(&format!(" · {} {what}", app.charts.hidden));
        if let Some(k) = key {
            header.push_str(&format!(" ({k} {verb})"));
        }
    }
    if pages > 1 {
        header.push_str(&format!("  page {}/{pages}", page + 1));
    }
    put(
        buf,
        area.x + 1,
        area.y,
        &header,
        area.width.saturating_sub(1),
        theme.heading(),
    );
    let body = layout::grid_body(area);
    if n == 0 && total == 0 {
        if let Some(why) = app.unreadable() {
            // Already sanitized; wrapped so the cause is never cut off.
            let w = usize::from(body.width.saturating_sub(4)).max(1);
            let rows = word_wrap(&why, w);
            let n = u16::try_from(rows.len()).unwrap_or(u16::MAX);
            let top = body.y + body.height.saturating_sub(n) / 2;
            for (y, row) in (top..body.bottom()).zip(&rows) {
                put(
                    buf,
                    body.x + 2,
                    y,
                    row,
                    body.width.saturating_sub(2),
                    theme.bad(),
                );
            }
            return;
        }
    }
    if n == 0 {
        let msg = if total > 0 {
            "no chart matches the filter"
        } else if app.is_host() {
            "waiting for the first sample…"
        } else if app.shown.source.waiting.is_some() {
            "waiting for the run to start…"
        } else if app.in_workspace_list() && app.shown.main_reading.is_none() {
            // No reader runs: nothing is being opened.
            "no run drawn: space on a run in the list draws it"
        } else if app.shown.source.path.is_none() {
            "opening…"
        } else {
            "no history metrics yet"
        };
        put(
            buf,
            body.x + 2,
            body.y + body.height / 2,
            msg,
            body.width.saturating_sub(2),
            theme.dim(),
        );
        return;
    }
    if let Some(v) = &paged {
        sections::render_page(buf, app, v, focused_pane, theme);
        return;
    }
    for i in start..end {
        let cell = if app.charts.grid.cols == 0 {
            layout::grid_cell(body, cols, rows, i - start)
        } else {
            app.charts.grid.cell(body, n, i - start)
        };
        render_grid_item(
            buf,
            cell,
            app,
            app.charts.shown[i],
            focused_pane && i == app.charts.grid.focus,
            theme,
        );
    }
}

/// Grid item `i` (an index into `metric_keys`): a metric chart, or in the live
/// monitor a grouped system chart.
fn render_grid_item(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    i: usize,
    focused: bool,
    theme: Theme,
) {
    if app.is_host() {
        if let Some(chart) = app.charts.sys.get(i) {
            render_sys_chart(buf, area, app, chart, focused, theme);
        }
    } else if let Some(key) = app.charts.metric_keys.get(i) {
        render_metric_chart(buf, area, app, key, focused, theme);
    }
}

/// The focused grid item full screen.
pub(crate) fn render_fullscreen(buf: &mut Buffer, area: Rect, app: &App, theme: Theme) {
    if let Some(&i) = app.charts.shown.get(app.charts.grid.focus) {
        render_grid_item(buf, area, app, i, true, theme);
    }
}

/// Unix seconds as a UTC time of day (live charts).
fn clock_x(v: f64) -> String {
    format::time_of_day(v.floor() as i64)
}

mod sections;
