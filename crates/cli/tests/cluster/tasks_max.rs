//! `tasks.max` enforcement (KAFKA-15575, KIP-1004), on a real broker, standalone and
//! distributed: a connector that generates more task configs than its `tasks.max` fails with
//! Connect's `TooManyTasksException` message and starts no task; with the deprecated
//! `tasks.max.enforce=false` the extra tasks run. A task started while its connector has more
//! tasks stored than `tasks.max` fails the same way.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// Connect's `TooManyTasksException` message for connector `name`.
fn too_many(name: &str, generated: usize, max: usize) -> String {
    format!(
        "The connector {name} has generated {generated} tasks, which is greater than {max}, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect."
    )
}

/// A FlakySource generating 3 task configs whatever its `tasks.max` (1), with `extra` keys.
fn greedy(topic: &str, extra: Value) -> Value {
    let mut config = json!({
        "connector.class": "FlakySource",
        "topic": topic,
        "tasks.max": "1",
        "tasks.generated": "3",
        "records.per.second": "0",
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config
}

fn create(w: &StandaloneWorker, name: &str, config: Value) {
    let (code, body) = w.send(
        "POST",
        "/connectors",
        Some(&json!({"name": name, "config": config}).to_string()),
    );
    assert_eq!(code, 201, "{body}");
}

/// Waits for the connector to be FAILED; its trace carries `TooManyTasksException`'s message,
/// and no task was created or started.
fn assert_fails_with_too_many_tasks(w: &StandaloneWorker, name: &str) {
    let status = wait_for(
        &format!("{name} to fail with too many tasks"),
        Duration::from_secs(60),
        || {
            let (_, s) = w.get(&format!("/connectors/{name}/status"));
            (s["connector"]["state"] == "FAILED").then_some(s)
        },
    );
    let trace = status["connector"]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.starts_with(&format!(
            "org.apache.kafka.connect.runtime.TooManyTasksException: {}",
            too_many(name, 3, 1)
        )),
        "{status}"
    );
    assert_eq!(status["tasks"], json!([]), "{status}");
    let (code, tasks) = w.get(&format!("/connectors/{name}/tasks"));
    assert_eq!((code, tasks), (200, json!([])));
}

#[test]
fn standalone_too_many_task_configs_fail_the_connector_unless_not_enforced() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    create(&w, "greedy", greedy(&unique("greedy"), json!({})));
    assert_fails_with_too_many_tasks(&w, "greedy");

    create(
        &w,
        "tolerated",
        greedy(&unique("tolerated"), json!({"tasks.max.enforce": "false"})),
    );
    let status = w.wait_state("tolerated", 3, "RUNNING");
    assert_eq!(status["tasks"].as_array().unwrap().len(), 3, "{status}");
    // The failed connector stays failed, with no task.
    assert_fails_with_too_many_tasks(&w, "greedy");
}

#[test]
fn distributed_too_many_task_configs_fail_the_connector_unless_not_enforced() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &unique("tasksmax"), "");
    w.wait_joined();
    create(&w, "greedy", greedy(&unique("greedy"), json!({})));
    assert_fails_with_too_many_tasks(&w, "greedy");

    let topic = unique("tolerated");
    create(
        &w,
        "tolerated",
        greedy(&topic, json!({"tasks.max.enforce": "false"})),
    );
    let status = w.wait_state("tolerated", 3, "RUNNING");
    assert_eq!(status["tasks"].as_array().unwrap().len(), 3, "{status}");
    assert_fails_with_too_many_tasks(&w, "greedy");

    // Enforcement switched on while 3 tasks are stored: the restarted connector fails, and a
    // task started now fails too (Connect's check in `Worker.startTask`).
    let (code, body) = w.send(
        "PUT",
        "/connectors/tolerated/config",
        Some(&greedy(&topic, json!({})).to_string()),
    );
    assert_eq!(code, 200, "{body}");
    let status = wait_for(
        "tolerated to fail once enforced",
        Duration::from_secs(60),
        || {
            let (_, s) = w.get("/connectors/tolerated/status");
            (s["connector"]["state"] == "FAILED").then_some(s)
        },
    );
    assert!(
        status["connector"]["trace"]
            .as_str()
            .unwrap_or_default()
            .contains(&too_many("tolerated", 3, 1)),
        "{status}"
    );
    let (code, body) = w.send("POST", "/connectors/tolerated/tasks/2/restart", None);
    assert_eq!(code, 500, "{body}");
    let task = wait_for("task 2 to fail", Duration::from_secs(60), || {
        let (_, s) = w.get("/connectors/tolerated/tasks/2/status");
        (s["state"] == "FAILED").then_some(s)
    });
    assert!(
        task["trace"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&format!(
                "org.apache.kafka.connect.runtime.TooManyTasksException: {}",
                too_many("tolerated", 3, 1)
            )),
        "{task}"
    );
}
