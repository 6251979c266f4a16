use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use leet::source::sampler::{self, SamplerOptions};

#[derive(Parser)]
#[command(
    name = "leet",
    version,
    about = "A fast terminal viewer for Weights & Biases runs"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print host and accelerator metrics under W&B system-metric keys.
    Sample {
        /// One JSON object per sample per line.
        #[arg(long)]
        json: bool,
        /// Sampling interval, e.g. 1s, 500ms, 2m.
        #[arg(long, default_value = "1s", value_parser = sampler::parse_interval)]
        interval: std::time::Duration,
        /// Stop after this many samples (default: run until interrupted).
        #[arg(long)]
        count: Option<u64>,
        /// Monitor this process and its descendants (default: leet itself).
        #[arg(long)]
        pid: Option<u32>,
        /// Path for disk.<path>.usage* (repeatable; default /).
        #[arg(long = "disk-path")]
        disk_paths: Vec<PathBuf>,
        /// OpenMetrics endpoint NAME=URL (repeatable).
        #[arg(long = "openmetrics", value_parser = sampler::parse_endpoint)]
        openmetrics: Vec<(String, String)>,
        /// Keep only OpenMetrics metrics whose "<name>.<metric>" matches this regex.
        #[arg(long = "openmetrics-filter")]
        openmetrics_filter: Option<regex::Regex>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Sample {
            json,
            interval,
            count,
            pid,
            disk_paths,
            openmetrics,
            openmetrics_filter,
        }) => {
            let opts = SamplerOptions {
                pid,
                disk_paths,
                openmetrics,
                openmetrics_filter,
                interval,
            };
            let mut stdout = std::io::stdout().lock();
            sampler::run_sample_command(opts, count, json, &mut stdout).context("leet sample")
        }
        None => Ok(()),
    }
}
