//! Application state and `update`: every `Msg` goes through [`App::update`], which
//! changes state and returns an [`Effect`]: whether to redraw or quit, and the
//! [`Cmd`]s the runtime is to carry out (start a reader, list runs, load an image).
//! It never does I/O. Rendering reads the state (`ui::render`).
//!
//! `App` routes; the state is its features': the run shown, where it comes from
//! and what is being looked at ([`Shown`], `source.rs`), the screen and the layout
//! computed on resize and panel changes ([`render::Screen`]), which the view draws
//! with and the mouse hit-tests against, the charts ([`charts::Charts`]), the side
//! panes ([`Panes`]), the live monitor's ([`host::Host`]), the runs beside
//! the one shown ([`workspace::runs::Runs`]), and the overlay in front
//! ([`Overlay`]), which holds its own state.

mod act;
pub mod action;
pub mod charts;
pub mod cmd;
pub mod console;
mod derive;
pub mod filter;
pub mod host;
pub mod inspector;
pub mod keymap;
pub mod layout;
mod mouse;
pub mod overlay;
mod overview;
pub mod palette;
pub mod panels;
pub mod prompt;
pub mod query;
pub mod render;
mod scroll;
pub mod settings;
mod source;
mod status;
pub mod system;
mod theme;
pub mod widget;
pub mod workspace;

use std::path::{Path, PathBuf};

use ratatui::layout::Rect;

use crate::msg::Msg;
use crate::store::metrics::MetricStore;
use crate::store::Run;
use action::Action;
pub use cmd::Cmd;
pub use console::ConsolePane;
use derive::Seen;
use keymap::{Keymap, Mode};
use layout::Areas;
use overlay::media::MediaCx;
use overlay::stats;
pub use overlay::Overlay;
pub use overview::{OverviewLayout, OverviewPane, Row, Section};
use panels::Panels;
pub use scroll::Limits;
pub use source::{LiveState, Shown, SourceState, LIVE_WINDOW};
use workspace::cx::{Then, WsCx};
pub use system::SystemPane;
pub use workspace::runs::{Compared, WsTag};
use workspace::runs::{Runs, Tagged};

/// Most points one live series keeps (its ring over the window).
pub(crate) const LIVE_SERIES_CAP: usize = 4096;

/// What the loop should do after an update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effect {
    pub redraw: bool,
    pub quit: bool,
    /// Work for the runtime, in order; each answer comes back as a `Msg`.
    pub cmds: Vec<Cmd>,
}

impl Effect {
    const NONE: Effect = Effect {
        redraw: false,
        quit: false,
        cmds: Vec::new(),
    };
    const REDRAW: Effect = Effect {
        redraw: true,
        quit: false,
        cmds: Vec::new(),
    };
    const QUIT: Effect = Effect {
        redraw: false,
        quit: true,
        cmds: Vec::new(),
    };
}

/// Which filter the user is typing into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterTarget {
    Metrics,
    System,
    Overview,
    Console,
    /// The live monitor's process table.
    Procs,
    /// The workspace's runs filter (`f`).
    Runs,
    /// The workspace's group-by prompt (`G`).
    Group,
    /// The workspace's summary-column prompt (`v`).
    Column,
    /// The statistics table's metric filter (`/` in `T`).
    Stats,
    /// The record inspector's text filter (`/` there).
    Records,
}

/// A prefix key waiting for its digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Columns,
    Rows,
}

/// What the viewer shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Subject {
    /// A run read from its `.wandb` file.
    Run,
    /// The live host monitor: the sampler's readings, charted over the last
    /// `window` seconds; the grid's items are the grouped system charts.
    Host { window: f64 },
}

/// The side panes' own state (whether each is shown is [`Panels`]').
#[derive(Debug, Clone, Default)]
pub struct Panes {
    pub overview: OverviewPane,
    pub system: SystemPane,
    pub console: ConsolePane,
    /// The media pane and viewer (`3`): the image selected and loaded.
    pub media: overlay::media::MediaState,
}

