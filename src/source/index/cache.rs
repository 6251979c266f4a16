//! The index cache: one JSON file per wandb directory under the cache directory,
//! named by a hash of the directory's canonical path, holding every run's entry
//! with its file's path, size and mtime. Never trusted: a file over
//! [`MAX_CACHE_BYTES`], of another version, for another directory, or that does
//! not parse is ignored (and rewritten by the scan); an entry is used only for its
//! own run directory of this wandb directory, for a `.wandb` file in it, while
//! the file's size and mtime still match (and the directory's mtime, or else the
//! directory is listed again to find its file).
//! Written atomically (a temporary file in the same directory, then a rename).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::msg::RunIndexEntry;

/// Version of the cache format; a file of any other is rebuilt (2: entries hold
/// the run's host, git commit and environment; 3: its node labels and the
/// summary's `_wandb` key, which an older file lacks without saying so; 5: a
/// change at a path under a summary value set whole replaces that value, as W&B
/// does, where an older file's summaries merged the two).
pub const VERSION: u32 = 5;

/// Largest cache file read (a hostile or runaway file is not loaded).
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

#[derive(serde::Serialize)]
struct Out<'a> {
    version: u32,
    wandb_dir: &'a Path,
    runs: &'a [RunIndexEntry],
}

#[derive(serde::Deserialize)]
struct In {
    version: u32,
    wandb_dir: PathBuf,
    runs: Vec<RunIndexEntry>,
}

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no cache yet")]
    Missing,
    #[error("cache unreadable: {0}")]
    Io(io::Error),
    #[error("cache too large ({0} bytes, limit {MAX_CACHE_BYTES})")]
    TooLarge(u64),
    #[error("cache does not parse: {0}")]
    Parse(serde_json::Error),
    #[error("cache version {0}, expected {VERSION}")]
    Version(u32),
    #[error("cache is for another directory")]
    OtherDir,
}

/// The cache file for the wandb directory `canonical` (its canonical path).
#[must_use]
pub fn file_for(cache_dir: &Path, canonical: &Path) -> PathBuf {
    cache_dir.join(format!(
        "index-{:016x}.json",
        fnv1a(canonical.as_os_str().as_encoded_bytes())
    ))
}

/// FNV-1a, 64 bits: stable across builds and platforms (std's hasher is not).
/// Also names the workspace state files (`source::state`).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The cached entries of `canonical`, by run directory.
///
/// # Errors
/// Why the file was not used (see [`LoadError`]).
pub fn load(file: &Path, canonical: &Path) -> Result<HashMap<PathBuf, RunIndexEntry>, LoadError> {
    let f = match crate::source::small_file::open_regular(file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(LoadError::Missing),
        Err(e) => return Err(LoadError::Io(e)),
    };
    let mut data = Vec::new();
    f.take(MAX_CACHE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(LoadError::Io)?;
    if data.len() as u64 > MAX_CACHE_BYTES {
        return Err(LoadError::TooLarge(data.len() as u64));
    }
    let c: In = match serde_json::from_slice(&data) {
        Ok(c) => c,
        Err(e) => {
            // Another layout says its version rather than failing to parse.
            #[derive(serde::Deserialize)]
            struct Head {
                version: u32,
            }
            return Err(match serde_json::from_slice::<Head>(&data) {
                Ok(h) if h.version != VERSION => LoadError::Version(h.version),
                _ => LoadError::Parse(e),
            });
        }
    };
    if c.version != VERSION {
        return Err(LoadError::Version(c.version));
    }
    if c.wandb_dir != canonical {
        return Err(LoadError::OtherDir);
    }
    Ok(c.runs
        .into_iter()
        .filter(|e| e.dir.parent() == Some(canonical))
        .filter_map(|e| {
            let f = e.file.clone()?;
            (f.parent() == Some(e.dir.as_path()) && f.extension().is_some_and(|x| x == "wandb"))
                .then(|| (e.dir.clone(), e))
        })
        .collect())
}

/// Write the entries that have a file (the rest cost nothing to find again).
///
/// # Errors
/// I/O errors creating the directory, writing or renaming.
pub fn store(file: &Path, canonical: &Path, entries: &[RunIndexEntry]) -> io::Result<()> {
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let runs: Vec<RunIndexEntry> = entries
        .iter()
        .filter(|e| e.file.is_some() && e.error.is_none())
        .cloned()
        .collect();
    let data = serde_json::to_vec(&Out {
        version: VERSION,
        wandb_dir: canonical,
        runs: &runs,
    })
    .map_err(io::Error::other)?;
    write_atomic(file, &data)
}

/// Write `data` to `file` atomically: a temporary file beside it (a name unique
/// per process and call, so two writers never share one), given the old file's
/// permissions, synced, then renamed over `file`; the temporary file is removed on
/// failure. Also writes the workspace state and settings files.
///
/// # Errors
/// I/O errors writing or renaming.
pub(crate) fn write_atomic(file: &Path, data: &[u8]) -> io::Result<()> {
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{seq}.tmp", std::process::id()));
    // The file's permissions stay (a 0600 settings or state file stays 0600).
    let old = std::fs::metadata(file).ok().map(|m| m.permissions());
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        if let Some(mode) = old {
            f.set_permissions(mode)?;
        }
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    };
    let r = write();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
