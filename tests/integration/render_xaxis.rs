//! X axis snapshots (issue 14): the same chart by step, relative time, wall time,
//! an `epoch` metric and log x, driven through keys (`x` cycles the focused chart's
//! x, the picker takes a typed filter and enter, `X` gives every chart the focused
//! one's x, `L` toggles log x).

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::App;

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.update(Msg::char(c));
    }
}

/// `fixture` at `w`×`h` with the chart of `key` focused.
fn focused_on(fixture: &str, key: &str, w: u16, h: u16) -> App {
    let mut app = app_from(fixture, w, h);
    focus(&mut app, key);
    app
}

/// Focus `key`'s chart: focus walks the grid's items in order (section headers
/// too), right, and down where a row ends.
fn focus(app: &mut App, key: &str) {
    for _ in 0..200 {
        if app.focused_key() == Some(key) {
            break;
        }
        let before = (app.focused_key().map(str::to_owned), app.charts.grid.page());
        app.update(Msg::char('d'));
        if (app.focused_key().map(str::to_owned), app.charts.grid.page()) == before {
            app.update(Msg::char('s'));
        }
    }
    assert_eq!(app.focused_key(), Some(key));
}

/// The top border line of the focused (thick) chart.
fn focused_title(s: &str) -> String {
    s.lines()
        .flat_map(|l| l.split('┏').skip(1))
        .next()
        .map(|t| t.split('┓').next().unwrap_or("").to_owned())
        .unwrap_or_default()
}

#[test]
fn custom_step_train_loss_by_step_relative_wall_and_epoch() {
    for (w, h) in SIZES {
        let mut app = focused_on("custom_step", "train/loss", w, h);
        let by_step = screen(&app, w, h);
        assert!(!focused_title(&by_step).contains("x="), "{by_step}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_step"), by_step);

        press(&mut app, "x");
        let rel = screen(&app, w, h);
        assert!(focused_title(&rel).contains("x=rel"), "{rel}");
        // train/loss's _runtime runs 0.379s … 0.398s: seconds with the decimals
        // that tell them apart.
        assert!(rel.contains("0.379s") && rel.contains("0.398s"), "{rel}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_relative"), rel);

        press(&mut app, "x");
        let wall = screen(&app, w, h);
        // (`x=wa…` on a narrow chart.)
        assert!(focused_title(&wall).contains("x=wa"), "{wall}");
        // The last row's _timestamp, 17:51:18.602 UTC (where the chart has room
        // for two such labels; a narrow one keeps its first, 17:51:18.585).
        let wide = focused_title(&wall).chars().count() >= 30;
        assert!(wall.contains("17:51:18.602") || !wide, "{wall}");
        assert!(wall.contains("17:51:18.585"), "{wall}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_wall"), wall);

        press(&mut app, "x");
        let picker = screen(&app, w, h);
        assert!(picker.contains("x axis: metric"), "{picker}");
        press(&mut app, "epo");
        let typed = screen(&app, w, h);
        assert!(typed.contains("▶ epoch"), "{typed}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_picker"), typed);
        app.update(Msg::key(KeyCode::Enter));
        let epoch = screen(&app, w, h);
        assert!(focused_title(&epoch).contains(" · x=e"), "{epoch}");
        // train/loss is logged on odd steps (and 100, 200), epoch on even ones up
        // to step 22: each odd step's epoch is interpolated between its
        // neighbours' (step 1 at 0.5, the axis' start); steps 23, 100 and 200 come
        // after the last epoch, have no x, and are counted in the corner.
        // (Where the chart is wide enough: the title keeps its room first.)
        let t = focused_title(&epoch);
        assert!(t.contains("3 no x") || t.chars().count() < 40, "{epoch}");
        assert!(epoch.contains("└0.5 "), "{epoch}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_epoch"), epoch);

        // And back to the default.
        press(&mut app, "x");
        assert_eq!(screen(&app, w, h), by_step);
    }
}

