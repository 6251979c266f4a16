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

mod cgroup;
pub(crate) use cgroup::CgroupLimits;

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

/// Filesystems whose files are never renamed over (a stale handle fails to read
/// instead): proc, sysfs, cgroup v2.
const PSEUDO_FS: [i64; 3] = [0x9fa0, 0x6265_6572, 0x6367_7270];

/// A file read once per sample (`/proc/stat`, `/proc/<pid>/stat`, a cgroup or sysfs
/// attribute): opened once and read again from offset 0 with `pread`, which makes the
/// kernel render a proc or sysfs file afresh, so a reading costs one or two system calls
/// instead of open, statx, read, read and close. The handle is opened again when a read
/// fails (the process behind a `/proc/<pid>` file exited: `ESRCH`) and, on other
/// filesystems (a test's fake tree), when the file was replaced or removed (the open
/// file has no links left).
#[derive(Debug)]
pub(crate) struct ProcFile {
    path: PathBuf,
    file: Option<File>,
    /// Check the link count after each read (not on proc, sysfs or cgroup2).
    check_links: bool,
    bytes: Vec<u8>,
    /// Times the file was opened (for tests).
    opens: u64,
    /// The kernel renders the file in one piece (see [`ProcFile::single`]).
    single: bool,
}

impl ProcFile {
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            file: None,
            check_links: true,
            bytes: Vec::new(),
            opens: 0,
            single: false,
        }
    }

    /// A proc file the kernel renders in one piece, whole, into any buffer large
    /// enough (`/proc/<pid>/stat`, `/proc/uptime`: one `show` of a `single_open` file):
    /// there a read shorter than the buffer is the end of the file, and the second
    /// `pread` that would return 0 is saved. Not for files of several records
    /// (`/proc/net/dev`), where the kernel may stop a read short at a page boundary.
    pub(crate) fn single(path: impl Into<PathBuf>) -> Self {
        Self {
            single: true,
            ..Self::new(path)
        }
    }

    #[cfg(test)]
    pub(crate) fn opens(&self) -> u64 {
        self.opens
    }

    /// The whole file into `buf` (replacing its content), as [`read_into`] does.
    pub(crate) fn read(&mut self, buf: &mut String) -> Result<(), SamplerError> {
        buf.clear();
        if self.file.is_some() && self.read_open().unwrap_or(false) {
            return self.to_text(buf);
        }
        self.file = None;
        let f = File::open(&self.path).map_err(|source| SamplerError::Io {
            path: self.path.clone(),
            source,
        })?;
        self.opens += 1;
        self.check_links = !is_pseudo_fs(&f);
        self.file = Some(f);
        match self.read_open() {
            Ok(_) => self.to_text(buf),
            Err(source) => {
                self.file = None;
                Err(SamplerError::Io {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }

    /// Read the open file from offset 0 into `bytes`. `Ok(false)`: read, but the file
    /// has been replaced or removed since it was opened.
    fn read_open(&mut self) -> std::io::Result<bool> {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let Some(f) = &self.file else {
            return Ok(false);
        };
        self.bytes.clear();
        let mut chunk = [0u8; 4096];
        loop {
            let offset = self.bytes.len() as u64;
            match f.read_at(&mut chunk, offset) {
                Ok(0) => break,
                Ok(n) => {
                    self.bytes.extend_from_slice(&chunk[..n]);
                    if n < chunk.len() && self.single && !self.check_links {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(!self.check_links || f.metadata()?.nlink() > 0)
    }

    fn to_text(&self, buf: &mut String) -> Result<(), SamplerError> {
        let text = std::str::from_utf8(&self.bytes).map_err(|e| SamplerError::Io {
            path: self.path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        buf.push_str(text);
        Ok(())
    }
}

fn is_pseudo_fs(f: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: statfs is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a pointer to a statfs we own.
    let rc = unsafe { libc::fstatfs(f.as_raw_fd(), &raw mut st) };
    #[allow(
        clippy::useless_conversion,
        clippy::unnecessary_cast,
        reason = "f_type is i64 on some targets, a 32-bit integer on others"
    )]
    let magic = st.f_type as i64;
    rc == 0 && PSEUDO_FS.contains(&magic)
}

/// [`ProcFile`]s of the monitored process's files (its `stat`, its threads' `children`)
/// and of descendants that have been in the tree for [`KEEP_AFTER`] refreshes, at most
/// [`MAX_CACHED`] of them, forgotten when not read in a refresh; other files are read
/// the one-shot way: tools started once per sample come and go, and their files would
/// only add to the open descriptors.
#[derive(Debug, Default)]
struct FileCache<K> {
    files: HashMap<K, (ProcFile, u64)>,
    round: u64,
}

/// Most per-process files kept open by one walker.
const MAX_CACHED: usize = 256;
/// Refreshes a descendant must have been in the tree for before its files are kept open
/// (a long-lived child such as `neuron-monitor`, not a tool run per sample).
const KEEP_AFTER: u32 = 30;

impl<K: std::hash::Hash + Eq + Copy> FileCache<K> {
    /// Read through the kept file of `key`, or (`keep` false) the one-shot way.
    fn read(
        &mut self,
        key: K,
        keep: bool,
        path: impl FnOnce() -> PathBuf,
        buf: &mut String,
    ) -> bool {
        if !keep {
            return read_into(&path(), buf).is_ok();
        }
        let round = self.round;
        if let Some((f, seen)) = self.files.get_mut(&key) {
            *seen = round;
            return f.read(buf).is_ok();
        }
        let path = path();
        if self.files.len() >= MAX_CACHED {
            return read_into(&path, buf).is_ok();
        }
        let mut f = ProcFile::new(path);
        let ok = f.read(buf).is_ok();
        if ok {
            self.files.insert(key, (f, round));
        }
        ok
    }

    /// Forget the files not read since the last call.
    fn end_round(&mut self) {
        let round = self.round;
        self.files.retain(|_, (_, seen)| *seen == round);
        self.round += 1;
    }
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
    /// Exited and not yet reaped by its parent (state `Z`, or `X` while it goes).
    pub zombie: bool,
}

/// Parse one `/proc/<pid>/stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub(crate) fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    // After ")": state(3) ppid(4) ... utime(14) stime(15) ... num_threads(20) ... starttime(22) vsize(23) rss(24)
    let mut it = rest.split_ascii_whitespace();
    let zombie = matches!(it.clone().next(), Some("Z" | "X"));
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
        zombie,
    })
}

/// The monitored process and its descendants, re-read once per sample by the
/// [`super::Sampler`] and shared with the collectors that need it (cpu, memory, nvidia).
/// The root can change while the collectors run (see [`super::MonitorHandle`]):
/// `generation` counts the changes, so a collector drops its per-process state.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    /// `None`: no process is monitored (`procs` stays empty, no error).
    pub root: Option<u32>,
    /// The root and its descendants, root first; empty when there is no root or it
    /// was not read yet.
    pub procs: Vec<ProcStat>,
    pub read_at: Instant,
    /// Set when the root process could not be read (exited, or no permission).
    pub error: Option<String>,
    /// Limits of the root's leaf cgroup v2 (none without a root).
    pub cgroup: CgroupLimits,
    /// Times the root was changed.
    pub generation: u64,
    /// The root's start time (clock ticks after boot) when it was chosen or first
    /// read: a process of that pid started at another time is another process.
    pub root_start: Option<u64>,
    /// The root's pid names another process now (the root exited and its pid was
    /// given to a new one): nothing of it is read as the root's.
    pub replaced: bool,
}

pub(crate) type SharedTree = Arc<Mutex<ProcessTree>>;

impl ProcessTree {
    pub(crate) fn new(root: u32) -> Self {
        Self {
            root: Some(root),
            procs: Vec::new(),
            read_at: Instant::now(),
            error: Some("not sampled yet".to_string()),
            cgroup: CgroupLimits::default(),
            generation: 0,
            root_start: None,
            replaced: false,
        }
    }

    /// A tree whose root is `root` (or none), with that root's cgroup limits.
    pub(crate) fn detect(root: Option<u32>) -> Self {
        let mut t = Self::new(0);
        t.set_root(root);
        t.generation = 0;
        t
    }

    /// Monitor `root` (or none) from now on: its cgroup limits replace the previous
    /// root's, and nothing is known of it until the next refresh.
    pub(crate) fn set_root(&mut self, root: Option<u32>) {
        self.root = root;
        self.root_start = None;
        self.replaced = false;
        self.procs.clear();
        self.error = None;
        self.cgroup = root.map(CgroupLimits::detect).unwrap_or_default();
        self.generation += 1;
    }

    pub(crate) fn pids(&self) -> impl Iterator<Item = u32> + '_ {
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
    /// Members still to look at: (pid, threads).
    stack: Vec<(u32, u64)>,
    all: Vec<ProcStat>,
    kids: HashMap<u32, Vec<usize>>,
    listed: Vec<u32>,
    /// pid → ppid of processes known not to be in the tree (not re-read each tick).
    outsiders: HashMap<u32, u32>,
    ticks: u64,
    /// Open `stat` files of tree members, and `task/<tid>/children` files.
    stats: FileCache<u32>,
    children: FileCache<(u32, u32)>,
    /// Refreshes each descendant has been seen in, in a row (see [`KEEP_AFTER`]).
    tenure: HashMap<u32, u32>,
    seen: HashMap<u32, u32>,
    /// The tree's generation at the last refresh (a new root voids `outsiders`).
    generation: u64,
}

impl TreeWalker {
    pub(crate) fn new() -> Self {
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
            stats: FileCache::default(),
            children: FileCache::default(),
            tenure: HashMap::new(),
            seen: HashMap::new(),
            generation: 0,
        }
    }

    /// A tree member's stat (through its kept-open file with `keep`).
    fn read_stat(&mut self, pid: u32, keep: bool) -> Option<ProcStat> {
        let path = || PathBuf::from(format!("/proc/{pid}/stat"));
        if !self.stats.read(pid, keep, path, &mut self.buf) {
            return None;
        }
        parse_stat(pid, &self.buf)
    }

    /// Whether `pid`'s files stay open: the root's, and a descendant's once it has been
    /// in the tree for [`KEEP_AFTER`] refreshes. Counts this refresh for `pid`.
    fn keep(&mut self, pid: u32, root: u32) -> bool {
        if pid == root {
            return true;
        }
        let n = self.tenure.get(&pid).copied().unwrap_or(0);
        let now = self.seen.entry(pid).or_insert(n + 1);
        *now >= KEEP_AFTER
    }

    /// Any process's stat, opened for this one reading (the ppid walk reads them all).
    fn read_stat_once(&mut self, pid: u32) -> Option<ProcStat> {
        read_into(Path::new(&format!("/proc/{pid}/stat")), &mut self.buf).ok()?;
        parse_stat(pid, &self.buf)
    }

    /// Re-read `tree` in place.
    pub(crate) fn refresh(&mut self, tree: &mut ProcessTree) {
        tree.procs.clear();
        tree.read_at = Instant::now();
        if tree.generation != self.generation {
            // Another root: who is outside the tree, and for how long members have
            // been in it, was about the old one.
            self.generation = tree.generation;
            self.outsiders.clear();
            self.tenure.clear();
        }
        let Some(root_pid) = tree.root else {
            tree.error = None;
            // Nothing was read: the old members' kept files are closed.
            self.stats.end_round();
            self.children.end_round();
            return;
        };
        let root = self.read_stat(root_pid, true);
        let replaced = tree.replaced
            || root.is_some_and(|r| tree.root_start.is_some_and(|s| s != r.start_ticks));
        // A zombie has exited: nothing of it runs, its memory is freed, its children
        // went to another parent; only its parent has not read its exit status yet.
        let zombie = root.is_some_and(|r| r.zombie);
        let Some(root) = root.filter(|_| !replaced && !zombie) else {
            tree.replaced = replaced;
            tree.error = Some(if replaced {
                format!("process {root_pid} exited (its pid names another process now)")
            } else if zombie {
                format!("process {root_pid} is not running (it exited; its parent has not reaped it yet)")
            } else {
                format!("process {root_pid} is not running (it exited)")
            });
            // The kept files of the old members are closed.
            self.stats.end_round();
            self.children.end_round();
            return;
        };
        tree.root_start.get_or_insert(root.start_ticks);
        tree.error = None;
        if self.has_children_files {
            self.walk_children_files(root, &mut tree.procs);
        } else {
            self.walk_by_ppid(root, &mut tree.procs);
        }
        self.stats.end_round();
        self.children.end_round();
        // Tenure of this refresh's members; the others start again from nothing.
        std::mem::swap(&mut self.tenure, &mut self.seen);
        self.seen.clear();
    }

    fn walk_children_files(&mut self, root: ProcStat, out: &mut Vec<ProcStat>) {
        out.push(root);
        self.stack.clear();
        self.stack.push((root.pid, root.threads));
        let mut children = Vec::new();
        while let Some((pid, threads)) = self.stack.pop() {
            children.clear();
            if threads == 1 {
                // Its only task is itself: no need to list `task/` (most tree members,
                // the tools and shells, have one thread).
                let path = || PathBuf::from(format!("/proc/{pid}/task/{pid}/children"));
                let keep = self.keep(pid, root.pid);
                if self.children.read((pid, pid), keep, path, &mut self.buf) {
                    children.extend(
                        self.buf
                            .split_ascii_whitespace()
                            .filter_map(|s| s.parse::<u32>().ok()),
                    );
                }
            } else {
                let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                    continue;
                };
                for task in tasks.flatten() {
                    let Some(tid) = task
                        .file_name()
                        .to_str()
                        .and_then(|s| s.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    let path = || task.path().join("children");
                    let keep = self.keep(pid, root.pid);
                    if self.children.read((pid, tid), keep, path, &mut self.buf) {
                        children.extend(
                            self.buf
                                .split_ascii_whitespace()
                                .filter_map(|s| s.parse::<u32>().ok()),
                        );
                    }
                }
            }
            for &child in &children {
                // The visited check guards against pid reuse races creating cycles.
                if out.iter().any(|p| p.pid == child) {
                    continue;
                }
                let keep = self.keep(child, root.pid);
                if let Some(stat) = self.read_stat(child, keep) {
                    out.push(stat);
                    self.stack.push((child, stat.threads));
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
            if let Some(stat) = self.read_stat_once(pid) {
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
mod tests;
