//! The offsets API (KIP-875) and topic creation by source connectors (KIP-158) on the real
//! broker: a FileStreamSource's position is read, moved back and reset through
//! `GET/PATCH/DELETE /connectors/{c}/offsets` (requests sent to a worker that is not the
//! leader, so they are forwarded), and the source reads again from there; a FileStreamSink's
//! consumer group offsets are reset and altered, and it consumes again from there; changes are
//! refused unless the connector is STOPPED, with Connect's messages. Source connectors create
//! their topics with their topic creation group's partitions and configs.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

fn file_lines(path: &Path) -> Vec<String> {
    terminated_lines(&std::fs::read(path).unwrap_or_default())
        .into_iter()
        .map(|l| String::from_utf8_lossy(&l).into_owned())
        .collect()
}

const NOT_STOPPED: &str = "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{c}/stop' endpoint";

fn not_stopped(c: &str) -> Value {
    json!({"error_code": 400, "message": NOT_STOPPED.replace("{c}", c)})
}

#[test]
fn source_offsets_are_read_moved_back_and_reset_through_the_leader() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("offsets-src");
    let a = DistributedWorker::start(dir.path(), "a", &bootstrap, &group, "");
    a.wait_joined();
    let b = DistributedWorker::start(dir.path(), "b", &bootstrap, &group, "");
    b.wait_joined();
    // Requests go to the worker that is not the leader: they are forwarded.
    let follower = wait_for("a leader", Duration::from_secs(60), || {
        let (_, wa) = a.get("/tributary/worker");
        let (_, wb) = b.get("/tributary/worker");
        match (wa["leader"].as_bool(), wb["leader"].as_bool()) {
            (Some(true), Some(false)) => Some(&b),
            (Some(false), Some(true)) => Some(&a),
            _ => None,
        }
    });
    let input = dir.path().join("input.txt");
    let lines: Vec<String> = (0..10).map(|i| format!("line-{i}")).collect();
    std::fs::write(
        &input,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let topic = unique("offsets-src-topic");
    let name = "src";
    let (code, body) = follower.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": name, "config": {
                "connector.class": "FileStreamSource",
                "file": input.to_str().unwrap(),
                "topic": topic,
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    wait_topic_end(&bootstrap, &topic, 10);
    let filename = input.to_str().unwrap();
    let end = std::fs::metadata(&input).unwrap().len();
    // The committed position appears once the offsets were flushed.
    let offsets = wait_for("the committed offsets", Duration::from_secs(30), || {
        let (code, body) = follower.get(&format!("/connectors/{name}/offsets"));
        assert_eq!(code, 200, "{body}");
        (body["offsets"][0]["offset"]["position"] == json!(end)).then_some(body)
    });
    assert_eq!(
        offsets,
        json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": end}}]})
    );
    // Not while it runs.
    let five = "line-0\nline-1\nline-2\nline-3\nline-4\n".len();
    let patch =
        json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": five}}]})
            .to_string();
    let (code, body) = follower.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(&patch),
    );
    assert_eq!((code, body), (400, not_stopped(name)));
    let (code, body) = follower.send("DELETE", &format!("/connectors/{name}/offsets"), None);
    assert_eq!((code, body), (400, not_stopped(name)));
    assert_eq!(
        follower
            .send("PUT", &format!("/connectors/{name}/stop"), None)
            .0,
        204
    );
    // Bad bodies and unknown connectors.
    let (code, body) = follower.send("PATCH", &format!("/connectors/{name}/offsets"), Some("{}"));
    assert_eq!(
        (code, body),
        (
            400,
            json!({"error_code": 400, "message": "Partitions / offsets need to be provided for an alter offsets request"})
        )
    );
    let (code, body) = follower.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(&json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": "5"}}]}).to_string()),
    );
    assert_eq!(
        (code, body),
        (
            500,
            json!({"error_code": 500, "message": "The value for the 'position' key in the offset is expected to be a Long value"})
        )
    );
    let (code, body) = follower.get("/connectors/nope/offsets");
    assert_eq!(
        (code, body),
        (
            404,
            json!({"error_code": 404, "message": "Connector nope not found"})
        )
    );
    let (code, body) = follower.send("DELETE", "/connectors/nope/offsets", None);
    assert_eq!(
        (code, body),
        (
            404,
            json!({"error_code": 404, "message": "Connector nope not found"})
        )
    );
    // Move the position back to the sixth line; resumed, the source reads from there.
    let (code, body) = follower.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(&patch),
    );
    assert_eq!(
        (code, body),
        (
            200,
            json!({"message": "The offsets for this connector have been altered successfully"})
        )
    );
    let (_, body) = follower.get(&format!("/connectors/{name}/offsets"));
    assert_eq!(body["offsets"][0]["offset"]["position"], json!(five));
    assert_eq!(
        follower
            .send("PUT", &format!("/connectors/{name}/resume"), None)
            .0,
        202
    );
    wait_topic_end(&bootstrap, &topic, 15);
    let values: Vec<String> = read_topic(&bootstrap, &topic)
        .into_iter()
        .map(|v| String::from_utf8(v).unwrap())
        .collect();
    assert_eq!(values[10..], lines[5..]);
    wait_for(
        "the position at the end again",
        Duration::from_secs(30),
        || {
            let (_, body) = follower.get(&format!("/connectors/{name}/offsets"));
            (body["offsets"][0]["offset"]["position"] == json!(end)).then_some(())
        },
    );
    // A reset: no offsets left; resumed, the source reads the whole file again.
    assert_eq!(
        follower
            .send("PUT", &format!("/connectors/{name}/stop"), None)
            .0,
        204
    );
    let (code, body) = follower.send("DELETE", &format!("/connectors/{name}/offsets"), None);
    assert_eq!(
        (code, body),
        (
            200,
            json!({"message": "The offsets for this connector have been reset successfully"})
        )
    );
    assert_eq!(
        follower.get(&format!("/connectors/{name}/offsets")).1,
        json!({"offsets": []})
    );
    assert_eq!(
        follower
            .send("PUT", &format!("/connectors/{name}/resume"), None)
            .0,
        202
    );
    wait_topic_end(&bootstrap, &topic, 25);
    let values: Vec<String> = read_topic(&bootstrap, &topic)
        .into_iter()
        .map(|v| String::from_utf8(v).unwrap())
        .collect();
    assert_eq!(values[15..], lines[..]);
}

