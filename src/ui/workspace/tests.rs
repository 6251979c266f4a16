use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;

/// An index entry for run `id` in directory `dir` started at `t`.
pub(super) fn entry(dir: &str, id: &str, t: f64, state: RunStatus) -> RunIndexEntry {
    RunIndexEntry {
        dir: PathBuf::from(format!("/w/wandb/{dir}")),
        file: Some(PathBuf::from(format!("/w/wandb/{dir}/run-{id}.wandb"))),
        run_id: id.to_owned(),
        display_name: format!("name-{id}"),
        start_time: Some(t),
        state,
        has_run_record: true,
        ..RunIndexEntry::default()
    }
}

fn with_config(mut e: RunIndexEntry, cfg: serde_json::Value) -> RunIndexEntry {
    if let serde_json::Value::Object(m) = cfg {
        e.config = m;
    }
    e
}

/// Newest first, as the index gives them; `r2` resumed `r1`'s id... no: `b` has
/// two segments.
pub(super) fn index() -> Vec<RunIndexEntry> {
    vec![
        with_config(
            entry("run-20260101_000400-c", "c", 400.0, RunStatus::Running),
            json!({"lr": 0.001, "seed": 1}),
        ),
        with_config(
            entry("run-20260101_000300-b", "b", 300.0, RunStatus::Finished),
            json!({"lr": 0.01, "seed": 0, "late": 1}),
        ),
        with_config(
            entry("run-20260101_000200-a", "a", 200.0, RunStatus::Failed),
            json!({"lr": 0.001, "seed": 0}),
        ),
        with_config(
            entry("run-20260101_000100-b", "b", 100.0, RunStatus::Crashed),
            json!({"lr": 0.01, "seed": 0}),
        ),
    ]
}

fn ws() -> Workspace {
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    w.set_index(index(), None);
    w
}

fn keys(w: &Workspace) -> Vec<&str> {
    w.shown.iter().map(|&i| w.runs[i].key.as_str()).collect()
}

#[test]
fn runs_sharing_an_id_are_one_entry_with_its_segments_newest_first() {
    let w = ws();
    assert_eq!(keys(&w), ["c", "b", "a"]);
    let b = w.run("b").expect("b");
    assert!(b.resumed());
    assert_eq!(b.segments.len(), 2);
    // Segments oldest first; state from the newest; start from the first.
    assert_eq!(
        b.segments[0].dir,
        Path::new("/w/wandb/run-20260101_000100-b")
    );
    assert_eq!(b.state(), RunStatus::Finished);
    assert_eq!(b.start(), Some(100.0));
    // Config folded in order: the newer segment's keys win, later keys are kept.
    assert_eq!(b.config_value("late"), Some(&json!(1)));
    // Colours by position oldest first: stable as runs are added.
    let (a, c) = (w.run("a").expect("a"), w.run("c").expect("c"));
    assert!(
        b.color < a.color && a.color < c.color,
        "{} {} {}",
        b.color,
        a.color,
        c.color
    );
}

#[test]
fn the_first_index_selects_the_latest_run_and_a_saved_selection_wins() {
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    assert!(w.set_index(index(), Some(Path::new("/w/wandb/run-20260101_000200-a"))));
    assert_eq!(w.selected, ["a"]);
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("a"));
    // A later index keeps the selection.
    assert!(!w.set_index(index(), None));
    assert_eq!(w.selected, ["a"]);

    let saved = WorkspaceSaved {
        selected: vec!["b".into(), "gone".into(), "c".into()],
        pinned: Some("c".into()),
        filter: "state:fin".into(),
        filter_glob: false,
        group_by: Some("lr".into()),
        summary_column: Some("val/loss".into()),
    };
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved));
    w.set_index(index(), Some(Path::new("/w/wandb/run-20260101_000200-a")));
    // A run deleted since is let go; the rest as saved.
    assert_eq!(w.selected, ["b", "c"]);
    assert_eq!(w.pinned.as_deref(), Some("c"));
    assert_eq!(keys(&w), ["b"]);
    assert_eq!(w.saved().filter, "state:fin");
    assert_eq!(w.group_by.as_deref(), Some("lr"));
    // A filter typed and not yet kept with `enter` is not what is saved.
    w.filter.start();
    let _ = w.filter.set_draft("state:run".into());
    assert_eq!(w.saved().filter, "state:fin");
    w.filter.apply();
    assert_eq!(w.saved().filter, "state:run");
}

