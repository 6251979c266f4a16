//! The record inspector's screens (list and body) at every size, on real SDK runs:
//! the app asks with `Cmd::ViewRecords`, the records worker's own code answers
//! (`source::records::page_of`, read to the end), and keys drive it as a user would.
#![allow(clippy::unwrap_used)]

mod common;

use common::screen::{screen, SIZES};

use crossterm::event::KeyCode;
use leet::app::{App, Cmd, Effect, Options};
use leet::msg::Msg;

/// Apply `msg`, answering every view the app asks for, as the runtime would.
fn send(app: &mut App, msg: Msg) {
    let mut fx: Effect = app.update(msg);
    let mut cmds = app.take_cmds();
    cmds.append(&mut fx.cmds);
    while !cmds.is_empty() {
        let mut next = Vec::new();
        for c in cmds {
            if let Cmd::ViewRecords(v) = c {
                let path = app.inspector.as_ref().unwrap().path.clone();
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
        keys(&mut app, &[KeyCode::Char('t'), KeyCode::Down, KeyCode::Down]);
        let s = screen(&app, w, h);
        assert!(s.contains("type=history") && s.contains("\"history\": {"), "{s}");
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
