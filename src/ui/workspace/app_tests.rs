//! The app with a workspace: commands out for keys and index answers, and the
//! highlighted run's overview below the list.

use std::path::PathBuf;

use serde_json::json;

use super::tests::{entry, index};
use super::*;
use crate::msg::Msg;
use crate::ui::panels::Pane;
use crate::ui::{App, Cmd, FilterTarget, LiveState, Options};

pub(super) fn app() -> (App, Vec<Cmd>) {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.open_workspace(
        PathBuf::from("/w/wandb"),
        None,
        Some(PathBuf::from("/w/wandb/run-20260101_000400-c")),
        false,
    );
    let cmds = app.take_cmds();
    (app, cmds)
}

pub(super) fn starts(cmds: &[Cmd]) -> Vec<String> {
    cmds.iter()
        .filter_map(|c| match c {
            Cmd::StartReader { path, .. } => Some(
                path.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn opening_reads_the_latest_run_at_once_and_asks_for_the_index() {
    let (app, cmds) = app();
    assert_eq!(starts(&cmds), ["run-20260101_000400-c"]);
    assert!(cmds.iter().any(|c| matches!(c, Cmd::ScanIndex { .. })));
    assert!(app.runs.in_workspace_list());
    assert_eq!(app.panels.focus, Pane::Left);
    // Its help says what the keys do on the list.
    assert_eq!(app.help_for(), crate::ui::keymap::HelpFor::Workspace);
}

#[test]
fn the_index_keeps_the_latest_run_and_space_reads_another_beside_it() {
    let (mut app, _) = app();
    let fx = app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    // The latest run is kept (not read again) and saved as the selection.
    assert!(starts(&fx.cmds).is_empty(), "{:?}", fx.cmds);
    assert!(fx
        .cmds
        .iter()
        .any(|c| matches!(c, Cmd::SaveWorkspace { state, .. } if state.selected == ["c"])));
    // Down to `b` (resumed: two segments), space: both segments are read.
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    let fx = app.update(Msg::char(' '));
    let mut s = starts(&fx.cmds);
    s.sort();
    assert_eq!(s, ["run-20260101_000100-b", "run-20260101_000300-b"]);
    assert_eq!(app.runs.compare.len(), 2);
    assert!(app
        .runs
        .compare
        .iter()
        .all(|c| c.ws.as_ref().is_some_and(|t| t.key == "b")));
    assert!(app
        .runs
        .compare
        .iter()
        .all(|c| c.label.ends_with("(2 segments)")));
    // Space again: those readers stop.
    let fx = app.update(Msg::char(' '));
    assert_eq!(
        fx.cmds
            .iter()
            .filter(|c| matches!(c, Cmd::StopReader { .. }))
            .count(),
        2
    );
    assert!(app.runs.compare.is_empty());
}

#[test]
fn unselecting_the_main_run_reads_another_selected_one_as_main() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::char(' ')); // a
    assert_eq!(app.runs.compare.len(), 1);
    app.update(Msg::key(crossterm::event::KeyCode::Home));
    let fx = app.update(Msg::char(' ')); // c off
    assert_eq!(starts(&fx.cmds), ["run-20260101_000200-a"]);
    assert!(app.runs.compare.is_empty());
    // Nothing selected: no run is read.
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    let fx = app.update(Msg::char(' ')); // a off
    assert!(starts(&fx.cmds).is_empty());
    assert!(fx.cmds.iter().any(|c| matches!(c, Cmd::StopReader { .. })));
    assert_eq!(app.shown.main_run_dir(), None);
}

#[test]
fn the_index_is_asked_for_again_each_tick_one_scan_at_a_time() {
    let (mut app, _) = app();
    let scans = |cmds: &[Cmd]| {
        cmds.iter()
            .filter(|c| matches!(c, Cmd::ScanIndex { .. }))
            .count()
    };
    // One is on its way: a tick does not ask again.
    assert_eq!(scans(&app.update(Msg::Tick(1.0)).cmds), 0);
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    assert_eq!(scans(&app.update(Msg::Tick(2.0)).cmds), 1);
    // A run deleted meanwhile goes from the list (and from the selection).
    let mut less = index();
    less.remove(0);
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: less,
    });
    let ws = app.runs.workspace.as_deref().expect("workspace");
    assert_eq!(ws.runs.len(), 2);
    assert!(ws.selected.is_empty());
    // Another directory's index is not this one's.
    let fx = app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/elsewhere"),
        entries: index(),
    });
    assert!(!fx.redraw);
}

