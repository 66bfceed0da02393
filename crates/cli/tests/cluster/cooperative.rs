//! Incremental cooperative rebalancing (KIP-415) and signed internal requests (KIP-507)
//! with real `tributary distributed` workers against a real broker.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const CONNECTORS: usize = 4;
const TASKS: usize = 5;

fn task_owners(w: &StandaloneWorker) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for c in 0..CONNECTORS {
        let (_, s) = w.get(&format!("/connectors/c{c}/status"));
        for t in s["tasks"].as_array().cloned().unwrap_or_default() {
            if t["state"] == "RUNNING" {
                out.insert(
                    format!("c{c}-{}", t["id"]),
                    t["worker_id"].as_str().unwrap_or_default().to_string(),
                );
            }
        }
    }
    out
}

fn counters(w: &StandaloneWorker) -> Value {
    w.get("/tributary/task-counters").1
}

/// Waits until all 20 tasks run, on `allowed` workers only, and every worker in `allowed`
/// agrees on one generation.
fn wait_balanced(
    workers: &[&DistributedWorker],
    allowed: &BTreeSet<String>,
    timeout: Duration,
) -> BTreeMap<String, String> {
    wait_for("all tasks running on the live workers", timeout, || {
        let owners = task_owners(&workers[0].inner);
        let ok = owners.len() == CONNECTORS * TASKS && owners.values().all(|w| allowed.contains(w));
        let gens: BTreeSet<i64> = workers
            .iter()
            .map(|w| {
                w.get("/tributary/worker").1["generation"]
                    .as_i64()
                    .unwrap_or(-1)
            })
            .collect();
        (ok && gens.len() == 1).then_some(owners)
    })
}

#[test]
fn joins_move_only_what_must_move_and_lost_tasks_wait_for_their_worker() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("coop");
    let extra = "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=15000";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, extra);
    let mut w3 = DistributedWorker::start(dir.path(), "w3", &bootstrap, &group, extra);
    w2.wait_joined();
    w3.wait_joined();
    for c in 0..CONNECTORS {
        let body = json!({"name": format!("c{c}"), "config": {"connector.class": "VerifiableSource", "tasks.max": TASKS.to_string(), "topic": unique("coop"), "throughput": "5"}});
        assert_eq!(
            w2.send("POST", "/connectors", Some(&body.to_string())).0,
            201
        );
    }
    let three: BTreeSet<String> = [&w1, &w2, &w3].iter().map(|w| w.id()).collect();
    let before = wait_balanced(&[&w1, &w2, &w3], &three, Duration::from_secs(120));
    assert_eq!(w1.get("/tributary/worker").1["protocol"], "sessioned");
    let stops_before: BTreeMap<String, u64> = [&w1, &w2, &w3]
        .iter()
        .flat_map(|w| {
            counters(w)
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v["stops"].as_u64().unwrap()))
                .collect::<Vec<_>>()
        })
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            *m.entry(k).or_insert(0) += v;
            m
        });

    // A fourth worker joins: only the tasks that move to it are stopped.
    let w4 = DistributedWorker::start(dir.path(), "w4", &bootstrap, &group, extra);
    w4.wait_joined();
    let four: BTreeSet<String> = three.iter().cloned().chain([w4.id()]).collect();
    let after = wait_for("w4 to get its share", Duration::from_secs(120), || {
        let o = wait_balanced(&[&w1, &w2, &w3, &w4], &four, Duration::from_secs(120));
        let on_w4 = o.values().filter(|w| **w == w4.id()).count();
        (on_w4 >= (CONNECTORS * TASKS) / 4).then_some(o)
    });
    let mut per_worker: BTreeMap<&String, usize> = BTreeMap::new();
    for w in after.values() {
        *per_worker.entry(w).or_default() += 1;
    }
    assert!(
        per_worker.values().all(|n| *n == 5),
        "20 tasks over 4 workers, 5 each: {per_worker:?}"
    );
    for (task, owner) in &after {
        let was = &before[task];
        let stops_now: u64 = [&w1, &w2, &w3]
            .iter()
            .map(|w| counters(w)[task.as_str()]["stops"].as_u64().unwrap_or(0))
            .sum();
        if owner == was {
            assert_eq!(
                stops_now, stops_before[task],
                "{task} stayed on {owner} and was never stopped"
            );
        } else {
            assert_eq!(*owner, w4.id(), "{task} moved only to the new worker");
        }
    }
    // Each connector's tasks are spread too: at most 2 of a connector's 5 tasks per worker.
    for c in 0..CONNECTORS {
        let mut n: BTreeMap<&String, usize> = BTreeMap::new();
        for (t, w) in &after {
            if t.starts_with(&format!("c{c}-")) {
                *n.entry(w).or_default() += 1;
            }
        }
        assert!(
            n.values().max().unwrap() - n.values().min().unwrap() <= 1 && n.len() == 4,
            "c{c}: {n:?}"
        );
    }

    // SIGKILL w3: its tasks wait (they run nowhere else) for the delay, then run elsewhere.
    let victim = w3.id();
    let lost: BTreeSet<String> = after
        .iter()
        .filter(|(_, w)| **w == victim)
        .map(|(t, _)| t.clone())
        .collect();
    assert!(!lost.is_empty());
    w3.kill();
    let killed_at = Instant::now();
    // The group notices within the session timeout; the tasks must not run elsewhere before
    // the delay (15 s) has passed.
    let survivors: BTreeSet<String> = four.iter().filter(|w| **w != victim).cloned().collect();
    // Once the group notices, the lost tasks show UNASSIGNED while they wait.
    wait_for(
        "the lost tasks to show UNASSIGNED",
        Duration::from_secs(30),
        || {
            let all_unassigned = lost.iter().all(|t| {
                let (c, n) = t.rsplit_once('-').unwrap();
                w1.get(&format!("/connectors/{c}/tasks/{n}/status")).1["state"] == "UNASSIGNED"
            });
            all_unassigned.then_some(())
        },
    );
    let moved = wait_for(
        "the lost tasks to run on the survivors",
        Duration::from_secs(90),
        || {
            let o = task_owners(&w1.inner);
            let all_moved = lost
                .iter()
                .all(|t| o.get(t).is_some_and(|w| survivors.contains(w)));
            all_moved.then(Instant::now)
        },
    );
    let waited = moved - killed_at;
    assert!(
        waited >= Duration::from_secs(15),
        "lost tasks waited for scheduled.rebalance.max.delay.ms: {waited:?}"
    );
    wait_balanced(&[&w1, &w2, &w4], &survivors, Duration::from_secs(60));
}

