//! On-screen hints (the filter prompt's, an overlay's frame, the status bar's) name
//! the keys the key map binds in the mode in force, as the help does: a remapped
//! key shows as bound, an unbound action's hint is left out.

use crate::common;

use common::screen::{screen, NOW};

use crossterm::event::KeyCode;
use leet::msg::Msg;
use leet::ui::keymap::Keymap;
use leet::ui::{App, Options};

/// A fixture's latest run (its real file, so its wandb directory is known) with
/// `toml` laid over the default key map, at `w`×`h`.
fn app_with(fixture: &str, toml: &str, (w, h): (u16, u16)) -> App {
    let mut keymap = Keymap::builtin();
    keymap
        .overlay(std::path::Path::new("k.toml"), toml)
        .unwrap();
    let dir = common::runs_dir().join(fixture).join("wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options {
        keymap,
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: common::wandb_file(&dir),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or_default()
}

/// The row of the screen holding `what`.
fn row_with<'a>(s: &'a str, what: &str) -> &'a str {
    s.lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no {what:?} in\n{s}"))
}

#[test]
fn the_filter_prompt_names_the_filter_keys_bound() {
    let mut app = app_with(
        "tiny",
        "[filter]\n\"enter\" = \"none\"\n\"alt+a\" = \"filter_apply\"\n",
        (120, 40),
    );
    app.update(Msg::char('/'));
    let s = screen(&app, 120, 40);
    let bar = last_line(&s);
    assert!(
        bar.contains("tab: regex → glob · alt+a keep · esc restore"),
        "{bar}"
    );
    assert!(!bar.contains("enter"), "{bar}");
}

#[test]
fn the_inspector_names_its_bound_keys() {
    let toml = "[inspector]\n\"q\" = \"none\"\n\"Q\" = \"quit\"\n\"esc\" = \"none\"\n";
    let mut app = app_with("tiny", toml, (120, 40));
    let file = common::wandb_file(&common::runs_dir().join("tiny/wandb/latest-run"));
    app.open_inspector(file.clone(), true);
    let s = screen(&app, 120, 40);
    let bar = last_line(&s);
    assert!(
        bar.contains("↑↓ select · tab body · t type · / filter · end follow · i quit · Q quit"),
        "{bar}"
    );
    assert!(!bar.contains("q quit") && !bar.contains("esc"), "{bar}");
    // Over the viewer: `i` (inspect_records) still goes back.
    let mut app = app_with("tiny", toml, (120, 40));
    app.open_inspector(file, false);
    let bar = last_line(&screen(&app, 120, 40)).to_owned();
    assert!(bar.contains("end follow · i back · Q quit"), "{bar}");
}

/// `R`, its list of runs answered as the runtime's worker answers it.
fn pick_run(app: &mut App) {
    let fx = app.update(Msg::char('R'));
    for c in fx.cmds.into_iter().chain(app.take_cmds()) {
        if let leet::ui::Cmd::ListRuns { run_dir } = c {
            let runs = leet::source::file::runs_next_to(&run_dir);
            app.update(Msg::RunsListed { run_dir, runs });
        }
    }
}

#[test]
fn the_run_picker_stats_table_and_help_frames_name_their_bound_keys() {
    let toml = "[runs]\n\"enter\" = \"none\"\n\"o\" = \"open_run\"\n\"esc\" = \"none\"\n\
                [stats]\n\"esc\" = \"none\"\n\
                [help]\n\"down\" = \"none\"\n\"s\" = \"none\"\n\"pgdown\" = \"none\"\n\"J\" = \"focus_down\"\n";
    let mut app = app_with("multi", toml, (80, 24));
    pick_run(&mut app);
    let s = screen(&app, 80, 24);
    assert!(s.contains("o open · space compare · R close"), "{s}");
    assert!(!s.contains("enter open") && !s.contains("esc close"), "{s}");
    app.update(Msg::char('R'));
    app.update(Msg::char('T'));
    let s = screen(&app, 80, 24);
    assert!(
        row_with(&s, "sort").contains("←/→ sort · r reverse · / filter · T close"),
        "{s}"
    );
    app.update(Msg::char('T'));
    app.update(Msg::char('h'));
    let s = screen(&app, 80, 24);
    assert!(s.contains("↓ more (J) "), "{s}");
    assert!(!s.contains("down/pgdown"), "{s}");
}

/// With the default map: full screen, `esc` leaves the chart (it shows neither
/// the workspace nor the runs, and `R` is not bound there).
#[test]
fn a_full_screen_chart_names_what_its_keys_do_there() {
    let mut app = app_with("multi", "", (120, 40));
    let dir = common::runs_dir().join("multi/wandb");
    app.update(Msg::RunsCounted {
        wandb_dir: app
            .shown
            .source
            .file
            .as_deref()
            .and_then(leet::source::resolve::wandb_dir_of)
            .unwrap_or(dir),
        count: 5,
    });
    let bar = last_line(&screen(&app, 120, 40)).to_owned();
    assert!(bar.contains("R: 5 runs · h: help"), "{bar}");
    app.update(Msg::key(KeyCode::Enter));
    let bar = last_line(&screen(&app, 120, 40)).to_owned();
    assert!(bar.contains("esc: grid · h: help"), "{bar}");
    assert!(!bar.contains("R:") && !bar.contains("runs ·"), "{bar}");
}

/// On a 40-column screen the help's lines give their words room: each line's
/// keys take their own width, not the widest line's.
#[test]
fn the_help_on_a_narrow_screen_keeps_its_words() {
    let (w, h) = (40, 12);
    let mut app = app_with("tiny", "", (w, h));
    app.update(Msg::char('h'));
    let s = screen(&app, w, h);
    assert!(s.contains("h, ?  Toggle this help"), "{s}");
}

/// The left sidebar asked for on a screen too narrow to put it beside the charts
/// is said in the status bar (it did nothing, silently), until the next key; it
/// stays on, drawn once the screen is wide enough.
#[test]
fn the_left_sidebar_without_room_says_why() {
    let (w, h) = (60, 20);
    let mut app = app_with("tiny", "", (w, h));
    assert!(app.screen.areas.left.is_none());
    app.update(Msg::char('['));
    let s = screen(&app, w, h);
    assert!(s.contains("no room for the left sidebar"), "{s}");
    assert!(app.screen.areas.left.is_none());
    app.update(Msg::char('['));
    assert!(app.screen.note.is_some(), "said again");
    app.update(Msg::key(KeyCode::Down));
    assert!(!screen(&app, w, h).contains("no room for"));
    app.update(Msg::Resize(120, 30));
    assert!(
        app.screen.areas.left.is_some(),
        "on, drawn once there is room"
    );
}