#[test]
fn a_remembered_selection_with_no_run_left_falls_back_to_the_latest_run() {
    // Every remembered run gone (a reused wandb directory), or an empty selection
    // saved: the latest run is drawn, never an empty workspace.
    for selected in [vec!["gone".to_owned(), "also-gone".to_owned()], vec![]] {
        let saved = WorkspaceSaved {
            selected: selected.clone(),
            pinned: selected.first().cloned(),
            ..WorkspaceSaved::default()
        };
        let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved));
        assert!(
            w.set_index(index(), Some(Path::new("/w/wandb/run-20260101_000400-c")))
                || selected.is_empty()
        );
        assert_eq!(w.selected, ["c"], "{selected:?}");
        assert_eq!(w.pinned, None);
        // A later index with every selected run gone leaves the choice to the user.
        w.selected.clear();
        w.set_index(index(), None);
        assert!(w.selected.is_empty());
    }
}

#[test]
fn the_state_is_written_only_when_it_changed_and_after_the_first_index() {
    let saved = WorkspaceSaved {
        selected: vec!["b".into()],
        ..WorkspaceSaved::default()
    };
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved.clone()));
    // Before any index (a run shown alone): nothing to write, whatever it holds.
    w.selected.clear();
    assert_eq!(w.take_save(), None);
    assert_eq!(w.final_save(), None);
    w.selected = vec!["b".into()];
    w.set_index(index(), None);
    assert_eq!(w.take_save(), None, "unchanged since loaded");
    assert_eq!(w.final_save(), None);
    w.selected.push("a".into());
    assert_eq!(
        w.take_save().map(|s| s.selected),
        Some(vec!["b".into(), "a".into()])
    );
    assert_eq!(w.take_save(), None, "already handed over");
    // Back to what was loaded: written again (the file holds the change).
    w.selected.pop();
    assert_eq!(w.take_save(), Some(saved.clone()));
    // On quit the last state is written once anything was handed over.
    assert_eq!(w.final_save(), Some(saved));
}

#[test]
fn a_saved_filter_that_no_longer_parses_is_dropped() {
    let saved = WorkspaceSaved {
        filter: "name:\"open".into(),
        ..WorkspaceSaved::default()
    };
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved));
    w.set_index(index(), None);
    assert!(!w.filter.is_active());
    assert_eq!(keys(&w).len(), 3);
}

#[test]
fn select_pin_and_the_drawing_order_puts_the_pinned_run_last() {
    let mut w = ws();
    w.selected.clear();
    w.cursor = 0; // c
    w.toggle_cursor().expect("select c");
    w.cursor = 1; // b
    w.pin_cursor().expect("pin b selects it");
    w.cursor = 2; // a
    w.toggle_cursor().expect("select a");
    assert_eq!(w.selected, ["c", "b", "a"]);
    assert_eq!(w.pinned.as_deref(), Some("b"));
    let (dirs, primary) = w.wanted(None);
    let names: Vec<String> = dirs
        .iter()
        .map(|d| {
            d.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "run-20260101_000400-c",
            "run-20260101_000200-a",
            "run-20260101_000100-b",
            "run-20260101_000300-b"
        ]
    );
    // The main run: the pinned run's newest segment, unless the one read is kept.
    assert_eq!(
        primary.as_deref(),
        Some(Path::new("/w/wandb/run-20260101_000300-b"))
    );
    let keep = Path::new("/w/wandb/run-20260101_000400-c");
    assert_eq!(w.wanted(Some(keep)).1.as_deref(), Some(keep));
    // Unselecting the pinned run unpins it.
    w.cursor = 1;
    w.toggle_cursor().expect("unselect b");
    assert_eq!(w.pinned, None);
    // The pin key on the pinned run unpins, and keeps it selected.
    w.cursor = 0;
    w.pin_cursor().expect("pin");
    w.pin_cursor().expect("unpin");
    assert_eq!(w.pinned, None);
    assert!(w.is_selected("c"));
}

