//! Small readers for Linux `/proc` and cgroup v2 files, shared by the host collectors.
//!
//! Everything here reads text files with one reusable buffer and parses by hand, so a
//! sample costs a handful of `read(2)` calls and no allocation after warm-up.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::SamplerError;

/// Read a whole (small) file into `buf`, replacing its content.
pub(crate) fn read_into(path: &Path, buf: &mut String) -> Result<(), SamplerError> {
    buf.clear();
    File::open(path)
        .and_then(|mut f| f.read_to_string(buf))
        .map(|_| ())
        .map_err(|source| SamplerError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub pid: u32,
    pub ppid: u32,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    pub threads: u64,
    /// Start time after boot, in clock ticks; with `pid` it names a process uniquely.
    pub start_ticks: u64,
    /// Resident set size in pages.
    pub rss_pages: u64,
}

/// Parse one `/proc/<pid>/stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub(crate) fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    // After ")": state(3) ppid(4) ... utime(14) stime(15) ... num_threads(20) ... starttime(22) vsize(23) rss(24)
    let mut it = rest.split_ascii_whitespace();
    let field = |it: &mut std::str::SplitAsciiWhitespace<'_>, skip: usize| -> Option<u64> {
        it.nth(skip)?.parse().ok()
    };
    let ppid = field(&mut it, 1)?; // field 4
    let utime = field(&mut it, 9)?; // field 14
    let stime = field(&mut it, 0)?; // 15
    let threads = field(&mut it, 4)?; // 20
    let start_ticks = field(&mut it, 1)?; // 22
    let rss_pages = field(&mut it, 1)?; // 24
    Some(ProcStat {
        pid,
        ppid: u32::try_from(ppid).ok()?,
        cpu_ticks: utime + stime,
        threads,
        start_ticks,
        rss_pages,
    })
}

/// The monitored process and its descendants, re-read once per sample by the
/// [`super::Sampler`] and shared with the collectors that need it (cpu, memory, nvidia).
#[derive(Debug)]
pub(crate) struct ProcessTree {
    pub root: u32,
    pub procs: Vec<ProcStat>,
    pub read_at: Instant,
    /// Set when the root process could not be read (exited, or no permission).
    pub error: Option<String>,
}

pub(crate) type SharedTree = Arc<Mutex<ProcessTree>>;

impl ProcessTree {
    pub fn new(root: u32) -> Self {
        Self {
            root,
            procs: Vec::new(),
            read_at: Instant::now(),
            error: Some("not sampled yet".to_string()),
        }
    }

    pub fn pids(&self) -> impl Iterator<Item = u32> + '_ {
        self.procs.iter().map(|p| p.pid)
    }
}

/// Walks `/proc` to find a process and all its descendants.
///
/// With `CONFIG_PROC_CHILDREN` the walk follows `/proc/<p>/task/<t>/children` (as the
/// reference does) and reads `stat` only for tree members; otherwise it reads every
/// `/proc/<n>/stat` once and links children by ppid.
pub(crate) struct TreeWalker {
    has_children_files: bool,
    buf: String,
    stack: Vec<u32>,
    all: Vec<ProcStat>,
    kids: HashMap<u32, Vec<usize>>,
    listed: Vec<u32>,
    /// pid → ppid of processes known not to be in the tree (not re-read each tick).
    outsiders: HashMap<u32, u32>,
    ticks: u64,
}

impl TreeWalker {
    pub fn new() -> Self {
        let tid = std::process::id();
        let has_children_files = Path::new(&format!("/proc/{tid}/task/{tid}/children")).exists();
        Self {
            has_children_files,
            buf: String::with_capacity(1024),
            stack: Vec::new(),
            all: Vec::new(),
            kids: HashMap::new(),
            listed: Vec::new(),
            outsiders: HashMap::new(),
            ticks: 0,
        }
    }

    fn read_stat(&mut self, pid: u32) -> Option<ProcStat> {
        read_into(Path::new(&format!("/proc/{pid}/stat")), &mut self.buf).ok()?;
        parse_stat(pid, &self.buf)
    }

    /// Re-read `tree` in place.
    pub fn refresh(&mut self, tree: &mut ProcessTree) {
        tree.procs.clear();
        tree.read_at = Instant::now();
        let Some(root) = self.read_stat(tree.root) else {
            tree.error = Some(format!("process {} not found", tree.root));
            return;
        };
        tree.error = None;
        if self.has_children_files {
            self.walk_children_files(root, &mut tree.procs);
        } else {
            self.walk_by_ppid(root, &mut tree.procs);
        }
    }

