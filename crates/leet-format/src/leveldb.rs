//! LevelDB-log framing of `.wandb` files: the 7-byte W&B file header, 32 KiB blocks,
//! 7-byte chunk headers, FULL/FIRST/MIDDLE/LAST reassembly and CRC-32 (IEEE) checks.
//!
//! [`Scanner`] works on byte slices that start at a known absolute file offset and
//! never touches files. It hands every complete record and every skipped span to a
//! callback and returns how many bytes were fully consumed, so a tailing reader can
//! keep the rest (a record still being written) and call it again when the file grows.

use std::borrow::Cow;
use std::fmt;

/// Size of one LevelDB log block; chunk boundaries never cross a multiple of it.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a chunk header: checksum (4), length (2), type (1).
pub const CHUNK_HEADER_LEN: usize = 7;
/// The W&B file header: `:W&B`, magic `0xBEE1` (LE), store version 0.
pub const FILE_HEADER: [u8; 7] = [0x3A, 0x57, 0x26, 0x42, 0xE1, 0xBE, 0x00];
/// Largest reassembled record we accept; a hostile chain of chunks cannot make
/// the reader allocate more than this.
pub const MAX_RECORD_LEN: usize = 64 << 20;

const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;

/// Why the file header was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than 7 bytes so far, all of them a prefix of the header (a live file
    /// may still get the rest).
    TooShort,
    /// The file does not start with the ident `:W&B`.
    NotWandb,
    /// The ident is right but the magic is not `0xBEE1`.
    BadMagic,
    /// A store version other than 0 (only version 0 was ever written; a writer raises
    /// it to make older readers refuse the file).
    Version(u8),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::TooShort => write!(f, "file is shorter than the 7-byte W&B header"),
            HeaderError::NotWandb => write!(
                f,
                "bad header: not a .wandb transaction log (it does not start with ':W&B')"
            ),
            HeaderError::BadMagic => {
                write!(f, "bad header: ':W&B' is not followed by the magic 0xBEE1")
            }
            HeaderError::Version(v) => write!(
                f,
                "bad header: unsupported .wandb store version {v} (this reader knows version 0)"
            ),
        }
    }
}

/// Check the 7-byte file header at the start of `data`.
///
/// # Errors
/// [`HeaderError::TooShort`] if fewer than 7 bytes are present and they agree with
/// the header so far; otherwise the first part that differs.
pub fn check_header(data: &[u8]) -> Result<(), HeaderError> {
    let h = &data[..data.len().min(FILE_HEADER.len())];
    if zeroed_header(data) {
        // Zeros where the header was (a file system that lost the first page of
        // a file being written): damage, not another kind of file. The records
        // after it are read; the zeros are reported as damage from offset 0.
        return Ok(());
    }
    let part = |r: std::ops::Range<usize>| {
        let r = r.start.min(h.len())..r.end.min(h.len());
        h[r.clone()] == FILE_HEADER[r]
    };
    if !part(0..4) {
        Err(HeaderError::NotWandb)
    } else if !part(4..6) {
        Err(HeaderError::BadMagic)
    } else if h.len() < FILE_HEADER.len() {
        Err(HeaderError::TooShort)
    } else if h[6] != FILE_HEADER[6] {
        Err(HeaderError::Version(h[6]))
    } else {
        Ok(())
    }
}

/// Whether the 7 header bytes are all zero ([`check_header`] takes such a file for
/// a damaged one).
#[must_use]
pub fn zeroed_header(data: &[u8]) -> bool {
    data.get(..FILE_HEADER.len())
        .is_some_and(|h| h.iter().all(|&b| b == 0))
}

/// Why a span of the file was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// A chunk's CRC-32 did not match its type byte and payload.
    Checksum,
    /// A chunk header claims more bytes than its block holds.
    ChunkTooLong,
    /// A chunk type outside 1..=4.
    BadChunkType,
    /// MIDDLE/LAST without a FIRST, or a FIRST/FULL that interrupted a record.
    BadChunkOrder,
    /// All-zero space where a chunk header should be.
    ZeroFilled,
    /// A reassembled record longer than [`MAX_RECORD_LEN`].
    RecordTooLarge,
    /// A record whose number was read before: a duplicated part of the file.
    Duplicate,
    /// Framing was intact but the protobuf payload did not decode.
    BadRecord,
    /// Another run file's header, then its records, after this file's records
    /// (two files joined into one): from its header on, nothing is this run's.
    AppendedFile,
}

