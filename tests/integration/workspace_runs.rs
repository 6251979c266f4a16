//! The generated workspace (`tests/common/runs.rs`, on `decode::synth::run_file`)
//! reads as it says: through the run index (`source::index::scan`) and through
//! `leet inspect --summary`, every run with its state, config, summary, steps and
//! no damage.

use crate::common;

use std::path::Path;

use common::runs::{add_run, state_of, write_workspace, GeneratedRun, LRS, STEPS};
use leet::decode::synth::curve;
use leet::msg::{IndexState, RunIndexEntry};
use leet::source::index::scan;
use serde_json::{json, Value};

fn state_name(s: IndexState) -> &'static str {
    match s {
        IndexState::Running => "running",
        IndexState::Finished => "finished",
        IndexState::Failed => "failed",
        IndexState::Crashed => "crashed",
        IndexState::Unknown => "unknown",
    }
}

fn check(e: &RunIndexEntry, r: &GeneratedRun) {
    let what = format!("run {} ({})", r.index, r.dir.display());
    assert_eq!(e.dir, std::fs::canonicalize(&r.dir).unwrap(), "{what}");
    assert_eq!(e.run_id, r.id, "{what}");
    assert_eq!(e.display_name, r.display_name, "{what}");
    assert_eq!(e.project, "leet-workspace", "{what}");
    assert_eq!(state_name(e.state), r.state, "{what}");
    assert_eq!(e.resumed, r.resumed, "{what}");
    assert_eq!((e.damage, e.incomplete_tail_bytes), (0, 0), "{what}");
    assert_eq!(e.error, None, "{what}");
    assert_eq!(e.history_rows, STEPS, "{what}");
    let last = r.first_step + STEPS - 1;
    assert_eq!(e.last_step, Some(i64::try_from(last).unwrap()), "{what}");
    assert_eq!(
        e.start_time.map(f64::floor),
        Some(r.start_time.floor()),
        "{what}"
    );
    assert_eq!(
        Value::Object(e.config.clone()),
        json!({"lr": r.lr, "seed": r.seed, "optimizer": r.optimizer,
               "model": {"layers": r.layers}}),
        "{what}"
    );
    for m in ["loss", "acc", "val/loss"] {
        assert_eq!(
            e.summary[m].as_f64(),
            Some(curve(m, last, r.lr, r.seed)),
            "{what} {m}"
        );
    }
    assert_eq!(e.summary["_step"], json!(last), "{what}");
    assert_eq!(
        e.tags,
        if r.seed == 0 {
            vec!["baseline"]
        } else {
            vec![]
        }
    );
}

#[test]
fn generated_workspace_indexes_as_documented() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("wandb");
    let runs = write_workspace(&w, 20);
    assert_eq!(runs.len(), 20);

    // The documented mix for n = 20.
    let with = |s: &str| -> Vec<usize> {
        runs.iter()
            .filter(|r| r.state == s)
            .map(|r| r.index)
            .collect()
    };
    assert_eq!(with("running"), [19]);
    assert_eq!(with("crashed"), [2, 4, 14]);
    assert_eq!(with("failed"), [7, 17]);
    assert_eq!(with("finished").len(), 14);
    let resumed: Vec<&GeneratedRun> = runs.iter().filter(|r| r.resumed).collect();
    assert_eq!(resumed.len(), 1);
    assert_eq!((resumed[0].index, resumed[0].first_step), (18, STEPS));
    assert_eq!(resumed[0].id, runs[2].id);
    assert_ne!(runs[2].dir, runs[18].dir);
    assert!((0..18).all(|i| state_of(i, 20) == runs[i].state || i == 2));
    // Each lr and seed of the mix occurs; names and times are distinct.
    for lr in LRS {
        assert!(runs.iter().any(|r| r.lr == lr), "{lr}");
    }
    for seed in 0..=2 {
        assert!(runs.iter().any(|r| r.seed == seed), "{seed}");
    }
    assert!(runs.windows(2).all(|p| p[0].start_time < p[1].start_time));
    let mut names: Vec<_> = runs.iter().map(|r| r.dir.clone()).collect();
    names.dedup();
    assert_eq!(names.len(), 20);
    for r in &runs {
        let name = r.dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("run-")
                && name.ends_with(&format!("-{}", r.id))
                && name.len() == 4 + 15 + 1 + 8,
            "{name}"
        );
        assert_eq!(r.file, r.dir.join(format!("run-{}.wandb", r.id)));
    }
    #[cfg(unix)]
    assert_eq!(
        std::fs::read_link(w.join("latest-run")).unwrap(),
        Path::new(runs[19].dir.file_name().unwrap())
    );

    // The index reads each run as generated, newest first.
    let cache = t.path().join("cache");
    let entries = scan(&w, &cache);
    assert_eq!(entries.len(), 20);
    for (e, r) in entries.iter().zip(runs.iter().rev()) {
        check(e, r);
    }
    // e.g. the runs a filter `cfg.lr>=1e-3 state:finished` matches.
    let expect = runs
        .iter()
        .filter(|r| r.lr >= 1e-3 && r.state == "finished")
        .count();
    let got = entries
        .iter()
        .filter(|e| e.config["lr"].as_f64() >= Some(1e-3) && e.state == IndexState::Finished)
        .count();
    assert_eq!((got, expect), (6, 6));

    // A run added later is the newest, finished, and latest-run links it.
    let added = add_run(&w, 20);
    assert_eq!(added.state, "finished");
    let entries = scan(&w, &cache);
    assert_eq!(entries.len(), 21);
    check(&entries[0], &added);
    #[cfg(unix)]
    assert_eq!(
        std::fs::read_link(w.join("latest-run")).unwrap(),
        Path::new(added.dir.file_name().unwrap())
    );
}

#[test]
fn a_generated_run_inspects_with_no_damage() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("wandb");
    let runs = write_workspace(&w, 8);
    for r in [&runs[6], &runs[7]] {
        let out = crate::common::isolated::leet()
            .args(["inspect", "--summary", "--json"])
            .arg(&r.file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["state"], r.state, "{}", r.index);
        assert_eq!(v["run_id"], r.id.as_str());
        assert_eq!(v["name"], r.display_name.as_str());
        assert_eq!(v["config"]["lr"], json!(r.lr));
        assert_eq!(
            v["corruption"],
            json!({"skipped_spans": 0, "skipped_bytes": 0, "bad_records": 0,
                   "duplicate_bytes": 0, "incomplete_tail_bytes": 0, "appended_file": null,
                   "spans": []})
        );
        let last = r.first_step + STEPS - 1;
        assert_eq!(v["step"], json!(last));
        assert_eq!(
            v["summary"]["loss"],
            json!(curve("loss", last, r.lr, r.seed))
        );
    }
    // Run 6 of 8 is the resumed segment (finished), run 7 the running one.
    assert!(runs[6].resumed && runs[6].state == "finished");
    assert_eq!(runs[7].state, "running");
}
