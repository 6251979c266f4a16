//! System metric keys grouped into charts by family (GPU utilization of all GPUs in
//! one chart, ...). A key that no family claims gets a chart of its own.

/// How a chart's values are formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Plain,
    Percent,
    /// Mebibytes.
    MiB,
    /// Gibibytes.
    GiB,
    Bytes,
    Celsius,
    Watts,
    Joules,
    MHz,
    BytesPerSec,
}

/// One line of a system chart.
#[derive(Debug, Clone, PartialEq)]
pub struct SysSeries {
    /// The W&B key in the run's system store.
    pub key: String,
    /// Legend text.
    pub label: String,
    /// A cumulative counter drawn as a rate: Δvalue/Δt × this factor (to B/s).
    pub rate: Option<f64>,
}

/// One chart of the right sidebar.
#[derive(Debug, Clone, PartialEq)]
pub struct SysChart {
    pub title: String,
    pub unit: Unit,
    pub series: Vec<SysSeries>,
}

const MIB: f64 = 1_048_576.0;

/// (family title, unit) in display order. A title says what W&B measures (spec
/// `system-metrics.md` §3–4), and keys of different meaning share a chart only
/// where their legend says which is which: the process's CPU, each core's and the
/// throttled share are three charts; `Memory (%)` draws the system's, the
/// process's and swap's, labelled so. The unit is added when the chart is drawn
/// ([`SysChart::display_title`]).
const FAMILIES: [(&str, Unit); 23] = [
    ("GPU Utilization", Unit::Percent),
    ("GPU Memory Allocated", Unit::Percent),
    ("GPU Memory Used", Unit::Bytes),
    ("GPU Memory Access", Unit::Percent),
    ("GPU Temperature", Unit::Celsius),
    ("GPU Power", Unit::Watts),
    ("GPU Power of Limit", Unit::Percent),
    ("GPU Clocks", Unit::MHz),
    ("Process CPU", Unit::Percent),
    ("CPU Core", Unit::Percent),
    ("Process CPU Throttled", Unit::Percent),
    ("Process Memory", Unit::MiB),
    ("Memory", Unit::Percent),
    ("Memory Available", Unit::MiB),
    ("Disk Usage", Unit::Percent),
    ("Disk Used", Unit::GiB),
    ("Disk I/O", Unit::BytesPerSec),
    ("Network", Unit::BytesPerSec),
    ("Process Threads", Unit::Plain),
    ("TCP Retransmits", Unit::Plain),
    ("OOM Kills", Unit::Plain),
    ("Swap", Unit::Bytes),
    ("Load Average", Unit::Plain),
];

/// Family index, legend label and rate factor of a key.
fn classify(key: &str) -> Option<(usize, String, Option<f64>)> {
    if let Some(rest) = key.strip_prefix("gpu.") {
        let (idx, metric) = rest.split_once('.')?;
        if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let gpu = format!("gpu {idx}");
        let fam = match metric {
            "gpu" => 0,
            "memoryAllocated" => 1,
            "memoryAllocatedBytes" => 2,
            "memory" => 3,
            "temp" => 4,
            "powerWatts" => 5,
            "powerPercent" => 6,
            "smClock" => return Some((7, format!("{gpu} sm"), None)),
            "memoryClock" => return Some((7, format!("{gpu} mem"), None)),
            "graphicsClock" => return Some((7, format!("{gpu} gfx"), None)),
            _ => return None,
        };
        return Some((fam, gpu, None));
    }
    match key {
        "cpu" => return Some((8, "process".into(), None)),
        "proc.cpu.throttledPercent" => return Some((10, "throttled".into(), None)),
        "proc.memory.rssMB" => return Some((11, "rss".into(), None)),
        "proc.memory.percent" => return Some((12, "process".into(), None)),
        "memory_percent" => return Some((12, "system".into(), None)),
        "proc.memory.availableMB" => return Some((13, "available".into(), None)),
        "swap.used_percent" => return Some((12, "swap".into(), None)),
        "disk.in" => return Some((16, "read".into(), Some(MIB))),
        "disk.out" => return Some((16, "write".into(), Some(MIB))),
        "network.sent" => return Some((17, "sent".into(), Some(1.0))),
        "network.recv" => return Some((17, "recv".into(), Some(1.0))),
        "proc.cpu.threads" => return Some((18, "threads".into(), None)),
        "network.tcpRetransmits" => return Some((19, "retransmits".into(), None)),
        "proc.memory.oomKills" => return Some((20, "oom kills".into(), None)),
        "swap.used" => return Some((21, "used".into(), None)),
        "swap.total" => return Some((21, "total".into(), None)),
        "load.1m" => return Some((22, "1m".into(), None)),
        "load.5m" => return Some((22, "5m".into(), None)),
        "load.15m" => return Some((22, "15m".into(), None)),
        _ => {}
    }
    if let Some(n) = key
        .strip_prefix("cpu.")
        .and_then(|r| r.strip_suffix(".cpu_percent"))
    {
        return Some((9, format!("cpu {n}"), None));
    }
    if let Some(rest) = key.strip_prefix("disk.") {
        if let Some(path) = rest.strip_suffix(".usagePercent") {
            return Some((14, path.to_owned(), None));
        }
        if let Some(path) = rest.strip_suffix(".usageGB") {
            return Some((15, path.to_owned(), None));
        }
        if let Some(dev) = rest.strip_suffix(".in") {
            return Some((16, format!("{dev} read"), Some(MIB)));
        }
        if let Some(dev) = rest.strip_suffix(".out") {
            return Some((16, format!("{dev} write"), Some(MIB)));
        }
    }
    None
}

