//! Host sampler against the live machine: values checked against /proc, loopback-only
//! network traffic, a real fsync'd file, a child process tree, and a local OpenMetrics
//! endpoint served by the test itself.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::sampler::{self, serve};

use leet_sampler::{spawn_sampler, Sampler, SamplerOptions};
use regex::Regex;

fn sampler() -> Sampler {
    Sampler::new(SamplerOptions::default())
}

fn meminfo_kb(key: &str) -> f64 {
    let text = std::fs::read_to_string("/proc/meminfo").expect("meminfo");
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("meminfo key")
}

/// A file of this process's leaf cgroup v2, if cgroup v2 is mounted (same rule as the sampler).
fn cgroup_file(name: &str) -> Option<String> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .trim()
        .trim_start_matches('/');
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split_whitespace().next()? == "cgroup2")
            .then(|| pre.split_whitespace().nth(4).map(str::to_string))?
    })?;
    std::fs::read_to_string(Path::new(&mount).join(rel).join(name)).ok()
}

/// The cgroup v2 memory limit and usage of this process, if limited.
fn cgroup_memory() -> Option<(f64, f64)> {
    let max: f64 = cgroup_file("memory.max")?.trim().parse().ok()?;
    let cur: f64 = cgroup_file("memory.current")?.trim().parse().ok()?;
    Some((max, cur))
}

/// What `cpu` is divided by: min(cgroup cpu.max, affinity CPUs), else physical cores.
fn cpu_capacity(physical: usize) -> f64 {
    let affinity = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) as f64;
    let limit = cgroup_file("cpu.max").and_then(|s| {
        let mut it = s.split_whitespace();
        let quota: f64 = it.next()?.parse().ok()?;
        let period: f64 = it.next()?.parse().ok()?;
        Some(quota / period)
    });
    limit.map_or(physical as f64, |l| l.min(affinity))
}

#[test]
fn memory_percent_matches_proc_meminfo() {
    let mut s = sampler();
    let sample = s.sample();
    let got = sample.get("memory_percent").expect("memory_percent");
    let expected = match cgroup_memory() {
        Some((max, cur)) => cur / max * 100.0,
        None => {
            let total = meminfo_kb("MemTotal");
            (total - meminfo_kb("MemAvailable")) / total * 100.0
        }
    };
    assert!(
        (got - expected).abs() < 3.0,
        "memory_percent {got} vs {expected}"
    );
    let avail = sample.get("proc.memory.availableMB").expect("availableMB");
    if cgroup_memory().is_none() {
        let expected_mb = meminfo_kb("MemAvailable") / 1024.0;
        assert!(
            (avail - expected_mb).abs() / expected_mb < 0.05,
            "{avail} vs {expected_mb}"
        );
    }
    // our own RSS, read independently from /proc/self/status
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let vmrss_kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS");
    let rss = sample.get("proc.memory.rssMB").expect("rssMB");
    assert!(
        (rss - vmrss_kb / 1024.0).abs() < 32.0,
        "rss {rss} MB vs {vmrss_kb} kB"
    );
    assert!(sample.get("proc.memory.percent").expect("percent") > 0.0);
    assert!(sample.errors.is_empty(), "{:?}", sample.errors);
}

#[test]
fn network_counters_grow_with_loopback_traffic() {
    let mut s = sampler();
    let before = s.sample();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let reader = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let mut buf = Vec::new();
        conn.read_to_end(&mut buf).expect("read");
        buf.len()
    });
    let payload = vec![7u8; 2 << 20];
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(&payload).expect("send");
    drop(conn);
    assert_eq!(reader.join().expect("reader"), payload.len());
    let after = s.sample();
    for key in ["network.sent", "network.recv"] {
        let grew = after.get(key).expect(key) - before.get(key).expect(key);
        assert!(grew >= payload.len() as f64, "{key} grew by {grew}");
    }
    assert!(after.get("network.tcpRetransmits").expect("retransmits") >= 0.0);
}

fn diskstats_sectors_written() -> u64 {
    std::fs::read_to_string("/proc/diskstats")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(2)?;
            if ["loop", "ram", "zram"].iter().any(|p| name.starts_with(p)) {
                return None;
            }
            f.get(9)?.parse::<u64>().ok()
        })
        .sum()
}

