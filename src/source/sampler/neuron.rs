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

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::child::{self, problems_result, Backoff, Stream, Taken};
use super::procfs::{ProcessTree, TreeWalker};
use super::{Collector, GpuInfo, SamplerError, SamplerOptions};

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
// The report, as far as the keys need it. Every number is read leniently: a value of
// another type is "absent", never a failed report.

/// A JSON number, or `None` for any other value (skipped without allocating).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Num(Option<f64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v.is_finite().then_some(v)))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Num, D2::Error> {
                Num::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Num, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Num(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Num(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string, or empty for any other value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            S(String),
            Other(IgnoredAny),
        }
        Ok(match Any::deserialize(d)? {
            Any::S(s) => Text(s),
            Any::Other(_) => Text(String::new()),
        })
    }
}

#[derive(Debug, Default, Deserialize)]
struct Report {
    #[serde(default)]
    neuron_runtime_data: Option<Vec<RuntimeEntry>>,
    #[serde(default)]
    instance_info: Option<InstanceInfo>,
    #[serde(default)]
    neuron_hardware_info: Option<HardwareInfo>,
}

#[derive(Debug, Default, Deserialize)]
struct RuntimeEntry {
    #[serde(default)]
    pid: Num,
    #[serde(default)]
    error: Text,
    #[serde(default)]
    report: Option<RuntimeReport>,
}

#[derive(Debug, Default, Deserialize)]
struct RuntimeReport {
    #[serde(default)]
    neuroncore_counters: Option<CoreCounters>,
    #[serde(default)]
    memory_used: Option<MemoryUsed>,
}

#[derive(Debug, Default, Deserialize)]
struct CoreCounters {
    #[serde(default)]
    neuroncores_in_use: Option<BTreeMap<String, CoreUse>>,
    #[serde(default)]
    error: Text,
}

#[derive(Debug, Default, Deserialize)]
struct CoreUse {
    #[serde(default)]
    neuroncore_utilization: Num,
}

#[derive(Debug, Default, Deserialize)]
struct MemoryUsed {
    #[serde(default)]
    neuron_runtime_used_bytes: Option<UsedBytes>,
    #[serde(default)]
    error: Text,
}

#[derive(Debug, Default, Deserialize)]
struct UsedBytes {
    #[serde(default)]
    host: Num,
    #[serde(default)]
    neuron_device: Num,
    #[serde(default)]
    usage_breakdown: Option<Breakdown>,
}

#[derive(Debug, Default, Deserialize)]
struct Breakdown {
    #[serde(default)]
    host: Option<BTreeMap<String, Num>>,
    #[serde(default)]
    neuroncore_memory_usage: Option<BTreeMap<String, BTreeMap<String, Num>>>,
}

#[derive(Debug, Default, Deserialize)]
struct InstanceInfo {
    #[serde(default)]
    instance_type: Text,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
struct HardwareInfo {
    #[serde(default)]
    neuron_device_count: Num,
    #[serde(default)]
    neuroncore_per_device_count: Num,
    /// Newer SDKs: "trainium2", ...
    #[serde(default)]
    neuron_device_type: Text,
    /// Newer SDKs: bytes per device.
    #[serde(default)]
    neuron_device_memory_size: Num,
}

/// What one parsed report gives: the `trn.*` values of the selected runtimes, the
/// runtimes' own error strings, and the hardware description.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Mapped {
    pub values: Vec<(String, f64)>,
    pub errors: Vec<String>,
    pub devices: Vec<GpuInfo>,
}

fn parse_report(line: &str) -> Result<Report, serde_json::Error> {
    serde_json::from_str(line)
}

fn add(total: &mut Option<f64>, v: Num) {
    if let Some(v) = v.0 {
        *total = Some(total.unwrap_or(0.0) + v);
    }
}

fn clip(s: &str, max_chars: usize) -> String {
    let clean = crate::text::sanitize(s);
    match clean.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean,
    }
}

fn core_index(key: &str) -> Option<u32> {
    key.parse::<u32>().ok().filter(|c| *c < MAX_CORES)
}