/// A device family whose per-device keys `<prefix>.N.<metric>` (and
/// `<prefix>.process.N.<metric>`) outside the fixed families share one chart per metric:
/// eight GPUs do not make eight charts of each metric.
struct Device {
    /// Key prefix before the device index.
    prefix: &'static str,
    /// Chart title before the metric name ("GPU smActive").
    title: &'static str,
    /// Legend label before the device index ("gpu 0").
    label: &'static str,
    /// Unit of a metric known to this family, before the generic inference.
    unit: fn(&str) -> Option<Unit>,
}

/// Every accelerator family with per-device keys (spec §4–9). A new one is one line.
const DEVICES: &[Device] = &[
    Device {
        prefix: "gpu",
        title: "GPU",
        label: "gpu",
        unit: gpu_unit,
    },
    Device {
        prefix: "tpu",
        title: "TPU",
        label: "tpu",
        unit: |_| None,
    },
    Device {
        prefix: "trn",
        title: "NeuronCore",
        label: "core",
        unit: |_| None,
    },
    Device {
        prefix: "ipu",
        title: "IPU",
        label: "ipu",
        unit: |_| None,
    },
];

/// Units of the NVIDIA/AMD metrics whose names the generic rules would misread.
fn gpu_unit(metric: &str) -> Option<Unit> {
    Some(match metric {
        "gpu" | "memory" | "memoryAllocated" | "powerPercent" | "fanSpeed"
        | "encoderUtilization" => Unit::Percent,
        "memoryAllocatedBytes" => Unit::Bytes,
        "enforcedPowerLimitWatts" => Unit::Watts,
        // PCIe and NVLink throughput (`pcieTxBytes`, ...) are rates.
        m if m.ends_with("Bytes") => Unit::BytesPerSec,
        m if m.ends_with("Active") || m == "smOccupancy" => Unit::Percent,
        _ => return None,
    })
}

/// The unit a metric's name implies: utilisation, duty cycle and percentages are
/// Percent; temperatures °C; power W; energy J; clocks and frequencies MHz; byte
/// counts and memory usage Bytes; anything else Plain. Names written with a unit in
/// brackets (`ipu utilisation (%)`, `board temp (C)`) are read the same way.
fn infer_unit(metric: &str) -> Unit {
    let m = metric.to_ascii_lowercase();
    let has = |w: &str| m.contains(w);
    if m.ends_with("(%)")
        || has("percent")
        || m.ends_with("pct")
        || has("utiliz")
        || has("utilis")
        || has("dutycycle")
        || has("duty_cycle")
    {
        Unit::Percent
    } else if has("temp") || m.ends_with("(c)") {
        Unit::Celsius
    } else if has("joule") || has("energy") {
        Unit::Joules
    } else if has("power") || has("watts") || m.ends_with("(w)") {
        Unit::Watts
    } else if m.ends_with("clock") || has("freq") || m.ends_with("(mhz)") {
        Unit::MHz
    } else if m.ends_with("bytes")
        || has("memory_usage")
        || has("memoryusage")
        || has("hbmcapacity")
        || m.ends_with("(b)")
    {
        Unit::Bytes
    } else {
        Unit::Plain
    }
}

