//! A metric chart's view-model: what one chart draws (its lines with their
//! mapped and smoothed points, bands, x range, title, corner, legend and gaps),
//! decided from the state, where it can be tested without a screen. Drawing
//! (`grid::view`) only hands it to the chart widget.

use ratatui::style::{Modifier, Style};

use crate::store::series::{Point, Series};
use crate::store::Run;
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::charts::crosshair::Crosshair;
use crate::ui::charts::xaxis::view::{map_chart, map_points, Mapped};
use crate::ui::charts::xaxis::{own_x, series_in};
use crate::ui::keymap::Mode;
use crate::ui::system::Unit;
use crate::ui::theme::Theme;
use crate::ui::widget::band::MinMax;
use crate::ui::widget::chart::{mark_of, y_range, Band, ChartSpec, Line, XTicks};
use crate::ui::widget::format;
use crate::ui::widget::guides::Guides;
use crate::ui::{App, Subject};
use gaps::{gap_note, resume_gaps};
use runs::{groups_of, Drawn, Group};

pub(crate) mod gaps;
mod runs;
pub(crate) use runs::{drawn_runs, runs_grouped};
pub(crate) mod smooth;

/// One line of a chart: its points in the chart's x (NaN/Inf = gap).
pub(crate) struct ModelLine<'a> {
    pub points: Vec<Point>,
    pub style: Style,
    /// x ranges whose points were lost: no segment is drawn across one.
    pub breaks: &'a [(f64, f64)],
    /// Drawn without colour beside other runs: the run's letter, at the line's
    /// newest point and in the legend.
    pub mark: Option<char>,
}

/// A shaded area between two curves, beneath the lines.
pub(crate) struct ModelBand {
    pub lo: Vec<Point>,
    pub hi: Vec<Point>,
    pub style: Style,
}

/// How a chart writes its x values.
pub(crate) enum XLabels {
    /// Compact numbers: the series' own x.
    Compact,
    /// The time of day: the live monitor's sliding window.
    Clock,
    /// In the x the chart is mapped to (another metric, time, log x).
    Mapped(Mapped),
}

/// What one metric chart draws.
pub(crate) struct ChartModel<'a> {
    pub title: String,
    /// The top right of the border: the last value, or the crosshair's readout.
    pub corner: Option<String>,
    /// Bottom first (the last drawn wins a cell).
    pub lines: Vec<ModelLine<'a>>,
    pub bands: Vec<ModelBand>,
    /// The crosshair's x, in the chart's x.
    pub cursor: Option<f64>,
    pub x: (f64, f64),
    /// The y range of the lines and bands (log10 of the values on a log axis),
    /// before the axis rounds it to its ticks; None when no value is finite.
    pub y: Option<(f64, f64)>,
    pub log_y: bool,
    pub x_labels: XLabels,
    pub x_ticks: XTicks,
    pub guides: Guides,
    pub legend: Vec<(String, Style)>,
    /// Skipped x ranges, marked on the x axis, and the note naming them.
    pub gaps: Vec<(f64, f64)>,
    pub note: Option<String>,
    pub focused: bool,
}

/// The drawn series of a chart: per series its run's index in the drawn runs.
type Charted<'a> = Vec<(usize, &'a Series)>;

