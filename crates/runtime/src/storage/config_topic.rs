//! The config topic (Connect's `KafkaConfigBackingStore`): connector configs, task configs and
//! their commits, target states, restart requests and the session key, with Connect's keys and
//! JSON values. [`ConfigLogState`] is the pure reducer over the topic's records;
//! [`KafkaConfigBackingStore`] follows the topic and performs Connect's write sequences.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value as Json};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::kafka_log::{KafkaBasedLog, LogRecord, LogWriter, Recovery};
use super::topic_admin::ManagedTopic;
use crate::config_records::TargetState;
use crate::config_records::{RestartRequest, SessionKey};
use crate::ConnectorTaskId;

/// A snapshot of the config topic (Connect's `ClusterConfigState`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterConfigState {
    /// Offset of the next record to read (-1 before any record was read).
    pub offset: i64,
    pub session_key: Option<SessionKey>,
    pub connector_configs: BTreeMap<String, Props>,
    pub target_states: HashMap<String, TargetState>,
    /// Committed task configs.
    pub task_configs: BTreeMap<ConnectorTaskId, Props>,
    pub task_counts: HashMap<String, u32>,
    /// Connectors whose last commit named task configs that are missing.
    pub inconsistent: HashSet<String>,
    /// The connector config in force at each connector's last consistent commit.
    pub applied_connector_configs: HashMap<String, Props>,
    /// The last task count record (`tasks-fencing-<c>`, KIP-618) of each connector: how many
    /// tasks its last fenced generation had.
    pub task_count_records: HashMap<String, u32>,
    /// Connectors whose last task-config commit came after their last task count record: a
    /// round of zombie fencing must precede the start of their tasks under exactly-once support
    /// (Connect's `pendingFencing`).
    pub pending_fencing: HashSet<String>,
    /// How many task-config commits of each connector this worker has read, minus one
    /// (Connect's `taskConfigGeneration`).
    pub task_config_generations: HashMap<String, u32>,
}

impl ClusterConfigState {
    /// The connector's task-config generation (0 for its first commit; `None` before any).
    pub fn task_config_generation(&self, connector: &str) -> Option<u32> {
        self.task_config_generations.get(connector).copied()
    }
    /// An empty snapshot at offset -1.
    pub fn empty() -> Self {
        ClusterConfigState {
            offset: -1,
            ..Default::default()
        }
    }
    /// Whether the connector exists.
    pub fn contains(&self, connector: &str) -> bool {
        self.connector_configs.contains_key(connector)
    }
    /// The connector's target state (STARTED when none was written).
    pub fn target_state(&self, connector: &str) -> TargetState {
        self.target_states
            .get(connector)
            .copied()
            .unwrap_or(TargetState::Started)
    }
    /// The connector's committed tasks (none for an inconsistent connector).
    pub fn tasks(&self, connector: &str) -> Vec<ConnectorTaskId> {
        if self.inconsistent.contains(connector) {
            return Vec::new();
        }
        let n = self.task_counts.get(connector).copied().unwrap_or(0);
        (0..n)
            .map(|t| ConnectorTaskId::new(connector, t))
            .filter(|id| self.task_configs.contains_key(id))
            .collect()
    }
    /// How many tasks the connector's last task-config commit had (0 before any; Connect's
    /// `ClusterConfigState.taskCount`).
    pub fn task_count(&self, connector: &str) -> usize {
        self.task_counts.get(connector).copied().unwrap_or(0) as usize
    }
    /// The committed config of a task.
    pub fn task_config(&self, id: &ConnectorTaskId) -> Option<&Props> {
        self.task_configs.get(id)
    }
    /// Connector names, sorted.
    pub fn connectors(&self) -> Vec<String> {
        self.connector_configs.keys().cloned().collect()
    }
}

/// What a record changed, for the herder (Connect's `ConfigBackingStore.UpdateListener`).
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigEvent {
    /// A connector config record: the connector, and the snapshot offset that includes the
    /// record (its offset + 1), so that a connector instance started from a snapshot at or
    /// past it is known to have it already.
    ConnectorConfigUpdate {
        connector: String,
        read_at: i64,
    },
    ConnectorConfigRemove(String),
    TargetStateChange(String),
    /// A task-config commit for `connector` (also sent for a commit of zero tasks).
    TaskConfigUpdate {
        connector: String,
        tasks: Vec<ConnectorTaskId>,
    },
    RestartRequest(RestartRequest),
    SessionKeyUpdate(SessionKey),
    /// A cluster-wide log level (KIP-976): namespace and level.
    LoggerLevel(String, String),
}

/// The reducer over config-topic records.
///
/// The state is shared copy-on-write: readers take the `Arc` (see
/// [`KafkaConfigBackingStore::snapshot`]) and keep a consistent snapshot for as long as they
/// hold it; applying a record changes the state in place, or a copy of it when a reader still
/// holds the current one (once per reader, not per record).
#[derive(Debug, Default)]
pub struct ConfigLogState {
    pub state: Arc<ClusterConfigState>,
    deferred: HashMap<String, BTreeMap<u32, Props>>,
}

fn properties(v: &Json) -> Option<Props> {
    let obj = v.get("properties")?.as_object()?;
    Some(
        obj.iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
            .collect(),
    )
}

/// Splits `task-<connector>-<n>` style keys: the last dash separates the number.
fn split_task_key(rest: &str) -> Option<(String, u32)> {
    let (c, n) = rest.rsplit_once('-')?;
    if c.is_empty() {
        return None;
    }
    Some((c.to_string(), n.parse().ok()?))
}

