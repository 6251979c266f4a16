//! NVIDIA GPUs through NVML (nvml-wrapper, `libnvidia-ml.so.1` loaded at run time).
//!
//! NVML sits behind [`GpuBackend`] / [`GpuDevice`] so tests can drive the collector with
//! a fake. Each metric of each device has an availability flag: the first failing call
//! clears it for good (the reference's behaviour), so an unsupported metric costs one
//! probe, not one call per tick.
//!
//! On Hopper and newer GPUs the GPM profiling keys (`smActive`, `pipeTensorActive`,
//! `pcieTxBytes`, ...) are read too. The reference takes two GPM snapshots 200 ms apart
//! inside each sample; here each tick's snapshot is compared with the previous tick's, so
//! no sample waits and the rates cover the whole interval. The first sample has no GPM
//! keys, as the first sample has no `cpu`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::dcgm::GpuClaims;
use super::procfs::SharedTree;
use super::procs::GpuMemory;
use super::{Collector, GpuInfo, SamplerError};

/// Error text from a GPU backend call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError(pub String);

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which clock [`GpuDevice::clock_mhz`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    /// The streaming multiprocessors' clock.
    Sm,
    /// The memory clock.
    Memory,
    /// The graphics clock.
    Graphics,
}

/// One GPU. Units are NVML's: %, bytes, °C, mW, MHz.
///
/// Every method's error is the backend's reason for not answering.
pub trait GpuDevice {
    /// The device's name.
    fn name(&self) -> Result<String, GpuError>;
    /// (gpu %, memory-controller %)
    fn utilization(&self) -> Result<(u32, u32), GpuError>;
    /// (used bytes, total bytes)
    fn memory_info(&self) -> Result<(u64, u64), GpuError>;
    /// GPU core temperature, °C.
    fn temperature(&self) -> Result<u32, GpuError>;
    /// Power drawn, mW.
    fn power_usage_mw(&self) -> Result<u32, GpuError>;
    /// The power limit in force, mW.
    fn enforced_power_limit_mw(&self) -> Result<u32, GpuError>;
    /// The current frequency of clock `kind`, MHz.
    fn clock_mhz(&self, kind: ClockKind) -> Result<u32, GpuError>;
    /// Volatile ECC error count (corrected or uncorrected).
    fn ecc_errors(&self, corrected: bool) -> Result<u64, GpuError>;
    /// Fan speed, % of its maximum.
    fn fan_speed(&self) -> Result<u32, GpuError>;
    /// Video encoder use, %.
    fn encoder_utilization(&self) -> Result<u32, GpuError>;
    /// Energy used since the driver was loaded, in mJ.
    fn energy_mj(&self) -> Result<u64, GpuError>;
    /// The compute and graphics processes on this device (a process doing both may
    /// be listed twice).
    fn processes(&self) -> Result<Vec<GpuProcess>, GpuError>;
}

/// A process on a GPU, as NVML lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuProcess {
    /// Its process id.
    pub pid: u32,
    /// GPU memory it uses on this device, bytes; `None` where NVML cannot tell (no
    /// permission, some MIG and Windows WDDM setups).
    pub memory: Option<u64>,
}

/// The GPM metrics, in the order of [`GpmValues`]: the key suffix, and whether NVML's
/// value is MiB/s (converted to the bytes/s W&B's key names promise) rather than %.
pub const GPM_METRICS: [(&str, bool); 12] = [
    ("smActive", false),
    ("smOccupancy", false),
    ("pipeTensorActive", false),
    ("dramActive", false),
    ("pipeFp64Active", false),
    ("pipeFp32Active", false),
    ("pipeFp16Active", false),
    ("pipeTensorHmmaActive", false),
    ("pcieTxBytes", true),
    ("pcieRxBytes", true),
    ("nvlinkTxBytes", true),
    ("nvlinkRxBytes", true),
];

/// One GPM reading: NVML's value for each of [`GPM_METRICS`] (None where that metric
/// failed), in NVML's units (% or MiB/s).
pub type GpmValues = [Option<f64>; GPM_METRICS.len()];

