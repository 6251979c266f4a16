//! Following run files, all of them on one thread: it owns one file-system watcher
//! for the whole process (watching run *directories*, each once however many runs
//! read from it) and a table of the files followed, and reads what was appended to
//! the files an event names. Every file is also polled on a slow tick (a safety net
//! for events that never come, as on network mounts), and where no watch could be
//! had (the user's inotify instances or watches used up by other programs) on a
//! plain 500 ms poll: the thread always sleeps when there is nothing to read. A big
//! file's first read is decoded on all cores ([`super::parallel`]) by a loader
//! thread, which hands the reader back when done.
//!
//! So however many runs are drawn, following them takes three threads: this one,
//! the watcher's and the loader.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::Watcher as _;

use crate::msg::Msg;
use crate::source::file::{resolve, ParallelOptions, RunReader, Target};
use crate::source::parallel::machine_busy;
use crate::source::tail::{first_load, mtime, read, Out, Reading, Stat, TailOptions};

/// How often a watched file is polled anyway (an event missed costs this much).
const SAFETY_TICK: Duration = Duration::from_secs(2);
/// Longest sleep, so stopped readers leave the table soon.
const LONGEST_WAIT: Duration = Duration::from_secs(1);
/// A poll due within a quarter of its interval (at most this) is made now: the
/// files' ticks come in a few bursts a second, not one wake-up per file.
const SLACK: Duration = Duration::from_millis(250);

/// A file that handed news on less than this ago waits out the rest before it is
/// read again: a writer's steps that come faster are read (and drawn) together,
/// a batch or two a frame rather than one per write. A write after a quieter
/// spell is read at once.
const NEWS_GAP: Duration = Duration::from_millis(40);

/// What the follow thread is told.
enum Ctl {
    /// Follow a path (a file or a run directory).
    Add(Box<Job>),
    /// The watcher saw something change at these paths.
    Changed(Vec<PathBuf>),
    /// The watcher lost events: poll everything.
    Rescan,
    /// A first load is done; the reader stands after it (None: stopped meanwhile).
    Loaded(u64, Option<Box<RunReader>>),
    Quit,
}

struct Job {
    path: PathBuf,
    out: Out,
}

/// The process's follow thread: [`Follower::follow`] adds a run to it.
pub struct Follower {
    ctl: Sender<Ctl>,
    opts: TailOptions,
}

impl Follower {
    /// Start the follow thread.
    #[must_use]
    pub fn spawn(opts: TailOptions) -> Self {
        let (ctl, rx) = mpsc::channel();
        let table = Table::new(opts, ctl.clone(), false);
        let _ = std::thread::Builder::new()
            .name("leet-follow".into())
            .spawn(move || table.run(&rx));
        Self { ctl, opts }
    }

    /// Follow `path`; its messages come as `Msg::Tagged(tag, ..)` until `stop` is set.
    /// One node of a distributed run is followed with its sibling nodes, as one
    /// run, on a thread of their own ([`super::nodes`]).
    pub fn follow(&self, path: PathBuf, tx: SyncSender<Msg>, tag: u64, stop: Arc<AtomicBool>) {
        let out = Out::new(tx, Some(tag), stop);
        if let Some(nodes) = super::nodes::group_for_path(&path) {
            let _ = super::nodes::spawn(nodes, out, self.opts);
            return;
        }
        let _ = self.ctl.send(Ctl::Add(Box::new(Job { path, out })));
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.ctl.send(Ctl::Quit);
    }
}

/// Follow a user path (file or directory) on a thread of its own (tests, benches;
/// the viewer follows every run on one thread: [`Follower`]).
pub fn spawn_tail(path: PathBuf, tx: SyncSender<Msg>, opts: TailOptions) -> JoinHandle<()> {
    let out = Out::new(tx, None, Arc::new(AtomicBool::new(false)));
    spawn_one(path, out, opts)
}

/// [`spawn_tail`] whose messages come as `Msg::Tagged(tag, ..)` and whose thread
/// ends once `stop` is set.
pub fn spawn_tail_tagged(
    path: PathBuf,
    tx: SyncSender<Msg>,
    opts: TailOptions,
    tag: u64,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    spawn_one(path, Out::new(tx, Some(tag), stop), opts)
}

