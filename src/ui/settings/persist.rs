//! Saving the settings: at the next tick after a change, a `Cmd::SaveSettings`
//! carrying this instance's changes since the file was last known written
//! (merged into the file as it is then: `merge.rs`); the runtime's answer moves
//! that mark on, or says once in the status bar that the save failed.

use super::{clean, App, Cmd};

impl App {
    /// At a tick: ask for a changed setting to be saved.
    pub(crate) fn save_settings_due(&mut self) {
        if !std::mem::take(&mut self.settings_io.pending) {
            return;
        }
        if let Some(cmd) = self.unsaved_settings() {
            if let Cmd::SaveSettings {
                text, generation, ..
            } = &cmd
            {
                self.settings_io.sent.clone_from(text);
                self.settings_io.generation = *generation;
            }
            self.asks.cmd(cmd);
        }
    }

    /// The save to carry out (a `Cmd::SaveSettings`: this instance's changes since
    /// the file was last known written, numbered after the last save) if the
    /// settings changed since then: the runtime writes it on quit.
    #[must_use]
    pub fn unsaved_settings(&self) -> Option<Cmd> {
        let io = &self.settings_io;
        let path = io.path.clone()?;
        let text = self.settings_config().to_toml();
        (text != io.on_disk || io.sent != io.on_disk).then(|| Cmd::SaveSettings {
            path,
            base: io.on_disk.clone(),
            text,
            writer: io.writer,
            generation: io.generation + 1,
        })
    }

    /// A save was carried out (`error`: it failed). The newest one written is
    /// what the next changes are from; the first of a run of failures is said in
    /// the status bar (the next save tries again, and the one on quit).
    pub(crate) fn on_settings_written(
        &mut self,
        generation: u64,
        error: Option<&str>,
    ) -> crate::ui::Effect {
        let io = &mut self.settings_io;
        match error {
            None => {
                if generation == io.generation {
                    io.on_disk.clone_from(&io.sent);
                }
                io.failing = false;
                crate::ui::Effect::NONE
            }
            Some(_) if io.failing => crate::ui::Effect::NONE,
            Some(e) => {
                io.failing = true;
                // Asked again at the next change: what failed is still unsaved.
                io.sent.clone_from(&io.on_disk);
                io.note = Some(format!("settings not saved: {}", clean(e, 160)));
                crate::ui::Effect::REDRAW
            }
        }
    }
}
