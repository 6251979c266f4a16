//! The cluster model: what the Prometheus refresh thread has read, per host. Each
//! host has its state (up, down or stale), its W&B-keyed series (windowed rings, as
//! the live store's system metrics), and from them the header row and the GPU
//! heatmap's rows. One writer (the loop thread) folds [`ClusterUpdate`]s in; a
//! failed refresh changes nothing but the error shown.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::source::prometheus::driver::{DEFAULT_INTERVAL, MAX_POINTS};
use crate::source::prometheus::fetch::{Batch, HostSeries, HostUp};
use crate::source::prometheus::rules::Exporter;
use crate::source::prometheus::ClusterUpdate;
use crate::store::series::Series;

/// Hosts kept at most; more (a matcher that selects a whole fleet) are dropped, so
/// the model's memory is bounded whatever the server holds.
pub const MAX_HOSTS: usize = 4096;
/// Series kept per host at most: room for a host that exports every family (a
/// `leet serve` with every accelerator exports about 2,800; 16 GPUs with every
/// dcgm-exporter field about 1,600). Past it the keys of one device (`gpu.3.…`)
/// are the ones dropped, never the host's own (see [`rank`]).
pub const MAX_KEYS: usize = 8192;
/// Intervals without a newer sample after which an up host counts as stale.
const STALE_AFTER: f64 = 3.0;

/// A host as the header shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostState {
    Up,
    /// Its last scrape failed (`up` is 0).
    Down,
    /// Scraped, but its newest sample is older than a few intervals.
    Stale,
}

/// One W&B key's series on one host.
#[derive(Debug, Clone)]
struct KeySeries {
    exporter: Exporter,
    /// The target it comes from (see [`HostSeries::instance`]).
    instance: String,
    /// The first value read, for the keys shown as an amount since then.
    base: Option<f64>,
    since_first: bool,
    points: Series,
}

/// One host.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// The newest `up` point: (time, scraped).
    up: Option<(f64, bool)>,
    /// The newest sample time of any of its series.
    newest: Option<f64>,
    /// The target each exporter's series come from: a second target of the same
    /// exporter splits the host in one row per target (see [`ClusterModel::split`]).
    instances: BTreeMap<Exporter, String>,
    /// The target each scrape job's `up` comes from: a second target of one job
    /// splits the host too (one that never answered has no series to tell it by).
    jobs: BTreeMap<String, String>,
    series: BTreeMap<String, KeySeries>,
}

/// The header row of one host: the latest values.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderRow {
    pub host: String,
    pub state: HostState,
    /// The host's CPU: the mean of its cores' busy shares, %.
    pub cpu: Option<f64>,
    pub memory: Option<f64>,
    pub gpus: usize,
    /// GPUs whose utilisation is not current (their exporter stopped giving it
    /// while the host's other series go on): left out of the values beside.
    pub gpus_stale: usize,
    pub gpu_mean: Option<f64>,
    pub gpu_min: Option<f64>,
    /// Mean GPU memory allocated, %.
    pub gpu_memory: Option<f64>,
    /// GPU power, summed, W.
    pub power: Option<f64>,
    /// The families whose exporter stopped giving them while the host's other
    /// series go on: left out of the values beside, named here (`gpu`, `cpu`,
    /// `memory_percent`), in name order.
    pub behind: Vec<String>,
}

/// One row of the GPU utilisation heatmap: `host:gpu` and one cell per bucket (the
/// mean utilisation in it, None where nothing was read).
#[derive(Debug, Clone, PartialEq)]
pub struct HeatRow {
    pub host: String,
    pub gpu: u32,
    pub cells: Vec<Option<f64>>,
}

/// Everything the cluster screen draws from.
#[derive(Debug, Clone)]
pub struct ClusterModel {
    server: String,
    /// Between two points of a series.
    step: Duration,
    /// Between two refreshes.
    interval: Duration,
    window: Duration,
    hosts: BTreeMap<String, Host>,
    /// Hosts shown as one row per target: two targets of one host exported the
    /// same exporter's series, whose keys would clash in one row.
    split: std::collections::BTreeSet<String>,
    /// The last failure and when the failing began; cleared by the next good
    /// refresh.
    error: Option<(String, f64)>,
    /// The end of the newest good refresh.
    last_ok: Option<f64>,
    /// Rules the server refused in the last refresh.
    refused: Vec<String>,
}

