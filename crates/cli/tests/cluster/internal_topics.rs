//! Internal topics deleted while a distributed cluster runs (#11): each worker logs an error
//! naming the topic and its setting, the topic is created again with the settings it is
//! created with at startup (compacted, the configured partitions), and the workers publish what
//! they hold into it, so connectors keep running, survive a restart of the whole cluster and
//! keep their source offsets.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::json;

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn delete_topic(bootstrap: &str, topic: &str) {
    let res = block_on(admin(bootstrap).delete_topics(&[topic], &AdminOptions::new())).unwrap();
    for r in res {
        r.unwrap();
    }
}

/// The topic's partition count and `cleanup.policy`, once it exists with leaders everywhere.
fn describe(bootstrap: &str, topic: &str) -> Option<(usize, String)> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let md = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(5))
        .ok()?;
    let t = md.topics().iter().find(|t| t.name() == topic)?;
    if t.error().is_some()
        || t.partitions().is_empty()
        || t.partitions().iter().any(|p| p.leader() < 0)
    {
        return None;
    }
    let described = block_on(
        admin(bootstrap).describe_configs([&ResourceSpecifier::Topic(topic)], &AdminOptions::new()),
    )
    .ok()?;
    let policy = described
        .into_iter()
        .flatten()
        .flat_map(|r| r.entries)
        .find(|e| e.name == "cleanup.policy")?
        .value?;
    Some((t.partitions().len(), policy))
}

/// The last value per key of every partition of `topic` (tombstones remove the key).
fn latest_by_key(bootstrap: &str, topic: &str) -> BTreeMap<String, String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let Ok(md) = consumer.fetch_metadata(Some(topic), Duration::from_secs(5)) else {
        return BTreeMap::new();
    };
    let Some(t) = md.topics().iter().find(|t| t.name() == topic) else {
        return BTreeMap::new();
    };
    let mut tpl = TopicPartitionList::new();
    let mut ends = BTreeMap::new();
    for p in t.partitions() {
        let Ok((low, high)) = consumer.fetch_watermarks(topic, p.id(), Duration::from_secs(5))
        else {
            return BTreeMap::new();
        };
        if high > low {
            ends.insert(p.id(), high);
            tpl.add_partition_offset(topic, p.id(), Offset::Beginning)
                .unwrap();
        }
    }
    let mut out = BTreeMap::new();
    if ends.is_empty() {
        return out;
    }
    consumer.assign(&tpl).unwrap();
    let mut done = BTreeMap::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while done.len() < ends.len() && std::time::Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let key = String::from_utf8_lossy(m.key().unwrap_or_default()).to_string();
            match m.payload() {
                Some(v) => {
                    out.insert(key, String::from_utf8_lossy(v).to_string());
                }
                None => {
                    out.remove(&key);
                }
            }
            if m.offset() + 1 >= ends[&m.partition()] {
                done.insert(m.partition(), ());
            }
        }
    }
    out
}

/// Waits until `topic` exists again, compacted with `partitions` partitions, and holds a key
/// for which `want` answers true.
fn wait_recreated(
    bootstrap: &str,
    topic: &str,
    partitions: usize,
    want: impl Fn(&BTreeMap<String, String>) -> bool,
) -> BTreeMap<String, String> {
    wait_for(
        &format!("{topic} to exist again with what the workers hold"),
        Duration::from_secs(90),
        || {
            let (n, policy) = describe(bootstrap, topic)?;
            assert_eq!(
                (n, policy.as_str()),
                (partitions, "compact"),
                "{topic} was created again with other settings"
            );
            let records = latest_by_key(bootstrap, topic);
            want(&records).then_some(records)
        },
    )
}