    fn walk_children_files(&mut self, root: ProcStat, out: &mut Vec<ProcStat>) {
        out.push(root);
        self.stack.clear();
        self.stack.push(root.pid);
        let mut children = Vec::new();
        while let Some(pid) = self.stack.pop() {
            children.clear();
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                let path = task.path().join("children");
                if read_into(&path, &mut self.buf).is_ok() {
                    children.extend(
                        self.buf
                            .split_ascii_whitespace()
                            .filter_map(|s| s.parse::<u32>().ok()),
                    );
                }
            }
            for &child in &children {
                // The visited check guards against pid reuse races creating cycles.
                if out.iter().any(|p| p.pid == child) {
                    continue;
                }
                if let Some(stat) = self.read_stat(child) {
                    out.push(stat);
                    self.stack.push(child);
                }
            }
        }
    }

    fn walk_by_ppid(&mut self, root: ProcStat, out: &mut Vec<ProcStat>) {
        // Full rescans catch the rare reparenting of a known outsider into the tree
        // (a subreaper as root) and pid reuse between ticks.
        if self.ticks % FULL_RESCAN_EVERY == 0 {
            self.outsiders.clear();
        }
        self.ticks += 1;
        self.all.clear();
        self.listed.clear();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                if let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<u32>().ok())
                {
                    self.listed.push(pid);
                }
            }
        }
        self.kids.values_mut().for_each(Vec::clear);
        for i in 0..self.listed.len() {
            let pid = self.listed[i];
            if pid == root.pid {
                continue;
            }
            // A known outsider is never a member: its parent was an outsider when it was
            // read, and parents do not change between rescans except by reparenting.
            if self.outsiders.contains_key(&pid) {
                continue;
            }
            if let Some(stat) = self.read_stat(pid) {
                self.kids.entry(stat.ppid).or_default().push(self.all.len());
                self.all.push(stat);
            }
        }
        out.push(root);
        let mut i = 0;
        while i < out.len() {
            let pid = out[i].pid;
            if let Some(kids) = self.kids.get(&pid) {
                for &k in kids {
                    let stat = self.all[k];
                    if !out.iter().any(|p| p.pid == stat.pid) {
                        out.push(stat);
                    }
                }
            }
            i += 1;
        }
        // Remember this tick's outsiders; forget pids that are gone.
        for stat in &self.all {
            if !out.iter().any(|p| p.pid == stat.pid) {
                self.outsiders.insert(stat.pid, stat.ppid);
            }
        }
        if self.outsiders.len() > self.listed.len() {
            let listed: std::collections::HashSet<u32> = self.listed.iter().copied().collect();
            self.outsiders.retain(|pid, _| listed.contains(pid));
        }
    }
}

/// Ticks between full `/proc` rescans in the ppid walk.
const FULL_RESCAN_EVERY: u64 = 10;

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
    pub fn detect(pid: u32) -> Self {
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
    pub fn memory_current(&self, buf: &mut String) -> Option<u64> {
        self.memory_max?;
        let dir = self.dir.as_ref()?;
        read_into(&dir.join("memory.current"), buf).ok()?;
        buf.trim().parse().ok()
    }

    /// `nr_periods` and `nr_throttled` from the leaf cgroup's `cpu.stat` (present when
    /// the cpu controller is enabled for it).
    pub fn cpu_throttling(&self, buf: &mut String) -> Option<(u64, u64)> {
        read_into(&self.dir.as_ref()?.join("cpu.stat"), buf).ok()?;
        Some((
            flat_keyed(buf, "nr_periods")?,
            flat_keyed(buf, "nr_throttled")?,
        ))
    }

    /// `oom_kill` from the leaf cgroup's `memory.events`: processes the kernel's OOM
    /// killer ended in this cgroup.
    pub fn oom_kills(&self, buf: &mut String) -> Option<u64> {
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

/// `/proc/meminfo` values (kB) the memory collector needs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemInfo {
    pub total_kb: u64,
    pub available_kb: u64,
}

pub(crate) fn parse_meminfo(text: &str) -> MemInfo {
    let mut m = MemInfo::default();
    let mut free = 0;
    let mut buffers = 0;
    let mut cached = 0;
    let mut have_available = false;
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
            _ => {}
        }
    }
    if !have_available {
        // Kernels before 3.14: the same estimate gopsutil falls back to.
        m.available_kb = free + buffers + cached;
    }
    m
}

pub(crate) fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_comm() {
        let line = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 98765 123456789 2048 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let s = parse_stat(1234, line).expect("parses");
        assert_eq!(s.ppid, 1);
        assert_eq!(s.cpu_ticks, 300);
        assert_eq!(s.threads, 7);
        assert_eq!(s.start_ticks, 98765);
        assert_eq!(s.rss_pages, 2048);
    }

    #[test]
    fn cpu_max_values() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("150000 100000\n"), Some(1.5));
        assert_eq!(parse_cpu_max("50000\n"), Some(0.5));
    }

    #[test]
    fn meminfo_available_and_fallback() {
        let m =
            parse_meminfo("MemTotal:       1000 kB\nMemFree:   100 kB\nMemAvailable:   600 kB\n");
        assert_eq!(
            m,
            MemInfo {
                total_kb: 1000,
                available_kb: 600
            }
        );
        let m =
            parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 200 kB\n");
        assert_eq!(m.available_kb, 350);
    }

    #[test]
    fn ppid_walk_finds_new_children_between_rescans() {
        let mut walker = TreeWalker::new();
        walker.has_children_files = false;
        let me = std::process::id();
        let mut tree = ProcessTree::new(me);
        walker.refresh(&mut tree); // full scan: everything else becomes an outsider
        walker.refresh(&mut tree); // cached tick
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        walker.refresh(&mut tree); // not a rescan tick: the new child must still be found
        assert!(tree.pids().any(|p| p == child.id()), "{:?}", tree.procs);
        child.kill().expect("kill");
        child.wait().expect("wait");
        walker.refresh(&mut tree);
        assert!(!tree.pids().any(|p| p == child.id()));
        assert!(!walker.outsiders.is_empty());
    }

    #[test]
    fn own_process_tree_contains_self() {
        let mut tree = ProcessTree::new(std::process::id());
        TreeWalker::new().refresh(&mut tree);
        assert!(tree.error.is_none());
        assert_eq!(tree.procs[0].pid, std::process::id());
        assert!(tree.procs[0].threads >= 1);
    }
}
