//! The standalone worker against a real Kafka broker: FileStream pipelines over generated files
//! (and the loghub logs when present), recovery after SIGKILL, the REST API, failure isolation and bad input.

use crate::common;

use std::io::Write;
use std::time::Duration;

use common::*;
use serde_json::json;

fn source_props(name: &str, file: &std::path::Path, topic: &str) -> String {
    format!(
        "name={name}\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\n",
        file.display()
    )
}

fn sink_props(name: &str, file: &std::path::Path, topic: &str) -> String {
    format!("name={name}\nconnector.class=org.apache.kafka.connect.file.FileStreamSinkConnector\ntasks.max=1\nfile={}\ntopics={topic}\n", file.display())
}

fn count_lines(path: &std::path::Path) -> usize {
    std::fs::read(path)
        .map(|d| d.iter().filter(|&&b| b == b'\n').count())
        .unwrap_or(0)
}

/// Every input goes through FileStreamSource → Kafka → FileStreamSink and comes out line for
/// line, with no stray `\r`: generated fixtures with every kind of line ending (CR, CRLF,
/// mixed, unterminated, UTF-8, long lines) and, when present, the loghub sample logs. A last
/// line without a terminator is held by FileStreamSource (it tails the file), so the test then
/// finishes each file the way a writer would and checks that the line arrives too.
#[test]
fn files_round_trip_line_for_line() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let mut inputs: Vec<(String, Vec<u8>)> = corpus::line_ending_fixtures();
    for path in corpus::loghub_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        inputs.push((name, std::fs::read(&path).unwrap()));
    }
    let mut connector_files = Vec::new();
    let mut cases = Vec::new();
    for (i, (name, data)) in inputs.iter().enumerate() {
        let input = dir.path().join(name);
        std::fs::write(&input, data).unwrap();
        let output = dir.path().join(format!("out-{i}.txt"));
        let topic = unique(&format!("lines-{i}"));
        std::fs::write(
            dir.path().join(format!("src-{i}.properties")),
            source_props(&format!("src-{i}"), &input, &topic),
        )
        .unwrap();
        std::fs::write(
            dir.path().join(format!("sink-{i}.properties")),
            sink_props(&format!("sink-{i}"), &output, &topic),
        )
        .unwrap();
        connector_files.push(format!("src-{i}.properties"));
        connector_files.push(format!("sink-{i}.properties"));
        cases.push((input, output));
    }
    let refs: Vec<&str> = connector_files.iter().map(String::as_str).collect();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &refs);

    for (input, output) in &cases {
        let data = std::fs::read(input).unwrap();
        // A trailing lone `\r` may be the first half of a `\r\n`: the source may hold it.
        let held = usize::from(data.ends_with(b"\r"));
        let expected = terminated_lines(&data).len() - held;
        wait_for(
            &format!("{expected} lines in {}", output.display()),
            Duration::from_secs(120),
            || (count_lines(output) >= expected).then_some(()),
        );
        // Finish the last line, as a writer appending to the log would.
        let finish: &[u8] = if data.ends_with(b"\r") {
            b"\n"
        } else if data.ends_with(b"\n") || data.is_empty() {
            b""
        } else {
            b"\r\n"
        };
        std::fs::OpenOptions::new()
            .append(true)
            .open(input)
            .unwrap()
            .write_all(finish)
            .unwrap();
    }
    for (input, output) in &cases {
        let expected = terminated_lines(&std::fs::read(input).unwrap());
        wait_for(
            &format!("all lines of {}", input.display()),
            Duration::from_secs(60),
            || (count_lines(output) >= expected.len()).then_some(()),
        );
        let out = std::fs::read(output).unwrap();
        assert!(
            !out.contains(&b'\r'),
            "no stray \\r in {}",
            output.display()
        );
        let got: Vec<Vec<u8>> = out
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>();
        let got = &got[..got.len() - 1];
        assert_eq!(got.len(), expected.len(), "{}", input.display());
        for (n, (a, b)) in got.iter().zip(expected.iter()).enumerate() {
            assert_eq!(a, b, "line {n} of {}", input.display());
        }
    }
    drop(worker);
}

