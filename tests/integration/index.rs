//! The workspace's run index (`source::index`): fields read from the real fixture
//! runs, config added later, summary removals, state per kind, the cache (hit,
//! miss on change, corrupt files rebuilt, deleted runs dropped), damaged files.

use std::path::{Path, PathBuf};

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::msg::{IndexState, RunIndexEntry};
use leet::source::index::{self, ScanOptions};
use prost::Message as _;
use serde_json::{json, Value};

const FIXTURES: &str = "/work/shared/fixtures/runs";

fn fixture_root() -> PathBuf {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("shared/fixtures/runs");
    if local.is_dir() {
        local
    } else {
        PathBuf::from(FIXTURES)
    }
}

/// An entry's summary as `inspect --summary` prints it: without W&B's `_wandb`
/// key, which the index keeps for the overview (W&B's shows `_wandb.runtime`).
fn summary_of(e: &RunIndexEntry) -> Value {
    let mut m = e.summary.clone();
    m.remove("_wandb");
    Value::Object(m)
}

fn expected(name: &str) -> Value {
    let p = fixture_root().join(format!("{name}.summary.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).expect("expected values"))
        .expect("expected json")
}

/// Now = the fixtures' day after they were written (2026-12-01): long past.
fn opts(now: f64) -> ScanOptions {
    ScanOptions {
        now: Some(now),
        ..ScanOptions::default()
    }
}

fn scan(dir: &Path, cache: &Path, now: f64) -> index::Scan {
    index::scan_with(dir, cache, &opts(now))
}

fn rfc3339_secs(e: &Value) -> f64 {
    // "2026-11-30T17:48:29.368817Z": the tests compare to the second.
    let s = e.as_str().expect("time text");
    let (date, time) = s.split_once('T').expect("T");
    let d: Vec<i64> = date.split('-').map(|x| x.parse().expect("date")).collect();
    let t: Vec<f64> = time
        .trim_end_matches('Z')
        .split(':')
        .map(|x| x.parse().expect("time"))
        .collect();
    // Days from civil (Howard Hinnant's algorithm).
    let (y, m, dd) = (d[0] - i64::from(d[1] <= 2), d[1], d[2]);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days as f64 * 86400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

/// JSON equality where numbers compare by value (Python writes `1.0` where W&B's
/// Go side writes `1`), objects regardless of key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn check_against(e: &RunIndexEntry, x: &Value) {
    assert_eq!(e.run_id, x["run_id"].as_str().expect("run_id"));
    assert_eq!(e.display_name, x["name"].as_str().expect("name"));
    assert_eq!(e.project, x["project"].as_str().expect("project"));
    assert_eq!(e.notes, x["notes"].as_str().unwrap_or_default());
    let tags: Vec<String> = x["tags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(e.tags, tags);
    let (config, summary) = (Value::Object(e.config.clone()), summary_of(e));
    assert!(
        same(&config, &x["config"]),
        "config of {}: {config} vs {}",
        e.run_id,
        x["config"]
    );
    assert!(
        same(&summary, &x["summary"]),
        "summary of {}: {summary} vs {}",
        e.run_id,
        x["summary"]
    );
    assert_eq!(e.last_step, x["step"].as_i64(), "step of {}", e.run_id);
    assert_eq!(
        e.exit_code,
        x["exit_code"]
            .as_i64()
            .map(|c| i32::try_from(c).expect("code"))
    );
    let start = e.start_time.expect("start time");
    assert!(
        (start - rfc3339_secs(&x["start_time"])).abs() < 1e-3,
        "start {start}"
    );
}

/// The fixture's wandb directory, copied (symlinks kept) so that caches and
/// appends never touch the shared copy.
fn copy_fixture(name: &str, to: &Path) -> PathBuf {
    let src = fixture_root().join(name).join("wandb");
    let dst = to.join(name).join("wandb");
    std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dst)
        .status()
        .expect("cp");
    assert!(st.success());
    dst
}

const LATER: f64 = 1_796_200_000.0; // 2026-12-02: a day after the fixtures

#[test]
fn fixture_fields_match_expected_values() {
    let tmp = tempfile::tempdir().expect("tmp");
    for name in ["tiny", "custom_step", "many_metrics", "system"] {
        let dir = copy_fixture(name, tmp.path());
        let s = scan(&dir, &tmp.path().join("cache"), LATER);
        assert_eq!(s.entries.len(), 1, "{name}");
        let e = &s.entries[0];
        check_against(e, &expected(name));
        assert_eq!(e.state, IndexState::Finished, "{name}");
        assert_eq!(e.damage, 0, "{name}");
        assert!(e.error.is_none());
    }
}

#[test]
fn multi_run_directory_lists_every_run_newest_first() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = copy_fixture("multi", tmp.path());
    let s = scan(&dir, &tmp.path().join("cache"), LATER);
    let ids: Vec<&str> = s.entries.iter().map(|e| e.run_id.as_str()).collect();
    assert_eq!(
        ids,
        ["multi005", "multi004", "multi003", "multi002", "multi001"]
    );
    for e in &s.entries {
        let run_dir = e
            .dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        check_against(e, &expected(&format!("multi.{run_dir}")));
        assert_eq!(e.group, "multi");
        assert_eq!(e.state, IndexState::Finished);
    }
    // Both parts of a resumed run are indexed, the second marked resumed.
    let dir = copy_fixture("resumed", tmp.path());
    let s = scan(&dir, &tmp.path().join("cache"), LATER);
    assert_eq!(s.entries.len(), 2);
    assert!(s.entries.iter().all(|e| e.run_id == "resum001"));
    // Both run records say `resume` (resume="allow" asks for it each time).
    assert!(s.entries.iter().all(|e| e.resumed));
    assert_eq!(s.entries[0].last_step, Some(19));
    assert_eq!(s.entries[1].last_step, Some(29));
}

#[test]
fn crashed_fixture_is_crashed_once_quiet_and_running_while_recent() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = copy_fixture("crashed", tmp.path());
    let x = expected("crashed");
    let s = scan(&dir, &tmp.path().join("cache"), LATER);
    let e = &s.entries[0];
    assert_eq!(e.state, IndexState::Crashed);
    assert_eq!(e.exit_code, None);
    assert!(same(&summary_of(e), &x["summary"]));
    assert_eq!(e.last_step, x["step"].as_i64());
    assert!(
        e.incomplete_tail_bytes > 0,
        "it stops partway through a record"
    );
    assert_eq!(e.damage, 0);
    // Within the stale limit of its last record (and its mtime is newer): running.
    let last = e.last_time.expect("last time");
    let s = scan(&dir, &tmp.path().join("cache"), last + 10.0);
    assert_eq!(s.entries[0].state, IndexState::Running);
    assert_eq!(
        s.read, 0,
        "the state is decided again from the cached entry"
    );
}

