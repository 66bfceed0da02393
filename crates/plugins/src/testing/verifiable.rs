//! The Verifiable connectors (Kafka's `org.apache.kafka.connect.tools.VerifiableSourceConnector`,
//! `VerifiableSourceTask`, `VerifiableSinkConnector` and `VerifiableSinkTask`).
//!
//! Kafka's system tests use them to check end-to-end delivery across worker restarts: every
//! source task produces an unbroken sequence of numbers, and both sides print one JSON object
//! per line to standard output for each record they handle, which the test harness collects
//! and compares. Lines that are not JSON (log output) are ignored by such harnesses.
//!
//! # Source
//! [`VerifiableSourceConnector`] creates exactly `tasks.max` tasks, adding `id` = 0, 1, … to a
//! copy of its config. A [`VerifiableSourceTask`] reads:
//! - `name`: the connector name (printed as is; absent prints `null`),
//! - `id`: the task number (required integer),
//! - `topic`: the topic to produce to,
//! - `throughput`: records per second (required integer; negative means unlimited, 0 means a
//!   single record and then nothing),
//! - `complete.record.data`: `true` (any case) to send a struct value instead of the bare number.
//!
//! Each poll returns one record: source partition `{"id": <task>}`, source offset
//! `{"seqno": <n>}`, key `<task>` under an INT32 schema, value `<n>` under an INT64 schema (or
//! with `complete.record.data`, a struct `{name: STRING, task: INT32, topic: STRING,
//! time_ms: INT64, seqno: INT64}`). The sequence starts at 0, or one past the committed offset's
//! `seqno`. For each record it prints `{"task":…,"seqno":…,"time_ms":…,"name":…,"topic":…}`,
//! and once Kafka acknowledged it, the same with `"committed":true` first (with `seqno` the
//! record's value).
//!
//! # Sink
//! [`VerifiableSinkConnector`] splits like the source. A [`VerifiableSinkTask`] prints, for every
//! consumed record, `{"task":<record key>,"seqno":<record value>,"offset":<kafka offset>,
//! "time_ms":…,"name":…,"topic":…,"sinkTask":<id>}` and, when the record's partition is
//! flushed, the same line again with a fresh `time_ms` and `"flushed":true` at the end. The key
//! order follows what Kafka's implementation prints.
//!
//! Besides standard output, the sink keeps the lines it printed in memory per connector name,
//! for tests running a worker in-process: see [`sink_reports`], [`received_seqnos`] and
//! [`clear_sink_reports`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tracing::info;
use tributary_api::config::ConfigDef;
use tributary_api::connector::{Connector, ConnectorType};
use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::record::{RecordMetadata, SinkRecord, SourceMap, SourceRecord, TopicPartition};
use tributary_api::sink::{AsyncSinkTask, PartitionOffsets, SinkTask, SinkTaskContext};
use tributary_api::source::{AsyncSourceTask, SourceTask, SourceTaskContext, TaskFuture};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::{
    now_ms, offset_seqno, parse_int, print_line, value_to_json, Clock, SystemClock,
    VERIFIABLE_SINK_TASK_CLASS, VERIFIABLE_SOURCE_TASK_CLASS, VERSION,
};

/// Config key `name`: the connector name, echoed in every printed line.
pub const NAME_CONFIG: &str = "name";
/// Config key `id`: the task number, set by the connector in each task config.
pub const ID_CONFIG: &str = "id";
/// Config key `topic` of the source: the topic records are produced to.
pub const TOPIC_CONFIG: &str = "topic";
/// Config key `throughput` of the source: the records-per-second limit of each task.
pub const THROUGHPUT_CONFIG: &str = "throughput";
/// Config key `complete.record.data` of the source: `true` sends a struct value carrying the
/// whole report instead of the bare sequence number.
pub const COMPLETE_RECORD_DATA_CONFIG: &str = "complete.record.data";
/// Key of the source partition map, `{"id": <task>}`.
pub const ID_FIELD: &str = "id";
/// Key of the source offset map, `{"seqno": <n>}`.
pub const SEQNO_FIELD: &str = "seqno";

/// How many report lines [`sink_reports`] keeps per connector; older ones are dropped.
pub const MAX_KEPT_SINK_REPORTS: usize = 1_000_000;

/// Longest a poll waits in total while throttled to zero throughput before returning nothing.
const MAX_IDLE_POLL: Duration = Duration::from_secs(1);
/// Sleeps shorter than this are accumulated rather than taken (as Kafka's throttler does).
const MIN_SLEEP: Duration = Duration::from_millis(2);

