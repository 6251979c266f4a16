//! The model from hand-made refreshes: overlap dropped, leet's series preferred,
//! states, the header row, the heatmap, a failure that keeps what was read.

use super::*;
use crate::source::http::HttpError;
use crate::source::prometheus::fetch::HostUp;
use crate::source::prometheus::PromError;

fn s(host: &str, exporter: Exporter, key: &str, points: &[(f64, f64)]) -> HostSeries {
    HostSeries {
        host: host.into(),
        instance: format!("{host}:{}", exporter as u8),
        exporter,
        key: key.into(),
        points: points.to_vec(),
        since_first: key == "disk.in",
    }
}

fn batch(end: f64, series: Vec<HostSeries>, up: &[(&str, bool)]) -> ClusterUpdate {
    ClusterUpdate::Fetched(Box::new(Batch {
        start: end - 60.0,
        end,
        step: Duration::from_secs(15),
        series,
        up: up
            .iter()
            .map(|(h, u)| HostUp {
                host: (*h).into(),
                instance: (*h).into(),
                job: "leet".into(),
                points: vec![(end, *u)],
            })
            .collect(),
        refused: vec![],
    }))
}

fn model() -> ClusterModel {
    let mut m = ClusterModel::new(Duration::from_secs(60));
    m.apply(ClusterUpdate::Started {
        server: "http://prom".into(),
        step: Duration::from_secs(15),
        interval: Duration::from_secs(15),
        window: Duration::from_secs(60),
    });
    m
}

#[test]
fn refreshes_overlap_by_a_step_and_are_deduplicated() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![s(
            "a",
            Exporter::Node,
            "cpu",
            &[(0.0, 1.0), (15.0, 2.0), (30.0, 3.0)],
        )],
        &[("a", true)],
    ));
    m.apply(batch(
        45.0,
        vec![s("a", Exporter::Node, "cpu", &[(30.0, 9.0), (45.0, 4.0)])],
        &[("a", true)],
    ));
    let pts = m
        .host("a")
        .and_then(|h| h.series("cpu"))
        .expect("cpu")
        .points()
        .to_vec();
    assert_eq!(pts, [(0.0, 1.0), (15.0, 2.0), (30.0, 3.0), (45.0, 4.0)]);
    assert_eq!(m.last_ok(), Some(45.0));
}

#[test]
fn leet_serve_s_keys_win_and_other_exporters_give_the_rest() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![
            s("a", Exporter::Node, "cpu.0.cpu_percent", &[(30.0, 50.0)]),
            s("a", Exporter::Node, "load.1m", &[(30.0, 2.0)]),
            s("b", Exporter::Node, "cpu.0.cpu_percent", &[(30.0, 70.0)]),
            s("b", Exporter::Dcgm, "gpu.0.gpu", &[(30.0, 80.0)]),
        ],
        &[],
    ));
    // `leet serve` added to both hosts later: `a`'s with a GPU of its own (the
    // same GPU dcgm-exporter sees), `b`'s with none.
    m.apply(batch(
        45.0,
        vec![
            s("a", Exporter::Leet, "cpu.0.cpu_percent", &[(45.0, 60.0)]),
            s("a", Exporter::Leet, "gpu.0.gpu", &[(45.0, 10.0)]),
            s("a", Exporter::Node, "cpu.0.cpu_percent", &[(45.0, 55.0)]),
            s("a", Exporter::Dcgm, "gpu.0.gpu", &[(45.0, 11.0)]),
            s("a", Exporter::Node, "load.1m", &[(45.0, 3.0)]),
            s("b", Exporter::Leet, "cpu.0.cpu_percent", &[(45.0, 75.0)]),
            s("b", Exporter::Node, "cpu.0.cpu_percent", &[(45.0, 71.0)]),
            s("b", Exporter::Dcgm, "gpu.0.gpu", &[(45.0, 85.0)]),
        ],
        &[],
    ));
    let a = m.host("a").expect("a");
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        ["cpu.0.cpu_percent", "gpu.0.gpu", "load.1m"]
    );
    let last = |h: &str, k: &str| m.host(h)?.series(k)?.last().map(|p| p.1);
    // Each key once: `leet serve`'s value, never a second GPU from dcgm-exporter.
    assert_eq!(last("a", "cpu.0.cpu_percent"), Some(60.0));
    assert_eq!(last("a", "gpu.0.gpu"), Some(10.0));
    assert_eq!(last("a", "load.1m"), Some(3.0));
    let rows = m.header(45.0);
    assert_eq!((rows[0].gpus, rows[0].cpu), (1, Some(60.0)));
    // `b`'s GPU is dcgm-exporter's: `leet serve` there has none.
    assert_eq!(last("b", "gpu.0.gpu"), Some(85.0));
    assert_eq!(last("b", "cpu.0.cpu_percent"), Some(75.0));
    assert_eq!((rows[1].gpus, rows[1].gpu_mean), (1, Some(85.0)));
}

