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
use std::collections::HashSet;

use super::dcgm::GpuClaims;
use super::procfs::SharedTree;
use super::{Collector, GpuInfo, SamplerError};

/// Error text from a GPU backend call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError(pub String);

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    Sm,
    Memory,
    Graphics,
}

/// One GPU. Units are NVML's: %, bytes, °C, mW, MHz.
pub trait GpuDevice {
    fn name(&self) -> Result<String, GpuError>;
    /// (gpu %, memory-controller %)
    fn utilization(&self) -> Result<(u32, u32), GpuError>;
    /// (used bytes, total bytes)
    fn memory_info(&self) -> Result<(u64, u64), GpuError>;
    fn temperature(&self) -> Result<u32, GpuError>;
    fn power_usage_mw(&self) -> Result<u32, GpuError>;
    fn enforced_power_limit_mw(&self) -> Result<u32, GpuError>;
    fn clock_mhz(&self, kind: ClockKind) -> Result<u32, GpuError>;
    /// Volatile ECC error count (corrected or uncorrected).
    fn ecc_errors(&self, corrected: bool) -> Result<u64, GpuError>;
    fn fan_speed(&self) -> Result<u32, GpuError>;
    fn encoder_utilization(&self) -> Result<u32, GpuError>;
    /// Energy used since the driver was loaded, in mJ.
    fn energy_mj(&self) -> Result<u64, GpuError>;
    /// PIDs of compute and graphics processes on this device.
    fn process_pids(&self) -> Result<Vec<u32>, GpuError>;
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

pub trait GpuBackend: Send {
    fn device_count(&self) -> u32;
    fn device(&self, index: u32) -> Result<Box<dyn GpuDevice + '_>, GpuError>;
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
    fn process_pids(&self) -> Result<Vec<u32>, GpuError> {
        use nvml_wrapper::error::NvmlError;
        // A process starting between NVML's count and list calls makes the list call
        // fail with InsufficientSize; that is a race, not a missing feature, so retry.
        let mut tries = 0;
        let compute = loop {
            match self.0.running_compute_processes() {
                Err(NvmlError::InsufficientSize(_)) if tries < 3 => tries += 1,
                r => break nv(r)?,
            }
        };
        let mut pids: Vec<u32> = compute.iter().map(|p| p.pid).collect();
        if let Ok(g) = self.0.running_graphics_processes() {
            pids.extend(g.iter().map(|p| p.pid));
        }
        Ok(pids)
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

pub struct NvidiaCollector<B: GpuBackend> {
    backend: B,
    devices: Vec<DeviceState>,
    tree: Option<SharedTree>,
    pids: HashSet<u32>,
    /// GPUs whose profiling keys DCGM supplies (`--dcgm`): no GPM there, so no key twice.
    dcgm: GpuClaims,
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
        }
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

    pub fn gpu_info(&self) -> Vec<GpuInfo> {
        let driver = self.backend.driver_version();
        (0..self.backend.device_count())
            .filter_map(|i| {
                let d = self.backend.device(i).ok()?;
                Some(GpuInfo {
                    name: d.name().unwrap_or_default(),
                    memory_total: d.memory_info().map(|(_, t)| t).unwrap_or(0),
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
            if self.pids.is_empty() {
                continue;
            }
            let in_use = probe(flags, Probe::Processes, || dev.process_pids())
                .is_some_and(|pids| pids.iter().any(|p| self.pids.contains(p)));
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
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Arc;

    /// A fake GPU: metrics in `unsupported` fail; every call is counted by name.
    #[derive(Default)]
    struct FakeGpu {
        name: String,
        unsupported: Vec<&'static str>,
        pids: Vec<u32>,
        calls: Arc<std::sync::Mutex<HashMap<&'static str, usize>>>,
        base: u32,
        /// GPM supported: each call returns these values (after the first call).
        gpm: Option<GpmValues>,
        gpm_calls: std::cell::Cell<usize>,
    }

    impl FakeGpu {
        fn call<T>(&self, what: &'static str, v: T) -> Result<T, GpuError> {
            *self.calls.lock().expect("lock").entry(what).or_default() += 1;
            if self.unsupported.contains(&what) {
                Err(GpuError("Not Supported".to_string()))
            } else {
                Ok(v)
            }
        }
    }

    impl GpuDevice for &FakeGpu {
        fn name(&self) -> Result<String, GpuError> {
            Ok(self.name.clone())
        }
        fn utilization(&self) -> Result<(u32, u32), GpuError> {
            self.call("utilization", (self.base + 50, self.base + 20))
        }
        fn memory_info(&self) -> Result<(u64, u64), GpuError> {
            self.call("memory_info", (4 << 30, 16 << 30))
        }
        fn temperature(&self) -> Result<u32, GpuError> {
            self.call("temperature", 60 + self.base)
        }
        fn power_usage_mw(&self) -> Result<u32, GpuError> {
            self.call("power", 150_000)
        }
        fn enforced_power_limit_mw(&self) -> Result<u32, GpuError> {
            self.call("power_limit", 300_000)
        }
        fn clock_mhz(&self, kind: ClockKind) -> Result<u32, GpuError> {
            match kind {
                ClockKind::Sm => self.call("sm_clock", 1410),
                ClockKind::Memory => self.call("memory_clock", 1215),
                ClockKind::Graphics => self.call("graphics_clock", 1400),
            }
        }
        fn ecc_errors(&self, corrected: bool) -> Result<u64, GpuError> {
            if corrected {
                self.call("ecc_corrected", 3)
            } else {
                self.call("ecc_uncorrected", 0)
            }
        }
        fn fan_speed(&self) -> Result<u32, GpuError> {
            self.call("fan", 40)
        }
        fn encoder_utilization(&self) -> Result<u32, GpuError> {
            self.call("encoder", 5)
        }
        fn energy_mj(&self) -> Result<u64, GpuError> {
            self.call("energy", 123_456_789)
        }
        fn process_pids(&self) -> Result<Vec<u32>, GpuError> {
            self.call("processes", self.pids.clone())
        }
    }

    struct FakeBackend(Vec<FakeGpu>);

    impl GpuBackend for FakeBackend {
        fn device_count(&self) -> u32 {
            self.0.len() as u32
        }
        fn device(&self, index: u32) -> Result<Box<dyn GpuDevice + '_>, GpuError> {
            Ok(Box::new(&self.0[index as usize]))
        }
        fn driver_version(&self) -> Option<String> {
            Some("550.90.12".to_string())
        }
        fn gpm(&self, index: u32) -> Result<Option<GpmValues>, GpuError> {
            let gpu = &self.0[index as usize];
            let values = gpu.call("gpm", gpu.gpm)?;
            let values = values.ok_or_else(|| GpuError("GPM not supported".to_string()))?;
            let n = gpu.gpm_calls.get();
            gpu.gpm_calls.set(n + 1);
            Ok((n > 0).then_some(values))
        }
    }

    fn get(out: &[(String, f64)], key: &str) -> Option<f64> {
        out.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    #[test]
    fn supported_metrics_use_wandb_keys() {
        let backend = FakeBackend(vec![FakeGpu {
            name: "NVIDIA H200".to_string(),
            ..Default::default()
        }]);
        let mut c = NvidiaCollector::new(backend);
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        let expect = [
            ("gpu.0.gpu", 50.0),
            ("gpu.0.memory", 20.0),
            ("gpu.0.memoryAllocated", 25.0),
            ("gpu.0.memoryAllocatedBytes", (4u64 << 30) as f64),
            ("gpu.0.temp", 60.0),
            ("gpu.0.powerWatts", 150.0),
            ("gpu.0.enforcedPowerLimitWatts", 300.0),
            ("gpu.0.powerPercent", 50.0),
            ("gpu.0.smClock", 1410.0),
            ("gpu.0.memoryClock", 1215.0),
            ("gpu.0.graphicsClock", 1400.0),
            ("gpu.0.correctedMemoryErrors", 3.0),
            ("gpu.0.uncorrectedMemoryErrors", 0.0),
            ("gpu.0.fanSpeed", 40.0),
            ("gpu.0.encoderUtilization", 5.0),
            ("gpu.0.energyJoules", 123_456.789),
        ];
        for (k, v) in expect {
            assert_eq!(get(&out, k), Some(v), "{k}");
        }
        assert_eq!(out.len(), expect.len());
        assert!(!out.iter().any(|(k, _)| k.starts_with("gpu.process.")));
        let info = c.gpu_info();
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].name, "NVIDIA H200");
        assert_eq!(info[0].memory_total, 16 << 30);
        assert_eq!(info[0].driver, "550.90.12");
    }

    #[test]
    fn unsupported_metric_is_probed_once() {
        let calls = Arc::new(std::sync::Mutex::new(HashMap::new()));
        let backend = FakeBackend(vec![FakeGpu {
            unsupported: vec!["fan", "ecc_corrected", "ecc_uncorrected", "power_limit"],
            calls: calls.clone(),
            ..Default::default()
        }]);
        let mut c = NvidiaCollector::new(backend);
        for _ in 0..5 {
            let mut out = Vec::new();
            c.sample(&mut out).expect("sample");
            assert_eq!(get(&out, "gpu.0.fanSpeed"), None);
            assert_eq!(get(&out, "gpu.0.correctedMemoryErrors"), None);
            assert_eq!(get(&out, "gpu.0.enforcedPowerLimitWatts"), None);
            // no limit → no percent, but the power itself is still reported
            assert_eq!(get(&out, "gpu.0.powerPercent"), None);
            assert_eq!(get(&out, "gpu.0.powerWatts"), Some(150.0));
        }
        let calls = calls.lock().expect("lock");
        assert_eq!(calls["fan"], 1);
        assert_eq!(calls["ecc_corrected"], 1);
        assert_eq!(calls["ecc_uncorrected"], 1);
        assert_eq!(calls["power_limit"], 1);
        assert_eq!(calls["utilization"], 5);
        assert_eq!(calls["temperature"], 5);
        // no monitored process: the process list is never asked for
        assert!(!calls.contains_key("processes"));
    }

    #[test]
    fn process_on_gpu_one_gets_process_keys() {
        let calls = Arc::new(std::sync::Mutex::new(HashMap::new()));
        let backend = FakeBackend(vec![
            FakeGpu {
                pids: vec![999],
                ..Default::default()
            },
            FakeGpu {
                pids: vec![4242, 77],
                base: 10,
                calls: calls.clone(),
                ..Default::default()
            },
        ]);
        let mut c = NvidiaCollector::with_pids(backend, [4242, 4243]);
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        assert_eq!(get(&out, "gpu.0.gpu"), Some(50.0));
        assert_eq!(get(&out, "gpu.1.gpu"), Some(60.0));
        assert_eq!(get(&out, "gpu.1.temp"), Some(70.0));
        let process: Vec<&str> = out
            .iter()
            .filter(|(k, _)| k.starts_with("gpu.process."))
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            process,
            [
                "gpu.process.1.gpu",
                "gpu.process.1.memory",
                "gpu.process.1.memoryAllocated",
                "gpu.process.1.memoryAllocatedBytes",
                "gpu.process.1.temp",
                "gpu.process.1.powerWatts",
                "gpu.process.1.enforcedPowerLimitWatts",
                "gpu.process.1.powerPercent",
            ]
        );
        assert_eq!(get(&out, "gpu.process.1.gpu"), Some(60.0));
        assert_eq!(get(&out, "gpu.process.1.memory"), Some(30.0));
        assert_eq!(get(&out, "gpu.process.1.temp"), Some(70.0));
        assert_eq!(calls.lock().expect("lock")["processes"], 1);
    }

    #[test]
    fn process_list_failure_is_not_retried() {
        let calls = Arc::new(std::sync::Mutex::new(HashMap::new()));
        let backend = FakeBackend(vec![FakeGpu {
            unsupported: vec!["processes"],
            calls: calls.clone(),
            ..Default::default()
        }]);
        let mut c = NvidiaCollector::with_pids(backend, [1]);
        for _ in 0..3 {
            let mut out = Vec::new();
            c.sample(&mut out).expect("sample");
            assert!(!out.iter().any(|(k, _)| k.starts_with("gpu.process.")));
        }
        assert_eq!(calls.lock().expect("lock")["processes"], 1);
    }

    #[test]
    fn gpm_keys_come_from_the_second_sample_on() {
        let mut values: GpmValues = [None; GPM_METRICS.len()];
        values[0] = Some(42.5); // smActive
        values[2] = Some(12.0); // pipeTensorActive
        values[8] = Some(2.0); // pcieTxBytes, MiB/s
        values[11] = Some(f64::NAN); // nvlinkRxBytes: not finite, dropped
        let calls = Arc::new(std::sync::Mutex::new(HashMap::new()));
        let backend = FakeBackend(vec![
            FakeGpu {
                gpm: Some(values),
                calls: calls.clone(),
                ..Default::default()
            },
            FakeGpu::default(),
        ]);
        let mut c = NvidiaCollector::new(backend);
        let mut first = Vec::new();
        c.sample(&mut first).expect("sample");
        assert!(!first.iter().any(|(k, _)| k.contains("smActive")));
        for _ in 0..3 {
            let mut out = Vec::new();
            c.sample(&mut out).expect("sample");
            assert_eq!(get(&out, "gpu.0.smActive"), Some(42.5));
            assert_eq!(get(&out, "gpu.0.pipeTensorActive"), Some(12.0));
            assert_eq!(get(&out, "gpu.0.pcieTxBytes"), Some(2.0 * 1024.0 * 1024.0));
            assert_eq!(get(&out, "gpu.0.smOccupancy"), None);
            assert_eq!(get(&out, "gpu.0.nvlinkRxBytes"), None);
            // GPU 1 has no GPM: no keys, and it is asked once only
            assert!(!out.iter().any(|(k, _)| k == "gpu.1.smActive"));
            assert_eq!(get(&out, "gpu.1.gpu"), Some(50.0));
        }
        assert_eq!(calls.lock().expect("lock")["gpm"], 4);
        assert_eq!(c.backend.0[1].calls.lock().expect("lock")["gpm"], 1);
    }
}
