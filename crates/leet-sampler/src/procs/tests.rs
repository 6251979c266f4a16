use super::*;
use std::time::Duration;

/// A fake `/proc` tree (and passwd file) in a temporary directory.
struct FakeProc {
    dir: tempfile::TempDir,
    tps: u64,
}

impl FakeProc {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("proc")).expect("proc");
        std::fs::write(
            dir.path().join("passwd"),
            "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n\
             broken line\n:x:7:7::/:/bin/false\nshadow:x:1000:1000::/:/bin/sh\n",
        )
        .expect("passwd");
        let f = Self {
            dir,
            tps: procfs::clock_ticks_per_second() as u64,
        };
        f.uptime(1000.0);
        f
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("proc")
    }

    fn scanner(&self, gpu: Option<Arc<GpuMemory>>) -> ProcScanner {
        ProcScanner::with_root(self.root(), self.dir.path().join("passwd"), gpu)
    }

    fn uptime(&self, secs: f64) {
        std::fs::write(self.root().join("uptime"), format!("{secs:.2} 1.00\n")).expect("uptime");
    }

    /// A process: `ticks` of CPU (utime, stime 0), started `start` ticks after boot.
    #[allow(
        clippy::too_many_arguments,
        reason = "one argument per field of the fake /proc entry, named at each call"
    )]
    fn process(
        &self,
        pid: u32,
        ppid: u32,
        comm: &str,
        uid: Option<u32>,
        cmdline: &[u8],
        ticks: u64,
        start: u64,
    ) {
        let d = self.root().join(pid.to_string());
        std::fs::create_dir_all(&d).expect("pid dir");
        self.stat(pid, ppid, comm, ticks, start);
        if let Some(uid) = uid {
            std::fs::write(
                d.join("status"),
                format!("Name:\t{comm}\nState:\tS (sleeping)\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t0\t0\t0\t0\n"),
            )
            .expect("status");
        }
        std::fs::write(d.join("cmdline"), cmdline).expect("cmdline");
    }

    fn stat(&self, pid: u32, ppid: u32, comm: &str, ticks: u64, start: u64) {
        // Fields as Linux writes them; threads 3, rss 250 pages.
        let line = format!(
            "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 100 0 0 0 {ticks} 0 0 0 20 0 3 0 {start} 123456789 250 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        );
        std::fs::write(self.root().join(pid.to_string()).join("stat"), line).expect("stat");
    }
}

fn row(t: &ProcTable, pid: u32) -> &ProcRow {
    t.rows
        .iter()
        .find(|r| r.pid == pid)
        .unwrap_or_else(|| panic!("no row for {pid}: {:?}", t.rows))
}

#[test]
fn rows_from_a_fake_proc_tree() {
    let f = FakeProc::new();
    f.process(1, 0, "systemd", Some(0), b"/sbin/init\0splash\0", 500, 1);
    f.process(
        42,
        1,
        "python3",
        Some(1000),
        b"python\0train.py\0--lr\x000.1\0",
        0,
        100,
    );
    f.process(7, 2, "kworker/0:1", Some(0), b"", 0, 5);
    f.process(99, 1, "odd", Some(4242), b"odd\0", 0, 100);
    // Not processes: other entries of /proc.
    std::fs::create_dir(f.root().join("self")).expect("self");
    std::fs::write(f.root().join("meminfo"), "x").expect("meminfo");
    let mut s = f.scanner(None);
    let t = s.scan();
    assert_eq!(t.rows.len(), 4, "{:?}", t.rows);
    let p = row(&t, 42);
    assert_eq!(p.ppid, 1);
    assert_eq!(p.user, "alice");
    assert_eq!(p.command, "python train.py --lr 0.1");
    assert_eq!(p.threads, 3);
    assert_eq!(p.rss, 250 * procfs::page_size());
    assert_eq!(p.gpu_memory, None);
    assert_eq!(row(&t, 1).user, "root");
    assert_eq!(row(&t, 1).command, "/sbin/init splash");
    // No command line (a kernel thread): its name in brackets, as ps shows it.
    assert_eq!(row(&t, 7).command, "[kworker/0:1]");
    // A uid passwd does not name: the number.
    assert_eq!(row(&t, 99).user, "4242");
    assert!(t.timestamp > 1.0e9);
}

