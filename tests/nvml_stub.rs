//! The real NVIDIA path (`NvmlBackend` → nvml-wrapper → `dlopen("libnvidia-ml.so.1")`)
//! end to end, without a GPU: `tests/nvml_stub.c` is built here into a stand-in
//! `libnvidia-ml.so.1` (two GPUs, fixed values) and found through `LD_LIBRARY_PATH` by
//! `leet sample --json`. Checks the W&B keys and unit conversions of
//! spec/system-metrics.md §4, the probe-once flags, GPM from the second sample on,
//! `gpu.process.N.*` for `--pid`, and a failing `nvmlInit_v2`. Skipped (with a message)
//! where there is no C compiler, except under `CI=true`, where that is a failure.
#![cfg(target_os = "linux")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use common::sampler::{self, KillOnDrop};
use serde_json::{Map, Value};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// The stub's `gpu.0.*` values (tests/nvml_stub.c `devices[0]`), converted as W&B does.
fn gpu0_expected() -> Vec<(&'static str, f64)> {
    vec![
        ("gpu", 87.0),
        ("memory", 41.0),
        ("memoryAllocated", 20.0 / 80.0 * 100.0),
        ("memoryAllocatedBytes", 20.0 * GIB),
        ("temp", 64.0),
        ("powerWatts", 312.345),                         // 312345 mW
        ("enforcedPowerLimitWatts", 700.0),              // 700000 mW
        ("powerPercent", 312_345.0 / 700_000.0 * 100.0), // W / limit
        ("smClock", 1980.0),
        ("memoryClock", 2619.0),
        ("graphicsClock", 1755.0),
        // volatile counters (the stub's aggregate ones are 1000 and 100)
        ("correctedMemoryErrors", 7.0),
        ("uncorrectedMemoryErrors", 1.0),
        ("fanSpeed", 35.0),
        ("encoderUtilization", 12.0),
        ("energyJoules", 987_654.321), // 987654321 mJ
    ]
}

/// `gpu.1.*`: a GPU without fan and ECC (NVML_ERROR_NOT_SUPPORTED), so no such keys.
fn gpu1_expected() -> Vec<(&'static str, f64)> {
    vec![
        ("gpu", 13.0),
        ("memory", 7.0),
        ("memoryAllocated", 12.5),
        ("memoryAllocatedBytes", 3.0 * GIB),
        ("temp", 48.0),
        ("powerWatts", 45.678),
        ("enforcedPowerLimitWatts", 450.0),
        ("powerPercent", 45_678.0 / 450_000.0 * 100.0),
        ("smClock", 2520.0),
        ("memoryClock", 10501.0),
        ("graphicsClock", 2235.0),
        ("encoderUtilization", 0.0),
        ("energyJoules", 12_345.678),
    ]
}

/// GPM keys of GPU 0 from the second sample on: % as is, NVML's MiB/s as bytes/s.
/// `nvlinkRxBytes` is absent: the stub fails that one metric (per-metric NOT_SUPPORTED).
fn gpm_expected() -> Vec<(&'static str, f64)> {
    vec![
        ("smActive", 71.5),
        ("smOccupancy", 33.25),
        ("pipeTensorActive", 48.0),
        ("dramActive", 62.5),
        ("pipeFp64Active", 1.5),
        ("pipeFp32Active", 12.75),
        ("pipeFp16Active", 3.5),
        ("pipeTensorHmmaActive", 45.25),
        ("pcieTxBytes", 1536.5 * MIB),
        ("pcieRxBytes", 812.25 * MIB),
        ("nvlinkTxBytes", 20480.0 * MIB),
    ]
}

const GPM_KEYS: [&str; 12] = [
    "smActive",
    "smOccupancy",
    "pipeTensorActive",
    "dramActive",
    "pipeFp64Active",
    "pipeFp32Active",
    "pipeFp16Active",
    "pipeTensorHmmaActive",
    "pcieTxBytes",
    "pcieRxBytes",
    "nvlinkTxBytes",
    "nvlinkRxBytes",
];

/// The device keys copied under `gpu.process.N.` (spec §4).
const PROCESS_KEYS: [&str; 8] = [
    "gpu",
    "memory",
    "memoryAllocated",
    "memoryAllocatedBytes",
    "temp",
    "powerWatts",
    "enforcedPowerLimitWatts",
    "powerPercent",
];

