//! What every task thread shares: its control block (stop request, target state), status
//! reporting, and turning errors and panics into FAILED statuses with a trace.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tributary_api::source::StopSignal;
use tributary_api::ConnectError;

use crate::storage::status::{State, Status, StatusBackingStore};
use crate::ConnectorTaskId;

pub use crate::config_records::TargetState;

/// Shared between a task thread and the worker: the stop request, the target state, and
/// whether the worker gave up on the instance.
pub struct TaskControl {
    /// The stop request, shared with a source task's context.
    pub stopping: StopSignal,
    paused: Mutex<bool>,
    changed: Condvar,
    /// Set when the instance did not stop within `task.shutdown.graceful.timeout.ms` and was
    /// abandoned (Connect's `WorkerTask.cancel`): it reports no status from then on, since
    /// another instance of the task may already run, on this worker or another.
    cancelled: AtomicBool,
    /// Notified on every change (stop, pause, resume), for a task loop awaiting one on the
    /// worker's runtime (issue #43).
    changes: tokio::sync::Notify,
}

impl TaskControl {
    /// A control block for a task starting in `target`.
    pub fn new(target: TargetState) -> Arc<TaskControl> {
        Arc::new(TaskControl {
            stopping: StopSignal::new(),
            paused: Mutex::new(target == TargetState::Paused),
            changed: Condvar::new(),
            cancelled: AtomicBool::new(false),
            changes: tokio::sync::Notify::new(),
        })
    }
    /// Resolves at the next stop, pause or resume (what an async loop awaits while paused).
    /// Create it before checking the state it waits for a change of, so no change is missed.
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changes.notified()
    }
    /// Abandons the instance (Connect's `WorkerTask.cancel`): asks it to stop, and silences its
    /// status reports, so a failure it meets while finishing on its own (an exactly-once
    /// producer fenced by the task's next instance, say) never hides that next instance's
    /// status.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.stop();
    }
    /// Whether the instance was abandoned ([`Self::cancel`]).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
    /// Asks the task to stop; wakes it if paused.
    pub fn stop(&self) {
        self.stopping.set(true);
        let _g = self.paused.lock().unwrap();
        self.changed.notify_all();
        self.changes.notify_waiters();
    }
    /// Whether a stop was requested.
    pub fn is_stopping(&self) -> bool {
        self.stopping.is_stopped()
    }
    /// Pauses or resumes the task.
    pub fn set_paused(&self, paused: bool) {
        *self.paused.lock().unwrap() = paused;
        self.changed.notify_all();
        self.changes.notify_waiters();
    }
    /// Whether the task should be paused.
    pub fn is_paused(&self) -> bool {
        *self.paused.lock().unwrap()
    }
    /// Blocks until a stop is requested, at most `max`; returns whether the task is stopping
    /// (the wait between retries of a failed operation, cut short by a stop request).
    pub fn wait_for_stop(&self, max: Duration) -> bool {
        let guard = self.paused.lock().unwrap();
        let _guard = self
            .changed
            .wait_timeout_while(guard, max, |_| !self.stopping.is_stopped())
            .unwrap();
        self.stopping.is_stopped()
    }
    /// Blocks while paused (and not stopping), at most `max`; returns whether still paused.
    pub fn wait_while_paused(&self, max: Duration) -> bool {
        let guard = self.paused.lock().unwrap();
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, max, |p| *p && !self.stopping.is_stopped())
            .unwrap();
        *guard
    }
}

/// Writes a task's statuses with the worker's id and current generation; nothing once the
/// instance was cancelled ([`TaskControl::cancel`]).
#[derive(Clone)]
pub struct TaskStatusReporter {
    pub id: ConnectorTaskId,
    /// The instance's control block, whose cancellation silences the reporter.
    pub control: Arc<TaskControl>,
    pub worker_id: String,
    pub generation: Arc<AtomicI32>,
    pub store: Arc<dyn StatusBackingStore>,
    /// The task plugin's version, written into every status (KIP-891).
    pub version: Option<String>,
    /// The task's counters, whose state clock every reported status moves.
    pub counters: Option<Arc<super::TaskCounters>>,
}

