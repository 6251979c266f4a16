//! Lists derived from the run (chart keys, system charts, overview rows), rebuilt
//! when what they come from changed.

use std::collections::BTreeSet;

use super::{system, App};
use crate::store::Run;

/// What the derived lists were computed from: counts that change whenever their
/// inputs do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seen {
    /// History keys of the main run and the compared ones (each compared run
    /// counts one more, so removing one is noticed).
    metric_keys: usize,
    /// Metric definitions (which may hide keys).
    metric_defs: usize,
    /// System metric keys.
    system_keys: usize,
    /// Run, config, summary, environment and exit records (the overview's input).
    meta_records: u64,
    /// Spans and bytes skipped, steps lost (the overview's Damage section).
    damage: (u64, u64, usize),
}

impl Seen {
    /// Before anything was computed: every list is rebuilt.
    pub(super) const NEVER: Seen = Seen {
        metric_keys: usize::MAX,
        metric_defs: usize::MAX,
        system_keys: usize::MAX,
        meta_records: u64::MAX,
        damage: (u64::MAX, u64::MAX, usize::MAX),
    };
}

impl App {
    /// Recompute derived lists when their inputs changed.
    /// Derive the metric keys again (what is charted changed, not the run).
    pub(super) fn rederive_metrics(&mut self) {
        self.shown.seen.metric_keys = usize::MAX;
        self.refresh();
    }

    pub(super) fn refresh(&mut self) {
        let meta = ["run", "config", "summary", "environment", "exit"]
            .iter()
            .filter_map(|k| self.shown.run.counts.by_type.get(k))
            .sum::<u64>();
        // Compared runs count in the metric keys' signature (their keys are charted
        // too), with their number so removing one is noticed.
        let compared: usize = self
            .runs
            .compare
            .iter()
            .map(|c| c.run.metrics.len() + c.run.metric_defs.len() + 1)
            .sum();
        let now = Seen {
            metric_keys: self.shown.run.metrics.len() + compared,
            metric_defs: self.shown.run.metric_defs.len(),
            system_keys: self.shown.run.system.len(),
            meta_records: meta,
            damage: (
                self.shown.run.damage.skipped_spans,
                self.shown.run.damage.skipped_bytes,
                self.shown.run.breaks.spans().len(),
            ),
        };
        if now.metric_keys != self.shown.seen.metric_keys
            || now.metric_defs != self.shown.seen.metric_defs
        {
            // Keys hidden by define_metric(hidden=True) are counted, and charted
            // only when the user asks (`H`); internal and media keys never are.
            let show = self.charts.show_hidden;
            let mut hidden: BTreeSet<String> = BTreeSet::new();
            let mut visible = |r: &Run| {
                let mut v = Vec::new();
                for k in r.metrics.keys() {
                    if r.hidden_by_define(k) {
                        hidden.insert(k.clone());
                        if show && !k.starts_with('_') {
                            v.push(k.clone());
                        }
                    } else if !r.is_hidden(k) {
                        v.push(k.clone());
                    }
                }
                v
            };
            let mut keys: BTreeSet<String> = visible(&self.shown.run).into_iter().collect();
            for c in &self.runs.compare {
                keys.extend(visible(&c.run));
            }
            self.charts.hidden = hidden.len();
            let keys: Vec<String> = keys.into_iter().collect();
            let focused = self.focused_key().map(str::to_owned);
            self.charts.metric_keys = keys;
            self.refilter_metrics(focused.as_deref());
        }
        if now.system_keys != self.shown.seen.system_keys {
            self.regroup();
        }
        if now.meta_records != self.shown.seen.meta_records || now.damage != self.shown.seen.damage
        {
            self.set_overview(self.overview_rows());
        }
        self.shown.seen = now;
    }

    /// Group the system keys into charts again (new keys, or in the live monitor
    /// another monitored process).
    pub(super) fn regroup(&mut self) {
        // What the charts are grouped from now (a cleared process's keys coming
        // back must regroup again).
        self.shown.seen.system_keys = self.shown.run.system.len();
        let was_empty = self.charts.sys.is_empty();
        self.charts.sys = if self.is_host() {
            self.live_charts()
        } else {
            system::group(self.shown.run.system.keys().iter().map(String::as_str))
        };
        self.refilter_system();
        if was_empty != self.charts.sys.is_empty() {
            self.relayout();
        }
        if self.is_host() {
            // Live: the grid's items are the system charts, one id each. Charts
            // appear over the first samples; focus on the first stays on the first.
            let focused = (self.charts.grid.focus > 0)
                .then(|| self.focused_key().map(str::to_owned))
                .flatten();
            self.charts.metric_keys = system::chart_ids(&self.charts.sys);
            self.refilter_metrics(focused.as_deref());
        }
    }

