//! Graphcore IPUs through Graphcore's `gc-info` (the command-line tools of the Poplar
//! SDK, found on `PATH`): `gc-info --list-devices` once at detection for the IPU ids,
//! then `gc-info -i -d <id>` (the device's attributes as `key: value` lines, the same
//! attributes the `gcipuinfo` library returns) once per IPU per sample, each through
//! [`child::run`] with a deadline. `gc-info` has no streaming mode, so one-shot it is.
//!
//! Keys follow W&B's IPU monitor (`ipu.<device id>.<attribute> (<unit>)`, the unit
//! taken from the value as gc-info prints it: `17.8 C`, `1330MHz`, `12.6 W`, `0.00%`);
//! only the time-varying attributes are sampled:
//!
//! | attribute | key | unit |
//! |---|---|---|
//! | `average board temp` | `ipu.N.average board temp (C)` | °C |
//! | `average die temp` | `ipu.N.average die temp (C)` | °C |
//! | `clock` | `ipu.N.clock (MHz)` | MHz (GHz, kHz converted) |
//! | `ipu power` | `ipu.N.ipu power (W)` | W (mW, kW converted) |
//! | `total board power` | `ipu.N.total board power (W)` | W |
//! | `ipu utilisation` | `ipu.N.ipu utilisation (%)` | % |
//! | `ipu utilisation (session)` | `ipu.N.ipu utilisation (session) (%)` | % |
//!
//! The first six are W&B's `variable_metric_keys`; `total board power` is the power
//! attribute PCIe boards (C2, C600) report, which W&B writes only once. `N/A` values
//! are left out; a value with an unknown unit is left out and reported. A bare number
//! is taken to be in the attribute's documented unit.
//!
//! The static attributes (board type and serial, firmware and driver versions, IPU
//! architecture, PCI id, link) are read once at detection and go to the overview
//! ([`Collector::gpus`] and [`Collector::static_info`]); a sample parses only the
//! time-varying ones (and `id`, `user process id`). Graphcore documents no `gc-info`
//! command giving the attributes of every device at once (`--device-info` takes one
//! `-d`), so it is still one run per device.
//!
//! With `--pid`, as W&B does, only IPUs whose `user process id` is the monitored
//! process or one of its descendants are sampled; without it, every IPU.
//!
//! All `gc-info` runs of one sample share one deadline ([`sample_budget`]), so a hung
//! tool costs at most that much per sample; output is capped at [`MAX_OUTPUT`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::child::{self, find_on_path, preview, problems_result};
use super::procfs::SharedTree;
use super::{Collector, Detect, GpuInfo, SamplerError};
use leet_text::sanitize;

/// Largest `gc-info` output read (one device's attributes are ~2 KiB).
pub(crate) const MAX_OUTPUT: usize = 256 * 1024;
/// Most IPUs sampled (a POD256 has 256).
const MAX_DEVICES: usize = 1024;
const DETECT_BUDGET: Duration = Duration::from_secs(3);

/// Time all `gc-info` runs of one sample may take together: 40 % of the interval,
/// between 50 ms and 5 s, so that a hung tool's error is back before the sampler's
/// own deadline (half the interval) and lands in the sample it was asked for.
pub(crate) fn sample_budget(interval: Duration) -> Duration {
    interval
        .mul_f64(0.4)
        .clamp(Duration::from_millis(50), Duration::from_secs(5))
}

/// (attribute, unit of the key) of the time-varying attributes.
pub(crate) const METRICS: [(&str, &str); 7] = [
    ("average board temp", "C"),
    ("average die temp", "C"),
    ("clock", "MHz"),
    ("ipu power", "W"),
    ("total board power", "W"),
    ("ipu utilisation", "%"),
    ("ipu utilisation (session)", "%"),
];

/// Static attributes shown in the overview.
const STATIC: [&str; 12] = [
    "board type",
    "board variant",
    "ipu architecture",
    "board serial number",
    "firmware version",
    "driver version",
    "target",
    "board ipu index",
    "pci id",
    "link speed",
    "link width",
    "numa node",
];

