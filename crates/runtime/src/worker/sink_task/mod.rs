//! A sink task's loop (Connect's `WorkerSinkTask`): consume with librdkafka in group
//! `connect-<connector>`, convert, `put`, and commit the offsets `pre_commit` returns every
//! `offset.flush.interval.ms`, when partitions are revoked, and on shutdown. Partition
//! assignment changes call the task's `open` / `close`.
//!
//! Delivery rule: an offset is committed only for records that were handed to `put`. Every
//! record the consumer returns is kept in a pending queue until `put` takes it, whatever the
//! task's state: a record that arrives while the task is paused (fetched before the pause took
//! effect, or from a partition assigned while paused) waits there for the resume instead of
//! being dropped, and the records of a revoked partition are dropped from the queue without
//! their offsets being committed, so the partition's next owner consumes them again.
//!
//! Records are converted and transformed when consumed, under the connector's error handling
//! ([`super::errors`]). A record a transformation drops, or whose failure `errors.tolerance=all`
//! tolerates (reported to the error log and the dead letter queue first), counts as consumed:
//! its offset is committed once the records before it were delivered. Offsets are committed
//! for the partitions and offsets records were consumed from (KIP-793), whatever topic or
//! partition a transformation gave them, so `pre_commit` sees those original partitions.
//!
//! The task's requests through its `SinkTaskContext` are carried out between calls into the
//! task, as Connect's `WorkerSinkTask` does: rewinds (`offset`) seek the consumer before the
//! next poll (records of a rewound partition waiting in the queue are dropped, and held back
//! until the seek succeeds); partitions the task paused are paused in the consumer and their
//! queued records held back; a commit request commits at the next turn. A `put` failing with
//! a retriable error pauses every partition and hands the same batch to `put` again after the
//! task's `timeout`, or at the next offset commit when it set none, polling meanwhile. `put`
//! is called on every turn, with no records when none are ready.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use tributary_api::converter::RecordHeaders;
use tributary_api::record::{Headers, SinkRecord, TopicPartition};
use tributary_api::sink::{PartitionOffsets, SinkTask, SinkTaskContext, SinkTaskRequests};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::chain::TransformationChain;
use super::clock::{Clock, SystemClock};
use super::converters::TaskConverters;
use super::errors::{
    DeadLetterQueue, DeadLetterWriter, ErrorReporters, Original, Outcome, ProcessingContext,
    RawRecord, RetryWithToleranceOperator, Stage, TaskRetryClock, WorkerErrantRecordReporter,
};
use super::metrics::{TaskCall, TaskKind};
use super::task::{catch_panic, error_trace, TaskControl, TaskStatusReporter};
use super::TaskCounters;
use crate::config::errors::ErrorHandlingConfig;
use crate::storage::status::State;

mod async_task;
mod consumer;
#[cfg(test)]
mod memory;
#[cfg(test)]
mod tests;

pub use async_task::AsyncSinkAdapter;
pub use consumer::{
    kafka_consumer, ConsumedRecord, ConsumerOps, KafkaSinkConsumer, RebalanceListener, SinkConsumer,
};

/// Most records handed to one `put` (Java's `max.poll.records` default).
const MAX_BATCH: usize = 500;

/// A consumed record waiting in the pending queue.
enum Pending {
    /// A record for `put`, with its consumed form when the errant record reporter needs it,
    /// and its size as consumed (key, value and headers, bytes; for the bytes rate, issue #36).
    Record(SinkRecord, Option<Box<RawRecord>>, u32),
    /// A record consumed but not delivered (dropped by a transformation, or a tolerated
    /// failure): only its offset remains, committed once the records before it were delivered.
    Consumed(TopicPartition, i64),
}

impl Pending {
    /// Whether the entry was consumed from `tp` (its original partition, KIP-793).
    fn consumed_from(&self, tp: &TopicPartition) -> bool {
        match self {
            Pending::Record(r, _, _) => {
                r.original_kafka_partition == tp.partition && r.original_topic == tp.topic
            }
            Pending::Consumed(p, _) => p == tp,
        }
    }
}

struct Shared {
    task: Box<dyn SinkTask>,
    /// The task's counters: its calls into `pre_commit` are watched (issue #43).
    counters: Arc<TaskCounters>,
    /// This instance's number in the counters ([`super::metrics::TaskMetrics::begin_instance`]).
    instance: u64,
    /// Next offset to consume per partition (as consumed, KIP-793), for records already given
    /// to `put` (or consumed and not delivered).
    current: PartitionOffsets,
    /// Records returned by the consumer and not yet given to `put`, in consumption order.
    pending: VecDeque<Pending>,
    /// The task's error reporters: dead letter queue records are made durable before offsets
    /// are committed.
    reporters: Arc<ErrorReporters>,
    /// How long a commit waits for the dead letter queue.
    dlq_flush_timeout: Duration,
    /// Whether the loop has paused the consumer's partitions (the task's target state is
    /// PAUSED); partitions assigned meanwhile are paused as soon as they arrive.
    consumer_paused: bool,
    /// While a batch that failed with a retriable error waits at the front of `pending`: when
    /// to hand it to `put` again. Every partition is paused meanwhile (Connect's
    /// `pausedForRedelivery`).
    redelivery: Option<Instant>,
    /// Whether `redelivery` waits for the rate limits, the batch already booked.
    throttle_booked: bool,
    /// The task's requests (`SinkTaskContext`): rewinds, pauses, timeout, commit.
    requests: Arc<SinkTaskRequests>,
    /// The partitions whose records are held back in `pending`: paused by the task, or
    /// waiting for a rewind. Empty in the common case, so batches are taken whole.
    held: HashSet<TopicPartition>,
    /// Set when the consumer's paused partitions must be brought in line with the target
    /// state, the redelivery and the task's requests (after a rebalance or a change of any).
    pauses_stale: bool,
    failure: Option<ConnectError>,
    /// Partitions revoked during the consumer's last poll call: records of theirs the loop's
    /// poll returned before are dropped, not delivered (their next owner reads them).
    revoked_in_poll: Vec<TopicPartition>,
    /// The task was stopped (at shutdown): later rebalance callbacks (the consumer's own
    /// revocation as it leaves the group) do nothing, as Connect's `taskStopped` check does.
    stopped: bool,
}

