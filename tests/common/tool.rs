//! The one policy for a tool a test needs (tmux, a C compiler, `ps`): CI must have it,
//! so under `CI=true` a missing tool fails the test; elsewhere the test may skip, and
//! says why. Depends on nothing but std, so any test binary can include it.
#![allow(dead_code)]

use std::process::{Command, Stdio};

/// Whether `program args` runs and exits successfully (a probe, output discarded).
pub fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `found`, for the tool `what`: a panic under `CI=true` where it is missing, else a
/// printed reason to skip.
pub fn need(what: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{what} is required in CI"
        );
        eprintln!("SKIPPED: {what} is not installed (CI installs it via .ci/run)");
    }
    found
}

/// Whether `program args` runs, under the policy of [`need`].
pub fn have_tool(program: &str, args: &[&str]) -> bool {
    need(program, runs(program, args))
}
