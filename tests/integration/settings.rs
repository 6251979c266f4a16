//! The settings file through the binary: each kind of invalid file is refused
//! with a message naming the file, the key and the reason, exit status 2 and
//! nothing on standard output (the terminal untouched); `--print-config` prints
//! the effective settings as TOML that loads back. The viewer's per-metric
//! settings and filters belong to the wandb directory they were set in, and a
//! file written before they did still loads.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::screen::{app_from, screen, NOW};
use leet::msg::Msg;
use leet::ui::charts::grid::YScale;
use leet::ui::cmd::Cmd;
use leet::ui::settings::Config;
use leet::ui::App;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_configs")
}

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny")
}

/// `leet` with `XDG_CONFIG_HOME` at `home`, with a deadline (a settings file
/// that blocks is a failure, not a stuck test).
fn leet(home: &Path, args: &[&std::ffi::OsStr]) -> Output {
    let mut child = crate::common::isolated::leet()
        .args(args)
        .env("XDG_CONFIG_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("leet {args:?} still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

const CASES: [(&str, &str); 7] = [
    (
        "unknown_key.toml",
        "[viewer] key 'colour': unknown key (expected rows, columns, guides,",
    ),
    (
        "wrong_type.toml",
        "[viewer] key 'console': expected true or false, got a string (\"yes\")",
    ),
    (
        "rows_out_of_range.toml",
        "[viewer] key 'rows': must be 0 (auto) or 1 to 9, got 10",
    ),
    (
        "negative_rows.toml",
        "[live] key 'rows': must be 0 (auto) or 1 to 9, got -2",
    ),
    (
        "bad_regex.toml",
        "[viewer.filters.metrics] key 'pattern': not a valid regex: unclosed character class",
    ),
    ("bad_toml.toml", "not valid TOML: "),
    (
        "metric_heatmap.toml",
        "[viewer.y_scale] key 'train/loss': unknown y scale 'heatmap'",
    ),
];

#[test]
fn invalid_settings_name_file_key_and_reason() {
    for (file, want) in CASES {
        let p = dir().join(file);
        let text = std::fs::read_to_string(&p).unwrap();
        let msg = Config::parse(&p, &text).unwrap_err().to_string();
        // `FILE:LINE:COLUMN: …`, where the file says what is refused.
        let at = msg.strip_prefix(&format!("{}:", p.display())).expect(&msg);
        let mut parts = at.splitn(3, ':');
        let line = parts.next().and_then(|l| l.parse::<usize>().ok());
        let col = parts.next().and_then(|c| c.parse::<usize>().ok());
        assert!(
            line.is_some_and(|l| l <= text.lines().count().max(1)),
            "{msg}"
        );
        assert!(col.is_some_and(|c| c >= 1), "{msg}");
        assert!(msg.contains(want), "{file}: {msg}");
    }
}

#[test]
fn the_binary_refuses_invalid_settings_with_status_2_before_touching_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    for (file, want) in CASES {
        let p = dir().join(file);
        for print in [false, true] {
            let mut args = vec![std::ffi::OsStr::new("--config"), p.as_os_str()];
            if print {
                args.push("--print-config".as_ref());
            }
            let run = tiny();
            args.push(run.as_os_str());
            let out = leet(home.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{file}");
            assert!(out.stdout.is_empty(), "{file}: terminal touched");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with(&format!("leet: {}:", p.display())) && err.contains(want),
                "{file}: {err}"
            );
        }
        // The same file where leet looks by default.
        std::fs::create_dir_all(home.path().join("leet")).unwrap();
        let default = home.path().join("leet/config.toml");
        std::fs::copy(&p, &default).unwrap();
        let out = leet(home.path(), &[tiny().as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("leet/config.toml:") && err.contains(want),
            "{err}"
        );
        // Left as written.
        assert_eq!(std::fs::read(&default).unwrap(), std::fs::read(&p).unwrap());
    }
}

#[test]
fn print_config_prints_the_effective_settings_which_load_back() {
    let home = tempfile::tempdir().unwrap();
    // No file: the defaults, and nothing is written.
    let out = leet(home.path(), &["--print-config".as_ref()]);
    assert!(out.status.success());
    let defaults = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        Config::parse(Path::new("printed"), &defaults).unwrap(),
        Config::default()
    );
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none());
    // A hand-written file: what it says over the defaults.
    let mine = home.path().join("mine.toml");
    std::fs::write(
        &mine,
        "# my settings\n[viewer]\nrows = 3\nguides = \"lines\"\nconsole = true\n\
         [viewer.y_scale]\n\"train/loss\" = \"log\"\n\
         [viewer.filters]\nmetrics = { pattern = \"^train/\" }\n\
         [live]\nleft_sidebar = false\n[live.system_y_scale]\n\"CPU Utilization|%\" = \"heatmap\"\n",
    )
    .unwrap();
    let out = leet(
        home.path(),
        &[
            "--print-config".as_ref(),
            "--config".as_ref(),
            mine.as_os_str(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.contains("rows = 3\n"), "{printed}");
    assert!(printed.contains("\"train/loss\" = \"log\"\n"), "{printed}");
    assert!(printed.contains("metrics = { pattern = \"^train/\", mode = \"regex\" }"));
    let want = Config::parse(&mine, &std::fs::read_to_string(&mine).unwrap()).unwrap();
    assert_eq!(Config::parse(Path::new("printed"), &printed).unwrap(), want);
    // Printed again from what was printed: the same text.
    let again = home.path().join("printed.toml");
    std::fs::write(&again, &printed).unwrap();
    let out = leet(
        home.path(),
        &[
            "--print-config".as_ref(),
            "--config".as_ref(),
            again.as_os_str(),
        ],
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), printed);
}

#[test]
fn a_relative_xdg_config_home_is_ignored_for_the_settings_and_the_key_map() {
    // The XDG spec ignores a relative (or empty) value: `~/.config` is used, not
    // a folder of the current directory.
    let root = tempfile::tempdir().unwrap();
    let rel = root.path().join("rel/leet");
    let home = root.path().join("home");
    let mine = home.join(".config/leet");
    std::fs::create_dir_all(&rel).unwrap();
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(rel.join("config.toml"), "[viewer]\nrows = 3\n").unwrap();
    std::fs::write(
        rel.join("keymap.toml"),
        "[normal]\nq = \"no_such_action\"\n",
    )
    .unwrap();
    std::fs::write(mine.join("config.toml"), "[viewer]\nrows = 5\n").unwrap();
    let print = |what: &str, xdg: &str| {
        crate::common::isolated::leet()
            .arg(what)
            .env("XDG_CONFIG_HOME", xdg)
            .env("HOME", &home)
            .current_dir(root.path())
            .output()
            .unwrap()
    };
    for xdg in ["rel", ""] {
        let out = print("--print-config", xdg);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{xdg:?}: {err}");
        let printed = String::from_utf8(out.stdout).unwrap();
        let cfg = Config::parse(Path::new("printed"), &printed).unwrap();
        assert_eq!(cfg.viewer.rows, Some(5), "{xdg:?}: {printed}");
        let out = print("--print-keymap", xdg);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{xdg:?}: the relative key map was read: {err}"
        );
    }
}

