//! The cluster view's data from a real Prometheus (Debian's package) scraping, every
//! second: two `leet serve` processes on the NVML stub (one with its two GPUs, one
//! whose NVML fails to start: no GPU), and a recorded node-exporter page and a
//! recorded dcgm-exporter page (tests/fixtures/devices, provenance in its README)
//! served on 127.0.0.1, both relabelled to one host. Read back through the client,
//! the rules and the refresh thread into the cluster model: every key `leet sample`
//! prints comes back under its own name, the hosts are listed, the exporters' series
//! are mapped, `--match` narrows, and a killed exporter is down within two scrapes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leet::source::http::HttpOptions;
use leet::source::prometheus::fetch::{fetch, Plan};
use leet::source::prometheus::rules::Part;
use leet::source::prometheus::{driver, Client, ClusterUpdate, DriverOptions, Matchers};
use leet::store::cluster::{ClusterModel, HeaderRow, HostState};

use super::client::{self, get, wait_for, Serve};
use super::common::{self, tmux::Tmux};
use super::{tool, Prometheus};

/// A recorded page of tests/fixtures/devices, for the life of the test process.
fn fixture(name: &str) -> &'static str {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/devices")
        .join(name);
    let page = std::fs::read_to_string(&path).expect("fixture");
    Box::leak(page.into_boxed_str())
}

/// The keys `leet sample --json` prints with `args` and `env` (its first sample left
/// out: process CPU needs two readings).
fn sample_keys(args: &[&str], env: &[(&str, &str)]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_leet"))
        .args(["sample", "--json", "--count", "3"])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("leet sample");
    assert!(out.status.success());
    let mut keys = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let obj = v.as_object().expect("object");
        keys.extend(obj.keys().filter(|k| *k != "timestamp").cloned());
    }
    keys
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// A static target with its `instance` label.
fn target(addr: &str, instance: &str) -> String {
    format!("      - targets: [\"{addr}\"]\n        labels: {{instance: \"{instance}\"}}\n")
}

/// `host:port` of a fake endpoint's URL.
fn host_port(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string()
}

fn start_prometheus(dir: &Path, jobs: &[(&str, String)]) -> (Prometheus, std::net::SocketAddr) {
    // The global interval is Prometheus's default; each job scrapes every second
    // (leet reads at its targets' own intervals).
    let mut config = String::from("global:\n  scrape_interval: 1m\nscrape_configs:\n");
    for (job, targets) in jobs {
        config.push_str(&format!(
            "  - job_name: {job}\n    scrape_interval: 1s\n    static_configs:\n{targets}"
        ));
    }
    let file = dir.join("prometheus.yml");
    std::fs::write(&file, config).expect("config");
    let web = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", file.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn prometheus");
    (Prometheus(child), web)
}

/// Reports of the refresh thread folded into `model` until `done` holds.
fn fold_until(
    rx: &mpsc::Receiver<ClusterUpdate>,
    model: &mut ClusterModel,
    what: &str,
    mut done: impl FnMut(&ClusterModel) -> bool,
) {
    wait_for(what, || {
        while let Ok(u) = rx.try_recv() {
            model.apply(u);
        }
        done(model).then_some(())
    });
}

/// The time of the first `up == 0` sample of `instance` at or after `since`.
fn first_down(web: std::net::SocketAddr, instance: &str, since: f64) -> Option<f64> {
    // up{instance="…"}[1m], percent-encoded.
    let path = format!("/api/v1/query?query=up%7Binstance%3D%22{instance}%22%7D%5B1m%5D");
    let r = get(web, &path, &[]).ok()?;
    let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
    let series = v.get("data")?.get("result")?.as_array()?.first()?.clone();
    (series.get("values")?.as_array()?.iter())
        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_str()?.to_string())))
        .find(|(t, v)| *t >= since && v == "0")
        .map(|(t, _)| t)
}

/// The scraped processes and pages, and the Prometheus scraping them.
struct Cluster {
    plain: Serve,
    web: std::net::SocketAddr,
    /// The keys `leet sample` prints on the host with GPUs.
    want: BTreeSet<String>,
    /// The file `gpu-2`'s NVML stub reads its GPUs' utilisation from.
    util: PathBuf,
    _gpus: Serve,
    _more: [Serve; 2],
    _prometheus: Prometheus,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// The utilisation (%) the NVML stub reports for its two GPUs from now on: the
/// file it reads at each sample, replaced whole (a sample never reads half of it).
fn set_utilisation(file: &Path, gpus: [u8; 2]) {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, format!("{} {}\n", gpus[0], gpus[1])).expect("utilisation file");
    std::fs::rename(&tmp, file).expect("utilisation file");
}

