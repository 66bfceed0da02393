//! The restart API (KIP-745) on a 3-worker cluster against a real broker: exactly the selected
//! instances restart, on their owners; restarts are durable; no instance runs twice.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// Starts per instance ("c" for the connector, "c-N" for tasks), summed over `workers`.
fn starts(workers: &[&DistributedWorker], connector: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for w in workers {
        if let Some(m) = w.get("/tributary/task-counters").1.as_object() {
            for (k, v) in m
                .iter()
                .filter(|(k, _)| k.starts_with(&format!("{connector}-")))
            {
                *out.entry(k.clone()).or_insert(0) += v["starts"].as_u64().unwrap_or(0);
            }
        }
        if let Some(v) = w.get("/tributary/connector-counters").1.get(connector) {
            *out.entry(connector.to_string()).or_insert(0) += v["starts"].as_u64().unwrap_or(0);
        }
    }
    out
}

fn states(w: &StandaloneWorker, connector: &str) -> (String, BTreeMap<u64, String>) {
    let (_, s) = w.get(&format!("/connectors/{connector}/status"));
    let tasks = s["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t["id"].as_u64().unwrap(),
                t["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (
        s["connector"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        tasks,
    )
}

/// Waits until the connector runs and tasks 1 and 4 have failed while the others run.
fn wait_mixed(w: &StandaloneWorker, connector: &str) {
    wait_for(
        "a mixed FAILED/RUNNING connector",
        Duration::from_secs(90),
        || {
            let (c, t) = states(w, connector);
            let ok = c == "RUNNING"
                && t.len() == 6
                && t.iter().all(|(id, s)| {
                    if *id == 1 || *id == 4 {
                        s == "FAILED"
                    } else {
                        s == "RUNNING"
                    }
                });
            ok.then_some(())
        },
    );
}

fn flaky(name: &str) -> String {
    json!({"name": name, "config": {"connector.class": "FlakySource", "tasks.max": "6", "topic": unique(name), "fail.tasks": "1,4", "records.per.second": "2"}}).to_string()
}

#[test]
fn every_flag_combination_restarts_exactly_the_selected_instances() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("restart");
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    let w3 = DistributedWorker::start(dir.path(), "w3", &bootstrap, &group, "");
    w2.wait_joined();
    w3.wait_joined();
    let workers = [&w1, &w2, &w3];
    assert_eq!(w3.send("POST", "/connectors", Some(&flaky("fl"))).0, 201);
    wait_mixed(&w1, "fl");
    let owners: BTreeSet<String> = {
        let (_, s) = w1.get("/connectors/fl/status");
        s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["worker_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(owners.len() >= 2, "tasks spread over workers: {owners:?}");

    // (includeTasks, onlyFailed) -> instances expected to restart.
    let all: Vec<&str> = vec!["fl", "fl-0", "fl-1", "fl-2", "fl-3", "fl-4", "fl-5"];
    let cases: Vec<(bool, bool, Vec<&str>)> = vec![
        (false, false, vec!["fl"]),
        (true, false, all.clone()),
        (false, true, vec![]),
        (true, true, vec!["fl-1", "fl-4"]),
    ];
    for (i, (include_tasks, only_failed, expected)) in cases.into_iter().enumerate() {
        let via = workers[i % 3];
        let before = starts(&workers, "fl");
        let path =
            format!("/connectors/fl/restart?includeTasks={include_tasks}&onlyFailed={only_failed}");
        let (code, body) = via.send("POST", &path, None);
        if !include_tasks && !only_failed {
            assert_eq!(code, 204, "legacy restart: {body}");
        } else {
            assert_eq!(code, 202, "{path}: {body}");
            let restarting: BTreeSet<String> =
                std::iter::once(("fl".to_string(), body["connector"]["state"].clone()))
                    .chain(
                        body["tasks"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| (format!("fl-{}", t["id"]), t["state"].clone())),
                    )
                    .filter(|(_, s)| *s == "RESTARTING")
                    .map(|(k, _)| k)
                    .collect();
            assert_eq!(
                restarting,
                expected.iter().map(|s| s.to_string()).collect(),
                "the 202 body previews the plan for {path}"
            );
        }
        let want: BTreeMap<String, u64> = before
            .iter()
            .map(|(k, v)| (k.clone(), v + u64::from(expected.contains(&k.as_str()))))
            .collect();
        let got = wait_for(
            &format!("restarts for {path}"),
            Duration::from_secs(60),
            || {
                let now = starts(&workers, "fl");
                all.iter()
                    .all(|k| now.get(*k) >= want.get(*k))
                    .then_some(now)
            },
        );
        // Every worker's status view settles (the next request previews from the leader's).
        for w in workers {
            wait_mixed(w, "fl");
        }
        let got2 = starts(&workers, "fl");
        assert_eq!(
            got2, want,
            "{path}: exactly {expected:?} restarted once (saw {got:?})"
        );
    }

    // Connect's errors.
    assert_eq!(
        w2.send("POST", "/connectors/nope/restart?includeTasks=true", None),
        (
            404,
            json!({"error_code": 404, "message": "Unknown connector: nope"})
        )
    );
    assert_eq!(w2.send("POST", "/connectors/nope/restart", None).0, 404);
    assert_eq!(
        w1.send("POST", "/connectors/fl/tasks/99/restart", None),
        (
            404,
            json!({"error_code": 404, "message": "Unknown task: fl-99"})
        )
    );
    assert_eq!(
        w1.send("POST", "/connectors/fl/tasks/x/restart", None).0,
        404
    );
    // Java's Boolean.valueOf: anything but "true" is false, so this is the legacy restart.
    assert_eq!(
        w3.send(
            "POST",
            "/connectors/fl/restart?includeTasks=yes&onlyFailed=1",
            None
        )
        .0,
        204
    );
}

#[test]
fn a_restart_survives_the_leader_dying_after_202_and_never_doubles_an_instance() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("durable");
    let mut w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    let w3 = DistributedWorker::start(dir.path(), "w3", &bootstrap, &group, "");
    w2.wait_joined();
    w3.wait_joined();
    assert_eq!(
        w1.get("/tributary/worker").1["leader"],
        true,
        "the first worker leads"
    );
    assert_eq!(w2.send("POST", "/connectors", Some(&flaky("d"))).0, 201);
    wait_mixed(&w2, "d");
    let survivors = [&w2, &w3];
    let before = starts(&survivors, "d");
    let owned_by_survivors: Vec<String> = {
        let ids: BTreeSet<String> = survivors.iter().map(|w| w.id()).collect();
        let (_, s) = w2.get("/connectors/d/status");
        s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| ids.contains(t["worker_id"].as_str().unwrap()))
            .map(|t| format!("d-{}", t["id"]))
            .collect()
    };
    assert!(!owned_by_survivors.is_empty());
    // The leader answers 202 once the request is in the config topic, then dies at once.
    let (code, _) = w1.send(
        "POST",
        "/connectors/d/restart?includeTasks=true&onlyFailed=false",
        None,
    );
    assert_eq!(code, 202);
    w1.kill();
    wait_for(
        "the surviving owners to restart their tasks",
        Duration::from_secs(60),
        || {
            let now = starts(&survivors, "d");
            owned_by_survivors
                .iter()
                .all(|t| now.get(t).copied().unwrap_or(0) > before.get(t).copied().unwrap_or(0))
                .then_some(())
        },
    );

    // A restart while a worker joins: no task ever runs on two workers at once.
    wait_for("a new leader", Duration::from_secs(60), || {
        survivors
            .iter()
            .any(|w| w.get("/tributary/worker").1["leader"] == true)
            .then_some(())
    });
    let w4 = DistributedWorker::start(dir.path(), "w4", &bootstrap, &group, "");
    let (code, _) = w2.send(
        "POST",
        "/connectors/d/restart?includeTasks=true&onlyFailed=false",
        None,
    );
    assert!(
        code == 202 || code == 409,
        "202, or 409 while the group rebalances: {code}"
    );
    w4.wait_joined();
    let live = [&w2, &w3, &w4];
    for _ in 0..40 {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for w in live {
            let info: Value = w.get("/tributary/worker").1;
            for t in info["tasks"].as_array().cloned().unwrap_or_default() {
                seen.entry(t.as_str().unwrap().to_string())
                    .or_default()
                    .push(w.name.clone());
            }
        }
        for (task, on) in &seen {
            assert!(on.len() <= 1, "{task} runs on {on:?} at once");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_mixed(&w3, "d");
}
