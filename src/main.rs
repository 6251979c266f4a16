use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = leet::cli::Cli::parse();
    match leet::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("leet: {e:#}");
            ExitCode::from(1)
        }
    }
}
