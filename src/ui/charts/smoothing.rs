//! Smoothing of the metric charts: each chart's kind and parameter
//! (`e` cycles the focused chart's kind, `+`/`-` step its parameter, `E` smooths
//! every chart or none), and the smoothed series themselves.
//!
//! A smoothed series is always computed from every point the run logged, never
//! from the store's capped points nor from the points a chart draws: a series
//! that still holds every point sends them along, any other has the runtime read
//! its file's full history again (`Cmd::Smooth`, answered by `Msg::Smoothed`).
//! The answers are cached by (run file, metric, smoothing); a series that grows
//! (a followed run) is smoothed again at most about once a second (less often
//! when its last smoothing took long), and only while its chart is on screen.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use ratatui::layout::Rect;

use crate::msg::{SmoothJob, Smoothed};
use crate::store::series::Series;
use crate::store::smooth::Smoothing;
use crate::store::Run;
use crate::ui::action::Action;
use crate::ui::charts::Charts;
use crate::ui::panels::Panels;
use crate::ui::source::Shown;
use crate::ui::workspace::runs::Compared;
use crate::ui::{Asks, Cmd, Effect, Subject};

/// Each kind's parameter when `e` turns it on: W&B's default smoothing (TWEMA
/// 0.6), TensorBoard's common EMA weight, a 10-point average, σ of 5 x units.
pub const DEFAULT_TWEMA: f64 = 0.6;
pub const DEFAULT_EMA: f64 = 0.6;
pub const DEFAULT_AVG: usize = 10;
pub const DEFAULT_GAUSS: f64 = 5.0;

/// The values `+`/`-` step through: TWEMA's and EMA's weight, the running
/// average's points, the Gaussian's σ (x units). The ends clamp.
const WEIGHTS: [f64; 11] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99];
const POINTS: [usize; 15] = [
    2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10_000,
];
const SIGMAS: [f64; 17] = [
    0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0, 200.0, 300.0, 500.0, 1000.0, 2000.0,
    5000.0, 10_000.0,
];

/// Most smoothed series kept (each at most a series' point cap): the least
/// recently drawn go first, but never one on screen (see `SmoothState::evict`).
const MAX_ENTRIES: usize = 64;
/// Fewest points a smoothed series is kept with when more than [`MAX_ENTRIES`]
/// are on screen and share their points (each chart is then narrow).
const MIN_SHARE: usize = 256;
/// A job unanswered this long (seconds) is asked again.
const LOST_AFTER: f64 = 300.0;

/// `e`: the kind after `s`, at its default parameter (none after Gaussian).
#[must_use]
pub fn next_kind(s: Smoothing) -> Smoothing {
    match s {
        Smoothing::None => Smoothing::Twema(DEFAULT_TWEMA),
        Smoothing::Twema(_) => Smoothing::Ema(DEFAULT_EMA),
        Smoothing::Ema(_) => Smoothing::RunningAverage(DEFAULT_AVG),
        Smoothing::RunningAverage(_) => Smoothing::Gaussian(DEFAULT_GAUSS),
        Smoothing::Gaussian(_) => Smoothing::None,
    }
}

/// The ladder value after (`up`) or before `v`, staying at the ends.
fn step_f(ladder: &[f64], v: f64, up: bool) -> f64 {
    let next = if up {
        ladder.iter().copied().find(|&l| l > v)
    } else {
        ladder.iter().rev().copied().find(|&l| l < v)
    };
    next.unwrap_or(v)
}

/// `+` (`up`) or `-`: `s` with its parameter one step along its ladder (a value
/// between two steps, from the settings file, goes to the next one).
#[must_use]
pub fn step_param(s: Smoothing, up: bool) -> Smoothing {
    match s {
        Smoothing::None => Smoothing::None,
        Smoothing::Twema(p) => Smoothing::Twema(step_f(&WEIGHTS, p, up)),
        Smoothing::Ema(w) => Smoothing::Ema(step_f(&WEIGHTS, w, up)),
        Smoothing::RunningAverage(n) => {
            let next = if up {
                POINTS.iter().copied().find(|&l| l > n)
            } else {
                POINTS.iter().rev().copied().find(|&l| l < n)
            };
            Smoothing::RunningAverage(next.unwrap_or(n))
        }
        Smoothing::Gaussian(s) => Smoothing::Gaussian(step_f(&SIGMAS, s, up)),
    }
}

/// How a chart's title names `s`: `twema 0.6`, `ema 0.9`, `avg 10`, `gauss 5`.
#[must_use]
pub fn label(s: Smoothing) -> Option<String> {
    match s {
        Smoothing::None => None,
        Smoothing::Twema(p) => Some(format!("twema {p}")),
        Smoothing::Ema(w) => Some(format!("ema {w}")),
        Smoothing::RunningAverage(n) => Some(format!("avg {n}")),
        Smoothing::Gaussian(s) => Some(format!("gauss {s}")),
    }
}

