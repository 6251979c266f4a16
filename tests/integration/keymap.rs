//! The shipped keymap.toml equals the built-in defaults; each kind of invalid user
//! keymap fails with a message naming the file, the key and the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use crossterm::event::KeyCode;
use leet::ui::action::Action;
use leet::ui::keymap::{Key, Keymap, Mode, DEFAULT_TOML};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_keymaps")
}

#[test]
fn shipped_keymap_equals_builtin_defaults() {
    let mut from_file = Keymap::builtin();
    // Laying the file over an empty map must give the defaults exactly.
    let mut empty = Keymap::builtin();
    for mode in Mode::ALL {
        // Every key but ctrl+c, which always quits (unbinding it is refused).
        let keys: Vec<Key> = (empty.bindings(mode).iter())
            .map(|(k, _)| *k)
            .filter(|k| !k.is_ctrl_c())
            .collect();
        let mut unbind = format!("[{}]\n", mode.name());
        for k in keys {
            unbind.push_str(&format!("{:?} = \"none\"\n", k.to_string()));
        }
        empty.overlay(Path::new("unbind.toml"), &unbind).unwrap();
        assert_eq!(
            empty.bindings(mode),
            [(Key::ctrl('c'), Action::Quit)],
            "[{}]",
            mode.name()
        );
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
        (Key::char('y'), Action::CycleYScale),
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
        (
            "ctrl_c.toml",
            "ctrl_c.toml:3:1: [normal] key 'ctrl+c': ctrl+c always quits, in every mode; \
             it cannot be bound to 'help'",
        ),
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
    let out = crate::common::isolated::leet()
        .arg("--keymap")
        .arg(dir().join("unknown_action.toml"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown_action.toml:2:1: [normal] key 'x': unknown action 'launch_rockets'"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "terminal untouched");
}

#[test]
fn print_keymap_prints_the_effective_map() {
    let user = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(user.path(), "[normal]\n\"j\" = \"focus_down\"\n").unwrap();
    let out = crate::common::isolated::leet()
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

fn leet() -> Command {
    crate::common::isolated::leet()
}

/// `leet args` with a deadline (a key map that blocks or grows forever is a
/// failure, not a stuck test).
fn run_within(cmd: &mut Command, limit: std::time::Duration) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{cmd:?} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_key_map_must_be_a_regular_file_of_at_most_1_mib() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    mkfifo(&fifo);
    let big = dir.path().join("big.toml");
    let mut text = String::from("[normal]\n");
    while text.len() <= (1 << 20) {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&big, &text).unwrap();
    let size = text.len().to_string();
    let cases: [(&Path, &[&str]); 5] = [
        // /dev/zero and /dev/urandom grew memory without end, a FIFO blocked forever.
        (
            Path::new("/dev/zero"),
            &["a character device", "must be a regular file"],
        ),
        (
            Path::new("/dev/urandom"),
            &["a character device", "must be a regular file"],
        ),
        (&fifo, &["a FIFO", "must be a regular file"]),
        (dir.path(), &["a directory", "must be a regular file"]),
        (&big, &[&size, "over the 1 MiB limit"]),
    ];
    for (path, want) in cases {
        let out = run_within(
            leet().arg("--print-keymap").arg("--keymap").arg(path),
            std::time::Duration::from_secs(20),
        );
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(path.to_str().unwrap()), "{err}");
        for w in want {
            assert!(err.contains(w), "{err}");
        }
    }
    // The default file too: a FIFO there is refused (before: silently skipped),
    // and a file of exactly the cap is read.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("leet")).unwrap();
    mkfifo(&home.path().join("leet/keymap.toml"));
    let out = run_within(
        leet()
            .arg("--print-keymap")
            .env("XDG_CONFIG_HOME", home.path()),
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a FIFO"));
    text.truncate(1 << 20);
    let cut = text.rfind('\n').unwrap() + 1;
    text.truncate(cut);
    text.push_str(&"#".repeat((1 << 20) - 1 - text.len()));
    text.push('\n');
    assert_eq!(text.len(), 1 << 20);
    std::fs::write(&big, &text).unwrap();
    let out = run_within(
        leet().arg("--print-keymap").arg("--keymap").arg(&big),
        std::time::Duration::from_secs(20),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `n` distinct keys (CJK and Hangul characters under four modifier sets).
fn many_bindings(n: usize) -> String {
    let chars = (0x4E00..0x9FFF)
        .chain(0xAC00..0xD7A3)
        .filter_map(char::from_u32);
    let mut text = String::from("[normal]\n");
    let mut count = 0;
    'out: for m in ["", "ctrl+", "alt+", "ctrl+alt+"] {
        for c in chars.clone() {
            if count == n {
                break 'out;
            }
            text.push_str(&format!("\"{m}{c}\" = \"quit\"\n"));
            count += 1;
        }
    }
    assert_eq!(count, n);
    text
}

#[test]
fn many_bindings_load_in_linear_time() {
    // 100,000 bindings took 10 s in a release build (a quadratic duplicate check
    // and overlay); 50,000 took about 45 s in a debug one, now about 3 s.
    let text = many_bindings(50_000);
    let mut k = Keymap::builtin();
    k.overlay(Path::new("many.toml"), &text).unwrap();
    let builtin = Keymap::builtin().bindings(Mode::Normal).len();
    assert_eq!(k.bindings(Mode::Normal).len(), builtin + 50_000);
    // Through the binary: the most a file under the cap holds (about 40,000).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.toml");
    std::fs::write(&p, many_bindings(40_000)).unwrap();
    let out = run_within(
        leet().arg("--print-keymap").arg("--keymap").arg(&p),
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Duplicates are still found, and a key given twice lands once, where given last.
    let mut k = Keymap::builtin();
    let e = k
        .overlay(Path::new("d.toml"), "[normal]\n\"N\" = \"quit\"\n\"x\" = \"help\"\n\"shift+n\" = \"quit\"\n\"shift+N\" = \"help\"\n")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("key 'shift+N': bound to both 'quit' and 'help' (as 'N')"),
        "{e}"
    );
    k.overlay(
        Path::new("d.toml"),
        "[normal]\n\"N\" = \"quit\"\n\"x\" = \"help\"\n\"shift+n\" = \"quit\"\n",
    )
    .unwrap();
    let tail: Vec<_> = k.bindings(Mode::Normal).iter().rev().take(2).collect();
    assert_eq!(
        tail,
        [
            &(Key::char('N'), Action::Quit),
            &(Key::char('x'), Action::Help)
        ]
    );
    assert_eq!(
        k.bindings(Mode::Normal)
            .iter()
            .filter(|(key, _)| *key == Key::char('N'))
            .count(),
        1
    );
}

#[test]
fn key_map_errors_are_sanitized() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"\x1b]0;pwned\x07km\x1b[2J.toml");
    for body in [
        "[normal]\n\"x\" = \"\\u001b]0;pwned\\u0007quit\"\n",
        "[normal]\n\"\\u001b[2Jx\\u0007\" = \"quit\"\n",
        "[\"\\u001b[31mnormal\"]\n",
        "[normal]\n\"q\" = \"\\u001b[2J\\u0007\"\n",
        "[normal]\nq = [\"\\u001b[2J\"]\n",
        "[normal]\n\"q\" = \"quit\"\n\"q\" = \"help\"\n",
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let out = leet()
            .arg("--print-keymap")
            .arg("--keymap")
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            !err.chars().any(|c| c.is_control() && c != '\n'),
            "{body}: {err:?}"
        );
        assert!(
            err.starts_with("leet: ") && err.contains("km.toml:"),
            "{err:?}"
        );
    }
    // A file name alone (missing file) is sanitized too.
    let out = leet()
        .arg("--print-keymap")
        .arg("--keymap")
        .arg(dir.path().join("nope").join(name))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
    assert!(err.contains("No such file"), "{err}");
}

#[test]
fn a_megabyte_key_is_parsed_in_linear_time_and_quoted_short() {
    // `ctrl+` 200,000 times: each modifier lowercased all that was left (minutes).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.toml");
    let long = "ctrl+".repeat(200_000);
    for (key, ok) in [(format!("{long}x"), true), (format!("{long}xy"), false)] {
        std::fs::write(&p, format!("[normal]\n\"{key}\" = \"quit\"\n")).unwrap();
        let out = run_within(
            leet().arg("--print-keymap").arg("--keymap").arg(&p),
            std::time::Duration::from_secs(30),
        );
        assert_eq!(out.status.success(), ok);
        let err = String::from_utf8(out.stderr).unwrap();
        if !ok {
            assert_eq!(err.lines().count(), 1);
            assert!(err.len() < 400, "{} bytes: {err}", err.len());
            assert!(err.contains("…': unknown key name 'xy'"), "{err}");
        }
    }
}
