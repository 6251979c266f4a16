//! Compiles the server half of libtpu's runtime metrics service
//! (`crates/leet-sampler/proto/tpu_metric_service.proto`, whose client the TPU sampler
//! builds in its own crate) with pure-Rust tools (protox + tonic-prost-build), so
//! building leet never needs a system `protoc`. It goes to `OUT_DIR/tpu_server/` for
//! the fake runtime of `tests/sampler_tpu.rs` and `examples/fake_tpu_runtime.rs` (only
//! they compile it, so the library holds no server code).
//!
//! It also names the commit built from, for `leet --version`.

use std::path::Path;
use std::process::Command;

/// `git` run in the package's directory: its trimmed output, None when git is
/// missing, fails, or this is not a git tree (a crate unpacked from a registry).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Sets `LEET_GIT_COMMIT`: the short commit hash, `-dirty` after it when tracked
/// files differed from it when this ran, `unknown` outside git. Rerun when HEAD
/// moves (a commit, a checkout); not on every edit, so `-dirty` can be stale in a
/// build made after more edits (the index is not watched: `git status` rewrites it).
fn commit() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).filter(|c| !c.is_empty());
    let dirty = commit.is_some()
        && git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let name = match commit {
        Some(c) if dirty => format!("{c}-dirty"),
        Some(c) => c,
        None => "unknown".to_owned(),
    };
    println!("cargo:rustc-env=LEET_GIT_COMMIT={name}");
    // In a worktree .git is a file: ask git where HEAD lives, and the branch's ref
    // (which moves on a commit while HEAD still names the branch).
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for what in std::iter::once("HEAD").chain(branch.as_deref()) {
        if let Some(p) = git(&["rev-parse", "--git-path", what]) {
            let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    commit();
    let proto = "crates/leet-sampler/proto";
    println!("cargo:rerun-if-changed={proto}/tpu_metric_service.proto");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let tpu = protox::compile(["tpu_metric_service.proto"], [proto])?;
    let server_dir = out.join("tpu_server");
    std::fs::create_dir_all(&server_dir)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(&server_dir)
        .compile_fds(tpu)?;
    Ok(())
}
