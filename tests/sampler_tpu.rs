//! Google TPU family end to end: the real `leet sample` binary against a fake PCI tree
//! (`LEET_SYSFS_ROOT`) and a fake libtpu runtime metrics service: a tonic gRPC server
//! on 127.0.0.1, generated from the same `proto/tpu_metric_service.proto` (build.rs puts
//! the server half in `OUT_DIR/tpu_server/`), serving the responses recorded in
//! `tests/fixtures/tpu/` (see the README there for where each comes from).
//!
//! Expected keys are derived here from what the server served, by the spec §8 rules
//! restated in this file; distribution quantiles computed from buckets are the
//! hand-derived values in each fixture's `expect` block.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "common/isolated.rs"]
mod isolated;
#[path = "support/tpu_fake.rs"]
mod tpu_fake;

use tpu_fake::{fake_pci, served, Fake, Runtime, Served};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tpu")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    serde_json::from_str(&text).expect("fixture json")
}

/// Accepts connections and never sends a byte.
fn black_hole() -> (u16, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let h = held.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            h.lock().expect("lock").push(s);
        }
    });
    (port, held)
}

// ---- expected keys, by the spec's rules ----

fn sanitize(label: &str) -> String {
    let s = label
        .trim()
        .to_lowercase()
        .replace('+', "_plus_")
        .replace('%', "pct");
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_');
    if out.is_empty() {
        "unknown".into()
    } else {
        out.into()
    }
}

fn label(m: &Value) -> Option<String> {
    let kv = m.get("kv")?.as_object()?;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(size) = kv.get("buffer-size") {
        return Some(sanitize(&text(size)));
    }
    Some(sanitize(&format!(
        "{}-{}",
        text(&kv["core_type"]),
        text(&kv["device_ordinal"])
    )))
}

