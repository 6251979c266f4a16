//! Append-to-screen latency through the real path: bytes appended to a file →
//! tail thread (notify) → `Msg::Run` → `App::update` → `ui::render::render` (TestBackend).

use crate::common;

use std::io::Write as _;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use leet::decode::leveldb::Frame;
use leet::msg::Msg;
use leet::source::file::RunReader;
use leet::source::follow::spawn_tail;
use leet::source::tail::TailOptions;
use leet::ui::render;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

#[test]
fn append_to_screen_latency() {
    let src = common::wandb_file(&common::runs_dir().join("tiny/wandb/latest-run"));
    let bytes = std::fs::read(&src).unwrap();
    // Record boundaries (the offset where each record starts).
    let mut starts = Vec::new();
    RunReader::open(&src)
        .unwrap()
        .poll_frames(|f| {
            if let Frame::Record { offset, .. } = f {
                starts.push(usize::try_from(offset).unwrap());
            }
        })
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-lat.wandb");
    let first = starts[starts.len() / 3];
    std::fs::write(&path, &bytes[..first]).unwrap();

    let (tx, rx) = mpsc::sync_channel(64);
    spawn_tail(path.clone(), tx, TailOptions::default());
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(200, 60));
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    // Initial load.
    let t0 = Instant::now();
    while app.shown.source.read_to < first as u64 {
        let m = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        app.update(m);
    }
    eprintln!("initial load in {:?}", t0.elapsed());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let mut lat = Vec::new();
    let cuts: Vec<usize> = starts
        .iter()
        .copied()
        .filter(|&s| s > first)
        .chain([bytes.len()])
        .collect();
    let mut from = first;
    for &to in cuts.iter().take(40) {
        let t = Instant::now();
        file.write_all(&bytes[from..to]).unwrap();
        file.flush().unwrap();
        loop {
            let m = rx.recv_timeout(Duration::from_secs(2)).unwrap();
            app.update(m);
            if app.shown.source.read_to >= to as u64 {
                break;
            }
        }
        term.draw(|f| render::render(f, &app)).unwrap();
        lat.push(t.elapsed());
        from = to;
    }
    lat.sort();
    let median = lat[lat.len() / 2];
    let max = *lat.last().unwrap();
    eprintln!(
        "append→frame latency over {} appends: median {median:?}, p90 {:?}, max {max:?}",
        lat.len(),
        lat[lat.len() * 9 / 10]
    );
    // The figures are bounded by the scripted run (scripts/bench-follow.sh); here every
    // append reaches a frame.
    assert_eq!(lat.len(), cuts.len().min(40));
}
