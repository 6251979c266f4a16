//! The live monitor's process table: one scan of every process in `/proc`, as
//! [`ProcTable`] rows (pid, parent, user, CPU % of one core since the previous reading,
//! resident memory, GPU memory where NVML reports it, threads, command line).
//!
//! Cost: a scan lists `/proc` and reads each process's `stat`, through a descriptor
//! kept open and read again with one `pread` (at most [`max_kept`] of them; the rest
//! are opened for the one reading). The kernel's rendering of `stat` is most of a
//! scan's cost, so a process that used no CPU for [`IDLE_AFTER`] is read only every
//! [`IDLE_EVERY`] scans (its row meanwhile: 0 % CPU, memory and threads as last read);
//! one that wakes up shows its CPU within that many scans, averaged over the time since
//! its previous reading. Most processes of a host are idle, so most scans read a
//! quarter of them.
//!
//! CPU % is the counter's growth over the time between two readings of that process,
//! each timed when its `stat` was read, not when the scan began: a scan slowed by load
//! (the first one reads every process's `status` and `cmdline`) is followed at once by
//! the next, and a process read late in the one and early in the other was read twice
//! within milliseconds. Such a window (under [`MIN_WINDOW`]) is too short to tell a
//! busy process from an idle one (the counter moves in 10 ms ticks): it neither makes a
//! figure nor counts towards idleness, and the row keeps the last figure.
//!
//! A process's `status` (its user) and `cmdline` are read once, when it is first seen,
//! and again only when its `comm` changes (an `exec`): a pid that is reused is a new
//! process (its start time differs). User names come from `/etc/passwd`, read once
//! (again at most once a minute for a uid it does not name). A process that vanishes
//! mid-scan, or whose files cannot be read, is left out of that scan; nothing here
//! panics.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::procfs::{self, ProcFile};

/// One process of the host, a row of the live monitor's process table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcRow {
    /// Process id.
    pub pid: u32,
    /// Parent's process id.
    pub ppid: u32,
    /// User name, or the numeric uid when it has none. Untrusted text.
    pub user: String,
    /// CPU use since the previous scan, percent of one core (a busy 4-thread
    /// process can show 400).
    pub cpu: f64,
    /// Resident memory, bytes.
    pub rss: u64,
    /// GPU memory this process uses over all GPUs, bytes, where NVML reports
    /// per-process usage; `None` when nothing reports it.
    pub gpu_memory: Option<u64>,
    /// Threads it runs.
    pub threads: u32,
    /// Command line, arguments joined by spaces (`[comm]` when it has none, as for
    /// kernel threads; `[comm] <defunct>` for a zombie, as `ps` shows them).
    /// Untrusted text: the view sanitizes it before drawing.
    pub command: String,
    /// Exited, not yet reaped by its parent: nothing of it runs.
    pub zombie: bool,
}

/// One scan of the host's processes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcTable {
    /// Unix seconds.
    pub timestamp: f64,
    /// Every process seen, in no particular order (the app sorts and filters).
    pub rows: Vec<ProcRow>,
}

/// Longest command line kept, in bytes (the rest is cut).
pub(crate) const MAX_COMMAND: usize = 4096;
/// Most processes in one table (bounded memory on a host with a huge `pid_max`).
pub(crate) const MAX_PROCS: usize = 1 << 16;
/// Most `stat` descriptors kept open, whatever the descriptor limit allows.
const MAX_KEPT: usize = 4096;
/// Longest `/etc/passwd` read.
const MAX_PASSWD: u64 = 4 << 20;
/// Time with no CPU used (its counter unchanged) after which a process counts as
/// idle...
const IDLE_AFTER: Duration = Duration::from_secs(3);
/// ...and is read only every this many scans (staggered by pid), until it uses CPU.
const IDLE_EVERY: u64 = 4;
/// Shortest time between two readings that makes a CPU figure: ten of the counter's
/// ticks (`USER_HZ` is 100 on Linux), so one tick is at most 10 % of a core. The
/// shortest sampling interval (100 ms) makes such windows.
const MIN_WINDOW: Duration = Duration::from_millis(100);
/// Least time between two readings of `/etc/passwd` for a uid it did not name.
const PASSWD_RETRY: Duration = Duration::from_secs(60);