#[test]
fn custom_step_train_loss_on_log_x() {
    for (w, h) in SIZES {
        let mut app = focused_on("custom_step", "train/loss", w, h);
        press(&mut app, "L");
        let s = screen(&app, w, h);
        let title = focused_title(&s);
        assert!(title.contains("logx"), "{s}");
        // Logged from step 1: nothing left out; the ends are its first and last steps.
        assert!(!title.contains("x≤0"), "{s}");
        insta::assert_snapshot!(format!("custom_step_{w}x{h}_x_log"), s);
        press(&mut app, "L");
        assert!(!focused_title(&screen(&app, w, h)).contains("logx"));
    }
    // `epoch` is logged from step 0, which has no log: one point left out, counted.
    let mut app = focused_on("custom_step", "epoch", 120, 40);
    press(&mut app, "L");
    let s = screen(&app, 120, 40);
    assert!(focused_title(&s).contains("1 x≤0"), "{s}");
}

/// The titles of every chart on the screen (thin and thick borders).
fn titles(s: &str) -> Vec<String> {
    s.lines()
        .flat_map(|l| {
            l.split(['╭', '┏'])
                .skip(1)
                .map(|t| t.split(['─', '━']).next().unwrap_or("").to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `X` gives every chart the focused chart's x: many_metrics against its
/// `epoch_float`, picked by typing part of its name; then `x` on one chart moves
/// that chart only.
#[test]
fn many_metrics_every_chart_against_epoch_float() {
    for (w, h) in SIZES {
        let mut app = app_from("many_metrics", w, h);
        press(&mut app, "xxx");
        press(&mut app, "epoch_f");
        app.update(Msg::key(KeyCode::Enter));
        press(&mut app, "X");
        let s = screen(&app, w, h);
        let t = titles(&s);
        assert!(t.len() >= 2, "{s}");
        // Each title says it (cut where the chart is narrow: `x=epoc…`, `x…`; a
        // name too long for a narrow chart, `big_int_metri…`, leaves it no room).
        for title in &t {
            let tail = title.rsplit(" · ").next().unwrap_or_default();
            let cut = title.ends_with('…')
                && (!title.contains(" · ")
                    || "x=epoch_float".starts_with(tail.trim_end_matches('…')));
            assert!(title.contains("x=epoch_float") || cut, "{title:?}\n{s}");
        }
        insta::assert_snapshot!(format!("many_metrics_{w}x{h}_x_epoch_float_all"), s);
        // x on the focused chart: back to its default; the others keep theirs.
        press(&mut app, "x");
        let s = screen(&app, w, h);
        assert!(!focused_title(&s).contains("x="), "{s}");
        // (A name cut for a narrow chart hides its x, as above.)
        let others = (titles(&s).iter())
            .filter(|t| t.contains(" · x") || t.ends_with('…'))
            .count();
        assert_eq!(others, t.len() - 1, "{s}");
    }
}

/// The crosshair reads in the chosen x: on train/loss by wall time it stands at
/// the last point (step 200), and the corner says that row's `_timestamp`
/// (17:51:18.6020572 UTC, truncated to the axis' decimals) and its value; `←`
/// steps to the point before (step 100, logged at 17:51:18.5998018), and by
/// relative time the same point reads as its `_runtime` (0.394837677 s).
#[test]
fn the_crosshair_corner_reads_the_chosen_x() {
    let (w, h) = (120, 40);
    let mut app = focused_on("custom_step", "train/loss", w, h);
    // Full screen: room for the whole corner.
    app.update(Msg::key(KeyCode::Enter));
    press(&mut app, "xxC");
    let s = screen(&app, w, h);
    assert!(focused_title(&s).contains("x=17:51:18.602 · 0.1"), "{s}");
    app.update(Msg::key(KeyCode::Left));
    let s = screen(&app, w, h);
    assert!(focused_title(&s).contains("x=17:51:18.599 · 0.4"), "{s}");
    // The cursor's dim column at that time (13/16 of the way from step 1's time).
    insta::assert_snapshot!("custom_step_120x40_x_wall_crosshair", s);
    // Through the picker (esc: back to the default), then relative time.
    press(&mut app, "x");
    app.update(Msg::key(KeyCode::Esc));
    let s = screen(&app, w, h);
    assert!(focused_title(&s).contains("x=100 · 0.4"), "{s}");
    press(&mut app, "x");
    let s = screen(&app, w, h);
    assert!(focused_title(&s).contains("x=0.395s · 0.4"), "{s}");
    assert!(app.charts.crosshair.is_some());
}

/// The wheel zooms a chart drawn by relative time: its x range narrows (the zoom
/// is kept in steps, the chart maps it), and `z` resets it.
#[test]
fn the_wheel_zooms_a_chart_in_its_chosen_x() {
    use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};
    let (w, h) = (120, 40);
    let mut app = focused_on("custom_step", "train/loss", w, h);
    press(&mut app, "x");
    let before = screen(&app, w, h);
    // The focused chart's top left corner on the screen (sections put headers
    // between the rows of charts).
    let (cx, cy) = before
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let at = l.find("┏train/loss")?;
            Some((l[..at].chars().count(), y))
        })
        .expect("the focused chart is on screen");
    let (cx, cy) = (u16::try_from(cx).unwrap(), u16::try_from(cy).unwrap());
    for _ in 0..3 {
        app.update(Msg::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollUp,
            column: cx + 6,
            row: cy + 4,
            modifiers: KeyModifiers::NONE,
        }));
    }
    let zoomed = screen(&app, w, h);
    let t = focused_title(&zoomed);
    assert!(t.contains("x=rel zoom"), "{zoomed}");
    // Zoomed in about the left edge: the axis ends well before 0.398s.
    assert!(before.contains("0.398s"), "{before}");
    assert!(!zoomed.contains("0.398s"), "{zoomed}");
    press(&mut app, "z");
    assert_eq!(screen(&app, w, h), before);
}

