//! Shared helpers for the tests that run the real `leet sample` binary against fakes:
//! running it to its end with a deadline (JSON lines, stderr, peak VmRSS), building a C
//! stub library with `cc`, fake executables on `PATH`, fake HTTP servers on 127.0.0.1,
//! and `/proc` readings (status fields, leftover processes).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt::Debug;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

// The fake HTTP server and `/proc` status reading live with the sampler crate's
// tests, which use them too.
#[path = "../../crates/leet-sampler/tests/common/sampler.rs"]
mod fakes;
// Not every test binary uses them (as with the items of this file, see `dead_code`).
#[allow(unused_imports)]
pub use fakes::{proc_status, serve, Server};

/// How long a `leet sample --count N` run may take before the test fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------
// Running `leet sample`

/// Kills and reaps the child when dropped, also when an assertion fails.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `leet sample ARGS` with `env` set and stdin closed (stdout and stderr are chosen by
/// [`spawn_logged`] or the caller).
pub fn leet_sample<K, V>(args: &[&str], env: &[(K, V)]) -> Command
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let mut cmd = super::isolated::leet();
    cmd.arg("sample").args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Start `cmd` with its stdout in `dir/stdout` and its stderr in `dir/stderr`.
pub fn spawn_logged(mut cmd: Command, dir: &Path) -> KillOnDrop {
    cmd.stdout(File::create(dir.join("stdout")).expect("stdout file"))
        .stderr(File::create(dir.join("stderr")).expect("stderr file"));
    KillOnDrop(cmd.spawn().expect("spawn leet"))
}

/// A finished run: its exit, output, the largest VmRSS seen while it ran and how long it
/// took from the start.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub max_rss_kb: u64,
    pub elapsed: Duration,
}

/// A finished `--json` run, its stdout parsed: one JSON object per line.
pub struct Run {
    pub status: ExitStatus,
    pub samples: Vec<Map<String, Value>>,
    pub stderr: String,
    pub max_rss_kb: u64,
    pub elapsed: Duration,
}

impl Finished {
    /// Fails the test unless leet exited successfully.
    pub fn assert_success(&self) {
        assert!(self.status.success(), "leet failed: {}", self.stderr);
    }

    /// The stdout as JSON objects; fails the test on any other line.
    pub fn json(self) -> Run {
        Run {
            samples: json_objects(&self.stdout),
            status: self.status,
            stderr: self.stderr,
            max_rss_kb: self.max_rss_kb,
            elapsed: self.elapsed,
        }
    }
}

/// Each line of `stdout` as a JSON object; fails the test on any other line.
pub fn json_objects(stdout: &str) -> Vec<Map<String, Value>> {
    stdout
        .lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a JSON object: {l:?} ({other:?})"),
        })
        .collect()
}