#[test]
fn a_settings_file_must_be_a_readable_regular_file() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = home.path().join("big.toml");
    std::fs::write(&big, "#".repeat((1 << 20) + 1)).unwrap();
    let missing = home.path().join("missing.toml");
    for (p, want) in [
        (fifo.as_path(), "a FIFO, not a regular file"),
        (home.path(), "a directory, not a regular file"),
        (
            Path::new("/dev/zero"),
            "a character device, not a regular file",
        ),
        (
            big.as_path(),
            "1048577 bytes, over the 1 MiB limit for the settings",
        ),
        (missing.as_path(), "cannot read: No such file"),
    ] {
        let out = leet(
            home.path(),
            &[
                "--print-config".as_ref(),
                "--config".as_ref(),
                p.as_os_str(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", p.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&p.display().to_string()) && err.contains(want),
            "{err}"
        );
    }
}

#[test]
fn the_runtime_writes_a_save_and_never_an_older_one_over_it() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("new/dir/config.toml");
    let rows = |n| {
        let mut c = Config::default();
        c.viewer.rows = Some(n);
        c.to_toml()
    };
    let base = Config::default().to_toml();
    let save = |n, generation| {
        let answer = leet::runtime::answer(Cmd::SaveSettings {
            path: Some(path.clone()),
            base: base.clone(),
            text: rows(n),
            writer: 1,
            generation,
        });
        assert_written(&answer.expect("an answer"), generation);
    };
    let on_disk = || Config::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    save(2, 1);
    assert_eq!(on_disk().viewer.rows, Some(2));
    // A save queued before it (the worker's, behind the one on quit): dropped.
    save(1, 1);
    assert_eq!(on_disk().viewer.rows, Some(2));
    save(3, 2);
    assert_eq!(on_disk().viewer.rows, Some(3));
    // No settings file (no place to find one): the answer says why.
    let answer = leet::runtime::answer(Cmd::SaveSettings {
        path: None,
        base: base.clone(),
        text: rows(4),
        writer: 1,
        generation: 3,
    });
    let Some(Msg::SettingsWritten {
        error: Some(e),
        generation: 3,
    }) = answer
    else {
        panic!("{answer:?}");
    };
    assert!(e.contains("no settings file") && e.contains("$HOME"), "{e}");
}

