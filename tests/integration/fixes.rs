//! Rough edges found side by side with `wandb leet` (issue 13): a file that is not a
//! `.wandb` log is refused before the terminal changes; `inspect --summary` and the
//! viewer call a quiet run without an exit record the same; the help overlay's
//! scroll stays within its lines.

use crate::common;

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Stdio;

use crossterm::event::KeyCode;
use leet::msg::{IndexState, Msg};
use leet::ui::{App, LiveState, Options, Overlay};

/// The viewer on `path`, with no controlling terminal (its own session) and
/// stdout a pipe: whatever it says before it would set up the terminal, it says
/// on stderr; past that point it fails to open `/dev/tty`.
fn viewer(path: &Path) -> std::process::Output {
    let mut cmd = crate::common::isolated::leet();
    cmd.arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid is async-signal-safe; it only detaches the child from the
    // test's terminal, so a test run from a terminal never draws on it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn a_file_that_is_not_a_wandb_log_fails_at_once_naming_the_file_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0; 64]);
    let random: Vec<u8> = (0..4096u32)
        .map(|i| u8::try_from(i.wrapping_mul(2_654_435_761) >> 24).unwrap())
        .collect();
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "notes.txt",
            b"hello, this is text\n".to_vec(),
            "does not start with ':W&B'",
        ),
        ("noise.bin", random, "does not start with ':W&B'"),
        ("image.png", png, "does not start with ':W&B'"),
        (
            "magic.wandb",
            b":W&B\x00\x00\x00rest".to_vec(),
            "magic 0xBEE1",
        ),
        (
            "version.wandb",
            b":W&B\xe1\xbe\x03rest".to_vec(),
            "store version 3",
        ),
        // Shorter than the header, and already not a prefix of it.
        ("short.wandb", b"ab".to_vec(), "does not start with ':W&B'"),
    ];
    for (name, bytes, cause) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = viewer(&p);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{name}: no terminal setup was written"
        );
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(cause), "{name}: {err}");
        assert!(
            !err.contains("terminal"),
            "{name}: refused before the terminal: {err}"
        );
    }
}

#[test]
fn the_viewer_with_its_output_not_on_a_terminal_refuses_before_writing() {
    let run = common::runs_dir().join("tiny");
    let out = viewer(&run);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Not one byte of screen (the alternate screen, the mouse modes) in the pipe.
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("standard output is not a terminal")
            && err.contains("leet export")
            && err.contains("ssh -t"),
        "{err}"
    );
}

#[test]
fn an_empty_file_or_a_header_being_written_is_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("empty.wandb", &b""[..]), ("begun.wandb", &b":W&"[..])] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = viewer(&p);
        let err = String::from_utf8(out.stderr).unwrap();
        // Past the check: the viewer went on to set up the terminal, which a
        // process without one cannot.
        assert!(err.contains("cannot set up the terminal"), "{name}: {err}");
        assert!(!err.contains("bad header"), "{name}: {err}");
    }
}

/// `leet inspect ARGS…` on `path`: exit status, stdout.
fn inspect(args: &[&str], path: &Path) -> (Option<i32>, String) {
    let out = crate::common::isolated::leet()
        .arg("inspect")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// A generated workspace of 6 runs: the newest running (records and mtime now),
/// run 2 crashed (no exit record, mtime an hour ago).
fn workspace() -> (tempfile::TempDir, Vec<common::runs::GeneratedRun>) {
    let dir = tempfile::tempdir().unwrap();
    let runs = common::runs::write_workspace(&dir.path().join("wandb"), 6);
    (dir, runs)
}

#[test]
fn inspect_summary_calls_a_quiet_run_without_exit_record_crashed_as_the_viewer_does() {
    let (_dir, runs) = workspace();
    let (crashed, running) = (&runs[2], &runs[5]);
    assert_eq!((crashed.state, running.state), ("crashed", "running"));
    let (code, text) = inspect(&["--summary"], &crashed.file);
    assert_eq!(code, Some(0));
    assert!(
        text.contains("state:      crashed? (no exit record, quiet 1h 0"),
        "{text}"
    );
    let (_, json) = inspect(&["--summary", "--json"], &crashed.file);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["state"], "crashed");
    let (_, text) = inspect(&["--summary"], &running.file);
    assert!(text.contains("state:      running (quiet "), "{text}");
    let (_, json) = inspect(&["--summary", "--json"], &running.file);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["state"], "running");
    // The real fixture: its records are from 2026-11-30, long past the stale limit.
    let (_, text) = inspect(&["--summary"], &common::runs_dir().join("crashed"));
    assert!(
        text.contains("state:      crashed? (no exit record, quiet "),
        "{text}"
    );
}

