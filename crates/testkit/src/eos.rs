//! Readers for exactly-once tests (KIP-618): what a `read_committed` consumer sees, the last
//! stable offset, aborted records, task count records, and the sequence check of
//! VerifiableSource records.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

/// The offsets topic key of a source partition, as Connect writes it.
pub fn offset_key(connector: &str, partition: serde_json::Value) -> String {
    serde_json::json!([connector, partition]).to_string()
}

use super::{unique, Rec};

/// Whether seqno `s` of a task ending its own transactions at every Fibonacci seqno (1, 2, 3,
/// 5, 8, …; FlakySource's `define.transactions=fibonacci`, the Java probe's likewise), committing
/// when the number is odd and aborting when it is even, is in a committed transaction: the one
/// ending at the first Fibonacci number at or after `s`.
pub fn fibonacci_committed(s: i64) -> bool {
    let (mut previous, mut next) = (1i64, 1i64);
    while next < s {
        (previous, next) = (next, previous + next);
    }
    next % 2 == 1
}

/// Every (key, value) a `read_committed` consumer sees in partition 0 of `topic`, up to its
/// last stable offset.
pub fn read_committed(bootstrap: &str, topic: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    read_committed_partition(bootstrap, topic, 0)
        .into_iter()
        .map(|r| (r.key.unwrap_or_default(), r.value.unwrap_or_default()))
        .collect()
}

/// Every record a `read_committed` consumer sees in `partition` of `topic`, up to its last
/// stable offset. Panics when it cannot be read there within 120 s.
pub fn read_committed_partition(bootstrap: &str, topic: &str, partition: i32) -> Vec<Rec> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("eos-reader"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        // End of partition is reported by the fetch position, which moves past aborted
        // records and transaction markers that the application position stays behind.
        .set("enable.partition.eof", "true")
        .create()
        .unwrap();
    // With read_committed the end offset is the last stable offset.
    let (_, end) = consumer
        .fetch_watermarks(topic, partition, Duration::from_secs(10))
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, partition, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let mut out = Vec::new();
    let mut marker_last: Option<bool> = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match consumer.poll(Duration::from_millis(200)) {
            // While transactions go on committing the poll never comes back empty and the
            // fetch never ends at the last stable offset: the record before `end` ends it.
            Some(Ok(m)) if m.offset() >= end => return out,
            Some(Ok(m)) => {
                out.push(Rec::of(&m));
                if m.offset() + 1 >= end {
                    return out;
                }
            }
            // The fetch reached the last stable offset of its fetch time, which is at least
            // `end`: every committed record before `end` was returned.
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => return out,
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {
                let at = consumer
                    .position()
                    .unwrap()
                    .find_partition(topic, partition)
                    .and_then(|p| match p.offset() {
                        Offset::Offset(o) => Some(o),
                        _ => None,
                    })
                    .unwrap_or(0);
                // The last offset before the last stable offset is usually a transaction
                // marker, which a read_committed consumer skips without always moving its
                // position past it: caught up there too when that offset holds no record.
                if at >= end
                    || (at == end - 1
                        && *marker_last.get_or_insert_with(|| {
                            !holds_record(bootstrap, topic, partition, end - 1)
                        }))
                {
                    return out;
                }
            }
        }
        assert!(Instant::now() < deadline, "could not read {topic} to {end}");
    }
}

/// Whether `offset` of `partition` of `topic` holds a record (committed, aborted or in an
/// open transaction) rather than a transaction marker: a `read_uncommitted` consumer started
/// there returns it.
fn holds_record(bootstrap: &str, topic: &str, partition: i32, offset: i64) -> bool {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("eos-probe"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, partition, Offset::Offset(offset))
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            return m.offset() == offset;
        }
    }
    false
}

/// The last stable offset of partition 0 of `topic`: the records before it are committed or
/// aborted.
pub fn stable_end(bootstrap: &str, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .map(|(_, end)| end)
        .unwrap_or(0)
}

/// How many records partition 0 of `topic` holds for a `read_uncommitted` reader (aborted
/// records included).
/// The keys of the records of partition 0 of `topic` past its last stable offset: what open
/// transactions have written so far (read with `read_uncommitted`, up to the high watermark).
pub fn open_transaction_keys(bootstrap: &str, topic: &str) -> Vec<Vec<u8>> {
    let lso = stable_end(bootstrap, topic);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("tail-reader"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let (_, end) = consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .unwrap();
    let mut out = Vec::new();
    if end <= lso {
        return out;
    }
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(lso))
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            out.push(m.key().unwrap_or_default().to_vec());
            if m.offset() + 1 >= end {
                break;
            }
        }
    }
    out
}

pub fn uncommitted_count(bootstrap: &str, topic: &str) -> usize {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("raw-reader"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let (_, end) = consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let mut n = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                n += 1;
                if m.offset() + 1 >= end {
                    break;
                }
            }
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {
                let at = consumer
                    .position()
                    .unwrap()
                    .find_partition(topic, 0)
                    .map(|p| p.offset());
                if matches!(at, Some(Offset::Offset(o)) if o >= end) {
                    break;
                }
            }
        }
    }
    n
}

