//! Unit tests of the stitching rule, through the run model's folding.

use super::*;
use crate::store::series::{Point, Series};
use crate::store::Run;
use leet_format::event::{Event, Events, Row};

/// Segment `seg`'s rows at `steps`: `loss` = 1000 × seg + step, and `acc` every
/// other row.
fn rows(seg: u32, steps: &[f64]) -> Events {
    let mut ev = Events {
        keys: vec!["loss".into(), "acc".into()],
        ..Events::default()
    };
    for (i, &s) in steps.iter().enumerate() {
        let at = u32::try_from(ev.values.len()).expect("few values");
        ev.values.push((0, 1000.0 * f64::from(seg) + s));
        if i % 2 == 0 {
            ev.values.push((1, -s));
        }
        let end = u32::try_from(ev.values.len()).expect("few values");
        ev.list.push(Event::Row(Row {
            step: Some(s),
            values: at..end,
            complete: true,
            ..Row::default()
        }));
    }
    ev
}

fn read(seg: u32, steps: &[f64], cut: Option<f64>) -> Run {
    let mut run = Run::new();
    run.stitch.cut = cut;
    run.fold(&rows(seg, steps));
    run
}

fn points(run: &Run, key: &str) -> Vec<Point> {
    run.metrics
        .get(key)
        .map(|s| s.points().to_vec())
        .unwrap_or_default()
}

/// The segments as the app stitches them when every one is read before the cuts
/// are known: each read, the cuts from their first steps, a segment read again when
/// its cut asks for it; then the run's `loss` points, segment after segment.
fn stitched(segments: &[&[f64]]) -> Vec<Point> {
    let mut runs: Vec<Run> = (0..).zip(segments).map(|(i, s)| read(i, s, None)).collect();
    let firsts: Vec<Option<f64>> = runs.iter().map(|r| r.stitch.first).collect();
    let each = (0..).zip(&mut runs).zip(segments).zip(cuts(&firsts));
    for (((i, run), steps), cut) in each {
        if run.stitch.rereads_for(cut) {
            *run = read(i, steps, cut);
        }
        run.stitch.cut = cut;
    }
    let out: Vec<Point> = runs.iter().flat_map(|r| points(r, "loss")).collect();
    assert!(
        out.windows(2).all(|w| w[0].0 < w[1].0),
        "the stitched series goes forward in step: {out:?}"
    );
    out
}

fn steps(a: u32, b: u32) -> Vec<f64> {
    (a..b).map(f64::from).collect()
}

fn pts(seg: u32, steps: &[f64]) -> Vec<Point> {
    steps
        .iter()
        .map(|&s| (s, 1000.0 * f64::from(seg) + s))
        .collect()
}

#[test]
fn a_segment_that_goes_on_past_the_last_step_appends() {
    let (a, b) = (steps(0, 30), steps(30, 50));
    assert_eq!(cuts(&[Some(0.0), Some(30.0)]), [Some(30.0), None]);
    assert_eq!(
        stitched(&[&a, &b]),
        [pts(0, &a), pts(1, &b)].concat(),
        "nothing dropped"
    );
    // A gap between them stays a gap (the view marks it `missing`).
    let c = steps(80, 90);
    assert_eq!(stitched(&[&a, &c]), [pts(0, &a), pts(1, &c)].concat());
}

#[test]
fn a_segment_rewound_to_the_middle_wins_from_its_first_step() {
    // Resumed from a checkpoint at step 20: the first segment's 20..29 are dropped.
    let (a, b) = (steps(0, 30), steps(20, 45));
    assert_eq!(
        stitched(&[&a, &b]),
        [pts(0, &steps(0, 20)), pts(1, &b)].concat()
    );
    // Its first step equal to the last one seen is a rewind too.
    let c = steps(29, 40);
    assert_eq!(
        stitched(&[&a, &c]),
        [pts(0, &steps(0, 29)), pts(1, &c)].concat()
    );
}

#[test]
fn a_segment_restarted_at_zero_replaces_everything_before_it() {
    // The resumed fixture offline: 30 steps, then 20 from 0 again.
    let (a, b) = (steps(0, 30), steps(0, 20));
    assert_eq!(stitched(&[&a, &b]), pts(1, &b));
    // The first segment charts nothing, and holds no series at all.
    let first = read(0, &a, Some(0.0));
    assert!(first.metrics.is_empty());
    assert_eq!(first.history_rows, 30, "its rows are still counted");
    assert_eq!(first.stitch.first, Some(0.0));
    assert_eq!(first.stitch.charted, None);
}

