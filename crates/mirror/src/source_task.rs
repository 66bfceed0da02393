//! `MirrorSourceTask` natively (Apache's `org.apache.kafka.connect.mirror.MirrorSourceTask`):
//! replicates its share of the source cluster's partitions (`task.assigned.partitions`) into
//! the worker's cluster, and writes offset syncs for the checkpoint connector.
//!
//! - **Start**: one consumer on the source cluster (see [`crate::clients`], role
//!   `replication-consumer`), assigned the task's partitions; a partition with a committed
//!   source offset resumes at the record after it, one without starts where
//!   `auto.offset.reset` says (`earliest` unless set).
//! - **Poll** (async, on the worker's runtime): waits up to `consumer.poll.timeout.ms` (1,000 ms)
//!   for a record, then takes what else is already fetched, up to `max.poll.records` (500).
//!   Each record becomes a source record of the remote topic (`formatRemoteTopic`), same
//!   partition, key (optional bytes), value (bytes), timestamp and headers (bytes), with source
//!   partition `{topic, partition, cluster}` and source offset `{offset}` as Java writes them.
//!   A consumer error is logged and the poll returns nothing, as Java's `KafkaException` does.
//! - **Offset syncs** (`emit.offset-syncs.enabled`, default true): after Kafka acknowledged a
//!   record, its upstream and downstream offsets go to the [`OffsetSyncQueue`]; due syncs are
//!   sent to partition 0 of `mm2-offset-syncs.<alias>.internal` on the cluster
//!   `offset-syncs.topic.location` names (the target's alias on the source by default), at most
//!   ten in flight; each offset commit promotes the delayed ones.
//! - **Metrics**: each partition's `record-count`, `byte-count`, `record-age-ms`,
//!   `replication-latency-ms` and their rates and statistics, as Apache's task reports them
//!   with `metric.names.formats=new` ([`crate::metrics`]).
//! - **Stop**: the consumer is closed; syncs in flight get up to 5 s to be delivered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers as _, Message};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use tributary_api::data::Value;
use tributary_api::data::{Schema, SchemaRef};
use tributary_api::record::{Headers, RecordMetadata, SourceMap, SourceRecord};
use tributary_api::source::{AsyncSourceTask, SourceTaskContext, TaskFuture};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_runtime::config::clients::ClientKind;
use tributary_runtime::kafka_client::{oauth_token, set_initial_token, WorkerClientContext};

use crate::assignment;
use crate::clients::{MirrorClients, Side, SOURCE_CLUSTER_ALIAS_DEFAULT};
use crate::metrics::{MirrorSourceMetrics, PartitionStats};
use crate::offset_syncs::{OffsetSyncQueue, OFFSET_LAG_MAX_DEFAULT};
use crate::policy::ReplicationPolicy;
use crate::records::{self, OffsetSync};

/// The version the native MirrorMaker classes report: Tributary's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `consumer.poll.timeout.ms`'s default (ms).
pub const CONSUMER_POLL_TIMEOUT_MS_DEFAULT: u64 = 1_000;
/// Records one poll returns at most when the consumer's `max.poll.records` is not set (Java's
/// consumer default).
pub const MAX_POLL_RECORDS_DEFAULT: usize = 500;
/// How long a stopping task waits for its offset syncs in flight.
const SYNC_FLUSH_ON_STOP: Duration = Duration::from_secs(5);

/// Waits `interval` unless the runtime asks the task to stop first (through `context`);
/// whether the whole interval went by. The periodic tasks' (heartbeats, checkpoints) wait.
pub(crate) async fn wait_unless_stopped(
    context: Option<&SourceTaskContext>,
    interval: Duration,
) -> bool {
    match context {
        Some(c) => tokio::select! {
            () = tokio::time::sleep(interval) => true,
            () = c.stopped() => false,
        },
        None => {
            tokio::time::sleep(interval).await;
            true
        }
    }
}

/// A long setting of the task's configuration, or its default; errors name the key.
pub(crate) fn long_setting(props: &Props, key: &str, default: i64) -> ConnectResult<i64> {
    match props.get(key) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| {
            ConnectError::config(format!(
                "Invalid value {v} for configuration {key}: Not a number of type LONG"
            ))
        }),
    }
}