/// A frame's cost in another x is bounded by the series cap, not by the run: a
/// 300k-step run (past the cap, so its series are compacted) draws by wall time and
/// on log x within a generous bound, and the frame holds no more points than the
/// chart has columns for. Prints the times (debug build, loaded machine).
#[test]
fn a_long_run_draws_in_another_x_in_bounded_time() {
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let spec = leet::decode::synth::SynthSpec {
        steps: 300_000,
        metrics: 4,
        summaries: false,
        ..Default::default()
    };
    std::fs::write(
        dir.path().join("run-synth001.wandb"),
        leet::decode::synth::file_bytes(&spec),
    )
    .unwrap();
    let (_, batch) = leet::source::tail::read_batch(dir.path()).unwrap();
    let (w, h) = (200, 60);
    let mut app = leet::ui::App::new(leet::ui::Options {
        color: false,
        ..leet::ui::Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Run(batch));
    let series = app.shown.run.metrics.get("train/loss").unwrap();
    assert_eq!(series.count(), 300_000);
    assert!(series.stored() <= 16 * 1024);
    assert!(app.shown.run.timeline.wall.stored() <= 16 * 1024);
    let frame = |app: &App| {
        let t = Instant::now();
        let s = screen(app, w, h);
        (t.elapsed(), s)
    };
    let (by_step, _) = frame(&app);
    press(&mut app, "xxX");
    let (wall, s) = frame(&app);
    assert!(focused_title(&s).contains("x=wall"), "{s}");
    press(&mut app, "L");
    let (log, s) = frame(&app);
    assert!(focused_title(&s).contains("logx"), "{s}");
    eprintln!("200x60 frame, 300k steps: by step {by_step:?}, wall (all charts) {wall:?}, + log x {log:?}");
}

/// A chart a `define_metric` steps by `epoch` (val/acc): its default x stays
/// `x=epoch`; by relative time it is drawn from its values by `_step` (kept beside
/// its epoch series), every one of its 12 points placed.
#[test]
fn a_step_metric_chart_by_relative_time() {
    let (w, h) = (120, 40);
    let mut app = focused_on("custom_step", "val/acc", w, h);
    assert!(focused_title(&screen(&app, w, h)).contains("x=epoch"));
    assert_eq!(
        app.shown
            .run
            .timeline
            .by_step
            .get("val/acc")
            .map(|s| s.count()),
        app.shown.run.metrics.get("val/acc").map(|s| s.count())
    );
    press(&mut app, "x");
    let s = screen(&app, w, h);
    let t = focused_title(&s);
    assert!(t.contains("val/acc · x=rel"), "{s}");
    assert!(!t.contains("no x") && !s.contains("no data"), "{s}");
    // Its first point is step 0's (_runtime 0.378425519 s), its last step 22's.
    assert!(s.contains("└0.378s"), "{s}");
}

/// The metric picker: lists the run's other metrics, filters as typed (backspace
/// undoes), up/down move, enter with nothing matching keeps it open, esc closes it
/// with the chart back on its default x; a picked metric is the chart's x.
#[test]
fn the_picker_filters_moves_picks_and_cancels() {
    let (w, h) = (120, 40);
    let mut app = focused_on("custom_step", "train/loss", w, h);
    press(&mut app, "xxx");
    let p = app.overlay.picker().unwrap();
    assert_eq!(p.key, "train/loss");
    assert!(p.options.iter().all(|o| o != "train/loss"));
    assert!(p.options.contains(&"epoch".to_owned()));
    press(&mut app, "zzz");
    assert!(screen(&app, w, h).contains("no metric matches"));
    app.update(Msg::key(KeyCode::Enter));
    assert!(app.overlay.picker().is_some());
    for _ in 0..3 {
        app.update(Msg::key(KeyCode::Backspace));
    }
    press(&mut app, "val/");
    app.update(Msg::key(KeyCode::Down));
    let s = screen(&app, w, h);
    assert!(s.contains("▶ val/loss"), "{s}");
    app.update(Msg::key(KeyCode::Up));
    assert!(screen(&app, w, h).contains("▶ val/acc"));
    app.update(Msg::key(KeyCode::Esc));
    assert!(app.overlay.picker().is_none());
    assert!(!focused_title(&screen(&app, w, h)).contains("x="));
    // Picked: val/acc's value at each step (it is logged on even steps).
    press(&mut app, "xxx");
    press(&mut app, "val/acc");
    app.update(Msg::key(KeyCode::Enter));
    assert!(app.overlay.picker().is_none());
    assert!(focused_title(&screen(&app, w, h)).contains("x=val/acc"));
}

/// `x` and `L` are kept in the settings file (`[viewer.x_axis]`, `log_x`) and
/// come back at the next start; `X` as `x_axis_all`.
#[test]
fn the_x_choice_and_log_x_are_saved_and_come_back() {
    use leet::ui::charts::xaxis::XAxis;
    use leet::ui::cmd::Cmd;
    use leet::ui::settings::Config;
    let (w, h) = (120, 40);
    let mut app = app_from("custom_step", w, h);
    let config = std::path::PathBuf::from("/cfg/leet/config.toml");
    app.use_config(Some(config.clone()), Config::default());
    focus(&mut app, "train/loss");
    press(&mut app, "xxL");
    let fx = app.update(Msg::Tick(common::screen::NOW + 2.0));
    let text = fx
        .cmds
        .iter()
        .find_map(|c| match c {
            Cmd::SaveSettings { text, .. } => Some(text.clone()),
            _ => None,
        })
        .expect("saved");
    assert!(
        text.contains("[viewer.x_axis]\n\"train/loss\" = \"wall\"\n"),
        "{text}"
    );
    assert!(text.contains("log_x = [\"train/loss\"]\n"), "{text}");
    assert!(text.contains("x_axis_all = \"step\"\n"), "{text}");
    let cfg = Config::parse(&config, &text).unwrap();
    let mut again = app_from("custom_step", w, h);
    again.use_config(None, cfg);
    assert_eq!(*again.charts.xaxis.of("train/loss"), XAxis::Wall);
    assert!(again.charts.xaxis.log_x("train/loss"));
    assert_eq!(*again.charts.xaxis.of("train/extra"), XAxis::Default);
    let s = screen(&again, w, h);
    assert!(s.contains("train/loss · x=wall logx"), "{s}");
    // X: every chart gets the focused chart's x, saved as x_axis_all.
    let mut all = focused_on("custom_step", "train/loss", w, h);
    press(&mut all, "xX");
    assert_eq!(all.settings().x_axis_all, "rel");
}

/// `custom_step`'s run with a run beside it that logs `val/loss` by `_step`
/// (custom_step's `define_metric` steps `val/*` by `epoch`), at `w`×`h`, the
/// chart of `val/loss` focused. The other run's directory lives as long as the
/// returned guard.
fn beside_a_step_run(w: u16, h: u16) -> (App, tempfile::TempDir) {
    use leet::decode::synth::{run_file, RunSpec};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run-by-step");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = RunSpec {
        run_id: "bystep01".into(),
        display_name: "by-step".into(),
        start_time: common::screen::NOW - 7200.0,
        steps: 30,
        metrics: vec!["val/loss".into()],
        step_seconds: 0.01,
        ..RunSpec::default()
    };
    std::fs::write(dir.join("run-bystep01.wandb"), run_file(&spec)).unwrap();
    let mut app = app_from("custom_step", w, h);
    app.request_compare(dir.clone(), dir.clone());
    app.take_cmds();
    let (_, b) = leet::source::tail::read_batch(&dir).unwrap();
    let tag = app.runs.compare[0].tag;
    app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    focus(&mut app, "val/loss");
    (app, tmp)
}

