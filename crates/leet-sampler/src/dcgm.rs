//! NVIDIA profiling counters through DCGM (`--dcgm`, opt-in, Linux).
//!
//! As the reference does (spec §5): `libdcgm.so.4` is loaded at run time (`$LEET_DCGM_LIB`
//! names another file), `dcgmInit`, then `dcgmConnect("localhost:5555")` to a running
//! `nv-hostengine` (no embedded host engine, as in the reference). The wanted fields that
//! `dcgmProfGetSupportedMetricGroups` lists go into one field group, watched on every
//! GPU (`DCGM_GROUP_ALL_GPUS`) at the sampling interval, keeping 2 samples; each sample
//! reads the host engine's latest values with `dcgmGetLatestValues_v2`. [`FIELDS`] maps
//! field ids to `gpu.<gpuId>.<key>`: ratios are written in % (× 100), PCIe/NVLink rates
//! in bytes/s as DCGM gives them. A value whose status is not OK, or which is DCGM's
//! blank (`DCGM_FP64_IS_BLANK` / `DCGM_INT64_IS_BLANK`), NaN or of another type, is left
//! out.
//!
//! No key twice: the GPUs DCGM watches are put in [`GpuClaims`] at detection, and the NVML
//! collector does not take GPM snapshots of those (DCGM supersedes GPM per GPU). DCGM gpu
//! ids are taken to be NVML indices, which is how DCGM numbers GPUs by default.
//!
//! A host engine that goes away (restart, driver upgrade) is reported once, and leet
//! connects again after ten samples (2 s to 10 s) until it answers. The connection is left open until the
//! process exits and the library is never unloaded: DCGM's client threads outlive any one
//! call, and the reference found `dcgmDisconnect` at teardown crashing.
//!
//! The structs and constants below are copied from NVIDIA/DCGM `dcgmlib/dcgm_structs.h`,
//! `dcgm_fields.h` and `dcgm_agent.h` (Apache-2.0; read at commit
//! 72fa3feaa67d716a75323a8f47c34ff3ee73f824). Note `dcgmFieldValue_v1`'s union holds a
//! 4096-byte blob: the array DCGM hands to the callback has a 4120-byte stride.

use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Collector, SamplerError, SamplerOptions};

/// GPUs whose profiling keys come from DCGM; the NVML collector skips GPM on them.
#[derive(Debug, Clone, Default)]
pub struct GpuClaims(Arc<Mutex<BTreeSet<u32>>>);

impl GpuClaims {
    pub(crate) fn contains(&self, gpu: u32) -> bool {
        self.0.lock().is_ok_and(|s| s.contains(&gpu))
    }

    fn claim(&self, gpus: &[u32]) {
        if let Ok(mut s) = self.0.lock() {
            s.extend(gpus);
        }
    }
}

/// The library loaded when `$LEET_DCGM_LIB` is not set (the soname of DCGM 4).
pub(crate) const DEFAULT_LIB: &str = "libdcgm.so.4";
/// Where the reference connects: nv-hostengine's default port on this host.
const HOSTENGINE: &str = "localhost:5555";

/// (field id, key suffix, factor): DCGM_FI_PROF_* of `dcgm_fields.h`, keys of spec §5.
pub(crate) const FIELDS: [(u16, &str, f64); 12] = [
    (1002, "smActive", 100.0),             // DCGM_FI_PROF_SM_ACTIVE, ratio
    (1003, "smOccupancy", 100.0),          // DCGM_FI_PROF_SM_OCCUPANCY, ratio
    (1004, "pipeTensorActive", 100.0),     // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, ratio
    (1005, "dramActive", 100.0),           // DCGM_FI_PROF_DRAM_ACTIVE, ratio
    (1006, "pipeFp64Active", 100.0),       // DCGM_FI_PROF_PIPE_FP64_ACTIVE, ratio
    (1007, "pipeFp32Active", 100.0),       // DCGM_FI_PROF_PIPE_FP32_ACTIVE, ratio
    (1008, "pipeFp16Active", 100.0),       // DCGM_FI_PROF_PIPE_FP16_ACTIVE, ratio
    (1014, "pipeTensorHmmaActive", 100.0), // DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE, ratio
    (1009, "pcieTxBytes", 1.0),            // DCGM_FI_PROF_PCIE_TX_BYTES, bytes/s
    (1010, "pcieRxBytes", 1.0),            // DCGM_FI_PROF_PCIE_RX_BYTES, bytes/s
    (1011, "nvlinkTxBytes", 1.0),          // DCGM_FI_PROF_NVLINK_TX_BYTES, bytes/s
    (1012, "nvlinkRxBytes", 1.0),          // DCGM_FI_PROF_NVLINK_RX_BYTES, bytes/s
];

