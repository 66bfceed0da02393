//! Automatic restarts (`tributary.restart.*`, beyond Connect) on a 2-worker cluster against a
//! real broker: a FAILED task is restarted through a KIP-745 restart request by the worker
//! running it, after a backoff that doubles up to its maximum, until it runs or the attempt
//! limit is reached; its status shows the restarts and the last failure, and `/metrics` counts
//! them.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// The worker running task 0 of `connector` (by the status's `worker_id`), once it has one.
fn owner<'a>(
    workers: &'a [&'a DistributedWorker],
    connector: &str,
) -> Option<&'a DistributedWorker> {
    let (_, s) = workers[0].get(&format!("/connectors/{connector}/status"));
    let id = s["tasks"][0]["worker_id"].as_str()?.to_string();
    workers.iter().copied().find(|w| w.id() == id)
}

fn task0(w: &DistributedWorker, connector: &str) -> Value {
    w.get(&format!("/connectors/{connector}/tasks/0/status")).1
}

fn cluster(dir: &std::path::Path, bootstrap: &str) -> (DistributedWorker, DistributedWorker) {
    let group = unique("autorestart");
    let w1 = DistributedWorker::start(dir, "w1", bootstrap, &group, "");
    let w2 = DistributedWorker::start(dir, "w2", bootstrap, &group, "");
    w1.wait_joined();
    w2.wait_joined();
    (w1, w2)
}

/// Bad settings are refused with the key named; they are not silently accepted.
#[test]
fn invalid_settings_are_refused() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let (w1, _w2) = cluster(dir.path(), &bootstrap);
    for (key, value) in [
        ("tributary.restart.enable", "sometimes"),
        ("tributary.restart.max.attempts", "-5"),
        ("tributary.restart.backoff.initial.ms", "soon"),
        ("tributary.restart.backof.max.ms", "10"),
    ] {
        let mut config = json!({
            "connector.class": "FlakySource", "topic": unique("bad"),
            "tributary.restart.enable": "true",
        });
        config[key] = json!(value);
        let (code, body) = w1.send(
            "POST",
            "/connectors",
            Some(&json!({"name": "bad", "config": config}).to_string()),
        );
        assert_eq!(code, 400, "{key}={value}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains(key),
            "{key}: {body}"
        );
    }
}

/// A task that fails twice and then runs: two automatic restarts, on the worker running it,
/// the second after twice the first wait; its status keeps the count and the last failure.
#[test]
fn a_task_failing_twice_runs_after_two_restarts() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let (w1, w2) = cluster(dir.path(), &bootstrap);
    let triggers = dir.path().join("triggers");
    std::fs::create_dir_all(&triggers).unwrap();
    std::fs::write(triggers.join("fail-0"), "").unwrap();
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "twice", "config": {
                "connector.class": "FlakySource", "topic": unique("twice"),
                "fail.trigger.dir": triggers.to_str().unwrap(),
                "tributary.restart.enable": "true",
                "tributary.restart.backoff.initial.ms": "1000",
                "tributary.restart.backoff.max.ms": "10000",
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let workers = [&w1, &w2];
    // The first failure: a restart scheduled 1 s later.
    let first = wait_for("the first failure", Duration::from_secs(60), || {
        let w = owner(&workers, "twice")?;
        let s = task0(w, "twice");
        (s["state"] == "FAILED"
            && s["auto_restart"]["restarts"] == 0
            && !s["auto_restart"]["backoff_ms"].is_null())
        .then_some(s)
    });
    assert_eq!(first["auto_restart"]["backoff_ms"], 1000, "{first}");
    assert!(
        first["auto_restart"]["last_failure_trace"]
            .as_str()
            .unwrap()
            .contains("trigger file"),
        "{first}"
    );
    // The second failure, after one restart: the next wait is twice as long. Then the cause
    // goes away, and the second restart runs the task.
    let second = wait_for("the second failure", Duration::from_secs(60), || {
        let w = owner(&workers, "twice")?;
        let s = task0(w, "twice");
        (s["state"] == "FAILED"
            && s["auto_restart"]["restarts"] == 1
            && !s["auto_restart"]["backoff_ms"].is_null())
        .then_some(s)
    });
    assert_eq!(second["auto_restart"]["backoff_ms"], 2000, "{second}");
    std::fs::remove_file(triggers.join("fail-0")).unwrap();
    let running = wait_for("the task to run", Duration::from_secs(60), || {
        let w = owner(&workers, "twice")?;
        let s = task0(w, "twice");
        (s["state"] == "RUNNING").then_some(s)
    });
    assert_eq!(running["auto_restart"]["restarts"], 2, "{running}");
    assert!(running["auto_restart"]["last_failure_trace"]
        .as_str()
        .unwrap()
        .contains("trigger file"));
    assert_eq!(running["auto_restart"]["exhausted"], false);
    // The worker running the task counts the restarts in /metrics.
    let w = owner(&workers, "twice").unwrap();
    let metrics = reqwest::blocking::get(format!("{}/metrics", w.url))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("tributary_task_auto_restarts_total{connector=\"twice\",task=\"0\"} 2"),
        "{metrics}"
    );
}