/// The legend line of the focused chart (the row above its bottom border).
fn focused_legend(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let bottom = lines.iter().position(|l| l.contains('┗')).unwrap();
    let at = lines[bottom].find('┗').unwrap();
    let row = lines[bottom - 1];
    row.get(at..).unwrap_or(row).to_owned()
}

/// Two runs that chart `val/loss` against different x (one by `epoch`, one by
/// `_step`) are both drawn: by `_step` by default (which every row has), by
/// time as well; on `x=epoch`, which one of them lacks, the chart says so.
#[test]
fn runs_that_chart_a_metric_against_different_x_are_all_drawn() {
    let (w, h) = (120, 40);
    let (mut app, _tmp) = beside_a_step_run(w, h);
    let s = screen(&app, w, h);
    let t = focused_title(&s);
    assert!(t.contains("val/loss") && !t.contains("x="), "{s}");
    let legend = focused_legend(&s);
    assert!(legend.contains("by-step"), "{s}");
    assert!(legend.contains("custom"), "{s}");
    // By `_step`: custom_step's val/loss spans steps 4..=22 (its epochs' rows), the
    // other run's 0..=29.
    assert!(s.contains("└0 ") && s.contains("29┃"), "{s}");
    insta::assert_snapshot!("mixed_step_metric_120x40_x_step", s);
    // The crosshair steps along the same steps: on custom_step's last val/loss
    // (step 22, by `_step`, not its epoch 7), then on to the other run's.
    press(&mut app, "C");
    let cross = screen(&app, w, h);
    assert!(focused_title(&cross).contains("x=22"), "{cross}");
    app.update(Msg::key(KeyCode::End));
    assert!(focused_title(&screen(&app, w, h)).contains("x=29"));
    press(&mut app, "CC");

    // Relative time, which every run has: both still drawn.
    press(&mut app, "x");
    let rel = screen(&app, w, h);
    assert!(focused_title(&rel).contains("x=rel"), "{rel}");
    let legend = focused_legend(&rel);
    assert!(
        legend.contains("by-step") && legend.contains("custom"),
        "{rel}"
    );
    assert!(!legend.contains("not on x"), "{rel}");

    // x=epoch: the run without `epoch` cannot be placed, and the chart says so.
    press(&mut app, "x");
    press(&mut app, "x");
    press(&mut app, "epoch");
    app.update(Msg::key(KeyCode::Enter));
    let epoch = screen(&app, w, h);
    assert!(focused_title(&epoch).contains("x=epoch"), "{epoch}");
    // (The note is cut to the legend's room here, and whole on a wider chart.)
    assert!(focused_legend(&epoch).contains("╳ 1 run no"), "{epoch}");
    app.update(Msg::Resize(200, 60));
    let wide = screen(&app, 200, 60);
    assert!(
        focused_legend(&wide).contains("╳ 1 run not on x=epoch · x: change axis"),
        "{wide}"
    );
    insta::assert_snapshot!("mixed_step_metric_200x60_x_epoch", wide);
}

