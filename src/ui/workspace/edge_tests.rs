//! The workspace's edges: the index arriving in parts, drawn runs that vanish for
//! a while or are replaced, unreadable runs, long pastes into the runs filter.

use std::path::PathBuf;

use crossterm::event::KeyCode;

use super::app_tests::{app, starts};
use super::tests::{entry, index};
use super::*;
use crate::msg::Msg;
use crate::ui::{App, Cmd};

fn indexed(app: &mut App, entries: Vec<RunIndexEntry>) -> Vec<Cmd> {
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    })
    .cmds
}

fn ws(app: &App) -> &Workspace {
    app.runs.workspace.as_deref().expect("workspace")
}

fn stops(cmds: &[Cmd]) -> usize {
    cmds.iter()
        .filter(|c| matches!(c, Cmd::StopReader { .. }))
        .count()
}

/// What the scan lists of a run it has not read yet.
fn placeholder(dir: &str, id: &str) -> RunIndexEntry {
    RunIndexEntry {
        dir: PathBuf::from(format!("/w/wandb/{dir}")),
        file: Some(PathBuf::from(format!("/w/wandb/{dir}/run-{id}.wandb"))),
        run_id: id.to_owned(),
        size: 4 << 30,
        reading: true,
        ..RunIndexEntry::default()
    }
}

#[test]
fn an_index_in_two_parts_shows_the_rows_at_once_with_the_big_one_reading() {
    let (mut app, _) = app();
    let mut part = index();
    part[0] = placeholder("run-20260101_000400-c", "c");
    let fx = app.update(Msg::IndexProgress {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: part,
    });
    assert!(fx.redraw);
    let w = ws(&app);
    // Every row shows before the big file is read, that one marked as reading.
    assert!(w.indexed);
    assert_eq!(w.shown.len(), 3);
    let c = w.run("c").expect("c");
    assert!(c.reading());
    assert!(!w.run("b").expect("b").reading());
    // The latest run stays read meanwhile; nothing is picked before the whole index.
    assert_eq!(stops(&fx.cmds), 0);
    assert!(starts(&fx.cmds).is_empty());
    assert!(w.selected.is_empty());
    assert!(w.scanning, "the scan's answer is still to come");
    let fx = app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    assert!(fx.redraw);
    let w = ws(&app);
    assert!(!w.scanning);
    assert!(w.runs.iter().all(|r| !r.reading()));
    assert_eq!(w.selected, ["c"]);
    assert_eq!(stops(&fx.cmds), 0);
}

#[test]
fn a_drawn_run_gone_for_a_while_is_drawn_again_when_it_comes_back() {
    let (mut app, _) = app();
    indexed(&mut app, index());
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::char(' ')); // b drawn beside c
    assert_eq!(ws(&app).selected, ["c", "b"]);
    // b's directories moved away: it is let go and its readers stop.
    let without_b: Vec<RunIndexEntry> = index().into_iter().filter(|e| e.run_id != "b").collect();
    let cmds = indexed(&mut app, without_b.clone());
    assert_eq!(ws(&app).selected, ["c"]);
    assert!(stops(&cmds) > 0);
    // Some scans later (unchanged meanwhile), they are back: b is drawn again.
    for _ in 0..5 {
        app.update(Msg::IndexUnchanged {
            wandb_dir: PathBuf::from("/w/wandb"),
        });
    }
    let cmds = indexed(&mut app, index());
    assert_eq!(ws(&app).selected, ["c", "b"]);
    let mut s = starts(&cmds);
    s.sort();
    assert_eq!(s, ["run-20260101_000100-b", "run-20260101_000300-b"]);
    // A file empty at one pass (no run record, so no id: its key is its
    // directory's name) is the same: c comes back drawn, and is pinned again.
    app.update(Msg::key(KeyCode::Home));
    app.update(Msg::char('p'));
    assert_eq!(ws(&app).pinned.as_deref(), Some("c"));
    let mut empty = index();
    empty[0] = RunIndexEntry {
        run_id: String::new(),
        has_run_record: false,
        error: Some("empty file".into()),
        ..empty[0].clone()
    };
    indexed(&mut app, empty);
    assert!(!ws(&app).is_selected("c"));
    // Gone meanwhile, it is still what a save remembers.
    assert!(ws(&app).saved().selected.contains(&"c".to_owned()));
    indexed(&mut app, index());
    assert!(ws(&app).is_selected("c"));
    assert_eq!(ws(&app).pinned.as_deref(), Some("c"));
    // Gone for longer than it is remembered: let go for good.
    indexed(&mut app, without_b);
    for _ in 0..=VANISHED_SCANS {
        app.update(Msg::IndexUnchanged {
            wandb_dir: PathBuf::from("/w/wandb"),
        });
    }
    indexed(&mut app, index());
    assert!(!ws(&app).is_selected("b"));
}

