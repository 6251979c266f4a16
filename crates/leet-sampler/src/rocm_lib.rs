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

use std::ffi::{c_char, CStr};
use std::mem::ManuallyDrop;

use super::{GpuInfo, SamplerError};

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

type InitFn = unsafe extern "C" fn(u64) -> Status;
type NumDevicesFn = unsafe extern "C" fn(*mut u32) -> Status;
type PercentFn = unsafe extern "C" fn(u32, *mut u32) -> Status;
type MemoryFn = unsafe extern "C" fn(u32, u32, *mut u64) -> Status;
type TempFn = unsafe extern "C" fn(u32, u32, u32, *mut i64) -> Status;
/// `rsmi_dev_power_get(dv_ind, uint64_t *power, RSMI_POWER_TYPE *type)`
type PowerFn = unsafe extern "C" fn(u32, *mut u64, *mut u32) -> Status;
/// `rsmi_dev_power_ave_get` / `rsmi_dev_power_cap_get(dv_ind, sensor_ind, uint64_t *)`
type SensorFn = unsafe extern "C" fn(u32, u32, *mut u64) -> Status;
type EnergyFn = unsafe extern "C" fn(u32, *mut u64, *mut f32, *mut u64) -> Status;
type NameFn = unsafe extern "C" fn(u32, *mut c_char, usize) -> Status;
type VersionFn = unsafe extern "C" fn(u32, *mut c_char, u32) -> Status;
type StatusStringFn = unsafe extern "C" fn(Status, *mut *const c_char) -> Status;

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

struct Api {
    busy: Option<PercentFn>,
    memory_busy: Option<PercentFn>,
    mem_overdrive: Option<PercentFn>,
    memory_usage: Option<MemoryFn>,
    memory_total: Option<MemoryFn>,
    temp: Option<TempFn>,
    power: Option<PowerFn>,
    power_ave: Option<SensorFn>,
    power_cap: Option<SensorFn>,
    energy: Option<EnergyFn>,
    name: Option<NameFn>,
    version: Option<VersionFn>,
    status_string: Option<StatusStringFn>,
    /// Keeps the entry points valid; never unloaded (its init may start threads).
    _lib: ManuallyDrop<libloading::Library>,
}

struct Device {
    index: u32,
    available: [bool; READS],
}

/// A loaded, initialised ROCm SMI library with at least one device.
pub(crate) struct RocmSmi {
    api: Api,
    devices: Vec<Device>,
}

fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: T is the fn-pointer type rocm_smi.h gives the symbol `name`.
    unsafe { lib.get::<T>(name.as_bytes()) }.ok().map(|s| *s)
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
            // SAFETY: loading runs the library's initialisers; librocm_smi64's are benign.
            match unsafe { libloading::Library::new(path) } {
                Ok(lib) => {
                    loaded = Some((path.clone(), lib));
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(format!("cannot load {path}: {e}"));
                }
            }
        }
        let Some((path, lib)) = loaded else {
            return Err(first_err.unwrap_or_else(|| "no librocm_smi64.so to load".to_string()));
        };
        let init: InitFn = symbol(&lib, "rsmi_init").ok_or(format!("{path} has no rsmi_init"))?;
        let num: NumDevicesFn = symbol(&lib, "rsmi_num_monitor_devices")
            .ok_or(format!("{path} has no rsmi_num_monitor_devices"))?;
        let api = Api {
            busy: symbol(&lib, "rsmi_dev_busy_percent_get"),
            memory_busy: symbol(&lib, "rsmi_dev_memory_busy_percent_get"),
            mem_overdrive: symbol(&lib, "rsmi_dev_mem_overdrive_level_get"),
            memory_usage: symbol(&lib, "rsmi_dev_memory_usage_get"),
            memory_total: symbol(&lib, "rsmi_dev_memory_total_get"),
            temp: symbol(&lib, "rsmi_dev_temp_metric_get"),
            power: symbol(&lib, "rsmi_dev_power_get"),
            power_ave: symbol(&lib, "rsmi_dev_power_ave_get"),
            power_cap: symbol(&lib, "rsmi_dev_power_cap_get"),
            energy: symbol(&lib, "rsmi_dev_energy_count_get"),
            name: symbol(&lib, "rsmi_dev_name_get"),
            version: symbol(&lib, "rsmi_version_str_get"),
            status_string: symbol(&lib, "rsmi_status_string"),
            _lib: ManuallyDrop::new(lib),
        };
        // SAFETY: rocm_smi.h signatures; the out-pointer is a live local.
        let rc = unsafe { init(0) };
        if rc != RSMI_STATUS_SUCCESS {
            return Err(format!("rsmi_init: {}", api.describe(rc)));
        }
        let mut count = 0u32;
        let rc = unsafe { num(&mut count) };
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
        let driver = self
            .api
            .version
            .and_then(|f| {
                let mut buf = [0 as c_char; 256];
                // SAFETY: the buffer and its length match.
                let rc = unsafe { f(RSMI_SW_COMP_DRIVER, buf.as_mut_ptr(), buf.len() as u32) };
                (rc == RSMI_STATUS_SUCCESS).then(|| c_string(&buf))
            })
            .unwrap_or_default();
        self.devices
            .iter()
            .map(|d| GpuInfo {
                name: self
                    .api
                    .name
                    .and_then(|f| {
                        let mut buf = [0 as c_char; 256];
                        // SAFETY: the buffer and its length match.
                        let rc = unsafe { f(d.index, buf.as_mut_ptr(), buf.len()) };
                        (rc == RSMI_STATUS_SUCCESS).then(|| c_string(&buf))
                    })
                    .unwrap_or_default(),
                memory_total: self
                    .api
                    .memory_total
                    .and_then(|f| {
                        let mut total = 0u64;
                        // SAFETY: rocm_smi.h signature; live out-pointer.
                        let rc = unsafe { f(d.index, RSMI_MEM_TYPE_VRAM, &mut total) };
                        (rc == RSMI_STATUS_SUCCESS).then_some(total)
                    })
                    .unwrap_or(0),
                driver: driver.clone(),
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
            // SAFETY (every call): rocm_smi.h signatures; out-pointers are live locals.
            let mut busy = 0u32;
            if read(Read::Busy, &mut || {
                api.busy.map(|f| unsafe { f(i, &mut busy) })
            }) {
                out.push((key("gpu"), f64::from(busy)));
            }
            let (mut used, mut total) = (0u64, 0u64);
            if read(Read::Vram, &mut || {
                let u = api.memory_usage?;
                let t = api.memory_total?;
                let rc = unsafe { u(i, RSMI_MEM_TYPE_VRAM, &mut used) };
                if rc != RSMI_STATUS_SUCCESS {
                    return Some(rc);
                }
                Some(unsafe { t(i, RSMI_MEM_TYPE_VRAM, &mut total) })
            }) && total > 0
            {
                out.push((key("memoryAllocated"), used as f64 / total as f64 * 100.0));
            }
            let mut mem_busy = 0u32;
            if read(Read::MemoryBusy, &mut || {
                api.memory_busy.map(|f| unsafe { f(i, &mut mem_busy) })
            }) {
                out.push((key("memoryReadWriteActivity"), f64::from(mem_busy)));
            }
            let mut od = 0u32;
            if read(Read::MemoryOverDrive, &mut || {
                api.mem_overdrive.map(|f| unsafe { f(i, &mut od) })
            }) {
                out.push((key("memoryOverDrive"), f64::from(od)));
            }
            let mut milli_c = 0i64;
            if read(Read::Temp, &mut || {
                api.temp.map(|f| unsafe {
                    f(i, RSMI_TEMP_TYPE_MEMORY, RSMI_TEMP_CURRENT, &mut milli_c)
                })
            }) {
                out.push((key("temp"), milli_c as f64 / 1000.0));
            }
            let mut micro_w = 0u64;
            let power = read(Read::Power, &mut || {
                if let Some(f) = api.power {
                    let mut kind = 0u32;
                    Some(unsafe { f(i, &mut micro_w, &mut kind) })
                } else {
                    api.power_ave.map(|f| unsafe { f(i, 0, &mut micro_w) })
                }
            })
            .then(|| micro_w as f64 / 1e6);
            if let Some(w) = power {
                out.push((key("powerWatts"), w));
            }
            let mut cap_uw = 0u64;
            if let Some(w) = power {
                if read(Read::PowerCap, &mut || {
                    api.power_cap.map(|f| unsafe { f(i, 0, &mut cap_uw) })
                }) && cap_uw > 0
                {
                    out.push((key("powerPercent"), w / (cap_uw as f64 / 1e6) * 100.0));
                }
            }
            let (mut counter, mut resolution, mut ts) = (0u64, 0f32, 0u64);
            if read(Read::Energy, &mut || {
                api.energy
                    .map(|f| unsafe { f(i, &mut counter, &mut resolution, &mut ts) })
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
        let text = self
            .status_string
            .and_then(|f| {
                let mut p: *const c_char = std::ptr::null();
                // SAFETY: rsmi_status_string stores a static string's address in p.
                let ok = unsafe { f(rc, &mut p) } == RSMI_STATUS_SUCCESS && !p.is_null();
                // SAFETY: non-NULL: a NUL-terminated string owned by the library.
                ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
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
