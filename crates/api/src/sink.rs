//! The [`SinkTask`] trait and its context (Connect's `SinkTask`, `SinkTaskContext`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{ConnectError, ConnectResult};
use crate::record::{SinkRecord, TopicPartition};
use crate::source::TaskFuture;
use crate::Props;

/// Offsets by partition: the offset of the **next** record to consume (Kafka's commit semantics).
pub type PartitionOffsets = HashMap<TopicPartition, i64>;

/// Reports records a sink task could not write (Connect's `ErrantRecordReporter`, KIP-610).
///
/// The runtime hands one to tasks of connectors with a dead letter queue
/// (`errors.deadletterqueue.topic.name`) or error logging (`errors.log.enable`). A reported
/// record is logged and sent to the dead letter queue (with the key, value and headers it was
/// consumed with) as a failure of stage `TASK_PUT`; the runtime makes the dead letter queue
/// records durable before it commits the offsets of their partitions. With
/// `errors.tolerance=none` the report returns an error (`Tolerance exceeded in error handler`)
/// and the task fails after the current `put` even if it goes on; with `all` the task may skip
/// the record and carry on.
pub trait ErrantRecordReporter: Send + Sync {
    /// Reports `record`, which failed with `error`. Thread-safe; may be called from `put` or
    /// later (e.g. from `flush`). Errors: the tolerance is exceeded, or a record the runtime no
    /// longer holds could not be converted back to bytes.
    fn report(&self, record: &SinkRecord, error: crate::ConnectError) -> ConnectResult<()>;
}

/// What the runtime offers a running sink task (Connect's `SinkTaskContext`): its config, its
/// errant record reporter, and requests it may make of the runtime: rewinding partitions
/// ([`SinkTaskContext::offset`]), the retry back-off ([`SinkTaskContext::timeout`]), pausing
/// and resuming partitions, and an early offset commit ([`SinkTaskContext::request_commit`]).
/// Cloning shares the requests.
#[derive(Clone, Default)]
pub struct SinkTaskContext {
    /// The task's configuration.
    pub config: Props,
    /// The errant record reporter, when the connector has one (see
    /// [`SinkTaskContext::errant_record_reporter`]).
    pub errant_record_reporter: Option<Arc<dyn ErrantRecordReporter>>,
    /// Where the task's requests wait for the runtime, shared with the runtime's sink task
    /// loop.
    pub requests: Arc<SinkTaskRequests>,
    /// Where the task registers its own metrics (Connect's `SinkTaskContext.pluginMetrics()`,
    /// KIP-877), tagged `connector` and `task`; closed by the runtime when the task stops.
    pub plugin_metrics: crate::metrics::PluginMetrics,
}

impl SinkTaskContext {
    /// The reporter for records the task cannot write (KIP-610): `None` unless the connector
    /// sets `errors.deadletterqueue.topic.name` or `errors.log.enable=true`, as in Connect.
    pub fn errant_record_reporter(&self) -> Option<Arc<dyn ErrantRecordReporter>> {
        self.errant_record_reporter.clone()
    }

    /// Asks the runtime to consume `tp` from `offset` (the offset of the next record wanted)
    /// before it next polls, e.g. from `open` for a sink that stores its own offsets. Records
    /// of `tp` consumed but not yet handed to `put` are dropped, and `offset` becomes the
    /// partition's offset to commit. A later request for the same partition replaces an
    /// earlier one.
    pub fn offset(&self, tp: TopicPartition, offset: i64) {
        self.requests.lock().offsets.insert(tp, offset);
    }

    /// [`SinkTaskContext::offset`] for several partitions.
    pub fn offsets(&self, offsets: impl IntoIterator<Item = (TopicPartition, i64)>) {
        self.requests.lock().offsets.extend(offsets);
    }

    /// How long the runtime waits, in ms, before handing the batch that failed with
    /// [`ConnectError::Retriable`] to `put` again; applies to the next retry only. Without
    /// it the runtime retries at its next offset commit (`offset.flush.interval.ms`), as
    /// Connect does.
    pub fn timeout(&self, timeout_ms: u64) {
        self.requests.lock().timeout_ms = Some(timeout_ms);
    }

    /// The partitions currently assigned to the task. Errors: the task has no consumer yet
    /// (called before the runtime created it).
    pub fn assignment(&self) -> ConnectResult<HashSet<TopicPartition>> {
        self.requests.lock().assignment.clone().ok_or_else(|| {
            ConnectError::connect(
                "SinkTaskContext may not be used to look up partition assignment until the task is initialized",
            )
        })
    }

    /// Stops consuming `partitions` until [`SinkTaskContext::resume`]: records of them are
    /// neither fetched nor handed to `put` meanwhile. While the connector itself is paused
    /// the request is remembered and takes effect when it resumes. Errors: a partition is
    /// not assigned to the task (nothing is paused then).
    pub fn pause(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        let mut r = self.requests.lock();
        r.check_assigned(partitions, "pause")?;
        r.paused.extend(partitions.iter().cloned());
        Ok(())
    }

