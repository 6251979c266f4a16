//! `leet sample --dcgm-exporter URL` against a fake endpoint on 127.0.0.1 serving the
//! recorded dcgm-exporter scrape of an L4 (`tests/fixtures/devices/
//! openmetrics-dcgm-exporter-l4.txt`, see its README) or a Prometheus query API answer.
//! The expected keys are built here from the recorded lines with the reference's mapping
//! (spec §5, W&B `dcgm_exporter.go`) plus leet's documented additions, so every value is
//! checked against the input. Also: an endpoint that stops answering, one that is down,
//! one without DCGM series, and the flag absent.

mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::sampler::{self, serve, Run};
use serde_json::{Map, Value};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/devices")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (DCGM field, key suffix, factor): the reference's table, ratios in %, and leet's
/// `memoryClock`.
const MAPPING: [(&str, &str, f64); 24] = [
    ("DCGM_FI_DEV_GPU_TEMP", "temp", 1.0),
    ("DCGM_FI_DEV_POWER_USAGE", "powerWatts", 1.0),
    ("DCGM_FI_DEV_GPU_UTIL", "gpu", 1.0),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "memory", 1.0),
    ("DCGM_FI_DEV_SM_CLOCK", "smClock", 1.0),
    ("DCGM_FI_DEV_MEM_CLOCK", "memoryClock", 1.0),
    ("DCGM_FI_DEV_FB_USED", "memoryUsed", 1.0),
    ("DCGM_FI_DEV_FB_TOTAL", "memoryTotal", 1.0),
    ("DCGM_FI_DEV_FB_FREE", "memoryFree", 1.0),
    ("DCGM_FI_DEV_MEMORY_TEMP", "memoryTemp", 1.0),
    ("DCGM_FI_DEV_GPU_MAX_OP_TEMP", "maxOpTemp", 1.0),
    ("DCGM_FI_DEV_MEM_MAX_OP_TEMP", "memoryMaxOpTemp", 1.0),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "totalEnergyConsumption",
        1.0,
    ),
    ("DCGM_FI_PROF_SM_ACTIVE", "smActive", 100.0),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "smOccupancy", 100.0),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "pipeTensorActive", 100.0),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "dramActive", 100.0),
    ("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "pipeFp64Active", 100.0),
    ("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "pipeFp32Active", 100.0),
    ("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "pipeFp16Active", 100.0),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "pcieTxBytes", 1.0),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "pcieRxBytes", 1.0),
    ("DCGM_FI_PROF_NVLINK_TX_BYTES", "nvlinkTxBytes", 1.0),
    ("DCGM_FI_PROF_NVLINK_RX_BYTES", "nvlinkRxBytes", 1.0),
];

/// The `gpu.N.*` values the recorded scrape must give.
fn expected_from_recording(text: &str) -> BTreeMap<String, f64> {
    // name{...gpu="N"...} value — every sample line of the recording has that shape.
    let line =
        regex::Regex::new(r#"^(DCGM_FI_\w+)\{[^}]*\bgpu="(\d+)"[^}]*\} (\S+)$"#).expect("regex");
    let mut fields: BTreeMap<(String, String), f64> = BTreeMap::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let c = line
            .captures(l)
            .unwrap_or_else(|| panic!("unexpected line {l:?}"));
        fields.insert(
            (c[2].to_string(), c[1].to_string()),
            c[3].parse().expect("value"),
        );
    }
    let mut want = BTreeMap::new();
    for ((gpu, name), v) in &fields {
        if let Some((_, key, factor)) = MAPPING.iter().find(|(n, _, _)| n == name) {
            want.insert(format!("gpu.{gpu}.{key}"), v * factor);
        }
    }
    // leet's additions: the NVML-style memory keys and energy in J.
    let f = |gpu: &str, n: &str| fields.get(&(gpu.to_string(), n.to_string())).copied();
    let used = f("0", "DCGM_FI_DEV_FB_USED").expect("FB_USED recorded");
    let total = used
        + f("0", "DCGM_FI_DEV_FB_FREE").expect("FB_FREE recorded")
        + f("0", "DCGM_FI_DEV_FB_RESERVED").expect("FB_RESERVED recorded");
    want.insert("gpu.0.memoryAllocatedBytes".into(), used * 1024.0 * 1024.0);
    want.insert("gpu.0.memoryAllocated".into(), used / total * 100.0);
    // The page has no FB_TOTAL: the size is the sum the share is of.
    want.insert("gpu.0.memoryTotal".into(), total);
    want.insert(
        "gpu.0.energyJoules".into(),
        f("0", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").expect("energy recorded") / 1000.0,
    );
    want
}

/// `leet sample --json --interval 300ms --count N ARGS`, which must succeed.
fn leet_sample(args: &[&str], count: u32) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let count = count.to_string();
    let mut cmd = sampler::leet_sample(
        &["--json", "--interval", "300ms", "--count", &count],
        &[] as &[(&str, &str)],
    );
    cmd.args(args);
    let finished = sampler::run_to_end(cmd, dir.path());
    finished.assert_success();
    finished.json()
}

fn gpu_values(s: &Map<String, Value>) -> BTreeMap<String, f64> {
    s.iter()
        .filter(|(k, _)| k.starts_with("gpu."))
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or_else(|| panic!("{k}: {v}"))))
        .collect()
}