/// `msg` says the save numbered `generation` was written.
fn assert_written(msg: &Msg, generation: u64) {
    assert!(
        matches!(msg, Msg::SettingsWritten { generation: g, error: None } if *g == generation),
        "{msg:?}"
    );
}

/// Carry out the save `app` asks for at its next tick, and tell it how it went.
fn save_at_tick(app: &mut App) -> Msg {
    let cmd = app
        .update(Msg::Tick(NOW + 2.0))
        .cmds
        .into_iter()
        .find(|c| matches!(c, Cmd::SaveSettings { .. }))
        .expect("a save");
    let answer = leet::runtime::answer(cmd).expect("an answer");
    app.update(answer.clone());
    answer
}

/// The tiny run viewed in the wandb directory `dir` with the settings file `path`
/// as it is now.
fn tiny_with(path: &Path, dir: &str) -> App {
    let file = match std::fs::read_to_string(path) {
        Ok(text) => Config::parse(path, &text).unwrap(),
        Err(_) => Config::default(),
    };
    let mut app = app_from("tiny", 120, 40);
    app.use_config_in(Some(path.to_owned()), file, Path::new(dir));
    app
}

#[test]
fn two_instances_changing_different_settings_keep_both() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("leet/config.toml");
    let mut a = tiny_with(&path, "/p/wandb");
    let mut b = tiny_with(&path, "/p/wandb");
    let key = a.focused_key().unwrap().to_owned();
    // A: guides and the focused chart's y scale; B: the band and the palette.
    a.update(Msg::char('g'));
    a.update(Msg::char('y'));
    b.update(Msg::char('b'));
    b.update(Msg::char('P'));
    let (guides, palette) = (a.charts.grid.guides, b.screen.palette);
    assert_written(&save_at_tick(&mut a), 1);
    assert_written(&save_at_tick(&mut b), 1);
    let on_disk = || {
        let text = std::fs::read_to_string(&path).unwrap();
        Config::parse(&path, &text).unwrap()
    };
    let file = on_disk();
    assert_eq!(file.viewer.guides, guides);
    assert_eq!(file.viewer.palette, palette);
    assert!(!file.viewer.band);
    let mine = file.viewer_in(Path::new("/p/wandb"));
    assert_eq!(mine.y_scale.get(&key), Some(&YScale::Log), "{file:?}");
    // A takes its y scale back (a removal) and B changes its guides: each
    // change lands, the other's stay.
    a.update(Msg::char('y'));
    save_at_tick(&mut a);
    b.update(Msg::char('g'));
    b.update(Msg::char('g'));
    save_at_tick(&mut b);
    let file = on_disk();
    assert!(
        file.viewer_in(Path::new("/p/wandb")).y_scale.is_empty(),
        "{file:?}"
    );
    assert_eq!(file.viewer.guides, b.charts.grid.guides);
    assert_eq!(file.viewer.palette, palette);
    assert!(!file.viewer.band);
    // A third instance starts with all of it.
    let c = tiny_with(&path, "/p/wandb");
    assert_eq!(
        (c.charts.grid.guides, c.screen.palette, c.charts.band),
        (b.charts.grid.guides, palette, false)
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_keeps_its_link_and_its_target_gets_the_change() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dotfiles/leet.toml");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, Config::default().to_toml()).unwrap();
    let path = home.path().join("config/leet/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Relative, as dotfile managers make them.
    let link = Path::new("../../dotfiles/leet.toml");
    std::os::unix::fs::symlink(link, &path).unwrap();
    let mut a = tiny_with(&path, "/p/wandb");
    a.update(Msg::char('g'));
    assert_written(&save_at_tick(&mut a), 1);
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&path).unwrap(), link);
    let text = std::fs::read_to_string(&target).unwrap();
    assert_eq!(
        Config::parse(&target, &text).unwrap().viewer.guides,
        a.charts.grid.guides
    );
    assert_ne!(a.charts.grid.guides, Config::default().viewer.guides);
    // No temporary file left in either directory.
    for dir in [path.parent().unwrap(), target.parent().unwrap()] {
        for e in std::fs::read_dir(dir).unwrap() {
            let name = e.unwrap().file_name();
            assert!(!name.to_string_lossy().ends_with(".tmp"), "{name:?}");
        }
    }
}

