//! AMD GPUs through the ROCm SMI library, `librocm_smi64.so`, loaded at run time as
//! W&B 0.31 does (spec §6): no process per sample. `$LEET_ROCM_SMI_LIB` names the file;
//! otherwise `librocm_smi64.so` (W&B's name), the sonames of ROCm 6 and 5 (`.so.7`,
//! `.so.6`, for hosts without the development symlink), then ROCm's default
//! `/opt/rocm/lib/librocm_smi64.so`, through the dynamic loader's search path.
//!
//! Device `dv_ind` N gives the same `gpu.N.*` keys as the `rocm-smi -a --json` path (whose
//! `cardN` is that index), read from the calls rocm-smi itself makes for those fields,
//! plus `energyJoules`:
//!
//! | key | call | unit conversion |
//! |---|---|---|
//! | `gpu` | `rsmi_dev_busy_percent_get` | % |
//! | `memoryAllocated` | `rsmi_dev_memory_usage_get` / `_total_get` (VRAM) | used / total × 100 |
//! | `memoryReadWriteActivity` | `rsmi_dev_memory_busy_percent_get` | % |
//! | `memoryOverDrive` | `rsmi_dev_mem_overdrive_level_get` | % |
//! | `temp` | `rsmi_dev_temp_metric_get(MEMORY, CURRENT)` (the CLI path's memory sensor) | m°C / 1000 |
//! | `powerWatts` | `rsmi_dev_power_get` (current socket or average power; `rsmi_dev_power_ave_get` on old libraries) | µW / 10⁶ |
//! | `powerPercent` | that / `rsmi_dev_power_cap_get` | × 100 |
//! | `energyJoules` | `rsmi_dev_energy_count_get` | counter × resolution (µJ) / 10⁶ |
//!
//! A call answering "not supported", "not implemented" or "permission denied" is not made
//! again for that device (the NVML collector's probe-once rule); other failures skip the
//! key for that sample only.
//!
//! Signatures and enum values are copied from ROCm/rocm_smi_lib
//! `include/rocm_smi/rocm_smi.h` (MIT; read at commit a1295714f2f6eefa5c55bf5779d17d163ed0e3d0).
//! The calls themselves are made in [`ffi`], the one place with `unsafe` code.

use std::ffi::c_char;

use super::{GpuInfo, SamplerError};

mod ffi;
use ffi::Api;

type Status = u32;
const RSMI_STATUS_SUCCESS: Status = 0;
const RSMI_STATUS_NOT_SUPPORTED: Status = 2;
const RSMI_STATUS_PERMISSION: Status = 4;
const RSMI_STATUS_NOT_YET_IMPLEMENTED: Status = 9;
/// `rsmi_memory_type_t`
const RSMI_MEM_TYPE_VRAM: u32 = 0;
/// `rsmi_temperature_type_t`
const RSMI_TEMP_TYPE_MEMORY: u32 = 2;
/// `rsmi_temperature_metric_t`
const RSMI_TEMP_CURRENT: u32 = 0;
/// `rsmi_sw_component_t`
const RSMI_SW_COMP_DRIVER: u32 = 0;

/// The library files tried when `$LEET_ROCM_SMI_LIB` is not set.
const DEFAULT_LIBS: [&str; 4] = [
    "librocm_smi64.so",
    "librocm_smi64.so.7",
    "librocm_smi64.so.6",
    "/opt/rocm/lib/librocm_smi64.so",
];

/// One table for the per-device reads: probe flag index and key.
#[derive(Debug, Clone, Copy)]
#[repr(usize)]
enum Read {
    Busy,
    Vram,
    MemoryBusy,
    MemoryOverDrive,
    Temp,
    Power,
    PowerCap,
    Energy,
}
const READS: usize = Read::Energy as usize + 1;

struct Device {
    index: u32,
    available: [bool; READS],
}

/// A loaded, initialised ROCm SMI library with at least one device.
pub(crate) struct RocmSmi {
    api: Api,
    devices: Vec<Device>,
}