/// A temporary directory holding the stub built as `libnvidia-ml.so.1`, or None (test
/// skipped) when there is no C compiler (a failure under `CI=true`).
fn build_stub() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().expect("tempdir");
    sampler::build_c_stub("nvml_stub.c", &dir.path().join("libnvidia-ml.so.1"))?;
    Some(dir)
}

struct Run {
    status: ExitStatus,
    samples: Vec<Map<String, Value>>,
    stderr: String,
    /// The stub's call log: one `<symbol> <device index or -1>` per call.
    calls: Vec<String>,
}

impl Run {
    fn count(&self, call: &str) -> usize {
        self.calls.iter().filter(|c| *c == call).count()
    }
}

/// `leet sample --json --count N --interval 200ms [args]` with the stub on the library
/// path and `env` set; killed after 60 s.
fn leet_sample(stub: &Path, count: u32, args: &[String], env: &[(&str, String)]) -> Run {
    let log_path = stub.join("calls.log");
    let count = count.to_string();
    let mut cmd = sampler::leet_sample(
        &["--json", "--interval", "200ms", "--count", &count],
        &[] as &[(&str, &str)],
    );
    cmd.args(args)
        .env("LD_LIBRARY_PATH", stub)
        .env("NVML_STUB_LOG", &log_path)
        .env_remove("NVML_STUB_PID")
        .env_remove("NVML_STUB_FAIL_INIT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = sampler::run_to_end(cmd, stub).json();
    Run {
        status: run.status,
        samples: run.samples,
        stderr: run.stderr,
        calls: std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect(),
    }
}

fn num(sample: &Map<String, Value>, key: &str) -> Option<f64> {
    sample.get(key).map(|v| {
        v.as_f64()
            .unwrap_or_else(|| panic!("{key} is not a number: {v}"))
    })
}

fn assert_close(key: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("{key} missing"));
    assert!(
        (got - want).abs() <= want.abs() * 1e-12,
        "{key}: got {got}, want {want}"
    );
}

fn gpu_keys(sample: &Map<String, Value>) -> BTreeSet<&str> {
    sample
        .keys()
        .map(String::as_str)
        .filter(|k| k.starts_with("gpu."))
        .collect()
}

#[test]
fn real_nvml_backend_reads_the_stub_library() {
    let Some(stub) = build_stub() else { return };
    let target = KillOnDrop(
        Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep"),
    );
    let pid = target.0.id().to_string();
    let run = leet_sample(
        stub.path(),
        3,
        &["--pid".to_string(), pid.clone()],
        &[("NVML_STUB_PID", pid)],
    );
    drop(target);

    assert!(run.status.success(), "leet failed: {}", run.stderr);
    assert!(
        !run.stderr.lines().any(|l| l.starts_with("nvidia:")),
        "nvidia reported unavailable or failing:\n{}",
        run.stderr
    );
    assert_eq!(run.samples.len(), 3, "stderr: {}", run.stderr);

    for (i, s) in run.samples.iter().enumerate() {
        let mut want: BTreeMap<String, f64> = BTreeMap::new();
        for (k, v) in gpu0_expected() {
            want.insert(format!("gpu.0.{k}"), v);
        }
        for (k, v) in gpu1_expected() {
            want.insert(format!("gpu.1.{k}"), v);
        }
        if i > 0 {
            for (k, v) in gpm_expected() {
                want.insert(format!("gpu.0.{k}"), v);
            }
        }
        // The monitored process runs on GPU 1 only: its device values are copied.
        for k in PROCESS_KEYS {
            let v = want[&format!("gpu.1.{k}")];
            want.insert(format!("gpu.process.1.{k}"), v);
        }
        for (k, v) in &want {
            assert_close(&format!("sample {i}: {k}"), num(s, k), *v);
        }
        // Nothing else: no fan/ECC keys for GPU 1, no GPM keys for GPU 1 or in the first
        // sample, no nvlinkRxBytes (failed metric), no gpu.process.0.*.
        let want_keys: BTreeSet<&str> = want.keys().map(String::as_str).collect();
        assert_eq!(gpu_keys(s), want_keys, "sample {i}");
        for k in GPM_KEYS {
            assert!(
                !s.contains_key(&format!("gpu.1.{k}")),
                "sample {i}: gpu.1.{k}"
            );
        }
    }

    // Unsupported metrics cost one probe each; supported ones are read every sample.
    assert_eq!(
        run.count("nvmlDeviceGetFanSpeed_v2 1"),
        1,
        "{:?}",
        run.calls
    );
    assert_eq!(run.count("nvmlDeviceGetTotalEccErrors 1"), 2); // corrected + uncorrected
    assert_eq!(run.count("nvmlDeviceGetFanSpeed_v2 0"), 3);
    assert_eq!(run.count("nvmlDeviceGetTotalEccErrors 0"), 6);
    assert_eq!(run.count("nvmlInit_v2 -1"), 1);
    // GPM: support asked once per device; GPU 1 is never sampled; one metrics call per
    // pair of consecutive samples; at most the latest snapshot is left unfreed.
    assert_eq!(run.count("nvmlGpmQueryDeviceSupport 0"), 1);
    assert_eq!(run.count("nvmlGpmQueryDeviceSupport 1"), 1);
    assert_eq!(run.count("nvmlGpmSampleGet 1"), 0);
    assert_eq!(run.count("nvmlGpmSampleGet 0"), 3);
    assert_eq!(run.count("nvmlGpmMetricsGet -1"), 2);
    let allocs = run.count("nvmlGpmSampleAlloc -1");
    let frees = run
        .calls
        .iter()
        .filter(|c| c.starts_with("nvmlGpmSampleFree "))
        .count();
    assert_eq!(allocs, 3);
    assert!(
        frees <= allocs && allocs - frees <= 1,
        "{allocs} allocs, {frees} frees"
    );
    assert_eq!(run.count("nvmlGpmSampleFree -1"), 0, "bad or double free");
}

