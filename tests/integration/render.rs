//! Whole-screen snapshots (TestBackend + insta), each driven through key messages
//! so the key map → action → state path is covered.

use crate::common;

use common::screen::{app_from, screen, NOW, SIZES};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::render;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// A fixture's latest run opened at its real path (the run picker and media viewer
/// read the directory next to it), with `opts`, at `w`×`h` and the fixed "now".
fn opened_at(fixture: &str, opts: Options, w: u16, h: u16) -> App {
    let dir = common::runs_dir().join(fixture).join("wandb/latest-run");
    let (path, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(opts);
    app.update(Msg::Resize(w, h));
    send(
        &mut app,
        [Msg::Opened {
            path,
            len: batch.file_len,
            modified: Some(NOW - 3600.0),
        }],
    );
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

fn no_color() -> Options {
    Options {
        color: false,
        ..Options::default()
    }
}

/// Apply messages as the runtime does: the commands that ask for something (list
/// the runs, load an image) are answered at once by the real executor and the
/// answers applied; the reader starts and stops are returned.
fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) -> Vec<leet::ui::Cmd> {
    let mut readers = Vec::new();
    for m in msgs {
        let mut queue: std::collections::VecDeque<_> = app.update(m).cmds.into();
        while let Some(cmd) = queue.pop_front() {
            if cmd.is_reader() {
                readers.push(cmd);
            } else if let Some(answer) = leet::runtime::answer(cmd) {
                queue.extend(app.update(answer).cmds);
            }
        }
    }
    readers
}

fn snap(name: &str, fixture: &str, keys: &dyn Fn() -> Vec<Msg>) {
    for (w, h) in SIZES {
        let mut app = app_from(fixture, w, h);
        send(&mut app, keys());
        insta::assert_snapshot!(format!("{fixture}_{w}x{h}_{name}"), screen(&app, w, h));
    }
}

#[test]
fn tiny() {
    snap("start", "tiny", &Vec::new);
}

#[test]
fn system_right_sidebar() {
    snap("start", "system", &Vec::new);
    // With the overview hidden the system sidebar fits at 80 columns too.
    snap("right_sidebar", "system", &|| vec![Msg::char('[')]);
}

/// The multi-node fixture (`tests/fixtures/multinode`, README there) opened as
/// `multinode.wandb`, without colour, at `w`×`h`.
fn multinode_app(w: u16, h: u16) -> App {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/multinode/wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(no_color());
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from("multinode.wandb"),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

#[test]
fn the_multinode_fixture_is_what_its_generator_writes() {
    let spec = leet::decode::synth::NodesSpec::default();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/multinode/wandb/offline-run-20261130_173320-mnode001")
        .join(format!("run-{}.wandb", spec.run_id));
    let want = leet::decode::synth::nodes_file(&spec);
    assert!(
        std::fs::read(&file).unwrap() == want,
        "regenerate with `cargo run --example multinode -- tests/fixtures/multinode`"
    );
}

#[test]
fn multinode_system_sidebar_draws_each_node() {
    for (w, h) in [(120, 40), (200, 60)] {
        let mut app = multinode_app(w, h);
        send(&mut app, [Msg::char('[')]);
        let s = screen(&app, w, h);
        assert!(s.contains("■node-0:gpu 0"), "{s}");
        if w == 200 {
            // A sidebar of 47 columns: the legend wraps to a row per node, each
            // node named once, so every entry is whole.
            assert!(s.contains("■node-0:gpu 0 82.6% ■gpu 1 75.5% "), "{s}");
            assert!(s.contains("■node-1:gpu 0 82.6% ■gpu 1 0% "), "{s}");
        }
        insta::assert_snapshot!(format!("multinode_{w}x{h}_nodes"), s);
        // The sidebar's filter naming a node draws that node's series only.
        let keys: Vec<Msg> = std::iter::once(Msg::char('\\'))
            .chain(Msg::typed("node-1"))
            .chain([Msg::key(KeyCode::Enter)])
            .collect();
        send(&mut app, keys);
        let s = screen(&app, w, h);
        assert!(s.contains("■node-1:gpu 0") && !s.contains("node-0:"), "{s}");
        insta::assert_snapshot!(format!("multinode_{w}x{h}_node_1"), s);
    }
}

#[test]
fn multinode_heatmap_has_a_row_per_node_and_gpu() {
    // Wide enough for the heatmap's labels (a third of the chart).
    let (w, h) = (200, 60);
    let mut app = multinode_app(w, h);
    // The system sidebar focused, its top chart (GPU utilisation) as a heatmap.
    let keys = [
        Msg::char('['),
        Msg::key(KeyCode::Tab),
        Msg::char('y'),
        Msg::char('y'),
    ];
    send(&mut app, keys);
    let s = screen(&app, w, h);
    for row in [
        "node-0:gpu 0",
        "node-0:gpu 1",
        "node-1:gpu 0",
        "node-1:gpu 1",
    ] {
        assert!(s.contains(row), "{row}: {s}");
    }
    insta::assert_snapshot!("multinode_200x60_heatmap", s);
}

#[test]
fn filter_typed() {
    snap("filter_loss", "many_metrics", &|| {
        std::iter::once(Msg::char('/'))
            .chain(Msg::typed("loss"))
            .collect()
    });
}

#[test]
fn sidebars_hidden() {
    snap("no_sidebars", "tiny", &|| {
        vec![Msg::char('['), Msg::char(']')]
    });
}

#[test]
fn many_metrics_page2() {
    snap("page2", "many_metrics", &|| vec![Msg::char('n')]);
}

#[test]
fn help_open() {
    snap("help", "tiny", &|| vec![Msg::char('?')]);
}

#[test]
fn fullscreen_chart() {
    snap("fullscreen", "tiny", &|| {
        vec![Msg::char('d'), Msg::key(KeyCode::Enter)]
    });
}

#[test]
fn crashed_state() {
    snap("console", "crashed", &|| vec![Msg::char('4')]);
}

#[test]
fn tiny_areas_do_not_panic() {
    let app = app_from("system", 80, 24);
    for (w, h) in [
        (0, 0),
        (1, 1),
        (10, 3),
        (1, 40),
        (300, 1),
        (39, 9),
        (40, 10),
    ] {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| render::render(f, &app)).unwrap();
    }
    let mut app = app_from("many_metrics", 1, 1);
    for m in [
        Msg::char('?'),
        Msg::char('?'),
        Msg::char('4'),
        Msg::key(KeyCode::Enter),
    ] {
        app.update(m);
        for (w, h) in [(0, 0), (1, 1), (10, 3), (45, 11)] {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| render::render(f, &app)).unwrap();
        }
    }
}

#[test]
#[ignore = "prints screens for eyeballing"]
fn dump() {
    let f = std::env::var("FIX").unwrap_or_else(|_| "tiny".into());
    let keys = std::env::var("KEYS").unwrap_or_default();
    let w: u16 = std::env::var("W")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let h: u16 = std::env::var("H")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut app = app_from(&f, w, h);
    send(&mut app, Msg::typed(&keys).collect::<Vec<_>>());
    println!("{}", screen(&app, w, h));
}