/// None (skipped) without Prometheus or a C compiler, except under `CI=true`.
fn start_cluster() -> Option<Cluster> {
    if !tool::have_tool("prometheus", &["--version"]) {
        return None;
    }
    let stub = client::nvml_stub()?;
    let lib = stub.path().to_str().expect("utf-8 path").to_string();
    // Both GPUs of `gpu-2` idle until a test makes one busy ([`set_utilisation`]).
    let util = stub.path().join("util");
    set_utilisation(&util, [0, 0]);
    let util = util.to_str().expect("utf-8 path").to_string();
    let gpu_env = [
        ("LD_LIBRARY_PATH", lib.as_str()),
        ("NVML_STUB_UTIL_FILE", util.as_str()),
    ];
    let none_env = [
        ("LD_LIBRARY_PATH", lib.as_str()),
        ("NVML_STUB_FAIL_INIT", "1"),
    ];
    let args = ["--interval", "500ms"];
    let want = sample_keys(&args, &gpu_env);
    assert!(want.contains("gpu.1.powerWatts"), "{want:?}");
    let gpus = Serve::start(&args, &gpu_env);
    let plain = Serve::start(&args, &none_env);
    let node = host_port(&client::fake_endpoint(fixture(
        "openmetrics-node-exporter-e2e-linux.txt",
    )));
    let dcgm_url = client::fake_endpoint(fixture("openmetrics-dcgm-exporter-l4.txt"));
    let dcgm = host_port(&dcgm_url);
    // A second `leet serve` on the machine `twin` (another port) whose GPU is the
    // dcgm-exporter's L4: its GPU 0 and the first's would clash in one row.
    let l4_args = ["--interval", "500ms", "--dcgm-exporter", dcgm_url.as_str()];
    let l4 = Serve::start(&l4_args, &none_env);
    // `leet serve` (without GPU access) on `node-a` too, beside its node-exporter
    // and dcgm-exporter: the GPU is dcgm-exporter's.
    let node_leet = Serve::start(&args, &none_env);
    let dir = tempfile::tempdir().expect("tempdir");
    let leet_targets = target(&gpus.addr.to_string(), "gpu-2")
        + &target(&plain.addr.to_string(), "cpu-only")
        + &target(&gpus.addr.to_string(), "twin:19853")
        + &target(&l4.addr.to_string(), "twin:19854")
        + &target(&node_leet.addr.to_string(), "node-a:9837");
    let (prometheus, web) = start_prometheus(
        dir.path(),
        &[
            ("leet", leet_targets),
            ("node", target(&node, "node-a:9100")),
            ("dcgm", target(&dcgm, "node-a:9400")),
        ],
    );
    Some(Cluster {
        plain,
        web,
        want,
        util: PathBuf::from(util),
        _gpus: gpus,
        _more: [l4, node_leet],
        _prometheus: prometheus,
        _dirs: (stub, dir),
    })
}

const HOSTS: [&str; 5] = ["cpu-only", "gpu-2", "node-a", "twin:19853", "twin:19854"];

/// Keys of node-exporter's and dcgm-exporter's pages, as mapped.
const EXPORTER_KEYS: &[&str] = &[
    "cpu.0.cpu_percent",
    "load.1m",
    "swap.total",
    "disk.in",
    "gpu.0.gpu",
    "gpu.0.powerWatts",
    "gpu.0.memoryAllocated",
    "gpu.0.energyJoules",
];

fn row(m: &ClusterModel, host: &str) -> HeaderRow {
    (m.header(now()).into_iter())
        .find(|r| r.host == host)
        .expect("row")
}

