//! `leet sample --dcgm` end to end without a GPU or a host engine: `tests/dcgm_stub.c` is
//! built here into a stand-in `libdcgm.so.4` (two GPUs, fixed values) that
//! `$LEET_DCGM_LIB` points at. Checks the keys and units of spec §5 (ratios → %, byte
//! rates as is, blank and failed values left out), the calls made (one field group of
//! the supported wanted fields, watched at the sampling interval, one read per sample),
//! the one-line reasons when the flag is off, the library is missing or no host engine
//! answers, and, with `tests/nvml_stub.c` as `libnvidia-ml.so.1` beside it, that DCGM
//! supersedes NVML GPM so no profiling key is written twice.
//!
//! Needs a C compiler: without one the tests are skipped, except under `CI=true`, where
//! that is a failure.
#![cfg(target_os = "linux")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::sampler;
use serde_json::{Map, Value};

const PROFILING: [&str; 12] = [
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

/// What the stub's host engine holds, as leet must write it: DCGM's ratios × 100, its
/// int64 byte rates unchanged. GPU 1's SM_OCCUPANCY and PCIE_RX are blank and its
/// NVLINK_RX has status NO_DATA: no keys.
fn expected() -> BTreeMap<String, f64> {
    let gpu0 = [
        ("smActive", 62.5),
        ("smOccupancy", 37.5),
        ("pipeTensorActive", 50.0),
        ("dramActive", 75.0),
        ("pipeFp64Active", 6.25),
        ("pipeFp32Active", 25.0),
        ("pipeFp16Active", 12.5),
        ("pipeTensorHmmaActive", 43.75),
        ("pcieTxBytes", 1_234_567.0),
        ("pcieRxBytes", 7_654_321.0),
        ("nvlinkTxBytes", 987_654_321.0),
        ("nvlinkRxBytes", 123_456_789.0),
    ];
    let gpu1 = [
        ("smActive", 31.25),
        ("pipeTensorActive", 25.0),
        ("dramActive", 37.5),
        ("pipeFp64Active", 3.125),
        ("pipeFp32Active", 12.5),
        ("pipeFp16Active", 6.25),
        ("pipeTensorHmmaActive", 31.25),
        ("pcieTxBytes", 1_235_567.0),
        ("nvlinkTxBytes", 987_655_321.0),
    ];
    let mut m = BTreeMap::new();
    for (k, v) in gpu0 {
        m.insert(format!("gpu.0.{k}"), v);
    }
    for (k, v) in gpu1 {
        m.insert(format!("gpu.1.{k}"), v);
    }
    m
}

/// Build `tests/<src>` into `<dir>/<name>`; None (skip) without `cc`, a failure under CI.
fn build(dir: &Path, src: &str, name: &str) -> Option<PathBuf> {
    sampler::build_c_stub(src, &dir.join(name))
}

struct Run {
    stdout: String,
    stderr: String,
    /// The DCGM stub's call log.
    dcgm: Vec<String>,
    /// The NVML stub's call log (when it was on the library path).
    nvml: Vec<String>,
}

impl Run {
    fn samples(&self) -> Vec<Map<String, Value>> {
        sampler::json_objects(&self.stdout)
    }

    fn dcgm_calls(&self, prefix: &str) -> Vec<&str> {
        self.dcgm
            .iter()
            .filter(|c| c.starts_with(prefix))
            .map(String::as_str)
            .collect()
    }

    fn reason(&self, family: &str) -> Vec<&str> {
        let prefix = format!("{family}: not available: ");
        self.stderr
            .lines()
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .collect()
    }
}

/// `leet sample --interval 300ms --count 3 [args]` with the given environment, in `dir`
/// (logs and output go there); killed after 60 s.
fn leet_sample(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Run {
    leet_sample_n(dir, 3, args, env)
}

fn leet_sample_n(dir: &Path, count: u32, args: &[&str], env: &[(&str, &Path)]) -> Run {
    let dcgm_log = dir.join("dcgm.log");
    let nvml_log = dir.join("nvml.log");
    let _ = std::fs::remove_file(&dcgm_log);
    let _ = std::fs::remove_file(&nvml_log);
    let count = count.to_string();
    let mut cmd = sampler::leet_sample(
        &["--interval", "300ms", "--count", &count],
        &[] as &[(&str, &str)],
    );
    cmd.args(args)
        .env("DCGM_STUB_LOG", &dcgm_log)
        .env("NVML_STUB_LOG", &nvml_log)
        .env_remove("DCGM_STUB_NO_HOSTENGINE")
        .env_remove("DCGM_STUB_RESTART_AFTER")
        .env_remove("LEET_DCGM_LIB")
        .env_remove("NVML_STUB_PID")
        .env_remove("NVML_STUB_FAIL_INIT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let finished = sampler::run_to_end(cmd, dir);
    finished.assert_success();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Run {
        stdout: finished.stdout,
        stderr: finished.stderr,
        dcgm: read(&dcgm_log).lines().map(str::to_string).collect(),
        nvml: read(&nvml_log).lines().map(str::to_string).collect(),
    }
}

fn profiling_keys(sample: &Map<String, Value>) -> BTreeSet<&str> {
    sample
        .keys()
        .map(String::as_str)
        .filter(|k| {
            k.starts_with("gpu.") && PROFILING.iter().any(|p| k.ends_with(&format!(".{p}")))
        })
        .collect()
}

fn assert_close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-12,
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn profiling_fields_come_from_the_host_engine_in_wandb_units() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(lib) = build(dir.path(), "dcgm_stub.c", "libdcgm.so.4") else {
        return;
    };
    let run = leet_sample(
        dir.path(),
        &["--json", "--dcgm"],
        &[("LEET_DCGM_LIB", &lib)],
    );
    assert!(run.reason("dcgm").is_empty(), "{}", run.stderr);
    assert!(
        !run.stderr.lines().any(|l| l.starts_with("dcgm:")),
        "{}",
        run.stderr
    );
    let samples = run.samples();
    assert_eq!(samples.len(), 3, "{}", run.stderr);
    let want = expected();
    for (i, s) in samples.iter().enumerate() {
        let got = profiling_keys(s);
        let want_keys: BTreeSet<&str> = want.keys().map(String::as_str).collect();
        assert_eq!(got, want_keys, "sample {i}");
        for (k, v) in &want {
            let g = s[k].as_f64().unwrap_or_else(|| panic!("{k} not a number"));
            assert_close(&format!("sample {i}: {k}"), g, *v);
        }
        assert!(s.contains_key("memory_percent"), "other families go on");
    }
    // The calls: connect to the reference's address, one field group of the wanted
    // fields the GPUs support (not GR_ENGINE_ACTIVE 1001, which leet does not map),
    // watched every 300 ms, then one read per sample.
    assert_eq!(run.dcgm_calls("dcgmInit"), ["dcgmInit -1"]);
    assert_eq!(run.dcgm_calls("dcgmConnect"), ["dcgmConnect 1"]);
    assert_eq!(
        run.dcgm_calls("dcgmFieldGroupCreate"),
        ["dcgmFieldGroupCreate 12"]
    );
    let fields: BTreeSet<&str> = run.dcgm_calls("field ").into_iter().collect();
    let want_fields: BTreeSet<String> = (1002..=1012)
        .chain([1014])
        .map(|f| format!("field {f}"))
        .collect();
    assert_eq!(
        fields,
        want_fields
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>()
    );
    assert_eq!(
        run.dcgm_calls("dcgmWatchFields"),
        ["dcgmWatchFields 300000"]
    );
    assert_eq!(run.dcgm_calls("dcgmGetLatestValues_v2").len(), 3);
}

#[test]
fn no_host_engine_missing_library_and_flag_off_are_one_line_each() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(lib) = build(dir.path(), "dcgm_stub.c", "libdcgm.so.4") else {
        return;
    };
    let marker = dir.path().join("no-hostengine");
    std::fs::write(&marker, "1").expect("marker");

    let run = leet_sample(
        dir.path(),
        &["--json", "--dcgm"],
        &[
            ("LEET_DCGM_LIB", &lib),
            ("DCGM_STUB_NO_HOSTENGINE", &marker),
        ],
    );
    let why = run.reason("dcgm");
    assert_eq!(why.len(), 1, "{}", run.stderr);
    assert_eq!(
        why[0],
        "dcgmConnect localhost:5555: The connection to the host engine is not valid any \
         longer (-21) (is nv-hostengine running?)"
    );
    for s in run.samples() {
        assert!(profiling_keys(&s).is_empty(), "{s:?}");
        assert!(s.contains_key("memory_percent"));
    }
    assert!(run.dcgm_calls("dcgmGetLatestValues_v2").is_empty());

    let missing = dir.path().join("nowhere/libdcgm.so.4");
    let run = leet_sample(dir.path(), &["--dcgm"], &[("LEET_DCGM_LIB", &missing)]);
    let why = run.reason("dcgm");
    assert_eq!(why.len(), 1, "{}", run.stderr);
    assert!(
        why[0].starts_with(&format!("cannot load {}", missing.display()))
            && why[0].ends_with("(install DCGM 4, or set LEET_DCGM_LIB)"),
        "{}",
        why[0]
    );

    // Opt-in: without --dcgm the library is not even loaded.
    let run = leet_sample(dir.path(), &["--json"], &[("LEET_DCGM_LIB", &lib)]);
    assert_eq!(run.reason("dcgm"), ["not enabled (--dcgm)"]);
    assert!(run.dcgm.is_empty(), "{:?}", run.dcgm);
}

/// `gpu.N.<key>` → every value printed for it in `leet sample`'s text output, per sample.
fn text_values(stdout: &str) -> Vec<BTreeMap<String, Vec<f64>>> {
    let mut samples = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("timestamp ") {
            samples.push(BTreeMap::new());
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(k), Some(v), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let current: &mut BTreeMap<String, Vec<f64>> =
            samples.last_mut().expect("a value before any timestamp");
        current.entry(k.to_string()).or_default().push(
            v.parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        );
    }
    samples
}

#[test]
fn dcgm_supersedes_nvml_gpm_so_no_key_is_written_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(dcgm) = build(dir.path(), "dcgm_stub.c", "libdcgm.so.4") else {
        return;
    };
    // GPU 0 of the NVML stub supports GPM and would give its own smActive (71.5) etc.
    build(dir.path(), "nvml_stub.c", "libnvidia-ml.so.1").expect("cc worked just now");
    let run = leet_sample(
        dir.path(),
        &["--dcgm"],
        &[("LEET_DCGM_LIB", &dcgm), ("LD_LIBRARY_PATH", dir.path())],
    );
    assert!(run.reason("dcgm").is_empty(), "{}", run.stderr);
    assert!(run.reason("nvidia").is_empty(), "{}", run.stderr);
    let samples = text_values(&run.stdout);
    assert_eq!(samples.len(), 3, "{}", run.stdout);
    let want = expected();
    for (i, s) in samples.iter().enumerate() {
        for (k, v) in &want {
            let got = s
                .get(k)
                .unwrap_or_else(|| panic!("sample {i}: {k} missing"));
            assert_eq!(got.len(), 1, "sample {i}: {k} written {} times", got.len());
            // printed with 3 decimals
            assert!(
                (got[0] - v).abs() < 5e-4,
                "sample {i}: {k} = {}, want {v}",
                got[0]
            );
        }
        for (k, vs) in s {
            assert_eq!(vs.len(), 1, "sample {i}: {k} written {} times", vs.len());
        }
        // NVML still gives its own keys.
        assert_eq!(s.get("gpu.0.temp"), Some(&vec![64.0]), "sample {i}");
    }
    // NVML never took a GPM snapshot of the GPUs DCGM covers.
    assert!(
        !run.nvml.iter().any(|c| c.starts_with("nvmlGpmSampleGet")),
        "{:?}",
        run.nvml
    );
    assert!(
        run.nvml.iter().any(|c| c == "nvmlInit_v2 -1"),
        "{:?}",
        run.nvml
    );
}