#[test]
fn a_host_s_cpu_is_the_mean_of_its_cores_not_a_process_s() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![
            // `leet serve`'s own process, idle, on a host busy on both cores.
            s("a", Exporter::Leet, "cpu", &[(30.0, 0.0)]),
            s("a", Exporter::Leet, "cpu.0.cpu_percent", &[(30.0, 100.0)]),
            s("a", Exporter::Leet, "cpu.1.cpu_percent", &[(30.0, 90.0)]),
            s("a", Exporter::Leet, "cpu.0.cpu_percent_x", &[(30.0, 7.0)]),
        ],
        &[("a", true)],
    ));
    assert_eq!(m.header(30.0)[0].cpu, Some(95.0));
}

#[test]
fn a_family_its_exporter_stopped_giving_is_not_shown_as_current() {
    let mut m = model();
    let at = |t: f64| {
        vec![
            s("a", Exporter::Leet, "memory_percent", &[(t, 40.0)]),
            s("a", Exporter::Leet, "gpu.0.gpu", &[(t, 90.0)]),
            s("a", Exporter::Leet, "gpu.1.gpu", &[(t, 70.0)]),
            s("a", Exporter::Leet, "gpu.0.powerWatts", &[(t, 300.0)]),
        ]
    };
    m.apply(batch(30.0, at(30.0), &[("a", true)]));
    let row = &m.header(30.0)[0];
    assert_eq!((row.gpus, row.gpus_stale, row.gpu_mean), (2, 0, Some(80.0)));
    // The GPU driver hangs: `leet serve` drops every GPU series, the rest go on
    // and the target stays up.
    for t in [45.0, 60.0, 75.0, 90.0, 105.0, 120.0] {
        let mut only = at(t);
        only.truncate(if t > 60.0 { 1 } else { 2 });
        m.apply(batch(t, only, &[("a", true)]));
    }
    let row = &m.header(120.0)[0];
    assert_eq!(row.state, HostState::Up);
    assert_eq!(row.memory, Some(40.0));
    assert_eq!(
        (
            row.gpus,
            row.gpus_stale,
            row.gpu_mean,
            row.gpu_min,
            row.power
        ),
        (2, 2, None, None, None)
    );
    let a = m.host("a").expect("a");
    let every = Duration::from_secs(15);
    assert!(a.is_current("memory_percent", every));
    assert!(!a.is_current("gpu.0.gpu", every));
    assert_eq!(
        a.behind(every),
        [
            ("gpu.0.gpu", 60.0),
            ("gpu.0.powerWatts", 30.0),
            ("gpu.1.gpu", 30.0)
        ]
    );
}

