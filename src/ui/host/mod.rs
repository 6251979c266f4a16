//! The live monitor's header: the host's latest readings gathered into meters
//! (CPU, memory, swap, disks, network, disk I/O) and one row per accelerator, as
//! numbers in base units (bytes, bytes/s, %, °C, W): the view formats them. Rebuilt
//! after each sample; a reading that is missing stays `None` (drawn as `–`).
//! The process table is `procs`; the monitor's parts of the status bar, `status`.

pub mod procs;
pub(crate) mod status;
pub(crate) mod view;

use serde_json::{Map, Value};

use crate::store::metrics::MetricStore;

const MIB: f64 = 1_048_576.0;
const GIB: f64 = 1_073_741_824.0;

/// A used/total meter.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Meter {
    pub percent: Option<f64>,
    /// Bytes.
    pub used: Option<f64>,
    pub total: Option<f64>,
}

/// One accelerator's compact row.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DeviceRow {
    /// `gpu0`, `tpu1`, `trn0`, `ipu0`.
    pub label: String,
    /// Utilisation, %.
    pub util: Option<f64>,
    /// Memory used and total, bytes.
    pub mem_used: Option<f64>,
    pub mem_total: Option<f64>,
    pub temp: Option<f64>,
    pub power: Option<f64>,
    pub power_limit: Option<f64>,
}

/// The header's facts and meters.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostHeader {
    pub os: String,
    pub cpu_model: String,
    /// Logical CPUs (else physical).
    pub cpu_count: Option<u64>,
    /// Seconds since boot.
    pub uptime: Option<f64>,
    /// 1, 5 and 15 minute load averages.
    pub load: [Option<f64>; 3],
    /// Host CPU: the mean of the per-core percentages.
    pub cpu: Option<f64>,
    pub memory: Meter,
    pub swap: Meter,
    /// (path, used %, used bytes), in key order.
    pub disks: Vec<(String, Option<f64>, Option<f64>)>,
    /// Network receive and send rates, bytes/s.
    pub net: (Option<f64>, Option<f64>),
    /// Disk read and write rates, bytes/s.
    pub io: (Option<f64>, Option<f64>),
    pub devices: Vec<DeviceRow>,
}

impl HostHeader {
    /// Meters drawn as bars: CPU, memory, swap, each disk, network, disk I/O.
    #[must_use]
    pub(crate) fn bars(&self) -> usize {
        5 + self.disks.len()
    }
}

/// The latest value of `key`.
fn last(store: &MetricStore, key: &str) -> Option<f64> {
    store
        .get(key)?
        .last()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
}

/// The rate of a cumulative counter over its last two readings, per second, times
/// `scale`; `None` before two readings or after a counter reset.
fn rate(store: &MetricStore, key: &str, scale: f64) -> Option<f64> {
    let pts = store.get(key)?.points();
    let [.., (t0, v0), (t1, v1)] = pts else {
        return None;
    };
    let (dt, dv) = (t1 - t0, v1 - v0);
    (dt > 0.0 && dv >= 0.0 && dv.is_finite()).then(|| dv / dt * scale)
}

/// A size in the environment: a number of bytes, or text such as `64GiB`.
fn env_bytes(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let s = s.trim();
            let split = s
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let n: f64 = num.parse().ok()?;
            let mult = match unit.trim().to_ascii_lowercase().as_str() {
                "" | "b" => 1.0,
                "kib" | "kb" | "k" => 1024.0,
                "mib" | "mb" | "m" => MIB,
                "gib" | "gb" | "g" => GIB,
                "tib" | "tb" | "t" => GIB * 1024.0,
                _ => return None,
            };
            Some(n * mult)
        }
        _ => None,
    }
}

fn env_path<'a>(env: &'a Map<String, Value>, a: &str, b: &str) -> Option<&'a Value> {
    env.get(a)
        .and_then(|v| v.get(b))
        .or_else(|| env.get(&format!("{a}.{b}")))
}