/// The struct schema of a value sent with `complete.record.data=true`.
fn complete_value_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            SchemaBuilder::struct_()
                .field("name", Schema::string_schema())
                .and_then(|b| b.field("task", Schema::int32_schema()))
                .and_then(|b| b.field("topic", Schema::string_schema()))
                .and_then(|b| b.field("time_ms", Schema::int64_schema()))
                .and_then(|b| b.field("seqno", Schema::int64_schema()))
                .expect("distinct field names")
                .build()
        })
        .clone()
}

/// `tasks.max` copies of `config`, each with its own `id`.
fn numbered_task_configs(config: &Props, max_tasks: usize) -> Vec<Props> {
    (0..max_tasks)
        .map(|i| {
            let mut props = config.clone();
            props.insert(ID_CONFIG.to_string(), i.to_string());
            props
        })
        .collect()
}

/// Produces a numbered, resumable record stream per task, for delivery tests
/// (Kafka's `org.apache.kafka.connect.tools.VerifiableSourceConnector`).
///
/// Creates exactly `tasks.max` tasks; declares no config keys (everything is read by the task).
#[derive(Debug, Default)]
pub struct VerifiableSourceConnector {
    config: Props,
}

impl VerifiableSourceConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Connector for VerifiableSourceConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }
    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }
    fn task_class(&self) -> String {
        VERIFIABLE_SOURCE_TASK_CLASS.to_string()
    }
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.config = props.clone();
        Ok(())
    }
    /// Exactly `max_tasks` configs: the connector's config plus `id`.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(numbered_task_configs(&self.config, max_tasks))
    }
    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
    fn config(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// What [`Throttler::charge`] asks the caller to do before sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pause {
    /// Send now.
    None,
    /// Wait this long, then send.
    For(Duration),
    /// Wait until stopped (a target of zero).
    UntilStopped,
}

/// A records-per-second limiter with the behaviour of Kafka's `ThroughputThrottler`: once the
/// average rate since the start exceeds the target, every send is charged `1 / target` seconds
/// of sleep, taken once at least 2 ms have accumulated. A negative target never throttles; a
/// target of zero blocks for good once throttling starts.
#[derive(Debug, Clone)]
pub(crate) struct Throttler {
    start_ms: i64,
    target: f64,
    per_item: Duration,
    deficit: Duration,
}

impl Throttler {
    /// A throttler aiming at `target` items per second, counting from `start_ms`.
    pub(crate) fn new(target: f64, start_ms: i64) -> Throttler {
        let per_item = if target > 0.0 {
            Duration::from_secs_f64(1.0 / target)
        } else {
            Duration::MAX
        };
        Throttler {
            start_ms,
            target,
            per_item,
            deficit: Duration::ZERO,
        }
    }

    /// Whether sending after `amount_so_far` items at `now_ms` would exceed the target rate.
    pub(crate) fn should_throttle(&self, amount_so_far: i64, now_ms: i64) -> bool {
        if self.target < 0.0 {
            return false;
        }
        let elapsed_sec = (now_ms - self.start_ms) as f64 / 1000.0;
        elapsed_sec > 0.0 && (amount_so_far as f64 / elapsed_sec) > self.target
    }

    /// Charges one throttled send and says how long to wait before it.
    pub(crate) fn charge(&mut self) -> Pause {
        if self.target == 0.0 {
            return Pause::UntilStopped;
        }
        self.deficit = self.deficit.saturating_add(self.per_item);
        if self.deficit >= MIN_SLEEP {
            Pause::For(std::mem::take(&mut self.deficit))
        } else {
            Pause::None
        }
    }
}

/// Waits `total` on `clock`, giving up as soon as `stop` (when there is one) is set.
/// Returns whether the whole wait elapsed (false: stopped).
pub(crate) fn wait_unless_stopping(
    clock: &dyn Clock,
    total: Duration,
    stop: Option<&tributary_api::source::StopSignal>,
) -> bool {
    match stop {
        Some(stop) => !clock.wait_for_stop(total, stop),
        None => {
            clock.sleep(total);
            true
        }
    }
}

