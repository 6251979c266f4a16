//! System metric keys grouped into charts by family (GPU utilization of all GPUs in
//! one chart, ...). A key that no family claims gets a chart of its own.

pub(crate) mod view;

use std::borrow::Cow;

use crate::ui::filter::FilterState;
use crate::ui::status::part::FilterStatus;
use crate::ui::widget::format;
pub use crate::ui::widget::unit::Unit;

/// The system sidebar (`]`): the run's system charts.
#[derive(Debug, Clone, Default)]
pub struct SystemPane {
    /// Indices into `Charts::sys` passing the filter.
    pub shown: Vec<usize>,
    /// Filter of the charts (`\`).
    pub filter: FilterState,
    /// First chart shown.
    pub scroll: usize,
    /// Index for index with `shown`: the series drawn where the filter names
    /// nodes of a multi-node run (`node-1`), None for all of them.
    pub picked: Vec<Option<Vec<usize>>>,
    /// Node labels past [`MAX_NODES`], whose keys are in no chart.
    pub nodes_left_out: usize,
}

impl SystemPane {
    /// The first chart drawn, `page` charts on a page: the scroll, at most the
    /// last page's first (after the sidebar grew or the filter narrowed).
    #[must_use]
    pub fn top(&self, page: usize) -> usize {
        self.scroll.min(self.shown.len().saturating_sub(page))
    }

    /// The charts' filter (`\`), with how many of the `all` system charts pass it.
    pub(crate) fn filter_status(&self, all: usize) -> FilterStatus<'_> {
        FilterStatus {
            filter: &self.filter,
            sigil: '\\',
            label: "\\",
            count: format!("[{}/{all}]", self.shown.len()),
        }
    }

    /// The `i`-th shown chart of `sys` as drawn: only the picked nodes' series
    /// where the filter names nodes.
    pub(crate) fn chart<'a>(&self, sys: &'a [SysChart], i: usize) -> Option<Cow<'a, SysChart>> {
        let c = sys.get(*self.shown.get(i)?)?;
        Some(match self.picked.get(i) {
            Some(Some(only)) => Cow::Owned(SysChart {
                title: c.title.clone(),
                unit: c.unit,
                series: only
                    .iter()
                    .filter_map(|&s| c.series.get(s).cloned())
                    .collect(),
            }),
            _ => Cow::Borrowed(c),
        })
    }
}

/// The series of `chart` whose node label passes `filter`, or None where none
/// does (the filter is not about nodes there: every series is drawn).
pub(crate) fn picked_nodes(chart: &SysChart, filter: &FilterState) -> Option<Vec<usize>> {
    if !filter.is_active() {
        return None;
    }
    let only: Vec<usize> = (chart.series.iter().enumerate())
        .filter(|(_, s)| split_node(&s.key).1.is_some_and(|n| filter.matches(n)))
        .map(|(i, _)| i)
        .collect();
    (!only.is_empty()).then_some(only)
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
        unit: tpu_unit,
    },
    Device {
        prefix: "trn",
        title: "NeuronCore",
        label: "core",
        unit: trn_unit,
    },
    Device {
        prefix: "ipu",
        title: "IPU",
        label: "ipu",
        unit: |_| None,
    },
];

/// Units of every `gpu.N.*` metric the sampler writes (NVML, DCGM, dcgm-exporter,
/// AMD, Apple; README's family table), so that none is left to a guess from its
/// name: `memoryFree` is dcgm-exporter's MiB, `memoryOverDrive` AMD's %,
/// `totalEnergyConsumption` dcgm-exporter's mJ.
fn gpu_unit(metric: &str) -> Option<Unit> {
    Some(match metric {
        "gpu"
        | "memory"
        | "memoryAllocated"
        | "powerPercent"
        | "fanSpeed"
        | "encoderUtilization"
        | "memoryOverDrive"
        | "memoryReadWriteActivity"
        | "smOccupancy" => Unit::Percent,
        "memoryAllocatedBytes" => Unit::Bytes,
        "memoryUsed" | "memoryFree" | "memoryTotal" => Unit::MiB,
        "temp" | "memoryTemp" | "maxOpTemp" | "memoryMaxOpTemp" => Unit::Celsius,
        "powerWatts" | "enforcedPowerLimitWatts" => Unit::Watts,
        "energyJoules" => Unit::Joules,
        "totalEnergyConsumption" => Unit::MilliJoules,
        "smClock" | "memoryClock" | "graphicsClock" | "freq" => Unit::MHz,
        "correctedMemoryErrors" | "uncorrectedMemoryErrors" => Unit::Plain,
        // PCIe and NVLink throughput (`pcieTxBytes`, ...) are rates.
        m if m.ends_with("Bytes") => Unit::BytesPerSec,
        m if m.ends_with("Active") => Unit::Percent,
        _ => return None,
    })
}

