//! Java connector plugins from `plugin.path` (issue #15, first milestone), on the real broker:
//! Apache Kafka's own FileStream connectors (`connect-file` 4.1.1 from Maven Central, the last
//! one published, fetched by `scripts/jvm-bridge plugin-path`; they run on the bridge's 4.4.0
//! runtime and report its version, as they would on Connect 4.4) forced to run as Java produce what the native ones do;
//! the listing shows them; a Java task that throws fails with its Java trace while a native
//! task on the same worker keeps running; and a worker that uses no Java plugin never loads a
//! JVM (no `libjvm` in its memory map).

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::json;

const SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// Whether the worker process has a JVM loaded (`libjvm` in `/proc/<pid>/maps`).
fn has_jvm(w: &StandaloneWorker) -> bool {
    std::fs::read_to_string(format!("/proc/{}/maps", w.child.id()))
        .unwrap()
        .contains("libjvm")
}

fn file_connector(name: &str, class: &str, file: &Path, topic: &str) -> String {
    let topic_key = if class == SOURCE { "topic" } else { "topics" };
    format!(
        "name={name}\nconnector.class={class}\ntasks.max=1\nfile={}\n{topic_key}={topic}\n",
        file.display()
    )
}

/// An input file holding `text`, a new one-partition topic, and `src.properties` in `dir`: a
/// native FileStreamSource `name` reading the file into the topic. Returns (file, topic).
fn native_source_file(
    dir: &Path,
    bootstrap: &str,
    name: &str,
    text: &[u8],
) -> (std::path::PathBuf, String) {
    let input = dir.join("input.txt");
    std::fs::write(&input, text).unwrap();
    let topic = unique(name);
    create_topic(bootstrap, &topic, 1);
    std::fs::write(
        dir.join("src.properties"),
        file_connector(name, SOURCE, &input, &topic),
    )
    .unwrap();
    (input, topic)
}

fn input_lines() -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..2000 {
        data.extend_from_slice(
            format!("line {i} ünïcödé {}\tend\n", "x".repeat(i % 97)).as_bytes(),
        );
    }
    data
}

fn plugin_versions(w: &StandaloneWorker) -> Vec<(String, String, String)> {
    let (code, body) = w.get("/connector-plugins");
    assert_eq!(code, 200, "{body}");
    body.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["class"].as_str().unwrap().to_string(),
                p["type"].as_str().unwrap().to_string(),
                p["version"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// FileStreamSource → Kafka → FileStreamSink with Apache's Java classes (forced with
/// `tributary.plugins.prefer.java`) gives the same topic records and the same output file as
/// the native classes on a worker without plugin.path, which never loads a JVM.
#[test]
fn java_filestream_round_trip_equals_the_native_one() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let data = input_lines();
    let expected_lines = data.iter().filter(|&&b| b == b'\n').count();

    let run = |label: &str, extra: String| {
        let dir = test_dir();
        let input = dir.path().join("input.txt");
        std::fs::write(&input, &data).unwrap();
        let output = dir.path().join("output.txt");
        let topic = unique(&format!("java-plugins-{label}"));
        let sink = unique(&format!("sink-{label}"));
        // The sink subscribes before the source's first record; with the topic there, it
        // does not wait for a metadata refresh to see it.
        create_topic(&bootstrap, &topic, 1);
        std::fs::write(
            dir.path().join("src.properties"),
            file_connector("src", SOURCE, &input, &topic),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sink.properties"),
            // Its own consumer group: a group the other run's (killed) member still holds
            // would make this sink wait for the session timeout.
            file_connector(&sink, SINK, &output, &topic),
        )
        .unwrap();
        let w = StandaloneWorker::start(
            dir.path(),
            &bootstrap,
            &extra,
            &["src.properties", "sink.properties"],
        );
        w.wait_state("src", 1, "RUNNING");
        w.wait_state(&sink, 1, "RUNNING");
        wait_for("every line in the output", Duration::from_secs(120), || {
            let out = std::fs::read(&output).unwrap_or_default();
            (out.iter().filter(|&&b| b == b'\n').count() >= expected_lines).then_some(())
        });
        let listed = plugin_versions(&w);
        let jvm = has_jvm(&w);
        let topic_records = read_topic(&bootstrap, &topic);
        (
            std::fs::read(&output).unwrap(),
            topic_records,
            listed,
            (jvm, jvm_discovery(&w)),
            dir,
        )
    };

    let (java_out, java_topic, java_listed, (java_jvm, java_discovery), _d1) =
        run("java", jvm_lines(&classpath, &plugin_path, &[SOURCE, SINK]));
    let (native_out, native_topic, native_listed, (native_jvm, _), _d2) =
        run("native", String::new());
    // Apache's jars carry their ServiceLoader manifests, so the startup scan (hybrid_warn,
    // the default) found service_load equivalent and the in-process JVM skipped the
    // reflective scan.
    assert_eq!(java_discovery.as_deref(), Some("service_load"));

    assert_eq!(
        java_out, data,
        "the Java pipeline's output equals its input"
    );
    assert_eq!(java_out, native_out, "Java and native outputs are equal");
    assert_eq!(java_topic.len(), expected_lines);
    assert_eq!(java_topic, native_topic, "the same records in Kafka");
    // The forced classes are listed as the Java plugins (Connect's version), the native ones
    // as Tributary's.
    assert!(
        java_listed.contains(&(SOURCE.into(), "source".into(), bridge_connect_version())),
        "{java_listed:?}"
    );
    assert!(
        java_listed.contains(&(SINK.into(), "sink".into(), bridge_connect_version())),
        "{java_listed:?}"
    );
    let native_version = env!("CARGO_PKG_VERSION").to_string();
    assert!(
        native_listed.contains(&(SOURCE.into(), "source".into(), native_version)),
        "{native_listed:?}"
    );
    assert!(java_jvm, "the worker running Java plugins loaded a JVM");
    assert!(
        !native_jvm,
        "a worker without Java plugins never loads a JVM"
    );
}

/// A Java sink task whose `start` throws (Apache's FileStreamSinkTask cannot create its file)
/// is FAILED with the Java stack trace in its status, while a native source task on the same
/// worker stays RUNNING and keeps producing.
#[test]
fn a_failing_java_task_shows_its_java_trace_and_a_native_task_keeps_running() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let (input, topic) = native_source_file(dir.path(), &bootstrap, "native-src", b"one\ntwo\n");
    let bad = dir.path().join("no-such-dir").join("out.txt");
    std::fs::write(
        dir.path().join("sink.properties"),
        file_connector("java-sink", SINK, &bad, &topic),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path, &[SINK]),
        &["src.properties", "sink.properties"],
    );
    w.wait_state("native-src", 1, "RUNNING");
    let trace = wait_for("the Java task to fail", Duration::from_secs(60), || {
        let (_, s) = w.get("/connectors/java-sink/status");
        (s["tasks"][0]["state"] == "FAILED")
            .then(|| s["tasks"][0]["trace"].as_str().unwrap().to_string())
    });
    assert!(
        trace.starts_with(
            "org.apache.kafka.connect.errors.ConnectException: Couldn't find or create file"
        ),
        "{trace}"
    );
    assert!(
        trace.contains("\tat org.apache.kafka.connect.file.FileStreamSinkTask.start("),
        "{trace}"
    );
    assert!(
        trace.contains("Caused by: java.nio.file.NoSuchFileException"),
        "{trace}"
    );
    // The Java connector itself runs; only its task failed.
    let (_, s) = w.get("/connectors/java-sink/status");
    assert_eq!(s["connector"]["state"], "RUNNING", "{s}");
    // The native task on the same worker keeps running and producing.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    std::io::Write::write_all(&mut f, b"three\n").unwrap();
    wait_for(
        "the native source's third line",
        Duration::from_secs(60),
        || (read_topic(&bootstrap, &topic).len() == 3).then_some(()),
    );
    w.wait_state("native-src", 1, "RUNNING");
    // The listing: the native source (not forced) and the Java sink.
    let listed = plugin_versions(&w);
    assert!(
        listed.contains(&(SINK.into(), "sink".into(), bridge_connect_version())),
        "{listed:?}"
    );
    assert!(
        listed.contains(&(
            SOURCE.into(),
            "source".into(),
            env!("CARGO_PKG_VERSION").into()
        )),
        "{listed:?}"
    );
    // The Java plugin's own ConfigDef and validate() answer over REST.
    let (code, keys) = w.get(&format!("/connector-plugins/{SINK}/config"));
    assert_eq!(code, 200, "{keys}");
    assert!(
        keys.as_array().unwrap().iter().any(|k| k["name"] == "file"),
        "{keys}"
    );
    let (code, v) = w.send(
        "PUT",
        &format!("/connector-plugins/{SINK}/config/validate"),
        Some(
            &json!({"connector.class": SINK, "name": "v", "topics": "t", "tasks.max": "1"})
                .to_string(),
        ),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["name"], SINK, "{v}");
}

