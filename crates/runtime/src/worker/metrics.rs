//! The measurements behind Connect's task and worker metric groups: what a task thread records
//! as it works, and what the worker counts as it starts instances. The `/metrics` scrape
//! (`rest/metrics.rs`) reads them and names them as Prometheus' JMX exporter names Connect's
//! MBeans.
//!
//! - [`TaskMetrics`]: `connector-task-metrics` (Connect's `WorkerTask.TaskMetricsGroup`),
//!   `source-task-metrics` (`AbstractWorkerSourceTask.SourceTaskMetricsGroup`),
//!   `sink-task-metrics` (`WorkerSinkTask.SinkTaskMetricsGroup`), and the task's librdkafka
//!   client statistics;
//! - [`ErrorMetrics`]: `task-error-metrics` (Connect's `ErrorHandlingMetrics`);
//! - [`WorkerMetrics`]: the startup counters of `connect-worker-metrics`
//!   (`WorkerMetricsGroup`).
//!
//! Connect computes averages, maximums and ratios over a sliding window (two samples of
//! `metrics.sample.window.ms`); these are over the life of the task instance on this worker
//! (since its counters were created), and Prometheus' `rate()` over the `_total` series gives
//! the windowed rates.

use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::statistics::Statistics;

use crate::storage::status::State;

/// Durations of one kind of call: how many, their sum and the longest (µs).
#[derive(Debug, Default)]
pub struct Timing {
    count: AtomicU64,
    total_us: AtomicU64,
    max_us: AtomicU64,
}

impl Timing {
    /// Records one call that took `d`.
    pub fn record(&self, d: Duration) {
        let us = d.as_micros().min(u128::from(u64::MAX)) as u64;
        self.count.fetch_add(1, Ordering::Relaxed);
        self.total_us.fetch_add(us, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
    }
    /// Calls recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
    /// The mean duration in ms (NaN before the first call, as Connect's `Avg` without samples).
    pub fn avg_ms(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            return f64::NAN;
        }
        self.total_us.load(Ordering::Relaxed) as f64 / n as f64 / 1000.0
    }
    /// The longest duration in ms (NaN before the first call).
    pub fn max_ms(&self) -> f64 {
        if self.count() == 0 {
            return f64::NAN;
        }
        self.max_us.load(Ordering::Relaxed) as f64 / 1000.0
    }
}

/// Sizes of batches (records per `poll` or `put`): how many, their sum and the largest.
#[derive(Debug, Default)]
pub struct Sizes {
    count: AtomicU64,
    total: AtomicU64,
    max: AtomicU64,
}

impl Sizes {
    /// Records a batch of `n` records.
    pub fn record(&self, n: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(n, Ordering::Relaxed);
        self.max.fetch_max(n, Ordering::Relaxed);
    }
    /// Mean batch size (NaN before the first batch).
    pub fn avg(&self) -> f64 {
        let n = self.count.load(Ordering::Relaxed);
        if n == 0 {
            return f64::NAN;
        }
        self.total.load(Ordering::Relaxed) as f64 / n as f64
    }
    /// Largest batch (NaN before the first batch).
    pub fn max(&self) -> f64 {
        if self.count.load(Ordering::Relaxed) == 0 {
            return f64::NAN;
        }
        self.max.load(Ordering::Relaxed) as f64
    }
}

/// Time spent running and paused since the instance's counters were created, for
/// `running-ratio` and `pause-ratio` (Connect's `TaskMetricsGroup.StateTracker`).
#[derive(Debug)]
struct StateClock {
    since: Instant,
    current: Option<State>,
    created: Instant,
    running: Duration,
    paused: Duration,
}

impl StateClock {
    fn new(now: Instant) -> StateClock {
        StateClock {
            since: now,
            current: None,
            created: now,
            running: Duration::ZERO,
            paused: Duration::ZERO,
        }
    }
    fn close_span(&mut self, now: Instant) {
        let span = now.saturating_duration_since(self.since);
        match self.current {
            Some(State::Running) => self.running += span,
            Some(State::Paused) => self.paused += span,
            _ => {}
        }
        self.since = now;
    }
    fn ratios(&self, now: Instant) -> (f64, f64) {
        let mut c = StateClock { ..*self };
        c.close_span(now);
        let total = now.saturating_duration_since(c.created).as_secs_f64();
        if total <= 0.0 {
            return (0.0, 0.0);
        }
        (
            c.running.as_secs_f64() / total,
            c.paused.as_secs_f64() / total,
        )
    }
}

