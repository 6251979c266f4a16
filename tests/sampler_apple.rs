//! Apple Silicon through a fake `macmon` on `PATH` that replays the recorded lines of
//! `tests/fixtures/macmon` (`LEET_MACMON=1`, since this runs on Linux): the real binary's
//! `leet sample --json` keys and values are checked against mappings computed here from
//! those lines; then fakes that die, hang, flood and print garbage: samples stay on time
//! for the host families, RSS stays under [`RSS_CAP_KB`], errors are reported, and no
//! fake outlives leet (also after SIGTERM). Without macmon: one line of reason.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::sampler::{self, assert_on_time, procs_with, Run};
use serde_json::{Map, Value};

/// Largest VmRSS of `leet sample` allowed while a fake misbehaves.
const RSS_CAP_KB: u64 = 40 * 1024;
const INTERVAL_MS: u64 = 300;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/macmon")
}

/// The stream the fake replays, in order, and the probe's answer.
const STREAM: [&str; 3] = ["exo-v07.jsonl", "issue26-v06.jsonl", "readme-v08-soc.jsonl"];
const PROBE: &str = "readme-v08-soc.jsonl";

fn fixture_line(name: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    let line = text.lines().next().unwrap().to_string();
    assert!(!line.is_empty(), "{name} is empty");
    line
}

/// W&B's keys for one macmon line, computed here from the fields (see the mapping table
/// in src/source/sampler/apple.rs): ratios × 100, W and MHz as they are, bytes as they
/// are, zero integers and zero temperatures left out.
fn expected(line: &str) -> BTreeMap<String, f64> {
    let v: Value = serde_json::from_str(line).unwrap();
    let f = |path: &[&str]| -> Option<f64> {
        let mut x = &v;
        for k in path {
            x = x.get(k)?;
        }
        x.as_f64()
    };
    // macmon ≥ 0.8 names, else the ≤ 0.7 [MHz, ratio] tuple
    let pair = |name: &str| -> (f64, f64) {
        let t = v.get(format!("{name}_usage"));
        let freq = f(&[&format!("{name}_freq_mhz")])
            .or_else(|| t.and_then(|t| t[0].as_f64()))
            .unwrap();
        let ratio = f(&[&format!("{name}_scaled_ratio")])
            .or_else(|| t.and_then(|t| t[1].as_f64()))
            .unwrap();
        (freq, ratio)
    };
    let mut m = BTreeMap::new();
    let (ef, er) = pair("ecpu");
    let (pf, pr) = pair("pcpu");
    let (gf, gr) = pair("gpu");
    for (k, freq, ratio) in [("cpu.ecpu", ef, er), ("cpu.pcpu", pf, pr)] {
        m.insert(format!("{k}_freq"), freq);
        m.insert(format!("{k}_percent"), ratio * 100.0);
    }
    m.insert("gpu.0.freq".into(), gf);
    m.insert("gpu.0.gpu".into(), gr * 100.0);
    m.insert("cpu.avg_temp".into(), f(&["temp", "cpu_temp_avg"]).unwrap());
    m.insert("gpu.0.temp".into(), f(&["temp", "gpu_temp_avg"]).unwrap());
    let gpu_w = f(&["gpu_power"]).unwrap();
    m.insert("cpu.powerWatts".into(), f(&["cpu_power"]).unwrap());
    m.insert("gpu.0.powerWatts".into(), gpu_w);
    m.insert("gpu.0.powerPercent".into(), gpu_w / 16.5 * 100.0);
    m.insert("ane.power".into(), f(&["ane_power"]).unwrap());
    let sys = f(&["sys_power"]).unwrap().max(f(&["all_power"]).unwrap());
    m.insert("system.powerWatts".into(), sys);
    let (ru, rt) = (
        f(&["memory", "ram_usage"]).unwrap(),
        f(&["memory", "ram_total"]).unwrap(),
    );
    let (su, st) = (
        f(&["memory", "swap_usage"]).unwrap(),
        f(&["memory", "swap_total"]).unwrap(),
    );
    m.insert("memory.used".into(), ru);
    m.insert("memory.used_percent".into(), ru / rt * 100.0);
    m.insert("gpu.0.memoryAllocated".into(), ru / rt * 100.0);
    m.insert("swap.used".into(), su);
    m.insert("swap.used_percent".into(), su / st * 100.0);
    m
}

/// Every key the Apple family can emit.
const APPLE_KEYS: [&str; 19] = [
    "cpu.ecpu_freq",
    "cpu.ecpu_percent",
    "cpu.pcpu_freq",
    "cpu.pcpu_percent",
    "gpu.0.freq",
    "gpu.0.gpu",
    "cpu.avg_temp",
    "gpu.0.temp",
    "cpu.powerWatts",
    "gpu.0.powerWatts",
    "gpu.0.powerPercent",
    "ane.power",
    "system.powerWatts",
    "memory.used",
    "memory.used_percent",
    "gpu.0.memoryAllocated",
    "swap.used",
    "swap.used_percent",
    // never expected: the fixtures have non-zero values for all of the above
    "gpu.0.memoryAllocatedBytes",
];

