//! The record inspector's screens (list and body) at every size, on real SDK runs:
//! the app asks with `Cmd::ViewRecords`, the records worker's own code answers
//! (`source::records::page_of`, read to the end), and keys drive it as a user would.

use crate::common;

use common::screen::{screen, SIZES};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::{App, Cmd, Effect, Options};

/// Apply `msg`, answering every view the app asks for, as the runtime would.
fn send(app: &mut App, msg: Msg) {
    let mut fx: Effect = app.update(msg);
    let mut cmds = app.take_cmds();
    cmds.append(&mut fx.cmds);
    while !cmds.is_empty() {
        let mut next = Vec::new();
        for c in cmds {
            if let Cmd::ViewRecords(v) = c {
                let path = app.overlay.inspector().unwrap().path.clone();
                let page = leet::source::records::page_of(&path, v).unwrap();
                next.extend(app.update(Msg::Records(Box::new(page))).cmds);
            }
        }
        cmds = next;
    }
}

/// `leet inspect` on a fixture's latest run, at `w`×`h`.
fn inspector(fixture: &str, w: u16, h: u16) -> App {
    let dir = common::runs_dir().join(fixture).join("wandb/latest-run");
    let file = common::wandb_file(&dir);
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.open_inspector(file, true);
    send(&mut app, Msg::Tick(common::screen::NOW));
    app
}

fn keys(app: &mut App, keys: &[KeyCode]) {
    for k in keys {
        send(app, Msg::key(*k));
    }
}

/// Opened: the first records listed, the header record's body beside them.
#[test]
fn inspector_opened_lists_records_beside_the_first_body() {
    for (w, h) in SIZES {
        let app = inspector("crashed", w, h);
        let s = screen(&app, w, h);
        assert!(s.contains("\"type\": \"header\""), "{s}");
        insta::assert_snapshot!(format!("inspector_crashed_{w}x{h}_open"), s);
    }
}

/// `t` shows history records only; down selects the third, whose body is shown.
#[test]
fn inspector_history_record_detail() {
    for (w, h) in SIZES {
        let mut app = inspector("many_metrics", w, h);
        keys(
            &mut app,
            &[KeyCode::Char('t'), KeyCode::Down, KeyCode::Down],
        );
        let s = screen(&app, w, h);
        assert!(
            s.contains("type=history") && s.contains("\"history\": {"),
            "{s}"
        );
        insta::assert_snapshot!(format!("inspector_many_metrics_{w}x{h}_history"), s);
    }
}

/// `/` filters by text over the records' JSON; `end` selects the last match.
#[test]
fn inspector_text_filter_and_end() {
    for (w, h) in SIZES {
        let mut app = inspector("crashed", w, h);
        keys(&mut app, &[KeyCode::Char('/')]);
        for c in "@@STEP 24".chars() {
            send(&mut app, Msg::char(c));
        }
        keys(&mut app, &[KeyCode::Enter, KeyCode::End]);
        let s = screen(&app, w, h);
        assert!(s.contains("/@@STEP 24/"), "{s}");
        assert!(s.contains("\"line\": \"@@STEP 249\\n\""), "{s}");
        insta::assert_snapshot!(format!("inspector_crashed_{w}x{h}_filter_end"), s);
    }
}

/// The view asked for by the last `ViewRecords` in `cmds`.
fn asked(cmds: &[Cmd]) -> leet::msg::RecordsView {
    cmds.iter()
        .rev()
        .find_map(|c| match c {
            Cmd::ViewRecords(v) => Some(v.clone()),
            _ => None,
        })
        .expect("no ViewRecords asked")
}

/// `i` over a run asks the runtime for its file's records (the update reads
/// nothing itself); esc closes the inspector and ends its worker.
#[test]
fn i_asks_for_the_runs_records_and_esc_ends_the_worker() {
    let mut app = common::screen::app_from("tiny", 120, 40);
    let fx = app.update(Msg::char('i'));
    assert_eq!(
        fx.cmds.first(),
        Some(&Cmd::OpenRecords {
            path: "tiny.wandb".into()
        })
    );
    let v = asked(&fx.cmds);
    assert_eq!((v.from, v.selected, v.len), (0, 0, 36));
    assert!(matches!(app.overlay, leet::ui::Overlay::Inspector(_)));
    let fx = app.update(Msg::key(KeyCode::Esc));
    assert_eq!(fx.cmds, vec![Cmd::CloseRecords]);
    assert!(!fx.quit);
    assert!(matches!(app.overlay, leet::ui::Overlay::None));
    assert!(app.overlay.inspector().is_none());
}