#[test]
fn inspect_and_the_viewer_agree_on_the_state_at_the_same_moment() {
    let (_dir, runs) = workspace();
    for run in [&runs[2], &runs[5]] {
        let (file, loaded) = leet::store::load(&run.file).unwrap();
        let mtime = std::fs::metadata(&file)
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let last = loaded.last_time.unwrap().min(mtime);
        // Just after the last sign of life, just before the stale limit, past it.
        for (after, want) in [
            (10.0, IndexState::Running),
            (110.0, IndexState::Running),
            (130.0, IndexState::Crashed),
            (7200.0, IndexState::Crashed),
        ] {
            let now = last + after;
            let (state, quiet) = leet::inspect::state_at(&file, &loaded, now);
            assert_eq!(state, want, "{} at +{after}", run.id);
            assert!((quiet.unwrap() - after).abs() < 1e-6, "{quiet:?}");
            let v = leet::inspect::summary_json_at(&file, &loaded, now);
            assert_eq!(v["state"], want.as_str());
            // The viewer, on the same file, at the same moment (the defaults: the
            // stale limit is the same 120 s).
            let (_, batch) = leet::source::tail::read_batch(&run.file).unwrap();
            let mut app = App::new(Options::default());
            app.update(Msg::Resize(120, 40));
            app.update(Msg::Opened {
                path: file.clone(),
                len: batch.file_len,
                modified: Some(mtime),
            });
            app.update(Msg::Run(batch));
            app.update(Msg::Tick(now));
            let viewer = match app.live_state() {
                LiveState::Live | LiveState::Running(_) => IndexState::Running,
                LiveState::MaybeCrashed(_) => IndexState::Crashed,
                other => panic!("{}: {other:?}", run.id),
            };
            assert_eq!(viewer, want, "viewer, {} at +{after}", run.id);
        }
    }
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect()
}

fn help_scroll(app: &App) -> usize {
    match app.overlay {
        Overlay::Help { scroll } => scroll,
        _ => panic!("help is not open"),
    }
}

#[test]
fn help_end_then_up_or_pgup_scrolls_back_at_once() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = App::new(Options::default());
        app.update(Msg::Resize(w, h));
        app.update(Msg::char('h'));
        let max = app.screen.limits.help_max;
        assert!(max > 0, "the help is longer than {h} rows");
        app.update(Msg::key(KeyCode::End));
        assert_eq!(help_scroll(&app), max, "end: the last line on the last row");
        // As drawn: the last line is shown, and nothing is left below it.
        let s = screen(&app, w, h);
        assert!(
            s.contains("Suspend to the shell") && s.contains("↑ (up/pgup)"),
            "{s}"
        );
        app.update(Msg::key(KeyCode::Up));
        let s = screen(&app, w, h);
        assert!(
            !s.contains("Suspend to the shell") && s.contains("↓ more"),
            "{s}"
        );
        app.update(Msg::key(KeyCode::End));
        app.update(Msg::key(KeyCode::Up));
        assert_eq!(help_scroll(&app), max - 1, "up moves at once after end");
        app.update(Msg::key(KeyCode::End));
        app.update(Msg::key(KeyCode::PageUp));
        assert_eq!(help_scroll(&app), max.saturating_sub(10), "pgup after end");
        // Down and pgdown never go past the end.
        app.update(Msg::key(KeyCode::End));
        app.update(Msg::key(KeyCode::Down));
        app.update(Msg::key(KeyCode::PageDown));
        assert_eq!(help_scroll(&app), max);
        app.update(Msg::key(KeyCode::Home));
        assert_eq!(help_scroll(&app), 0);
    }
}

#[test]
fn help_scroll_follows_a_resize() {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(80, 24));
    app.update(Msg::char('h'));
    app.update(Msg::key(KeyCode::End));
    let small = help_scroll(&app);
    // Taller: fewer lines are hidden, and the offset shrinks with them.
    app.update(Msg::Resize(80, 60));
    let tall = app.screen.limits.help_max;
    assert!(tall < small, "{tall} < {small}");
    assert_eq!(help_scroll(&app), tall);
    app.update(Msg::key(KeyCode::Up));
    assert_eq!(help_scroll(&app), tall.saturating_sub(1));
}
