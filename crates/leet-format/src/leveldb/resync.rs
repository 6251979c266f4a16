//! Finding the framing again after damage, and the record numbers that tell a
//! record read twice.
//!
//! Bytes cut out of a file or put into it (not a multiple of 32 KiB) move every
//! chunk after them off the 32 KiB grid, so the next block start is in the middle
//! of a chunk and no record after the damage would be read from there. The reader
//! instead tries every byte offset for a chunk header whose checksum holds.

use super::{BLOCK_SIZE, CHUNK_HEADER_LEN, FIRST, FULL};

/// Where [`find_chunk`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Search {
    /// A FULL or FIRST chunk whose checksum holds starts here.
    At(usize),
    /// What starts here cannot be decided before more bytes arrive; nothing
    /// before it is a chunk.
    Stall(usize),
    /// No chunk starts in the input (it is complete).
    Nothing,
}

/// The first offset at or after `from` where a FULL or FIRST chunk with a valid
/// checksum starts. A record may only begin with one of those, so a MIDDLE/LAST
/// found first would be an orphan anyway: skipping it here keeps a record from
/// being glued together from the chunks of two. `eof`: the input is complete, so a
/// header whose payload would run past its end is not a chunk.
pub(super) fn find_chunk(
    data: &[u8],
    from: usize,
    eof: bool,
    crc_of: impl Fn(&[u8]) -> u32,
) -> Search {
    let end = data.len();
    let mut p = from;
    // The first header whose payload runs past the input: undecided until more
    // bytes come, unless a whole chunk whose checksum holds starts after it. Then
    // that header was damage (a real chunk's payload holding another whole chunk
    // with a good checksum is not a case to wait for), and the records after the
    // damage are read now: a finished file damaged near its end is not held open
    // forever, waiting for bytes that never come. The wait is at most one chunk's
    // length from the input's end, so the search never goes back further.
    let mut undecided = None;
    while p + CHUNK_HEADER_LEN <= end {
        let h = &data[p..p + CHUNK_HEADER_LEN];
        if h[6] == FULL || h[6] == FIRST {
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            if len <= BLOCK_SIZE - CHUNK_HEADER_LEN {
                let e = p + CHUNK_HEADER_LEN + len;
                if e > end {
                    if !eof {
                        undecided.get_or_insert(p);
                    }
                } else if crc_of(&data[p + 6..e]) == u32::from_le_bytes([h[0], h[1], h[2], h[3]]) {
                    return Search::At(p);
                }
            }
        }
        p += 1;
    }
    if eof {
        Search::Nothing
    } else {
        Search::Stall(undecided.unwrap_or(p.max(from)))
    }
}

/// A record's number (`Record.num`, field 1, the first one wandb-core writes):
/// None when the payload does not start with it, or it is 0 (unset).
#[inline(always)]
pub(super) fn record_num(payload: &[u8]) -> Option<u64> {
    // Read once per record: the one- to three-byte numbers (any run up to two million
    // records) from one word, without a loop or a branch per byte.
    if let Some(&[0x08, b0, b1, b2]) = payload.first_chunk::<4>() {
        let w = u32::from_le_bytes([b0, b1, b2, 0]);
        // A clear high bit ends the varint.
        let stops = !w & 0x0080_8080;
        if stops != 0 {
            let v = w & (u32::MAX >> (31 - stops.trailing_zeros()));
            let n = (v & 0x7F) | ((v >> 1) & 0x3F80) | ((v >> 2) & 0x001F_C000);
            return (n > 0).then_some(u64::from(n));
        }
    }
    let n = match *payload {
        [0x08, ..] => record_num_long(&payload[1..])?,
        _ => return None,
    };
    (n > 0).then_some(n)
}