/// Units of the `tpu.N.*` metrics (`memoryUsage` is a share of HBM, not bytes).
fn tpu_unit(metric: &str) -> Option<Unit> {
    Some(match metric {
        "dutyCycle" | "memoryUsage" | "runtimeHbmUtilization" | "tensorcoreUtilization" => {
            Unit::Percent
        }
        "hbmCapacityTotal" | "hbmCapacityUsage" | "memoryUsageBytes" => Unit::Bytes,
        "tensorcoreIdleDuration" => Unit::Seconds,
        _ => return None,
    })
}

/// Units of the `trn.<core>.*` metrics.
fn trn_unit(metric: &str) -> Option<Unit> {
    if metric == "neuroncore_utilization" {
        Some(Unit::Percent)
    } else if metric.starts_with("neuroncore_memory_usage.") {
        Some(Unit::Bytes)
    } else {
        None
    }
}

/// The unit of a key that no family and no device claims: TPU distributions carry
/// theirs in the name (`tpu.grpcTcpMinRtt.p50Us`, `tpu.grpcTcpDeliveryRate.p50Mbps`;
/// queue sizes are plain), an OpenMetrics series is the exporter's raw value, whatever its name
/// says; anything else by [`infer_unit`].
fn other_unit(key: &str) -> Unit {
    if key.starts_with("openmetrics.") {
        return Unit::Plain;
    }
    if key == "memory.used" {
        return Unit::Bytes;
    }
    if key.starts_with("tpu.") {
        return if key.ends_with("Us") {
            Unit::Micros
        } else if key.ends_with("Mbps") {
            Unit::Mbps
        } else {
            Unit::Plain
        };
    }
    infer_unit(key)
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

/// Most distinct node labels (`/l:<label>`) drawn; the keys of the others are
/// counted ([`Grouped::nodes_left_out`]), not drawn, so a hostile run cannot make
/// thousands of series.
pub const MAX_NODES: usize = 64;

/// Longest node label drawn, in characters (labels are untrusted text).
const NODE_LABEL_CHARS: usize = 24;

/// A key without its W&B shared-mode suffix `/l:<label>` (`x_label`, one per node
/// of a multi-node run), and the label. An empty label is no label.
#[must_use]
pub fn split_node(key: &str) -> (&str, Option<&str>) {
    crate::source::nodes::split_label(key)
}

/// A node label as drawn: sanitised and cut to [`NODE_LABEL_CHARS`].
#[must_use]
pub fn node_name(label: &str) -> String {
    let clean = crate::text::sanitize(label);
    if clean.chars().count() <= NODE_LABEL_CHARS {
        return clean;
    }
    let mut cut: String = clean.chars().take(NODE_LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The system charts of a set of keys, and how many node labels were past
/// [`MAX_NODES`] (their keys are in no chart).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grouped {
    pub charts: Vec<SysChart>,
    pub nodes_left_out: usize,
}

/// Group keys (first-seen order) into charts: families first, then per-device metrics
/// (one chart per metric), then one chart per unclaimed key. Linear in the number of
/// keys (a hash map finds a metric's chart).
#[must_use]
pub fn group<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<SysChart> {
    group_nodes(keys).charts
}

/// [`group`], with the nodes of a multi-node run told apart: a key with a
/// `/l:<label>` suffix joins the chart of the same key without it, as one more
/// series whose legend names the node (`node-1:gpu 0`), so each chart has one
/// series per node (per node:GPU). Keys without a label are grouped as by
/// [`group`] alone.
#[must_use]
pub fn group_nodes<'a>(keys: impl IntoIterator<Item = &'a str>) -> Grouped {
    use std::collections::{HashMap, HashSet};
    let mut fams: Vec<Vec<SysSeries>> = vec![Vec::new(); FAMILIES.len()];
    let mut dev: Vec<SysChart> = Vec::new();
    let mut dev_at: HashMap<String, usize> = HashMap::new();
    let mut rest: Vec<SysChart> = Vec::new();
    let mut rest_at: HashMap<&str, usize> = HashMap::new();
    // Node labels as written, to their names as drawn; and those left out.
    let mut nodes: HashMap<&str, String> = HashMap::new();
    let mut left_out: HashSet<&str> = HashSet::new();
    for key in keys {
        let (base, label) = split_node(key);
        let node = match label {
            None => None,
            Some(l) if nodes.len() < MAX_NODES || nodes.contains_key(l) => {
                Some(nodes.entry(l).or_insert_with(|| node_name(l)).as_str())
            }
            Some(l) => {
                left_out.insert(l);
                continue;
            }
        };
        let named = |label: String| match node {
            Some(n) => format!("{n}:{label}"),
            None => label,
        };
        if let Some((f, label, rate)) = classify(base) {
            fams[f].push(SysSeries {
                key: key.to_owned(),
                label: named(label),
                rate,
            });
            continue;
        }
        if let Some((title, unit, label)) = device_metric(base) {
            let series = SysSeries {
                key: key.to_owned(),
                label: named(label),
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
        let series = SysSeries {
            key: key.to_owned(),
            label: node.map_or_else(|| base.to_owned(), str::to_owned),
            rate: None,
        };
        match rest_at.get(base) {
            Some(&i) => rest[i].series.push(series),
            None => {
                rest_at.insert(base, rest.len());
                rest.push(SysChart {
                    title: base.to_owned(),
                    // `trn.host_total_memory_usage` is bytes, `cpu.pcpu_freq` MHz, `ane.power` W.
                    unit: other_unit(base),
                    series: vec![series],
                });
            }
        }
    }
    // Disk usage legends name each path by what tells it from the others
    // (`nvme0`, not a cut `/tmp/qa21/m…`), a node's name kept before it.
    for f in [14, 15] {
        let split: Vec<(Option<&str>, &str)> = (fams[f].iter())
            .map(|s| match s.label.split_once(":/") {
                Some((n, _)) if !s.label.starts_with('/') => (Some(n), &s.label[n.len() + 1..]),
                _ => (None, s.label.as_str()),
            })
            .collect();
        let paths: Vec<&str> = split.iter().map(|&(_, p)| p).collect();
        let short: Vec<String> = (split.iter().zip(path_tails(&paths)))
            .map(|(&(n, _), t)| n.map_or_else(|| t.clone(), |n| format!("{n}:{t}")))
            .collect();
        for (s, l) in fams[f].iter_mut().zip(short) {
            s.label = l;
        }
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
    Grouped {
        charts: out,
        nodes_left_out: left_out.len(),
    }
}

/// Disk paths as told apart in little room (meters' labels, legends): each its
/// last components, as few as tell it from the others and fewer than all
/// (`/mnt/nvme0`, `/mnt/nvme1`, `/` → `nvme0`, `nvme1`, `/`; `/a/b/data`, `/a/c/data` →
/// `b/data`, `c/data`); the whole path, as written, where nothing shorter does
/// (`/data` stays `/data`).
#[must_use]
pub fn path_tails(paths: &[&str]) -> Vec<String> {
    let comps: Vec<Vec<&str>> = (paths.iter())
        .map(|p| p.split('/').filter(|c| !c.is_empty()).collect())
        .collect();
    let tail = |c: &[&str], k: usize| c[c.len().saturating_sub(k)..].join("/");
    (paths.iter().zip(&comps).enumerate())
        .map(|(i, (&p, c))| {
            for k in 1..c.len() {
                let mine = tail(c, k);
                // Against the other paths (the same path of another node is itself).
                let alone = (comps.iter().enumerate())
                    .filter(|&(j, _)| j != i && paths[j] != p)
                    .all(|(_, o)| tail(o, k) != mine && tail(o, o.len()) != mine);
                if alone {
                    return mine;
                }
            }
            p.to_owned()
        })
        .collect()
}

pub(crate) use crate::source::nodes::is_process_key;

/// The unit of a key's value as sampled (cumulative counters in their own unit:
/// `disk.in` MiB, `network.sent` bytes), for the live overview.
#[must_use]
pub(crate) fn key_unit(key: &str) -> Unit {
    let key = split_node(key).0;
    match key {
        "disk.in" | "disk.out" => return Unit::MiB,
        "network.sent" | "network.recv" => return Unit::Bytes,
        "swap.used" | "swap.total" => return Unit::Bytes,
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
    other_unit(key)
}

/// A live reading of `key` in its unit: percentages with one decimal, sizes in
/// binary units, °C, W, load averages with two decimals, uptime as `3d 04:12`.
#[must_use]
pub(crate) fn reading(key: &str, v: f64) -> String {
    if !v.is_finite() {
        return format::value(v);
    }
    match key_unit(key) {
        Unit::Percent => format!("{v:.1}%"),
        Unit::Plain if key == "uptime" => format::uptime(v),
        Unit::Plain if key.starts_with("load.") => format!("{v:.2}"),
        u => format::unit(v, u),
    }
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
    /// The title as drawn: with its unit in brackets where every label of the
    /// chart is written in that unit (`Process CPU (%)`), after the metric's name
    /// where a process chart names its command (`Process CPU (%): python train.py
    /// (4242)`). A count has no unit; neither has a chart whose labels pick a
    /// prefix to fit the value (`Disk Used`: `120GiB`, `1.2TiB`), which a fixed unit
    /// in the title would contradict; and a name that ends in brackets already says
    /// its own (`ipu power (W)`).
    #[must_use]
    pub fn display_title(&self) -> String {
        let (name, rest) = match self.title.split_once(": ") {
            Some((n, r)) => (n, Some(r)),
            None => (self.title.as_str(), None),
        };
        let Some(u) = self.unit.title_unit() else {
            return self.title.clone();
        };
        if name.ends_with(')') {
            return self.title.clone();
        }
        match rest {
            Some(r) => format!("{name} ({u}): {r}"),
            None => format!("{name} ({u})"),
        }
    }
}

#[cfg(test)]
mod tests;