/// A boolean setting of the task's configuration, or its default; errors name the key.
pub(crate) fn bool_setting(props: &Props, key: &str, default: bool) -> ConnectResult<bool> {
    match props.get(key) {
        None => Ok(default),
        Some(v) => crate::config_bool(key, v).map_err(ConnectError::config),
    }
}

/// The offset-syncs topic a task writes and the connector creates, and which cluster holds it
/// (`offset-syncs.topic.location`: `source`, the default, or `target`): Java's
/// `offsetSyncsTopic()`, named after the other cluster's alias.
pub(crate) fn offset_syncs_topic(
    props: &Props,
    policy: &ReplicationPolicy,
) -> ConnectResult<(Side, String)> {
    let clients = MirrorClients::new(props);
    let location = props
        .get("offset-syncs.topic.location")
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| SOURCE_CLUSTER_ALIAS_DEFAULT.to_string());
    // `ValidString.in("source", "target")`: case matters.
    match location.as_str() {
        "source" => Ok((Side::Source, policy.offset_syncs_topic(&clients.target_alias()))),
        "target" => Ok((Side::Target, policy.offset_syncs_topic(&clients.source_alias()))),
        _ => Err(ConnectError::config(format!(
            "Invalid value {location} for configuration offset-syncs.topic.location: String must be one of: source, target"
        ))),
    }
}

/// The producer context of the offset syncs: each delivery (or failure) frees a place among the
/// syncs in flight; OAUTHBEARER tokens as the runtime's clients get them.
struct SyncDeliveries {
    queue: Arc<Mutex<OffsetSyncQueue>>,
}

impl ClientContext for SyncDeliveries {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        oauth_token(oauthbearer_config)
    }
}

impl ProducerContext for SyncDeliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _opaque: ()) {
        if let Err((e, _)) = result {
            tracing::error!("Failure sending offset sync: {e}");
        }
        lock(&self.queue).completed();
    }
}

fn lock(queue: &Mutex<OffsetSyncQueue>) -> std::sync::MutexGuard<'_, OffsetSyncQueue> {
    queue.lock().unwrap_or_else(|e| e.into_inner())
}

/// The task's offset-sync writer (Java's `OffsetSyncWriter`).
struct OffsetSyncWriter {
    queue: Arc<Mutex<OffsetSyncQueue>>,
    producer: ThreadedProducer<SyncDeliveries>,
    topic: String,
}

impl OffsetSyncWriter {
    fn new(props: &Props, policy: &ReplicationPolicy) -> ConnectResult<OffsetSyncWriter> {
        let max_lag = long_setting(props, "offset.lag.max", OFFSET_LAG_MAX_DEFAULT)?;
        let (side, topic) = offset_syncs_topic(props, policy)?;
        let role = match side {
            Side::Source => "offset-syncs-source-producer",
            Side::Target => "offset-syncs-target-producer",
        };
        let config = MirrorClients::new(props).client(
            side,
            ClientKind::Producer,
            role,
            // Kept in order across retries, as Java's default (idempotent) producer keeps them.
            &[
                ("linger.ms", "0".to_string()),
                ("enable.idempotence", "true".to_string()),
            ],
        )?;
        let queue = Arc::new(Mutex::new(OffsetSyncQueue::new(max_lag)));
        let producer: ThreadedProducer<SyncDeliveries> = config
            .create_with_context(SyncDeliveries {
                queue: Arc::clone(&queue),
            })
            .map_err(|e| {
                ConnectError::connect(format!("Failed to create the offset-syncs producer: {e}"))
            })?;
        set_initial_token(producer.client(), &config)
            .map_err(|e| ConnectError::connect(format!("Offset-syncs producer: {e}")))?;
        Ok(OffsetSyncWriter {
            queue,
            producer,
            topic,
        })
    }

    /// Sends what may be sent now (`firePendingOffsetSyncs`); never blocks.
    fn fire_pending(&self) {
        let sendable = lock(&self.queue).take_sendable();
        for sync in sendable {
            if let Err(e) = self.send(&sync) {
                tracing::error!("Failure sending offset sync: {e}");
                lock(&self.queue).completed();
            }
        }
    }

