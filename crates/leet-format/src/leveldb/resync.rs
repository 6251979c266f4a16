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

/// The record numbers seen, as sorted, disjoint ranges. A file read in order
/// numbers its records increasingly (with gaps where the writer left records out):
/// one range, extended in place. Damage starts a new range, so a part of the file
/// copied from later and read first does not cover the records between.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Nums {
    spans: Vec<(u64, u64)>,
    /// The first range began after damage.
    opened_broken: bool,
}

impl Nums {
    /// Add `n`, read after damage (`broken`) or right after the last record; false
    /// when it was seen already (a record read twice).
    #[inline(always)]
    pub(super) fn insert(&mut self, n: u64, broken: bool) -> bool {
        // The common case, a file read in order: the last range grows.
        if let Some(last) = self.spans.last_mut() {
            if n > last.1 && !broken {
                last.1 = n;
                return true;
            }
        }
        self.insert_rare(n, broken)
    }

    #[cold]
    #[inline(never)]
    fn insert_rare(&mut self, n: u64, broken: bool) -> bool {
        match self.spans.last_mut() {
            Some(last) if n > last.1 => {
                if broken {
                    self.spans.push((n, n));
                } else {
                    last.1 = n;
                }
                return true;
            }
            None => {
                self.spans.push((n, n));
                self.opened_broken = broken;
                return true;
            }
            Some(_) => {}
        }
        // A number lower than the highest seen: records from earlier in the run.
        let i = self.spans.partition_point(|&(_, hi)| hi < n);
        if self.spans.get(i).is_some_and(|&(lo, _)| lo <= n) {
            return false;
        }
        // Right after the range below (a moved part of the file read in order):
        // that range grows, and meets the one above when n closes the gap.
        if let Some(below) = i.checked_sub(1).and_then(|b| self.spans.get_mut(b)) {
            if below.1 + 1 == n {
                below.1 = n;
                if self.spans.get(i).is_some_and(|&(lo, _)| lo == n + 1) {
                    let above = self.spans.remove(i);
                    self.spans[i - 1].1 = above.1;
                }
                return true;
            }
        }
        self.spans.insert(i, (n, n));
        true
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
        if !self.opened_broken {
            if let (Some(last), Some((_, first_hi))) = (merged.last_mut(), mine.next()) {
                last.1 = first_hi;
            }
        }
        merged.extend(mine);
        self.spans = merged;
        self.opened_broken = earlier.opened_broken;
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
            assert!(s.insert(n, false), "{n}");
        }
        // Gaps in order are one range; after damage a new one starts.
        assert_eq!(s.spans, [(1, 7)]);
        assert!(s.insert(20, true));
        assert!(s.insert(21, false));
        assert!(s.insert(10, true));
        for n in [1, 4, 7, 10, 20, 21] {
            assert!(!s.insert(n, true), "{n}");
        }
        assert_eq!(s.spans, [(1, 7), (10, 10), (20, 21)]);
        let mut later = Nums::default();
        later.insert(30, false);
        later.insert(31, false);
        let mut after_damage = later.clone();
        assert!(later.follow(&s));
        assert_eq!(later.spans, [(1, 7), (10, 10), (20, 31)]);
        after_damage.opened_broken = true;
        assert!(after_damage.follow(&s));
        assert_eq!(after_damage.spans, [(1, 7), (10, 10), (20, 21), (30, 31)]);
        let mut overlapping = Nums::default();
        overlapping.insert(21, false);
        assert!(!overlapping.follow(&s));
    }

    #[test]
    fn a_moved_part_read_in_order_is_one_range() {
        let mut s = Nums::default();
        for n in 1..=10 {
            assert!(s.insert(n, false));
        }
        assert!(s.insert(21, true));
        assert!(s.insert(22, false));
        // 11..=20 come after 21..=22 (a block moved later): each is new, and they
        // join the ranges on either side.
        for n in 11..=20 {
            assert!(s.insert(n, n == 11), "{n}");
        }
        assert_eq!(s.spans, [(1, 22)]);
        assert!(!s.insert(15, true));
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
