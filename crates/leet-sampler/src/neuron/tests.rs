use super::*;

/// The recorded inf1.xlarge report (tests/fixtures/neuron/README.md).
const RECORDED: &str = include_str!("../../../../tests/fixtures/neuron/neuron-monitor-1.jsonl");

fn all(_: Option<u32>) -> bool {
    true
}

fn get(m: &Mapped, key: &str) -> Option<f64> {
    m.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

#[test]
fn recorded_report_maps_to_every_spec_key() {
    let r = parse_report(RECORDED.trim()).expect("recorded line parses");
    let m = map_report(&r, &all, "2.x");
    // 4 cores × (utilization + 5 memory fields) + 2 totals + 4 host fields
    assert_eq!(m.values.len(), 4 * 6 + 2 + 4, "{:?}", m.values);
    assert_eq!(
        get(&m, "trn.0.neuroncore_utilization"),
        Some(89.018_276_389_965_58)
    );
    for c in 1..4 {
        assert_eq!(
            get(&m, &format!("trn.{c}.neuroncore_utilization")),
            Some(0.0)
        );
    }
    assert_eq!(
        get(&m, "trn.host_total_memory_usage"),
        Some(1_119_887_360.0)
    );
    assert_eq!(
        get(&m, "trn.neuron_device_total_memory_usage"),
        Some(63_118_912.0)
    );
    assert_eq!(
        get(&m, "trn.host_memory_usage.application_memory"),
        Some(1_117_293_568.0)
    );
    assert_eq!(get(&m, "trn.host_memory_usage.constants"), Some(0.0));
    assert_eq!(get(&m, "trn.host_memory_usage.dma_buffers"), Some(16_512.0));
    assert_eq!(get(&m, "trn.host_memory_usage.tensors"), Some(2_577_280.0));
    assert_eq!(
        get(&m, "trn.0.neuroncore_memory_usage.constants"),
        Some(61_766_864.0)
    );
    assert_eq!(
        get(&m, "trn.0.neuroncore_memory_usage.model_code"),
        Some(1_308_832.0)
    );
    assert_eq!(
        get(&m, "trn.0.neuroncore_memory_usage.model_shared_scratchpad"),
        Some(0.0)
    );
    assert_eq!(
        get(&m, "trn.0.neuroncore_memory_usage.runtime_memory"),
        Some(43_216.0)
    );
    assert_eq!(get(&m, "trn.3.neuroncore_memory_usage.tensors"), Some(0.0));
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    // neuron_hardware_info: 1 device × 4 NeuronCores; instance type inf1 → Inferentia
    assert_eq!(
        m.devices,
        vec![GpuInfo {
            name: "AWS Inferentia (4 NeuronCores)".into(),
            memory_total: 0,
            driver: "2.x".into(),
        }]
    );
}

/// The recorded runtime twice: as pid `a` and as pid `b` with cores 4..7.
fn two_runtimes(a: u32, b: u32) -> String {
    let mut v: serde_json::Value = serde_json::from_str(RECORDED).expect("json");
    let rt = v["neuron_runtime_data"][0].clone();
    let text = serde_json::to_string(&rt).expect("json");
    let mut second = text.clone();
    for c in 0..4 {
        second = second.replace(&format!("\"{c}\":{{"), &format!("\"{}\":{{", c + 4));
    }
    let mut second: serde_json::Value = serde_json::from_str(&second).expect("json");
    second["pid"] = b.into();
    v["neuron_runtime_data"][0]["pid"] = a.into();
    v["neuron_runtime_data"]
        .as_array_mut()
        .expect("array")
        .push(second);
    v.to_string()
}

#[test]
fn runtimes_are_selected_by_pid_and_summed() {
    let r = parse_report(&two_runtimes(100, 200)).expect("parses");
    let both = map_report(&r, &all, "");
    assert_eq!(
        get(&both, "trn.host_total_memory_usage"),
        Some(2.0 * 1_119_887_360.0)
    );
    assert_eq!(
        get(&both, "trn.4.neuroncore_utilization"),
        Some(89.018_276_389_965_58)
    );
    assert_eq!(both.values.len(), 8 * 6 + 2 + 4);
    let only_a = map_report(&r, &|p| p == Some(100), "");
    assert_eq!(
        get(&only_a, "trn.host_total_memory_usage"),
        Some(1_119_887_360.0)
    );
    assert_eq!(get(&only_a, "trn.4.neuroncore_utilization"), None);
    assert_eq!(
        get(&only_a, "trn.0.neuroncore_utilization"),
        Some(89.018_276_389_965_58)
    );
    let none = map_report(&r, &|_| false, "");
    assert!(none.values.is_empty());
    // the hardware description does not depend on the runtimes
    assert_eq!(none.devices.len(), 1);
}

#[test]
fn odd_values_are_absent_not_fatal() {
    let line = r#"{"neuron_runtime_data":[{"pid":"x","error":"nrt: \u001b[31mbroken\u0007","report":{
            "neuroncore_counters":{"neuroncores_in_use":{"0":{"neuroncore_utilization":"n/a"},
              "1":{"neuroncore_utilization":12.5,"flops":3,"v3d":{"nc_v3.0":{"neuroncore_utilization":1}}},
              "core":{"neuroncore_utilization":7}},"error":""},
            "memory_used":{"neuron_runtime_used_bytes":{"host":null,"neuron_device":[1],
              "usage_breakdown":{"host":{"tensors":{"a":1},"constants":5},
              "neuroncore_memory_usage":{"1":{"tensors":9,"model_code":true}}}}}}}],
            "neuron_hardware_info":"gone"}"#;
    // a wrong type for a whole section is an unparsable report ...
    assert!(parse_report(line).is_err());
    // ... but wrong leaf values only drop those values
    let line = line.replace(r#""neuron_hardware_info":"gone""#, r#""x":1"#);
    let r = parse_report(&line).expect("lenient leaves");
    let m = map_report(&r, &all, "");
    assert_eq!(
        m.values,
        vec![
            ("trn.1.neuroncore_utilization".to_string(), 12.5),
            ("trn.host_memory_usage.constants".to_string(), 5.0),
            ("trn.1.neuroncore_memory_usage.tensors".to_string(), 9.0),
        ]
    );
    // the runtime's error is reported, sanitized (no escape sequence, no BEL)
    assert_eq!(m.errors, vec!["runtime ?: nrt: broken".to_string()]);
    assert!(m.devices.is_empty());
    let line = r#"{"neuron_runtime_data":[{"report":{"neuroncore_counters":{"neuroncores_in_use":
            {"1023":{"neuroncore_utilization":1},"1024":{"neuroncore_utilization":2},
             "-1":{"neuroncore_utilization":3}}}}}]}"#;
    let m = map_report(&parse_report(line).expect("parses"), &all, "");
    assert_eq!(
        m.values,
        vec![("trn.1023.neuroncore_utilization".to_string(), 1.0)]
    );
    for bad in ["", "not json", "{\"neuron_runtime_data\":5}", "[1,2]"] {
        assert!(parse_report(bad).is_err(), "{bad}");
    }
}

