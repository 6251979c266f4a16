//! The cluster screen (`leet --live --prometheus URL`) drawn from a fixed refresh
//! (no server, no clock): hosts up, down and stale, sorted, filtered, a server that
//! fails, the help over it, more hosts than colours, and tiny areas.

use std::time::Duration;

use crate::common;

use common::screen::{screen, NOW, SIZES};
use crossterm::event::KeyCode;
use leet::msg::cluster::{
    Batch, ClusterUpdate, Exporter, HostSeries, HostUp, HttpError, PromError,
};
use leet::msg::Msg;
use leet::ui::{App, Options};

const STEP: f64 = 15.0;
const WINDOW: Duration = Duration::from_secs(300);

/// A series of `host` over the window: `f(i)` at each of its 20 steps.
fn series(host: &str, key: &str, f: impl Fn(f64) -> f64) -> HostSeries {
    HostSeries {
        host: host.into(),
        instance: format!("{host}:9837"),
        exporter: Exporter::Leet,
        key: key.into(),
        points: (0..20)
            .map(|i| (NOW - STEP * f64::from(19 - i), f(f64::from(i))))
            .collect(),
        since_first: false,
    }
}

/// `n` hosts `node-0`…: each with CPU, memory and two GPUs; node-1's second GPU
/// idle, the last host down.
fn refresh(n: usize) -> ClusterUpdate {
    let mut all = Vec::new();
    let mut up = Vec::new();
    for h in 0..n {
        let name = format!("node-{h}");
        let k = h as f64;
        all.push(series(&name, "cpu.0.cpu_percent", |i| 20.0 + 3.0 * k + i));
        all.push(series(&name, "memory_percent", |_| 30.0 + 5.0 * k));
        all.push(series(&name, "gpu.0.gpu", |i| (50.0 + 2.5 * i).min(100.0)));
        let idle = h == 1;
        all.push(series(&name, "gpu.1.gpu", move |i| {
            if idle {
                0.0
            } else {
                90.0 - i
            }
        }));
        all.push(series(&name, "gpu.0.memoryAllocated", |_| 60.0));
        all.push(series(&name, "gpu.0.powerWatts", |i| 200.0 + 5.0 * i));
        all.push(series(&name, "gpu.1.powerWatts", |_| 150.0));
        up.push(HostUp {
            instance: format!("{name}:9837"),
            host: name,
            job: "leet".into(),
            points: vec![(NOW, h + 1 != n)],
        });
    }
    ClusterUpdate::Fetched(Box::new(Batch {
        start: NOW - 300.0,
        end: NOW,
        step: Duration::from_secs(15),
        series: all,
        up,
        refused: vec![],
    }))
}

fn cluster(n: usize, w: u16, h: u16) -> App {
    let mut app = App::live(
        Options {
            color: false,
            ..Options::default()
        },
        WINDOW.as_secs_f64(),
    );
    app.open_cluster("http://prom.example:9090", WINDOW);
    app.update(Msg::Resize(w, h));
    app.update(Msg::Cluster(Box::new(ClusterUpdate::Started {
        server: "http://prom.example:9090".into(),
        step: Duration::from_secs(15),
        interval: Duration::from_secs(15),
        window: WINDOW,
    })));
    app.update(Msg::Cluster(Box::new(refresh(n))));
    app.update(Msg::Tick(NOW + 1.0));
    app
}

#[test]
fn cluster_screen_lists_every_host_with_its_gpus() {
    for (w, h) in SIZES {
        let app = cluster(3, w, h);
        let s = screen(&app, w, h);
        for host in ["node-0", "node-1", "node-2"] {
            assert!(s.contains(host), "{s}");
        }
        assert!(s.contains("down"), "{s}");
        insta::assert_snapshot!(format!("cluster_{w}x{h}_three_hosts"), s);
    }
}

#[test]
fn cluster_screen_sorted_by_gpu_min_puts_the_idle_gpu_first() {
    let mut app = cluster(3, 120, 40);
    for _ in 0..5 {
        app.update(Msg::char('S'));
    }
    app.update(Msg::key(KeyCode::Down));
    let s = screen(&app, 120, 40);
    assert!(s.contains("sort gpu min"), "{s}");
    insta::assert_snapshot!("cluster_120x40_sorted_gpu_min", s);
}

#[test]
fn cluster_screen_with_more_hosts_than_colours_draws_a_band() {
    let app = cluster(12, 120, 40);
    let s = screen(&app, 120, 40);
    assert!(s.contains("min–max of 12 hosts"), "{s}");
    insta::assert_snapshot!("cluster_120x40_twelve_hosts", s);
}

