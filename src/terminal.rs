//! Entering and leaving the terminal's raw mode and alternate screen. One
//! `restore()` serves normal exit, errors, panics and signals.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::msg::Msg;

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

static ENTERED: AtomicBool = AtomicBool::new(false);

/// Raw mode, alternate screen, mouse capture, hidden cursor; installs the panic
/// hook that restores the terminal before the panic message is printed.
///
/// # Errors
/// Terminal I/O errors (the terminal is restored first).
pub fn enter() -> io::Result<Tui> {
    install_panic_hook();
    ENTERED.store(true, Ordering::SeqCst);
    let r = (|| {
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, Hide)?;
        Terminal::new(CrosstermBackend::new(io::stdout()))
    })();
    if r.is_err() {
        restore();
    }
    r
}

/// Leave raw mode and the alternate screen, show the cursor, and end the sampler's
/// child processes. Safe to call twice.
pub fn restore() {
    crate::source::sampler::child::kill_all();
    if ENTERED.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            io::stdout(),
            DisableMouseCapture,
            LeaveAlternateScreen,
            Show
        );
        let _ = disable_raw_mode();
    }
}

fn install_panic_hook() {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        prev(info);
        // A panic on any thread (input, tail, sampler) leaves the viewer broken:
        // end the process rather than keep drawing on a restored terminal.
        std::process::exit(101);
    }));
}

/// SIGTERM, SIGHUP and SIGINT become `Msg::Signal`, so the loop leaves cleanly.
///
/// # Errors
/// When the handlers cannot be registered.
pub fn spawn_signals(tx: SyncSender<Msg>) -> io::Result<JoinHandle<()>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])?;
    std::thread::Builder::new()
        .name("leet-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if tx.send(Msg::Signal(sig)).is_err() {
                    // The loop is gone: restore and leave ourselves.
                    restore();
                    std::process::exit(128 + sig);
                }
            }
        })
}
