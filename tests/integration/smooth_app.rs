//! Smoothing through the app and the runtime (issue 14): a key on the focused
//! chart asks the runtime for the smoothed series, which is computed from every
//! point logged (not from the store's capped points) and equals a reference
//! transcription of each kind's documented formula, computed here from every
//! point of the synthetic run.

use std::path::{Path, PathBuf};

use leet::decode::synth::{self, SynthSpec};
use leet::msg::Msg;
use leet::runtime::answer;
use leet::store::metrics::DEFAULT_SERIES_CAP;
use leet::store::smooth::VIEWPORT_SCALE;
use leet::ui::charts::smoothing::SmoothedLine;
use leet::ui::{App, Cmd, Effect, Options};

const KEY: &str = "train/loss";

/// A synthetic run of `steps` rows in `dir`; its file.
fn synth_run(dir: &Path, steps: u64) -> PathBuf {
    let file = dir.join("run-synth001.wandb");
    let spec = SynthSpec {
        steps,
        metrics: 3,
        summaries: false,
        ..SynthSpec::default()
    };
    std::fs::write(&file, synth::file_bytes(&spec)).unwrap();
    file
}

/// The run read into an app at 120×40, the `train/loss` chart focused.
fn app_on(file: &Path) -> App {
    let (_, batch) = leet::source::tail::read_batch(file).unwrap();
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.update(Msg::Opened {
        path: file.to_owned(),
        len: batch.file_len,
        modified: None,
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(1_796_100_000.0));
    focus_key(&mut app);
    app
}

/// Focus the `train/loss` chart.
fn focus_key(app: &mut App) {
    app.charts.grid.focus = app
        .charts
        .shown
        .iter()
        .position(|&i| app.charts.metric_keys[i] == KEY)
        .unwrap();
}

/// Every `Cmd::Smooth` of `fx` answered by the real executor's answer.
fn settle(app: &mut App, fx: Effect) -> Vec<leet::msg::SmoothJob> {
    let mut jobs = Vec::new();
    let mut queue: Vec<Cmd> = fx.cmds;
    while let Some(cmd) = queue.pop() {
        if let Cmd::Smooth(job) = &cmd {
            jobs.push(job.clone());
            let msg = answer(cmd).unwrap();
            queue.extend(app.update(msg).cmds);
        }
    }
    jobs
}

/// Every point of the metric, as logged: (step, value).
fn every_point(steps: u64) -> (Vec<f64>, Vec<f64>) {
    let xs = (0..steps).map(|s| s as f64).collect();
    let ys = (0..steps).map(|s| synth::metric_value(0, s)).collect();
    (xs, ys)
}

// ---- references: straight transcriptions of each kind's documented formula ----

/// W&B's TWEMA ("Smooth line plots"), with the x range of the whole series.
fn ref_twema(xs: &[f64], ys: &[f64], param: f64) -> Vec<f64> {
    let weight = param.sqrt().min(0.999);
    let range = xs[xs.len() - 1] - xs[0];
    let mut last_y = 0.0;
    let mut debias = 0.0;
    (0..ys.len())
        .map(|i| {
            let prev = if i > 0 { i - 1 } else { 0 };
            let change = (xs[i] - xs[prev]) / range * VIEWPORT_SCALE;
            let adj = weight.powf(change);
            last_y = last_y * adj + ys[i];
            debias = debias * adj + 1.0;
            last_y / debias
        })
        .collect()
}

/// TensorBoard's debiased EMA (`resmoothDataset`).
fn ref_ema(ys: &[f64], w: f64) -> Vec<f64> {
    let mut last = 0.0;
    let mut n = 0;
    ys.iter()
        .map(|&y| {
            last = last * w + (1.0 - w) * y;
            n += 1;
            last / (1.0 - w.powi(n))
        })
        .collect()
}

/// The mean of the `k` points centred on each point (fewer at the ends).
fn ref_avg(ys: &[f64], k: usize) -> Vec<f64> {
    (0..ys.len())
        .map(|i| {
            let a = i.saturating_sub(k / 2);
            let b = (i + (k - 1) / 2).min(ys.len() - 1);
            let n = (b - a + 1) as f64;
            ys[a..=b].iter().sum::<f64>() / n
        })
        .collect()
}

/// Gaussian kernel of σ `s` (x units), over the points within 3σ (x in
/// increasing order: the points either side of `i` until one is farther).
fn ref_gauss(xs: &[f64], ys: &[f64], s: f64) -> Vec<f64> {
    let weight = |i: usize, j: usize| {
        let d = xs[j] - xs[i];
        (d.abs() <= 3.0 * s).then(|| (-(d * d) / (2.0 * s * s)).exp())
    };
    (0..ys.len())
        .map(|i| {
            let (mut num, mut den) = (0.0, 0.0);
            let mut add = |j: usize| {
                let w = weight(i, j)?;
                num += w * ys[j];
                den += w;
                Some(())
            };
            let _ = (i..ys.len()).try_for_each(&mut add);
            let _ = (0..i).rev().try_for_each(&mut add);
            num / den
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// The app's smoothed series of the focused chart, checked point by point against
/// the reference (x = step = index); how many points it keeps.
fn check_against(app: &App, reference: &[f64]) -> usize {
    let SmoothedLine::Ready(s) = app.smoothed_line(&app.shown.run, KEY) else {
        panic!("not smoothed");
    };
    assert_eq!(s.stored(), s.count() as usize);
    for &(x, v) in s.points() {
        let want = reference[x as usize];
        assert!(close(v, want), "at step {x}: {v} != reference {want}");
    }
    // The extremes of the smoothed curve survive the compaction.
    let max = reference.iter().copied().fold(f64::MIN, f64::max);
    assert!(s.points().iter().any(|p| close(p.1, max)));
    s.stored()
}

#[test]
fn each_kind_on_a_run_past_the_cap_equals_its_reference_from_every_point() {
    let tmp = tempfile::tempdir().unwrap();
    let steps = 3 * DEFAULT_SERIES_CAP as u64 + 123;
    let file = synth_run(tmp.path(), steps);
    let mut app = app_on(&file);
    let raw = app.shown.run.metrics.get(KEY).unwrap();
    // The store keeps min/max pairs, not every point.
    assert_eq!(raw.count(), steps);
    assert!(raw.stored() < raw.count() as usize);
    let (xs, ys) = every_point(steps);
    let refs: [(&str, &str, Vec<f64>); 4] = [
        ("twema:0.6", "twema 0.6", ref_twema(&xs, &ys, 0.6)),
        ("ema:0.6", "ema 0.6", ref_ema(&ys, 0.6)),
        ("avg:10", "avg 10", ref_avg(&ys, 10)),
        ("gauss:5", "gauss 5", ref_gauss(&xs, &ys, 5.0)),
    ];
    for (spec, _, reference) in &refs {
        // `e`: the next kind. The chart is drawn raw (and says so) until the
        // answer comes.
        let fx = app.update(Msg::char('e'));
        assert!(matches!(
            app.smoothed_line(&app.shown.run, KEY),
            SmoothedLine::Pending
        ));
        let jobs = settle(&mut app, fx);
        assert_eq!(jobs.len(), 1, "{spec}: {jobs:?}");
        assert_eq!(jobs[0].smoothing, *spec);
        // The store's points are not every point: the file is read again.
        assert!(jobs[0].points.is_none());
        assert_eq!(jobs[0].path, file);
        let kept = check_against(&app, reference);
        // Bounded as the series is.
        assert!(kept <= DEFAULT_SERIES_CAP + 2 && kept > DEFAULT_SERIES_CAP / 4);
    }
    // Past Gaussian: none again, nothing asked.
    let fx = app.update(Msg::char('e'));
    assert!(settle(&mut app, fx).is_empty());
    assert!(matches!(
        app.smoothed_line(&app.shown.run, KEY),
        SmoothedLine::Off
    ));
}

#[test]
fn a_series_holding_every_point_is_smoothed_from_its_points_and_plus_minus_step() {
    let tmp = tempfile::tempdir().unwrap();
    let file = synth_run(tmp.path(), 2000);
    let mut app = app_on(&file);
    let (xs, ys) = every_point(2000);
    let fx = app.update(Msg::char('e'));
    let jobs = settle(&mut app, fx);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].points.as_ref().map(Vec::len), Some(2000));
    check_against(&app, &ref_twema(&xs, &ys, 0.6));
    // `+` and `=` one step up each.
    for (key, want) in [('+', "twema:0.7"), ('=', "twema:0.8")] {
        let fx = app.update(Msg::char(key));
        let jobs = settle(&mut app, fx);
        assert_eq!(jobs.len(), 1, "{key}");
        assert_eq!(jobs[0].smoothing, want);
    }
    check_against(&app, &ref_twema(&xs, &ys, 0.8));
    // `-` one down: a smoothing computed before comes from the cache.
    let fx = app.update(Msg::char('-'));
    assert!(fx.redraw);
    assert!(settle(&mut app, fx).is_empty());
    check_against(&app, &ref_twema(&xs, &ys, 0.7));
    // TWEMA's weight clamps at 0.99 (and 0.1).
    for _ in 0..10 {
        let fx = app.update(Msg::char('+'));
        settle(&mut app, fx);
    }
    assert_eq!(
        app.charts.smoothing.of(KEY),
        leet::store::smooth::Smoothing::Twema(0.99)
    );
    assert!(!app.update(Msg::char('+')).redraw);
    for _ in 0..12 {
        app.update(Msg::char('-'));
    }
    assert_eq!(
        app.charts.smoothing.of(KEY),
        leet::store::smooth::Smoothing::Twema(0.1)
    );
}

#[test]
fn capital_e_smooths_every_chart_on_screen_and_then_none() {
    let tmp = tempfile::tempdir().unwrap();
    let file = synth_run(tmp.path(), 500);
    let mut app = app_on(&file);
    // The focused chart at EMA, then E: every chart with it, at the first press.
    app.update(Msg::char('e'));
    let fx = app.update(Msg::char('e'));
    settle(&mut app, fx);
    let fx = app.update(Msg::char('E'));
    let jobs = settle(&mut app, fx);
    let mut keys: Vec<&str> = jobs.iter().map(|j| j.key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["lr", "train/acc"], "EMA 0.6 of train/loss is cached");
    assert!(jobs.iter().all(|j| j.smoothing == "ema:0.6"));
    for k in ["lr", "train/acc", KEY] {
        assert!(matches!(
            app.smoothed_line(&app.shown.run, k),
            SmoothedLine::Ready(_)
        ));
    }
    // Every chart smoothed: E turns every chart's smoothing off.
    let fx = app.update(Msg::char('E'));
    assert!(fx.cmds.is_empty());
    assert!(!app.charts.smoothing.any());
    // And on again with the same smoothing.
    let fx = app.update(Msg::char('E'));
    settle(&mut app, fx);
    for k in ["lr", "train/acc", KEY] {
        assert_eq!(
            app.charts.smoothing.of(k),
            leet::store::smooth::Smoothing::Ema(0.6)
        );
    }
}

#[test]
fn a_growing_run_is_smoothed_again_at_most_about_once_a_second() {
    let tmp = tempfile::tempdir().unwrap();
    let file = synth_run(tmp.path(), 300);
    let mut app = app_on(&file);
    let fx = app.update(Msg::char('e'));
    assert_eq!(settle(&mut app, fx).len(), 1);
    // More rows arrive (the same steps again: the series grows).
    let more = || leet::source::tail::read_batch(&file).unwrap().1;
    let t0 = app.shown.now;
    let fx = app.update(Msg::Run(more()));
    let jobs = settle(&mut app, fx);
    assert!(jobs.is_empty(), "asked again at once: {jobs:?}");
    app.update(Msg::Tick(t0 + 0.5));
    let fx = app.update(Msg::Run(more()));
    assert!(settle(&mut app, fx).is_empty());
    // A second on: smoothed again, from all 900 points.
    let fx = app.update(Msg::Tick(t0 + 1.5));
    let jobs = settle(&mut app, fx);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].points.as_ref().map(Vec::len), Some(900));
    let SmoothedLine::Ready(s) = app.smoothed_line(&app.shown.run, KEY) else {
        panic!("not smoothed");
    };
    assert_eq!(s.count(), 900);
    // Nothing new: nothing asked, however much time passes.
    let fx = app.update(Msg::Tick(t0 + 10.0));
    assert!(settle(&mut app, fx).is_empty());
}

