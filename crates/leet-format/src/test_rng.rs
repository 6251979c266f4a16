//! Helpers of the property tests: a small deterministic generator (xorshift) and
//! a protobuf varint writer, for bytes prost would not write.

pub struct Rng(pub u64);

impl Rng {
    #[allow(
        clippy::should_implement_trait,
        reason = "a generator that never ends, not an Iterator"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform enough in [0, n) for tests (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Append `v` as a protobuf varint.
pub fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
