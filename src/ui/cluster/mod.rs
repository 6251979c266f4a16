//! The cluster screen (`leet --live --prometheus URL`): every host a Prometheus
//! server holds, from the [`ClusterModel`] the refresh thread feeds. Its state
//! (the model, the wall clock, the sort, the selected host, the host filter and
//! the host opened with `enter`) lives in `host::Host::cluster`; its keys are its
//! own section of the key map (`[cluster]`), handed here by the router; its
//! drawing is `view.rs`. A host opened is shown as the live monitor shows its own
//! host: its series are copied into the run shown ([`fill_run`]) as they come.

pub(crate) mod view;

use std::cmp::Ordering;

use crate::msg::cluster::ClusterUpdate;
use crate::msg::Sample;
use crate::store::cluster::{ClusterModel, HeaderRow, HostState};
use crate::ui::action::Action;
use crate::ui::filter::{FilterState, FilterTarget};
use crate::ui::Effect;

use super::source::Shown;

/// The cluster screen's lines in the help.
pub(crate) const HELP: &[(&[Action], &str)] = &[
    (&[Action::FocusUp], "Select an earlier host"),
    (&[Action::FocusDown], "Select a later host"),
    (&[Action::FirstPage], "Select the first host"),
    (&[Action::LastPage], "Select the last host"),
    (
        &[Action::CycleProcessSort],
        "Sort hosts by the next column (cycles)",
    ),
    (&[Action::ReverseSort], "Reverse the sort order"),
    (&[Action::NextPage], "Scroll the GPU heatmap a page down"),
    (&[Action::PrevPage], "Scroll the GPU heatmap a page up"),
    (
        &[Action::OpenHost],
        "Open the host's own live screen (esc comes back)",
    ),
    (&[Action::StartFilter], "Filter hosts by name (regex)"),
    (&[Action::ClearFilters], "Clear the host filter"),
];

/// The header table's sort column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    #[default]
    Host,
    /// Down first, then stale, then up.
    State,
    Cpu,
    Memory,
    GpuMean,
    /// Lowest first: an idle GPU or a straggler on top.
    GpuMin,
    GpuMemory,
    Power,
}

impl SortBy {
    const ALL: [SortBy; 8] = [
        SortBy::Host,
        SortBy::State,
        SortBy::Cpu,
        SortBy::Memory,
        SortBy::GpuMean,
        SortBy::GpuMin,
        SortBy::GpuMemory,
        SortBy::Power,
    ];

    #[must_use]
    pub fn next(self) -> SortBy {
        let i = Self::ALL.iter().position(|&s| s == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// Its column's heading.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SortBy::Host => "host",
            SortBy::State => "state",
            SortBy::Cpu => "cpu",
            SortBy::Memory => "memory",
            SortBy::GpuMean => "gpu mean",
            SortBy::GpuMin => "gpu min",
            SortBy::GpuMemory => "gpu memory",
            SortBy::Power => "power",
        }
    }

    /// Whether the column's own order is highest first (names and states are
    /// first to last).
    #[must_use]
    pub fn descending(self) -> bool {
        !matches!(self, SortBy::Host | SortBy::State | SortBy::GpuMin)
    }

    /// The value a numeric column sorts by, and whether its natural order is
    /// highest first.
    fn value(self, r: &HeaderRow) -> (Option<f64>, bool) {
        match self {
            SortBy::Host | SortBy::State => (None, false),
            SortBy::Cpu => (r.cpu, self.descending()),
            SortBy::Memory => (r.memory, self.descending()),
            SortBy::GpuMean => (r.gpu_mean, self.descending()),
            SortBy::GpuMin => (r.gpu_min, self.descending()),
            SortBy::GpuMemory => (r.gpu_memory, self.descending()),
            SortBy::Power => (r.power, self.descending()),
        }
    }

    /// `a` before `b` in this column's natural order (a missing value last
    /// either way; ties by host name, its numbers as numbers).
    fn compare(self, a: &HeaderRow, b: &HeaderRow) -> Ordering {
        let rank = |s: HostState| match s {
            HostState::Down => 0,
            HostState::Stale => 1,
            HostState::Up => 2,
        };
        let by = match self {
            SortBy::Host => Ordering::Equal,
            SortBy::State => rank(a.state).cmp(&rank(b.state)),
            _ => {
                let ((va, high), (vb, _)) = (self.value(a), self.value(b));
                match (va, vb) {
                    (Some(x), Some(y)) if high => y.total_cmp(&x),
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
            }
        };
        // Names in natural order: node-2 before node-10.
        by.then_with(|| crate::text::natural_cmp(&a.host, &b.host))
            .then_with(|| a.host.cmp(&b.host))
    }
}

/// What a key did on the cluster screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay(Effect),
    /// Show this host's own live screen.
    Open(String),
    /// Not the cluster screen's: the router's (help, quit).
    Pass,
}

