//! The live monitor's process table against `ps`, for processes this test starts, a
//! busy child's CPU among other busy processes, and the sampler's monitored process tree
//! switched at run time.
//!
//! `ps` (procps) is needed: without it the `ps` comparison is skipped with a message,
//! except under `CI=true`, where that is a failure.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use leet::msg::{Msg, ProcRow, ProcTable};
use leet::source::sampler::{ProcScanner, Sampler, SamplerOptions};
use leet::ui::{App, Options};

#[path = "common/isolated.rs"]
mod isolated;
#[path = "common/tool.rs"]
mod tool;

/// Held by the tests that measure a busy child's CPU: one of them starts busy
/// processes of its own, which would starve the other's child on a 2-core host.
static CPU_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Kills its child's process group and reaps the child when dropped (also when an
/// assertion fails): a shell's background children go too.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        if let Ok(pgid) = i32::try_from(self.0.id()) {
            // SAFETY: kill has no memory preconditions; the group is the child's own
            // (`process_group(0)` at spawn).
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &str, args: &[&str]) -> Kid {
    use std::os::unix::process::CommandExt as _;
    Kid(Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}")))
}

/// Whether `ps` is there; a failure under `CI=true` where it is not.
fn have_ps() -> bool {
    tool::need(
        "ps (procps)",
        tool::runs("ps", &["--version"]) || tool::runs("ps", &["-p1"]),
    )
}

/// (threads, %CPU, command line) of `pid` as `ps` reports them.
fn ps(pid: u32) -> (u32, f64, String) {
    let out = Command::new("ps")
        .args(["-ww", "-o", "nlwp=,pcpu=,args=", "-p", &pid.to_string()])
        .output()
        .expect("ps");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Two right-aligned numbers, then the command line as it is.
    let mut rest = text.trim_end_matches('\n');
    let mut next = || {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (field, tail) = rest.split_at(end);
        rest = tail.get(1..).unwrap_or_default();
        field.to_string()
    };
    let threads = next()
        .parse()
        .unwrap_or_else(|_| panic!("ps nlwp: {text:?}"));
    let cpu = next()
        .parse()
        .unwrap_or_else(|_| panic!("ps pcpu: {text:?}"));
    (threads, cpu, rest.to_string())
}

fn row(t: &ProcTable, pid: u32) -> ProcRow {
    t.rows
        .iter()
        .find(|r| r.pid == pid)
        .cloned()
        .unwrap_or_else(|| panic!("no row for {pid} among {} rows", t.rows.len()))
}

/// Threads of `pid` (its `/proc` status).
fn threads_of(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Wait until `pid` has `n` threads and has run its program (`exe` set).
fn wait_for(pid: u32, n: u32, comm: &str) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if threads_of(pid) == n && c.trim() == comm {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{pid} never had {n} threads as {comm}");
}

#[test]
fn the_process_table_agrees_with_ps() {
    if !have_ps() {
        return;
    }
    let _cpu = CPU_TESTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sleeper = spawn("sleep", &["600"]);
    let busy = spawn("sh", &["-c", "while :; do :; done"]);
    wait_for(sleeper.0.id(), 1, "sleep");
    wait_for(busy.0.id(), 1, "sh");
    // Several threads: python3 with four sleeping threads where it is installed,
    // otherwise this test process with four threads of its own parked.
    let python = tool::runs("python3", &["--version"]).then(|| {
        let kid = spawn(
            "python3",
            &[
                "-c",
                // One line: ps shows a newline as a space (the table keeps it, for
                // the view to sanitize).
                "import threading, time; [threading.Thread(target=time.sleep, args=(600,), daemon=True).start() for _ in range(4)]; time.sleep(600)",
            ],
        );
        wait_for(kid.0.id(), 5, "python3");
        kid
    });
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let parked: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::park_timeout(Duration::from_millis(50));
                }
            })
        })
        .collect();
    let mut scanner = ProcScanner::new();
    scanner.scan();
    std::thread::sleep(Duration::from_secs(2));
    let t = scanner.scan();
    let mut pids = vec![sleeper.0.id(), busy.0.id()];
    pids.extend(python.as_ref().map(|k| k.0.id()));
    for pid in pids {
        let r = row(&t, pid);
        let (threads, _, command) = ps(pid);
        assert_eq!(r.command, command, "command of {pid}");
        assert_eq!(r.threads, threads, "threads of {pid} ({command})");
        assert_eq!(r.ppid, std::process::id(), "parent of {pid}");
    }
    if let Some(py) = &python {
        assert_eq!(row(&t, py.0.id()).threads, 5);
    }
    // This process, with its four parked threads: the table's count is the kernel's
    // (other tests' threads come and go: compared with a reading just after).
    let me = row(&t, std::process::id());
    let now = threads_of(std::process::id());
    assert!(
        me.threads >= 5 && me.threads.abs_diff(now) <= 8,
        "{} vs {now}",
        me.threads
    );
    // The busy child: clearly busy over the last 2 s (how busy depends on what else the
    // machine runs: on two cores shared with a test run and two busy processes it gets
    // under a third of one), never over one core, and close to what ps says over its
    // life (the same 2 s, give or take), whatever the load.
    let busy_row = row(&t, busy.0.id());
    let (_, ps_cpu, _) = ps(busy.0.id());
    let sleeper_cpu = row(&t, sleeper.0.id()).cpu;
    assert!(
        busy_row.cpu > sleeper_cpu + 5.0 && busy_row.cpu < 110.0,
        "busy child at {:.1} %",
        busy_row.cpu
    );
    assert!(
        (busy_row.cpu - ps_cpu).abs() < 25.0,
        "table {:.1} % vs ps {ps_cpu:.1} %",
        busy_row.cpu
    );
    assert!(row(&t, sleeper.0.id()).cpu < 5.0);
    assert!(row(&t, sleeper.0.id()).rss > 0);
    // Every row is well formed, and the user of this process's row is ours.
    assert!(t
        .rows
        .iter()
        .all(|r| !r.command.is_empty() && !r.user.is_empty()));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for p in parked {
        p.thread().unpark();
        let _ = p.join();
    }
}