/// A GPU library (NVML, or a fake in tests): the devices and their readings.
pub trait GpuBackend: Send {
    /// How many devices it sees.
    fn device_count(&self) -> u32;
    /// Device `index` (0-based, NVML's order).
    ///
    /// # Errors
    /// The backend's reason for not opening it.
    fn device(&self, index: u32) -> Result<Box<dyn GpuDevice + '_>, GpuError>;
    /// The driver's version, if it tells.
    fn driver_version(&self) -> Option<String>;
    /// Takes a GPM snapshot of device `index` and returns the metrics since the previous
    /// call's snapshot (None on the first call). An error means GPM is unusable on it
    /// (not supported, MIG mode, old driver).
    fn gpm(&self, index: u32) -> Result<Option<GpmValues>, GpuError>;
}

/// NVML through nvml-wrapper.
pub struct NvmlBackend {
    /// Leaked once per process: GPM snapshots borrow the library handle and live in
    /// this struct between ticks, and NVML stays loaded until exit anyway.
    nvml: &'static nvml_wrapper::Nvml,
    count: u32,
    /// The previous GPM snapshot of each device.
    gpm_prev: RefCell<Vec<Option<nvml_wrapper::gpm::GpmSample<'static>>>>,
}

impl NvmlBackend {
    /// Loads `libnvidia-ml.so.1`; the error says why NVIDIA monitoring is unavailable.
    pub fn init() -> Result<Self, GpuError> {
        let nvml = nvml_wrapper::Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
            .init()
            .or_else(|_| nvml_wrapper::Nvml::init())
            .map_err(|e| GpuError(format!("nvml init: {e}")))?;
        let count = nvml
            .device_count()
            .map_err(|e| GpuError(format!("nvml device count: {e}")))?;
        if count == 0 {
            return Err(GpuError("nvml reports no devices".to_string()));
        }
        Ok(Self {
            nvml: Box::leak(Box::new(nvml)),
            count,
            gpm_prev: RefCell::new((0..count).map(|_| None).collect()),
        })
    }
}

/// NVML's GPM ids for [`GPM_METRICS`], in the same order.
const GPM_IDS: [nvml_wrapper::enums::gpm::GpmMetricId; GPM_METRICS.len()] = {
    use nvml_wrapper::enums::gpm::GpmMetricId as G;
    [
        G::SmUtil,
        G::SmOccupancy,
        G::AnyTensorUtil,
        G::DramBwUtil,
        G::Fp64Util,
        G::Fp32Util,
        G::Fp16Util,
        G::HmmaTensorUtil,
        G::PcieTxPerSec,
        G::PcieRxPerSec,
        G::NvlinkTotalTxPerSec,
        G::NvlinkTotalRxPerSec,
    ]
};

struct NvmlDevice<'a>(nvml_wrapper::Device<'a>);

fn nv<T>(r: Result<T, nvml_wrapper::error::NvmlError>) -> Result<T, GpuError> {
    r.map_err(|e| GpuError(e.to_string()))
}

impl GpuDevice for NvmlDevice<'_> {
    fn name(&self) -> Result<String, GpuError> {
        nv(self.0.name())
    }
    fn utilization(&self) -> Result<(u32, u32), GpuError> {
        nv(self.0.utilization_rates()).map(|u| (u.gpu, u.memory))
    }
    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        nv(self.0.memory_info()).map(|m| (m.used, m.total))
    }
    fn temperature(&self) -> Result<u32, GpuError> {
        nv(self
            .0
            .temperature(nvml_wrapper::enum_wrappers::device::TemperatureSensor::Gpu))
    }
    fn power_usage_mw(&self) -> Result<u32, GpuError> {
        nv(self.0.power_usage())
    }
    fn enforced_power_limit_mw(&self) -> Result<u32, GpuError> {
        nv(self.0.enforced_power_limit())
    }
    fn clock_mhz(&self, kind: ClockKind) -> Result<u32, GpuError> {
        use nvml_wrapper::enum_wrappers::device::Clock;
        let clock = match kind {
            ClockKind::Sm => Clock::SM,
            ClockKind::Memory => Clock::Memory,
            ClockKind::Graphics => Clock::Graphics,
        };
        nv(self.0.clock_info(clock))
    }
    fn ecc_errors(&self, corrected: bool) -> Result<u64, GpuError> {
        use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError};
        let kind = if corrected {
            MemoryError::Corrected
        } else {
            MemoryError::Uncorrected
        };
        nv(self.0.total_ecc_errors(kind, EccCounter::Volatile))
    }
    fn fan_speed(&self) -> Result<u32, GpuError> {
        nv(self.0.fan_speed(0))
    }
    fn encoder_utilization(&self) -> Result<u32, GpuError> {
        nv(self.0.encoder_utilization()).map(|u| u.utilization)
    }
    fn energy_mj(&self) -> Result<u64, GpuError> {
        nv(self.0.total_energy_consumption())
    }
    fn processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        use nvml_wrapper::enums::device::UsedGpuMemory;
        use nvml_wrapper::error::NvmlError;
        let one = |p: &nvml_wrapper::struct_wrappers::device::ProcessInfo| GpuProcess {
            pid: p.pid,
            memory: match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            },
        };
        // A process starting between NVML's count and list calls makes the list call
        // fail with InsufficientSize; that is a race, not a missing feature, so retry.
        let mut tries = 0;
        let compute = loop {
            match self.0.running_compute_processes() {
                Err(NvmlError::InsufficientSize(_)) if tries < 3 => tries += 1,
                r => break nv(r)?,
            }
        };
        let mut procs: Vec<GpuProcess> = compute.iter().map(one).collect();
        if let Ok(g) = self.0.running_graphics_processes() {
            procs.extend(g.iter().map(one));
        }
        Ok(procs)
    }
}

