//! `MirrorCheckpointTask` natively (Apache's `org.apache.kafka.connect.mirror.MirrorCheckpointTask`):
//! for its consumer groups (`task.assigned.groups`), translates their committed offsets on the
//! source into offsets of the target's topics and writes them as checkpoints to partition 0 of
//! `<source>.checkpoints.internal` on the target, where Java's `RemoteClusterUtils` and
//! `translateOffsets` read them; with `sync.group.offsets.enabled`, commits them for the groups
//! on the target too (KIP-545).
//!
//! - **Start** returns at once; a thread of the task's own then reads the checkpoints topic
//!   to its end (the task's groups' last checkpoints, so that a restarted task neither repeats
//!   nor rewinds them; if that read fails, the offset-sync store keeps only each partition's
//!   latest sync until its own initial read ends, as Java's `CheckpointStore` and
//!   `OffsetSyncStore.start(!checkpointsReadOk)`), then reads partition 0 of the offset-syncs
//!   topic (`offset-syncs.topic.location`'s cluster) to its end, after which checkpoints start,
//!   and keeps reading it for new syncs until the task stops. The offset-syncs topic is waited
//!   for until it exists; the checkpoints topic 30 s at most, then the task goes on without its
//!   previous checkpoints (as when it may not read them). The consumers are made at start: a
//!   setting they refuse fails the task.
//! - **Poll** (async): waits `emit.checkpoints.interval.seconds` (60 s, cut short by a stop),
//!   then, once the stores are read, lists each group's committed offsets on the source and
//!   returns the checkpoints [`CheckpointPlanner`] decides on: key and value as Java writes them
//!   (`Schema.BYTES_SCHEMA`), source partition `{group, topic, partition}`, offset `{offset: 0}`,
//!   record timestamp the poll's time. A group whose offsets cannot be listed is logged and
//!   skipped, as Java does.
//! - **Group offset sync** (`sync.group.offsets.enabled`, every
//!   `sync.group.offsets.interval.seconds`, 60 s): a job on the worker's runtime looks up each
//!   group on the target (DescribeGroups), takes the committed offsets of those without
//!   members there (`Empty`, or `Dead`: unknown, or of the new consumer protocol), and commits
//!   what [`CheckpointPlanner::offsets_to_sync`] gives, never moving one back; a group whose
//!   state or offsets cannot be read waits for the next round; a group with members on the
//!   target refuses the commit, which is logged as Java logs it.
//! - **Metrics**: `checkpoint-latency-ms` and its statistics per group and partition, from
//!   the poll that made a checkpoint to its acknowledgement ([`crate::metrics`]).
//! - **Stop**: the reading thread and the sync job end.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};
use tributary_api::data::{Schema, Value};
use tributary_api::record::SourceRecord;
use tributary_api::source::{AsyncSourceTask, SourceTaskContext, TaskFuture};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_group::client::group_offsets::offset_codes;
use tributary_group::client::GroupError;
use tributary_runtime::config::clients::ClientKind;
use tributary_runtime::kafka_client::{set_initial_token, WorkerClientContext};

use crate::checkpoint_connector::{CheckpointSettings, TASK_CONSUMER_GROUPS};
use crate::checkpoints::CheckpointPlanner;
use crate::clients::{MirrorClients, Side};
use crate::consumer_groups::GroupAdmin;
use crate::metrics::MirrorCheckpointMetrics;
use crate::offset_sync_store::OffsetSyncStore;
use crate::records::{self, Checkpoint, OffsetSync};
use crate::source_connector::StopFlag;
use crate::source_task::{long_setting, CONSUMER_POLL_TIMEOUT_MS_DEFAULT, VERSION};

/// What the reading thread and the task share.
struct Stores {
    planner: CheckpointPlanner,
    syncs: OffsetSyncStore,
    /// Both initial reads ended: checkpoints may be planned.
    ready: bool,
}

/// MirrorMaker 2's checkpoint task, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorCheckpointTask {
    context: Option<SourceTaskContext>,
    running: Option<Running>,
}

struct Running {
    groups: Vec<String>,
    topic: String,
    interval: Duration,
    source: Arc<GroupAdmin>,
    stores: Arc<Mutex<Stores>>,
    reader: Arc<StopFlag>,
    syncer: Option<tokio::task::JoinHandle<()>>,
    /// `checkpoint-latency-ms` and its statistics, per group and partition.
    metrics: Option<MirrorCheckpointMetrics>,
}

