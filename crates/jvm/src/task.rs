//! Java source and sink tasks hosted in the JVM, behind Tributary's [`SourceTask`] and
//! [`SinkTask`] traits. They run on the worker's task threads (attached to the JVM for good);
//! each `poll` / `put` crosses once, with the whole batch as bytes (see `codec`): keys,
//! values and header values as JsonConverter envelopes (schemas enabled) read and written by
//! Tributary's own JsonConverter, source partitions and offsets as JSON. The worker's
//! converters and transformations then apply as for native tasks.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use jni::objects::{GlobalRef, JValue};
use tributary_api::converter::Converter;
use tributary_api::record::{
    Header, Headers, RecordMetadata, SinkRecord, SourceMap, SourceRecord, TimestampType,
    TopicPartition,
};
use tributary_api::sink::{PartitionOffsets, SinkTask, SinkTaskContext};
use tributary_api::source::{SourceTask, SourceTaskContext, StopSignal};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_json::JsonConverter;

use crate::codec::{self, CodecError, Reader, Writer};
use crate::connector::bytes_result;
use crate::natives::{self, Handle};
use crate::vm::Jvm;

fn codec_err(e: CodecError) -> ConnectError {
    ConnectError::connect(e.to_string())
}

fn props_bytes(props: &Props) -> Vec<u8> {
    let mut w = Writer::new();
    w.map(props);
    w.into_bytes()
}

/// What the Java task instance is, once created.
struct Hosted {
    jvm: Arc<Jvm>,
    connector_class: String,
    task_class: String,
    version: String,
    instance: Option<GlobalRef>,
}

impl Hosted {
    fn create(&mut self, factory: &str, sig: &str) -> ConnectResult<GlobalRef> {
        if let Some(i) = &self.instance {
            return Ok(i.clone());
        }
        let (connector, task, version) = (
            self.connector_class.clone(),
            self.task_class.clone(),
            self.version.clone(),
        );
        let obj = self.jvm.call(|env, bridge| {
            let c = env.new_string(&connector)?;
            let t = env.new_string(&task)?;
            // Loaded by the class loader of the connector's version (KIP-891).
            let v = env.new_string(&version)?;
            let obj = env
                .call_static_method(
                    bridge,
                    factory,
                    sig,
                    &[JValue::Object(&c), JValue::Object(&t), JValue::Object(&v)],
                )?
                .l()?;
            env.new_global_ref(obj)
        })?;
        self.instance = Some(obj.clone());
        Ok(obj)
    }

    fn instance(&self) -> ConnectResult<GlobalRef> {
        self.instance.clone().ok_or_else(|| {
            ConnectError::connect(format!("task {} was not created", self.task_class))
        })
    }

    /// Calls `method` with an optional byte array, returning the byte array it returns.
    fn call(&self, method: &str, sig: &str, arg: Option<&[u8]>) -> ConnectResult<Option<Vec<u8>>> {
        let obj = self.instance()?;
        self.jvm.call(|env, _| {
            let arr;
            let mut args: Vec<JValue> = Vec::new();
            if let Some(b) = arg {
                arr = env.byte_array_from_slice(b)?;
                args.push(JValue::Object(&arr));
            }
            let out = env.call_method(&obj, method, sig, &args)?;
            bytes_result(env, out)
        })
    }
}

/// KIP-877 for a hosted converter, transformation or predicate: `withPluginMetrics(tags)` on
/// its Java instance, which hands the plugin its metrics if it is `Monitorable`. A failure is
/// logged: the plugin runs without its metrics.
pub(crate) fn hand_plugin_metrics(
    jvm: &Jvm,
    obj: &GlobalRef,
    class: &str,
    metrics: &tributary_api::metrics::PluginMetrics,
) {
    let tags = codec::metric_tags(metrics);
    let done = jvm.call(|env, _| {
        let tags = env.byte_array_from_slice(&tags)?;
        env.call_method(obj, "withPluginMetrics", "([B)V", &[JValue::Object(&tags)])
            .map(|_| ())
    });
    if let Err(e) = done {
        tracing::warn!(class, error = %e, "withPluginMetrics() failed");
    }
}

