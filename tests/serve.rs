//! `leet serve`, the real binary on 127.0.0.1 (an ephemeral port), its sampler on the
//! repository's fakes (the NVML stub's two GPUs, fake OpenMetrics and dcgm-exporter
//! endpoints, the latter giving keys W&B's `/l:<node>` suffix): the
//! exposition parses and every key `leet sample --json` prints for the same host
//! comes back through the inverse mapping; content negotiation; refused requests;
//! hostile clients (1,000 idle connections, a slowloris, a 1 MiB header, garbage);
//! the default address; `promtool check metrics`; a real Prometheus (Debian's package)
//! scraping it stores every series and reads the OpenMetrics types.
#![cfg(target_os = "linux")]

#[path = "serve/client.rs"]
mod client;
#[path = "serve/cluster.rs"]
mod cluster;
mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use client::{get, request, wait_for, Serve};
use common::{sampler, tool};
use leet::serve::names;
use leet::source::sampler::parse_exposition;

const NODE_PAGE: &str = "# TYPE node_load1 gauge\nnode_load1 0.5\n\
# TYPE node_cpu_seconds_total counter\n\
node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100\n\
node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 7\n";

/// A dcgm-exporter page as Prometheus relabels it (a `node` label per host), so that
/// keys carry W&B's `/l:<node>` suffix.
const DCGM_PAGE: &str = "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n\
DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",node=\"gpu-node-3\"} 45\n\
# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n\
DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",node=\"gpu-node-3\"} 70.5\n\
# TYPE DCGM_FI_DEV_FB_USED gauge\n\
DCGM_FI_DEV_FB_USED{gpu=\"0\",node=\"gpu-node-3\"} 1024\n\
# TYPE DCGM_FI_DEV_FB_FREE gauge\n\
DCGM_FI_DEV_FB_FREE{gpu=\"0\",node=\"gpu-node-3\"} 3072\n\
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n\
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",node=\"gpu-node-3\"} 123456\n";

/// Every line of a text page is a comment or a well-formed sample line, and the
/// repository's own parser reads it without an error.
fn assert_strict(page: &str) {
    let line = regex::Regex::new(
        r#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*",?)*\})? (NaN|[+-]Inf|-?[0-9.]+(e[+-]?[0-9]+)?)$"#,
    )
    .expect("regex");
    for l in page.lines() {
        assert!(
            l.starts_with("# HELP ")
                || l.starts_with("# TYPE ")
                || l == "# EOF"
                || line.is_match(l),
            "malformed line: {l:?}"
        );
    }
    let exp = parse_exposition(page);
    assert!(exp.errors.is_empty(), "{:?}", exp.errors);
}

/// The W&B keys of a page's series (the page's own meta series left out); fails on a
/// series that maps back to no key.
fn keys_of(page: &str) -> BTreeSet<String> {
    let exp = parse_exposition(page);
    (exp.samples.iter())
        .filter(|s| !s.name.starts_with("leet_sample") && !s.name.starts_with("leet_family"))
        .map(|s| {
            names::to_key(&s.name, &s.labels)
                .unwrap_or_else(|| panic!("no key for {} {:?}", s.name, s.labels))
        })
        .collect()
}

