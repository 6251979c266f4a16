//! The two tiers of the property tests. `cargo test` runs the fast tier: every test,
//! with its loops (every cut, every flip, millions of literals) at a size that runs
//! in seconds. `LEET_EXHAUSTIVE=1` runs them at full size (`.ci/run` does, optimised).
//! One module for the unit tests of this crate and the tests of the crates that use
//! it (through the `test-support` feature); std only.

/// Whether the exhaustive tier runs (`LEET_EXHAUSTIVE=1`).
pub fn exhaustive() -> bool {
    std::env::var_os("LEET_EXHAUSTIVE").is_some_and(|v| v == "1")
}

/// A loop's count: `full` in the exhaustive tier, else `fast`.
pub fn size(fast: usize, full: usize) -> usize {
    if exhaustive() {
        full
    } else {
        fast.min(full)
    }
}

/// Positions in `0..=len` (cuts, flips, offsets): every one in the exhaustive tier;
/// else the first and last 64 and every 97th between (a prime stride, so the positions
/// fall at every offset within records, headers and blocks over a long input).
pub fn positions(len: usize) -> Vec<usize> {
    if exhaustive() || len <= 256 {
        return (0..=len).collect();
    }
    let mut p: Vec<usize> = (0..64).chain((64..len - 64).step_by(97)).collect();
    p.extend(len - 64..=len);
    p
}
