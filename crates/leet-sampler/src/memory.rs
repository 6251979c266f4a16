//! `proc.memory.rssMB`, `proc.memory.percent`, `memory_percent`, `proc.memory.availableMB`,
//! with the leaf cgroup v2 `memory.max` as the denominator when one is set, and
//! `proc.memory.oomKills` (the leaf cgroup's `memory.events` `oom_kill` count), and the
//! host's swap: `swap.total`, `swap.used` (bytes) and `swap.used_percent`.

use super::procfs::{self, CgroupLimits, SharedTree};
use super::{Collector, SamplerError};

const MIB: f64 = 1024.0 * 1024.0;

/// `/proc/meminfo` values (kB) the memory collector needs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemInfo {
    pub total_kb: u64,
    pub available_kb: u64,
    /// `SwapTotal` and `SwapFree`; `None` when the file has no swap lines.
    pub swap: Option<(u64, u64)>,
}

pub(crate) fn parse_meminfo(text: &str) -> MemInfo {
    let mut m = MemInfo::default();
    let mut free = 0;
    let mut buffers = 0;
    let mut cached = 0;
    let mut have_available = false;
    let (mut swap_total, mut swap_free) = (None, None);
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v: u64 = v
            .split_ascii_whitespace()
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        match k {
            "MemTotal" => m.total_kb = v,
            "MemAvailable" => {
                m.available_kb = v;
                have_available = true;
            }
            "MemFree" => free = v,
            "Buffers" => buffers = v,
            "Cached" => cached = v,
            "SwapTotal" => swap_total = Some(v),
            "SwapFree" => swap_free = Some(v),
            _ => {}
        }
    }
    if !have_available {
        // Kernels before 3.14: the same estimate gopsutil falls back to.
        m.available_kb = free + buffers + cached;
    }
    m.swap = swap_total.zip(swap_free);
    m
}

/// `swap.total`, `swap.used` (bytes) and `swap.used_percent` (left out when the host
/// has no swap: a percentage of nothing).
pub(crate) fn swap_values(m: MemInfo, out: &mut Vec<(String, f64)>) {
    let Some((total_kb, free_kb)) = m.swap else {
        return;
    };
    let used_kb = total_kb.saturating_sub(free_kb);
    out.push(("swap.total".to_string(), total_kb as f64 * 1024.0));
    out.push(("swap.used".to_string(), used_kb as f64 * 1024.0));
    if total_kb > 0 {
        out.push((
            "swap.used_percent".to_string(),
            used_kb as f64 / total_kb as f64 * 100.0,
        ));
    }
}

/// The host-wide values, from cgroup v2 when it has a limit, otherwise `/proc/meminfo`.
/// Returns (`memory_percent`, `proc.memory.availableMB`, denominator bytes for
/// `proc.memory.percent`).
pub(crate) fn system_memory(meminfo: MemInfo, cgroup: Option<(u64, u64)>) -> (f64, f64, f64) {
    if let Some((max, current)) = cgroup.filter(|(max, _)| *max > 0) {
        let percent = current as f64 / max as f64 * 100.0;
        let available = max.saturating_sub(current) as f64 / MIB;
        return (percent, available, max as f64);
    }
    let total = meminfo.total_kb as f64 * 1024.0;
    let available = meminfo.available_kb as f64 * 1024.0;
    let percent = if total > 0.0 {
        (total - available) / total * 100.0
    } else {
        0.0
    };
    (percent, available / MIB, total)
}

pub(crate) struct MemoryCollector {
    tree: SharedTree,
    /// The tree root's cgroup limits, copied when the root changes.
    cgroup: CgroupLimits,
    generation: Option<u64>,
    page_size: u64,
    buf: String,
    /// `/proc/meminfo`, kept open.
    meminfo: procfs::ProcFile,
}

impl MemoryCollector {
    pub(crate) fn new(tree: SharedTree) -> Self {
        Self {
            tree,
            cgroup: CgroupLimits::default(),
            generation: None,
            page_size: procfs::page_size(),
            buf: String::with_capacity(2048),
            meminfo: procfs::ProcFile::new("/proc/meminfo"),
        }
    }
}

impl Collector for MemoryCollector {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        {
            let tree = self.tree.lock().map_err(|_| SamplerError::Poisoned)?;
            if self.generation != Some(tree.generation) {
                self.generation = Some(tree.generation);
                self.cgroup = tree.cgroup.clone();
            }
        }
        let cgroup = self
            .cgroup
            .memory_max
            .zip(self.cgroup.memory_current(&mut self.buf));
        self.meminfo.read(&mut self.buf)?;
        let meminfo = parse_meminfo(&self.buf);
        swap_values(meminfo, out);
        let (percent, available_mb, denominator) = system_memory(meminfo, cgroup);
        out.push(("memory_percent".to_string(), percent));
        out.push(("proc.memory.availableMB".to_string(), available_mb));
        if let Some(n) = self.cgroup.oom_kills(&mut self.buf) {
            out.push(("proc.memory.oomKills".to_string(), n as f64));
        }

