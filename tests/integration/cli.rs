//! The `leet` binary's non-interactive commands: exit codes, errors naming the file,
//! damaged files, `--follow`.

use crate::common;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{runs_dir, wandb_file};

fn leet() -> Command {
    crate::common::isolated::leet()
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

/// A run compared with itself (under another spelling too) or twice would be
/// drawn twice under one name: refused before the terminal changes.
#[test]
fn a_run_compared_with_itself_or_twice_is_refused() {
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let tiny = runs.join("tiny");
    let multi = runs.join("multi/wandb/latest-run");
    let other = format!("{}/", multi.display());
    for args in [
        vec![
            tiny.display().to_string(),
            "--compare".into(),
            tiny.display().to_string(),
        ],
        vec![
            tiny.display().to_string(),
            "--compare".into(),
            multi.display().to_string(),
            "--compare".into(),
            other,
        ],
    ] {
        let out = leet().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "no terminal setup was written");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("that run is drawn already"), "{err}");
    }
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
        // No exit record, and its records are long past the stale limit (issue 13:
        // as the viewer says it).
        text.contains("state:      crashed? (no exit record, quiet ")
            && text.contains("step:       250"),
        "{text}"
    );
}

/// The text summary lists config and summary keys in the overview's order (by
/// key, numbers as numbers), not in the order the run first logged them.
#[test]
fn the_text_summary_lists_keys_in_order() {
    let out = leet()
        .args(["inspect", "--summary"])
        .arg(runs_dir().join("many_metrics"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for section in ["\nconfig:\n", "\nsummary:\n"] {
        let body = text.split(section).nth(1).unwrap_or_default();
        let keys: Vec<&str> = body
            .lines()
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.trim().split(" = ").next())
            .collect();
        assert!(keys.len() > 1, "{section}: {keys:?}");
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| leet_text::natural_cmp(a, b));
        assert_eq!(keys, sorted, "{section}");
    }
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

/// Wait for `child` (its stdout and stderr read meanwhile, so a full pipe cannot
/// stall it) with a deadline: a hang is a failure, not a stuck test.
fn wait_within(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    use std::io::Read as _;
    let reader = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                r.read_to_end(&mut buf).unwrap();
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|s| Box::new(s) as _));
    let err = reader(child.stderr.take().map(|s| Box::new(s) as _));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&err.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Run `cmd` with piped output and a deadline.
fn output_within(cmd: &mut Command, limit: Duration) -> std::process::Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_within(child, limit)
}