/// What kind of task the metrics belong to (set when its loop starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    Source,
    Sink,
}

/// A task's measurements (see the module docs for the Connect groups they make up). Shared
/// by the task thread, its librdkafka client's statistics callback and the scrape.
#[derive(Debug)]
pub struct TaskMetrics {
    kind: AtomicU8,
    clock: Mutex<StateClock>,
    /// Records per `poll` (source) or `put` (sink): `batch-size-avg` / `-max`.
    pub batch_sizes: Sizes,
    /// Offset commits: `offset-commit-avg-time-ms` / `-max-time-ms`.
    pub commit_time: Timing,
    /// Offset commits that succeeded / failed (`offset-commit-success-percentage`, …).
    pub commit_success: AtomicU64,
    pub commit_failure: AtomicU64,
    /// Source: records returned by `poll` (`source-record-poll-total`).
    pub poll_total: AtomicU64,
    /// Source: records handed to the producer after the transformations
    /// (`source-record-write-total`).
    pub write_total: AtomicU64,
    /// Source: `poll` durations (`poll-batch-avg-time-ms` / `-max-time-ms`).
    pub poll_time: Timing,
    /// Source: records sent and not yet acknowledged (`source-record-active-count`), and the
    /// most seen (`source-record-active-count-max`).
    pub active: AtomicI64,
    pub active_max: AtomicI64,
    /// Sink: records read from Kafka (`sink-record-read-total`).
    pub read_total: AtomicU64,
    /// Sink: records handed to `put` (`sink-record-send-total`).
    pub send_total: AtomicU64,
    /// Sink: `put` durations (`put-batch-avg-time-ms` / `-max-time-ms`).
    pub put_time: Timing,
    /// Sink: offset commits completed (`offset-commit-completion-total`).
    pub commit_completion_total: AtomicU64,
    /// Sink: commit attempts (`offset-commit-seq-no`).
    pub commit_seq_no: AtomicU64,
    /// Sink: partitions assigned to the task's consumer (`partition-count`).
    pub partition_count: AtomicI64,
    /// When the call into the task running now ([`TaskCall`]) began, ms since the epoch (0:
    /// none running).
    call_started_ms: AtomicI64,
    /// Which call that is ([`TaskCall::code`]).
    call: AtomicU8,
    /// The task's current instance ([`Self::begin_instance`]): only its calls are tracked, so
    /// an abandoned instance finishing on its own never marks or clears the next one's.
    instance: AtomicU64,
    /// Steps of an async task's futures that blocked a runtime thread (issue #43), and the
    /// longest, ms.
    pub blocking_steps: AtomicU64,
    pub blocking_step_max_ms: AtomicU64,
    /// When the task's loop last completed a turn (a `poll` returned; a sink's consumer poll
    /// and `put` returned), ms since the epoch (0: not yet).
    last_turn_ms: AtomicI64,
    /// When an offset commit last succeeded, or records were first seen waiting for one
    /// ([`Self::stall_reason`]), ms since the epoch (0: neither yet).
    last_commit_ms: AtomicI64,
    /// `task-error-metrics`.
    pub errors: std::sync::Arc<ErrorMetrics>,
    /// The latest statistics of the task's producer (source) or consumer (sink), emitted by
    /// librdkafka every `metrics.sample.window.ms`.
    client: Mutex<Option<Box<Statistics>>>,
}

impl Default for TaskMetrics {
    fn default() -> Self {
        TaskMetrics {
            kind: AtomicU8::new(0),
            clock: Mutex::new(StateClock::new(Instant::now())),
            batch_sizes: Sizes::default(),
            commit_time: Timing::default(),
            commit_success: AtomicU64::new(0),
            commit_failure: AtomicU64::new(0),
            poll_total: AtomicU64::new(0),
            write_total: AtomicU64::new(0),
            poll_time: Timing::default(),
            active: AtomicI64::new(0),
            active_max: AtomicI64::new(0),
            read_total: AtomicU64::new(0),
            send_total: AtomicU64::new(0),
            put_time: Timing::default(),
            commit_completion_total: AtomicU64::new(0),
            commit_seq_no: AtomicU64::new(0),
            partition_count: AtomicI64::new(0),
            call_started_ms: AtomicI64::new(0),
            call: AtomicU8::new(0),
            instance: AtomicU64::new(0),
            blocking_steps: AtomicU64::new(0),
            blocking_step_max_ms: AtomicU64::new(0),
            last_turn_ms: AtomicI64::new(0),
            last_commit_ms: AtomicI64::new(0),
            errors: Default::default(),
            client: Mutex::new(None),
        }
    }
}

