//! The fold of decoded batches into the run model: the serial part of a load (the
//! decode workers' batches, cut as a first load's 2 MiB ranges are, folded in file
//! order on the thread that owns the run).

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use leet::decode::decoder::Decoder;
use leet::decode::event::Events;
use leet::decode::leveldb::{scan, Frame};
use leet::decode::synth::{file_bytes, SynthSpec};
use leet::store::Run;

/// The batches of `steps` rows of 10 metrics (no summaries, a stats record every
/// 100 rows), cut as a first load's 2 MiB ranges are.
fn batches(steps: u64) -> Vec<Events> {
    let data = file_bytes(&SynthSpec {
        steps,
        metrics: 10,
        summaries: false,
        stats_every: 100,
        ..SynthSpec::default()
    });
    let mut d = Decoder::new();
    let mut out = Vec::new();
    let mut from = 0;
    scan(&data, 0, |f| {
        if let Frame::Record { offset, payload } = f {
            d.record(offset, &payload);
            if offset - from >= 2 << 20 {
                out.push(d.take());
                from = offset;
            }
        }
    })
    .expect("header");
    out.push(d.take());
    out
}

pub fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("fold");
    g.sample_size(10);
    for steps in [100_000u64, 1_000_000] {
        let evs = batches(steps);
        g.throughput(Throughput::Elements(steps * 10));
        g.bench_with_input(BenchmarkId::new("rows", steps), &evs, |b, evs| {
            b.iter_batched(
                Run::new,
                |mut run| {
                    for ev in evs {
                        run.fold(black_box(ev));
                    }
                    run.history_rows
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}