/// GPU memory per process (bytes, all GPUs), as the NVML collector last read it, for
/// the process table. Filled only once a scanner asks for it ([`GpuMemory::want`]), so
/// `leet sample` makes no per-process NVML calls.
#[derive(Debug, Default)]
pub(crate) struct GpuMemory {
    wanted: AtomicBool,
    by_pid: Mutex<HashMap<u32, u64>>,
}

impl GpuMemory {
    pub(crate) fn want(&self) {
        self.wanted.store(true, Ordering::Relaxed);
    }

    pub(crate) fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// A copy of the map (the collector never waits for a scan of a slow `/proc`).
    pub(crate) fn snapshot(&self) -> HashMap<u32, u64> {
        self.by_pid.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Replace the map with this sample's.
    pub(crate) fn publish(&self, by_pid: HashMap<u32, u64>) {
        if let Ok(mut m) = self.by_pid.lock() {
            *m = by_pid;
        }
    }
}

/// How many `stat` files a scanner keeps open: [`MAX_KEPT`], or a quarter of the
/// soft descriptor limit when that is lower (the viewer needs its descriptors too).
fn max_kept() -> usize {
    // SAFETY: rlimit is plain old data, filled by getrlimit.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid resource and a pointer to an rlimit we own.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) };
    if rc != 0 {
        return 256;
    }
    usize::try_from(lim.rlim_cur / 4).map_or(MAX_KEPT, |n| n.min(MAX_KEPT))
}

/// What a scan remembers of a process between scans.
struct Known {
    start_ticks: u64,
    cpu_ticks: u64,
    /// `comm` when `command` and `user` were read: a change means an `exec`.
    comm: String,
    user: String,
    command: String,
    /// The `stat` file, kept open (None past [`max_kept`]).
    stat: Option<ProcFile>,
    /// The scan it was last seen in.
    seen: u64,
    /// When `cpu_ticks` was read: the start of the next CPU window.
    read_at: Instant,
    /// The last reading that found its counter grown (or the first reading).
    active_at: Instant,
    /// No CPU used for [`IDLE_AFTER`] as of its last reading.
    idle: bool,
    /// The last CPU figure (% of one core).
    cpu: f64,
    /// From its last `stat`: parent, resident bytes, threads.
    ppid: u32,
    rss: u64,
    threads: u32,
    /// A zombie as of its last `stat` (its command says so, see [`defunct`]).
    zombie: bool,
}

/// Scans every process of a `/proc` tree (see the module documentation).
pub struct ProcScanner {
    proc_root: PathBuf,
    passwd: PathBuf,
    users: HashMap<u32, String>,
    passwd_read: Option<Instant>,
    known: HashMap<u32, Known>,
    kept: usize,
    max_kept: usize,
    ticks_per_sec: f64,
    page_size: u64,
    uptime: ProcFile,
    round: u64,
    /// `stat` files read so far (for tests: idle processes are read less often).
    stat_reads: u64,
    pids: Vec<u32>,
    buf: String,
    gpu: Option<Arc<GpuMemory>>,
}

impl ProcScanner {
    /// A scanner of this host's `/proc`, user names from `/etc/passwd`, no GPU memory.
    #[must_use]
    pub fn new() -> Self {
        Self::with_root("/proc", "/etc/passwd", None)
    }

    /// A scanner of the `/proc` tree at `proc_root` (a fake one in tests).
    pub(crate) fn with_root(
        proc_root: impl Into<PathBuf>,
        passwd: impl Into<PathBuf>,
        gpu: Option<Arc<GpuMemory>>,
    ) -> Self {
        let proc_root = proc_root.into();
        if let Some(g) = &gpu {
            g.want();
        }
        Self {
            uptime: ProcFile::single(proc_root.join("uptime")),
            proc_root,
            passwd: passwd.into(),
            users: HashMap::new(),
            passwd_read: None,
            known: HashMap::new(),
            kept: 0,
            max_kept: max_kept(),
            ticks_per_sec: procfs::clock_ticks_per_second(),
            page_size: procfs::page_size(),
            round: 0,
            stat_reads: 0,
            pids: Vec::new(),
            buf: String::with_capacity(1024),
            gpu,
        }
    }