pub(crate) type Attributes = BTreeMap<String, String>;

/// Parse `gc-info -i` output: `key: value` lines (indented, after `Device Info:`). The
/// first value of a key wins; lines without `: ` are skipped.
pub(crate) fn parse_device_info(text: &str) -> Attributes {
    let mut a = Attributes::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(": ") else {
            continue;
        };
        let k = k.trim();
        if k.is_empty() || k.len() > 100 {
            continue;
        }
        a.entry(k.to_string())
            .or_insert_with(|| v.trim().to_string());
    }
    a
}

/// The attributes a sample needs (the [`METRICS`], `id` and `user process id`) of
/// `gc-info -i` output, parsed as [`parse_device_info`] does; the other lines (static
/// facts, read once at detection) are skipped without being copied.
pub(crate) fn parse_sampled_attributes(text: &str) -> Attributes {
    let mut a = Attributes::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(": ") else {
            continue;
        };
        let k = k.trim();
        let wanted = k == "id" || k == "user process id" || METRICS.iter().any(|(m, _)| *m == k);
        if wanted && !a.contains_key(k) {
            a.insert(k.to_string(), v.trim().to_string());
        }
    }
    a
}

/// Single-IPU device ids of `gc-info --list-devices` (`-+- Id: [3], target: [PCIe]`);
/// multi-IPU devices (`target: [Multi IPU]`) and their members (` |--- Id:`) are not
/// devices of their own.
pub(crate) fn parse_device_list(text: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("-+- Id: [") else {
            continue;
        };
        if line.contains("Multi IPU") {
            continue;
        }
        let Some((id, _)) = rest.split_once(']') else {
            continue;
        };
        if let Ok(id) = id.trim().parse::<u32>() {
            if !ids.contains(&id) && ids.len() < MAX_DEVICES {
                ids.push(id);
            }
        }
    }
    ids
}

/// A value as gc-info prints it (`17.8 C`, `1300MHz`, `0.00%`, `N/A`), converted to
/// `unit`. `Ok(None)` for `N/A` and other non-numbers; `Err` for an unknown unit.
pub(crate) fn parse_quantity(value: &str, unit: &str) -> Result<Option<f64>, String> {
    let v = value.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(v.len());
    let (n, u) = v.split_at(split);
    let Ok(x) = n.parse::<f64>() else {
        return Ok(None);
    };
    if !x.is_finite() {
        return Ok(None);
    }
    let u = u.trim();
    let scale = match (unit, u) {
        (_, "") => 1.0,
        ("C", "C" | "°C" | "degC") | ("MHz", "MHz") | ("W", "W") | ("%", "%") => 1.0,
        ("MHz", "GHz") | ("W", "kW") => 1000.0,
        ("MHz", "kHz") | ("W", "mW") => 0.001,
        _ => {
            return Err(format!(
                "unit '{}' where {unit} was expected",
                preview(u, 20)
            ))
        }
    };
    Ok(Some(x * scale))
}

/// The sampled keys of one device's attributes; unknown units go to `problems`.
pub(crate) fn ipu_metrics(
    id: &str,
    a: &Attributes,
    out: &mut Vec<(String, f64)>,
    problems: &mut Vec<String>,
) {
    for (attr, unit) in METRICS {
        let Some(v) = a.get(attr) else {
            continue;
        };
        match parse_quantity(v, unit) {
            Ok(Some(x)) => out.push((format!("ipu.{id}.{attr} ({unit})"), x)),
            Ok(None) => {}
            Err(e) => problems.push(format!("ipu {id} '{attr}': {e}")),
        }
    }
}

/// The id a device's attributes give (`id`), else the one it was asked for.
fn device_id(a: &Attributes, asked: u32) -> String {
    a.get("id")
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(asked)
        .to_string()
}

