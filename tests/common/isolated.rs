//! The leet binary started as a test wants it: with its own empty config, state and
//! cache directories and its own `HOME`, so that a user's `~/.config/leet` (a saved
//! filter, a keymap, a bad settings file) or what another test saved never changes
//! a result. Depends on nothing but std, so any test binary can include it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variables pointed at the fresh directories, each with its folder's name.
pub const VARS: [(&str, &str); 4] = [
    ("HOME", "home"),
    ("XDG_CONFIG_HOME", "config"),
    ("XDG_STATE_HOME", "state"),
    ("XDG_CACHE_HOME", "cache"),
];

/// A new empty directory for one start of leet, under the test build's own
/// temporary folder (`target/tmp`, which `cargo clean` empties), holding the
/// folders of [`VARS`].
pub fn fresh_home() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("leet-env")
        .join(format!("{}-{n}", std::process::id()));
    // What a process of the same id left from an earlier run.
    let _ = std::fs::remove_dir_all(&dir);
    for (_, sub) in VARS {
        std::fs::create_dir_all(dir.join(sub)).expect("create a test home");
    }
    dir
}

/// Point `cmd`'s [`VARS`] at a [`fresh_home`]; a test that needs its own value of
/// one sets it after this (the later `env` wins).
pub fn isolate(cmd: &mut Command) -> &mut Command {
    let dir = fresh_home();
    for (var, sub) in VARS {
        cmd.env(var, dir.join(sub));
    }
    cmd
}

/// `leet`, isolated.
pub fn leet() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_leet"));
    isolate(&mut cmd);
    cmd
}
