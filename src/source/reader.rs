//! Reading a `.wandb` file incrementally: each poll reads only the bytes appended
//! since the last one, keeps a record that is still being written for the next
//! poll, and decodes what it read into events (on the reader's thread).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::resolve::{io_err, SourceError};
use leet_format::decoder::Decoder;
use leet_format::event::{Events, Sink};
use leet_format::leveldb::{self, Frame, Scanner, Skip};

/// Reads a `.wandb` file incrementally.
#[derive(Debug)]
pub struct RunReader {
    path: PathBuf,
    pub(super) file: File,
    /// The framing state; `buf[0]` is at its base.
    pub(super) scanner: Scanner,
    /// Unconsumed bytes: the start of a record still being written.
    pub(super) buf: Vec<u8>,
    /// Set by [`RunReader::finish`]: the next poll that reaches the end of the file
    /// hands on the damaged span still open there.
    pub(super) finishing: bool,
    /// Bytes read from the file so far.
    pub(super) read_to: u64,
    pub(super) chunk: usize,
    /// Decodes what the polls read.
    decoder: Decoder,
    /// A first load found the file shrunk under it: the next poll starts over and
    /// says so.
    pub(super) restart_pending: bool,
}

/// What one poll did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Poll {
    /// New bytes read from the file.
    pub bytes: u64,
    /// Records handed on.
    pub records: u64,
    /// Bytes at the end that belong to an unfinished record.
    pub pending: u64,
    /// The file is larger than what was read (a poll stops after `chunk` bytes).
    pub more: bool,
    /// The file shrank or was replaced by another file at the same path: reading
    /// started again from its beginning, and what was read before is void.
    pub restarted: bool,
    /// The damaged span at the end of what was read, not handed on yet because the
    /// file may still extend it: count it in the damage so far (see
    /// [`Sink::at_end`]).
    pub open: Option<Skip>,
}

