//! leet's own state file: what the workspace remembers of each wandb directory
//! (selection, pins, filter, grouping), under `$XDG_STATE_HOME/leet`. Never written
//! into the wandb directory.
//!
//! One file per wandb directory, named by a hash of its canonical path (so every
//! spelling of it, a symlink, `./wandb/`, `wandb/latest-run/..`, finds the same
//! file): `workspace-<16 hex digits>.json`, holding
//! `{"version":1,"wandb_dir":"<canonical path>","state":{…}}`. A file of another
//! version or for another directory (a hash collision) is not used; one that is too
//! large or does not parse is an error naming the file. Read from disk, the state
//! is untrusted: at most [`MAX_STATE_BYTES`] are read, and lists and strings are
//! capped ([`MAX_SELECTED`], [`MAX_TEXT_BYTES`]) before the app sees them.
//! Written atomically (a temporary file beside it, then a rename; through a
//! link, keeping the file's mode), in a directory created private (0700 on
//! Unix). Two leets of one directory each write only what they changed, merged
//! under a lock into the file as it is then.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::index::cache::fnv1a;
use super::index::xdg_dir_from;
use super::settings::merge_save;
use crate::msg::WorkspaceSaved;
use leet_text::{sanitize, sanitize_path};

#[cfg(test)]
mod tests;

/// Version of the state file format; a file of any other is ignored.
pub const VERSION: u32 = 1;

/// Largest state file read (a hostile or runaway file is not loaded).
pub const MAX_STATE_BYTES: u64 = 1 << 20;

/// Most selected runs remembered (the rest of a longer list is dropped).
pub const MAX_SELECTED: usize = 10_000;

/// Longest string remembered (a run key, the filter, a config or summary key); a
/// longer one names nothing leet would show and is dropped.
pub const MAX_TEXT_BYTES: usize = 4096;

#[derive(serde::Serialize)]
struct Out<'a> {
    version: u32,
    wandb_dir: &'a str,
    state: &'a WorkspaceSaved,
}

#[derive(serde::Deserialize)]
struct In {
    version: u32,
    wandb_dir: String,
    state: WorkspaceSaved,
}

/// `$XDG_STATE_HOME/leet` (when set to an absolute path), else
/// `$HOME/.local/state/leet`; None without either.
#[must_use]
pub fn default_state_dir() -> Option<PathBuf> {
    xdg_dir_from(
        std::env::var_os("XDG_STATE_HOME"),
        std::env::var_os("HOME"),
        ".local/state",
    )
}

/// The state file in `state_dir` for `wandb_dir` (any spelling of it).
#[must_use]
pub fn file_for(state_dir: &Path, wandb_dir: &Path) -> PathBuf {
    file_for_canonical(state_dir, &canonical(wandb_dir))
}

fn file_for_canonical(state_dir: &Path, canonical: &Path) -> PathBuf {
    state_dir.join(format!(
        "workspace-{:016x}.json",
        fnv1a(canonical.as_os_str().as_encoded_bytes())
    ))
}

/// The directory's canonical path; as an absolute path when it cannot be resolved
/// (it does not exist: nothing was or will be saved for it that another spelling
/// must find).
fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_owned())
}

