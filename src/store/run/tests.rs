//! Unit tests of the run model.
use super::*;
use leet_format::wire::{self, ItemValue};

#[test]
fn globs() {
    assert!(glob_match("val/*", "val/acc"));
    assert!(!glob_match("val/*", "train/acc"));
    assert!(glob_match("*loss*", "train/loss_x"));
    assert!(glob_match("a", "a"));
    assert!(!glob_match("a", "ab"));
}

#[test]
fn a_null_summary_value_removes_the_key_but_config_keeps_nulls() {
    use prost::Message as _;
    let item = |key: &str, v: &str| leet_format::pb::SummaryItem {
        key: key.into(),
        value_json: v.into(),
        ..Default::default()
    };
    let summary = |items: Vec<leet_format::pb::SummaryItem>| leet_format::pb::Record {
        record_type: Some(leet_format::pb::record::RecordType::Summary(
            leet_format::pb::SummaryRecord {
                update: items,
                ..Default::default()
            },
        )),
        ..Default::default()
    };
    let mut run = Run::new();
    run.apply(
        0,
        &summary(vec![item("tmp", "1"), item("keep", "2")]).encode_to_vec(),
    );
    run.apply(1, &summary(vec![item("tmp", "null")]).encode_to_vec());
    assert_eq!(
        Value::Object(run.summary.to_json()),
        serde_json::json!({"keep": 2})
    );
    let config = leet_format::pb::Record {
        record_type: Some(leet_format::pb::record::RecordType::Config(
            leet_format::pb::ConfigRecord {
                update: vec![leet_format::pb::ConfigItem {
                    key: "opt".into(),
                    value_json: "null".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        )),
        ..Default::default()
    };
    run.apply(2, &config.encode_to_vec());
    assert_eq!(
        Value::Object(run.config.to_json()),
        serde_json::json!({"opt": null})
    );
}

#[test]
fn logged_images_are_listed_per_key_with_their_step() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs/many_metrics/wandb/offline-run-20261130_174932-many0001");
    let file = std::fs::read_dir(&dir)
        .expect("fixture")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "wandb"))
        .expect("wandb file");
    let data = std::fs::read(file).expect("read");
    let mut run = Run::new();
    leet_format::leveldb::scan(&data, 0, |fr| {
        if let leet_format::leveldb::Frame::Record { offset, payload } = fr {
            run.apply(offset, &payload);
        }
    })
    .expect("header");
    let imgs = run.media.get("img").expect("img key");
    let steps: Vec<f64> = imgs.iter().map(|m| m.step).collect();
    assert_eq!(steps, [0.0, 10.0]);
    assert!(
        imgs[0].path.starts_with("media/images/img_0_"),
        "{:?}",
        imgs[0]
    );
    assert_eq!(imgs[0].caption, "noise step 0");
    assert!(dir.join("files").join(&imgs[1].path).is_file());
    // Histograms are media too, but not images.
    assert_eq!(run.media.len(), 1, "{:?}", run.media.keys());
}

