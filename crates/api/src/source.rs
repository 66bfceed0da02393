//! The [`SourceTask`] trait and its context (Connect's `SourceTask`, `SourceTaskContext`,
//! `OffsetStorageReader`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::ConnectResult;
use crate::record::{RecordMetadata, SourceMap, SourceRecord};
use crate::Props;

/// Reads the committed offsets of the task's connector (Connect's `OffsetStorageReader`).
pub trait OffsetStorageReader: Send + Sync {
    /// The last committed offset for one source partition, if any.
    fn offset(&self, partition: &SourceMap) -> ConnectResult<Option<SourceMap>>;
}

/// What the runtime offers a running source task.
#[derive(Clone)]
pub struct SourceTaskContext {
    /// The task's configuration.
    pub config: Props,
    /// Committed offsets of the task's connector.
    pub offset_reader: Arc<dyn OffsetStorageReader>,
    /// Set when the runtime wants the task to stop; a [`SourceTask::poll`] that waits for data
    /// should wait on it ([`SourceTaskContext::wait_for_stop`]), or check it at least every
    /// second.
    pub stopping: StopSignal,
}

impl SourceTaskContext {
    /// Whether the runtime asked the task to stop.
    pub fn is_stopping(&self) -> bool {
        self.stopping.is_stopped()
    }

    /// Waits up to `timeout`, returning early (true) as soon as the runtime asks the task to
    /// stop: what a throttled or idle `poll` waits on, so a stop is never delayed by its sleep
    /// (Java's tasks are woken by `stop()` the same way).
    pub fn wait_for_stop(&self, timeout: Duration) -> bool {
        self.stopping.wait(timeout)
    }
}

/// A stop request a thread can poll or wait on; clones share it.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    stopped: AtomicBool,
    lock: Mutex<()>,
    changed: Condvar,
}

impl StopSignal {
    /// A signal not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets (true: stop) or clears the signal, waking every waiter.
    pub fn set(&self, stopped: bool) {
        let _guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.0.stopped.store(stopped, Ordering::Release);
        self.0.changed.notify_all();
    }

    /// Whether the signal is set.
    pub fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::Acquire)
    }

    /// Waits up to `timeout` for the signal; returns whether it is set.
    pub fn wait(&self, timeout: Duration) -> bool {
        let guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        let (_guard, _) = self
            .0
            .changed
            .wait_timeout_while(guard, timeout, |_| !self.is_stopped())
            .unwrap_or_else(|e| e.into_inner());
        self.is_stopped()
    }
}

/// A source task: pulls records from an external system (Connect's `SourceTask`).
///
/// Runs on its own thread: [`SourceTask::initialize`], [`SourceTask::start`], then
/// [`SourceTask::poll`] in a loop until the runtime stops the task, then [`SourceTask::stop`].
/// Unlike Java, `stop` is not called concurrently with `poll`; a blocking `poll` must return
/// (possibly with no records) soon after [`SourceTaskContext::is_stopping`] turns true.
pub trait SourceTask: Send {
    /// The task's version.
    fn version(&self) -> String;
    /// Hands the task its context before [`SourceTask::start`].
    fn initialize(&mut self, _context: SourceTaskContext) {}
    /// Starts the task with its configuration. Errors fail the task.
    fn start(&mut self, props: &Props) -> ConnectResult<()>;
    /// The next records; an empty vector when none are available yet. Errors fail the task,
    /// except [`crate::ConnectError::Retriable`], after which `poll` is called again.
    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>>;
    /// Called after offsets were committed (Connect's `commit()`).
    fn commit(&mut self) -> ConnectResult<()> {
        Ok(())
    }
    /// Whether the runtime should call [`SourceTask::commit_record`]. It keeps a copy of every
    /// record in flight for such tasks, so the default is `false` (a Tributary addition; Java
    /// always calls `commitRecord`).
    fn wants_commit_record(&self) -> bool {
        false
    }
    /// Called on the task's thread, soon after Kafka acknowledged a record (`metadata`), for
    /// tasks whose [`SourceTask::wants_commit_record`] is true (Connect's
    /// `commitRecord(SourceRecord, RecordMetadata)`).
    fn commit_record(
        &mut self,
        _record: &SourceRecord,
        _metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        Ok(())
    }
    /// Stops the task; releases its resources.
    fn stop(&mut self) -> ConnectResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_wakes_a_waiting_thread() {
        let signal = StopSignal::new();
        assert!(!signal.wait(Duration::from_millis(1)));
        let waiter = {
            let signal = signal.clone();
            std::thread::spawn(move || {
                let started = std::time::Instant::now();
                (signal.wait(Duration::from_secs(600)), started.elapsed())
            })
        };
        signal.set(true);
        let (stopped, waited) = waiter.join().unwrap();
        assert!(stopped);
        // Woken by the stop, not by the ten-minute timeout.
        assert!(waited < Duration::from_secs(300), "{waited:?}");
        assert!(signal.wait(Duration::ZERO));
        signal.set(false);
        assert!(!signal.is_stopped());
    }
}