impl MirrorCheckpointTask {
    /// A task that has not been started.
    pub fn new() -> MirrorCheckpointTask {
        MirrorCheckpointTask::default()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A consumer of partition 0 of `topic` on `side`, from its beginning (client role `role`,
/// Java's; a placeholder `group.id` librdkafka's `assign` needs, never committed to).
fn partition_zero_reader(
    props: &Props,
    side: Side,
    role: &str,
    topic: &str,
) -> ConnectResult<BaseConsumer<WorkerClientContext>> {
    let clients = MirrorClients::new(props);
    let java = clients.java_settings(side, ClientKind::Consumer, role);
    let base = vec![
        (
            "group.id",
            format!(
                "{}|uncommitted",
                java.get("client.id").cloned().unwrap_or_default()
            ),
        ),
        ("enable.auto.commit", "false".to_string()),
    ];
    let config = clients.client(side, ClientKind::Consumer, role, &base)?;
    let consumer: BaseConsumer<WorkerClientContext> = config
        .create_with_context(WorkerClientContext)
        .map_err(|e| ConnectError::connect(format!("Failed to create the {role}: {e}")))?;
    set_initial_token(consumer.client(), &config)
        .map_err(|e| ConnectError::connect(format!("{role}: {e}")))?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .map_err(|e| ConnectError::connect(e.to_string()))?;
    consumer
        .assign(&tpl)
        .map_err(|e| ConnectError::connect(format!("{role}: {e}")))?;
    Ok(consumer)
}

/// What a read hands each record: its key, value and offset.
type OnRecord<'a> = dyn FnMut(&[u8], &[u8], i64) + 'a;

/// How long the checkpoints topic may take to be read at start before the task goes on
/// without its previous checkpoints (Java's `KafkaBasedLog` gives its topic 30 s to appear).
const CHECKPOINTS_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether a consumer error means the topic cannot be read at all (rather than a broker
/// that is away for a while, which librdkafka reports and retries on its own).
fn refused(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::TopicAuthorizationFailed
                | RDKafkaErrorCode::GroupAuthorizationFailed
                | RDKafkaErrorCode::ClusterAuthorizationFailed
                | RDKafkaErrorCode::SaslAuthenticationFailed
        )
    )
}

/// Reads partition 0 of `topic` through `consumer` from its log start to its end as of now
/// (the high watermark), handing each record's key and value to `each`. A topic that does
/// not exist yet is waited for, until `deadline` if given. `Ok(false)` when stopped first.
/// Errors: refused (authorization), or still not read at `deadline`.
fn read_to_end(
    consumer: &BaseConsumer<WorkerClientContext>,
    topic: &str,
    poll: Duration,
    stop: &StopFlag,
    deadline: Option<Instant>,
    each: &mut OnRecord<'_>,
) -> ConnectResult<bool> {
    let late = |what: &dyn std::fmt::Display| -> ConnectResult<()> {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ConnectError::connect(format!(
                "Could not read {topic} to its end in time: {what}"
            )));
        }
        Ok(())
    };
    let (low, high) = loop {
        match consumer.fetch_watermarks(topic, 0, poll.max(Duration::from_secs(1))) {
            Ok(w) => break w,
            Err(e) if refused(&e) => {
                return Err(ConnectError::connect(format!(
                    "Could not read {topic}: {e}"
                )))
            }
            Err(e) => {
                tracing::debug!("Waiting for topic {topic}: {e}");
                late(&e)?;
                if stop.wait(poll) {
                    return Ok(false);
                }
            }
        }
    };
    let mut next = low.max(0);
    while next < high {
        if stop.wait(Duration::ZERO) {
            return Ok(false);
        }
        match consumer.poll(poll) {
            Some(Ok(m)) => {
                next = m.offset() + 1;
                each(
                    m.key().unwrap_or_default(),
                    m.payload().unwrap_or_default(),
                    m.offset(),
                );
            }
            Some(Err(e)) if refused(&e) => {
                return Err(ConnectError::connect(format!(
                    "Could not read {topic}: {e}"
                )))
            }
            Some(Err(e)) => {
                tracing::debug!("Reading {topic}: {e}");
                late(&e)?;
            }
            None => {
                // Past records a compaction removed at the end? The position says.
                if let Ok(position) = consumer.position() {
                    if let Some(Offset::Offset(p)) =
                        position.find_partition(topic, 0).map(|e| e.offset())
                    {
                        next = next.max(p);
                    }
                }
                late(&"no record before the end offset")?;
            }
        }
    }
    Ok(true)
}

