//! Rolling deploys with real `tributary distributed` workers on a real broker: a worker stopped
//! right after it started never takes work from the running ones, the first create on a new
//! group needs no retry, and a rolling SIGTERM restart under load keeps every task's downtime
//! short. Downtimes and UNASSIGNED reports are read from the status topic itself.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};

/// One record of the status topic.
#[derive(Debug, Clone)]
struct StatusRecord {
    /// `status-task-<c>-<n>` or `status-connector-<c>`.
    key: String,
    state: String,
    worker_id: String,
    /// The record's timestamp (the writing worker's clock, ms since the epoch).
    ts: i64,
    partition: i32,
    offset: i64,
}

/// Every status record of the status topic from `from` (per-partition offsets; the beginning
/// when absent) to the current end, in write order per key.
fn status_records(bootstrap: &str, topic: &str, from: &BTreeMap<i32, i64>) -> Vec<StatusRecord> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("status-reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let ends = status_ends(bootstrap, topic);
    let mut tpl = TopicPartitionList::new();
    let mut wanted = 0;
    for (p, end) in &ends {
        let start = from.get(p).copied().unwrap_or(0);
        wanted += (end - start).max(0);
        tpl.add_partition_offset(topic, *p, Offset::Offset(start))
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while (out.len() as i64) < wanted && Instant::now() < deadline {
        let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) else {
            continue;
        };
        if m.offset() >= ends[&m.partition()] {
            continue;
        }
        let key = String::from_utf8_lossy(m.key().unwrap_or_default()).to_string();
        let value: Value = m
            .payload()
            .and_then(|p| serde_json::from_slice(p).ok())
            .unwrap_or(Value::Null);
        out.push(StatusRecord {
            key,
            state: value["state"].as_str().unwrap_or("").to_string(),
            worker_id: value["worker_id"].as_str().unwrap_or("").to_string(),
            ts: m.timestamp().to_millis().unwrap_or(0),
            partition: m.partition(),
            offset: m.offset(),
        });
    }
    assert_eq!(out.len() as i64, wanted, "read the whole status topic");
    out.sort_by_key(|r| (r.partition, r.offset));
    out
}

/// The end offset of every partition of the status topic.
fn status_ends(bootstrap: &str, topic: &str) -> BTreeMap<i32, i64> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let md = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    md.topics()[0]
        .partitions()
        .iter()
        .map(|p| {
            let (_, high) = consumer
                .fetch_watermarks(topic, p.id(), Duration::from_secs(10))
                .unwrap();
            (p.id(), high)
        })
        .collect()
}

/// The broker's view of the group: (state, member count).
fn group_state(bootstrap: &str, group: &str) -> (String, usize) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let list = consumer
        .fetch_group_list(Some(group), Duration::from_secs(10))
        .unwrap();
    list.groups()
        .first()
        .map(|g| (g.state().to_string(), g.members().len()))
        .unwrap_or_default()
}

