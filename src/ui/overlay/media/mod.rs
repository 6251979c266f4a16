//! The media viewer (`3`): images logged with `wandb.Image`, one at a time, from
//! the run's `files/` directory. Selecting one asks the runtime to read and decode
//! it (`Cmd::LoadImage`, never per frame); the image comes back as a message.

pub(crate) mod view;

use std::path::{Path, PathBuf};

pub use crate::msg::Image;
use crate::store::run::{MediaItem, MediaList};
use crate::store::Run;
use crate::ui::action::Action;
use crate::ui::overlay::Outcome;
use crate::ui::{Asks, Cmd, Effect, Shown};

/// Its keys' lines in the help.
pub(crate) const HELP: &[(&[Action], &str)] = &[
    (&[Action::FocusLeft], "Previous image (earlier step)"),
    (&[Action::FocusRight], "Next image (later step)"),
    (&[Action::FocusUp], "Previous media key"),
    (&[Action::FocusDown], "Next media key"),
    (&[Action::FirstPage], "First image"),
    (&[Action::LastPage], "Last image"),
    (&[Action::Back, Action::ToggleMedia], "Close the viewer"),
];

/// Which image is selected, and what loading it gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MediaState {
    /// Index into the run's media keys.
    pub key: usize,
    /// Index into that key's images.
    pub item: usize,
    /// The file the image (or error) below is of.
    pub loaded: Option<PathBuf>,
    /// That file is being read.
    pub loading: bool,
    pub image: Option<Image>,
    pub error: Option<String>,
    /// On its key's newest image, following it: a newer one that comes (a live
    /// run) is shown in its place; one stepped back from stays put.
    pub tail: bool,
}

/// What the media pane and viewer see and may ask for: the images of the run
/// shown (its segments' too where it is a resumed run drawn whole), and the
/// runtime.
pub(crate) struct MediaCx<'a> {
    pub sources: MediaSources<'a>,
    pub asks: &'a mut Asks,
}

impl<'a> MediaCx<'a> {
    pub fn new(sources: MediaSources<'a>, asks: &'a mut Asks) -> Self {
        Self { sources, asks }
    }
}

/// The runs whose images the media pane lists: the run shown and, where it is a
/// resumed run drawn whole, its earlier segments, oldest first, each with its run
/// directory (an image's path is relative to its own segment's) and each
/// segment's images only up to where the next one takes over (its stitch cut, as
/// its charts).
#[derive(Debug, Clone, Default)]
pub struct MediaSources<'a> {
    /// Oldest first, the run shown last.
    parts: Vec<(&'a Run, Option<&'a Path>)>,
}

impl<'a> From<&'a Run> for MediaSources<'a> {
    /// One run alone, its directory not known (keys and titles only).
    fn from(run: &'a Run) -> Self {
        Self {
            parts: vec![(run, None)],
        }
    }
}

impl<'a> MediaSources<'a> {
    /// The run shown (its file's directory) after `earlier` (segments, any order:
    /// taken by their run directories' names, which begin with their start time).
    #[must_use]
    pub fn new(shown: &'a Shown, earlier: impl IntoIterator<Item = (&'a Run, &'a Path)>) -> Self {
        let mut parts: Vec<(&Run, Option<&Path>)> =
            earlier.into_iter().map(|(r, d)| (r, Some(d))).collect();
        parts.sort_by_key(|(_, d)| d.and_then(Path::file_name));
        parts.push((
            &shown.run,
            shown.source.file.as_deref().and_then(Path::parent),
        ));
        Self { parts }
    }

    /// Whether no run listed has an image.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|(r, _)| r.media.is_empty())
    }

    /// Images of `key` no longer kept, every segment's.
    #[must_use]
    pub fn dropped(&self, key: &str) -> u64 {
        (self.parts.iter())
            .filter_map(|(r, _)| r.media_dropped.get(key))
            .sum()
    }

    /// The media keys and their images, in the order shown: keys sorted
    /// naturally, so a list's `samples[2]` comes before its `samples[10]`.
    fn lists(&self) -> Vec<KeyImages<'a>> {
        let mut by_key: std::collections::BTreeMap<&'a str, KeyImages<'a>> =
            std::collections::BTreeMap::new();
        for &(run, dir) in &self.parts {
            let cut = run.stitch.cut;
            for (k, list) in &run.media {
                let n = cut.map_or(list.len(), |c| list.partition_point(|i| i.step < c));
                let e = by_key.entry(k.as_str()).or_insert_with(|| KeyImages {
                    key: k.as_str(),
                    parts: Vec::new(),
                });
                if n > 0 {
                    e.parts.push((dir, list, n));
                }
            }
        }
        let mut v: Vec<KeyImages<'a>> = by_key.into_values().filter(|k| k.len() > 0).collect();
        v.sort_by(|a, b| crate::text::natural_cmp(a.key, b.key));
        v
    }
}

/// One media key's images across the runs listed.
struct KeyImages<'a> {
    key: &'a str,
    /// Each run's directory, its list and how many of it are shown (its first).
    parts: Vec<(Option<&'a Path>, &'a MediaList, usize)>,
}

impl<'a> KeyImages<'a> {
    fn len(&self) -> usize {
        self.parts.iter().map(|p| p.2).sum()
    }

    /// The `i`th image and the run directory it is under.
    fn get(&self, mut i: usize) -> Option<(Option<&'a Path>, &'a MediaItem)> {
        for &(dir, list, n) in &self.parts {
            if i < n {
                return Some((dir, list.get(i)?));
            }
            i -= n;
        }
        None
    }
}

