use super::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A fake GPU: metrics in `unsupported` fail; every call is counted by name.
#[derive(Default)]
struct FakeGpu {
    name: String,
    unsupported: Vec<&'static str>,
    pids: Vec<u32>,
    /// Listed after `pids` (which have no memory figure).
    listed: Vec<GpuProcess>,
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
    fn processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        let mut procs: Vec<GpuProcess> = (self.pids.iter())
            .map(|&pid| GpuProcess { pid, memory: None })
            .collect();
        procs.extend(&self.listed);
        self.call("processes", procs)
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

#[test]
fn gpu_memory_per_process_is_published_summed_over_gpus() {
    let gpu = |listed: Vec<GpuProcess>| FakeGpu {
        name: "NVIDIA H100".to_string(),
        listed,
        ..Default::default()
    };
    let p = |pid, memory| GpuProcess { pid, memory };
    let backend = FakeBackend(vec![
        // 100 is compute and graphics on GPU 0: listed twice, counted once.
        gpu(vec![
            p(100, Some(2 << 30)),
            p(100, Some(2 << 30)),
            p(200, None),
        ]),
        gpu(vec![p(100, Some(1 << 30)), p(300, Some(512 << 20))]),
    ]);
    let map = Arc::new(GpuMemory::default());
    let mut c = NvidiaCollector::new(backend).with_proc_memory(map.clone());
    let mut out = Vec::new();
    c.sample(&mut out).expect("sample");
    // Nobody asked for it yet (no process table, as in `leet sample`): no NVML calls.
    let calls = |c: &NvidiaCollector<FakeBackend>| -> usize {
        c.backend
            .0
            .iter()
            .map(|g| {
                g.calls
                    .lock()
                    .expect("lock")
                    .get("processes")
                    .copied()
                    .unwrap_or(0)
            })
            .sum()
    };
    assert_eq!(calls(&c), 0);
    let mut scanner =
        crate::procs::ProcScanner::with_root("/nonexistent", "/nonexistent", Some(map.clone()));
    assert!(scanner.scan().rows.is_empty());
    c.sample(&mut out).expect("sample");
    assert_eq!(calls(&c), 2);
    let by_pid = map.snapshot();
    assert_eq!(
        by_pid,
        HashMap::from([(100, 3 << 30), (300, 512 << 20)]),
        "200 has no memory figure: not in the map"
    );
    // No gpu.process.* keys: no monitored process.
    assert!(!out.iter().any(|(k, _)| k.starts_with("gpu.process.")));
}
