use super::*;

fn get(v: &[(String, f64)], k: &str) -> Option<f64> {
    v.iter().find(|(key, _)| key == k).map(|(_, x)| *x)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// macmon ≤ 0.7 tuple form: (MHz, ratio). Recorded line, see tests/fixtures/macmon.
const V07: &str = r#"{"all_power":14.05,"ane_power":0.0,"cpu_power":14.02,"cpu_usage_pct":0.9946,"ecpu_usage":[2892,0.9970],"gpu_power":0.0306,"gpu_ram_power":0.0,"gpu_usage":[354,0.00957],"memory":{"ram_total":17179869184,"ram_usage":14238449664,"swap_total":19327352832,"swap_usage":18128306176},"pcpu_usage":[4424,0.9911],"ram_power":1.269,"sys_power":35.68,"temp":{"cpu_temp_avg":82.86,"gpu_temp_avg":73.50},"timestamp":"2026-09-18T02:31:35.319772+00:00"}"#;

#[test]
fn maps_the_tuple_form_with_wandb_units() {
    let m = macmon_metrics(V07).expect("parse");
    let want = [
        ("cpu.ecpu_freq", 2892.0),
        ("cpu.ecpu_percent", 99.70),
        ("cpu.pcpu_freq", 4424.0),
        ("cpu.pcpu_percent", 99.11),
        ("gpu.0.freq", 354.0),
        ("gpu.0.gpu", 0.957),
        ("cpu.avg_temp", 82.86),
        ("gpu.0.temp", 73.50),
        ("cpu.powerWatts", 14.02),
        ("gpu.0.powerWatts", 0.0306),
        ("gpu.0.powerPercent", 0.0306 / 16.5 * 100.0),
        ("ane.power", 0.0),
        ("system.powerWatts", 35.68),
        ("memory.used", 14_238_449_664.0),
        (
            "memory.used_percent",
            14_238_449_664.0 / 17_179_869_184.0 * 100.0,
        ),
        (
            "gpu.0.memoryAllocated",
            14_238_449_664.0 / 17_179_869_184.0 * 100.0,
        ),
        ("swap.used", 18_128_306_176.0),
        (
            "swap.used_percent",
            18_128_306_176.0 / 19_327_352_832.0 * 100.0,
        ),
    ];
    for (k, v) in want {
        let got = get(&m, k).unwrap_or_else(|| panic!("{k} missing"));
        assert!(close(got, v), "{k}: {got} != {v}");
    }
    assert_eq!(m.len(), want.len(), "{m:?}");
}

#[test]
fn flat_fields_win_and_zero_ints_are_left_out() {
    let line = r#"{"ecpu_freq_mhz":0,"ecpu_scaled_ratio":0.5,"ecpu_usage":[900,0.1],"pcpu_freq_mhz":3000,"pcpu_scaled_ratio":0.25,"gpu_freq_mhz":1000,"gpu_scaled_ratio":0.125,"cpu_power":1.0,"gpu_power":2.0,"ane_power":0.5,"sys_power":0.0,"temp":{"cpu_temp_avg":0.0,"gpu_temp_avg":null},"memory":{"ram_total":100,"ram_usage":25,"swap_total":0,"swap_usage":0}}"#;
    let m = macmon_metrics(line).expect("parse");
    assert_eq!(get(&m, "cpu.ecpu_freq"), None, "0 MHz is left out");
    assert_eq!(get(&m, "cpu.ecpu_percent"), Some(50.0));
    assert_eq!(get(&m, "cpu.pcpu_percent"), Some(25.0));
    assert_eq!(get(&m, "gpu.0.gpu"), Some(12.5));
    assert_eq!(get(&m, "cpu.avg_temp"), None);
    assert_eq!(get(&m, "gpu.0.temp"), None);
    // no all_power and a 0 sys_power: at least cpu + gpu + ane
    assert_eq!(get(&m, "system.powerWatts"), Some(3.5));
    assert_eq!(get(&m, "memory.used_percent"), Some(25.0));
    assert_eq!(get(&m, "swap.used"), None);
    assert_eq!(get(&m, "swap.used_percent"), None, "no swap total");
}

#[test]
fn bad_lines_are_errors_not_panics() {
    for l in [
        "",
        "nope",
        "[1,2]",
        "{}",
        r#"{"foo":1}"#,
        "\u{1b}[31m{",
        "{\"temp\":",
    ] {
        assert!(macmon_metrics(l).is_err(), "{l:?}");
    }
    // wrong types are skipped field by field
    let m = macmon_metrics(r#"{"cpu_power":"x","gpu_usage":["a",0.5]}"#).expect("one field");
    assert_eq!(m, vec![("gpu.0.gpu".to_string(), 50.0)]);
}

#[test]
fn soc_block_gives_static_facts() {
    let line = r#"{"soc":{"mac_model":"Mac15,8","chip_name":"Apple M3 Max","memory_gb":48,"ecpu_cores":4,"pcpu_cores":12,"gpu_cores":40},"memory":{"ram_total":51539607552,"swap_total":0}}"#;
    let (gpus, facts) = macmon_static(line);
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "Apple M3 Max (40-core GPU)");
    assert_eq!(gpus[0].memory_total, 51_539_607_552);
    assert!(facts.contains(&("apple.chip_name".into(), "Apple M3 Max".into())));
    assert!(facts.contains(&("apple.gpu_cores".into(), "40".into())));
    assert!(facts.contains(&("ram.total".into(), "51539607552".into())));
    assert!(!facts.iter().any(|(k, _)| k == "swap.total"));
}

#[test]
fn settings_and_reasons() {
    assert_eq!(Setting::parse(None), Ok(Setting::Auto));
    assert_eq!(Setting::parse(Some("1")), Ok(Setting::Force));
    assert_eq!(Setting::parse(Some("0")), Ok(Setting::Off));
    assert_eq!(
        Setting::parse(Some("/x/macmon")),
        Ok(Setting::Path("/x/macmon".into()))
    );
    assert!(Setting::parse(Some("maybe")).is_err());
    let why = locate(&Setting::Auto, false).expect_err("not a mac");
    assert!(why.contains("not macOS on Apple Silicon"), "{why}");
    assert!(!why.contains('\n'));
    let why = locate(&Setting::Path("/nonexistent/macmon".into()), false).expect_err("no file");
    assert!(why.contains("not an executable"), "{why}");
    assert!(locate(&Setting::Off, true).is_err());
}

#[test]
fn backoff_doubles_to_a_minute_and_resets_after_a_healthy_run() {
    let mut b = Backoff::new(HEALTHY_RUN);
    let short = Duration::from_millis(10);
    let got: Vec<u64> = (0..8).map(|_| b.after(short).as_secs()).collect();
    assert_eq!(got, [1, 2, 4, 8, 16, 32, 60, 60]);
    assert_eq!(b.after(HEALTHY_RUN).as_secs(), 1);
    assert_eq!(b.after(short).as_secs(), 2);
}

/// A fake `macmon` (shell script): `-s 1` prints the probe line, else `stream_body`.
fn fake(dir: &Path, stream_body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("macmon");
    let script =
        format!("#!/bin/sh\ncase \"$*\" in *'-s 1'*) echo '{V07}'; exit 0;; esac\n{stream_body}\n");
    std::fs::write(&p, script).expect("write fake");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

#[test]
fn the_probe_gives_the_overview_its_facts_and_an_old_macmon_is_asked_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let soc = include_str!("../../../../tests/fixtures/macmon/readme-v08-soc.jsonl");
    let p = fake(dir.path(), "exit 0");
    // as macmon < 0.6.1: `--soc-info` is an unknown argument (clap exits 2)
    let script = format!("#!/bin/sh\ncase \"$*\" in *--soc-info*) exit 2;; esac\necho '{V07}'\n");
    std::fs::write(&p, script).expect("write");
    let c = AppleCollector::with_program(p.clone(), Duration::from_secs(1)).expect("probe");
    assert_eq!(
        c.gpus()[0].name,
        "Apple Silicon GPU",
        "no soc block without --soc-info"
    );
    // ... but with it: the chip and its unified memory
    let script = format!("#!/bin/sh\necho '{}'\n", soc.trim());
    std::fs::write(&p, script).expect("write");
    let c = AppleCollector::with_program(p, Duration::from_secs(1)).expect("probe");
    assert_eq!(c.gpus()[0].name, "Apple M3 Pro (18-core GPU)");
    assert_eq!(c.gpus()[0].memory_total, 25_769_803_776);
    let facts = c.static_info();
    assert!(
        facts.contains(&("apple.mac_model".into(), "Mac15,6".into())),
        "{facts:?}"
    );
    assert!(facts.contains(&("apple.ecpu_cores".into(), "6".into())));
    assert!(facts.contains(&("swap.total".into(), "4294967296".into())));
}

#[test]
fn a_hung_probe_is_not_available_within_its_deadline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("macmon");
    std::fs::write(&p, "#!/bin/sh\nwhile :; do sleep 1; done\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let t = Instant::now();
    let e = AppleCollector::with_program(p, Duration::from_secs(1))
        .err()
        .expect("hung");
    assert!(e.contains("timed out"), "{e}");
    assert!(
        t.elapsed() < PROBE_TIMEOUT + Duration::from_secs(2),
        "asked twice?"
    );
}

#[test]
fn a_dying_child_is_reported_and_restarted_with_backoff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let counter = dir.path().join("starts");
    let body = format!("echo x >> {}; exit 3", counter.display());
    let mut c = AppleCollector::with_program(fake(dir.path(), &body), Duration::from_millis(50))
        .expect("probe");
    let mut out = Vec::new();
    // first sample: probe values, the child starts
    assert!(c.sample(&mut out).is_ok());
    assert!(get(&out, "cpu.powerWatts").is_some());
    std::thread::sleep(Duration::from_millis(300));
    let e = c.sample(&mut Vec::new()).expect_err("died").to_string();
    assert!(
        e.contains("exited") && e.contains("restarting in 1s"),
        "{e}"
    );
    // within the backoff no new child starts
    std::thread::sleep(Duration::from_millis(300));
    let _ = c.sample(&mut Vec::new());
    let starts = std::fs::read_to_string(&counter).unwrap_or_default();
    assert_eq!(starts.lines().count(), 1, "restarted before the backoff");
}