// ---- from dcgm_structs.h / dcgm_fields.h ----

type DcgmReturn = c_int;
/// `dcgmHandle_t`, `dcgmGpuGrp_t`, `dcgmFieldGrp_t` are all `uintptr_t`.
type Handle = usize;

const DCGM_ST_OK: DcgmReturn = 0;
const DCGM_ST_NO_DATA: DcgmReturn = -14;
const DCGM_ST_CONNECTION_NOT_VALID: DcgmReturn = -21;
const DCGM_MAX_NUM_DEVICES: usize = 32;
const DCGM_GROUP_ALL_GPUS: Handle = 0x7fff_ffff;
/// `DCGM_FE_GPU` of `dcgm_field_entity_group_t`.
const DCGM_FE_GPU: c_uint = 0;
const DCGM_FT_DOUBLE: u16 = b'd' as u16;
const DCGM_FT_INT64: u16 = b'i' as u16;
/// `DCGM_FP64_BLANK` / `DCGM_INT64_BLANK`: this value and above mean "no value".
const DCGM_FP64_BLANK: f64 = 140_737_488_355_328.0;
const DCGM_INT64_BLANK: i64 = 0x7fff_ffff_ffff_fff0;
const DCGM_MAX_BLOB_LENGTH: usize = 4096;
const DCGM_PROF_MAX_NUM_GROUPS_V2: usize = 10;
const DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2: usize = 64;

#[repr(C)]
#[derive(Clone, Copy)]
union FieldValueUnion {
    i64: i64,
    dbl: f64,
    blob: [u8; DCGM_MAX_BLOB_LENGTH],
}

/// `dcgmFieldValue_v1`.
#[repr(C)]
struct FieldValueV1 {
    version: c_uint,
    field_id: u16,
    field_type: u16,
    status: c_int,
    ts: i64,
    value: FieldValueUnion,
}

const _: () = assert!(std::mem::size_of::<FieldValueV1>() == 4120);

/// `dcgmProfMetricGroupInfo_v2`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ProfMetricGroupInfoV2 {
    major_id: u16,
    minor_id: u16,
    num_field_ids: c_uint,
    field_ids: [u16; DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2],
}

/// `dcgmProfGetMetricGroups_v3`.
#[repr(C)]
struct ProfGetMetricGroupsV3 {
    version: c_uint,
    unused: c_uint,
    gpu_id: c_uint,
    num_metric_groups: c_uint,
    metric_groups: [ProfMetricGroupInfoV2; DCGM_PROF_MAX_NUM_GROUPS_V2],
}

const _: () = assert!(std::mem::size_of::<ProfGetMetricGroupsV3>() == 16 + 10 * 136);

/// `MAKE_DCGM_VERSION(dcgmProfGetMetricGroups_v3, 3)`.
const PROF_GET_METRIC_GROUPS_VERSION3: c_uint =
    std::mem::size_of::<ProfGetMetricGroupsV3>() as c_uint | (3 << 24);

/// `dcgmFieldValueEntityEnumeration_f`.
type EnumCallback = unsafe extern "C" fn(
    entity_group: c_uint,
    entity_id: c_uint,
    values: *mut FieldValueV1,
    num_values: c_int,
    user_data: *mut c_void,
) -> c_int;

// ---- from dcgm_agent.h ----

type InitFn = unsafe extern "C" fn() -> DcgmReturn;
type ConnectFn = unsafe extern "C" fn(*const c_char, *mut Handle) -> DcgmReturn;
type ErrorStringFn = unsafe extern "C" fn(DcgmReturn) -> *const c_char;
type GetAllDevicesFn = unsafe extern "C" fn(Handle, *mut c_uint, *mut c_int) -> DcgmReturn;
type ProfSupportedFn = unsafe extern "C" fn(Handle, *mut ProfGetMetricGroupsV3) -> DcgmReturn;
type FieldGroupCreateFn =
    unsafe extern "C" fn(Handle, c_int, *const u16, *const c_char, *mut Handle) -> DcgmReturn;
/// `(handle, groupId, fieldGroupId, long long updateFreq µs, double maxKeepAge s,
/// int maxKeepSamples)`.
type WatchFieldsFn = unsafe extern "C" fn(Handle, Handle, Handle, i64, f64, c_int) -> DcgmReturn;
type GetLatestFn =
    unsafe extern "C" fn(Handle, Handle, Handle, EnumCallback, *mut c_void) -> DcgmReturn;