#[test]
fn the_single_run_view_reads_that_run_and_its_segments_only() {
    let mut w = ws();
    w.selected = vec!["c".into(), "a".into()];
    w.view = WsView::Run(PathBuf::from("/w/wandb/run-20260101_000300-b"));
    let (dirs, primary) = w.wanted(None);
    assert_eq!(dirs.len(), 2);
    assert_eq!(
        primary.as_deref(),
        Some(Path::new("/w/wandb/run-20260101_000300-b"))
    );
}

#[test]
fn the_filter_applies_live_and_a_bad_query_says_where() {
    let mut w = ws();
    w.filter.start();
    for c in "cfg.lr>=0.005 | state:run".chars() {
        w.filter.push(c);
        w.refilter();
    }
    assert_eq!(keys(&w), ["c", "b"]);
    // A bad draft keeps the last good query in force and says what is wrong.
    w.filter.push(' ');
    w.filter.push('"');
    w.refilter();
    let e = w.filter.error.clone().expect("unclosed quote");
    assert_eq!(e.at, 26, "{e}");
    assert_eq!(keys(&w), ["c", "b"]);
    // Tab: glob mode (the draft applies again in it).
    w.filter.set_draft("name:name-?".into());
    w.filter.toggle_glob();
    w.refilter();
    assert!(w.filter.glob);
    assert_eq!(keys(&w), ["c", "b", "a"]);
    // Esc restores the query in force before typing.
    w.filter.cancel();
    w.refilter();
    assert_eq!(w.filter.text, "");
    assert!(!w.filter.glob);
    assert_eq!(keys(&w).len(), 3);
}

#[test]
fn groups_by_a_config_value_and_offers_the_keys_that_differ() {
    let mut w = ws();
    w.selected = vec!["c".into(), "b".into(), "a".into()];
    w.group_by = Some("lr".into());
    let g: Vec<Option<String>> = ["c", "b", "a"]
        .iter()
        .map(|k| w.group_of(w.run(k).expect("run")))
        .collect();
    assert_eq!(g[0], g[2]);
    assert_ne!(g[0], g[1]);
    assert_eq!(g[0].as_deref(), Some("lr=0.001"));
    // `late` only one run has; `lr` and `seed` differ.
    assert_eq!(w.differing_config_keys(), ["late", "lr", "seed"]);
}

#[test]
fn a_number_and_the_same_digits_as_text_are_two_groups_as_the_prompt_says() {
    let mut w = ws();
    w.selected = vec!["c".into(), "b".into(), "a".into()];
    w.group_by = Some("bs".into());
    let values = [json!(32), json!("32"), json!("adam")];
    for (k, v) in ["c", "b", "a"].iter().zip(values) {
        let i = w.runs.iter().position(|r| r.key == *k).expect("run");
        w.runs[i].config = json!({ "bs": v });
    }
    assert!(w.differing_config_keys().contains(&"bs".to_owned()));
    let g: Vec<Option<String>> = ["c", "b", "a"]
        .iter()
        .map(|k| w.group_of(w.run(k).expect("run")))
        .collect();
    assert_eq!(g[0].as_deref(), Some("bs=32"));
    assert_eq!(g[1].as_deref(), Some("bs=\"32\""));
    // A string that reads as no other value is written bare.
    assert_eq!(g[2].as_deref(), Some("bs=adam"));
    // The mark of a missing value, as text, is not the missing value.
    w.runs[0].config = json!({ "bs": "–" });
    let r = &w.runs[0];
    assert_eq!(w.group_of(r).as_deref(), Some("bs=\"–\""));
    w.runs[0].config = json!({});
    assert_eq!(w.group_of(&w.runs[0]).as_deref(), Some("bs=–"));
}