/// Map a report to `trn.*` keys: runtimes whose pid `keep` accepts, summed.
fn map_report(report: &Report, keep: &dyn Fn(Option<u32>) -> bool, driver: &str) -> Mapped {
    let mut util: BTreeMap<u32, Option<f64>> = BTreeMap::new();
    let mut host_total = None;
    let mut device_total = None;
    let mut host = [None; HOST_MEMORY_FIELDS.len()];
    let mut cores: BTreeMap<u32, [Option<f64>; CORE_MEMORY_FIELDS.len()]> = BTreeMap::new();
    let mut errors = Vec::new();
    for rt in report.neuron_runtime_data.iter().flatten() {
        let pid = rt
            .pid
            .0
            .filter(|p| p.fract() == 0.0 && *p >= 0.0 && *p <= f64::from(u32::MAX))
            .map(|p| p as u32);
        if !keep(pid) {
            continue;
        }
        let who = pid.map_or_else(|| "?".to_string(), |p| p.to_string());
        let mut note = |what: &str, e: &Text| {
            if !e.0.is_empty() {
                errors.push(format!("runtime {who}{what}: {}", clip(&e.0, 200)));
            }
        };
        note("", &rt.error);
        let Some(r) = &rt.report else { continue };
        if let Some(c) = &r.neuroncore_counters {
            note(" neuroncore_counters", &c.error);
            for (core, u) in c.neuroncores_in_use.iter().flatten() {
                if let Some(core) = core_index(core) {
                    add(util.entry(core).or_default(), u.neuroncore_utilization);
                }
            }
        }
        if let Some(m) = &r.memory_used {
            note(" memory_used", &m.error);
            let Some(used) = &m.neuron_runtime_used_bytes else {
                continue;
            };
            add(&mut host_total, used.host);
            add(&mut device_total, used.neuron_device);
            let Some(b) = &used.usage_breakdown else {
                continue;
            };
            for (i, field) in HOST_MEMORY_FIELDS.iter().enumerate() {
                if let Some(v) = b.host.as_ref().and_then(|h| h.get(*field)) {
                    add(&mut host[i], *v);
                }
            }
            for (core, fields) in b.neuroncore_memory_usage.iter().flatten() {
                let Some(core) = core_index(core) else {
                    continue;
                };
                let slot = cores.entry(core).or_default();
                for (i, field) in CORE_MEMORY_FIELDS.iter().enumerate() {
                    if let Some(v) = fields.get(*field) {
                        add(&mut slot[i], *v);
                    }
                }
            }
        }
    }
    let mut values = Vec::new();
    for (core, v) in &util {
        if let Some(v) = v {
            values.push((format!("trn.{core}.neuroncore_utilization"), *v));
        }
    }
    if let Some(v) = host_total {
        values.push(("trn.host_total_memory_usage".to_string(), v));
    }
    if let Some(v) = device_total {
        values.push(("trn.neuron_device_total_memory_usage".to_string(), v));
    }
    for (field, v) in HOST_MEMORY_FIELDS.iter().zip(host) {
        if let Some(v) = v {
            values.push((format!("trn.host_memory_usage.{field}"), v));
        }
    }
    for (core, slot) in &cores {
        for (field, v) in CORE_MEMORY_FIELDS.iter().zip(slot) {
            if let Some(v) = v {
                values.push((format!("trn.{core}.neuroncore_memory_usage.{field}"), *v));
            }
        }
    }
    Mapped {
        values,
        errors,
        devices: report_devices(report, driver),
    }
}

/// "AWS Trainium2", "AWS Inferentia", ... from `neuron_device_type` or the instance type.
fn chip_name(device_type: &str, instance_type: &str) -> String {
    let device_type = clip(device_type.trim(), 40);
    if !device_type.is_empty() {
        let mut c = device_type.chars();
        let first = c.next().map(|f| f.to_uppercase().collect::<String>());
        return format!("AWS {}{}", first.unwrap_or_default(), c.as_str());
    }
    let family = instance_type.split('.').next().unwrap_or("");
    let chip = match family {
        "inf1" => "Inferentia",
        "inf2" => "Inferentia2",
        f if f.starts_with("trn1") => "Trainium",
        f if f.starts_with("trn2") => "Trainium2",
        f if f.starts_with("trn3") => "Trainium3",
        _ => "Neuron device",
    };
    format!("AWS {chip}")
}

