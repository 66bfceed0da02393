//! A distributed worker whose config topic holds thousands of connectors: REST reads share the
//! config snapshot instead of copying it, so `GET /connectors?expand=status` lists them all;
//! STOPPED connectors hold no thread; the worker shuts down cleanly.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::ClientConfig;
use serde_json::{json, Value};

const CONNECTORS: usize = 2_000;

/// The config of connector `name` (a VerifiableSource that never runs: it is STOPPED).
fn config(name: &str) -> Value {
    json!({
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "name": name,
        "tasks.max": "1",
        "topic": format!("{name}-out"),
        "throughput": "1",
    })
}

/// Writes the connectors into the config topic as Connect records a connector created with
/// `initial_state=STOPPED`: its target state, then its config.
fn write_stopped_connectors(bootstrap: &str, topic: &str, names: &[String]) {
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    let stopped = json!({"state": "PAUSED", "state.v2": "STOPPED"}).to_string();
    for name in names {
        let records = [
            (format!("target-state-{name}"), stopped.clone()),
            (
                format!("connector-{name}"),
                json!({ "properties": config(name) }).to_string(),
            ),
        ];
        for (key, value) in &records {
            p.send(BaseRecord::<str, str>::to(topic).key(key).payload(value))
                .map_err(|(e, _)| e)
                .unwrap();
        }
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

/// Threads of process `pid` whose name starts with `prefix`.
fn threads_named(pid: u32, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with(prefix))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn expand_status_lists_two_thousand_stopped_connectors() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("many");
    let mut w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w.wait_joined();
    let names: Vec<String> = (0..CONNECTORS).map(|i| format!("c{i:05}")).collect();
    write_stopped_connectors(&bootstrap, &format!("{group}-configs"), &names);

    let (_, listed) = wait_for(
        "the worker to read every connector",
        Duration::from_secs(120),
        || {
            let (code, body) = w.get("/connectors");
            (code == 200 && body.as_array().map(Vec::len) == Some(CONNECTORS))
                .then_some((code, body))
        },
    );
    let listed: Vec<String> = serde_json::from_value(listed).unwrap();
    assert_eq!(listed, names, "every connector, sorted");

    // Each connector is assigned to this worker, created STOPPED, and reports it.
    let worker_id = w.id();
    let statuses = wait_for(
        "every connector to report STOPPED",
        Duration::from_secs(180),
        || {
            let (code, body) = w.get("/connectors?expand=status");
            let all = code == 200
                && body.as_object().is_some_and(|m| {
                    m.len() == CONNECTORS
                        && m.values()
                            .all(|e| e["status"]["connector"]["state"] == "STOPPED")
                });
            all.then_some(body)
        },
    );
    let statuses = statuses.as_object().unwrap();
    assert_eq!(
        statuses.keys().cloned().collect::<BTreeSet<_>>(),
        names.iter().cloned().collect::<BTreeSet<_>>()
    );
    for (name, entry) in statuses {
        let status = &entry["status"];
        assert_eq!(status["name"], name.as_str(), "{entry}");
        assert_eq!(
            status["connector"]["worker_id"],
            worker_id.as_str(),
            "{entry}"
        );
        assert_eq!(status["tasks"], json!([]), "{entry}");
        assert_eq!(status["type"], "source", "{entry}");
        assert!(entry.get("info").is_none(), "{entry}");
    }

    // Both expansions: every connector once, its info (config as written, no tasks) beside its
    // status.
    // No connector was bounced (stopped, reported UNASSIGNED, started again) by a config
    // record read while the rebalance that started it was under way: the instance had it.
    let bounced: Vec<String> = common::eos::read_all(&bootstrap, &format!("{group}-status"))
        .records
        .into_iter()
        .filter(|(k, v)| {
            k.starts_with("status-connector-")
                && v.as_ref().is_some_and(|v| v["state"] == "UNASSIGNED")
        })
        .map(|(k, _)| k)
        .collect();
    assert!(
        bounced.is_empty(),
        "{} bounced: {:?}",
        bounced.len(),
        &bounced[..bounced.len().min(5)]
    );
    let both = wait_for(
        "both expansions with every connector STOPPED",
        Duration::from_secs(60),
        || {
            let (code, both) = w.get("/connectors?expand=status&expand=info");
            assert_eq!(code, 200);
            both.as_object()
                .is_some_and(|m| {
                    m.values()
                        .all(|e| e["status"]["connector"]["state"] == "STOPPED")
                })
                .then_some(both)
        },
    );
    let both = both.as_object().unwrap();
    assert_eq!(both.len(), CONNECTORS);
    for name in &names {
        let entry = &both[name.as_str()];
        assert_eq!(entry["info"]["name"], name.as_str(), "{entry}");
        assert_eq!(entry["info"]["config"], config(name), "{entry}");
        assert_eq!(entry["info"]["tasks"], json!([]), "{entry}");
        assert_eq!(entry["info"]["type"], "source", "{entry}");
        assert_eq!(entry["status"]["connector"]["state"], "STOPPED", "{entry}");
    }

    // A STOPPED connector needs no thread of its own.
    assert_eq!(threads_named(w.child.id(), "connector-"), 0);

    // One connector started: it reports RUNNING, and holds a thread only while one of its
    // calls runs (`start`, `taskConfigs`), none once they returned (issue #34).
    let (code, _) = w.send("PUT", "/connectors/c00007/resume", None);
    assert_eq!(code, 202);
    w.wait_state("c00007", 1, "RUNNING");
    wait_for(
        "the running connector's thread to end after its calls",
        Duration::from_secs(30),
        || (threads_named(w.child.id(), "connector-") == 0).then_some(()),
    );

    let status = w.terminate();
    assert!(status.success(), "clean exit: {status}\n{}", w.log_text());
}