fn apple_part(s: &Map<String, Value>) -> BTreeMap<String, f64> {
    APPLE_KEYS
        .iter()
        .filter_map(|k| Some(((*k).to_string(), s.get(*k)?.as_f64()?)))
        .collect()
}

/// Keys macmon gives that the host's own families write too on Linux, where these
/// tests run: a key two families write is the host's (read first), so these are
/// not macmon's in a sample here (on a Mac, no host family writes them).
const HOST_ALSO: [&str; 2] = ["swap.used", "swap.used_percent"];

/// The same readings, the keys the host writes too left out.
fn same(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> bool {
    let mine = |m: &BTreeMap<String, f64>| -> BTreeMap<String, f64> {
        m.iter()
            .filter(|(k, _)| !HOST_ALSO.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    let (a, b) = (mine(a), mine(b));
    a.len() == b.len()
        && a.iter().all(|(k, x)| {
            b.get(k)
                .is_some_and(|y| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
        })
}

/// A fake `macmon`: logs its arguments, answers the probe (`-s 1`) with [`PROBE`], and
/// runs `body` as the stream (`$secs` is the `-i` interval in seconds, `$stream` the
/// file of [`STREAM`] lines).
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(body: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let stream: String = STREAM.iter().map(|f| fixture_line(f) + "\n").collect();
        std::fs::write(dir.path().join("stream.jsonl"), stream).unwrap();
        std::fs::write(dir.path().join("probe.jsonl"), fixture_line(PROBE) + "\n").unwrap();
        let d = dir.path().display();
        let script = format!(
            r#"#!/bin/sh
echo "$*" >> {d}/args.log
case " $* " in *" -s 1 "*) cat {d}/probe.jsonl; exit 0;; esac
ms=1000; prev=
for a in "$@"; do [ "$prev" = "-i" ] && ms=$a; prev=$a; done
secs=$(( ms / 1000 )).$(printf '%03d' $(( ms % 1000 )))
stream={d}/stream.jsonl
{body}
"#
        );
        sampler::write_executable(&dir.path().join("macmon"), &script);
        Self { dir }
    }

    fn path_env(&self) -> String {
        sampler::path_with(self.dir.path())
    }

    fn args_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("args.log")).unwrap_or_default()
    }

    /// Processes whose command line names this fake (`/bin/sh <dir>/macmon ...`).
    fn alive(&self) -> Vec<String> {
        procs_with(&self.dir.path().join("macmon").display().to_string())
    }
}

const REPLAY: &str = r#"while :; do
  while IFS= read -r l; do printf '%s\n' "$l"; sleep $secs; done < $stream
done"#;

/// Wait up to 5 s for every process of the fake to be gone.
fn assert_none_left(fake: &Fake) {
    sampler::assert_none_left(Duration::from_secs(5), "fake macmon outlived leet", || {
        fake.alive()
    });
}

