//! Connector-specific offsets topics (KIP-618's `offsets.storage.topic` connector setting) on
//! the real broker: a source connector naming its own topic reads offsets from it and from the
//! worker's topic (its own winning), commits to it (created with the worker's offsets topic's
//! partitions) and copies to the worker's topic; the offsets API alters and resets both; under
//! exactly-once support its offsets commit in the same transactions as its records.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::eos::*;
use common::*;
use serde_json::json;

fn values(bootstrap: &str, topic: &str) -> Vec<String> {
    read_topic(bootstrap, topic)
        .into_iter()
        .map(|v| String::from_utf8(v).unwrap())
        .collect()
}

fn append(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

#[test]
fn a_source_with_its_own_offsets_topic_reads_both_topics_and_writes_its_own_first() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("own-offsets");
    let worker_topic = format!("{group}-offsets");
    let own_topic = format!("{group}-src-offsets");
    let w = DistributedWorker::start(dir.path(), "w", &bootstrap, &group, "");
    w.wait_joined();
    let input = dir.path().join("input.txt");
    let mut lines: Vec<String> = (0..10).map(|i| format!("line-{i}")).collect();
    std::fs::write(
        &input,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let filename = input.to_str().unwrap();
    let key = offset_key("src", json!({"filename": filename}));
    let five = "line-0\nline-1\nline-2\nline-3\nline-4\n".len() as i64;
    // A position already in the worker's topic (the connector ran there before it was given
    // a topic of its own): the connector starts from it.
    produce_raw(
        &bootstrap,
        &worker_topic,
        key.as_bytes(),
        json!({"position": five}).to_string().as_bytes(),
    );
    let topic = unique("own-offsets-data");
    let config = json!({
        "connector.class": "FileStreamSource",
        "file": filename,
        "topic": topic,
        "offsets.storage.topic": own_topic,
    });
    let (code, body) = w.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "src", "config": config}).to_string()),
    );
    assert_eq!(code, 201, "{body}");
    wait_topic_end(&bootstrap, &topic, 5);
    assert_eq!(values(&bootstrap, &topic), lines[5..]);
    // Its position is committed to its own topic, created like the worker's (5 partitions in
    // these tests' worker file), and copied to the worker's topic.
    let end = std::fs::metadata(&input).unwrap().len() as i64;
    let at_end = Some(json!({"position": end}));
    let own = wait_for(
        "the position in the own topic",
        Duration::from_secs(30),
        || {
            let own = read_all(&bootstrap, &own_topic);
            (own.latest.get(&key) == Some(&at_end)).then_some(own)
        },
    );
    assert_eq!(own.partitions, 5);
    assert_eq!(own.latest.len(), 1, "{:?}", own.latest);
    wait_for(
        "the position copied to the worker's topic",
        Duration::from_secs(30),
        || (read_all(&bootstrap, &worker_topic).latest.get(&key) == Some(&at_end)).then_some(()),
    );
    let (code, body) = w.get("/connectors/src/offsets");
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body,
        json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": end}}]})
    );

    // A stale position in the worker's topic does not win over the connector's own.
    assert_eq!(w.send("PUT", "/connectors/src/stop", None).0, 204);
    w.wait_state("src", 0, "STOPPED");
    produce_raw(
        &bootstrap,
        &worker_topic,
        key.as_bytes(),
        json!({"position": 0}).to_string().as_bytes(),
    );
    lines.push("line-10".into());
    append(&input, "line-10");
    let end = std::fs::metadata(&input).unwrap().len() as i64;
    assert_eq!(w.send("PUT", "/connectors/src/resume", None).0, 202);
    wait_for(
        "the position at the new end",
        Duration::from_secs(30),
        || {
            let (_, body) = w.get("/connectors/src/offsets");
            (body["offsets"][0]["offset"]["position"] == json!(end)).then_some(())
        },
    );
    assert_eq!(values(&bootstrap, &topic), lines[5..]);

    // Altered through the offsets API: the connector's topic holds the new position and the
    // source reads again from there.
    assert_eq!(w.send("PUT", "/connectors/src/stop", None).0, 204);
    w.wait_state("src", 0, "STOPPED");
    let patch =
        json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": five}}]});
    let (code, body) = w.send("PATCH", "/connectors/src/offsets", Some(&patch.to_string()));
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        read_all(&bootstrap, &own_topic).latest.get(&key),
        Some(&Some(json!({"position": five})))
    );
    assert_eq!(w.send("PUT", "/connectors/src/resume", None).0, 202);
    wait_topic_end(&bootstrap, &topic, 12);
    assert_eq!(values(&bootstrap, &topic)[6..], lines[5..]);

    // Reset: tombstones in both topics, so no older position shows through from either; the
    // source reads the whole file again.
    wait_for(
        "the position at the end again",
        Duration::from_secs(30),
        || {
            let (_, body) = w.get("/connectors/src/offsets");
            (body["offsets"][0]["offset"]["position"] == json!(end)).then_some(())
        },
    );
    assert_eq!(w.send("PUT", "/connectors/src/stop", None).0, 204);
    w.wait_state("src", 0, "STOPPED");
    let (code, body) = w.send("DELETE", "/connectors/src/offsets", None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(w.get("/connectors/src/offsets").1, json!({"offsets": []}));
    assert_eq!(
        read_all(&bootstrap, &own_topic).latest.get(&key),
        Some(&None)
    );
    assert_eq!(
        read_all(&bootstrap, &worker_topic).latest.get(&key),
        Some(&None)
    );
    assert_eq!(w.send("PUT", "/connectors/src/resume", None).0, 202);
    wait_topic_end(&bootstrap, &topic, 23);
    assert_eq!(values(&bootstrap, &topic)[12..], lines[..]);
}