/// A task that always fails: the waits double up to the maximum and the restarts stop at
/// `tributary.restart.max.attempts`, leaving the task FAILED.
#[test]
fn restarts_of_a_task_that_always_fails_stop_at_the_limit() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let (w1, w2) = cluster(dir.path(), &bootstrap);
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "always", "config": {
                "connector.class": "FlakySource", "topic": unique("always"),
                "fail.tasks": "0",
                "tributary.restart.enable": "true",
                "tributary.restart.backoff.initial.ms": "400",
                "tributary.restart.backoff.max.ms": "1000",
                "tributary.restart.max.attempts": "3",
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let workers = [&w1, &w2];
    // Each failure's scheduled wait, by the restarts before it.
    let mut waits = std::collections::BTreeMap::new();
    let last = wait_for("the restarts to stop", Duration::from_secs(60), || {
        let w = owner(&workers, "always")?;
        let s = task0(w, "always");
        let a = &s["auto_restart"];
        if let (Some(n), Some(b)) = (a["restarts"].as_u64(), a["backoff_ms"].as_u64()) {
            waits.insert(n, b);
        }
        // The owner knows the restarts are exhausted as it writes the last FAILED, which its
        // status cache shows once read back from the status topic.
        (a["exhausted"] == true && s["state"] == "FAILED").then_some(s)
    });
    assert_eq!(
        waits.into_iter().collect::<Vec<_>>(),
        vec![(0, 400), (1, 800), (2, 1000)]
    );
    assert_eq!(last["state"], "FAILED", "{last}");
    assert_eq!(last["auto_restart"]["restarts"], 3, "{last}");
    assert!(last["auto_restart"].get("next_restart_in_ms").is_none());
    // Four runs in all (the first start and three restarts), all on the owner.
    let w = owner(&workers, "always").unwrap();
    let (_, counters) = w.get("/tributary/task-counters");
    assert_eq!(counters["always-0"]["starts"], 4, "{counters}");
}

