//! Reading a followed run file into messages: one poll as a `Msg::Run` batch of
//! decoded events (the loop folds them into the store, its one writer), a big
//! file's first read decoded on all cores ([`super::parallel`]), its first range
//! handed on first. Who polls when is [`super::follow`]'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::msg::{Msg, RunBatch};
use crate::source::file::{resolve_file, ParallelOptions, RunReader, SourceError};

/// How the tail reads.
#[derive(Debug, Clone, Copy)]
pub struct TailOptions {
    /// Most bytes per batch (a big file loads in steps, drawing in between).
    pub chunk: usize,
    /// Polling interval of a file with no file-system watch (the system gave
    /// none); a watched file is polled on a slow tick as well.
    pub poll: Duration,
}

impl Default for TailOptions {
    fn default() -> Self {
        Self {
            chunk: 2 << 20,
            poll: Duration::from_millis(500),
        }
    }
}

/// Wall clock, Unix seconds.
#[must_use]
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

pub(super) fn mtime(path: &Path) -> Option<f64> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(m.duration_since(UNIX_EPOCH).ok()?.as_secs_f64())
}

/// One poll of `reader` as a batch, and whether it carries anything new.
///
/// # Errors
/// As [`RunReader::poll_frames`].
pub fn poll_batch(reader: &mut RunReader) -> Result<(RunBatch, bool), SourceError> {
    let (ev, p) = reader.poll_events()?;
    let mut b = RunBatch::default();
    let changed = p.restarted || p.bytes > 0 || !ev.is_empty();
    if !ev.is_empty() {
        b.events.push(ev);
    }
    b.read_to = reader.offset();
    b.file_len = reader.file_len().unwrap_or(b.read_to);
    b.pending = p.pending;
    b.open = p.open;
    b.restarted = p.restarted;
    Ok((b, changed))
}

/// A big file's first read, decoded on all cores, sent as one batch per range in
/// file order (the first as soon as it is decoded); then the last batch with the
/// reader's standing. False when the loop is gone.
///
/// # Errors
/// As [`RunReader::load_parallel`].
pub(super) fn first_load(
    reader: &mut RunReader,
    tx: &Out,
    opts: &ParallelOptions,
) -> Result<bool, SourceError> {
    let file_len = reader.file_len()?;
    let mut alive = true;
    let p = reader.load_parallel(opts, |ev, at| {
        if alive {
            alive = tx.send(Msg::Run(RunBatch {
                events: vec![ev],
                read_to: at.read_to,
                file_len,
                open: at.open,
                ..RunBatch::default()
            }));
        }
    })?;
    if !alive {
        return Ok(false);
    }
    Ok(tx.send(Msg::Run(RunBatch {
        read_to: reader.offset(),
        file_len: reader.file_len().unwrap_or(file_len),
        pending: p.pending,
        open: p.open,
        restarted: p.restarted,
        ..RunBatch::default()
    })))
}

/// Read a whole file into one batch (tests, benches).
///
/// # Errors
/// Resolution and read errors.
pub fn read_batch(path: &Path) -> Result<(PathBuf, RunBatch), SourceError> {
    let file = resolve_file(path)?;
    let mut reader = RunReader::open(&file)?;
    let mut all = RunBatch::default();
    loop {
        let (b, _) = poll_batch(&mut reader)?;
        let more = b.read_to < b.file_len;
        all.events.extend(b.events);
        all.read_to = b.read_to;
        all.file_len = b.file_len;
        all.pending = b.pending;
        all.open = b.open;
        if !more {
            return Ok((file, all));
        }
    }
}

/// Where a reader sends: the loop's channel, optionally tagged with the source
/// number, until its stop flag is set.
#[derive(Clone)]
pub(super) struct Out {
    tx: SyncSender<Msg>,
    tag: Option<u64>,
    stop: Arc<AtomicBool>,
}

impl Out {
    pub(super) fn new(tx: SyncSender<Msg>, tag: Option<u64>, stop: Arc<AtomicBool>) -> Self {
        Self { tx, tag, stop }
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Send; false when the loop is gone or this reader was stopped.
    pub(super) fn send(&self, m: Msg) -> bool {
        if self.stopped() {
            return false;
        }
        let m = match self.tag {
            Some(n) => Msg::Tagged(n, Box::new(m)),
            None => m,
        };
        self.tx.send(m).is_ok()
    }
}

/// Follow a user path (file or directory) on a thread of its own (tests, benches;
/// the viewer follows every run on one thread: [`super::follow::Follower`]).
pub fn spawn_tail(path: PathBuf, tx: SyncSender<Msg>, opts: TailOptions) -> JoinHandle<()> {
    let out = Out::new(tx, None, Arc::new(AtomicBool::new(false)));
    super::follow::spawn_one(path, out, opts)
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
    super::follow::spawn_one(path, Out::new(tx, Some(tag), stop), opts)
}