/// The consumers the reading thread reads with, made at start so that their settings fail
/// the task.
struct Readers {
    checkpoints: BaseConsumer<WorkerClientContext>,
    syncs: BaseConsumer<WorkerClientContext>,
    syncs_topic: String,
}

/// The reading thread: the checkpoints topic to its end, then the offset syncs to their end
/// (checkpoints start), then new offset syncs until stopped.
fn read_stores(
    readers: Readers,
    poll: Duration,
    checkpoints_topic: String,
    groups: BTreeSet<String>,
    stores: Arc<Mutex<Stores>>,
    stop: Arc<StopFlag>,
) {
    // The checkpoints already written for the task's groups.
    let mut previous = Vec::new();
    let checkpoints_read = read_to_end(
        &readers.checkpoints,
        &checkpoints_topic,
        poll,
        &stop,
        Some(Instant::now() + CHECKPOINTS_READ_TIMEOUT),
        &mut |key, value, offset| match Checkpoint::decode(key, value) {
            Ok(c) if groups.contains(&c.group) => previous.push(c),
            Ok(_) => {}
            Err(e) => tracing::warn!("Ignored invalid checkpoint record at offset {offset}: {e}"),
        },
    );
    drop(readers.checkpoints);
    let loaded = match checkpoints_read {
        Ok(true) => true,
        Ok(false) => return,
        Err(e) => {
            tracing::warn!("Exception encountered loading checkpoints topic {checkpoints_topic} - this may degrade offset translation as only checkpoints for offsets which were mirrored after the task started will be emitted: {e}");
            previous.clear();
            false
        }
    };
    {
        let mut s = stores.lock().unwrap_or_else(|e| e.into_inner());
        for c in previous {
            s.planner.remember(c);
        }
        s.syncs = OffsetSyncStore::new(!loaded);
    }
    let topic = readers.syncs_topic;
    let consumer = readers.syncs;
    let mut handle = |key: &[u8], value: &[u8], offset: i64| match OffsetSync::decode(key, value) {
        Ok(sync) => {
            tracing::trace!("offset sync at {offset}: {sync:?}");
            stores
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .syncs
                .handle(&sync)
        }
        Err(e) => tracing::warn!("Ignored invalid offset sync at offset {offset}: {e}"),
    };
    loop {
        match read_to_end(&consumer, &topic, poll, &stop, None, &mut handle) {
            Ok(true) => break,
            Ok(false) => return,
            Err(e) => {
                tracing::warn!("Reading the offset syncs again after: {e}");
                if stop.wait(poll) {
                    return;
                }
            }
        }
    }
    {
        let mut s = stores.lock().unwrap_or_else(|e| e.into_inner());
        s.syncs.read_to_end();
        s.ready = true;
    }
    tracing::debug!("Offset syncs of {topic} read; checkpoints start");
    while !stop.wait(Duration::ZERO) {
        match consumer.poll(poll) {
            Some(Ok(m)) => handle(
                m.key().unwrap_or_default(),
                m.payload().unwrap_or_default(),
                m.offset(),
            ),
            Some(Err(e)) => {
                tracing::debug!("Reading offset syncs from {topic}: {e}");
                if refused(&e) {
                    tracing::warn!("Offset syncs cannot be read from {topic}: {e}");
                    stop.wait(poll);
                }
            }
            None => {}
        }
    }
}