#[test]
fn enter_shows_one_run_alone_and_esc_goes_back_to_the_list() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::char(' ')); // b drawn beside c
    app.update(Msg::key(crossterm::event::KeyCode::Up));
    let fx = app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert!(!app.runs.in_workspace_list());
    // Alone: the other run's readers stop; the main run (c) stays.
    assert!(app.runs.compare.is_empty());
    assert!(starts(&fx.cmds).is_empty());
    let fx = app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(app.runs.in_workspace_list());
    assert_eq!(starts(&fx.cmds).len(), 2);
    assert_eq!(app.panels.focus, Pane::Left);
}

#[test]
fn enter_on_a_list_the_filter_emptied_does_nothing() {
    use crossterm::event::KeyCode;
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    // The main run has a chart, so a stray enter would make it full screen.
    app.update(Msg::Tagged(app.shown.tag, Box::new(rows(0..5))));
    assert!(!app.charts.shown.is_empty());
    app.update(Msg::char('f'));
    for m in Msg::typed("zzzz") {
        app.update(m);
    }
    app.update(Msg::key(KeyCode::Enter));
    app.update(Msg::char('R'));
    assert_eq!(app.panels.focus, Pane::Left);
    app.update(Msg::key(KeyCode::Enter));
    assert!(app.runs.in_workspace_list());
    assert!(!app.panels.fullscreen, "enter made a chart full screen");
}

/// `leet RUN-DIR`: the workspace of its wandb directory with that run alone.
fn alone(saved: Option<WorkspaceSaved>) -> App {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.open_workspace(
        PathBuf::from("/w/wandb"),
        saved,
        Some(PathBuf::from("/w/wandb/run-20260101_000300-b")),
        true,
    );
    app.take_cmds();
    app
}

#[test]
fn a_run_opened_alone_leaves_what_the_workspace_remembers_as_it_was() {
    for saved in [
        None,
        Some(WorkspaceSaved {
            selected: vec!["a".into(), "c".into()],
            filter: "state:fin".into(),
            ..WorkspaceSaved::default()
        }),
    ] {
        let mut app = alone(saved.clone());
        app.update(Msg::key(crossterm::event::KeyCode::Down));
        let fx = app.update(Msg::char('q'));
        assert!(fx.quit);
        assert!(
            !fx.cmds
                .iter()
                .any(|c| matches!(c, Cmd::SaveWorkspace { .. })),
            "{saved:?}"
        );
        assert_eq!(app.runs.workspace_to_save(), None, "{saved:?}");
    }
    // esc goes to the list: from then on the workspace is in use and saved.
    let mut app = alone(None);
    let fx = app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(app.runs.in_workspace_list());
    assert!(fx.cmds.iter().any(|c| matches!(c, Cmd::ScanIndex { .. })));
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let (_, state) = app.runs.workspace_to_save().expect("a state to write");
    assert_eq!(state.selected, ["b"]);
}

#[test]
#[allow(
    clippy::uninlined_format_args,
    reason = "the pad width beside the name reads plainer"
)]
fn fifty_drawn_runs_share_one_point_budget() {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.open_workspace(PathBuf::from("/w/wandb"), None, None, false);
    let entries: Vec<RunIndexEntry> = (0..60)
        .rev()
        .map(|i| {
            entry(
                &format!("run-20260101_{:06}-r{i}", i),
                &format!("r{i}"),
                f64::from(i),
                RunStatus::Finished,
            )
        })
        .collect();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    // The newest is selected by the first index; 49 more.
    for _ in 0..49 {
        app.update(Msg::key(crossterm::event::KeyCode::Down));
        app.update(Msg::char(' '));
    }
    assert_eq!(
        app.runs.workspace.as_deref().map(|w| w.selected.len()),
        Some(50)
    );
    assert_eq!(app.runs.compare.len(), 49);
    // Each compared run's store is capped at its share, so that together they stay
    // within one run's budget (two filled well past their share show it).
    let budget = crate::store::metrics::DEFAULT_BUDGET;
    let share = budget / 49;
    for c in app.runs.compare.iter_mut().take(2) {
        for k in 0..100 {
            for s in 0..4000 {
                c.run.metrics.push(&format!("m{k}"), f64::from(s), 1.0);
            }
        }
        let held = c.run.metrics.stored_points();
        assert!(
            held <= share + share / 8,
            "{held} points held, share {share}"
        );
        assert!(held >= share / 4, "{held} points held, share {share}");
    }
}

