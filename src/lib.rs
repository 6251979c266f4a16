//! leet: a terminal viewer for W&B `.wandb` run logs and a live host sampler.
//!
//! Below this crate, in `crates/`: `leet-text` (sanitised text), `leet-format` (the
//! `.wandb` framing, decoding and schema; here as `decode`) and `leet-sampler` (host
//! and accelerator metrics; here as `source::sampler`). Cargo keeps them below.
//!
//! Data flows one way: `source` (files, host) reads bytes and `decode` turns them
//! into events on reader threads → `store` folds events into the run model (capped
//! series) → `ui` (state; `update` does no I/O, it asks for it with commands; and
//! the pure render, `ui::render`); `runtime` wires them and executes the commands.
//! `ui` is split by feature (`charts`, `overview`, `system`, `console`, `host`,
//! `workspace`, `inspector`, `overlay`), with the app-free drawing in `ui::widget`;
//! ARCHITECTURE.md says where things live.
//!
//! Layers, lowest first; a file uses only modules of lower layers (modules joined
//! by `|` are siblings and do not use each other), and no files use each other in a
//! cycle. `tests/layers.rs` reads the source and keeps this order:
//!
//! msg < source < store < inspect | ui | serve < input | terminal < cli < runtime
pub mod cli;
pub use leet_format as decode;
pub(crate) mod input;
pub mod inspect;
pub mod msg;
pub mod runtime;
pub mod serve;
pub mod source;
pub mod store;
pub mod terminal;
pub use leet_text as text;
pub mod ui;

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
/// Where `inspect` and `export` read without a PATH: as the viewer, the current
/// directory's runs, else those under `WANDB_DIR`.
///
/// # Errors
/// Neither holds a run: the error names both places.
fn default_path(
    given: Option<std::path::PathBuf>,
) -> Result<std::path::PathBuf, source::resolve::SourceError> {
    match given {
        Some(p) => Ok(p),
        None => {
            let env = std::env::var_os("WANDB_DIR");
            source::resolve::opening_default(std::path::Path::new("."), env.as_deref())
                .map(|(p, _)| p)
        }
    }
}

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
    match result {
        // A closed pipe met on a stream not tracked here (the sampler's notes on
        // stderr): quiet too. Reading files never gives EPIPE.
        Err(e)
            if e.downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        r => r.map(|()| ExitCode::SUCCESS),
    }
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
        if s.is_empty() || line.ends_with(&s) {
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

/// Keep freed memory for reuse instead of handing it back to the system at once
/// (glibc). A big first load allocates each batch's events on a reader thread and
/// frees them on the loop thread, a batch every few milliseconds: with glibc's
/// defaults the heap was trimmed and faulted in again each time (80k page faults,
/// 7 % of the CPU time of a 1.3 GB load). Freed memory is now returned once 64 MiB
/// of it is free at the top of a heap, and blocks under 32 MiB (glibc's own upper
/// bound for its adaptive threshold) come from the heap, not from `mmap`.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any
    // thread of ours starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Hand the free memory of every heap back to the system (glibc's
/// `malloc_trim`). [`tune_allocator`] lets the heaps keep what is freed, which is
/// right for a stream of batches but keeps a burst's peak for the process's
/// life: the cluster screen's first read of its window parses and drops about
/// 100 MB of answers for 100 hosts of 8 GPUs, on several threads' heaps.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the heaps to the system;
    // it takes the heaps' locks as malloc does.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Entry point behind `main`.
///
/// # Errors
/// Any error that ends the program; `main` prints it on one line.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    runtime::mark_start();
    tune_allocator();
    match cli.command {
        Some(cli::Command::Inspect(mut a)) => {
            a.path = match remote_as_local(a.path, false) {
                Ok(p) => p,
                Err(code) => return Ok(code),
            };
            // On a terminal, with no output option: the record browser; on one
            // that prints lines only (`TERM=dumb`: Emacs' shell, CI logs), the
            // records printed, as into a pipe.
            let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            let terminal = io::IsTerminal::is_terminal(&io::stdout());
            if !a.prints() && terminal && dumb {
                let _ = writeln!(
                    io::stderr(),
                    "leet: TERM=dumb draws no screen: the records printed (as --print)"
                );
            }
            if !a.prints() && terminal && !dumb {
                let keymap = match ui::keymap::Keymap::load(
                    a.screen.keymap.as_deref(),
                    ui::keymap::config_home(),
                ) {
                    Ok(k) => k,
                    Err(e) => {
                        let _ = writeln!(io::stderr(), "leet: {e}");
                        return Ok(ExitCode::from(2));
                    }
                };
                let path = default_path(a.path)?;
                return runtime::run_inspector(&path, keymap, &a.screen);
            }
            let opts = inspect::InspectOptions {
                path: default_path(a.path)?,
                json: a.json,
                summary: a.summary,
                follow: a.follow,
                idle_timeout: a.idle_timeout,
                run: a.run,
            };
            let stdout = io::stdout();
            let mut out = Tracked::new(io::BufWriter::with_capacity(1 << 16, stdout.lock()));
            let mut err = Tracked::new(io::stderr());
            let result = inspect::run(&opts, &mut out, &mut err)
                .and_then(|()| out.flush().map_err(Into::into));
            finish(result, &out, Some(&err))
        }
        Some(cli::Command::Export(mut a)) => {
            use std::io::IsTerminal as _;
            a.path = match remote_as_local(a.path, false) {
                Ok(p) => p,
                Err(code) => return Ok(code),
            };
            let opts = inspect::export::ExportOptions {
                path: default_path(a.path)?,
                run: a.run,
                format: a.format,
                long: a.long,
                metrics: a.metrics,
                system: a.system,
                smoothing: a.smoothing,
                output: a.output,
                progress: io::stderr().is_terminal(),
                stdout_terminal: io::stdout().is_terminal(),
            };
            let mut out = Tracked::new(io::BufWriter::with_capacity(1 << 16, io::stdout()));
            let mut err = Tracked::new(io::stderr());
            let result = inspect::export::run(&opts, &mut out, &mut err)
                .and_then(|()| out.flush().map_err(Into::into));
            // A regex that selects nothing is a usage error, as a bad regex is; so
            // is an output that is the input, or Parquet to a terminal.
            if let Err(e) = &result {
                if inspect::export::is_usage_error(e) {
                    let _ = writeln!(io::stderr(), "leet: {}", error_line(e));
                    return Ok(ExitCode::from(2));
                }
            }
            finish(result, &out, Some(&err))
        }
        Some(cli::Command::Sample(a)) => {
            // A process asked for by pid that is not there: said at once, not as a
            // line of errors on every sample of an otherwise silent run.
            no_such_process(a.sampler.pid)?;
            let mut out = Tracked::new(io::stdout().lock());
            let result =
                source::sampler::run_sample_command(a.sampler.options(), a.count, a.json, &mut out)
                    .and_then(|()| out.flush().map_err(Into::into));
            finish::<_, io::Stderr>(result, &out, None)
        }
        Some(cli::Command::Completions { shell }) => {
            let mut out = Tracked::new(io::stdout().lock());
            let result = cli::write_completions(shell, &mut out)
                .and_then(|()| out.flush())
                .map_err(Into::into);
            finish::<_, io::Stderr>(result, &out, None)
        }
        Some(cli::Command::Man) => {
            let mut out = Tracked::new(io::stdout().lock());
            let result = cli::write_man(&mut out)
                .and_then(|()| out.flush())
                .map_err(Into::into);
            finish::<_, io::Stderr>(result, &out, None)
        }
        Some(cli::Command::Serve(a)) => {
            // As `leet sample`: an exporter started for a process that is not
            // there would serve its absence as the process having exited.
            no_such_process(a.sampler.pid)?;
            serve::run(serve::ServeOptions {
                listen: a.listen,
                sampler: a.sampler.options(),
            })?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let mut v = cli.view;
            v.path = match remote_as_local(v.path, true) {
                Ok(p) => p,
                Err(code) => return Ok(code),
            };
            for c in &mut v.compare {
                match remote_as_local(Some(std::mem::take(c)), false) {
                    Ok(p) => *c = p.unwrap_or_default(),
                    Err(code) => return Ok(code),
                }
            }
            // Each print reads only its own file: a bad settings file does not stop
            // --print-keymap, nor a bad key map --print-config.
            if v.print_config {
                let config = match load_config(v.config.as_deref()) {
                    Ok(c) => c,
                    Err(e) => return Ok(usage_failure(&e)),
                };
                return print(&config.file.to_toml());
            }
            let keymap = match ui::keymap::Keymap::load(
                v.screen.keymap.as_deref(),
                ui::keymap::config_home(),
            ) {
                Ok(k) => k,
                // The error's Display sanitizes what it quotes.
                Err(e) => return Ok(usage_failure(&e)),
            };
            if v.print_keymap {
                return print(&keymap.to_toml());
            }
            let config = match load_config(v.config.as_deref()) {
                Ok(c) => c,
                Err(e) => return Ok(usage_failure(&e)),
            };
            if let (true, Some(url)) = (v.live, v.prometheus.as_deref()) {
                runtime::run_cluster(&v, url, keymap, config)
            } else if v.live {
                runtime::run_live(&v, keymap, config)
            } else {
                runtime::run(&v, keymap, config)
            }
        }
    }
}

