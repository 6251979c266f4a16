//! The AMD family end to end without a GPU: `tests/rocm_smi_stub.c` is built here into a
//! stand-in `librocm_smi64.so` (two GPUs, fixed values) that `$LEET_ROCM_SMI_LIB` points
//! at, `$LEET_SYSFS_ROOT` is a fake tree whose `module/amdgpu/initstate` says `live`, and
//! a fake `rocm-smi` on `PATH` replays a recorded `rocm-smi -a --json` and notes each run.
//! Checks the `gpu.N.*` keys and unit conversions of the library path (the CLI path's keys
//! plus `energyJoules`), that no process is started per sample when the library works,
//! the probe-once rule, the fallback to the CLI with the library's failure reported, and
//! the one-line reasons when the driver is not live or nothing is there.
//!
//! Needs a C compiler: without one the tests are skipped, except under `CI=true`, where
//! that is a failure.
#![cfg(target_os = "linux")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::sampler;
use leet::source::sampler::{amd_metrics, parse_rocm_smi_json};
use serde_json::{Map, Value};

/// A temporary directory holding the stub, a fake sysfs and a fake `rocm-smi`.
struct Fakes {
    dir: tempfile::TempDir,
    lib: PathBuf,
}

impl Fakes {
    /// None (skip) without `cc`; a failure under CI.
    fn new() -> Option<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = sampler::build_c_stub("rocm_smi_stub.c", &dir.path().join("librocm_smi64.so"))?;
        Some(Self { dir, lib })
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// A sysfs root whose amdgpu `initstate` holds `state` (None: no amdgpu module).
    fn sysfs(&self, state: Option<&str>) -> PathBuf {
        let root = self.path(&format!("sys-{}", state.map_or("none", str::trim)));
        std::fs::create_dir_all(root.join("module")).expect("sysfs");
        if let Some(state) = state {
            std::fs::create_dir_all(root.join("module/amdgpu")).expect("sysfs");
            std::fs::write(root.join("module/amdgpu/initstate"), state).expect("initstate");
        }
        root
    }

    /// A `bin/rocm-smi` that appends a line to `rocm-smi.log` and prints `fixture`.
    fn fake_rocm_smi(&self, fixture: &str) -> PathBuf {
        let bin = self.path("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/devices")
            .join(fixture);
        let script = format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\ncat '{}'\n",
            self.path("rocm-smi.log").display(),
            fixture.display()
        );
        sampler::write_executable(&bin.join("rocm-smi"), &script);
        bin
    }

    fn rocm_smi_runs(&self) -> usize {
        std::fs::read_to_string(self.path("rocm-smi.log")).map_or(0, |s| s.lines().count())
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("rsmi.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn count(&self, call: &str) -> usize {
        self.calls().iter().filter(|c| *c == call).count()
    }

    /// `leet sample --json --count 3 --interval 300ms` with PATH = `path` (then the
    /// system's), the given environment, the stub's log in the temp dir.
    fn sample(&self, path: &Path, env: &[(&str, &Path)]) -> (Vec<Map<String, Value>>, String) {
        let sys_path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![path.to_path_buf()];
        paths.extend(std::env::split_paths(&sys_path).filter(|p| !p.join("rocm-smi").exists()));
        let mut cmd = sampler::leet_sample(
            &["--json", "--count", "3", "--interval", "300ms"],
            &[] as &[(&str, &str)],
        );
        cmd.env("PATH", std::env::join_paths(paths).expect("PATH"))
            .env("ROCM_SMI_STUB_LOG", self.path("rsmi.log"))
            .env_remove("ROCM_SMI_STUB_FAIL_INIT")
            .env_remove("LEET_ROCM_SMI_LIB")
            .env_remove("LEET_SYSFS_ROOT");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let finished = sampler::run_to_end(cmd, self.dir.path());
        finished.assert_success();
        let run = finished.json();
        (run.samples, run.stderr)
    }
}

