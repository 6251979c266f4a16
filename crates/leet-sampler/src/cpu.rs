//! `cpu` (process-tree CPU %), `proc.cpu.threads`, host per-core `cpu.N.cpu_percent`,
//! and `proc.cpu.throttledPercent` (share of the leaf cgroup's CPU quota periods that
//! were throttled since the previous sample, when a quota is in force); and the host's
//! `load.1m`, `load.5m`, `load.15m` (`/proc/loadavg`) and `uptime` (seconds since boot,
//! `/proc/uptime`).
//!
//! The process keys follow the shared tree's root, and are left out when there is none.

use std::collections::HashMap;
use std::time::Instant;

use super::procfs::{self, CgroupLimits, SharedTree};
use super::{Collector, SamplerError};

/// Per-core busy/total jiffies from one `/proc/stat` reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CoreTimes {
    pub busy: u64,
    pub total: u64,
}

/// Parse the `cpuN` lines of `/proc/stat` into `out` (index = N).
/// Busy = total − idle − iowait; guest time is already inside user/nice.
pub(crate) fn parse_proc_stat(text: &str, out: &mut Vec<CoreTimes>) {
    out.clear();
    for line in text.lines() {
        let Some(rest) = line
            .strip_prefix("cpu")
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        else {
            continue; // other lines, and the aggregate "cpu " line
        };
        let mut f = rest.split_ascii_whitespace();
        let Some(Ok(n)) = f.next().map(str::parse::<usize>) else {
            continue;
        };
        let v: Vec<u64> = f.take(8).filter_map(|s| s.parse().ok()).collect();
        if v.len() < 4 {
            continue;
        }
        let total: u64 = v.iter().sum();
        let idle = v[3] + v.get(4).copied().unwrap_or(0);
        if out.len() <= n {
            out.resize(n + 1, CoreTimes::default());
        }
        out[n] = CoreTimes {
            busy: total.saturating_sub(idle),
            total,
        };
    }
}

/// The three load averages of a `/proc/loadavg` line (`0.52 0.58 0.59 1/467 12345`).
pub(crate) fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_ascii_whitespace().map(str::parse::<f64>);
    let mut next = || it.next()?.ok().filter(|v| v.is_finite() && *v >= 0.0);
    Some([next()?, next()?, next()?])
}

