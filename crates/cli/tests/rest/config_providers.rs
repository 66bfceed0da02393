//! Config providers (KIP-297, KIP-887, KIP-993) in real workers: references in the worker file
//! resolve at startup; references in connector configs stay as written in the REST API and the
//! config topic and resolve when the connector and its tasks start; a provider that fails at
//! startup stops the worker with a message naming the file and key.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::json;

const FILE_PROVIDER: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const ENV_PROVIDER: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

fn lines(n: usize, tag: &str) -> Vec<String> {
    (0..n).map(|i| format!("{tag} line {i}")).collect()
}

/// The lines of `path` (none while it does not exist).
fn file_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A standalone worker whose file takes `offset.flush.interval.ms` and its listener's host from
/// the environment (`${env:…}`, within an allowlist) runs a FileStreamSource → Kafka →
/// FileStreamSink pipeline whose `file` settings are `${file:secrets.properties:…}`: the tasks
/// read and write the resolved paths, while the REST API shows the references.
#[test]
fn standalone_pipeline_reads_and_writes_the_resolved_files() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let input = d.join("in.txt");
    let output = d.join("out.txt");
    let secrets = d.join("secrets.properties");
    std::fs::write(
        &secrets,
        format!(
            "in.file={}\nout.file={}\n",
            input.display(),
            output.display()
        ),
    )
    .unwrap();
    let sent = lines(50, "standalone");
    std::fs::write(&input, sent.join("\n") + "\n").unwrap();
    std::fs::write(
        d.join("worker.properties"),
        format!(
            "bootstrap.servers={bootstrap}\n\
             key.converter=org.apache.kafka.connect.storage.StringConverter\n\
             value.converter=org.apache.kafka.connect.storage.StringConverter\n\
             offset.storage.file.filename={dir}/offsets\n\
             offset.flush.interval.ms=${{env:TRIBUTARY_TEST_FLUSH_MS}}\n\
             listeners=http://${{env:TRIBUTARY_TEST_HOST}}:0\n\
             config.providers=file,env\n\
             config.providers.file.class={FILE_PROVIDER}\n\
             config.providers.file.param.allowed.paths={dir}\n\
             config.providers.env.class={ENV_PROVIDER}\n\
             config.providers.env.param.allowlist.pattern=TRIBUTARY_TEST_.*\n",
            dir = d.display()
        ),
    )
    .unwrap();
    let topic = unique("providers");
    let in_ref = format!("${{file:{}:in.file}}", secrets.display());
    let out_ref = format!("${{file:{}:out.file}}", secrets.display());
    std::fs::write(
        d.join("source.properties"),
        format!("name=source\nconnector.class=FileStreamSource\ntasks.max=1\nfile={in_ref}\ntopic={topic}\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("sink.properties"),
        format!("name=sink\nconnector.class=FileStreamSink\ntasks.max=1\nfile={out_ref}\ntopics={topic}\n"),
    )
    .unwrap();
    let worker = StandaloneWorker::spawn_with_env(
        d,
        &["source.properties", "sink.properties"],
        &[
            ("TRIBUTARY_TEST_FLUSH_MS", "500"),
            ("TRIBUTARY_TEST_HOST", "127.0.0.1"),
        ],
    );
    assert!(
        worker.url.starts_with("http://127.0.0.1:"),
        "{}",
        worker.url
    );
    worker.wait_state("source", 1, "RUNNING");
    worker.wait_state("sink", 1, "RUNNING");
    wait_for(
        "the sink to write every line to the resolved file",
        Duration::from_secs(60),
        || (file_lines(&output) == sent).then_some(()),
    );

    let (code, config) = worker.get("/connectors/source/config");
    assert_eq!((code, &config["file"]), (200, &json!(in_ref)), "{config}");
    let (_, config) = worker.get("/connectors/sink/config");
    assert_eq!(config["file"], json!(out_ref), "{config}");
    let (_, tasks) = worker.get("/connectors/sink/tasks");
    assert_eq!(tasks[0]["config"]["file"], json!(out_ref), "{tasks}");
    let (_, info) = worker.get("/connectors/source");
    assert_eq!(info["config"]["file"], json!(in_ref), "{info}");
}

