//! Lists derived from the run (chart keys, system charts, overview rows), rebuilt
//! when what they come from changed: a function of the parts of the state they
//! read and write ([`DeriveCx`]), which the router (`App::refresh`) builds and
//! finishes (the layout, the overview's rows).

use std::collections::BTreeSet;

use super::charts::Charts;
use super::host::procs::ProcsPane;
use super::panels::Panels;
use super::source::Shown;
use super::system::{self, SysChart, SystemPane};
use super::workspace::runs::Compared;
use super::Subject;
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
    /// Run, config, environment and exit records (the overview's input).
    meta_records: u64,
    /// Summary records shown in the overview.
    summary_records: u64,
    /// The run's growth (Unix ms, `SourceState::last_growth`) when the overview
    /// was last rebuilt; `i64::MIN`: not while growing.
    overview_at_ms: i64,
    /// Spans and bytes skipped, steps lost (the overview's Damage section).
    damage: (u64, u64, usize, u64),
}

impl Seen {
    /// Before anything was computed: every list is rebuilt.
    pub(super) const NEVER: Seen = Seen {
        metric_keys: usize::MAX,
        metric_defs: usize::MAX,
        system_keys: usize::MAX,
        meta_records: u64::MAX,
        summary_records: u64::MAX,
        overview_at_ms: i64::MIN,
        damage: (u64::MAX, u64::MAX, usize::MAX, u64::MAX),
    };

    /// Forget the metric keys' inputs, so that they are derived again (what is
    /// charted changed, not the run).
    pub(super) fn forget_metric_keys(&mut self) {
        self.metric_keys = usize::MAX;
    }

    /// Whether a summary change of `run` is held back from the overview.
    pub(super) fn summary_held(&self, run: &Run) -> bool {
        let summary = run.counts.by_type.get("summary").copied().unwrap_or(0);
        self.summary_records != u64::MAX && summary != self.summary_records
    }
}

/// While a run grows, a change of its summary alone (a new one every step of a
/// fast writer) rebuilds the overview at most this often, in the growth's time;
/// the next tick shows one held back. Anything else in it is shown at once.
const SUMMARY_GAP_MS: i64 = 250;

/// What else is due after the chart keys were derived: the router groups the
/// system charts again ([`DeriveCx::group_system`], which may need a layout) and
/// rebuilds the overview's rows (which depend on the workspace's cursor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Due {
    pub regroup: bool,
    pub overview: bool,
}

/// What the derived lists are rebuilt from and into: the run shown (what they
/// were computed from is kept in it), the compared runs, the charts, the system
/// sidebar, the monitored process (live charts' titles), the panels (full screen
/// ends when no chart is left) and the grid's width (room for a title).
pub(super) struct DeriveCx<'a> {
    pub shown: &'a mut Shown,
    pub compare: &'a [Compared],
    pub charts: &'a mut Charts,
    pub system: &'a mut SystemPane,
    pub procs: &'a ProcsPane,
    pub panels: &'a mut Panels,
    pub grid_width: u16,
}