/// `leet sample ARGS` with `env` and no inherited `LEET_MACMON`.
fn leet(args: &[&str], env: &[(&str, String)]) -> std::process::Command {
    let mut cmd = sampler::leet_sample(args, &[] as &[(&str, &str)]);
    cmd.env_remove("LEET_MACMON");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// `leet sample --json --count N --interval 300ms` to its end (60 s at most), with the
/// largest VmRSS seen while it ran.
fn sample(count: u32, env: &[(&str, String)]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let count = count.to_string();
    let interval = format!("{INTERVAL_MS}ms");
    let cmd = leet(&["--json", "--count", &count, "--interval", &interval], env);
    sampler::run_to_end(cmd, dir.path()).json()
}

#[test]
fn keys_and_values_come_from_the_recorded_lines() {
    let fake = Fake::new(REPLAY);
    let run = sample(5, &[("PATH", fake.path_env()), ("LEET_MACMON", "1".into())]);
    assert_on_time(&run, 5, INTERVAL_MS);
    assert!(!run.stderr.contains("apple"), "{}", run.stderr);
    let probe = expected(&fixture_line(PROBE));
    let stream: Vec<_> = STREAM.iter().map(|f| expected(&fixture_line(f))).collect();
    assert_eq!(probe.len(), 18);
    // the first sample is the detection probe's line
    assert!(
        same(&apple_part(&run.samples[0]), &probe),
        "{:?}\n!= {probe:?}",
        apple_part(&run.samples[0])
    );
    let mut from_stream_only = 0;
    for (i, s) in run.samples.iter().enumerate() {
        let got = apple_part(s);
        let which = stream.iter().position(|e| same(&got, e));
        assert!(
            which.is_some() || same(&got, &probe),
            "sample {i}: {got:?} is none of the recorded lines"
        );
        if matches!(which, Some(0 | 1)) {
            from_stream_only += 1;
        }
    }
    assert!(
        from_stream_only >= 1,
        "no sample came from the long-lived stream: {:?}",
        run.samples.iter().map(apple_part).collect::<Vec<_>>()
    );
    let args = fake.args_log();
    assert!(
        args.lines().any(|l| l == "-i 100 pipe -s 1 --soc-info"),
        "probe: {args}"
    );
    let streams: Vec<_> = args.lines().filter(|l| !l.contains("-s 1")).collect();
    assert_eq!(
        streams,
        ["-i 300 pipe"],
        "one stream at the sampling interval"
    );
    assert_none_left(&fake);
}

#[test]
fn without_macmon_one_line_says_why() {
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().display().to_string();
    for (setting, why) in [
        (
            None,
            "apple: not available: not macOS on Apple Silicon (LEET_MACMON=1 reads `macmon pipe` anyway)",
        ),
        (
            Some("1"),
            "apple: not available: macmon not found on PATH (LEET_MACMON=1)",
        ),
        (
            Some("/nonexistent/macmon"),
            "apple: not available: LEET_MACMON=/nonexistent/macmon is not an executable file",
        ),
    ] {
        let mut env = vec![("PATH", path.clone())];
        if let Some(s) = setting {
            env.push(("LEET_MACMON", s.to_string()));
        }
        let run = sample(2, &env);
        assert_on_time(&run, 2, INTERVAL_MS);
        let lines: Vec<_> = run.stderr.lines().filter(|l| l.starts_with("apple")).collect();
        assert_eq!(lines, [why], "{}", run.stderr);
        assert!(run.samples.iter().all(|s| !s.contains_key("gpu.0.gpu")));
    }
}

/// A fake whose probe works but whose stream misbehaves: `leet sample` keeps its host
/// samples on time, stays under the RSS cap, reports `want` and leaves no child behind.
fn hostile(body: &str, want: &str) -> Run {
    let fake = Fake::new(body);
    let run = sample(8, &[("PATH", fake.path_env()), ("LEET_MACMON", "1".into())]);
    assert_on_time(&run, 8, INTERVAL_MS);
    sampler::assert_error_reported_and_bounded(&run, "apple", want, RSS_CAP_KB);
    assert_none_left(&fake);
    run
}

#[test]
fn a_dying_macmon_is_reported_and_restarted_after_a_backoff() {
    let fake = Fake::new("head -n 1 $stream; exit 7");
    let run = sample(8, &[("PATH", fake.path_env()), ("LEET_MACMON", "1".into())]);
    assert_on_time(&run, 8, INTERVAL_MS);
    assert!(
        run.stderr
            .contains("macmon exited (exit status: 7); restarting in 1s"),
        "{}",
        run.stderr
    );
    // 8 samples over 2.1 s: started at 0, died, restarted after 1 s, died, next in 2 s
    let starts = fake
        .args_log()
        .lines()
        .filter(|l| *l == "-i 300 pipe")
        .count();
    assert_eq!(starts, 2, "{}", fake.args_log());
    // its one line each time was used
    let exo = expected(&fixture_line(STREAM[0]));
    assert!(run.samples.iter().any(|s| same(&apple_part(s), &exo)));
    assert_none_left(&fake);
}

#[test]
fn a_silent_macmon_costs_nothing_and_its_values_expire() {
    let run = hostile(
        "while :; do sleep 1; done",
        "no metrics line from macmon for",
    );
    // the probe's values are reported while fresh (2 intervals + 0.5 s), then not
    assert!(run.samples[0].contains_key("gpu.0.gpu"));
    assert!(!run.samples[7].contains_key("gpu.0.gpu"));
}

#[test]
fn a_flooding_macmon_is_killed_and_bounded() {
    hostile(
        r#"while :; do echo '{"flood":1}'; echo '{"flood":2}'; done"#,
        "macmon flooded",
    );
}

#[test]
fn an_endless_line_is_dropped_and_bounded() {
    hostile(
        "while :; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done",
        "over 65536 bytes",
    );
}

#[test]
fn garbage_lines_are_reported_sanitized() {
    let run = hostile(
        r#"while :; do echo 'not json {'; printf '\033[2J{"temp":\n'; sleep $secs; done"#,
        "line(s) not macmon's JSON",
    );
    assert!(run.stderr.contains("'not json {'"), "{}", run.stderr);
}

#[test]
fn no_macmon_is_left_after_sigterm() {
    let fake = Fake::new(REPLAY);
    let dir = tempfile::tempdir().unwrap();
    let mut child = sampler::spawn_logged(
        leet(
            &["--json", "--interval", "300ms"],
            &[("PATH", fake.path_env()), ("LEET_MACMON", "1".into())],
        ),
        dir.path(),
    );
    let t = Instant::now();
    while !fake.alive().iter().any(|p| p.ends_with("-i 300 pipe ")) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the stream never started: {:?}",
            fake.alive()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    sampler::sigterm_and_wait(&mut child);
    assert_none_left(&fake);
}