/// The live host monitor, from a fixed sequence of samples (no real clock or host),
/// with no process monitored (what `leet --live` starts with without `--pid`).
fn live_app(w: u16, h: u16) -> App {
    live_host(w, h, 1, None)
}

/// The process scan of the fixed host: a training job with GPU memory, its data
/// loader, a shell, an editor, kernel threads; distinct CPU, RSS and GPU memory so
/// each sort gives its own order.
fn fixed_procs() -> leet::msg::ProcTable {
    use leet::msg::ProcRow;
    let mib = 1_048_576u64;
    let row =
        |pid, user: &str, cpu, rss_mib: u64, gpu_mib: Option<u64>, threads, cmd: &str| ProcRow {
            pid,
            ppid: 1,
            user: user.to_owned(),
            cpu,
            rss: rss_mib * mib,
            gpu_memory: gpu_mib.map(|g| g * mib),
            threads,
            command: cmd.to_owned(),
            zombie: false,
        };
    leet::msg::ProcTable {
        timestamp: NOW - 1.0,
        rows: vec![
            row(1, "root", 0.0, 12, None, 1, "/sbin/init splash"),
            row(2, "root", 0.0, 0, None, 1, "[kthreadd]"),
            row(
                812,
                "postgres",
                2.5,
                900,
                None,
                8,
                "postgres: writer process",
            ),
            row(1500, "alice", 0.3, 5, None, 1, "-bash"),
            row(
                4242,
                "alice",
                385.2,
                18_000,
                Some(61_440),
                48,
                "python train.py --epochs 10",
            ),
            row(
                4250,
                "alice",
                96.0,
                2_400,
                Some(1_024),
                4,
                "python train.py --epochs 10 (data loader 0)",
            ),
            row(
                4251,
                "alice",
                91.5,
                2_350,
                Some(900),
                4,
                "python train.py --epochs 10 (data loader 1)",
            ),
            row(5100, "bob", 12.0, 1_200, None, 22, "code --type=renderer"),
            row(6001, "alice", 0.0, 40_000, None, 2, "redis-server *:6379"),
            row(
                7007,
                "alice",
                4.0,
                300,
                Some(2_048),
                12,
                "tensorboard --logdir runs",
            ),
            row(9000, "nobody", 0.1, 3, None, 1, "sleep infinity"),
        ],
    }
}

/// The fixed host with `gpus` NVIDIA GPUs (values as the NVML backend reports the
/// stub's H100), at `w`×`h`; `monitored`: what the runtime says it monitors.
fn live_host(w: u16, h: u16, gpus: u32, monitored: Option<(u32, &str)>) -> App {
    live_host_with(w, h, gpus, monitored, None)
}

/// GPU readings for sample `i`, appended to the sample's values.
type GpuReadings<'a> = &'a mut dyn FnMut(u32, &mut Vec<(String, f64)>);

/// [`live_host`], with the GPU keys of each sample from `nvml` (the NVML collector
/// over a fake backend) instead of the fixed values.
fn live_host_with(
    w: u16,
    h: u16,
    gpus: u32,
    monitored: Option<(u32, &str)>,
    mut nvml: Option<GpuReadings<'_>>,
) -> App {
    use leet::msg::Sample;
    use serde_json::json;
    let gib = 1_073_741_824.0;
    let mut app = App::live(
        Options {
            color: false,
            ..Options::default()
        },
        120.0,
    );
    app.update(Msg::Resize(w, h));
    let mut env = serde_json::Map::new();
    env.insert("os".into(), json!("Linux (test host)"));
    env.insert(
        "cpu".into(),
        json!({"model": "Test CPU", "count": 8, "count_logical": 16}),
    );
    env.insert("memory".into(), json!({"total": "64GiB"}));
    for g in 0..gpus {
        env.insert(
            format!("gpu.{g}"),
            json!({"name": "NVIDIA H100 80GB HBM3", "memory": 80u64 << 30, "driver": "550.54.15"}),
        );
    }
    env.insert(
        "unavailable.amd".into(),
        json!("rocm-smi not found on PATH"),
    );
    env.insert(
        "unavailable.tpu".into(),
        json!("no TPU on the PCI bus (vendor 0x1ae0): libtpu was not loaded"),
    );
    let mut cfg = serde_json::Map::new();
    cfg.insert("interval".into(), json!("1s"));
    app.set_host("testhost", env, cfg);
    app.update(Msg::Monitoring(monitored.map(|(p, c)| (p, c.to_owned()))));
    let t0 = NOW - 60.0;
    for i in 0..60u32 {
        let x = f64::from(i);
        let mut values = vec![
            ("memory_percent".to_owned(), 40.0 + x / 10.0),
            ("proc.memory.availableMB".to_owned(), 23_639.414_062_5 - x),
            ("swap.used".to_owned(), 0.5 * gib),
            ("swap.total".to_owned(), 8.0 * gib),
            ("swap.used_percent".to_owned(), 6.25),
            ("load.1m".to_owned(), 3.5 + x / 100.0),
            ("load.5m".to_owned(), 2.75),
            ("load.15m".to_owned(), 1.0),
            ("uptime".to_owned(), 274_320.0 + x),
            ("disk./.usagePercent".to_owned(), 61.5),
            ("disk./.usageGB".to_owned(), 120.25),
            ("disk./data.usagePercent".to_owned(), 88.0),
            ("disk./data.usageGB".to_owned(), 1_650.0),
            ("disk.in".to_owned(), x * 12.0),
            ("disk.out".to_owned(), x * 3.0),
            ("network.sent".to_owned(), x * 1.5e6),
            ("network.recv".to_owned(), x * 3.0e6),
        ];
        for c in 0..4u32 {
            values.push((
                format!("cpu.{c}.cpu_percent"),
                20.0 + 10.0 * f64::from(c) + 10.0 * (x / 7.0).sin(),
            ));
        }
        if monitored.is_some() {
            values.push(("cpu".to_owned(), 20.0 + 10.0 * (x / 7.0).sin()));
            values.push(("proc.memory.rssMB".to_owned(), 512.0 + x));
            values.push(("proc.cpu.threads".to_owned(), 48.0));
        }
        if let Some(read) = nvml.as_mut() {
            read(i, &mut values);
        }
        for g in (0..gpus).filter(|_| nvml.is_none()) {
            let gf = f64::from(g);
            let used = (20.0 + gf) * gib;
            values.extend([
                (
                    format!("gpu.{g}.gpu"),
                    if i % 20 < 10 { 87.0 - gf } else { 5.0 + gf },
                ),
                (format!("gpu.{g}.memory"), 41.0),
                (
                    format!("gpu.{g}.memoryAllocated"),
                    used / (80.0 * gib) * 100.0,
                ),
                (format!("gpu.{g}.memoryAllocatedBytes"), used),
                (format!("gpu.{g}.temp"), 50.0 + x / 3.0 + gf),
                (format!("gpu.{g}.powerWatts"), 312.345 + 10.0 * gf),
                (format!("gpu.{g}.enforcedPowerLimitWatts"), 700.0),
                (format!("gpu.{g}.powerPercent"), (312.345 + 10.0 * gf) / 7.0),
            ]);
            if monitored.is_some() && g == 0 {
                values.push(("gpu.process.0.gpu".to_owned(), 87.0));
            }
        }
        app.update(Msg::Sample(Sample {
            timestamp: t0 + x,
            errors: Vec::new(),
            values,
        }));
    }
    app.update(Msg::Procs(fixed_procs()));
    app.update(Msg::Tick(NOW));
    app
}

