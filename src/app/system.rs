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

/// (family title, unit) in display order.
const FAMILIES: [(&str, Unit); 19] = [
    ("GPU Utilization", Unit::Percent),
    ("GPU Memory Allocated", Unit::Percent),
    ("GPU Memory Used", Unit::Bytes),
    ("GPU Memory Access", Unit::Percent),
    ("GPU Temperature", Unit::Celsius),
    ("GPU Power", Unit::Watts),
    ("GPU Power of Limit", Unit::Percent),
    ("GPU Clocks", Unit::MHz),
    ("CPU", Unit::Percent),
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
        "proc.cpu.throttledPercent" => return Some((8, "throttled".into(), None)),
        "proc.memory.rssMB" => return Some((9, "rss".into(), None)),
        "memory_percent" => return Some((10, "system".into(), None)),
        "proc.memory.percent" => return Some((10, "process".into(), None)),
        "proc.memory.availableMB" => return Some((11, "available".into(), None)),
        "disk.in" => return Some((14, "read".into(), Some(MIB))),
        "disk.out" => return Some((14, "write".into(), Some(MIB))),
        "network.sent" => return Some((15, "sent".into(), Some(1.0))),
        "network.recv" => return Some((15, "recv".into(), Some(1.0))),
        "proc.cpu.threads" => return Some((16, "threads".into(), None)),
        "network.tcpRetransmits" => return Some((17, "retransmits".into(), None)),
        "proc.memory.oomKills" => return Some((18, "oom kills".into(), None)),
        _ => {}
    }
    if let Some(n) = key
        .strip_prefix("cpu.")
        .and_then(|r| r.strip_suffix(".cpu_percent"))
    {
        return Some((8, format!("cpu {n}"), None));
    }
    if let Some(rest) = key.strip_prefix("disk.") {
        if let Some(path) = rest.strip_suffix(".usagePercent") {
            return Some((12, path.to_owned(), None));
        }
        if let Some(path) = rest.strip_suffix(".usageGB") {
            return Some((13, path.to_owned(), None));
        }
        if let Some(dev) = rest.strip_suffix(".in") {
            return Some((14, format!("{dev} read"), Some(MIB)));
        }
        if let Some(dev) = rest.strip_suffix(".out") {
            return Some((14, format!("{dev} write"), Some(MIB)));
        }
    }
    None
}

/// A per-GPU key outside the fixed families (`gpu.N.smActive`, `gpu.process.N.gpu`,
/// ...): the chart title and unit for its metric, and the legend label. Every GPU's
/// copy of one metric shares a chart, so eight GPUs do not make eight charts of each.
fn gpu_metric(key: &str) -> Option<(String, Unit, String)> {
    let rest = key.strip_prefix("gpu.")?;
    let (process, rest) = match rest.strip_prefix("process.") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (idx, metric) = rest.split_once('.')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) || metric.is_empty() {
        return None;
    }
    let unit = match metric {
        "gpu" | "memory" | "memoryAllocated" | "powerPercent" | "fanSpeed"
        | "encoderUtilization" => Unit::Percent,
        "memoryAllocatedBytes" => Unit::Bytes,
        "temp" => Unit::Celsius,
        "powerWatts" | "enforcedPowerLimitWatts" => Unit::Watts,
        "energyJoules" => Unit::Joules,
        m if m.ends_with("Clock") => Unit::MHz,
        m if m.ends_with("Bytes") => Unit::BytesPerSec,
        m if m.ends_with("Active") || m == "smOccupancy" => Unit::Percent,
        _ => Unit::Plain,
    };
    let title = if process {
        format!("GPU Process {metric}")
    } else {
        format!("GPU {metric}")
    };
    Some((title, unit, format!("gpu {idx}")))
}

/// Group keys (first-seen order) into charts: families first, then per-GPU metrics
/// (one chart per metric), then one chart per unclaimed key.
#[must_use]
pub fn group<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<SysChart> {
    let mut fams: Vec<Vec<SysSeries>> = vec![Vec::new(); FAMILIES.len()];
    let mut gpu: Vec<SysChart> = Vec::new();
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
        if let Some((title, unit, label)) = gpu_metric(key) {
            let series = SysSeries {
                key: key.to_owned(),
                label,
                rate: None,
            };
            match gpu.iter_mut().find(|c| c.title == title) {
                Some(c) => c.series.push(series),
                None => gpu.push(SysChart {
                    title,
                    unit,
                    series: vec![series],
                }),
            }
            continue;
        }
        rest.push(SysChart {
            title: key.to_owned(),
            unit: Unit::Plain,
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
    out.extend(gpu);
    out.extend(rest);
    out
}

/// One id per chart, for the live grid (focus, filter): the title, with the unit
/// where two charts share a title ("Disk Usage %" and "Disk Usage GiB").
#[must_use]
pub fn chart_ids(charts: &[SysChart]) -> Vec<String> {
    charts
        .iter()
        .map(|c| {
            if charts.iter().filter(|o| o.title == c.title).count() > 1 {
                format!("{} {}", c.title, c.unit.suffix())
            } else {
                c.title.clone()
            }
        })
        .collect()
}

impl Unit {
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
                "CPU",
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
}
