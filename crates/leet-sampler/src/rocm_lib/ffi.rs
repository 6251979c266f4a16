//! The ROCm SMI entry points the collector calls, each behind a safe method: the only
//! `unsafe` code of the ROCm SMI collector. A method answers `None` when the library
//! lacks the entry point, else the call's status; values come back through `&mut`
//! arguments, which the C side writes as out-pointers.
//!
//! Signatures are copied from ROCm/rocm_smi_lib `include/rocm_smi/rocm_smi.h` (MIT; read
//! at commit a1295714f2f6eefa5c55bf5779d17d163ed0e3d0).

use std::ffi::{c_char, CStr};
use std::mem::ManuallyDrop;

use super::{Status, RSMI_STATUS_SUCCESS};

type InitFn = unsafe extern "C" fn(u64) -> Status;
type NumDevicesFn = unsafe extern "C" fn(*mut u32) -> Status;
type PercentFn = unsafe extern "C" fn(u32, *mut u32) -> Status;
type MemoryFn = unsafe extern "C" fn(u32, u32, *mut u64) -> Status;
type TempFn = unsafe extern "C" fn(u32, u32, u32, *mut i64) -> Status;
/// `rsmi_dev_power_get(dv_ind, *power, *type)`
type PowerFn = unsafe extern "C" fn(u32, *mut u64, *mut u32) -> Status;
/// `rsmi_dev_power_ave_get` / `rsmi_dev_power_cap_get(dv_ind, sensor_ind, *value)`
type SensorFn = unsafe extern "C" fn(u32, u32, *mut u64) -> Status;
type EnergyFn = unsafe extern "C" fn(u32, *mut u64, *mut f32, *mut u64) -> Status;
type NameFn = unsafe extern "C" fn(u32, *mut c_char, usize) -> Status;
type VersionFn = unsafe extern "C" fn(u32, *mut c_char, u32) -> Status;
type StatusStringFn = unsafe extern "C" fn(Status, *mut *const c_char) -> Status;

/// A library file loaded, its entry points not looked up yet.
pub(super) struct Loaded {
    path: String,
    lib: libloading::Library,
}

/// Load the library file `path` (a name the dynamic loader searches for, or a path).
///
/// # Errors
/// The loader's reason, naming `path`.
pub(super) fn open(path: &str) -> Result<Loaded, String> {
    // SAFETY: loading runs the library's initialisers; librocm_smi64's are benign.
    match unsafe { libloading::Library::new(path) } {
        Ok(lib) => Ok(Loaded {
            path: path.to_owned(),
            lib,
        }),
        Err(e) => Err(format!("cannot load {path}: {e}")),
    }
}

fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: T is the fn-pointer type rocm_smi.h gives the symbol `name`.
    unsafe { lib.get::<T>(name.as_bytes()) }.ok().map(|s| *s)
}

impl Loaded {
    /// The file it was loaded from.
    pub(super) fn path(&self) -> &str {
        &self.path
    }

    /// Look up the entry points: `rsmi_init` and `rsmi_num_monitor_devices` must be
    /// there, the others may be missing (older libraries).
    ///
    /// # Errors
    /// A required entry point that is missing, naming the file.
    pub(super) fn api(self) -> Result<Api, String> {
        let Loaded { path, lib } = self;
        let init: InitFn = symbol(&lib, "rsmi_init").ok_or(format!("{path} has no rsmi_init"))?;
        let num_devices: NumDevicesFn = symbol(&lib, "rsmi_num_monitor_devices")
            .ok_or(format!("{path} has no rsmi_num_monitor_devices"))?;
        Ok(Api {
            init,
            num_devices,
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
        })
    }
}

/// The entry points of a loaded library.
pub(super) struct Api {
    init: InitFn,
    num_devices: NumDevicesFn,
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

// Every call below is through a pointer of rocm_smi.h's signature for its symbol, into a
// library that stays loaded (`_lib` is never dropped); out-pointers come from `&mut`
// arguments or locals, so they are live and of the type the C side writes.
impl Api {
    /// `rsmi_init(0)`.
    pub(super) fn init(&self) -> Status {
        // SAFETY: no pointers; flags 0 is the default initialisation.
        unsafe { (self.init)(0) }
    }

    /// `rsmi_num_monitor_devices`: its status and the count.
    pub(super) fn num_devices(&self, count: &mut u32) -> Status {
        // SAFETY: `count` is a live u32 the call writes.
        unsafe { (self.num_devices)(count) }
    }

    /// `rsmi_dev_busy_percent_get`, %.
    pub(super) fn busy(&self, dev: u32, percent: &mut u32) -> Option<Status> {
        // SAFETY: `percent` is a live u32 the call writes.
        self.busy.map(|f| unsafe { f(dev, percent) })
    }