/// What was saved for `wandb_dir` (None: nothing yet, or a file of another version
/// or for another directory).
///
/// # Errors
/// A state file that cannot be read, is over [`MAX_STATE_BYTES`] or does not
/// parse: the cause, naming the file.
pub fn load(state_dir: &Path, wandb_dir: &Path) -> Result<Option<WorkspaceSaved>, String> {
    let canonical = canonical(wandb_dir);
    let file = file_for_canonical(state_dir, &canonical);
    let name = sanitize_path(&file);
    let f = match crate::source::small_file::open_regular(&file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("state file {name}: {e}")),
    };
    let mut data = Vec::new();
    f.take(MAX_STATE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("state file {name}: {e}"))?;
    if data.len() as u64 > MAX_STATE_BYTES {
        return Err(format!(
            "state file {name}: over {MAX_STATE_BYTES} bytes, not read"
        ));
    }
    let stored: In = match serde_json::from_slice(&data) {
        Ok(s) => s,
        Err(e) => {
            // Another version may have another layout: it says its version.
            #[derive(serde::Deserialize)]
            struct Head {
                version: u32,
            }
            return match serde_json::from_slice::<Head>(&data) {
                Ok(h) if h.version != VERSION => Ok(None),
                // The parser's message can quote the file's text: untrusted.
                _ => Err(format!(
                    "state file {name} does not parse: {}",
                    sanitize(&e.to_string())
                )),
            };
        }
    };
    if stored.version != VERSION || stored.wandb_dir != canonical.to_string_lossy() {
        return Ok(None);
    }
    Ok(Some(bounded(stored.state)))
}

/// Save what this instance changed in the workspace of `wandb_dir`: the changes
/// from `base` (what it loaded, or last saved) to `now`, laid over the state file
/// as it is now ([`merged`]), so another leet's changes to the same directory
/// stay. Read and written under a lock beside the file; lists and strings capped
/// as [`load`] caps them, so what is saved is what is loaded. Saves are
/// numbered by writer (an `App`): one at or below the number that writer wrote
/// already is skipped, so a queued save never undoes a later one.
///
/// # Errors
/// The state directory is inside `wandb_dir` (leet never writes there), or it or
/// the file cannot be written.
pub fn save(
    state_dir: &Path,
    wandb_dir: &Path,
    base: &WorkspaceSaved,
    now: &WorkspaceSaved,
    order: (u64, u64),
) -> io::Result<()> {
    let canonical = canonical(wandb_dir);
    if resolved(state_dir).starts_with(&canonical) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "state directory {} is inside the wandb directory {}: not saved",
                sanitize_path(state_dir),
                sanitize_path(&canonical)
            ),
        ));
    }
    let file = file_for_canonical(state_dir, &canonical);
    // Whatever fails names the file (the OS's "No such file or directory" alone
    // does not say which).
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", sanitize_path(&file)));
    create_private_dir(state_dir).map_err(named)?;
    merge_save(&file, order, |_| {
        // A file that cannot be read or parsed is replaced, as it was before
        // merging (it would not be loaded anyway).
        let on_disk = load(state_dir, wandb_dir)
            .ok()
            .flatten()
            .unwrap_or_default();
        let state = bounded(merged(on_disk, base, now));
        encode(&canonical.to_string_lossy(), state).map(Some)
    })
    .map_err(named)
}

/// [`load`] for a workspace opening: a state file that cannot be used (it does
/// not parse, it is too big) is moved aside to `<file>.bad`, so the saves that
/// follow start afresh without destroying it, and the note to show says so.
/// (None, None): nothing saved yet.
#[must_use]
pub fn load_or_set_aside(
    state_dir: &Path,
    wandb_dir: &Path,
) -> (Option<WorkspaceSaved>, Option<String>) {
    match load(state_dir, wandb_dir) {
        Ok(s) => (s, None),
        Err(e) => {
            let file = file_for(state_dir, wandb_dir);
            let bad = set_aside_name(&file);
            // Only a file there with something in it (not one that cannot be
            // opened, not an empty one) is moved.
            let kept = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file() && m.len() > 0)
                && std::fs::rename(&file, &bad).is_ok();
            // Where it went first (a status bar cuts a long line at its end),
            // then why: `e` names the file again in full.
            let note = if kept {
                let name = bad.file_name().map_or(bad.as_path(), Path::new);
                format!(
                    "workspace state set aside as {}, started afresh: {e}",
                    sanitize_path(name)
                )
            } else {
                format!("workspace state not used: {e}")
            };
            (None, Some(note))
        }
    }
}

