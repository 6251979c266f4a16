//! The x axis of each metric chart: `x` cycles the focused chart's x
//! through its default (`_step`, or the `define_metric` step metric the run
//! declares for it) → relative time → wall time → a numeric metric picked from a
//! small filterable list → the default again; `X` gives every chart the focused
//! chart's x; `L` toggles log-x on the focused chart.
//!
//! Zoom and the crosshair stay in the chart's own x (its series' x): the view maps
//! them, as it maps the points, to the x chosen here.

pub(crate) mod view;

use std::collections::{BTreeMap, BTreeSet};

use crossterm::event::{KeyCode, KeyModifiers};

use crate::store::{Run, Series};
use crate::ui::action::Action;
use crate::ui::charts::Charts;
use crate::ui::keymap::{Key, Keymap, Mode};
use crate::ui::overlay::Outcome;
use crate::ui::Effect;

/// Longest filter the metric picker takes.
const MAX_FILTER_CHARS: usize = 200;

/// What a chart's x is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum XAxis {
    /// `_step`, or the chart's `define_metric` step metric.
    #[default]
    Default,
    /// Seconds since the run started: its `_runtime`, else `_timestamp` − start.
    Relative,
    /// The rows' `_timestamp`, as UTC times of day.
    Wall,
    /// The value of this metric at each point's step.
    Metric(String),
}

impl std::fmt::Display for XAxis {
    /// As the settings file spells it: `step`, `rel`, `wall`, `metric:NAME`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XAxis::Default => write!(f, "step"),
            XAxis::Relative => write!(f, "rel"),
            XAxis::Wall => write!(f, "wall"),
            XAxis::Metric(m) => write!(f, "metric:{m}"),
        }
    }
}

impl std::str::FromStr for XAxis {
    type Err = String;

    /// `step` (the chart's default x), `rel`, `wall`, `metric:NAME`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "step" => Ok(XAxis::Default),
            "rel" => Ok(XAxis::Relative),
            "wall" => Ok(XAxis::Wall),
            _ => match s.strip_prefix("metric:") {
                Some(m) if !m.is_empty() => Ok(XAxis::Metric(m.to_owned())),
                _ => Err(format!(
                    "unknown x axis '{s}' (expected step, rel, wall or metric:NAME)"
                )),
            },
        }
    }
}

impl XAxis {
    /// The title's word for it (`x=wall`); None for the default.
    #[must_use]
    pub fn label(&self) -> Option<&str> {
        match self {
            XAxis::Default => None,
            XAxis::Relative => Some("rel"),
            XAxis::Wall => Some("wall"),
            XAxis::Metric(m) => Some(m),
        }
    }
}

/// The x a chart of `key` over `runs` is drawn against by default (its own x,
/// the one its zoom and crosshair are in): the x every run that logged `key`
/// charts it against (`_step`, or the step metric a `define_metric` gives it);
/// where they differ, `_step`, which every history row has, so that no run is
/// left out of the chart (a run over a step metric keeps its values by `_step`
/// too).
#[must_use]
pub fn own_x<'r>(runs: &[&'r Run], key: &str) -> &'r str {
    let mut with = runs.iter().filter(|r| r.metrics.get(key).is_some());
    let Some(first) = with.next() else {
        return "_step";
    };
    let x = first.x_axis_of(key);
    if with.all(|r| r.x_axis_of(key) == x) {
        x
    } else {
        "_step"
    }
}

/// `run`'s series of `key` over the chart's own x `own` ([`own_x`]): its own
/// series where it charts `key` against `own`, else by `_step` where that is
/// `own`; None where it did not log `key`.
#[must_use]
pub fn series_in<'r>(run: &'r Run, key: &str, own: &str) -> Option<&'r Series> {
    if run.x_axis_of(key) == own {
        run.metrics.get(key)
    } else if own == "_step" {
        run.timeline.by_step.get(key)
    } else {
        None
    }
}

/// Every drawn run's series of `key` over the chart's own x, in `runs`' order.
#[must_use]
pub fn chart_series<'r>(runs: &[&'r Run], key: &str) -> Vec<&'r Series> {
    let own = own_x(runs, key);
    runs.iter().filter_map(|r| series_in(r, key, own)).collect()
}

/// The metric picker (`x` after wall time; `Overlay::XAxis` while open): the chart
/// it is for, the candidates, the filter typed and the highlighted row (of the
/// matching candidates).
#[derive(Debug, Clone, Default)]
pub struct Picker {
    pub key: String,
    pub options: Vec<String>,
    pub filter: String,
    pub sel: usize,
}

impl Picker {
    /// The candidates whose name contains the filter (case-insensitive).
    #[must_use]
    pub fn matches(&self) -> Vec<&str> {
        let f = self.filter.to_lowercase();
        self.options
            .iter()
            .filter(|o| o.to_lowercase().contains(&f))
            .map(String::as_str)
            .collect()
    }
}

/// Every chart's x choice and log-x.
#[derive(Debug, Clone, Default)]
pub struct XAxisState {
    /// Charts (by key) with their own x.
    pub per_chart: BTreeMap<String, XAxis>,
    /// The x of the charts without their own (`X` sets it).
    pub all: XAxis,
    /// Charts on a log x axis.
    pub log: BTreeSet<String>,
}

impl XAxisState {
    /// `key`'s x.
    #[must_use]
    pub fn of(&self, key: &str) -> &XAxis {
        self.per_chart.get(key).unwrap_or(&self.all)
    }

    /// Whether `key` has a log x axis.
    #[must_use]
    pub fn log_x(&self, key: &str) -> bool {
        self.log.contains(key)
    }