/// Apache's Java FileStreamSourceTask reads its position through the `OffsetStorageReader`
/// Tributary gives it (backed by the worker's offsets file): after a clean stop and a restart
/// it resumes where it was, so every line reaches Kafka exactly once.
#[test]
fn a_java_source_task_resumes_from_the_offset_tributary_stored() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let input = dir.path().join("input.txt");
    let lines = |from: usize, to: usize| -> String {
        // ASCII: Apache's FileStreamSourceTask stores its position in characters but skips
        // bytes when it resumes, so with multi-byte characters Java Connect itself re-reads.
        (from..to).map(|i| format!("record {i}\n")).collect()
    };
    std::fs::write(&input, lines(0, 100)).unwrap();
    let topic = unique("java-resume");
    create_topic(&bootstrap, &topic, 1);
    std::fs::write(
        dir.path().join("src.properties"),
        file_connector("src", SOURCE, &input, &topic),
    )
    .unwrap();
    let extra = jvm_lines(&classpath, &plugin_path, &[SOURCE]);
    let mut w = StandaloneWorker::start(dir.path(), &bootstrap, &extra, &["src.properties"]);
    w.wait_state("src", 1, "RUNNING");
    wait_for("the first 100 lines", Duration::from_secs(60), || {
        (read_topic(&bootstrap, &topic).len() == 100).then_some(())
    });
    assert!(w.terminate().success());
    drop(w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    std::io::Write::write_all(&mut f, lines(100, 150).as_bytes()).unwrap();
    let w = StandaloneWorker::spawn(dir.path(), &["src.properties"]);
    w.wait_state("src", 1, "RUNNING");
    let records = wait_for("150 lines", Duration::from_secs(60), || {
        let r = read_topic(&bootstrap, &topic);
        (r.len() >= 150).then_some(r)
    });
    let expected: Vec<Vec<u8>> = lines(0, 150)
        .lines()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    assert_eq!(records, expected, "each line exactly once, in order");
}

/// `plugin.path` set, no Java plugin in use (FileStream runs natively, as built-in classes
/// take precedence): the Java plugins are listed, yet the worker never loads a JVM.
#[test]
fn a_worker_using_no_java_plugin_never_starts_a_jvm() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let (_, topic) = native_source_file(dir.path(), &bootstrap, "src", b"a\nb\n");
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path, &[]),
        &["src.properties"],
    );
    w.wait_state("src", 1, "RUNNING");
    wait_for("both lines", Duration::from_secs(60), || {
        (read_topic(&bootstrap, &topic).len() == 2).then_some(())
    });
    // Native classes won: FileStream is Tributary's.
    let listed = plugin_versions(&w);
    assert!(
        listed.contains(&(
            SOURCE.into(),
            "source".into(),
            env!("CARGO_PKG_VERSION").into()
        )),
        "{listed:?}"
    );
    assert!(!has_jvm(&w), "no JVM in a worker that uses no Java plugin");
    assert!(
        w.log_text().contains("Java connector plugin not used"),
        "the shadowed Java plugins are named in the log"
    );
}

/// `plugin.path` holding Java code without the bridge's class path stops startup naming the
/// key.
#[test]
fn plugin_path_without_the_bridge_is_refused_naming_the_key() {
    let dir = test_dir();
    // A plugin directory with a jar in it (one without jar, zip or class files needs no JVM).
    std::fs::create_dir_all(dir.path().join("plugins/some-plugin")).unwrap();
    std::fs::write(dir.path().join("plugins/some-plugin/some-plugin.jar"), "").unwrap();
    std::fs::write(
        dir.path().join("worker.properties"),
        "bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=offsets\nlisteners=http://127.0.0.1:0\nplugin.path=plugins\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "worker.properties"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("key 'plugin.path'") && err.contains("tributary.jvm.classpath"),
        "{err}"
    );
}

/// Two distributed workers with the same plugin.path run Apache's Java FileStream connectors
/// (forced): the connectors and their tasks spread over the group, each hosted by the JVM of
/// the worker it lands on, and the output equals the input.
#[test]
fn java_connectors_run_in_a_distributed_group() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let group = unique("java-dist");
    let extra = jvm_lines(&classpath, &plugin_path, &[SOURCE, SINK]);
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, &extra);
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, &extra);
    w1.wait_joined();
    w2.wait_joined();
    let input = dir.path().join("input.txt");
    let data: String = (0..500)
        .map(|i| format!("distributed line {i}\n"))
        .collect();
    std::fs::write(&input, &data).unwrap();
    let output = dir.path().join("output.txt");
    let topic = unique("java-dist");
    let jsink = unique("jsink");
    create_topic(&bootstrap, &topic, 1);
    for (name, class, file, key) in [
        ("jsrc", SOURCE, &input, "topic"),
        (jsink.as_str(), SINK, &output, "topics"),
    ] {
        let body = json!({"name": name, "config": {"connector.class": class, "tasks.max": "1", "file": file, key: topic}});
        let (code, resp) = w2.send("POST", "/connectors", Some(&body.to_string()));
        assert_eq!(code, 201, "{resp}");
    }
    w1.wait_state("jsrc", 1, "RUNNING");
    w1.wait_state(&jsink, 1, "RUNNING");
    wait_for("every line in the output", Duration::from_secs(120), || {
        let out = std::fs::read_to_string(&output).unwrap_or_default();
        (out.len() >= data.len()).then_some(())
    });
    assert_eq!(std::fs::read_to_string(&output).unwrap(), data);
    // The task configs in the config topic name Apache's task classes, as a Java worker
    // writes them (a Java worker of a mixed group could run them).
    let (_, tasks) = w1.get("/connectors/jsrc/tasks");
    assert_eq!(
        tasks[0]["config"]["task.class"], "org.apache.kafka.connect.file.FileStreamSourceTask",
        "{tasks}"
    );
}

/// A JVM option the JVM refuses stops startup (the scan runs with the worker's options), not
/// the first Java connector.
#[test]
fn a_bad_jvm_option_stops_startup() {
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    std::fs::write(
        dir.path().join("worker.properties"),
        format!(
            "bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename=offsets\nlisteners=http://127.0.0.1:0\nplugin.path={plugin_path}\ntributary.jvm.classpath={classpath}\ntributary.jvm.options=-XX:+NoSuchJvmOption\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "worker.properties"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tributary.jvm.options") && err.contains("NoSuchJvmOption"),
        "{err}"
    );
}

/// A plugin directory holding the probe connectors (`tests/java/ProbeSourceConnector.java`,
/// `tests/java/ProbeSinkConnector.java`) and converter (`tests/java/ProbeConverter.java`), compiled against Connect's API jars and packed as
/// one jar, as a plugin author ships one.
/// The `plugin.discovery` mode the worker's in-process JVM scanned with (its "JVM started"
/// log line), or `None` when no JVM started.
fn jvm_discovery(w: &StandaloneWorker) -> Option<String> {
    let log = w.log_text();
    let line = log.lines().find(|l| l.contains("JVM started"))?;
    let at = line.find("discovery=")? + "discovery=".len();
    Some(
        line[at..]
            .trim_start_matches('"')
            .split(['"', ' '])
            .next()?
            .to_string(),
    )
}

/// The Java sources the tests compile (`crates/cli/tests/java`), in the checkout the test runs
/// in.
fn test_java_dir() -> std::path::PathBuf {
    repo_root().join("crates/cli/tests/java")
}