#[test]
fn live_monitor_from_fixed_samples() {
    for (w, h) in SIZES {
        let app = live_app(w, h);
        insta::assert_snapshot!(format!("live_{w}x{h}_start"), screen(&app, w, h));
        let mut app = live_app(w, h);
        send(
            &mut app,
            "/gpu"
                .chars()
                .map(Msg::char)
                .chain([Msg::key(KeyCode::Enter)]),
        );
        insta::assert_snapshot!(format!("live_{w}x{h}_filter_gpu"), screen(&app, w, h));
    }
}

/// What the runtime says after `Cmd::Monitor { pid: Some(4242) }` (or `--pid 4242`).
const TRAIN: Option<(u32, &str)> = Some((4242, "python train.py --epochs 10"));

/// A monitored process: its charts come first, titled with its name (the script
/// its interpreter runs, shortened to the cell) and pid; the table marks it.
#[test]
fn live_monitor_with_a_monitored_process() {
    for (w, h) in [(80, 24), (200, 60)] {
        let app = live_host(w, h, 1, TRAIN);
        let s = screen(&app, w, h);
        assert!(s.contains("Process CPU"), "{s}");
        assert!(s.contains("(4242)"), "{s}");
        assert!(s.contains("▶   4242"), "the monitored row is marked:\n{s}");
        assert!(!s.contains("no process monitored"), "{s}");
        insta::assert_snapshot!(format!("live_{w}x{h}_monitored"), s);
    }
    // In one column of charts the whole name shows (`c1`), and the table's title
    // names it too.
    let mut app = live_host(200, 60, 1, TRAIN);
    send(&mut app, [Msg::char('c'), Msg::char('1')]);
    let s = screen(&app, 200, 60);
    assert!(s.contains("Process CPU (%): train.py (4242)"), "{s}");
    assert!(s.contains("· ▶ 4242 train.py"), "{s}");
}

/// Without a monitored process there are no process charts, and the status bar says
/// how to pick one.
#[test]
fn live_monitor_without_a_process_shows_host_charts_only() {
    for (w, h) in SIZES {
        let s = screen(&live_app(w, h), w, h);
        assert!(!s.contains("Process CPU"), "{s}");
        assert!(s.contains("no process monitored"), "{s}");
    }
}

/// The process table sorted by CPU, memory and GPU memory (`S` cycles), at the
/// smallest and the largest size.
#[test]
fn live_process_table_sorted_three_ways() {
    for (w, h) in [(80, 24), (200, 60)] {
        let mut app = live_app(w, h);
        for (name, header) in [("cpu", "CPU%▼"), ("memory", "RSS▼"), ("gpu", "GPU MEM▼")] {
            let s = screen(&app, w, h);
            assert!(s.contains(header), "{name}: {s}");
            insta::assert_snapshot!(format!("live_{w}x{h}_sort_{name}"), s);
            send(&mut app, [Msg::char('S')]);
        }
    }
}

/// A host with 8 GPUs (the values NVML reports for the stub's H100): a compact row
/// each in the header, two to a line at 80 columns, five at 200.
#[test]
fn live_monitor_with_eight_gpus() {
    for (w, h) in [(80, 24), (200, 60)] {
        // The GPU keys are what the NVML collector reads from a fake backend of
        // eight H100s.
        let tick = Arc::new(AtomicU32::new(0));
        let mut nvml = NvidiaCollector::new(FakeGpus { tick: tick.clone() });
        let mut read = |i: u32, values: &mut Vec<(String, f64)>| {
            tick.store(i, Ordering::Relaxed);
            nvml.sample(values).expect("fake NVML sample");
        };
        let app = live_host_with(w, h, 8, TRAIN, Some(&mut read));
        let s = screen(&app, w, h);
        for g in 0..8 {
            assert!(s.contains(&format!("gpu{g} ")), "gpu{g}:\n{s}");
        }
        assert!(s.contains("/80G"), "{s}");
        assert!(s.contains("/700W"), "{s}");
        insta::assert_snapshot!(format!("live_{w}x{h}_8gpus"), s);
    }
}

/// The overview in live mode: readings in their units, the unavailable families in
/// a section of their own, their reasons shortened at a word.
#[test]
fn live_overview_formats_readings_and_lists_unavailable_families() {
    // At 80 columns the overview starts hidden: `[` shows it.
    let mut app = live_host(80, 24, 1, None);
    assert!(app.screen.areas.left.is_none());
    send(&mut app, [Msg::char('[')]);
    assert!(app.screen.areas.left.is_some());
    let s = screen(&app, 80, 24);
    insta::assert_snapshot!("live_80x24_overview", s);
    // At 200 it shows at start; scrolled to its end (Environment, Unavailable).
    let mut app = live_host(200, 60, 1, None);
    let s = screen(&app, 200, 60);
    assert!(s.contains("23.09GiB"), "availableMB in GiB:\n{s}");
    assert!(!s.contains("23639.4"), "{s}");
    send(&mut app, [Msg::key(KeyCode::Tab), Msg::key(KeyCode::End)]);
    send(&mut app, [Msg::key(KeyCode::Tab), Msg::key(KeyCode::End)]);
    let s = screen(&app, 200, 60);
    assert!(s.contains("Unavailable [2]"), "{s}");
    assert!(s.contains("amd"), "{s}");
    assert!(s.contains("rocm-smi not found on PATH"), "{s}");
    // The TPU reason is too long for the column: cut after a whole word.
    let line = s.lines().find(|l| l.contains(" tpu ")).unwrap();
    let shown = line.split('│').next().unwrap().trim_end();
    assert!(shown.ends_with('…'), "{shown}");
    let words = shown.trim_end_matches('…');
    assert!(
        "no TPU on the PCI bus (vendor 0x1ae0): libtpu was not loaded"
            .starts_with(words.split_once("tpu").unwrap().1.trim())
            && words.ends_with(|c: char| c != ' '),
        "{shown}"
    );
    insta::assert_snapshot!("live_200x60_overview_end", s);
}

