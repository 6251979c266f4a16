use super::*;

fn pci(root: &Path, addr: &str, vendor: &str, device: &str, subsystem: &str) {
    let d = root.join("bus/pci/devices").join(addr);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("vendor"), format!("{vendor}\n")).expect("vendor");
    std::fs::write(d.join("device"), format!("{device}\n")).expect("device");
    std::fs::write(d.join("subsystem_device"), format!("{subsystem}\n")).expect("sub");
}

#[test]
fn generations_from_pci_ids() {
    let name = |d, s| generation(d, s).map(|g| g.name);
    assert_eq!(name("0x0027", "0x004e"), Some("v2"));
    assert_eq!(name("0x0027", "0x004F"), Some("v3"));
    assert_eq!(name("0x0027", "0x0000"), None);
    assert_eq!(name("0x005e", "0x0000"), Some("v4"));
    assert_eq!(name("0x0063", ""), Some("v5e"));
    assert_eq!(name("0x0062", ""), Some("v5p"));
    assert_eq!(name("0x006F", ""), Some("v6e"));
    assert_eq!(name("0x0076", ""), Some("7x"));
    assert_eq!(name("0x0042", ""), None); // gVNIC
    let v5p = generation("0x0062", "").expect("v5p");
    assert_eq!((v5p.hbm_gib, v5p.devices_per_chip), (95, 1));
    let v3 = generation("0x0027", "0x004f").expect("v3");
    assert_eq!(
        (v3.hbm_gib, v3.devices_per_chip, v3.duty_cycle_fanout),
        (16, 2, 2)
    );
}

#[test]
fn pci_scan_keeps_tpus_in_address_order() {
    let dir = tempfile::tempdir().expect("tmp");
    pci(dir.path(), "0000:00:06.0", "0x1ae0", "0x005e", "0x0000");
    pci(dir.path(), "0000:00:05.0", "0x1ae0", "0x005e", "0x0000");
    pci(dir.path(), "0000:00:04.0", "0x1ae0", "0x0042", "0x0008"); // gVNIC
    pci(dir.path(), "0000:00:01.0", "0x8086", "0x7110", "0x1100");
    let chips = scan_pci(dir.path()).expect("chips");
    let addrs: Vec<&str> = chips.iter().map(|c| c.address.as_str()).collect();
    assert_eq!(addrs, ["0000:00:05.0", "0000:00:06.0"]);
    assert_eq!(
        chips[0].info(),
        GpuInfo {
            name: "TPU v4".into(),
            memory_total: 32 << 30,
            driver: String::new()
        }
    );
    let c = Chip {
        address: String::new(),
        generation: generation("0x0076", "").expect("7x"),
    };
    assert_eq!(c.info().name, "TPU7x");
}

#[test]
fn no_tpu_says_why() {
    let dir = tempfile::tempdir().expect("tmp");
    let missing = scan_pci(dir.path()).expect_err("no dir");
    assert!(missing.starts_with("cannot read "), "{missing}");
    pci(dir.path(), "0000:00:04.0", "0x1ae0", "0x0042", "0x0008");
    pci(dir.path(), "0000:00:01.0", "0x8086", "0x7110", "0x1100");
    let why = scan_pci(dir.path()).expect_err("no tpu");
    assert_eq!(
        why,
        format!(
            "no TPU on the PCI bus ({}); Google device id 0x0042 is not a TPU",
            dir.path().join("bus/pci/devices").display()
        )
    );
    assert!(!why.contains('\n'));
}

#[test]
fn ports_from_the_environment_value() {
    assert_eq!(parse_ports(None), Ok(vec![8431]));
    assert_eq!(parse_ports(Some(" ")), Ok(vec![8431]));
    assert_eq!(
        parse_ports(Some("8431,8432, 8433,8431,")),
        Ok(vec![8431, 8432, 8433])
    );
    assert!(parse_ports(Some("8431,x")).is_err_and(|e| e.contains("'x'")));
    assert!(parse_ports(Some("0")).is_err());
    assert!(parse_ports(Some("70000")).is_err());
}

#[test]
fn deadline_is_well_under_the_interval() {
    assert_eq!(
        sample_timeout(Duration::from_secs(1)),
        Duration::from_millis(400)
    );
    assert_eq!(
        sample_timeout(Duration::from_millis(300)),
        Duration::from_millis(120)
    );
    assert_eq!(
        sample_timeout(Duration::from_millis(20)),
        Duration::from_millis(50)
    );
    assert_eq!(
        sample_timeout(Duration::from_secs(15)),
        Duration::from_secs(2)
    );
}