// ---------------------------------------------------------------------------
// Generated runs.

fn rec(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

fn cfg(key: &str, v: &str) -> pb::ConfigItem {
    pb::ConfigItem {
        nested_key: key.split('.').map(str::to_owned).collect(),
        value_json: v.into(),
        ..Default::default()
    }
}

fn sitem(key: &str, v: &str) -> pb::SummaryItem {
    pb::SummaryItem {
        nested_key: key.split('.').map(str::to_owned).collect(),
        value_json: v.into(),
        ..Default::default()
    }
}

fn hitem(key: &str, v: &str) -> pb::HistoryItem {
    pb::HistoryItem {
        nested_key: vec![key.to_owned()],
        value_json: v.into(),
        ..Default::default()
    }
}

/// A run: run record with config, `steps` rows from `t0`, a later config record,
/// summary updates and a removal, and an exit record with `exit` (None: none).
fn run_bytes(id: &str, t0: f64, steps: u64, exit: Option<i32>) -> Vec<u8> {
    use pb::record::RecordType as T;
    let mut w = Writer::new();
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    w.append(&rec(
        next(),
        T::Run(pb::RunRecord {
            run_id: id.into(),
            project: "gen".into(),
            display_name: format!("{id}-name"),
            tags: vec!["a".into(), "b".into()],
            notes: "some notes".into(),
            start_time: Some(prost_types::Timestamp {
                seconds: t0 as i64,
                nanos: 0,
            }),
            config: Some(pb::ConfigRecord {
                update: vec![cfg("lr", "0.001"), cfg("model.layers", "[1,2]")],
                ..Default::default()
            }),
            ..Default::default()
        }),
    ));
    for s in 0..steps {
        let t = t0 + s as f64;
        let loss = format!("{}", 1.0 / (s as f64 + 1.0));
        w.append(&rec(
            next(),
            T::History(pb::HistoryRecord {
                item: vec![
                    hitem("_step", &s.to_string()),
                    hitem("_timestamp", &t.to_string()),
                    hitem("loss", &loss),
                ],
                ..Default::default()
            }),
        ));
        w.append(&rec(
            next(),
            T::Summary(pb::SummaryRecord {
                update: vec![
                    sitem("_step", &s.to_string()),
                    sitem("loss", &loss),
                    sitem("tmp.x", "1"),
                    sitem("tmp.y", "2"),
                ],
                ..Default::default()
            }),
        ));
    }
    w.append(&rec(
        next(),
        T::Config(pb::ConfigRecord {
            update: vec![cfg("seed", "7"), cfg("model.width", "128")],
            ..Default::default()
        }),
    ));
    w.append(&rec(
        next(),
        T::Summary(pb::SummaryRecord {
            update: vec![sitem("best", "0.5"), sitem("gone", "\"soon\"")],
            remove: vec![pb::SummaryItem {
                nested_key: vec!["tmp".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
    ));
    w.append(&rec(
        next(),
        T::Summary(pb::SummaryRecord {
            update: vec![sitem("gone", "null")],
            ..Default::default()
        }),
    ));
    if let Some(code) = exit {
        w.append(&rec(
            next(),
            T::Exit(pb::RunExitRecord {
                exit_code: code,
                runtime: 42,
                ..Default::default()
            }),
        ));
    }
    w.into_bytes()
}

fn write_run(wandb: &Path, stamp: &str, id: &str, bytes: &[u8]) -> PathBuf {
    let d = wandb.join(format!("offline-run-{stamp}-{id}"));
    std::fs::create_dir_all(&d).expect("mkdir");
    let f = d.join(format!("run-{id}.wandb"));
    std::fs::write(&f, bytes).expect("write");
    f
}

const T0: f64 = 1_796_000_000.0;

/// finished, failed, quiet without exit, recent without exit.
fn four_runs(wandb: &Path) -> [PathBuf; 4] {
    [
        write_run(
            wandb,
            "20261130_100000",
            "fin",
            &run_bytes("fin", T0, 20, Some(0)),
        ),
        write_run(
            wandb,
            "20261130_100001",
            "fail",
            &run_bytes("fail", T0, 20, Some(3)),
        ),
        write_run(
            wandb,
            "20261130_100002",
            "quiet",
            &run_bytes("quiet", T0, 20, None),
        ),
        write_run(
            wandb,
            "20261130_100003",
            "live",
            &run_bytes("live", now() - 5.0, 20, None),
        ),
    ]
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

fn by_id<'a>(s: &'a index::Scan, id: &str) -> &'a RunIndexEntry {
    s.entries
        .iter()
        .find(|e| e.run_id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn state_per_kind_and_folded_config_and_summary() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    four_runs(&wandb);
    let s = scan(&wandb, &tmp.path().join("cache"), now());
    assert_eq!(s.read, 4);
    assert_eq!(by_id(&s, "fin").state, IndexState::Finished);
    assert_eq!(by_id(&s, "fail").state, IndexState::Failed);
    assert_eq!(by_id(&s, "fail").exit_code, Some(3));
    assert_eq!(by_id(&s, "quiet").state, IndexState::Crashed);
    assert_eq!(by_id(&s, "live").state, IndexState::Running);
    let e = by_id(&s, "fin");
    // Config: the run record's keys, and those a config record added later.
    assert_eq!(
        Value::Object(e.config.clone()),
        json!({"lr": 0.001, "model": {"layers": [1, 2], "width": 128}, "seed": 7})
    );
    // Summary: `tmp` removed with everything below it, `gone` removed by null.
    assert_eq!(
        Value::Object(e.summary.clone()),
        json!({"_step": 19, "loss": 0.05, "best": 0.5})
    );
    assert_eq!(e.last_step, Some(19));
    assert_eq!(e.history_rows, 20);
    assert_eq!(e.runtime, Some(42.0));
    assert_eq!(
        by_id(&s, "quiet").runtime,
        Some(19.0),
        "no exit: last record less start"
    );
    assert_eq!(e.tags, ["a", "b"]);
    assert_eq!(e.notes, "some notes");
    assert_eq!(e.start_time, Some(T0));
    // Newest first.
    let ids: Vec<&str> = s.entries.iter().map(|e| e.run_id.as_str()).collect();
    assert_eq!(ids, ["live", "quiet", "fail", "fin"]);
}

#[test]
fn second_scan_reads_nothing_and_gives_the_same_entries() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let files = four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let first = scan(&wandb, &cache, T0 + 1e6);
    assert_eq!((first.read, first.cached), (4, 0));
    assert!(
        first.cache_write_error.is_none(),
        "{:?}",
        first.cache_write_error
    );
    let second = scan(&wandb, &cache, T0 + 1e6);
    assert_eq!((second.read, second.cached), (0, 4));
    assert_eq!(second.entries, first.entries);
    assert!(second.cache_rejected.is_none());
    // The files rewritten (zeroed), their size and mtime put back: their
    // status-change time moved, so they are read again rather than taken from
    // the cache as they were (a `chmod` moves it alone).
    for f in &files {
        let m = std::fs::metadata(f).expect("meta");
        let len = usize::try_from(m.len()).expect("len");
        std::fs::write(f, vec![0u8; len]).expect("zero");
        let t = m.modified().expect("mtime");
        std::fs::File::options()
            .write(true)
            .open(f)
            .expect("open")
            .set_modified(t)
            .expect("touch");
    }
    let third = scan(&wandb, &cache, T0 + 1e6);
    assert_eq!((third.read, third.cached), (4, 0));
    assert!(third.entries.iter().all(|e| !e.has_run_record));
}

#[test]
fn a_changed_file_is_read_again_and_a_deleted_run_dropped() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let files = four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let t = now();
    assert_eq!(scan(&wandb, &cache, t).read, 4);
    // The live run finishes: its exit record is appended.
    let done = run_bytes("live", t - 5.0, 20, Some(0));
    std::fs::write(&files[3], &done).expect("append");
    std::fs::remove_dir_all(files[0].parent().expect("dir")).expect("rm");
    let s = scan(&wandb, &cache, t);
    assert_eq!((s.read, s.cached), (1, 2));
    assert_eq!(by_id(&s, "live").state, IndexState::Finished);
    assert!(s.entries.iter().all(|e| e.run_id != "fin"));
    // And the cache written after it no longer holds the deleted run.
    let s = scan(&wandb, &cache, t);
    assert_eq!((s.read, s.cached, s.entries.len()), (0, 3, 3));
    // A newer `.wandb` file in a cached run's directory does not hide the run's own
    // `run-<id>.wandb` (the directory's id); once that is gone, it is the one
    // indexed (the directory changed, so it is listed again).
    let quiet_dir = files[2].parent().expect("dir");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let newer = quiet_dir.join("run-quiet2.wandb");
    std::fs::write(&newer, run_bytes("quiet2", T0, 5, Some(1))).expect("write");
    let s = scan(&wandb, &cache, t);
    assert_eq!((s.read, s.cached), (0, 3));
    assert_eq!(by_id(&s, "quiet").file.as_ref(), Some(&files[2]));
    assert!(s.entries.iter().all(|e| e.run_id != "quiet2"));
    std::fs::remove_file(&files[2]).expect("rm");
    let s = scan(&wandb, &cache, t);
    assert_eq!((s.read, s.cached), (1, 2));
    let e = by_id(&s, "quiet2");
    assert_eq!(
        (e.file.as_ref(), e.state),
        (Some(&newer), IndexState::Failed)
    );
}

#[test]
fn corrupt_caches_are_rebuilt_with_correct_results() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let good = scan(&wandb, &cache, T0 + 1e6);
    let canonical = std::fs::canonicalize(&wandb).expect("canon");
    let file = index::cache::file_for(&cache, &canonical);
    let text = std::fs::read_to_string(&file).expect("cache written");
    let mut lie: Value = serde_json::from_str(&text).expect("json");
    lie["runs"][0]["display_name"] = json!("forged");
    let mut wrong_version = lie.clone();
    wrong_version["version"] = json!(999);
    let mut other_dir = lie.clone();
    other_dir["wandb_dir"] = json!("/elsewhere");
    let huge = vec![b' '; usize::try_from(index::cache::MAX_CACHE_BYTES).expect("size") + 10];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "garbage",
            b"\x00\xffnot json at all".to_vec(),
            "does not parse",
        ),
        (
            "truncated",
            text.as_bytes()[..text.len() / 2].to_vec(),
            "does not parse",
        ),
        (
            "wrong version",
            wrong_version.to_string().into_bytes(),
            "version 999",
        ),
        (
            "other dir",
            other_dir.to_string().into_bytes(),
            "another directory",
        ),
        ("huge", huge, "too large"),
        (
            "wrong types",
            format!(
                r#"{{"version":{},"wandb_dir":3,"runs":{{}}}}"#,
                index::cache::VERSION
            )
            .into_bytes(),
            "does not parse",
        ),
    ];
    for (what, bytes, why) in cases {
        std::fs::write(&file, &bytes).expect("write cache");
        let s = scan(&wandb, &cache, T0 + 1e6);
        let rejected = s.cache_rejected.clone().unwrap_or_default();
        assert!(rejected.contains(why), "{what}: {rejected}");
        assert_eq!(s.read, 4, "{what}: every run read again");
        assert_eq!(s.entries, good.entries, "{what}");
        // Rebuilt: the next scan uses it.
        let again = scan(&wandb, &cache, T0 + 1e6);
        assert_eq!(
            (again.read, again.cache_rejected.clone()),
            (0, None),
            "{what}"
        );
        assert_eq!(again.entries, good.entries, "{what}");
    }
    // An entry pointing at a file of another directory is never used for it.
    let mut hostile = lie.clone();
    hostile["runs"][0]["dir"] = json!("/etc");
    std::fs::write(&file, hostile.to_string()).expect("write");
    let s = scan(&wandb, &cache, T0 + 1e6);
    assert_eq!(s.read, 1);
    assert_eq!(s.entries, good.entries);
}

#[test]
fn damaged_run_file_is_indexed_with_its_damage_count() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let mut bytes = run_bytes("dmg", T0, 200, Some(0));
    // Break a checksum in the second block and cut the file inside a record.
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    bytes[mid + 1] ^= 0xff;
    write_run(&wandb, "20261130_100000", "dmg", &bytes);
    let mut cut = run_bytes("cut", T0, 200, Some(0));
    cut.truncate(cut.len() - 30);
    write_run(&wandb, "20261130_100001", "cut", &cut);
    write_run(&wandb, "20261130_100002", "hdr", b"not a wandb file at all");
    std::fs::create_dir_all(wandb.join("run-20261130_100003-empty")).expect("mkdir");
    let s = scan(&wandb, &tmp.path().join("cache"), T0 + 1e6);
    assert_eq!(s.entries.len(), 4);
    let d = by_id(&s, "dmg");
    assert!(
        d.damage >= 1 && d.damaged_bytes > 0,
        "{} {}",
        d.damage,
        d.damaged_bytes
    );
    assert!(
        d.history_rows > 100 && d.history_rows < 200,
        "{}",
        d.history_rows
    );
    assert_eq!(
        d.state,
        IndexState::Finished,
        "the exit record after the damage is read"
    );
    assert_eq!(d.config["seed"], json!(7));
    let c = by_id(&s, "cut");
    assert_eq!(c.exit_code, None, "the exit record was cut off");
    assert!(
        c.incomplete_tail_bytes > 0,
        "the cut record is an incomplete tail"
    );
    assert_eq!(c.state, IndexState::Crashed);
    assert_eq!(d.incomplete_tail_bytes, 0);
    let h = &s.entries[1];
    assert!(
        h.error
            .as_deref()
            .is_some_and(|e| e.contains("run-hdr.wandb")),
        "{:?}",
        h.error
    );
    assert_eq!(h.state, IndexState::Unknown);
    let empty = &s.entries[0];
    assert_eq!(
        (empty.file.as_ref(), empty.state),
        (None, IndexState::Unknown)
    );
}