        let tree = self.tree.lock().map_err(|_| SamplerError::Poisoned)?;
        if let Some(e) = &tree.error {
            return Err(SamplerError::Process(e.clone()));
        }
        if tree.procs.is_empty() {
            // No process monitored (or none read yet since the root changed).
            return Ok(());
        }
        let rss: u64 = tree
            .procs
            .iter()
            .map(|p| p.rss_pages * self.page_size)
            .sum();
        out.push(("proc.memory.rssMB".to_string(), rss as f64 / MIB));
        if denominator > 0.0 {
            out.push((
                "proc.memory.percent".to_string(),
                rss as f64 / denominator * 100.0,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::procfs::ProcessTree;
    use super::*;

    #[test]
    fn meminfo_available_and_fallback() {
        let m =
            parse_meminfo("MemTotal:       1000 kB\nMemFree:   100 kB\nMemAvailable:   600 kB\n");
        assert_eq!(
            m,
            MemInfo {
                total_kb: 1000,
                available_kb: 600,
                swap: None,
            }
        );
        let m =
            parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 200 kB\n");
        assert_eq!(m.available_kb, 350);
    }

    /// A real `/proc/meminfo` (Linux 6.8, a 2-core VM with a 4 GiB swap file, half used).
    const MEMINFO: &str = "MemTotal:        8131212 kB
MemFree:          312456 kB
MemAvailable:    4021876 kB
Buffers:          201344 kB
Cached:          3410232 kB
SwapCached:        10240 kB
Active:          4567890 kB
Inactive:        2345678 kB
SwapTotal:       4194300 kB
SwapFree:        2097150 kB
Zswap:                 0 kB
Dirty:               312 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
";

    #[test]
    fn swap_from_meminfo() {
        let m = parse_meminfo(MEMINFO);
        assert_eq!(m.swap, Some((4_194_300, 2_097_150)));
        let mut out = Vec::new();
        swap_values(m, &mut out);
        assert_eq!(
            out,
            [
                ("swap.total".to_string(), 4_194_300.0 * 1024.0),
                ("swap.used".to_string(), 2_097_150.0 * 1024.0),
                ("swap.used_percent".to_string(), 50.0),
            ]
        );
        // No swap configured: totals of zero, no percentage of nothing.
        let none = parse_meminfo("MemTotal: 1000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n");
        out.clear();
        swap_values(none, &mut out);
        assert_eq!(
            out,
            [
                ("swap.total".to_string(), 0.0),
                ("swap.used".to_string(), 0.0)
            ]
        );
        // No swap lines at all (a stripped-down /proc): no swap keys.
        out.clear();
        swap_values(parse_meminfo("MemTotal: 1000 kB\n"), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn host_values_without_cgroup() {
        let m = MemInfo {
            total_kb: 1024 * 1024,
            available_kb: 768 * 1024,
            swap: None,
        };
        let (p, avail, denom) = system_memory(m, None);
        assert!((p - 25.0).abs() < 1e-9);
        assert!((avail - 768.0).abs() < 1e-9);
        assert!((denom - 1024.0 * MIB).abs() < 1e-3);
    }

    #[test]
    fn cgroup_limit_wins() {
        let m = MemInfo {
            total_kb: 1 << 30,
            available_kb: 1 << 29,
            swap: None,
        };
        let (p, avail, denom) = system_memory(m, Some((512 << 20, 128 << 20)));
        assert!((p - 25.0).abs() < 1e-9);
        assert!((avail - 384.0).abs() < 1e-9);
        assert!((denom - 512.0 * MIB).abs() < 1e-3);
        // current above max clamps available at 0
        let (_, avail, _) = system_memory(m, Some((100, 200)));
        assert_eq!(avail, 0.0);
    }

    #[test]
    fn oom_kills_from_memory_events() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("memory.events"),
            "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n",
        )
        .expect("write");
        let cgroup = CgroupLimits {
            dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let tree = ProcessTree {
            error: None,
            cgroup,
            ..ProcessTree::new(1)
        };
        let mut c = MemoryCollector::new(SharedTree::new(tree.into()));
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        let oom = out.iter().find(|(k, _)| k == "proc.memory.oomKills");
        assert_eq!(oom.map(|(_, v)| *v), Some(2.0));
        // no limit set: the host values are used
        assert!(out.iter().any(|(k, _)| k == "memory_percent"));
    }
}
