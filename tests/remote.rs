//! Runs on a W&B server, against a fake one on 127.0.0.1 (`remote/server.rs`):
//! the same run read from its `.wandb` file and from the server (its history
//! exported as W&B's Parquet layout) gives the same history values for every
//! key; each failure gives its one line; the key appears in no message and no
//! cache file; live rows are followed; a set cancel flag stops an open; `leet
//! URL` shows the run in a terminal and follows it while it runs, a project URL
//! its runs in the workspace, `--compare URL` the run beside a local one.

mod common;
#[path = "remote/server.rs"]
mod server;
#[path = "remote/streams.rs"]
mod streams;
#[path = "remote/terminal.rs"]
mod terminal;
#[path = "remote/tls.rs"]
mod tls;
#[path = "remote/viewer.rs"]
mod viewer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use leet::source::remote::auth::ApiKey;
use leet::source::remote::cache::Cache;
use leet::source::remote::client::Timeouts;
use leet::source::remote::fetch::{self, Options};
use leet::source::remote::{RemoteError, RemoteUrl};
use leet_format::event::{Event, Events, Sink};
use leet_format::leveldb::Skip;
use serde_json::{json, Value};
use server::{Fake, Mode};

const KEY: &str = "local-0123456789abcdef0123456789abcdef01234567";

/// Every history point of complete rows: key → (step, value) in order.
#[derive(Default)]
struct Points(BTreeMap<String, Vec<(Option<u64>, u64)>>);

impl Sink for Points {
    fn fold(&mut self, ev: &Events) {
        for e in &ev.list {
            if let Event::Row(r) = e {
                if !r.complete {
                    continue;
                }
                for (k, v) in &ev.values[r.values.start as usize..r.values.end as usize] {
                    self.0
                        .entry(ev.keys[*k as usize].clone())
                        .or_default()
                        .push((r.step.map(f64::to_bits), v.to_bits()));
                }
            }
        }
    }
    fn at_end(&mut self, _: u64, _: Option<Skip>) {}
}

fn fixture(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name);
    leet::source::resolve::resolve_file(&dir.join("wandb/latest-run")).expect("fixture")
}

fn local_points(file: &Path) -> Points {
    let mut p = Points::default();
    leet::source::reader::RunReader::open(file)
        .expect("open")
        .read_all_parallel(&mut p)
        .expect("read");
    p
}

/// The fixture's history as one Parquet file, written by `leet export`.
fn parquet_of(file: &Path, dir: &Path) -> Vec<u8> {
    let out = dir.join("history.parquet");
    let opts = leet::inspect::export::ExportOptions {
        path: file.to_owned(),
        format: Some(leet::inspect::export::Format::Parquet),
        output: Some(out.clone()),
        ..Default::default()
    };
    leet::inspect::export::run(&opts, &mut std::io::sink(), &mut std::io::sink()).expect("export");
    std::fs::read(out).expect("parquet")
}

fn run_object(state: &str) -> Value {
    json!({
        "id": "UnVuOjE=", "name": "tiny0001", "displayName": "tiny", "state": state,
        "config": "{\"lr\": {\"value\": 0.1, \"desc\": null}}",
        "summaryMetrics": "{\"loss\": 0.25, \"_step\": 4}",
        "createdAt": "2026-11-30T17:48:29", "heartbeatAt": "2026-11-30T17:49:00",
        "historyLineCount": 5, "notes": null, "tags": ["a"], "group": null,
        "jobType": null, "sweepName": null, "commit": null,
    })
}

fn url_of(fake: &Fake) -> RemoteUrl {
    RemoteUrl::parse(&format!("{}/ent/proj/runs/tiny0001", fake.addr), None).expect("url")
}

fn opts(cache: Option<Cache>) -> Options {
    Options {
        key: ApiKey::new(KEY),
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_millis(500),
            answer: Duration::from_secs(30),
        },
        cache,
        summary_only: false,
        framing: false,
        ca_file: None,
    }
}

fn open(fake: &Fake, o: &Options) -> Result<Points, RemoteError> {
    open_run(fake, o).map(|(_, p)| p)
}