    /// Resumes partitions paused with [`SinkTaskContext::pause`]. Errors: a partition is not
    /// assigned to the task (nothing is resumed then).
    pub fn resume(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        let mut r = self.requests.lock();
        r.check_assigned(partitions, "resume")?;
        for tp in partitions {
            r.paused.remove(tp);
        }
        Ok(())
    }

    /// Asks the runtime to commit offsets (calling `pre_commit`) as soon as it can, instead
    /// of at the next `offset.flush.interval.ms`.
    pub fn request_commit(&self) {
        self.requests.lock().commit_requested = true;
    }
}

impl std::fmt::Debug for SinkTaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkTaskContext")
            .field("config", &self.config)
            .field(
                "errant_record_reporter",
                &self
                    .errant_record_reporter
                    .as_ref()
                    .map(|_| "ErrantRecordReporter"),
            )
            .field("requests", &self.requests)
            .finish()
    }
}

/// A sink task's pending requests and current assignment (the state behind Connect's
/// `WorkerSinkTaskContext`). The task writes through [`SinkTaskContext`]; the runtime's sink
/// task loop reads and clears between its calls into the task, and keeps the assignment.
#[derive(Debug, Default)]
pub struct SinkTaskRequests {
    state: Mutex<RequestState>,
}

#[derive(Debug, Default)]
struct RequestState {
    offsets: HashMap<TopicPartition, i64>,
    timeout_ms: Option<u64>,
    paused: HashSet<TopicPartition>,
    commit_requested: bool,
    /// `None` until the runtime's consumer exists.
    assignment: Option<HashSet<TopicPartition>>,
}

impl RequestState {
    fn check_assigned(&self, partitions: &[TopicPartition], what: &str) -> ConnectResult<()> {
        let assigned = self.assignment.as_ref().ok_or_else(|| {
            ConnectError::connect(format!(
                "SinkTaskContext may not be used to {what} consumption until the task is initialized"
            ))
        })?;
        match partitions.iter().find(|tp| !assigned.contains(tp)) {
            Some(tp) => Err(ConnectError::connect(format!(
                "SinkTasks may not {what} partitions that are not currently assigned to them: {tp}"
            ))),
            None => Ok(()),
        }
    }
}

impl SinkTaskRequests {
    fn lock(&self) -> MutexGuard<'_, RequestState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runtime side: the task's partitions now; forgets paused partitions no longer assigned
    /// (as Connect does on every assignment).
    pub fn set_assignment(&self, assignment: HashSet<TopicPartition>) {
        let mut r = self.lock();
        r.paused.retain(|tp| assignment.contains(tp));
        r.offsets.retain(|tp, _| assignment.contains(tp));
        r.assignment = Some(assignment);
    }

    /// Runtime side: the rewinds asked for since the last call, cleared.
    pub fn take_offsets(&self) -> HashMap<TopicPartition, i64> {
        std::mem::take(&mut self.lock().offsets)
    }

    /// Runtime side: puts back rewinds that could not be carried out yet (a newer request
    /// for the same partition wins).
    pub fn restore_offsets(&self, offsets: HashMap<TopicPartition, i64>) {
        let mut r = self.lock();
        for (tp, o) in offsets {
            r.offsets.entry(tp).or_insert(o);
        }
    }

    /// Runtime side: whether any rewind is waiting.
    pub fn has_rewinds(&self) -> bool {
        !self.lock().offsets.is_empty()
    }

    /// Runtime side: the partitions with a rewind waiting.
    pub fn pending_rewinds(&self) -> Vec<TopicPartition> {
        self.lock().offsets.keys().cloned().collect()
    }

    /// Runtime side: the retry back-off set since the last call, in ms, cleared.
    pub fn take_timeout(&self) -> Option<u64> {
        self.lock().timeout_ms.take()
    }

    /// Runtime side: the partitions the task has paused.
    pub fn paused(&self) -> HashSet<TopicPartition> {
        self.lock().paused.clone()
    }

    /// Runtime side: whether a commit was requested since the last call, cleared.
    pub fn take_commit_request(&self) -> bool {
        std::mem::take(&mut self.lock().commit_requested)
    }
}

/// A sink task: writes records consumed from Kafka to an external system (Connect's `SinkTask`).
///
/// Runs on its own thread: [`SinkTask::initialize`], [`SinkTask::start`], then
/// [`SinkTask::open`] / [`SinkTask::put`] / [`SinkTask::pre_commit`] / [`SinkTask::close`] as
/// partitions are assigned, records arrive and offsets are committed, then [`SinkTask::stop`].
pub trait SinkTask: Send {
    /// The task's version.
    fn version(&self) -> String;
    /// Hands the task its context before [`SinkTask::start`].
    fn initialize(&mut self, _context: SinkTaskContext) {}
    /// Starts the task with its configuration. Errors fail the task.
    fn start(&mut self, props: &Props) -> ConnectResult<()>;
    /// Partitions newly assigned to this task.
    fn open(&mut self, _partitions: &[TopicPartition]) -> ConnectResult<()> {
        Ok(())
    }
    /// Partitions taken away from this task; write out what was buffered for them.
    fn close(&mut self, _partitions: &[TopicPartition]) -> ConnectResult<()> {
        Ok(())
    }
    /// Delivers records (possibly none; clone what must outlive the call). Errors fail the
    /// task, except
    /// [`crate::ConnectError::Retriable`], after which the same records are delivered again.
    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()>;
    /// Makes everything given to `put` so far durable (Connect's `flush`).
    fn flush(&mut self, _offsets: &PartitionOffsets) -> ConnectResult<()> {
        Ok(())
    }
    /// The offsets safe to commit; the default flushes and returns `current` unchanged.
    fn pre_commit(&mut self, current: &PartitionOffsets) -> ConnectResult<PartitionOffsets> {
        self.flush(current)?;
        Ok(current.clone())
    }
    /// Stops the task; releases its resources.
    fn stop(&mut self) -> ConnectResult<()>;
}

