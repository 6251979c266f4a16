//! Gaps are gaps: steps lost to a damaged span are not bridged by a line, and the
//! skipped span is marked on the x axis. The damaged run is the `crashed` fixture
//! (251 history rows over three 32 KiB blocks) with 3000 bytes of its middle block
//! flipped: the reader skips the records they held and resumes at the next chunk.

use crate::common;

use common::screen::{screen, NOW, SIZES};
use crossterm::event::KeyCode;
use leet::decode::leveldb::BLOCK_SIZE;
use leet::msg::Msg;
use leet::ui::{App, Options};

/// A copy of `crashed`'s run file with bytes of its middle block flipped, in a
/// fresh directory (kept alive by the returned guard).
fn damaged_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let src = common::runs_dir().join("crashed/wandb/latest-run");
    let file = leet::source::resolve::resolve_file(&src).unwrap();
    let mut data = std::fs::read(&file).unwrap();
    assert!(data.len() > 2 * BLOCK_SIZE, "crashed spans three blocks");
    for b in &mut data[BLOCK_SIZE + BLOCK_SIZE / 2..][..3000] {
        *b ^= 0xff;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-crash001.wandb");
    std::fs::write(&path, &data).unwrap();
    (dir, path)
}

/// The damaged run read into an app at `w`×`h`, as `common::screen::app_from` does.
fn damaged_app(w: u16, h: u16) -> (tempfile::TempDir, App) {
    let (dir, path) = damaged_copy();
    let (_, batch) = leet::source::tail::read_batch(&path).unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from("damaged.wandb"),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    (dir, app)
}

#[test]
fn damage_between_rows_is_a_break_over_the_steps_lost() {
    let (_dir, app) = damaged_app(120, 40);
    assert!(!app.shown.run.damage.is_clean());
    let breaks = app.shown.run.breaks.spans();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let (a, b) = breaks[0];
    // The break is between two steps that were read, and the steps in between
    // were not.
    let loss = app.shown.run.metrics.get("loss").unwrap();
    let xs: Vec<f64> = loss.points().iter().map(|p| p.0).collect();
    assert!(xs.contains(&a) && xs.contains(&b), "{a} {b}");
    assert!(b > a + 1.0, "{a} {b}");
    assert!(!xs.iter().any(|&x| x > a && x < b), "{xs:?}");
    // The clean file has none.
    let clean = common::screen::app_from("crashed", 120, 40);
    assert!(clean.shown.run.breaks.spans().is_empty());
}

#[test]
fn a_damaged_run_with_its_gap_marked() {
    for (w, h) in SIZES {
        let (_dir, mut app) = damaged_app(w, h);
        // The loss chart full screen (the crashed run's first chart).
        app.update(Msg::key(KeyCode::Enter));
        let s = screen(&app, w, h);
        let (a, b) = app.shown.run.breaks.spans()[0];
        let note = format!("steps {}–{} lost", a + 1.0, b - 1.0);
        assert!(s.contains(&note), "{w}x{h}: {note}\n{s}");
        assert!(s.contains('╳'), "{w}x{h}\n{s}");
        // The status bar keeps state, step and the damage warning whole.
        let bar = s.lines().nth(usize::from(h) - 1).unwrap();
        for part in ["crashed?", "step 250", "⚠ 1 corrupt span(s)", "h: help"] {
            assert!(bar.contains(part), "{w}x{h}: {part}\n{bar}");
        }
        insta::assert_snapshot!(format!("damaged_{w}x{h}_gap"), s);
    }
}
