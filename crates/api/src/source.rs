//! The [`SourceTask`] trait and its context (Connect's `SourceTask`, `SourceTaskContext`,
//! `OffsetStorageReader`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// should check it (see [`SourceTaskContext::is_stopping`]) at least every second.
    pub stopping: Arc<AtomicBool>,
}

impl SourceTaskContext {
    /// Whether the runtime asked the task to stop.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
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