/// Whether `payload`, which starts with a record number, is laid out as a
/// `Record` is: the number, then whole length-delimited fields of other numbers
/// and nothing else, at most one of them the record's kind (the oneof). A record
/// assembled from its chunks always is. One glued together from the first chunk
/// of a record and the last of another (a block copied, moved or cut out on the
/// 32 KiB grid leaves every chunk's checksum whole) almost never is: the first
/// record's kind ends where the second's bytes go on, inside its items (field 1,
/// length-delimited, which a `Record` never has) or at another kind.
pub(super) fn whole_record(payload: &[u8]) -> bool {
    let Some((_, mut p)) = varint(payload, 1).filter(|_| payload.first() == Some(&0x08)) else {
        return false;
    };
    let mut kind = false;
    while p < payload.len() {
        let Some((tag, q)) = varint(payload, p) else {
            return false;
        };
        let field = tag >> 3;
        if tag & 7 != 2 || field < 2 {
            return false;
        }
        // `control` (16) and `uuid` (19) sit beside the kind, as do fields
        // above the oneof's (`_info` is 200).
        if field <= 27 && field != 16 && field != 19 {
            if kind {
                return false;
            }
            kind = true;
        }
        let Some((len, r)) = varint(payload, q) else {
            return false;
        };
        match usize::try_from(len).ok().and_then(|l| r.checked_add(l)) {
            Some(e) => p = e,
            None => return false,
        }
    }
    p == payload.len()
}

/// A varint at `p`: its value and the offset after it.
fn varint(b: &[u8], mut p: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(p)?;
        p += 1;
        v |= u64::from(x & 0x7F) << shift;
        if x < 0x80 {
            return Some((v, p));
        }
    }
    None
}

#[cold]
fn record_num_long(rest: &[u8]) -> Option<u64> {
    let mut n = 0u64;
    for (i, &b) in rest.iter().take(10).enumerate() {
        n |= u64::from(b & 0x7F) << (7 * i);
        if b < 0x80 {
            return Some(n);
        }
    }
    None
}

/// The record numbers seen, as sorted, disjoint ranges. The writer numbers its
/// records 1, 2, 3, … in file order, so a file read in order is one range,
/// extended in place. A number is "seen" only when it was read: a record read out
/// of order (two records swapped, a part of the file moved) opens a range of its
/// own and the numbers between stay unread, so the records that carry them are
/// still read when they come. Past [`MAX_SPANS`] ranges (a file whose numbers jump
/// at every record, which no writer makes) neighbouring ranges are joined, the
/// numbers between counted as seen: memory stays bounded, and such a file loses at
/// worst records of numbers it already skipped over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Nums {
    spans: Vec<(u64, u64)>,
}

/// Most ranges kept ([`Nums`]): 1 MiB.
const MAX_SPANS: usize = 1 << 16;

impl Nums {
    /// Add `n`; false when it was seen already (a record read twice).
    #[cfg(test)]
    fn insert(&mut self, n: u64) -> bool {
        // The common case, a file read in order: the last range grows.
        if let Some(last) = self.spans.last_mut() {
            if n == last.1.wrapping_add(1) {
                last.1 = n;
                return true;
            }
        }
        self.insert_rare(n)
    }

    /// [`Nums::insert`] of the number of the record `payload`, taken only when
    /// the record is laid out as one ([`whole_record`]) if it comes out of order: a
    /// record whose bytes are garbage under a good checksum must not mark the
    /// number it seems to start with as read (the intact record of that number, or
    /// every record below it, would be dropped as read twice). True: hand it on.
    #[inline(always)]
    pub(super) fn insert_read(&mut self, n: u64, payload: &[u8]) -> bool {
        if let Some(last) = self.spans.last_mut() {
            if n == last.1.wrapping_add(1) {
                last.1 = n;
                return true;
            }
        }
        !whole_record(payload) || self.insert_rare(n)
    }

    #[cold]
    #[inline(never)]
    fn insert_rare(&mut self, n: u64) -> bool {
        let i = self.spans.partition_point(|&(_, hi)| hi < n);
        if self.spans.get(i).is_some_and(|&(lo, _)| lo <= n) {
            return false;
        }
        let joins_below = i
            .checked_sub(1)
            .is_some_and(|b| self.spans[b].1.checked_add(1) == Some(n));
        let joins_above = self
            .spans
            .get(i)
            .is_some_and(|&(lo, _)| n.checked_add(1) == Some(lo));
        match (joins_below, joins_above) {
            (true, true) => {
                let above = self.spans.remove(i);
                self.spans[i - 1].1 = above.1;
            }
            (true, false) => self.spans[i - 1].1 = n,
            (false, true) => self.spans[i].0 = n,
            (false, false) => {
                self.spans.insert(i, (n, n));
                if self.spans.len() > MAX_SPANS {
                    self.coarsen();
                }
            }
        }
        true
    }