#[cfg(unix)]
#[test]
fn a_0600_config_stays_0600() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.toml");
    std::fs::write(&path, Config::default().to_toml()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut a = tiny_with(&path, "/p/wandb");
    a.update(Msg::char('g'));
    assert_written(&save_at_tick(&mut a), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        Config::parse(&path, &text).unwrap().viewer.guides,
        a.charts.grid.guides
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_failing_save_is_said_once_in_the_status_bar() {
    let home = tempfile::tempdir().unwrap();
    // The settings' directory cannot be made (a file is in the way): this fails
    // for root too, as a read-only directory would not.
    std::fs::write(home.path().join("leet"), "").unwrap();
    let path = home.path().join("leet/config.toml");
    let mut a = tiny_with(&path, "/p/wandb");
    let said = |a: &App| {
        screen(a, 120, 40)
            .lines()
            .filter(|l| l.contains("settings not saved"))
            .count()
    };
    a.update(Msg::char('g'));
    assert!(matches!(
        save_at_tick(&mut a),
        Msg::SettingsWritten { error: Some(_), .. }
    ));
    assert_eq!(said(&a), 1, "{}", screen(&a, 120, 40));
    // The next key ends the note; the next failing save is not said again.
    a.update(Msg::char('g'));
    assert_eq!(said(&a), 0);
    assert!(matches!(
        save_at_tick(&mut a),
        Msg::SettingsWritten { error: Some(_), .. }
    ));
    assert_eq!(said(&a), 0, "{}", screen(&a, 120, 40));
    // What failed is still unsaved: the quit writes it (and fails again).
    assert!(a.unsaved_settings().is_some());
}

/// The text of the save the next tick asks for.
fn saved_at_tick(app: &mut App) -> String {
    app.update(Msg::Tick(NOW + 2.0))
        .cmds
        .into_iter()
        .find_map(|c| match c {
            Cmd::SaveSettings { text, .. } => Some(text),
            _ => None,
        })
        .expect("saved")
}

/// The top border of the focused (thick) chart.
fn focused_title(s: &str) -> &str {
    s.lines()
        .find(|l| l.contains('┏'))
        .map(|l| l.trim_start_matches(|c| c != '┏'))
        .unwrap_or_default()
}

/// The tiny run viewed as a run of the wandb directory `dir`, with `file`'s
/// settings.
fn tiny_in(dir: &str, file: Config) -> App {
    let mut app = app_from("tiny", 120, 40);
    let config = PathBuf::from("/cfg/leet/config.toml");
    app.use_config_in(Some(config), file, Path::new(dir));
    app
}

#[test]
fn a_y_scale_set_in_project_a_does_not_apply_in_project_b() {
    let mut a = tiny_in("/p/a/wandb", Config::default());
    let key = a.focused_key().unwrap().to_owned();
    a.update(Msg::char('y'));
    assert_eq!(a.charts.grid.scales.metric(&key), YScale::Log);
    assert!(
        focused_title(&screen(&a, 120, 40)).starts_with(&format!("┏{key} · log━")),
        "{}",
        screen(&a, 120, 40)
    );
    let text = saved_at_tick(&mut a);
    let file = Config::parse(Path::new("config.toml"), &text).unwrap();
    // Project B: the same metric, drawn linear (and so saved).
    let b = tiny_in("/p/b/wandb", file.clone());
    assert_eq!(b.charts.grid.scales.metric(&key), YScale::Linear);
    let s = screen(&b, 120, 40);
    assert!(focused_title(&s).starts_with(&format!("┏{key}━")), "{s}");
    assert!(b.settings().y_scale.is_empty());
    assert_eq!(b.unsaved_settings(), None);
    // Project A again: still on its log scale.
    let a = tiny_in("/p/a/wandb", file);
    assert_eq!(a.charts.grid.scales.metric(&key), YScale::Log);
}

#[test]
fn filters_set_in_project_a_do_not_filter_project_b() {
    let mut a = tiny_in("/p/a/wandb", Config::default());
    for m in [
        Msg::char('/'),
        Msg::char('a'),
        Msg::char('c'),
        Msg::char('c'),
    ] {
        a.update(m);
    }
    a.update(Msg::Key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Enter,
    )));
    assert!(a.charts.filter.is_active());
    let file = Config::parse(Path::new("config.toml"), &saved_at_tick(&mut a)).unwrap();
    let b = tiny_in("/p/b/wandb", file.clone());
    assert!(!b.charts.filter.is_active());
    assert!(screen(&b, 120, 40).contains("loss"));
    let a = tiny_in("/p/a/wandb", file);
    assert_eq!(a.charts.filter.text, "acc");
}

