use serde_json::json;

use super::fold::Fold;
use super::*;
use leet_format::event::{Scalar, TreeOp, TreePath, PATH_SEP};

fn path(p: &str) -> TreePath {
    let parts: Vec<String> = p.split('.').map(str::to_owned).collect();
    TreePath {
        joined: parts.join(&PATH_SEP.to_string()),
        parts,
    }
}

fn num(f: f64) -> Scalar {
    Scalar::Number(f)
}

#[test]
fn fold_sets_nests_and_removes_subtrees() {
    let paths = vec![path("a"), path("b.c"), path("b.d"), path("bx"), path("b")];
    let mut f = Fold::default();
    f.apply(
        &paths,
        &[
            TreeOp::Set(0, num(1.0)),
            TreeOp::Set(1, num(2.0)),
            TreeOp::Set(2, Scalar::Json("[1,2]".into())),
            TreeOp::Set(3, num(3.0)),
        ],
    );
    assert_eq!(
        serde_json::Value::Object(f.to_json()),
        json!({"a": 1.0, "b": {"c": 2.0, "d": [1, 2]}, "bx": 3.0})
    );
    // Removing `b` drops everything below it, and not `bx` (a sibling sharing the
    // prefix of its name).
    f.apply(&paths, &[TreeOp::Remove(4)]);
    assert_eq!(
        serde_json::Value::Object(f.to_json()),
        json!({"a": 1.0, "bx": 3.0})
    );
    // A later batch (its own path table) revives one key.
    f.apply(&[path("b.c")], &[TreeOp::Set(0, num(5.0))]);
    assert_eq!(
        serde_json::Value::Object(f.to_json()),
        json!({"a": 1.0, "b": {"c": 5.0}, "bx": 3.0})
    );
    // Out-of-range ids (a hostile batch) are ignored, never a panic.
    f.apply(
        &[],
        &[
            TreeOp::Set(9, num(1.0)),
            TreeOp::Remove(7),
            TreeOp::Touch(3),
        ],
    );
    assert_eq!(f.to_json().len(), 3);
}

