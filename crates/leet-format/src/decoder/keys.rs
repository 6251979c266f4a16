//! Small helpers of the decoder's per-item work: the positional key caches, key
//! comparison, `null` detection, key paths.

use crate::event::MAX_DEPTH;
use crate::wire::Item;

/// A record's keys by position, and the short ones also by their bytes: rows
/// written in a fixed order find a key by one comparison at its position; rows
/// whose keys come in a new order each time (as wandb-core writes history and
/// summary records) find it in a small direct-mapped table by its [`Sketch`]. Every
/// entry was made from its key in this batch, so any match gives the answer the
/// batch's tables give.
#[derive(Debug, Clone)]
pub(super) struct KeyCache<T> {
    by_pos: Vec<(Vec<u8>, T)>,
    /// [`TABLE`] slots (allocated with the first entry).
    table: Vec<Option<(Sketch, T)>>,
}

impl<T> Default for KeyCache<T> {
    fn default() -> Self {
        Self {
            by_pos: Vec::new(),
            table: Vec::new(),
        }
    }
}

/// Slots of a [`KeyCache`]'s table.
const TABLE: usize = 256;

/// A key of 1 to 16 bytes as its length and two words that hold every one of its
/// bytes (the bytes [`same`] compares): equal sketches are equal keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sketch {
    len: usize,
    a: u64,
    b: u64,
}

impl Sketch {
    #[inline(always)]
    pub(super) fn of(key: &[u8]) -> Option<Self> {
        let n = key.len();
        let (a, b) = match n {
            1..=3 => (
                u64::from(key[0]) | u64::from(key[n / 2]) << 8 | u64::from(key[n - 1]) << 16,
                0,
            ),
            4..=7 => (
                u64::from(u32::from_le_bytes(*key.first_chunk::<4>()?)),
                u64::from(u32::from_le_bytes(*key.last_chunk::<4>()?)),
            ),
            8..=16 => (
                u64::from_le_bytes(*key.first_chunk::<8>()?),
                u64::from_le_bytes(*key.last_chunk::<8>()?),
            ),
            _ => return None,
        };
        Some(Self { len: n, a, b })
    }

    #[inline(always)]
    fn slot(&self) -> usize {
        let h =
            (self.a ^ self.b.rotate_left(29) ^ self.len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 56) as usize % TABLE
    }
}

impl<T: Copy> KeyCache<T> {
    /// What `key` at position `pos` maps to: the entry at `pos`, else the table's
    /// entry for the key, else (in a cache of at most [`SEARCHED`] keys) any entry
    /// with the same key; the cache is left as it is.
    #[inline(always)]
    pub(super) fn get(&self, pos: usize, key: &[u8]) -> Option<T> {
        if let Some(s) = Sketch::of(key) {
            if let Some(Some((t, v))) = self.table.get(s.slot()) {
                if *t == s {
                    return Some(*v);
                }
            }
        }
        if let Some((k, v)) = self.by_pos.get(pos) {
            if same(k, key) {
                return Some(*v);
            }
        }
        self.search(key)
    }

    #[inline(never)]
    fn search(&self, key: &[u8]) -> Option<T> {
        if self.by_pos.len() > SEARCHED {
            return None;
        }
        self.by_pos.iter().find(|(k, _)| same(k, key)).map(|e| e.1)
    }

    /// Cache `key` at position `pos` (in place: the entry's buffer is reused; the
    /// first 256 positions) and in the table.
    pub(super) fn remember(&mut self, pos: usize, key: &[u8], v: T) {
        if let Some(e) = self.by_pos.get_mut(pos) {
            e.0.clear();
            e.0.extend_from_slice(key);
            e.1 = v;
        } else if pos == self.by_pos.len() && pos < 256 {
            self.by_pos.push((key.to_vec(), v));
        }
        if let Some(s) = Sketch::of(key) {
            if self.table.is_empty() {
                self.table.resize(TABLE, None);
            }
            self.table[s.slot()] = Some((s, v));
        }
    }