/// `leet: ERROR` on stderr for a file that cannot be used as asked (a key map, a
/// settings file); exit status 2.
fn usage_failure(e: &dyn std::fmt::Display) -> ExitCode {
    let _ = writeln!(io::stderr(), "leet: {e}");
    ExitCode::from(2)
}

/// `text` on stdout (`--print-keymap`, `--print-config`), a write error said once.
fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = Tracked::new(io::stdout().lock());
    let result = out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Into::into);
    finish::<_, io::Stderr>(result, &out, None)
}

/// A run's URL (`https://HOST/ENTITY/PROJECT/runs/ID`) downloaded and written as
/// a local `.wandb` file (`runtime::remote`), progress on stderr; any other
/// path as it is; a project's URL its workspace where `projects`. On failure the
/// one line is printed and the exit status given.
fn remote_as_local(
    path: Option<std::path::PathBuf>,
    projects: bool,
) -> Result<Option<std::path::PathBuf>, ExitCode> {
    let Some(path) = path else {
        return Ok(None);
    };
    runtime::remote::local_path(&path, projects)
        .map(Some)
        .map_err(|e| {
            let _ = writeln!(io::stderr(), "leet: {e}");
            ExitCode::from(1)
        })
}

/// The settings: `explicit` (from `--config`, must exist), else the default file
/// when there is one, else the defaults; saved back to the same file.
///
/// # Errors
/// A file that cannot be read or is not valid settings: naming the file, and for
/// a bad value its table, key and reason.
fn load_config(
    explicit: Option<&std::path::Path>,
) -> Result<runtime::Loaded, ui::settings::SettingsError> {
    use source::settings::ReadError;
    use ui::settings::{Config, SettingsError, MAX_CONFIG_BYTES};
    let Some(path) = explicit
        .map(std::path::Path::to_path_buf)
        .or_else(source::settings::default_path)
    else {
        return Ok(runtime::Loaded::default());
    };
    let text = source::settings::read(&path, MAX_CONFIG_BYTES, explicit.is_none()).map_err(
        |e| match e {
            ReadError::Io(reason) => SettingsError::Io {
                file: path.clone(),
                reason,
            },
            ReadError::Refused(reason) => SettingsError::Refused {
                file: path.clone(),
                reason,
            },
        },
    )?;
    let file = match text {
        Some(t) => Config::parse(&path, &t)?,
        None => Config::default(),
    };
    Ok(runtime::Loaded {
        path: Some(path),
        file,
    })
}

