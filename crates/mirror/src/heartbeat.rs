//! `MirrorHeartbeatConnector` and `MirrorHeartbeatTask` natively (Apache's
//! `org.apache.kafka.connect.mirror.MirrorHeartbeatConnector` / `MirrorHeartbeatTask`): one
//! task writes a heartbeat into the target cluster's `heartbeats` topic every
//! `emit.heartbeats.interval.seconds` (1 s), which the source connector of a flow leaving that
//! cluster replicates onwards, so that every cluster downstream sees that the flows work.
//!
//! - The connector creates the heartbeats topic on the target (compacted, one partition,
//!   `heartbeats.topic.replication.factor`, default 3; a refusal to create it is logged) and
//!   asks for one task, or none with `emit.heartbeats.enabled=false`.
//! - The task waits the interval (cut short by a stop), then returns one record: partition 0 of
//!   `heartbeats`, key `{sourceClusterAlias, targetClusterAlias}`, value `{version 0,
//!   timestamp}` (both `Schema.BYTES_SCHEMA`, as Java writes them), record timestamp the
//!   heartbeat's, source partition `{sourceClusterAlias, targetClusterAlias}`, offset
//!   `{offset: 0}`. It waits on the worker's runtime: no thread of its own.

use std::sync::Arc;
use std::time::Duration;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::connector::{Connector, ConnectorType, OffsetAlteration};
use tributary_api::data::{Schema, Value};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::source::{AsyncSourceTask, SourceTaskContext, TaskFuture};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::clients::{MirrorClients, Side};
use crate::policy::ReplicationPolicy;
use crate::records::{self, Heartbeat};
use crate::source_connector::{create_compacted_topic, ADMIN_TIMEOUT_MS_DEFAULT};
use crate::source_task::{bool_setting, long_setting, VERSION};

/// The connector's Java class name.
pub const CONNECTOR_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
/// Its task's class name.
pub const TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatTask";
/// `emit.heartbeats.interval.seconds`'s default (s).
pub const EMIT_HEARTBEATS_INTERVAL_SECONDS_DEFAULT: i64 = 1;
/// `heartbeats.topic.replication.factor`'s default.
pub const HEARTBEATS_REPLICATION_FACTOR_DEFAULT: i64 = 3;

/// The interval between heartbeats, `None` when `emit.heartbeats.enabled=false` (Java's
/// negative `emitHeartbeatsInterval`). Errors name the key.
fn interval(props: &Props) -> ConnectResult<Option<Duration>> {
    if !bool_setting(props, "emit.heartbeats.enabled", true)? {
        return Ok(None);
    }
    let s = long_setting(
        props,
        "emit.heartbeats.interval.seconds",
        EMIT_HEARTBEATS_INTERVAL_SECONDS_DEFAULT,
    )?;
    // A negative interval turns heartbeats off, as in Java.
    Ok((s >= 0).then(|| Duration::from_secs(s as u64)))
}

/// The settings the heartbeat connector reads (beyond the client prefixes).
pub fn config_def() -> ConfigDef {
    let mut def = ConfigDef::new().define(
        "source.cluster.alias",
        ConfigType::String,
        None,
        None,
        Importance::High,
        "The source cluster's name, in the heartbeats' keys (required).",
    );
    for (key, t, default, doc) in [
        (
            "target.cluster.alias",
            ConfigType::String,
            "target",
            "The target cluster's name, in the heartbeats' keys.",
        ),
        (
            "emit.heartbeats.enabled",
            ConfigType::Boolean,
            "true",
            "Whether heartbeats are written at all.",
        ),
        (
            "emit.heartbeats.interval.seconds",
            ConfigType::Long,
            "1",
            "Seconds between heartbeats.",
        ),
        (
            "heartbeats.topic.replication.factor",
            ConfigType::Short,
            "3",
            "Replication factor of the heartbeats topic; -1 for the broker's default.",
        ),
        (
            "replication.policy.class",
            ConfigType::Class,
            crate::policy::DEFAULT_POLICY_CLASS,
            "Names the heartbeats topic: DefaultReplicationPolicy or IdentityReplicationPolicy.",
        ),
        (
            "admin.timeout.ms",
            ConfigType::Long,
            "60000",
            "How long (ms) creating the heartbeats topic may take.",
        ),
    ] {
        def = def.define(key, t, Some(Some(default)), None, Importance::Medium, doc);
    }
    def
}

/// The settings the native heartbeat connector does not implement: a `forwarding.admin.class`
/// or `metric.reporters` other than Apache's default, named with the key.
pub fn refused_settings(props: &Props) -> Vec<(String, String)> {
    crate::source_connector::refused_settings(props)
        .into_iter()
        .filter(|(k, _)| k == "forwarding.admin.class" || k == "metric.reporters")
        .map(|(k, m)| {
            (
                k,
                m.replace("MirrorSourceConnector", "MirrorHeartbeatConnector"),
            )
        })
        .collect()
}

