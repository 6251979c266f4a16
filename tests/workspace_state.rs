//! The workspace state file through the public API (`leet::source::state`), with
//! `XDG_STATE_HOME` and `HOME` pointed at temporary directories. Environment
//! variables are process-wide: only this test binary sets them, and its tests take
//! one lock while they do.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use leet::msg::{Msg, WorkspaceSaved};
use leet::source::state::{default_state_dir, file_for, load, save};
use leet::ui::{App, Cmd, Options};

static ENV: Mutex<()> = Mutex::new(());

/// Run `f` with the two variables set (None: removed), restoring them after.
fn with_env<T>(xdg: Option<&Path>, home: Option<&Path>, f: impl FnOnce() -> T) -> T {
    let _g = ENV
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let old = (std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"));
    let set = |k: &str, v: Option<&std::ffi::OsStr>| match v {
        Some(v) => std::env::set_var(k, v),
        None => std::env::remove_var(k),
    };
    set("XDG_STATE_HOME", xdg.map(Path::as_os_str));
    set("HOME", home.map(Path::as_os_str));
    let out = f();
    set("XDG_STATE_HOME", old.0.as_deref());
    set("HOME", old.1.as_deref());
    out
}

/// Every file under `dir` with its size and mtime.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn default_state_dir_is_xdg_state_home_else_home() {
    let t = tempfile::tempdir().unwrap();
    let xdg = t.path().join("xdg");
    let home = t.path().join("home");
    assert_eq!(
        with_env(Some(&xdg), Some(&home), default_state_dir),
        Some(xdg.join("leet"))
    );
    // Relative or empty: ignored, as the XDG spec says.
    for bad in ["relative/state", ""] {
        assert_eq!(
            with_env(Some(Path::new(bad)), Some(&home), default_state_dir),
            Some(home.join(".local/state/leet")),
            "{bad:?}"
        );
    }
    assert_eq!(
        with_env(None, Some(&home), default_state_dir),
        Some(home.join(".local/state/leet"))
    );
    assert_eq!(with_env(None, None, default_state_dir), None);
}

#[test]
fn workspace_state_round_trips_under_xdg_state_home() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("project/wandb");
    let runs = common::runs::write_workspace(&w, 6);
    let before = listing(&w);
    let xdg = t.path().join("xdg");
    let state = WorkspaceSaved {
        selected: vec![runs[3].id.clone(), runs[1].id.clone()],
        pinned: Some(runs[3].id.clone()),
        filter: "cfg.lr>=1e-3 state:finished".into(),
        filter_glob: false,
        group_by: Some("optimizer".into()),
        summary_column: Some("val/loss".into()),
    };
    let dir = with_env(Some(&xdg), None, || {
        let dir = default_state_dir().unwrap();
        save(&dir, &w, &WorkspaceSaved::default(), &state, (1, 1)).unwrap();
        dir
    });
    assert_eq!(dir, xdg.join("leet"));
    let file = file_for(&dir, &w);
    assert_eq!(file.parent(), Some(dir.as_path()));
    assert!(file.is_file(), "{}", file.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
    // Nothing was written, or touched, under the wandb directory.
    assert_eq!(listing(&w), before);

    // Every spelling finds it: as given, with a trailing slash, through
    // latest-run, relative to a run directory, through a symlink.
    let mut spellings = vec![
        w.clone(),
        PathBuf::from(format!("{}/", w.display())),
        runs[2].dir.join(".."),
    ];
    #[cfg(unix)]
    {
        spellings.push(w.join("latest-run/.."));
        let link = t.path().join("wandb-link");
        std::os::unix::fs::symlink(&w, &link).unwrap();
        spellings.push(link);
    }
    for p in &spellings {
        assert_eq!(load(&dir, p), Ok(Some(state.clone())), "{}", p.display());
    }
    // Another wandb directory has nothing saved.
    let other = t.path().join("other/wandb");
    common::runs::write_workspace(&other, 1);
    assert_eq!(load(&dir, &other), Ok(None));
    // One state file (and the lock file its saves take).
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names
        .iter()
        .any(|n| n.to_string_lossy().ends_with(".json.lock")));
}

