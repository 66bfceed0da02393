//! The offsets of a connector as the offsets API shows and changes them (KIP-875; Connect's
//! `Worker.connectorOffsets` / `modifyConnectorOffsets`, `SinkUtils`, `ConnectorOffsets`):
//! a source connector's partitions and offsets in the worker's offset store, a sink
//! connector's committed offsets in its consumer group. The herders check that the connector
//! exists and is STOPPED, and (distributed) run the changes on the leader; this module does the
//! reading and writing, calling the connector's `alter_offsets` hook first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tributary_api::connector::{ConnectorType, OffsetAlteration};
use tributary_api::record::{SourceMap, TopicPartition};
use tributary_api::Props;
use tributary_group::client::group_offsets::{self, offset_codes};
use tributary_group::client::{ConnectionSecurity, GroupConfig, GroupError};

use super::Worker;
use crate::herder_error::{HerderError, HerderResult};
use crate::storage::offset::{connector_offsets, offset_key, offset_value};

/// `kafka_topic`, `kafka_partition` and `kafka_offset`: the keys of a sink connector's
/// partitions and offsets (Connect's `SinkUtils`).
pub const KAFKA_TOPIC_KEY: &str = "kafka_topic";
/// See [`KAFKA_TOPIC_KEY`].
pub const KAFKA_PARTITION_KEY: &str = "kafka_partition";
/// See [`KAFKA_TOPIC_KEY`].
pub const KAFKA_OFFSET_KEY: &str = "kafka_offset";

/// One partition and its offset (Connect's `ConnectorOffset`); either may be JSON `null` in a
/// request (a `null` offset removes the partition's offset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorOffset {
    pub partition: Option<Map<String, Value>>,
    pub offset: Option<Map<String, Value>>,
}

/// The body of `GET /connectors/{c}/offsets` and of `PATCH` (Connect's `ConnectorOffsets`):
/// `{"offsets": [{"partition": {...}, "offset": {...}}, ...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorOffsets {
    pub offsets: Option<Vec<ConnectorOffset>>,
}

/// The answer of `PATCH` and `DELETE` (Connect's `Message`): `{"message": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub message: String,
}

/// Connect's success message for an alteration (`reset`: a reset), depending on what the
/// connector's `alter_offsets` hook answered.
pub fn success_message(connector_handled: bool, reset: bool) -> Message {
    let what = if reset { "reset" } else { "altered" };
    let message = if connector_handled {
        format!("The offsets for this connector have been {what} successfully")
    } else {
        format!(
            "The Connect framework-managed offsets for this connector have been {what} successfully. However, if this connector manages offsets externally, they will need to be manually {what} in the system that the connector uses."
        )
    };
    Message { message }
}

/// The consumer group of a sink connector, as `Worker.baseConsumerConfigs` sets it:
/// `connect-<name>`, unless the worker's `consumer.group.id` or the connector's
/// `consumer.override.group.id` names another.
pub fn sink_group_id(worker: &Worker, name: &str, config: &Props) -> String {
    config
        .get("consumer.override.group.id")
        .cloned()
        .or_else(|| worker.config.raw_map().get("consumer.group.id").cloned())
        .unwrap_or_else(|| format!("connect-{name}"))
}

/// The group client settings of the admin work on a sink connector's group: the worker's
/// bootstrap servers and its security keys, under `admin.*` and then the connector's
/// `admin.override.*` (Connect's `Worker.adminConfigs`).
fn group_admin(worker: &Worker, name: &str, config: &Props) -> HerderResult<(String, GroupConfig)> {
    let mut layers: BTreeMap<String, String> =
        crate::config::clients::worker_security_layer(&worker.config)
            .into_iter()
            .collect();
    for map in [
        crate::config::worker::prefixed(worker.config.raw_map(), "admin."),
        crate::config::worker::prefixed(config, "admin.override."),
    ] {
        for (k, v) in map {
            if tributary_security::is_security_key(&k) {
                layers.insert(k, v);
            }
        }
    }
    let security = tributary_security::KafkaSecurity::from_settings(&layers, "")
        .and_then(|s| ConnectionSecurity::from_settings(&s))
        .map_err(|e| HerderError::Internal(e.to_string()))?;
    let mut group = GroupConfig::new(
        sink_group_id(worker, name, config),
        format!("connector-worker-adminclient-{name}"),
    );
    group.security = security;
    Ok((worker.config.bootstrap_servers(), group))
}

/// Runs an admin future from a blocking thread (the REST layer's herder calls run on one).
fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => h.block_on(f),
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime")
            .block_on(f),
    }
}

