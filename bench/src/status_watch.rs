//! Reading a worker group's status topic (Connect's `status-connector-<c>` and
//! `status-task-<c>-<n>` records) from a marked position, the same way for Java and Tributary
//! workers.

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::Value;

use crate::stamp;

/// One status record: its key, and the `state` and `worker_id` of its value (empty when absent,
/// for a tombstone or a value that is not JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRecord {
    /// `status-connector-<c>`, `status-task-<c>-<n>`, `status-topic-…`.
    pub key: String,
    /// `RUNNING`, `UNASSIGNED`, `PAUSED`, `STOPPED`, `FAILED`, `RESTARTING`, or empty.
    pub state: String,
    /// The worker that wrote it (`host:port` of its REST API), or empty.
    pub worker_id: String,
}

impl StatusRecord {
    /// The task id (`<c>-<n>`) of a task status record.
    pub fn task(&self) -> Option<&str> {
        self.key.strip_prefix("status-task-")
    }
}

/// Reads a group's status topic from a marked position.
pub struct StatusWatch {
    consumer: BaseConsumer,
    topic: String,
}

impl StatusWatch {
    /// A consumer of `topic` (no group offsets are committed); call [`StatusWatch::mark`]
    /// before polling.
    pub fn new(bootstrap: &str, topic: &str) -> Result<StatusWatch, String> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("{topic}-watch-{}", stamp()))
            .set("enable.auto.commit", "false")
            .set("log_level", "3")
            .create()
            .map_err(|e| e.to_string())?;
        Ok(StatusWatch {
            consumer,
            topic: topic.to_string(),
        })
    }

    /// Assigns every partition at its current end.
    pub fn mark(&self) -> Result<(), String> {
        let tpl = self.partitions_from(|p| {
            let (_, high) = self
                .consumer
                .fetch_watermarks(&self.topic, p, Duration::from_secs(10))
                .map_err(|e| e.to_string())?;
            Ok(Offset::Offset(high))
        })?;
        self.consumer.assign(&tpl).map_err(|e| e.to_string())
    }

    /// Assigns every partition at its beginning (to read every status record there is).
    pub fn from_beginning(&self) -> Result<(), String> {
        let tpl = self.partitions_from(|_| Ok(Offset::Beginning))?;
        if tpl.count() == 0 {
            return Err(format!("topic {} has no partitions (yet)", self.topic));
        }
        self.consumer.assign(&tpl).map_err(|e| e.to_string())
    }

    /// Every partition of the topic, each at the offset `start` gives for its number.
    fn partitions_from(
        &self,
        start: impl Fn(i32) -> Result<Offset, String>,
    ) -> Result<TopicPartitionList, String> {
        let md = self
            .consumer
            .fetch_metadata(Some(&self.topic), Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        let mut tpl = TopicPartitionList::new();
        for t in md.topics() {
            for p in t.partitions() {
                tpl.add_partition_offset(&self.topic, p.id(), start(p.id())?)
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(tpl)
    }

    /// Status records read within `wait`.
    pub fn poll(&self, wait: Duration) -> Vec<StatusRecord> {
        let mut out = Vec::new();
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Some(Ok(m)) = self.consumer.poll(Duration::from_millis(5)) {
                let key = m
                    .key()
                    .map(|k| String::from_utf8_lossy(k).to_string())
                    .unwrap_or_default();
                let value = m
                    .payload()
                    .and_then(|p| serde_json::from_slice::<Value>(p).ok())
                    .unwrap_or(Value::Null);
                let field = |f: &str| value[f].as_str().unwrap_or_default().to_string();
                out.push(StatusRecord {
                    key,
                    state: field("state"),
                    worker_id: field("worker_id"),
                });
            }
        }
        out
    }
}
