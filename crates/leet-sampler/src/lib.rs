//! Host and accelerator metrics under W&B's system-metric keys (`cpu`, `memory_percent`,
//! `disk./.usagePercent`, `gpu.0.gpu`, `openmetrics.<name>.<metric>.<k>`, ...).
//!
//! One [`Collector`] per metric family, each detected at start. A family that cannot run
//! here (no NVML, no rocm-smi) is listed by [`Sampler::unavailable`] with the reason,
//! and the others carry on. Errors of a working collector during one sample (an
//! endpoint that is down, a tool that fails) land in [`Sample::errors`]; nothing here
//! panics or exits.
//!
//! Isolation: every collector lives on its own worker thread (detection included, in
//! parallel). At each tick the sampler asks every idle worker for a reading and waits at
//! most the per-source deadline ([`deadline_for`], half the interval) for the answers. A
//! source that misses it is left out of that sample and reported in [`Sample::errors`]
//! ("late"); a worker still busy with an earlier reading is not asked again (no request
//! queues behind a hung one) and is reported "busy". A reading that completes after its
//! deadline is used in the next sample unless a fresher one arrives. So one hung source
//! never delays a sample, and dropping the [`Sampler`] never waits for a worker.
//!
//! OpenMetrics endpoints are not probed at start: their first scrape is part of the
//! first sample, under the same deadline, so endpoints that never answer cannot delay
//! startup.
//!
//! Host metrics read Linux `/proc` and cgroup v2 directly (see `spec/system-metrics.md`
//! §3); on other systems those families report "not available".

mod amd;
mod apple;
pub mod child;
pub mod clock;
mod command;
mod cpu;
mod dcgm;
mod dcgm_exporter;
mod detect;
mod disk;
mod ipu;
mod memory;
mod monitor;
mod network;
mod neuron;
pub mod nvidia;
mod openmetrics;
mod procfs;
mod procs;
mod rocm_lib;
mod scrape;
pub mod tls;
mod tpu;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;

pub use amd::{
    amd_gpu_info, amd_metrics, parse_rocm_smi_json, parse_rocm_smi_text, rocm_driver_version, Cards,
};
pub use nvidia::{
    ClockKind, GpuBackend, GpuDevice, GpuError, GpuProcess, NvidiaCollector, NvmlBackend,
};
pub use openmetrics::{
    openmetrics_values, parse_exposition, Exposition, KeyIndex, MetricKind, MetricSample,
    MAX_RESPONSE_BYTES, SCRAPE_TIMEOUT,
};

pub use command::{exit_on_signals, run_sample_command, sample_to_json, write_json_line};
pub use dcgm_exporter::dcgm_field;
use detect::Detect;
pub use monitor::MonitorHandle;
pub use procs::{ProcRow, ProcScanner, ProcTable};
pub use worker::{deadline_for, spawn_sampler, Sampler, Ticker};

/// Why a collector could not read (part of) a sample.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    /// A file could not be read.
    #[error("read '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// A file or a tool's output did not parse.
    #[error("parse {what}: {detail}")]
    Parse {
        /// What was parsed.
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// The monitored process could not be read.
    #[error("monitored process: {0}")]
    Process(String),
    /// A GPU library call failed.
    #[error("gpu: {0}")]
    Gpu(String),
    /// A tool could not be run or failed.
    #[error("run '{cmd}': {detail}")]
    Command {
        /// The tool.
        cmd: String,
        /// What went wrong.
        detail: String,
    },
    /// An HTTP endpoint could not be scraped.
    #[error("scrape '{url}': {detail}")]
    Http {
        /// The endpoint.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// A thread panicked while holding the shared process tree.
    #[error("shared process tree lock poisoned")]
    Poisoned,
}

/// One metric family. `sample` appends `(W&B key, value)` pairs to `out`.
///
/// Each collector lives on its own worker thread, from its detection on (so a child
/// process it starts there lives as long as it does, see [`child`]). `sample` may block;
/// the sampler does not wait for it past the per-source deadline, and does not call it
/// again before it has returned.
pub trait Collector: Send {
    /// "cpu", "memory", "disk", "network", "nvidia", "amd", "openmetrics".
    fn name(&self) -> &'static str;
    /// Append this family's readings now to `out`.
    ///
    /// # Errors
    /// What kept some or all of its keys out of this sample.
    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError>;
    /// Static description of the accelerators this collector reads, for [`HostInfo`].
    fn gpus(&self) -> Vec<GpuInfo> {
        Vec::new()
    }
    /// Static facts for the overview (serial numbers, firmware, chip name), as
    /// (key, value) pairs such as `("ipu.0.firmware version", "2.6.8")`.
    fn static_info(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// One reading of every collector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Unix seconds.
    pub timestamp: f64,
    /// (W&B key, value) of every reading.
    pub values: Vec<(String, f64)>,
    /// (family, error) for collectors that failed this time (their other keys may
    /// still be present), and for those that gave no reading in time: "late" (asked
    /// at this tick, no answer by the deadline) or "busy" (still on an earlier
    /// reading, not asked again).
    pub errors: Vec<(String, String)>,
}

impl Sample {
    /// The value of `key`, if the sample has it.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// What to sample, and how often.
#[derive(Debug, Clone)]
pub struct SamplerOptions {
    /// Process whose tree feeds `cpu`, `proc.*` and `gpu.process.*`; without one, see
    /// `monitor_self`.
    pub pid: Option<u32>,
    /// Without `pid`: monitor this process (`leet sample`, the default) or none at all
    /// (`leet --live`: no `cpu`, `proc.*` or `gpu.process.*` keys until one is chosen
    /// with [`MonitorHandle::set`]).
    pub monitor_self: bool,
    /// Paths for `disk.<path>.usage*`; empty means `/`.
    pub disk_paths: Vec<PathBuf>,
    /// (name, url) OpenMetrics endpoints.
    pub openmetrics: Vec<(String, String)>,
    /// Keep only the OpenMetrics metrics whose names it matches.
    pub openmetrics_filter: Option<Regex>,
    /// Sampling interval; each source's deadline is [`deadline_for`] it.
    pub interval: Duration,
    /// Read DCGM profiling fields from a running nv-hostengine (`--dcgm`).
    pub dcgm: bool,
    /// A dcgm-exporter `/metrics` (or Prometheus query API) URL (`--dcgm-exporter`).
    pub dcgm_exporter: Option<String>,
    /// GPUs whose profiling keys DCGM supplies; the NVML collector skips GPM on them.
    pub dcgm_claims: dcgm::GpuClaims,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        Self {
            pid: None,
            monitor_self: true,
            disk_paths: Vec::new(),
            openmetrics: Vec::new(),
            openmetrics_filter: None,
            interval: Duration::from_secs(1),
            dcgm: false,
            dcgm_exporter: None,
            dcgm_claims: dcgm::GpuClaims::default(),
        }
    }
}

/// One accelerator, as its collector describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuInfo {
    /// The device's name (untrusted text).
    pub name: String,
    /// Bytes.
    pub memory_total: u64,
    /// The driver's version.
    pub driver: String,
}

/// The key prefix of a family's devices: `tpu` and `ipu` as their metric keys
/// (`tpu.N.dutyCycle`, `ipu.N.clock (MHz)`), `neuron` for a Trainium device (its
/// metrics are per core, `trn.<core>.*`), `gpu` for the GPU families.
#[must_use]
pub fn device_prefix(family: &str) -> &'static str {
    match family {
        "tpu" => "tpu",
        "ipu" => "ipu",
        "neuron" => "neuron",
        _ => "gpu",
    }
}