impl<'a> ChartModel<'a> {
    /// The chart of `key`, `width` cells wide (border included); None when no
    /// drawn run logged `key`.
    pub(crate) fn build(
        app: &'a App,
        key: &str,
        width: u16,
        focused: bool,
        theme: Theme,
    ) -> Option<Self> {
        // The main run's series, then those of the runs compared with it (colour i + 1;
        // in a workspace each run's own colour, the pinned run last, on top), if they
        // chart the key against the same x (a run that steps `val` by `epoch` does not
        // share an axis with one that steps it by `_step`).
        let drawn = drawn_runs(app);
        let (xname, all) = series_of(&drawn, key)?;
        let zoom = app.charts.zoom.get(key).copied();
        let (x0, x1) = zoom.unwrap_or_else(|| full_x(app, &all));
        let px = usize::from(width.saturating_sub(4)).max(1) * 2;
        // Another x or log x maps the points (None: as drawn).
        let runs: Vec<&Run> = all.iter().map(|&(i, _)| drawn[i].run).collect();
        let cross_x = app
            .charts
            .crosshair
            .filter(|c| c.synced || focused)
            .and_then(|c| Some((c.x, crosshair_owner(app, key, &runs)?)));
        let mapped = map_chart(app, (key, xname), &runs, zoom, px, cross_x);
        let x = mapped.as_ref().map_or((x0, x1), |m| m.x);
        let on_step = xname == "_step" && mapped.is_none();
        // The min–max band: in the series' own x only (a chart mapped to another x
        // is thinned there instead), not under a group's (`groups_of` groups when
        // every series has one).
        let grouped_runs = all.iter().all(|&(i, _)| drawn[i].group.is_some());
        let minmax = MinMax::of(
            (
                app.charts.band && !grouped_runs && mapped.is_none(),
                &app.charts.views,
            ),
            &all,
            x,
            px,
            |i| breaks(&drawn, i, on_step),
        );
        // A series with a band is drawn as its means: it needs no second walk.
        let pts = match mapped.as_ref() {
            Some(m) => m.pts.clone(),
            None => downsample(app, &all, (x, px), &minmax),
        };
        let title = title_of(app, key, xname, mapped.as_ref());
        let (cross, at) = crosshair_at(app, focused, &all, (mapped.as_ref(), x, px));
        let (log_y, below) = log_y_of(app, key, zoom);
        // Grouped (`G` in the workspace): per group its mean line and min–max band.
        let groups = groups_of(&drawn, &all, &pts, x, px);
        // A resumed run's segments are one run's series: its value at the
        // crosshair is the corner's as one run's is.
        let one_run = all.len() > 1
            && all
                .iter()
                .all(|&(i, _)| drawn[i].key.is_some() && drawn[i].key == drawn[all[0].0].key);
        let corner = corner_of(
            (cross, &at, one_run),
            (&all, groups.as_deref()),
            below,
            mapped.as_ref(),
            (width, &title),
        );
        let cursor = mapped.as_ref().map_or(cross.map(|c| c.x), |m| m.cursor);
        let grouped = groups.is_some();
        let smoothing = smoothing_of(
            app,
            (key, xname),
            &runs,
            (mapped.as_ref(), zoom),
            (x, px),
            grouped,
        );
        let title = smoothing.title(title);
        let legend = match groups.as_deref() {
            Some(g) => group_legend(g, cross.and(cursor).map(|c| (c, x, px)), theme),
            None => legend_of(app, &drawn, &all, cross.map(|_| &at[..]), theme),
        };
        let (gaps, note) = gaps_of(&drawn, &all, on_step, x);
        let note = unplaced_note(app, (&drawn, &all), key, xname, mapped.as_ref())
            .into_iter()
            .chain(note)
            .reduce(|a, b| format!("{a} · {b}"));
        // Without colour, several runs (or groups) are told apart by letters.
        let marked = !theme.color && !legend.is_empty();
        let (lines, bands) = match groups {
            Some(groups) => group_lines(groups, theme, marked),
            None => {
                let raw = series_lines(&drawn, &all, pts, (&minmax, on_step), (theme, marked));
                // Smoothing: raw lines faint under the smoothed.
                let bands = minmax.bands(|i| theme.series(drawn[i].color));
                (smoothing.lines(raw), owned_bands(bands))
            }
        };
        let (x_ticks, x_labels) = x_labels_of(app, mapped);
        Some(Self {
            y: y_of(&lines, &bands, log_y),
            title,
            corner,
            lines,
            bands,
            cursor,
            x,
            log_y,
            x_labels,
            x_ticks,
            guides: app.charts.grid.guides,
            legend,
            gaps,
            note,
            focused,
        })
    }

    /// An x value as the chart's labels write it.
    pub(crate) fn x_label(&self, v: f64) -> String {
        match &self.x_labels {
            XLabels::Compact => format::compact(v),
            XLabels::Clock => format::time_of_day(v.floor() as i64),
            XLabels::Mapped(m) => m.label(v),
        }
    }

    /// The widget's lines of `lines`, borrowed.
    fn widget_lines<'l>(lines: &'l [ModelLine<'_>]) -> Vec<Line<'l>> {
        lines
            .iter()
            .map(|l| Line {
                points: &l.points,
                style: l.style,
                breaks: l.breaks,
                mark: l.mark,
            })
            .collect()
    }

    /// The widget's bands of `bands`, borrowed.
    fn widget_bands(bands: &[ModelBand]) -> Vec<Band<'_>> {
        bands
            .iter()
            .map(|b| Band {
                lo: &b.lo,
                hi: &b.hi,
                style: b.style,
            })
            .collect()
    }

