use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match leet::cli::Cli::try_parse().and_then(|c| c.validate().map(|()| c)) {
        Ok(c) => c,
        Err(e) => return leet::usage_error(&e),
    };
    match leet::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Not eprintln!: it panics when standard error cannot be written.
            let _ = writeln!(std::io::stderr(), "leet: {}", leet::error_line(&e));
            ExitCode::from(1)
        }
    }
}