impl DeriveCx<'_> {
    fn host(&self) -> bool {
        matches!(self.shown.subject, Subject::Host { .. })
    }

    /// Derive the chart keys again when their inputs changed; say what else is
    /// due (the system charts, the overview), and note what it all comes from.
    /// `settle`: a summary change held back (see [`SUMMARY_GAP_MS`]) is due now.
    pub(super) fn refresh(&mut self, settle: bool) -> Due {
        let run = &self.shown.run;
        let meta = ["run", "config", "environment", "exit"]
            .iter()
            .filter_map(|k| run.counts.by_type.get(k))
            .sum::<u64>();
        let summary = run.counts.by_type.get("summary").copied().unwrap_or(0);
        // Compared runs count in the metric keys' signature (their keys are charted
        // too), with their number so removing one is noticed.
        let compared: usize = self
            .compare
            .iter()
            .map(|c| c.run.metrics.len() + c.run.metric_defs.len() + 1)
            .sum();
        #[allow(clippy::cast_possible_truncation)]
        let grown_ms = self.shown.source.last_growth.map(|t| (t * 1e3) as i64);
        let seen = self.shown.seen;
        let mut now = Seen {
            metric_keys: run.metrics.len() + compared,
            metric_defs: run.metric_defs.len(),
            system_keys: run.system.len(),
            meta_records: meta,
            summary_records: summary,
            overview_at_ms: seen.overview_at_ms,
            damage: (
                run.damage.skipped_spans,
                run.damage.skipped_bytes,
                run.breaks.spans().len(),
                run.unfinished_tail(),
            ),
        };
        let others = now.meta_records != seen.meta_records || now.damage != seen.damage;
        let mut overview = others || now.summary_records != seen.summary_records;
        if overview && !others && !settle {
            let held = grown_ms.is_some_and(|t| {
                seen.overview_at_ms != i64::MIN
                    && t.saturating_sub(seen.overview_at_ms) < SUMMARY_GAP_MS
            });
            if held {
                // Still to show: seen as before.
                now.summary_records = seen.summary_records;
                overview = false;
            }
        }
        if overview {
            now.overview_at_ms = grown_ms.unwrap_or(i64::MIN);
        }
        if now.metric_keys != seen.metric_keys || now.metric_defs != seen.metric_defs {
            self.derive_metric_keys();
        }
        self.shown.seen = now;
        Due {
            regroup: now.system_keys != seen.system_keys,
            overview,
        }
    }

    /// The chart keys of the main run and the compared ones. Keys hidden by
    /// define_metric(hidden=True) are counted, and charted only when the user
    /// asks (`H`); internal and media keys never are.
    fn derive_metric_keys(&mut self) {
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
        for c in self.compare {
            keys.extend(visible(&c.run));
        }
        self.charts.hidden = hidden.len();
        let keys: Vec<String> = keys.into_iter().collect();
        let focused = self.charts.focused_key().map(str::to_owned);
        self.charts.metric_keys = keys;
        let host = self.host();
        self.charts.refilter(host, focused.as_deref(), self.panels);
    }

    /// Group the system keys into charts again (new keys, or in the live monitor
    /// another monitored process); true when the charts appeared or went (the
    /// screen is to be laid out again, before [`DeriveCx::rekey_live`]).
    pub(super) fn group_system(&mut self) -> bool {
        // What the charts are grouped from now (a cleared process's keys coming
        // back must regroup again).
        self.shown.seen.system_keys = self.shown.run.system.len();
        let was_empty = self.charts.sys.is_empty();
        self.charts.sys = if self.host() {
            self.system.nodes_left_out = 0;
            self.live_charts()
        } else {
            let g = system::group_nodes(self.shown.run.system.keys().iter().map(String::as_str));
            self.system.nodes_left_out = g.nodes_left_out;
            g.charts
        };
        self.system.refilter(&self.charts.sys);
        was_empty != self.charts.sys.is_empty()
    }

    /// Live: the grid's items are the system charts, one id each. Charts appear
    /// over the first samples; focus on the first stays on the first.
    pub(super) fn rekey_live(&mut self) {
        if !self.host() {
            return;
        }
        let focused = (self.charts.grid.focus > 0)
            .then(|| self.charts.focused_key().map(str::to_owned))
            .flatten();
        self.charts.metric_keys = system::chart_ids(&self.charts.sys);
        self.charts.refilter(true, focused.as_deref(), self.panels);
    }

    /// The live monitor's charts: while a process is monitored, the process tree's
    /// first (the job the user picked), titled with its command and pid; then the
    /// host's.
    fn live_charts(&self) -> Vec<SysChart> {
        let keys = self.shown.run.system.keys();
        if !self.procs.told {
            // Not told which process the keys describe: grouped as they come.
            let keys = keys.iter().filter(|k| k.as_str() != "uptime");
            return system::group(keys.map(String::as_str));
        }
        // Uptime is a fact of the header, not a chart.
        let host = keys
            .iter()
            .filter(|k| !system::is_process_key(k) && k.as_str() != "uptime");
        let mut charts = Vec::new();
        if let Some((pid, cmd)) = &self.procs.monitored {
            let proc_keys = keys.iter().filter(|k| system::is_process_key(k));
            // Room for a title in one grid cell: its borders and the corner value
            // (`571MiB`, `22.82GiB`) take up to 13 columns. The command is
            // shortened at a word so the pid stays in view.
            let cell_w = self.grid_width / self.charts.grid.cols.max(1);
            let room = usize::from(cell_w.saturating_sub(13));
            for mut c in system::group(proc_keys.map(String::as_str)) {
                c.title = process_title(&c.title, *pid, cmd, room);
                charts.push(c);
            }
        }
        charts.extend(system::group(host.map(String::as_str)));
        charts
    }
}

