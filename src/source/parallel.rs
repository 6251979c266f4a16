//! The first read of a big file, decoded on all cores.
//!
//! The file is cut into ranges at 32 KiB block boundaries (a chunk never crosses
//! one). Each worker reads its range and decodes it from the first record that
//! starts in it, as a fresh scanner would. The merging thread hands the ranges on in
//! file order and stitches each seam: it scans the bytes from where the range before
//! stopped (the start of a record that runs on, or the range's end) to where the next
//! worker began, continuing the scanner of the range before. When that scan ends at
//! the worker's start carrying nothing over, the worker read its bytes exactly as a
//! scan of the whole file would; when it does not (damage at the seam), the range is
//! scanned again from the exact state, on the merging thread. So records, damaged
//! spans and their offsets come out byte for byte as a sequential read gives them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::reader::{Poll, RunReader};
use super::resolve::{io_err, SourceError};
use leet_format::decoder::Decoder;
use leet_format::event::{Events, Sink};
use leet_format::leveldb::{self, Frame, Scanner, Skip, BLOCK_SIZE};

/// How a first load is cut.
#[derive(Debug, Clone, Copy)]
pub struct ParallelOptions {
    /// Size of the first range (handed on first, so the first frame comes early).
    pub first: usize,
    /// Size of the others.
    pub range: usize,
    /// Worker threads.
    pub threads: usize,
    /// Files smaller than this are read sequentially.
    pub min_len: u64,
    /// Run the workers below the caller's priority ([`below_the_loop`]), so a
    /// viewer's event loop keeps the CPU. A one-shot read (`leet inspect`) has no
    /// loop to yield to: its workers keep the caller's priority.
    pub below_loop: bool,
    /// Ranges after the first widened for wide records ([`range_for`]); off where
    /// the ranges were asked for exactly ([`ParallelOptions::with_range`]).
    pub widen: bool,
}

impl Default for ParallelOptions {
    fn default() -> Self {
        Self {
            first: 1 << 20,
            range: 2 << 20,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get().min(8)),
            min_len: 4 << 20,
            below_loop: true,
            widen: true,
        }
    }
}

impl ParallelOptions {
    /// The same with ranges of `range` bytes (rounded to whole blocks), the first
    /// one included.
    #[must_use]
    pub fn with_range(mut self, range: usize) -> Self {
        let r = range.div_ceil(BLOCK_SIZE).max(1) * BLOCK_SIZE;
        self.first = r;
        self.range = r;
        self.widen = false;
        self
    }

    fn ranges(&self, len: u64) -> Vec<(u64, u64)> {
        let round = |n: usize| (n.div_ceil(BLOCK_SIZE).max(1) * BLOCK_SIZE) as u64;
        let (first, range) = (round(self.first), round(self.range));
        let mut out = Vec::new();
        let mut a = 0;
        while a < len {
            let b = (a + if a == 0 { first } else { range }).min(len);
            out.push((a, b));
            a = b;
        }
        out
    }
}

/// Widest range [`range_for`] gives.
pub const MAX_RANGE: usize = 32 << 20;

/// Records to a range at least, where they are wide ([`range_for`]).
const RECORDS_PER_RANGE: usize = 64;

/// The size of the ranges after the first: each range's events name their keys
/// and summary paths afresh (interned once per range, and mapped once per range
/// by the store), so a run of wide records (thousands of metrics a row, each row
/// naming them all) read in ranges of a few records spends most of its time
/// naming the same keys again: the time grew with the square of the metrics. The
/// widest record among the file's first `opts.first` bytes sets it: room for
/// [`RECORDS_PER_RANGE`] of them, at least `opts.range`, at most [`MAX_RANGE`].
/// A run of narrow rows keeps `opts.range`.
fn range_for(file: &File, len: u64, opts: &ParallelOptions) -> usize {
    if !opts.widen {
        return opts.range;
    }
    let n = opts.first.min(usize::try_from(len).unwrap_or(usize::MAX));
    let mut data = vec![0; n];
    if n == 0 || read_at(file, &mut data, 0).is_err() {
        return opts.range;
    }
    let mut widest = 0;
    let _ = leveldb::scan(&data, 0, |f| {
        if let Frame::Record { payload, .. } = f {
            widest = widest.max(payload.len());
        }
    });
    widest
        .saturating_mul(RECORDS_PER_RANGE)
        .clamp(opts.range, MAX_RANGE.max(opts.range))
}

