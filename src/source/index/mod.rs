//! The workspace's run index: one [`RunIndexEntry`] per run directory of a wandb
//! directory (state, names, tags, notes, start, runtime, last step, the full config
//! and the last summary), read off the loop thread in parallel and cached by path,
//! size and modification time (see [`cache`]).
//!
//! State, decided by `msg::RunStatus::decide` (as the app's `live_state` decides it
//! for the run it shows):
//! - an exit record → finished (code 0) or failed (any other code);
//! - no exit record and no run record → unknown (a file just created);
//! - else running when the run showed a sign of life within `stale_after` seconds
//!   (120, leet's `--stale-after` default), crashed when quiet for longer. The sign
//!   of life is the file's mtime, or the newest record's own time when that is
//!   older (a copied or checked-out file has a fresh mtime; `live_state` does the
//!   same until the file grows, and so does the index once a scan has seen it
//!   grow: `RunIndexEntry::grown`). The state is decided at each scan, from cached
//!   facts too, so a quiet run turns crashed without its file being read again.
//!
//! Config and summary are nested JSON objects, as W&B shows them (`inspect
//! --summary`): config folds the run record's config and then every `config`
//! record; summary folds every `summary` record, a removal (or a value set to null)
//! dropping the key and everything below it. The config's top-level `_wandb` key
//! (W&B's own bookkeeping) is left out, as `inspect` and W&B leave it out; the
//! summary's (`_wandb.runtime`) is kept, as W&B's overview shows it. The
//! environment (W&B's metadata) is kept too, bounded (see `fold::fold_env`), for
//! the overview of the run highlighted in the workspace.

pub mod cache;
mod fold;
mod scan;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use self::fold::Fold;
use self::scan::{check_one, read_jobs, Check, Outcome, ReadJob};
use super::reader::RunReader;
use super::resolve::run_dirs;
use crate::msg::{RunIndexEntry, RunStatus};
use leet_format::event::{Event, Events, Timestamp};

/// Seconds of quiet after which a run without an exit record counts as crashed
/// (leet's `--stale-after` default).
pub const STALE_AFTER: f64 = 120.0;

/// Summary and config keys an index entry keeps of a run (each); the others are
/// counted in its `keys_dropped`.
pub const MAX_INDEXED_KEYS: usize = fold::MAX_KEYS;

/// How a scan decides what it cannot read from the files.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanOptions {
    /// Now, Unix seconds (None: the clock).
    pub now: Option<f64>,
    /// See [`STALE_AFTER`].
    pub stale_after: f64,
    /// Threads reading files (None: the available parallelism).
    pub threads: Option<usize>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            now: None,
            stale_after: STALE_AFTER,
            threads: None,
        }
    }
}

/// What a scan found, and how.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Every run directory, newest first (the order of their names' start times).
    pub entries: Vec<RunIndexEntry>,
    /// Run files read this time (the rest came from the cache or have no file).
    pub read: usize,
    /// Entries taken from the cache.
    pub cached: usize,
    /// Why the cache was not used (None: used, or there was none yet).
    pub cache_rejected: Option<String>,
    /// Why the cache could not be written (the index is still complete).
    pub cache_write_error: Option<String>,
}

/// Index every run directory of `wandb_dir`, newest first, using and refreshing
/// the cache file for it in `cache_dir`. Blocking: call it off the loop thread.
#[must_use]
pub fn scan(wandb_dir: &Path, cache_dir: &Path) -> Vec<RunIndexEntry> {
    scan_with(wandb_dir, cache_dir, &ScanOptions::default()).entries
}

/// [`scan`] with options, saying what it read.
#[must_use]
pub fn scan_with(wandb_dir: &Path, cache_dir: &Path, opts: &ScanOptions) -> Scan {
    scan_after(wandb_dir, cache_dir, opts, None)
}

/// [`scan_with`] starting from the entries of the previous scan of the same
/// directory (`prior`, kept in memory by the caller) instead of the cache file: a
/// scan every second then costs a `stat` or two per run, not parsing the cache.
#[must_use]
pub fn scan_after(
    wandb_dir: &Path,
    cache_dir: &Path,
    opts: &ScanOptions,
    prior: Option<&[RunIndexEntry]>,
) -> Scan {
    scan_progress(wandb_dir, cache_dir, opts, prior, &mut |_| {})
}

