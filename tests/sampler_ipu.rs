//! Graphcore IPUs through a fake `gc-info` on `PATH` replaying Graphcore's published
//! outputs (`tests/fixtures/ipu`): `--list-devices` of an IPU-POD (IPUs 0–3), and
//! `-i -d N` answered with the C600 attributes for even N and the C2 attributes for odd
//! N (the `id:` line set to N). The real binary's `leet sample --json` keys and values
//! are checked against values parsed here from those files; `--pid` keeps only the IPUs
//! of the monitored process; then fakes that hang, die, flood and print garbage: host
//! samples stay on time, RSS under [`RSS_CAP_KB`], errors are reported, and no fake
//! outlives leet (also after SIGTERM). Without gc-info: one line of reason.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

const RSS_CAP_KB: u64 = 40 * 1024;
const INTERVAL_MS: u64 = 300;
const DEVICES: [u32; 4] = [0, 1, 2, 3];

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ipu")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// The recorded attributes served for device `n`, its `id:` (and optionally its
/// `user process id:`) rewritten.
fn device_text(n: u32, user_pid: Option<u32>) -> String {
    let src = if n % 2 == 0 {
        "gc-info-i-d0-c600.txt"
    } else {
        "gc-info-i-d0-c2.txt"
    };
    fixture(src)
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("id: ") {
                format!("  id: {n}")
            } else if let (Some(p), true) =
                (user_pid, l.trim_start().starts_with("user process id: "))
            {
                format!("  user process id: {p}")
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect()
}

/// The sampled keys W&B's IPU monitor would write for `text`, parsed here: value and
/// unit split where the number ends, the unit checked, `N/A` left out.
fn expected(n: u32, text: &str) -> BTreeMap<String, f64> {
    let metrics = [
        ("average board temp", "C"),
        ("average die temp", "C"),
        ("clock", "MHz"),
        ("ipu power", "W"),
        ("total board power", "W"),
        ("ipu utilisation", "%"),
        ("ipu utilisation (session)", "%"),
    ];
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.trim().split_once(": ") else {
            continue;
        };
        let Some((_, unit)) = metrics.iter().find(|(a, _)| *a == k) else {
            continue;
        };
        if v == "N/A" {
            continue;
        }
        let end = v
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(v.len());
        assert_eq!(v[end..].trim(), *unit, "{k}: {v}");
        m.insert(
            format!("ipu.{n}.{k} ({unit})"),
            v[..end].parse::<f64>().unwrap(),
        );
    }
    m
}

fn ipu_part(s: &Map<String, Value>) -> BTreeMap<String, f64> {
    s.iter()
        .filter(|(k, _)| k.starts_with("ipu."))
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
        .collect()
}

/// A fake `gc-info`: logs its arguments; `--list-devices` prints the recorded listing;
/// `-i -d N` runs `device` (the default serves [`device_text`] through a here-document,
/// so the fake execs nothing).
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(list: &str, device: impl Fn(u32) -> String) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let mut script = format!(
            "#!/bin/sh\necho \"$*\" >> {d}/args.log\ncase \"$*\" in\n--list-devices)\ncat <<'LIST_EOF'\n{list}LIST_EOF\n;;\n"
        );
        for n in DEVICES {
            script.push_str(&format!("\"-i -d {n}\")\n{}\n;;\n", device(n)));
        }
        script.push_str("*) echo \"unknown command\" >&2; exit 2;;\nesac\n");
        let p = dir.path().join("gc-info");
        std::fs::write(&p, script).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn recorded() -> Self {
        Self::new(&fixture("gc-info-list-devices-pod.txt"), |n| {
            heredoc(&device_text(n, None))
        })
    }

    fn path_env(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn args_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("args.log")).unwrap_or_default()
    }

    fn alive(&self) -> Vec<String> {
        procs_with(&self.dir.path().join("gc-info").display().to_string())
    }
}

fn heredoc(text: &str) -> String {
    format!("cat <<'DEV_EOF'\n{text}DEV_EOF")
}