/// The help overlay of the live monitor lists the process table's keys (from the
/// key map in force); the viewer's help does not (its snapshots are unchanged).
#[test]
fn live_help_lists_the_process_keys() {
    // Tall enough for the whole help.
    let mut app = live_app(120, 120);
    send(&mut app, [Msg::char('?')]);
    let s = screen(&app, 120, 120);
    assert!(s.contains("│ Processes"), "{s}");
    assert!(
        s.contains("Sort processes by CPU, memory, GPU memory"),
        "{s}"
    );
    assert!(s.contains("Monitor no process"), "{s}");
    let mut tiny = app_from("tiny", 120, 120);
    send(&mut tiny, [Msg::char('?')]);
    let s = screen(&tiny, 120, 120);
    assert!(
        s.contains("Media viewer") && !s.contains("Sort processes"),
        "{s}"
    );
}

/// What one process scan and one frame cost (a host with `N` processes, default
/// 1000): `N=.. cargo test --release --test integration render::live_scan_cost -- --ignored
/// --nocapture`.
#[test]
#[ignore = "prints a measurement"]
fn live_scan_cost() {
    use leet::msg::{ProcRow, ProcTable};
    let n: u32 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut app = live_host(200, 60, 8, TRAIN);
    let table = ProcTable {
        timestamp: NOW,
        rows: (0..n)
            .map(|i| ProcRow {
                pid: i + 1,
                ppid: 1,
                user: format!("user{}", i % 7),
                cpu: f64::from(i % 97),
                rss: u64::from(i) << 16,
                gpu_memory: (i % 11 == 0).then_some(u64::from(i) << 20),
                threads: i % 64,
                command: format!("/usr/bin/python3 -m worker --shard {i} --config /etc/w.yaml"),
                zombie: false,
            })
            .collect(),
    };
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let rounds = 50u32;
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        app.update(Msg::Procs(table.clone()));
    }
    let scan = start.elapsed() / rounds;
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        t.draw(|f| render::render(f, &app)).unwrap();
    }
    let frame = start.elapsed() / rounds;
    println!("{n} processes: scan update {scan:?}, 200x60 frame {frame:?}");
}

/// No reading yet (the header before the first sample, or a platform without swap
/// or load): every meter shows `–`, nothing panics.
#[test]
fn live_header_without_readings_shows_dashes() {
    let mut app = App::live(no_color(), 120.0);
    app.update(Msg::Resize(80, 24));
    app.set_host("testhost", serde_json::Map::new(), serde_json::Map::new());
    app.update(Msg::Monitoring(None));
    app.update(Msg::Tick(NOW));
    let s = screen(&app, 80, 24);
    assert!(s.contains("up –"), "{s}");
    assert!(s.contains("load – – –"), "{s}");
    assert!(s.contains("Swap"), "{s}");
    assert!(s.contains("waiting for the first process scan"), "{s}");
    insta::assert_snapshot!("live_80x24_no_readings", s);
}

/// Process names and user names are untrusted: a process whose command line and
/// user hold escape sequences (OSC title, clear screen) and C1 controls shows
/// without them, in the table and in the monitored charts' titles.
#[test]
fn hostile_process_text_never_reaches_the_terminal() {
    use leet::msg::{ProcRow, ProcTable};
    let evil = "evil\u{1b}]0;pwn\u{7}\u{1b}[2J\u{9b}31m\u{85}\u{90}x\u{9c}name";
    let mut app = live_host(200, 60, 0, None);
    app.update(Msg::Procs(ProcTable {
        timestamp: NOW,
        rows: vec![ProcRow {
            pid: 31337,
            ppid: 1,
            user: evil.to_owned(),
            cpu: 999.0,
            rss: 1,
            gpu_memory: None,
            threads: 1,
            command: evil.to_owned(),
            zombie: false,
        }],
    }));
    app.update(Msg::Monitoring(Some((31337, evil.to_owned()))));
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    t.draw(|f| render::render(f, &app)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut all = String::new();
    for cell in buf.content() {
        let sym = cell.symbol();
        assert!(
            !sym.chars().any(|c| c.is_control() || c == '\u{1b}'),
            "control character {sym:?} in the buffer"
        );
        all.push_str(sym);
    }
    assert!(
        !all.contains("pwn") && !all.contains("[2J") && !all.contains("31m"),
        "{all}"
    );
    assert!(all.contains("31337"), "the row is drawn");
    assert!(all.contains("evil"), "the printable rest is kept");
}

/// An app whose run holds only console output (stdout writes, in order).
fn console_app(writes: &[&str], w: u16, h: u16) -> App {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use leet::msg::RunBatch;
    use prost::Message as _;
    let mut wr = Writer::new();
    for (num, line) in (1..).zip(writes) {
        let r = pb::Record {
            num,
            record_type: Some(pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
                output_type: 1,
                line: (*line).into(),
                ..Default::default()
            })),
            ..Default::default()
        };
        wr.append(&r.encode_to_vec());
    }
    let mut batch = RunBatch::default();
    leet::decode::leveldb::scan(wr.bytes(), 0, |f| {
        if let leet::decode::leveldb::Frame::Record { offset, payload } = f {
            batch.records.push((offset, payload.into_owned()));
        }
    })
    .unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Run(batch));
    app
}

#[test]
fn console_shows_a_last_line_without_newline() {
    let mut app = console_app(&["line one\n", "100%|#####| final progress"], 120, 30);
    app.update(Msg::char('4'));
    let s = screen(&app, 120, 30);
    assert!(
        s.contains("line one") && s.contains("final progress"),
        "{s}"
    );
    assert!(s.contains("Console Logs [2 lines]"), "{s}");
}

#[test]
fn run_picker() {
    for (w, h) in SIZES {
        let mut app = opened_at("multi", no_color(), w, h);
        send(&mut app, [Msg::char('R'), Msg::key(KeyCode::Down)]);
        assert_eq!(app.runs.list.len(), 5);
        // Paths and file times differ per checkout: make them fixed for the snapshot.
        let rel = |p: &std::path::Path| std::path::Path::new("wandb").join(p.file_name().unwrap());
        for (i, r) in app.runs.list.iter_mut().enumerate() {
            r.dir = rel(&r.dir);
            r.modified = Some(NOW - 600.0 * (i as f64 + 1.0));
        }
        let cur = app.shown.source.file.take().unwrap();
        app.shown.source.file = Some(rel(cur.parent().unwrap()).join(cur.file_name().unwrap()));
        app.shown.source.path = Some("multi.wandb".into());
        insta::assert_snapshot!(format!("multi_{w}x{h}_run_picker"), screen(&app, w, h));
    }
}