fn probe_plugin_dir(dir: &Path, classpath: &str) -> std::path::PathBuf {
    let java = test_java_dir();
    java_plugin_dir(
        dir,
        "probe",
        classpath,
        &[
            java.join("ProbeSourceConnector.java"),
            java.join("ProbeSinkConnector.java"),
            java.join("ProbeConverter.java"),
        ],
    )
}

/// `(value, header "probe")` of every record of partition 0 of `topic`.
fn values_and_headers(bootstrap: &str, topic: &str) -> Vec<(String, String)> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Headers;
    use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("reader"))
        .create()
        .unwrap();
    let (_, high) = consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let mut out = Vec::new();
    while (out.len() as i64) < high {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            let header = m
                .headers()
                .and_then(|h| h.iter().find(|h| h.key == "probe"))
                .and_then(|h| h.value)
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            let value = String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned();
            out.push((value, header));
        }
    }
    out
}

/// A Java source task of a plugin jar: its records (keys, values, headers) reach Kafka, its
/// `commitRecord` is called once per record with the Kafka offset, and an exception from
/// `poll` fails the task with the Java trace; the plugin is listed with its own version. The
/// connector's own `SourceConnectorContext.offsetStorageReader()` reads what its task
/// committed (nothing at the first start, the last offset after a restart); the task's SLF4J
/// logging lands in the worker's log with its connector and task.
#[test]
fn a_java_source_task_gets_commit_record_and_fails_with_its_trace_from_poll() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let plugin_path = probe_plugin_dir(dir.path(), &classpath);
    let ok_topic = unique("probe-ok");
    let fail_topic = unique("probe-fail");
    create_topic(&bootstrap, &ok_topic, 1);
    create_topic(&bootstrap, &fail_topic, 1);
    let ack = dir.path().join("acks.txt");
    let connector_offsets = dir.path().join("connector-offsets.txt");
    let probe = "io.tributary.probe.ProbeSourceConnector";
    std::fs::write(
        dir.path().join("ok.properties"),
        format!(
            "name=probe-ok\nconnector.class={probe}\ntasks.max=1\ntopic={ok_topic}\nrecords=20\nack.file={}\nconnector.offsets.file={}\n",
            ack.display(),
            connector_offsets.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fail.properties"),
        format!(
            "name=probe-fail\nconnector.class=ProbeSource\ntasks.max=1\ntopic={fail_topic}\nrecords=20\nfail.at=7\nack.file={}\n",
            dir.path().join("fail-acks.txt").display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path.display().to_string(), &[]),
        &["ok.properties", "fail.properties"],
    );
    w.wait_state("probe-ok", 1, "RUNNING");
    // The probe jar has no ServiceLoader manifests: only the reflective scan finds its
    // plugins, so the in-process JVM keeps the configured (default) mode.
    assert_eq!(jvm_discovery(&w).as_deref(), Some("hybrid_warn"));
    let records = wait_for("20 records", Duration::from_secs(60), || {
        let r = read_topic_records(&bootstrap, &ok_topic);
        (r.len() >= 20).then_some(r)
    });
    let expected: Vec<(Vec<u8>, Vec<u8>)> = (0..20)
        .map(|i| (format!("k{i}").into_bytes(), format!("v{i}").into_bytes()))
        .collect();
    assert_eq!(records, expected);
    let headers: Vec<(String, String)> = (0..20)
        .map(|i| (format!("v{i}"), format!("h{i}")))
        .collect();
    assert_eq!(values_and_headers(&bootstrap, &ok_topic), headers);
    let acks = wait_for("20 commitRecord calls", Duration::from_secs(60), || {
        let text = std::fs::read_to_string(&ack).unwrap_or_default();
        (text.lines().count() >= 20).then_some(text)
    });
    let mut acks: Vec<&str> = acks.lines().collect();
    acks.sort_by_key(|l| l.split(' ').nth(1).unwrap().parse::<i64>().unwrap());
    let expected_acks: Vec<String> = (0..20).map(|i| format!("v{i} {i}")).collect();
    assert_eq!(
        acks, expected_acks,
        "commitRecord once per record, with its Kafka offset"
    );

    let trace = wait_for("the failing probe task", Duration::from_secs(60), || {
        let (_, s) = w.get("/connectors/probe-fail/status");
        (s["tasks"][0]["state"] == "FAILED")
            .then(|| s["tasks"][0]["trace"].as_str().unwrap().to_string())
    });
    assert!(
        trace.starts_with(
            "org.apache.kafka.connect.errors.ConnectException: probe failure at record 7"
        ),
        "{trace}"
    );
    assert!(
        trace.contains("\tat io.tributary.probe.ProbeSourceConnector$ProbeSourceTask.poll("),
        "{trace}"
    );
    w.wait_state("probe-ok", 1, "RUNNING");
    // The task's SLF4J line is in the worker's log, with its connector and task.
    let log = w.log_text();
    let line = log
        .lines()
        .find(|l| {
            l.contains("task{connector=probe-ok task=0}")
                && l.contains("probe task starting at record 0")
        })
        .unwrap_or_else(|| panic!("no probe-ok task log line in the worker's log:\n{log}"));
    assert!(
        line.contains(" INFO ")
            && line.contains("logger=\"io.tributary.probe.ProbeSourceConnector$ProbeSourceTask\""),
        "{line}"
    );
    let listed = plugin_versions(&w);
    // The connector's offset reader: nothing at its first start; after the task's offsets are
    // committed and the connector restarts, the last one.
    assert_eq!(lines_of(&connector_offsets), ["next=none"]);
    wait_for(
        "the task's committed offset",
        Duration::from_secs(60),
        || {
            let (_, body) = w.get("/connectors/probe-ok/offsets");
            (body["offsets"][0]["offset"]["next"] == 20).then_some(())
        },
    );
    // Java logger levels through /admin/loggers (Connect's Loggers): the task's DEBUG line was
    // not logged at the root level INFO; with the plugin's package at DEBUG, the restarted
    // task's is, in the worker's log with its context.
    assert!(!log.contains("probe task debug line"), "{log}");
    let (status, changed) = w.send(
        "PUT",
        "/admin/loggers/io.tributary.probe",
        Some(r#"{"level": "DEBUG"}"#),
    );
    assert_eq!((status, changed), (200, json!(["io.tributary.probe"])));
    assert_eq!(
        w.get("/admin/loggers/io.tributary.probe").1["level"],
        "DEBUG"
    );
    assert_eq!(
        w.send(
            "POST",
            "/connectors/probe-ok/restart?includeTasks=true",
            None
        )
        .0,
        202
    );
    let debug = w.wait_log_line(
        "the task's DEBUG line",
        "probe task debug line at record 20",
        Duration::from_secs(60),
    );
    assert!(
        debug.contains(" DEBUG ") && debug.contains("task{connector=probe-ok task=0}"),
        "{debug}"
    );
    wait_for(
        "the restarted connector's reading",
        Duration::from_secs(60),
        || (lines_of(&connector_offsets) == ["next=none", "next=20"]).then_some(()),
    );
    assert!(
        listed.contains(&(probe.into(), "source".into(), "probe-1".into())),
        "{listed:?}"
    );
}

/// MirrorMaker 2's `MirrorSourceConnector` (`connect-mirror` 4.3.1 from Maven Central, in its
/// own plugin directory) hosted by a Tributary worker replicates a topic of another cluster
/// (a second broker started by `scripts/kafka` on other ports) into the worker's cluster as
/// `<alias>.<topic>`:
/// every record arrives with its key, value, headers and timestamp, in order, and records
/// produced while it runs follow. The converters are ByteArrayConverter, as MirrorMaker 2's
/// own driver sets them (with Connect's default SimpleHeaderConverter, a bytes header is
/// written as base64 text, by Java's workers and Tributary's alike). The task's own metrics
/// (KIP-877) appear on `/metrics` with Connect's tags and go when the connector is deleted.
#[test]
fn mirror_maker_replicates_a_topic_between_two_brokers() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let source_cluster = second.bootstrap();
    let topic = unique("mm2");
    create_topic(&source_cluster, &topic, 1);
    let first: Vec<(String, String)> = (0..300)
        .map(|i| (format!("k{i}"), format!("value {i} ünïcödé")))
        .collect();
    let records = |batch: &[(String, String)]| -> Vec<(String, String, String)> {
        batch
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), format!("h-{k}")))
            .collect()
    };
    let produce_batch = |batch: &[(String, String, String)]| {
        let headers: Vec<[(&str, &str); 1]> = batch
            .iter()
            .map(|(_, _, h)| [("trace", h.as_str())])
            .collect();
        let recs: Vec<Produced<'_>> = batch
            .iter()
            .zip(&headers)
            .map(|((k, v, _), h)| (Some(k.as_str()), v.as_str(), &h[..]))
            .collect();
        produce(&source_cluster, &topic, &recs);
    };
    produce_batch(&records(&first));
    let alias = unique("src").replace('-', "_");
    // Apache's class, hosted: Tributary's native MirrorSourceConnector is the default version.
    let java_version = bridge_connect_version();
    let connector = format!(
        "name=mm2\nconnector.class=org.apache.kafka.connect.mirror.MirrorSourceConnector\n\
         tasks.max=1\nsource.cluster.alias={alias}\ntarget.cluster.alias=dst\n\
         source.cluster.bootstrap.servers={source_cluster}\n\
         target.cluster.bootstrap.servers={bootstrap}\ntopics={topic}\n\
         replication.factor=1\noffset-syncs.topic.replication.factor=1\n\
         sync.topic.acls.enabled=false\n\
         refresh.topics.interval.seconds=1\n\
         metric.names.formats=new\n\
         connector.plugin.version={java_version}\n\
         key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
         value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
         header.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n"
    );
    std::fs::write(dir.path().join("mm2.properties"), connector).unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path, &[]),
        &["mm2.properties"],
    );
    w.wait_state("mm2", 1, "RUNNING");
    assert!(
        plugin_versions(&w).contains(&(
            "org.apache.kafka.connect.mirror.MirrorSourceConnector".into(),
            "source".into(),
            bridge_connect_version()
        )),
        "MirrorMaker 2's connectors are listed from their plugin directory"
    );
    let mirrored = format!("{alias}.{topic}");
    let source_records = |n: usize| {
        wait_for(
            &format!("{n} records in {mirrored}"),
            Duration::from_secs(120),
            || {
                let got = read_records(&bootstrap, &mirrored);
                (got.len() >= n).then_some(got)
            },
        )
    };
    let got = source_records(first.len());
    let expected = read_records(&source_cluster, &topic);
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!((&g.key, &g.value), (&e.key, &e.value));
        assert_eq!(g.headers, e.headers, "the headers are copied");
        assert_eq!(g.timestamp, e.timestamp, "the source timestamp is kept");
    }
    // Records produced while the connector runs follow the first ones.
    let second: Vec<(String, String)> = (300..500)
        .map(|i| (format!("k{i}"), format!("later value {i}")))
        .collect();
    produce_batch(&records(&second));
    let got = source_records(first.len() + second.len());
    let expected = read_records(&source_cluster, &topic);
    assert_eq!(
        got, expected,
        "the mirror equals its source, in order: keys, values, headers, timestamps"
    );

    // MirrorMaker 2's own metrics (4.3's MirrorSourceMetrics, registered through the task
    // context's pluginMetrics() with `metric.names.formats=new`, KIP-877/KIP-1280) on the worker's /metrics, with Connect's
    // tags and the plugin's.
    let want = (first.len() + second.len()) as f64;
    let (labels, _) = wait_for(
        "MirrorMaker 2's record-count on /metrics",
        Duration::from_secs(60),
        || {
            metric_series(&metrics_page(&w.url), "kafka_connect_plugins_record_count")
                .into_iter()
                .find(|(_, v)| *v == want)
        },
    );
    for (k, v) in [
        ("connector", "mm2"),
        ("task", "0"),
        ("source", alias.as_str()),
        ("target", "dst"),
        ("topic", mirrored.as_str()),
        ("partition", "0"),
    ] {
        assert_eq!(labels.get(k).map(String::as_str), Some(v), "{labels:?}");
    }
    let page = metrics_page(&w.url);
    assert!(
        page.contains("# HELP kafka_connect_plugins_record_count Number of source records replicated to the target cluster."),
        "the plugin's description is the help"
    );
    assert!(
        !metric_series(&page, "kafka_connect_plugins_byte_count").is_empty(),
        "{page}"
    );
    // Deleting the connector removes its task's metrics with the task.
    let (code, body) = w.send("DELETE", "/connectors/mm2", None);
    assert_eq!(code, 204, "{body}");
    wait_for(
        "the task's plugin metrics to go",
        Duration::from_secs(60),
        || {
            metric_series(&metrics_page(&w.url), "kafka_connect_plugins_record_count")
                .is_empty()
                .then_some(())
        },
    );
}

