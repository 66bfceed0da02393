//! Consumer group offsets as Java's `Admin` reads and writes them for Connect's offsets API
//! (KIP-875): `listConsumerGroupOffsets` (OffsetFetch for every topic), `alterConsumerGroupOffsets`
//! (OffsetCommit with generation -1 and no member id, which the coordinator accepts only for
//! an empty group), `deleteConsumerGroupOffsets` (OffsetDelete) and `deleteConsumerGroups`
//! (DeleteGroups), and for MirrorMaker's checkpoint task (issue #44) the same with each
//! offset's metadata ([`list_committed_offsets`], [`alter_committed_offsets`]) and a classic
//! group's state (`describeConsumerGroups`: DescribeGroups, [`describe_group_state`]). Each call finds the group's coordinator, sends one request and returns the
//! first partition or group error as [`GroupError::Broker`] with Kafka's code.

use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_protocol::messages::{
    ApiKey, DeleteGroupsRequest, DescribeGroupsRequest, GroupId, OffsetCommitRequest,
    OffsetDeleteRequest, OffsetFetchRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::connection::{discover_coordinator, parse_bootstrap, Connection};
use super::{error_name, GroupConfig, GroupError};

/// Kafka error codes the offsets API tells apart (Java's exception classes).
pub mod offset_codes {
    /// `UNKNOWN_MEMBER_ID`: the group has members, so only they may commit.
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    /// `NON_EMPTY_GROUP` (Java's `GroupNotEmptyException`).
    pub const NON_EMPTY_GROUP: i16 = 68;
    /// `GROUP_ID_NOT_FOUND`.
    pub const GROUP_ID_NOT_FOUND: i16 = 69;
    /// `GROUP_SUBSCRIBED_TO_TOPIC`: offsets of a topic the members consume cannot be deleted.
    pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;
}

/// One committed offset: topic, partition, offset of the next record to consume.
pub type GroupOffset = (String, i32, i64);

fn broker_error(api: &'static str, code: i16) -> Result<(), GroupError> {
    if code == 0 {
        Ok(())
    } else {
        Err(GroupError::Broker {
            api,
            code,
            name: error_name(code),
        })
    }
}

async fn coordinator(bootstrap: &str, config: &GroupConfig) -> Result<Connection, GroupError> {
    let servers = parse_bootstrap(bootstrap);
    let mut last = GroupError::NoBootstrap;
    // The coordinator may be loading or moving: a few attempts, as the admin client retries.
    for attempt in 0..10u32 {
        match discover_coordinator(&servers, config).await {
            Ok(c) => return Ok(c),
            Err(e @ GroupError::CoordinatorUnavailable { .. }) => last = e,
            Err(e) => return Err(e),
        }
        tokio::time::sleep(config.retry_backoff * (attempt + 1)).await;
    }
    Err(last)
}

/// One committed offset with its metadata (Java's `TopicPartition` and `OffsetAndMetadata`):
/// `offset` is that of the next record to consume.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CommittedOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset of the next record to consume.
    pub offset: i64,
    /// The metadata committed with the offset (empty when none was).
    pub metadata: String,
}

/// The group's committed offsets, every topic, sorted by topic and partition (partitions
/// without an offset left out). A group that does not exist has none.
pub async fn list_group_offsets(
    bootstrap: &str,
    config: &GroupConfig,
) -> Result<Vec<GroupOffset>, GroupError> {
    Ok(list_committed_offsets(bootstrap, config)
        .await?
        .into_iter()
        .map(|o| (o.topic, o.partition, o.offset))
        .collect())
}