#[test]
fn cluster_screen_says_when_the_server_fails_and_keeps_the_hosts() {
    let mut app = cluster(3, 120, 40);
    app.update(Msg::Cluster(Box::new(ClusterUpdate::Failed {
        error: PromError::Http(HttpError::Refused {
            server: "http://prom.example:9090".into(),
        }),
        at: NOW + 30.0,
    })));
    // A minute without a newer point: the up hosts are stale.
    app.update(Msg::Tick(NOW + 60.0));
    let s = screen(&app, 120, 40);
    assert!(s.contains("connection refused"), "{s}");
    assert!(s.contains("stale"), "{s}");
    insta::assert_snapshot!("cluster_120x40_server_down", s);
}

#[test]
fn cluster_screen_filtered_and_with_help_over_it() {
    let mut app = cluster(3, 80, 24);
    for m in std::iter::once(Msg::char('/')).chain(Msg::typed("node-[01]")) {
        app.update(m);
    }
    let s = screen(&app, 80, 24);
    assert!(!s.contains("node-2"), "{s}");
    insta::assert_snapshot!("cluster_80x24_filter_typed", s);
    app.update(Msg::key(KeyCode::Enter));
    app.update(Msg::char('h'));
    let s = screen(&app, 80, 24);
    assert!(s.contains("keys (from the live key map)"), "{s}");
    insta::assert_snapshot!("cluster_80x24_help", s);
}

#[test]
fn a_host_opened_is_its_live_screen() {
    let mut app = cluster(3, 120, 40);
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    assert!(s.contains("node-0") && s.contains("esc: every host"), "{s}");
    // Prometheus holds no processes: no table, its room the charts'.
    assert!(
        !s.contains("Processes") && !s.contains("process scan"),
        "{s}"
    );
    insta::assert_snapshot!("cluster_120x40_host_opened", s);
}

#[test]
fn cluster_screen_draws_on_tiny_areas() {
    for (w, h) in [(0, 0), (1, 1), (10, 3), (20, 5), (40, 8)] {
        let app = cluster(3, w, h);
        let _ = screen(&app, w, h);
    }
}

#[test]
fn cluster_header_counts_hosts_in_words_and_heads_an_empty_table() {
    let mut app = cluster(3, 120, 40);
    let filter = |app: &mut App, text: &str| {
        app.update(Msg::ctrl('l'));
        for m in std::iter::once(Msg::char('/')).chain(Msg::typed(text)) {
            app.update(m);
        }
        app.update(Msg::key(KeyCode::Enter));
        screen(app, 120, 40)
    };
    let s = filter(&mut app, "node-0");
    assert!(s.contains(" · 1 of 3 hosts: 1 up,"), "{s}");
    assert!(s.contains("GPU utilisation · 2 GPUs"), "{s}");
    // No host passes: the headings still stand apart.
    let s = filter(&mut app, "nothing");
    assert!(s.contains(" · 0 of 3 hosts: 0 up,"), "{s}");
    assert!(s.contains("  HOST▲ STATE  CPU"), "{s}");
    assert!(s.contains("GPU utilisation · 0 GPUs"), "{s}");
}

#[test]
fn cluster_help_lists_home_and_end_on_their_own_lines() {
    let mut app = cluster(3, 120, 40);
    app.update(Msg::char('h'));
    let s = screen(&app, 120, 40);
    let line = |what: &str| {
        s.lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{what} in {s}"))
            .to_owned()
    };
    assert!(!line("Select an earlier host").contains("home"), "{s}");
    assert!(!line("Select a later host").contains("end"), "{s}");
    assert!(line("Select the first host").contains("home"), "{s}");
    assert!(line("Select the last host").contains("end"), "{s}");
}

#[test]
fn a_down_host_opened_says_so_and_shows_no_uptime_as_up() {
    let mut app = cluster(3, 120, 40);
    // Sorted by state: the down host first.
    app.update(Msg::char('S'));
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    let lines: Vec<&str> = s.lines().collect();
    let facts = lines.iter().find(|l| l.contains("node-2")).expect("facts");
    assert!(facts.contains("down: no sample since"), "{s}");
    assert!(!facts.contains(" up "), "{s}");
    assert!(!s.contains("no sample lately"), "{s}");
    assert!(facts.contains("meters last known"), "{s}");
    insta::assert_snapshot!("cluster_120x40_down_host_opened", s);
    // Its meters and GPU rows are drawn dim: what was read before it went down.
    assert!(value_dim(&app, "45.0%"), "{s}");
    assert!(value_dim(&app, "295W"), "{s}");
}