#[test]
fn a_silent_child_is_killed_after_the_silence_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let body = format!("echo $$ > {}; while :; do sleep 1; done", pidfile.display());
    let interval = Duration::from_millis(100);
    let mut c = AppleCollector::with_program(fake(dir.path(), &body), interval).expect("probe");
    let t0 = Instant::now();
    let mut problems = Vec::new();
    c.start_if_due(t0, &mut problems);
    assert!(problems.is_empty() && c.running.is_some(), "{problems:?}");
    // The shell creates the file before `echo` writes the pid into it: wait for
    // the number, not the file (an empty pid named `/proc/`, which exists).
    let t = Instant::now();
    let pid = loop {
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if let Ok(pid) = text.trim().parse::<u32>() {
            break pid;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no pid written");
        std::thread::sleep(Duration::from_millis(10));
    };
    c.read(t0 + Duration::from_secs(9), &mut problems);
    assert!(problems.is_empty() && c.running.is_some(), "{problems:?}");
    c.read(
        t0 + silence_limit(interval) + Duration::from_secs(1),
        &mut problems,
    );
    assert_eq!(
        problems,
        ["macmon sent nothing for 11s; killed, restarting in 1s"]
    );
    assert!(c.running.is_none());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the silent child still runs"
    );
}

#[test]
fn garbage_is_reported_and_the_good_line_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = format!("echo 'garbage \u{1b}[2J'; echo '{V07}'; exec sleep 30");
    let mut c = AppleCollector::with_program(fake(dir.path(), &body), Duration::from_millis(100))
        .expect("probe");
    let _ = c.sample(&mut Vec::new());
    std::thread::sleep(Duration::from_millis(300));
    let mut out = Vec::new();
    let e = c.sample(&mut out).expect_err("garbage").to_string();
    assert!(e.contains("1 line(s) not macmon's JSON"), "{e}");
    assert!(!e.contains('\u{1b}'), "unsanitized: {e:?}");
    assert_eq!(get(&out, "cpu.ecpu_freq"), Some(2892.0));
}