#[test]
fn a_click_on_a_row_highlights_that_run_and_the_wheel_moves_it() {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let left = app.screen.areas.left.expect("runs pane");
    let at = |kind, row: u16| {
        Msg::Mouse(MouseEvent {
            kind,
            column: left.x + 2,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    // Title, column header, then the rows: the third row is `a`.
    app.update(at(MouseEventKind::Down(MouseButton::Left), left.y + 4));
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert_eq!(ws.cursor_run().map(|r| r.key.as_str()), Some("a"));
    app.update(at(MouseEventKind::ScrollUp, left.y + 4));
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert_eq!(ws.cursor_run().map(|r| r.key.as_str()), Some("b"));
    // Below the rows: nothing changes.
    app.update(at(MouseEventKind::Down(MouseButton::Left), left.y + 20));
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert_eq!(ws.cursor_run().map(|r| r.key.as_str()), Some("b"));
}

/// A reader's batch of rows at `steps`, each logging `loss`.
fn rows(steps: std::ops::Range<u32>) -> Msg {
    use crate::decode::event::{Event, Events, Row};
    let mut ev = Events {
        keys: vec!["loss".into()],
        ..Events::default()
    };
    for (at, s) in (0..).zip(steps) {
        ev.values.push((0, f64::from(s)));
        ev.list.push(Event::Row(Row {
            step: Some(f64::from(s)),
            values: at..at + 1,
            complete: true,
            ..Row::default()
        }));
    }
    Msg::Run(crate::msg::RunBatch {
        events: vec![ev],
        ..crate::msg::RunBatch::default()
    })
}

#[test]
fn a_resumed_segment_read_before_the_later_one_rewound_is_read_again_with_its_cut() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    // `b` drawn: its segments 000100 (steps 0..30) and 000300 (0..20 again).
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::char(' '));
    let tag_of = |app: &App, dir: &str| {
        let c = app.runs.compare.iter().find(|c| c.dir.ends_with(dir));
        c.map(|c| c.tag).expect("segment read")
    };
    let (old, new) = ("run-20260101_000100-b", "run-20260101_000300-b");
    // The older segment's reader comes first: nothing says yet where it stops.
    let first = tag_of(&app, old);
    let fx = app.update(Msg::Tagged(first, Box::new(rows(0..30))));
    assert!(starts(&fx.cmds).is_empty());
    // The newer one starts again at 0: the older one is read again, cut at 0.
    let fx = app.update(Msg::Tagged(tag_of(&app, new), Box::new(rows(0..20))));
    assert_eq!(starts(&fx.cmds), [old]);
    assert!(fx
        .cmds
        .iter()
        .any(|c| matches!(c, Cmd::StopReader { tag } if *tag == first)));
    let again = tag_of(&app, old);
    assert_ne!(again, first);
    let seg = |app: &App, dir: &str| {
        let c = app.runs.compare.iter().find(|c| c.dir.ends_with(dir));
        c.map(|c| c.run.clone()).expect("segment read")
    };
    assert_eq!(seg(&app, old).stitch.cut, Some(0.0));
    assert!(seg(&app, old).metrics.is_empty());
    // Its first step is still known meanwhile (the cuts before it stay put).
    assert_eq!(seg(&app, old).stitch.first, Some(0.0));
    // The stale reader's rows are dropped, the new one's charted nowhere; the
    // newer segment is whole.
    app.update(Msg::Tagged(first, Box::new(rows(0..30))));
    let fx = app.update(Msg::Tagged(again, Box::new(rows(0..30))));
    assert!(starts(&fx.cmds).is_empty(), "read once more, no more");
    assert!(seg(&app, old).metrics.is_empty());
    assert_eq!(seg(&app, old).history_rows, 30);
    let newer = seg(&app, new);
    assert_eq!(newer.stitch.cut, None);
    assert_eq!(newer.metrics.get("loss").map(|s| s.count()), Some(20));
    // One column group in the statistics table, named with its segments.
    let runs = app.stats_runs();
    assert_eq!(runs.len(), 2, "the main run, and `b` once");
    assert_eq!(runs[1].label, "name-b (2 segments)");
}

// ---------------------------------------------------------------------------
// The highlighted run's overview below the list.

/// The overview's (key, value) items of one section.
fn section_items(app: &App, name: &str) -> Vec<(String, String)> {
    let ov = &app.panes.overview;
    let i = ov.sections.iter().position(|s| s.name == name);
    i.map(|i| ov.section_rows(i))
        .unwrap_or_default()
        .iter()
        .filter_map(|r| match r {
            crate::ui::Row::Item(k, v) => Some((k.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn moving_the_cursor_shows_that_run_s_overview_and_reads_nothing() {
    use crossterm::event::KeyCode;
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let main = app.shown.main_run_dir();
    let config = |app: &App| section_items(app, "Config");
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    // The latest run, `c`, highlighted: its config from the index.
    assert_eq!(config(&app), [pair("lr", "0.001"), pair("seed", "1")]);
    // Down to `b` (resumed: its segments' config folded), then `a`: each one's
    // overview, and no reader started or stopped, nothing else drawn.
    for (want, late) in [("b", true), ("a", false)] {
        let fx = app.update(Msg::key(KeyCode::Down));
        assert!(fx.redraw);
        assert!(
            !fx.cmds.iter().any(|c| matches!(
                c,
                Cmd::StartReader { .. } | Cmd::StopReader { .. } | Cmd::SaveWorkspace { .. }
            )),
            "{want}: {:?}",
            fx.cmds
        );
        assert!(app.runs.compare.is_empty(), "{want}");
        assert_eq!(app.shown.main_run_dir(), main, "{want}");
        assert_eq!(config(&app).contains(&pair("late", "1")), late, "{want}");
        let name = app.panes.overview.facts().first().cloned();
        assert_eq!(
            name,
            Some(crate::ui::Row::Item("Name".into(), format!("name-{want}")))
        );
    }
    // Its pinned rows: the state as the list decides it, the failed run's id.
    let ws = app.runs.workspace.as_deref().expect("ws");
    let p = ws.cursor_run().expect("a").pinned(app.shown.now);
    assert_eq!((p.state, p.id.as_str()), (Some(LiveState::Failed(-1)), "a"));
}

#[test]
fn the_overview_filter_tab_and_scroll_keys_work_on_the_highlighted_run() {
    use crossterm::event::KeyCode;
    let (mut app, _) = app();
    let mut entries = index();
    let summary: serde_json::Map<String, serde_json::Value> =
        (0..80).map(|i| (format!("m{i:02}"), json!(i))).collect();
    entries[0].summary = summary;
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    let summary = |app: &App| {
        let i = app
            .panes
            .overview
            .sections
            .iter()
            .position(|s| s.name == "Summary");
        i.map(|i| app.panes.overview.sections[i].clone())
            .expect("summary")
    };
    // `tab` from the list goes into the overview's sections (Config, then
    // Summary); `down` scrolls Summary, not the list.
    app.update(Msg::key(KeyCode::Tab));
    app.update(Msg::key(KeyCode::Tab));
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert!(ws.overview.focus);
    assert_eq!(
        app.panes.overview.sections[app.panes.overview.active].name,
        "Summary"
    );
    app.update(Msg::key(KeyCode::Down));
    assert_eq!(summary(&app).scroll, 1);
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert_eq!(ws.cursor, 0);
    // `esc`: back to the list, whose cursor the keys move again.
    app.update(Msg::key(KeyCode::Esc));
    app.update(Msg::key(KeyCode::Down));
    let ws = app.runs.workspace.as_deref().expect("ws");
    assert!(!ws.overview.focus);
    assert_eq!(ws.cursor, 1);
    app.update(Msg::key(KeyCode::Up));
    // `o` filters the overview as typed; the filter stays as the cursor moves.
    app.update(Msg::char('o'));
    assert_eq!(app.filter_target, Some(FilterTarget::Overview));
    for m in Msg::typed("m7") {
        app.update(m);
    }
    app.update(Msg::key(KeyCode::Enter));
    assert_eq!(summary(&app).len, 10);
    assert_eq!(section_items(&app, "Config").len(), 0);
    app.update(Msg::key(KeyCode::Down));
    assert_eq!(summary(&app).len, 0);
    assert_eq!(app.panes.overview.filter.text, "m7");
}

#[test]
fn another_main_run_starts_the_view_afresh_and_alt_r_keeps_it() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    app.charts.zoom.insert("loss".to_owned(), (1.0, 2.0));
    // alt+r: the main run read again from its first byte, the view kept.
    let alt_r = Msg::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::ALT));
    let fx = app.update(alt_r);
    assert_eq!(starts(&fx.cmds), ["run-20260101_000400-c"]);
    assert!(app.charts.zoom.contains_key("loss"));
    // `a` drawn, then `c` unselected: `a` becomes the main run, its view afresh.
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::char(' '));
    app.update(Msg::key(KeyCode::Home));
    let fx = app.update(Msg::char(' '));
    assert_eq!(starts(&fx.cmds), ["run-20260101_000200-a"]);
    assert!(app.charts.zoom.is_empty());
    // The list keeps the focus: what starts afresh is the charts' view.
    assert_eq!(app.panels.focus, Pane::Left);
}

fn read(read_to: u64, file_len: u64) -> Box<Msg> {
    Box::new(Msg::Run(crate::msg::RunBatch {
        read_to,
        file_len,
        ..crate::msg::RunBatch::default()
    }))
}

#[test]
fn a_drawn_run_counts_as_read_once_a_batch_reaches_the_end_of_its_file() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    // `c` is the main run; `b`'s two segments are drawn beside it.
    app.update(Msg::key(crossterm::event::KeyCode::Down));
    app.update(Msg::char(' '));
    let tags: Vec<u64> = app.runs.compare.iter().map(|c| c.tag).collect();
    assert_eq!(tags.len(), 2);
    let drawn_read = |app: &App| app.runs.drawn_read(&app.shown.source);
    assert_eq!(drawn_read(&app), 0);
    let main = app.shown.tag;
    app.update(Msg::Tagged(main, read(10, 100)));
    assert_eq!(drawn_read(&app), 0);
    app.update(Msg::Tagged(main, read(100, 100)));
    assert_eq!(drawn_read(&app), 1);
    app.update(Msg::Tagged(tags[0], read(50, 200)));
    assert_eq!(drawn_read(&app), 1);
    app.update(Msg::Tagged(tags[0], read(200, 200)));
    app.update(Msg::Tagged(tags[1], read(30, 30)));
    assert_eq!(drawn_read(&app), 3);
    // Unselected: its segments are no longer drawn, nor counted.
    app.update(Msg::char(' '));
    assert_eq!(drawn_read(&app), 1);
}

/// `i` in the workspace's list inspects the run looked at: the one under the
/// cursor while the list has the keys, else the pinned one (it opened the main
/// run's file, whichever was highlighted).
#[test]
fn i_inspects_the_highlighted_run_else_the_pinned_one() {
    use crossterm::event::KeyCode;
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let opened = |app: &mut App| {
        let fx = app.update(Msg::char('i'));
        let path = fx.cmds.iter().find_map(|c| match c {
            Cmd::OpenRecords { path } => Some(path.clone()),
            _ => None,
        });
        let cmds = format!("{:?}", fx.cmds);
        app.update(Msg::key(KeyCode::Esc));
        path.unwrap_or_else(|| panic!("the inspector opened: {cmds}"))
    };
    app.update(Msg::key(KeyCode::Down));
    app.update(Msg::key(KeyCode::Down));
    assert_eq!(
        opened(&mut app),
        PathBuf::from("/w/wandb/run-20260101_000200-a/run-a.wandb")
    );
    // `a` pinned, the keys on the charts, the cursor moved on: still `a`.
    app.update(Msg::char(' '));
    app.update(Msg::char('p'));
    app.update(Msg::key(KeyCode::Up));
    app.panels.focus = Pane::Grid;
    assert_eq!(
        opened(&mut app),
        PathBuf::from("/w/wandb/run-20260101_000200-a/run-a.wandb")
    );
}

/// A workspace of `n` runs `r0` (oldest) … `r{n-1}`, the newest drawn.
fn flat(n: u32) -> App {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    app.open_workspace(PathBuf::from("/w/wandb"), None, None, false);
    let entries: Vec<RunIndexEntry> = (0..n)
        .rev()
        .map(|i| {
            let name = format!("run-20260101_{i:06}-r{i}");
            entry(&name, &format!("r{i}"), f64::from(i), RunStatus::Finished)
        })
        .collect();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    app
}

/// The drawn runs' workspace keys and colours (of the default palette's 8), as
/// the charts draw them; the list's markers and the statistics' heads agree.
fn drawn_colors(app: &App) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = crate::ui::charts::model::drawn_runs(app)
        .iter()
        .filter_map(|d| Some((d.key?.to_owned(), d.color % 8)))
        .collect();
    v.sort();
    for (k, c) in &v {
        let marker = app.runs.key_color(k).map(|c| c % 8);
        assert_eq!(marker, Some(*c), "{k}: the list's marker");
    }
    let mut heads: Vec<usize> = app.stats_runs().iter().map(|r| r.color % 8).collect();
    let mut lines: Vec<usize> = v.iter().map(|&(_, c)| c).collect();
    heads.sort_unstable();
    lines.sort_unstable();
    assert_eq!(heads, lines, "the statistics' column heads");
    v
}