/// Options an App starts with.
#[derive(Debug, Clone)]
pub struct Options {
    pub keymap: Keymap,
    /// Seconds of quiet before a run without exit record is shown as possibly crashed.
    pub stale_after: f64,
    /// Use colour (false under `NO_COLOR`).
    pub color: bool,
    /// The terminal shows 24-bit colour (else RGB is drawn as the nearest of 256).
    pub true_color: bool,
    /// Most points kept per series.
    pub max_points: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            keymap: Keymap::builtin(),
            stale_after: 120.0,
            color: true,
            true_color: true,
            max_points: crate::store::metrics::DEFAULT_SERIES_CAP,
        }
    }
}

/// The whole state of the viewer: a router over each feature's own state.
#[derive(Debug, Clone)]
pub struct App {
    /// The run shown, where its records come from, and what is being looked at.
    pub shown: source::Shown,
    /// The terminal: its size, the panes' areas and scroll limits, colours, keys.
    pub screen: render::Screen,
    /// The metric grid, the system charts, and how each chart is drawn.
    pub charts: charts::Charts,
    /// The side panes' own state: overview, system, console, media.
    pub panes: Panes,
    /// Live: the header's readings and the process table.
    pub host: host::Host,
    /// The runs next to the one shown: the picker, the workspace, compared runs.
    pub runs: workspace::runs::Runs,
    pub overlay: Overlay,
    pub panels: Panels,
    /// The statistics table's order and filter (`T`).
    pub stats: stats::StatsTable,
    pub filter_target: Option<FilterTarget>,
    /// Where the settings are saved, and what was last written.
    settings_io: settings::Persist,
    /// What the features asked for during the update in progress (or a request
    /// before the loop starts): commands handed out with its `Effect` (or by
    /// [`App::take_cmds`]), and the work [`App::settle`] does.
    asks: Asks,
}

/// What a feature asks of the router beyond changing its own state: commands for
/// the runtime, and the work that spans features (laying the screen out again,
/// rebuilding the lists derived from the run), which the router does once the
/// feature returns ([`App::settle`]). A feature gets it as `&mut Asks` with what
/// else it may see, never the whole `App`.
#[derive(Debug, Clone, Default)]
pub struct Asks {
    cmds: Vec<Cmd>,
    relayout: bool,
    refresh: bool,
}

impl Asks {
    /// Ask the runtime for `cmd` (its answer comes back as a `Msg`).
    pub fn cmd(&mut self, cmd: Cmd) {
        self.cmds.push(cmd);
    }

    /// Ask for the screen to be laid out again (a pane appeared, the grid changed).
    pub fn relayout(&mut self) {
        self.relayout = true;
    }

    /// Ask for the lists derived from the run (chart keys, overview rows) to be
    /// rebuilt.
    pub fn refresh(&mut self) {
        self.refresh = true;
    }
}

impl App {
    /// An empty viewer.
    #[must_use]
    pub fn new(opts: Options) -> Self {
        let mut app = Self {
            shown: source::Shown {
                run: new_run(opts.max_points),
                source: SourceState::default(),
                subject: Subject::Run,
                now: 0.0,
                stale_after: opts.stale_after,
                max_points: opts.max_points,
                seen: Seen::NEVER,
                tag: 0,
                last_tag: 0,
                main_reading: None,
            },
            screen: render::Screen {
                size: Rect::default(),
                areas: Areas::default(),
                limits: Limits::default(),
                color: opts.color,
                true_color: opts.true_color,
                palette: palette::Palette::Default,
                keymap: opts.keymap,
            },
            charts: charts::Charts {
                band: true,
                ..charts::Charts::default()
            },
            panes: Panes::default(),
            host: host::Host {
                overview_at: (f64::NEG_INFINITY, 0),
                ..host::Host::default()
            },
            runs: workspace::runs::Runs::default(),
            overlay: Overlay::None,
            panels: Panels::default(),
            stats: stats::StatsTable::default(),
            filter_target: None,
            settings_io: settings::Persist::default(),
            asks: Asks::default(),
        };
        app.refresh();
        app
    }