impl Shared {
    /// Whether an entry of `pending` may go to `put` now.
    fn deliverable(&self, p: &Pending) -> bool {
        self.held.is_empty() || !self.held.iter().any(|tp| p.consumed_from(tp))
    }

    /// Whether `pending` holds anything `put` may take now.
    fn has_deliverable(&self) -> bool {
        if self.held.is_empty() {
            !self.pending.is_empty()
        } else {
            self.pending.iter().any(|p| self.deliverable(p))
        }
    }

    /// Takes up to [`MAX_BATCH`] deliverable entries from `pending` and hands them to `take`, in
    /// order (moved once, straight into the batch); held entries keep their place.
    fn take_batch(&mut self, mut take: impl FnMut(Pending)) {
        if self.held.is_empty() {
            let n = self.pending.len().min(MAX_BATCH);
            self.pending.drain(..n).for_each(take);
            return;
        }
        let mut taken = 0;
        let mut kept = VecDeque::with_capacity(self.pending.len());
        for p in std::mem::take(&mut self.pending) {
            if taken < MAX_BATCH && self.deliverable(&p) {
                taken += 1;
                take(p);
            } else {
                kept.push_back(p);
            }
        }
        self.pending = kept;
    }

    /// The records and bytes [`Self::take_batch`] would hand to `put` now.
    fn next_batch_size(&self) -> (u64, u64) {
        let mut records = 0u64;
        let mut bytes = 0u64;
        for p in self
            .pending
            .iter()
            .filter(|p| self.held.is_empty() || self.deliverable(p))
            .take(MAX_BATCH)
        {
            if let Pending::Record(_, _, b) = p {
                records += 1;
                bytes += u64::from(*b);
            }
        }
        (records, bytes)
    }

    /// Recomputes `held` from the task's paused partitions and waiting rewinds.
    fn refresh_held(&mut self) {
        let mut held = self.requests.paused();
        held.extend(self.requests.pending_rewinds());
        self.held = held;
    }
}

/// The loop's rebalance callbacks (Connect's `WorkerSinkTask.HandleRebalance`): on revocation,
/// commit what was delivered of the revoked partitions, `close` them and drop their queued
/// records; on assignment, pause what must not fetch yet and `open` the new partitions.
struct SinkRebalance {
    shared: Arc<Mutex<Shared>>,
    /// Counts revocations, so the loop's poll sees one without taking the lock per record.
    revocations: Arc<AtomicU64>,
}

impl RebalanceListener for SinkRebalance {
    fn revoked(&self, consumer: &dyn ConsumerOps, revoked: &[TopicPartition]) {
        let mut shared = self.shared.lock().unwrap();
        if shared.stopped {
            return;
        }
        if let Err(e) = commit(consumer, &mut shared, Some(revoked)) {
            tracing::warn!("commit on revocation failed: {e}");
        }
        if let Err(e) = shared.task.close(revoked) {
            shared.failure.get_or_insert(e);
        }
        for tp in revoked {
            shared.current.remove(tp);
        }
        let remaining: HashSet<TopicPartition> = consumer
            .assignment()
            .unwrap_or_default()
            .into_iter()
            .filter(|tp| !revoked.contains(tp))
            .collect();
        shared.requests.set_assignment(remaining);
        shared.refresh_held();
        // Not handed to `put` and not committed: the partition's next owner reads them.
        shared
            .pending
            .retain(|p| !revoked.iter().any(|tp| p.consumed_from(tp)));
        // Nor those the current poll returned before this revocation (still in the loop's
        // poll buffer, not yet in `pending`).
        shared.revoked_in_poll.extend(revoked.iter().cloned());
        self.revocations.fetch_add(1, Ordering::Release);
    }