#[test]
fn newer_hardware_info_names_the_chip_and_memory() {
    let line = r#"{"neuron_runtime_data":[],"instance_info":{"instance_type":"trn2.48xlarge"},
            "neuron_hardware_info":{"neuron_device_type":"trainium2","neuron_device_count":16,
            "neuron_device_memory_size":103079215104,"neuroncore_per_device_count":4}}"#;
    let m = map_report(&parse_report(line).expect("parses"), &all, "");
    assert_eq!(m.devices.len(), 16);
    assert_eq!(m.devices[0].name, "AWS Trainium2 (4 NeuronCores)");
    assert_eq!(m.devices[0].memory_total, 103_079_215_104);
    assert_eq!(chip_name("", "trn1n.32xlarge"), "AWS Trainium");
    assert_eq!(chip_name("", "inf2.xlarge"), "AWS Inferentia2");
    assert_eq!(chip_name("", "m5.large"), "AWS Neuron device");
}

#[test]
fn sysfs_devices_are_the_drivers_neuron_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let class = dir.path().join("class/neuron_device");
    for (name, cores) in [
        ("neuron1", Some("2\n")),
        ("neuron0", Some("2\n")),
        ("neuron10", None),
    ] {
        std::fs::create_dir_all(class.join(name)).expect("mkdir");
        if let Some(c) = cores {
            std::fs::write(class.join(name).join("core_count"), c).expect("write");
        }
    }
    // class attribute files of the driver are not devices
    std::fs::write(class.join("node_id_2"), "0").expect("write");
    std::fs::create_dir_all(dir.path().join("module/neuron")).expect("mkdir");
    std::fs::write(dir.path().join("module/neuron/version"), "2.19.64.0\n").expect("write");
    let driver = driver_version(dir.path());
    assert_eq!(driver, "2.19.64.0");
    let d = sysfs_devices(dir.path(), &driver);
    let names: Vec<&str> = d.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "AWS Neuron device (2 NeuronCores)",
            "AWS Neuron device (2 NeuronCores)",
            "AWS Neuron device"
        ]
    );
    assert!(sysfs_devices(&dir.path().join("nothing"), "").is_empty());
}

