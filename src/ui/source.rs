//! The run and where its records come from: the reader's messages (file opened,
//! waiting, batches of records, errors), liveness for the status bar, and host
//! samples in the live monitor.

use std::path::{Path, PathBuf};

use super::{Asks, Cmd, Effect, Seen};
use crate::msg::{RunBatch, RunStatus, Sample};
use crate::store::metrics::MetricStore;
use crate::store::Run;

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
    /// The file is segment `.0` (from 1) of the `.1` segments of a resumed run:
    /// read alone, its rows are that segment's only.
    pub segment: Option<(usize, usize)>,
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
    /// Ticks left before `error` goes (a sampler's error); None: it stays.
    pub error_ticks: Option<u32>,
    /// The file cannot be read as a `.wandb` log: its name and why (sanitized).
    pub unreadable: Option<String>,
    /// The run is on a server and its last look went wrong: what to say
    /// (sanitized).
    pub follow_trouble: Option<String>,
    /// ... because its polls fail: its quiet says nothing of the run.
    pub polls_fail: bool,
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
    /// The file is not a `.wandb` log that can be read (see [`Shown::unreadable`]).
    Unreadable,
}

/// Seconds of quiet after which a growing file stops showing as live.
pub const LIVE_WINDOW: f64 = 5.0;

impl LiveState {
    /// A [`RunStatus`] in the viewer's words: `quiet` (seconds, None: no clue yet)
    /// splits running into live and quiet. None for an unknown run.
    #[must_use]
    pub fn of(status: RunStatus, exit_code: Option<i32>, quiet: Option<f64>) -> Option<Self> {
        Some(match status {
            RunStatus::Finished => LiveState::Finished,
            RunStatus::Failed => LiveState::Failed(exit_code.unwrap_or(-1)),
            RunStatus::Running => match quiet {
                Some(q) if q < LIVE_WINDOW => LiveState::Live,
                Some(q) => LiveState::Running(q),
                None => LiveState::Live,
            },
            RunStatus::Crashed => LiveState::MaybeCrashed(quiet.unwrap_or(0.0)),
            RunStatus::Unknown => return None,
        })
    }
}

/// The reader's messages change the run shown and where it comes from; what they
/// ask of the runtime (how many runs share its directory) goes to `asks`.
impl Shown {
    /// An empty run shown, its series holding at most `max_points` points; a
    /// run quiet for `stale_after` seconds may have crashed.
    pub(super) fn new(max_points: usize, stale_after: f64) -> Self {
        Shown {
            run: new_run(max_points),
            source: SourceState::default(),
            subject: Subject::Run,
            now: 0.0,
            stale_after,
            max_points,
            seen: Seen::NEVER,
            tag: 0,
            last_tag: 0,
            main_reading: None,
        }
    }

    /// The live host monitor: the sampler's readings go to the system store, a
    /// ring over the last `window` seconds; the main grid draws its grouped
    /// charts (all GPUs' utilisation in one chart, ...).
    pub(super) fn watch_host(&mut self, window: f64) {
        self.run.system = MetricStore::windowed(super::LIVE_SERIES_CAP, window);
        self.subject = Subject::Host { window };
    }

    /// The monitored host as the run: its name, its facts (the overview's
    /// Environment) and the sampler's options (its Config).
    pub(super) fn describe_host(
        &mut self,
        hostname: &str,
        environment: serde_json::Map<String, serde_json::Value>,
        config: &serde_json::Map<String, serde_json::Value>,
    ) {
        self.run.info.display_name = hostname.to_owned();
        self.run.info.host = hostname.to_owned();
        self.run.info.project = "live host monitor".to_owned();
        self.run.environment = environment;
        for (k, v) in config {
            self.run.config.set_json(k, &v.to_string());
        }
    }