/// [`open`], with the run read.
fn open_run(fake: &Fake, o: &Options) -> Result<(fetch::RemoteRun, Points), RemoteError> {
    let (run, batches) = fetch::open(&url_of(fake), o, &AtomicBool::new(false), &mut |_| {})?;
    let mut p = Points::default();
    for b in &batches {
        p.fold(b);
    }
    Ok((run, p))
}

#[test]
fn the_same_run_from_its_file_and_from_the_server_has_the_same_history() {
    for name in ["tiny", "custom_step", "many_metrics"] {
        let tmp = tempfile::tempdir().expect("tmp");
        let file = fixture(name);
        let local = local_points(&file);
        let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
        let remote = open(&fake, &opts(None)).expect("open");
        assert!(!local.0.is_empty(), "{name}: no history");
        assert_eq!(
            local.0.keys().collect::<Vec<_>>(),
            remote.0.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (k, pts) in &local.0 {
            assert_eq!(Some(pts), remote.0.get(k), "{name}: {k}");
        }
        let seen = fake.seen();
        assert!(
            seen.to_ascii_lowercase().contains("authorization: basic "),
            "{seen}"
        );
        assert!(
            !seen.contains(KEY),
            "the key travels only base64'd in the header"
        );
    }
}

#[test]
fn a_server_hanging_on_the_console_metrics_and_files_costs_one_wait_and_says_so() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    // Each of the three outlasts the client's 500 ms read timeout.
    fake.set_mode(Mode::SlowExtras(Duration::from_secs(3)));
    let (run, p) = open_run(&fake, &opts(None)).expect("the run opens without its niceties");
    assert_eq!(
        p.0.keys().collect::<Vec<_>>(),
        local_points(&file).0.keys().collect::<Vec<_>>()
    );
    // Asked at once, not one timeout after another (an open took 92 s so).
    assert_eq!(fake.state.lock().expect("lock").extras_most, 3);
    let t = run.trouble(None).expect("the missing parts are said");
    assert!(!t.polls_fail, "the run's polls answer");
    assert!(
        t.text
            .starts_with("the server gave no console, system metrics, environment: ")
            && t.text.contains(&fake.addr),
        "{}",
        t.text
    );
    fake.set_mode(Mode::Ok);
    let (run, _) = open_run(&fake, &opts(None)).expect("open");
    assert_eq!(run.trouble(None), None);
}

#[test]
fn an_answer_trickled_past_its_deadline_is_a_timeout() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fake = Fake::start(
        run_object("finished"),
        vec![parquet_of(&fixture("tiny"), tmp.path())],
    );
    // Every read gets a byte well within its timeout; the whole answer (hundreds
    // of bytes) would take a minute.
    fake.set_mode(Mode::Trickle(Duration::from_millis(150)));
    let o = Options {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_secs(5),
            answer: Duration::from_secs(2),
        },
        ..opts(None)
    };
    let msg = open(&fake, &o).err().expect("trickled").to_string();
    assert!(msg.contains("did not answer in time"), "{msg}");
}

#[test]
fn each_failure_is_one_line_naming_what_to_check_without_the_key() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let cases = [
        (Mode::Status(401), "refused the API key"),
        (Mode::Status(403), "refused the API key"),
        (Mode::Status(404), "not a W&B API at that URL"),
        (Mode::NoRun, "the run was not found"),
        (Mode::Status(500), "HTTP 500"),
        (Mode::Slow(Duration::from_secs(3)), "did not answer in time"),
        (Mode::CutFile, "cut"),
    ];
    for (mode, want) in cases {
        fake.set_mode(mode.clone());
        let e = open(&fake, &opts(None))
            .err()
            .unwrap_or_else(|| panic!("{mode:?} opened"));
        let msg = e.to_string();
        assert!(msg.contains(want), "{mode:?}: {msg}");
        assert!(!msg.contains(KEY) && !msg.contains('\n'), "{mode:?}: {msg}");
        assert!(
            !msg.contains("Signature"),
            "signed URLs are shown without their query: {msg}"
        );
    }
    fake.set_mode(Mode::Ok);
    fake.state.lock().expect("lock").files = vec![b"PAR1 not really parquet PAR1".to_vec()];
    let msg = open(&fake, &opts(None)).err().expect("corrupt").to_string();
    assert!(msg.contains("not a readable Parquet file"), "{msg}");
    let msg = open(
        &fake,
        &Options {
            key: None,
            ..opts(None)
        },
    )
    .err()
    .expect("no key")
    .to_string();
    assert!(msg.contains("WANDB_API_KEY"), "{msg}");
}