impl TaskMetrics {
    /// Marks the task as a source or a sink task.
    pub fn set_kind(&self, kind: TaskKind) {
        let v = match kind {
            TaskKind::Source => 1,
            TaskKind::Sink => 2,
        };
        self.kind.store(v, Ordering::Relaxed);
    }
    /// The kind, once the task's loop started.
    pub fn kind(&self) -> Option<TaskKind> {
        match self.kind.load(Ordering::Relaxed) {
            1 => Some(TaskKind::Source),
            2 => Some(TaskKind::Sink),
            _ => None,
        }
    }
    /// Notes a state change (every status the task reports).
    pub fn state_changed(&self, state: State) {
        let mut c = self.clock.lock().unwrap();
        c.close_span(Instant::now());
        c.current = Some(state);
    }
    /// `(running-ratio, pause-ratio)`: the shares of the instance's life spent RUNNING and
    /// PAUSED, 0 … 1.
    pub fn state_ratios(&self) -> (f64, f64) {
        self.clock.lock().unwrap().ratios(Instant::now())
    }
    /// Records the outcome and duration of one offset commit.
    pub fn commit_done(&self, ok: bool, took: Duration) {
        self.commit_time.record(took);
        if ok {
            self.last_commit_ms.store(now_ms(), Ordering::Relaxed);
            self.commit_success.fetch_add(1, Ordering::Relaxed);
        } else {
            self.commit_failure.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// Sets the records in flight (source), keeping the maximum.
    pub fn set_active(&self, n: i64) {
        self.active.store(n, Ordering::Relaxed);
        self.active_max.fetch_max(n, Ordering::Relaxed);
    }
    /// A new instance of the task starts; returns its number, which its calls name.
    pub fn begin_instance(&self) -> u64 {
        let instance = self.instance.fetch_add(1, Ordering::AcqRel) + 1;
        self.call_started_ms.store(0, Ordering::Relaxed);
        instance
    }
    /// Call `call` of instance `instance` begins (nothing when a newer instance started).
    fn call_begins(&self, instance: u64, call: TaskCall) {
        if self.instance.load(Ordering::Acquire) == instance {
            self.call.store(call.code(), Ordering::Relaxed);
            self.call_started_ms.store(now_ms(), Ordering::Relaxed);
        }
    }
    /// The call of instance `instance` returned (or unwound).
    fn call_ends(&self, instance: u64) {
        if self.instance.load(Ordering::Acquire) == instance {
            self.call_started_ms.store(0, Ordering::Relaxed);
            self.turn_done();
        }
    }
    /// The call into the task running now, if any.
    pub fn call_running(&self) -> Option<TaskCall> {
        if self.call_started_ms.load(Ordering::Relaxed) == 0 {
            return None;
        }
        TaskCall::from_code(self.call.load(Ordering::Relaxed))
    }
    /// A step of the async task's future blocked the runtime for `took`.
    pub fn note_blocking_step(&self, took: Duration) {
        self.blocking_steps.fetch_add(1, Ordering::Relaxed);
        self.blocking_step_max_ms
            .fetch_max(took.as_millis() as u64, Ordering::Relaxed);
    }
    /// The task's loop completed a turn.
    pub fn turn_done(&self) {
        self.last_turn_ms.store(now_ms(), Ordering::Relaxed);
    }
    /// The task's progress at `now_ms`: how long ago its loop last completed a turn, and how
    /// long the call running now has run; stalled when that call has run for `stall` or more.
    pub fn progress(&self, now_ms: i64, stall: Duration) -> Progress {
        let last = self.last_turn_ms.load(Ordering::Relaxed);
        let started = self.call_started_ms.load(Ordering::Relaxed);
        let call_running_ms = (started > 0).then(|| (now_ms - started).max(0) as u64);
        Progress {
            last_call_age_ms: (last > 0).then(|| (now_ms - last).max(0) as u64),
            call: call_running_ms
                .and_then(|_| TaskCall::from_code(self.call.load(Ordering::Relaxed))),
            call_running_ms,
            stalled: call_running_ms.is_some_and(|r| r >= stall.as_millis() as u64),
        }
    }
    /// Why the task makes no progress at `now_ms`, if it has made none for `limit` (issue #36,
    /// `tributary.restart.stall.ms`): its `poll` / `put` has run that long, or records it sent
    /// have waited `limit` plus `flush_interval` (`offset.flush.interval.ms`, the commits'
    /// own period) for an offset commit. `None` while it progresses.
    pub fn stall_reason(
        &self,
        now_ms: i64,
        limit: Duration,
        flush_interval: Duration,
    ) -> Option<String> {
        let limit_ms = limit.as_millis() as i64;
        let started = self.call_started_ms.load(Ordering::Relaxed);
        if started > 0 && now_ms - started >= limit_ms {
            let call = TaskCall::from_code(self.call.load(Ordering::Relaxed))
                .map_or("call", TaskCall::as_str);
            return Some(format!(
                "its {call} has not returned for {} ms",
                now_ms - started
            ));
        }
        let waiting = self.active.load(Ordering::Relaxed);
        if waiting <= 0 {
            return None;
        }
        let last = self.last_commit_ms.load(Ordering::Relaxed);
        if last == 0 {
            // Seen waiting for the first time: the clock starts now.
            self.last_commit_ms.store(now_ms, Ordering::Relaxed);
            return None;
        }
        let waited = now_ms - last;
        (waited >= limit_ms + flush_interval.as_millis() as i64).then(|| {
            format!("{waiting} records it sent have waited {waited} ms for an offset commit")
        })
    }
    /// Keeps the client statistics librdkafka just emitted.
    pub fn set_client_statistics(&self, stats: Statistics) {
        *self.client.lock().unwrap() = Some(Box::new(stats));
    }
    /// The latest client statistics, if any were emitted.
    pub fn client_statistics(&self) -> Option<Box<Statistics>> {
        self.client.lock().unwrap().clone()
    }
    /// `offset-commit-success-percentage` and `offset-commit-failure-percentage` (0 … 1, as
    /// Connect's; 0 before the first commit).
    pub fn commit_percentages(&self) -> (f64, f64) {
        let ok = self.commit_success.load(Ordering::Relaxed) as f64;
        let failed = self.commit_failure.load(Ordering::Relaxed) as f64;
        if ok + failed == 0.0 {
            return (0.0, 0.0);
        }
        (ok / (ok + failed), failed / (ok + failed))
    }
}

/// A task's progress (Tributary): see [`TaskMetrics::progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// Ms since the task's loop last completed a turn (`None` before the first).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_call_age_ms: Option<u64>,
    /// Ms the call running now has run (`None` when none runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub call_running_ms: Option<u64>,
    /// Which call that is: `start`, `poll`, `put`, `commit` or `stop`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub call: Option<TaskCall>,
    /// The running call has run for `tributary.task.stall.threshold.ms` or more.
    pub stalled: bool,
}

/// A call into the task in progress ([`TaskMetrics::call`]): it ends when the guard is
/// dropped, also when the call panics, so no call stays "running" after it unwound.
pub struct CallGuard<'a> {
    metrics: &'a TaskMetrics,
    instance: u64,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.metrics.call_ends(self.instance);
    }
}