#[test]
fn sink_offsets_are_reset_and_altered_in_the_consumer_group() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let topic = unique("offsets-sink-topic");
    create_topic(&bootstrap, &topic, 1);
    let values: Vec<String> = (0..5).map(|i| format!("v{i}")).collect();
    produce_values(&bootstrap, &topic, Some(0), &values);
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let out = dir.path().join("out.txt");
    let name = unique("sink");
    let (code, body) = w.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": name, "config": {
                "connector.class": "FileStreamSink",
                "file": out.to_str().unwrap(),
                "topics": topic,
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    wait_for("the sink's 5 lines", Duration::from_secs(60), || {
        (file_lines(&out).len() == 5).then_some(())
    });
    let committed = json!({"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]});
    wait_for(
        "the committed group offsets",
        Duration::from_secs(30),
        || (w.get(&format!("/connectors/{name}/offsets")).1 == committed).then_some(()),
    );
    let (code, body) = w.send("DELETE", &format!("/connectors/{name}/offsets"), None);
    assert_eq!((code, body), (400, not_stopped(&name)));
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/stop"), None).0,
        204
    );
    // A badly formed sink offset: Connect's 400.
    let (code, body) = w.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(&json!({"offsets": [{"partition": {"kafka_topic": topic}, "offset": {"kafka_offset": 1}}]}).to_string()),
    );
    assert_eq!(
        (code, body),
        (
            400,
            json!({"error_code": 400, "message": "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"})
        )
    );
    let (code, body) = w.send("DELETE", &format!("/connectors/{name}/offsets"), None);
    assert_eq!(
        (code, body),
        (
            200,
            json!({"message": "The offsets for this connector have been reset successfully"})
        )
    );
    assert_eq!(
        w.get(&format!("/connectors/{name}/offsets")).1,
        json!({"offsets": []})
    );
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/resume"), None).0,
        202
    );
    // Consumed again from the beginning.
    wait_for("the sink's 10 lines", Duration::from_secs(60), || {
        (file_lines(&out).len() == 10).then_some(())
    });
    assert_eq!(file_lines(&out)[5..], values[..]);
    wait_for(
        "the committed group offsets",
        Duration::from_secs(30),
        || (w.get(&format!("/connectors/{name}/offsets")).1 == committed).then_some(()),
    );
    // Altered to offset 3 (given as text, which Connect accepts): records 3 and 4 again.
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/stop"), None).0,
        204
    );
    let (code, body) = w.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(&json!({"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": "0"}, "offset": {"kafka_offset": "3"}}]}).to_string()),
    );
    assert_eq!(
        (code, body),
        (
            200,
            json!({"message": "The offsets for this connector have been altered successfully"})
        )
    );
    assert_eq!(
        w.get(&format!("/connectors/{name}/offsets")).1,
        json!({"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 3}}]})
    );
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/resume"), None).0,
        202
    );
    wait_for("the sink's 12 lines", Duration::from_secs(60), || {
        (file_lines(&out).len() == 12).then_some(())
    });
    assert_eq!(file_lines(&out)[10..], values[3..]);
}

/// The partition count and the given configs of a topic, as the broker describes it.
fn describe_topic(bootstrap: &str, topic: &str, keys: &[&str]) -> (usize, Vec<Option<String>>) {
    use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let config = {
        let mut c = rdkafka::ClientConfig::new();
        c.set("bootstrap.servers", bootstrap);
        c
    };
    let consumer: BaseConsumer = config.create().unwrap();
    let md = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    let partitions = md.topics()[0].partitions().len();
    let admin: AdminClient<DefaultClientContext> = config.create().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let described = rt
        .block_on(admin.describe_configs([&ResourceSpecifier::Topic(topic)], &AdminOptions::new()))
        .unwrap();
    let resource = described.into_iter().next().unwrap().unwrap();
    let values = keys
        .iter()
        .map(|k| resource.get(k).and_then(|e| e.value.clone()))
        .collect();
    (partitions, values)
}

