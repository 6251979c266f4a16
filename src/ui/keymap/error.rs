//! Why a key map was refused, in words that name the file and the key.

use std::path::{Path, PathBuf};

fn shown(p: &Path) -> String {
    crate::text::sanitize_path(p)
}

/// Every mode a key map may have a table for: `normal, filter, … or cluster`.
fn modes() -> String {
    let names: Vec<&str> = super::Mode::ALL.iter().map(|m| m.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Quoted text from the file, sanitized and cut to a readable length (a key can
/// be a megabyte long).
pub(super) fn clean(s: &str) -> String {
    clean_to(s, 80)
}

/// A reason, which may quote the file: sanitized, and cut longer than [`clean`].
pub(super) fn clean_reason(s: &str) -> String {
    clean_to(s, 240)
}

/// Control characters written out (`\u{001b}`) rather than stripped: a key that
/// is an escape sequence would otherwise be quoted as `''`.
fn clean_to(s: &str, max_chars: usize) -> String {
    let s = crate::text::sanitize(&crate::text::escape_controls(s));
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Why a key map was refused. Every message is sanitized: file names, keys and
/// TOML errors quote the file's text, which can hold escape sequences.
#[derive(Debug, thiserror::Error)]
pub enum KeymapError {
    #[error("{}: cannot read: {}", shown(.file), clean_reason(.reason))]
    Io { file: PathBuf, reason: String },
    /// Not a regular file, or too big: refused before reading.
    #[error("{}: {}", shown(.file), clean_reason(.reason))]
    Refused { file: PathBuf, reason: String },
    #[error("{}{}: not valid TOML: {}", shown(.file), crate::text::place(*.at), clean_reason(.reason))]
    Syntax {
        file: PathBuf,
        /// Line and column (from 1) of the error.
        at: Option<(usize, usize)>,
        reason: String,
    },
    #[error("{}{}: unknown mode '[{}]' (expected {})", shown(.file), crate::text::place(*.at), clean(.mode), modes())]
    UnknownMode {
        file: PathBuf,
        /// Line and column (from 1) of the mode's table.
        at: Option<(usize, usize)>,
        mode: String,
    },
    #[error("{}{}: [{}] key '{}': {}", shown(.file), crate::text::place(*.at), clean(.mode), clean(.key), clean_reason(.reason))]
    Binding {
        file: PathBuf,
        /// Line and column (from 1) of the key.
        at: Option<(usize, usize)>,
        mode: String,
        key: String,
        reason: String,
    },
}

impl KeymapError {
    /// The error with the line and column of its mode or key in `text` (the file
    /// it was read from), where they are found there.
    #[must_use]
    pub(super) fn located(mut self, text: &str) -> Self {
        let (table, key, at) = match &mut self {
            KeymapError::UnknownMode { mode, at, .. } => ("top level", mode.as_str(), at),
            KeymapError::Binding { mode, key, at, .. } => (mode.as_str(), key.as_str(), at),
            _ => return self,
        };
        let found = crate::ui::settings::key_offset(text, table, key)
            .or_else(|| crate::ui::settings::key_offset(text, "top level", table))
            .map(|o| crate::text::line_col(text, o));
        *at = found;
        self
    }
}
