//! Error handling in a task's record pipeline (KIP-298, KIP-610), as Connect's
//! `RetryWithToleranceOperator`, `ProcessingContext`, `LogReporter` and
//! `DeadLetterQueueReporter` do it.
//!
//! The stages Connect runs through the operator are the key, value and header conversions and
//! each transformation ([`Stage::tolerated`]): an operation failing there with a
//! [`ConnectError::Retriable`] is retried with exponential backoff (300 ms, doubling, at most
//! `errors.retry.delay.max.ms`, then a random delay below it) for up to `errors.retry.timeout`
//! ms (-1: for ever, 0: never); a failure that remains is reported (error log, dead letter
//! queue) and then, with `errors.tolerance=none`, fails the task with `Tolerance exceeded in
//! error handler`, or, with `all`, skips the record. A [`ConnectError::Unavailable`] (a
//! service the stage depends on did not answer) is retried the same way but never skipped: it
//! fails the task whatever `errors.tolerance` says. `poll`, `put` and the producer's send are
//! not run through the operator, as in Connect; a failed send is tolerated with `all` (reported
//! under [`Stage::KafkaProduce`]), and a sink task can report records itself through
//! [`tributary_api::sink::ErrantRecordReporter`] (stage [`Stage::TaskPut`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::message::{Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientConfig, ClientContext};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::java_fmt::to_java_string;
use tributary_api::record::{SinkRecord, SourceRecord, TimestampType};
use tributary_api::sink::ErrantRecordReporter;
use tributary_api::{ConnectError, ConnectResult, ConnectorTaskId};

use super::metrics::ErrorMetrics;
use super::task::TaskControl;
use crate::config::errors::{ErrorHandlingConfig, ToleranceType};

/// Connect's `RetryWithToleranceOperator.RETRIES_DELAY_MIN_MS`: the first backoff, ms.
pub const RETRIES_DELAY_MIN_MS: i64 = 300;

/// The executing class Connect names for a failed send of a source record.
pub const WORKER_SOURCE_TASK_CLASS: &str = "org.apache.kafka.connect.runtime.WorkerSourceTask";
/// The executing class Connect names for a record a sink task reported itself (KIP-610).
pub const SINK_TASK_CLASS: &str = "org.apache.kafka.connect.sink.SinkTask";

/// Where in a task's pipeline an operation runs (Connect's `errors.Stage`); its
/// [`Stage::name`] is what logs and the `__connect.errors.stage` header show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `SourceTask::poll`.
    TaskPoll,
    /// `SinkTask::put`.
    TaskPut,
    /// A transformation (or its predicate).
    Transformation,
    /// The key converter.
    KeyConverter,
    /// The value converter.
    ValueConverter,
    /// The header converter.
    HeaderConverter,
    /// Producing to Kafka.
    KafkaProduce,
    /// Consuming from Kafka.
    KafkaConsume,
}

impl Stage {
    /// Connect's name of the stage, e.g. `VALUE_CONVERTER`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::TaskPoll => "TASK_POLL",
            Stage::TaskPut => "TASK_PUT",
            Stage::Transformation => "TRANSFORMATION",
            Stage::KeyConverter => "KEY_CONVERTER",
            Stage::ValueConverter => "VALUE_CONVERTER",
            Stage::HeaderConverter => "HEADER_CONVERTER",
            Stage::KafkaProduce => "KAFKA_PRODUCE",
            Stage::KafkaConsume => "KAFKA_CONSUME",
        }
    }

    /// Whether every error of the stage may be tolerated (Connect's `TOLERABLE_EXCEPTIONS`:
    /// transformations and converters); in the others only retriable errors are.
    pub fn tolerated(self) -> bool {
        matches!(
            self,
            Stage::Transformation
                | Stage::KeyConverter
                | Stage::ValueConverter
                | Stage::HeaderConverter
        )
    }
}

/// What happened to one record so far (Connect's `ProcessingContext`): the stage and class
/// running (or that failed), the attempts of the current operation, and its error.
#[derive(Debug, Clone, Default)]
pub struct ProcessingContext {
    /// The stage of the current (or failed) operation.
    pub stage: Option<Stage>,
    /// The class running it (a converter's or transformation's class name).
    pub class: &'static str,
    /// Attempts made at the current operation.
    pub attempt: u32,
    /// The error the record failed with, once it failed.
    pub error: Option<ConnectError>,
}

impl ProcessingContext {
    /// Whether the record failed in some stage.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// `executing stage 'STAGE' with class 'class'`, for traces.
    pub fn describe(&self) -> String {
        format!(
            "Executing stage '{}' with class '{}'",
            self.stage.map(Stage::name).unwrap_or("null"),
            self.class
        )
    }
}

/// The outcome of [`RetryWithToleranceOperator::execute`] when the task may go on.
#[derive(Debug, PartialEq)]
pub enum Outcome<V> {
    /// The operation succeeded.
    Done(V),
    /// The record failed (now or in an earlier stage) and is skipped: tolerated.
    Skipped,
    /// The task was asked to stop while the operation was being retried: the record was not
    /// processed (and is not committed, so it is processed again after a restart).
    Stopping,
}

/// Time and waiting for the operator, so that tests can drive the backoff.
pub trait RetryClock: Send + Sync {
    /// Now, in ms on a monotonic clock.
    fn now_ms(&self) -> i64;
    /// Waits up to `ms` (returning early when the task is asked to stop); returns whether the
    /// task is stopping.
    fn wait(&self, ms: i64) -> bool;
}

/// The clock of a running task: waits end as soon as the task is asked to stop (Connect's
/// `stopRequestedLatch`).
pub struct TaskRetryClock {
    start: Instant,
    control: Arc<TaskControl>,
}

impl TaskRetryClock {
    /// The clock of the task controlled by `control`.
    pub fn new(control: Arc<TaskControl>) -> TaskRetryClock {
        TaskRetryClock {
            start: Instant::now(),
            control,
        }
    }
}