#[test]
fn a_run_file_gone_says_why_on_the_status_line_and_draws_the_raw_line() {
    let tmp = tempfile::tempdir().unwrap();
    let steps = DEFAULT_SERIES_CAP as u64 + 10;
    let file = synth_run(tmp.path(), steps);
    let mut app = app_on(&file);
    std::fs::remove_file(&file).unwrap();
    let fx = app.update(Msg::char('e'));
    let jobs = settle(&mut app, fx);
    assert_eq!(jobs.len(), 1);
    assert!(matches!(
        app.smoothed_line(&app.shown.run, KEY),
        SmoothedLine::Failed
    ));
    let err = app.shown.source.error.clone().unwrap();
    assert!(err.contains("cannot smooth train/loss"), "{err}");
    // Not asked again until the series changes.
    let fx = app.update(Msg::Tick(app.shown.now + 5.0));
    assert!(settle(&mut app, fx).is_empty());
}

#[test]
fn a_compared_run_past_its_cap_is_smoothed_from_its_own_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let main = synth_run(&a, 1000);
    let steps = DEFAULT_SERIES_CAP as u64 + 500;
    let other = synth_run(&b, steps);
    let mut app = app_on(&main);
    app.request_compare(other.clone(), b.clone());
    let Some(Cmd::StartReader { tag, .. }) = app.take_cmds().into_iter().next() else {
        panic!("no reader");
    };
    let (_, batch) = leet::source::tail::read_batch(&other).unwrap();
    app.update(Msg::Tagged(tag, Box::new(Msg::Run(batch))));
    // A compared run keeps half a main run's points: its store is compacted.
    let theirs = app.runs.compare[0].run.metrics.get(KEY).unwrap();
    assert!(theirs.stored() < theirs.count() as usize);
    let fx = app.update(Msg::char('e'));
    let mut jobs = settle(&mut app, fx);
    jobs.sort_by(|x, y| x.path.cmp(&y.path));
    // One job per drawn run: the main one from its points, the other from its file.
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert_eq!(
        (jobs[0].path.as_path(), jobs[0].points.is_some()),
        (main.as_path(), true)
    );
    assert_eq!(
        (jobs[1].path.as_path(), jobs[1].points.is_none()),
        (b.as_path(), true)
    );
    let (xs, ys) = every_point(steps);
    let reference = ref_twema(&xs, &ys, 0.6);
    let SmoothedLine::Ready(s) = app.smoothed_line(&app.runs.compare[0].run, KEY) else {
        panic!("compared run not smoothed");
    };
    assert!(s.stored() > 1000);
    for &(x, v) in s.points() {
        let want = reference[x as usize];
        assert!(close(v, want), "at step {x}: {v} != reference {want}");
    }
    let (xs, ys) = every_point(1000);
    check_against(&app, &ref_twema(&xs, &ys, 0.6));
}

