//! Checks of the source partitions and offsets a user writes through Connect's offsets API
//! (KIP-875) for the MirrorMaker connectors, with Java's messages (`MirrorUtils.validateSourcePartitionString`,
//! `validateSourcePartitionPartition`, `validateSourceOffset`).

use tributary_api::record::SourceMap;
use tributary_api::{ConnectError, ConnectResult};

/// Java's `HashMap.toString` of a source partition or offset: `{k=v, …}`.
fn java_map(map: &SourceMap) -> String {
    let items: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", java_value(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A JSON value as Java's `toString` shows the object it reads as (strings without quotes).
fn java_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `validateSourcePartitionString` of each of `keys`: present and a string.
pub(crate) fn validate_string_keys(partition: &SourceMap, keys: &[&str]) -> ConnectResult<()> {
    let p = java_map(partition);
    for key in keys {
        match partition.get(*key) {
            None => {
                return Err(ConnectError::connect(format!(
                    "Source partition {p} is missing the '{key}' key, which is required"
                )))
            }
            Some(serde_json::Value::String(_)) => {}
            Some(v) => {
                return Err(ConnectError::connect(format!(
                    "Source partition {p} has an invalid value {} for the '{key}' key, which must be a string",
                    java_value(v)
                )))
            }
        }
    }
    Ok(())
}

/// `validateSourcePartitionString` of each of `keys` (`cluster` and `topic` for the source
/// connector) and `validateSourcePartitionPartition`.
pub(crate) fn validate_source_partition(partition: &SourceMap, keys: &[&str]) -> ConnectResult<()> {
    validate_string_keys(partition, keys)?;
    let p = java_map(partition);
    match partition.get("partition") {
        None => Err(ConnectError::connect(format!(
            "Source partition {p} is missing the 'partition' key, which is required"
        ))),
        Some(v) => match v.as_i64() {
            Some(n) if n > i64::from(i32::MAX) || !v.is_i64() => Err(ConnectError::connect(format!(
                "Source partition {p} has an invalid value {v} for the 'partition' key, which must be an integer"
            ))),
            Some(n) if (n as i32) < 0 => Err(ConnectError::connect(format!(
                "Source partition {p} has an invalid value {v} for the 'partition' key, which cannot be negative"
            ))),
            Some(_) => Ok(()),
            None => Err(ConnectError::connect(format!(
                "Source partition {p} has an invalid value {} for the 'partition' key, which must be an integer",
                java_value(v)
            ))),
        },
    }
}

/// `validateSourceOffset`: an `offset` key, an integer, non-negative (or, with `only_zero`,
/// zero).
pub(crate) fn validate_offset(
    partition: &SourceMap,
    offset: &SourceMap,
    only_zero: bool,
) -> ConnectResult<()> {
    let (p, o) = (java_map(partition), java_map(offset));
    match offset.get("offset") {
        None => Err(ConnectError::connect(format!(
            "Source offset {o} for source partition {p} is missing the 'offset' key, which is required"
        ))),
        Some(v) => match v.as_i64() {
            Some(n) if only_zero && n != 0 => Err(ConnectError::connect(format!(
                "Source offset {o} for source partition {p} has an invalid value {v} for the 'offset' key; the only accepted value is 0"
            ))),
            Some(n) if n < 0 => Err(ConnectError::connect(format!(
                "Source offset {o} for source partition {p} has an invalid value {v} for the 'offset' key, which cannot be negative"
            ))),
            Some(_) => Ok(()),
            None => Err(ConnectError::connect(format!(
                "Source offset {o} for source partition {p} has an invalid value {} for the 'offset' key, which must be an integer",
                java_value(v)
            ))),
        },
    }
}