/// Device families with per-device keys `<prefix>.N.<metric>`: the metric names of
/// utilisation, memory used and total (with the factor to bytes), temperature, power
/// and power limit.
struct Family {
    prefix: &'static str,
    label: &'static str,
    util: &'static [&'static str],
    mem_used: &'static [(&'static str, f64)],
    mem_total: &'static [(&'static str, f64)],
    temp: &'static [&'static str],
    power: &'static [&'static str],
    limit: &'static [&'static str],
}

/// NVIDIA, AMD and Apple GPUs share `gpu.N.*` (spec §4, §6, §7); TPU §8,
/// Trainium §9, Graphcore IPU.
const FAMILIES: [Family; 4] = [
    Family {
        prefix: "gpu",
        label: "gpu",
        util: &["gpu"],
        mem_used: &[("memoryAllocatedBytes", 1.0), ("memoryUsed", MIB)],
        // dcgm-exporter's FB_TOTAL, MiB (NVML's total is in the environment).
        mem_total: &[("memoryTotal", MIB)],
        temp: &["temp"],
        power: &["powerWatts"],
        limit: &["enforcedPowerLimitWatts"],
    },
    Family {
        prefix: "tpu",
        label: "tpu",
        util: &["tensorcoreUtilization", "dutyCycle"],
        mem_used: &[("hbmCapacityUsage", 1.0)],
        mem_total: &[("hbmCapacityTotal", 1.0)],
        temp: &[],
        power: &[],
        limit: &[],
    },
    Family {
        prefix: "trn",
        label: "trn",
        util: &["neuroncore_utilization"],
        mem_used: &[],
        mem_total: &[],
        temp: &[],
        power: &[],
        limit: &[],
    },
    Family {
        prefix: "ipu",
        label: "ipu",
        util: &["ipu utilisation (%)"],
        mem_used: &[],
        mem_total: &[],
        // As the sampler writes gc-info's readings (W&B's IPU names): the chip's
        // own temperature first, as a GPU's; the board's power where the IPU's
        // own is not given (a C600 says `N/A`).
        temp: &["average die temp (C)", "average board temp (C)"],
        power: &["ipu power (W)", "total board power (W)"],
        limit: &[],
    },
];

/// The device index of a `<prefix>.N.<metric>` key.
fn device_index(key: &str, prefix: &str) -> Option<u32> {
    let rest = key.strip_prefix(prefix)?.strip_prefix('.')?;
    let (idx, metric) = rest.split_once('.')?;
    if metric.is_empty() || idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    idx.parse().ok()
}

fn devices(store: &MetricStore, env: &Map<String, Value>) -> Vec<DeviceRow> {
    let mut out = Vec::new();
    for fam in &FAMILIES {
        let mut idx: Vec<u32> = store
            .keys()
            .iter()
            .filter_map(|k| device_index(k, fam.prefix))
            .collect();
        idx.sort_unstable();
        idx.dedup();
        for n in idx {
            let get = |names: &[&str]| {
                names
                    .iter()
                    .find_map(|m| last(store, &format!("{}.{n}.{m}", fam.prefix)))
            };
            let bytes = |names: &[(&str, f64)]| {
                names.iter().find_map(|(m, f)| {
                    last(store, &format!("{}.{n}.{m}", fam.prefix)).map(|v| v * f)
                })
            };
            let mut row = DeviceRow {
                label: format!("{}{n}", fam.label),
                util: get(fam.util),
                mem_used: bytes(fam.mem_used),
                mem_total: bytes(fam.mem_total),
                temp: get(fam.temp),
                power: get(fam.power),
                power_limit: get(fam.limit),
            };
            if fam.prefix == "gpu" {
                // NVML's total memory is in the environment; else from used and %.
                let pct = last(store, &format!("gpu.{n}.memoryAllocated"));
                row.mem_total = row
                    .mem_total
                    .or_else(|| env_bytes(env_path(env, &format!("gpu.{n}"), "memory")))
                    .or_else(|| {
                        let (u, p) = (row.mem_used?, pct?);
                        (p > 0.0).then(|| u * 100.0 / p)
                    });
                if row.mem_used.is_none() {
                    row.mem_used = pct.zip(row.mem_total).map(|(p, t)| p / 100.0 * t);
                }
                // AMD and Apple give the power as a share of the cap, not the cap:
                // the cap follows from the two.
                if row.power_limit.is_none() {
                    let share = last(store, &format!("gpu.{n}.powerPercent"));
                    row.power_limit = row
                        .power
                        .zip(share)
                        .filter(|&(w, p)| w > 0.0 && p > 0.0)
                        .map(|(w, p)| w * 100.0 / p);
                }
            }
            // A row with no reading at all (a key of some other metric) is kept: the
            // device exists, its values show as `–`.
            out.push(row);
        }
    }
    out
}