impl RetryClock for TaskRetryClock {
    fn now_ms(&self) -> i64 {
        self.start.elapsed().as_millis() as i64
    }
    fn wait(&self, ms: i64) -> bool {
        // On a runtime worker (an async task's records, issue #43) the wait hands the
        // runtime's work to another thread; elsewhere it just waits.
        tokio::task::block_in_place(|| {
            self.control
                .wait_for_stop(Duration::from_millis(ms.max(0) as u64))
        })
    }
}

/// The delay before the next attempt, ms (Connect's `RetryWithToleranceOperator.backoff`):
/// `300 << (attempt - 1)`, replaced by `random(max_delay)` (a value in `[0, max_delay)`) once it
/// exceeds `max_delay`, and cut so that it ends by `deadline`. `attempt` counts from 1. Unlike
/// Java's shift, which wraps after 55 doublings and would then retry without waiting, the
/// doubling saturates.
pub fn backoff_delay_ms(
    attempt: u32,
    now: i64,
    deadline: i64,
    max_delay: i64,
    random: impl FnOnce(i64) -> i64,
) -> i64 {
    let shift = attempt.saturating_sub(1);
    let doubled = if shift >= 54 {
        i64::MAX
    } else {
        RETRIES_DELAY_MIN_MS << shift
    };
    let mut delay = if doubled > max_delay {
        if max_delay > 0 {
            random(max_delay)
        } else {
            0
        }
    } else {
        doubled
    };
    if delay.saturating_add(now) > deadline {
        delay = (deadline - now).max(0);
    }
    delay
}

fn random_below(bound: i64) -> i64 {
    use rand::Rng;
    rand::thread_rng().gen_range(0..bound)
}

/// Retries and tolerates failures of a task's record operations (Connect's
/// `RetryWithToleranceOperator`). Shared by a sink task's loop and its errant record reporter.
pub struct RetryWithToleranceOperator {
    retry_timeout_ms: i64,
    max_delay_ms: i64,
    tolerance: ToleranceType,
    total_failures: AtomicU64,
    clock: Arc<dyn RetryClock>,
    /// `task-error-metrics`.
    metrics: Arc<ErrorMetrics>,
}

impl RetryWithToleranceOperator {
    /// An operator with the connector's `errors.retry.timeout`, `errors.retry.delay.max.ms`
    /// and `errors.tolerance`.
    pub fn new(config: &ErrorHandlingConfig, clock: Arc<dyn RetryClock>) -> Self {
        RetryWithToleranceOperator {
            retry_timeout_ms: config.retry_timeout_ms,
            max_delay_ms: config.retry_delay_max_ms,
            tolerance: config.tolerance,
            total_failures: AtomicU64::new(0),
            clock,
            metrics: Arc::default(),
        }
    }