/// The cluster screen's state.
#[derive(Debug, Clone, Default)]
pub struct ClusterScreen {
    pub model: ClusterModel,
    /// The wall clock (Unix s), from the loop's tick: a host is stale against it.
    pub now: f64,
    pub sort: SortBy,
    pub reverse: bool,
    /// The selected host, by name (kept across refreshes and sorts).
    pub selected: Option<String>,
    /// The host filter (`/`), over host names.
    pub filter: FilterState,
    /// The host whose own screen is shown (`enter`; `esc` comes back).
    pub opened: Option<String>,
    /// Heatmap rows scrolled past the selected host's first GPU (`pgdown`,
    /// `pgup`); a new selection shows its host's GPUs from the first again.
    pub heat_scroll: isize,
}

impl ClusterScreen {
    /// Reading `server` over `window`.
    #[must_use]
    pub fn new(server: &str, window: std::time::Duration) -> Self {
        let mut model = ClusterModel::new(window);
        // Named before the first answer says so (the status line shows it).
        model.apply(ClusterUpdate::Started {
            server: server.to_owned(),
            step: crate::source::prometheus::driver::DEFAULT_INTERVAL,
            interval: crate::source::prometheus::driver::DEFAULT_INTERVAL,
            window,
        });
        Self {
            model,
            ..Self::default()
        }
    }

    /// The header table's rows: the hosts the filter passes, in the sort's order.
    #[must_use]
    pub fn rows(&self) -> Vec<HeaderRow> {
        let mut rows: Vec<HeaderRow> = (self.model.header(self.now).into_iter())
            .filter(|r| self.filter.matches(&r.host))
            .collect();
        rows.sort_by(|a, b| {
            let o = self.sort.compare(a, b);
            if self.reverse {
                o.reverse()
            } else {
                o
            }
        });
        rows
    }

    /// The selected row's index in `rows` (the first row when none is selected
    /// or the selected one is filtered out).
    #[must_use]
    pub fn selected_index(&self, rows: &[HeaderRow]) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        let at = (self.selected.as_deref())
            .and_then(|s| rows.iter().position(|r| r.host == s))
            .unwrap_or(0);
        Some(at)
    }

    fn select(&mut self, rows: &[HeaderRow], i: usize) {
        self.selected = rows.get(i).map(|r| r.host.clone());
        self.heat_scroll = 0;
    }

    /// Scroll the heatmap a page of its rows (as drawn in a screen of `size`)
    /// down (`forward`) or up.
    fn scroll_heat(&mut self, rows: &[HeaderRow], size: ratatui::layout::Rect, forward: bool) {
        let n: usize = rows.iter().map(|r| r.gpus).sum();
        let p = view::parts(size, rows.len(), n);
        let seen = crate::ui::widget::heatmap::band_rows(p.heat);
        if n <= seen || seen == 0 {
            return;
        }
        let base = heat_base(self, rows);
        let top = view::heat_top(base, self.heat_scroll, n, seen);
        // A page less the row that says how many more there are.
        let page = seen.saturating_sub(1).max(1);
        let to = if forward {
            (top + page).min(n - seen)
        } else {
            top.saturating_sub(page)
        };
        self.heat_scroll =
            isize::try_from(to).unwrap_or(isize::MAX) - isize::try_from(base).unwrap_or(isize::MAX);
    }

    /// A key's action, in a screen of `size`.
    pub(crate) fn act(
        &mut self,
        a: Action,
        filter_target: &mut Option<FilterTarget>,
        size: ratatui::layout::Rect,
    ) -> Outcome {
        let rows = self.rows();
        let at = self.selected_index(&rows);
        let last = rows.len().saturating_sub(1);
        match a {
            Action::NextPage => self.scroll_heat(&rows, size, true),
            Action::PrevPage => self.scroll_heat(&rows, size, false),
            Action::FocusUp => self.select(&rows, at.unwrap_or(0).saturating_sub(1)),
            Action::FocusDown => self.select(&rows, at.map_or(0, |i| (i + 1).min(last))),
            Action::FirstPage => self.select(&rows, 0),
            Action::LastPage => self.select(&rows, last),
            Action::CycleProcessSort => {
                self.sort = self.sort.next();
                self.heat_scroll = 0;
            }
            Action::ReverseSort => {
                self.reverse = !self.reverse;
                self.heat_scroll = 0;
            }
            Action::OpenHost => {
                return at
                    .and_then(|i| rows.get(i))
                    .map_or(Outcome::Stay(Effect::NONE), |r| {
                        Outcome::Open(r.host.clone())
                    });
            }
            Action::StartFilter => {
                self.filter.start();
                *filter_target = Some(FilterTarget::Hosts);
            }
            Action::ClearFilters => self.filter.clear(),
            _ => return Outcome::Pass,
        }
        Outcome::Stay(Effect::REDRAW)
    }

    /// Whether the host pattern being typed does not compile (a pattern too long
    /// is cut and kept: that is no refusal).
    #[must_use]
    pub fn pattern_refused(&self) -> bool {
        use crate::ui::prompt::Pattern as _;
        (self.filter.error.as_ref()).is_some_and(|e| !crate::ui::query::Matcher::is_too_long(e))
    }

    /// Fold in a refresh: whether the host opened has new points to show.
    pub fn apply(&mut self, u: ClusterUpdate) -> bool {
        let fetched = matches!(u, ClusterUpdate::Fetched(_));
        self.model.apply(u);
        fetched && self.opened.is_some()
    }
}