/// A distributed worker with `config.providers=file` limited to one directory: a FileStreamSink
/// created through the REST API writes to the resolved path, while `GET …/config`, `GET …/tasks`
/// and the config topic hold the reference; a reference to a path outside `allowed.paths` is
/// refused at creation.
#[test]
fn distributed_config_topic_keeps_the_reference() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let allowed = d.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let secrets = allowed.join("secrets.properties");
    let output = d.join("distributed-out.txt");
    std::fs::write(&secrets, format!("out.file={}\n", output.display())).unwrap();
    let outside = d.join("outside.properties");
    std::fs::write(&outside, format!("out.file={}\n", output.display())).unwrap();

    let group = unique("providers");
    let extra = format!(
        "config.providers=file\nconfig.providers.file.class={FILE_PROVIDER}\nconfig.providers.file.param.allowed.paths={}\n",
        allowed.display()
    );
    let w = DistributedWorker::start(d, "w1", &bootstrap, &group, &extra);
    w.wait_joined();

    let topic = unique("providers-in");
    create_topic(&bootstrap, &topic, 1);
    let sent = lines(40, "distributed");
    produce_values(&bootstrap, &topic, None, &sent);

    let reference = format!("${{file:{}:out.file}}", secrets.display());
    let body = json!({"name": "sink", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic, "file": reference,
    }});
    let (code, created) = w.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["config"]["file"], json!(reference));
    wait_for(
        "the sink to write every record to the resolved file",
        Duration::from_secs(90),
        || (file_lines(&output) == sent).then_some(()),
    );
    let (_, config) = w.get("/connectors/sink/config");
    assert_eq!(config["file"], json!(reference), "{config}");
    let (_, tasks) = w.get("/connectors/sink/tasks");
    assert_eq!(tasks[0]["config"]["file"], json!(reference), "{tasks}");

    // The config topic: the connector's and the task's records hold the reference, and no
    // record holds the resolved path.
    let records: Vec<(String, String)> =
        read_topic_records(&bootstrap, &format!("{group}-configs"))
            .into_iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(&k).into_owned(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect();
    let value_of = |key: &str| -> serde_json::Value {
        let (_, v) = records
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .unwrap_or_else(|| panic!("no {key} record in {records:?}"));
        serde_json::from_str(v).unwrap()
    };
    assert_eq!(
        value_of("connector-sink")["properties"]["file"],
        json!(reference)
    );
    assert_eq!(
        value_of("task-sink-0")["properties"]["file"],
        json!(reference)
    );
    let resolved = output.display().to_string();
    assert!(
        records.iter().all(|(_, v)| !v.contains(&resolved)),
        "a resolved value reached the config topic: {records:?}"
    );

    // KIP-993: a path outside allowed.paths is refused when the config is validated.
    let body = json!({"name": "outside", "config": {
        "connector.class": "FileStreamSink", "topics": topic,
        "file": format!("${{file:{}:out.file}}", outside.display()),
    }});
    let (code, v) = w.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 500, "{v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("not allowed") && message.contains("config provider 'file'"),
        "{v}"
    );
    assert_eq!(w.get("/connectors").1, json!(["sink"]));
}

/// A provider that fails while the worker file is read, or a provider class Tributary cannot
/// run, stops startup (exit status 1) with a message naming the file and the key. No broker is
/// needed: the worker stops before it contacts Kafka.
#[test]
fn a_failing_provider_in_the_worker_file_stops_startup_naming_the_key() {
    let dir = test_dir();
    let d = dir.path();
    let run = |file: &str, text: String| {
        std::fs::write(d.join(file), text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
            .args(["standalone", file])
            .current_dir(d)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let base = "bootstrap.servers=127.0.0.1:1\nkey.converter=StringConverter\nvalue.converter=StringConverter\noffset.storage.file.filename=offsets\nlisteners=http://127.0.0.1:0\n";
    let file_provider =
        format!("config.providers=file\nconfig.providers.file.class={FILE_PROVIDER}\n");

    let missing = d.join("missing.properties");
    let (code, err) = run(
        "w1.properties",
        format!(
            "{base}{file_provider}offset.flush.interval.ms=${{file:{}:interval}}\n",
            missing.display()
        ),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("w1.properties")
            && err.contains("in configuration offset.flush.interval.ms")
            && err.contains("Could not read properties from file")
            && err.contains("missing.properties"),
        "{err}"
    );

    let (code, err) = run(
        "w2.properties",
        format!("{base}config.providers=vault\nconfig.providers.vault.class=com.example.VaultConfigProvider\n"),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("w2.properties")
            && err.contains("config.providers.vault.class")
            && err.contains("com.example.VaultConfigProvider"),
        "{err}"
    );

    let allowed = d.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let secrets = d.join("secrets.properties");
    std::fs::write(&secrets, "interval=1000\n").unwrap();
    let (code, err) = run(
        "w3.properties",
        format!(
            "{base}{file_provider}config.providers.file.param.allowed.paths={}\noffset.flush.interval.ms=${{file:{}:interval}}\n",
            allowed.display(),
            secrets.display()
        ),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("w3.properties")
            && err.contains("in configuration offset.flush.interval.ms")
            && err.contains("not allowed"),
        "{err}"
    );

    let (code, err) = run(
        "w4.properties",
        format!("{base}{file_provider}config.providers.file.param.allowed.paths=relative/dir\n"),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("w4.properties")
            && err.contains("config.providers.file.param.allowed.paths")
            && err.contains("is not absolute"),
        "{err}"
    );
}