/// A Java sink task's `SinkTaskContext.errantRecordReporter()` (KIP-610) reaches the worker's
/// dead letter queue: with `errors.tolerance=all` the records it reports land there with their
/// original bytes and the Java exception's class, message and trace in the context headers,
/// the others are written, and the task stays RUNNING. Without a dead letter queue or error
/// log the reporter is null (the probe then fails the task, naming the record).
#[test]
fn a_java_sink_task_reports_errant_records_to_the_dead_letter_queue() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let plugin_path = probe_plugin_dir(dir.path(), &classpath);
    let topic = unique("probe-sink");
    let dlq = unique("probe-dlq");
    let plain = unique("probe-sink-plain");
    create_topic(&bootstrap, &topic, 1);
    create_topic(&bootstrap, &plain, 1);
    let values: Vec<String> = (0..30)
        .map(|i| {
            if i % 7 == 3 {
                format!("bad {i}")
            } else {
                format!("good {i}")
            }
        })
        .collect();
    produce_values(&bootstrap, &topic, Some(0), &values);
    produce_values(&bootstrap, &plain, Some(0), &["bad at once".to_string()]);
    let out = dir.path().join("out.txt");
    let probe = "io.tributary.probe.ProbeSinkConnector";
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=probe-sink\nconnector.class={probe}\ntasks.max=1\ntopics={topic}\nfile={}\nerrors.tolerance=all\nerrors.deadletterqueue.topic.name={dlq}\nerrors.deadletterqueue.topic.replication.factor=1\nerrors.deadletterqueue.context.headers.enable=true\n",
            out.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plain.properties"),
        format!(
            "name=probe-plain\nconnector.class={probe}\ntasks.max=1\ntopics={plain}\nfile={}\n",
            dir.path().join("plain.txt").display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path.display().to_string(), &[]),
        &["sink.properties", "plain.properties"],
    );
    let good: Vec<&String> = values.iter().filter(|v| v.starts_with("good")).collect();
    let bad: Vec<&String> = values.iter().filter(|v| v.starts_with("bad")).collect();
    wait_for(
        "the good records in the file",
        Duration::from_secs(60),
        || {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            (text.lines().count() >= good.len()).then_some(())
        },
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), good);
    let dead = wait_for("the dead letter queue", Duration::from_secs(60), || {
        let recs = read_records(&bootstrap, &dlq);
        (recs.len() >= bad.len()).then_some(recs)
    });
    let dead_values: Vec<String> = dead
        .iter()
        .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
        .collect();
    assert_eq!(
        dead_values,
        bad.iter().map(|b| b.to_string()).collect::<Vec<_>>()
    );
    let first = &dead[0];
    assert_eq!(
        first
            .header("__connect.errors.exception.class.name")
            .as_deref(),
        Some("org.apache.kafka.connect.errors.DataException")
    );
    assert_eq!(
        first
            .header("__connect.errors.exception.message")
            .as_deref(),
        Some("probe refuses bad 3")
    );
    let trace = first
        .header("__connect.errors.exception.stacktrace")
        .unwrap();
    assert!(
        trace.contains("at io.tributary.probe.ProbeSinkConnector$ProbeSinkTask.put("),
        "{trace}"
    );
    assert_eq!(
        first.header("__connect.errors.topic").as_deref(),
        Some(topic.as_str())
    );
    assert_eq!(
        first.header("__connect.errors.offset").as_deref(),
        Some("3")
    );
    w.wait_state("probe-sink", 1, "RUNNING");
    // No dead letter queue, no error log: no reporter, as in Connect.
    let (_, status) = wait_for("the plain sink to fail", Duration::from_secs(60), || {
        let (code, body) = w.get("/connectors/probe-plain/status");
        (code == 200 && body["tasks"][0]["state"] == "FAILED").then_some((code, body))
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap();
    assert!(
        trace.contains("no errant record reporter for bad at once"),
        "{trace}"
    );
}

/// The file's lines.
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A Java sink task's `SinkTaskContext` requests are carried out as Connect's
/// `WorkerSinkTask` does: `offset` in `open` rewinds the partition; a `RetriableException`
/// after `timeout(200)` redelivers the same batch after 200 ms (not at the next offset commit,
/// an hour away here); `requestCommit` commits at once; `pause` stops delivery (and fetching)
/// of the partition while `put` goes on being called without records, and `resume` brings the
/// held-back records. Nothing is lost or written twice on the way.
#[test]
fn a_java_sink_task_rewinds_retries_commits_pauses_and_resumes_through_its_context() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let plugin_path = probe_plugin_dir(dir.path(), &classpath);
    let topic = unique("probe-context");
    create_topic(&bootstrap, &topic, 1);
    let out = dir.path().join("out.txt");
    let events = dir.path().join("events.txt");
    let resume = dir.path().join("resume");
    let first: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    produce_values(&bootstrap, &topic, Some(0), &first);
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=probe-context\nconnector.class=io.tributary.probe.ProbeSinkConnector\ntasks.max=1\ntopics={topic}\nfile={}\nrewind.to=3\nevents.file={}\nresume.file={}\n",
            out.display(),
            events.display(),
            resume.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &format!(
            "offset.flush.interval.ms=3600000\n{}",
            jvm_lines(&classpath, &plugin_path.display().to_string(), &[])
        ),
        &["sink.properties"],
    );
    let wait_lines = |what: &str, want: &[String]| {
        wait_for(what, Duration::from_secs(60), || {
            let got = lines_of(&out);
            (got.len() >= want.len()).then_some(got)
        })
    };
    // Rewound to offset 3 in `open`: v0..v2 are skipped.
    let mut want: Vec<String> = first[3..].to_vec();
    assert_eq!(wait_lines("the records from offset 3", &want), want);

    // A retriable failure: the batch comes again after the task's timeout, once.
    let retry = vec!["retry-1".to_string(), "after-retry".to_string()];
    produce_values(&bootstrap, &topic, Some(0), &retry);
    want.extend(retry);
    assert_eq!(wait_lines("the retried batch", &want), want);
    let retries = lines_of(&events)
        .iter()
        .filter(|e| *e == "retry thrown")
        .count();
    assert_eq!(retries, 1, "{:?}", lines_of(&events));

    // A commit request commits at once (the interval is an hour): offset 13 follows "commit".
    produce_values(&bootstrap, &topic, Some(0), &["commit".to_string()]);
    want.push("commit".into());
    assert_eq!(wait_lines("the commit record", &want), want);
    wait_for("the requested commit", Duration::from_secs(30), || {
        let (code, body) = w.get("/connectors/probe-context/offsets");
        let committed = body["offsets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["partition"]["kafka_topic"] == topic.as_str())
            .and_then(|o| o["offset"]["kafka_offset"].as_i64());
        (code == 200 && committed == Some(13)).then_some(())
    });

    // Paused by the task: later records wait while put goes on without records.
    produce_values(&bootstrap, &topic, Some(0), &["pause".to_string()]);
    want.push("pause".into());
    assert_eq!(wait_lines("the pause record", &want), want);
    let held = vec!["held-1".to_string(), "held-2".to_string()];
    produce_values(&bootstrap, &topic, Some(0), &held);
    wait_for(
        "three empty puts while paused",
        Duration::from_secs(30),
        || {
            let ev = lines_of(&events);
            let after = ev.iter().skip_while(|e| *e != "paused").skip(1);
            (after
                .filter(|e| *e == "put while paused: 0 records")
                .count()
                >= 3)
                .then_some(())
        },
    );
    assert_eq!(
        lines_of(&out),
        want,
        "records of a partition the task paused reached it"
    );
    std::fs::write(&resume, b"").unwrap();
    want.extend(held);
    assert_eq!(wait_lines("the records held while paused", &want), want);
    assert!(lines_of(&events).contains(&"resumed".to_string()));
    w.wait_state("probe-context", 1, "RUNNING");
}