    /// Forget every entry (a new batch has new ids).
    pub(super) fn clear(&mut self) {
        self.by_pos.clear();
        self.table.fill(None);
    }
}

/// Most keys a record's cache is searched through when the key is neither at its
/// position nor in the table (rows whose keys come in a new order each time, as
/// wandb-core writes them, have a dozen or so).
const SEARCHED: usize = 32;

/// Short keys are compared as two overlapping words (the first and the last 4 or 8
/// bytes cover them all), without a loop or a call.
#[inline(always)]
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        8..=16 => {
            a.first_chunk::<8>() == b.first_chunk::<8>()
                && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

/// JSON text `null`, blanks around it allowed (as `str::trim` strips them).
#[inline]
pub(super) fn is_null_json(j: &str) -> bool {
    match j.as_bytes() {
        b"null" => true,
        [first, .., last] if first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() => false,
        _ => j.trim() == "null",
    }
}

pub(super) fn as_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The key path kept for an item: at most [`MAX_DEPTH`] elements, deeper ones joined
/// with `.` into the last.
#[must_use]
pub fn capped_path(item: &Item<'_>) -> Vec<String> {
    let mut path: Vec<String> = item.path().take(MAX_DEPTH - 1).map(str::to_owned).collect();
    let rest: Vec<&str> = item.path().skip(MAX_DEPTH - 1).collect();
    if !rest.is_empty() {
        path.push(rest.join("."));
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_compares_every_byte_of_every_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same(&a, &b), "{n} at {i}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!same(&a, &longer), "{n} vs {}", n + 1);
        }
    }

    #[test]
    fn a_key_is_found_at_its_position_in_the_table_or_anywhere_in_a_small_cache() {
        let mut cache: KeyCache<u32> = KeyCache::default();
        for (i, k) in ["_step", "loss", "acc", "lr"].iter().enumerate() {
            cache.remember(i, k.as_bytes(), i as u32);
        }
        assert_eq!(cache.get(1, b"loss"), Some(1));
        // Another order: found elsewhere, and the cache is not changed.
        assert_eq!(cache.get(0, b"lr"), Some(3));
        assert_eq!(cache.get(9, b"acc"), Some(2));
        assert_eq!(cache.get(0, b"new"), None);
        assert_eq!(cache.by_pos[0].0, b"_step");
        // A wide cache finds a key elsewhere only through its table.
        for i in 4..=SEARCHED {
            cache.remember(i, format!("k{i}").as_bytes(), i as u32);
        }
        assert_eq!(cache.get(3, b"lr"), Some(3));
        assert_eq!(cache.get(0, b"k7"), Some(7));
        cache.clear();
        assert_eq!(cache.get(3, b"lr"), None);
        assert_eq!(cache.get(0, b"k7"), None);
    }

    /// Keys of every length to 40 with every byte changed: the sketch tells them
    /// apart exactly as [`same`] does, and a cache never answers for another key
    /// (however the table's slots collide).
    #[test]
    fn sketches_are_equal_exactly_for_equal_keys() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let sa = Sketch::of(&a);
            assert_eq!(sa.is_some(), (1..=16).contains(&n), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                if let (Some(x), Some(y)) = (sa, Sketch::of(&b)) {
                    assert_ne!(x, y, "{n} at {i}");
                }
            }
        }
        let keys: Vec<String> = (0..3000).map(|i| format!("m{i}/x")).collect();
        let mut cache: KeyCache<u32> = KeyCache::default();
        for (i, k) in keys.iter().enumerate() {
            cache.remember(i % 40, k.as_bytes(), i as u32);
        }
        for (i, k) in keys.iter().enumerate() {
            if let Some(v) = cache.get(999, k.as_bytes()) {
                assert_eq!(keys[v as usize], *k, "{i}");
            }
        }
    }
}