#[test]
fn every_spelling_of_the_directory_shares_one_cache() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    four_runs(&wandb);
    let cache = tmp.path().join("cache");
    assert_eq!(scan(&wandb, &cache, T0).read, 4);
    std::os::unix::fs::symlink(&wandb, tmp.path().join("link")).expect("symlink");
    let s = scan(&tmp.path().join("link/"), &cache, T0);
    assert_eq!((s.read, s.cached), (0, 4));
    assert_eq!(std::fs::read_dir(&cache).expect("cache dir").count(), 1);
}

/// A big run still writing is not read again at every scan (once a second in the
/// workspace): it keeps what was read, shows as alive by its new mtime, and is read
/// again once its wait (20 s per 100 MB) has passed. Small files are read at once.
#[test]
fn a_big_growing_run_is_read_again_only_after_a_while() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let cache = tmp.path().join("cache");
    let t = now();
    // About 8 MB: read again after about 1.6 s.
    let big = run_bytes("big", t - 5.0, 40_000, None);
    assert!(big.len() > 6_000_000, "{}", big.len());
    let file = write_run(&wandb, "20261201_000000", "big", &big);
    let first = scan(&wandb, &cache, t);
    assert_eq!(first.read, 1);
    let rows = by_id(&first, "big").history_rows;
    // It grows (an exit record more); scanned at once: not read, still alive.
    let done = run_bytes("big", t - 5.0, 40_000, Some(0));
    std::fs::write(&file, &done).expect("grow");
    let soon = scan(&wandb, &cache, t + 0.5);
    assert_eq!((soon.read, soon.cached), (0, 1));
    let e = by_id(&soon, "big");
    assert_eq!((e.history_rows, e.state), (rows, IndexState::Running));
    // Its wait over, it is read again: finished.
    let later = scan(&wandb, &cache, t + 30.0);
    assert_eq!(later.read, 1);
    assert_eq!(by_id(&later, "big").state, IndexState::Finished);
    // A small run that grows is read at the next scan.
    let small = write_run(
        &wandb,
        "20261201_000100",
        "small",
        &run_bytes("small", t, 20, None),
    );
    scan(&wandb, &cache, t + 31.0);
    std::fs::write(&small, run_bytes("small", t, 20, Some(0))).expect("grow");
    let s = scan(&wandb, &cache, t + 31.5);
    assert_eq!(by_id(&s, "small").state, IndexState::Finished);
}

