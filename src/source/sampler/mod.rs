//! Host and accelerator metrics under W&B's system-metric keys (`cpu`, `memory_percent`,
//! `disk./.usagePercent`, `gpu.0.gpu`, `openmetrics.<name>.<metric>.<k>`, ...).
//!
//! One [`Collector`] per metric family, each detected at start. A family that cannot run
//! here (no NVML, no rocm-smi, endpoint down) is listed by [`Sampler::unavailable`] with
//! the reason, and the others carry on. Errors of a working collector during one sample
//! land in [`Sample::errors`]; nothing here panics or exits.
//!
//! Host metrics read Linux `/proc` and cgroup v2 directly (see `spec/system-metrics.md`
//! §3); on other systems those families report "not available".

mod amd;
pub mod child;
mod cpu;
mod disk;
mod http;
mod memory;
mod network;
pub mod nvidia;
mod openmetrics;
mod procfs;
mod tpu;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use regex::Regex;

pub use amd::{
    amd_gpu_info, amd_metrics, parse_rocm_smi_json, parse_rocm_smi_text, rocm_driver_version, Cards,
};
pub use nvidia::{ClockKind, GpuBackend, GpuDevice, GpuError, NvidiaCollector, NvmlBackend};
pub use openmetrics::{
    openmetrics_values, parse_exposition, Exposition, KeyIndex, MetricKind, MetricSample,
    MAX_RESPONSE_BYTES, SCRAPE_TIMEOUT,
};

use procfs::{CgroupLimits, ProcessTree, SharedTree, TreeWalker};

#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("read '{path}': {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parse {what}: {detail}")]
    Parse { what: String, detail: String },
    #[error("monitored process: {0}")]
    Process(String),
    #[error("gpu: {0}")]
    Gpu(String),
    #[error("run '{cmd}': {detail}")]
    Command { cmd: String, detail: String },
    #[error("scrape '{url}': {detail}")]
    Http { url: String, detail: String },
    #[error("shared process tree lock poisoned")]
    Poisoned,
}

/// One metric family. `sample` appends `(W&B key, value)` pairs to `out`.
pub trait Collector: Send {
    /// "cpu", "memory", "disk", "network", "nvidia", "amd", "openmetrics".
    fn name(&self) -> &'static str;
    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError>;
    /// Static description of the accelerators this collector reads, for [`HostInfo`].
    fn gpus(&self) -> Vec<GpuInfo> {
        Vec::new()
    }
}

/// One reading of every collector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Unix seconds.
    pub timestamp: f64,
    pub values: Vec<(String, f64)>,
    /// (family, error) for collectors that failed this time; their other keys may
    /// still be present.
    pub errors: Vec<(String, String)>,
}