impl RocmSmi {
    /// Load, `rsmi_init(0)`, count devices. The error says which step failed.
    pub(crate) fn load() -> Result<Self, String> {
        let candidates: Vec<String> = match std::env::var("LEET_ROCM_SMI_LIB") {
            Ok(p) => vec![p],
            Err(_) => DEFAULT_LIBS.iter().map(|s| (*s).to_string()).collect(),
        };
        let mut first_err = None;
        let mut loaded = None;
        for path in &candidates {
            match ffi::open(path) {
                Ok(lib) => {
                    loaded = Some(lib);
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let Some(lib) = loaded else {
            return Err(first_err.unwrap_or_else(|| "no librocm_smi64.so to load".to_string()));
        };
        let path = lib.path().to_owned();
        let api = lib.api()?;
        let rc = api.init();
        if rc != RSMI_STATUS_SUCCESS {
            return Err(format!("rsmi_init: {}", api.describe(rc)));
        }
        let mut count = 0u32;
        let rc = api.num_devices(&mut count);
        if rc != RSMI_STATUS_SUCCESS {
            return Err(format!("rsmi_num_monitor_devices: {}", api.describe(rc)));
        }
        if count == 0 {
            return Err(format!("{path} reports no devices"));
        }
        let devices = (0..count.min(1024))
            .map(|index| Device {
                index,
                available: [true; READS],
            })
            .collect();
        Ok(Self { api, devices })
    }

    /// Name, VRAM total and driver version of each device.
    pub(crate) fn gpu_info(&self) -> Vec<GpuInfo> {
        let ok = Some(RSMI_STATUS_SUCCESS);
        let mut buf = [0 as c_char; 256];
        let driver = if self.api.version(RSMI_SW_COMP_DRIVER, &mut buf) == ok {
            c_string(&buf)
        } else {
            String::new()
        };
        self.devices
            .iter()
            .map(|d| {
                let mut buf = [0 as c_char; 256];
                let name = if self.api.name(d.index, &mut buf) == ok {
                    c_string(&buf)
                } else {
                    String::new()
                };
                let mut total = 0u64;
                let memory_total = if self
                    .api
                    .memory_total(d.index, RSMI_MEM_TYPE_VRAM, &mut total)
                    == ok
                {
                    total
                } else {
                    0
                };
                GpuInfo {
                    name,
                    memory_total,
                    driver: driver.clone(),
                }
            })
            .collect()
    }

    /// Append every device's `gpu.N.*` values.
    pub(crate) fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let api = &self.api;
        for d in &mut self.devices {
            let i = d.index;
            let mut read = |r: Read, f: &mut dyn FnMut() -> Option<Status>| -> bool {
                if !d.available[r as usize] {
                    return false;
                }
                match f() {
                    Some(RSMI_STATUS_SUCCESS) => true,
                    None
                    | Some(
                        RSMI_STATUS_NOT_SUPPORTED
                        | RSMI_STATUS_PERMISSION
                        | RSMI_STATUS_NOT_YET_IMPLEMENTED,
                    ) => {
                        d.available[r as usize] = false;
                        false
                    }
                    Some(_) => false,
                }
            };
            let key = |name: &str| format!("gpu.{i}.{name}");
            let mut busy = 0u32;
            if read(Read::Busy, &mut || api.busy(i, &mut busy)) {
                out.push((key("gpu"), f64::from(busy)));
            }
            let (mut used, mut total) = (0u64, 0u64);
            if read(Read::Vram, &mut || {
                api.memory_used_and_total(i, RSMI_MEM_TYPE_VRAM, &mut used, &mut total)
            }) && total > 0
            {
                out.push((key("memoryAllocated"), used as f64 / total as f64 * 100.0));
            }
            let mut mem_busy = 0u32;
            if read(Read::MemoryBusy, &mut || api.memory_busy(i, &mut mem_busy)) {
                out.push((key("memoryReadWriteActivity"), f64::from(mem_busy)));
            }
            let mut od = 0u32;
            if read(Read::MemoryOverDrive, &mut || api.mem_overdrive(i, &mut od)) {
                out.push((key("memoryOverDrive"), f64::from(od)));
            }
            let mut milli_c = 0i64;
            if read(Read::Temp, &mut || {
                api.temp(i, RSMI_TEMP_TYPE_MEMORY, RSMI_TEMP_CURRENT, &mut milli_c)
            }) {
                out.push((key("temp"), milli_c as f64 / 1000.0));
            }
            let mut micro_w = 0u64;
            let power =
                read(Read::Power, &mut || api.power(i, &mut micro_w)).then(|| micro_w as f64 / 1e6);
            if let Some(w) = power {
                out.push((key("powerWatts"), w));
            }
            let mut cap_uw = 0u64;
            if let Some(w) = power {
                if read(Read::PowerCap, &mut || api.power_cap(i, 0, &mut cap_uw)) && cap_uw > 0 {
                    out.push((key("powerPercent"), w / (cap_uw as f64 / 1e6) * 100.0));
                }
            }
            let (mut counter, mut resolution, mut ts) = (0u64, 0f32, 0u64);
            if read(Read::Energy, &mut || {
                api.energy(i, &mut counter, &mut resolution, &mut ts)
            }) {
                let joules = counter as f64 * f64::from(resolution) / 1e6;
                if joules.is_finite() {
                    out.push((key("energyJoules"), joules));
                }
            }
        }
        Ok(())
    }
}

impl Api {
    fn describe(&self, rc: Status) -> String {
        let text = self.status_string(rc).unwrap_or_default();
        let text: String = leet_text::sanitize(&text).chars().take(160).collect();
        if text.is_empty() {
            format!("status {rc}")
        } else {
            format!("{text} (status {rc})")
        }
    }
}

/// The NUL-terminated string in `buf` (all of it when there is no NUL), sanitised.
fn c_string(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    leet_text::sanitize(&String::from_utf8_lossy(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_are_bounded_and_sanitised() {
        let mut buf = [b'x' as c_char; 8];
        assert_eq!(c_string(&buf), "xxxxxxxx");
        buf[2] = 0x1b;
        buf[3] = 0;
        assert_eq!(c_string(&buf), "xx");
    }
}