/// A sink task whose calls return futures (Tributary, issue #43): `put`, `flush` /
/// `pre_commit`, `open`, `close`, `start` and `stop` are driven on the worker's runtime, so a
/// task written against an async client (a database driver on tokio) needs no runtime of its
/// own. The task's loop keeps its thread (its consumer's rebalance callbacks call `open` and
/// `close` from inside a poll, as Kafka's consumer does), and calls one method at a time, in
/// Connect's order, as for a [`SinkTask`].
pub trait AsyncSinkTask: Send {
    /// The task's version.
    fn version(&self) -> String;
    /// Hands the task its context before [`AsyncSinkTask::start`].
    fn initialize(&mut self, _context: SinkTaskContext) {}
    /// Starts the task with its configuration. Errors fail the task.
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()>;
    /// Partitions newly assigned to this task.
    fn open<'a>(&'a mut self, _partitions: &'a [TopicPartition]) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Partitions taken away from this task; write out what was buffered for them.
    fn close<'a>(&'a mut self, _partitions: &'a [TopicPartition]) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Delivers records (possibly none), as [`SinkTask::put`].
    fn put<'a>(&'a mut self, records: &'a [SinkRecord]) -> TaskFuture<'a, ()>;
    /// Makes everything given to `put` so far durable (Connect's `flush`).
    fn flush<'a>(&'a mut self, _offsets: &'a PartitionOffsets) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// The offsets safe to commit; the default flushes and returns `current` unchanged.
    fn pre_commit<'a>(
        &'a mut self,
        current: &'a PartitionOffsets,
    ) -> TaskFuture<'a, PartitionOffsets> {
        Box::pin(async move {
            self.flush(current).await?;
            Ok(current.clone())
        })
    }
    /// Stops the task; releases its resources.
    fn stop(&mut self) -> TaskFuture<'_, ()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    #[test]
    fn pause_and_resume_need_assigned_partitions() {
        let ctx = SinkTaskContext::default();
        let err = ctx.pause(&[tp(0)]).unwrap_err().to_string();
        assert!(err.contains("until the task is initialized"), "{err}");
        assert!(ctx.assignment().is_err());
        ctx.requests
            .set_assignment([tp(0), tp(1)].into_iter().collect());
        ctx.pause(&[tp(0), tp(1)]).unwrap();
        let err = ctx.pause(&[tp(2)]).unwrap_err().to_string();
        assert!(err.contains("not currently assigned"), "{err}");
        assert!(ctx.resume(&[tp(1), tp(2)]).is_err());
        // A refused request changes nothing.
        assert_eq!(ctx.requests.paused(), [tp(0), tp(1)].into_iter().collect());
        ctx.resume(&[tp(1)]).unwrap();
        assert_eq!(ctx.requests.paused(), [tp(0)].into_iter().collect());
        // A partition taken away is no longer paused when it comes back.
        ctx.requests.set_assignment([tp(1)].into_iter().collect());
        ctx.requests
            .set_assignment([tp(0), tp(1)].into_iter().collect());
        assert!(ctx.requests.paused().is_empty());
    }

    #[test]
    fn requests_are_taken_once_and_the_newest_rewind_wins() {
        let ctx = SinkTaskContext::default();
        let shared = ctx.clone();
        ctx.offset(tp(0), 5);
        shared.offsets([(tp(0), 7), (tp(1), 1)]);
        ctx.timeout(250);
        ctx.request_commit();
        let r = &ctx.requests;
        assert!(r.has_rewinds());
        let taken = r.take_offsets();
        assert_eq!(taken, [(tp(0), 7), (tp(1), 1)].into_iter().collect());
        assert!(!r.has_rewinds());
        // A rewind that must wait goes back, unless a newer one arrived meanwhile.
        ctx.offset(tp(1), 9);
        r.restore_offsets(taken);
        assert_eq!(
            r.take_offsets(),
            [(tp(0), 7), (tp(1), 9)].into_iter().collect()
        );
        assert_eq!(r.take_timeout(), Some(250));
        assert_eq!(r.take_timeout(), None);
        assert!(r.take_commit_request());
        assert!(!r.take_commit_request());
    }
}
