//! The tail thread: a big file arrives in several batches (so the first frame is
//! drawn while the rest loads), with progress; nothing is read twice.
#![allow(clippy::unwrap_used)]

use std::sync::mpsc;
use std::time::Duration;

use leet::app::{App, Options};
use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::msg::Msg;
use leet::source::tail::{spawn_tail, TailOptions};
use prost::Message as _;

fn history(i: i64) -> Vec<u8> {
    pb::Record {
        num: i + 1,
        record_type: Some(pb::record::RecordType::History(pb::HistoryRecord {
            item: vec![
                pb::HistoryItem {
                    key: "loss".into(),
                    value_json: format!("{}", 1.0 / (1.0 + i as f64)),
                    ..Default::default()
                },
                pb::HistoryItem {
                    key: "_step".into(),
                    value_json: i.to_string(),
                    ..Default::default()
                },
            ],
            step: Some(pb::HistoryStep { num: i }),
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn big_file_loads_in_batches_with_progress() {
    let mut w = Writer::new();
    let n = 100_000;
    for i in 0..n {
        w.append(&history(i));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-big.wandb");
    std::fs::write(&path, w.bytes()).unwrap();
    let len = w.bytes().len() as u64;

    let (tx, rx) = mpsc::sync_channel(4);
    spawn_tail(
        path,
        tx,
        TailOptions {
            chunk: 1 << 20,
            poll: Duration::from_millis(50),
        },
    );
    let mut app = App::new(Options::default());
    let mut batches = 0;
    let mut first_progress = None;
    while app.source.read_to < len || batches == 0 {
        let m = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if matches!(m, Msg::Run(_)) {
            batches += 1;
        }
        app.update(m);
        if batches == 1 && first_progress.is_none() {
            first_progress = Some((
                app.source.read_to,
                app.source.file_len,
                app.source.loading(),
            ));
            // An old file without its exit record read yet is loading, not "crashed?".
            app.update(Msg::Tick(leet::source::tail::unix_now() + 1e6));
            assert_eq!(app.live_state(), leet::app::LiveState::Loading);
        }
    }
    let (read, total, loading) = first_progress.unwrap();
    assert!(loading && read < total && total == len, "{read}/{total}");
    assert!(batches >= 3, "{batches}");
    assert!(!app.source.loading());
    assert_eq!(app.run.history_rows, u64::try_from(n).unwrap());
    assert_eq!(app.run.step(), n - 1);
    assert_eq!(app.run.counts.total, u64::try_from(n).unwrap());
}