/// Where the load stands after a batch: bytes consumed in file order, and the
/// damaged span held open there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub read_to: u64,
    pub open: Option<Skip>,
}

/// What a worker made of one range.
struct Part {
    /// Where its scan began (None: no record starts in the range before damage or
    /// its end; the range is read from the state before it).
    start: Option<u64>,
    events: Events,
    /// The scanner after the range.
    scanner: Scanner,
}

fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt as _;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt as _;
        let mut done = 0;
        while done < buf.len() {
            let n = file.seek_read(&mut buf[done..], offset + done as u64)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}

fn read_range(file: &File, a: u64, b: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_range_into(file, a, b, &mut buf)?;
    Ok(buf)
}

/// Read `[a, b)` into `buf` (its allocation reused from range to range).
fn read_range_into(file: &File, a: u64, b: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    let n = usize::try_from(b - a).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    buf.resize(n, 0);
    read_at(file, buf, a)
}

/// Scan `data` (at the scanner's base) into `d`.
fn scan_into(
    scanner: &mut Scanner,
    data: &[u8],
    d: &mut Decoder,
) -> Result<leveldb::ScanEnd, leveldb::HeaderError> {
    scanner.scan(data, |fr| match fr {
        Frame::Record { offset, payload } => d.record(offset, &payload),
        Frame::Skip(s) => d.skip(s),
    })
}

/// [`scan_into`] of the last bytes of the file.
fn scan_last_into(
    scanner: &mut Scanner,
    data: &[u8],
    d: &mut Decoder,
) -> Result<leveldb::ScanEnd, leveldb::HeaderError> {
    scanner.scan_last(data, |fr| match fr {
        Frame::Record { offset, payload } => d.record(offset, &payload),
        Frame::Skip(s) => d.skip(s),
    })
}

/// Bytes a worker reads at a time: two blocks, so what it decodes is still in the
/// core's cache from the copy (one read of a whole range would copy it out to
/// memory and read it back from there).
const PIECE: usize = 2 * BLOCK_SIZE;

/// Read `[a, b)` into the start of `buf`, growing it when it is too short (a
/// longer buffer keeps its length: its bytes past `b - a` are left as they are, so
/// a reused buffer is not zeroed again); the number of bytes read.
fn fill_from(
    file: &File,
    a: u64,
    b: u64,
    buf: &mut Vec<u8>,
    at: usize,
) -> Result<usize, ReadError> {
    let n =
        usize::try_from(b - a).map_err(|_| ReadError::Io(io::ErrorKind::InvalidInput.into()))?;
    if buf.len() < at + n {
        buf.resize(at + n, 0);
    }
    read_at(file, &mut buf[at..at + n], a).map_err(ReadError::Io)?;
    Ok(n)
}

/// A worker's reading of the range `[a, b)`, in pieces of [`PIECE`] bytes. The
/// scanner gives the same frames however its input is cut, so this reads the range
/// exactly as one scan of all of it would. `data` is the worker's buffer, reused
/// from range to range: only `data[..filled]` holds this range's bytes.
fn decode_range(
    file: &File,
    a: u64,
    b: u64,
    data: &mut Vec<u8>,
    d: &mut Decoder,
) -> Result<Part, ReadError> {
    let piece = |from: u64| (from + PIECE as u64).min(b);
    let mut read_to = piece(a);
    let mut filled = fill_from(file, a, read_to, data, 0)?;
    let (start, mut scanner) = if a == 0 {
        (Some(0), Scanner::new())
    } else {
        let mut found = leveldb::first_record_start(&data[..filled], a);
        if found.is_none() && read_to < b {
            // No record starts in the first piece (a long record runs through
            // it, or damage): look through the whole range, as one read would.
            filled = fill_from(file, a, b, data, 0)?;
            read_to = b;
            found = leveldb::first_record_start(&data[..filled], a);
        }
        match found {
            Some(s) => (Some(s), Scanner::at(s)),
            None => {
                return Ok(Part {
                    start: None,
                    events: Events::default(),
                    scanner: Scanner::at(a),
                })
            }
        }
    };
    // `data[..filled]` holds the bytes from `at` on; the scanner expects them from
    // its base.
    let mut at = a;
    loop {
        let from = usize::try_from(scanner.base() - at)
            .unwrap_or(filled)
            .min(filled);
        let end = scan_into(&mut scanner, &data[from..filled], d).map_err(ReadError::Header)?;
        if read_to >= b {
            break;
        }
        // Keep the bytes not consumed (a record still open), then read on.
        let keep = (from + end.consumed).min(filled);
        data.copy_within(keep..filled, 0);
        filled -= keep;
        at = scanner.base();
        let next = piece(read_to);
        filled += fill_from(file, read_to, next, data, filled)?;
        read_to = next;
    }
    Ok(Part {
        start,
        events: d.take(),
        scanner,
    })
}

