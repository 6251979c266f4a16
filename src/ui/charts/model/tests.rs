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
