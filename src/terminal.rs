//! Entering and leaving the terminal's raw mode and alternate screen. One
//! `restore()` serves normal exit, errors, panics and signals; `suspend()` leaves
//! the terminal for a stop (ctrl+z, SIGTSTP) and enters it again on continue.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::msg::Msg;

pub type Tui = Terminal<Sized<CrosstermBackend<FrameOut>>>;

/// The size to lay out for, of what the terminal reports (`reported`) and the
/// environment's `COLUMNS` and `LINES`: a terminal that reports 0×0 (a serial
/// console, `script` without a tty, some container terminals before their first
/// resize) gets the environment's size, else 80×24, until it reports a real one;
/// drawn into 0×0 the screen stayed blank.
#[must_use]
pub fn usable_size(reported: (u16, u16), columns: Option<&str>, lines: Option<&str>) -> (u16, u16) {
    let (w, h) = reported;
    let env = |v: Option<&str>| {
        v.and_then(|s| s.trim().parse::<u16>().ok())
            .filter(|&n| n > 0)
    };
    (
        if w > 0 { w } else { env(columns).unwrap_or(80) },
        if h > 0 { h } else { env(lines).unwrap_or(24) },
    )
}

/// The terminal's size as leet lays out for it ([`usable_size`]).
///
/// # Errors
/// When the terminal's size cannot be asked at all.
pub fn size() -> io::Result<(u16, u16)> {
    crossterm::terminal::size().map(with_fallback)
}

/// [`usable_size`] of `reported` and this process's environment (read only when
/// the terminal reports no size: this runs on every frame).
fn with_fallback(reported: (u16, u16)) -> (u16, u16) {
    if reported.0 > 0 && reported.1 > 0 {
        return reported;
    }
    let var = |k: &str| std::env::var(k).ok();
    usable_size(reported, var("COLUMNS").as_deref(), var("LINES").as_deref())
}

/// A backend whose size is [`size`]'s: the rest is the inner backend's.
#[derive(Debug)]
pub struct Sized<B>(B);

