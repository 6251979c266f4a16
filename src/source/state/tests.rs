use super::*;

use std::ffi::OsString;

fn sample() -> WorkspaceSaved {
    WorkspaceSaved {
        selected: vec!["abc123".into(), "def456".into()],
        pinned: Some("def456".into()),
        filter: "cfg.lr>=1e-3".into(),
        filter_glob: false,
        group_by: Some("optimizer".into()),
        summary_column: Some("val/loss".into()),
    }
}

/// A wandb directory with one run directory and a `latest-run` symlink to it.
fn wandb_dir(root: &Path) -> PathBuf {
    let w = root.join("proj/wandb");
    std::fs::create_dir_all(w.join("run-20261130_000000-abc123")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("run-20261130_000000-abc123", w.join("latest-run")).unwrap();
    w
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn state_dir_follows_xdg_state_home_else_home() {
    let some = |s: &str| Some(OsString::from(s));
    let dir = |x, h| xdg_dir_from(x, h, ".local/state");
    assert_eq!(
        dir(some("/x/state"), some("/home/u")),
        Some(PathBuf::from("/x/state/leet"))
    );
    // Relative or empty: not absolute, so ignored (the XDG spec).
    for bad in ["rel/state", ""] {
        assert_eq!(
            dir(some(bad), some("/home/u")),
            Some(PathBuf::from("/home/u/.local/state/leet")),
            "{bad:?}"
        );
    }
    assert_eq!(
        dir(None, some("/home/u")),
        Some(PathBuf::from("/home/u/.local/state/leet"))
    );
    assert_eq!(dir(None, some("")), None);
    assert_eq!(dir(None, None), None);
}

#[test]
fn saves_and_loads_back() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state/leet");
    assert_eq!(load(&s, &w), Ok(None), "nothing saved yet");
    put(&s, &w, &sample()).unwrap();
    assert_eq!(load(&s, &w), Ok(Some(sample())));
    // A second save replaces the first, and leaves no temporary file.
    let mut next = sample();
    next.selected.push("ghi789".into());
    next.pinned = None;
    put(&s, &w, &next).unwrap();
    assert_eq!(load(&s, &w), Ok(Some(next)));
    assert_eq!(state_files(&s), vec![file_for(&s, &w)]);
    let name = file_for(&s, &w);
    let name = name.file_name().unwrap().to_string_lossy();
    assert!(
        name.starts_with("workspace-") && name.ends_with(".json") && name.len() == 31,
        "{name}"
    );
}

#[test]
fn file_holds_version_canonical_dir_and_state() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    put(&s, &w, &sample()).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file_for(&s, &w)).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(
        v["wandb_dir"],
        std::fs::canonicalize(&w)
            .unwrap()
            .to_string_lossy()
            .as_ref()
    );
    assert_eq!(v["state"]["selected"][1], "def456");
    assert_eq!(v["state"]["group_by"], "optimizer");
}

#[cfg(unix)]
#[test]
fn every_spelling_of_the_directory_finds_the_same_file() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    let link = t.path().join("link-to-wandb");
    std::os::unix::fs::symlink(&w, &link).unwrap();
    put(&s, &w, &sample()).unwrap();
    let spellings = [
        w.clone(),
        PathBuf::from(format!("{}/", w.display())),
        w.join("."),
        w.join("latest-run/.."),
        w.join("run-20261130_000000-abc123/.."),
        t.path().join("proj/./wandb"),
        t.path().join("proj/wandb/../wandb"),
        link.clone(),
        PathBuf::from(format!("{}/", link.display())),
    ];
    for p in &spellings {
        assert_eq!(file_for(&s, p), file_for(&s, &w), "{}", p.display());
        assert_eq!(load(&s, p), Ok(Some(sample())), "{}", p.display());
    }
    // Saved through the symlink: still the one file.
    put(&s, &link, &WorkspaceSaved::default()).unwrap();
    assert_eq!(load(&s, &w), Ok(Some(WorkspaceSaved::default())));
    assert_eq!(state_files(&s).len(), 1);
    // Another directory has its own file.
    let other = t.path().join("other/wandb");
    std::fs::create_dir_all(&other).unwrap();
    assert_ne!(file_for(&s, &other), file_for(&s, &w));
    assert_eq!(load(&s, &other), Ok(None));
}