/// A task of [`VerifiableSourceConnector`]
/// (Kafka's `org.apache.kafka.connect.tools.VerifiableSourceTask`); see the module docs for
/// its config, records and printed lines.
pub struct VerifiableSourceTask {
    context: Option<SourceTaskContext>,
    clock: Arc<dyn Clock>,
    name: Option<String>,
    id: i32,
    topic: String,
    partition: Arc<SourceMap>,
    starting_seqno: i64,
    seqno: i64,
    throttler: Throttler,
    complete_record_data: bool,
}

impl Default for VerifiableSourceTask {
    fn default() -> Self {
        Self::new()
    }
}

impl VerifiableSourceTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    pub(crate) fn with_clock(clock: Arc<dyn Clock>) -> Self {
        VerifiableSourceTask {
            context: None,
            clock,
            name: None,
            id: 0,
            topic: String::new(),
            partition: Arc::default(),
            starting_seqno: 0,
            seqno: 0,
            throttler: Throttler::new(-1.0, 0),
            complete_record_data: false,
        }
    }

    /// What the next record waits for under the throughput limit (charged now).
    fn pause(&mut self) -> Pause {
        let send_start = self.clock.now_ms();
        if self
            .throttler
            .should_throttle(self.seqno - self.starting_seqno, send_start)
        {
            self.throttler.charge()
        } else {
            Pause::None
        }
    }

    /// The next record once its wait is over (none when the task is stopping), printed.
    fn next_record(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        if self.is_stopping() {
            return Ok(Vec::new());
        }
        let now = self.clock.now_ms();
        let data = self.report(self.seqno.into(), now);
        print_line(&serde_json::Value::Object(data).to_string());

        let mut offset = SourceMap::new();
        offset.insert(SEQNO_FIELD.into(), self.seqno.into());
        let (value_schema, value) = if self.complete_record_data {
            let schema = complete_value_schema();
            let name = self.name.clone().map(Value::String).unwrap_or(Value::Null);
            let value = Struct::new(schema.clone())?
                .put("name", name)?
                .put("task", self.id)?
                .put("topic", self.topic.as_str())?
                .put("time_ms", now)?
                .put("seqno", self.seqno)?;
            (schema, Value::Struct(value))
        } else {
            (Schema::int64_schema(), Value::Int64(self.seqno))
        };
        let mut record = SourceRecord::new(
            Arc::clone(&self.partition),
            offset,
            self.topic.clone(),
            Some(value_schema),
            value,
        );
        record.key_schema = Some(Schema::int32_schema());
        record.key = Value::Int32(self.id);
        self.seqno += 1;
        Ok(vec![record])
    }

    fn is_stopping(&self) -> bool {
        self.context.as_ref().is_some_and(|c| c.is_stopping())
    }

    /// The report object in the key order Kafka prints it.
    fn report(&self, seqno: serde_json::Value, time_ms: i64) -> SourceMap {
        let mut data = SourceMap::new();
        data.insert("task".into(), self.id.into());
        data.insert("seqno".into(), seqno);
        data.insert("time_ms".into(), time_ms.into());
        data.insert("name".into(), self.name.clone().into());
        data.insert("topic".into(), self.topic.clone().into());
        data
    }
}