    fn assigned(&self, consumer: &dyn ConsumerOps, assigned: &[TopicPartition]) {
        let mut shared = self.shared.lock().unwrap();
        if shared.consumer_paused || shared.redelivery.is_some() {
            // Assigned while the task is paused or waiting to redeliver: fetch nothing
            // until it resumes.
            if let Err(e) = consumer.pause(assigned) {
                tracing::warn!("pausing newly assigned partitions failed: {e}");
            }
        }
        let now: HashSet<TopicPartition> = consumer
            .assignment()
            .unwrap_or_default()
            .into_iter()
            .chain(assigned.iter().cloned())
            .collect();
        shared.requests.set_assignment(now);
        if let Err(e) = shared.task.open(assigned) {
            shared.failure.get_or_insert(e);
        }
        // Partitions the task paused before (and still owns), or pauses or rewinds from
        // `open`, take effect before the next poll.
        shared.refresh_held();
        shared.pauses_stale = true;
    }
}

/// Commits what `pre_commit` returns for the delivered offsets (of `only`'s partitions, or
/// all), after the dead letter queue's records are durable (Connect's `commitOffsets`).
fn commit(
    consumer: &dyn ConsumerOps,
    shared: &mut Shared,
    only: Option<&[TopicPartition]>,
) -> ConnectResult<()> {
    let current: PartitionOffsets = shared
        .current
        .iter()
        .filter(|(tp, _)| only.is_none_or(|o| o.contains(tp)))
        .map(|(tp, o)| (tp.clone(), *o))
        .collect();
    if current.is_empty() {
        return Ok(());
    }
    shared.reporters.flush(shared.dlq_flush_timeout);
    let call = shared
        .counters
        .metrics
        .call(shared.instance, TaskCall::Commit);
    let to_commit = shared.task.pre_commit(&current);
    drop(call);
    let to_commit = to_commit?;
    if to_commit.is_empty() {
        return Ok(());
    }
    consumer.commit_sync(&to_commit)
}

/// The clients and clock a sink loop runs with: Kafka's ([`KafkaSinkClients`]) or, in the
/// unit tests, in-memory ones.
pub trait SinkClients {
    /// The consumer.
    type Consumer: SinkConsumer;
    /// The dead letter queue, when the connector has one (created before the task starts,
    /// as Connect creates its topic). Errors fail the task.
    fn dead_letter_queue(
        &mut self,
        errors: &ErrorHandlingConfig,
    ) -> ConnectResult<Option<Box<dyn DeadLetterWriter>>>;
    /// The consumer, its rebalances going to `listener`. Errors fail the task.
    fn consumer(
        self,
        listener: Arc<dyn RebalanceListener>,
        counters: Arc<TaskCounters>,
    ) -> ConnectResult<Self::Consumer>;
    /// The loop's clock.
    fn clock(&self) -> Arc<dyn Clock>;
}

/// A sink task's Kafka clients: its consumer's settings and, with a dead letter queue, the
/// admin and producer settings that create its topic and write to it.
pub struct KafkaSinkClients {
    /// The task, named in errors.
    pub task: crate::ConnectorTaskId,
    pub consumer: ClientConfig,
    pub dlq: Option<(ClientConfig, ClientConfig)>,
}

impl SinkClients for KafkaSinkClients {
    type Consumer = KafkaSinkConsumer;

    fn dead_letter_queue(
        &mut self,
        errors: &ErrorHandlingConfig,
    ) -> ConnectResult<Option<Box<dyn DeadLetterWriter>>> {
        match &self.dlq {
            Some((admin, producer)) => Ok(Some(Box::new(DeadLetterQueue::create(
                admin, producer, errors,
            )?))),
            None => Ok(None),
        }
    }

    fn consumer(
        self,
        listener: Arc<dyn RebalanceListener>,
        counters: Arc<TaskCounters>,
    ) -> ConnectResult<KafkaSinkConsumer> {
        kafka_consumer(&self.consumer, &self.task, listener, counters)
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(SystemClock)
    }
}

/// Everything a sink task thread needs.
pub struct SinkTaskArgs {
    pub task: Box<dyn SinkTask>,
    pub task_config: Props,
    pub converters: TaskConverters,
    pub control: Arc<TaskControl>,
    /// The task's rate limits (issue #36, `tributary.throttle.*`).
    pub throttle: Arc<crate::worker::throttle::Throttle>,
    pub reporter: TaskStatusReporter,
    pub counters: Arc<TaskCounters>,
    pub offset_flush_interval: Duration,
    /// `topic.tracking.enable`: record the topics the task consumes from (KIP-558).
    pub track_topics: bool,
    /// The connector's transformations, built for this task.
    pub chain: TransformationChain<SinkRecord>,
    /// The connector's `errors.*` settings.
    pub errors: ErrorHandlingConfig,
    /// `offset.flush.timeout.ms`: how long a commit waits for dead letter queue records.
    pub offset_flush_timeout: Duration,
    /// The task's own metrics (KIP-877), handed to it in its context.
    pub plugin_metrics: tributary_api::metrics::PluginMetrics,
}

/// Runs the task with `clients` until stopped or failed; writes RUNNING / PAUSED / FAILED
/// statuses.
pub fn run(args: SinkTaskArgs, clients: impl SinkClients) {
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    if let Err(e) = catch_panic(&label, || run_inner(args, clients)) {
        tracing::error!(task = %reporter.id, error = %e, "sink task failed");
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
}

fn subscription(config: &Props) -> ConnectResult<Vec<String>> {
    let topics: Vec<String> = config
        .get("topics")
        .map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    if !topics.is_empty() {
        return Ok(topics);
    }
    match config
        .get("topics.regex")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        // librdkafka treats a subscription starting with '^' as a regular expression.
        Some(re) => Ok(vec![if re.starts_with('^') {
            re.to_string()
        } else {
            format!("^{re}")
        }]),
        None => Err(ConnectError::config(
            "Must configure one of topics or topics.regex",
        )),
    }
}