/// CPU ticks (utime + stime) `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_ascii_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum()
}

/// A busy child among other busy processes (more than this host's 2 cores' worth) and
/// idle ones: from the second scan on, every table shows the busy child's CPU, also
/// when scans follow each other at once, as the scanning thread's do after a scan that
/// ran past its interval (load, or the first scan reading every command line); and the
/// app sorts it above the idle children.
#[test]
fn a_busy_child_shows_its_cpu_from_the_second_scan_on_under_load() {
    // Generous: 2 shared cores, tests running in parallel.
    const FLOOR: f64 = 3.0;
    let _cpu = CPU_TESTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let busy = spawn("sh", &["-c", "while :; do :; done"]);
    let _others: Vec<Kid> = (0..3)
        .map(|_| spawn("sh", &["-c", "while :; do :; done"]))
        .collect();
    let idle: Vec<Kid> = (0..2).map(|_| spawn("sleep", &["600"])).collect();
    for k in &idle {
        wait_for(k.0.id(), 1, "sleep");
    }
    // Until the busy child has run a while (its first figure is its average so far).
    let t = Instant::now();
    while cpu_ticks(busy.0.id()) < 10 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut scanner = ProcScanner::new();
    let mut tables = vec![scanner.scan()];
    for _ in 0..5 {
        tables.push(scanner.scan());
    }
    for _ in 0..2 {
        std::thread::sleep(Duration::from_secs(1));
        tables.push(scanner.scan());
    }
    // Most tables from the second on show it busy (scans at once included: a
    // window of no length would show the back-to-back ones idle). Not every one:
    // on a loaded machine the child may be starved for a whole window.
    let cpus: Vec<f64> = tables
        .iter()
        .skip(1)
        .map(|t| row(t, busy.0.id()).cpu)
        .collect();
    let shown = cpus.iter().filter(|&&c| c > FLOOR).count();
    assert!(
        2 * shown > cpus.len(),
        "busy child's CPU per scan from the second: {cpus:.1?}"
    );
    let last = tables.pop().unwrap_or_default();
    let mut app = App::live(Options::default(), 60.0);
    app.update(Msg::Resize(120, 40));
    app.update(Msg::Procs(last));
    let at = |pid: u32| app.host.procs.rows.iter().position(|r| r.pid == pid);
    let busy_at = at(busy.0.id()).expect("busy child in the table");
    for k in &idle {
        let idle_at = at(k.0.id()).expect("idle child in the table");
        assert!(
            busy_at < idle_at,
            "busy at row {busy_at}, idle at {idle_at}"
        );
    }
}