/// A connector instance that fails (Connect's MockSourceConnector in `connector-failure` mode
/// raises an error after it started) is restarted too, and its restarts stop at the limit.
#[test]
fn a_failing_connector_instance_is_restarted_up_to_the_limit() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let (w1, w2) = cluster(dir.path(), &bootstrap);
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "mockfail", "config": {
                "connector.class": "org.apache.kafka.connect.tools.MockSourceConnector",
                "mock_mode": "connector-failure",
                "delay_ms": "100",
                "tributary.restart.enable": "true",
                "tributary.restart.backoff.initial.ms": "200",
                "tributary.restart.max.attempts": "2",
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let status = wait_for(
        "the connector's restarts to stop",
        Duration::from_secs(60),
        || {
            // The restarts are exhausted once the last one is requested; the instance it
            // started fails 100 ms later.
            [&w1, &w2].into_iter().find_map(|w| {
                let (_, s) = w.get("/connectors/mockfail/status");
                let c = &s["connector"];
                (c["auto_restart"]["exhausted"] == true && c["state"] == "FAILED").then_some(s)
            })
        },
    );
    assert_eq!(status["connector"]["state"], "FAILED", "{status}");
    assert_eq!(
        status["connector"]["auto_restart"]["restarts"], 2,
        "{status}"
    );
}

/// Stalled tasks (issue #36, `tributary.restart.stall.ms`): a source whose `poll` hangs
/// (FlakySource `block.in=task.poll`) and a sink whose `put` hangs (MockSink
/// `mock_mode=task-hang`) are failed with the reason in their trace and restarted with the
/// backoff; a task that progresses is left alone; the setting without restarts is refused.
#[test]
fn stalled_tasks_are_failed_with_the_reason_and_restarted() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let (w1, w2) = cluster(dir.path(), &bootstrap);
    let workers = [&w1, &w2];
    let stall = json!({
        "tributary.restart.enable": "true",
        "tributary.restart.stall.ms": "2000",
        "tributary.restart.backoff.initial.ms": "200",
        "tributary.restart.backoff.max.ms": "200",
    });
    let with = |mut config: Value| {
        for (k, v) in stall.as_object().unwrap() {
            config[k] = v.clone();
        }
        config
    };
    let create = |name: &str, config: Value| {
        let (code, body) = w1.send(
            "POST",
            "/connectors",
            Some(&json!({"name": name, "config": config}).to_string()),
        );
        assert_eq!(code, 201, "{body}");
    };
    create(
        "hung-source",
        with(
            json!({"connector.class": "FlakySource", "topic": unique("hung"), "block.in": "task.poll"}),
        ),
    );
    let sink_topic = unique("hung-sink");
    produce_values(&bootstrap, &sink_topic, Some(0), &["a".to_string()]);
    create(
        "hung-sink",
        with(
            json!({"connector.class": "MockSink", "topics": sink_topic, "mock_mode": "task-hang", "delay_ms": "0"}),
        ),
    );
    create(
        "healthy",
        with(
            json!({"connector.class": "VerifiableSource", "topic": unique("healthy"), "throughput": "10"}),
        ),
    );
    for (name, call) in [("hung-source", "poll"), ("hung-sink", "put")] {
        // Failed with the reason, then restarted (and stalled again: the cause stays).
        let failed = wait_for(
            &format!("{name} failed as stalled"),
            Duration::from_secs(60),
            || {
                let w = owner(&workers, name)?;
                let s = task0(w, name);
                let trace = s["auto_restart"]["last_failure_trace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                (trace.contains("made no progress")
                    && s["auto_restart"]["restarts"].as_u64() >= Some(1))
                .then_some((s, trace))
            },
        );
        assert!(
            failed
                .1
                .contains(&format!("its {call} has not returned for")),
            "{name}: {}",
            failed.0
        );
        assert!(
            failed.1.contains("tributary.restart.stall.ms=2000"),
            "{}",
            failed.0
        );
    }
    // The healthy task was never failed.
    let w = owner(&workers, "healthy").unwrap();
    let s = task0(w, "healthy");
    assert_eq!(s["state"], "RUNNING", "{s}");
    assert!(s["auto_restart"]["last_failure_trace"].is_null(), "{s}");
    // Without automatic restarts the setting would do nothing: refused.
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "refused", "config": {"connector.class": "FlakySource", "topic": "t", "tributary.restart.stall.ms": "1000"}}).to_string()),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("tributary.restart.stall.ms"),
        "{body}"
    );
}