/// A chart over a step metric (`val/acc` over `epoch`) with that same metric
/// picked from the list, or another: the crosshair reads its x there as on the
/// default x, at every key that moves it (it read `x=– · –` wherever the chart's
/// own x was a step metric and the pick anything but the default).
#[test]
fn the_crosshair_reads_x_on_a_step_metric_chart_whatever_x_is_picked() {
    let (w, h) = (120, 40);
    let mut app = focused_on("custom_step", "val/acc", w, h);
    app.update(Msg::key(KeyCode::Enter));
    press(&mut app, "C");
    app.update(Msg::key(KeyCode::End));
    let default = focused_title(&screen(&app, w, h));
    let reading = |t: &str| {
        t.split("x=epoch")
            .nth(1)
            .unwrap_or("")
            .trim_matches(['─', '━'])
            .to_owned()
    };
    let want = reading(&default);
    assert!(want.starts_with("x=") && !want.contains('–'), "{default}");
    // Its own step metric picked (the crosshair stays on): the same reading.
    press(&mut app, "xxx");
    press(&mut app, "epoch");
    app.update(Msg::key(KeyCode::Enter));
    assert!(app.charts.crosshair.is_some());
    app.update(Msg::key(KeyCode::End));
    let t = focused_title(&screen(&app, w, h));
    assert_eq!(reading(&t), want, "{t}");
    for k in [KeyCode::Home, KeyCode::Right, KeyCode::Left] {
        app.update(Msg::key(k));
        let t = focused_title(&screen(&app, w, h));
        assert!(!reading(&t).contains('–'), "{k:?}: {t}");
    }
    // Another metric picked: the crosshair's row's value of it.
    for _ in 0..6 {
        if app.overlay.picker().is_some() {
            break;
        }
        press(&mut app, "x");
    }
    press(&mut app, "val/loss");
    app.update(Msg::key(KeyCode::Enter));
    app.update(Msg::key(KeyCode::End));
    let s = screen(&app, w, h);
    let t = focused_title(&s);
    assert!(t.contains("val/acc · x=val/loss"), "{s}");
    assert!(t.contains("x=") && !t.contains("x=– "), "{t}");
}

