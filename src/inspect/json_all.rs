//! One-shot `leet inspect --json`: this thread reads the file in big chunks and
//! frames it; worker threads (one per core) write the JSON of batches of records;
//! this thread prints the batches in file order. At most a few batches are in
//! flight, so memory stays bounded whatever the file's size.
//!
//! The bytes printed, on stdout and stderr, are those of the one-record-at-a-time
//! loop (`inspect::run_reference`): the same frames (the scanner gives the same
//! frames however the input is cut), the same JSON ([`json_fast`] is byte-identical
//! to the general path), and the same damage, because every record the direct writer
//! did not print is still folded into a [`Run`] in file order (a record it printed
//! decodes, so it is not damage).

use std::collections::VecDeque;
use std::io::{self, Read as _, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::source::file::SourceError;
use crate::store::run::DamageReport;
use crate::store::Run;
use leet_format::json_fast::{self, Written};
use leet_format::leveldb::{Frame, Scanner, Skip};

/// Bytes read from the file at a time.
const CHUNK: usize = 4 << 20;
/// Payload bytes per batch handed to a worker.
const BATCH: usize = 256 << 10;

/// Print every record of `file` as one JSON line on `out`, and each damaged span and
/// undecodable record on `err` as they come. The damage found, or None when `out`
/// was closed (a broken pipe ends the listing quietly).
///
/// # Errors
/// I/O and header errors (naming the file); write errors other than a broken pipe.
pub(super) fn print(
    file: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<Option<DamageReport>> {
    print_in(file, out, err, CHUNK, BATCH)
}

/// [`print`], reading `chunk` bytes at a time in batches of about `batch` bytes.
fn print_in(
    file: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
    chunk: usize,
    batch_bytes: usize,
) -> anyhow::Result<Option<DamageReport>> {
    let io_err = |source| SourceError::Io {
        path: file.to_owned(),
        source,
    };
    let mut fh = crate::source::small_file::open_regular(file).map_err(io_err)?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(workers);
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| work(&job_rx));
        }
        let mut sink = Sink {
            jobs: job_tx,
            in_flight: VecDeque::new(),
            max_in_flight: 2 * workers + 2,
            spare: Vec::new(),
            spare_chunks: Vec::new(),
            out,
            err,
            shown: leet_text::sanitize_path(file),
            run: Run::new(),
        };
        let mut scanner = Scanner::new();
        let mut carry: Vec<u8> = Vec::new();
        loop {
            // A chunk buffer that is done with, so its pages are not faulted in again.
            let mut buf = sink.spare_chunks.pop().unwrap_or_default();
            buf.clear();
            buf.reserve(carry.len() + chunk);
            buf.extend_from_slice(&carry);
            let n = (&mut fh)
                .take(chunk as u64)
                .read_to_end(&mut buf)
                .map_err(io_err)?;
            let data = Arc::new(buf);
            let mut batch = sink.batch(&data);
            let mut failed: Option<io::Error> = None;
            let mut emit = |fr: Frame<'_>| {
                if failed.is_some() {
                    return;
                }
                batch.push(fr);
                if batch.bytes >= batch_bytes {
                    let next = sink.batch(&data);
                    if let Err(e) = sink.submit(std::mem::replace(&mut batch, next)) {
                        failed = Some(e);
                    }
                }
            };
            let scanned = if n == 0 {
                scanner.scan_last(&data[..], &mut emit)
            } else {
                scanner.scan(&data[..], &mut emit)
            };
            let end = scanned.map_err(|cause| SourceError::BadHeader {
                path: file.to_owned(),
                cause,
            })?;
            let pending = end.pending;
            if let Some(e) = failed.or_else(|| sink.submit(batch).err()) {
                return quiet_broken_pipe(e);
            }
            carry.clear();
            carry.extend_from_slice(&data[end.consumed..]);
            if n == 0 {
                if let Err(e) = sink.drain() {
                    return quiet_broken_pipe(e);
                }
                sink.run.damage.incomplete_tail = pending as u64;
                if let Err(e) = sink.out.flush() {
                    return quiet_broken_pipe(e);
                }
                return Ok(Some(sink.run.damage));
            }
        }
    })
}

fn quiet_broken_pipe(e: io::Error) -> anyhow::Result<Option<DamageReport>> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(None)
    } else {
        Err(e.into())
    }
}

/// Records of one chunk, for a worker.
struct Batch {
    data: Arc<Vec<u8>>,
    /// Payloads of records that span blocks (the scanner stitched them).
    spill: Vec<u8>,
    items: Vec<Item>,
    /// Payload bytes in `items`.
    bytes: usize,
    /// The output buffer (reused).
    out: Vec<u8>,
}

enum Item {
    Record {
        offset: u64,
        spilled: bool,
        range: Range<usize>,
    },
    Skip(Skip),
}