#[test]
fn disk_out_grows_after_synced_write() {
    let mut s = sampler();
    let before = s.sample();
    assert!(before
        .get("disk./.usagePercent")
        .is_some_and(|p| (0.0..=100.0).contains(&p)));
    assert!(before.get("disk./.usageGB").is_some_and(|g| g > 0.0));
    let raw_before = diskstats_sectors_written();

    // The target dir is on the build's disk; /tmp may be a tmpfs.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("blob");
    let mut f = std::fs::File::create(&path).expect("create");
    let chunk: Vec<u8> = (0..1 << 20)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for _ in 0..20 {
        f.write_all(&chunk).expect("write");
    }
    f.sync_all().expect("fsync");
    drop(f);

    let after = s.sample();
    let raw_mb = (diskstats_sectors_written() - raw_before) as f64 * 512.0 / (1024.0 * 1024.0);
    let Some(out_before) = before.get("disk.out") else {
        // No real block device is visible (some containers): the keys must then be absent
        // together, and nothing else about I/O can be checked.
        assert!(after.get("disk.out").is_none() && after.get("disk.in").is_none());
        eprintln!("no block devices visible; disk.in/out not emitted");
        return;
    };
    let grew = after.get("disk.out").expect("disk.out") - out_before;
    if raw_mb >= 16.0 {
        // The kernel saw the write: our total must show (nearly all of) it.
        assert!(
            grew >= 16.0,
            "disk.out grew {grew} MiB, /proc/diskstats {raw_mb} MiB"
        );
        assert!(
            grew <= raw_mb + 1.0,
            "disk.out grew {grew} MiB > /proc/diskstats {raw_mb} MiB"
        );
    } else {
        // Stats do not move for this filesystem (e.g. overlay on a virtual device).
        eprintln!("block-device stats moved only {raw_mb} MiB; checking monotonicity only");
        assert!(grew >= 0.0);
    }
    // per-device keys sum to the totals
    #[allow(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "a metric key, not a file name"
    )]
    let per_dev: f64 = after
        .values
        .iter()
        .filter(|(k, _)| k.starts_with("disk.") && k.ends_with(".out") && k != "disk.out")
        .map(|(_, v)| v)
        .sum();
    assert!((per_dev - after.get("disk.out").expect("disk.out")).abs() < 1e-6);
    assert!(!after
        .values
        .iter()
        .any(|(k, _)| k.starts_with("disk.loop") || k.starts_with("disk.zram")));
}

/// A child with a known number of threads and one grandchild process.
fn spawn_threaded_child(threads: usize) -> (Child, u64) {
    let script = format!(
        "import subprocess, threading, sys, time\n\
         p = subprocess.Popen(['sleep', '30'])\n\
         ev = threading.Event()\n\
         ts = [threading.Thread(target=ev.wait) for _ in range({threads})]\n\
         [t.start() for t in ts]\n\
         print('ready', flush=True)\n\
         sys.stdin.read()\n\
         ev.set(); p.kill()\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    assert_eq!(line.trim(), "ready");
    // python main thread + workers, plus the single-threaded `sleep`
    (child, threads as u64 + 2)
}

fn proc_threads(pid: u32) -> u64 {
    sampler::proc_status(pid, "Threads:").expect("Threads")
}

#[test]
fn threads_of_monitored_child_tree() {
    let (mut child, expected) = spawn_threaded_child(5);
    let pid = child.id();
    assert_eq!(proc_threads(pid), expected - 1, "python itself");
    let mut s = Sampler::new(SamplerOptions {
        pid: Some(pid),
        ..SamplerOptions::default()
    });
    let first = s.sample();
    assert_eq!(first.get("proc.cpu.threads"), Some(expected as f64));
    assert!(first.get("cpu").is_none(), "process cpu needs two readings");
    std::thread::sleep(Duration::from_millis(200));
    let second = s.sample();
    assert_eq!(second.get("proc.cpu.threads"), Some(expected as f64));
    let cpu = second.get("cpu").expect("cpu on second sample");
    assert!((0.0..50.0).contains(&cpu), "idle child uses {cpu}% cpu");
    let rss = second.get("proc.memory.rssMB").expect("rss");
    assert!(rss > 1.0 && rss < 500.0, "{rss}");
    let cores = second
        .values
        .iter()
        .filter(|(k, _)| k.ends_with(".cpu_percent"))
        .count();
    let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let cpu_lines = stat
        .lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    assert_eq!(cores, cpu_lines);
    assert!(second
        .get("cpu.0.cpu_percent")
        .is_some_and(|p| (0.0..=100.0).contains(&p)));

    drop(child.stdin.take()); // EOF: the child exits
    child.wait().expect("wait");
    let gone = s.sample();
    assert!(gone.get("proc.cpu.threads").is_none());
    assert!(
        gone.errors
            .iter()
            .any(|(f, e)| f == "cpu" && e.contains("is not running")),
        "{:?}",
        gone.errors
    );
    // host-wide keys keep coming
    assert!(gone.get("memory_percent").is_some());
}

/// utime + stime of `pid`, in clock ticks.
fn proc_ticks(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').expect(")") + 1..];
    let f: Vec<f64> = rest
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // after ")": state(skipped, not a number) ppid … utime is field 14, i.e. index 10 here
    f[10] + f[11]
}

#[test]
fn busy_child_cpu_is_reported() {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import time\nend = time.time() + 3\nwhile time.time() < end: pass\n",
        ])
        .spawn()
        .expect("python3");
    let pid = child.id();
    let mut s = Sampler::new(SamplerOptions {
        pid: Some(pid),
        ..SamplerOptions::default()
    });
    s.sample();
    let (t0, w0) = (proc_ticks(pid), std::time::Instant::now());
    std::thread::sleep(Duration::from_secs(1));
    let cpu = s.sample().get("cpu").expect("cpu");
    let (t1, w1) = (proc_ticks(pid), std::time::Instant::now());
    child.wait().expect("wait");
    // the same quantity measured independently: CPU seconds / wall seconds / capacity
    let ticks_per_sec = 100.0; // USER_HZ, fixed for /proc on Linux
    let capacity = cpu_capacity(s.host_info().cpu_count);
    let expected = (t1 - t0) / ticks_per_sec / (w1 - w0).as_secs_f64() / capacity * 100.0;
    // On a loaded machine the child may get little CPU: it shows up where it had
    // some, and the reading is what /proc says it had.
    assert!(
        expected <= 2.0 || cpu > 1.0,
        "a spinning child shows up: {cpu} ({expected})"
    );
    assert!(
        (cpu - expected).abs() < 5.0 + expected * 0.2,
        "cpu {cpu} vs independently measured {expected}"
    );
}