#[test]
fn a_drawn_run_replaced_in_its_directory_is_noted_once() {
    let (mut app, _) = app();
    indexed(&mut app, index());
    assert_eq!(ws(&app).selected, ["c"]);
    assert_eq!(app.shown.source.error, None);
    // c's directory now holds another run.
    let mut other = index();
    other[0].run_id = "d".into();
    indexed(&mut app, other.clone());
    let note = app.shown.source.error.take().expect("noted");
    assert!(
        note.contains("run-20260101_000400-c now holds run d (was c)"),
        "{note}"
    );
    // The next index says nothing more.
    indexed(&mut app, other);
    assert_eq!(app.shown.source.error, None);
    // A drawn run whose file started again (smaller than it was) is noted too.
    app.update(Msg::key(KeyCode::Home));
    app.update(Msg::char(' '));
    let mut big = index();
    big[0].run_id = "d".into();
    big[0].size = 1 << 20;
    indexed(&mut app, big.clone());
    assert!(ws(&app).is_selected("d"));
    app.shown.source.error = None;
    big[0].size = 100;
    indexed(&mut app, big);
    let note = app.shown.source.error.take().expect("noted");
    assert!(note.contains("its run file started again"), "{note}");
}

#[test]
fn a_drawn_run_whose_file_can_no_longer_be_read_is_said_and_the_note_taken_back() {
    let (mut app, _) = app();
    indexed(&mut app, index());
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::char(' ')); // a drawn beside c
    assert_eq!(ws(&app).selected, ["c", "a"]);
    // a's file can no longer be read (a `chmod 000`, a FIFO in its place): no run
    // record, so no id to draw it by. It stops being drawn, and that is said.
    let mut bad = index();
    bad[2] = RunIndexEntry {
        run_id: String::new(),
        has_run_record: false,
        error: Some("Permission denied (os error 13)".into()),
        ..bad[2].clone()
    };
    let cmds = indexed(&mut app, bad.clone());
    assert_eq!(ws(&app).selected, ["c"]);
    assert_eq!(stops(&cmds), 1);
    let note = app.shown.source.error.clone().expect("noted");
    assert_eq!(
        note,
        "run-20260101_000200-a no longer drawn: unreadable: Permission denied (os error 13)"
    );
    // Said once.
    app.shown.source.error = None;
    indexed(&mut app, bad);
    assert_eq!(app.shown.source.error, None);
    // Readable again: drawn again, and a note still shown is taken back.
    app.shown.source.error = Some(note);
    indexed(&mut app, index());
    assert_eq!(ws(&app).selected, ["c", "a"]);
    assert_eq!(app.shown.source.error, None);
}

#[test]
fn an_unreadable_newest_run_is_marked_and_the_latest_readable_one_drawn_first() {
    let (mut app, opened) = app();
    // The latest run is read first, before the index says what it is.
    assert_eq!(starts(&opened), ["run-20260101_000400-c"]);
    let mut entries = index();
    entries[0] = RunIndexEntry {
        run_id: String::new(),
        display_name: String::new(),
        has_run_record: false,
        state: RunStatus::Unknown,
        error: Some("not a .wandb file (bad header)".into()),
        ..entries[0].clone()
    };
    let cmds = indexed(&mut app, entries);
    let w = ws(&app);
    let bad = w.run("run-20260101_000400-c").expect("listed");
    assert!(bad.unreadable());
    assert!(!w.run("b").expect("b").unreadable());
    assert_eq!(w.selected, ["b"]);
    assert_eq!(
        app.shown.main_run_dir(),
        Some(PathBuf::from("/w/wandb/run-20260101_000300-b"))
    );
    assert!(stops(&cmds) > 0 || starts(&cmds).contains(&"run-20260101_000300-b".to_owned()));
}

/// A workspace of `n` runs with the list shown and the runs filter being typed.
fn filtering(n: usize) -> App {
    let (mut app, _) = app();
    let entries = (0..n)
        .rev()
        .map(|i| {
            entry(
                &format!("run-20260101_{i:06}-r{i}"),
                &format!("r{i}"),
                i as f64,
                RunStatus::Finished,
            )
        })
        .collect();
    indexed(&mut app, entries);
    app.update(Msg::char('f'));
    assert_eq!(app.filter_target, Some(crate::ui::FilterTarget::Runs));
    app
}