#[test]
fn wanted_metrics_follow_the_supported_list() {
    assert_eq!(wanted_from(None).len(), map::SPECS.len());
    let listed = vec![
        "tpu.runtime.hbm.memory.usage.bytes".to_string(),
        "tpu.runtime.tensorcore.utilization.percent".to_string(),
        "something.else".to_string(),
    ];
    let w = wanted_from(Some(&listed));
    assert_eq!(
        w,
        vec![
            (
                "tpu.runtime.hbm.memory.usage.bytes".to_string(),
                Shape::Device("hbmCapacityUsage")
            ),
            (
                "tpu.runtime.tensorcore.utilization.percent".to_string(),
                map::TENSORCORE_UTILIZATION
            ),
        ]
    );
}

#[test]
fn a_closed_port_is_an_error_not_a_hang() {
    // Bind then drop: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let chips = vec![Chip {
        address: "0000:00:05.0".into(),
        generation: generation("0x005e", "").expect("v4"),
    }];
    let mut c =
        TpuCollector::new(chips, "localhost", &[port], Duration::from_millis(500)).expect("c");
    let mut out = Vec::new();
    let e = c.sample(&mut out).expect_err("refused").to_string();
    assert!(out.is_empty());
    // localhost is 127.0.0.1 without a name lookup; the OS error is kept.
    assert!(
        e.contains(&format!("127.0.0.1:{port}: Unavailable: ")),
        "{e}"
    );
    assert!(e.contains("os error"), "{e}");
    assert_eq!(c.gpus().len(), 1);
    // Still an error (not a hang) the next time.
    assert!(c.sample(&mut out).is_err());
}

#[test]
fn nothing_listening_is_tried_again_with_backoff_and_picked_up() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let chips = vec![Chip {
        address: "0000:00:05.0".into(),
        generation: generation("0x005e", "").expect("v4"),
    }];
    let mut c =
        TpuCollector::new(chips, "localhost", &[port], Duration::from_millis(500)).expect("c");
    let mut out = Vec::new();
    let first = c.sample(&mut out).expect_err("refused").to_string();
    assert!(first.contains("next try in 1 s"), "{first}");
    // Every sample within the backoff still reports the port, without connecting.
    for _ in 0..4 {
        let e = c.sample(&mut out).expect_err("resting").to_string();
        assert!(
            e.contains("nothing listening (connection refused 1 times in a row)"),
            "{e}"
        );
        assert!(out.is_empty());
    }
    assert_eq!(c.ports[0].connects, 1);
    // Once the delay is over it connects again, and a second refusal doubles it.
    std::thread::sleep(refused_backoff(1) + Duration::from_millis(50));
    let e = c.sample(&mut out).expect_err("refused again").to_string();
    assert!(e.contains("next try in 2 s"), "{e}");
    assert_eq!(c.ports[0].connects, 2);
    // Something listens now: after the backoff the collector connects to it (this
    // listener never speaks HTTP/2, so the reading times out; the accept counts).
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("rebind");
    listener.set_nonblocking(true).expect("nonblocking");
    c.ports[0].retry_at = Some(std::time::Instant::now());
    let e = c.sample(&mut out).expect_err("no http/2").to_string();
    assert!(e.contains("no answer within 500 ms"), "{e}");
    assert!(
        listener.accept().is_ok(),
        "no connection attempt reached the listener"
    );
    assert_eq!(c.ports[0].refused, 0);
    assert_eq!(
        (1..=8)
            .map(refused_backoff)
            .map(|d| d.as_secs())
            .collect::<Vec<_>>(),
        [1, 2, 4, 8, 16, 30, 30, 30]
    );
}

#[test]
fn addresses_without_a_lookup() {
    let v4 = |s: &str| s.parse::<SocketAddr>().ok();
    assert_eq!(literal_addr("localhost", 8431), v4("127.0.0.1:8431"));
    assert_eq!(literal_addr("LOCALHOST", 1), v4("127.0.0.1:1"));
    assert_eq!(literal_addr("10.0.0.2", 8432), v4("10.0.0.2:8432"));
    assert_eq!(literal_addr("[::1]", 8431), v4("[::1]:8431"));
    assert_eq!(literal_addr("::1", 8431), v4("[::1]:8431"));
    assert_eq!(literal_addr("tpu-host", 8431), None);
}