/// Removes the plugin metrics (KIP-877) of a hosted connector or task instance, before it is
/// released.
pub(crate) fn close_metrics(jvm: &Jvm, obj: &GlobalRef) {
    if let Err(e) = jvm.call(|env, _| env.call_method(obj, "closeMetrics", "()V", &[]).map(|_| ()))
    {
        tracing::warn!(error = %e, "cannot remove a hosted plugin's metrics");
    }
}

impl Drop for Hosted {
    fn drop(&mut self) {
        if let Some(obj) = self.instance.take() {
            close_metrics(&self.jvm, &obj);
            self.jvm.release(obj);
        }
    }
}

/// A Java `SourceTask` (loaded with its connector's class loader).
///
/// As in Connect, `stop()` reaches the Java task as soon as the runtime asks the task to stop,
/// from a thread of its own, even while `poll()` blocks (a task that waits in `poll` until it
/// is stopped returns at once); `stop()` is called once.
pub struct JavaSourceTask {
    hosted: Hosted,
    /// Set by whoever calls Java's `stop()` first: the stop watcher or [`SourceTask::stop`].
    stopped: Arc<AtomicBool>,
    context: Option<SourceTaskContext>,
    reader: Option<Handle>,
    wants_commit_record: OnceLock<bool>,
    /// Records handed out and not yet committed, with their sequence numbers (only for tasks
    /// that override `commitRecord`).
    in_flight: VecDeque<(i64, SourceRecord)>,
    envelope: JsonConverter,
}

const NEW_SOURCE: &str =
    "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)Lio/tributary/jvm/HostedSourceTask;";
const NEW_SINK: &str =
    "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)Lio/tributary/jvm/HostedSinkTask;";

impl JavaSourceTask {
    /// A task of `task_class` for a connector of `connector_class`; created in Java by
    /// `start`, on the task's thread.
    pub fn new(jvm: Arc<Jvm>, connector_class: &str, task_class: &str, version: &str) -> Self {
        JavaSourceTask {
            hosted: Hosted {
                jvm,
                connector_class: connector_class.into(),
                task_class: task_class.into(),
                version: version.into(),
                instance: None,
            },
            stopped: Arc::new(AtomicBool::new(false)),
            context: None,
            reader: None,
            wants_commit_record: OnceLock::new(),
            in_flight: VecDeque::new(),
            envelope: JsonConverter::new().non_finite_floats(),
        }
    }