    /// Records into the task's `task-error-metrics` rather than a private set.
    pub fn with_metrics(mut self, metrics: Arc<ErrorMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Counts the end of a failed operation: an error, and a skipped record when tolerated.
    fn count_error(&self) {
        ErrorMetrics::inc(&self.metrics.record_errors);
        if self.within_tolerance_limits() {
            ErrorMetrics::inc(&self.metrics.records_skipped);
        }
    }

    /// `errors.tolerance`.
    pub fn tolerance(&self) -> ToleranceType {
        self.tolerance
    }

    /// Whether a failed operation may be retried at all (`errors.retry.timeout` ≠ 0); callers
    /// keep a copy of what an operation consumes only then.
    pub fn retries(&self) -> bool {
        self.retry_timeout_ms != 0
    }

    /// Failures so far (every failed record, tolerated or not).
    pub fn total_failures(&self) -> u64 {
        self.total_failures.load(Ordering::Relaxed)
    }

    /// Whether the failures so far are within `errors.tolerance`: always with `all`, only
    /// without any failure with `none`.
    pub fn within_tolerance_limits(&self) -> bool {
        self.tolerance == ToleranceType::All || self.total_failures() == 0
    }

    /// The error that fails a task when a service a stage depends on did not answer
    /// ([`ConnectError::Unavailable`]), whatever `errors.tolerance` says: the record is not
    /// skipped, and the task's next run processes it again.
    pub fn unavailable(ctx: &ProcessingContext) -> ConnectError {
        let mut msg = format!(
            "Unavailable, not tolerated (the record is not skipped)\n\tat {}",
            ctx.describe().replacen("Executing", "executing", 1)
        );
        if let Some(cause) = &ctx.error {
            msg.push_str(&format!("\nCaused by: {}: {cause}", cause.java_class()));
        }
        ConnectError::Connect(msg)
    }

    /// The error that fails a task whose failure is not tolerated: Connect's `Tolerance
    /// exceeded in error handler`, with the stage, class and cause in the trace.
    pub fn tolerance_exceeded(ctx: &ProcessingContext) -> ConnectError {
        let mut msg = format!(
            "Tolerance exceeded in error handler\n\tat {}",
            ctx.describe().replacen("Executing", "executing", 1)
        );
        if let Some(cause) = &ctx.error {
            msg.push_str(&format!("\nCaused by: {}: {cause}", cause.java_class()));
        }
        ConnectError::Connect(msg)
    }

    /// Runs `op` for one record in `stage`, `class` being the plugin class running it
    /// (Connect's `execute`). Nothing runs if the record already failed ([`Outcome::Skipped`]).
    /// A [`ConnectError::Retriable`] is retried until `errors.retry.timeout` passes; a failure
    /// that remains is recorded in `ctx` (report it before going on) and is either tolerated
    /// ([`Outcome::Skipped`]) or returned as [`Self::tolerance_exceeded`]. With a stop request
    /// during a retry, [`Outcome::Stopping`].
    pub fn execute<V>(
        &self,
        ctx: &mut ProcessingContext,
        stage: Stage,
        class: &'static str,
        mut op: impl FnMut() -> ConnectResult<V>,
    ) -> ConnectResult<Outcome<V>> {
        if ctx.failed() {
            return Ok(Outcome::Skipped);
        }
        ctx.stage = Some(stage);
        ctx.class = class;
        // The clock is read only when retries are on (`errors.retry.timeout` 0, the default,
        // gives a deadline that has passed at the first failure): no cost per record otherwise.
        let deadline = match self.retry_timeout_ms {
            0 => None,
            t if t < 0 => Some(i64::MAX),
            t => Some(self.clock.now_ms().saturating_add(t)),
        };
        let mut attempt = 0u32;
        let error = loop {
            attempt += 1;
            ctx.attempt = attempt;
            match op() {
                Ok(v) => return Ok(Outcome::Done(v)),
                Err(e @ (ConnectError::Retriable(_) | ConnectError::Unavailable(_))) => {
                    self.metrics.failure();
                    let Some(deadline) = deadline else {
                        break e;
                    };
                    let now = self.clock.now_ms();
                    if now >= deadline {
                        break e;
                    }
                    let delay =
                        backoff_delay_ms(attempt, now, deadline, self.max_delay_ms, random_below);
                    tracing::debug!(
                        stage = stage.name(),
                        class,
                        attempt,
                        "retrying in {delay} ms after: {e}"
                    );
                    ErrorMetrics::inc(&self.metrics.retries);
                    if self.clock.wait(delay) {
                        return Ok(Outcome::Stopping);
                    }
                }
                Err(e) => {
                    self.metrics.failure();
                    break e;
                }
            }
        };
        self.total_failures.fetch_add(1, Ordering::Relaxed);
        self.count_error();
        ctx.error = Some(error);
        if matches!(ctx.error, Some(ConnectError::Unavailable(_))) {
            // A service that did not answer is no fault of the record: never skip it.
            return Err(Self::unavailable(ctx));
        }
        if !stage.tolerated() && !matches!(ctx.error, Some(ConnectError::Retriable(_))) {
            return Err(ConnectError::Connect(format!(
                "Unhandled exception in error handler\n\tat {}",
                ctx.describe()
            )));
        }
        if self.within_tolerance_limits() {
            Ok(Outcome::Skipped)
        } else {
            Err(Self::tolerance_exceeded(ctx))
        }
    }

    /// Records a failure that happened outside [`Self::execute`] (Connect's `executeFailed`):
    /// `ctx` gets the stage, class and error; report it, then the result says whether the task
    /// may go on.
    pub fn execute_failed(
        &self,
        ctx: &mut ProcessingContext,
        stage: Stage,
        class: &'static str,
        error: ConnectError,
    ) -> ConnectResult<()> {
        self.total_failures.fetch_add(1, Ordering::Relaxed);
        self.metrics.failure();
        self.count_error();
        ctx.stage = Some(stage);
        ctx.class = class;
        ctx.error = Some(error);
        if self.within_tolerance_limits() {
            Ok(())
        } else {
            Err(Self::tolerance_exceeded(ctx))
        }
    }
}

/// A record as consumed from Kafka, bytes untouched: what a sink's errors are reported with
/// (the dead letter queue gets these bytes and headers, Connect's `ConsumerRecord<byte[],
/// byte[]>`).
#[derive(Debug, Clone, PartialEq)]
pub struct RawRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// ms since the epoch.
    pub timestamp: Option<i64>,
    pub timestamp_type: TimestampType,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    /// Header keys and raw values, in order.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl RawRecord {
    /// A copy of a consumed record.
    pub fn from_consumed(msg: &impl super::sink_task::ConsumedRecord) -> RawRecord {
        let (timestamp, timestamp_type) = msg.timestamp();
        let mut headers = Vec::new();
        msg.try_for_each_header(&mut |k, v| {
            headers.push((k.to_string(), v.map(<[u8]>::to_vec)));
            Ok(())
        })
        .unwrap_or_default();
        RawRecord {
            topic: msg.topic().to_string(),
            partition: msg.partition(),
            offset: msg.offset(),
            timestamp,
            timestamp_type,
            key: msg.key().map(<[u8]>::to_vec),
            value: msg.payload().map(<[u8]>::to_vec),
            headers,
        }
    }
}

/// The record an error is reported with: as consumed (sinks) or as polled (sources).
#[derive(Debug, Clone, Copy)]
pub enum Original<'a> {
    /// A sink's consumed record.
    Sink(&'a RawRecord),
    /// A source's record as the task returned it, before any transformation.
    Source(&'a SourceRecord),
}

fn timestamp_type_name(t: TimestampType) -> &'static str {
    match t {
        TimestampType::NoTimestampType => "NoTimestampType",
        TimestampType::CreateTime => "CreateTime",
        TimestampType::LogAppendTime => "LogAppendTime",
    }
}

