//! MirrorMaker 2's internal records, byte for byte as Apache's classes write them, and the
//! source partitions and offsets its connectors commit.
//!
//! The records use Kafka's protocol types (`org.apache.kafka.common.protocol.types`): a STRING
//! is a big-endian 16-bit length and UTF-8 bytes, INT16/INT32/INT64 are big-endian. Values of
//! checkpoints and heartbeats start with a 16-bit version (0); offset syncs have none.
//! - [`OffsetSync`] (`OffsetSync`, on `mm2-offset-syncs.<alias>.internal`): key `topic`
//!   STRING, `partition` INT32; value `upstreamOffset` INT64, `offset` INT64.
//! - [`Checkpoint`] (`Checkpoint`, on `<alias>.checkpoints.internal`): key `group` STRING,
//!   `topic` STRING, `partition` INT32; value `version` INT16, `upstreamOffset` INT64,
//!   `offset` INT64, `metadata` STRING.
//! - [`Heartbeat`] (`Heartbeat`, on `heartbeats`): key `sourceClusterAlias` STRING,
//!   `targetClusterAlias` STRING; value `version` INT16, `timestamp` INT64 (ms since the
//!   epoch).
//!
//! Decoding errors read as Java's `SchemaException` messages do (`Error reading field 'topic':
//! …`).

use serde_json::Value as Json;
use tributary_api::data::java_hash_map;
use tributary_api::record::SourceMap;

/// The version Apache writes in checkpoint and heartbeat values.
pub const VERSION: i16 = 0;

/// An offset sync: `upstream_offset` of `topic`/`partition` on the source was written at
/// `downstream_offset` on the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetSync {
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
}

impl OffsetSync {
    /// The record key (`topic`, `partition`). Errors: a topic longer than a STRING holds.
    pub fn key(&self) -> Result<Vec<u8>, String> {
        let mut w = Writer::default();
        w.string("topic", &self.topic)?;
        w.int32(self.partition);
        Ok(w.0)
    }

    /// The record value (`upstreamOffset`, `offset`).
    pub fn value(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.int64(self.upstream_offset);
        w.int64(self.downstream_offset);
        w.0
    }

    /// Reads a record written by [`OffsetSync::key`] / [`OffsetSync::value`] or by Java.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<OffsetSync, String> {
        let mut k = Reader(key);
        let mut v = Reader(value);
        Ok(OffsetSync {
            topic: k.string("topic")?,
            partition: k.int32("partition")?,
            upstream_offset: v.int64("upstreamOffset")?,
            downstream_offset: v.int64("offset")?,
        })
    }
}

/// A checkpoint: consumer group `group` had committed `upstream_offset` of
/// `topic`/`partition` (the topic as named on the target) on the source, which is
/// `downstream_offset` on the target; `metadata` is the committed offset's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
    pub metadata: String,
}

impl Checkpoint {
    /// The record key (`group`, `topic`, `partition`). Errors: a field longer than a STRING
    /// holds.
    pub fn key(&self) -> Result<Vec<u8>, String> {
        let mut w = Writer::default();
        w.string("group", &self.group)?;
        w.string("topic", &self.topic)?;
        w.int32(self.partition);
        Ok(w.0)
    }

    /// The record value (version 0, `upstreamOffset`, `offset`, `metadata`). Errors: metadata
    /// longer than a STRING holds (32,767 bytes).
    pub fn value(&self) -> Result<Vec<u8>, String> {
        let mut w = Writer::default();
        w.int16(VERSION);
        w.int64(self.upstream_offset);
        w.int64(self.downstream_offset);
        w.string("metadata", &self.metadata)?;
        Ok(w.0)
    }