/// The header rows and the heatmap of the three hosts.
fn assert_rows(model: &ClusterModel) {
    assert_eq!(
        (row(model, "gpu-2").gpus, row(model, "cpu-only").gpus),
        (2, 0)
    );
    // node-a's GPU is dcgm-exporter's though `leet serve` runs there (with no GPU).
    let dcgm_row = row(model, "node-a");
    assert_eq!((dcgm_row.gpus, dcgm_row.power), (1, Some(16.365)));
    // Two `leet serve` on one machine: a row each, every GPU kept.
    assert_eq!(
        (row(model, "twin:19853").gpus, row(model, "twin:19854").gpus),
        (2, 1)
    );
    assert_eq!(row(model, "twin:19854").power, Some(16.365));
    // Every host's CPU is the host's (its cores'), a number for each.
    for h in HOSTS {
        assert!(
            row(model, h)
                .cpu
                .is_some_and(|c| (0.0..=100.0).contains(&c)),
            "{h}"
        );
    }
    let heat: Vec<(String, u32)> = (model.heatmap(now(), 10).into_iter())
        .map(|r| (r.host, r.gpu))
        .collect();
    assert_eq!(
        heat,
        [
            ("gpu-2".into(), 0),
            ("gpu-2".into(), 1),
            ("node-a".into(), 0),
            ("twin:19853".into(), 0),
            ("twin:19853".into(), 1),
            ("twin:19854".into(), 0),
        ]
    );
    for h in HOSTS {
        assert_eq!(row(model, h).state, HostState::Up, "{h}");
    }
}