#[test]
fn deleted_internal_topics_are_created_again_and_refilled() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("deleted");
    let mut a = DistributedWorker::start(dir.path(), "a", &bootstrap, &group, "");
    let mut b = DistributedWorker::start(dir.path(), "b", &bootstrap, &group, "");
    a.wait_joined();
    b.wait_joined();
    let config = json!({"connector.class": "VerifiableSource", "tasks.max": "2", "topic": unique("data"), "throughput": "20"});
    let (code, r) = a.send("PUT", "/connectors/src/config", Some(&config.to_string()));
    assert_eq!(code, 201, "{r}");
    a.wait_state("src", 2, "RUNNING");

    // Status topic: each worker writes its own statuses again.
    let status_topic = format!("{group}-status");
    delete_topic(&bootstrap, &status_topic);
    wait_recreated(&bootstrap, &status_topic, 3, |r| {
        [
            "status-connector-src",
            "status-task-src-0",
            "status-task-src-1",
        ]
        .iter()
        .all(|k| r.get(*k).is_some_and(|v| v.contains("RUNNING")))
    });
    for w in [&a, &b] {
        let log = w.log_text();
        assert!(
            log.contains(&format!(
                "internal topic '{status_topic}' (status.storage.topic) was deleted"
            )),
            "worker {} did not report the deletion:\n{log}",
            w.name
        );
    }

    // Offsets topic: the offsets the workers held are written again, and tasks go on
    // committing into it.
    let offsets_topic = format!("{group}-offsets");
    wait_for("a committed source offset", Duration::from_secs(60), || {
        latest_by_key(&bootstrap, &offsets_topic)
            .keys()
            .any(|k| k.contains("\"src\""))
            .then_some(())
    });
    delete_topic(&bootstrap, &offsets_topic);
    wait_recreated(&bootstrap, &offsets_topic, 5, |r| {
        r.keys().any(|k| k.contains("\"src\""))
    });

    // Config topic: the configuration is written again; nothing is restarted by the replay,
    // and new connectors can be created.
    let config_topic = format!("{group}-configs");
    delete_topic(&bootstrap, &config_topic);
    wait_recreated(&bootstrap, &config_topic, 1, |r| {
        r.contains_key("connector-src")
            && r.contains_key("task-src-0")
            && r.contains_key("task-src-1")
            && r.contains_key("commit-src")
    });
    let (code, r) = b.send(
        "PUT",
        "/connectors/after/config",
        Some(
            &json!({"connector.class": "VerifiableSource", "tasks.max": "1", "topic": unique("after"), "throughput": "5"})
                .to_string(),
        ),
    );
    assert_eq!(code, 201, "{r}");
    a.wait_state("after", 1, "RUNNING");
    a.wait_state("src", 2, "RUNNING");

    // The whole cluster restarts from the recreated topics alone.
    assert!(a.terminate().success());
    assert!(b.terminate().success());
    let c = DistributedWorker::start(dir.path(), "c", &bootstrap, &group, "");
    c.wait_joined();
    assert_eq!(c.get("/connectors").1, json!(["after", "src"]));
    assert_eq!(c.get("/connectors/src/config").1["tasks.max"], "2");
    c.wait_state("src", 2, "RUNNING");
    c.wait_state("after", 1, "RUNNING");
    // Both source tasks resume from the offsets written into the recreated offsets topic.
    let re = regex::Regex::new(
        r"VerifiableSourceTask src-(\d) producing to topic \S+ resuming from seqno (\d+)",
    )
    .unwrap();
    let resumed = wait_for(
        "both src tasks to start on c",
        Duration::from_secs(60),
        || {
            let log = c.log_text();
            let found: BTreeMap<String, u64> = re
                .captures_iter(&log)
                .map(|m| (m[1].to_string(), m[2].parse().unwrap()))
                .collect();
            (found.len() == 2).then_some(found)
        },
    );
    assert!(
        resumed.values().all(|seqno| *seqno > 0),
        "a task started over from seqno 0: {resumed:?}"
    );
}

/// Runs `tributary distributed` on `props` until it exits (killed after 60 s: a worker that
/// started); returns whether it succeeded and what it printed.
fn run_to_exit(dir: &std::path::Path, props: &str) -> (bool, String) {
    use std::process::{Command, Stdio};
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("worker.properties"), props).unwrap();
    let log = dir.join("worker.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["distributed", "worker.properties"])
        .current_dir(dir)
        .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("worker.err")).unwrap(),
        ))
        .spawn()
        .expect("running tributary");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = wait_for("the worker to exit", Duration::from_secs(70), || {
        if std::time::Instant::now() > deadline {
            child
                .kill()
                .unwrap_or_else(|e| eprintln!("killing the worker: {e}"));
        }
        child.try_wait().unwrap()
    });
    let out = std::fs::read_to_string(dir.join("worker.err")).unwrap_or_default()
        + &std::fs::read_to_string(&log).unwrap_or_default();
    (status.success(), out)
}