fn connector_kind(worker: &Worker, config: &Props) -> HerderResult<(String, ConnectorType)> {
    let class = config.get("connector.class").cloned().unwrap_or_default();
    let kind = worker.plugins.connector_type(&class).ok_or_else(|| {
        HerderError::Internal(format!(
            "Failed to find any class that implements Connector and which name matches {class}"
        ))
    })?;
    Ok((class, kind))
}

/// `GET /connectors/{c}/offsets`: a source connector's offsets from the offset store (sorted
/// by partition), or a sink connector's committed consumer group offsets (sorted by topic and
/// partition). `config` is the connector's stored config.
pub fn connector_offsets_of(
    worker: &Worker,
    name: &str,
    config: &Props,
) -> HerderResult<ConnectorOffsets> {
    let config = worker
        .resolve_config(name, &format!("connector {name}"), config)
        .map_err(HerderError::from)?;
    let (_, kind) = connector_kind(worker, &config)?;
    let offsets = match kind {
        ConnectorType::Source => connector_offsets(
            worker
                .offset_store_for(&config)
                .map_err(HerderError::from)?
                .as_ref(),
            name,
        )
        .map_err(|e| {
            HerderError::Internal(format!(
                "Failed to retrieve offsets for source connector {name}: {e}"
            ))
        })?
        .into_iter()
        .map(|(p, o)| ConnectorOffset {
            partition: Some(p),
            offset: Some(o),
        })
        .collect(),
        ConnectorType::Sink => {
            let (bootstrap, group) = group_admin(worker, name, &config)?;
            block_on(group_offsets::list_group_offsets(&bootstrap, &group))
                .map_err(|e| {
                    HerderError::Internal(format!(
                        "Failed to retrieve consumer group offsets for sink connector {name}: {e}"
                    ))
                })?
                .into_iter()
                .map(|(topic, partition, offset)| ConnectorOffset {
                    partition: Some(sink_partition(&topic, partition)),
                    offset: Some(Map::from_iter([(
                        KAFKA_OFFSET_KEY.to_string(),
                        Value::from(offset),
                    )])),
                })
                .collect()
        }
    };
    Ok(ConnectorOffsets {
        offsets: Some(offsets),
    })
}

fn sink_partition(topic: &str, partition: i32) -> Map<String, Value> {
    Map::from_iter([
        (KAFKA_TOPIC_KEY.to_string(), Value::from(topic)),
        (KAFKA_PARTITION_KEY.to_string(), Value::from(partition)),
    ])
}

/// A JSON value as Java's `String.valueOf` prints the object Jackson read it into.
fn java_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Connect's `SinkUtils.parseSinkConnectorOffsets`: each partition holds `kafka_topic` and
/// `kafka_partition` (an integer, or its text), each offset is `null` or holds `kafka_offset`.
/// Errors are Connect's 400 messages.
pub fn parse_sink_offsets(
    offsets: &[ConnectorOffset],
) -> HerderResult<Vec<(TopicPartition, Option<i64>)>> {
    let bad = |m: String| HerderError::BadRequest(m);
    let mut out: Vec<(TopicPartition, Option<i64>)> = Vec::new();
    for o in offsets {
        let partition = o.partition.as_ref().ok_or_else(|| {
            bad("The partition for a sink connector offset cannot be null or missing".into())
        })?;
        let (Some(topic), Some(part)) = (
            partition.get(KAFKA_TOPIC_KEY),
            partition.get(KAFKA_PARTITION_KEY),
        ) else {
            return Err(bad(format!(
                "The partition for a sink connector offset must contain the keys '{KAFKA_TOPIC_KEY}' and '{KAFKA_PARTITION_KEY}'"
            )));
        };
        if topic.is_null() {
            return Err(bad(
                "Kafka topic names must be valid strings and may not be null".into(),
            ));
        }
        if part.is_null() {
            return Err(bad(
                "Kafka partitions must be valid numbers and may not be null".into(),
            ));
        }
        let partition_number: i32 = java_text(part).parse().map_err(|_| {
            bad(format!(
                "Failed to parse the following Kafka partition value in the provided offsets: '{}'. Partition values for sink connectors need to be integers.",
                java_text(part)
            ))
        })?;
        let tp = TopicPartition {
            topic: java_text(topic),
            partition: partition_number,
        };
        let offset = match &o.offset {
            None => None,
            Some(offset) => {
                let Some(v) = offset.get(KAFKA_OFFSET_KEY) else {
                    return Err(bad(format!(
                        "The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
                    )));
                };
                Some(java_text(v).parse::<i64>().map_err(|_| {
                    bad(format!(
                        "Failed to parse the following Kafka offset value in the provided offsets: '{}'. Offset values for sink connectors need to be integers.",
                        java_text(v)
                    ))
                })?)
            }
        };
        // A partition given twice: the last one counts, as in Connect's map.
        out.retain(|(t, _)| t != &tp);
        out.push((tp, offset));
    }
    Ok(out)
}