impl RunReader {
    /// Open `path` for reading from its start.
    ///
    /// # Errors
    /// [`SourceError::Io`] if it cannot be opened.
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let file = super::small_file::open_regular(path).map_err(io_err(path))?;
        Ok(Self {
            path: path.to_owned(),
            file,
            scanner: Scanner::new(),
            buf: Vec::new(),
            finishing: false,
            read_to: 0,
            chunk: 16 << 20,
            decoder: Decoder::new(),
            restart_pending: false,
        })
    }

    /// Check, before anything is shown, that `path` starts with the W&B file header,
    /// with the check the first poll makes ([`leveldb::check_header`]). A file
    /// shorter than the 7-byte header whose bytes agree with it so far passes: an
    /// empty file (a run whose first record is not written yet) or a header being
    /// written; the viewer waits for the rest and says so if the file stops growing.
    ///
    /// # Errors
    /// [`SourceError::BadHeader`] for a wrong header (a text file, random bytes, a
    /// PNG: anything but `:W&B`, magic `0xBEE1`, version 0), [`SourceError::Io`] if
    /// it cannot be read.
    pub fn check_header(path: &Path) -> Result<(), SourceError> {
        super::resolve::check_header(path)
    }

    /// Decode without the series ([`Decoder::without_series`]): for a run that is
    /// only summarised (`leet inspect --summary`). Every record is still checked, so
    /// the damage found is the same.
    #[must_use]
    pub fn without_series(mut self) -> Self {
        self.decoder = Decoder::without_series();
        self
    }

    /// A fresh decoder of the kind this reader uses.
    pub(super) fn new_decoder(&self) -> Decoder {
        if self.decoder.keeps_series() {
            Decoder::new()
        } else {
            Decoder::without_series()
        }
    }

    /// Limit how many bytes one poll reads (so a huge file loads in steps).
    #[must_use]
    pub fn with_chunk(mut self, bytes: usize) -> Self {
        self.chunk = bytes.max(leveldb::BLOCK_SIZE);
        self
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes read so far.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.read_to
    }

    /// Whether the path now names another file than the one we hold open (a run
    /// file rotated or rewritten by rename).
    fn replaced(&self) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            match (std::fs::metadata(&self.path), self.file.metadata()) {
                (Ok(a), Ok(b)) => (a.dev(), a.ino()) != (b.dev(), b.ino()),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// Current length of the file on disk.
    ///
    /// # Errors
    /// I/O errors from `metadata`.
    pub fn file_len(&self) -> Result<u64, SourceError> {
        Ok(self.file.metadata().map_err(io_err(&self.path))?.len())
    }

    /// Read what was appended (up to one chunk) and hand every complete record and
    /// skipped span to `f`.
    ///
    /// # Errors
    /// I/O errors, and a file that does not start with the W&B header.
    pub fn poll_frames(&mut self, mut f: impl FnMut(Frame<'_>)) -> Result<Poll, SourceError> {
        let mut restarted = std::mem::take(&mut self.restart_pending);
        if self.replaced() {
            if let Ok(f) = super::small_file::open_regular(&self.path) {
                self.file = f;
                restarted = true;
            }
        }
        let len = self.file_len()?;
        if len < self.read_to {
            restarted = true;
        }
        if restarted {
            self.scanner = Scanner::new();
            self.read_to = 0;
            self.buf.clear();
        }
        let want =
            usize::try_from((len - self.read_to).min(self.chunk as u64)).unwrap_or(self.chunk);
        let mut poll = Poll {
            restarted,
            ..Poll::default()
        };
        if want > 0 {
            self.file
                .seek(SeekFrom::Start(self.read_to))
                .map_err(io_err(&self.path))?;
            self.buf.reserve(want);
            let n = (&mut self.file)
                .take(want as u64)
                .read_to_end(&mut self.buf)
                .map_err(io_err(&self.path))?;
            self.read_to += n as u64;
            poll.bytes = n as u64;
        }
        poll.more = self.read_to < len;
        let mut records = 0u64;
        let mut count = |fr: Frame<'_>| {
            if matches!(fr, Frame::Record { .. }) {
                records += 1;
            }
            f(fr);
        };
        let last = self.finishing && !poll.more;
        let scanned = if last {
            self.finishing = false;
            self.scanner.scan_last(&self.buf, &mut count)
        } else {
            self.scanner.scan(&self.buf, &mut count)
        };
        let end = scanned.map_err(|cause| SourceError::BadHeader {
            path: self.path.clone(),
            cause,
        })?;
        self.buf.drain(..end.consumed);
        poll.records = records;
        poll.pending = end.pending as u64;
        poll.open = self.scanner.open_skip();
        Ok(poll)
    }

    /// The file is complete as far as the caller is concerned (a one-shot read, or
    /// the end of a follow): the next poll that reaches the end of the file also hands
    /// on the damaged span held open there, as a one-shot read of the same bytes does.
    pub fn finish(&mut self) {
        self.finishing = true;
    }

    /// Poll, decoding what was read into a batch of events.
    ///
    /// # Errors
    /// As [`RunReader::poll_frames`].
    pub fn poll_events(&mut self) -> Result<(Events, Poll), SourceError> {
        let mut d = std::mem::take(&mut self.decoder);
        let p = self.poll_frames(|fr| match fr {
            Frame::Record { offset, payload } => d.record(offset, &payload),
            Frame::Skip(s) => d.skip(s),
        });
        let ev = d.take();
        self.decoder = d;
        Ok((ev, p?))
    }

    /// Poll and fold the events into `sink`.
    ///
    /// # Errors
    /// As [`RunReader::poll_frames`].
    pub fn poll<S: Sink>(&mut self, sink: &mut S) -> Result<Poll, SourceError> {
        let (ev, p) = self.poll_events()?;
        sink.fold(&ev);
        sink.at_end(p.pending, p.open);
        Ok(p)
    }

    /// Read the whole file as it is now into `sink`.
    ///
    /// # Errors
    /// As [`RunReader::poll_frames`].
    pub fn read_all<S: Sink>(&mut self, sink: &mut S) -> Result<(), SourceError> {
        loop {
            let p = self.poll(sink)?;
            if !p.more {
                return Ok(());
            }
        }
    }
}
