//! Source offsets: the key/value encoding Connect uses in every offset store
//! (`OffsetStorageWriter` / `OffsetStorageReaderImpl`) and the [`OffsetBackingStore`] trait.
//!
//! Key: the JsonConverter (schemas disabled) bytes of `["<connector>",{<source partition>}]`;
//! value: the bytes of the offset map as JSON, or null (a tombstone).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tributary_api::record::SourceMap;
use tributary_api::source::OffsetStorageReader;
use tributary_api::{ConnectError, ConnectResult};

/// A raw offset entry: key bytes and value bytes (`None` for a tombstone).
pub type OffsetEntry = (Vec<u8>, Option<Vec<u8>>);

/// Storage of raw offset entries (Connect's `OffsetBackingStore`).
pub trait OffsetBackingStore: Send + Sync {
    /// The stored values for the given keys (absent keys are left out).
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<HashMap<Vec<u8>, Vec<u8>>>;
    /// Stores entries durably; a `None` value removes the key. Returns once they are durable.
    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()>;
    /// Every stored entry (key bytes, value bytes), after catching up with the store (the
    /// offsets topic is read to its end first). What the offsets API lists and resets.
    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Like [`set`](Self::set), but gives up after `timeout`, or as soon as `abort` answers
    /// true (checked every few ms), with a retriable error (Connect's bounded offset flush,
    /// `offset.flush.timeout.ms`). Entries may still become durable later; what was durable
    /// before stays valid. Stores whose writes cannot hang just call `set`.
    fn set_within(
        &self,
        entries: Vec<OffsetEntry>,
        _timeout: std::time::Duration,
        _abort: &dyn Fn() -> bool,
    ) -> ConnectResult<()> {
        self.set(entries)
    }
    /// Stops following the store (the offsets topic's log); a no-op for stores without one.
    fn stop(&self) {}
}

/// The offset key bytes for a connector's source partition: `["name",{partition}]`.
pub fn offset_key(connector: &str, partition: &SourceMap) -> Vec<u8> {
    let key = serde_json::Value::Array(vec![
        serde_json::Value::String(connector.to_string()),
        serde_json::Value::Object(partition.clone()),
    ]);
    serde_json::to_vec(&key).expect("JSON values always serialize")
}

/// The offset value bytes.
pub fn offset_value(offset: &SourceMap) -> Vec<u8> {
    serde_json::to_vec(offset).expect("JSON values always serialize")
}

/// Decodes an offset key into (connector, partition). Errors for keys not in Connect's form.
pub fn parse_offset_key(key: &[u8]) -> ConnectResult<(String, SourceMap)> {
    let v: serde_json::Value = serde_json::from_slice(key)
        .map_err(|e| ConnectError::data(format!("Invalid offset key: {e}")))?;
    match v {
        serde_json::Value::Array(mut items) if items.len() == 2 => {
            let partition = match items.pop() {
                Some(serde_json::Value::Object(m)) => m,
                _ => {
                    return Err(ConnectError::data(
                        "Invalid offset key: partition is not an object",
                    ))
                }
            };
            match items.pop() {
                Some(serde_json::Value::String(c)) => Ok((c, partition)),
                _ => Err(ConnectError::data(
                    "Invalid offset key: connector name is not a string",
                )),
            }
        }
        _ => Err(ConnectError::data(
            "Invalid offset key: expected [connector, partition]",
        )),
    }
}

/// Reads a connector's committed offsets from a backing store (`OffsetStorageReaderImpl`).
pub struct ConnectorOffsetReader {
    pub connector: String,
    pub store: Arc<dyn OffsetBackingStore>,
}

