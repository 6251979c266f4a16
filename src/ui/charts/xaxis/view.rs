//! A metric chart against another x: relative time, wall time, a
//! metric's value, and log x. Each run's held points are mapped through that run's
//! time line (or the metric's series), interpolated, then thinned to the chart's
//! columns in the chosen x, so that log x gives the first decade as many columns
//! as the last (rather than thinning in linear x first and starving the start).
//! The work is bounded by the series cap, never by the run's length.
//!
//! Labels: relative time as `0s 30s 1m30s 1h02m` (tenths and below for a run of a
//! few seconds), wall time as the UTC `17:48:29` (with the date, `12-01 17:48`,
//! where the range spans days).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::store::series::{Point, Series};
use crate::store::timeline::Table;
use crate::store::Run;
use crate::text::sanitize;
use crate::ui::charts::xaxis::{series_in, XAxis};
use crate::ui::theme::Theme;
use crate::ui::widget::chart::XTicks;
use crate::ui::widget::fit::{fit, put};
use crate::ui::widget::format;
use crate::ui::App;

/// A chart's points in its chosen x.
pub(crate) struct Mapped {
    /// The x range drawn (log10 on a log axis).
    pub x: (f64, f64),
    /// Per drawn series, its thinned points in the chosen x.
    pub pts: Vec<Vec<Point>>,
    /// Points with no x there (before the x metric's first value, or x ≤ 0 on a
    /// log axis): not drawn, counted in the corner.
    pub dropped: usize,
    /// A series is past its point cap (its groups keep their extremes): `dropped`
    /// is a floor of the values not drawn (`≥N x≤0`).
    pub floor: bool,
    pub log: bool,
    pub ticks: XTicks,
    /// The title's `x=` text, when not the default's.
    pub name: Option<String>,
    /// The crosshair's x in the chosen x, where it maps.
    pub cursor: Option<f64>,
    /// Per drawn series, its own point nearest to the cursor in the chosen x
    /// (None where it has none within a dot column of its line).
    pub at: Vec<Option<Point>>,
    /// Drawn runs with the chart's metric that have no x here (no such x
    /// metric, no times): in the legend, with a note, not left out unsaid.
    /// (Their indices in the chart's runs.)
    pub unplaced: Vec<usize>,
    /// The chart's own x (`own_x`), which its series, zoom and crosshair are in.
    own: String,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Number,
    Relative,
    Wall,
}

impl Mapped {
    /// An x value (log10 of it on a log axis) as its label.
    pub(crate) fn label(&self, v: f64) -> String {
        let v = if self.log { 10f64.powf(v) } else { v };
        let (a, b) = if self.log {
            (10f64.powf(self.x.0), 10f64.powf(self.x.1))
        } else {
            self.x
        };
        match self.kind {
            Kind::Number => format::compact(v),
            Kind::Relative => rel_time(v, b - a),
            Kind::Wall => wall_time(v, (a, b)),
        }
    }
}

impl Mapped {
    /// The crosshair's x as the corner reads it, so that each step moves it: a
    /// number (a step) in full; a time to a thousandth of the axis's span where
    /// its labels are whole seconds (relative time in seconds past the minute
    /// too); else as the axis labels it.
    fn cursor_label(&self, v: f64) -> String {
        let span = self.x.1 - self.x.0;
        let fine = span / 1000.0;
        match self.kind {
            Kind::Number if self.log => format::exact(round_exp10(v)),
            Kind::Number => format::exact(v),
            _ if self.log => self.label(v),
            Kind::Relative => rel_time_fine(v, if span < 10.0 { span } else { fine }),
            Kind::Wall if span < 10.0 => self.label(v),
            Kind::Wall => wall_time(v, (v, v + fine)),
        }
    }
}

/// 10^`v`, a whole number where it is one but for the float error of log10.
fn round_exp10(v: f64) -> f64 {
    let x = 10f64.powf(v);
    let r = x.round();
    if (x - r).abs() <= 1e-9 * r.abs().max(1.0) {
        r
    } else {
        x
    }
}

