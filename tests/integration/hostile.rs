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

/// JSON that leet prints from a file's text (`inspect --json`, with `--follow`,
/// `--summary --json`) carries no character a terminal acts on: C0 as JSON
/// escapes it, and DEL, the C1 controls and bidi overrides written as `\uXXXX`
/// too; a reader gets the same strings back.
#[test]
fn json_printed_from_a_file_is_inert_on_a_terminal() {
    use pb::record::RecordType as T;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-x.wandb");
    let mut w = Writer::new();
    for r in hostile_records() {
        w.append(&r);
    }
    w.append(&rec(6, T::Exit(pb::RunExitRecord::default())));
    std::fs::write(&file, w.into_bytes()).unwrap();
    let inert = |c: char| {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        let control = c.is_control() && c != '\n';
        !bidi && !control
    };
    for args in [
        &["inspect", "--json"][..],
        &["inspect", "--json", "--follow", "--idle-timeout", "5s"],
        &["inspect", "--summary", "--json"],
    ] {
        let out = crate::common::isolated::leet()
            .args(args)
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        if let Some(c) = text.chars().find(|&c| !inert(c)) {
            panic!("{args:?}: {c:?} printed raw: {text}");
        }
        // The same strings to a JSON reader: the run's name whole.
        let values: Vec<serde_json::Value> = if args.contains(&"--summary") {
            vec![serde_json::from_str(&text).unwrap()]
        } else {
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let all = serde_json::Value::Array(values).to_string();
        let name = serde_json::to_string(&format!("name{EVIL}")).unwrap();
        let name = name.trim_matches('"');
        let back: String = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(back, format!("name{EVIL}"));
        assert!(
            all.contains(name),
            "{args:?}: the run's name not kept whole: {all}"
        );
    }
}
