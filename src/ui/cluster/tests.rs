//! The cluster screen's view-model from a hand-made refresh: sort orders, down and
//! stale hosts, the host filter, selection, the heatmap's rows, a host opened.

use ratatui::layout::Rect;
use std::time::Duration;

use super::*;
use crate::msg::cluster::{Batch, Exporter, HostSeries, HostUp};
use crate::msg::Msg;
use crate::ui::{host, App, Options, Overlay};

const END: f64 = 1_000_000.0;

fn s(host: &str, key: &str, v: f64) -> HostSeries {
    HostSeries {
        host: host.into(),
        instance: format!("{host}:9837"),
        exporter: Exporter::Leet,
        key: key.into(),
        points: vec![(END - 15.0, v), (END, v)],
        since_first: false,
    }
}

/// Three hosts: `a` busy, `b` with an idle GPU, `c` down; `d` read long ago.
fn update() -> ClusterUpdate {
    let series = vec![
        // The host's CPU is its cores'; `cpu` is `leet serve`'s own process's.
        s("a", "cpu", 5.0),
        s("a", "cpu.0.cpu_percent", 80.0),
        s("a", "cpu.1.cpu_percent", 100.0),
        s("a", "memory_percent", 40.0),
        s("a", "gpu.0.gpu", 100.0),
        s("a", "gpu.1.gpu", 80.0),
        s("a", "gpu.0.powerWatts", 300.0),
        s("b", "cpu.0.cpu_percent", 20.0),
        s("b", "memory_percent", 70.0),
        s("b", "gpu.0.gpu", 0.0),
        s("b", "gpu.1.gpu", 60.0),
        s("c", "cpu.0.cpu_percent", 50.0),
    ];
    let up = [("a", true), ("b", true), ("c", false)]
        .iter()
        .map(|(h, u)| HostUp {
            host: (*h).into(),
            instance: format!("{h}:9837"),
            job: "leet".into(),
            points: vec![(END, *u)],
        })
        .collect();
    ClusterUpdate::Fetched(Box::new(Batch {
        start: END - 60.0,
        end: END,
        step: Duration::from_secs(15),
        series,
        up,
        refused: vec![],
    }))
}

fn screen() -> ClusterScreen {
    let mut c = ClusterScreen::new("http://prom:9090", Duration::from_secs(300));
    c.apply(ClusterUpdate::Started {
        server: "http://prom:9090".into(),
        step: Duration::from_secs(15),
        interval: Duration::from_secs(15),
        window: Duration::from_secs(300),
    });
    c.apply(update());
    c.now = END + 1.0;
    c
}

fn hosts(c: &ClusterScreen) -> Vec<String> {
    c.rows().into_iter().map(|r| r.host).collect()
}

#[test]
fn rows_sort_by_each_column_missing_values_last_and_reverse() {
    let mut c = screen();
    let mut none = None;
    assert_eq!(hosts(&c), ["a", "b", "c"]);
    let mut orders = Vec::new();
    for _ in 0..SortBy::ALL.len() {
        c.act(
            Action::CycleProcessSort,
            &mut none,
            Rect::new(0, 0, 120, 40),
        );
        orders.push((c.sort, hosts(&c)));
    }
    let want = [
        (SortBy::State, ["c", "a", "b"]),
        (SortBy::Cpu, ["a", "c", "b"]),
        (SortBy::Memory, ["b", "a", "c"]),
        (SortBy::GpuMean, ["a", "b", "c"]),
        // Lowest first: the idle GPU on top.
        (SortBy::GpuMin, ["b", "a", "c"]),
        (SortBy::GpuMemory, ["a", "b", "c"]),
        (SortBy::Power, ["a", "b", "c"]),
        (SortBy::Host, ["a", "b", "c"]),
    ];
    for ((sort, got), (ws, wh)) in orders.iter().zip(want) {
        assert_eq!(
            (*sort, got.as_slice()),
            (ws, wh.map(String::from).as_slice())
        );
    }
    c.act(Action::ReverseSort, &mut none, Rect::new(0, 0, 120, 40));
    assert_eq!(hosts(&c), ["c", "b", "a"]);
}

