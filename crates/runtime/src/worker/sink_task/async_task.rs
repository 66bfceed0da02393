//! An [`AsyncSinkTask`] as the sink loop calls a task (issue #43): each call's future is
//! driven to completion on the worker's runtime (or the task's own, without one) from the
//! loop's thread, which its consumer needs anyway (rebalance callbacks run inside a poll).

use tributary_api::record::{SinkRecord, TopicPartition};
use tributary_api::sink::{AsyncSinkTask, PartitionOffsets, SinkTask, SinkTaskContext};
use tributary_api::{ConnectResult, Props};

use crate::worker::source_task::AsyncRuntime;

/// An async sink task behind the [`SinkTask`] interface the loop calls.
pub struct AsyncSinkAdapter {
    task: Box<dyn AsyncSinkTask>,
    runtime: AsyncRuntime,
}

impl AsyncSinkAdapter {
    /// `task`, its futures driven on `runtime`.
    pub fn new(task: Box<dyn AsyncSinkTask>, runtime: AsyncRuntime) -> Self {
        AsyncSinkAdapter { task, runtime }
    }
}

impl SinkTask for AsyncSinkAdapter {
    fn version(&self) -> String {
        self.task.version()
    }
    fn initialize(&mut self, context: SinkTaskContext) {
        self.task.initialize(context);
    }
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.runtime.block_on(self.task.start(props))
    }
    fn open(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        self.runtime.block_on(self.task.open(partitions))
    }
    fn close(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        self.runtime.block_on(self.task.close(partitions))
    }
    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()> {
        self.runtime.block_on(self.task.put(records))
    }
    fn flush(&mut self, offsets: &PartitionOffsets) -> ConnectResult<()> {
        self.runtime.block_on(self.task.flush(offsets))
    }
    fn pre_commit(&mut self, current: &PartitionOffsets) -> ConnectResult<PartitionOffsets> {
        self.runtime.block_on(self.task.pre_commit(current))
    }
    fn stop(&mut self) -> ConnectResult<()> {
        self.runtime.block_on(self.task.stop())
    }
}
