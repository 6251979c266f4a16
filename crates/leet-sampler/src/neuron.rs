//! AWS Trainium and Inferentia through `neuron-monitor` (spec §9, W&B `trainium.go`).
//!
//! **Detection** (cheap, nothing vendor-specific is run): `neuron-monitor` on `$PATH`,
//! else the Neuron SDK's default `/opt/aws/neuron/bin/neuron-monitor`; and at least one
//! Neuron device registered by the Neuron driver, i.e. an entry `neuron<N>` under
//! `$LEET_SYSFS_ROOT/class/neuron_device/` (default root `/sys`; the driver creates
//! `/dev/neuron<N>` and this sysfs entry together). W&B checks only for the binary.
//!
//! **Data**: one long-lived `neuron-monitor -c <config>` child ([`child::Stream`]: own
//! process group, killed and reaped on drop, `PR_SET_PDEATHSIG`, [`child::kill_all`]).
//! The generated config (a private temp file, removed once the child has printed its
//! first line and on drop, written again before a restart) asks for the two runtime
//! metric groups the keys come from (`neuroncore_counters`, `memory_used`) with
//! `period` = the sampling interval (`"2s"`, or `"300ms"` below a second; W&B writes
//! whole seconds only). The child is started and restarted by a supervisor thread of
//! this collector (so the death signal is tied to a thread that lives as long as the
//! stream), with backoff 1 s, 2 s, 4 s, ... 60 s; the backoff resets after a child
//! lived 60 s. Each exit and restart is reported in the sample's errors.
//!
//! Each [`Collector::sample`] takes the lines printed since the last one and parses the
//! newest complete report (older ones are discarded unparsed, up to [`PARSE_TRIES`]
//! newest lines are tried when the newest is not valid JSON). A parsed report is used
//! until it is older than `max(3 × interval, 2 s)`; then the sample says
//! "no report for N s" and has no `trn.*` keys.
//!
//! **Memory cap**: at most [`MAX_LINES`] lines of at most [`MAX_LINE_BYTES`] each are kept
//! between two samples (a longer line is skipped whole; the oldest lines are dropped), so
//! the stream costs at most 5 × 2 MiB = 10 MiB of text (4 lines more across a restart,
//! until the next sample; up to 3× that while invalid UTF-8 is replaced), whatever the
//! child prints, and a report adds at most [`MAX_CORES`] × 6 + 6 keys. Floods, oversized and unparsable lines are
//! reported: "dropped K lines ...", "skipped K oversized lines ...",
//! "unparsable line: <first 80 chars, sanitized> (<reason>)".
//!
//! **Keys** (spec §9), summed over the selected runtimes (a NeuronCore belongs to one
//! runtime at a time, so per-core sums are that runtime's value): `trn.<core>.
//! neuroncore_utilization` (%), `trn.host_total_memory_usage`,
//! `trn.neuron_device_total_memory_usage`, `trn.host_memory_usage.<field>` and
//! `trn.<core>.neuroncore_memory_usage.<field>` (bytes), for the fields in
//! [`HOST_MEMORY_FIELDS`] and [`CORE_MEMORY_FIELDS`]. A field missing from the report is
//! left out (W&B writes 0). **Runtimes**: with `--pid P`, those whose `pid` is P or a
//! descendant of P (the process tree is re-read when a report is parsed); without
//! `--pid`, all of them. (W&B keeps the first runtime whose pid equals its own, or the
//! first one when `LOCAL_RANK` is set; the `LOCAL_RANK` core filter is not copied.)

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod report;
mod supervisor;

use super::child::{self, problems_result, Taken};
use super::procfs::{ProcessTree, TreeWalker};
use super::{Collector, GpuInfo, SamplerError, SamplerOptions};
#[cfg(test)]
use report::chip_name;
use report::{clip, map_report, parse_report, Mapped};
use supervisor::{lock, secs, supervise, Shared, Wake};
#[cfg(test)]
use {super::child::Backoff, supervisor::merge};