#[test]
fn two_instances_of_one_directory_merge_their_workspace_state() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("project/wandb");
    let runs = common::runs::write_workspace(&w, 4);
    let id = |i: usize| runs[i].id.clone();
    let dir = t.path().join("state");
    let start = WorkspaceSaved {
        selected: vec![id(0), id(1)],
        filter: "loss".into(),
        ..WorkspaceSaved::default()
    };
    save(&dir, &w, &WorkspaceSaved::default(), &start, (1, 1)).unwrap();
    // Both load the same state; A selects run 2 and groups by optimizer, B
    // deselects run 0, pins run 1 and clears the filter.
    let mut a = start.clone();
    a.selected.push(id(2));
    a.group_by = Some("optimizer".into());
    let mut b = start.clone();
    b.selected.retain(|k| *k != id(0));
    b.pinned = Some(id(1));
    b.filter.clear();
    // Each its first save (writers 2 and 3).
    save(&dir, &w, &start, &a, (2, 1)).unwrap();
    save(&dir, &w, &start, &b, (3, 1)).unwrap();
    let merged = load(&dir, &w).unwrap().unwrap();
    assert_eq!(
        merged,
        WorkspaceSaved {
            selected: vec![id(1), id(2)],
            pinned: Some(id(1)),
            filter: String::new(),
            filter_glob: false,
            group_by: Some("optimizer".into()),
            summary_column: None,
        }
    );
}

/// Carry out `cmds`' state saves (under `XDG_STATE_HOME` = `xdg`) and tell `app`
/// how each went; the other commands are not needed here.
fn carry_out_saves(app: &mut App, cmds: Vec<Cmd>, xdg: &Path) {
    for cmd in cmds {
        if matches!(cmd, Cmd::SaveWorkspace { .. }) {
            let answer = with_env(Some(xdg), None, || leet::runtime::answer(cmd)).unwrap();
            assert!(
                matches!(answer, Msg::WorkspaceWritten { error: None, .. }),
                "{answer:?}"
            );
            app.update(answer);
        }
    }
}

#[test]
fn two_apps_of_one_directory_keep_each_others_selection() {
    use crossterm::event::KeyCode;
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("project/wandb");
    common::runs::write_workspace(&w, 4);
    let xdg = t.path().join("xdg");
    let opts = leet::source::index::ScanOptions::default();
    let entries = leet::source::index::scan_with(&w, &t.path().join("cache"), &opts).entries;
    let open = || {
        let mut app = App::new(Options::default());
        app.update(Msg::Resize(120, 40));
        let saved = with_env(Some(&xdg), None, || load(&default_state_dir().unwrap(), &w));
        app.open_workspace(w.clone(), saved.unwrap(), None, false);
        app.take_cmds();
        let cmds = app
            .update(Msg::Indexed {
                wandb_dir: w.clone(),
                entries: entries.clone(),
            })
            .cmds;
        carry_out_saves(&mut app, cmds, &xdg);
        app
    };
    let (mut a, mut b) = (open(), open());
    // A selects the second run, B the third (both keep the latest, selected
    // when the index first came).
    for (app, downs) in [(&mut a, 1), (&mut b, 2)] {
        for _ in 0..downs {
            app.update(Msg::key(KeyCode::Down));
        }
        let cmds = app.update(Msg::char(' ')).cmds;
        carry_out_saves(app, cmds, &xdg);
    }
    let selected = |app: &App| app.runs.workspace.as_ref().unwrap().selected.clone();
    assert_eq!((selected(&a).len(), selected(&b).len()), (2, 2));
    let mut both = selected(&a);
    both.extend(
        selected(&b)
            .into_iter()
            .filter(|k| !selected(&a).contains(k)),
    );
    assert_eq!(both.len(), 3);
    let on_disk = || {
        let dir = with_env(Some(&xdg), None, || default_state_dir().unwrap());
        load(&dir, &w).unwrap().unwrap().selected
    };
    assert_eq!(on_disk(), both);
    // A deselects its run and quits: B's stays.
    let cmds = a.update(Msg::char(' ')).cmds;
    carry_out_saves(&mut a, cmds, &xdg);
    let quit: Vec<Cmd> = a.runs.workspace_save_on_quit().into_iter().collect();
    carry_out_saves(&mut a, quit, &xdg);
    assert_eq!(on_disk(), selected(&b));
}