    /// The widget's description of the chart, its x values written by `fmt_x`.
    pub(crate) fn spec<'s>(&'s self, fmt_x: &'s dyn Fn(f64) -> String) -> ChartSpec<'s> {
        ChartSpec {
            title: &self.title,
            corner: self.corner.clone(),
            lines: Self::widget_lines(&self.lines),
            bands: Self::widget_bands(&self.bands),
            cursor: self.cursor,
            x: self.x,
            log_y: self.log_y,
            focused: self.focused,
            fmt_x,
            x_ticks: self.x_ticks,
            y_unit: Unit::Plain,
            guides: self.guides,
            legend: self.legend.clone(),
            legend_rows: 1,
            gaps: self.gaps.clone(),
            note: self.note.clone(),
        }
    }
}

/// The crosshair (on this chart when it is `focused`, on every chart when
/// synced; never live): its x, and each series' point nearest to x.
/// In another x (`mapped`) each series' point nearest to the crosshair there;
/// a series whose line does not reach x (within a dot column of the `px` over
/// `x`) has none.
fn crosshair_at(
    app: &App,
    focused: bool,
    all: &[(usize, &Series)],
    (mapped, x, px): (Option<&Mapped>, (f64, f64), usize),
) -> (Option<Crosshair>, Vec<Option<Point>>) {
    let cross = app
        .charts
        .crosshair
        .filter(|c| (c.synced || focused) && !app.is_host());
    let column = (x.1 - x.0) / px.max(1) as f64;
    let at: Vec<Option<Point>> = match (cross, mapped) {
        (Some(_), Some(m)) => m.at.clone(),
        (Some(c), None) => all
            .iter()
            .map(|(_, s)| {
                let reaches = s
                    .x_bounds()
                    .is_some_and(|(a, b)| (a - column..=b + column).contains(&c.x));
                s.nearest(c.x).filter(|_| reaches)
            })
            .collect(),
        (None, _) => Vec::new(),
    };
    (cross, at)
}

/// Which of `runs` (a chart's, in its order) the crosshair steps along: the
/// first of the main run and the compared ones with points of `key`, as
/// [`Crosshair`]'s keys take it; its x is that run's.
fn crosshair_owner(app: &App, key: &str, runs: &[&Run]) -> Option<usize> {
    let order = crate::ui::drawn_runs(&app.shown.run, &app.runs);
    let own = own_x(&order, key);
    let owner = order
        .into_iter()
        .find(|r| series_in(r, key, own).is_some_and(|s| !s.is_empty()))?;
    runs.iter().position(|r| std::ptr::eq(*r, owner))
}

