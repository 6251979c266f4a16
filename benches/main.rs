//! Criterion benchmarks: `cargo bench` (one target, modules per area).
use criterion::{criterion_group, criterion_main};

#[path = "main/decode.rs"]
mod decode;

criterion_group!(benches, decode::benches);
criterion_main!(benches);