impl ConfigLogState {
    /// A reducer at offset -1.
    pub fn new() -> Self {
        ConfigLogState {
            state: Arc::new(ClusterConfigState::empty()),
            deferred: HashMap::new(),
        }
    }

    /// Applies one record at `offset`; returns what changed. An undecodable value is logged and
    /// skipped without advancing the offset, as Connect does.
    pub fn apply(&mut self, key: &str, value: Option<&[u8]>, offset: i64) -> Vec<ConfigEvent> {
        let json = match value {
            None => None,
            Some(bytes) => match serde_json::from_slice::<Json>(bytes) {
                Ok(Json::Null) => None,
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::error!(key, offset, "skipping undecodable config record: {e}");
                    return Vec::new();
                }
            },
        };
        // Every warning about a skipped record names its offset through this span.
        let mut events = {
            let _at = tracing::warn_span!("config topic record", offset).entered();
            self.dispatch(key, json.as_ref())
        };
        for e in &mut events {
            if let ConfigEvent::ConnectorConfigUpdate { read_at, .. } = e {
                *read_at = offset + 1;
            }
        }
        Arc::make_mut(&mut self.state).offset = offset + 1;
        events
    }

    fn dispatch(&mut self, key: &str, v: Option<&Json>) -> Vec<ConfigEvent> {
        let st = Arc::make_mut(&mut self.state);
        if let Some(c) = key.strip_prefix("target-state-") {
            let Some(v) = v else {
                st.target_states.remove(c);
                if st.connector_configs.contains_key(c) {
                    st.target_states.insert(c.to_string(), TargetState::Started);
                }
                return Vec::new();
            };
            let name = v
                .get("state.v2")
                .and_then(Json::as_str)
                .or_else(|| v.get("state").and_then(Json::as_str));
            let target = match name {
                Some("STARTED") => TargetState::Started,
                Some("PAUSED") => TargetState::Paused,
                Some("STOPPED") => TargetState::Stopped,
                other => {
                    tracing::error!(
                        key,
                        "ignoring target state record with unknown state {other:?}"
                    );
                    return Vec::new();
                }
            };
            let changed = st.target_states.insert(c.to_string(), target) != Some(target);
            return if changed && st.connector_configs.contains_key(c) {
                vec![ConfigEvent::TargetStateChange(c.to_string())]
            } else {
                Vec::new()
            };
        }
        if let Some(c) = key.strip_prefix("connector-") {
            return match v.and_then(properties) {
                Some(props) => {
                    st.connector_configs.insert(c.to_string(), props);
                    st.target_states
                        .entry(c.to_string())
                        .or_insert(TargetState::Started);
                    vec![ConfigEvent::ConnectorConfigUpdate {
                        connector: c.to_string(),
                        read_at: 0,
                    }]
                }
                None if v.is_none() => {
                    st.connector_configs.remove(c);
                    st.task_counts.remove(c);
                    st.task_configs.retain(|id, _| id.connector != c);
                    st.applied_connector_configs.remove(c);
                    st.inconsistent.remove(c);
                    self.deferred.remove(c);
                    vec![ConfigEvent::ConnectorConfigRemove(c.to_string())]
                }
                None => {
                    tracing::error!(key, "ignoring connector config record without properties");
                    Vec::new()
                }
            };
        }
        if let Some(rest) = key.strip_prefix("task-") {
            let Some((c, n)) = split_task_key(rest) else {
                tracing::error!(key, "ignoring task config record with an invalid key");
                return Vec::new();
            };
            match v.and_then(properties) {
                Some(props) => {
                    self.deferred.entry(c).or_default().insert(n, props);
                }
                None => tracing::error!(key, "ignoring a null or malformed task config record"),
            }
            return Vec::new();
        }
        if let Some(c) = key.strip_prefix("commit-") {
            let Some(n) = v.and_then(|v| v.get("tasks")).and_then(Json::as_u64) else {
                tracing::error!(key, "ignoring malformed commit record");
                return Vec::new();
            };
            let n = n as u32;
            if !st.connector_configs.contains_key(c) {
                // A leftover of a deleted (and compacted) connector.
                self.deferred.remove(c);
                st.task_counts.remove(c);
                st.task_configs.retain(|id, _| id.connector != c);
                return Vec::new();
            }
            let deferred = self.deferred.remove(c).unwrap_or_default();
            let complete = (0..n).all(|t| deferred.contains_key(&t));
            let mut updated = Vec::new();
            if complete {
                st.task_configs.retain(|id, _| id.connector != c);
                for (t, props) in deferred {
                    if t < n {
                        let id = ConnectorTaskId::new(c, t);
                        updated.push(id.clone());
                        st.task_configs.insert(id, props);
                    }
                }
                st.inconsistent.remove(c);
                if let Some(cfg) = st.connector_configs.get(c) {
                    st.applied_connector_configs
                        .insert(c.to_string(), cfg.clone());
                }
            } else {
                tracing::error!(
                    connector = c,
                    tasks = n,
                    "task configs in the commit are incomplete; marking the connector inconsistent"
                );
                st.inconsistent.insert(c.to_string());
            }
            st.task_counts.insert(c.to_string(), n);
            st.task_config_generations
                .entry(c.to_string())
                .and_modify(|g| *g += 1)
                .or_insert(0);
            st.pending_fencing.insert(c.to_string());
            if updated.is_empty() {
                updated = (0..n).map(|t| ConnectorTaskId::new(c, t)).collect();
            }
            return vec![ConfigEvent::TaskConfigUpdate {
                connector: c.to_string(),
                tasks: updated,
            }];
        }
        if let Some(c) = key.strip_prefix("restart-connector-") {
            let Some(v) = v else { return Vec::new() };
            let flag = |k: &str| v.get(k).and_then(Json::as_bool).unwrap_or(false);
            return vec![ConfigEvent::RestartRequest(RestartRequest {
                connector: c.to_string(),
                only_failed: flag("only-failed"),
                include_tasks: flag("include-tasks"),
            })];
        }
        if let Some(c) = key.strip_prefix("tasks-fencing-") {
            match v
                .and_then(|v| v.get("task-count"))
                .and_then(Json::as_u64)
                .and_then(|n| u32::try_from(n).ok())
            {
                Some(n) => {
                    st.task_count_records.insert(c.to_string(), n);
                    st.pending_fencing.remove(c);
                }
                None => tracing::error!(key, "ignoring malformed task count record"),
            }
            return Vec::new();
        }
        if key == "session-key" {
            let Some(v) = v else { return Vec::new() };
            let decoded = (|| {
                let key = base64::engine::general_purpose::STANDARD
                    .decode(v.get("key")?.as_str()?)
                    .ok()?;
                let algorithm = v.get("algorithm")?.as_str()?.to_string();
                let creation_timestamp = v.get("creation-timestamp")?.as_i64()?;
                Some(SessionKey {
                    key,
                    algorithm,
                    creation_timestamp,
                })
            })();
            return match decoded {
                Some(k) => {
                    st.session_key = Some(k.clone());
                    vec![ConfigEvent::SessionKeyUpdate(k)]
                }
                None => {
                    tracing::error!("ignoring malformed session key record");
                    Vec::new()
                }
            };
        }
        if let Some(ns) = key.strip_prefix("logger-cluster-") {
            return match v.and_then(|v| v.get("level")).and_then(Json::as_str) {
                Some(level) => vec![ConfigEvent::LoggerLevel(ns.to_string(), level.to_string())],
                None => {
                    tracing::error!(key, "ignoring malformed logger level record");
                    Vec::new()
                }
            };
        }
        tracing::error!(key, "discarding config update record with invalid key");
        Vec::new()
    }
}