/// The smoothing of `key`'s chart (over its own x `own`) of `runs` over `x` in
/// `px` dot columns: not of a group's mean (`grouped`). In another x (or log x,
/// `mapped`) the smoothed series is mapped as the raw ones are. A run whose
/// own x for `key` is not the chart's (runs that disagree, drawn by `_step`)
/// has its smoothed line over the other x: its raw line is drawn alone.
fn smoothing_of(
    app: &App,
    (key, own): (&str, &str),
    runs: &[&Run],
    (mapped, zoom): (Option<&Mapped>, Option<(f64, f64)>),
    (x, px): ((f64, f64), usize),
    grouped: bool,
) -> smooth::ChartSmoothing {
    let mixed = runs.iter().any(|r| r.x_axis_of(key) != own);
    let map_x = |run: &Run, s: &Series| match mapped {
        Some(m) => map_points(app, key, run, s, zoom, m, px),
        None => (run.x_axis_of(key) == own).then(|| {
            let mut out = Vec::with_capacity(px * 2 + 4);
            s.downsample(x.0, x.1, px, &mut out);
            out
        }),
    };
    smooth::of_chart(
        app,
        key,
        runs.iter().copied(),
        (x, px),
        (mapped.is_some() || mixed).then_some(&map_x as smooth::MapX<'_>),
        grouped,
    )
}

/// The legend's note on the drawn runs with `key` that the chart cannot place
/// on its x (`xname`, or the x it is `mapped` to): `2 runs not on x=epoch ·
/// x: change axis` (a resumed run's segments count once); None where every
/// run is placed.
fn unplaced_note(
    app: &App,
    (drawn, all): (&[Drawn<'_>], &[(usize, &Series)]),
    key: &str,
    xname: &str,
    mapped: Option<&Mapped>,
) -> Option<String> {
    let mut out: Vec<usize> = (drawn.iter().enumerate())
        .filter(|(i, d)| d.run.metrics.get(key).is_some() && !all.iter().any(|a| a.0 == *i))
        .map(|(i, _)| i)
        .collect();
    out.extend(
        mapped
            .iter()
            .flat_map(|m| m.unplaced.iter().map(|&n| all[n].0)),
    );
    let mut keys: Vec<Option<&str>> = out.iter().map(|&i| drawn[i].key).collect();
    keys.sort_unstable();
    let unkeyed = keys.iter().filter(|k| k.is_none()).count();
    keys.dedup();
    let n = keys.iter().filter(|k| k.is_some()).count() + unkeyed;
    if n == 0 {
        return None;
    }
    let x = mapped.and_then(|m| m.name.as_deref()).unwrap_or(xname);
    let runs = if n == 1 { "run" } else { "runs" };
    let mut note = format!("{n} {runs} not on x={}", sanitize(x));
    if let Some(k) = app
        .screen
        .keymap
        .hint_key(Mode::Normal, &[Action::CycleXAxis])
    {
        note.push_str(&format!(" · {k}: change axis"));
    }
    Some(note)
}

/// Where a chart's x ticks go and how its x values are written: the live
/// monitor's as times of day, a mapped chart's in its x, else as numbers.
fn x_labels_of(app: &App, mapped: Option<Mapped>) -> (XTicks, XLabels) {
    // A run's charts over `_step` (not mapped): whole steps only.
    let plain = if app.is_host() {
        XTicks::Round
    } else {
        XTicks::Whole
    };
    let ticks = mapped.as_ref().map_or(plain, |m| m.ticks);
    let labels = match mapped {
        _ if app.is_host() => XLabels::Clock,
        Some(m) => XLabels::Mapped(m),
        None => XLabels::Compact,
    };
    (ticks, labels)
}

/// Each series' line (its min–max band's means where it has one), in its run's
/// colour, not drawn across its run's breaks.
fn series_lines<'a>(
    drawn: &[Drawn<'a>],
    all: &[(usize, &Series)],
    pts: Vec<Vec<Point>>,
    (minmax, on_step): (&MinMax, bool),
    (theme, marked): (Theme, bool),
) -> Vec<ModelLine<'a>> {
    // A resumed run's segments are one run: its letter on the last one only.
    let last_of_run = |n: usize| {
        let key = drawn[all[n].0].key;
        key.is_none() || !all[n + 1..].iter().any(|&(j, _)| drawn[j].key == key)
    };
    all.iter()
        .zip(pts)
        .enumerate()
        .map(|(n, (&(i, _), p))| ModelLine {
            points: minmax.line(i).map_or(p, <[Point]>::to_vec),
            style: theme.series(drawn[i].color),
            breaks: breaks(drawn, i, on_step),
            mark: (marked && last_of_run(n)).then(|| letter_of(drawn, i)),
        })
        .collect()
}

/// The y range of `lines` and `bands` (log10 of the values when `log`), as the
/// chart widget finds it.
fn y_of(lines: &[ModelLine<'_>], bands: &[ModelBand], log: bool) -> Option<(f64, f64)> {
    let (lines, bands) = (
        ChartModel::widget_lines(lines),
        ChartModel::widget_bands(bands),
    );
    y_range(&lines, &bands, log, Unit::Plain)
}

/// The own x of `key`'s chart ([`own_x`]: the drawn runs' x for it where they
/// agree, else `_step`) and every drawn run's series of `key` over it.
fn series_of<'a>(drawn: &[Drawn<'a>], key: &str) -> Option<(&'a str, Charted<'a>)> {
    let runs: Vec<&'a Run> = drawn.iter().map(|d| d.run).collect();
    let xname = own_x(&runs, key);
    let all: Charted<'a> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| series_in(r, key, xname).map(|s| (i, s)))
        .collect();
    (!all.is_empty()).then_some((xname, all))
}

/// The x range of the series `all`, unzoomed; live, a sliding window that
/// follows the newest sample.
fn full_x(app: &App, all: &[(usize, &Series)]) -> (f64, f64) {
    let full = all
        .iter()
        .filter_map(|(_, s)| s.x_bounds())
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0.0, 0.0));
    match app.shown.subject {
        Subject::Host { window: w } => {
            // Until the window fills, the data spans the whole chart.
            let end = app.shown.run.last_time.unwrap_or(full.1);
            ((end - w).max(full.0.min(end)), end)
        }
        Subject::Run => full,
    }
}

