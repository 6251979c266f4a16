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
mod cpu;
mod dcgm;
mod dcgm_exporter;
mod disk;
mod http;
mod ipu;
mod memory;
mod network;
mod neuron;
pub mod nvidia;
mod openmetrics;
mod procfs;
mod rocm_lib;
mod tpu;

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
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
///
/// Each collector lives on its own worker thread, from its detection on (so a child
/// process it starts there lives as long as it does, see [`child`]). `sample` may block;
/// the sampler does not wait for it past the per-source deadline, and does not call it
/// again before it has returned.
pub trait Collector: Send {
    /// "cpu", "memory", "disk", "network", "nvidia", "amd", "openmetrics".
    fn name(&self) -> &'static str;
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
    pub values: Vec<(String, f64)>,
    /// (family, error) for collectors that failed this time (their other keys may
    /// still be present), and for those that gave no reading in time: "late" (asked
    /// at this tick, no answer by the deadline) or "busy" (still on an earlier
    /// reading, not asked again).
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
    /// Every collector's [`Collector::static_info`].
    pub static_info: Vec<(String, String)>,
    pub os: String,
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
    ("dcgm", |d| {
        dcgm::detect(d.opts).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("nvidia", |d| {
        let backend = NvmlBackend::init().map_err(|e| e.to_string())?;
        Ok(Box::new(
            NvidiaCollector::with_tree(backend, Some(d.tree.clone()))
                .without_gpm_on(d.opts.dcgm_claims.clone()),
        ))
    }),
    ("amd", |_| {
        amd::AmdCollector::detect().map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("apple", |d| {
        apple::AppleCollector::detect(d.opts.interval).map(|c| Box::new(c) as _)
    }),
    ("ipu", |d| {
        ipu::IpuCollector::detect(d).map(|c| Box::new(c) as _)
    }),
    ("dcgm-exporter", |d| dcgm_exporter::detect(d.opts)),
    ("neuron", |d| {
        neuron::NeuronCollector::detect(d.opts).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("tpu", |d| {
        tpu::TpuCollector::detect(d.opts.interval).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
];

/// How long one sample waits for its sources: half the interval, so a sample is out
/// well before the next tick however late a source is.
#[must_use]
pub fn deadline_for(interval: Duration) -> Duration {
    interval / 2
}

/// How long [`Sampler::new`] waits for the families' detection (NVML init, a first
/// `rocm-smi`; all in parallel). A family still detecting then is listed as unavailable and joins
/// the samples once its detection succeeds.
const DETECT_WAIT: Duration = Duration::from_secs(3);

type Detection = Box<dyn FnOnce() -> Result<Box<dyn Collector>, String> + Send>;

/// What a worker thread reports.
enum Event {
    /// Detection finished: the collector's accelerators, or why it cannot run.
    Detected {
        at: usize,
        /// The devices and static facts (for the overview), or why the family is absent.
        result: Result<Facts, String>,
    },
    /// One reading.
    Reading {
        at: usize,
        values: Vec<(String, f64)>,
        result: Result<(), String>,
    },
    /// The collector panicked; the worker has ended.
    Gone { at: usize, why: String },
}

enum State {
    Detecting,
    Idle,
    /// A reading was asked for at `since` by sample number `seq`.
    Busy {
        seq: u64,
        since: Instant,
    },
    Gone,
}

/// One collector's newest values, and the errors of every reading since the last
/// sample (a newer reading replaces the values, not the news of an earlier error).
#[derive(Default)]
struct Pending {
    values: Vec<(String, f64)>,
    errors: Vec<String>,
}

/// What a detected collector tells the overview: its devices and static facts.
type Facts = (Vec<GpuInfo>, Vec<(String, String)>);

struct Worker {
    family: String,
    requests: SyncSender<()>,
    state: State,
    gpus: Vec<GpuInfo>,
    static_info: Vec<(String, String)>,
    /// The newest reading not yet handed out in a sample.
    pending: Option<Pending>,
}

pub struct Sampler {
    workers: Vec<Worker>,
    events: Receiver<Event>,
    unavailable: Vec<(String, String)>,
    tree: SharedTree,
    walker: TreeWalker,
    needs_tree: bool,
    deadline: Duration,
    seq: u64,
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// A worker: detect, then one reading per request until the sampler is dropped.
fn work(at: usize, detect: Detection, requests: &Receiver<()>, events: &Sender<Event>) {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let mut c = match catch_unwind(AssertUnwindSafe(detect)) {
        Ok(Ok(c)) => {
            let facts = (c.gpus(), c.static_info());
            if events
                .send(Event::Detected {
                    at,
                    result: Ok(facts),
                })
                .is_err()
            {
                return;
            }
            c
        }
        Ok(Err(why)) => {
            let _ = events.send(Event::Detected {
                at,
                result: Err(why),
            });
            return;
        }
        Err(p) => {
            let _ = events.send(Event::Detected {
                at,
                result: Err(format!("detection panicked: {}", panic_text(&*p))),
            });
            return;
        }
    };
    while requests.recv().is_ok() {
        let mut values = Vec::with_capacity(64);
        match catch_unwind(AssertUnwindSafe(|| c.sample(&mut values))) {
            Ok(r) => {
                let ev = Event::Reading {
                    at,
                    values,
                    result: r.map_err(|e| e.to_string()),
                };
                if events.send(ev).is_err() {
                    return;
                }
            }
            Err(p) => {
                let _ = events.send(Event::Gone {
                    at,
                    why: format!("panicked: {}", panic_text(&*p)),
                });
                return;
            }
        }
    }
}

impl Sampler {
    /// Detect every family (in parallel, each on its own worker thread); never fails.
    /// See [`Sampler::unavailable`] for what is missing.
    pub fn new(opts: SamplerOptions) -> Self {
        let mut opts = opts;
        if opts.disk_paths.is_empty() {
            opts.disk_paths.push(PathBuf::from("/"));
        }
        let root = opts.pid.unwrap_or_else(std::process::id);
        let tree = Arc::new(Mutex::new(ProcessTree::new(root)));
        let cgroup = CgroupLimits::detect(root);
        let shared = Arc::new((opts.clone(), cgroup));
        let mut detections: Vec<(String, Detection)> = Vec::new();
        for (family, detect) in DETECTORS {
            let (shared, tree) = (shared.clone(), tree.clone());
            let d: Detection = Box::new(move || {
                detect(&Detect {
                    opts: &shared.0,
                    tree: &tree,
                    cgroup: &shared.1,
                })
            });
            detections.push(((*family).to_string(), d));
        }
        for (name, url) in &opts.openmetrics {
            let family = format!("openmetrics:{name}");
            let (name, url, filter) = (name.clone(), url.clone(), opts.openmetrics_filter.clone());
            let d: Detection = Box::new(move || {
                openmetrics::OpenMetricsCollector::new(&name, &url, filter)
                    .map(|c| Box::new(c) as Box<dyn Collector>)
            });
            detections.push((family, d));
        }
        let mut s = Self::start(detections, tree, deadline_for(opts.interval));
        s.needs_tree = s.workers.iter().any(|w| {
            matches!(w.family.as_str(), "cpu" | "memory" | "nvidia")
                && !matches!(w.state, State::Gone)
        });
        s
    }

    /// Build a sampler from given collectors (tests, custom sources); the per-source
    /// deadline is that of a 1 s interval.
    pub fn with_collectors(collectors: Vec<Box<dyn Collector>>) -> Self {
        let detections = collectors
            .into_iter()
            .map(|c| {
                let family = c.name().to_string();
                let d: Detection = Box::new(move || Ok(c));
                (family, d)
            })
            .collect();
        let tree = Arc::new(Mutex::new(ProcessTree::new(std::process::id())));
        Self::start(detections, tree, deadline_for(Duration::from_secs(1)))
    }

    /// Set how long each sample waits for its sources.
    pub fn set_deadline(&mut self, deadline: Duration) {
        self.deadline = deadline;
    }

    /// Spawn one worker per detection and wait up to [`DETECT_WAIT`] for the detections
    /// (an OpenMetrics endpoint's only checks its URL).
    fn start(detections: Vec<(String, Detection)>, tree: SharedTree, deadline: Duration) -> Self {
        let (tx, events) = mpsc::channel();
        let mut workers = Vec::with_capacity(detections.len());
        let mut unavailable = Vec::new();
        let mut wait_for = Vec::new();
        for (at, (family, detect)) in detections.into_iter().enumerate() {
            let (req_tx, req_rx) = mpsc::sync_channel::<()>(1);
            let events_tx: Sender<Event> = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!(
                    "leet-{}",
                    family.chars().take(10).collect::<String>()
                ))
                .spawn(move || work(at, detect, &req_rx, &events_tx));
            let state = match spawned {
                Ok(_) => State::Detecting,
                Err(e) => {
                    unavailable.push((family.clone(), format!("cannot start its thread: {e}")));
                    State::Gone
                }
            };
            if matches!(state, State::Detecting) {
                wait_for.push(at);
            }
            workers.push(Worker {
                family,
                requests: req_tx,
                state,
                gpus: Vec::new(),
                static_info: Vec::new(),
                pending: None,
            });
        }
        let mut s = Self {
            workers,
            events,
            unavailable,
            tree,
            walker: TreeWalker::new(),
            needs_tree: false,
            deadline,
            seq: 0,
        };
        let until = Instant::now() + DETECT_WAIT;
        while wait_for
            .iter()
            .any(|&i| matches!(s.workers[i].state, State::Detecting))
        {
            let now = Instant::now();
            if now >= until {
                break;
            }
            match s.events.recv_timeout(until - now) {
                Ok(ev) => s.apply(ev),
                Err(_) => break,
            }
        }
        for &i in &wait_for {
            let w = &s.workers[i];
            if matches!(w.state, State::Detecting) {
                s.unavailable.push((
                    w.family.clone(),
                    format!("still detecting after {DETECT_WAIT:?}; sampled once detected"),
                ));
            }
        }
        s
    }

    fn apply(&mut self, ev: Event) {
        match ev {
            Event::Detected { at, result } => {
                let Some(w) = self.workers.get_mut(at) else {
                    return;
                };
                let family = w.family.clone();
                self.unavailable.retain(|(f, _)| *f != family);
                match result {
                    Ok((gpus, static_info)) => {
                        w.gpus = gpus;
                        w.static_info = static_info;
                        w.state = State::Idle;
                    }
                    Err(why) => {
                        w.state = State::Gone;
                        self.unavailable.push((family, why));
                    }
                }
            }
            Event::Reading { at, values, result } => {
                if let Some(w) = self.workers.get_mut(at) {
                    w.state = State::Idle;
                    let p = w.pending.get_or_insert_with(Pending::default);
                    p.values = values;
                    p.errors.extend(result.err());
                }
            }
            Event::Gone { at, why } => {
                if let Some(w) = self.workers.get_mut(at) {
                    w.state = State::Gone;
                    let p = w.pending.get_or_insert_with(Pending::default);
                    p.values.clear();
                    p.errors.push(why.clone());
                    self.unavailable.push((w.family.clone(), why));
                }
            }
        }
    }

    /// (family, why) for every family that is not sampled.
    pub fn unavailable(&self) -> &[(String, String)] {
        &self.unavailable
    }

    /// Names of the families that are sampled, e.g. `["cpu", ..., "openmetrics:node"]`.
    pub fn families(&self) -> Vec<&str> {
        self.workers
            .iter()
            .filter(|w| matches!(w.state, State::Idle | State::Busy { .. }))
            .map(|w| w.family.as_str())
            .collect()
    }

    /// Read every collector once: ask every idle worker, wait at most the deadline.
    /// Each family contributes its newest reading since the last sample (one that came
    /// after its own sample's deadline counts for this one), or is reported late/busy.
    pub fn sample(&mut self) -> Sample {
        let start = Instant::now();
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.seq += 1;
        let seq = self.seq;
        if self.needs_tree {
            // A worker stuck while holding the tree must not stall the sampler.
            if let Ok(mut tree) = self.tree.try_lock() {
                self.walker.refresh(&mut tree);
            }
        }
        // Take what has arrived since the last sample (readings of workers that were
        // late), so those workers are asked again now.
        while let Ok(ev) = self.events.try_recv() {
            self.apply(ev);
        }
        for w in &mut self.workers {
            if matches!(w.state, State::Idle) {
                w.state = match w.requests.try_send(()) {
                    Ok(()) => State::Busy { seq, since: start },
                    Err(_) => State::Gone,
                };
            }
        }
        // Wait for this tick's requests until the deadline.
        let until = start + self.deadline;
        while self
            .workers
            .iter()
            .any(|w| matches!(w.state, State::Busy { seq: s, .. } if s == seq))
        {
            let now = Instant::now();
            if now >= until {
                break;
            }
            match self.events.recv_timeout(until - now) {
                Ok(ev) => self.apply(ev),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let mut values = Vec::with_capacity(64);
        let mut errors = Vec::new();
        for w in &mut self.workers {
            if let Some(p) = w.pending.take() {
                values.extend(p.values);
                errors.extend(p.errors.into_iter().map(|e| (w.family.clone(), e)));
            } else if let State::Busy { seq: s, since } = w.state {
                let why = if s == seq {
                    format!(
                        "late: no reading within {:?}; left out of this sample",
                        self.deadline
                    )
                } else {
                    format!(
                        "busy: the reading asked for {:.1} s ago has not finished; skipped",
                        since.elapsed().as_secs_f64()
                    )
                };
                errors.push((w.family.clone(), why));
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
            gpus: (self.workers.iter())
                .flat_map(|w| w.gpus.iter().cloned())
                .collect(),
            static_info: (self.workers.iter())
                .flat_map(|w| w.static_info.iter().cloned())
                .collect(),
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
            let _ = writeln!(std::io::stderr(), "leet: cannot start sampler thread: {e}");
            std::thread::spawn(|| {})
        })
}

/// Shortest sampling interval accepted: reading every source takes a few ms, and
/// a shorter interval would spend a core on sampling alone.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Longest sampling interval accepted (one day).
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// Parse an interval like `1s`, `500ms`, `2m`, `1h`, `0.5` (seconds), between
/// [`MIN_INTERVAL`] and [`MAX_INTERVAL`].
///
/// # Errors
/// Text that is not a number with an optional unit, or a value outside the bounds
/// (NaN, infinite, negative, zero, too short or too long).
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    // Unit → milliseconds.
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60e3)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600e3)
    } else {
        (s, 1e3)
    };
    let v: f64 = num.trim().parse().map_err(|_| {
        "expected a number with an optional unit ms, s, m or h (e.g. 500ms, 2s, 1m)".to_owned()
    })?;
    let ms = v * scale;
    let (lo, hi) = (MIN_INTERVAL.as_millis(), MAX_INTERVAL.as_millis());
    if !(ms.is_finite() && (lo as f64..=hi as f64).contains(&ms)) {
        return Err(format!("an interval must be between {lo}ms and 24h"));
    }
    // In range, so the nanoseconds fit a u64 (at most 8.64e13).
    Ok(Duration::from_nanos((ms * 1e6).round() as u64))
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

/// [`sample_to_json`] written out as one line (with its newline) straight from the
/// sample: the same bytes, without copying every key into a JSON map first. As in that
/// map, a key given twice (two families emitting `gpu.0.gpu`) appears once, where it
/// first came, with the value that came last.
pub fn write_json_line(w: &mut Vec<u8>, sample: &Sample) -> serde_json::Result<()> {
    use std::collections::hash_map::Entry;
    let timestamp = serde_json::Number::from_f64(sample.timestamp)
        .map_or(serde_json::Value::Null, serde_json::Value::Number);
    let mut entries: Vec<(&str, serde_json::Value)> = Vec::with_capacity(sample.values.len() + 1);
    let mut at: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(sample.values.len() + 1);
    let pairs = std::iter::once(("timestamp", timestamp))
        .chain((sample.values.iter()).map(|(k, v)| (k.as_str(), json_number(*v))));
    for (k, v) in pairs {
        match at.entry(k) {
            Entry::Occupied(e) => entries[*e.get()].1 = v,
            Entry::Vacant(e) => {
                e.insert(entries.len());
                entries.push((k, v));
            }
        }
    }
    w.push(b'{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        serde_json::to_writer(&mut *w, k)?;
        w.push(b':');
        serde_json::to_writer(&mut *w, v)?;
    }
    w.extend_from_slice(b"}\n");
    Ok(())
}

/// Ends every child of the sampler when dropped: on return, on error and while a panic
/// unwinds.
struct KillChildren;

impl Drop for KillChildren {
    fn drop(&mut self) {
        child::kill_all();
    }
}

/// SIGTERM, SIGINT and SIGHUP end `leet sample` at once, whatever it is waiting for
/// (a hung source, a full stdout pipe): children killed, exit status 128 + signal.
fn exit_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::Builder::new()
        .name("leet-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                child::kill_all();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

/// `leet sample`: print `count` samples (forever when `None`) to `out`, one JSON object
/// per line with `json`, otherwise a readable block per sample. Unavailable families and
/// per-sample errors go to stderr. The sampler's children are killed on every way out
/// (return, error, panic; a signal exits with 128 + its number).
pub fn run_sample_command(
    opts: SamplerOptions,
    count: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let _children = KillChildren;
    if let Err(e) = exit_on_signals() {
        let _ = writeln!(std::io::stderr(), "leet: cannot handle signals: {e}");
    }
    let interval = opts.interval;
    let mut sampler = Sampler::new(opts);
    let mut stderr = std::io::stderr().lock();
    for (family, why) in sampler.unavailable() {
        // Tool output and endpoint text are untrusted: no escape sequence reaches the tty.
        let _ = writeln!(
            stderr,
            "{}: not available: {}",
            crate::text::sanitize(family),
            crate::text::sanitize(why)
        );
    }
    drop(stderr);
    let mut ticker = Ticker::new(interval);
    let mut n = 0u64;
    let mut line = Vec::with_capacity(4096);
    while count.is_none_or(|c| n < c) {
        ticker.wait();
        let sample = sampler.sample();
        {
            let mut stderr = std::io::stderr().lock();
            for (family, e) in &sample.errors {
                let _ = writeln!(
                    stderr,
                    "{}: error: {}",
                    crate::text::sanitize(family),
                    crate::text::sanitize(e)
                );
            }
        }
        line.clear();
        if json {
            write_json_line(&mut line, &sample)?;
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
    fn a_json_line_is_the_json_map_written_out() {
        let s = Sample {
            timestamp: 1_700_000_000.123_456,
            values: vec![
                ("gpu.0.gpu".into(), 12.0),
                ("cpu".into(), 12.25),
                ("x".into(), f64::NAN),
                ("gpu.0.gpu".into(), 13.5),
                ("inf".into(), f64::INFINITY),
                ("big".into(), 1e17),
                ("neg".into(), -3.0),
                ("quote\"and\\back\u{1}slash é".into(), 0.1),
                ("timestamp".into(), 5.0),
                ("cpu".into(), 1.0),
            ],
            errors: vec![],
        };
        for sample in [s, Sample::default()] {
            let mut want = serde_json::to_vec(&sample_to_json(&sample)).expect("json");
            want.push(b'\n');
            let mut got = Vec::new();
            write_json_line(&mut got, &sample).expect("line");
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        }
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
