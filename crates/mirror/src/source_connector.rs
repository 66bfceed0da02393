//! `MirrorSourceConnector` natively (Apache's
//! `org.apache.kafka.connect.mirror.MirrorSourceConnector`): finds the source cluster's topics
//! to replicate, creates their remote topics on the target, and shares their partitions among
//! [`crate::source_task::MirrorSourceTask`]s.
//!
//! On start (as Java's start, before the first task configurations): the offset-syncs topic is
//! created (`emit.offset-syncs.enabled`; compacted, one partition,
//! `offset-syncs.topic.replication.factor`), then the source's topics are listed and filtered
//! (`topics`, `topics.exclude`, heartbeats topics with `heartbeats.replication.enabled`, never
//! internal topics nor a topic that came from the target: a cycle), and every remote topic
//! missing on the target is created with the source topic's partition count,
//! `replication.factor` (default 2; -1 the broker's default) and the source topic's settings
//! that `config.properties.exclude` / `use.defaults.from` let through; a remote topic with fewer
//! partitions than its source gains the missing ones. With `refresh.topics.enabled`, the same
//! runs every `refresh.topics.interval.seconds` on the connector's own thread, and a change in
//! the source's partitions (or one missing on the target) asks the worker for new task
//! configurations.
//!
//! Also on that thread, as Java's scheduler runs them (first at start, then every interval):
//! - **topic ACL sync** (`sync.topic.acls.enabled`, every `sync.topic.acls.interval.seconds`,
//!   600 s): the source's literal ACLs of replicated topics (but those allowing WRITE, which
//!   only MirrorMaker may do on a remote topic) are created for the remote topics, an ALLOW ALL
//!   becoming ALLOW READ; a source without an authorizer is logged once and skipped;
//! - **topic config sync** (`sync.topic.configs.enabled`, every
//!   `sync.topic.configs.interval.seconds`, 600 s): each replicated topic's settings (neither
//!   read-only nor sensitive nor the broker's static ones, let through by
//!   `config.properties.exclude`) are set on its remote topic, those at their default deleted
//!   there unless `use.defaults.from=source` (IncrementalAlterConfigs, KIP-339); a target
//!   without that API fails the connector, as Java's does.
//!
//! Not native yet, and refused (naming the setting): custom `topic.filter.class`,
//! `config.property.filter.class`, `forwarding.admin.class` and `metric.reporters`;
//! MirrorMaker's own metrics are not reported yet. Apache's class runs them, selected with
//! `connector.plugin.version` (KIP-891).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::admin::{
    AdminClient, AdminOptions, ConfigSource, NewPartitions, NewTopic, ResourceSpecifier,
    TopicReplication,
};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientConfig;
use tributary_api::config::{ConfigDef, ConfigType, ConfigValue, Importance};
use tributary_api::connector::{
    Connector, ConnectorContext, ConnectorType, ExactlyOnceSupport, OffsetAlteration,
};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_runtime::config::clients::ClientKind;
use tributary_runtime::kafka_client::{set_initial_token, WorkerClientContext};

use crate::assignment;
use crate::clients::{MirrorClients, Side};
use crate::consumer_groups::GroupAdmin;
use crate::filter::{ConfigPropertyFilter, NameFilter};
use crate::offset_validation::{validate_offset, validate_source_partition};
use crate::policy::ReplicationPolicy;
use crate::source_task::{bool_setting, long_setting, offset_syncs_topic, VERSION};
use tributary_group::client::cluster_admin::AdminTarget;

/// The connector's Java class name.
pub const CONNECTOR_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
/// Its tasks' class name.
pub const TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceTask";

/// `replication.factor`'s default: of the remote topics the connector creates.
pub const REPLICATION_FACTOR_DEFAULT: i64 = 2;
/// `offset-syncs.topic.replication.factor`'s default.
pub const OFFSET_SYNCS_REPLICATION_FACTOR_DEFAULT: i64 = 3;
/// `refresh.topics.interval.seconds`'s default (s).
pub const REFRESH_TOPICS_INTERVAL_SECONDS_DEFAULT: i64 = 600;
/// `sync.topic.configs.interval.seconds` and `sync.topic.acls.interval.seconds`' default (s).
pub const SYNC_INTERVAL_SECONDS_DEFAULT: i64 = 600;
/// `admin.timeout.ms`'s default (ms): how long one administrative call may take.
pub const ADMIN_TIMEOUT_MS_DEFAULT: i64 = 60_000;

