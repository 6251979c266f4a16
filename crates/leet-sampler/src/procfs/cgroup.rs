//! The leaf cgroup v2 of a process: its limits (read once per root) and counters.

use std::path::{Path, PathBuf};

use super::read_into;

/// Limits of the leaf cgroup v2 of a process, read once at start (as the reference does).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CgroupLimits {
    /// Directory of the leaf cgroup, when cgroup v2 is mounted.
    pub dir: Option<PathBuf>,
    /// `memory.max` in bytes; `None` for `max` or when absent.
    pub memory_max: Option<u64>,
    /// `cpu.max` quota / period, in CPUs; `None` for `max` or when absent.
    pub cpu_max: Option<f64>,
}

impl CgroupLimits {
    pub(crate) fn detect(pid: u32) -> Self {
        let Some(dir) = cgroup2_dir(pid) else {
            return Self::default();
        };
        let memory_max = std::fs::read_to_string(dir.join("memory.max"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let cpu_max = std::fs::read_to_string(dir.join("cpu.max"))
            .ok()
            .and_then(|s| parse_cpu_max(&s));
        Self {
            dir: Some(dir),
            memory_max,
            cpu_max,
        }
    }

    /// `memory.current` of the leaf cgroup, when a memory limit exists.
    pub(crate) fn memory_current(&self, buf: &mut String) -> Option<u64> {
        self.memory_max?;
        let dir = self.dir.as_ref()?;
        read_into(&dir.join("memory.current"), buf).ok()?;
        buf.trim().parse().ok()
    }

    /// `nr_periods` and `nr_throttled` from the leaf cgroup's `cpu.stat` (present when
    /// the cpu controller is enabled for it).
    pub(crate) fn cpu_throttling(&self, buf: &mut String) -> Option<(u64, u64)> {
        read_into(&self.dir.as_ref()?.join("cpu.stat"), buf).ok()?;
        Some((
            flat_keyed(buf, "nr_periods")?,
            flat_keyed(buf, "nr_throttled")?,
        ))
    }

    /// `oom_kill` from the leaf cgroup's `memory.events`: processes the kernel's OOM
    /// killer ended in this cgroup.
    pub(crate) fn oom_kills(&self, buf: &mut String) -> Option<u64> {
        read_into(&self.dir.as_ref()?.join("memory.events"), buf).ok()?;
        flat_keyed(buf, "oom_kill")
    }
}

/// The value of `key` in a cgroup "flat keyed" file (`key value` lines).
pub(crate) fn flat_keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// `"quota period"` → quota/period CPUs; `"max ..."` → no limit.
pub(crate) fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut it = text.split_ascii_whitespace();
    let quota: f64 = it.next()?.parse().ok()?;
    let period: f64 = it.next().unwrap_or("100000").parse().ok()?;
    (period > 0.0 && quota > 0.0).then(|| quota / period)
}

/// The directory of `pid`'s leaf cgroup in the cgroup2 mount, found from
/// `/proc/<pid>/cgroup` (`0::<path>`) and `/proc/<pid>/mountinfo` (fstype `cgroup2`).
fn cgroup2_dir(pid: u32) -> Option<PathBuf> {
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let rel = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).ok()?;
    let (mount_root, mount_point) = mountinfo.lines().find_map(|line| {
        let (pre, post) = line.split_once(" - ")?;
        if post.split_ascii_whitespace().next()? != "cgroup2" {
            return None;
        }
        let f: Vec<&str> = pre.split_ascii_whitespace().collect();
        Some((f.get(3)?.to_string(), f.get(4)?.to_string()))
    })?;
    let rel = rel.strip_prefix(mount_root.as_str()).unwrap_or(rel);
    let dir = Path::new(&mount_point).join(rel.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}
