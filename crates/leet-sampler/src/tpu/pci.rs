//! Finding TPUs: the chip generations of Google's `tpu-info` and the PCI scan.

use std::io::Read;
use std::path::Path;

use crate::GpuInfo;

/// Google's PCI vendor id.
pub(crate) const GOOGLE_VENDOR: &str = "0x1ae0";

/// One TPU chip generation, as Google's tpu-info `TpuChip` table has it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Generation {
    pub(crate) name: &'static str,
    /// PCI `device` id.
    pub(crate) device: &'static str,
    /// PCI `subsystem_device`, where the device id is shared (v2/v3).
    pub(crate) subsystem: Option<&'static str>,
    /// HBM per chip, GiB (tpu-info's figure).
    pub(crate) hbm_gib: u64,
    /// Devices (TensorCores seen as devices) per chip.
    pub(crate) devices_per_chip: u32,
    /// Devices each per-chip duty cycle is copied to: v2/v3 report it per chip; 7x,
    /// although it has two devices per chip, reports it per device.
    pub(crate) duty_cycle_fanout: i64,
}

/// tpu-info `tpu_info/device.py` (fe85c12), spec §8.
pub(crate) const GENERATIONS: &[Generation] = &[
    Generation {
        name: "v2",
        device: "0x0027",
        subsystem: Some("0x004e"),
        hbm_gib: 8,
        devices_per_chip: 2,
        duty_cycle_fanout: 2,
    },
    Generation {
        name: "v3",
        device: "0x0027",
        subsystem: Some("0x004f"),
        hbm_gib: 16,
        devices_per_chip: 2,
        duty_cycle_fanout: 2,
    },
    Generation {
        name: "v4",
        device: "0x005e",
        subsystem: None,
        hbm_gib: 32,
        devices_per_chip: 1,
        duty_cycle_fanout: 1,
    },
    Generation {
        name: "v5e",
        device: "0x0063",
        subsystem: None,
        hbm_gib: 16,
        devices_per_chip: 1,
        duty_cycle_fanout: 1,
    },
    Generation {
        name: "v5p",
        device: "0x0062",
        subsystem: None,
        hbm_gib: 95,
        devices_per_chip: 1,
        duty_cycle_fanout: 1,
    },
    Generation {
        name: "v6e",
        device: "0x006f",
        subsystem: None,
        hbm_gib: 32,
        devices_per_chip: 1,
        duty_cycle_fanout: 1,
    },
    Generation {
        name: "7x",
        device: "0x0076",
        subsystem: None,
        hbm_gib: 192,
        devices_per_chip: 2,
        duty_cycle_fanout: 1,
    },
];

/// The generation of a Google PCI device, by its `device` and `subsystem_device` ids
/// (`0x`-prefixed hex, any case).
pub(crate) fn generation(device: &str, subsystem: &str) -> Option<&'static Generation> {
    let device = device.trim().to_ascii_lowercase();
    let subsystem = subsystem.trim().to_ascii_lowercase();
    GENERATIONS
        .iter()
        .find(|g| g.device == device && g.subsystem.is_none_or(|s| s == subsystem))
}

/// One TPU chip on the PCI bus.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Chip {
    /// PCI address (the sysfs directory name).
    pub(crate) address: String,
    pub(crate) generation: &'static Generation,
}

impl Chip {
    /// Overview entry: `TPU v4`, HBM bytes.
    pub(crate) fn info(&self) -> GpuInfo {
        let name = if self.generation.name.starts_with('v') {
            format!("TPU {}", self.generation.name)
        } else {
            format!("TPU{}", self.generation.name)
        };
        GpuInfo {
            name,
            memory_total: self.generation.hbm_gib << 30,
            driver: String::new(),
        }
    }
}

/// A small sysfs attribute, trimmed (at most 64 bytes are read).
fn read_attr(dir: &Path, name: &str) -> Option<String> {
    let mut buf = Vec::with_capacity(16);
    std::fs::File::open(dir.join(name))
        .ok()?
        .take(64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).trim().to_string())
}

/// TPU chips under `<root>/bus/pci/devices`, in PCI address order. `Err(why)` when there
/// are none, naming the directory and any Google device that is not a known TPU.
pub(crate) fn scan_pci(root: &Path) -> Result<Vec<Chip>, String> {
    let dir = root.join("bus/pci/devices");
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .take(4096)
        .collect();
    names.sort();
    let mut chips = Vec::new();
    let mut other_google = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let Some(vendor) = read_attr(&path, "vendor") else {
            continue;
        };
        if !vendor.eq_ignore_ascii_case(GOOGLE_VENDOR) {
            continue;
        }
        let device = read_attr(&path, "device").unwrap_or_default();
        let subsystem = read_attr(&path, "subsystem_device").unwrap_or_default();
        match generation(&device, &subsystem) {
            Some(generation) => chips.push(Chip {
                address: name,
                generation,
            }),
            None => other_google.push(leet_text::sanitize(&device)),
        }
    }
    if chips.is_empty() {
        let mut why = format!("no TPU on the PCI bus ({})", dir.display());
        if !other_google.is_empty() {
            other_google.truncate(4);
            why.push_str(&format!(
                "; Google device id {} is not a TPU",
                other_google.join(", ")
            ));
        }
        return Err(why);
    }
    Ok(chips)
}

pub(super) fn most_common(chips: &[Chip]) -> Option<&'static Generation> {
    let mut counts: Vec<(&'static Generation, usize)> = Vec::new();
    for c in chips {
        match counts
            .iter_mut()
            .find(|(g, _)| std::ptr::eq(*g, c.generation))
        {
            Some((_, n)) => *n += 1,
            None => counts.push((c.generation, 1)),
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(g, _)| g)
}