impl TaskStatusReporter {
    /// Records `state` with an optional trace, unless the instance was cancelled: then it is
    /// only logged.
    pub fn report(&self, state: State, trace: Option<String>) {
        if self.control.is_cancelled() {
            tracing::info!(task = %self.id, state = state.as_str(), "not reporting the status of an abandoned instance of the task: another instance may run already");
            return;
        }
        if let Some(c) = &self.counters {
            c.metrics.state_changed(state);
        }
        self.store.put_task(
            &self.id,
            Status {
                state,
                trace,
                worker_id: self.worker_id.clone(),
                generation: self.generation.load(Ordering::Acquire),
                version: self.version.clone(),
            },
        );
    }
}

/// The topics a task has read from or written to, recorded once each as the connector's
/// active topics (KIP-558, Connect's `TopicStatus` records). Checked per record, so the topic of
/// the record before is compared first: no hashing while the topic does not change.
#[derive(Default)]
pub struct TopicsSeen {
    seen: std::collections::HashSet<String>,
    last: String,
}

impl TopicsSeen {
    /// Records `topic` through `reporter` the first time it is seen.
    pub fn record(&mut self, topic: &str, reporter: &TaskStatusReporter) {
        if self.last == topic {
            return;
        }
        if !self.seen.contains(topic) {
            reporter
                .store
                .put_topic(&reporter.id.connector, topic, reporter.id.task);
            self.seen.insert(topic.to_string());
        }
        self.last.clear();
        self.last.push_str(topic);
    }
}

/// A Java-style trace for an error: `<exception class>: <message>` plus where it happened.
/// An error with a stack trace of its own (a Java plugin's exception) keeps that trace.
pub fn error_trace(e: &ConnectError, context: &str) -> String {
    if let Some(trace) = e.stack_trace() {
        return trace.to_string();
    }
    format!("{}: {}\n\tat {}\n", e.java_class(), e, context)
}

/// Runs `f`, turning a panic into a [`ConnectError`] whose message carries the panic text.
pub fn catch_panic<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, ConnectError>,
) -> Result<T, ConnectError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(ConnectError::connect(format!(
            "{what} panicked: {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// The text a panic was raised with (`"unknown panic"` for a payload that is not text).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors_with_the_message() {
        let r: Result<(), _> = catch_panic("task x", || panic!("boom {}", 1));
        assert_eq!(r.unwrap_err().to_string(), "task x panicked: boom 1");
    }

    #[test]
    fn an_abandoned_instance_reports_nothing_after_it_was_cancelled() {
        use crate::storage::status::MemoryStatusBackingStore;
        let store = Arc::new(MemoryStatusBackingStore::default());
        let id = ConnectorTaskId {
            connector: "c".into(),
            task: 0,
        };
        let reporter = |control: &Arc<TaskControl>| TaskStatusReporter {
            id: id.clone(),
            control: control.clone(),
            worker_id: "w:1".into(),
            generation: Arc::new(AtomicI32::new(7)),
            store: store.clone(),
            version: None,
            counters: None,
        };
        let old = TaskControl::new(TargetState::Started);
        let old_reporter = reporter(&old);
        old_reporter.report(State::Running, None);
        old.cancel();
        assert!(old.is_stopping(), "cancelling asks the instance to stop");
        // The task's next instance on the same worker, in the same generation.
        let next = TaskControl::new(TargetState::Started);
        reporter(&next).report(State::Running, None);
        // The abandoned one fails while finishing on its own.
        old_reporter.report(State::Failed, Some("fenced".into()));
        let status = store.task(&id).unwrap();
        assert_eq!(status.state, State::Running, "{status:?}");
    }

    #[test]
    fn stop_wakes_a_paused_wait() {
        let c = TaskControl::new(TargetState::Paused);
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.wait_while_paused(Duration::from_secs(30)));
        c.stop();
        assert!(
            t.join().unwrap(),
            "still paused, but returned because of the stop request"
        );
        assert!(c.is_stopping());
    }
}
