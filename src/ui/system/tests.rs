//! Unit tests of the system chart grouping and titles.

use super::*;

#[test]
fn groups_and_keeps_everything() {
    let keys = [
        "gpu.0.gpu",
        "gpu.1.gpu",
        "gpu.0.temp",
        "cpu",
        "network.sent",
        "network.recv",
        "disk.vda.in",
        "disk./.usagePercent",
        "weird.key",
        "gpu.x.gpu",
    ];
    let charts = group(keys);
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "GPU Utilization",
            "GPU Temperature",
            "Process CPU",
            "Disk Usage",
            "Disk I/O",
            "Network",
            "weird.key",
            "gpu.x.gpu"
        ]
    );
    assert_eq!(charts[0].series.len(), 2);
    let n: usize = charts.iter().map(|c| c.series.len()).sum();
    assert_eq!(n, keys.len());
}

#[test]
fn other_gpu_metrics_share_one_chart_per_metric() {
    let keys = [
        "gpu.0.smActive",
        "gpu.1.smActive",
        "gpu.0.pcieTxBytes",
        "gpu.0.energyJoules",
        "gpu.1.energyJoules",
        "gpu.process.1.gpu",
        "gpu.process.1.temp",
        "gpu.0.gpu",
    ];
    let charts = group(keys);
    let summary: Vec<(&str, Unit, usize)> = charts
        .iter()
        .map(|c| (c.title.as_str(), c.unit, c.series.len()))
        .collect();
    assert_eq!(
        summary,
        [
            ("GPU Utilization", Unit::Percent, 1),
            ("GPU smActive", Unit::Percent, 2),
            ("GPU pcieTxBytes", Unit::BytesPerSec, 1),
            ("GPU energyJoules", Unit::Joules, 2),
            ("GPU Process gpu", Unit::Percent, 1),
            ("GPU Process temp", Unit::Celsius, 1),
        ]
    );
    assert_eq!(charts[1].series[1].label, "gpu 1");
    assert_eq!(charts[4].series[0].key, "gpu.process.1.gpu");
}