impl<B: ratatui::backend::Backend<Error = io::Error>> ratatui::backend::Backend for Sized<B> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>,
    {
        self.0.draw(content)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.0.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<ratatui::layout::Position> {
        self.0.get_cursor_position()
    }
    fn set_cursor_position<P: Into<ratatui::layout::Position>>(&mut self, p: P) -> io::Result<()> {
        self.0.set_cursor_position(p)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.0.clear()
    }
    fn clear_region(&mut self, t: ratatui::backend::ClearType) -> io::Result<()> {
        self.0.clear_region(t)
    }
    fn size(&self) -> io::Result<ratatui::layout::Size> {
        let s = self.0.size()?;
        let (width, height) = with_fallback((s.width, s.height));
        Ok(ratatui::layout::Size { width, height })
    }
    fn window_size(&mut self) -> io::Result<ratatui::backend::WindowSize> {
        let mut w = self.0.window_size()?;
        let s = self.size()?;
        w.columns_rows = s;
        Ok(w)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A frame's bytes, held until the frame is flushed and then handed to the
/// terminal in one write. Through `io::stdout()` alone a frame went out in writes
/// of at most 1 KiB (its line buffer's size, a frame having no newline): a 200×50
/// frame was ~18 writes, each waking the terminal (tmux, sshd) to read a piece.
/// Bytes still held when the terminal has been left (an exit from another thread)
/// or when it is dropped are thrown away, never written onto the restored screen.
#[derive(Debug)]
pub struct FrameOut<W: Write = io::Stdout> {
    buf: Vec<u8>,
    out: W,
    /// Whether the terminal is still ours (else held bytes are thrown away).
    live: fn() -> bool,
}

impl FrameOut {
    fn stdout() -> Self {
        Self::new(io::stdout(), || ENTERED.load(Ordering::SeqCst))
    }
}

impl<W: Write> FrameOut<W> {
    /// Frames for `out`, written while `live()` says the terminal is ours.
    pub fn new(out: W, live: fn() -> bool) -> Self {
        Self {
            buf: Vec::new(),
            out,
            live,
        }
    }
}

/// Held bytes past which a frame is written before it ends (a full redraw of a very
/// large terminal), so the buffer stays bounded.
const FRAME_OUT_MAX: usize = 4 << 20;

impl<W: Write> Write for FrameOut<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= FRAME_OUT_MAX {
            self.flush()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let r = if (self.live)() {
            self.out
                .write_all(&self.buf)
                .and_then(|()| self.out.flush())
        } else {
            Ok(())
        };
        self.buf.clear();
        // A one-off large frame does not keep its memory.
        if self.buf.capacity() > 1 << 20 {
            self.buf.shrink_to(256 << 10);
        }
        r
    }
}

/// How long the loop has to leave by itself after a quit signal or ctrl+c before
/// the process restores the terminal and exits from the signal (or input) thread,
/// whatever the loop is busy with.
pub const QUIT_GRACE: Duration = Duration::from_millis(150);

static ENTERED: AtomicBool = AtomicBool::new(false);

/// Whether the terminal is leet's: entered and not yet given back (on the way out,
/// or to the shell on ctrl+z). The input reader reads nothing while it is not.
pub fn entered() -> bool {
    ENTERED.load(Ordering::SeqCst)
}

/// Whether leet takes the mouse (false: `--no-mouse`, the terminal keeps it).
static MOUSE: AtomicBool = AtomicBool::new(true);

/// Take the mouse (clicks, drags, wheel) when the terminal is entered, or leave it
/// to the terminal's own selection (`--no-mouse`). Call before [`enter`].
pub fn capture_mouse(on: bool) {
    MOUSE.store(on, Ordering::SeqCst);
}

/// Held while a frame is drawn and while the terminal is left, so an exit from
/// another thread never cuts a frame or a restore in half.
static TERM: Mutex<()> = Mutex::new(());

/// Whether a forced exit is already on its way.
static LEAVING: AtomicBool = AtomicBool::new(false);

/// Hold while drawing a frame (see [`TERM`]).
pub fn draw_lock() -> MutexGuard<'static, ()> {
    TERM.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The terminal lock, waiting at most a moment: a panic in the middle of a frame
/// (the hook runs with the lock held) restores the terminal all the same.
fn lock_briefly() -> Option<MutexGuard<'static, ()>> {
    let t0 = Instant::now();
    loop {
        match TERM.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if t0.elapsed() < Duration::from_millis(200) => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// Raw mode, alternate screen, mouse capture, bracketed paste, hidden cursor;
/// installs the panic hook that restores the terminal before the panic message is
/// printed.
///
/// # Errors
/// Terminal I/O errors (the terminal is restored first).
pub fn enter() -> io::Result<Tui> {
    install_panic_hook();
    let r = apply_modes()
        .and_then(|()| Terminal::new(Sized(CrosstermBackend::new(FrameOut::stdout()))));
    if r.is_err() {
        restore();
    }
    r
}

fn apply_modes() -> io::Result<()> {
    ENTERED.store(true, Ordering::SeqCst);
    enable_raw_mode()?;
    // Bracketed paste: pasted text comes marked, read as one paste and not as keys
    // (a pasted newline would be Enter, a pasted `q` would quit).
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        Hide,
        EnableBracketedPaste
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(io::stdout(), MouseClicksAndDrags)?;
    }
    Ok(())
}

/// Mouse capture of what leet reads: presses, releases and the wheel (1000),
/// moves with a button held, drags (1002), reported in SGR (1006) or urxvt (1015)
/// coordinates past column 223. Not every move of the pointer (1003, which
/// crossterm's `EnableMouseCapture` asks for too): nothing reads them, and over
/// SSH each crossing of the window would be sent. `DisableMouseCapture` ends all.
struct MouseClicksAndDrags;

impl crossterm::Command for MouseClicksAndDrags {
    fn write_ansi(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        f.write_str("\x1b[?1000h\x1b[?1002h\x1b[?1015h\x1b[?1006h")
    }
}

/// Back to the terminal as it was: mouse capture and bracketed paste off, main
/// screen, cursor shown, raw mode off. Only the first call after entering writes
/// anything.
fn leave_modes() {
    if ENTERED.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            Show
        );
        let _ = disable_raw_mode();
    }
}

/// Leave raw mode and the alternate screen, show the cursor, and end the sampler's
/// child processes. Safe to call twice, and from any thread.
pub fn restore() {
    let _g = lock_briefly();
    leet_sampler::child::kill_all();
    leave_modes();
}

/// Restore the terminal and end the process with `code`, from any thread. A frame
/// being drawn is finished first; the loop draws nothing after.
pub fn exit_now(code: i32) -> ! {
    let _g = lock_briefly();
    leet_sampler::child::close();
    leave_modes();
    std::process::exit(code)
}

/// Unless the process has ended within [`QUIT_GRACE`], end it with `code` (see
/// [`exit_now`]): the loop may be stuck in long work, and a quit must quit.
pub fn exit_soon(code: i32) {
    if LEAVING.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("leet-quit".into())
        .spawn(move || {
            std::thread::sleep(QUIT_GRACE);
            exit_now(code);
        });
    if spawned.is_err() {
        exit_now(code);
    }
}

