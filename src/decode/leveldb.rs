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
    /// Framing was intact but the protobuf payload did not decode.
    BadRecord,
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
            SkipReason::BadRecord => "undecodable record",
        }
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
    Record { offset: u64, payload: Cow<'a, [u8]> },
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

struct Pending {
    start: u64,
    buf: Vec<u8>,
}

/// Accumulates adjacent skipped spans into one.
struct SkipRun {
    cur: Option<Skip>,
}

impl SkipRun {
    fn add<'a, F: FnMut(Frame<'a>)>(
        &mut self,
        offset: u64,
        end: u64,
        reason: SkipReason,
        emit: &mut F,
    ) {
        if end <= offset {
            return;
        }
        if let Some(cur) = &mut self.cur {
            if cur.end() == offset {
                cur.len = end - cur.offset;
                return;
            }
        }
        self.flush(emit);
        self.cur = Some(Skip {
            offset,
            len: end - offset,
            reason,
        });
    }

    fn flush<'a, F: FnMut(Frame<'a>)>(&mut self, emit: &mut F) {
        if let Some(s) = self.cur.take() {
            emit(Frame::Skip(s));
        }
    }
}

fn block_end(abs: u64) -> u64 {
    (abs / BLOCK_SIZE as u64 + 1) * BLOCK_SIZE as u64
}

/// Reads the framing incrementally, from input handed in pieces as a file grows.
///
/// The same bytes give the same frames however they are cut into calls to
/// [`Scanner::scan`]: a frame is handed on only once no later byte can change it.
/// Damage carries over from one call to the next. A chunk that sends the reader on
/// to the next block also skips the bytes of that block that have not arrived yet,
/// as they arrive; and a damaged span is held open ([`Scanner::open_skip`]) while the
/// bytes after it may still extend it. So spans never overlap, never cover bytes past
/// the input, and damage read in many pieces is one span, as in a one-shot read.
#[derive(Debug, Clone, Default)]
pub struct Scanner {
    /// Absolute offset of the first byte the next call expects.
    base: u64,
    /// Recovery in progress: the bytes up to this absolute offset (the end of a
    /// damaged block) are skipped when they arrive, as part of `open`.
    skip_to: Option<(u64, SkipReason)>,
    /// The last damaged span, not handed on yet: the input ends inside it, or only
    /// chunks that may still turn out damaged follow it.
    open: Option<Skip>,
}

impl Scanner {
    /// A scanner for a file read from its start (the header is checked first).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A scanner that starts at `base`: 0 (the header is checked), or the offset of a
    /// chunk boundary.
    #[must_use]
    pub fn at(base: u64) -> Self {
        Self {
            base,
            ..Self::default()
        }
    }

    /// Absolute offset of the first byte the next [`Scanner::scan`] expects: its input
    /// starts with the bytes an earlier scan did not consume.
    #[must_use]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The damaged span at the end of the input so far, not yet handed on because more
    /// bytes may extend it: part of the damage "so far" on a live file. Its length
    /// never reaches past the input.
    #[must_use]
    pub fn open_skip(&self) -> Option<Skip> {
        self.open
    }

    /// Whether the scanner stands at `offset` carrying nothing over (no damaged
    /// span open, no block being skipped): a fresh [`Scanner::at`] there would read
    /// what follows the same way.
    #[must_use]
    pub fn is_clean_at(&self, offset: u64) -> bool {
        self.base == offset && self.open.is_none() && self.skip_to.is_none()
    }