/// Each series' points over `x`, downsampled to `px` dot columns; none for a
/// series drawn as its band's means.
fn downsample(
    app: &App,
    all: &[(usize, &Series)],
    (x, px): ((f64, f64), usize),
    minmax: &MinMax,
) -> Vec<Vec<Point>> {
    all.iter()
        .map(|&(i, s)| match minmax.line(i) {
            Some(_) => Vec::new(),
            None => app.charts.views.line(s, x, px),
        })
        .collect()
}

/// The chart's title: its key, the x it is drawn against (unless `_step`) and
/// its flags (log y, log x, zoomed).
fn title_of(app: &App, key: &str, xname: &str, mapped: Option<&Mapped>) -> String {
    let shown_x = mapped.and_then(|m| m.name.as_deref()).unwrap_or(xname);
    let log = app.charts.grid.scales.metric(key) == crate::ui::charts::grid::YScale::Log;
    let mut title = sanitize(key);
    if title.is_empty() {
        // A key logged as "" (or of control characters only): said, not blank.
        title = "\"\"".to_owned();
    }
    let mut flags = String::new();
    if log {
        flags.push_str(" log");
    }
    if mapped.is_some_and(|m| m.log) {
        flags.push_str(" logx");
    }
    if app.charts.zoom.contains_key(key) {
        flags.push_str(" zoom");
    }
    if flags.is_empty() && shown_x == "_step" {
        title
    } else if shown_x == "_step" {
        format!("{title} ·{flags}")
    } else {
        format!("{title} · x={}{flags}", sanitize(shown_x))
    }
}

/// An x range, first and last x.
type XRange = (f64, f64);

/// Whether `key`'s chart has a log y, and then the x range shown (`zoom`, else
/// all) in which its values ≤ 0 are counted ([`below_zero`]).
fn log_y_of(app: &App, key: &str, zoom: Option<XRange>) -> (bool, Option<XRange>) {
    if app.charts.grid.scales.metric(key) != crate::ui::charts::grid::YScale::Log {
        return (false, None);
    }
    (
        true,
        Some(zoom.unwrap_or((f64::NEG_INFINITY, f64::INFINITY))),
    )
}

/// `corner` with the points a log y cannot draw: the series' held points with a
/// value ≤ 0 in the x range `range`, counted as log x counts x ≤ 0 (`N y≤0`),
/// where the whole fits in `room` columns; where it does not, the count alone
/// (what the chart leaves out says more than the last value, which the axis
/// reads too), unless the corner is the crosshair's reading (`keep`), asked for.
/// The metric charts' and the system charts' (an idle GPU's 0 %).
pub(crate) fn below_zero(
    corner: Option<String>,
    series: &[(usize, &Series)],
    range: (f64, f64),
    (room, keep): (usize, bool),
) -> Option<String> {
    let below: usize = series.iter().map(|(_, s)| s.nonpositive_in(range)).sum();
    if below == 0 {
        return corner;
    }
    // A series past its point cap keeps each group's extremes: a group with a
    // value ≤ 0 keeps at least one, so the stored count is a floor.
    let floor = if series.iter().any(|(_, s)| s.compacted()) {
        "≥"
    } else {
        ""
    };
    let count = format!("{floor}{below} y≤0");
    let fits = |s: &str| s.chars().count() <= room;
    if let Some(c) = corner
        .as_deref()
        .filter(|c| fits(&format!("{c} · {count}")))
    {
        return Some(format!("{c} · {count}"));
    }
    if keep && corner.is_some() {
        return corner;
    }
    // Tighter, without its space (`10y≤0`).
    let tight = format!("{floor}{below}y≤0");
    [count, tight].into_iter().find(|s| fits(s)).or(corner)
}

