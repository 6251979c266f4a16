//! The incremental reader of the framing: records and damaged spans from bytes
//! handed in as a file grows.

use std::borrow::Cow;

use super::resync::{self, Nums};
use super::{
    check_header, zeroed_header, Frame, HeaderError, ScanEnd, Skip, SkipReason, BLOCK_SIZE,
    CHUNK_HEADER_LEN, FILE_HEADER, FIRST, FULL, LAST, MAX_RECORD_LEN, MIDDLE,
};

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
            // Records read twice are a span of their own, so the report counts them
            // apart from the damage next to them; so is another file appended.
            let kind = |r: SkipReason| match r {
                SkipReason::Duplicate => 1,
                SkipReason::AppendedFile => 2,
                _ => 0,
            };
            let same_kind = kind(cur.reason) == kind(reason);
            if cur.end() == offset && same_kind {
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

    /// The span of `reason` ending at `end` being built, taken back (not
    /// handed on): where it began.
    fn take_back(&mut self, reason: SkipReason, end: u64) -> Option<u64> {
        let cur = self.cur.filter(|c| c.reason == reason && c.end() == end)?;
        self.cur = None;
        Some(cur.offset)
    }

    fn flush<'a, F: FnMut(Frame<'a>)>(&mut self, emit: &mut F) {
        // (An open span can shrink to nothing: a search held back to a file
        // header that turns out to begin another file.)
        if let Some(s) = self.cur.take().filter(|s| s.len > 0) {
            emit(Frame::Skip(s));
        }
    }
}

/// Whether `payload` is an exit record (its body field `exit`, 18; wandb-core
/// may write `control` and `_info` fields before it).
fn is_exit(payload: &[u8]) -> bool {
    crate::record::record_kind(payload)
        .is_some_and(|(_, field, _)| field == crate::record::RecordType::Exit.field())
}

/// Whether a record numbered past the run's exit record is one of a run
/// (history, summary, console, config, stats, telemetry, a run or another exit
/// record…): no writer writes one after its exit. Records that only close a
/// file (`final`, `footer`) or that are not the run's data are left alone.
#[cold]
fn after_the_end(payload: &[u8]) -> bool {
    use crate::record::{record_kind, RecordType as T};
    record_kind(payload).is_some_and(|(_, field, _)| {
        !matches!(
            T::from_field(field),
            T::Final | T::Footer | T::Header | T::Request | T::Unknown
        )
    })
}

/// Whether the chunk found at `p` after damage is another run file's first: a
/// W&B file header, found at or after `from`, ends at `p` (two files joined).
fn appended_at(data: &[u8], p: usize, from: usize) -> bool {
    p >= from + FILE_HEADER.len() && data[p - FILE_HEADER.len()..p] == FILE_HEADER
}

/// Where a search after damage that stalled at `q` goes on next time: a file
/// header's length before it, so that a header just before the chunk still
/// undecided is seen with it ([`appended_at`]); never before `floor` (where the
/// search began, which no chunk starts after before `q`).
fn held_back(q: usize, floor: usize) -> usize {
    q.saturating_sub(FILE_HEADER.len()).max(floor).min(q)
}

