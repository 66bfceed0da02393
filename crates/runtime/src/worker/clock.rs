//! The time a task's loop reads (Connect's `Time`, which `WorkerSinkTask` and
//! `WorkerSourceTask` are handed so that `MockTime` can drive them in their tests).
//!
//! The loops ask a [`Clock`] for "now" wherever time decides what they do next: when offsets
//! are committed (`offset.flush.interval.ms`), when a batch that failed with a retriable error
//! is handed to `put` again, when a throttled batch may go. [`SystemClock`] is the monotonic
//! clock; [`ManualClock`] moves only when told to, so a unit test steps a loop through minutes
//! of its schedule in no time.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A source of monotonic time for a task's loop.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Instant;

    /// The time elapsed since `earlier` (zero when `earlier` is later than now).
    fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }

    /// Waits up to `timeout` with `wait`, a blocking wait that returns early, with its answer,
    /// when what it waits for happens (a stop request, a resume); returns that answer. The
    /// system clock lets `wait` block; a [`ManualClock`] moves by `timeout` and asks `wait`
    /// without blocking (`Duration::ZERO`).
    fn wait(&self, timeout: Duration, wait: &dyn Fn(Duration) -> bool) -> bool {
        wait(timeout)
    }
}

/// The system's monotonic clock ([`Instant::now`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Blocks in `wait`; on a runtime worker thread (an async task's step) the runtime's
    /// work moves to another thread meanwhile (`block_in_place`).
    fn wait(&self, timeout: Duration, wait: &dyn Fn(Duration) -> bool) -> bool {
        tokio::task::block_in_place(|| wait(timeout))
    }
}

/// A clock that stands still until [`ManualClock::advance`] moves it (Connect's `MockTime`).
/// Starts at the instant it was created.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        }
    }
}

impl ManualClock {
    /// A clock standing at the current instant.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        *self.elapsed.lock().unwrap_or_else(|e| e.into_inner()) += by;
    }

    /// How far the clock was moved since it was created.
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn wait(&self, timeout: Duration, wait: &dyn Fn(Duration) -> bool) -> bool {
        self.advance(timeout);
        wait(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced() {
        let clock = ManualClock::new();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(Duration::from_secs(90));
        assert_eq!(clock.since(t0), Duration::from_secs(90));
        assert_eq!(
            clock.since(clock.now() + Duration::from_secs(1)),
            Duration::ZERO
        );
    }
}
