//! The native MirrorMaker 2 source connector (issue #44) under faults, on brokers of the
//! test's own (`scripts/kafka` on free ports): a worker killed (SIGKILL) while records flow,
//! the source broker and the target broker each stopped and started again. A checker reads
//! both sides afterwards: every source record is on the target, in order; duplicates are
//! counted, and under exactly-once replication (KIP-618) there are none.
//!
//! The input is compressed (zstd / lz4 batches) and, for the exactly-once test, written in
//! transactions, some of them aborted: a `read_committed` source consumer replicates only
//! the committed ones.

use crate::common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::faults::OwnBroker;
use common::*;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};

const CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
const PARTITIONS: i32 = 3;

/// A record as the checker compares it: key, value and the `seq` header.
type Seen = (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The records of `partition` of `topic` a `read_committed` reader sees (records of aborted
/// transactions and the transactions' markers skipped), as the checker compares them.
fn committed_records(bootstrap: &str, topic: &str, partition: i32) -> Vec<Seen> {
    common::eos::read_committed_partition(bootstrap, topic, partition)
        .into_iter()
        .map(|r| {
            let seq = r
                .headers
                .into_iter()
                .find(|(k, _)| k == "seq")
                .and_then(|(_, v)| v);
            (r.key, r.value, seq)
        })
        .collect()
}

/// The committed records of every partition of `topic`.
fn all_committed(bootstrap: &str, topic: &str) -> Vec<Vec<Seen>> {
    (0..PARTITIONS)
        .map(|p| committed_records(bootstrap, topic, p))
        .collect()
}

/// Compares the target's records with the source's, partition by partition: every source
/// record must be there in order; a record seen again (replicated twice after a crash) is a
/// duplicate. The duplicates' count, or what is wrong: a record the source does not have (or
/// out of order), or the first source record missing on the target.
fn compare(source: &[Vec<Seen>], target: &[Vec<Seen>]) -> Result<usize, String> {
    let mut duplicates = 0;
    for (p, (want, have)) in source.iter().zip(target).enumerate() {
        let mut next = 0;
        let mut seen = HashSet::new();
        for r in have {
            if next < want.len() && *r == want[next] {
                next += 1;
                seen.insert(r.clone());
            } else if seen.contains(r) {
                duplicates += 1;
            } else {
                return Err(format!(
                    "partition {p}: a record the source does not have (or out of order) on \
                     the target: {r:?}"
                ));
            }
        }
        if next < want.len() {
            return Err(format!(
                "partition {p}: record {next} of {} missing on the target: {:?}",
                want.len(),
                want.get(next)
            ));
        }
    }
    Ok(duplicates)
}

/// Waits until the target's remote topic holds every source record in order (duplicates
/// allowed: only then is a replay after a crash complete); panics naming what is wrong after
/// 180 s, or at once for a record out of place. The duplicates' count.
fn wait_complete(what: &str, source: &[Vec<Seen>], target: &str, remote: &str) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        match compare(source, &all_committed(target, remote)) {
            Ok(duplicates) => return duplicates,
            // A record out of place never becomes right.
            Err(e) if e.contains("does not have") => panic!("{what}: {e}"),
            Err(e) if std::time::Instant::now() > deadline => panic!("{what}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

/// A producer writing to every partition of `topic` on `bootstrap` in a thread until
/// stopped: compressed batches, keys (none on every tenth record), values (a tombstone on
/// every seventh) and a `seq` header. Transactional, when `transactional`: transactions of
/// 50 records per partition, every fourth one aborted (its values say so).
struct Load {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(bootstrap: &str, topic: &str, transactional: bool) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicUsize::new(0));
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", bootstrap)
            .set("enable.idempotence", "true")
            .set("linger.ms", "5");
        if transactional {
            config
                .set("transactional.id", unique("mirror-input"))
                .set("compression.type", "zstd");
        } else {
            config
                .set("compression.type", "lz4")
                .set("message.timeout.ms", "300000");
        }
        let producer: ThreadedProducer<DefaultProducerContext> = config.create().unwrap();
        let topic = topic.to_string();
        let (stop2, sent2) = (stop.clone(), sent.clone());
        let thread = std::thread::spawn(move || {
            if transactional {
                producer.init_transactions(Duration::from_secs(60)).unwrap();
            }
            let mut seq = 0usize;
            let mut batch = 0usize;
            while !stop2.load(Ordering::SeqCst) {
                let aborted = transactional && batch % 4 == 3;
                if transactional {
                    producer.begin_transaction().unwrap();
                }
                for partition in 0..PARTITIONS {
                    for _ in 0..50 {
                        let key = format!("k{seq}");
                        let value = if aborted {
                            format!("aborted {seq}")
                        } else {
                            format!("value {seq}")
                        };
                        let s = seq.to_string();
                        let mut r = BaseRecord::<[u8], [u8]>::to(&topic)
                            .partition(partition)
                            .headers(OwnedHeaders::new().insert(Header {
                                key: "seq",
                                value: Some(s.as_bytes()),
                            }));
                        if !seq.is_multiple_of(10) {
                            r = r.key(key.as_bytes());
                        }
                        if !seq.is_multiple_of(7) {
                            r = r.payload(value.as_bytes());
                        }
                        let mut r = r;
                        // A full queue (the broker away) waits for room.
                        loop {
                            match producer.send(r) {
                                Ok(()) => break,
                                Err((_, back)) => {
                                    r = back;
                                    std::thread::sleep(Duration::from_millis(50));
                                }
                            }
                        }
                        seq += 1;
                    }
                }
                if transactional {
                    if aborted {
                        producer.abort_transaction(Duration::from_secs(60)).unwrap();
                    } else {
                        producer
                            .commit_transaction(Duration::from_secs(60))
                            .unwrap();
                    }
                } else {
                    producer.flush(Duration::from_secs(300)).unwrap();
                }
                batch += 1;
                sent2.store(seq, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Load {
            stop,
            sent,
            thread: Some(thread),
        }
    }

    /// Records written so far (aborted ones included).
    fn sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }

    /// Waits until `more` records more than now have been written.
    fn wait_more(&self, more: usize) {
        let from = self.sent();
        wait_for(
            &format!("{more} more input records"),
            Duration::from_secs(120),
            || (self.sent() >= from + more).then_some(()),
        );
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
    }
}

/// Records on the target's remote topic so far (all partitions, end offsets).
fn target_end(bootstrap: &str, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    (0..PARTITIONS)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Duration::from_secs(10))
                .map_or(0, |(_, high)| high)
        })
        .sum()
}

/// Waits until the target's remote topic grew past what it holds now: replication runs.
fn wait_flowing(what: &str, bootstrap: &str, topic: &str) {
    let from = target_end(bootstrap, topic);
    wait_for(what, Duration::from_secs(120), || {
        (target_end(bootstrap, topic) > from + 100).then_some(())
    });
}

/// The native source connector's config, replicating `topic` from `source` (alias `src`).
fn connector_config(source: &str, target: &str, topic: &str, extra: serde_json::Value) -> String {
    let mut c = serde_json::json!({
        "connector.class": CLASS,
        "tasks.max": "2",
        "source.cluster.alias": "src",
        "target.cluster.alias": "dst",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "refresh.topics.interval.seconds": "1",
        "consumer.poll.timeout.ms": "500",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    });
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c.to_string()
}

fn put_connector(w: &DistributedWorker, config: &str) {
    let (code, body) = w.send("PUT", "/connectors/mirror/config", Some(config));
    assert_eq!(code, 201, "{body}");
    w.wait_state("mirror", 2, "RUNNING");
}

/// A broker of the test's own in `d/name` (cluster A, the source, or B, the target).
fn own_broker(d: &Path, name: &str) -> OwnBroker {
    let home = d.join(name);
    std::fs::create_dir_all(&home).unwrap();
    OwnBroker::start(&home, "")
}

fn worker(d: &Path, name: &str, bootstrap: &str, group: &str, extra: &str) -> DistributedWorker {
    let w = DistributedWorker::start(
        d,
        name,
        bootstrap,
        group,
        &format!("scheduled.rebalance.max.delay.ms=3000\n{extra}"),
    );
    w.wait_joined();
    w
}

/// At least once through every fault: the worker killed (SIGKILL) mid-flow and replaced, the
/// source broker restarted, then the target broker (where the worker's internal topics are
/// too), all while an lz4-compressed load runs. No source record is missing on the target
/// and none arrives out of order; duplicates are counted.
#[test]
fn a_mirror_loses_nothing_through_a_sigkill_and_broker_restarts_on_either_side() {
    // The shared broker is not used, but its presence says the environment has Kafka.
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let (a, b) = (own_broker(d, "a"), own_broker(d, "b"));
    let (source, target) = (a.bootstrap(), b.bootstrap());
    let topic = unique("orders");
    let remote = format!("src.{topic}");
    create_topic(&source, &topic, PARTITIONS);
    let load = Load::start(&source, &topic, false);
    load.wait_more(1_000);

    let group = unique("mirrorfault");
    let mut first = worker(d, "w1", &target, &group, "");
    put_connector(
        &first,
        &connector_config(&source, &target, &topic, serde_json::json!({})),
    );
    wait_flowing("replication before the crash", &target, &remote);

    // SIGKILL mid-flow; a new worker takes the connector over.
    first.kill();
    load.wait_more(1_000);
    let second = worker(d, "w2", &target, &group, "");
    second.wait_state("mirror", 2, "RUNNING");
    wait_flowing("replication after the crash", &target, &remote);

    // The source broker goes away under load and comes back.
    a.run("stop");
    a.run("start");
    load.wait_more(1_000);
    wait_flowing(
        "replication after the source broker's restart",
        &target,
        &remote,
    );

    // The target broker (the worker's own cluster) goes away and comes back.
    b.run("stop");
    load.wait_more(300);
    b.run("start");
    load.wait_more(1_000);
    wait_flowing(
        "replication after the target broker's restart",
        &target,
        &remote,
    );
    load.stop();

    let want = all_committed(&source, &topic);
    let total: usize = want.iter().map(Vec::len).sum();
    let duplicates = wait_complete("at least once", &want, &target, &remote);
    eprintln!("{total} records replicated through a SIGKILL and two broker restarts, {duplicates} duplicates");
    second.wait_state("mirror", 2, "RUNNING");
}

/// Exactly-once replication (KIP-618 with the connector's `read_committed` source consumer):
/// the input is written in zstd-compressed transactions, every fourth one aborted, and the
/// worker is killed (SIGKILL) while records flow. After a new worker took over, a
/// `read_committed` reader of the target sees exactly the source's committed records, each
/// once, in order: none of an aborted transaction, none twice.
#[test]
fn exactly_once_replication_has_no_duplicate_after_a_sigkill() {
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let (a, b) = (own_broker(d, "a"), own_broker(d, "b"));
    let (source, target) = (a.bootstrap(), b.bootstrap());
    let topic = unique("payments");
    let remote = format!("src.{topic}");
    create_topic(&source, &topic, PARTITIONS);
    let load = Load::start(&source, &topic, true);
    load.wait_more(2_000);

    let group = unique("mirroreos");
    let eos = "exactly.once.source.support=enabled\n";
    let mut first = worker(d, "w1", &target, &group, eos);
    put_connector(
        &first,
        &connector_config(
            &source,
            &target,
            &topic,
            serde_json::json!({
                "exactly.once.support": "required",
                "consumer.isolation.level": "read_committed",
            }),
        ),
    );
    wait_flowing("replication before the crash", &target, &remote);
    first.kill();
    load.wait_more(1_000);
    let second = worker(d, "w2", &target, &group, eos);
    second.wait_state("mirror", 2, "RUNNING");
    wait_flowing("replication after the crash", &target, &remote);
    load.stop();

    let want = all_committed(&source, &topic);
    let total: usize = want.iter().map(Vec::len).sum();
    assert!(
        want.iter()
            .flatten()
            .all(|(_, v, _)| !v.as_deref().unwrap_or_default().starts_with(b"aborted")),
        "the checker's source reader saw an aborted record"
    );
    assert_eq!(
        wait_complete("exactly once", &want, &target, &remote),
        0,
        "exactly-once replication wrote a record twice"
    );
    assert_eq!(
        all_committed(&target, &remote),
        want,
        "the target holds exactly the source's committed records"
    );
    eprintln!("{total} committed records replicated once each through a SIGKILL");
    second.wait_state("mirror", 2, "RUNNING");
}