    #[cfg(test)]
    pub(crate) fn set_max_kept(&mut self, n: usize) {
        self.max_kept = n;
    }

    /// `stat` descriptors held open now.
    #[must_use]
    pub fn kept_files(&self) -> usize {
        self.kept
    }

    /// One scan of every process.
    pub fn scan(&mut self) -> ProcTable {
        self.scan_with(Instant::now)
    }

    /// A scan as if every reading were made at `now` (CPU % is over the time since each
    /// process's previous reading).
    #[cfg(test)]
    pub(crate) fn scan_at(&mut self, now: Instant) -> ProcTable {
        self.scan_with(|| now)
    }

    /// A scan that times each reading with `clock` (called as each `stat`, and the
    /// uptime, has been read).
    pub(crate) fn scan_with(&mut self, mut clock: impl FnMut() -> Instant) -> ProcTable {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.round += 1;
        let uptime = self
            .uptime
            .read(&mut self.buf)
            .ok()
            .and_then(|()| super::cpu::parse_uptime(&self.buf))
            .map(|up| (up, clock()));
        self.list_pids();
        let gpu_map = self.gpu.as_ref().map(|g| g.snapshot()).unwrap_or_default();
        let mut rows = Vec::with_capacity(self.pids.len());
        let round = self.round;
        for i in 0..self.pids.len() {
            let pid = self.pids[i];
            if let Some(k) = self.known.get_mut(&pid) {
                // An idle process: its row as last read, most scans (see `IDLE_EVERY`).
                if k.idle && (round + u64::from(pid)) % IDLE_EVERY != 0 {
                    k.seen = round;
                    rows.push(ProcRow {
                        pid,
                        ppid: k.ppid,
                        user: k.user.clone(),
                        cpu: k.cpu,
                        rss: k.rss,
                        gpu_memory: gpu_map.get(&pid).copied(),
                        threads: k.threads,
                        command: k.command.clone(),
                        zombie: k.zombie,
                    });
                    continue;
                }
            }
            if let Some(mut row) = self.read_process(pid, &mut clock, uptime) {
                row.gpu_memory = gpu_map.get(&pid).copied();
                rows.push(row);
            }
        }
        // Vanished processes: their kept files are closed.
        let mut closed = 0;
        self.known.retain(|_, k| {
            let keep = k.seen == round;
            if !keep && k.stat.is_some() {
                closed += 1;
            }
            keep
        });
        self.kept -= closed;
        ProcTable { timestamp, rows }
    }

    /// The numeric entries of the `/proc` tree, at most [`MAX_PROCS`].
    fn list_pids(&mut self) {
        self.pids.clear();
        let Ok(entries) = std::fs::read_dir(&self.proc_root) else {
            return;
        };
        for entry in entries.flatten() {
            if self.pids.len() >= MAX_PROCS {
                break;
            }
            let name = entry.file_name();
            if let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) {
                self.pids.push(pid);
            }
        }
    }

