//! The `neuron-monitor` report, as far as the keys need it, and its mapping to keys.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::{CORE_MEMORY_FIELDS, HOST_MEMORY_FIELDS, MAX_CORES};
use crate::GpuInfo;

// ---------------------------------------------------------------------------------------
// The report, as far as the keys need it. Every number is read leniently: a value of
// another type is "absent", never a failed report.

/// A JSON number, or `None` for any other value (skipped without allocating).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Num(Option<f64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v.is_finite().then_some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Num, D2::Error> {
                Num::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Num, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Num(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Num(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string, or empty for any other value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            S(String),
            Other(IgnoredAny),
        }
        Ok(match Any::deserialize(d)? {
            Any::S(s) => Text(s),
            Any::Other(_) => Text(String::new()),
        })
    }
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Report {
    #[serde(default)]
    neuron_runtime_data: Option<Vec<RuntimeEntry>>,
    #[serde(default)]
    instance_info: Option<InstanceInfo>,
    #[serde(default)]
    neuron_hardware_info: Option<HardwareInfo>,
}

#[derive(Debug, Default, Deserialize)]
struct RuntimeEntry {
    #[serde(default)]
    pid: Num,
    #[serde(default)]
    error: Text,
    #[serde(default)]
    report: Option<RuntimeReport>,
}

#[derive(Debug, Default, Deserialize)]
struct RuntimeReport {
    #[serde(default)]
    neuroncore_counters: Option<CoreCounters>,
    #[serde(default)]
    memory_used: Option<MemoryUsed>,
}

#[derive(Debug, Default, Deserialize)]
struct CoreCounters {
    #[serde(default)]
    neuroncores_in_use: Option<BTreeMap<String, CoreUse>>,
    #[serde(default)]
    error: Text,
}

#[derive(Debug, Default, Deserialize)]
struct CoreUse {
    #[serde(default)]
    neuroncore_utilization: Num,
}

#[derive(Debug, Default, Deserialize)]
struct MemoryUsed {
    #[serde(default)]
    neuron_runtime_used_bytes: Option<UsedBytes>,
    #[serde(default)]
    error: Text,
}

#[derive(Debug, Default, Deserialize)]
struct UsedBytes {
    #[serde(default)]
    host: Num,
    #[serde(default)]
    neuron_device: Num,
    #[serde(default)]
    usage_breakdown: Option<Breakdown>,
}

#[derive(Debug, Default, Deserialize)]
struct Breakdown {
    #[serde(default)]
    host: Option<BTreeMap<String, Num>>,
    #[serde(default)]
    neuroncore_memory_usage: Option<BTreeMap<String, BTreeMap<String, Num>>>,
}

#[derive(Debug, Default, Deserialize)]
struct InstanceInfo {
    #[serde(default)]
    instance_type: Text,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
struct HardwareInfo {
    #[serde(default)]
    neuron_device_count: Num,
    #[serde(default)]
    neuroncore_per_device_count: Num,
    /// Newer SDKs: "trainium2", ...
    #[serde(default)]
    neuron_device_type: Text,
    /// Newer SDKs: bytes per device.
    #[serde(default)]
    neuron_device_memory_size: Num,
}

/// What one parsed report gives: the `trn.*` values of the selected runtimes, the
/// runtimes' own error strings, and the hardware description.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Mapped {
    pub values: Vec<(String, f64)>,
    pub errors: Vec<String>,
    pub devices: Vec<GpuInfo>,
}

pub(super) fn parse_report(line: &str) -> Result<Report, serde_json::Error> {
    serde_json::from_str(line)
}

fn add(total: &mut Option<f64>, v: Num) {
    if let Some(v) = v.0 {
        *total = Some(total.unwrap_or(0.0) + v);
    }
}

pub(super) fn clip(s: &str, max_chars: usize) -> String {
    let clean = leet_text::sanitize(s);
    match clean.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean,
    }
}

fn core_index(key: &str) -> Option<u32> {
    key.parse::<u32>().ok().filter(|c| *c < MAX_CORES)
}