#[test]
fn a_restarted_host_engine_is_reported_once_and_reconnected_after_the_back_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(lib) = build(dir.path(), "dcgm_stub.c", "libdcgm.so.4") else {
        return;
    };
    // The engine restarts at the second read. leet waits ten samples (3 s at 300 ms)
    // before connecting again: 20 samples cover that with a wide margin.
    let restart = Path::new("1");
    let run = leet_sample_n(
        dir.path(),
        20,
        &["--json", "--dcgm"],
        &[
            ("LEET_DCGM_LIB", &lib),
            ("DCGM_STUB_RESTART_AFTER", restart),
        ],
    );
    let samples = run.samples();
    assert_eq!(samples.len(), 20, "{}", run.stderr);
    let with_keys: Vec<bool> = samples
        .iter()
        .map(|s| !profiling_keys(s).is_empty())
        .collect();
    assert!(with_keys[0], "first read answered");
    assert!(!with_keys[1], "the restart read gives nothing");
    let back = with_keys
        .iter()
        .skip(2)
        .position(|k| *k)
        .map_or_else(|| panic!("never reconnected: {}", run.stderr), |p| p + 2);
    // not before the back-off (3 s = 10 samples at 300 ms; sampling can only be slower)
    assert!(back >= 9, "reconnected at sample {back}");
    assert!(with_keys[back..].iter().all(|k| *k), "{with_keys:?}");
    for s in &samples[back..] {
        let want = expected();
        for (k, v) in &want {
            assert_close(k, s[k].as_f64().expect("number"), *v);
        }
    }
    // One error line for the loss, no retry storm: two connects in all.
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("dcgm: "))
        .collect();
    assert_eq!(
        errors,
        [
            "dcgm: error: gpu: dcgmGetLatestValues_v2: The connection to the host engine is not \
          valid any longer (-21); reconnecting in 3.0 s"
        ]
    );
    assert_eq!(run.dcgm_calls("dcgmConnect").len(), 2);
    assert_eq!(run.dcgm_calls("dcgmWatchFields").len(), 2);
    assert!(samples.iter().all(|s| s.contains_key("memory_percent")));
}
