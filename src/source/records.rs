//! The record inspector's file side: a worker thread per file opened that indexes
//! its framing ([`index::Index`]: offset and kind per row, nothing decoded), reads
//! the hints and body of the rows asked for again from the file (a small LRU
//! keeps the hints), filters the rows by kind and text on its own time (streaming
//! the matches, with progress, restarted or dropped by the next request), and
//! follows the file as it grows. The app asks with a [`RecordsView`] and gets a
//! [`RecordsPage`] back as `Msg::Records`.

mod hint;
mod index;

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use regex::bytes::{Regex, RegexBuilder};

use crate::msg::{Msg, RecordRow, RecordsPage, RecordsView, KIND_SKIP};
use index::{Chunked, Index, Seq};
use leet_format::json_fast;
use leet_format::leveldb::{Frame, Scanner, MAX_RECORD_LEN};

/// How often an idle worker looks for growth.
const POLL: Duration = Duration::from_millis(250);
/// Most often progress is sent while indexing or filtering.
const PROGRESS: Duration = Duration::from_millis(100);
/// Longest one round of filter work (between looks at the requests).
const SLICE: Duration = Duration::from_millis(20);
/// Hints kept.
const HINTS: usize = 1024;
/// Most rows one view asks for.
const MAX_VIEW: usize = 500;

/// The worker of one open file: dropping it ends the thread.
#[derive(Debug)]
pub struct Handle {
    tx: Sender<RecordsView>,
}

impl Handle {
    /// Ask for a view; the answer comes as `Msg::Records`.
    pub fn view(&self, v: RecordsView) {
        let _ = self.tx.send(v);
    }
}

/// Start the worker on `path` (a `.wandb` file); it answers on `out`.
#[must_use]
pub fn spawn(path: PathBuf, out: SyncSender<Msg>) -> Handle {
    let (tx, rx) = mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("leet-records".into())
        .spawn(move || {
            let mut w = Records::open(&path);
            w.serve(&rx, &out);
        });
    Handle { tx }
}

/// The filter in force and the rows it matched so far.
#[derive(Debug, Default)]
struct Filter {
    kind: Option<u8>,
    text: String,
    regex: Option<Regex>,
    matches: Chunked<u32>,
    /// Rows checked so far.
    checked: usize,
    /// The text filter's reader, at the first row not checked.
    seq: Option<Seq>,
    json: Vec<u8>,
    scratch: json_fast::Scratch,
}

impl Filter {
    fn new(kind: Option<u8>, text: &str) -> Result<Self, String> {
        let regex = if text.is_empty() {
            None
        } else {
            Some(
                RegexBuilder::new(text)
                    .case_insensitive(true)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| format!("filter: {e}"))?,
            )
        };
        Ok(Self {
            kind,
            text: text.to_owned(),
            regex,
            ..Self::default()
        })
    }

    fn is_all(&self) -> bool {
        self.kind.is_none() && self.regex.is_none()
    }

    fn total(&self, ix: &Index) -> usize {
        if self.is_all() {
            ix.len()
        } else {
            self.matches.len()
        }
    }

    fn checked(&self, ix: &Index) -> usize {
        if self.is_all() {
            ix.len()
        } else {
            self.checked
        }
    }

    fn row(&self, pos: usize) -> Option<usize> {
        if self.is_all() {
            Some(pos)
        } else {
            self.matches.get(pos).map(|r| r as usize)
        }
    }

    fn keep(&mut self, row: usize) {
        if let Ok(r) = u32::try_from(row) {
            self.matches.push(r);
        }
    }
}

/// The state of one open file.
struct Records {
    file: Option<File>,
    path: PathBuf,
    index: Index,
    feed: Seq,
    file_len: u64,
    /// The bytes there at the start are not all indexed yet.
    indexing: bool,
    filter: Filter,
    view: Option<RecordsView>,
    /// Row → (hint, the record's own number, last use).
    hints: HashMap<usize, (String, Option<u64>, u64)>,
    stamp: u64,
    /// The row whose body was sent last.
    body_sent: Option<usize>,
    error: Option<String>,
}