/// Where a state file that cannot be used is moved: `….json.bad`, else the first
/// of `….json.bad.1` to `.bad.9` not taken (an earlier one kept), else the oldest
/// of them.
fn set_aside_name(file: &Path) -> PathBuf {
    let with = |tail: String| {
        let mut p = file.as_os_str().to_owned();
        p.push(tail);
        PathBuf::from(p)
    };
    let names: Vec<PathBuf> = std::iter::once(with(".bad".into()))
        .chain((1..SET_ASIDE_KEPT).map(|i| with(format!(".bad.{i}"))))
        .collect();
    let modified = |p: &Path| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok();
    if let Some(free) = names.iter().find(|p| std::fs::symlink_metadata(p).is_err()) {
        return free.clone();
    }
    names
        .iter()
        .min_by_key(|p| modified(p))
        .cloned()
        .unwrap_or_else(|| with(".bad".into()))
}

/// How many set-aside state files of one directory are kept.
const SET_ASIDE_KEPT: usize = 10;

/// The state file's bytes for `state`, within [`MAX_STATE_BYTES`].
fn encode(wandb_dir: &str, mut state: WorkspaceSaved) -> io::Result<Vec<u8>> {
    loop {
        let data = serde_json::to_vec(&Out {
            version: VERSION,
            wandb_dir,
            state: &state,
        })
        .map_err(io::Error::other)?;
        // Keys of up to 4 KiB each could pass the read limit: drop the latest
        // selected until it fits (real run ids are 8 characters).
        if data.len() as u64 <= MAX_STATE_BYTES || state.selected.is_empty() {
            return Ok(data);
        }
        state.selected.truncate(state.selected.len() * 3 / 4);
    }
}

/// `file` (the state on disk) with what changed from `base` to `now`: each value
/// this instance changed takes its new value (the runs filter and its mode go
/// together), the others stay as `file` has them; the selection keeps `file`'s
/// runs, less those this instance deselected, plus those it selected (after
/// them, in the order selected).
#[must_use]
pub fn merged(
    mut file: WorkspaceSaved,
    base: &WorkspaceSaved,
    now: &WorkspaceSaved,
) -> WorkspaceSaved {
    file.selected
        .retain(|k| now.selected.contains(k) || !base.selected.contains(k));
    for k in &now.selected {
        if !base.selected.contains(k) && !file.selected.contains(k) {
            file.selected.push(k.clone());
        }
    }
    if now.pinned != base.pinned {
        file.pinned.clone_from(&now.pinned);
    }
    if (&now.filter, now.filter_glob) != (&base.filter, base.filter_glob) {
        file.filter.clone_from(&now.filter);
        file.filter_glob = now.filter_glob;
    }
    if now.group_by != base.group_by {
        file.group_by.clone_from(&now.group_by);
    }
    if now.summary_column != base.summary_column {
        file.summary_column.clone_from(&now.summary_column);
    }
    file
}

/// `path` with its longest existing ancestor canonical (it need not exist yet).
fn resolved(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    for base in path.ancestors() {
        if let Ok(c) = std::fs::canonicalize(base) {
            let rest = path.strip_prefix(base).unwrap_or(Path::new(""));
            return c.join(rest);
        }
    }
    path
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// `s` within the caps: selected keys non-empty, each once, at most
/// [`MAX_SELECTED`] of them; every string at most [`MAX_TEXT_BYTES`] (a longer
/// one dropped, not cut: a cut key would name another run or key).
fn bounded(mut s: WorkspaceSaved) -> WorkspaceSaved {
    let fits = |t: &String| !t.is_empty() && t.len() <= MAX_TEXT_BYTES;
    let mut seen = std::collections::HashSet::new();
    s.selected.retain(|k| fits(k) && seen.insert(k.clone()));
    s.selected.truncate(MAX_SELECTED);
    s.pinned = s.pinned.filter(fits);
    s.group_by = s.group_by.filter(fits);
    s.summary_column = s.summary_column.filter(fits);
    if s.filter.len() > MAX_TEXT_BYTES {
        s.filter.clear();
    }
    s
}