/// Java converters of `plugin.path` (Debezium's `ByteArrayConverter`, as shipped in its
/// PostgreSQL connector's plugin directory) convert for native and Java connectors alike: a
/// native FileStreamSource's lines go out through it (strings go to its delegate, Connect's
/// JsonConverter without schemas, so each value is a JSON string), and a Java sink task gets
/// the bytes back from it. `GET /connector-plugins?connectorsOnly=false` lists it as a
/// converter and a header converter, as Connect does. A Java converter that works through the
/// record's headers (the probe's, as a schema-registry converter keeping its schema id in a
/// header does) gets them: the header it adds for a native source's record is in Kafka, and it
/// reads it back for a native sink.
#[test]
fn java_converters_of_the_plugin_path_convert_for_native_and_java_connectors() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, debezium)) = debezium_plugins() else {
        return;
    };
    let dir = test_dir();
    let probe = probe_plugin_dir(dir.path(), &classpath);
    let topic = unique("java-converter");
    create_topic(&bootstrap, &topic, 1);
    let lines = ["alpha", "béta \"quoted\"", "gamma"];
    let input = dir.path().join("in.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("out.txt");
    let converter = "io.debezium.converters.ByteArrayConverter";
    std::fs::write(
        dir.path().join("source.properties"),
        format!(
            "name=conv-source\nconnector.class=FileStreamSource\ntasks.max=1\ntopic={topic}\nfile={}\nvalue.converter={converter}\nvalue.converter.delegate.converter.type=org.apache.kafka.connect.json.JsonConverter\nvalue.converter.delegate.converter.type.schemas.enable=false\n",
            input.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=conv-sink\nconnector.class=io.tributary.probe.ProbeSinkConnector\ntasks.max=1\ntopics={topic}\nfile={}\nvalue.converter={converter}\n",
            out.display()
        ),
    )
    .unwrap();
    let header_topic = unique("java-converter-headers");
    create_topic(&bootstrap, &header_topic, 1);
    let header_out = dir.path().join("header-out.txt");
    let probe_converter = "io.tributary.probe.ProbeConverter";
    std::fs::write(
        dir.path().join("hsource.properties"),
        format!(
            "name=hdr-source\nconnector.class=FileStreamSource\ntasks.max=1\ntopic={header_topic}\nfile={}\nvalue.converter={probe_converter}\n",
            input.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("hsink.properties"),
        format!(
            "name=hdr-sink\nconnector.class=FileStreamSink\ntasks.max=1\ntopics={header_topic}\nfile={}\nvalue.converter={probe_converter}\n",
            header_out.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &format!("{debezium},{}", probe.display()), &[]),
        &[
            "source.properties",
            "sink.properties",
            "hsource.properties",
            "hsink.properties",
        ],
    );
    let expected: Vec<String> = lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap())
        .collect();
    let values = wait_for("the converted records", Duration::from_secs(60), || {
        let recs = read_records(&bootstrap, &topic);
        (recs.len() >= lines.len()).then_some(recs)
    });
    let values: Vec<String> = values
        .iter()
        .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
        .collect();
    assert_eq!(values, expected);
    let written = wait_for("the sink's file", Duration::from_secs(60), || {
        let got = lines_of(&out);
        (got.len() >= lines.len()).then_some(got)
    });
    assert_eq!(written, expected);
    // Through the headers: the probe converter's header is on each record in Kafka, and the
    // sink's conversion read it.
    let tagged = wait_for(
        "the probe converter's records",
        Duration::from_secs(60),
        || {
            let recs = read_records(&bootstrap, &header_topic);
            (recs.len() >= lines.len()).then_some(recs)
        },
    );
    for (r, line) in tagged.iter().zip(lines) {
        assert_eq!(r.value.as_deref(), Some(line.as_bytes()));
        assert_eq!(r.header("probe.type").as_deref(), Some("STRING"));
    }
    let read_back = wait_for(
        "the header-reading sink's file",
        Duration::from_secs(60),
        || {
            let got = lines_of(&header_out);
            (got.len() >= lines.len()).then_some(got)
        },
    );
    let want: Vec<String> = lines.iter().map(|l| format!("STRING:{l}")).collect();
    assert_eq!(read_back, want);
    let (code, listed) = w.get("/connector-plugins?connectorsOnly=false");
    assert_eq!(code, 200);
    let types: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == converter)
        .map(|p| p["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types,
        ["converter", "header_converter"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    w.wait_state("conv-source", 1, "RUNNING");
    w.wait_state("conv-sink", 1, "RUNNING");
}

/// A Java source connector's `exactlyOnceSupport` (KIP-618) answers validation of
/// `exactly.once.support=required` as on a Java worker: Apache's Java FileStreamSource
/// (forced to Java) supports it reading a file and not reading standard input, with Connect's
/// messages; a Java connector that does not say is refused with Connect's message too.
#[test]
fn a_java_connectors_exactly_once_support_answers_validation() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let probe = probe_plugin_dir(dir.path(), &classpath);
    let group = unique("java-eos");
    let extra = format!(
        "exactly.once.source.support=enabled\n{}",
        jvm_lines(
            &classpath,
            &format!("{plugin_path},{}", probe.display()),
            &[SOURCE]
        )
    );
    let w = DistributedWorker::start(dir.path(), "w", &bootstrap, &group, &extra);
    w.wait_joined();
    let eos_errors = |class: &str, config: serde_json::Value| -> Vec<String> {
        let (code, v) = w.send(
            "PUT",
            &format!("/connector-plugins/{class}/config/validate"),
            Some(&config.to_string()),
        );
        assert_eq!(code, 200, "{v}");
        v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == "exactly.once.support")
            .map(|c| {
                c["value"]["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let file = json!({"connector.class": SOURCE, "name": "f", "topic": "t", "file": "/tmp/in.txt", "exactly.once.support": "required"});
    assert_eq!(eos_errors(SOURCE, file), Vec::<String>::new());
    let stdin = json!({"connector.class": SOURCE, "name": "s", "topic": "t", "exactly.once.support": "required"});
    assert_eq!(
        eos_errors(SOURCE, stdin),
        ["The connector does not support exactly-once semantics with the provided configuration."]
    );
    let probe_class = "io.tributary.probe.ProbeSourceConnector";
    let silent = json!({"connector.class": probe_class, "name": "p", "topic": "t", "ack.file": "/tmp/a", "exactly.once.support": "required"});
    let errors = eos_errors(probe_class, silent);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "The connector does not implement the API required for preflight validation of exactly-once source support."
        ),
        "{errors:?}"
    );
}

/// Connect data a Java plugin hands back in classes other than the ones Connect's schemas name
/// (a `CharSequence` for a string, a `ByteBuffer` for bytes, as Avro's `Utf8` and buffers from
/// a schema-registry converter; see also `hosted_registry_converter.rs`) reaches Tributary as
/// a Java worker would pass it on: the bridge normalises it by schema type (by class without a
/// schema) before it crosses. A Java transformation (`ProbeLooseValues`, compiled by the test)
/// on a native FileStreamSource gives a schemaless key map with a `StringBuilder` key and a
/// sliced `ByteBuffer` value, a struct value whose BYTES field is a slice, whose array and map
/// got a `StringBuilder` and a read-only direct `ByteBuffer` after the struct was built, and a
/// Decimal (a logical type, left alone), and a schemaless `StringBuilder` header; the records
/// the native JsonConverter writes hold the strings and exactly the slices' bytes.
#[test]
fn java_plugin_values_in_other_classes_are_normalised_by_schema_type() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let java = test_java_dir();
    let plugins = java_plugin_dir(
        dir.path(),
        "loose",
        &classpath,
        &[java.join("ProbeLooseValues.java")],
    );
    let lines = ["alpha", "béta \"quoted\""];
    let input = dir.path().join("in.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let topic = unique("java-loose-values");
    create_topic(&bootstrap, &topic, 1);
    let json = "org.apache.kafka.connect.json.JsonConverter";
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=loose-src\nconnector.class=FileStreamSource\ntasks.max=1\ntopic={topic}\nfile={}\ntransforms=loose\ntransforms.loose.type=io.tributary.probe.ProbeLooseValues\nkey.converter={json}\nvalue.converter={json}\n",
            input.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugins.display().to_string(), &[]),
        &["src.properties"],
    );
    let records = wait_for("the transformed records", Duration::from_secs(60), || {
        let (_, status) = w.get("/connectors/loose-src/status");
        if status["tasks"][0]["state"] == "FAILED" {
            panic!("the task FAILED: {}", status["tasks"][0]["trace"]);
        }
        let recs = read_records(&bootstrap, &topic);
        (recs.len() >= lines.len()).then_some(recs)
    });
    let b64 = |s: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let envelope = |b: &Option<Vec<u8>>| -> serde_json::Value {
        serde_json::from_slice(b.as_deref().unwrap()).unwrap()
    };
    for (r, line) in records.iter().zip(lines) {
        assert_eq!(
            envelope(&r.key),
            json!({"schema": null, "payload": {"line": b64(line)}})
        );
        let value = envelope(&r.value);
        assert_eq!(
            value["payload"],
            json!({
                "text": line,
                "raw": b64(line),
                "parts": [line, "second"],
                "tags": {"k": b64("v"), "k2": b64("w")},
                "amount": "fQ==",
            }),
            "{value}"
        );
        assert_eq!(value["schema"]["name"], "probe.Loose");
        assert_eq!(r.header("loose"), Some(format!("h-{line}")));
    }
}

