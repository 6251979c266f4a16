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
            ("TPU tensorcoreIdleDuration", Unit::Plain, vec!["tpu 0"]),
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
