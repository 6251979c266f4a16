//! `.wandb` files: finding one for a path ([`super::resolve`]) and reading it
//! incrementally ([`super::reader`], a big first read in parallel:
//! [`super::parallel`]). One place to import them from.

pub use super::parallel::{ParallelOptions, Progress};
pub use super::reader::{Poll, RunReader};
pub use super::resolve::{
    is_run_dir_name, resolve, resolve_file, resolve_readable, run_count, run_dirs, runs_next_to,
    sibling_runs, wandb_dir_of, PassedOver, RunEntry, SourceError, Target,
};
