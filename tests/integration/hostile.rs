//! Text from files is untrusted: escape and control sequences in run names, config,
//! summary, metric keys and console output never reach the terminal.

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::msg::{Msg, RunBatch};
use leet::ui::render;
use leet::ui::{App, Options};
use prost::Message as _;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const EVIL: &str = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://x\x1b\\\u{9b}31m\r\x08\x00\u{202e}";

fn rec(num: i64, r: pb::record::RecordType) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(r),
        ..Default::default()
    }
    .encode_to_vec()
}

fn hostile_records() -> Vec<Vec<u8>> {
    use pb::record::RecordType as T;
    let item = |k: &str, v: &str| pb::HistoryItem {
        key: k.into(),
        value_json: v.into(),
        ..Default::default()
    };
    vec![
        rec(
            1,
            T::Run(pb::RunRecord {
                run_id: format!("id{EVIL}"),
                display_name: format!("name{EVIL}"),
                project: format!("proj{EVIL}"),
                notes: format!("notes{EVIL}"),
                tags: vec![format!("tag{EVIL}")],
                config: Some(pb::ConfigRecord {
                    update: vec![pb::ConfigItem {
                        key: format!("cfg{EVIL}"),
                        value_json: serde_json::to_string(&format!("value{EVIL}")).unwrap(),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            }),
        ),
        rec(
            2,
            T::History(pb::HistoryRecord {
                item: vec![
                    item("_step", "0"),
                    item(&format!("loss{EVIL}"), "1.5"),
                    item("acc", "0.5"),
                ],
                ..Default::default()
            }),
        ),
        rec(
            3,
            T::History(pb::HistoryRecord {
                item: vec![
                    item("_step", "1"),
                    item(&format!("loss{EVIL}"), "1.0"),
                    item("acc", "0.7"),
                ],
                ..Default::default()
            }),
        ),
        rec(
            4,
            T::OutputRaw(pb::OutputRawRecord {
                output_type: 1,
                line: format!("console{EVIL} line\n"),
                ..Default::default()
            }),
        ),
        rec(
            5,
            T::Stats(pb::StatsRecord {
                item: vec![pb::StatsItem {
                    key: format!("custom{EVIL}"),
                    value_json: "3".into(),
                }],
                timestamp: Some(prost_types::Timestamp {
                    seconds: 1_796_000_000,
                    nanos: 0,
                }),
                ..Default::default()
            }),
        ),
    ]
}

fn assert_clean(screen: &Buffer) {
    for cell in screen.content() {
        for c in cell.symbol().chars() {
            assert!(
                !c.is_control() && !('\u{202a}'..='\u{202e}').contains(&c),
                "control character {c:?} reached the screen"
            );
        }
    }
}

use ratatui::buffer::Buffer;

#[test]
fn escape_sequences_in_file_text_never_reach_the_screen() {
    let mut w = Writer::new();
    for r in hostile_records() {
        w.append(&r);
    }
    let bytes = w.into_bytes();
    let mut batch = RunBatch::default();
    leet::decode::leveldb::scan(&bytes, 0, |f| {
        if let leet::decode::leveldb::Frame::Record { offset, payload } = f {
            batch.records.push((offset, payload.into_owned()));
        }
    })
    .unwrap();
    batch.read_to = bytes.len() as u64;
    batch.file_len = bytes.len() as u64;
    for keys in [vec![], vec![Msg::char('4')], vec![Msg::char('?')]] {
        let mut app = App::new(Options {
            color: false,
            ..Options::default()
        });
        app.update(Msg::Resize(160, 50));
        app.update(Msg::Run(batch.clone()));
        for k in keys {
            app.update(k);
        }
        let mut t = Terminal::new(TestBackend::new(160, 50)).unwrap();
        t.draw(|f| render::render(f, &app)).unwrap();
        let buf = t.backend().buffer().clone();
        assert_clean(&buf);
        let text: String = buf
            .content()
            .iter()
            .map(ratatui::buffer::Cell::symbol)
            .collect();
        assert!(text.contains("name"), "run name not shown");
        assert!(!text.contains("pwned"), "OSC payload drawn");
    }
}