/// A filter typed but not kept with `enter` (the prompt still open when leet is
/// quit, ctrl+c'd or its terminal goes) is not saved: the filter before it is;
/// kept with `enter`, it is.
#[test]
fn a_filter_still_being_typed_is_not_saved() {
    let mut a = tiny_in("/p/a/wandb", Config::default());
    for m in [Msg::char('/'), Msg::char('y'), Msg::char('y')] {
        a.update(m);
    }
    // In force as typed (the charts show what it matches)…
    assert_eq!(a.charts.filter.text, "yy");
    // …but not what is kept: nothing changed to save, on a tick or on quit.
    assert_eq!(a.unsaved_settings(), None);
    assert!(!a.settings_config().to_toml().contains("yy"));
    a.update(Msg::Key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Enter,
    )));
    assert!(saved_at_tick(&mut a).contains("pattern = \"yy\""));
    // Typed over a kept one: the kept one stays saved until `enter`.
    for m in [Msg::char('/'), Msg::char('z')] {
        a.update(m);
    }
    assert!(a.settings_config().to_toml().contains("pattern = \"yy\""));
    assert!(!a.settings_config().to_toml().contains("\"z\""));
}

/// A settings file as leet wrote it before settings were per directory: printed
/// by `leet --print-config` (commit 1235397) from a hand-written file with y
/// scales, smoothing, x axes, log x, collapsed sections and all three filters.
fn before_projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/settings/config_before_directories.toml")
}