/// Record values as Connect writes them.
pub mod records {
    use super::*;

    /// A record to write: key and value (`None`: a tombstone).
    pub type Write = (String, Option<Vec<u8>>);

    /// A connector's creation or update: its target state first (when given), then its config.
    pub fn connector_config(name: &str, config: &Props, target: Option<TargetState>) -> Vec<Write> {
        let mut writes = Vec::new();
        if let Some(t) = target {
            writes.push((format!("target-state-{name}"), Some(target_state(t))));
        }
        writes.push((format!("connector-{name}"), Some(properties(config))));
        writes
    }

    /// A connector's removal: tombstones of its config and its target state.
    pub fn connector_removal(name: &str) -> Vec<Write> {
        vec![
            (format!("connector-{name}"), None),
            (format!("target-state-{name}"), None),
        ]
    }

    /// A connector's task configs, `task-<c>-<n>` each (their commit is [`task_commit`]).
    pub fn task_configs(name: &str, configs: &[Props]) -> Vec<Write> {
        configs
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("task-{name}-{i}"), Some(properties(c))))
            .collect()
    }

    /// The commit of `tasks` task configs, `commit-<c>`.
    pub fn task_commit(name: &str, tasks: usize) -> Write {
        (format!("commit-{name}"), Some(commit(tasks as u32)))
    }

    fn sorted(props: &Props) -> serde_json::Map<String, Json> {
        let sorted: BTreeMap<_, _> = props.iter().collect();
        sorted
            .into_iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect()
    }
    /// `{"properties":{…}}` for `connector-` and `task-` records.
    pub fn properties(props: &Props) -> Vec<u8> {
        serde_json::to_vec(&json!({ "properties": Json::Object(sorted(props)) })).unwrap()
    }
    /// `{"tasks":N}`.
    pub fn commit(tasks: u32) -> Vec<u8> {
        serde_json::to_vec(&json!({ "tasks": tasks })).unwrap()
    }
    /// `{"task-count":N}` for `tasks-fencing-` records (KIP-618).
    pub fn task_count(tasks: u32) -> Vec<u8> {
        serde_json::to_vec(&json!({ "task-count": tasks })).unwrap()
    }
    /// `{"state":…,"state.v2":…}`; STOPPED is written as state PAUSED for older readers.
    pub fn target_state(t: TargetState) -> Vec<u8> {
        let (v1, v2) = match t {
            TargetState::Started => ("STARTED", "STARTED"),
            TargetState::Paused => ("PAUSED", "PAUSED"),
            TargetState::Stopped => ("PAUSED", "STOPPED"),
        };
        serde_json::to_vec(&json!({ "state": v1, "state.v2": v2 })).unwrap()
    }
    /// `{"include-tasks":…,"only-failed":…}`.
    pub fn restart(r: &RestartRequest) -> Vec<u8> {
        serde_json::to_vec(
            &json!({ "include-tasks": r.include_tasks, "only-failed": r.only_failed }),
        )
        .unwrap()
    }
    /// `{"level":…}` for `logger-cluster-` records.
    pub fn logger_level(level: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({ "level": level })).unwrap()
    }
    /// The records that rebuild `snap` in an empty config topic, in the order they must be
    /// read: the session key, then per connector its target state, its config, its committed
    /// task configs and their commit record.
    pub fn snapshot(snap: &ClusterConfigState) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        if let Some(k) = &snap.session_key {
            out.push(("session-key".to_string(), session_key(k)));
        }
        for (name, config) in &snap.connector_configs {
            if let Some(t) = snap.target_states.get(name) {
                out.push((format!("target-state-{name}"), target_state(*t)));
            }
            out.push((format!("connector-{name}"), properties(config)));
            if snap.inconsistent.contains(name) {
                continue;
            }
            let tasks = snap.tasks(name);
            if tasks.is_empty() && !snap.task_counts.contains_key(name) {
                continue;
            }
            for id in &tasks {
                if let Some(c) = snap.task_configs.get(id) {
                    out.push((format!("task-{name}-{}", id.task), properties(c)));
                }
            }
            out.push((format!("commit-{name}"), commit(tasks.len() as u32)));
        }
        out
    }

    /// `{"key":…,"algorithm":…,"creation-timestamp":…}`.
    pub fn session_key(k: &SessionKey) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "key": base64::engine::general_purpose::STANDARD.encode(&k.key),
            "algorithm": k.algorithm,
            "creation-timestamp": k.creation_timestamp,
        }))
        .unwrap()
    }
}