/// One round of the group offset sync (`refreshIdleConsumerGroupOffset`, then
/// `syncGroupOffset`). A group whose state or offsets on the target cannot be read now is left
/// for the next round; every group not known to have members there (`Empty`, or `Dead`: not
/// there, or of the new consumer protocol, which DescribeGroups does not describe) has its
/// target offsets read, so that none is moved back.
async fn sync_group_offsets(
    target: &GroupAdmin,
    groups: &[String],
    stores: &Mutex<Stores>,
    target_alias: &str,
) {
    let mut idle: HashMap<String, HashMap<(String, i32), i64>> = HashMap::new();
    let mut unknown: BTreeSet<&str> = BTreeSet::new();
    for group in groups {
        let state = match target.state(group).await {
            Ok(state) => state,
            Err(e) => {
                tracing::error!(
                    "Error querying for consumer group {group} on cluster {target_alias}: {e}"
                );
                unknown.insert(group);
                continue;
            }
        };
        if state != "Empty" && state != "Dead" {
            // Members consume there: the commit below is refused, as Java's is.
            continue;
        }
        match target.committed_offsets(group).await {
            Ok(offsets) => {
                idle.insert(
                    group.clone(),
                    offsets
                        .into_iter()
                        .map(|o| ((o.topic, o.partition), o.offset))
                        .collect(),
                );
            }
            Err(e) => {
                tracing::error!(
                    "Error querying for consumer group {group} on cluster {target_alias}: {e}"
                );
                unknown.insert(group);
            }
        }
    }
    let to_sync = stores
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .planner
        .offsets_to_sync(&idle);
    for (group, offsets) in to_sync {
        if unknown.contains(group.as_str()) || !groups.contains(&group) {
            continue;
        }
        match target.alter_offsets(&group, &offsets).await {
            Ok(()) => tracing::trace!(
                "Sync-ed {} offsets for consumer group {group}.",
                offsets.len()
            ),
            Err(GroupError::Broker { code, .. }) if code == offset_codes::UNKNOWN_MEMBER_ID => {
                tracing::warn!("Unable to sync offsets for consumer group {group}. This is likely caused by consumers currently using this group in the target cluster.")
            }
            Err(e) => tracing::error!("Unable to sync offsets for consumer group {group}: {e}"),
        }
    }
}