/// Sends SIGTERM and waits (polling every 5 ms) for the process to exit; returns how long
/// that took and whether it exited with status 0.
fn sigterm_and_wait(w: &mut StandaloneWorker) -> (Duration, bool) {
    let sent = Instant::now();
    let ok = Command::new("kill")
        .arg("-TERM")
        .arg(w.child.id().to_string())
        .status()
        .expect("running kill")
        .success();
    assert!(ok, "kill -TERM failed");
    loop {
        if let Some(status) = w.child.try_wait().unwrap() {
            return (sent.elapsed(), status.success());
        }
        assert!(
            sent.elapsed() < Duration::from_secs(60),
            "the worker did not exit: {}",
            w.log_text()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Task id -> worker id of the RUNNING tasks of `connector`, as `w` reports them.
fn running_tasks(w: &StandaloneWorker, connector: &str) -> BTreeMap<u64, String> {
    let (_, s) = w.get(&format!("/connectors/{connector}/status"));
    s["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|t| t["state"] == "RUNNING")
        .map(|t| {
            (
                t["id"].as_u64().unwrap(),
                t["worker_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Waits until the `tasks` tasks of `connector` run, `per_worker` on each of `workers` (ids).
fn wait_spread(
    w: &StandaloneWorker,
    connector: &str,
    tasks: usize,
    workers: &BTreeSet<String>,
    timeout: Duration,
) -> BTreeMap<u64, String> {
    wait_for(
        &format!("{connector}'s {tasks} tasks spread evenly over {workers:?}"),
        timeout,
        || {
            let owners = running_tasks(w, connector);
            let mut per: BTreeMap<&String, usize> = BTreeMap::new();
            for o in owners.values() {
                *per.entry(o).or_default() += 1;
            }
            let even = per.len() == workers.len()
                && per.keys().all(|o| workers.contains(*o))
                && per.values().max() == per.values().min();
            (owners.len() == tasks && even).then_some(owners)
        },
    )
}

/// Waits until the broker reports the group stable with `members` members, and every worker
/// in `workers` has joined the same generation with no rebalance pending; returns it.
fn wait_settled(
    bootstrap: &str,
    group: &str,
    workers: &[&StandaloneWorker],
    members: usize,
) -> i64 {
    wait_for("the group to settle", Duration::from_secs(90), || {
        let (state, n) = group_state(bootstrap, group);
        if state != "Stable" || n != members {
            return None;
        }
        let infos: Vec<Value> = workers
            .iter()
            .map(|w| w.get("/tributary/worker").1)
            .collect();
        let gens: BTreeSet<i64> = infos
            .iter()
            .map(|i| i["generation"].as_i64().unwrap_or(-1))
            .collect();
        let idle = infos.iter().all(|i| i["rebalancing"] == false);
        (gens.len() == 1 && idle).then(|| *gens.iter().next().unwrap())
    })
}

fn task_key(connector: &str, task: u64) -> String {
    format!("status-task-{connector}-{task}")
}

#[test]
fn a_worker_stopped_as_it_starts_takes_no_work_from_the_running_ones() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("abort");
    // The setting: a 5 s delay, which a task taken by the aborted worker would wait.
    let extra = "scheduled.rebalance.max.delay.ms=5000";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, extra);
    let w3 = DistributedWorker::start(dir.path(), "w3", &bootstrap, &group, extra);
    w2.wait_joined();
    w3.wait_joined();
    let body = json!({"name": "vs", "config": {"connector.class": "VerifiableSource", "tasks.max": "6", "topic": unique("abort"), "throughput": "50"}});
    let (code, r) = w1.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{r}");
    let three: BTreeSet<String> = [&w1, &w2, &w3].iter().map(|w| w.id()).collect();
    let owners = wait_spread(&w1, "vs", 6, &three, Duration::from_secs(120));
    let running = [&w1.inner, &w2.inner, &w3.inner];
    let generation_before = wait_settled(&bootstrap, &group, &running, 3);
    let status_topic = format!("{group}-status");
    let from = status_ends(&bootstrap, &status_topic);

    let mut aborted = Vec::new();
    for i in 0..4 {
        let mut w4 =
            DistributedWorker::start(dir.path(), &format!("w4-{i}"), &bootstrap, &group, extra);
        // As an orchestrator would: SIGTERM as soon as `GET /` answers.
        wait_for("GET / to answer", Duration::from_secs(30), || {
            (w4.get("/").0 == 200).then_some(())
        });
        let (took, clean) = sigterm_and_wait(&mut w4);
        assert!(clean, "exit status 0: {}", w4.log_text());
        aborted.push((w4.id(), took));
        wait_settled(&bootstrap, &group, &running, 3);
    }
    let generation_after = wait_settled(&bootstrap, &group, &running, 3);
    eprintln!("aborted starts (worker, SIGTERM -> exit): {aborted:?}; generations {generation_before} -> {generation_after}");
    for (id, took) in &aborted {
        assert!(
            *took < Duration::from_secs(3),
            "{id} exited promptly after SIGTERM: {took:?}"
        );
    }
    assert!(
        generation_after - generation_before <= aborted.len() as i64,
        "each aborted start adds at most one rebalance: generation {generation_before} -> {generation_after}"
    );

    // The status topic: no task of the running workers was reported UNASSIGNED (or anything
    // but RUNNING), and the aborted workers wrote nothing about them.
    let records = status_records(&bootstrap, &status_topic, &from);
    let aborted_ids: BTreeSet<&String> = aborted.iter().map(|(id, _)| id).collect();
    for r in &records {
        assert!(
            !aborted_ids.contains(&r.worker_id),
            "an aborted worker wrote a status: {r:?}"
        );
        if r.key.starts_with("status-task-vs-") || r.key == "status-connector-vs" {
            assert_eq!(r.state, "RUNNING", "a running job was disturbed: {r:?}");
        }
    }
    assert_eq!(
        running_tasks(&w1, "vs"),
        owners,
        "every task still runs where it ran"
    );
}

#[test]
fn the_first_create_after_startup_succeeds_without_a_retry() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("first");
    // Three workers started one after the other; each gets a create as soon as its REST API
    // answers, before it has joined the group (its join waits for the others to rejoin, up to
    // heartbeat.interval.ms). Each create must answer 201 the first time.
    let mut workers: Vec<DistributedWorker> = Vec::new();
    let mut answers = Vec::new();
    for i in 0..3 {
        let w = DistributedWorker::start(dir.path(), &format!("w{i}"), &bootstrap, &group, "");
        let joining = w.get("/tributary/worker").1["rebalancing"] == true;
        let body = json!({"name": format!("c{i}"), "config": {"connector.class": "VerifiableSource", "tasks.max": "1", "topic": unique("first"), "throughput": "10"}});
        let sent = Instant::now();
        let (code, r) = w.send("POST", "/connectors", Some(&body.to_string()));
        answers.push((joining, code, sent.elapsed()));
        assert_eq!(code, 201, "c{i} created on the first try: {r}");
        workers.push(w);
    }
    eprintln!("first creates (worker still joining, code, time): {answers:?}");
    assert!(
        answers.iter().any(|(joining, _, _)| *joining),
        "a create reached a worker that had not joined yet: {answers:?}"
    );
    for i in 0..3 {
        workers[0].wait_state(&format!("c{i}"), 1, "RUNNING");
    }
}

#[test]
fn a_rolling_restart_under_load_keeps_every_tasks_downtime_short() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("roll");
    // A long delay: a task of a departing worker that had to wait for it would be down a
    // minute, which the bound below catches.
    let extra = "scheduled.rebalance.max.delay.ms=60000";
    let mut workers: Vec<DistributedWorker> = Vec::new();
    for i in 0..3 {
        let w = DistributedWorker::start(dir.path(), &format!("w{i}"), &bootstrap, &group, extra);
        w.wait_joined();
        workers.push(w);
    }
    const TASKS: usize = 6;
    let body = json!({"name": "load", "config": {"connector.class": "VerifiableSource", "tasks.max": TASKS.to_string(), "topic": unique("roll"), "throughput": "200"}});
    let (code, r) = workers[0].send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{r}");
    let ids = |ws: &[DistributedWorker]| ws.iter().map(|w| w.id()).collect::<BTreeSet<_>>();
    wait_spread(
        &workers[0],
        "load",
        TASKS,
        &ids(&workers),
        Duration::from_secs(120),
    );
    {
        let refs: Vec<&StandaloneWorker> = workers.iter().map(|w| &w.inner).collect();
        wait_settled(&bootstrap, &group, &refs, 3);
    }
    let status_topic = format!("{group}-status");
    let from = status_ends(&bootstrap, &status_topic);

    // One worker at a time: SIGTERM, then a new process in its place.
    let mut stops = Vec::new();
    for i in 0..3 {
        let mut old = workers.remove(0);
        let (took, clean) = sigterm_and_wait(&mut old);
        assert!(clean, "exit status 0: {}", old.log_text());
        stops.push(took);
        let survivors = ids(&workers);
        wait_spread(
            &workers[0],
            "load",
            TASKS,
            &survivors,
            Duration::from_secs(60),
        );
        let w = DistributedWorker::start(dir.path(), &format!("w{i}b"), &bootstrap, &group, extra);
        workers.push(w);
        wait_spread(
            &workers[0],
            "load",
            TASKS,
            &ids(&workers),
            Duration::from_secs(60),
        );
        let refs: Vec<&StandaloneWorker> = workers.iter().map(|w| &w.inner).collect();
        wait_settled(&bootstrap, &group, &refs, 3);
    }

    // Downtime of each task: from a record that it stopped (anything but RUNNING) to the next
    // RUNNING record; and a new owner's RUNNING always follows the old owner's stop.
    let records = status_records(&bootstrap, &status_topic, &from);
    // The timeline, shown when the test fails.
    let t0 = records.iter().map(|r| r.ts).min().unwrap_or(0);
    for r in records.iter().filter(|r| r.key.starts_with("status-task-")) {
        eprintln!(
            "{:>6} ms  {:<22} {:<10} {}",
            r.ts - t0,
            r.key,
            r.state,
            r.worker_id
        );
    }
    let mut downtimes: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for t in 0..TASKS as u64 {
        let key = task_key("load", t);
        let mut owner: Option<String> = None;
        let mut down_since: Option<i64> = None;
        for r in records.iter().filter(|r| r.key == key) {
            if r.state == "RUNNING" {
                if let Some(since) = down_since.take() {
                    downtimes.entry(key.clone()).or_default().push(r.ts - since);
                } else if let Some(o) = &owner {
                    assert_eq!(
                        o, &r.worker_id,
                        "{key} started on {} while {o} ran it: {r:?}",
                        r.worker_id
                    );
                }
                owner = Some(r.worker_id.clone());
            } else if down_since.is_none() {
                down_since = Some(r.ts);
            }
        }
        assert!(down_since.is_none(), "{key} is left stopped");
    }
    eprintln!("SIGTERM -> exit: {stops:?}; task downtimes (ms): {downtimes:?}");
    assert!(
        downtimes.values().map(Vec::len).sum::<usize>() >= 6,
        "tasks moved: {downtimes:?}"
    );
    for (task, ds) in &downtimes {
        for d in ds {
            assert!(
                *d < 1000,
                "{task} was down {d} ms in a rolling restart (all: {downtimes:?})"
            );
        }
    }
    for took in &stops {
        assert!(
            *took < Duration::from_secs(5),
            "SIGTERM -> exit within task.shutdown.graceful.timeout.ms: {stops:?}"
        );
    }
}