/// Least time between two partial listings a scan hands to `progress`.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// [`scan_after`], telling `progress` what it has while run files are still
/// being read, so a list can show before a big file is done: first, when some
/// run has nothing known of it yet, every run directory (cached entries as they
/// are, the rest as placeholders marked `reading`), then the same with the runs
/// read since, at most every [`PROGRESS_EVERY`] while placeholders remain.
#[must_use]
pub fn scan_progress(
    wandb_dir: &Path,
    cache_dir: &Path,
    opts: &ScanOptions,
    prior: Option<&[RunIndexEntry]>,
    progress: &mut dyn FnMut(Vec<RunIndexEntry>),
) -> Scan {
    let canonical = std::fs::canonicalize(wandb_dir).unwrap_or_else(|_| wandb_dir.to_owned());
    let cache_file = cache::file_for(cache_dir, &canonical);
    let (mut old, cache_rejected) = match prior {
        Some(p) => (p.iter().map(|e| (e.dir.clone(), e.clone())).collect(), None),
        None => match cache::load(&cache_file, &canonical) {
            Ok(c) => (c, None),
            Err(cache::LoadError::Missing) => (HashMap::default(), None),
            Err(e) => (HashMap::default(), Some(e.to_string())),
        },
    };
    let now = opts.now.unwrap_or_else(unix_now);
    // Each run checked (a stat or two): what is cached is done, the rest is read.
    let mut slots: Vec<Option<(RunIndexEntry, Outcome)>> = Vec::new();
    let mut listing: Vec<RunIndexEntry> = Vec::new();
    let mut jobs: Vec<(usize, ReadJob)> = Vec::new();
    for (k, dir) in run_dirs(&canonical).into_iter().rev().enumerate() {
        let prior = old.remove(&dir);
        match check_one(dir, prior, now) {
            Check::Done(e, o) => {
                listing.push(e.clone());
                slots.push(Some((e, o)));
            }
            Check::Read(job) => {
                listing.push(job.placeholder());
                slots.push(None);
                jobs.push((k, job));
            }
        }
    }
    for e in &mut listing {
        e.state = state_at(e, now, opts.stale_after);
    }
    let mut waiting = listing.iter().filter(|e| e.reading).count();
    if waiting > 0 {
        progress(listing.clone());
    }
    let (mut sent, mut fresh) = (Instant::now(), false);
    read_jobs(jobs, opts.threads, now, |done| {
        if let Some((k, out)) = done {
            if let (Some(slot), Some(l)) = (slots.get_mut(k), listing.get_mut(k)) {
                waiting -= usize::from(l.reading);
                *l = out.0.clone();
                l.state = state_at(l, now, opts.stale_after);
                *slot = Some(out);
                fresh = true;
            }
        }
        // Runs read since the last listing are told within a while, even when
        // the next file takes long.
        if fresh && waiting > 0 && sent.elapsed() >= PROGRESS_EVERY {
            progress(listing.clone());
            (sent, fresh) = (Instant::now(), false);
        }
    });
    let (mut read, mut cached, mut moved) = (0, 0, false);
    let mut entries = Vec::with_capacity(slots.len());
    for (slot, placeholder) in slots.into_iter().zip(listing) {
        match slot {
            Some((e, o)) => {
                read += usize::from(o == Outcome::Read);
                cached += usize::from(matches!(o, Outcome::Cached | Outcome::CachedMoved));
                moved |= o == Outcome::CachedMoved;
                entries.push(e);
            }
            // A reader thread died (it never should): the run is listed anyway.
            None => entries.push(RunIndexEntry {
                dir: placeholder.dir,
                error: Some("not read (internal error)".into()),
                ..RunIndexEntry::default()
            }),
        }
    }
    for e in &mut entries {
        e.state = state_at(e, now, opts.stale_after);
    }
    let cache_write_error = if read > 0 || moved || !old.is_empty() || cache_rejected.is_some() {
        cache::store(&cache_file, &canonical, &entries)
            .err()
            .map(|e| e.to_string())
    } else {
        None
    };
    Scan {
        entries,
        read,
        cached,
        cache_rejected,
        cache_write_error,
    }
}

