//! Logs and startup messages of real worker processes (stderr to a file) on a real broker: no
//! ANSI escape codes off a terminal, JSON lines with `TRIBUTARY_LOG_FORMAT=json`, a task's
//! lines carrying its connector and task (Connect's MDC), a misspelled worker key warned about
//! with the closest known key, and an unreachable broker named with `bootstrap.servers`.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// A FlakySource connector file in `dir`, named `name`.
fn flaky_source(dir: &std::path::Path, name: &str) -> String {
    let file = format!("{name}.properties");
    std::fs::write(
        dir.join(&file),
        format!(
            "name={name}\nconnector.class=FlakySource\ntopic={}\ntasks.max=1\nrecords.per.second=5\n",
            unique(name)
        ),
    )
    .unwrap();
    file
}

/// Worker settings of a standalone worker in `dir` (plus `extra` lines).
fn standalone_properties(dir: &std::path::Path, bootstrap: &str, extra: &str) -> String {
    format!(
        "bootstrap.servers={bootstrap}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename={}/offsets\nlisteners=http://127.0.0.1:0\n{extra}\n",
        dir.display()
    )
}

#[test]
fn text_logs_to_a_file_have_no_escape_codes_and_name_the_task() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let conn = flaky_source(dir.path(), "textlog");
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[&conn]);
    w.wait_state("textlog", 1, "RUNNING");
    let line = w.wait_log_line(
        "the task's start line",
        "Started FlakySourceTask",
        Duration::from_secs(60),
    );
    // The task thread's span: `task{connector=textlog task=0}: Started FlakySourceTask …`.
    assert!(
        line.contains("task{connector=textlog task=0}:"),
        "no task context: {line}"
    );
    let log = w.log_text();
    assert!(
        !log.contains('\u{1b}'),
        "escape codes in a log file: {log:?}"
    );
    // Every worker serves the live view, standalone ones too.
    let page = reqwest::blocking::get(format!("{}/ui", w.url)).unwrap();
    assert_eq!(page.status().as_u16(), 200);
}

#[test]
fn json_lines_parse_and_carry_the_connector_and_task() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let conn = flaky_source(dir.path(), "jsonlog");
    std::fs::write(
        dir.path().join("worker.properties"),
        standalone_properties(dir.path(), &bootstrap, ""),
    )
    .unwrap();
    let log = dir.path().join("worker.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "worker.properties", &conn])
        .env("TRIBUTARY_LOG_FORMAT", "json")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let lines = || -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        // Only complete lines: the last one may still be being written.
        text.split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))
            })
            .collect()
    };
    let task_line = wait_for("the task's start line", Duration::from_secs(60), || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "worker exited with {status}: {:?}",
                std::fs::read_to_string(&log)
            );
        }
        lines().into_iter().find(|l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Started FlakySourceTask"))
        })
    });
    child.kill().ok();
    child.wait().ok();
    assert_eq!(task_line["level"], "INFO", "{task_line}");
    assert!(task_line["timestamp"].is_string(), "{task_line}");
    assert_eq!(task_line["span"]["connector"], "jsonlog", "{task_line}");
    assert_eq!(task_line["span"]["task"], 0, "{task_line}");
    // Every line parsed; the worker's own lines have no task context.
    let all = lines();
    assert!(all.iter().any(|l| l["message"]
        .as_str()
        .is_some_and(|m| m.contains("REST server listening"))
        && l.get("span").is_none()));
}

#[test]
fn a_misspelled_worker_key_is_warned_about_with_the_closest_key() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "offset.flush.intervl.ms=1000", &[]);
    let line = w.wait_log_line(
        "the warning",
        "offset.flush.intervl.ms",
        Duration::from_secs(30),
    );
    assert!(line.contains("WARN"), "{line}");
    assert!(
        line.contains("did you mean 'offset.flush.interval.ms'?"),
        "{line}"
    );
}

#[test]
fn an_unreachable_broker_is_reported_naming_bootstrap_servers() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let dir = test_dir();
    std::fs::write(
        dir.path().join("worker.properties"),
        standalone_properties(dir.path(), &address, ""),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["standalone", "worker.properties"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("key 'bootstrap.servers'") && last.contains(&address),
        "{stderr}"
    );
}