#[test]
fn a_file_refused_or_missing_at_the_storage_says_so_not_the_key() {
    let tmp = tempfile::tempdir().expect("tmp");
    let parquet = parquet_of(&fixture("tiny"), tmp.path());
    let fake = Fake::start(run_object("finished"), vec![parquet.clone()]);
    // Another origin, as a storage bucket is: its signed links carry their own
    // authorization and get no key.
    let storage = Fake::start(Value::Null, vec![parquet]);
    fake.state.lock().expect("lock").file_base = Some(storage.addr.clone());
    let cases = [
        (403, "the storage refused the file's link (HTTP 403)"),
        (401, "the storage refused the file's link (HTTP 401)"),
        (404, "the file was not found at the storage"),
    ];
    for (code, want) in cases {
        storage.set_mode(Mode::Status(code));
        let msg = open(&fake, &opts(None)).err().expect("refused").to_string();
        assert!(msg.contains(want), "{code}: {msg}");
        assert!(msg.contains(&storage.addr), "{code}: names the link: {msg}");
        assert!(
            !msg.contains("API key") && !msg.contains("run was not found"),
            "{code}: {msg}"
        );
        assert!(!msg.contains("Signature") && !msg.contains(KEY), "{msg}");
    }
    assert!(!storage
        .seen()
        .to_ascii_lowercase()
        .contains("authorization"));
    storage.set_mode(Mode::Ok);
    assert!(open(&fake, &opts(None)).is_ok());
}

#[test]
fn a_redirected_query_names_where_it_goes() {
    let fake = Fake::start(run_object("finished"), Vec::new());
    for code in [301, 302, 307, 308] {
        fake.set_mode(Mode::Redirect(
            code,
            "https://127.0.0.1:1/graphql?k=v".into(),
        ));
        let msg = open(&fake, &opts(None))
            .err()
            .expect("redirect")
            .to_string();
        assert!(
            msg.contains(&format!(
                "the server redirects to https://127.0.0.1:1/graphql (HTTP {code})"
            )) && msg.contains("WANDB_BASE_URL=https://127.0.0.1:1"),
            "{code}: {msg}"
        );
        assert!(!msg.contains(KEY) && !msg.contains('\n'), "{msg}");
    }
    // Followed as a GET, a 301 ended in "HTTP 400"; nothing but the POST is sent.
    assert!(!fake.seen().contains("GET "), "{}", fake.seen());
    fake.set_mode(Mode::Redirect(301, "/v1/\u{1b}]0;x\u{7}graphql".into()));
    let msg = open(&fake, &opts(None))
        .err()
        .expect("redirect")
        .to_string();
    assert!(!msg.contains('\u{1b}') && !msg.contains('\u{7}'), "{msg:?}");
}

