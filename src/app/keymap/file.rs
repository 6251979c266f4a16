//! Reading the user's key map file, once at startup (before the loop; never from
//! `App::update`): a regular file of bounded size, UTF-8.

use std::path::{Path, PathBuf};

use super::{Keymap, KeymapError};

/// Largest key-map file read (the shipped one is about 4 KiB).
pub const MAX_KEYMAP_BYTES: u64 = 1 << 20;

/// What kind of file `m` describes, for "not a regular file" messages.
fn file_kind(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The text of a configuration file: a regular file (a FIFO, device or directory
/// is refused, and opening one cannot block) of at most `cap` bytes, UTF-8.
///
/// # Errors
/// [`KeymapError::Io`] when it cannot be opened or read, [`KeymapError::Refused`]
/// when it is not a regular file or is too big.
pub fn read_config(path: &Path, cap: u64) -> Result<String, KeymapError> {
    use std::io::Read as _;
    let io_err = |e: std::io::Error| KeymapError::Io {
        file: path.to_owned(),
        reason: e.to_string(),
    };
    let refused = |reason: String| KeymapError::Refused {
        file: path.to_owned(),
        reason,
    };
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    // Opening a FIFO for reading blocks until a writer comes, unless non-blocking.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let file = opts.open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(refused(format!(
            "{}, not a regular file; a key map must be a regular file",
            file_kind(&meta)
        )));
    }
    let limit = if cap >= 1 << 20 && cap % (1 << 20) == 0 {
        format!("{} MiB", cap >> 20)
    } else {
        format!("{cap} bytes")
    };
    let too_big = |len: &str| refused(format!("{len} bytes, over the {limit} limit for a key map"));
    if meta.len() > cap {
        return Err(too_big(&meta.len().to_string()));
    }
    // The file may grow while it is read: never more than the cap.
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut data).map_err(io_err)?;
    if data.len() as u64 > cap {
        return Err(too_big(&format!("more than {cap}")));
    }
    String::from_utf8(data).map_err(|e| {
        refused(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
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

/// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
#[must_use]
pub fn config_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}