    fn send(&self, sync: &OffsetSync) -> Result<(), String> {
        let key = sync.key()?;
        let value = sync.value();
        self.producer
            .send(
                BaseRecord::<[u8], [u8]>::to(&self.topic)
                    .partition(0)
                    .key(&key[..])
                    .payload(&value[..]),
            )
            .map_err(|(e, _)| e.to_string())
    }
}

/// What a started task holds.
struct Running {
    consumer: StreamConsumer<WorkerClientContext>,
    converter: Converter,
    poll_timeout: Duration,
    max_poll_records: usize,
    syncs: Option<OffsetSyncWriter>,
}

/// Turns consumed records into source records.
struct Converter {
    policy: ReplicationPolicy,
    source_alias: String,
    /// Per source topic (looked up by `&str`, no allocation per record): its remote name and
    /// its partitions' shared state.
    topics: HashMap<String, TopicEntry>,
    /// The partitions' state by the address of their source partition map (the `Arc` every
    /// record of the partition shares, kept alive here), for `commit_record`.
    by_source_partition: HashMap<usize, Arc<PartitionEntry>>,
    /// MirrorMaker's per-partition metrics (`record-count`, `replication-latency-ms`, …),
    /// whose partitions' statistics the entries hold.
    metrics: MirrorSourceMetrics,
}

/// A source topic's remote name and partitions.
struct TopicEntry {
    remote: String,
    partitions: HashMap<i32, Arc<PartitionEntry>>,
}

/// What the records of one source partition share: their source partition map, the key of
/// their offset syncs, and their metrics.
struct PartitionEntry {
    source_partition: Arc<SourceMap>,
    /// (source topic, partition): the offset syncs' key.
    sync_key: (String, i32),
    /// The remote partition's statistics (none when the task has no metrics for it).
    stats: Option<PartitionStats>,
}