/// Reads the framing incrementally, from input handed in pieces as a file grows.
///
/// The same bytes give the same frames however they are cut into calls to
/// [`Scanner::scan`]: a frame is handed on only once no later byte can change it.
/// Damage carries over from one call to the next. After damage the reader looks for
/// the next FULL or FIRST chunk whose checksum holds at every byte offset (bytes cut
/// out or put in move the chunks after them off the 32 KiB grid) and reads on from
/// there, chunk by chunk; a damaged span is held open ([`Scanner::open_skip`]) while
/// the bytes after it may still extend it. So spans never overlap, never cover bytes
/// past the input, and damage read in many pieces is one span, as in a one-shot read.
/// A record whose number was read before (a duplicated part of the file) is dropped
/// and reported as a span of [`SkipReason::Duplicate`].
#[derive(Debug, Clone, Default)]
pub struct Scanner {
    /// Absolute offset of the first byte the next call expects.
    base: u64,
    /// Recovery in progress: no chunk starts before `base`; the search for one goes
    /// on from there, extending `open`.
    resync: Option<SkipReason>,
    /// The last damaged span, not handed on yet: the input ends inside it, or only
    /// chunks that may still turn out damaged follow it.
    open: Option<Skip>,
    /// Where blocks start, modulo [`BLOCK_SIZE`]: 0 as written; damage that cut or
    /// inserted bytes shifts it. Learnt again from a FIRST/MIDDLE chunk (they end at
    /// a block end) or from padding.
    grid: u64,
    /// Since a resynchronisation, until the grid is learnt again: no trailer rule,
    /// and a chunk may sit anywhere its checksum holds.
    lost_grid: bool,
    /// Numbers of the records handed on.
    nums: Nums,
    /// The file's first records, to tell a copy of its start met further on
    /// from another run file joined on ([`Start`]).
    start: Start,
    /// (number, CRC-32 of the payload) of every record handed on whose number is
    /// a multiple of [`SAMPLE_EVERY`], by number: a record read under such a
    /// number with other bytes is another file's (no writer numbers two records
    /// alike), however its own file's start was damaged.
    samples: Vec<(u64, u32)>,
    /// The number of the exit record handed on: the writer wrote its last
    /// record, so a record of the run numbered past it is another file's (one
    /// numbered below it is the run's own, put after it by blocks moved).
    ended: Option<u64>,
    /// A file header met further on was taken for another file without knowing
    /// the file's first records (a scanner started past them): its reading is a
    /// guess ([`Scanner::guessed`]).
    guessed: bool,
}

/// The (number, CRC-32 of the payload) of a file's first [`START_RECORDS`]
/// records, as a reading from its start hands them on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Start {
    /// Started past the file's start: not known.
    #[default]
    Unknown,
    /// Read from its start; fewer than [`START_RECORDS`] records so far.
    Collecting(Vec<(u64, u32)>),
    Known(Vec<(u64, u32)>),
}

/// One record in this many (by number) is remembered by its bytes' CRC
/// ([`Scanner::samples`]): 78 KB for a run of five million records (cloned
/// with the scanner at every seam of a parallel read, so kept small).
const SAMPLE_EVERY: u64 = 1024;

/// How many of a file's first records tell it from another (the first, the
/// header record, is the same in every file an SDK version writes; the second,
/// the run record, names the run and when it started).
const START_RECORDS: usize = 3;

/// What a W&B file header met after damage begins.
enum Joined {
    /// Another run file, joined on: nothing from here on is this run's.
    Another { guessed: bool },
    /// A copy of this file's start (a block duplicated): read on as usual.
    Copy,
    /// The records after it are not all there yet.
    Wait,
}

/// A state of the reader that a record in progress may change and that is put
/// back when the record is scanned again from its start.
#[derive(Clone, Copy)]
struct Grid {
    grid: u64,
    lost: bool,
}

impl Scanner {
    /// A scanner for a file read from its start (the header is checked first).
    #[must_use]
    pub fn new() -> Self {
        Self::at(0)
    }

    /// A scanner that starts at `base`: 0 (the header is checked), or the offset of a
    /// chunk boundary on the 32 KiB grid.
    #[must_use]
    pub fn at(base: u64) -> Self {
        Self {
            base,
            start: if base == 0 {
                Start::Collecting(Vec::new())
            } else {
                Start::Unknown
            },
            ..Self::default()
        }
    }

    /// Whether it took a file header met further on for another file joined on
    /// without knowing the file's first records ([`Scanner::at`] past them): a
    /// reading from the file's start may decide otherwise.
    #[must_use]
    pub fn guessed(&self) -> bool {
        self.guessed
    }

    /// Absolute offset of the first byte the next [`Scanner::scan`] expects: its input
    /// starts with the bytes an earlier scan did not consume.
    #[must_use]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The damaged span at the end of the input so far, not yet handed on because more
    /// bytes may extend it: part of the damage "so far" on a live file. Its length
    /// never reaches past the input. While the search for the next chunk waits for
    /// more bytes it reaches the end of the input, and may end sooner once they come.
    #[must_use]
    pub fn open_skip(&self) -> Option<Skip> {
        self.open.filter(|s| s.len > 0)
    }