#[test]
fn each_chart_s_smoothing_is_saved_in_the_settings_and_comes_back() {
    use leet::store::smooth::Smoothing;
    use leet::ui::settings::Config;
    let tmp = tempfile::tempdir().unwrap();
    let file = synth_run(tmp.path(), 200);
    let config = tmp.path().join("config.toml");
    let mut app = app_on(&file);
    app.use_config(Some(config.clone()), Config::default());
    focus_key(&mut app);
    for k in ['e', 'e', '+'] {
        app.update(Msg::char(k));
    }
    let fx = app.update(Msg::Tick(app.shown.now + 2.0));
    let text = fx
        .cmds
        .iter()
        .find_map(|c| match c {
            Cmd::SaveSettings { text, .. } => Some(text.clone()),
            _ => None,
        })
        .expect("saved");
    assert!(
        text.contains("[viewer.smoothing]\n\"train/loss\" = \"ema:0.7\"\n"),
        "{text}"
    );
    assert!(text.contains("smoothing_all = \"none\"\n"), "{text}");
    let cfg = Config::parse(&config, &text).unwrap();
    let mut again = app_on(&file);
    again.use_config(None, cfg.clone());
    assert_eq!(again.charts.smoothing.of(KEY), Smoothing::Ema(0.7));
    assert_eq!(again.charts.smoothing.of("lr"), Smoothing::None);
    assert_eq!(again.settings_config().to_toml(), text);
    // E: every chart, saved as such.
    again.update(Msg::char('E'));
    let s = again.settings();
    assert_eq!(s.smoothing_all, "ema:0.7");
    assert!(s.smoothing.is_empty());
    // A bad value is refused, naming the table, the key and the reason.
    for (bad, want) in [
        (
            "[viewer.smoothing]\n\"loss\" = \"ema:7\"\n",
            "[viewer.smoothing] key 'loss': ema needs a weight from 0 to 0.999",
        ),
        (
            "[viewer]\nsmoothing_all = \"wiggly:3\"\n",
            "[viewer] key 'smoothing_all': unknown smoothing \"wiggly\"",
        ),
        (
            "[viewer]\nsmoothing = 3\n",
            "[viewer] key 'smoothing': expected a table",
        ),
    ] {
        let e = Config::parse(&config, bad).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    // Spelled otherwise, written back in one spelling.
    let cfg = Config::parse(&config, "[viewer.smoothing]\n\"lr\" = \"GAUSSIAN:5.0\"\n").unwrap();
    assert_eq!(cfg.viewer.smoothing["lr"], "gauss:5");
}

#[test]
fn the_smoothed_series_kept_stay_bounded_however_many_are_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let file = synth_run(tmp.path(), 200);
    let mut app = app_on(&file);
    let mut asked = 0;
    // Every chart through every kind and every parameter step.
    for chart in 0..3 {
        app.charts.grid.focus = chart;
        for _ in 0..4 {
            let fx = app.update(Msg::char('e'));
            asked += settle(&mut app, fx).len();
            for _ in 0..20 {
                let fx = app.update(Msg::char('+'));
                asked += settle(&mut app, fx).len();
            }
        }
    }
    assert!(asked > 100, "{asked}");
    assert!(
        app.charts.smoothing.cached() <= 64,
        "{}",
        app.charts.smoothing.cached()
    );
    // The one drawn now is among them.
    assert!(matches!(
        app.smoothed_line(&app.shown.run, &app.charts.metric_keys[app.charts.shown[2]]),
        SmoothedLine::Ready(_)
    ));
}