/// The corner's text: the crosshair's x (and the one series' value `at` it, or
/// the one run's: `one_run`, a resumed run's segments), else
/// the first series' last value; of `groups`, the one group's last mean, and of
/// several none (at the crosshair the legend gives each group's mean); in a
/// mapped chart as the mapping writes it, in the room the title (of a chart
/// `width` wide) leaves; then, on a log y (`below`: the x range counted), the
/// points it cannot draw ([`below_zero`]).
fn corner_of(
    (cross, at, one_run): (Option<Crosshair>, &[Option<Point>], bool),
    (all, groups): (&[(usize, &Series)], Option<&[Group]>),
    below: Option<XRange>,
    mapped: Option<&Mapped>,
    (width, title): (u16, &str),
) -> Option<String> {
    let first = all.first()?.1;
    // Whether the crosshair's one value goes in the corner, and the last value.
    let (one, last) = match groups {
        Some([g]) => (
            false,
            g.stats
                .mean
                .iter()
                .rev()
                .find(|p| p.1.is_finite())
                .map(|p| p.1),
        ),
        Some(_) => (false, None),
        None => (all.len() == 1 || one_run, first.last().map(|p| p.1)),
    };
    // The value at the crosshair: of the one series, or of the one run's first
    // segment (newest first) that has one there.
    let at_one = at.iter().flatten().next().map(|p| p.1);
    let room = usize::from(width.saturating_sub(6))
        .saturating_sub(crate::ui::widget::fit::width(title).into());
    let c = if let Some(m) = mapped {
        m.corner(cross.is_some(), one.then_some(at_one), last, room)
    } else {
        match cross {
            Some(c) if one => Some(format!(
                "x={} · {}",
                format::exact(c.x),
                at_one.map_or_else(|| "–".to_owned(), format::value)
            )),
            Some(c) => Some(format!("x={}", format::exact(c.x))),
            None => last.map(format::value),
        }
    };
    match below {
        Some(range) => below_zero(c, all, range, (room, cross.is_some())),
        None => c,
    }
}

/// The legend of a grouped chart: each group and its number of runs, and with
/// the crosshair (at `cursor`, in the chart's x over `x` in `px` dot columns) its
/// mean there, as [`legend_of`] gives each run's value.
fn group_legend(
    groups: &[Group],
    cursor: Option<(f64, (f64, f64), usize)>,
    theme: Theme,
) -> Vec<(String, Style)> {
    groups
        .iter()
        .enumerate()
        .map(|(n, g)| {
            let mut label = format!("{} ({})", g.label, g.runs);
            if let Some((c, x, px)) = cursor {
                let column = (x.1 - x.0) / px.max(1) as f64;
                let v = mean_at(&g.stats.mean, c, column);
                label.push_str(&format!(
                    " {}",
                    v.map_or_else(|| "–".to_owned(), format::value)
                ));
            }
            (
                marked_label(label, mark_of(n), theme),
                theme.series(g.color),
            )
        })
        .collect()
}

/// A group's mean (its line `mean`, in x order) nearest `x`, where the line
/// reaches within a dot `column` of it; NaN at a gap, as a run's gap reads.
fn mean_at(mean: &[Point], x: f64, column: f64) -> Option<f64> {
    let (first, last) = (mean.first()?.0, mean.last()?.0);
    if !(first - column..=last + column).contains(&x) {
        return None;
    }
    let i = mean.partition_point(|p| p.0 < x);
    let after = mean.get(i);
    let before = i.checked_sub(1).and_then(|j| mean.get(j));
    let p = match (before, after) {
        (Some(b), Some(a)) if x - b.0 <= a.0 - x => b,
        (_, Some(a)) => a,
        (Some(b), None) => b,
        (None, None) => return None,
    };
    Some(p.1)
}