    /// Reads a record written by [`Checkpoint::key`] / [`Checkpoint::value`] or by Java (the
    /// version is read and, as Java does with assertions off, the rest read as version 0).
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Checkpoint, String> {
        let mut v = Reader(value);
        v.int16("version")?;
        let upstream_offset = v.int64("upstreamOffset")?;
        let downstream_offset = v.int64("offset")?;
        let metadata = v.string("metadata")?;
        let mut k = Reader(key);
        Ok(Checkpoint {
            group: k.string("group")?,
            topic: k.string("topic")?,
            partition: k.int32("partition")?,
            upstream_offset,
            downstream_offset,
            metadata,
        })
    }

    /// The checkpoint connector's source partition for this checkpoint: `group`, `topic`,
    /// `partition`, in the order Java's `HashMap` gives them.
    pub fn source_partition(&self) -> SourceMap {
        java_ordered(&[
            ("group", Json::from(self.group.clone())),
            ("topic", Json::from(self.topic.clone())),
            ("partition", Json::from(self.partition)),
        ])
    }
}

/// A heartbeat from `source_cluster_alias` replicated towards `target_cluster_alias`, sent at
/// `timestamp` (ms since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    pub source_cluster_alias: String,
    pub target_cluster_alias: String,
    pub timestamp: i64,
}

impl Heartbeat {
    /// The record key (`sourceClusterAlias`, `targetClusterAlias`). Errors: an alias longer
    /// than a STRING holds.
    pub fn key(&self) -> Result<Vec<u8>, String> {
        let mut w = Writer::default();
        w.string("sourceClusterAlias", &self.source_cluster_alias)?;
        w.string("targetClusterAlias", &self.target_cluster_alias)?;
        Ok(w.0)
    }

    /// The record value (version 0, `timestamp`).
    pub fn value(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.int16(VERSION);
        w.int64(self.timestamp);
        w.0
    }

    /// Reads a record written by [`Heartbeat::key`] / [`Heartbeat::value`] or by Java.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Heartbeat, String> {
        let mut v = Reader(value);
        v.int16("version")?;
        let timestamp = v.int64("timestamp")?;
        let mut k = Reader(key);
        Ok(Heartbeat {
            source_cluster_alias: k.string("sourceClusterAlias")?,
            target_cluster_alias: k.string("targetClusterAlias")?,
            timestamp,
        })
    }

    /// The heartbeat connector's source partition: `sourceClusterAlias`, `targetClusterAlias`
    /// in Java's `HashMap` order.
    pub fn source_partition(&self) -> SourceMap {
        java_ordered(&[
            (
                "sourceClusterAlias",
                Json::from(self.source_cluster_alias.clone()),
            ),
            (
                "targetClusterAlias",
                Json::from(self.target_cluster_alias.clone()),
            ),
        ])
    }
}

/// The source partition `MirrorSourceTask` commits for `topic`/`partition` of cluster
/// `source_cluster_alias` (`topic`, `partition`, `cluster`, in Java's `HashMap` order).
pub fn source_partition(topic: &str, partition: i32, source_cluster_alias: &str) -> SourceMap {
    java_ordered(&[
        ("topic", Json::from(topic)),
        ("partition", Json::from(partition)),
        ("cluster", Json::from(source_cluster_alias)),
    ])
}

/// The source offset MirrorMaker's connectors commit: `{"offset": offset}` (for the source
/// connector the replicated record's own upstream offset, so a restarted task seeks to the
/// one after it; 0 for checkpoints and heartbeats).
pub fn source_offset(offset: i64) -> SourceMap {
    let mut map = SourceMap::new();
    map.insert("offset".to_string(), Json::from(offset));
    map
}

/// `entries` put in order into a Java `HashMap`, in the order it iterates them (which is the
/// order Connect's JSON converter writes the map, so the offsets topic key is Java's).
fn java_ordered(entries: &[(&str, Json)]) -> SourceMap {
    let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
    java_hash_map::order(&keys)
        .into_iter()
        .map(|(k, v)| (entries[k].0.to_string(), entries[v].1.clone()))
        .collect()
}

