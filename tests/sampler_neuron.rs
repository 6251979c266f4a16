//! The AWS Trainium / Inferentia family end to end: `leet sample --json` with a fake
//! `neuron-monitor` (a bash script) first on `PATH` and a fake Neuron driver entry under
//! `LEET_SYSFS_ROOT`. The fake is called as the real one is (`-c CONFIG`), reads the
//! `period` from that config and replays the recorded report
//! (`tests/fixtures/neuron/`, see its README) at that period, or misbehaves: dies, hangs,
//! floods (a 50 MB line; thousands of lines a second; lines near the 2 MiB cap), prints
//! garbage. Expected values are computed here from the recorded JSON. Every leet run
//! carries a marker in its environment, inherited by the fake and its children, so a
//! scan of `/proc/*/environ` finds any process left behind.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::sampler;
use serde_json::Value;

const RECORDED: &str = include_str!("fixtures/neuron/neuron-monitor-1.jsonl");

const FAKE: &str = r#"#!/usr/bin/env bash
# Fake neuron-monitor for tests/sampler_neuron.rs. Called as `neuron-monitor -c CONFIG`;
# replays the lines of $FAKE_LINES every `period` of CONFIG; $FAKE_MODE picks a failure.
set -u
if [ "${1:-}" != "-c" ] || [ ! -r "${2:-}" ]; then
  echo "usage: neuron-monitor -c CONFIG" >&2
  exit 2
fi
cfg=$(<"$2")
printf '%s\n' "$cfg" > "$FAKE_DIR/config.json"
printf '%s\n' "$2" > "$FAKE_DIR/config.path"
echo "start $(date +%s.%N)" >> "$FAKE_DIR/events"
re='"period": *"([0-9]+)(ms|s)"'
if [[ $cfg =~ $re ]]; then
  n=${BASH_REMATCH[1]}
  if [ "${BASH_REMATCH[2]}" = s ]; then
    period=$n
  else
    period=$(printf '%d.%03d' $((n / 1000)) $((n % 1000)))
  fi
else
  echo "no period in $2" >&2
  exit 3
fi
mapfile -t lines < "$FAKE_LINES"
replay() { # [count]
  local i=0
  while :; do
    printf '%s\n' "${lines[i % ${#lines[@]}]}"
    i=$((i + 1))
    if [ -n "${1:-}" ] && [ "$i" -ge "$1" ]; then return; fi
    sleep "$period"
  done
}
case "${FAKE_MODE:-replay}" in
  replay) replay ;;
  die)
    replay "$FAKE_DIE_AFTER"
    echo "end $(date +%s.%N)" >> "$FAKE_DIR/events"
    exit 1 ;;
  hang) while :; do sleep 1; done ;;
  bigline)
    head -c 50000000 /dev/zero | tr '\0' x
    echo
    replay ;;
  many)
    while :; do
      for _ in $(seq 500); do printf '%s\n' "${lines[0]}"; done
      sleep 0.1
    done ;;
  fat)
    { head -c 1900000 /dev/zero | tr '\0' ' '; printf '%s\n' "${lines[0]}"; } > "$FAKE_DIR/fat.line"
    while :; do
      for _ in 1 2 3 4 5 6; do cat "$FAKE_DIR/fat.line"; done
      sleep "$period"
    done ;;
  garbage)
    while :; do
      printf '\033[31mnot json\a %s\n' "$(head -c 200 /dev/zero | tr '\0' y)"
      sleep "$period"
    done ;;
esac
"#;