/// Step → chosen x for one run.
enum Map {
    Same,
    Table(Table),
    Shifted(Table, f64),
}

impl Map {
    fn at(&self, step: f64) -> Option<f64> {
        match self {
            Map::Same => Some(step),
            Map::Table(t) => t.at(step),
            Map::Shifted(t, by) => t.at(step).map(|v| v - by),
        }
    }
}

/// The series of `key` by `_step` (a metric with a step metric keeps one beside).
fn by_step<'a>(run: &'a Run, key: &str) -> Option<&'a Series> {
    if run.x_axis_of(key) == "_step" {
        run.metrics.get(key)
    } else {
        run.timeline.by_step.get(key)
    }
}

/// The `_step` of `run`'s row where its step metric `own` is nearest `v` (a
/// crosshair's x in a chart over `own`). Over the series' held points (at most
/// `--max-points`), for the one chart the crosshair is on.
fn step_at_own(run: &Run, own: &str, v: f64) -> Option<f64> {
    by_step(run, own)?
        .points()
        .iter()
        .filter(|p| p.1.is_finite())
        .min_by(|a, b| (a.1 - v).abs().total_cmp(&(b.1 - v).abs()))
        .map(|p| p.0)
}

/// Whether a point of one run's series on a chart reads an x in the x picked for
/// the chart, as the crosshair's corner reads it (`x=` a value, not `–`): a row
/// of the run before or after the picked x metric's first and last, or a point on a
/// log axis at x ≤ 0, does not. Made per key press for the chart the crosshair
/// steps on (the picked x's points copied once, at most `--max-points`).
pub(crate) struct Placer<'r> {
    run: &'r Run,
    own: &'r str,
    x: XAxis,
    log: bool,
    map: Option<Map>,
}

impl<'r> Placer<'r> {
    /// For `run`'s series of `key` on a chart over `own`; None where the chart is
    /// in its own, linear x (every point is placed).
    pub(crate) fn new(
        xaxis: &crate::ui::charts::xaxis::XAxisState,
        run: &'r Run,
        key: &str,
        own: &'r str,
    ) -> Option<Self> {
        let x = xaxis.of(key).clone();
        let log = xaxis.log_x(key);
        if x == XAxis::Default && !log {
            return None;
        }
        let map = map_of(run, &x);
        Some(Self {
            run,
            own,
            x,
            log,
            map,
        })
    }

    /// Whether no point of the run reads an x (it has no such x metric, no time).
    pub(crate) fn places_none(&self) -> bool {
        self.map.is_none()
    }

    /// Whether the point at `c` (the chart's own x) reads an x.
    pub(crate) fn placed(&self, c: f64) -> bool {
        self.x_at(c).is_some()
    }

    /// Where the point at `c` (the chart's own x) stands on the axis drawn (log10
    /// of its x on a log axis); None where it reads no x.
    pub(crate) fn x_at(&self, c: f64) -> Option<f64> {
        let map = self.map.as_ref()?;
        let at = if self.x == XAxis::Default || self.own == "_step" {
            map.at(c)
        } else if matches!(&self.x, XAxis::Metric(m) if m == self.own) {
            Some(c)
        } else {
            step_at_own(self.run, self.own, c).and_then(|s| map.at(s))
        };
        at.and_then(|v| axis_value(v, self.log))
    }
}