/// `--match` narrows every query: one host's series only, and no rule refused.
fn assert_match_narrows(client: &Client) {
    let only_leet = Plan {
        matchers: Matchers::parse(&[r#"job="leet", instance=~"gpu-.*""#]).expect("matchers"),
        scrape: Duration::from_secs(1),
    };
    let t = now().floor();
    let batch = fetch(
        client,
        &only_leet,
        Part::All,
        (t - 10.0, t),
        Duration::from_secs(1),
    )
    .expect("fetch");
    let seen: BTreeSet<&str> = batch.series.iter().map(|s| s.host.as_str()).collect();
    assert_eq!(seen, BTreeSet::from(["gpu-2"]));
    assert!(batch.refused.is_empty(), "{:?}", batch.refused);
}

#[test]
fn the_cluster_model_reads_every_exporter_back_from_prometheus() {
    let Some(mut cluster) = start_cluster() else {
        return;
    };
    let url = format!("http://{}", cluster.web);
    let client = Client::new(&url, HttpOptions::default()).expect("client");
    wait_for("Prometheus to answer", || client.query("up", None).ok());
    let (tx, rx) = mpsc::channel();
    let options = DriverOptions {
        matchers: Matchers::default(),
        window: Duration::from_secs(60),
        interval: None,
    };
    driver::spawn(client.clone(), options, move |u| tx.send(u).is_ok()).expect("thread");
    let mut model = ClusterModel::default();
    fold_until(&rx, &mut model, "every key of every host", |m| {
        let keys = |h: &str| -> BTreeSet<String> {
            (m.host(h).into_iter())
                .flat_map(|h| h.keys().map(str::to_string))
                .collect()
        };
        m.hosts().map(|(h, _)| h).eq(HOSTS)
            && cluster.want.is_subset(&keys("gpu-2"))
            && EXPORTER_KEYS.iter().all(|k| keys("node-a").contains(*k))
    });
    // The step and interval came from the server's configuration.
    let second = Duration::from_secs(1);
    assert_eq!((model.step(), model.interval()), (second, second));
    assert_eq!(model.server(), url);
    assert_rows(&model);
    assert_match_narrows(&client);

    // A killed exporter: its first failed scrape within two scrape intervals, and the
    // model shows it down.
    let killed_at = now();
    let _ = cluster.plain.child.kill();
    let _ = cluster.plain.child.wait();
    let down = wait_for("a failed scrape of the killed exporter", || {
        first_down(cluster.web, "cpu-only", killed_at)
    });
    assert!(
        down - killed_at <= 2.0,
        "first failed scrape {:.3} s after the kill",
        down - killed_at
    );
    fold_until(&rx, &mut model, "the killed exporter down", |m| {
        row(m, "cpu-only").state == HostState::Down
    });
    assert_eq!(row(&model, "gpu-2").state, HostState::Up);
    assert_hung_gpus_are_not_current(&cluster, &client, &rx, &mut model);
}

/// A GPU driver that hangs (the NVML stub's utilisation file a FIFO nobody
/// writes): `leet serve` drops its GPU series and keeps the rest, its target stays
/// up; the GPUs are not shown as current, and `leet_family_info` says `nvidia` is
/// not available.
fn assert_hung_gpus_are_not_current(
    cluster: &Cluster,
    client: &Client,
    rx: &mpsc::Receiver<ClusterUpdate>,
    model: &mut ClusterModel,
) {
    let fifo = cluster.util.with_extension("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return;
    }
    std::fs::rename(&fifo, &cluster.util).expect("the FIFO in the file's place");
    fold_until(rx, model, "gpu-2's GPUs not current", |m| {
        let r = row(m, "gpu-2");
        (r.state, r.gpus, r.gpus_stale, r.gpu_mean) == (HostState::Up, 2, 2, None)
    });
    assert!(row(model, "gpu-2").memory.is_some());
    let q = r#"leet_family_info{instance="gpu-2",family="nvidia",available="0"}"#;
    wait_for("leet serve to say nvidia is not available", || {
        (!client.query(q, None).ok()?.is_empty()).then_some(())
    });
}

/// A `leet serve` page of a host with `gpus` GPUs, each with every per-GPU gauge
/// leet exports (thousands of series, as a host with every accelerator family
/// exports), and its uptime, load and memory: (page, the keys it maps to).
fn big_host_page(gpus: u32) -> (String, BTreeSet<String>) {
    use leet::source::prometheus::names::{Kind, RULES};
    let mut page = String::new();
    let mut keys = BTreeSet::new();
    for rule in RULES.iter().filter(|r| r.kind == Kind::Gauge) {
        let Some(field) = rule.key.strip_prefix("gpu.{gpu}.") else {
            continue;
        };
        if field.contains('{') {
            continue;
        }
        for gpu in 0..gpus {
            page.push_str(&format!("{}{{gpu=\"{gpu}\"}} 1\n", rule.metric));
            keys.insert(format!("gpu.{gpu}.{field}"));
        }
    }
    for (metric, key, value) in [
        ("leet_uptime_seconds", "uptime", "46364.16"),
        ("leet_load1", "load.1m", "0.3"),
        ("leet_memory_used_ratio", "memory_percent", "0.25"),
        (
            "leet_memory_available_bytes",
            "proc.memory.availableMB",
            "4294967296",
        ),
    ] {
        page.push_str(&format!("{metric} {value}\n"));
        keys.insert(key.to_string());
    }
    (page, keys)
}

/// A host exporting thousands of series through a real Prometheus, which answers
/// them in name order (`leet_uptime_seconds` after every `leet_gpu_…`): the model
/// keeps every one, the uptime and memory the host screen's header shows among them.
#[test]
fn a_host_with_thousands_of_series_is_read_whole() {
    if !tool::have_tool("prometheus", &["--version"]) {
        return;
    }
    let (page, want) = big_host_page(96);
    assert!(want.len() > 2500, "{}", want.len());
    let page: &'static str = Box::leak(page.into_boxed_str());
    let big = host_port(&client::fake_endpoint(page));
    let dir = tempfile::tempdir().expect("tempdir");
    let (_prometheus, web) = start_prometheus(dir.path(), &[("leet", target(&big, "gpu-box"))]);
    let client = Client::new(&format!("http://{web}"), HttpOptions::default()).expect("client");
    wait_for("Prometheus's scrape interval", || {
        client.scrape_interval(&Matchers::default()).ok().flatten()
    });
    let (tx, rx) = mpsc::channel();
    let options = DriverOptions {
        matchers: Matchers::default(),
        window: Duration::from_secs(60),
        interval: None,
    };
    driver::spawn(client, options, move |u| tx.send(u).is_ok()).expect("thread");
    let mut model = ClusterModel::default();
    // Every series scraped and read (before the fix, the first 2048 in name order).
    fold_until(&rx, &mut model, "the host's series", |m| {
        m.host("gpu-box").is_some_and(|h| h.keys().count() >= 2048)
    });
    // Two more refreshes folded in: nothing more is coming.
    let mut fetched = 0;
    wait_for("two more refreshes", || {
        while let Ok(u) = rx.try_recv() {
            fetched += usize::from(matches!(u, ClusterUpdate::Fetched(_)));
            model.apply(u);
        }
        (fetched >= 2).then_some(())
    });
    let keys: BTreeSet<String> = (model.host("gpu-box").into_iter())
        .flat_map(|h| h.keys().map(str::to_string))
        .collect();
    let missing: Vec<&String> = want.difference(&keys).collect();
    assert!(
        missing.is_empty(),
        "{} keys missing: {missing:?}",
        missing.len()
    );
    let uptime = model
        .host("gpu-box")
        .and_then(|h| h.series("uptime")?.last());
    assert_eq!(uptime.map(|p| p.1), Some(46364.16));
}

/// Whether `screen` has a header row of `host` in `state` (the table's rows hold
/// the host's name and its state; the heatmap's labels are `host:gpu`).
fn shows(screen: &str, host: &str, state: &str) -> bool {
    screen.lines().any(|l| {
        let mut words = l.split_whitespace().skip_while(|w| *w == "›");
        words.next() == Some(host) && words.next() == Some(state)
    })
}

/// The heatmap cells of `label`'s row (`gpu-2:0`), without colour: a shade per
/// quarter of utilisation (`░` below 25 %, `█` from 75 %).
fn heat_cells<'a>(screen: &'a str, label: &str) -> Option<&'a str> {
    screen.lines().find_map(|l| {
        let rest = l.trim_start_matches('│').strip_prefix(label)?;
        rest.starts_with(' ')
            .then(|| rest.trim().trim_end_matches('│').trim_end())
    })
}