    /// A viewer whose system series are rings over the last `window` seconds (the
    /// live host monitor feeds it `Msg::Sample`).
    #[must_use]
    pub fn live(opts: Options, window: f64) -> Self {
        let mut app = Self::new(opts);
        // Samples go to the system store, a ring over the window; the main grid
        // draws its grouped charts (all GPUs' utilisation in one chart, ...).
        app.shown.run.system = MetricStore::windowed(LIVE_SERIES_CAP, window);
        app.shown.subject = Subject::Host { window };
        // The grid shows the grouped system charts, so the sidebar would repeat it;
        // the overview shows where the screen has room for it (the header has the
        // host's facts), until `[` says otherwise.
        app.panels.right = false;
        app.panels.auto_left = true;
        app
    }

    /// Whether this is the live host monitor.
    #[must_use]
    pub fn is_host(&self) -> bool {
        matches!(self.shown.subject, Subject::Host { .. })
    }

    /// Describe the monitored host (live mode): its name, and facts shown in the
    /// overview's Environment section (CPU, memory, GPUs, OS, unavailable families;
    /// sizes as numbers of bytes) and Config section (sampler options).
    pub fn set_host(
        &mut self,
        hostname: &str,
        environment: serde_json::Map<String, serde_json::Value>,
        config: serde_json::Map<String, serde_json::Value>,
    ) {
        self.shown.run.info.display_name = hostname.to_owned();
        self.shown.run.info.host = hostname.to_owned();
        self.shown.run.info.project = "live host monitor".to_owned();
        self.shown.run.environment = environment;
        for (k, v) in &config {
            self.shown.run.config.set_json(k, &v.to_string());
        }
        self.set_overview(self.overview_rows());
        self.update_host();
    }

    /// Live: gather the header's readings again, and lay out again when its height
    /// changed (a disk or a GPU appeared).
    pub(crate) fn update_host(&mut self) {
        let before = self.panel_flags();
        self.host.header = host::header(&self.shown.run.system, &self.shown.run.environment);
        if self.panel_flags() != before {
            self.relayout();
        }
    }

    /// Commands asked for outside an update ([`App::request_open`],
    /// [`App::request_compare`]), for the runtime to carry out before the loop starts.
    pub fn take_cmds(&mut self) -> Vec<Cmd> {
        self.settle();
        std::mem::take(&mut self.asks.cmds)
    }

    /// Do what the features asked of the router: the derived lists rebuilt, then
    /// the layout (which depends on them).
    pub(crate) fn settle(&mut self) {
        if std::mem::take(&mut self.asks.refresh) {
            self.refresh();
        }
        if std::mem::take(&mut self.asks.relayout) {
            self.relayout();
        }
    }

    /// The key-map mode in force: typing into a filter, else the overlay's, else
    /// full screen or normal.
    #[must_use]
    pub fn mode(&self) -> Mode {
        if self.filter_target.is_some() {
            return Mode::Filter;
        }
        match self.overlay.mode() {
            Some(m) => m,
            None if self.panels.fullscreen => Mode::Fullscreen,
            None => Mode::Normal,
        }
    }

    /// The focused metric key.
    #[must_use]
    pub fn focused_key(&self) -> Option<&str> {
        self.charts.focused_key()
    }

    /// Apply one message: the new state is in `self`; what the loop is to do (and
    /// the commands for the runtime) is in the `Effect`.
    pub fn update(&mut self, msg: Msg) -> Effect {
        // Only the user's input changes settings; a tick saves what changed.
        let input = matches!(msg, Msg::Key(_) | Msg::Mouse(_));
        let key = matches!(msg, Msg::Key(_));
        let tick = matches!(msg, Msg::Tick(_));
        let mut fx = self.step(msg);
        self.settle();
        if input {
            fx.redraw |= self.note_settings(key);
        } else if tick {
            self.save_settings_due();
        }
        // Scroll limits follow the areas and the contents, which most messages change.
        if fx.redraw {
            self.update_limits();
        }
        if fx.redraw || tick {
            self.request_smoothing();
        }
        self.settle();
        fx.cmds.append(&mut self.asks.cmds);
        fx
    }