#[test]
fn every_device_family_groups_per_metric() {
    let keys = [
        "tpu.0.dutyCycle",
        "tpu.1.dutyCycle",
        "tpu.0.hbmCapacityUsage",
        "tpu.0.tensorcoreIdleDuration",
        "tpu.bufferTransferLatency.mean_us",
        "trn.0.neuroncore_utilization",
        "trn.1.neuroncore_utilization",
        "trn.1.neuroncore_memory_usage.tensors",
        "trn.host_total_memory_usage",
        "ipu.0.ipu utilisation (%)",
        "ipu.1.ipu utilisation (%)",
        "ipu.1.board temp (C)",
        "ipu.0.ipu power (W)",
        "ipu.0.clock (MHz)",
    ];
    let charts = group(keys);
    let summary: Vec<(&str, Unit, Vec<&str>)> = charts
        .iter()
        .map(|c| {
            (
                c.title.as_str(),
                c.unit,
                c.series.iter().map(|s| s.label.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("TPU dutyCycle", Unit::Percent, vec!["tpu 0", "tpu 1"]),
            ("TPU hbmCapacityUsage", Unit::Bytes, vec!["tpu 0"]),
            ("TPU tensorcoreIdleDuration", Unit::Seconds, vec!["tpu 0"]),
            (
                "NeuronCore neuroncore_utilization",
                Unit::Percent,
                vec!["core 0", "core 1"]
            ),
            (
                "NeuronCore neuroncore_memory_usage.tensors",
                Unit::Bytes,
                vec!["core 1"]
            ),
            (
                "IPU ipu utilisation (%)",
                Unit::Percent,
                vec!["ipu 0", "ipu 1"]
            ),
            ("IPU board temp (C)", Unit::Celsius, vec!["ipu 1"]),
            ("IPU ipu power (W)", Unit::Watts, vec!["ipu 0"]),
            ("IPU clock (MHz)", Unit::MHz, vec!["ipu 0"]),
            (
                "tpu.bufferTransferLatency.mean_us",
                Unit::Plain,
                vec!["tpu.bufferTransferLatency.mean_us"]
            ),
            (
                "trn.host_total_memory_usage",
                Unit::Bytes,
                vec!["trn.host_total_memory_usage"]
            ),
        ]
    );
}

#[test]
fn keys_of_different_meaning_get_charts_of_their_own() {
    let keys = [
        "cpu",
        "cpu.0.cpu_percent",
        "cpu.1.cpu_percent",
        "proc.cpu.throttledPercent",
        "memory_percent",
        "proc.memory.percent",
        "swap.used_percent",
        "proc.memory.rssMB",
        "disk./.usagePercent",
        "disk./.usageGB",
    ];
    let charts = group(keys);
    let shown: Vec<(String, Vec<&str>)> = charts
        .iter()
        .map(|c| {
            (
                c.display_title(),
                c.series.iter().map(|s| s.key.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("Process CPU (%)".to_owned(), vec!["cpu"]),
            (
                "CPU Core (%)".to_owned(),
                vec!["cpu.0.cpu_percent", "cpu.1.cpu_percent"]
            ),
            (
                "Process CPU Throttled (%)".to_owned(),
                vec!["proc.cpu.throttledPercent"]
            ),
            ("Process Memory".to_owned(), vec!["proc.memory.rssMB"]),
            (
                "Memory (%)".to_owned(),
                vec!["memory_percent", "proc.memory.percent", "swap.used_percent"]
            ),
            ("Disk Usage (%)".to_owned(), vec!["disk./.usagePercent"]),
            ("Disk Used".to_owned(), vec!["disk./.usageGB"]),
        ]
    );
    assert_eq!(charts[1].series[1].label, "cpu 1");
    // Each line of the shared chart says what it is.
    let labels: Vec<&str> = charts[4].series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["system", "process", "swap"]);
}

#[test]
fn a_title_carries_its_unit_but_a_count_or_a_scaled_size_none() {
    let chart = |title: &str, unit| SysChart {
        title: title.to_owned(),
        unit,
        series: Vec::new(),
    };
    // Labelled `23.2GiB`, `1.2MiB/s`: a unit in the title would contradict them.
    assert_eq!(
        chart("GPU Memory Used", Unit::Bytes).display_title(),
        "GPU Memory Used"
    );
    assert_eq!(
        chart("Memory Available", Unit::MiB).display_title(),
        "Memory Available"
    );
    assert_eq!(
        chart("Network", Unit::BytesPerSec).display_title(),
        "Network"
    );
    assert_eq!(
        chart("GPU Temperature", Unit::Celsius).display_title(),
        "GPU Temperature (°C)"
    );
    assert_eq!(
        chart("Load Average", Unit::Plain).display_title(),
        "Load Average"
    );
    assert_eq!(chart("OOM Kills", Unit::Plain).display_title(), "OOM Kills");
    // A name in brackets says its own unit.
    assert_eq!(
        chart("IPU board temp (C)", Unit::Celsius).display_title(),
        "IPU board temp (C)"
    );
    // A process chart: the unit after the metric, before the command.
    assert_eq!(
        chart("Process CPU: python train.py (4242)", Unit::Percent).display_title(),
        "Process CPU (%): python train.py (4242)"
    );
}

#[test]
fn grouping_100k_keys_is_linear() {
    // 100,000 OpenMetrics-like keys and 100,000 per-device keys over 1,000
    // metrics: the quadratic version took minutes (a linear scan per key for its
    // chart, and per chart for a shared title).
    let mut keys: Vec<String> = (0..100_000)
        .map(|k| format!("openmetrics.big.m{}.{}", k % 100, k / 100))
        .collect();
    keys.extend((0..100_000).map(|k| format!("gpu.{}.metric{}", k % 100, k / 100)));
    // A key named like a family's title: both charts' ids carry their unit.
    keys.push("cpu".into());
    keys.push("Process CPU".into());
    // A debug build takes up to ~3 s; the quadratic version took minutes (the speed
    // itself belongs in a benchmark).
    let charts = group(keys.iter().map(String::as_str));
    let ids = chart_ids(&charts);
    assert_eq!(charts.len(), 1 + 1_000 + 100_001);
    assert_eq!(ids.len(), charts.len());
    assert_eq!(ids[0], "Process CPU %");
    assert_eq!(ids.last().map(String::as_str), Some("Process CPU "));
    assert_eq!(ids[1], "GPU metric0");
    assert_eq!(charts[1].series.len(), 100);
}

#[test]
fn live_readings_in_their_units() {
    assert_eq!(
        reading("proc.memory.availableMB", 23_639.414_062_5),
        "23.1GiB"
    );
    assert_eq!(reading("cpu.3.cpu_percent", 28.394_153), "28.4%");
    assert_eq!(reading("memory_percent", 5.0), "5.0%");
    assert_eq!(reading("network.recv", 177_000_000.0), "169MiB");
    assert_eq!(reading("gpu.0.temp", 69.666), "69.7°C");
    assert_eq!(reading("gpu.0.powerWatts", 372.04), "372W");
    assert_eq!(reading("disk./.usageGB", 120.25), "120GiB");
    assert_eq!(
        reading("uptime", 3.0 * 86_400.0 + 4.0 * 3600.0 + 12.0 * 60.0 + 5.0),
        "3d 04:12"
    );
    assert_eq!(reading("uptime", 600.0), "00:10");
    assert_eq!(reading("load.1m", 1.234), "1.23");
    assert_eq!(reading("swap.used", 2_147_483_648.0), "2GiB");
    assert_eq!(reading("cpu", f64::NAN), "NaN");
    assert_eq!(crate::ui::widget::format::bytes_short(1_536.0), "1.5K");
}

#[test]
fn split_node_takes_the_last_non_empty_label() {
    assert_eq!(
        split_node("gpu.0.gpu/l:node-1"),
        ("gpu.0.gpu", Some("node-1"))
    );
    assert_eq!(split_node("cpu/l:a/b"), ("cpu", Some("a/b")));
    assert_eq!(
        split_node("gpu.0.gpu/l:n/l:x"),
        ("gpu.0.gpu/l:n", Some("x"))
    );
    assert_eq!(split_node("gpu.0.gpu/l:"), ("gpu.0.gpu/l:", None));
    assert_eq!(split_node("cpu"), ("cpu", None));
}

#[test]
fn node_names_are_sanitised_and_bounded() {
    assert_eq!(node_name("node-1"), "node-1");
    let bad = node_name("n\x1b[31mred\x07");
    assert!(!bad.chars().any(char::is_control), "{bad:?}");
    let long = node_name(&"x".repeat(500));
    assert_eq!(long.chars().count(), NODE_LABEL_CHARS);
    assert!(long.ends_with('…'));
}

#[test]
fn each_node_is_a_series_of_the_same_chart() {
    let keys = [
        "gpu.0.gpu/l:node-0",
        "gpu.1.gpu/l:node-0",
        "cpu/l:node-0",
        "gpu.0.smActive/l:node-0",
        "custom.thing/l:node-0",
        "gpu.0.gpu/l:node-1",
        "gpu.1.gpu/l:node-1",
        "cpu/l:node-1",
        "gpu.0.smActive/l:node-1",
        "custom.thing/l:node-1",
        "network.sent/l:node-1",
    ];
    let g = group_nodes(keys);
    assert_eq!(g.nodes_left_out, 0);
    let summary: Vec<(&str, Vec<&str>)> = (g.charts.iter())
        .map(|c| {
            let labels = c.series.iter().map(|s| s.label.as_str()).collect();
            (c.title.as_str(), labels)
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "GPU Utilization",
                vec![
                    "node-0:gpu 0",
                    "node-0:gpu 1",
                    "node-1:gpu 0",
                    "node-1:gpu 1"
                ]
            ),
            ("Process CPU", vec!["node-0:process", "node-1:process"]),
            ("Network", vec!["node-1:sent"]),
            ("GPU smActive", vec!["node-0:gpu 0", "node-1:gpu 0"]),
            ("custom.thing", vec!["node-0", "node-1"]),
        ]
    );
    // The series read the keys as stored, with their labels; counters stay rates.
    assert_eq!(g.charts[0].series[2].key, "gpu.0.gpu/l:node-1");
    assert_eq!(g.charts[2].series[0].rate, Some(1.0));
    assert_eq!(g.charts[3].unit, Unit::Percent);
}

#[test]
fn keys_without_a_label_group_as_before_beside_labelled_ones() {
    let plain = ["gpu.0.gpu", "cpu", "weird.key", "gpu.0.gpu/l:"];
    assert_eq!(group_nodes(plain).charts, group(plain));
    let titles: Vec<String> = group(plain).into_iter().map(|c| c.title).collect();
    assert_eq!(
        titles,
        ["GPU Utilization", "Process CPU", "GPU gpu/l:", "weird.key"]
    );
    let mixed = group(["gpu.0.gpu", "gpu.0.gpu/l:n1"]);
    let labels: Vec<&str> = mixed[0].series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["gpu 0", "n1:gpu 0"]);
}

#[test]
fn labels_past_the_bound_are_counted_not_drawn() {
    let keys: Vec<String> = (0..MAX_NODES + 5)
        .flat_map(|n| [format!("cpu/l:n{n}"), format!("gpu.0.gpu/l:n{n}")])
        .collect();
    let g = group_nodes(keys.iter().map(String::as_str));
    assert_eq!(g.nodes_left_out, 5);
    assert_eq!(g.charts.len(), 2);
    assert!(g.charts.iter().all(|c| c.series.len() == MAX_NODES));
    // A hostile label reaches the legend sanitised.
    let g = group_nodes(["cpu/l:\x1b]0;evil\x07"]);
    assert!(!g.charts[0].series[0].label.chars().any(char::is_control));
}

#[test]
fn the_filter_picks_nodes_only_where_it_names_one() {
    let charts = group(["gpu.0.gpu/l:node-0", "gpu.0.gpu/l:node-1", "gpu.0.gpu"]);
    let mut f = FilterState::default();
    assert_eq!(picked_nodes(&charts[0], &f), None);
    f.set_draft("node-1".into());
    assert_eq!(picked_nodes(&charts[0], &f), Some(vec![1]));
    f.set_draft("GPU".into());
    assert_eq!(picked_nodes(&charts[0], &f), None);
    let mut pane = SystemPane {
        filter: f,
        ..SystemPane::default()
    };
    pane.filter.set_draft("node-0".into());
    pane.refilter(&charts);
    assert_eq!(pane.shown, [0]);
    let drawn = pane.chart(&charts, 0).unwrap();
    assert_eq!(drawn.series.len(), 1);
    assert_eq!(drawn.series[0].key, "gpu.0.gpu/l:node-0");
}

/// Every key shape the sampler families write, with the unit README's family table
/// and `spec/system-metrics.md` give it. The keys are those of `leet sample --json`
/// over every fake of `scripts/fakes/setup.sh` (one device of each), plus the keys
/// the README lists that the fakes' recorded outputs do not produce.
const SAMPLER_KEYS: &[(&str, Unit)] = &[
    // Host (Linux /proc, cgroup v2).
    ("cpu", Unit::Percent),
    ("cpu.0.cpu_percent", Unit::Percent),
    ("proc.cpu.threads", Unit::Plain),
    ("proc.cpu.throttledPercent", Unit::Percent),
    ("proc.memory.rssMB", Unit::MiB),
    ("proc.memory.percent", Unit::Percent),
    ("proc.memory.availableMB", Unit::MiB),
    ("proc.memory.oomKills", Unit::Plain),
    ("memory_percent", Unit::Percent),
    ("swap.total", Unit::Bytes),
    ("swap.used", Unit::Bytes),
    ("swap.used_percent", Unit::Percent),
    ("load.1m", Unit::Plain),
    ("load.5m", Unit::Plain),
    ("load.15m", Unit::Plain),
    ("uptime", Unit::Plain),
    ("disk./.usagePercent", Unit::Percent),
    ("disk./.usageGB", Unit::GiB),
    ("disk.in", Unit::MiB),
    ("disk.out", Unit::MiB),
    ("disk.vda.in", Unit::MiB),
    ("disk.vda.out", Unit::MiB),
    ("network.sent", Unit::Bytes),
    ("network.recv", Unit::Bytes),
    ("network.tcpRetransmits", Unit::Plain),
    // NVIDIA NVML (and its process keys).
    ("gpu.0.gpu", Unit::Percent),
    ("gpu.0.memory", Unit::Percent),
    ("gpu.0.memoryAllocated", Unit::Percent),
    ("gpu.0.memoryAllocatedBytes", Unit::Bytes),
    ("gpu.0.temp", Unit::Celsius),
    ("gpu.0.powerWatts", Unit::Watts),
    ("gpu.0.enforcedPowerLimitWatts", Unit::Watts),
    ("gpu.0.powerPercent", Unit::Percent),
    ("gpu.0.smClock", Unit::MHz),
    ("gpu.0.memoryClock", Unit::MHz),
    ("gpu.0.graphicsClock", Unit::MHz),
    ("gpu.0.fanSpeed", Unit::Percent),
    ("gpu.0.encoderUtilization", Unit::Percent),
    ("gpu.0.energyJoules", Unit::Joules),
    ("gpu.0.correctedMemoryErrors", Unit::Plain),
    ("gpu.0.uncorrectedMemoryErrors", Unit::Plain),
    ("gpu.process.0.gpu", Unit::Percent),
    ("gpu.process.0.memoryAllocatedBytes", Unit::Bytes),
    ("gpu.process.0.powerWatts", Unit::Watts),
    // NVML GPM and DCGM profiling.
    ("gpu.0.smActive", Unit::Percent),
    ("gpu.0.smOccupancy", Unit::Percent),
    ("gpu.0.pipeTensorActive", Unit::Percent),
    ("gpu.0.pipeTensorHmmaActive", Unit::Percent),
    ("gpu.0.dramActive", Unit::Percent),
    ("gpu.0.pipeFp64Active", Unit::Percent),
    ("gpu.0.pipeFp32Active", Unit::Percent),
    ("gpu.0.pipeFp16Active", Unit::Percent),
    ("gpu.0.pcieTxBytes", Unit::BytesPerSec),
    ("gpu.0.pcieRxBytes", Unit::BytesPerSec),
    ("gpu.0.nvlinkTxBytes", Unit::BytesPerSec),
    ("gpu.0.nvlinkRxBytes", Unit::BytesPerSec),
    // dcgm-exporter.
    ("gpu.0.memoryTemp", Unit::Celsius),
    ("gpu.0.maxOpTemp", Unit::Celsius),
    ("gpu.0.memoryMaxOpTemp", Unit::Celsius),
    ("gpu.0.memoryUsed", Unit::MiB),
    ("gpu.0.memoryFree", Unit::MiB),
    ("gpu.0.memoryTotal", Unit::MiB),
    ("gpu.0.totalEnergyConsumption", Unit::MilliJoules),
    ("gpu.0.memoryFree/l:node-1", Unit::MiB),
    // AMD.
    ("gpu.0.memoryReadWriteActivity", Unit::Percent),
    ("gpu.0.memoryOverDrive", Unit::Percent),
    // Apple Silicon.
    ("gpu.0.freq", Unit::MHz),
    ("cpu.ecpu_freq", Unit::MHz),
    ("cpu.pcpu_freq", Unit::MHz),
    ("cpu.ecpu_percent", Unit::Percent),
    ("cpu.pcpu_percent", Unit::Percent),
    ("cpu.powerWatts", Unit::Watts),
    ("cpu.avg_temp", Unit::Celsius),
    ("ane.power", Unit::Watts),
    ("system.powerWatts", Unit::Watts),
    ("memory.used", Unit::Bytes),
    ("memory.used_percent", Unit::Percent),
    // Google TPU.
    ("tpu.0.dutyCycle", Unit::Percent),
    ("tpu.0.hbmCapacityTotal", Unit::Bytes),
    ("tpu.0.hbmCapacityUsage", Unit::Bytes),
    ("tpu.0.memoryUsageBytes", Unit::Bytes),
    ("tpu.1.memoryUsage", Unit::Percent),
    ("tpu.0.runtimeHbmUtilization", Unit::Percent),
    ("tpu.0.tensorcoreUtilization", Unit::Percent),
    ("tpu.0.tensorcoreIdleDuration", Unit::Seconds),
    ("tpu.grpcTcpMinRtt.p50Us", Unit::Micros),
    ("tpu.bufferTransferLatency.8mb_plus.meanUs", Unit::Micros),
    ("tpu.hloExecTiming.tensor_core_0.p999Us", Unit::Micros),
    ("tpu.grpcTcpDeliveryRate.p50Mbps", Unit::Mbps),
    ("tpu.grpcTcpDeliveryRate.8mb_plus.p999Mbps", Unit::Mbps),
    ("tpu.hloQueueSize.tensor_core_2", Unit::Plain),
    // AWS Trainium.
    ("trn.0.neuroncore_utilization", Unit::Percent),
    ("trn.0.neuroncore_memory_usage.constants", Unit::Bytes),
    (
        "trn.0.neuroncore_memory_usage.model_shared_scratchpad",
        Unit::Bytes,
    ),
    ("trn.host_total_memory_usage", Unit::Bytes),
    ("trn.neuron_device_total_memory_usage", Unit::Bytes),
    ("trn.host_memory_usage.dma_buffers", Unit::Bytes),
    // Graphcore IPU.
    ("ipu.0.average board temp (C)", Unit::Celsius),
    ("ipu.0.average die temp (C)", Unit::Celsius),
    ("ipu.0.clock (MHz)", Unit::MHz),
    ("ipu.0.ipu power (W)", Unit::Watts),
    ("ipu.0.total board power (W)", Unit::Watts),
    ("ipu.0.ipu utilisation (%)", Unit::Percent),
    ("ipu.0.ipu utilisation (session) (%)", Unit::Percent),
    // OpenMetrics: the exporter's raw value, whatever its name says.
    ("openmetrics.node.node_arp_entries.0", Unit::Plain),
    (
        "openmetrics.node.node_netstat_TcpExt_SyncookiesFailed_attempts.0",
        Unit::Plain,
    ),
    ("openmetrics.node.node_memory_MemFree_bytes.0", Unit::Plain),
];

/// The unit `leet serve`'s series for a key implies (its name's base unit and the
/// factor from the W&B value), where one does.
fn served_unit(key: &str) -> Option<Unit> {
    use crate::source::prometheus::names::to_series;
    let m = to_series(key);
    let (name, scale) = (m.metric.as_ref(), m.scale);
    let name = name.strip_suffix("_total").unwrap_or(name);
    let close = |x: f64| (scale - x).abs() <= x.abs() * 1e-9;
    Some(if name.ends_with("_ratio") && close(0.01) {
        Unit::Percent
    } else if name.ends_with("_celsius") {
        Unit::Celsius
    } else if name.ends_with("_watts") {
        Unit::Watts
    } else if name.ends_with("_hertz") && close(1e6) {
        Unit::MHz
    } else if name.ends_with("_joules") && close(1.0) {
        Unit::Joules
    } else if name.ends_with("_joules") && close(1e-3) {
        Unit::MilliJoules
    } else if name.ends_with("_seconds") && close(1e-6) {
        Unit::Micros
    } else if name.ends_with("_bytes_per_second") && close(1.0) {
        Unit::BytesPerSec
    } else if name.ends_with("_bytes_per_second") && close(125_000.0) {
        Unit::Mbps
    } else if name.ends_with("_bytes") && close(1.0) {
        Unit::Bytes
    } else if name.ends_with("_bytes") && close(1_048_576.0) {
        Unit::MiB
    } else if name.ends_with("_bytes") && close(1_073_741_824.0) {
        Unit::GiB
    } else {
        return None;
    })
}

#[test]
fn every_sampler_key_has_the_unit_the_readme_states() {
    let charts = group_nodes(SAMPLER_KEYS.iter().map(|(k, _)| *k)).charts;
    for &(key, want) in SAMPLER_KEYS {
        assert_eq!(key_unit(key), want, "overview unit of {key}");
        let chart = (charts.iter())
            .find(|c| c.series.iter().any(|s| s.key == key))
            .unwrap_or_else(|| panic!("{key} is in no chart"));
        // A cumulative counter is charted as a rate of its unit.
        if chart.series.iter().all(|s| s.rate.is_none()) {
            assert_eq!(chart.unit, want, "chart unit of {key} ({})", chart.title);
        }
        // `leet serve` converts the same key to a base unit by the same reading.
        if let Some(served) = served_unit(key) {
            assert_eq!(served, want, "leet serve reads {key} as {served:?}");
        }
    }
}

#[test]
fn energy_in_millijoules_reads_as_joules() {
    // dcgm-exporter's FB and energy counters as the recorded L4 page has them.
    assert_eq!(
        reading("gpu.0.totalEnergyConsumption", 4_742_776.0),
        "4.74kJ"
    );
    assert_eq!(reading("gpu.0.energyJoules", 4_742.776), "4.74kJ");
    assert_eq!(reading("gpu.0.memoryFree", 22_563.0), "22GiB");
    assert_eq!(reading("tpu.1.memoryUsage", 25.0), "25.0%");
    assert_eq!(reading("gpu.0.memoryOverDrive", 5.0), "5.0%");
    assert_eq!(
        reading("tpu.grpcTcpDeliveryRate.p50Mbps", 1_234.0),
        "1.23Gbps"
    );
}

/// Disk paths are told apart by their last components in a meter's or a
/// legend's little room (they read `/tmp…`, `/tmp…` where several shared a
/// start), and the Disk Usage legend names them so.
#[test]
fn disk_paths_are_told_apart_by_their_ends() {
    assert_eq!(
        path_tails(&["/tmp/qa21/mnt/nvme0", "/tmp/qa21/mnt/nvme1", "/"]),
        ["nvme0", "nvme1", "/"]
    );
    assert_eq!(
        path_tails(&["/a/b/data", "/a/c/data", "/data"]),
        ["b/data", "c/data", "/data"]
    );
    assert_eq!(path_tails(&["/data"]), ["/data"]);
    assert_eq!(path_tails(&["/x/y", "/y"]), ["/x/y", "/y"]);
    let charts = group([
        "disk./mnt/nvme0.usagePercent",
        "disk./mnt/nvme1.usagePercent",
        "disk./.usagePercent",
        "disk./mnt/nvme0.usagePercent/l:node-1",
    ]);
    let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(charts[0].title, "Disk Usage");
    assert_eq!(labels, ["nvme0", "nvme1", "/", "node-1:nvme0"]);
}
