//! Frame pacing while a fast run is followed (160×45, a run of 50 metrics with
//! 10k steps): what one append costs when it is drawn at once (fold the step,
//! draw the frame), what a frame costs when nothing changed since the last (every
//! chart's view from the memo), and a burst of appends that arrive within one
//! frame folded and then drawn once, as the loop draws them.

use criterion::{criterion_group, BatchSize, Criterion};
use leet::msg::{Msg, RunBatch};
use leet::ui::render;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const METRICS: usize = 50;
const STEPS: u32 = 10_000;

/// An App following a run of [`METRICS`] metrics with `steps` steps so far.
fn follow_app(steps: u32) -> App {
    let mut app = App::new(Options {
        color: true,
        ..Options::default()
    });
    app.update(Msg::Resize(160, 45));
    for i in 0..steps {
        append(&mut app, i);
    }
    app.shown.run.info.display_name = "pacing-run".into();
    app.update(Msg::Run(RunBatch::default()));
    app
}

/// Step `i` of every metric, as a reader's batch folds it.
fn append(app: &mut App, i: u32) {
    let x = f64::from(i);
    for k in 0..METRICS {
        let y = (x / 700.0 + k as f64).sin() + x / 1e5;
        app.shown.run.metrics.push(&format!("train/m{k:02}"), x, y);
    }
}

fn pacing(c: &mut Criterion) {
    let mut app = follow_app(STEPS);
    let mut term = Terminal::new(TestBackend::new(160, 45)).unwrap_or_else(|e| panic!("{e}"));
    term.draw(|f| render::render(f, &app))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("pacing");
    // Nothing changed since the last frame: what deciding so costs (every view
    // from the memo, the buffer diffed to nothing).
    g.bench_function("frame_nothing_changed_160x45_50x10k", |b| {
        b.iter(|| {
            term.draw(|f| render::render(f, &app))
                .unwrap_or_else(|e| panic!("{e}"));
        });
    });
    // One step appended and drawn at once: the cost of a frame per append.
    let mut next = STEPS;
    g.bench_function("append_then_frame_160x45_50x10k", |b| {
        b.iter(|| {
            append(&mut app, next);
            next += 1;
            app.update(Msg::Run(RunBatch::default()));
            term.draw(|f| render::render(f, &app))
                .unwrap_or_else(|e| panic!("{e}"));
        });
    });
    // Ten appends that came within one frame: folded, then one frame.
    g.bench_function("ten_appends_one_frame_160x45_50x10k", |b| {
        b.iter_batched(
            || (),
            |()| {
                for _ in 0..10 {
                    append(&mut app, next);
                    next += 1;
                    app.update(Msg::Run(RunBatch::default()));
                }
                term.draw(|f| render::render(f, &app))
                    .unwrap_or_else(|e| panic!("{e}"));
            },
            BatchSize::SmallInput,
        );
    });
    g.finish();
}

criterion_group!(benches, pacing);
