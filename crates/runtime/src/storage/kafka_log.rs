//! A compacted Kafka topic read in full and followed (Connect's `KafkaBasedLog`): the consumer
//! is assigned every partition from the beginning (it never joins a group or commits), a
//! thread hands each record to a callback in order, and [`KafkaBasedLog::read_to_end`] waits
//! until every partition has been consumed up to the end offsets of the moment it was called.
//! Writes go through a producer with `acks=all` and Java's partitioner (murmur2), so keyed
//! records land in the same partition as Java's writers put them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use tributary_api::{ConnectError, ConnectResult};

/// One record read from the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    /// `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

/// How long one write may take before it fails (Connect's 30 s budget for config writes), ms.
pub const WRITE_TIMEOUT_MS: u64 = 30_000;

type Progress = Arc<(Mutex<HashMap<i32, i64>>, Condvar)>;

/// A followed Kafka topic.
pub struct KafkaBasedLog {
    topic: String,
    producer: FutureProducer,
    consumer: Arc<BaseConsumer>,
    partitions: Vec<i32>,
    /// Next offset to consume per partition (last consumed + 1).
    progress: Progress,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl KafkaBasedLog {
    /// Starts following `topic`: waits up to 30 s for its partitions, reads it to the end
    /// (delivering every record to `callback` before returning), then keeps consuming on a
    /// thread of its own. `producer` / `consumer` are the client configurations; the log forces
    /// `acks=all`, Java's partitioner, no auto commit and reading from the beginning.
    pub fn start(
        topic: &str,
        mut producer: ClientConfig,
        mut consumer: ClientConfig,
        callback: Box<dyn FnMut(LogRecord) + Send>,
    ) -> ConnectResult<KafkaBasedLog> {
        producer
            .set("acks", "all")
            .set("partitioner", "murmur2_random")
            .set("message.timeout.ms", WRITE_TIMEOUT_MS.to_string())
            .set("linger.ms", "0")
            // One request in flight per connection, as Connect forces: retries never reorder
            // the records of a key.
            .set("max.in.flight.requests.per.connection", "1");
        consumer
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            .set("enable.partition.eof", "false");
        if consumer.get("group.id").is_none() {
            consumer.set("group.id", format!("tributary-log-{topic}"));
        }
        let producer: FutureProducer = producer.create().map_err(|e| {
            ConnectError::connect(format!("Failed to create producer for topic {topic}: {e}"))
        })?;
        let consumer: Arc<BaseConsumer> = Arc::new(consumer.create().map_err(|e| {
            ConnectError::connect(format!("Failed to create consumer for topic {topic}: {e}"))
        })?);
        let deadline = Instant::now() + Duration::from_secs(30);
        let started = Instant::now();
        let partitions = loop {
            let md = consumer.fetch_metadata(Some(topic), Duration::from_secs(5));
            if let Ok(md) = md {
                if let Some(t) = md.topics().iter().find(|t| t.name() == topic) {
                    // Every partition needs a leader, or reading its end offsets stalls
                    // (a topic created a moment ago elects them one by one).
                    let led = t
                        .partitions()
                        .iter()
                        .all(|p| p.leader() >= 0 && p.error().is_none());
                    if t.error().is_none() && !t.partitions().is_empty() && led {
                        let mut ps: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
                        ps.sort();
                        break ps;
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(ConnectError::connect(format!(
                    "Could not look up partition metadata for topic {topic} within 30 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        tracing::debug!(
            topic,
            ms = started.elapsed().as_millis() as u64,
            "partition metadata ready"
        );
        let mut tpl = TopicPartitionList::new();
        for p in &partitions {
            tpl.add_partition_offset(topic, *p, Offset::Beginning)
                .map_err(|e| ConnectError::connect(e.to_string()))?;
        }
        consumer
            .assign(&tpl)
            .map_err(|e| ConnectError::connect(format!("Failed to assign {topic}: {e}")))?;
        let progress: Progress = Arc::new((Mutex::new(HashMap::new()), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let consumer = consumer.clone();
            let progress = progress.clone();
            let stop = stop.clone();
            let mut callback = callback;
            let name = topic.to_string();
            std::thread::Builder::new()
                .name(format!("log-{topic}"))
                .spawn(move || {
                    while !stop.load(Ordering::Acquire) {
                        match consumer.poll(Duration::from_millis(100)) {
                            None => {}
                            Some(Ok(m)) => {
                                let rec = LogRecord {
                                    partition: m.partition(),
                                    offset: m.offset(),
                                    key: m.key().map(<[u8]>::to_vec),
                                    value: m.payload().map(<[u8]>::to_vec),
                                };
                                drop(m);
                                let (p, o) = (rec.partition, rec.offset);
                                callback(rec);
                                let (lock, cv) = &*progress;
                                lock.lock().unwrap().insert(p, o + 1);
                                cv.notify_all();
                            }
                            Some(Err(e)) => {
                                tracing::warn!(topic = name, "error reading topic: {e}")
                            }
                        }
                    }
                })
                .map_err(|e| ConnectError::connect(format!("cannot spawn log thread: {e}")))?
        };
        let log = KafkaBasedLog {
            topic: topic.to_string(),
            producer,
            consumer,
            partitions,
            progress,
            stop,
            thread: Mutex::new(Some(thread)),
        };
        let t0 = Instant::now();
        log.read_to_end(Duration::from_secs(15 * 60))?;
        tracing::debug!(
            topic,
            partitions = log.partitions.len(),
            ms = t0.elapsed().as_millis() as u64,
            "read the topic to its end"
        );
        Ok(log)
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The topic's partition count.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// Waits until every record written before this call has been handed to the callback.
    /// Errors when that does not happen within `timeout`.
    pub fn read_to_end(&self, timeout: Duration) -> ConnectResult<()> {
        let deadline = Instant::now() + timeout;
        let _ = self.producer.flush(timeout);
        // The end offsets of all partitions, queried at once: one query waits about half a
        // second on librdkafka, so a 25-partition topic read one by one takes seconds.
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(500))
            .min(Duration::from_secs(10));
        let results: Vec<(i32, rdkafka::error::KafkaResult<(i64, i64)>)> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = self
                    .partitions
                    .iter()
                    .map(|p| {
                        scope.spawn(move || {
                            (*p, self.consumer.fetch_watermarks(&self.topic, *p, wait))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("watermark query thread"))
                    .collect()
            });
        let mut ends = HashMap::new();
        for (p, r) in results {
            let (low, high) = r.map_err(|e| {
                ConnectError::connect(format!("Failed to read end offsets of {}: {e}", self.topic))
            })?;
            if high > low {
                ends.insert(p, high);
            }
        }
        let (lock, cv) = &*self.progress;
        let mut progress = lock.lock().unwrap();
        loop {
            if ends
                .iter()
                .all(|(p, end)| progress.get(p).copied().unwrap_or(-1) >= *end)
            {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ConnectError::connect(format!(
                    "Timed out reading topic {} to its end",
                    self.topic
                )));
            }
            progress = cv.wait_timeout(progress, deadline - now).unwrap().0;
        }
    }

    /// Writes a record and waits for Kafka's acknowledgement (up to [`WRITE_TIMEOUT_MS`]).
    /// Returns the record's (partition, offset).
    pub fn send_sync(&self, key: &[u8], value: Option<&[u8]>) -> ConnectResult<(i32, i64)> {
        let mut record: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(&self.topic).key(key);
        if let Some(v) = value {
            record = record.payload(v);
        }
        let fut = self.producer.send_result(record).map_err(|(e, _)| {
            ConnectError::connect(format!("Failed to write to {}: {e}", self.topic))
        })?;
        match futures::executor::block_on(fut) {
            Ok(Ok(delivery)) => Ok((delivery.partition, delivery.offset)),
            Ok(Err((e, _))) => Err(ConnectError::connect(format!(
                "Failed to write to {}: {e}",
                self.topic
            ))),
            Err(_) => Err(ConnectError::connect(format!(
                "Write to {} was cancelled",
                self.topic
            ))),
        }
    }

    /// Writes records and waits for Kafka's acknowledgement of all of them, at most `timeout`
    /// and only while `abort` answers false (checked every 20 ms). Errors: a write failed
    /// (non-retriable), or the wait ended first (retriable; the writes may still land).
    pub fn send_all_within(
        &self,
        records: &[(Vec<u8>, Option<Vec<u8>>)],
        timeout: Duration,
        abort: &dyn Fn() -> bool,
    ) -> ConnectResult<()> {
        use futures::FutureExt;
        let mut pending = Vec::with_capacity(records.len());
        for (key, value) in records {
            let mut record: FutureRecord<'_, [u8], [u8]> =
                FutureRecord::to(&self.topic).key(key.as_slice());
            if let Some(v) = value {
                record = record.payload(v.as_slice());
            }
            pending.push(self.producer.send_result(record).map_err(|(e, _)| {
                ConnectError::connect(format!("Failed to write to {}: {e}", self.topic))
            })?);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut left = Vec::with_capacity(pending.len());
            for mut fut in pending {
                match (&mut fut).now_or_never() {
                    None => left.push(fut),
                    Some(Ok(Ok(_))) => {}
                    Some(Ok(Err((e, _)))) => {
                        return Err(ConnectError::connect(format!(
                            "Failed to write to {}: {e}",
                            self.topic
                        )))
                    }
                    Some(Err(_)) => {
                        return Err(ConnectError::connect(format!(
                            "Write to {} was cancelled",
                            self.topic
                        )))
                    }
                }
            }
            pending = left;
            if pending.is_empty() {
                return Ok(());
            }
            if abort() || std::time::Instant::now() >= deadline {
                return Err(ConnectError::Retriable(format!(
                    "{} writes to {} not acknowledged yet; giving up waiting",
                    pending.len(),
                    self.topic
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes a record without waiting; failures are logged.
    pub fn send(&self, key: &[u8], value: Option<&[u8]>) {
        let mut record: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(&self.topic).key(key);
        if let Some(v) = value {
            record = record.payload(v);
        }
        if let Err((e, _)) = self.producer.send_result(record) {
            tracing::warn!(topic = self.topic, "failed to queue a write: {e}");
        }
    }

    /// Waits for every queued write (up to `timeout`).
    pub fn flush(&self, timeout: Duration) {
        let _ = self.producer.flush(timeout);
    }

    /// Stops following the topic.
    pub fn stop(&self) {
        self.flush(Duration::from_secs(10));
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.lock().unwrap().take() {
            let _ = t.join();
        }
    }
}

impl Drop for KafkaBasedLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
