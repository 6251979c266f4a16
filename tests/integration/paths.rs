//! Path resolution shared by every command.

use std::path::{Path, PathBuf};

use leet::source::file::{resolve, SourceError, Target};

fn run_dir(wandb: &Path, name: &str, with_file: bool) -> PathBuf {
    let d = wandb.join(name);
    std::fs::create_dir_all(&d).unwrap();
    if with_file {
        std::fs::write(d.join("run-x.wandb"), leet::decode::leveldb::FILE_HEADER).unwrap();
    }
    d
}

fn file_of(t: Target) -> PathBuf {
    match t {
        Target::File(f) => f,
        other => panic!("expected a file, got {other:?}"),
    }
}

#[test]
fn files_run_dirs_and_wandb_dirs() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let old = run_dir(&wandb, "offline-run-20260101_000000-aaa", true);
    let new = run_dir(&wandb, "run-20260202_000000-bbb", true);
    // A file and a run directory.
    let f = old.join("run-x.wandb");
    assert_eq!(file_of(resolve(&f).unwrap()), f);
    assert_eq!(file_of(resolve(&old).unwrap()), f);
    // No latest-run: the newest run directory (by the time in its name).
    assert_eq!(file_of(resolve(&wandb).unwrap()), new.join("run-x.wandb"));
    assert_eq!(
        file_of(resolve(tmp.path()).unwrap()),
        new.join("run-x.wandb")
    );
    // latest-run as a relative symlink, an absolute one, and a plain file naming it.
    std::os::unix::fs::symlink("offline-run-20260101_000000-aaa", wandb.join("latest-run"))
        .unwrap();
    assert_eq!(file_of(resolve(tmp.path()).unwrap()), f);
    std::fs::remove_file(wandb.join("latest-run")).unwrap();
    std::os::unix::fs::symlink(&old, wandb.join("latest-run")).unwrap();
    assert_eq!(file_of(resolve(&wandb).unwrap()), f);
    std::fs::remove_file(wandb.join("latest-run")).unwrap();
    std::fs::write(wandb.join("latest-run"), "offline-run-20260101_000000-aaa").unwrap();
    assert_eq!(file_of(resolve(tmp.path()).unwrap()), f);
    assert_eq!(file_of(resolve(&wandb.join("latest-run")).unwrap()), f);
}

#[test]
fn dot_wandb_directory_and_a_run_that_has_not_written_yet() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join(".wandb");
    run_dir(&wandb, "run-20260101_000000-aaa", true);
    let fresh = run_dir(&wandb, "run-20260303_000000-ccc", false);
    std::os::unix::fs::symlink("run-20260303_000000-ccc", wandb.join("latest-run")).unwrap();
    // The newest run is waited for, not replaced by an older one.
    assert_eq!(
        resolve(tmp.path()).unwrap(),
        Target::EmptyRunDir(fresh.clone())
    );
    assert_eq!(resolve(&fresh).unwrap(), Target::EmptyRunDir(fresh));
}

#[test]
fn nothing_found_says_where_it_looked() {
    let tmp = tempfile::tempdir().unwrap();
    match resolve(tmp.path()) {
        Err(e @ SourceError::NoRun { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("wandb (missing)") && msg.contains(".wandb (missing)"),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        resolve(&tmp.path().join("nope")),
        Err(SourceError::NotFound { .. })
    ));
}

#[test]
fn sibling_runs_lists_the_wandb_directory_newest_first() {
    let multi = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/multi/wandb");
    let latest = leet::source::file::resolve(&multi).unwrap();
    let runs = leet::source::file::sibling_runs(&file_of(latest));
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["multi005", "multi004", "multi003", "multi002", "multi001"]
    );
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["multi-4", "multi-3", "multi-2", "multi-1", "multi-0"]
    );
    assert!(runs.iter().all(|r| r.file.is_some() && r.size > 0));

    // A run still without a file is listed too; a loose file has no siblings.
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let a = run_dir(&wandb, "run-20260101_000000-aaa", true);
    run_dir(&wandb, "run-20260303_000000-ccc", false);
    let runs = leet::source::file::sibling_runs(&a.join("run-x.wandb"));
    assert_eq!(runs.len(), 2);
    assert!(runs[0].file.is_none() && runs[0].dir.ends_with("run-20260303_000000-ccc"));
    std::fs::write(tmp.path().join("loose.wandb"), b"").unwrap();
    assert!(leet::source::file::sibling_runs(&tmp.path().join("loose.wandb")).is_empty());
}