#[test]
fn a_long_paste_into_the_runs_filter_is_capped_and_filters_no_list_per_key() {
    // A long list: the paste (one key per character) filters nothing as it
    // comes; the next tick filters once.
    let mut app = filtering(LIVE_FILTER_RUNS + 100);
    let before = ws(&app).evaluations;
    let paste = "a".repeat(10_000);
    let mut redraws = 0;
    for m in Msg::typed(&paste) {
        redraws += usize::from(app.update(m).redraw);
    }
    let w = ws(&app);
    assert_eq!(w.filter.draft.chars().count(), MAX_PATTERN_CHARS);
    let e = w.filter.error.as_ref().expect("says it is capped");
    assert!(e.message.contains("longer than 256"), "{e}");
    assert_eq!(w.evaluations, before, "no pass over the list per key");
    // Characters past the cap change nothing on screen after the first.
    assert_eq!(redraws, MAX_PATTERN_CHARS + 1);
    assert_eq!(w.shown.len(), LIVE_FILTER_RUNS + 100);
    app.update(Msg::Tick(1.0));
    let w = ws(&app);
    assert_eq!(w.evaluations, before + LIVE_FILTER_RUNS + 100);
    assert!(w.shown.is_empty(), "no run matches 256 a's");
    // Enter keeps it, with no pass more.
    app.update(Msg::key(KeyCode::Enter));
    assert_eq!(ws(&app).evaluations, before + LIVE_FILTER_RUNS + 100);
    assert_eq!(ws(&app).filter.text, "a".repeat(MAX_PATTERN_CHARS));

    // A short list is filtered as typed: at most one pass per character kept,
    // none for the characters dropped.
    let mut app = filtering(40);
    let before = ws(&app).evaluations;
    for m in Msg::typed(&paste) {
        app.update(m);
    }
    let w = ws(&app);
    assert_eq!(w.filter.draft.chars().count(), MAX_PATTERN_CHARS);
    assert!(w.evaluations - before <= MAX_PATTERN_CHARS * 40);
    assert!(w.shown.is_empty());
}

#[test]
fn a_bracketed_paste_into_the_runs_filter_is_typed_on_one_line_and_not_applied() {
    let mut app = filtering(40);
    let fx = app.update(Msg::Paste("lr\n\x1b[31mq\tx\r\n".into()));
    assert!(fx.redraw && !fx.quit);
    // Still typing: the newline did not apply the query, `q` did not quit.
    assert_eq!(app.filter_target, Some(crate::ui::FilterTarget::Runs));
    assert_eq!(ws(&app).filter.draft, "lr q x ");
    // A paste longer than the prompt is cut where typing it would be.
    app.update(Msg::Paste("b".repeat(10_000)));
    assert_eq!(ws(&app).filter.draft.chars().count(), MAX_PATTERN_CHARS);
    // Esc restores the query in force before, as after typing.
    app.update(Msg::key(KeyCode::Esc));
    assert_eq!(app.filter_target, None);
    assert_eq!(ws(&app).filter.text, "");
}

/// Where `needle` starts on row `y` (a cell's x), reading the cells' symbols.
fn col_of(buf: &ratatui::buffer::Buffer, y: u16, needle: &str) -> Option<u16> {
    (0..buf.area.width).find(|&x| {
        let rest: String = (x..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        rest.starts_with(needle)
    })
}

#[test]
fn wide_names_keep_the_runs_lists_columns_in_place() {
    let (mut app, _) = app();
    let mut entries = index();
    entries[0].display_name = "日本語の実験ランの長い名前です🚀".into();
    entries[0].summary = serde_json::json!({"acc": 0.5})
        .as_object()
        .cloned()
        .unwrap();
    entries[2].display_name = "plain".into();
    entries[2].summary = serde_json::json!({"acc": 0.25})
        .as_object()
        .cloned()
        .unwrap();
    indexed(&mut app, entries);
    app.runs.workspace.as_mut().unwrap().summary_column = Some("acc".into());
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 60)).unwrap();
    t.draw(|f| crate::ui::render::render(f, &app)).unwrap();
    let buf = t.backend().buffer();
    let row = |name: &str| (0..60).find(|&y| col_of(buf, y, name).is_some()).unwrap();
    let (wide, plain) = (row("日"), row("plain"));
    let value = |y| col_of(buf, y, "0.5").or(col_of(buf, y, "0.25"));
    assert!(value(wide).is_some(), "the value of the wide row is drawn");
    assert_eq!(value(wide), value(plain).map(|x| x + 1));
    assert!(col_of(buf, plain, "01-01").is_some());
    assert_eq!(col_of(buf, wide, "01-01"), col_of(buf, plain, "01-01"));
}