/// Keys move the selection at once; an answer to an older request does not move
/// it back, the answer to the last one sets it.
#[test]
fn an_answer_to_an_older_request_does_not_move_the_selection_back() {
    let mut app = inspector("crashed", 120, 40);
    let gen0 = app.overlay.inspector().unwrap().gen;
    let v1 = asked(&app.update(Msg::key(KeyCode::Down)).cmds);
    let v2 = asked(&app.update(Msg::key(KeyCode::Down)).cmds);
    assert_eq!((v1.gen, v1.selected), (gen0 + 1, 1));
    assert_eq!((v2.gen, v2.selected), (gen0 + 2, 2));
    let path = app.overlay.inspector().unwrap().path.clone();
    let old = leet::source::records::page_of(&path, v1).unwrap();
    app.update(Msg::Records(Box::new(old)));
    assert_eq!(app.overlay.inspector().unwrap().selected, 2);
    // `end` follows: the answer puts the selection on the last record.
    let v3 = asked(&app.update(Msg::key(KeyCode::End)).cmds);
    assert!(v3.follow);
    let page = leet::source::records::page_of(&path, v3).unwrap();
    let total = page.total;
    app.update(Msg::Records(Box::new(page)));
    let i = app.overlay.inspector().unwrap();
    assert_eq!(i.selected, total - 1);
    // The crashed run's last record (it has no exit record).
    let last = format!("\"num\": {total},");
    assert!(i.body.iter().any(|l| l.trim() == last), "{:?}", i.body);
}

/// esc while a text filter is still checking rows stops it (drops the filter);
/// then esc leaves (`leet inspect`: quits).
#[test]
fn esc_stops_a_running_filter_then_quits_leet_inspect() {
    let mut app = inspector("crashed", 120, 40);
    app.update(Msg::char('/'));
    app.update(Msg::char('x'));
    app.update(Msg::key(KeyCode::Enter));
    // The worker's answer so far: a quarter of the rows checked.
    let mut page = app.overlay.inspector().unwrap().page.clone();
    page.gen = app.overlay.inspector().unwrap().gen;
    page.checked = page.indexed / 4;
    app.update(Msg::Records(Box::new(page)));
    assert!(app.overlay.inspector().unwrap().filtering());
    let fx = app.update(Msg::key(KeyCode::Esc));
    assert!(!fx.quit);
    let v = asked(&fx.cmds);
    assert_eq!(v.text, "", "the filter is dropped");
    assert!(!app.overlay.inspector().unwrap().filter.is_active());
    let fx = app.update(Msg::key(KeyCode::Esc));
    assert!(fx.quit, "leet inspect: esc leaves");
}

/// A new filter makes the last answer void: until the worker answers, the list
/// reads as being filtered, not as the old rows under the new filter's name.
#[test]
fn a_new_filter_shows_reading_until_its_answer() {
    let (w, h) = (120, 40);
    let mut app = inspector("crashed", w, h);
    let fx = app.update(Msg::char('t'));
    let s = screen(&app, w, h);
    assert!(s.contains("reading…"), "{s}");
    assert!(s.contains("type=history: 0 matches (checked 0%)"), "{s}");
    let v = asked(&fx.cmds);
    let path = app.overlay.inspector().unwrap().path.clone();
    let page = leet::source::records::page_of(&path, v).unwrap();
    app.update(Msg::Records(Box::new(page)));
    let s = screen(&app, w, h);
    assert!(
        s.contains("type=history: 251 matches") && !s.contains("reading…"),
        "{s}"
    );
}

/// A record whose console line is longer than the body pane is wide: the body
/// wraps it, every character of it on screen, and the body scrolls by rows.
#[test]
fn a_long_line_of_the_body_wraps_whole_and_scrolls_by_rows() {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use prost::Message as _;
    let line = format!("{}B{}Z", "A".repeat(150), "C".repeat(48));
    let mut wr = Writer::new();
    let r = pb::Record {
        num: 1,
        record_type: Some(pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
            output_type: 1,
            line: line.clone(),
            ..Default::default()
        })),
        ..Default::default()
    };
    wr.append(&r.encode_to_vec());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h200.wandb");
    std::fs::write(&file, wr.bytes()).unwrap();
    let (w, h) = (80, 24);
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.open_inspector(file, true);
    send(&mut app, Msg::Tick(common::screen::NOW));
    keys(&mut app, &[KeyCode::End, KeyCode::Tab]);
    let s = screen(&app, w, h);
    // The body's rows, between its borders, joined: the line is there whole.
    let body: String = s
        .lines()
        .filter_map(|l| l.rsplit_once('│').map(|(head, _)| head))
        .filter_map(|l| l.rsplit_once('│').map(|(_, b)| b.trim_end()))
        .collect();
    assert!(body.contains(&line), "{s}");
    assert!(!body.contains('…'), "{s}");
    // On a screen too short for it, a row down scrolls one row.
    let h = 12;
    send(&mut app, Msg::Resize(w, h));
    assert_eq!(app.overlay.inspector().unwrap().body_scroll, 0);
    keys(&mut app, &[KeyCode::Down]);
    assert_eq!(app.overlay.inspector().unwrap().body_scroll, 1, "{s}");
    let s = screen(&app, w, h);
    assert!(s.contains("2–9 of 13"), "{s}");
    // Never past its last row.
    keys(
        &mut app,
        &[KeyCode::PageDown, KeyCode::PageDown, KeyCode::PageDown],
    );
    let i = app.overlay.inspector().unwrap();
    let rows = i.wrap.total();
    assert!(i.body_scroll < rows, "{} of {rows}", i.body_scroll);
    let s = screen(&app, w, h);
    assert!(s.contains('}'), "{s}");
}
