//! The real binary in a terminal (tmux): `leet URL` of a run, of a project, and
//! `--compare URL`.

use std::time::Duration;

use serde_json::{json, Value};

use super::server::{Fake, Mode};
use super::{common, fixture, parquet_of, run_object, viewer, KEY};

/// The tiny fixture served by a fake W&B server as a run in `state`: the
/// temporary home the pane runs in, the server, and the run's URL.
fn tiny_served(state: &str) -> (tempfile::TempDir, Fake, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object(state), vec![parquet_of(&file, tmp.path())]);
    let url = format!("{}/ent/proj/runs/tiny0001", fake.addr);
    (tmp, fake, url)
}

#[test]
fn leet_url_shows_the_run_and_follows_it_while_it_runs() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("running");
    let pane = viewer::Pane::start("follow", tmp.path(), KEY, &[&url]);
    let limit = Duration::from_secs(60);
    pane.wait_for("Metrics [1-3 of 3]", limit);
    // The key is in the environment the pane's shell gave leet, not in leet's
    // arguments, which anyone on the host can list.
    let argv = pane.children_argv();
    assert!(argv.iter().any(|a| a.contains(&url)), "{argv:?}");
    assert!(!argv.iter().any(|a| a.contains(KEY)), "{argv:?}");
    // A new metric logged on the server after the open: the next poll brings it.
    fake.state.lock().expect("lock").live = vec![json!({"_step": 1000, "late_metric": 1.5})];
    pane.wait_for("late_metric", limit);
    assert!(!pane.screen().contains(KEY));
}

#[test]
fn leet_project_url_shows_its_runs_in_the_workspace() {
    if !common::have_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(Value::Null, vec![parquet_of(&file, tmp.path())]);
    let names = ["alpha", "bravo", "charlie", "delta", "echo"];
    fake.state.lock().expect("lock").runs = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut r = run_object("finished");
            r["name"] = json!(format!("id{i}"));
            r["displayName"] = json!(format!("run-{n}"));
            r["createdAt"] = json!(format!("2026-11-30T17:4{}:00Z", 9 - i));
            r
        })
        .collect();
    let pane = viewer::Pane::start(
        "project",
        tmp.path(),
        KEY,
        &[&format!("{}/ent/proj", fake.addr)],
    );
    let limit = Duration::from_secs(60);
    let mut screen = String::new();
    for n in names {
        screen = pane.wait_for(&format!("run-{n}"), limit);
    }
    assert!(!screen.contains(KEY));
    // Every run was asked for: its history is fetched in the background.
    let t0 = std::time::Instant::now();
    while names.len()
        > fake
            .seen()
            .matches("\"operationName\":\"RunParquetHistory\"")
            .count()
    {
        assert!(
            t0.elapsed() < limit,
            "not every run's history was asked for"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_remote_run_is_compared_beside_a_local_one() {
    if !common::have_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let mut run = run_object("finished");
    run["displayName"] = json!("from-the-server");
    let fake = Fake::start(run, vec![parquet_of(&file, tmp.path())]);
    let url = format!("{}/ent/proj/runs/tiny0001", fake.addr);
    let local = fixture("custom_step");
    let args = [local.to_str().expect("utf8"), "--compare", &url];
    let pane = viewer::Pane::start("compare", tmp.path(), KEY, &args);
    let screen = pane.wait_for("from-the-server", Duration::from_secs(60));
    assert!(!screen.contains(KEY));
    drop(pane);
    // And the other way round: the remote run, the local one beside it.
    let args = [url.as_str(), "--compare", local.to_str().expect("utf8")];
    let pane = viewer::Pane::start("compare-back", tmp.path(), KEY, &args);
    let screen = pane.wait_for("custom-step-run", Duration::from_secs(60));
    assert!(screen.contains("from-the-server"), "{screen}");
    assert!(!screen.contains(KEY));
}

#[test]
fn q_cancels_a_download_before_the_screen_opens() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("finished");
    fake.set_mode(Mode::SlowFiles(Duration::from_secs(25)));
    let pane = viewer::Pane::start("cancel", tmp.path(), KEY, &[&url]);
    let limit = Duration::from_secs(60);
    pane.wait_for("q or esc cancels", limit);
    pane.keys("q");
    let screen = pane.wait_for("EXIT:", limit);
    assert!(screen.contains("leet: cancelled"), "{screen}");
    assert!(screen.contains("EXIT:1"), "{screen}");
}

#[test]
fn the_download_s_progress_is_one_row_on_a_narrow_terminal() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("finished");
    fake.set_mode(Mode::SlowFiles(Duration::from_secs(25)));
    let pane = viewer::Pane::start_sized("narrow", (40, 20), tmp.path(), KEY, &[&url]);
    let limit = Duration::from_secs(60);
    // Its line was wider than the pane: it wrapped, and each update cleared
    // only the last row of the one before.
    let screen = pane.wait_for("leet: asking", limit);
    let rows: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), 1, "{screen}");
    assert!(
        rows[0].starts_with("leet: ") && rows[0].ends_with('…'),
        "{screen}"
    );
    pane.keys("q");
    pane.wait_for("EXIT:", limit);
}