#[test]
fn a_run_without_a_run_record_takes_its_id_from_its_directory() {
    let run = |dir: &str, id: &str| WsRun {
        dir_name: dir.into(),
        segments: vec![RunIndexEntry {
            run_id: id.into(),
            ..RunIndexEntry::default()
        }],
        ..WsRun::default()
    };
    assert_eq!(run("offline-run-20261201_000000-norun", "").id(), "norun");
    assert_eq!(run("run-20261201_000000-ab12cd34", "").id(), "ab12cd34");
    assert_eq!(run("run-20261201_000000-ab12cd34", "real").id(), "real");
    // A directory W&B did not name has no id to give.
    assert_eq!(run("my-run", "").id(), "");
    assert_eq!(run("run-2026-x", "").id(), "");
    assert_eq!(run("offline-run-20261201_000000-a\x1b[2Jb", "").id(), "ab");
}

/// A name with nothing visible in it (only escape sequences, only spaces) is no
/// name: the run is listed under its id.
#[test]
fn a_name_of_escapes_alone_gives_way_to_the_id() {
    let run = |name: &str| WsRun {
        dir_name: "run-20261201_000000-ws000003".into(),
        segments: vec![RunIndexEntry {
            run_id: "ws000003".into(),
            display_name: name.into(),
            ..RunIndexEntry::default()
        }],
        ..WsRun::default()
    };
    assert_eq!(run("\x1b[2J\x1b[H").label(), "ws000003");
    assert_eq!(run("  ").label(), "ws000003");
    assert_eq!(run("\u{202e}").label(), "ws000003");
    assert_eq!(run("a\x1b[31mb").label(), "ab");
}

#[test]
fn wandb_value_wrappers_are_looked_through() {
    let r = WsRun {
        config: json!({"lr": {"value": 0.1}, "model": {"layers": 3}}),
        summary: json!({"val/loss": 0.25, "a": {"b": 2}}),
        ..WsRun::default()
    };
    assert_eq!(r.config_value("lr"), Some(&json!(0.1)));
    assert_eq!(r.config_value("model.layers"), Some(&json!(3)));
    assert_eq!(r.summary_value("val/loss"), Some(&json!(0.25)));
    assert_eq!(r.summary_value("a.b"), Some(&json!(2)));
    assert_eq!(r.summary_value("nope"), None);
}

#[test]
fn back_from_a_run_opened_alone_its_run_is_highlighted_and_drawn_beside_the_saved_ones() {
    let saved = WorkspaceSaved {
        selected: vec!["a".into()],
        ..WorkspaceSaved::default()
    };
    // `leet RUN-DIR`: the run shown before any index; esc comes back to the list.
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved.clone()));
    w.come_back_to(PathBuf::from("/w/wandb/run-20260101_000400-c"));
    w.set_index(index(), None);
    assert_eq!(w.selected, ["a", "c"]);
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("c"));
    // From the list into a run and back: the cursor comes back, the drawn runs
    // stay as they were.
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), Some(saved));
    w.set_index(index(), None);
    w.come_back_to(PathBuf::from("/w/wandb/run-20260101_000300-b"));
    assert_eq!(w.selected, ["a"]);
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("b"));
    // A later index keeps the cursor where it is.
    w.set_index(index(), None);
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("b"));
}

/// A run drawn while its file had no run record yet (keyed by its directory's
/// name) stays drawn, pinned and under the cursor once the record gives it its
/// run id.
#[test]
fn a_run_drawn_before_its_run_record_stays_drawn_when_it_comes() {
    let dir = "run-20260101_000500-d";
    let early = RunIndexEntry {
        run_id: String::new(),
        has_run_record: false,
        ..entry(dir, "d", 500.0, RunStatus::Running)
    };
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    let mut first = index();
    first.insert(0, early);
    w.set_index(first, Some(Path::new(&format!("/w/wandb/{dir}"))));
    assert_eq!(w.selected, [dir]);
    w.pinned = Some(dir.to_owned());
    w.cursor_to(Some(dir));
    let mut later = index();
    later.insert(0, entry(dir, "d", 500.0, RunStatus::Running));
    w.set_index(later, None);
    assert_eq!(w.selected, ["d"]);
    assert_eq!(w.pinned.as_deref(), Some("d"));
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("d"));
    assert!(w.vanished.is_empty(), "nothing was lost to remember");
}