/// Every `tpu.*` key `leet sample` must print for these ports, with its value.
fn expected(fx: &Value, devices_per_chip_duty: i64) -> BTreeMap<String, f64> {
    let gauges: &[(&str, &str)] = &[
        ("tpu.runtime.hbm.memory.total.bytes", "hbmCapacityTotal"),
        ("tpu.runtime.hbm.memory.usage.bytes", "hbmCapacityUsage"),
        (
            "tpu.runtime.hbm.utilization.percent",
            "runtimeHbmUtilization",
        ),
        (
            "tpu.runtime.tensorcore.idle_duration.seconds",
            "tensorcoreIdleDuration",
        ),
        (
            "tpu.runtime.tensorcore.utilization.percent",
            "tensorcoreUtilization",
        ),
    ];
    let dists: &[(&str, &str, &str)] = &[
        (
            "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution",
            "tpu.bufferTransferLatency",
            "Us",
        ),
        (
            "megascale.dcn_inbound_transfer_latencies.microsecond.cumulative.distribution",
            "tpu.inboundBufferTransferLatency",
            "Us",
        ),
        (
            "megascale.mxla_compute_latencies.microsecond.cumulative.distribution",
            "tpu.hostComputeLatency",
            "Us",
        ),
        (
            "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution",
            "tpu.grpcTcpMinRtt",
            "Us",
        ),
        (
            "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution",
            "tpu.grpcTcpDeliveryRate",
            "Mbps",
        ),
        (
            "hlo.execution.timing.distribution.microseconds",
            "tpu.hloExecTiming",
            "Us",
        ),
    ];
    let num = |m: &Value| {
        m.get("int")
            .and_then(Value::as_f64)
            .or_else(|| m.get("double").and_then(Value::as_f64))
            .expect("gauge value")
    };
    let mut out = BTreeMap::new();
    let mut usage = BTreeMap::new();
    let mut total = BTreeMap::new();
    // Ports in order; the first one to report a key wins.
    for port in fx["ports"].as_array().expect("ports") {
        let metrics = port["metrics"].as_object().expect("metrics");
        for (name, list) in metrics {
            let list = list.as_array().expect("list");
            if let Some((_, suffix)) = gauges.iter().find(|(n, _)| n == name) {
                for m in list {
                    let dev = m["device"].as_i64().expect("device");
                    let v = num(m);
                    out.entry(format!("tpu.{dev}.{suffix}")).or_insert(v);
                    if *suffix == "hbmCapacityUsage" {
                        usage.entry(dev).or_insert(v);
                    }
                    if *suffix == "hbmCapacityTotal" {
                        total.entry(dev).or_insert(v);
                    }
                }
            } else if name == "tpu.runtime.tensorcore.dutycycle.percent" {
                for m in list {
                    let chip = m["device"].as_i64().expect("device");
                    for d in 0..devices_per_chip_duty {
                        out.entry(format!(
                            "tpu.{}.dutyCycle",
                            chip * devices_per_chip_duty + d
                        ))
                        .or_insert(num(m));
                    }
                }
            } else if name == "hlo.queue.size.gauge" {
                for m in list {
                    let key = format!("tpu.hloQueueSize.{}", label(m).expect("label"));
                    out.entry(key).or_insert(num(m));
                }
            } else if let Some((_, base, unit)) = dists.iter().find(|(n, _, _)| n == name) {
                for m in list {
                    let prefix = match label(m) {
                        Some(l) => format!("{base}.{l}"),
                        None => (*base).to_string(),
                    };
                    // Summaries: quantiles as served, mean = sum / count.
                    if let Some(s) = m.get("summary") {
                        let count = s["count"].as_f64().expect("count");
                        if count > 0.0 {
                            out.entry(format!("{prefix}.mean{unit}"))
                                .or_insert(s["sum"].as_f64().expect("sum") / count);
                        }
                        for q in s["quantiles"].as_array().expect("q") {
                            let q0 = q[0].as_f64().expect("q");
                            let Some((stat, _)) =
                                [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p999", 0.999)]
                                    .into_iter()
                                    .find(|(_, x)| *x == q0)
                            else {
                                continue;
                            };
                            out.entry(format!("{prefix}.{stat}{unit}"))
                                .or_insert(q[1].as_f64().expect("v"));
                        }
                    }
                }
            } else {
                panic!("fixture metric {name} has no expectation rule here");
            }
        }
    }
    for (dev, u) in &usage {
        out.insert(format!("tpu.{dev}.memoryUsageBytes"), *u);
        if let Some(t) = total.get(dev).filter(|t| **t > 0.0) {
            out.insert(format!("tpu.{dev}.memoryUsage"), u / t * 100.0);
        }
    }
    // Quantiles of bucketed distributions: derived by hand in the fixture.
    for (k, v) in fx["expect"].as_object().expect("expect") {
        out.insert(k.clone(), v.as_f64().expect("expect value"));
    }
    out
}

// ---- running leet ----

/// The sampling interval of these runs, and the deadline it gives a sample of
/// the runtime's ports (40 % of it): long enough that a fake runtime answering on
/// a loaded machine (a test binary's tests in parallel on two cores) makes it.
const INTERVAL: &str = "1s";
const DEADLINE_MS: u32 = 400;

fn leet(root: &Path, ports: &[u16], host: Option<&str>, count: u32) -> Child {
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    let mut cmd = isolated::leet();
    cmd.args([
        "sample",
        "--json",
        "--count",
        &count.to_string(),
        "--interval",
        INTERVAL,
    ])
    .env("LEET_SYSFS_ROOT", root)
    .env("TPU_RUNTIME_METRICS_PORTS", ports.join(","))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    match host {
        Some(h) => cmd.env("LEET_TPU_METRICS_HOST", h),
        None => cmd.env_remove("LEET_TPU_METRICS_HOST"),
    };
    cmd.spawn().expect("spawn leet")
}

struct Run {
    lines: Vec<Value>,
    stderr: String,
}

fn run_to_end(mut child: Child) -> Run {
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read");
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    let status = child.wait().expect("wait");
    assert!(status.success(), "leet failed: {status}\n{stderr}");
    Run {
        lines: stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect(),
        stderr,
    }
}

fn tpu_keys(line: &Value) -> BTreeMap<String, f64> {
    line.as_object()
        .expect("object")
        .iter()
        .filter(|(k, _)| k.starts_with("tpu."))
        .map(|(k, v)| (k.clone(), v.as_f64().expect("number")))
        .collect()
}

fn assert_same(got: &BTreeMap<String, f64>, want: &BTreeMap<String, f64>, what: &str) {
    let g: BTreeSet<&String> = got.keys().collect();
    let w: BTreeSet<&String> = want.keys().collect();
    assert_eq!(
        g.difference(&w).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "{what}: keys not expected"
    );
    assert_eq!(
        w.difference(&g).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "{what}: keys missing"
    );
    for (k, w) in want {
        let g = got[k];
        assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}: {k} = {g}, served {w}"
        );
    }
}

