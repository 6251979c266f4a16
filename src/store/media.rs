//! The images a run logged (`wandb.Image`), listed per media key.

use std::collections::VecDeque;

/// Images kept per media key (the newest; the older ones are counted, and the
/// media pane says how many it no longer has).
pub const MEDIA_PER_KEY: usize = 10_000;

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

/// The fields of a media object a row's images are read from.
pub(crate) const MEDIA_FIELDS: [&str; 5] = ["_type", "path", "caption", "filenames", "captions"];

/// Cap on the images of one list read from a row (a list is one key per image).
pub(crate) const MAX_LIST_IMAGES: usize = 256;

/// The strings of a JSON array (`["a", 1]` → `[Some(a), None]`), at most
/// [`MAX_LIST_IMAGES`]; anything else is no strings.
pub(crate) fn json_strings(raw: &str) -> Vec<Option<String>> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(raw) else {
        return Vec::new();
    };
    items
        .into_iter()
        .take(MAX_LIST_IMAGES)
        .map(|v| match v {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The newest images of one key.
pub type MediaList = VecDeque<MediaItem>;