impl Batch {
    fn push(&mut self, fr: Frame<'_>) {
        match fr {
            Frame::Record { offset, payload } => {
                let base = self.data.as_ptr() as usize;
                let at = (payload.as_ptr() as usize).wrapping_sub(base);
                // A payload borrowed from the chunk is referred to in place; a
                // stitched one is copied.
                let (spilled, range) = if at <= self.data.len()
                    && payload.len() <= self.data.len() - at
                    && matches!(payload, std::borrow::Cow::Borrowed(_))
                {
                    (false, at..at + payload.len())
                } else {
                    let start = self.spill.len();
                    self.spill.extend_from_slice(&payload);
                    (true, start..self.spill.len())
                };
                self.bytes += payload.len();
                self.items.push(Item::Record {
                    offset,
                    spilled,
                    range,
                });
            }
            Frame::Skip(s) => self.items.push(Item::Skip(s)),
        }
    }

    fn payload(&self, spilled: bool, range: &Range<usize>) -> &[u8] {
        let src = if spilled { &self.spill } else { &*self.data };
        src.get(range.clone()).unwrap_or_default()
    }
}

/// What the main thread still has to do at a place in a batch's output.
struct Mark {
    item: usize,
    /// Output bytes before it.
    at: usize,
    /// The record was printed by the general path (`true`), or not at all.
    printed: bool,
}

struct Done {
    batch: Batch,
    marks: Vec<Mark>,
}

type Job = (Batch, SyncSender<Done>);

fn work(jobs: &Mutex<Receiver<Job>>) {
    let mut scratch = json_fast::Scratch::default();
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((mut batch, reply)) = job else {
            return;
        };
        let mut out = std::mem::take(&mut batch.out);
        out.clear();
        out.reserve(batch.bytes + batch.bytes / 4);
        let mut marks = Vec::new();
        for (i, item) in batch.items.iter().enumerate() {
            match item {
                Item::Record { spilled, range, .. } => {
                    let p = batch.payload(*spilled, range);
                    let start = out.len();
                    let written = json_fast::write_record(p, &mut out, &mut scratch);
                    // Inert on a terminal: its text comes from the file.
                    leet_text::json_inert_from(&mut out, start);
                    match written {
                        Written::Fast => out.push(b'\n'),
                        Written::General => {
                            out.push(b'\n');
                            marks.push(Mark {
                                item: i,
                                at: out.len(),
                                printed: true,
                            });
                        }
                        Written::Undecodable => marks.push(Mark {
                            item: i,
                            at: out.len(),
                            printed: false,
                        }),
                    }
                }
                Item::Skip(_) => marks.push(Mark {
                    item: i,
                    at: out.len(),
                    printed: false,
                }),
            }
        }
        batch.out = out;
        // The main thread went away (an error): nothing more to do.
        let _ = reply.send(Done { batch, marks });
    }
}

/// The main thread's side: hands batches to the workers and prints their output
/// in order.
struct Sink<'a> {
    jobs: SyncSender<Job>,
    in_flight: VecDeque<Receiver<Done>>,
    max_in_flight: usize,
    /// Output buffers to reuse.
    spare: Vec<Vec<u8>>,
    /// Chunk buffers to reuse.
    spare_chunks: Vec<Vec<u8>>,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    shown: String,
    /// Damage, from the records the direct writer did not print and the skips.
    run: Run,
}

impl Sink<'_> {
    fn batch(&mut self, data: &Arc<Vec<u8>>) -> Batch {
        Batch {
            data: Arc::clone(data),
            spill: Vec::new(),
            items: Vec::new(),
            bytes: 0,
            out: self.spare.pop().unwrap_or_default(),
        }
    }

    fn submit(&mut self, batch: Batch) -> io::Result<()> {
        if batch.items.is_empty() {
            return Ok(());
        }
        while self.in_flight.len() >= self.max_in_flight {
            self.print_next()?;
        }
        let (tx, rx) = mpsc::sync_channel(1);
        self.jobs
            .send((batch, tx))
            .map_err(|_| io::Error::other("a JSON worker thread stopped"))?;
        self.in_flight.push_back(rx);
        Ok(())
    }

    fn drain(&mut self) -> io::Result<()> {
        while !self.in_flight.is_empty() {
            self.print_next()?;
        }
        Ok(())
    }

    fn print_next(&mut self) -> io::Result<()> {
        let Some(rx) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let done = rx
            .recv()
            .map_err(|_| io::Error::other("a JSON worker thread stopped"))?;
        let b = &done.batch;
        let mut at = 0;
        for m in &done.marks {
            self.out.write_all(&b.out[at..m.at])?;
            at = m.at;
            match &b.items[m.item] {
                Item::Record {
                    offset,
                    spilled,
                    range,
                } => {
                    let p = b.payload(*spilled, range);
                    self.run.apply(*offset, p);
                    if !m.printed {
                        // Not a record: on stderr, so stdout stays records only.
                        writeln!(
                            self.err,
                            "{}: undecodable record at offset {offset}, {} bytes",
                            self.shown,
                            p.len()
                        )?;
                    }
                }
                Item::Skip(s) => {
                    writeln!(
                        self.err,
                        "{}: skipped {} bytes at offset {}: {}",
                        self.shown, s.len, s.offset, s.reason
                    )?;
                    self.run.skip(*s);
                }
            }
        }
        self.out.write_all(&b.out[at..])?;
        let Batch { data, out, .. } = done.batch;
        if self.spare.len() < self.max_in_flight {
            self.spare.push(out);
        }
        if let Ok(chunk) = Arc::try_unwrap(data) {
            if self.spare_chunks.len() < 2 {
                self.spare_chunks.push(chunk);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