/// Run leet for 3 samples against the fixture's ports; returns the calls each port got.
fn check_fixture(name: &str, duty_fanout: i64, host: Option<&str>) -> Vec<usize> {
    let fx = fixture(name);
    let root = tempfile::tempdir().expect("tmp");
    fake_pci(root.path(), &fx);
    let rt = Runtime::new();
    let fakes: Vec<(u16, Fake)> = fx["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .map(|p| rt.serve(served(p)))
        .collect();
    let ports: Vec<u16> = fakes.iter().map(|(p, _)| *p).collect();
    let run = run_to_end(leet(root.path(), &ports, host, 3));
    assert_eq!(run.lines.len(), 3, "{}", run.stderr);
    assert!(
        !run.stderr.contains("tpu:"),
        "{name}: tpu reported a problem:\n{}",
        run.stderr
    );
    let want = expected(&fx, duty_fanout);
    for (i, line) in run.lines.iter().enumerate() {
        assert_same(&tpu_keys(line), &want, &format!("{name} sample {i}"));
    }
    let calls: Vec<usize> = fakes
        .iter()
        .map(|(_, f)| f.calls.load(Ordering::SeqCst))
        .collect();
    assert!(
        calls.iter().all(|c| *c > 0),
        "{name}: a port was never asked"
    );
    calls
}

#[test]
fn v6e_runtime_capture_maps_to_spec_keys() {
    // 4 chips, 1 device each, 31.25 GiB HBM; summaries; TensorCore utilisation listed.
    let calls = check_fixture("v6e-4.json", 1, Some("127.0.0.1"));
    // One ListSupportedMetrics, then exactly the listed names each sample.
    let listed = fixture("v6e-4.json")["ports"][0]["supported"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(calls, [1 + 3 * listed]);
}

#[test]
fn v3_duty_cycle_fans_out_and_bucketed_distributions_are_summarised() {
    // 4 chips, 2 devices each (duty cycle per chip), ListSupportedMetrics unimplemented,
    // bucketed distributions (explicit and exponential), kv-list labels, queue sizes.
    let calls = check_fixture("v3-8.json", 2, Some("localhost"));
    // Without a supported list, leet asks for all 15 runtime metrics it knows once,
    // then only for the ones served (NOT_FOUND is not asked again).
    let served = fixture("v3-8.json")["ports"][0]["metrics"]
        .as_object()
        .map_or(0, serde_json::Map::len);
    assert_eq!(calls, [1 + 15 + 2 * served]);
}

#[test]
fn two_runtime_ports_are_merged_first_port_wins() {
    // v4-8 as two PyTorch/XLA processes: devices 0-1 on one port, 2-3 on the other,
    // which also (wrongly) reports device 1: the first port's value is kept.
    let fx = fixture("v4-8-two-ports.json");
    assert_eq!(fx["ports"].as_array().map(Vec::len), Some(2));
    let _ = check_fixture("v4-8-two-ports.json", 1, None);
    let want = expected(&fx, 1);
    assert_eq!(want.get("tpu.1.hbmCapacityUsage"), Some(&8_522_039_296.0));
    assert_eq!(want.get("tpu.3.memoryUsage"), Some(&100.0));
    assert!(want.contains_key("tpu.hloQueueSize.tensor_core_2"));
    assert!(want.contains_key("tpu.grpcTcpMinRtt.p999Us"));
}

fn proc_status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("status field")
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(Iterator::count)
        .expect("fds")
}

#[test]
fn a_runtime_that_stops_answering_costs_no_time_threads_or_memory() {
    let fx = fixture("v6e-4.json");
    let root = tempfile::tempdir().expect("tmp");
    fake_pci(root.path(), &fx);
    let rt = Runtime::new();
    let (port, fake) = rt.serve(served(&fx["ports"][0]));
    // A second port that accepts and never speaks HTTP/2.
    let (hole, held) = black_hole();
    let count = 14;
    let mut child = leet(root.path(), &[port, hole], Some("127.0.0.1"), count);
    let pid = child.id();
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), line));
        }
    });
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr_pipe.read_to_string(&mut s);
        s
    });

    let mut lines = Vec::new();
    let mut threads = Vec::new();
    let mut fds = Vec::new();
    let mut rss_kb = 0;
    while lines.len() < count as usize {
        let (at, line) = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("a sample within 5 s");
        let v: Value = serde_json::from_str(&line).expect("json");
        lines.push((at, v));
        if lines.len() == 2 {
            // The runtime stops answering from now on.
            fake.hang.store(true, Ordering::SeqCst);
        }
        if lines.len() == 5 || lines.len() == count as usize - 1 {
            threads.push(proc_status(pid, "Threads"));
            fds.push(open_fds(pid));
            rss_kb = rss_kb.max(proc_status(pid, "VmRSS"));
        }
    }
    let status = child.wait().expect("wait");
    let stderr = stderr.join().expect("stderr");
    assert!(status.success(), "{stderr}");

    // Answered before it hung, although the other port never answered. The first
    // reading (connect included) may miss the first sample's deadline; the sampler then
    // hands it out with the second.
    let served_usage = fx["ports"][0]["metrics"]["tpu.runtime.hbm.memory.usage.bytes"][0]["int"]
        .as_f64()
        .expect("usage");
    let answered: Vec<Option<f64>> = lines[..2]
        .iter()
        .map(|(_, v)| tpu_keys(v).get("tpu.0.hbmCapacityUsage").copied())
        .collect();
    assert!(
        answered.contains(&Some(served_usage)),
        "{answered:?} vs {served_usage}"
    );
    // After it hung: no TPU keys, and the host families go on (on time: the
    // deadline and the ticker are tested on a manual clock, sampler::worker). A
    // family that misses its deadline on a loaded machine is left out of that one
    // sample, whatever the TPU does; a hung TPU holding them up would empty most.
    let after: Vec<&Value> = lines.iter().skip(4).map(|(_, v)| v).collect();
    for (i, v) in after.iter().enumerate() {
        assert!(tpu_keys(v).is_empty(), "sample {} has tpu keys: {v}", i + 4);
    }
    for key in ["cpu", "memory_percent"] {
        let with = after.iter().filter(|v| v.get(key).is_some()).count();
        assert!(
            2 * with >= after.len(),
            "{key} in {with} of {}: {after:?}",
            after.len()
        );
    }
    let ts: Vec<f64> = lines
        .iter()
        .map(|(_, v)| v["timestamp"].as_f64().expect("timestamp"))
        .collect();
    let span = ts[ts.len() - 1] - ts[0];
    eprintln!("{count} samples in {span:.2} s at {INTERVAL}");

    // Nothing piles up: threads and sockets flat, memory under a cap.
    eprintln!("leet: threads {threads:?}, open fds {fds:?}, VmRSS {rss_kb} kB, {span:.2} s");
    assert!(threads[1] <= threads[0], "threads grew: {threads:?}");
    assert!(fds[1] <= fds[0] + 2, "open fds grew: {fds:?}");
    assert!(rss_kb < 64 * 1024, "VmRSS {rss_kb} kB over the 64 MB cap");

    // Both problems reported, one line per sample.
    let lines_tpu: Vec<&str> = stderr.lines().filter(|l| l.starts_with("tpu: ")).collect();
    // On a loaded machine a reading may still miss the sampler's deadline now and then
    // (reported as late, its errors then arrive with the next sample).
    let late = lines_tpu
        .iter()
        .filter(|l| l.contains(": late: ") || l.contains(": busy: "))
        .count();
    assert!(late <= 2, "{stderr}");
    let errors: Vec<&str> = (lines_tpu.iter().copied())
        .filter(|l| !l.contains(": late: ") && !l.contains(": busy: "))
        .collect();
    assert!(errors.len() >= count as usize - 2 - late, "{stderr}");
    assert!(
        errors.iter().all(|l| l.starts_with("tpu: error: ")),
        "{stderr}"
    );
    let hole_addr = SocketAddr::from(([127, 0, 0, 1], hole)).to_string();
    let port_addr = SocketAddr::from(([127, 0, 0, 1], port)).to_string();
    assert!(
        errors[0].contains(&format!("{hole_addr}: no answer within {DEADLINE_MS} ms")),
        "{stderr}"
    );
    assert!(
        !errors[0].contains(&port_addr),
        "the answering port was reported: {stderr}"
    );
    assert!(
        errors[errors.len() - 1]
            .contains(&format!("{port_addr}: no answer within {DEADLINE_MS} ms")),
        "{stderr}"
    );
    assert!(!held.lock().expect("lock").is_empty());
}