impl GpuBackend for NvmlBackend {
    fn device_count(&self) -> u32 {
        self.count
    }
    fn device(&self, index: u32) -> Result<Box<dyn GpuDevice + '_>, GpuError> {
        Ok(Box::new(NvmlDevice(nv(self.nvml.device_by_index(index))?)))
    }
    fn driver_version(&self) -> Option<String> {
        self.nvml.sys_driver_version().ok()
    }
    fn gpm(&self, index: u32) -> Result<Option<GpmValues>, GpuError> {
        let mut slots = self.gpm_prev.borrow_mut();
        let slot = slots
            .get_mut(index as usize)
            .ok_or_else(|| GpuError(format!("no device {index}")))?;
        let dev = nv(self.nvml.device_by_index(index))?;
        if slot.is_none() && !nv(dev.gpm_support())? {
            return Err(GpuError("GPM not supported".to_string()));
        }
        let sample = nv(dev.gpm_sample())?;
        let values = match slot.as_ref() {
            Some(prev) => {
                let results = nv(nvml_wrapper::gpm::gpm_metrics_get(
                    self.nvml, prev, &sample, &GPM_IDS,
                ))?;
                let mut values: GpmValues = [None; GPM_METRICS.len()];
                for (v, r) in values.iter_mut().zip(results) {
                    *v = r.ok().map(|m| m.value);
                }
                Some(values)
            }
            None => None,
        };
        *slot = Some(sample);
        Ok(values)
    }
}

/// Per-device metric availability flags, indexed by [`Probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
enum Probe {
    Utilization,
    Memory,
    Temp,
    Power,
    PowerLimit,
    SmClock,
    MemoryClock,
    GraphicsClock,
    EccCorrected,
    EccUncorrected,
    Fan,
    Encoder,
    Energy,
    Gpm,
    Processes,
}
const PROBES: usize = Probe::Processes as usize + 1;

struct DeviceState {
    available: [bool; PROBES],
    keys: DeviceKeys,
}

/// Keys built once per device, so a tick only clones strings.
struct DeviceKeys {
    gpu: String,
    memory: String,
    memory_allocated: String,
    memory_allocated_bytes: String,
    temp: String,
    power_watts: String,
    enforced_power_limit_watts: String,
    power_percent: String,
    sm_clock: String,
    memory_clock: String,
    graphics_clock: String,
    corrected: String,
    uncorrected: String,
    fan: String,
    encoder: String,
    energy: String,
    gpm: [String; GPM_METRICS.len()],
    index: u32,
}

impl DeviceKeys {
    fn new(i: u32) -> Self {
        let k = |s: &str| format!("gpu.{i}.{s}");
        Self {
            gpu: k("gpu"),
            memory: k("memory"),
            memory_allocated: k("memoryAllocated"),
            memory_allocated_bytes: k("memoryAllocatedBytes"),
            temp: k("temp"),
            power_watts: k("powerWatts"),
            enforced_power_limit_watts: k("enforcedPowerLimitWatts"),
            power_percent: k("powerPercent"),
            sm_clock: k("smClock"),
            memory_clock: k("memoryClock"),
            graphics_clock: k("graphicsClock"),
            corrected: k("correctedMemoryErrors"),
            uncorrected: k("uncorrectedMemoryErrors"),
            fan: k("fanSpeed"),
            encoder: k("encoderUtilization"),
            energy: k("energyJoules"),
            gpm: GPM_METRICS.map(|(name, _)| k(name)),
            index: i,
        }
    }
}

