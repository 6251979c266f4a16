//! `leet` without a path: the current directory's runs first, then `WANDB_DIR`'s
//! (passed in, never set in the process environment), else one error naming
//! what was tried in both places.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{opening_default, resolve, Opening, SourceError, Target};

/// A wandb directory `dir` holding one run (`run-20261130_120000-<id>`) with a
/// `.wandb` file (resolution reads no bytes of it); the file.
fn run_in(dir: &Path, id: &str) -> PathBuf {
    let run = dir.join(format!("run-20261130_120000-{id}"));
    std::fs::create_dir_all(&run).unwrap();
    let file = run.join(format!("run-{id}.wandb"));
    std::fs::write(&file, b"").unwrap();
    file
}

/// The workspace opened and its latest run's file.
fn workspace(o: Opening) -> (PathBuf, PathBuf) {
    match o {
        Opening::Workspace {
            wandb_dir,
            run: Target::File(f),
        } => (wandb_dir, f),
        other => panic!("not a workspace with a run: {other:?}"),
    }
}

fn env(s: &str) -> Option<&OsStr> {
    Some(OsStr::new(s))
}

#[test]
fn the_current_directorys_runs_come_before_wandb_dirs() {
    let cwd = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let here = run_in(&cwd.path().join("wandb"), "here");
    run_in(&elsewhere.path().join("wandb"), "there");
    let (path, o) = opening_default(cwd.path(), Some(elsewhere.path().as_os_str())).unwrap();
    assert_eq!(path, cwd.path());
    assert_eq!(workspace(o), (cwd.path().join("wandb"), here));
}

#[test]
fn without_runs_here_the_sdks_wandb_dir_under_wandb_dir_is_opened() {
    let cwd = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let file = run_in(&root.path().join("wandb"), "sdk");
    let (path, o) = opening_default(cwd.path(), Some(root.path().as_os_str())).unwrap();
    assert_eq!(path, root.path());
    assert_eq!(workspace(o), (root.path().join("wandb"), file));
}

#[test]
fn wandb_dir_may_name_the_wandb_directory_itself_or_hold_a_hidden_one() {
    let cwd = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let wandb = root.path().join("wandb");
    let file = run_in(&wandb, "itself");
    let (_, o) = opening_default(cwd.path(), Some(wandb.as_os_str())).unwrap();
    assert_eq!(workspace(o), (wandb, file));

    let hidden_root = tempfile::tempdir().unwrap();
    let file = run_in(&hidden_root.path().join(".wandb"), "hidden");
    let (_, o) = opening_default(cwd.path(), Some(hidden_root.path().as_os_str())).unwrap();
    assert_eq!(workspace(o), (hidden_root.path().join(".wandb"), file));
}

#[test]
fn a_relative_wandb_dir_is_taken_from_the_current_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let file = run_in(&cwd.path().join("out/wandb"), "rel");
    let (path, o) = opening_default(cwd.path(), env("out")).unwrap();
    assert_eq!(path, cwd.path().join("out"));
    assert_eq!(workspace(o), (cwd.path().join("out/wandb"), file));
}

#[test]
fn no_runs_and_no_wandb_dir_says_where_it_looked_and_that_wandb_dir_is_unset() {
    let cwd = tempfile::tempdir().unwrap();
    for unset in [None, env("")] {
        let e = opening_default(cwd.path(), unset).unwrap_err();
        assert!(
            matches!(
                &e,
                SourceError::NoDefaultRun {
                    wandb_dir: None,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        let wandb = cwd.path().join("wandb").display().to_string();
        assert!(
            msg.starts_with("current directory ")
                && msg.contains("no .wandb run found")
                && msg.contains(&format!("{wandb} (missing)"))
                && msg.ends_with("; WANDB_DIR is not set"),
            "{msg}"
        );
        assert_eq!(msg.lines().count(), 1);
    }
}

#[test]
fn no_runs_in_either_place_names_both() {
    let cwd = tempfile::tempdir().unwrap();
    // WANDB_DIR missing, then present without runs.
    let missing = cwd.path().join("no-such-dir");
    let e = opening_default(cwd.path(), Some(missing.as_os_str())).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "; WANDB_DIR {}: no such file or directory",
            missing.display()
        )),
        "{msg}"
    );
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir(empty.path().join("wandb")).unwrap();
    let e = opening_default(cwd.path(), Some(empty.path().as_os_str())).unwrap_err();
    let msg = e.to_string();
    let (here, there) = msg.split_once("; WANDB_DIR ").unwrap();
    assert!(
        here.contains(&cwd.path().join(".wandb").display().to_string()),
        "{msg}"
    );
    assert!(
        there.contains("no .wandb run found")
            && there.contains(&format!(
                "{} (no latest-run",
                empty.path().join("wandb").display()
            )),
        "{msg}"
    );
}