/// The config topic, followed and written (Connect's `KafkaConfigBackingStore`).
pub struct KafkaConfigBackingStore {
    log: KafkaBasedLog,
    state: Arc<Mutex<ConfigLogState>>,
    topic: String,
    /// Set when the leader writes in transactions (`exactly.once.source.support` `preparing`
    /// or `enabled`, KIP-618): see [`KafkaConfigBackingStore::claim_write_privileges`].
    fencable: Option<FencableWriter>,
}

/// The leader's transactional producer for the config topic (Connect's "fencable producer"),
/// with `transactional.id` `connect-cluster-<group.id>`: a new leader initialising it fences
/// the previous leader, whose later writes fail instead of landing after the new leader's.
struct FencableWriter {
    config: rdkafka::ClientConfig,
    producer: Mutex<Option<rdkafka::producer::BaseProducer<WrittenOffsets>>>,
}

/// The producer context of the fencable writer: where the records of the current transaction
/// were written (partition, last offset), from their delivery reports.
#[derive(Default)]
struct WrittenOffsets(Mutex<Option<(i32, i64)>>);

impl rdkafka::ClientContext for WrittenOffsets {}

impl rdkafka::producer::ProducerContext for WrittenOffsets {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &rdkafka::producer::DeliveryResult<'_>, _: ()) {
        use rdkafka::Message;
        if let Ok(m) = result {
            let mut last = self.0.lock().unwrap();
            if last.is_none_or(|(_, o)| m.offset() > o) {
                *last = Some((m.partition(), m.offset()));
            }
        }
    }
}

/// How long a transactional write to the config topic may take.
const PRIVILEGED_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

impl KafkaConfigBackingStore {
    /// Reads the topic to its end, then keeps following it. Events are sent to `events` only
    /// for records read after this catch-up (so old restart requests are never replayed).
    ///
    /// With `managed`, a deleted topic is created again; the worker that created it writes the
    /// configuration it holds (session key, connector configs, target states, committed task
    /// configs) into it, and every worker reads the new topic from the start. Records that
    /// change nothing in the snapshot raise no event while that replay lasts, so running
    /// connectors and tasks are not restarted. Restart requests and cluster log levels are not
    /// written again.
    pub fn start(
        topic: &str,
        producer: rdkafka::ClientConfig,
        consumer: rdkafka::ClientConfig,
        managed: Option<ManagedTopic>,
        events: impl Fn(ConfigEvent) + Send + 'static,
    ) -> ConnectResult<KafkaConfigBackingStore> {
        let state = Arc::new(Mutex::new(ConfigLogState::new()));
        let started = Arc::new(AtomicBool::new(false));
        // Set from the recreation of the topic until the first record that changes something.
        let replaying = Arc::new(AtomicBool::new(false));
        let cb_state = state.clone();
        let cb_started = started.clone();
        let cb_replaying = replaying.clone();
        let callback = Box::new(move |rec: LogRecord| {
            let Some(key) = rec.key.as_deref().and_then(|k| std::str::from_utf8(k).ok()) else {
                tracing::error!(
                    offset = rec.offset,
                    "ignoring config record without a string key"
                );
                return;
            };
            let mut st = cb_state.lock().unwrap();
            // Only what the record's key can change is compared (not the whole state).
            let before = cb_replaying
                .load(Ordering::Acquire)
                .then(|| touched(&st.state, key));
            let evs = st.apply(key, rec.value.as_deref(), rec.offset);
            if let Some(before) = before {
                if before == touched(&st.state, key) {
                    return;
                }
                cb_replaying.store(false, Ordering::Release);
            }
            drop(st);
            if cb_started.load(Ordering::Acquire) {
                for e in evs {
                    events(e);
                }
            }
        });
        let held = state.clone();
        let recovery = managed.map(|topic| Recovery {
            topic,
            on_recreated: Box::new(move |created: bool, writer: &LogWriter| {
                replaying.store(true, Ordering::Release);
                if !created {
                    return;
                }
                let snap = held.lock().unwrap().state.clone();
                let records = records::snapshot(&snap);
                for (k, v) in &records {
                    writer.send(k.as_bytes(), Some(v));
                }
                tracing::warn!(
                    connectors = snap.connector_configs.len(),
                    records = records.len(),
                    "wrote the configuration this worker holds into the new config topic"
                );
            }),
        });
        let log = KafkaBasedLog::start(topic, producer, consumer, callback, recovery)?;
        started.store(true, Ordering::Release);
        Ok(KafkaConfigBackingStore {
            log,
            state,
            topic: topic.to_string(),
            fencable: None,
        })
    }

