//! Connector-specific offsets topics (KIP-618's `offsets.storage.topic` connector setting, as
//! Connect's `ConnectorOffsetBackingStore` and `Worker.offsetStoreFor*` implement it).
//!
//! A source connector configured with its own offsets topic reads and writes its offsets
//! through a [`ConnectorOffsetBackingStore`]: the connector's topic is the primary store, the
//! worker's `offset.storage.topic` the secondary one.
//! - Reads: both stores, the connector topic's value winning for a partition present in both
//!   (so a connector moved onto its own topic keeps the offsets it had in the worker's topic).
//! - Writes: tombstones go to the worker's topic first (so an offset reset there cannot be
//!   shadowed by an older value), then every entry to the connector's topic (what the caller
//!   waits for), then the non-tombstone entries to the worker's topic on a best-effort basis
//!   (a failure there is logged, never returned).
//!
//! Only distributed workers apply the setting (Connect's `connectorOffsetsTopicsPermitted`);
//! a connector whose topic is the worker's own simply uses the worker's store. Connector
//! topics are created, when missing, with the worker's `offset.storage.*` settings (partitions,
//! replication factor, topic configs, compaction), as Connect's `KafkaOffsetBackingStore` does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::ClientConfig;
use tributary_api::ConnectResult;

use super::offset::{OffsetBackingStore, OffsetEntry};
use super::offset_topic::KafkaOffsetBackingStore;
use super::topic_admin::{ensure_topic, ManagedTopic};

/// The connector key that names a connector-specific offsets topic.
pub const CONNECTOR_OFFSETS_TOPIC: &str = "offsets.storage.topic";

/// A connector's offsets topic in front of the worker's (Connect's
/// `ConnectorOffsetBackingStore.withConnectorAndWorkerStores`).
pub struct ConnectorOffsetBackingStore {
    /// The connector's own topic: the primary store.
    pub connector: Arc<dyn OffsetBackingStore>,
    /// The worker's `offset.storage.topic`: the secondary store.
    pub worker: Arc<dyn OffsetBackingStore>,
    /// The connector's topic name (for logs).
    pub topic: String,
}

impl ConnectorOffsetBackingStore {
    /// Writes `entries` (no tombstones) to the worker's topic in the background, logging a
    /// failure: the secondary write never holds up nor fails the caller.
    pub fn write_secondary(worker: Arc<dyn OffsetBackingStore>, entries: Vec<OffsetEntry>) {
        if entries.is_empty() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("offsets-secondary".into())
            .spawn(move || {
                if let Err(e) = worker.set(entries) {
                    tracing::warn!(error = %e, "failed to write offsets to the worker's offsets topic (secondary store)");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "could not start the secondary offsets write");
        }
    }

    fn split(entries: &[OffsetEntry]) -> (Vec<OffsetEntry>, Vec<OffsetEntry>) {
        entries.iter().cloned().partition(|(_, v)| v.is_none())
    }
}

impl OffsetBackingStore for ConnectorOffsetBackingStore {
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<HashMap<Vec<u8>, Vec<u8>>> {
        let mut found = self.worker.get(keys)?;
        found.extend(self.connector.get(keys)?);
        Ok(found)
    }

    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()> {
        let (tombstones, values) = Self::split(&entries);
        if !tombstones.is_empty() {
            self.worker.set(tombstones)?;
        }
        self.connector.set(entries)?;
        Self::write_secondary(self.worker.clone(), values);
        Ok(())
    }

    fn set_within(
        &self,
        entries: Vec<OffsetEntry>,
        timeout: Duration,
        abort: &dyn Fn() -> bool,
    ) -> ConnectResult<()> {
        let (tombstones, values) = Self::split(&entries);
        if !tombstones.is_empty() {
            self.worker.set_within(tombstones, timeout, abort)?;
        }
        self.connector.set_within(entries, timeout, abort)?;
        Self::write_secondary(self.worker.clone(), values);
        Ok(())
    }

    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut all: HashMap<Vec<u8>, Vec<u8>> = self.worker.entries()?.into_iter().collect();
        all.extend(self.connector.entries()?);
        Ok(all.into_iter().collect())
    }
}

/// Creates the client configuration of a connector offsets topic's log; the argument is a
/// client id suffix.
pub type ClientFactory = Arc<dyn Fn(&str) -> ClientConfig + Send + Sync>;

/// The connector offsets topics one distributed worker follows: each topic is read by one
/// [`KafkaOffsetBackingStore`], started on first use and shared by the connector and tasks of
/// every connector naming it, until the worker stops.
pub struct ConnectorOffsetTopics {
    /// The worker's `offset.storage.topic`, as a template for the topics created here.
    worker_topic: ManagedTopic,
    client: ClientFactory,
    stores: Mutex<HashMap<String, Arc<KafkaOffsetBackingStore>>>,
}