/// A follow thread for one path alone, which ends when that path is let go.
fn spawn_one(path: PathBuf, out: Out, opts: TailOptions) -> JoinHandle<()> {
    if let Some(nodes) = super::nodes::group_for_path(&path) {
        return super::nodes::spawn(nodes, out, opts);
    }
    let (ctl, rx) = mpsc::channel();
    let _ = ctl.send(Ctl::Add(Box::new(Job { path, out })));
    let table = Table::new(opts, ctl, true);
    std::thread::Builder::new()
        .name("leet-tail".into())
        .spawn(move || table.run(&rx))
        .unwrap_or_else(|_| std::thread::spawn(|| {}))
}

/// Where a followed path stands.
enum Phase {
    /// No `.wandb` file yet (a run directory just made).
    Waiting {
        told: bool,
    },
    /// Its first load is on the loader thread.
    Loading,
    Reading(Box<Reading>),
}

struct Entry {
    path: PathBuf,
    out: Out,
    phase: Phase,
    /// The directory watched for it, if a watch could be had.
    watched: Option<PathBuf>,
    /// When it is polled next, with no event, and how much earlier will do.
    due: Instant,
    slack: Duration,
    /// An event named its directory.
    woken: bool,
    /// Looks for the other nodes of its run as it grows (see `nodes::Regroup`).
    regroup: super::nodes::Regroup,
}

impl Entry {
    fn schedule(&mut self, after: Duration) {
        self.due = Instant::now() + after;
        self.slack = (after / 4).min(SLACK);
    }

    fn ready(&self, now: Instant) -> bool {
        match &self.phase {
            Phase::Loading => false,
            Phase::Reading(r) if r.more => true,
            _ => self.woken || now + self.slack >= self.due,
        }
    }
}

/// The follow thread's state.
struct Table {
    opts: TailOptions,
    ctl: Sender<Ctl>,
    /// End once the table is empty (a thread for one path).
    once: bool,
    entries: HashMap<u64, Entry>,
    next_id: u64,
    watcher: Watch,
    /// Directories watched, and for how many entries.
    dirs: HashMap<PathBuf, usize>,
    loader: Option<Sender<(u64, Box<RunReader>, Out)>>,
}

/// The one watcher, made when first needed; `Failed` when it cannot be made, after
/// which every file is polled.
enum Watch {
    NotYet,
    Failed,
    On(notify::RecommendedWatcher),
}

impl Table {
    fn new(opts: TailOptions, ctl: Sender<Ctl>, once: bool) -> Self {
        Self {
            opts,
            ctl,
            once,
            entries: HashMap::new(),
            next_id: 0,
            watcher: Watch::NotYet,
            dirs: HashMap::new(),
            loader: None,
        }
    }

    fn run(mut self, rx: &Receiver<Ctl>) {
        loop {
            let now = Instant::now();
            let wait = if self.entries.values().any(|e| e.ready(now)) {
                Duration::ZERO
            } else {
                self.entries
                    .values()
                    .filter(|e| !matches!(e.phase, Phase::Loading))
                    .map(|e| e.due.saturating_duration_since(now + e.slack))
                    .min()
                    .unwrap_or(LONGEST_WAIT)
                    .min(LONGEST_WAIT)
            };
            let first = match rx.recv_timeout(wait) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            let mut changed = HashSet::new();
            for c in first
                .into_iter()
                .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            {
                if !self.handle(c, &mut changed) {
                    return;
                }
            }
            if !changed.is_empty() {
                self.wake(&changed);
            }
            self.step();
            if self.once && self.entries.is_empty() {
                return;
            }
        }
    }

    /// Take one message; false to end the thread.
    fn handle(&mut self, c: Ctl, changed: &mut HashSet<PathBuf>) -> bool {
        match c {
            Ctl::Add(job) => {
                let id = self.next_id;
                self.next_id += 1;
                let entry = Entry {
                    path: job.path,
                    out: job.out,
                    phase: Phase::Waiting { told: false },
                    watched: None,
                    due: Instant::now(),
                    slack: Duration::ZERO,
                    woken: false,
                    regroup: super::nodes::Regroup::default(),
                };
                self.entries.insert(id, entry);
            }
            Ctl::Changed(paths) => changed.extend(paths),
            Ctl::Rescan => {
                for e in self.entries.values_mut() {
                    e.woken = true;
                }
            }
            Ctl::Loaded(id, reader) => self.loaded(id, reader),
            Ctl::Quit => return false,
        }
        true
    }

    /// Mark the entries whose directory an event named.
    fn wake(&mut self, changed: &HashSet<PathBuf>) {
        for e in self.entries.values_mut() {
            let Some(dir) = &e.watched else { continue };
            if changed.contains(dir) || changed.iter().any(|p| p.parent() == Some(dir.as_path())) {
                e.woken = true;
            }
        }
    }

