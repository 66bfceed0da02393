//! The [`SinkTask`] trait and its context (Connect's `SinkTask`, `SinkTaskContext`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::ConnectResult;
use crate::record::{SinkRecord, TopicPartition};
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

/// What the runtime offers a running sink task.
#[derive(Clone, Default)]
pub struct SinkTaskContext {
    /// The task's configuration.
    pub config: Props,
    /// The errant record reporter, when the connector has one (see
    /// [`SinkTaskContext::errant_record_reporter`]).
    pub errant_record_reporter: Option<Arc<dyn ErrantRecordReporter>>,
}

impl SinkTaskContext {
    /// The reporter for records the task cannot write (KIP-610): `None` unless the connector
    /// sets `errors.deadletterqueue.topic.name` or `errors.log.enable=true`, as in Connect.
    pub fn errant_record_reporter(&self) -> Option<Arc<dyn ErrantRecordReporter>> {
        self.errant_record_reporter.clone()
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
            .finish()
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