/// Run `cmd` (see [`spawn_logged`]) to its end, [`RUN_LIMIT`] at most (else it is killed
/// and the test fails), watching its VmRSS.
pub fn run_to_end(cmd: Command, dir: &Path) -> Finished {
    let start = Instant::now();
    let mut child = spawn_logged(cmd, dir);
    let pid = child.0.id();
    let mut max_rss_kb = 0;
    let status = loop {
        if let Some(s) = child.0.try_wait().expect("wait leet") {
            break s;
        }
        assert!(start.elapsed() < RUN_LIMIT, "leet sample did not finish");
        max_rss_kb = max_rss_kb.max(rss_kb(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect(name);
    Finished {
        status,
        stdout: read("stdout"),
        stderr: read("stderr"),
        max_rss_kb,
        elapsed,
    }
}

/// Every sample has the host keys, and samples come at `interval_ms`: gaps under 2.5
/// intervals, the whole run within a second of `count - 1` intervals.
pub fn assert_on_time(run: &Run, count: usize, interval_ms: u64) {
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    assert_eq!(run.samples.len(), count, "{}", run.stderr);
    let ts: Vec<f64> = run
        .samples
        .iter()
        .map(|s| s["timestamp"].as_f64().expect("timestamp"))
        .collect();
    let interval = interval_ms as f64 / 1000.0;
    for (i, s) in run.samples.iter().enumerate() {
        assert!(
            s.contains_key("memory_percent"),
            "sample {i} lacks memory_percent"
        );
        if i > 0 {
            assert!(s.contains_key("cpu"), "sample {i} lacks cpu");
            let gap = ts[i] - ts[i - 1];
            assert!(gap < interval * 2.5, "gap {gap:.3}s before sample {i}");
        }
    }
    let span = ts[count - 1] - ts[0];
    let want = interval * (count - 1) as f64;
    assert!(
        span < want + 1.0,
        "{count} samples took {span:.3}s, want ~{want:.1}s"
    );
}

/// A run against a misbehaving fake: `FAMILY: error: ...WANT...` is reported, the peak
/// VmRSS stayed under `rss_cap_kb`, and no escape sequence reached stderr.
pub fn assert_error_reported_and_bounded(run: &Run, family: &str, want: &str, rss_cap_kb: u64) {
    let prefix = format!("{family}: error: ");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with(&prefix) && l.contains(want)),
        "no '{prefix}...{want}...' in\n{}",
        run.stderr
    );
    assert!(
        run.max_rss_kb > 0 && run.max_rss_kb < rss_cap_kb,
        "VmRSS {} kB (cap {rss_cap_kb} kB)",
        run.max_rss_kb
    );
    assert!(
        !run.stderr.contains('\u{1b}'),
        "escape sequence reached stderr"
    );
}

/// SIGTERM to the child, which must exit within 10 s.
pub fn sigterm_and_wait(child: &mut KillOnDrop) {
    let pid = i32::try_from(child.0.id()).expect("pid");
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let t = Instant::now();
    while child.0.try_wait().expect("wait leet").is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "leet ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------
// A C stub of a vendor library

/// Build `tests/<src>` with `cc` into the shared library `out`. None (the test is
/// skipped, with a message) without a C compiler, except under `CI=true`, where that is
/// a failure.
pub fn build_c_stub(src: &str, out: &Path) -> Option<PathBuf> {
    if !super::tool::need("a C compiler (cc)", super::tool::runs("cc", &["--version"])) {
        return None;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(src);
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-o"])
        .arg(out)
        .arg(&src)
        .output()
        .expect("run cc");
    assert!(
        built.status.success(),
        "cc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    Some(out.to_path_buf())
}

// ---------------------------------------------------------------------------------
// Fake executables

/// Write `script` to `path`, executable.
pub fn write_executable(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, script).expect("write fake executable");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A `PATH` value: `dir`, then this process's `PATH`.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

// ---------------------------------------------------------------------------------
// /proc

/// VmRSS of `pid`, kB.
pub fn rss_kb(pid: u32) -> Option<u64> {
    proc_status(pid, "VmRSS:")
}

/// Open file descriptors of `pid`.
pub fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc/PID/fd")
        .count()
}

/// Processes other than this one, as `(pid, command line)`, whose `/proc/PID` directory
/// satisfies `keep`.
pub fn processes(keep: impl Fn(&Path) -> bool) -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || !keep(&e.path()) {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        found.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
    }
    found
}

/// Processes whose command line contains `needle`, as `"PID: CMDLINE"`.
pub fn procs_with(needle: &str) -> Vec<String> {
    processes(|dir| {
        std::fs::read(dir.join("cmdline")).is_ok_and(|raw| {
            String::from_utf8_lossy(&raw)
                .replace('\0', " ")
                .contains(needle)
        })
    })
    .into_iter()
    .map(|(pid, cmd)| format!("{pid}: {cmd}"))
    .collect()
}

/// Processes whose environment holds `var` (`NAME=value`), as `(pid, command line)`.
pub fn procs_with_env(var: &str) -> Vec<(u32, String)> {
    processes(|dir| {
        std::fs::read(dir.join("environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == var.as_bytes()))
    })
}

/// Wait up to `within` for `left()` to be empty; fails the test with `what` and what is
/// left otherwise.
pub fn assert_none_left<T: Debug>(within: Duration, what: &str, left: impl Fn() -> Vec<T>) {
    let t = Instant::now();
    let mut now = left();
    while !now.is_empty() && t.elapsed() < within {
        std::thread::sleep(Duration::from_millis(50));
        now = left();
    }
    assert!(now.is_empty(), "{what}: {now:?}");
}