#[test]
fn a_busy_server_is_asked_again() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fake = Fake::start(
        run_object("finished"),
        vec![parquet_of(&fixture("tiny"), tmp.path())],
    );
    for status in [429, 502, 503, 504] {
        fake.set_mode(Mode::Busy {
            status,
            left: 2,
            after: Some(0),
        });
        let mut retries = Vec::new();
        let r = fetch::open(
            &url_of(&fake),
            &opts(None),
            &AtomicBool::new(false),
            &mut |p| {
                if let fetch::Progress::Retrying {
                    status, attempt, ..
                } = p
                {
                    retries.push((status, attempt));
                }
            },
        );
        assert!(r.is_ok(), "{status}: {:?}", r.err());
        assert_eq!(retries, vec![(status, 2), (status, 3)]);
        let line = leet::source::remote::local::progress_line(fetch::Progress::Retrying {
            status,
            wait_s: 0,
            attempt: 2,
            of: 5,
        })
        .expect("a line");
        assert!(line.contains("trying again"), "{line}");
    }
    // Busy for good: a bounded number of tries, then one line.
    fake.state.lock().expect("lock").seen.clear();
    fake.set_mode(Mode::Busy {
        status: 503,
        left: usize::MAX,
        after: Some(0),
    });
    let msg = open(&fake, &opts(None)).err().expect("busy").to_string();
    assert!(
        msg.contains("busy or down (HTTP 503), still after 5 tries"),
        "{msg}"
    );
    assert_eq!(fake.state.lock().expect("lock").seen.len(), 5);
    // A wait the server asked for ends when the user cancels.
    fake.set_mode(Mode::Busy {
        status: 503,
        left: usize::MAX,
        after: Some(30),
    });
    fake.state.lock().expect("lock").seen.clear();
    let cancel = AtomicBool::new(false);
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            while fake.state.lock().expect("lock").seen.is_empty() {
                std::thread::sleep(Duration::from_millis(10));
            }
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        fetch::open(&url_of(&fake), &opts(None), &cancel, &mut |_| {})
    });
    assert!(matches!(r, Err(RemoteError::Cancelled)), "{:?}", r.err());
    assert_eq!(fake.state.lock().expect("lock").seen.len(), 1);
}

#[test]
fn an_unreachable_host_says_so() {
    // A port just freed: nothing listens there. On 127.0.0.2 (loopback too), so
    // another test's fake server on 127.0.0.1, given the same port number by the
    // kernel meanwhile, is not what answers.
    let port = std::net::TcpListener::bind("127.0.0.2:0")
        .expect("bind")
        .local_addr()
        .expect("a")
        .port();
    let url = RemoteUrl::parse(&format!("http://127.0.0.2:{port}/e/p/runs/r"), None).expect("url");
    let e = fetch::open(&url, &opts(None), &AtomicBool::new(false), &mut |_| {}).expect_err("err");
    assert!(
        matches!(
            e,
            RemoteError::Unreachable { .. } | RemoteError::Timeout { .. }
        ),
        "{e}"
    );
}

#[test]
fn the_cache_serves_an_unchanged_run_and_holds_no_key() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let cache = Cache::new(tmp.path().join("cache"), 1 << 30);
    let first = open(&fake, &opts(Some(cache.clone()))).expect("first");
    // The files are gone from the server: only the cache can give them now.
    fake.state.lock().expect("lock").files.clear();
    let second = open(&fake, &opts(Some(cache.clone()))).expect("second");
    assert_eq!(first.0, second.0);
    // A changed run is fetched again (and now has no history files).
    fake.state.lock().expect("lock").run["heartbeatAt"] = json!("2026-11-30T18:00:00");
    let third = open(&fake, &opts(Some(cache))).expect("third");
    assert!(third.0.is_empty());
    let mut stack = vec![tmp.path().join("cache")];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).expect("dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files += 1;
                let b = std::fs::read(&p).expect("read");
                assert!(
                    !String::from_utf8_lossy(&b).contains(KEY),
                    "{}",
                    p.display()
                );
            }
        }
    }
    assert!(files > 0);
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut stack = vec![dir.to_owned()];
    let mut out = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_history_file_that_is_not_parquet_is_never_served_from_the_cache() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = parquet_of(&fixture("tiny"), tmp.path());
    let cut = good[..good.len() - 100].to_vec();
    let cache = Cache::new(tmp.path().join("cache"), 1 << 30);
    // Bodies sent with 200 that are not Parquet: an error page, a file cut short.
    for bad in [b"<html>Access denied</html>".to_vec(), cut] {
        let fake = Fake::start(run_object("finished"), vec![bad]);
        let msg = open(&fake, &opts(Some(cache.clone())))
            .err()
            .expect("not parquet")
            .to_string();
        assert!(msg.contains("not a readable Parquet file"), "{msg}");
        assert!(
            files_under(&tmp.path().join("cache")).is_empty(),
            "kept in the cache"
        );
        // The server serves the file right now: the next open reads it.
        fake.state.lock().expect("lock").files = vec![good.clone()];
        let p = open(&fake, &opts(Some(cache.clone()))).expect("downloaded again");
        assert!(!p.0.is_empty());
        let _ = std::fs::remove_dir_all(tmp.path().join("cache"));
    }
}

