//! A run on a server, written as a local `.wandb` file, so that everything that
//! opens run files (the viewer and `--compare`, `inspect`, `export`) opens it
//! unchanged. While the run is running, a thread keeps asking the server for new
//! rows and appends them to the file, which the viewer's follow thread reads as
//! it reads a run being written. The files live beside the download cache, in
//! `leet/remote-runs/`, one per run and leet process ([`files::claim`]),
//! replaced at each open, and counted toward the cache's bound: the least
//! recently written go with its entries, unless a leet process holds them.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::auth::find_key;
use super::cache::{entry_name, Cache, DEFAULT_LIMIT};
use super::fetch::{self, Options, Progress};
use super::files;
use super::project;
use super::url::RemoteUrl;
use super::{is_url, RemoteError};
use crate::msg::FollowTrouble;

/// The environment, with `WANDB_API_KEY` as it was at the first look: it is
/// taken out of the process's environment then (see [`local_path`]), and a second
/// URL (`--compare`) still needs it.
fn env(k: &str) -> Option<String> {
    static KEY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if k == "WANDB_API_KEY" {
        return KEY.get_or_init(|| std::env::var(k).ok()).clone();
    }
    std::env::var(k).ok()
}

/// `path` itself when it is not a URL; else the run at that URL, downloaded (or
/// from the cache) and written as a `.wandb` file, whose path is returned, and
/// followed while it runs; the download stops when `cancel` is set. A project's URL, where `projects` allows it, is its
/// workspace ([`project::workspace`]). `progress` hears how the download goes.
///
/// # Errors
/// What opening the run on the server gives ([`fetch::open`]); writing the file;
/// [`RemoteError::Project`] for a project's URL where a run is needed.
pub fn local_path(
    path: &Path,
    projects: bool,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<PathBuf, RemoteError> {
    let Some(text) = path.to_str().filter(|s| is_url(s)) else {
        return Ok(path.to_owned());
    };
    let url = RemoteUrl::parse(text, env("WANDB_BASE_URL").as_deref())?;
    let cache_dir = Cache::default_dir(&env);
    let root = cache_dir
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
        .join("remote-runs");
    let opts = Options {
        key: find_key(url.netloc(), &env),
        cache: cache_dir.map(|d| Cache::new(d, DEFAULT_LIMIT).with_runs(root.clone())),
        summary_only: true,
        framing: true,
        ca_file: leet_sampler::tls::ca_file_from_env(),
        ..Options::default()
    };
    if std::env::var_os("WANDB_API_KEY").is_some() {
        // Held by the client from here on: the programs leet starts (samplers,
        // tools) do not inherit it. This is the first URL opened (the variable is
        // there), before the viewer's threads start; the one other thread then,
        // waiting for a key that cancels, reads no environment.
        std::env::remove_var("WANDB_API_KEY");
    }
    if url.run.is_none() && projects {
        return project::workspace(&url, &opts, &root, cancel, progress);
    }
    let name = entry_name(&url);
    let io = |e: std::io::Error| RemoteError::protocol(&root.display().to_string(), e);
    let mut run = match fetch::open(&url, &opts, cancel, progress) {
        Ok((run, _)) => run,
        Err(e) if e.is_down() => {
            // A server that is down (or a laptop offline) still shows the run as
            // this user last saw it, saying so, rather than nothing.
            let Some(kept) = newest_kept(&root, &name) else {
                return Err(e);
            };
            let dir = files::claim(&root, &name).map_err(io)?;
            let file = dir.join(format!("run-{name}.wandb"));
            if kept.path != file {
                let bytes = std::fs::read(&kept.path).map_err(io)?;
                let tmp = file.with_extension("wandb.tmp");
                files::write_private(&tmp, &bytes).map_err(io)?;
                std::fs::rename(&tmp, &file).map_err(io)?;
            }
            progress(Progress::Kept { age_s: kept.age_s });
            files::note(
                &file,
                Some(FollowTrouble {
                    text: format!(
                        "{e}; showing the copy kept {} ago",
                        leet_text::duration(kept.age_s as f64)
                    ),
                    polls_fail: true,
                }),
            );
            return Ok(file);
        }
        Err(e) => return Err(e),
    };
    let dir = files::claim(&root, &name).map_err(io)?;
    let file = dir.join(format!("run-{name}.wandb"));
    let tmp = file.with_extension("wandb.tmp");
    files::write_private(&tmp, run.framed()).map_err(io)?;
    std::fs::rename(&tmp, &file).map_err(io)?;
    // The file (twice the history's Parquet) counts toward the cache's bound.
    if let Some(c) = &opts.cache {
        c.evict();
    }
    files::note(&file, run.trouble(None));
    if run.meta.running() {
        let f = file.clone();
        std::thread::spawn(move || {
            run.follow(&f, &|t| files::note(&f, t));
            files::note(&f, run.trouble(None));
        });
    }
    Ok(file)
}

/// A copy of a run kept by an earlier open ([`newest_kept`]).
struct Kept {
    path: PathBuf,
    /// Seconds since it was last written.
    age_s: u64,
}

/// The newest copy of the run `name` that an earlier open (of this process or
/// another) wrote under `root`: `name/run-name.wandb`, `name-1/…` … ([`files::claim`]).
fn newest_kept(root: &Path, name: &str) -> Option<Kept> {
    let file = format!("run-{name}.wandb");
    std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n == name
                || n.strip_prefix(name)
                    .and_then(|k| k.strip_prefix('-'))
                    .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            let path = e.path().join(&file);
            let m = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_file() && m.len() > 0)?;
            Some((m.modified().ok()?, path))
        })
        .max_by_key(|(t, _)| *t)
        .map(|(t, path)| Kept {
            path,
            age_s: t.elapsed().map_or(0, |d| d.as_secs()),
        })
}

/// A progress line for stderr.
pub fn progress_line(p: Progress) -> Option<String> {
    match p {
        Progress::Download {
            file,
            files,
            bytes,
            total,
        } if Some(bytes) == total => Some(format!(
            "downloaded history file {} of {files} ({bytes} bytes)",
            file + 1
        )),
        Progress::Cached { files } => Some(format!("history files from the cache ({files})")),
        Progress::Kept { age_s } => Some(format!(
            "the server cannot be reached or is down; reading the copy of the run kept {} ago (it may be out of date)",
            leet_text::duration(age_s as f64)
        )),
        Progress::Retrying {
            status,
            wait_s,
            attempt,
            of,
        } => Some(format!(
            "the server answered HTTP {status} (busy); trying again in {wait_s} s (try {attempt} of {of})"
        )),
        _ => None,
    }
}
