//! Screens of the pane settings (issue 13): the metrics grid hidden (`1`), its
//! room given to the console, and pane borders dragged with the mouse; the note
//! that an older settings file's per-directory settings were moved. Snapshots
//! at three sizes.

use crate::common;

use common::screen::{app_from, screen, SIZES};

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use leet::msg::Msg;
use leet::ui::settings::Config;

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

/// Whether the metrics grid's header is on screen (the system sidebar's says
/// "System Metrics [").
fn grid_shown(s: &str) -> bool {
    s.matches("Metrics [").count() > s.matches("System Metrics [").count()
}

#[test]
fn the_grid_hidden_gives_its_room_to_the_overview_then_the_console() {
    for (w, h) in SIZES {
        let mut app = app_from("system", w, h);
        assert!(grid_shown(&screen(&app, w, h)));
        app.update(Msg::char('1'));
        let s = screen(&app, w, h);
        assert!(!grid_shown(&s), "{s}");
        insta::assert_snapshot!(format!("system_{w}x{h}_grid_hidden"), s);
        app.update(Msg::char('4'));
        let s = screen(&app, w, h);
        assert!(!grid_shown(&s), "{s}");
        insta::assert_snapshot!(format!("system_{w}x{h}_grid_hidden_console"), s);
    }
}

#[test]
fn dragged_borders_draw_the_panes_at_their_new_sizes() {
    for (w, h) in SIZES {
        let mut app = app_from("system", w, h);
        app.update(Msg::char('4'));
        let left = app.screen.areas.left.unwrap();
        // The overview 8 columns wider, then the console 3 lines taller.
        let edge = left.right() - 1;
        for m in [
            mouse(MouseEventKind::Down(MouseButton::Left), edge, 5),
            mouse(MouseEventKind::Drag(MouseButton::Left), edge + 8, 5),
            mouse(MouseEventKind::Up(MouseButton::Left), edge + 8, 5),
        ] {
            app.update(m);
        }
        assert_eq!(app.screen.areas.left.unwrap().width, left.width + 8);
        let console = app.screen.areas.console.unwrap();
        for m in [
            mouse(
                MouseEventKind::Down(MouseButton::Left),
                console.x + 2,
                console.y,
            ),
            mouse(
                MouseEventKind::Drag(MouseButton::Left),
                console.x + 2,
                console.y - 3,
            ),
            mouse(
                MouseEventKind::Up(MouseButton::Left),
                console.x + 2,
                console.y - 3,
            ),
        ] {
            app.update(m);
        }
        assert_eq!(app.screen.areas.console.unwrap().height, console.height + 3);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("system_{w}x{h}_dragged"), s);
    }
}

/// A settings file of before settings were per project (as `leet
/// --print-config` wrote it): opened in a project, its y scales and filters are
/// moved there, which the status bar says until a key.
#[test]
fn settings_moved_from_an_older_file_are_said_in_the_status_bar_until_a_key() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/settings/config_before_directories.toml");
    let old = Config::parse(&p, &std::fs::read_to_string(&p).unwrap()).unwrap();
    for (w, h) in SIZES {
        let mut app = app_from("tiny", w, h);
        app.use_config_in(None, old.clone(), std::path::Path::new("/p/a/wandb"));
        let s = screen(&app, w, h);
        let status = s.lines().last().unwrap();
        assert!(status.contains("settings: y scales"), "{s}");
        insta::assert_snapshot!(format!("tiny_{w}x{h}_settings_moved"), s);
        app.update(Msg::char('j'));
        let s = screen(&app, w, h);
        assert!(!s.contains("settings: y scales"), "{s}");
    }
}