/// How `run`'s steps map to `x` (None: they do not: no time, no such metric).
#[allow(
    clippy::if_not_else,
    reason = "the run's own runtime first, the fallback after"
)]
fn map_of(run: &Run, x: &XAxis) -> Option<Map> {
    Some(match x {
        XAxis::Default => Map::Same,
        XAxis::Wall => Map::Table(Table::of(&run.timeline.wall)),
        XAxis::Relative => {
            if !run.timeline.runtime.is_empty() {
                Map::Table(Table::of(&run.timeline.runtime))
            } else {
                let wall = Table::of(&run.timeline.wall);
                let start = run
                    .info
                    .start_time
                    .map(|(s, n)| s as f64 + f64::from(n) * 1e-9)
                    .or_else(|| wall.first_y())?;
                Map::Shifted(wall, start)
            }
        }
        XAxis::Metric(m) => Map::Table(Table::of(by_step(run, m)?)),
    })
}

/// `key`'s chart in the x the app gives it, or None where that is the default,
/// linear x (the chart draws as it always has). `own`: the chart's own x
/// (`own_x`); `runs`: the drawn runs' (in the chart's order); `zoom`: the
/// chart's zoom, in its own x; `cross`: the crosshair's x, in the same.
pub(crate) fn map_chart(
    app: &App,
    (key, own): (&str, &str),
    runs: &[&Run],
    zoom: Option<(f64, f64)>,
    px: usize,
    cross: Option<(f64, usize)>,
) -> Option<Mapped> {
    let x = app.charts.xaxis.of(key);
    let log = app.charts.xaxis.log_x(key);
    if *x == XAxis::Default && !log || app.is_host() {
        return None;
    }
    let mut dropped = 0;
    let mut floor = false;
    let mut mapped: Vec<Vec<Point>> = Vec::with_capacity(runs.len());
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut cursor = None;
    let mut unplaced = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let src = match x {
            XAxis::Default => series_in(run, key, own),
            _ => by_step(run, key),
        };
        let map = map_of(run, x);
        let mut out = Vec::new();
        if src.is_none() || map.is_none() {
            unplaced.push(i);
        }
        if let (Some(src), Some(map)) = (src, &map) {
            floor |= src.compacted();
            let tail = src
                .last()
                .filter(|l| src.points().last().is_none_or(|p| p.0 < l.0));
            for &(s, y) in src.points().iter().chain(tail.iter()) {
                if zoom.is_some_and(|(a, b)| s < a || s > b) {
                    continue;
                }
                match map.at(s).and_then(|v| axis_value(v, log)) {
                    Some(v) => {
                        if y.is_finite() {
                            lo = lo.min(v);
                            hi = hi.max(v);
                        }
                        out.push((v, y));
                    }
                    None => dropped += 1,
                }
            }
            // The crosshair stands at a point of the series it steps along (`owner`),
            // in that run's own x: a step wherever the chart's series are over
            // `_step`, mapped by that run's steps, not another's.
            // A chart over a step metric has its crosshair in that metric's
            // values: the same x where that metric was picked, else its row's
            // step, mapped.
            if let Some((c, owner)) = cross {
                if i == owner {
                    let at = if *x == XAxis::Default || own == "_step" {
                        map.at(c)
                    } else if matches!(x, XAxis::Metric(m) if m == own) {
                        Some(c)
                    } else {
                        step_at_own(run, own, c).and_then(|s| map.at(s))
                    };
                    cursor = at.and_then(|v| axis_value(v, log));
                }
            }
        }
        mapped.push(out);
    }
    let range = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    let column = (range.1 - range.0) / px.max(1) as f64;
    let at = mapped
        .iter()
        .map(|m| cursor.and_then(|c| nearest_near(m, c, column)))
        .collect();
    let pts = mapped.iter().map(|m| thin(m, range, px)).collect();
    let kind = match x {
        XAxis::Relative => Kind::Relative,
        XAxis::Wall => Kind::Wall,
        XAxis::Default | XAxis::Metric(_) => Kind::Number,
    };
    let ticks = match kind {
        _ if log => XTicks::Log10,
        Kind::Relative | Kind::Wall => XTicks::Seconds,
        Kind::Number => XTicks::Round,
    };
    Some(Mapped {
        x: range,
        pts,
        dropped,
        floor,
        log,
        ticks,
        name: x.label().map(sanitize),
        cursor,
        at,
        unplaced,
        own: own.to_owned(),
        kind,
    })
}

