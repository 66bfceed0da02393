//! The [`SinkTask`] trait and its context (Connect's `SinkTask`, `SinkTaskContext`).

use std::collections::HashMap;

use crate::error::ConnectResult;
use crate::record::{SinkRecord, TopicPartition};
use crate::Props;

/// Offsets by partition: the offset of the **next** record to consume (Kafka's commit semantics).
pub type PartitionOffsets = HashMap<TopicPartition, i64>;

/// What the runtime offers a running sink task.
#[derive(Debug, Clone, Default)]
pub struct SinkTaskContext {
    /// The task's configuration.
    pub config: Props,
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
