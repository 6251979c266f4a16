use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match leet::cli::Cli::parse_args(std::env::args_os())
        .and_then(|c| c.validate().map(|()| c))
    {
        Ok(c) => c,
        Err(e) => return leet::usage_error(&e),
    };
    let viewer = cli.command.is_none();
    match leet::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Not eprintln!: it panics when standard error cannot be written.
            let mut err = std::io::stderr();
            let _ = writeln!(err, "leet: {}", leet::error_line(&e));
            if let Some(hint) = leet::cli::next_step(&e).filter(|_| viewer) {
                let _ = writeln!(err, "{hint}");
            }
            ExitCode::from(1)
        }
    }
}