/// Seconds since boot, the first number of `/proc/uptime` (`12345.67 23456.78`).
pub(crate) fn parse_uptime(text: &str) -> Option<f64> {
    let v: f64 = text.split_ascii_whitespace().next()?.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The CPU capacity `cpu` is divided by: the cgroup CPU limit (capped by the affinity
/// CPU count) when there is one, otherwise the physical core count, as the reference does.
pub(crate) fn cpu_capacity(cgroup: &CgroupLimits) -> f64 {
    let affinity = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) as f64;
    if let Some(limit) = cgroup.cpu_max {
        return limit.min(affinity);
    }
    sysinfo::System::physical_core_count().map_or(affinity, |n| n as f64)
}

pub(crate) struct CpuCollector {
    tree: SharedTree,
    capacity: f64,
    ticks_per_sec: f64,
    /// (pid, start ticks) → cpu ticks at the previous sample.
    prev_proc: HashMap<(u32, u64), u64>,
    next_proc: HashMap<(u32, u64), u64>,
    prev_at: Option<Instant>,
    prev_cores: Vec<CoreTimes>,
    cores: Vec<CoreTimes>,
    buf: String,
    /// `/proc/stat`, kept open.
    proc_stat: procfs::ProcFile,
    keys: Vec<String>,
    /// The tree root's cgroup limits, copied when the root changes.
    cgroup: CgroupLimits,
    /// The tree's generation `cgroup` and `capacity` belong to.
    generation: Option<u64>,
    /// `cpu.stat` (nr_periods, nr_throttled) at the previous sample.
    prev_throttling: Option<(u64, u64)>,
    /// `/proc/loadavg` and `/proc/uptime`, kept open.
    loadavg: procfs::ProcFile,
    uptime: procfs::ProcFile,
}

/// Throttled share of the quota periods between two `cpu.stat` readings, in %; None
/// when no period elapsed (no quota, or the counters were reset).
pub(crate) fn throttled_percent(prev: (u64, u64), now: (u64, u64)) -> Option<f64> {
    let periods = now.0.checked_sub(prev.0).filter(|&p| p > 0)?;
    let throttled = now.1.checked_sub(prev.1)?;
    Some((throttled as f64 / periods as f64 * 100.0).min(100.0))
}

impl CpuCollector {
    pub(crate) fn new(tree: SharedTree) -> Self {
        Self {
            tree,
            capacity: 1.0,
            ticks_per_sec: procfs::clock_ticks_per_second(),
            prev_proc: HashMap::new(),
            next_proc: HashMap::new(),
            prev_at: None,
            prev_cores: Vec::new(),
            cores: Vec::new(),
            buf: String::with_capacity(4096),
            proc_stat: procfs::ProcFile::new("/proc/stat"),
            keys: Vec::new(),
            cgroup: CgroupLimits::default(),
            generation: None,
            prev_throttling: None,
            loadavg: procfs::ProcFile::single("/proc/loadavg"),
            uptime: procfs::ProcFile::single("/proc/uptime"),
        }
    }

    /// Follow the tree's root: on a change, its cgroup's limits and capacity, and no
    /// previous reading of the old root's processes or cgroup.
    fn follow_root(&mut self) -> Result<(), SamplerError> {
        let tree = self.tree.lock().map_err(|_| SamplerError::Poisoned)?;
        if self.generation == Some(tree.generation) {
            return Ok(());
        }
        self.generation = Some(tree.generation);
        self.cgroup = tree.cgroup.clone();
        drop(tree);
        self.capacity = cpu_capacity(&self.cgroup);
        self.prev_proc.clear();
        self.prev_at = None;
        self.prev_throttling = None;
        Ok(())
    }

    fn sample_host(&mut self, out: &mut Vec<(String, f64)>) {
        if self.loadavg.read(&mut self.buf).is_ok() {
            if let Some([a, b, c]) = parse_loadavg(&self.buf) {
                out.push(("load.1m".to_string(), a));
                out.push(("load.5m".to_string(), b));
                out.push(("load.15m".to_string(), c));
            }
        }
        if self.uptime.read(&mut self.buf).is_ok() {
            if let Some(up) = parse_uptime(&self.buf) {
                out.push(("uptime".to_string(), up));
            }
        }
    }

    fn sample_throttling(&mut self, out: &mut Vec<(String, f64)>) {
        let now = self.cgroup.cpu_throttling(&mut self.buf);
        if let (Some(prev), Some(now)) = (self.prev_throttling, now) {
            if let Some(p) = throttled_percent(prev, now) {
                out.push(("proc.cpu.throttledPercent".to_string(), p));
            }
        }
        self.prev_throttling = now;
    }

    fn sample_cores(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        self.proc_stat.read(&mut self.buf)?;
        parse_proc_stat(&self.buf, &mut self.cores);
        while self.keys.len() < self.cores.len() {
            self.keys
                .push(format!("cpu.{}.cpu_percent", self.keys.len()));
        }
        if self.prev_cores.len() == self.cores.len() {
            for (i, (now, prev)) in self.cores.iter().zip(&self.prev_cores).enumerate() {
                let total = now.total.saturating_sub(prev.total);
                if total > 0 {
                    let busy = now.busy.saturating_sub(prev.busy);
                    out.push((self.keys[i].clone(), busy as f64 / total as f64 * 100.0));
                }
            }
        }
        std::mem::swap(&mut self.prev_cores, &mut self.cores);
        Ok(())
    }
}

impl Collector for CpuCollector {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        self.follow_root()?;
        let cores = self.sample_cores(out);
        self.sample_host(out);
        self.sample_throttling(out);
        let tree = self.tree.lock().map_err(|_| SamplerError::Poisoned)?;
        if let Some(e) = &tree.error {
            return Err(SamplerError::Process(e.clone()));
        }
        if tree.procs.is_empty() {
            // No process monitored (or none read yet since the root changed).
            return cores;
        }
        let threads: u64 = tree.procs.iter().map(|p| p.threads).sum();
        out.push(("proc.cpu.threads".to_string(), threads as f64));

        // Process CPU % needs two readings, so the first sample has no `cpu` key.
        self.next_proc.clear();
        let mut delta_ticks = 0u64;
        for p in &tree.procs {
            let key = (p.pid, p.start_ticks);
            if let Some(prev) = self.prev_proc.get(&key) {
                delta_ticks += p.cpu_ticks.saturating_sub(*prev);
            }
            self.next_proc.insert(key, p.cpu_ticks);
        }
        if let Some(prev_at) = self.prev_at {
            let secs = tree.read_at.duration_since(prev_at).as_secs_f64();
            if secs > 0.0 && self.capacity > 0.0 {
                let cpu_secs = delta_ticks as f64 / self.ticks_per_sec;
                out.push(("cpu".to_string(), cpu_secs / secs / self.capacity * 100.0));
            }
        }
        self.prev_at = Some(tree.read_at);
        std::mem::swap(&mut self.prev_proc, &mut self.next_proc);
        cores
    }
}