impl AsyncSourceTask for MirrorCheckpointTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(async move {
            let settings = CheckpointSettings::parse(props)?;
            let groups: Vec<String> = match props.get(TASK_CONSUMER_GROUPS) {
                Some(v) => {
                    crate::config_list(TASK_CONSUMER_GROUPS, v).map_err(ConnectError::config)?
                }
                None => Vec::new(),
            };
            let source = Arc::new(GroupAdmin::new(
                props,
                Side::Source,
                "checkpoint-source-admin",
                settings.admin_timeout,
                false,
            )?);
            let target = match settings.sync_group_offsets {
                Some(_) => Some(GroupAdmin::new(
                    props,
                    Side::Target,
                    "checkpoint-target-admin",
                    settings.admin_timeout,
                    false,
                )?),
                None => None,
            };
            let (syncs_side, syncs_topic) =
                crate::source_task::offset_syncs_topic(props, &settings.policy)?;
            let syncs_role = match syncs_side {
                Side::Source => "offset-syncs-source-consumer",
                Side::Target => "offset-syncs-target-consumer",
            };
            let readers = Readers {
                checkpoints: partition_zero_reader(
                    props,
                    Side::Target,
                    "checkpoints-target-consumer",
                    &settings.checkpoints_topic,
                )?,
                syncs: partition_zero_reader(props, syncs_side, syncs_role, &syncs_topic)?,
                syncs_topic,
            };
            let poll = Duration::from_millis(
                long_setting(
                    props,
                    "consumer.poll.timeout.ms",
                    CONSUMER_POLL_TIMEOUT_MS_DEFAULT as i64,
                )?
                .max(1) as u64,
            );
            let stores = Arc::new(Mutex::new(Stores {
                planner: CheckpointPlanner::new(
                    settings.policy.clone(),
                    &settings.source_alias,
                    &settings.target_alias,
                    Some(settings.topics.clone()),
                ),
                syncs: OffsetSyncStore::new(true),
                ready: false,
            }));
            let reader = Arc::new(StopFlag::default());
            let topic = settings.checkpoints_topic.clone();
            // With checkpoints off the connector asks for no task; a task given such a
            // configuration anyway waits as if the interval were Java's default.
            let interval = settings.emit_checkpoints.unwrap_or(Duration::from_secs(60));
            let sync = settings.sync_group_offsets.zip(target);
            let target_alias = settings.target_alias.clone();
            tracing::info!(
                "{} checkpointing {} consumer groups {}->{}: {:?}.",
                props.get("name").map(String::as_str).unwrap_or_default(),
                groups.len(),
                settings.source_alias,
                settings.target_alias,
                groups
            );
            {
                let (stores, stop) = (Arc::clone(&stores), Arc::clone(&reader));
                let set: BTreeSet<String> = groups.iter().cloned().collect();
                let checkpoints_topic = settings.checkpoints_topic.clone();
                std::thread::Builder::new()
                    .name("mirror-checkpoint-stores".into())
                    .spawn(move || {
                        read_stores(
                            readers,
                            poll,
                            checkpoints_topic,
                            set,
                            stores,
                            Arc::clone(&stop),
                        );
                        stop.finished();
                    })
                    .map_err(|e| {
                        ConnectError::connect(format!("Could not start the store reader: {e}"))
                    })?;
            }
            let syncer = sync.map(|(every, target)| {
                let stores = Arc::clone(&stores);
                let groups = groups.clone();
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(every).await;
                        if stores.lock().unwrap_or_else(|e| e.into_inner()).ready {
                            sync_group_offsets(&target, &groups, &stores, &target_alias).await;
                        }
                    }
                })
            });
            crate::metrics::note_names_formats(props);
            let metrics = self.context.as_ref().map(|c| {
                MirrorCheckpointMetrics::new(
                    c.plugin_metrics.clone(),
                    &settings.source_alias,
                    &settings.target_alias,
                )
            });
            self.running = Some(Running {
                metrics,
                groups,
                topic,
                interval,
                source,
                stores,
                reader,
                syncer,
            });
            Ok(())
        })
    }

    /// Waits the interval (nothing when stopped meanwhile), then the checkpoints of every
    /// group of the task (none before the stores are read).
    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            let Some(r) = &self.running else {
                return Ok(Vec::new());
            };
            if !crate::source_task::wait_unless_stopped(self.context.as_ref(), r.interval).await {
                return Ok(Vec::new());
            }
            if !r.stores.lock().unwrap_or_else(|e| e.into_inner()).ready {
                return Ok(Vec::new());
            }
            let mut out = Vec::new();
            for group in &r.groups {
                let timestamp = now_ms();
                let offsets = match r.source.committed_offsets(group).await {
                    Ok(o) => o,
                    Err(e) => {
                        tracing::error!(
                            "Error querying offsets for consumer group {group} on the source cluster: {e}"
                        );
                        continue;
                    }
                };
                let checkpoints = {
                    let mut s = r.stores.lock().unwrap_or_else(|e| e.into_inner());
                    let s = &mut *s;
                    let c = s.planner.checkpoints_for_group(group, &offsets, &s.syncs);
                    s.planner.update(group, &c);
                    c
                };
                tracing::debug!(
                    "group {group}: committed offsets on the source {:?}, new checkpoints {:?}",
                    offsets
                        .iter()
                        .map(|o| (o.topic.as_str(), o.partition, o.offset))
                        .collect::<Vec<_>>(),
                    checkpoints
                        .values()
                        .map(|c| (c.partition, c.upstream_offset, c.downstream_offset))
                        .collect::<Vec<_>>()
                );
                for c in checkpoints.into_values() {
                    // Metadata too long for a checkpoint: skipped (logged), as Java's poll
                    // logs what fails and goes on.
                    let (key, value) = match (c.key(), c.value()) {
                        (Ok(k), Ok(v)) => (k, v),
                        (Err(e), _) | (_, Err(e)) => {
                            tracing::warn!("Failure polling consumer state for checkpoints: {e}");
                            continue;
                        }
                    };
                    out.push(SourceRecord {
                        source_partition: Arc::new(c.source_partition()),
                        source_offset: records::source_offset(0),
                        topic: r.topic.clone(),
                        kafka_partition: Some(0),
                        key_schema: Some(Schema::bytes_schema()),
                        key: Value::Bytes(key),
                        value_schema: Some(Schema::bytes_schema()),
                        value: Value::Bytes(value),
                        timestamp: Some(timestamp),
                        headers: Default::default(),
                    });
                }
            }
            Ok(out)
        })
    }

    fn wants_commit_record(&self) -> bool {
        true
    }

    /// Records the checkpoint's latency (Java's `commitRecord`: from the poll that made it to
    /// the target's acknowledgement).
    fn commit_record(
        &mut self,
        record: &SourceRecord,
        _metadata: Option<tributary_api::record::RecordMetadata>,
    ) -> ConnectResult<()> {
        let Some(metrics) = self.running.as_ref().and_then(|r| r.metrics.as_ref()) else {
            return Ok(());
        };
        let p = &record.source_partition;
        if let (Some(group), Some(topic), Some(partition)) = (
            p.get("group").and_then(|v| v.as_str()),
            p.get("topic").and_then(|v| v.as_str()),
            p.get("partition").and_then(serde_json::Value::as_i64),
        ) {
            let latency = record.timestamp.map_or(0, |t| now_ms() - t);
            metrics.checkpoint_latency(group, topic, partition as i32, latency);
        }
        Ok(())
    }

    fn stop(&mut self) -> TaskFuture<'_, ()> {
        if let Some(r) = self.running.take() {
            r.reader.stop();
            if let Some(s) = r.syncer {
                s.abort();
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }
}
