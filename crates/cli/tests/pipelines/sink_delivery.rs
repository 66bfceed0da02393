//! Sink delivery through every state change a sink task can see: an offset is committed only
//! for records handed to `put`, so no record is lost when a task starts paused, is paused,
//! resumed, stopped (KIP-980) and resumed, restarted in any state, has its partitions revoked
//! and reassigned, or its worker restarts. Each step checks the sink's file holds exactly the
//! records produced so far (nothing lost, nothing doubled on these clean transitions).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// The lines of the sink's output file.
fn file_lines(path: &Path) -> Vec<String> {
    terminated_lines(&std::fs::read(path).unwrap_or_default())
        .into_iter()
        .map(|l| String::from_utf8_lossy(&l).into_owned())
        .collect()
}

/// Waits until the file holds exactly `expected` (as a multiset; in order when `ordered`).
fn wait_exactly(what: &str, path: &Path, expected: &[String], ordered: bool) {
    let mut want = expected.to_vec();
    if !ordered {
        want.sort();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let mut got = file_lines(path);
        if !ordered {
            got.sort();
        }
        if got == want {
            return;
        }
        if std::time::Instant::now() > deadline {
            let missing: Vec<_> = want.iter().filter(|l| !got.contains(l)).collect();
            panic!(
                "{what}: the sink's file never held exactly the {} records produced; missing {missing:?}; file: {got:?}",
                want.len()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn records(prefix: &str, from: usize, to: usize) -> Vec<String> {
    (from..to).map(|i| format!("{prefix}{i}")).collect()
}

/// Produces `p0-<from>`…`p0-<to - 1>` to partition 0 and the same with `p1-` to partition 1
/// of `topic`, adding them to `all`.
fn produce_to_both_partitions(
    bootstrap: &str,
    topic: &str,
    all: &mut Vec<String>,
    from: usize,
    to: usize,
) {
    for p in 0..2 {
        let batch = records(&format!("p{p}-"), from, to);
        produce_values(bootstrap, topic, Some(p), &batch);
        all.extend(batch);
    }
}

fn task_starts(w: &StandaloneWorker, task: &str) -> u64 {
    w.get("/tributary/task-counters").1[task]["starts"]
        .as_u64()
        .unwrap_or(0)
}

/// Waits until `task` has started `n` times on `w` and the connector is in `state`.
fn wait_restarted(w: &StandaloneWorker, connector: &str, task: &str, n: u64, state: &str) {
    wait_for(
        &format!("{task} to start for the {n}th time"),
        Duration::from_secs(60),
        || (task_starts(w, task) >= n).then_some(()),
    );
    w.wait_state(connector, 1, state);
}

fn sink_config(topic: &str, out: &Path, tasks: u32) -> Value {
    json!({
        "connector.class": "FileStreamSink",
        "tasks.max": tasks.to_string(),
        "topics": topic,
        "file": out.display().to_string(),
    })
}

#[test]
fn a_sink_loses_no_record_across_pause_restart_stop_and_resume() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("sink-delivery");
    create_topic(&bootstrap, &topic, 1);
    let out = d.join("out.txt");
    let mut all = vec!["r1".to_string()];
    produce_values(&bootstrap, &topic, None, &all);

    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let body = json!({"name": "sink", "config": sink_config(&topic, &out, 1)}).to_string();
    assert_eq!(w.send("POST", "/connectors", Some(&body)).0, 201);
    wait_exactly("first record", &out, &all, true);

    // Handed case: paused, then restarted with its tasks, then records arrive, then resumed.
    assert_eq!(w.send("PUT", "/connectors/sink/pause", None).0, 202);
    w.wait_state("sink", 1, "PAUSED");
    let (code, _) = w.send("POST", "/connectors/sink/restart?includeTasks=true", None);
    assert_eq!(code, 202);
    wait_restarted(&w, "sink", "sink-0", 2, "PAUSED");
    let batch = records("r", 2, 7);
    produce_values(&bootstrap, &topic, None, &batch);
    all.extend(batch);
    assert_eq!(
        file_lines(&out),
        vec!["r1".to_string()],
        "records flowed while paused"
    );
    assert_eq!(w.send("PUT", "/connectors/sink/resume", None).0, 202);
    wait_exactly("restart while paused, then resume", &out, &all, true);

    // Stopped (KIP-980), records arrive, resumed.
    assert_eq!(w.send("PUT", "/connectors/sink/stop", None).0, 204);
    wait_for("the connector to stop", Duration::from_secs(60), || {
        let s = w.get("/connectors/sink/status").1;
        (s["connector"]["state"] == "STOPPED"
            && s["tasks"].as_array().is_some_and(|t| t.is_empty()))
        .then_some(())
    });
    let batch = records("r", 7, 10);
    produce_values(&bootstrap, &topic, None, &batch);
    all.extend(batch);
    assert_eq!(w.send("PUT", "/connectors/sink/resume", None).0, 202);
    w.wait_state("sink", 1, "RUNNING");
    wait_exactly("stop, then resume", &out, &all, true);

    // Paused, records arrive, the task alone restarted, resumed.
    let starts = task_starts(&w, "sink-0");
    assert_eq!(w.send("PUT", "/connectors/sink/pause", None).0, 202);
    w.wait_state("sink", 1, "PAUSED");
    let batch = records("r", 10, 14);
    produce_values(&bootstrap, &topic, None, &batch);
    all.extend(batch);
    assert_eq!(
        w.send("POST", "/connectors/sink/tasks/0/restart", None).0,
        204
    );
    wait_restarted(&w, "sink", "sink-0", starts + 1, "PAUSED");
    assert_eq!(w.send("PUT", "/connectors/sink/resume", None).0, 202);
    wait_exactly("task restart while paused, then resume", &out, &all, true);

    // Running: restarted with its tasks while records flow.
    let batch = records("r", 14, 20);
    produce_values(&bootstrap, &topic, None, &batch[..3]);
    assert_eq!(
        w.send("POST", "/connectors/sink/restart?includeTasks=true", None)
            .0,
        202
    );
    produce_values(&bootstrap, &topic, None, &batch[3..]);
    all.extend(batch);
    wait_exactly("restart while running", &out, &all, true);

    // A connector created paused (KIP-980): as in Connect, its tasks are created only when it
    // resumes, and they then read everything produced meanwhile.
    let topic2 = unique("sink-delivery-b");
    create_topic(&bootstrap, &topic2, 1);
    let out2 = d.join("out2.txt");
    let mut all2 = records("s", 0, 3);
    produce_values(&bootstrap, &topic2, None, &all2);
    let body = json!({"name": "sink2", "config": sink_config(&topic2, &out2, 1), "initial_state": "PAUSED"})
        .to_string();
    assert_eq!(w.send("POST", "/connectors", Some(&body)).0, 201);
    wait_for("sink2 to be PAUSED", Duration::from_secs(60), || {
        (w.get("/connectors/sink2/status").1["connector"]["state"] == "PAUSED").then_some(())
    });
    let batch = records("s", 3, 6);
    produce_values(&bootstrap, &topic2, None, &batch);
    all2.extend(batch);
    assert!(
        file_lines(&out2).is_empty(),
        "a connector created paused delivered records"
    );
    assert_eq!(w.send("PUT", "/connectors/sink2/resume", None).0, 202);
    wait_exactly("start paused, then resume", &out2, &all2, true);
}

#[test]
fn a_sink_loses_no_record_when_its_worker_restarts_or_its_partitions_move_while_paused() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("sink-moves");
    let topic = format!("{group}-data");
    create_topic(&bootstrap, &topic, 2);
    let out = d.join("out.txt");
    let extra = "scheduled.rebalance.max.delay.ms=2000\n";
    let mut all = Vec::new();
    let produce = |all: &mut Vec<String>, from: usize, to: usize| {
        produce_to_both_partitions(&bootstrap, &topic, all, from, to)
    };
    produce(&mut all, 0, 5);

    let mut w1 = DistributedWorker::start(d, "w1", &bootstrap, &group, extra);
    w1.wait_joined();
    let body = json!({"name": "sink", "config": sink_config(&topic, &out, 2)}).to_string();
    assert_eq!(w1.send("POST", "/connectors", Some(&body)).0, 201);
    w1.wait_state("sink", 2, "RUNNING");
    wait_exactly("first records", &out, &all, false);

    // Paused, then the worker restarts: the tasks come back paused (the target state is in the
    // config topic) and records produced meanwhile wait.
    assert_eq!(w1.send("PUT", "/connectors/sink/pause", None).0, 202);
    w1.wait_state("sink", 2, "PAUSED");
    assert!(w1.terminate().success());
    produce(&mut all, 5, 10);
    let w1 = DistributedWorker::start(d, "w1-again", &bootstrap, &group, extra);
    w1.wait_joined();
    w1.wait_state("sink", 2, "PAUSED");
    produce(&mut all, 10, 15);

    // A second worker joins while paused: one task (and its partitions) moves over.
    let mut w2 = DistributedWorker::start(d, "w2", &bootstrap, &group, extra);
    w2.wait_joined();
    let spread = wait_for(
        "the tasks to spread over both workers",
        Duration::from_secs(90),
        || {
            let s = w1.get("/connectors/sink/status").1;
            let owners: std::collections::BTreeSet<String> = s["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["state"] == "PAUSED")
                .map(|t| t["worker_id"].as_str().unwrap_or("").to_string())
                .collect();
            (owners.len() == 2).then_some(s)
        },
    );
    assert_eq!(spread["tasks"].as_array().unwrap().len(), 2);
    produce(&mut all, 15, 20);
    assert_eq!(
        file_lines(&out).len(),
        10,
        "records flowed while the connector was paused"
    );
    assert_eq!(w1.send("PUT", "/connectors/sink/resume", None).0, 202);
    wait_exactly(
        "worker restart and a join while paused, then resume",
        &out,
        &all,
        false,
    );

    // Running: the second worker leaves and its task comes back to the first one.
    assert!(w2.terminate().success());
    produce(&mut all, 20, 25);
    wait_exactly("a worker leaving while running", &out, &all, false);
}

/// A partition taken from a paused sink task and given back to it after the connector resumed
/// is consumed again. (librdkafka keeps a partition's pause across its revocation and
/// reassignment to the same consumer: a task that resumed only the partitions it held at the
/// resume never fetched the returning one again, and its records were never delivered.) Another
/// member of the task's consumer group (`connect-<connector>`), which commits nothing, joins while
/// the connector is paused and leaves after it resumed.
#[test]
fn a_partition_returning_to_a_resumed_sink_task_is_consumed_again() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("sink-return");
    create_topic(&bootstrap, &topic, 2);
    let out = d.join("out.txt");
    let mut all = Vec::new();
    let produce = |all: &mut Vec<String>, from: usize, to: usize| {
        produce_to_both_partitions(&bootstrap, &topic, all, from, to)
    };
    produce(&mut all, 0, 3);
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let name = unique("sink-return");
    let body = json!({"name": name, "config": sink_config(&topic, &out, 1)}).to_string();
    assert_eq!(w.send("POST", "/connectors", Some(&body)).0, 201);
    wait_exactly("first records", &out, &all, false);

    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/pause"), None).0,
        202
    );
    w.wait_state(&name, 1, "PAUSED");
    let other: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", format!("connect-{name}"))
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    other.subscribe(&[topic.as_str()]).unwrap();
    wait_for(
        "the other member to take a partition",
        Duration::from_secs(60),
        || {
            other.poll(Duration::from_millis(100));
            let n = other.assignment().map(|a| a.count()).unwrap_or(0);
            (n == 1).then_some(())
        },
    );
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/resume"), None).0,
        202
    );
    w.wait_state(&name, 1, "RUNNING");
    produce(&mut all, 3, 6);
    // The task's own partition flows again while the other member holds the second one.
    wait_for(
        "the task's partition to flow",
        Duration::from_secs(60),
        || {
            let lines = file_lines(&out);
            (["p0-5", "p1-5"]
                .iter()
                .any(|l| lines.iter().any(|x| x == l)))
            .then_some(())
        },
    );
    other.unsubscribe();
    drop(other);
    produce(&mut all, 6, 9);
    wait_exactly(
        "the partition given back after the resume",
        &out,
        &all,
        false,
    );
}