#[test]
fn no_tpu_on_the_pci_bus_is_one_line_and_connects_to_nothing() {
    let root = tempfile::tempdir().expect("tmp");
    // Only the host bridge and the gVNIC NIC.
    fake_pci(root.path(), &serde_json::json!({ "pci": [] }));
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let run = run_to_end(leet(root.path(), &[port], Some("127.0.0.1"), 2));
    let tpu: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tpu"))
        .collect();
    let dir: PathBuf = root.path().join("bus/pci/devices");
    assert_eq!(
        tpu,
        [format!(
            "tpu: not available: no TPU on the PCI bus ({}); Google device id 0x0042 is not a TPU",
            dir.display()
        )],
        "{}",
        run.stderr
    );
    assert_eq!(run.lines.len(), 2);
    for v in &run.lines {
        assert!(tpu_keys(v).is_empty(), "{v}");
        assert!(v.get("memory_percent").is_some(), "{v}");
    }
    assert!(run.lines[1].get("cpu").is_some());
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "leet connected to the metrics port without a TPU"
    );
}

#[test]
fn a_runtime_that_serves_no_tpu_metric_says_so() {
    // A service that lists no metric and answers NOT_FOUND to every name.
    let fx = fixture("v4-8-two-ports.json");
    let root = tempfile::tempdir().expect("tmp");
    fake_pci(root.path(), &fx);
    let rt = Runtime::new();
    let (port, fake) = rt.serve(Served {
        metrics: BTreeMap::new(),
        supported: Some(Vec::new()),
    });
    let run = run_to_end(leet(root.path(), &[port], None, 2));
    assert!(run.lines.iter().all(|v| tpu_keys(v).is_empty()));
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tpu"))
        .collect();
    let want = format!(
        "tpu: error: scrape 'tpu runtime metrics': 127.0.0.1:{port} answered but served no TPU metric"
    );
    assert_eq!(errors, [want.as_str(), want.as_str()], "{}", run.stderr);
    // An empty list is asked for again each sample (libtpu may still be starting).
    assert_eq!(fake.calls.load(Ordering::SeqCst), 2);
}
