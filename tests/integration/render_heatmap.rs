//! The heatmap mode of percentage charts of several series (`y`: linear → log →
//! heatmap), in the live monitor's grid and in the viewer's system sidebar: whole
//! screens from fixed samples (no clock, no host), driven by key messages.

use crate::common;

use leet::msg::{Msg, Sample};
use leet::ui::charts::grid::YScale;
use leet::ui::render;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;

/// Fixed "now": the fixtures' hour, as tests/render.rs uses.
const NOW: f64 = 1_796_063_000.0;

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render::render(f, app)).unwrap();
    t.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    let mut s = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

fn keys(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.update(Msg::char(c));
    }
}

/// CPU % of core `c` at second `i`: core 0 pinned at 100 %, core 15 idle, the
/// first half busy in waves, the second half with one burst each.
fn core(c: u32, i: u32) -> f64 {
    let (c_f, x) = (f64::from(c), f64::from(i));
    match c {
        0 => 100.0,
        15 => 0.0,
        1..=7 => 60.0 + 35.0 * ((x + 5.0 * c_f) / 6.0).sin(),
        _ if (i + 4 * c) % 30 < 6 => 85.0,
        _ => 3.0 + c_f,
    }
}

/// Utilisation of GPU `g` at second `i`: a training step's rhythm (busy, then a
/// data-loading dip) shifted per GPU; GPU 7 stops reporting for ten seconds (NaN).
fn gpu(g: u32, i: u32) -> f64 {
    if g == 7 && (30..40).contains(&i) {
        return f64::NAN;
    }
    if (i + 3 * g) % 12 < 9 {
        f64::from(70 + 3 * g)
    } else {
        f64::from(5 + g)
    }
}

/// `leet --live` on a host with 16 cores and 8 GPUs, from 60 fixed samples a second
/// apart: charts GPU Utilization (8 series), CPU (16) and Memory (1).
fn live(w: u16, h: u16, color: bool) -> App {
    let mut app = App::live(
        Options {
            color,
            ..Options::default()
        },
        120.0,
    );
    app.update(Msg::Resize(w, h));
    app.set_host("testhost", serde_json::Map::new(), serde_json::Map::new());
    let t0 = NOW - 60.0;
    for i in 0..60u32 {
        let mut values = Vec::new();
        for g in 0..8 {
            values.push((format!("gpu.{g}.gpu"), gpu(g, i)));
        }
        for c in 0..16 {
            values.push((format!("cpu.{c}.cpu_percent"), core(c, i)));
        }
        values.push(("memory_percent".to_owned(), 40.0 + f64::from(i) / 10.0));
        app.update(Msg::Sample(Sample {
            timestamp: t0 + f64::from(i),
            errors: Vec::new(),
            values,
        }));
    }
    app.update(Msg::Tick(NOW));
    app
}

/// Index of the system chart titled `title`.
fn chart(app: &App, title: &str) -> usize {
    app.charts
        .sys
        .iter()
        .position(|c| c.title == title)
        .unwrap_or_else(|| panic!("no chart {title}"))
}

fn scale(app: &App, title: &str) -> YScale {
    app.charts
        .grid
        .scales
        .system(&app.charts.sys[chart(app, title)])
}

/// The live app with GPU Utilization and CPU both switched to heatmap with `y`.
fn live_heatmaps(w: u16, h: u16, color: bool) -> App {
    let mut app = live(w, h, color);
    assert_eq!(
        app.charts.metric_keys,
        ["GPU Utilization", "CPU Core", "Memory"]
    );
    assert_eq!(app.charts.grid.focus, 0);
    keys(&mut app, "yy");
    // `d`: focus the next chart (CPU).
    keys(&mut app, "dyy");
    assert_eq!(app.charts.grid.focus, 1);
    assert_eq!(scale(&app, "GPU Utilization"), YScale::Heatmap);
    assert_eq!(scale(&app, "CPU Core"), YScale::Heatmap);
    app
}