impl ConnectorOffsetTopics {
    /// Connector topics are created like `worker_topic` (its partitions, replication factor and
    /// topic configs) through its admin client; their logs use `client`'s configurations.
    pub fn new(worker_topic: ManagedTopic, client: ClientFactory) -> ConnectorOffsetTopics {
        ConnectorOffsetTopics {
            worker_topic,
            client,
            stores: Mutex::new(HashMap::new()),
        }
    }

    /// The worker's `offset.storage.topic`.
    pub fn worker_topic(&self) -> &str {
        &self.worker_topic.topic.name
    }

    /// The store reading `topic`, started (the topic created when missing, then read to its
    /// end) on first use. Blocks while it starts; errors name the topic.
    pub fn store(&self, topic: &str) -> ConnectResult<Arc<KafkaOffsetBackingStore>> {
        // Held while starting, so a topic is never followed twice.
        let mut stores = self.stores.lock().unwrap();
        if let Some(s) = stores.get(topic) {
            return Ok(s.clone());
        }
        let mut managed = self.worker_topic.clone();
        managed.topic.name = topic.to_string();
        managed.topic.setting = CONNECTOR_OFFSETS_TOPIC;
        ensure_topic(&managed.admin, &managed.topic)?;
        let suffix = format!("offsets-{topic}");
        let store = Arc::new(KafkaOffsetBackingStore::start(
            topic,
            (self.client)(&suffix),
            (self.client)(&suffix),
            Some(managed),
        )?);
        tracing::info!(topic, "following a connector-specific offsets topic");
        stores.insert(topic.to_string(), store.clone());
        Ok(store)
    }

    /// Stops following every connector offsets topic.
    pub fn stop(&self) {
        for (_, store) in self.stores.lock().unwrap().drain() {
            store.stop();
        }
    }
}

/// The connector-specific offsets topic `config` names, if any (blank counts as unset).
pub fn connector_offsets_topic(config: &HashMap<String, String>) -> Option<String> {
    config
        .get(CONNECTOR_OFFSETS_TOPIC)
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::offset::MemoryOffsetBackingStore;

    fn entry(k: &str, v: Option<&str>) -> OffsetEntry {
        (k.as_bytes().to_vec(), v.map(|v| v.as_bytes().to_vec()))
    }

    fn stores() -> (
        Arc<MemoryOffsetBackingStore>,
        Arc<MemoryOffsetBackingStore>,
        ConnectorOffsetBackingStore,
    ) {
        let connector = Arc::new(MemoryOffsetBackingStore::default());
        let worker = Arc::new(MemoryOffsetBackingStore::default());
        let store = ConnectorOffsetBackingStore {
            connector: connector.clone(),
            worker: worker.clone(),
            topic: "mine".into(),
        };
        (connector, worker, store)
    }

    #[test]
    fn connector_values_win_and_worker_values_fill_in() {
        let (connector, worker, store) = stores();
        worker.apply(vec![entry("a", Some("1")), entry("b", Some("1"))]);
        connector.apply(vec![entry("a", Some("2"))]);
        let keys = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        let got = store.get(&keys).unwrap();
        assert_eq!(got.get(b"a".as_slice()), Some(&b"2".to_vec()));
        assert_eq!(got.get(b"b".as_slice()), Some(&b"1".to_vec()));
        assert_eq!(got.len(), 2);
        let mut all = store.entries().unwrap();
        all.sort();
        assert_eq!(
            all,
            vec![
                (b"a".to_vec(), b"2".to_vec()),
                (b"b".to_vec(), b"1".to_vec())
            ]
        );
    }

    #[test]
    fn writes_go_to_the_connector_topic_and_tombstones_to_both() {
        let (connector, worker, store) = stores();
        worker.apply(vec![entry("gone", Some("old"))]);
        connector.apply(vec![entry("gone", Some("newer"))]);
        store
            .set(vec![entry("kept", Some("5")), entry("gone", None)])
            .unwrap();
        // The tombstone removed the key from both stores: no stale value shows through.
        assert!(store.get(&[b"gone".to_vec()]).unwrap().is_empty());
        assert!(worker.get(&[b"gone".to_vec()]).unwrap().is_empty());
        assert_eq!(
            connector
                .get(&[b"kept".to_vec()])
                .unwrap()
                .get(b"kept".as_slice()),
            Some(&b"5".to_vec())
        );
    }
}
