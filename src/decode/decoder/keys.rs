//! Small helpers of the decoder's per-item work: the positional key caches, key
//! comparison, `null` detection, key paths.

use crate::decode::event::MAX_DEPTH;
use crate::decode::wire::Item;

/// Cache `key` at position `pos` of a record's keys (in place: the entry's buffer is
/// reused), for the first 256 positions.
#[inline]
pub(super) fn remember<T>(cache: &mut Vec<(Vec<u8>, T)>, pos: usize, key: &[u8], v: T) {
    if let Some(e) = cache.get_mut(pos) {
        e.0.clear();
        e.0.extend_from_slice(key);
        e.1 = v;
    } else if pos == cache.len() && pos < 256 {
        cache.push((key.to_vec(), v));
    }
}

/// Most keys a record's cache is searched through when the key is not at its
/// position (rows whose keys come in a new order each time, as wandb-core writes
/// them, have a dozen or so).
const SEARCHED: usize = 32;

/// What `key` maps to in a record's positional cache: the entry at `pos`, else (in
/// a cache of at most [`SEARCHED`] keys) any entry with the same key. Every entry
/// was made from its key in this batch, so any match gives the answer the batch's
/// tables give; the cache is left as it is.
#[inline]
pub(super) fn cached<T: Copy>(cache: &[(Vec<u8>, T)], pos: usize, key: &[u8]) -> Option<T> {
    match cache.get(pos) {
        Some((k, v)) if same(k, key) => Some(*v),
        _ if cache.len() <= SEARCHED => cache.iter().find(|(k, _)| same(k, key)).map(|e| e.1),
        _ => None,
    }
}

/// Short keys are compared as two overlapping words (the first and the last 4 or 8
/// bytes cover them all), without a loop or a call.
#[inline]
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
    fn a_key_is_found_at_its_position_or_anywhere_in_a_small_cache() {
        let mut cache: Vec<(Vec<u8>, u32)> = Vec::new();
        for (i, k) in ["_step", "loss", "acc", "lr"].iter().enumerate() {
            remember(&mut cache, i, k.as_bytes(), i as u32);
        }
        assert_eq!(cached(&cache, 1, b"loss"), Some(1));
        // Another order: found elsewhere, and the cache is not changed.
        assert_eq!(cached(&cache, 0, b"lr"), Some(3));
        assert_eq!(cached(&cache, 9, b"acc"), Some(2));
        assert_eq!(cached(&cache, 0, b"new"), None);
        assert_eq!(cache[0].0, b"_step");
        // A wide cache is only looked up at the position.
        for i in 4..=SEARCHED {
            remember(&mut cache, i, format!("k{i}").as_bytes(), i as u32);
        }
        assert_eq!(cached(&cache, 0, b"lr"), None);
        assert_eq!(cached(&cache, 3, b"lr"), Some(3));
    }
}