/// Big-endian protocol types into a buffer.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn int16(&mut self, v: i16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn int32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn int64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    /// A STRING: a 16-bit length, then UTF-8. A string longer than 32,767 bytes cannot be
    /// written: the error is Java's `SchemaException` message.
    fn string(&mut self, field: &str, s: &str) -> Result<(), String> {
        let len = i16::try_from(s.len()).map_err(|_| {
            format!(
                "Error writing field '{field}': String length {} is larger than the maximum string length.",
                s.len()
            )
        })?;
        self.int16(len);
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Big-endian protocol types out of a buffer; errors name the field as Java's do.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self, field: &str) -> Result<[u8; N], String> {
        if self.0.len() < N {
            return Err(format!(
                "Error reading field '{field}': java.nio.BufferUnderflowException"
            ));
        }
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        Ok(head.try_into().expect("N bytes"))
    }
    fn int16(&mut self, field: &str) -> Result<i16, String> {
        self.take::<2>(field).map(i16::from_be_bytes)
    }
    fn int32(&mut self, field: &str) -> Result<i32, String> {
        self.take::<4>(field).map(i32::from_be_bytes)
    }
    fn int64(&mut self, field: &str) -> Result<i64, String> {
        self.take::<8>(field).map(i64::from_be_bytes)
    }
    fn string(&mut self, field: &str) -> Result<String, String> {
        let len = self.int16(field)?;
        if len < 0 {
            return Err(format!(
                "Error reading field '{field}': String length {len} cannot be negative"
            ));
        }
        let len = len as usize;
        if len > self.0.len() {
            return Err(format!(
                "Error reading field '{field}': Error reading string of length {len}, only {} bytes available",
                self.0.len()
            ));
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(String::from_utf8_lossy(head).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_what_they_write() {
        let sync = OffsetSync {
            topic: "orders".into(),
            partition: 3,
            upstream_offset: 100,
            downstream_offset: 42,
        };
        assert_eq!(
            sync.key().unwrap(),
            [&[0, 6][..], b"orders", &[0, 0, 0, 3]].concat(),
            "a STRING is a 16-bit length and the bytes"
        );
        assert_eq!(
            OffsetSync::decode(&sync.key().unwrap(), &sync.value()).unwrap(),
            sync
        );
        let cp = Checkpoint {
            group: "g".into(),
            topic: "A.orders".into(),
            partition: 0,
            upstream_offset: 7,
            downstream_offset: 5,
            metadata: String::new(),
        };
        assert_eq!(&cp.value().unwrap()[..2], &[0, 0], "version 0 first");
        assert_eq!(
            Checkpoint::decode(&cp.key().unwrap(), &cp.value().unwrap()).unwrap(),
            cp
        );
        let long = Checkpoint {
            metadata: "m".repeat(32_768),
            ..cp.clone()
        };
        assert_eq!(
            long.value().unwrap_err(),
            "Error writing field 'metadata': String length 32768 is larger than the maximum string length."
        );
        let longest = Checkpoint {
            metadata: "m".repeat(32_767),
            ..cp
        };
        assert!(longest.value().is_ok());
        let hb = Heartbeat {
            source_cluster_alias: "A".into(),
            target_cluster_alias: "B".into(),
            timestamp: 1_700_000_000_000,
        };
        assert_eq!(
            Heartbeat::decode(&hb.key().unwrap(), &hb.value()).unwrap(),
            hb
        );
    }

    #[test]
    fn truncated_records_are_refused_naming_the_field() {
        let e = OffsetSync::decode(&[0, 9, b'a'], &[0; 16]).unwrap_err();
        assert_eq!(
            e,
            "Error reading field 'topic': Error reading string of length 9, only 1 bytes available"
        );
        let e = Heartbeat::decode(&[], &[0, 0, 1]).unwrap_err();
        assert!(e.starts_with("Error reading field 'timestamp'"), "{e}");
    }
}
