//! The offsets topic (Connect's `KafkaOffsetBackingStore`): raw offset keys and values
//! (see [`super::offset`]) followed into memory; every `get` first reads to the end.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tributary_api::ConnectResult;

use super::kafka_log::{KafkaBasedLog, LogRecord, LogWriter, Recovery};
use super::offset::{MemoryOffsetBackingStore, OffsetBackingStore, OffsetEntry};
use super::topic_admin::ManagedTopic;

/// Offsets in Kafka.
pub struct KafkaOffsetBackingStore {
    log: KafkaBasedLog,
    memory: Arc<MemoryOffsetBackingStore>,
}

impl KafkaOffsetBackingStore {
    /// Reads the topic to its end, then keeps following it. With `managed`, a deleted topic is
    /// created again and the worker that created it writes every offset it holds into it (an
    /// offset committed meanwhile by another worker may be overwritten by the older value
    /// held here: records are then processed again, never skipped).
    pub fn start(
        topic: &str,
        producer: rdkafka::ClientConfig,
        consumer: rdkafka::ClientConfig,
        managed: Option<ManagedTopic>,
    ) -> ConnectResult<KafkaOffsetBackingStore> {
        let memory = Arc::new(MemoryOffsetBackingStore::default());
        let m = memory.clone();
        let held = memory.clone();
        let recovery = managed.map(|topic| Recovery {
            topic,
            on_recreated: Box::new(move |created: bool, writer: &LogWriter| {
                if !created {
                    return;
                }
                let entries = held.snapshot();
                for (k, v) in &entries {
                    writer.send(k, Some(v));
                }
                tracing::warn!(
                    offsets = entries.len(),
                    "wrote every source offset this worker holds into the new offsets topic"
                );
            }),
        });
        let log = KafkaBasedLog::start(
            topic,
            producer,
            consumer,
            Box::new(move |rec: LogRecord| match rec.key {
                Some(k) => {
                    // Connect's keys are JSON `[connector, {partition}]`; others are kept (as
                    // Connect keeps them) but no task will ever read them.
                    let connect_key = serde_json::from_slice::<serde_json::Value>(&k)
                        .ok()
                        .and_then(|v| v.as_array().map(|a| a.len() == 2 && a[0].is_string()))
                        .unwrap_or(false);
                    if !connect_key {
                        tracing::warn!(
                            partition = rec.partition,
                            offset = rec.offset,
                            "offsets topic record whose key is not Connect's [connector, partition] JSON"
                        );
                    }
                    m.apply(vec![(k, rec.value)]);
                }
                None => tracing::warn!(
                    partition = rec.partition,
                    offset = rec.offset,
                    "ignoring offsets topic record without a key"
                ),
            }),
            recovery,
        )?;
        Ok(KafkaOffsetBackingStore { log, memory })
    }
}

impl OffsetBackingStore for KafkaOffsetBackingStore {
    /// Stops following the topic.
    fn stop(&self) {
        self.log.stop();
    }
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<HashMap<Vec<u8>, Vec<u8>>> {
        self.log.read_to_end(Duration::from_secs(30))?;
        self.memory.get(keys)
    }
    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>> {
        self.log.read_to_end(Duration::from_secs(30))?;
        Ok(self.memory.snapshot())
    }
    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()> {
        for (k, v) in &entries {
            self.log.send_sync(k, v.as_deref())?;
        }
        Ok(())
    }
    fn set_within(
        &self,
        entries: Vec<OffsetEntry>,
        timeout: Duration,
        abort: &dyn Fn() -> bool,
    ) -> ConnectResult<()> {
        self.log.send_all_within(&entries, timeout, abort)
    }
}