    /// One unit of work for every entry that is ready, and stopped ones let go.
    fn step(&mut self) {
        let now = Instant::now();
        let ids: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.out.stopped() || e.ready(now))
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            let Some(mut e) = self.entries.remove(&id) else {
                continue;
            };
            let keep = !e.out.stopped() && self.advance(id, &mut e);
            e.woken = false;
            if keep {
                self.entries.insert(id, e);
            } else {
                self.unwatch(e.watched.take());
            }
        }
    }

    /// How long an entry sleeps between polls with no event.
    fn interval(&self, e: &Entry) -> Duration {
        if e.watched.is_some() {
            SAFETY_TICK
        } else {
            self.opts.poll
        }
    }

    /// Move an entry on; false when it is done (an error said, the loop gone).
    fn advance(&mut self, id: u64, e: &mut Entry) -> bool {
        match &mut e.phase {
            Phase::Waiting { told } => {
                let told = *told;
                self.find(id, e, told)
            }
            Phase::Loading => true,
            Phase::Reading(r) => {
                // A tick that finds the file as it was reads nothing.
                let stat = Stat::of(&r.file);
                if !e.woken && !r.more && stat.is_some() && stat == r.seen {
                    if r.loaded {
                        if let Some(nodes) = e.regroup.check(&r.file, 1, false) {
                            let _ = super::nodes::spawn_regrouped(nodes, e.out.clone(), self.opts);
                            return false;
                        }
                    }
                    e.schedule(self.interval(e));
                    return true;
                }
                // Woken too soon after the last news: polled when the gap is over,
                // where the file's growth (its stat) tells it to read.
                if let Some(at) = r.news_at.map(|t| t + NEWS_GAP) {
                    if !r.more && Instant::now() < at {
                        e.due = at;
                        e.slack = Duration::ZERO;
                        return true;
                    }
                }
                r.seen = stat;
                let keep = read(r, &e.out);
                if keep.is_some() && r.loaded {
                    // A node of its run that joined since it was opened (a job
                    // opened while it starts): the group is followed instead,
                    // on a thread of its own, from the start.
                    if let Some(nodes) = e.regroup.check(&r.file, 1, true) {
                        let _ = super::nodes::spawn_regrouped(nodes, e.out.clone(), self.opts);
                        return false;
                    }
                }
                if let Some(after) = keep {
                    e.schedule(after.unwrap_or_else(|| self.interval(e)));
                }
                keep.is_some()
            }
        }
    }

    /// Resolve a waiting entry's path: open its file, or wait on its directory.
    fn find(&mut self, id: u64, e: &mut Entry, told: bool) -> bool {
        let file = match resolve(&e.path) {
            Ok(Target::File(f)) => f,
            Ok(Target::EmptyRunDir(d)) => {
                if !told && !e.out.send(Msg::Waiting(d.clone())) {
                    return false;
                }
                e.phase = Phase::Waiting { told: true };
                self.watch(e, &d);
                e.schedule(self.interval(e));
                return true;
            }
            // The entry stops here: the run cannot be shown (the state says so,
            // not a run still loading).
            Err(err) => {
                let _ = e.out.send(Msg::Unreadable(err.to_string()));
                return false;
            }
        };
        // A run directory that waited for its file may be one node of several.
        if told {
            if let Some(nodes) = super::nodes::group_of(&file) {
                let _ = super::nodes::spawn(nodes, e.out.clone(), self.opts);
                return false;
            }
        }
        let mut reader = match RunReader::open(&file) {
            Ok(r) => r.with_chunk(self.opts.chunk),
            Err(err) => {
                let _ = e.out.send(Msg::Unreadable(err.to_string()));
                return false;
            }
        };
        let len = reader.file_len().unwrap_or(0);
        let opened = Msg::Opened {
            path: file.clone(),
            len,
            modified: mtime(&file),
        };
        if !e.out.send(opened) {
            return false;
        }
        self.watch(e, file.parent().unwrap_or(Path::new(".")));
        let parallel = self.parallel();
        if let Ok(true) = reader.wants_parallel(&parallel) {
            if self.once {
                match load(reader, &e.out, &parallel, self.opts.chunk) {
                    Some(r) => reader = r,
                    None => return false,
                }
            } else {
                self.load_later(id, reader, e.out.clone());
                e.phase = Phase::Loading;
                return true;
            }
        }
        e.phase = Phase::Reading(Box::new(Reading::new(file, reader)));
        true
    }

    /// A first load's options, its workers below the loop unless the machine is
    /// busy now (see [`machine_busy`]).
    fn parallel(&self) -> ParallelOptions {
        ParallelOptions {
            range: self.opts.chunk,
            below_loop: !machine_busy(),
            ..ParallelOptions::default()
        }
    }

    /// Queue a first load on the loader thread (started the first time).
    fn load_later(&mut self, id: u64, reader: RunReader, out: Out) {
        let job = (id, Box::new(reader), out);
        let job = match &self.loader {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (tx, rx) = mpsc::channel::<(u64, Box<RunReader>, Out)>();
        let (ctl, parallel, chunk) = (self.ctl.clone(), self.parallel(), self.opts.chunk);
        let spawned = std::thread::Builder::new()
            .name("leet-load".into())
            .spawn(move || {
                for (id, reader, out) in rx {
                    let parallel = ParallelOptions {
                        below_loop: !machine_busy(),
                        ..parallel
                    };
                    let done = load(*reader, &out, &parallel, chunk).map(Box::new);
                    if ctl.send(Ctl::Loaded(id, done)).is_err() {
                        return;
                    }
                }
            });
        if spawned.is_ok() {
            let _ = tx.send(job);
            self.loader = Some(tx);
        } else {
            // No thread to load on: read it here, in steps.
            self.loaded(job.0, Some(job.1));
        }
    }

    fn loaded(&mut self, id: u64, reader: Option<Box<RunReader>>) {
        let Some(e) = self.entries.get_mut(&id) else {
            return;
        };
        match reader {
            Some(reader) => {
                let file = reader.path().to_owned();
                e.phase = Phase::Reading(Box::new(Reading::new(file, *reader)));
                e.schedule(Duration::ZERO);
            }
            // Stopped or the loop gone: let go at the next step.
            None => {
                if let Some(e) = self.entries.remove(&id) {
                    self.unwatch(e.watched);
                }
            }
        }
    }

    /// Watch `dir` for `e` (the one watcher made when first needed); without a
    /// watch the entry is polled.
    fn watch(&mut self, e: &mut Entry, dir: &Path) {
        if e.watched.as_deref() == Some(dir) {
            return;
        }
        self.unwatch(e.watched.take());
        if let Some(n) = self.dirs.get_mut(dir) {
            *n += 1;
            e.watched = Some(dir.to_owned());
            return;
        }
        if matches!(self.watcher, Watch::NotYet) {
            self.watcher = make_watcher(self.ctl.clone());
        }
        let Watch::On(w) = &mut self.watcher else {
            return;
        };
        if w.watch(dir, notify::RecursiveMode::NonRecursive).is_ok() {
            self.dirs.insert(dir.to_owned(), 1);
            e.watched = Some(dir.to_owned());
        }
    }

    fn unwatch(&mut self, dir: Option<PathBuf>) {
        let Some(dir) = dir else { return };
        let Some(n) = self.dirs.get_mut(&dir) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.dirs.remove(&dir);
            if let Watch::On(w) = &mut self.watcher {
                let _ = w.unwatch(&dir);
            }
        }
    }
}