/// The console pane's rows (below its title), from a full screen.
fn console_rows(s: &str, h: u16) -> Vec<String> {
    let lines: Vec<&str> = s.lines().collect();
    let title = lines
        .iter()
        .position(|l| l.contains("Console Logs"))
        .unwrap();
    lines[title + 1..usize::from(h) - 1]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

#[test]
fn console_wraps_long_lines_and_scrolls() {
    // 80x24 without sidebars: the console is 7 rows high (6 for lines), 70 text columns.
    let newest = format!("{}{}{}\n", "A".repeat(70), "B".repeat(70), "C".repeat(10));
    let mut writes: Vec<String> = (0..20).map(|i| format!("line {i}\n")).collect();
    writes.push(newest);
    let writes: Vec<&str> = writes.iter().map(String::as_str).collect();
    let (w, h) = (80, 24);
    let mut app = console_app(&writes, w, h);
    send(&mut app, [Msg::char('['), Msg::char(']'), Msg::char('4')]);
    let s = screen(&app, w, h);
    let rows = console_rows(&s, h);
    assert_eq!(rows.len(), 6, "{s}");
    // Following the tail: the newest line, wrapped, ends on the last row.
    assert!(rows[0].contains("↑ 18 more"), "{s}");
    assert!(rows[1].ends_with("line 18"), "{s}");
    assert!(rows[2].ends_with("line 19"), "{s}");
    assert!(rows[3].ends_with(&"A".repeat(70)), "{s}");
    assert!(rows[4].ends_with(&"B".repeat(70)), "{s}");
    assert!(rows[5].ends_with(&"C".repeat(10)), "{s}");
    // Home: the oldest line on top, and further Up changes nothing.
    send(&mut app, [Msg::key(KeyCode::Home)]);
    let top = screen(&app, w, h);
    let rows = console_rows(&top, h);
    assert!(rows[0].ends_with("line 0"), "{top}");
    assert!(rows[5].ends_with("line 5"), "{top}");
    assert!(top.contains("Console Logs [1-6 of 21] ↓ 15 newer"), "{top}");
    send(&mut app, (0..5).map(|_| Msg::key(KeyCode::Up)));
    assert_eq!(screen(&app, w, h), top);
    send(&mut app, (0..5).map(|_| Msg::key(KeyCode::PageUp)));
    assert_eq!(screen(&app, w, h), top);
    // Down one line at a time reaches the tail again; End too.
    send(&mut app, (0..15).map(|_| Msg::key(KeyCode::Down)));
    assert_eq!(screen(&app, w, h), s);
    send(&mut app, [Msg::key(KeyCode::Home), Msg::key(KeyCode::End)]);
    assert_eq!(screen(&app, w, h), s);
}

#[test]
fn console_fills_its_last_row_and_never_splits_wide_characters() {
    let (w, h) = (81, 24);
    let wide = format!("{}\n", "漢".repeat(40));
    let mut writes: Vec<String> = (0..3).map(|i| format!("short {i}\n")).collect();
    writes.push(wide);
    writes.push("x".repeat(72));
    let writes: Vec<&str> = writes.iter().map(String::as_str).collect();
    let mut app = console_app(&writes, w, h);
    send(&mut app, [Msg::char('['), Msg::char(']'), Msg::char('4')]);
    let s = screen(&app, w, h);
    let rows = console_rows(&s, h);
    // 3 short lines + 2 rows of wide text + an unfinished line of 72 x (2 rows) = 7
    // rows in 6: the hint, then the newest rows, the last row not blank.
    assert!(rows[0].contains("↑ 2 more"), "{s}");
    assert_eq!(rows[5].trim(), "x", "{s}");
    assert_eq!(s.matches('漢').count(), 40, "{s}");
    // 71 text columns: 35 wide characters, then 5.
    assert_eq!(rows[2].matches('漢').count(), 35, "{s}");
    assert_eq!(rows[3].matches('漢').count(), 5, "{s}");
}

/// The overview pane's text (left of its separator), one entry per screen row.
fn left_pane(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| l.split('│').next().unwrap_or("").trim_end().to_owned())
        .collect()
}

#[test]
fn overview_end_reaches_the_last_row() {
    snap("overview_end", "tiny", &|| {
        vec![Msg::key(KeyCode::Tab), Msg::key(KeyCode::End)]
    });
    // The overview's sections page on their own (issue 13): End takes the focused
    // one (Config, the first) to its last row, on the section's last line.
    let (w, h) = (200, 50);
    let mut app = app_from("tiny", w, h);
    send(&mut app, [Msg::key(KeyCode::Tab)]);
    let top = screen(&app, w, h);
    send(&mut app, [Msg::key(KeyCode::End)]);
    let end = screen(&app, w, h);
    let pane = left_pane(&end);
    let at = pane
        .iter()
        .position(|l| l.starts_with(" ▸ Config [") && l.ends_with("-15 of 15]"))
        .unwrap_or_else(|| panic!("{end}"));
    assert!(!pane[at].contains("[1-"), "paged: {end}");
    let next = pane
        .iter()
        .position(|l| l.starts_with(" Summary ["))
        .unwrap_or_else(|| panic!("{end}"));
    assert!(pane[next - 1].starts_with(" seed "), "{end}");
    // Down past the end stays at the end; one Up goes back one row.
    send(&mut app, (0..40).map(|_| Msg::key(KeyCode::Down)));
    assert_eq!(screen(&app, w, h), end);
    send(&mut app, [Msg::key(KeyCode::Up)]);
    let up = screen(&app, w, h);
    assert!(
        left_pane(&up)
            .iter()
            .any(|l| l.starts_with(" ▸ Config [") && l.ends_with("-14 of 15]")),
        "{up}"
    );
    // PgDn from the top ends at the same place as End; PgUp back at the top.
    send(&mut app, [Msg::key(KeyCode::Home)]);
    assert_eq!(screen(&app, w, h), top);
    send(&mut app, (0..10).map(|_| Msg::key(KeyCode::PageDown)));
    assert_eq!(screen(&app, w, h), end);
    send(&mut app, (0..10).map(|_| Msg::key(KeyCode::PageUp)));
    assert_eq!(screen(&app, w, h), top);
}

#[test]
fn compared_runs_share_the_charts() {
    use leet::ui::Cmd;
    let (w, h) = (120, 40);
    let mut app = opened_at("multi", no_color(), w, h);
    let readers = send(
        &mut app,
        [
            Msg::char('R'),
            Msg::key(KeyCode::Down),
            Msg::char(' '),
            Msg::key(KeyCode::End),
            Msg::char(' '),
            Msg::key(KeyCode::Esc),
            Msg::char('['),
        ],
    );
    for cmd in readers {
        let Cmd::StartReader { path, tag } = cmd else {
            panic!("{cmd:?}");
        };
        let (_, b) = leet::source::tail::read_batch(&path).unwrap();
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    }
    let s = screen(&app, w, h);
    // Without colour, each run's letter at its line's end and in the legend.
    assert!(s.contains("A multi-4 B multi-3 C multi-0"), "{s}");
    insta::assert_snapshot!("multi_120x40_compare", s);
}