/// What a chart draws of one run's smoothed series.
#[derive(Debug, Clone, Copy)]
pub enum SmoothedLine<'a> {
    /// The chart is not smoothed.
    Off,
    /// Being computed: the raw line is drawn alone meanwhile.
    Pending,
    /// The smoothed series (of every point logged, min/max compacted past the cap).
    Ready(&'a Series),
    /// It could not be computed (the cause is on the status line).
    Failed,
}

/// Names one smoothed series: the run's file, the metric, the smoothing (as
/// `leet export --smoothing` spells it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    path: PathBuf,
    key: String,
    spec: String,
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// The last answer.
    series: Option<Series>,
    failed: bool,
    /// Raw points of the series when the answer was asked for.
    reflects: u64,
    /// When the job in flight was asked for (app clock).
    in_flight: Option<f64>,
    asked_at: f64,
    /// Seconds the last job took.
    cost: f64,
    /// Last drawn (a counter): the least recent go first.
    used: u64,
}

/// The smoothing of the metric charts.
#[derive(Debug, Clone)]
pub struct SmoothState {
    /// Each chart's own smoothing (by key), from `e` and `+`/`-`.
    pub charts: BTreeMap<String, Smoothing>,
    /// The smoothing of every chart without one of its own (`E`).
    pub all: Smoothing,
    /// What `E` turns on: the last smoothing chosen (W&B's default at first).
    pub last: Smoothing,
    cache: HashMap<CacheKey, Entry>,
    stamp: u64,
}

impl Default for SmoothState {
    fn default() -> Self {
        Self {
            charts: BTreeMap::new(),
            all: Smoothing::None,
            last: Smoothing::Twema(DEFAULT_TWEMA),
            cache: HashMap::new(),
            stamp: 0,
        }
    }
}

impl SmoothState {
    /// The smoothing chart `key` is drawn with.
    #[must_use]
    pub fn of(&self, key: &str) -> Smoothing {
        self.charts.get(key).copied().unwrap_or(self.all)
    }

    /// Whether any chart is smoothed.
    #[must_use]
    pub fn any(&self) -> bool {
        self.all != Smoothing::None || self.charts.values().any(|s| *s != Smoothing::None)
    }

    fn set(&mut self, key: &str, s: Smoothing) {
        if s != Smoothing::None {
            self.last = s;
        }
        if s == self.all {
            self.charts.remove(key);
        } else {
            self.charts.insert(key.to_owned(), s);
        }
    }

    /// The smoothing of every chart and of some charts (from the settings file);
    /// `E` turns on the first of them.
    pub fn restore(&mut self, all: Smoothing, charts: BTreeMap<String, Smoothing>) {
        if let Some(s) = std::iter::once(all)
            .chain(charts.values().copied())
            .find(|s| *s != Smoothing::None)
        {
            self.last = s;
        }
        self.all = all;
        self.charts = charts;
    }

    /// Bounded: the least recently drawn go, but never one drawn now (`used`
    /// from `drawn` on). With more series on screen than [`MAX_ENTRIES`] the
    /// cache holds every one of them (at most the grid's charts times the runs
    /// drawn, each with its share of the points): one evicted while on screen
    /// would be asked for again at every redraw and tick, its run's file read
    /// again each time, and never drawn smoothed.
    fn evict(&mut self, drawn: u64) {
        while self.cache.len() > MAX_ENTRIES {
            let Some(oldest) = self
                .cache
                .iter()
                .filter(|(_, e)| e.used < drawn)
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            self.cache.remove(&oldest);
        }
    }

    /// Smoothed series kept (tests: the cache stays bounded).
    #[must_use]
    pub fn cached(&self) -> usize {
        self.cache.len()
    }
}

/// What smoothing sees besides the charts: the run shown (its file, the clock,
/// the point cap, whether it is the live monitor) and the compared runs, which
/// are drawn too.
#[derive(Clone, Copy)]
pub(crate) struct SmoothCx<'a> {
    pub shown: &'a Shown,
    pub compare: &'a [Compared],
}

