//! The shipped keymap.toml equals the built-in defaults; each kind of invalid user
//! keymap fails with a message naming the file, the key and the reason.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crossterm::event::KeyCode;
use leet::app::action::Action;
use leet::app::keymap::{Key, Keymap, Mode, DEFAULT_TOML};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_keymaps")
}

#[test]
fn shipped_keymap_equals_builtin_defaults() {
    let mut from_file = Keymap::builtin();
    // Laying the file over an empty map must give the defaults exactly.
    let mut empty = Keymap::builtin();
    for mode in Mode::ALL {
        let keys: Vec<Key> = empty.bindings(mode).iter().map(|(k, _)| *k).collect();
        let mut unbind = format!("[{}]\n", mode.name());
        for k in keys {
            unbind.push_str(&format!("{:?} = \"none\"\n", k.to_string()));
        }
        empty.overlay(Path::new("unbind.toml"), &unbind).unwrap();
        assert!(empty.bindings(mode).is_empty());
    }
    empty
        .overlay(Path::new("keymap.toml"), DEFAULT_TOML)
        .unwrap();
    assert_eq!(empty, Keymap::builtin());
    from_file
        .overlay(Path::new("keymap.toml"), DEFAULT_TOML)
        .unwrap();
    assert_eq!(from_file, Keymap::builtin());
    // And the printed map parses back to itself.
    let mut again = empty.clone();
    again
        .overlay(Path::new("printed"), &Keymap::builtin().to_toml())
        .unwrap();
    assert_eq!(again, Keymap::builtin());
}

#[test]
fn wandb_leet_keys_are_kept() {
    let k = Keymap::builtin();
    let n = Mode::Normal;
    for (key, action) in [
        (Key::char('h'), Action::Help),
        (Key::char('?'), Action::Help),
        (Key::char('q'), Action::Quit),
        (Key::ctrl('c'), Action::Quit),
        (Key::char('['), Action::ToggleLeftSidebar),
        (Key::char(']'), Action::ToggleRightSidebar),
        (Key::char('4'), Action::ToggleConsole),
        (Key::char('n'), Action::NextPage),
        (Key::char('N'), Action::PrevPage),
        (
            Key::new(KeyCode::PageDown, crossterm::event::KeyModifiers::NONE),
            Action::NextPage,
        ),
        (Key::char('y'), Action::ToggleLogY),
        (Key::char('/'), Action::StartFilter),
        (Key::char('\\'), Action::StartSystemFilter),
        (Key::ctrl('l'), Action::ClearFilters),
        (Key::char('w'), Action::FocusUp),
    ] {
        assert_eq!(k.action(n, &key), Some(action), "{key}");
    }
    // SHIFT is ignored for characters: terminals differ on sending it.
    let shifted = Key::new(KeyCode::Char('N'), crossterm::event::KeyModifiers::SHIFT);
    assert_eq!(k.action(n, &shifted), Some(Action::PrevPage));
}

#[test]
fn user_file_is_laid_over_defaults() {
    let mut k = Keymap::builtin();
    k.overlay(
        Path::new("user.toml"),
        "[normal]\n\"j\" = \"focus_down\"\n\"q\" = \"none\"\n",
    )
    .unwrap();
    assert_eq!(
        k.action(Mode::Normal, &Key::char('j')),
        Some(Action::FocusDown)
    );
    assert_eq!(k.action(Mode::Normal, &Key::char('q')), None);
    assert_eq!(
        k.action(Mode::Normal, &Key::char('n')),
        Some(Action::NextPage)
    );
}

fn err(name: &str) -> String {
    let p = dir().join(name);
    Keymap::load(Some(&p), None).unwrap_err().to_string()
}

#[test]
fn invalid_keymaps_name_file_key_and_reason() {
    let cases = [
        (
            "unknown_action.toml",
            "[normal] key 'x': unknown action 'launch_rockets'",
        ),
        (
            "bad_key.toml",
            "[normal] key 'ctrl+nope': unknown key name 'nope'",
        ),
        (
            "duplicate_key.toml",
            "[normal] key 'shift+n': bound to both 'next_page' and 'quit' (as 'N')",
        ),
        ("unknown_mode.toml", "unknown mode '[normla]'"),
        (
            "not_a_string.toml",
            "[normal] key 'q': action must be a string, got '3'",
        ),
        ("bad_toml.toml", "not valid TOML"),
    ];
    for (file, want) in cases {
        let msg = err(file);
        assert!(msg.contains(file), "{msg}");
        assert!(msg.contains(want), "{file}: {msg}");
    }
    let missing = Keymap::load(Some(&dir().join("missing.toml")), None).unwrap_err();
    assert!(
        missing.to_string().contains("missing.toml: cannot read"),
        "{missing}"
    );
}

#[test]
fn binary_refuses_invalid_keymap_with_status_2_before_touching_the_terminal() {
    let out = Command::new(env!("CARGO_BIN_EXE_leet"))
        .arg("--keymap")
        .arg(dir().join("unknown_action.toml"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown_action.toml: [normal] key 'x': unknown action 'launch_rockets'"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "terminal untouched");
}

#[test]
fn print_keymap_prints_the_effective_map() {
    let user = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(user.path(), "[normal]\n\"j\" = \"focus_down\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leet"))
        .arg("--print-keymap")
        .arg("--keymap")
        .arg(user.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\"j\" = \"focus_down\""));
    assert!(text.contains("[fullscreen]"));
    let mut k = Keymap::builtin();
    k.overlay(Path::new("printed"), &text).unwrap();
    assert_eq!(
        k.action(Mode::Normal, &Key::char('j')),
        Some(Action::FocusDown)
    );
}
