//! A task's rate limits at run time (issue #36, settings in [`crate::config::throttle`]): a
//! task books each batch before it moves (a source's polled records before they are sent, a
//! sink's before `put`) and waits, on its own thread and without spinning, until the batch fits
//! its rate; a stop request ends the wait. The limits can change while the task runs (a
//! connector config update reaches the running tasks, see `Worker::start_connector`).
//!
//! The scheduling is a virtual clock per limit (GCRA): a batch of `n` units may go at
//! `max(next, now - TOLERANCE)` and moves `next` on by `n / rate` seconds. Over any long
//! interval the task moves at most `rate` units a second plus one batch and [`TOLERANCE`]'s
//! worth; an idle task builds no more credit than that.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::throttle::Limits;

use super::task::TaskControl;

/// A throttled task's limits and what they cost it, as the status body's Tributary field
/// `throttle` and `/metrics` report them (only for a task with a limit).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThrottleInfo {
    /// `tributary.throttle.records.per.second`, when set.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub records_per_second: Option<f64>,
    /// `tributary.throttle.bytes.per.second`, when set.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bytes_per_second: Option<f64>,
    /// Milliseconds the task waited for its limits since it started.
    pub throttled_ms_total: u64,
    /// Whether it waited for them within the last 2 s (it runs at its limit).
    pub at_limit: bool,
}

/// Waits shorter than this are not slept: the batch goes and the booking stays, so a later
/// batch waits for the sum. A timed wait costs tens of microseconds beyond what it asks for
/// (timer slack, wake-up), which at 100,000 records/s in batches of one would be the whole
/// budget (the `throttle` bench held such a task to 19,000 records/s).
pub const MIN_WAIT: Duration = Duration::from_millis(2);

/// How far behind the clock a limit's schedule may fall: a task that overslept a wait (timer
/// slack, a busy machine) catches up that much; an idle task builds no more credit. Without
/// it every oversleep was lost, and a task limited to 10,000 records/s moved 9,336.
pub const TOLERANCE: Duration = Duration::from_millis(50);

/// One task's limits and what they cost it.
#[derive(Debug)]
pub struct Throttle {
    state: Mutex<State>,
    /// Nanoseconds spent waiting for the limits, in total.
    throttled_ns: AtomicU64,
    /// Epoch milliseconds of the last wait's end (0: never throttled).
    last_throttled_ms: AtomicU64,
}

#[derive(Debug)]
struct State {
    limits: Limits,
    /// When the next record, and the next byte, may go.
    next_record: Option<Instant>,
    next_byte: Option<Instant>,
}

impl Throttle {
    /// A throttle with `limits`.
    pub fn new(limits: Limits) -> Throttle {
        Throttle {
            state: Mutex::new(State {
                limits,
                next_record: None,
                next_byte: None,
            }),
            throttled_ns: AtomicU64::new(0),
            last_throttled_ms: AtomicU64::new(0),
        }
    }

    /// Replaces the limits (a connector config update); what was booked stays booked.
    pub fn set_limits(&self, limits: Limits) {
        let mut s = self.state.lock().unwrap();
        if s.limits.records_per_second != limits.records_per_second {
            s.next_record = None;
        }
        if s.limits.bytes_per_second != limits.bytes_per_second {
            s.next_byte = None;
        }
        s.limits = limits;
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.state.lock().unwrap().limits
    }

    /// Books `records` records of `bytes` bytes at `now`; returns how long to wait before they
    /// may go: zero when they fit the rates, or when the wait is below [`MIN_WAIT`] (the
    /// booking stays, so the debt is waited for by a later batch).
    pub fn reserve(&self, records: u64, bytes: u64, now: Instant) -> Duration {
        let wait = self.book(records, bytes, now);
        if wait < MIN_WAIT {
            Duration::ZERO
        } else {
            wait
        }
    }

    /// Books and returns the exact wait.
    fn book(&self, records: u64, bytes: u64, now: Instant) -> Duration {
        let mut s = self.state.lock().unwrap();
        let limits = s.limits;
        let book = |next: &mut Option<Instant>, rate: Option<f64>, units: u64| -> Duration {
            let Some(rate) = rate else {
                return Duration::ZERO;
            };
            if units == 0 {
                return Duration::ZERO;
            }
            // Up to TOLERANCE behind `now`: a wait that overslept is made up for, and an idle
            // task builds no more credit than that.
            let earliest = now.checked_sub(TOLERANCE).unwrap_or(now);
            let start = next.map_or(now, |n| n.max(earliest));
            *next = Some(start + Duration::from_secs_f64(units as f64 / rate));
            start.saturating_duration_since(now)
        };
        let a = book(&mut s.next_record, limits.records_per_second, records);
        let b = book(&mut s.next_byte, limits.bytes_per_second, bytes);
        a.max(b)
    }

    /// Books the batch and waits until it may go, cut short by a stop request; returns false
    /// when the task is stopping.
    pub fn wait(&self, control: &TaskControl, records: u64, bytes: u64) -> bool {
        self.wait_on(&crate::worker::clock::SystemClock, control, records, bytes)
    }