/// A wandb directory whose run directories have no `.wandb` file yet (a first
/// run starting) is waited on, its newest run, as a run directory named directly
/// is; not "no .wandb run found".
#[test]
fn a_wandb_dir_whose_runs_have_no_file_yet_waits_for_the_newest() {
    let d = tempfile::tempdir().unwrap();
    let wandb = d.path().join("wandb");
    let old = wandb.join("run-20261206_231000-aaaa0001");
    let new = wandb.join("offline-run-20261206_231500-bbbb0001");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    for p in [d.path(), wandb.as_path()] {
        match resolve(p) {
            Ok(Target::EmptyRunDir(r)) => assert_eq!(r, new, "{}", p.display()),
            other => panic!("{}: {other:?}", p.display()),
        }
    }
}

/// A directory with no run yet opens a workspace that waits where the SDK will
/// write: its `wandb` (or `.wandb`) directory, made or not, or the directory
/// itself when it is one; under `WANDB_DIR` when that is set. A path that is not
/// there at all is still an error, as is a `WANDB_DIR` that is not.
#[test]
fn a_directory_with_no_run_yet_is_a_workspace_waiting_in_its_wandb_dir() {
    use super::{opening_default_or_wait, opening_or_wait};
    let empty = |o: Opening| match o {
        Opening::Empty { wandb_dir } => wandb_dir,
        o => panic!("{o:?}"),
    };
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    assert_eq!(empty(opening_or_wait(p).unwrap()), p.join("wandb"));
    std::fs::create_dir(p.join(".wandb")).unwrap();
    assert_eq!(empty(opening_or_wait(p).unwrap()), p.join(".wandb"));
    std::fs::create_dir(p.join("wandb")).unwrap();
    assert_eq!(empty(opening_or_wait(p).unwrap()), p.join("wandb"));
    assert_eq!(
        empty(opening_or_wait(&p.join("wandb")).unwrap()),
        p.join("wandb")
    );
    assert!(matches!(
        opening_or_wait(&p.join("nope")),
        Err(SourceError::NotFound { .. })
    ));
    // A `latest-run` whose run was deleted: where it points is named.
    std::os::unix::fs::symlink("offline-run-gone", p.join("wandb/latest-run")).unwrap();
    let e = super::opening(&p.join("wandb/latest-run")).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("latest-run: a symbolic link to offline-run-gone, which does not exist"),
        "{e}"
    );
    std::fs::remove_file(p.join("wandb/latest-run")).unwrap();
    // No path: here, else under WANDB_DIR when it is set.
    let (path, o) = opening_default_or_wait(p, None).unwrap();
    assert_eq!((path.as_path(), empty(o)), (p, p.join("wandb")));
    let root = tempfile::tempdir().unwrap();
    let (_, o) = opening_default_or_wait(p, Some(root.path().as_os_str())).unwrap();
    assert_eq!(empty(o), root.path().join("wandb"));
    // A WANDB_DIR not made yet: the SDK makes it; waited in, under it.
    let missing = root.path().join("not-yet");
    let (_, o) = opening_default_or_wait(p, Some(missing.as_os_str())).unwrap();
    assert_eq!(empty(o), missing.join("wandb"));
    // A run there is opened as before.
    run_in(&p.join("wandb"), "r1");
    assert!(matches!(
        opening_or_wait(p).unwrap(),
        Opening::Workspace { .. }
    ));
}