/// SIGKILL mid-file, restart: every line reaches Kafka, and the only duplicates are the records
/// produced after the last offset flush (exactly the lines between the committed position and
/// what Kafka had when the worker died).
#[test]
fn sigkill_mid_file_delivers_every_line_with_duplicates_only_after_the_last_flush() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    // A large log-like input, numbered so every line is unique.
    let input = dir.path().join("input.log");
    let n_lines = 300_000;
    let data = corpus::synthetic_log(n_lines, 1);
    std::fs::write(&input, &data).unwrap();
    let lines = terminated_lines(&data);
    let topic = unique("kill");
    std::fs::write(
        dir.path().join("src.properties"),
        source_props("kill-src", &input, &topic),
    )
    .unwrap();
    let extra =
        "offset.flush.interval.ms=100\nproducer.linger.ms=20\nproducer.batch.num.messages=500";
    let mut worker = StandaloneWorker::start(dir.path(), &bootstrap, extra, &["src.properties"]);
    // Kill once some, but not all, lines are in Kafka and an offset has been flushed.
    wait_for(
        "a partially delivered file",
        Duration::from_secs(120),
        || {
            let end = topic_end(&bootstrap, &topic);
            (end > 20_000 && std::fs::metadata(dir.path().join("offsets")).is_ok()).then_some(())
        },
    );
    worker.kill();
    let offsets = std::fs::read(dir.path().join("offsets")).unwrap();
    let entries = tributary_runtime::storage::offset_file_format::decode(&offsets).unwrap();
    assert_eq!(entries.len(), 1);
    let key: serde_json::Value = serde_json::from_slice(&entries[0].0).unwrap();
    assert_eq!(
        key,
        json!(["kill-src", {"filename": input.display().to_string()}])
    );
    let value: serde_json::Value = serde_json::from_slice(entries[0].1.as_ref().unwrap()).unwrap();
    let position = value["position"].as_u64().unwrap() as usize;
    let committed_lines = terminated_lines(&data[..position]).len();
    let in_kafka_at_kill = read_topic(&bootstrap, &topic).len();
    assert!(
        in_kafka_at_kill < n_lines,
        "the worker was killed mid-file ({in_kafka_at_kill} of {n_lines})"
    );
    assert!(
        committed_lines <= in_kafka_at_kill,
        "offsets are committed only for acknowledged records"
    );

    let _worker = StandaloneWorker::spawn(dir.path(), &["src.properties"]);
    let expected_total = in_kafka_at_kill + (n_lines - committed_lines);
    wait_for(
        &format!("{expected_total} records in {topic}"),
        Duration::from_secs(180),
        || (topic_end(&bootstrap, &topic) as usize >= expected_total).then_some(()),
    );
    let records = read_topic(&bootstrap, &topic);
    assert_eq!(
        records.len(),
        expected_total,
        "no record lost or added beyond the unflushed ones"
    );
    // Before the kill: lines 0..in_kafka_at_kill in order; after: resumed at the committed line.
    for (i, r) in records[..in_kafka_at_kill].iter().enumerate() {
        assert_eq!(r, &lines[i], "record {i} (before the kill)");
    }
    for (i, r) in records[in_kafka_at_kill..].iter().enumerate() {
        assert_eq!(
            r,
            &lines[committed_lines + i],
            "record {} (after the restart)",
            in_kafka_at_kill + i
        );
    }
    let duplicates = in_kafka_at_kill - committed_lines;
    eprintln!("killed with {in_kafka_at_kill} records in Kafka, {committed_lines} committed: {duplicates} duplicates");
}