impl OffsetStorageReader for ConnectorOffsetReader {
    fn offset(&self, partition: &SourceMap) -> ConnectResult<Option<SourceMap>> {
        let key = offset_key(&self.connector, partition);
        let found = self.store.get(std::slice::from_ref(&key))?;
        match found.get(&key) {
            None => Ok(None),
            Some(bytes) => match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(serde_json::Value::Object(m)) => Ok(Some(m)),
                Ok(serde_json::Value::Null) => Ok(None),
                Ok(_) | Err(_) => Err(ConnectError::data(format!(
                    "Offset value for connector {} is not a JSON object",
                    self.connector
                ))),
            },
        }
    }
}

/// An in-memory offset store (`MemoryOffsetBackingStore`), also the cache under the file store.
#[derive(Default)]
pub struct MemoryOffsetBackingStore {
    data: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
}

impl MemoryOffsetBackingStore {
    /// A store holding `entries`.
    pub fn with_entries(entries: Vec<OffsetEntry>) -> Self {
        let store = MemoryOffsetBackingStore::default();
        store.apply(entries);
        store
    }

    /// Applies entries in memory.
    pub fn apply(&self, entries: Vec<OffsetEntry>) {
        let mut data = self.data.lock().unwrap();
        for (k, v) in entries {
            match v {
                Some(v) => {
                    data.insert(k, v);
                }
                None => {
                    data.remove(&k);
                }
            }
        }
    }

    /// A copy of every entry.
    pub fn snapshot(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.data
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl OffsetBackingStore for MemoryOffsetBackingStore {
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<HashMap<Vec<u8>, Vec<u8>>> {
        let data = self.data.lock().unwrap();
        Ok(keys
            .iter()
            .filter_map(|k| data.get(k).map(|v| (k.clone(), v.clone())))
            .collect())
    }
    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()> {
        self.apply(entries);
        Ok(())
    }
    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(self.snapshot())
    }
}

/// A connector's source partitions and offsets in `store` (Connect's
/// `OffsetBackingStore.connectorPartitions` read through `OffsetStorageReader.offsets`): every
/// key of the form `["<connector>", {partition}]` with an object value, sorted by the
/// partition's JSON text. Keys in another form are skipped, as Connect skips them.
pub fn connector_offsets(
    store: &dyn OffsetBackingStore,
    connector: &str,
) -> ConnectResult<Vec<(SourceMap, SourceMap)>> {
    let mut out: Vec<(String, SourceMap, SourceMap)> = Vec::new();
    for (k, v) in store.entries()? {
        let Ok((c, partition)) = parse_offset_key(&k) else {
            continue;
        };
        if c != connector {
            continue;
        }
        if let Ok(serde_json::Value::Object(offset)) = serde_json::from_slice(&v) {
            let text = serde_json::to_string(&partition).unwrap_or_default();
            out.push((text, partition, offset));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out.into_iter().map(|(_, p, o)| (p, o)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_connects_compact_json() {
        let mut p = SourceMap::new();
        p.insert("filename".into(), "/tmp/a b".into());
        assert_eq!(
            offset_key("conn", &p),
            br#"["conn",{"filename":"/tmp/a b"}]"#.to_vec()
        );
        let (c, back) = parse_offset_key(&offset_key("conn", &p)).unwrap();
        assert_eq!((c.as_str(), back), ("conn", p));
        assert!(parse_offset_key(b"{}").is_err());
    }

    #[test]
    fn reader_finds_what_was_set() {
        let store = Arc::new(MemoryOffsetBackingStore::default());
        let mut p = SourceMap::new();
        p.insert("filename".into(), "f".into());
        let mut o = SourceMap::new();
        o.insert("position".into(), 42.into());
        store
            .set(vec![(offset_key("c", &p), Some(offset_value(&o)))])
            .unwrap();
        let reader = ConnectorOffsetReader {
            connector: "c".into(),
            store: store.clone(),
        };
        assert_eq!(reader.offset(&p).unwrap(), Some(o));
        let other = ConnectorOffsetReader {
            connector: "d".into(),
            store,
        };
        assert_eq!(other.offset(&p).unwrap(), None);
    }
}
