//! Parser tests against real tool outputs in `tests/fixtures/devices/` (see its README).

use leet_sampler::{
    amd_gpu_info, amd_metrics, openmetrics_values, parse_exposition, parse_rocm_smi_json,
    parse_rocm_smi_text, rocm_driver_version, KeyIndex, MetricKind,
};
use regex::Regex;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/devices/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn amd(name: &str) -> Vec<(String, f64)> {
    let cards = parse_rocm_smi_json(&fixture(name)).expect("valid rocm-smi json");
    let mut out = Vec::new();
    amd_metrics(&cards, &mut out);
    out
}

fn get(out: &[(String, f64)], key: &str) -> Option<f64> {
    out.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn rocm_571_mi100_six_cards() {
    let out = amd("rocm-smi-5.7.1-mi100-x6.json");
    // 6 cards × (gpu, memoryAllocated, memoryOverDrive, temp, powerWatts, powerPercent);
    // ROCm 5.7 has no "GPU Memory Read/Write Activity (%)".
    assert_eq!(out.len(), 36);
    assert!(!out
        .iter()
        .any(|(k, _)| k.ends_with("memoryReadWriteActivity")));
    let temps = [30.0, 38.0, 31.0, 36.0, 38.0, 38.0];
    let power = [39.0, 37.0, 35.0, 39.0, 39.0, 40.0];
    for i in 0..6 {
        assert_eq!(get(&out, &format!("gpu.{i}.gpu")), Some(0.0));
        assert_eq!(get(&out, &format!("gpu.{i}.memoryAllocated")), Some(0.0));
        assert_eq!(get(&out, &format!("gpu.{i}.memoryOverDrive")), Some(0.0));
        assert_eq!(
            get(&out, &format!("gpu.{i}.temp")),
            Some(temps[i]),
            "card{i}"
        );
        assert_eq!(
            get(&out, &format!("gpu.{i}.powerWatts")),
            Some(power[i]),
            "card{i}"
        );
        assert!(close(
            get(&out, &format!("gpu.{i}.powerPercent")),
            power[i] / 290.0 * 100.0
        ));
    }
    // the "system" block (driver, PID104225 entry, topology) never becomes a card
    assert!(!out.iter().any(|(k, _)| k.starts_with("gpu.6.")));
    let text = fixture("rocm-smi-5.7.1-mi100-x6.json");
    assert_eq!(rocm_driver_version(&text).as_deref(), Some("6.2.4"));
    let info = amd_gpu_info(&parse_rocm_smi_json(&text).expect("json"), "6.2.4");
    assert_eq!(info.len(), 6);
    assert_eq!(info[0].name, "Arcturus GL-XL [Instinct MI100]");
    assert_eq!(info[0].memory_total, 34_342_961_152);
}

#[test]
fn rocm_602_mi100_four_cards() {
    let out = amd("rocm-smi-6.0.2-mi100-x4.json");
    assert_eq!(out.len(), 24);
    assert_eq!(get(&out, "gpu.0.temp"), Some(53.0));
    assert_eq!(get(&out, "gpu.1.temp"), Some(54.0));
    assert_eq!(get(&out, "gpu.2.temp"), Some(55.0));
    assert_eq!(get(&out, "gpu.3.temp"), Some(50.0));
    assert_eq!(get(&out, "gpu.1.powerWatts"), Some(44.0));
    assert!(close(get(&out, "gpu.1.powerPercent"), 44.0 / 290.0 * 100.0));
    assert_eq!(get(&out, "gpu.3.memoryAllocated"), Some(0.0));
    assert_eq!(get(&out, "gpu.4.gpu"), None);
}

#[test]
fn rocm_571_rx6700xt_single_card() {
    let out = amd("rocm-smi-5.7.1-rx6700xt.json");
    assert_eq!(out.len(), 6);
    assert_eq!(get(&out, "gpu.0.gpu"), Some(0.0));
    assert_eq!(get(&out, "gpu.0.memoryAllocated"), Some(0.0)); // "GPU memory use (%)"
    assert_eq!(get(&out, "gpu.0.temp"), Some(46.0)); // memory sensor, not edge (45)
    assert_eq!(get(&out, "gpu.0.powerWatts"), Some(6.0));
    assert!(close(get(&out, "gpu.0.powerPercent"), 6.0 / 211.0 * 100.0));
}

#[test]
fn rocm_612_rx6700xt_new_names() {
    let out = amd("rocm-smi-6.1.2-rx6700xt.json");
    // ROCm 6.1 renames memory use to "GPU Memory Allocated (VRAM%)" and adds R/W activity
    assert_eq!(get(&out, "gpu.0.memoryAllocated"), Some(12.0));
    assert_eq!(get(&out, "gpu.0.memoryReadWriteActivity"), Some(0.0));
    assert_eq!(get(&out, "gpu.0.temp"), Some(46.0));
    assert_eq!(get(&out, "gpu.0.powerWatts"), Some(6.0));
    assert_eq!(out.len(), 7);
    let info = amd_gpu_info(
        &parse_rocm_smi_json(&fixture("rocm-smi-6.1.2-rx6700xt.json")).expect("json"),
        "6.3.6",
    );
    assert_eq!(info[0].name, "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"); // "Card Series"
}

#[test]
fn rocm_mi300x_text_capture() {
    let cards = parse_rocm_smi_text(&fixture("rocm-smi-6.x-mi300x-x4.txt"));
    assert_eq!(cards.len(), 4);
    assert_eq!(cards[&0]["Card series"], "AMD Instinct MI300X OAM");
    let mut out = Vec::new();
    amd_metrics(&cards, &mut out);
    let temps = [33.0, 34.0, 32.0, 36.0];
    let power = [133.0, 130.0, 131.0, 136.0];
    for i in 0..4 {
        assert_eq!(get(&out, &format!("gpu.{i}.gpu")), Some(0.0));
        assert_eq!(get(&out, &format!("gpu.{i}.memoryAllocated")), Some(0.0));
        assert_eq!(get(&out, &format!("gpu.{i}.temp")), Some(temps[i]));
        // MI300X reports "Current Socket Graphics Package Power (W)"
        assert_eq!(get(&out, &format!("gpu.{i}.powerWatts")), Some(power[i]));
        assert!(close(
            get(&out, &format!("gpu.{i}.powerPercent")),
            power[i] / 750.0 * 100.0
        ));
        // overdrive is "Not supported" on this system: no key
        assert_eq!(get(&out, &format!("gpu.{i}.memoryOverDrive")), None);
    }
    assert_eq!(out.len(), 20);
}

#[test]
fn rocm_json_rejects_garbage() {
    assert!(parse_rocm_smi_json("WARNING: no AMD GPUs").is_err());
    assert!(parse_rocm_smi_json("{}").expect("empty object").is_empty());
}

#[test]
fn node_exporter_exposition() {
    let exp = parse_exposition(&fixture("openmetrics-node-exporter-e2e-linux.txt"));
    assert!(
        exp.errors.is_empty(),
        "{:?}",
        &exp.errors[..exp.errors.len().min(5)]
    );
    assert_eq!(exp.samples.len(), 3027);
    let count = |k: MetricKind| exp.samples.iter().filter(|s| s.kind == k).count();
    assert_eq!(count(MetricKind::Counter), 1429);
    assert_eq!(count(MetricKind::Gauge), 1208);
    assert_eq!(count(MetricKind::Untyped), 390);
    assert_eq!(
        exp.help["node_cpu_seconds_total"],
        "Seconds the CPUs spent in each mode."
    );
    // a label value with spaces and brackets
    let dev = exp
        .samples
        .iter()
        .find(|s| s.name == "node_bcachefs_device_info")
        .expect("bcachefs device info");
    assert!(dev
        .labels
        .contains(&("state".to_string(), "[rw] ro evacuating spare".to_string())));

    let mut index = KeyIndex::new("node");
    let mut out = Vec::new();
    openmetrics_values(&exp, &mut index, None, &mut out);
    assert_eq!(out.len(), 1429 + 1208); // untyped dropped, as the reference does
                                        // label sets of one metric are numbered in order of appearance: cpu0 × 8 modes, then cpu1
    assert_eq!(
        get(&out, "openmetrics.node.node_cpu_seconds_total.0"),
        Some(10870.69)
    );
    assert_eq!(
        get(&out, "openmetrics.node.node_cpu_seconds_total.15"),
        Some(478.69)
    );
    assert_eq!(get(&out, "openmetrics.node.node_load1.0"), Some(0.21));
    assert_eq!(
        get(&out, "openmetrics.node.node_boot_time_seconds.0"),
        Some(1.418_183_276e9)
    );
    assert!(!out
        .iter()
        .any(|(k, _)| k.contains("node_netstat_Icmp6_InErrors")));

    // a second scrape gives the same keys (indices are stable)
    let mut again = Vec::new();
    openmetrics_values(&exp, &mut index, None, &mut again);
    assert_eq!(out, again);

    // the filter is searched in "<endpoint>.<metric>"
    let re = Regex::new(r"^node\.node_load").expect("regex");
    let mut filtered = Vec::new();
    openmetrics_values(&exp, &mut KeyIndex::new("node"), Some(&re), &mut filtered);
    let keys: Vec<&str> = filtered.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "openmetrics.node.node_load1.0",
            "openmetrics.node.node_load15.0",
            "openmetrics.node.node_load5.0"
        ]
    );
}