impl Running {
    fn start(props: &Props, context: Option<&SourceTaskContext>) -> ConnectResult<Running> {
        let policy = ReplicationPolicy::from_props(props).map_err(ConnectError::config)?;
        let partitions = assignment::task_partitions(props).map_err(ConnectError::config)?;
        let clients = MirrorClients::new(props);
        let source_alias = clients.source_alias();
        let poll_timeout = long_setting(
            props,
            "consumer.poll.timeout.ms",
            CONSUMER_POLL_TIMEOUT_MS_DEFAULT as i64,
        )?;
        let java =
            clients.java_settings(Side::Source, ClientKind::Consumer, "replication-consumer");
        let max_poll_records = match java.get("max.poll.records") {
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    ConnectError::config(format!(
                    "Invalid value {v} for configuration max.poll.records: Value must be at least 1"
                ))
                })?,
            None => MAX_POLL_RECORDS_DEFAULT,
        };
        let syncs = if bool_setting(props, "emit.offset-syncs.enabled", true)? {
            Some(OffsetSyncWriter::new(props, &policy)?)
        } else {
            None
        };
        // librdkafka's defaults that differ from Java's consumer: `read_uncommitted` (Java's
        // default; librdkafka reads committed only), and the runtime's fetch tuning (issue #34:
        // a 10 ms fetch backoff instead of 1 s, 4 MiB prefetched instead of 64 MiB), with at
        // most 10,000 records prefetched a partition instead of 100,000 (a task behind a
        // backlog of small records held them all: peak RSS 176 MiB → 115 MiB in `scripts/bench
        // mirror`, records/s within the run-to-run spread). A
        // `group.id` is needed by librdkafka's `assign` (Java's group-less consumer needs
        // none); without the user's, a placeholder that is never committed to nor read.
        let user_group = java.get("group.id").cloned();
        let mut base = vec![
            ("isolation.level", "read_uncommitted".to_string()),
            ("fetch.queue.backoff.ms", "10".to_string()),
            ("queued.max.messages.kbytes", "4096".to_string()),
            ("queued.min.messages", "10000".to_string()),
        ];
        if user_group.is_none() {
            base.push(("group.id", format!("{}|uncommitted", java["client.id"])));
        }
        let reset = java
            .get("auto.offset.reset")
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_else(|| "earliest".into());
        let config = clients.client(
            Side::Source,
            ClientKind::Consumer,
            "replication-consumer",
            &base,
        )?;
        let consumer: StreamConsumer<WorkerClientContext> = config
            .create_with_context(WorkerClientContext)
            .map_err(|e| {
                ConnectError::connect(format!("Failed to create the source consumer: {e}"))
            })?;
        set_initial_token(consumer.client(), &config)
            .map_err(|e| ConnectError::connect(format!("Source consumer: {e}")))?;
        let mut tpl = TopicPartitionList::new();
        let mut uncommitted = 0;
        for (topic, partition) in &partitions {
            let wrapped = records::source_partition(topic, *partition, &source_alias);
            let committed = match context {
                Some(c) => c.offset_reader.offset(&wrapped)?,
                None => None,
            };
            // MirrorUtils.unwrapOffset: a missing or null offset is -1, uncommitted.
            let offset = committed
                .as_ref()
                .and_then(|o| o.get("offset"))
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(-1);
            let position = if offset < 0 {
                uncommitted += 1;
                // Where Java's consumer starts without a seek: the group's committed offset
                // when the user gave a group, else `auto.offset.reset`.
                match (&user_group, reset.as_str()) {
                    (None, "earliest") => Offset::Beginning,
                    (None, "latest") => Offset::End,
                    _ => Offset::Invalid,
                }
            } else {
                Offset::Offset(offset + 1)
            };
            tpl.add_partition_offset(topic, *partition, position)
                .map_err(|e| ConnectError::connect(format!("{topic}-{partition}: {e}")))?;
        }
        consumer
            .assign(&tpl)
            .map_err(|e| ConnectError::connect(format!("Failed to assign partitions: {e}")))?;
        tracing::info!(
            "Starting with {uncommitted} previously uncommitted partitions; replicating {} topic-partitions {}->{}",
            partitions.len(),
            source_alias,
            clients.target_alias()
        );
        let remote: Vec<(String, i32)> = partitions
            .iter()
            .map(|(t, p)| (policy.format_remote_topic(&source_alias, t), *p))
            .collect();
        crate::metrics::note_names_formats(props);
        let metrics = match context {
            Some(c) => MirrorSourceMetrics::new(
                &c.plugin_metrics,
                &source_alias,
                &clients.target_alias(),
                &remote,
            ),
            None => MirrorSourceMetrics::default(),
        };
        Ok(Running {
            consumer,
            converter: Converter {
                policy,
                source_alias,
                topics: HashMap::new(),
                by_source_partition: HashMap::new(),
                metrics,
            },
            poll_timeout: Duration::from_millis(poll_timeout.max(0) as u64),
            max_poll_records,
            syncs,
        })
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Converter {
    /// The shared state of `topic`/`partition`, built at its first record.
    fn entry(&mut self, topic: &str, partition: i32) -> (&str, &Arc<PartitionEntry>) {
        if !self.topics.contains_key(topic) {
            let remote = self.policy.format_remote_topic(&self.source_alias, topic);
            self.topics.insert(
                topic.to_string(),
                TopicEntry {
                    remote,
                    partitions: HashMap::new(),
                },
            );
        }
        let t = self.topics.get_mut(topic).expect("inserted above");
        let entry = t.partitions.entry(partition).or_insert_with(|| {
            let e = Arc::new(PartitionEntry {
                source_partition: Arc::new(records::source_partition(
                    topic,
                    partition,
                    &self.source_alias,
                )),
                sync_key: (topic.to_string(), partition),
                stats: self.metrics.partition(&t.remote, partition),
            });
            self.by_source_partition
                .insert(Arc::as_ptr(&e.source_partition) as usize, Arc::clone(&e));
            e
        });
        (&t.remote, entry)
    }

    /// The source record of one consumed record (`convertRecord`), counting its age at
    /// `now_ms` and its size in the partition's metrics (Java's `recordAge`, `recordBytes`).
    fn convert(&mut self, m: &impl Message, now_ms: i64) -> SourceRecord {
        let partition = m.partition();
        let (remote, entry) = self.entry(m.topic(), partition);
        if let Some(stats) = &entry.stats {
            let age = m.timestamp().to_millis().map_or(0, |t| now_ms - t);
            stats.polled(age, m.payload().map_or(0, <[u8]>::len), now_ms);
        }
        let source_partition = Arc::clone(&entry.source_partition);
        let topic = remote.to_string();
        let bytes = |b: Option<&[u8]>| b.map_or(Value::Null, |b| Value::Bytes(b.to_vec()));
        let mut headers = Headers::new();
        if let Some(hs) = m.headers() {
            for h in hs.iter() {
                headers.add(h.key, Some(Schema::bytes_schema()), bytes(h.value));
            }
        }
        SourceRecord {
            source_partition,
            source_offset: records::source_offset(m.offset()),
            topic,
            kafka_partition: Some(partition),
            key_schema: Some(optional_bytes()),
            key: bytes(m.key()),
            value_schema: Some(Schema::bytes_schema()),
            value: bytes(m.payload()),
            timestamp: m.timestamp().to_millis(),
            headers,
        }
    }

    /// The state of the partition `record` came from: found by its shared source partition
    /// map, else (a record rebuilt elsewhere) by the map's `topic` and `partition`.
    fn entry_of(&self, record: &SourceRecord) -> Option<Arc<PartitionEntry>> {
        let ptr = Arc::as_ptr(&record.source_partition) as usize;
        if let Some(e) = self.by_source_partition.get(&ptr) {
            return Some(Arc::clone(e));
        }
        let topic = record.source_partition.get("topic")?.as_str()?;
        let partition = record
            .source_partition
            .get("partition")?
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())?;
        self.topics.get(topic)?.partitions.get(&partition).cloned()
    }
}