#[test]
fn cpu_is_percent_of_one_core_since_the_previous_scan() {
    let f = FakeProc::new();
    // Started at 900 s after boot with 50 s of CPU, uptime 1000 s: 50 % over its life.
    f.process(10, 1, "busy", Some(0), b"busy\0", 50 * f.tps, 900 * f.tps);
    f.process(11, 1, "idle", Some(0), b"idle\0", 0, 900 * f.tps);
    let mut s = f.scanner(None);
    let t0 = Instant::now();
    let first = s.scan_at(t0);
    assert!(
        (row(&first, 10).cpu - 50.0).abs() < 1e-6,
        "{:?}",
        first.rows
    );
    assert_eq!(row(&first, 11).cpu, 0.0);
    // 2 s later: busy used 2 s of CPU (one core), idle 0.5 s.
    f.stat(10, 1, "busy", 52 * f.tps, 900 * f.tps);
    f.stat(11, 1, "idle", f.tps / 2, 900 * f.tps);
    let t = s.scan_at(t0 + Duration::from_secs(2));
    assert!((row(&t, 10).cpu - 100.0).abs() < 1e-6, "{:?}", t.rows);
    assert!((row(&t, 11).cpu - 25.0).abs() < 1e-6, "{:?}", t.rows);
    // Four threads busy for 1 s: 400 %.
    f.stat(10, 1, "busy", 56 * f.tps, 900 * f.tps);
    let t = s.scan_at(t0 + Duration::from_secs(3));
    assert!((row(&t, 10).cpu - 400.0).abs() < 1e-6, "{:?}", t.rows);
    // A counter that went backwards (never on Linux; a hostile fake): 0, no panic.
    f.stat(10, 1, "busy", 0, 900 * f.tps);
    let t = s.scan_at(t0 + Duration::from_secs(4));
    assert_eq!(row(&t, 10).cpu, 0.0);
}

/// What the scanning thread does after a scan that took longer than the interval (the
/// first one reads every process's `status` and `cmdline`, and load slows it): the next
/// scan starts at once, so a process is read again within milliseconds, before its
/// counter (10 ms ticks) has moved, busy or not. Such readings are no evidence of
/// idleness: the busy process keeps its figure, and is read and shown at every scan
/// once a real interval has passed.
#[test]
fn readings_close_together_neither_zero_nor_idle_a_busy_process() {
    let f = FakeProc::new();
    // 50 s of CPU since 900 s after boot, uptime 1000 s: 50 % of a core.
    let start = 900 * f.tps;
    let mut ticks = 50 * f.tps;
    for pid in 10..14 {
        f.process(pid, 1, "busy", Some(0), b"busy\0", ticks, start);
    }
    let mut s = f.scanner(None);
    let t0 = Instant::now();
    let first = s.scan_at(t0);
    assert!(
        (row(&first, 10).cpu - 50.0).abs() < 1e-6,
        "{:?}",
        first.rows
    );
    for ms in [2, 4, 6, 8, 10] {
        let t = s.scan_at(t0 + Duration::from_millis(ms));
        for r in &t.rows {
            assert!((r.cpu - 50.0).abs() < 1e-6, "{ms} ms later: {r:?}");
        }
    }
    // Then a scan a second: half a second of CPU each time, 50 % at every scan (every
    // pid, so every stagger of the idle reading is covered).
    for n in 1..=2 * IDLE_EVERY {
        ticks += f.tps / 2;
        for pid in 10..14 {
            f.stat(pid, 1, "busy", ticks, start);
        }
        let t = s.scan_at(t0 + Duration::from_secs(n));
        for r in &t.rows {
            assert!((r.cpu - 50.0).abs() < 1e-6, "{n} s later: {r:?}");
        }
    }
}

/// CPU % is over the time between the process's own two readings: a scan slowed
/// between the start and the reading (here 0.9 s) does not stretch the window of the
/// next one, made right after.
#[test]
fn cpu_is_over_the_time_between_a_process_own_readings() {
    let f = FakeProc::new();
    let start = 900 * f.tps;
    f.process(10, 1, "busy", Some(0), b"busy\0", 50 * f.tps, start);
    let mut s = f.scanner(None);
    let t0 = Instant::now();
    // First scan: uptime read at t0, the process at t0 + 0.9 s (its age then is
    // 100.9 s: the lifetime average uses the uptime as of its reading).
    let mut times = [t0, t0 + Duration::from_millis(900)].into_iter();
    let first = s.scan_with(|| times.next().unwrap_or(t0));
    let want = 50.0 / 100.9 * 100.0;
    assert!(
        (row(&first, 10).cpu - want).abs() < 1e-6,
        "{:?}",
        first.rows
    );
    // Second scan right after, read at t0 + 1.1 s: 0.1 s of CPU in those 0.2 s.
    f.stat(10, 1, "busy", 50 * f.tps + f.tps / 10, start);
    let mut times = [
        t0 + Duration::from_secs(1),
        t0 + Duration::from_millis(1100),
    ]
    .into_iter();
    let t = s.scan_with(|| times.next().unwrap_or(t0));
    assert!((row(&t, 10).cpu - 50.0).abs() < 1e-6, "{:?}", t.rows);
}