/// Whether a viewer's first load should keep its decode workers at the loop's
/// priority: the machine is busy with other work (its load over the last minute,
/// `/proc/loadavg`, at least its number of cores) and the kernel does not group
/// the terminal's session on its own (`/proc/sys/kernel/sched_autogroup_enabled`
/// is not 1). Without that grouping, workers below the loop are starved by every
/// other process: with 40 busy processes on 2 cores in leet's session, a 125 MB
/// run took 15–16 s at nice 10 and 2.0 s at nice 0. With it (the default of most
/// distributions' kernels), leet's session shares the CPU as one against the
/// others' (the same viewer under the same 40 loops loaded it in 0.19–0.31 s at
/// nice 10 and at nice 0), and below the loop is what answers keys while a run
/// loads (p99 11 ms at nice 10, 23–34 ms at nice 0, on the same 2 cores idle).
#[must_use]
pub fn machine_busy() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    busy_by(
        &read("/proc/loadavg"),
        cores,
        &read("/proc/sys/kernel/sched_autogroup_enabled"),
    )
}

/// [`machine_busy`] of a `/proc/loadavg` line, a number of cores and the
/// autogroup switch's text.
fn busy_by(loadavg: &str, cores: usize, autogroup: &str) -> bool {
    autogroup.trim() != "1"
        && loadavg
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|l| l >= cores as f64)
}

/// Run the calling decode worker at a lower CPU priority (nice 10, or its own if
/// higher) than the
/// event loop, so that on a machine with few cores a first load that keeps every
/// core busy still leaves the loop the CPU when a key comes. Only this thread
/// changes (Linux applies `setpriority` with who = a thread id to that thread);
/// where it is not allowed, nothing changes.
fn below_the_loop() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls on the calling thread, no memory involved.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            // Only ever lower the priority (a process already niced stays so).
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            if now < 10 {
                let _ = libc::setpriority(libc::PRIO_PROCESS, tid, 10);
            }
        }
    }
}

enum ReadError {
    Io(io::Error),
    Header(leveldb::HeaderError),
}

impl RunReader {
    /// Read the whole file as it is now into `sink`, a big file's first read
    /// decoded on all cores ([`RunReader::load_parallel`]), its workers at the
    /// caller's priority (a one-shot read has no event loop to yield to). The
    /// result is the same as [`RunReader::read_all`].
    ///
    /// # Errors
    /// As [`RunReader::poll_frames`].
    pub fn read_all_parallel<S: Sink>(&mut self, sink: &mut S) -> Result<(), SourceError> {
        let opts = ParallelOptions {
            below_loop: false,
            ..ParallelOptions::default()
        };
        if self.wants_parallel(&opts)? {
            let p = self.load_parallel(&opts, |ev, _| {
                sink.fold(&ev);
            })?;
            sink.at_end(p.pending, p.open);
            if !p.more {
                return Ok(());
            }
        }
        self.read_all(sink)
    }

    /// Whether the next read is a first load big enough to decode in parallel.
    ///
    /// # Errors
    /// I/O errors from `metadata`.
    pub fn wants_parallel(&self, opts: &ParallelOptions) -> Result<bool, SourceError> {
        Ok(self.read_to == 0
            && self.buf.is_empty()
            && opts.threads > 1
            && self.file_len()? >= opts.min_len)
    }

