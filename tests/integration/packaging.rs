//! What packaging ships besides the binary: `--version` naming the commit, shell
//! completions that the shells parse, a man page that renders, `--help` with
//! examples and the first keys; and the one duration syntax of every flag.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use clap::Parser as _;
use leet::cli::{Cli, Command as Sub};

use crate::common::isolated;
use crate::common::tool;

fn leet(args: &[&str]) -> Output {
    let out = isolated::leet().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "leet {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `program args` with `input` on its standard input.
fn feed(program: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn version_names_the_commit_built_from() {
    let out = String::from_utf8(leet(&["--version"]).stdout).unwrap();
    assert!(
        out.starts_with(&format!("leet {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match head {
        // build.rs reruns when HEAD moves, so the binary names today's HEAD.
        Some(h) => assert!(out.contains(&format!("(commit {h}")), "{out} vs {h}"),
        None => assert!(out.contains("(commit unknown)"), "{out}"),
    }
}

#[test]
fn completions_parse_in_their_shells() {
    let bash = leet(&["completions", "bash"]).stdout;
    assert!(String::from_utf8_lossy(&bash).contains("_leet()"));
    if tool::have_tool("bash", &["--version"]) {
        let o = feed("bash", &["-n"], &bash);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let zsh = leet(&["completions", "zsh"]).stdout;
    assert!(String::from_utf8_lossy(&zsh).starts_with("#compdef leet"));
    if tool::have_tool("zsh", &["--version"]) {
        let o = feed("zsh", &["-n"], &zsh);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let fish = leet(&["completions", "fish"]).stdout;
    let text = String::from_utf8_lossy(&fish);
    assert!(
        text.contains("complete -c leet") && text.contains("export"),
        "{text}"
    );
    if tool::have_tool("fish", &["--version"]) {
        let o = feed("fish", &["-n"], &fish);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // An unknown shell is a usage error.
    let o = isolated::leet()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_man_page_renders_with_every_subcommand() {
    let man = leet(&["man"]).stdout;
    let roff = String::from_utf8_lossy(&man);
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH leet 1"),
        "{roff}"
    );
    if !tool::have_tool("groff", &["--version"]) {
        return;
    }
    let o = feed("groff", &["-man", "-Tutf8", "-ww"], &man);
    let page = String::from_utf8_lossy(&o.stdout);
    let warnings = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{warnings}");
    assert!(warnings.trim().is_empty(), "groff warns: {warnings}");
    // groff overstrikes bold (c\bc): compare the letters.
    let plain: String = page
        .split('\u{8}')
        .enumerate()
        .map(|(i, s)| if i == 0 { s } else { s.get(1..).unwrap_or("") })
        .collect();
    for want in [
        "LEET EXPORT",
        "LEET COMPLETIONS",
        "LEET MAN",
        "--no-color",
        "--idle-timeout",
        "Examples:",
        "q quit",
    ] {
        assert!(plain.contains(want), "{want:?} not in the page:\n{plain}");
    }
}

#[test]
fn help_shows_examples_and_the_first_keys() {
    let help = String::from_utf8(leet(&["--help"]).stdout).unwrap();
    for want in [
        "Examples:",
        "leet --live",
        "h (or ?) help",
        "q quit",
        "--no-color",
    ] {
        assert!(help.contains(want), "{want:?} not in:\n{help}");
    }
}

fn parse(args: &[&str]) -> Cli {
    let cli = Cli::try_parse_from(std::iter::once("leet").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    cli.validate().unwrap();
    cli
}

#[test]
fn every_duration_flag_takes_the_one_syntax() {
    for (text, secs) in [
        ("90s", 90),
        ("10m", 600),
        ("2h", 7200),
        ("1h30m", 5400),
        ("45", 45),
    ] {
        let v = parse(&["--stale-after", text]).view;
        assert_eq!(v.stale_after, secs, "--stale-after {text}");
        let v = parse(&["--live", "--window", text]).view;
        assert_eq!(v.window, secs as f64, "--window {text}");
        let Some(Sub::Inspect(a)) = parse(&["inspect", "-f", "--idle-timeout", text]).command
        else {
            panic!("inspect")
        };
        assert_eq!(
            a.idle_timeout,
            Some(Duration::from_secs(secs)),
            "--idle-timeout {text}"
        );
        let v = parse(&["--live", "--window", "24h", "--interval", text]).view;
        assert_eq!(
            v.sampler.interval,
            Duration::from_secs(secs),
            "--interval {text}"
        );
    }
    // Sub-second where it makes sense.
    let v = parse(&["--live", "--interval", "500ms"]).view;
    assert_eq!(v.sampler.interval, Duration::from_millis(500));
    let Some(Sub::Inspect(a)) = parse(&["inspect", "-f", "--idle-timeout", "500ms"]).command else {
        panic!("inspect")
    };
    assert_eq!(a.idle_timeout, Some(Duration::from_millis(500)));
    // The defaults, now written as durations, are what they were.
    let v = parse(&[]).view;
    assert_eq!((v.stale_after, v.window), (120, 300.0));
    assert_eq!(v.sampler.interval, Duration::from_secs(1));
    assert!(!v.screen.no_color);
    assert!(parse(&["--no-color"]).view.screen.no_color);
    assert!(!v.screen.no_mouse);
    assert!(parse(&["--no-mouse"]).view.screen.no_mouse);
}