#[test]
fn runs_eight_apart_drawn_together_get_different_colours_and_keep_them() {
    use crossterm::event::KeyCode::{Down, End, Home};
    let mut app = flat(11);
    app.update(Msg::char(' ')); // r10 off
    app.update(Msg::key(Down));
    app.update(Msg::key(Down));
    app.update(Msg::char(' ')); // r8
    app.update(Msg::key(End));
    app.update(Msg::char(' ')); // r0
    let two = drawn_colors(&app);
    assert_eq!(two.len(), 2, "{two:?}");
    assert_ne!(two[0].1, two[1].1, "{two:?}");
    // Drawing another run leaves theirs as they were.
    app.update(Msg::key(Home));
    app.update(Msg::char(' ')); // r10
    let three = drawn_colors(&app);
    assert_eq!(three.len(), 3);
    for kc in &two {
        assert!(three.contains(kc), "{kc:?} recoloured: {three:?}");
    }
    // r10 keeps its W&B colour (its index, free); r8 keeps its own when r0 goes.
    assert!(three.contains(&("r10".to_owned(), 10 % 8)), "{three:?}");
    app.update(Msg::key(End));
    app.update(Msg::char(' ')); // r0 off
    let left = drawn_colors(&app);
    assert_eq!(left.len(), 2);
    for kc in &left {
        assert!(three.contains(kc), "{kc:?} recoloured: {three:?}");
    }
}

