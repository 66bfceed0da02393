//! The consumer groups of one of a flow's clusters, as the checkpoint connector and task use
//! Java's `Admin` for them: `listConsumerGroups` (ListGroups on every broker, through
//! librdkafka), `listConsumerGroupOffsets` (OffsetFetch with each offset's metadata),
//! `describeConsumerGroups` (DescribeGroups: the group's state) and
//! `alterConsumerGroupOffsets` (OffsetCommit as an administrator), the last three through
//! `tributary-group`'s requests to the group's coordinator. Every connection takes the side's
//! `<side>.cluster.*` / `admin.*` settings, security included, as the admin client Java's
//! `MirrorConnectorConfig` builds.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_group::client::group_offsets::{self, CommittedOffset};
use tributary_group::client::{ConnectionSecurity, GroupConfig, GroupError};
use tributary_runtime::config::clients::ClientKind;
use tributary_runtime::kafka_client::{set_initial_token, WorkerClientContext};

use crate::clients::{MirrorClients, Side};

/// A listed group: its id and its protocol type (`consumer`, `""` for a group that only
/// commits offsets, `connect` for Connect's workers, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    pub group: String,
    pub protocol_type: String,
}

/// The admin operations on consumer groups of one cluster of a flow.
pub struct GroupAdmin {
    bootstrap: String,
    client_id: String,
    security: ConnectionSecurity,
    timeout: Duration,
    /// ListGroups goes to every broker: librdkafka's client does it (the connector's admin
    /// only; a task's has none).
    lister: Option<BaseConsumer<WorkerClientContext>>,
}

impl std::fmt::Debug for GroupAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupAdmin")
            .field("bootstrap", &self.bootstrap)
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl GroupAdmin {
    /// Where this admin's calls go, for the cluster administration calls of
    /// `tributary_group::client::cluster_admin` (ACLs, topic settings).
    pub fn admin_target(&self) -> tributary_group::client::cluster_admin::AdminTarget {
        tributary_group::client::cluster_admin::AdminTarget {
            bootstrap: self.bootstrap.clone(),
            client_id: self.client_id.clone(),
            timeout: self.timeout,
            security: self.security.clone(),
        }
    }

    /// The `side` cluster's group admin for client role `role` (its `client.id` as Java's:
    /// `<source>-><target>|<name>|<role>`), each call bounded by `timeout`
    /// (`admin.timeout.ms`); with `listing`, it can list the cluster's groups too (a client of
    /// librdkafka's is made for it). Errors: no `<side>.cluster.bootstrap.servers`, a security
    /// setting that cannot be used (named with its prefix).
    pub fn new(
        props: &Props,
        side: Side,
        role: &str,
        timeout: Duration,
        listing: bool,
    ) -> ConnectResult<Self> {
        let settings = MirrorClients::new(props).java_settings(side, ClientKind::Admin, role);
        let Some(bootstrap) = settings.get("bootstrap.servers").cloned() else {
            return Err(ConnectError::config(format!(
                "Missing required configuration \"{}.cluster.bootstrap.servers\" which has no default value.",
                side.prefix()
            )));
        };
        let layers: BTreeMap<String, String> = settings
            .iter()
            .filter(|(k, _)| tributary_security::is_security_key(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let security = tributary_security::KafkaSecurity::from_settings(&layers, "")
            .and_then(|s| ConnectionSecurity::from_settings(&s))
            .map_err(|e| ConnectError::config(format!("{}.cluster.{e}", side.prefix())))?;
        // The listing client is made now, so that its settings fail the caller early.
        let lister = if listing {
            let config = MirrorClients::new(props).client(side, ClientKind::Admin, role, &[])?;
            let lister: BaseConsumer<WorkerClientContext> = config
                .create_with_context(WorkerClientContext)
                .map_err(|e| ConnectError::connect(format!("Failed to create the {role}: {e}")))?;
            set_initial_token(lister.client(), &config)
                .map_err(|e| ConnectError::connect(format!("{role}: {e}")))?;
            Some(lister)
        } else {
            None
        };
        Ok(GroupAdmin {
            bootstrap,
            client_id: settings.get("client.id").cloned().unwrap_or_default(),
            security,
            timeout,
            lister,
        })
    }

    fn group_config(&self, group: &str) -> GroupConfig {
        let mut config = GroupConfig::new(group, self.client_id.clone());
        config.request_timeout = self.timeout;
        config.security = self.security.clone();
        config
    }

    /// Every consumer group the cluster's brokers know, sorted by id: those of protocol type
    /// `consumer` and those that only commit offsets (`""`), as Java's `listConsumerGroups`.
    /// Blocking (up to the timeout). Errors: a broker that does not answer, an admin made
    /// without `listing`.
    pub fn list_consumer_groups(&self) -> ConnectResult<Vec<ListedGroup>> {
        let Some(lister) = &self.lister else {
            return Err(ConnectError::connect(
                "this group admin was made without a client to list groups",
            ));
        };
        let list = lister
            .fetch_group_list(None, self.timeout)
            .map_err(|e| ConnectError::connect(format!("Could not list consumer groups: {e}")))?;
        let mut groups: Vec<ListedGroup> = list
            .groups()
            .iter()
            .filter(|g| matches!(g.protocol_type(), "consumer" | ""))
            .map(|g| ListedGroup {
                group: g.name().to_string(),
                protocol_type: g.protocol_type().to_string(),
            })
            .collect();
        groups.sort_by(|a, b| a.group.cmp(&b.group));
        groups.dedup_by(|a, b| a.group == b.group);
        Ok(groups)
    }

    /// The group's committed offsets with their metadata, sorted; none for an unknown group.
    pub async fn committed_offsets(&self, group: &str) -> Result<Vec<CommittedOffset>, GroupError> {
        let config = self.group_config(group);
        within(
            self.timeout,
            group_offsets::list_committed_offsets(&self.bootstrap, &config),
        )
        .await
    }

    /// The group's state (`Empty`, `Stable`, `Dead`, …).
    pub async fn state(&self, group: &str) -> Result<String, GroupError> {
        let config = self.group_config(group);
        within(
            self.timeout,
            group_offsets::describe_group_state(&self.bootstrap, &config),
        )
        .await
    }

    /// Commits `offsets` for `group` as an administrator. Errors:
    /// `UNKNOWN_MEMBER_ID` when the group has members.
    pub async fn alter_offsets(
        &self,
        group: &str,
        offsets: &[CommittedOffset],
    ) -> Result<(), GroupError> {
        let config = self.group_config(group);
        within(
            self.timeout,
            group_offsets::alter_committed_offsets(&self.bootstrap, &config, offsets),
        )
        .await
    }
}

/// `f` cut off after `timeout` (the coordinator lookup retries on its own).
async fn within<T>(
    timeout: Duration,
    f: impl std::future::Future<Output = Result<T, GroupError>>,
) -> Result<T, GroupError> {
    match tokio::time::timeout(timeout, f).await {
        Ok(r) => r,
        Err(_) => Err(GroupError::Timeout {
            what: format!("an administrative call after {} ms", timeout.as_millis()),
        }),
    }
}