impl Sample {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

#[derive(Debug, Clone)]
pub struct SamplerOptions {
    /// Process whose tree feeds `cpu`, `proc.*` and `gpu.process.*`; default: this one.
    pub pid: Option<u32>,
    /// Paths for `disk.<path>.usage*`; empty means `/`.
    pub disk_paths: Vec<PathBuf>,
    /// (name, url) OpenMetrics endpoints.
    pub openmetrics: Vec<(String, String)>,
    pub openmetrics_filter: Option<Regex>,
    pub interval: Duration,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        Self {
            pid: None,
            disk_paths: Vec::new(),
            openmetrics: Vec::new(),
            openmetrics_filter: None,
            interval: Duration::from_secs(1),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuInfo {
    pub name: String,
    /// Bytes.
    pub memory_total: u64,
    pub driver: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostInfo {
    pub cpu_model: String,
    pub cpu_count: usize,
    pub cpu_count_logical: usize,
    /// Bytes.
    pub memory_total: u64,
    pub gpus: Vec<GpuInfo>,
    pub os: String,
    pub hostname: String,
}

/// Context given to detectors.
struct Detect<'a> {
    opts: &'a SamplerOptions,
    tree: &'a SharedTree,
    cgroup: &'a CgroupLimits,
}

type Detector = fn(&Detect<'_>) -> Result<Box<dyn Collector>, String>;

fn linux_only() -> Result<(), String> {
    if cfg!(target_os = "linux") && std::path::Path::new("/proc/self/stat").exists() {
        Ok(())
    } else {
        Err("needs Linux /proc".to_string())
    }
}

/// Every built-in family, in sampling order. A new accelerator (Apple, TPU, Trainium,
/// IPU) is one module plus one line here.
const DETECTORS: &[(&str, Detector)] = &[
    ("cpu", |d| {
        linux_only()?;
        Ok(Box::new(cpu::CpuCollector::new(d.tree.clone(), d.cgroup)))
    }),
    ("memory", |d| {
        linux_only()?;
        Ok(Box::new(memory::MemoryCollector::new(
            d.tree.clone(),
            d.cgroup.clone(),
        )))
    }),
    ("disk", |d| {
        linux_only()?;
        Ok(Box::new(disk::DiskCollector::new(&d.opts.disk_paths)))
    }),
    ("network", |_| {
        linux_only()?;
        network::NetworkCollector::new()
            .map(|c| Box::new(c) as Box<dyn Collector>)
            .map_err(|e| e.to_string())
    }),
    ("nvidia", |d| {
        let backend = NvmlBackend::init().map_err(|e| e.to_string())?;
        Ok(Box::new(NvidiaCollector::with_tree(
            backend,
            Some(d.tree.clone()),
        )))
    }),
    ("amd", |_| {
        amd::AmdCollector::detect().map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("tpu", |d| {
        tpu::TpuCollector::detect(d.opts.interval).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
];

pub struct Sampler {
    collectors: Vec<(String, Box<dyn Collector>)>,
    unavailable: Vec<(String, String)>,
    tree: SharedTree,
    walker: TreeWalker,
    needs_tree: bool,
}

impl Sampler {
    /// Detect every family; never fails. See [`Sampler::unavailable`] for what is missing.
    pub fn new(opts: SamplerOptions) -> Self {
        let mut opts = opts;
        if opts.disk_paths.is_empty() {
            opts.disk_paths.push(PathBuf::from("/"));
        }
        let root = opts.pid.unwrap_or_else(std::process::id);
        let tree = Arc::new(Mutex::new(ProcessTree::new(root)));
        let cgroup = CgroupLimits::detect(root);
        let ctx = Detect {
            opts: &opts,
            tree: &tree,
            cgroup: &cgroup,
        };
        let mut collectors = Vec::new();
        let mut unavailable = Vec::new();
        for (family, detect) in DETECTORS {
            match detect(&ctx) {
                Ok(c) => collectors.push(((*family).to_string(), c)),
                Err(why) => unavailable.push(((*family).to_string(), why)),
            }
        }
        for (name, url) in &opts.openmetrics {
            let family = format!("openmetrics:{name}");
            let (c, failed) = openmetrics::OpenMetricsCollector::detect(
                name,
                url,
                opts.openmetrics_filter.clone(),
            );
            if let Some(why) = failed {
                unavailable.push((family.clone(), format!("{why} (retrying every 30 s)")));
            }
            collectors.push((family, Box::new(c)));
        }
        let needs_tree = collectors
            .iter()
            .any(|(f, _)| matches!(f.as_str(), "cpu" | "memory" | "nvidia"));
        Self {
            collectors,
            unavailable,
            tree,
            walker: TreeWalker::new(),
            needs_tree,
        }
    }

    /// Build a sampler from given collectors (tests, custom sources).
    pub fn with_collectors(collectors: Vec<Box<dyn Collector>>) -> Self {
        Self {
            collectors: collectors
                .into_iter()
                .map(|c| (c.name().to_string(), c))
                .collect(),
            unavailable: Vec::new(),
            tree: Arc::new(Mutex::new(ProcessTree::new(std::process::id()))),
            walker: TreeWalker::new(),
            needs_tree: false,
        }
    }

    /// (family, why) for every family that is not sampled.
    pub fn unavailable(&self) -> &[(String, String)] {
        &self.unavailable
    }

    /// Names of the families that are sampled, e.g. `["cpu", ..., "openmetrics:node"]`.
    pub fn families(&self) -> Vec<&str> {
        self.collectors.iter().map(|(f, _)| f.as_str()).collect()
    }

    /// Read every collector once.
    pub fn sample(&mut self) -> Sample {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if self.needs_tree {
            if let Ok(mut tree) = self.tree.lock() {
                self.walker.refresh(&mut tree);
            }
        }
        let mut values = Vec::with_capacity(64);
        let mut errors = Vec::new();
        for (family, c) in &mut self.collectors {
            if let Err(e) = c.sample(&mut values) {
                errors.push((family.clone(), e.to_string()));
            }
        }
        Sample {
            timestamp,
            values,
            errors,
        }
    }

    /// Static host description (CPU model and counts, memory, GPUs, OS, hostname).
    pub fn host_info(&self) -> HostInfo {
        use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_cpu(CpuRefreshKind::nothing())
                .with_memory(MemoryRefreshKind::nothing().with_ram()),
        );
        let cpu_count_logical = sys.cpus().len();
        HostInfo {
            cpu_model: sys
                .cpus()
                .first()
                .map(|c| c.brand().trim().to_string())
                .unwrap_or_default(),
            cpu_count: System::physical_core_count().unwrap_or(cpu_count_logical),
            cpu_count_logical,
            memory_total: sys.total_memory(),
            gpus: self.collectors.iter().flat_map(|(_, c)| c.gpus()).collect(),
            os: System::long_os_version().unwrap_or_default(),
            hostname: System::host_name().unwrap_or_default(),
        }
    }
}

/// Absolute-deadline ticker: tick k is due at start + k × interval, so sampling time
/// does not accumulate as drift. Deadlines missed entirely are skipped.
pub struct Ticker {
    next: Instant,
    interval: Duration,
}

impl Ticker {
    /// The first tick is due now.
    pub fn new(interval: Duration) -> Self {
        Self {
            next: Instant::now(),
            interval: interval.max(Duration::from_millis(1)),
        }
    }

    /// Sleep until the next deadline, then advance it.
    pub fn wait(&mut self) {
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        }
        self.next += self.interval;
        let now = Instant::now();
        if self.next < now {
            // Fell behind by more than one interval: skip the missed deadlines.
            let behind = (now - self.next).as_nanos() / self.interval.as_nanos() + 1;
            self.next += self.interval * u32::try_from(behind).unwrap_or(u32::MAX);
        }
    }
}

/// Run `sampler` on its own thread every `interval` (absolute deadlines, first sample at
/// once) until `on_sample` returns false.
pub fn spawn_sampler(
    mut sampler: Sampler,
    interval: Duration,
    mut on_sample: impl FnMut(Sample) -> bool + Send + 'static,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("leet-sampler".to_string())
        .spawn(move || {
            let mut ticker = Ticker::new(interval);
            loop {
                ticker.wait();
                if !on_sample(sampler.sample()) {
                    break;
                }
            }
        })
        .unwrap_or_else(|e| {
            // Thread creation failing means the process is out of resources; report
            // through a thread that does nothing rather than panicking the caller.
            eprintln!("leet: cannot start sampler thread: {e}");
            std::thread::spawn(|| {})
        })
}

/// Parse an interval like `1s`, `500ms`, `2m`, `0.5` (seconds).
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad interval '{s}'"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("interval '{s}' must be positive"));
    }
    Ok(Duration::from_secs_f64(v * scale))
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

fn json_number(v: f64) -> serde_json::Value {
    // Whole numbers print as integers, as W&B's own records do (`"proc.cpu.threads":4`).
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// One JSON object for a sample: `{"timestamp": .., "<key>": value, ...}`.
pub fn sample_to_json(sample: &Sample) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    map.insert(
        "timestamp".to_string(),
        serde_json::Number::from_f64(sample.timestamp)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
    );
    for (k, v) in &sample.values {
        map.insert(k.clone(), json_number(*v));
    }
    serde_json::Value::Object(map)
}

/// `leet sample`: print `count` samples (forever when `None`) to `out`, one JSON object
/// per line with `json`, otherwise a readable block per sample. Unavailable families and
/// per-sample errors go to stderr.
pub fn run_sample_command(
    opts: SamplerOptions,
    count: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let interval = opts.interval;
    let mut sampler = Sampler::new(opts);
    let mut stderr = std::io::stderr().lock();
    for (family, why) in sampler.unavailable() {
        writeln!(stderr, "{family}: not available: {why}")?;
    }
    drop(stderr);
    let mut ticker = Ticker::new(interval);
    let mut n = 0u64;
    let mut line = Vec::with_capacity(4096);
    while count.is_none_or(|c| n < c) {
        ticker.wait();
        let sample = sampler.sample();
        for (family, e) in &sample.errors {
            eprintln!("{family}: error: {e}");
        }
        line.clear();
        if json {
            serde_json::to_writer(&mut line, &sample_to_json(&sample))?;
            line.push(b'\n');
        } else {
            write_text(&mut line, &sample)?;
        }
        out.write_all(&line)?;
        out.flush()?;
        n += 1;
    }
    Ok(())
}

fn write_text(w: &mut Vec<u8>, sample: &Sample) -> std::io::Result<()> {
    writeln!(w, "timestamp {:.3}", sample.timestamp)?;
    let width = sample
        .values
        .iter()
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0);
    for (k, v) in &sample.values {
        writeln!(w, "  {k:<width$}  {}", format_value(*v))?;
    }
    writeln!(w)
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
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
        assert!(parse_interval("0s").is_err());
        assert!(parse_interval("fast").is_err());
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

    #[test]
    fn json_line_shape() {
        let s = Sample {
            timestamp: 1.5,
            values: vec![
                ("proc.cpu.threads".into(), 4.0),
                ("cpu".into(), 12.25),
                ("x".into(), f64::NAN),
            ],
            errors: vec![],
        };
        assert_eq!(
            serde_json::to_string(&sample_to_json(&s)).expect("json"),
            r#"{"timestamp":1.5,"proc.cpu.threads":4,"cpu":12.25,"x":null}"#
        );
    }

    #[test]
    fn ticker_does_not_drift() {
        let mut t = Ticker::new(Duration::from_millis(20));
        let start = Instant::now();
        for _ in 0..10 {
            t.wait();
            std::thread::sleep(Duration::from_millis(8)); // simulated sampling work
        }
        // ticks due at 0, 20, ..., 180 ms, so ~188 ms; with drift it would be >= 280 ms
        let e = start.elapsed();
        assert!(
            e >= Duration::from_millis(188) && e < Duration::from_millis(260),
            "{e:?}"
        );
    }
}