#[test]
fn live_16_cores_and_8_gpus_as_heatmaps() {
    for (w, h) in [(80, 24), (200, 60)] {
        let app = live_heatmaps(w, h, false);
        let s = text(&draw(&app, w, h));
        assert!(s.contains("GPU Utilization (%) · heatmap"), "{s}");
        assert!(s.contains("CPU Core (%) · heatmap"), "{s}");
        assert!(s.contains("gpu 0") && s.contains("cpu 0"), "{s}");
        assert!(s.contains("0% ") && s.contains(" 100%"), "{s}");
        insta::assert_snapshot!(format!("live_{w}x{h}_heatmaps"), s);
    }
}

#[test]
fn more_cores_than_rows_say_how_many_are_left_out() {
    // At 80×24 the CPU chart has fewer rows than its 16 cores.
    let app = live_heatmaps(80, 24, false);
    let s = text(&draw(&app, 80, 24));
    // (the CPU chart is the focused one, drawn with a heavy border `┃`; the GPU
    // chart beside or above it has its own count)
    let more = s
        .lines()
        .filter(|l| l.contains(" more"))
        .filter_map(|l| l.split('┃').find(|p| p.starts_with('+')))
        .next_back()
        .and_then(|r| r[1..].split(" more").next())
        .and_then(|n| n.parse::<usize>().ok());
    let shown = (0..16).filter(|c| s.contains(&format!("cpu {c} "))).count();
    assert_eq!(more.map(|m| m + shown), Some(16), "{s}");
    assert!(shown >= 2, "{s}");
}

#[test]
fn heatmap_cells_are_coloured_by_value() {
    let (w, h) = (200, 60);
    let app = live_heatmaps(w, h, true);
    let buf = draw(&app, w, h);
    // The first cell right of a band's label, on the label's row.
    let cell_after = |label: &str| {
        for y in 0..h {
            let row: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
            if let Some(at) = row.find(label) {
                let col = row[..at].chars().count() + label.chars().count();
                for x in col..usize::from(w) {
                    let x = u16::try_from(x).unwrap();
                    if buf[(x, y)].symbol() == "█" {
                        return buf[(x, y)].clone();
                    }
                }
            }
        }
        panic!("no band for {label}:\n{}", text(&buf));
    };
    // Core 0 is pinned at 100 %: the ramp's yellow end; core 15 idles at 0 %: its
    // dark purple end (viridis).
    let hot = cell_after("cpu 0 ");
    assert_eq!(hot.fg, Color::Rgb(253, 231, 37));
    assert_eq!(hot.bg, Color::Rgb(253, 231, 37));
    let cold = cell_after("cpu 15 ");
    assert_eq!(cold.bg, Color::Rgb(68, 1, 84));
    // A busy GPU (70 %+) is lighter than its dip (5 %+): green-yellow against blue.
    let g = cell_after("gpu 3 ");
    assert!(matches!(g.bg, Color::Rgb(..)), "{:?}", g.bg);
}

#[test]
fn gaps_are_empty_cells() {
    // GPU 7 reported nothing for ten of the sixty seconds: its band has a hole that
    // GPU 6's does not.
    let (w, h) = (200, 60);
    let app = live_heatmaps(w, h, false);
    let s = text(&draw(&app, w, h));
    let band = |label: &str| {
        s.lines()
            .find(|l| l.contains(label))
            // the band's cells: from the label to the chart's right border
            .and_then(|l| l[l.find(label).unwrap() + label.len()..].split('│').next())
            .unwrap_or_default()
            .to_owned()
    };
    let (g6, g7) = (band("gpu 6 "), band("gpu 7 "));
    assert!(g6.chars().count() > 30, "{s}");
    let hole = |b: &str| b.trim().contains("   ");
    assert!(hole(&g7) && !hole(&g6), "gpu 6: {g6}\ngpu 7: {g7}\n{s}");
}