impl SkipReason {
    /// Stable lowercase name, used in reports and JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Checksum => "checksum mismatch",
            SkipReason::ChunkTooLong => "chunk too long",
            SkipReason::BadChunkType => "bad chunk type",
            SkipReason::BadChunkOrder => "bad chunk order",
            SkipReason::ZeroFilled => "zero-filled space",
            SkipReason::RecordTooLarge => "record too large",
            SkipReason::Duplicate => "duplicated record",
            SkipReason::BadRecord => "undecodable record",
            SkipReason::AppendedFile => "another run file appended",
        }
    }
}

impl SkipReason {
    /// Whether the reader searched for the framing again after such a span (at any
    /// byte offset): all framing damage, not a record that did not decode or was
    /// read before.
    #[must_use]
    pub fn resynchronises(self) -> bool {
        !matches!(
            self,
            SkipReason::BadRecord | SkipReason::Duplicate | SkipReason::AppendedFile
        )
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A span of the file whose records were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip {
    /// Absolute file offset where the span starts.
    pub offset: u64,
    /// Length of the span in bytes.
    pub len: u64,
    /// What was wrong at its start.
    pub reason: SkipReason,
}

impl Skip {
    /// Absolute offset just past the span.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// What [`scan`] hands to its callback.
#[derive(Debug)]
pub enum Frame<'a> {
    /// One complete record. `offset` is the absolute offset of its first chunk header.
    /// The payload borrows from the input when the record is a single FULL chunk.
    Record {
        /// Absolute offset of the record's first chunk header.
        offset: u64,
        /// The record's bytes: one protobuf `Record`.
        payload: Cow<'a, [u8]>,
    },
    /// A damaged span that was skipped.
    Skip(Skip),
}

/// How a scan ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanEnd {
    /// Bytes of the input fully processed. Resume the next scan at `base + consumed`
    /// with the input bytes from `consumed` on (plus whatever was appended).
    pub consumed: usize,
    /// Bytes after `consumed` that belong to a record (or chunk header) that is not
    /// complete yet: on a live file more may come; on a finished file it is a cut tail.
    pub pending: usize,
}

/// Where the first record starting in `data` begins, for a reader that starts
/// mid-file: `data` starts at the block boundary `base`, and the MIDDLE/LAST chunks
/// that open it end a record begun before. None when damage (or the end of `data`)
/// comes before a FULL/FIRST chunk: then only a scan from an earlier point knows how
/// to read these bytes.
#[must_use]
pub fn first_record_start(data: &[u8], base: u64) -> Option<u64> {
    let mut pos = 0usize;
    loop {
        let in_block = usize::try_from((base + pos as u64) % BLOCK_SIZE as u64).ok()?;
        let left = BLOCK_SIZE - in_block;
        if left < CHUNK_HEADER_LEN {
            pos += left;
            continue;
        }
        let h = data.get(pos..pos + CHUNK_HEADER_LEN)?;
        let stored = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
        let kind = h[6];
        if in_block + CHUNK_HEADER_LEN + len > BLOCK_SIZE {
            return None;
        }
        let chunk = data.get(pos..pos + CHUNK_HEADER_LEN + len)?;
        if crc32fast::hash(&chunk[6..]) != stored {
            return None;
        }
        match kind {
            FULL | FIRST => return Some(base + pos as u64),
            MIDDLE | LAST => pos += CHUNK_HEADER_LEN + len,
            _ => return None,
        }
    }
}

/// Scan all of a file's bytes at once: `data` starts at absolute offset `base` (0, or
/// a chunk boundary) and is all there is. The same frames as a [`Scanner`] fed the
/// same bytes in any pieces, then finished.
///
/// # Errors
/// Only the file header can fail (at `base == 0`); damage after it is reported
/// through [`Frame::Skip`] and never stops the scan.
pub fn scan<'a, F>(data: &'a [u8], base: u64, mut emit: F) -> Result<ScanEnd, HeaderError>
where
    F: FnMut(Frame<'a>),
{
    Scanner::at(base).scan_last(data, &mut emit)
}

mod resync;
mod scanner;
#[cfg(test)]
mod tests;
mod writer;

pub use scanner::Scanner;
pub use writer::Writer;