    /// Take the saved choices.
    pub fn restore(
        &mut self,
        all: XAxis,
        per_chart: BTreeMap<String, XAxis>,
        log: BTreeSet<String>,
    ) {
        *self = Self {
            per_chart,
            all,
            log,
        };
    }
}

impl Charts {
    /// Set `key`'s x; its zoom (in the old x) goes.
    fn set_x_axis(&mut self, key: &str, x: XAxis) {
        self.zoom.remove(key);
        self.xaxis.per_chart.insert(key.to_owned(), x);
    }

    /// `x`: the focused chart's next x. After wall time comes the metric picker
    /// over the other metrics of the drawn `runs` (a compared run's too: its step
    /// metric may be the x wanted), for the router to open (the chart's x stays
    /// until a metric is picked).
    pub(crate) fn cycle_x_axis(&mut self, host: bool, runs: &[&Run]) -> (Effect, Option<Picker>) {
        if host {
            return (Effect::NONE, None);
        }
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return (Effect::NONE, None);
        };
        let next = match self.xaxis.of(&key) {
            XAxis::Default => XAxis::Relative,
            XAxis::Relative => XAxis::Wall,
            XAxis::Wall => {
                // Metrics, hidden ones too (a step metric is often defined
                // hidden), not the fields of a logged image (`img.width`).
                let mut options: Vec<String> = (runs.iter())
                    .flat_map(|r| (r.metrics.keys().iter()).filter(|k| !r.is_media_field(k)))
                    .filter(|k| **k != key)
                    .cloned()
                    .collect();
                if !options.is_empty() {
                    options.sort();
                    options.dedup();
                    let picker = Picker {
                        key,
                        options,
                        ..Picker::default()
                    };
                    return (Effect::REDRAW, Some(picker));
                }
                XAxis::Default
            }
            XAxis::Metric(_) => XAxis::Default,
        };
        self.set_x_axis(&key, next);
        (Effect::REDRAW, None)
    }

    /// `X`: every chart's x becomes the focused chart's.
    pub(crate) fn x_axis_to_all(&mut self, host: bool) -> Effect {
        if host {
            return Effect::NONE;
        }
        let Some(key) = self.focused_key() else {
            return Effect::NONE;
        };
        let x = self.xaxis.of(key).clone();
        let changed: Vec<String> = (self.metric_keys.iter())
            .filter(|k| *self.xaxis.of(k) != x)
            .cloned()
            .collect();
        for k in changed {
            self.zoom.remove(&k);
        }
        self.xaxis.per_chart.clear();
        self.xaxis.all = x;
        Effect::REDRAW
    }

    /// `L`: log x on the focused chart, or linear again.
    pub(crate) fn toggle_log_x(&mut self, host: bool) -> Effect {
        if host {
            return Effect::NONE;
        }
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return Effect::NONE;
        };
        if !self.xaxis.log.remove(&key) {
            self.xaxis.log.insert(key.clone());
        }
        self.zoom.remove(&key);
        Effect::REDRAW
    }
}

impl Picker {
    /// Pasted text (one line, already cleaned) added to the filter, as far as it
    /// has room. Returns whether anything was added.
    pub(crate) fn type_text(&mut self, text: &str) -> bool {
        let room = MAX_FILTER_CHARS.saturating_sub(self.filter.chars().count());
        let before = self.filter.len();
        self.filter
            .extend(text.chars().filter(|c| !c.is_control()).take(room));
        self.sel = 0;
        self.filter.len() != before
    }

    /// A key while the picker is open (`Overlay::XAxis`): typing filters, up/down
    /// move, the filter's apply (enter) picks, its cancel (esc) closes it and the
    /// chart goes back to its default x (the step after the metric's in the cycle).
    pub(crate) fn on_key(&mut self, key: &Key, charts: &mut Charts, keymap: &Keymap) -> Outcome {
        // Its chart is no longer the focused one (the list changed under it): closed.
        if charts.focused_key() != Some(self.key.as_str()) {
            return Outcome::Close;
        }
        let n = self.matches().len();
        match keymap.action(Mode::Filter, key) {
            Some(Action::FilterApply) => {
                let Some(m) = self.matches().get(self.sel).map(|s| (*s).to_owned()) else {
                    return Outcome::Stay(Effect::REDRAW);
                };
                charts.set_x_axis(&self.key, XAxis::Metric(m));
                return Outcome::Close;
            }
            Some(Action::FilterCancel) => {
                charts.set_x_axis(&self.key, XAxis::Default);
                return Outcome::Close;
            }
            Some(Action::FilterBackspace) => {
                self.filter.pop();
                self.sel = 0;
            }
            Some(Action::FilterClearInput) => {
                self.filter.clear();
                self.sel = 0;
            }
            Some(Action::Quit) => return Outcome::Stay(Effect::QUIT),
            _ => match key.code {
                KeyCode::Up => self.sel = self.sel.saturating_sub(1),
                KeyCode::Down => self.sel = (self.sel + 1).min(n.saturating_sub(1)),
                KeyCode::Char(c)
                    if !key
                        .mods
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                        && !c.is_control()
                        && self.filter.chars().count() < MAX_FILTER_CHARS =>
                {
                    self.filter.push(c);
                    self.sel = 0;
                }
                _ => return Outcome::Stay(Effect::NONE),
            },
        }
        Outcome::Stay(Effect::REDRAW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picker_matches_case_insensitively() {
        let p = Picker {
            key: "loss".into(),
            options: vec!["epoch".into(), "Tokens".into(), "train/acc".into()],
            filter: "TOK".into(),
            sel: 0,
        };
        assert_eq!(p.matches(), vec!["Tokens"]);
        assert_eq!(XAxis::Wall.label(), Some("wall"));
        assert_eq!(XAxis::Metric("epoch".into()).label(), Some("epoch"));
        assert_eq!(XAxis::Default.label(), None);
    }
}
