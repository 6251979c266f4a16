//! Saving the settings: at the next tick after a change, a `Cmd::SaveSettings`
//! carrying this instance's changes since the file was last known written
//! (merged into the file as it is then: `merge.rs`); the runtime's answer moves
//! that mark on, or says once in the status bar that the save failed.
//!
//! The saver sees the settings as they are now (`now`, a snapshot of the saved
//! parts of the state, built only when it needs one) and `host` (the live
//! monitor saves `[live]`).

use std::path::PathBuf;

use super::{clean, Config, Persist, Settings, MOVED};
use crate::ui::{Asks, Cmd, Effect};

impl Persist {
    /// Save to `path` (None, or a file saying `save = false`: never) the
    /// settings loaded from `file`, for the viewer of the wandb directory `dir`
    /// (see [`crate::ui::App::use_config_in`]): the saver, and the settings of
    /// this mode to start from. Those of a file written before settings were per
    /// directory are moved into `dir` when it has none of its own, said in the
    /// status bar, and written back at the next tick.
    pub(crate) fn load(
        path: Option<PathBuf>,
        mut file: Config,
        dir: Option<PathBuf>,
        host: bool,
    ) -> (Self, Settings) {
        // A relative name would not load back (nor name the same directory).
        let dir = dir.filter(|d| !host && d.is_absolute());
        let loaded = file.to_toml();
        let moved = dir.as_deref().is_some_and(|d| file.move_into(d));
        let section = match &dir {
            _ if host => file.live.clone(),
            Some(d) => file.viewer_in(d),
            None => file.viewer.clone(),
        };
        let path = path.filter(|_| file.save);
        let io = Persist {
            path,
            base: file,
            pending: moved,
            dir,
            note: moved.then(|| MOVED.to_owned()),
            writer: crate::ui::cmd::writer_id(),
            // Moved: the file as loaded is what is on disk, so the new layout is due.
            on_disk: if moved { loaded } else { String::new() },
            ..Persist::default()
        };
        (io, section)
    }

    /// The loaded settings were applied, giving `now`: unless they were moved
    /// (then the file as loaded is on disk), that is what the file holds.
    pub(crate) fn applied(&mut self, now: Settings, host: bool) {
        if !self.pending {
            self.on_disk = self.config(now, host).to_toml();
        }
        self.sent.clone_from(&self.on_disk);
    }

    /// The whole file as it would be written with `now`: this mode's settings
    /// (the viewer's per-directory ones in its directory's table), the rest as
    /// loaded.
    pub(crate) fn config(&self, now: Settings, host: bool) -> Config {
        let mut f = self.base.clone();
        match &self.dir {
            _ if host => f.live = now,
            Some(dir) => f.set_viewer_in(dir, now),
            None => f.viewer = now,
        }
        f
    }

    /// What the status bar says of the settings (once, until the next key).
    pub(crate) fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Say `note` there the same way (the workspace's own state file's trouble).
    pub(crate) fn tell(&mut self, note: &str) {
        self.note = Some(clean(note, 200));
    }

    /// There is no settings file to save to (no `$XDG_CONFIG_HOME` or `$HOME`):
    /// a change is asked to be saved all the same, and the answer says why it
    /// was not (in the status bar once, and on quit), rather than dropped unsaid.
    pub(crate) fn without_a_file(&mut self) {
        self.homeless = self.path.is_none() && self.base.save;
    }

    /// After the user's input: whether a setting changed since the last save. A
    /// key (not the mouse passing by) ends the note: whether it was shown.
    pub(crate) fn noted(&mut self, key: bool, host: bool, now: impl FnOnce() -> Settings) -> bool {
        if (self.path.is_some() || self.homeless) && !self.pending {
            self.pending = self.config(now(), host).to_toml() != self.sent;
        }
        key && self.note.take().is_some()
    }

    /// At a tick: ask for a changed setting to be saved.
    pub(crate) fn save_due(&mut self, host: bool, now: impl FnOnce() -> Settings, asks: &mut Asks) {
        if !std::mem::take(&mut self.pending) {
            return;
        }
        if let Some(cmd) = self.unsaved(now(), host) {
            if let Cmd::SaveSettings {
                text, generation, ..
            } = &cmd
            {
                self.sent.clone_from(text);
                self.generation = *generation;
            }
            asks.cmd(cmd);
        }
    }

    /// The save to carry out (a `Cmd::SaveSettings`: this instance's changes since
    /// the file was last known written, numbered after the last save) if the
    /// settings changed since then: the runtime writes it on quit.
    pub(crate) fn unsaved(&self, now: Settings, host: bool) -> Option<Cmd> {
        let path = match &self.path {
            Some(p) => Some(p.clone()),
            None if self.homeless => None,
            None => return None,
        };
        let text = self.config(now, host).to_toml();
        (text != self.on_disk || self.sent != self.on_disk).then(|| Cmd::SaveSettings {
            path,
            base: self.on_disk.clone(),
            text,
            writer: self.writer,
            generation: self.generation + 1,
        })
    }

    /// A save was carried out (`error`: it failed). The newest one written is
    /// what the next changes are from; the first of a run of failures is said in
    /// the status bar (the next save tries again, and the one on quit).
    pub(crate) fn on_written(&mut self, generation: u64, error: Option<&str>) -> Effect {
        match error {
            None => {
                if generation == self.generation {
                    self.on_disk.clone_from(&self.sent);
                }
                self.failing = false;
                Effect::NONE
            }
            Some(_) if self.failing => Effect::NONE,
            Some(e) => {
                self.failing = true;
                // Asked again at the next change: what failed is still unsaved.
                self.sent.clone_from(&self.on_disk);
                self.note = Some(format!("settings not saved: {}", clean(e, 160)));
                Effect::REDRAW
            }
        }
    }
}