/// Static facts and the overview's description of one device.
pub(crate) fn ipu_static(asked: u32, a: &Attributes) -> (GpuInfo, Vec<(String, String)>) {
    let id = device_id(a, asked);
    let facts = STATIC
        .iter()
        .filter_map(|k| {
            let v = a.get(*k)?;
            Some((format!("ipu.{id}.{k}"), sanitize(v)))
        })
        .collect();
    let s = |k: &str| a.get(k).map(|v| sanitize(v));
    let name = match (s("board type"), s("ipu architecture")) {
        (Some(b), Some(arch)) => format!("Graphcore {b} ({arch})"),
        (Some(b), None) => format!("Graphcore {b}"),
        (None, _) => format!("Graphcore IPU {id}"),
    };
    let driver = match (s("driver version"), s("firmware version")) {
        (Some(d), Some(f)) => format!("{d} (firmware {f})"),
        (d, f) => d.or(f).unwrap_or_default(),
    };
    (
        GpuInfo {
            name,
            memory_total: 0,
            driver,
        },
        facts,
    )
}

pub(crate) struct IpuCollector {
    gc_info: PathBuf,
    devices: Vec<u32>,
    interval: Duration,
    /// With `--pid`: the monitored process and its tree.
    pid: Option<(u32, SharedTree)>,
    gpus: Vec<GpuInfo>,
    facts: Vec<(String, String)>,
}

fn run_gc_info(
    gc_info: &std::path::Path,
    args: &[&str],
    deadline: Instant,
) -> Result<String, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("no time left in this sample".to_string());
    }
    child::run(gc_info, args, left, MAX_OUTPUT)
        .map(|o| String::from_utf8_lossy(&o).into_owned())
        .map_err(|e| e.to_string())
}

impl IpuCollector {
    /// `gc-info` on `PATH` listing at least one IPU; static attributes read once.
    pub(crate) fn detect(d: &Detect<'_>) -> Result<Self, String> {
        let gc_info = find_on_path("gc-info").ok_or("gc-info not found on PATH")?;
        let tree = d.opts.pid.map(|p| (p, d.tree.clone()));
        Self::with_program(gc_info, d.opts.interval, tree)
    }

    pub(crate) fn with_program(
        gc_info: PathBuf,
        interval: Duration,
        pid: Option<(u32, SharedTree)>,
    ) -> Result<Self, String> {
        let deadline = Instant::now() + DETECT_BUDGET;
        let list = run_gc_info(&gc_info, &["--list-devices"], deadline)
            .map_err(|e| format!("gc-info --list-devices: {e}"))?;
        let devices = parse_device_list(&list);
        if devices.is_empty() {
            return Err("gc-info lists no IPUs".to_string());
        }
        let mut gpus = Vec::new();
        let mut facts = Vec::new();
        for &n in &devices {
            // A device that does not answer now still gets sampled (and reported).
            let a = run_gc_info(&gc_info, &["-i", "-d", &n.to_string()], deadline)
                .map(|t| parse_device_info(&t))
                .unwrap_or_default();
            let (g, f) = ipu_static(n, &a);
            gpus.push(g);
            facts.extend(f);
        }
        Ok(Self {
            gc_info,
            devices,
            interval,
            pid,
            gpus,
            facts,
        })
    }

    /// Is this device used by the monitored process tree (always, without `--pid`)?
    fn monitored(&self, a: &Attributes) -> bool {
        let Some((root, tree)) = &self.pid else {
            return true;
        };
        let Some(user) = a
            .get("user process id")
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            return false;
        };
        user == *root || tree.lock().is_ok_and(|t| t.pids().any(|p| p == user))
    }
}