    fn step(&mut self, msg: Msg) -> Effect {
        match msg {
            Msg::Key(k) => self.on_key(k),
            // A full-screen overlay (the inspector) is keys only: the panes under
            // it take no clicks.
            Msg::Mouse(_) if self.overlay.full_screen() => Effect::NONE,
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Resize(w, h) => {
                self.screen.size = Rect::new(0, 0, w, h);
                self.relayout();
                // The inspector's list holds another number of rows.
                if let Some(i) = self.overlay.inspector_mut() {
                    i.ask(self.screen.size, &mut self.asks);
                }
                Effect::REDRAW
            }
            Msg::Opened {
                path,
                len,
                modified,
            } => self.on_opened(path, len, modified),
            Msg::Waiting(dir) => self.on_waiting(dir),
            Msg::Run(batch) => {
                self.apply_batch(batch);
                // A media pane or viewer with nothing selected yet shows the newest.
                let shown =
                    self.screen.areas.media.is_some() || matches!(self.overlay, Overlay::Media);
                let cx = &mut MediaCx::new(&self.shown, &mut self.asks);
                self.panes.media.follow(shown, cx);
                Effect::REDRAW
            }
            Msg::Tick(now) => {
                let before = self.live_state();
                self.shown.now = now;
                let refiltered = self.ws(Runs::workspace_tick);
                let after = self.live_state();
                Effect {
                    redraw: refiltered
                        || before != after
                        || matches!(after, LiveState::Running(_) | LiveState::MaybeCrashed(_)),
                    ..Effect::NONE
                }
            }
            Msg::SourceError(e) => {
                self.shown.source.error = Some(crate::text::sanitize(&e));
                Effect::REDRAW
            }
            Msg::Unreadable(e) => {
                self.shown.source.unreadable = Some(crate::text::sanitize(&e));
                Effect::REDRAW
            }
            Msg::Sample(s) => {
                self.apply_sample(&s);
                Effect::REDRAW
            }
            Msg::Signal(_) => Effect::QUIT,
            // The runtime owns the terminal and handles these before the app.
            Msg::Suspend | Msg::Continued => Effect::NONE,
            Msg::Tagged(tag, m) => self.on_tagged(tag, m),
            Msg::RunsCounted { wandb_dir, count } => self.on_runs_counted(&wandb_dir, count),
            Msg::RunsListed { run_dir, runs } => self.on_runs_listed(&run_dir, runs),
            Msg::ImageLoaded { path, image } => self.panes.media.on_image(&path, image),
            Msg::DirsChecked { gone } => self.ws(|r, cx| r.on_dirs_checked(cx, &gone)),
            Msg::Indexed { wandb_dir, entries } => {
                self.ws(|r, cx| r.on_indexed(cx, &wandb_dir, entries))
            }
            Msg::IndexProgress { wandb_dir, entries } => {
                self.ws(|r, cx| r.on_index_progress(cx, &wandb_dir, entries))
            }
            Msg::IndexUnchanged { wandb_dir } => self.runs.on_index_unchanged(&wandb_dir),
            Msg::SettingsWritten { generation, error } => {
                self.on_settings_written(generation, error.as_deref())
            }
            Msg::WorkspaceWritten { generation, error } => {
                self.runs.on_workspace_written(generation, error.is_none())
            }
            Msg::Procs(t) if self.is_host() => {
                self.host.procs.on_table(&t, self.screen.areas.procs)
            }
            Msg::Monitoring(m) if self.is_host() => self.on_monitoring(m),
            Msg::Procs(_) | Msg::Monitoring(_) => Effect::NONE,
            Msg::Records(page) => {
                (self.overlay.inspector_mut()).map_or(Effect::NONE, |i| i.on_records(*page))
            }
            Msg::Smoothed(r) => self.charts.on_smoothed(*r, &mut self.shown.source.error),
        }
    }

    /// Open the workspace of `wandb_dir` (see [`workspace::runs::Runs::open_workspace`]).
    pub fn open_workspace(
        &mut self,
        wandb_dir: PathBuf,
        saved: Option<crate::msg::WorkspaceSaved>,
        main: Option<PathBuf>,
        alone: bool,
    ) {
        self.ws(|r, cx| r.open_workspace(cx, wandb_dir, saved, main, alone));
        self.settle();
    }

    /// Ask the runtime to start the main reader on a user path (see
    /// [`App::take_cmds`]).
    pub fn request_open(&mut self, path: PathBuf) {
        self.asks.cmd(self.shown.start_reader(path));
    }