#[test]
fn y_cycles_linear_log_heatmap_only_where_a_heatmap_is_offered() {
    let mut app = live(200, 60, false);
    let title_of = |app: &App, name: &str| {
        let s = text(&draw(app, 200, 60));
        [" · heatmap", " · log"]
            .into_iter()
            .find(|t| s.contains(&format!("{name}{t}")))
            .unwrap_or("")
            .to_owned()
    };
    // GPU Utilization: a percentage of 8 series.
    let mut seen = vec![(
        scale(&app, "GPU Utilization"),
        title_of(&app, "GPU Utilization (%)"),
    )];
    for _ in 0..3 {
        keys(&mut app, "y");
        seen.push((
            scale(&app, "GPU Utilization"),
            title_of(&app, "GPU Utilization (%)"),
        ));
    }
    assert_eq!(
        seen,
        [
            (YScale::Linear, String::new()),
            (YScale::Log, " · log".to_owned()),
            (YScale::Heatmap, " · heatmap".to_owned()),
            (YScale::Linear, String::new()),
        ]
    );
    // Memory: a percentage of one series: linear ↔ log.
    keys(&mut app, "dd");
    assert_eq!(app.charts.grid.focus, 2);
    let mut seen = vec![(scale(&app, "Memory"), title_of(&app, "Memory (%)"))];
    for _ in 0..2 {
        keys(&mut app, "y");
        seen.push((scale(&app, "Memory"), title_of(&app, "Memory (%)")));
    }
    assert_eq!(
        seen,
        [
            (YScale::Linear, String::new()),
            (YScale::Log, " · log".to_owned()),
            (YScale::Linear, String::new()),
        ]
    );
    // The other charts kept theirs.
    assert_eq!(scale(&app, "GPU Utilization"), YScale::Linear);
    assert_eq!(scale(&app, "CPU Core"), YScale::Linear);
}

#[test]
fn full_screen_y_cycles_the_chart_shown() {
    let mut app = live(120, 40, false);
    keys(&mut app, "d");
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    keys(&mut app, "yy");
    assert_eq!(scale(&app, "CPU Core"), YScale::Heatmap);
    let s = text(&draw(&app, 120, 40));
    assert!(
        s.contains("CPU Core (%) · heatmap") && s.contains("cpu 15"),
        "{s}"
    );
}

#[test]
fn an_old_keymap_binding_toggle_log_y_still_loads_and_works() {
    let mut km = leet::ui::keymap::Keymap::builtin();
    km.overlay(
        std::path::Path::new("old.toml"),
        "[normal]\n\"y\" = \"none\"\n\"Y\" = \"toggle_log_y\"\n",
    )
    .unwrap();
    let mut app = App::live(
        Options {
            keymap: km,
            color: false,
            ..Options::default()
        },
        120.0,
    );
    app.update(Msg::Resize(120, 40));
    for i in 0..5u32 {
        app.update(Msg::Sample(Sample {
            timestamp: NOW + f64::from(i),
            errors: Vec::new(),
            values: vec![
                ("cpu.0.cpu_percent".to_owned(), 10.0),
                ("cpu.1.cpu_percent".to_owned(), 90.0),
            ],
        }));
    }
    keys(&mut app, "yY");
    assert_eq!(scale(&app, "CPU Core"), YScale::Log);
    keys(&mut app, "Y");
    assert_eq!(scale(&app, "CPU Core"), YScale::Heatmap);
}

/// Focus the system sidebar (grid → overview and its sections → system) and
/// scroll the chart titled `title` to its top.
fn focus_system_chart(app: &mut App, title: &str) {
    for _ in 0..8 {
        if app.panels.focus == leet::ui::panels::Pane::Right {
            break;
        }
        app.update(Msg::key(crossterm::event::KeyCode::Tab));
    }
    assert_eq!(app.panels.focus, leet::ui::panels::Pane::Right);
    let want = chart(app, title);
    while app.panes.system.shown.get(app.panes.system.scroll) != Some(&want) {
        let before = app.panes.system.scroll;
        keys(app, "s");
        assert_ne!(app.panes.system.scroll, before, "{title} not reachable");
    }
}

