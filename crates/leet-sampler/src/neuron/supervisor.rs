//! The `neuron-monitor` child, shared by the supervisor thread and the collector: the
//! supervisor starts it, restarts it with backoff when it exits, and is woken by the
//! child's reader when its stdout closes.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{
    ConfigFile, DRAIN_AFTER_EXIT, EXIT_POLL, HEALTHY_RUN, MAX_EVENTS, MAX_LINES, MAX_LINE_BYTES,
    SUPERVISE_EVERY,
};
use crate::child::{Backoff, Stream, Taken};

// ---------------------------------------------------------------------------------------
// The child, shared by the supervisor thread and the collector.

pub(super) struct Shared {
    pub(super) stream: Option<Stream>,
    pub(super) started_at: Instant,
    /// When the running child was seen to exit (its output is drained first).
    pub(super) exited_at: Option<Instant>,
    /// Lines taken from streams that have since been dropped.
    pub(super) pending: Taken,
    /// Exits and restarts since the last sample.
    pub(super) events: Vec<String>,
    pub(super) events_lost: usize,
    /// Children started so far.
    pub(super) starts: u32,
    /// When the next start is due while no child runs.
    pub(super) next_start: Option<Instant>,
    pub(super) config: ConfigFile,
    pub(super) stopping: bool,
}

impl Shared {
    pub(super) fn event(&mut self, e: String) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(e);
        } else {
            self.events_lost += 1;
        }
    }

    /// Move what the current stream has read into `pending`.
    pub(super) fn drain_stream(&mut self) {
        if let Some(s) = &mut self.stream {
            let t = s.take();
            merge(&mut self.pending, t);
        }
    }
}

/// Append `t` to `into`, keeping at most [`MAX_LINES`] lines (dropping the oldest).
pub(super) fn merge(into: &mut Taken, t: Taken) {
    into.lines.extend(t.lines);
    let extra = into.lines.len().saturating_sub(MAX_LINES);
    into.lines.drain(..extra);
    into.dropped += t.dropped + extra as u64;
    into.oversized += t.oversized;
    into.closed = t.closed;
}

pub(super) fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 || s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// What wakes the supervisor before its next look is due.
pub(super) enum Wake {
    /// The collector is going.
    Stop,
    /// The running child's stdout closed (sent by its reader thread).
    Closed,
}

/// Start, watch and restart the child until the collector goes.
pub(super) fn supervise(
    shared: &Mutex<Shared>,
    program: &Path,
    wake: &mpsc::Receiver<Wake>,
    notify: &mpsc::Sender<Wake>,
) {
    let name = program
        .file_name()
        .map_or_else(|| "neuron-monitor".into(), |n| n.to_string_lossy());
    let mut backoff = Backoff::new(HEALTHY_RUN);
    let mut wait = Duration::ZERO;
    // The running child's stdout has closed: it is exiting, so look again soon.
    let mut closed = false;
    loop {
        match wake.recv_timeout(wait) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Wake::Closed) => closed = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
        wait = SUPERVISE_EVERY;
        let mut s = lock(shared);
        if s.stopping {
            break;
        }
        let now = Instant::now();
        if s.stream.is_some() {
            let status = s.stream.as_mut().and_then(Stream::exited);
            let Some(status) = status else {
                if closed {
                    wait = EXIT_POLL;
                }
                continue;
            };
            s.drain_stream();
            let exited_at = *s.exited_at.get_or_insert(now);
            if !s.pending.closed && now.saturating_duration_since(exited_at) < DRAIN_AFTER_EXIT {
                wait = EXIT_POLL.max(DRAIN_AFTER_EXIT / 5);
                continue; // its last lines may still be in the pipe
            }
            let lived = exited_at.saturating_duration_since(s.started_at);
            s.drain_stream();
            s.stream = None; // kills what is left of its group, reaps it
            s.exited_at = None;
            closed = false;
            let delay = backoff.after(lived);
            let n = s.starts;
            s.event(format!(
                "{name} exited ({status}) after {}; restart {n} in {}",
                secs(lived),
                secs(delay)
            ));
            s.next_start = Some(now + delay);
        } else if s.next_start.is_some_and(|t| now >= t) {
            // A notice of the previous child is stale now.
            while let Ok(w) = wake.try_recv() {
                if matches!(w, Wake::Stop) {
                    return stop(&mut s);
                }
            }
            let started = s.config.write().and_then(|()| {
                let arg = s.config.arg().to_string();
                let notify = notify.clone();
                let on_close: Box<dyn FnOnce() + Send> = Box::new(move || {
                    let _ = notify.send(Wake::Closed);
                });
                Stream::spawn_with_close_notice(
                    program,
                    &["-c", &arg],
                    MAX_LINES,
                    MAX_LINE_BYTES,
                    Some(on_close),
                )
                .map_err(|e| e.to_string())
            });
            closed = false;
            match started {
                Ok(stream) => {
                    s.stream = Some(stream);
                    s.started_at = now;
                    s.next_start = None;
                    s.pending.closed = false;
                    s.starts += 1;
                    if s.starts > 1 {
                        let n = s.starts - 1;
                        s.event(format!("{name} restarted (restart {n})"));
                    }
                }
                Err(e) => {
                    let delay = backoff.after(Duration::ZERO);
                    s.event(format!(
                        "cannot start {name}: {e}; retry in {}",
                        secs(delay)
                    ));
                    s.next_start = Some(now + delay);
                }
            }
        }
        if let Some(t) = s.next_start {
            wait = t.saturating_duration_since(now);
        }
    }
    stop(&mut lock(shared));
}

/// The supervisor's last act: no child, no config file.
pub(super) fn stop(s: &mut Shared) {
    s.stream = None;
    s.config.remove();
}