#[test]
fn a_cached_history_file_that_no_longer_reads_is_downloaded_again() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = parquet_of(&fixture("tiny"), tmp.path());
    let fake = Fake::start(run_object("finished"), vec![good.clone()]);
    let cache = Cache::new(tmp.path().join("cache"), 1 << 30);
    let first = open(&fake, &opts(Some(cache.clone()))).expect("first");
    let kept: Vec<PathBuf> = files_under(&tmp.path().join("cache"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // Damaged on disk after it was kept (a full disk, a crash, another program).
    std::fs::write(&kept[0], &good[..good.len() / 2]).expect("damage");
    let second = open(&fake, &opts(Some(cache.clone()))).expect("second");
    assert_eq!(first.0, second.0);
    assert_eq!(std::fs::read(&kept[0]).expect("kept again"), good);
}

#[test]
fn live_rows_after_the_files_are_read_and_followed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("running"), vec![parquet_of(&file, tmp.path())]);
    let local = local_points(&file);
    let last = local
        .0
        .values()
        .flatten()
        .filter_map(|p| p.0)
        .map(f64::from_bits)
        .fold(0.0, f64::max) as i64;
    {
        let mut s = fake.state.lock().expect("lock");
        s.live = vec![json!({"_step": last + 1, "loss": 0.125})];
        s.console = vec![
            json!({"number": 0, "timestamp": "2026-11-30T17:48:29Z", "level": "info", "label": "", "line": "first"}),
        ];
        s.events = vec![json!({"_timestamp": 100.0, "system.cpu": 1.0})];
    }
    let url = url_of(&fake);
    let cancel = AtomicBool::new(false);
    let (mut run, batches) = fetch::open(&url, &opts(None), &cancel, &mut |_| {}).expect("open");
    let mut p = Points::default();
    for b in &batches {
        p.fold(b);
    }
    assert_eq!(
        p.0["loss"].last(),
        Some(&(Some(((last + 1) as f64).to_bits()), 0.125f64.to_bits()))
    );
    assert!(run.poll(&cancel).expect("poll").is_empty(), "nothing new");
    {
        let mut s = fake.state.lock().expect("lock");
        s.live.push(json!({"_step": last + 2, "loss": 0.0625}));
        s.run["state"] = json!("finished");
        s.console.push(json!({"number": 1, "timestamp": "2026-11-30T17:48:30Z", "level": "error", "label": "", "line": "second"}));
        s.events
            .push(json!({"_timestamp": 105.0, "system.cpu": 2.0}));
    }
    let more = run.poll(&cancel).expect("poll");
    for b in &more {
        p.fold(b);
    }
    // Only what is new: the second console line and the second sample.
    let lines: Vec<&str> = more
        .iter()
        .flat_map(|b| &b.list)
        .filter_map(|e| match e {
            Event::Console {
                text,
                stdout: false,
                ..
            } => Some(text.as_str()),
            Event::Console { .. } => Some("(stdout)"),
            _ => None,
        })
        .collect();
    assert_eq!(lines, ["second"]);
    let cpu: Vec<f64> = more
        .iter()
        .flat_map(|b| b.list.iter().map(move |e| (b, e)))
        .filter_map(|(b, e)| match e {
            Event::Stats { values, .. } => Some(
                b.values[values.start as usize..values.end as usize]
                    .iter()
                    .map(|v| v.1)
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(cpu, [2.0]);
    assert_eq!(p.0["loss"].last().map(|x| x.1), Some(0.0625f64.to_bits()));
    assert!(more.iter().any(|b| b
        .list
        .iter()
        .any(|e| matches!(e, Event::Exit { code: 0, .. }))));
    assert_eq!(run.last_step, Some(last + 2));
}

/// Steps the program gives itself can jump by more than a page of the history
/// query: the rows after such a gap are read at the open and followed after it,
/// as far as the summary's `_step` says the run has gone.
#[test]
fn live_rows_after_a_gap_wider_than_a_page_are_read() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("running"), vec![parquet_of(&file, tmp.path())]);
    let set_live = |steps: &[i64]| {
        let mut s = fake.state.lock().expect("lock");
        s.live = steps
            .iter()
            .map(|st| json!({"_step": st, "loss": *st as f64}))
            .collect();
        let last = steps.last().copied().unwrap_or(0);
        s.run["summaryMetrics"] = json!(format!("{{\"loss\": {last}, \"_step\": {last}}}"));
        s.run["historyLineCount"] = json!(5 + steps.len());
    };
    set_live(&[25_000, 250_000]);
    let cancel = AtomicBool::new(false);
    let (mut run, batches) =
        fetch::open(&url_of(&fake), &opts(None), &cancel, &mut |_| {}).expect("open");
    let mut p = Points::default();
    for b in &batches {
        p.fold(b);
    }
    let steps = |p: &Points| -> Vec<i64> {
        p.0["loss"]
            .iter()
            .filter_map(|x| x.0)
            .map(|b| f64::from_bits(b) as i64)
            .filter(|s| *s > 1000)
            .collect()
    };
    assert_eq!(steps(&p), [25_000, 250_000]);
    assert_eq!(run.last_step, Some(250_000));
    // Nothing new: no window is asked for twice.
    let asked = fake
        .seen()
        .matches("\"operationName\":\"HistoryPage\"")
        .count();
    assert!(run.poll(&cancel).expect("poll").is_empty());
    assert_eq!(
        fake.seen()
            .matches("\"operationName\":\"HistoryPage\"")
            .count(),
        asked + 1
    );
    set_live(&[25_000, 250_000, 400_000]);
    for b in run.poll(&cancel).expect("poll") {
        p.fold(&b);
    }
    assert_eq!(steps(&p), [25_000, 250_000, 400_000]);
}

