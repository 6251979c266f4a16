//! Criterion benchmarks: `cargo bench`. One target; one module per area in `benches/main/`.
use criterion::{criterion_group, criterion_main};

mod main {
    pub mod decode;
    pub mod fold;
    pub mod pacing;
    pub mod render;
}

criterion_group!(decode, main::decode::benches);
criterion_group!(fold, main::fold::benches);
criterion_main!(decode, fold, main::render::benches, main::pacing::benches);