    /// One process's row; None when it vanished or its `stat` cannot be read. `uptime`:
    /// the host's, and when it was read.
    fn read_process(
        &mut self,
        pid: u32,
        clock: &mut impl FnMut() -> Instant,
        uptime: Option<(f64, Instant)>,
    ) -> Option<ProcRow> {
        self.stat_reads += 1;
        // Its stat: through the kept file of a known process, else opened now (kept
        // when there is room).
        let known = self.known.get_mut(&pid);
        let mut fresh = None;
        let read = match known.and_then(|k| k.stat.as_mut()) {
            Some(f) => f.read(&mut self.buf).is_ok(),
            None => {
                let path = self.proc_root.join(pid.to_string()).join("stat");
                if self.kept < self.max_kept {
                    let mut f = ProcFile::single(path);
                    let ok = f.read(&mut self.buf).is_ok();
                    fresh = ok.then_some(f);
                    ok
                } else {
                    procfs::read_into(&path, &mut self.buf).is_ok()
                }
            }
        };
        if !read {
            return None;
        }
        let at = clock();
        let stat = procfs::parse_stat(pid, &self.buf)?;
        let comm = parse_comm(&self.buf)?;
        let row = |k: &Known, cpu: f64| ProcRow {
            pid,
            ppid: stat.ppid,
            user: k.user.clone(),
            cpu,
            rss: stat.rss_pages.saturating_mul(self.page_size),
            gpu_memory: None,
            threads: u32::try_from(stat.threads).unwrap_or(u32::MAX),
            command: k.command.clone(),
            zombie: stat.zombie,
        };
        let round = self.round;
        if let Some(k) = self
            .known
            .get_mut(&pid)
            .filter(|k| k.start_ticks == stat.start_ticks)
        {
            k.measure(stat.cpu_ticks, at, self.ticks_per_sec);
            let cpu = k.cpu;
            k.seen = round;
            (k.ppid, k.rss, k.threads) = (
                stat.ppid,
                stat.rss_pages.saturating_mul(self.page_size),
                u32::try_from(stat.threads).unwrap_or(u32::MAX),
            );
            if let Some(f) = fresh.take() {
                // Room again for a known process read the one-shot way so far.
                k.stat = Some(f);
                self.kept += 1;
            }
            if stat.zombie && !k.zombie {
                k.command = defunct(comm);
            }
            k.zombie = stat.zombie;
            if k.comm != comm {
                // It ran another program: its command line and user are new.
                let (user, command) = Self::identity(
                    &self.proc_root,
                    &self.passwd,
                    &mut self.users,
                    &mut self.passwd_read,
                    pid,
                    comm,
                );
                let k = self.known.get_mut(&pid)?;
                k.comm = comm.to_string();
                k.user = user;
                k.command = command;
                return Some(row(k, cpu));
            }
            return Some(row(k, cpu));
        }
        // A new process (or a reused pid): lifetime average CPU, as `ps` shows, with
        // the host's uptime as of this reading.
        let cpu = uptime
            .map(|(up, up_at)| {
                up + at.saturating_duration_since(up_at).as_secs_f64()
                    - stat.start_ticks as f64 / self.ticks_per_sec
            })
            .filter(|&age| age > 0.0)
            .map_or(0.0, |age| {
                stat.cpu_ticks as f64 / self.ticks_per_sec / age * 100.0
            });
        let (user, mut command) = Self::identity(
            &self.proc_root,
            &self.passwd,
            &mut self.users,
            &mut self.passwd_read,
            pid,
            comm,
        );
        if stat.zombie {
            command = defunct(comm);
        }
        // A reused pid's kept file already reads the new process: keep it.
        let old_file = self.known.remove(&pid).and_then(|k| k.stat);
        if old_file.is_some() {
            self.kept -= 1;
        }
        let file = fresh.or(old_file);
        if file.is_some() {
            self.kept += 1;
        }
        let k = Known {
            start_ticks: stat.start_ticks,
            cpu_ticks: stat.cpu_ticks,
            comm: comm.to_string(),
            user,
            command,
            stat: file,
            seen: round,
            read_at: at,
            active_at: at,
            idle: false,
            cpu,
            ppid: stat.ppid,
            rss: stat.rss_pages.saturating_mul(self.page_size),
            threads: u32::try_from(stat.threads).unwrap_or(u32::MAX),
            zombie: stat.zombie,
        };
        let r = row(&k, cpu);
        self.known.insert(pid, k);
        Some(r)
    }

    /// The user name and command line of a process seen for the first time (or after
    /// an `exec`).
    fn identity(
        proc_root: &Path,
        passwd: &Path,
        users: &mut HashMap<u32, String>,
        passwd_read: &mut Option<Instant>,
        pid: u32,
        comm: &str,
    ) -> (String, String) {
        let dir = proc_root.join(pid.to_string());
        let user = effective_uid(&dir).map_or_else(
            || "?".to_string(),
            |uid| {
                if !users.contains_key(&uid)
                    && passwd_read.is_none_or(|t| t.elapsed() >= PASSWD_RETRY)
                {
                    *passwd_read = Some(Instant::now());
                    *users = read_passwd(passwd);
                }
                users.get(&uid).cloned().unwrap_or_else(|| uid.to_string())
            },
        );
        (user, read_command(&dir, comm))
    }
}