/// A process to monitor with `--pid`, killed when dropped.
struct Target(std::process::Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn every_key_of_leet_sample_comes_back_from_the_exposition() {
    let Some(stub) = client::nvml_stub() else {
        return;
    };
    let target = Target(
        Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep"),
    );
    let pid = target.0.id().to_string();
    let endpoint = format!("fake={}", client::fake_endpoint(NODE_PAGE));
    let dcgm = client::fake_endpoint(DCGM_PAGE);
    let lib = stub.path().to_str().expect("utf-8 path").to_string();
    let env = [("LD_LIBRARY_PATH", lib.as_str()), ("NVML_STUB_PID", &pid)];
    let args = [
        "--interval",
        "500ms",
        "--pid",
        &pid,
        "--openmetrics",
        &endpoint,
        "--dcgm-exporter",
        &dcgm,
    ];

    let mut sample = common::isolated::leet();
    sample
        .args(["sample", "--json", "--count", "4"])
        .args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    let out = sample.output().expect("leet sample");
    assert!(out.status.success());
    let mut want = BTreeSet::new();
    // The first sample lacks `cpu` (process CPU needs two readings).
    for line in String::from_utf8_lossy(&out.stdout).lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let obj = v.as_object().expect("object");
        want.extend(obj.keys().filter(|k| *k != "timestamp").cloned());
    }
    for k in [
        "gpu.0.powerWatts",
        "gpu.process.1.gpu",
        "cpu",
        "openmetrics.fake.node_load1.0",
        "gpu.0.powerWatts/l:gpu-node-3",
    ] {
        assert!(want.contains(k), "leet sample lacks {k}: {want:?}");
    }

    let serve = Serve::start(&args, &env);
    let mut seen = BTreeSet::new();
    wait_for("every key of leet sample on the page", || {
        let page = serve.scrape_after(2.0);
        assert_strict(&page);
        seen.extend(keys_of(&page));
        want.is_subset(&seen).then_some(())
    });
    let page = serve.scrape_after(2.0);
    assert!(
        page.contains("leet_gpu_power_watts{gpu=\"0\"} 312.345\n"),
        "{page}"
    );
    assert!(page.contains("leet_process_gpu_utilization_ratio{gpu=\"1\"}"));
    assert!(page.contains("leet_gpu_power_watts{gpu=\"0\",node=\"gpu-node-3\"} 70.5\n"));
    assert!(page
        .contains("leet_gpu_framebuffer_used_bytes{gpu=\"0\",node=\"gpu-node-3\"} 1073741824\n"));
    assert!(page.contains("leet_family_info{family=\"nvidia\",available=\"1\"} 1\n"));
    assert!(
        page.contains("leet_family_info{family=\"amd\",available=\"0\",reason=\""),
        "an unavailable family has an info series with its reason"
    );
    drop(target);
}