/// A project the server lists no run of is one line saying so, not the viewer's
/// "no run found" about a directory the user never named.
#[test]
fn a_project_without_runs_is_one_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fake = Fake::start(Value::Null, Vec::new());
    let url = format!("{}/ent/proj", fake.addr);
    let out = leet(tmp.path(), &[&url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("leet: {url}: the project has no runs"),
        "{err}"
    );
}

#[test]
fn a_set_cancel_flag_stops_an_open() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let e = fetch::open(
        &url_of(&fake),
        &opts(None),
        &AtomicBool::new(true),
        &mut |_| {},
    )
    .err();
    assert!(matches!(e, Some(RemoteError::Cancelled)), "{e:?}");
}

/// `leet ARGS` with the key in its environment and its caches under `home`.
fn leet(home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_leet"))
        .args(args)
        .env("WANDB_API_KEY", KEY)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("WANDB_BASE_URL")
        .env_remove("NETRC")
        .output()
        .expect("leet")
}

#[test]
fn export_and_inspect_of_a_url_give_what_they_give_for_the_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("many_metrics");
    let local = leet(
        tmp.path(),
        &[
            "inspect",
            "--summary",
            "--json",
            file.to_str().expect("utf8"),
        ],
    );
    let local: Value = serde_json::from_slice(&local.stdout).expect("local json");
    let mut run = run_object("finished");
    run["config"] = json!(local["config"].to_string());
    run["summaryMetrics"] = json!(local["summary"].to_string());
    let fake = Fake::start(run, vec![parquet_of(&file, tmp.path())]);
    fake.state.lock().expect("lock").console = local["console"]
        .as_array()
        .expect("console")
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let level = if l["stream"] == "stderr" { "error" } else { "info" };
            json!({"number": i, "timestamp": l["time"], "level": level, "label": "", "line": l["line"]})
        })
        .collect();
    let url = format!(
        "{}/{}/{}/runs/{}",
        fake.addr,
        local["entity"]
            .as_str()
            .filter(|e| !e.is_empty())
            .unwrap_or("ent"),
        local["project"].as_str().expect("project"),
        local["run_id"].as_str().expect("id")
    );
    let out = leet(tmp.path(), &["inspect", "--summary", "--json", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let remote: Value = serde_json::from_slice(&out.stdout).expect("remote json");
    for k in [
        "config",
        "summary",
        "step",
        "state",
        "exit_code",
        "run_id",
        "project",
    ] {
        assert_eq!(local[k], remote[k], "{k}");
    }
    // What a run logged is not for the host's other users.
    #[cfg(unix)]
    for kept in ["remote", "remote-runs"] {
        use std::os::unix::fs::PermissionsExt as _;
        let top = tmp.path().join("cache/leet").join(kept);
        let files = files_under(&top);
        assert!(!files.is_empty(), "{kept}");
        for f in files {
            let mode = std::fs::metadata(&f).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.display());
            let dir = f.parent().expect("dir");
            let mode = std::fs::metadata(dir).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
    }
    let (a, b) = (tmp.path().join("a.csv"), tmp.path().join("b.csv"));
    let ok = leet(
        tmp.path(),
        &[
            "export",
            file.to_str().expect("utf8"),
            "-o",
            a.to_str().expect("utf8"),
        ],
    );
    assert!(ok.status.success());
    let ok = leet(
        tmp.path(),
        &["export", &url, "-o", b.to_str().expect("utf8")],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let (a, b) = (std::fs::read(a).expect("a"), std::fs::read(b).expect("b"));
    assert!(a.len() > 100);
    assert!(a == b, "the CSV of the URL differs from the file's");
    // Parquet too (the format from the extension).
    let (a, b) = (tmp.path().join("a.parquet"), tmp.path().join("b.parquet"));
    for (from, to) in [(file.to_str().expect("utf8"), &a), (url.as_str(), &b)] {
        let out = leet(
            tmp.path(),
            &["export", from, "-o", to.to_str().expect("utf8")],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains(KEY), "{err}");
    }
    let (a, b) = (std::fs::read(a).expect("a"), std::fs::read(b).expect("b"));
    assert!(a.starts_with(b"PAR1") && a.len() > 100);
    assert!(a == b, "the Parquet of the URL differs from the file's");
    // Nothing leet wrote holds the key: the run files, the cache, its messages.
    let mut stack = vec![tmp.path().join("cache")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).expect("dir").flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let b = std::fs::read(e.path()).expect("read");
                assert!(
                    !String::from_utf8_lossy(&b).contains(KEY),
                    "{}",
                    e.path().display()
                );
            }
        }
    }
    assert!(!err.contains(KEY));
    fake.set_mode(Mode::Status(401));
    let out = leet(tmp.path(), &["inspect", "--summary", "--json", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("refused the API key") && !err.contains(KEY),
        "{err}"
    );
}