/// The required `source.cluster.alias`.
fn source_alias(props: &Props) -> ConnectResult<String> {
    props
        .get("source.cluster.alias")
        .map(|a| a.trim().to_string())
        .ok_or_else(|| {
            ConnectError::config(
                "Missing required configuration \"source.cluster.alias\" which has no default value.",
            )
        })
}

/// MirrorMaker 2's heartbeat connector, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorHeartbeatConnector {
    props: Props,
    interval: Option<Duration>,
}

impl MirrorHeartbeatConnector {
    /// A connector that has not been started.
    pub fn new() -> MirrorHeartbeatConnector {
        MirrorHeartbeatConnector::default()
    }
}

impl Connector for MirrorHeartbeatConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }

    fn task_class(&self) -> String {
        TASK_CLASS.to_string()
    }

    /// Checks the settings and creates the heartbeats topic on the target (a failure is
    /// logged, as Java's scheduler logs it). Errors: a setting (named).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        source_alias(props)?;
        if let Some((key, message)) = refused_settings(props).into_iter().next() {
            return Err(ConnectError::config(format!("{key}: {message}")));
        }
        let policy = ReplicationPolicy::from_props(props).map_err(ConnectError::config)?;
        // The target's admin client is made here, so that its settings fail the connector;
        // only the topic's creation is a logged step, as in Java's scheduler.
        MirrorClients::new(props).client(
            Side::Target,
            tributary_runtime::config::clients::ClientKind::Admin,
            "heartbeats-target-admin",
            &[],
        )?;
        self.interval = interval(props)?;
        self.props = props.clone();
        let factor = crate::source_connector::short(
            props,
            "heartbeats.topic.replication.factor",
            HEARTBEATS_REPLICATION_FACTOR_DEFAULT,
        )?;
        let timeout = long_setting(props, "admin.timeout.ms", ADMIN_TIMEOUT_MS_DEFAULT)?;
        if let Err(e) = create_compacted_topic(
            props,
            Side::Target,
            "heartbeats-target-admin",
            policy.heartbeats_topic(),
            factor,
            Duration::from_millis(timeout.max(1) as u64),
        ) {
            tracing::error!("Scheduler for MirrorHeartbeatConnector caught exception in scheduled task: creating internal topics: {e}");
        }
        Ok(())
    }

    /// One task with the connector's configuration, none when heartbeats are off.
    fn task_configs(&mut self, _max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(match self.interval {
            Some(_) => vec![self.props.clone()],
            None => Vec::new(),
        })
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }

    /// Connect's checks of [`config_def`], then the settings the native connector refuses
    /// and the replication policy (each error on its key).
    fn validate(&self, props: &Props) -> Vec<tributary_api::config::ConfigValue> {
        let mut values = self.config().validate(props);
        let mut errors = refused_settings(props);
        if let Err(e) = ReplicationPolicy::from_props(props) {
            errors.push((crate::policy::POLICY_CLASS_CONFIG.to_string(), e));
        }
        for (key, message) in errors {
            let value = props.get(&key).map(String::as_str);
            tributary_api::config::ConfigValue::add_error(&mut values, &key, value, message);
        }
        values
    }

    /// Checks offsets a user writes (KIP-875) as Java's `alterOffsets`: string
    /// `sourceClusterAlias` and `targetClusterAlias`, and an `offset` of 0 (the only one the
    /// task writes); removals always pass.
    fn alter_offsets(
        &mut self,
        _config: &Props,
        offsets: OffsetAlteration<'_>,
    ) -> ConnectResult<bool> {
        let OffsetAlteration::Source(entries) = offsets else {
            return Ok(true);
        };
        for (partition, offset) in entries {
            let Some(offset) = offset else { continue };
            crate::offset_validation::validate_string_keys(
                partition,
                &["sourceClusterAlias", "targetClusterAlias"],
            )?;
            crate::offset_validation::validate_offset(partition, offset, true)?;
        }
        Ok(true)
    }
}

/// MirrorMaker 2's heartbeat task, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorHeartbeatTask {
    context: Option<SourceTaskContext>,
    running: Option<Running>,
}

struct Running {
    source_alias: String,
    target_alias: String,
    topic: String,
    interval: Duration,
    partition: Arc<SourceMap>,
}

impl MirrorHeartbeatTask {
    /// A task that has not been started.
    pub fn new() -> MirrorHeartbeatTask {
        MirrorHeartbeatTask::default()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl AsyncSourceTask for MirrorHeartbeatTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(async move {
            let source_alias = source_alias(props)?;
            let target_alias = MirrorClients::new(props).target_alias();
            let policy = ReplicationPolicy::from_props(props).map_err(ConnectError::config)?;
            // With heartbeats off the connector asks for no task; a task given such a
            // configuration anyway waits as if the interval were a second.
            let interval = interval(props)?.unwrap_or(Duration::from_secs(1));
            let partition = Arc::new(
                Heartbeat {
                    source_cluster_alias: source_alias.clone(),
                    target_cluster_alias: target_alias.clone(),
                    timestamp: 0,
                }
                .source_partition(),
            );
            self.running = Some(Running {
                source_alias,
                target_alias,
                topic: policy.heartbeats_topic().to_string(),
                interval,
                partition,
            });
            Ok(())
        })
    }