    /// Bytes from [`Scanner::base`] on that belong to no record in progress: the
    /// search for the next chunk after damage is waiting for more bytes.
    #[must_use]
    pub fn searching(&self) -> bool {
        self.resync.is_some()
    }

    /// Whether the scanner stands at `offset` on the 32 KiB grid carrying no damage
    /// over (no span open, no search going on): a fresh [`Scanner::at`] there reads
    /// what follows the same way, except for records read before
    /// ([`Scanner::continues`]).
    #[must_use]
    pub fn is_clean_at(&self, offset: u64) -> bool {
        self.base == offset
            && self.open.is_none()
            && self.resync.is_none()
            && !self.lost_grid
            && self.grid == 0
    }

    /// Take over the record numbers `earlier` has seen, when `self` (a fresh
    /// scanner started where `earlier` stands clean) read only higher ones: then
    /// `self` dropped exactly the duplicates `earlier` continued would have. False
    /// (nothing changed) otherwise.
    pub fn continues(&mut self, earlier: &Scanner) -> bool {
        // The file's first records are known before (else a reading from the
        // start might have judged a file header met here otherwise).
        // (After the run's exit record, what follows is judged record by record
        // by a reading that knows it came: `self` did not.)
        if matches!(earlier.start, Start::Collecting(_)) || earlier.ended.is_some() {
            return false;
        }
        if !self.nums.follow(&earlier.nums) {
            return false;
        }
        self.start = earlier.start.clone();
        // Every number here is above `earlier`'s: in order.
        let mine = std::mem::replace(&mut self.samples, earlier.samples.clone());
        self.samples.extend(mine);
        true
    }