    fn decode(&mut self, bytes: &[u8]) -> ConnectResult<Vec<SourceRecord>> {
        let mut r = Reader::new(bytes);
        let n = r.count().map_err(codec_err)?;
        let mut out = Vec::with_capacity(n);
        // Records of one source partition share one map, as the runtime prefers.
        let mut last_partition: Option<(Vec<u8>, Arc<SourceMap>)> = None;
        for _ in 0..n {
            let seq = r.i64().map_err(codec_err)?;
            let partition_json = r.bytes().map_err(codec_err)?.unwrap_or(b"{}");
            let source_partition = match &last_partition {
                Some((b, map)) if b.as_slice() == partition_json => map.clone(),
                _ => {
                    let map: Arc<SourceMap> = Arc::new(json_map(partition_json)?);
                    last_partition = Some((partition_json.to_vec(), map.clone()));
                    map
                }
            };
            let source_offset = json_map(r.bytes().map_err(codec_err)?.unwrap_or(b"{}"))?;
            let topic = r.str().map_err(codec_err)?;
            let has_partition = r.u8().map_err(codec_err)? == 1;
            let partition = r.i32().map_err(codec_err)?;
            let key =
                crate::codec::envelope_data(&self.envelope, &topic, r.bytes().map_err(codec_err)?)?;
            let value =
                crate::codec::envelope_data(&self.envelope, &topic, r.bytes().map_err(codec_err)?)?;
            let has_ts = r.u8().map_err(codec_err)? == 1;
            let ts = r.i64().map_err(codec_err)?;
            let nh = r.count().map_err(codec_err)?;
            let mut headers = Headers::new();
            for _ in 0..nh {
                let hk = r.str().map_err(codec_err)?;
                let hv = crate::codec::envelope_data(
                    &self.envelope,
                    &topic,
                    r.bytes().map_err(codec_err)?,
                )?;
                headers.0.push(Header {
                    key: hk,
                    schema: hv.schema,
                    value: hv.value,
                });
            }
            let record = SourceRecord {
                source_partition,
                source_offset,
                topic,
                kafka_partition: has_partition.then_some(partition),
                key_schema: key.schema,
                key: key.value,
                value_schema: value.schema,
                value: value.value,
                timestamp: has_ts.then_some(ts),
                headers,
            };
            if self.wants_commit_record.get() == Some(&true) {
                self.in_flight.push_back((seq, record.clone()));
            }
            out.push(record);
        }
        // The transaction boundaries the task asked for (KIP-618), handed to the runtime's
        // TransactionContext as a native task's requests would be.
        let flagged = r.count().map_err(codec_err)?;
        let transactions = self
            .context
            .as_ref()
            .and_then(|c| c.transaction_context.clone());
        for _ in 0..flagged {
            let index = r.i32().map_err(codec_err)?;
            let kind = r.u8().map_err(codec_err)?;
            let (Some(tc), Some(record)) = (
                &transactions,
                usize::try_from(index).ok().and_then(|i| out.get(i)),
            ) else {
                continue;
            };
            if kind & 1 != 0 {
                tc.commit_transaction_for(record);
            }
            if kind & 2 != 0 {
                tc.abort_transaction_for(record);
            }
        }
        let batch = r.u8().map_err(codec_err)?;
        if let Some(tc) = &transactions {
            if batch & 1 != 0 {
                tc.commit_transaction();
            }
            if batch & 2 != 0 {
                tc.abort_transaction();
            }
        }
        Ok(out)
    }
}

fn json_map(bytes: &[u8]) -> ConnectResult<SourceMap> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(serde_json::Value::Null) => Ok(SourceMap::new()),
        Ok(other) => Err(ConnectError::data(format!(
            "a source partition or offset is not a map: {other}"
        ))),
        Err(e) => Err(ConnectError::data(format!(
            "a source partition or offset is not JSON: {e}"
        ))),
    }
}

