//! The event loop: one channel, producers on threads (input, tail, ticker,
//! signals), updates applied in order, one draw per drained batch.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, SyncSender};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossterm::event::{self, Event};

use crate::app::keymap::Keymap;
use crate::app::{App, Options};
use crate::cli::ViewArgs;
use crate::msg::Msg;
use crate::source::file::{resolve, SourceError};
use crate::source::tail::{self, TailOptions};
use crate::terminal;
use crate::view;

/// Longest the loop applies queued messages before drawing (keeps a big load
/// drawing progress).
const DRAIN_BUDGET: Duration = Duration::from_millis(40);

fn spawn_input(tx: SyncSender<Msg>) {
    let _ = std::thread::Builder::new()
        .name("leet-input".into())
        .spawn(move || loop {
            let msg = match event::read() {
                Ok(Event::Key(k)) => Msg::Key(k),
                Ok(Event::Mouse(m)) => Msg::Mouse(m),
                Ok(Event::Resize(w, h)) => Msg::Resize(w, h),
                Ok(_) => continue,
                Err(e) => Msg::SourceError(format!("terminal input: {e}")),
            };
            if tx.send(msg).is_err() {
                return;
            }
        });
}

fn spawn_ticker(tx: SyncSender<Msg>) {
    let _ = std::thread::Builder::new()
        .name("leet-tick".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            if tx.send(Msg::Tick(tail::unix_now())).is_err() {
                return;
            }
        });
}

/// Run the viewer until the user quits.
///
/// # Errors
/// A path that leads to no run (before the terminal changes mode), terminal I/O.
pub fn run(args: &ViewArgs, keymap: Keymap) -> anyhow::Result<ExitCode> {
    let path = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    // Fail before touching the terminal when the path leads nowhere.
    match resolve(&path) {
        Ok(_) => {}
        Err(e @ (SourceError::NotFound { .. } | SourceError::NoRun { .. })) => return Err(e.into()),
        Err(e) => return Err(e.into()),
    }
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    #[allow(clippy::cast_precision_loss)]
    let mut app = App::new(Options {
        keymap,
        stale_after: args.stale_after as f64,
        color,
        max_points: args.max_points,
    });
    app.update(Msg::Tick(tail::unix_now()));

    let (tx, rx) = mpsc::sync_channel::<Msg>(16);
    let mut term = terminal::enter().context("cannot set up the terminal")?;
    let result = (|| -> anyhow::Result<()> {
        let size = term.size()?;
        app.update(Msg::Resize(size.width, size.height));
        spawn_input(tx.clone());
        spawn_ticker(tx.clone());
        let _ = terminal::spawn_signals(tx.clone());
        tail::spawn_tail(path, tx.clone(), TailOptions::default());
        drop(tx);
        term.draw(|f| view::render(f, &app))?;
        loop {
            let Ok(first) = rx.recv() else {
                return Ok(());
            };
            let start = Instant::now();
            let mut dirty = false;
            let mut quit = false;
            for msg in std::iter::once(first).chain(std::iter::from_fn(|| {
                if start.elapsed() < DRAIN_BUDGET {
                    rx.try_recv().ok()
                } else {
                    None
                }
            })) {
                let fx = app.update(msg);
                dirty |= fx.redraw;
                if fx.quit {
                    quit = true;
                    break;
                }
            }
            if quit {
                return Ok(());
            }
            if dirty {
                term.draw(|f| view::render(f, &app))?;
            }
        }
    })();
    terminal::restore();
    result.map(|()| ExitCode::SUCCESS)
}