#[test]
fn openmetrics_when_asked_and_refusals() {
    let serve = Serve::start(&["--interval", "200ms"], &[]);
    let text = serve.scrape_after(1.0);
    assert_strict(&text);
    assert!(!text.contains("# EOF"));

    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let om = get(serve.addr, "/metrics", &[("Accept", accept)]).expect("scrape");
    assert_eq!(om.status, 200);
    let ct = om.header("content-type").expect("content type");
    assert!(
        ct.starts_with("application/openmetrics-text; version=1.0.0"),
        "{ct}"
    );
    assert!(om.body.ends_with("# EOF\n"), "{}", om.body);
    assert!(om.body.contains("# TYPE leet_samples counter\n"));
    assert!(om.body.contains("# TYPE leet_family info\n"));
    assert_strict(&om.body);

    let plain = get(serve.addr, "/metrics", &[("Accept", "text/plain")]).expect("scrape");
    let ct = plain.header("content-type").expect("content type");
    assert_eq!(ct, "text/plain; version=0.0.4; charset=utf-8");

    let head = request(serve.addr, "HEAD", "/metrics", &[]).expect("head");
    assert_eq!((head.status, head.body.as_str()), (200, ""));
    let index = get(serve.addr, "/", &[]).expect("index");
    assert!(
        index.status == 200 && index.body.contains("/metrics"),
        "{index:?}"
    );
    assert_eq!(get(serve.addr, "/nope", &[]).expect("404").status, 404);
    assert_eq!(get(serve.addr, "/metrics/x", &[]).expect("404").status, 404);
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let r = request(serve.addr, method, "/metrics", &[]).expect(method);
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"));
    }
    let body = b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(
        client::exchange(serve.addr, body).expect("body").status,
        413
    );
    let chunked = b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    assert_eq!(
        client::exchange(serve.addr, chunked)
            .expect("chunked")
            .status,
        400
    );
    let r = request(serve.addr, "POST", "/metrics", &[("Content-Length", "0")]).expect("post");
    assert_eq!(r.status, 405);
    // Keep-alive: two requests on one connection.
    let mut s = TcpStream::connect(serve.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    for _ in 0..2 {
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("write");
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).expect("read");
        assert!(
            buf[..n].starts_with(b"HTTP/1.1 200"),
            "{:?}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
}

#[test]
fn the_default_address_is_loopback() {
    let help = common::isolated::leet()
        .args(["serve", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 127.0.0.1:9837]"), "{help}");
    // Without --listen: 127.0.0.1:9837 (or, where that port is taken, an error naming it).
    let dir = tempfile::tempdir().expect("tempdir");
    let err = dir.path().join("stderr");
    let mut child = common::isolated::leet()
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).expect("stderr"))
        .spawn()
        .expect("spawn");
    let line = wait_for("leet serve to listen or fail", || {
        let text = std::fs::read_to_string(&err).ok()?;
        text.lines()
            .find(|l| l.contains("listening on") || l.contains("cannot listen"))
            .map(str::to_string)
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("127.0.0.1:9837"), "{line}");
    // An address that is none: an error naming it, no panic.
    for bad in ["nonsense", "127.0.0.1:99999", "127.0.0.1", ":"] {
        let out = common::isolated::leet()
            .args(["serve", "--listen", bad])
            .stdin(Stdio::null())
            .output()
            .expect("leet serve");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        assert!(
            err.contains(bad) && !err.contains("panicked"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn promtool_accepts_the_exposition() {
    if !tool::have_tool("promtool", &["--version"]) {
        return;
    }
    let Some(stub) = client::nvml_stub() else {
        return;
    };
    let lib = stub.path().to_str().expect("utf-8 path").to_string();
    let endpoint = format!("fake={}", client::fake_endpoint(NODE_PAGE));
    let serve = Serve::start(
        &["--interval", "300ms", "--openmetrics", &endpoint],
        &[("LD_LIBRARY_PATH", &lib)],
    );
    let page = serve.scrape_after(3.0);
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write page");
    let out = check.wait_with_output().expect("promtool");
    assert!(
        out.status.success(),
        "promtool check metrics:\n{}{}\n{page}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A slowloris: a request head sent a line at a time, for 30 s at most. True when the
/// server closed the connection first.
fn slowloris(addr: std::net::SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return true;
    };
    if s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .is_err()
    {
        return true;
    }
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    for _ in 0..150 {
        let mut buf = [0u8; 1024];
        match s.read(&mut buf) {
            Ok(0) => return true,
            // A 408 or other answer before the head is complete: cut off too.
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => {}
        }
        if s.write_all(b"X-Slow: a\r\n").is_err() {
            return true;
        }
    }
    false
}

/// 1,000, or what this process's descriptor limit leaves room for.
fn flood_size() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `lim`, which outlives the call.
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) } == 0 {
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    };
    1000.min(soft.saturating_sub(64))
}

#[test]
fn hostile_clients_cost_bounded_memory_and_leave_nothing_behind() {
    let serve = Serve::start(&["--interval", "200ms"], &[]);
    let (addr, pid) = (serve.addr, serve.pid());
    let before = serve.scrape_after(2.0);
    let ts0 = client::value_of(&before, "leet_sample_timestamp_seconds").expect("timestamp");
    // The scrape's connection is closed by now once the count stops changing.
    let base_fds = wait_for("a steady descriptor count", || {
        let a = sampler::fds(pid);
        std::thread::sleep(Duration::from_millis(300));
        (sampler::fds(pid) == a).then_some(a)
    });
    let base_rss = sampler::rss_kb(pid).expect("VmRSS");

    // A 1 MiB header: refused (431), or the connection closed while it is sent.
    let big = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    if let Ok(r) = client::exchange(addr, big.as_bytes()) {
        assert_eq!(r.status, 431, "{r:?}");
    }
    // Garbage: 400, or closed.
    if let Ok(r) = client::exchange(addr, b"\x00\x01\xff\xfe\x16\x03\x01 garbage\r\n\r\n") {
        assert_eq!(r.status, 400, "{r:?}");
    }
    let slow = std::thread::spawn(move || slowloris(addr));
    std::thread::sleep(Duration::from_millis(200));
    // 1,000 connections left idle (fewer where this process may not open that many).
    let idle: Vec<TcpStream> = (0..flood_size())
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(idle.len() >= 100, "only {} connections", idle.len());
    let peak = sampler::rss_kb(pid).expect("VmRSS");
    assert!(
        peak < base_rss + 32 * 1024,
        "VmRSS grew from {base_rss} kB to {peak} kB under {} idle connections",
        idle.len()
    );
    assert!(
        slow.join().expect("slowloris thread"),
        "the slowloris was never cut off"
    );
    drop(idle);

    // Served again, and the samples went on meanwhile.
    let ts1 = wait_for("a scrape with a newer sample", || {
        let r = get(addr, "/metrics", &[]).ok()?;
        let ts = client::value_of(&r.body, "leet_sample_timestamp_seconds")?;
        (r.status == 200 && ts > ts0).then_some(ts)
    });
    wait_for("the timestamp to advance again", || {
        let r = get(addr, "/metrics", &[]).ok()?;
        (client::value_of(&r.body, "leet_sample_timestamp_seconds")? > ts1).then_some(())
    });
    wait_for("the descriptors to return to their baseline", || {
        (sampler::fds(pid) <= base_fds).then_some(())
    });
    assert!(serve.stderr().contains("listening on"));
}

/// A Prometheus server, killed and reaped when dropped.
struct Prometheus(std::process::Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A series' name and labels.
type Series = (String, Vec<(String, String)>);

/// The `(name, labels)` of every series the Prometheus at `addr` holds for the job
/// `leet`, its own target labels left out.
fn series_in_prometheus(addr: std::net::SocketAddr) -> Option<Vec<Series>> {
    // {job="leet"}
    let r = get(addr, "/api/v1/query?query=%7Bjob%3D%22leet%22%7D", &[]).ok()?;
    let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
    let result = v.get("data")?.get("result")?.as_array()?;
    let mut out = Vec::new();
    for s in result {
        let metric = s.get("metric")?.as_object()?;
        let name = metric.get("__name__")?.as_str()?.to_string();
        let labels = (metric.iter())
            .filter(|(k, _)| !matches!(k.as_str(), "__name__" | "job" | "instance"))
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        out.push((name, labels));
    }
    Some(out)
}

#[test]
fn prometheus_ingests_every_series() {
    if !tool::have_tool("prometheus", &["--version"]) {
        return;
    }
    let endpoint = format!("fake={}", client::fake_endpoint(NODE_PAGE));
    let serve = Serve::start(&["--interval", "500ms", "--openmetrics", &endpoint], &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: leet\n    \
             static_configs:\n      - targets: [\"{}\"]\n",
            serve.addr
        ),
    )
    .expect("config");
    // A free port for its web API (released just before Prometheus binds it).
    let web = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port");
    let _prometheus = Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn prometheus"),
    );
    // Every series of a page, as Prometheus stored it (it asks for OpenMetrics).
    let want = keys_of(&serve.scrape_after(2.0));
    let mut families = BTreeSet::new();
    wait_for("Prometheus to hold every series of the page", || {
        let mut got = BTreeSet::new();
        for (name, labels) in series_in_prometheus(web)? {
            if name.starts_with("leet_family") || name.starts_with("leet_sample") {
                families.insert(name);
                continue;
            }
            if let Some(key) = names::to_key(&name, &labels) {
                got.insert(key);
            } else if name.starts_with("leet_") {
                panic!("no key for {name} {labels:?}");
            }
        }
        want.is_subset(&got).then_some(())
    });
    for f in [
        "leet_family_info",
        "leet_samples_total",
        "leet_sample_timestamp_seconds",
    ] {
        assert!(families.contains(f), "{f} not in Prometheus: {families:?}");
    }
    // Prometheus asked for OpenMetrics and got it: the family's type is `info`, which
    // only that format has.
    let meta = wait_for("Prometheus's metadata", || {
        let r = get(web, "/api/v1/metadata", &[]).ok()?;
        let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
        let data = v.get("data")?.as_object()?;
        data.contains_key("leet_samples").then(|| data.clone())
    });
    let kind = |family: &str| meta.get(family)?.get(0)?.get("type")?.as_str();
    assert_eq!(kind("leet_family"), Some("info"), "{meta:?}");
    assert_eq!(kind("leet_samples"), Some("counter"), "{meta:?}");
}
