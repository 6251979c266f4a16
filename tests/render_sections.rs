//! Metric sections by name prefix (issue 14): `many_metrics` grouped, with a
//! section collapsed, and filtered, at every size; read through the key map.
#![allow(clippy::unwrap_used)]

mod common;

use common::screen::{app_from, screen, SIZES};

use leet::app::App;
use leet::msg::Msg;

fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) {
    for m in msgs {
        app.update(m);
    }
}

/// `many_metrics` at every size after `keys`, snapshot `many_metrics_<w>x<h>_<name>`.
fn snap(name: &str, keys: &dyn Fn() -> Vec<Msg>) {
    for (w, h) in SIZES {
        let mut app = app_from("many_metrics", w, h);
        send(&mut app, keys());
        insta::assert_snapshot!(format!("many_metrics_{w}x{h}_{name}"), screen(&app, w, h));
    }
}

/// The first page: the root section (`Charts`: keys with no section of their
/// own) first, its header and count, then `eval`'s charts.
#[test]
fn many_metrics_grouped() {
    snap("grouped", &Vec::new);
}

/// `Z` on the first chart collapses its section (`Charts`): its header stays, with
/// its count and `▸`, and the next sections move up onto the first page.
#[test]
fn many_metrics_section_collapsed() {
    snap("collapsed", &|| vec![Msg::char('Z')]);
}

/// `M` collapses every section: one header line each, nothing else.
#[test]
fn many_metrics_all_collapsed() {
    snap("all_collapsed", &|| vec![Msg::char('M')]);
}
