//! The record inspector's index: per row (a record or a damaged span) only what
//! finds it again, its file offset (32 bits each, and where the offsets pass each
//! 4 GiB line) and its kind (a byte): 5 bytes a row, in fixed-size chunks, so a
//! growing index never copies itself (no doubling peak) and 5 million rows take
//! about 25 MB. Bodies are read again from the file when shown.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;

use leet_format::leveldb::{Frame, HeaderError, Scanner, SkipReason};

/// Rows per chunk of a [`Chunked`] vector.
const CHUNK: usize = 1 << 16;

/// The most rows an index holds (row numbers are 32-bit).
pub(crate) const MAX_ROWS: usize = u32::MAX as usize - 1;

/// Bytes read per step of a [`Seq`].
pub(crate) const READ_CHUNK: usize = 1 << 20;

/// A vector in fixed-size chunks: pushing never moves what is stored.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T: Copy> Chunked<T> {
    pub(crate) fn push(&mut self, v: T) {
        if self.len % CHUNK == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        if let Some(c) = self.chunks.last_mut() {
            c.push(v);
            self.len += 1;
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes held (capacity).
    pub(crate) fn bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<T>()
    }
}

/// Most damaged spans whose length and reason are kept (a span past these is still
/// a row; its hint gives its offset only).
const MAX_SKIPS: usize = 1 << 16;

/// Offsets and kinds of a file's rows, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    lo: Chunked<u32>,
    /// `hi[k]`: the first row whose offset is at least `(k + 1) << 32`.
    hi: Vec<u32>,
    kinds: Chunked<u8>,
    /// (row, length, reason) of damaged spans.
    skips: Vec<(u32, u64, SkipReason)>,
    /// Rows of each kind.
    pub(crate) counts: Vec<u64>,
}

impl Index {
    pub(crate) fn len(&self) -> usize {
        self.kinds.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.len() >= MAX_ROWS
    }

    /// Add a row at `offset` (offsets only grow).
    pub(crate) fn push(&mut self, offset: u64, kind: u8) {
        if self.is_full() {
            return;
        }
        let row = u32::try_from(self.len()).unwrap_or(u32::MAX);
        while (self.hi.len() as u64) < offset >> 32 {
            self.hi.push(row);
        }
        self.lo.push(offset as u32);
        self.kinds.push(kind);
        if self.counts.is_empty() {
            self.counts = vec![0; 256];
        }
        self.counts[usize::from(kind)] += 1;
    }

    /// Add a damaged span's row.
    pub(crate) fn push_skip(&mut self, offset: u64, len: u64, reason: SkipReason) {
        if self.is_full() {
            return;
        }
        if self.skips.len() < MAX_SKIPS {
            let row = u32::try_from(self.len()).unwrap_or(u32::MAX);
            self.skips.push((row, len, reason));
        }
        self.push(offset, crate::msg::KIND_SKIP);
    }

    pub(crate) fn offset(&self, row: usize) -> Option<u64> {
        let lo = self.lo.get(row)?;
        let r = u32::try_from(row).ok()?;
        let hi = self.hi.partition_point(|&start| start <= r) as u64;
        Some(hi << 32 | u64::from(lo))
    }

    pub(crate) fn kind(&self, row: usize) -> Option<u8> {
        self.kinds.get(row)
    }

    /// Length and reason of the damaged span at `row`, when kept.
    pub(crate) fn skip(&self, row: usize) -> Option<(u64, SkipReason)> {
        let r = u32::try_from(row).ok()?;
        let i = self.skips.binary_search_by_key(&r, |s| s.0).ok()?;
        self.skips.get(i).map(|s| (s.1, s.2))
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.lo.bytes() + self.kinds.bytes() + self.hi.capacity() * 4 + self.skips.capacity() * 24
    }
}

/// Reads a file's framing in steps, from a chunk boundary on: what one step reads
/// is scanned, and the bytes of an unfinished record carried to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seq {
    scanner: Scanner,
    carry: Vec<u8>,
    /// Bytes of the file read so far (absolute).
    read_to: u64,
}

impl Seq {
    /// A reader from `offset` (0: the file's start, whose header is checked).
    pub(crate) fn at(offset: u64) -> Self {
        Self {
            scanner: Scanner::at(offset),
            carry: Vec::new(),
            read_to: offset,
        }
    }

    /// Where the frames handed on end: the next frame starts at or after it.
    pub(crate) fn scanned_to(&self) -> u64 {
        self.scanner.base()
    }

    /// The damaged span at the end of what was read, held open (see
    /// [`Scanner::open_skip`]).
    pub(crate) fn open_skip(&self) -> Option<leet_format::leveldb::Skip> {
        self.scanner.open_skip()
    }

    pub(crate) fn read_to(&self) -> u64 {
        self.read_to
    }

    /// Read up to [`READ_CHUNK`] more bytes, not past `limit`, and hand on the
    /// frames they complete; the bytes read (0 at `limit`).
    ///
    /// # Errors
    /// A read error, or a bad file header (as `InvalidData`).
    pub(crate) fn step<F: FnMut(Frame<'_>)>(
        &mut self,
        file: &File,
        limit: u64,
        mut emit: F,
    ) -> io::Result<usize> {
        let want = usize::try_from(limit.saturating_sub(self.read_to))
            .unwrap_or(usize::MAX)
            .min(READ_CHUNK);
        if want == 0 {
            return Ok(0);
        }
        let old = self.carry.len();
        self.carry.resize(old + want, 0);
        let n = read_at(file, &mut self.carry[old..], self.read_to)?;
        self.carry.truncate(old + n);
        self.read_to += n as u64;
        let end = self
            .scanner
            .scan(&self.carry, &mut emit)
            .map_err(|e: HeaderError| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        self.carry.drain(..end.consumed);
        // An unfinished record keeps its bytes; the buffer gives back what a big
        // one needed once it is done.
        if self.carry.capacity() > 4 * READ_CHUNK && self.carry.len() < READ_CHUNK {
            self.carry.shrink_to(READ_CHUNK);
        }
        Ok(n)
    }
}

/// Read into `buf` at `offset` until it is full or the file ends; the bytes read.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