    /// Makes the leader's writes transactional with `transactional_id` (Connect's
    /// `DistributedConfig.transactionalProducerId()`, `connect-cluster-<group.id>`), for
    /// workers with `exactly.once.source.support` `preparing` or `enabled`. `producer` holds
    /// the connection and security settings.
    pub fn with_transactional_leader(
        mut self,
        mut producer: rdkafka::ClientConfig,
        transactional_id: &str,
    ) -> Self {
        let client_id = format!("{}-leader", producer.get("client.id").unwrap_or("config"));
        producer
            .set("transactional.id", transactional_id)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random")
            .set("client.id", client_id);
        self.fencable = Some(FencableWriter {
            config: producer,
            producer: Mutex::new(None),
        });
        self
    }

    /// Called when this worker becomes the leader (Connect's `claimWritePrivileges`): with a
    /// transactional leader, initialises the transactional producer, fencing any previous
    /// leader's. A no-op otherwise, or when already claimed.
    pub fn claim_write_privileges(&self) -> ConnectResult<()> {
        use rdkafka::producer::Producer;
        let Some(f) = &self.fencable else {
            return Ok(());
        };
        let mut slot = f.producer.lock().unwrap();
        if slot.is_some() {
            return Ok(());
        }
        let producer: rdkafka::producer::BaseProducer<WrittenOffsets> = f
            .config
            .create_with_context(WrittenOffsets::default())
            .map_err(|e| {
                ConnectError::connect(format!(
                    "Failed to create and initialize fencable producer for config topic: {e}"
                ))
            })?;
        producer
            .init_transactions(PRIVILEGED_WRITE_TIMEOUT)
            .map_err(|e| {
                ConnectError::connect(format!(
                    "Failed to create and initialize fencable producer for config topic: {e}"
                ))
            })?;
        *slot = Some(producer);
        Ok(())
    }

    /// Called when this worker is no longer the leader (Connect's
    /// `relinquishWritePrivileges`): closes the transactional producer.
    pub fn relinquish_write_privileges(&self) {
        if let Some(f) = &self.fencable {
            f.producer.lock().unwrap().take();
        }
    }

    /// A leader's write (Connect's `sendPrivileged`): in a transaction of its own when the
    /// leader writes transactionally and has claimed the privilege, a plain write otherwise.
    /// A transactional write that fails (a newer leader fenced this one) drops the producer.
    fn write_privileged(&self, records: &[(String, Option<Vec<u8>>)]) -> ConnectResult<()> {
        use rdkafka::producer::{BaseRecord, Producer};
        if records.is_empty() {
            return Ok(());
        }
        let slot = self.fencable.as_ref().map(|f| f.producer.lock().unwrap());
        let Some(mut slot) = slot.filter(|s| s.is_some()) else {
            // Sent together, then every acknowledgement waited for (one round trip, not one
            // per record: 200 connectors × 10 tasks made task-config writes the slowest part
            // of their start, issue #34).
            let records: Vec<(&[u8], Option<&[u8]>)> = records
                .iter()
                .map(|(k, v)| (k.as_bytes(), v.as_deref()))
                .collect();
            return self.log.send_all_sync(&records);
        };
        let Some(producer) = slot.as_ref() else {
            return Ok(());
        };
        producer.context().0.lock().unwrap().take();
        let result = (|| {
            producer.begin_transaction()?;
            for (k, v) in records {
                let mut rec: BaseRecord<'_, [u8], [u8]> =
                    BaseRecord::to(&self.topic).key(k.as_bytes());
                if let Some(v) = v {
                    rec = rec.payload(&v[..]);
                }
                producer.send(rec).map_err(|(e, _)| e)?;
            }
            producer.commit_transaction(PRIVILEGED_WRITE_TIMEOUT)
        })();
        if let Err(e) = result {
            tracing::warn!("Failed to perform fencable send to config topic: {e}");
            let _dropped = slot.take();
            return Err(ConnectError::connect(format!(
                "Failed to perform fencable send to config topic: {e}"
            )));
        }
        // Read back once the commit marker is there, so that the caller's refresh sees it.
        let written = producer.context().0.lock().unwrap().take();
        drop(slot);
        match written {
            Some((partition, offset)) => {
                self.log
                    .wait_until_read(partition, offset, PRIVILEGED_WRITE_TIMEOUT)
            }
            None => Ok(()),
        }
    }

    /// The current snapshot, shared: O(1), however many connectors there are. It stays as it
    /// is while held (records read meanwhile go to a copy).
    pub fn snapshot(&self) -> Arc<ClusterConfigState> {
        self.state.lock().unwrap().state.clone()
    }

    /// Reads to the end (Connect's `refresh`). Errors on timeout.
    pub fn refresh(&self, timeout: Duration) -> ConnectResult<()> {
        self.log.read_to_end(timeout)
    }

    fn write(&self, key: &str, value: Option<Vec<u8>>) -> ConnectResult<()> {
        self.log
            .send_sync(key.as_bytes(), value.as_deref())
            .map(|_| ())
    }

    /// Creates or updates a connector: the target state first (when given), then the config,
    /// then reads to the end.
    pub fn put_connector_config(
        &self,
        name: &str,
        config: &Props,
        target: Option<TargetState>,
    ) -> ConnectResult<()> {
        self.write_privileged(&records::connector_config(name, config, target))?;
        self.refresh(Duration::from_secs(30))
    }

    /// Deletes a connector: tombstones its config and target state, then reads to the end.
    pub fn remove_connector_config(&self, name: &str) -> ConnectResult<()> {
        self.write_privileged(&records::connector_removal(name))?;
        self.refresh(Duration::from_secs(30))
    }

    /// Publishes task configs: every `task-<c>-<n>` record, then `commit-<c>`, reading to the end
    /// around them as Connect does.
    pub fn put_task_configs(&self, name: &str, configs: &[Props]) -> ConnectResult<()> {
        self.put_task_configs_batch(&[(name, configs)])
    }