/// `tasks.max` enforcement (KAFKA-15575, KIP-1004) for a Java connector of the plugin path:
/// one that returns 3 task configs with `tasks.max=1` fails with Connect's
/// `TooManyTasksException` message and starts no task; with `tasks.max.enforce=false` its 3
/// tasks run.
#[test]
fn a_java_connector_generating_too_many_tasks_fails_unless_not_enforced() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let plugin_path = probe_plugin_dir(dir.path(), &classpath);
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path.display().to_string(), &[]),
        &[],
    );
    let config = |enforce: &str| {
        let mut c = json!({
            "connector.class": "io.tributary.probe.ProbeSourceConnector",
            "tasks.max": "1",
            "tasks.generated": "3",
            "topic": unique("probe-greedy"),
            "records": "0",
            "ack.file": dir.path().join(format!("acks-{enforce}.txt")).display().to_string(),
        });
        if !enforce.is_empty() {
            c["tasks.max.enforce"] = json!(enforce);
        }
        c
    };
    for (name, enforce) in [("greedy", ""), ("tolerated", "false")] {
        let (code, body) = w.send(
            "POST",
            "/connectors",
            Some(&json!({"name": name, "config": config(enforce)}).to_string()),
        );
        assert_eq!(code, 201, "{body}");
    }
    let failed = wait_for("greedy to fail", Duration::from_secs(90), || {
        let (_, s) = w.get("/connectors/greedy/status");
        (s["connector"]["state"] == "FAILED").then_some(s)
    });
    let trace = failed["connector"]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.starts_with("org.apache.kafka.connect.runtime.TooManyTasksException: The connector greedy has generated 3 tasks, which is greater than 1, the maximum number of tasks it is configured to create."),
        "{failed}"
    );
    assert_eq!(failed["tasks"], json!([]), "{failed}");
    let status = w.wait_state("tolerated", 3, "RUNNING");
    assert_eq!(status["tasks"].as_array().unwrap().len(), 3, "{status}");
}

/// A source connector whose `version()` and records carry `@VERSION@` (the test writes one
/// copy per version), one task, a few records a second.
const VERSIONED_SOURCE: &str = r#"
package org.example.versioned;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.metrics.Measurable;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

public class VersionedSourceConnector extends SourceConnector {
    static final String VERSION = "@VERSION@";
    private Map<String, String> props;

