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

/// What the media pane and viewer see and may ask for: the run shown and its file
/// (the images are under its directory), and the runtime.
pub(crate) struct MediaCx<'a> {
    pub shown: &'a Shown,
    pub asks: &'a mut Asks,
}

impl<'a> MediaCx<'a> {
    pub fn new(shown: &'a Shown, asks: &'a mut Asks) -> Self {
        Self { shown, asks }
    }
}

impl MediaState {
    /// Media keys of `run`, in order.
    #[must_use]
    pub fn keys(run: &Run) -> Vec<&str> {
        lists(run).into_iter().map(|(k, _)| k).collect()
    }

    /// The selected media key's name and image record, and the key's number of
    /// images.
    #[must_use]
    pub fn selected<'a>(&self, run: &'a Run) -> Option<(&'a str, &'a MediaItem, usize)> {
        let (key, items) = lists(run).get(self.key).copied()?;
        let item = items.get(self.item)?;
        Some((key, item, items.len()))
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
        let shown = cx.shown;
        let Some(run_dir) = shown.source.file.as_deref().and_then(Path::parent) else {
            return;
        };
        let Some((_, item, _)) = self.selected(&shown.run) else {
            self.unload(None);
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
        let lists = lists(&cx.shown.run);
        self.key = self.key.min(lists.len().saturating_sub(1));
        self.item = lists
            .get(self.key)
            .map_or(0, |(_, v)| v.len().saturating_sub(1));
        self.tail = true;
        self.load(cx);
    }

    /// Records came: a media pane or viewer `shown` with nothing selected yet
    /// shows the newest image; one on its key's newest image moves on to a newer.
    pub(crate) fn follow(&mut self, shown: bool, cx: &mut MediaCx<'_>) {
        if !shown {
            return;
        }
        if self.loaded.is_none() && !self.loading && !cx.shown.run.media.is_empty() {
            self.select_newest(cx);
            return;
        }
        let newest = lists(&cx.shown.run)
            .get(self.key)
            .map(|(_, v)| v.len().saturating_sub(1));
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
        let lists = lists(&cx.shown.run);
        let keys = lists.len();
        let items = lists.get(self.key).map_or(0, |(_, v)| v.len());
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
                self.item = lists.get(self.key).map_or(0, |(_, v)| last(v.len()));
            }
            _ => return false,
        }
        let items = lists.get(self.key).map_or(0, |(_, v)| v.len());
        self.tail = self.item + 1 >= items;
        self.load(cx);
        true
    }
}

/// The run's media keys and their images, in the order shown: keys sorted
/// naturally, so a list's `samples[2]` comes before its `samples[10]`.
fn lists(run: &Run) -> Vec<(&str, &MediaList)> {
    let mut v: Vec<(&str, &MediaList)> = run.media.iter().map(|(k, l)| (k.as_str(), l)).collect();
    v.sort_by(|a, b| crate::text::natural_cmp(a.0, b.0));
    v
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
