//! Records flowing through Connect: [`SourceRecord`] (from a source task towards Kafka) and
//! [`SinkRecord`] (from Kafka towards a sink task), with their [`Headers`].

use std::sync::Arc;

use crate::data::{SchemaRef, Value};

/// A source partition or offset: Connect's `Map<String, ?>`, stored as JSON in the offset store.
pub type SourceMap = serde_json::Map<String, serde_json::Value>;

/// One header of a record: key, optional schema and value (Connect's `Header`).
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub key: String,
    pub schema: Option<SchemaRef>,
    pub value: Value,
}

/// The headers of a record, in order; keys may repeat (Connect's `Headers`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headers(pub Vec<Header>);

impl Headers {
    /// No headers.
    pub fn new() -> Self {
        Headers(Vec::new())
    }
    /// Appends a header.
    pub fn add(&mut self, key: impl Into<String>, schema: Option<SchemaRef>, value: Value) {
        self.0.push(Header {
            key: key.into(),
            schema,
            value,
        });
    }
    /// The last header with the given key.
    pub fn last_with_name(&self, key: &str) -> Option<&Header> {
        self.0.iter().rev().find(|h| h.key == key)
    }
    pub fn iter(&self) -> impl Iterator<Item = &Header> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// A record produced by a source task (Connect's `SourceRecord`).
///
/// `source_partition` / `source_offset` identify where in the external system the record came
/// from; the runtime stores the offset once Kafka acknowledged the record and every record the
/// task produced before it. `kafka_partition` `None` lets the producer's partitioner choose;
/// `timestamp` is in ms since the epoch (`None`: the producer's time).
///
/// `source_partition` is shared: a task emitting many records for the same partition should
/// build the map once and hand out clones of the [`Arc`] (cheap, no deep copy); the runtime also
/// recognises records of the same partition by pointer before comparing contents.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRecord {
    pub source_partition: Arc<SourceMap>,
    pub source_offset: SourceMap,
    pub topic: String,
    pub kafka_partition: Option<i32>,
    pub key_schema: Option<SchemaRef>,
    pub key: Value,
    pub value_schema: Option<SchemaRef>,
    pub value: Value,
    pub timestamp: Option<i64>,
    pub headers: Headers,
}

impl SourceRecord {
    /// A record with a value (and value schema) only: no key, partition, timestamp or headers.
    /// `source_partition` is an `Arc<SourceMap>` or a plain [`SourceMap`] (wrapped here).
    pub fn new(
        source_partition: impl Into<Arc<SourceMap>>,
        source_offset: SourceMap,
        topic: impl Into<String>,
        value_schema: Option<SchemaRef>,
        value: Value,
    ) -> SourceRecord {
        SourceRecord {
            source_partition: source_partition.into(),
            source_offset,
            topic: topic.into(),
            kafka_partition: None,
            key_schema: None,
            key: Value::Null,
            value_schema,
            value,
            timestamp: None,
            headers: Headers::new(),
        }
    }
}

/// What Kafka reported for a produced record (Java's `RecordMetadata`, subset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordMetadata {
    pub partition: i32,
    pub offset: i64,
}

/// A topic and partition (Kafka's `TopicPartition`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl std::fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// How a Kafka record's timestamp was set (Kafka's `TimestampType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampType {
    NoTimestampType,
    CreateTime,
    LogAppendTime,
}

/// A record consumed from Kafka and handed to a sink task (Connect's `SinkRecord`).
/// `kafka_offset` is the record's offset in its partition; `timestamp` in ms since the epoch.
///
/// `original_topic`, `original_kafka_partition` and `original_kafka_offset` are where the record
/// was consumed from, before any transformation changed `topic` or `kafka_partition` (KIP-793);
/// offsets are committed for those coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct SinkRecord {
    pub topic: String,
    pub kafka_partition: i32,
    pub key_schema: Option<SchemaRef>,
    pub key: Value,
    pub value_schema: Option<SchemaRef>,
    pub value: Value,
    pub kafka_offset: i64,
    pub timestamp: Option<i64>,
    pub timestamp_type: TimestampType,
    pub headers: Headers,
    pub original_topic: String,
    pub original_kafka_partition: i32,
    pub original_kafka_offset: i64,
}

impl SinkRecord {
    /// A record as consumed from `topic`/`kafka_partition` at `kafka_offset`: the original
    /// coordinates are the same as the current ones. `timestamp` is in ms since the epoch.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topic: impl Into<String>,
        kafka_partition: i32,
        key_schema: Option<SchemaRef>,
        key: Value,
        value_schema: Option<SchemaRef>,
        value: Value,
        kafka_offset: i64,
        timestamp: Option<i64>,
        timestamp_type: TimestampType,
        headers: Headers,
    ) -> SinkRecord {
        let topic = topic.into();
        SinkRecord {
            original_topic: topic.clone(),
            original_kafka_partition: kafka_partition,
            original_kafka_offset: kafka_offset,
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            kafka_offset,
            timestamp,
            timestamp_type,
            headers,
        }
    }

    /// Where the record was consumed from, before any transformation (KIP-793).
    pub fn original_topic_partition(&self) -> TopicPartition {
        TopicPartition::new(self.original_topic.clone(), self.original_kafka_partition)
    }
}