/// Connect's REST API in standalone mode: codes and bodies.
#[test]
fn rest_api_standalone() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a\nb\n").unwrap();
    let topic = unique("rest");

    let (code, root) = worker.get("/");
    assert_eq!(code, 200);
    assert!(
        root["kafka_cluster_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{root}"
    );
    assert!(root["version"].is_string() && root["commit"].is_string());

    assert_eq!(worker.get("/connectors"), (200, json!([])));
    let create = json!({"name": "src", "config": {"connector.class": "FileStreamSource", "file": input, "topic": topic, "tasks.max": 1}});
    let (code, body) = worker.send("POST", "/connectors", Some(&create.to_string()));
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["name"], "src");
    assert_eq!(body["type"], "source");
    assert_eq!(body["config"]["tasks.max"], "1");
    assert_eq!(body["config"]["name"], "src");
    let (code, body) = worker.send("POST", "/connectors", Some(&create.to_string()));
    assert_eq!(
        (code, body),
        (
            409,
            json!({"error_code": 409, "message": "Connector src already exists"})
        )
    );

    let status = worker.wait_state("src", 1, "RUNNING");
    assert_eq!(status["type"], "source");
    assert_eq!(status["tasks"][0]["id"], 0);
    assert!(status["connector"]["worker_id"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1:"));
    assert_eq!(
        worker.get("/connectors/src/tasks/0/status").1["state"],
        "RUNNING"
    );
    let (code, tasks) = worker.get("/connectors/src/tasks");
    assert_eq!(code, 200);
    assert_eq!(tasks[0]["id"], json!({"connector": "src", "task": 0}));
    assert_eq!(
        tasks[0]["config"]["task.class"],
        "org.apache.kafka.connect.file.FileStreamSourceTask"
    );
    assert_eq!(
        worker.get("/connectors/src/config").1["topic"],
        topic.as_str()
    );
    let (code, info) = worker.get("/connectors/src");
    assert_eq!(code, 200);
    assert_eq!(info["tasks"], json!([{"connector": "src", "task": 0}]));

    let (code, expanded) = worker.get("/connectors?expand=status&expand=info");
    assert_eq!(code, 200);
    assert_eq!(expanded["src"]["status"]["connector"]["state"], "RUNNING");
    assert_eq!(expanded["src"]["info"]["name"], "src");

    // Pause / resume.
    assert_eq!(worker.send("PUT", "/connectors/src/pause", None).0, 202);
    worker.wait_state("src", 1, "PAUSED");
    assert_eq!(worker.send("PUT", "/connectors/src/resume", None).0, 202);
    worker.wait_state("src", 1, "RUNNING");

    // Restarts: legacy 204, KIP-745 202 with a preview.
    assert_eq!(worker.send("POST", "/connectors/src/restart", None).0, 204);
    let (code, plan) = worker.send(
        "POST",
        "/connectors/src/restart?includeTasks=true&onlyFailed=false",
        None,
    );
    assert_eq!(code, 202, "{plan}");
    assert_eq!(plan["connector"]["state"], "RESTARTING");
    assert_eq!(plan["tasks"][0]["state"], "RESTARTING");
    worker.wait_state("src", 1, "RUNNING");
    assert_eq!(
        worker
            .send("POST", "/connectors/src/tasks/0/restart", None)
            .0,
        204
    );
    assert_eq!(
        worker.send("POST", "/connectors/src/tasks/7/restart", None),
        (
            404,
            json!({"error_code": 404, "message": "Unknown task: src-7"})
        )
    );

    // Update through PUT (200) and create through PUT (201).
    let mut cfg = create["config"].clone();
    cfg["batch.size"] = json!("10");
    let (code, body) = worker.send("PUT", "/connectors/src/config", Some(&cfg.to_string()));
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["config"]["batch.size"], "10");
    let sink_cfg = json!({"connector.class": "FileStreamSink", "topics": topic, "file": dir.path().join("out.txt")});
    let (code, _) = worker.send("PUT", "/connectors/snk/config", Some(&sink_cfg.to_string()));
    assert_eq!(code, 201);
    wait_for("the sink output", Duration::from_secs(60), || {
        (count_lines(&dir.path().join("out.txt")) >= 2).then_some(())
    });

    // Errors.
    let (code, body) = worker.send(
        "PUT",
        "/connectors/other/config",
        Some(&json!({"name": "x", "connector.class": "FileStreamSink"}).to_string()),
    );
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "Connector name configuration (x) doesn't match connector name in the URL (other)"
    );
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "bad", "config": {"connector.class": "FileStreamSink"}}).to_string()),
    );
    assert_eq!(code, 400);
    let msg = body["message"].as_str().unwrap();
    assert!(msg.starts_with("Connector configuration is invalid and contains the following 2 error(s):\nMust configure one of topics or topics.regex"), "{msg}");
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "bad", "config": {"connector.class": "NoSuchConnector"}}).to_string()),
    );
    // Connect 4.1 answers an unknown connector class on create with 400.
    assert_eq!(code, 400);
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.contains("NoSuchConnector")
            && msg.contains("org.apache.kafka.connect.file.FileStreamSinkConnector"),
        "{msg}"
    );
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "bad", "config": {"tasks.max": "1"}}).to_string()),
    );
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("contains no connector type"),
        "{body}"
    );
    let (code, body) = worker.send("POST", "/connectors", Some("{not json"));
    assert_eq!(code, 500);
    assert_eq!(body["error_code"], 500);
    // A transformation class that does not exist is refused naming its key.
    let (code, body) = worker.send("POST", "/connectors", Some(&json!({"name": "smt", "config": {"connector.class": "FileStreamSink", "topics": "t", "transforms": "mask", "transforms.mask.type": "com.example.NoSuchTransformation"}}).to_string()));
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Invalid value com.example.NoSuchTransformation for configuration transforms.mask.type: Class com.example.NoSuchTransformation could not be found."),
        "{body}"
    );
    // Connector-level converters are checked at create time, naming the key.
    let (code, body) = worker.send("POST", "/connectors", Some(&json!({"name": "conv", "config": {"connector.class": "FileStreamSink", "topics": "t", "value.converter": "Jsn"}}).to_string()));
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("configuration value.converter"),
        "{body}"
    );
    let (code, body) = worker.send("POST", "/connectors", Some(&json!({"name": "conv", "config": {"connector.class": "FileStreamSink", "topics": "t", "value.converter": "JsonConverter", "value.converter.schemas.enable": "maybe"}}).to_string()));
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("schemas.enable"),
        "{body}"
    );
    assert_eq!(worker.get("/connectors/conv").0, 404, "nothing was created");
    assert_eq!(
        worker.get("/connectors/nope"),
        (
            404,
            json!({"error_code": 404, "message": "Connector nope not found"})
        )
    );
    assert_eq!(worker.get("/connectors/nope/status").0, 404);
    assert_eq!(worker.send("PUT", "/connectors/nope/pause", None).0, 404);
    assert_eq!(
        worker.get("/no/such/path"),
        (
            404,
            json!({"error_code": 404, "message": "HTTP 404 Not Found"})
        )
    );
    assert_eq!(worker.get("/connectors").1, json!(["snk", "src"]));

    // Active topics (KIP-558): the source produced to `topic`, the sink consumed from it.
    wait_for("active topics", Duration::from_secs(30), || {
        (worker.get("/connectors/src/topics").1 == json!({"src": {"topics": [topic]}})
            && worker.get("/connectors/snk/topics").1 == json!({"snk": {"topics": [topic]}}))
        .then_some(())
    });
    assert_eq!(
        worker.get("/connectors/unknown/topics"),
        (200, json!({"unknown": {"topics": []}}))
    );
    assert_eq!(
        worker.send("PUT", "/connectors/snk/topics/reset", None).0,
        202
    );
    assert_eq!(
        worker.get("/connectors/snk/topics").1,
        json!({"snk": {"topics": []}})
    );

    // Stop (KIP-875): connector STOPPED, no tasks.
    assert_eq!(worker.send("PUT", "/connectors/src/stop", None).0, 204);
    let stopped = wait_for("src STOPPED", Duration::from_secs(30), || {
        let (_, s) = worker.get("/connectors/src/status");
        (s["connector"]["state"] == "STOPPED").then_some(s)
    });
    assert_eq!(stopped["tasks"], json!([]));
    assert_eq!(worker.send("PUT", "/connectors/src/resume", None).0, 202);
    worker.wait_state("src", 1, "RUNNING");

    // Delete.
    assert_eq!(worker.send("DELETE", "/connectors/src", None).0, 204);
    assert_eq!(worker.get("/connectors/src").0, 404);
    assert_eq!(worker.send("DELETE", "/connectors/src", None).0, 404);
    assert_eq!(worker.get("/connectors").1, json!(["snk"]));

    // Log levels (KIP-495).
    let (code, loggers) = worker.get("/admin/loggers");
    assert_eq!(code, 200);
    assert_eq!(loggers["root"]["level"], "INFO");
    let (code, changed) = worker.send(
        "PUT",
        "/admin/loggers/tributary_runtime",
        Some(r#"{"level":"debug"}"#),
    );
    assert_eq!((code, changed), (200, json!(["tributary_runtime"])));
    let (code, level) = worker.get("/admin/loggers/tributary_runtime.worker");
    assert_eq!(code, 200);
    assert_eq!(level["level"], "DEBUG");
    assert_eq!(
        worker
            .send(
                "PUT",
                "/admin/loggers/tributary_runtime",
                Some(r#"{"level":"LOUD"}"#)
            )
            .0,
        404
    );
    assert_eq!(
        worker
            .send("PUT", "/admin/loggers/tributary_runtime", Some(r#"{}"#))
            .0,
        400
    );
    assert_eq!(
        worker
            .send(
                "PUT",
                "/admin/loggers/tributary_runtime",
                Some(r#"{"level":"INFO"}"#)
            )
            .0,
        200
    );

    // Plugins.
    let (code, plugins) = worker.get("/connector-plugins");
    assert_eq!(code, 200);
    let classes: Vec<&str> = plugins
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap())
        .collect();
    assert!(
        classes.contains(&"org.apache.kafka.connect.file.FileStreamSourceConnector"),
        "{classes:?}"
    );
    assert!(
        !classes
            .iter()
            .any(|c| c.contains("Verifiable") || c.contains("Mock")),
        "test connectors are not listed: {classes:?}"
    );
    let (code, body) = worker.send(
        "PUT",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        Some(&json!({"connector.class": "FileStreamSink"}).to_string()),
    );
    assert_eq!((code, body["message"].clone()), (400, json!("Included connector type FileStreamSink does not match request type FileStreamSourceConnector")));
    let (code, infos) = worker.send(
        "PUT",
        "/connector-plugins/FileStreamSink/config/validate",
        Some(&json!({"connector.class": "FileStreamSink"}).to_string()),
    );
    assert_eq!(code, 200);
    // No name, and neither topics nor topics.regex (reported on both keys).
    assert_eq!(infos["error_count"], 3, "{infos}");
    assert_eq!(infos["name"], "FileStreamSink");
    let errors_of = |key: &str| {
        infos["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == key)
            .map(|c| c["value"]["errors"].clone())
    };
    assert_eq!(
        errors_of("name"),
        Some(json!([
            "Missing required configuration \"name\" which has no default value."
        ]))
    );
    assert_eq!(
        errors_of("topics"),
        Some(json!(["Must configure one of topics or topics.regex"]))
    );
}

/// A task that fails (its file is a directory) shows FAILED with a trace; the worker and the
/// other connectors keep running, and the failed one restarts on request.
#[test]
fn a_failing_task_fails_alone() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let bad_dir = dir.path().join("a-directory");
    std::fs::create_dir(&bad_dir).unwrap();
    let good = dir.path().join("good.txt");
    std::fs::write(&good, "x\n").unwrap();
    std::fs::write(
        dir.path().join("bad.properties"),
        source_props("bad", &bad_dir, &unique("bad")),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("good.properties"),
        source_props("good", &good, &unique("good")),
    )
    .unwrap();
    let worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        "",
        &["bad.properties", "good.properties"],
    );
    let failed = wait_for("the bad task to fail", Duration::from_secs(60), || {
        let (_, s) = worker.get("/connectors/bad/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = failed["tasks"][0]["trace"].as_str().unwrap();
    assert!(
        trace.contains("a-directory"),
        "the trace names the file: {trace}"
    );
    assert_eq!(failed["connector"]["state"], "RUNNING");
    worker.wait_state("good", 1, "RUNNING");
    let (code, plan) = worker.send(
        "POST",
        "/connectors/bad/restart?includeTasks=true&onlyFailed=true",
        None,
    );
    assert_eq!(code, 202);
    assert_eq!(
        plan["connector"]["state"], "RUNNING",
        "only failed instances are restarted"
    );
    assert_eq!(plan["tasks"][0]["state"], "RESTARTING");
    worker.wait_state("good", 1, "RUNNING");
}

/// Bad worker or connector files stop startup with a message naming the file and key.
/// Issue #30, case 5: an unknown key in Tributary's own namespace (a typo such as
/// `tributary.rest.acl.file` for `tributary.rest.authorization.file`) stops either kind of
/// worker at startup, naming the file and the key; another unknown key is logged with Connect's
/// `logUnused` wording, once, and the worker runs.
#[test]
fn unknown_tributary_keys_are_refused_and_other_unknown_keys_logged() {
    let dir = test_dir();
    let d = dir.path();
    let run = |mode: &str, file: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
            .args([mode, file])
            .current_dir(d)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    std::fs::write(
        d.join("s.properties"),
        "bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=/tmp/x\ntributary.rest.acl.file=/tmp/acl\n",
    )
    .unwrap();
    let (code, err) = run("standalone", "s.properties");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("s.properties: Unknown configuration 'tributary.rest.acl.file'"),
        "{err}"
    );
    std::fs::write(
        d.join("d.properties"),
        "bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\ntributary.jvm.option=-Xmx64m\n",
    )
    .unwrap();
    let (code, err) = run("distributed", "d.properties");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("d.properties: Unknown configuration 'tributary.jvm.option'"),
        "{err}"
    );

    let Some(bootstrap) = kafka() else { return };
    let w = StandaloneWorker::start(
        d,
        &bootstrap,
        "no.such.setting=1\ntributary.task.stall.threshold.ms=60000\nproducer.linger.ms=5",
        &[],
    );
    let log = w.log_text();
    let line = "These configurations '[no.such.setting]' were supplied but are not used yet.";
    assert_eq!(log.matches(line).count(), 1, "{log}");
}

/// KIP-891's worker keys: a converter version requirement the installed converter meets is a
/// known setting (not logged as unused); one it does not meet stops the worker, naming the file
/// and key.
#[test]
fn worker_converter_version_requirements_are_checked_at_startup() {
    let dir = test_dir();
    let d = dir.path();
    let worker = |extra: &str| {
        format!(
            "bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\noffset.storage.file.filename={}\n{extra}\n",
            d.join("offsets").display()
        )
    };
    std::fs::write(
        d.join("bad.properties"),
        worker("value.converter.plugin.version=[99.0,)"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "bad.properties"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.properties: key 'value.converter.plugin.version': Plugin org.apache.kafka.connect.json.JsonConverter has version")
            && err.contains("which does not match the required version range [99.0,)"),
        "{err}"
    );
    let Some(bootstrap) = kafka() else { return };
    let w = StandaloneWorker::start(
        d,
        &bootstrap,
        "key.converter.plugin.version=latest\nheader.converter.plugin.version=[0.0.1,)",
        &[],
    );
    let log = w.log_text();
    assert!(!log.contains("plugin.version"), "{log}");
}

#[test]
fn bad_configuration_exits_with_a_message_naming_file_and_key() {
    let dir = test_dir();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
            .arg("standalone")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    std::fs::write(dir.path().join("w1.properties"), "bootstrap.servers=127.0.0.1:1\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=/tmp/x\n").unwrap();
    let (code, err) = run(&["w1.properties"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("w1.properties") && err.contains("\"key.converter\""),
        "{err}"
    );

    std::fs::write(dir.path().join("w2.properties"), "key.converter=NoSuchConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=/tmp/x\noffset.flush.interval.ms=often\n").unwrap();
    let (code, err) = run(&["w2.properties"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("w2.properties")
            && err.contains("offset.flush.interval.ms")
            && err.contains("often"),
        "{err}"
    );

    std::fs::write(dir.path().join("w3.properties"), "key.converter=NoSuchConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=/tmp/x\n").unwrap();
    let (code, err) = run(&["w3.properties"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("w3.properties")
            && err.contains("key.converter")
            && err.contains("NoSuchConverter"),
        "{err}"
    );

    std::fs::write(
        dir.path().join("c.properties"),
        "connector.class=FileStreamSource\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("w4.properties"), "key.converter=StringConverter\nvalue.converter=StringConverter\noffset.storage.file.filename=/tmp/x\n").unwrap();
    let (code, err) = run(&["w4.properties", "c.properties"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("c.properties") && err.contains("'name'"),
        "{err}"
    );

    let (code, err) = run(&["missing.properties"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("missing.properties"), "{err}");
}

/// An unknown connector class in a connector file stops startup and lists the available plugins.
#[test]
fn unknown_connector_class_lists_available_plugins() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    std::fs::write(
        dir.path().join("c.properties"),
        "name=c\nconnector.class=com.example.Nope\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("w.properties"),
        format!("bootstrap.servers={bootstrap}\nkey.converter=StringConverter\nvalue.converter=StringConverter\noffset.storage.file.filename={}/offsets\nlisteners=http://127.0.0.1:0\n", dir.path().display()),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "w.properties", "c.properties"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("c.properties")
            && err.contains("com.example.Nope")
            && err.contains("FileStreamSourceConnector"),
        "{err}"
    );
}

/// Tasks that ask for `commit_record` hear about every acknowledged record: VerifiableSource
/// prints each record's report again with `"committed":true` once Kafka acknowledged it.
#[test]
fn verifiable_source_reports_acknowledged_records() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let topic = unique("verifiable");
    std::fs::write(
        dir.path().join("v.properties"),
        format!(
            "name=v\nconnector.class=VerifiableSource\ntasks.max=1\ntopic={topic}\nthroughput=50\n"
        ),
    )
    .unwrap();
    let _worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &["v.properties"]);
    let committed = wait_for(
        "20 acknowledged records reported",
        Duration::from_secs(60),
        || {
            let out = std::fs::read_to_string(dir.path().join("stdout.log")).unwrap_or_default();
            let seqnos: Vec<i64> = out
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["committed"] == true)
                .filter_map(|v| v["seqno"].as_i64())
                .collect();
            (seqnos.len() >= 20).then_some(seqnos)
        },
    );
    assert_eq!(
        committed[..20],
        (0..20).collect::<Vec<i64>>()[..],
        "acknowledged in order, each once"
    );
    assert!(topic_end(&bootstrap, &topic) >= 20);
}

/// Connect's primitive converters (`IntegerConverter`, `LongConverter`, … and KIP-959's
/// `BooleanConverter`) by their class names: VerifiableSource's INT32 keys and INT64 values
/// reach Kafka as Kafka's `IntegerSerializer` and `LongSerializer` write them (big-endian, 4 and
/// 8 bytes), and a VerifiableSink with the same converters reads the numbers back.
#[test]
fn primitive_converters_write_kafkas_serializer_bytes_and_read_them_back() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let topic = unique("primitive");
    std::fs::write(
        dir.path().join("source.properties"),
        format!(
            "name=src\nconnector.class=VerifiableSource\ntasks.max=1\ntopic={topic}\nthroughput=50\nkey.converter=org.apache.kafka.connect.converters.IntegerConverter\nvalue.converter=org.apache.kafka.connect.converters.LongConverter\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=snk\nconnector.class=VerifiableSink\ntasks.max=1\ntopics={topic}\nkey.converter=org.apache.kafka.connect.converters.IntegerConverter\nvalue.converter=org.apache.kafka.connect.converters.LongConverter\n"
        ),
    )
    .unwrap();
    let _worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        "",
        &["source.properties", "sink.properties"],
    );
    wait_for("10 records", Duration::from_secs(60), || {
        (topic_end(&bootstrap, &topic) >= 10).then_some(())
    });
    let records = read_topic_records(&bootstrap, &topic);
    for (i, (key, value)) in records.iter().take(10).enumerate() {
        assert_eq!(key, &0i32.to_be_bytes().to_vec(), "record {i}'s key");
        assert_eq!(
            value,
            &(i as i64).to_be_bytes().to_vec(),
            "record {i}'s value"
        );
    }
    // The sink read them back as numbers: task 0, seqnos 0, 1, 2, …
    let seqnos = wait_for(
        "the sink to read 10 records",
        Duration::from_secs(60),
        || {
            let out = std::fs::read_to_string(dir.path().join("stdout.log")).unwrap_or_default();
            let seqnos: Vec<i64> = out
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["name"] == "snk" && v.get("flushed").is_none())
                .filter(|v| v["task"] == 0)
                .filter_map(|v| v["seqno"].as_i64())
                .collect();
            (seqnos.len() >= 10).then_some(seqnos)
        },
    );
    assert_eq!(seqnos[..10], (0..10).collect::<Vec<i64>>()[..]);
}
