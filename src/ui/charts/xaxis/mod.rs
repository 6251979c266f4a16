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

use crate::ui::action::Action;
use crate::ui::keymap::{Key, Mode};
use crate::ui::{App, Effect};

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

/// The metric picker (`x` after wall time): the chart it is for, the candidates,
/// the filter typed and the highlighted row (of the matching candidates).
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
    /// The metric picker, while open.
    pub picker: Option<Picker>,
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

    /// Take the saved choices (the picker closed).
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
            picker: None,
        };
    }
}

impl App {
    /// Set `key`'s x; its zoom (in the old x) goes.
    fn set_x_axis(&mut self, key: &str, x: XAxis) {
        self.charts.zoom.remove(key);
        self.charts.xaxis.per_chart.insert(key.to_owned(), x);
    }

    /// `x`: the focused chart's next x (wall time opens the metric picker).
    pub(crate) fn cycle_x_axis(&mut self) -> Effect {
        if self.is_host() {
            return Effect::NONE;
        }
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return Effect::NONE;
        };
        let next = match self.charts.xaxis.of(&key) {
            XAxis::Default => XAxis::Relative,
            XAxis::Relative => XAxis::Wall,
            XAxis::Wall => {
                let options: Vec<String> = self
                    .shown
                    .run
                    .metrics
                    .keys()
                    .iter()
                    .filter(|k| **k != key)
                    .cloned()
                    .collect();
                if !options.is_empty() {
                    let mut options = options;
                    options.sort();
                    self.charts.xaxis.picker = Some(Picker {
                        key,
                        options,
                        ..Picker::default()
                    });
                    return Effect::REDRAW;
                }
                XAxis::Default
            }
            XAxis::Metric(_) => XAxis::Default,
        };
        self.set_x_axis(&key, next);
        Effect::REDRAW
    }

    /// `X`: every chart's x becomes the focused chart's.
    pub(crate) fn x_axis_to_all(&mut self) -> Effect {
        if self.is_host() {
            return Effect::NONE;
        }
        let Some(key) = self.focused_key() else {
            return Effect::NONE;
        };
        let x = self.charts.xaxis.of(key).clone();
        let changed: Vec<String> = self
            .charts
            .metric_keys
            .iter()
            .filter(|k| *self.charts.xaxis.of(k) != x)
            .cloned()
            .collect();
        for k in changed {
            self.charts.zoom.remove(&k);
        }
        self.charts.xaxis.per_chart.clear();
        self.charts.xaxis.all = x;
        Effect::REDRAW
    }

    /// `L`: log x on the focused chart, or linear again.
    pub(crate) fn toggle_log_x(&mut self) -> Effect {
        if self.is_host() {
            return Effect::NONE;
        }
        let Some(key) = self.focused_key().map(str::to_owned) else {
            return Effect::NONE;
        };
        if !self.charts.xaxis.log.remove(&key) {
            self.charts.xaxis.log.insert(key.clone());
        }
        self.charts.zoom.remove(&key);
        Effect::REDRAW
    }

    /// A key while the metric picker is open: typing filters, up/down move,
    /// the filter's apply (enter) picks, its cancel (esc) closes it and the chart
    /// goes back to its default x (the step after the metric's in the cycle).
    pub(crate) fn picker_key(&mut self, key: &Key) -> Effect {
        // Its chart is no longer the focused one (the list changed under it): closed.
        let focused = self.focused_key().map(str::to_owned);
        let Some(p) = self.charts.xaxis.picker.as_mut() else {
            return Effect::NONE;
        };
        if focused.as_deref() != Some(p.key.as_str()) {
            self.charts.xaxis.picker = None;
            return Effect::REDRAW;
        }
        let n = p.matches().len();
        match self.screen.keymap.action(Mode::Filter, key) {
            Some(Action::FilterApply) => {
                let chosen = p.matches().get(p.sel).map(|s| (*s).to_owned());
                let chart = p.key.clone();
                if let Some(m) = chosen {
                    self.charts.xaxis.picker = None;
                    self.set_x_axis(&chart, XAxis::Metric(m));
                }
            }
            Some(Action::FilterCancel) => {
                let chart = p.key.clone();
                self.charts.xaxis.picker = None;
                self.set_x_axis(&chart, XAxis::Default);
            }
            Some(Action::FilterBackspace) => {
                p.filter.pop();
                p.sel = 0;
            }
            Some(Action::FilterClearInput) => {
                p.filter.clear();
                p.sel = 0;
            }
            Some(Action::Quit) => return Effect::QUIT,
            _ => match key.code {
                KeyCode::Up => p.sel = p.sel.saturating_sub(1),
                KeyCode::Down => p.sel = (p.sel + 1).min(n.saturating_sub(1)),
                KeyCode::Char(c)
                    if !key
                        .mods
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                        && !c.is_control()
                        && p.filter.chars().count() < MAX_FILTER_CHARS =>
                {
                    p.filter.push(c);
                    p.sel = 0;
                }
                _ => return Effect::NONE,
            },
        }
        Effect::REDRAW
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
