//! Liveness of tasks and connectors (Tributary) on a real broker: a task whose `poll` does not
//! return is shown stalled in its status and in `/metrics`, and a connector RUNNING with a
//! FAILED task is summarised as DEGRADED, never healthy.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

fn metrics(w: &DistributedWorker) -> String {
    reqwest::blocking::get(format!("{}/metrics", w.url))
        .unwrap()
        .text()
        .unwrap()
}

#[test]
fn a_blocked_poll_is_stalled_and_a_failed_task_degrades_its_connector() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("taskhealth");
    let w = DistributedWorker::start(
        dir.path(),
        "w1",
        &bootstrap,
        &group,
        "tributary.task.stall.threshold.ms=1000",
    );
    w.wait_joined();
    // A task whose poll blocks (a hung plugin), and a connector with one failing task of two.
    for (name, extra) in [
        (
            "hung",
            json!({"block.in": "task.poll", "block.ms": "600000"}),
        ),
        (
            "half",
            json!({"tasks.max": "2", "fail.tasks": "1", "records.per.second": "5"}),
        ),
    ] {
        let mut config = json!({"connector.class": "FlakySource", "topic": unique(name)});
        for (k, v) in extra.as_object().unwrap() {
            config[k] = v.clone();
        }
        let (code, body) = w.send(
            "POST",
            "/connectors",
            Some(&json!({"name": name, "config": config}).to_string()),
        );
        assert_eq!(code, 201, "{body}");
    }

    // The hung task is RUNNING as far as Connect's states go, but stalled.
    let stalled = wait_for(
        "the hung task to be stalled",
        Duration::from_secs(60),
        || {
            let (_, s) = w.get("/connectors/hung/tasks/0/status");
            (s["progress"]["stalled"] == true).then_some(s)
        },
    );
    assert_eq!(stalled["state"], "RUNNING", "{stalled}");
    assert!(stalled["progress"]["call_running_ms"].as_u64().unwrap() >= 1000);
    let m = metrics(&w);
    assert!(
        m.contains("tributary_task_stalled{connector=\"hung\",task=\"0\"} 1"),
        "{m}"
    );

    // A healthy task completes calls all the time: its status is Connect's (no progress
    // field), and /metrics shows a recent last call.
    let (_, healthy) = w.get("/connectors/half/tasks/0/status");
    assert!(healthy.get("progress").is_none(), "{healthy}");
    let re = regex::Regex::new(
        r#"tributary_task_last_call_age_ms\{connector="half",task="0"\} ([0-9.]+)"#,
    )
    .unwrap();
    let age: f64 = wait_for("half-0's last call age", Duration::from_secs(60), || {
        re.captures(&metrics(&w)).map(|c| c[1].parse().unwrap())
    });
    assert!(age < 5_000.0, "{age}");
    assert!(metrics(&w).contains("tributary_task_stalled{connector=\"half\",task=\"0\"} 0"));

    // RUNNING with a FAILED task: DEGRADED, in the summary and in /metrics.
    let summary = wait_for("half to be degraded", Duration::from_secs(60), || {
        let (_, h) = w.get("/tributary/connector-health");
        (h["half"]["health"] == "DEGRADED").then_some(h)
    });
    assert_eq!(summary["half"]["connector"], "RUNNING", "{summary}");
    assert_eq!(summary["half"]["tasks"]["FAILED"], 1, "{summary}");
    assert_eq!(summary["half"]["tasks"]["RUNNING"], 1, "{summary}");
    assert_eq!(summary["hung"]["health"], "HEALTHY", "{summary}");
    let m = metrics(&w);
    assert!(
        m.contains("tributary_connector_failed_tasks{connector=\"half\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("tributary_connector_health{connector=\"half\",health=\"degraded\"} 1"),
        "{m}"
    );
}

/// KIP-1017 on a real cluster: a worker whose first join cannot complete (the group waits for
/// a member that is frozen) answers 503 `starting`; once the member is back and the worker
/// joined, 200 `healthy`, with Connect's bodies.
#[test]
fn health_is_starting_until_the_first_join_completes() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("health");
    // A long session: the coordinator waits for the frozen member rather than evicting it.
    let extra = "session.timeout.ms=45000";
    let mut w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    w1.wait_joined();
    let freeze = |signal: &str, pid: u32| {
        let ok = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal} {pid}");
    };
    let pid = w1.child.id();
    freeze("-STOP", pid);
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, extra);
    let (code, body) = w2.get("/health");
    freeze("-CONT", pid);
    assert_eq!(
        (code, body),
        (
            503,
            json!({"status": "starting", "message": "Worker is still starting up."})
        )
    );
    w2.wait_joined();
    assert_eq!(
        w2.get("/health"),
        (
            200,
            json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."})
        )
    );
    w1.kill();
}
