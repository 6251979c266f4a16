//! `leet inspect` against what W&B's own `wandb leet inspect` reads from each fixture.

use crate::common;

use common::{fixture_runs, json_diff, runs_dir, wandb_file};
use leet::decode::json::record_json;
use leet::decode::leveldb::Frame;
use leet::source::file::RunReader;
use serde_json::Value;

#[test]
fn summary_json_matches_reference_for_every_fixture_run() {
    for (name, dir) in fixture_runs() {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(runs_dir().join(format!("{name}.summary.json"))).unwrap(),
        )
        .unwrap();
        let (file, run) = leet::store::load(&dir).unwrap();
        // W&B's state of a run without an exit record depends on when it is read
        // (`crashed` once quiet for long): the references were taken as the runs
        // had just written their last record, so the state is decided then.
        let now = run.last_time.unwrap_or(0.0);
        let mut got = leet::inspect::summary_json_at(&file, &run, now);
        let got_obj = got.as_object_mut().unwrap();
        let corruption = got_obj.remove("corruption").unwrap();
        assert_eq!(corruption["skipped_spans"], 0, "{name}: {corruption}");
        let mut exp = expected.as_object().unwrap().clone();
        for k in ["file", "last_write"] {
            assert!(got_obj.remove(k).is_some(), "{name}: {k} missing");
            exp.remove(k);
        }
        if let Some(d) = json_diff(&name, &Value::Object(exp), &got) {
            panic!("{name}: summary differs: {d}");
        }
    }
}

#[test]
fn records_json_matches_reference_for_every_fixture_run() {
    const BODIES: [&str; 7] = [
        "run",
        "history",
        "summary",
        "config",
        "stats",
        "output_raw",
        "exit",
    ];
    for (name, dir) in fixture_runs() {
        let expected: Vec<Value> =
            std::fs::read_to_string(runs_dir().join(format!("{name}.records.jsonl")))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        let mut got = Vec::new();
        let mut reader = RunReader::open(&wandb_file(&dir)).unwrap();
        loop {
            let p = reader
                .poll_frames(|f| match f {
                    Frame::Record { payload, .. } => got.push(record_json(&payload).unwrap()),
                    Frame::Skip(s) => panic!("{name}: unexpected skip {s:?}"),
                })
                .unwrap();
            if !p.more {
                break;
            }
        }
        let key = |v: &Value| {
            (
                v["num"].as_i64().unwrap(),
                v["type"].as_str().unwrap().to_owned(),
            )
        };
        let want: Vec<_> = expected.iter().map(key).collect();
        let have: Vec<_> = got.iter().map(key).collect();
        assert_eq!(have, want, "{name}: (num, type) sequence differs");
        for (e, g) in expected.iter().zip(&got) {
            let t = e["type"].as_str().unwrap();
            if BODIES.contains(&t) {
                if let Some(d) = json_diff(&format!("{name}#{}", e["num"]), &e[t], &g[t]) {
                    panic!("{name}: {t} body differs: {d}");
                }
            }
        }
    }
}

/// `inspect` as the user runs it, stdout and stderr.
fn inspect_bytes(
    opts: &leet::inspect::InspectOptions,
    reference: bool,
) -> (Result<(), String>, Vec<u8>, Vec<u8>) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let r = if reference {
        leet::inspect::run_reference(opts, &mut out, &mut err)
    } else {
        leet::inspect::run(opts, &mut out, &mut err)
    };
    (r.map_err(|e| e.to_string()), out, err)
}

#[test]
fn records_json_is_byte_identical_to_the_general_path_for_every_fixture_run() {
    for (name, dir) in fixture_runs() {
        for follow in [false, true] {
            let opts = leet::inspect::InspectOptions {
                path: dir.clone(),
                json: true,
                follow,
                // The crashed run has no exit record: end the follow when idle.
                idle_timeout: Some(std::time::Duration::ZERO),
                ..Default::default()
            };
            let (want_r, want_out, want_err) = inspect_bytes(&opts, true);
            let (got_r, got_out, got_err) = inspect_bytes(&opts, false);
            assert_eq!(got_r, want_r, "{name} follow={follow}");
            assert!(!want_out.is_empty(), "{name}: nothing printed");
            assert!(
                got_out == want_out,
                "{name} follow={follow}: stdout differs ({} vs {} bytes)",
                got_out.len(),
                want_out.len()
            );
            assert_eq!(
                String::from_utf8_lossy(&got_err),
                String::from_utf8_lossy(&want_err),
                "{name} follow={follow}: stderr"
            );
        }
    }
}