#[test]
fn dcgm_exporter_exposition() {
    let exp = parse_exposition(&fixture("openmetrics-dcgm-exporter-l4.txt"));
    assert!(exp.errors.is_empty(), "{:?}", exp.errors);
    assert_eq!(exp.samples.len(), 23);
    let power = exp
        .samples
        .iter()
        .find(|s| s.name == "DCGM_FI_DEV_POWER_USAGE")
        .expect("power");
    assert_eq!(power.kind, MetricKind::Gauge);
    assert_eq!(power.value, 16.365);
    assert_eq!(power.labels.len(), 7);
    assert_eq!(power.labels[0], ("gpu".to_string(), "0".to_string()));
    assert!(power
        .labels
        .contains(&("modelName".to_string(), "NVIDIA L4".to_string())));
    let energy = exp
        .samples
        .iter()
        .find(|s| s.name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
        .expect("energy");
    assert_eq!(energy.kind, MetricKind::Counter);
    assert_eq!(energy.value, 4_742_776.0);

    let mut out = Vec::new();
    openmetrics_values(&exp, &mut KeyIndex::new("dcgm"), None, &mut out);
    assert_eq!(out.len(), 23);
    assert_eq!(
        get(&out, "openmetrics.dcgm.DCGM_FI_DEV_SM_CLOCK.0"),
        Some(210.0)
    );
    assert_eq!(
        get(&out, "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0"),
        Some(31.0)
    );
    assert_eq!(
        get(&out, "openmetrics.dcgm.DCGM_FI_DEV_POWER_USAGE.0"),
        Some(16.365)
    );

    let re = Regex::new("PROF_").expect("regex");
    let mut prof = Vec::new();
    openmetrics_values(&exp, &mut KeyIndex::new("dcgm"), Some(&re), &mut prof);
    assert_eq!(prof.len(), 5);
    assert!(prof
        .iter()
        .all(|(k, _)| k.starts_with("openmetrics.dcgm.DCGM_FI_PROF_")));
}
