//! Application state and `update`: every `Msg` goes through [`App::update`], which
//! changes state and returns an [`Effect`]: whether to redraw or quit, and the
//! [`Cmd`]s the runtime is to carry out (start a reader, list runs, load an image).
//! It never does I/O. Rendering reads the state (`ui::render`).
//!
//! The state is split by concern: the run and where it comes from ([`SourceState`],
//! `source.rs`), what is being looked at ([`Subject`]), the overlay in front
//! ([`Overlay`]), each pane's own state ([`ChartsPane`], [`OverviewPane`],
//! [`SystemPane`], [`ConsolePane`]), and the layout computed on resize and panel
//! changes ([`layout::Areas`], [`Limits`]), which the view draws with and the mouse
//! hit-tests against.

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

use std::collections::BTreeMap;

use ratatui::layout::Rect;

use crate::msg::{Msg, RunEntry};
use crate::store::metrics::MetricStore;
use crate::store::Run;
use charts::grid::GridState;
use charts::{crosshair, smoothing, xaxis};
pub use cmd::Cmd;
use derive::Seen;
use filter::FilterState;
use host::procs;
use keymap::{Keymap, Mode};
use layout::Areas;
use overlay::{media, stats};
pub use overview::{OverviewLayout, OverviewPane, Row, Section};
use panels::Panels;
pub use scroll::Limits;
pub use source::{LiveState, SourceState, LIVE_WINDOW};
use system::SysChart;
pub use workspace::runs::{Compared, WsTag};

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

/// The overlay in front of the panes (at most one), holding its own state: a
/// closed overlay holds nothing.
#[derive(Debug, Clone, Default)]
pub enum Overlay {
    #[default]
    None,
    /// Key help, scrolled this many lines.
    Help { scroll: usize },
    /// The run picker (`R`).
    Runs,
    /// The media viewer (`3`).
    Media,
    /// The statistics table (`T`): its selection and scroll.
    Stats(stats::StatsCursor),
    /// The record inspector (`i`), full screen.
    Inspector(Box<inspector::Inspector>),
}

/// The metrics grid's charts: which pass the filter, and per-chart view settings.
#[derive(Debug, Clone, Default)]
pub struct ChartsPane {
    /// Indices into `App::metric_keys` passing the filter.
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
}

/// The system sidebar (`]`): the run's system charts.
#[derive(Debug, Clone, Default)]
pub struct SystemPane {
    /// Indices into `App::sys_charts` passing the filter.
    pub shown: Vec<usize>,
    /// Filter of the charts (`\`).
    pub filter: FilterState,
    /// First chart shown.
    pub scroll: usize,
}