#[test]
fn a_reused_pid_is_a_new_process_and_an_exec_a_new_command() {
    let f = FakeProc::new();
    f.process(20, 1, "sh", Some(0), b"sh\0-c\0make\0", 10, 100);
    let mut s = f.scanner(None);
    let t0 = Instant::now();
    assert_eq!(row(&s.scan_at(t0), 20).command, "sh -c make");
    // The command line is read once: a change without an exec is not seen...
    std::fs::write(f.root().join("20/cmdline"), b"rewritten\0").expect("cmdline");
    let t = s.scan_at(t0 + Duration::from_secs(1));
    assert_eq!(row(&t, 20).command, "sh -c make");
    assert_eq!(row(&t, 20).user, "root");
    // ...an exec (a new comm) is, with its new user.
    f.process(20, 1, "cc1", Some(1000), b"cc1\0main.c\0", 12, 100);
    let t = s.scan_at(t0 + Duration::from_secs(2));
    assert_eq!(row(&t, 20).command, "cc1 main.c");
    assert_eq!(row(&t, 20).user, "alice");
    assert!((row(&t, 20).cpu - 2.0 / f.tps as f64 * 100.0).abs() < 1e-6);
    // The pid is reused by another process (another start time): its own command,
    // and CPU over its own life, not a delta against the old one's counter.
    f.process(20, 1, "cc1", Some(0), b"cc1\0other.c\0", 0, 999 * f.tps);
    let t = s.scan_at(t0 + Duration::from_secs(3));
    assert_eq!(row(&t, 20).command, "cc1 other.c");
    assert_eq!(row(&t, 20).user, "root");
    assert_eq!(row(&t, 20).cpu, 0.0);
}

#[test]
fn vanished_and_unreadable_processes_are_left_out() {
    let f = FakeProc::new();
    f.process(30, 1, "a", Some(0), b"a\0", 0, 1);
    f.process(31, 1, "b", Some(0), b"b\0", 0, 1);
    // A directory without stat (the process exited while /proc was listed).
    std::fs::create_dir(f.root().join("32")).expect("32");
    // Garbage stat, and one cut short.
    f.process(33, 1, "c", Some(0), b"c\0", 0, 1);
    std::fs::write(f.root().join("33/stat"), "33 no parens at all").expect("stat");
    f.process(34, 1, "d", Some(0), b"d\0", 0, 1);
    std::fs::write(f.root().join("34/stat"), "34 (d) S 1 2 3").expect("stat");
    // Status and cmdline unreadable: a row still, with the directory owner's uid and
    // the bracketed name.
    f.process(35, 1, "e", None, b"", 0, 1);
    std::fs::remove_file(f.root().join("35/cmdline")).expect("rm");
    let mut s = f.scanner(None);
    let t = s.scan();
    let mut pids: Vec<u32> = t.rows.iter().map(|r| r.pid).collect();
    pids.sort_unstable();
    assert_eq!(pids, [30, 31, 35]);
    use std::os::unix::fs::MetadataExt as _;
    let owner = std::fs::metadata(f.root().join("35")).expect("meta").uid();
    let users = parse_passwd(&std::fs::read_to_string(f.dir.path().join("passwd")).expect("pw"));
    let want = users
        .get(&owner)
        .cloned()
        .unwrap_or_else(|| owner.to_string());
    assert_eq!(row(&t, 35).user, want);
    assert_eq!(row(&t, 35).command, "[e]");
    // 31 exits: gone from the next scan, its kept file closed.
    let kept = s.kept_files();
    std::fs::remove_dir_all(f.root().join("31")).expect("rm 31");
    let t = s.scan();
    assert!(t.rows.iter().all(|r| r.pid != 31));
    assert_eq!(s.kept_files(), kept - 1);
    // The whole tree gone: an empty table, no panic.
    std::fs::remove_dir_all(f.root()).expect("rm proc");
    assert!(s.scan().rows.is_empty());
    assert_eq!(s.kept_files(), 0);
}