impl SourceTask for JavaSourceTask {
    fn version(&self) -> String {
        self.hosted.version.clone()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let obj = self.hosted.create("newSourceTask", NEW_SOURCE)?;
        let context = self
            .context
            .clone()
            .ok_or_else(|| ConnectError::connect("the task was not initialized"))?;
        let reader = natives::register_reader(context.offset_reader.clone());
        let reader_id = reader.id;
        self.reader = Some(reader);
        let config = props_bytes(&context.config);
        let tags = codec::metric_tags(&context.plugin_metrics);
        // A TransactionContext only under connector-defined boundaries, as in Connect.
        let connector_boundaries = context.transaction_context.is_some();
        let wants = self.hosted.jvm.call(|env, _| {
            let arr = env.byte_array_from_slice(&config)?;
            let tags = env.byte_array_from_slice(&tags)?;
            env.call_method(
                &obj,
                "initialize",
                "(J[B[BZ)V",
                &[
                    JValue::Long(reader_id),
                    JValue::Object(&arr),
                    JValue::Object(&tags),
                    JValue::Bool(connector_boundaries.into()),
                ],
            )?;
            env.call_method(&obj, "wantsCommitRecord", "()Z", &[])?.z()
        })?;
        self.wants_commit_record.get_or_init(|| wants);
        self.hosted
            .call("start", "([B)V", Some(&props_bytes(props)))?;
        self.watch_for_stop(context.stopping.clone(), obj);
        Ok(())
    }

    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        // Never poll a task whose stop() was called (Connect does not either).
        if self.stopped.load(Ordering::Acquire) {
            return Ok(Vec::new());
        }
        match self.hosted.call("poll", "()[B", None)? {
            Some(bytes) => self.decode(&bytes),
            None => Ok(Vec::new()),
        }
    }

    fn commit(&mut self) -> ConnectResult<()> {
        self.hosted.call("commit", "()V", None).map(|_| ())
    }

    fn wants_commit_record(&self) -> bool {
        // Asked before `start` (on the task's thread): answered from the task class.
        *self.wants_commit_record.get_or_init(|| {
            let (connector, task, version) = (
                self.hosted.connector_class.clone(),
                self.hosted.task_class.clone(),
                self.hosted.version.clone(),
            );
            self.hosted
                .jvm
                .call(|env, bridge| {
                    let c = env.new_string(&connector)?;
                    let t = env.new_string(&task)?;
                    let v = env.new_string(&version)?;
                    env.call_static_method(
                        bridge,
                        "overridesCommitRecord",
                        "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)Z",
                        &[JValue::Object(&c), JValue::Object(&t), JValue::Object(&v)],
                    )?
                    .z()
                })
                .unwrap_or_else(|e| {
                    // `start` fails on the same class and reports it.
                    tracing::warn!(task = %task, error = %e, "cannot tell whether the task overrides commitRecord");
                    false
                })
        })
    }

    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        let Some(pos) = self.in_flight.iter().position(|(_, r)| r == record) else {
            return Ok(());
        };
        let (seq, r) = self.in_flight.remove(pos).expect("position is in range");
        let obj = self.hosted.instance()?;
        let (partition, offset) = metadata
            .map(|m| (m.partition, m.offset))
            .unwrap_or((-1, -1));
        self.hosted.jvm.call(|env, _| {
            let topic = env.new_string(&r.topic)?;
            env.call_method(
                &obj,
                "commitRecord",
                "(JLjava/lang/String;IJ)V",
                &[
                    JValue::Long(seq),
                    JValue::Object(&topic),
                    JValue::Int(partition),
                    JValue::Long(offset),
                ],
            )?;
            Ok(())
        })
    }

    fn stop(&mut self) -> ConnectResult<()> {
        if self.hosted.instance.is_none() || self.stopped.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let result = self.hosted.call("stop", "()V", None).map(|_| ());
        self.reader = None;
        result
    }
}

impl JavaSourceTask {
    /// Calls Java's `stop()` from a thread of its own as soon as `stopping` is set (unless
    /// [`SourceTask::stop`] came first); the thread ends with the task.
    fn watch_for_stop(&self, stopping: StopSignal, obj: GlobalRef) {
        let stopped = self.stopped.clone();
        let jvm = self.hosted.jvm.clone();
        let task = self.hosted.task_class.clone();
        let spawned = std::thread::Builder::new()
            .name("java-task-stop".into())
            .spawn(move || {
                loop {
                    if stopping.wait(Duration::from_secs(1)) {
                        break;
                    }
                    // The task was stopped, or dropped, without a stop request.
                    if stopped.load(Ordering::Acquire) || Arc::strong_count(&stopped) == 1 {
                        jvm.release(obj);
                        return;
                    }
                }
                if !stopped.swap(true, Ordering::AcqRel) {
                    let result = jvm.call(|env, _| {
                        env.call_method(&obj, "stop", "()V", &[])?;
                        Ok(())
                    });
                    if let Err(e) = result {
                        tracing::error!(task = %task, error = %e, "the Java task's stop() failed");
                    }
                }
                jvm.release(obj);
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no stop watcher for a Java source task: its stop() waits for poll() to return");
        }
    }
}

/// A Java `SinkTask` (loaded with its connector's class loader). Its
/// `SinkTaskContext.errantRecordReporter()` reports to the runtime's reporter for the task
/// (`None` in the context: Java sees null, as in Connect); its `offset`, `timeout`, `pause`,
/// `resume` and `requestCommit` go to the task's [`SinkTaskContext`].
pub struct JavaSinkTask {
    hosted: Hosted,
    context: Option<SinkTaskContext>,
    reporter: Option<Handle>,
    /// The context's registration for `Natives.sinkContext`.
    requests: Option<Handle>,
    envelope: JsonConverter,
}

impl JavaSinkTask {
    /// A task of `task_class` for a connector of `connector_class`; created in Java by
    /// `start`, on the task's thread.
    pub fn new(jvm: Arc<Jvm>, connector_class: &str, task_class: &str, version: &str) -> Self {
        JavaSinkTask {
            hosted: Hosted {
                jvm,
                connector_class: connector_class.into(),
                task_class: task_class.into(),
                version: version.into(),
                instance: None,
            },
            context: None,
            reporter: None,
            requests: None,
            envelope: JsonConverter::new().non_finite_floats(),
        }
    }