fn procs_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(needle) {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

fn assert_none_left(fake: &Fake) {
    let t = Instant::now();
    let mut left = fake.alive();
    while !left.is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
        left = fake.alive();
    }
    assert!(left.is_empty(), "fake gc-info outlived leet: {left:?}");
}

fn rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Run {
    status: ExitStatus,
    samples: Vec<Map<String, Value>>,
    stderr: String,
    max_rss_kb: u64,
}

fn leet(dir: &Path, args: &[&str], path: &str) -> KillOnDrop {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_leet"));
    cmd.arg("sample")
        .args(args)
        .env("PATH", path)
        .env_remove("LEET_MACMON")
        .stdin(Stdio::null())
        .stdout(File::create(dir.join("stdout")).unwrap())
        .stderr(File::create(dir.join("stderr")).unwrap());
    KillOnDrop(cmd.spawn().unwrap())
}

fn sample(count: u32, path: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let count = count.to_string();
    let interval = format!("{INTERVAL_MS}ms");
    let mut args = vec!["--json", "--count", &count, "--interval", &interval];
    args.extend_from_slice(extra);
    let mut child = leet(dir.path(), &args, path);
    let pid = child.0.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut max_rss_kb = 0;
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "leet sample did not finish");
        max_rss_kb = max_rss_kb.max(rss_kb(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(25));
    };
    let stdout = std::fs::read_to_string(dir.path().join("stdout")).unwrap();
    Run {
        status,
        samples: stdout
            .lines()
            .map(|l| match serde_json::from_str(l) {
                Ok(Value::Object(m)) => m,
                other => panic!("not a JSON object: {l:?} ({other:?})"),
            })
            .collect(),
        stderr: std::fs::read_to_string(dir.path().join("stderr")).unwrap(),
        max_rss_kb,
    }
}

fn assert_on_time(run: &Run, count: usize) {
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    assert_eq!(run.samples.len(), count, "{}", run.stderr);
    let ts: Vec<f64> = run
        .samples
        .iter()
        .map(|s| s["timestamp"].as_f64().unwrap())
        .collect();
    let interval = INTERVAL_MS as f64 / 1000.0;
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

#[test]
fn keys_and_values_come_from_the_recorded_outputs() {
    let fake = Fake::recorded();
    let run = sample(3, &fake.path_env(), &[]);
    assert_on_time(&run, 3);
    assert!(!run.stderr.contains("ipu"), "{}", run.stderr);
    let mut want = BTreeMap::new();
    for n in DEVICES {
        want.extend(expected(n, &device_text(n, None)));
    }
    // C600: no "ipu power" (N/A), six keys; C2: no "ipu power" attribute, six keys
    assert_eq!(want.len(), 4 * 6, "{want:?}");
    assert_eq!(want["ipu.0.clock (MHz)"], 20.0);
    assert_eq!(want["ipu.1.ipu utilisation (%)"], 99.96);
    for (i, s) in run.samples.iter().enumerate() {
        assert_eq!(ipu_part(s), want, "sample {i}");
        // static attributes are not sampled
        assert!(!s.keys().any(|k| k.contains("serial") || k.contains("link")));
    }
    let args = fake.args_log();
    assert_eq!(args.lines().filter(|l| *l == "--list-devices").count(), 1);
    for n in DEVICES {
        let runs = args.lines().filter(|l| *l == format!("-i -d {n}")).count();
        assert_eq!(
            runs,
            1 + 3,
            "device {n}: once at detection, once per sample"
        );
    }
    assert_none_left(&fake);
}

#[test]
fn with_pid_only_the_monitored_processes_ipus() {
    let mut target = KillOnDrop(Command::new("sleep").arg("30").spawn().unwrap());
    let pid = target.0.id();
    let fake = Fake::new(&fixture("gc-info-list-devices-pod.txt"), |n| {
        heredoc(&device_text(n, (n == 2).then_some(pid)))
    });
    let pid_arg = pid.to_string();
    let run = sample(2, &fake.path_env(), &["--pid", &pid_arg]);
    assert!(run.status.success(), "{}", run.stderr);
    assert_eq!(run.samples.len(), 2);
    for s in &run.samples {
        assert_eq!(ipu_part(s), expected(2, &device_text(2, Some(pid))));
    }
    let _ = target.0.kill();
}

#[test]
fn without_gc_info_one_line_says_why() {
    let empty = tempfile::tempdir().unwrap();
    let run = sample(2, &empty.path().display().to_string(), &[]);
    assert_on_time(&run, 2);
    let lines: Vec<_> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("ipu"))
        .collect();
    assert_eq!(lines, ["ipu: not available: gc-info not found on PATH"]);

    let fake = Fake::new("no devices here\n\u{1b}[2J\n", |_| String::new());
    let run = sample(2, &fake.path_env(), &[]);
    assert_on_time(&run, 2);
    let lines: Vec<_> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("ipu"))
        .collect();
    assert_eq!(lines, ["ipu: not available: gc-info lists no IPUs"]);
}

