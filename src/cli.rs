//! Command-line interface.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// leet: a fast terminal viewer for W&B runs (.wandb files) and a live host monitor.
#[derive(Debug, Parser)]
#[command(name = "leet", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// Options of the viewer (`leet [PATH]`).
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// A .wandb file, a run directory, a wandb directory or a project directory
    /// (default: the current directory's latest run).
    pub path: Option<PathBuf>,
    /// Key map laid over the defaults (default: $XDG_CONFIG_HOME/leet/keymap.toml).
    #[arg(long, value_name = "PATH")]
    pub keymap: Option<PathBuf>,
    /// Print the effective key map and exit.
    #[arg(long)]
    pub print_keymap: bool,
    /// Seconds without growth after which a run with no exit record is shown as
    /// possibly crashed.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub stale_after: u64,
    /// Most points kept per metric series (memory bound).
    #[arg(long, default_value_t = crate::store::metrics::DEFAULT_SERIES_CAP, value_name = "N")]
    pub max_points: usize,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a run's records or summary.
    Inspect(InspectArgs),
}

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// A .wandb file, run directory, wandb or project directory (default: .).
    pub path: Option<PathBuf>,
    /// JSON output (one object per record; with --summary, one object).
    #[arg(long)]
    pub json: bool,
    /// Print the run's state, config, summary and console tail instead of records.
    #[arg(long)]
    pub summary: bool,
    /// Keep printing records as the file grows, until the exit record.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// With --follow: stop after this many seconds without growth.
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<f64>,
}
