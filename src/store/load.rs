//! A whole run from a path, in one go: the reader's events folded into a [`Run`].

use std::path::{Path, PathBuf};

use super::run::Run;
use crate::source::file::{resolve_file, RunReader, SourceError};

/// Load a whole run from a path (file, run directory, wandb or project directory).
///
/// # Errors
/// Resolution, I/O and header errors, each naming the file.
pub fn load(path: &Path) -> Result<(PathBuf, Run), SourceError> {
    let file = resolve_file(path)?;
    let mut run = Run::new();
    RunReader::open(&file)?.read_all_parallel(&mut run)?;
    Ok((file, run))
}