#[test]
fn a_relative_spelling_finds_the_same_file() {
    // The test's own working directory: a relative path to a directory in it.
    let cwd = std::env::current_dir().unwrap();
    let t = tempfile::tempdir_in(&cwd).unwrap();
    let w = t.path().join("wandb");
    std::fs::create_dir_all(&w).unwrap();
    let rel = w.strip_prefix(&cwd).unwrap();
    assert!(rel.is_relative());
    assert_eq!(file_for(t.path(), rel), file_for(t.path(), &w));
}

/// The files under the state directory `dir`, less the lock files saves take
/// beside theirs.
fn state_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = files_under(dir);
    files.retain(|f| f.extension().is_none_or(|e| e != "lock"));
    files
}

/// Save `state` whole: the changes from what the file holds now.
fn put(state_dir: &Path, wandb_dir: &Path, state: &WorkspaceSaved) -> io::Result<()> {
    static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let on_disk = load(state_dir, wandb_dir)
        .ok()
        .flatten()
        .unwrap_or_default();
    let generation = GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    save(state_dir, wandb_dir, &on_disk, state, (0, generation))
}

#[test]
fn nothing_is_written_under_the_wandb_directory() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let before = files_under(&w);
    put(&t.path().join("state"), &w, &sample()).unwrap();
    assert_eq!(files_under(&w), before);
    // A state directory inside the wandb directory (or one of its runs) is refused
    // and nothing is created there.
    for inside in [w.join(".leet"), w.join("latest-run/.leet-state")] {
        let e = put(&inside, &w, &sample()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("inside the wandb directory"), "{e}");
        assert!(!inside.exists(), "{}", inside.display());
    }
    assert_eq!(files_under(&w), before);
}

#[cfg(unix)]
#[test]
fn state_directory_is_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("xdg/state/leet");
    put(&s, &w, &sample()).unwrap();
    for d in [t.path().join("xdg"), t.path().join("xdg/state"), s] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
}