/// A run whose exit record was read is done writing: its directory and file are
/// looked at again by [`unchanged`] once in this many seconds, a different share of
/// the done runs each second, so an idle workspace of 1,000 finished runs costs a
/// directory listing and a few dozen stats a second rather than two thousand (a
/// rewritten finished run still shows within this time; new and removed runs, and
/// runs still writing, within a second).
pub const DONE_RECHECK_S: u64 = 30;

/// A run quiet past the stale limit without an exit record ("crashed?") is looked
/// at once in this many seconds: one that comes back to life shows within it.
pub const QUIET_RECHECK_S: u64 = 5;

/// Whether a scan of `wandb_dir` now would give `prior` again, the entries of the
/// last scan (newest first), as far as the workspace cares: the same run
/// directories, none of them or their files changed (a big file still writing,
/// within its wait before it is read again, counts as unchanged; a finished run
/// is looked at once in [`DONE_RECHECK_S`]), and no state due to change with time
/// (a quiet run turning crashed). A `read_dir` and a stat or two per run still
/// writing: cheap enough for every second.
#[must_use]
pub fn unchanged(wandb_dir: &Path, prior: &[RunIndexEntry], opts: &ScanOptions) -> bool {
    unchanged_listed(wandb_dir, prior, opts, false)
}

/// [`unchanged`]; `listed`: the caller knows the wandb directory lists the same
/// entries as when `prior` was scanned (its modification time has not moved since),
/// so its run directories are `prior`'s and it is not read again.
#[must_use]
pub fn unchanged_listed(
    wandb_dir: &Path,
    prior: &[RunIndexEntry],
    opts: &ScanOptions,
    listed: bool,
) -> bool {
    // Oldest first, as listed; `prior` is newest first. Not listed: `prior`'s own.
    let listing: Option<Vec<PathBuf>> = (!listed).then(|| {
        let canonical = std::fs::canonicalize(wandb_dir).unwrap_or_else(|_| wandb_dir.to_owned());
        run_dirs(&canonical)
    });
    if listing.as_ref().is_some_and(|l| l.len() != prior.len()) {
        return false;
    }
    let now = opts.now.unwrap_or_else(unix_now);
    // Whole seconds since the epoch pick this second's share of the done runs.
    let second = now.max(0.0) as u64;
    prior.iter().enumerate().all(|(i, e)| {
        let d: &Path = listing.as_ref().map_or(&e.dir, |l| &l[l.len() - 1 - i]);
        let same_dir = d.as_os_str() == e.dir.as_os_str();
        let every = if e.exit_code.is_some() && e.file.is_some() {
            DONE_RECHECK_S
        } else if e.state == RunStatus::Crashed {
            QUIET_RECHECK_S
        } else {
            1
        };
        if (second + i as u64) % every != 0 {
            return same_dir && state_at(e, now, opts.stale_after) == e.state;
        }
        let file_same = match &e.file {
            Some(f) => {
                let (size, mtime_ns, ctime_ns) = stat_ctime(f);
                (size, mtime_ns, ctime_ns) == (e.size, e.mtime_ns, e.ctime_ns)
                    || (size >= e.size && now - e.read_at < reread_after(size))
            }
            None => true,
        };
        same_dir
            && stat(d).1 == e.dir_mtime_ns
            && file_same
            && state_at(e, now, opts.stale_after) == e.state
    })
}