/// The Neuron SDK's default install location of `neuron-monitor`.
pub(crate) const DEFAULT_PATH: &str = "/opt/aws/neuron/bin/neuron-monitor";
/// Longest line kept. A report of a trn2.48xlarge (64 logical NeuronCores, hundreds of
/// loaded subgraphs) is a few hundred KiB.
pub(crate) const MAX_LINE_BYTES: usize = 2 << 20;
/// Lines kept between two samples; with `period` = interval one is expected.
pub(crate) const MAX_LINES: usize = 4;
/// NeuronCore indices at or above this are ignored, which bounds the keys one report can
/// add (a trn2.48xlarge has 128 physical NeuronCores).
pub(crate) const MAX_CORES: u32 = 1024;
/// Newest lines tried, newest first, until one parses.
pub(crate) const PARSE_TRIES: usize = 3;
/// Fields of `usage_breakdown.host`, as `trn.host_memory_usage.<field>`.
pub(crate) const HOST_MEMORY_FIELDS: [&str; 4] =
    ["application_memory", "constants", "dma_buffers", "tensors"];
/// Fields of `usage_breakdown.neuroncore_memory_usage.<core>`, as
/// `trn.<core>.neuroncore_memory_usage.<field>`.
pub(crate) const CORE_MEMORY_FIELDS: [&str; 5] = [
    "constants",
    "model_code",
    "model_shared_scratchpad",
    "runtime_memory",
    "tensors",
];

/// A child that lived this long resets the backoff.
const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// How often the supervisor looks at a running child when nothing wakes it: the reader
/// thread wakes it as soon as the child's stdout closes, so this only bounds how late
/// the exit of a child whose stdout stays open (held by a grandchild) is seen.
const SUPERVISE_EVERY: Duration = Duration::from_secs(1);
/// How often it looks while a child whose stdout has closed has not yet exited.
const EXIT_POLL: Duration = Duration::from_millis(20);
/// How long an exited child's last output is waited for before the stream is dropped.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);
/// Events (exits, restarts) kept between two samples.
const MAX_EVENTS: usize = 16;
const PREVIEW_CHARS: usize = 80;

// ---------------------------------------------------------------------------------------
// Detection

/// `neuron-monitor` on `$PATH`, else [`DEFAULT_PATH`].
fn find_monitor() -> Option<PathBuf> {
    child::find_on_path("neuron-monitor").or_else(|| {
        let p = Path::new(DEFAULT_PATH);
        child::is_executable(p).then(|| p.to_path_buf())
    })
}

/// The Neuron devices the driver registered (`<root>/class/neuron_device/neuron<N>`),
/// described from their `core_count` attribute, in index order.
fn sysfs_devices(root: &Path, driver: &str) -> Vec<GpuInfo> {
    let dir = root.join("class/neuron_device");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let n = name.to_str()?.strip_prefix("neuron")?.parse::<u32>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(_, p)| {
            let cores = std::fs::read_to_string(p.join("core_count"))
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
            GpuInfo {
                name: cores.map_or_else(
                    || "AWS Neuron device".to_string(),
                    |c| format!("AWS Neuron device ({c} NeuronCores)"),
                ),
                memory_total: 0,
                driver: driver.to_string(),
            }
        })
        .collect()
}

/// The Neuron driver's version (`<root>/module/neuron/version`), or empty.
fn driver_version(root: &Path) -> String {
    std::fs::read_to_string(root.join("module/neuron/version"))
        .map(|s| clip(s.trim(), 40))
        .unwrap_or_default()
}