fn run_inner(args: SinkTaskArgs, clients: impl SinkClients) -> ConnectResult<()> {
    let mut lp = SinkLoop::start(args, clients)?;
    let result = lp.run();
    lp.shut_down(result)
}

/// A running sink task: its consumer, the state shared with the consumer's rebalance
/// callbacks, and what converts, transforms and reports its records.
struct SinkLoop<C> {
    consumer: C,
    shared: Arc<Mutex<Shared>>,
    requests: Arc<SinkTaskRequests>,
    converters: TaskConverters,
    chain: TransformationChain<SinkRecord>,
    operator: Arc<RetryWithToleranceOperator>,
    reporters: Arc<ErrorReporters>,
    errant: Option<Arc<WorkerErrantRecordReporter>>,
    control: Arc<TaskControl>,
    /// The task's rate limits (issue #36).
    throttle: Arc<crate::worker::throttle::Throttle>,
    reporter: TaskStatusReporter,
    counters: Arc<TaskCounters>,
    topics_seen: Option<super::task::TopicsSeen>,
    offset_flush_interval: Duration,
    /// The target state last reported (RUNNING or PAUSED).
    paused_reported: Option<bool>,
    last_commit: Instant,
    /// What the consumer's paused partitions were last brought in line with.
    pauses_applied: Option<PauseTarget>,
    clock: Arc<dyn Clock>,
    /// The records of a turn's poll before they join the pending queue: one buffer kept for
    /// every turn (a record is moved into it and out again, no buffer grown per poll).
    polled: Vec<Pending>,
    /// Revocations so far (the rebalance listener counts them).
    revocations: Arc<AtomicU64>,
}

impl<C: SinkConsumer> SinkLoop<C> {
    /// Sets up the error reporters (creating the dead letter queue topic when missing, as
    /// Connect does before the task starts), initializes and starts the task, then creates the
    /// consumer and subscribes it (Connect's `WorkerSinkTask.initializeAndStart`). The
    /// transformation chain is closed when the task cannot start.
    fn start(
        args: SinkTaskArgs,
        mut clients: impl SinkClients<Consumer = C>,
    ) -> ConnectResult<SinkLoop<C>> {
        let SinkTaskArgs {
            mut task,
            task_config,
            converters,
            control,
            throttle,
            reporter,
            counters,
            offset_flush_interval,
            track_topics,
            mut chain,
            errors,
            offset_flush_timeout,
            plugin_metrics,
        } = args;
        let dlq = match clients.dead_letter_queue(&errors) {
            Ok(d) => d,
            Err(e) => {
                chain.close();
                return Err(e);
            }
        };
        let clock = clients.clock();
        counters.metrics.set_kind(TaskKind::Sink);
        let reporters = Arc::new(
            ErrorReporters::new(reporter.id.clone(), &errors, dlq)
                .with_metrics(counters.metrics.errors.clone()),
        );
        let operator = Arc::new(
            RetryWithToleranceOperator::new(
                &errors,
                Arc::new(TaskRetryClock::new(control.clone())),
            )
            .with_metrics(counters.metrics.errors.clone()),
        );
        let errant = errors.enable_errant_record_reporter().then(|| {
            Arc::new(WorkerErrantRecordReporter::new(
                operator.clone(),
                reporters.clone(),
                converters.key.clone(),
                converters.value.clone(),
                converters.header.clone(),
            ))
        });
        let requests = Arc::new(SinkTaskRequests::default());
        task.initialize(SinkTaskContext {
            config: task_config.clone(),
            errant_record_reporter: errant
                .clone()
                .map(|e| e as Arc<dyn tributary_api::sink::ErrantRecordReporter>),
            requests: requests.clone(),
            plugin_metrics,
        });
        let instance = counters.metrics.begin_instance();
        let call = counters.metrics.call(instance, TaskCall::Start);
        let started = task.start(&task_config);
        drop(call);
        if let Err(e) = started {
            chain.close();
            return Err(e);
        }
        counters.record_start();
        let shared = Arc::new(Mutex::new(Shared {
            counters: counters.clone(),
            instance,
            task,
            current: HashMap::new(),
            pending: VecDeque::new(),
            reporters: reporters.clone(),
            dlq_flush_timeout: offset_flush_timeout,
            consumer_paused: control.is_paused(),
            redelivery: None,
            throttle_booked: false,
            requests: requests.clone(),
            held: HashSet::new(),
            pauses_stale: false,
            failure: None,
            revoked_in_poll: Vec::new(),
            stopped: false,
        }));
        let revocations = Arc::new(AtomicU64::new(0));
        let listener = Arc::new(SinkRebalance {
            shared: shared.clone(),
            revocations: revocations.clone(),
        });
        let consumer = clients.consumer(listener, counters.clone())?;
        consumer.subscribe(&subscription(&task_config)?)?;
        Ok(SinkLoop {
            consumer,
            shared,
            requests,
            converters,
            chain,
            operator,
            reporters,
            errant,
            control,
            throttle,
            reporter,
            counters,
            topics_seen: track_topics.then(super::task::TopicsSeen::default),
            offset_flush_interval,
            paused_reported: None,
            last_commit: clock.now(),
            pauses_applied: None,
            clock,
            polled: Vec::new(),
            revocations,
        })
    }