#[test]
fn outside_a_workspace_a_compared_run_keeps_its_colour_when_another_goes() {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    for n in ["a", "b", "c"] {
        let dir = PathBuf::from(format!("/w/wandb/run-{n}"));
        app.request_compare(dir.clone(), dir);
    }
    let colors = |app: &App| -> Vec<usize> {
        let mut v: Vec<usize> = (app.runs.compare.iter())
            .map(|c| app.runs.compared_color(c))
            .collect();
        v.insert(0, app.runs.main_color());
        v
    };
    assert_eq!(colors(&app), [0, 1, 2, 3]);
    // `a` goes: `b` and `c` keep theirs; the next run drawn takes the free one.
    app.runs.compare.remove(0);
    app.update(Msg::Resize(120, 40));
    assert_eq!(colors(&app), [0, 2, 3]);
    let dir = PathBuf::from("/w/wandb/run-d");
    app.request_compare(dir.clone(), dir);
    assert_eq!(colors(&app), [0, 2, 3, 1]);
}

#[test]
fn the_index_is_asked_with_the_stale_after_of_the_options() {
    let mut app = App::new(Options {
        stale_after: 5.0,
        ..Options::default()
    });
    app.update(Msg::Resize(120, 40));
    app.open_workspace(PathBuf::from("/w/wandb"), None, None, false);
    let cmds = app.take_cmds();
    let asked: Vec<_> = cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::ScanIndex { stale_after, .. } => Some(*stale_after),
            _ => None,
        })
        .collect();
    assert_eq!(asked, [std::time::Duration::from_secs(5)]);
}

