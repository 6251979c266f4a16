//! Following a run file: a thread that finds the `.wandb` file (waiting for it to
//! appear), reads what is appended (notify events, with a polling fallback) and
//! sends what it decoded as `Msg::Run` batches of events; the loop folds them into
//! the store, its one writer. A big file's first read is decoded on all cores
//! ([`super::parallel`]), its first range handed on first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::msg::{Msg, RunBatch};
use crate::source::file::{resolve, resolve_file, ParallelOptions, RunReader, SourceError, Target};

/// How the tail reads.
#[derive(Debug, Clone, Copy)]
pub struct TailOptions {
    /// Most bytes per batch (a big file loads in steps, drawing in between).
    pub chunk: usize,
    /// Polling interval when no file-system event arrives.
    pub poll: Duration,
}

impl Default for TailOptions {
    fn default() -> Self {
        Self {
            chunk: 2 << 20,
            poll: Duration::from_millis(250),
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

fn mtime(path: &Path) -> Option<f64> {
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
fn first_load(
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

/// Where a tail thread sends: the loop's channel, optionally tagged with the source
/// number, until its stop flag is set.
struct Out {
    tx: SyncSender<Msg>,
    tag: Option<u64>,
    stop: Arc<AtomicBool>,
}

impl Out {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Send; false when the loop is gone or this reader was stopped.
    fn send(&self, m: Msg) -> bool {
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

/// Spawn the tail thread for a user path (file or directory).
pub fn spawn_tail(path: PathBuf, tx: SyncSender<Msg>, opts: TailOptions) -> JoinHandle<()> {
    spawn(
        path,
        Out {
            tx,
            tag: None,
            stop: Arc::new(AtomicBool::new(false)),
        },
        opts,
    )
}

/// Spawn a tail thread whose messages come as `Msg::Tagged(tag, ..)` and which ends
/// once `stop` is set (the user opened another run).
pub fn spawn_tail_tagged(
    path: PathBuf,
    tx: SyncSender<Msg>,
    opts: TailOptions,
    tag: u64,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    spawn(
        path,
        Out {
            tx,
            tag: Some(tag),
            stop,
        },
        opts,
    )
}

fn spawn(path: PathBuf, out: Out, opts: TailOptions) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("leet-tail".into())
        .spawn(move || tail(&path, &out, opts))
        .unwrap_or_else(|_| std::thread::spawn(|| {}))
}

fn tail(path: &Path, tx: &Out, opts: TailOptions) {
    let mut told_waiting = false;
    let file = loop {
        match resolve(path) {
            Ok(Target::File(f)) => break f,
            Ok(Target::EmptyRunDir(d)) => {
                if !told_waiting {
                    if !tx.send(Msg::Waiting(d)) {
                        return;
                    }
                    told_waiting = true;
                }
                if tx.stopped() {
                    return;
                }
                std::thread::sleep(opts.poll);
            }
            Err(e) => {
                let _ = tx.send(Msg::SourceError(e.to_string()));
                return;
            }
        }
    };
    let mut reader = match RunReader::open(&file) {
        Ok(r) => r.with_chunk(opts.chunk),
        Err(e) => {
            let _ = tx.send(Msg::SourceError(e.to_string()));
            return;
        }
    };
    let len = reader.file_len().unwrap_or(0);
    if !tx.send(Msg::Opened {
        path: file.clone(),
        len,
        modified: mtime(&file),
    }) {
        return;
    }
    // File-system events wake the poll early; without them the poll interval rules.
    let (ntx, nrx) = mpsc::channel::<()>();
    let _watcher = {
        use notify::Watcher as _;
        let w = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
            let _ = ntx.send(());
        });
        w.ok().and_then(|mut w| {
            let dir = file.parent().unwrap_or(Path::new("."));
            w.watch(dir, notify::RecursiveMode::NonRecursive)
                .ok()
                .map(|()| w)
        })
    };
    let parallel = ParallelOptions {
        range: opts.chunk,
        ..ParallelOptions::default()
    };
    if let Ok(true) = reader.wants_parallel(&parallel) {
        match first_load(&mut reader, tx, &parallel) {
            Ok(true) => {}
            Ok(false) => return,
            // Said by the polls below, which read the file again from its start.
            Err(_) => {
                if let Ok(r) = RunReader::open(&file) {
                    reader = r.with_chunk(opts.chunk);
                    // What was handed on is void: the first poll says so.
                    reader.restart_pending = true;
                }
            }
        }
    }
    let mut loaded = false;
    let mut told_gone = false;
    let mut told_unreadable: Option<String> = None;
    loop {
        if tx.stopped() {
            return;
        }
        // A deleted file keeps what was read on screen, with a word about it; if the
        // path comes back, the reader notices the new file and starts over.
        let gone = !file.exists();
        if gone && !told_gone {
            let msg = format!("file deleted, showing what was read: {}", file.display());
            if !tx.send(Msg::SourceError(msg)) {
                return;
            }
        }
        told_gone = gone;
        match poll_batch(&mut reader) {
            Ok((mut b, changed)) => {
                told_unreadable = None;
                let more = b.read_to < b.file_len;
                if changed {
                    if loaded && b.read_to > 0 {
                        b.grew_at = Some(unix_now());
                    }
                    if !tx.send(Msg::Run(b)) {
                        return;
                    }
                }
                if !more {
                    loaded = true;
                }
                if more {
                    continue;
                }
            }
            // A wrong header: said once; the file is read again only if it changes
            // (rewritten in place or replaced), which the poll notices.
            Err(e @ SourceError::BadHeader { .. }) => {
                let text = e.to_string();
                if told_unreadable.as_ref() != Some(&text) {
                    if !tx.send(Msg::Unreadable(text.clone())) {
                        return;
                    }
                    told_unreadable = Some(text);
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(e) => {
                if !tx.send(Msg::SourceError(e.to_string())) {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        if nrx.recv_timeout(opts.poll).is_ok() {
            while nrx.try_recv().is_ok() {}
        }
    }
}
