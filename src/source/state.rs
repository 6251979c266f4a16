//! leet's own state file: what the workspace remembers of each wandb directory
//! (selection, pins, filter, grouping), under `$XDG_STATE_HOME/leet`. Never written
//! into the wandb directory. (Helper "state" fills this in.)

use std::io;
use std::path::{Path, PathBuf};

use crate::msg::WorkspaceSaved;

/// `$XDG_STATE_HOME/leet`, else `~/.local/state/leet`.
#[must_use]
pub fn default_state_dir() -> Option<PathBuf> {
    None
}

/// What was saved for `wandb_dir` (None: nothing yet).
///
/// # Errors
/// A state file that cannot be read or parsed: the cause.
pub fn load(_state_dir: &Path, _wandb_dir: &Path) -> Result<Option<WorkspaceSaved>, String> {
    Ok(None)
}

/// Save what the workspace of `wandb_dir` remembers.
///
/// # Errors
/// The state file cannot be written.
pub fn save(_state_dir: &Path, _wandb_dir: &Path, _state: &WorkspaceSaved) -> io::Result<()> {
    Ok(())
}