#[test]
fn two_viewers_of_one_running_run_each_follow_it_into_a_file_of_their_own() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("running");
    let limit = Duration::from_secs(60);
    let one = viewer::Pane::start("twice-1", tmp.path(), KEY, &[&url]);
    one.wait_for("Metrics [1-3 of 3]", limit);
    let two = viewer::Pane::start("twice-2", tmp.path(), KEY, &[&url]);
    two.wait_for("Metrics [1-3 of 3]", limit);
    // Rows logged after both opened, over more than one poll.
    fake.state.lock().expect("lock").live = vec![json!({"_step": 1000, "late_metric": 1.5})];
    for pane in [&one, &two] {
        pane.wait_for("late_metric", limit);
    }
    fake.state
        .lock()
        .expect("lock")
        .live
        .push(json!({"_step": 1001, "later_metric": 2.5}));
    for pane in [&one, &two] {
        let screen = pane.wait_for("later_metric", limit);
        assert!(!screen.contains("corrupt"), "{screen}");
        assert!(!screen.contains("duplicated"), "{screen}");
    }
    let runs = tmp.path().join("cache/leet/remote-runs");
    let files: Vec<_> = super::files_under(&runs)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "wandb"))
        .collect();
    assert_eq!(files.len(), 2, "one file per viewer: {files:?}");
}

#[test]
fn a_signal_during_the_download_restores_the_terminal() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("finished");
    fake.set_mode(Mode::SlowFiles(Duration::from_secs(25)));
    let out = tmp.path().join("out.parquet");
    let out = out.to_str().expect("utf8");
    let cases: [(&str, &[&str], i32); 2] = [
        ("sigterm", &[&url], libc::SIGTERM),
        ("sigint", &["export", &url, "-o", out], libc::SIGINT),
    ];
    let limit = Duration::from_secs(60);
    for (name, args, sig) in cases {
        let pane = viewer::Pane::start(name, tmp.path(), KEY, args);
        pane.wait_for("q or esc cancels", limit);
        let pid = pane.leet_pid().expect("leet runs");
        // SAFETY: a signal to the leet process this test started.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let screen = pane.wait_for("TTY:", limit);
        assert!(
            screen.contains(&format!("EXIT:{}", 128 + sig)),
            "{name}: {screen}"
        );
        assert!(screen.contains("TTY:cooked"), "{name}: left raw: {screen}");
    }
}

#[test]
fn a_followed_run_whose_polls_fail_says_why_and_is_not_called_crashed() {
    if !common::have_tmux() {
        return;
    }
    let (tmp, fake, url) = tiny_served("running");
    let limit = Duration::from_secs(60);
    let pane = viewer::Pane::start("polls", tmp.path(), KEY, &[&url, "--stale-after", "1s"]);
    pane.wait_for("Metrics [1-3 of 3]", limit);
    // Quiet past the stale limit while the polls answer: maybe crashed.
    pane.wait_for("crashed?", limit);
    fake.set_mode(Mode::Status(500));
    let screen = pane.wait_for("HTTP 500", limit);
    assert!(screen.contains("polling the server"), "{screen}");
    assert!(!screen.contains("crashed?"), "{screen}");
    assert!(!screen.contains(KEY));
    // The server answers again: the error goes.
    fake.set_mode(Mode::Ok);
    let t0 = std::time::Instant::now();
    while pane.screen().contains("HTTP 500") {
        assert!(t0.elapsed() < limit, "{}", pane.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
}