#[cfg(test)]
mod tests {
    use super::super::procfs::ProcessTree;
    use super::*;

    #[test]
    fn throttled_share_of_periods() {
        assert_eq!(throttled_percent((100, 10), (200, 35)), Some(25.0));
        // no quota: periods do not advance
        assert_eq!(throttled_percent((0, 0), (0, 0)), None);
        // counters went backwards (cgroup recreated)
        assert_eq!(throttled_percent((100, 10), (50, 5)), None);
    }

    #[test]
    fn throttling_is_read_from_the_leaf_cgroup() {
        let dir = tempfile::tempdir().expect("tempdir");
        let stat = dir.path().join("cpu.stat");
        let write = |periods: u64, throttled: u64| {
            std::fs::write(
                &stat,
                format!("usage_usec 5000\nnr_periods {periods}\nnr_throttled {throttled}\nthrottled_usec 9\n"),
            )
            .expect("write");
        };
        let cgroup = CgroupLimits {
            dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let tree = ProcessTree {
            cgroup,
            ..ProcessTree::new(1)
        };
        let mut c = CpuCollector::new(SharedTree::new(tree.into()));
        c.follow_root().expect("tree");
        write(10, 0);
        let mut out = Vec::new();
        c.sample_throttling(&mut out);
        assert!(out.is_empty(), "first reading has no delta");
        write(30, 5);
        c.sample_throttling(&mut out);
        assert_eq!(out, [("proc.cpu.throttledPercent".to_string(), 25.0)]);
    }

    #[test]
    fn load_averages_and_uptime() {
        // Recorded from Linux 6.8 (`cat /proc/loadavg /proc/uptime`).
        assert_eq!(
            parse_loadavg("0.52 0.58 0.59 1/467 12345\n"),
            Some([0.52, 0.58, 0.59])
        );
        assert_eq!(
            parse_loadavg("12.00 7.25 3.10 9/1203 998877"),
            Some([12.0, 7.25, 3.1])
        );
        assert_eq!(parse_loadavg("0.52 0.58\n"), None);
        assert_eq!(parse_loadavg("0.52 x 0.59 1/2 3\n"), None);
        assert_eq!(parse_loadavg("nan 1 1 1/2 3\n"), None);
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_uptime("350735.47 234388.90\n"), Some(350_735.47));
        assert_eq!(parse_uptime("-1 2\n"), None);
        assert_eq!(parse_uptime("up\n"), None);
    }

    #[test]
    fn host_keys_are_there_without_a_monitored_process() {
        let tree = SharedTree::new(ProcessTree::detect(None).into());
        let mut c = CpuCollector::new(tree.clone());
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        out.clear();
        // Per-core percentages need the jiffies to move (10 ms each).
        std::thread::sleep(std::time::Duration::from_millis(60));
        c.sample(&mut out).expect("sample");
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        for k in [
            "load.1m",
            "load.5m",
            "load.15m",
            "uptime",
            "cpu.0.cpu_percent",
        ] {
            assert!(keys.contains(&k), "{k} missing: {keys:?}");
        }
        assert!(
            !keys.iter().any(|k| *k == "cpu" || k.starts_with("proc.")),
            "{keys:?}"
        );
    }

    #[test]
    fn proc_stat_cores() {
        let text = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu1 5 0 5 30 10 0 0 0 0 0\nintr 1\n";
        let mut v = Vec::new();
        parse_proc_stat(text, &mut v);
        assert_eq!(
            v,
            vec![
                CoreTimes {
                    busy: 10,
                    total: 50
                },
                CoreTimes {
                    busy: 10,
                    total: 50
                }
            ]
        );
    }
}
