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
pub use cmd::Cmd;
use derive::Seen;
use filter::FilterState;
use keymap::{Keymap, Mode};
use layout::Areas;
use overlay::stats;
pub use overview::{OverviewLayout, OverviewPane, Row, Section};
use panels::Panels;
pub use scroll::Limits;
pub use source::{LiveState, Shown, SourceState, Subject, LIVE_WINDOW};
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

/// The system sidebar (`]`): the run's system charts.
#[derive(Debug, Clone, Default)]
pub struct SystemPane {
    /// Indices into `Charts::sys` passing the filter.
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
        if input || tick {
            fx.redraw |= self.keep_settings(key, tick);
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
            // The inspector is keys only: the panes under it take no clicks.
            Msg::Mouse(_) if matches!(self.overlay, Overlay::Inspector(_)) => Effect::NONE,
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Resize(w, h) => {
                self.screen.size = Rect::new(0, 0, w, h);
                self.relayout();
                // The inspector's list holds another number of rows.
                self.ask_records();
                Effect::REDRAW
            }
            Msg::Opened {
                path,
                len,
                modified,
            } => self.shown.on_opened(path, len, modified, &mut self.asks),
            Msg::Waiting(dir) => self.shown.on_waiting(dir, &mut self.asks),
            Msg::Run(batch) => {
                if self.shown.apply_batch(&batch) {
                    self.charts.zoom.clear();
                }
                self.refresh();
                self.media_follow();
                Effect::REDRAW
            }
            Msg::Tick(now) => {
                let before = self.shown.live_state();
                self.shown.now = now;
                let refiltered = self.workspace_tick();
                let after = self.shown.live_state();
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
                self.on_sample(&s);
                Effect::REDRAW
            }
            Msg::Signal(_) => Effect::QUIT,
            // The runtime owns the terminal and handles these before the app.
            Msg::Suspend | Msg::Continued => Effect::NONE,
            Msg::Tagged(tag, m) => self.on_tagged(tag, *m),
            Msg::RunsCounted { wandb_dir, count } => self.shown.on_runs_counted(&wandb_dir, count),
            Msg::RunsListed { run_dir, runs } => self.on_runs_listed(&run_dir, runs),
            Msg::ImageLoaded { path, image } => self.on_image(&path, image),
            Msg::DirsChecked { gone } => self.on_dirs_checked(&gone),
            Msg::Indexed { wandb_dir, entries } => self.on_indexed(&wandb_dir, entries),
            Msg::IndexProgress { wandb_dir, entries } => {
                self.on_index_progress(&wandb_dir, entries)
            }
            Msg::IndexUnchanged { wandb_dir } => self.on_index_unchanged(&wandb_dir),
            Msg::SettingsWritten { generation, error } => {
                self.settings_io.on_written(generation, error.as_deref())
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

impl App {
    /// A host sample: the run takes it; the live monitor's overview lists every
    /// key's latest value (sorted), which with many keys is most of a sample's
    /// cost, so with a short interval it is rebuilt once a second of samples, and
    /// whenever keys are added.
    fn on_sample(&mut self, s: &crate::msg::Sample) {
        let host = self.is_host();
        self.shown.apply_sample(s, host);
        if host {
            self.host.samples += 1;
            let at = (s.timestamp, self.shown.run.system.len());
            if at.0 - self.host.overview_at.0 >= 1.0 || at.1 != self.host.overview_at.1 {
                self.host.overview_at = at;
                self.set_overview(self.overview_rows());
            }
        }
        self.refresh();
        if host {
            self.update_host();
        }
    }

    /// Liveness for the status bar (see [`Shown::live_state`]).
    #[must_use]
    pub fn live_state(&self) -> LiveState {
        self.shown.live_state()
    }

    /// Why the run file cannot be shown (see [`Shown::unreadable`]).
    #[must_use]
    pub fn unreadable(&self) -> Option<String> {
        self.shown.unreadable()
    }
}

/// The settings: the saved parts of the state, and the saver.
impl App {
    /// The settings of this mode as they are now.
    #[must_use]
    pub fn settings(&self) -> settings::Settings {
        settings::Settings::of(&settings::Saved {
            charts: &self.charts,
            panels: &self.panels,
            panes: &self.panes,
            palette: self.screen.palette,
        })
    }

    /// Lay settings over the state (at start, before the first frame).
    pub fn apply_settings(&mut self, s: &settings::Settings) {
        let host = self.is_host();
        s.apply(settings::SavedMut {
            charts: &mut self.charts,
            panels: &mut self.panels,
            panes: &mut self.panes,
            palette: &mut self.screen.palette,
            host,
        });
        self.refilter_metrics(None);
        self.refilter_overview();
        self.refilter_system();
        self.relayout();
    }

    /// Start from `file`'s settings for this mode, and save changes to `path`
    /// (None, or a file saying `save = false`: never saved). The viewer's
    /// per-directory settings are `[viewer]`'s own (see [`App::use_config_in`]).
    pub fn use_config(&mut self, path: Option<PathBuf>, file: settings::Config) {
        self.use_config_at(path, file, None);
    }

    /// As [`App::use_config`], for a viewer of the wandb directory `dir` (its
    /// canonical path; for a run outside one, the directory of its `.wandb`
    /// file): the per-directory settings are that directory's (see
    /// `settings::Persist::load`). The live monitor keeps `[live]`.
    pub fn use_config_in(&mut self, path: Option<PathBuf>, file: settings::Config, dir: &Path) {
        self.use_config_at(path, file, Some(dir.to_path_buf()));
    }

    fn use_config_at(
        &mut self,
        path: Option<PathBuf>,
        file: settings::Config,
        dir: Option<PathBuf>,
    ) {
        let (io, section) = settings::Persist::load(path, file, dir, self.is_host());
        self.apply_settings(&section);
        self.settings_io = io;
        self.settings_io.applied(self.settings(), self.is_host());
    }

    /// The whole file as it would be written now (see `settings::Persist::config`).
    #[must_use]
    pub fn settings_config(&self) -> settings::Config {
        self.settings_io.config(self.settings(), self.is_host())
    }

    /// What the status bar says of the settings (once, until the next key).
    #[must_use]
    pub fn settings_note(&self) -> Option<&str> {
        self.settings_io.note()
    }

    /// The save the runtime is to carry out on quit, if the settings changed
    /// since the file was last known written.
    #[must_use]
    pub fn unsaved_settings(&self) -> Option<Cmd> {
        self.settings_io.unsaved(self.settings(), self.is_host())
    }

    /// After the user's input, note whether a setting changed (a `key` ends the
    /// status bar's note: whether it was shown); at a `tick`, ask for a changed
    /// one to be saved. The settings now are built only when needed.
    fn keep_settings(&mut self, key: bool, tick: bool) -> bool {
        let host = self.is_host();
        let now = settings::Saved {
            charts: &self.charts,
            panels: &self.panels,
            panes: &self.panes,
            palette: self.screen.palette,
        };
        let now = || settings::Settings::of(&now);
        if tick {
            self.settings_io.save_due(host, now, &mut self.asks);
            false
        } else {
            self.settings_io.noted(key, host, now)
        }
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