/// The keys copied under `gpu.process.N.` when the monitored tree uses GPU N.
const PROCESS_KEYS: [&str; 8] = [
    "gpu",
    "memory",
    "memoryAllocated",
    "memoryAllocatedBytes",
    "temp",
    "powerWatts",
    "enforcedPowerLimitWatts",
    "powerPercent",
];

/// The NVIDIA family: every device of a [`GpuBackend`] under `gpu.N.*` keys, and the
/// monitored processes' use under `gpu.process.N.*`.
pub struct NvidiaCollector<B: GpuBackend> {
    backend: B,
    devices: Vec<DeviceState>,
    tree: Option<SharedTree>,
    pids: HashSet<u32>,
    /// GPUs whose profiling keys DCGM supplies (`--dcgm`): no GPM there, so no key twice.
    dcgm: GpuClaims,
    /// Where each sample's per-process GPU memory goes, for the process table.
    proc_memory: Option<Arc<GpuMemory>>,
}

impl<B: GpuBackend> NvidiaCollector<B> {
    /// Skip GPM on the GPUs `claims` holds (read each sample: DCGM fills it at detection).
    #[must_use]
    pub(crate) fn without_gpm_on(mut self, claims: GpuClaims) -> Self {
        self.dcgm = claims;
        self
    }

    pub(crate) fn with_tree(backend: B, tree: Option<SharedTree>) -> Self {
        let devices = (0..backend.device_count())
            .map(|i| DeviceState {
                available: [true; PROBES],
                keys: DeviceKeys::new(i),
            })
            .collect();
        Self {
            backend,
            devices,
            tree,
            pids: HashSet::new(),
            dcgm: GpuClaims::default(),
            proc_memory: None,
        }
    }

    /// Publish each sample's GPU memory per process (all GPUs summed) to `map`, while
    /// a process table wants it.
    #[must_use]
    pub(crate) fn with_proc_memory(mut self, map: Arc<GpuMemory>) -> Self {
        self.proc_memory = Some(map);
        self
    }

    /// A collector with no monitored process (no `gpu.process.*` keys).
    pub fn new(backend: B) -> Self {
        Self::with_tree(backend, None)
    }

    /// A collector whose `gpu.process.N.*` keys follow `pids` (a fixed set, for tests
    /// and callers that track processes themselves).
    pub fn with_pids(backend: B, pids: impl IntoIterator<Item = u32>) -> Self {
        let mut c = Self::with_tree(backend, None);
        c.pids = pids.into_iter().collect();
        c
    }

    /// Name, memory and driver of each device.
    pub fn gpu_info(&self) -> Vec<GpuInfo> {
        let driver = self.backend.driver_version();
        (0..self.backend.device_count())
            .filter_map(|i| {
                let d = self.backend.device(i).ok()?;
                Some(GpuInfo {
                    name: d.name().unwrap_or_default(),
                    memory_total: d.memory_info().map_or(0, |(_, t)| t),
                    driver: driver.clone().unwrap_or_default(),
                })
            })
            .collect()
    }
}

/// Call `f` if the flag is still set; clear it on the first failure.
fn probe<T>(
    flags: &mut [bool; PROBES],
    p: Probe,
    f: impl FnOnce() -> Result<T, GpuError>,
) -> Option<T> {
    if !flags[p as usize] {
        return None;
    }
    let r = f().ok();
    if r.is_none() {
        flags[p as usize] = false;
    }
    r
}