#[test]
fn three_segments_each_give_way_to_every_later_one() {
    // 0..100, then rewound to 50 (..80), then 90 on: appended after the second.
    let (a, b, c) = (steps(0, 100), steps(50, 80), steps(90, 95));
    assert_eq!(
        cuts(&[Some(0.0), Some(50.0), Some(90.0)]),
        [Some(50.0), Some(90.0), None]
    );
    assert_eq!(
        stitched(&[&a, &b, &c]),
        [pts(0, &steps(0, 50)), pts(1, &b), pts(2, &c)].concat()
    );
    // The third rewinds past the second's start: the second is all dropped, the
    // first keeps what is before the third.
    let d = steps(30, 40);
    assert_eq!(
        cuts(&[Some(0.0), Some(50.0), Some(30.0)]),
        [Some(30.0), Some(30.0), None]
    );
    assert_eq!(
        stitched(&[&a, &b, &d]),
        [pts(0, &steps(0, 30)), pts(2, &d)].concat()
    );
}

#[test]
fn a_segment_without_rows_cuts_nothing() {
    let (a, b) = (steps(0, 30), steps(10, 20));
    assert_eq!(
        cuts(&[Some(0.0), None, Some(10.0)]),
        [Some(10.0), Some(10.0), None]
    );
    assert_eq!(
        stitched(&[&a, &[], &b]),
        [pts(0, &steps(0, 10)), pts(2, &b)].concat()
    );
    assert_eq!(
        stitched(&[&a, &[]]),
        pts(0, &a),
        "an empty last segment leaves the run whole"
    );
    assert_eq!(cuts(&[]), []);
}

#[test]
fn steps_logged_with_gaps_are_cut_at_the_later_segment_s_first_step() {
    // Every 10 steps to 100; resumed from step 55 every 10 steps.
    let a: Vec<f64> = (0..=10).map(|i| f64::from(i * 10)).collect();
    let b: Vec<f64> = (0..5).map(|i| 55.0 + f64::from(i * 10)).collect();
    let kept: Vec<f64> = a.iter().copied().filter(|&s| s < 55.0).collect();
    assert_eq!(stitched(&[&a, &b]), [pts(0, &kept), pts(1, &b)].concat());
    // A metric logged on fewer rows is cut at the same step.
    let first = read(0, &a, Some(55.0));
    let acc: Vec<f64> = points(&first, "acc").iter().map(|p| p.0).collect();
    assert_eq!(acc, [0.0, 20.0, 40.0]);
}

#[test]
fn a_cut_learned_late_reads_the_segment_again_only_when_it_charted_past_it() {
    let a = steps(0, 30);
    let first = read(0, &a, None);
    // A later segment appending at 30 drops nothing: the cut is just set.
    assert!(!first.stitch.rereads_for(Some(30.0)));
    // One rewound to 20 drops rows already charted.
    assert!(first.stitch.rereads_for(Some(20.0)));
    // Read with the cut, nothing more is asked for; a cut moved earlier drops rows
    // charted, one moved later (a segment gone from the run) brings back rows left
    // out.
    let cut = read(0, &a, Some(20.0));
    assert!(!cut.stitch.rereads_for(Some(20.0)));
    assert!(cut.stitch.rereads_for(Some(10.0)));
    assert!(cut.stitch.rereads_for(None));
    assert!(cut.stitch.rereads_for(Some(25.0)));
    // A segment not read yet takes any cut as it is.
    assert!(!Stitch::default().rereads_for(Some(0.0)));
}

#[test]
fn statistics_of_the_segments_join_into_the_run_s() {
    let mut a = Series::new(1024);
    let mut b = Series::new(1024);
    let mut whole = Series::new(1024);
    for (x, y) in [(0.0, 5.0), (1.0, -1.0), (2.0, f64::NAN), (3.0, 9.0)] {
        a.push(x, y);
        whole.push(x, y);
    }
    for (x, y) in [(4.0, -1.0), (5.0, 9.0), (6.0, 2.0), (7.0, f64::INFINITY)] {
        b.push(x, y);
        whole.push(x, y);
    }
    let got = stats([a.stats(), b.stats()]).expect("two segments");
    let want = whole.stats();
    assert_eq!(
        (got.count, got.non_finite, got.last),
        (want.count, want.non_finite, want.last)
    );
    // Equal extremes: the earliest is kept, as one series keeps its first.
    assert_eq!((got.min, got.max), (Some((1.0, -1.0)), Some((3.0, 9.0))));
    assert_eq!((got.min, got.max), (want.min, want.max));
    let (g, w) = (got.mean.expect("mean"), want.mean.expect("mean"));
    assert!((g - w).abs() < 1e-12, "{g} {w}");
    // One segment: its own, unchanged; none: nothing; an empty one adds nothing.
    assert_eq!(stats([a.stats()]), Some(a.stats()));
    assert_eq!(stats(std::iter::empty()), None);
    assert_eq!(stats([Stats::default(), a.stats()]), Some(a.stats()));
    assert_eq!(stats([a.stats(), Stats::default()]), Some(a.stats()));
}