/// The point of `pts` nearest to `x` (a NaN one reads as the gap it is), where
/// `x` is within `column` of the points' x range (a run whose line does not
/// reach `x` has no value there).
pub(crate) fn nearest_near(pts: &[Point], x: f64, column: f64) -> Option<Point> {
    let placed = || pts.iter().filter(|p| p.0.is_finite());
    let lo = placed().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = placed().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !(lo - column..=hi + column).contains(&x) {
        return None;
    }
    placed()
        .min_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs()))
        .copied()
}

/// `src`, a series of `key` in the series' own x (its smoothed line), in the x
/// of the chart `m` was mapped for, thinned as its series are; None where it does
/// not map (a chart over a step metric drawn in another x: the smoothed series
/// is over the step metric, which has no step to map).
pub(crate) fn map_points(
    app: &App,
    key: &str,
    run: &Run,
    src: &Series,
    zoom: Option<(f64, f64)>,
    m: &Mapped,
    px: usize,
) -> Option<Vec<Point>> {
    // The smoothed series is over the run's own x for `key`: drawn only where
    // that is the chart's, and mapped only from `_step`.
    let x = app.charts.xaxis.of(key);
    if run.x_axis_of(key) != m.own || *x != XAxis::Default && m.own != "_step" {
        return None;
    }
    let map = map_of(run, x)?;
    let tail = src
        .last()
        .filter(|l| src.points().last().is_none_or(|p| p.0 < l.0));
    let out: Vec<Point> = src
        .points()
        .iter()
        .chain(tail.iter())
        .filter(|(s, _)| !zoom.is_some_and(|(a, b)| *s < a || *s > b))
        .filter_map(|&(s, y)| Some((axis_value(map.at(s)?, m.log)?, y)))
        .collect();
    Some(thin(&out, m.x, px))
}

impl Mapped {
    /// The corner's text: with the crosshair, `x=` in the chosen unit (and the one
    /// series' value `y`); else the `last` value; and the points not drawn, where
    /// the whole fits in `room` columns (the title keeps the rest).
    pub(crate) fn corner(
        &self,
        crossed: bool,
        y: Option<Option<f64>>,
        last: Option<f64>,
        room: usize,
    ) -> Option<String> {
        let mut c = if crossed {
            match (self.cursor, y) {
                // The crosshair's row has no x here (a synced crosshair on a row
                // before or after the picked metric's): said, not `x=– · –`.
                (None, _) => "no x here".to_owned(),
                (Some(v), Some(y)) => format!(
                    "x={} · {}",
                    self.cursor_label(v),
                    y.map_or_else(|| "–".to_owned(), format::value)
                ),
                (Some(v), None) => format!("x={}", self.cursor_label(v)),
            }
        } else {
            last.map(format::value).unwrap_or_default()
        };
        if self.dropped > 0 {
            let why = if self.log { "x≤0" } else { "no x" };
            let sep = if c.is_empty() { "" } else { " · " };
            let at_least = if self.floor { "≥" } else { "" };
            let more = format!("{c}{sep}{at_least}{} {why}", self.dropped);
            if more.chars().count() <= room {
                c = more;
            }
        }
        (!c.is_empty()).then_some(c)
    }
}

/// `v` on the axis: log10 of it on a log axis (None for v ≤ 0 there).
fn axis_value(v: f64, log: bool) -> Option<f64> {
    if !v.is_finite() {
        return None;
    }
    if log {
        (v > 0.0).then(|| v.log10())
    } else {
        Some(v)
    }
}

