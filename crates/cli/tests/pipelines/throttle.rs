//! Per-task rate limits (issue #36): `tributary.throttle.records.per.second` and
//! `…bytes.per.second` on a real broker. A source that could send far faster, and a sink with a
//! backlog, stay under their limit (never above the rate times the time plus one batch), lose
//! nothing, show the limit and the time throttled in their status and `/metrics`; a config
//! update changes the limit of the running task; a bad value is refused by validation.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// The `throttle` field of task 0 in connector `name`'s status, once present.
fn throttle_of(w: &StandaloneWorker, name: &str) -> Value {
    wait_for("the task's throttle field", Duration::from_secs(60), || {
        let (_, v) = w.get(&format!("/connectors/{name}/status"));
        let t = v["tasks"][0]["throttle"].clone();
        (!t.is_null()).then_some(t)
    })
}

#[test]
fn a_throttled_source_stays_under_its_limit_and_a_config_update_changes_it() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let topic = unique("throttled-source");
    let limited = unique("limited");
    let rate = 200.0;
    // Before the create: the worker may start the task before it answers.
    let started = Instant::now();
    let (code, v) = w.send(
        "PUT",
        &format!("/connectors/{limited}/config"),
        Some(
            &json!({
                "connector.class": "VerifiableSource",
                "tasks.max": "1",
                "topic": topic,
                "throughput": "-1",
                "tributary.throttle.records.per.second": rate.to_string(),
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{v}");
    w.wait_state(&limited, 1, "RUNNING");
    // An unlimited source on the same worker keeps going at its own pace.
    let free_topic = unique("free-source");
    let free = unique("free");
    let (code, v) = w.send(
        "PUT",
        &format!("/connectors/{free}/config"),
        Some(&json!({"connector.class": "VerifiableSource", "tasks.max": "1", "topic": free_topic, "throughput": "-1"}).to_string()),
    );
    assert_eq!(code, 201, "{v}");
    wait_for("the first records", Duration::from_secs(60), || {
        (topic_end(&bootstrap, &topic) > 0).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    let sent = topic_end(&bootstrap, &topic) as f64;
    let elapsed = started.elapsed().as_secs_f64();
    // At most the rate over the time, plus one poll's batch (VerifiableSource polls one record)
    // and the 50 ms a limit's schedule may lag behind the clock.
    assert!(
        sent <= rate * (elapsed + 0.05) + 1.0,
        "{sent} records in {elapsed:.1} s at a limit of {rate}/s"
    );
    assert!(sent >= 100.0, "the task kept sending: {sent}");
    let free_sent = topic_end(&bootstrap, &free_topic) as f64;
    assert!(
        free_sent > 4.0 * sent,
        "the unlimited task is not held up: {free_sent} against {sent}"
    );
    // The limit and the time throttled are in the status body and in /metrics.
    let t = throttle_of(&w, &limited);
    assert_eq!(t["records_per_second"], rate, "{t}");
    assert_eq!(t["at_limit"], true, "{t}");
    assert!(t["throttled_ms_total"].as_u64().unwrap() > 0, "{t}");
    let (_, free_status) = w.get(&format!("/connectors/{free}/status"));
    assert!(
        free_status["tasks"][0]["throttle"].is_null(),
        "{free_status}"
    );
    let page = metrics_page(&w.url);
    let series = metric_series(&page, "tributary_task_throttled_seconds_total");
    assert!(
        series
            .iter()
            .any(|(l, v)| l.get("connector") == Some(&limited) && *v > 0.0),
        "{series:?}"
    );

    // A config update changes the running task's limit.
    let (code, v) = w.send(
        "PUT",
        &format!("/connectors/{limited}/config"),
        Some(
            &json!({
                "connector.class": "VerifiableSource",
                "tasks.max": "1",
                "topic": topic,
                "throughput": "-1",
                "tributary.throttle.records.per.second": "2000",
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 200, "{v}");
    wait_for("the new limit", Duration::from_secs(60), || {
        (throttle_of(&w, &limited)["records_per_second"] == 2000.0).then_some(())
    });

    // Validation refuses a bad value, naming the key.
    let (code, v) = w.send(
        "PUT",
        "/connector-plugins/VerifiableSource/config/validate",
        Some(&json!({"connector.class": "VerifiableSource", "topic": "t", "throughput": "1", "tributary.throttle.records.per.second": "0"}).to_string()),
    );
    assert_eq!(code, 200, "{v}");
    let errors: Vec<&Value> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "tributary.throttle.records.per.second")
        .collect();
    assert!(
        !errors.is_empty() && !errors[0]["value"]["errors"].as_array().unwrap().is_empty(),
        "{v}"
    );
}

#[test]
fn a_throttled_sink_drains_its_backlog_at_its_limit_and_loses_nothing() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let topic = unique("throttled-sink");
    let values: Vec<String> = (0..1500).map(|i| format!("line {i:05}")).collect();
    produce_values(&bootstrap, &topic, Some(0), &values);
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let out = dir.path().join("out.txt");
    let name = unique("sink");
    let rate = 500.0;
    let started = Instant::now();
    let (code, v) = w.send(
        "PUT",
        &format!("/connectors/{name}/config"),
        Some(
            &json!({
                "connector.class": "FileStreamSink",
                "tasks.max": "1",
                "topics": topic,
                "file": out.display().to_string(),
                "tributary.throttle.records.per.second": rate.to_string(),
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{v}");
    // Sampled while it drains: never above the rate over the time plus one batch (a put of at
    // most 500 records).
    let lines = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let mut first: Option<Instant> = None;
    let drained = wait_for("every line written", Duration::from_secs(60), || {
        let n = lines(&out) as f64;
        let elapsed = started.elapsed().as_secs_f64();
        assert!(
            n <= rate * (elapsed + 0.05) + 500.0,
            "{n} lines in {elapsed:.1} s at a limit of {rate}/s"
        );
        if n > 0.0 && first.is_none() {
            first = Some(Instant::now());
        }
        (n as usize >= values.len()).then(|| first.map(|f| f.elapsed()).unwrap_or_default())
    });
    // 1,500 records at 500/s: the first batch goes at once, the other 1,000 take about 2 s
    // more (unthrottled they take milliseconds).
    assert!(
        drained >= Duration::from_secs(1),
        "from the first line to the last in {drained:?}: the limit held nothing up"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        written.lines().collect::<Vec<_>>(),
        values,
        "in order, none lost"
    );
    let t = throttle_of(&w, &name);
    assert_eq!(t["records_per_second"], rate, "{t}");
    assert!(t["throttled_ms_total"].as_u64().unwrap() > 0, "{t}");
}
