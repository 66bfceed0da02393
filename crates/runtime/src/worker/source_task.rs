//! A source task's loop (Connect's `WorkerSourceTask` / `AbstractWorkerSourceTask`):
//! poll → convert → produce with librdkafka, and commit source offsets that Kafka acknowledged
//! (with every record before them) every `offset.flush.interval.ms` and on shutdown.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientConfig, ClientContext};
use tributary_api::record::SourceRecord;
use tributary_api::source::{SourceTask, SourceTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::converters::TaskConverters;
use super::submitted_records::{AckInbox, SubmittedRecords};
use super::task::{catch_panic, error_trace, TaskControl, TaskStatusReporter};
use super::TaskCounters;
use crate::storage::offset::{offset_key, offset_value, ConnectorOffsetReader, OffsetBackingStore};
use crate::storage::status::State;

/// The longest a send waits for acknowledgements when librdkafka's queue is full.
const QUEUE_FULL_WAIT: Duration = Duration::from_millis(1);
/// A send blocked on a full queue resumes once this many acknowledgements arrived (or a
/// quarter of the records in flight, if fewer), so it does not wake for every single one.
const QUEUE_FULL_BATCH: usize = 1000;

/// (sequence, partition, offset) of acknowledged records, collected by the producer callback.
type RecordAcks = Arc<Mutex<Vec<(u64, i32, i64)>>>;

/// The producer context: records acknowledgements and the first delivery failure.
pub struct SourceProducerContext {
    /// Acknowledged records, kept only for tasks that want [`SourceTask::commit_record`]
    /// calls.
    record_acks: Option<RecordAcks>,
    acks: Arc<AckInbox>,
    failure: Arc<Mutex<Option<String>>>,
}

impl ClientContext for SourceProducerContext {}

impl ProducerContext for SourceProducerContext {
    type DeliveryOpaque = usize;
    fn delivery(&self, result: &DeliveryResult<'_>, seq: usize) {
        match result {
            Ok(msg) => {
                if let Some(meta) = &self.record_acks {
                    use rdkafka::Message;
                    meta.lock()
                        .unwrap()
                        .push((seq as u64, msg.partition(), msg.offset()));
                }
                self.acks.push(seq as u64)
            }
            Err((e, msg)) => {
                let mut f = self.failure.lock().unwrap();
                if f.is_none() {
                    use rdkafka::Message;
                    *f = Some(format!(
                        "Unrecoverable exception from producer send callback: {e} (topic {})",
                        msg.topic()
                    ));
                }
            }
        }
    }
}

/// Everything a source task thread needs.
pub struct SourceTaskArgs {
    pub connector: String,
    pub task: Box<dyn SourceTask>,
    pub task_config: Props,
    pub producer_config: ClientConfig,
    pub converters: TaskConverters,
    pub offsets: Arc<dyn OffsetBackingStore>,
    pub control: Arc<TaskControl>,
    pub reporter: TaskStatusReporter,
    /// `topic.tracking.enable`: record the topics the task produces to (KIP-558).
    pub track_topics: bool,
    pub counters: Arc<TaskCounters>,
    pub offset_flush_interval: Duration,
    pub offset_flush_timeout: Duration,
}

/// Runs the task until stopped or failed; writes RUNNING / PAUSED / FAILED statuses.
pub fn run(args: SourceTaskArgs) {
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    let result = catch_panic(&label, || run_inner(args));
    if let Err(e) = result {
        tracing::error!(task = %reporter.id, error = %e, "source task failed");
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
}

struct Loop {
    connector: String,
    task: Box<dyn SourceTask>,
    producer: ThreadedProducer<SourceProducerContext>,
    converters: TaskConverters,
    offsets: Arc<dyn OffsetBackingStore>,
    submitted: SubmittedRecords,
    /// The inbox the producer callback pushes acknowledgements to (also held by `submitted`).
    acks: Arc<AckInbox>,
    failure: Arc<Mutex<Option<String>>>,
    control: Arc<TaskControl>,
    counters: Arc<TaskCounters>,
    /// Topics already recorded as active for the connector (KIP-558); `None` when topic
    /// tracking is disabled.
    topics_seen: Option<std::collections::HashSet<String>>,
    reporter: TaskStatusReporter,
    /// For tasks wanting `commit_record`: the records in flight by sequence number, and the
    /// acknowledgements the producer callback collected.
    in_flight: Option<(std::collections::HashMap<u64, SourceRecord>, RecordAcks)>,
    /// `offset.flush.timeout.ms`: longest an offset commit waits for Kafka.
    offset_flush_timeout: Duration,
}

fn run_inner(args: SourceTaskArgs) -> ConnectResult<()> {
    let SourceTaskArgs {
        connector,
        mut task,
        task_config,
        producer_config,
        converters,
        offsets,
        control,
        reporter,
        counters,
        offset_flush_interval,
        offset_flush_timeout,
        track_topics,
    } = args;
    let submitted = SubmittedRecords::new();
    let acks = submitted.inbox();
    let failure = Arc::new(Mutex::new(None));
    let record_acks = task
        .wants_commit_record()
        .then(|| Arc::new(Mutex::new(Vec::new())));
    let ctx = SourceProducerContext {
        record_acks: record_acks.clone(),
        acks: acks.clone(),
        failure: failure.clone(),
    };
    let producer: ThreadedProducer<SourceProducerContext> =
        producer_config.create_with_context(ctx).map_err(|e| {
            ConnectError::config(format!(
                "Failed to create producer for {}: {e}",
                reporter.id
            ))
        })?;
    let context = SourceTaskContext {
        config: task_config.clone(),
        offset_reader: Arc::new(ConnectorOffsetReader {
            connector: connector.clone(),
            store: offsets.clone(),
        }),
        stopping: control.stopping.clone(),
    };
    task.initialize(context);
    task.start(&task_config)?;
    counters.record_start();
    let mut lp = Loop {
        connector,
        task,
        producer,
        converters,
        offsets,
        submitted,
        acks,
        failure,
        control: control.clone(),
        counters,
        topics_seen: track_topics.then(std::collections::HashSet::new),
        reporter: reporter.clone(),
        in_flight: record_acks.map(|a| (std::collections::HashMap::new(), a)),
        offset_flush_timeout,
    };
    let mut paused_reported = None;
    let mut last_commit = Instant::now();
    let result = (|| -> ConnectResult<()> {
        loop {
            if control.is_stopping() {
                return Ok(());
            }
            let paused = control.is_paused();
            if paused_reported != Some(paused) {
                reporter.report(
                    if paused {
                        State::Paused
                    } else {
                        State::Running
                    },
                    None,
                );
                paused_reported = Some(paused);
            }
            if paused {
                control.wait_while_paused(Duration::from_millis(500));
            } else {
                lp.poll_and_send()?;
            }
            // Apply acknowledgements as they come, so committing has little left to do.
            lp.submitted.process_acks();
            lp.check_failure()?;
            if last_commit.elapsed() >= offset_flush_interval {
                match lp.commit_offsets(None) {
                    Err(ConnectError::Retriable(m)) => {
                        tracing::warn!(task = %lp.reporter.id, "offset commit incomplete, retried later: {m}")
                    }
                    other => other?,
                }
                last_commit = Instant::now();
            }
        }
    })();
    // Shutdown: the task stops first (it polls no more), as Connect stops a task before its
    // final offset commit; then in-flight records get a chance to be acknowledged, and what
    // was is committed.
    let stop = lp.task.stop();
    let commit = match lp.commit_offsets(Some(offset_flush_timeout)) {
        // Not durable in time: the records are in Kafka or will be resent from the last
        // committed offsets by the next owner; nothing to fail the task for.
        Err(ConnectError::Retriable(m)) => {
            tracing::warn!(task = %lp.reporter.id, "final offset commit incomplete: {m}");
            Ok(())
        }
        other => other,
    };
    lp.counters.record_stop();
    // What this task produced is acknowledged or given up by now (the final commit waited for
    // it); destroying the producer (purge, its polling thread, librdkafka's threads) only takes
    // time, often a few hundred ms, so it happens off the task thread and the task counts as
    // stopped at once: its UNASSIGNED status, a revocation's follow-up round or the worker's
    // exit do not wait for it.
    let Loop { producer, .. } = lp;
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

impl Loop {
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
        for (seq, partition, offset) in acked {
            if let Some(rec) = map.remove(&seq) {
                self.task.commit_record(
                    &rec,
                    Some(tributary_api::record::RecordMetadata { partition, offset }),
                )?;
            }
        }
        Ok(())
    }

    fn poll_and_send(&mut self) -> ConnectResult<()> {
        self.deliver_commit_records()?;
        let records = match self.task.poll() {
            Ok(r) => r,
            Err(ConnectError::Retriable(msg)) => {
                tracing::warn!(connector = %self.connector, "retriable error from poll: {msg}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        for record in records {
            self.send(record)?;
        }
        Ok(())
    }

    fn send(&mut self, record: SourceRecord) -> ConnectResult<()> {
        let kept = self.in_flight.as_ref().map(|_| record.clone());
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
        if let Some(seen) = &mut self.topics_seen {
            if !seen.contains(&topic) {
                self.reporter
                    .store
                    .put_topic(&self.connector, &topic, self.reporter.id.task);
                seen.insert(topic.clone());
            }
        }
        let key_bytes =
            self.converters
                .key
                .from_connect_data_owned(&topic, key_schema.as_ref(), key)?;
        let value_bytes =
            self.converters
                .value
                .from_connect_data_owned(&topic, value_schema.as_ref(), value)?;
        let mut kafka_headers = None;
        if !headers.is_empty() {
            let mut h = OwnedHeaders::new_with_capacity(headers.len());
            for header in headers.iter() {
                let bytes = self.converters.header.from_connect_header(
                    &topic,
                    &header.key,
                    header.schema.as_ref(),
                    &header.value,
                )?;
                h = h.insert(KafkaHeader {
                    key: &header.key,
                    value: bytes.as_deref(),
                });
            }
            kafka_headers = Some(h);
        }
        let seq = self.submitted.submit(source_partition, source_offset);
        if let (Some(rec), Some((map, _))) = (kept, self.in_flight.as_mut()) {
            map.insert(seq, rec);
        }
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
        loop {
            match self.producer.send(rec) {
                Ok(()) => {
                    self.counters.record_produced(1);
                    return Ok(());
                }
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    rec = back;
                    if self.control.is_stopping() {
                        self.submitted.remove(seq);
                        return Ok(());
                    }
                    self.check_failure()?;
                    // librdkafka frees queue space as deliveries are reported: apply those
                    // acknowledgements, then wait for a share of the records in flight to be
                    // acknowledged (at most 1 ms), rather than polling on a fixed sleep.
                    self.submitted.process_acks();
                    let wanted = (self.submitted.pending() / 4).clamp(1, QUEUE_FULL_BATCH);
                    self.acks.wait(wanted, QUEUE_FULL_WAIT);
                }
                Err((e, _)) => {
                    self.submitted.remove(seq);
                    return Err(ConnectError::connect(format!(
                        "Failed to send record to topic {topic}: {e}"
                    )));
                }
            }
        }
    }

    /// Commits the offsets whose records (and all before them) were acknowledged. With a
    /// timeout, first waits up to that long for outstanding records (used at shutdown).
    fn commit_offsets(&mut self, flush: Option<Duration>) -> ConnectResult<()> {
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
            return Ok(());
        }
        let entries = committable
            .iter()
            .map(|(p, o)| (offset_key(&self.connector, p), Some(offset_value(o))))
            .collect();
        // Bounded, and abandoned when the task is asked to stop (a worker cut off from Kafka
        // must stop its tasks promptly); the offsets are committed again next time.
        let control = self.control.clone();
        let stopping = move || flush.is_none() && control.is_stopping();
        self.offsets
            .set_within(entries, self.offset_flush_timeout, &stopping)?;
        self.counters.record_offset_commit();
        self.task.commit()
    }
}