/// `loss` logged at steps 0..40, `epoch` only at steps 10..=29: with `epoch`
/// picked as the chart's x, the crosshair stands only where its corner can say
/// the x (`C`, `end`, `home`, `→` past the last placed point), never on a step
/// outside `epoch`'s (it read `x=– · –` there until moved).
#[test]
fn the_crosshair_stands_only_where_the_picked_x_reads() {
    let (w, h) = (120, 40);
    let tmp = tempfile::tempdir().unwrap();
    let mut app = partial_x_app(tmp.path(), 40, 10..30, w, h);
    pick_epoch_for_loss(&mut app);
    let corner = |app: &App| {
        let t = focused_title(&screen(app, w, h));
        t.split("x=epoch")
            .nth(1)
            .unwrap_or("")
            .trim_matches(['─', '━'])
            .to_owned()
    };
    press(&mut app, "C");
    assert_eq!(
        app.charts.crosshair.map(|c| c.x),
        Some(29.0),
        "C: the last placed point"
    );
    assert!(corner(&app).starts_with("x=58 "), "{}", corner(&app));
    app.update(Msg::key(KeyCode::Right));
    assert_eq!(
        app.charts.crosshair.map(|c| c.x),
        Some(29.0),
        "→ past it: stays"
    );
    app.update(Msg::key(KeyCode::Home));
    assert_eq!(
        app.charts.crosshair.map(|c| c.x),
        Some(10.0),
        "home: the first placed"
    );
    assert!(corner(&app).starts_with("x=20 "), "{}", corner(&app));
    app.update(Msg::key(KeyCode::Left));
    assert_eq!(app.charts.crosshair.map(|c| c.x), Some(10.0));
    app.update(Msg::key(KeyCode::Right));
    assert_eq!(app.charts.crosshair.map(|c| c.x), Some(11.0));
    app.update(Msg::key(KeyCode::End));
    assert_eq!(
        app.charts.crosshair.map(|c| c.x),
        Some(29.0),
        "end: the last placed"
    );
    assert!(!corner(&app).contains('–'), "{}", corner(&app));
}