/// The task count records (`tasks-fencing-<connector>`) in the config topic, in order.
pub fn task_count_records(bootstrap: &str, group: &str, connector: &str) -> Vec<String> {
    let key = format!("tasks-fencing-{connector}");
    read_committed(bootstrap, &format!("{group}-configs"))
        .into_iter()
        .filter(|(k, _)| *k == key.as_bytes())
        .map(|(_, v)| String::from_utf8_lossy(&v).to_string())
        .collect()
}

/// Asserts that each task's sequence numbers are 0, 1, 2, … with no gap and no duplicate.
pub fn assert_exactly_once(by_task: &BTreeMap<i64, Vec<i64>>) {
    for (task, seqnos) in by_task {
        let expected: Vec<i64> = (0..seqnos.len() as i64).collect();
        if *seqnos != expected {
            let mut seen = std::collections::BTreeSet::new();
            let dups: Vec<_> = seqnos
                .iter()
                .filter(|s| !seen.insert(**s))
                .take(10)
                .collect();
            let max = seqnos.iter().max().copied().unwrap_or(-1);
            let gaps: Vec<_> = (0..max).filter(|s| !seen.contains(s)).take(10).collect();
            panic!(
                "task {task}: {} records, max seqno {max}; duplicates {dups:?}, gaps {gaps:?}",
                seqnos.len()
            );
        }
    }
}

/// The sequence numbers each VerifiableSource task wrote (key: task id, value: seqno).
pub fn seqnos_by_task(records: &[(Vec<u8>, Vec<u8>)]) -> BTreeMap<i64, Vec<i64>> {
    let mut by_task: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (k, v) in records {
        let task: i64 = String::from_utf8_lossy(k).parse().unwrap();
        let seqno: i64 = String::from_utf8_lossy(v).parse().unwrap();
        by_task.entry(task).or_default().push(seqno);
    }
    by_task
}

/// A topic of JSON keys and values (an offsets topic) read across all its partitions.
pub struct TopicContents {
    /// Every record, in log order within each partition (so in order for any one key), its
    /// value `None` for a tombstone (records of aborted transactions never appear: the reader
    /// is `read_committed`).
    pub records: Vec<(String, Option<serde_json::Value>)>,
    /// The last value per key.
    pub latest: HashMap<String, Option<serde_json::Value>>,
    /// How many records the `read_committed` reader saw.
    pub committed: usize,
    /// The sum of the partitions' high watermarks: records, aborted records and transaction
    /// markers.
    pub log_end: i64,
    pub partitions: usize,
}

/// Reads every partition of `topic` from the beginning to its end.
pub fn read_all(bootstrap: &str, topic: &str) -> TopicContents {
    let consumer = |isolation: &str| -> BaseConsumer {
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", unique("offsets-reader"))
            .set("enable.auto.commit", "false")
            .set("isolation.level", isolation)
            .create()
            .unwrap()
    };
    let raw = consumer("read_uncommitted");
    let metadata = raw
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    let partitions: Vec<i32> = metadata.topics()[0]
        .partitions()
        .iter()
        .map(|p| p.id())
        .collect();
    assert!(!partitions.is_empty(), "{topic} does not exist");
    let log_end = partitions
        .iter()
        .map(|p| {
            raw.fetch_watermarks(topic, *p, Duration::from_secs(10))
                .unwrap()
                .1
        })
        .sum();
    let committed = consumer("read_committed");
    // With read_committed the ends are the last stable offsets.
    let ends: HashMap<i32, i64> = partitions
        .iter()
        .map(|p| {
            let end = committed
                .fetch_watermarks(topic, *p, Duration::from_secs(10))
                .unwrap()
                .1;
            (*p, end)
        })
        .collect();
    let mut tpl = TopicPartitionList::new();
    for p in &partitions {
        tpl.add_partition_offset(topic, *p, Offset::Beginning)
            .unwrap();
    }
    committed.assign(&tpl).unwrap();
    let mut latest = HashMap::new();
    let mut records = Vec::new();
    let mut count = 0;
    // Partitions whose reader returned a record at or past the end (under load the poll may
    // never come back empty).
    let mut reached = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match committed.poll(Duration::from_millis(200)) {
            Some(Ok(m)) if m.offset() >= ends[&m.partition()] => {
                reached.insert(m.partition());
            }
            Some(Ok(m)) => {
                if m.offset() + 1 >= ends[&m.partition()] {
                    reached.insert(m.partition());
                }
                count += 1;
                let key = String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned();
                let value = m
                    .payload()
                    .map(|v| serde_json::from_slice::<serde_json::Value>(v).unwrap());
                latest.insert(key.clone(), value.clone());
                records.push((key, value));
            }
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {
                let positions = committed.position().unwrap();
                let done = partitions.iter().all(|p| {
                    if reached.contains(p) {
                        return true;
                    }
                    let at = positions
                        .find_partition(topic, *p)
                        .and_then(|e| match e.offset() {
                            Offset::Offset(o) => Some(o),
                            _ => None,
                        })
                        .unwrap_or(0);
                    at >= ends[p]
                });
                if done {
                    break;
                }
            }
        }
        if reached.len() == partitions.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "could not read {topic} to its end"
        );
    }
    TopicContents {
        records,
        latest,
        committed: count,
        log_end,
        partitions: partitions.len(),
    }
}
