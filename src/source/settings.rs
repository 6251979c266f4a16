//! The settings file's bytes: read once at startup (before the terminal changes),
//! written by the runtime when a setting changes and on quit. What the text means
//! is `app::settings`'s business.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::index::cache::write_atomic;

/// `$XDG_CONFIG_HOME/leet/config.toml`, else `$HOME/.config/leet/config.toml`.
#[must_use]
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("leet/config.toml"))
}

pub use super::small_file::ReadError;

/// The text of the settings file: a regular file of at most `cap` bytes, UTF-8.
/// None when `path` does not exist and `optional`.
///
/// # Errors
/// [`ReadError`]: the cause, without the file's name.
pub fn read(path: &Path, cap: u64, optional: bool) -> Result<Option<String>, ReadError> {
    super::small_file::read_text(path, cap, optional, "the settings")
}

/// The number of the newest save written by this process.
static WRITTEN: Mutex<u64> = Mutex::new(0);

/// Write `text` to `path` atomically (its directory created as needed), unless a
/// newer save (a higher `generation`) was written already: the worker's queued
/// save and the one on quit never put older settings over newer ones.
///
/// # Errors
/// I/O errors creating the directory, writing or renaming.
pub fn save(path: &Path, text: &str, generation: u64) -> io::Result<()> {
    let mut last = WRITTEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if generation <= *last {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic(path, text.as_bytes())?;
    *last = generation;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_optional_file_is_none_and_others_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config.toml");
        assert_eq!(read(&p, 100, true), Ok(None));
        assert!(matches!(read(&p, 100, false), Err(ReadError::Io(_))));
        assert!(matches!(
            read(dir.path(), 100, true),
            Err(ReadError::Refused(r)) if r.contains("a directory")
        ));
        std::fs::write(&p, "x".repeat(101)).expect("write");
        assert!(matches!(
            read(&p, 100, true),
            Err(ReadError::Refused(r)) if r.contains("101 bytes")
        ));
        std::fs::write(&p, b"a\xffb").expect("write");
        assert!(matches!(
            read(&p, 100, true),
            Err(ReadError::Refused(r)) if r.contains("offset 1")
        ));
        std::fs::write(&p, "rows = 2\n").expect("write");
        assert_eq!(read(&p, 100, true), Ok(Some("rows = 2\n".into())));
    }

    #[test]
    fn an_older_save_never_replaces_a_newer_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/dir/config.toml");
        // Other tests of this process save too: start above what they use.
        let base = 1 << 40;
        save(&p, "new", base + 2).expect("save");
        save(&p, "old", base + 1).expect("save");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "new");
        save(&p, "newer", base + 3).expect("save");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "newer");
    }
}