/// `leet RUN --compare OTHER` (RUN in a wandb directory: its workspace, the run
/// alone): a chart of a metric only one of them logged says whose line it is.
#[test]
fn with_compared_runs_every_chart_has_a_legend() {
    use leet::ui::Cmd;
    let (w, h) = (120, 40);
    let tiny = std::fs::canonicalize(common::runs_dir().join("tiny/wandb/latest-run")).unwrap();
    let other = std::fs::canonicalize(common::runs_dir().join("multi/wandb/latest-run")).unwrap();
    let mut app = App::new(no_color());
    app.update(Msg::Resize(w, h));
    app.request_open(tiny.clone());
    app.open_workspace(
        tiny.parent().unwrap().to_path_buf(),
        None,
        Some(tiny.clone()),
        true,
    );
    app.request_compare(other.clone(), other.clone());
    for cmd in app.take_cmds() {
        let Cmd::StartReader { path, tag } = cmd else {
            continue;
        };
        let (file, b) = leet::source::tail::read_batch(&path).unwrap();
        let opened = Msg::Opened {
            path: file,
            len: b.file_len,
            modified: None,
        };
        app.update(Msg::Tagged(tag, Box::new(opened)));
        app.update(Msg::Tagged(tag, Box::new(Msg::Run(b))));
    }
    let s = screen(&app, w, h);
    // `lr` is tiny's alone (its legend names tiny alone); `loss` both runs'.
    assert!(s.contains("╭lr─"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.contains("│A tiny-run ") && !l.contains("B multi-4")),
        "{s}"
    );
    assert!(s.contains("A tiny-run B multi-4"), "{s}");
}

#[test]
fn media_viewer() {
    // `3`: the media pane beside the charts (below them on a narrow screen), the
    // arrows step through the images; `enter` shows one full screen, esc comes back.
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = opened_at("many_metrics", no_color(), w, h);
        send(&mut app, [Msg::char('3'), Msg::key(KeyCode::Left)]);
        let pane = screen(&app, w, h);
        insta::assert_snapshot!(format!("many_metrics_{w}x{h}_media_pane"), pane);
        assert!(pane.contains("Metrics ["), "the charts stay:\n{pane}");
        send(&mut app, [Msg::key(KeyCode::Enter)]);
        insta::assert_snapshot!(format!("many_metrics_{w}x{h}_media"), screen(&app, w, h));
        send(&mut app, [Msg::key(KeyCode::Esc)]);
        assert_eq!(screen(&app, w, h), pane);
        // `3` again: the pane goes, the charts take its room.
        send(&mut app, [Msg::char('3')]);
        let s = screen(&app, w, h);
        assert!(!s.contains("(1/2)") && !s.contains("(2/2)"), "{s}");
    }
}

#[test]
fn status_hints_name_the_remapped_keys() {
    let mut keymap = leet::ui::keymap::Keymap::builtin();
    keymap
        .overlay(
            std::path::Path::new("user.toml"),
            "[normal]\n\"h\" = \"none\"\n\"?\" = \"none\"\n\"f1\" = \"help\"\n\"R\" = \"none\"\n\"ctrl+r\" = \"pick_run\"\n",
        )
        .unwrap();
    let app = opened_at(
        "multi",
        Options {
            keymap,
            ..no_color()
        },
        120,
        30,
    );
    let s = screen(&app, 120, 30);
    let status = s.lines().nth(29).unwrap();
    assert!(status.contains("ctrl+r: 5 runs · f1: help"), "{status}");
}

#[test]
fn a_bad_header_is_said_in_the_main_area() {
    use leet::decode::leveldb::HeaderError;
    use leet::source::file::SourceError;
    // What the reader says of a file whose header has store version 3; the name
    // carries an escape sequence, which must not reach the terminal.
    let path = std::path::PathBuf::from("runs/evil\u{1b}[2J.wandb");
    let why = SourceError::BadHeader {
        path: path.clone(),
        cause: HeaderError::Version(3),
    }
    .to_string();
    let (w, h) = (80, 24);
    let mut app = App::new(no_color());
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path,
        len: 4096,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Unreadable(why));
    app.update(Msg::Tick(NOW));
    let s = screen(&app, w, h);
    assert!(!s.contains("loading") && !s.contains('\u{1b}'), "{s}");
    assert!(s.contains("version 3"), "{s}");
    insta::assert_snapshot!(format!("bad_header_{w}x{h}"), s);
}

/// `leet --live` on a host with TPUs, NeuronCores and IPUs: each per-device metric is
/// one chart with a line per device, as GPU metrics are.
#[test]
fn live_monitor_groups_each_accelerator_metric_across_devices() {
    use leet::msg::Sample;
    let (w, h) = (200, 60);
    let mut app = App::live(
        Options {
            color: false,
            ..Options::default()
        },
        120.0,
    );
    app.update(Msg::Resize(w, h));
    app.set_host("testhost", serde_json::Map::new(), serde_json::Map::new());
    app.update(Msg::Monitoring(Some((4242, "python train.py".to_owned()))));
    let t0 = NOW - 30.0;
    for i in 0..30u32 {
        let x = f64::from(i);
        let mut values = vec![("cpu".to_owned(), 10.0)];
        for d in 0..4u32 {
            let d_f = f64::from(d);
            values.push((format!("tpu.{d}.dutyCycle"), 20.0 * d_f + x));
            values.push((format!("tpu.{d}.hbmCapacityUsage"), 1e9 * (d_f + 1.0)));
        }
        for c in 0..2u32 {
            values.push((
                format!("trn.{c}.neuroncore_utilization"),
                50.0 + f64::from(c) * 10.0,
            ));
            values.push((format!("ipu.{c}.ipu utilisation (%)"), 30.0 + x));
            values.push((format!("ipu.{c}.ipu power (W)"), 100.0 + x));
        }
        values.push(("trn.host_total_memory_usage".to_owned(), 2e9));
        app.update(Msg::Sample(Sample {
            timestamp: t0 + x,
            errors: Vec::new(),
            values,
        }));
    }
    app.update(Msg::Tick(NOW));
    let s = screen(&app, w, h);
    for title in [
        "TPU dutyCycle",
        "TPU hbmCapacityUsage",
        // (cut to the chart's width)
        "NeuronCore neuroncore_utiliz",
        "IPU ipu utilisation (%)",
        "IPU ipu power (W)",
    ] {
        assert_eq!(
            s.matches(title).count(),
            1,
            "one chart titled {title}:\n{s}"
        );
    }
    // Never one chart per device: CPU, the five above and trn.host_total_memory_usage
    // (20 per-device keys, 7 charts).
    assert!(s.contains("Metrics [1-7 of 7]"), "{s}");
    insta::assert_snapshot!("live_200x60_accelerators", s);
}

/// Print one live screen: `W=.. H=.. GPUS=.. MON=1 KEYS=.. cargo test --test integration
/// render::show_live -- --ignored --nocapture`.
#[test]
#[ignore = "prints a screen for a person to look at"]
fn show_live() {
    let var = |k: &str, d: u16| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (w, h) = (var("W", 200), var("H", 60));
    let mon = (var("MON", 0) == 1).then_some((4242, "python train.py --epochs 10"));
    let mut app = live_host(w, h, u32::from(var("GPUS", 1)), mon);
    let keys = std::env::var("KEYS").unwrap_or_default();
    send(&mut app, Msg::typed(&keys).collect::<Vec<_>>());
    println!("{}", screen(&app, w, h));
}