impl SourceTask for VerifiableSourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Reads the config and the committed offset of partition `{"id": <id>}`. Errors when `id`
    /// or `throughput` is missing or not an integer, or `topic` is missing.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let invalid = |what: &str| {
            ConnectError::connect(format!(
                "Invalid VerifiableSourceTask configuration: {what}"
            ))
        };
        self.name = props.get(NAME_CONFIG).cloned();
        self.id =
            parse_int(props.get(ID_CONFIG)).ok_or_else(|| invalid("'id' must be an integer"))?;
        self.topic = props
            .get(TOPIC_CONFIG)
            .cloned()
            .ok_or_else(|| invalid("'topic' is missing"))?;
        let throughput: i64 = parse_int(props.get(THROUGHPUT_CONFIG))
            .ok_or_else(|| invalid("'throughput' must be an integer"))?;
        self.complete_record_data = props
            .get(COMPLETE_RECORD_DATA_CONFIG)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));

        let mut partition = SourceMap::new();
        partition.insert(ID_FIELD.into(), self.id.into());
        self.partition = Arc::new(partition);
        let previous = match &self.context {
            Some(ctx) => ctx.offset_reader.offset(&self.partition)?,
            None => None,
        };
        self.seqno = match previous {
            Some(offset) => {
                offset_seqno(&offset, SEQNO_FIELD).ok_or_else(|| {
                    ConnectError::connect(format!(
                        "Committed offset of VerifiableSourceTask {} has no integer '{SEQNO_FIELD}': {}",
                        self.id,
                        serde_json::Value::Object(offset.clone())
                    ))
                })? + 1
            }
            None => 0,
        };
        self.starting_seqno = self.seqno;
        self.throttler = Throttler::new(throughput as f64, self.clock.now_ms());
        info!(
            "Started VerifiableSourceTask {}-{} producing to topic {} resuming from seqno {}",
            self.name.as_deref().unwrap_or("null"),
            self.id,
            self.topic,
            self.starting_seqno
        );
        Ok(())
    }

    /// One record per call, after waiting as the throughput limit requires. While throttled,
    /// waits at most about a second (checking for stop every 100 ms) and then returns no
    /// records if the wait was cut short by a stop request or the throughput is zero.
    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        let stop = self.context.as_ref().map(|c| c.stopping.clone());
        match self.pause() {
            Pause::None => {}
            Pause::For(d) => {
                if !wait_unless_stopping(self.clock.as_ref(), d, stop.as_ref()) {
                    return Ok(Vec::new());
                }
            }
            Pause::UntilStopped => {
                wait_unless_stopping(self.clock.as_ref(), MAX_IDLE_POLL, stop.as_ref());
                return Ok(Vec::new());
            }
        }
        self.next_record()
    }

    /// Verifiable sources report every acknowledged record, so they ask for
    /// [`SourceTask::commit_record`] calls.
    fn wants_commit_record(&self) -> bool {
        true
    }

    /// Prints the acknowledged record's report with `"committed":true`.
    fn commit_record(
        &mut self,
        record: &SourceRecord,
        _metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        let mut data = SourceMap::new();
        data.insert("committed".into(), true.into());
        data.extend(self.report(value_to_json(&record.value), self.clock.now_ms()));
        print_line(&serde_json::Value::Object(data).to_string());
        Ok(())
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
}

/// [`VerifiableSourceTask`] as an async task (issue #43): its throughput waits are timers on
/// the worker's runtime instead of a sleeping thread, so a worker of many slow tasks holds no
/// thread per task. What the worker runs for `VerifiableSourceConnector`'s task class.
pub struct AsyncVerifiableSourceTask(VerifiableSourceTask);

impl AsyncVerifiableSourceTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        AsyncVerifiableSourceTask(VerifiableSourceTask::new())
    }
}

impl Default for AsyncVerifiableSourceTask {
    fn default() -> Self {
        Self::new()
    }
}

/// Waits `d` on the runtime's timer, cut short by a stop request; true when not stopping.
async fn sleep_unless_stopping(d: Duration, context: Option<&SourceTaskContext>) -> bool {
    match context {
        Some(c) => tokio::select! {
            () = tokio::time::sleep(d) => !c.is_stopping(),
            () = c.stopped() => false,
        },
        None => {
            tokio::time::sleep(d).await;
            true
        }
    }
}

impl AsyncSourceTask for AsyncVerifiableSourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        SourceTask::initialize(&mut self.0, context);
    }

    /// As [`VerifiableSourceTask`]'s (reading the committed offset does not block: the worker's
    /// offset store is in memory).
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(SourceTask::start(&mut self.0, props)))
    }

    /// One record, after the throughput limit's wait on a timer (cancel-safe: nothing is
    /// consumed before the wait ends).
    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            let task = &mut self.0;
            match task.pause() {
                Pause::None => {}
                Pause::For(d) => {
                    if !sleep_unless_stopping(d, task.context.as_ref()).await {
                        return Ok(Vec::new());
                    }
                }
                Pause::UntilStopped => {
                    sleep_unless_stopping(MAX_IDLE_POLL, task.context.as_ref()).await;
                    return Ok(Vec::new());
                }
            }
            task.next_record()
        })
    }

    fn wants_commit_record(&self) -> bool {
        true
    }

    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        SourceTask::commit_record(&mut self.0, record, metadata)
    }

    fn stop(&mut self) -> TaskFuture<'_, ()> {
        Box::pin(std::future::ready(SourceTask::stop(&mut self.0)))
    }
}

/// Consumes and reports records, for delivery tests
/// (Kafka's `org.apache.kafka.connect.tools.VerifiableSinkConnector`).
///
/// Creates exactly `tasks.max` tasks; declares no config keys.
#[derive(Debug, Default)]
pub struct VerifiableSinkConnector {
    config: Props,
}