#[test]
fn kept_files_are_bounded_and_the_rest_read_one_shot() {
    let f = FakeProc::new();
    for pid in 100..110 {
        f.process(pid, 1, "w", Some(0), b"w\0", 0, 1);
    }
    let mut s = f.scanner(None);
    s.set_max_kept(4);
    let t0 = Instant::now();
    assert_eq!(s.scan_at(t0).rows.len(), 10);
    assert_eq!(s.kept_files(), 4);
    // Every process is still read afresh, kept or not.
    for pid in 100..110 {
        f.stat(pid, 1, "w", 7, 1);
    }
    let t = s.scan_at(t0 + Duration::from_secs(1));
    assert_eq!(t.rows.len(), 10);
    assert_eq!(s.kept_files(), 4);
    assert!(t.rows.iter().all(|r| r.cpu > 0.0), "{:?}", t.rows);
    // Room made by processes that exit is used for the others.
    let kept: Vec<u32> = (s.known.iter())
        .filter(|(_, k)| k.stat.is_some())
        .map(|(p, _)| *p)
        .collect();
    for pid in &kept[..2] {
        std::fs::remove_dir_all(f.root().join(pid.to_string())).expect("rm");
    }
    assert_eq!(s.scan().rows.len(), 8);
    assert_eq!(s.kept_files(), 2, "closed at the end of the scan");
    assert_eq!(s.scan().rows.len(), 8);
    assert_eq!(s.kept_files(), 4);
    assert!(max_kept() >= 1 && max_kept() <= MAX_KEPT);
}

#[test]
fn idle_processes_are_read_less_often_and_wake_up_with_their_average() {
    let f = FakeProc::new();
    for pid in 200..240 {
        f.process(pid, 1, "idle", Some(0), b"idle\0", 5, 1);
    }
    f.process(300, 1, "busy", Some(0), b"busy\0", 0, 1);
    let mut s = f.scanner(None);
    let t0 = Instant::now();
    let at = |n: u64| t0 + Duration::from_secs(n);
    let mut busy_ticks = 0;
    // Reads 1 to 4, a second apart: every process each scan (new, then no CPU for
    // IDLE_AFTER).
    let idle_after = IDLE_AFTER.as_secs();
    for n in 0..=idle_after {
        busy_ticks += f.tps;
        f.stat(300, 1, "busy", busy_ticks, 1);
        assert_eq!(s.scan_at(at(n)).rows.len(), 41);
    }
    assert_eq!(s.stat_reads, 41 * (idle_after + 1));
    // From then on an idle process is read every IDLE_EVERY scans, the busy one at
    // every scan; every row is there, idle ones at 0 %, their memory as last read.
    let before = s.stat_reads;
    for n in 4..4 + IDLE_EVERY * 2 {
        busy_ticks += f.tps;
        f.stat(300, 1, "busy", busy_ticks, 1);
        let t = s.scan_at(at(n));
        assert_eq!(t.rows.len(), 41);
        assert!(
            (row(&t, 300).cpu - 100.0).abs() < 1e-6,
            "{:?}",
            row(&t, 300)
        );
        assert!(t
            .rows
            .iter()
            .filter(|r| r.pid != 300)
            .all(|r| r.cpu == 0.0 && r.threads == 3 && r.rss == 250 * procfs::page_size()));
    }
    let reads = s.stat_reads - before;
    assert_eq!(
        reads,
        40 * 2 + IDLE_EVERY * 2,
        "idle ones read twice each in {} scans",
        IDLE_EVERY * 2
    );
    // One wakes up: within IDLE_EVERY scans its row has its CPU, averaged over the
    // time since it was last read.
    f.stat(210, 1, "idle", 5 + f.tps, 1);
    let mut seen = None;
    for n in 4 + IDLE_EVERY * 2..4 + IDLE_EVERY * 3 {
        let t = s.scan_at(at(n));
        if row(&t, 210).cpu > 0.0 {
            seen = Some(row(&t, 210).cpu);
            break;
        }
    }
    let cpu = seen.expect("woke up within IDLE_EVERY scans");
    // One second of CPU over the IDLE_EVERY seconds since its last reading.
    assert!((cpu - 100.0 / IDLE_EVERY as f64).abs() < 1e-6, "{cpu}");
    // An idle process that exits is gone from the next table, read or not.
    std::fs::remove_dir_all(f.root().join("220")).expect("rm");
    assert!(s.scan_at(at(100)).rows.iter().all(|r| r.pid != 220));
}