/// The entry points used, resolved once.
struct Api {
    connect: ConnectFn,
    error_string: Option<ErrorStringFn>,
    get_all_devices: GetAllDevicesFn,
    prof_supported: ProfSupportedFn,
    field_group_create: FieldGroupCreateFn,
    watch_fields: WatchFieldsFn,
    get_latest: GetLatestFn,
    /// Keeps the entry points valid; never unloaded (see the module docs).
    _lib: ManuallyDrop<libloading::Library>,
}

fn symbol<T: Copy>(lib: &libloading::Library, path: &str, name: &str) -> Result<T, String> {
    // SAFETY: T is the fn-pointer type dcgm_agent.h gives the symbol `name`.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{path} has no {name}: {e}"))
}

impl Api {
    /// Load the library, resolve the entry points, `dcgmInit`.
    fn load(path: &str) -> Result<Self, String> {
        // SAFETY: loading runs the library's initialisers; libdcgm's are benign.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            format!("cannot load {path}: {e} (install DCGM 4, or set LEET_DCGM_LIB)")
        })?;
        let init: InitFn = symbol(&lib, path, "dcgmInit")?;
        let api = Self {
            connect: symbol(&lib, path, "dcgmConnect")?,
            error_string: symbol(&lib, path, "dcgmErrorString").ok(),
            get_all_devices: symbol(&lib, path, "dcgmGetAllDevices")?,
            prof_supported: symbol(&lib, path, "dcgmProfGetSupportedMetricGroups")?,
            field_group_create: symbol(&lib, path, "dcgmFieldGroupCreate")?,
            watch_fields: symbol(&lib, path, "dcgmWatchFields")?,
            get_latest: symbol(&lib, path, "dcgmGetLatestValues_v2")?,
            _lib: ManuallyDrop::new(lib),
        };
        // SAFETY: dcgm_agent.h's signature.
        let rc = unsafe { init() };
        if rc != DCGM_ST_OK {
            return Err(api.err("dcgmInit", rc));
        }
        Ok(api)
    }

    fn err(&self, what: &str, rc: DcgmReturn) -> String {
        format!("{what}: {}", describe(self.error_string, rc))
    }

    /// Connect to the host engine at `address`, create the field group of the supported
    /// wanted fields and watch it on every GPU every `interval`.
    fn open(&self, address: &str, interval: Duration) -> Result<Session, String> {
        // The signatures are dcgm_agent.h's, and the library stays loaded (`_lib` is
        // never dropped); every pointer below is to a live local of the declared type.
        let addr = CString::new(address).map_err(|e| e.to_string())?;
        let mut handle: Handle = 0;
        // SAFETY: `addr` is NUL-terminated; dcgmConnect writes one handle to `handle`.
        let rc = unsafe { (self.connect)(addr.as_ptr(), &raw mut handle) };
        if rc != DCGM_ST_OK {
            return Err(format!(
                "{} (is nv-hostengine running?)",
                self.err(&format!("dcgmConnect {address}"), rc)
            ));
        }

        let mut ids: [c_uint; DCGM_MAX_NUM_DEVICES] = [0; DCGM_MAX_NUM_DEVICES];
        let mut count: c_int = 0;
        // SAFETY: dcgmGetAllDevices writes at most DCGM_MAX_NUM_DEVICES ids (the
        // array's length) and their count.
        let rc = unsafe { (self.get_all_devices)(handle, ids.as_mut_ptr(), &raw mut count) };
        if rc != DCGM_ST_OK {
            return Err(self.err("dcgmGetAllDevices", rc));
        }
        let count = usize::try_from(count)
            .unwrap_or(0)
            .min(DCGM_MAX_NUM_DEVICES);
        let Some(&first) = ids[..count].first() else {
            return Err("the host engine sees no GPUs".to_string());
        };

        let mut groups = ProfGetMetricGroupsV3 {
            version: PROF_GET_METRIC_GROUPS_VERSION3,
            unused: 0,
            gpu_id: first,
            num_metric_groups: 0,
            metric_groups: [ProfMetricGroupInfoV2 {
                major_id: 0,
                minor_id: 0,
                num_field_ids: 0,
                field_ids: [0; DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2],
            }; DCGM_PROF_MAX_NUM_GROUPS_V2],
        };
        // SAFETY: `groups` is the version-3 struct its `version` field names, laid out
        // as dcgm_structs.h declares it (#[repr(C)]).
        let rc = unsafe { (self.prof_supported)(handle, &raw mut groups) };
        if rc != DCGM_ST_OK {
            return Err(self.err("dcgmProfGetSupportedMetricGroups", rc));
        }
        let supported = supported_fields(&groups);
        let fields: Vec<u16> = FIELDS
            .iter()
            .map(|(id, _, _)| *id)
            .filter(|id| supported.contains(id))
            .collect();
        if fields.is_empty() {
            return Err("the GPUs support none of the DCGM_FI_PROF_* fields".to_string());
        }

        // Field group names are unique per host engine: one per leet process.
        let name =
            CString::new(format!("leet-prof-{}", std::process::id())).map_err(|e| e.to_string())?;
        let mut field_group: Handle = 0;
        let n = c_int::try_from(fields.len()).unwrap_or(0);
        // SAFETY: `fields` holds at least `n` ids (its length, or 0 where that would not
        // fit a c_int); `name` is NUL-terminated; one handle is written to `field_group`.
        let rc = unsafe {
            (self.field_group_create)(
                handle,
                n,
                fields.as_ptr(),
                name.as_ptr(),
                &raw mut field_group,
            )
        };
        if rc != DCGM_ST_OK {
            return Err(self.err("dcgmFieldGroupCreate", rc));
        }
        // DCGM samples profiling fields at most every 100 ms.
        let every_us = i64::try_from(interval.as_micros())
            .unwrap_or(i64::MAX)
            .clamp(100_000, 3_600_000_000);
        // SAFETY: plain values only; `field_group` was created on this `handle` above.
        let rc = unsafe {
            (self.watch_fields)(handle, DCGM_GROUP_ALL_GPUS, field_group, every_us, 0.0, 2)
        };
        if rc != DCGM_ST_OK {
            return Err(self.err("dcgmWatchFields", rc));
        }
        Ok(Session {
            handle,
            field_group,
            gpu_ids: ids[..count].to_vec(),
        })
    }
}