fn gpu_values(sample: &Map<String, Value>) -> BTreeMap<String, f64> {
    sample
        .iter()
        .filter(|(k, _)| k.starts_with("gpu."))
        .map(|(k, v)| {
            let v = v
                .as_f64()
                .unwrap_or_else(|| panic!("{k} is not a number: {v}"));
            (k.clone(), v)
        })
        .collect()
}

fn assert_values(what: &str, got: &BTreeMap<String, f64>, want: &BTreeMap<String, f64>) {
    let gk: BTreeSet<&String> = got.keys().collect();
    let wk: BTreeSet<&String> = want.keys().collect();
    assert_eq!(gk, wk, "{what}: keys");
    for (k, w) in want {
        let g = got[k];
        assert!(
            (g - w).abs() <= w.abs() * 1e-12,
            "{what}: {k} = {g}, want {w}"
        );
    }
}

fn reason<'a>(stderr: &'a str, family: &str) -> Vec<&'a str> {
    let prefix = format!("{family}: not available: ");
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect()
}

#[test]
fn library_gives_the_cli_keys_plus_energy_without_a_process_per_sample() {
    let Some(f) = Fakes::new() else { return };
    let bin = f.fake_rocm_smi("rocm-smi-6.1.2-rx6700xt.json");
    let sys = f.sysfs(Some("live\n"));
    let (samples, stderr) = f.sample(
        &bin,
        &[("LEET_ROCM_SMI_LIB", &f.lib), ("LEET_SYSFS_ROOT", &sys)],
    );
    assert!(
        !stderr.lines().any(|l| l.starts_with("amd:")),
        "amd unavailable or failing:\n{stderr}"
    );
    assert_eq!(samples.len(), 3, "{stderr}");
    for (i, s) in samples.iter().enumerate() {
        // Units as the stub returns them: %, bytes, m°C, µW, counter × µJ resolution.
        let mut want: BTreeMap<String, f64> = [
            ("gpu.0.gpu", 87.0),
            ("gpu.0.memoryAllocated", 48.0 / 192.0 * 100.0),
            ("gpu.0.memoryReadWriteActivity", 41.0),
            ("gpu.0.memoryOverDrive", 5.0),
            ("gpu.0.temp", 51.25),
            ("gpu.0.powerWatts", 512.345_678),
            ("gpu.0.powerPercent", 512.345_678 / 750.0 * 100.0),
            ("gpu.0.energyJoules", 123_456_789.0 * 15.25 / 1e6),
            ("gpu.1.gpu", 3.0),
            ("gpu.1.memoryAllocated", 8.0 / 32.0 * 100.0),
            ("gpu.1.memoryReadWriteActivity", 0.0),
            ("gpu.1.powerWatts", 45.678),
            ("gpu.1.powerPercent", 45.678 / 290.0 * 100.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // GPU 1's memory sensor is busy on every other read: missing then, back after.
        if i != 1 {
            want.insert("gpu.1.temp".to_string(), 38.0);
        }
        assert_values(&format!("sample {i}"), &gpu_values(s), &want);
        assert!(s.contains_key("memory_percent"), "other families go on");
    }
    // No process per sample: the fake rocm-smi never ran.
    assert_eq!(f.rocm_smi_runs(), 0);
    assert_eq!(f.count("rsmi_init 0"), 1);
    assert_eq!(f.count("rsmi_dev_busy_percent_get 0"), 3);
    assert_eq!(f.count("rsmi_dev_busy_percent_get 1"), 3);
    // Not supported: asked once. Busy: asked again every sample.
    assert_eq!(f.count("rsmi_dev_energy_count_get 1"), 1);
    assert_eq!(f.count("rsmi_dev_mem_overdrive_level_get 1"), 1);
    assert_eq!(f.count("rsmi_dev_energy_count_get 0"), 3);
    assert_eq!(f.count("rsmi_dev_temp_metric_get 1"), 3);
    // rsmi_dev_power_get is there, so the deprecated average call is not used.
    assert_eq!(f.count("rsmi_dev_power_get 0"), 3);
    assert!(!f
        .calls()
        .iter()
        .any(|c| c.starts_with("rsmi_dev_power_ave_get")));
    // Static info for the overview: names and VRAM from the library, asked once.
    assert_eq!(f.count("rsmi_dev_name_get 0"), 1);
}

#[test]
fn failing_library_falls_back_to_the_cli_and_says_why() {
    let Some(f) = Fakes::new() else { return };
    let fixture = "rocm-smi-6.1.2-rx6700xt.json";
    let bin = f.fake_rocm_smi(fixture);
    let sys = f.sysfs(Some("live\n"));
    let marker = f.path("fail");
    std::fs::write(&marker, "1").expect("marker");
    let (samples, stderr) = f.sample(
        &bin,
        &[
            ("LEET_ROCM_SMI_LIB", &f.lib),
            ("LEET_SYSFS_ROOT", &sys),
            ("ROCM_SMI_STUB_FAIL_INIT", &marker),
        ],
    );
    assert_eq!(samples.len(), 3, "{stderr}");
    // The recorded output, mapped by the CLI path.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/devices")
            .join(fixture),
    )
    .expect("fixture");
    let mut expected = Vec::new();
    amd_metrics(
        &parse_rocm_smi_json(&text).expect("fixture json"),
        &mut expected,
    );
    let want: BTreeMap<String, f64> = expected.into_iter().collect();
    assert!(!want.is_empty());
    for (i, s) in samples.iter().enumerate() {
        assert_values(&format!("sample {i}"), &gpu_values(s), &want);
    }
    // One run at detection, then one per sample.
    assert_eq!(f.rocm_smi_runs(), 4);
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("amd:")).collect();
    assert_eq!(
        notes,
        [
            "amd: error: gpu: librocm_smi64 not used (rsmi_init: RSMI_STATUS_INIT_ERROR: An \
          error occurred during initialization (status 8)); running rocm-smi each sample"
        ],
        "{stderr}"
    );
}