/// Points (in logged order) thinned to about two per column of `x` over `width`
/// columns: each run of consecutive points in one column gives its min and max (in
/// logged order); NaN points are kept as gap markers. For an x that grows with the
/// steps that is each column's min and max; for one that goes back and forth (an
/// `epoch` logged out of order) the line still goes point to point in logged order,
/// as W&B draws it. At most as many points as given.
pub(crate) fn thin(points: &[Point], x: (f64, f64), width: usize) -> Vec<Point> {
    let mut out = Vec::with_capacity(points.len().min(width * 2 + 4));
    let scale = if x.1 > x.0 {
        width as f64 / (x.1 - x.0)
    } else {
        0.0
    };
    // (column, lo, hi, lo first)
    let mut cur: Option<(i64, Point, Point, bool)> = None;
    let flush = |out: &mut Vec<Point>, c: Option<(i64, Point, Point, bool)>| {
        if let Some((_, lo, hi, lo_first)) = c {
            let (a, b) = if lo_first { (lo, hi) } else { (hi, lo) };
            out.push(a);
            if b != a {
                out.push(b);
            }
        }
    };
    for &p in points {
        if p.1.is_nan() {
            flush(&mut out, cur.take());
            out.push(p);
            continue;
        }
        let col = ((p.0 - x.0) * scale).floor() as i64;
        match &mut cur {
            Some((c, lo, hi, lo_first)) if *c == col => {
                if p.1 < lo.1 {
                    *lo = p;
                    *lo_first = false;
                }
                if p.1 > hi.1 {
                    *hi = p;
                    *lo_first = true;
                }
            }
            _ => {
                flush(&mut out, cur.take());
                cur = Some((col, p, p, true));
            }
        }
    }
    flush(&mut out, cur);
    out
}

/// Seconds since the start as `0s`, `30s`, `1m30s`, `1h02m`, `2d03h`; where the
/// whole axis spans `span` seconds under ten, with the decimals that tell its ticks
/// apart (`0.385s`).
pub(crate) fn rel_time(secs: f64, span: f64) -> String {
    if !secs.is_finite() {
        return "?".into();
    }
    if secs.abs() >= 1e11 {
        return format::compact(secs);
    }
    let sign = if secs < 0.0 { "-" } else { "" };
    let a = secs.abs();
    if span < 10.0 && a < 60.0 {
        let d = decimals(span);
        let t = format!("{a:.d$}");
        let t = if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            t
        };
        return format!("{sign}{t}s");
    }
    let s = a.round() as u64;
    let body = match s {
        0..=59 => format!("{s}s"),
        60..=3599 if s % 60 == 0 => format!("{}m", s / 60),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        3600..=86_399 if s % 3600 / 60 == 0 => format!("{}h", s / 3600),
        3600..=86_399 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ if s % 86_400 / 3600 == 0 => format!("{}d", s / 86_400),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    };
    format!("{sign}{body}")
}

/// Seconds since the start to the decimals that tell apart values `res`
/// seconds apart (as [`rel_time`] writes them under a minute), past a minute
/// with every unit down to the second: `5m01.5s`, `5m00s`, `1h02m03s`.
pub(crate) fn rel_time_fine(secs: f64, res: f64) -> String {
    if !secs.is_finite() || secs.abs() >= 1e11 {
        return rel_time(secs, res);
    }
    let d = decimals(res);
    let p = 10u64.pow(u32::try_from(d).unwrap_or(0));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let units = (secs.abs() * p as f64).round() as u64;
    let (whole, frac) = (units / p, units % p);
    let sign = if secs < 0.0 && units > 0 { "-" } else { "" };
    let frac = if frac == 0 {
        String::new()
    } else {
        let f = format!(".{frac:0d$}");
        f.trim_end_matches('0').to_owned()
    };
    let s = whole % 60;
    let body = match whole {
        0..=59 => format!("{s}{frac}s"),
        60..=3599 => format!("{}m{s:02}{frac}s", whole / 60),
        3600..=86_399 => format!("{}h{:02}m{s:02}{frac}s", whole / 3600, whole % 3600 / 60),
        _ => format!(
            "{}d{:02}h{:02}m{s:02}{frac}s",
            whole / 86_400,
            whole % 86_400 / 3600,
            whole % 3600 / 60
        ),
    };
    format!("{sign}{body}")
}