#[test]
fn the_pickers_cap_on_compared_runs_goes_with_the_picker() {
    let mut app = App::new(Options::default());
    app.update(Msg::Resize(120, 40));
    let dir = |i: usize| PathBuf::from(format!("/w/wandb/run-20260101_00000{i}-r{i}"));
    app.open_workspace(PathBuf::from("/w/wandb"), None, Some(dir(0)), true);
    app.shown.source.file = Some(dir(0).join("run-r0.wandb"));
    app.update(Msg::char('R'));
    let runs = (0..9)
        .map(|i| crate::msg::RunEntry {
            dir: dir(i),
            id: format!("r{i}"),
            ..Default::default()
        })
        .collect();
    app.update(Msg::RunsListed {
        run_dir: dir(0),
        runs,
    });
    for _ in 0..8 {
        app.update(Msg::key(crossterm::event::KeyCode::Down));
        app.update(Msg::char(' '));
    }
    let error = app.shown.source.error.clone().unwrap_or_default();
    assert!(error.starts_with("at most 7 runs"), "{error:?}");
    app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert_eq!(app.shown.source.error, None);
    app.update(Msg::key(crossterm::event::KeyCode::Esc));
    assert!(app.runs.in_workspace_list());
    assert_eq!(app.shown.source.error, None);
}

