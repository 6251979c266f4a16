//! AMD GPUs: through `librocm_smi64.so` when it loads (as W&B 0.31 does; see
//! `rocm_lib.rs`, which also gives `energyJoules`), otherwise through `rocm-smi -a --json`
//! forked once per sample (as the reference snapshot does). The library's failure is kept
//! and reported by the first CLI sample.
//!
//! Key mapping (spec §6), per card `cardN` → `gpu.N.*`:
//! `gpu` ← "GPU use (%)"; `memoryAllocated` ← "GPU memory use (%)" (ROCm ≤ 6.0) or
//! "GPU Memory Allocated (VRAM%)" (ROCm ≥ 6.1), else VRAM used/total; `memoryReadWriteActivity`
//! ← "GPU Memory Read/Write Activity (%)"; `memoryOverDrive` ← "GPU Memory OverDrive value (%)";
//! `temp` ← "Temperature (Sensor memory) (C)"; `powerWatts` ← "Average Graphics Package
//! Power (W)" or (MI300X) "Current Socket Graphics Package Power (W)"; `powerPercent` ←
//! power / "Max Graphics Package Power (W)" × 100.
//!
//! Unlike the reference, a field that is missing or not a number ("N/A") is left out
//! instead of being reported as 0.0.
//!
//! [`parse_rocm_smi_text`] reads the plain `rocm-smi -a` text form into the same per-card
//! maps, so captures like the MI300X one map to the same keys.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::child::{self, find_on_path};
use super::rocm_lib::RocmSmi;
use super::{Collector, GpuInfo, SamplerError};

/// Card index → (field → value), as rocm-smi prints them.
pub type Cards = BTreeMap<u32, BTreeMap<String, String>>;

/// Parse `rocm-smi --json` output. Keys other than `card<N>` (e.g. `system`) are ignored.
pub fn parse_rocm_smi_json(text: &str) -> Result<Cards, SamplerError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| SamplerError::Parse {
        what: "rocm-smi json".to_string(),
        detail: e.to_string(),
    })?;
    let obj = v.as_object().ok_or_else(|| SamplerError::Parse {
        what: "rocm-smi json".to_string(),
        detail: "top level is not an object".to_string(),
    })?;
    let mut cards = Cards::new();
    for (k, v) in obj {
        let Some(idx) = k.strip_prefix("card").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Some(fields) = v.as_object() else {
            continue;
        };
        let map = fields
            .iter()
            .map(|(f, v)| {
                let s = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (f.clone(), s)
            })
            .collect();
        cards.insert(idx, map);
    }
    Ok(cards)
}

/// Parse `rocm-smi -a` text: lines `GPU[N]<ws>: Field: value`. The first value of a
/// field wins; lines without a `: ` after the field name are skipped.
pub fn parse_rocm_smi_text(text: &str) -> Cards {
    let mut cards = Cards::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("GPU[") else {
            continue;
        };
        let Some((idx, rest)) = rest.split_once(']') else {
            continue;
        };
        let Ok(idx) = idx.parse::<u32>() else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let Some((field, value)) = rest.split_once(": ") else {
            continue;
        };
        let field = field.trim();
        if field.is_empty() {
            continue;
        }
        cards
            .entry(idx)
            .or_default()
            .entry(field.to_string())
            .or_insert_with(|| value.trim().to_string());
    }
    cards
}