fn assert_same(what: &str, got: &BTreeMap<String, f64>, want: &BTreeMap<String, f64>) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: keys"
    );
    for (k, w) in want {
        assert!(
            (got[k] - w).abs() <= w.abs() * 1e-12,
            "{what}: {k} = {}, want {w}",
            got[k]
        );
    }
}

fn lines_starting<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn recorded_l4_scrape_maps_to_wandb_gpu_keys() {
    let text: &'static str =
        Box::leak(fixture("openmetrics-dcgm-exporter-l4.txt").into_boxed_str());
    let want = expected_from_recording(text);
    // Spot checks that the table above was applied to real lines.
    assert_eq!(want["gpu.0.smClock"], 210.0);
    assert_eq!(want["gpu.0.powerWatts"], 16.365);
    assert_eq!(want["gpu.0.pcieTxBytes"], 112_603.0);
    assert!(
        !want.keys().any(|k| k.contains("/l:")),
        "Hostname is not `hostname`"
    );
    let server = serve(Duration::ZERO, move |_| Some(text.to_string()));
    let url = server.url("/metrics");
    let run = leet_sample(&["--dcgm-exporter", &url], 3);
    assert!(
        lines_starting(&run.stderr, "dcgm-exporter:").is_empty(),
        "{}",
        run.stderr
    );
    assert_eq!(run.samples.len(), 3, "{}", run.stderr);
    for (i, s) in run.samples.iter().enumerate() {
        assert_same(&format!("sample {i}"), &gpu_values(s), &want);
        assert!(s.contains_key("memory_percent"));
    }
    // once at detection, once per sample
    assert_eq!(server.requests(), 4);
}