#[test]
fn a_settings_file_of_before_projects_still_loads_and_moves_into_the_first_project() {
    let p = before_projects();
    let text = std::fs::read_to_string(&p).unwrap();
    let old = Config::parse(&p, &text).unwrap();
    assert_eq!(old.viewer.y_scale.get("acc"), Some(&YScale::Log));
    assert!(old.projects.is_empty());
    // The binary takes it (and prints it back as it was).
    let home = tempfile::tempdir().unwrap();
    let out = leet(
        home.path(),
        &[
            "--print-config".as_ref(),
            "--config".as_ref(),
            p.as_os_str(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(Config::parse(Path::new("printed"), &printed).unwrap(), old);
    // Opened in project A: drawn as before, said in the status bar (see
    // render_settings.rs) until a key.
    let mut a = tiny_in("/p/a/wandb", old.clone());
    assert_eq!(a.settings(), old.viewer);
    assert!(a.settings_note().is_some());
    a.update(Msg::char('j'));
    assert_eq!(a.settings_note(), None);
    // Written back at the next tick in the new layout: the per-directory
    // settings in A's table, the rest in [viewer], [live] as it was.
    let text = saved_at_tick(&mut a);
    let new = Config::parse(Path::new("config.toml"), &text).unwrap();
    let body = text.split_once("\nsave = ").unwrap().1;
    assert!(!body.contains("[viewer.y_scale]"), "{text}");
    assert!(
        body.contains("[viewer.projects.\"/p/a/wandb\".y_scale]\n\"acc\" = \"log\"\n"),
        "{text}"
    );
    assert_eq!(new.live, old.live);
    assert_eq!(new.viewer_in(Path::new("/p/a/wandb")), old.viewer);
    // Project B: the layout and the system filter, none of A's charts' settings.
    let b = tiny_in("/p/b/wandb", new);
    let s = b.settings();
    assert_eq!((s.rows, s.columns, s.band), (Some(2), Some(3), false));
    assert_eq!(s.filters.system.pattern, "gpu");
    assert_eq!(s.system_y_scale, old.viewer.system_y_scale);
    assert!(s.y_scale.is_empty() && s.smoothing.is_empty() && s.x_axis.is_empty());
    assert!(s.log_x.is_empty() && s.collapsed_sections.is_empty());
    assert_eq!(
        (s.smoothing_all.as_str(), s.x_axis_all.as_str()),
        ("none", "step")
    );
    assert!(!b.charts.filter.is_active() && !b.panes.overview.filter.is_active());
    assert_eq!(b.settings_note(), None);
}

#[test]
fn a_run_s_settings_are_its_wandb_directory_s_else_its_file_s_directory() {
    use leet::source::resolve::opening;
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let run = project_run(&root, "proj");
    let wandb = root.join("proj/wandb");
    for path in [
        run.clone(),
        run.join("run-tiny0001.wandb"),
        wandb.clone(),
        root.join("proj"),
    ] {
        let dir = leet::runtime::settings_dir(&opening(&path).unwrap());
        assert_eq!(dir.as_deref(), Some(wandb.as_path()), "{}", path.display());
    }
    // Another spelling of it: the same directory.
    let dotted = root.join("proj/wandb/../wandb/.");
    let dir = leet::runtime::settings_dir(&opening(&dotted).unwrap());
    assert_eq!(dir.as_deref(), Some(wandb.as_path()));
    // A bare `.wandb` file: its directory.
    let loose = root.join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    std::fs::copy(run.join("run-tiny0001.wandb"), loose.join("x.wandb")).unwrap();
    let dir = leet::runtime::settings_dir(&opening(&loose.join("x.wandb")).unwrap());
    assert_eq!(dir.as_deref(), Some(loose.as_path()));
}

/// The tiny fixture's run copied into `<root>/<project>/wandb/`: its run
/// directory.
fn project_run(root: &Path, project: &str) -> PathBuf {
    let name = "offline-run-20261130_174829-tiny0001";
    let dst = root.join(project).join("wandb").join(name);
    std::fs::create_dir_all(&dst).unwrap();
    let src = tiny().join("wandb").join(name).join("run-tiny0001.wandb");
    std::fs::copy(src, dst.join("run-tiny0001.wandb")).unwrap();
    dst
}

/// leet in a detached 120×40 tmux pane of a server of its own.
struct Pane {
    socket: String,
}

impl Pane {
    fn start(name: &str, home: &Path, run: &Path) -> Self {
        let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
        let cmd = format!(
            "HOME={} XDG_CONFIG_HOME={} XDG_STATE_HOME={} XDG_CACHE_HOME={} {} {}",
            quote(&home.join("home")),
            quote(&home.join("config")),
            quote(&home.join("state")),
            quote(&home.join("cache")),
            quote(Path::new(env!("CARGO_BIN_EXE_leet"))),
            quote(run)
        );
        let pane = Self {
            socket: format!("leet-settings-{name}-{}", std::process::id()),
        };
        pane.tmux(&[
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "120",
            "-y",
            "40",
            &cmd,
        ]);
        pane
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .output()
            .unwrap()
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "s"]).stdout).into_owned()
    }

    /// Wait (10 s at most: a stuck binary fails the test) until `done`.
    fn wait(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let t0 = Instant::now();
        while !done(self) {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{what}:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn quit(&self) {
        self.tmux(&["send-keys", "-t", "s", "q"]);
        self.wait("still running", |p| {
            !p.tmux(&["has-session", "-t", "s"]).status.success()
        });
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// Through the binary: `y` on project A's `acc`, quit; project B's `acc` is
/// drawn linear, project A's still on its log scale.
#[test]
fn the_binary_keeps_a_y_scale_in_the_project_it_was_set_in() {
    if !common::have_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (project_run(tmp.path(), "a"), project_run(tmp.path(), "b"));
    let config = tmp.path().join("config/leet/config.toml");
    let pane = Pane::start("a", tmp.path(), &a);
    pane.wait("no acc chart", |p| {
        focused_title(&p.screen()).starts_with("┏acc━")
    });
    pane.tmux(&["send-keys", "-t", "s", "y"]);
    pane.wait("not on a log scale", |p| {
        focused_title(&p.screen()).starts_with("┏acc · log━")
    });
    pane.wait("not saved", |_| {
        std::fs::read_to_string(&config)
            .is_ok_and(|t| t.contains("\"acc\" = \"log\"") || t.contains("\nacc = \"log\""))
    });
    pane.quit();
    for (run, title) in [(&b, "┏acc━"), (&a, "┏acc · log━")] {
        let pane = Pane::start("b", tmp.path(), run);
        pane.wait(title, |p| focused_title(&p.screen()).starts_with(title));
        pane.quit();
    }
}