/// `leet serve --pid`'s process ends (the job finished): its keys stop while the
/// host's go on. That is no family the exporter stopped giving: the host is not
/// `up*` with `cpu: no sample since …` beside a current CPU.
#[test]
fn the_end_of_the_monitored_process_is_no_family_behind() {
    let mut m = model();
    let host = |t: f64| {
        vec![
            s("a", Exporter::Leet, "memory_percent", &[(t, 40.0)]),
            s("a", Exporter::Leet, "cpu.0.cpu_percent", &[(t, 50.0)]),
        ]
    };
    let mut first = host(30.0);
    first.push(s("a", Exporter::Leet, "cpu", &[(30.0, 99.0)]));
    first.push(s(
        "a",
        Exporter::Leet,
        "proc.memory.rssMB",
        &[(30.0, 900.0)],
    ));
    first.push(s("a", Exporter::Leet, "gpu.process.0.gpu", &[(30.0, 80.0)]));
    m.apply(batch(30.0, first, &[("a", true)]));
    for t in [45.0, 60.0, 75.0, 90.0, 105.0, 120.0] {
        m.apply(batch(t, host(t), &[("a", true)]));
    }
    let a = m.host("a").expect("a");
    let every = Duration::from_secs(15);
    assert!(!a.is_current("cpu", every));
    assert_eq!(families_behind(a, every), []);
    assert_eq!(m.header(120.0)[0].behind, Vec::<String>::new());
}

#[test]
fn two_targets_of_one_exporter_on_one_host_are_two_rows_and_lose_nothing() {
    let mut m = model();
    let leet = |instance: &str, key: &str, v: f64, t: f64| HostSeries {
        instance: instance.into(),
        ..s("box", Exporter::Leet, key, &[(t, v)])
    };
    // One target first; the second (another `leet serve` on another port, with
    // its own GPU 0) comes later; node-exporter on the same host beside them.
    m.apply(batch(
        30.0,
        vec![
            leet("box:19853", "gpu.0.gpu", 10.0, 30.0),
            leet("box:19853", "gpu.1.gpu", 20.0, 30.0),
            HostSeries {
                instance: "box:9100".into(),
                ..s("box", Exporter::Node, "load.1m", &[(30.0, 1.0)])
            },
        ],
        &[("box", true)],
    ));
    assert_eq!(m.header(30.0).len(), 1);
    m.apply(batch(
        45.0,
        vec![
            leet("box:19853", "gpu.0.gpu", 11.0, 45.0),
            leet("box:19853", "gpu.1.gpu", 21.0, 45.0),
            leet("box:19854", "gpu.0.gpu", 99.0, 45.0),
        ],
        &[],
    ));
    let rows: Vec<(String, usize, Option<f64>)> = (m.header(45.0).into_iter())
        .map(|r| (r.host, r.gpus, r.gpu_mean))
        .collect();
    assert_eq!(
        rows,
        [
            ("box:19853".to_owned(), 2, Some(16.0)),
            ("box:19854".to_owned(), 1, Some(99.0)),
            ("box:9100".to_owned(), 0, None),
        ]
    );
    // What the first target gave before the split stays with it.
    let first = m.host("box:19853").and_then(|h| h.series("gpu.0.gpu"));
    assert_eq!(first.map(|s| s.points().len()), Some(2));
    // Both in one answer from the start: two rows at once.
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![
            leet("10.0.0.1:1", "gpu.0.gpu", 1.0, 30.0),
            leet("10.0.0.1:2", "gpu.0.gpu", 2.0, 30.0),
        ],
        &[],
    ));
    let hosts: Vec<String> = m.header(30.0).into_iter().map(|r| r.host).collect();
    assert_eq!(hosts, ["10.0.0.1:1", "10.0.0.1:2"]);
}