/// Decimals of seconds that tell apart ticks of an axis `span` seconds wide.
fn decimals(span: f64) -> usize {
    if !(span.is_finite() && span > 0.0) {
        return 0;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let d = (-(span / 10.0).log10() - 0.01).ceil().clamp(0.0, 4.0) as usize;
    d
}

/// A Unix time as the UTC `17:48:29`; `12-01 17:48` where `range` spans days, and
/// with fractions of a second where it spans under ten seconds.
pub(crate) fn wall_time(t: f64, range: (f64, f64)) -> String {
    if !t.is_finite() || t.abs() >= 1e12 {
        return format::compact(t);
    }
    let day = |v: f64| (v / 86_400.0).floor();
    let secs = t.floor() as i64;
    if day(range.0) != day(range.1) {
        let (m, d) = month_day(secs.div_euclid(86_400));
        let hm = format::time_of_day(secs);
        return format!("{m:02}-{d:02} {}", &hm[..5]);
    }
    let span = range.1 - range.0;
    if span < 10.0 {
        // Truncated to the decimals shown, as a clock is.
        let d = decimals(span).max(1);
        let p = 10i64.pow(u32::try_from(d).unwrap_or(1));
        let units = (t * p as f64).floor() as i64;
        let (s, f) = (units.div_euclid(p), units.rem_euclid(p));
        return format!("{}.{f:0d$}", format::time_of_day(s));
    }
    format::time_of_day(t.round() as i64)
}

/// (month, day) of a day number since 1970-01-01 (the proleptic Gregorian
/// calendar; Howard Hinnant's `civil_from_days`).
fn month_day(days: i64) -> (i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (m, d)
}

/// The metric picker over the focused chart `area`: the filter typed, then the
/// matching metrics with the highlighted one marked.
pub(crate) fn render_picker(buf: &mut Buffer, area: Rect, app: &App, key: &str, theme: Theme) {
    let Some(p) = app.overlay.picker().filter(|p| p.key == key) else {
        return;
    };
    let w = area.width.saturating_sub(4).min(40);
    let matches = p.matches();
    let rows = u16::try_from(matches.len().max(1) + 1).unwrap_or(u16::MAX);
    let h = rows.saturating_add(2).min(area.height.saturating_sub(2));
    if w < 12 || h < 4 {
        return;
    }
    let r = Rect::new(area.x + 2, area.y + 1, w, h);
    let inner = crate::ui::overlay::open(buf, r, " x axis: metric ", theme);
    let iw = usize::from(inner.width);
    put(
        buf,
        inner.x,
        inner.y,
        &fit(&format!("> {}", sanitize(&p.filter)), iw),
        inner.width,
        theme.text(),
    );
    let list_rows = usize::from(inner.height.saturating_sub(1));
    if matches.is_empty() {
        put(
            buf,
            inner.x,
            inner.y + 1,
            "no metric matches",
            inner.width,
            theme.dim(),
        );
    }
    let sel = p.sel.min(matches.len().saturating_sub(1));
    let first = (sel + 1).saturating_sub(list_rows);
    for (row, (i, m)) in matches
        .iter()
        .enumerate()
        .skip(first)
        .take(list_rows)
        .enumerate()
    {
        let mark = if i == sel { "▶ " } else { "  " };
        let y = inner.y + 1 + u16::try_from(row).unwrap_or(0);
        let style = if i == sel {
            theme.heading()
        } else {
            theme.text()
        };
        put(
            buf,
            inner.x,
            y,
            &fit(&format!("{mark}{}", sanitize(m)), iw),
            inner.width,
            style,
        );
    }
    crate::ui::overlay::hint(buf, r, " enter pick · esc default ", theme);
}

#[cfg(test)]
mod tests;