fn describe(error_string: Option<ErrorStringFn>, rc: DcgmReturn) -> String {
    let text = error_string
        .map(|f| {
            // SAFETY: dcgmErrorString takes any code and returns a static string or NULL.
            let p = unsafe { f(rc) };
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: non-NULL: a NUL-terminated string owned by the library.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        })
        .unwrap_or_default();
    let text: String = leet_text::sanitize(&text).chars().take(120).collect();
    if text.is_empty() {
        format!("DCGM error {rc}")
    } else {
        format!("{text} ({rc})")
    }
}

/// One connection to the host engine with its watched field group.
struct Session {
    handle: Handle,
    field_group: Handle,
    /// The GPUs the host engine reports (DCGM gpu ids).
    gpu_ids: Vec<u32>,
}

/// How long a lost host engine is left alone before leet connects again: ten samples,
/// between 2 s and 10 s (10 s at the default 1 s interval).
fn reconnect_after(interval: Duration) -> Duration {
    (interval * 10).clamp(Duration::from_secs(2), Duration::from_secs(10))
}

pub(crate) struct DcgmCollector {
    api: Api,
    address: String,
    interval: Duration,
    /// None after the host engine went away (restart, driver upgrade).
    session: Option<Session>,
    reconnect_at: Instant,
    claims: GpuClaims,
    /// (gpu id, field id, value in DCGM's units) of the last read, reused.
    values: Vec<(u32, u16, f64)>,
}

/// `--dcgm`: load, connect, pick the supported fields, watch them. The error is the one
/// line shown as `dcgm: not available: <why>`.
pub(crate) fn detect(opts: &SamplerOptions) -> Result<DcgmCollector, String> {
    if !opts.dcgm {
        return Err("not enabled (--dcgm)".to_string());
    }
    let path = std::env::var("LEET_DCGM_LIB").unwrap_or_else(|_| DEFAULT_LIB.to_string());
    DcgmCollector::connect(&path, HOSTENGINE, opts.interval, opts.dcgm_claims.clone())
}

impl DcgmCollector {
    fn connect(
        path: &str,
        address: &str,
        interval: Duration,
        claims: GpuClaims,
    ) -> Result<Self, String> {
        let api = Api::load(path)?;
        let session = api.open(address, interval)?;
        claims.claim(&session.gpu_ids);
        Ok(Self {
            api,
            address: address.to_string(),
            interval,
            session: Some(session),
            reconnect_at: Instant::now(),
            claims,
            values: Vec::new(),
        })
    }
}

/// Every field id of the supported metric groups (counts clamped to the arrays).
fn supported_fields(groups: &ProfGetMetricGroupsV3) -> BTreeSet<u16> {
    let n = (groups.num_metric_groups as usize).min(DCGM_PROF_MAX_NUM_GROUPS_V2);
    groups.metric_groups[..n]
        .iter()
        .flat_map(|g| {
            let m = (g.num_field_ids as usize).min(DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2);
            g.field_ids[..m].iter().copied()
        })
        .collect()
}