/// One entry per Neuron device of `neuron_hardware_info` (none without it).
fn report_devices(report: &Report, driver: &str) -> Vec<GpuInfo> {
    let Some(hw) = &report.neuron_hardware_info else {
        return Vec::new();
    };
    let count = hw
        .neuron_device_count
        .0
        .filter(|n| *n >= 0.0)
        .map_or(0, |n| n.min(1024.0) as usize);
    let instance_type = report
        .instance_info
        .as_ref()
        .map_or("", |i| i.instance_type.0.as_str());
    let chip = chip_name(&hw.neuron_device_type.0, instance_type);
    let name = match hw.neuroncore_per_device_count.0 {
        Some(c) if c >= 0.0 => format!("{chip} ({c} NeuronCores)"),
        _ => chip,
    };
    let memory_total = hw
        .neuron_device_memory_size
        .0
        .filter(|m| *m >= 0.0)
        .map_or(0, |m| m as u64);
    (0..count)
        .map(|_| GpuInfo {
            name: name.clone(),
            memory_total,
            driver: driver.to_string(),
        })
        .collect()
}

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

// ---------------------------------------------------------------------------------------
// The child, shared by the supervisor thread and the collector.

struct Shared {
    stream: Option<Stream>,
    started_at: Instant,
    /// When the running child was seen to exit (its output is drained first).
    exited_at: Option<Instant>,
    /// Lines taken from streams that have since been dropped.
    pending: Taken,
    /// Exits and restarts since the last sample.
    events: Vec<String>,
    events_lost: usize,
    /// Children started so far.
    starts: u32,
    /// When the next start is due while no child runs.
    next_start: Option<Instant>,
    config: ConfigFile,
    stopping: bool,
}

impl Shared {
    fn event(&mut self, e: String) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(e);
        } else {
            self.events_lost += 1;
        }
    }

    /// Move what the current stream has read into `pending`.
    fn drain_stream(&mut self) {
        if let Some(s) = &mut self.stream {
            let t = s.take();
            merge(&mut self.pending, t);
        }
    }
}

/// Append `t` to `into`, keeping at most [`MAX_LINES`] lines (dropping the oldest).
fn merge(into: &mut Taken, t: Taken) {
    into.lines.extend(t.lines);
    let extra = into.lines.len().saturating_sub(MAX_LINES);
    into.lines.drain(..extra);
    into.dropped += t.dropped + extra as u64;
    into.oversized += t.oversized;
    into.closed = t.closed;
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 || s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// What wakes the supervisor before its next look is due.
enum Wake {
    /// The collector is going.
    Stop,
    /// The running child's stdout closed (sent by its reader thread).
    Closed,
}

/// Start, watch and restart the child until the collector goes.
fn supervise(
    shared: &Mutex<Shared>,
    program: &Path,
    wake: &mpsc::Receiver<Wake>,
    notify: &mpsc::Sender<Wake>,
) {
    let name = program
        .file_name()
        .map_or_else(|| "neuron-monitor".into(), |n| n.to_string_lossy());
    let mut backoff = Backoff::new(HEALTHY_RUN);
    let mut wait = Duration::ZERO;
    // The running child's stdout has closed: it is exiting, so look again soon.
    let mut closed = false;
    loop {
        match wake.recv_timeout(wait) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Wake::Closed) => closed = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
        wait = SUPERVISE_EVERY;
        let mut s = lock(shared);
        if s.stopping {
            break;
        }
        let now = Instant::now();
        if s.stream.is_some() {
            let status = s.stream.as_mut().and_then(Stream::exited);
            let Some(status) = status else {
                if closed {
                    wait = EXIT_POLL;
                }
                continue;
            };
            s.drain_stream();
            let exited_at = *s.exited_at.get_or_insert(now);
            if !s.pending.closed && now.saturating_duration_since(exited_at) < DRAIN_AFTER_EXIT {
                wait = EXIT_POLL.max(DRAIN_AFTER_EXIT / 5);
                continue; // its last lines may still be in the pipe
            }
            let lived = exited_at.saturating_duration_since(s.started_at);
            s.drain_stream();
            s.stream = None; // kills what is left of its group, reaps it
            s.exited_at = None;
            closed = false;
            let delay = backoff.after(lived);
            let n = s.starts;
            s.event(format!(
                "{name} exited ({status}) after {}; restart {n} in {}",
                secs(lived),
                secs(delay)
            ));
            s.next_start = Some(now + delay);
        } else if s.next_start.is_some_and(|t| now >= t) {
            // A notice of the previous child is stale now.
            while let Ok(w) = wake.try_recv() {
                if matches!(w, Wake::Stop) {
                    return stop(&mut s);
                }
            }
            let started = s.config.write().and_then(|()| {
                let arg = s.config.arg().to_string();
                let notify = notify.clone();
                let on_close: Box<dyn FnOnce() + Send> = Box::new(move || {
                    let _ = notify.send(Wake::Closed);
                });
                Stream::spawn_with_close_notice(
                    program,
                    &["-c", &arg],
                    MAX_LINES,
                    MAX_LINE_BYTES,
                    Some(on_close),
                )
                .map_err(|e| e.to_string())
            });
            closed = false;
            match started {
                Ok(stream) => {
                    s.stream = Some(stream);
                    s.started_at = now;
                    s.next_start = None;
                    s.pending.closed = false;
                    s.starts += 1;
                    if s.starts > 1 {
                        let n = s.starts - 1;
                        s.event(format!("{name} restarted (restart {n})"));
                    }
                }
                Err(e) => {
                    let delay = backoff.after(Duration::ZERO);
                    s.event(format!(
                        "cannot start {name}: {e}; retry in {}",
                        secs(delay)
                    ));
                    s.next_start = Some(now + delay);
                }
            }
        }
        if let Some(t) = s.next_start {
            wait = t.saturating_duration_since(now);
        }
    }
    stop(&mut lock(shared));
}

