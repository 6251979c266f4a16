//! Application state and `update`: every `Msg` goes through [`App::update`], which
//! changes state and returns an [`Effect`]; it never does I/O. Rendering reads the
//! state (`view::render`).

pub mod action;
pub mod filter;
pub mod grid;
pub mod keymap;
pub mod media;
pub mod panels;
pub mod runs;
mod scroll;
pub mod system;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use crate::msg::{Msg, RunBatch, Sample};
use crate::source::file::RunEntry;
use crate::store::metrics::MetricStore;
use crate::store::Run;
use crate::view::layout::{self, Areas};
use action::Action;
use filter::FilterState;
use grid::GridState;
use keymap::{Key, Keymap, Mode};
use panels::{Pane, Panels};
pub use runs::{Compared, ReaderCmd};
use system::SysChart;

/// What the loop should do after an update.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Effect {
    pub redraw: bool,
    pub quit: bool,
}

impl Effect {
    const NONE: Effect = Effect {
        redraw: false,
        quit: false,
    };
    const REDRAW: Effect = Effect {
        redraw: true,
        quit: false,
    };
    const QUIT: Effect = Effect {
        redraw: false,
        quit: true,
    };
}

/// Where the run's records come from, as far as the screen cares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceState {
    /// The `.wandb` file (display form).
    pub path: Option<String>,
    /// The `.wandb` file as opened.
    pub file: Option<PathBuf>,
    /// The run directory waited on (no `.wandb` file in it yet).
    pub waiting_dir: Option<PathBuf>,
    /// Run directories in the wandb directory of this run (1 = only this one).
    pub runs_here: usize,
    /// Waiting for a `.wandb` file to appear in this directory.
    pub waiting: Option<String>,
    pub read_to: u64,
    pub file_len: u64,
    /// Wall time (Unix s) the file last grew (or its mtime when opened).
    pub last_growth: Option<f64>,
    /// The file has grown while open (so `last_growth` is no longer just its mtime).
    pub grew: bool,
    /// Last source error, as text.
    pub error: Option<String>,
    /// The file cannot be read as a `.wandb` log: its name and why (sanitized).
    pub unreadable: Option<String>,
}

impl SourceState {
    /// Still reading what the file already held.
    #[must_use]
    pub fn loading(&self) -> bool {
        self.read_to < self.file_len && self.unreadable.is_none()
    }
}

/// Liveness of the run shown in the status bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LiveState {
    Finished,
    Failed(i32),
    /// The file is still being read for the first time: no verdict yet.
    Loading,
    /// No exit record; the file grew within the last few seconds.
    Live,
    /// No exit record; quiet for this many seconds (under the stale limit).
    Running(f64),
    /// No exit record and quiet for longer than the stale limit.
    MaybeCrashed(f64),
    /// The file is not a `.wandb` log that can be read (see [`App::unreadable`]).
    Unreadable,
}

/// A row of the run overview sidebar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    Header(String),
    Item(String, String),
}

/// Which filter the user is typing into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterTarget {
    Metrics,
    System,
    Overview,
    Console,
}

/// A prefix key waiting for its digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Columns,
    Rows,
}

/// Options an App starts with.
#[derive(Debug, Clone)]
pub struct Options {
    pub keymap: Keymap,
    /// Seconds of quiet before a run without exit record is shown as possibly crashed.
    pub stale_after: f64,
    /// Use colour (false under `NO_COLOR`).
    pub color: bool,
    /// Most points kept per series.
    pub max_points: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            keymap: Keymap::builtin(),
            stale_after: 120.0,
            color: true,
            max_points: crate::store::metrics::DEFAULT_SERIES_CAP,
        }
    }
}

/// Seconds of quiet after which a growing file stops showing as live.
pub const LIVE_WINDOW: f64 = 5.0;