/// The only classes the native connector implements for its pluggable settings (setting,
/// Apache's default class).
const DEFAULT_CLASSES: &[(&str, &str)] = &[
    (
        "topic.filter.class",
        "org.apache.kafka.connect.mirror.DefaultTopicFilter",
    ),
    (
        "config.property.filter.class",
        "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
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

/// The settings the native connector does not implement, with why: a custom class for a
/// pluggable setting. Each names its key and points to Apache's class.
pub fn refused_settings(props: &Props) -> Vec<(String, String)> {
    let mut refused = Vec::new();
    let hosted = "run Apache's MirrorSourceConnector for it (connector.plugin.version naming its version, with connect-mirror on plugin.path)";
    for (key, default) in DEFAULT_CLASSES {
        if let Some(v) = props.get(*key) {
            let v = v.trim();
            if !v.is_empty() && v != *default {
                refused.push((
                    key.to_string(),
                    format!("Tributary's native MirrorSourceConnector implements only {default} for {key}, not {v}: {hosted}"),
                ));
            }
        }
    }
    refused
}

/// The connector's settings (MirrorSourceConfig's keys the native connector reads; the client
/// prefixes `source.cluster.*`, `target.cluster.*`, `consumer.*`, … are open-ended and not
/// listed).
pub fn config_def() -> ConfigDef {
    let d = |def: ConfigDef, key: &str, t: ConfigType, default: Option<&str>, doc: &str| {
        // `source.cluster.alias` has no default: it is required.
        let default = if key == "source.cluster.alias" {
            None
        } else {
            Some(default)
        };
        def.define(key, t, default, None, Importance::Medium, doc)
    };
    let mut def = ConfigDef::new();
    for (key, t, default, doc) in [
        ("enabled", ConfigType::Boolean, Some("true"), "Whether the flow replicates at all."),
        ("source.cluster.alias", ConfigType::String, None, "The source cluster's name in remote topic names and internal topics (required)."),
        ("target.cluster.alias", ConfigType::String, Some("target"), "The target cluster's name."),
        ("replication.policy.class", ConfigType::Class, Some(crate::policy::DEFAULT_POLICY_CLASS), "How remote topics are named: DefaultReplicationPolicy or IdentityReplicationPolicy."),
        ("replication.policy.separator", ConfigType::String, Some("."), "Between the source alias and the topic in remote topic names."),
        ("topics", ConfigType::List, Some(crate::filter::TOPICS_DEFAULT), "Topics to replicate: names or regular expressions."),
        ("topics.exclude", ConfigType::List, Some(crate::filter::TOPICS_EXCLUDE_DEFAULT), "Topics never replicated: names or regular expressions."),
        ("config.properties.exclude", ConfigType::List, Some(crate::filter::CONFIG_PROPERTIES_EXCLUDE_DEFAULT), "Topic settings not copied to remote topics: names or regular expressions."),
        ("use.defaults.from", ConfigType::String, Some("target"), "Whose defaults remote topics get for settings at their default on the source: target (left out) or source (copied)."),
        ("replication.factor", ConfigType::Int, Some("2"), "Replication factor of the remote topics created; -1 for the target broker's default."),
        ("offset-syncs.topic.replication.factor", ConfigType::Short, Some("3"), "Replication factor of the offset-syncs topic; -1 for the broker's default."),
        ("offset-syncs.topic.location", ConfigType::String, Some("source"), "Which cluster holds the offset-syncs topic: source or target."),
        ("emit.offset-syncs.enabled", ConfigType::Boolean, Some("true"), "Whether tasks write offset syncs (which the checkpoint connector needs)."),
        ("offset.lag.max", ConfigType::Long, Some("100"), "How many records a translated offset may lag before an offset sync is written."),
        ("consumer.poll.timeout.ms", ConfigType::Long, Some("1000"), "How long (ms) a task's poll waits for records from the source."),
        ("refresh.topics.enabled", ConfigType::Boolean, Some("true"), "Whether new topics and partitions on the source are looked for periodically."),
        ("refresh.topics.interval.seconds", ConfigType::Long, Some("600"), "How often (s) new topics and partitions are looked for."),
        ("sync.topic.configs.enabled", ConfigType::Boolean, Some("true"), "Whether the source topics' settings are synced to their remote topics periodically."),
        ("sync.topic.configs.interval.seconds", ConfigType::Long, Some("600"), "How often (s) topic settings are synced."),
        ("sync.topic.acls.enabled", ConfigType::Boolean, Some("true"), "Whether the source topics' ACLs are synced to their remote topics periodically."),
        ("sync.topic.acls.interval.seconds", ConfigType::Long, Some("600"), "How often (s) topic ACLs are synced."),
        ("heartbeats.replication.enabled", ConfigType::Boolean, Some("true"), "Whether heartbeats topics are replicated whatever the topic filter says."),
        ("admin.timeout.ms", ConfigType::Long, Some("60000"), "How long (ms) one administrative call may take."),
    ] {
        def = d(def, key, t, default, doc);
    }
    def
}

/// The connector's parsed settings.
struct Settings {
    enabled: bool,
    policy: ReplicationPolicy,
    topics: NameFilter,
    properties: ConfigPropertyFilter,
    source_alias: String,
    target_alias: String,
    heartbeats_replication: bool,
    replication_factor: i32,
    offset_syncs_replication_factor: i32,
    emit_offset_syncs: bool,
    refresh: Option<Duration>,
    /// `sync.topic.configs.*`: the topic config sync's interval, `None` when off.
    sync_configs: Option<Duration>,
    /// `sync.topic.acls.*`: the topic ACL sync's interval, `None` when off.
    sync_acls: Option<Duration>,
    admin_timeout: Duration,
}

/// A SHORT setting (Java's `Short`), or its default; errors name the key.
pub(crate) fn short(props: &Props, key: &str, default: i64) -> ConnectResult<i32> {
    let v = long_setting(props, key, default).ok();
    v.and_then(|v| i16::try_from(v).ok())
        .map(i32::from)
        .ok_or_else(|| {
            ConnectError::config(format!(
                "Invalid value {} for configuration {key}: Not a number of type SHORT",
                props.get(key).map(|v| v.trim()).unwrap_or_default()
            ))
        })
}

impl Settings {
    fn parse(props: &Props) -> ConnectResult<Settings> {
        if let Some((key, message)) = refused_settings(props).into_iter().next() {
            return Err(ConnectError::config(format!("{key}: {message}")));
        }
        if !props.contains_key("source.cluster.alias") {
            return Err(ConnectError::config(
                "Missing required configuration \"source.cluster.alias\" which has no default value.",
            ));
        }
        let policy = ReplicationPolicy::from_props(props).map_err(ConnectError::config)?;
        let topics = NameFilter::topics(props).map_err(ConnectError::config)?;
        let properties = ConfigPropertyFilter::new(props).map_err(ConnectError::config)?;
        let clients = MirrorClients::new(props);
        let int = |key: &str, default: i64| -> ConnectResult<i32> {
            let v = long_setting(props, key, default)?;
            i32::try_from(v).map_err(|_| {
                ConnectError::config(format!(
                    "Invalid value {v} for configuration {key}: Not a number of type INT"
                ))
            })
        };
        // As Java's scheduler: a negative interval never refreshes, zero is refused.
        let refresh = if bool_setting(props, "refresh.topics.enabled", true)? {
            match long_setting(
                props,
                "refresh.topics.interval.seconds",
                REFRESH_TOPICS_INTERVAL_SECONDS_DEFAULT,
            )? {
                s if s < 0 => None,
                0 => {
                    return Err(ConnectError::config(
                        "Invalid value 0 for configuration refresh.topics.interval.seconds: the refresh needs a positive interval (a negative one turns it off)",
                    ))
                }
                s => Some(Duration::from_secs(s as u64)),
            }
        } else {
            None
        };
        // Checked here so that a bad value fails the connector, not each task.
        offset_syncs_topic(props, &policy)?;
        let sync_interval = |enabled: &str, seconds: &str| -> ConnectResult<Option<Duration>> {
            let every = crate::checkpoint_connector::interval(
                props,
                enabled,
                true,
                seconds,
                SYNC_INTERVAL_SECONDS_DEFAULT,
            )?;
            // As Java's scheduler: zero is refused (a negative interval turns the sync off).
            if every == Some(Duration::ZERO) {
                return Err(ConnectError::config(format!(
                    "Invalid value 0 for configuration {seconds}: a periodic step needs a positive interval (a negative one turns it off)"
                )));
            }
            Ok(every)
        };
        Ok(Settings {
            enabled: bool_setting(props, "enabled", true)?,
            source_alias: clients.source_alias(),
            target_alias: clients.target_alias(),
            policy,
            topics,
            properties,
            heartbeats_replication: bool_setting(props, "heartbeats.replication.enabled", true)?,
            replication_factor: int("replication.factor", REPLICATION_FACTOR_DEFAULT)?,
            offset_syncs_replication_factor: short(
                props,
                "offset-syncs.topic.replication.factor",
                OFFSET_SYNCS_REPLICATION_FACTOR_DEFAULT,
            )?,
            emit_offset_syncs: bool_setting(props, "emit.offset-syncs.enabled", true)?,
            refresh,
            sync_configs: sync_interval(
                "sync.topic.configs.enabled",
                "sync.topic.configs.interval.seconds",
            )?,
            sync_acls: sync_interval(
                "sync.topic.acls.enabled",
                "sync.topic.acls.interval.seconds",
            )?,
            admin_timeout: Duration::from_millis(
                long_setting(props, "admin.timeout.ms", ADMIN_TIMEOUT_MS_DEFAULT)?.max(1) as u64,
            ),
        })
    }

    /// Whether `topic` of the source is replicated (`shouldReplicateTopic`).
    fn replicates(&self, topic: &str) -> bool {
        (self.topics.accepts(topic)
            || (self.heartbeats_replication && self.policy.is_heartbeats_topic(topic)))
            && !self.policy.is_internal_topic(topic)
            && !self.is_cycle(topic)
    }

    /// Whether `topic` came from the target cluster, directly or through other clusters
    /// (`isCycle`).
    fn is_cycle(&self, topic: &str) -> bool {
        let mut topic = topic.to_string();
        loop {
            let Some(source) = self.policy.topic_source(&topic) else {
                return false;
            };
            if source == self.target_alias {
                return true;
            }
            match self.policy.upstream_topic(&topic) {
                // The identity policy (and the like) cannot tell: no cycle.
                Some(upstream) if upstream != topic => topic = upstream,
                _ => return false,
            }
        }
    }
}

/// The periodic steps of a running connector (Java's scheduled tasks).
#[derive(Debug, Clone, Copy)]
enum Job {
    /// `refreshTopicPartitions`.
    RefreshTopics,
    /// `syncTopicAcls`.
    SyncAcls,
    /// `syncTopicConfigs`.
    SyncConfigs,
}

/// The source, target and offset-syncs clusters' clients of a running connector.
struct Clusters {
    settings: Settings,
    source_metadata: BaseConsumer<WorkerClientContext>,
    target_metadata: BaseConsumer<WorkerClientContext>,
    source_admin: AdminClient<WorkerClientContext>,
    target_admin: AdminClient<WorkerClientContext>,
    /// The source partitions known, sorted: what the tasks share. Shared with the connector,
    /// which reads it for task configurations without waiting for a refresh in progress.
    known: Arc<Mutex<Vec<(String, i32)>>>,
    /// The target's topics at the last refresh (`knownTargetTopicPartitions`' topics).
    known_target: BTreeSet<String>,
    /// ACLs and topic settings go through requests librdkafka's admin has not.
    source_acls: AdminTarget,
    target_acls: AdminTarget,
    /// Runs those requests (the refresh thread has no runtime of its own).
    runtime: tokio::runtime::Runtime,
    /// The source had no authorizer at the last ACL sync (said once, as Java).
    no_acl_authorizer: bool,
}

fn admin_pair(
    props: &Props,
    side: Side,
    role: &str,
) -> ConnectResult<(
    BaseConsumer<WorkerClientContext>,
    AdminClient<WorkerClientContext>,
)> {
    let config = MirrorClients::new(props).client(side, ClientKind::Admin, role, &[])?;
    let mut metadata_config: ClientConfig = config.clone();
    metadata_config.set("allow.auto.create.topics", "false");
    let metadata: BaseConsumer<WorkerClientContext> = metadata_config
        .create_with_context(WorkerClientContext)
        .map_err(|e| {
            ConnectError::connect(format!("Failed to create a client of the {role}: {e}"))
        })?;
    set_initial_token(metadata.client(), &metadata_config)
        .map_err(|e| ConnectError::connect(format!("{role}: {e}")))?;
    let admin: AdminClient<WorkerClientContext> =
        config
            .create_with_context(WorkerClientContext)
            .map_err(|e| ConnectError::connect(format!("Failed to create the {role}: {e}")))?;
    set_initial_token(admin.inner(), &config)
        .map_err(|e| ConnectError::connect(format!("{role}: {e}")))?;
    Ok((metadata, admin))
}

/// Creates `topic` on the `side` cluster, compacted with one partition, unless it exists
/// (`MirrorUtils.createSinglePartitionCompactedTopic`); a topic made beforehand by an
/// administrator is the usual locked-down setup, so a refusal to create it (authorization,
/// an old broker) is logged at DEBUG, not an error. Errors: other failures, naming the topic.
pub(crate) fn create_compacted_topic(
    props: &Props,
    side: Side,
    role: &str,
    topic: &str,
    replication_factor: i32,
    timeout: Duration,
) -> ConnectResult<()> {
    let (_, admin) = admin_pair(props, side, role)?;
    let new_topic = NewTopic::new(topic, 1, TopicReplication::Fixed(replication_factor))
        .set("cleanup.policy", "compact");
    let options = AdminOptions::new()
        .operation_timeout(Some(timeout))
        .request_timeout(Some(timeout));
    let results = futures::executor::block_on(admin.create_topics(&[new_topic], &options))
        .map_err(|e| ConnectError::connect(format!("Could not create topic {topic}: {e}")))?;
    for r in results {
        match r {
            Ok(t) => tracing::info!("Created topic {t}"),
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((t, code))
                if matches!(
                    code,
                    RDKafkaErrorCode::TopicAuthorizationFailed
                        | RDKafkaErrorCode::ClusterAuthorizationFailed
                        | RDKafkaErrorCode::UnsupportedVersion
                ) =>
            {
                tracing::debug!("Unable to create topic {t}: {code}; it must exist already")
            }
            Err((t, code)) => {
                return Err(ConnectError::connect(format!(
                    "Could not create topic {t}: {code}"
                )))
            }
        }
    }
    Ok(())
}

impl Clusters {
    fn open(props: &Props, settings: Settings) -> ConnectResult<Clusters> {
        let (source_metadata, source_admin) =
            admin_pair(props, Side::Source, "replication-source-admin")?;
        let (target_metadata, target_admin) =
            admin_pair(props, Side::Target, "replication-target-admin")?;
        let timeout = settings.admin_timeout;
        let target = |side, role| {
            GroupAdmin::new(props, side, role, timeout, false).map(|a| a.admin_target())
        };
        Ok(Clusters {
            source_acls: target(Side::Source, "replication-source-admin")?,
            target_acls: target(Side::Target, "replication-target-admin")?,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ConnectError::connect(format!("Could not start a runtime: {e}")))?,
            settings,
            source_metadata,
            target_metadata,
            source_admin,
            target_admin,
            known: Arc::default(),
            known_target: BTreeSet::new(),
            no_acl_authorizer: false,
        })
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .operation_timeout(Some(self.settings.admin_timeout))
            .request_timeout(Some(self.settings.admin_timeout))
    }

    /// Creates the offset-syncs topic unless it exists (`createSinglePartitionCompactedTopic`).
    fn create_offset_syncs_topic(&self, props: &Props) -> ConnectResult<()> {
        let (side, topic) = offset_syncs_topic(props, &self.settings.policy)?;
        let role = match side {
            Side::Source => "offset-syncs-source-admin",
            Side::Target => "offset-syncs-target-admin",
        };
        create_compacted_topic(
            props,
            side,
            role,
            &topic,
            self.settings.offset_syncs_replication_factor,
            self.settings.admin_timeout,
        )
    }

    /// The partitions of `metadata`'s cluster's topics that `keep` accepts, sorted.
    fn partitions(
        &self,
        metadata: &BaseConsumer<WorkerClientContext>,
        keep: impl Fn(&str) -> bool,
        cluster: &str,
    ) -> ConnectResult<Vec<(String, i32)>> {
        let md = metadata
            .fetch_metadata(None, self.settings.admin_timeout)
            .map_err(|e| {
                ConnectError::connect(format!(
                    "Could not list the topics of the {cluster} cluster: {e}"
                ))
            })?;
        let mut out: Vec<(String, i32)> = md
            .topics()
            .iter()
            .filter(|t| t.error().is_none() && keep(t.name()))
            .flat_map(|t| {
                t.partitions()
                    .iter()
                    .map(|p| (t.name().to_string(), p.id()))
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Lists both clusters and creates what the target misses (`refreshTopicPartitions`, and
    /// `computeAndCreateTopicPartitions`). Whether the tasks need new configurations.
    fn refresh(&mut self) -> ConnectResult<bool> {
        let s = &self.settings;
        let source = self.partitions(&self.source_metadata, |t| s.replicates(t), "source")?;
        let target = self.partitions(&self.target_metadata, |_| true, "target")?;
        self.known_target = target.iter().map(|(t, _)| t.clone()).collect();
        let mut target_counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (t, _) in &target {
            *target_counts.entry(t.as_str()).or_default() += 1;
        }
        let mut source_counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (t, _) in &source {
            *source_counts.entry(t.as_str()).or_default() += 1;
        }
        let remote = |t: &str| s.policy.format_remote_topic(&s.source_alias, t);
        let missing_in_target = source_counts
            .iter()
            .any(|(t, n)| target_counts.get(remote(t).as_str()).copied().unwrap_or(0) < *n);
        let known_now = self.known.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let changed = source != known_now;
        if !changed && !missing_in_target {
            return Ok(false);
        }
        let known: BTreeSet<&(String, i32)> = known_now.iter().collect();
        let now: BTreeSet<&(String, i32)> = source.iter().collect();
        tracing::info!(
            "Found {} new topic-partitions on {}. Found {} deleted topic-partitions on {}. Found {} topic-partitions missing on {}.",
            now.difference(&known).count(),
            s.source_alias,
            known.difference(&now).count(),
            s.source_alias,
            source
                .iter()
                .filter(|(t, p)| (*p as usize) >= target_counts.get(remote(t).as_str()).copied().unwrap_or(0))
                .count(),
            s.target_alias
        );
        // New remote topics, with the source topics' settings.
        let new_topics: Vec<(&str, usize)> = source_counts
            .iter()
            .filter(|(t, _)| !target_counts.contains_key(remote(t).as_str()))
            .map(|(t, n)| (*t, *n))
            .collect();
        if !new_topics.is_empty() {
            self.create_remote_topics(&new_topics)?;
        }
        // Remote topics with fewer partitions than their sources.
        let grown: Vec<(String, usize)> = source_counts
            .iter()
            .filter_map(|(t, n)| {
                let r = remote(t);
                match target_counts.get(r.as_str()) {
                    Some(m) if m < n => Some((r, *n)),
                    _ => None,
                }
            })
            .collect();
        if !grown.is_empty() {
            let parts: Vec<NewPartitions<'_>> = grown
                .iter()
                .map(|(t, n)| NewPartitions::new(t, *n))
                .collect();
            let results = futures::executor::block_on(
                self.target_admin.create_partitions(&parts, &self.options()),
            )
            .map_err(|e| ConnectError::connect(format!("Could not add partitions: {e}")))?;
            for r in results {
                match r {
                    Ok(t) => tracing::info!("Increased the partitions of remote topic {t}"),
                    Err((t, code)) => {
                        tracing::warn!("Could not add partitions to remote topic {t}: {code}")
                    }
                }
            }
        }
        *self.known.lock().unwrap_or_else(|e| e.into_inner()) = source;
        Ok(true)
    }

    /// The source topics whose remote topic exists (`topicsBeingReplicated`).
    fn topics_being_replicated(&self) -> Vec<String> {
        let s = &self.settings;
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let topics: BTreeSet<String> = known.into_iter().map(|(t, _)| t).collect();
        topics
            .into_iter()
            .filter(|t| {
                self.known_target
                    .contains(&s.policy.format_remote_topic(&s.source_alias, t))
            })
            .collect()
    }

    /// Java's `syncTopicAcls`: the source's literal topic ACLs of replicated topics, but those
    /// allowing WRITE, created for the remote topics (an ALLOW ALL as ALLOW READ). Without an
    /// authorizer on the source: logged once, nothing done.
    fn sync_topic_acls(&mut self) -> ConnectResult<()> {
        use tributary_group::client::cluster_admin::{
            create_topic_acls, describe_topic_acls, operation, pattern, permission, TopicAcl,
            SECURITY_DISABLED,
        };
        use tributary_group::client::GroupError;
        let acls = match self
            .runtime
            .block_on(describe_topic_acls(&self.source_acls))
        {
            Ok(a) => a,
            Err(GroupError::Broker { code, .. }) if code == SECURITY_DISABLED => {
                if !self.no_acl_authorizer {
                    self.no_acl_authorizer = true;
                    tracing::info!("No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing will take place. Consider disabling topic ACL syncing by setting sync.topic.acls.enabled to 'false'.");
                } else {
                    tracing::debug!(
                        "Source-side ACL authorizer still not found; skipping topic ACL sync"
                    );
                }
                return Ok(());
            }
            Err(e) => {
                return Err(ConnectError::connect(format!(
                    "describe ACLs on {} cluster: {e}",
                    self.settings.source_alias
                )))
            }
        };
        let s = &self.settings;
        let bindings: Vec<TopicAcl> = acls
            .into_iter()
            .filter(|a| a.pattern_type == pattern::LITERAL)
            .filter(|a| !(a.permission == permission::ALLOW && a.operation == operation::WRITE))
            .filter(|a| s.replicates(&a.topic))
            .map(|a| TopicAcl {
                topic: s.policy.format_remote_topic(&s.source_alias, &a.topic),
                pattern_type: pattern::LITERAL,
                operation: if a.permission == permission::ALLOW && a.operation == operation::ALL {
                    operation::READ
                } else {
                    a.operation
                },
                ..a
            })
            .collect();
        tracing::trace!("Syncing {} topic ACL bindings.", bindings.len());
        let results = self
            .runtime
            .block_on(create_topic_acls(&self.target_acls, &bindings))
            .map_err(|e| {
                ConnectError::connect(format!("create ACLs on {} cluster: {e}", s.target_alias))
            })?;
        for (binding, r) in bindings.iter().zip(results) {
            if let Err(e) = r {
                tracing::warn!("Could not sync ACL of topic {}: {e}", binding.topic);
            }
        }
        Ok(())
    }

    /// Java's `syncTopicConfigs`: each replicated topic's settings (neither read-only nor
    /// sensitive nor the broker's static ones, let through by `config.properties.exclude`)
    /// set on its remote topic, those at their default deleted there unless
    /// `use.defaults.from=source`. A target without IncrementalAlterConfigs fails the
    /// connector (through `context`), as Java's does; another refusal is logged.
    fn sync_topic_configs(&self, context: Option<&dyn ConnectorContext>) -> ConnectResult<()> {
        use tributary_group::client::cluster_admin::{alter_topic_configs, ConfigChange};
        use tributary_group::client::GroupError;
        const UNSUPPORTED_VERSION: i16 = 35;
        let topics = self.topics_being_replicated();
        if topics.is_empty() {
            return Ok(());
        }
        let s = &self.settings;
        let specs: Vec<ResourceSpecifier<'_>> =
            topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
        let results = futures::executor::block_on(
            self.source_admin.describe_configs(&specs, &self.options()),
        )
        .map_err(|e| ConnectError::connect(format!("Could not describe the source topics: {e}")))?;
        let mut changes: Vec<(String, Vec<ConfigChange>)> = Vec::new();
        for (topic, r) in topics.iter().zip(results) {
            let resource = match r {
                Ok(r) => r,
                Err(code) => {
                    tracing::warn!("Could not describe the settings of topic {topic}: {code}");
                    continue;
                }
            };
            let ops: Vec<ConfigChange> = resource
                .entries
                .into_iter()
                .filter(|e| !e.is_read_only && !e.is_sensitive)
                .filter(|e| e.source != ConfigSource::StaticBroker)
                .filter(|e| s.properties.copies(&e.name))
                .filter_map(|e| {
                    if e.is_default && !s.properties.copies_source_defaults() {
                        Some(ConfigChange::Delete(e.name))
                    } else {
                        e.value.map(|v| ConfigChange::Set(e.name, v))
                    }
                })
                .collect();
            changes.push((s.policy.format_remote_topic(&s.source_alias, topic), ops));
        }
        tracing::trace!("Syncing configs for {} topics.", changes.len());
        let unsupported = |e: &dyn std::fmt::Display| {
            let message = format!(
                "the target cluster '{}' is not compatible with IncrementalAlterConfigs API: {e}",
                s.target_alias
            );
            if let Some(c) = context {
                c.raise_error(message.clone());
            }
            ConnectError::connect(message)
        };
        let outcomes = match self
            .runtime
            .block_on(alter_topic_configs(&self.target_acls, &changes))
        {
            Ok(o) => o,
            Err(e @ GroupError::UnsupportedApi { .. }) => return Err(unsupported(&e)),
            Err(e) => {
                return Err(ConnectError::connect(format!(
                    "incremental alter topic configs on {} cluster: {e}",
                    s.target_alias
                )))
            }
        };
        for (topic, r) in outcomes {
            match r {
                Ok(()) => {}
                Err(GroupError::Broker { code, .. }) if code == UNSUPPORTED_VERSION => {
                    return Err(unsupported(&format!("topic {topic}")))
                }
                Err(e) => tracing::warn!("Could not alter configuration of topic {topic}: {e}"),
            }
        }
        Ok(())
    }

    /// Creates the remote topics of `topics` (source name, partition count) with the source
    /// topics' settings (`createNewTopics` with `targetConfig(…, false)`).
    fn create_remote_topics(&self, topics: &[(&str, usize)]) -> ConnectResult<()> {
        let s = &self.settings;
        // Always, as Java's createNewTopics: `sync.topic.configs.enabled` is about later syncs.
        let configs = self.source_topic_configs(topics.iter().map(|(t, _)| *t))?;
        let names: Vec<String> = topics
            .iter()
            .map(|(t, _)| s.policy.format_remote_topic(&s.source_alias, t))
            .collect();
        let mut new_topics = Vec::new();
        for ((source, partitions), remote) in topics.iter().zip(&names) {
            let mut t = NewTopic::new(
                remote,
                *partitions as i32,
                TopicReplication::Fixed(s.replication_factor),
            );
            if let Some(settings) = configs.get(*source) {
                for (k, v) in settings {
                    t = t.set(k, v);
                }
            }
            new_topics.push(t);
        }
        // Java logs a topic it could not create and carries on; so does this.
        let results = futures::executor::block_on(
            self.target_admin
                .create_topics(&new_topics, &self.options()),
        )
        .map_err(|e| ConnectError::connect(format!("Could not create remote topics: {e}")))?;
        for r in results {
            match r {
                Ok(t) => tracing::info!("Created remote topic {t}."),
                Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((t, code)) => tracing::warn!("Could not create topic {t}: {code}"),
            }
        }
        Ok(())
    }

    /// The settings of each source topic that a remote topic copies: set on the topic (not
    /// at a default, unless `use.defaults.from=source`), neither read-only nor sensitive, not
    /// from the broker's static configuration, and let through by `config.properties.exclude`.
    fn source_topic_configs<'t>(
        &self,
        topics: impl Iterator<Item = &'t str>,
    ) -> ConnectResult<BTreeMap<String, Vec<(String, String)>>> {
        let specs: Vec<ResourceSpecifier<'_>> = topics.map(ResourceSpecifier::Topic).collect();
        let results = futures::executor::block_on(
            self.source_admin.describe_configs(&specs, &self.options()),
        )
        .map_err(|e| ConnectError::connect(format!("Could not describe the source topics: {e}")))?;
        let mut out = BTreeMap::new();
        for (spec, r) in specs.iter().zip(results) {
            let ResourceSpecifier::Topic(topic) = spec else {
                continue;
            };
            let resource = match r {
                Ok(r) => r,
                Err(code) => {
                    tracing::warn!("Could not describe the settings of topic {topic}: {code}");
                    continue;
                }
            };
            let copied = resource
                .entries
                .into_iter()
                .filter(|e| !e.is_default || self.settings.properties.copies_source_defaults())
                .filter(|e| !e.is_read_only && !e.is_sensitive)
                .filter(|e| e.source != ConfigSource::StaticBroker)
                .filter(|e| self.settings.properties.copies(&e.name))
                .filter_map(|e| e.value.map(|v| (e.name, v)))
                .collect();
            out.insert(topic.to_string(), copied);
        }
        Ok(out)
    }
}

/// A stop request for a connector's refresh thread, and that thread's end.
#[derive(Default)]
pub(crate) struct StopFlag {
    stopped: Mutex<bool>,
    changed: Condvar,
    /// Set by the refresher thread as it ends (a condition variable of its own: one serves
    /// one mutex).
    finished: Mutex<bool>,
    finished_changed: Condvar,
}

impl StopFlag {
    /// Waits up to `d`; whether a stop was asked for.
    pub(crate) fn wait(&self, d: Duration) -> bool {
        let guard = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, d, |stopped| !*stopped)
            .unwrap_or_else(|e| e.into_inner());
        *guard
    }

    pub(crate) fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_all();
    }

    /// The refresher's last act.
    pub(crate) fn finished(&self) {
        *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.finished_changed.notify_all();
    }

    /// Waits up to `d` for the refresher to finish; whether it did.
    pub(crate) fn wait_finished(&self, d: Duration) -> bool {
        let guard = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .finished_changed
            .wait_timeout_while(guard, d, |finished| !*finished)
            .unwrap_or_else(|e| e.into_inner());
        *guard
    }
}

/// MirrorMaker 2's source connector, natively (see the module's documentation).
#[derive(Default)]
pub struct MirrorSourceConnector {
    props: Props,
    context: Option<Arc<dyn ConnectorContext>>,
    /// The source partitions the tasks share (see [`Clusters`]).
    known: Arc<Mutex<Vec<(String, i32)>>>,
    refresher: Option<(Arc<StopFlag>, JoinHandle<()>)>,
}

/// How long `stop` waits for a refresh in progress before leaving its thread to finish alone.
const STOP_WAIT: Duration = Duration::from_secs(10);

impl MirrorSourceConnector {
    /// A connector that has not been started.
    pub fn new() -> MirrorSourceConnector {
        MirrorSourceConnector::default()
    }
}

impl Drop for MirrorSourceConnector {
    fn drop(&mut self) {
        if let Some((stop, _)) = &self.refresher {
            stop.stop();
        }
    }
}

/// Java's `Scheduler`: a step that fails is logged and the connector carries on (the next
/// refresh tries again).
fn logged(what: &str, r: ConnectResult<()>) {
    if let Err(e) = r {
        tracing::error!(
            "Scheduler for MirrorSourceConnector caught exception in scheduled task: {what}: {e}"
        );
    }
}

impl Connector for MirrorSourceConnector {
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

    /// Creates the offset-syncs topic and the missing remote topics, and learns the source
    /// partitions (blocking, as Java's start: up to `admin.timeout.ms` a call; a step that
    /// fails is logged and the periodic refresh tries again, as Java's scheduler does), then
    /// starts the periodic refresh on a thread of its own. Errors: a refused or invalid
    /// setting (named), a client that cannot be created.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.props = props.clone();
        let settings = Settings::parse(props)?;
        if !settings.enabled {
            return Ok(());
        }
        let jobs = [
            (Job::RefreshTopics, settings.refresh, false),
            (Job::SyncAcls, settings.sync_acls, true),
            (Job::SyncConfigs, settings.sync_configs, true),
        ];
        let emit = settings.emit_offset_syncs;
        let mut clusters = Clusters::open(props, settings)?;
        self.known = Arc::clone(&clusters.known);
        if emit {
            logged(
                "creating upstream offset-syncs topic",
                clusters.create_offset_syncs_topic(props),
            );
        }
        logged(
            "loading initial set of topic-partitions",
            clusters.refresh().map(drop),
        );
        tracing::info!(
            "Started {} with {} topic-partitions.",
            props.get("name").map(String::as_str).unwrap_or_default(),
            self.known.lock().unwrap_or_else(|e| e.into_inner()).len()
        );
        // Java's scheduler: the topic refresh after an interval, the ACL and config syncs at
        // once, then each every its interval, one at a time on the connector's own thread.
        let now = Instant::now();
        let mut due: Vec<(Job, Duration, Instant)> = jobs
            .into_iter()
            .filter_map(|(job, every, at_once)| {
                every.map(|e| (job, e, if at_once { now } else { now + e }))
            })
            .collect();
        if !due.is_empty() {
            let stop = Arc::new(StopFlag::default());
            let context = self.context.clone();
            let flag = Arc::clone(&stop);
            let thread = std::thread::Builder::new()
                .name("mirror-source-refresh".into())
                .spawn(move || {
                    while let Some(next) = due.iter().map(|(_, _, at)| *at).min() {
                        if flag.wait(next.saturating_duration_since(Instant::now())) {
                            break;
                        }
                        let now = Instant::now();
                        for (job, every, at) in due.iter_mut() {
                            if *at > now {
                                continue;
                            }
                            // A stop asked for during an earlier step: nothing more runs.
                            if flag.wait(Duration::ZERO) {
                                break;
                            }
                            *at = now + *every;
                            match job {
                                Job::RefreshTopics => match clusters.refresh() {
                                    Ok(true) => {
                                        if let Some(c) = &context {
                                            c.request_task_reconfiguration();
                                        }
                                    }
                                    Ok(false) => {}
                                    Err(e) => logged("refreshing topics", Err(e)),
                                },
                                Job::SyncAcls => {
                                    logged("syncing topic ACLs", clusters.sync_topic_acls())
                                }
                                Job::SyncConfigs => logged(
                                    "syncing topic configs",
                                    clusters.sync_topic_configs(context.as_deref()),
                                ),
                            }
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

    /// The known source partitions shared round robin among at most `max_tasks` tasks; none
    /// when disabled or when no partition is known. Never waits for a refresh in progress.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assignment::task_configs(&self.props, &known, max_tasks).map_err(ConnectError::config)
    }

    /// Stops the refresh: waits up to 10 s for one in progress, then leaves it to finish on
    /// its own (its clients close when it ends).
    fn stop(&mut self) -> ConnectResult<()> {
        if let Some((stop, thread)) = self.refresher.take() {
            stop.stop();
            if stop.wait_finished(STOP_WAIT) {
                thread.join().ok();
            } else {
                tracing::warn!(
                    "A topic refresh still runs after {STOP_WAIT:?}; it ends on its own"
                );
            }
        }
        Ok(())
    }

    /// `SUPPORTED` when the source consumer reads committed records only
    /// (`consumer.isolation.level` / `source.consumer.isolation.level` = `read_committed`),
    /// else `UNSUPPORTED` (Java's `exactlyOnceSupport`).
    fn exactly_once_support(&self, config: &Props) -> Option<ExactlyOnceSupport> {
        let consumer = MirrorClients::new(config).java_settings(
            Side::Source,
            ClientKind::Consumer,
            "replication-consumer",
        );
        Some(
            if consumer.get("isolation.level").map(String::as_str) == Some("read_committed") {
                ExactlyOnceSupport::Supported
            } else {
                ExactlyOnceSupport::Unsupported
            },
        )
    }

    /// Checks offsets a user writes (KIP-875) as Java's `alterOffsets` does: a partition has
    /// string `cluster` and `topic` and a non-negative 32-bit `partition`, an offset a
    /// non-negative integer `offset`; removals are always allowed. Nothing else to do: the
    /// tasks read their offsets from Connect's store only.
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
            validate_source_partition(partition, &["cluster", "topic"])?;
            validate_offset(partition, offset, false)?;
        }
        Ok(true)
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }

    /// Connect's checks of [`config_def`], then the settings the native connector refuses, and
    /// the replication policy and filters (each error on its key).
    fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        let mut values = self.config().validate(props);
        let mut error = |key: &str, message: String| {
            ConfigValue::add_error(
                &mut values,
                key,
                props.get(key).map(String::as_str),
                message,
            )
        };
        for (key, message) in refused_settings(props) {
            error(&key, message);
        }
        if let Err(e) = ReplicationPolicy::from_props(props) {
            error(crate::policy::POLICY_CLASS_CONFIG, e);
        }
        if let Err(e) = NameFilter::topics(props) {
            error(crate::filter::TOPICS_CONFIG, e);
        }
        if let Err(e) = ConfigPropertyFilter::new(props) {
            error(crate::filter::CONFIG_PROPERTIES_EXCLUDE_CONFIG, e);
        }
        // Java's validateExactlyOnceConfigs: `required` needs a read_committed source consumer
        // (the worker adds its own, more general error).
        if props.get("exactly.once.support").map(String::as_str) == Some("required")
            && self.exactly_once_support(props) != Some(ExactlyOnceSupport::Supported)
        {
            error(
                "exactly.once.support",
                "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'; otherwise, records from aborted and uncommitted transactions will be replicated from the source cluster to the target cluster.".to_string(),
            );
        }
        // Java's validateEmitOffsetSyncConfigs: offset-sync settings with the syncs off.
        if props.get("emit.offset-syncs.enabled").map(String::as_str) == Some("false")
            && props
                .keys()
                .any(|k| k.starts_with("offset-syncs-") || k.starts_with("offset-syncs.topic."))
        {
            error(
                "emit.offset-syncs.enabled",
                "MirrorSourceConnector can't setup offset-syncs feature while emit.offset-syncs.enabled set to false".to_string(),
            );
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::record::SourceMap;

    /// `pairs` over `source.cluster.alias=A` (required).
    fn props(pairs: &[(&str, &str)]) -> Props {
        std::iter::once(&("source.cluster.alias", "A"))
            .chain(pairs)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_source_alias_is_required() {
        let mut p = props(&[]);
        p.remove("source.cluster.alias");
        let e = Settings::parse(&p).err().expect("refused");
        assert_eq!(
            e.to_string(),
            "Missing required configuration \"source.cluster.alias\" which has no default value."
        );
        assert!(config_def().key("source.cluster.alias").unwrap().required());
    }

    #[test]
    fn altered_offsets_are_checked_as_java_checks_them() {
        let map = |j: serde_json::Value| -> SourceMap { j.as_object().unwrap().clone() };
        let good = map(serde_json::json!({"cluster": "A", "partition": 0, "topic": "t"}));
        let mut c = MirrorSourceConnector::new();
        let mut check = |partition: SourceMap, offset: Option<SourceMap>| {
            c.alter_offsets(
                &Props::new(),
                OffsetAlteration::Source(&[(partition, offset)]),
            )
        };
        assert!(check(good.clone(), Some(map(serde_json::json!({"offset": 5})))).unwrap());
        assert!(
            check(map(serde_json::json!({"x": 1})), None).unwrap(),
            "removals always pass"
        );
        for (partition, offset, message) in [
            (
                serde_json::json!({"partition": 0, "topic": "t"}),
                serde_json::json!({"offset": 1}),
                "Source partition {partition=0, topic=t} is missing the 'cluster' key, which is required",
            ),
            (
                serde_json::json!({"cluster": "A", "partition": -1, "topic": "t"}),
                serde_json::json!({"offset": 1}),
                "Source partition {cluster=A, partition=-1, topic=t} has an invalid value -1 for the 'partition' key, which cannot be negative",
            ),
            (
                serde_json::json!({"cluster": "A", "partition": 0, "topic": "t"}),
                serde_json::json!({"offset": "5"}),
                "Source offset {offset=5} for source partition {cluster=A, partition=0, topic=t} has an invalid value 5 for the 'offset' key, which must be an integer",
            ),
            (
                serde_json::json!({"cluster": "A", "partition": 0, "topic": "t"}),
                serde_json::json!({"offset": -2}),
                "Source offset {offset=-2} for source partition {cluster=A, partition=0, topic=t} has an invalid value -2 for the 'offset' key, which cannot be negative",
            ),
        ] {
            let e = check(map(partition), Some(map(offset))).unwrap_err();
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn validation_adds_javas_exactly_once_and_offset_sync_checks() {
        let errors = |p: &Props, key: &str| -> Vec<String> {
            MirrorSourceConnector::new()
                .validate(p)
                .into_iter()
                .find(|v| v.name == key)
                .map(|v| v.errors)
                .unwrap_or_default()
        };
        let required = props(&[("exactly.once.support", "required")]);
        assert_eq!(errors(&required, "exactly.once.support").len(), 1);
        let committed = props(&[
            ("exactly.once.support", "required"),
            ("consumer.isolation.level", "read_committed"),
        ]);
        assert!(errors(&committed, "exactly.once.support").is_empty());
        let off = props(&[
            ("emit.offset-syncs.enabled", "false"),
            ("offset-syncs.topic.location", "target"),
        ]);
        assert_eq!(
            errors(&off, "emit.offset-syncs.enabled"),
            ["MirrorSourceConnector can't setup offset-syncs feature while emit.offset-syncs.enabled set to false"]
        );
        let off_alone = props(&[("emit.offset-syncs.enabled", "false")]);
        assert!(errors(&off_alone, "emit.offset-syncs.enabled").is_empty());
    }

    #[test]
    fn exactly_once_needs_a_read_committed_source_consumer() {
        let c = MirrorSourceConnector::new();
        assert_eq!(
            c.exactly_once_support(&props(&[])),
            Some(ExactlyOnceSupport::Unsupported)
        );
        assert_eq!(
            c.exactly_once_support(&props(&[(
                "source.consumer.isolation.level",
                "read_committed"
            )])),
            Some(ExactlyOnceSupport::Supported)
        );
    }

    #[test]
    fn settings_it_does_not_implement_are_refused_by_name() {
        let p = props(&[
            ("topic.filter.class", "com.example.MyFilter"),
            (
                "config.property.filter.class",
                "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
            ),
            ("sync.topic.acls.enabled", "TRUE"),
        ]);
        let refused: Vec<String> = refused_settings(&p).into_iter().map(|(k, _)| k).collect();
        assert_eq!(refused, ["topic.filter.class"], "ACL sync is native");
        let e = Settings::parse(&p).err().expect("refused");
        assert!(e.to_string().contains("topic.filter.class"), "{e}");
        let values = MirrorSourceConnector::new().validate(&p);
        let errors = |k: &str| {
            values
                .iter()
                .find(|v| v.name == k)
                .map(|v| v.errors.clone())
        };
        assert_eq!(errors("topic.filter.class").map(|e| e.len()), Some(1));
        assert!(errors("sync.topic.acls.enabled").is_none_or(|e| e.is_empty()));
        assert!(errors("config.property.filter.class").is_none_or(|e| e.is_empty()));
        let s = Settings::parse(&props(&[
            ("sync.topic.acls.enabled", "false"),
            ("sync.topic.configs.interval.seconds", "5"),
        ]))
        .unwrap();
        assert_eq!(s.sync_acls, None);
        assert_eq!(s.sync_configs, Some(Duration::from_secs(5)));
    }

    #[test]
    fn topics_are_replicated_as_java_decides() {
        let s = Settings::parse(&props(&[
            ("source.cluster.alias", "A"),
            ("target.cluster.alias", "B"),
            ("topics", "orders.*, heartbeats-not"),
        ]))
        .unwrap();
        assert!(s.replicates("orders"));
        assert!(!s.replicates("payments"), "not in topics");
        assert!(
            s.replicates("heartbeats"),
            "heartbeats whatever the filter says"
        );
        assert!(s.replicates("C.heartbeats"));
        assert!(!s.replicates("__consumer_offsets"), "internal");
        assert!(
            !s.replicates("mm2-offset-syncs.B.internal"),
            "MirrorMaker's own"
        );
        assert!(!s.replicates("B.orders"), "came from the target: a cycle");
        assert!(
            !s.replicates("C.B.orders"),
            "came from the target through C"
        );
        let no_heartbeats = Settings::parse(&props(&[
            ("topics", "orders"),
            ("heartbeats.replication.enabled", "false"),
        ]))
        .unwrap();
        assert!(!no_heartbeats.replicates("heartbeats"));
    }

    #[test]
    fn bad_values_are_refused_naming_the_key() {
        for (key, value) in [
            ("offset-syncs.topic.location", "elsewhere"),
            ("replication.factor", "two"),
            ("offset-syncs.topic.replication.factor", "40000"),
            ("refresh.topics.enabled", "maybe"),
            ("replication.policy.class", "com.example.Policy"),
        ] {
            let e = Settings::parse(&props(&[(key, value)]))
                .err()
                .unwrap_or_else(|| panic!("{key}={value} accepted"));
            assert!(e.to_string().contains(key), "{key}: {e}");
        }
    }
}