/// A config key with escape sequences in it is drawn sanitized; typed as drawn,
/// `G` groups by it.
#[test]
fn a_key_is_found_as_it_is_drawn() {
    let (mut app, _) = app();
    let mut entries = index();
    for (i, e) in entries.iter_mut().enumerate() {
        e.config.insert(
            "grp\x1b[31m".into(),
            serde_json::json!(format!("g{}", i % 2)),
        );
    }
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    app.update(Msg::char('G'));
    app.update(Msg::Paste("grp".into()));
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert_eq!(app.shown.source.error, None);
    let ws = app.runs.workspace.clone().expect("workspace");
    assert_eq!(ws.group_by.as_deref(), Some("grp\x1b[31m"));
    // Its groups are named as the key is drawn.
    assert_eq!(ws.group_of(&ws.runs[0]).as_deref(), Some("grp=g0"));
}

#[test]
fn group_and_column_prompts_refuse_keys_no_run_has() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let prompt = |app: &mut App, key: char, text: &str| {
        app.shown.source.error = None;
        app.update(Msg::char(key));
        app.update(Msg::Paste(text.into()));
        app.update(Msg::key(crossterm::event::KeyCode::Enter));
        app.shown.source.error.clone()
    };
    let ws = |app: &App| app.runs.workspace.clone().expect("workspace");
    let e = prompt(&mut app, 'G', "nope");
    assert_eq!(e.as_deref(), Some("no run has config key nope"));
    assert_eq!(ws(&app).group_by, None);
    assert_eq!(prompt(&mut app, 'G', "lr"), None);
    assert_eq!(ws(&app).group_by.as_deref(), Some("lr"));
    let e = prompt(&mut app, 'G', "lr seed");
    assert!(e.is_some_and(|e| e.starts_with("one key:")));
    assert_eq!(ws(&app).group_by.as_deref(), Some("lr"));
    let e = prompt(&mut app, 'v', "nope");
    assert_eq!(e.as_deref(), Some("no run has summary key nope"));
    assert_eq!(ws(&app).summary_column, None);
    assert_eq!(app.filter_target, None);
    // A key that means something ends what the refused one said.
    app.update(Msg::char('G'));
    app.update(Msg::Paste("seed".into()));
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    assert_eq!(app.shown.source.error, None);
    assert_eq!(ws(&app).group_by.as_deref(), Some("seed"));
}