/// A finished run is looked at once in `DONE_RECHECK_S` seconds, a share of them
/// each second: its rewrite shows within that time, and not at every second.
#[test]
fn a_rewritten_finished_run_shows_within_the_recheck_time() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let files = four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let t = now().floor();
    let first = scan(&wandb, &cache, t).entries;
    let done: Vec<usize> = (first.iter().enumerate())
        .filter(|(_, e)| e.exit_code.is_some())
        .map(|(i, _)| i)
        .collect();
    assert!(!done.is_empty(), "{first:?}");
    // The newest finished run's file, rewritten with more steps.
    let i = done[0];
    let file = first[i].file.clone().expect("file");
    assert!(files.contains(&file));
    let id = first[i].run_id.clone();
    std::fs::write(&file, run_bytes(&id, T0, 40, Some(0))).expect("rewrite");
    let recheck = index::DONE_RECHECK_S;
    let seen: Vec<u64> = (0..recheck)
        .filter(|k| !index::unchanged(&wandb, &first, &opts(t + *k as f64)))
        .collect();
    assert_eq!(seen.len(), 1, "looked at once in {recheck} s: {seen:?}");
    // And the scan it asks for reads it.
    let second = scan(&wandb, &cache, t + seen[0] as f64).entries;
    assert_ne!(second[i].size, first[i].size);
}