impl Records {
    fn open(path: &Path) -> Self {
        let (file, error) = match super::small_file::open_regular(path) {
            Ok(f) => (Some(f), None),
            Err(e) => (
                None,
                Some(format!("{}: {e}", leet_text::sanitize_path(path))),
            ),
        };
        let mut r = Self {
            file,
            path: path.to_owned(),
            index: Index::default(),
            feed: Seq::at(0),
            file_len: 0,
            indexing: true,
            filter: Filter::default(),
            view: None,
            hints: HashMap::new(),
            stamp: 0,
            body_sent: None,
            error,
        };
        r.file_len = r.len_now();
        r
    }

    fn len_now(&self) -> u64 {
        self.file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len())
    }

    /// Whether work is waiting: bytes to index or rows to filter.
    fn busy(&self) -> bool {
        self.file.is_some()
            && self.error.is_none()
            && (self.feed.read_to() < self.file_len
                || self.filter.checked(&self.index) < self.index.len())
    }

    fn serve(&mut self, rx: &Receiver<RecordsView>, out: &SyncSender<Msg>) {
        let mut last_sent = Instant::now();
        let mut owed = false;
        loop {
            let first = if self.busy() {
                match rx.try_recv() {
                    Ok(v) => Some(v),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                match rx.recv_timeout(POLL) {
                    Ok(v) => Some(v),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            // Only the latest request counts.
            let mut asked = first;
            while let Ok(v) = rx.try_recv() {
                asked = Some(v);
            }
            let mut answer_now = false;
            if let Some(v) = asked {
                self.ask(v);
                answer_now = true;
            }
            let before = (
                self.index.len(),
                self.filter.checked,
                self.filter.total(&self.index),
            );
            if !self.busy() {
                self.look_for_growth();
            }
            self.work();
            let after = (
                self.index.len(),
                self.filter.checked,
                self.filter.total(&self.index),
            );
            owed |= before != after || (self.indexing && !self.busy());
            if self.indexing && self.feed.read_to() >= self.file_len {
                self.indexing = false;
                owed = true;
            }
            if answer_now || (owed && last_sent.elapsed() >= PROGRESS) {
                if let Some(page) = self.page() {
                    if out.send(Msg::Records(Box::new(page))).is_err() {
                        return;
                    }
                }
                last_sent = Instant::now();
                owed = false;
            }
        }
    }

    /// Take a request: a new filter starts over.
    fn ask(&mut self, v: RecordsView) {
        if v.kind != self.filter.kind || v.text != self.filter.text {
            match Filter::new(v.kind, &v.text) {
                Ok(f) => {
                    self.filter = f;
                    if self
                        .error
                        .as_deref()
                        .is_some_and(|e| e.starts_with("filter:"))
                    {
                        self.error = None;
                    }
                }
                Err(e) => {
                    self.filter = Filter::new(v.kind, "").unwrap_or_default();
                    self.error = Some(e);
                }
            }
        }
        self.view = Some(v);
    }

    /// A file that grew is read on; one that shrank was replaced: start again.
    fn look_for_growth(&mut self) {
        let len = self.len_now();
        if len < self.feed.read_to() {
            let file = super::small_file::open_regular(&self.path).ok();
            let view = self.view.take();
            *self = Self::open(&self.path);
            if file.is_none() {
                return;
            }
            if let Some(v) = view {
                self.filter = Filter::new(v.kind, &v.text).unwrap_or_default();
                self.view = Some(v);
            }
            return;
        }
        self.file_len = len;
    }

    /// One round of work: a chunk of the file indexed, or a slice of filtering.
    fn work(&mut self) {
        let Some(file) = &self.file else { return };
        if self.error.is_some()
            && !self
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("filter:"))
        {
            return;
        }
        if self.feed.read_to() < self.file_len {
            let ix = &mut self.index;
            let r = self.feed.step(file, self.file_len, |f| match f {
                Frame::Record { offset, payload } => ix.push(offset, hint::kind_of(&payload)),
                Frame::Skip(s) => ix.push_skip(s.offset, s.len, s.reason),
            });
            if let Err(e) = r {
                self.error = Some(format!("{}: {e}", leet_text::sanitize_path(&self.path)));
            } else if self.index.is_full() {
                self.error = Some(format!(
                    "more than {} records: the rest are not listed",
                    index::MAX_ROWS
                ));
            }
            return;
        }
        self.filter_slice();
    }

    /// Check rows against the filter for up to [`SLICE`].
    fn filter_slice(&mut self) {
        let Some(file) = &self.file else { return };
        let (ix, f) = (&self.index, &mut self.filter);
        if f.is_all() || f.checked >= ix.len() {
            return;
        }
        let Some(re) = f.regex.clone() else {
            // By kind alone: no reading.
            while f.checked < ix.len() {
                if ix.kind(f.checked) == f.kind {
                    f.keep(f.checked);
                }
                f.checked += 1;
            }
            return;
        };
        let start = Instant::now();
        let limit = self.feed.scanned_to();
        while f.checked < ix.len() && start.elapsed() < SLICE {
            let at = ix.offset(f.checked).unwrap_or(limit);
            let seq = f.seq.get_or_insert_with(|| Seq::at(at));
            let mut frames = Vec::new();
            let got = seq.step(file, limit, |fr| {
                if let Frame::Record { offset, payload } = fr {
                    frames.push((offset, payload.into_owned()));
                }
            });
            let done = matches!(got, Ok(0) | Err(_));
            for (offset, payload) in frames {
                // Rows before this record (damaged spans) are checked by their hint.
                while f.checked < ix.len() && ix.offset(f.checked).is_some_and(|o| o < offset) {
                    check_plain(f, ix, &re);
                }
                if ix.offset(f.checked) == Some(offset) {
                    let kind_ok = f.kind.is_none_or(|k| ix.kind(f.checked) == Some(k));
                    if kind_ok {
                        f.json.clear();
                        json_fast::write_record(&payload, &mut f.json, &mut f.scratch);
                        if re.is_match(&f.json)
                            || (f.json.is_empty()
                                && re.is_match(hint::bad_hint(payload.len()).as_bytes()))
                        {
                            f.keep(f.checked);
                        }
                    }
                    f.checked += 1;
                }
            }
            if done {
                // The reader is at the end of what is indexed: the rows left have
                // no record it found (damaged spans), checked by their hint.
                while f.checked < ix.len() {
                    check_plain(f, ix, &re);
                }
                break;
            }
        }
    }

    /// The page for the view in force.
    fn page(&mut self) -> Option<RecordsPage> {
        let v = self.view.clone()?;
        let total = self.filter.total(&self.index) as u64;
        let len = v.len.clamp(1, MAX_VIEW) as u64;
        let last = total.saturating_sub(1);
        let (mut from, selected) = if v.follow {
            (total.saturating_sub(len), last)
        } else {
            (v.from.min(last), v.selected.min(last))
        };
        from = from.min(selected);
        if selected >= from + len {
            from = selected + 1 - len;
        }
        let mut rows = Vec::new();
        for pos in from..(from + len).min(total) {
            let Some(row) = usize::try_from(pos).ok().and_then(|p| self.filter.row(p)) else {
                break;
            };
            let (hint, num) = self.hint(row);
            rows.push(RecordRow {
                pos,
                num,
                offset: self.index.offset(row).unwrap_or(0),
                kind: self.index.kind(row).unwrap_or(0),
                hint,
            });
        }
        let sel_row = usize::try_from(selected)
            .ok()
            .and_then(|p| self.filter.row(p));
        let body = if total > 0 && sel_row != self.body_sent {
            self.body_sent = sel_row;
            sel_row.map(|r| self.body(r))
        } else if total == 0 && self.body_sent.is_some() {
            self.body_sent = None;
            Some(Vec::new())
        } else {
            None
        };
        let mut kinds: Vec<(u8, u64)> = Vec::new();
        for (k, &n) in self.index.counts.iter().enumerate() {
            if n > 0 {
                kinds.push((u8::try_from(k).unwrap_or(0), n));
            }
        }
        Some(RecordsPage {
            gen: v.gen,
            total,
            indexed: self.index.len() as u64,
            scanned: self.feed.scanned_to(),
            file_len: self.file_len,
            indexing: self.indexing,
            checked: self.filter.checked(&self.index) as u64,
            kinds,
            from,
            selected,
            rows,
            body,
            open_damage: self.feed.open_skip().map(|s| (s.offset, s.len)),
            error: self.error.clone(),
        })
    }

    /// The payload of the record at `row`, read again from the file.
    fn payload(&self, row: usize) -> Option<Vec<u8>> {
        let file = self.file.as_ref()?;
        let start = self.index.offset(row)?;
        let end = self
            .index
            .offset(row + 1)
            .unwrap_or_else(|| self.feed.scanned_to());
        let most = MAX_RECORD_LEN as u64 * 2;
        let len = usize::try_from(end.saturating_sub(start).min(most)).ok()?;
        let mut buf = vec![0; len];
        let n = index::read_at(file, &mut buf, start).ok()?;
        buf.truncate(n);
        let mut out = None;
        let _ = Scanner::at(start).scan(&buf, |f| {
            if let Frame::Record { offset, payload } = f {
                if offset == start && out.is_none() {
                    out = Some(payload.into_owned());
                }
            }
        });
        out
    }

    /// The hint of `row`, from the cache or the file.
    fn hint(&mut self, row: usize) -> (String, Option<u64>) {
        self.stamp += 1;
        if let Some((h, num, at)) = self.hints.get_mut(&row) {
            *at = self.stamp;
            return (h.clone(), *num);
        }
        let (h, num) = match self.index.kind(row) {
            Some(KIND_SKIP) => (hint::skip_hint(self.index.skip(row)), None),
            _ => match self.payload(row) {
                Some(p) => (
                    hint::record_hint(&p),
                    leet_format::record::record_kind(&p)
                        .and_then(|(n, _, _)| u64::try_from(n).ok()),
                ),
                None => (
                    "⚠ cannot read the record again (the file changed?)".to_owned(),
                    None,
                ),
            },
        };
        if self.hints.len() >= HINTS {
            if let Some(old) = self
                .hints
                .iter()
                .min_by_key(|(_, (_, _, at))| *at)
                .map(|(r, _)| *r)
            {
                self.hints.remove(&old);
            }
        }
        self.hints.insert(row, (h.clone(), num, self.stamp));
        (h, num)
    }

    /// The detail of `row`.
    fn body(&self, row: usize) -> Vec<String> {
        let offset = self.index.offset(row).unwrap_or(0);
        match self.index.kind(row) {
            Some(KIND_SKIP) => hint::skip_body(offset, self.index.skip(row)),
            _ => match self.payload(row) {
                Some(p) => hint::record_body(offset, &p),
                None => vec!["cannot read the record again (the file changed?)".to_owned()],
            },
        }
    }
}

/// Check a row that has no record to read (a damaged span) by its hint.
fn check_plain(f: &mut Filter, ix: &Index, re: &Regex) {
    let row = f.checked;
    let kind = ix.kind(row);
    if f.kind.is_none_or(|k| kind == Some(k)) {
        let h = match kind {
            Some(KIND_SKIP) => hint::skip_hint(ix.skip(row)),
            _ => String::new(),
        };
        if !h.is_empty() && re.is_match(h.as_bytes()) {
            f.keep(row);
        }
    }
    f.checked += 1;
}

/// A synchronous index of `path` read to its end, and the page for `view`: what
/// the worker would answer once done (for tests and `leet inspect` tools).
///
/// # Errors
/// The file cannot be opened.
pub fn page_of(path: &Path, view: RecordsView) -> io::Result<RecordsPage> {
    let mut r = Records::open(path);
    if let Some(e) = &r.error {
        return Err(io::Error::other(e.clone()));
    }
    r.ask(view);
    while r.busy() {
        r.work();
        if r.error.is_some() {
            break;
        }
    }
    r.indexing = false;
    r.page().ok_or_else(|| io::Error::other("no view"))
}

/// Bytes the index of `path` holds once read to the end (a memory check).
///
/// # Errors
/// The file cannot be opened.
pub fn index_bytes(path: &Path) -> io::Result<(usize, usize)> {
    let mut r = Records::open(path);
    if let Some(e) = &r.error {
        return Err(io::Error::other(e.clone()));
    }
    while r.busy() && r.error.is_none() {
        r.work();
    }
    Ok((r.index.len(), r.index.bytes()))
}

#[cfg(test)]
mod tests;
