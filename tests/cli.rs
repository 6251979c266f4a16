//! The `leet` binary's non-interactive commands: exit codes, errors naming the file,
//! damaged files, `--follow`.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{runs_dir, wandb_file};

fn leet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leet"))
}

#[test]
fn missing_path_fails_with_one_line_naming_it() {
    let out = leet()
        .args(["inspect", "/nonexistent/run.wandb"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/run.wandb"), "{err}");
}

#[test]
fn a_missing_compare_run_fails_before_the_terminal_changes() {
    let tiny = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny");
    let out = leet()
        .arg(&tiny)
        .args(["--compare", "/nonexistent/other"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "no terminal setup was written");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/other"), "{err}");
    // --compare and --live do not go together.
    let out = leet().args(["--live", "--compare", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn not_a_wandb_file_fails_naming_file_and_cause() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.wandb");
    std::fs::write(&p, b"hello, this is not a run").unwrap();
    let out = leet().args(["inspect", "--json"]).arg(&p).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("notes.wandb") && err.contains("bad header"),
        "{err}"
    );
}

#[test]
fn empty_directory_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("wandb")).unwrap();
    let out = leet().arg("inspect").arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no .wandb run found") && err.contains("looked in"),
        "{err}"
    );
}

#[test]
fn project_directory_resolves_to_latest_run() {
    let out = leet()
        .args(["inspect", "--summary", "--json"])
        .current_dir(runs_dir().join("multi"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["run_id"], "multi005");
}

#[test]
fn damaged_file_prints_intact_records_exits_zero_and_reports() {
    let src = std::fs::read(wandb_file(
        &runs_dir().join("many_metrics/wandb/latest-run"),
    ))
    .unwrap();
    let mut d = src.clone();
    for b in &mut d[40_000..40_100] {
        *b ^= 0x5A;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run-x.wandb");
    std::fs::write(&p, &d).unwrap();
    let out = leet().args(["inspect", "--json"]).arg(&p).output().unwrap();
    assert!(out.status.success());
    let lines = String::from_utf8(out.stdout).unwrap().lines().count();
    assert!(lines > 40 && lines < 81, "{lines}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("run-x.wandb") && err.contains("checksum mismatch"),
        "{err}"
    );
    let out = leet()
        .args(["inspect", "--summary", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["corruption"]["skipped_spans"].as_u64().unwrap() >= 1);
    assert_eq!(v["state"], "finished");
}

#[test]
fn crashed_run_is_incomplete_not_an_error() {
    let out = leet()
        .args(["inspect", "--summary"])
        .arg(runs_dir().join("crashed"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("incomplete"), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("state:      running") && text.contains("step:       250"),
        "{text}"
    );
}

#[test]
fn follow_prints_records_as_the_file_grows_until_exit() {
    let src = std::fs::read(wandb_file(&runs_dir().join("tiny/wandb/latest-run"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run-grow.wandb");
    let half = src.len() / 2;
    std::fs::write(&p, &src[..half]).unwrap();
    let child = leet()
        .args(["inspect", "--json", "--follow", "--idle-timeout", "20"])
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(&src[half..]).unwrap();
    drop(f);
    // It stops by itself at the exit record, well before the idle timeout.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 180);
    assert!(text.lines().last().unwrap().contains("\"type\":\"exit\""));
}