    /// Consumes, delivers and commits until the task stops or fails (Connect's
    /// `WorkerSinkTask.execute` and `iteration`).
    fn run(&mut self) -> ConnectResult<()> {
        while !self.control.is_stopping() {
            self.turn()?;
        }
        Ok(())
    }

    /// One turn of the loop (Connect's `WorkerSinkTask.iteration`): the target state
    /// reported, the task's rewinds and pauses carried out, a poll, a `put`, and a commit when
    /// one is due or was requested.
    fn turn(&mut self) -> ConnectResult<()> {
        let paused = self.control.is_paused();
        self.report_target_state(paused);
        self.align_consumer();
        let polled = self.poll(self.poll_wait(paused))?;
        self.deliver(polled, paused)?;
        self.counters.metrics.turn_done();
        let commit_requested = self.requests.take_commit_request();
        if commit_requested || self.clock.since(self.last_commit) >= self.offset_flush_interval {
            self.commit()?;
            self.last_commit = self.clock.now();
        }
        Ok(())
    }

    /// Reports PAUSED or RUNNING when the target state changed, and has the consumer's pauses
    /// brought in line at the next turn.
    fn report_target_state(&mut self, paused: bool) {
        if self.paused_reported == Some(paused) {
            return;
        }
        {
            let mut s = self.shared.lock().unwrap();
            s.consumer_paused = paused;
            s.pauses_stale = true;
        }
        let state = if paused {
            State::Paused
        } else {
            State::Running
        };
        self.reporter.report(state, None);
        self.paused_reported = Some(paused);
    }

    /// Carries out the task's rewinds and pauses before the next poll: seeks, the records
    /// they make stale dropped, and the consumer's paused partitions matched to the target.
    fn align_consumer(&mut self) {
        let mut s = self.shared.lock().unwrap();
        rewind(&self.consumer, &mut s);
        s.refresh_held();
        let target = PauseTarget::of(&s);
        if s.pauses_stale || self.pauses_applied.as_ref() != Some(&target) {
            s.pauses_stale = false;
            apply_pauses(&self.consumer, &target, &self.reporter.id);
            self.pauses_applied = Some(target);
        }
    }

    /// How long the first poll of a turn may wait: short while paused, until a scheduled
    /// redelivery, not at all when records are ready, shortly when a rewind waits to be tried
    /// again.
    fn poll_wait(&self, paused: bool) -> Duration {
        let s = self.shared.lock().unwrap();
        let wait = if paused {
            Duration::from_millis(100)
        } else if let Some(at) = s.redelivery {
            at.saturating_duration_since(self.clock.now())
                .min(Duration::from_millis(500))
        } else if s.has_deliverable() {
            Duration::ZERO
        } else {
            Duration::from_millis(500)
        };
        if s.requests.has_rewinds() {
            // A seek that found its partition not yet fetching is tried again soon.
            return wait.min(Duration::from_millis(20));
        }
        wait
    }

