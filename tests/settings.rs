//! The settings file through the binary: each kind of invalid file is refused
//! with a message naming the file, the key and the reason, exit status 2 and
//! nothing on standard output (the terminal untouched); `--print-config` prints
//! the effective settings as TOML that loads back.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use leet::app::settings::Config;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_configs")
}

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/tiny")
}

/// `leet` with `XDG_CONFIG_HOME` at `home`, with a deadline (a settings file
/// that blocks is a failure, not a stuck test).
fn leet(home: &Path, args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leet"))
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
        assert!(msg.starts_with(&format!("{}: ", p.display())), "{msg}");
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
                err.starts_with(&format!("leet: {}: ", p.display())) && err.contains(want),
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
            err.contains("leet/config.toml: ") && err.contains(want),
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
    use leet::app::Cmd;
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("new/dir/config.toml");
    let save = |text: &str, generation| {
        leet::runtime::answer(Cmd::SaveSettings {
            path: path.clone(),
            text: text.into(),
            generation,
        })
    };
    assert!(save("[viewer]\nrows = 2\n", 1).is_none());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "[viewer]\nrows = 2\n"
    );
    // A save queued before it (the worker's, behind the one on quit): dropped.
    assert!(save("[viewer]\nrows = 1\n", 1).is_none());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "[viewer]\nrows = 2\n"
    );
    assert!(save("[viewer]\nrows = 3\n", 2).is_none());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "[viewer]\nrows = 3\n"
    );
}