    /// `rsmi_dev_memory_busy_percent_get`, %.
    pub(super) fn memory_busy(&self, dev: u32, percent: &mut u32) -> Option<Status> {
        // SAFETY: `percent` is a live u32 the call writes.
        self.memory_busy.map(|f| unsafe { f(dev, percent) })
    }

    /// `rsmi_dev_mem_overdrive_level_get`, %.
    pub(super) fn mem_overdrive(&self, dev: u32, percent: &mut u32) -> Option<Status> {
        // SAFETY: `percent` is a live u32 the call writes.
        self.mem_overdrive.map(|f| unsafe { f(dev, percent) })
    }

    /// `rsmi_dev_memory_total_get` of memory type `kind`, bytes.
    pub(super) fn memory_total(&self, dev: u32, kind: u32, total: &mut u64) -> Option<Status> {
        // SAFETY: `total` is a live u64 the call writes.
        self.memory_total.map(|f| unsafe { f(dev, kind, total) })
    }

    /// `rsmi_dev_memory_usage_get`, then `rsmi_dev_memory_total_get` when it succeeded,
    /// of memory type `kind`, bytes; `None` unless the library has both.
    pub(super) fn memory_used_and_total(
        &self,
        dev: u32,
        kind: u32,
        used: &mut u64,
        total: &mut u64,
    ) -> Option<Status> {
        let u = self.memory_usage?;
        let t = self.memory_total?;
        // SAFETY: `used` is a live u64 the call writes.
        let rc = unsafe { u(dev, kind, used) };
        if rc != RSMI_STATUS_SUCCESS {
            return Some(rc);
        }
        // SAFETY: `total` is a live u64 the call writes.
        Some(unsafe { t(dev, kind, total) })
    }

    /// `rsmi_dev_temp_metric_get` of `sensor` and `metric`, m°C.
    pub(super) fn temp(
        &self,
        dev: u32,
        sensor: u32,
        metric: u32,
        milli_c: &mut i64,
    ) -> Option<Status> {
        // SAFETY: `milli_c` is a live i64 the call writes.
        self.temp
            .map(|f| unsafe { f(dev, sensor, metric, milli_c) })
    }

    /// `rsmi_dev_power_get` (current socket or average power), or on libraries
    /// without it `rsmi_dev_power_ave_get` of sensor 0, µW.
    pub(super) fn power(&self, dev: u32, micro_w: &mut u64) -> Option<Status> {
        if let Some(f) = self.power {
            let mut kind = 0u32;
            // SAFETY: `micro_w` and `kind` are a live u64 and u32 the call writes.
            Some(unsafe { f(dev, micro_w, &raw mut kind) })
        } else {
            // SAFETY: `micro_w` is a live u64 the call writes.
            self.power_ave.map(|f| unsafe { f(dev, 0, micro_w) })
        }
    }

    /// `rsmi_dev_power_cap_get` of `sensor`, µW.
    pub(super) fn power_cap(&self, dev: u32, sensor: u32, micro_w: &mut u64) -> Option<Status> {
        // SAFETY: `micro_w` is a live u64 the call writes.
        self.power_cap.map(|f| unsafe { f(dev, sensor, micro_w) })
    }

    /// `rsmi_dev_energy_count_get`: the counter, its resolution (µJ) and a timestamp.
    pub(super) fn energy(
        &self,
        dev: u32,
        counter: &mut u64,
        resolution: &mut f32,
        timestamp: &mut u64,
    ) -> Option<Status> {
        // SAFETY: the three are a live u64, f32 and u64 the call writes.
        self.energy
            .map(|f| unsafe { f(dev, counter, resolution, timestamp) })
    }

    /// `rsmi_dev_name_get` into `buf` (NUL-terminated when it fits).
    pub(super) fn name(&self, dev: u32, buf: &mut [c_char]) -> Option<Status> {
        // SAFETY: the call writes at most `buf.len()` bytes into `buf`.
        self.name
            .map(|f| unsafe { f(dev, buf.as_mut_ptr(), buf.len()) })
    }

    /// `rsmi_version_str_get` of software `component` into `buf`.
    pub(super) fn version(&self, component: u32, buf: &mut [c_char]) -> Option<Status> {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // SAFETY: the call writes at most `len` bytes, no more than `buf.len()`, into `buf`.
        self.version
            .map(|f| unsafe { f(component, buf.as_mut_ptr(), len) })
    }

    /// `rsmi_status_string`: the library's text for status `rc`, if it has one.
    pub(super) fn status_string(&self, rc: Status) -> Option<String> {
        self.status_string.and_then(|f| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: rsmi_status_string stores a static string's address in p.
            let ok = unsafe { f(rc, &raw mut p) } == RSMI_STATUS_SUCCESS && !p.is_null();
            // SAFETY: non-NULL: a NUL-terminated string owned by the library.
            ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
    }
}