    /// The input is complete: hand on the open span, if any.
    pub fn finish<'a, F: FnMut(Frame<'a>)>(&mut self, mut emit: F) {
        if let Some(s) = self.open.take().filter(|s| s.len > 0) {
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
    pub fn scan<'a, F>(&mut self, data: &'a [u8], emit: F) -> Result<ScanEnd, HeaderError>
    where
        F: FnMut(Frame<'a>),
    {
        self.scan_input(data, false, emit)
    }

    /// [`Scanner::scan`] of the last bytes there are, then [`Scanner::finish`]: a
    /// header whose payload would run past the end is not waited for, so the search
    /// after damage goes on to the end.
    ///
    /// # Errors
    /// As [`Scanner::scan`].
    pub fn scan_last<'a, F>(&mut self, data: &'a [u8], mut emit: F) -> Result<ScanEnd, HeaderError>
    where
        F: FnMut(Frame<'a>),
    {
        let end = self.scan_input(data, true, &mut emit)?;
        self.finish(&mut emit);
        Ok(end)
    }

    fn scan_input<'a, F>(
        &mut self,
        data: &'a [u8],
        eof: bool,
        mut emit: F,
    ) -> Result<ScanEnd, HeaderError>
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
                // A zeroed header is read as zero-filled space like the rest of
                // the zeroed page.
                Ok(()) if zeroed_header(data) => pos = 0,
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
        let mut open = self.open.take();
        if let (Some(o), Some(_)) = (&mut open, self.resync) {
            // Shown up to the end of the last input; it goes on from where the
            // search stands.
            o.len = base - o.offset;
        }
        let mut skips = SkipRun { cur: open };
        let mut grid = Grid {
            grid: self.grid,
            lost: self.lost_grid,
        };
        let mut resync = self.resync.take();
        if resync == Some(SkipReason::AppendedFile) {
            // Past another file's header: nothing more is this run's.
            skips.add(base, abs(end), SkipReason::AppendedFile, &mut emit);
            pos = end;
        } else if let Some(reason) = resync {
            // The search goes on where the last call left it.
            match resync::find_chunk(data, pos, eof, crc_of) {
                resync::Search::At(p) if appended_at(data, p, pos) => {
                    let h = p - FILE_HEADER.len();
                    skips.add(base, abs(h), reason, &mut emit);
                    match self.joined(data, p, eof) {
                        Joined::Another { guessed } => {
                            self.guessed |= guessed;
                            skips.add(abs(h), abs(end), SkipReason::AppendedFile, &mut emit);
                            resync = Some(SkipReason::AppendedFile);
                            pos = end;
                        }
                        // Decided once the records after it are there.
                        Joined::Wait => pos = h,
                        Joined::Copy => {
                            grid.lost = true;
                            pos = p;
                            resync = None;
                        }
                    }
                }
                resync::Search::At(p) => {
                    skips.add(base, abs(p), reason, &mut emit);
                    grid.lost = true;
                    pos = p;
                    resync = None;
                }
                resync::Search::Stall(p) => {
                    skips.add(base, abs(p), reason, &mut emit);
                    // A file header just before the chunk still undecided is
                    // searched again with it.
                    pos = held_back(p, pos);
                }
                resync::Search::Nothing => {
                    skips.add(base, abs(end), reason, &mut emit);
                    pos = end;
                }
            }
        }
        let mut pending: Option<(Pending, Grid)> = None;
        // Just past the last chunk read (or where this call began): after damage the
        // search starts here, so a chunk that begins inside what looked like padding
        // is found.
        let mut last_good = pos;

        while resync.is_none() {
            let a = abs(pos);
            let in_block = (a.wrapping_sub(grid.grid) % BLOCK_SIZE as u64) as usize;
            let left = BLOCK_SIZE - in_block;
            if left < CHUNK_HEADER_LEN && !grid.lost {
                // Block trailer: 0..=6 zero bytes, never a chunk. Other bytes there
                // mean the grid has moved: a chunk may start here.
                if pos + left > end {
                    break;
                }
                if data[pos..pos + left].iter().all(|&b| b == 0) {
                    pos += left;
                    continue;
                }
                grid.lost = true;
            }
            if pos + CHUNK_HEADER_LEN > end {
                break;
            }
            let h = &data[pos..pos + CHUNK_HEADER_LEN];
            let stored = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let kind = h[6];
            let fits = grid.lost || in_block + CHUNK_HEADER_LEN + len <= BLOCK_SIZE;

            let damage = if stored == 0 && len == 0 && kind == 0 {
                // Zero-filled space. If zeros run to the end of what we have, the writer
                // may not have filled it yet: wait rather than report damage.
                if (grid.lost || a + left as u64 > abs(end))
                    && pending.is_none()
                    && data[pos..end].iter().all(|&b| b == 0)
                {
                    break;
                }
                Some(SkipReason::ZeroFilled)
            } else if len > BLOCK_SIZE - CHUNK_HEADER_LEN {
                Some(SkipReason::ChunkTooLong)
            } else if pos + CHUNK_HEADER_LEN + len > end {
                // At the end of a complete file a chunk running past it is a cut
                // tail, unless a chunk follows or its type is none the format has
                // (then its header is damaged: garbage after the last record).
                // Before the end of a file still being written, a header followed by
                // a whole chunk whose checksum holds is damage too: waiting for its
                // bytes would hold every record after it back for good. (Without
                // one it may be a header written only in part so far: it waits.)
                // Named as a reading of the whole file names it, however the bytes
                // came: with a chunk after it, as a chunk whose checksum fails (what
                // it is once its claimed bytes are there); at the end of the file,
                // by its header.
                let found = resync::find_chunk(data, pos + 1, eof, crc_of);
                if matches!(found, resync::Search::At(_)) {
                    Some(if fits {
                        SkipReason::Checksum
                    } else {
                        SkipReason::ChunkTooLong
                    })
                } else if eof && (!fits || !(FULL..=LAST).contains(&kind)) {
                    Some(if fits {
                        SkipReason::BadChunkType
                    } else {
                        SkipReason::ChunkTooLong
                    })
                } else {
                    break;
                }
            } else if crc_of(&data[pos + 6..pos + CHUNK_HEADER_LEN + len]) != stored {
                Some(if fits {
                    SkipReason::Checksum
                } else {
                    SkipReason::ChunkTooLong
                })
            } else {
                // The checksum holds: a chunk that does not fit the grid is one of
                // bytes shifted by damage before it.
                grid.lost |= !fits;
                None
            };
            if let Some(reason) = damage {
                // Searched byte by byte from the damaged chunk on, not from where
                // its header says it ends: bytes cut out or put in within it leave
                // its header whole and the records after the edit inside its
                // extent. (A whole chunk with a good checksum inside a damaged
                // record's payload, which only logging the file's own bytes makes,
                // is read as a record so.)
                let search = resync::find_chunk(data, last_good, eof, crc_of);
                let dropped = pending.as_ref().map(|(p, _)| p.start);
                match search {
                    resync::Search::Stall(q)
                        if dropped.is_none()
                            && q <= pos + 6
                            && data[pos..q].iter().all(|&b| b == 0) =>
                    {
                        // Not decided yet, and maybe padding: decide it next time, from
                        // the same state.
                        pos = last_good;
                        break;
                    }
                    resync::Search::At(p)
                        if dropped.is_none()
                            && p > pos
                            && p <= pos + 6
                            && data[pos..p].iter().all(|&b| b == 0) =>
                    {
                        // Padding before a block start on a grid that has moved.
                        grid = Grid {
                            grid: abs(p) % BLOCK_SIZE as u64,
                            lost: false,
                        };
                        pos = p;
                    }
                    resync::Search::At(p)
                        if let Some(joined) = appended_at(data, p, last_good)
                            .then(|| self.joined(data, p, eof))
                            .filter(|j| !matches!(j, Joined::Copy)) =>
                    {
                        // Another run file begins (the records after its header are
                        // not this run's), or may: decided once they are there.
                        pending = None;
                        let h = p - FILE_HEADER.len();
                        let from = dropped.unwrap_or(a).min(abs(h));
                        skips.add(from, abs(h), reason, &mut emit);
                        if let Joined::Another { guessed } = joined {
                            self.guessed |= guessed;
                            skips.add(abs(h), abs(end), SkipReason::AppendedFile, &mut emit);
                            resync = Some(SkipReason::AppendedFile);
                            pos = end;
                        } else {
                            resync = Some(reason);
                            pos = h.max(rel(from));
                        }
                    }
                    resync::Search::At(p) => {
                        pending = None;
                        skips.add(dropped.unwrap_or(a), abs(p), reason, &mut emit);
                        grid.lost = true;
                        pos = p;
                    }
                    resync::Search::Stall(q) => {
                        pending = None;
                        let from = dropped.unwrap_or(a);
                        skips.add(from, abs(q), reason, &mut emit);
                        resync = Some(reason);
                        // Never before the span's start or the search's.
                        pos = held_back(q, last_good.max(rel(from)));
                    }
                    resync::Search::Nothing => {
                        pending = None;
                        skips.add(dropped.unwrap_or(a), abs(end), reason, &mut emit);
                        resync = Some(reason);
                        pos = end;
                    }
                }
                last_good = pos;
                continue;
            }
            let chunk_end = pos + CHUNK_HEADER_LEN + len;
            last_good = chunk_end;
            if !(FULL..=LAST).contains(&kind) {
                // An intact chunk (its checksum holds) of a type the format does not have:
                // drop just it and the record it interrupts, and read on from the next chunk,
                // as LevelDB's reader does. The rest of the block is fine.
                let from = pending.take().map_or(a, |(p, _)| p.start);
                skips.add(from, abs(chunk_end), SkipReason::BadChunkType, &mut emit);
                pos = chunk_end;
                continue;
            }
            if kind == FIRST || kind == MIDDLE {
                // They fill their block to its end, so the grid is where they end;
                // unless what is left of the block on the grid is a trailer (under
                // a header's length, zeros as far as read): a LevelDB writer that
                // pads there before going on in the next block, and LevelDB's
                // reader, skip it inside a record as between records.
                let at_pending = grid;
                let left = BLOCK_SIZE
                    - (abs(chunk_end).wrapping_sub(grid.grid) % BLOCK_SIZE as u64) as usize;
                let trailer = !grid.lost
                    && left < CHUNK_HEADER_LEN
                    && data[chunk_end..end.min(chunk_end + left)]
                        .iter()
                        .all(|&b| b == 0);
                if !trailer {
                    grid = Grid {
                        grid: abs(chunk_end) % BLOCK_SIZE as u64,
                        lost: false,
                    };
                }
                if kind == FIRST {
                    if let Some((p, _)) = pending.take() {
                        skips.add(p.start, a, SkipReason::BadChunkOrder, &mut emit);
                    }
                    pending = Some((
                        Pending {
                            start: a,
                            buf: data[pos + CHUNK_HEADER_LEN..chunk_end].to_vec(),
                        },
                        at_pending,
                    ));
                    pos = chunk_end;
                    continue;
                }
            }
            let payload = &data[pos + CHUNK_HEADER_LEN..chunk_end];
            if kind == FULL {
                if let Some((p, _)) = pending.take() {
                    skips.add(p.start, a, SkipReason::BadChunkOrder, &mut emit);
                }
                if let Some(from) = self.hand_on(
                    a,
                    abs(chunk_end),
                    Cow::Borrowed(payload),
                    false,
                    &mut skips,
                    &mut emit,
                ) {
                    skips.add(from, abs(end), SkipReason::AppendedFile, &mut emit);
                    resync = Some(SkipReason::AppendedFile);
                    pos = end;
                    continue;
                }
            } else {
                match &mut pending {
                    None => skips.add(a, abs(chunk_end), SkipReason::BadChunkOrder, &mut emit),
                    Some((p, _)) if p.buf.len() + len > MAX_RECORD_LEN => {
                        // Too large: drop it now and report the span. Its later
                        // MIDDLE/LAST chunks are orphans and extend the same skip, and
                        // nothing before this point is kept for a resume, so neither
                        // memory nor re-scanning grows with a never-ending chain.
                        let start = p.start;
                        pending = None;
                        skips.add(start, abs(chunk_end), SkipReason::RecordTooLarge, &mut emit);
                    }
                    Some((p, _)) => {
                        p.buf.extend_from_slice(payload);
                        if kind == LAST {
                            if let Some((p, _)) = pending.take() {
                                if let Some(from) = self.hand_on(
                                    p.start,
                                    abs(chunk_end),
                                    Cow::Owned(p.buf),
                                    true,
                                    &mut skips,
                                    &mut emit,
                                ) {
                                    skips.add(from, abs(end), SkipReason::AppendedFile, &mut emit);
                                    resync = Some(SkipReason::AppendedFile);
                                    pos = end;
                                    continue;
                                }
                            }
                        }
                    }
                }
            }
            pos = chunk_end;
        }
        // A record still being assembled is scanned again from its start next time;
        // nothing after its start has been handed on or changed any state.
        let consumed = match &pending {
            Some((p, at_start)) => {
                grid = *at_start;
                rel(p.start)
            }
            None => pos,
        };
        self.grid = grid.grid;
        self.lost_grid = grid.lost;
        self.open = skips.cur;
        self.resync = resync;
        self.base += consumed as u64;
        if resync.is_some() {
            // The bytes the search has not decided yet are damage so far, not a
            // record in progress: the open span covers them (it may end sooner
            // once they are decided).
            if let Some(o) = &mut self.open {
                o.len = abs(end) - o.offset;
            }
            return Ok(ScanEnd {
                consumed,
                pending: 0,
            });
        }
        Ok(ScanEnd {
            consumed,
            pending: end - consumed,
        })
    }

    /// A complete record (`assembled` from several chunks): handed on, unless
    /// its number was read before. An assembled one that is no whole record was
    /// glued from the chunks of two (a block copied, moved or cut out on the
    /// 32 KiB grid keeps every chunk's checksum): a span of bad chunk order, its
    /// number not taken as read — it must neither make the intact copy of the
    /// first record a duplicate nor the records after it seem to follow on.
    #[inline(always)]
    fn hand_on<'a, F: FnMut(Frame<'a>)>(
        &mut self,
        offset: u64,
        end: u64,
        payload: Cow<'a, [u8]>,
        assembled: bool,
        skips: &mut SkipRun,
        emit: &mut F,
    ) -> Option<u64> {
        let num = resync::record_num(&payload);
        // (Only a payload that starts as a record does is judged: the framing
        // carries any bytes.)
        if assembled && num.is_some() && !resync::whole_record(&payload) {
            skips.add(offset, end, SkipReason::BadChunkOrder, emit);
            return None;
        }
        if let Some(n) = num {
            if !self.nums.insert_read(n, &payload) {
                if self.read_otherwise(n, &payload) {
                    // Another file's: from the records read twice just before
                    // it (its own first ones) on.
                    return Some(
                        skips
                            .take_back(SkipReason::Duplicate, offset)
                            .unwrap_or(offset),
                    );
                }
                skips.add(offset, end, SkipReason::Duplicate, emit);
                return None;
            }
            if n % SAMPLE_EVERY == 0 {
                self.sample(n, &payload);
            }
            if self.ended.is_some_and(|e| n > e) && after_the_end(&payload) {
                return Some(
                    skips
                        .take_back(SkipReason::Duplicate, offset)
                        .unwrap_or(offset),
                );
            }
        }
        if let Start::Collecting(first) = &mut self.start {
            first.push((num.unwrap_or(0), crc32fast::hash(&payload)));
            if first.len() >= START_RECORDS {
                self.start = Start::Known(std::mem::take(first));
            }
        }
        // An exit record is short: longer records are not looked at.
        if payload.len() <= 96 && is_exit(&payload) {
            self.ended = self.ended.max(num);
        }
        skips.flush(emit);
        emit(Frame::Record { offset, payload });
        None
    }

    /// Remember record `n` by its bytes ([`Scanner::samples`]), a whole one only
    /// (garbage under a good checksum takes no number).
    #[cold]
    #[inline(never)]
    fn sample(&mut self, n: u64, payload: &[u8]) {
        if !resync::whole_record(payload) {
            return;
        }
        let i = self.samples.partition_point(|&(m, _)| m < n);
        if self.samples.get(i).is_none_or(|&(m, _)| m != n) {
            self.samples.insert(i, (n, crc32fast::hash(payload)));
        }
    }

    /// Whether record `n`, read before, was read with other bytes than
    /// `payload`'s (as far as the samples and the file's first records tell).
    #[cold]
    #[inline(never)]
    fn read_otherwise(&self, n: u64, payload: &[u8]) -> bool {
        let first = match &self.start {
            Start::Collecting(f) | Start::Known(f) => f.as_slice(),
            Start::Unknown => &[],
        };
        let known = first
            .iter()
            .find(|&&(m, _)| m == n)
            .map(|&(_, c)| c)
            .or_else(|| {
                let i = self.samples.partition_point(|&(m, _)| m < n);
                self.samples
                    .get(i)
                    .filter(|&&(m, _)| m == n)
                    .map(|&(_, c)| c)
            });
        known.is_some_and(|c| c != crc32fast::hash(payload) && resync::whole_record(payload))
    }

    /// What the W&B file header ending at `p` (the chunk found there after
    /// damage; see [`appended_at`]) begins: the records after it are compared
    /// with the file's first ones. Records of the same numbers and bytes are a
    /// copy of its start; a number it had with other bytes is another file's.
    fn joined(&self, data: &[u8], p: usize, eof: bool) -> Joined {
        let first = match &self.start {
            Start::Unknown => return Joined::Another { guessed: true },
            Start::Collecting(f) | Start::Known(f) => f,
        };
        let mut at = p;
        for _ in 0..START_RECORDS {
            let Some(h) = data.get(at..at + CHUNK_HEADER_LEN) else {
                return if eof { Joined::Copy } else { Joined::Wait };
            };
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let Some(payload) = data.get(at + CHUNK_HEADER_LEN..at + CHUNK_HEADER_LEN + len) else {
                return if eof { Joined::Copy } else { Joined::Wait };
            };
            let stored = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let mut crc = crc32fast::Hasher::new();
            crc.update(&h[6..7]);
            crc.update(payload);
            if h[6] != FULL || crc.finalize() != stored {
                // Only whole records in a row are compared.
                break;
            }
            let Some(n) = resync::record_num(payload) else {
                break;
            };
            if let Some(&(_, c)) = first.iter().find(|(m, _)| *m == n) {
                if c != crc32fast::hash(payload) {
                    return Joined::Another { guessed: false };
                }
            }
            at += CHUNK_HEADER_LEN + len;
        }
        Joined::Copy
    }
}
