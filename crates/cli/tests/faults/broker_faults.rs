//! The broker stopped and started again under load: every worker and task recovers by itself,
//! and no line is lost (duplicates, if any, are exact copies of delivered lines).
//!
//! The test runs its own broker (scripts/kafka on free ports, data in the test directory), so
//! stopping it touches no other test; it needs the broker jars `scripts/kafka fetch` caches.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::faults::OwnBroker;
use common::*;
use serde_json::json;

fn append(path: &Path, from: usize, to: usize) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for i in from..to {
        writeln!(f, "line-{i:06}").unwrap();
    }
}

/// Waits until `out` holds every line `line-000000`…`line-{n-1}`; only exact copies may be
/// extra. Returns the number of duplicates.
fn wait_lines(what: &str, out: &Path, n: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        let text = std::fs::read_to_string(out).unwrap_or_default();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for l in text.lines() {
            let known = l
                .strip_prefix("line-")
                .and_then(|d| d.parse::<usize>().ok())
                .is_some_and(|i| i < n && l.len() == 11);
            assert!(known, "{what}: a line that was never written: {l:?}");
            *counts.entry(l).or_default() += 1;
        }
        if counts.len() == n {
            return counts.values().map(|c| c - 1).sum();
        }
        if std::time::Instant::now() > deadline {
            panic!("{what}: {} of {n} lines arrived", counts.len());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_broker_restart_under_load_loses_nothing_and_needs_no_hand() {
    // The shared broker is not used, but its presence says the environment has Kafka.
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let broker = OwnBroker::start(d, "");
    let bootstrap = broker.bootstrap();
    let group = unique("brokerfault");
    let topic = format!("{group}-lines");
    let (input, out) = (d.join("in.txt"), d.join("out.txt"));
    append(&input, 0, 2_000);

    let w = DistributedWorker::start(
        d,
        "w1",
        &bootstrap,
        &group,
        "scheduled.rebalance.max.delay.ms=5000\n",
    );
    w.wait_joined();
    for (name, config) in [
        (
            "src",
            json!({"connector.class": "FileStreamSource", "file": input, "topic": topic}),
        ),
        (
            "sink",
            json!({"connector.class": "FileStreamSink", "file": out, "topics": topic}),
        ),
    ] {
        let (code, v) = w.send(
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(&config.to_string()),
        );
        assert_eq!(code, 201, "{name}: {v}");
    }
    w.wait_state("src", 1, "RUNNING");
    w.wait_state("sink", 1, "RUNNING");
    wait_lines("before the broker stops", &out, 2_000);

    // The broker goes away while lines keep coming, and comes back.
    broker.run("stop");
    append(&input, 2_000, 4_000);
    broker.run("start");
    append(&input, 4_000, 5_000);
    let dups = wait_lines("after the broker came back", &out, 5_000);
    eprintln!("broker restart: 5000 lines delivered, {dups} duplicates");
    w.wait_state("src", 1, "RUNNING");
    w.wait_state("sink", 1, "RUNNING");

    // The herder works again too: a connector created now reads the whole topic.
    let out2 = d.join("out2.txt");
    let config = json!({"connector.class": "FileStreamSink", "file": out2, "topics": topic});
    wait_for(
        "creating a connector after the restart",
        Duration::from_secs(120),
        || {
            let (code, _) = w.send("PUT", "/connectors/sink2/config", Some(&config.to_string()));
            (code == 201).then_some(())
        },
    );
    w.wait_state("sink2", 1, "RUNNING");
    wait_lines("a sink created after the restart", &out2, 5_000);
}