/// The viewer's system sidebar: the `system` fixture's Memory chart (system and
/// process memory %, two series) at the top of the sidebar, in heatmap mode.
#[test]
fn viewer_system_sidebar_heatmap() {
    let (w, h) = (120, 40);
    let dir = common::runs_dir().join("system/wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from("system.wandb"),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    focus_system_chart(&mut app, "Memory");
    // CPU (the process's, one series) is not at the top any more: untouched by `y`.
    keys(&mut app, "yy");
    assert_eq!(scale(&app, "Memory"), YScale::Heatmap);
    assert_eq!(scale(&app, "Process CPU"), YScale::Linear);
    let s = text(&draw(&app, w, h));
    assert!(s.contains("Memory (%) · heatmap"), "{s}");
    assert!(s.contains("system") && s.contains("process"), "{s}");
    insta::assert_snapshot!("system_120x40_sidebar_memory_heatmap", s);
    // A third `y`: back to lines.
    keys(&mut app, "y");
    assert_eq!(scale(&app, "Memory"), YScale::Linear);
}

/// `enter` with the system sidebar focused shows its top chart full screen (it
/// showed the grid's chart): a GPU heatmap gets a row per GPU there, where the
/// sidebar showed four and `+8 more`; the arrows go through the system charts,
/// `esc` back.
#[test]
fn enter_on_the_system_sidebar_shows_its_chart_full_screen() {
    use leet::decode::pb;
    use prost::Message as _;
    let (w, h) = (120, 40);
    let mut wr = leet::decode::leveldb::Writer::new();
    for (num, i) in (1..).zip(0..5u32) {
        let item = (0..12u32)
            .map(|g| pb::StatsItem {
                key: format!("gpu.{g}.gpu"),
                value_json: gpu(g, i).to_string(),
            })
            .chain(std::iter::once(pb::StatsItem {
                key: "cpu".into(),
                value_json: "12".into(),
            }))
            .collect();
        let r = pb::Record {
            num,
            record_type: Some(pb::record::RecordType::Stats(pb::StatsRecord {
                timestamp: Some(prost_types::Timestamp {
                    seconds: NOW as i64 - 10 + i64::from(i),
                    nanos: 0,
                }),
                item,
                ..Default::default()
            })),
            ..Default::default()
        };
        wr.append(&r.encode_to_vec());
    }
    let mut batch = leet::msg::RunBatch::default();
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
    app.update(Msg::Tick(NOW));
    focus_system_chart(&mut app, "GPU Utilization");
    keys(&mut app, "yy");
    assert_eq!(scale(&app, "GPU Utilization"), YScale::Heatmap);
    let side = text(&draw(&app, w, h));
    assert!(!side.contains("gpu 11"), "{side}");
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert!(app.panels.fullscreen);
    let full = text(&draw(&app, w, h));
    assert!(
        full.contains("GPU Utilization") && full.contains("heatmap"),
        "{full}"
    );
    for g in 0..12 {
        assert!(full.contains(&format!("gpu {g} ")), "gpu {g}: {full}");
    }
    // Another system chart (←/→, as in the grid's full screen); esc back.
    let at = app.panes.system.scroll;
    let other = if at > 0 {
        crossterm::event::KeyCode::Left
    } else {
        crossterm::event::KeyCode::Right
    };
    app.update(Msg::key(other));
    assert_ne!(app.panes.system.scroll, at);
    let next = text(&draw(&app, w, h));
    assert!(!next.contains("GPU Utilization"), "{next}");
    app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(!app.panels.fullscreen);
}
