//! Unit tests of the chart model: what a chart draws, decided without a screen.

use super::*;
use crate::ui::charts::crosshair::Crosshair;
use crate::ui::palette::Palette;
use crate::ui::Options;

const KEY: &str = "train/loss";

/// An app showing one run that logged `KEY` = 10·step at steps 0..=9.
fn app_with_run() -> App {
    let mut app = App::new(Options::default());
    for s in 0..10 {
        app.shown
            .run
            .metrics
            .push(KEY, f64::from(s), 10.0 * f64::from(s));
    }
    app
}

fn theme() -> Theme {
    Theme::new(true, Palette::Default)
}

#[test]
fn a_run_is_drawn_as_one_line_over_its_steps() {
    let app = app_with_run();
    let m = ChartModel::build(&app, KEY, 40, false, theme()).expect("a chart");
    assert_eq!(m.title, KEY);
    assert_eq!(m.x, (0.0, 9.0));
    assert_eq!(m.lines.len(), 1);
    let pts = &m.lines[0].points;
    assert_eq!(pts.first(), Some(&(0.0, 0.0)));
    assert_eq!(pts.last(), Some(&(9.0, 90.0)));
    assert!(m.bands.is_empty() && m.gaps.is_empty() && m.note.is_none());
    // One run: no legend; the corner is its last value.
    assert!(m.legend.is_empty());
    assert_eq!(m.corner.as_deref(), Some(format::value(90.0).as_str()));
    assert_eq!(m.y, Some((0.0, 90.0)));
    assert_eq!(m.x_label(4.0), format::compact(4.0));
    // A key no run logged draws nothing.
    assert!(ChartModel::build(&app, "nope", 40, false, theme()).is_none());
}

#[test]
fn a_key_logged_empty_is_titled_as_an_empty_name() {
    let mut app = app_with_run();
    for key in ["", "\u{7}\u{1b}"] {
        app.shown.run.metrics.push(key, 0.0, 1.0);
        let m = ChartModel::build(&app, key, 40, false, theme()).expect("a chart");
        assert_eq!(m.title, "\"\"", "{key:?}");
    }
}