/// `--pid` naming no process: refused, before anything starts.
fn no_such_process(pid: Option<u32>) -> anyhow::Result<()> {
    match pid.filter(|&p| !process_exists(p)) {
        Some(pid) => anyhow::bail!("--pid {pid}: no such process"),
        None => Ok(()),
    }
}

/// Whether process `pid` is a zombie (exited, its parent has not reaped it):
/// its state in `/proc/<pid>/stat`, after the last `)` of its name.
#[cfg(unix)]
fn zombie(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            t.rsplit_once(')')
                .map(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('Z' | 'X')))
        })
        .unwrap_or(false)
}

/// Whether process `pid` exists and runs (ours or not; a zombie does not).
fn process_exists(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 sends nothing; it only checks that the process exists
        // (EPERM: it does, owned by another user).
        let r = unsafe { libc::kill(pid, 0) };
        let exists = r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        // A zombie answers signal 0 but has exited: nothing of it runs.
        exists && !zombie(pid)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::file::SourceError;

    /// `--pid` of a zombie (a child killed and not waited for) is refused as one of
    /// no process: it has exited; a running one is there.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_is_no_process_to_monitor() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = child.id();
        assert!(process_exists(pid));
        assert!(no_such_process(Some(pid)).is_ok());
        child.kill().expect("kill");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while process_exists(pid) {
            assert!(std::time::Instant::now() < deadline, "still there");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(no_such_process(Some(pid)).is_err());
        let _ = child.wait();
    }

    #[test]
    fn an_os_error_is_named_once_in_the_error_line() {
        // Tests run as root, where file modes do not deny: build the errors the OS
        // gives an unprivileged user. Before, the line said the cause twice
        // ("x: Permission denied (os error 13): Permission denied (os error 13)").
        for (errno, want) in [
            (libc::EACCES, "Permission denied (os error 13)"),
            (
                libc::ELOOP,
                "Too many levels of symbolic links (os error 40)",
            ),
            (libc::ENOTDIR, "Not a directory (os error 20)"),
        ] {
            let e = anyhow::Error::from(SourceError::Io {
                path: "/runs/\x1b[2Jrun-x.wandb".into(),
                source: io::Error::from_raw_os_error(errno),
            });
            assert_eq!(error_line(&e), format!("/runs/run-x.wandb: {want}"));
        }
        // Context that says something new is kept.
        let e = anyhow::Error::from(io::Error::from_raw_os_error(libc::EACCES))
            .context("cannot set up the terminal");
        assert_eq!(
            error_line(&e),
            "cannot set up the terminal: Permission denied (os error 13)"
        );
    }

    #[test]
    fn tracked_remembers_the_first_write_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from_raw_os_error(libc::ENOSPC))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
        }
        let mut t = Tracked::new(Full);
        assert!(t.write_all(b"x").is_err());
        assert!(t.flush().is_err());
        assert_eq!(t.error().map(|(k, _)| *k), Some(io::ErrorKind::StorageFull));
        let r = finish::<_, io::Sink>(Err(anyhow::anyhow!("write failed")), &t, None);
        assert_eq!(
            r.map_err(|e| e.to_string()).err().as_deref(),
            Some("cannot write to standard output: No space left on device (os error 28)")
        );
        // A closed pipe is a quiet success; no error, the command's own result.
        let mut pipe = Tracked::new(Full);
        let _ = pipe.flush();
        assert!(finish::<_, io::Sink>(Err(anyhow::anyhow!("x")), &pipe, None).is_ok());
        let fine = Tracked::new(io::sink());
        assert!(finish::<_, io::Sink>(Err(anyhow::anyhow!("x")), &fine, None).is_err());
        let epipe = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(finish::<_, io::Sink>(Err(epipe), &fine, None).is_ok());
        assert!(finish::<_, io::Sink>(Ok(()), &fine, None).is_ok());
    }
}