    /// Draw the run at `path` beside the main one (see
    /// [`workspace::runs::Runs::request_compare`]).
    pub fn request_compare(&mut self, path: PathBuf, dir: PathBuf) {
        self.ws(|r, cx| r.request_compare(cx, path, dir));
        self.settle();
    }

    /// Run one of the runs' methods with what it may see and change, then do what
    /// it left for the router.
    fn ws<R>(&mut self, f: impl FnOnce(&mut Runs, &mut WsCx) -> R) -> R {
        let mut cx = WsCx {
            shown: &mut self.shown,
            panels: &mut self.panels,
            screen: &self.screen,
            filter_target: &mut self.filter_target,
            overview: &mut self.panes.overview,
            asks: &mut self.asks,
            then: Then::default(),
        };
        let out = f(&mut self.runs, &mut cx);
        let then = cx.then;
        if then.fresh_view {
            self.charts.zoom.clear();
            self.charts.grid.focus = 0;
            self.panels.fullscreen = false;
            self.panes.overview.home();
            self.panes.system.scroll = 0;
            self.panes.console.back = 0;
        }
        if let Some(open) = then.picker {
            self.overlay = if open { Overlay::Runs } else { Overlay::None };
        }
        if then.show_runs_pane {
            if self.screen.areas.left.is_none() {
                self.toggle_sidebar(false);
            }
            if self.screen.areas.left.is_some() {
                self.panels.focus = panels::Pane::Left;
            }
        }
        if let Some(fresh) = then.overview {
            self.sync_overview(fresh);
        }
        out
    }

    /// Keep the overview on its subject (see
    /// [`workspace::runs::Runs::follow_overview`]).
    pub(crate) fn sync_overview(&mut self, fresh: bool) {
        if let Some(moved) = self.runs.follow_overview(fresh) {
            self.set_overview(self.overview_rows());
            if moved {
                self.panes.overview.home();
            }
        }
    }

    /// A reader's message: the main run's applied as the router's own (then its
    /// segments cut again after a batch), a compared run's by the runs.
    fn on_tagged(&mut self, tag: u64, m: Box<Msg>) -> Effect {
        match self.ws(|r, cx| r.on_tagged(cx, tag, m)) {
            Tagged::Done(fx) => fx,
            Tagged::Main(m) => {
                let batch = matches!(*m, Msg::Run(_));
                let fx = self.step(*m);
                if batch {
                    self.ws(Runs::restitch_main);
                }
                fx
            }
        }
    }

    /// The picker's list came: the keys that waited for it are applied.
    fn on_runs_listed(&mut self, run_dir: &Path, runs: Vec<crate::msg::RunEntry>) -> Effect {
        let Some(waiting) = self.runs.on_runs_listed(&mut self.shown, run_dir, runs) else {
            return Effect::NONE;
        };
        let mut fx = Effect::REDRAW;
        for a in waiting {
            fx.quit |= self.act(a).quit;
            // Each as if pressed now: the next sees what this one changed.
            self.settle();
        }
        fx
    }
}

/// Routing to the charts, the panes and the live monitor where a message or a
/// key changes several of them.
impl App {
    /// The overview's facts and sections now: of the run highlighted in the
    /// workspace's runs list while it is shown, else of the run (or the host).
    pub(crate) fn overview_rows(&self) -> (Vec<Row>, overview::SectionRows) {
        overview::rows_of(
            self.runs.overview_subject(),
            &self.shown.run,
            self.is_host(),
            self.host.procs.process_keys_shown(),
        )
    }