/// A temp dir with `bin/neuron-monitor`, `sys/class/neuron_device/neuron0`, the lines to
/// replay, and what the fake records (`config.json`, `config.path`, `events`).
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(lines: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        sampler::write_executable(&bin.join("neuron-monitor"), FAKE);
        let dev = dir.path().join("sys/class/neuron_device/neuron0");
        std::fs::create_dir_all(&dev).expect("mkdir");
        std::fs::write(dev.join("core_count"), "4\n").expect("write");
        std::fs::write(dir.path().join("lines.jsonl"), lines).expect("write");
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn marker(&self) -> String {
        format!("LEET_NEURON_TEST={}", self.path().display())
    }

    /// `leet sample --json --interval 300ms ARGS` with the fake in place.
    fn leet(&self, mode: &str, args: &[&str]) -> Command {
        let mut c = common::isolated::leet();
        c.args(["sample", "--json", "--interval", "300ms"])
            .args(args)
            .env("PATH", sampler::path_with(&self.path().join("bin")))
            .env("LEET_SYSFS_ROOT", self.path().join("sys"))
            .env("LEET_NEURON_TEST", self.path())
            .env("FAKE_DIR", self.path())
            .env("FAKE_LINES", self.path().join("lines.jsonl"))
            .env("FAKE_MODE", mode)
            .env("FAKE_DIE_AFTER", "2");
        c
    }

    /// `(event, unix time)` lines the fake appended: "start", "end".
    fn events(&self) -> Vec<(String, f64)> {
        std::fs::read_to_string(self.path().join("events"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (e, t) = l.split_once(' ')?;
                Some((e.to_string(), t.parse().ok()?))
            })
            .collect()
    }

    fn config(&self) -> Value {
        let text = std::fs::read_to_string(self.path().join("config.json"))
            .expect("the fake recorded its config");
        serde_json::from_str(&text).expect("config is JSON")
    }

    fn config_path(&self) -> PathBuf {
        PathBuf::from(
            std::fs::read_to_string(self.path().join("config.path"))
                .expect("the fake recorded its config path")
                .trim(),
        )
    }
}

struct Run {
    samples: Vec<Value>,
    stderr: String,
    /// VmHWM of the leet process, kB (the last one read before it exited).
    peak_rss_kb: u64,
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    sampler::proc_status(pid, "VmHWM:")
}

/// Run `cmd` to its end (at most `limit`, else it is killed and the test fails), reading
/// its JSON lines and stderr and watching its peak RSS. `on_line` sees each sample as
/// it arrives, with the pid, and may signal the process.
fn run_with(
    mut cmd: Command,
    limit: Duration,
    on_line: impl Fn(u32, &Value) + Send + 'static,
) -> Run {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start leet");
    let pid = child.id();
    let samples = Arc::new(Mutex::new(Vec::new()));
    let out = child.stdout.take().expect("stdout");
    let sink = samples.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let line = line.expect("stdout line");
            let v: Value = serde_json::from_str(&line).expect("a JSON sample per line");
            on_line(pid, &v);
            sink.lock().expect("lock").push(v);
        }
    });
    let mut err = child.stderr.take().expect("stderr");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let t = Instant::now();
    let mut peak = 0;
    loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("leet ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().expect("reader");
    let stderr = errs.join().expect("stderr reader");
    let samples = std::mem::take(&mut *samples.lock().expect("lock"));
    Run {
        samples,
        stderr,
        peak_rss_kb: peak,
    }
}

fn run(cmd: Command, limit: Duration) -> Run {
    run_with(cmd, limit, |_, _| {})
}

/// No process of this fake is left (a `sleep` of the script may take its second to end).
/// Every process of a run carries [`Fake::marker`] in its environment.
fn assert_nothing_left(fake: &Fake) {
    let marker = fake.marker();
    sampler::assert_none_left(Duration::from_secs(3), "processes left behind", || {
        sampler::procs_with_env(&marker)
    });
}

