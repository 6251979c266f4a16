//! A project on a server, as a workspace: its newest runs listed with the Python
//! API's `Runs` query, each written at once as a run directory holding a `.wandb`
//! file of its facts (state, config, summary), so the workspace shows every run
//! straight away; a thread then fetches each run's history, newest first, and
//! replaces its file with the whole run (the viewer reads a replaced file again),
//! and keeps following those still running.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::cache::entry_name;
use super::client::Client;
use super::fetch::{self, Options, RemoteRun};
use super::info::{self, RunMeta};
use super::records::{rfc3339, Writer};
use super::url::RemoteUrl;
use super::RemoteError;

/// Runs of a project shown, newest first.
pub const MAX_RUNS: usize = 50;

/// The runs of a project, as the Python API's `Api().runs()` asks for them.
pub const RUNS_QUERY: &str = "query Runs($project: String!, $entity: String!, $cursor: String, $perPage: Int = 50, $order: String, $filters: JSONString) {
  project(name: $project, entityName: $entity) {
    runs(filters: $filters, after: $cursor, first: $perPage, order: $order) {
      edges { node { id name displayName state config summaryMetrics createdAt heartbeatAt historyLineCount notes tags group jobType sweepName commit } cursor }
      pageInfo { endCursor hasNextPage }
    }
  }
}";

/// The project's newest runs (at most `limit`), newest first.
///
/// # Errors
/// [`RemoteError::NotFound`] for no such project; the client's errors.
pub fn list_runs(c: &Client, url: &RemoteUrl, limit: usize) -> Result<Vec<RunMeta>, RemoteError> {
    let mut out = Vec::new();
    let mut cursor = Value::Null;
    while out.len() < limit {
        let mut v = info::vars(url, "cursor");
        v.insert("cursor".into(), cursor.clone());
        v.insert("perPage".into(), (limit - out.len()).min(50).into());
        v.insert("order".into(), "-created_at".into());
        let data = c.graphql("Runs", RUNS_QUERY, Value::Object(v))?;
        let runs = data
            .pointer("/project/runs")
            .filter(|r| r.is_object())
            .ok_or_else(|| RemoteError::NotFound { url: url.shown() })?;
        let edges = runs
            .get("edges")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        out.extend(
            edges
                .iter()
                .filter_map(|e| e.get("node"))
                .map(info::meta_of),
        );
        let next = runs
            .pointer("/pageInfo/hasNextPage")
            .and_then(Value::as_bool)
            == Some(true);
        let end = runs
            .pointer("/pageInfo/endCursor")
            .cloned()
            .unwrap_or(Value::Null);
        if !next || edges.is_empty() || end.is_null() || end == cursor {
            break;
        }
        cursor = end;
    }
    out.truncate(limit);
    Ok(out)
}

/// Write the project's workspace under `root` and start fetching its runs; the
/// `wandb` directory to open. The listing stops when `cancel` is set while it
/// waits on a busy server, each such wait told to `progress`.
///
/// # Errors
/// Listing the runs; writing the files; [`RemoteError::Cancelled`].
pub fn workspace(
    url: &RemoteUrl,
    opts: &Options,
    root: &Path,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(fetch::Progress),
) -> Result<PathBuf, RemoteError> {
    let key = opts.key.clone().ok_or_else(|| RemoteError::NoKey {
        host: leet_text::sanitize(url.netloc()),
        api: leet_text::sanitize(&url.api),
    })?;
    let client = Client::new(&url.api, Some(key), opts.timeouts, opts.ca_file.as_deref())?;
    let runs: Vec<_> = super::client::with_retries(cancel, &mut |r| progress(r.into()), || {
        list_runs(&client, url, MAX_RUNS)
    })?
    .into_iter()
    .filter(|m| safe_name(&m.name))
    .collect();
    if runs.is_empty() {
        // An empty workspace would only say that no run file was found, and where.
        return Err(RemoteError::NoRuns { url: url.shown() });
    }
    let wandb = super::files::claim(root, &entry_name(url))
        .map_err(|e| RemoteError::protocol(&root.display().to_string(), e))?
        .join("wandb");
    let io = |e: std::io::Error| RemoteError::protocol(&wandb.display().to_string(), e);
    // Each open lays the workspace anew: runs deleted on the server go too.
    let _ = std::fs::remove_dir_all(&wandb);
    super::files::create_private_dir(&wandb).map_err(io)?;
    let mut files = Vec::new();
    for m in &runs {
        let run_url = RemoteUrl {
            run: Some(m.name.clone()),
            ..url.clone()
        };
        let start = rfc3339(&m.created_at).map_or(0.0, |(s, _)| s as f64);
        let dir = wandb.join(leet_format::synth::run_dir_name(start, &m.name, false));
        super::files::create_private_dir(&dir).map_err(io)?;
        let file = dir.join(format!("run-{}.wandb", m.name));
        let mut w = Writer::new().framing();
        w.meta(&run_url, m);
        replace(&file, w.framed()).map_err(io)?;
        files.push((run_url, file));
    }
    if let Some(c) = &opts.cache {
        c.evict();
    }
    let opts = Options {
        framing: true,
        summary_only: true,
        ..opts.clone()
    };
    std::thread::spawn(move || fetch_all(&files, &opts));
    Ok(wandb)
}

/// A run's name as a file name: what the server calls it may not be one.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn replace(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = file.with_extension("wandb.tmp");
    super::files::write_private(&tmp, bytes)?;
    std::fs::rename(&tmp, file)
}

/// Fetch each run whole, newest first, replacing its file; then follow the ones
/// still running. A run that fails to fetch keeps its facts-only file.
fn fetch_all(files: &[(RemoteUrl, PathBuf)], opts: &Options) {
    let never = AtomicBool::new(false);
    let mut running: Vec<(RemoteRun, PathBuf)> = Vec::new();
    for (url, file) in files {
        let Ok((mut run, _)) = fetch::open(url, opts, &never, &mut |_| {}) else {
            continue;
        };
        if replace(file, run.framed()).is_err() {
            continue;
        }
        if run.meta.running() {
            running.push((run, file.clone()));
        }
    }
    for (mut run, file) in running {
        std::thread::spawn(move || {
            // Only failed polls: the trouble is said for whichever run is in
            // view, and a part missing from one of a project's runs is not news
            // about another.
            run.follow(&file, &|t| {
                super::files::note(&file, t.filter(|t| t.polls_fail));
            });
            super::files::note(&file, None);
        });
    }
}