/// Java's `Map.toString()` of a source partition or offset: `{k=v, k2=v2}`.
fn java_json_map(map: &serde_json::Map<String, serde_json::Value>) -> String {
    fn value(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::Null => "null".into(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => {
                format!("[{}]", a.iter().map(value).collect::<Vec<_>>().join(", "))
            }
            serde_json::Value::Object(o) => java_json_map(o),
            other => other.to_string(),
        }
    }
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", value(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Connect's `SourceRecord.toString()`.
pub fn source_record_string(r: &SourceRecord) -> String {
    let opt = |s: Option<String>| s.unwrap_or_else(|| "null".into());
    let headers = if r.headers.is_empty() {
        String::new()
    } else {
        let items: Vec<String> = r
            .headers
            .iter()
            .map(|h| {
                format!(
                    "ConnectHeader(key={}, value={}, schema={})",
                    h.key,
                    to_java_string(&h.value),
                    opt(h.schema.as_ref().map(|s| s.to_string()))
                )
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    format!(
        "SourceRecord{{sourcePartition={}, sourceOffset={}}} ConnectRecord{{topic='{}', kafkaPartition={}, key={}, keySchema={}, value={}, valueSchema={}, timestamp={}, headers=ConnectHeaders(headers={headers})}}",
        java_json_map(&r.source_partition),
        java_json_map(&r.source_offset),
        r.topic,
        opt(r.kafka_partition.map(|p| p.to_string())),
        to_java_string(&r.key),
        opt(r.key_schema.as_ref().map(|s| s.to_string())),
        to_java_string(&r.value),
        opt(r.value_schema.as_ref().map(|s| s.to_string())),
        opt(r.timestamp.map(|t| t.to_string())),
    )
}

/// The log line Connect's `LogReporter` writes for a failed record (without the exception,
/// which follows it).
pub fn log_message(
    task: &ConnectorTaskId,
    ctx: &ProcessingContext,
    original: Option<Original<'_>>,
    include_messages: bool,
) -> String {
    let mut s = format!("Error encountered in task {task}. {}", ctx.describe());
    if include_messages {
        match original {
            Some(Original::Sink(m)) => {
                s.push_str(&format!(
                    ", where consumed record is {{topic='{}', partition={}, offset={}",
                    m.topic, m.partition, m.offset
                ));
                if let (Some(ts), TimestampType::CreateTime | TimestampType::LogAppendTime) =
                    (m.timestamp, m.timestamp_type)
                {
                    s.push_str(&format!(
                        ", timestamp={ts}, timestampType={}",
                        timestamp_type_name(m.timestamp_type)
                    ));
                }
                s.push('}');
            }
            Some(Original::Source(r)) => {
                s.push_str(&format!(
                    ", where source record is = {}",
                    source_record_string(r)
                ));
            }
            None => {}
        }
    }
    s.push('.');
    s
}

/// The `__connect.errors.*` header names (Connect's `DeadLetterQueueReporter`).
pub mod headers {
    /// The prefix of every error context header.
    pub const PREFIX: &str = "__connect.errors.";
    pub const TOPIC: &str = "__connect.errors.topic";
    pub const PARTITION: &str = "__connect.errors.partition";
    pub const OFFSET: &str = "__connect.errors.offset";
    pub const CONNECTOR_NAME: &str = "__connect.errors.connector.name";
    pub const TASK_ID: &str = "__connect.errors.task.id";
    pub const STAGE: &str = "__connect.errors.stage";
    pub const EXECUTING_CLASS: &str = "__connect.errors.class.name";
    pub const EXCEPTION: &str = "__connect.errors.exception.class.name";
    pub const EXCEPTION_MESSAGE: &str = "__connect.errors.exception.message";
    pub const EXCEPTION_STACK_TRACE: &str = "__connect.errors.exception.stacktrace";
}

/// The error context headers of a dead letter queue record, in Connect's order, each value
/// UTF-8 text: the original topic, partition and offset, the connector name, the task number,
/// the stage, the executing class, the error's Java class, message and trace.
pub fn context_headers(
    task: &ConnectorTaskId,
    ctx: &ProcessingContext,
    original: &RawRecord,
) -> Vec<(&'static str, String)> {
    let mut out = vec![
        (headers::TOPIC, original.topic.clone()),
        (headers::PARTITION, original.partition.to_string()),
        (headers::OFFSET, original.offset.to_string()),
        (headers::CONNECTOR_NAME, task.connector.clone()),
        (headers::TASK_ID, task.task.to_string()),
        (
            headers::STAGE,
            ctx.stage.map(Stage::name).unwrap_or("null").to_string(),
        ),
        (headers::EXECUTING_CLASS, ctx.class.to_string()),
    ];
    if let Some(ConnectError::Java {
        class,
        message,
        trace,
    }) = &ctx.error
    {
        // A Java plugin's exception (a hosted transformation's, say) as Connect reports it:
        // its own class, message and trace.
        out.push((headers::EXCEPTION, class.clone()));
        out.push((headers::EXCEPTION_MESSAGE, message.clone()));
        out.push((headers::EXCEPTION_STACK_TRACE, trace.clone()));
    } else if let Some(e) = &ctx.error {
        out.push((headers::EXCEPTION, e.java_class().to_string()));
        out.push((headers::EXCEPTION_MESSAGE, e.to_string()));
        out.push((
            headers::EXCEPTION_STACK_TRACE,
            format!(
                "{}: {e}\n\tat {} in task {task}\n",
                e.java_class(),
                ctx.describe()
            ),
        ));
    }
    out
}

/// Logs dead letter queue deliveries that failed (Connect logs them and goes on).
pub struct DlqProducerContext {
    topic: String,
    /// Where failed sends are counted (`deadletterqueue-produce-failures`).
    metrics: Mutex<Option<Arc<ErrorMetrics>>>,
}

impl ClientContext for DlqProducerContext {
    /// The dead letter queue producer's statistics are not exported.
    fn stats_raw(&self, _statistics: &[u8]) {}
}

impl ProducerContext for DlqProducerContext {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            if let Some(m) = self.metrics.lock().unwrap().as_ref() {
                ErrorMetrics::inc(&m.dlq_failures);
            }
            tracing::error!(
                "Could not produce message to dead letter queue. topic={}: {e}",
                self.topic
            );
        }
    }
}

/// Where a sink task's failed records go (the sending half of Connect's
/// `DeadLetterQueueReporter`): [`DeadLetterQueue`] writes them to Kafka; the sink loop's unit
/// tests keep them in memory.
pub trait DeadLetterWriter: Send + Sync {
    /// Sends a failed record as consumed, with the context of its failure (asynchronously;
    /// [`Self::flush`] waits for it).
    fn send(&self, task: &ConnectorTaskId, ctx: &ProcessingContext, original: &RawRecord);
    /// Waits up to `timeout` for the records sent so far to be durable.
    fn flush(&self, timeout: Duration);
    /// Counts failed sends into the task's `task-error-metrics`.
    fn set_metrics(&self, _metrics: Arc<ErrorMetrics>) {}
}

/// A sink task's dead letter queue (Connect's `DeadLetterQueueReporter`): failed records go
/// to `errors.deadletterqueue.topic.name` with their original key, value, timestamp and
/// headers, plus the error context headers when enabled.
pub struct DeadLetterQueue {
    topic: String,
    context_headers: bool,
    producer: ThreadedProducer<DlqProducerContext>,
}

impl DeadLetterQueue {
    /// Creates the topic when it does not exist (one partition, the configured replication
    /// factor, as Connect does) and the producer. Errors: Connect's `Could not initialize dead
    /// letter queue with topic=<topic>`, with the cause.
    pub fn create(
        admin: &ClientConfig,
        producer: &ClientConfig,
        config: &ErrorHandlingConfig,
    ) -> ConnectResult<DeadLetterQueue> {
        let topic = config.dlq_topic.clone();
        let fail = |e: String| {
            ConnectError::connect(format!(
                "Could not initialize dead letter queue with topic={topic}: {e}"
            ))
        };
        let client: AdminClient<DefaultClientContext> =
            admin.create().map_err(|e| fail(e.to_string()))?;
        let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        let new_topic = NewTopic::new(
            &topic,
            1,
            TopicReplication::Fixed(config.dlq_replication_factor as i32),
        );
        let results = futures::executor::block_on(client.create_topics([&new_topic], &opts))
            .map_err(|e| fail(e.to_string()))?;
        for r in results {
            match r {
                Ok(name) => tracing::info!(topic = name, "created dead letter queue topic"),
                Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((_, code)) => return Err(fail(code.to_string())),
            }
        }
        let producer: ThreadedProducer<DlqProducerContext> = producer
            .create_with_context(DlqProducerContext {
                topic: topic.clone(),
                metrics: Mutex::new(None),
            })
            .map_err(|e| fail(e.to_string()))?;
        Ok(DeadLetterQueue {
            topic,
            context_headers: config.dlq_context_headers,
            producer,
        })
    }
}

impl DeadLetterWriter for DeadLetterQueue {
    fn send(&self, task: &ConnectorTaskId, ctx: &ProcessingContext, original: &RawRecord) {
        let mut headers = OwnedHeaders::new_with_capacity(original.headers.len() + 10);
        for (k, v) in &original.headers {
            headers = headers.insert(KafkaHeader {
                key: k,
                value: v.as_deref(),
            });
        }
        if self.context_headers {
            for (k, v) in context_headers(task, ctx, original) {
                headers = headers.insert(KafkaHeader {
                    key: k,
                    value: Some(v.as_bytes()),
                });
            }
        }
        let mut rec: BaseRecord<'_, [u8], [u8], ()> = BaseRecord::to(&self.topic).headers(headers);
        if let Some(k) = original.key.as_deref() {
            rec = rec.key(k);
        }
        if let Some(v) = original.value.as_deref() {
            rec = rec.payload(v);
        }
        if let Some(ts) = original.timestamp {
            rec = rec.timestamp(ts);
        }
        loop {
            match self.producer.send(rec) {
                Ok(()) => return,
                Err((
                    rdkafka::error::KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull),
                    back,
                )) => {
                    rec = back;
                    self.producer.poll(Duration::from_millis(10));
                }
                Err((e, _)) => {
                    tracing::error!(
                        "Could not produce message to dead letter queue. topic={}: {e}",
                        self.topic
                    );
                    return;
                }
            }
        }
    }

    fn flush(&self, timeout: Duration) {
        if self.producer.in_flight_count() > 0 {
            if let Err(e) = self.producer.flush(timeout) {
                tracing::warn!(topic = %self.topic, "dead letter queue records not all acknowledged: {e}");
            }
        }
    }

    fn set_metrics(&self, metrics: Arc<ErrorMetrics>) {
        *self.producer.context().metrics.lock().unwrap() = Some(metrics);
    }
}

/// Where a task's failures are reported (Connect's `ErrorReporter`s): the error log
/// (`errors.log.enable`) and, for sinks, the dead letter queue.
pub struct ErrorReporters {
    task: ConnectorTaskId,
    log_enable: bool,
    include_messages: bool,
    dlq: Option<Box<dyn DeadLetterWriter>>,
    /// `task-error-metrics` (errors logged, dead letter queue requests).
    metrics: Arc<ErrorMetrics>,
}

impl ErrorReporters {
    /// The reporters of a task with these settings; `dlq` for sinks with a dead letter queue.
    pub fn new(
        task: ConnectorTaskId,
        config: &ErrorHandlingConfig,
        dlq: Option<Box<dyn DeadLetterWriter>>,
    ) -> ErrorReporters {
        ErrorReporters {
            task,
            log_enable: config.log_enable,
            include_messages: config.log_include_messages,
            dlq,
            metrics: Arc::default(),
        }
    }

    /// Records into the task's `task-error-metrics` (the dead letter queue's failed sends
    /// too) rather than a private set.
    pub fn with_metrics(mut self, metrics: Arc<ErrorMetrics>) -> Self {
        if let Some(dlq) = &self.dlq {
            dlq.set_metrics(metrics.clone());
        }
        self.metrics = metrics;
        self
    }

    /// Reports a failed record (Connect's `report`): a log line and a dead letter queue record,
    /// as configured. Nothing for a context that did not fail.
    pub fn report(&self, ctx: &ProcessingContext, original: Option<Original<'_>>) {
        let Some(error) = &ctx.error else {
            return;
        };
        if self.log_enable {
            ErrorMetrics::inc(&self.metrics.errors_logged);
            tracing::error!(
                "{}\n{}: {error}",
                log_message(&self.task, ctx, original, self.include_messages),
                error.java_class()
            );
        }
        if let (Some(dlq), Some(Original::Sink(raw))) = (&self.dlq, original) {
            ErrorMetrics::inc(&self.metrics.dlq_requests);
            dlq.send(&self.task, ctx, raw);
        }
    }

    /// Waits up to `timeout` for dead letter queue records to be acknowledged (before offsets
    /// are committed).
    pub fn flush(&self, timeout: Duration) {
        if let Some(dlq) = &self.dlq {
            dlq.flush(timeout);
        }
    }
}

/// A sink task's errant record reporter (KIP-610, Connect's `WorkerErrantRecordReporter`):
/// reports records the task could not write, with stage `TASK_PUT`, through the task's
/// operator and reporters.
pub struct WorkerErrantRecordReporter {
    operator: Arc<RetryWithToleranceOperator>,
    reporters: Arc<ErrorReporters>,
    /// Converters for records the runtime did not keep the consumed form of.
    key: Arc<dyn Converter>,
    value: Arc<dyn Converter>,
    header: Arc<dyn HeaderConverter>,
    /// The consumed form of the records of the batch being delivered, by original topic,
    /// partition and offset.
    batch: Mutex<HashMap<(String, i32, i64), RawRecord>>,
    /// The first error reported, for [`Self::take_put_error`].
    put_error: Mutex<Option<ConnectError>>,
}

impl WorkerErrantRecordReporter {
    /// A reporter sharing the task's operator, reporters and converters.
    pub fn new(
        operator: Arc<RetryWithToleranceOperator>,
        reporters: Arc<ErrorReporters>,
        key: Arc<dyn Converter>,
        value: Arc<dyn Converter>,
        header: Arc<dyn HeaderConverter>,
    ) -> WorkerErrantRecordReporter {
        WorkerErrantRecordReporter {
            operator,
            reporters,
            key,
            value,
            header,
            batch: Mutex::new(HashMap::new()),
            put_error: Mutex::new(None),
        }
    }

    /// Keeps the consumed form of the records about to be delivered (replacing the previous
    /// batch's), so that a report carries the original bytes.
    pub fn set_batch(&self, raws: impl IntoIterator<Item = RawRecord>) {
        let mut b = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        b.clear();
        for r in raws {
            b.insert((r.topic.clone(), r.partition, r.offset), r);
        }
    }

    /// Takes back the consumed forms kept by [`Self::set_batch`], by topic, partition and
    /// offset (for a batch that will be delivered again).
    pub fn take_batch(&self) -> HashMap<(String, i32, i64), RawRecord> {
        std::mem::take(&mut *self.batch.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// After `put`: the error that must fail the task when a record was reported and
    /// `errors.tolerance` is `none` (Connect's `maybeThrowAsyncError`), even if the task went
    /// on.
    pub fn take_put_error(&self) -> Option<ConnectError> {
        let e = self
            .put_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        (!self.operator.within_tolerance_limits()).then(|| {
            RetryWithToleranceOperator::tolerance_exceeded(&ProcessingContext {
                stage: Some(Stage::TaskPut),
                class: SINK_TASK_CLASS,
                attempt: 1,
                error: Some(e),
            })
        })
    }

    /// The consumed form of `record`: kept from the batch, else converted back from the record
    /// (as Connect does for records it did not hand out itself).
    fn raw_of(&self, record: &SinkRecord) -> ConnectResult<RawRecord> {
        let key = (
            record.original_topic.clone(),
            record.original_kafka_partition,
            record.original_kafka_offset,
        );
        if let Some(r) = self
            .batch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(r.clone());
        }
        let topic = &record.topic;
        let k = self
            .key
            .from_connect_data(topic, record.key_schema.as_ref(), &record.key)?;
        let v = self
            .value
            .from_connect_data(topic, record.value_schema.as_ref(), &record.value)?;
        let mut headers = Vec::new();
        for h in record.headers.iter() {
            headers.push((
                h.key.clone(),
                self.header
                    .from_connect_header(topic, &h.key, h.schema.as_ref(), &h.value)?,
            ));
        }
        Ok(RawRecord {
            topic: record.topic.clone(),
            partition: record.kafka_partition,
            offset: record.kafka_offset,
            timestamp: record.timestamp,
            timestamp_type: record.timestamp_type,
            key: k,
            value: v,
            headers,
        })
    }
}

impl ErrantRecordReporter for WorkerErrantRecordReporter {
    fn report(&self, record: &SinkRecord, error: ConnectError) -> ConnectResult<()> {
        let raw = self.raw_of(record)?;
        let mut ctx = ProcessingContext::default();
        let outcome =
            self.operator
                .execute_failed(&mut ctx, Stage::TaskPut, SINK_TASK_CLASS, error.clone());
        self.reporters.report(&ctx, Some(Original::Sink(&raw)));
        self.put_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(error);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;

    /// A clock that advances only when waited on, recording the waits.
    #[derive(Default)]
    struct FakeClock {
        now: AtomicI64,
        waits: Mutex<Vec<i64>>,
        stop_after: Option<usize>,
    }
    impl RetryClock for FakeClock {
        fn now_ms(&self) -> i64 {
            self.now.load(Ordering::Relaxed)
        }
        fn wait(&self, ms: i64) -> bool {
            let mut w = self.waits.lock().unwrap();
            w.push(ms);
            self.now.fetch_add(ms, Ordering::Relaxed);
            self.stop_after.is_some_and(|n| w.len() >= n)
        }
    }

    fn operator(
        timeout: i64,
        max_delay: i64,
        tolerance: ToleranceType,
        clock: Arc<FakeClock>,
    ) -> RetryWithToleranceOperator {
        RetryWithToleranceOperator::new(
            &ErrorHandlingConfig {
                retry_timeout_ms: timeout,
                retry_delay_max_ms: max_delay,
                tolerance,
                ..ErrorHandlingConfig::default()
            },
            clock,
        )
    }

    #[test]
    fn backoff_doubles_from_300_ms_then_jitters_below_the_maximum_and_ends_by_the_deadline() {
        let never = |_| panic!("no jitter expected");
        assert_eq!(backoff_delay_ms(1, 0, i64::MAX, 60_000, never), 300);
        assert_eq!(backoff_delay_ms(2, 0, i64::MAX, 60_000, never), 600);
        assert_eq!(backoff_delay_ms(8, 0, i64::MAX, 60_000, never), 38_400);
        // 76,800 > 60,000: a random delay below the maximum.
        assert_eq!(backoff_delay_ms(9, 0, i64::MAX, 60_000, |b| b - 1), 59_999);
        assert_eq!(backoff_delay_ms(100, 0, i64::MAX, 60_000, |_| 7), 7);
        // Cut to the time left before the deadline, never negative.
        assert_eq!(backoff_delay_ms(3, 1_000, 1_500, 60_000, never), 500);
        assert_eq!(backoff_delay_ms(3, 2_000, 1_500, 60_000, never), 0);
        // A maximum of 0 waits not at all.
        assert_eq!(backoff_delay_ms(1, 0, i64::MAX, 0, never), 0);
    }

    #[test]
    fn retriable_failures_are_retried_until_they_succeed() {
        let clock = Arc::new(FakeClock::default());
        let op = operator(10_000, 60_000, ToleranceType::None, clock.clone());
        let mut ctx = ProcessingContext::default();
        let mut calls = 0;
        let out = op
            .execute(&mut ctx, Stage::Transformation, "x.T", || {
                calls += 1;
                if calls < 4 {
                    Err(ConnectError::Retriable("busy".into()))
                } else {
                    Ok(calls)
                }
            })
            .unwrap();
        assert_eq!(out, Outcome::Done(4));
        assert_eq!(*clock.waits.lock().unwrap(), vec![300, 600, 1200]);
        assert_eq!(ctx.attempt, 4);
        assert!(!ctx.failed());
        assert_eq!(op.total_failures(), 0);
    }

    #[test]
    fn an_unavailable_service_is_retried_and_then_fails_the_task_even_with_tolerance_all() {
        let clock = Arc::new(FakeClock::default());
        let op = operator(1_000, 60_000, ToleranceType::All, clock.clone());
        let mut ctx = ProcessingContext::default();
        let err = op
            .execute(
                &mut ctx,
                Stage::ValueConverter,
                "x.Registry",
                || -> ConnectResult<()> { Err(ConnectError::Unavailable("down".into())) },
            )
            .unwrap_err();
        // Retried as a retriable error is, then not skipped.
        assert_eq!(*clock.waits.lock().unwrap(), vec![300, 600, 100]);
        let msg = err.to_string();
        assert!(msg.starts_with("Unavailable, not tolerated (the record is not skipped)\n\tat executing stage 'VALUE_CONVERTER' with class 'x.Registry'\nCaused by: org.apache.kafka.common.errors.NetworkException: down"), "{msg}");
        // A retriable error under the same settings is skipped (Connect's rule).
        let op = operator(
            0,
            60_000,
            ToleranceType::All,
            Arc::new(FakeClock::default()),
        );
        let mut ctx = ProcessingContext::default();
        let out = op
            .execute(
                &mut ctx,
                Stage::ValueConverter,
                "x.C",
                || -> ConnectResult<()> { Err(ConnectError::Retriable("busy".into())) },
            )
            .unwrap();
        assert_eq!(out, Outcome::Skipped);
    }

    #[test]
    fn retries_stop_at_the_timeout_and_the_failure_is_then_tolerated_or_not() {
        let clock = Arc::new(FakeClock::default());
        let op = operator(1_000, 60_000, ToleranceType::None, clock.clone());
        let mut ctx = ProcessingContext::default();
        let err = op
            .execute(
                &mut ctx,
                Stage::ValueConverter,
                "x.C",
                || -> ConnectResult<()> { Err(ConnectError::Retriable("busy".into())) },
            )
            .unwrap_err();
        // 300 + 600, then 100 left before the deadline.
        assert_eq!(*clock.waits.lock().unwrap(), vec![300, 600, 100]);
        assert_eq!(ctx.attempt, 4);
        let msg = err.to_string();
        assert!(msg.starts_with("Tolerance exceeded in error handler\n\tat executing stage 'VALUE_CONVERTER' with class 'x.C'\nCaused by: org.apache.kafka.connect.errors.RetriableException: busy"), "{msg}");

        // No retries with a timeout of 0; with `all` the record is skipped.
        let clock = Arc::new(FakeClock::default());
        let op = operator(0, 60_000, ToleranceType::All, clock.clone());
        let mut ctx = ProcessingContext::default();
        let out = op
            .execute(
                &mut ctx,
                Stage::KeyConverter,
                "x.C",
                || -> ConnectResult<()> { Err(ConnectError::Retriable("busy".into())) },
            )
            .unwrap();
        assert_eq!(out, Outcome::Skipped);
        assert!(clock.waits.lock().unwrap().is_empty());
        assert_eq!(op.total_failures(), 1);
        // A later stage of the same record does not run.
        let out = op
            .execute(
                &mut ctx,
                Stage::ValueConverter,
                "x.V",
                || -> ConnectResult<()> { panic!("must not run") },
            )
            .unwrap();
        assert_eq!(out, Outcome::Skipped);
        assert_eq!(ctx.stage, Some(Stage::KeyConverter));
    }

    #[test]
    fn other_errors_are_not_retried_and_a_stop_ends_the_retries() {
        let clock = Arc::new(FakeClock::default());
        let op = operator(-1, 1_000, ToleranceType::All, clock.clone());
        let mut ctx = ProcessingContext::default();
        let mut calls = 0;
        let out = op
            .execute(
                &mut ctx,
                Stage::Transformation,
                "x.T",
                || -> ConnectResult<()> {
                    calls += 1;
                    Err(ConnectError::data("bad"))
                },
            )
            .unwrap();
        assert_eq!((out, calls), (Outcome::Skipped, 1));
        assert!(matches!(ctx.error, Some(ConnectError::Data(_))));

        let clock = Arc::new(FakeClock {
            stop_after: Some(2),
            ..FakeClock::default()
        });
        let op = operator(-1, 1_000, ToleranceType::None, clock.clone());
        let mut ctx = ProcessingContext::default();
        let out = op
            .execute(
                &mut ctx,
                Stage::Transformation,
                "x.T",
                || -> ConnectResult<()> { Err(ConnectError::Retriable("busy".into())) },
            )
            .unwrap();
        assert_eq!(out, Outcome::Stopping);
        assert_eq!(op.total_failures(), 0);
    }

    #[test]
    fn log_lines_and_context_headers_follow_connect() {
        let task = ConnectorTaskId::new("sink", 2);
        let ctx = ProcessingContext {
            stage: Some(Stage::ValueConverter),
            class: "org.apache.kafka.connect.json.JsonConverter",
            attempt: 1,
            error: Some(ConnectError::data("bad json")),
        };
        let raw = RawRecord {
            topic: "in".into(),
            partition: 0,
            offset: 5,
            timestamp: Some(1_700_000_000_000),
            timestamp_type: TimestampType::CreateTime,
            key: None,
            value: Some(b"x".to_vec()),
            headers: vec![],
        };
        assert_eq!(
            log_message(&task, &ctx, Some(Original::Sink(&raw)), true),
            "Error encountered in task sink-2. Executing stage 'VALUE_CONVERTER' with class 'org.apache.kafka.connect.json.JsonConverter', where consumed record is {topic='in', partition=0, offset=5, timestamp=1700000000000, timestampType=CreateTime}."
        );
        assert_eq!(
            log_message(&task, &ctx, Some(Original::Sink(&raw)), false),
            "Error encountered in task sink-2. Executing stage 'VALUE_CONVERTER' with class 'org.apache.kafka.connect.json.JsonConverter'."
        );
        let h = context_headers(&task, &ctx, &raw);
        let names: Vec<&str> = h.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "__connect.errors.topic",
                "__connect.errors.partition",
                "__connect.errors.offset",
                "__connect.errors.connector.name",
                "__connect.errors.task.id",
                "__connect.errors.stage",
                "__connect.errors.class.name",
                "__connect.errors.exception.class.name",
                "__connect.errors.exception.message",
                "__connect.errors.exception.stacktrace",
            ]
        );
        assert_eq!(h[1].1, "0");
        assert_eq!(h[2].1, "5");
        assert_eq!(h[4].1, "2");
        assert_eq!(h[5].1, "VALUE_CONVERTER");
        assert_eq!(h[7].1, "org.apache.kafka.connect.errors.DataException");
        assert_eq!(h[8].1, "bad json");
        assert!(h[9]
            .1
            .starts_with("org.apache.kafka.connect.errors.DataException: bad json\n\tat "));

        let mut partition = serde_json::Map::new();
        partition.insert("filename".into(), "/tmp/in".into());
        let mut offset = serde_json::Map::new();
        offset.insert("position".into(), 12.into());
        let r = SourceRecord::new(
            partition,
            offset,
            "lines",
            None,
            tributary_api::data::Value::String("hi".into()),
        );
        assert_eq!(
            source_record_string(&r),
            "SourceRecord{sourcePartition={filename=/tmp/in}, sourceOffset={position=12}} ConnectRecord{topic='lines', kafkaPartition=null, key=null, keySchema=null, value=hi, valueSchema=null, timestamp=null, headers=ConnectHeaders(headers=)}"
        );
    }

    #[test]
    fn errant_records_are_reported_with_their_consumed_form_and_fail_without_tolerance() {
        use tributary_plugins::converters::header::SimpleHeaderConverter;
        use tributary_plugins::converters::string::StringConverter;
        let reporter = |tolerance| {
            let config = ErrorHandlingConfig {
                tolerance,
                log_enable: true,
                ..ErrorHandlingConfig::default()
            };
            WorkerErrantRecordReporter::new(
                Arc::new(RetryWithToleranceOperator::new(
                    &config,
                    Arc::new(FakeClock::default()),
                )),
                Arc::new(ErrorReporters::new(
                    ConnectorTaskId::new("s", 0),
                    &config,
                    None,
                )),
                Arc::new(StringConverter::new()),
                Arc::new(StringConverter::new()),
                Arc::new(SimpleHeaderConverter::new()),
            )
        };
        let mut record = SinkRecord::new(
            "in",
            0,
            None,
            tributary_api::data::Value::Null,
            None,
            tributary_api::data::Value::String("v".into()),
            7,
            None,
            TimestampType::NoTimestampType,
            Default::default(),
        );
        // A transformation renamed the topic: the consumed form is found by the original
        // coordinates.
        record.topic = "renamed".into();
        let raw = RawRecord {
            topic: "in".into(),
            partition: 0,
            offset: 7,
            timestamp: None,
            timestamp_type: TimestampType::NoTimestampType,
            key: None,
            value: Some(b"v".to_vec()),
            headers: vec![],
        };
        let r = reporter(ToleranceType::All);
        r.set_batch([raw.clone()]);
        assert_eq!(r.raw_of(&record).unwrap(), raw);
        assert!(r
            .report(&record, ConnectError::data("cannot write"))
            .is_ok());
        assert!(r.take_put_error().is_none());
        // A record not in the batch is converted back from the record itself.
        r.set_batch([]);
        let back = r.raw_of(&record).unwrap();
        assert_eq!(
            (back.topic.as_str(), back.value.as_deref()),
            ("renamed", Some(&b"v"[..]))
        );

        let r = reporter(ToleranceType::None);
        let e = r
            .report(&record, ConnectError::data("cannot write"))
            .unwrap_err();
        assert!(e
            .to_string()
            .starts_with("Tolerance exceeded in error handler"));
        // Even if the task carries on, the task fails after `put`.
        let e = r.take_put_error().unwrap().to_string();
        assert!(
            e.contains("'TASK_PUT' with class 'org.apache.kafka.connect.sink.SinkTask'"),
            "{e}"
        );
    }
}
