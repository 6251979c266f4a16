//! Reading the terminal: the poll/read loop that feeds the [`Parser`] and gives up an
//! unfinished sequence after a timeout, and the choice of the terminal device.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::{Input, Parser};

/// How often a reader whose terminal is not its own looks again (see [`read_loop`]).
const NOT_OURS_WAIT: Duration = Duration::from_millis(20);

/// Read the terminal `fd` until `emit` returns false or the terminal ends. An
/// unfinished sequence is given up after `timeout` without a byte (a paste under
/// way after [`super::PASTE_TIMEOUT`]). While `ours` says the terminal is not
/// leet's (it has been given back on the way out), nothing is read: what the user
/// types after quitting is the shell's next command line, left in the terminal for
/// it however long the process takes to end (the workspace's save on a loaded disk).
///
/// # Errors
/// A read or poll error, or the end of the input (the terminal went away).
pub(crate) fn read_loop(
    fd: RawFd,
    timeout: Duration,
    ours: impl Fn() -> bool,
    mut emit: impl FnMut(Input) -> bool,
) -> io::Result<()> {
    let mut parser = Parser::new();
    let mut buf = [0u8; 4096];
    let mut out = Vec::new();
    let mut deadline: Option<Instant> = None;
    loop {
        let wait = deadline.map_or(-1, |d| {
            let left = d.saturating_duration_since(Instant::now());
            // Round up, so a wait never ends before the deadline.
            i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
        });
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&raw mut pfd, 1, wait) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                parser.flush(&mut out);
                deadline = None;
            }
        } else if !ours() {
            // Readable, but not for us: poll would answer at once again.
            std::thread::sleep(NOT_OURS_WAIT);
            continue;
        } else {
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
                    _ => return Err(e),
                }
            }
            let n = usize::try_from(n).unwrap_or(0);
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the terminal closed",
                ));
            }
            parser.feed(&buf[..n], &mut out);
            deadline = parser
                .pending()
                .then(|| Instant::now() + parser.timeout(timeout));
        }
        for ev in out.drain(..) {
            if !emit(ev) {
                return Ok(());
            }
        }
    }
}

/// The terminal to read keys from: standard input when it is one, else
/// `/dev/tty` (as crossterm picks it, so raw mode applies to the same device).
///
/// # Errors
/// When there is no terminal.
pub(crate) fn tty() -> io::Result<Tty> {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
        return Ok(Tty::Stdin);
    }
    let f = std::fs::File::open("/dev/tty")?;
    Ok(Tty::Opened(OwnedFd::from(f)))
}

/// The input terminal (see [`tty`]).
#[derive(Debug)]
pub(crate) enum Tty {
    Stdin,
    Opened(OwnedFd),
}

impl AsRawFd for Tty {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Tty::Stdin => libc::STDIN_FILENO,
            Tty::Opened(f) => f.as_raw_fd(),
        }
    }
}