const EXPOSITION: &str = "# HELP app_requests_total Requests.\n# TYPE app_requests_total counter\napp_requests_total{code=\"200\",path=\"/a\"} 10\napp_requests_total{code=\"500\",path=\"/a\"} 2\n# TYPE app_temp gauge\napp_temp 36.6\n# TYPE other_metric gauge\nother_metric 1\nuntyped_thing 5\n";

#[test]
fn openmetrics_endpoint_is_scraped_and_filtered() {
    let server = serve(Duration::ZERO, |_| Some(EXPOSITION.to_string()));
    let url = server.url("/metrics");
    let mut s = Sampler::new(SamplerOptions {
        openmetrics: vec![("local".to_string(), url)],
        openmetrics_filter: Some(Regex::new(r"^local\.app_").expect("regex")),
        ..SamplerOptions::default()
    });
    assert!(
        s.families().contains(&"openmetrics:local"),
        "{:?}",
        s.unavailable()
    );
    for _ in 0..2 {
        let sample = s.sample();
        let om: Vec<(&str, f64)> = sample
            .values
            .iter()
            .filter(|(k, _)| k.starts_with("openmetrics."))
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            om,
            [
                ("openmetrics.local.app_requests_total.0", 10.0),
                ("openmetrics.local.app_requests_total.1", 2.0),
                ("openmetrics.local.app_temp.0", 36.6),
            ]
        );
    }
}

#[test]
fn refused_endpoint_is_reported_not_fatal() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    // the listener is dropped: connecting now is refused
    let mut s = Sampler::new(SamplerOptions {
        openmetrics: vec![(
            "down".to_string(),
            format!("http://127.0.0.1:{port}/metrics"),
        )],
        ..SamplerOptions::default()
    });
    // Endpoints are not probed at start: the first sample reports it.
    let sample = s.sample();
    let (family, why) = sample
        .errors
        .iter()
        .find(|(f, _)| f == "openmetrics:down")
        .expect("down endpoint reported");
    assert_eq!(family, "openmetrics:down");
    assert!(why.contains("refused"), "{why}");
    assert!(sample.get("memory_percent").is_some());
    assert!(!sample
        .values
        .iter()
        .any(|(k, _)| k.starts_with("openmetrics.")));
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