fn num(fields: &BTreeMap<String, String>, key: &str) -> Option<f64> {
    fields
        .get(key)?
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// Map parsed cards to W&B keys.
pub fn amd_metrics(cards: &Cards, out: &mut Vec<(String, f64)>) {
    for (idx, f) in cards {
        let mut push = |name: &str, v: Option<f64>| {
            if let Some(v) = v {
                out.push((format!("gpu.{idx}.{name}"), v));
            }
        };
        push("gpu", num(f, "GPU use (%)"));
        let vram = num(f, "VRAM Total Used Memory (B)")
            .zip(num(f, "VRAM Total Memory (B)"))
            .filter(|(_, t)| *t > 0.0)
            .map(|(u, t)| u / t * 100.0);
        push(
            "memoryAllocated",
            num(f, "GPU memory use (%)")
                .or_else(|| num(f, "GPU Memory Allocated (VRAM%)"))
                .or(vram),
        );
        push(
            "memoryReadWriteActivity",
            num(f, "GPU Memory Read/Write Activity (%)"),
        );
        push("memoryOverDrive", num(f, "GPU Memory OverDrive value (%)"));
        push("temp", num(f, "Temperature (Sensor memory) (C)"));
        let power = num(f, "Average Graphics Package Power (W)")
            .or_else(|| num(f, "Current Socket Graphics Package Power (W)"));
        push("powerWatts", power);
        let max = num(f, "Max Graphics Package Power (W)").filter(|m| *m > 0.0);
        push("powerPercent", power.zip(max).map(|(p, m)| p / m * 100.0));
    }
}

/// Static info per card: series/name, VRAM total, driver (from the `system` block).
pub fn amd_gpu_info(cards: &Cards, driver: &str) -> Vec<GpuInfo> {
    cards
        .values()
        .map(|f| GpuInfo {
            name: ["Card Series", "Card series", "Device Name"]
                .iter()
                .find_map(|k| f.get(*k).cloned())
                .unwrap_or_default(),
            memory_total: num(f, "VRAM Total Memory (B)").map_or(0, |v| v as u64),
            driver: driver.to_string(),
        })
        .collect()
}

/// `system."Driver version"` of `rocm-smi --json` output.
pub fn rocm_driver_version(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    v.get("system")?
        .get("Driver version")?
        .as_str()
        .map(str::to_string)
}

/// Largest `rocm-smi` output read (a 64-GPU host prints well under 1 MiB).
const MAX_OUTPUT: usize = 8 << 20;

/// Run `rocm-smi`-style tools through [`child::run`]: own process group, deadline,
/// output cap; the child is killed and reaped on timeout.
pub(crate) fn run_with_timeout(
    cmd: &Path,
    args: &[&str],
    timeout: Duration,
) -> Result<String, SamplerError> {
    let out = child::run(cmd, args, timeout, MAX_OUTPUT)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Where the samples come from.
enum Source {
    /// `librocm_smi64.so`: no process per sample.
    Lib(RocmSmi),
    /// `rocm-smi -a --json` once per sample.
    Cli(PathBuf),
}

pub(crate) struct AmdCollector {
    source: Source,
    info: Vec<GpuInfo>,
    /// Why the library could not be used, reported once by the first CLI sample.
    fallback: Option<String>,
}

const ROCM_TIMEOUT: Duration = Duration::from_secs(5);

impl AmdCollector {
    /// Detect: the amdgpu driver live (`$LEET_SYSFS_ROOT/module/amdgpu/initstate`), so
    /// nothing AMD-specific is loaded on other hosts; then `librocm_smi64.so` (see
    /// [`RocmSmi`]); failing that, `rocm-smi` on `$PATH` whose first run lists a card.
    /// The error says which step failed (both, when library and CLI fail).
    pub(crate) fn detect() -> Result<Self, String> {
        let initstate = super::sysfs_root().join("module/amdgpu/initstate");
        let live = std::fs::read_to_string(&initstate).is_ok_and(|s| s.contains("live"));
        if !live {
            return Err(format!(
                "amdgpu driver not loaded ({})",
                initstate.display()
            ));
        }
        let lib_err = match RocmSmi::load() {
            Ok(lib) => {
                return Ok(Self {
                    info: lib.gpu_info(),
                    source: Source::Lib(lib),
                    fallback: None,
                })
            }
            Err(e) => e,
        };
        Self::detect_cli()
            .map(|mut c| {
                c.fallback = Some(lib_err.clone());
                c
            })
            .map_err(|cli_err| format!("{lib_err}; {cli_err}"))
    }

    fn detect_cli() -> Result<Self, String> {
        let rocm_smi = find_on_path("rocm-smi").ok_or("rocm-smi not found on PATH")?;
        let text = run_with_timeout(&rocm_smi, &["-a", "--json"], ROCM_TIMEOUT)
            .map_err(|e| e.to_string())?;
        let cards = parse_rocm_smi_json(&text).map_err(|e| e.to_string())?;
        if cards.is_empty() {
            return Err("rocm-smi lists no cards".to_string());
        }
        let driver = rocm_driver_version(&text).unwrap_or_default();
        Ok(Self {
            info: amd_gpu_info(&cards, &driver),
            source: Source::Cli(rocm_smi),
            fallback: None,
        })
    }

    pub(crate) fn gpu_info(&self) -> Vec<GpuInfo> {
        self.info.clone()
    }
}

impl Collector for AmdCollector {
    fn name(&self) -> &'static str {
        "amd"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        match &mut self.source {
            Source::Lib(lib) => lib.sample(out),
            Source::Cli(rocm_smi) => {
                let text = run_with_timeout(rocm_smi, &["-a", "--json"], ROCM_TIMEOUT)?;
                amd_metrics(&parse_rocm_smi_json(&text)?, out);
                match self.fallback.take() {
                    Some(why) => Err(SamplerError::Gpu(format!(
                        "librocm_smi64 not used ({why}); running rocm-smi each sample"
                    ))),
                    None => Ok(()),
                }
            }
        }
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.gpu_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_line_forms() {
        let t = "GPU[0]\t\t: Temperature (Sensor memory) (C): 33.0\nGPU[0]\t\t: MEC firmware version: \t138\nGPU[1]\t\t: Not supported\nGPU[0]\t\t: fclk clock level: 0: (1300Mhz)\n";
        let c = parse_rocm_smi_text(t);
        assert_eq!(c[&0]["Temperature (Sensor memory) (C)"], "33.0");
        assert_eq!(c[&0]["MEC firmware version"], "138");
        assert_eq!(c[&0]["fclk clock level"], "0: (1300Mhz)");
        assert!(!c.contains_key(&1));
    }

    #[test]
    fn missing_and_na_fields_are_left_out() {
        let mut f = BTreeMap::new();
        f.insert("GPU use (%)".to_string(), "N/A".to_string());
        f.insert(
            "Average Graphics Package Power (W)".to_string(),
            "10.0".to_string(),
        );
        let mut cards = Cards::new();
        cards.insert(3, f);
        let mut out = Vec::new();
        amd_metrics(&cards, &mut out);
        assert_eq!(out, vec![("gpu.3.powerWatts".to_string(), 10.0)]);
    }

    #[test]
    fn timeout_kills_the_child() {
        let sleep = find_on_path("sleep").expect("sleep on PATH");
        // `sleep 5` succeeds if waited for: an error is the timeout.
        let r = run_with_timeout(&sleep, &["5"], Duration::from_millis(200));
        assert!(r.is_err());
    }
}