    /// Publishes the task configs of several connectors with the reads and writes of one
    /// ([`ConfigBackingStore::put_task_configs_batch`]): read to the end, every task record,
    /// read to the end (when there was one), every commit, read to the end.
    pub fn put_task_configs_batch(&self, batch: &[(&str, &[Props])]) -> ConnectResult<()> {
        self.refresh(Duration::from_secs(30))?;
        let tasks: Vec<_> = batch
            .iter()
            .flat_map(|(name, configs)| records::task_configs(name, configs))
            .collect();
        self.write_privileged(&tasks)?;
        if !tasks.is_empty() {
            self.refresh(Duration::from_secs(30))?;
        }
        let commits: Vec<_> = batch
            .iter()
            .map(|(name, configs)| records::task_commit(name, configs.len()))
            .collect();
        self.write_privileged(&commits)?;
        self.refresh(Duration::from_secs(30))
    }

    /// Writes a target state (acknowledged, not read back).
    pub fn put_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()> {
        self.write(
            &format!("target-state-{name}"),
            Some(records::target_state(target)),
        )
    }

    /// Writes a KIP-745 restart request, then reads to the end.
    pub fn put_restart_request(&self, request: &RestartRequest) -> ConnectResult<()> {
        self.write(
            &format!("restart-connector-{}", request.connector),
            Some(records::restart(request)),
        )?;
        self.refresh(Duration::from_secs(30))
    }

    /// Writes a session key, then reads to the end.
    pub fn put_session_key(&self, key: &SessionKey) -> ConnectResult<()> {
        self.write_privileged(&[("session-key".into(), Some(records::session_key(key)))])?;
        self.refresh(Duration::from_secs(30))
    }

    /// Writes a connector's task count record (`tasks-fencing-<c>`, Connect's
    /// `putTaskCountRecord`, KIP-618), then reads to the end.
    pub fn put_task_count_record(&self, name: &str, tasks: u32) -> ConnectResult<()> {
        self.write_privileged(&[(
            format!("tasks-fencing-{name}"),
            Some(records::task_count(tasks)),
        )])?;
        self.refresh(Duration::from_secs(30))
    }

    /// Writes a cluster-wide log level (acknowledged, not read back).
    pub fn put_logger_level(&self, namespace: &str, level: &str) -> ConnectResult<()> {
        self.write(
            &format!("logger-cluster-{namespace}"),
            Some(records::logger_level(level)),
        )
    }

    /// Writes raw bytes under a key (tests use it to inject garbage).
    pub fn put_raw(&self, key: &str, value: Option<&[u8]>) -> ConnectResult<()> {
        self.log.send_sync(key.as_bytes(), value).map(|_| ())
    }

    /// Stops following the topic.
    pub fn stop(&self) {
        self.log.stop();
    }
}

impl super::config_store::ConfigBackingStore for KafkaConfigBackingStore {
    fn snapshot(&self) -> Arc<ClusterConfigState> {
        KafkaConfigBackingStore::snapshot(self)
    }
    fn refresh(&self, timeout: Duration) -> ConnectResult<()> {
        KafkaConfigBackingStore::refresh(self, timeout)
    }
    fn claim_write_privileges(&self) -> ConnectResult<()> {
        KafkaConfigBackingStore::claim_write_privileges(self)
    }
    fn relinquish_write_privileges(&self) {
        KafkaConfigBackingStore::relinquish_write_privileges(self)
    }
    fn put_connector_config(
        &self,
        name: &str,
        config: &Props,
        target: Option<TargetState>,
    ) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_connector_config(self, name, config, target)
    }
    fn remove_connector_config(&self, name: &str) -> ConnectResult<()> {
        KafkaConfigBackingStore::remove_connector_config(self, name)
    }
    fn put_task_configs(&self, name: &str, configs: &[Props]) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_task_configs(self, name, configs)
    }
    fn put_task_configs_batch(&self, batch: &[(&str, &[Props])]) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_task_configs_batch(self, batch)
    }
    fn put_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_target_state(self, name, target)
    }
    fn put_restart_request(&self, request: &RestartRequest) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_restart_request(self, request)
    }
    fn put_session_key(&self, key: &SessionKey) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_session_key(self, key)
    }
    fn put_task_count_record(&self, name: &str, tasks: u32) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_task_count_record(self, name, tasks)
    }
    fn put_logger_level(&self, namespace: &str, level: &str) -> ConnectResult<()> {
        KafkaConfigBackingStore::put_logger_level(self, namespace, level)
    }
    fn stop(&self) {
        KafkaConfigBackingStore::stop(self)
    }
}

/// The part of the state a config record with `key` can change, copied: comparing it before
/// and after the record tells whether the record changed anything, at the cost of one
/// connector rather than of the whole state.
#[derive(Debug, PartialEq)]
enum Touched {
    /// Records that change no state (task configs wait for their commit; restart requests
    /// and log levels are events only).
    Nothing,
    SessionKey(Option<SessionKey>),
    Connector {
        config: Option<Props>,
        target: Option<TargetState>,
        tasks: Vec<(u32, Props)>,
        task_count: Option<u32>,
        inconsistent: bool,
        applied: Option<Props>,
    },
}

fn touched(state: &ClusterConfigState, key: &str) -> Touched {
    let connector = key
        .strip_prefix("target-state-")
        .or_else(|| key.strip_prefix("connector-"))
        .or_else(|| key.strip_prefix("commit-"));
    match connector {
        Some(c) => Touched::Connector {
            config: state.connector_configs.get(c).cloned(),
            target: state.target_states.get(c).copied(),
            tasks: state
                .task_configs
                .range(ConnectorTaskId::new(c, 0)..=ConnectorTaskId::new(c, u32::MAX))
                .map(|(id, props)| (id.task, props.clone()))
                .collect(),
            task_count: state.task_counts.get(c).copied(),
            inconsistent: state.inconsistent.contains(c),
            applied: state.applied_connector_configs.get(c).cloned(),
        },
        None if key == "session-key" => Touched::SessionKey(state.session_key.clone()),
        None => Touched::Nothing,
    }
}

