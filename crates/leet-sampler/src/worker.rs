//! The worker threads and the per-source deadline: every collector on a thread of its
//! own, asked for a reading at each tick and waited for at most the deadline.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::clock::{Clock, SystemClock};
use super::detect::DETECTORS;
use super::monitor::MonitorHandle;
use super::procfs::{ProcessTree, SharedTree, TreeWalker};
use super::procs::{GpuMemory, ProcScanner};
use super::{openmetrics, Collector, Detect, GpuInfo, HostInfo, Sample, SamplerOptions};

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
    /// Whether the last sample had a value of this family.
    gave: bool,
}

/// Every collector on its own worker thread, read together at each tick (see the
/// crate's documentation for the deadlines), on the clock `C` (the system's, or a
/// manual one in tests).
pub struct Sampler<C: Clock = SystemClock> {
    workers: Vec<Worker>,
    events: Receiver<Event>,
    unavailable: Vec<(String, String)>,
    tree: SharedTree,
    walker: TreeWalker,
    needs_tree: bool,
    gpu_memory: Arc<GpuMemory>,
    deadline: Duration,
    seq: u64,
    clock: C,
    /// The worker each key is read from: a key two families write (NVML and a
    /// dcgm-exporter page on the same GPUs, macmon's memory beside the host's) is
    /// the first-listed one's, so no series alternates between two sources.
    owners: std::collections::HashMap<String, usize>,
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
        let root = opts
            .pid
            .or_else(|| opts.monitor_self.then(std::process::id));
        let tree = Arc::new(Mutex::new(ProcessTree::detect(root)));
        let gpu_memory = Arc::new(GpuMemory::default());
        let shared = Arc::new(opts.clone());
        let mut detections: Vec<(String, Detection)> = Vec::new();
        for (family, detect) in DETECTORS {
            let (shared, tree, gpu_memory) = (shared.clone(), tree.clone(), gpu_memory.clone());
            let d: Detection = Box::new(move || {
                detect(&Detect {
                    opts: &shared,
                    tree: &tree,
                    gpu_memory: &gpu_memory,
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
        let mut s = Self::start(detections, tree, deadline_for(opts.interval), SystemClock);
        s.gpu_memory = gpu_memory;
        s.needs_tree = s.workers.iter().any(|w| {
            matches!(w.family.as_str(), "cpu" | "memory" | "nvidia")
                && !matches!(w.state, State::Gone)
        });
        s
    }

    /// Build a sampler from given collectors (tests, custom sources); the per-source
    /// deadline is that of a 1 s interval.
    pub fn with_collectors(collectors: Vec<Box<dyn Collector>>) -> Self {
        Self::with_collectors_on(collectors, SystemClock)
    }
}

impl<C: Clock> Sampler<C> {
    /// [`Sampler::with_collectors`] on another clock: a sample's deadline is kept on
    /// `clock` (the detection still waits on the system's).
    pub fn with_collectors_on(collectors: Vec<Box<dyn Collector>>, clock: C) -> Self {
        let detections = collectors
            .into_iter()
            .map(|c| {
                let family = c.name().to_string();
                let d: Detection = Box::new(move || Ok(c));
                (family, d)
            })
            .collect();
        let tree = Arc::new(Mutex::new(ProcessTree::new(std::process::id())));
        Self::start(
            detections,
            tree,
            deadline_for(Duration::from_secs(1)),
            clock,
        )
    }

    /// A handle that switches the monitored process tree from any thread (the
    /// sampler may be running on its own, see [`spawn_sampler`]).
    #[must_use]
    pub fn monitor_handle(&self) -> MonitorHandle {
        MonitorHandle::new(self.tree.clone())
    }

    /// Monitor `pid`'s tree from the next sample on, or none: see [`MonitorHandle::set`].
    ///
    /// # Errors
    /// A process that cannot be read; then none is monitored.
    pub fn set_monitored(&mut self, pid: Option<u32>) -> Result<Option<(u32, String)>, String> {
        self.monitor_handle().set(pid)
    }

    /// A scanner of this host's processes whose rows carry the GPU memory this
    /// sampler's NVML collector reads (from its next sample on).
    #[must_use]
    pub fn proc_scanner(&self) -> ProcScanner {
        ProcScanner::with_root("/proc", "/etc/passwd", Some(self.gpu_memory.clone()))
    }

    /// Set how long each sample waits for its sources.
    pub fn set_deadline(&mut self, deadline: Duration) {
        self.deadline = deadline;
    }

    /// Spawn one worker per detection and wait up to [`DETECT_WAIT`] for the detections
    /// (an OpenMetrics endpoint's only checks its URL).
    fn start(
        detections: Vec<(String, Detection)>,
        tree: SharedTree,
        deadline: Duration,
        clock: C,
    ) -> Self {
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
                gave: false,
            });
        }
        let mut s = Self {
            workers,
            events,
            unavailable,
            tree,
            walker: TreeWalker::new(),
            needs_tree: false,
            gpu_memory: Arc::default(),
            deadline,
            seq: 0,
            owners: std::collections::HashMap::new(),
            clock,
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

    /// The sampled families whose reading the last sample had no value of (a
    /// family that failed, or waits to retry an endpoint that failed).
    pub fn without_values(&self) -> Vec<&str> {
        (self.workers.iter())
            .filter(|w| matches!(w.state, State::Idle | State::Busy { .. }) && !w.gave)
            .map(|w| w.family.as_str())
            .collect()
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
        let start = self.clock.now();
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
            match self.clock.recv_until(&self.events, until) {
                Ok(ev) => self.apply(ev),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let mut values = Vec::with_capacity(64);
        let mut errors = Vec::new();
        for (i, w) in self.workers.iter_mut().enumerate() {
            w.gave = w.pending.as_ref().is_some_and(|p| !p.values.is_empty());
            if let Some(p) = w.pending.take() {
                let owners = &mut self.owners;
                values.extend(p.values.into_iter().filter(|(k, _)| {
                    // The family listed first keeps a key (NVML before a page of
                    // dcgm-exporter, the host before macmon), even if the other gave
                    // it first, while the first one was late.
                    match owners.get(k) {
                        Some(&o) if o < i => false,
                        Some(&o) if o == i => true,
                        _ => {
                            owners.insert(k.clone(), i);
                            true
                        }
                    }
                }));
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
                        self.clock
                            .now()
                            .saturating_duration_since(since)
                            .as_secs_f64()
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
            devices: (self.workers.iter())
                .flat_map(|w| {
                    let prefix = crate::device_prefix(&w.family);
                    w.gpus.iter().map(move |g| (prefix, g.clone()))
                })
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
pub struct Ticker<C: Clock = SystemClock> {
    next: Instant,
    interval: Duration,
    clock: C,
}

impl Ticker {
    /// The first tick is due now.
    pub fn new(interval: Duration) -> Self {
        Self::with_clock(interval, SystemClock)
    }
}

impl<C: Clock> Ticker<C> {
    /// A ticker on `clock`; the first tick is due now.
    pub fn with_clock(interval: Duration, clock: C) -> Self {
        Self {
            next: clock.now(),
            interval: interval.max(Duration::from_millis(1)),
            clock,
        }
    }

    /// Sleep until the next deadline, then advance it.
    pub fn wait(&mut self) {
        self.clock.sleep_until(self.next);
        self.next += self.interval;
        let now = self.clock.now();
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

#[cfg(test)]
mod tests;