/// A process chart's title (`title` its family's) in `room` columns: with the
/// command shortened and the pid where they fit.
fn process_title(title: &str, pid: u32, cmd: &str, room: usize) -> String {
    // The process's share of memory (the host's `Memory` chart's line).
    let t = if title == "Memory" {
        "Process Memory".to_owned()
    } else if title.starts_with("Process ") {
        title.to_owned()
    } else if let Some(m) = title.strip_prefix("GPU Process ") {
        format!("Process GPU {m}")
    } else {
        format!("Process {title}")
    };
    let pid_s = format!(" ({pid})");
    let fixed = t.chars().count() + 2 + pid_s.chars().count();
    let budget = room.saturating_sub(fixed);
    if budget >= 6 {
        let cmd = crate::ui::host::procs::short_command(cmd, budget);
        format!("{t}: {cmd}{pid_s}")
    } else if t.chars().count() + pid_s.chars().count() <= room {
        // Too narrow for any of the command: the pid names it.
        format!("{t}{pid_s}")
    } else {
        // Too narrow for the pid too (a cut pid would name another
        // process): the process table's header names the process.
        t
    }
}

/// The filters of the charts and of the system sidebar, applied again.
impl Charts {
    /// The shown charts through the filter again (in the live monitor, `host`, a
    /// chart also passes by one of its series' keys), the focus on `keep` if it is
    /// still shown; full screen ends when no chart is left.
    pub(crate) fn refilter(&mut self, host: bool, keep: Option<&str>, panels: &mut Panels) {
        let f = &self.filter;
        self.shown = self
            .metric_keys
            .iter()
            .enumerate()
            .filter(|(i, k)| {
                f.matches(k)
                    || (host
                        && self
                            .sys
                            .get(*i)
                            .is_some_and(|c| c.series.iter().any(|s| f.matches(&s.key))))
            })
            .map(|(i, _)| i)
            .collect();
        self.grid.focus = keep
            .and_then(|k| self.shown.iter().position(|&i| self.metric_keys[i] == k))
            .unwrap_or(0);
        self.grid.clamp(self.shown.len());
        self.sections_refiltered(host, keep.is_some());
        if self.shown.is_empty() {
            panels.fullscreen = false;
        }
    }
}

