//! Benchmarks: `cargo bench`. One target; one module per area in `benches/main/`.
use criterion::criterion_main;

mod main {
    pub mod render;
}

criterion_main!(main::render::benches);
