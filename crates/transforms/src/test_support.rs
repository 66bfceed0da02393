//! Record and settings builders for the unit tests of the header, router, timestamp and
//! predicate modules.

use tributary_api::data::{SchemaRef, Value};
use tributary_api::record::{Headers, SinkRecord, SourceRecord, TimestampType};
use tributary_api::Props;

/// Settings from key/value pairs.
pub fn props(pairs: &[(&str, &str)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A source record of topic `topic` with this key and value, partition 3, timestamp `ts`, and
/// its own source partition and offset.
pub fn source(
    topic: &str,
    key: (Option<SchemaRef>, Value),
    value: (Option<SchemaRef>, Value),
    ts: Option<i64>,
) -> SourceRecord {
    let mut partition = serde_json::Map::new();
    partition.insert("file".into(), "f".into());
    let mut offset = serde_json::Map::new();
    offset.insert("position".into(), 7.into());
    let mut r = SourceRecord::new(partition, offset, topic, value.0, value.1);
    r.key_schema = key.0;
    r.key = key.1;
    r.kafka_partition = Some(3);
    r.timestamp = ts;
    r
}

/// A sink record of topic `topic`, partition 1, offset 42, with this key and value and a
/// create-time timestamp `ts`.
pub fn sink(
    topic: &str,
    key: (Option<SchemaRef>, Value),
    value: (Option<SchemaRef>, Value),
    ts: Option<i64>,
) -> SinkRecord {
    SinkRecord::new(
        topic,
        1,
        key.0,
        key.1,
        value.0,
        value.1,
        42,
        ts,
        TimestampType::CreateTime,
        Headers::new(),
    )
}

/// A schemaless map with string keys, in this order.
pub fn map(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| (Value::from(*k), v.clone()))
            .collect(),
    )
}

/// No schema, null: an absent key or a tombstone's value.
pub fn null() -> (Option<SchemaRef>, Value) {
    (None, Value::Null)
}
