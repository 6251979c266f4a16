//! Framing + CRC throughput and full decode into the run model, on a ~110 MB run
//! shaped like wandb-core's output (set `LEET_BENCH_FILE` to use a real file, e.g.
//! the `big` fixture made by `../shared/fixtures/make_fixtures.py`).

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use leet::decode::leveldb::{scan, Frame};
use leet::decode::synth::{file_bytes, SynthSpec};
use leet::store::Run;

fn bench_file() -> Vec<u8> {
    if let Ok(p) = std::env::var("LEET_BENCH_FILE") {
        if let Ok(b) = std::fs::read(&p) {
            return b;
        }
        eprintln!("LEET_BENCH_FILE={p} unreadable; using a synthetic run");
    }
    // 180k steps × 10 metrics with wandb-core's two summary records per step ≈ 110 MB.
    file_bytes(&SynthSpec {
        steps: 180_000,
        metrics: 10,
        ..SynthSpec::default()
    })
}

pub fn benches(c: &mut Criterion) {
    let data = bench_file();
    let path = std::env::temp_dir().join(format!("leet-bench-{}.wandb", std::process::id()));
    std::fs::write(&path, &data).expect("write bench file");
    let mut g = c.benchmark_group("decode");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("framing_crc", |b| {
        b.iter(|| {
            let mut n = 0u64;
            scan(black_box(&data), 0, |f| {
                if let Frame::Record { payload, .. } = f {
                    n += payload.len() as u64;
                }
            })
            .expect("header");
            n
        });
    });
    g.bench_function("full_model_one_core", |b| {
        b.iter(|| {
            let mut run = Run::new();
            scan(black_box(&data), 0, |f| match f {
                Frame::Record { offset, payload } => run.apply(offset, &payload),
                Frame::Skip(s) => run.skip(s),
            })
            .expect("header");
            run.counts.total
        });
    });
    g.bench_function("full_model_file_two_cores", |b| {
        b.iter(|| {
            let mut run = Run::new();
            leet::source::file::RunReader::open(&path)
                .expect("open")
                .read_all_parallel(&mut run)
                .expect("read");
            run.counts.total
        });
    });
    // What `leet inspect --summary` reads: every record checked, rows for their
    // steps and times only.
    g.bench_function("summary_only_file_two_cores", |b| {
        b.iter(|| {
            let mut run = Run::new();
            leet::source::file::RunReader::open(&path)
                .expect("open")
                .without_series()
                .read_all_parallel(&mut run)
                .expect("read");
            run.counts.total
        });
    });
    g.finish();
    let _ = std::fs::remove_file(&path);
    series_push(c);
}

/// One series fed 1M points: past its cap it compacts and then folds every point
/// into a min/max group (the fold's share of a big first load).
fn series_push(c: &mut Criterion) {
    const N: u64 = 1 << 20;
    let mut g = c.benchmark_group("series");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    g.bench_function("push_1M_capped", |b| {
        b.iter(|| {
            let mut s = leet::store::Series::new(16 * 1024);
            for i in 0..N {
                #[allow(clippy::cast_precision_loss)]
                let x = i as f64;
                s.push(black_box(x), black_box((x * 0.001).sin()));
            }
            s.stored()
        });
    });
    g.finish();
}