/// As the run's own summary (`store::tree`): a change under a value set whole
/// replaces it; a removal under it changes nothing.
#[test]
fn fold_replaces_a_value_set_whole_by_a_change_under_it() {
    let paths = vec![path("nest"), path("nest.a"), path("n2"), path("n2.a")];
    let mut f = Fold::default();
    f.apply(
        &paths,
        &[
            TreeOp::Set(0, Scalar::Json(r#"{"a": 1, "b": {"c": 2}}"#.into())),
            TreeOp::Set(1, num(7.0)),
            TreeOp::Set(2, Scalar::Json(r#"{"a": 1, "b": 2}"#.into())),
            TreeOp::Remove(3),
        ],
    );
    assert_eq!(
        serde_json::Value::Object(f.to_json()),
        json!({"nest": {"a": 7.0}, "n2": {"a": 1, "b": 2}})
    );
}

#[test]
fn fold_keeps_first_seen_top_level_order_and_latest_value_wins() {
    let paths = vec![path("z"), path("a")];
    let mut f = Fold::default();
    // The coalescer's shape: touches in first-seen order, then sets in the order
    // of their latest change.
    f.apply(
        &paths,
        &[
            TreeOp::Touch(0),
            TreeOp::Touch(1),
            TreeOp::Set(1, num(1.0)),
            TreeOp::Set(0, num(2.0)),
        ],
    );
    f.apply(&paths, &[TreeOp::Set(1, num(3.0))]);
    let m = f.to_json();
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(keys, ["z", "a"]);
    assert_eq!(m["a"], json!(3.0));
    // A scalar replaced by a subtree (and back) as the store's tree does it.
    let paths = vec![path("z.y")];
    f.apply(&paths, &[TreeOp::Set(0, num(4.0))]);
    assert_eq!(f.to_json()["z"], json!({"y": 4.0}));
}

fn entry(exit: Option<i32>, mtime: f64, last: Option<f64>) -> RunIndexEntry {
    RunIndexEntry {
        file: Some("run-x.wandb".into()),
        has_run_record: true,
        exit_code: exit,
        mtime_ns: (mtime * 1e9) as u64,
        last_time: last,
        ..RunIndexEntry::default()
    }
}

#[test]
fn state_at_decides_from_the_entrys_exit_start_and_quiet() {
    let now = 10_000.0;
    assert_eq!(
        state_at(&entry(Some(0), 0.0, None), now, 120.0),
        RunStatus::Finished
    );
    assert_eq!(
        state_at(&entry(Some(-9), 0.0, None), now, 120.0),
        RunStatus::Failed
    );
    // No exit: running within the stale limit of the file's mtime.
    assert_eq!(
        state_at(&entry(None, now - 119.0, None), now, 120.0),
        RunStatus::Running
    );
    assert_eq!(
        state_at(&entry(None, now - 121.0, None), now, 120.0),
        RunStatus::Crashed
    );
    // A fresh mtime (a copy) with old records: the records say when it went quiet.
    assert_eq!(
        state_at(&entry(None, now, Some(now - 500.0)), now, 120.0),
        RunStatus::Crashed
    );
    // The stale limit is the caller's.
    assert_eq!(
        state_at(&entry(None, now, Some(now - 500.0)), now, 600.0),
        RunStatus::Running
    );
    // Nothing read yet: unknown.
    let mut e = entry(None, now, None);
    e.has_run_record = false;
    assert_eq!(state_at(&e, now, 120.0), RunStatus::Unknown);
}

#[test]
fn cache_dir_follows_xdg() {
    let some = |s: &str| Some(std::ffi::OsString::from(s));
    let p = |s: &str| Some(std::path::PathBuf::from(s));
    assert_eq!(
        cache_dir_from(some("/x/cache"), some("/home/u")),
        p("/x/cache/leet")
    );
    // A relative XDG_CACHE_HOME is to be ignored (XDG base directory spec).
    assert_eq!(
        cache_dir_from(some("rel"), some("/home/u")),
        p("/home/u/.cache/leet")
    );
    assert_eq!(
        cache_dir_from(None, some("/home/u")),
        p("/home/u/.cache/leet")
    );
    assert_eq!(cache_dir_from(some(""), some("")), None);
    assert_eq!(cache_dir_from(None, None), None);
}

#[test]
fn cache_file_name_is_stable_per_path() {
    let a = cache::file_for(Path::new("/c"), Path::new("/w/one"));
    let b = cache::file_for(Path::new("/c"), Path::new("/w/two"));
    assert_ne!(a, b);
    assert_eq!(a, cache::file_for(Path::new("/c"), Path::new("/w/one")));
    // FNV-1a of "/w/one": fixed, so a cache survives a rebuild of leet.
    assert_eq!(
        a.file_name().and_then(|n| n.to_str()),
        Some("index-db5181fe34f976f0.json")
    );
}

#[test]
fn fold_holds_at_most_max_keys() {
    let paths: Vec<TreePath> = (0..fold::MAX_KEYS + 5)
        .map(|i| path(&format!("k{i}")))
        .collect();
    let ops: Vec<TreeOp> = (0..paths.len())
        .map(|i| TreeOp::Set(u32::try_from(i).expect("id"), num(1.0)))
        .collect();
    let mut f = Fold::default();
    f.apply(&paths, &ops);
    assert_eq!(f.to_json().len(), fold::MAX_KEYS);
    assert_eq!(f.dropped, 5);
    // A key already held still takes new values.
    f.apply(&[path("k0")], &[TreeOp::Set(0, num(2.0))]);
    assert_eq!(f.to_json()["k0"], json!(2.0));
    assert_eq!(f.dropped, 5);
}

#[test]
fn the_environment_is_bounded_in_keys_and_in_each_value() {
    let mut env = serde_json::Map::new();
    let mut dropped = 0;
    // A usual record: kept as it is.
    let usual = json!({"os": "Linux", "args": ["--lr", "0.1"], "cpu_count": 8,
        "gpu_nvidia": [{"name": "H100", "memory_total": 85_899_345_920_u64}]});
    let usual = usual.as_object().expect("object").clone();
    fold::fold_env(&mut env, &usual, &mut dropped);
    assert_eq!(serde_json::Value::Object(env.clone()), json!(usual));
    // A hostile one: many keys, a huge string, a huge array, a deep object.
    let mut hostile = serde_json::Map::new();
    for i in 0..200 {
        hostile.insert(format!("k{i}"), json!(i));
    }
    hostile.insert("os".into(), json!("é".repeat(100_000)));
    hostile.insert("args".into(), json!(vec!["--flag"; 100_000]));
    fold::fold_env(&mut env, &hostile, &mut dropped);
    assert_eq!(env.len(), fold::MAX_ENV_KEYS);
    // Keys already held take the new values, cut; new ones past the cap counted.
    let dropped = usize::try_from(dropped).expect("count");
    assert_eq!(dropped, 200 - (fold::MAX_ENV_KEYS - 4));
    let os = env["os"].as_str().expect("os");
    assert!(
        os.len() <= fold::MAX_ENV_VALUE_BYTES && os.ends_with('…'),
        "{}",
        os.len()
    );
    let args = env["args"].as_array().expect("args");
    assert_eq!(args.last(), Some(&json!("…")));
    let bytes = serde_json::to_vec(&env).expect("json").len();
    assert!(
        bytes < fold::MAX_ENV_KEYS * (fold::MAX_ENV_VALUE_BYTES + 512),
        "{bytes}"
    );
    // A cut never splits a character.
    assert_eq!(fold::cut("aé", 4), "aé");
    assert_eq!(fold::cut("aéé", 4), "a…");
}

/// Every `.wandb` file under `dir`.
fn wandb_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            wandb_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "wandb") {
            out.push(p);
        }
    }
}

/// The index reads rows for their steps and times only: on every fixture and on
/// damaged and cut synthetic runs its entry is the one the decoder with series
/// gives (steps, times, rows, damage, summary, config, environment).
#[test]
fn the_index_read_without_series_equals_the_full_read() {
    use leet_format::synth::{file_bytes, SynthSpec};
    let mut files = Vec::new();
    wandb_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut files,
    );
    assert!(files.len() >= 10, "fixtures: {files:?}");
    let dir = tempfile::tempdir().unwrap();
    let base = file_bytes(&SynthSpec {
        steps: 3000,
        metrics: 6,
        stats_every: 7,
        ..SynthSpec::default()
    });
    for case in 0..12usize {
        let mut d = base.clone();
        let at = 7 + (case * 7919 + 13) % (d.len() - 7);
        match case % 3 {
            0 => d[at] ^= 0xA5,
            1 => d.truncate(at),
            _ => {
                let end = (at + 5000).min(d.len());
                d[at..end].fill(0x80);
            }
        }
        let p = dir.path().join(format!("run-{case}.wandb"));
        std::fs::write(&p, &d).unwrap();
        files.push(p);
    }
    let mut damaged = 0;
    for f in &files {
        let (size, mtime) = stat(f);
        let parent = f.parent().unwrap();
        let lean = read_run_with(parent, f, size, mtime, false);
        let full = read_run_with(parent, f, size, mtime, true);
        damaged += usize::from(full.damage > 0);
        assert_eq!(format!("{lean:?}"), format!("{full:?}"), "{}", f.display());
    }
    assert!(damaged >= 8, "too few damaged files compared: {damaged}");
}