/// More smoothed series on screen than the cache keeps (a 9×9 grid, every chart
/// smoothed): each is asked for once, and once all are answered neither their
/// redraws nor the ticks after ask again. Each answer's redraw used to evict the
/// least recently drawn series on screen and ask for it again, so the smoothing
/// worker re-read the run without end while the screen stood still.
#[test]
fn more_smoothed_charts_on_screen_than_the_cache_keeps_are_asked_for_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("run-synth001.wandb");
    let spec = SynthSpec {
        steps: 50,
        metrics: 90,
        summaries: false,
        ..SynthSpec::default()
    };
    std::fs::write(&file, synth::file_bytes(&spec)).unwrap();
    let mut app = app_on(&file);
    app.update(Msg::Resize(400, 120));
    for c in ['r', '9', 'c', '9'] {
        app.update(Msg::char(c));
    }
    // The first page: the first 81 charts.
    app.charts.grid.focus = 0;
    let on_screen = app.charts.grid.per_page().min(app.charts.shown.len());
    assert!(on_screen > 64, "{on_screen} charts on screen");
    // Every job answered as the runtime answers it, first asked first (a bound
    // ends a run of asks that never settles).
    let mut queue: std::collections::VecDeque<Cmd> = app.update(Msg::char('E')).cmds.into();
    let mut asked = 0;
    while let Some(cmd) = queue.pop_front() {
        if let Cmd::Smooth(_) = &cmd {
            asked += 1;
            assert!(asked <= 4 * on_screen, "still asking after {asked} jobs");
            let msg = answer(cmd).unwrap();
            queue.extend(app.update(msg).cmds);
        }
    }
    assert_eq!(asked, on_screen);
    for _ in 0..3 {
        let fx = app.update(Msg::Tick(app.shown.now + 2.0));
        let again = fx
            .cmds
            .iter()
            .filter(|c| matches!(c, Cmd::Smooth(_)))
            .count();
        assert_eq!(again, 0, "a tick asked for {again} series again");
    }
    for &i in &app.charts.shown[..on_screen] {
        let key = &app.charts.metric_keys[i];
        assert!(
            matches!(
                app.smoothed_line(&app.shown.run, key),
                SmoothedLine::Ready(_)
            ),
            "{key} not drawn smoothed"
        );
    }
}