#[test]
fn driver_not_live_loads_nothing_and_nothing_there_says_both() {
    let Some(f) = Fakes::new() else { return };
    let bin = f.fake_rocm_smi("rocm-smi-6.1.2-rx6700xt.json");
    for state in [None, Some("coming\n")] {
        let sys = f.sysfs(state);
        let (samples, stderr) = f.sample(
            &bin,
            &[("LEET_ROCM_SMI_LIB", &f.lib), ("LEET_SYSFS_ROOT", &sys)],
        );
        let want = format!(
            "amdgpu driver not loaded ({})",
            sys.join("module/amdgpu/initstate").display()
        );
        assert_eq!(reason(&stderr, "amd"), [want.as_str()]);
        assert!(f.calls().is_empty(), "library loaded: {:?}", f.calls());
        assert_eq!(f.rocm_smi_runs(), 0);
        assert!(samples.iter().all(|s| s.contains_key("memory_percent")));
    }

    let empty = f.path("empty-bin");
    std::fs::create_dir_all(&empty).expect("dir");
    let missing = f.path("nowhere/librocm_smi64.so");
    let sys = f.sysfs(Some("live\n"));
    let (_, stderr) = f.sample(
        &empty,
        &[("LEET_ROCM_SMI_LIB", &missing), ("LEET_SYSFS_ROOT", &sys)],
    );
    let why = reason(&stderr, "amd");
    assert_eq!(why.len(), 1, "{stderr}");
    assert!(
        why[0].starts_with(&format!("cannot load {}: ", missing.display()))
            && why[0].ends_with("; rocm-smi not found on PATH"),
        "{}",
        why[0]
    );
    assert!(
        why[0].len() < 400 && !why[0].contains('\n'),
        "one short line: {}",
        why[0]
    );
    assert_eq!(f.rocm_smi_runs(), 0);
}