/// Whether the first cell of `text` on the screen (at 120x40) is drawn dim.
fn value_dim(app: &App, text: &str) -> bool {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::Modifier;
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    leet::ui::render::render_buffer(&mut buf, area, app);
    let first = text.chars().next().map(String::from).unwrap_or_default();
    for y in 0..40 {
        let line: String = (0..120).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(at) = line.find(text) {
            let x = line[..at].chars().count() as u16;
            assert_eq!(buf[(x, y)].symbol(), first);
            return buf[(x, y)].modifier.contains(Modifier::DIM);
        }
    }
    panic!("{text} not on screen");
}

#[test]
fn an_up_host_opened_draws_its_meters_as_current() {
    let mut app = cluster(3, 120, 40);
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    assert!(!s.contains("last known"), "{s}");
    let cpu = s.lines().find(|l| l.contains(" CPU ")).expect("meters");
    let value = cpu
        .split_whitespace()
        .find(|w| w.ends_with('%'))
        .expect("cpu value");
    assert!(!value_dim(&app, value), "{s}");
}

#[test]
fn a_gpu_family_its_exporter_stopped_giving_is_not_shown_as_current() {
    let mut app = cluster(2, 120, 40);
    // node-0's GPU driver hangs: its exporter drops every GPU series, the rest go
    // on and the target stays up.
    node0_goes_on_with(
        &mut app,
        &[("cpu.0.cpu_percent", 30.0), ("memory_percent", 40.0)],
    );
    let s = screen(&app, 120, 40);
    let row = s.lines().find(|l| l.contains("node-0")).expect("row");
    assert!(row.contains("stale×2"), "{s}");
    assert!(!row.contains('W'), "no power shown as current: {s}");
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    assert!(s.contains("gpu: no sample since"), "{s}");
    // The header's GPU rows say so too, not their last values.
    let gpu0 = s.lines().find(|l| l.contains(" gpu0 ")).expect("gpu0 row");
    assert!(
        gpu0.contains("no sample since") && !gpu0.contains('%'),
        "{s}"
    );
}

#[test]
fn a_host_pattern_that_does_not_compile_says_why_and_is_not_kept() {
    let mut app = cluster(3, 120, 40);
    for m in std::iter::once(Msg::char('/')).chain(Msg::typed("node-0[1")) {
        app.update(m);
    }
    let s = screen(&app, 120, 40);
    let status = s.lines().last().unwrap_or_default().to_owned();
    assert!(
        status.contains("hosts /node-0[1  ✗ unclosed character class"),
        "{s}"
    );
    // Enter keeps the prompt and its error: the pattern is not silently the last
    // one that compiled (`node-0`).
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    assert!(s.contains("✗ unclosed character class"), "{s}");
    app.update(Msg::key(KeyCode::Backspace));
    app.update(Msg::key(KeyCode::Backspace));
    let s = screen(&app, 120, 40);
    assert!(s.contains("[1 of 3 hosts]"), "{s}");
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    assert!(s.contains(" · 1 of 3 hosts: 1 up,"), "{s}");
    assert!(s.contains("hosts /node-0 "), "{s}");
}

#[test]
fn the_sort_arrow_says_the_direction_and_leaves_the_headings_apart() {
    let mut app = cluster(3, 120, 40);
    // Host: first to last (▲); state; CPU: highest first (▼); … GPU min: lowest
    // first (▲).
    let mut seen = Vec::new();
    for _ in 0..6 {
        let s = screen(&app, 120, 40);
        let head = s.lines().nth(1).unwrap_or_default().to_owned();
        seen.push(head.trim().to_owned());
        app.update(Msg::char('S'));
    }
    assert!(seen[0].starts_with("HOST▲ "), "{seen:?}");
    assert!(seen[2].contains(" CPU▼ "), "{seen:?}");
    assert!(seen[4].contains("GPU MEAN▼ GPU MIN"), "{seen:?}");
    assert!(seen[5].contains("GPU MIN▲ GPU MEM"), "{seen:?}");
}

