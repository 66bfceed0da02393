//! Input at the REST API that Connect answers in a particular way: connector names that need
//! escaping in a URL, JSON `null` config values, and client settings a connector overrides.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// POST with the raw response (status, headers, JSON body).
fn post_raw(url: &str, body: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    let r = reqwest::blocking::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let v = serde_json::from_str(&r.text().unwrap()).unwrap_or(Value::Null);
    (status, headers, v)
}

#[test]
fn location_of_a_created_connector_is_percent_encoded_and_leads_to_it() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    for (name, encoded) in [
        ("a?x=1", "a%3Fx=1"),
        ("with space", "with%20space"),
        ("100%", "100%25"),
        ("hash#tag", "hash%23tag"),
        ("café", "caf%C3%A9"),
    ] {
        let body = json!({"name": name, "config": {
            "connector.class": "FileStreamSource",
            "topic": unique("loc"),
            "file": dir.path().join("in.txt").display().to_string(),
        }})
        .to_string();
        let (code, headers, v) = post_raw(&format!("{}/connectors", w.url), &body);
        assert_eq!(code, 201, "{name}: {v}");
        let location = headers["location"].to_str().unwrap().to_string();
        assert_eq!(
            location,
            format!("{}/connectors/{encoded}", w.url),
            "{name}"
        );
        let r = reqwest::blocking::get(&location).unwrap();
        assert_eq!(r.status().as_u16(), 200, "GET {location}");
        let got: Value = r.json().unwrap();
        assert_eq!(got["name"], name);
        // PUT /connectors/{c}/config creating a connector answers the same way.
        let put_name = format!("{name}-put");
        let r = reqwest::blocking::Client::new()
            .put(format!(
                "{}/connectors/{}/config",
                w.url,
                percent_encode(&put_name)
            ))
            .header("Content-Type", "application/json")
            .body(
                json!({"connector.class": "FileStreamSource", "topic": "t",
                       "file": dir.path().join("in.txt").display().to_string()})
                .to_string(),
            )
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 201);
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let got: Value = reqwest::blocking::get(&location).unwrap().json().unwrap();
        assert_eq!(got["name"], put_name.as_str());
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const NULL_ERROR: &str = "Null value can not be supplied as the configuration value.";

#[test]
fn a_null_config_value_is_an_error_on_its_key_and_nothing_is_stored() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let file = dir.path().join("in.txt").display().to_string();
    let config = json!({
        "name": "nulls",
        "connector.class": "FileStreamSource",
        "topic": "t",
        "file": file,
        "foo.bar": null,
    });

    let (code, v) = w.send(
        "PUT",
        "/connector-plugins/FileStreamSource/config/validate",
        Some(&config.to_string()),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["error_count"], 1, "{v}");
    let entries: Vec<&Value> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "foo.bar")
        .collect();
    assert_eq!(entries.len(), 1, "{v}");
    assert_eq!(entries[0]["value"]["errors"], json!([NULL_ERROR]));

    // A null on a key the framework defines is reported on that key.
    let mut on_framework = config.clone();
    on_framework.as_object_mut().unwrap().remove("foo.bar");
    on_framework["tasks.max"] = Value::Null;
    let (_, v) = w.send(
        "PUT",
        "/connector-plugins/FileStreamSource/config/validate",
        Some(&on_framework.to_string()),
    );
    let tasks_max: Vec<&Value> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "tasks.max")
        .collect();
    assert_eq!(tasks_max.len(), 1, "{v}");
    assert_eq!(tasks_max[0]["value"]["errors"], json!([NULL_ERROR]), "{v}");

    let body = json!({"name": "nulls", "config": config}).to_string();
    let (code, v) = w.send("POST", "/connectors", Some(&body));
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["error_code"], 400);
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "Connector configuration is invalid and contains the following 1 error(s):"
        ),
        "{msg}"
    );
    assert!(msg.contains(NULL_ERROR), "{msg}");
    assert_eq!(w.get("/connectors/nulls").0, 404, "the config was stored");

    let (code, v) = w.send("PUT", "/connectors/nulls/config", Some(&config.to_string()));
    assert_eq!(code, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains(NULL_ERROR));
    assert_eq!(w.get("/connectors/nulls").0, 404, "the config was stored");
}

/// `consumer.override.metadata.max.age.ms` reaches librdkafka as its metadata refresh period,
/// so a topic created after a `topics.regex` sink started is consumed within seconds, not after
/// librdkafka's default 5 minutes.
#[test]
fn a_regex_sink_sees_a_new_topic_within_its_metadata_max_age() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let prefix = unique("regex").replace('-', "_");
    let out = dir.path().join("out.txt");
    let first = format!("{prefix}.first");
    create_topic(&bootstrap, &first, 1);
    produce_values(&bootstrap, &first, None, &["early-1".to_string()]);
    let body = json!({"name": "regex-sink", "config": {
        "connector.class": "FileStreamSink",
        "topics.regex": format!("{prefix}\\..*"),
        "file": out.display().to_string(),
        "consumer.override.metadata.max.age.ms": "2000",
    }})
    .to_string();
    assert_eq!(w.send("POST", "/connectors", Some(&body)).0, 201);
    w.wait_state("regex-sink", 1, "RUNNING");
    // The consumer has joined its group and consumes before the second topic exists.
    wait_for(
        "the record of the first topic",
        Duration::from_secs(60),
        || {
            std::fs::read_to_string(&out)
                .ok()
                .filter(|s| s.contains("early-1"))
                .map(|_| ())
        },
    );
    let topic = format!("{prefix}.later");
    create_topic(&bootstrap, &topic, 1);
    produce_values(&bootstrap, &topic, None, &["late-1".to_string()]);
    // librdkafka's default refresh period is 300 s; the override makes it 2 s.
    wait_for(
        "the record of a topic created after the sink started",
        Duration::from_secs(60),
        || {
            std::fs::read_to_string(&out)
                .ok()
                .filter(|s| s.contains("late-1"))
                .map(|_| ())
        },
    );
}
