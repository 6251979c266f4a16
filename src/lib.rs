//! leet: a terminal viewer for W&B `.wandb` run logs and a live host sampler.
//!
//! Data flows left to right: `source` (files, host) → `decode` (frames, records)
//! → `store` (run model, capped series) → `app` (state) → `view` (pure render).
pub mod app;
pub mod cli;
pub mod decode;
pub(crate) mod input;
pub mod inspect;
pub mod msg;
pub mod runtime;
pub mod source;
pub mod store;
pub mod terminal;
pub mod text;
pub mod view;

use std::process::ExitCode;
use std::time::Duration;

/// Entry point behind `main`.
///
/// # Errors
/// Any error that ends the program; `main` prints it on one line.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(cli::Command::Inspect(a)) => {
            let opts = inspect::InspectOptions {
                path: a.path.unwrap_or_else(|| ".".into()),
                json: a.json,
                summary: a.summary,
                follow: a.follow,
                idle_timeout: a.idle_timeout.map(Duration::from_secs_f64),
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
            inspect::run(&opts, &mut out, &mut std::io::stderr())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(cli::Command::Sample(a)) => {
            let mut stdout = std::io::stdout().lock();
            source::sampler::run_sample_command(a.sampler.options(), a.count, a.json, &mut stdout)?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let v = cli.view;
            let keymap =
                match app::keymap::Keymap::load(v.keymap.as_deref(), app::keymap::config_home()) {
                    Ok(k) => k,
                    Err(e) => {
                        eprintln!("leet: {e}");
                        return Ok(ExitCode::from(2));
                    }
                };
            if v.print_keymap {
                print!("{}", keymap.to_toml());
                return Ok(ExitCode::SUCCESS);
            }
            if v.live {
                runtime::run_live(&v, keymap)
            } else {
                runtime::run(&v, keymap)
            }
        }
    }
}