/// The whole state of the viewer.
#[derive(Debug, Clone)]
pub struct App {
    /// The run: metric series + system series + overview + console.
    pub run: Run,
    pub source: SourceState,
    /// Wall clock (Unix s), from `Msg::Tick`.
    pub now: f64,
    pub stale_after: f64,
    pub color: bool,
    pub keymap: Keymap,
    pub size: Rect,
    pub areas: Areas,
    pub grid: GridState,
    pub panels: Panels,
    pub metric_filter: FilterState,
    pub system_filter: FilterState,
    /// Filter of the overview's rows (`o`).
    pub overview_filter: FilterState,
    /// Filter of the console's lines (`/` while the console has focus).
    pub console_filter: FilterState,
    pub filter_target: Option<FilterTarget>,
    /// Charts (by key) drawn with log-scale y.
    pub log_y: BTreeSet<String>,
    /// Charts (by key) zoomed to an x-range.
    pub zoom: BTreeMap<String, (f64, f64)>,
    /// Live host monitor: charts show the last this many seconds of samples.
    pub live_window: Option<f64>,
    /// Live host monitor: samples received.
    pub samples: u64,
    /// Live: (sample time, system key count) of the last overview rebuild.
    overview_at: (f64, usize),
    /// Most points per series (kept to rebuild the run when its file restarts).
    max_points: usize,
    pub pending: Option<Pending>,
    /// History keys to chart (hidden ones omitted), sorted.
    pub metric_keys: Vec<String>,
    /// Indices into `metric_keys` passing the filter.
    pub shown: Vec<usize>,
    pub sys_charts: Vec<SysChart>,
    /// Indices into `sys_charts` passing the system filter.
    pub sys_shown: Vec<usize>,
    /// Overview rows shown: `overview_all` through the overview filter.
    pub overview: Vec<Row>,
    /// Every overview row of the run.
    overview_all: Vec<Row>,
    seen: (usize, usize, usize, u64),
    /// The run picker's list (read when it opens) and selection.
    pub runs: Vec<RunEntry>,
    pub runs_sel: usize,
    /// Number of the reader whose messages are shown; `Msg::Tagged` from others
    /// (a run the user has left) are dropped.
    pub source_tag: u64,
    /// Readers for the loop to start or stop (`App::take_reader_cmds`).
    reader_cmds: Vec<ReaderCmd>,
    /// The last reader tag handed out.
    last_tag: u64,
    /// Runs drawn beside the main one in every chart (picked with space in `R`).
    pub compare: Vec<Compared>,
    /// The media viewer (`3`).
    pub media: media::MediaState,
}