/// A run quiet past the stale limit ("crashed?") is looked at once in
/// `QUIET_RECHECK_S` seconds: one that comes back to life shows within it.
#[test]
fn a_crashed_run_that_grows_shows_within_its_recheck_time() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let t = now().floor();
    let first = scan(&wandb, &cache, t).entries;
    let i = (first.iter())
        .position(|e| e.state == IndexState::Crashed)
        .expect("a crashed run");
    let file = first[i].file.clone().expect("file");
    std::fs::write(&file, run_bytes("quiet", T0, 40, None)).expect("grow");
    let recheck = index::QUIET_RECHECK_S;
    let seen: Vec<u64> = (0..recheck)
        .filter(|k| !index::unchanged(&wandb, &first, &opts(t + *k as f64)))
        .collect();
    assert_eq!(seen.len(), 1, "looked at once in {recheck} s: {seen:?}");
}

/// The wandb directory's own modification time moves when a run directory is added
/// or removed: while it stands still the check takes the run directories from the
/// last scan (no listing), and still sees a run's file change.
#[test]
fn the_listing_is_skipped_while_the_wandb_directory_stands_still() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let files = four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let t = now();
    let before = index::dir_mtime_ns(&wandb);
    assert_ne!(before, 0);
    let first = scan(&wandb, &cache, t).entries;
    assert!(index::unchanged_listed(&wandb, &first, &opts(t), true));
    // The live run (looked at every second) writes: seen without a listing.
    std::fs::write(&files[3], run_bytes("live", t - 5.0, 40, None)).expect("grow");
    assert!(!index::unchanged_listed(&wandb, &first, &opts(t), true));
    assert_eq!(
        index::dir_mtime_ns(&wandb),
        before,
        "a file written in a run"
    );
    let second = scan(&wandb, &cache, t).entries;
    std::thread::sleep(std::time::Duration::from_millis(20));
    write_run(
        &wandb,
        "20261130_100009",
        "added",
        &run_bytes("added", T0, 5, Some(0)),
    );
    assert_ne!(index::dir_mtime_ns(&wandb), before, "a run directory added");
    assert!(!index::unchanged_listed(&wandb, &second, &opts(t), false));
}

