//! `MirrorCheckpointConnector` natively (Apache's
//! `org.apache.kafka.connect.mirror.MirrorCheckpointConnector`): finds the source cluster's
//! consumer groups whose offsets are worth translating and shares them among
//! [`crate::checkpoint_task::MirrorCheckpointTask`]s, which write checkpoints to the target's
//! `<source>.checkpoints.internal` and, with `sync.group.offsets.enabled`, commit the
//! translated offsets for the groups on the target (KIP-545).
//!
//! On start (blocking, as Java's, each call up to `admin.timeout.ms`): the checkpoints topic is
//! created on the target (compacted, one partition, `checkpoints.topic.replication.factor`,
//! default 3; a refusal is logged), then the source's consumer groups are listed and kept when
//! the group filter (`groups`, `groups.exclude`) accepts them and they committed offsets of at
//! least one topic the topic filter (`topics`, `topics.exclude`) accepts. With
//! `refresh.groups.enabled`, the same runs every `refresh.groups.interval.seconds` (600 s) on the
//! connector's own thread, and a change asks the worker for new task configurations. Until
//! the first listing succeeded, task configurations are refused as retriable (Java's
//! `RetriableException`), so that the worker asks again.
//!
//! Not native yet, and refused (naming the setting): custom `group.filter.class`,
//! `topic.filter.class`, `forwarding.admin.class` and `metric.reporters`; the checkpoint
//! metrics (`checkpoint-latency-ms`) are not reported yet. Apache's class runs them, selected
//! with `connector.plugin.version` (KIP-891).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tributary_api::config::{ConfigDef, ConfigType, ConfigValue, Importance};
use tributary_api::connector::{Connector, ConnectorContext, ConnectorType, OffsetAlteration};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::clients::{MirrorClients, Side};
use crate::consumer_groups::GroupAdmin;
use crate::filter::NameFilter;
use crate::offset_validation::{validate_offset, validate_source_partition};
use crate::policy::ReplicationPolicy;
use crate::source_connector::{create_compacted_topic, short, StopFlag, ADMIN_TIMEOUT_MS_DEFAULT};
use crate::source_task::{bool_setting, long_setting, VERSION};

/// The connector's Java class name.
pub const CONNECTOR_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector";
/// Its tasks' class name.
pub const TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointTask";
/// `checkpoints.topic.replication.factor`'s default.
pub const CHECKPOINTS_REPLICATION_FACTOR_DEFAULT: i64 = 3;
/// `refresh.groups.interval.seconds`'s default (s).
pub const REFRESH_GROUPS_INTERVAL_SECONDS_DEFAULT: i64 = 600;
/// `emit.checkpoints.interval.seconds`'s default (s).
pub const EMIT_CHECKPOINTS_INTERVAL_SECONDS_DEFAULT: i64 = 60;
/// `sync.group.offsets.interval.seconds`'s default (s).
pub const SYNC_GROUP_OFFSETS_INTERVAL_SECONDS_DEFAULT: i64 = 60;
/// The task setting naming the groups a task checkpoints (comma-separated).
pub const TASK_CONSUMER_GROUPS: &str = "task.assigned.groups";

/// The only classes the native connector implements for its pluggable settings.
const DEFAULT_CLASSES: &[(&str, &str)] = &[
    (
        "group.filter.class",
        "org.apache.kafka.connect.mirror.DefaultGroupFilter",
    ),
    (
        "topic.filter.class",
        "org.apache.kafka.connect.mirror.DefaultTopicFilter",
    ),
    (
        "forwarding.admin.class",
        "org.apache.kafka.clients.admin.ForwardingAdmin",
    ),
    (
        "metric.reporters",
        "org.apache.kafka.common.metrics.JmxReporter",
    ),
];

/// The settings the native checkpoint connector does not implement (a custom class for a
/// pluggable setting), each with its key and a pointer to Apache's class.
pub fn refused_settings(props: &Props) -> Vec<(String, String)> {
    let mut refused = Vec::new();
    for (key, default) in DEFAULT_CLASSES {
        if let Some(v) = props.get(*key) {
            let v = v.trim();
            if !v.is_empty() && v != *default {
                refused.push((
                    key.to_string(),
                    format!("Tributary's native MirrorCheckpointConnector implements only {default} for {key}, not {v}: run Apache's MirrorCheckpointConnector for it (connector.plugin.version naming its version, with connect-mirror on plugin.path)"),
                ));
            }
        }
    }
    refused
}