/// Two targets of one job on one host, the second never answering (a `leet
/// serve` on another port not started yet): two rows, the working one up with
/// its values, the other down — not one row `down` holding the first's values.
#[test]
fn a_target_that_never_answered_beside_another_of_its_job_is_a_row_of_its_own() {
    let mut m = model();
    let up = |instance: &str, ok: bool| HostUp {
        host: "box".into(),
        instance: instance.into(),
        job: "leet".into(),
        points: vec![(30.0, ok)],
    };
    let cpu = HostSeries {
        instance: "box:19837".into(),
        ..s("box", Exporter::Leet, "memory_percent", &[(30.0, 42.0)])
    };
    m.apply(ClusterUpdate::Fetched(Box::new(Batch {
        start: -30.0,
        end: 30.0,
        step: Duration::from_secs(15),
        series: vec![cpu],
        up: vec![up("box:19837", true), up("box:19838", false)],
        refused: vec![],
    })));
    let rows: Vec<(String, HostState, Option<f64>)> = (m.header(30.0).into_iter())
        .map(|r| (r.host, r.state, r.memory))
        .collect();
    assert_eq!(
        rows,
        [
            ("box:19837".to_owned(), HostState::Up, Some(42.0)),
            ("box:19838".to_owned(), HostState::Down, None),
        ]
    );
    // Two jobs on one host (node-exporter beside `leet serve`) stay one row, down
    // when either is.
    let mut m = model();
    let mut node = up("box:9100", false);
    node.job = "node".into();
    m.apply(ClusterUpdate::Fetched(Box::new(Batch {
        start: -30.0,
        end: 30.0,
        step: Duration::from_secs(15),
        series: vec![],
        up: vec![up("box:19837", true), node],
        refused: vec![],
    })));
    let rows: Vec<(String, HostState)> = (m.header(30.0).into_iter())
        .map(|r| (r.host, r.state))
        .collect();
    assert_eq!(rows, [("box".to_owned(), HostState::Down)]);
}

#[test]
fn a_failing_streak_is_dated_from_its_first_failure() {
    let mut m = model();
    let fail = |at: f64| ClusterUpdate::Failed {
        error: PromError::Http(HttpError::Refused {
            server: "http://prom".into(),
        }),
        at,
    };
    m.apply(fail(100.0));
    m.apply(fail(102.0));
    m.apply(fail(104.0));
    assert_eq!(m.error().map(|(_, t)| t), Some(100.0));
    m.apply(batch(110.0, vec![], &[]));
    assert_eq!(m.error(), None);
    m.apply(fail(120.0));
    assert_eq!(m.error().map(|(_, t)| t), Some(120.0));
}

#[test]
fn counters_count_from_the_first_point() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![s(
            "a",
            Exporter::Node,
            "disk.in",
            &[(15.0, 100.0), (30.0, 104.0)],
        )],
        &[],
    ));
    let pts = m
        .host("a")
        .and_then(|h| h.series("disk.in"))
        .expect("disk.in")
        .points()
        .to_vec();
    assert_eq!(pts, [(15.0, 0.0), (30.0, 4.0)]);
}