/// The heatmap's lines: from its top border to its time labels.
fn heat_lines(s: &str) -> Vec<String> {
    (s.lines())
        .skip_while(|l| !l.contains("GPU utilisation ·"))
        .take_while(|l| !l.contains("18:18:21"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_gpu_heatmap_follows_the_selected_host_and_scrolls_by_pages() {
    let mut app = cluster(12, 120, 40);
    let s = screen(&app, 120, 40);
    let heat = heat_lines(&s);
    assert!(heat[0].contains("24 GPUs · 1–7 shown"), "{s}");
    assert!(heat.iter().any(|l| l.contains("+17 more")), "{s}");
    // Selecting a host brings its GPUs in, the first of them on top.
    for _ in 0..5 {
        app.update(Msg::char('j'));
    }
    let s = screen(&app, 120, 40);
    let heat = heat_lines(&s);
    assert!(heat[0].contains("11–17 shown"), "{s}");
    assert!(heat[1].contains("node-5:0"), "{s}");
    assert!(!s.contains("node-0:0"), "{s}");
    // A page down reaches the last GPU, and no row says more are below.
    app.update(Msg::key(KeyCode::PageDown));
    let s = screen(&app, 120, 40);
    let heat = heat_lines(&s);
    assert!(heat[0].contains("17–24 shown"), "{s}");
    assert!(heat.iter().any(|l| l.contains("node-11:1")), "{s}");
    assert!(!heat.iter().any(|l| l.contains("more")), "{s}");
    insta::assert_snapshot!("cluster_120x40_heatmap_scrolled", heat.join("\n"));
    // Another page down stays at the end; a page up goes back a page.
    app.update(Msg::key(KeyCode::PageDown));
    assert!(heat_lines(&screen(&app, 120, 40))[0].contains("17–24 shown"));
    app.update(Msg::key(KeyCode::PageUp));
    let s = screen(&app, 120, 40);
    assert!(heat_lines(&s)[0].contains("10–16 shown"), "{s}");
    // Back to the first host: its GPUs from the first.
    app.update(Msg::key(KeyCode::Home));
    let s = screen(&app, 120, 40);
    assert!(heat_lines(&s)[0].contains("1–7 shown"), "{s}");
    // So small that the one row is the `+N more`: no range (it read `1–0`).
    let mut small = cluster(1, 40, 10);
    small.update(Msg::Resize(40, 10));
    let s = screen(&small, 40, 10);
    let title = s
        .lines()
        .find(|l| l.contains("GPU utilisation ·"))
        .unwrap_or_default();
    assert!(title.contains("2 GPUs · none shown"), "{s}");
    assert!(s.contains("+2 more"), "{s}");
}

#[test]
fn host_wide_families_that_stop_are_named_in_the_table_and_the_status_line() {
    let mut app = cluster(2, 120, 40);
    // node-0's CPU and memory stop (node-exporter hangs) while its GPUs go on and
    // the target stays up.
    node0_goes_on_with(
        &mut app,
        &[
            ("gpu.0.gpu", 80.0),
            ("gpu.1.gpu", 70.0),
            ("gpu.0.powerWatts", 200.0),
            ("gpu.1.powerWatts", 150.0),
            ("gpu.0.memoryAllocated", 60.0),
        ],
    );
    let s = screen(&app, 120, 40);
    let row = s.lines().find(|l| l.contains("node-0")).expect("row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2..5], ["up*", "stale", "stale"], "{s}");
    let status = s
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("status");
    assert!(
        status.contains("node-0 · cpu: no sample since")
            && status.contains("memory_percent: no sample since"),
        "{s}"
    );
    insta::assert_snapshot!("cluster_120x40_host_families_behind", s);
    // Another host selected: the usual status line.
    app.update(Msg::char('j'));
    let s = screen(&app, 120, 40);
    let status = s
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("status");
    assert!(status.contains("read at"), "{s}");
    // node-0 opened: its CPU and memory meters hold their last values, dimmed;
    // it is up, so its facts say so.
    app.update(Msg::char('k'));
    app.update(Msg::key(KeyCode::Enter));
    let s = screen(&app, 120, 40);
    let meter = |name: &str| {
        let line = s.lines().find(|l| l.contains(name)).expect("meters");
        let at = line.find(name).expect("meter");
        line[at..]
            .split_whitespace()
            .find(|w| w.ends_with('%'))
            .expect("value")
            .to_owned()
    };
    assert!(value_dim(&app, &meter(" CPU ")), "{s}");
    assert!(value_dim(&app, &meter(" Mem ")), "{s}");
}

/// node-0 goes on for two more minutes with only these series (key, value), its
/// target up; then the clock reads a second later.
fn node0_goes_on_with(app: &mut App, keys: &[(&str, f64)]) {
    let later = |key: &str, v: f64| HostSeries {
        points: (1..=8).map(|k| (NOW + STEP * f64::from(k), v)).collect(),
        ..series("node-0", key, |_| v)
    };
    app.update(Msg::Cluster(Box::new(ClusterUpdate::Fetched(Box::new(
        Batch {
            start: NOW,
            end: NOW + 120.0,
            step: Duration::from_secs(15),
            series: keys.iter().map(|&(k, v)| later(k, v)).collect(),
            up: vec![HostUp {
                host: "node-0".into(),
                instance: "node-0:9837".into(),
                job: "leet".into(),
                points: vec![(NOW + 120.0, true)],
            }],
            refused: vec![],
        },
    )))));
    app.update(Msg::Tick(NOW + 121.0));
}
