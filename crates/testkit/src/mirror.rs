//! MirrorMaker 2 helpers of the tests (issue #44): a `tributary mirror-maker` process, records
//! spread over partitions, a consumer group's committed offsets, and Apache's MirrorMaker
//! driver's class path.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::{Offset, TopicPartitionList};

use crate::{missing, repo_root, tributary_binary, unique, unsafe_sigterm, wait_for};

/// A `tributary mirror-maker` process (MirrorMaker 2's dedicated mode) with its log.
pub struct MirrorMakerProcess {
    pub child: Child,
    pub log: PathBuf,
}

impl MirrorMakerProcess {
    /// Starts `tributary mirror-maker <file> [args…]` in `dir`, its output in a log file of
    /// its own there.
    pub fn start(dir: &Path, file: &Path, args: &[&str]) -> MirrorMakerProcess {
        let log = dir.join(format!("mirror-maker-{}.log", unique("run")));
        let logf = std::fs::File::create(&log).unwrap();
        let child = Command::new(tributary_binary())
            .arg("mirror-maker")
            .arg(file)
            .args(args)
            .current_dir(dir)
            .stdout(logf.try_clone().unwrap())
            .stderr(logf)
            .spawn()
            .expect("spawning tributary mirror-maker");
        MirrorMakerProcess { child, log }
    }

    /// The process's output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }

    /// SIGTERM and wait for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        unsafe_sigterm(self.child.id());
        wait_for("mirror-maker to exit", Duration::from_secs(90), || {
            self.child.try_wait().unwrap()
        })
    }
}

impl Drop for MirrorMakerProcess {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// Produces `n` records to each of `partitions` partitions of `topic`, with keys, values and
/// a header (every tenth record without a key, every seventh without a value: a tombstone).
pub fn produce_partitions(bootstrap: &str, topic: &str, partitions: i32, n: usize) {
    for partition in 0..partitions {
        produce_partitions_from(bootstrap, topic, partition, n);
    }
}

/// Produces `n` records to partition `partition` of `topic` as [`produce_partitions`] does.
pub fn produce_partitions_from(bootstrap: &str, topic: &str, partition: i32, n: usize) {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer as _, ThreadedProducer};
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    for i in 0..n {
        let key = format!("p{partition}-k{i}");
        let value = format!("p{partition} value {i}");
        let mut r = BaseRecord::<[u8], [u8]>::to(topic)
            .partition(partition)
            .headers(OwnedHeaders::new().insert(Header {
                key: "n",
                value: Some(key.as_bytes()),
            }));
        if i % 10 != 0 {
            r = r.key(key.as_bytes());
        }
        if i % 7 != 0 {
            r = r.payload(value.as_bytes());
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
    }
    p.flush(Duration::from_secs(30)).unwrap();
}

/// Commits `offsets` (partition, offset, metadata) of `topic` for `group` on `bootstrap`, as a
/// consumer outside the group's generation would.
pub fn commit_group(bootstrap: &str, group: &str, topic: &str, offsets: &[(i32, i64, &str)]) {
    use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for (partition, offset, metadata) in offsets {
        tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
            .unwrap();
        tpl.find_partition(topic, *partition)
            .unwrap()
            .set_metadata(*metadata);
    }
    c.commit(&tpl, CommitMode::Sync).unwrap();
}

/// The class path of Apache's MirrorMaker 2 driver (`org.apache.kafka.connect.mirror.MirrorMaker`,
/// what `connect-mirror-maker.sh` runs), from `scripts/jvm-bridge mirror-maker-classpath`
/// (Connect's jars, `connect-mirror` and argparse4j from Maven Central); `None` (after
/// [`missing`]) without java/mvn.
pub fn mirror_maker_classpath() -> Option<String> {
    let out = Command::new(repo_root().join("scripts/jvm-bridge"))
        .arg("mirror-maker-classpath")
        .stderr(Stdio::inherit())
        .output()
        .ok();
    match out {
        Some(o) if o.status.success() => {
            Some(String::from_utf8(o.stdout).unwrap().trim().to_string())
        }
        _ => missing(
            "`scripts/jvm-bridge mirror-maker-classpath` failed (no java/mvn, or no network?)",
        ),
    }
}