/// Static facts about the host, read once.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostInfo {
    /// The CPU's model name.
    pub cpu_model: String,
    /// Physical cores.
    pub cpu_count: usize,
    /// Logical CPUs.
    pub cpu_count_logical: usize,
    /// Bytes.
    pub memory_total: u64,
    /// Every accelerator found, with the key prefix its family's metrics are written
    /// under ([`device_prefix`]): `gpu` (NVIDIA, AMD, Apple), `tpu`, `ipu`, `neuron`.
    pub devices: Vec<(&'static str, GpuInfo)>,
    /// Every collector's [`Collector::static_info`].
    pub static_info: Vec<(String, String)>,
    /// The operating system's name and version.
    pub os: String,
    /// The host's name.
    pub hostname: String,
}

/// Root of the sysfs tree the collectors read (`/sys`), overridable with the environment
/// variable `LEET_SYSFS_ROOT` so tests can run a collector against a fake tree (e.g.
/// `$LEET_SYSFS_ROOT/module/amdgpu/initstate`). Unset or empty means `/sys`.
#[must_use]
pub fn sysfs_root() -> PathBuf {
    std::env::var_os("LEET_SYSFS_ROOT")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/sys"), PathBuf::from)
}

/// Shortest sampling interval accepted: reading every source takes a few ms, and
/// a shorter interval would spend a core on sampling alone.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Longest sampling interval accepted (one day).
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// Parse an interval like `1s`, `500ms`, `2m`, `1m30s`, `0.5` (seconds), between
/// [`MIN_INTERVAL`] and [`MAX_INTERVAL`]: the duration syntax of every leet flag
/// ([`leet_text::duration`]).
///
/// # Errors
/// Text that is not a duration, or a value outside the bounds (zero, too short or
/// too long); never a panic.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    leet_text::duration::parse_within(s, MIN_INTERVAL, MAX_INTERVAL)
}

/// Parse an OpenMetrics endpoint argument `NAME=URL`.
pub fn parse_endpoint(s: &str) -> Result<(String, String), String> {
    let (name, url) = s
        .split_once('=')
        .ok_or_else(|| format!("endpoint '{s}' is not NAME=URL"))?;
    if name.is_empty() || url.is_empty() {
        return Err(format!("endpoint '{s}' is not NAME=URL"));
    }
    Ok((name.to_string(), url.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_interval("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_interval("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_interval("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("100ms"), Ok(MIN_INTERVAL));
        assert_eq!(parse_interval("0.1s"), Ok(MIN_INTERVAL));
        assert_eq!(parse_interval("24h"), Ok(MAX_INTERVAL));
        assert_eq!(parse_interval("1440m"), Ok(MAX_INTERVAL));
        assert!(parse_interval("fast").is_err());
        // Out of range, and values Duration::from_secs_f64 would panic on: an error
        // naming the bounds, never a panic.
        for bad in [
            "0s",
            "99ms",
            "1ms",
            "0.05",
            "-1s",
            "-0",
            "24.001h",
            "1441m",
            "NaN",
            "nans",
            "inf",
            "-inf",
            "infh",
            "1e308",
            "1e308h",
            "99999999999999999h",
            "1e-320s",
        ] {
            let e = parse_interval(bad).expect_err(bad);
            assert!(e.contains("between 100ms and 24h"), "{bad}: {e}");
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            parse_endpoint("node=http://127.0.0.1:9100/metrics"),
            Ok((
                "node".to_string(),
                "http://127.0.0.1:9100/metrics".to_string()
            ))
        );
        assert!(parse_endpoint("http://x").is_err());
    }
}