/// Connect's `OffsetUtils.validateFormat` on a source partition or offset: values must be
/// primitive (`null`, booleans, numbers, strings). Errors are `DataException`s (500).
fn validate_source_map(map: &Map<String, Value>) -> HerderResult<()> {
    for (k, v) in map {
        let kind = match v {
            Value::Object(_) => "MAP",
            Value::Array(_) => "ARRAY",
            _ => continue,
        };
        return Err(HerderError::Internal(format!(
            "Offsets may only contain primitive types as values, but field {k} contains {kind}"
        )));
    }
    Ok(())
}

/// `PATCH` (`offsets` given) or `DELETE` (`None`) of `/connectors/{c}/offsets`, once the
/// herder has checked that the connector exists and is STOPPED. Calls the connector's
/// `alter_offsets` hook on a fresh instance, then writes: source offsets (tombstones for
/// `null` and for a reset) to the offset store; sink offsets through the group coordinator
/// (a reset deletes the group, as Connect does; an empty group is required). Errors carry
/// Connect's messages and statuses.
pub fn modify_connector_offsets(
    worker: &Worker,
    name: &str,
    stored_config: &Props,
    offsets: Option<&[ConnectorOffset]>,
) -> HerderResult<Message> {
    let config = worker
        .resolve_config(name, &format!("connector {name}"), stored_config)
        .map_err(HerderError::from)?;
    let (_, kind) = connector_kind(worker, &config)?;
    // The version the connector runs (KIP-891): its own alterOffsets, not the default's.
    let mut connector = worker
        .plugins
        .new_connector_for(&config)
        .map_err(|e| HerderError::Internal(e.to_string()))?;
    let reset = offsets.is_none();
    let hook_error = HerderError::from;
    match kind {
        ConnectorType::Source => {
            let store = worker
                .offset_store_for(&config)
                .map_err(HerderError::from)?;
            let wanted: Vec<(SourceMap, Option<SourceMap>)> = match offsets {
                None => connector_offsets(store.as_ref(), name)
                    .map_err(|e| {
                        HerderError::Internal(format!(
                            "Failed to modify offsets for source connector {name}: {e}"
                        ))
                    })?
                    .into_iter()
                    .map(|(p, _)| (p, None))
                    .collect(),
                Some(list) => {
                    let mut out: Vec<(SourceMap, Option<SourceMap>)> = Vec::new();
                    for o in list {
                        let Some(partition) = o.partition.clone() else {
                            return Err(HerderError::BadRequest(
                                "Source partitions may not be null: Tributary writes offsets only under a partition map".into(),
                            ));
                        };
                        validate_source_map(&partition)?;
                        if let Some(offset) = &o.offset {
                            validate_source_map(offset)?;
                        }
                        out.retain(|(p, _)| p != &partition);
                        out.push((partition, o.offset.clone()));
                    }
                    out
                }
            };
            let handled = connector
                .alter_offsets(&config, OffsetAlteration::Source(&wanted))
                .map_err(hook_error)?;
            if !wanted.is_empty() {
                let entries = wanted
                    .iter()
                    .map(|(p, o)| (offset_key(name, p), o.as_ref().map(offset_value)))
                    .collect();
                store.set(entries).map_err(|e| {
                    HerderError::Internal(format!(
                        "Failed to modify offsets for source connector {name}: {e}"
                    ))
                })?;
            }
            Ok(success_message(handled, reset))
        }
        ConnectorType::Sink => {
            let (bootstrap, group) = group_admin(worker, name, &config)?;
            let wanted = match offsets {
                Some(list) => parse_sink_offsets(list)?,
                None => block_on(group_offsets::list_group_offsets(&bootstrap, &group))
                    .map_err(|e| {
                        HerderError::Internal(format!(
                            "Failed to list offsets prior to resetting offsets for sink connector {name}: {e}"
                        ))
                    })?
                    .into_iter()
                    .map(|(t, p, _)| {
                        (
                            TopicPartition {
                                topic: t,
                                partition: p,
                            },
                            None,
                        )
                    })
                    .collect(),
            };
            let handled = connector
                .alter_offsets(&config, OffsetAlteration::Sink(&wanted))
                .map_err(hook_error)?;
            let zombies = |what: &str| {
                format!(
                    "Failed to {what} consumer group offsets for connector {name} either because its tasks haven't stopped completely yet or the connector was resumed before the request to {what} its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
                )
            };
            if reset {
                match block_on(group_offsets::delete_group(&bootstrap, &group)) {
                    Ok(()) => {}
                    Err(GroupError::Broker { code, .. })
                        if code == offset_codes::GROUP_ID_NOT_FOUND => {}
                    Err(GroupError::Broker { code, .. })
                        if code == offset_codes::NON_EMPTY_GROUP =>
                    {
                        return Err(HerderError::Internal(zombies("reset")))
                    }
                    Err(e) => {
                        return Err(HerderError::Internal(format!(
                            "Failed to reset consumer group offsets for sink connector {name}: {e}"
                        )))
                    }
                }
                return Ok(success_message(handled, true));
            }
            let alter: Vec<(String, i32, i64)> = wanted
                .iter()
                .filter_map(|(tp, o)| o.map(|o| (tp.topic.clone(), tp.partition, o)))
                .collect();
            let delete: Vec<(String, i32)> = wanted
                .iter()
                .filter(|(_, o)| o.is_none())
                .map(|(tp, _)| (tp.topic.clone(), tp.partition))
                .collect();
            let outcome = block_on(async {
                if !alter.is_empty() {
                    group_offsets::alter_group_offsets(&bootstrap, &group, &alter).await?;
                }
                if !delete.is_empty() {
                    group_offsets::delete_group_offsets(&bootstrap, &group, &delete).await?;
                }
                Ok::<(), GroupError>(())
            });
            match outcome {
                Ok(()) => Ok(success_message(handled, false)),
                Err(GroupError::Broker { code, .. })
                    if code == offset_codes::UNKNOWN_MEMBER_ID
                        || code == offset_codes::GROUP_SUBSCRIBED_TO_TOPIC =>
                {
                    Err(HerderError::Internal(zombies("alter")))
                }
                Err(e) => Err(HerderError::Internal(format!(
                    "Failed to alter consumer group offsets for connector {name}: {e}"
                ))),
            }
        }
    }
}

