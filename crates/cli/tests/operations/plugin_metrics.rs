//! Plugin metrics (KIP-877) of a native connector on the real broker: each task of Tributary's
//! FlakySource registers `records-polled` through its context's `PluginMetrics`; the worker's
//! `/metrics` shows one series per task with Connect's tags (`connector`, `task`) and the
//! plugin's (`topic`), counting what the task's `poll` returned; a restarted task's series
//! starts again from its new instance, and the series go when the connector is deleted. The
//! connector's transformation (the testing `TestTransformation`, `Monitorable`) is handed its
//! own metrics, tagged `transformation=<alias>` besides the task's tags.
//! (A hosted Java plugin's metrics are checked with MirrorMaker 2 in the `hosted` tests.)

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

const SERIES: &str = "kafka_connect_plugins_records_polled";

/// `records-polled` of task `task` of connector `c` on `url`, when shown.
fn polled(
    url: &str,
    c: &str,
    task: &str,
) -> Option<(std::collections::BTreeMap<String, String>, f64)> {
    metric_series(&metrics_page(url), SERIES)
        .into_iter()
        .find(|(l, _)| {
            l.get("connector").map(String::as_str) == Some(c)
                && l.get("task").map(String::as_str) == Some(task)
        })
}

#[test]
fn a_native_tasks_own_metrics_follow_the_task() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("pluginmetrics");
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w.wait_joined();
    let topic = unique("pm");
    let config = json!({
        "connector.class": "FlakySource",
        "topic": topic,
        "tasks.max": "2",
        "records.per.second": "50",
        "transforms": "suffix",
        "transforms.suffix.type": "io.tributary.connect.testing.TestTransformation",
    });
    let (code, body) = w.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "pm", "config": config}).to_string()),
    );
    assert_eq!(code, 201, "{body}");

    // One series per task, tagged as Connect tags plugin metrics plus the plugin's own tag,
    // counting up as the task polls.
    for task in ["0", "1"] {
        let (labels, _) = wait_for(
            &format!("task {task}'s series"),
            Duration::from_secs(60),
            || polled(&w.url, "pm", task).filter(|(_, v)| *v > 0.0),
        );
        assert_eq!(labels.get("topic"), Some(&topic), "{labels:?}");
        assert_eq!(
            labels.len(),
            3,
            "connector, task and topic only: {labels:?}"
        );
    }
    let page = metrics_page(&w.url);
    assert!(
        page.contains(&format!(
            "# HELP {SERIES} Records the task returned from poll since it started"
        )),
        "the plugin's description is the help"
    );
    // The value is the task's: it reaches what its topic holds for it (records 0…n of task 0
    // are the INT32 key 0).
    let (_, before) = polled(&w.url, "pm", "0").unwrap();
    wait_for("task 0's count to grow", Duration::from_secs(60), || {
        polled(&w.url, "pm", "0").filter(|(_, v)| *v > before + 20.0)
    });

    // A restarted task registers its metric again from its new instance: the count starts
    // over rather than the task failing on a name its old instance held.
    let (_, running) = polled(&w.url, "pm", "1").unwrap();
    let (code, body) = w.send("POST", "/connectors/pm/tasks/1/restart", None);
    assert_eq!(code, 204, "{body}");
    wait_for(
        "task 1's count to start over",
        Duration::from_secs(60),
        || polled(&w.url, "pm", "1").filter(|(_, v)| *v > 0.0 && *v < running),
    );
    let status = w.wait_state("pm", 2, "RUNNING");
    assert_eq!(status["tasks"][1]["state"], "RUNNING", "{status}");

    // Deleting the connector removes its tasks' series.
    let (code, body) = w.send("DELETE", "/connectors/pm", None);
    assert_eq!(code, 204, "{body}");
    wait_for("the series to go", Duration::from_secs(60), || {
        let page = metrics_page(&w.url);
        (metric_series(&page, SERIES).is_empty()
            && metric_series(&page, "kafka_connect_plugins_records_applied").is_empty())
        .then_some(())
    });
}