/// A save of the workspace's state that fails says so in the status bar, once
/// until a save succeeds again (the quit says it once more).
#[test]
fn a_failed_state_save_is_told_once_until_one_succeeds() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    let failed = |generation| Msg::WorkspaceWritten {
        generation,
        error: Some("/nowhere/leet/workspace-1.json: Permission denied".into()),
    };
    assert!(app.update(failed(1)).redraw);
    assert_eq!(
        app.settings_note(),
        Some("workspace state not saved: /nowhere/leet/workspace-1.json: Permission denied")
    );
    // A key ends the note; the same failure again is not told again.
    app.update(Msg::Key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Char('~'),
    )));
    assert_eq!(app.settings_note(), None);
    app.update(failed(2));
    assert_eq!(app.settings_note(), None);
    // Saved, then failing again: told again.
    app.update(Msg::WorkspaceWritten {
        generation: 3,
        error: None,
    });
    app.update(failed(4));
    assert!(app.settings_note().is_some());
}

/// A drawn run whose directory is renamed: its reader fails and the directory
/// is gone, so it is let go with a note; the index then finds the same run under
/// its new name and draws it again, and the note of its removal goes with that.
#[test]
fn a_drawn_run_renamed_is_drawn_on_unsaid_and_one_deleted_is_said_once() {
    let (mut app, _) = app();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: index(),
    });
    // Draw `a` beside the latest run.
    let at = app
        .runs
        .workspace
        .as_ref()
        .unwrap()
        .shown
        .iter()
        .position(|&i| app.runs.workspace.as_ref().unwrap().runs[i].key == "a");
    for _ in 0..at.unwrap() {
        app.update(Msg::key(crossterm::event::KeyCode::Down));
    }
    app.update(Msg::char(' '));
    let old = PathBuf::from("/w/wandb/run-20260101_000200-a");
    assert!(app.runs.is_compared(&old).is_some());
    app.take_cmds();
    // Renamed: its reader finds its file gone. The index says what became of
    // it: nothing is said meanwhile.
    let tag = (app.runs.compare.iter())
        .find(|c| c.dir == old)
        .map(|c| c.tag)
        .expect("drawn");
    let fx = app.update(Msg::Tagged(
        tag,
        Box::new(Msg::SourceError("No such file or directory".into())),
    ));
    assert!(fx.cmds.is_empty(), "{:?}", fx.cmds);
    assert_eq!(app.shown.source.error, None);
    // The next index has it under its new name: drawn from there, never said
    // to be removed.
    let mut entries = index();
    entries[2] = entry("run-20260101_000200-a-moved", "a", 200.0, RunStatus::Failed);
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    let moved = PathBuf::from("/w/wandb/run-20260101_000200-a-moved");
    assert!(
        app.runs.is_compared(&moved).is_some(),
        "{:?}",
        app.take_cmds()
    );
    assert!(app.runs.is_compared(&old).is_none());
    assert_eq!(app.shown.source.error, None);
    // Deleted: let go, and said once.
    let without: Vec<_> = index().into_iter().filter(|e| e.run_id != "a").collect();
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries: without,
    });
    assert!(app.runs.is_compared(&moved).is_none());
    let note = app.shown.source.error.clone().expect("a note");
    assert_eq!(
        note,
        "run-20260101_000200-a-moved no longer drawn: its directory is gone"
    );
    // Back where it was: drawn again, the note taken back.
    let mut entries = index();
    entries[2] = entry("run-20260101_000200-a-moved", "a", 200.0, RunStatus::Failed);
    app.update(Msg::Indexed {
        wandb_dir: PathBuf::from("/w/wandb"),
        entries,
    });
    assert!(app.runs.is_compared(&moved).is_some());
    assert_eq!(app.shown.source.error, None);
}