    /// Read the file as it is now from its start, decoding ranges on `opts.threads`
    /// threads, and hand each range's events to `emit` in file order (the first
    /// range first, as soon as it is decoded). Afterwards the reader stands where a
    /// sequential read of the same bytes would: later polls read on from there.
    /// A file that shrinks meanwhile stops the load; the next poll starts over.
    ///
    /// # Errors
    /// I/O errors, and a file that does not start with the W&B header.
    pub fn load_parallel(
        &mut self,
        opts: &ParallelOptions,
        mut emit: impl FnMut(Events, Progress),
    ) -> Result<Poll, SourceError> {
        let len = self.file_len()?;
        let wide = range_for(&self.file, len, opts);
        let ranges = ParallelOptions {
            range: wide,
            ..*opts
        }
        .ranges(len);
        let path = self.path().to_owned();
        let header_err = |cause| SourceError::BadHeader {
            path: path.clone(),
            cause,
        };
        let proto = self.new_decoder();
        let proto = &proto;
        let file = &self.file;
        let threads = opts.threads.clamp(1, 64);
        let window = threads * 2;
        let outcome: Result<Option<Scanner>, SourceError> = std::thread::scope(|scope| {
            let (task_tx, task_rx) = mpsc::channel::<usize>();
            let task_rx = Arc::new(Mutex::new(task_rx));
            let (part_tx, part_rx) = mpsc::channel::<(usize, Result<Part, ReadError>)>();
            for _ in 0..threads {
                let rx = Arc::clone(&task_rx);
                let tx = part_tx.clone();
                let ranges = &ranges;
                let below_loop = opts.below_loop;
                scope.spawn(move || {
                    if below_loop {
                        below_the_loop();
                    }
                    let mut data = Vec::new();
                    let mut d = proto.clone();
                    loop {
                        let next = rx.lock().map(|r| r.recv());
                        let Ok(Ok(i)) = next else {
                            return;
                        };
                        let (a, b) = ranges[i];
                        if tx
                            .send((i, decode_range(file, a, b, &mut data, &mut d)))
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
            drop(part_tx);
            let mut sent = 0;
            while sent < ranges.len().min(window) {
                let _ = task_tx.send(sent);
                sent += 1;
            }
            let mut done: BTreeMap<usize, Result<Part, ReadError>> = BTreeMap::new();
            let mut state: Option<Scanner> = None;
            for (i, &(a, b)) in ranges.iter().enumerate() {
                let part = loop {
                    if let Some(p) = done.remove(&i) {
                        break p;
                    }
                    match part_rx.recv() {
                        Ok((j, p)) => {
                            done.insert(j, p);
                        }
                        // Every worker is gone (one panicked): read on sequentially.
                        Err(_) => {
                            break Ok(Part {
                                start: None,
                                events: Events::default(),
                                scanner: Scanner::at(a),
                            })
                        }
                    }
                };
                if sent < ranges.len() {
                    let _ = task_tx.send(sent);
                    sent += 1;
                }
                let part = match part {
                    Ok(p) => p,
                    Err(ReadError::Header(cause)) => return Err(header_err(cause)),
                    // Shorter than it was: the file shrank under the load.
                    Err(ReadError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        return Ok(None)
                    }
                    Err(ReadError::Io(e)) => return Err(io_err(&path)(e)),
                };
                let Some(prev) = state.take() else {
                    // The first range: read from the header on, exactly as a sequential read.
                    emit(
                        part.events,
                        Progress {
                            read_to: b,
                            open: part.scanner.open_skip(),
                        },
                    );
                    state = Some(part.scanner);
                    continue;
                };
                let mut part = part;
                let x = prev.base();
                // The seam: from where the range before stopped to where this one began.
                // The worker's reading stands when the seam ends clean at its start and
                // it read no record the file had before (a duplicate it kept).
                let stitched = match part.start {
                    Some(s) if s >= x => {
                        let mut seam = prev.clone();
                        let mut d = proto.clone();
                        let data = match read_range(file, x, s) {
                            Ok(data) => data,
                            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
                            Err(e) => return Err(io_err(&path)(e)),
                        };
                        scan_into(&mut seam, &data, &mut d).map_err(header_err)?;
                        // (A worker that met a file header without knowing the
                        // file's first records guessed what it begins.)
                        (seam.is_clean_at(s)
                            && !part.scanner.guessed()
                            && part.scanner.continues(&seam))
                        .then(|| d.take())
                    }
                    _ => None,
                };
                if let Some(seam_events) = stitched {
                    if !seam_events.is_empty() {
                        emit(
                            seam_events,
                            Progress {
                                read_to: part.start.unwrap_or(a),
                                open: None,
                            },
                        );
                    }
                    emit(
                        part.events,
                        Progress {
                            read_to: b,
                            open: part.scanner.open_skip(),
                        },
                    );
                    state = Some(part.scanner);
                } else {
                    // Damage at the seam: read the range again from the exact state.
                    let mut seq = prev;
                    let mut d = proto.clone();
                    let data = match read_range(file, x, b) {
                        Ok(data) => data,
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
                        Err(e) => return Err(io_err(&path)(e)),
                    };
                    scan_into(&mut seq, &data, &mut d).map_err(header_err)?;
                    emit(
                        d.take(),
                        Progress {
                            read_to: b,
                            open: seq.open_skip(),
                        },
                    );
                    state = Some(seq);
                }
            }
            drop(task_tx);
            Ok(Some(state.unwrap_or_default()))
        });
        let Some(mut scanner) = outcome? else {
            // Shrunk: void what was handed on, and start over on the next poll.
            self.scanner = Scanner::new();
            self.buf.clear();
            self.read_to = 0;
            self.restart_pending = true;
            return Ok(Poll {
                more: true,
                ..Poll::default()
            });
        };
        self.buf = match read_range(&self.file, scanner.base(), len) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                self.scanner = Scanner::new();
                self.buf.clear();
                self.read_to = 0;
                self.restart_pending = true;
                return Ok(Poll {
                    more: true,
                    ..Poll::default()
                });
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        let more = self.file_len()? > len;
        if self.finishing && !more {
            // The end: what the ranges left (a search after damage that waited for
            // more bytes, a record cut off) is read as the last bytes there are.
            let mut d = proto.clone();
            let end = scan_last_into(&mut scanner, &self.buf, &mut d).map_err(header_err)?;
            self.buf.drain(..end.consumed);
            self.finishing = false;
            let ev = d.take();
            if !ev.is_empty() {
                emit(
                    ev,
                    Progress {
                        read_to: len,
                        open: None,
                    },
                );
            }
        }
        self.read_to = len;
        let open = scanner.open_skip();
        let pending = if scanner.searching() {
            0
        } else {
            len - scanner.base()
        };
        self.scanner = scanner;
        Ok(Poll {
            bytes: len,
            records: 0,
            pending,
            more,
            restarted: false,
            open,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_machine_is_busy_when_its_load_reaches_its_cores_and_sessions_are_not_grouped() {
        use super::busy_by;
        let off = "0\n";
        assert!(!busy_by("0.13 1.25 2.61 1/245 2973\n", 2, off));
        assert!(!busy_by("1.99 0.5 0.5 3/245 2973\n", 2, off));
        assert!(busy_by("2.00 0.5 0.5 3/245 2973\n", 2, off));
        assert!(busy_by("41.27 28.09 13.57 43/300 3000\n", 2, off));
        assert!(busy_by("41.27 28.09 13.57 43/300 3000\n", 2, ""));
        assert!(!busy_by("41.27 28.09 13.57 43/300 3000\n", 64, off));
        // The terminal's session shares the CPU as one: the workers stay below.
        assert!(!busy_by("41.27 28.09 13.57 43/300 3000\n", 2, "1\n"));
        // Unreadable: not busy (the workers go below the loop, as always before).
        assert!(!busy_by("", 2, off));
        assert!(!busy_by("nan? 1 1", 2, off));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_decode_worker_runs_below_the_loop_and_only_it() {
        fn nice() -> i32 {
            // SAFETY: plain system calls on the calling thread.
            unsafe {
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
            }
        }
        let before = nice();
        let worker = std::thread::spawn(|| {
            super::below_the_loop();
            nice()
        })
        .join()
        .expect("worker");
        // Raising one's own nice value is always allowed.
        assert_eq!(worker, before.max(10));
        assert_eq!(nice(), before, "the calling thread's priority changed");
    }
}
