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
    let (mut run, _) = fetch::open(&url, &opts, cancel, progress)?;
    let name = entry_name(&url);
    let io = |e: std::io::Error| RemoteError::protocol(&root.display().to_string(), e);
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
