//! Reading a followed run file into messages: one poll as a `Msg::Run` batch of
//! decoded events (the loop folds them into the store, its one writer), a big
//! file's first read decoded on all cores ([`super::parallel`]), its first range
//! handed on first. Who polls when is [`super::follow`]'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::msg::{Msg, RunBatch};
use crate::source::file::{resolve_file, ParallelOptions, RunReader, SourceError};

/// How long a file that could not be read waits before it is tried again.
const RETRY: Duration = Duration::from_secs(1);

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
        all.absorb(b);
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

/// A followed file being read, and what was said about it.
pub(super) struct Reading {
    pub(super) file: PathBuf,
    pub(super) reader: RunReader,
    /// The first read reached the end: what comes later is growth.
    pub(super) loaded: bool,
    pub(super) told_gone: bool,
    pub(super) told_unreadable: Option<String>,
    /// The last poll stopped before the end of the file.
    pub(super) more: bool,
    /// The file as the last poll left it: a tick that finds it the same reads
    /// nothing (one `stat`).
    pub(super) seen: Option<Stat>,
    /// When a poll last handed news on (see `follow::NEWS_GAP`).
    pub(super) news_at: Option<std::time::Instant>,
}

/// What tells a file changed: its identity, length and modification time.
#[derive(PartialEq, Eq, Clone, Copy)]
pub(super) struct Stat {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stat {
    pub(super) fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt as _;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Some(Self {
            dev,
            ino,
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

impl Reading {
    pub(super) fn new(file: PathBuf, reader: RunReader) -> Self {
        Self {
            file,
            reader,
            loaded: false,
            told_gone: false,
            told_unreadable: None,
            more: true,
            seen: None,
            news_at: None,
        }
    }
}

/// One poll of a followed file, its news sent. None when the loop is gone or the
/// reader stopped; else how soon to poll again, if sooner than the usual interval.
pub(super) fn read(r: &mut Reading, out: &Out) -> Option<Option<Duration>> {
    // A deleted file keeps what was read on screen, with a word about it; if the
    // path comes back, the reader notices the new file and starts over.
    let gone = !r.file.exists();
    if gone && !r.told_gone {
        let msg = format!("file deleted, showing what was read: {}", r.file.display());
        if !out.send(Msg::SourceError(msg)) {
            return None;
        }
    }
    r.told_gone = gone;
    r.more = false;
    match poll_batch(&mut r.reader) {
        Ok((mut b, changed)) => {
            r.told_unreadable = None;
            // Polled again at once only after a poll that moved on: a file whose
            // length says more than a read gives (a file system that reports
            // it so) is polled on the usual tick, never in a busy loop.
            r.more = changed && b.read_to < b.file_len;
            if changed {
                if r.loaded && b.read_to > 0 {
                    b.grew_at = Some(unix_now());
                }
                if !out.send(Msg::Run(b)) {
                    return None;
                }
                r.news_at = Some(std::time::Instant::now());
            }
            if !r.more {
                r.loaded = true;
            }
            Some(None)
        }
        // A wrong header: said once; the file is read again only if it changes
        // (rewritten in place or replaced), which the poll notices.
        Err(e @ SourceError::BadHeader { .. }) => {
            let text = e.to_string();
            if r.told_unreadable.as_ref() != Some(&text) {
                if !out.send(Msg::Unreadable(text.clone())) {
                    return None;
                }
                r.told_unreadable = Some(text);
            }
            Some(Some(RETRY))
        }
        Err(e) => {
            if !out.send(Msg::SourceError(e.to_string())) {
                return None;
            }
            // Tried again on the next tick even if the file looks the same.
            r.seen = None;
            Some(Some(RETRY))
        }
    }
}