/// Most values kept from one read (32 GPUs × 12 fields fit many times over).
const MAX_VALUES: usize = 4096;

/// A field value in DCGM's units, or None when it is blank, failed or not a number.
fn value_of(v: &FieldValueV1) -> Option<f64> {
    if v.status != DCGM_ST_OK {
        return None;
    }
    match v.field_type {
        DCGM_FT_DOUBLE => {
            // SAFETY: the type tag says the union holds a double.
            let x = unsafe { v.value.dbl };
            (x.is_finite() && x < DCGM_FP64_BLANK).then_some(x)
        }
        DCGM_FT_INT64 => {
            // SAFETY: the type tag says the union holds an int64.
            let x = unsafe { v.value.i64 };
            (x < DCGM_INT64_BLANK).then_some(x as f64)
        }
        _ => None,
    }
}

/// `dcgmFieldValueEntityEnumeration_f`: appends (gpu, field, value) to the
/// `Vec<(u32, u16, f64)>` behind `user_data`. Never unwinds into C.
unsafe extern "C" fn collect_values(
    entity_group: c_uint,
    entity_id: c_uint,
    values: *mut FieldValueV1,
    num_values: c_int,
    user_data: *mut c_void,
) -> c_int {
    if entity_group != DCGM_FE_GPU || values.is_null() || user_data.is_null() {
        return 0;
    }
    let n = usize::try_from(num_values).unwrap_or(0).min(MAX_VALUES);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: user_data is the &mut Vec passed to dcgmGetLatestValues_v2 by
        // `sample`, alive and unaliased for the duration of that call.
        let out = unsafe { &mut *user_data.cast::<Vec<(u32, u16, f64)>>() };
        // SAFETY: DCGM passes `num_values` contiguous dcgmFieldValue_v1 structs.
        let values = unsafe { std::slice::from_raw_parts(values, n) };
        for v in values {
            if out.len() >= MAX_VALUES {
                break;
            }
            if let Some(x) = value_of(v) {
                out.push((entity_id, v.field_id, x));
            }
        }
    }));
    c_int::from(run.is_err())
}

/// Map (gpu, field, value) to `gpu.<gpu>.<key>` with the unit factor of [`FIELDS`].
pub(crate) fn dcgm_metrics(values: &[(u32, u16, f64)], out: &mut Vec<(String, f64)>) {
    for (gpu, field, v) in values {
        if let Some((_, key, factor)) = FIELDS.iter().find(|(id, _, _)| id == field) {
            out.push((format!("gpu.{gpu}.{key}"), v * factor));
        }
    }
}

impl Collector for DcgmCollector {
    fn name(&self) -> &'static str {
        "dcgm"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let session = match self.session.take() {
            Some(s) => s,
            None if Instant::now() < self.reconnect_at => return Ok(()),
            None => match self.api.open(&self.address, self.interval) {
                Ok(s) => {
                    self.claims.claim(&s.gpu_ids);
                    s
                }
                Err(e) => {
                    let after = reconnect_after(self.interval);
                    self.reconnect_at = Instant::now() + after;
                    return Err(SamplerError::Gpu(format!(
                        "reconnect: {e}; next try in {:.1} s",
                        after.as_secs_f64()
                    )));
                }
            },
        };
        self.values.clear();
        let user = std::ptr::from_mut(&mut self.values).cast::<c_void>();
        // SAFETY: dcgm_agent.h's signature; `user` points at self.values, which
        // collect_values alone touches during this call.
        let rc = unsafe {
            (self.api.get_latest)(
                session.handle,
                DCGM_GROUP_ALL_GPUS,
                session.field_group,
                collect_values,
                user,
            )
        };
        if rc == DCGM_ST_CONNECTION_NOT_VALID {
            // The handle is dead: connect again later (without it no key is emitted, so
            // nothing is written twice even though GPM stays off for these GPUs).
            let after = reconnect_after(self.interval);
            self.reconnect_at = Instant::now() + after;
            return Err(SamplerError::Gpu(format!(
                "dcgmGetLatestValues_v2: {}; reconnecting in {:.1} s",
                describe(self.api.error_string, rc),
                after.as_secs_f64()
            )));
        }
        self.session = Some(session);
        if rc != DCGM_ST_OK && rc != DCGM_ST_NO_DATA {
            return Err(SamplerError::Gpu(format!(
                "dcgmGetLatestValues_v2: {}",
                describe(self.api.error_string, rc)
            )));
        }
        dcgm_metrics(&self.values, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