#[test]
fn zoom_log_and_the_crosshair_are_decided_in_the_model() {
    let mut app = app_with_run();
    app.charts.zoom.insert(KEY.to_owned(), (2.0, 5.0));
    app.charts
        .grid
        .scales
        .set_metric(KEY, crate::ui::charts::grid::YScale::Log);
    app.charts.crosshair = Some(Crosshair {
        x: 3.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 40, true, theme()).expect("a chart");
    assert_eq!(m.x, (2.0, 5.0));
    assert!(m.log_y);
    assert_eq!(m.title, format!("{KEY} · log zoom"));
    assert_eq!(m.cursor, Some(3.0));
    assert_eq!(
        m.corner,
        Some(format!(
            "x={} · {}",
            format::value(3.0),
            format::value(30.0)
        ))
    );
    // In log y the range is of the values' log10; the line keeps the values.
    let (lo, hi) = m.y.expect("a range");
    assert!(lo <= 20f64.log10() && hi >= 50f64.log10(), "{lo} {hi}");
    assert!(m.lines[0].points.contains(&(3.0, 30.0)));
    // Unfocused and not synced: no crosshair on this chart.
    let m = ChartModel::build(&app, KEY, 40, false, theme()).expect("a chart");
    assert_eq!(m.cursor, None);
}

/// `app_with_run` (10·step, 0.1 s a step) beside a run logging `KEY` = 100 +
/// step at one step a second from step 5 (steps 5..=14: 0 s … 9 s), both charted
/// by relative time.
fn two_runs_by_time() -> App {
    let mut app = app_with_run();
    for s in 0..10 {
        (app.shown.run.timeline.runtime).push(f64::from(s), 0.1 * f64::from(s));
    }
    let dir = std::path::PathBuf::from("/w/wandb/run-b");
    app.request_compare(dir.clone(), dir);
    app.take_cmds();
    let run = &mut app.runs.compare[0].run;
    for s in 5..15 {
        run.metrics.push(KEY, f64::from(s), 100.0 + f64::from(s));
        run.timeline.runtime.push(f64::from(s), f64::from(s - 5));
    }
    app.charts
        .xaxis
        .per_chart
        .insert(KEY.to_owned(), crate::ui::charts::xaxis::XAxis::Relative);
    app
}

#[test]
fn in_time_each_run_reads_its_own_point_nearest_the_crosshair_s_time() {
    let mut app = two_runs_by_time();
    // The main run's step 3: 0.3 s, where the other run's first point (0 s) is
    // nearest; its step 3 is not drawn at all.
    app.charts.crosshair = Some(Crosshair {
        x: 3.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 80, true, theme()).expect("a chart");
    let legend: Vec<&str> = m.legend.iter().map(|(l, _)| l.as_str()).collect();
    assert!(
        m.cursor.is_some_and(|c| (c - 0.3).abs() < 1e-9),
        "{:?}",
        m.cursor
    );
    assert!(
        legend[0].ends_with(&format!(" {}", format::value(30.0))),
        "{legend:?}"
    );
    assert!(
        legend[1].ends_with(&format!(" {}", format::value(105.0))),
        "{legend:?}"
    );
    // At the main run's last point (0.9 s) the other run is still at its first
    // second; past the other run's line (8 s) the main run reads nothing.
    app.charts.crosshair = Some(Crosshair {
        x: 9.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 80, true, theme()).expect("a chart");
    let legend: Vec<&str> = m.legend.iter().map(|(l, _)| l.as_str()).collect();
    assert!(
        legend[1].ends_with(&format!(" {}", format::value(106.0))),
        "{legend:?}"
    );
}

#[test]
fn by_step_a_run_whose_line_ends_before_the_crosshair_reads_nothing() {
    let mut app = two_runs_by_time();
    app.charts.xaxis.per_chart.clear();
    app.charts.crosshair = Some(Crosshair {
        x: 2.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 80, true, theme()).expect("a chart");
    let legend: Vec<&str> = m.legend.iter().map(|(l, _)| l.as_str()).collect();
    assert!(
        legend[0].ends_with(&format!(" {}", format::value(20.0))),
        "{legend:?}"
    );
    assert!(legend[1].ends_with(" –"), "{legend:?}");
}

/// An app showing one run that logged `KEY` = `y(step)` at `steps`.
fn app_logging(steps: std::ops::RangeInclusive<u32>, y: impl Fn(f64) -> f64) -> App {
    let mut app = App::new(Options::default());
    for s in steps.map(f64::from) {
        app.shown.run.metrics.push(KEY, s, y(s));
    }
    app
}

#[test]
fn a_nan_point_reads_as_nan_never_as_a_neighbours_value() {
    let mut app = app_logging(0..=9, |s| if s == 3.0 { f64::NAN } else { s });
    for (x, want) in [(3.0, "x=3 · NaN"), (2.0, "x=2 · 2"), (4.0, "x=4 · 4")] {
        app.charts.crosshair = Some(Crosshair { x, synced: false });
        let m = ChartModel::build(&app, KEY, 40, true, theme()).expect("a chart");
        assert_eq!(m.corner.as_deref(), Some(want));
    }
}

#[test]
fn the_crosshair_reads_a_step_in_full() {
    let mut app = app_logging(19_990..=19_999, |s| s);
    for (x, want) in [(19_999.0, "x=19999 · "), (19_995.0, "x=19995 · ")] {
        app.charts.crosshair = Some(Crosshair { x, synced: false });
        let m = ChartModel::build(&app, KEY, 60, true, theme()).expect("a chart");
        let corner = m.corner.expect("a corner");
        assert!(corner.starts_with(want), "{corner}");
    }
}

#[test]
fn log_y_counts_the_values_it_cannot_draw() {
    let mut app = app_logging(0..=9, |s| s - 3.0);
    app.charts
        .grid
        .scales
        .set_metric(KEY, crate::ui::charts::grid::YScale::Log);
    let m = ChartModel::build(&app, KEY, 60, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("6 · 4 y≤0"));
    // A narrow chart (27 columns: 5 left by the title) keeps the count alone,
    // tighter where it must.
    let m = ChartModel::build(&app, KEY, 27, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("4 y≤0"), "{}", m.title);
    let m = ChartModel::build(&app, KEY, 26, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("4y≤0"), "{}", m.title);
    // Zoomed, only those in the window shown.
    app.charts.zoom.insert(KEY.to_owned(), (2.0, 5.0));
    let m = ChartModel::build(&app, KEY, 60, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("6 · 2 y≤0"));
    // Linear y draws them all: no count.
    app.charts
        .grid
        .scales
        .set_metric(KEY, crate::ui::charts::grid::YScale::Linear);
    let m = ChartModel::build(&app, KEY, 60, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("6"));
    // Past the point cap the store keeps groups' extremes: the count is a floor.
    let mut app = app_logging(0..=39_999, |s| if s % 2.0 == 0.0 { -1.0 } else { 1.0 });
    app.charts
        .grid
        .scales
        .set_metric(KEY, crate::ui::charts::grid::YScale::Log);
    let m = ChartModel::build(&app, KEY, 60, false, theme()).expect("a chart");
    let corner = m.corner.expect("a corner");
    let n: usize = (corner.split(" · ≥").nth(1))
        .and_then(|t| t.strip_suffix(" y≤0"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{corner}"));
    assert!(n > 0 && n <= 20_000, "{corner}");
}

/// An app in a workspace list grouping its drawn runs: per run its group's label
/// and the `KEY` values it logged at steps `0..`; the first run is the main one.
fn grouped(runs: &[(&str, &[f64])]) -> App {
    use crate::ui::workspace::runs::WsTag;
    let mut app = App::new(Options::default());
    let tag = |n: usize, group: &str| WsTag {
        key: format!("r{n}"),
        color: n,
        label: format!("r{n}"),
        group: Some(group.to_owned()),
        pinned: false,
        segments: 1,
    };
    for (n, (group, ys)) in runs.iter().enumerate() {
        let run = if n == 0 {
            app.runs.main_tag = Some(tag(n, group));
            &mut app.shown.run
        } else {
            let dir = std::path::PathBuf::from(format!("/w/wandb/run-{n}"));
            app.request_compare(dir.clone(), dir);
            app.take_cmds();
            let c = app.runs.compare.last_mut().expect("compared");
            c.ws = Some(tag(n, group));
            &mut c.run
        };
        for (s, &y) in ys.iter().enumerate() {
            run.metrics.push(KEY, s as f64, y);
        }
    }
    app.runs.workspace = Some(Box::new(crate::ui::workspace::Workspace::new(
        std::path::PathBuf::from("/w/wandb"),
        None,
    )));
    assert!(runs_grouped(&app));
    app
}

fn legend(m: &ChartModel<'_>) -> Vec<String> {
    m.legend.iter().map(|(l, _)| l.clone()).collect()
}

#[test]
fn a_grouped_chart_s_corner_is_no_single_run_s_last_value() {
    // Two groups: no run's last value (144), and no one group's either.
    let app = grouped(&[("lr=0.1", &[1.0, 2.0]), ("lr=0.2", &[3.0, 144.0])]);
    let m = ChartModel::build(&app, KEY, 80, false, theme()).expect("a chart");
    assert_eq!(m.corner, None, "{:?}", legend(&m));
    // One group: its mean's last value, (2 + 144) / 2.
    let app = grouped(&[("lr=0.1", &[1.0, 2.0]), ("lr=0.1", &[3.0, 144.0])]);
    let m = ChartModel::build(&app, KEY, 80, false, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some(format::value(73.0).as_str()));
}

#[test]
fn groups_are_in_the_order_of_their_values_whatever_run_is_drawn_first() {
    let ys: &[f64] = &[1.0, 2.0];
    let want = [
        "lr=9 (1)",
        "lr=10 (2)",
        "lr=\"9\" (1)",
        "lr=adam (1)",
        "lr=– (1)",
    ];
    let labels = ["lr=adam", "lr=10", "lr=–", "lr=9", "lr=\"9\"", "lr=10"];
    for first in 0..labels.len() {
        let mut order: Vec<(&str, &[f64])> = labels.iter().map(|l| (*l, ys)).collect();
        order.rotate_left(first);
        let app = grouped(&order);
        let m = ChartModel::build(&app, KEY, 200, false, theme()).expect("a chart");
        assert_eq!(legend(&m), want, "drawn first: {}", labels[first]);
    }
}

#[test]
fn the_crosshair_reads_each_group_s_mean_in_the_legend() {
    let app = grouped(&[
        ("lr=0.1", &[0.0, 2.0, 4.0]),
        ("lr=0.1", &[2.0, 4.0, 6.0]),
        ("lr=0.2", &[10.0, 10.0]),
    ]);
    let mut app = app;
    app.charts.crosshair = Some(Crosshair {
        x: 1.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 80, true, theme()).expect("a chart");
    assert_eq!(m.corner.as_deref(), Some("x=1"));
    let v = |y: f64| format::value(y);
    assert_eq!(
        legend(&m),
        [
            format!("lr=0.1 (2) {}", v(3.0)),
            format!("lr=0.2 (1) {}", v(10.0))
        ]
    );
    // Past a group's line (lr=0.2 ends at step 1): no value.
    app.charts.crosshair = Some(Crosshair {
        x: 2.0,
        synced: false,
    });
    let m = ChartModel::build(&app, KEY, 80, true, theme()).expect("a chart");
    assert_eq!(
        legend(&m),
        [format!("lr=0.1 (2) {}", v(5.0)), "lr=0.2 (1) –".to_owned()]
    );
}
