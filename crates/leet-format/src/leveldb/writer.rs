//! The framing written back: tests, benchmarks and the demo generator make files
//! with it.

use super::{BLOCK_SIZE, CHUNK_HEADER_LEN, FILE_HEADER, FIRST, FULL, LAST, MIDDLE};

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
