//! The [`SourceTask`] trait and its context (Connect's `SourceTask`, `SourceTaskContext`,
//! `OffsetStorageReader`, `TransactionContext`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::error::{ConnectError, ConnectResult};
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
    /// Where the task defines its own transactions: `Some` only when the worker runs source
    /// tasks exactly once (`exactly.once.source.support=enabled`) and the connector is
    /// configured with `transaction.boundary=connector` (Connect's
    /// `SourceTaskContext.transactionContext()`, KIP-618, which is `null` otherwise).
    pub transaction_context: Option<Arc<TransactionContext>>,
    /// Where the task registers its own metrics (Connect's `SourceTaskContext.pluginMetrics()`,
    /// KIP-877), tagged `connector` and `task`; closed by the runtime when the task stops.
    pub plugin_metrics: crate::metrics::PluginMetrics,
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

    /// Resolves once the runtime asks the task to stop: what an [`AsyncSourceTask`] selects
    /// on while it waits for data, if it wants to finish something before its `poll` future is
    /// dropped.
    pub fn stopped(&self) -> Stopped {
        self.stopping.stopped()
    }
}

/// How a task using connector-defined transaction boundaries (`transaction.boundary=connector`,
/// KIP-618) tells the runtime where its transactions end (Connect's `TransactionContext`).
///
/// Requests take effect as the runtime hands records to the producer: a request naming a
/// record ends the transaction right after that record (the one the task returned from
/// `poll`, matched by equality before any transformation, as Connect matches them); a request
/// for the batch ends it after the rest of the current batch. A committed transaction makes
/// its records and their source offsets visible together; an aborted one discards its
/// records, and the runtime then commits their source offsets in a transaction of their own,
/// so they are not read again. A task that asks both to commit and to abort the same
/// transaction (or after the same record) fails. Transactions no request ends stay open: a
/// stopping task's open transaction is aborted unless the task asked for a commit.
#[derive(Debug, Default)]
pub struct TransactionContext {
    requests: Mutex<TransactionRequests>,
}

#[derive(Debug, Default)]
struct TransactionRequests {
    commit_batch: bool,
    abort_batch: bool,
    commit_records: Vec<SourceRecord>,
    abort_records: Vec<SourceRecord>,
}

/// Where a connector-defined transaction ends, as [`TransactionContext`]'s requests say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionBoundaryRequest {
    /// Commit the transaction.
    Commit,
    /// Abort the transaction (its records are discarded, their offsets committed).
    Abort,
}

impl TransactionContext {
    /// Asks for the transaction to be committed once the current batch is sent (Connect's
    /// `commitTransaction()`).
    pub fn commit_transaction(&self) {
        self.lock().commit_batch = true;
    }

    /// Asks for the transaction to be committed right after `record` is sent (Connect's
    /// `commitTransaction(SourceRecord)`).
    pub fn commit_transaction_for(&self, record: &SourceRecord) {
        self.lock().commit_records.push(record.clone());
    }

    /// Asks for the transaction to be aborted once the current batch is sent (Connect's
    /// `abortTransaction()`).
    pub fn abort_transaction(&self) {
        self.lock().abort_batch = true;
    }

    /// Asks for the transaction to be aborted right after `record` is sent, `record`
    /// included (Connect's `abortTransaction(SourceRecord)`).
    pub fn abort_transaction_for(&self, record: &SourceRecord) {
        self.lock().abort_records.push(record.clone());
    }

    /// For the runtime: the request naming `record`, consumed (a record returned twice needs
    /// two requests). Errors when the task asked both to commit and to abort after it.
    pub fn take_for_record(
        &self,
        record: &SourceRecord,
    ) -> ConnectResult<Option<TransactionBoundaryRequest>> {
        let mut r = self.lock();
        if r.commit_records.is_empty() && r.abort_records.is_empty() {
            return Ok(None);
        }
        let commit = r.commit_records.iter().position(|c| c == record);
        let abort = r.abort_records.iter().position(|c| c == record);
        match (commit, abort) {
            (Some(_), Some(_)) => Err(ConnectError::connect(format!(
                "Connector requested both commit and abort of same record against topic/partition {}/{}",
                record.topic,
                record
                    .kafka_partition
                    .map_or_else(|| "null".to_string(), |p| p.to_string())
            ))),
            (Some(i), None) => {
                r.commit_records.swap_remove(i);
                Ok(Some(TransactionBoundaryRequest::Commit))
            }
            (None, Some(i)) => {
                r.abort_records.swap_remove(i);
                Ok(Some(TransactionBoundaryRequest::Abort))
            }
            (None, None) => Ok(None),
        }
    }