#[test]
fn a_run_seen_before_is_read_from_its_kept_copy_while_the_server_is_down_and_said_so() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let url = format!("{}/ent/proj/runs/tiny0001", fake.addr);
    let args = ["inspect", "--summary", "--json", url.as_str()];
    // Down before the run was ever opened here: nothing to show, the error.
    fake.set_mode(Mode::Status(500));
    let out = leet(tmp.path(), &args);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("HTTP 500"));
    fake.set_mode(Mode::Ok);
    let up = leet(tmp.path(), &args);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let up: Value = serde_json::from_slice(&up.stdout).expect("json");
    fake.set_mode(Mode::Status(500));
    let down = leet(tmp.path(), &args);
    let err = String::from_utf8_lossy(&down.stderr);
    assert!(down.status.success(), "{err}");
    assert!(
        err.contains("reading the copy of the run kept") && err.contains("may be out of date"),
        "{err}"
    );
    let down: Value = serde_json::from_slice(&down.stdout).expect("json");
    assert_eq!(up["summary"], down["summary"]);
    assert_eq!(up["config"], down["config"]);
    assert_eq!(up["state"], down["state"]);
    // The key refused or the run gone is not the server being down: no copy.
    fake.set_mode(Mode::Status(401));
    let out = leet(tmp.path(), &args);
    assert!(!out.status.success());
    fake.set_mode(Mode::NoRun);
    let out = leet(tmp.path(), &args);
    assert!(!out.status.success());
}