/// The `trn.*` keys W&B derives from `report` (spec §9), summed over the runtimes whose
/// pid `keep` accepts: computed from the JSON here, independently of the collector.
fn expected(report: &Value, keep: impl Fn(u64) -> bool) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let mut add = |k: String, v: &Value| {
        *m.entry(k).or_insert(0.0) += v.as_f64().expect("a number");
    };
    for rt in report["neuron_runtime_data"].as_array().expect("runtimes") {
        if !keep(rt["pid"].as_u64().expect("pid")) {
            continue;
        }
        let r = &rt["report"];
        for (core, c) in r["neuroncore_counters"]["neuroncores_in_use"]
            .as_object()
            .expect("cores")
        {
            add(
                format!("trn.{core}.neuroncore_utilization"),
                &c["neuroncore_utilization"],
            );
        }
        let used = &r["memory_used"]["neuron_runtime_used_bytes"];
        add("trn.host_total_memory_usage".into(), &used["host"]);
        add(
            "trn.neuron_device_total_memory_usage".into(),
            &used["neuron_device"],
        );
        let b = &used["usage_breakdown"];
        for (f, v) in b["host"].as_object().expect("host breakdown") {
            add(format!("trn.host_memory_usage.{f}"), v);
        }
        for (core, fields) in b["neuroncore_memory_usage"].as_object().expect("cores") {
            for (f, v) in fields.as_object().expect("fields") {
                add(format!("trn.{core}.neuroncore_memory_usage.{f}"), v);
            }
        }
    }
    m
}

fn trn_keys(sample: &Value) -> BTreeMap<String, f64> {
    sample
        .as_object()
        .expect("object")
        .iter()
        .filter(|(k, _)| k.starts_with("trn."))
        .map(|(k, v)| (k.clone(), v.as_f64().expect("number")))
        .collect()
}

fn assert_values(sample: &Value, want: &BTreeMap<String, f64>) {
    let got = trn_keys(sample);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "trn keys"
    );
    for (k, w) in want {
        let g = got[k];
        assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{k}: got {g}, want {w}"
        );
    }
}

fn recorded() -> Value {
    serde_json::from_str(RECORDED).expect("recorded line is JSON")
}

fn neuron_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("neuron: error: "))
        .collect()
}

/// Host families are sampled whatever the fake does. A family that misses its
/// deadline is left out of that one sample (a sample is never late), which a
/// loaded machine may cause now and then whatever the fake does; a flood that
/// held the host families up would empty most samples, so most must have them.
fn assert_host_keys_each_sample(samples: &[Value]) {
    let with = |key: &str| {
        samples
            .iter()
            .skip(1)
            .filter(|s| s.get(key).is_some())
            .count()
    };
    let most = samples.len().saturating_sub(1).div_ceil(2);
    for key in ["memory_percent", "cpu"] {
        assert!(
            with(key) >= most,
            "{key} in {} of {} samples: {samples:?}",
            with(key),
            samples.len() - 1
        );
    }
}

