//! Zooming picks among the same smoothed values: what a zoomed chart draws equals
//! the un-zoomed values at the same x, and the smoothing of every point there.

use super::*;
use crate::decode::synth::{self, SynthSpec};
use crate::msg::{Msg, Smoothed};
use crate::store::series::Series;
use crate::store::smooth::Smoothing;
use crate::ui::{Cmd, Options};

const KEY: &str = "train/loss";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn zooming_leaves_the_smoothed_values_unchanged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("run-synth001.wandb");
    let steps: u64 = 40_000;
    let spec = SynthSpec {
        steps,
        metrics: 3,
        summaries: false,
        ..SynthSpec::default()
    };
    std::fs::write(&file, synth::file_bytes(&spec)).expect("write");
    let (_, batch) = crate::source::tail::read_batch(&file).expect("read");
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.update(Msg::Opened {
        path: file.clone(),
        len: batch.file_len,
        modified: None,
    });
    app.update(Msg::Run(batch));
    app.charts.grid.focus = app
        .charts
        .shown
        .iter()
        .position(|&i| app.charts.metric_keys[i] == KEY)
        .expect("chart");
    // `e` twice: EMA 0.6. The answer as the runtime makes it: the smoothing of
    // every point, kept as a capped series keeps points.
    app.update(Msg::char('e'));
    let fx = app.update(Msg::char('e'));
    assert_eq!(app.charts.smoothing.of(KEY), Smoothing::Ema(0.6));
    let Some(Cmd::Smooth(job)) = fx.cmds.into_iter().find(|c| matches!(c, Cmd::Smooth(_))) else {
        panic!("no job");
    };
    let xs: Vec<f64> = (0..steps).map(|s| s as f64).collect();
    let ys: Vec<f64> = (0..steps).map(|s| synth::metric_value(0, s)).collect();
    let every = Smoothing::Ema(0.6).apply(&xs, &ys);
    let mut kept = Series::new(job.cap);
    for (&x, &v) in xs.iter().zip(&every) {
        kept.push(x, v);
    }
    app.update(Msg::Smoothed(Box::new(Smoothed {
        job,
        points: Ok(kept.kept()),
        count: steps,
        secs: 0.01,
    })));

    let px = 200;
    let whole = of_chart(
        &app,
        KEY,
        std::iter::once(&app.shown.run),
        ((0.0, 39_999.0), px),
        None,
        false,
    );
    let full: Vec<Point> = whole.points(0).expect("drawn").to_vec();
    assert!(full.len() > px / 2);
    for (a, b) in [(10_000.0, 10_400.0), (0.0, 150.0), (39_000.0, 39_999.0)] {
        app.charts.zoom.insert(KEY.to_owned(), (a, b));
        // A zoom asks for nothing: the smoothed series is the same.
        let fx = app.update(Msg::Tick(app.shown.now + 5.0));
        assert!(!fx.cmds.iter().any(|c| matches!(c, Cmd::Smooth(_))));
        let zoomed = of_chart(
            &app,
            KEY,
            std::iter::once(&app.shown.run),
            ((a, b), px),
            None,
            false,
        );
        let z = zoomed.points(0).expect("drawn");
        assert!(z.len() > 20, "{a}..{b}: {}", z.len());
        for &(x, v) in z {
            let at = x as usize;
            assert!(close(v, every[at]), "zoomed {x}: {v} != {}", every[at]);
            if let Some(&(_, u)) = full.iter().find(|p| p.0 == x) {
                assert_eq!(u.to_bits(), v.to_bits(), "at {x}");
            }
        }
    }
    assert_eq!(whole.title("loss".into()), "loss · ema 0.6");
}