/// The workspace's once-a-second check: nothing on disk changed and no state due
/// to change means the last scan's entries stand; any change says otherwise.
#[test]
fn unchanged_holds_until_a_run_a_file_or_a_state_changes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wandb = tmp.path().join("wandb");
    let files = four_runs(&wandb);
    let cache = tmp.path().join("cache");
    let t = now();
    let first = scan(&wandb, &cache, t).entries;
    assert!(index::unchanged(&wandb, &first, &opts(t)));
    // The live run turns crashed once quiet past the stale limit: a change is due.
    assert!(!index::unchanged(&wandb, &first, &opts(t + 1000.0)));
    // A file that changed.
    std::fs::write(&files[3], run_bytes("live", t - 5.0, 20, Some(0))).expect("write");
    assert!(!index::unchanged(&wandb, &first, &opts(t)));
    let second = scan(&wandb, &cache, t).entries;
    assert!(index::unchanged(&wandb, &second, &opts(t)));
    // A new run directory, and a deleted one.
    write_run(
        &wandb,
        "20261130_100004",
        "new",
        &run_bytes("new", T0, 5, Some(0)),
    );
    assert!(!index::unchanged(&wandb, &second, &opts(t)));
    let third = scan(&wandb, &cache, t).entries;
    std::fs::remove_dir_all(files[0].parent().expect("dir")).expect("rm");
    assert!(!index::unchanged(&wandb, &third, &opts(t)));
    // Entries that differ only by modification times list the same.
    let mut moved = third[0].clone();
    moved.mtime_ns += 1;
    moved.dir_mtime_ns += 1;
    moved.read_at += 1.0;
    assert!(index::same_listing(&third[0], &moved));
    moved.history_rows += 1;
    assert!(!index::same_listing(&third[0], &moved));
}