    /// A tick of the wall clock (Unix s): whether the status bar's liveness
    /// changed, or counts quiet seconds.
    pub(super) fn tick(&mut self, now: f64) -> bool {
        let before = self.live_state();
        self.now = now;
        if self.source.error.is_none() {
            // A note that took the polls' error's place has gone: it is back.
            self.source.error.clone_from(&self.source.follow_trouble);
        }
        let after = self.live_state();
        let gone = match &mut self.source.error_ticks {
            Some(0) => {
                self.source.error = None;
                self.source.error_ticks = None;
                true
            }
            Some(n) => {
                *n -= 1;
                false
            }
            None => false,
        };
        gone || before != after
            || matches!(after, LiveState::Running(_) | LiveState::MaybeCrashed(_))
    }

    /// The reader failed (`unreadable`: the file is no `.wandb` log) with `e`.
    pub(super) fn on_error(&mut self, e: &str, unreadable: bool) -> Effect {
        let e = Some(crate::text::sanitize(e));
        if unreadable {
            self.source.unreadable = e;
        } else {
            self.source.error = e;
            self.source.error_ticks = None;
        }
        Effect::REDRAW
    }

    /// The polls of a run on a server fail with `e` (None: they answer again): the
    /// error stays in the status bar while it lasts.
    pub(super) fn on_follow_trouble(&mut self, t: Option<crate::msg::FollowTrouble>) -> Effect {
        self.source.polls_fail = t.as_ref().is_some_and(|t| t.polls_fail);
        let e = t.map(|t| crate::text::sanitize(&t.text));
        if self.source.error.is_some() && self.source.error == self.source.follow_trouble {
            self.source.error = None;
        }
        if e.is_some() {
            self.source.error.clone_from(&e);
            self.source.error_ticks = None;
        }
        self.source.follow_trouble = e;
        Effect::REDRAW
    }

    /// A sampler family failed with `e`: shown while it keeps saying so
    /// ([`crate::msg::SAMPLER_ERROR_TICKS`]).
    pub(super) fn on_sampler_error(&mut self, e: &str) -> Effect {
        self.source.error = Some(crate::text::sanitize(e));
        self.source.error_ticks = Some(crate::msg::SAMPLER_ERROR_TICKS);
        Effect::REDRAW
    }

    /// The reader found the run file.
    pub(super) fn on_opened(
        &mut self,
        path: PathBuf,
        len: u64,
        modified: Option<f64>,
        asks: &mut Asks,
    ) -> Effect {
        self.source.path = Some(crate::text::sanitize(&path.display().to_string()));
        self.ask_run_count(&path, asks);
        self.source.segment = None;
        asks.cmd(Cmd::FindSegments { file: path.clone() });
        self.source.file = Some(path);
        self.source.waiting = None;
        self.source.file_len = len;
        self.source.last_growth = modified;
        Effect::REDRAW
    }

    /// `Cmd::FindSegments` answered: where the file read is one segment of a
    /// resumed run, which one.
    pub(super) fn on_segments(&mut self, file: &Path, segments: &[PathBuf]) -> Effect {
        if self.source.file.as_deref() != Some(file) || segments.len() < 2 {
            return Effect::NONE;
        }
        let at = segments.iter().position(|s| s == file);
        self.source.segment = at.map(|i| (i + 1, segments.len()));
        Effect::REDRAW
    }

    /// The reader waits for a `.wandb` file in `dir`.
    pub(super) fn on_waiting(&mut self, dir: PathBuf, asks: &mut Asks) -> Effect {
        self.source.waiting = Some(crate::text::sanitize(&dir.display().to_string()));
        self.ask_run_count(&dir.join("x.wandb"), asks);
        self.source.waiting_dir = Some(dir);
        Effect::REDRAW
    }

    /// Ask how many runs share the wandb directory of the run file `file` (the
    /// status bar's `R: 5 runs`); 1 until the answer comes, or when it sits in none.
    fn ask_run_count(&mut self, file: &Path, asks: &mut Asks) {
        self.source.runs_here = 1;
        if let Some(wandb_dir) = crate::source::file::wandb_dir_of(file) {
            asks.cmd(Cmd::CountRuns { wandb_dir });
        }
    }