#[test]
fn source_connectors_create_their_topics_with_their_groups_settings() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "a\nb\n").unwrap();
    let base = unique("tc");
    let start = |name: &str, topic: &str| {
        let (code, body) = w.send(
            "POST",
            "/connectors",
            Some(
                &json!({"name": name, "config": {
                    "connector.class": "FileStreamSource",
                    "file": input.to_str().unwrap(),
                    "topic": topic,
                    "topic.creation.groups": "zipped",
                    "topic.creation.default.replication.factor": "1",
                    "topic.creation.default.partitions": "2",
                    "topic.creation.default.retention.ms": "3600000",
                    "topic.creation.zipped.include": ".*-zipped",
                    "topic.creation.zipped.partitions": "3",
                    "topic.creation.zipped.compression.type": "gzip",
                }})
                .to_string(),
            ),
        );
        assert_eq!(code, 201, "{body}");
    };
    // The broker would create a missing topic with one partition: these counts show who did.
    let zipped = format!("{base}-zipped");
    let plain = format!("{base}-plain");
    start(&format!("{base}-a"), &zipped);
    start(&format!("{base}-b"), &plain);
    for topic in [&zipped, &plain] {
        wait_for("both lines in the topic", Duration::from_secs(60), || {
            (read_topic_all(&bootstrap, topic) == 2).then_some(())
        });
    }
    // A group's own topic configs only: the default group's `retention.ms` is not inherited.
    let (partitions, configs) =
        describe_topic(&bootstrap, &zipped, &["compression.type", "retention.ms"]);
    assert_eq!((partitions, configs[0].as_deref()), (3, Some("gzip")));
    assert_ne!(configs[1].as_deref(), Some("3600000"));
    assert_eq!(
        describe_topic(&bootstrap, &plain, &["compression.type", "retention.ms"]),
        (2, vec![Some("producer".into()), Some("3600000".into())])
    );
    // Settings Connect refuses: created (Connect does not check them in validation), then the
    // connector fails with Connect's message.
    let bad = format!("{base}-bad");
    let (code, body) = w.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": bad, "config": {
                "connector.class": "FileStreamSource",
                "file": input.to_str().unwrap(),
                "topic": format!("{base}-never"),
                "topic.creation.default.partitions": "3",
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let status = wait_for("the connector to fail", Duration::from_secs(30), || {
        let (_, s) = w.get(&format!("/connectors/{bad}/status"));
        (s["connector"]["state"] == "FAILED").then_some(s)
    });
    let trace = status["connector"]["trace"].as_str().unwrap();
    assert!(
        trace.contains("Missing required configuration \"topic.creation.default.replication.factor\" which has no default value."),
        "{trace}"
    );
    let (code, body) = w.send(
        "PUT",
        "/connector-plugins/FileStreamSource/config/validate",
        Some(
            &json!({
                "connector.class": "FileStreamSource",
                "topic": "t",
                "name": "v",
                "topic.creation.default.partitions": "3",
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["error_count"], 0, "{body}");
}

/// How many records a topic holds over all its partitions.
fn read_topic_all(bootstrap: &str, topic: &str) -> usize {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let Ok(md) = consumer.fetch_metadata(Some(topic), Duration::from_secs(5)) else {
        return 0;
    };
    md.topics()
        .first()
        .map(|t| {
            t.partitions()
                .iter()
                .map(|p| {
                    consumer
                        .fetch_watermarks(topic, p.id(), Duration::from_secs(5))
                        .map(|(l, h)| (h - l) as usize)
                        .unwrap_or(0)
                })
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_standalone_source_is_moved_back_in_its_offsets_file() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "one\ntwo\nthree\n").unwrap();
    let topic = unique("offsets-standalone");
    let name = "file-src";
    let connector = dir.path().join("source.properties");
    std::fs::write(
        &connector,
        format!(
            "name={name}\nconnector.class=FileStreamSource\nfile={}\ntopic={topic}\n",
            input.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[connector.to_str().unwrap()]);
    wait_topic_end(&bootstrap, &topic, 3);
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/stop"), None).0,
        204
    );
    let filename = input.to_str().unwrap();
    assert_eq!(
        w.get(&format!("/connectors/{name}/offsets")).1,
        json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": 14}}]})
    );
    let (code, body) = w.send(
        "PATCH",
        &format!("/connectors/{name}/offsets"),
        Some(
            &json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": 4}}]})
                .to_string(),
        ),
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        w.send("PUT", &format!("/connectors/{name}/resume"), None).0,
        202
    );
    wait_topic_end(&bootstrap, &topic, 5);
    let values: Vec<Vec<u8>> = read_topic(&bootstrap, &topic);
    assert_eq!(values[3..], [b"two".to_vec(), b"three".to_vec()]);
}