/// Whether two entries show the same to the workspace: equal but for the
/// modification times and when they were read.
#[must_use]
pub fn same_listing(a: &RunIndexEntry, b: &RunIndexEntry) -> bool {
    // Every field named, so one added later is compared (or ignored) on purpose.
    let RunIndexEntry {
        dir,
        file,
        size,
        mtime_ns: _,
        ctime_ns: _,
        dir_mtime_ns: _,
        run_id,
        display_name,
        project,
        entity,
        group,
        job_type,
        tags,
        notes,
        host,
        git_commit,
        start_time,
        resumed,
        has_run_record,
        exit_code,
        state,
        runtime,
        last_step,
        history_rows,
        last_time,
        config,
        summary,
        environment,
        damage,
        damaged_bytes,
        incomplete_tail_bytes,
        keys_dropped,
        error,
        node_labels,
        read_at: _,
        grown: _,
        reading,
    } = a;
    *dir == b.dir
        && *file == b.file
        && *size == b.size
        && *run_id == b.run_id
        && *display_name == b.display_name
        && *project == b.project
        && *entity == b.entity
        && *group == b.group
        && *job_type == b.job_type
        && *tags == b.tags
        && *notes == b.notes
        && *host == b.host
        && *git_commit == b.git_commit
        && *start_time == b.start_time
        && *resumed == b.resumed
        && *has_run_record == b.has_run_record
        && *exit_code == b.exit_code
        && *state == b.state
        && *runtime == b.runtime
        && *last_step == b.last_step
        && *history_rows == b.history_rows
        && *last_time == b.last_time
        && *damage == b.damage
        && *damaged_bytes == b.damaged_bytes
        && *incomplete_tail_bytes == b.incomplete_tail_bytes
        && *keys_dropped == b.keys_dropped
        && *error == b.error
        && *node_labels == b.node_labels
        && *reading == b.reading
        && *config == b.config
        && *summary == b.summary
        && *environment == b.environment
}

/// Seconds before a grown file is read again: 20 s per 100 MB, at most a minute
/// (files under 5 MB at every scan).
fn reread_after(size: u64) -> f64 {
    let mb = size as f64 / 1e6;
    if mb < 5.0 {
        0.0
    } else {
        (mb / 100.0 * 20.0).min(60.0)
    }
}

/// Seconds a run without an exit record has been quiet at `now`: since its file's
/// mtime (`mtime_ns`), or since its newest record's own time (`last_time`) when
/// that is older (see the module doc). `leet inspect --summary` decides with it too.
#[must_use]
pub fn quiet_at(mtime_ns: u64, last_time: Option<f64>, now: f64) -> f64 {
    let mtime = mtime_ns as f64 / 1e9;
    now - last_time.map_or(mtime, |t| t.min(mtime))
}

/// The state of `e` at `now` (see the module doc).
#[must_use]
pub fn state_at(e: &RunIndexEntry, now: f64, stale_after: f64) -> RunStatus {
    let started = e.has_run_record && e.file.is_some();
    let quiet = quiet_at(e.mtime_ns, e.last_time.filter(|_| !e.grown), now);
    RunStatus::decide(e.exit_code, started, Some(quiet), stale_after)
}

/// The default cache directory: `$XDG_CACHE_HOME/leet` (an absolute path, as the
/// XDG spec asks), else `~/.cache/leet`.
#[must_use]
pub fn default_cache_dir() -> Option<PathBuf> {
    cache_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`default_cache_dir`] from the two variables' values.
fn cache_dir_from(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    xdg_dir_from(xdg_cache_home, home, ".cache")
}

/// leet's directory under an XDG base directory: `$XDG_…_HOME/leet` when that
/// variable is absolute (the XDG spec ignores a relative or empty one), else
/// `$HOME/<home_rel>/leet`. Also the state directory (`source::state`).
pub(crate) fn xdg_dir_from(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    home_rel: &str,
) -> Option<PathBuf> {
    if let Some(x) = xdg.map(PathBuf::from) {
        if x.is_absolute() {
            return Some(x.join("leet"));
        }
    }
    home.filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(home_rel).join("leet"))
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Size and mtime (ns since the epoch; 0 when unknown) of a file.
/// A directory's modification time (ns since the epoch; 0 when it cannot be read):
/// it moves when an entry is added, removed or renamed.
#[must_use]
pub fn dir_mtime_ns(dir: &Path) -> u64 {
    stat(dir).1
}