impl VerifiableSinkConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Connector for VerifiableSinkConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }
    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Sink
    }
    fn task_class(&self) -> String {
        VERIFIABLE_SINK_TASK_CLASS.to_string()
    }
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.config = props.clone();
        Ok(())
    }
    /// Exactly `max_tasks` configs: the connector's config plus `id`.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(numbered_task_configs(&self.config, max_tasks))
    }
    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
    fn config(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// Report lines printed by Verifiable sink tasks, by connector name.
fn reports() -> &'static Mutex<HashMap<String, VecDeque<SourceMap>>> {
    static REPORTS: OnceLock<Mutex<HashMap<String, VecDeque<SourceMap>>>> = OnceLock::new();
    REPORTS.get_or_init(Default::default)
}

/// Every line the Verifiable sink tasks of connector `connector` printed in this process, as
/// JSON objects in print order (the most recent [`MAX_KEPT_SINK_REPORTS`]). Flush lines carry
/// `"flushed": true`.
pub fn sink_reports(connector: &str) -> Vec<SourceMap> {
    reports()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(connector)
        .map(|r| r.iter().cloned().collect())
        .unwrap_or_default()
}

/// The sequence numbers the Verifiable sink tasks of `connector` received, by the source task
/// that produced them (the record key), in arrival order; from [`sink_reports`], counting
/// consumed records only (not flush lines) whose key and value are integers.
pub fn received_seqnos(connector: &str) -> BTreeMap<i64, Vec<i64>> {
    let mut out: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in sink_reports(connector) {
        if r.get("flushed").is_some() {
            continue;
        }
        if let (Some(task), Some(seqno)) = (
            r.get("task").and_then(|v| v.as_i64()),
            r.get("seqno").and_then(|v| v.as_i64()),
        ) {
            out.entry(task).or_default().push(seqno);
        }
    }
    out
}

/// Forgets the lines kept for `connector`.
pub fn clear_sink_reports(connector: &str) {
    reports()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(connector);
}

/// A task of [`VerifiableSinkConnector`]
/// (Kafka's `org.apache.kafka.connect.tools.VerifiableSinkTask`); see the module docs for the
/// lines it prints.
#[derive(Debug, Default)]
pub struct VerifiableSinkTask {
    name: Option<String>,
    id: i32,
    unflushed: HashMap<TopicPartition, Vec<SourceMap>>,
}

impl VerifiableSinkTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        Self::default()
    }

    fn emit(&self, data: &SourceMap) {
        print_line(&serde_json::Value::Object(data.clone()).to_string());
        let mut all = reports().lock().unwrap_or_else(|e| e.into_inner());
        let kept = all
            .entry(self.name.clone().unwrap_or_default())
            .or_default();
        if kept.len() >= MAX_KEPT_SINK_REPORTS {
            kept.pop_front();
        }
        kept.push_back(data.clone());
    }
}

impl SinkTask for VerifiableSinkTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    /// Reads `name` and `id`; errors when `id` is missing or not an integer.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.name = props.get(NAME_CONFIG).cloned();
        self.id = parse_int(props.get(ID_CONFIG)).ok_or_else(|| {
            ConnectError::connect(
                "Invalid VerifiableSinkTask configuration: 'id' must be an integer",
            )
        })?;
        Ok(())
    }

    /// Prints one line per record and remembers it until its partition is flushed.
    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()> {
        let now = now_ms();
        for record in records {
            let mut data = SourceMap::new();
            data.insert("task".into(), value_to_json(&record.key));
            data.insert("seqno".into(), value_to_json(&record.value));
            data.insert("offset".into(), record.kafka_offset.into());
            data.insert("time_ms".into(), now.into());
            data.insert("name".into(), self.name.clone().into());
            data.insert("topic".into(), record.topic.clone().into());
            data.insert("sinkTask".into(), self.id.into());
            self.emit(&data);
            self.unflushed
                .entry(TopicPartition::new(&record.topic, record.kafka_partition))
                .or_default()
                .push(data);
        }
        Ok(())
    }

    /// Prints again, marked `"flushed":true`, every remembered record of the partitions in
    /// `offsets`, and forgets them.
    fn flush(&mut self, offsets: &PartitionOffsets) -> ConnectResult<()> {
        let now = now_ms();
        for tp in offsets.keys() {
            let Some(pending) = self.unflushed.remove(tp) else {
                continue;
            };
            for mut data in pending {
                data.insert("time_ms".into(), now.into());
                data.insert("flushed".into(), true.into());
                self.emit(&data);
            }
        }
        Ok(())
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
}