fn optional_bytes() -> SchemaRef {
    Schema::optional_bytes_schema()
}

/// MirrorMaker 2's source task, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorSourceTask {
    context: Option<SourceTaskContext>,
    running: Option<Running>,
}

impl MirrorSourceTask {
    /// A task that has not been started.
    pub fn new() -> MirrorSourceTask {
        MirrorSourceTask::default()
    }
}

impl AsyncSourceTask for MirrorSourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Creates the clients and assigns the partitions. Errors: the task's settings (named),
    /// or a client that cannot be created. librdkafka connects in the background, so nothing
    /// here waits for a broker.
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(async move {
            self.running = Some(Running::start(props, self.context.as_ref())?);
            Ok(())
        })
    }

    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            let Some(running) = self.running.as_mut() else {
                return Ok(Vec::new());
            };
            let first = {
                let recv = tokio::time::timeout(running.poll_timeout, running.consumer.recv());
                match &self.context {
                    Some(c) => tokio::select! {
                        r = recv => r,
                        () = c.stopped() => return Ok(Vec::new()),
                    },
                    None => recv.await,
                }
            };
            let mut out = Vec::new();
            match first {
                Err(_) => return Ok(out),
                Ok(Err(e)) => {
                    tracing::warn!("Failure during poll: {e}");
                    return Ok(out);
                }
                Ok(Ok(m)) => {
                    out.push(running.converter.convert(&m, now_ms()));
                }
            }
            // What the consumer already fetched, without waiting (one clock reading for the
            // batch's metrics: it takes microseconds).
            let now = now_ms();
            while out.len() < running.max_poll_records {
                match running.consumer.recv().now_or_never() {
                    Some(Ok(m)) => out.push(running.converter.convert(&m, now)),
                    Some(Err(e)) => {
                        tracing::warn!("Failure during poll: {e}");
                        break;
                    }
                    None => break,
                }
            }
            Ok(out)
        })
    }

    /// Promotes the delayed offset syncs and sends what may be sent (Java's `commit`).
    fn commit(&mut self) -> TaskFuture<'_, ()> {
        if let Some(syncs) = self.running.as_ref().and_then(|r| r.syncs.as_ref()) {
            lock(&syncs.queue).promote_delayed();
            syncs.fire_pending();
        }
        Box::pin(std::future::ready(Ok(())))
    }

    /// Always: the runtime asks before `start`, when the task does not know yet whether it
    /// writes offset syncs (without them, `commit_record` does nothing).
    fn wants_commit_record(&self) -> bool {
        true
    }
    /// It reads the record's source partition and offset, topic and timestamp only.
    fn commit_record_reads_payload(&self) -> bool {
        false
    }

    /// Queues the record's offset sync (`maybeQueueOffsetSyncs`) and sends what is due. A
    /// record without metadata (dropped by a transformation) or without its source offset
    /// has nothing to sync.
    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        let Some(running) = self.running.as_ref() else {
            return Ok(());
        };
        let Some(metadata) = metadata else {
            tracing::debug!(
                "No RecordMetadata (source record was probably filtered out during transformation) -- can't sync offsets for {}.",
                record.topic
            );
            return Ok(());
        };
        if metadata.offset < 0 {
            tracing::error!(
                "RecordMetadata has no offset -- can't sync offsets for {}.",
                record.topic
            );
            return Ok(());
        }
        let Some(entry) = running.converter.entry_of(record) else {
            return Ok(());
        };
        if let Some(stats) = &entry.stats {
            let now = now_ms();
            stats.acknowledged(record.timestamp.map_or(0, |t| now - t), now);
        }
        let Some(syncs) = running.syncs.as_ref() else {
            return Ok(());
        };
        let upstream = record
            .source_offset
            .get("offset")
            .and_then(serde_json::Value::as_i64);
        if let Some(upstream) = upstream {
            lock(&syncs.queue).record(&entry.sync_key, upstream, metadata.offset);
            syncs.fire_pending();
        }
        Ok(())
    }

    fn stop(&mut self) -> TaskFuture<'_, ()> {
        let running = self.running.take();
        Box::pin(async move {
            if let Some(running) = running {
                // Closing the consumer and flushing the producer block: off the runtime.
                tokio::task::spawn_blocking(move || {
                    let Running {
                        consumer, syncs, ..
                    } = running;
                    drop(consumer);
                    if let Some(syncs) = syncs {
                        if let Err(e) = syncs.producer.flush(SYNC_FLUSH_ON_STOP) {
                            tracing::warn!(
                                "Offset syncs not delivered before the task stopped: {e}"
                            );
                        }
                    }
                })
                .await
                .map_err(|e| ConnectError::connect(format!("Stopping the task: {e}")))?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::message::{Header, OwnedHeaders, OwnedMessage, Timestamp};

    fn converter(policy: ReplicationPolicy) -> Converter {
        Converter {
            policy,
            source_alias: "A".into(),
            topics: HashMap::new(),
            by_source_partition: HashMap::new(),
            metrics: MirrorSourceMetrics::default(),
        }
    }

    #[test]
    fn a_consumed_record_becomes_the_source_record_java_builds() {
        let mut c = converter(ReplicationPolicy::from_props(&Props::new()).unwrap());
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "trace",
                value: Some(&b"t1"[..]),
            })
            .insert(Header::<&[u8]> {
                key: "none",
                value: None,
            });
        let m = OwnedMessage::new(
            Some(b"v".to_vec()),
            None,
            "orders".into(),
            Timestamp::CreateTime(1_700_000_000_123),
            3,
            42,
            Some(headers),
        );
        let r = c.convert(&m, 0);
        assert_eq!(r.topic, "A.orders");
        assert_eq!(r.kafka_partition, Some(3));
        assert_eq!(
            *r.source_partition,
            records::source_partition("orders", 3, "A"),
            "{{topic, partition, cluster}}"
        );
        assert_eq!(r.source_offset, records::source_offset(42));
        assert_eq!(r.key, Value::Null, "no key");
        assert!(
            r.key_schema.as_ref().unwrap().optional,
            "Schema.OPTIONAL_BYTES_SCHEMA"
        );
        assert_eq!(r.value, Value::Bytes(b"v".to_vec()));
        assert!(
            !r.value_schema.as_ref().unwrap().optional,
            "Schema.BYTES_SCHEMA"
        );
        assert_eq!(r.timestamp, Some(1_700_000_000_123));
        let h: Vec<(String, Value)> = r
            .headers
            .iter()
            .map(|h| (h.key.clone(), h.value.clone()))
            .collect();
        assert_eq!(
            h,
            [
                ("trace".to_string(), Value::Bytes(b"t1".to_vec())),
                ("none".to_string(), Value::Null)
            ]
        );
        // The partition map is built once and shared by the partition's records.
        let again = c.convert(&m, 0);
        assert!(Arc::ptr_eq(&r.source_partition, &again.source_partition));
    }

    /// `commit_record` finds a record's partition (its offset syncs' key) by the map the
    /// partition's records share, or by the map's fields when a record carries a copy.
    #[test]
    fn an_acknowledged_record_finds_its_partition() {
        let mut c = converter(ReplicationPolicy::from_props(&Props::new()).unwrap());
        let m = |topic: &str, partition: i32| {
            OwnedMessage::new(
                None,
                None,
                topic.into(),
                Timestamp::NotAvailable,
                partition,
                7,
                None,
            )
        };
        let a = c.convert(&m("orders", 1), 0);
        let b = c.convert(&m("orders", 2), 0);
        let other = c.convert(&m("payments", 1), 0);
        for (r, key) in [
            (&a, ("orders", 1)),
            (&b, ("orders", 2)),
            (&other, ("payments", 1)),
        ] {
            let e = c.entry_of(r).expect("known partition");
            assert_eq!((e.sync_key.0.as_str(), e.sync_key.1), key);
        }
        let mut copied = a.clone();
        copied.source_partition = Arc::new((*a.source_partition).clone());
        assert_eq!(
            c.entry_of(&copied).unwrap().sync_key,
            ("orders".to_string(), 1)
        );
        copied.source_partition = Arc::new(records::source_partition("orders", 9, "A"));
        assert!(
            c.entry_of(&copied).is_none(),
            "a partition the task never polled"
        );
    }

    #[test]
    fn the_identity_policy_keeps_the_topic_name() {
        let policy = ReplicationPolicy::from_props(
            &[(
                "replication.policy.class".to_string(),
                crate::policy::IDENTITY_POLICY_CLASS.to_string(),
            )]
            .into_iter()
            .collect(),
        )
        .unwrap();
        let m = OwnedMessage::new(
            None,
            Some(b"k".to_vec()),
            "orders".into(),
            Timestamp::NotAvailable,
            0,
            0,
            None,
        );
        let r = converter(policy).convert(&m, 0);
        assert_eq!(r.topic, "orders");
        assert_eq!(r.key, Value::Bytes(b"k".to_vec()));
        assert_eq!(r.value, Value::Null, "a tombstone stays one");
        assert_eq!(r.timestamp, None);
    }

    #[test]
    fn the_offset_syncs_topic_is_named_after_the_other_cluster() {
        let policy = ReplicationPolicy::from_props(&Props::new()).unwrap();
        let props = |location: Option<&str>| -> Props {
            let mut p: Props = [
                ("source.cluster.alias".to_string(), "A".to_string()),
                ("target.cluster.alias".to_string(), "B".to_string()),
            ]
            .into_iter()
            .collect();
            if let Some(l) = location {
                p.insert("offset-syncs.topic.location".into(), l.into());
            }
            p
        };
        assert_eq!(
            offset_syncs_topic(&props(None), &policy).unwrap(),
            (Side::Source, "mm2-offset-syncs.B.internal".to_string())
        );
        assert_eq!(
            offset_syncs_topic(&props(Some("target")), &policy).unwrap(),
            (Side::Target, "mm2-offset-syncs.A.internal".to_string())
        );
        for bad in ["middle", "SOURCE"] {
            assert_eq!(
                offset_syncs_topic(&props(Some(bad)), &policy)
                    .unwrap_err()
                    .to_string(),
                format!("Invalid value {bad} for configuration offset-syncs.topic.location: String must be one of: source, target"),
                "case matters, as in Java's ValidString"
            );
        }
    }
}