    fn encode(&self, records: &[SinkRecord]) -> ConnectResult<Vec<u8>> {
        let mut w = Writer::new();
        w.i32(records.len() as i32);
        for r in records {
            encode_sink_record(&mut w, &self.envelope, r)?;
        }
        Ok(w.into_bytes())
    }
}

/// Writes one record of a put batch (`HostedSinkTask`'s layout): topic, partition, offset,
/// timestamp (flag, ms), timestamp type, key and value (JsonConverter envelopes), headers,
/// original topic, partition and offset.
fn encode_sink_record(
    w: &mut Writer,
    envelope: &JsonConverter,
    r: &SinkRecord,
) -> ConnectResult<()> {
    w.str(&r.topic).i32(r.kafka_partition).i64(r.kafka_offset);
    w.u8(r.timestamp.is_some() as u8)
        .i64(r.timestamp.unwrap_or(0));
    w.u8(match r.timestamp_type {
        TimestampType::NoTimestampType => 0,
        TimestampType::CreateTime => 1,
        TimestampType::LogAppendTime => 2,
    });
    let key = envelope.from_connect_data(&r.topic, r.key_schema.as_ref(), &r.key)?;
    w.bytes(key.as_deref());
    let value = envelope.from_connect_data(&r.topic, r.value_schema.as_ref(), &r.value)?;
    w.bytes(value.as_deref());
    w.i32(r.headers.len() as i32);
    for h in r.headers.iter() {
        let hv = envelope.from_connect_data(&r.topic, h.schema.as_ref(), &h.value)?;
        w.str(&h.key).bytes(hv.as_deref());
    }
    w.str(&r.original_topic)
        .i32(r.original_kafka_partition)
        .i64(r.original_kafka_offset);
    Ok(())
}

/// Reads one record written by [`encode_sink_record`] (or by `HostedSinkTask.writeRecord`,
/// for the errant record reporter). Errors: a truncated record, or an envelope the
/// JsonConverter cannot read.
pub fn decode_sink_record(r: &mut Reader, envelope: &JsonConverter) -> ConnectResult<SinkRecord> {
    let topic = r.str().map_err(codec_err)?;
    let kafka_partition = r.i32().map_err(codec_err)?;
    let kafka_offset = r.i64().map_err(codec_err)?;
    let has_ts = r.u8().map_err(codec_err)? == 1;
    let ts = r.i64().map_err(codec_err)?;
    let timestamp_type = match r.u8().map_err(codec_err)? {
        1 => TimestampType::CreateTime,
        2 => TimestampType::LogAppendTime,
        _ => TimestampType::NoTimestampType,
    };
    let key = crate::codec::envelope_data(envelope, &topic, r.bytes().map_err(codec_err)?)?;
    let value = crate::codec::envelope_data(envelope, &topic, r.bytes().map_err(codec_err)?)?;
    let nh = r.count().map_err(codec_err)?;
    let mut headers = Headers::new();
    for _ in 0..nh {
        let hk = r.str().map_err(codec_err)?;
        let hv = crate::codec::envelope_data(envelope, &topic, r.bytes().map_err(codec_err)?)?;
        headers.0.push(Header {
            key: hk,
            schema: hv.schema,
            value: hv.value,
        });
    }
    let original_topic = r.str().map_err(codec_err)?;
    let original_kafka_partition = r.i32().map_err(codec_err)?;
    let original_kafka_offset = r.i64().map_err(codec_err)?;
    Ok(SinkRecord {
        topic,
        kafka_partition,
        key_schema: key.schema,
        key: key.value,
        value_schema: value.schema,
        value: value.value,
        kafka_offset,
        timestamp: has_ts.then_some(ts),
        timestamp_type,
        headers,
        original_topic,
        original_kafka_partition,
        original_kafka_offset,
    })
}

impl SinkTask for JavaSinkTask {
    fn version(&self) -> String {
        self.hosted.version.clone()
    }

