//! Record and settings builders for the unit tests of the transformations and predicates.

use tributary_api::data::{SchemaRef, Struct, Value};
pub use tributary_api::record::{Headers, SinkRecord, SourceRecord, TimestampType};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectResult, Props};

/// Settings from key/value pairs.
pub fn props(pairs: &[(&str, &str)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A source record for topic `test` with this value (no key, partition or timestamp).
pub fn source_value(schema: Option<SchemaRef>, value: Value) -> SourceRecord {
    SourceRecord::new(
        serde_json::Map::new(),
        serde_json::Map::new(),
        "test",
        schema,
        value,
    )
}

/// A source record for topic `test` with this key and no value.
pub fn source_key(schema: Option<SchemaRef>, key: Value) -> SourceRecord {
    let mut r = source_value(None, Value::Null);
    r.key_schema = schema;
    r.key = key;
    r
}

/// A sink record of `test`, partition 0, at `offset`, with this value.
pub fn sink_value(schema: Option<SchemaRef>, value: Value, offset: i64) -> SinkRecord {
    SinkRecord::new(
        "test",
        0,
        None,
        Value::Null,
        schema,
        value,
        offset,
        None,
        TimestampType::NoTimestampType,
        Default::default(),
    )
}

/// Builder-style setters for source records.
pub trait SourceRecordExt {
    /// The record with this Kafka partition.
    fn with_partition(self, p: i32) -> Self;
    /// The record with this timestamp.
    fn with_timestamp(self, ts: i64) -> Self;
}

impl SourceRecordExt for SourceRecord {
    fn with_partition(mut self, p: i32) -> Self {
        self.kafka_partition = Some(p);
        self
    }
    fn with_timestamp(mut self, ts: i64) -> Self {
        self.timestamp = Some(ts);
        self
    }
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

/// The struct inside `v`; panics otherwise.
pub fn as_struct(v: &Value) -> &Struct {
    match v {
        Value::Struct(s) => s,
        other => panic!("not a struct: {other:?}"),
    }
}

/// Applies `t` to `record`, expecting a record back (not a drop).
pub fn apply<R: ConnectRecord, T: Transformation<R>>(t: &mut T, record: R) -> ConnectResult<R> {
    Ok(t.apply(record)?.expect("the record is kept"))
}

/// Configures a new `T` for source records with these settings.
pub fn configured<T: Default + Transformation<SourceRecord>>(pairs: &[(&str, &str)]) -> T {
    let mut t = T::default();
    t.configure(&props(pairs)).expect("valid settings");
    t
}

/// The configuration error `T` reports for these settings.
pub fn config_error<T: Default + Transformation<SourceRecord>>(pairs: &[(&str, &str)]) -> String {
    let mut t = T::default();
    match t.configure(&props(pairs)) {
        Err(e) => e.to_string(),
        Ok(()) => panic!("settings accepted: {pairs:?}"),
    }
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

/// No schema, null: an absent key or a tombstone's value.
pub fn null() -> (Option<SchemaRef>, Value) {
    (None, Value::Null)
}