#[test]
fn missing_accelerators_are_listed_as_unavailable() {
    let s = sampler();
    for family in ["nvidia", "amd"] {
        let sampled = s.families().contains(&family);
        let why = s
            .unavailable()
            .iter()
            .find(|(f, _)| f == family)
            .map(|(_, w)| w.as_str());
        assert!(
            sampled != why.is_some(),
            "{family} must be either sampled or unavailable"
        );
        if let Some(why) = why {
            assert!(!why.is_empty());
        }
    }
    // The amdgpu driver is checked first, so nothing AMD-specific is loaded without it.
    let amdgpu_live =
        std::fs::read_to_string("/sys/module/amdgpu/initstate").is_ok_and(|s| s.contains("live"));
    if !amdgpu_live && std::env::var_os("LEET_SYSFS_ROOT").is_none() {
        let why = s
            .unavailable()
            .iter()
            .find(|(f, _)| f == "amd")
            .map(|(_, w)| w.as_str());
        assert_eq!(
            why,
            Some("amdgpu driver not loaded (/sys/module/amdgpu/initstate)")
        );
    } else if !on_path("rocm-smi") {
        let why = s
            .unavailable()
            .iter()
            .find(|(f, _)| f == "amd")
            .map(|(_, w)| w.as_str());
        assert!(
            why.is_none_or(|w| w.ends_with("rocm-smi not found on PATH")),
            "{why:?}"
        );
    }
    if !s.families().contains(&"nvidia") {
        let why = s
            .unavailable()
            .iter()
            .find(|(f, _)| f == "nvidia")
            .map(|(_, w)| w.as_str());
        assert!(why.is_some_and(|w| w.starts_with("nvml")), "{why:?}");
    }
    for family in ["cpu", "memory", "disk", "network"] {
        assert!(
            s.families().contains(&family),
            "{family}: {:?}",
            s.unavailable()
        );
    }
    let info = s.host_info();
    assert!(info.cpu_count >= 1 && info.cpu_count_logical >= info.cpu_count);
    assert!(info.memory_total > 0);
    assert!(!info.hostname.is_empty());
}

#[test]
fn spawned_sampler_ticks_and_stops() {
    let (tx, rx) = mpsc::channel();
    let mut n = 0;
    let handle = spawn_sampler(sampler(), Duration::from_millis(100), move |sample| {
        n += 1;
        tx.send(sample.timestamp).is_ok() && n < 4
    });
    handle.join().expect("sampler thread");
    let ts: Vec<f64> = rx.try_iter().collect();
    assert_eq!(ts.len(), 4);
    // Absolute deadlines (no drift) are tested on a manual clock (sampler::worker).
    eprintln!("sample times {ts:?}");
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");
}

#[test]
fn sample_command_writes_json_lines() {
    let mut out = Vec::new();
    leet_sampler::run_sample_command(
        SamplerOptions {
            // Each source has half the interval to answer: 200 ms leaves room on
            // a machine busy with a parallel test run (at 50 ms the memory
            // reading was sometimes late, and left out of a line).
            interval: Duration::from_millis(400),
            ..SamplerOptions::default()
        },
        Some(2),
        true,
        &mut out,
    )
    .expect("sample command");
    let text = String::from_utf8(out).expect("utf8");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert!(l["timestamp"].as_f64().is_some_and(|t| t > 1.6e9));
        assert!(l["memory_percent"].is_number());
        assert!(l["proc.cpu.threads"].is_u64());
    }
    assert!(lines[0].get("cpu").is_none());
    assert!(lines[1]["cpu"].is_number());
}

#[test]
fn oversized_response_is_rejected() {
    let line = "# TYPE big gauge\n";
    let mut body = String::from(line);
    while body.len() <= 5 << 20 {
        body.push_str("big{i=\"0123456789\"} 1\n");
    }
    let server = serve(Duration::ZERO, move |_| Some(body.clone()));
    let url = server.url("/metrics");
    let mut s = Sampler::new(SamplerOptions {
        openmetrics: vec![("big".to_string(), url)],
        ..SamplerOptions::default()
    });
    // Endpoints are not probed at start: the first sample reports it, or, where
    // reading the body missed that sample's deadline (a loaded machine), a later one.
    let why = (0..20).find_map(|_| {
        s.sample()
            .errors
            .iter()
            // Late or still busy: the reading had not ended by that sample.
            .find(|(f, w)| {
                f == "openmetrics:big" && !w.starts_with("late:") && !w.starts_with("busy:")
            })
            .map(|(_, w)| w.clone())
    });
    assert!(
        why.as_ref()
            .is_some_and(|w| w.contains("larger than 4194304 bytes")),
        "{why:?}"
    );
}