impl TaskMetrics {
    /// Call `call` of instance `instance` of the task begins; it ends when the returned guard
    /// is dropped. Calls of an instance older than the task's latest are not tracked.
    pub fn call(&self, instance: u64, call: TaskCall) -> CallGuard<'_> {
        self.call_begins(instance, call);
        CallGuard {
            metrics: self,
            instance,
        }
    }
}

/// A call into a task's plugin code whose duration the runtime watches (issue #36: `poll` and
/// `put`; issue #43: `start`, the commit calls and `stop` too, so a task hung in `start` is
/// seen and failed as one hung in `poll` is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskCall {
    /// `SourceTask.start` / `SinkTask.start`.
    Start,
    /// `SourceTask.poll`.
    Poll,
    /// `SinkTask.put`.
    Put,
    /// `SinkTask.preCommit` (and `flush`) / `SourceTask.commit`.
    Commit,
    /// `SourceTask.stop` / `SinkTask.stop` (and a sink's `close` of every partition).
    Stop,
}

impl TaskCall {
    /// The call's name in stall reasons and progress (`start`, `poll`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskCall::Start => "start",
            TaskCall::Poll => "poll",
            TaskCall::Put => "put",
            TaskCall::Commit => "commit",
            TaskCall::Stop => "stop",
        }
    }
    fn code(self) -> u8 {
        self as u8 + 1
    }
    fn from_code(code: u8) -> Option<TaskCall> {
        [
            TaskCall::Start,
            TaskCall::Poll,
            TaskCall::Put,
            TaskCall::Commit,
            TaskCall::Stop,
        ]
        .into_iter()
        .find(|c| c.code() == code)
    }
}

