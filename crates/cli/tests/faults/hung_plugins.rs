//! Plugins that hang: a connector blocked in `start` holds up no other connector (no herder or
//! worker lock is held across a plugin call), and a task blocked in `poll` or `stop` is
//! abandoned after `task.shutdown.graceful.timeout.ms` and reported, while the worker and the
//! other connectors keep working and the worker still shuts down. Standalone and distributed.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const EXTRA: &str = "task.shutdown.graceful.timeout.ms=2000\n";

fn flaky(topic: &str, extra: Value) -> String {
    let mut config = json!({
        "connector.class": "io.tributary.connect.testing.FlakySourceConnector",
        "tasks.max": "1",
        "topic": topic,
        "records.per.second": "50",
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config.to_string()
}

/// Sends a request with a client timeout, so that a request held up by a hung plugin fails
/// the test instead of hanging it.
fn send(w: &StandaloneWorker, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut req = client.request(method.parse().unwrap(), format!("{}{path}", w.url));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let r = req.send().unwrap_or_else(|e| {
        panic!("{method} {path} did not answer (held up by a hung plugin?): {e}")
    });
    let status = r.status().as_u16();
    (
        status,
        serde_json::from_str(&r.text().unwrap_or_default()).unwrap_or(Value::Null),
    )
}

fn records_of(w: &StandaloneWorker, task: &str) -> u64 {
    send(w, "GET", "/tributary/task-counters", None).1[task]["records"]
        .as_u64()
        .unwrap_or(0)
}

/// Everything a user does with other connectors works while `stuck` blocks in `start`; a task
/// hung in `poll` is abandoned when its connector is deleted; the worker shuts down.
fn exercise(w: &mut StandaloneWorker) {
    let (code, v) = send(
        w,
        "PUT",
        "/connectors/stuck/config",
        Some(&flaky(
            &unique("stuck"),
            json!({"block.in": "connector.start"}),
        )),
    );
    assert_eq!(code, 201, "creating a connector whose start blocks: {v}");

    // Another connector is created, runs, pauses, resumes and is deleted meanwhile.
    let (code, v) = send(
        w,
        "PUT",
        "/connectors/healthy/config",
        Some(&flaky(&unique("healthy"), json!({}))),
    );
    assert_eq!(code, 201, "{v}");
    w.wait_state("healthy", 1, "RUNNING");
    wait_for("healthy's task to produce", Duration::from_secs(60), || {
        (records_of(w, "healthy-0") > 0).then_some(())
    });
    assert_eq!(send(w, "PUT", "/connectors/healthy/pause", None).0, 202);
    w.wait_state("healthy", 1, "PAUSED");
    assert_eq!(send(w, "PUT", "/connectors/healthy/resume", None).0, 202);
    w.wait_state("healthy", 1, "RUNNING");
    let listed = send(w, "GET", "/connectors", None).1;
    assert!(
        listed.as_array().unwrap().contains(&json!("stuck")),
        "{listed}"
    );
    assert_eq!(send(w, "GET", "/connectors/stuck", None).0, 200);
    assert_eq!(send(w, "DELETE", "/connectors/healthy", None).0, 204);
    wait_for("healthy to be gone", Duration::from_secs(60), || {
        (send(w, "GET", "/connectors/healthy", None).0 == 404).then_some(())
    });

    // A task hung in poll: deleting its connector abandons it after the graceful timeout and
    // says so; a neighbour keeps producing.
    let (code, _) = send(
        w,
        "PUT",
        "/connectors/neighbour/config",
        Some(&flaky(&unique("neighbour"), json!({}))),
    );
    assert_eq!(code, 201);
    let (code, _) = send(
        w,
        "PUT",
        "/connectors/hangs/config",
        Some(&flaky(
            &unique("hangs"),
            json!({"block.in": "task.poll,task.stop"}),
        )),
    );
    assert_eq!(code, 201);
    w.wait_state("hangs", 1, "RUNNING");
    w.wait_state("neighbour", 1, "RUNNING");
    wait_for(
        "hangs' task to block in poll",
        Duration::from_secs(60),
        || {
            w.log_text()
                .contains("FlakySource blocking in task.poll")
                .then_some(())
        },
    );
    assert_eq!(send(w, "DELETE", "/connectors/hangs", None).0, 204);
    wait_for(
        "the hung task to be reported",
        Duration::from_secs(60),
        || {
            w.log_text()
                .lines()
                .any(|l| l.contains("graceful stop of task failed") && l.contains("hangs-0"))
                .then_some(())
        },
    );
    let before = records_of(w, "neighbour-0");
    wait_for(
        "the neighbour to keep producing",
        Duration::from_secs(60),
        || (records_of(w, "neighbour-0") > before).then_some(()),
    );

    // The worker still shuts down, abandoning what hangs.
    let status = w.terminate();
    assert!(status.success(), "worker exit: {status}");
}

#[test]
fn hung_plugins_hold_up_nothing_else_standalone() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let mut w = StandaloneWorker::start(dir.path(), &bootstrap, EXTRA, &[]);
    exercise(&mut w);
}

#[test]
fn hung_plugins_hold_up_nothing_else_distributed() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("hung");
    let mut w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, EXTRA);
    w.wait_joined();
    exercise(&mut w);
}