    /// Waits the interval (nothing when stopped meanwhile), then one heartbeat.
    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            let Some(r) = &self.running else {
                return Ok(Vec::new());
            };
            if !crate::source_task::wait_unless_stopped(self.context.as_ref(), r.interval).await {
                return Ok(Vec::new());
            }
            let heartbeat = Heartbeat {
                source_cluster_alias: r.source_alias.clone(),
                target_cluster_alias: r.target_alias.clone(),
                timestamp: now_ms(),
            };
            let key = heartbeat.key().map_err(ConnectError::data)?;
            Ok(vec![SourceRecord {
                source_partition: Arc::clone(&r.partition),
                source_offset: records::source_offset(0),
                topic: r.topic.clone(),
                kafka_partition: Some(0),
                key_schema: Some(Schema::bytes_schema()),
                key: Value::Bytes(key),
                value_schema: Some(Schema::bytes_schema()),
                value: Value::Bytes(heartbeat.value()),
                timestamp: Some(heartbeat.timestamp),
                headers: Default::default(),
            }])
        })
    }

    fn stop(&mut self) -> TaskFuture<'_, ()> {
        self.running = None;
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_heartbeat_is_written_after_each_interval_as_java_writes_it() {
        let mut task = MirrorHeartbeatTask::new();
        let p = props(&[
            ("source.cluster.alias", "A"),
            ("target.cluster.alias", "B"),
            ("emit.heartbeats.interval.seconds", "5"),
        ]);
        task.start(&p).await.unwrap();
        let before = tokio::time::Instant::now();
        let records = task.poll().await.unwrap();
        assert_eq!(
            before.elapsed(),
            Duration::from_secs(5),
            "after the interval"
        );
        let [r] = &records[..] else {
            panic!("one heartbeat: {records:?}")
        };
        assert_eq!(
            (r.topic.as_str(), r.kafka_partition),
            ("heartbeats", Some(0))
        );
        let (Value::Bytes(k), Value::Bytes(v)) = (&r.key, &r.value) else {
            panic!("bytes: {r:?}")
        };
        let hb = Heartbeat::decode(k, v).unwrap();
        assert_eq!(
            (
                hb.source_cluster_alias.as_str(),
                hb.target_cluster_alias.as_str()
            ),
            ("A", "B")
        );
        assert_eq!(r.timestamp, Some(hb.timestamp));
        assert_eq!(*r.source_partition, hb.source_partition());
        assert_eq!(r.source_offset, records::source_offset(0));
        assert!(
            !r.key_schema.as_ref().unwrap().optional && !r.value_schema.as_ref().unwrap().optional
        );
    }

    #[test]
    fn no_task_without_heartbeats_and_the_alias_is_required() {
        let mut c = MirrorHeartbeatConnector::new();
        c.interval = interval(&props(&[("emit.heartbeats.enabled", "false")])).unwrap();
        assert!(c.task_configs(3).unwrap().is_empty());
        c.interval = interval(&props(&[("emit.heartbeats.interval.seconds", "-1")])).unwrap();
        assert!(
            c.task_configs(3).unwrap().is_empty(),
            "a negative interval: no heartbeats"
        );
        c.interval = interval(&props(&[])).unwrap();
        c.props = props(&[("source.cluster.alias", "A")]);
        assert_eq!(
            c.task_configs(3).unwrap(),
            vec![c.props.clone()],
            "one task, whatever tasks.max"
        );
        let e = MirrorHeartbeatConnector::new()
            .start(&props(&[]))
            .unwrap_err();
        assert!(e.to_string().contains("source.cluster.alias"), "{e}");
        let e = MirrorHeartbeatConnector::new()
            .start(&props(&[("source.cluster.alias", "A")]))
            .unwrap_err();
        assert!(
            e.to_string().contains("target.cluster.bootstrap.servers"),
            "{e}"
        );
        let e = MirrorHeartbeatConnector::new()
            .start(&props(&[
                ("source.cluster.alias", "A"),
                ("forwarding.admin.class", "com.example.Admin"),
            ]))
            .unwrap_err();
        assert!(e.to_string().contains("forwarding.admin.class"), "{e}");
    }

    #[test]
    fn altered_offsets_must_be_zero() {
        let map = |j: serde_json::Value| -> SourceMap { j.as_object().unwrap().clone() };
        let partition =
            map(serde_json::json!({"sourceClusterAlias": "A", "targetClusterAlias": "B"}));
        let mut c = MirrorHeartbeatConnector::new();
        let mut alter = |offset: serde_json::Value| {
            c.alter_offsets(
                &Props::new(),
                OffsetAlteration::Source(&[(partition.clone(), Some(map(offset)))]),
            )
        };
        assert!(alter(serde_json::json!({"offset": 0})).unwrap());
        assert_eq!(
            alter(serde_json::json!({"offset": 3})).unwrap_err().to_string(),
            "Source offset {offset=3} for source partition {sourceClusterAlias=A, targetClusterAlias=B} has an invalid value 3 for the 'offset' key; the only accepted value is 0"
        );
    }
}