impl Collector for IpuCollector {
    fn name(&self) -> &'static str {
        "ipu"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let deadline = Instant::now() + sample_budget(self.interval);
        let mut problems = Vec::new();
        for &n in &self.devices {
            let text = match run_gc_info(&self.gc_info, &["-i", "-d", &n.to_string()], deadline) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(format!("device {n}: {e}"));
                    continue;
                }
            };
            let a = parse_sampled_attributes(&text);
            if !METRICS.iter().any(|(k, _)| a.contains_key(*k)) {
                problems.push(format!(
                    "device {n}: no IPU attributes in gc-info output ('{}')",
                    preview(&text, 60)
                ));
                continue;
            }
            if self.monitored(&a) {
                ipu_metrics(&device_id(&a, n), &a, out, &mut problems);
            }
        }
        problems_result(&self.gc_info, &problems)
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.gpus.clone()
    }

    fn static_info(&self) -> Vec<(String, String)> {
        self.facts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Graphcore's documented `gc-info -i -d 0` of a C600 (tests/fixtures/ipu).
    const C600: &str = include_str!("../../../tests/fixtures/ipu/gc-info-i-d0-c600.txt");
    const LIST: &str = include_str!("../../../tests/fixtures/ipu/gc-info-list-devices-pod.txt");

    #[test]
    fn c600_metrics_with_units_from_the_values() {
        let a = parse_device_info(C600);
        let mut out = Vec::new();
        let mut problems = Vec::new();
        ipu_metrics("0", &a, &mut out, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            out,
            vec![
                ("ipu.0.average board temp (C)".to_string(), 17.8),
                ("ipu.0.average die temp (C)".to_string(), 20.0),
                ("ipu.0.clock (MHz)".to_string(), 20.0),
                // "ipu power: N/A" is left out
                ("ipu.0.total board power (W)".to_string(), 12.6),
                ("ipu.0.ipu utilisation (%)".to_string(), 0.0),
                ("ipu.0.ipu utilisation (session) (%)".to_string(), 0.0),
            ]
        );
    }

    #[test]
    fn a_sample_parses_only_what_it_uses_and_the_same_way() {
        const C2: &str = include_str!("../../../tests/fixtures/ipu/gc-info-i-d0-c2.txt");
        for text in [
            C600,
            C2,
            "id: 3\nclock: 1GHz\nclock: 2GHz\nx\n  user process id: 42 \n",
        ] {
            let all = parse_device_info(text);
            let some = parse_sampled_attributes(text);
            assert!(some.len() < all.len() || all.len() <= 3, "{some:?}");
            for (k, v) in &some {
                assert_eq!(all.get(k), Some(v), "{k}");
            }
            for (k, _) in METRICS.iter().chain(&[("id", ""), ("user process id", "")]) {
                assert_eq!(some.get(*k), all.get(*k), "{k}");
            }
        }
        assert!(!parse_sampled_attributes(C600).contains_key("board serial number"));
    }

    #[test]
    fn quantities_and_units() {
        assert_eq!(parse_quantity("1.33GHz", "MHz"), Ok(Some(1330.0)));
        assert_eq!(parse_quantity("500 mW", "W"), Ok(Some(0.5)));
        assert_eq!(parse_quantity("N/A", "W"), Ok(None));
        assert_eq!(parse_quantity("42", "%"), Ok(Some(42.0)));
        assert_eq!(parse_quantity("  36.2 C ", "C"), Ok(Some(36.2)));
        assert!(parse_quantity("12 parsecs", "C").is_err());
        assert_eq!(parse_quantity("", "C"), Ok(None));
    }

    #[test]
    fn device_list_skips_multi_ipu_devices() {
        assert_eq!(parse_device_list(LIST), vec![0, 1, 2, 3]);
        assert!(parse_device_list("garbage\n\u{1b}[2J").is_empty());
    }

    #[test]
    fn static_facts() {
        let (g, f) = ipu_static(7, &parse_device_info(C600));
        assert_eq!(g.name, "Graphcore C600 (ipu21)");
        assert_eq!(g.driver, "1.3.0 (firmware 2.6.8)");
        assert!(f.contains(&(
            "ipu.0.board serial number".to_string(),
            "0063.0063.822391".to_string()
        )));
        assert!(f.contains(&("ipu.0.link speed".to_string(), "16.0 GT/s".to_string())));
        assert!(!f.iter().any(|(k, _)| k.contains("utilisation")));
    }
}