    /// Polls at least once (rebalance callbacks run inside `poll`), then until a batch is
    /// ready; each record converted and transformed. Nothing polled is ever dropped: it goes
    /// to `pending` for `put`.
    fn poll(&mut self, mut wait: Duration) -> ConnectResult<Vec<Pending>> {
        let stages = Stages {
            converters: &self.converters,
            operator: &self.operator,
            reporters: &self.reporters,
            keep_raw: self.errant.is_some(),
            counters: &self.counters,
        };
        let mut polled = std::mem::take(&mut self.polled);
        let mut revocations = self.revocations.load(Ordering::Acquire);
        let room = {
            let mut s = self.shared.lock().unwrap();
            s.revoked_in_poll.clear();
            MAX_BATCH.saturating_sub(s.pending.len())
        };
        loop {
            let next = self.consumer.poll(wait);
            // A revocation inside that poll: what was polled before it of the revoked
            // partitions goes (Connect removes a revoked partition's records from its batch).
            let now = self.revocations.load(Ordering::Acquire);
            if now != revocations {
                revocations = now;
                drop_revoked(&self.shared, &mut polled);
            }
            match next {
                None => break,
                Some(Ok(msg)) => {
                    self.counters
                        .metrics
                        .read_total
                        .fetch_add(1, Ordering::Relaxed);
                    if let Some(seen) = &mut self.topics_seen {
                        seen.record(msg.topic(), &self.reporter);
                    }
                    match stages.process(&msg, &mut self.chain)? {
                        Some(p) => polled.push(p),
                        None => break,
                    }
                    if polled.len() >= room {
                        break;
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(task = %self.reporter.id, "consumer error: {e}");
                    break;
                }
            }
            wait = Duration::ZERO;
        }
        Ok(polled)
    }

    /// Queues what was polled (in one step, under one lock), fails on a failure of the
    /// rebalance callbacks, and hands the next batch to `put` unless the task is paused or a
    /// redelivery is not due yet.
    fn deliver(&mut self, mut polled: Vec<Pending>, paused: bool) -> ConnectResult<()> {
        let mut s = self.shared.lock().unwrap();
        let n = polled.len();
        s.pending.extend(polled.drain(..));
        // Kept for the next turn; a buffer grown by a busy spell shrinks when polls get small
        // (an idle task keeps a few entries, not a full batch).
        if n < polled.capacity() / 4 {
            polled.shrink_to(n.max(16));
        }
        self.polled = polled;
        if let Some(e) = s.failure.take() {
            return Err(e);
        }
        let now = self.clock.now();
        let redeliver_now = s.redelivery.is_none_or(|at| now >= at);
        if !paused && redeliver_now && !s.throttle_booked {
            // Rate limits (issue #36): a batch over the rates waits as a redelivery does (the
            // partitions paused, the loop polling on), booked once, delivered when its time
            // comes; nothing blocks the task thread for longer than a poll.
            let (records, bytes) = s.next_batch_size();
            if records > 0 {
                let wait = self.throttle.reserve(records, bytes, now);
                if !wait.is_zero() {
                    self.throttle.note_throttled(wait);
                    s.redelivery = Some(now + wait);
                    s.throttle_booked = true;
                    return Ok(());
                }
            }
        }
        if !paused && redeliver_now {
            s.throttle_booked = false;
            let (interval, last_commit) = (self.offset_flush_interval, self.last_commit);
            let clock = self.clock.as_ref();
            deliver(
                &mut s,
                self.errant.as_deref(),
                &self.counters,
                &self.reporter.id,
                clock,
                // Read after `put` returned, as Connect counts the back-off from the failure.
                || interval.saturating_sub(clock.since(last_commit)),
            )?;
        }
        Ok(())
    }

    /// Commits what `pre_commit` returns (Connect's `WorkerSinkTask.commitOffsets`), with the
    /// commit metrics; a retriable failure is logged and tried at the next commit.
    fn commit(&mut self) -> ConnectResult<()> {
        let mut s = self.shared.lock().unwrap();
        let metrics = &self.counters.metrics;
        metrics.commit_seq_no.fetch_add(1, Ordering::Relaxed);
        if let Ok(assignment) = self.consumer.assignment() {
            metrics
                .partition_count
                .store(assignment.len() as i64, Ordering::Relaxed);
        }
        let began = Instant::now();
        let committed = commit(&self.consumer, &mut s, None);
        metrics.commit_done(committed.is_ok(), began.elapsed());
        match committed {
            Ok(()) => {
                self.counters.record_offset_commit();
                metrics
                    .commit_completion_total
                    .fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(ConnectError::Retriable(m)) => {
                tracing::warn!(task = %self.reporter.id, "{m}");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Commits (when the loop ended cleanly), closes every partition and stops the task
    /// (Connect's `closeAllPartitions` and `stop`); `result` is how the loop ended, returned
    /// first.
    fn shut_down(mut self, result: ConnectResult<()>) -> ConnectResult<()> {
        let assigned = self.consumer.assignment().unwrap_or_default();
        let mut s = self.shared.lock().unwrap();
        if result.is_ok() {
            if let Err(e) = commit(&self.consumer, &mut s, None) {
                tracing::warn!(task = %self.reporter.id, "final commit failed: {e}");
            }
        }
        let call = self.counters.metrics.call(s.instance, TaskCall::Stop);
        let close = s.task.close(&assigned);
        let stop = s.task.stop();
        s.stopped = true;
        drop(call);
        self.chain.close();
        self.counters.record_stop();
        drop(s);
        self.consumer.unsubscribe();
        result?;
        close?;
        stop
    }
}

/// Which partitions the consumer should have paused.
#[derive(Debug, PartialEq)]
enum PauseTarget {
    /// Every assigned partition: the connector is paused, or a batch waits for redelivery.
    All,
    /// Only those the task paused (`SinkTaskContext::pause`).
    Task(HashSet<TopicPartition>),
}

impl PauseTarget {
    fn of(s: &Shared) -> PauseTarget {
        if s.consumer_paused || s.redelivery.is_some() {
            PauseTarget::All
        } else {
            PauseTarget::Task(s.requests.paused())
        }
    }
}

/// Pauses and resumes the consumer's assigned partitions to match `target`.
fn apply_pauses(consumer: &dyn ConsumerOps, target: &PauseTarget, task: &impl std::fmt::Display) {
    let assignment = match consumer.assignment() {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(task = %task, "reading the consumer's assignment failed: {e}");
            return;
        }
    };
    let applied = match target {
        PauseTarget::All => consumer.pause(&assignment),
        PauseTarget::Task(paused) => {
            let (pause, resume): (Vec<TopicPartition>, Vec<TopicPartition>) =
                assignment.into_iter().partition(|tp| paused.contains(tp));
            consumer
                .resume(&resume)
                .and_then(|()| consumer.pause(&pause))
        }
    };
    if let Err(e) = applied {
        tracing::warn!(task = %task, "pausing or resuming the consumer failed: {e}");
    }
}

/// Carries out the rewinds the task asked for (Connect's `rewind`): seeks each partition,
/// drops its queued records and makes the offset the one to commit. A seek the consumer
/// refuses for now (the partition is not fetching yet, just after its assignment) is tried
/// again next turn; its partition's records stay held back meanwhile.
fn rewind(consumer: &dyn ConsumerOps, s: &mut Shared) {
    if !s.requests.has_rewinds() {
        return;
    }
    let mut later = HashMap::new();
    for (tp, offset) in s.requests.take_offsets() {
        match consumer.seek(&tp, offset) {
            Ok(()) => {
                tracing::debug!("rewound {tp} to offset {offset}");
                s.pending.retain(|p| !p.consumed_from(&tp));
                s.current.insert(tp, offset);
            }
            Err(e) => {
                tracing::debug!("rewinding {tp} to offset {offset} waits: {e}");
                later.insert(tp, offset);
            }
        }
    }
    s.requests.restore_offsets(later);
}

/// Hands the next batch of `pending` to `put` (possibly none: `put` is called every turn, as
/// in Connect), then advances the offsets to commit. A retriable failure puts the batch back
/// at the front of `pending` and schedules its redelivery after the task's `timeout`, or
/// `until_commit` when it set none; other failures fail the task.
/// Drops from `polled` (the records polled before the consumer's last poll call) those of the
/// partitions revoked during that call; the list is taken, so records polled after a partition
/// came back are kept.
fn drop_revoked(shared: &Mutex<Shared>, polled: &mut Vec<Pending>) {
    let revoked = std::mem::take(&mut shared.lock().unwrap().revoked_in_poll);
    if !revoked.is_empty() {
        polled.retain(|p| !revoked.iter().any(|tp| p.consumed_from(tp)));
    }
}

fn deliver(
    s: &mut Shared,
    errant: Option<&WorkerErrantRecordReporter>,
    counters: &TaskCounters,
    task: &impl std::fmt::Display,
    clock: &dyn Clock,
    until_commit: impl FnOnce() -> Duration,
) -> ConnectResult<()> {
    // Sized exactly when nothing is held (every entry up to the limit is taken).
    let capacity = if s.held.is_empty() {
        s.pending.len().min(MAX_BATCH)
    } else {
        0
    };
    let mut batch: Vec<SinkRecord> = Vec::with_capacity(capacity);
    let mut raws: Vec<RawRecord> = Vec::new();
    let mut consumed: Vec<(TopicPartition, i64)> = Vec::new();
    s.take_batch(|p| match p {
        Pending::Record(r, raw, _) => {
            raws.extend(raw.map(|b| *b));
            batch.push(r);
        }
        Pending::Consumed(tp, offset) => consumed.push((tp, offset)),
    });
    if let Some(errant) = errant {
        errant.set_batch(raws);
    }
    let began = Instant::now();
    let metrics = &counters.metrics;
    let call = counters.metrics.call(s.instance, TaskCall::Put);
    let put = s.task.put(&batch);
    drop(call);
    match put {
        Ok(()) => {}
        Err(ConnectError::Retriable(m)) => {
            tracing::warn!(task = %task, "retriable error from put, the batch is delivered again: {m}");
            let backoff = s
                .requests
                .take_timeout()
                .map(Duration::from_millis)
                .unwrap_or_else(until_commit);
            s.redelivery = Some(clock.now() + backoff);
            let mut raws = errant.map(|e| e.take_batch()).unwrap_or_default();
            for (tp, offset) in consumed.into_iter().rev() {
                s.pending.push_front(Pending::Consumed(tp, offset));
            }
            for r in batch.into_iter().rev() {
                let raw = raws
                    .remove(&(
                        r.original_topic.clone(),
                        r.original_kafka_partition,
                        r.original_kafka_offset,
                    ))
                    .map(Box::new);
                // Booked against the rate when first delivered; not again.
                s.pending.push_front(Pending::Record(r, raw, 0));
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    if s.redelivery.take().is_some() {
        // Delivered at last: the partitions paused for the redelivery resume.
        s.pauses_stale = true;
    }
    metrics.put_time.record(began.elapsed());
    metrics.batch_sizes.record(batch.len() as u64);
    if let Some(e) = errant.and_then(|e| e.take_put_error()) {
        return Err(e);
    }
    counters.record_consumed(batch.len() as u64);
    metrics
        .send_total
        .fetch_add(batch.len() as u64, Ordering::Relaxed);
    // The next offset per partition, as consumed (KIP-793): the last record of each run of
    // one partition is enough (records of a partition come in offset order).
    for (i, r) in batch.iter().enumerate() {
        let last_of_run = batch.get(i + 1).is_none_or(|next| {
            next.original_kafka_partition != r.original_kafka_partition
                || next.original_topic != r.original_topic
        });
        if last_of_run {
            s.current
                .insert(r.original_topic_partition(), r.original_kafka_offset + 1);
        }
    }
    for (tp, offset) in consumed {
        let next = s.current.entry(tp).or_insert(offset + 1);
        *next = (*next).max(offset + 1);
    }
    Ok(())
}

/// What converts and transforms consumed records: the task's converters, error operator and
/// reporters.
struct Stages<'a> {
    converters: &'a TaskConverters,
    operator: &'a RetryWithToleranceOperator,
    reporters: &'a ErrorReporters,
    /// Keep each record's consumed form (for the errant record reporter).
    keep_raw: bool,
    /// Counts skipped records.
    counters: &'a TaskCounters,
}

impl Stages<'_> {
    /// Converts and transforms one consumed message (Connect's `convertAndTransformRecord`):
    /// key, value and headers through the converters, then the chain, each stage under the
    /// error operator. `None` when the task is stopping (the message is left unconsumed);
    /// a dropped or tolerated record becomes [`Pending::Consumed`]. A failure is reported
    /// (error log, dead letter queue) before the task fails or skips the record.
    fn process(
        &self,
        msg: &impl ConsumedRecord,
        chain: &mut TransformationChain<SinkRecord>,
    ) -> ConnectResult<Option<Pending>> {
        let topic = msg.topic();
        let c = self.converters;
        let mut ctx = ProcessingContext::default();
        let consumed =
            || Pending::Consumed(TopicPartition::new(topic, msg.partition()), msg.offset());
        // The record's headers as bytes, for a converter that reads them (a hosted Java one).
        let raw_headers: RecordHeaders = if c.key.uses_headers() || c.value.uses_headers() {
            let mut raw = Vec::new();
            msg.try_for_each_header(&mut |k, v| {
                raw.push((k.to_string(), v.map(<[u8]>::to_vec)));
                Ok(())
            })
            .unwrap_or_default();
            raw
        } else {
            Vec::new()
        };
        let key = self
            .operator
            .execute(&mut ctx, Stage::KeyConverter, c.key_class, || {
                if c.key.uses_headers() {
                    return c
                        .key
                        .to_connect_data_with_headers(topic, &raw_headers, msg.key());
                }
                c.key.to_connect_data(topic, msg.key())
            });
        let key = match self.settle(&ctx, key, msg)? {
            Next::Value(v) => v,
            Next::Skip => return Ok(Some(consumed())),
            Next::Stop => return Ok(None),
        };
        let value = self
            .operator
            .execute(&mut ctx, Stage::ValueConverter, c.value_class, || {
                if c.value.uses_headers() {
                    return c.value.to_connect_data_with_headers(
                        topic,
                        &raw_headers,
                        msg.payload(),
                    );
                }
                c.value.to_connect_data(topic, msg.payload())
            });
        let value = match self.settle(&ctx, value, msg)? {
            Next::Value(v) => v,
            Next::Skip => return Ok(Some(consumed())),
            Next::Stop => return Ok(None),
        };
        let headers =
            self.operator
                .execute(&mut ctx, Stage::HeaderConverter, c.header_class, || {
                    let mut headers = Headers::new();
                    msg.try_for_each_header(&mut |key, value| {
                        let sv = c.header.to_connect_header(topic, key, value)?;
                        headers.add(key, sv.schema, sv.value);
                        Ok(())
                    })?;
                    Ok(headers)
                });
        let headers = match self.settle(&ctx, headers, msg)? {
            Next::Value(v) => v,
            Next::Skip => return Ok(Some(consumed())),
            Next::Stop => return Ok(None),
        };
        let (timestamp, timestamp_type) = msg.timestamp();
        let record = SinkRecord::new(
            topic,
            msg.partition(),
            key.schema,
            key.value,
            value.schema,
            value.value,
            msg.offset(),
            timestamp,
            timestamp_type,
            headers,
        );
        let record = if chain.is_empty() {
            record
        } else {
            let outcome = chain.apply(self.operator, &mut ctx, record);
            match self.settle(&ctx, outcome, msg)? {
                Next::Value(Some(r)) => r,
                Next::Value(None) | Next::Skip => return Ok(Some(consumed())),
                Next::Stop => return Ok(None),
            }
        };
        let raw = self
            .keep_raw
            .then(|| Box::new(RawRecord::from_consumed(msg)));
        let bytes = msg.size();
        Ok(Some(Pending::Record(
            record,
            raw,
            u32::try_from(bytes).unwrap_or(u32::MAX),
        )))
    }

    /// The next step after a stage's outcome; a failure is reported with the consumed record.
    fn settle<V>(
        &self,
        ctx: &ProcessingContext,
        outcome: ConnectResult<Outcome<V>>,
        msg: &impl ConsumedRecord,
    ) -> ConnectResult<Next<V>> {
        let report = || {
            let raw = RawRecord::from_consumed(msg);
            self.reporters.report(ctx, Some(Original::Sink(&raw)));
        };
        match outcome {
            Ok(Outcome::Done(v)) => Ok(Next::Value(v)),
            Ok(Outcome::Skipped) => {
                report();
                self.counters.record_skipped(1);
                Ok(Next::Skip)
            }
            Ok(Outcome::Stopping) => Ok(Next::Stop),
            Err(e) => {
                report();
                Err(e)
            }
        }
    }
}

/// What to do after one stage of a record.
enum Next<V> {
    /// Go on with this value.
    Value(V),
    /// The record failed and is skipped (already reported).
    Skip,
    /// The task is stopping.
    Stop,
}