/// `period` for the config: whole seconds as `"2s"`, anything else in milliseconds.
pub(crate) fn period_text(interval: Duration) -> String {
    let ms = interval.as_millis().max(1);
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The generated `neuron-monitor` configuration.
pub(crate) fn config_json(interval: Duration) -> String {
    let v = serde_json::json!({
        "period": period_text(interval),
        "neuron_runtimes": [{
            "tag_filter": ".*",
            "metrics": [{"type": "neuroncore_counters"}, {"type": "memory_used"}],
        }],
    });
    format!("{v:#}\n")
}

/// The config file: a private file in the temp dir, created exclusively (never through a
/// planted link), written again before each (re)start and removed on drop.
struct ConfigFile {
    path: PathBuf,
    text: String,
    present: bool,
}

impl ConfigFile {
    fn new(interval: Duration) -> Result<Self, String> {
        let mut f = Self {
            path: PathBuf::new(),
            text: config_json(interval),
            present: false,
        };
        f.write()?;
        Ok(f)
    }

    /// A new name on every write, so a name taken meanwhile cannot block a restart.
    fn fresh_path() -> Result<PathBuf, String> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "leet-neuron-monitor-{}-{}-{nanos}.json",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        if path.to_str().is_none() {
            return Err(format!(
                "temp dir path is not UTF-8: '{}'",
                clip(&path.display().to_string(), 200)
            ));
        }
        Ok(path)
    }

    fn write(&mut self) -> Result<(), String> {
        use std::os::unix::fs::OpenOptionsExt;
        if self.present {
            return Ok(());
        }
        self.path = Self::fresh_path()?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| format!("create config '{}': {e}", self.path.display()))?;
        // Ours from here on: removed below on failure, else after the child read it.
        self.present = true;
        f.write_all(self.text.as_bytes()).map_err(|e| {
            self.remove();
            format!("write config '{}': {e}", self.path.display())
        })
    }

    fn remove(&mut self) {
        if self.present {
            let _ = std::fs::remove_file(&self.path);
            self.present = false;
        }
    }

    fn arg(&self) -> &str {
        self.path.to_str().unwrap_or_default()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// `--pid` filter: the process and its descendants, re-read per parsed report.
struct PidFilter {
    tree: ProcessTree,
    walker: TreeWalker,
}

impl PidFilter {
    fn members(&mut self) -> HashSet<u32> {
        self.walker.refresh(&mut self.tree);
        self.tree.pids().collect()
    }
}

pub(crate) struct NeuronCollector {
    shared: Arc<Mutex<Shared>>,
    stop: Option<mpsc::Sender<Wake>>,
    supervisor: Option<JoinHandle<()>>,
    program: PathBuf,
    filter: Option<PidFilter>,
    driver: String,
    /// Devices from sysfs, until a report describes them.
    sysfs: Vec<GpuInfo>,
    latest: Option<Mapped>,
    latest_at: Option<Instant>,
    created_at: Instant,
    stale_after: Duration,
}

impl NeuronCollector {
    /// Detect (see the module doc) and start the supervisor, which starts the child.
    pub(crate) fn detect(opts: &SamplerOptions) -> Result<Self, String> {
        let program =
            find_monitor().ok_or("neuron-monitor not found on PATH or /opt/aws/neuron/bin")?;
        let root = super::sysfs_root();
        let driver = driver_version(&root);
        let sysfs = sysfs_devices(&root, &driver);
        if sysfs.is_empty() {
            return Err(format!(
                "no Neuron device (no neuron<N> in {})",
                root.join("class/neuron_device").display()
            ));
        }
        Self::start(program, opts, driver, sysfs)
    }

    fn start(
        program: PathBuf,
        opts: &SamplerOptions,
        driver: String,
        sysfs: Vec<GpuInfo>,
    ) -> Result<Self, String> {
        let now = Instant::now();
        let shared = Arc::new(Mutex::new(Shared {
            stream: None,
            started_at: now,
            exited_at: None,
            pending: Taken::default(),
            events: Vec::new(),
            events_lost: 0,
            starts: 0,
            next_start: Some(now),
            config: ConfigFile::new(opts.interval)?,
            stopping: false,
        }));
        let (tx, rx) = mpsc::channel();
        let sup = {
            let shared = shared.clone();
            let program = program.clone();
            let notify = tx.clone();
            std::thread::Builder::new()
                .name("leet-neuron".into())
                .spawn(move || supervise(&shared, &program, &rx, &notify))
                .map_err(|e| format!("cannot start the neuron-monitor thread: {e}"))?
        };
        Ok(Self {
            shared,
            stop: Some(tx),
            supervisor: Some(sup),
            program,
            filter: opts.pid.map(|pid| PidFilter {
                tree: ProcessTree::new(pid),
                walker: TreeWalker::new(),
            }),
            driver,
            sysfs,
            latest: None,
            latest_at: None,
            created_at: now,
            stale_after: (opts.interval * 3).max(Duration::from_secs(2)),
        })
    }

    /// Parse the newest line that is a report; report the ones that are not.
    fn apply(&mut self, lines: &[String], errors: &mut Vec<String>) {
        let mut bad: Option<(&str, serde_json::Error)> = None;
        let mut bad_count = 0;
        for line in lines.iter().rev().take(PARSE_TRIES) {
            match parse_report(line) {
                Ok(report) => {
                    let members = self.filter.as_mut().map(PidFilter::members);
                    let keep = |pid: Option<u32>| {
                        members
                            .as_ref()
                            .is_none_or(|m| pid.is_some_and(|p| m.contains(&p)))
                    };
                    self.latest = Some(map_report(&report, &keep, &self.driver));
                    self.latest_at = Some(Instant::now());
                    break;
                }
                Err(e) => {
                    bad_count += 1;
                    if bad.is_none() {
                        bad = Some((line, e));
                    }
                }
            }
        }
        if let Some((line, e)) = bad {
            let more = if bad_count > 1 {
                format!(" (and {} more)", bad_count - 1)
            } else {
                String::new()
            };
            errors.push(format!(
                "unparsable line: {} ({e}){more}",
                clip(line, PREVIEW_CHARS)
            ));
        }
    }
}

impl Collector for NeuronCollector {
    fn name(&self) -> &'static str {
        "neuron"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let mut errors = Vec::new();
        let (taken, running, next_start, starts) = {
            let mut s = lock(&self.shared);
            s.drain_stream();
            let taken = std::mem::take(&mut s.pending);
            s.pending.closed = taken.closed;
            if !taken.lines.is_empty() || taken.oversized > 0 {
                // The child has read its config by now.
                s.config.remove();
            }
            errors.append(&mut s.events);
            if s.events_lost > 0 {
                errors.push(format!("{} more child events", s.events_lost));
                s.events_lost = 0;
            }
            (taken, s.stream.is_some(), s.next_start, s.starts)
        };
        if taken.dropped > 0 {
            errors.push(format!(
                "dropped {} lines (more than {MAX_LINES} since the last sample)",
                taken.dropped
            ));
        }
        if taken.oversized > 0 {
            errors.push(format!(
                "skipped {} oversized lines (over {} MiB)",
                taken.oversized,
                MAX_LINE_BYTES >> 20
            ));
        }
        self.apply(&taken.lines, &mut errors);
        let now = Instant::now();
        let since = self.latest_at.unwrap_or(self.created_at);
        let age = now.saturating_duration_since(since);
        if age > self.stale_after {
            let mut e = format!("no report for {} s", age.as_secs());
            if !running {
                if let Some(t) = next_start {
                    e.push_str(&format!(
                        " (not running; restart {} in {})",
                        starts.max(1),
                        secs(t.saturating_duration_since(now))
                    ));
                }
            }
            errors.push(e);
        } else if let Some(m) = &self.latest {
            out.extend(m.values.iter().cloned());
            errors.extend(m.errors.iter().cloned());
        }
        problems_result(&self.program, &errors)
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        match &self.latest {
            Some(m) if !m.devices.is_empty() => m.devices.clone(),
            _ => self.sysfs.clone(),
        }
    }
}

impl Drop for NeuronCollector {
    fn drop(&mut self) {
        {
            let mut s = lock(&self.shared);
            s.stopping = true;
            s.stream = None; // kill + reap here, not later on the supervisor
            s.config.remove();
        }
        // The supervisor holds a sender itself (for the readers' notices), so it is told.
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(Wake::Stop);
        }
        if let Some(h) = self.supervisor.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests;