#[test]
fn states_header_and_heatmap() {
    let mut m = model();
    let gpus = |host: &str, u: [f64; 2]| {
        vec![
            s(
                host,
                Exporter::Leet,
                "gpu.0.gpu",
                &[(0.0, u[0]), (30.0, u[0])],
            ),
            s(
                host,
                Exporter::Leet,
                "gpu.1.gpu",
                &[(0.0, u[1]), (30.0, u[1])],
            ),
            s(host, Exporter::Leet, "gpu.0.powerWatts", &[(30.0, 100.0)]),
            s(host, Exporter::Leet, "gpu.1.powerWatts", &[(30.0, 150.0)]),
            s(
                host,
                Exporter::Leet,
                "gpu.0.memoryAllocated",
                &[(30.0, 20.0)],
            ),
            s(
                host,
                Exporter::Leet,
                "gpu.1.memoryAllocated",
                &[(30.0, 40.0)],
            ),
            s(host, Exporter::Leet, "gpu.process.0.gpu", &[(30.0, 1.0)]),
            s(host, Exporter::Leet, "memory_percent", &[(30.0, 33.0)]),
        ]
    };
    let mut all = gpus("a", [90.0, 10.0]);
    all.extend(gpus("b", [50.0, 50.0]));
    m.apply(batch(30.0, all, &[("a", true), ("b", false), ("c", true)]));
    let rows = m.header(40.0);
    assert_eq!(rows.len(), 3);
    let a = &rows[0];
    assert_eq!((a.host.as_str(), a.state, a.gpus), ("a", HostState::Up, 2));
    assert_eq!(
        (a.gpu_mean, a.gpu_min, a.gpu_memory, a.power),
        (Some(50.0), Some(10.0), Some(30.0), Some(250.0))
    );
    assert_eq!((a.memory, a.cpu), (Some(33.0), None));
    assert_eq!(a.gpus_stale, 0);
    assert_eq!(rows[1].state, HostState::Down);
    // c: up, with no series; then nothing newer for longer than three intervals.
    assert_eq!(rows[2].state, HostState::Up);
    assert_eq!(m.header(30.0 + 46.0)[2].state, HostState::Stale);

    let heat = m.heatmap(60.0, 4);
    let cells: Vec<(&str, u32, Vec<Option<f64>>)> = heat
        .iter()
        .map(|r| (r.host.as_str(), r.gpu, r.cells.clone()))
        .collect();
    assert_eq!(
        cells,
        [
            ("a", 0, vec![Some(90.0), None, Some(90.0), None]),
            ("a", 1, vec![Some(10.0), None, Some(10.0), None]),
            ("b", 0, vec![Some(50.0), None, Some(50.0), None]),
            ("b", 1, vec![Some(50.0), None, Some(50.0), None]),
        ]
    );
}

#[test]
fn a_host_is_down_when_any_of_its_exporters_is() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![],
        &[("a", true), ("a", false), ("b", true), ("b", true)],
    ));
    let states: Vec<HostState> = m.header(30.0).iter().map(|r| r.state).collect();
    assert_eq!(states, [HostState::Down, HostState::Up]);
    // A newer answer decides alone.
    m.apply(batch(45.0, vec![], &[("a", true)]));
    assert_eq!(m.header(45.0)[0].state, HostState::Up);
}

#[test]
fn a_failure_keeps_what_was_read_and_says_so() {
    let mut m = model();
    m.apply(batch(
        30.0,
        vec![s("a", Exporter::Node, "cpu.0.cpu_percent", &[(30.0, 5.0)])],
        &[("a", true)],
    ));
    m.apply(ClusterUpdate::Failed {
        error: PromError::Http(HttpError::Refused {
            server: "http://prom".into(),
        }),
        at: 45.0,
    });
    assert_eq!(m.error(), Some(("http://prom: connection refused", 45.0)));
    assert_eq!(m.header(45.0)[0].cpu, Some(5.0));
    m.apply(batch(60.0, vec![], &[("a", true)]));
    assert_eq!(m.error(), None);
}

#[test]
fn hosts_and_keys_are_bounded() {
    let mut m = model();
    let many: Vec<HostSeries> = (0..MAX_HOSTS + 10)
        .map(|i| s(&format!("h{i}"), Exporter::Node, "cpu", &[(30.0, 1.0)]))
        .collect();
    m.apply(batch(30.0, many, &[]));
    assert_eq!(m.hosts().count(), MAX_HOSTS);
    let keys: Vec<HostSeries> = (0..MAX_KEYS + 10)
        .map(|i| s("h0", Exporter::Node, &format!("k{i}"), &[(30.0, 1.0)]))
        .collect();
    m.apply(batch(45.0, keys, &[]));
    assert_eq!(m.host("h0").expect("h0").keys().count(), MAX_KEYS);
}

