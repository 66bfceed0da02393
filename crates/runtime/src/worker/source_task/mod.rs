//! A source task's loop (Connect's `WorkerSourceTask` / `AbstractWorkerSourceTask`):
//! poll → transform → convert → produce with librdkafka, and commit source offsets that Kafka
//! acknowledged (with every record before them) every `offset.flush.interval.ms` and on
//! shutdown.
//!
//! Transformations and conversions run under the connector's error handling
//! ([`super::errors`]): a record a transformation drops, or whose failure `errors.tolerance=all`
//! tolerates, is not sent; as in Connect its source offset is not committed on its own (only
//! with a later record of the same source partition), and the task's `commit_record` gets it
//! without metadata. A send Kafka refuses fails the task, or with `errors.tolerance=all` is
//! reported (stage `KAFKA_PRODUCE`) and counted as done.
//!
//! A record is refused only for its own failure. librdkafka refuses a record larger than
//! `message.max.bytes` (Connect's `max.request.size`) when it is sent: that record alone fails.
//! A broker refusing a whole batch as too large (the topic's `max.message.bytes`) fails every
//! record of the batch, where Java's producer splits the batch and sends its records again
//! (KAFKA-16087): here the records of a refused batch are sent again one at a time, in order,
//! once everything in flight was reported, and only one that is refused on its own fails.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext};
use rdkafka::{ClientConfig, ClientContext};
use tributary_api::converter::RecordHeaders;
use tributary_api::record::{Headers, SourceMap, SourceRecord};
use tributary_api::source::{SourceTaskContext, TransactionBoundaryRequest, TransactionContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::chain::TransformationChain;
use super::clock::{Clock, SystemClock};
use super::converters::TaskConverters;
use super::errors::{
    ErrorReporters, Original, Outcome, ProcessingContext, RetryWithToleranceOperator, Stage,
    TaskRetryClock, WORKER_SOURCE_TASK_CLASS,
};
use super::metrics::{TaskCall, TaskKind};
use super::submitted_records::{AckInbox, SubmittedRecords};
use super::task::{catch_panic, error_trace, panic_message, TaskControl, TaskStatusReporter};
use super::TaskCounters;
use crate::config::errors::{ErrorHandlingConfig, ToleranceType};
use crate::polled_producer::PolledProducer;
use crate::storage::connector_offset_store::ConnectorOffsetBackingStore;
use crate::storage::offset::{
    offset_key, offset_value, ConnectorOffsetReader, OffsetBackingStore, OffsetEntry,
};
use crate::storage::status::State;

mod in_flight;
mod instance;
#[cfg(test)]
mod memory;
mod producer;
pub mod shared_producer;
#[cfg(test)]
mod tests;
mod transactions;

pub use instance::{AsyncRuntime, SourceTaskInstance};
pub use producer::SourceProducerContext;
use producer::*;
use transactions::*;
pub use transactions::{ExactlyOnceArgs, TransactionBoundary};

/// The longest a send waits for acknowledgements when librdkafka's queue is full.
const QUEUE_FULL_WAIT: Duration = Duration::from_millis(1);
/// A send blocked on a full queue resumes once this many acknowledgements arrived (or a
/// quarter of the records in flight, if fewer), so it does not wake for every single one.
const QUEUE_FULL_BATCH: usize = 1000;

/// The delivery opaque of the offset records an exactly-once task writes in its transactions.
const OFFSET_RECORD: usize = usize::MAX;
/// Set in the delivery opaque (with the record's sequence number) of a record sent again on
/// its own after the broker refused the batch it was in: a refusal is then its own. Below
/// [`shared_producer::SLOT_SHIFT`], where a shared producer's opaque keeps the task's slot.
const SENT_ALONE: usize = 1 << (shared_producer::SLOT_SHIFT - 1);
/// The largest batch an async task's loop sends on a runtime thread ([`Loop::sends_inline`]).
const INLINE_BATCH: usize = 100;
/// How long each wait for outstanding reports lasts before checking whether the task stops.
const RESEND_WAIT: Duration = Duration::from_millis(500);

/// Everything a source task thread needs.
pub struct SourceTaskArgs {
    pub connector: String,
    pub task: SourceTaskInstance,
    pub task_config: Props,
    pub producer_config: ClientConfig,
    pub converters: TaskConverters,
    pub offsets: Arc<dyn OffsetBackingStore>,
    /// The connector's topic creation rules (KIP-158) and its admin client settings; `None`
    /// when it does not create topics.
    pub topic_creation: Option<(crate::config::topic_creation::TopicCreation, ClientConfig)>,
    pub control: Arc<TaskControl>,
    /// The task's rate limits (issue #36, `tributary.throttle.*`).
    pub throttle: Arc<crate::worker::throttle::Throttle>,
    pub reporter: TaskStatusReporter,
    /// `topic.tracking.enable`: record the topics the task produces to (KIP-558).
    pub track_topics: bool,
    pub counters: Arc<TaskCounters>,
    pub offset_flush_interval: Duration,
    pub offset_flush_timeout: Duration,
    /// The connector's transformations, built for this task.
    pub chain: TransformationChain<SourceRecord>,
    /// The connector's `errors.*` settings.
    pub errors: ErrorHandlingConfig,
    /// Set when the task runs exactly once (`exactly.once.source.support=enabled`).
    pub exactly_once: Option<ExactlyOnceArgs>,
    /// The task's own metrics (KIP-877), handed to it in its context.
    pub plugin_metrics: tributary_api::metrics::PluginMetrics,
    /// The worker's shared producers, when this task may use one (an at-least-once task
    /// without `producer.override.*`, sharing enabled); `None`: a producer of its own.
    pub shared_producers: Option<Arc<shared_producer::SharedProducers>>,
}

/// Runs the task until stopped or failed; writes RUNNING / PAUSED / FAILED statuses.
pub fn run(args: SourceTaskArgs) {
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    let result = catch_panic(&label, || run_inner(args, KafkaSourceClients));
    if let Err(e) = result {
        tracing::error!(task = %reporter.id, error = %e, "source task failed");
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
}

/// Unwraps a stage's [`ControlFlow`] in [`Loop::process`], returning its `Break` value.
macro_rules! proceed {
    ($flow:expr) => {
        match $flow {
            ControlFlow::Continue(v) => v,
            ControlFlow::Break(go_on) => return Ok(go_on),
        }
    };
}

struct Loop {
    connector: String,
    task: SourceTaskInstance,
    producer: Box<dyn RecordSender>,
    /// Where a shared producer is leased again after a fatal error, with the task's
    /// producer settings.
    shared_producers: Option<(Arc<shared_producer::SharedProducers>, ClientConfig)>,
    converters: TaskConverters,
    offsets: Arc<dyn OffsetBackingStore>,
    submitted: SubmittedRecords,
    /// The inbox the producer callback pushes acknowledgements to (also held by `submitted`).
    acks: Arc<AckInbox>,
    failure: Arc<Mutex<Option<String>>>,
    control: Arc<TaskControl>,
    /// The task's rate limits (issue #36).
    throttle: Arc<crate::worker::throttle::Throttle>,
    counters: Arc<TaskCounters>,
    /// Topics already recorded as active for the connector (KIP-558); `None` when topic
    /// tracking is disabled.
    topics_seen: Option<super::task::TopicsSeen>,
    /// Creates topics before their first record (KIP-158), when the connector asks for it.
    topic_creator: Option<super::topic_creation::TopicCreator>,
    reporter: TaskStatusReporter,
    /// For tasks wanting `commit_record`: the records in flight by sequence number, and the
    /// acknowledgements the producer callback collected.
    in_flight: Option<(in_flight::InFlightRecords, RecordAcks)>,
    /// `offset.flush.timeout.ms`: longest an offset commit waits for Kafka.
    offset_flush_timeout: Duration,
    chain: TransformationChain<SourceRecord>,
    operator: Arc<RetryWithToleranceOperator>,
    reporters: Arc<ErrorReporters>,
    /// Keep the polled form of each record: for `commit_record` or the error log's details.
    keep_originals: bool,
    /// Keep only what `commit_record` reads of it: the task does not read the payload
    /// ([`SourceTask::commit_record_reads_payload`]) and the error log does not show it.
    originals_without_payload: bool,
    /// The polled form of records in flight, for failed sends (error log details).
    originals: Option<Arc<Mutex<HashMap<u64, SourceRecord>>>>,
    /// Set for an exactly-once task.
    transactions: Option<Transactions>,
    clock: Arc<dyn Clock>,
    /// Whether the converters never block ([`TaskConverters::may_block`]).
    inline_converters: bool,
    /// This instance's number in the counters ([`super::metrics::TaskMetrics::begin_instance`]).
    instance: u64,
    offset_flush_interval: Duration,
    /// The target state last reported (RUNNING or PAUSED).
    paused_reported: Option<bool>,
    last_commit: Instant,
}

/// The producer and clock a source loop runs with: Kafka's ([`KafkaSourceClients`]) or, in
/// the unit tests, in-memory ones.
trait SourceClients {
    /// The task's producer, its delivery reports going to `ctx`: a place on a shared producer
    /// when `shared` has one, else one of the task's own from `config`. Errors fail the task.
    fn producer(
        &mut self,
        task: &tributary_api::ConnectorTaskId,
        ctx: &Arc<SourceProducerContext>,
        config: &ClientConfig,
        shared: &Option<(Arc<shared_producer::SharedProducers>, ClientConfig)>,
    ) -> ConnectResult<Box<dyn RecordSender>>;
    /// The loop's clock.
    fn clock(&self) -> Arc<dyn Clock>;
}

/// A source task's Kafka clients (librdkafka's producers) and the system clock.
struct KafkaSourceClients;

impl SourceClients for KafkaSourceClients {
    fn producer(
        &mut self,
        task: &tributary_api::ConnectorTaskId,
        ctx: &Arc<SourceProducerContext>,
        config: &ClientConfig,
        shared: &Option<(Arc<shared_producer::SharedProducers>, ClientConfig)>,
    ) -> ConnectResult<Box<dyn RecordSender>> {
        Ok(Box::new(TaskProducer::create(task, ctx, config, shared)?))
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(SystemClock)
    }
}

/// What to do after one stage of a record.
enum Next<V> {
    /// Go on with this value.
    Value(V),
    /// The record is skipped (dropped or a tolerated failure).
    Skip,
    /// The task is stopping: leave the rest of the batch.
    Stop,
}

fn run_inner(args: SourceTaskArgs, clients: impl SourceClients) -> ConnectResult<()> {
    let mut lp = Loop::start(args, clients)?;
    let result = lp.run();
    lp.shut_down(result)
}

/// Runs an async task's loop on the worker's multi-threaded runtime, as a tokio task rather
/// than a thread (issue #43): `poll` is awaited, a stop request drops a pending poll, and the
/// loop's synchronous steps (sending, committing, start and stop) run on the runtime's
/// blocking pool ([`off_runtime`]), so a wait for Kafka never stalls the runtime's other work.
/// Writes RUNNING / PAUSED / FAILED as [`run`] does; a panic fails the task only.
pub async fn run_on_runtime(args: SourceTaskArgs) {
    use futures::FutureExt;
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    let result = std::panic::AssertUnwindSafe(drive_on_runtime(args, KafkaSourceClients))
        .catch_unwind()
        .await
        .unwrap_or_else(|payload| {
            Err(ConnectError::connect(format!(
                "{label} panicked: {}",
                panic_message(payload.as_ref())
            )))
        });
    if let Err(e) = result {
        tracing::error!(task = %reporter.id, error = %e, "source task failed");
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
}

/// Runs `f` on the loop on the runtime's blocking pool (the loop moves there and back), so
/// what may block (a send waiting for room, an offset commit, the task's `start` and `stop`
/// driven to completion) never holds a runtime thread. A panic in `f` becomes its error; the
/// loop comes back either way, so it can still shut down. `None` in `slot` afterwards only if
/// the runtime cancelled the step (it is shutting down).
async fn off_runtime(
    slot: &mut Option<Loop>,
    f: impl FnOnce(&mut Loop) -> ConnectResult<()> + Send + 'static,
) -> ConnectResult<()> {
    let mut lp = slot.take().expect("the loop is back after each step");
    let label = format!("task {}", lp.reporter.id);
    let joined = tokio::task::spawn_blocking(move || {
        let out = catch_panic(&label, || f(&mut lp));
        (lp, out)
    })
    .await;
    match joined {
        Ok((lp, out)) => {
            *slot = Some(lp);
            out
        }
        Err(e) => Err(ConnectError::connect(format!(
            "a step of the task did not finish: {e}"
        ))),
    }
}

/// Runs `f` on the loop in place (a step that cannot wait), a panic becoming its error.
fn in_place<T>(lp: &mut Loop, f: impl FnOnce(&mut Loop) -> ConnectResult<T>) -> ConnectResult<T> {
    let label = format!("task {}", lp.reporter.id);
    catch_panic(&label, || f(lp))
}

/// [`run_on_runtime`]'s loop, with its clients.
async fn drive_on_runtime(
    args: SourceTaskArgs,
    clients: impl SourceClients + Send + 'static,
) -> ConnectResult<()> {
    let label = format!("task {}", args.reporter.id);
    let lp =
        tokio::task::spawn_blocking(move || catch_panic(&label, || Loop::start(args, clients)))
            .await
            .map_err(|e| ConnectError::connect(format!("the task did not start: {e}")))??;
    let mut slot = Some(lp);
    let result = async {
        loop {
            let lp = slot.as_mut().expect("the loop");
            if lp.control.is_stopping() {
                return Ok(());
            }
            let control = lp.control.clone();
            // Created before the state is read, so a change in between is not missed.
            let changed = control.changed();
            if control.is_paused() {
                off_runtime(&mut slot, |lp| {
                    lp.report_target_state();
                    lp.end_requested_batch_transaction()
                })
                .await?;
                // Woken by a resume or a stop; at least every 500 ms, as the blocking loop.
                tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
                let lp = slot.as_mut().expect("the loop");
                lp.counters.metrics.turn_done();
                off_runtime(&mut slot, Loop::after_poll).await?;
                continue;
            }
            drop(changed);
            if lp.paused_reported != Some(false) {
                off_runtime(&mut slot, |lp| {
                    lp.report_target_state();
                    Ok(())
                })
                .await?;
            }
            let lp = slot.as_mut().expect("the loop");
            // `commit_record` of an async task must not block (its contract).
            in_place(lp, Loop::deliver_commit_records)?;
            let Some((polled, took)) = lp.poll_async().await else {
                return Ok(());
            };
            let batch = polled.as_ref().map_or(0, Vec::len);
            if lp.sends_inline(batch) {
                // Nothing in it waits: no thread needed (the common case of a small batch).
                // What could still wait (a batch refused meanwhile, a commit falling due)
                // moves the runtime's work off this thread first (`block_in_place`).
                in_place(lp, |lp| lp.send_polled(polled, took))?;
                if lp.after_poll_inline() {
                    in_place(lp, Loop::after_poll)?;
                } else {
                    off_runtime(&mut slot, Loop::after_poll).await?;
                }
            } else {
                off_runtime(&mut slot, move |lp| {
                    lp.send_polled(polled, took)?;
                    lp.after_poll()
                })
                .await?;
            }
        }
    }
    .await;
    match slot.take() {
        Some(lp) => {
            let label = format!("task {}", lp.reporter.id);
            tokio::task::spawn_blocking(move || catch_panic(&label, || lp.shut_down(result)))
                .await
                .map_err(|e| ConnectError::connect(format!("the task did not stop: {e}")))?
        }
        // The runtime is shutting down: the loop went with the cancelled step.
        None => result,
    }
}

impl Loop {
    /// Creates the task's producer (transactional under exactly-once), initializes and starts
    /// the task (Connect's `WorkerSourceTask.initializeAndStart`). The transformation chain is
    /// closed when this fails.
    fn start(args: SourceTaskArgs, mut clients: impl SourceClients) -> ConnectResult<Loop> {
        let SourceTaskArgs {
            connector,
            mut task,
            task_config,
            producer_config,
            converters,
            offsets,
            topic_creation,
            control,
            throttle,
            reporter,
            counters,
            offset_flush_interval,
            offset_flush_timeout,
            track_topics,
            mut chain,
            errors,
            exactly_once,
            plugin_metrics,
            shared_producers,
        } = args;
        counters.metrics.set_kind(TaskKind::Source);
        let operator = Arc::new(
            RetryWithToleranceOperator::new(
                &errors,
                Arc::new(TaskRetryClock::new(control.clone())),
            )
            .with_metrics(counters.metrics.errors.clone()),
        );
        let reporters = Arc::new(
            ErrorReporters::new(reporter.id.clone(), &errors, None)
                .with_metrics(counters.metrics.errors.clone()),
        );
        let logs_messages = errors.log_enable && errors.log_include_messages;
        let keep_originals = task.wants_commit_record() || logs_messages;
        let originals_without_payload =
            task.wants_commit_record() && !task.commit_record_reads_payload() && !logs_messages;
        let originals = (errors.tolerance == ToleranceType::All
            && errors.log_enable
            && errors.log_include_messages)
            .then(|| Arc::new(Mutex::new(HashMap::new())));
        let submitted = SubmittedRecords::new();
        let acks = submitted.inbox();
        let failure = Arc::new(Mutex::new(None));
        let record_acks = task
            .wants_commit_record()
            .then(|| Arc::new(Mutex::new(Vec::new())));
        let ctx = SourceProducerContext {
            counters: counters.clone(),
            record_acks: record_acks.clone(),
            acks: acks.clone(),
            failure: failure.clone(),
            tolerated: (errors.tolerance == ToleranceType::All).then(|| SendFailures {
                task: reporter.id.clone(),
                reporters: reporters.clone(),
                operator: operator.clone(),
                originals: originals.clone(),
            }),
            refused: exactly_once.is_none().then(|| Mutex::new(Vec::new())),
            refused_waiting: Default::default(),
            outstanding: Default::default(),
            shared_view: shared_producer::TaskClientView::new(
                producer_config.get("client.id").unwrap_or_default(),
            ),
        };
        let ctx = Arc::new(ctx);
        let shared_producers = shared_producers
            .filter(|_| exactly_once.is_none())
            .map(|s| (s, producer_config.clone()));
        let producer =
            match clients.producer(&reporter.id, &ctx, &producer_config, &shared_producers) {
                Ok(p) => p,
                Err(e) => {
                    chain.close();
                    return Err(e);
                }
            };
        let clock = clients.clock();
        let transactions = match exactly_once {
            None => None,
            Some(eos) => {
                match transactional(producer.as_ref()).and_then(|p| start_transactions(p, eos)) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        chain.close();
                        return Err(e);
                    }
                }
            }
        };
        let context = SourceTaskContext {
            config: task_config.clone(),
            offset_reader: Arc::new(ConnectorOffsetReader {
                connector: connector.clone(),
                store: offsets.clone(),
            }),
            stopping: control.stopping.clone(),
            transaction_context: transactions.as_ref().and_then(|t| t.context.clone()),
            plugin_metrics,
        };
        task.initialize(context);
        let instance = counters.metrics.begin_instance();
        let call = counters.metrics.call(instance, TaskCall::Start);
        let started = task.start(&task_config);
        drop(call);
        if let Err(e) = started {
            chain.close();
            return Err(e);
        }
        counters.record_start();
        let converters_block = converters.may_block();
        Ok(Loop {
            connector,
            task,
            producer,
            shared_producers,
            converters,
            offsets,
            submitted,
            acks,
            failure,
            control: control.clone(),
            throttle,
            counters,
            topics_seen: track_topics.then(super::task::TopicsSeen::default),
            topic_creator: topic_creation
                .map(|(rules, admin)| super::topic_creation::TopicCreator::new(rules, admin)),
            reporter: reporter.clone(),
            in_flight: record_acks.map(|a| (in_flight::InFlightRecords::default(), a)),
            offset_flush_timeout,
            chain,
            operator,
            reporters,
            keep_originals,
            originals_without_payload,
            originals,
            transactions,
            last_commit: clock.now(),
            clock,
            inline_converters: !converters_block,
            instance,
            offset_flush_interval,
            paused_reported: None,
        })
    }

    /// Polls, sends and commits until the task stops or fails (Connect's
    /// `AbstractWorkerSourceTask.execute`): PAUSED and RUNNING reported as the target state
    /// changes, acknowledgements applied as they come, offsets committed every
    /// `offset_flush_interval` (or transactions at their boundary).
    fn run(&mut self) -> ConnectResult<()> {
        while !self.control.is_stopping() {
            self.turn()?;
        }
        Ok(())
    }

    /// One turn of the loop: the target state reported, a `poll` and its records sent (or a
    /// wait while paused), acknowledgements applied, and the offsets committed when due (or
    /// the transaction at its boundary).
    fn turn(&mut self) -> ConnectResult<()> {
        let paused = self.report_target_state();
        if paused {
            // Connect commits on pause what the task asked for, so no transaction hangs
            // while it is paused.
            self.end_requested_batch_transaction()?;
            let control = self.control.clone();
            self.clock.wait(Duration::from_millis(500), &|d| {
                control.wait_while_paused(d)
            });
            self.counters.metrics.turn_done();
        } else {
            self.poll_and_send()?;
        }
        self.after_poll()
    }

    /// Reports PAUSED or RUNNING when the target state changed; returns whether paused.
    fn report_target_state(&mut self) -> bool {
        let paused = self.control.is_paused();
        if self.paused_reported != Some(paused) {
            self.reporter.report(
                if paused {
                    State::Paused
                } else {
                    State::Running
                },
                None,
            );
            self.paused_reported = Some(paused);
        }
        paused
    }

    /// The end of a turn: records of refused batches sent again, acknowledgements applied,
    /// and the offsets committed when due (or the transaction at its boundary).
    fn after_poll(&mut self) -> ConnectResult<()> {
        self.resend_refused()?;
        // Apply acknowledgements as they come, so committing has little left to do.
        self.submitted.process_acks();
        self.counters
            .metrics
            .set_active(self.submitted.pending() as i64);
        self.check_failure()?;
        if let Some(t) = &self.transactions {
            if t.due() {
                self.commit_transaction()?;
            }
            return Ok(());
        }
        if self.clock.since(self.last_commit) >= self.offset_flush_interval {
            match self.commit_offsets(None) {
                Err(ConnectError::Retriable(m)) => {
                    tracing::warn!(task = %self.reporter.id, "offset commit incomplete, retried later: {m}")
                }
                other => other?,
            }
            self.last_commit = self.clock.now();
        }
        Ok(())
    }

    /// Stops the task, then makes final what it produced (Connect's shutdown of a source task:
    /// `task.stop()`, then a last offset commit, or the open transaction committed or aborted),
    /// closes the chain and the producer; `result` is how the loop ended, returned first.
    fn shut_down(mut self, result: ConnectResult<()>) -> ConnectResult<()> {
        // Shutdown: the task stops first (it polls no more), as Connect stops a task before its
        // final offset commit; then in-flight records get a chance to be acknowledged, and what
        // was is committed.
        // Records Kafka acknowledged since the last turn reach `commit_record` before the task
        // stops: Connect calls it from the producer's callback as each record is acknowledged,
        // so a task stopped right after its records were acknowledged has seen them all
        // (MirrorSourceTask queues its offset syncs there).
        if let Err(e) = self.deliver_commit_records() {
            tracing::warn!(task = %self.reporter.id, "commit_record failed while stopping: {e}");
        }
        let call = self.counters.metrics.call(self.instance, TaskCall::Stop);
        let stop = self.task.stop();
        drop(call);
        let commit = if self.transactions.is_some() {
            // The open transaction is committed if the task stopped cleanly, aborted otherwise
            // (its records are then never visible to read_committed consumers). A task that
            // defines its own transactions gets what it asked for; a transaction it did not end
            // is aborted (Connect leaves it open until the task's next producer aborts it).
            let connector_defined = self
                .transactions
                .as_ref()
                .is_some_and(|t| t.context.is_some());
            if result.is_err() {
                self.abort_transaction();
                Ok(())
            } else if connector_defined {
                let ended = self.end_requested_batch_transaction();
                self.abort_transaction();
                ended
            } else {
                self.commit_transaction()
            }
        } else {
            match self.commit_offsets(Some(self.offset_flush_timeout)) {
                // Not durable in time: the records are in Kafka or will be resent from the last
                // committed offsets by the next owner; nothing to fail the task for.
                Err(ConnectError::Retriable(m)) => {
                    tracing::warn!(task = %self.reporter.id, "final offset commit incomplete: {m}");
                    Ok(())
                }
                other => other,
            }
        };
        self.chain.close();
        self.counters.record_stop();
        // What this task produced is acknowledged or given up by now (the final commit waited
        // for it); destroying the producer (purge, its polling thread, librdkafka's threads)
        // only takes time, often a few hundred ms, so it happens off the task thread and the
        // task counts as stopped at once: its UNASSIGNED status, a revocation's follow-up round
        // or the worker's exit do not wait for it.
        let Loop {
            producer, reporter, ..
        } = self;
        let id = reporter.id.to_string();
        if let Err(e) = std::thread::Builder::new()
            .name(format!("close-producer-{id}"))
            .spawn(move || drop(producer))
        {
            // The producer went with the failed spawn's closure, closed on this thread.
            tracing::debug!(task = %id, "closed the producer in place: {e}");
        }
        result?;
        commit?;
        stop
    }

    fn check_failure(&self) -> ConnectResult<()> {
        match self.failure.lock().unwrap().take() {
            Some(msg) => Err(ConnectError::connect(msg)),
            None => Ok(()),
        }
    }

    /// Hands acknowledged records to the task's `commit_record` (tasks that asked for it).
    fn deliver_commit_records(&mut self) -> ConnectResult<()> {
        let Some((map, acks)) = self.in_flight.as_mut() else {
            return Ok(());
        };
        let acked = std::mem::take(&mut *acks.lock().unwrap());
        for (seq, meta) in acked {
            if let Some(rec) = map.remove(seq) {
                let metadata =
                    meta.map(
                        |(partition, offset)| tributary_api::record::RecordMetadata {
                            partition,
                            offset,
                        },
                    );
                // As Connect's `WorkerSourceTask.commitTaskRecord`: an error is logged, and
                // neither the task nor its other records are affected.
                if let Err(e) = self.task.commit_record(&rec, metadata) {
                    tracing::error!(
                        task = %self.reporter.id,
                        "Exception thrown while calling task.commitRecord(): {e}"
                    );
                }
            }
        }
        Ok(())
    }

    /// Whether sending a polled batch of `n` records can run on a runtime thread, because
    /// nothing in it can wait: a small batch with room in the producer's queue, converters
    /// that do not block, no transformations (a hosted one calls into the JVM), no rate
    /// limits, no topic to create, no transaction, no records of a refused batch to send again.
    fn sends_inline(&self, n: usize) -> bool {
        n <= INLINE_BATCH
            && self.inline_converters
            && !self.operator.retries()
            && self.chain.is_empty()
            && !self.throttle.limits().any()
            && self.topic_creator.is_none()
            && self.transactions.is_none()
            && !self.producer.is_fatal()
            && !self.producer.context().has_refused()
            && self.producer.has_room(n)
    }

    /// Whether the end of a turn can run on a runtime thread: no offset commit due (it waits
    /// for Kafka), no transaction, no records of a refused batch to send again.
    fn after_poll_inline(&self) -> bool {
        self.transactions.is_none()
            && !self.producer.is_fatal()
            && !self.producer.context().has_refused()
            && self.clock.since(self.last_commit) < self.offset_flush_interval
    }

    /// Awaits an async task's `poll` (with how long it took), or `None` when a stop request
    /// came first (the pending poll is dropped). A step of the poll's future that blocks the
    /// runtime is reported by task name.
    /// A panic in the poll's future becomes the poll's error, so the loop still shuts down.
    async fn poll_async(&mut self) -> Option<(ConnectResult<Vec<SourceRecord>>, Duration)> {
        use futures::FutureExt;
        let stop = self.control.stopping.clone();
        let id = self.reporter.id.clone();
        let counters = self.counters.clone();
        let began = Instant::now();
        let future = self.task.poll_future()?;
        let call = counters.metrics.call(self.instance, TaskCall::Poll);
        let watched = instance::Watched::new(future, |took: Duration| {
            counters.metrics.note_blocking_step(took);
            tracing::warn!(task = %id, "the task's poll blocked the runtime for {} ms: an async task must not block (a task whose calls block implements SourceTask, which runs on a thread of its own)", took.as_millis());
        });
        let caught = std::panic::AssertUnwindSafe(watched).catch_unwind();
        let polled = tokio::select! {
            polled = caught => Some(polled.unwrap_or_else(|payload| {
                Err(ConnectError::connect(format!(
                    "task {} panicked: {}",
                    self.reporter.id,
                    panic_message(payload.as_ref())
                )))
            })),
            () = stop.stopped() => None,
        };
        drop(call);
        polled.map(|p| (p, began.elapsed()))
    }

    fn poll_and_send(&mut self) -> ConnectResult<()> {
        self.deliver_commit_records()?;
        let began = Instant::now();
        let call = self.counters.metrics.call(self.instance, TaskCall::Poll);
        let polled = self.task.poll();
        drop(call);
        self.send_polled(polled, began.elapsed())
    }

    /// Sends what `poll` returned after `took` (Connect's `sendRecords`): a retriable error is
    /// logged (the next turn polls again), another fails the task.
    fn send_polled(
        &mut self,
        polled: ConnectResult<Vec<SourceRecord>>,
        took: Duration,
    ) -> ConnectResult<()> {
        let metrics = &self.counters.metrics;
        metrics.poll_time.record(took);
        let records = match polled {
            Ok(r) => {
                if !r.is_empty() {
                    metrics.batch_sizes.record(r.len() as u64);
                    metrics
                        .poll_total
                        .fetch_add(r.len() as u64, Ordering::Relaxed);
                }
                r
            }
            Err(ConnectError::Retriable(msg)) => {
                tracing::warn!(connector = %self.connector, "retriable error from poll: {msg}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        // Rate limits (issue #36): the polled batch waits until it fits the records rate; a
        // stop request ends the wait (the records are then not sent, and their offsets not
        // committed: the task's next instance polls them again).
        if !records.is_empty()
            && !self
                .throttle
                .wait_on(self.clock.as_ref(), &self.control, records.len() as u64, 0)
        {
            return Ok(());
        }
        let context = self.transactions.as_ref().and_then(|t| t.context.clone());
        let mut whole_batch = true;
        for record in records {
            // A request naming this record ends the transaction right after it (sent or
            // dropped), as Connect's `recordDispatched` / `recordDropped` do.
            let request = match &context {
                Some(c) => c.take_for_record(&record)?,
                None => None,
            };
            if !self.process(record)? {
                whole_batch = false;
                break;
            }
            if let Some(request) = request {
                self.end_transaction(request)?;
            }
        }
        if self
            .transactions
            .as_ref()
            .is_some_and(|t| t.open && t.boundary == TransactionBoundary::Poll)
        {
            self.commit_transaction()?;
        }
        if whole_batch {
            self.end_requested_batch_transaction()?;
        }
        Ok(())
    }

    /// The next step after a stage's outcome: a failure is reported (with the polled record
    /// when kept) before the task fails or skips the record.
    fn settle<V>(
        &self,
        ctx: &ProcessingContext,
        outcome: ConnectResult<Outcome<V>>,
        original: Option<&SourceRecord>,
    ) -> ConnectResult<Next<V>> {
        match outcome {
            Ok(Outcome::Done(v)) => Ok(Next::Value(v)),
            Ok(Outcome::Skipped) => {
                self.reporters.report(ctx, original.map(Original::Source));
                Ok(Next::Skip)
            }
            Ok(Outcome::Stopping) => Ok(Next::Stop),
            Err(e) => {
                self.reporters.report(ctx, original.map(Original::Source));
                Err(e)
            }
        }
    }

    /// A record that is not sent (dropped by a transformation, or a tolerated failure):
    /// the task's `commit_record` gets it without metadata (Connect's `recordDropped`).
    fn dropped(&mut self, original: Option<SourceRecord>, failed: bool) {
        if failed {
            self.counters.record_skipped(1);
        }
        if let (Some(rec), true) = (original, self.in_flight.is_some()) {
            if let Err(e) = self.task.commit_record(&rec, None) {
                tracing::error!(task = %self.reporter.id, "Exception thrown while calling task.commitRecord(): {e}");
            }
        }
    }

    /// A stage's outcome as what [`process`](Self::process) does next: go on with the value
    /// (`Continue`), or end (`Break`) with the record skipped after a tolerated failure
    /// (`true`: the task's `commit_record` is told, the batch goes on) or left unsent because
    /// the task is stopping (`false`).
    fn stage<V>(
        &mut self,
        ctx: &ProcessingContext,
        outcome: ConnectResult<Outcome<V>>,
        original: &mut Option<SourceRecord>,
    ) -> ConnectResult<ControlFlow<bool, V>> {
        Ok(match self.settle(ctx, outcome, original.as_ref())? {
            Next::Value(v) => ControlFlow::Continue(v),
            Next::Skip => {
                self.dropped(original.take(), true);
                ControlFlow::Break(true)
            }
            Next::Stop => ControlFlow::Break(false),
        })
    }

    /// Transforms, converts and sends one record (Connect's `WorkerSourceTask.sendRecords` for
    /// one record: transformation chain, then header, key and value converters, then the
    /// producer). Returns false when the task is stopping (the rest of the batch is left
    /// unsent and uncommitted).
    fn process(&mut self, record: SourceRecord) -> ConnectResult<bool> {
        let mut ctx = ProcessingContext::default();
        let mut original = self.keep_originals.then(|| {
            if self.originals_without_payload {
                without_payload(&record)
            } else {
                record.clone()
            }
        });
        let record = if self.chain.is_empty() {
            record
        } else {
            let outcome = self.chain.apply(&self.operator, &mut ctx, record);
            match self.stage(&ctx, outcome, &mut original)? {
                ControlFlow::Continue(Some(r)) => r,
                ControlFlow::Continue(None) => {
                    self.dropped(original, false);
                    return Ok(true);
                }
                ControlFlow::Break(go_on) => return Ok(go_on),
            }
        };
        let SourceRecord {
            source_partition,
            source_offset,
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            headers,
        } = record;
        // Headers a key or value converter reads or writes (a hosted Java converter), as bytes.
        let mut raw_headers: RecordHeaders = Vec::new();
        // Connect converts the headers first, then the key, then the value.
        let outcome = self.convert_headers(&mut ctx, &topic, &headers, &mut raw_headers);
        let kafka_headers = proceed!(self.stage(&ctx, outcome, &mut original)?);
        let outcome = convert_data(
            &self.operator,
            &mut ctx,
            (
                Stage::KeyConverter,
                self.converters.key.as_ref(),
                self.converters.key_class,
            ),
            &topic,
            &mut raw_headers,
            (key_schema.as_ref(), key),
        );
        let key_bytes = proceed!(self.stage(&ctx, outcome, &mut original)?);
        let outcome = convert_data(
            &self.operator,
            &mut ctx,
            (
                Stage::ValueConverter,
                self.converters.value.as_ref(),
                self.converters.value_class,
            ),
            &topic,
            &mut raw_headers,
            (value_schema.as_ref(), value),
        );
        let value_bytes = proceed!(self.stage(&ctx, outcome, &mut original)?);
        // Sent as the converters left them.
        let kafka_headers = if raw_headers.is_empty() {
            kafka_headers
        } else {
            Some(owned_headers(&raw_headers))
        };
        // The bytes rate (issue #36) counts the record as it is sent: key, value and headers.
        if self.throttle.limits().bytes_per_second.is_some() {
            use rdkafka::message::Headers as _;
            let header_bytes: usize = kafka_headers.as_ref().map_or(0, |h| {
                h.iter()
                    .map(|x| x.key.len() + x.value.map_or(0, <[u8]>::len))
                    .sum()
            });
            let bytes = key_bytes.as_deref().map_or(0, <[u8]>::len)
                + value_bytes.as_deref().map_or(0, <[u8]>::len)
                + header_bytes;
            if !self
                .throttle
                .wait_on(self.clock.as_ref(), &self.control, 0, bytes as u64)
            {
                return Ok(false);
            }
        }
        self.prepare_send(&topic, &source_partition, &source_offset)?;
        // Records of a refused batch go again before any record after them.
        if !self.resend_refused()? {
            return Ok(false);
        }
        let seq = self.submitted.submit(source_partition, source_offset);
        self.keep_original(seq, original);
        let mut rec: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(&topic, seq as usize);
        if let Some(k) = key_bytes.as_deref() {
            rec = rec.key(k);
        }
        if let Some(v) = value_bytes.as_deref() {
            rec = rec.payload(v);
        }
        if let Some(p) = kafka_partition {
            rec = rec.partition(p);
        }
        if let Some(ts) = timestamp {
            rec = rec.timestamp(ts);
        }
        if let Some(h) = kafka_headers {
            rec = rec.headers(h);
        }
        self.send(rec, seq, &topic)
    }

    /// The header converter's stage: the record's headers as Kafka headers, or, when a key or
    /// value converter uses headers (`raw` then holds them as bytes for it), none yet.
    fn convert_headers(
        &self,
        ctx: &mut ProcessingContext,
        topic: &str,
        headers: &Headers,
        raw: &mut RecordHeaders,
    ) -> ConnectResult<Outcome<Option<OwnedHeaders>>> {
        let header_aware =
            self.converters.key.uses_headers() || self.converters.value.uses_headers();
        let converter = &self.converters.header;
        self.operator.execute(
            ctx,
            Stage::HeaderConverter,
            self.converters.header_class,
            || {
                if headers.is_empty() {
                    return Ok(None);
                }
                if header_aware {
                    raw.clear();
                    for header in headers.iter() {
                        let bytes = converter.from_connect_header(
                            topic,
                            &header.key,
                            header.schema.as_ref(),
                            &header.value,
                        )?;
                        raw.push((header.key.clone(), bytes));
                    }
                    return Ok(None);
                }
                let mut h = OwnedHeaders::new_with_capacity(headers.len());
                for header in headers.iter() {
                    let bytes = converter.from_connect_header(
                        topic,
                        &header.key,
                        header.schema.as_ref(),
                        &header.value,
                    )?;
                    h = h.insert(KafkaHeader {
                        key: &header.key,
                        value: bytes.as_deref(),
                    });
                }
                Ok(Some(h))
            },
        )
    }

    /// What comes before a record is sent: its topic created when the connector asks for it
    /// (KIP-158) and recorded as active (KIP-558); under exactly-once, the transaction begun
    /// and the record's offset put in it.
    fn prepare_send(
        &mut self,
        topic: &str,
        partition: &Arc<SourceMap>,
        offset: &SourceMap,
    ) -> ConnectResult<()> {
        if let Some(creator) = &mut self.topic_creator {
            creator.ensure(topic)?;
        }
        if let Some(seen) = &mut self.topics_seen {
            seen.record(topic, &self.reporter);
        }
        if let Some(t) = &mut self.transactions {
            if !t.open {
                begin_transaction(self.producer.as_ref())?;
                t.open = true;
            }
            t.offsets.set(partition, offset);
        }
        Ok(())
    }

    /// Keeps the polled record of submission `seq`, when kept at all: for the error reporters
    /// of a failed send, and for the task's `commit_record` once it is acknowledged.
    fn keep_original(&mut self, seq: u64, original: Option<SourceRecord>) {
        if let Some(originals) = &self.originals {
            if let Some(rec) = &original {
                originals.lock().unwrap().insert(seq, rec.clone());
            }
        }
        if let (Some(rec), Some((map, _))) = (original, self.in_flight.as_mut()) {
            map.insert(seq, rec);
        }
    }

    /// Hands submission `seq` to the producer, waiting while its queue is full. Returns false
    /// when the task started stopping meanwhile (the record is forgotten, not committed).
    fn send(
        &mut self,
        mut rec: BaseRecord<'_, [u8], [u8], usize>,
        seq: u64,
        topic: &str,
    ) -> ConnectResult<bool> {
        loop {
            match self.producer.send(rec) {
                Ok(()) => {
                    self.counters.record_produced(1);
                    self.counters
                        .metrics
                        .write_total
                        .fetch_add(1, Ordering::Relaxed);
                    return Ok(true);
                }
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    rec = back;
                    if self.control.is_stopping() {
                        self.forget(seq);
                        return Ok(false);
                    }
                    self.check_failure()?;
                    // librdkafka frees queue space as deliveries are reported: apply those
                    // acknowledgements, then wait for a share of the records in flight to be
                    // acknowledged (at most 1 ms), rather than polling on a fixed sleep.
                    self.submitted.process_acks();
                    let wanted = (self.submitted.pending() / 4).clamp(1, QUEUE_FULL_BATCH);
                    // On a runtime worker (an async task's send, issue #43) the wait hands the
                    // runtime's work to another thread; elsewhere it just waits.
                    tokio::task::block_in_place(|| self.acks.wait(wanted, QUEUE_FULL_WAIT));
                }
                Err((e, _)) if is_too_large(&e) && self.transactions.is_none() => {
                    // Larger than `message.max.bytes`: this record's own failure, handled as
                    // Java's producer reports it (through the send's callback).
                    self.producer.context().send_failed(seq, &e, topic);
                    self.check_failure()?;
                    return Ok(true);
                }
                Err((e, back)) if self.producer.is_fatal() => {
                    // The shared producer met a fatal error: the record goes again, after the
                    // records the producer lost, on its replacement (`resend_refused`).
                    tracing::debug!(task = %self.reporter.id, "record {seq} kept for the shared producer's replacement: {e}");
                    self.producer.context().keep_for_resend(seq, &back);
                    return Ok(true);
                }
                Err((e, _)) => {
                    self.forget(seq);
                    return Err(ConnectError::connect(format!(
                        "Failed to send record to topic {topic}: {e}"
                    )));
                }
            }
        }
    }

    /// After a fatal error of the shared producer: once the task's records still in flight on
    /// it are reported (those it failed are kept, as a refused batch's, to be sent again), the
    /// task leases the producer that replaces it; the records it failed go again first, in
    /// their order. Acknowledged records keep their offsets, committed by the task as usual.
    /// False when the task is stopping first.
    fn renew_shared_producer(&mut self) -> ConnectResult<bool> {
        // It waits for Kafka: on a runtime worker (an async task's step, issue #43) the
        // runtime's work moves to another thread meanwhile.
        tokio::task::block_in_place(|| self.renew_shared_producer_now())
    }

    /// [`Self::renew_shared_producer`], waiting where it runs.
    fn renew_shared_producer_now(&mut self) -> ConnectResult<bool> {
        if !self.wait_outstanding()? {
            return Ok(false);
        }
        self.check_failure()?;
        let Some((producers, config)) = &self.shared_producers else {
            return Ok(true);
        };
        tracing::warn!(task = %self.reporter.id, "the shared producer met a fatal error; continuing on its replacement");
        let ctx = self.producer.context().clone();
        self.producer = Box::new(TaskProducer::create(
            &self.reporter.id,
            &ctx,
            config,
            &Some((producers.clone(), config.clone())),
        )?);
        Ok(true)
    }

    /// Sends again, one at a time and in the order they were first sent, the records of batches
    /// the broker refused as too large (Java's producer splits such a batch): once everything
    /// in flight was reported, each goes alone and its report is waited for before the next. A
    /// record refused on its own is its own failure (tolerated, or the task fails). Returns
    /// false when the task is stopping (what was not sent again stays uncommitted).
    fn resend_refused(&mut self) -> ConnectResult<bool> {
        if self.producer.is_fatal() && !self.renew_shared_producer()? {
            return Ok(false);
        }
        while self.producer.context().has_refused() {
            // The rest of a refused batch, and the batches sent after it, report first.
            if !self.wait_outstanding()? {
                return Ok(false);
            }
            for r in self.producer.context().take_refused() {
                let mut rec: BaseRecord<'_, [u8], [u8], usize> =
                    BaseRecord::with_opaque_to(&r.topic, r.seq as usize | SENT_ALONE)
                        .partition(r.partition);
                if let Some(k) = r.key.as_deref() {
                    rec = rec.key(k);
                }
                if let Some(v) = r.payload.as_deref() {
                    rec = rec.payload(v);
                }
                if let Some(ts) = r.timestamp {
                    rec = rec.timestamp(ts);
                }
                if let Some(h) = r.headers {
                    rec = rec.headers(h);
                }
                if let Err((e, _)) = self.producer.send(rec) {
                    self.producer.context().send_failed(r.seq, &e, &r.topic);
                }
                if !self.wait_outstanding()? {
                    return Ok(false);
                }
                self.check_failure()?;
            }
        }
        Ok(true)
    }

    /// Waits until every record handed to the producer was reported; false when the task is
    /// asked to stop first.
    fn wait_outstanding(&self) -> ConnectResult<bool> {
        // It waits for Kafka: on a runtime worker (an async task's step, issue #43) the
        // runtime's work moves to another thread meanwhile.
        tokio::task::block_in_place(|| self.wait_outstanding_now())
    }

    /// [`Self::wait_outstanding`], waiting where it runs.
    fn wait_outstanding_now(&self) -> ConnectResult<bool> {
        loop {
            match self.producer.flush(RESEND_WAIT) {
                Ok(()) => return Ok(true),
                Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut)) => {
                    if self.control.is_stopping() {
                        return Ok(false);
                    }
                    self.check_failure()?;
                }
                Err(e) => {
                    return Err(ConnectError::connect(format!(
                        "Failed to send the records of a batch the broker refused: {e}"
                    )))
                }
            }
        }
    }

    /// Forgets a submitted record that was not handed to the producer.
    fn forget(&mut self, seq: u64) {
        self.submitted.remove(seq);
        if let Some(originals) = &self.originals {
            originals.lock().unwrap().remove(&seq);
        }
        if let Some((map, _)) = self.in_flight.as_mut() {
            map.remove(seq);
        }
    }

    /// Commits the offsets whose records (and all before them) were acknowledged. With a
    /// timeout, first waits up to that long for outstanding records (used at shutdown).
    fn commit_offsets(&mut self, flush: Option<Duration>) -> ConnectResult<()> {
        // It waits for Kafka: on a runtime worker (an async task's step, issue #43) the
        // runtime's work moves to another thread meanwhile.
        tokio::task::block_in_place(|| self.commit_offsets_now(flush))
    }

    /// [`Self::commit_offsets`], waiting where it runs.
    fn commit_offsets_now(&mut self, flush: Option<Duration>) -> ConnectResult<()> {
        if let Some(timeout) = flush {
            if self.submitted.pending() > 0 {
                // Only acknowledged records are committed below; the others stay uncommitted.
                if let Err(e) = self.producer.flush(timeout) {
                    tracing::warn!(
                        task = %self.reporter.id,
                        pending = self.submitted.pending(),
                        error = %e,
                        "outstanding records not all acknowledged within the flush timeout"
                    );
                }
            }
        }
        let committable = self.submitted.committable();
        if committable.is_empty() {
            // Nothing to write, yet a successful commit for the task, as Connect's
            // `WorkerSourceTask.commitOffsets` calls `commitSourceTask` then too: a task that
            // finishes work at its commit (MirrorSourceTask's delayed offset syncs) must not
            // wait for a record that may never come.
            let _call = self.counters.metrics.call(self.instance, TaskCall::Commit);
            return self.task.commit();
        }
        let entries = committable
            .iter()
            .map(|(p, o)| (offset_key(&self.connector, p), Some(offset_value(o))))
            .collect();
        // Bounded, and abandoned when the task is asked to stop (a worker cut off from Kafka
        // must stop its tasks promptly); the offsets are committed again next time.
        let control = self.control.clone();
        let stopping = move || flush.is_none() && control.is_stopping();
        let began = Instant::now();
        let written = self
            .offsets
            .set_within(entries, self.offset_flush_timeout, &stopping);
        self.counters
            .metrics
            .commit_done(written.is_ok(), began.elapsed());
        if written.is_err() {
            // Written at the next commit (with whatever is newer by then).
            self.submitted.restore(committable);
        }
        written?;
        self.counters.record_offset_commit();
        let _call = self.counters.metrics.call(self.instance, TaskCall::Commit);
        self.task.commit()
    }
}

/// Kafka headers of `(key, bytes)` pairs, in order.
fn owned_headers(headers: &RecordHeaders) -> OwnedHeaders {
    let mut h = OwnedHeaders::new_with_capacity(headers.len());
    for (key, value) in headers {
        h = h.insert(KafkaHeader {
            key,
            value: value.as_deref(),
        });
    }
    h
}

/// One converter stage of a source record (Connect's `convertKey` / `convertValue`, run by the
/// retry and tolerance operator): the record's key or value (`null` when absent) and its schema
/// to bytes, by the stage's converter, given the record's headers as converted so far when the
/// converter uses them. With retries on, every attempt converts a copy; otherwise the value is
/// moved into the one attempt.
fn convert_data(
    operator: &RetryWithToleranceOperator,
    ctx: &mut ProcessingContext,
    (stage, converter, class): (
        Stage,
        &dyn tributary_api::converter::Converter,
        &'static str,
    ),
    topic: &str,
    headers: &mut RecordHeaders,
    (schema, data): (
        Option<&tributary_api::data::SchemaRef>,
        tributary_api::data::Value,
    ),
) -> ConnectResult<Outcome<Option<Vec<u8>>>> {
    let retries = operator.retries();
    let mut slot = Some(data);
    operator.execute(ctx, stage, class, || {
        let data = if retries { slot.clone() } else { slot.take() }
            .unwrap_or(tributary_api::data::Value::Null);
        if converter.uses_headers() {
            return converter.from_connect_data_with_headers(topic, headers, schema, &data);
        }
        converter.from_connect_data_owned(topic, schema, data)
    })
}

/// `record` as a task that does not read the payload in `commit_record` is handed it: its
/// source partition and offset, topic, Kafka partition and timestamp; key and value null,
/// no schemas or headers.
fn without_payload(record: &SourceRecord) -> SourceRecord {
    SourceRecord {
        source_partition: Arc::clone(&record.source_partition),
        source_offset: record.source_offset.clone(),
        topic: record.topic.clone(),
        kafka_partition: record.kafka_partition,
        key_schema: None,
        key: tributary_api::data::Value::Null,
        value_schema: None,
        value: tributary_api::data::Value::Null,
        timestamp: record.timestamp,
        headers: Default::default(),
    }
}