#[test]
fn prometheus_query_api_answer_gets_the_node_label() {
    let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"1","node":"l1337","modelName":"NVIDIA H100 80GB HBM3"},"value":[1700000000.123,"97"]},{"metric":{"__name__":"DCGM_FI_PROF_SM_OCCUPANCY","gpu":"1","node":"l1337"},"value":[1700000000.123,"0.4"]},{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","device":"nvidia7","node":"l1338"},"value":[1700000000.123,"12"]}]}}"#;
    let server = serve(Duration::ZERO, move |_| Some(body.to_string()));
    let url = server.url("/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL%7Bcluster%3D%22g%22%7D");
    let run = leet_sample(&["--dcgm-exporter", &url], 2);
    let want: BTreeMap<String, f64> = [
        ("gpu.1.gpu/l:l1337", 97.0),
        ("gpu.1.smOccupancy/l:l1337", 40.0),
        ("gpu.7.gpu/l:l1338", 12.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(run.samples.len(), 2, "{}", run.stderr);
    for (i, s) in run.samples.iter().enumerate() {
        assert_same(&format!("sample {i}"), &gpu_values(s), &want);
    }
}

#[test]
fn endpoint_that_stops_answering_costs_one_timeout_then_backs_off() {
    let text: &'static str =
        Box::leak(fixture("openmetrics-dcgm-exporter-l4.txt").into_boxed_str());
    // Detection and the first sample are answered; then every request hangs.
    // (a request answered None is read and never answered)
    let server = serve(Duration::ZERO, move |n| (n < 2).then(|| text.to_string()));
    let url = server.url("/metrics");
    let run = leet_sample(&["--dcgm-exporter", &url], 5);
    assert_eq!(run.samples.len(), 5, "{}", run.stderr);
    assert!(gpu_values(&run.samples[0]).contains_key("gpu.0.temp"));
    for (i, s) in run.samples.iter().enumerate().skip(1) {
        assert!(gpu_values(s).is_empty(), "sample {i}: {s:?}");
    }
    // the other families keep reporting
    assert!(run.samples.iter().all(|s| s.contains_key("memory_percent")));
    // The hung scrape runs on its own worker: the sample it was asked for says it is
    // late, later ones that it is still busy (no second request queues behind it),
    // and its own timeout error, if it lands before the run ends, is reported once.
    let errors = lines_starting(&run.stderr, "dcgm-exporter: error: ");
    assert!(!errors.is_empty(), "{}", run.stderr);
    assert!(errors[0].contains("late:"), "{}", errors[0]);
    assert!(
        errors
            .iter()
            .all(|e| e.contains("late:") || e.contains("busy:") || e.contains(": read")),
        "{}",
        run.stderr
    );
    assert!(errors.iter().filter(|e| e.contains(": read")).count() <= 1);
    // No sample waits for the hung endpoint: the late and busy errors above (the
    // deadline itself is tested on a manual clock, sampler::worker).
    eprintln!("5 samples at 300 ms in {:?}", run.elapsed);
    assert_eq!(server.requests(), 3);
}

#[test]
fn down_empty_and_absent_endpoints_are_reported_in_one_line() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let run = leet_sample(&["--dcgm-exporter", &url], 2);
    let errors = lines_starting(&run.stderr, "dcgm-exporter: ");
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with(&format!("dcgm-exporter: error: scrape '{url}': "))
            && errors[0].contains("refused")
            && errors[0].ends_with("(retrying every 30 s)")
            // The URL said once, not once per layer of the error.
            && errors[0].matches(url.as_str()).count() == 1,
        "{}",
        errors[0]
    );
    assert!(run.samples.iter().all(|s| s.contains_key("memory_percent")));

    let node: &'static str =
        Box::leak(fixture("openmetrics-node-exporter-e2e-linux.txt").into_boxed_str());
    let server = serve(Duration::ZERO, move |_| Some(node.to_string()));
    let url = server.url("/metrics");
    let run = leet_sample(&["--dcgm-exporter", &url], 1);
    assert_eq!(
        lines_starting(&run.stderr, "dcgm-exporter: "),
        [
            format!("dcgm-exporter: not available: {url} has no DCGM_FI_* series with a gpu label")
                .as_str()
        ]
    );

    let run = leet_sample(&[], 1);
    assert_eq!(
        lines_starting(&run.stderr, "dcgm-exporter: "),
        ["dcgm-exporter: not available: not enabled (--dcgm-exporter URL)"]
    );
    let run = leet_sample(&["--dcgm-exporter", "ftp://example.invalid/metrics"], 1);
    let errors = lines_starting(&run.stderr, "dcgm-exporter: not available: ");
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].contains("only http:// and https://"),
        "{}",
        errors[0]
    );
    // HTTPS is scraped (tls.rs in the sampler's tests has a server): a host that
    // does not resolve is one error line, retried, not a refusal of the URL.
    let url = "https://example.invalid/metrics";
    let run = leet_sample(&["--dcgm-exporter", url], 1);
    let errors = lines_starting(&run.stderr, "dcgm-exporter: ");
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with(&format!("dcgm-exporter: error: scrape '{url}': ")),
        "{}",
        errors[0]
    );
}