/// A per-device key outside the fixed families (`gpu.N.smActive`, `gpu.process.N.gpu`,
/// `tpu.N.dutyCycle`, `trn.N.neuroncore_utilization`, ...): the chart title and unit
/// for its metric, and the legend label.
fn device_metric(key: &str) -> Option<(String, Unit, String)> {
    let (prefix, rest) = key.split_once('.')?;
    let dev = DEVICES.iter().find(|d| d.prefix == prefix)?;
    let (process, rest) = match rest.strip_prefix("process.") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (idx, metric) = rest.split_once('.')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) || metric.is_empty() {
        return None;
    }
    let unit = (dev.unit)(metric).unwrap_or_else(|| infer_unit(metric));
    let title = if process {
        format!("{} Process {metric}", dev.title)
    } else {
        format!("{} {metric}", dev.title)
    };
    Some((title, unit, format!("{} {idx}", dev.label)))
}

/// Group keys (first-seen order) into charts: families first, then per-device metrics
/// (one chart per metric), then one chart per unclaimed key. Linear in the number of
/// keys (a hash map finds a metric's chart).
#[must_use]
pub fn group<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<SysChart> {
    use std::collections::HashMap;
    let mut fams: Vec<Vec<SysSeries>> = vec![Vec::new(); FAMILIES.len()];
    let mut dev: Vec<SysChart> = Vec::new();
    let mut dev_at: HashMap<String, usize> = HashMap::new();
    let mut rest = Vec::new();
    for key in keys {
        if let Some((f, label, rate)) = classify(key) {
            fams[f].push(SysSeries {
                key: key.to_owned(),
                label,
                rate,
            });
            continue;
        }
        if let Some((title, unit, label)) = device_metric(key) {
            let series = SysSeries {
                key: key.to_owned(),
                label,
                rate: None,
            };
            match dev_at.get(&title) {
                Some(&i) => dev[i].series.push(series),
                None => {
                    dev_at.insert(title.clone(), dev.len());
                    dev.push(SysChart {
                        title,
                        unit,
                        series: vec![series],
                    });
                }
            }
            continue;
        }
        rest.push(SysChart {
            title: key.to_owned(),
            // `trn.host_total_memory_usage` is bytes, `cpu.pcpu_freq` MHz, `ane.power` W.
            unit: infer_unit(key),
            series: vec![SysSeries {
                key: key.to_owned(),
                label: key.to_owned(),
                rate: None,
            }],
        });
    }
    let mut out: Vec<SysChart> = FAMILIES
        .iter()
        .zip(fams)
        .filter(|(_, s)| !s.is_empty())
        .map(|(&(title, unit), series)| SysChart {
            title: title.to_owned(),
            unit,
            series,
        })
        .collect();
    out.extend(dev);
    out.extend(rest);
    out
}

/// Whether a key describes the monitored process tree (`cpu`, `proc.*` but the
/// host-wide `proc.memory.availableMB`, `gpu.process.*`), not the host: the live
/// monitor charts these only while a process is monitored.
#[must_use]
pub(crate) fn is_process_key(key: &str) -> bool {
    key == "cpu"
        || (key.starts_with("proc.") && key != "proc.memory.availableMB")
        || key.starts_with("gpu.process.")
}

/// The unit of a key's value as sampled (cumulative counters in their own unit:
/// `disk.in` MiB, `network.sent` bytes), for the live overview.
#[must_use]
pub(crate) fn key_unit(key: &str) -> Unit {
    match key {
        "disk.in" | "disk.out" => return Unit::MiB,
        "network.sent" | "network.recv" => return Unit::Bytes,
        "swap.used" | "swap.total" | "memory.used" => return Unit::Bytes,
        "load.1m" | "load.5m" | "load.15m" | "uptime" => return Unit::Plain,
        _ => {}
    }
    if let Some((f, _, rate)) = classify(key) {
        return match rate {
            Some(_) if key.starts_with("network.") => Unit::Bytes,
            Some(_) => Unit::MiB,
            None => FAMILIES[f].1,
        };
    }
    if let Some((_, unit, _)) = device_metric(key) {
        return unit;
    }
    infer_unit(key)
}