/// The connector's settings (MirrorCheckpointConfig's keys the native connector reads; the
/// client prefixes are open-ended and not listed).
pub fn config_def() -> ConfigDef {
    let mut def = ConfigDef::new().define(
        "source.cluster.alias",
        ConfigType::String,
        None,
        None,
        Importance::High,
        "The source cluster's name, in the checkpoints topic's name (required).",
    );
    for (key, t, default, doc) in [
        ("enabled", ConfigType::Boolean, "true", "Whether the flow checkpoints at all."),
        ("target.cluster.alias", ConfigType::String, "target", "The target cluster's name."),
        ("replication.policy.class", ConfigType::Class, crate::policy::DEFAULT_POLICY_CLASS, "How remote topics are named: DefaultReplicationPolicy or IdentityReplicationPolicy."),
        ("replication.policy.separator", ConfigType::String, ".", "Between the source alias and the topic in remote topic names."),
        ("topics", ConfigType::List, crate::filter::TOPICS_DEFAULT, "Topics whose offsets are checkpointed: names or regular expressions."),
        ("topics.exclude", ConfigType::List, crate::filter::TOPICS_EXCLUDE_DEFAULT, "Topics never checkpointed: names or regular expressions."),
        ("groups", ConfigType::List, crate::filter::GROUPS_DEFAULT, "Consumer groups to checkpoint: names or regular expressions."),
        ("groups.exclude", ConfigType::List, crate::filter::GROUPS_EXCLUDE_DEFAULT, "Consumer groups never checkpointed: names or regular expressions."),
        ("consumer.poll.timeout.ms", ConfigType::Long, "1000", "How long (ms) a read of the internal topics waits for records."),
        ("refresh.groups.enabled", ConfigType::Boolean, "true", "Whether new consumer groups are looked for periodically."),
        ("refresh.groups.interval.seconds", ConfigType::Long, "600", "How often (s) new consumer groups are looked for."),
        ("emit.checkpoints.enabled", ConfigType::Boolean, "true", "Whether checkpoints are written (the connector cannot run without)."),
        ("emit.checkpoints.interval.seconds", ConfigType::Long, "60", "How often (s) each group's offsets are checkpointed."),
        ("sync.group.offsets.enabled", ConfigType::Boolean, "false", "Whether translated offsets are committed for the groups on the target while they have no member there."),
        ("sync.group.offsets.interval.seconds", ConfigType::Long, "60", "How often (s) translated offsets are committed on the target."),
        ("checkpoints.topic.replication.factor", ConfigType::Short, "3", "Replication factor of the checkpoints topic; -1 for the broker's default."),
        ("offset-syncs.topic.location", ConfigType::String, "source", "Which cluster holds the offset-syncs topic: source or target."),
        ("emit.offset-syncs.enabled", ConfigType::Boolean, "true", "Must stay true: checkpoints are translated through the offset syncs."),
        ("admin.timeout.ms", ConfigType::Long, "60000", "How long (ms) one administrative call may take."),
    ] {
        def = def.define(key, t, Some(Some(default)), None, Importance::Medium, doc);
    }
    def
}

/// An interval setting pair (`<x>.enabled`, `<x>.interval.seconds`): `None` when disabled or
/// negative (Java's negative `Duration`, which its scheduler never runs). Errors name the key.
pub(crate) fn interval(
    props: &Props,
    enabled_key: &str,
    enabled_default: bool,
    seconds_key: &str,
    seconds_default: i64,
) -> ConnectResult<Option<Duration>> {
    if !bool_setting(props, enabled_key, enabled_default)? {
        return Ok(None);
    }
    let s = long_setting(props, seconds_key, seconds_default)?;
    Ok((s >= 0).then(|| Duration::from_secs(s as u64)))
}

/// The parsed settings the connector and its tasks share.
pub(crate) struct CheckpointSettings {
    pub enabled: bool,
    pub policy: ReplicationPolicy,
    pub topics: NameFilter,
    pub groups: NameFilter,
    pub source_alias: String,
    pub target_alias: String,
    pub checkpoints_topic: String,
    pub replication_factor: i32,
    pub refresh_groups: Option<Duration>,
    pub emit_checkpoints: Option<Duration>,
    pub sync_group_offsets: Option<Duration>,
    pub admin_timeout: Duration,
}