#[test]
fn a_down_host_and_a_stale_one_are_told_apart() {
    let mut c = screen();
    let state =
        |c: &ClusterScreen, h: &str| c.rows().into_iter().find(|r| r.host == h).map(|r| r.state);
    assert_eq!(state(&c, "a"), Some(HostState::Up));
    assert_eq!(state(&c, "c"), Some(HostState::Down));
    // Four intervals on without a newer sample: the up hosts are stale, the down
    // one stays down.
    c.now = END + 60.0;
    assert_eq!(state(&c, "a"), Some(HostState::Stale));
    assert_eq!(state(&c, "c"), Some(HostState::Down));
    let r = c.rows().into_iter().find(|r| r.host == "b").expect("b");
    assert_eq!((r.gpus, r.gpu_min, r.gpu_mean), (2, Some(0.0), Some(30.0)));
}

#[test]
fn the_selection_follows_its_host_and_the_filter_chooses_hosts() {
    let mut c = screen();
    let mut typing = None;
    c.act(Action::FocusDown, &mut typing, Rect::new(0, 0, 120, 40));
    assert_eq!(c.selected.as_deref(), Some("b"));
    // Sorted by state, b stays selected where it moved.
    c.act(
        Action::CycleProcessSort,
        &mut typing,
        Rect::new(0, 0, 120, 40),
    );
    assert_eq!(c.selected_index(&c.rows()), Some(2));
    c.act(Action::LastPage, &mut typing, Rect::new(0, 0, 120, 40));
    c.act(Action::FocusDown, &mut typing, Rect::new(0, 0, 120, 40));
    assert_eq!(c.selected.as_deref(), Some("b"));
    assert_eq!(
        c.act(Action::OpenHost, &mut typing, Rect::new(0, 0, 120, 40)),
        Outcome::Open("b".into())
    );
    assert_eq!(
        c.act(Action::StartFilter, &mut typing, Rect::new(0, 0, 120, 40)),
        Outcome::Stay(Effect::REDRAW)
    );
    assert_eq!(typing, Some(FilterTarget::Hosts));
    for ch in "^[ab]$".chars() {
        c.filter.push(ch);
    }
    assert_eq!(hosts(&c), ["a", "b"].map(String::from));
    c.act(Action::ClearFilters, &mut typing, Rect::new(0, 0, 120, 40));
    assert_eq!(hosts(&c).len(), 3);
    assert_eq!(
        c.act(Action::Quit, &mut typing, Rect::new(0, 0, 120, 40)),
        Outcome::Pass
    );
}

#[test]
fn the_heatmap_has_a_row_per_gpu_in_the_tables_order() {
    let mut c = screen();
    let mut none = None;
    // GPU min: b (an idle GPU) first.
    for _ in 0..5 {
        c.act(
            Action::CycleProcessSort,
            &mut none,
            Rect::new(0, 0, 120, 40),
        );
    }
    assert_eq!(c.sort, SortBy::GpuMin);
    let rows = view::heat_rows(&c, &c.rows(), 10, 0..usize::MAX);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["b:0", "b:1", "a:0", "a:1"]);
    assert_eq!(rows[0].1.last().copied().flatten(), Some(0.0));
    assert_eq!(rows[2].1.last().copied().flatten(), Some(100.0));
    // A frame computes the cells of the hosts whose rows it draws alone; the
    // others are labels (the heatmap counts them).
    let drawn = view::heat_rows(&c, &c.rows(), 10, 1..2);
    let cells: Vec<usize> = drawn.iter().map(|(_, cells)| cells.len()).collect();
    assert_eq!(cells, [10, 10, 0, 0], "{drawn:?}");
    let labels: Vec<&str> = drawn.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["b:0", "b:1", "a:0", "a:1"]);
}

fn cluster_app() -> App {
    let mut app = App::live(Options::default(), 300.0);
    app.open_cluster("http://prom:9090", Duration::from_secs(300));
    app.update(Msg::Resize(120, 40));
    app.update(Msg::Tick(END + 1.0));
    app.update(Msg::Cluster(Box::new(update())));
    app
}

#[test]
fn enter_opens_a_hosts_live_screen_and_esc_comes_back() {
    let mut app = cluster_app();
    assert!(matches!(app.overlay, Overlay::Cluster));
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert!(matches!(app.overlay, Overlay::None));
    let c = app.host.cluster.as_deref().expect("cluster");
    assert_eq!(c.opened.as_deref(), Some("a"));
    assert_eq!(app.shown.run.info.host, "a");
    let cpu = app
        .shown
        .run
        .system
        .get("gpu.1.gpu")
        .expect("the host's series");
    assert_eq!(cpu.last(), Some((END, 80.0)));
    app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(matches!(app.overlay, Overlay::Cluster));
    assert_eq!(
        app.host.cluster.as_deref().and_then(|c| c.opened.clone()),
        None
    );
    // The help opened over the screen closes back to it.
    app.update(Msg::char('h'));
    assert!(matches!(app.overlay, Overlay::Help { .. }));
    app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(matches!(app.overlay, Overlay::Cluster));
}

