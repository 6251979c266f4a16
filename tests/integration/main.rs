//! Most integration tests, in one binary: each file linked the whole crate (tokio,
//! tonic, parquet) into a test binary of its own. Run one part with its module name:
//! `cargo test --test integration render_status::`.
//!
//! Kept apart, in binaries of their own: `e2e` (the built binary in tmux, long),
//! `batch_priority` (looks at every thread of its process), `workspace_state` (sets
//! process-wide environment variables), `layers` (cheap; being reshaped by the crate
//! split), and the sampler's tests (moving into the sampler's crate).
#![allow(
    clippy::unwrap_used,
    reason = "the tests' helpers unwrap too: a failed unwrap there is a failed test"
)]

#[path = "../common/mod.rs"]
mod common;

mod app;
mod cli;
mod commands;
mod damage;
mod export;
mod export_golden;
mod export_targets;
mod export_typed;
mod fixes;
mod hostile;
mod index;
mod inspect_fixtures;
mod keymap;
mod latency;
mod nodes;
mod packaging;
mod parallel_load;
mod paste;
mod paths;
mod render;
mod render_axes;
mod render_band;
mod render_cluster;
mod render_console;
mod render_crosshair;
mod render_gaps;
mod render_heatmap;
mod render_hints;
mod render_inspector;
mod render_overview;
mod render_palette;
mod render_sections;
mod render_settings;
mod render_smooth;
mod render_stats;
mod render_status;
mod render_system;
mod render_workspace;
mod render_xaxis;
mod settings;
mod smooth_app;
mod stats;
mod summary_only;
mod tail;
mod workspace_runs;