#[test]
fn hostile_command_lines_are_bounded_valid_text() {
    let f = FakeProc::new();
    let mut evil = b"\x1b]0;pwned\x07\x1b[2J\xff\xfe\0--\x1b[31mred\0".to_vec();
    f.process(50, 1, "evil\x1b[1m", Some(0), &evil, 0, 1);
    evil = vec![b'a'; 100_000];
    f.process(51, 1, "long", Some(0), &evil, 0, 1);
    // A comm with ") (" in it: fields still counted from the last parenthesis.
    f.process(52, 1, "x) (y", Some(0), b"", 0, 1);
    let mut s = f.scanner(None);
    let t = s.scan();
    let c = &row(&t, 50).command;
    assert!(c.contains('\u{fffd}'), "invalid UTF-8 replaced: {c:?}");
    assert!(
        c.starts_with("\x1b]0;pwned"),
        "kept as data for the view: {c:?}"
    );
    // What the view draws has no control character left.
    let shown = leet_text::sanitize(c);
    assert!(!shown.chars().any(char::is_control), "{shown:?}");
    assert_eq!(row(&t, 51).command.len(), MAX_COMMAND);
    assert_eq!(row(&t, 52).command, "[x) (y]");
    assert_eq!(row(&t, 52).ppid, 1);
}

#[test]
fn gpu_memory_comes_from_the_shared_map() {
    let f = FakeProc::new();
    f.process(60, 1, "train", Some(0), b"train\0", 0, 1);
    f.process(61, 1, "cpuonly", Some(0), b"cpuonly\0", 0, 1);
    let gpu = Arc::new(GpuMemory::default());
    assert!(!gpu.wanted());
    let mut s = f.scanner(Some(gpu.clone()));
    assert!(
        gpu.wanted(),
        "a scanner asks the NVML collector for the map"
    );
    assert_eq!(row(&s.scan(), 60).gpu_memory, None);
    gpu.publish(HashMap::from([(60, 3 << 30), (12345, 1)]));
    let t = s.scan();
    assert_eq!(row(&t, 60).gpu_memory, Some(3 << 30));
    assert_eq!(row(&t, 61).gpu_memory, None);
}

#[test]
fn passwd_status_and_cmdline_parsing() {
    let users = parse_passwd("root:x:0:0::/:/bin/sh\nbob:x:1001:1001::/:/bin/sh\nbob2:x:1001:1:::\nno-uid:x:abc:1:::\n\n");
    assert_eq!(users.get(&0).map(String::as_str), Some("root"));
    assert_eq!(users.get(&1001).map(String::as_str), Some("bob"));
    assert_eq!(users.len(), 2);
    assert_eq!(
        read_passwd(Path::new("/nonexistent/passwd")),
        HashMap::new()
    );
    assert_eq!(
        parse_status_uid("Name:\tsudo\nUid:\t1000\t0\t0\t0\nGid:\t1\t1\t1\t1\n"),
        Some(0)
    );
    assert_eq!(parse_status_uid("Name:\tx\n"), None);
    assert_eq!(command_from_cmdline(b"a\0b\0\0\0", "x"), "a b");
    assert_eq!(command_from_cmdline(b"\0\0", "kthreadd"), "[kthreadd]");
    assert_eq!(parse_comm("1 (a (b)) S 0"), Some("a (b)"));
    assert_eq!(parse_comm("garbage"), None);
}

#[test]
fn this_process_is_in_a_real_scan() {
    let mut s = ProcScanner::new();
    let t = s.scan();
    let me = row(&t, std::process::id());
    assert!(me.threads >= 1);
    assert!(me.rss > 0);
    assert!(!me.command.is_empty());
    assert!(t.rows.iter().any(|r| r.pid == 1));
}

/// A zombie's row reads `[comm] <defunct>` as `ps` shows it — not the command line
/// it ran with, nor a kernel thread's `[comm]` — also when it was seen running
/// before and on the scans that reuse an idle process's row.
#[test]
fn a_zombie_s_row_says_defunct() {
    let f = FakeProc::new();
    f.process(50, 1, "python3", Some(1000), b"python\0train.py\0", 3, 100);
    f.process(51, 50, "worker", Some(1000), b"", 0, 100);
    let zombie = |pid: u32| {
        let path = f.root().join(pid.to_string()).join("stat");
        let line = std::fs::read_to_string(&path).expect("stat");
        std::fs::write(&path, line.replacen(") S ", ") Z ", 1)).expect("stat");
        std::fs::write(f.root().join(pid.to_string()).join("cmdline"), b"").expect("cmdline");
    };
    zombie(51);
    let mut s = f.scanner(None);
    let t = s.scan();
    assert_eq!(row(&t, 50).command, "python train.py");
    assert_eq!(row(&t, 51).command, "[worker] <defunct>");
    zombie(50);
    for _ in 0..(2 * IDLE_EVERY) {
        std::thread::sleep(Duration::from_millis(5));
        let t = s.scan();
        assert_eq!(row(&t, 50).command, "[python3] <defunct>");
        assert_eq!(row(&t, 51).command, "[worker] <defunct>");
    }
}