/// An app showing a run of `loss` and `lr` at steps `0..steps` and `epoch` (twice
/// the step) only at steps `with_epoch`, written under `dir`.
fn partial_x_app(
    dir: &std::path::Path,
    steps: i64,
    with_epoch: std::ops::Range<i64>,
    w: u16,
    h: u16,
) -> App {
    let mut lw = leet_format::leveldb::Writer::new();
    for step in 0..steps {
        let s = step.to_string();
        let loss = format!("{}", 1.0 / (1.0 + step as f64));
        let epoch = format!("{}", step * 2);
        let mut items = vec![
            ("_step", s.as_str()),
            ("loss", loss.as_str()),
            ("lr", "0.001"),
        ];
        if with_epoch.contains(&step) {
            items.push(("epoch", epoch.as_str()));
        }
        lw.append(&leet_format::synth::history_record(step + 1, &items));
    }
    let file = dir.join("run-partial.wandb");
    std::fs::write(&file, lw.into_bytes()).unwrap();
    let (_, batch) = leet::source::tail::read_batch(&file).unwrap();
    let mut app = App::new(leet::ui::Options {
        color: false,
        ..leet::ui::Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from("partial-x.wandb"),
        len: batch.file_len,
        modified: Some(common::screen::NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(common::screen::NOW));
    app
}

/// `epoch` picked from the list as the x of `loss`'s chart (focused).
fn pick_epoch_for_loss(app: &mut App) {
    focus(app, "loss");
    // `x` cycles to the picker (after relative and wall time).
    for _ in 0..6 {
        if app.overlay.picker().is_some() {
            break;
        }
        press(app, "x");
    }
    press(app, "epoch");
    app.update(Msg::key(KeyCode::Enter));
}

/// A chart over a metric x logged only in the middle of the run (`epoch` at steps
/// 40..60 of 100): the wheel narrows around the epoch under the pointer, and `>`
/// narrows the epoch range drawn from its first press; never into `no data`
/// (the window was taken in steps 0..99, away from the rows with an x).
#[test]
fn zoom_in_a_sparse_picked_x_narrows_around_what_is_drawn() {
    use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};
    let (w, h) = (120, 40);
    let tmp = tempfile::tempdir().unwrap();
    let mut app = partial_x_app(tmp.path(), 100, 40..60, w, h);
    pick_epoch_for_loss(&mut app);
    let before = screen(&app, w, h);
    let (cx, cy) = before
        .lines()
        .enumerate()
        .find_map(|(y, l)| Some((l[..l.find("┏loss")?].chars().count(), y)))
        .expect("the focused chart is on screen");
    let width = focused_title(&before).chars().count() + 2;
    let (cx, cy) = (u16::try_from(cx).unwrap(), u16::try_from(cy).unwrap());
    // The pointer three quarters across: epoch ≈ 80 + 38 × 0.75.
    let column = cx + u16::try_from(width * 3 / 4).unwrap();
    for _ in 0..4 {
        app.update(Msg::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollUp,
            column,
            row: cy + 4,
            modifiers: KeyModifiers::NONE,
        }));
        let s = screen(&app, w, h);
        assert!(!s.contains("no data"), "{s}");
    }
    let (x0, x1) = app.charts.zoom.get("loss").copied().expect("zoomed");
    // In steps: inside the rows with an x, around step ≈ 54.
    assert!(
        40.0 <= x0 && x1 <= 59.0 && x0 < 54.0 && 54.0 < x1,
        "{x0}..{x1}"
    );
    // `C` stands inside the window, on a point with a value (it stood just past
    // it: `x=… · –`).
    press(&mut app, "C");
    let c = app.charts.crosshair.map(|c| c.x).expect("on");
    assert!((x0..=x1).contains(&c), "{c} outside {x0}..{x1}");
    let t = focused_title(&screen(&app, w, h));
    assert!(t.contains("x=") && !t.contains(" · –"), "{t}");
    press(&mut app, "CC");
    assert!(app.charts.crosshair.is_none());
    // A window whose end is nearer the step past it than the one inside.
    app.charts.zoom.insert("loss".into(), (45.2, 52.6));
    press(&mut app, "C");
    assert_eq!(app.charts.crosshair.map(|c| c.x), Some(52.0));
    let t = focused_title(&screen(&app, w, h));
    assert!(t.contains("x=104 · "), "{t}");
    press(&mut app, "CC");
    // `>` from the full range narrows it at the first press.
    press(&mut app, "z");
    assert!(!app.charts.zoom.contains_key("loss"));
    press(&mut app, ">");
    let (x0, x1) = app
        .charts
        .zoom
        .get("loss")
        .copied()
        .expect("zoomed by a key");
    assert!(40.0 <= x0 && x1 <= 59.0 && x1 - x0 < 19.0, "{x0}..{x1}");
    // The crosshair then reads an x and a value, inside the window.
    press(&mut app, "C");
    let c = app.charts.crosshair.map(|c| c.x).expect("on");
    assert!((x0..=x1).contains(&c), "{c} outside {x0}..{x1}");
    let t = focused_title(&screen(&app, w, h));
    assert!(t.contains("x=") && !t.contains(" · –"), "{t}");
}