/// Internal topics that already exist are checked as Connect's stores check them, all three
/// created and checked together: a config topic of two partitions, and an internal topic that
/// is not compacted, stop the worker at startup with a message naming the topic and the worker
/// setting; the topics this worker could create are created compacted.
#[test]
fn existing_internal_topics_that_break_connects_rules_stop_startup_naming_the_setting() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();

    let group = unique("two-part-configs");
    create_topic(&bootstrap, &format!("{group}-configs"), 2);
    let (ok, out) = run_to_exit(
        &dir.path().join("a"),
        &distributed_properties(&bootstrap, &group, ""),
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("Topic '{group}-configs' supplied via the 'config.storage.topic' property is required to have a single partition"))
            && out.contains("found 2 partitions"),
        "{out}"
    );

    let group = unique("deleting-status");
    create_topic(&bootstrap, &format!("{group}-status"), 3);
    let (ok, out) = run_to_exit(
        &dir.path().join("b"),
        &distributed_properties(&bootstrap, &group, ""),
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("Topic '{group}-status' supplied via the 'status.storage.topic' property is required to have 'cleanup.policy=compact'"))
            && out.contains("cleanup.policy=delete"),
        "{out}"
    );
    // The other two were created by the same request, compacted.
    for topic in [format!("{group}-configs"), format!("{group}-offsets")] {
        let (partitions, policy) = wait_for("the created topic", Duration::from_secs(30), || {
            describe(&bootstrap, &topic)
        });
        assert_eq!(policy, "compact", "{topic}");
        assert_eq!(partitions, if topic.ends_with("configs") { 1 } else { 5 });
    }
}

/// `internal.topics.automatic.creation.enable=false` (Connect 4.2): a worker whose internal
/// topics are missing does not create them and stops at startup with Connect's message naming
/// the topic, its setting and the key; once an operator created them (compacted, the config
/// topic with one partition), the same worker starts and runs a connector, and creates
/// nothing itself.
#[test]
fn a_worker_that_may_not_create_its_internal_topics_stops_when_they_are_missing() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("no-auto-create");
    let props = distributed_properties(
        &bootstrap,
        &group,
        "internal.topics.automatic.creation.enable=false",
    );
    let (ok, out) = run_to_exit(&dir.path().join("a"), &props);
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("Topic '{group}-configs' specified via the 'config.storage.topic' property is missing. The config 'internal.topics.automatic.creation.enable' is set to 'false', so automatic creation of internal topics is disabled. Either enable automatic creation or create the topics manually.")),
        "{out}"
    );
    for suffix in ["configs", "offsets", "status"] {
        assert!(
            describe(&bootstrap, &format!("{group}-{suffix}")).is_none(),
            "{group}-{suffix} was created"
        );
    }

    // Created by hand: the worker starts on them.
    let compact = [("cleanup.policy", "compact")];
    create_topic_with_configs(&bootstrap, &format!("{group}-configs"), 1, &compact);
    create_topic_with_configs(&bootstrap, &format!("{group}-offsets"), 2, &compact);
    create_topic_with_configs(&bootstrap, &format!("{group}-status"), 1, &compact);
    let w = DistributedWorker::start(
        dir.path(),
        "b",
        &bootstrap,
        &group,
        "internal.topics.automatic.creation.enable=false",
    );
    w.wait_joined();
    let body = json!({"name": "seq", "config": {
        "connector.class": "VerifiableSource", "tasks.max": "1",
        "topic": format!("{group}-data"), "throughput": "10",
    }});
    assert_eq!(
        w.send("POST", "/connectors", Some(&body.to_string())).0,
        201
    );
    w.wait_state("seq", 1, "RUNNING");
    // The offsets topic kept the partitions it was created with.
    assert_eq!(
        describe(&bootstrap, &format!("{group}-offsets")).map(|(p, _)| p),
        Some(2)
    );
}