/// A fake whose device calls misbehave: host samples on time, RSS under the cap,
/// `want` reported, no child left behind.
fn hostile(device: &str, want: &str) -> Run {
    let fake = Fake::new(&fixture("gc-info-list-devices-pod.txt"), |_| {
        device.to_string()
    });
    let run = sample(6, &fake.path_env(), &[]);
    assert_on_time(&run, 6);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("ipu: error: ") && l.contains(want)),
        "no 'ipu: error: ...{want}...' in\n{}",
        run.stderr
    );
    assert!(
        run.max_rss_kb > 0 && run.max_rss_kb < RSS_CAP_KB,
        "VmRSS {} kB (cap {RSS_CAP_KB} kB)",
        run.max_rss_kb
    );
    assert!(
        !run.stderr.contains('\u{1b}'),
        "escape sequence reached stderr"
    );
    assert!(run.samples.iter().all(|s| ipu_part(s).is_empty()));
    assert_none_left(&fake);
    run
}

#[test]
fn a_hanging_gc_info_is_killed_within_the_sample_budget() {
    hostile("while :; do sleep 1; done", "timed out");
}

#[test]
fn a_failing_gc_info_is_reported() {
    hostile(
        "echo 'Error: device busy' >&2; exit 1",
        "exited with exit status: 1",
    );
}

#[test]
fn a_flooding_gc_info_is_cut_off() {
    hostile(
        "while :; do echo '  average board temp: 1 C'; done",
        "output larger than 262144 bytes",
    );
}

#[test]
fn garbage_is_reported_sanitized() {
    hostile(
        r"printf 'Segmentation fault \033[2J (core dumped)\n'",
        "no IPU attributes in gc-info output",
    );
}

#[test]
fn no_gc_info_is_left_after_sigterm() {
    // the device calls hang, so a gc-info is running when SIGTERM comes
    let fake = Fake::new(&fixture("gc-info-list-devices-pod.txt"), |_| {
        "while :; do sleep 1; done".to_string()
    });
    let dir = tempfile::tempdir().unwrap();
    let mut child = leet(
        dir.path(),
        &["--json", "--interval", "300ms"],
        &fake.path_env(),
    );
    let t = Instant::now();
    // past detection (its device calls time out too), then wait for a device call
    while !std::fs::read_to_string(dir.path().join("stdout"))
        .unwrap_or_default()
        .contains("timestamp")
    {
        assert!(t.elapsed() < Duration::from_secs(20), "no sample came");
        std::thread::sleep(Duration::from_millis(25));
    }
    while !fake.alive().iter().any(|p| p.contains("-i -d")) {
        assert!(t.elapsed() < Duration::from_secs(20), "no device call seen");
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = i32::try_from(child.0.id()).unwrap();
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let t = Instant::now();
    while child.0.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "leet ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_none_left(&fake);
}