impl MediaState {
    /// Media keys, in order.
    #[must_use]
    pub fn keys<'a>(sources: impl Into<MediaSources<'a>>) -> Vec<&'a str> {
        sources.into().lists().into_iter().map(|k| k.key).collect()
    }

    /// The selected media key's name and image record, and the key's number of
    /// images.
    #[must_use]
    pub fn selected<'a>(
        &self,
        sources: impl Into<MediaSources<'a>>,
    ) -> Option<(&'a str, &'a MediaItem, usize)> {
        self.selected_in(&sources.into())
            .map(|(k, _, i, n)| (k, i, n))
    }

    /// [`MediaState::selected`], with the run directory the image is under.
    fn selected_in<'a>(
        &self,
        sources: &MediaSources<'a>,
    ) -> Option<(&'a str, Option<&'a Path>, &'a MediaItem, usize)> {
        let lists = sources.lists();
        let k = lists.get(self.key)?;
        let (dir, item) = k.get(self.item)?;
        Some((k.key, dir, item, k.len()))
    }

    /// Nothing loaded, `error` said instead.
    fn unload(&mut self, error: Option<String>) {
        self.loaded = None;
        self.loading = false;
        self.image = None;
        self.error = error;
    }

    /// Ask for the selected image if it is not the one loaded.
    pub(crate) fn load(&mut self, cx: &mut MediaCx<'_>) {
        let Some((_, dir, item, _)) = self.selected_in(&cx.sources) else {
            self.unload(None);
            return;
        };
        let Some(run_dir) = dir else {
            return;
        };
        // Paths come from the file: stay inside the run's files/ directory.
        let rel = Path::new(&item.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            self.unload(Some("path leaves the run directory".into()));
            return;
        }
        let path = run_dir.join("files").join(rel);
        if self.loaded.as_deref() == Some(path.as_path()) {
            return;
        }
        self.image = None;
        self.error = None;
        self.loading = true;
        self.loaded = Some(path.clone());
        cx.asks.cmd(Cmd::LoadImage { path });
    }

    /// An image was read: shown if it is still the one selected.
    pub(crate) fn on_image(&mut self, path: &Path, image: Result<Image, String>) -> Effect {
        if self.loaded.as_deref() != Some(path) {
            return Effect::NONE;
        }
        self.loading = false;
        match image {
            Ok(img) => self.image = Some(img),
            Err(e) => self.error = Some(crate::text::sanitize(&e)),
        }
        Effect::REDRAW
    }

    /// Select the newest image of the media key chosen (the first, at first).
    pub(crate) fn select_newest(&mut self, cx: &mut MediaCx<'_>) {
        let lists = cx.sources.lists();
        self.key = self.key.min(lists.len().saturating_sub(1));
        self.item = lists.get(self.key).map_or(0, |v| v.len().saturating_sub(1));
        self.tail = true;
        self.load(cx);
    }

    /// Records came: a media pane or viewer `shown` with nothing selected yet
    /// shows the newest image; one on its key's newest image moves on to a newer.
    pub(crate) fn follow(&mut self, shown: bool, cx: &mut MediaCx<'_>) {
        if !shown {
            return;
        }
        if self.loaded.is_none() && !self.loading && !cx.sources.is_empty() {
            self.select_newest(cx);
            return;
        }
        let newest = (cx.sources.lists().get(self.key)).map(|v| v.len().saturating_sub(1));
        if let Some(last) = newest.filter(|&l| self.tail && self.item != l) {
            self.item = last;
            self.load(cx);
        }
    }

    /// Keys while the full-screen media viewer is open.
    pub(crate) fn act(&mut self, a: Action, cx: &mut MediaCx<'_>) -> Outcome {
        match a {
            Action::Quit => Outcome::Stay(Effect::QUIT),
            Action::Back | Action::ToggleMedia => Outcome::Close,
            a if self.step(a, cx) => Outcome::Stay(Effect::REDRAW),
            _ => Outcome::Stay(Effect::NONE),
        }
    }

    /// Move through the images (←/→, pages, home/end) and media keys (↑/↓), in the
    /// viewer or the focused media pane; false for any other action.
    pub(crate) fn step(&mut self, a: Action, cx: &mut MediaCx<'_>) -> bool {
        let lists = cx.sources.lists();
        let keys = lists.len();
        let items = lists.get(self.key).map_or(0, KeyImages::len);
        let last = |n: usize| n.saturating_sub(1);
        match a {
            Action::FocusLeft | Action::PrevPage => self.item = self.item.saturating_sub(1),
            Action::FocusRight | Action::NextPage => self.item = (self.item + 1).min(last(items)),
            Action::FirstPage => self.item = 0,
            Action::LastPage => self.item = last(items),
            Action::FocusUp | Action::FocusDown => {
                self.key = if a == Action::FocusUp {
                    self.key.saturating_sub(1)
                } else {
                    (self.key + 1).min(last(keys))
                };
                self.item = lists.get(self.key).map_or(0, |v| last(v.len()));
            }
            _ => return false,
        }
        let items = lists.get(self.key).map_or(0, KeyImages::len);
        self.tail = self.item + 1 >= items;
        self.load(cx);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_s_images_come_in_the_order_of_their_index() {
        let mut run = Run::new();
        for (i, key) in ["samples[10]", "samples[2]", "img", "samples[0]"]
            .into_iter()
            .enumerate()
        {
            let item = MediaItem {
                step: 0.0,
                path: format!("{i}.png"),
                caption: String::new(),
            };
            run.media.insert(key.into(), MediaList::from([item]));
        }
        assert_eq!(
            MediaState::keys(&run),
            ["img", "samples[0]", "samples[2]", "samples[10]"]
        );
        let state = MediaState {
            key: 2,
            ..MediaState::default()
        };
        let (key, item, n) = state.selected(&run).expect("selected");
        assert_eq!((key, item.path.as_str(), n), ("samples[2]", "1.png", 1));
    }
}