/// [`list_group_offsets`] with each offset's metadata.
pub async fn list_committed_offsets(
    bootstrap: &str,
    config: &GroupConfig,
) -> Result<Vec<CommittedOffset>, GroupError> {
    let mut conn = coordinator(bootstrap, config).await?;
    let version = conn.version(ApiKey::OffsetFetch)?;
    let mut req = OffsetFetchRequest::default();
    req.group_id = GroupId(StrBytes::from_string(config.group_id.clone()));
    req.topics = None;
    // Java's `ListConsumerGroupOffsetsOptions.requireStable` default: offsets of transactions
    // still open are not waited for.
    req.require_stable = false;
    let resp = conn.send(&req, version, config.request_timeout).await?;
    broker_error("OffsetFetch", resp.error_code)?;
    let mut out = Vec::new();
    for t in resp.topics {
        for p in t.partitions {
            // As Java's `ListConsumerGroupOffsetsHandler`: a partition with an error is left
            // out, the others are returned.
            if p.error_code != 0 {
                tracing::debug!(
                    group = config.group_id,
                    topic = %t.name.0,
                    partition = p.partition_index,
                    error = %error_name(p.error_code),
                    "skipping a committed offset the coordinator could not return"
                );
                continue;
            }
            if p.committed_offset >= 0 {
                out.push(CommittedOffset {
                    topic: t.name.0.to_string(),
                    partition: p.partition_index,
                    offset: p.committed_offset,
                    metadata: p.metadata.map(|m| m.to_string()).unwrap_or_default(),
                });
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Commits `offsets` for the group as an administrator (generation -1, no member id).
/// Errors: [`offset_codes::UNKNOWN_MEMBER_ID`] when the group has members.
pub async fn alter_group_offsets(
    bootstrap: &str,
    config: &GroupConfig,
    offsets: &[GroupOffset],
) -> Result<(), GroupError> {
    let offsets: Vec<CommittedOffset> = offsets
        .iter()
        .map(|(topic, partition, offset)| CommittedOffset {
            topic: topic.clone(),
            partition: *partition,
            offset: *offset,
            metadata: String::new(),
        })
        .collect();
    alter_committed_offsets(bootstrap, config, &offsets).await
}

/// [`alter_group_offsets`] with each offset's metadata.
pub async fn alter_committed_offsets(
    bootstrap: &str,
    config: &GroupConfig,
    offsets: &[CommittedOffset],
) -> Result<(), GroupError> {
    let mut conn = coordinator(bootstrap, config).await?;
    let version = conn.version(ApiKey::OffsetCommit)?;
    let mut req = OffsetCommitRequest::default();
    req.group_id = GroupId(StrBytes::from_string(config.group_id.clone()));
    req.generation_id_or_member_epoch = -1;
    req.member_id = StrBytes::from_static_str("");
    req.retention_time_ms = -1;
    let mut topics: Vec<OffsetCommitRequestTopic> = Vec::new();
    for o in offsets {
        let mut p = OffsetCommitRequestPartition::default();
        p.partition_index = o.partition;
        p.committed_offset = o.offset;
        p.committed_leader_epoch = -1;
        p.committed_metadata = Some(StrBytes::from_string(o.metadata.clone()));
        match topics.iter_mut().find(|t| t.name.0.as_str() == o.topic) {
            Some(t) => t.partitions.push(p),
            None => {
                let mut t = OffsetCommitRequestTopic::default();
                t.name = TopicName(StrBytes::from_string(o.topic.clone()));
                t.partitions.push(p);
                topics.push(t);
            }
        }
    }
    req.topics = topics;
    let resp = conn.send(&req, version, config.request_timeout).await?;
    for t in resp.topics {
        for p in t.partitions {
            broker_error("OffsetCommit", p.error_code)?;
        }
    }
    Ok(())
}

/// The group's state as its coordinator reports it to DescribeGroups (`Empty`, `Stable`,
/// `PreparingRebalance`, `CompletingRebalance`; `Dead` for a group it does not know, and also
/// for a group of the new consumer protocol, KIP-848, which DescribeGroups does not describe).
/// Errors: the group's error code.
pub async fn describe_group_state(
    bootstrap: &str,
    config: &GroupConfig,
) -> Result<String, GroupError> {
    let mut conn = coordinator(bootstrap, config).await?;
    let version = conn.version(ApiKey::DescribeGroups)?;
    let mut req = DescribeGroupsRequest::default();
    req.groups = vec![GroupId(StrBytes::from_string(config.group_id.clone()))];
    let resp = conn.send(&req, version, config.request_timeout).await?;
    let Some(group) = resp.groups.into_iter().next() else {
        return Ok("Dead".to_string());
    };
    broker_error("DescribeGroups", group.error_code)?;
    Ok(group.group_state.to_string())
}

/// Deletes the group's offsets of `partitions` (topic, partition). Errors:
/// [`offset_codes::GROUP_SUBSCRIBED_TO_TOPIC`] when members consume one of the topics.
pub async fn delete_group_offsets(
    bootstrap: &str,
    config: &GroupConfig,
    partitions: &[(String, i32)],
) -> Result<(), GroupError> {
    let mut conn = coordinator(bootstrap, config).await?;
    let version = conn.version(ApiKey::OffsetDelete)?;
    let mut req = OffsetDeleteRequest::default();
    req.group_id = GroupId(StrBytes::from_string(config.group_id.clone()));
    let mut topics: Vec<OffsetDeleteRequestTopic> = Vec::new();
    for (topic, partition) in partitions {
        let mut p = OffsetDeleteRequestPartition::default();
        p.partition_index = *partition;
        match topics.iter_mut().find(|t| t.name.0.as_str() == topic) {
            Some(t) => t.partitions.push(p),
            None => {
                let mut t = OffsetDeleteRequestTopic::default();
                t.name = TopicName(StrBytes::from_string(topic.clone()));
                t.partitions.push(p);
                topics.push(t);
            }
        }
    }
    req.topics = topics;
    let resp = conn.send(&req, version, config.request_timeout).await?;
    broker_error("OffsetDelete", resp.error_code)?;
    for t in resp.topics {
        for p in t.partitions {
            broker_error("OffsetDelete", p.error_code)?;
        }
    }
    Ok(())
}

/// Deletes the group with its offsets. Errors: [`offset_codes::NON_EMPTY_GROUP`] when it has
/// members, [`offset_codes::GROUP_ID_NOT_FOUND`] when there is no such group.
pub async fn delete_group(bootstrap: &str, config: &GroupConfig) -> Result<(), GroupError> {
    let mut conn = coordinator(bootstrap, config).await?;
    let version = conn.version(ApiKey::DeleteGroups)?;
    let mut req = DeleteGroupsRequest::default();
    req.groups_names = vec![GroupId(StrBytes::from_string(config.group_id.clone()))];
    let resp = conn.send(&req, version, config.request_timeout).await?;
    for r in resp.results {
        broker_error("DeleteGroups", r.error_code)?;
    }
    Ok(())
}