/// A big run beside small ones: the scan lists every run before the big file is
/// read (the small ones cached, the big one by its directory, id and size, marked
/// as reading), and the whole index after; a scan with nothing to read lists no
/// partial index.
#[test]
fn the_scan_lists_every_run_before_a_big_one_is_read() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (wandb, cache) = (tmp.path().join("wandb"), tmp.path().join("cache"));
    four_runs(&wandb);
    let first = scan(&wandb, &cache, now());
    assert_eq!(first.read, 4);
    let big = write_run(
        &wandb,
        "20261130_200000",
        "big",
        &run_bytes("big", T0, 20_000, Some(0)),
    );
    let size = std::fs::metadata(&big).expect("stat").len();
    let o = ScanOptions {
        threads: Some(1),
        ..opts(now())
    };
    let mut parts: Vec<Vec<RunIndexEntry>> = Vec::new();
    let s = index::scan_progress(&wandb, &cache, &o, None, &mut |p| parts.push(p));
    assert_eq!(s.read, 1);
    let listing = parts
        .first()
        .expect("a partial index before the big run is read");
    assert_eq!(listing.len(), 5);
    // Newest first: the big run, known by what is cheap to know.
    let b = &listing[0];
    assert!(b.reading);
    assert_eq!(b.run_id, "big");
    assert_eq!(b.size, size);
    assert_eq!(b.file.as_deref(), Some(big.as_path()));
    assert!(!b.has_run_record && b.history_rows == 0);
    // The small runs as cached, whole.
    for (e, id) in listing[1..].iter().zip(["live", "quiet", "fail", "fin"]) {
        assert!(!e.reading);
        assert_eq!(e.run_id, id);
        assert_eq!(e.history_rows, 20);
    }
    // The scan's result is whole.
    assert!(s.entries.iter().all(|e| !e.reading));
    assert_eq!(by_id(&s, "big").history_rows, 20_000);
    // Nothing left to read: no partial index.
    parts.clear();
    let again = index::scan_progress(&wandb, &cache, &o, None, &mut |p| parts.push(p));
    assert_eq!(again.read, 0);
    assert!(parts.is_empty());
}