    /// For the runtime, after a batch was sent: the batch request, consumed. Errors when the
    /// task asked both to commit and to abort.
    pub fn take_for_batch(&self) -> ConnectResult<Option<TransactionBoundaryRequest>> {
        let mut r = self.lock();
        let request = match (r.commit_batch, r.abort_batch) {
            (true, true) => {
                return Err(ConnectError::connect(
                    "Connector requested both commit and abort of same transaction",
                ))
            }
            (true, false) => Some(TransactionBoundaryRequest::Commit),
            (false, true) => Some(TransactionBoundaryRequest::Abort),
            (false, false) => None,
        };
        r.commit_batch = false;
        r.abort_batch = false;
        Ok(request)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TransactionRequests> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A stop request a thread can poll or wait on; clones share it.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    stopped: AtomicBool,
    /// The wakers of [`Stopped`] futures waiting for the signal, by the future's id.
    lock: Mutex<Vec<(u64, Waker)>>,
    /// The id of the next [`Stopped`] future.
    next_id: std::sync::atomic::AtomicU64,
    changed: Condvar,
}

impl StopSignal {
    /// A signal not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets (true: stop) or clears the signal, waking every waiter.
    pub fn set(&self, stopped: bool) {
        let mut wakers = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.0.stopped.store(stopped, Ordering::Release);
        self.0.changed.notify_all();
        if stopped {
            for (_, w) in wakers.drain(..) {
                w.wake();
            }
        }
    }