    /// The input is complete: hand on the open span, if any.
    pub fn finish<'a, F: FnMut(Frame<'a>)>(&mut self, mut emit: F) {
        if let Some(s) = self.open.take() {
            emit(Frame::Skip(s));
        }
    }

    /// Scan `data`, whose first byte is at [`Scanner::base`]: the bytes the last call
    /// did not consume, then whatever has been appended since. Every complete record
    /// and every finished damaged span is passed to `emit` in file order.
    ///
    /// # Errors
    /// Only the file header can fail (at base 0); damage after it is reported
    /// through [`Frame::Skip`] and never stops the scan.
    pub fn scan<'a, F>(&mut self, data: &'a [u8], mut emit: F) -> Result<ScanEnd, HeaderError>
    where
        F: FnMut(Frame<'a>),
    {
        let base = self.base;
        let end = data.len();
        let abs = |p: usize| base + p as u64;
        let rel = |a: u64| usize::try_from(a - base).map_or(end, |p| p.min(end));
        let mut pos: usize = 0;
        // Made once per call: `crc32fast::hash` detects the CPU's features each time.
        let crc = crc32fast::Hasher::new();
        let crc_of = |b: &[u8]| {
            let mut h = crc.clone();
            h.update(b);
            h.finalize()
        };
        if base == 0 {
            match check_header(data) {
                Ok(()) => pos = FILE_HEADER.len(),
                Err(HeaderError::TooShort) => {
                    return Ok(ScanEnd {
                        consumed: 0,
                        pending: end,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        let mut skips = SkipRun {
            cur: self.open.take(),
        };
        let mut skip_to = self.skip_to.take();
        if let Some((to, reason)) = skip_to {
            // The rest of a damaged block, as far as it has arrived.
            pos = rel(to.max(base));
            skips.add(base, abs(pos), reason, &mut emit);
            if abs(pos) >= to {
                skip_to = None;
            }
        }
        let mut pending: Option<Pending> = None;

        while skip_to.is_none() {
            let a = abs(pos);
            let in_block = (a % BLOCK_SIZE as u64) as usize;
            let left = BLOCK_SIZE - in_block;
            if left < CHUNK_HEADER_LEN {
                // Block trailer: 0..=6 padding bytes, never a chunk.
                if pos + left > end {
                    break;
                }
                pos += left;
                continue;
            }
            if pos + CHUNK_HEADER_LEN > end {
                break;
            }
            let h = &data[pos..pos + CHUNK_HEADER_LEN];
            let stored = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let kind = h[6];
            let next_block = block_end(a);

            // Drop the record in progress (if any) and skip to the next block: the
            // span ends where the input does, and the bytes of this block that have
            // not arrived are skipped by the next calls. Returns where to go on.
            let corrupt = |pending: &mut Option<Pending>,
                           skips: &mut SkipRun,
                           skip_to: &mut Option<(u64, SkipReason)>,
                           reason,
                           emit: &mut F| {
                let from = pending.take().map_or(a, |p| p.start);
                skips.add(from, next_block.min(abs(end)), reason, emit);
                if next_block > abs(end) {
                    *skip_to = Some((next_block, reason));
                }
                rel(next_block)
            };

            if stored == 0 && len == 0 && kind == 0 {
                // Zero-filled space. If zeros run to the end of what we have, the writer
                // may not have filled it yet: wait rather than report damage.
                if next_block > abs(end)
                    && pending.is_none()
                    && data[pos..end].iter().all(|&b| b == 0)
                {
                    break;
                }
                pos = corrupt(
                    &mut pending,
                    &mut skips,
                    &mut skip_to,
                    SkipReason::ZeroFilled,
                    &mut emit,
                );
                continue;
            }
            if in_block + CHUNK_HEADER_LEN + len > BLOCK_SIZE {
                // Known from the header alone, whether or not the rest of the block
                // has arrived.
                pos = corrupt(
                    &mut pending,
                    &mut skips,
                    &mut skip_to,
                    SkipReason::ChunkTooLong,
                    &mut emit,
                );
                continue;
            }
            if pos + CHUNK_HEADER_LEN + len > end {
                break;
            }
            let chunk_end = pos + CHUNK_HEADER_LEN + len;
            if crc_of(&data[pos + 6..chunk_end]) != stored {
                pos = corrupt(
                    &mut pending,
                    &mut skips,
                    &mut skip_to,
                    SkipReason::Checksum,
                    &mut emit,
                );
                continue;
            }
            if !(FULL..=LAST).contains(&kind) {
                // An intact chunk (its checksum holds) of a type the format does not have:
                // drop just it and the record it interrupts, and read on from the next chunk,
                // as LevelDB's reader does. The rest of the block is fine.
                let from = pending.take().map_or(a, |p| p.start);
                skips.add(from, abs(chunk_end), SkipReason::BadChunkType, &mut emit);
                pos = chunk_end;
                continue;
            }
            let payload = &data[pos + CHUNK_HEADER_LEN..chunk_end];
            match kind {
                FULL | FIRST => {
                    if let Some(p) = pending.take() {
                        skips.add(p.start, a, SkipReason::BadChunkOrder, &mut emit);
                    }
                    if kind == FULL {
                        skips.flush(&mut emit);
                        emit(Frame::Record {
                            offset: a,
                            payload: Cow::Borrowed(payload),
                        });
                    } else {
                        pending = Some(Pending {
                            start: a,
                            buf: payload.to_vec(),
                        });
                    }
                }
                _ => match &mut pending {
                    None => skips.add(a, abs(chunk_end), SkipReason::BadChunkOrder, &mut emit),
                    Some(p) => {
                        if p.buf.len() + len > MAX_RECORD_LEN {
                            // Too large: drop it now and report the span. Its later
                            // MIDDLE/LAST chunks are orphans and extend the same skip, and
                            // nothing before this point is kept for a resume, so neither
                            // memory nor re-scanning grows with a never-ending chain.
                            let start = p.start;
                            pending = None;
                            skips.add(start, abs(chunk_end), SkipReason::RecordTooLarge, &mut emit);
                        } else {
                            p.buf.extend_from_slice(payload);
                            if kind == LAST {
                                if let Some(p) = pending.take() {
                                    skips.flush(&mut emit);
                                    emit(Frame::Record {
                                        offset: p.start,
                                        payload: Cow::Owned(p.buf),
                                    });
                                }
                            }
                        }
                    }
                },
            }
            pos = chunk_end;
        }
        // A record still being assembled is scanned again from its start next time;
        // nothing after its start has been handed on or changed any state.
        let consumed = match &pending {
            Some(p) => rel(p.start),
            None => pos,
        };
        self.open = skips.cur;
        self.skip_to = skip_to;
        self.base += consumed as u64;
        Ok(ScanEnd {
            consumed,
            pending: end - consumed,
        })
    }
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
    let mut s = Scanner::at(base);
    let end = s.scan(data, &mut emit)?;
    s.finish(&mut emit);
    Ok(end)
}

/// Writes records in the same framing (header, chunking across blocks, zero padding,
/// checksums) as wandb-core. Used by tests, benchmarks and the demo generator.
#[derive(Debug, Default)]
pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// A writer whose output starts with the W&B file header.
    #[must_use]
    pub fn new() -> Self {
        Self {
            out: FILE_HEADER.to_vec(),
        }
    }

    /// Append one record's payload, split into chunks as the reference writer does.
    pub fn append(&mut self, mut payload: &[u8]) {
        let mut first = true;
        loop {
            let left = BLOCK_SIZE - self.out.len() % BLOCK_SIZE;
            if left < CHUNK_HEADER_LEN {
                self.out.resize(self.out.len() + left, 0);
                continue;
            }
            let room = left - CHUNK_HEADER_LEN;
            let n = payload.len().min(room);
            let last = n == payload.len();
            let kind = match (first, last) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, false) => MIDDLE,
                (false, true) => LAST,
            };
            let (chunk, rest) = payload.split_at(n);
            let mut h = crc32fast::Hasher::new();
            h.update(&[kind]);
            h.update(chunk);
            self.out.extend_from_slice(&h.finalize().to_le_bytes());
            self.out
                .extend_from_slice(&u16::try_from(n).unwrap_or(u16::MAX).to_le_bytes());
            self.out.push(kind);
            self.out.extend_from_slice(chunk);
            payload = rest;
            first = false;
            if last {
                return;
            }
        }
    }

    /// Bytes written so far.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// Take the bytes written so far.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.out
    }
}

#[cfg(test)]
mod tests;