impl CheckpointSettings {
    /// Errors: a refused setting, a missing `source.cluster.alias`, a bad value (named).
    pub fn parse(props: &Props) -> ConnectResult<CheckpointSettings> {
        if let Some((key, message)) = refused_settings(props).into_iter().next() {
            return Err(ConnectError::config(format!("{key}: {message}")));
        }
        if !props.contains_key("source.cluster.alias") {
            return Err(ConnectError::config(
                "Missing required configuration \"source.cluster.alias\" which has no default value.",
            ));
        }
        let policy = ReplicationPolicy::from_props(props).map_err(ConnectError::config)?;
        let clients = MirrorClients::new(props);
        let source_alias = clients.source_alias();
        // As Java's scheduler: a zero refresh interval is refused (a negative one is off).
        let refresh_groups = interval(
            props,
            "refresh.groups.enabled",
            true,
            "refresh.groups.interval.seconds",
            REFRESH_GROUPS_INTERVAL_SECONDS_DEFAULT,
        )?;
        let sync_group_offsets = interval(
            props,
            "sync.group.offsets.enabled",
            false,
            "sync.group.offsets.interval.seconds",
            SYNC_GROUP_OFFSETS_INTERVAL_SECONDS_DEFAULT,
        )?;
        for (key, i) in [
            ("refresh.groups.interval.seconds", refresh_groups),
            ("sync.group.offsets.interval.seconds", sync_group_offsets),
        ] {
            if i == Some(Duration::ZERO) {
                return Err(ConnectError::config(format!(
                    "Invalid value 0 for configuration {key}: a periodic step needs a positive interval (a negative one turns it off)"
                )));
            }
        }
        crate::source_task::offset_syncs_topic(props, &policy)?;
        Ok(CheckpointSettings {
            enabled: bool_setting(props, "enabled", true)?,
            topics: NameFilter::topics(props).map_err(ConnectError::config)?,
            groups: NameFilter::groups(props).map_err(ConnectError::config)?,
            checkpoints_topic: policy.checkpoints_topic(&source_alias),
            target_alias: clients.target_alias(),
            source_alias,
            policy,
            replication_factor: short(
                props,
                "checkpoints.topic.replication.factor",
                CHECKPOINTS_REPLICATION_FACTOR_DEFAULT,
            )?,
            refresh_groups,
            emit_checkpoints: interval(
                props,
                "emit.checkpoints.enabled",
                true,
                "emit.checkpoints.interval.seconds",
                EMIT_CHECKPOINTS_INTERVAL_SECONDS_DEFAULT,
            )?,
            sync_group_offsets,
            admin_timeout: Duration::from_millis(
                long_setting(props, "admin.timeout.ms", ADMIN_TIMEOUT_MS_DEFAULT)?.max(1) as u64,
            ),
        })
    }
}

/// Java's `MirrorCheckpointConfig.validate`: the connector cannot run without checkpoints or
/// without offset syncs (nothing is checked when the flow is disabled). (key, message) pairs.
pub fn checkpoint_config_errors(props: &Props) -> Vec<(String, String)> {
    let mut errors = Vec::new();
    if props.get("enabled").map(String::as_str) == Some("false") {
        return errors;
    }
    if props.get("emit.checkpoints.enabled").map(String::as_str) == Some("false") {
        errors.push((
            "emit.checkpoints.enabled".to_string(),
            "MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false"
                .to_string(),
        ));
    }
    if props.get("emit.offset-syncs.enabled").map(String::as_str) == Some("false") {
        errors.push((
            "emit.offset-syncs.enabled".to_string(),
            "MirrorCheckpointConnector can't run without offset syncs".to_string(),
        ));
    }
    errors
}

/// Splits `groups` into `tasks` contiguous runs, the first ones one longer when they do not
/// divide evenly (Connect's `ConnectorUtils.groupPartitions`).
pub fn group_partitions(groups: &[String], tasks: usize) -> Vec<Vec<String>> {
    if tasks == 0 {
        return Vec::new();
    }
    let (per, extra) = (groups.len() / tasks, groups.len() % tasks);
    let mut out = Vec::with_capacity(tasks);
    let mut at = 0;
    for i in 0..tasks {
        let n = per + usize::from(i < extra);
        out.push(groups[at..at + n].to_vec());
        at += n;
    }
    out
}