    fn initialize(&mut self, context: SinkTaskContext) {
        self.context = Some(context);
    }

    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let obj = self.hosted.create("newSinkTask", NEW_SINK)?;
        let config = self
            .context
            .as_ref()
            .map(|c| props_bytes(&c.config))
            .unwrap_or_else(|| props_bytes(props));
        self.reporter = self
            .context
            .as_ref()
            .and_then(|c| c.errant_record_reporter())
            .map(natives::register_reporter);
        let reporter_id = self.reporter.as_ref().map_or(0, |h| h.id);
        let requests = natives::register_sink_context(self.context.clone().unwrap_or_default());
        let requests_id = requests.id;
        self.requests = Some(requests);
        let tags = self
            .context
            .as_ref()
            .map(|c| codec::metric_tags(&c.plugin_metrics))
            .unwrap_or_else(|| codec::metric_tags(&Default::default()));
        self.hosted.jvm.call(|env, _| {
            let arr = env.byte_array_from_slice(&config)?;
            let tags = env.byte_array_from_slice(&tags)?;
            env.call_method(
                &obj,
                "initialize",
                "(JJ[B[B)V",
                &[
                    JValue::Long(reporter_id),
                    JValue::Long(requests_id),
                    JValue::Object(&arr),
                    JValue::Object(&tags),
                ],
            )?;
            Ok(())
        })?;
        self.hosted
            .call("start", "([B)V", Some(&props_bytes(props)))?;
        Ok(())
    }

    fn open(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        self.hosted
            .call("open", "([B)V", Some(&codec::write_partitions(partitions)))
            .map(|_| ())
    }

    fn close(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        if self.hosted.instance.is_none() {
            return Ok(());
        }
        self.hosted
            .call("close", "([B)V", Some(&codec::write_partitions(partitions)))
            .map(|_| ())
    }

    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()> {
        let batch = self.encode(records)?;
        self.hosted.call("put", "([B)V", Some(&batch)).map(|_| ())
    }

    fn flush(&mut self, offsets: &PartitionOffsets) -> ConnectResult<()> {
        self.hosted
            .call("flush", "([B)V", Some(&codec::write_offsets(offsets)))
            .map(|_| ())
    }

    fn pre_commit(&mut self, current: &PartitionOffsets) -> ConnectResult<PartitionOffsets> {
        let out = self
            .hosted
            .call("preCommit", "([B)[B", Some(&codec::write_offsets(current)))?
            .unwrap_or_default();
        codec::read_offsets(&out).map_err(codec_err)
    }

    fn stop(&mut self) -> ConnectResult<()> {
        if self.hosted.instance.is_none() {
            return Ok(());
        }
        self.hosted.call("stop", "()V", None).map(|_| ())
    }
}
