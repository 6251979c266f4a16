//! leet: a terminal viewer for W&B `.wandb` run logs and a live host sampler.
//!
//! Data flows left to right: `source` (files, host) → `decode` (frames, records)
//! → `store` (run model, capped series) → `app` (state) → `view` (pure render).
pub mod app;
pub mod cli;
pub mod decode;
pub mod inspect;
pub mod msg;
pub mod runtime;
pub mod source;
pub mod store;
pub mod terminal;
pub mod text;
pub mod view;

use std::io::{self, Write};
use std::process::ExitCode;

/// A stream that remembers the first error a write or flush through it met, so
/// that a failed output (a full disk, a closed pipe) can be told from the other
/// errors that end a command.
#[derive(Debug)]
pub struct Tracked<W> {
    inner: W,
    error: Option<(io::ErrorKind, String)>,
}

impl<W: Write> Tracked<W> {
    pub fn new(inner: W) -> Self {
        Self { inner, error: None }
    }

    /// The first write error met: its kind and message.
    #[must_use]
    pub fn error(&self) -> Option<&(io::ErrorKind, String)> {
        self.error.as_ref()
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if e.kind() != io::ErrorKind::Interrupted && self.error.is_none() {
                self.error = Some((e.kind(), e.to_string()));
            }
        }
        r
    }
}

impl<W: Write> Write for Tracked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// How a command that wrote to `out` (standard output) and `err` (standard error)
/// ends: a closed pipe (`leet inspect --json … | head`) ends it quietly with
/// success, any other write error is the error (one line naming the stream and
/// the cause), else `result`.
fn finish<O: Write, E: Write>(
    result: anyhow::Result<()>,
    out: &Tracked<O>,
    err: Option<&Tracked<E>>,
) -> anyhow::Result<ExitCode> {
    let failed = [
        ("standard output", out.error()),
        ("standard error", err.and_then(Tracked::error)),
    ];
    for (name, e) in failed {
        match e {
            Some((io::ErrorKind::BrokenPipe, _)) => return Ok(ExitCode::SUCCESS),
            Some((_, msg)) => anyhow::bail!("cannot write to {name}: {msg}"),
            None => {}
        }
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// One line for an error that ends the program: its message and its causes, a
/// cause left out when the message before already says it (an I/O error is often
/// both the cause and part of the message), [`text::sanitize`]d (paths and
/// messages can hold any text).
#[must_use]
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if s.is_empty() || line.contains(&s) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&s);
    }
    text::sanitize(&line)
}

/// Report a command-line error (or print help or the version) as clap would,
/// with the echoed arguments sanitized; the exit status to end with (2 for a
/// usage error).
#[must_use]
pub fn usage_error(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    if !e.use_stderr() {
        // --help, --version: to standard output, which may be closed or full.
        return match e.print() {
            Ok(()) => ExitCode::from(code),
            Err(w) if w.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(w) => {
                let _ = writeln!(io::stderr(), "leet: cannot write to standard output: {w}");
                ExitCode::from(1)
            }
        };
    }
    let text = e.render().to_string();
    let mut msg = String::with_capacity(text.len());
    for line in text.lines() {
        msg.push_str(&text::sanitize(line));
        msg.push('\n');
    }
    let _ = io::stderr().write_all(msg.as_bytes());
    ExitCode::from(code)
}

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
                idle_timeout: a.idle_timeout,
            };
            let stdout = io::stdout();
            let mut out = Tracked::new(io::BufWriter::with_capacity(1 << 16, stdout.lock()));
            let mut err = Tracked::new(io::stderr());
            let result = inspect::run(&opts, &mut out, &mut err)
                .and_then(|()| out.flush().map_err(Into::into));
            finish(result, &out, Some(&err))
        }
        Some(cli::Command::Sample(a)) => {
            let mut out = Tracked::new(io::stdout().lock());
            let result =
                source::sampler::run_sample_command(a.sampler.options(), a.count, a.json, &mut out)
                    .and_then(|()| out.flush().map_err(Into::into));
            finish::<_, io::Stderr>(result, &out, None)
        }
        None => {
            let v = cli.view;
            let keymap =
                match app::keymap::Keymap::load(v.keymap.as_deref(), app::keymap::config_home()) {
                    Ok(k) => k,
                    Err(e) => {
                        // The error's Display sanitizes what it quotes.
                        let _ = writeln!(io::stderr(), "leet: {e}");
                        return Ok(ExitCode::from(2));
                    }
                };
            if v.print_keymap {
                let mut out = Tracked::new(io::stdout().lock());
                let result = out
                    .write_all(keymap.to_toml().as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(Into::into);
                return finish::<_, io::Stderr>(result, &out, None);
            }
            if v.live {
                runtime::run_live(&v, keymap)
            } else {
                runtime::run(&v, keymap)
            }
        }
    }
}
