//! Input at the REST API that Connect answers in a particular way: connector names that need
//! escaping in a URL, JSON `null` config values, and client settings a connector overrides.

use crate::common;

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

fn raw_request(method: &str, url: &str, content_type: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut req = reqwest::blocking::Client::new()
        .request(method.parse().unwrap(), url)
        .body(body);
    if let Some(ct) = content_type {
        req = req.header("Content-Type", ct);
    }
    let r = req.send().unwrap();
    let status = r.status().as_u16();
    (
        status,
        serde_json::from_str(&r.text().unwrap()).unwrap_or(Value::Null),
    )
}

/// Bad bodies get Connect's error body and status, and change nothing: a wrong Content-Type
/// (415, as Jersey answers), a body over the size limit, JSON nested beyond the parser's
/// limit.
#[test]
fn bad_bodies_are_refused_with_connects_error_body_and_change_nothing() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let good = json!({"name": "ct", "config": {
        "connector.class": "FileStreamSource", "topic": "t",
        "file": dir.path().join("in.txt").display().to_string()}})
    .to_string();
    let url = format!("{}/connectors", w.url);

    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
    ] {
        let (code, v) = raw_request("POST", &url, Some(ct), good.clone().into_bytes());
        assert_eq!(code, 415, "{ct}: {v}");
        assert_eq!(
            v,
            json!({"error_code": 415, "message": "HTTP 415 Unsupported Media Type"})
        );
    }
    let (code, v) = raw_request(
        "PUT",
        &format!("{url}/ct/config"),
        Some("text/plain"),
        b"{}".to_vec(),
    );
    assert_eq!(code, 415, "{v}");
    assert_eq!(
        w.get("/connectors").1,
        json!([]),
        "a refused body created a connector"
    );

    // Over the size limit (16 MiB, `rest::forward::MAX_BODY`).
    let huge = json!({"name": "huge", "config": {
        "connector.class": "FileStreamSource", "topic": "t", "file": "x",
        "padding": "p".repeat(17 * 1024 * 1024)}})
    .to_string();
    let (code, v) = raw_request("POST", &url, Some("application/json"), huge.into_bytes());
    assert_eq!(code, 413, "{v}");
    assert_eq!(v["error_code"], 413, "{v}");
    assert!(v["message"].is_string(), "{v}");

    // Nested deeper than the JSON parser goes.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (code, v) = raw_request("POST", &url, Some("application/json"), deep.into_bytes());
    assert_eq!(code, 500, "{v}");
    assert_eq!(v["error_code"], 500, "{v}");

    // The worker is intact and still takes a good request.
    assert_eq!(w.get("/connectors").1, json!([]));
    let (code, _) = raw_request("POST", &url, Some("application/json"), good.into_bytes());
    assert_eq!(code, 201);
    let (code, _) = raw_request(
        "POST",
        &url,
        Some("application/json; charset=utf-8"),
        json!({"name": "ct2", "config": {"connector.class": "FileStreamSource", "topic": "t", "file": "x"}})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(code, 201, "a JSON Content-Type with parameters is accepted");
}

/// Concurrent creates of one name: exactly one 201, the others 409; PUT and DELETE racing on
/// one connector leave the list, the connector and its status agreeing.
#[test]
fn racing_creates_and_deletes_leave_one_consistent_state() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let file = dir.path().join("in.txt").display().to_string();
    let url = w.url.clone();
    for round in 0..3 {
        let name = format!("race-{round}");
        let body = json!({"name": name, "config": {
            "connector.class": "FileStreamSource", "topic": "t", "file": file}})
        .to_string();
        let codes: Vec<u16> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (url, body) = (url.clone(), body.clone());
                    s.spawn(move || {
                        raw_request(
                            "POST",
                            &format!("{url}/connectors"),
                            Some("application/json"),
                            body.into_bytes(),
                        )
                        .0
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(codes.iter().filter(|&&c| c == 201).count(), 1, "{codes:?}");
        assert_eq!(codes.iter().filter(|&&c| c == 409).count(), 7, "{codes:?}");
    }

    let config =
        json!({"connector.class": "FileStreamSource", "topic": "t", "file": file}).to_string();
    for _ in 0..10 {
        std::thread::scope(|s| {
            let put = s.spawn(|| {
                raw_request(
                    "PUT",
                    &format!("{url}/connectors/flip/config"),
                    Some("application/json"),
                    config.clone().into_bytes(),
                )
                .0
            });
            let del = s
                .spawn(|| raw_request("DELETE", &format!("{url}/connectors/flip"), None, vec![]).0);
            let (p, d) = (put.join().unwrap(), del.join().unwrap());
            assert!([200, 201].contains(&p), "PUT answered {p}");
            assert!([204, 404].contains(&d), "DELETE answered {d}");
        });
        let listed = w
            .get("/connectors")
            .1
            .as_array()
            .unwrap()
            .contains(&json!("flip"));
        let (code, _) = w.get("/connectors/flip");
        assert_eq!(
            listed,
            code == 200,
            "the list and GET /connectors/flip disagree"
        );
        if listed {
            w.wait_state("flip", 1, "RUNNING");
        } else {
            assert_eq!(w.get("/connectors/flip/status").0, 404);
        }
    }
}
