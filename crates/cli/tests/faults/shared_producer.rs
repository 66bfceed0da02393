//! The producer at-least-once source tasks share (issue #34), on a real broker: tasks without
//! `producer.override.*` share one, a task with overrides gets its own; a send error (a record
//! the topic refuses) fails that task only while the others keep producing through the same
//! producer; and each task's committed offsets cover its own records only.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use serde_json::json;

fn shared(w: &DistributedWorker) -> Vec<(String, u64)> {
    let (_, info) = w.get("/tributary/worker");
    info["shared_producers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["client_id"].as_str().unwrap_or_default().to_string(),
                p["tasks"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn records(w: &DistributedWorker, task: &str) -> u64 {
    w.get("/tributary/task-counters").1[task]["records"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn source_tasks_share_a_producer_and_stay_isolated() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("shared-producer");
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w.wait_joined();
    let good_topic = unique("shared-good");
    let bad_topic = unique("shared-bad");
    create_topic(&bootstrap, &good_topic, 1);
    create_topic_with_configs(&bootstrap, &bad_topic, 1, &[("max.message.bytes", "20000")]);
    let input = dir.path().join("big.txt");
    std::fs::write(&input, format!("small\n{}\nafter\n", "x".repeat(30_000))).unwrap();
    let connectors = [
        (
            "good",
            json!({"connector.class": "io.tributary.connect.testing.FlakySourceConnector",
                   "tasks.max": "2", "topic": good_topic, "records.per.second": "50"}),
        ),
        (
            "bad",
            json!({"connector.class": "FileStreamSource", "tasks.max": "1",
                   "file": input, "topic": bad_topic}),
        ),
        (
            "own",
            json!({"connector.class": "io.tributary.connect.testing.FlakySourceConnector",
                   "tasks.max": "1", "topic": unique("shared-own"),
                   "producer.override.linger.ms": "1"}),
        ),
    ];
    for (name, config) in &connectors {
        let (code, body) = w.send(
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(&config.to_string()),
        );
        assert!(code == 201 || code == 200, "{name}: {code} {body}");
    }
    w.wait_state("good", 2, "RUNNING");
    w.wait_state("own", 1, "RUNNING");
    // The record the topic refuses fails its task alone.
    let failed = wait_for("bad's task to fail", Duration::from_secs(60), || {
        let (_, s) = w.get("/connectors/bad/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = failed["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("too large"), "{failed}");
    // The two good tasks share one producer; `own` (an override) is not on it; the failed
    // task let go of its place.
    wait_for(
        "the failed task to leave the shared producer",
        Duration::from_secs(30),
        || {
            let p = shared(&w);
            (p.len() == 1 && p[0].1 == 2).then_some(())
        },
    );
    // The good tasks keep producing through it.
    let before: Vec<u64> = (0..2).map(|n| records(&w, &format!("good-{n}"))).collect();
    wait_for(
        "both good tasks to go on producing",
        Duration::from_secs(30),
        || {
            (0..2)
                .all(|n| records(&w, &format!("good-{n}")) > before[n] + 50)
                .then_some(())
        },
    );
    let (_, status) = w.get("/connectors/good/status");
    assert!(
        status["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["state"] == "RUNNING"),
        "{status}"
    );

    // Each task's committed offset names one of its own records: key n, value seqno.
    let (code, _) = w.send("PUT", "/connectors/good/stop", None);
    assert_eq!(code, 204);
    w.wait_state("good", 0, "STOPPED");
    let mut written: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (k, v) in read_topic_records(&bootstrap, &good_topic) {
        let seqno: i64 = String::from_utf8_lossy(&v).parse().unwrap();
        written
            .entry(String::from_utf8_lossy(&k).to_string())
            .or_default()
            .push(seqno);
    }
    let (_, offsets) = w.get("/connectors/good/offsets");
    let offsets = offsets["offsets"].as_array().cloned().unwrap_or_default();
    assert_eq!(offsets.len(), 2, "{offsets:?}");
    for o in &offsets {
        let task = o["partition"]["task"].as_i64().unwrap().to_string();
        let seqno = o["offset"]["seqno"].as_i64().unwrap();
        let own: &Vec<i64> = written
            .get(&task)
            .unwrap_or_else(|| panic!("no record of task {task} in {:?}", written.keys()));
        let mut sorted = own.clone();
        sorted.sort();
        sorted.dedup();
        // Every record up to the committed one is in the topic, and the committed one is
        // this task's.
        assert!(
            sorted.len() as i64 > seqno
                && sorted[..=seqno as usize] == (0..=seqno).collect::<Vec<_>>()[..],
            "task {task}: committed seqno {seqno}, written {}..={:?}",
            sorted.first().copied().unwrap_or(-1),
            sorted.last()
        );
    }
}