impl App {
    /// An empty viewer.
    #[must_use]
    pub fn new(opts: Options) -> Self {
        let mut run = Run::new();
        run.metrics = MetricStore::new(crate::store::metrics::DEFAULT_BUDGET, opts.max_points);
        let mut app = Self {
            run,
            source: SourceState::default(),
            now: 0.0,
            stale_after: opts.stale_after,
            color: opts.color,
            keymap: opts.keymap,
            size: Rect::default(),
            areas: Areas::default(),
            grid: GridState::default(),
            panels: Panels::default(),
            metric_filter: FilterState::default(),
            system_filter: FilterState::default(),
            overview_filter: FilterState::default(),
            console_filter: FilterState::default(),
            filter_target: None,
            log_y: BTreeSet::new(),
            zoom: BTreeMap::new(),
            live_window: None,
            overview_at: (f64::NEG_INFINITY, 0),
            samples: 0,
            max_points: opts.max_points,
            pending: None,
            metric_keys: Vec::new(),
            shown: Vec::new(),
            sys_charts: Vec::new(),
            sys_shown: Vec::new(),
            overview: Vec::new(),
            overview_all: Vec::new(),
            seen: (usize::MAX, usize::MAX, usize::MAX, u64::MAX),
            runs: Vec::new(),
            runs_sel: 0,
            source_tag: 0,
            reader_cmds: Vec::new(),
            last_tag: 0,
            compare: Vec::new(),
            media: media::MediaState::default(),
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
        app.run.system = MetricStore::windowed(4096, window);
        app.live_window = Some(window);
        // The grid shows the grouped system charts, so the sidebar would repeat it.
        app.panels.right = false;
        app
    }

    /// Describe the monitored host (live mode): its name, and facts shown in the
    /// overview's Environment section (CPU, memory, GPUs, OS, unavailable families)
    /// and Config section (sampler options).
    pub fn set_host(
        &mut self,
        hostname: &str,
        environment: serde_json::Map<String, serde_json::Value>,
        config: serde_json::Map<String, serde_json::Value>,
    ) {
        use crate::decode::wire::{smallvec_lite::Path, Item, ItemValue};
        self.run.info.display_name = hostname.to_owned();
        self.run.info.host = hostname.to_owned();
        self.run.info.project = "live host monitor".to_owned();
        self.run.environment = environment;
        for (k, v) in &config {
            let text = v.to_string();
            let item = Item {
                key: k,
                nested: Path::default(),
                value: ItemValue::Json(&text),
            };
            self.run.config.update(&item);
        }
        self.set_overview(overview_rows(&self.run));
    }

    /// The side pane (overview, system sidebar, console) under a mouse position.
    fn pane_at(&self, pos: Position) -> Option<Pane> {
        [
            (self.areas.left, Pane::Left),
            (self.areas.right, Pane::Right),
            (self.areas.console, Pane::Console),
        ]
        .into_iter()
        .find_map(|(area, pane)| area.is_some_and(|r| r.contains(pos)).then_some(pane))
    }

    /// The key-map mode in force.
    #[must_use]
    pub fn mode(&self) -> Mode {
        if self.filter_target.is_some() {
            Mode::Filter
        } else if self.panels.runs {
            Mode::Runs
        } else if self.media.open {
            Mode::Media
        } else if self.panels.help {
            Mode::Help
        } else if self.panels.fullscreen {
            Mode::Fullscreen
        } else {
            Mode::Normal
        }
    }

    /// The focused metric key.
    #[must_use]
    pub fn focused_key(&self) -> Option<&str> {
        self.shown
            .get(self.grid.focus)
            .map(|&i| self.metric_keys[i].as_str())
    }

    /// Liveness for the status bar.
    #[must_use]
    pub fn live_state(&self) -> LiveState {
        if self.unreadable().is_some() {
            return LiveState::Unreadable;
        }
        match self.run.exit_code {
            Some(0) => LiveState::Finished,
            Some(c) => LiveState::Failed(c),
            // The exit record is usually the last one: don't call a run crashed (or
            // quiet) before the whole file has been read once.
            None if self.source.loading() => LiveState::Loading,
            None => match self.quiet() {
                None => LiveState::Live,
                Some(q) if q < LIVE_WINDOW => LiveState::Live,
                Some(q) if q < self.stale_after => LiveState::Running(q),
                Some(q) => LiveState::MaybeCrashed(q),
            },
        }
    }

    /// Seconds since the run last showed a sign of life (None: no clue yet).
    fn quiet(&self) -> Option<f64> {
        // Until the file grows, its mtime may be a copy's (cp, git clone): the newest
        // record's own time says better when the run went quiet.
        let last = match self.source.last_growth {
            Some(m) if !self.source.grew => Some(self.run.last_time.map_or(m, |r| r.min(m))),
            other => other,
        };
        last.map(|t| (self.now - t).max(0.0))
    }

    /// Why the run file cannot be shown, naming it: a wrong W&B header, or a file
    /// cut inside the header (1 to 6 bytes) that has stopped growing. None while it
    /// reads fine, or may still (a header being written). An empty file is an empty
    /// log, as for wandb's reader (EOF, where 1 to 6 bytes are "unexpected EOF").
    #[must_use]
    pub fn unreadable(&self) -> Option<String> {
        if let Some(e) = &self.source.unreadable {
            return Some(e.clone());
        }
        let path = self.source.path.as_ref()?;
        let header = crate::decode::leveldb::FILE_HEADER.len() as u64;
        let short = self.source.waiting.is_none()
            && !self.source.loading()
            && (1..header).contains(&self.source.file_len)
            && self.run.counts.total == 0;
        (short && self.quiet().is_some_and(|q| q >= LIVE_WINDOW)).then(|| {
            format!(
                "{path}: {} ({} bytes) and it is not growing",
                crate::decode::leveldb::HeaderError::TooShort,
                self.source.file_len
            )
        })
    }

    /// Apply one message.
    pub fn update(&mut self, msg: Msg) -> Effect {
        match msg {
            Msg::Key(k) => self.on_key(k),
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                self.relayout();
                Effect::REDRAW
            }
            Msg::Opened {
                path,
                len,
                modified,
            } => {
                self.source.path = Some(crate::text::sanitize(&path.display().to_string()));
                self.source.runs_here = crate::source::file::wandb_dir_of(&path)
                    .map_or(1, |d| crate::source::file::run_dirs(&d).len().max(1));
                self.source.file = Some(path);
                self.source.waiting = None;
                self.source.file_len = len;
                self.source.last_growth = modified;
                Effect::REDRAW
            }
            Msg::Waiting(dir) => {
                self.source.waiting = Some(crate::text::sanitize(&dir.display().to_string()));
                self.source.runs_here = crate::source::file::wandb_dir_of(&dir.join("x.wandb"))
                    .map_or(1, |d| crate::source::file::run_dirs(&d).len().max(1));
                self.source.waiting_dir = Some(dir);
                Effect::REDRAW
            }
            Msg::Run(batch) => {
                self.apply_batch(batch);
                Effect::REDRAW
            }
            Msg::Tick(now) => {
                let before = self.live_state();
                self.now = now;
                let after = self.live_state();
                Effect {
                    redraw: before != after
                        || matches!(after, LiveState::Running(_) | LiveState::MaybeCrashed(_)),
                    quit: false,
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
        }
    }

    fn apply_batch(&mut self, b: RunBatch) {
        if b.restarted {
            // The file was truncated or replaced: start the run over, same store limits.
            let mut run = Run::new();
            run.metrics = MetricStore::new(crate::store::metrics::DEFAULT_BUDGET, self.max_points);
            self.run = run;
            self.zoom.clear();
            self.seen = (usize::MAX, usize::MAX, usize::MAX, u64::MAX);
        }
        self.run.fold_batch(&b);
        self.run.damage.set_open(b.open);
        self.run.damage.incomplete_tail = b.pending;
        // A batch comes only from a file whose header reads.
        self.source.unreadable = None;
        self.source.read_to = b.read_to;
        self.source.file_len = self.source.file_len.max(b.file_len).max(b.read_to);
        if b.read_to == b.file_len {
            self.source.file_len = b.file_len;
        }
        if let Some(t) = b.grew_at {
            self.source.grew = true;
            self.source.last_growth = Some(self.source.last_growth.map_or(t, |l| l.max(t)));
        }
        let any_record = !b.records.is_empty()
            || b.events
                .iter()
                .any(crate::decode::event::Events::has_records);
        if any_record || b.grew_at.is_some() {
            self.source.error = None;
        }
        self.refresh();
    }

    fn apply_sample(&mut self, s: &Sample) {
        use crate::decode::wire::{smallvec_lite::Path, Item, ItemValue};
        for (k, v) in &s.values {
            self.run.system.push(k, s.timestamp, *v);
        }
        if self.live_window.is_some() {
            for (k, v) in &s.values {
                let item = Item {
                    key: k,
                    nested: Path::default(),
                    value: ItemValue::Number(*v),
                };
                self.run.summary.update(&item);
            }
            self.source.last_growth = Some(s.timestamp);
            self.samples += 1;
            // The overview lists every key's latest value (sorted): with many keys
            // that is most of a sample's cost, so with a short interval it is rebuilt
            // once a second of samples, and whenever keys are added.
            let at = (s.timestamp, self.run.system.len());
            if at.0 - self.overview_at.0 >= 1.0 || at.1 != self.overview_at.1 {
                self.overview_at = at;
                self.set_overview(overview_rows(&self.run));
            }
        }
        self.run.last_time = Some(
            self.run
                .last_time
                .map_or(s.timestamp, |l| l.max(s.timestamp)),
        );
        self.refresh();
    }

    /// Recompute derived lists when their inputs changed.
    fn refresh(&mut self) {
        let meta = ["run", "config", "summary", "environment", "exit"]
            .iter()
            .filter_map(|k| self.run.counts.by_type.get(k))
            .sum::<u64>();
        // Compared runs count in the metric keys' signature (their keys are charted
        // too), with their number so removing one is noticed.
        let compared: usize = self
            .compare
            .iter()
            .map(|c| c.run.metrics.len() + c.run.metric_defs.len() + 1)
            .sum();
        let sig = (
            self.run.metrics.len() + compared,
            self.run.metric_defs.len(),
            self.run.system.len(),
            meta,
        );
        if sig.0 != self.seen.0 || sig.1 != self.seen.1 {
            let visible = |r: &Run| {
                r.metrics
                    .keys()
                    .iter()
                    .filter(|k| !r.is_hidden(k))
                    .cloned()
                    .collect::<Vec<_>>()
            };
            let mut keys: BTreeSet<String> = visible(&self.run).into_iter().collect();
            for c in &self.compare {
                keys.extend(visible(&c.run));
            }
            let keys: Vec<String> = keys.into_iter().collect();
            let focused = self.focused_key().map(str::to_owned);
            self.metric_keys = keys;
            self.refilter_metrics(focused.as_deref());
        }
        if sig.2 != self.seen.2 {
            let was_empty = self.sys_charts.is_empty();
            self.sys_charts = system::group(self.run.system.keys().iter().map(String::as_str));
            self.refilter_system();
            if was_empty != self.sys_charts.is_empty() {
                self.relayout();
            }
            if self.live_window.is_some() {
                // Live: the grid's items are the system charts, one id each. Charts
                // appear over the first samples; focus on the first stays on the first.
                let focused = (self.grid.focus > 0)
                    .then(|| self.focused_key().map(str::to_owned))
                    .flatten();
                self.metric_keys = system::chart_ids(&self.sys_charts);
                self.refilter_metrics(focused.as_deref());
            }
        }
        if sig.3 != self.seen.3 {
            self.set_overview(overview_rows(&self.run));
        }
        self.seen = sig;
    }

    fn refilter_metrics(&mut self, keep: Option<&str>) {
        let f = &self.metric_filter;
        let live = self.live_window.is_some();
        self.shown = self
            .metric_keys
            .iter()
            .enumerate()
            .filter(|(i, k)| {
                f.matches(k)
                    || (live
                        && self
                            .sys_charts
                            .get(*i)
                            .is_some_and(|c| c.series.iter().any(|s| f.matches(&s.key))))
            })
            .map(|(i, _)| i)
            .collect();
        self.grid.focus = keep
            .and_then(|k| self.shown.iter().position(|&i| self.metric_keys[i] == k))
            .unwrap_or(0);
        self.grid.clamp(self.shown.len());
        if self.shown.is_empty() {
            self.panels.fullscreen = false;
        }
    }

    fn set_overview(&mut self, rows: Vec<Row>) {
        self.overview_all = rows;
        self.refilter_overview();
    }

    /// Overview rows whose key or value matches the overview filter, under their
    /// section headers (which then count the matches: `Summary [3 of 276]`).
    fn refilter_overview(&mut self) {
        let f = &self.overview_filter;
        if !f.is_active() {
            self.overview.clone_from(&self.overview_all);
            return;
        }
        let mut out = Vec::new();
        let mut header: Option<(usize, &str)> = None;
        let mut hits = 0;
        let close = |out: &mut Vec<Row>, header: Option<(usize, &str)>, hits: usize| {
            if let Some((at, h)) = header {
                if hits == 0 {
                    out.truncate(at);
                } else {
                    let name = h.split(" [").next().unwrap_or(h);
                    let total = h
                        .rsplit_once('[')
                        .map_or("", |(_, n)| n.trim_end_matches(']'));
                    out[at] = Row::Header(format!("{name} [{hits} of {total}]"));
                }
            }
        };
        for r in &self.overview_all {
            match r {
                Row::Header(h) => {
                    close(&mut out, header, hits);
                    header = Some((out.len(), h.as_str()));
                    hits = 0;
                    out.push(r.clone());
                }
                Row::Item(k, v) => {
                    if f.matches(k) || f.matches(v) {
                        hits += 1;
                        out.push(r.clone());
                    }
                }
            }
        }
        close(&mut out, header, hits);
        self.overview = out;
        self.panels.left_scroll = self.panels.left_scroll.min(self.overview.len());
    }

    fn refilter_system(&mut self) {
        let f = &self.system_filter;
        self.sys_shown = self
            .sys_charts
            .iter()
            .enumerate()
            .filter(|(_, c)| f.matches(&c.title) || c.series.iter().any(|s| f.matches(&s.key)))
            .map(|(i, _)| i)
            .collect();
        self.panels.right_scroll = self
            .panels
            .right_scroll
            .min(self.sys_shown.len().saturating_sub(1));
    }

    /// The panels to lay out: the user's choice, less a system sidebar with nothing to
    /// show (a run without system metrics gives its width to the charts).
    #[must_use]
    pub fn panel_flags(&self) -> layout::PanelFlags {
        let mut f = self.panels.flags();
        f.right &= !self.sys_charts.is_empty();
        f
    }

    /// `[` / `]`: hide the sidebar if it is on screen, otherwise show it; when the
    /// terminal has no room for both sidebars, the other one gives way, so the key
    /// always does what it says.
    fn toggle_sidebar(&mut self, right: bool) {
        let shown = |a: &layout::Areas| {
            if right {
                a.right.is_some()
            } else {
                a.left.is_some()
            }
        };
        if shown(&self.areas) {
            if right {
                self.panels.right = false;
            } else {
                self.panels.left = false;
            }
        } else {
            if right {
                self.panels.right = true;
            } else {
                self.panels.left = true;
            }
            let flags = self.panel_flags();
            if !shown(&layout::areas(self.size, flags)) {
                let mut alone = flags;
                if right {
                    alone.left = false;
                } else {
                    alone.right = false;
                }
                if shown(&layout::areas(self.size, alone)) {
                    if right {
                        self.panels.left = false;
                    } else {
                        self.panels.right = false;
                    }
                }
            }
        }
        self.relayout();
    }

    fn relayout(&mut self) {
        self.areas = layout::areas(self.size, self.panel_flags());
        self.grid.relayout(self.areas.grid);
        let visible = |p: Pane| match p {
            Pane::Grid => true,
            Pane::Left => self.areas.left.is_some(),
            Pane::Right => self.areas.right.is_some(),
            Pane::Console => self.areas.console.is_some(),
        };
        if !visible(self.panels.focus) {
            self.panels.focus = Pane::Grid;
        }
    }

    fn visible_panes(&self) -> Vec<Pane> {
        let mut v = vec![Pane::Grid];
        if self.areas.left.is_some() {
            v.push(Pane::Left);
        }
        if self.areas.right.is_some() {
            v.push(Pane::Right);
        }
        if self.areas.console.is_some() {
            v.push(Pane::Console);
        }
        v
    }

    fn on_key(&mut self, ev: KeyEvent) -> Effect {
        if ev.kind == KeyEventKind::Release {
            return Effect::NONE;
        }
        let key = Key::from_event(&ev);
        if key.is_ctrl_c() {
            return Effect::QUIT;
        }
        if let Some(p) = self.pending.take() {
            if let (KeyCode::Char(d @ '0'..='9'), true) = (key.code, key.mods.is_empty()) {
                let n = u16::try_from(d.to_digit(10).unwrap_or(0)).unwrap_or(0);
                let v = (n > 0).then_some(n);
                match p {
                    Pending::Columns => self.grid.cols_setting = v,
                    Pending::Rows => self.grid.rows_setting = v,
                }
                let focus = self.grid.focus;
                self.relayout();
                self.grid.focus = focus;
                return Effect::REDRAW;
            }
        }
        let mode = self.mode();
        match self.keymap.action(mode, &key) {
            Some(a) => self.act(a),
            None if mode == Mode::Filter => {
                if let KeyCode::Char(c) = key.code {
                    if !key
                        .mods
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                    {
                        self.with_filter(|f| f.push(c));
                        return Effect::REDRAW;
                    }
                }
                Effect::NONE
            }
            None => Effect::NONE,
        }
    }

    fn with_filter(&mut self, f: impl FnOnce(&mut FilterState)) {
        match self.filter_target {
            // A changed filter starts again from its first match, as a search does.
            Some(FilterTarget::Metrics) => {
                f(&mut self.metric_filter);
                self.refilter_metrics(None);
            }
            Some(FilterTarget::System) => {
                f(&mut self.system_filter);
                self.panels.right_scroll = 0;
                self.refilter_system();
            }
            Some(FilterTarget::Overview) => {
                f(&mut self.overview_filter);
                self.panels.left_scroll = 0;
                self.refilter_overview();
            }
            Some(FilterTarget::Console) => {
                f(&mut self.console_filter);
                self.panels.console_back = 0;
            }
            None => {}
        }
    }

    /// Perform an action (what a key is bound to).
    pub fn act(&mut self, a: Action) -> Effect {
        if self.panels.runs {
            return self.act_runs(a);
        }
        if self.media.open {
            return self.act_media(a);
        }
        let n = self.shown.len();
        match a {
            Action::Quit => return Effect::QUIT,
            Action::None | Action::OpenRun | Action::ToggleCompare => return Effect::NONE,
            Action::ToggleMedia => self.open_media(),
            Action::PickRun => return self.open_picker(),
            Action::Help => {
                self.panels.help = !self.panels.help;
                self.panels.help_scroll = 0;
            }
            Action::Back => {
                if self.panels.help {
                    self.panels.help = false;
                } else if self.panels.fullscreen {
                    self.panels.fullscreen = false;
                } else if self.panels.focus != Pane::Grid {
                    self.panels.focus = Pane::Grid;
                } else {
                    return Effect::NONE;
                }
            }
            Action::ToggleLeftSidebar => self.toggle_sidebar(false),
            Action::ToggleRightSidebar => self.toggle_sidebar(true),
            Action::ToggleConsole => {
                self.panels.console = !self.panels.console;
                self.relayout();
                if self.panels.console && self.areas.console.is_some() {
                    self.panels.focus = Pane::Console;
                }
            }
            Action::CyclePaneFocus | Action::CyclePaneFocusBack => {
                let panes = self.visible_panes();
                let i = panes
                    .iter()
                    .position(|&p| p == self.panels.focus)
                    .unwrap_or(0);
                let j = if a == Action::CyclePaneFocus {
                    (i + 1) % panes.len()
                } else {
                    (i + panes.len() - 1) % panes.len()
                };
                self.panels.focus = panes[j];
            }
            Action::FocusUp | Action::FocusDown | Action::FocusLeft | Action::FocusRight => {
                self.move_focus(a);
            }
            Action::NextPage | Action::PrevPage | Action::FirstPage | Action::LastPage => {
                self.page(a);
            }
            Action::Fullscreen => {
                if n == 0 {
                    return Effect::NONE;
                }
                self.panels.fullscreen = true;
            }
            Action::ToggleLogY => {
                let Some(k) = self.focused_key().map(str::to_owned) else {
                    return Effect::NONE;
                };
                if !self.log_y.remove(&k) {
                    self.log_y.insert(k);
                }
            }
            Action::SetColumns => self.pending = Some(Pending::Columns),
            Action::SetRows => self.pending = Some(Pending::Rows),
            Action::ResetZoom => {
                if let Some(k) = self.focused_key().map(str::to_owned) {
                    self.zoom.remove(&k);
                }
            }
            // With the console focused, `/` filters its lines (as wandb leet does).
            Action::StartFilter if self.panels.focus == Pane::Console => {
                self.console_filter.start();
                self.filter_target = Some(FilterTarget::Console);
            }
            Action::StartFilter => {
                self.metric_filter.start();
                self.filter_target = Some(FilterTarget::Metrics);
            }
            Action::StartSystemFilter => {
                self.system_filter.start();
                self.filter_target = Some(FilterTarget::System);
            }
            Action::StartOverviewFilter => {
                self.overview_filter.start();
                self.filter_target = Some(FilterTarget::Overview);
                if self.areas.left.is_none() {
                    self.toggle_sidebar(false);
                }
            }
            Action::ClearFilters => {
                self.metric_filter.clear();
                self.system_filter.clear();
                self.overview_filter.clear();
                self.console_filter.clear();
                let keep = self.focused_key().map(str::to_owned);
                self.refilter_metrics(keep.as_deref());
                self.refilter_system();
                self.refilter_overview();
            }
            Action::FilterApply => {
                self.with_filter(FilterState::apply);
                self.filter_target = None;
            }
            Action::FilterCancel => {
                self.with_filter(FilterState::cancel);
                self.filter_target = None;
            }
            Action::FilterBackspace => self.with_filter(FilterState::backspace),
            Action::FilterClearInput => self.with_filter(|f| f.set_draft(String::new())),
        }
        Effect::REDRAW
    }

    fn move_focus(&mut self, a: Action) {
        let n = self.shown.len();
        let (dx, dy): (isize, isize) = match a {
            Action::FocusUp => (0, -1),
            Action::FocusDown => (0, 1),
            Action::FocusLeft => (-1, 0),
            _ => (1, 0),
        };
        if self.panels.help {
            self.panels.help_scroll = self.panels.help_scroll.saturating_add_signed(dy);
            return;
        }
        if self.panels.fullscreen {
            self.grid.step(dx + dy, n);
            return;
        }
        match self.panels.focus {
            Pane::Grid => {
                let cols = isize::try_from(self.grid.cols.max(1)).unwrap_or(1);
                self.grid.step(dx + dy * cols, n);
            }
            Pane::Left => {
                let max = self.overview_max_scroll();
                self.panels.left_scroll = scroll(self.panels.left_scroll.min(max), dy, max + 1);
            }
            Pane::Right => {
                self.panels.right_scroll =
                    scroll(self.panels.right_scroll, dy, self.sys_shown.len());
            }
            Pane::Console => {
                let max = self.console_max_back();
                self.panels.console_back = scroll(self.panels.console_back.min(max), -dy, max + 1);
            }
        }
    }

    fn page(&mut self, a: Action) {
        let n = self.shown.len();
        let big = usize::MAX / 4;
        let (delta, abs): (isize, Option<usize>) = match a {
            Action::NextPage => (1, None),
            Action::PrevPage => (-1, None),
            Action::FirstPage => (0, Some(0)),
            _ => (0, Some(big)),
        };
        if self.panels.help {
            self.panels.help_scroll = match abs {
                Some(0) => 0,
                Some(_) => big,
                None => self.panels.help_scroll.saturating_add_signed(delta * 10),
            };
            return;
        }
        match self.panels.focus {
            Pane::Grid => {
                let p = abs.unwrap_or_else(|| self.grid.page().saturating_add_signed(delta));
                self.grid.goto_page(p, n);
            }
            Pane::Left => {
                let (max, step) = (self.overview_max_scroll(), self.overview_page());
                let at = self.panels.left_scroll.min(max);
                self.panels.left_scroll = match abs {
                    Some(0) => 0,
                    Some(_) => max,
                    None => scroll(at, delta * signed(step), max + 1),
                };
            }
            Pane::Right => {
                let len = self.sys_shown.len();
                let step = self.areas.right.map_or(1, layout::sys_per_page);
                self.panels.right_scroll = match abs {
                    Some(0) => 0,
                    Some(_) => len.saturating_sub(step),
                    None => scroll(self.panels.right_scroll, delta * signed(step), len),
                };
            }
            Pane::Console => {
                let (max, step) = (self.console_max_back(), self.console_page());
                let at = self.panels.console_back.min(max);
                self.panels.console_back = match abs {
                    Some(0) => max,
                    Some(_) => 0,
                    None => scroll(at, -delta * signed(step), max + 1),
                };
            }
        }
    }

    fn on_mouse(&mut self, m: MouseEvent) -> Effect {
        let pos = Position::new(m.column, m.row);
        let zoom_in = match m.kind {
            MouseEventKind::Down(MouseButton::Left) => None,
            MouseEventKind::ScrollUp => Some(true),
            MouseEventKind::ScrollDown => Some(false),
            _ => return Effect::NONE,
        };
        if self.panels.help || self.filter_target.is_some() {
            return Effect::NONE;
        }
        // Which chart is under the pointer?
        let hit = if self.panels.fullscreen {
            Some((self.grid.focus, layout::grid_body(self.areas.grid)))
        } else if self.areas.grid.contains(pos) {
            let body = layout::grid_body(self.areas.grid);
            let start = self.grid.page_start();
            (0..self.grid.per_page())
                .take_while(|i| start + i < self.shown.len())
                .map(|i| {
                    let (c, r) = self.grid.shape(self.shown.len());
                    (start + i, layout::grid_cell(body, c, r, i))
                })
                .find(|(_, r)| r.contains(pos))
        } else {
            None
        };
        match zoom_in {
            None => {
                if let Some((i, _)) = hit {
                    self.grid.focus = i;
                    self.panels.focus = Pane::Grid;
                } else if let Some(p) = self.pane_at(pos) {
                    self.panels.focus = p;
                } else {
                    return Effect::NONE;
                }
                Effect::REDRAW
            }
            Some(zin) => {
                let Some((i, rect)) = hit else {
                    // Wheel elsewhere scrolls that pane.
                    let dy = if zin { -1 } else { 1 };
                    let old = self.panels.focus;
                    let Some(p) = self.pane_at(pos) else {
                        return Effect::NONE;
                    };
                    self.panels.focus = p;
                    self.move_focus(if dy < 0 {
                        Action::FocusUp
                    } else {
                        Action::FocusDown
                    });
                    self.panels.focus = old;
                    return Effect::REDRAW;
                };
                self.grid.focus = i;
                let key = self.metric_keys[self.shown[i]].clone();
                let Some((fx0, fx1)) = self
                    .run
                    .metrics
                    .get(&key)
                    .and_then(crate::store::Series::x_bounds)
                else {
                    return Effect::REDRAW;
                };
                let (x0, x1) = self.zoom.get(&key).copied().unwrap_or((fx0, fx1));
                let frac = if rect.width > 2 {
                    (f64::from(m.column.saturating_sub(rect.x + 1)) / f64::from(rect.width - 2))
                        .clamp(0.0, 1.0)
                } else {
                    0.5
                };
                let at = x0 + (x1 - x0) * frac;
                let k = if zin { 0.7 } else { 1.0 / 0.7 };
                let mut nx0 = at - (at - x0) * k;
                let mut nx1 = at + (x1 - at) * k;
                if nx1 - nx0 < 1e-9 * (fx1 - fx0).abs().max(1e-300)
                    || nx1 - nx0 < 1.0 && fx1 - fx0 >= 2.0
                {
                    return Effect::REDRAW;
                }
                nx0 = nx0.max(fx0);
                nx1 = nx1.min(fx1);
                if nx0 <= fx0 && nx1 >= fx1 {
                    self.zoom.remove(&key);
                } else {
                    self.zoom.insert(key, (nx0, nx1));
                }
                Effect::REDRAW
            }
        }
    }
}

fn scroll(pos: usize, d: isize, len: usize) -> usize {
    pos.saturating_add_signed(d).min(len.saturating_sub(1))
}

/// Overview sidebar rows: run facts, then Summary, Config and Environment flattened.
fn overview_rows(run: &Run) -> Vec<Row> {
    use crate::inspect::flatten_into;
    use crate::text::{natural_cmp, sanitize};
    let mut rows = Vec::new();
    let i = &run.info;
    let mut item = |k: &str, v: &str| {
        if !v.is_empty() {
            rows.push(Row::Item(k.to_owned(), sanitize(v)));
        }
    };
    item("Name", &i.display_name);
    item("Project", &i.project);
    item("Entity", &i.entity);
    item("Group", &i.group);
    item("Job type", &i.job_type);
    item("Tags", &i.tags.join(", "));
    item("Notes", &i.notes);
    if let Some((s, n)) = i.start_time {
        item(
            "Started",
            &crate::inspect::rfc3339(s, n.min(0)).unwrap_or_default(),
        );
    }
    item("Host", &i.host);
    item("Git", &i.git_commit);
    let section = |rows: &mut Vec<Row>, title: &str, flat: Vec<(String, String)>| {
        rows.push(Row::Header(format!("{title} [{}]", flat.len())));
        for (k, v) in flat {
            rows.push(Row::Item(sanitize(&k), sanitize(&v)));
        }
    };
    let mut flat = Vec::new();
    flatten_into("", &run.summary.to_json(), &mut flat);
    flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    section(&mut rows, "Summary", flat);
    let mut flat = Vec::new();
    flatten_into("", &run.config.to_json(), &mut flat);
    flat.retain(|(k, _)| k != "_wandb");
    flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    section(&mut rows, "Config", flat);
    let mut flat = Vec::new();
    flatten_into("", &run.environment, &mut flat);
    flat.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    section(&mut rows, "Environment", flat);
    rows
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}