    @Override public String version() { return VERSION; }
    @Override public void start(Map<String, String> props) { this.props = props; }
    @Override public Class<? extends Task> taskClass() { return VersionedSourceTask.class; }
    @Override public List<Map<String, String>> taskConfigs(int max) { return Collections.singletonList(props); }
    @Override public void stop() { }
    @Override public ConfigDef config() {
        return new ConfigDef().define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Where records go");
    }

    public static class VersionedSourceTask extends SourceTask {
        private String topic;
        private long n;
        @Override public String version() { return VERSION; }
        @Override public void start(Map<String, String> props) { topic = props.get("topic"); }
        @Override public List<SourceRecord> poll() throws InterruptedException {
            Thread.sleep(100);
            List<SourceRecord> out = new ArrayList<>();
            out.add(new SourceRecord(Collections.singletonMap("p", 0), Collections.singletonMap("n", n),
                topic, Schema.STRING_SCHEMA, "v" + VERSION + "-" + n++));
            return out;
        }
        @Override public void stop() { }
    }

    /** A Monitorable transformation (KIP-877) counting the records it sees. */
    public static class Counting<R extends ConnectRecord<R>> implements Transformation<R>, Monitorable,
            org.apache.kafka.connect.components.Versioned {
        private final AtomicLong count = new AtomicLong();
        @Override public String version() { return VERSION; }
        @Override public void withPluginMetrics(PluginMetrics metrics) {
            LinkedHashMap<String, String> tags = new LinkedHashMap<>();
            tags.put("version", VERSION);
            metrics.addMetric(metrics.metricName("records-counted", "Records counted", tags),
                (Measurable) (config, now) -> count.get());
        }
        @Override public R apply(R record) { count.incrementAndGet(); return record; }
        @Override public ConfigDef config() { return new ConfigDef(); }
        @Override public void configure(Map<String, ?> configs) { }
        @Override public void close() { }
    }
}
"#;

/// KIP-891 with two versions of one Java connector on `plugin.path` (two plugin directories):
/// both are listed; `connector.plugin.version` picks the version a connector and its tasks run
/// (a version or a range, the newest without one), shown in their statuses; validation
/// recommends both and refuses a requirement neither meets with Connect's message; the plugin's
/// config is answered per `?version=`. A Java transformation in both versions runs in the one
/// its `transforms.<alias>.plugin.version` asks for; being `Monitorable` (KIP-877), it is handed
/// Kafka's `PluginMetrics`, its metric shown on `/metrics` with Connect's tags.
#[test]
fn two_versions_of_a_java_connector_run_side_by_side() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let class = "org.example.versioned.VersionedSourceConnector";
    let mut roots = Vec::new();
    for version in ["1.0.0", "2.0.0"] {
        let src = dir.path().join(format!("src-{version}"));
        std::fs::create_dir_all(&src).unwrap();
        let file = src.join("VersionedSourceConnector.java");
        std::fs::write(&file, VERSIONED_SOURCE.replace("@VERSION@", version)).unwrap();
        let name = format!("versioned-{}", version.replace('.', "_"));
        roots.push(
            java_plugin_dir(dir.path(), &name, &classpath, &[file])
                .display()
                .to_string(),
        );
    }
    let group = unique("kip891");
    let extra = jvm_lines(&classpath, &roots.join(","), &[]);
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, &extra);
    w.wait_joined();

    let (_, listed) = w.get("/connector-plugins?connectorsOnly=true");
    let versions: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == class)
        .map(|p| p["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.0.0", "2.0.0"], "{listed}");

    // Validation: both versions recommended; a requirement neither meets is refused.
    let validate = |requirement: &str| {
        let body = json!({"connector.class": class, "name": "v", "topic": "t", "connector.plugin.version": requirement});
        let (code, infos) = w.send(
            "PUT",
            &format!("/connector-plugins/{class}/config/validate"),
            Some(&body.to_string()),
        );
        assert_eq!(code, 200, "{infos}");
        infos["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == "connector.plugin.version")
            .unwrap()["value"]
            .clone()
    };
    let ok = validate("[1.0,2.0)");
    assert_eq!(ok["errors"], json!([]), "{ok}");
    assert_eq!(ok["recommended_values"], json!(["1.0.0", "2.0.0"]), "{ok}");
    let bad = validate("3.0.0");
    assert_eq!(
        bad["errors"],
        json!([format!("Plugin {class} not found that matches the version range [3.0.0], available versions: 1.0.0, 2.0.0")]),
        "{bad}"
    );
    let (code, _) = w.get(&format!("/connector-plugins/{class}/config?version=1.0.0"));
    assert_eq!(code, 200);
    let (code, body) = w.get(&format!("/connector-plugins/{class}/config?version=9.9"));
    assert_eq!(code, 400, "{body}");

    // Each connector runs the version it asks for; its task too.
    let mut topics = Vec::new();
    for (name, requirement, runs) in [("old", Some("[1.0,2.0)"), "1.0.0"), ("new", None, "2.0.0")] {
        let topic = unique(name);
        create_topic(&bootstrap, &topic, 1);
        let mut config = json!({"connector.class": class, "tasks.max": "1", "topic": topic});
        if let Some(r) = requirement {
            config["connector.plugin.version"] = json!(r);
        } else {
            config["transforms"] = json!("count");
            config["transforms.count.type"] =
                json!("org.example.versioned.VersionedSourceConnector$Counting");
            config["transforms.count.plugin.version"] = json!("1.0.0");
        }
        let (code, resp) = w.send(
            "POST",
            "/connectors",
            Some(&json!({"name": name, "config": config}).to_string()),
        );
        assert_eq!(code, 201, "{resp}");
        topics.push((name, topic, runs));
    }
    for (name, topic, runs) in &topics {
        let status = w.wait_state(name, 1, "RUNNING");
        assert_eq!(status["connector"]["version"], *runs, "{status}");
        assert_eq!(status["tasks"][0]["version"], *runs, "{status}");
        let values = wait_for(
            &format!("{name}'s records"),
            Duration::from_secs(60),
            || {
                let v = values_and_headers(&bootstrap, topic);
                (v.len() >= 3).then_some(v)
            },
        );
        assert!(
            values
                .iter()
                .all(|(v, _)| v.starts_with(&format!("v{runs}-"))),
            "{name}: {values:?}"
        );
    }
}