/// The README's live screen (100×30, a monitored process, two columns) is the one
/// drawn: its chart titles say the units the screen says (`Process Memory:`, no
/// `(MiB)` where the labels pick a prefix).
#[test]
fn the_readme_live_screen_is_the_screen_drawn() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find(" testhost  Linux (test host)")
        .expect("the live screen in the README");
    let block = &readme[start..];
    let block = &block[..block.find("\n```").expect("its end")];
    let mut app = live_host(100, 30, 1, Some((4242, "python train.py --epochs 10")));
    send(&mut app, Msg::typed("c2").collect::<Vec<_>>());
    let drawn = screen(&app, 100, 30);
    let lines = |s: &str| {
        s.lines()
            .map(str::trim_end)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(block), lines(drawn.trim_end_matches('\n')), "{drawn}");
}

/// The live screen at every small size (and with 8 GPUs, a monitored process, the
/// table focused, the overview toggled): nothing panics.
#[test]
fn live_small_sizes_do_not_panic() {
    for (w, h) in [
        (40, 10),
        (41, 11),
        (50, 12),
        (60, 15),
        (79, 23),
        (300, 8),
        (40, 120),
    ] {
        for gpus in [0, 8] {
            let mut app = live_host(w, h, gpus, TRAIN);
            send(&mut app, [Msg::key(KeyCode::Tab), Msg::key(KeyCode::Tab)]);
            send(&mut app, [Msg::key(KeyCode::End), Msg::char('[')]);
            for (fw, fh) in [(w, h), (1, 1), (0, 0), (39, 9)] {
                let mut t = Terminal::new(TestBackend::new(fw, fh)).unwrap();
                t.draw(|f| render::render(f, &app)).unwrap();
            }
        }
    }
}

use leet::source::sampler::nvidia::GpmValues;
use leet::source::sampler::{
    ClockKind, Collector as _, GpuBackend, GpuDevice, GpuError, GpuProcess, NvidiaCollector,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Eight H100s behind NVML's interface, their readings a function of the sample
/// number `tick` (what `live_monitor_with_eight_gpus` reads through the collector).
struct FakeGpus {
    tick: Arc<AtomicU32>,
}

struct FakeGpu {
    index: u32,
    tick: u32,
}

impl GpuDevice for FakeGpu {
    fn name(&self) -> Result<String, GpuError> {
        Ok("NVIDIA H100 80GB HBM3".to_owned())
    }
    fn utilization(&self) -> Result<(u32, u32), GpuError> {
        let busy = self.tick % 20 < 10;
        Ok((
            if busy {
                87 - self.index
            } else {
                5 + self.index
            },
            41,
        ))
    }
    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        Ok((u64::from(20 + self.index) << 30, 80 << 30))
    }
    fn temperature(&self) -> Result<u32, GpuError> {
        Ok(50 + self.tick / 3 + self.index)
    }
    fn power_usage_mw(&self) -> Result<u32, GpuError> {
        Ok(312_345 + 10_000 * self.index)
    }
    fn enforced_power_limit_mw(&self) -> Result<u32, GpuError> {
        Ok(700_000)
    }
    fn clock_mhz(&self, kind: ClockKind) -> Result<u32, GpuError> {
        Ok(match kind {
            ClockKind::Memory => 2619,
            _ => 1980,
        })
    }
    fn ecc_errors(&self, _corrected: bool) -> Result<u64, GpuError> {
        Ok(0)
    }
    fn fan_speed(&self) -> Result<u32, GpuError> {
        Err(GpuError("Not Supported".to_owned()))
    }
    fn encoder_utilization(&self) -> Result<u32, GpuError> {
        Ok(0)
    }
    fn energy_mj(&self) -> Result<u64, GpuError> {
        Ok(1_000_000 * u64::from(self.tick + 1))
    }
    fn processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        Ok(Vec::new())
    }
}

impl GpuBackend for FakeGpus {
    fn device_count(&self) -> u32 {
        8
    }
    fn device(&self, index: u32) -> Result<Box<dyn GpuDevice + '_>, GpuError> {
        Ok(Box::new(FakeGpu {
            index,
            tick: self.tick.load(Ordering::Relaxed),
        }))
    }
    fn driver_version(&self) -> Option<String> {
        Some("550.54.15".to_owned())
    }
    fn gpm(&self, _index: u32) -> Result<Option<GpmValues>, GpuError> {
        Err(GpuError("Not Supported".to_owned()))
    }
}

/// A 0-byte `.wandb` file (a run that has not written its first record) just
/// written: empty, waiting, never "crashed?", and no blank ID row; one that has
/// not changed for an hour says so (the process that made it wrote nothing
/// more), still not a run quiet or crashed.
#[test]
fn an_empty_run_file_is_waiting_for_its_first_record() {
    for (w, h) in SIZES {
        let mut app = App::new(no_color());
        app.update(Msg::Resize(w, h));
        app.update(Msg::Opened {
            path: std::path::PathBuf::from("wandb/run-20261130_175119-new/run-new.wandb"),
            len: 0,
            modified: Some(NOW - 5.0),
        });
        app.update(Msg::Tick(NOW));
        let s = screen(&app, w, h);
        assert!(!s.contains("crashed") && !s.contains("quiet"), "{s}");
        let status = s.lines().nth(usize::from(h) - 1).unwrap();
        assert!(
            status.contains("empty: waiting for the first record"),
            "{s}"
        );
        let left = left_pane(&s);
        assert!(left[1].starts_with(" State   empty"), "{s}");
        assert!(!left.iter().any(|l| l.trim() == "ID"), "{s}");
        insta::assert_snapshot!(format!("empty_file_{w}x{h}"), s);
    }
    // A file of the W&B header alone holds no record either: empty too, not a
    // run quiet for an hour; an hour without a byte is said.
    for (age, want) in [
        (5.0, "empty: waiting for the first record"),
        (3600.0, "empty: nothing written for 1h 00m"),
    ] {
        let mut app = App::new(no_color());
        app.update(Msg::Resize(120, 40));
        app.update(Msg::Opened {
            path: std::path::PathBuf::from("wandb/run-20261130_175119-new/run-new.wandb"),
            len: leet::decode::leveldb::FILE_HEADER.len() as u64,
            modified: Some(NOW - age),
        });
        // The header read: nothing after it.
        let header = leet::decode::leveldb::FILE_HEADER.len() as u64;
        app.update(Msg::Run(leet::msg::RunBatch {
            read_to: header,
            file_len: header,
            ..Default::default()
        }));
        app.update(Msg::Tick(NOW));
        let s = screen(&app, 120, 40);
        assert!(!s.contains("quiet") && !s.contains("crashed"), "{s}");
        assert!(s.contains(want), "{s}");
    }
    // Nor does the header and the first bytes of a record never finished, nor
    // 64 KiB of zeros (damage, said by the status bar's warning): empty as
    // `inspect --summary` says, not crashed.
    let header = leet::decode::leveldb::FILE_HEADER.len() as u64;
    let zeros = leveldb_skip(0, 65_536);
    for (len, skip, pending) in [(header + 3, None, 3), (65_536, Some(zeros), 0)] {
        let mut app = App::new(no_color());
        app.update(Msg::Resize(120, 40));
        app.update(Msg::Opened {
            path: std::path::PathBuf::from("wandb/run-20261130_175119-new/run-new.wandb"),
            len,
            modified: Some(NOW - 3600.0),
        });
        app.update(Msg::Run(leet::msg::RunBatch {
            read_to: len,
            file_len: len,
            skips: skip.into_iter().collect(),
            pending,
            ..Default::default()
        }));
        app.update(Msg::Tick(NOW));
        let s = screen(&app, 120, 40);
        assert!(!s.contains("quiet") && !s.contains("crashed"), "{s}");
        assert!(s.contains("empty: nothing written for 1h 00m"), "{s}");
        if skip.is_some() {
            assert!(s.contains("1 corrupt span(s)"), "{s}");
        }
    }
}