    /// The live monitor's charts: while a process is monitored, the process tree's
    /// first (the job the user picked), titled with its command and pid; then the
    /// host's.
    fn live_charts(&self) -> Vec<system::SysChart> {
        let keys = self.shown.run.system.keys();
        if !self.host.procs.told {
            // Not told which process the keys describe: grouped as they come.
            let keys = keys.iter().filter(|k| k.as_str() != "uptime");
            return system::group(keys.map(String::as_str));
        }
        // Uptime is a fact of the header, not a chart.
        let host = keys
            .iter()
            .filter(|k| !system::is_process_key(k) && k.as_str() != "uptime");
        let mut charts = Vec::new();
        if let Some((pid, cmd)) = &self.host.procs.monitored {
            let proc_keys = keys.iter().filter(|k| system::is_process_key(k));
            // Room for a title in one grid cell: its borders and the corner value
            // (`571MiB`, `22.82GiB`) take up to 13 columns. The command is
            // shortened at a word so the pid stays in view.
            let cell_w = self.screen.areas.grid.width / self.charts.grid.cols.max(1);
            let room = usize::from(cell_w.saturating_sub(13));
            for mut c in system::group(proc_keys.map(String::as_str)) {
                // The process's share of memory (the host's `Memory` chart's line).
                let t = if c.title == "Memory" {
                    "Process Memory".to_owned()
                } else if c.title.starts_with("Process ") {
                    c.title.clone()
                } else if let Some(m) = c.title.strip_prefix("GPU Process ") {
                    format!("Process GPU {m}")
                } else {
                    format!("Process {}", c.title)
                };
                let pid_s = format!(" ({pid})");
                let fixed = t.chars().count() + 2 + pid_s.chars().count();
                let budget = room.saturating_sub(fixed);
                c.title = if budget >= 6 {
                    let cmd = crate::ui::host::procs::short_command(cmd, budget);
                    format!("{t}: {cmd}{pid_s}")
                } else if t.chars().count() + pid_s.chars().count() <= room {
                    // Too narrow for any of the command: the pid names it.
                    format!("{t}{pid_s}")
                } else {
                    // Too narrow for the pid too (a cut pid would name another
                    // process): the process table's header names the process.
                    t
                };
                charts.push(c);
            }
        }
        charts.extend(system::group(host.map(String::as_str)));
        charts
    }

    pub(super) fn refilter_metrics(&mut self, keep: Option<&str>) {
        let f = &self.charts.filter;
        let live = self.is_host();
        self.charts.shown = self
            .charts
            .metric_keys
            .iter()
            .enumerate()
            .filter(|(i, k)| {
                f.matches(k)
                    || (live
                        && self
                            .charts
                            .sys
                            .get(*i)
                            .is_some_and(|c| c.series.iter().any(|s| f.matches(&s.key))))
            })
            .map(|(i, _)| i)
            .collect();
        self.charts.grid.focus = keep
            .and_then(|k| {
                self.charts
                    .shown
                    .iter()
                    .position(|&i| self.charts.metric_keys[i] == k)
            })
            .unwrap_or(0);
        self.charts.grid.clamp(self.charts.shown.len());
        let host = self.is_host();
        self.charts.sections_refiltered(host, keep.is_some());
        if self.charts.shown.is_empty() {
            self.panels.fullscreen = false;
        }
    }

    pub(super) fn refilter_system(&mut self) {
        let f = &self.panes.system.filter;
        self.panes.system.shown = self
            .charts
            .sys
            .iter()
            .enumerate()
            .filter(|(_, c)| f.matches(&c.title) || c.series.iter().any(|s| f.matches(&s.key)))
            .map(|(i, _)| i)
            .collect();
        self.panes.system.scroll = self
            .panes
            .system
            .scroll
            .min(self.panes.system.shown.len().saturating_sub(1));
    }
}