impl Default for ClusterModel {
    fn default() -> Self {
        Self::new(Duration::from_secs(3600))
    }
}

/// `gpu.<N>.<field>`: N and the field.
pub fn gpu_key(key: &str) -> Option<(u32, &str)> {
    let rest = key.strip_prefix("gpu.")?;
    let (n, field) = rest.split_once('.')?;
    Some((n.parse().ok()?, field))
}

impl KeySeries {
    fn latest(&self) -> Option<f64> {
        let (_, y) = self.points.last()?;
        y.is_finite().then_some(y)
    }

    fn last_time(&self) -> Option<f64> {
        self.points.last().map(|(t, _)| t)
    }
}

impl Host {
    pub fn state(&self, now: f64, interval: Duration) -> HostState {
        if self.up.is_some_and(|(_, up)| !up) {
            return HostState::Down;
        }
        let fresh = self.up.map(|(t, _)| t);
        let newest = self.newest.into_iter().chain(fresh).max_by(f64::total_cmp);
        match newest {
            Some(t) if now - t <= STALE_AFTER * interval.as_secs_f64() => HostState::Up,
            _ => HostState::Stale,
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.series.keys().map(String::as_str)
    }

    pub fn series(&self, key: &str) -> Option<&Series> {
        self.series.get(key).map(|s| &s.points)
    }

    /// Whether `key`'s newest sample is current: no older than a few intervals
    /// before the host's newest one. An exporter that stops giving a family (a
    /// hung GPU driver) while the target is scraped leaves that family's keys
    /// behind the others': their last values are not the host's now.
    #[must_use]
    pub fn is_current(&self, key: &str, interval: Duration) -> bool {
        let Some(t) = self.series.get(key).and_then(KeySeries::last_time) else {
            return false;
        };
        self.newest
            .is_none_or(|n| n - t <= STALE_AFTER * interval.as_secs_f64())
    }

    /// The keys that are not current (see [`Host::is_current`]), each with the
    /// time of its newest sample.
    #[must_use]
    pub fn behind(&self, interval: Duration) -> Vec<(&str, f64)> {
        (self.series.iter())
            .filter(|(k, _)| !self.is_current(k, interval))
            .filter_map(|(k, s)| Some((k.as_str(), s.last_time()?)))
            .collect()
    }

    /// The newest `up` point: (time, scraped).
    #[must_use]
    pub fn up(&self) -> Option<(f64, bool)> {
        self.up
    }

    /// The newest sample time of any of its series.
    #[must_use]
    pub fn newest(&self) -> Option<f64> {
        self.newest
    }

    /// The latest values of the current keys `pick` passes.
    fn current(&self, interval: Duration, pick: impl Fn(&str) -> bool) -> Vec<f64> {
        (self.series.iter())
            .filter(|(k, _)| pick(k) && self.is_current(k, interval))
            .filter_map(|(_, s)| s.latest())
            .collect()
    }

    /// The latest value of `field` of every GPU whose series is current.
    fn gpu_latest(&self, field: &str, interval: Duration) -> Vec<f64> {
        self.current(interval, |k| gpu_key(k).is_some_and(|(_, f)| f == field))
    }

    fn fold(&mut self, s: HostSeries, cap: usize, window: f64) {
        // A key `leet serve` exports is read from it; another exporter's series of
        // the same key (node-exporter's CPU, dcgm-exporter's view of the same GPU)
        // would count it twice, so it gives only the keys `leet serve` lacks.
        match self.series.get(&s.key).map(|k| k.exporter) {
            Some(Exporter::Leet) if s.exporter != Exporter::Leet => return,
            Some(e) if e != Exporter::Leet && s.exporter == Exporter::Leet => {
                self.series.remove(&s.key);
            }
            _ => {}
        }
        if !self.series.contains_key(&s.key) && self.series.len() >= MAX_KEYS {
            return;
        }
        let entry = self.series.entry(s.key).or_insert_with(|| KeySeries {
            exporter: s.exporter,
            instance: s.instance,
            base: None,
            since_first: s.since_first,
            points: Series::windowed(cap, window),
        });
        entry.points.reserve_window(s.points.len());
        for (t, v) in s.points {
            // The overlap with the last refresh, and anything out of order.
            if entry.points.last().is_some_and(|(lt, _)| t <= lt) {
                continue;
            }
            let v = if entry.since_first && v.is_finite() {
                v - *entry.base.get_or_insert(v)
            } else {
                v
            };
            entry.points.push(t, v);
            self.newest = Some(self.newest.map_or(t, |n| n.max(t)));
        }
    }
}

/// The order new keys are taken in, so that a host with more than [`MAX_KEYS`]
/// loses its per-device keys (a segment that is a number: `gpu.3.temp`,
/// `cpu.17.cpu_percent`) and keeps the host's own readings (uptime, load, memory,
/// disks, network), whatever their names sort as (an answer comes in name order:
/// `leet_uptime_seconds` after every `leet_gpu_…`).
fn rank(s: &HostSeries) -> (Exporter, bool) {
    let per_device = s
        .key
        .split('.')
        .any(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    (s.exporter, per_device)
}

/// The families (a key's first segment: `gpu`, `cpu`, `memory_percent`) whose
/// keys are not current on `h` (see [`Host::is_current`]), each with its newest
/// sample's time. The keys of a process `leet serve --pid` monitored (`cpu`,
/// `proc.*`, `gpu.process.*`) are none: they stop when the process ends (a job
/// that finished), not because the exporter stopped giving the host's readings.
#[must_use]
pub fn families_behind(h: &Host, every: Duration) -> Vec<(String, f64)> {
    let mut behind: BTreeMap<&str, f64> = BTreeMap::new();
    for (key, t) in h.behind(every) {
        if crate::source::nodes::is_process_key(key) {
            continue;
        }
        let family = key.split(['.', '/']).next().unwrap_or(key);
        let e = behind.entry(family).or_insert(t);
        *e = e.max(t);
    }
    behind.into_iter().map(|(f, t)| (f.to_owned(), t)).collect()
}

/// `cpu.<N>.cpu_percent`: one core's busy share.
#[must_use]
pub fn is_core(key: &str) -> bool {
    (key.strip_prefix("cpu.")
        .and_then(|r| r.strip_suffix(".cpu_percent")))
    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

impl ClusterModel {
    pub fn new(window: Duration) -> Self {
        Self {
            server: String::new(),
            step: DEFAULT_INTERVAL,
            interval: DEFAULT_INTERVAL,
            window,
            hosts: BTreeMap::new(),
            split: std::collections::BTreeSet::new(),
            error: None,
            last_ok: None,
            refused: Vec::new(),
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn step(&self) -> Duration {
        self.step
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// The last refresh's failure (sanitised) and when, while no later one worked.
    pub fn error(&self) -> Option<(&str, f64)> {
        self.error.as_ref().map(|(e, t)| (e.as_str(), *t))
    }

    pub fn refused(&self) -> &[String] {
        &self.refused
    }

    /// The end of the newest good refresh.
    pub fn last_ok(&self) -> Option<f64> {
        self.last_ok
    }

    pub fn hosts(&self) -> impl Iterator<Item = (&str, &Host)> {
        self.hosts.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.get(name)
    }

    /// The time between two samples a host is judged against: the refresh
    /// interval, or the step where it is coarser.
    #[must_use]
    pub fn every(&self) -> Duration {
        self.interval.max(self.step)
    }

    /// Points each ring keeps: the window at the step, and a little room; never
    /// more than the driver's bound (its step keeps the window within it), so a
    /// series costs at most about 11.6 KB however long the window or fine the
    /// step.
    #[must_use]
    pub fn capacity(&self) -> usize {
        let n = self.window.as_secs_f64() / self.step.as_secs_f64().max(0.001);
        (n.ceil() as usize).min(MAX_POINTS).saturating_add(4)
    }

    /// What the model's series hold in memory, bytes: their points' room and
    /// their keys (the bookkeeping around them is a constant per series).
    #[must_use]
    pub fn bytes(&self) -> usize {
        (self.hosts.values().flat_map(|h| h.series.iter()))
            .map(|(k, s)| {
                s.points.allocated() * std::mem::size_of::<crate::store::series::Point>()
                    + k.capacity()
                    + s.instance.capacity()
                    + std::mem::size_of::<KeySeries>()
            })
            .sum()
    }

    fn host_mut(&mut self, name: String) -> Option<&mut Host> {
        if !self.hosts.contains_key(&name) && self.hosts.len() >= MAX_HOSTS {
            return None;
        }
        Some(self.hosts.entry(name).or_default())
    }

    /// Fold one report of the refresh thread in.
    pub fn apply(&mut self, update: ClusterUpdate) {
        match update {
            ClusterUpdate::Started {
                server,
                step,
                interval,
                window,
            } => {
                let step = step.max(Duration::from_millis(1));
                if step != self.step {
                    // The rings are sized for the step; the driver reads the
                    // window again at the new one.
                    self.hosts.clear();
                    self.split.clear();
                }
                self.server = server;
                self.step = step;
                self.interval = interval.max(Duration::from_millis(1));
                self.window = window;
            }
            ClusterUpdate::Fetched(batch) => self.fold(*batch),
            ClusterUpdate::Failed { error, at } => {
                // The failing began at the first failure of this streak, not at the
                // latest retry.
                let since = self.error.as_ref().map_or(at, |(_, t)| t.min(at));
                self.error = Some((error.to_string(), since));
            }
        }
    }

    /// The row a target's series go to: its host's, or its own where the host is
    /// split.
    fn row(&self, host: String, instance: &str) -> String {
        if self.split.contains(&host) {
            instance.to_owned()
        } else {
            host
        }
    }

    /// Note which target each exporter of each host is read from; a host with two
    /// targets of one exporter (two `leet serve` on one machine, on two ports) is
    /// split into one row per target, its series moved to their target's row: one
    /// row would keep one target's series of each key and lose the other's.
    fn split_clashes(&mut self, series: &[HostSeries], ups: &[HostUp]) {
        for s in series {
            if self.split.contains(&s.host) {
                continue;
            }
            let Some(h) = self.host_mut(s.host.clone()) else {
                continue;
            };
            let known = h
                .instances
                .entry(s.exporter)
                .or_insert_with(|| s.instance.clone());
            if *known != s.instance {
                self.split_host(&s.host);
            }
        }
        // Two targets of one job on one host (two `leet serve` on two ports), one
        // of them never answering: its `up` alone says so, and one row would be
        // down with the other's values.
        for u in ups {
            if self.split.contains(&u.host) || u.job.is_empty() {
                continue;
            }
            let Some(h) = self.host_mut(u.host.clone()) else {
                continue;
            };
            let known = h
                .jobs
                .entry(u.job.clone())
                .or_insert_with(|| u.instance.clone());
            if *known != u.instance {
                self.split_host(&u.host);
            }
        }
    }

    /// Show `host` as one row per target from now on, its series moved to their
    /// target's row.
    fn split_host(&mut self, host: &str) {
        // Bounded as the hosts are: past it, a clash is one row, as before.
        if self.split.len() >= MAX_HOSTS {
            return;
        }
        self.split.insert(host.to_owned());
        let Some(old) = self.hosts.remove(host) else {
            return;
        };
        for (key, ks) in old.series {
            let newest = ks.last_time();
            if let Some(h) = self.host_mut(ks.instance.clone()) {
                h.up = h.up.or(old.up);
                h.instances.insert(ks.exporter, ks.instance.clone());
                h.newest = h.newest.into_iter().chain(newest).max_by(f64::total_cmp);
                h.series.insert(key, ks);
            }
        }
    }

    fn fold(&mut self, batch: Batch) {
        let (cap, window) = (self.capacity(), self.window.as_secs_f64());
        self.split_clashes(&batch.series, &batch.up);
        for up in batch.up {
            let Some(last) = up.points.last().copied() else {
                continue;
            };
            // A host scraped by several jobs (node-exporter and dcgm-exporter on one
            // node) is down when any of them is: part of its data has stopped.
            let row = self.row(up.host, &up.instance);
            if let Some(h) = self.host_mut(row) {
                h.up = match h.up {
                    Some((t, up)) if t == last.0 => Some((t, up && last.1)),
                    Some((t, _)) if t > last.0 => h.up,
                    _ => Some(last),
                };
            }
        }
        // Leet series first, so a host's other exporters are known to be ignored;
        // then each host's own keys before its devices' (see [`rank`]).
        let mut series = batch.series;
        series.sort_by_cached_key(rank);
        for s in series {
            let row = self.row(s.host.clone(), &s.instance);
            if let Some(h) = self.host_mut(row) {
                h.fold(s, cap, window);
            }
        }
        self.error = None;
        self.refused = batch.refused;
        self.last_ok = Some(self.last_ok.map_or(batch.end, |t| t.max(batch.end)));
    }

    /// One header row per host, in host order.
    pub fn header(&self, now: f64) -> Vec<HeaderRow> {
        (self.hosts.iter())
            .map(|(name, h)| {
                let every = self.every();
                let util = h.gpu_latest("gpu", every);
                let power = h.gpu_latest("powerWatts", every);
                let gpus = (h.keys())
                    .filter(|k| gpu_key(k).is_some_and(|(_, f)| f == "gpu"))
                    .count();
                let cores = h.current(every, is_core);
                HeaderRow {
                    host: name.clone(),
                    state: h.state(now, every),
                    cpu: mean(&cores),
                    memory: h.current(every, |k| k == "memory_percent").first().copied(),
                    gpus,
                    gpus_stale: gpus.saturating_sub(util.len()),
                    gpu_mean: mean(&util),
                    gpu_min: util.iter().copied().min_by(f64::total_cmp),
                    gpu_memory: mean(&h.gpu_latest("memoryAllocated", every)),
                    power: (!power.is_empty()).then(|| power.iter().sum()),
                    behind: (families_behind(h, every).into_iter())
                        .map(|(f, _)| f)
                        .collect(),
                }
            })
            .collect()
    }

    /// Every GPU's utilisation over `[now - window, now]` in `buckets` columns.
    pub fn heatmap(&self, now: f64, buckets: usize) -> Vec<HeatRow> {
        (self.hosts.keys())
            .flat_map(|name| self.host_heat(name, now, buckets))
            .collect()
    }

    /// Host `name`'s GPUs' utilisation over `[now - window, now]` in `buckets`
    /// columns, in GPU order; with no bucket, only which GPUs there are (a row
    /// not drawn costs no walk over its points).
    pub fn host_heat(&self, name: &str, now: f64, buckets: usize) -> Vec<HeatRow> {
        let Some(h) = self.hosts.get(name) else {
            return Vec::new();
        };
        let span = self.window.as_secs_f64();
        let (t0, width) = (now - span, span / buckets.max(1) as f64);
        let mut gpus: Vec<(u32, &Series)> = (h.series.iter())
            .filter_map(|(k, s)| match gpu_key(k) {
                Some((n, "gpu")) => Some((n, &s.points)),
                _ => None,
            })
            .collect();
        gpus.sort_by_key(|(n, _)| *n);
        let mut rows = Vec::with_capacity(gpus.len());
        for (gpu, series) in gpus {
            let mut sums = vec![(0.0, 0u32); buckets];
            // Only the window's points (the ring may hold a little before it).
            let points = series.points();
            let from = if buckets == 0 {
                points.len()
            } else {
                points.partition_point(|p| p.0 < t0)
            };
            for &(t, v) in &points[from..] {
                let at = ((t - t0) / width).floor();
                if v.is_finite() && at >= 0.0 && (at as usize) < buckets {
                    let cell = &mut sums[at as usize];
                    *cell = (cell.0 + v, cell.1 + 1);
                }
            }
            let cells = sums
                .into_iter()
                .map(|(s, n)| (n > 0).then(|| s / f64::from(n)))
                .collect();
            rows.push(HeatRow {
                host: name.to_owned(),
                gpu,
                cells,
            });
        }
        rows
    }
}

#[cfg(test)]
mod tests;
