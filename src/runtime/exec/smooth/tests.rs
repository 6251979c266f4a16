//! The full-history reader places every point where the store does, and the
//! worker's answers are the smoothing of every point, kept bounded.

use super::*;
use leet_format::leveldb::Writer;
use leet_format::pb;
use prost::Message as _;

fn rec(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

fn item(key: &str, json: &str) -> pb::HistoryItem {
    pb::HistoryItem {
        key: key.into(),
        value_json: json.into(),
        ..Default::default()
    }
}

/// Rows before and after a `define_metric` (`val/*` by `epoch`), rows without
/// `_step` or `epoch`, a NaN step, NaN and infinite values, a row broken off.
fn defined_file() -> Vec<u8> {
    use pb::record::RecordType as T;
    let mut w = Writer::new();
    w.append(&rec(
        1,
        T::Run(pb::RunRecord {
            run_id: "def00001".into(),
            ..Default::default()
        }),
    ));
    let mut num = 2;
    for i in 0..3000i64 {
        if i == 1000 {
            w.append(&rec(
                num,
                T::Metric(pb::MetricRecord {
                    glob_name: "val/*".into(),
                    step_metric: "epoch".into(),
                    ..Default::default()
                }),
            ));
            num += 1;
        }
        let mut items = Vec::new();
        if i % 13 != 3 {
            items.push(item(
                "_step",
                &if i % 101 == 7 {
                    "NaN".to_owned()
                } else {
                    i.to_string()
                },
            ));
        }
        let f = i as f64;
        items.push(item(
            "loss",
            &format!("{}", 1.0 / (f + 1.0) + (f * 0.7).sin()),
        ));
        if i % 7 != 2 {
            items.push(item("epoch", &(i / 10).to_string()));
        }
        items.push(item(
            "val/acc",
            match i % 211 {
                5 => "NaN",
                6 => "Infinity",
                _ => "0.25",
            },
        ));
        w.append(&rec(
            num,
            T::History(pb::HistoryRecord {
                item: items,
                ..Default::default()
            }),
        ));
        num += 1;
    }
    w.into_bytes()
}

fn same(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| p.0.to_bits() == q.0.to_bits() && p.1.to_bits() == q.1.to_bits())
}

#[test]
fn the_full_history_places_every_point_where_the_store_does() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("run-def00001.wandb");
    std::fs::write(&file, defined_file()).expect("write");
    // The store's placement, with room for every point.
    let (_, batch) = crate::source::tail::read_batch(&file).expect("read");
    let mut run = crate::store::Run::new();
    run.metrics = crate::store::metrics::MetricStore::new(1 << 22, 1 << 20);
    run.fold_batch(&batch);
    assert_eq!(run.x_axis_of("val/acc"), "epoch");
    let got = full_history(&file, &["val/acc", "loss", "absent"]).expect("history");
    for (key, (xs, ys)) in ["val/acc", "loss"].iter().zip(&got) {
        let s = run.metrics.get(key).expect("series");
        assert_eq!(s.count() as usize, s.stored(), "{key} compacted");
        let pts: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
        assert!(pts.len() > 2500, "{key}: {}", pts.len());
        assert!(same(&pts, s.points()), "{key} differs from the store");
    }
    assert!(got[2].0.is_empty());
    // A missing file is an error naming it, not a panic.
    let err = full_history(&tmp.path().join("gone.wandb"), &["loss"]).expect_err("missing");
    assert!(err.contains("gone.wandb"), "{err}");
}

#[test]
fn jobs_on_one_file_read_it_once_and_answer_in_order_bounded() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("run-def00001.wandb");
    std::fs::write(&file, defined_file()).expect("write");
    let job = |key: &str, smoothing: &str, points: Option<Vec<(f64, f64)>>| SmoothJob {
        path: file.clone(),
        key: key.into(),
        smoothing: smoothing.into(),
        cap: 256,
        points,
    };
    let answers = smooth_all(vec![
        job("loss", "ema:0.6", None),
        job("loss", "avg:10", None),
        job("loss", "bogus:1", None),
        job("val/acc", "gauss:5", Some(vec![(0.0, 1.0), (1.0, 3.0)])),
    ]);
    let got: Vec<&Smoothed> = answers
        .iter()
        .map(|m| match m {
            Msg::Smoothed(s) => s.as_ref(),
            m => panic!("{m:?}"),
        })
        .collect();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].job.smoothing, "ema:0.6");
    assert_eq!(got[1].job.smoothing, "avg:10");
    for g in &got[..2] {
        let pts = g.points.as_ref().expect("smoothed");
        // Every one of the 3000 rows (a row without a finite `_step` is placed
        // at its number), kept under the cap by min/max compaction.
        assert_eq!(g.count, 3000);
        assert!(pts.len() <= 258 && pts.len() > 64, "{}", pts.len());
    }
    assert!(got[2].points.as_ref().is_err_and(|e| e.contains("bogus")));
    // Points sent along: smoothed as they are, nothing read.
    let g = got[3].points.as_ref().expect("points");
    assert_eq!(got[3].count, 2);
    let w = (-1.0f64 / 50.0).exp();
    assert!((g[0].1 - (1.0 + 3.0 * w) / (1.0 + w)).abs() < 1e-12);
}