/// A Java config provider from `plugin.path` (issue #46; `tests/java/ProbeConfigProvider.java`,
/// standing for a secrets manager's) declared as Connect declares one
/// (`config.providers.<name>.class`, `.param.*`): the worker file's own references resolve
/// through it at startup (its offsets file is named by one), a connector whose file and topic
/// are references runs with the provider's values while its stored config keeps the references,
/// and a provider that throws refuses the connector with the provider's message. The provider
/// checks it is called under its plugin's class loader.
#[test]
fn a_java_config_provider_resolves_worker_and_connector_settings() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let java = test_java_dir();
    // Connect finds config providers through their ServiceLoader manifest only.
    let plugin_path = java_plugin_dir_with_services(
        dir.path(),
        "provider",
        &classpath,
        &[java.join("ProbeConfigProvider.java")],
        &[(
            "org.apache.kafka.common.config.provider.ConfigProvider",
            "io.tributary.probe.ProbeConfigProvider",
        )],
    );
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "alpha\nbeta\ngamma\n").unwrap();
    let topic = unique("provided");
    create_topic(&bootstrap, &topic, 1);
    let offsets = dir.path().join("offsets-named-by-the-provider");
    // Encoded: a connector may not read a file the worker's settings name.
    let encoded_input = format!("b64:{}", base64_of(&input.display().to_string()));
    std::fs::write(
        dir.path().join("src.properties"),
        "name=provided\nconnector.class=FileStreamSource\ntasks.max=1\nfile=${vault:conn:file}\ntopic=${vault:conn:topic}\n",
    )
    .unwrap();
    // The same values, with reloads off.
    std::fs::write(
        dir.path().join("quiet.properties"),
        "name=quiet\nconnector.class=FileStreamSource\ntasks.max=1\nfile=${vault:conn:file}\ntopic=${vault:conn:topic}\nconfig.action.reload=none\n",
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &format!(
            "{}config.providers=vault\nconfig.providers.vault.class=io.tributary.probe.ProbeConfigProvider\nconfig.providers.vault.param.name=vault\nconfig.providers.vault.param.value.worker.offsets={}\nconfig.providers.vault.param.value.conn.file={encoded_input}\nconfig.providers.vault.param.value.conn.topic={topic}\nconfig.providers.vault.param.ttl.conn=1500\noffset.storage.file.filename=${{vault:worker:offsets}}\noffset.flush.interval.ms=200\n",
            jvm_lines(&classpath, &plugin_path.display().to_string(), &[]),
            offsets.display(),
        ),
        &["src.properties", "quiet.properties"],
    );
    w.wait_state("provided", 1, "RUNNING");
    w.wait_state("quiet", 1, "RUNNING");
    let values = wait_for("6 records", Duration::from_secs(60), || {
        let r = read_topic(&bootstrap, &topic);
        (r.len() >= 6).then_some(r)
    });
    assert_eq!(values.len(), 6, "each connector reads the file once");
    assert_eq!(
        values.iter().filter(|v| v.as_slice() == b"alpha").count(),
        2
    );
    // The values' TTL (1.5 s) restarts the connector under config.action.reload=restart (the
    // default), which resolves its config again and so schedules the next restart; never
    // under none.
    wait_for("two TTL restarts", Duration::from_secs(30), || {
        let log = w.log_text();
        (log.matches("restarted connector provided as the values of path 'conn'")
            .count()
            >= 2)
            .then_some(())
    });
    let log = w.log_text();
    assert!(log.contains("Scheduling a restart of connector provided in 1500 ms"));
    assert!(
        !log.contains("Scheduling a restart of connector quiet"),
        "{log}"
    );
    w.wait_state("provided", 1, "RUNNING");
    assert_eq!(
        read_topic(&bootstrap, &topic).len(),
        6,
        "no record read twice"
    );
    // The worker's offsets file is where the provider said.
    wait_for("the offsets file", Duration::from_secs(30), || {
        offsets.exists().then_some(())
    });
    // The stored config keeps the references, as Connect's does.
    let (code, config) = w.get("/connectors/provided/config");
    assert_eq!(code, 200, "{config}");
    assert_eq!(config["file"], json!("${vault:conn:file}"));
    assert_eq!(config["topic"], json!("${vault:conn:topic}"));
    // A provider that throws: the connector is refused with its message.
    let (code, body) = w.send(
        "PUT",
        "/connectors/boom/config",
        Some(
            &json!({"connector.class": "FileStreamSource", "tasks.max": "1",
                "file": input.display().to_string(), "topic": "${vault:boom:topic}"})
            .to_string(),
        ),
    );
    assert!(code >= 400, "{code} {body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("probe provider vault cannot read path boom"),
        "{body}"
    );
    let (code, _) = w.get("/connectors/boom");
    assert_eq!(code, 404);
}

/// Standard padded base64 of `text`.
fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A third-party Java config provider as users get it from Maven Central (Strimzi's
/// `io.strimzi.kafka.EnvVarConfigProvider`, `scripts/plugins config-providers`, its jar
/// unchanged in a plugin directory): a connector's topic, written as `${strimzi:VAR}`, is the
/// worker's environment variable `VAR`, while the stored config keeps the reference.
#[test]
fn a_java_config_provider_from_maven_central_resolves_connector_settings() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = config_provider_plugins() else {
        return;
    };
    let dir = test_dir();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "one\ntwo\n").unwrap();
    let topic = unique("strimzi");
    create_topic(&bootstrap, &topic, 1);
    // The worker inherits this process's environment; the variable is this test's own.
    let var = format!("TRIBUTARY_TEST_TOPIC_{}", std::process::id());
    std::env::set_var(&var, &topic);
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=strimzi\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic=${{strimzi:{var}}}\n",
            input.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &format!(
            "{}config.providers=strimzi\nconfig.providers.strimzi.class=io.strimzi.kafka.EnvVarConfigProvider\n",
            jvm_lines(&classpath, &plugin_path, &[]),
        ),
        &["src.properties"],
    );
    w.wait_state("strimzi", 1, "RUNNING");
    let values = wait_for("2 records", Duration::from_secs(60), || {
        let r = read_topic(&bootstrap, &topic);
        (r.len() >= 2).then_some(r)
    });
    assert_eq!(values, vec![b"one".to_vec(), b"two".to_vec()]);
    let (_, config) = w.get("/connectors/strimzi/config");
    assert_eq!(config["topic"], json!(format!("${{strimzi:{var}}}")));
}

/// A Java source connector that defines its own transactions (KIP-618;
/// `tests/java/ProbeTransactionalSource.java`) under `exactly.once.source.support=enabled` and
/// `transaction.boundary=connector`: validation asks its `canDefineTransactionBoundaries`, its
/// task gets a `TransactionContext`, and the commits and aborts it asks for (naming a record,
/// or for the batch) are honoured as a native task's are: a `read_committed` reader sees
/// exactly the records of the committed transactions, once and in order, across a stop and a
/// resume; the aborted ones reached the log.
#[test]
fn a_java_task_defining_its_own_transactions_has_its_commits_and_aborts_honoured() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let java = test_java_dir();
    let plugin_path = java_plugin_dir(
        dir.path(),
        "txprobe",
        &classpath,
        &[java.join("ProbeTransactionalSource.java")],
    );
    let group = unique("java-eos");
    let topic = unique("java-eos-seq");
    create_topic(&bootstrap, &topic, 1);
    let w = DistributedWorker::start(
        dir.path(),
        "w",
        &bootstrap,
        &group,
        &format!(
            "exactly.once.source.support=enabled\nscheduled.rebalance.max.delay.ms=2000\n{}",
            jvm_lines(&classpath, &plugin_path.display().to_string(), &[])
        ),
    );
    w.wait_joined();
    let class = "io.tributary.probe.ProbeTransactionalSource";
    // Validation asks the Java connector.
    let validate = |extra: serde_json::Value| {
        let mut config = json!({"connector.class": class, "name": "v", "topic": topic,
            "transaction.boundary": "connector"});
        for (k, v) in extra.as_object().unwrap() {
            config[k] = v.clone();
        }
        let (code, v) = w.send(
            "PUT",
            &format!("/connector-plugins/{class}/config/validate"),
            Some(&config.to_string()),
        );
        assert_eq!(code, 200, "{v}");
        v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == "transaction.boundary")
            .map(|c| c["value"]["errors"].clone())
            .unwrap()
    };
    assert_eq!(
        validate(json!({"define.transactions": "fibonacci"})),
        json!([])
    );
    assert_eq!(
        validate(json!({}))[0],
        "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."
    );
    let body = json!({"name": "javatx", "config": {
        "connector.class": class, "tasks.max": "1", "topic": topic,
        "define.transactions": "fibonacci", "transaction.boundary": "connector",
    }});
    let (code, v) = w.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{v}");
    w.wait_state("javatx", 1, "RUNNING");
    use common::eos::{fibonacci_committed, read_committed, uncommitted_count};
    let committed = || read_committed(&bootstrap, &topic).len();
    wait_for("committed records", Duration::from_secs(90), || {
        (committed() >= 150).then_some(())
    });
    assert_eq!(w.send("PUT", "/connectors/javatx/stop", None).0, 204);
    w.wait_state("javatx", 0, "STOPPED");
    let at_stop = committed();
    assert_eq!(w.send("PUT", "/connectors/javatx/resume", None).0, 202);
    wait_for("more committed records", Duration::from_secs(90), || {
        (committed() >= at_stop + 100).then_some(())
    });
    assert_eq!(w.send("PUT", "/connectors/javatx/stop", None).0, 204);
    w.wait_state("javatx", 0, "STOPPED");
    let seqnos: Vec<i64> = read_committed(&bootstrap, &topic)
        .into_iter()
        .map(|(_, v)| String::from_utf8(v).unwrap().parse().unwrap())
        .collect();
    let last = *seqnos.last().unwrap();
    let expected: Vec<i64> = (0..=last).filter(|s| fibonacci_committed(*s)).collect();
    assert_eq!(seqnos, expected);
    assert!(last > 233, "the task did not go on: last seqno {last}");
    assert!(uncommitted_count(&bootstrap, &topic) > seqnos.len());
}
