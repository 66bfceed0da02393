//! Records Kafka refuses as too large (KAFKA-16087), on a real broker: a record is skipped
//! under `errors.tolerance=all` only for its own failure, the good records that shared a batch
//! the broker refused are sent again (never dropped), the task keeps running, and the
//! committed source offsets cover only records written or deliberately skipped. With
//! `errors.tolerance=none` the task fails at the first record too large, and nothing after it
//! is committed.
//!
//! The limit is either the producer's (`producer.override.max.request.size`: librdkafka
//! refuses the record when it is sent) or the topic's (`max.message.bytes`: the broker
//! refuses the batch holding it, with whatever good records shared it).

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

/// Lines of the input file.
const LINES: usize = 300;
/// Every tenth line, starting with line 5, is this long: over the 20,000-byte limit.
const BIG: usize = 30_000;
const LIMIT: &str = "20000";

fn is_big(i: usize) -> bool {
    i % 10 == 5
}

fn line(i: usize) -> String {
    if is_big(i) {
        format!("big-{i:03}-{}", "x".repeat(BIG - 8))
    } else {
        format!("line-{i:03}")
    }
}

/// Where the limit comes from.
#[derive(Clone, Copy)]
enum Limit {
    /// `producer.override.max.request.size` (librdkafka's `message.max.bytes`).
    Producer,
    /// The topic's `max.message.bytes` (the broker refuses the batch).
    Topic,
}

struct Run {
    worker: StandaloneWorker,
    bootstrap: String,
    topic: String,
    /// The input's length in bytes (the position after its last line).
    file_len: u64,
    _dir: TestDir,
}

/// Writes the input, creates the topic (with the topic limit when asked) and starts a
/// FileStreamSource with `tolerance` and the limit.
fn start(limit: Limit, tolerance: &str) -> Option<Run> {
    let bootstrap = kafka()?;
    let dir = test_dir();
    let input = dir.path().join("in.txt");
    let text: String = (0..LINES).map(|i| format!("{}\n", line(i))).collect();
    std::fs::write(&input, &text).unwrap();
    let topic = unique("too-large");
    match limit {
        Limit::Producer => create_topic(&bootstrap, &topic, 1),
        Limit::Topic => {
            create_topic_with_configs(&bootstrap, &topic, 1, &[("max.message.bytes", LIMIT)])
        }
    }
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let mut config = json!({
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": input,
        "topic": topic,
        "errors.tolerance": tolerance,
        "errors.log.enable": "true",
    });
    if let Limit::Producer = limit {
        config["producer.override.max.request.size"] = json!(LIMIT);
    }
    let body = json!({"name": "src", "config": config});
    let (code, created) = worker.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{created}");
    Some(Run {
        worker,
        bootstrap,
        topic,
        file_len: text.len() as u64,
        _dir: dir,
    })
}

/// The committed `position` of the file, once it equals `expected` (waited for: offsets are
/// committed every second).
fn wait_committed(run: &Run, expected: u64) {
    wait_for(
        &format!("the committed position {expected}"),
        Duration::from_secs(60),
        || {
            let (code, body) = run.worker.get("/connectors/src/offsets");
            (code == 200 && body["offsets"][0]["offset"]["position"] == json!(expected))
                .then_some(())
        },
    );
}

fn tolerated(limit: Limit) {
    let Some(run) = start(limit, "all") else {
        return;
    };
    let good: Vec<Vec<u8>> = (0..LINES)
        .filter(|&i| !is_big(i))
        .map(|i| line(i).into_bytes())
        .collect();
    assert_eq!(good.len(), 270);
    wait_topic_end(&run.bootstrap, &run.topic, good.len() as i64);
    // Everything polled is written or skipped once the whole file is committed.
    wait_committed(&run, run.file_len);
    let written = read_topic(&run.bootstrap, &run.topic);
    assert!(
        written == good,
        "the 270 good lines in order, and only them; got {} records: {:?}",
        written.len(),
        written
            .iter()
            .map(|r| String::from_utf8_lossy(&r[..r.len().min(12)]).into_owned())
            .collect::<Vec<_>>()
    );
    assert_eq!(topic_end(&run.bootstrap, &run.topic), 270);
    let status = run.worker.wait_state("src", 1, "RUNNING");
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    // Each skipped record was reported as a produce failure.
    let log = run.worker.log_text();
    assert!(
        log.contains("KAFKA_PRODUCE"),
        "the skipped records are in the error log: {log}"
    );
}

fn not_tolerated(limit: Limit) {
    let Some(run) = start(limit, "none") else {
        return;
    };
    // The connector stays RUNNING; its task fails.
    let status = wait_for("the task to fail", Duration::from_secs(60), || {
        let (_, body) = run.worker.get("/connectors/src/status");
        (body["tasks"][0]["state"] == "FAILED").then_some(body)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("MessageSizeTooLarge"),
        "the task fails naming the refusal: {status}"
    );
    // Lines 0-4 were written (even when they shared the refused batch); the committed
    // position is the start of line 5, the first record too large: nothing after it.
    let before_big: u64 = (0..5).map(|i| line(i).len() as u64 + 1).sum();
    wait_committed(&run, before_big);
    let written = read_topic(&run.bootstrap, &run.topic);
    let first: Vec<Vec<u8>> = (0..5).map(|i| line(i).into_bytes()).collect();
    assert!(
        written.len() >= 5 && written[..5] == first[..],
        "the records before the first big line are written, in order: {:?}",
        written
            .iter()
            .map(|r| String::from_utf8_lossy(&r[..r.len().min(12)]).into_owned())
            .collect::<Vec<_>>()
    );
    assert!(
        written.iter().all(|r| r.len() < BIG),
        "no record too large is written"
    );
}

/// `errors.tolerance=all` and `producer.override.max.request.size`: exactly the 270 good lines
/// arrive, in order, the task keeps running, and the whole file is committed.
#[test]
fn records_over_max_request_size_are_skipped_alone_under_tolerance_all() {
    tolerated(Limit::Producer);
}

/// `errors.tolerance=all` and a topic whose `max.message.bytes` refuses the batches holding
/// the big lines: the good lines of those batches are sent again and all 270 arrive, in order.
#[test]
fn good_records_of_a_batch_the_broker_refused_are_sent_again_under_tolerance_all() {
    tolerated(Limit::Topic);
}

/// `errors.tolerance=none` and `producer.override.max.request.size`: the task fails at the
/// first big line naming MessageSizeTooLarge; nothing after it is committed.
#[test]
fn a_record_over_max_request_size_fails_the_task_under_tolerance_none() {
    not_tolerated(Limit::Producer);
}

/// `errors.tolerance=none` and the topic's `max.message.bytes`: the good lines before the
/// first big one are written although they shared its refused batch; the task fails naming
/// MessageSizeTooLarge and nothing after the big line is committed.
#[test]
fn a_record_the_broker_refuses_alone_fails_the_task_under_tolerance_none() {
    not_tolerated(Limit::Topic);
}
