//! The images a run logged (`wandb.Image`), listed per media key.

use std::collections::VecDeque;

/// Images kept per media key (the newest).
pub const MEDIA_PER_KEY: usize = 1024;

/// One logged image: where it sits in the run directory's `files/`.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaItem {
    /// The row's step (x of the metric charts).
    pub step: f64,
    /// Path relative to the run's `files/` directory.
    pub path: String,
    pub caption: String,
}

/// The text of a JSON string value (`"\"a\""` → `a`), else the text itself.
pub(crate) fn json_text(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_owned())
}

/// The newest images of one key.
pub type MediaList = VecDeque<MediaItem>;