#[test]
fn a_corrupt_file_is_an_error_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    std::fs::create_dir_all(&s).unwrap();
    let f = file_for(&s, &w);
    let canon = std::fs::canonicalize(&w).unwrap();
    let canon = serde_json::to_string(&canon.to_string_lossy()).unwrap();
    for bad in [
        "{not json".to_owned(),
        String::new(),
        "[]".into(),
        r#"{"version":1}"#.into(),
        format!(r#"{{"version":1,"wandb_dir":{canon},"state":{{"selected":"abc"}}}}"#),
        // Text that would move the cursor if the message quoted it as is.
        format!(r#"{{"version":1,"wandb_dir":{canon},"state":{{"filter_glob":"\u001b[2J"}}}}"#),
    ] {
        std::fs::write(&f, &bad).unwrap();
        let e = load(&s, &w).unwrap_err();
        assert!(e.contains(&sanitize_path(&f)), "{bad}: {e}");
        assert!(e.contains("does not parse"), "{bad}: {e}");
        assert!(!e.contains('\u{1b}'), "{bad}: {e:?}");
    }
    // Saving over a corrupt file repairs it.
    put(&s, &w, &sample()).unwrap();
    assert_eq!(load(&s, &w), Ok(Some(sample())));
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    std::fs::create_dir_all(file_for(&s, &w)).unwrap(); // a directory in its place
    let e = load(&s, &w).unwrap_err();
    assert!(e.contains(&sanitize_path(&file_for(&s, &w))), "{e}");
}

#[test]
fn another_version_or_directory_is_not_used() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    std::fs::create_dir_all(&s).unwrap();
    let f = file_for(&s, &w);
    let canon = std::fs::canonicalize(&w).unwrap();
    let canon = serde_json::to_string(&canon.to_string_lossy()).unwrap();
    let state = serde_json::to_string(&sample()).unwrap();
    // A hash collision: the file is for another directory.
    std::fs::write(
        &f,
        format!(r#"{{"version":1,"wandb_dir":"/somewhere/else","state":{state}}}"#),
    )
    .unwrap();
    assert_eq!(load(&s, &w), Ok(None));
    // Another version, of this layout or of another.
    for other in [
        format!(r#"{{"version":2,"wandb_dir":{canon},"state":{state}}}"#),
        r#"{"version":2,"dirs":[1,2,3]}"#.into(),
    ] {
        std::fs::write(&f, other).unwrap();
        assert_eq!(load(&s, &w), Ok(None));
    }
    // The right version and directory: used (the two above were not for lack of
    // something else), and unknown fields of a newer writer are ignored.
    std::fs::write(
        &f,
        format!(r#"{{"version":1,"wandb_dir":{canon},"state":{{"selected":["a"],"new":[1]}}}}"#),
    )
    .unwrap();
    assert_eq!(
        load(&s, &w).unwrap().map(|s| s.selected),
        Some(vec!["a".to_owned()])
    );
}

#[test]
fn a_hostile_file_is_bounded() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    std::fs::create_dir_all(&s).unwrap();
    let f = file_for(&s, &w);
    let canon = std::fs::canonicalize(&w).unwrap();
    let canon = serde_json::to_string(&canon.to_string_lossy()).unwrap();

    // Over the size limit (valid JSON all the same): not read.
    let big = "x".repeat(usize::try_from(MAX_STATE_BYTES).unwrap());
    std::fs::write(
        &f,
        format!(r#"{{"version":1,"wandb_dir":{canon},"state":{{"filter":"{big}"}}}}"#),
    )
    .unwrap();
    let e = load(&s, &w).unwrap_err();
    assert!(
        e.contains("over 1048576 bytes") && e.contains(&sanitize_path(&f)),
        "{e}"
    );

    // Within it, lists and strings over their caps are cut down.
    let mut keys: Vec<String> = (0..MAX_SELECTED + 500).map(|i| format!("k{i}")).collect();
    keys.insert(3, "k1".into()); // a duplicate
    keys.insert(5, String::new());
    keys.insert(7, "y".repeat(MAX_TEXT_BYTES + 1));
    let long = "z".repeat(MAX_TEXT_BYTES + 1);
    let state = serde_json::json!({
        "selected": keys,
        "pinned": long,
        "filter": long,
        "group_by": long,
        "summary_column": "loss",
    });
    let text = format!(r#"{{"version":1,"wandb_dir":{canon},"state":{state}}}"#);
    assert!(text.len() as u64 <= MAX_STATE_BYTES);
    std::fs::write(&f, text).unwrap();
    let got = load(&s, &w).unwrap().unwrap();
    assert_eq!(got.selected.len(), MAX_SELECTED);
    assert_eq!(got.selected[..4], ["k0", "k1", "k2", "k3"]);
    assert_eq!(got.selected.last().map(String::as_str), Some("k9999"));
    assert_eq!(got.pinned, None);
    assert_eq!(got.filter, "");
    assert_eq!(got.group_by, None);
    assert_eq!(got.summary_column.as_deref(), Some("loss"));

    // A string of exactly the cap is kept.
    let at_cap = "q".repeat(MAX_TEXT_BYTES);
    let ok = WorkspaceSaved {
        filter: at_cap.clone(),
        ..WorkspaceSaved::default()
    };
    put(&s, &w, &ok).unwrap();
    assert_eq!(load(&s, &w).unwrap().unwrap().filter, at_cap);
}

#[test]
fn save_keeps_the_file_loadable() {
    let t = tempfile::tempdir().unwrap();
    let w = wandb_dir(t.path());
    let s = t.path().join("state");
    // 10,000 keys of 4 KiB would be 40 MiB: the file stays under the read limit,
    // keeping the keys selected first.
    let keys: Vec<String> = (0..MAX_SELECTED)
        .map(|i| format!("{i:05}{}", "k".repeat(MAX_TEXT_BYTES - 5)))
        .collect();
    let big = WorkspaceSaved {
        selected: keys.clone(),
        ..sample()
    };
    put(&s, &w, &big).unwrap();
    assert!(std::fs::metadata(file_for(&s, &w)).unwrap().len() <= MAX_STATE_BYTES);
    let got = load(&s, &w).unwrap().unwrap();
    assert!(!got.selected.is_empty() && got.selected.len() < keys.len());
    assert_eq!(got.selected[..], keys[..got.selected.len()]);
    assert_eq!(got.group_by, sample().group_by);
    // What save drops, load would drop too: the same caps.
    let mut capped = sample();
    capped.selected = vec!["a".into(), "a".into(), String::new(), "b".into()];
    put(&s, &w, &capped).unwrap();
    assert_eq!(load(&s, &w).unwrap().unwrap().selected, ["a", "b"]);
}

#[test]
fn a_missing_wandb_directory_loads_nothing_and_saves() {
    let t = tempfile::tempdir().unwrap();
    let gone = t.path().join("not/there");
    let s = t.path().join("state");
    assert_eq!(load(&s, &gone), Ok(None));
    put(&s, &gone, &sample()).unwrap();
    assert_eq!(load(&s, &gone), Ok(Some(sample())));
    assert!(!gone.exists());
}

/// A state file that does not parse (or is too big) is not loaded, and is moved
/// aside to `<file>.bad` with a note saying so, so the saves that start afresh do
/// not destroy it silently.
#[test]
fn a_state_file_that_cannot_be_used_is_set_aside_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, wandb) = (tmp.path().join("state"), tmp.path().join("wandb"));
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&wandb).unwrap();
    let file = file_for(&state, &wandb);
    std::fs::write(&file, b"\x00garbage{").unwrap();
    let (saved, note) = load_or_set_aside(&state, &wandb);
    assert_eq!(saved, None);
    let note = note.expect("a note");
    assert!(
        note.starts_with("workspace state set aside as workspace-")
            && note.contains(".json.bad, started afresh: state file ")
            && note.contains("does not parse"),
        "{note}"
    );
    assert!(!file.exists());
    let bad = std::fs::read(file.with_extension("json.bad")).unwrap();
    assert_eq!(bad, b"\x00garbage{");
    // Nothing saved yet: no note.
    assert_eq!(load_or_set_aside(&state, &wandb), (None, None));
    // A save then loads as saved.
    let now = WorkspaceSaved {
        filter: "r00".into(),
        ..WorkspaceSaved::default()
    };
    save(&state, &wandb, &WorkspaceSaved::default(), &now, (1, 1)).unwrap();
    assert_eq!(load_or_set_aside(&state, &wandb).0, Some(now));
}

/// A second bad state file keeps the first one set aside; an empty one has
/// nothing to keep and is not moved over it; past ten, the oldest goes.
#[test]
fn bad_state_files_set_aside_keep_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, wandb) = (tmp.path().join("state"), tmp.path().join("wandb"));
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&wandb).unwrap();
    let file = file_for(&state, &wandb);
    let aside = |tail: &str| PathBuf::from(format!("{}{tail}", file.display()));
    std::fs::write(&file, b"first{").unwrap();
    load_or_set_aside(&state, &wandb).1.expect("a note");
    std::fs::write(&file, b"second{").unwrap();
    let note = load_or_set_aside(&state, &wandb).1.expect("a note");
    assert!(note.contains(".json.bad.1, started afresh"), "{note}");
    assert_eq!(std::fs::read(aside(".bad")).unwrap(), b"first{");
    assert_eq!(std::fs::read(aside(".bad.1")).unwrap(), b"second{");
    // Empty: not used, said, and moved nowhere.
    std::fs::write(&file, b"").unwrap();
    let note = load_or_set_aside(&state, &wandb).1.expect("a note");
    assert!(note.starts_with("workspace state not used: "), "{note}");
    assert!(!aside(".bad.2").exists());
    std::fs::remove_file(&file).unwrap();
    // Ten kept: the eleventh replaces the oldest.
    for i in 2..10 {
        std::fs::write(aside(&format!(".bad.{i}")), format!("{i}")).unwrap();
    }
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
    let f = std::fs::File::options()
        .write(true)
        .open(aside(".bad.1"))
        .unwrap();
    f.set_modified(old).unwrap();
    drop(f);
    std::fs::write(&file, b"eleventh{").unwrap();
    let note = load_or_set_aside(&state, &wandb).1.expect("a note");
    assert!(note.contains(".json.bad.1, started afresh"), "{note}");
    assert_eq!(std::fs::read(aside(".bad.1")).unwrap(), b"eleventh{");
    assert_eq!(std::fs::read(aside(".bad")).unwrap(), b"first{");
}

/// A save that fails names the state file (the OS's error alone names none).
#[test]
fn a_failed_save_names_the_state_file() {
    let tmp = tempfile::tempdir().unwrap();
    let not_dir = tmp.path().join("a-file");
    std::fs::write(&not_dir, b"x").unwrap();
    let wandb = tmp.path().join("wandb");
    let e = save(
        &not_dir.join("leet"),
        &wandb,
        &WorkspaceSaved::default(),
        &WorkspaceSaved::default(),
        (1, 1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("a-file/leet/workspace-") && e.contains(".json: "),
        "{e}"
    );
}