fn stat(file: &Path) -> (u64, u64) {
    let (size, mtime_ns, _) = stat_ctime(file);
    (size, mtime_ns)
}

/// Size, modification time and status-change time (ns) of `file`, from one
/// `stat`; zeros when it cannot be read. A change of its mode or owner (`chmod
/// 000`) moves the ctime alone, and must not leave the cached entry of a file
/// that can no longer be read.
fn stat_ctime(file: &Path) -> (u64, u64, u64) {
    std::fs::metadata(file).map_or((0, 0, 0), |m| {
        let ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        (m.len(), ns, ctime_of(&m))
    })
}

#[cfg(unix)]
fn ctime_of(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let s = u64::try_from(m.ctime()).unwrap_or(0);
    let n = u64::try_from(m.ctime_nsec()).unwrap_or(0);
    s.saturating_mul(1_000_000_000).saturating_add(n)
}

#[cfg(not(unix))]
fn ctime_of(_: &std::fs::Metadata) -> u64 {
    0
}

fn seconds((s, n): Timestamp) -> f64 {
    s as f64 + f64::from(n) / 1e9
}

/// Read one run file from its start with the sequential reader. `size` and
/// `mtime_ns` are the file's as stated before reading (so a file that grows while
/// it is read is read again next time).
fn read_run(dir: &Path, file: &Path, size: u64, mtime_ns: u64) -> RunIndexEntry {
    read_run_with(dir, file, size, mtime_ns, false)
}

/// [`read_run`]; `series`: with the decoder that keeps the series (what the
/// index read before it read rows for their steps and times only; the tests
/// compare the two).
fn read_run_with(dir: &Path, file: &Path, size: u64, mtime_ns: u64, series: bool) -> RunIndexEntry {
    let mut e = RunIndexEntry {
        dir: dir.to_owned(),
        file: Some(file.to_owned()),
        size,
        mtime_ns,
        ..RunIndexEntry::default()
    };
    let mut acc = Acc::default();
    match RunReader::open(file) {
        Err(err) => e.error = Some(err.to_string()),
        Ok(reader) => {
            // Rows for their steps and times only, as `inspect --summary` reads
            // them: the index shows no series, and every record is still checked.
            let mut reader = if series {
                reader
            } else {
                reader.without_series()
            };
            reader.finish();
            // Bounded: a file growing while read stops at what was there at the stat
            // (plus one chunk), never a loop that follows a writer.
            loop {
                match reader.poll_events() {
                    Ok((ev, p)) => {
                        acc.fold(&ev);
                        if !p.more || reader.offset() > size {
                            acc.tail = p.pending;
                            if let Some(s) = p.open {
                                acc.damage += 1;
                                acc.damaged_bytes += s.len;
                            }
                            break;
                        }
                    }
                    Err(err) => {
                        e.error = Some(err.to_string());
                        break;
                    }
                }
            }
        }
    }
    acc.into_entry(&mut e);
    e
}

/// What the reader's events tell the index, folded.
#[derive(Default)]
struct Acc {
    info: leet_format::event::RunInfo,
    has_run: bool,
    exit: Option<(i32, i32)>,
    last_step: Option<f64>,
    last_time: Option<f64>,
    rows: u64,
    config: Fold,
    summary: Fold,
    environment: serde_json::Map<String, serde_json::Value>,
    env_dropped: u64,
    damage: u64,
    damaged_bytes: u64,
    tail: u64,
    /// The `/l:` labels of the system keys seen (at most [`MAX_NODE_LABELS`]).
    labels: std::collections::BTreeSet<String>,
}

/// Most node labels an entry keeps (the most nodes leet reads of one run), and
/// the most bytes of each: a hostile file cannot make an entry large.
const MAX_NODE_LABELS: usize = super::nodes::MAX_NODES;
const MAX_LABEL_BYTES: usize = 64;