#[test]
fn hostile_answers_give_a_line_or_a_run_never_a_panic() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("tiny");
    let fake = Fake::start(run_object("running"), vec![parquet_of(&file, tmp.path())]);
    let evil = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    fake.set_mode(Mode::GraphqlError(format!("boom {evil}")));
    let msg = open(&fake, &opts(None)).err().expect("error").to_string();
    assert!(
        msg.contains("boom") && !msg.contains('\u{1b}') && !msg.contains('\u{7}'),
        "{msg:?}"
    );
    fake.set_mode(Mode::AllRows);
    let runs = [
        json!("a string"),
        json!([1, 2]),
        json!({"config": 5, "summaryMetrics": "[1,2]", "tags": "nope", "historyLineCount": -1, "state": 7}),
        json!({"config": "{not json", "summaryMetrics": {"x": {"y": [1, {"z": null}]}}, "createdAt": "9999-99-99T99:99:99Z"}),
        json!({"displayName": evil, "state": "finished", "summaryMetrics": format!("{{\"k{evil}\": 1}}")}),
    ];
    let lives = [
        vec![json!("str"), json!({"_step": "x"})],
        vec![
            json!({"_step": 1e300, "a": {"b": [1]}}),
            json!({"_step": -5, "loss": "NaN"}),
        ],
        vec![
            json!({"_step": 100_000, "loss": 1}),
            json!({"_step": 100_000, "loss": 2}),
        ],
    ];
    for run in &runs {
        for live in &lives {
            {
                let mut s = fake.state.lock().expect("lock");
                s.run = run.clone();
                s.live = live.clone();
            }
            let cancel = AtomicBool::new(false);
            let opened = fetch::open(&url_of(&fake), &opts(None), &cancel, &mut |_| {});
            // A second look (the follow loop's) from wherever the first ended.
            let polled = opened.and_then(|(mut run, b)| run.poll(&cancel).map(|_| b));
            match polled {
                Ok(b) => assert!(!b.is_empty(), "{run} {live:?}"),
                Err(e) => {
                    let m = e.to_string();
                    assert!(!m.contains('\u{1b}') && !m.contains('\n'), "{m:?}");
                }
            }
        }
    }
}

/// The programs leet starts inherit its environment: once a URL is opened, the
/// key is not in it (nor in leet's arguments, where it never goes). Run in a
/// process of its own, `key_probe`, so no other test's thread sees the
/// environment change.
#[test]
fn the_key_is_not_in_the_environment_children_inherit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("env");
    let probe = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args(["--ignored", "--exact", "key_probe", "--test-threads", "1"])
        .env("WANDB_API_KEY", KEY)
        .env("LEET_KEY_PROBE_OUT", &out)
        .env("HOME", tmp.path())
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env_remove("WANDB_BASE_URL")
        .env_remove("NETRC")
        .output()
        .expect("probe");
    let log = String::from_utf8_lossy(&probe.stdout);
    assert!(probe.status.success() && log.contains("1 passed"), "{log}");
    let env = std::fs::read_to_string(&out).expect("the child's environment");
    assert!(env.contains("LEET_KEY_PROBE_OUT="), "{env}");
    assert!(
        !env.contains(KEY) && !env.contains("WANDB_API_KEY"),
        "{env}"
    );
}

#[test]
#[ignore = "run by the_key_is_not_in_the_environment_children_inherit, in a process of its own"]
fn key_probe() {
    let out = std::env::var_os("LEET_KEY_PROBE_OUT").expect("LEET_KEY_PROBE_OUT");
    assert_eq!(std::env::var("WANDB_API_KEY").as_deref(), Ok(KEY));
    let tmp = tempfile::tempdir().expect("tmp");
    let fake = Fake::start(
        run_object("finished"),
        vec![parquet_of(&fixture("tiny"), tmp.path())],
    );
    let url = format!("{}/ent/proj/runs/tiny0001", fake.addr);
    let file = leet::source::remote::local::local_path(
        Path::new(&url),
        false,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .expect("open");
    assert!(file.is_file());
    assert!(fake
        .seen()
        .to_ascii_lowercase()
        .contains("authorization: basic "));
    let env = std::process::Command::new("env").output().expect("env");
    std::fs::write(out, env.stdout).expect("write");
}
