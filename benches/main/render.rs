//! One full frame (200×60: 12 metric charts, both sidebars) of a run whose series
//! each had 1M points pushed through the real store.

use criterion::{criterion_group, Criterion};
use leet::msg::{Msg, RunBatch};
use leet::ui::render;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// An App showing 12 metrics of `n` points each, plus system metrics.
#[must_use]
pub fn big_app(n: u32) -> App {
    let mut app = App::new(Options {
        color: true,
        ..Options::default()
    });
    app.update(Msg::Resize(200, 60));
    for k in 0..12 {
        let key = format!("train/metric_{k:02}");
        for i in 0..n {
            let x = f64::from(i);
            let y = (x / 5000.0 + f64::from(k)).sin() * (1.0 + x / 1e6)
                + if i % 100_003 == 0 { f64::NAN } else { 0.0 };
            app.shown.run.metrics.push(&key, x, y);
        }
    }
    for (key, scale) in [
        ("gpu.0.gpu", 1.0),
        ("gpu.1.gpu", 1.0),
        ("cpu", 1.0),
        ("network.sent", 1e6),
        ("network.recv", 1e6),
        ("proc.memory.rssMB", 1.0),
    ] {
        for i in 0..100_000u32 {
            let t = 1.8e9 + f64::from(i);
            app.shown
                .run
                .system
                .push(key, t, f64::from(i) * scale % 100.0 + 1.0);
        }
    }
    app.shown.run.info.display_name = "bench-run".into();
    app.shown.run.info.run_id = "bench001".into();
    app.shown.run.info.project = "leet-bench".into();
    app.update(Msg::Run(RunBatch::default()));
    app.update(Msg::Tick(1.8e9 + 100_000.0));
    app
}

fn full_frame(c: &mut Criterion) {
    let app = big_app(1_000_000);
    assert_eq!(app.charts.shown.len(), 12);
    assert_eq!(
        app.charts.grid.per_page(),
        12,
        "12 charts on the first page"
    );
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("render");
    // Unchanged charts: their views come from the charts' memo.
    g.bench_function("full_frame_200x60_12x1M", |b| {
        b.iter(|| {
            term.draw(|f| render::render(f, &app))
                .unwrap_or_else(|e| panic!("{e}"));
        });
    });
    // Every chart computed afresh, as when each series changed since the last frame.
    g.bench_function("full_frame_200x60_12x1M_uncached", |b| {
        b.iter(|| {
            app.charts.forget_views();
            term.draw(|f| render::render(f, &app))
                .unwrap_or_else(|e| panic!("{e}"));
        });
    });
    g.finish();
}

criterion_group!(benches, full_frame);