/// The process's watcher, sending what changed to the follow thread; `Failed` when
/// the system gives none (inotify instances used up).
fn make_watcher(ctl: Sender<Ctl>) -> Watch {
    let w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let msg = match res {
            // Our own opens of the files we read are no news.
            Ok(ev)
                if matches!(
                    ev.kind,
                    notify::EventKind::Access(notify::event::AccessKind::Open(_))
                ) =>
            {
                return;
            }
            Ok(ev) => Ctl::Changed(ev.paths),
            Err(_) => Ctl::Rescan,
        };
        let _ = ctl.send(msg);
    });
    w.map_or(Watch::Failed, Watch::On)
}

/// A big file's first read (all cores); the reader after it, or None when the loop
/// is gone or the reader stopped. A failed load leaves a reader that reads the file
/// again from its start, saying that what was handed on is void.
fn load(
    mut reader: RunReader,
    out: &Out,
    parallel: &ParallelOptions,
    chunk: usize,
) -> Option<RunReader> {
    match first_load(&mut reader, out, parallel) {
        Ok(true) => Some(reader),
        Ok(false) => None,
        Err(_) => {
            let path = reader.path().to_owned();
            match RunReader::open(&path) {
                Ok(r) => {
                    let mut r = r.with_chunk(chunk);
                    r.restart_pending = true;
                    Some(r)
                }
                Err(_) => Some(reader),
            }
        }
    }
}