/// Every spelling of the latest run (the wandb directory, the project directory,
/// `latest-run` with or without a trailing slash, the file under `latest-run`, the
/// run directory itself) opens the same run, in its own directory: so its wandb
/// directory, its neighbours (`R`) and the status bar's `R: N runs` are found.
#[cfg(unix)]
#[test]
fn every_spelling_of_the_latest_run_finds_its_wandb_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    run_dir(&wandb, "run-20260101_000000-aaa", true);
    run_dir(&wandb, "run-20260202_000000-bbb", true);
    let newest = run_dir(&wandb, "offline-run-20260303_000000-ccc", true);
    std::os::unix::fs::symlink("offline-run-20260303_000000-ccc", wandb.join("latest-run"))
        .unwrap();
    let want = newest.join("run-x.wandb");
    let spellings = [
        tmp.path().to_path_buf(),
        wandb.clone(),
        PathBuf::from(format!("{}/", wandb.display())),
        wandb.join("latest-run"),
        PathBuf::from(format!("{}/", wandb.join("latest-run").display())),
        wandb.join("latest-run").join("run-x.wandb"),
        newest.clone(),
        newest.join("."),
        want.clone(),
    ];
    for p in &spellings {
        let file = file_of(resolve(p).unwrap());
        assert_eq!(
            std::fs::canonicalize(&file).unwrap(),
            std::fs::canonicalize(&want).unwrap(),
            "{}",
            p.display()
        );
        let dir = leet::source::file::wandb_dir_of(&file).unwrap_or_else(|| {
            panic!("{}: {} has no wandb directory", p.display(), file.display())
        });
        assert_eq!(
            std::fs::canonicalize(dir).unwrap(),
            std::fs::canonicalize(&wandb).unwrap(),
            "{}",
            p.display()
        );
        let runs = leet::source::file::sibling_runs(&file);
        assert_eq!(runs.len(), 3, "{}", p.display());
    }
    // An absolute symlink target, as some tools write it.
    std::fs::remove_file(wandb.join("latest-run")).unwrap();
    std::os::unix::fs::symlink(&newest, wandb.join("latest-run")).unwrap();
    let file = file_of(resolve(&wandb.join("latest-run").join("run-x.wandb")).unwrap());
    assert!(
        leet::source::file::wandb_dir_of(&file).is_some(),
        "{}",
        file.display()
    );
}

/// `leet`, `leet wandb`, `leet wandb/latest-run` and `leet wandb/latest-run/run-X.wandb`
/// (with or without trailing slashes, the symlink or a pointer file) all open the
/// workspace of the same wandb directory with the latest run read first; a run
/// directory or a file spelled by its own name opens that run alone, still knowing
/// its wandb directory (esc goes there).
#[cfg(unix)]
#[test]
fn latest_run_spellings_open_the_workspace_as_leet_does() {
    use leet::source::resolve::{opening, Opening};
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    run_dir(&wandb, "run-20260101_000000-aaa", true);
    let newest = run_dir(&wandb, "offline-run-20260303_000000-ccc", true);
    std::os::unix::fs::symlink("offline-run-20260303_000000-ccc", wandb.join("latest-run"))
        .unwrap();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
    let check_workspace = |p: &Path| match opening(p).unwrap() {
        Opening::Workspace { wandb_dir, run } => {
            assert_eq!(canon(&wandb_dir), canon(&wandb), "{}", p.display());
            assert_eq!(
                canon(&file_of(run)),
                canon(&newest.join("run-x.wandb")),
                "{}",
                p.display()
            );
        }
        o => panic!("{}: {o:?}", p.display()),
    };
    for p in [
        tmp.path().to_path_buf(),
        wandb.clone(),
        PathBuf::from(format!("{}/", wandb.display())),
        wandb.join("latest-run"),
        PathBuf::from(format!("{}/", wandb.join("latest-run").display())),
        wandb.join("latest-run").join("run-x.wandb"),
    ] {
        check_workspace(&p);
    }
    for p in [newest.clone(), newest.join("run-x.wandb"), newest.join(".")] {
        match opening(&p).unwrap() {
            Opening::Run {
                target,
                wandb_dir: Some(w),
            } => {
                assert_eq!(canon(&w), canon(&wandb), "{}", p.display());
                assert_eq!(canon(&file_of(target)), canon(&newest.join("run-x.wandb")));
            }
            o => panic!("{}: {o:?}", p.display()),
        }
    }
    // A pointer file instead of the symlink (a copy that lost it) reads the same.
    std::fs::remove_file(wandb.join("latest-run")).unwrap();
    std::fs::write(
        wandb.join("latest-run"),
        "offline-run-20260303_000000-ccc\n",
    )
    .unwrap();
    check_workspace(&wandb.join("latest-run"));
    check_workspace(tmp.path());
    // A lone .wandb file outside any wandb directory opens alone, with none.
    let lone = tmp.path().join("lone.wandb");
    std::fs::copy(newest.join("run-x.wandb"), &lone).unwrap();
    assert!(matches!(
        opening(&lone).unwrap(),
        Opening::Run {
            wandb_dir: None,
            ..
        }
    ));
}