/// A history record of `items` (key, nested key, JSON) at `step`.
fn history(step: i64, items: &[(&str, &[&str], &str)]) -> Vec<u8> {
    use leet_format::pb;
    use prost::Message as _;
    let mut item: Vec<pb::HistoryItem> = items
        .iter()
        .map(|(k, nested, v)| pb::HistoryItem {
            key: (*k).into(),
            nested_key: nested.iter().map(|s| (*s).to_owned()).collect(),
            value_json: (*v).into(),
            ..Default::default()
        })
        .collect();
    item.push(pb::HistoryItem {
        key: "_step".into(),
        value_json: step.to_string(),
        ..Default::default()
    });
    pb::Record {
        record_type: Some(pb::record::RecordType::History(pb::HistoryRecord {
            item,
            step: Some(pb::HistoryStep { num: step }),
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn each_image_of_a_logged_list_is_listed_under_its_index() {
    // As the W&B SDK logs `run.log({"samples": [wandb.Image(..), ..]})` (and a
    // single image beside it): the list's fields flattened under its key.
    let mut run = Run::new();
    for step in 0..2 {
        let files = format!(
            r#"["media/images/samples_{step}_a.png","media/images/samples_{step}_b.png",7]"#
        );
        run.apply(
            step as u64,
            &history(
                step,
                &[
                    ("", &["samples", "_type"], r#""images/separated""#),
                    ("", &["samples", "count"], "3"),
                    ("", &["samples", "filenames"], &files),
                    ("", &["samples", "captions"], r#"["first","second"]"#),
                    ("", &["img", "_type"], r#""image-file""#),
                    ("", &["img", "path"], r#""media/images/img.png""#),
                    ("loss", &[], "0.5"),
                ],
            ),
        );
    }
    let keys: Vec<&str> = run.media.keys().map(String::as_str).collect();
    assert_eq!(keys, ["img", "samples[0]", "samples[1]"], "7 is no path");
    let second = &run.media["samples[1]"];
    assert_eq!(second.len(), 2);
    assert_eq!(second[1].step, 1.0);
    assert_eq!(second[1].path, "media/images/samples_1_b.png");
    assert_eq!(second[1].caption, "second");
    assert_eq!(run.media["samples[0]"][0].caption, "first");
    // The list's fields get no chart.
    assert!(run.is_hidden("samples.count"));
    // A list that is not one, or has no files, is no image.
    let mut run = Run::new();
    run.apply(
        0,
        &history(
            0,
            &[
                ("", &["x", "_type"], r#""images/separated""#),
                ("", &["x", "filenames"], r#"{"a":1}"#),
                ("", &["y", "_type"], r#""images/separated""#),
            ],
        ),
    );
    assert!(run.media.is_empty(), "{:?}", run.media);
}

#[test]
fn tree_updates_and_removes() {
    let mut t = Tree::default();
    let item = |k: &'static str, v: &'static str| wire::Item {
        key: k,
        nested: wire::smallvec_lite::Path::default(),
        value: ItemValue::Json(v),
    };
    let mut nested = wire::Item {
        key: "",
        nested: wire::smallvec_lite::Path::default(),
        value: ItemValue::Json("1"),
    };
    nested.nested.push("final");
    nested.nested.push("loss");
    t.update(&item("a", "1"));
    t.update(&nested);
    t.update(&item("a", "NaN"));
    assert_eq!(
        Value::Object(t.to_json()),
        serde_json::json!({"a": "NaN", "final": {"loss": 1}})
    );
    t.remove(&item("final", ""));
    assert_eq!(Value::Object(t.to_json()), serde_json::json!({"a": "NaN"}));
}

#[test]
fn removing_a_subtree_leaves_its_siblings() {
    let mut t = Tree::default();
    let leaf = |a: &'static str, b: &'static str| {
        let mut it = wire::Item {
            key: "",
            nested: wire::smallvec_lite::Path::default(),
            value: ItemValue::Json("1"),
        };
        it.nested.push(a);
        it.nested.push(b);
        it
    };
    t.update(&leaf("a", "x"));
    t.update(&leaf("a", "y"));
    t.update(&leaf("ab", "x"));
    let mut a = wire::Item {
        key: "a",
        nested: wire::smallvec_lite::Path::default(),
        value: ItemValue::Null,
    };
    t.remove(&a);
    assert_eq!(
        Value::Object(t.to_json()),
        serde_json::json!({"ab": {"x": 1}})
    );
    a.key = "ab";
    t.remove(&a);
    assert!(t.is_empty());
}

#[test]
fn hostile_depth_is_capped() {
    let names: Vec<String> = (0..100_000).map(|i| format!("k{i}")).collect();
    let mut deep = wire::Item {
        key: "",
        nested: wire::smallvec_lite::Path::default(),
        value: ItemValue::Json("1"),
    };
    for n in &names {
        deep.nested.push(n);
    }
    let mut t = Tree::default();
    t.update(&deep);
    let json = Value::Object(t.to_json());
    let mut depth = 0;
    let mut v = &json;
    while let Some((_, next)) = v.as_object().and_then(|o| o.iter().next()) {
        depth += 1;
        v = next;
    }
    assert_eq!(depth, MAX_DEPTH);
    fn leaves(v: &Value) -> usize {
        match v {
            Value::Object(o) => o.values().map(leaves).sum(),
            _ => 1,
        }
    }
    assert_eq!(leaves(&json), 1);
    t.remove(&deep);
    assert!(t.to_json().is_empty());
}

/// The run's step is the last `_step` as logged, past 2^53 too (a
/// `time.time_ns()` step is not its nearest double).
#[test]
fn the_run_step_is_exact_past_a_doubles_reach() {
    let mut run = Run::new();
    for (num, step) in [(1, "9007199254740992"), (2, "9007199254740993")] {
        let rec = leet_format::synth::history_record(num, &[("_step", step)]);
        run.apply(num as u64 * 100, &rec);
    }
    assert_eq!(run.step(), 9_007_199_254_740_993);
}

/// As W&B's summary (the SDK's own reading of it after each step): a change at a
/// path under a value set whole replaces that value (`nest = {...}` then
/// `nest.a = 7` reads `{"a": 7}`); a removal under a value set whole changes
/// nothing (`del n2["a"]` after `n2 = {...}`); under keys set one by one it
/// removes as always.
#[test]
fn a_change_under_a_value_set_whole_replaces_it_as_w_b_does() {
    use prost::Message as _;
    let summary = |update: Vec<leet_format::pb::SummaryItem>,
                   remove: Vec<leet_format::pb::SummaryItem>| {
        leet_format::pb::Record {
            record_type: Some(leet_format::pb::record::RecordType::Summary(
                leet_format::pb::SummaryRecord {
                    update,
                    remove,
                    ..Default::default()
                },
            )),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let at = |path: &[&str], v: &str| leet_format::pb::SummaryItem {
        nested_key: path.iter().map(|s| (*s).to_owned()).collect(),
        value_json: v.into(),
        ..Default::default()
    };
    let key = |k: &str, v: &str| leet_format::pb::SummaryItem {
        key: k.into(),
        value_json: v.into(),
        ..Default::default()
    };
    let json = |run: &Run| Value::Object(run.summary.to_json());
    let mut run = Run::new();
    run.apply(
        0,
        &summary(
            vec![key("nest", r#"{"a": 1, "b": {"c": 2, "d": 4}, "e": 5}"#)],
            vec![],
        ),
    );
    run.apply(1, &summary(vec![at(&["nest", "a"], "7")], vec![]));
    assert_eq!(json(&run), serde_json::json!({"nest": {"a": 7}}));
    run.apply(2, &summary(vec![key("n2", r#"{"a": 1, "b": 2}"#)], vec![]));
    run.apply(3, &summary(vec![], vec![at(&["n2", "a"], "")]));
    assert_eq!(json(&run)["n2"], serde_json::json!({"a": 1, "b": 2}));
    run.apply(4, &summary(vec![at(&["n2", "z"], "3")], vec![]));
    assert_eq!(json(&run)["n2"], serde_json::json!({"z": 3}));
    // Keys set one by one: a removal takes one out.
    run.apply(
        5,
        &summary(vec![at(&["m", "x"], "1"), at(&["m", "y"], "2")], vec![]),
    );
    run.apply(6, &summary(vec![], vec![at(&["m", "x"], "")]));
    assert_eq!(json(&run)["m"], serde_json::json!({"y": 2}));
    // Set whole again: the new value, whole.
    run.apply(7, &summary(vec![key("nest", r#"{"q": 1}"#)], vec![]));
    assert_eq!(json(&run)["nest"], serde_json::json!({"q": 1}));
}

/// `bigint = 2**53 + i` and `hugeint = 2**63 - 1 - i` at steps 0..30, folded
/// one record at a time (`batched`: all in one batch, as a reader hands them):
/// their doubles tie (…+27, +28 and +29 are all held as …+28), the statistics
/// name the steps of the exact extremes and keep their values as logged.
#[test]
fn the_statistics_of_integers_past_2_53_name_the_exact_extremes_step() {
    for batched in [false, true] {
        let mut run = Run::new();
        let mut dec = leet_format::decoder::Decoder::new();
        for i in 0..30i64 {
            let (step, big, huge) = (
                i.to_string(),
                ((1i64 << 53) + i).to_string(),
                (i64::MAX - i).to_string(),
            );
            let items = [
                ("_step", step.as_str()),
                ("bigint", big.as_str()),
                ("loss", "0.5"),
                ("hugeint", huge.as_str()),
            ];
            let rec = leet_format::synth::history_record(i + 1, &items);
            let at = (i as u64 + 1) * 100;
            if batched {
                dec.record(at, &rec);
            } else {
                run.apply(at, &rec);
            }
        }
        if batched {
            run.fold(&dec.take());
        }
        // The double's first largest is step 27's (held as …+28, as +29 is).
        let held = run.metrics.get("bigint").unwrap().stats();
        assert_eq!(held.max.map(|p| p.0), Some(27.0));
        let big = run.stats_of("bigint").unwrap();
        assert_eq!(big.max.map(|p| p.0), Some(29.0), "batched {batched}");
        assert_eq!(big.max_exact, Some((1i128 << 53) + 29));
        assert_eq!(big.min.map(|p| p.0), Some(0.0));
        assert_eq!(big.min_exact, Some(1i128 << 53));
        let huge = run.stats_of("hugeint").unwrap();
        assert_eq!(huge.min.map(|p| p.0), Some(29.0), "batched {batched}");
        assert_eq!(huge.min_exact, Some(i128::from(i64::MAX) - 29));
        assert_eq!(huge.max.map(|p| p.0), Some(0.0));
        // A plain metric's statistics are its series'.
        let loss = run.stats_of("loss").unwrap();
        assert_eq!(loss, run.metrics.get("loss").unwrap().stats());
        assert_eq!(loss.max_exact, None);
    }
}

#[test]
fn past_the_images_kept_per_key_the_older_ones_are_counted() {
    let mut run = Run::new();
    let extra = 3;
    for step in 0..(MEDIA_PER_KEY + extra) as i64 {
        let path = format!(r#""media/images/img_{step}.png""#);
        run.apply(
            step as u64,
            &history(
                step,
                &[
                    ("", &["img", "_type"], r#""image-file""#),
                    ("", &["img", "path"], &path),
                ],
            ),
        );
    }
    let imgs = &run.media["img"];
    assert_eq!(imgs.len(), MEDIA_PER_KEY);
    assert_eq!(imgs[0].step, extra as f64, "the newest kept");
    assert_eq!(run.media_dropped.get("img"), Some(&(extra as u64)));
}