/// A row whose newest cell is busy (the last shade drawn is `█`).
fn busy_now(cells: &str) -> bool {
    cells.ends_with('█')
}

/// A row that never showed more than a quarter's utilisation.
fn idle_all_along(cells: &str) -> bool {
    !cells.is_empty() && cells.chars().all(|c| c == '░' || c == ' ')
}

/// `leet --live --prometheus URL` in a real terminal over the same Prometheus: the
/// cluster screen lists every host up; one GPU of `gpu-2` made busy mid-test shows
/// in its own heatmap row and in no other; and an exporter killed mid-test is shown
/// down (Prometheus notes the failed scrape within two scrape intervals, the other
/// test checks; here the screen is waited on).
#[test]
fn the_cluster_screen_lists_every_host_and_shows_a_killed_exporter_down() {
    if !common::have_tmux() {
        return;
    }
    let Some(mut cluster) = start_cluster() else {
        return;
    };
    let url = format!("http://{}", cluster.web);
    // The screen reads at the scrape interval the server reports once its
    // configuration is loaded (before then, the 15 s default).
    let client = Client::new(&url, HttpOptions::default()).expect("client");
    wait_for("Prometheus's scrape interval", || {
        client.scrape_interval(&Matchers::default()).ok().flatten()
    });
    let args = ["--live", "--prometheus", url.as_str(), "--window", "1m"];
    // Without colour, so that the heatmap's shades are text a capture reads.
    let t = Tmux::start_env("cluster", "NO_COLOR=1 ", &args, 160, 45);
    let deadline = Duration::from_secs(60);
    // The GPUs' heatmap rows come with the hosts' first series.
    let gpus = ["gpu-2:0", "gpu-2:1", "node-a:0", "twin:19854:0"];
    let (s, ()) = t.wait_until("every host up with its GPUs", deadline, |s| {
        let hosts = HOSTS.iter().all(|h| shows(s, h, "up"));
        (hosts && gpus.iter().all(|g| s.contains(g))).then_some(())
    });
    assert!(s.contains("5 hosts: 5 up"), "{s}");
    let (s, ()) = t.wait_until("every GPU's heatmap row idle", deadline, |s| {
        gpus.iter()
            .all(|g| heat_cells(s, g).is_some_and(idle_all_along))
            .then_some(())
    });
    for g in gpus {
        assert!(heat_cells(&s, g).is_some_and(|c| !busy_now(c)), "{g}: {s}");
    }
    set_utilisation(&cluster.util, [100, 0]);
    let (s, ()) = t.wait_until("gpu-2:0's heatmap row busy", deadline, |s| {
        heat_cells(s, "gpu-2:0").is_some_and(busy_now).then_some(())
    });
    for g in ["gpu-2:1", "node-a:0"] {
        assert!(heat_cells(&s, g).is_some_and(idle_all_along), "{g}: {s}");
    }
    let killed = std::time::Instant::now();
    let _ = cluster.plain.child.kill();
    let _ = cluster.plain.child.wait();
    let (s, ()) = t.wait_until("the killed exporter down", deadline, |s| {
        shows(s, "cpu-only", "down").then_some(())
    });
    // Reported, not bounded: a loaded machine may take longer.
    eprintln!(
        "down on screen {:.1} s after the kill",
        killed.elapsed().as_secs_f64()
    );
    assert!(s.contains("every 1s"), "{s}");
    assert!(shows(&s, "gpu-2", "up"), "{s}");
    // The screen, for `--nocapture` (the README's capture).
    eprintln!("{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}
