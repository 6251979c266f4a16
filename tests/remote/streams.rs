//! The streams beside the history: system metrics (the `events` stream) and the
//! environment (`wandb-metadata.json`) come out as the file's stats and
//! environment records.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use leet::source::remote::fetch;
use leet_format::event::{Event, Events, Sink};
use leet_format::leveldb::Skip;
use serde_json::{json, Value};

use super::server::Fake;
use super::{fixture, opts, parquet_of, run_object, url_of};

/// Every system metric sample: key → (time in seconds, value), in order.
#[derive(Default)]
struct Stats(BTreeMap<String, Vec<(f64, f64)>>);

impl Sink for Stats {
    fn fold(&mut self, ev: &Events) {
        for e in &ev.list {
            if let Event::Stats { time, values } = e {
                let t = time.map_or(f64::NAN, |(s, n)| s as f64 + f64::from(n) / 1e9);
                for (k, v) in &ev.values[values.start as usize..values.end as usize] {
                    self.0
                        .entry(ev.keys[*k as usize].clone())
                        .or_default()
                        .push((t, *v));
                }
            }
        }
    }
    fn at_end(&mut self, _: u64, _: Option<Skip>) {}
}

#[test]
fn system_metrics_from_the_events_stream_are_the_files_stats() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("system");
    let mut local = Stats::default();
    leet::source::reader::RunReader::open(&file)
        .expect("open")
        .read_all_parallel(&mut local)
        .expect("read");
    assert!(!local.0.is_empty());
    // The server's rows: one per sample time, keys with `system.` before them.
    let mut rows: BTreeMap<u64, serde_json::Map<String, Value>> = BTreeMap::new();
    for (k, pts) in &local.0 {
        for (t, v) in pts {
            let row = rows.entry(t.to_bits()).or_default();
            row.insert("_timestamp".into(), json!(t));
            row.insert(format!("system.{k}"), json!(v));
        }
    }
    let mut rows: Vec<(f64, Value)> = rows
        .into_iter()
        .map(|(t, r)| (f64::from_bits(t), Value::Object(r)))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    fake.state.lock().expect("lock").events = rows.into_iter().map(|r| r.1).collect();
    let (_, batches) = fetch::open(
        &url_of(&fake),
        &opts(None),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .expect("open");
    let mut remote = Stats::default();
    for b in &batches {
        remote.fold(b);
    }
    assert_eq!(
        local.0.keys().collect::<Vec<_>>(),
        remote.0.keys().collect::<Vec<_>>()
    );
    for (k, pts) in &local.0 {
        let got = &remote.0[k];
        assert_eq!(pts.len(), got.len(), "{k}");
        for (a, b) in pts.iter().zip(got) {
            assert!((a.0 - b.0).abs() < 1e-6, "{k}: time {} vs {}", a.0, b.0);
            assert_eq!(a.1.to_bits(), b.1.to_bits(), "{k}");
        }
    }
}

/// The environment records' fields, later ones replacing earlier ones.
#[derive(Default)]
struct Env(serde_json::Map<String, Value>);

impl Sink for Env {
    fn fold(&mut self, ev: &Events) {
        for e in &ev.list {
            if let Event::Environment(m) = e {
                self.0.extend(m.clone());
            }
        }
    }
    fn at_end(&mut self, _: u64, _: Option<Skip>) {}
}

#[test]
fn the_environment_comes_from_wandb_metadata_json() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = fixture("custom_step");
    let mut local = Env::default();
    leet::source::reader::RunReader::open(&file)
        .expect("open")
        .read_all_parallel(&mut local)
        .expect("read");
    assert!(local.0.len() > 5, "{:?}", local.0);
    let fake = Fake::start(run_object("finished"), vec![parquet_of(&file, tmp.path())]);
    let open_env = || {
        let (_, batches) = fetch::open(
            &url_of(&fake),
            &opts(None),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .expect("open");
        let mut env = Env::default();
        for b in &batches {
            env.fold(b);
        }
        env.0
    };
    assert!(open_env().is_empty(), "no metadata file, no environment");
    let meta = serde_json::to_vec(&Value::Object(local.0.clone())).expect("json");
    fake.state.lock().expect("lock").metadata = Some(meta);
    assert_eq!(open_env(), local.0);
    fake.state.lock().expect("lock").metadata = Some(b"{not json".to_vec());
    assert!(open_env().is_empty());
}