fn leveldb_skip(offset: u64, len: u64) -> leet::decode::leveldb::Skip {
    leet::decode::leveldb::Skip {
        offset,
        len,
        reason: leet::decode::leveldb::SkipReason::ZeroFilled,
    }
}

/// A run directory with no `.wandb` file yet: nothing is known of the run, so
/// neither the overview nor the status bar says it is running.
#[test]
fn a_run_directory_without_its_file_says_no_file_yet_not_running() {
    for (w, h) in SIZES {
        let mut app = App::new(no_color());
        app.update(Msg::Resize(w, h));
        app.update(Msg::Waiting(std::path::PathBuf::from(
            "wandb/offline-run-20261130_175119-new",
        )));
        app.update(Msg::Tick(NOW));
        let s = screen(&app, w, h);
        assert!(!s.contains("running") && !s.contains('●'), "{s}");
        let status = s.lines().nth(usize::from(h) - 1).unwrap();
        assert!(status.starts_with(" no file yet "), "{s}");
        assert!(status.contains("waiting for a .wandb file"), "{s}");
        let left = left_pane(&s);
        assert!(left[1].starts_with(" State   no file yet"), "{s}");
        assert!(!left.iter().any(|l| l.trim() == "ID"), "{s}");
        insta::assert_snapshot!(format!("no_file_yet_{w}x{h}"), s);
    }
}

/// The grid's header never cuts the page count it ends with: where the filter
/// and the charts' count leave it no room, they give way (a cut `page 2/103`
/// read `page 2/1`).
#[test]
fn the_grid_header_keeps_its_page_count_whole() {
    for w in 60..=120 {
        let mut app = app_from("many_metrics", w, 24);
        send(
            &mut app,
            std::iter::once(Msg::char('/'))
                .chain(Msg::typed("."))
                .chain([Msg::key(KeyCode::Enter), Msg::char('n')]),
        );
        let pages = app.charts.grid.pages(app.charts.shown.len());
        assert!(pages > 9, "{pages} pages at {w}");
        let s = screen(&app, w, 24);
        let head = s.lines().find(|l| l.contains("Metrics [")).unwrap();
        assert!(
            head.trim_end()
                .trim_end_matches('│')
                .trim_end()
                .ends_with(&format!("page 2/{pages}")),
            "{w}: {head}"
        );
    }
}

/// The smallest live screens draw one chart with a plot (the header cut to fit,
/// the process table left for a taller screen), not an empty chart box.
#[test]
fn live_smallest_screens_draw_a_chart_with_a_plot() {
    for (w, h) in [(40, 10), (40, 12), (40, 13), (40, 14), (60, 16)] {
        let s = screen(&live_app(w, h), w, h);
        let plot = s
            .lines()
            .filter(|l| l.starts_with('┃') && l.contains('│') && l.contains(['⠉', '⣀']))
            .count();
        assert!(plot >= 2, "{w}x{h}: {plot} plot rows\n{s}");
        assert!(s.contains("└18:22:20"), "{w}x{h}: no time axis\n{s}");
        assert!(s.contains("testhost"), "{w}x{h}: no facts line\n{s}");
    }
    insta::assert_snapshot!("live_40x12", screen(&live_app(40, 12), 40, 12));
}

/// Below the minimum the screen says its size and the minimum it needs (from
/// the layout's own constants), on one line where there is only one.
#[test]
fn a_too_small_terminal_says_the_minimum() {
    let min = format!(
        "needs at least {}×{}",
        leet::ui::layout::MIN_W,
        leet::ui::layout::MIN_H
    );
    let app = live_app(39, 12);
    let s = screen(&app, 39, 12);
    assert!(s.contains("terminal too small: 39×12,"), "{s}");
    assert!(s.contains(&min), "{s}");
    let s = screen(&app, 80, 1);
    assert!(
        s.contains("terminal too small: 80×1, needs at least"),
        "{s}"
    );
    let s = screen(&app, 20, 3);
    assert!(s.contains("terminal too small:…"), "{s}");
}

/// A run that called `wandb.mark_preempting()` (a `preempting` record) and then
/// stopped writing with no exit record: `preempted?`, not `crashed?`; while it
/// still writes, running and marked preempting.
#[test]
fn a_run_marked_preempting_that_goes_quiet_reads_preempted() {
    use leet::decode::pb;
    use prost::Message as _;
    let rec = |num, t| {
        pb::Record {
            num,
            record_type: Some(t),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let payloads = [
        rec(
            1,
            pb::record::RecordType::Run(pb::RunRecord {
                run_id: "pre1".into(),
                ..Default::default()
            }),
        ),
        rec(
            2,
            pb::record::RecordType::Preempting(pb::RunPreemptingRecord::default()),
        ),
    ];
    for (age, want) in [
        (3600.0, "preempted? (marked preempting, quiet 1h 00m)"),
        (1.0, "running ● · preempting"),
    ] {
        let mut app = App::new(no_color());
        app.update(Msg::Resize(120, 40));
        app.update(Msg::Opened {
            path: std::path::PathBuf::from("wandb/run-20261130_175119-pre1/run-pre1.wandb"),
            len: 1000,
            modified: Some(NOW - age),
        });
        let batch = leet::msg::RunBatch {
            records: payloads
                .iter()
                .enumerate()
                .map(|(i, p)| (i as u64 * 100, p.clone()))
                .collect(),
            read_to: 1000,
            file_len: 1000,
            ..Default::default()
        };
        app.update(Msg::Run(batch));
        app.update(Msg::Tick(NOW));
        let s = screen(&app, 120, 40);
        assert!(s.contains(want) && !s.contains("crashed"), "{s}");
    }
}