impl SystemPane {
    /// The system charts (`sys`) through the sidebar's filter again, the scroll
    /// kept within them.
    pub(crate) fn refilter(&mut self, sys: &[SysChart]) {
        let f = &self.filter;
        self.shown = sys
            .iter()
            .enumerate()
            .filter(|(_, c)| f.matches(&c.title) || c.series.iter().any(|s| f.matches(&s.key)))
            .map(|(i, _)| i)
            .collect();
        self.picked = (self.shown.iter())
            .map(|&i| system::picked_nodes(&sys[i], f))
            .collect();
        self.scroll = self.scroll.min(self.shown.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::{App, Options};

    #[test]
    fn refresh_says_what_is_due_only_when_its_inputs_changed() {
        let mut app = App::new(Options::default());
        assert_eq!(app.derive_cx().refresh(false), Due::default());
        app.shown.run.system.push("system.cpu", 1.0, 5.0);
        assert_eq!(
            app.derive_cx().refresh(false),
            Due {
                regroup: true,
                overview: false
            }
        );
        assert_eq!(app.derive_cx().refresh(false), Due::default());
        app.shown.run.counts.by_type.insert("config", 1);
        assert_eq!(
            app.derive_cx().refresh(false),
            Due {
                regroup: false,
                overview: true
            }
        );
    }

    /// The summary's value for `key` as the overview shows it.
    fn summary_shown(app: &App, key: &str) -> Option<f64> {
        (0..4)
            .flat_map(|i| app.panes.overview.section_rows(i))
            .find_map(|r| match r {
                crate::ui::overview::Row::Item(k, v) if k == key => v.parse().ok(),
                _ => None,
            })
    }

    /// A summary record more: `loss` = `v`, the run grown at `at` (None: not growing).
    fn summary_record(app: &mut App, v: f64, at: Option<f64>) {
        let run = &mut app.shown.run;
        *run.counts.by_type.entry("summary").or_insert(0) += 1;
        run.summary.set_number("loss", v);
        app.shown.source.last_growth = at;
        app.refresh();
    }

    #[test]
    fn a_growing_run_s_summary_alone_is_shown_again_at_most_every_quarter_second() {
        let mut app = App::new(Options::default());
        // Not growing (a file read whole): every change at once.
        summary_record(&mut app, 1.0, None);
        assert_eq!(summary_shown(&app, "loss"), Some(1.0));
        summary_record(&mut app, 2.0, None);
        assert_eq!(summary_shown(&app, "loss"), Some(2.0));
        // Growing: the first change at once, the next ones within the gap held.
        summary_record(&mut app, 3.0, Some(1000.0));
        assert_eq!(summary_shown(&app, "loss"), Some(3.0));
        summary_record(&mut app, 4.0, Some(1000.1));
        summary_record(&mut app, 5.0, Some(1000.2));
        assert_eq!(summary_shown(&app, "loss"), Some(3.0));
        assert!(app.shown.seen.summary_held(&app.shown.run));
        // The gap over (in the growth's time): shown.
        summary_record(&mut app, 6.0, Some(1000.3));
        assert_eq!(summary_shown(&app, "loss"), Some(6.0));
        // Held, then the writer stops: the next tick shows it, and redraws.
        summary_record(&mut app, 7.0, Some(1000.35));
        assert_eq!(summary_shown(&app, "loss"), Some(6.0));
        assert!(app.update(crate::msg::Msg::Tick(2000.0)).redraw);
        assert_eq!(summary_shown(&app, "loss"), Some(7.0));
        assert!(!app.shown.seen.summary_held(&app.shown.run));
        // Anything else in the overview (a config record) is shown at once, a
        // summary held (the tick's rebuild was 50 ms before) with it.
        summary_record(&mut app, 8.0, Some(1000.4));
        assert_eq!(summary_shown(&app, "loss"), Some(7.0));
        app.shown.run.summary.set_number("loss", 9.0);
        *app.shown.run.counts.by_type.entry("summary").or_insert(0) += 1;
        app.shown.run.counts.by_type.insert("config", 1);
        app.shown.source.last_growth = Some(1000.45);
        app.refresh();
        assert_eq!(summary_shown(&app, "loss"), Some(9.0));
    }

    #[test]
    fn nodes_past_the_bound_are_said_in_the_sidebar_header() {
        let mut app = App::new(Options::default());
        app.update(crate::msg::Msg::Resize(200, 60));
        for n in 0..system::MAX_NODES + 6 {
            app.shown
                .run
                .system
                .push(&format!("cpu/l:node-{n}"), 1.0, 5.0);
        }
        app.refresh();
        assert_eq!(app.panes.system.nodes_left_out, 6);
        assert_eq!(app.charts.sys[0].series.len(), system::MAX_NODES);
        let area = ratatui::layout::Rect::new(0, 0, 200, 60);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        crate::ui::render::render_buffer(&mut buf, area, &app);
        let rows: Vec<String> = (0..area.height)
            .map(|y| (0..area.width).map(|x| buf[(x, y)].symbol()).collect())
            .collect();
        assert!(
            rows.iter().any(|r| r.contains("+6 nodes not drawn")),
            "{}",
            rows.join("\n")
        );
    }

    #[test]
    fn new_metric_keys_are_charted_and_hidden_ones_counted() {
        let mut app = App::new(Options::default());
        app.shown.run.metrics.push("loss", 1.0, 0.5);
        app.shown.run.metrics.push("_runtime", 1.0, 3.0);
        app.derive_cx().refresh(false);
        assert_eq!(app.charts.metric_keys, ["loss"]);
        assert_eq!(app.charts.shown, [0]);
    }

    #[test]
    fn a_process_chart_title_keeps_the_pid_before_the_command() {
        let cmd = "python train.py --config big.yaml";
        assert_eq!(
            process_title("CPU Utilization", 42, cmd, 48),
            "Process CPU Utilization: python train.py… (42)"
        );
        assert_eq!(process_title("Memory", 42, cmd, 26), "Process Memory (42)");
        assert_eq!(
            process_title("GPU Process Memory", 42, cmd, 10),
            "Process GPU Memory"
        );
    }
}
