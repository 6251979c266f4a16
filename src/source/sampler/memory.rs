//! `proc.memory.rssMB`, `proc.memory.percent`, `memory_percent`, `proc.memory.availableMB`,
//! with the leaf cgroup v2 `memory.max` as the denominator when one is set, and
//! `proc.memory.oomKills` (the leaf cgroup's `memory.events` `oom_kill` count).

use super::procfs::{self, CgroupLimits, MemInfo, SharedTree};
use super::{Collector, SamplerError};

const MIB: f64 = 1024.0 * 1024.0;

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
    cgroup: CgroupLimits,
    page_size: u64,
    buf: String,
    /// `/proc/meminfo`, kept open.
    meminfo: procfs::ProcFile,
}

impl MemoryCollector {
    pub fn new(tree: SharedTree, cgroup: CgroupLimits) -> Self {
        Self {
            tree,
            cgroup,
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
        let cgroup = self
            .cgroup
            .memory_max
            .zip(self.cgroup.memory_current(&mut self.buf));
        self.meminfo.read(&mut self.buf)?;
        let meminfo = procfs::parse_meminfo(&self.buf);
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
    fn host_values_without_cgroup() {
        let m = MemInfo {
            total_kb: 1024 * 1024,
            available_kb: 768 * 1024,
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
            ..ProcessTree::new(1)
        };
        let mut c = MemoryCollector::new(SharedTree::new(tree.into()), cgroup);
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        let oom = out.iter().find(|(k, _)| k == "proc.memory.oomKills");
        assert_eq!(oom.map(|(_, v)| *v), Some(2.0));
        // no limit set: the host values are used
        assert!(out.iter().any(|(k, _)| k == "memory_percent"));
    }
}