    /// A future that resolves once the signal is set (at once if it is).
    pub fn stopped(&self) -> Stopped {
        Stopped {
            signal: self.clone(),
            id: self.0.next_id.fetch_add(1, Ordering::Relaxed),
        }
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

/// The future of [`StopSignal::stopped`]; dropping it unregisters its waker.
#[derive(Debug)]
pub struct Stopped {
    signal: StopSignal,
    id: u64,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_stopped() {
            return Poll::Ready(());
        }
        let mut wakers = self.signal.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Checked again under the lock `set` takes, so a stop in between is not missed.
        if self.signal.is_stopped() {
            return Poll::Ready(());
        }
        match wakers.iter_mut().find(|(id, _)| *id == self.id) {
            Some((_, w)) if w.will_wake(cx.waker()) => {}
            Some((_, w)) => *w = cx.waker().clone(),
            None => wakers.push((self.id, cx.waker().clone())),
        }
        Poll::Pending
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let mut wakers = self.signal.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        wakers.retain(|(id, _)| *id != self.id);
    }
}

/// What an async task call returns: a future the worker's runtime drives (boxed, so the task
/// traits stay object-safe). `Send`: it may move between the runtime's threads.
pub type TaskFuture<'a, T> = Pin<Box<dyn Future<Output = ConnectResult<T>> + Send + 'a>>;

/// A source task whose calls never block a thread (Tributary, issue #43): `start`, `poll`,
/// `commit` and `stop` return futures the worker's shared runtime drives, so the task holds no
/// thread of its own while it waits for data. A task whose code may block (a blocking client,
/// file or JNI calls) implements [`SourceTask`] instead and gets a thread.
///
/// Connect's semantics are kept: one call at a time ([`AsyncSourceTask::poll`] is never
/// called again before the previous poll's future resolved), `commit` after offsets were
/// written, `stop` once the loop ends. A stop request drops a pending `poll` future (poll
/// must be cancel-safe: it may keep what it read for the next poll, or lose nothing by
/// re-reading from its committed offsets) and then calls `stop`. A future whose single step
/// runs long (blocking the runtime by mistake) is reported in the worker's log by task name.
pub trait AsyncSourceTask: Send {
    /// The task's version.
    fn version(&self) -> String;
    /// Hands the task its context before [`AsyncSourceTask::start`].
    fn initialize(&mut self, _context: SourceTaskContext) {}
    /// Starts the task with its configuration. Errors fail the task.
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()>;
    /// The next records, resolving when some are available (or empty, to let the runtime
    /// commit and check its state; at least every few seconds). Errors fail the task, except
    /// [`crate::ConnectError::Retriable`], after which `poll` is called again.
    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>>;
    /// Called after offsets were committed (Connect's `commit()`).
    fn commit(&mut self) -> TaskFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Whether the runtime should call [`AsyncSourceTask::commit_record`] (see
    /// [`SourceTask::wants_commit_record`]).
    fn wants_commit_record(&self) -> bool {
        false
    }
    /// Whether [`AsyncSourceTask::commit_record`] reads the record's key, value, schemas or
    /// headers (see [`SourceTask::commit_record_reads_payload`]).
    fn commit_record_reads_payload(&self) -> bool {
        true
    }
    /// Soon after Kafka acknowledged a record (Connect's `commitRecord`); must not block.
    fn commit_record(
        &mut self,
        _record: &SourceRecord,
        _metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        Ok(())
    }
    /// Stops the task; releases its resources.
    fn stop(&mut self) -> TaskFuture<'_, ()>;
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
    /// Whether [`SourceTask::commit_record`] reads the record's key, value, schemas or headers.
    /// A task that answers `false` is handed the record with only its source partition and
    /// offset, topic, Kafka partition and timestamp (key and value null, no headers), which
    /// spares the runtime a copy of every payload in flight (a Tributary addition).
    fn commit_record_reads_payload(&self) -> bool {
        true
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

    fn record(n: i64) -> SourceRecord {
        let mut offset = SourceMap::new();
        offset.insert("n".into(), n.into());
        SourceRecord::new(
            SourceMap::new(),
            offset,
            "t",
            None,
            crate::data::Value::Int64(n),
        )
    }

    #[test]
    fn record_requests_are_matched_by_equality_and_consumed() {
        let tc = TransactionContext::default();
        assert_eq!(tc.take_for_record(&record(1)).unwrap(), None);
        tc.commit_transaction_for(&record(1));
        tc.abort_transaction_for(&record(2));
        assert_eq!(tc.take_for_record(&record(0)).unwrap(), None);
        assert_eq!(
            tc.take_for_record(&record(1)).unwrap(),
            Some(TransactionBoundaryRequest::Commit)
        );
        assert_eq!(tc.take_for_record(&record(1)).unwrap(), None);
        assert_eq!(
            tc.take_for_record(&record(2)).unwrap(),
            Some(TransactionBoundaryRequest::Abort)
        );
        tc.commit_transaction_for(&record(3));
        tc.abort_transaction_for(&record(3));
        let err = tc.take_for_record(&record(3)).unwrap_err().to_string();
        assert!(
            err.contains("both commit and abort of same record against topic/partition t/null"),
            "{err}"
        );
    }

    #[test]
    fn batch_requests_are_consumed_and_may_not_conflict() {
        let tc = TransactionContext::default();
        assert_eq!(tc.take_for_batch().unwrap(), None);
        tc.commit_transaction();
        assert_eq!(
            tc.take_for_batch().unwrap(),
            Some(TransactionBoundaryRequest::Commit)
        );
        assert_eq!(tc.take_for_batch().unwrap(), None);
        tc.abort_transaction();
        assert_eq!(
            tc.take_for_batch().unwrap(),
            Some(TransactionBoundaryRequest::Abort)
        );
        tc.abort_transaction();
        tc.commit_transaction();
        assert!(tc.take_for_batch().is_err());
    }

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

    #[test]
    fn a_stop_wakes_a_task_awaiting_stopped() {
        use std::task::Wake;
        struct Flag(AtomicBool);
        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let signal = StopSignal::new();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut fut = Box::pin(signal.stopped());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert!(!flag.0.load(Ordering::SeqCst));
        signal.set(true);
        assert!(
            flag.0.load(Ordering::SeqCst),
            "the stop woke the waiting task"
        );
        assert!(fut.as_mut().poll(&mut cx).is_ready());
        // Already stopped: ready at once.
        assert!(Box::pin(signal.stopped()).as_mut().poll(&mut cx).is_ready());
        // A dropped future leaves no waker behind.
        let other = StopSignal::new();
        for _ in 0..100 {
            let mut f = Box::pin(other.stopped());
            assert!(f.as_mut().poll(&mut cx).is_pending());
        }
        assert!(other.0.lock.lock().unwrap().is_empty());
    }
}
