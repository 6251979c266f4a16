//! The metric charts: the grid of charts and its paging (`grid`), the sections
//! they are grouped in (`sections`), each chart's x axis (`xaxis`) and smoothing
//! (`smoothing`), the crosshair, a group of runs' statistics (`group`), the
//! drawing of the grid and its charts (`grid::view`), and the charts' parts of
//! the status bar (`status`).

pub mod crosshair;
pub mod grid;
pub(crate) mod group;
pub(crate) mod model;
pub mod sections;
pub mod smoothing;
pub(crate) mod status;
pub mod xaxis;

use std::collections::BTreeMap;

use crate::ui::filter::FilterState;
use crate::ui::system::SysChart;
use crate::ui::widget::band::ViewMemo;
use crate::ui::Pending;

/// The metrics grid's charts: which pass the filter, per-chart view settings, and
/// the system charts.
#[derive(Debug, Clone, Default)]
pub struct Charts {
    /// Indices into `metric_keys` passing the filter.
    pub shown: Vec<usize>,
    pub filter: FilterState,
    /// Charts (by key) zoomed to an x-range.
    pub zoom: BTreeMap<String, (f64, f64)>,
    /// The crosshair (`C`, right click), None when off.
    pub crosshair: Option<crosshair::Crosshair>,
    /// Keys hidden by `define_metric(hidden=True)`: how many, and whether they are
    /// charted anyway (`H`).
    pub hidden: usize,
    pub show_hidden: bool,
    /// Paging and y scales of the grid.
    pub grid: grid::GridState,
    /// A prefix key waiting for its digit.
    pub pending: Option<Pending>,
    /// History keys to chart (hidden ones omitted), sorted; in the live monitor, one
    /// id per grouped system chart.
    pub metric_keys: Vec<String>,
    /// The run's system charts (the sidebar's, the live monitor's grid).
    pub sys: Vec<SysChart>,
    /// Each metric chart's x axis and log-x (`x`, `X`, `L`).
    pub xaxis: xaxis::XAxisState,
    /// Each chart's smoothing, and the smoothed series.
    pub smoothing: smoothing::SmoothState,
    /// The min–max band on charts with more points than columns (`b`).
    pub band: bool,
    /// The series' bands and lines drawn lately, kept while they are unchanged.
    pub(crate) views: ViewMemo,
}

impl Charts {
    /// Forget the views kept from earlier frames: the next one computes every
    /// chart afresh (what a frame costs when every series changed).
    pub fn forget_views(&self) {
        self.views.clear();
    }

    /// The focused metric chart's key (none while a section header has focus).
    #[must_use]
    pub fn focused_key(&self) -> Option<&str> {
        if self.grid.sections.header.is_some() {
            return None;
        }
        self.shown
            .get(self.grid.focus)
            .and_then(|&i| self.metric_keys.get(i))
            .map(String::as_str)
    }
}
