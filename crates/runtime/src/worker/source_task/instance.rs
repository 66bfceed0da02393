//! The task a source loop drives (issue #43): one whose calls may block ([`SourceTask`], on
//! the loop's own thread, as Connect runs every task), or an async one ([`AsyncSourceTask`])
//! whose futures the worker's runtime drives. The loop's synchronous steps call either the same
//! way ([`SourceTaskInstance::start`], `commit`, `stop`, `poll`): an async call is driven to
//! completion with [`AsyncRuntime::block_on`], valid off the runtime (a thread of the task's
//! own) or inside `block_in_place` on it; [`super::run_on_runtime`] awaits `poll` instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tributary_api::record::{RecordMetadata, SourceRecord};
use tributary_api::source::{
    AsyncSourceTask, SourceTask, SourceTaskContext, StopSignal, TaskFuture,
};
use tributary_api::{ConnectResult, Props};

/// Where an async task's futures run.
#[derive(Clone)]
pub enum AsyncRuntime {
    /// The worker's multi-threaded runtime.
    Shared(tokio::runtime::Handle),
    /// A runtime of the task's own (when the worker has no multi-threaded runtime to share).
    Own(Arc<tokio::runtime::Runtime>),
}

impl AsyncRuntime {
    /// The worker's runtime when the caller runs in a multi-threaded one, else `None`.
    pub fn shared() -> Option<AsyncRuntime> {
        let handle = tokio::runtime::Handle::try_current().ok()?;
        (handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
            .then_some(AsyncRuntime::Shared(handle))
    }

    /// A current-thread runtime for one task's thread. Errors: the runtime cannot be built.
    pub fn own() -> std::io::Result<AsyncRuntime> {
        Ok(AsyncRuntime::Own(Arc::new(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        )))
    }

    /// Drives `f` to completion, blocking the calling thread: a task's own thread, a thread of
    /// the runtime's blocking pool, or a runtime worker, which hands its work to another thread
    /// meanwhile (`block_in_place`).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        match self {
            AsyncRuntime::Shared(h) => tokio::task::block_in_place(|| h.block_on(f)),
            AsyncRuntime::Own(rt) => rt.block_on(f),
        }
    }
}

/// A running source task of either kind.
pub enum SourceTaskInstance {
    /// A task whose calls may block: it runs on a thread of its own.
    Blocking(Box<dyn SourceTask>),
    /// A task whose calls return futures, with the runtime that drives them and, once
    /// initialized, its stop signal (a stop drops a waiting poll).
    Async {
        task: Box<dyn AsyncSourceTask>,
        runtime: AsyncRuntime,
        stop: Option<StopSignal>,
    },
}

/// How long one step of an async task's future may run before it is reported as blocking the
/// runtime.
pub const BLOCKING_STEP: Duration = Duration::from_millis(200);

impl SourceTaskInstance {
    /// An async task whose futures `runtime` drives.
    pub fn async_task(task: Box<dyn AsyncSourceTask>, runtime: AsyncRuntime) -> Self {
        SourceTaskInstance::Async {
            task,
            runtime,
            stop: None,
        }
    }

    pub(super) fn initialize(&mut self, context: SourceTaskContext) {
        match self {
            SourceTaskInstance::Blocking(t) => t.initialize(context),
            SourceTaskInstance::Async { task, stop, .. } => {
                *stop = Some(context.stopping.clone());
                task.initialize(context)
            }
        }
    }

    pub(super) fn start(&mut self, props: &Props) -> ConnectResult<()> {
        match self {
            SourceTaskInstance::Blocking(t) => t.start(props),
            SourceTaskInstance::Async { task, runtime, .. } => runtime.block_on(task.start(props)),
        }
    }

    pub(super) fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        match self {
            SourceTaskInstance::Blocking(t) => t.poll(),
            // As on the shared runtime, a stop drops the waiting poll.
            SourceTaskInstance::Async {
                task,
                runtime,
                stop,
            } => runtime.block_on(async {
                match stop {
                    Some(stop) => tokio::select! {
                        polled = task.poll() => polled,
                        () = stop.stopped() => Ok(Vec::new()),
                    },
                    None => task.poll().await,
                }
            }),
        }
    }

    pub(super) fn commit(&mut self) -> ConnectResult<()> {
        match self {
            SourceTaskInstance::Blocking(t) => t.commit(),
            SourceTaskInstance::Async { task, runtime, .. } => runtime.block_on(task.commit()),
        }
    }

    pub(super) fn stop(&mut self) -> ConnectResult<()> {
        match self {
            SourceTaskInstance::Blocking(t) => t.stop(),
            SourceTaskInstance::Async { task, runtime, .. } => runtime.block_on(task.stop()),
        }
    }

    pub(super) fn wants_commit_record(&self) -> bool {
        match self {
            SourceTaskInstance::Blocking(t) => t.wants_commit_record(),
            SourceTaskInstance::Async { task, .. } => task.wants_commit_record(),
        }
    }

    pub(super) fn commit_record_reads_payload(&self) -> bool {
        match self {
            SourceTaskInstance::Blocking(t) => t.commit_record_reads_payload(),
            SourceTaskInstance::Async { task, .. } => task.commit_record_reads_payload(),
        }
    }

    pub(super) fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        match self {
            SourceTaskInstance::Blocking(t) => t.commit_record(record, metadata),
            SourceTaskInstance::Async { task, .. } => task.commit_record(record, metadata),
        }
    }

    /// The future of an async task's `poll` (`None` for a blocking task).
    pub(super) fn poll_future(&mut self) -> Option<TaskFuture<'_, Vec<SourceRecord>>> {
        match self {
            SourceTaskInstance::Blocking(_) => None,
            SourceTaskInstance::Async { task, .. } => Some(task.poll()),
        }
    }
}

/// A future whose every step is timed: a step of [`BLOCKING_STEP`] or more blocked a runtime
/// thread, and `on_block` is told how long (issue #43: a task that blocks the runtime by mistake
/// is reported by name).
pub struct Watched<F, B> {
    inner: F,
    on_block: B,
}

impl<F, B> Watched<F, B> {
    pub fn new(inner: F, on_block: B) -> Self {
        Watched { inner, on_block }
    }
}

impl<F: Future + Unpin, B: FnMut(Duration) + Unpin> Future for Watched<F, B> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let began = Instant::now();
        let polled = Pin::new(&mut self.inner).poll(cx);
        let took = began.elapsed();
        if took >= BLOCKING_STEP {
            (self.on_block)(took);
        }
        polled
    }
}
