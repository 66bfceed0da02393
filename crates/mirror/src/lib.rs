//! MirrorMaker 2 natively (issue #44): the pieces of Apache's `connect-mirror` and
//! `connect-mirror-client` that every MirrorMaker connector shares, with Java's behaviour.
//! - [`assignment`]: the source partitions shared among MirrorSourceConnector's tasks;
//! - [`policy`]: replication policies (`DefaultReplicationPolicy`,
//!   `IdentityReplicationPolicy`): remote topic names and MirrorMaker's internal topic names;
//! - [`filter`]: the default topic and group filters (`topics`, `topics.exclude`, `groups`,
//!   `groups.exclude`);
//! - [`maker_config`]: dedicated mode's `mm2.properties` (`MirrorMakerConfig`): the flows, and
//!   the worker and connector configurations of each;
//! - [`offset_syncs`]: when the source task writes offset syncs (`offset.lag.max`, gaps,
//!   truncation, the commit's promotion of delayed syncs, at most ten in flight);
//! - [`checkpoints`]: which checkpoints the checkpoint task emits for a group;
//! - [`offset_sync_store`]: the checkpoint connector's store of offset syncs and its
//!   translation of a group's upstream offsets (`OffsetSyncStore`);
//! - [`records`]: offset syncs, checkpoints and heartbeats byte for byte as Java writes them,
//!   and the source partitions and offsets the connectors commit.
//!
//! - [`clients`]: the clients of the connectors' own clusters (`source.cluster.*`,
//!   `target.cluster.*`, `consumer.*`, …) as `MirrorConnectorConfig` builds them;
//! - [`source_connector`] and [`source_task`]: `MirrorSourceConnector` and `MirrorSourceTask`;
//! - [`heartbeat`]: `MirrorHeartbeatConnector` and `MirrorHeartbeatTask`;
//! - [`metrics`]: the tasks' metrics (`record-count`, `replication-latency-ms`,
//!   `checkpoint-latency-ms`, …) under Apache's names;
//! - [`checkpoint_connector`] and [`checkpoint_task`]: `MirrorCheckpointConnector` and
//!   `MirrorCheckpointTask`, with [`consumer_groups`] for the groups' offsets and states.
//!
//! [`plugins`] registers the three native connectors as the default versions of their classes
//! (`PluginSet::native_defaults`): with Apache's `connect-mirror` on `plugin.path`, its classes
//! are kept as other versions (KIP-891), which run when a connector asks for theirs with
//! `connector.plugin.version`; otherwise the native ones run.

pub mod assignment;
pub mod checkpoint_connector;
pub mod checkpoint_task;
pub mod checkpoints;
pub mod clients;
pub mod consumer_groups;
pub mod filter;
pub mod heartbeat;
pub mod maker_config;
pub mod metrics;
pub mod offset_sync_store;
pub mod offset_syncs;
pub mod offset_validation;
pub mod policy;
pub mod records;
pub mod source_connector;
pub mod source_task;

use tributary_api::connector::ConnectorType;
use tributary_api::plugin::{ConnectorPlugin, PluginSet, TaskFactory, TaskPlugin};

/// The native MirrorMaker connectors and tasks, the default versions of their classes (see the
/// crate's documentation).
pub fn plugins() -> PluginSet {
    PluginSet {
        connectors: vec![
            ConnectorPlugin::native(
                source_connector::CONNECTOR_CLASS,
                source_task::VERSION,
                ConnectorType::Source,
                || Box::new(source_connector::MirrorSourceConnector::new()),
            ),
            ConnectorPlugin::native(
                heartbeat::CONNECTOR_CLASS,
                source_task::VERSION,
                ConnectorType::Source,
                || Box::new(heartbeat::MirrorHeartbeatConnector::new()),
            ),
            ConnectorPlugin::native(
                checkpoint_connector::CONNECTOR_CLASS,
                source_task::VERSION,
                ConnectorType::Source,
                || Box::new(checkpoint_connector::MirrorCheckpointConnector::new()),
            ),
        ],
        tasks: vec![
            TaskPlugin {
                class: source_connector::TASK_CLASS,
                new: TaskFactory::async_source(|| Box::new(source_task::MirrorSourceTask::new())),
            },
            TaskPlugin {
                class: heartbeat::TASK_CLASS,
                new: TaskFactory::async_source(|| Box::new(heartbeat::MirrorHeartbeatTask::new())),
            },
            TaskPlugin {
                class: checkpoint_connector::TASK_CLASS,
                new: TaskFactory::async_source(|| {
                    Box::new(checkpoint_task::MirrorCheckpointTask::new())
                }),
            },
        ],
        native_defaults: vec![
            source_connector::CONNECTOR_CLASS,
            heartbeat::CONNECTOR_CLASS,
            checkpoint_connector::CONNECTOR_CLASS,
        ],
        ..PluginSet::default()
    }
}

/// A Connect LIST setting as Connect 4.x reads MirrorMaker's (`ConfigDef` LIST with
/// `ValidList.anyNonDuplicateValues`): the value trimmed, split at commas with the ASCII white
/// space around them, repeated items dropped (the first kept), a blank value the empty list,
/// and an empty item refused (`Configuration '<key>' values must not be empty.`).
pub fn config_list(key: &str, value: &str) -> Result<Vec<String>, String> {
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    let mut items: Vec<String> = Vec::new();
    for item in trimmed.split(',') {
        let item = item.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\u{b}');
        if !items.iter().any(|i| i == item) {
            items.push(item.to_string());
        }
    }
    if items.iter().any(String::is_empty) {
        return Err(format!("Configuration '{key}' values must not be empty."));
    }
    Ok(items)
}

/// A Connect BOOLEAN setting: `true` or `false` in any case, white space around ignored;
/// anything else refused as Connect refuses it.
pub fn config_bool(key: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!(
            "Invalid value {value} for configuration {key}: Expected value to be either true or false"
        )),
    }
}