    /// What chart `key` draws of `run`'s smoothed series (`run` the main run or a
    /// compared one).
    #[must_use]
    pub fn smoothed_line(&self, run: &Run, key: &str) -> charts::smoothing::SmoothedLine<'_> {
        let cx = charts::smoothing::SmoothCx {
            shown: &self.shown,
            compare: &self.runs.compare,
        };
        self.charts.smoothed_line(&cx, run, key)
    }

    /// Ask for the smoothed series the charts on screen lack (see
    /// [`charts::Charts::request_smoothing`]).
    fn request_smoothing(&mut self) {
        let cx = charts::smoothing::SmoothCx {
            shown: &self.shown,
            compare: &self.runs.compare,
        };
        let on = (&self.panels, self.screen.areas.grid);
        self.charts.request_smoothing(&cx, on, &mut self.asks);
    }

    /// The lists derived from the run, rebuilt where what they come from changed
    /// (see [`derive::DeriveCx::refresh`]): the chart keys, then the system charts,
    /// then the overview's rows.
    pub(crate) fn refresh(&mut self) {
        let due = self.derive_cx().refresh();
        if due.regroup {
            self.regroup();
        }
        if due.overview {
            self.set_overview(self.overview_rows());
        }
    }

    /// Derive the chart keys again (what is charted changed, not the run).
    pub(super) fn rederive_metrics(&mut self) {
        self.shown.seen.forget_metric_keys();
        self.refresh();
    }

    /// Group the system keys into charts again, laid out again when they
    /// appeared or went; live, the grid's items follow them.
    pub(crate) fn regroup(&mut self) {
        if self.derive_cx().group_system() {
            self.relayout();
        }
        self.derive_cx().rekey_live();
    }

    fn derive_cx(&mut self) -> derive::DeriveCx<'_> {
        derive::DeriveCx {
            shown: &mut self.shown,
            compare: &self.runs.compare,
            charts: &mut self.charts,
            system: &mut self.panes.system,
            procs: &self.host.procs,
            panels: &mut self.panels,
            grid_width: self.screen.areas.grid.width,
        }
    }

    pub(crate) fn set_overview(&mut self, (facts, all): (Vec<Row>, overview::SectionRows)) {
        self.panes.overview.set(facts, all);
    }

    /// `Msg::Monitoring`: the runtime says which process tree feeds the process
    /// metrics. Another process than before clears the process series (no chart
    /// mixes two) and the overview's facts; the charts are grouped again.
    fn on_monitoring(&mut self, m: Option<(u32, String)>) -> Effect {
        if self.host.procs.set_monitored(m) {
            host::procs::clear_process_series(&mut self.shown);
            self.set_overview(self.overview_rows());
        }
        self.regroup();
        Effect::REDRAW
    }
}

/// The overlays' routing: each arm hands the overlay in front what it may see and
/// change, and applies what it returns.
impl App {
    /// The overlay in front takes the action (None: it lets it through): those
    /// that see more than every overlay's context here, the others in
    /// [`Overlay::act`]. The table's filter is typed with every filter's keys.
    pub(crate) fn act_overlay(&mut self, a: Action) -> Option<Effect> {
        let typing = self.filter_target.is_some();
        let out = match &mut self.overlay {
            Overlay::Runs => return Some(self.ws(|r, cx| r.act_picker(cx, a))),
            Overlay::Media => {
                let cx = &mut MediaCx::new(&self.shown, &mut self.asks);
                self.panes.media.act(a, cx)
            }
            Overlay::Stats(_) if !typing => self.act_stats(a),
            o => o.act(
                a,
                overlay::OverlayCx {
                    size: self.screen.size,
                    help_max: self.screen.limits.help_max,
                    filter_target: &mut self.filter_target,
                    asks: &mut self.asks,
                },
            )?,
        };
        Some(self.apply(out))
    }

    /// An overlay typed into (the metric picker) takes the keys themselves.
    pub(crate) fn key_overlay(&mut self, key: &keymap::Key) -> Option<Effect> {
        let Overlay::XAxis(p) = &mut self.overlay else {
            return None;
        };
        let out = p.on_key(key, &mut self.charts, &self.screen.keymap);
        Some(self.apply(out))
    }

    fn apply(&mut self, out: overlay::Outcome) -> Effect {
        match out {
            overlay::Outcome::Stay(fx) => fx,
            overlay::Outcome::Close => {
                self.overlay = Overlay::None;
                Effect::REDRAW
            }
        }
    }

    /// Open the inspector on `path` (`standalone`: `leet inspect`, where going back
    /// quits). The commands are handed out by the next update or `take_cmds`.
    pub fn open_inspector(&mut self, path: std::path::PathBuf, standalone: bool) {
        let i = inspector::Inspector::open(path, standalone, self.screen.size, &mut self.asks);
        self.overlay = Overlay::Inspector(Box::new(i));
    }