#[test]
fn config_period_is_the_interval() {
    assert_eq!(period_text(Duration::from_secs(1)), "1s");
    assert_eq!(period_text(Duration::from_secs(15)), "15s");
    assert_eq!(period_text(Duration::from_millis(300)), "300ms");
    assert_eq!(period_text(Duration::from_millis(1500)), "1500ms");
    assert_eq!(period_text(Duration::from_micros(10)), "1ms");
    let v: serde_json::Value =
        serde_json::from_str(&config_json(Duration::from_secs(2))).expect("json");
    assert_eq!(v["period"], "2s");
    let types: Vec<&str> = v["neuron_runtimes"][0]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(types, ["neuroncore_counters", "memory_used"]);
    assert_eq!(v["neuron_runtimes"][0]["tag_filter"], ".*");
}

#[test]
fn config_file_is_private_and_removed() {
    use std::os::unix::fs::PermissionsExt;
    let mut f = ConfigFile::new(Duration::from_millis(250)).expect("config");
    let path = f.path.clone();
    let meta = std::fs::metadata(&path).expect("written");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&path)
        .expect("read")
        .contains("\"250ms\""));
    f.remove();
    assert!(!path.exists());
    f.write().expect("rewrite");
    let again = f.path.clone();
    assert!(again.exists());
    assert_ne!(again, path, "a fresh name for each write");
    drop(f);
    assert!(!again.exists());
}

#[test]
fn previews_are_sanitized_and_short() {
    let s = format!("\u{1b}[31m{}\u{7}", "y".repeat(200));
    let c = clip(&s, PREVIEW_CHARS);
    assert_eq!(c, format!("{}…", "y".repeat(80)));
    assert_eq!(clip("short", 80), "short");
}

#[test]
fn backoff_doubles_to_a_minute_and_resets_after_a_healthy_run() {
    let mut b = Backoff::new(HEALTHY_RUN);
    let quick = Duration::from_millis(300);
    let delays: Vec<u64> = (0..9).map(|_| b.after(quick).as_secs()).collect();
    assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
    assert_eq!(b.after(Duration::from_secs(59)).as_secs(), 60);
    assert_eq!(b.after(HEALTHY_RUN).as_secs(), 1);
    assert_eq!(b.after(quick).as_secs(), 2);
}

#[test]
fn merged_lines_stay_bounded() {
    let mut into = Taken::default();
    for i in 0..10 {
        merge(
            &mut into,
            Taken {
                lines: vec![format!("a{i}"), format!("b{i}")],
                dropped: 1,
                oversized: 1,
                closed: false,
            },
        );
    }
    assert_eq!(into.lines, ["a8", "b8", "a9", "b9"]);
    assert_eq!(into.dropped, 10 + 16);
    assert_eq!(into.oversized, 10);
}

/// A fake `neuron-monitor` that writes its pid to `pidfile` and replays the report.
fn fake(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("neuron-monitor");
    std::fs::write(
        &p,
        format!("#!/bin/sh\necho $$ > '{}/pid'\n{body}\n", dir.display()),
    )
    .expect("write fake");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

fn wait_for_pid(dir: &Path) -> u32 {
    let t = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(dir.join("pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "fake never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: u32) -> bool {
    // a zombie would still have /proc/<pid>; a reaped child has none
    Path::new(&format!("/proc/{pid}")).exists()
}

fn opts(interval: Duration) -> SamplerOptions {
    SamplerOptions {
        interval,
        ..SamplerOptions::default()
    }
}

#[test]
fn collector_reads_the_stream_and_its_drop_kills_the_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = RECORDED.trim().replace('\'', "");
    let prog = fake(
        dir.path(),
        &format!("while :; do echo '{line}'; sleep 0.1; done"),
    );
    let mut c = NeuronCollector::start(
        prog,
        &opts(Duration::from_millis(100)),
        String::new(),
        vec![],
    )
    .expect("start");
    let pid = wait_for_pid(dir.path());
    let t = Instant::now();
    let mut out = Vec::new();
    while out.is_empty() {
        assert!(t.elapsed() < Duration::from_secs(10), "no values");
        std::thread::sleep(Duration::from_millis(100));
        let _ = c.sample(&mut out);
    }
    assert_eq!(out.len(), 30);
    assert_eq!(c.gpus().len(), 1, "devices from neuron_hardware_info");
    assert!(alive(pid));
    drop(c);
    assert!(!alive(pid), "child {pid} outlived the collector");
}

#[test]
fn a_panicking_owner_leaves_no_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = fake(dir.path(), "exec sleep 60");
    let path = dir.path().to_path_buf();
    let h = std::thread::spawn(move || {
        let _c = NeuronCollector::start(prog, &opts(Duration::from_secs(1)), String::new(), vec![])
            .expect("start");
        let pid = wait_for_pid(&path);
        assert!(alive(pid));
        panic!("owner of the collector panics");
    });
    assert!(h.join().is_err());
    let pid = wait_for_pid(dir.path());
    assert!(!alive(pid), "child {pid} survived the panic");
}