    /// The wandb directory of the main run, if it sits in one.
    fn main_wandb_dir(&self) -> Option<PathBuf> {
        let file = match (&self.source.file, &self.source.waiting_dir) {
            (Some(f), _) => f.clone(),
            (None, Some(d)) => d.join("x.wandb"),
            (None, None) => return None,
        };
        crate::source::file::wandb_dir_of(&file)
    }

    /// Runs counted: kept when they are the main run's neighbours (the user may have
    /// opened another run since the count was asked for).
    pub(super) fn on_runs_counted(&mut self, wandb_dir: &Path, count: usize) -> Effect {
        if self.main_wandb_dir().as_deref() != Some(wandb_dir) {
            return Effect::NONE;
        }
        self.source.runs_here = count.max(1);
        Effect::REDRAW
    }

    /// Liveness for the status bar.
    #[must_use]
    pub fn live_state(&self) -> LiveState {
        if self.unreadable().is_some() {
            return LiveState::Unreadable;
        }
        // The exit record is usually the last one: don't call a run crashed (or
        // quiet) before the whole file has been read once.
        if self.run.exit_code.is_none() && self.source.loading() {
            return LiveState::Loading;
        }
        let quiet = self.quiet();
        // The viewer judges the file it follows: one without a run record yet is a
        // run being written, never unknown. A run within the live window is live
        // whatever the stale limit.
        let status = RunStatus::decide(
            self.run.exit_code,
            true,
            quiet,
            self.stale_after.max(LIVE_WINDOW),
        );
        match LiveState::of(status, self.run.exit_code, quiet).unwrap_or(LiveState::Live) {
            // Quiet because the server does not answer, which says nothing of
            // the run.
            LiveState::MaybeCrashed(q) if self.source.polls_fail => LiveState::Running(q),
            s => s,
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

    /// A batch of the reader's records folded into the run; whether the run
    /// started over (its file was truncated or replaced), which drops what was
    /// kept of the old one elsewhere (the charts' zoom).
    pub(super) fn apply_batch(&mut self, b: &RunBatch) -> bool {
        if b.restarted {
            // Same store limits.
            self.run = new_run(self.max_points);
            self.seen = Seen::NEVER;
        }
        self.run.fold_batch(b);
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
        b.restarted
    }

    /// A host sample: into the system store and the run's latest time; in the
    /// live monitor (`host`) also the summary, and the sign of life.
    pub(super) fn apply_sample(&mut self, s: &Sample, host: bool) {
        for (k, v) in &s.values {
            self.run.system.push(k, s.timestamp, *v);
        }
        if host {
            for (k, v) in &s.values {
                self.run.summary.set_number(k, *v);
            }
            self.source.last_growth = Some(s.timestamp);
        }
        self.run.last_time = Some(
            self.run
                .last_time
                .map_or(s.timestamp, |l| l.max(s.timestamp)),
        );
    }
}

/// The run shown: its model, where its records come from, what is being looked
/// at, and the reader whose messages are taken.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The run: metric series + system series + overview + console.
    pub run: crate::store::Run,
    pub source: SourceState,
    pub subject: Subject,
    /// Wall clock (Unix s), from `Msg::Tick`.
    pub now: f64,
    pub stale_after: f64,
    /// Most points per series (kept to rebuild the run when its file restarts).
    pub(in crate::ui) max_points: usize,
    /// What the derived lists were last computed from.
    pub(in crate::ui) seen: Seen,
    /// Number of the reader whose messages are shown; `Msg::Tagged` from others
    /// (a run the user has left) are dropped.
    pub tag: u64,
    /// The last reader tag handed out.
    pub(in crate::ui) last_tag: u64,
    /// The run directory the main reader was started on.
    pub(crate) main_reading: Option<PathBuf>,
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

/// An empty run with the viewer's store limits.
pub(super) fn new_run(max_points: usize) -> Run {
    let mut run = Run::new();
    run.metrics = MetricStore::new(crate::store::metrics::DEFAULT_BUDGET, max_points);
    run
}