/// The console pane (`4`).
#[derive(Debug, Clone, Default)]
pub struct ConsolePane {
    /// Filter of the lines (`/` while the console has focus).
    pub filter: FilterState,
    /// Lines scrolled back from the end (0 = following the tail).
    pub back: usize,
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

/// The whole state of the viewer.
#[derive(Debug, Clone)]
pub struct App {
    /// The run: metric series + system series + overview + console.
    pub run: Run,
    pub source: SourceState,
    pub subject: Subject,
    /// Wall clock (Unix s), from `Msg::Tick`.
    pub now: f64,
    pub stale_after: f64,
    pub color: bool,
    /// See [`Options::true_color`].
    pub true_color: bool,
    /// The colours drawn with (`P`, `palette` in the settings).
    pub palette: palette::Palette,
    pub keymap: Keymap,
    /// The screen, from the last `Msg::Resize`.
    pub size: Rect,
    /// The panes' areas for `size` and the panels shown (computed on resize and
    /// when panels toggle; drawn with and hit-tested against).
    pub areas: Areas,
    /// How far each pane can scroll and how far a page key moves it, for `areas`.
    pub limits: Limits,
    pub grid: GridState,
    pub panels: Panels,
    pub overlay: Overlay,
    pub filter_target: Option<FilterTarget>,
    pub pending: Option<Pending>,
    /// History keys to chart (hidden ones omitted), sorted; in the live monitor, one
    /// id per grouped system chart.
    pub metric_keys: Vec<String>,
    pub charts: ChartsPane,
    pub sys_charts: Vec<SysChart>,
    pub overview: OverviewPane,
    pub system: SystemPane,
    pub console: ConsolePane,
    /// Live host monitor: samples received.
    pub samples: u64,
    /// Live: the header's readings (from the latest samples).
    pub(crate) host: host::HostHeader,
    /// Live: the process table and the monitored process.
    pub procs: procs::ProcsPane,
    /// Live: (sample time, system key count) of the last overview rebuild.
    overview_at: (f64, usize),
    /// Most points per series (kept to rebuild the run when its file restarts).
    max_points: usize,
    /// What the derived lists were last computed from.
    seen: Seen,
    /// The run picker's list and selection.
    pub runs: Vec<RunEntry>,
    pub runs_sel: usize,
    /// The picker's list is being read: its keys wait for it (in order).
    runs_waiting: Option<Vec<action::Action>>,
    /// Number of the reader whose messages are shown; `Msg::Tagged` from others
    /// (a run the user has left) are dropped.
    pub source_tag: u64,
    /// The last reader tag handed out.
    last_tag: u64,
    /// Runs drawn beside the main one in every chart (picked with space in `R`).
    pub compare: Vec<Compared>,
    /// The media viewer (`3`).
    pub media: media::MediaState,
    /// The statistics table's order and filter (`T`).
    pub stats: stats::StatsTable,
    /// Each metric chart's x axis and log-x (`x`, `X`, `L`), and the metric picker.
    pub xaxis: xaxis::XAxisState,
    /// The workspace of the wandb directory (None: a run outside one, the live
    /// monitor).
    pub workspace: Option<Box<workspace::Workspace>>,
    /// The main run as the workspace sees it.
    pub main_tag: Option<WsTag>,
    /// The run directory the main reader was started on.
    pub(crate) main_reading: Option<std::path::PathBuf>,
    /// The min–max band on charts with more points than columns (`b`).
    pub band: bool,
    /// Where the settings are saved, and what was last written.
    settings_io: settings::Persist,
    /// Commands made by the update in progress (or by a request before the loop
    /// starts), handed out with its `Effect` (or by [`App::take_cmds`]).
    out: Vec<Cmd>,
    /// Each chart's smoothing, and the smoothed series.
    pub smoothing: smoothing::SmoothState,
}

impl App {
    /// An empty viewer.
    #[must_use]
    pub fn new(opts: Options) -> Self {
        let mut app = Self {
            run: new_run(opts.max_points),
            source: SourceState::default(),
            subject: Subject::Run,
            now: 0.0,
            stale_after: opts.stale_after,
            color: opts.color,
            true_color: opts.true_color,
            palette: palette::Palette::Default,
            keymap: opts.keymap,
            size: Rect::default(),
            areas: Areas::default(),
            limits: Limits::default(),
            grid: GridState::default(),
            panels: Panels::default(),
            overlay: Overlay::None,
            filter_target: None,
            pending: None,
            metric_keys: Vec::new(),
            charts: ChartsPane::default(),
            sys_charts: Vec::new(),
            overview: OverviewPane::default(),
            system: SystemPane::default(),
            console: ConsolePane::default(),
            samples: 0,
            host: host::HostHeader::default(),
            procs: procs::ProcsPane::default(),
            overview_at: (f64::NEG_INFINITY, 0),
            max_points: opts.max_points,
            seen: Seen::NEVER,
            runs: Vec::new(),
            runs_sel: 0,
            runs_waiting: None,
            source_tag: 0,
            last_tag: 0,
            compare: Vec::new(),
            media: media::MediaState::default(),
            stats: stats::StatsTable::default(),
            xaxis: xaxis::XAxisState::default(),
            workspace: None,
            main_tag: None,
            main_reading: None,
            band: true,
            settings_io: settings::Persist::default(),
            out: Vec::new(),
            smoothing: smoothing::SmoothState::default(),
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
        app.run.system = MetricStore::windowed(LIVE_SERIES_CAP, window);
        app.subject = Subject::Host { window };
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
        matches!(self.subject, Subject::Host { .. })
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
        self.run.info.display_name = hostname.to_owned();
        self.run.info.host = hostname.to_owned();
        self.run.info.project = "live host monitor".to_owned();
        self.run.environment = environment;
        for (k, v) in &config {
            self.run.config.set_json(k, &v.to_string());
        }
        self.set_overview(self.overview_rows());
        self.update_host();
    }

    /// Live: gather the header's readings again, and lay out again when its height
    /// changed (a disk or a GPU appeared).
    pub(crate) fn update_host(&mut self) {
        let before = self.panel_flags();
        self.host = host::header(&self.run.system, &self.run.environment);
        if self.panel_flags() != before {
            self.relayout();
        }
    }

    /// Commands asked for outside an update ([`App::request_open`],
    /// [`App::request_compare`]), for the runtime to carry out before the loop starts.
    pub fn take_cmds(&mut self) -> Vec<Cmd> {
        std::mem::take(&mut self.out)
    }

    /// The key-map mode in force: typing into a filter, else the overlay's, else
    /// full screen or normal.
    #[must_use]
    pub fn mode(&self) -> Mode {
        if self.filter_target.is_some() {
            return Mode::Filter;
        }
        match self.overlay {
            Overlay::Runs => Mode::Runs,
            Overlay::Media => Mode::Media,
            Overlay::Stats(_) => Mode::Stats,
            Overlay::Inspector(_) => Mode::Inspector,
            Overlay::Help { .. } => Mode::Help,
            Overlay::None if self.panels.fullscreen => Mode::Fullscreen,
            Overlay::None => Mode::Normal,
        }
    }

    /// The focused metric key.
    #[must_use]
    pub fn focused_key(&self) -> Option<&str> {
        // A focused section header names no chart.
        if self.grid.sections.header.is_some() {
            return None;
        }
        self.charts
            .shown
            .get(self.grid.focus)
            .map(|&i| self.metric_keys[i].as_str())
    }

    /// Apply one message: the new state is in `self`; what the loop is to do (and
    /// the commands for the runtime) is in the `Effect`.
    pub fn update(&mut self, msg: Msg) -> Effect {
        // Only the user's input changes settings; a tick saves what changed.
        let input = matches!(msg, Msg::Key(_) | Msg::Mouse(_));
        let key = matches!(msg, Msg::Key(_));
        let tick = matches!(msg, Msg::Tick(_));
        let mut fx = self.step(msg);
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
        fx.cmds.append(&mut self.out);
        fx
    }

    fn step(&mut self, msg: Msg) -> Effect {
        match msg {
            Msg::Key(k) => self.on_key(k),
            // The inspector is keys only: the panes under it take no clicks.
            Msg::Mouse(_) if matches!(self.overlay, Overlay::Inspector(_)) => Effect::NONE,
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                self.relayout();
                // The inspector's list holds another number of rows.
                self.ask_records();
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
                self.media_follow();
                Effect::REDRAW
            }
            Msg::Tick(now) => {
                let before = self.live_state();
                self.now = now;
                let refiltered = self.workspace_tick();
                let after = self.live_state();
                Effect {
                    redraw: refiltered
                        || before != after
                        || matches!(after, LiveState::Running(_) | LiveState::MaybeCrashed(_)),
                    ..Effect::NONE
                }
            }
            Msg::SourceError(e) => {
                self.source.error = Some(crate::text::sanitize(&e));
                Effect::REDRAW
            }
            Msg::Unreadable(e) => {
                self.source.unreadable = Some(crate::text::sanitize(&e));
                Effect::REDRAW
            }
            Msg::Sample(s) => {
                self.apply_sample(&s);
                Effect::REDRAW
            }
            Msg::Signal(_) => Effect::QUIT,
            // The runtime owns the terminal and handles these before the app.
            Msg::Suspend | Msg::Continued => Effect::NONE,
            Msg::Tagged(tag, m) => self.on_tagged(tag, *m),
            Msg::RunsCounted { wandb_dir, count } => self.on_runs_counted(&wandb_dir, count),
            Msg::RunsListed { run_dir, runs } => self.on_runs_listed(&run_dir, runs),
            Msg::ImageLoaded { path, image } => self.on_image(&path, image),
            Msg::DirsChecked { gone } => self.on_dirs_checked(&gone),
            Msg::Indexed { wandb_dir, entries } => self.on_indexed(&wandb_dir, entries),
            Msg::IndexProgress { wandb_dir, entries } => {
                self.on_index_progress(&wandb_dir, entries)
            }
            Msg::IndexUnchanged { wandb_dir } => self.on_index_unchanged(&wandb_dir),
            Msg::SettingsWritten { generation, error } => {
                self.on_settings_written(generation, error.as_deref())
            }
            Msg::WorkspaceWritten { generation, error } => {
                self.on_workspace_written(generation, error.is_none())
            }
            Msg::Procs(t) if self.is_host() => self.on_procs(&t),
            Msg::Monitoring(m) if self.is_host() => self.on_monitoring(m),
            Msg::Procs(_) | Msg::Monitoring(_) => Effect::NONE,
            Msg::Records(page) => self.on_records(*page),
            Msg::Smoothed(r) => self.on_smoothed(*r),
        }
    }
}

/// An empty run with the viewer's store limits.
fn new_run(max_points: usize) -> Run {
    let mut run = Run::new();
    run.metrics = MetricStore::new(crate::store::metrics::DEFAULT_BUDGET, max_points);
    run
}
