//! Criterion benchmarks: `cargo bench`. One target; one module per area in `benches/main/`.
use criterion::{criterion_group, criterion_main};

mod main {
    pub mod decode;
    pub mod pacing;
    pub mod render;
}

criterion_group!(decode, main::decode::benches);
criterion_main!(decode, main::render::benches, main::pacing::benches);