/// A run whose system keys carry node labels (`cpu/l:node-1`): the entry keeps
/// them, with and without the series, so the workspace's overview names them.
#[test]
fn the_entry_keeps_the_node_labels_of_the_system_keys() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/multinode/wandb/offline-run-20261130_173320-mnode001");
    let file = dir.join("run-mnode001.wandb");
    let (size, mtime) = stat(&file);
    for series in [false, true] {
        let e = read_run_with(&dir, &file, size, mtime, series);
        assert!(e.error.is_none(), "{:?}", e.error);
        assert!(e.node_labels.len() >= 2, "{:?}", e.node_labels);
        assert!(
            e.node_labels.iter().all(|l| l.starts_with("node-")),
            "{:?}",
            e.node_labels
        );
        let mut sorted = e.node_labels.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, e.node_labels);
    }
    // A run of one process has none.
    let one = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    wandb_files(&one.join("multinode-sdk"), &mut files);
    for f in files {
        let (size, mtime) = stat(&f);
        let e = read_run_with(f.parent().unwrap(), &f, size, mtime, false);
        assert_eq!(
            e.node_labels.len(),
            1,
            "{}: {:?}",
            f.display(),
            e.node_labels
        );
    }
}

/// A cache of the format before node labels is rebuilt, never read as entries
/// without labels.
#[test]
fn a_cache_of_an_older_version_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("index.json");
    let wandb = dir.path().join("wandb");
    std::fs::write(
        &file,
        serde_json::to_vec(&json!({"version": 2, "wandb_dir": wandb, "runs": []})).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        cache::load(&file, &wandb),
        Err(cache::LoadError::Version(2))
    ));
}