    /// [`Self::wait`] on `clock`'s time.
    pub fn wait_on(
        &self,
        clock: &dyn crate::worker::clock::Clock,
        control: &TaskControl,
        records: u64,
        bytes: u64,
    ) -> bool {
        let wait = self.reserve(records, bytes, clock.now());
        if wait.is_zero() {
            return !control.is_stopping();
        }
        let began = clock.now();
        let stopping = clock.wait(wait, &|d| control.wait_for_stop(d));
        self.throttled_ns
            .fetch_add(clock.since(began).as_nanos() as u64, Ordering::Relaxed);
        self.last_throttled_ms.store(
            u64::try_from(crate::worker::metrics::now_ms()).unwrap_or(0),
            Ordering::Relaxed,
        );
        !stopping
    }

    /// Counts `wait` as time spent throttled without blocking (a sink task's batch waits as a
    /// scheduled redelivery does, its loop polling on meanwhile).
    pub fn note_throttled(&self, wait: Duration) {
        self.throttled_ns
            .fetch_add(wait.as_nanos() as u64, Ordering::Relaxed);
        self.last_throttled_ms.store(
            u64::try_from(crate::worker::metrics::now_ms()).unwrap_or(0) + wait.as_millis() as u64,
            Ordering::Relaxed,
        );
    }

    /// What [`ThrottleInfo`] shows at epoch millisecond `now_ms`; `None` without a limit.
    pub fn info(&self, now_ms: u64) -> Option<ThrottleInfo> {
        let limits = self.limits();
        limits.any().then(|| ThrottleInfo {
            records_per_second: limits.records_per_second,
            bytes_per_second: limits.bytes_per_second,
            throttled_ms_total: self.throttled().as_millis() as u64,
            at_limit: self.last_throttled_ms() + 2_000 > now_ms && self.last_throttled_ms() > 0,
        })
    }

    /// The time spent waiting for the limits so far.
    pub fn throttled(&self) -> Duration {
        Duration::from_nanos(self.throttled_ns.load(Ordering::Relaxed))
    }

    /// Epoch milliseconds of the last wait (0: never): a task throttled within the last second
    /// or so is at its limit.
    pub fn last_throttled_ms(&self) -> u64 {
        self.last_throttled_ms.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(records: Option<f64>, bytes: Option<f64>) -> Limits {
        Limits {
            records_per_second: records,
            bytes_per_second: bytes,
        }
    }

    #[test]
    fn batches_are_spaced_by_their_cost_and_idle_time_builds_no_credit() {
        let t = Throttle::new(limits(Some(1000.0), None));
        let t0 = Instant::now();
        // The first batch goes at once; the next waits for what the first cost (100 ms).
        assert_eq!(t.reserve(100, 0, t0), Duration::ZERO);
        assert_eq!(t.reserve(100, 0, t0), Duration::from_millis(100));
        // Later, the clock moved past the bookings: no wait, and no more credit than the
        // tolerance (50 ms of the 500 ms the batch cost).
        let later = t0 + Duration::from_secs(10);
        assert_eq!(t.reserve(500, 0, later), Duration::ZERO);
        assert_eq!(t.reserve(1, 0, later), Duration::from_millis(450));
    }

    #[test]
    fn the_stricter_limit_decides_and_a_change_applies_at_once() {
        let t = Throttle::new(limits(Some(1000.0), Some(1000.0)));
        let t0 = Instant::now();
        t.reserve(10, 500, t0);
        // 10 records cost 10 ms, 500 bytes 500 ms: the bytes decide.
        assert_eq!(t.reserve(1, 1, t0), Duration::from_millis(500));
        t.set_limits(limits(None, None));
        assert_eq!(t.reserve(1_000_000, 1_000_000, t0), Duration::ZERO);
    }

    #[test]
    fn over_a_simulated_minute_the_rate_holds() {
        for rate in [1_000.0, 10_000.0, 100_000.0] {
            let t = Throttle::new(limits(Some(rate), None));
            let start = Instant::now();
            let mut now = start;
            let mut moved = 0u64;
            // A task that could move 10x the limit in batches of 500.
            while now < start + Duration::from_secs(60) {
                now += t.reserve(500, 0, now);
                moved += 500;
                now += Duration::from_secs_f64(500.0 / (rate * 10.0));
            }
            let achieved = moved as f64 / 60.0;
            assert!(
                (achieved - rate).abs() / rate < 0.05,
                "rate {rate}: {achieved} records/s"
            );
        }
    }

    /// Batches of one record at 100,000/s: short waits are not slept but add up, so the task
    /// sleeps a few times a second (not once a record) and the rate still holds.
    #[test]
    fn tiny_waits_add_up_instead_of_each_being_slept() {
        let t = Throttle::new(limits(Some(100_000.0), None));
        let start = Instant::now();
        let mut now = start;
        let (mut moved, mut sleeps) = (0u64, 0u32);
        while now < start + Duration::from_secs(1) {
            let wait = t.reserve(1, 0, now);
            if !wait.is_zero() {
                assert!(wait >= MIN_WAIT);
                sleeps += 1;
                now += wait;
            }
            moved += 1;
            // The task itself could go a hundred times faster.
            now += Duration::from_nanos(100);
        }
        assert!(
            (95_000..=105_000).contains(&moved),
            "{moved} records in a second"
        );
        assert!(sleeps <= 600, "{sleeps} sleeps");
    }

    #[test]
    fn a_stop_ends_the_wait() {
        let t = Throttle::new(limits(Some(1.0), None));
        let control = TaskControl::new(crate::config_records::TargetState::Started);
        assert!(t.wait(&control, 10, 0), "the first batch goes at once");
        control.stop();
        let began = Instant::now();
        assert!(!t.wait(&control, 1, 0), "stopping");
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "not the 10 s the batch cost"
        );
    }
}
