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
    while p + CHUNK_HEADER_LEN <= end {
        let h = &data[p..p + CHUNK_HEADER_LEN];
        if h[6] == FULL || h[6] == FIRST {
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            if len <= BLOCK_SIZE - CHUNK_HEADER_LEN {
                let e = p + CHUNK_HEADER_LEN + len;
                if e > end {
                    if !eof {
                        return Search::Stall(p);
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
        Search::Stall(p.max(from))
    }
}

/// A record's number (`Record.num`, field 1, the first one wandb-core writes):
/// None when the payload does not start with it, or it is 0 (unset).
pub(super) fn record_num(payload: &[u8]) -> Option<u64> {
    let rest = payload.strip_prefix(&[0x08])?;
    let mut n = 0u64;
    for (i, &b) in rest.iter().take(10).enumerate() {
        n |= u64::from(b & 0x7F) << (7 * i);
        if b < 0x80 {
            return (n > 0).then_some(n);
        }
    }
    None
}

/// The record numbers seen, as sorted, disjoint, non-adjacent inclusive ranges. A
/// file read in order numbers its records 1, 2, 3, …: one range, extended in
/// place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Nums {
    spans: Vec<(u64, u64)>,
}

impl Nums {
    /// Add `n`; false when it was there already (a record read twice).
    pub(super) fn insert(&mut self, n: u64) -> bool {
        match self.spans.last_mut() {
            Some(last) if last.1.checked_add(1) == Some(n) => {
                last.1 = n;
                return true;
            }
            Some(last) if n > last.1 => {
                self.spans.push((n, n));
                return true;
            }
            None => {
                self.spans.push((n, n));
                return true;
            }
            Some(_) => {}
        }
        // A number lower than the highest seen: records from earlier in the run.
        let i = self.spans.partition_point(|&(_, hi)| hi < n);
        if self.spans.get(i).is_some_and(|&(lo, _)| lo <= n) {
            return false;
        }
        let joins_prev = i > 0 && self.spans[i - 1].1 + 1 == n;
        let joins_next = self.spans.get(i).is_some_and(|&(lo, _)| n + 1 == lo);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.spans[i - 1].1 = self.spans[i].1;
                self.spans.remove(i);
            }
            (true, false) => self.spans[i - 1].1 = n,
            (false, true) => self.spans[i].0 = n,
            (false, false) => self.spans.insert(i, (n, n)),
        }
        true
    }

    /// Whether a number is in both.
    pub(super) fn meets(&self, other: &Nums) -> bool {
        other.spans.iter().any(|&(lo, hi)| {
            let i = self.spans.partition_point(|&(_, h)| h < lo);
            self.spans.get(i).is_some_and(|&(l, _)| l <= hi)
        })
    }

    /// Add every number of `other`.
    pub(super) fn extend(&mut self, other: &Nums) {
        let fits_after = match (self.spans.last(), other.spans.first()) {
            (Some(&(_, hi)), Some(&(lo, _))) => lo > hi,
            _ => true,
        };
        let merged: Vec<(u64, u64)> = if fits_after {
            // A later part of the file: its numbers follow (the usual case).
            let mut m = std::mem::take(&mut self.spans);
            m.extend_from_slice(&other.spans);
            m
        } else {
            let mut m = [self.spans.as_slice(), other.spans.as_slice()].concat();
            m.sort_unstable();
            m
        };
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(merged.len());
        for (lo, hi) in merged {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        self.spans = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_any_order_are_each_new_once() {
        let mut s = Nums::default();
        for n in [1, 2, 3, 7, 5, 6, 4, 10] {
            assert!(s.insert(n), "{n}");
        }
        for n in [1, 4, 5, 7, 10] {
            assert!(!s.insert(n), "{n}");
        }
        assert_eq!(s.spans, [(1, 7), (10, 10)]);
        let mut t = Nums::default();
        t.insert(8);
        t.insert(9);
        assert!(!s.meets(&t));
        s.extend(&t);
        assert_eq!(s.spans, [(1, 10)]);
        assert!(s.meets(&t));
    }

    #[test]
    fn a_record_number_is_read_only_from_the_first_field() {
        assert_eq!(record_num(&[0x08, 0x96, 0x01, 0x12]), Some(150));
        assert_eq!(record_num(&[0x08, 0x00]), None);
        assert_eq!(record_num(&[0x12, 0x01]), None);
        assert_eq!(record_num(&[0x08, 0x80]), None);
    }
}
