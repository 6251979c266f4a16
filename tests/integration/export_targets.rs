//! `leet export`'s choice of run and of target: an output inside a W&B run
//! directory or named like a run file is refused and nothing is written; a
//! stray `.wandb` beside a run's own file does not hide it; a workspace of
//! several runs says which one it exported.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

fn leet(args: &[&std::ffi::OsStr]) -> Output {
    common::isolated::leet().args(args).output().unwrap()
}

/// A copy of the `tiny` fixture's wandb directory under `dir`, writable; its run
/// directory.
fn tiny_copy(dir: &Path) -> PathBuf {
    let src = common::wandb_file(&common::runs_dir().join("tiny"));
    let src_run = src.parent().unwrap();
    let run_dir = dir.join("wandb").join(src_run.file_name().unwrap());
    std::fs::create_dir_all(run_dir.join("files")).unwrap();
    std::fs::copy(&src, run_dir.join(src.file_name().unwrap())).unwrap();
    std::fs::copy(
        src_run.join("files/output.log"),
        run_dir.join("files/output.log"),
    )
    .unwrap();
    run_dir
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn an_output_inside_a_run_directory_or_named_like_a_run_file_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = tiny_copy(dir.path());
    // The same run copied under a name that is not a run directory's.
    let plain = dir.path().join("tiny");
    std::fs::create_dir_all(plain.join("files")).unwrap();
    for f in ["run-tiny0001.wandb", "files/output.log"] {
        std::fs::copy(run_dir.join(f), plain.join(f)).unwrap();
    }
    let elsewhere = dir.path().join("out");
    std::fs::create_dir(&elsewhere).unwrap();
    let cases: [(&Path, PathBuf, &str); 6] = [
        (
            &run_dir,
            run_dir.join("files/output.log"),
            "inside the W&B run directory",
        ),
        (
            &run_dir,
            run_dir.join("files/media/new.csv"),
            "inside the W&B run directory",
        ),
        (
            &run_dir,
            run_dir.join("x.parquet"),
            "inside the W&B run directory",
        ),
        (
            &plain,
            plain.join("files/output.log"),
            "inside the W&B run directory",
        ),
        (
            &plain,
            plain.join("run-zzzz.wandb"),
            "named like a run file",
        ),
        (
            &run_dir,
            elsewhere.join("run-zzzz.wandb"),
            "named like a run file",
        ),
    ];
    let before = tree(dir.path());
    for (input, output, why) in &cases {
        let o = leet(&[
            "export".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            output.as_os_str(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        let what = format!("{} -o {}", input.display(), output.display());
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains(why)
                && err.contains(&*output.to_string_lossy())
                && err.contains("nothing was written"),
            "{what}: {err}"
        );
        assert_eq!(tree(dir.path()), before, "{what}: a file changed");
    }
    // Beside the run directories, an export is written as ever.
    let ok = elsewhere.join("tiny.csv");
    let o = leet(&[
        "export".as_ref(),
        run_dir.as_os_str(),
        "-o".as_ref(),
        ok.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&ok).unwrap().starts_with("_step,"));
}

#[test]
fn a_stray_wandb_file_in_a_run_directory_does_not_hide_the_runs_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = tiny_copy(dir.path());
    let plain = dir.path().join("tiny");
    std::fs::create_dir_all(plain.join("files")).unwrap();
    std::fs::copy(
        run_dir.join("run-tiny0001.wandb"),
        plain.join("run-tiny0001.wandb"),
    )
    .unwrap();
    for d in [&run_dir, &plain] {
        // Newer than the run's file: a CSV someone wrote there.
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .write(true)
            .open(d.join("run-tiny0001.wandb"))
            .and_then(|f| f.set_modified(old))
            .unwrap();
        std::fs::write(d.join("run-zzzz.wandb"), "_step,loss\n0,1\n").unwrap();
        for args in [&["inspect", "--summary"][..], &["export"][..]] {
            let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
            a.push(d.as_os_str());
            let o = leet(&a);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{args:?} {}: {err}", d.display());
            assert!(
                !err.contains("bad header"),
                "{args:?} {}: {err}",
                d.display()
            );
            let out = String::from_utf8_lossy(&o.stdout);
            let want = if args[0] == "inspect" {
                "tiny0001"
            } else {
                "_step,_runtime"
            };
            assert!(out.contains(want), "{args:?} {}: {out}", d.display());
        }
    }
}

#[test]
fn a_workspace_of_several_runs_says_which_run_it_exported_and_how_to_pick_another() {
    let multi = common::runs_dir().join("multi");
    let wandb_dir = multi.join("wandb");
    let latest = common::wandb_file(&multi);
    let latest_dir = latest.parent().unwrap();
    for path in [&multi, &wandb_dir] {
        let o = leet(&["export".as_ref(), path.as_os_str()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{}: {err}", path.display());
        assert_eq!(err.lines().count(), 1, "{}: {err}", path.display());
        let name = latest_dir.file_name().unwrap().to_string_lossy();
        assert!(
            err.contains(&*wandb_dir.to_string_lossy())
                && err.contains("holds 5 runs")
                && err.contains(&format!("exporting the latest, {name}"))
                && err.contains(&format!(
                    "(to export another: leet export {} --run ",
                    wandb_dir.display()
                )),
            "{}: {err}",
            path.display()
        );
    }
    // A run named by its directory or its file: nothing to say.
    for path in [latest_dir, latest.as_path()] {
        let o = leet(&["export".as_ref(), path.as_os_str()]);
        assert!(o.status.success());
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{}", path.display());
    }
}