/// The herders' check before a change (Connect's `modifyConnectorOffsetsChecks`): the
/// connector must be STOPPED with no tasks, else 400 with Connect's message.
pub fn require_stopped(name: &str, stopped: bool, tasks: usize) -> HerderResult<()> {
    if stopped && tasks == 0 {
        return Ok(());
    }
    Err(HerderError::BadRequest(format!(
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(json: &str) -> Vec<ConnectorOffset> {
        serde_json::from_str::<ConnectorOffsets>(json)
            .unwrap()
            .offsets
            .unwrap()
    }

    #[test]
    fn sink_offsets_are_parsed_as_connect_parses_them() {
        let parsed = parse_sink_offsets(&offsets(
            r#"{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"1"},"offset":{"kafka_offset":"10"}},
                           {"partition":{"kafka_topic":"t","kafka_partition":2},"offset":null}]}"#,
        ))
        .unwrap();
        assert_eq!(
            parsed,
            vec![
                (
                    TopicPartition {
                        topic: "t".into(),
                        partition: 1
                    },
                    Some(10)
                ),
                (
                    TopicPartition {
                        topic: "t".into(),
                        partition: 2
                    },
                    None
                ),
            ]
        );
        let err = |json: &str| parse_sink_offsets(&offsets(json)).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"offsets":[{"partition":{"kafka_topic":"t"},"offset":null}]}"#),
            "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"
        );
        assert_eq!(
            err(r#"{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"x"},"offset":null}]}"#),
            "Failed to parse the following Kafka partition value in the provided offsets: 'x'. Partition values for sink connectors need to be integers."
        );
        assert_eq!(
            err(r#"{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"x":1}}]}"#),
            "The offset for a sink connector should either be null or contain the key 'kafka_offset'"
        );
        assert_eq!(
            err(r#"{"offsets":[{"partition":null,"offset":null}]}"#),
            "The partition for a sink connector offset cannot be null or missing"
        );
    }

    #[test]
    fn messages_are_connects() {
        assert_eq!(
            success_message(true, false).message,
            "The offsets for this connector have been altered successfully"
        );
        assert!(success_message(false, true).message.ends_with(
            "they will need to be manually reset in the system that the connector uses."
        ));
        assert_eq!(
            serde_json::to_string(&success_message(true, true)).unwrap(),
            r#"{"message":"The offsets for this connector have been reset successfully"}"#
        );
    }
}