/// The heatmap row of the selected host's first GPU: the GPUs of the rows before
/// it (the heatmap lists them in the table's order).
pub(super) fn heat_base(c: &ClusterScreen, rows: &[HeaderRow]) -> usize {
    let at = c.selected_index(rows).unwrap_or(0);
    rows.iter().take(at).map(|r| r.gpus).sum()
}

/// What the screen of a host opened says about it besides its series: its state,
/// the time of its newest sample, and the families whose exporter stopped giving
/// them while the others go on (each with its newest sample's time).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opened {
    pub state: HostState,
    pub newest: Option<f64>,
    pub behind: Vec<(String, f64)>,
}

impl Opened {
    /// The host's state in words: `up`, or `down`/`stale` and since when nothing
    /// new came.
    pub(crate) fn words(&self) -> String {
        let since = |what: &str| {
            self.newest.map_or_else(
                || format!("{what}: nothing read"),
                |t| format!("{what}: no sample since {}", time(t)),
            )
        };
        match self.state {
            HostState::Up => "up".to_owned(),
            HostState::Down => since("down"),
            HostState::Stale => since("stale"),
        }
    }

    /// The families behind, in words: `gpu: no sample since 10:01:02`.
    pub(crate) fn behind_words(&self) -> Option<String> {
        let parts: Vec<String> = (self.behind.iter())
            .map(|(f, t)| format!("{f}: no sample since {}", time(*t)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

fn time(t: f64) -> String {
    crate::ui::widget::format::time_of_day(t.floor() as i64)
}

/// The host opened from the cluster screen, as its screen states it.
pub(crate) fn opened(c: &ClusterScreen) -> Option<Opened> {
    opened_of(c, c.opened.as_deref()?)
}

/// Host `name` as its own screen would state it.
pub(crate) fn opened_of(c: &ClusterScreen, name: &str) -> Option<Opened> {
    let h = c.model.host(name)?;
    let every = c.model.every();
    Some(Opened {
        state: h.state(c.now, every),
        newest: h.newest(),
        behind: crate::store::cluster::families_behind(h, every)
            .into_iter()
            .map(|(f, t)| (crate::text::sanitize(&f), t))
            .collect(),
    })
}

/// Copy host `name`'s series into the run shown, the points newer than those it
/// holds (all of them into a fresh run): the live monitor then draws that host as
/// its own. Whether the host is known.
pub(crate) fn fill_run(shown: &mut Shown, model: &ClusterModel, name: &str) -> bool {
    let Some(host) = model.host(name) else {
        return false;
    };
    for key in host.keys() {
        let Some(series) = host.series(key) else {
            continue;
        };
        let held = shown
            .run
            .system
            .get(key)
            .and_then(crate::store::Series::last);
        // The model's series are in time order: the new points are a tail, found
        // without walking the whole window at every refresh.
        let points = series.points();
        let from = held.map_or(0, |(ht, _)| points.partition_point(|p| p.0 <= ht));
        for &(t, v) in &points[from..] {
            let sample = Sample {
                timestamp: t,
                values: vec![(key.to_owned(), v)],
                errors: Vec::new(),
            };
            shown.apply_sample(&sample, true);
        }
    }
    true
}

#[cfg(test)]
mod tests;