/// A host exporting thousands of series, in the order Prometheus answers them (by
/// name: `leet_uptime_seconds` after every GPU's): every one is kept.
#[test]
fn a_host_with_thousands_of_series_keeps_every_one() {
    let mut m = model();
    let mut series: Vec<HostSeries> = (0..8)
        .flat_map(|gpu| (0..350).map(move |f| format!("gpu.{gpu}.field{f}")))
        .chain(["load.1m", "proc.memory.availableMB", "uptime"].map(String::from))
        .map(|k| s("gpu-box", Exporter::Leet, &k, &[(30.0, 7.0)]))
        .collect();
    series.push(s("plain", Exporter::Leet, "uptime", &[(30.0, 9.0)]));
    m.apply(batch(30.0, series, &[]));
    let h = m.host("gpu-box").expect("gpu-box");
    assert_eq!(h.keys().count(), 8 * 350 + 3);
    for key in [
        "uptime",
        "load.1m",
        "proc.memory.availableMB",
        "gpu.7.field349",
    ] {
        assert_eq!(
            h.series(key).and_then(Series::last).map(|p| p.1),
            Some(7.0),
            "{key}"
        );
    }
    assert_eq!(
        m.host("plain")
            .and_then(|h| h.series("uptime").and_then(Series::last).map(|p| p.1)),
        Some(9.0)
    );
}

/// Past the cap, the host's devices' keys give way, not its own readings.
#[test]
fn a_host_past_the_cap_keeps_its_own_readings() {
    let mut m = model();
    let series: Vec<HostSeries> = (0..MAX_KEYS)
        .map(|i| format!("gpu.{}.f{}", i / 100, i % 100))
        .chain(["swap.total", "uptime", "disk./.usagePercent"].map(String::from))
        .map(|k| s("h", Exporter::Leet, &k, &[(30.0, 1.0)]))
        .collect();
    m.apply(batch(30.0, series, &[]));
    let h = m.host("h").expect("h");
    assert_eq!(h.keys().count(), MAX_KEYS);
    for key in ["swap.total", "uptime", "disk./.usagePercent"] {
        assert_eq!(
            h.series(key).and_then(Series::last).map(|p| p.1),
            Some(1.0),
            "{key}"
        );
    }
}

#[test]
fn a_series_holds_a_bounded_number_of_points_however_long_it_is_refreshed() {
    // An hour at a 1 s step, refreshed for two hours, 10 hosts of 8 GPUs: the
    // rings hold at most the driver's bound, and the model's bytes stay a
    // constant per series, not a function of the refreshes or the window.
    let (window, step) = (Duration::from_secs(3600), Duration::from_secs(1));
    let mut m = ClusterModel::new(window);
    m.apply(ClusterUpdate::Started {
        server: "http://prom".into(),
        step,
        interval: step,
        window,
    });
    let per_series = (MAX_POINTS + 4) * 16 + 512;
    let mut t = 0.0;
    for refresh in 0..720 {
        let points: Vec<(f64, f64)> = (0..10).map(|i| (t + f64::from(i), 50.0)).collect();
        t += 10.0;
        let series = (0..10)
            .flat_map(|h| {
                let points = points.clone();
                (0..8).map(move |g| {
                    s(
                        &format!("h{h}"),
                        Exporter::Dcgm,
                        &format!("gpu.{g}.gpu"),
                        &points,
                    )
                })
            })
            .collect();
        m.apply(batch(t, series, &[]));
        if refresh % 60 == 59 {
            assert!(m.bytes() <= 80 * per_series, "{} bytes", m.bytes());
        }
    }
    for (_, h) in m.hosts() {
        for key in h.keys() {
            let points = h.series(key).expect("series");
            assert!(
                points.stored() <= m.capacity(),
                "{key}: {}",
                points.stored()
            );
            assert!(
                points.allocated() <= MAX_POINTS + 4,
                "{key}: {}",
                points.allocated()
            );
        }
    }
    assert_eq!(m.capacity(), MAX_POINTS + 4);
}
