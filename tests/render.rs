//! Whole-screen snapshots (TestBackend + insta), each driven through key messages
//! so the key map → action → state path is covered.
#![allow(clippy::unwrap_used)]

mod common;

use crossterm::event::KeyCode;
use leet::app::{App, Options};
use leet::msg::Msg;
use leet::view;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// Fixed "now" for snapshots: one hour after the fixtures were written.
const NOW: f64 = 1_796_063_000.0;

fn app_from(fixture: &str, w: u16, h: u16) -> App {
    let dir = common::runs_dir().join(fixture).join("wandb/latest-run");
    let (path, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from(format!("{fixture}.wandb")),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    let _ = path;
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::render(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..h {
        let mut line = String::new();
        for x in 0..w {
            line.push_str(buf[(x, y)].symbol());
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) {
    for m in msgs {
        app.update(m);
    }
}

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

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
        t.draw(|f| view::render(f, &app)).unwrap();
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
            t.draw(|f| view::render(f, &app)).unwrap();
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