impl Acc {
    fn fold(&mut self, ev: &Events) {
        for event in &ev.list {
            match event {
                Event::Run(r) => {
                    self.has_run = true;
                    self.info.merge((**r).clone());
                }
                Event::Exit { code, runtime } => self.exit = Some((*code, *runtime)),
                Event::Environment(m) => {
                    fold::fold_env(&mut self.environment, m, &mut self.env_dropped);
                }
                Event::Row(r) => {
                    if r.complete {
                        self.rows += 1;
                        if let Some(s) = r.step {
                            self.last_step = Some(self.last_step.map_or(s, |l| l.max(s)));
                        }
                    }
                    if let Some(t) = r.time {
                        self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
                    }
                }
                Event::Stats { time: Some(t), .. } => {
                    let t = seconds(*t);
                    self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
                }
                Event::Bad { len, .. } => {
                    self.damage += 1;
                    self.damaged_bytes += len;
                }
                Event::Skip(s) => {
                    self.damage += 1;
                    self.damaged_bytes += s.len;
                }
                _ => {}
            }
        }
        self.config.apply(&ev.paths, &ev.config);
        self.summary.apply(&ev.paths, &ev.summary);
        self.learn_labels(ev);
    }

    /// The node labels of a batch's system keys. Read without the series, a
    /// sample keeps no values to name its keys by, but the batch's keys are then
    /// the samples' alone (rows name none); with them, the keys a row names are
    /// left out, so both reads find the same labels.
    fn learn_labels(&mut self, ev: &Events) {
        if !ev.list.iter().any(|e| matches!(e, Event::Stats { .. })) {
            return;
        }
        let mut history = vec![false; ev.keys.len()];
        for e in &ev.list {
            if let Event::Row(r) = e {
                let (from, to) = (r.values.start as usize, r.values.end as usize);
                let ids = ev
                    .values
                    .get(from..to)
                    .unwrap_or_default()
                    .iter()
                    .map(|v| v.0);
                for k in ids.chain(r.others.iter().map(|o| o.0)) {
                    if let Some(h) = history.get_mut(k as usize) {
                        *h = true;
                    }
                }
            }
        }
        for (k, _) in ev.keys.iter().zip(&history).filter(|(_, h)| !**h) {
            let Some(l) = super::nodes::label_of(k) else {
                continue;
            };
            if self.labels.len() >= MAX_NODE_LABELS {
                break;
            }
            self.labels.insert(fold::cut(l, MAX_LABEL_BYTES));
        }
    }

    fn into_entry(self, e: &mut RunIndexEntry) {
        let i = self.info;
        e.has_run_record = self.has_run;
        e.run_id = i.run_id;
        e.display_name = i.display_name;
        e.project = i.project;
        e.entity = i.entity;
        e.group = i.group;
        e.job_type = i.job_type;
        e.tags = i.tags;
        e.notes = i.notes;
        e.host = fold::cut(&i.host, fold::MAX_FACT_BYTES);
        e.git_commit = fold::cut(&i.git_commit, fold::MAX_FACT_BYTES);
        e.environment = self.environment;
        e.resumed = i.resumed;
        e.start_time = i.start_time.map(seconds);
        e.exit_code = self.exit.map(|(c, _)| c);
        e.summary = self.summary.to_json();
        e.config = self.config.to_json();
        // W&B's own bookkeeping: its config key is hidden, as `inspect` and W&B
        // hide it; its summary key (`_wandb.runtime`) is shown, as W&B shows it
        // and as the overview of a run read shows it.
        e.config.remove("_wandb");
        e.node_labels = self.labels.into_iter().collect();
        let summary_runtime = e
            .summary
            .get("_runtime")
            .and_then(serde_json::Value::as_f64);
        e.runtime = self
            .exit
            .map(|(_, r)| f64::from(r))
            .or(summary_runtime)
            .or_else(|| Some(self.last_time? - e.start_time?).filter(|r| *r >= 0.0));
        {
            e.last_step = self.last_step.filter(|s| s.is_finite()).map(|s| s as i64);
        }
        e.history_rows = self.rows;
        e.last_time = self.last_time;
        e.damage = self.damage;
        e.damaged_bytes = self.damaged_bytes;
        e.incomplete_tail_bytes = self.tail;
        e.keys_dropped = self.config.dropped + self.summary.dropped + self.env_dropped;
    }
}