/// `task-error-metrics` (Connect's `ErrorHandlingMetrics`), recorded by the task's
/// `RetryWithToleranceOperator` and error reporters.
#[derive(Debug, Default)]
pub struct ErrorMetrics {
    /// Failed record operations, retried ones once each (`total-record-failures`).
    pub record_failures: AtomicU64,
    /// Records whose processing failed in the end (`total-record-errors`).
    pub record_errors: AtomicU64,
    /// Records skipped because of an error (`total-records-skipped`).
    pub records_skipped: AtomicU64,
    /// Retries (`total-retries`).
    pub retries: AtomicU64,
    /// Errors written to the error log (`total-errors-logged`).
    pub errors_logged: AtomicU64,
    /// Records sent to the dead letter queue (`deadletterqueue-produce-requests`) and the
    /// sends that failed (`deadletterqueue-produce-failures`).
    pub dlq_requests: AtomicU64,
    pub dlq_failures: AtomicU64,
    /// When the last error happened, ms since the epoch (`last-error-timestamp`; 0 before).
    pub last_error_ms: AtomicI64,
}

impl ErrorMetrics {
    /// Records a failed attempt of an operation.
    pub fn failure(&self) {
        self.record_failures.fetch_add(1, Ordering::Relaxed);
        self.last_error_ms.store(now_ms(), Ordering::Relaxed);
    }
    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The startup counters of `connect-worker-metrics` (Connect's `WorkerMetricsGroup`).
#[derive(Debug, Default)]
pub struct WorkerMetrics {
    /// When the worker started, ms since the epoch (Connect's app-info `start-time-ms`).
    pub start_time_ms: AtomicU64,
    pub connector_startup_success: AtomicU64,
    pub connector_startup_failure: AtomicU64,
    pub task_startup_success: AtomicU64,
    pub task_startup_failure: AtomicU64,
}

impl WorkerMetrics {
    /// Metrics of a worker starting now.
    pub fn started_now() -> WorkerMetrics {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        WorkerMetrics {
            start_time_ms: AtomicU64::new(now),
            ..WorkerMetrics::default()
        }
    }

    /// Counts a connector start that succeeded or failed.
    pub fn connector_started(&self, ok: bool) {
        let c = if ok {
            &self.connector_startup_success
        } else {
            &self.connector_startup_failure
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
    /// Counts a task start that succeeded or failed.
    pub fn task_started(&self, ok: bool) {
        let c = if ok {
            &self.task_startup_success
        } else {
            &self.task_startup_failure
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// (topic, partition, lag) of a consumer's assigned partitions with a known lag.
pub fn consumer_lags(s: &Statistics) -> impl Iterator<Item = (&str, i32, i64)> {
    s.topics.values().flat_map(|t| {
        t.partitions
            .values()
            // A partition the consumer no longer fetches (revoked in a rebalance) keeps its
            // last lag in librdkafka's statistics; only partitions being fetched count.
            .filter(|p| {
                p.partition >= 0
                    && p.consumer_lag >= 0
                    && !matches!(p.fetch_state.as_str(), "none" | "stopping" | "stopped")
            })
            .map(move |p| (t.topic.as_str(), p.partition, p.consumer_lag))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_and_sizes_average_and_keep_the_maximum() {
        let t = Timing::default();
        assert!(t.avg_ms().is_nan());
        t.record(Duration::from_millis(2));
        t.record(Duration::from_millis(4));
        assert_eq!(t.avg_ms(), 3.0);
        assert_eq!(t.max_ms(), 4.0);
        let s = Sizes::default();
        s.record(10);
        s.record(30);
        assert_eq!((s.avg(), s.max()), (20.0, 30.0));
    }

    #[test]
    fn state_ratios_split_the_time_by_state() {
        let t0 = Instant::now();
        let mut c = StateClock::new(t0);
        c.current = Some(State::Running);
        c.close_span(t0 + Duration::from_secs(3));
        c.current = Some(State::Paused);
        let (running, paused) = c.ratios(t0 + Duration::from_secs(4));
        assert!((running - 0.75).abs() < 1e-9, "{running}");
        assert!((paused - 0.25).abs() < 1e-9, "{paused}");
    }

    #[test]
    fn a_call_running_past_the_threshold_is_stalled() {
        let m = TaskMetrics::default();
        let p = m.progress(now_ms(), Duration::from_secs(60));
        assert_eq!(
            (p.last_call_age_ms, p.call_running_ms, p.stalled),
            (None, None, false)
        );
        let instance = m.begin_instance();
        drop(m.call(instance, TaskCall::Put));
        m.call_started_ms.store(now_ms() - 5_000, Ordering::Relaxed);
        let p = m.progress(now_ms(), Duration::from_secs(3));
        assert!(p.stalled);
        assert!(p.call_running_ms.unwrap() >= 5_000);
        assert!(p.last_call_age_ms.unwrap() < 5_000);
        assert!(!m.progress(now_ms(), Duration::from_secs(60)).stalled);
    }

    #[test]
    fn a_stall_names_the_call_that_has_not_returned() {
        let m = TaskMetrics::default();
        m.set_kind(TaskKind::Sink);
        let limit = Duration::from_secs(30);
        let flush = Duration::from_secs(60);
        let instance = m.begin_instance();
        let start = m.call(instance, TaskCall::Start);
        assert_eq!(m.call_running(), Some(TaskCall::Start));
        let t0 = now_ms();
        assert_eq!(m.stall_reason(t0, limit, flush), None);
        let reason = m.stall_reason(t0 + 31_000, limit, flush).unwrap();
        assert!(
            reason.starts_with("its start has not returned for"),
            "{reason}"
        );
        let p = m.progress(t0 + 31_000, limit);
        assert_eq!((p.call, p.stalled), (Some(TaskCall::Start), true));
        drop(start);
        assert_eq!(m.call_running(), None);
        assert_eq!(m.stall_reason(t0 + 31_000, limit, flush), None);
        let stop = m.call(instance, TaskCall::Stop);
        let reason = m.stall_reason(now_ms() + 31_000, limit, flush).unwrap();
        assert!(reason.starts_with("its stop has not returned"), "{reason}");
        // A newer instance: the old one's calls neither mark nor clear it.
        let next = m.begin_instance();
        assert_eq!(m.call_running(), None);
        let poll = m.call(next, TaskCall::Poll);
        drop(stop);
        assert_eq!(m.call_running(), Some(TaskCall::Poll));
        drop(m.call(instance, TaskCall::Stop));
        assert_eq!(m.call_running(), Some(TaskCall::Poll));
        drop(poll);
        assert_eq!(m.call_running(), None);
        // A call that panics ends as it unwinds.
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _call = m.call(next, TaskCall::Start);
            panic!("start exploded");
        }));
        assert!(unwound.is_err());
        assert_eq!(m.call_running(), None);
    }

    #[test]
    fn commit_percentages() {
        let m = TaskMetrics::default();
        assert_eq!(m.commit_percentages(), (0.0, 0.0));
        m.commit_done(true, Duration::from_millis(1));
        m.commit_done(true, Duration::from_millis(1));
        m.commit_done(true, Duration::from_millis(1));
        m.commit_done(false, Duration::from_millis(5));
        assert_eq!(m.commit_percentages(), (0.75, 0.25));
        assert_eq!(m.commit_time.max_ms(), 5.0);
    }
}