/// Errors for callers that need a [`ConnectError`] from a missing connector.
pub fn unknown_connector(name: &str) -> ConnectError {
    ConnectError::connect(format!("Unknown connector {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    #[test]
    fn snapshot_records_rebuild_the_snapshot_in_an_empty_topic() {
        let mut s = ConfigLogState::new();
        let mut offset = 0;
        let mut put = |s: &mut ConfigLogState, key: &str, value: Vec<u8>| {
            s.apply(key, Some(&value), offset);
            offset += 1;
        };
        let key = SessionKey {
            key: vec![1, 2, 3],
            algorithm: "HmacSHA256".into(),
            creation_timestamp: 42,
        };
        put(&mut s, "session-key", records::session_key(&key));
        for (name, tasks) in [("a", 2u32), ("b", 0), ("paused", 1)] {
            put(
                &mut s,
                &format!("connector-{name}"),
                records::properties(&props(&[("connector.class", name)])),
            );
            for t in 0..tasks {
                put(
                    &mut s,
                    &format!("task-{name}-{t}"),
                    records::properties(&props(&[("t", &t.to_string())])),
                );
            }
            put(&mut s, &format!("commit-{name}"), records::commit(tasks));
        }
        put(
            &mut s,
            "target-state-paused",
            records::target_state(TargetState::Paused),
        );
        // A connector with no task commit yet.
        put(
            &mut s,
            "connector-new",
            records::properties(&props(&[("connector.class", "N")])),
        );

        let mut rebuilt = ConfigLogState::new();
        for (i, (k, v)) in records::snapshot(&s.state).iter().enumerate() {
            rebuilt.apply(k, Some(v), i as i64);
        }
        let mut expected = (*s.state).clone();
        expected.offset = rebuilt.state.offset;
        assert_eq!(*rebuilt.state, expected);
    }

    #[test]
    fn task_count_records_clear_the_pending_fencing_that_commits_set() {
        let mut s = ConfigLogState::new();
        let mut offset = 0;
        let mut put = |s: &mut ConfigLogState, key: &str, value: Vec<u8>| {
            s.apply(key, Some(&value), offset);
            offset += 1;
        };
        put(
            &mut s,
            "connector-c",
            records::properties(&props(&[("a", "b")])),
        );
        assert_eq!(records::task_count(3), br#"{"task-count":3}"#.to_vec());
        put(
            &mut s,
            "task-c-0",
            records::properties(&props(&[("t", "0")])),
        );
        put(&mut s, "commit-c", records::commit(1));
        assert!(s.state.pending_fencing.contains("c"));
        assert_eq!(s.state.task_config_generation("c"), Some(0));
        put(&mut s, "tasks-fencing-c", records::task_count(1));
        assert!(!s.state.pending_fencing.contains("c"));
        assert_eq!(s.state.task_count_records.get("c"), Some(&1));
        put(
            &mut s,
            "task-c-0",
            records::properties(&props(&[("t", "1")])),
        );
        put(&mut s, "commit-c", records::commit(1));
        assert!(s.state.pending_fencing.contains("c"));
        assert_eq!(s.state.task_config_generation("c"), Some(1));
        // A malformed record changes nothing.
        put(&mut s, "tasks-fencing-c", br#"{"tasks":2}"#.to_vec());
        assert!(s.state.pending_fencing.contains("c"));
        assert_eq!(s.state.task_count_records.get("c"), Some(&1));
    }

    #[test]
    fn task_configs_take_effect_only_with_their_commit() {
        let mut s = ConfigLogState::new();
        let c = props(&[("connector.class", "X")]);
        assert_eq!(
            s.apply("connector-my-conn", Some(&records::properties(&c)), 0),
            vec![ConfigEvent::ConnectorConfigUpdate {
                connector: "my-conn".into(),
                read_at: 1
            }]
        );
        assert_eq!(s.state.target_state("my-conn"), TargetState::Started);
        s.apply(
            "task-my-conn-0",
            Some(&records::properties(&props(&[("a", "0")]))),
            1,
        );
        s.apply(
            "task-my-conn-1",
            Some(&records::properties(&props(&[("a", "1")]))),
            2,
        );
        assert!(
            s.state.tasks("my-conn").is_empty(),
            "not visible before the commit"
        );
        let ev = s.apply("commit-my-conn", Some(&records::commit(2)), 3);
        assert_eq!(
            ev,
            vec![ConfigEvent::TaskConfigUpdate {
                connector: "my-conn".into(),
                tasks: vec![
                    ConnectorTaskId::new("my-conn", 0),
                    ConnectorTaskId::new("my-conn", 1)
                ]
            }]
        );
        assert_eq!(s.state.tasks("my-conn").len(), 2);
        assert_eq!(
            s.state
                .task_config(&ConnectorTaskId::new("my-conn", 1))
                .unwrap()["a"],
            "1"
        );
        assert_eq!(s.state.offset, 4);
    }

    #[test]
    fn an_incomplete_commit_marks_the_connector_inconsistent() {
        let mut s = ConfigLogState::new();
        s.apply(
            "connector-c",
            Some(&records::properties(&props(&[("k", "v")]))),
            0,
        );
        s.apply("task-c-1", Some(&records::properties(&props(&[]))), 1);
        s.apply("commit-c", Some(&records::commit(2)), 2);
        assert!(s.state.inconsistent.contains("c"));
        assert!(s.state.tasks("c").is_empty());
        s.apply("task-c-0", Some(&records::properties(&props(&[]))), 3);
        s.apply("task-c-1", Some(&records::properties(&props(&[]))), 4);
        s.apply("commit-c", Some(&records::commit(2)), 5);
        assert!(!s.state.inconsistent.contains("c"));
        assert_eq!(s.state.tasks("c").len(), 2);
    }

    #[test]
    fn target_states_read_v2_first_and_write_stopped_as_paused_for_old_readers() {
        assert_eq!(
            records::target_state(TargetState::Stopped),
            br#"{"state":"PAUSED","state.v2":"STOPPED"}"#.to_vec()
        );
        let mut s = ConfigLogState::new();
        s.apply("connector-c", Some(&records::properties(&props(&[]))), 0);
        let ev = s.apply(
            "target-state-c",
            Some(br#"{"state":"PAUSED","state.v2":"STOPPED"}"#),
            1,
        );
        assert_eq!(ev, vec![ConfigEvent::TargetStateChange("c".into())]);
        assert_eq!(s.state.target_state("c"), TargetState::Stopped);
        s.apply("target-state-c", Some(br#"{"state":"PAUSED"}"#), 2);
        assert_eq!(s.state.target_state("c"), TargetState::Paused);
        assert!(
            s.apply("target-state-c", Some(br#"{"state":"PAUSED"}"#), 3)
                .is_empty(),
            "no change, no event"
        );
    }

    #[test]
    fn garbage_is_skipped_without_advancing_the_offset() {
        let mut s = ConfigLogState::new();
        s.apply("connector-c", Some(&records::properties(&props(&[]))), 0);
        assert!(s.apply("connector-d", Some(b"{garbage"), 1).is_empty());
        assert_eq!(s.state.offset, 1);
        assert!(s.apply("bogus-key", Some(b"{}"), 2).is_empty());
        assert_eq!(s.state.offset, 3);
        assert_eq!(s.state.connectors(), vec!["c".to_string()]);
    }

    #[test]
    fn deletion_and_leftover_commits() {
        let mut s = ConfigLogState::new();
        s.apply("connector-c", Some(&records::properties(&props(&[]))), 0);
        s.apply("task-c-0", Some(&records::properties(&props(&[]))), 1);
        s.apply("commit-c", Some(&records::commit(1)), 2);
        assert_eq!(
            s.apply("connector-c", None, 3),
            vec![ConfigEvent::ConnectorConfigRemove("c".into())]
        );
        s.apply("target-state-c", None, 4);
        assert!(!s.state.contains("c"));
        assert!(s.state.task_configs.is_empty());
        assert!(s
            .apply("commit-gone", Some(&records::commit(3)), 5)
            .is_empty());
    }

    #[test]
    fn restart_requests_and_session_keys_decode() {
        let mut s = ConfigLogState::new();
        let r = RestartRequest {
            connector: "a-b".into(),
            only_failed: true,
            include_tasks: false,
        };
        assert_eq!(
            records::restart(&r),
            br#"{"include-tasks":false,"only-failed":true}"#.to_vec()
        );
        assert_eq!(
            s.apply("restart-connector-a-b", Some(&records::restart(&r)), 0),
            vec![ConfigEvent::RestartRequest(r)]
        );
        let k = SessionKey {
            key: vec![1, 2, 3],
            algorithm: "HmacSHA256".into(),
            creation_timestamp: 42,
        };
        assert_eq!(
            records::session_key(&k),
            br#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":42}"#.to_vec()
        );
        assert_eq!(
            s.apply("session-key", Some(&records::session_key(&k)), 1),
            vec![ConfigEvent::SessionKeyUpdate(k.clone())]
        );
        assert_eq!(s.state.session_key, Some(k));
    }

    #[test]
    fn touched_tells_whether_a_record_changed_its_part_of_the_state() {
        let mut s = ConfigLogState::new();
        let c = props(&[("connector.class", "X")]);
        let mut offset = 0;
        let mut apply = |s: &mut ConfigLogState, key: &str, value: Vec<u8>| -> bool {
            let before = touched(&s.state, key);
            s.apply(key, Some(&value), offset);
            offset += 1;
            before != touched(&s.state, key)
        };
        assert!(apply(&mut s, "connector-a", records::properties(&c)));
        assert!(apply(&mut s, "connector-b", records::properties(&c)));
        assert!(
            !apply(&mut s, "connector-a", records::properties(&c)),
            "same config"
        );
        assert!(
            !apply(&mut s, "task-a-0", records::properties(&c)),
            "not committed yet"
        );
        assert!(apply(&mut s, "commit-a", records::commit(1)));
        assert!(!apply(&mut s, "task-a-0", records::properties(&c)));
        assert!(
            !apply(&mut s, "commit-a", records::commit(1)),
            "same commit"
        );
        assert!(apply(
            &mut s,
            "target-state-a",
            records::target_state(TargetState::Paused)
        ));
        assert!(!apply(
            &mut s,
            "target-state-a",
            records::target_state(TargetState::Paused)
        ));
        assert!(!apply(
            &mut s,
            "restart-connector-a",
            records::restart(&RestartRequest {
                connector: "a".into(),
                only_failed: false,
                include_tasks: true,
            })
        ));
        // Connector names that prefix one another are told apart.
        assert!(apply(
            &mut s,
            "connector-a-1",
            records::properties(&props(&[("connector.class", "Y")]))
        ));
        assert_eq!(s.state.tasks("a").len(), 1);
    }
}