/// Stop the process as a terminal's ctrl+z does: leave the terminal as it was,
/// stop (SIGSTOP), and once continued (`fg`, SIGCONT) enter raw mode, the alternate
/// screen and mouse capture again and clear, so the next draw paints every cell.
///
/// # Errors
/// Terminal I/O errors on the way back.
pub fn suspend(term: &mut Tui) -> io::Result<()> {
    {
        let _g = lock_briefly();
        leave_modes();
    }
    // SAFETY: raise has no memory-safety preconditions; SIGSTOP stops the process
    // until a SIGCONT, then the call returns.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
    resume(term)
}

/// Enter the terminal's modes again and clear the screen, so the next draw paints
/// every cell: after a stop, whoever ran meanwhile may have changed them.
///
/// # Errors
/// Terminal I/O errors.
pub fn resume(term: &mut Tui) -> io::Result<()> {
    {
        let _g = lock_briefly();
        // Stopped by someone else (SIGSTOP from `kill`, a job scheduler, a
        // debugger), the terminal was never left, but the shell that took it put
        // it back in cooked mode; crossterm still counts raw mode as on and would
        // leave it so. Leaving it first makes entering it set raw mode again.
        if ENTERED.load(Ordering::SeqCst) {
            let _ = disable_raw_mode();
        }
        apply_modes()?;
    }
    // Not `term.clear()`: that asks the terminal where the cursor is and waits for
    // the answer on crossterm's reader, which never gets it (ours reads the input).
    // A resize to the current size clears the screen and forgets the last frame.
    let size = term.size()?;
    term.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

thread_local! {
    /// This thread runs third-party code on untrusted input under [`contained`]:
    /// a panic there is that input's error, not the program's end.
    static CONTAINED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (a third-party decoder on a file the run names: an image) so that a
/// panic in it is an error naming it, not the end of the viewer: the panic hook
/// leaves the terminal and the process alone for it, and says nothing (its text
/// would land on the screen drawn).
///
/// # Errors
/// The panic's message, where `f` panicked.
pub fn contained<R>(f: impl FnOnce() -> R + std::panic::UnwindSafe) -> Result<R, String> {
    let before = CONTAINED.with(|c| c.replace(true));
    let out = std::panic::catch_unwind(f);
    CONTAINED.with(|c| c.set(before));
    out.map_err(|e| {
        (e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panicked".to_owned())
    })
}

fn install_panic_hook() {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CONTAINED.with(std::cell::Cell::get) {
            return;
        }
        restore();
        prev(info);
        // A panic on any thread (input, tail, sampler) leaves the viewer broken:
        // end the process rather than keep drawing on a restored terminal.
        std::process::exit(101);
    }));
}

/// The quit signal received (0: none yet).
static QUIT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The quit signal received within `wait` from now (None: none). The terminal going
/// away (an SSH connection dropped) fails the loop's next draw, often before its
/// SIGHUP is handled: the exit is the signal's all the same.
#[must_use]
pub fn quit_signal_within(wait: Duration) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        match QUIT_SIGNAL.load(Ordering::SeqCst) {
            0 if t0.elapsed() < wait => std::thread::sleep(Duration::from_millis(5)),
            0 => return None,
            sig => return Some(sig),
        }
    }
}

/// Whether `e` says the terminal hung up: writing to a terminal whose other end
/// closed (an SSH connection dropped, the terminal window closed) fails with EIO.
#[must_use]
pub fn hung_up(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<io::Error>())
        .any(|e| e.raw_os_error() == Some(libc::EIO))
}

