//! Reading the user's key map file, once at startup (before the loop; never from
//! `App::update`): a regular file of bounded size, UTF-8.

use std::path::{Path, PathBuf};

use super::{Keymap, KeymapError};

/// Largest key-map file read (the shipped one is about 4 KiB).
pub const MAX_KEYMAP_BYTES: u64 = 1 << 20;

/// The text of a configuration file: a regular file (a FIFO, device or directory
/// is refused, and opening one cannot block) of at most `cap` bytes, UTF-8.
///
/// # Errors
/// [`KeymapError::Io`] when it cannot be opened or read, [`KeymapError::Refused`]
/// when it is not a regular file or is too big.
pub fn read_config(path: &Path, cap: u64) -> Result<String, KeymapError> {
    use crate::source::small_file::{read_text, ReadError};
    match read_text(path, cap, false, "a key map") {
        Ok(Some(text)) => Ok(text),
        // Not optional: a missing file is an I/O error, never `None`.
        Ok(None) => Err(KeymapError::Io {
            file: path.to_owned(),
            reason: "not found".into(),
        }),
        Err(ReadError::Io(reason)) => Err(KeymapError::Io {
            file: path.to_owned(),
            reason,
        }),
        Err(ReadError::Refused(reason)) => Err(KeymapError::Refused {
            file: path.to_owned(),
            reason,
        }),
    }
}

impl Keymap {
    /// The defaults with the user's file laid over: `explicit` (from `--keymap`,
    /// must exist), else `$XDG_CONFIG_HOME/leet/keymap.toml` (or
    /// `~/.config/leet/keymap.toml`) when present.
    ///
    /// # Errors
    /// As [`Keymap::overlay`] and [`read_config`] (at most [`MAX_KEYMAP_BYTES`]).
    pub fn load(
        explicit: Option<&Path>,
        config_home: Option<PathBuf>,
    ) -> Result<Self, KeymapError> {
        let mut k = Self::builtin();
        // The default file is optional; anything else there (a FIFO, a directory,
        // a file we may not read) is reported, not silently ignored.
        let path = match explicit {
            Some(p) => Some(p.to_owned()),
            None => config_home
                .map(|d| d.join("leet/keymap.toml"))
                .filter(|p| std::fs::symlink_metadata(p).is_ok()),
        };
        if let Some(p) = path {
            let text = read_config(&p, MAX_KEYMAP_BYTES)?;
            k.overlay(&p, &text)?;
        }
        Ok(k)
    }
}

/// `$XDG_CONFIG_HOME` when absolute, else `$HOME/.config`: the one the
/// settings file is found under (`source::settings::config_dir`).
#[must_use]
pub fn config_home() -> Option<PathBuf> {
    crate::source::settings::config_dir().and_then(|d| d.parent().map(Path::to_path_buf))
}
