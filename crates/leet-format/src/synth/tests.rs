use super::*;
use crate::decoder::Decoder;
use crate::event::{Event, Events, Scalar, TreeOp};
use crate::leveldb::{scan, Frame};

#[test]
fn synthetic_file_reads_back() {
    let spec = SynthSpec {
        steps: 300,
        stats_every: 10,
        ..SynthSpec::default()
    };
    let bytes = file_bytes(&spec);
    let mut d = Decoder::new();
    scan(&bytes, 0, |f| {
        if let Frame::Record { offset, payload } = f {
            d.record(offset, &payload);
        }
    })
    .expect("header");
    let ev = d.take();
    let rows: Vec<_> = ev
        .list
        .iter()
        .filter_map(|e| match e {
            Event::Row(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(rows.len(), 300);
    assert_eq!(rows[299].step, Some(299.0));
    assert!(rows.iter().all(|r| r.complete && r.values.len() == 10));
    let stats = ev
        .list
        .iter()
        .filter(|e| matches!(e, Event::Stats { .. }))
        .count();
    assert_eq!(stats, 30);
    for i in 0..10 {
        assert!(ev.keys.contains(&metric_name(i)), "{}", metric_name(i));
    }
    let m0 = ev
        .summary
        .iter()
        .find_map(|op| match op {
            TreeOp::Set(id, Scalar::Json(v)) if ev.paths[*id as usize].joined == "m0" => {
                Some(v.clone())
            }
            _ => None,
        })
        .expect("summary m0");
    assert_eq!(m0, format!("{}", metric_value(3, 299)));
    assert!(ev
        .list
        .iter()
        .any(|e| matches!(e, Event::Exit { code: 0, .. })));
    assert_eq!(ev.tally.total, 2 + 300 * 3 + 30 + 1);
}

fn decode(bytes: &[u8]) -> Events {
    let mut d = Decoder::new();
    scan(bytes, 0, |f| {
        if let Frame::Record { offset, payload } = f {
            d.record(offset, &payload);
        }
    })
    .expect("header");
    d.take()
}

#[test]
fn run_file_reads_back_as_specified() {
    let spec = RunSpec {
        run_id: "abc123".into(),
        display_name: "brisk-otter-7".into(),
        tags: vec!["baseline".into()],
        notes: "a note".into(),
        first_step: 40,
        steps: 25,
        resumed: true,
        exit_code: Some(1),
        config: vec![
            ("lr".into(), "0.0003".into()),
            ("model.layers".into(), "4".into()),
            ("model.width".into(), "256".into()),
        ],
        late_config: vec![("late.added".into(), "7".into())],
        summary_remove: vec!["acc".into()],
        ..RunSpec::default()
    };
    let ev = decode(&run_file(&spec));
    let run = ev
        .list
        .iter()
        .find_map(|e| match e {
            Event::Run(r) => Some(r),
            _ => None,
        })
        .expect("run record");
    assert_eq!(run.run_id, "abc123");
    assert_eq!(run.display_name, "brisk-otter-7");
    assert_eq!(run.tags, ["baseline"]);
    assert_eq!(run.notes, "a note");
    assert!(run.resumed);
    assert_eq!(run.starting_step, 40);
    assert_eq!(run.start_time.map(|t| t.0), Some(1_796_000_000));
    let rows: Vec<_> = ev
        .list
        .iter()
        .filter_map(|e| match e {
            Event::Row(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(rows.len(), 25);
    assert_eq!(rows[0].step, Some(40.0));
    assert_eq!(rows[24].step, Some(64.0));
    assert!(rows.iter().all(|r| r.complete));
    assert!(ev
        .list
        .iter()
        .any(|e| matches!(e, Event::Exit { code: 1, .. })));
    assert!(!ev.list.iter().any(|e| matches!(e, Event::Bad { .. })));
    // header, run, 3 records per step, late config, removal, exit.
    assert_eq!(ev.tally.total, 2 + 25 * 3 + 3);
    for key in ["loss", "acc", "val/loss"] {
        assert!(ev.keys.iter().any(|k| k == key), "{key}");
    }
}

#[test]
fn no_exit_code_writes_no_exit_record() {
    let spec = RunSpec {
        exit_code: None,
        ..RunSpec::default()
    };
    let ev = decode(&run_file(&spec));
    assert!(!ev.list.iter().any(|e| matches!(e, Event::Exit { .. })));
    assert_eq!(ev.tally.total, 2 + 100 * 3);
}

#[test]
fn curves_look_like_training() {
    let loss = |step, lr, seed| curve("loss", step, lr, seed);
    // Falls, faster with a larger learning rate, towards its floor.
    for lr in [1e-4, 3e-4, 1e-3, 3e-3] {
        assert!(loss(0, lr, 0) > 2.0, "{lr}");
        assert!(loss(300, lr, 0) < loss(0, lr, 0) - 0.3, "{lr}");
    }
    assert!(loss(200, 3e-3, 0) < loss(200, 1e-3, 0));
    assert!(loss(200, 1e-3, 0) < loss(200, 1e-4, 0));
    assert!(loss(5000, 1e-3, 0) < 0.2);
    // Accuracy rises within [0, 1]; validation loss stays above training.
    assert!(curve("acc", 0, 1e-3, 0) < 0.2);
    assert!(curve("acc", 500, 1e-3, 0) > 0.9);
    assert!((0..1000).all(|s| (0.0..=1.0).contains(&curve("train/acc", s, 3e-3, 2))));
    assert!(curve("val/loss", 100, 1e-3, 0) > loss(100, 1e-3, 0));
    // Seeds differ a little; one seed repeats exactly.
    assert_eq!(loss(50, 1e-3, 1), loss(50, 1e-3, 1));
    assert_ne!(loss(50, 1e-3, 1), loss(50, 1e-3, 2));
    assert!((loss(50, 1e-3, 1) - loss(50, 1e-3, 2)).abs() < 0.2);
    // Noise is in [-1, 1] and not constant.
    let n: Vec<f64> = (0..1000).map(|s| noise(3, "loss", s)).collect();
    assert!(n.iter().all(|x| (-1.0..=1.0).contains(x)));
    assert!(n.iter().any(|x| *x > 0.5) && n.iter().any(|x| *x < -0.5));
}

#[test]
fn config_items_are_top_level_keys_with_json_subtrees() {
    let items = config_items(&[
        ("lr".into(), "0.001".into()),
        ("model.layers".into(), "4".into()),
        ("model.act".into(), "\"gelu\"".into()),
        ("name".into(), "not json".into()),
    ]);
    let got: Vec<(&str, &str)> = items
        .iter()
        .map(|i| (i.key.as_str(), i.value_json.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("lr", "0.001"),
            ("model", r#"{"layers":4,"act":"gelu"}"#),
            ("name", r#""not json""#)
        ]
    );
}

#[test]
fn run_dir_names_are_the_sdks() {
    // 2026-11-30T01:02:03Z
    let t = 1_796_000_000.0 - 1_796_000_000.0 % 86_400.0 + 3723.5;
    assert_eq!(run_dir_name(t, "abc", false), "run-20261130_010203-abc");
    assert_eq!(
        run_dir_name(t, "abc", true),
        "offline-run-20261130_010203-abc"
    );
}