    /// Halve the ranges: each pair joined, the numbers between them counted seen.
    #[cold]
    fn coarsen(&mut self) {
        let joined: Vec<(u64, u64)> = self
            .spans
            .chunks(2)
            .map(|p| (p[0].0, p[p.len() - 1].1))
            .collect();
        self.spans = joined;
    }

    /// `earlier`'s numbers then these, as one reading of both parts in a row
    /// would have them, when every number here is above `earlier`'s (then a
    /// reading of this part alone dropped exactly what one after `earlier`
    /// would); false otherwise, and nothing changes.
    pub(super) fn follow(&mut self, earlier: &Nums) -> bool {
        let Some(&(_, hi)) = earlier.spans.last() else {
            return true;
        };
        let Some(&(lo, _)) = self.spans.first() else {
            self.clone_from(earlier);
            return true;
        };
        if lo <= hi {
            return false;
        }
        let mut merged = earlier.spans.clone();
        let mut mine = self.spans.iter().copied();
        if lo == hi + 1 {
            if let (Some(last), Some((_, first_hi))) = (merged.last_mut(), mine.next()) {
                last.1 = first_hi;
            }
        }
        merged.extend(mine);
        self.spans = merged;
        while self.spans.len() > MAX_SPANS {
            self.coarsen();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_any_order_are_each_new_once() {
        let mut s = Nums::default();
        for n in [1, 2, 3, 7] {
            assert!(s.insert(n), "{n}");
        }
        // Only numbers read are seen: 4 to 6 are not.
        assert_eq!(s.spans, [(1, 3), (7, 7)]);
        assert!(s.insert(20));
        assert!(s.insert(21));
        assert!(s.insert(10));
        for n in [1, 3, 7, 10, 20, 21] {
            assert!(!s.insert(n), "{n}");
        }
        assert_eq!(s.spans, [(1, 3), (7, 7), (10, 10), (20, 21)]);
        let mut later = Nums::default();
        later.insert(22);
        later.insert(23);
        assert!(later.follow(&s));
        assert_eq!(later.spans, [(1, 3), (7, 7), (10, 10), (20, 23)]);
        let mut apart = Nums::default();
        apart.insert(30);
        assert!(apart.follow(&s));
        assert_eq!(apart.spans, [(1, 3), (7, 7), (10, 10), (20, 21), (30, 30)]);
        let mut overlapping = Nums::default();
        overlapping.insert(21);
        assert!(!overlapping.follow(&s));
    }

    #[test]
    fn records_swapped_or_counting_down_are_each_read() {
        let mut s = Nums::default();
        for n in [1, 2, 3, 5, 4, 6] {
            assert!(s.insert(n), "{n}");
        }
        assert_eq!(s.spans, [(1, 6)]);
        let mut down = Nums::default();
        for n in (1..=10).rev() {
            assert!(down.insert(n), "{n}");
        }
        assert_eq!(down.spans, [(1, 10)]);
        // A number far ahead (a record whose number was damaged) covers nothing
        // below it.
        let mut far = Nums::default();
        for n in [1, 2, 150, 3, 4, 5] {
            assert!(far.insert(n), "{n}");
        }
        assert_eq!(far.spans, [(1, 5), (150, 150)]);
    }

    #[test]
    fn numbers_jumping_at_every_record_keep_a_bounded_number_of_ranges() {
        let mut s = Nums::default();
        for k in 0..(MAX_SPANS as u64 * 3) {
            assert!(s.insert(2 * k + 1), "{k}");
        }
        assert!(s.spans.len() <= MAX_SPANS);
        // The last number read is still seen, and one never reached is not.
        assert!(!s.insert(2 * (MAX_SPANS as u64 * 3 - 1) + 1));
        assert!(s.insert(u64::MAX));
    }

    #[test]
    fn a_moved_part_read_in_order_is_one_range() {
        let mut s = Nums::default();
        for n in 1..=10 {
            assert!(s.insert(n));
        }
        assert!(s.insert(21));
        assert!(s.insert(22));
        // 11..=20 come after 21..=22 (a block moved later): each is new, and they
        // join the ranges on either side.
        for n in 11..=20 {
            assert!(s.insert(n), "{n}");
        }
        assert_eq!(s.spans, [(1, 22)]);
        assert!(!s.insert(15));
    }

    /// A `Record` payload: its number, then length-delimited fields.
    fn record(num: u8, fields: &[(u8, &[u8])]) -> Vec<u8> {
        let mut b = vec![0x08, num];
        for (f, body) in fields {
            let tag = u16::from(*f) << 3 | 2;
            if tag < 0x80 {
                b.push(u8::try_from(tag).unwrap());
            } else {
                b.extend([
                    u8::try_from(tag & 0x7F).unwrap() | 0x80,
                    u8::try_from(tag >> 7).unwrap(),
                ]);
            }
            b.push(u8::try_from(body.len()).unwrap());
            b.extend_from_slice(body);
        }
        b
    }

    #[test]
    fn a_record_glued_from_two_is_no_whole_record() {
        // history (2) with two items, then uuid (19) and `_info` (200, a
        // two-byte tag) — written by hand, as wandb-core lays them out.
        let item = [0x0A, 0x03, 0x12, 0x01, b'a'];
        let history: Vec<u8> = item.iter().chain(&item).copied().collect();
        let whole = record(7, &[(2, &history), (19, b"u")]);
        assert!(whole_record(&whole));
        let mut info = whole.clone();
        info.extend_from_slice(&[0xC2, 0x0C, 0x00]);
        assert!(whole_record(&info));
        assert!(whole_record(&record(1, &[])));
        // The start of one and the end of another: the history field runs past
        // the end, stops inside an item (field 1, length-delimited), or a second
        // kind follows.
        let other = record(9, &[(3, &history)]);
        let glued = |a: usize, b: usize| [&whole[..a], &other[b..]].concat();
        assert!(!whole_record(&glued(6, 9)));
        // (`whole[..14]` ends with its history field; `other[9..]` is its last
        // item, `other[11..]` that item's key field.)
        assert!(!whole_record(&glued(14, 9)));
        assert!(!whole_record(&glued(14, 11)));
        assert!(!whole_record(&glued(whole.len(), 2)));
        assert!(!whole_record(&whole[..whole.len() - 1]));
        // Not a record at all.
        assert!(!whole_record(&[0x12, 0x00]));
        assert!(!whole_record(&[0x08]));
        assert!(!whole_record(&[0x08, 0x01, 0x09, 0, 0, 0, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn a_record_number_is_read_only_from_the_first_field() {
        assert_eq!(record_num(&[0x08, 0x96, 0x01, 0x12]), Some(150));
        assert_eq!(record_num(&[0x08, 0x00]), None);
        assert_eq!(record_num(&[0x12, 0x01]), None);
        assert_eq!(record_num(&[0x08, 0x80]), None);
        // Every length of varint, against a plain reading of it.
        for n in [
            1u64,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            1 << 35,
            u64::MAX,
        ] {
            let mut b = vec![0x08];
            let mut v = n;
            while v >= 0x80 {
                b.push(u8::try_from(v & 0x7F).unwrap() | 0x80);
                v >>= 7;
            }
            b.push(u8::try_from(v).unwrap());
            assert_eq!(record_num(&b), Some(n), "{n}");
            b.push(0x12);
            assert_eq!(record_num(&b), Some(n), "{n} followed by a field");
        }
        // The word reading agrees with the byte-by-byte one on every first byte.
        for b0 in 0..=255u8 {
            for b1 in [0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF] {
                for b2 in [0x00, 0x01, 0x7F, 0x80, 0xFF] {
                    let p = [0x08, b0, b1, b2, 0x01];
                    let plain = record_num_long(&p[1..]).filter(|&n| n > 0);
                    assert_eq!(record_num(&p), plain, "{p:x?}");
                }
            }
        }
        // Zero in a longer encoding is still unset; a varint cut short is none.
        assert_eq!(record_num(&[0x08, 0x80, 0x80, 0x00]), None);
        assert_eq!(record_num(&[0x08, 0x80, 0x80]), None);
    }
}