/// A synced crosshair on a row outside the picked metric's steps: the chart over
/// that metric says it has no x there (it read `x=– · –`).
#[test]
fn a_synced_crosshair_on_a_row_without_the_picked_x_says_so() {
    let (w, h) = (160, 45);
    let tmp = tempfile::tempdir().unwrap();
    let mut app = partial_x_app(tmp.path(), 100, 40..60, w, h);
    pick_epoch_for_loss(&mut app);
    focus(&mut app, "lr");
    press(&mut app, "CC");
    app.update(Msg::key(KeyCode::Home));
    let s = screen(&app, w, h);
    let title = (s.lines())
        .flat_map(|l| l.split('╭').skip(1))
        .find(|t| t.starts_with("loss"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        title.contains("no x here") && !title.contains("x=– "),
        "{s}"
    );
    // At a row with an x, the value.
    for _ in 0..45 {
        app.update(Msg::key(KeyCode::Right));
    }
    let s = screen(&app, w, h);
    assert!(s.contains("x=90 · "), "{s}");
}

/// The metric picker offers metrics, not the fields of a logged image
/// (`img.width`, `img.size`: 27 such rows in a run of nine image keys, a chart
/// drawn against a PNG's byte size).
#[test]
fn the_x_picker_lists_metrics_not_image_fields() {
    let (w, h) = (120, 40);
    let mut app = app_from("many_metrics", w, h);
    for _ in 0..6 {
        if app.overlay.picker().is_some() {
            break;
        }
        press(&mut app, "x");
    }
    let p = app.overlay.picker().expect("the picker");
    assert!(!p.options.is_empty());
    assert!(
        p.options.iter().all(|o| !o.starts_with("img.")),
        "{:?}",
        p.options
    );
}

/// Two runs drawn, `epoch` logged by each at other steps (the main run at steps
/// 40..60, the compared one at 0..20): zoom in `epoch` keeps both runs' rows with
/// an x in its window (the window was taken from the main run's alone, dropping
/// the other run from the chart).
#[test]
fn zoom_in_a_picked_x_keeps_every_drawn_run() {
    use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};
    let (w, h) = (120, 40);
    let tmp = tempfile::tempdir().unwrap();
    let mut app = two_runs_epoch_apart(tmp.path(), w, h);
    let s = screen(&app, w, h);
    let (cx, cy) = s
        .lines()
        .enumerate()
        .find_map(|(y, l)| Some((l[..l.find("┏loss")?].chars().count(), y)))
        .expect("the focused chart is on screen");
    let width = focused_title(&s).chars().count() + 2;
    let (cx, cy) = (u16::try_from(cx).unwrap(), u16::try_from(cy).unwrap());
    app.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: cx + u16::try_from(width * 3 / 4).unwrap(),
        row: cy + 4,
        modifiers: KeyModifiers::NONE,
    }));
    let (x0, x1) = app.charts.zoom.get("loss").copied().expect("zoomed");
    // The compared run's rows with an x (steps 0..19) are still partly inside.
    assert!(x0 < 19.0 && x1 > 40.0, "{x0}..{x1}");
}

/// Two runs drawn whose `epoch` comes at other steps: `home` and `end` in `epoch`
/// stand on the main run's first and last points with an x, reading values (they
/// stood on the other run's, `no x here`).
#[test]
fn home_and_end_in_a_picked_x_with_runs_beside_read_values() {
    let (w, h) = (120, 40);
    let tmp = tempfile::tempdir().unwrap();
    let mut app = two_runs_epoch_apart(tmp.path(), w, h);
    press(&mut app, "C");
    for (k, want) in [(KeyCode::Home, 40.0), (KeyCode::End, 59.0)] {
        app.update(Msg::key(k));
        assert_eq!(app.charts.crosshair.map(|c| c.x), Some(want), "{k:?}");
        let t = focused_title(&screen(&app, w, h));
        assert!(!t.contains("no x here"), "{k:?}: {t}");
    }
}

/// The run of [`partial_x_app`] with `epoch` at steps 40..60, another beside it
/// with `epoch` at steps 0..20, and `epoch` picked as the x of `loss`'s chart.
fn two_runs_epoch_apart(dir: &std::path::Path, w: u16, h: u16) -> App {
    let mut app = partial_x_app(dir, 100, 40..60, w, h);
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let _ = partial_x_app(&other, 100, 0..20, w, h);
    app.request_compare(other.clone(), other.clone());
    app.take_cmds();
    let (_, b) = leet::source::tail::read_batch(&other).unwrap();
    let tag = app.runs.compare[0].tag;
    app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    pick_epoch_for_loss(&mut app);
    app
}