#[test]
fn out_of_range_numbers_are_usage_errors_never_panics() {
    let tiny = runs_dir().join("tiny");
    let tiny = tiny.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        // Panicked in Duration::from_secs_f64 (exit 101).
        (
            &["inspect", "-f", "--idle-timeout", "NaN", tiny],
            "between 0s and 30d",
        ),
        (
            &["inspect", "-f", "--idle-timeout", "inf", tiny],
            "between 0s and 30d",
        ),
        (
            &["inspect", "-f", "--idle-timeout", "1e308", tiny],
            "between 0s and 30d",
        ),
        (
            &["inspect", "-f", "--idle-timeout=-1", tiny],
            "between 0s and 30d",
        ),
        (
            &["inspect", "-f", "--idle-timeout", "soon", tiny],
            "expected a duration such as 90s",
        ),
        (
            &["sample", "--interval", "99999999999999999h"],
            "between 100ms and 24h",
        ),
        (
            &["--live", "--interval", "99999999999999999h"],
            "between 100ms and 24h",
        ),
        (&["sample", "--interval", "NaN"], "between 100ms and 24h"),
        (&["sample", "--interval=-1s"], "between 100ms and 24h"),
        // Accepted before: a core spent sampling, flat lines drawn.
        (&["--live", "--interval", "1ms"], "between 100ms and 24h"),
        (
            &["sample", "--interval", "99ms", "--count", "1"],
            "between 100ms and 24h",
        ),
        (&["--live", "--window", "NaN"], "between 10s and 24h"),
        (&["--live", "--window", "inf"], "between 10s and 24h"),
        (&["--live", "--window", "0"], "between 10s and 24h"),
        (&["--live", "--window", "1e9"], "between 10s and 24h"),
        (
            &["--live", "--interval", "10m"],
            "at least twice the interval",
        ),
        (&["--max-points", "0", tiny], "0 is not in 64..=1048576"),
        (
            &["--max-points", "18446744073709551615", tiny],
            "is not in 64..=1048576",
        ),
        (
            &["--max-points", "99999999999999999999999", tiny],
            "invalid value",
        ),
        (&["--stale-after", "0", tiny], "between 1s and 30d"),
        (
            &["--stale-after", "99999999999", tiny],
            "between 1s and 30d",
        ),
        // The live monitor's options with a run: refused, not ignored unsaid.
        (
            &["--pid", "1", tiny],
            "--pid is an option of the live monitor",
        ),
        (
            &["--window", "10m", tiny],
            "--window is an option of the live monitor",
        ),
        (&["--interval", "5s", tiny], "it needs --live"),
        (&["--dcgm", tiny], "it needs --live"),
        (
            &["--prometheus", "http://127.0.0.1:1", tiny],
            "--prometheus is an option of the live monitor",
        ),
        (&["sample", "--count", "0"], "it must be at least 1"),
        (&["sample", "--pid", "0"], "0 is not in 1..=2147483647"),
        (
            &["sample", "--pid", "4294967295"],
            "is not in 1..=2147483647",
        ),
    ];
    for (args, want) in cases {
        let out = output_within(leet().args(*args), Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: terminal untouched");
    }
    // Eight runs beside one: refused, not the eighth silently dropped.
    let mut cmd = leet();
    cmd.arg(tiny);
    for _ in 0..8 {
        cmd.args(["--compare", tiny]);
    }
    let out = output_within(&mut cmd, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 7"));
    // A pid with no process behind it: said once, before any sample.
    let gone = {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let out = output_within(
        leet().args(["sample", "--count", "1", "--pid", &gone.to_string()]),
        Duration::from_secs(20),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no such process"), "{err}");
    assert!(out.stdout.is_empty(), "no sample printed");
    // `leet serve` the same, before it listens (it served the pid as exited).
    let out = output_within(
        leet().args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--pid",
            &gone.to_string(),
        ]),
        Duration::from_secs(20),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no such process"), "{err}");
}

#[test]
fn numbers_at_the_bounds_are_accepted() {
    // The crashed run has no exit record: --follow stops on the idle timeout, 0 at once.
    let out = output_within(
        leet()
            .args(["inspect", "--json", "--follow", "--idle-timeout", "0"])
            .arg(runs_dir().join("crashed")),
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    let out = output_within(
        leet().args(["sample", "--json", "--interval", "100ms", "--count", "2"]),
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

/// `leet args` with standard output on `/dev/full`.
fn to_dev_full(args: &[&str]) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut cmd = leet();
    cmd.args(args);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_within(child, Duration::from_secs(60))
}

#[test]
fn a_write_error_fails_with_one_line_naming_the_cause() {
    let tiny = runs_dir().join("tiny");
    let many = runs_dir().join("many_metrics");
    let (tiny, many) = (tiny.to_str().unwrap(), many.to_str().unwrap());
    for args in [
        &["--print-keymap"][..],
        &["inspect", "--summary", tiny],
        &["inspect", "--summary", "--json", tiny],
        &["inspect", "--json", many],
        &["inspect", tiny],
        &["sample", "--json", "--interval", "100ms", "--count", "2"],
    ] {
        let out = to_dev_full(args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("leet:")).collect();
        assert_eq!(
            ours,
            ["leet: cannot write to standard output: No space left on device (os error 28)"],
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `leet args` writing into a pipe whose reading end is already closed (what
/// `leet … | head -1` becomes once head has exited).
fn to_closed_pipe(args: &[&str]) -> std::process::Output {
    use std::os::fd::FromRawFd as _;
    let mut fds = [0; 2];
    // SAFETY: pipe writes two new descriptors into the array we own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are fresh and owned here alone.
    let (read, write) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(read);
    let mut cmd = leet();
    cmd.args(args);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_within(child, Duration::from_secs(60))
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt as _;
    let many = runs_dir().join("many_metrics");
    let many = many.to_str().unwrap();
    for args in [
        &["--print-keymap"][..],
        &["--help"],
        &["inspect", "--json", many],
        &["inspect", many],
        &["inspect", "--summary", many],
        &["inspect", "--summary", "--json", many],
        &["sample", "--json", "--interval", "100ms", "--count", "3"],
        &["sample", "--interval", "100ms", "--count", "3"],
    ] {
        let out = to_closed_pipe(args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            out.status.code() == Some(0) || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?} {err}",
            out.status
        );
        // The sampler may say which families this host lacks; nothing about the pipe.
        assert!(
            !err.contains("leet:") && !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        if args[0] != "sample" {
            assert!(err.is_empty(), "{args:?}: {err}");
        }
    }
}

/// A copy of many_metrics' run with a damaged span, at `name` in `dir`.
fn damaged_copy(dir: &std::path::Path, name: &std::ffi::OsStr) -> std::path::PathBuf {
    let mut d = std::fs::read(wandb_file(
        &runs_dir().join("many_metrics/wandb/latest-run"),
    ))
    .unwrap();
    for b in &mut d[40_000..40_100] {
        *b ^= 0x5A;
    }
    let p = dir.join(name);
    std::fs::write(&p, &d).unwrap();
    p
}

fn assert_no_control(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: control characters reach the terminal: {text:?}"
    );
}

#[test]
fn file_names_are_sanitized_in_every_message() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let evil = std::ffi::OsStr::from_bytes(b"\x1b]0;pwned\x07run-\x1b[31mx\x07.wandb");
    let p = damaged_copy(dir.path(), evil);
    for args in [
        &["inspect", "--json"][..],
        &["inspect"],
        &["inspect", "--summary"],
    ] {
        let out = leet().args(args).arg(&p).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_no_control(&format!("{args:?} stderr"), &out.stderr);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("run-x.wandb: skipped"), "{args:?}: {err}");
    }
    // Errors: a bad header, a missing file, an empty wandb directory.
    std::fs::write(&p, b"not a run").unwrap();
    let missing = dir.path().join(evil).join("gone.wandb");
    let project = dir.path().join(std::ffi::OsStr::from_bytes(b"proj\x1b[2J"));
    std::fs::create_dir_all(project.join("wandb")).unwrap();
    for (path, want, viewer) in [
        (&p, "run-x.wandb: bad header", false),
        (&missing, "Not a directory", true),
        (&project, "no .wandb run found", true),
    ] {
        let out = leet().arg("inspect").arg(path).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_no_control("inspect error", &out.stderr);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        // The viewer fails the same way, before the terminal changes (a bad header
        // is shown in the viewer itself).
        if !viewer {
            continue;
        }
        let out = leet().arg(path).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_no_control("viewer error", &out.stderr);
        assert!(out.stdout.is_empty());
    }
    // Arguments clap echoes back.
    let out = leet()
        .args(["--interval", "\x1b]0;x\x07", "--live"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_no_control("usage error", &out.stderr);
}

#[test]
fn a_symlink_loop_is_named_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    // wandb/ of a project, and latest-run inside a wandb directory, as loops too.
    let proj = dir.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    std::os::unix::fs::symlink(proj.join("wandb"), proj.join("wandb")).unwrap();
    let wandb = dir.path().join("other/wandb");
    std::fs::create_dir_all(&wandb).unwrap();
    std::os::unix::fs::symlink(wandb.join("latest-run"), wandb.join("latest-run")).unwrap();
    for (path, looked) in [(&a, false), (&proj, true), (&wandb, true)] {
        let out = leet().arg("inspect").arg(path).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            err.matches("Too many levels of symbolic links").count(),
            1,
            "{err}"
        );
        assert!(!err.contains("no such file"), "{err}");
        if looked {
            assert!(err.contains("no .wandb run found"), "{err}");
        }
    }
    // A path through a file is "not a directory", not missing.
    let file = dir.path().join("f.wandb");
    std::fs::write(&file, b"x").unwrap();
    let out = leet().arg("inspect").arg(file.join("x")).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("f.wandb/x: Not a directory"), "{err}");
    // A FIFO is not a run file (and reading one must not block).
    let fifo = dir.path().join("run.wandb");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = output_within(leet().arg("inspect").arg(&fifo), Duration::from_secs(20));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file or a directory"), "{err}");
}

/// `leet args` as an unprivileged user when the tests run as root (where file
/// modes do not deny reads), else as ourselves.
fn unprivileged(args: &[&std::ffi::OsStr]) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = leet();
    cmd.args(args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    cmd.output().unwrap()
}

#[test]
fn permission_denied_is_named_once() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("run-x.wandb");
    std::fs::copy(wandb_file(&runs_dir().join("tiny/wandb/latest-run")), &file).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir_all(locked.join("wandb")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("wandb")).unwrap();
    std::fs::set_permissions(proj.join("wandb"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let inspect = std::ffi::OsStr::new("inspect");
    for (path, want) in [
        (file.clone(), "run-x.wandb: Permission denied"),
        (locked.clone(), "locked: Permission denied"),
        (locked.join("wandb"), "wandb: Permission denied"),
        (proj.clone(), "wandb (Permission denied"),
    ] {
        let out = unprivileged(&[inspect, path.as_os_str()]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert_eq!(err.matches("Permission denied").count(), 1, "{err}");
        // (`.wandb (missing)` is right: proj has none.)
        assert!(
            !err.contains("/wandb (missing)") && !err.contains("no such file"),
            "{err}"
        );
    }
    // The key map: named the same way.
    let km = dir.path().join("keymap.toml");
    std::fs::write(&km, "[normal]\n").unwrap();
    std::fs::set_permissions(&km, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = unprivileged(&[
        std::ffi::OsStr::new("--print-keymap"),
        std::ffi::OsStr::new("--keymap"),
        km.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("Permission denied").count(), 1, "{err}");
}

#[test]
fn help_states_where_leet_looks_without_a_path() {
    let out = leet().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let at = |s: &str| {
        help.find(s)
            .unwrap_or_else(|| panic!("{s:?} not in {help}"))
    };
    // A PATH alone, else the current directory, else $WANDB_DIR, else an error.
    assert!(
        at("A PATH given is the only place looked at")
            < at("Without one: the current directory's runs")
            && at("the current directory's runs") < at("else those under $WANDB_DIR")
            && at("$WANDB_DIR") < at("else an error saying where it looked"),
        "{help}"
    );
}

#[test]
fn no_run_here_nor_under_wandb_dir_fails_naming_both_then_what_to_do_next() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-root");
    let out = leet()
        .current_dir(dir.path())
        .env("WANDB_DIR", &missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "no terminal setup was written");
    let err = String::from_utf8(out.stderr).unwrap();
    // The error on one line, what to do next on the second.
    assert_eq!(err.lines().count(), 2, "{err}");
    let next = err.lines().nth(1).unwrap();
    assert!(
        next.starts_with("leet: to go on, point leet at a run")
            && next.contains("WANDB_DIR")
            && next.contains("`leet --live`"),
        "{err}"
    );
    let here = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        err.starts_with(&format!(
            "leet: current directory {}: no .wandb run found (looked in: ",
            here.display()
        )) && err.contains(&format!(
            "; WANDB_DIR {}: no such file or directory",
            missing.display()
        )),
        "{err}"
    );
}

/// `inspect` and `export` without a PATH look where the viewer does: the current
/// directory's runs, else those under `WANDB_DIR`; where neither holds one, the
/// error names both.
#[test]
fn inspect_and_export_without_a_path_read_wandb_dir_as_the_viewer_does() {
    let dir = tempfile::tempdir().unwrap();
    // `leet ARGS` in an empty directory, with `WANDB_DIR` set to `wandb_dir`.
    let run_in = |wandb_dir: &std::path::Path, args: &[&str]| {
        leet()
            .current_dir(dir.path())
            .env("WANDB_DIR", wandb_dir)
            .args(args)
            .output()
            .unwrap()
    };
    // A project directory: its runs under `wandb/`.
    let root = runs_dir().join("tiny");
    let out = run_in(&root, &["inspect", "--summary", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "finished", "{v}");
    let out = run_in(&root, &["export"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("_step,"));
    // Neither place: both named.
    let out = run_in(&dir.path().join("none"), &["inspect", "--summary"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("current directory") && err.contains("; WANDB_DIR "),
        "{err}"
    );
}

/// `--prometheus` and `--match` are checked before the terminal changes: a URL or a
/// matcher that does not parse is a usage error naming it and why; `--match`
/// without `--prometheus`, and `--prometheus` without `--live`, too.
#[test]
fn a_bad_prometheus_url_or_matcher_is_a_usage_error_naming_it() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--live", "--prometheus", "ftp://prom:9090"],
            "'ftp://prom:9090': not a usable http(s) URL",
        ),
        (
            &[
                "--live",
                "--prometheus",
                "http://prom:9090",
                "--match",
                "job=~\"(\"",
            ],
            "--match 'job=~\"(\"'",
        ),
        (&["--live", "--match", "job=\"x\""], "--prometheus"),
        (&["--prometheus", "http://prom:9090"], "--live"),
    ];
    for (args, want) in cases {
        let out = leet().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A word after the viewer's PATH is an unexpected argument (clap called it a
/// subcommand that conflicts with PATH); a subcommand named after an option was
/// read as PATH, and the tip says a subcommand comes first.
#[test]
fn an_extra_word_is_an_unexpected_argument_with_the_usage() {
    let tiny = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny");
    let tiny = tiny.to_str().unwrap();
    let out = leet().args([tiny, "extra"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: unexpected argument 'extra' found"),
        "{err}"
    );
    assert!(err.contains("Usage: leet [OPTIONS] [PATH]"), "{err}");
    assert!(!err.contains("subcommand"), "{err}");
    assert!(!err.contains("--compare"), "not a path: no tip: {err}");
    // Several runs named (a shell glob): how to draw them together.
    let multi = tiny.replace("/tiny", "/multi");
    let out = leet().args([tiny, &multi]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("leet views one PATH") && err.contains("--compare"),
        "{err}"
    );
    // A refused combination's usage shows the forms there are, not the one refused.
    let out = leet().args(["--live", tiny]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Usage: leet [OPTIONS] [PATH]") && !err.contains("leet --live [PATH]"),
        "{err}"
    );
    let out = leet()
        .args(["--no-color", "inspect", tiny])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!("error: unexpected argument '{tiny}' found")),
        "{err}"
    );
    assert!(
        err.contains("'inspect' was read as the PATH to view: a subcommand comes first"),
        "{err}"
    );
    // A real subcommand after PATH keeps clap's own word for it.
    let out = leet().args([tiny, "inspect"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the subcommand 'inspect' cannot be used with '[PATH]'"),
        "{err}"
    );
}

/// `leet inspect` takes the record browser's options (its key map, colour and
/// mouse) after its name; `--idle-timeout` needs `--follow`, the only place it acts.
#[test]
fn inspect_takes_the_browser_s_options_and_idle_timeout_needs_follow() {
    use leet::cli::{Cli, Command as Sub};
    let parse = |args: &[&str]| {
        Cli::parse_args(std::iter::once("leet").chain(args.iter().copied()))
            .map_err(|e| e.to_string())
    };
    let Some(Sub::Inspect(a)) = parse(&[
        "inspect",
        "--keymap",
        "k.toml",
        "--no-color",
        "--no-mouse",
        "r",
    ])
    .unwrap()
    .command
    else {
        panic!("inspect")
    };
    assert_eq!(
        a.screen.keymap.as_deref(),
        Some(std::path::Path::new("k.toml"))
    );
    assert!(a.screen.no_color && a.screen.no_mouse);
    let err = parse(&["inspect", "--idle-timeout", "1s", "r"]).unwrap_err();
    assert!(err.contains("--follow"), "{err}");
    assert!(parse(&["inspect", "-f", "--idle-timeout", "1s", "r"]).is_ok());
    let out = leet()
        .args(["inspect", "--idle-timeout", "1s", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// `--print-keymap` reads only the key map and `--print-config` only the settings:
/// a bad file of the other kind does not stop them (the viewer itself still refuses
/// both).
#[test]
fn each_print_reads_only_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad_config = dir.path().join("config.toml");
    std::fs::write(&bad_config, "[viewer]\nrows = \"3\"\n").unwrap();
    let bad_keymap = dir.path().join("keymap.toml");
    std::fs::write(&bad_keymap, "[normal]\n\"ctrl+\" = \"quit\"\n").unwrap();
    let cases: [(&[&str], &std::path::Path, &str); 2] = [
        (&["--print-keymap", "--config"], &bad_config, "[normal]"),
        (&["--print-config", "--keymap"], &bad_keymap, "[viewer]"),
    ];
    for (args, bad, want) in cases {
        let out = leet().args(args).arg(bad).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(want));
    }
    let out = leet()
        .args(["--print-config", "--config"])
        .arg(&bad_config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("key 'rows'"));
}

/// `$XDG_CONFIG_HOME/leet` that is a file: the message names it, not only the OS's
/// "Not a directory" after the settings file's name.
#[test]
fn a_config_directory_that_is_a_file_is_named() {
    let home = tempfile::tempdir().unwrap();
    let leet_dir = home.path().join("leet");
    std::fs::write(&leet_dir, "").unwrap();
    let out = leet()
        .arg("--print-config")
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: cannot read: {} is a regular file, not a directory",
            leet_dir.join("config.toml").display(),
            leet_dir.display()
        )),
        "{err}"
    );
}
