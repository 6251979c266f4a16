//! The time source of the sampler's timing contracts (the ticker's absolute deadlines,
//! the per-source deadline of a sample): the system clock in production, a
//! [`ManualClock`] in tests, so that a contract is checked exactly and at once rather
//! than against the wall clock of a machine that may be loaded.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What the sampler reads the time from, sleeps on, and waits for its workers with.
pub trait Clock: Send + 'static {
    /// The current time.
    fn now(&self) -> Instant;

    /// Block until `until` (at once if it has passed).
    fn sleep_until(&self, until: Instant);

    /// The next message on `rx`, or [`RecvTimeoutError::Timeout`] once `until` has
    /// passed without one.
    ///
    /// # Errors
    /// `Timeout` at `until`; `Disconnected` when every sender is gone.
    fn recv_until<T>(&self, rx: &Receiver<T>, until: Instant) -> Result<T, RecvTimeoutError>;
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, until: Instant) {
        let now = Instant::now();
        if until > now {
            std::thread::sleep(until - now);
        }
    }

    fn recv_until<T>(&self, rx: &Receiver<T>, until: Instant) -> Result<T, RecvTimeoutError> {
        let now = Instant::now();
        if now >= until {
            return Err(RecvTimeoutError::Timeout);
        }
        rx.recv_timeout(until - now)
    }
}

/// A clock that moves only when told: sleeping moves it to the end of the sleep at
/// once, and a wait for a message that is not there yet ends at its deadline at once.
/// Clones share one time, so a fake collector can spend time on it too.
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    elapsed: Arc<Mutex<Duration>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    /// A clock at an arbitrary start; see [`ManualClock::elapsed`].
    #[must_use]
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            elapsed: Arc::default(),
        }
    }

    /// The time since this clock was made (only what it was moved by).
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Move the clock forward by `by` (work that takes time, in a test).
    pub fn advance(&self, by: Duration) {
        *self.elapsed.lock().unwrap_or_else(PoisonError::into_inner) += by;
    }

    fn move_to(&self, at: Instant) {
        let mut e = self.elapsed.lock().unwrap_or_else(PoisonError::into_inner);
        *e = (*e).max(at.saturating_duration_since(self.start));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn sleep_until(&self, until: Instant) {
        self.move_to(until);
    }

    fn recv_until<T>(&self, rx: &Receiver<T>, until: Instant) -> Result<T, RecvTimeoutError> {
        match rx.try_recv() {
            Ok(m) => Ok(m),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                self.move_to(until);
                Err(RecvTimeoutError::Timeout)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_never_back() {
        let c = ManualClock::new();
        let t0 = c.now();
        assert_eq!(c.now(), t0);
        c.advance(Duration::from_millis(5));
        c.sleep_until(t0 + Duration::from_millis(20));
        assert_eq!(c.elapsed(), Duration::from_millis(20));
        c.sleep_until(t0); // in the past: no move
        assert_eq!(c.now(), t0 + Duration::from_millis(20));
    }

    #[test]
    fn a_manual_wait_takes_what_is_there_else_ends_at_its_deadline() {
        let c = ManualClock::new();
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send(1).unwrap();
        let until = c.now() + Duration::from_millis(300);
        assert_eq!(c.recv_until(&rx, until), Ok(1));
        assert_eq!(c.elapsed(), Duration::ZERO);
        assert_eq!(c.recv_until(&rx, until), Err(RecvTimeoutError::Timeout));
        assert_eq!(c.elapsed(), Duration::from_millis(300));
        drop(tx);
        assert_eq!(
            c.recv_until(&rx, until),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