/// [`VerifiableSinkTask`] as an async task (issue #43): its calls are futures the worker's
/// runtime drives. What the worker runs for `VerifiableSinkConnector`'s task class.
pub struct AsyncVerifiableSinkTask(VerifiableSinkTask);

impl AsyncVerifiableSinkTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        AsyncVerifiableSinkTask(VerifiableSinkTask::new())
    }
}

impl Default for AsyncVerifiableSinkTask {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncSinkTask for AsyncVerifiableSinkTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }
    fn initialize(&mut self, context: SinkTaskContext) {
        SinkTask::initialize(&mut self.0, context);
    }
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(SinkTask::start(&mut self.0, props)))
    }
    fn put<'a>(&'a mut self, records: &'a [SinkRecord]) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(SinkTask::put(&mut self.0, records)))
    }
    fn flush<'a>(&'a mut self, offsets: &'a PartitionOffsets) -> TaskFuture<'a, ()> {
        Box::pin(std::future::ready(SinkTask::flush(&mut self.0, offsets)))
    }
    fn stop(&mut self) -> TaskFuture<'_, ()> {
        Box::pin(std::future::ready(SinkTask::stop(&mut self.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{context, props, FakeClock, MemOffsets};
    use super::*;
    use tributary_api::data::SchemaType;
    use tributary_api::record::{Headers, TimestampType};

    fn started_source(
        p: &Props,
        offsets: Arc<MemOffsets>,
        clock: Arc<dyn Clock>,
    ) -> (VerifiableSourceTask, tributary_api::source::StopSignal) {
        let (ctx, stopping) = context(p, offsets);
        let mut t = VerifiableSourceTask::with_clock(clock);
        t.initialize(ctx);
        t.start(p).unwrap();
        (t, stopping)
    }

    fn seqno_of(r: &SourceRecord) -> i64 {
        match r.value {
            Value::Int64(n) => n,
            ref v => panic!("unexpected value {v:?}"),
        }
    }

    #[test]
    fn connectors_create_one_numbered_config_per_task() {
        let base = props(&[("name", "v"), ("topic", "t"), ("throughput", "10")]);
        let mut source = VerifiableSourceConnector::new();
        source.start(&base).unwrap();
        let configs = source.task_configs(3).unwrap();
        assert_eq!(configs.len(), 3);
        for (i, c) in configs.iter().enumerate() {
            assert_eq!(c["id"], i.to_string());
            assert_eq!(c["topic"], "t");
            assert_eq!(c["throughput"], "10");
            assert_eq!(c.len(), base.len() + 1);
        }
        let mut sink = VerifiableSinkConnector::new();
        sink.start(&base).unwrap();
        let ids: Vec<_> = sink
            .task_configs(2)
            .unwrap()
            .into_iter()
            .map(|c| c["id"].clone())
            .collect();
        assert_eq!(ids, vec!["0", "1"]);
        assert!(source.config().keys.is_empty() && sink.config().keys.is_empty());
    }

    #[test]
    fn source_start_rejects_bad_config() {
        for p in [
            props(&[("topic", "t"), ("throughput", "1")]),
            props(&[("id", "x"), ("topic", "t"), ("throughput", "1")]),
            props(&[("id", "0"), ("topic", "t")]),
            props(&[("id", "0"), ("topic", "t"), ("throughput", "fast")]),
            props(&[("id", "0"), ("throughput", "1")]),
        ] {
            let (ctx, _) = context(&p, Arc::default());
            let mut t = VerifiableSourceTask::new();
            t.initialize(ctx);
            assert!(t.start(&p).is_err(), "{p:?}");
        }
    }

    #[test]
    fn source_emits_increasing_seqnos_with_javas_record_shape() {
        let p = props(&[
            ("name", "v"),
            ("id", "2"),
            ("topic", "t"),
            ("throughput", "-1"),
        ]);
        let (mut t, _) = started_source(&p, Arc::default(), Arc::new(SystemClock));
        let mut records = Vec::new();
        for _ in 0..5 {
            let batch = t.poll().unwrap();
            assert_eq!(batch.len(), 1);
            records.extend(batch);
        }
        let seqnos: Vec<_> = records.iter().map(seqno_of).collect();
        assert_eq!(seqnos, vec![0, 1, 2, 3, 4]);
        for (n, r) in records.iter().enumerate() {
            assert_eq!(
                serde_json::Value::Object((*r.source_partition).clone()),
                serde_json::json!({"id": 2})
            );
            assert_eq!(
                serde_json::Value::Object(r.source_offset.clone()),
                serde_json::json!({ "seqno": n })
            );
            assert_eq!(r.topic, "t");
            assert_eq!(r.key, Value::Int32(2));
            assert_eq!(
                r.key_schema.as_ref().unwrap().schema_type,
                SchemaType::Int32
            );
            assert_eq!(
                r.value_schema.as_ref().unwrap().schema_type,
                SchemaType::Int64
            );
            assert!(!r.value_schema.as_ref().unwrap().optional);
        }
        // Acknowledgements are reported, not failed.
        t.commit_record(&records[0], None).unwrap();
    }

    #[test]
    fn source_resumes_after_the_committed_seqno() {
        let offsets = Arc::new(MemOffsets::default());
        offsets.put(
            serde_json::json!({"id": 1}),
            serde_json::json!({"seqno": 41}),
        );
        let p = props(&[("id", "1"), ("topic", "t"), ("throughput", "-1")]);
        let (mut t, _) = started_source(&p, offsets.clone(), Arc::new(SystemClock));
        let first = t.poll().unwrap().remove(0);
        assert_eq!(seqno_of(&first), 42);
        assert_eq!(first.source_offset["seqno"], 42);
        assert_eq!(seqno_of(&t.poll().unwrap()[0]), 43);

        // Another task's partition has no offset: starts at 0.
        let p0 = props(&[("id", "0"), ("topic", "t"), ("throughput", "-1")]);
        let (mut t0, _) = started_source(&p0, offsets, Arc::new(SystemClock));
        assert_eq!(seqno_of(&t0.poll().unwrap()[0]), 0);
    }

    #[test]
    fn source_complete_record_data_sends_a_struct() {
        let p = props(&[
            ("name", "conn"),
            ("id", "3"),
            ("topic", "t"),
            ("throughput", "-1"),
            ("complete.record.data", "TRUE"),
        ]);
        let (mut t, _) = started_source(&p, Arc::default(), Arc::new(SystemClock));
        let r = t.poll().unwrap().remove(0);
        let schema = r.value_schema.clone().unwrap();
        let names: Vec<_> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["name", "task", "topic", "time_ms", "seqno"]);
        let Value::Struct(s) = &r.value else {
            panic!("not a struct: {:?}", r.value)
        };
        assert_eq!(s.get("name"), Some(&Value::from("conn")));
        assert_eq!(s.get("task"), Some(&Value::Int32(3)));
        assert_eq!(s.get("topic"), Some(&Value::from("t")));
        assert_eq!(s.get("seqno"), Some(&Value::Int64(0)));
        assert!(matches!(s.get("time_ms"), Some(Value::Int64(_))));
        s.validate().unwrap();
    }

    #[test]
    fn throttler_follows_kafkas_rule() {
        let mut th = Throttler::new(10.0, 1_000);
        assert!(!th.should_throttle(100, 1_000), "no elapsed time: never");
        assert!(!th.should_throttle(10, 2_000), "exactly on target");
        assert!(th.should_throttle(11, 2_000));
        assert_eq!(th.charge(), Pause::For(Duration::from_millis(100)));
        assert!(!Throttler::new(-1.0, 0).should_throttle(1_000_000, 1));
        assert_eq!(Throttler::new(0.0, 0).charge(), Pause::UntilStopped);
        // At 1000/s each send is charged 1 ms; the sleep is taken once 2 ms accumulated.
        let mut fast = Throttler::new(1000.0, 0);
        assert_eq!(fast.charge(), Pause::None);
        assert_eq!(fast.charge(), Pause::For(Duration::from_millis(2)));
        assert_eq!(fast.charge(), Pause::None);
    }

    /// Counts records over simulated time, so the check does not depend on the machine's speed.
    #[test]
    fn source_honours_throughput_over_simulated_time() {
        for (throughput, secs) in [(10, 3), (50, 2)] {
            let clock = FakeClock::at(1_000_000);
            let p = props(&[
                ("id", "0"),
                ("topic", "t"),
                ("throughput", &throughput.to_string()),
            ]);
            let (mut t, _) = started_source(&p, Arc::default(), clock.clone());
            let end = clock.peek() + secs * 1000;
            let mut count = 0;
            let mut polls = 0;
            while clock.peek() < end {
                count += t.poll().unwrap().len() as i64;
                polls += 1;
                assert!(polls < 100_000, "bounded number of polls");
            }
            let expected = throughput * secs;
            assert!(
                (expected * 8 / 10..=expected * 12 / 10 + 1).contains(&count),
                "throughput {throughput}: {count} records in {secs} s"
            );
        }
    }

    #[test]
    fn zero_throughput_sends_one_record_then_idles_and_stops_promptly() {
        let clock = FakeClock::at(0);
        let p = props(&[("id", "0"), ("topic", "t"), ("throughput", "0")]);
        let (mut t, stopping) = started_source(&p, Arc::default(), clock.clone());
        assert_eq!(t.poll().unwrap().len(), 1);
        for _ in 0..5 {
            let before = clock.peek();
            assert!(t.poll().unwrap().is_empty());
            // Each idle poll returns after at most about a second.
            assert!(clock.peek() - before <= 1_100);
        }
        stopping.set(true);
        let before = clock.peek();
        assert!(t.poll().unwrap().is_empty());
        assert!(clock.peek() - before < 100, "a stopping task does not wait");
    }

    #[test]
    fn throttled_wait_is_cut_short_by_stop() {
        let clock = FakeClock::at(0);
        let p = props(&[("id", "0"), ("topic", "t"), ("throughput", "1")]);
        let (mut t, stopping) = started_source(&p, Arc::default(), clock.clone());
        assert_eq!(t.poll().unwrap().len(), 1);
        stopping.set(true);
        // Second record would be throttled (1/s); the stop request ends the wait at once.
        let before = clock.peek();
        assert!(t.poll().unwrap().is_empty());
        assert!(clock.peek() - before < 100);
    }

    fn sink_record(topic: &str, partition: i32, offset: i64, task: i32, seqno: i64) -> SinkRecord {
        SinkRecord::new(
            topic,
            partition,
            Some(Schema::int32_schema()),
            Value::Int32(task),
            Some(Schema::int64_schema()),
            Value::Int64(seqno),
            offset,
            None,
            TimestampType::CreateTime,
            Headers::new(),
        )
    }

    #[test]
    fn sink_reports_received_and_flushed_records() {
        let name = "verifiable-sink-unit-test";
        clear_sink_reports(name);
        let mut t = VerifiableSinkTask::new();
        assert!(t.start(&props(&[("name", name)])).is_err(), "id required");
        t.start(&props(&[("name", name), ("id", "4")])).unwrap();
        t.put(&[
            sink_record("t", 0, 10, 0, 5),
            sink_record("t", 1, 20, 1, 7),
            sink_record("t", 0, 11, 0, 6),
        ])
        .unwrap();
        t.put(&[]).unwrap();

        let lines = sink_reports(name);
        assert_eq!(lines.len(), 3);
        let keys: Vec<_> = lines[0].keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec!["task", "seqno", "offset", "time_ms", "name", "topic", "sinkTask"]
        );
        assert_eq!(lines[0]["task"], 0);
        assert_eq!(lines[0]["seqno"], 5);
        assert_eq!(lines[0]["offset"], 10);
        assert_eq!(lines[0]["name"], name);
        assert_eq!(lines[0]["topic"], "t");
        assert_eq!(lines[0]["sinkTask"], 4);

        // Flushing partition 0 reports its two records again, marked flushed.
        let mut offsets = PartitionOffsets::new();
        offsets.insert(TopicPartition::new("t", 0), 12);
        offsets.insert(TopicPartition::new("other", 0), 1);
        t.flush(&offsets).unwrap();
        let lines = sink_reports(name);
        assert_eq!(lines.len(), 5);
        for l in &lines[3..] {
            assert_eq!(l["flushed"], true);
            assert_eq!(l.keys().next_back().unwrap(), "flushed");
            assert_eq!(l["task"], 0);
        }
        // Flushing it again reports nothing new; partition 1 follows through pre_commit.
        t.flush(&offsets).unwrap();
        assert_eq!(sink_reports(name).len(), 5);
        let mut offsets1 = PartitionOffsets::new();
        offsets1.insert(TopicPartition::new("t", 1), 21);
        assert_eq!(t.pre_commit(&offsets1).unwrap(), offsets1);
        let lines = sink_reports(name);
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[5]["seqno"], 7);

        let seqnos = received_seqnos(name);
        assert_eq!(seqnos[&0], vec![5, 6]);
        assert_eq!(seqnos[&1], vec![7]);
        clear_sink_reports(name);
        assert!(sink_reports(name).is_empty());
    }
}