/// One id per chart, for the live grid (focus, filter): the title, with the unit
/// where two charts share a title ("Disk Usage %" and "Disk Usage GiB"). Linear in
/// the number of charts.
#[must_use]
pub fn chart_ids(charts: &[SysChart]) -> Vec<String> {
    use std::collections::HashMap;
    let mut count: HashMap<&str, usize> = HashMap::with_capacity(charts.len());
    for c in charts {
        *count.entry(c.title.as_str()).or_default() += 1;
    }
    charts
        .iter()
        .map(|c| {
            if count.get(c.title.as_str()).copied().unwrap_or(0) > 1 {
                format!("{} {}", c.title, c.unit.suffix())
            } else {
                c.title.clone()
            }
        })
        .collect()
}

impl SysChart {
    /// The title as drawn: with its unit in brackets (`Process CPU (%)`, `Disk
    /// Used (GiB)`), after the metric's name where a process chart names its
    /// command (`Process CPU (%): python train.py (4242)`). A count has no unit,
    /// and a name that ends in brackets already says its own (`ipu power (W)`).
    #[must_use]
    pub fn display_title(&self) -> String {
        let u = self.unit.label();
        let (name, rest) = match self.title.split_once(": ") {
            Some((n, r)) => (n, Some(r)),
            None => (self.title.as_str(), None),
        };
        if u.is_empty() || name.ends_with(')') {
            return self.title.clone();
        }
        match rest {
            Some(r) => format!("{name} ({u}): {r}"),
            None => format!("{name} ({u})"),
        }
    }
}

impl Unit {
    /// The unit as a title writes it in brackets (empty for a plain number).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Unit::Bytes => "B",
            u => u.suffix(),
        }
    }

    /// A short name of the unit.
    #[must_use]
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Plain => "",
            Unit::Percent => "%",
            Unit::MiB => "MiB",
            Unit::GiB => "GiB",
            Unit::Bytes => "bytes",
            Unit::Celsius => "°C",
            Unit::Watts => "W",
            Unit::Joules => "J",
            Unit::MHz => "MHz",
            Unit::BytesPerSec => "B/s",
        }
    }
}

#[cfg(test)]
mod tests {
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
                ("Process Memory (MiB)".to_owned(), vec!["proc.memory.rssMB"]),
                (
                    "Memory (%)".to_owned(),
                    vec!["memory_percent", "proc.memory.percent", "swap.used_percent"]
                ),
                ("Disk Usage (%)".to_owned(), vec!["disk./.usagePercent"]),
                ("Disk Used (GiB)".to_owned(), vec!["disk./.usageGB"]),
            ]
        );
        assert_eq!(charts[1].series[1].label, "cpu 1");
        // Each line of the shared chart says what it is.
        let labels: Vec<&str> = charts[4].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["system", "process", "swap"]);
    }

    #[test]
    fn a_title_carries_its_unit_but_a_count_none() {
        let chart = |title: &str, unit| SysChart {
            title: title.to_owned(),
            unit,
            series: Vec::new(),
        };
        assert_eq!(
            chart("GPU Memory Used", Unit::Bytes).display_title(),
            "GPU Memory Used (B)"
        );
        assert_eq!(
            chart("Network", Unit::BytesPerSec).display_title(),
            "Network (B/s)"
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
        let t = std::time::Instant::now();
        let charts = group(keys.iter().map(String::as_str));
        let ids = chart_ids(&charts);
        let took = t.elapsed();
        assert_eq!(charts.len(), 1 + 1_000 + 100_001);
        assert_eq!(ids.len(), charts.len());
        assert_eq!(ids[0], "Process CPU %");
        assert_eq!(ids.last().map(String::as_str), Some("Process CPU "));
        assert_eq!(ids[1], "GPU metric0");
        assert_eq!(charts[1].series.len(), 100);
        // A debug build on a loaded 2-core machine takes up to ~3 s; the quadratic
        // version took minutes, so the bound only has to tell the two apart.
        assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    }
}