/// The legend: each run (with its value at the crosshair, `at`) when the chart
/// draws several; else none.
fn legend_of(
    app: &App,
    drawn: &[Drawn<'_>],
    all: &[(usize, &Series)],
    at: Option<&[Option<Point>]>,
    theme: Theme,
) -> Vec<(String, Style)> {
    if app.runs.workspace.is_none() && app.runs.compare.is_empty() {
        return Vec::new();
    }
    // One entry per run (the segments of a resumed run share one).
    let mut legend: Vec<(String, Style)> = Vec::new();
    let mut keys: Vec<Option<&str>> = Vec::new();
    let mut pinned_at = None;
    for &(i, _) in all {
        let d = &drawn[i];
        if d.key.is_some() && keys.contains(&d.key) {
            continue;
        }
        keys.push(d.key);
        let mut label = if d.pinned {
            pinned_at = Some(legend.len());
            format!("▲{}", d.label)
        } else {
            d.label.clone()
        };
        if let Some(at) = at {
            let v = all
                .iter()
                .position(|&(j, _)| j == i)
                .and_then(|k| at.get(k).copied().flatten());
            label.push_str(&format!(
                " {}",
                v.map_or_else(|| "–".to_owned(), |p| format::value(p.1))
            ));
        }
        let letter = letter_of(drawn, i);
        legend.push((marked_label(label, letter, theme), theme.series(d.color)));
    }
    // The pinned run is drawn last (on top) but named first: a long legend is
    // cut at its end (`+6`), and the run the user pinned must stay in view.
    if let Some(p) = pinned_at {
        let e = legend.remove(p);
        legend.insert(0, e);
    }
    // One run drawn in all: no legend needed. Several: every chart says whose
    // lines it draws, also when only one of them logged its metric.
    if runs_drawn(drawn) < 2 {
        legend.clear();
    }
    legend
}

/// A legend entry's label: without colour, after its run's letter (the one
/// drawn at its line's newest point).
fn marked_label(label: String, letter: char, theme: Theme) -> String {
    if theme.color {
        label
    } else {
        format!("{letter} {label}")
    }
}

/// The letter of drawn run `i`: `A` for the first run drawn (the main one), `B`
/// for the next, … the same in every chart (a resumed run's segments are one
/// run).
fn letter_of(drawn: &[Drawn<'_>], i: usize) -> char {
    let mut runs: Vec<Option<&str>> = Vec::new();
    for d in &drawn[..=i.min(drawn.len().saturating_sub(1))] {
        if d.key.is_none() || !runs.contains(&d.key) {
            runs.push(d.key);
        }
    }
    let key = drawn.get(i).and_then(|d| d.key);
    let n = match key {
        Some(_) => runs.iter().position(|k| *k == key),
        None => None,
    };
    mark_of(n.unwrap_or(runs.len().saturating_sub(1)))
}

/// How many runs are drawn (a resumed run's segments count once).
fn runs_drawn(drawn: &[Drawn<'_>]) -> usize {
    let mut keys: Vec<Option<&str>> = drawn.iter().map(|d| d.key).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.len()
        + drawn
            .iter()
            .filter(|d| d.key.is_none())
            .count()
            .saturating_sub(1)
}

/// The steps lost to damage in drawn run `i` (its line is not drawn across
/// them), on a chart over `_step` in its own x; none on another.
fn breaks<'a>(drawn: &[Drawn<'a>], i: usize, on_step: bool) -> &'a [(f64, f64)] {
    if on_step {
        drawn[i].run.breaks.spans()
    } else {
        &[]
    }
}

/// Steps lost to damage (each run's own breaks: its line is not drawn across
/// them) and steps between a resumed run's segments (drawn as separate lines
/// already): both marked on the x axis, and the note on the first inside `x`.
/// Breaks are `_step` ranges.
fn gaps_of(
    drawn: &[Drawn<'_>],
    all: &[(usize, &Series)],
    on_step: bool,
    x: (f64, f64),
) -> (Vec<(f64, f64)>, Option<String>) {
    let lost: Vec<(f64, f64)> = all
        .iter()
        .flat_map(|&(i, _)| breaks(drawn, i, on_step))
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
    let note = gap_note(&lost, &missing, x);
    (lost.iter().chain(&missing).copied().collect(), note)
}

/// Each group's mean line, and its min–max band faint beneath.
fn group_lines<'a>(
    groups: Vec<Group>,
    theme: Theme,
    marked: bool,
) -> (Vec<ModelLine<'a>>, Vec<ModelBand>) {
    let mut lines = Vec::with_capacity(groups.len());
    let mut bands = Vec::with_capacity(groups.len());
    for (n, g) in groups.into_iter().enumerate() {
        let style = theme.series(g.color);
        lines.push(ModelLine {
            points: g.stats.mean,
            style,
            breaks: &[],
            mark: marked.then(|| mark_of(n)),
        });
        bands.push(ModelBand {
            lo: g.stats.lo,
            hi: g.stats.hi,
            style: style.add_modifier(Modifier::DIM),
        });
    }
    (lines, bands)
}

/// The widget's bands, owned.
fn owned_bands(bands: Vec<Band<'_>>) -> Vec<ModelBand> {
    bands
        .into_iter()
        .map(|b| ModelBand {
            lo: b.lo.to_vec(),
            hi: b.hi.to_vec(),
            style: b.style,
        })
        .collect()
}

#[cfg(test)]
mod tests;