#[test]
fn a_worker_back_within_the_delay_gets_its_tasks_back_and_forged_requests_are_refused() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("bounce");
    let extra = "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=30000";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    w1.wait_joined();
    let mut w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, extra);
    w2.wait_joined();
    let body = json!({"name": "c0", "config": {"connector.class": "VerifiableSource", "tasks.max": "4", "topic": unique("b"), "throughput": "5"}});
    assert_eq!(
        w1.send("POST", "/connectors", Some(&body.to_string())).0,
        201
    );
    let both: BTreeSet<String> = [w1.id(), w2.id()].into();
    let owners = wait_for("4 tasks on 2 workers", Duration::from_secs(90), || {
        let (_, s) = w1.get("/connectors/c0/status");
        let ts = s["tasks"].as_array().cloned().unwrap_or_default();
        let o: BTreeMap<u64, String> = ts
            .iter()
            .filter(|t| t["state"] == "RUNNING")
            .map(|t| {
                (
                    t["id"].as_u64().unwrap(),
                    t["worker_id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (o.len() == 4
            && o.values().collect::<BTreeSet<_>>().len() == 2
            && o.values().all(|w| both.contains(w)))
        .then_some(o)
    });

    // Forged internal requests to the leader are refused.
    let leader = if w1.get("/tributary/worker").1["leader"] == true {
        &w1
    } else {
        &w2
    };
    wait_for("a session key", Duration::from_secs(30), || {
        let (code, _) = leader.send_with_headers(
            "POST",
            "/connectors/c0/tasks",
            "[]",
            &[
                ("X-Connect-Authorization", "AAAA"),
                ("X-Connect-Request-Signature-Algorithm", "HmacSHA256"),
            ],
        );
        (code != 503).then_some(())
    });
    let (code, body) = leader.send("POST", "/connectors/c0/tasks", Some("[]"));
    assert_eq!(code, 400, "unsigned: {body}");
    let (code, body) = leader.send_with_headers(
        "POST",
        "/connectors/c0/tasks",
        "[]",
        &[
            ("X-Connect-Authorization", "AAAA"),
            ("X-Connect-Request-Signature-Algorithm", "HmacSHA256"),
        ],
    );
    assert_eq!(code, 403, "forged: {body}");
    assert_eq!(
        body["message"],
        "Internal request contained invalid signature."
    );
    let (code, _) = leader.send_with_headers(
        "POST",
        "/connectors/c0/tasks",
        "[]",
        &[
            ("X-Connect-Authorization", "AAAA"),
            ("X-Connect-Request-Signature-Algorithm", "HmacMD5"),
        ],
    );
    assert_eq!(code, 400, "algorithm not accepted");
    assert_eq!(
        w1.get("/connectors/c0/tasks").1.as_array().unwrap().len(),
        4,
        "nothing was written"
    );

    // Bounce the non-leader: restarted within the delay, it gets its tasks back.
    let follower_is_w2 = leader.id() == w1.id();
    assert!(follower_is_w2, "w1 started first and leads");
    let old = w2.id();
    let lost: Vec<u64> = owners
        .iter()
        .filter(|(_, w)| **w == old)
        .map(|(t, _)| *t)
        .collect();
    w2.kill();
    std::thread::sleep(Duration::from_millis(200));
    let w2b = DistributedWorker::start(dir.path(), "w2b", &bootstrap, &group, extra);
    w2b.wait_joined();
    let back = wait_for(
        "the bounced worker's tasks to come back to it",
        Duration::from_secs(90),
        || {
            let (_, s) = w1.get("/connectors/c0/status");
            let ts = s["tasks"].as_array().cloned().unwrap_or_default();
            let on_new: Vec<u64> = ts
                .iter()
                .filter(|t| t["state"] == "RUNNING" && t["worker_id"] == w2b.id().as_str())
                .map(|t| t["id"].as_u64().unwrap())
                .collect();
            (on_new.len() == lost.len()).then_some(on_new)
        },
    );
    let mut back = back;
    back.sort();
    assert_eq!(
        back, lost,
        "the same tasks came back to the restarted worker"
    );
    let w1_tasks: usize = {
        let (_, s) = w1.get("/connectors/c0/status");
        s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["worker_id"] == w1.id().as_str())
            .count()
    };
    assert_eq!(
        w1_tasks,
        4 - lost.len(),
        "the leader did not take the lost tasks meanwhile"
    );
}
