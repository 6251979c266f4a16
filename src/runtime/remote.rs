//! Opening a run's URL before the screen opens: the download (`source::remote`)
//! on a thread, its progress on one line of the terminal, and `q`, `esc` or
//! ctrl-c read meanwhile to cancel it. Without a terminal on both standard input
//! and standard error, progress lines are printed and ctrl-c ends the program.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::source::remote::fetch::Progress;
use crate::source::remote::{files, is_url, local, RemoteError};

/// `path` as a local path: a URL's run (or, where `projects`, a project's
/// workspace) downloaded and written as local files (see
/// `source::remote::local`); any other path as it is.
///
/// # Errors
/// The server's, or [`RemoteError::Cancelled`] when the user cancelled.
pub fn local_path(path: &Path, projects: bool) -> Result<PathBuf, RemoteError> {
    if !path.to_str().is_some_and(is_url) {
        return Ok(path.to_owned());
    }
    let cancel = AtomicBool::new(false);
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive || crossterm::terminal::enable_raw_mode().is_err() {
        let mut err = std::io::stderr();
        let file = local::local_path(path, projects, &cancel, &mut |p| {
            if let Some(line) = local::progress_line(p) {
                let _ = writeln!(err, "leet: {line}");
            }
        })?;
        // Parts of the run the server did not give (the viewer says so in its
        // status bar; `inspect` and `export` here). Its text is sanitized.
        if let Some(t) = files::follow_trouble().filter(|t| !t.polls_fail) {
            let _ = writeln!(err, "leet: {}", leet_text::sanitize(&t.text));
        }
        return Ok(file);
    }
    // Raw from here: a signal's default action would end the process with the
    // terminal still raw. Caught instead until the terminal is restored.
    let caught = QuitSignals::catch();
    // A thread of its own, not joined on cancel: a server that stalls in the
    // middle of a read would hold a join for its timeout; the program ends instead.
    let (tx, rx) = mpsc::channel();
    let flag = Arc::new(cancel);
    let worker = {
        let (path, flag) = (path.to_owned(), Arc::clone(&flag));
        std::thread::spawn(move || {
            local::local_path(&path, projects, &flag, &mut |p| {
                let _ = tx.send(p);
            })
        })
    };
    let mut result = None;
    while result.is_none() {
        if worker.is_finished() {
            result = Some(worker.join().unwrap_or(Err(RemoteError::Cancelled)));
            break;
        }
        if let Some(p) = rx.try_iter().last() {
            // One row: a line wider than the terminal wraps, and `\r` then goes
            // back only to its last row, leaving the others on screen at each update.
            let cols = crate::terminal::size().map_or(80, |(c, _)| usize::from(c));
            let line = crate::ui::widget::fit::fit(&status(p), cols.saturating_sub(1));
            let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
        }
        if cancel_pressed(Duration::from_millis(100)) {
            flag.store(true, Ordering::Relaxed);
            result = Some(Err(RemoteError::Cancelled));
        }
        if caught.taken().is_some() {
            flag.store(true, Ordering::Relaxed);
            break;
        }
    }
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = write!(std::io::stderr(), "\r\x1b[2K");
    let _ = std::io::stderr().flush();
    if let Some(sig) = caught.release() {
        // As the viewer leaves on these signals: the terminal restored, 128 + the
        // signal.
        std::process::exit(128 + sig);
    }
    result.unwrap_or(Err(RemoteError::Cancelled))
}

/// The signals that end leet (SIGTERM, SIGINT, SIGHUP, SIGQUIT), caught while
/// the terminal is raw before the screen opens; the actions they had before are
/// put back by [`QuitSignals::release`]. Not signal-hook: its handler, once
/// installed, cannot give a signal back its default action, and the programs
/// that run after the download (inspect, export) rely on that.
struct QuitSignals {
    #[cfg(unix)]
    before: Vec<(libc::c_int, libc::sigaction)>,
}

/// The signal caught, 0 for none.
static CAUGHT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[cfg(unix)]
const QUIT_SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

#[cfg(unix)]
extern "C" fn note_signal(sig: libc::c_int) {
    // An atomic store: all a signal handler may safely do here.
    CAUGHT.store(sig, Ordering::SeqCst);
}

impl QuitSignals {
    #[cfg(unix)]
    fn catch() -> Self {
        CAUGHT.store(0, Ordering::SeqCst);
        let mut before = Vec::new();
        for sig in QUIT_SIGNALS {
            // SAFETY: sigaction structs zeroed then filled; the handler only
            // stores an atomic; `old` is written by the call.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = note_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&raw mut act.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &raw const act, &raw mut old) == 0 {
                    before.push((sig, old));
                }
            }
        }
        Self { before }
    }

    #[cfg(not(unix))]
    fn catch() -> Self {
        Self {}
    }

    /// The signal caught so far, if any.
    #[allow(clippy::unused_self)]
    fn taken(&self) -> Option<i32> {
        Some(CAUGHT.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }

    /// Put the actions back; the signal caught meanwhile, if any.
    fn release(self) -> Option<i32> {
        #[cfg(unix)]
        for (sig, old) in &self.before {
            // SAFETY: an action read back from sigaction itself.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
        self.taken()
    }
}

/// The progress line (in leet's words, without the key or a URL's query).
fn status(p: Progress) -> String {
    let what = match p {
        Progress::Info => "asking the server for the run".to_owned(),
        Progress::Download {
            file,
            files,
            bytes,
            total,
        } => {
            let total = total.map_or(String::new(), |t| format!(" of {}", size(t)));
            format!(
                "downloading history file {} of {files}: {}{total}",
                file + 1,
                size(bytes)
            )
        }
        Progress::Cached { files } => format!("{files} history files from the cache"),
        Progress::Live => "asking for the newest rows".to_owned(),
        Progress::Retrying { .. } | Progress::Kept { .. } => {
            local::progress_line(p).unwrap_or_default()
        }
    };
    format!("leet: {what} (q or esc cancels)")
}

/// Bytes as people read them: `512 B`, `3.4 MB`.
fn size(b: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if b < 1000 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Whether `q`, `esc` or ctrl-c was typed within `wait` (the terminal is raw).
#[cfg(unix)]
fn cancel_pressed(wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd, its count 1.
    if unsafe { libc::poll(&raw mut fd, 1, ms) } <= 0 || fd.revents & libc::POLLIN == 0 {
        return false;
    }
    let mut buf = [0u8; 64];
    // SAFETY: reads at most buf.len() bytes into buf, which outlives the call.
    let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    let keys = &buf[..n];
    // A lone ESC is the key; ESC followed by more is a sequence (an arrow key).
    keys == [0x1b] || keys.iter().any(|&b| matches!(b, b'q' | b'Q' | 0x03))
}

#[cfg(not(unix))]
fn cancel_pressed(wait: Duration) -> bool {
    std::thread::sleep(wait);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_in_bytes_and_files() {
        assert_eq!(size(999), "999 B");
        assert_eq!(size(1_500), "1.5 kB");
        assert_eq!(size(12_300_000), "12.3 MB");
        let p = Progress::Download {
            file: 0,
            files: 3,
            bytes: 2_000_000,
            total: Some(4_000_000),
        };
        assert_eq!(
            status(p),
            "leet: downloading history file 1 of 3: 2.0 MB of 4.0 MB (q or esc cancels)"
        );
    }
}