#[test]
fn under_exactly_once_support_offsets_commit_to_the_own_topic_with_the_records() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("own-offsets-eos");
    let worker_topic = format!("{group}-offsets");
    let own_topic = format!("{group}-seq-offsets");
    let topic = unique("own-offsets-seq");
    create_topic(&bootstrap, &topic, 1);
    let w = DistributedWorker::start(
        dir.path(),
        "w",
        &bootstrap,
        &group,
        "exactly.once.source.support=enabled",
    );
    w.wait_joined();
    let config = json!({
        "connector.class": "VerifiableSource", "tasks.max": "1", "topic": topic,
        "throughput": "500", "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "100", "offsets.storage.topic": own_topic,
    });
    let (code, v) = w.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "seq", "config": config}).to_string()),
    );
    assert_eq!(code, 201, "{v}");
    w.wait_state("seq", 1, "RUNNING");
    wait_for("committed records", Duration::from_secs(60), || {
        (stable_end(&bootstrap, &topic) > 1000).then_some(())
    });
    assert_eq!(w.send("PUT", "/connectors/seq/stop", None).0, 204);
    w.wait_state("seq", 0, "STOPPED");
    let by_task = seqnos_by_task(&read_committed(&bootstrap, &topic));
    assert_exactly_once(&by_task);
    let last = *by_task[&0].last().unwrap();
    // The committed offset is the last committed record's: both went in the same
    // transactions, whose commit markers are in the own topic's log.
    let key = offset_key("seq", json!({"id": 0}));
    let own = read_all(&bootstrap, &own_topic);
    assert_eq!(own.latest.get(&key), Some(&Some(json!({"seqno": last}))));
    assert!(
        own.log_end > own.committed as i64,
        "no transaction marker in {own_topic}: {} records, log end {}",
        own.committed,
        own.log_end
    );
    // Copied to the worker's topic after each commit.
    wait_for(
        "the offset copied to the worker's topic",
        Duration::from_secs(30),
        || {
            (read_all(&bootstrap, &worker_topic).latest.get(&key)
                == Some(&Some(json!({"seqno": last}))))
            .then_some(())
        },
    );
    // A stale offset in the worker's topic: resumed, the task goes on from its own topic's
    // offset, so every sequence number is still written exactly once.
    produce_raw(
        &bootstrap,
        &worker_topic,
        key.as_bytes(),
        json!({"seqno": 10}).to_string().as_bytes(),
    );
    let end_at_stop = stable_end(&bootstrap, &topic);
    assert_eq!(w.send("PUT", "/connectors/seq/resume", None).0, 202);
    wait_for("the task to go on", Duration::from_secs(60), || {
        (stable_end(&bootstrap, &topic) > end_at_stop + 500).then_some(())
    });
    assert_eq!(w.send("PUT", "/connectors/seq/stop", None).0, 204);
    w.wait_state("seq", 0, "STOPPED");
    let by_task = seqnos_by_task(&read_committed(&bootstrap, &topic));
    assert_exactly_once(&by_task);
    assert!(
        by_task[&0].len() as i64 > last + 1,
        "the task did not go on"
    );
}