#[test]
fn a_resumed_run_is_read_with_its_newest_segment_as_the_main_run_when_one_comes() {
    // `b` drawn with its only segment as the main run; a second segment comes.
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    let first: Vec<RunIndexEntry> = index().into_iter().skip(3).collect();
    w.set_index(first, None);
    w.selected = vec!["b".into()];
    let old = Path::new("/w/wandb/run-20260101_000100-b");
    assert_eq!(w.wanted(Some(old)).1.as_deref(), Some(old));
    w.set_index(index(), Some(old));
    w.selected = vec!["b".into(), "c".into()];
    let new = Path::new("/w/wandb/run-20260101_000300-b");
    let (dirs, primary) = w.wanted(Some(old));
    assert!(dirs.iter().any(|d| d == old), "{dirs:?}");
    assert_eq!(primary.as_deref(), Some(new));
    // So too in the run's own view, opened on the segment it had then.
    w.view = WsView::Run(old.to_path_buf());
    assert_eq!(w.wanted(Some(old)).1.as_deref(), Some(new));
    // Another run kept as the main run stays.
    w.view = WsView::List;
    let c = Path::new("/w/wandb/run-20260101_000400-c");
    assert_eq!(w.wanted(Some(c)).1.as_deref(), Some(c));
}

#[test]
fn a_workspace_opened_before_any_run_draws_the_first_runs_to_come() {
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    w.set_index(Vec::new(), None);
    assert!(w.selected.is_empty());
    // A partial listing does not decide; the next whole index does.
    w.set_index(index().into_iter().take(1).collect(), None);
    assert_eq!(w.selected, ["c"]);
    assert_eq!(w.cursor_run().map(|r| r.key.as_str()), Some("c"));
    // Once runs were there, one unselected stays so as more come.
    w.selected.clear();
    w.set_index(index(), None);
    assert!(w.selected.is_empty());
}

#[test]
fn keys_the_index_left_out_are_said_in_the_overview_and_the_prompts() {
    let mut e = entry("run-20260101_000500-w", "w", 500.0, RunStatus::Finished);
    e.keys_dropped = 6;
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    w.set_index(vec![e], None);
    let err = w
        .apply_prompt(Prompt::Column, "check_last_step")
        .unwrap_err();
    assert!(
        err.starts_with("no run has summary key check_last_step among the keys the list keeps (1 run(s) have more than 10000"),
        "{err}"
    );
    let (facts, _) = crate::ui::overview::rows_of(
        Some(&w.runs[0]),
        &crate::store::Run::new(),
        (false, false),
        (None, None),
    );
    let note = facts.iter().find_map(|r| match r {
        crate::ui::overview::Row::Note(k, v) if k == "Keys" => Some(v.clone()),
        _ => None,
    });
    assert_eq!(note.as_deref(), Some("6 more (enter shows all)"));
    // A run with every key indexed: the error as before.
    w.set_index(index(), None);
    assert_eq!(
        w.apply_prompt(Prompt::Column, "nope").unwrap_err(),
        "no run has summary key nope"
    );
}

#[test]
fn a_run_that_comes_into_an_empty_filtered_workspace_is_drawn_only_if_listed() {
    let mut w = Workspace::new(PathBuf::from("/w/wandb"), None);
    w.filter.restore("name-a", false);
    w.set_index(Vec::new(), None);
    // `c` comes first: the filter hides it, so it is not drawn.
    w.set_index(index().into_iter().take(1).collect(), None);
    assert!(w.selected.is_empty(), "{:?}", w.selected);
    // Then `a`, which the list shows.
    let a: Vec<RunIndexEntry> = index().into_iter().filter(|e| e.run_id != "b").collect();
    w.set_index(a, None);
    assert_eq!(w.selected, ["a"]);
}