/// The header for the store's latest readings and the host's environment.
#[must_use]
pub(crate) fn header(store: &MetricStore, env: &Map<String, Value>) -> HostHeader {
    let text = |a: &str, b: Option<&str>| {
        let v = match b {
            Some(b) => env_path(env, a, b),
            None => env.get(a),
        };
        v.and_then(Value::as_str).unwrap_or_default().to_owned()
    };
    let cpu_count = ["count_logical", "count"]
        .iter()
        .find_map(|k| env_path(env, "cpu", k).and_then(Value::as_u64));
    let mut cores = (0.0, 0u32);
    let mut disks = Vec::new();
    for k in store.keys() {
        if let Some(v) = k
            .strip_prefix("cpu.")
            .and_then(|r| r.strip_suffix(".cpu_percent"))
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|_| last(store, k))
        {
            cores = (cores.0 + v, cores.1 + 1);
        }
        if let Some(path) = k
            .strip_prefix("disk.")
            .and_then(|r| r.strip_suffix(".usagePercent"))
        {
            let gb = last(store, &format!("disk.{path}.usageGB"));
            disks.push((path.to_owned(), last(store, k), gb.map(|g| g * GIB)));
        }
    }
    let avail = last(store, "proc.memory.availableMB").map(|m| m * MIB);
    let percent = last(store, "memory_percent");
    // Without the environment (a host read from Prometheus, where the total is no
    // series) the total follows from the two readings the sampler makes of it:
    // the share used is (total − available) / total.
    let mem_total = env_bytes(env_path(env, "memory", "total")).or_else(|| {
        let (p, a) = (percent?, avail?);
        ((0.0..100.0).contains(&p) && a > 0.0).then(|| a / (1.0 - p / 100.0))
    });
    // Each meter's share, used and total of one family, so the three agree: the
    // host's readings where it gives them, else Apple's (`memory.used` and its
    // share); a share from bytes where both bytes are known.
    let apple_used = last(store, "memory.used");
    let memory = if percent.is_some() || avail.is_some() || apple_used.is_none() {
        Meter {
            percent,
            used: (mem_total.zip(avail).map(|(t, a)| t - a))
                .or_else(|| Some(mem_total? * percent? / 100.0))
                .map(|u| u.max(0.0)),
            total: mem_total,
        }
    } else {
        let share = last(store, "memory.used_percent");
        let total = (env_bytes(env_path(env, "memory", "total")))
            .or_else(|| (apple_used.zip(share.filter(|&s| s > 0.0))).map(|(u, s)| u * 100.0 / s));
        Meter {
            percent: share,
            used: apple_used,
            total,
        }
    };
    let (swap_used, swap_total) = (last(store, "swap.used"), last(store, "swap.total"));
    let swap = Meter {
        percent: match swap_used.zip(swap_total) {
            Some((u, t)) if t > 0.0 => Some(u / t * 100.0),
            // No swap: no share of it.
            Some(_) => None,
            None => last(store, "swap.used_percent"),
        },
        used: swap_used,
        total: swap_total,
    };
    HostHeader {
        os: text("os", None),
        cpu_model: text("cpu", Some("model")),
        cpu_count,
        uptime: last(store, "uptime"),
        load: [
            last(store, "load.1m"),
            last(store, "load.5m"),
            last(store, "load.15m"),
        ],
        cpu: (cores.1 > 0).then(|| cores.0 / f64::from(cores.1)),
        memory,
        swap,
        disks,
        net: (
            rate(store, "network.recv", 1.0),
            rate(store, "network.sent", 1.0),
        ),
        io: (rate(store, "disk.in", MIB), rate(store, "disk.out", MIB)),
        devices: devices(store, env),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meters_from_readings_and_missing_keys() {
        let mut s = MetricStore::windowed(64, 100.0);
        let env: Map<String, Value> =
            json!({"memory": {"total": "64GiB"}, "gpu.0": {"memory": 1000.0}})
                .as_object()
                .cloned()
                .unwrap_or_default();
        // Nothing sampled yet: every meter is missing, nothing panics.
        let h = header(&s, &env);
        assert_eq!((h.cpu, h.memory.used, h.net), (None, None, (None, None)));
        assert_eq!(h.memory.total, Some(64.0 * GIB));
        for (t, k) in [(0.0, 0.0), (2.0, 1.0)] {
            s.push("cpu.0.cpu_percent", t, 10.0 + k * 10.0);
            s.push("cpu.1.cpu_percent", t, 30.0);
            s.push("network.recv", t, k * 4e6);
            s.push("disk.out", t, k * 2.0);
            s.push("proc.memory.availableMB", t, 1024.0);
            s.push("gpu.0.memoryAllocated", t, 25.0);
            s.push("disk./data.usagePercent", t, 50.0);
        }
        let h = header(&s, &env);
        assert_eq!(h.cpu, Some(25.0));
        assert_eq!(h.net, (Some(2e6), None));
        assert_eq!(h.io, (None, Some(MIB)));
        assert_eq!(h.memory.used, Some(63.0 * GIB));
        assert_eq!(h.disks, vec![("/data".to_owned(), Some(50.0), None)]);
        assert_eq!(h.devices.len(), 1);
        assert_eq!(h.devices[0].mem_total, Some(1000.0));
        assert_eq!(h.devices[0].mem_used, Some(250.0));
        assert_eq!(h.bars(), 6);
        // dcgm-exporter's frame-buffer sizes are MiB.
        s.push("gpu.1.memoryUsed", 2.0, 1024.0);
        s.push("gpu.1.memoryTotal", 2.0, 4096.0);
        let h = header(&s, &env);
        assert_eq!(h.devices[1].mem_used, Some(GIB));
        assert_eq!(h.devices[1].mem_total, Some(4.0 * GIB));
        // A counter that went back (a restarted sampler) has no rate.
        s.push("network.recv", 3.0, 0.0);
        assert_eq!(header(&s, &env).net.0, None);
    }

    #[test]
    fn without_the_environment_the_memory_total_follows_from_the_readings() {
        let mut s = MetricStore::windowed(64, 100.0);
        let none = Map::new();
        s.push("memory_percent", 1.0, 75.0);
        assert_eq!(header(&s, &none).memory.total, None);
        s.push("proc.memory.availableMB", 1.0, 4096.0);
        let m = header(&s, &none).memory;
        assert_eq!(
            (m.percent, m.used, m.total),
            (Some(75.0), Some(12.0 * GIB), Some(16.0 * GIB))
        );
        // Nothing available: no total to tell.
        s.push("memory_percent", 2.0, 100.0);
        s.push("proc.memory.availableMB", 2.0, 0.0);
        assert_eq!(header(&s, &none).memory.total, None);
    }

    #[test]
    fn a_power_limit_follows_from_the_power_and_its_share_of_the_cap() {
        let mut s = MetricStore::windowed(64, 100.0);
        let none = Map::new();
        // AMD: 512 W at 68.27 % of its cap.
        s.push("gpu.0.powerWatts", 1.0, 512.0);
        s.push("gpu.0.powerPercent", 1.0, 512.0 / 750.0 * 100.0);
        // NVIDIA: its own limit, whatever the share says.
        s.push("gpu.1.powerWatts", 1.0, 312.0);
        s.push("gpu.1.enforcedPowerLimitWatts", 1.0, 700.0);
        s.push("gpu.1.powerPercent", 1.0, 10.0);
        // Idle (0 W or 0 %): no cap to tell.
        s.push("gpu.2.powerWatts", 1.0, 0.0);
        s.push("gpu.2.powerPercent", 1.0, 0.0);
        let d = header(&s, &none).devices;
        let limit = |i: usize| d[i].power_limit.map(|l| (l * 1000.0).round() / 1000.0);
        assert_eq!(
            (limit(0), limit(1), limit(2)),
            (Some(750.0), Some(700.0), None)
        );
    }

    /// Each meter's share, used and total come from one family and agree (the
    /// host's memory share beside Apple's used bytes read `2.4% 13.3G/23.5G`; a
    /// swap of 0 B `93.8%` full).
    #[test]
    fn a_meter_s_share_used_and_total_agree() {
        let env: Map<String, Value> = json!({"memory": {"total": "16GiB"}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut s = MetricStore::windowed(64, 100.0);
        // The host's readings, and Apple's of another definition of used.
        s.push("memory_percent", 1.0, 25.0);
        s.push("proc.memory.availableMB", 1.0, 12.0 * 1024.0);
        s.push("memory.used", 1.0, 13.3 * GIB);
        s.push("memory.used_percent", 1.0, 83.0);
        // No swap on the host; a share from elsewhere.
        s.push("swap.total", 1.0, 0.0);
        s.push("swap.used", 1.0, 0.0);
        s.push("swap.used_percent", 1.0, 93.8);
        let h = header(&s, &env);
        let m = &h.memory;
        assert_eq!(
            (m.percent, m.used, m.total),
            (Some(25.0), Some(4.0 * GIB), Some(16.0 * GIB))
        );
        assert_eq!(h.swap.percent, None);
        // Apple's alone: its share and used, the total they imply.
        let mut s = MetricStore::windowed(64, 100.0);
        s.push("memory.used", 1.0, 8.0 * GIB);
        s.push("memory.used_percent", 1.0, 50.0);
        s.push("swap.used", 1.0, GIB);
        s.push("swap.total", 1.0, 4.0 * GIB);
        let h = header(&s, &Map::new());
        let m = &h.memory;
        assert_eq!(
            (m.percent, m.used, m.total),
            (Some(50.0), Some(8.0 * GIB), Some(16.0 * GIB))
        );
        assert_eq!(h.swap.percent, Some(25.0));
    }

    /// An IPU's temperature and power as the sampler writes gc-info's readings
    /// (they showed `–`: looked up under names it never writes).
    #[test]
    fn an_ipu_row_reads_its_temperature_and_power_under_the_sampler_s_names() {
        let mut s = MetricStore::windowed(64, 100.0);
        s.push("ipu.0.ipu utilisation (%)", 1.0, 12.0);
        s.push("ipu.0.average board temp (C)", 1.0, 36.2);
        s.push("ipu.0.average die temp (C)", 1.0, 33.4);
        s.push("ipu.0.ipu power (W)", 1.0, 129.0);
        // A C600: no die temperature, no IPU power; the board's.
        s.push("ipu.1.ipu utilisation (%)", 1.0, 0.0);
        s.push("ipu.1.average board temp (C)", 1.0, 17.8);
        s.push("ipu.1.total board power (W)", 1.0, 12.6);
        let d = header(&s, &Map::new()).devices;
        let got: Vec<_> = d
            .iter()
            .map(|r| (r.label.as_str(), r.temp, r.power))
            .collect();
        assert_eq!(
            got,
            [
                ("ipu0", Some(33.4), Some(129.0)),
                ("ipu1", Some(17.8), Some(12.6))
            ]
        );
    }

    #[test]
    fn env_sizes_in_text_or_bytes() {
        assert_eq!(env_bytes(Some(&json!("141GiB"))), Some(141.0 * GIB));
        assert_eq!(env_bytes(Some(&json!(2048))), Some(2048.0));
        assert_eq!(env_bytes(Some(&json!("lots"))), None);
        assert_eq!(env_bytes(None), None);
    }
}

/// The live host monitor's own state.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// The header's readings (from the latest samples).
    pub(crate) header: HostHeader,
    /// The process table and the monitored process.
    pub procs: procs::ProcsPane,
    /// Samples received.
    pub samples: u64,
    /// (sample time, system key count) of the last overview rebuild.
    pub(in crate::ui) overview_at: (f64, usize),
    /// The cluster screen (`--prometheus`): every host's model, and the host
    /// whose own screen is shown in place of this host's.
    pub cluster: Option<Box<crate::ui::cluster::ClusterScreen>>,
}