    /// `i` in the viewer: the inspector on the run's file, or closed.
    pub(crate) fn toggle_inspector(&mut self) -> Effect {
        if let Some(i) = self.overlay.inspector() {
            let out = i.close(&mut self.asks);
            return self.apply(out);
        }
        let Some(file) = self.shown.source.file.clone() else {
            return Effect::NONE;
        };
        self.open_inspector(file, false);
        Effect::REDRAW
    }

    /// `T`: open the statistics table (a run's metrics; the live monitor has none).
    pub(crate) fn open_stats(&mut self) -> Effect {
        if self.is_host() {
            return Effect::NONE;
        }
        self.overlay = Overlay::Stats(stats::StatsCursor::default());
        Effect::REDRAW
    }

    fn act_stats(&mut self, a: Action) -> overlay::Outcome {
        let (rows, runs) = (self.stats_rows().len(), self.stats_runs().len());
        let Overlay::Stats(cur) = &mut self.overlay else {
            return overlay::Outcome::Stay(Effect::NONE);
        };
        let cx = stats::StatsCx {
            table: &mut self.stats,
            rows,
            runs,
            height: self.screen.size.height,
            filter_target: &mut self.filter_target,
        };
        cur.act(a, cx)
    }

    /// The runs the statistics table reads.
    fn stats_drawn(&self) -> stats::Drawn<'_> {
        stats::Drawn {
            main: &self.shown.run,
            label: self.shown.run_label(),
            dir: self.shown.main_run_dir(),
            runs: &self.runs,
        }
    }

    /// The statistics table's rows: the charted metrics passing its filter, sorted.
    #[must_use]
    pub fn stats_rows(&self) -> Vec<stats::StatsRow> {
        self.stats
            .rows(&self.stats_drawn(), &self.charts.metric_keys)
    }

    /// The statistics table's column groups (a resumed run's segments are one).
    #[must_use]
    pub fn stats_runs(&self) -> Vec<stats::StatsRun> {
        self.stats_drawn().runs()
    }

    /// `[shown/all]` metrics of the statistics table.
    #[must_use]
    pub fn stats_count(&self) -> String {
        self.stats
            .count(&self.stats_drawn(), &self.charts.metric_keys)
    }

    /// `x`: the focused chart's next x; after wall time, the metric picker.
    pub(crate) fn cycle_x_axis(&mut self) -> Effect {
        let host = self.is_host();
        let (fx, picker) = self.charts.cycle_x_axis(host, &self.shown.run);
        if let Some(p) = picker {
            self.overlay = Overlay::XAxis(p);
        }
        fx
    }

    /// `3`: the media pane beside the charts, shown on the newest image, or hidden.
    /// A screen without room for it shows the image in the viewer instead.
    pub(crate) fn toggle_media(&mut self) {
        self.panels.media = self.screen.areas.media.is_none();
        self.relayout();
        if !self.panels.media {
            return;
        }
        let cx = &mut MediaCx::new(&self.shown, &mut self.asks);
        self.panes.media.select_newest(cx);
        if self.screen.areas.media.is_some() {
            self.panels.focus = panels::Pane::Media;
        } else {
            self.panels.media = false;
            self.relayout();
            self.overlay = Overlay::Media;
        }
    }

    /// `enter` on the media pane: the image in the viewer (esc comes back).
    pub(crate) fn media_fullscreen(&mut self) {
        self.overlay = Overlay::Media;
        let cx = &mut MediaCx::new(&self.shown, &mut self.asks);
        self.panes.media.load(cx);
    }

    /// Move through the media pane's images (false: not a key of it).
    pub(crate) fn step_media(&mut self, a: Action) -> bool {
        let cx = &mut MediaCx::new(&self.shown, &mut self.asks);
        self.panes.media.step(a, cx)
    }
}

/// The main run, then the compared runs: the runs a metric chart draws (a
/// context features take instead of the `App`).
pub(crate) fn drawn_runs<'a>(main: &'a Run, runs: &'a workspace::runs::Runs) -> Vec<&'a Run> {
    std::iter::once(main)
        .chain(runs.compare.iter().map(|c| &c.run))
        .collect()
}

/// An empty run with the viewer's store limits.
fn new_run(max_points: usize) -> Run {
    let mut run = Run::new();
    run.metrics = MetricStore::new(crate::store::metrics::DEFAULT_BUDGET, max_points);
    run
}