impl SmoothCx<'_> {
    fn host(&self) -> bool {
        matches!(self.shown.subject, Subject::Host { .. })
    }

    /// The file a drawn run was read from: the main run's, or a compared run's
    /// directory.
    #[allow(
        clippy::borrow_as_ptr,
        reason = "ptr::eq compares addresses; nothing is read"
    )]
    fn file_of(&self, run: &Run) -> Option<&Path> {
        if std::ptr::eq(run, &self.shown.run) {
            return self.shown.source.file.as_deref();
        }
        self.compare
            .iter()
            .find(|c| std::ptr::eq(run, &c.run))
            .map(|c| c.dir.as_path())
    }

    /// The runs drawn: the main run, then the compared ones.
    fn runs(&self) -> impl Iterator<Item = &Run> {
        std::iter::once(&self.shown.run).chain(self.compare.iter().map(|c| &c.run))
    }
}

/// Why `e`, `E`, `+`, `-` do nothing while the workspace groups runs (`G`): the
/// charts draw each group's mean and band, which are not smoothed.
pub(crate) const GROUPED: &str =
    "smoothing is not drawn on grouped runs, only each group's mean and band: G then an empty key ungroups";

/// Smoothing's keys, requests and answers on the charts' state.
impl Charts {
    /// `e`, `E`, `+`/`=`, `-`: the focused chart's smoothing kind or parameter, or
    /// every chart's (none in the live monitor, `host`).
    pub(in crate::ui) fn act_smoothing(&mut self, host: bool, a: Action) -> Effect {
        if host {
            return Effect::NONE;
        }
        if a == Action::ToggleSmoothingAll {
            // One press, one meaning: every chart smoothed (with the focused chart's
            // smoothing, else the last one chosen), unless every chart already is:
            // then none.
            let focused = self
                .focused_key()
                .map(|k| self.smoothing.of(k))
                .filter(|s| *s != Smoothing::None);
            let st = &mut self.smoothing;
            let every =
                st.all != Smoothing::None && st.charts.values().all(|s| *s != Smoothing::None);
            if let Some(s) = focused {
                st.last = s;
            }
            st.all = if every { Smoothing::None } else { st.last };
            st.charts.clear();
            return Effect::REDRAW;
        }
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return Effect::NONE;
        };
        let now = self.smoothing.of(&key);
        let s = match a {
            Action::CycleSmoothing => next_kind(now),
            Action::SmoothingUp => step_param(now, true),
            _ => step_param(now, false),
        };
        if s == now {
            return Effect::NONE;
        }
        self.smoothing.set(&key, s);
        Effect::REDRAW
    }

    /// What chart `key` draws of `run`'s smoothed series (`run` one of `cx`'s).
    #[must_use]
    pub(crate) fn smoothed_line(&self, cx: &SmoothCx, run: &Run, key: &str) -> SmoothedLine<'_> {
        let s = self.smoothing.of(key);
        if s == Smoothing::None || cx.host() {
            return SmoothedLine::Off;
        }
        let Some(path) = cx.file_of(run) else {
            return SmoothedLine::Failed;
        };
        let ck = CacheKey {
            path: path.to_owned(),
            key: key.to_owned(),
            spec: s.to_string(),
        };
        match self.smoothing.cache.get(&ck) {
            Some(Entry {
                series: Some(s), ..
            }) => SmoothedLine::Ready(s),
            Some(e) if e.failed => SmoothedLine::Failed,
            _ => SmoothedLine::Pending,
        }
    }

    /// The shown charts on screen (positions in `shown`): the focused one full
    /// screen, else the grid's page (none while the grid, drawn in `grid`, has
    /// no room).
    fn on_screen(&self, panels: &Panels, grid: Rect) -> Range<usize> {
        let n = self.shown.len();
        if panels.fullscreen {
            self.grid.focus..(self.grid.focus + 1).min(n)
        } else if grid.height == 0 {
            0..0
        } else {
            let start = self.grid.page_start();
            start..(start + self.grid.per_page()).min(n)
        }
    }

    /// Ask for the smoothed series the charts on screen lack, or that their
    /// runs have outgrown (rate limited); after every update that redraws.
    pub(in crate::ui) fn request_smoothing(
        &mut self,
        cx: &SmoothCx,
        (panels, grid): (&Panels, Rect),
        asks: &mut Asks,
    ) {
        if cx.host() || !self.smoothing.any() {
            return;
        }
        let mut jobs = Vec::new();
        for i in self.on_screen(panels, grid) {
            let Some(key) = self.shown.get(i).and_then(|&k| self.metric_keys.get(k)) else {
                continue;
            };
            let s = self.smoothing.of(key);
            if s == Smoothing::None {
                continue;
            }
            for run in cx.runs() {
                let (Some(series), Some(path)) = (run.metrics.get(key), cx.file_of(run)) else {
                    continue;
                };
                jobs.push((path.to_owned(), key.clone(), s, series));
            }
        }
        // More on screen than the cache keeps: all are kept, each with a share of
        // the points, so the points kept stay about as bounded.
        let cap = (cx.shown.max_points.saturating_mul(MAX_ENTRIES) / jobs.len().max(MAX_ENTRIES))
            .max(MIN_SHARE)
            .min(cx.shown.max_points);
        let now = cx.shown.now;
        let st = &mut self.smoothing;
        let drawn = st.stamp + 1;
        for (path, key, s, series) in jobs {
            st.stamp += 1;
            let stamp = st.stamp;
            let ck = CacheKey {
                path,
                key,
                spec: s.to_string(),
            };
            let e = st.cache.entry(ck.clone()).or_default();
            e.used = stamp;
            let count = series.count();
            if e.in_flight.is_some_and(|at| now - at < LOST_AFTER) {
                continue;
            }
            let answered = e.series.is_some() || e.failed;
            if answered && e.reflects == count {
                continue;
            }
            // Outgrown: again after a second, or four times what it took.
            if answered && now - e.asked_at < (4.0 * e.cost).max(1.0) {
                continue;
            }
            e.in_flight = Some(now);
            e.asked_at = now;
            e.reflects = count;
            // A series that holds every point logged is smoothed from its points.
            let whole = usize::try_from(count).is_ok_and(|c| c == series.stored());
            asks.cmd(Cmd::Smooth(SmoothJob {
                path: ck.path,
                key: ck.key,
                smoothing: ck.spec,
                cap,
                points: whole.then(|| series.points().to_vec()),
            }));
        }
        st.evict(drawn);
    }

    /// `Msg::Smoothed`: keep the smoothed series (unless its chart has moved on);
    /// a failure is told in `error` (the status line's).
    pub(in crate::ui) fn on_smoothed(&mut self, r: Smoothed, error: &mut Option<String>) -> Effect {
        let ck = CacheKey {
            path: r.job.path,
            key: r.job.key,
            spec: r.job.smoothing,
        };
        let Some(e) = self.smoothing.cache.get_mut(&ck) else {
            return Effect::NONE;
        };
        e.in_flight = None;
        e.cost = r.secs;
        match r.points {
            Ok(points) => {
                let mut s = Series::new(points.len() + 1);
                for (x, y) in points {
                    s.push(x, y);
                }
                e.series = Some(s);
                e.failed = false;
            }
            Err(why) => {
                e.failed = true;
                *error = Some(crate::text::sanitize(&format!(
                    "cannot smooth {}: {why}",
                    ck.key
                )));
            }
        }
        Effect::REDRAW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_cycles_the_kinds_and_the_parameter_steps_clamp_at_the_ends() {
        let mut s = Smoothing::None;
        let mut seen = Vec::new();
        for _ in 0..5 {
            s = next_kind(s);
            seen.push(s);
        }
        assert_eq!(
            seen,
            [
                Smoothing::Twema(0.6),
                Smoothing::Ema(0.6),
                Smoothing::RunningAverage(10),
                Smoothing::Gaussian(5.0),
                Smoothing::None
            ]
        );
        assert_eq!(step_param(Smoothing::Ema(0.6), true), Smoothing::Ema(0.7));
        assert_eq!(step_param(Smoothing::Ema(0.6), false), Smoothing::Ema(0.5));
        assert_eq!(step_param(Smoothing::Ema(0.99), true), Smoothing::Ema(0.99));
        assert_eq!(
            step_param(Smoothing::Twema(0.1), false),
            Smoothing::Twema(0.1)
        );
        // Between two steps (a value from the settings file): to the next one.
        assert_eq!(
            step_param(Smoothing::Twema(0.65), true),
            Smoothing::Twema(0.7)
        );
        assert_eq!(
            step_param(Smoothing::Twema(0.65), false),
            Smoothing::Twema(0.6)
        );
        assert_eq!(
            step_param(Smoothing::RunningAverage(10), true),
            Smoothing::RunningAverage(20)
        );
        assert_eq!(
            step_param(Smoothing::RunningAverage(2), false),
            Smoothing::RunningAverage(2)
        );
        assert_eq!(
            step_param(Smoothing::Gaussian(5.0), false),
            Smoothing::Gaussian(3.0)
        );
        assert_eq!(
            step_param(Smoothing::Gaussian(10_000.0), true),
            Smoothing::Gaussian(10_000.0)
        );
        assert_eq!(step_param(Smoothing::None, true), Smoothing::None);
        assert_eq!(label(Smoothing::Ema(0.6)).as_deref(), Some("ema 0.6"));
        assert_eq!(
            label(Smoothing::Gaussian(0.5)).as_deref(),
            Some("gauss 0.5")
        );
        assert_eq!(label(Smoothing::None), None);
    }
}