/// A distributed worker stopped with SIGTERM while one of its tasks hangs in `poll` and `stop`
/// still stops everything else, reports its jobs, leaves the group and exits within
/// `task.shutdown.graceful.timeout.ms` (2 s here) and the 2 s the README allows for closing
/// the internal topics, the REST server and the runtime.
#[test]
fn a_worker_with_a_hung_task_still_stops_within_the_graceful_timeout() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("hung-stop");
    let mut w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, EXTRA);
    w.wait_joined();
    for (name, extra) in [
        ("hangs", json!({"block.in": "task.poll,task.stop"})),
        ("neighbour", json!({})),
    ] {
        let (code, _) = send(
            &w,
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(&flaky(&unique(name), extra)),
        );
        assert_eq!(code, 201);
    }
    w.wait_state("hangs", 1, "RUNNING");
    w.wait_state("neighbour", 1, "RUNNING");
    wait_for(
        "hangs' task to block in poll",
        Duration::from_secs(60),
        || {
            w.log_text()
                .contains("FlakySource blocking in task.poll")
                .then_some(())
        },
    );
    let signalled = std::time::Instant::now();
    let status = w.terminate();
    let took = signalled.elapsed();
    eprintln!("SIGTERM -> exit with a task hung in stop: {took:?}");
    assert!(status.success(), "worker exit: {status}");
    let log = w.log_text();
    assert!(
        log.lines()
            .any(|l| l.contains("graceful stop of task failed") && l.contains("hangs-0")),
        "the hung task was abandoned and reported:\n{log}"
    );
    assert!(
        log.contains("stopped this worker's jobs and left the group"),
        "the worker left the group:\n{log}"
    );
    assert!(
        took < Duration::from_secs(4),
        "SIGTERM -> exit within the graceful timeout (2 s) + 2 s: {took:?}"
    );
}

/// An instance abandoned after `task.shutdown.graceful.timeout.ms` that fails later, while
/// finishing on its own, reports nothing (Connect's `WorkerTask.cancel`): its FAILED must not
/// hide the task's next instance, RUNNING on the same worker in the same generation. (The
/// nemesis found it with an exactly-once task whose abandoned instance was fenced by the next
/// one.)
#[test]
fn an_abandoned_instance_failing_later_does_not_hide_the_next_one() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("abandoned");
    // One status partition: a record read after the abandoned instance's failure was logged
    // is read after any status that failure wrote.
    let extra = format!("{EXTRA}status.storage.partitions=1\n");
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, &extra);
    w.wait_joined();
    let (first, next) = (dir.path().join("first"), dir.path().join("next"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&next).unwrap();
    // The first instance blocks in its first poll for 8 s, then fails (its trigger file is
    // there from the start).
    std::fs::write(first.join("fail-0"), "").unwrap();
    let topic = unique("abandoned");
    let config = |extra: Value| flaky(&topic, extra);
    let (code, _) = send(
        &w,
        "PUT",
        "/connectors/abandoned/config",
        Some(&config(json!({
            "block.in": "task.poll",
            "block.ms": "8000",
            "fail.trigger.dir": first.to_str().unwrap(),
        }))),
    );
    assert_eq!(code, 201);
    wait_for(
        "the first instance to block in poll",
        Duration::from_secs(60),
        || {
            w.log_text()
                .contains("FlakySource blocking in task.poll")
                .then_some(())
        },
    );
    // New task configs: the blocked instance is abandoned after 2 s, the next one starts.
    let (code, _) = send(
        &w,
        "PUT",
        "/connectors/abandoned/config",
        Some(&config(json!({"fail.trigger.dir": next.to_str().unwrap()}))),
    );
    assert_eq!(code, 200);
    wait_for(
        "the first instance to be abandoned",
        Duration::from_secs(60),
        || {
            w.log_text()
                .lines()
                .any(|l| l.contains("graceful stop of task failed") && l.contains("abandoned-0"))
                .then_some(())
        },
    );
    wait_for(
        "the abandoned instance to fail",
        Duration::from_secs(60),
        || {
            w.log_text()
                .contains("FlakySourceTask 0 failed: trigger file")
                .then_some(())
        },
    );
    // A status written after that failure, read back: anything the failure wrote is read too.
    let (code, _) = send(
        &w,
        "PUT",
        "/connectors/marker/config",
        Some(&flaky(&unique("marker"), json!({}))),
    );
    assert_eq!(code, 201);
    w.wait_state("marker", 1, "RUNNING");
    let (_, status) = w.get("/connectors/abandoned/status");
    assert_eq!(
        status["tasks"][0]["state"], "RUNNING",
        "the next instance's status: {status}"
    );
    assert!(
        w.log_text()
            .contains("not reporting the status of an abandoned instance"),
        "the abandoned instance's FAILED was dropped"
    );
}