/// The consumer groups to checkpoint (`findConsumerGroups`): listed on the source, accepted by
/// the group filter, with committed offsets of a topic the topic filter accepts. A group whose
/// offsets cannot be read now is left out (logged) and looked at again at the next refresh.
fn find_groups(
    runtime: &tokio::runtime::Runtime,
    admin: &GroupAdmin,
    settings: &CheckpointSettings,
) -> ConnectResult<BTreeSet<String>> {
    let listed = admin.list_consumer_groups()?;
    let mut out = BTreeSet::new();
    for g in listed {
        if !settings.groups.accepts(&g.group) {
            continue;
        }
        let offsets = match runtime.block_on(admin.committed_offsets(&g.group)) {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!(
                    "Could not list offsets for consumer group {} on {} cluster, left out until the next refresh: {e}",
                    g.group, settings.source_alias
                );
                continue;
            }
        };
        if offsets.iter().any(|o| settings.topics.accepts(&o.topic)) {
            out.insert(g.group);
        } else {
            tracing::debug!(
                "Ignoring group {} which has no offsets for topics the topic filter accepts",
                g.group
            );
        }
    }
    Ok(out)
}

/// Java's `Scheduler`: a step that fails is logged and the connector carries on.
fn logged(what: &str, r: ConnectResult<()>) {
    if let Err(e) = r {
        tracing::error!(
            "Scheduler for MirrorCheckpointConnector caught exception in scheduled task: {what}: {e}"
        );
    }
}

/// How long `stop` waits for a refresh in progress before leaving its thread to finish alone.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// MirrorMaker 2's checkpoint connector, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorCheckpointConnector {
    props: Props,
    context: Option<Arc<dyn ConnectorContext>>,
    /// Whether tasks are to run at all (enabled, checkpoints emitted).
    emits: bool,
    /// The groups to checkpoint; `None` until the first listing succeeded.
    known: Arc<Mutex<Option<BTreeSet<String>>>>,
    refresher: Option<(Arc<StopFlag>, JoinHandle<()>)>,
}

impl MirrorCheckpointConnector {
    /// A connector that has not been started.
    pub fn new() -> MirrorCheckpointConnector {
        MirrorCheckpointConnector::default()
    }
}

impl Drop for MirrorCheckpointConnector {
    fn drop(&mut self) {
        if let Some((stop, _)) = &self.refresher {
            stop.stop();
        }
    }
}