/// Map a report to `trn.*` keys: runtimes whose pid `keep` accepts, summed.
pub(super) fn map_report(
    report: &Report,
    keep: &dyn Fn(Option<u32>) -> bool,
    driver: &str,
) -> Mapped {
    let mut util: BTreeMap<u32, Option<f64>> = BTreeMap::new();
    let mut host_total = None;
    let mut device_total = None;
    let mut host = [None; HOST_MEMORY_FIELDS.len()];
    let mut cores: BTreeMap<u32, [Option<f64>; CORE_MEMORY_FIELDS.len()]> = BTreeMap::new();
    let mut errors = Vec::new();
    for rt in report.neuron_runtime_data.iter().flatten() {
        let pid = rt
            .pid
            .0
            .filter(|p| p.fract() == 0.0 && *p >= 0.0 && *p <= f64::from(u32::MAX))
            .map(|p| p as u32);
        if !keep(pid) {
            continue;
        }
        let who = pid.map_or_else(|| "?".to_string(), |p| p.to_string());
        let mut note = |what: &str, e: &Text| {
            if !e.0.is_empty() {
                errors.push(format!("runtime {who}{what}: {}", clip(&e.0, 200)));
            }
        };
        note("", &rt.error);
        let Some(r) = &rt.report else { continue };
        if let Some(c) = &r.neuroncore_counters {
            note(" neuroncore_counters", &c.error);
            for (core, u) in c.neuroncores_in_use.iter().flatten() {
                if let Some(core) = core_index(core) {
                    add(util.entry(core).or_default(), u.neuroncore_utilization);
                }
            }
        }
        if let Some(m) = &r.memory_used {
            note(" memory_used", &m.error);
            let Some(used) = &m.neuron_runtime_used_bytes else {
                continue;
            };
            add(&mut host_total, used.host);
            add(&mut device_total, used.neuron_device);
            let Some(b) = &used.usage_breakdown else {
                continue;
            };
            for (i, field) in HOST_MEMORY_FIELDS.iter().enumerate() {
                if let Some(v) = b.host.as_ref().and_then(|h| h.get(*field)) {
                    add(&mut host[i], *v);
                }
            }
            for (core, fields) in b.neuroncore_memory_usage.iter().flatten() {
                let Some(core) = core_index(core) else {
                    continue;
                };
                let slot = cores.entry(core).or_default();
                for (i, field) in CORE_MEMORY_FIELDS.iter().enumerate() {
                    if let Some(v) = fields.get(*field) {
                        add(&mut slot[i], *v);
                    }
                }
            }
        }
    }
    let mut values = Vec::new();
    for (core, v) in &util {
        if let Some(v) = v {
            values.push((format!("trn.{core}.neuroncore_utilization"), *v));
        }
    }
    if let Some(v) = host_total {
        values.push(("trn.host_total_memory_usage".to_string(), v));
    }
    if let Some(v) = device_total {
        values.push(("trn.neuron_device_total_memory_usage".to_string(), v));
    }
    for (field, v) in HOST_MEMORY_FIELDS.iter().zip(host) {
        if let Some(v) = v {
            values.push((format!("trn.host_memory_usage.{field}"), v));
        }
    }
    for (core, slot) in &cores {
        for (field, v) in CORE_MEMORY_FIELDS.iter().zip(slot) {
            if let Some(v) = v {
                values.push((format!("trn.{core}.neuroncore_memory_usage.{field}"), *v));
            }
        }
    }
    Mapped {
        values,
        errors,
        devices: report_devices(report, driver),
    }
}

/// "AWS Trainium2", "AWS Inferentia", ... from `neuron_device_type` or the instance type.
pub(super) fn chip_name(device_type: &str, instance_type: &str) -> String {
    let device_type = clip(device_type.trim(), 40);
    if !device_type.is_empty() {
        let mut c = device_type.chars();
        let first = c.next().map(|f| f.to_uppercase().collect::<String>());
        return format!("AWS {}{}", first.unwrap_or_default(), c.as_str());
    }
    let family = instance_type.split('.').next().unwrap_or("");
    let chip = match family {
        "inf1" => "Inferentia",
        "inf2" => "Inferentia2",
        f if f.starts_with("trn1") => "Trainium",
        f if f.starts_with("trn2") => "Trainium2",
        f if f.starts_with("trn3") => "Trainium3",
        _ => "Neuron device",
    };
    format!("AWS {chip}")
}

/// One entry per Neuron device of `neuron_hardware_info` (none without it).
pub(super) fn report_devices(report: &Report, driver: &str) -> Vec<GpuInfo> {
    let Some(hw) = &report.neuron_hardware_info else {
        return Vec::new();
    };
    let count = hw
        .neuron_device_count
        .0
        .filter(|n| *n >= 0.0)
        .map_or(0, |n| n.min(1024.0) as usize);
    let instance_type = report
        .instance_info
        .as_ref()
        .map_or("", |i| i.instance_type.0.as_str());
    let chip = chip_name(&hw.neuron_device_type.0, instance_type);
    let name = match hw.neuroncore_per_device_count.0 {
        Some(c) if c >= 0.0 => format!("{chip} ({c} NeuronCores)"),
        _ => chip,
    };
    let memory_total = hw
        .neuron_device_memory_size
        .0
        .filter(|m| *m >= 0.0)
        .map_or(0, |m| m as u64);
    (0..count)
        .map(|_| GpuInfo {
            name: name.clone(),
            memory_total,
            driver: driver.to_string(),
        })
        .collect()
}