#[test]
fn a_failing_server_keeps_what_was_read_and_says_so() {
    use crate::msg::cluster::{HttpError, PromError};
    let mut app = cluster_app();
    app.update(Msg::Cluster(Box::new(ClusterUpdate::Failed {
        error: PromError::Http(HttpError::Refused {
            server: "http://prom:9090".into(),
        }),
        at: END + 5.0,
    })));
    let c = app.host.cluster.as_deref().expect("cluster");
    assert_eq!(c.rows().len(), 3);
    assert!(c.model.error().is_some());
    // Typing `/` filters hosts, not charts.
    app.update(Msg::char('/'));
    app.update(Msg::char('b'));
    let c = app.host.cluster.as_deref().expect("cluster");
    assert_eq!(hosts(c), ["b"]);
    assert!(app.charts.filter.draft.is_empty());
}

#[test]
fn host_names_sort_with_their_numbers_as_numbers() {
    let mut c = ClusterScreen::new("http://prom:9090", Duration::from_secs(300));
    let names = ["node-10", "node-2", "node-1", "gpu-box"];
    let up = names
        .iter()
        .map(|h| HostUp {
            host: (*h).into(),
            instance: format!("{h}:9837"),
            job: "leet".into(),
            points: vec![(END, true)],
        })
        .collect();
    c.apply(ClusterUpdate::Fetched(Box::new(Batch {
        start: END - 60.0,
        end: END,
        step: Duration::from_secs(15),
        series: names
            .iter()
            .map(|h| s(h, "cpu.0.cpu_percent", 10.0))
            .collect(),
        up,
        refused: vec![],
    })));
    c.now = END + 1.0;
    assert_eq!(hosts(&c), ["gpu-box", "node-1", "node-2", "node-10"]);
}

/// The overview's reading of `key` (a `Metric` row).
fn overview_value(app: &App, key: &str) -> Option<f64> {
    app.panes.overview.rows.iter().find_map(|r| match r {
        crate::ui::Row::Metric(k, v) if k == key => Some(*v),
        _ => None,
    })
}

#[test]
fn a_host_opened_has_its_overview_follow_each_refresh() {
    let mut app = cluster_app();
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert_eq!(overview_value(&app, "cpu"), Some(5.0));
    for (n, load) in [(1.0, 0.81), (2.0, 0.17)] {
        let t = END + 15.0 * n;
        app.update(Msg::Cluster(Box::new(ClusterUpdate::Fetched(Box::new(
            Batch {
                start: t - 15.0,
                end: t,
                step: Duration::from_secs(15),
                series: vec![HostSeries {
                    points: vec![(t, load)],
                    ..s("a", "load.1m", load)
                }],
                up: vec![],
                refused: vec![],
            },
        )))));
        // The overview says what the header says: the newest reading.
        assert_eq!(app.host.header.load[0], Some(load));
        assert_eq!(overview_value(&app, "load.1m"), Some(load));
    }
}

#[test]
fn a_host_opened_has_no_process_table_and_its_keys_act_on_nothing() {
    let mut app = cluster_app();
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    let _ = app.take_cmds();
    // Prometheus holds no processes: no table waiting for a scan, its room the
    // charts'.
    let areas = app.screen.areas;
    assert_eq!(areas.procs, None);
    let header = areas.header.map_or(0, |h| h.height);
    assert_eq!(areas.grid.height, areas.body.height - header);
    let sort = app.host.procs.sort;
    for c in ['S', 'm', 'u', 'f'] {
        app.shown.source.error = None;
        app.update(Msg::char(c));
        // Each says why it does nothing, for a while.
        let said = app.shown.source.error.as_deref();
        assert_eq!(said, Some(host::procs::NONE_ON_CLUSTER), "{c}");
    }
    assert_eq!(app.host.procs.sort, sort);
    assert_eq!(app.filter_target, None);
    assert!(app.take_cmds().is_empty());
    for t in 0..=crate::msg::SAMPLER_ERROR_TICKS {
        app.update(Msg::Tick(END + 2.0 + f64::from(t)));
    }
    assert_eq!(app.shown.source.error, None);
    // The local monitor keeps its table.
    let mut local = App::live(Options::default(), 300.0);
    local.update(Msg::Resize(120, 40));
    assert!(local.screen.areas.procs.is_some());
}