impl Connector for MirrorCheckpointConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }

    fn task_class(&self) -> String {
        TASK_CLASS.to_string()
    }

    fn initialize(&mut self, context: Arc<dyn ConnectorContext>) {
        self.context = Some(context);
    }

    /// Creates the checkpoints topic and lists the groups (blocking; a step that fails is
    /// logged and the refresh tries again), then starts the periodic refresh on a thread of
    /// its own. Errors: a refused or invalid setting (named), a client that cannot be made.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.props = props.clone();
        self.known = Arc::default();
        let settings = CheckpointSettings::parse(props)?;
        self.emits = settings.enabled && settings.emit_checkpoints.is_some();
        if !settings.enabled {
            return Ok(());
        }
        let admin = GroupAdmin::new(
            props,
            Side::Source,
            "checkpoint-source-admin",
            settings.admin_timeout,
            true,
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ConnectError::connect(format!("Could not start a runtime: {e}")))?;
        logged(
            "creating internal topics",
            create_compacted_topic(
                props,
                Side::Target,
                "checkpoint-target-admin",
                &settings.checkpoints_topic,
                settings.replication_factor,
                settings.admin_timeout,
            ),
        );
        logged(
            "loading initial consumer groups",
            find_groups(&runtime, &admin, &settings).map(|groups| {
                tracing::info!(
                    "Started {} with {} consumer groups.",
                    props.get("name").map(String::as_str).unwrap_or_default(),
                    groups.len()
                );
                *self.known.lock().unwrap_or_else(|e| e.into_inner()) = Some(groups);
            }),
        );
        if let Some(every) = settings.refresh_groups {
            let stop = Arc::new(StopFlag::default());
            let flag = Arc::clone(&stop);
            let known = Arc::clone(&self.known);
            let context = self.context.clone();
            let thread = std::thread::Builder::new()
                .name("mirror-checkpoint-refresh".into())
                .spawn(move || {
                    while !flag.wait(every) {
                        match find_groups(&runtime, &admin, &settings) {
                            Ok(groups) => {
                                let mut k = known.lock().unwrap_or_else(|e| e.into_inner());
                                if k.as_ref() != Some(&groups) {
                                    tracing::info!(
                                        "Found {} consumer groups for {}->{}; previously {}.",
                                        groups.len(),
                                        settings.source_alias,
                                        settings.target_alias,
                                        k.as_ref().map_or(0, BTreeSet::len)
                                    );
                                    *k = Some(groups);
                                    drop(k);
                                    if let Some(c) = &context {
                                        c.request_task_reconfiguration();
                                    }
                                }
                            }
                            Err(e) => logged("refreshing consumer groups", Err(e)),
                        }
                    }
                    flag.finished();
                })
                .map_err(|e| {
                    ConnectError::connect(format!("Could not start the refresh thread: {e}"))
                })?;
            self.refresher = Some((stop, thread));
        }
        Ok(())
    }

    /// The known groups in contiguous runs among at most `max_tasks` tasks, each task's
    /// configuration the connector's with `task.assigned.groups` and `task.index`; none when
    /// disabled, without checkpoints or without groups. Errors (retriable): the groups are not
    /// listed yet.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if !bool_setting(&self.props, "enabled", true)? {
            return Ok(Vec::new());
        }
        let Some(known) = known else {
            return Err(ConnectError::Retriable(
                "Timeout while loading consumer groups.".to_string(),
            ));
        };
        if !self.emits || known.is_empty() {
            return Ok(Vec::new());
        }
        let groups: Vec<String> = known.into_iter().collect();
        let tasks = max_tasks.min(groups.len());
        Ok(group_partitions(&groups, tasks)
            .into_iter()
            .enumerate()
            .map(|(i, groups)| {
                let mut p = self.props.clone();
                p.insert(TASK_CONSUMER_GROUPS.into(), groups.join(","));
                p.insert("task.index".into(), i.to_string());
                p
            })
            .collect())
    }

    /// Stops the refresh: waits up to 10 s for one in progress, then leaves it to finish on
    /// its own.
    fn stop(&mut self) -> ConnectResult<()> {
        if let Some((stop, thread)) = self.refresher.take() {
            stop.stop();
            if stop.wait_finished(STOP_WAIT) {
                thread.join().ok();
            } else {
                tracing::warn!(
                    "A consumer group refresh still runs after {STOP_WAIT:?}; it ends on its own"
                );
            }
        }
        Ok(())
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }

    /// Connect's checks of [`config_def`], then the settings the native connector refuses,
    /// the policy and filters, and Java's checkpoint checks (each error on its key).
    fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        let mut values = self.config().validate(props);
        let mut errors = refused_settings(props);
        if let Err(e) = ReplicationPolicy::from_props(props) {
            errors.push((crate::policy::POLICY_CLASS_CONFIG.to_string(), e));
        }
        if let Err(e) = NameFilter::topics(props) {
            errors.push((crate::filter::TOPICS_CONFIG.to_string(), e));
        }
        if let Err(e) = NameFilter::groups(props) {
            errors.push((crate::filter::GROUPS_CONFIG.to_string(), e));
        }
        errors.extend(checkpoint_config_errors(props));
        for (key, message) in errors {
            let value = props.get(&key).map(String::as_str);
            ConfigValue::add_error(&mut values, &key, value, message);
        }
        values
    }

    /// Checks offsets a user writes (KIP-875) as Java's `alterOffsets`: string `group` and
    /// `topic`, a non-negative 32-bit `partition`, an `offset` of 0 (the only one the task
    /// writes); removals always pass.
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
            validate_source_partition(partition, &["group", "topic"])?;
            validate_offset(partition, offset, true)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::record::SourceMap;

    fn props(pairs: &[(&str, &str)]) -> Props {
        std::iter::once(("source.cluster.alias", "A"))
            .chain(pairs.iter().copied())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn groups_are_shared_in_contiguous_runs_as_connect_groups_partitions() {
        let groups: Vec<String> = (0..5).map(|i| format!("g{i}")).collect();
        assert_eq!(
            group_partitions(&groups, 3),
            [vec!["g0", "g1"], vec!["g2", "g3"], vec!["g4"]]
        );
        assert_eq!(group_partitions(&groups, 1), std::slice::from_ref(&groups));
        assert!(group_partitions(&groups, 0).is_empty());
    }

    #[test]
    fn task_configs_wait_for_the_first_listing_and_name_each_tasks_groups() {
        let mut c = MirrorCheckpointConnector::new();
        c.props = props(&[("name", "cp")]);
        c.emits = true;
        let e = c.task_configs(2).unwrap_err();
        assert!(matches!(e, ConnectError::Retriable(_)), "{e:?}");
        *c.known.lock().unwrap() = Some(BTreeSet::new());
        assert!(c.task_configs(2).unwrap().is_empty(), "no group, no task");
        *c.known.lock().unwrap() = Some(["b", "a", "c"].map(String::from).into());
        let configs = c.task_configs(2).unwrap();
        let assigned: Vec<(&str, &str)> = configs
            .iter()
            .map(|p| (p[TASK_CONSUMER_GROUPS].as_str(), p["task.index"].as_str()))
            .collect();
        assert_eq!(assigned, [("a,b", "0"), ("c", "1")]);
        assert_eq!(
            configs[0]["name"], "cp",
            "the connector's settings are kept"
        );
        c.emits = false;
        assert!(
            c.task_configs(2).unwrap().is_empty(),
            "no checkpoints, no task"
        );
    }

    #[test]
    fn validation_adds_javas_checkpoint_checks_and_refusals() {
        let c = MirrorCheckpointConnector::new();
        let error_of = |values: &[ConfigValue], key: &str| {
            values
                .iter()
                .find(|v| v.name == key)
                .map(|v| v.errors.join(" "))
                .unwrap_or_default()
        };
        let values = c.validate(&props(&[
            ("emit.checkpoints.enabled", "false"),
            ("emit.offset-syncs.enabled", "false"),
            ("group.filter.class", "com.example.MyFilter"),
            ("groups", "ok, (unclosed"),
        ]));
        assert!(error_of(&values, "emit.checkpoints.enabled")
            .contains("can't run with emit.checkpoints.enabled set to false"));
        assert!(error_of(&values, "emit.offset-syncs.enabled")
            .contains("can't run without offset syncs"));
        assert!(error_of(&values, "group.filter.class").contains("com.example.MyFilter"));
        assert!(!error_of(&values, "groups").is_empty());
        // A disabled flow is not checked.
        let values = c.validate(&props(&[
            ("enabled", "false"),
            ("emit.checkpoints.enabled", "false"),
        ]));
        assert!(error_of(&values, "emit.checkpoints.enabled").is_empty());
        let e = CheckpointSettings::parse(&props(&[("refresh.groups.interval.seconds", "0")]))
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("refresh.groups.interval.seconds"),
            "{e}"
        );
    }

    #[test]
    fn altered_offsets_are_checked_as_java_checks_them() {
        let map = |j: serde_json::Value| -> SourceMap { j.as_object().unwrap().clone() };
        let good = map(serde_json::json!({"group": "g", "partition": 0, "topic": "A.t"}));
        let mut c = MirrorCheckpointConnector::new();
        let mut check = |partition: SourceMap, offset: Option<SourceMap>| {
            c.alter_offsets(
                &Props::new(),
                OffsetAlteration::Source(&[(partition, offset)]),
            )
        };
        assert!(check(good.clone(), Some(map(serde_json::json!({"offset": 0})))).unwrap());
        assert!(
            check(map(serde_json::json!({"x": 1})), None).unwrap(),
            "removals always pass"
        );
        let e = check(good, Some(map(serde_json::json!({"offset": 1})))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Source offset {offset=1} for source partition {group=g, partition=0, topic=A.t} has an invalid value 1 for the 'offset' key; the only accepted value is 0"
        );
        let e = check(
            map(serde_json::json!({"partition": 0, "topic": "t"})),
            Some(map(serde_json::json!({"offset": 0}))),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Source partition {partition=0, topic=t} is missing the 'group' key, which is required"
        );
    }
}
