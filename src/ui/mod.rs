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
//!
//! The router hands each message to the feature that owns it: a key is looked
//! up for the mode in force and its action handed on (`on_key`, `act`); a mouse
//! event goes to what is under the pointer (`on_mouse`, hit tests in
//! `mouse.rs`); a typed character to the filter in focus (`with_filter`). A
//! feature's methods take what they may see and ask of the router ([`Asks`]),
//! which the router does once they return ([`App::settle`]).

// The house rule, kept by the compiler: no function of the UI over 100 lines.
#![deny(clippy::too_many_lines)]

mod act;
pub mod action;
pub mod charts;
pub mod cluster;
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
use crate::store::Run;
use act::{Motion, Refilter};
use action::{Action, Handler};
pub use charts::grid::Pending;
use charts::grid::YTarget;
use charts::sections::{Item, Slot};
pub use cmd::Cmd;
pub use console::ConsolePane;
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use derive::Seen;
use filter::FilterState;
pub use filter::FilterTarget;
use keymap::{Key, Keymap, Mode};
use layout::Areas;
use overlay::media::{MediaCx, MediaSources};
use overlay::stats;
pub use overlay::Overlay;
pub use overview::{OverviewLayout, OverviewPane, Row, Section};
use panels::{Pane, Panels};
use ratatui::layout::Position;
pub use scroll::Limits;
use source::new_run;
pub use source::{LiveState, Shown, SourceState, Subject, LIVE_WINDOW};
pub use system::SystemPane;
use workspace::cx::{Then, WsCx};
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
            shown: source::Shown::new(opts.max_points, opts.stale_after),
            screen: render::Screen {
                size: Rect::default(),
                areas: Areas::default(),
                limits: Limits::default(),
                color: opts.color,
                true_color: opts.true_color,
                palette: palette::Palette::Default,
                keymap: opts.keymap,
                note: None,
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
        app.shown.watch_host(window);
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

    /// What the help lists: on the cluster screen its own keys; on a host opened
    /// from it the live monitor's, then the cluster screen's; elsewhere none of them.
    pub(crate) fn help_for(&self) -> keymap::HelpFor {
        match &self.host.cluster {
            Some(c) if c.opened.is_none() => keymap::HelpFor::Cluster,
            Some(_) => keymap::HelpFor::ClusterHost,
            None if self.is_host() => keymap::HelpFor::Live,
            None if self.runs.in_workspace_list() => keymap::HelpFor::Workspace,
            None => keymap::HelpFor::Run,
        }
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
        self.shown.describe_host(hostname, environment, &config);
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
        // Whatever drew or dropped a run, or changed the palette, each drawn run
        // has its colour before anything is drawn.
        let n = theme::Theme::new(true, self.screen.palette).series_colors();
        self.runs.sync_colors(n);
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
        let input = matches!(msg, Msg::Key(_) | Msg::Mouse(_) | Msg::Paste(_));
        let key = matches!(msg, Msg::Key(_) | Msg::Paste(_));
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
            Msg::Paste(text) => self.on_paste(&text),
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
            } => self.shown.on_opened(path, len, modified, &mut self.asks),
            Msg::Waiting(dir) => self.shown.on_waiting(dir, &mut self.asks),
            Msg::Run(batch) => {
                if self.shown.apply_batch(&batch) {
                    self.charts.zoom.clear();
                }
                self.refresh();
                self.follow_media();
                Effect::REDRAW
            }
            Msg::Tick(now) => {
                let held = self.shown.seen.summary_held(&self.shown.run);
                self.refresh_then(true);
                let mut live = self.shown.tick(now) || held;
                if let Some(c) = self.host.cluster.as_mut() {
                    c.now = now;
                    live |= c.opened.is_none();
                }
                let refiltered = self.ws(Runs::workspace_tick);
                Effect {
                    redraw: refiltered || live,
                    ..Effect::NONE
                }
            }
            Msg::SourceError(e) => self.shown.on_error(&e, false),
            Msg::SamplerError(e) => self.shown.on_sampler_error(&e),
            Msg::FollowTrouble(e) => self.shown.on_follow_trouble(e),
            Msg::Unreadable(e) => self.shown.on_error(&e, true),
            Msg::Sample(s) => {
                self.on_sample(&s);
                Effect::REDRAW
            }
            Msg::Signal(_) => Effect::QUIT,
            // The runtime owns the terminal and handles these before the app.
            Msg::Suspend | Msg::Continued => Effect::NONE,
            Msg::Tagged(tag, m) => self.on_tagged(tag, m),
            Msg::RunsCounted { wandb_dir, count } => self.shown.on_runs_counted(&wandb_dir, count),
            Msg::SegmentsFound { file, segments } => {
                let e = self.shown.on_segments(&file, &segments);
                if e.redraw {
                    self.set_overview(self.overview_rows());
                }
                e
            }
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
                self.settings_io.on_written(generation, error.as_deref())
            }
            Msg::WorkspaceWritten { generation, error } => {
                match self.runs.on_workspace_written(generation, error.as_deref()) {
                    Some(note) => {
                        self.settings_io.tell(&note);
                        Effect::REDRAW
                    }
                    None => Effect::NONE,
                }
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
            Msg::Cluster(u) => self.on_cluster(*u),
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

    /// Say `note` in the status bar until the next key (a trouble of leet's own
    /// files found before the screen opened).
    pub fn tell(&mut self, note: String) {
        self.settings_io.tell(&note);
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
        let main_before = self.shown.tag;
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
        if self.shown.tag != main_before {
            // Another main run: the media pane opens on its newest image, as on a
            // first open, not at the position it had in the run before.
            self.panes.media = overlay::media::MediaState::default();
        }
        if then.fresh_view {
            self.charts.zoom.clear();
            self.charts.grid.focus = 0;
            self.panels.fullscreen = false;
            self.panes.overview.home();
            self.panes.system.scroll = 0;
            self.panes.console.back = 0;
        }
        if let Some(open) = then.picker {
            self.overlay = if open { Overlay::Runs } else { self.beneath() };
        }
        if then.show_runs_pane {
            if self.screen.areas.left.is_none() && !self.panels.left {
                self.toggle_sidebar(false);
            }
            if self.screen.areas.left.is_some() {
                self.panels.focus = panels::Pane::Left;
            } else if self.screen.size.width < layout::MIN_WITH_LEFT {
                self.note_no_room_left();
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
        let batch = matches!(*m, Msg::Run(_));
        let started = if batch { self.whole_start() } else { None };
        match self.ws(|r, cx| r.on_tagged(cx, tag, m)) {
            Tagged::Done(fx) => {
                if batch {
                    // A segment of the run shown (its images the pane's too),
                    // read after it.
                    self.follow_media();
                    // Its start is the run's when it is the first: the overview,
                    // built before it came, says it now.
                    if self.whole_start() != started {
                        self.set_overview(self.overview_rows());
                    }
                }
                fx
            }
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

    /// Drawn whole, a resumed run started when its first segment did: that start
    /// (None: the run shown is no resumed run drawn whole, or no segment has one).
    fn whole_start(&self) -> Option<leet_format::event::Timestamp> {
        let stitched = (self.runs.main_tag.as_ref()).is_some_and(|t| t.segments > 1);
        (self.runs.segments_of_main(&self.shown.run).iter())
            .filter_map(|r| r.info.start_time)
            .min()
            .filter(|_| stitched)
    }

    /// Records came: a media pane or viewer with nothing selected yet shows the
    /// newest image; one on its key's newest moves on to a newer (a segment read
    /// after the run shown brings its images in before it).
    fn follow_media(&mut self) {
        let shown = self.screen.areas.media.is_some() || matches!(self.overlay, Overlay::Media);
        let cx = &mut MediaCx::new(media_sources(&self.shown, &self.runs), &mut self.asks);
        self.panes.media.follow(shown, cx);
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
        // A segment of a resumed run read alone (`leet RUN-DIR`), not stitched
        // with the others as the workspace draws it: said, with the way there.
        let stitched = (self.runs.main_tag.as_ref()).is_some_and(|t| t.segments > 1);
        let segment = self.shown.source.segment.filter(|_| !stitched);
        let started = self.whole_start();
        overview::rows_of(
            self.runs.overview_subject(),
            &self.shown.run,
            (self.is_host(), self.host.procs.process_keys_shown()),
            (
                segment.map(|(i, n)| {
                    let whole = if self.runs.workspace.is_some() {
                        " · esc: all"
                    } else {
                        ""
                    };
                    format!("{i} of {n}{whole}")
                }),
                started,
            ),
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
        self.refresh_then(false);
    }

    /// [`App::refresh`]; `settle`: with what it held back shown (see
    /// `derive::SUMMARY_GAP_MS`).
    fn refresh_then(&mut self, settle: bool) {
        let due = self.derive_cx().refresh(settle);
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
        // The overview's config says which process is monitored now, not the
        // one (or none) asked for at the start.
        let pid = m
            .as_ref()
            .map_or_else(|| "\"none\"".to_owned(), |(p, _)| p.to_string());
        // A process monitored again: what said none is (its exit, a pid that
        // could not be monitored) is over.
        if m.is_some() && self.shown.source.error_ticks.is_none() {
            self.shown.source.error = None;
        }
        if self.host.procs.set_monitored(m) {
            if self.shown.run.config.to_json().contains_key("pid") {
                self.shown.run.config.set_json("pid", &pid);
            }
            host::procs::clear_process_series(&mut self.shown);
            self.set_overview(self.overview_rows());
        }
        self.regroup();
        Effect::REDRAW
    }
}

/// The cluster screen's routing: its state is the live monitor's
/// (`host.cluster`); a host opened is drawn by the live monitor from the run
/// shown, which [`cluster::fill_run`] keeps filled from the cluster's model.
impl App {
    /// Show the cluster screen of `server`, over `window`.
    pub fn open_cluster(&mut self, server: &str, window: std::time::Duration) {
        self.host.cluster = Some(Box::new(cluster::ClusterScreen::new(server, window)));
        self.overlay = Overlay::Cluster;
    }

    /// The overlay left when the one in front closes: the cluster screen while
    /// it is shown (no host opened), else none.
    fn beneath(&self) -> Overlay {
        match &self.host.cluster {
            Some(c) if c.opened.is_none() => Overlay::Cluster,
            _ => Overlay::None,
        }
    }

    fn on_cluster(&mut self, u: crate::msg::cluster::ClusterUpdate) -> Effect {
        let Some(c) = self.host.cluster.as_mut() else {
            return Effect::NONE;
        };
        if c.apply(u) {
            if let Some(name) = c.opened.clone() {
                cluster::fill_run(&mut self.shown, &c.model, &name);
                // The overview's summary shows the newest values, as the header
                // does (as a sample does in the local monitor).
                self.set_overview(self.overview_rows());
                self.refresh();
                self.update_host();
            }
        }
        Effect::REDRAW
    }

    fn act_cluster(&mut self, a: Action) -> Option<Effect> {
        let c = self.host.cluster.as_mut()?;
        match c.act(a, &mut self.filter_target, self.screen.size) {
            cluster::Outcome::Stay(fx) => Some(fx),
            cluster::Outcome::Pass => None,
            cluster::Outcome::Open(name) => {
                self.open_cluster_host(&name);
                Some(Effect::REDRAW)
            }
        }
    }

    /// `enter` on a host: its own live screen, from a fresh run filled with its
    /// series.
    fn open_cluster_host(&mut self, name: &str) {
        let Some(c) = self.host.cluster.as_mut() else {
            return;
        };
        c.opened = Some(name.to_owned());
        let window = c.model.window().as_secs_f64();
        self.shown.run = source::new_run(self.shown.max_points);
        self.shown.watch_host(window);
        cluster::fill_run(&mut self.shown, &c.model, name);
        let mut config = serde_json::Map::new();
        config.insert("server".into(), c.model.server().into());
        self.overlay = Overlay::None;
        self.set_host(name, serde_json::Map::new(), config);
        self.charts.grid.focus = 0;
        self.refresh();
        self.relayout();
    }

    /// `esc` on a host opened from the cluster screen: back to the cluster
    /// screen. Whether one was open.
    fn close_cluster_host(&mut self) -> bool {
        match self.host.cluster.as_mut() {
            Some(c) if c.opened.is_some() => {
                c.opened = None;
                self.overlay = Overlay::Cluster;
                true
            }
            _ => false,
        }
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
                let cx = &mut MediaCx::new(media_sources(&self.shown, &self.runs), &mut self.asks);
                self.panes.media.act(a, cx)
            }
            Overlay::Stats(_) if !typing => self.act_stats(a),
            Overlay::Cluster if !typing => return self.act_cluster(a),
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
                self.overlay = self.beneath();
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
        // In the workspace's list, the run looked at: the one under the cursor
        // while the list has the keys, else the pinned one; else the run shown.
        let on_list = self.panels.focus == panels::Pane::Left;
        let looked_at = self
            .runs
            .workspace
            .as_deref()
            .filter(|w| w.view == workspace::WsView::List)
            .and_then(|w| {
                let pinned = w.pinned.as_deref().and_then(|k| w.run(k));
                let run = if on_list { w.cursor_run() } else { pinned };
                run.or(pinned)?.latest().file.clone()
            });
        let Some(file) = looked_at.or_else(|| self.shown.source.file.clone()) else {
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
        let (rows, runs) = (
            self.stats.row_count(&self.charts.metric_keys),
            self.stats_runs().len(),
        );
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
    pub fn stats_rows(&self) -> std::sync::Arc<stats::StatsRows> {
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
        self.stats.count(&self.charts.metric_keys)
    }

    /// `x`: the focused chart's next x; after wall time, the metric picker.
    pub(crate) fn cycle_x_axis(&mut self) -> Effect {
        let host = self.is_host();
        let runs = drawn_runs(&self.shown.run, &self.runs);
        let (fx, picker) = self.charts.cycle_x_axis(host, &runs);
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
        let cx = &mut MediaCx::new(media_sources(&self.shown, &self.runs), &mut self.asks);
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
        let cx = &mut MediaCx::new(media_sources(&self.shown, &self.runs), &mut self.asks);
        self.panes.media.load(cx);
    }

    /// Move through the media pane's images (false: not a key of it).
    pub(crate) fn step_media(&mut self, a: Action) -> bool {
        let cx = &mut MediaCx::new(media_sources(&self.shown, &self.runs), &mut self.asks);
        self.panes.media.step(a, cx)
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
        self.charts.refilter(host, None, &mut self.panels);
        self.panes.overview.refilter(true);
        self.panes.system.refilter(&self.charts.sys);
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

    /// There is no settings file (no `$XDG_CONFIG_HOME` or `$HOME` to find one
    /// under): a setting changed is said not saved, and why, in the status bar
    /// once and on quit, as a save that fails is.
    pub fn settings_without_a_file(&mut self) {
        self.settings_io.without_a_file();
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

/// Keys: the router finds the action for the mode in force and hands it to the
/// feature that owns it.
impl App {
    fn on_key(&mut self, ev: KeyEvent) -> Effect {
        if ev.kind == KeyEventKind::Release {
            return Effect::NONE;
        }
        let key = Key::from_event(&ev);
        self.screen.note = None;
        if key.is_ctrl_c() {
            return Effect::QUIT;
        }
        if self.charts.take_digit(&key) {
            // The grid's new shape, its focus kept.
            let focus = self.charts.grid.focus;
            self.relayout();
            self.charts.grid.focus = focus;
            return Effect::REDRAW;
        }
        // An overlay typed into (the x axis's metric picker) takes the keys.
        if let Some(fx) = self.key_overlay(&key) {
            return fx;
        }
        let mode = self.mode();
        match self.screen.keymap.action(mode, &key) {
            Some(a) => {
                if mode == Mode::Filter {
                    if let Some(fx) = self.ws(|r, cx| r.type_workspace(cx, Some(a), None)) {
                        return fx;
                    }
                }
                self.act(a)
            }
            None if mode == Mode::Filter => {
                let KeyCode::Char(c) = key.code else {
                    return self.keep_prefill(key.code);
                };
                if key
                    .mods
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                {
                    return Effect::NONE;
                }
                self.type_text(c.encode_utf8(&mut [0; 4]))
            }
            None => Effect::NONE,
        }
    }

    /// An arrow, home or end in a prompt that opened prefilled: the prefill is
    /// no longer selected, so what is typed next edits it instead of replacing it.
    fn keep_prefill(&mut self, code: KeyCode) -> Effect {
        let arrow = matches!(
            code,
            KeyCode::Left | KeyCode::Right | KeyCode::Home | KeyCode::End
        );
        let Some(t) = self.filter_target.filter(|_| arrow) else {
            return Effect::NONE;
        };
        let was = match t {
            FilterTarget::Runs | FilterTarget::Group | FilterTarget::Column => {
                self.runs.keep_prefill(t)
            }
            FilterTarget::Hosts => {
                (self.host.cluster.as_mut()).is_some_and(|c| c.filter.deselect())
            }
            FilterTarget::Records => {
                (self.overlay.inspector_mut()).is_some_and(|i| i.filter.deselect())
            }
            _ => self.filters().get(t).is_some_and(FilterState::deselect),
        };
        if was {
            Effect::REDRAW
        } else {
            Effect::NONE
        }
    }

    /// Text typed or pasted into the filter being edited.
    fn type_text(&mut self, text: &str) -> Effect {
        if let Some(fx) = self.ws(|r, cx| r.type_workspace(cx, None, Some(text))) {
            return fx;
        }
        self.with_filter(|f| f.push_str(text));
        Effect::REDRAW
    }

    /// Pasted text goes into the prompt being typed into, as typed characters on
    /// one line: a pasted newline never confirms it, and what follows it is never
    /// read as keys. With no prompt open a paste does nothing.
    fn on_paste(&mut self, text: &str) -> Effect {
        let text = prompt::pasted(text);
        if let Overlay::XAxis(p) = &mut self.overlay {
            return if p.type_text(&text) {
                Effect::REDRAW
            } else {
                Effect::NONE
            };
        }
        if self.filter_target.is_none() || text.is_empty() {
            return Effect::NONE;
        }
        // Added at once: one compile and one pass over what is filtered.
        self.type_text(&text)
    }

    /// Perform an action (what a key is bound to).
    pub fn act(&mut self, a: Action) -> Effect {
        if let Some(fx) = self.act_overlay(a) {
            return fx;
        }
        // A run's keys open nothing on a host (an empty console or media pane).
        if self.is_host() && !a.on_host() {
            return Effect::NONE;
        }
        if matches!(self.overlay, Overlay::None) {
            let crosshair = self.charts.crosshair.is_some();
            if let Some(fx) = self.ws(|r, cx| r.act_workspace(cx, a, crosshair)) {
                return fx;
            }
        }
        if let Some(fx) = self.charts.act_sections(&mut self.panels, a) {
            return fx;
        }
        match a.handler() {
            Handler::General => match a {
                Action::Quit => Effect::QUIT,
                Action::Restart if !self.is_host() && self.ws(Runs::restart_main) => Effect::REDRAW,
                _ => Effect::NONE,
            },
            Handler::Inert => Effect::NONE,
            Handler::Panels => self.act_panels(a),
            Handler::Motion => self.act_motion(a),
            Handler::Charts => self.act_charts(a),
            Handler::Procs => self.act_procs(a),
            Handler::Filter => self.act_filter(a),
        }
    }

    fn act_panels(&mut self, a: Action) -> Effect {
        // An overlay that opens on its own first state (`Overlay::opened_by`);
        // it closes itself.
        if let Some(o) = Overlay::opened_by(a) {
            self.overlay = o;
            return Effect::REDRAW;
        }
        let then = match a {
            Action::ToggleStats => return self.open_stats(),
            Action::InspectRecords => return self.toggle_inspector(),
            Action::PickRun => return self.ws(Runs::open_picker),
            Action::ToggleMedia => {
                self.toggle_media();
                None
            }
            Action::Back if self.charts.crosshair.is_some() => {
                self.charts.crosshair = None;
                None
            }
            Action::Back if self.panels.back() => None,
            Action::Back if self.close_cluster_host() => None,
            Action::ToggleLeftSidebar | Action::ToggleRightSidebar => {
                self.toggle_sidebar(a == Action::ToggleRightSidebar);
                None
            }
            Action::ToggleConsole => self.panels.toggle_console(&mut self.asks),
            Action::ToggleGrid => self.panels.toggle_grid(&mut self.asks),
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                let in_list = self.runs.in_workspace_list();
                let forward = a == Action::CyclePaneFocus;
                let (areas, overview) = (&self.screen.areas, &mut self.panes.overview);
                self.panels.cycle_focus(forward, areas, overview, in_list);
                None
            }
            Action::ResetPaneSizes => {
                self.panels.reset_sizes(&mut self.asks);
                None
            }
            _ => return Effect::NONE,
        };
        if then.is_some() {
            // The pane shown again takes focus once it is laid out.
            self.settle();
            self.panels.focus_if_shown(then, &self.screen.areas);
        }
        Effect::REDRAW
    }

    /// The motion keys, handed to the pane in focus (the help overlay's scroll
    /// while it is open; the charts in order while one is full screen).
    fn act_motion(&mut self, a: Action) -> Effect {
        let Some(m) = Motion::of(a) else {
            return Effect::NONE;
        };
        // With the crosshair on, left/right move it along the focused chart,
        // home/end to its first/last point in view.
        if matches!(
            a,
            Action::FocusLeft | Action::FocusRight | Action::FirstPage | Action::LastPage
        ) && self.charts.crosshair.is_some()
            && (self.panels.focus == Pane::Grid || self.panels.fullscreen)
            && !self.is_host()
            && matches!(self.overlay, Overlay::None)
        {
            let runs = drawn_runs(&self.shown.run, &self.runs);
            match a {
                Action::FirstPage | Action::LastPage => {
                    self.charts.crosshair_to_end(&runs, a == Action::LastPage);
                }
                _ => self.charts.step_crosshair(&runs, a == Action::FocusRight),
            }
        } else {
            self.motion(m, a);
        }
        Effect::REDRAW
    }

    fn motion(&mut self, m: Motion, a: Action) {
        let lim = self.screen.limits;
        let full = self.panels.fullscreen
            && matches!(m, Motion::Step { .. } | Motion::Page { to: Some(_), .. });
        let n = self.charts.shown.len();
        match self.panels.focus {
            // The system charts in order, one at a time.
            _ if full && self.panels.system_full => {
                // Left/right (and n/N) as in the grid's full screen: a chart each.
                let m = match m {
                    Motion::Step { dx, dy } => Motion::Step { dx: 0, dy: dx + dy },
                    m => m,
                };
                let sys = &mut self.panes.system;
                sys.scroll = m.system(sys.scroll, sys.shown.len(), 1);
            }
            _ if full => self.charts.grid.motion(m, n, true),
            Pane::Grid => self.charts.grid.motion(m, n, false),
            Pane::Left => {
                let lay = self.panes.overview.layout(lim.overview_room);
                m.overview(&mut self.panes.overview, &lay);
            }
            Pane::Right => {
                let sys = &mut self.panes.system;
                sys.scroll = m.system(sys.scroll, sys.shown.len(), lim.system_page);
            }
            Pane::Console => {
                let back = self.panes.console.back;
                self.panes.console.back = m.console(back, lim.console_max, lim.console_page);
            }
            Pane::Procs => {
                let area = self.screen.areas.procs;
                let (d, to) = m.procs(host::procs::room(area));
                self.host.procs.move_selection(d, to, area);
            }
            Pane::Media => {
                self.step_media(a);
            }
        }
    }

    fn act_charts(&mut self, a: Action) -> Effect {
        let host = self.is_host();
        match a {
            Action::ToggleHidden if !host && self.charts.toggle_hidden() => self.rederive_metrics(),
            Action::CycleCrosshair if !host => {
                let runs = drawn_runs(&self.shown.run, &self.runs);
                self.charts.cycle_crosshair(&runs);
            }
            // With the process table focused, enter monitors the selected process.
            Action::Fullscreen if self.panels.focus == Pane::Procs => {
                return self.host.procs.monitor_selected(host, &mut self.asks);
            }
            Action::Fullscreen if self.panels.focus == Pane::Media => self.media_fullscreen(),
            // From the system sidebar: its top chart, a heatmap with a row per GPU.
            Action::Fullscreen
                if self.panels.focus == Pane::Right && !self.panes.system.shown.is_empty() =>
            {
                let top = self.panes.system.top(self.screen.limits.system_page);
                self.panes.system.scroll = top;
                self.panels.fullscreen = true;
                self.panels.system_full = true;
            }
            Action::Fullscreen if !self.charts.shown.is_empty() => {
                self.panels.fullscreen = true;
                self.panels.system_full = false;
            }
            Action::CycleYScale => {
                // With the system sidebar focused, its top chart.
                let on = if self.panels.fullscreen && self.panels.system_full {
                    let sys = &self.panes.system;
                    YTarget::Sidebar(sys.shown.get(sys.scroll).copied())
                } else if self.panels.focus == Pane::Right && !self.panels.fullscreen {
                    let sys = &self.panes.system;
                    let top = sys.top(self.screen.limits.system_page);
                    YTarget::Sidebar(sys.shown.get(top).copied())
                } else {
                    YTarget::Grid { host }
                };
                if !self.charts.cycle_y_scale(on) {
                    return Effect::NONE;
                }
            }
            Action::CycleXAxis => return self.cycle_x_axis(),
            Action::XAxisToAll => return self.charts.x_axis_to_all(host),
            Action::ToggleLogX => return self.charts.toggle_log_x(host),
            Action::CycleSmoothing
            | Action::ToggleSmoothingAll
            | Action::SmoothingUp
            | Action::SmoothingDown => {
                // Grouped charts draw each group's mean and band, never smoothed:
                // say so rather than change a setting that draws nothing.
                if !host && charts::model::runs_grouped(self) {
                    self.shown.source.error = Some(charts::smoothing::GROUPED.to_owned());
                    return Effect::REDRAW;
                }
                return self.charts.act_smoothing(host, a);
            }
            Action::CyclePalette => self.screen.palette = self.screen.palette.next(),
            Action::ZoomIn | Action::ZoomOut if !host => {
                let runs = drawn_runs(&self.shown.run, &self.runs);
                self.charts.key_zoom(&runs, a == Action::ZoomIn);
            }
            _ if self.charts.act_grid(a) => {}
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn act_procs(&mut self, a: Action) -> Effect {
        if self.host.cluster.is_some() {
            // No process table on a host read from Prometheus (see `around`): the
            // keys that act on it have nothing to act on, and say so.
            return match a {
                Action::MonitorProcess
                | Action::MonitorNone
                | Action::CycleProcessSort
                | Action::FilterList => self.shown.on_sampler_error(host::procs::NONE_ON_CLUSTER),
                _ => Effect::NONE,
            };
        }
        match a {
            Action::MonitorProcess => {
                return self
                    .host
                    .procs
                    .monitor_selected(self.is_host(), &mut self.asks)
            }
            Action::MonitorNone => {
                return host::procs::monitor(self.is_host(), &mut self.asks, None)
            }
            Action::CycleProcessSort if self.is_host() => {
                self.host.procs.sort = self.host.procs.sort.next();
                self.host.procs.rebuild();
                self.host.procs.keep_in_view(self.screen.areas.procs);
            }
            Action::FilterList if self.is_host() => self.start_filter(FilterTarget::Procs),
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    fn act_filter(&mut self, a: Action) -> Effect {
        match a {
            // Every filter typed here (the workspace's are typed in `type_workspace`).
            Action::FilterToggleGlob => {
                self.with_filter(FilterState::toggle_glob);
            }
            Action::StartFilter if self.panels.focus == Pane::Procs => {
                self.start_filter(FilterTarget::Procs);
            }
            // With the console focused, `/` filters its lines (as wandb leet does).
            Action::StartFilter if self.panels.focus == Pane::Console => {
                self.start_filter(FilterTarget::Console);
            }
            Action::StartFilter => self.start_filter(FilterTarget::Metrics),
            Action::StartSystemFilter => self.start_filter(FilterTarget::System),
            Action::StartOverviewFilter => {
                self.start_filter(FilterTarget::Overview);
                if self.screen.areas.left.is_none() {
                    self.toggle_sidebar(false);
                }
            }
            Action::ClearFilters => self.clear_filters(),
            Action::ClearOverviewFilter | Action::ClearSystemFilter => {
                let t = if a == Action::ClearSystemFilter {
                    FilterTarget::System
                } else {
                    FilterTarget::Overview
                };
                let r = self.filters().edit(t, FilterState::clear);
                self.refilter(r);
            }
            // A host pattern that does not compile is not kept as the last one that
            // did: the prompt stays, its error shown, until it is fixed or cancelled.
            Action::FilterApply
                if self.filter_target == Some(FilterTarget::Hosts)
                    && (self.host.cluster.as_deref())
                        .is_some_and(cluster::ClusterScreen::pattern_refused) =>
            {
                return Effect::NONE;
            }
            // A draft that does not compile is refused: the prompt stays open,
            // its error shown.
            Action::FilterApply => {
                if self.with_filter(FilterState::apply) != Some(false) {
                    self.filter_target = None;
                }
            }
            Action::FilterCancel => {
                self.with_filter(FilterState::cancel);
                self.filter_target = None;
            }
            Action::FilterBackspace => {
                self.with_filter(FilterState::backspace);
            }
            Action::FilterClearInput => {
                self.with_filter(|f| f.set_draft(String::new()));
            }
            _ => return Effect::NONE,
        }
        Effect::REDRAW
    }

    /// The filters typed into on this screen, lent to an edit.
    fn filters(&mut self) -> act::Filters<'_> {
        act::Filters {
            metrics: &mut self.charts.filter,
            system: &mut self.panes.system,
            overview: &mut self.panes.overview.filter,
            console: &mut self.panes.console,
            procs: &mut self.host.procs,
            stats: &mut self.stats.filter,
        }
    }

    fn start_filter(&mut self, t: FilterTarget) {
        if let Some(f) = self.filters().get(t) {
            f.start();
        }
        self.filter_target = Some(t);
    }

    /// Hand an edit to the filter being typed into; the list it filters follows.
    /// `f` on the filter being typed: its answer (None: there is none).
    fn with_filter<R>(&mut self, f: impl FnOnce(&mut FilterState) -> R) -> Option<R> {
        let t = self.filter_target?;
        if t == FilterTarget::Hosts {
            return self.host.cluster.as_mut().map(|c| f(&mut c.filter));
        }
        if t == FilterTarget::Records {
            let (size, asks) = (self.screen.size, &mut self.asks);
            return self
                .overlay
                .inspector_mut()
                .map(|i| i.with_filter(f, size, asks));
        }
        let mut out = None;
        let r = self.filters().edit(t, |p| out = Some(f(p)));
        self.refilter(r);
        out
    }

    /// The list a filter's change left to rebuild, rebuilt by its feature.
    fn refilter(&mut self, r: Refilter) {
        match r {
            Refilter::Metrics => self.charts.refilter(self.is_host(), None, &mut self.panels),
            Refilter::System => self.panes.system.refilter(&self.charts.sys),
            Refilter::Overview => self.panes.overview.refilter(true),
            Refilter::Stats => {
                if let Overlay::Stats(c) = &mut self.overlay {
                    c.refiltered();
                }
            }
            Refilter::Done => {}
        }
    }

    /// Every filter cleared, each list rebuilt (the focused chart kept).
    fn clear_filters(&mut self) {
        self.filters().clear_all();
        let keep = self.focused_key().map(str::to_owned);
        self.charts
            .refilter(self.is_host(), keep.as_deref(), &mut self.panels);
        self.panes.system.refilter(&self.charts.sys);
        self.panes.overview.refilter(true);
    }
}

/// The mouse: the router finds what is under the pointer ([`mouse::Hits`]) and
/// hands the press, drag or wheel to its feature.
impl App {
    fn on_mouse(&mut self, m: MouseEvent) -> Effect {
        let pos = Position::new(m.column, m.row);
        let free = !self.overlay.covers() && self.filter_target.is_none();
        let zoom_in = match m.kind {
            MouseEventKind::Down(MouseButton::Right) | MouseEventKind::Drag(MouseButton::Right) => {
                // The crosshair under the pointer, on a metric chart.
                let hit = self.hits().chart_at(pos, self.slot_at(pos));
                let Some((i, rect)) = hit.filter(|_| free && !self.is_host()) else {
                    return Effect::NONE;
                };
                self.panels.focus = Pane::Grid;
                let runs = drawn_runs(&self.shown.run, &self.runs);
                self.charts.crosshair_at(&runs, i, rect, pos.x);
                return Effect::REDRAW;
            }
            MouseEventKind::Drag(MouseButton::Left) => {
                let Some(b) = self.panels.drag else {
                    return Effect::NONE;
                };
                self.panels
                    .drag_border(b, pos, &self.screen.areas, &mut self.asks);
                self.settle();
                self.panels.dragged(b, &self.screen.areas);
                return Effect::REDRAW;
            }
            MouseEventKind::Up(_) => {
                self.panels.drag = None;
                return Effect::NONE;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                // A press on a border may start a drag; it is a click too.
                self.panels.press(&self.screen.areas, pos, free);
                None
            }
            MouseEventKind::ScrollUp => Some(true),
            MouseEventKind::ScrollDown => Some(false),
            _ => return Effect::NONE,
        };
        if matches!(self.overlay, Overlay::Help { .. }) || self.filter_target.is_some() {
            return Effect::NONE;
        }
        if let Some(fx) = self.mouse_on_runs(pos, zoom_in) {
            return fx;
        }
        let slot = self.slot_at(pos);
        // A click on a section header toggles the section.
        if let (None, Some((_, Slot::Header { sec, .. }))) = (zoom_in, slot) {
            return self.charts.click_section(&mut self.panels, sec);
        }
        let hits = self.hits();
        match (zoom_in, hits.chart_at(pos, slot), hits.pane_at(pos)) {
            (None, Some((i, _)), _) => {
                self.charts.grid.set_item(Item::Chart(i));
                self.panels.focus = Pane::Grid;
            }
            // A click on a row selects it (the same rows the view draws).
            (None, None, Some(Pane::Procs)) => {
                self.host
                    .procs
                    .click(self.screen.areas.procs, pos.y, &mut self.panels);
            }
            (None, None, Some(p)) => self.panels.focus = p,
            (Some(zin), Some((i, rect)), _) => {
                let runs = drawn_runs(&self.shown.run, &self.runs);
                self.charts.wheel_zoom(&runs, i, rect, pos.x, zin);
            }
            // The wheel over a pane that is no chart scrolls that pane.
            (Some(zin), None, Some(p)) => {
                let old = std::mem::replace(&mut self.panels.focus, p);
                let (a, dy) = if zin {
                    (Action::FocusUp, -1)
                } else {
                    (Action::FocusDown, 1)
                };
                self.motion(Motion::Step { dx: 0, dy }, a);
                self.panels.focus = old;
            }
            (_, None, None) => return Effect::NONE,
        }
        Effect::REDRAW
    }

    /// The chart or section header under `pos` in a sectioned grid.
    fn slot_at(&self, pos: Position) -> Option<(Rect, Slot)> {
        (self.charts).section_slot_at(&self.panels, self.screen.areas.grid, pos)
    }

    fn hits(&self) -> mouse::Hits<'_> {
        mouse::Hits {
            areas: &self.screen.areas,
            grid: &self.charts.grid,
            n: self.charts.shown.len(),
            fullscreen: self.panels.fullscreen,
        }
    }

    /// The workspace's runs pane under the pointer: the list takes the click or
    /// the wheel; on the highlighted run's overview below it, a click focuses
    /// the overview and the wheel scrolls its active section.
    fn mouse_on_runs(&mut self, pos: Position, wheel_up: Option<bool>) -> Option<Effect> {
        if !self.runs.in_workspace_list() || self.panels.fullscreen {
            return None;
        }
        let left = self.screen.areas.left.filter(|r| r.contains(pos))?;
        let (area, overview) = self.runs.workspace.as_deref()?.split(left);
        self.panels.focus = Pane::Left;
        let on_overview = overview.is_some_and(|r| r.contains(pos));
        if let (true, Some(up)) = (on_overview, wheel_up) {
            let lay = self.panes.overview.layout(self.screen.limits.overview_room);
            self.panes.overview.scroll_by(&lay, if up { -1 } else { 1 });
        }
        self.runs
            .workspace
            .as_mut()?
            .mouse(pos, area, on_overview, wheel_up);
        self.sync_overview(false);
        Some(Effect::REDRAW)
    }
}

/// The layout: the router lays the screen out again when a feature asks (and on
/// resize), and keeps the scroll limits for what is drawn.
impl App {
    /// What the layout takes from outside the panels.
    fn around(&self) -> panels::Around {
        let h = &self.host.header;
        panels::Around {
            size: self.screen.size,
            no_system: self.charts.sys.is_empty(),
            wide_left: self.runs.in_workspace_list(),
            live: self
                .is_host()
                .then(|| layout::header_lines(self.screen.size.width, h.bars(), h.devices.len())),
            // Prometheus holds no processes: a host opened from the cluster screen
            // has no table waiting for a scan that never comes.
            procs: self.host.cluster.is_none(),
        }
    }

    /// The panels to lay out (see `Panels::flags_in`).
    #[must_use]
    pub fn panel_flags(&self) -> layout::PanelFlags {
        self.panels.flags_in(self.around())
    }

    /// `[` / `]` (see `Panels::toggle_sidebar`), laid out at once.
    pub(crate) fn toggle_sidebar(&mut self, right: bool) {
        // On, but without room to be drawn: it stays on (drawn once the screen
        // is wide enough), and the key says why it is not.
        let hidden = |app: &Self| {
            !right
                && app.panels.left
                && app.screen.areas.left.is_none()
                && app.screen.size.width < layout::MIN_WITH_LEFT
        };
        if hidden(self) && self.screen.size.width > 0 {
            self.note_no_room_left();
            return;
        }
        let at = self.around();
        self.panels
            .toggle_sidebar(right, &self.screen.areas, at, &mut self.asks);
        self.settle();
        if hidden(self) {
            self.note_no_room_left();
        }
    }

    /// The left sidebar (the overview, a workspace's runs list) was asked for on
    /// a screen too narrow to put it beside the charts: said, not silently not
    /// shown.
    fn note_no_room_left(&mut self) {
        self.screen.note = Some(format!(
            "no room for the left sidebar: it needs {} columns beside the charts, this \
             screen has {}",
            layout::MIN_WITH_LEFT,
            self.screen.size.width
        ));
    }

    pub(crate) fn relayout(&mut self) {
        self.screen.areas = layout::areas(self.screen.size, self.panel_flags());
        self.charts.grid.relayout(self.screen.areas.grid);
        self.panels.refocus(&self.screen.areas);
        if self.screen.areas.left.is_some() {
            if let Some(ws) = self.runs.workspace.as_mut().filter(|w| w.focus_list) {
                ws.focus_list = false;
                self.panels.focus = Pane::Left;
            }
        }
        // The process table's selection stays in view at the new height.
        self.host.procs.keep_in_view(self.screen.areas.procs);
        if self.is_host() && self.host.procs.monitored.is_some() {
            // The process charts' titles are shortened to the new cell width (this
            // lays out again only if the charts appear or vanish, which they do not).
            self.regroup();
        }
    }

    /// Recompute the scroll limits for the areas and contents now; the help's
    /// scroll and the runs list's highlight stay within them.
    fn update_limits(&mut self) {
        let help = matches!(self.overlay, Overlay::Help { .. })
            .then(|| keymap::help_lines_for(&self.screen.keymap, self.help_for()).len());
        let contents = scroll::Contents {
            run: &self.shown.run,
            console: self.screen.areas.console.map(|_| self.console_view()),
            ws_overview_room: (self.runs).overview_room(self.screen.areas.left, self.shown.now),
            runs_list: self.runs.list_area(self.screen.areas.left),
            help_lines: help,
        };
        self.screen.limits = Limits::of(self.screen.size, &self.screen.areas, &contents);
        if let Overlay::Help { scroll } = &mut self.overlay {
            *scroll = (*scroll).min(self.screen.limits.help_max);
        }
        if let Some(ws) = &mut self.runs.workspace {
            ws.follow_cursor(self.screen.limits.runs_page);
        }
    }

    /// The runs of the run shown: the segments of a resumed run, oldest first;
    /// else the run alone. Its system samples and console lines are all of theirs.
    #[must_use]
    pub fn segment_runs(&self) -> Vec<&Run> {
        self.runs.segments_of_main(&self.shown.run)
    }

    /// The console lines the pane shows (see [`scroll::ConsoleView`]): of every
    /// segment of a resumed run, in order.
    #[must_use]
    pub fn console_view(&self) -> scroll::ConsoleView<'_> {
        let consoles: Vec<&crate::store::console::Console> = self
            .segment_runs()
            .into_iter()
            .map(|r| &r.console)
            .collect();
        scroll::ConsoleView::new(&consoles, &self.panes.console.filter)
    }
}

/// The main run, then the compared runs: the runs a metric chart draws (a
/// context features take instead of the `App`).
pub(crate) fn drawn_runs<'a>(main: &'a Run, runs: &'a workspace::runs::Runs) -> Vec<&'a Run> {
    std::iter::once(main)
        .chain(runs.compare.iter().map(|c| &c.run))
        .collect()
}

/// The media pane's runs: the run shown and, where it is a resumed run drawn
/// whole (its segments compared under its workspace key), its earlier segments.
pub(crate) fn media_sources<'a>(shown: &'a Shown, runs: &'a Runs) -> MediaSources<'a> {
    let key = (runs.main_tag.as_ref())
        .filter(|t| t.segments > 1)
        .map(|t| t.key.as_str());
    let earlier = (runs.compare.iter())
        .filter(|c| key.is_some_and(|k| c.ws.as_ref().is_some_and(|w| w.key == k)))
        .map(|c| (&c.run, c.dir.as_path()));
    MediaSources::new(shown, earlier)
}