/// The supervisor's last act: no child, no config file.
fn stop(s: &mut Shared) {
    s.stream = None;
    s.config.remove();
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
    pub fn detect(opts: &SamplerOptions) -> Result<Self, String> {
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
mod tests {
    use super::*;

    /// The recorded inf1.xlarge report (tests/fixtures/neuron/README.md).
    const RECORDED: &str = include_str!("../../../tests/fixtures/neuron/neuron-monitor-1.jsonl");

    fn all(_: Option<u32>) -> bool {
        true
    }

    fn get(m: &Mapped, key: &str) -> Option<f64> {
        m.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    #[test]
    fn recorded_report_maps_to_every_spec_key() {
        let r = parse_report(RECORDED.trim()).expect("recorded line parses");
        let m = map_report(&r, &all, "2.x");
        // 4 cores × (utilization + 5 memory fields) + 2 totals + 4 host fields
        assert_eq!(m.values.len(), 4 * 6 + 2 + 4, "{:?}", m.values);
        assert_eq!(
            get(&m, "trn.0.neuroncore_utilization"),
            Some(89.018_276_389_965_58)
        );
        for c in 1..4 {
            assert_eq!(
                get(&m, &format!("trn.{c}.neuroncore_utilization")),
                Some(0.0)
            );
        }
        assert_eq!(
            get(&m, "trn.host_total_memory_usage"),
            Some(1_119_887_360.0)
        );
        assert_eq!(
            get(&m, "trn.neuron_device_total_memory_usage"),
            Some(63_118_912.0)
        );
        assert_eq!(
            get(&m, "trn.host_memory_usage.application_memory"),
            Some(1_117_293_568.0)
        );
        assert_eq!(get(&m, "trn.host_memory_usage.constants"), Some(0.0));
        assert_eq!(get(&m, "trn.host_memory_usage.dma_buffers"), Some(16_512.0));
        assert_eq!(get(&m, "trn.host_memory_usage.tensors"), Some(2_577_280.0));
        assert_eq!(
            get(&m, "trn.0.neuroncore_memory_usage.constants"),
            Some(61_766_864.0)
        );
        assert_eq!(
            get(&m, "trn.0.neuroncore_memory_usage.model_code"),
            Some(1_308_832.0)
        );
        assert_eq!(
            get(&m, "trn.0.neuroncore_memory_usage.model_shared_scratchpad"),
            Some(0.0)
        );
        assert_eq!(
            get(&m, "trn.0.neuroncore_memory_usage.runtime_memory"),
            Some(43_216.0)
        );
        assert_eq!(get(&m, "trn.3.neuroncore_memory_usage.tensors"), Some(0.0));
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        // neuron_hardware_info: 1 device × 4 NeuronCores; instance type inf1 → Inferentia
        assert_eq!(
            m.devices,
            vec![GpuInfo {
                name: "AWS Inferentia (4 NeuronCores)".into(),
                memory_total: 0,
                driver: "2.x".into(),
            }]
        );
    }

    /// The recorded runtime twice: as pid `a` and as pid `b` with cores 4..7.
    fn two_runtimes(a: u32, b: u32) -> String {
        let mut v: serde_json::Value = serde_json::from_str(RECORDED).expect("json");
        let rt = v["neuron_runtime_data"][0].clone();
        let text = serde_json::to_string(&rt).expect("json");
        let mut second = text.clone();
        for c in 0..4 {
            second = second.replace(&format!("\"{c}\":{{"), &format!("\"{}\":{{", c + 4));
        }
        let mut second: serde_json::Value = serde_json::from_str(&second).expect("json");
        second["pid"] = b.into();
        v["neuron_runtime_data"][0]["pid"] = a.into();
        v["neuron_runtime_data"]
            .as_array_mut()
            .expect("array")
            .push(second);
        v.to_string()
    }

    #[test]
    fn runtimes_are_selected_by_pid_and_summed() {
        let r = parse_report(&two_runtimes(100, 200)).expect("parses");
        let both = map_report(&r, &all, "");
        assert_eq!(
            get(&both, "trn.host_total_memory_usage"),
            Some(2.0 * 1_119_887_360.0)
        );
        assert_eq!(
            get(&both, "trn.4.neuroncore_utilization"),
            Some(89.018_276_389_965_58)
        );
        assert_eq!(both.values.len(), 8 * 6 + 2 + 4);
        let only_a = map_report(&r, &|p| p == Some(100), "");
        assert_eq!(
            get(&only_a, "trn.host_total_memory_usage"),
            Some(1_119_887_360.0)
        );
        assert_eq!(get(&only_a, "trn.4.neuroncore_utilization"), None);
        assert_eq!(
            get(&only_a, "trn.0.neuroncore_utilization"),
            Some(89.018_276_389_965_58)
        );
        let none = map_report(&r, &|_| false, "");
        assert!(none.values.is_empty());
        // the hardware description does not depend on the runtimes
        assert_eq!(none.devices.len(), 1);
    }

    #[test]
    fn odd_values_are_absent_not_fatal() {
        let line = r#"{"neuron_runtime_data":[{"pid":"x","error":"nrt: \u001b[31mbroken\u0007","report":{
            "neuroncore_counters":{"neuroncores_in_use":{"0":{"neuroncore_utilization":"n/a"},
              "1":{"neuroncore_utilization":12.5,"flops":3,"v3d":{"nc_v3.0":{"neuroncore_utilization":1}}},
              "core":{"neuroncore_utilization":7}},"error":""},
            "memory_used":{"neuron_runtime_used_bytes":{"host":null,"neuron_device":[1],
              "usage_breakdown":{"host":{"tensors":{"a":1},"constants":5},
              "neuroncore_memory_usage":{"1":{"tensors":9,"model_code":true}}}}}}}],
            "neuron_hardware_info":"gone"}"#;
        // a wrong type for a whole section is an unparsable report ...
        assert!(parse_report(line).is_err());
        // ... but wrong leaf values only drop those values
        let line = line.replace(r#""neuron_hardware_info":"gone""#, r#""x":1"#);
        let r = parse_report(&line).expect("lenient leaves");
        let m = map_report(&r, &all, "");
        assert_eq!(
            m.values,
            vec![
                ("trn.1.neuroncore_utilization".to_string(), 12.5),
                ("trn.host_memory_usage.constants".to_string(), 5.0),
                ("trn.1.neuroncore_memory_usage.tensors".to_string(), 9.0),
            ]
        );
        // the runtime's error is reported, sanitized (no escape sequence, no BEL)
        assert_eq!(m.errors, vec!["runtime ?: nrt: broken".to_string()]);
        assert!(m.devices.is_empty());
        let line = r#"{"neuron_runtime_data":[{"report":{"neuroncore_counters":{"neuroncores_in_use":
            {"1023":{"neuroncore_utilization":1},"1024":{"neuroncore_utilization":2},
             "-1":{"neuroncore_utilization":3}}}}}]}"#;
        let m = map_report(&parse_report(line).expect("parses"), &all, "");
        assert_eq!(
            m.values,
            vec![("trn.1023.neuroncore_utilization".to_string(), 1.0)]
        );
        for bad in ["", "not json", "{\"neuron_runtime_data\":5}", "[1,2]"] {
            assert!(parse_report(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn newer_hardware_info_names_the_chip_and_memory() {
        let line = r#"{"neuron_runtime_data":[],"instance_info":{"instance_type":"trn2.48xlarge"},
            "neuron_hardware_info":{"neuron_device_type":"trainium2","neuron_device_count":16,
            "neuron_device_memory_size":103079215104,"neuroncore_per_device_count":4}}"#;
        let m = map_report(&parse_report(line).expect("parses"), &all, "");
        assert_eq!(m.devices.len(), 16);
        assert_eq!(m.devices[0].name, "AWS Trainium2 (4 NeuronCores)");
        assert_eq!(m.devices[0].memory_total, 103_079_215_104);
        assert_eq!(chip_name("", "trn1n.32xlarge"), "AWS Trainium");
        assert_eq!(chip_name("", "inf2.xlarge"), "AWS Inferentia2");
        assert_eq!(chip_name("", "m5.large"), "AWS Neuron device");
    }

    #[test]
    fn sysfs_devices_are_the_drivers_neuron_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let class = dir.path().join("class/neuron_device");
        for (name, cores) in [
            ("neuron1", Some("2\n")),
            ("neuron0", Some("2\n")),
            ("neuron10", None),
        ] {
            std::fs::create_dir_all(class.join(name)).expect("mkdir");
            if let Some(c) = cores {
                std::fs::write(class.join(name).join("core_count"), c).expect("write");
            }
        }
        // class attribute files of the driver are not devices
        std::fs::write(class.join("node_id_2"), "0").expect("write");
        std::fs::create_dir_all(dir.path().join("module/neuron")).expect("mkdir");
        std::fs::write(dir.path().join("module/neuron/version"), "2.19.64.0\n").expect("write");
        let driver = driver_version(dir.path());
        assert_eq!(driver, "2.19.64.0");
        let d = sysfs_devices(dir.path(), &driver);
        let names: Vec<&str> = d.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "AWS Neuron device (2 NeuronCores)",
                "AWS Neuron device (2 NeuronCores)",
                "AWS Neuron device"
            ]
        );
        assert!(sysfs_devices(&dir.path().join("nothing"), "").is_empty());
    }

    #[test]
    fn config_period_is_the_interval() {
        assert_eq!(period_text(Duration::from_secs(1)), "1s");
        assert_eq!(period_text(Duration::from_secs(15)), "15s");
        assert_eq!(period_text(Duration::from_millis(300)), "300ms");
        assert_eq!(period_text(Duration::from_millis(1500)), "1500ms");
        assert_eq!(period_text(Duration::from_micros(10)), "1ms");
        let v: serde_json::Value =
            serde_json::from_str(&config_json(Duration::from_secs(2))).expect("json");
        assert_eq!(v["period"], "2s");
        let types: Vec<&str> = v["neuron_runtimes"][0]["metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .filter_map(|m| m["type"].as_str())
            .collect();
        assert_eq!(types, ["neuroncore_counters", "memory_used"]);
        assert_eq!(v["neuron_runtimes"][0]["tag_filter"], ".*");
    }

    #[test]
    fn config_file_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let mut f = ConfigFile::new(Duration::from_millis(250)).expect("config");
        let path = f.path.clone();
        let meta = std::fs::metadata(&path).expect("written");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(std::fs::read_to_string(&path)
            .expect("read")
            .contains("\"250ms\""));
        f.remove();
        assert!(!path.exists());
        f.write().expect("rewrite");
        let again = f.path.clone();
        assert!(again.exists());
        assert_ne!(again, path, "a fresh name for each write");
        drop(f);
        assert!(!again.exists());
    }

    #[test]
    fn previews_are_sanitized_and_short() {
        let s = format!("\u{1b}[31m{}\u{7}", "y".repeat(200));
        let c = clip(&s, PREVIEW_CHARS);
        assert_eq!(c, format!("{}…", "y".repeat(80)));
        assert_eq!(clip("short", 80), "short");
    }

    #[test]
    fn backoff_doubles_to_a_minute_and_resets_after_a_healthy_run() {
        let mut b = Backoff::new(HEALTHY_RUN);
        let quick = Duration::from_millis(300);
        let delays: Vec<u64> = (0..9).map(|_| b.after(quick).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(b.after(Duration::from_secs(59)).as_secs(), 60);
        assert_eq!(b.after(HEALTHY_RUN).as_secs(), 1);
        assert_eq!(b.after(quick).as_secs(), 2);
    }

    #[test]
    fn merged_lines_stay_bounded() {
        let mut into = Taken::default();
        for i in 0..10 {
            merge(
                &mut into,
                Taken {
                    lines: vec![format!("a{i}"), format!("b{i}")],
                    dropped: 1,
                    oversized: 1,
                    closed: false,
                },
            );
        }
        assert_eq!(into.lines, ["a8", "b8", "a9", "b9"]);
        assert_eq!(into.dropped, 10 + 16);
        assert_eq!(into.oversized, 10);
    }

    /// A fake `neuron-monitor` that writes its pid to `pidfile` and replays the report.
    fn fake(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("neuron-monitor");
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho $$ > '{}/pid'\n{body}\n", dir.display()),
        )
        .expect("write fake");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    fn wait_for_pid(dir: &Path) -> u32 {
        let t = Instant::now();
        loop {
            if let Some(pid) = std::fs::read_to_string(dir.join("pid"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "fake never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn alive(pid: u32) -> bool {
        // a zombie would still have /proc/<pid>; a reaped child has none
        Path::new(&format!("/proc/{pid}")).exists()
    }

    fn opts(interval: Duration) -> SamplerOptions {
        SamplerOptions {
            interval,
            ..SamplerOptions::default()
        }
    }

    #[test]
    fn collector_reads_the_stream_and_its_drop_kills_the_child() {
        let dir = tempfile::tempdir().expect("tempdir");
        let line = RECORDED.trim().replace('\'', "");
        let prog = fake(
            dir.path(),
            &format!("while :; do echo '{line}'; sleep 0.1; done"),
        );
        let mut c = NeuronCollector::start(
            prog,
            &opts(Duration::from_millis(100)),
            String::new(),
            vec![],
        )
        .expect("start");
        let pid = wait_for_pid(dir.path());
        let t = Instant::now();
        let mut out = Vec::new();
        while out.is_empty() {
            assert!(t.elapsed() < Duration::from_secs(10), "no values");
            std::thread::sleep(Duration::from_millis(100));
            let _ = c.sample(&mut out);
        }
        assert_eq!(out.len(), 30);
        assert_eq!(c.gpus().len(), 1, "devices from neuron_hardware_info");
        assert!(alive(pid));
        drop(c);
        assert!(!alive(pid), "child {pid} outlived the collector");
    }

    #[test]
    fn a_panicking_owner_leaves_no_child() {
        let dir = tempfile::tempdir().expect("tempdir");
        let prog = fake(dir.path(), "exec sleep 60");
        let path = dir.path().to_path_buf();
        let h = std::thread::spawn(move || {
            let _c =
                NeuronCollector::start(prog, &opts(Duration::from_secs(1)), String::new(), vec![])
                    .expect("start");
            let pid = wait_for_pid(&path);
            assert!(alive(pid));
            panic!("owner of the collector panics");
        });
        assert!(h.join().is_err());
        let pid = wait_for_pid(dir.path());
        assert!(!alive(pid), "child {pid} survived the panic");
    }
}
