//! The media viewer (`3`): images logged with `wandb.Image`, one at a time, from
//! the run's `files/` directory. Selecting one asks the runtime to read and decode
//! it (`Cmd::LoadImage`, never per frame); the image comes back as a message.

pub(crate) mod view;

use std::path::{Path, PathBuf};

pub use crate::msg::Image;
use crate::ui::action::Action;
use crate::ui::{App, Cmd, Effect, Overlay};

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
}

impl App {
    /// Media keys of the run, in order.
    #[must_use]
    pub fn media_keys(&self) -> Vec<&str> {
        self.shown.run.media.keys().map(String::as_str).collect()
    }

    /// The selected media key's name and image record.
    #[must_use]
    pub fn media_selected(&self) -> Option<(&str, &crate::store::run::MediaItem, usize)> {
        let (key, items) = self.shown.run.media.iter().nth(self.panes.media.key)?;
        let item = items.get(self.panes.media.item)?;
        Some((key.as_str(), item, items.len()))
    }

    /// Ask for the selected image if it is not the one loaded.
    pub(in crate::ui) fn load_media(&mut self) {
        let Some(run_dir) = self.shown.source.file.as_deref().and_then(Path::parent) else {
            return;
        };
        let Some((_, item, _)) = self.media_selected() else {
            self.panes.media.loaded = None;
            self.panes.media.loading = false;
            self.panes.media.image = None;
            self.panes.media.error = None;
            return;
        };
        // Paths come from the file: stay inside the run's files/ directory.
        let rel = Path::new(&item.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            self.panes.media.loaded = None;
            self.panes.media.loading = false;
            self.panes.media.image = None;
            self.panes.media.error = Some("path leaves the run directory".into());
            return;
        }
        let path = run_dir.join("files").join(rel);
        if self.panes.media.loaded.as_deref() == Some(path.as_path()) {
            return;
        }
        self.panes.media.image = None;
        self.panes.media.error = None;
        self.panes.media.loading = true;
        self.panes.media.loaded = Some(path.clone());
        self.asks.cmd(Cmd::LoadImage { path });
    }

    /// An image was read: shown if it is still the one selected.
    pub(in crate::ui) fn on_image(&mut self, path: &Path, image: Result<Image, String>) -> Effect {
        if self.panes.media.loaded.as_deref() != Some(path) {
            return Effect::NONE;
        }
        self.panes.media.loading = false;
        match image {
            Ok(img) => self.panes.media.image = Some(img),
            Err(e) => self.panes.media.error = Some(crate::text::sanitize(&e)),
        }
        Effect::REDRAW
    }

    /// Select the newest image of the media key chosen (the first, at first).
    fn select_newest(&mut self) {
        self.panes.media.key = self
            .panes
            .media
            .key
            .min(self.shown.run.media.len().saturating_sub(1));
        self.panes.media.item = self
            .shown
            .run
            .media
            .values()
            .nth(self.panes.media.key)
            .map_or(0, |v| v.len().saturating_sub(1));
        self.load_media();
    }

    /// `3`: the media pane beside the charts, shown on the newest image, or hidden.
    /// A screen without room for it shows the image full screen instead.
    pub(in crate::ui) fn toggle_media(&mut self) {
        if self.screen.areas.media.is_some() {
            self.panels.media = false;
            self.relayout();
            return;
        }
        self.panels.media = true;
        self.relayout();
        self.select_newest();
        if self.screen.areas.media.is_some() {
            self.panels.focus = crate::ui::panels::Pane::Media;
        } else {
            self.panels.media = false;
            self.relayout();
            self.overlay = Overlay::Media;
        }
    }

    /// `enter` on the media pane: the image full screen (esc comes back).
    pub(in crate::ui) fn media_fullscreen(&mut self) {
        self.overlay = Overlay::Media;
        self.load_media();
    }

    /// Records came: a media pane with nothing selected yet shows the newest image.
    pub(in crate::ui) fn media_follow(&mut self) {
        let shown = self.screen.areas.media.is_some() || matches!(self.overlay, Overlay::Media);
        if shown
            && self.panes.media.loaded.is_none()
            && !self.panes.media.loading
            && !self.shown.run.media.is_empty()
        {
            self.select_newest();
        }
    }

    /// Keys while the full-screen media viewer is open.
    pub(in crate::ui) fn act_media(&mut self, a: Action) -> Effect {
        match a {
            Action::Quit => Effect::QUIT,
            Action::Back | Action::ToggleMedia => {
                self.overlay = Overlay::None;
                Effect::REDRAW
            }
            a if self.step_media(a) => Effect::REDRAW,
            _ => Effect::NONE,
        }
    }

    /// Move through the images (←/→, pages, home/end) and media keys (↑/↓), in the
    /// viewer or the focused media pane; false for any other action.
    pub(in crate::ui) fn step_media(&mut self, a: Action) -> bool {
        let keys = self.shown.run.media.len();
        let items = self
            .shown
            .run
            .media
            .values()
            .nth(self.panes.media.key)
            .map_or(0, std::collections::VecDeque::len);
        let last = |n: usize| n.saturating_sub(1);
        match a {
            Action::FocusLeft | Action::PrevPage => {
                self.panes.media.item = self.panes.media.item.saturating_sub(1);
            }
            Action::FocusRight | Action::NextPage => {
                self.panes.media.item = (self.panes.media.item + 1).min(last(items));
            }
            Action::FirstPage => self.panes.media.item = 0,
            Action::LastPage => self.panes.media.item = last(items),
            Action::FocusUp | Action::FocusDown => {
                self.panes.media.key = if a == Action::FocusUp {
                    self.panes.media.key.saturating_sub(1)
                } else {
                    (self.panes.media.key + 1).min(last(keys))
                };
                self.panes.media.item = self
                    .shown
                    .run
                    .media
                    .values()
                    .nth(self.panes.media.key)
                    .map_or(0, |v| last(v.len()));
            }
            _ => return false,
        }
        self.load_media();
        true
    }
}