#[test]
fn failing_nvml_init_is_reported_not_fatal() {
    let Some(stub) = build_stub() else { return };
    let run = leet_sample(
        stub.path(),
        2,
        &[],
        &[("NVML_STUB_FAIL_INIT", "1".to_string())],
    );
    assert!(run.status.success(), "leet failed: {}", run.stderr);
    assert_eq!(run.samples.len(), 2, "stderr: {}", run.stderr);
    for s in &run.samples {
        assert!(gpu_keys(s).is_empty(), "{:?}", gpu_keys(s));
        // the other families still report
        assert!(s.contains_key("memory_percent"), "{s:?}");
    }
    let why = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("nvidia: not available: "))
        .unwrap_or_else(|| panic!("nvidia not reported unavailable:\n{}", run.stderr));
    assert!(why.contains("driver is not loaded"), "{why}");
    // The stub was loaded and asked to initialise, and nothing else.
    assert!(run.count("nvmlInit_v2 -1") >= 1);
    assert!(
        run.calls.iter().all(|c| c == "nvmlInit_v2 -1"),
        "{:?}",
        run.calls
    );
}

#[test]
fn gpu_process_keys_cover_descendants_of_pid() {
    let Some(stub) = build_stub() else { return };
    // `--pid` is the shell; the GPU process NVML reports is its child.
    let mut shell = KillOnDrop(
        Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn sh"),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(shell.0.stdout.take().expect("sh stdout")),
        &mut line,
    )
    .expect("read child pid");
    let grandchild = line.trim().to_string();
    let run = leet_sample(
        stub.path(),
        2,
        &["--pid".to_string(), shell.0.id().to_string()],
        &[("NVML_STUB_PID", grandchild.clone())],
    );
    let _ = Command::new("kill").arg(&grandchild).status();
    drop(shell);

    assert!(run.status.success(), "leet failed: {}", run.stderr);
    assert_eq!(run.samples.len(), 2, "stderr: {}", run.stderr);
    for (i, s) in run.samples.iter().enumerate() {
        for k in PROCESS_KEYS {
            let device = num(s, &format!("gpu.1.{k}")).unwrap_or_else(|| panic!("gpu.1.{k}"));
            assert_close(
                &format!("sample {i}: gpu.process.1.{k}"),
                num(s, &format!("gpu.process.1.{k}")),
                device,
            );
        }
        assert!(
            !s.keys().any(|k| k.starts_with("gpu.process.0.")),
            "sample {i}"
        );
    }
}