/// Signals as messages. SIGTERM, SIGHUP, SIGINT and SIGQUIT become `Msg::Signal`, so the
/// loop leaves cleanly and exits 128 + the signal; if it has not within
/// [`QUIT_GRACE`] (busy), or on a second such signal, the process leaves from here.
/// SIGTSTP becomes `Msg::Suspend`, SIGCONT `Msg::Continued` and SIGWINCH
/// `Msg::Resize` with the new size.
///
/// # Errors
/// When the handlers cannot be registered.
pub fn spawn_signals(tx: SyncSender<Msg>) -> io::Result<()> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGWINCH};
    // SIGQUIT (ctrl+\ in a cooked terminal, `kill -QUIT`) would dump core with the
    // terminal left raw: it quits as the others do.
    let mut quit = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT])?;
    // On their own thread: these wait for room in the channel, a quit never does.
    let mut job = signal_hook::iterator::Signals::new([SIGTSTP, SIGCONT, SIGWINCH])?;
    let quit_tx = tx.clone();
    std::thread::Builder::new()
        .name("leet-signals".into())
        .spawn(move || {
            for sig in quit.forever() {
                let _ = QUIT_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                if LEAVING.load(Ordering::SeqCst) {
                    exit_now(128 + sig);
                }
                if let Err(TrySendError::Disconnected(_)) = quit_tx.try_send(Msg::Signal(sig)) {
                    // The loop is gone: restore and leave ourselves.
                    exit_now(128 + sig);
                }
                exit_soon(128 + sig);
            }
        })?;
    std::thread::Builder::new()
        .name("leet-job-signals".into())
        .spawn(move || {
            for sig in job.forever() {
                let msg = match sig {
                    SIGTSTP => Msg::Suspend,
                    SIGCONT => Msg::Continued,
                    _ => match size() {
                        Ok((w, h)) => Msg::Resize(w, h),
                        Err(_) => continue,
                    },
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic under `contained` is its error, and the thread goes on.
    #[test]
    fn a_panic_in_contained_code_is_an_error() {
        let r: Result<u8, String> = contained(|| panic!("bad huffman table"));
        assert_eq!(r, Err("bad huffman table".to_owned()));
        assert_eq!(contained(|| 7), Ok(7));
        assert!(!CONTAINED.with(std::cell::Cell::get));
    }

    #[test]
    fn a_terminal_that_reports_no_size_is_laid_out_for_the_environment_s_or_80x24() {
        assert_eq!(usable_size((120, 40), Some("80"), Some("24")), (120, 40));
        assert_eq!(usable_size((0, 0), Some("100"), Some("30")), (100, 30));
        assert_eq!(usable_size((0, 0), Some(" 90 "), None), (90, 24));
        assert_eq!(usable_size((0, 0), None, None), (80, 24));
        assert_eq!(usable_size((0, 0), Some("0"), Some("x")), (80, 24));
        assert_eq!(usable_size((0, 0), Some("99999"), Some("-3")), (80, 24));
        assert_eq!(usable_size((132, 0), None, Some("50")), (132, 50));
    }
    use ratatui::layout::Rect;
    use ratatui::widgets::{Block, Paragraph};
    use ratatui::{TerminalOptions, Viewport};

    /// Every write call it gets, as its bytes (shared with the test).
    #[derive(Default, Clone)]
    struct Writes(std::sync::Arc<Mutex<Vec<Vec<u8>>>>);

    impl Writes {
        fn taken(&self) -> Vec<Vec<u8>> {
            self.0.lock().expect("writes").clone()
        }
    }

    impl Write for Writes {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("writes").push(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn terminal(live: fn() -> bool) -> (Terminal<CrosstermBackend<FrameOut<Writes>>>, Writes) {
        let writes = Writes::default();
        let backend = CrosstermBackend::new(FrameOut::new(writes.clone(), live));
        let t = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, 200, 50)),
            },
        )
        .expect("terminal");
        (t, writes)
    }

    fn draw(t: &mut Terminal<CrosstermBackend<FrameOut<Writes>>>, text: &str) {
        t.draw(|f| {
            let text = text.repeat(2000);
            f.render_widget(
                Paragraph::new(text)
                    .wrap(ratatui::widgets::Wrap { trim: false })
                    .block(Block::bordered().title("frame")),
                f.area(),
            );
        })
        .expect("draw");
    }

    #[test]
    fn a_frame_reaches_the_terminal_in_one_write() {
        let (mut t, writes) = terminal(|| true);
        draw(&mut t, "abc ");
        draw(&mut t, "xyz ");
        let writes = writes.taken();
        // Two whole frames of 200×50 cells (over 10 KiB each), one write each.
        assert_eq!(
            writes.len(),
            2,
            "{:?}",
            writes.iter().map(Vec::len).collect::<Vec<_>>()
        );
        assert!(writes.iter().all(|w| w.len() > 10_000));
        let all = String::from_utf8_lossy(&writes[1]).into_owned();
        assert!(all.contains("xyz") && !all.contains("abc"));
    }

    #[test]
    fn a_frame_left_when_the_terminal_is_gone_is_thrown_away() {
        let (mut t, writes) = terminal(|| false);
        draw(&mut t, "abc ");
        assert!(writes.taken().is_empty());
    }

    #[test]
    fn a_huge_frame_is_written_in_bounded_pieces() {
        let mut f = FrameOut::new(Writes::default(), || true);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            f.write_all(&chunk).expect("write");
        }
        assert!(f.buf.len() < FRAME_OUT_MAX);
        f.flush().expect("flush");
        assert!(f.buf.is_empty());
        let writes = f.out.taken();
        assert_eq!(writes.iter().map(Vec::len).sum::<usize>(), 10 << 20);
        assert!(writes.iter().all(|w| w.len() <= FRAME_OUT_MAX));
    }
}