#[test]
fn recorded_report_is_replayed_at_the_interval() {
    let fake = Fake::new(RECORDED);
    let r = run(
        fake.leet("replay", &["--count", "5"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.samples.len(), 5, "{}", r.stderr);
    let want = expected(&recorded(), |_| true);
    assert_eq!(want.len(), 30);
    // the child starts with the sampler; from the second sample on every one has the keys
    for s in &r.samples[2..] {
        assert_values(s, &want);
    }
    assert!(neuron_errors(&r.stderr).is_empty(), "{}", r.stderr);
    assert!(!r.stderr.contains("neuron: not available"), "{}", r.stderr);
    // the generated config the fake was given
    let cfg = fake.config();
    assert_eq!(cfg["period"], "300ms", "{cfg}");
    let types: Vec<&str> = cfg["neuron_runtimes"][0]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(types, ["neuroncore_counters", "memory_used"], "{cfg}");
    assert_eq!(cfg["neuron_runtimes"][0]["tag_filter"], ".*");
    // one child, removed config, nothing left
    assert_eq!(
        fake.events().iter().filter(|(e, _)| e == "start").count(),
        1
    );
    assert!(!fake.config_path().exists(), "config file left behind");
    assert_nothing_left(&fake);
}

/// The recorded report with a second runtime: pid `b`, cores 4..7, other values.
fn two_runtimes(a: u32, b: u32) -> Value {
    fn scale(v: &mut Value, k: f64) {
        match v {
            Value::Number(n) => *v = Value::from(n.as_f64().expect("number") * k),
            Value::Object(o) => o.values_mut().for_each(|v| scale(v, k)),
            _ => {}
        }
    }
    fn shift_cores(v: &mut Value) {
        let o = v.as_object_mut().expect("cores");
        let old = std::mem::take(o);
        for (core, x) in old {
            let c: u32 = core.parse().expect("core index");
            o.insert((c + 4).to_string(), x);
        }
    }
    let mut v = recorded();
    v["neuron_runtime_data"][0]["pid"] = a.into();
    let mut second = v["neuron_runtime_data"][0].clone();
    second["pid"] = b.into();
    let r = &mut second["report"];
    shift_cores(&mut r["neuroncore_counters"]["neuroncores_in_use"]);
    scale(&mut r["neuroncore_counters"]["neuroncores_in_use"], 0.5);
    let used = &mut r["memory_used"]["neuron_runtime_used_bytes"];
    shift_cores(&mut used["usage_breakdown"]["neuroncore_memory_usage"]);
    scale(used, 3.0);
    v["neuron_runtime_data"]
        .as_array_mut()
        .expect("runtimes")
        .push(second);
    v
}

#[test]
fn pid_selects_the_runtimes_of_its_process_tree() {
    // A real process tree: sh (the --pid) → sleep (the runtime's pid, a grandchild of
    // this test). The other runtime's pid is this test process: not in sh's tree.
    let mut tree = Command::new("sh")
        .args(["-c", "sleep 60 & echo $!; wait"])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("sh");
    let mut first = String::new();
    BufReader::new(tree.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("sleep pid");
    let sleeper: u32 = first.trim().parse().expect("pid");
    let other = std::process::id();
    let report = two_runtimes(sleeper, other);
    let fake = Fake::new(&format!("{report}\n"));
    let root = tree.id().to_string();

    let only = run(
        fake.leet("replay", &["--count", "4", "--pid", &root]),
        Duration::from_secs(30),
    );
    let all = run(
        fake.leet("replay", &["--count", "4"]),
        Duration::from_secs(30),
    );
    // SAFETY: killpg of the group this test created.
    unsafe {
        libc::killpg(i32::try_from(tree.id()).expect("pid"), libc::SIGKILL);
    }
    let _ = tree.wait();

    let want_only = expected(&report, |p| p == u64::from(sleeper));
    assert_eq!(want_only.len(), 30);
    assert!(want_only.contains_key("trn.0.neuroncore_utilization"));
    assert_values(only.samples.last().expect("samples"), &want_only);
    let want_all = expected(&report, |_| true);
    assert_eq!(want_all.len(), 4 * 6 * 2 + 6);
    assert!(want_all["trn.host_total_memory_usage"] > want_only["trn.host_total_memory_usage"]);
    assert_values(all.samples.last().expect("samples"), &want_all);
    assert_nothing_left(&fake);
}

#[test]
fn a_dying_monitor_is_restarted_with_backoff() {
    let fake = Fake::new(RECORDED);
    // dies after 2 reports (~0.3 s); restarts are due 1 s, then 2 s after each death
    let r = run(
        fake.leet("die", &["--count", "20"]),
        Duration::from_secs(40),
    );
    assert_eq!(r.samples.len(), 20, "{}", r.stderr);
    let ev = fake.events();
    let starts: Vec<f64> = ev
        .iter()
        .filter(|(e, _)| e == "start")
        .map(|e| e.1)
        .collect();
    let ends: Vec<f64> = ev.iter().filter(|(e, _)| e == "end").map(|e| e.1).collect();
    assert!(starts.len() >= 3 && ends.len() >= 2, "{ev:?}");
    let d1 = starts[1] - ends[0];
    let d2 = starts[2] - ends[1];
    assert!(
        (0.95..2.5).contains(&d1),
        "first restart after {d1} s: {ev:?}"
    );
    assert!(
        (1.95..4.0).contains(&d2),
        "second restart after {d2} s: {ev:?}"
    );
    assert!(d2 > d1 + 0.5, "backoff does not grow: {d1} then {d2}");
    let errors = neuron_errors(&r.stderr).join("\n");
    assert!(
        errors.contains("neuron-monitor exited (exit status: 1) after ")
            && errors.contains("restart 1 in 1 s")
            && errors.contains("restart 2 in 2 s")
            && errors.contains("neuron-monitor restarted (restart 1)")
            && errors.contains("neuron-monitor restarted (restart 2)"),
        "{errors}"
    );
    // the values of each child's reports get through
    let want = expected(&recorded(), |_| true);
    let with_values = r.samples.iter().filter(|s| !trn_keys(s).is_empty());
    let mut n = 0;
    for s in with_values {
        assert_values(s, &want);
        n += 1;
    }
    assert!(n >= 3, "{n} samples with values");
    assert_host_keys_each_sample(&r.samples);
    assert_nothing_left(&fake);
}

#[test]
fn a_hung_monitor_is_reported_and_delays_nothing() {
    let fake = Fake::new(RECORDED);
    let r = run(
        fake.leet("hang", &["--count", "10"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.samples.len(), 10, "{}", r.stderr);
    assert!(r.samples.iter().all(|s| trn_keys(s).is_empty()));
    let errors = neuron_errors(&r.stderr);
    assert!(
        errors.iter().any(|e| e.ends_with(": no report for 2 s")),
        "{errors:?}"
    );
    assert_host_keys_each_sample(&r.samples);
    let ts: Vec<f64> = r
        .samples
        .iter()
        .map(|s| s["timestamp"].as_f64().expect("timestamp"))
        .collect();
    for w in ts.windows(2) {
        assert!(w[1] - w[0] < 0.3 + 0.5, "a sample came late: {ts:?}");
    }
    assert!(ts[9] - ts[0] < 9.0 * 0.3 + 1.0, "{ts:?}");
    assert_nothing_left(&fake);
}

#[test]
fn garbage_is_reported_sanitized() {
    let fake = Fake::new(RECORDED);
    let r = run(
        fake.leet("garbage", &["--count", "4"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.samples.len(), 4, "{}", r.stderr);
    assert!(r.samples.iter().all(|s| trn_keys(s).is_empty()));
    let errors = neuron_errors(&r.stderr);
    let preview = format!(
        "unparsable line: not json {}… (",
        "y".repeat(80 - "not json ".len())
    );
    assert!(errors.iter().any(|e| e.contains(&preview)), "{errors:?}");
    assert!(
        !r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{7}'),
        "escape sequences reached stderr: {:?}",
        r.stderr
    );
    assert_nothing_left(&fake);
}

/// Flooding modes cost a bounded amount of memory, and the newest valid report still
/// gets through. The cap: the stream keeps at most 4 lines of 2 MiB plus one partial
/// line, 10 MiB; the test allows 24 MiB over a well-behaved run's peak for that, one
/// parse, and allocator slack. Without the caps the 50 MB line alone would exceed it.
#[test]
fn floods_cost_bounded_memory() {
    let fake = Fake::new(RECORDED);
    // `fat` (near-cap lines, 11 MB a period) may or may not outrun the reader: whether
    // lines are dropped then depends on the machine, so only its memory and values count.
    let cases = [
        ("bigline", Some("skipped 1 oversized lines (over 2 MiB)")),
        ("many", Some("lines (more than 4 since the last sample)")),
        ("fat", None),
    ];
    // The calm run and the floods are separate leet processes (each measured on its
    // own): run them side by side, as they mostly wait for samples.
    let (base, runs) = std::thread::scope(|scope| {
        let base = scope.spawn(|| {
            run(
                fake.leet("replay", &["--count", "10"]),
                Duration::from_secs(30),
            )
        });
        let floods: Vec<_> = (cases.iter())
            .map(|(mode, _)| {
                let fake = &fake;
                scope.spawn(move || {
                    run(fake.leet(mode, &["--count", "10"]), Duration::from_secs(40))
                })
            })
            .collect();
        (
            base.join().expect("calm run"),
            (floods.into_iter())
                .map(|h| h.join().expect("flood run"))
                .collect::<Vec<_>>(),
        )
    });
    let want = expected(&recorded(), |_| true);
    assert_values(base.samples.last().expect("samples"), &want);
    let cap_kb = base.peak_rss_kb + 24 * 1024;
    for ((mode, error), r) in cases.into_iter().zip(runs) {
        assert_eq!(r.samples.len(), 10, "{mode}: {}", r.stderr);
        assert!(
            r.peak_rss_kb <= cap_kb,
            "{mode}: peak RSS {} kB over the cap {cap_kb} kB (a calm run: {} kB)",
            r.peak_rss_kb,
            base.peak_rss_kb
        );
        eprintln!(
            "{mode}: peak RSS {} kB (calm run {} kB)",
            r.peak_rss_kb, base.peak_rss_kb
        );
        let errors = neuron_errors(&r.stderr);
        if let Some(error) = error {
            assert!(
                errors.iter().any(|e| e.contains(error)),
                "{mode}: {errors:?}"
            );
        }
        // A report gets through: on a loaded machine the last periods may pass with
        // every line dropped or late, so the newest sample that has one counts.
        let with_report = r.samples.iter().rev().find(|s| !trn_keys(s).is_empty());
        assert_values(with_report.expect("a sample with a report"), &want);
        assert_host_keys_each_sample(&r.samples);
    }
    assert_nothing_left(&fake);
}

#[test]
fn sigterm_leaves_no_child() {
    let fake = Fake::new(RECORDED);
    let r = run_with(
        fake.leet("replay", &["--count", "1000"]),
        Duration::from_secs(30),
        |pid, sample| {
            if !trn_keys(sample).is_empty() {
                // SAFETY: kill(2) of the leet process this test started.
                unsafe {
                    libc::kill(i32::try_from(pid).expect("pid"), libc::SIGTERM);
                }
            }
        },
    );
    assert!(r.samples.len() < 1000);
    assert!(r.samples.iter().any(|s| !trn_keys(s).is_empty()));
    assert_nothing_left(&fake);
    // removed as soon as the child had read it
    assert!(!fake.config_path().exists(), "config file left behind");
}

#[test]
fn absent_family_says_why_in_one_line() {
    let fake = Fake::new(RECORDED);
    let reasons = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| l.starts_with("neuron:"))
            .map(str::to_string)
            .collect()
    };
    // no neuron-monitor anywhere
    let empty = tempfile::tempdir().expect("tempdir");
    let mut cmd = fake.leet("replay", &["--count", "1"]);
    cmd.env("PATH", empty.path());
    let r = run(cmd, Duration::from_secs(30));
    if Path::new("/opt/aws/neuron/bin/neuron-monitor").exists() {
        // a Neuron host: the SDK's default install is found instead
        assert!(reasons(&r.stderr).is_empty(), "{}", r.stderr);
    } else {
        assert_eq!(
            reasons(&r.stderr),
            ["neuron: not available: neuron-monitor not found on PATH or /opt/aws/neuron/bin"],
            "{}",
            r.stderr
        );
    }
    // neuron-monitor, but no device
    let mut cmd = fake.leet("replay", &["--count", "1"]);
    cmd.env("LEET_SYSFS_ROOT", empty.path());
    let r = run(cmd, Duration::from_secs(30));
    assert_eq!(
        reasons(&r.stderr),
        [format!(
            "neuron: not available: no Neuron device (no neuron<N> in {}/class/neuron_device)",
            empty.path().display()
        )],
        "{}",
        r.stderr
    );
    assert_eq!(r.samples.len(), 1);
    assert!(fake.events().is_empty(), "the fake was started");
}