impl Known {
    /// Take a reading of the CPU counter made at `at`: a figure over the window since
    /// the previous one when it is at least [`MIN_WINDOW`] long (a shorter one keeps
    /// the window open and the last figure), and whether the process is idle.
    // Tick counts stay far below 2^52: exact as f64.
    fn measure(&mut self, cpu_ticks: u64, at: Instant, ticks_per_sec: f64) {
        if cpu_ticks != self.cpu_ticks {
            self.active_at = at;
        }
        self.idle = cpu_ticks == self.cpu_ticks
            && at.saturating_duration_since(self.active_at) >= IDLE_AFTER;
        let window = at.saturating_duration_since(self.read_at);
        if window < MIN_WINDOW {
            return;
        }
        // A counter that went backwards (never on Linux; a hostile fake) used none.
        let used = cpu_ticks.saturating_sub(self.cpu_ticks);
        self.cpu = used as f64 / ticks_per_sec / window.as_secs_f64() * 100.0;
        self.cpu_ticks = cpu_ticks;
        self.read_at = at;
    }
}

impl Default for ProcScanner {
    fn default() -> Self {
        Self::new()
    }
}

/// The command name of a `stat` line: between the first `(` and the last `)`.
fn parse_comm(stat: &str) -> Option<&str> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    stat.get(open + 1..close)
}

/// The effective uid of the process whose `/proc` directory is `dir`: the second
/// number of `status`'s `Uid:` line, else the directory's owner.
fn effective_uid(dir: &Path) -> Option<u32> {
    let mut text = String::new();
    if procfs::read_into(&dir.join("status"), &mut text).is_ok() {
        if let Some(uid) = parse_status_uid(&text) {
            return Some(uid);
        }
    }
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(dir).ok().map(|m| m.uid())
}

/// `Uid:\treal\teffective\tsaved\tfs` → effective.
pub(crate) fn parse_status_uid(status: &str) -> Option<u32> {
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// uid → name from a passwd file (`name:x:uid:gid:...`); empty when unreadable.
pub(crate) fn read_passwd(path: &Path) -> HashMap<u32, String> {
    let mut text = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_PASSWD).read_to_end(&mut text));
    if read.is_err() {
        return HashMap::new();
    }
    parse_passwd(&String::from_utf8_lossy(&text))
}

/// What ends a zombie's command.
const DEFUNCT: &str = " <defunct>";

/// A zombie's command, as `ps` shows one: it has no command line left (a kernel
/// thread's `[comm]` would look the same), and the one read while it ran is over.
fn defunct(comm: &str) -> String {
    format!("[{comm}]{DEFUNCT}")
}

pub(crate) fn parse_passwd(text: &str) -> HashMap<u32, String> {
    let mut users = HashMap::new();
    for line in text.lines() {
        let mut f = line.split(':');
        let (Some(name), Some(_), Some(uid)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if let (false, Ok(uid)) = (name.is_empty(), uid.parse::<u32>()) {
            // The first entry for a uid wins, as getpwuid returns it.
            users.entry(uid).or_insert_with(|| name.to_string());
        }
    }
    users
}

/// A process's command line from its `cmdline` (at most [`MAX_COMMAND`] bytes, NULs
/// as spaces, invalid UTF-8 replaced), or `[comm]` when it has none (a kernel
/// thread; a zombie's row says `<defunct>` after it). Untrusted: the view sanitizes it.
pub(crate) fn read_command(dir: &Path, comm: &str) -> String {
    let mut bytes = Vec::new();
    let _ = std::fs::File::open(dir.join("cmdline"))
        .and_then(|f| f.take(MAX_COMMAND as u64).read_to_end(&mut bytes));
    command_from_cmdline(&bytes, comm)
}

pub(crate) fn command_from_cmdline(bytes: &[u8], comm: &str) -> String {
    let bytes = &bytes[..bytes.len().min(MAX_COMMAND)];
    let joined: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == 0 { b' ' } else { b })
        .collect();
    let text = String::from_utf8_lossy(&joined);
    let text = text.trim_end_matches(' ');
    if text.is_empty() {
        format!("[{comm}]")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests;
