//! The live monitor's process table: the latest `Msg::Procs` scan, sorted (CPU,
//! memory or GPU memory), filtered (regex over command, user and pid), scrolled,
//! with a selected row that stays on its process across scans; and the monitored
//! process (`Msg::Monitoring`), which `enter` on a row changes (`Cmd::Monitor`).

mod name;
pub(crate) mod view;

use ratatui::layout::Rect;

use crate::msg::{ProcRow, ProcTable};
use crate::store::metrics::MetricStore;
use crate::text::sanitize;
use crate::ui::filter::FilterState;
use crate::ui::panels::{Pane, Panels};
use crate::ui::source::Shown;
use crate::ui::{layout, system, Asks, Cmd, Effect, Subject};
pub(crate) use name::process_name;

/// The most processes kept from one scan (a host with more shows its top ones by
/// the sort in force): bounds memory and the per-scan sort.
pub const MAX_ROWS: usize = 10_000;

/// What the process keys say on a host of a cluster: Prometheus holds its
/// metrics, not its processes.
pub(crate) const NONE_ON_CLUSTER: &str =
    "no process table: Prometheus holds this host's metrics, not its processes (leet --live on the host shows them)";

/// What the table is sorted by (descending).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcSort {
    #[default]
    Cpu,
    Memory,
    GpuMemory,
}

impl ProcSort {
    /// The next order (the sort key cycles).
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            ProcSort::Cpu => ProcSort::Memory,
            ProcSort::Memory => ProcSort::GpuMemory,
            ProcSort::GpuMemory => ProcSort::Cpu,
        }
    }
}

/// One row as shown: the scan's numbers and sanitized text.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownRow {
    pub pid: u32,
    pub user: String,
    pub cpu: f64,
    pub rss: u64,
    pub gpu_memory: Option<u64>,
    pub threads: u32,
    pub command: String,
}

impl ShownRow {
    fn new(r: &ProcRow) -> Self {
        Self {
            pid: r.pid,
            user: sanitize(&r.user),
            cpu: if r.cpu.is_finite() { r.cpu } else { 0.0 },
            rss: r.rss,
            gpu_memory: r.gpu_memory,
            threads: r.threads,
            command: sanitize(&r.command),
        }
    }
}

/// The process table pane.
#[derive(Debug, Clone, Default)]
pub struct ProcsPane {
    /// Every process of the last scan (at most [`MAX_ROWS`]), sanitized.
    all: Vec<ShownRow>,
    /// The rows shown: `all` through the filter, in the sort order.
    pub rows: Vec<ShownRow>,
    /// Whether a scan came yet.
    pub scanned: bool,
    pub sort: ProcSort,
    /// Filter (`f`, or `/` while the table has focus).
    pub filter: FilterState,
    /// Selected row (index into `rows`).
    pub sel: usize,
    /// First row shown.
    pub scroll: usize,
    /// The monitored process tree's root: pid and the name it goes by in titles
    /// ([`process_name`]: the script an interpreter runs, else the program).
    pub monitored: Option<(u32, String)>,
    /// Whether the runtime said which process it monitors (`Msg::Monitoring`). Until
    /// it does, the process keys that arrive are charted as they come, untitled.
    pub told: bool,
}

impl ProcsPane {
    /// The selected row.
    #[must_use]
    pub fn selected(&self) -> Option<&ShownRow> {
        self.rows.get(self.sel)
    }

    /// Whether the process keys (`cpu`, `proc.*`, `gpu.process.*`) are shown: while a
    /// process is monitored, or before the runtime said whether one is.
    #[must_use]
    pub fn process_keys_shown(&self) -> bool {
        self.monitored.is_some() || !self.told
    }

    fn order(&self, a: &ShownRow, b: &ShownRow) -> std::cmp::Ordering {
        let key = |r: &ShownRow| match self.sort {
            ProcSort::Cpu => (r.cpu, r.rss as f64),
            ProcSort::Memory => (r.rss as f64, r.cpu),
            ProcSort::GpuMemory => (r.gpu_memory.map_or(-1.0, |g| g as f64), r.rss as f64),
        };
        let (ka, kb) = (key(a), key(b));
        kb.0.total_cmp(&ka.0)
            .then(kb.1.total_cmp(&ka.1))
            .then(a.pid.cmp(&b.pid))
    }