#[test]
fn a_vanishing_process_is_left_out_of_the_next_table() {
    let mut scanner = ProcScanner::new();
    let kid = spawn("sleep", &["600"]);
    let pid = kid.0.id();
    wait_for(pid, 1, "sleep");
    assert_eq!(row(&scanner.scan(), pid).command, "sleep 600");
    drop(kid);
    assert!(scanner.scan().rows.iter().all(|r| r.pid != pid));
}

fn keys(s: &leet::source::sampler::Sample) -> Vec<&str> {
    s.values.iter().map(|(k, _)| k.as_str()).collect()
}

#[test]
fn the_monitored_tree_follows_its_root() {
    let mut sampler = Sampler::new(SamplerOptions {
        monitor_self: false,
        ..SamplerOptions::default()
    });
    let process_key = |k: &&str| {
        *k == "cpu"
            || k.starts_with("proc.cpu")
            || k.starts_with("proc.memory.rss")
            || k.starts_with("gpu.process.")
    };
    sampler.sample();
    let s = sampler.sample();
    let k = keys(&s);
    assert!(!k.iter().any(process_key), "no process monitored: {k:?}");
    for host in [
        "load.1m",
        "load.5m",
        "load.15m",
        "uptime",
        "memory_percent",
        "swap.total",
    ] {
        assert!(k.contains(&host), "{host} missing: {k:?}");
    }
    assert!(
        !s.errors.iter().any(|(_, e)| e.contains("process")),
        "{:?}",
        s.errors
    );
    // A shell with two sleeping children: three threads in all.
    let sh = spawn("sh", &["-c", "sleep 600 & sleep 600 & wait"]);
    let t = Instant::now();
    let mut threads = None;
    let root = sampler.set_monitored(Some(sh.0.id())).expect("monitor sh");
    assert_eq!(root.map(|r| r.0), Some(sh.0.id()));
    while t.elapsed() < Duration::from_secs(10) && threads != Some(3.0) {
        threads = sampler.sample().get("proc.cpu.threads");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(threads, Some(3.0));
    let s = sampler.sample();
    assert!(
        s.get("proc.memory.rssMB").is_some_and(|v| v > 0.0),
        "{:?}",
        keys(&s)
    );
    let sleeper = spawn("sleep", &["600"]);
    wait_for(sleeper.0.id(), 1, "sleep");
    let root = sampler
        .set_monitored(Some(sleeper.0.id()))
        .expect("monitor sleep");
    assert_eq!(root, Some((sleeper.0.id(), "sleep 600".to_string())));
    assert_eq!(sampler.sample().get("proc.cpu.threads"), Some(1.0));
    // `cpu` needs two readings of the new tree (none carried over from the old one).
    let s = sampler.sample();
    assert!(s.get("cpu").is_some_and(|v| v < 5.0), "{:?}", keys(&s));
    sampler.set_monitored(None).expect("none");
    let s = sampler.sample();
    assert!(!keys(&s).iter().any(process_key), "{:?}", keys(&s));
    // A pid that is not there: an error naming it, and none monitored.
    let gone = {
        let kid = spawn("true", &[]);
        let pid = kid.0.id();
        drop(kid);
        pid
    };
    let e = sampler.set_monitored(Some(gone)).expect_err("gone");
    assert!(e.contains(&gone.to_string()), "{e}");
    let s = sampler.sample();
    assert!(!keys(&s).iter().any(process_key), "{:?}", keys(&s));
    assert!(
        !s.errors.iter().any(|(_, e)| e.contains("process")),
        "{:?}",
        s.errors
    );
}

#[test]
fn leet_sample_json_has_the_host_keys_and_monitors_itself() {
    let out = isolated::leet()
        .args(["sample", "--json", "--count", "2", "--interval", "200ms"])
        .output()
        .expect("leet sample");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("a line")).expect("json");
    for k in [
        "load.1m",
        "load.5m",
        "load.15m",
        "uptime",
        "swap.total",
        "swap.used",
        "cpu",
        "proc.cpu.threads",
    ] {
        assert!(
            last.get(k).is_some_and(serde_json::Value::is_number),
            "{k}: {last}"
        );
    }
    let up = last["uptime"].as_f64().unwrap_or(0.0);
    assert!(up > 0.0, "{last}");
}