impl<B: GpuBackend> Collector for NvidiaCollector<B> {
    fn name(&self) -> &'static str {
        "nvidia"
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.gpu_info()
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        if let Some(tree) = &self.tree {
            let tree = tree.lock().map_err(|_| SamplerError::Poisoned)?;
            self.pids.clear();
            self.pids.extend(tree.pids());
        }
        let mut first_err = None;
        let publish = self.proc_memory.as_ref().filter(|m| m.wanted()).cloned();
        let mut by_pid: HashMap<u32, u64> = HashMap::new();
        let mut on_device: HashMap<u32, u64> = HashMap::new();
        for state in &mut self.devices {
            let dev = match self.backend.device(state.keys.index) {
                Ok(d) => d,
                Err(e) => {
                    first_err
                        .get_or_insert(SamplerError::Gpu(format!("gpu {}: {e}", state.keys.index)));
                    continue;
                }
            };
            let flags = &mut state.available;
            let k = &state.keys;
            let start = out.len();
            if let Some((gpu, mem)) = probe(flags, Probe::Utilization, || dev.utilization()) {
                out.push((k.gpu.clone(), f64::from(gpu)));
                out.push((k.memory.clone(), f64::from(mem)));
            }
            if let Some((used, total)) = probe(flags, Probe::Memory, || dev.memory_info()) {
                if total > 0 {
                    out.push((
                        k.memory_allocated.clone(),
                        used as f64 / total as f64 * 100.0,
                    ));
                }
                out.push((k.memory_allocated_bytes.clone(), used as f64));
            }
            if let Some(t) = probe(flags, Probe::Temp, || dev.temperature()) {
                out.push((k.temp.clone(), f64::from(t)));
            }
            let power = probe(flags, Probe::Power, || dev.power_usage_mw())
                .map(|mw| f64::from(mw) / 1000.0);
            let limit = probe(flags, Probe::PowerLimit, || dev.enforced_power_limit_mw())
                .map(|mw| f64::from(mw) / 1000.0);
            if let Some(w) = power {
                out.push((k.power_watts.clone(), w));
            }
            if let Some(l) = limit {
                out.push((k.enforced_power_limit_watts.clone(), l));
            }
            if let (Some(w), Some(l)) = (power, limit) {
                if l > 0.0 {
                    out.push((k.power_percent.clone(), w / l * 100.0));
                }
            }
            for (p, kind, key) in [
                (Probe::SmClock, ClockKind::Sm, &k.sm_clock),
                (Probe::MemoryClock, ClockKind::Memory, &k.memory_clock),
                (Probe::GraphicsClock, ClockKind::Graphics, &k.graphics_clock),
            ] {
                if let Some(mhz) = probe(flags, p, || dev.clock_mhz(kind)) {
                    out.push((key.clone(), f64::from(mhz)));
                }
            }
            if let Some(n) = probe(flags, Probe::EccCorrected, || dev.ecc_errors(true)) {
                out.push((k.corrected.clone(), n as f64));
            }
            if let Some(n) = probe(flags, Probe::EccUncorrected, || dev.ecc_errors(false)) {
                out.push((k.uncorrected.clone(), n as f64));
            }
            if let Some(f) = probe(flags, Probe::Fan, || dev.fan_speed()) {
                out.push((k.fan.clone(), f64::from(f)));
            }
            if let Some(e) = probe(flags, Probe::Encoder, || dev.encoder_utilization()) {
                out.push((k.encoder.clone(), f64::from(e)));
            }
            if let Some(mj) = probe(flags, Probe::Energy, || dev.energy_mj()) {
                out.push((k.energy.clone(), mj as f64 / 1000.0));
            }
            let gpm = if self.dcgm.contains(k.index) {
                None
            } else {
                probe(flags, Probe::Gpm, || self.backend.gpm(k.index))
            };
            if let Some(Some(values)) = gpm {
                for ((key, (_, mib)), v) in k.gpm.iter().zip(GPM_METRICS).zip(values) {
                    if let Some(v) = v.filter(|v| v.is_finite()) {
                        out.push((key.clone(), if mib { v * 1024.0 * 1024.0 } else { v }));
                    }
                }
            }
            if self.pids.is_empty() && publish.is_none() {
                continue;
            }
            let procs = probe(flags, Probe::Processes, || dev.processes()).unwrap_or_default();
            if publish.is_some() {
                // A process both compute and graphics is listed twice with the same
                // memory: counted once per device, then summed over the devices.
                on_device.clear();
                for p in &procs {
                    if let Some(b) = p.memory {
                        let m = on_device.entry(p.pid).or_default();
                        *m = (*m).max(b);
                    }
                }
                for (&pid, &b) in &on_device {
                    *by_pid.entry(pid).or_default() += b;
                }
            }
            let in_use = procs.iter().any(|p| self.pids.contains(&p.pid));
            if in_use {
                let prefix = format!("gpu.{}.", k.index);
                let end = out.len();
                for i in start..end {
                    let Some(metric) = out[i].0.strip_prefix(&prefix) else {
                        continue;
                    };
                    if PROCESS_KEYS.contains(&metric) {
                        let key = format!("gpu.process.{}.{metric}", k.index);
                        let v = out[i].1;
                        out.push((key, v));
                    }
                }
            }
        }
        if let Some(map) = publish {
            map.publish(by_pid);
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests;
