//! Graphcore IPUs through a fake `gc-info` on `PATH` replaying Graphcore's published
//! outputs (`tests/fixtures/ipu`): `--list-devices` of an IPU-POD (IPUs 0–3), and
//! `-i -d N` answered with the C600 attributes for even N and the C2 attributes for odd
//! N (the `id:` line set to N). The real binary's `leet sample --json` keys and values
//! are checked against values parsed here from those files; `--pid` keeps only the IPUs
//! of the monitored process; then fakes that hang, die, flood and print garbage: host
//! samples stay on time, RSS under [`RSS_CAP_KB`], errors are reported, and no fake
//! outlives leet (also after SIGTERM). Without gc-info: one line of reason.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::sampler::{self, assert_on_time, procs_with, KillOnDrop, Run};
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
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let mut script = format!(
            "#!/bin/sh\necho \"$*\" >> {d}/args.log\ncase \"$*\" in\n--list-devices)\ncat <<'LIST_EOF'\n{list}LIST_EOF\n;;\n"
        );
        for n in DEVICES {
            script.push_str(&format!("\"-i -d {n}\")\n{}\n;;\n", device(n)));
        }
        script.push_str("*) echo \"unknown command\" >&2; exit 2;;\nesac\n");
        sampler::write_executable(&dir.path().join("gc-info"), &script);
        Self { dir }
    }

    fn recorded() -> Self {
        Self::new(&fixture("gc-info-list-devices-pod.txt"), |n| {
            heredoc(&device_text(n, None))
        })
    }

    fn path_env(&self) -> String {
        sampler::path_with(self.dir.path())
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

/// Wait up to 5 s for every process of the fake to be gone.
fn assert_none_left(fake: &Fake) {
    sampler::assert_none_left(Duration::from_secs(5), "fake gc-info outlived leet", || {
        fake.alive()
    });
}

/// `leet sample ARGS` with `PATH` = `path` and no inherited `LEET_MACMON`.
fn leet(args: &[&str], path: &str) -> Command {
    let mut cmd = sampler::leet_sample(args, &[("PATH", path)]);
    cmd.env_remove("LEET_MACMON");
    cmd
}

/// `leet sample --json --count N --interval 300ms EXTRA` to its end (60 s at most), with
/// the largest VmRSS seen while it ran.
fn sample(count: u32, path: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let count = count.to_string();
    let interval = format!("{INTERVAL_MS}ms");
    let mut args = vec!["--json", "--count", &count, "--interval", &interval];
    args.extend_from_slice(extra);
    sampler::run_to_end(leet(&args, path), dir.path()).json()
}

#[test]
fn keys_and_values_come_from_the_recorded_outputs() {
    let fake = Fake::recorded();
    let run = sample(3, &fake.path_env(), &[]);
    assert_on_time(&run, 3, INTERVAL_MS);
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
    assert_on_time(&run, 2, INTERVAL_MS);
    let lines: Vec<_> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("ipu"))
        .collect();
    assert_eq!(lines, ["ipu: not available: gc-info not found on PATH"]);

    let fake = Fake::new("no devices here\n\u{1b}[2J\n", |_| String::new());
    let run = sample(2, &fake.path_env(), &[]);
    assert_on_time(&run, 2, INTERVAL_MS);
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
    assert_on_time(&run, 6, INTERVAL_MS);
    sampler::assert_error_reported_and_bounded(&run, "ipu", want, RSS_CAP_KB);
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
    let mut child = sampler::spawn_logged(
        leet(&["--json", "--interval", "300ms"], &fake.path_env()),
        dir.path(),
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
    sampler::sigterm_and_wait(&mut child);
    assert_none_left(&fake);
}