    /// Filter and sort `all` into `rows`, keeping the selection on the same pid.
    pub(in crate::ui) fn rebuild(&mut self) {
        let keep = self.selected().map(|r| r.pid);
        let f = &self.filter;
        let mut rows: Vec<ShownRow> = self
            .all
            .iter()
            .filter(|r| {
                f.matches(&r.command) || f.matches(&r.user) || f.matches(&r.pid.to_string())
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| self.order(a, b));
        self.rows = rows;
        self.sel = keep
            .and_then(|p| self.rows.iter().position(|r| r.pid == p))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
    }

    /// Take a scan.
    pub(in crate::ui) fn set_table(&mut self, t: &ProcTable) {
        let mut all: Vec<ShownRow> = t.rows.iter().map(ShownRow::new).collect();
        if all.len() > MAX_ROWS {
            all.sort_by(|a, b| self.order(a, b));
            all.truncate(MAX_ROWS);
        }
        self.all = all;
        self.scanned = true;
        self.rebuild();
    }

    /// Keep the selection within `room` table rows (below the table's header):
    /// scroll so that it shows.
    pub(in crate::ui) fn follow(&mut self, room: usize) {
        let room = room.max(1);
        let max = self.rows.len().saturating_sub(room);
        if self.sel < self.scroll {
            self.scroll = self.sel;
        } else if self.sel >= self.scroll + room {
            self.scroll = self.sel + 1 - room;
        }
        self.scroll = self.scroll.min(max);
    }
}

/// A command line shortened to at most `max` characters at a word (`…` marks the
/// cut), for chart titles.
#[must_use]
pub(crate) fn short_command(cmd: &str, max: usize) -> String {
    let cmd = cmd.trim();
    if cmd.chars().count() <= max {
        return cmd.to_owned();
    }
    let mut out = String::new();
    for w in cmd.split(' ') {
        let n = out.chars().count() + usize::from(!out.is_empty()) + w.chars().count();
        if n + 1 > max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = cmd.chars().take(max.saturating_sub(1)).collect();
    }
    out.push('…');
    out
}

/// Rows of the table drawn in `area` below its header line (1 without a table).
#[must_use]
pub(crate) fn room(area: Option<Rect>) -> usize {
    area.map_or(1, layout::procs_rows)
}

/// Drop every process series from the live store of `shown` (host series keep
/// their points); a run read from a file has none to drop.
pub(crate) fn clear_process_series(shown: &mut Shown) {
    if !shown
        .run
        .system
        .keys()
        .iter()
        .any(|k| system::is_process_key(k))
    {
        return;
    }
    let Shown { run, subject, .. } = shown;
    let window = match subject {
        Subject::Host { window } => *window,
        Subject::Run => return,
    };
    let mut fresh = MetricStore::windowed(crate::ui::LIVE_SERIES_CAP, window);
    for (k, s) in run.system.iter() {
        if system::is_process_key(k) {
            continue;
        }
        let i = fresh.slot(k);
        for &(x, y) in s.points() {
            fresh.push_at(i, x, y);
        }
    }
    run.system = fresh;
}

/// Ask the runtime to monitor process `pid` (`None`: none), in the live monitor
/// (`host`) only.
pub(in crate::ui) fn monitor(host: bool, asks: &mut Asks, pid: Option<u32>) -> Effect {
    if !host {
        return Effect::NONE;
    }
    asks.cmd(Cmd::Monitor { pid });
    Effect::REDRAW
}

/// The table's messages, keys and clicks: what it sees besides its own state is
/// the area it is drawn in, whether this is the live monitor (`host`), and the
/// panels (a click focuses it); what it asks for is the process to monitor.
impl ProcsPane {
    /// `Msg::Procs`: a scan, the selection kept in view of the table in `area`.
    pub(in crate::ui) fn on_table(&mut self, t: &ProcTable, area: Option<Rect>) -> Effect {
        self.set_table(t);
        self.keep_in_view(area);
        Effect::REDRAW
    }

    /// Scroll so that the selection shows in the table drawn in `area`.
    pub(in crate::ui) fn keep_in_view(&mut self, area: Option<Rect>) {
        self.follow(room(area));
    }

    /// The runtime says which process tree feeds the process metrics; true when
    /// that is a different process than before (whose series are to be cleared,
    /// so no chart mixes two).
    pub(in crate::ui) fn set_monitored(&mut self, m: Option<(u32, String)>) -> bool {
        let m = m.map(|(pid, cmd)| (pid, process_name(&cmd)));
        let changed = self.monitored.as_ref().map(|p| p.0) != m.as_ref().map(|p| p.0);
        self.monitored = m;
        self.told = true;
        changed
    }

    /// Ask the runtime to monitor the selected process.
    pub(in crate::ui) fn monitor_selected(&self, host: bool, asks: &mut Asks) -> Effect {
        match self.selected().map(|r| r.pid) {
            Some(pid) => monitor(host, asks, Some(pid)),
            None => Effect::NONE,
        }
    }

    /// Up/down/page keys with the table (drawn in `area`) focused.
    pub(in crate::ui) fn move_selection(
        &mut self,
        delta: isize,
        abs: Option<bool>,
        area: Option<Rect>,
    ) {
        let n = self.rows.len();
        self.sel = match abs {
            Some(false) => 0,
            Some(true) => n.saturating_sub(1),
            None => self
                .sel
                .saturating_add_signed(delta)
                .min(n.saturating_sub(1)),
        };
        self.keep_in_view(area);
    }

    /// A click at row `row_y` of the table drawn in `area`: the row under it is
    /// selected, and the table takes the focus.
    pub(in crate::ui) fn click(&mut self, area: Option<Rect>, row_y: u16, panels: &mut Panels) {
        let Some(area) = area else {
            return;
        };
        let first = area.y + layout::PROCS_HEAD;
        if row_y < first {
            return;
        }
        let i = self.scroll + usize::from(row_y - first);
        if i < self.rows.len() {
            self.sel = i;
        }
        panels.focus = Pane::Procs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_command_cuts_at_a_word() {
        assert_eq!(short_command("python train.py", 24), "python train.py");
        assert_eq!(
            short_command("python train.py --config configs/big.yaml", 24),
            "python train.py…"
        );
        assert_eq!(
            short_command("averyveryverylongprogramname", 10),
            "averyvery…"
        );
    }
}