/// A run directory whose own `run-<id>.wandb` is no file (a link in a loop, a
/// FIFO, a directory) is a run that cannot be read and says why, not a run still
/// waiting for its file; the FIFO is never opened (that would block the scan).
#[test]
fn a_run_file_that_is_no_file_is_unreadable_and_says_why() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let cache = tmp.path().join("cache");
    let mk = |id: &str| {
        let d = wandb.join(format!("offline-run-20261130_00000{}-{id}", id.len()));
        std::fs::create_dir_all(&d).unwrap();
        (d.clone(), d.join(format!("run-{id}.wandb")))
    };
    let (_, f) = mk("loop");
    symlink(f.with_file_name("other"), &f).unwrap();
    symlink(&f, f.with_file_name("other")).unwrap();
    let (_, f) = mk("fifo0");
    let c = std::ffi::CString::new(f.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let (_, f) = mk("dir000");
    std::fs::create_dir(&f).unwrap();
    let (_, f) = mk("gone0000");
    symlink(f.with_file_name("nowhere"), &f).unwrap();
    // A run directory with no file yet stays a run waiting for one.
    mk("new000000");
    let scan = scan(&wandb, &cache);
    let error = |id: &str| {
        let e = scan
            .iter()
            .find(|e| e.dir.to_string_lossy().ends_with(id))
            .unwrap_or_else(|| panic!("{id}: {scan:?}"));
        e.error.clone()
    };
    let loop_err = error("loop").expect("loop");
    assert!(
        loop_err.starts_with("run-loop.wandb: ") && loop_err.contains("symbolic links"),
        "{loop_err}"
    );
    assert_eq!(
        error("fifo0").as_deref(),
        Some("run-fifo0.wandb is a FIFO, not a run file")
    );
    assert_eq!(
        error("dir000").as_deref(),
        Some("run-dir000.wandb is a directory, not a run file")
    );
    let gone = error("gone0000").expect("dangling link");
    assert!(gone.contains("No such file"), "{gone}");
    assert_eq!(error("new000000"), None);
}

/// A cached run whose file's mode changes (`chmod`: its ctime moves, not its
/// size or mtime) is read again, so a file that can no longer be read is not
/// shown from the cache as it was.
#[test]
fn a_chmod_of_a_cached_run_file_reads_it_again() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("wandb");
    let cache = tmp.path().join("cache");
    let d = wandb.join("offline-run-20261130_000000-mode0001");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("run-mode0001.wandb");
    let spec = leet_format::synth::RunSpec {
        run_id: "mode0001".into(),
        steps: 3,
        exit_code: Some(0),
        ..Default::default()
    };
    std::fs::write(&file, leet_format::synth::run_file(&spec)).unwrap();
    let opts = ScanOptions::default();
    assert_eq!(scan_with(&wandb, &cache, &opts).read, 1);
    let again = scan_with(&wandb, &cache, &opts);
    assert_eq!((again.read, again.cached), (0, 1));
    // A second at which the finished run is looked at, well after it was read.
    let at = ScanOptions {
        now: Some(
            ((again.entries[0].read_at as u64 / DONE_RECHECK_S + 100) * DONE_RECHECK_S) as f64,
        ),
        ..ScanOptions::default()
    };
    assert!(unchanged(&wandb, &again.entries, &at));
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(!unchanged(&wandb, &again.entries, &at));
    let after = scan_with(&wandb, &cache, &opts);
    assert_eq!((after.read, after.cached), (1, 0));
}

/// A summary or config text of megabytes is kept cut in the index (every run's
/// entry is held at once and cached); numbers, short texts and the shape of a
/// value set whole are kept as they are.
#[test]
fn fold_cuts_long_texts_and_keeps_the_rest() {
    let long = "é".repeat(1_000_000);
    let mut f = Fold::default();
    f.apply(
        &[path("big"), path("n"), path("obj")],
        &[
            TreeOp::Set(0, Scalar::Text(long.clone())),
            TreeOp::Set(1, num(0.5)),
            TreeOp::Set(
                2,
                Scalar::Json(serde_json::json!({"a": long, "b": [1, "x"]}).to_string()),
            ),
        ],
    );
    let j = f.to_json();
    let big = j["big"].as_str().unwrap();
    assert!(
        big.len() <= super::fold::MAX_TEXT_VALUE_BYTES,
        "{}",
        big.len()
    );
    assert!(big.starts_with("éé") && big.ends_with('…'));
    assert_eq!(j["n"], json!(0.5));
    let a = j["obj"]["a"].as_str().unwrap();
    assert!(a.len() <= super::fold::MAX_TEXT_VALUE_BYTES && a.ends_with('…'));
    assert_eq!(j["obj"]["b"], json!([1, "x"]));
}
