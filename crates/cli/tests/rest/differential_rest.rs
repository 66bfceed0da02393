//! Differential REST suite: the same scripted sequence of requests against a one-worker Apache
//! Kafka Connect 4.4.0 cluster (`scripts/connect-java`; `CONNECT_VERSION` picks another release)
//! and a one-worker Tributary cluster, each
//! with its own group and internal topics on the same broker. Status codes, JSON bodies and
//! `Location` headers are compared after normalisation (see [`Normaliser`]); every difference
//! fails the suite unless `conformance/rest-allowlist.txt` lists its request id with a reason.
//!
//! Skips (saying why) without `KAFKA_BOOTSTRAP`, without `java`, or when the Connect jars cannot
//! be fetched (`scripts/connect-java fetch`).
//!
//! Connect 4.4 ships no FileStream connectors (`connect-file` is published up to 4.1.1), which
//! the sequence drives: the Java worker loads 4.1.1's from its `plugin.path`
//! (`scripts/jvm-bridge file-plugin-path`, with the compatibility class that jar needs on a
//! 4.2+ runtime), as a Connect 4.4 user keeping them would.
//!
//! Normalisations (each one is something that legitimately differs between two instances):
//! - **side token**: connector names, topics and file names carry a per-side token (`javaNNN` /
//!   `tribNNN`) so that the two clusters' sink consumer groups (`connect-<name>`) and topics do
//!   not meet on the shared broker; the token is replaced by `<P>` in every string and key;
//! - **worker id / base URL**: `127.0.0.1:<port>` of each worker becomes `<worker>`, and its
//!   `http://127.0.0.1:<port>` becomes `<base>` (in `worker_id`, `Location`, messages);
//! - **traces**: any `trace` value becomes `<trace>` (Java and Rust stack traces differ);
//! - **plugin versions**: a string `version` (plugin lists, KIP-891 connector and task statuses),
//!   and the default, value and recommended values of a KIP-891 `*.plugin.version` key, become
//!   `<version>`: a plugin's build version, the Kafka release for Java's FileStream connectors
//!   and the crate's for Tributary's (a `null` version stays `null`);
//! - **root**: `commit` becomes `<commit>` (a git sha vs `tributary-<version>`); `version` and
//!   `kafka_cluster_id` are compared as they are (same release, same broker);
//! - **logger timestamps**: a numeric `last_modified` becomes `<ts>`;
//! - **`GET /connectors`**: the array of names is sorted (Java's order is a hash set's);
//! - **plugin lists**: only entries whose `class` both sides list are compared (each runtime
//!   ships different extra plugins: Tributary's FlakySource, Java's MirrorMaker-free classpath).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// The repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One side of the comparison: a base URL, a token and the process behind it.
struct Side {
    label: &'static str,
    base: String,
    token: String,
    worker: String,
    java: Option<Child>,
    java_log: Option<PathBuf>,
    _trib: Option<DistributedWorker>,
    bootstrap: String,
    /// The worker group's status topic.
    status_topic: String,
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(c) = self.java.as_mut() {
            // Best effort: the Java worker may have exited already.
            c.kill().ok();
            c.wait().ok();
        }
    }
}

/// A response reduced to what is compared.
#[derive(Debug, Clone, PartialEq)]
struct Reply {
    status: u16,
    body: Value,
    location: Option<String>,
}

impl Side {
    fn request(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(100))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut req = client.request(method.parse().unwrap(), format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let r = req
            .send()
            .unwrap_or_else(|e| panic!("{} {method} {path}: {e}", self.label));
        let status = r.status().as_u16();
        let location = r
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = r.text().unwrap_or_default();
        let body = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Reply {
            status,
            body,
            location,
        }
    }

    fn status_of(&self, connector: &str) -> Option<Value> {
        let r = self.request("GET", &format!("/connectors/{connector}/status"), None);
        (r.status == 200).then_some(r.body)
    }

    fn java_log_tail(&self) -> String {
        let Some(p) = &self.java_log else {
            return String::new();
        };
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(p) {
            // An unreadable log (e.g. cut mid-character) shows as empty text.
            f.read_to_string(&mut s).ok();
        }
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// What to wait for, on both sides, after a request.
#[derive(Clone)]
enum Wait {
    None,
    /// The connector and exactly `n` tasks in `state`.
    State(&'static str, &'static str, usize),
    /// The connector `STOPPED` with no tasks.
    Stopped(&'static str),
    /// `GET /connectors/{c}` answers 404.
    Gone(&'static str),
    /// `GET /connectors/{c}/tasks` shows task 0 with `key=value` in its config, and the
    /// connector and its one task RUNNING.
    TaskConfig(&'static str, &'static str, &'static str),
    /// `GET /connectors/{c}/topics` lists at least one topic.
    Topics(&'static str),
    /// A restart carried out: the status topic holds, written after the request, a RUNNING
    /// record of the connector and of its first `restarted` tasks (a status read right after
    /// the 202 may still be the one from before the restart); then as [`Wait::State`] RUNNING
    /// with `tasks` tasks. (connector, restarted, tasks)
    Restarted(&'static str, usize, usize),
}

/// How a response is reduced before comparison.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    Full,
    /// A plugin list: only classes both sides list.
    PluginIntersection,
    /// An array of names: sorted.
    SortedNames,
}

struct Step {
    id: &'static str,
    method: &'static str,
    path: String,
    body: Option<String>,
    wait: Wait,
    compare: Compare,
}

fn step(id: &'static str, method: &'static str, path: &str, body: Option<Value>) -> Step {
    Step {
        id,
        method,
        path: path.to_string(),
        body: body.map(|b| b.to_string()),
        wait: Wait::None,
        compare: Compare::Full,
    }
}

fn raw(id: &'static str, method: &'static str, path: &str, body: &str) -> Step {
    Step {
        id,
        method,
        path: path.to_string(),
        body: Some(body.to_string()),
        wait: Wait::None,
        compare: Compare::Full,
    }
}

impl Step {
    fn wait(mut self, w: Wait) -> Step {
        self.wait = w;
        self
    }
    fn compare(mut self, c: Compare) -> Step {
        self.compare = c;
        self
    }
}

/// `{P}` stands for the side token and `{D}` for the test directory in paths and bodies.
fn script() -> Vec<Step> {
    use Compare::*;
    let src = |extra: Value| {
        let mut c = json!({
            "connector.class": "FileStreamSource",
            "tasks.max": "1",
            "file": "{D}/{P}-in.txt",
            "topic": "{P}-lines",
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let sink = json!({
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "tasks.max": "1",
        "file": "{D}/{P}-out.txt",
        "topics": "{P}-lines",
    });
    vec![
        step("root", "GET", "/", None),
        step("health", "GET", "/health", None),
        step("list-empty", "GET", "/connectors", None),
        step("plugins", "GET", "/connector-plugins", None).compare(PluginIntersection),
        step(
            "plugins-all",
            "GET",
            "/connector-plugins?connectorsOnly=false",
            None,
        )
        .compare(PluginIntersection),
        step(
            "create-source",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-src", "config": src(json!({}))})),
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "create-duplicate",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-src", "config": src(json!({}))})),
        ),
        step(
            "create-sink",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-sink", "config": sink})),
        )
        .wait(Wait::State("{P}-sink", "RUNNING", 1)),
        step("list", "GET", "/connectors", None).compare(SortedNames),
        step(
            "list-expand-status",
            "GET",
            "/connectors?expand=status",
            None,
        ),
        step("list-expand-info", "GET", "/connectors?expand=info", None),
        step(
            "list-expand-both",
            "GET",
            "/connectors?expand=status&expand=info",
            None,
        ),
        step("get", "GET", "/connectors/{P}-src", None),
        step("get-sink", "GET", "/connectors/{P}-sink", None),
        step("config", "GET", "/connectors/{P}-src/config", None),
        step("status", "GET", "/connectors/{P}-src/status", None),
        step("status-sink", "GET", "/connectors/{P}-sink/status", None),
        step("tasks", "GET", "/connectors/{P}-src/tasks", None),
        step(
            "tasks-config",
            "GET",
            "/connectors/{P}-src/tasks-config",
            None,
        ),
        step(
            "task-status",
            "GET",
            "/connectors/{P}-src/tasks/0/status",
            None,
        ),
        step(
            "task-status-bad-id",
            "GET",
            "/connectors/{P}-src/tasks/7/status",
            None,
        ),
        // Active topics are recorded asynchronously on both sides: wait for them first.
        step(
            "task-status-not-int",
            "GET",
            "/connectors/{P}-src/tasks/x/status",
            None,
        )
        .wait(Wait::Topics("{P}-src")),
        step("topics", "GET", "/connectors/{P}-src/topics", None),
        step("topics-again", "GET", "/connectors/{P}-src/topics", None),
        step("topics-unknown", "GET", "/connectors/{P}-nope/topics", None),
        step(
            "put-config-update",
            "PUT",
            "/connectors/{P}-src/config",
            Some(src(json!({"batch.size": "100"}))),
        )
        .wait(Wait::TaskConfig("{P}-src", "batch.size", "100")),
        step(
            "put-config-create",
            "PUT",
            "/connectors/{P}-src2/config",
            Some(src(
                json!({"topic": "{P}-lines2", "file": "{D}/{P}-in2.txt"}),
            )),
        )
        .wait(Wait::State("{P}-src2", "RUNNING", 1)),
        step(
            "patch-config",
            "PATCH",
            "/connectors/{P}-src2/config",
            Some(json!({"batch.size": "50"})),
        )
        .wait(Wait::TaskConfig("{P}-src2", "batch.size", "50")),
        step(
            "patch-config-remove",
            "PATCH",
            "/connectors/{P}-src2/config",
            Some(json!({"batch.size": null})),
        )
        .wait(Wait::State("{P}-src2", "RUNNING", 1)),
        step(
            "config-after-patch",
            "GET",
            "/connectors/{P}-src2/config",
            None,
        ),
        step(
            "patch-unknown",
            "PATCH",
            "/connectors/{P}-nope/config",
            Some(json!({"batch.size": "5"})),
        ),
        step(
            "patch-invalid",
            "PATCH",
            "/connectors/{P}-src2/config",
            Some(json!({"tasks.max": "0"})),
        ),
        step(
            "put-name-mismatch",
            "PUT",
            "/connectors/{P}-src2/config",
            Some(src(json!({"name": "{P}-other"}))),
        ),
        step(
            "post-name-mismatch",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-a", "config": src(json!({"name": "{P}-b"}))})),
        ),
        step(
            "post-missing-class",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-noclass", "config": {}})),
        ),
        step(
            "post-missing-class-2keys",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-noclass", "config": {"topic": "t"}})),
        ),
        step(
            "post-unknown-class",
            "POST",
            "/connectors",
            Some(
                json!({"name": "{P}-unk", "config": {"connector.class": "com.example.NoSuchConnector"}}),
            ),
        ),
        step(
            "post-sink-no-topics",
            "POST",
            "/connectors",
            Some(
                json!({"name": "{P}-badsink", "config": {"connector.class": "FileStreamSink", "file": "{D}/{P}-x.txt"}}),
            ),
        ),
        step(
            "post-sink-both-topics",
            "POST",
            "/connectors",
            Some(
                json!({"name": "{P}-badsink", "config": {"connector.class": "FileStreamSink", "topics": "a", "topics.regex": "b.*"}}),
            ),
        ),
        step(
            "post-tasks-max-text",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-badtm", "config": src(json!({"tasks.max": "many"}))})),
        ),
        step(
            "post-tasks-max-zero",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-badtm", "config": src(json!({"tasks.max": "0"}))})),
        ),
        step(
            "post-empty-name",
            "POST",
            "/connectors",
            Some(json!({"name": "", "config": src(json!({}))})),
        ),
        step(
            "post-numeric-values",
            "POST",
            "/connectors",
            Some(
                json!({"name": "{P}-num", "config": {"connector.class": "FileStreamSource", "tasks.max": 0, "topic": "t"}}),
            ),
        ),
        raw("post-malformed-json", "POST", "/connectors", "{\"name\": "),
        step(
            "post-no-config",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-nocfg"})),
        ),
        step(
            "post-unknown-field",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-uf", "config": src(json!({})), "bogus": 1})),
        ),
        raw(
            "put-config-malformed",
            "PUT",
            "/connectors/{P}-src2/config",
            "[1,2",
        ),
        step(
            "put-config-array",
            "PUT",
            "/connectors/{P}-src2/config",
            Some(json!(["a"])),
        ),
        step("pause", "PUT", "/connectors/{P}-src/pause", None)
            .wait(Wait::State("{P}-src", "PAUSED", 1)),
        step("status-paused", "GET", "/connectors/{P}-src/status", None),
        step("pause-again", "PUT", "/connectors/{P}-src/pause", None),
        step("pause-unknown", "PUT", "/connectors/{P}-nope/pause", None),
        step("resume", "PUT", "/connectors/{P}-src/resume", None)
            .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step("resume-unknown", "PUT", "/connectors/{P}-nope/resume", None),
        step("stop", "PUT", "/connectors/{P}-src/stop", None).wait(Wait::Stopped("{P}-src")),
        step("status-stopped", "GET", "/connectors/{P}-src/status", None),
        step("tasks-stopped", "GET", "/connectors/{P}-src/tasks", None),
        step("get-stopped", "GET", "/connectors/{P}-src", None),
        step("stop-again", "PUT", "/connectors/{P}-src/stop", None),
        step("stop-unknown", "PUT", "/connectors/{P}-nope/stop", None),
        // The offsets API (KIP-875) on the stopped source and the running sink.
        step("offsets-src", "GET", "/connectors/{P}-src/offsets", None),
        step(
            "offsets-unknown",
            "GET",
            "/connectors/{P}-nope/offsets",
            None,
        ),
        step(
            "offsets-patch-running",
            "PATCH",
            "/connectors/{P}-sink/offsets",
            Some(
                json!({"offsets": [{"partition": {"kafka_topic": "{P}-lines", "kafka_partition": 0}, "offset": {"kafka_offset": 0}}]}),
            ),
        ),
        step(
            "offsets-delete-running",
            "DELETE",
            "/connectors/{P}-sink/offsets",
            None,
        ),
        step(
            "offsets-delete-unknown",
            "DELETE",
            "/connectors/{P}-nope/offsets",
            None,
        ),
        raw(
            "offsets-patch-no-offsets",
            "PATCH",
            "/connectors/{P}-src/offsets",
            "{}",
        ),
        step(
            "offsets-patch-empty",
            "PATCH",
            "/connectors/{P}-src/offsets",
            Some(json!({"offsets": []})),
        ),
        step(
            "offsets-patch-bad-position",
            "PATCH",
            "/connectors/{P}-src/offsets",
            Some(
                json!({"offsets": [{"partition": {"filename": "{D}/{P}-in.txt"}, "offset": {"position": "7"}}]}),
            ),
        ),
        step(
            "offsets-patch-no-filename",
            "PATCH",
            "/connectors/{P}-src/offsets",
            Some(json!({"offsets": [{"partition": {"file": "x"}, "offset": {"position": 7}}]})),
        ),
        step(
            "offsets-patch-nested",
            "PATCH",
            "/connectors/{P}-src/offsets",
            Some(
                json!({"offsets": [{"partition": {"filename": "{D}/{P}-in.txt"}, "offset": {"position": 7, "x": {"y": 1}}}]}),
            ),
        ),
        step(
            "offsets-patch",
            "PATCH",
            "/connectors/{P}-src/offsets",
            Some(
                json!({"offsets": [{"partition": {"filename": "{D}/{P}-in.txt"}, "offset": {"position": 7}}]}),
            ),
        ),
        step(
            "offsets-src-patched",
            "GET",
            "/connectors/{P}-src/offsets",
            None,
        ),
        step(
            "offsets-delete",
            "DELETE",
            "/connectors/{P}-src/offsets",
            None,
        ),
        step(
            "offsets-src-reset",
            "GET",
            "/connectors/{P}-src/offsets",
            None,
        ),
        step(
            "offsets-delete-again",
            "DELETE",
            "/connectors/{P}-src/offsets",
            None,
        ),
        step("stop-sink", "PUT", "/connectors/{P}-sink/stop", None)
            .wait(Wait::Stopped("{P}-sink")),
        step("offsets-sink", "GET", "/connectors/{P}-sink/offsets", None),
        step(
            "offsets-sink-patch-no-partition-key",
            "PATCH",
            "/connectors/{P}-sink/offsets",
            Some(json!({"offsets": [{"partition": {"kafka_topic": "{P}-lines"}, "offset": {"kafka_offset": 1}}]})),
        ),
        step(
            "offsets-sink-patch-bad-offset",
            "PATCH",
            "/connectors/{P}-sink/offsets",
            Some(json!({"offsets": [{"partition": {"kafka_topic": "{P}-lines", "kafka_partition": 0}, "offset": {"kafka_offset": "one"}}]})),
        ),
        step(
            "offsets-sink-patch",
            "PATCH",
            "/connectors/{P}-sink/offsets",
            Some(json!({"offsets": [{"partition": {"kafka_topic": "{P}-lines", "kafka_partition": "0"}, "offset": {"kafka_offset": 1}}]})),
        ),
        step("offsets-sink-patched", "GET", "/connectors/{P}-sink/offsets", None),
        step("offsets-sink-delete", "DELETE", "/connectors/{P}-sink/offsets", None),
        step("offsets-sink-reset", "GET", "/connectors/{P}-sink/offsets", None),
        step("resume-sink", "PUT", "/connectors/{P}-sink/resume", None)
            .wait(Wait::State("{P}-sink", "RUNNING", 1)),
        // Topic creation settings Connect checks only when the connector starts (KIP-158).
        step(
            "create-topic-creation-missing-rf",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-tc", "config": src(json!({"topic.creation.default.partitions": "3"}))})),
        )
        .wait(Wait::State("{P}-tc", "FAILED", 0)),
        step("status-topic-creation-missing-rf", "GET", "/connectors/{P}-tc/status", None),
        step("delete-topic-creation", "DELETE", "/connectors/{P}-tc", None)
            .wait(Wait::Gone("{P}-tc")),
        step(
            "resume-after-stop",
            "PUT",
            "/connectors/{P}-src/resume",
            None,
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "restart-legacy",
            "POST",
            "/connectors/{P}-src/restart",
            None,
        )
        .wait(Wait::Restarted("{P}-src", 0, 1)),
        step(
            "restart-explicit-false",
            "POST",
            "/connectors/{P}-src/restart?includeTasks=false&onlyFailed=false",
            None,
        )
        .wait(Wait::Restarted("{P}-src", 0, 1)),
        step(
            "restart-include-tasks",
            "POST",
            "/connectors/{P}-src/restart?includeTasks=true",
            None,
        )
        .wait(Wait::Restarted("{P}-src", 1, 1)),
        step(
            "restart-only-failed",
            "POST",
            "/connectors/{P}-src/restart?onlyFailed=true",
            None,
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "restart-both",
            "POST",
            "/connectors/{P}-src/restart?includeTasks=true&onlyFailed=true",
            None,
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "restart-include-tasks-all",
            "POST",
            "/connectors/{P}-src/restart?includeTasks=true&onlyFailed=false",
            None,
        )
        .wait(Wait::Restarted("{P}-src", 1, 1)),
        step(
            "restart-bool-garbage",
            "POST",
            "/connectors/{P}-src/restart?includeTasks=yes&onlyFailed=TRUE",
            None,
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "restart-unknown",
            "POST",
            "/connectors/{P}-nope/restart",
            None,
        ),
        step(
            "restart-unknown-kip745",
            "POST",
            "/connectors/{P}-nope/restart?includeTasks=true",
            None,
        ),
        step(
            "task-restart",
            "POST",
            "/connectors/{P}-src/tasks/0/restart",
            None,
        )
        .wait(Wait::State("{P}-src", "RUNNING", 1)),
        step(
            "task-restart-bad-id",
            "POST",
            "/connectors/{P}-src/tasks/9/restart",
            None,
        ),
        step(
            "task-restart-unknown",
            "POST",
            "/connectors/{P}-nope/tasks/0/restart",
            None,
        ),
        step(
            "validate-source",
            "PUT",
            "/connector-plugins/FileStreamSourceConnector/config/validate",
            Some(
                json!({"connector.class": "FileStreamSource", "name": "v", "topic": "t", "file": "/tmp/x"}),
            ),
        ),
        step(
            "validate-sink-no-topics",
            "PUT",
            "/connector-plugins/FileStreamSinkConnector/config/validate",
            Some(
                json!({"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "name": "v"}),
            ),
        ),
        step(
            "validate-bad-tasks-max",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(
                json!({"connector.class": "FileStreamSource", "name": "v", "topic": "t", "tasks.max": "-1"}),
            ),
        ),
        // A key whose value a config provider resolves (issue #42): Connect 4.4 reports it as
        // written, with one error that does not quote the resolved value, in validation and in
        // the 400 of a create.
        step(
            "validate-resolved-secret",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(
                json!({"connector.class": "FileStreamSource", "name": "v", "topic": "t", "tasks.max": "${file:{D}/diff-secrets.properties:db.secret}"}),
            ),
        ),
        step(
            "create-resolved-secret",
            "POST",
            "/connectors",
            Some(
                json!({"name": "{P}-secret", "config": {"connector.class": "FileStreamSource", "topic": "t", "tasks.max": "${file:{D}/diff-secrets.properties:db.secret}"}}),
            ),
        ),
        // Transformation and predicate keys that do not depend on which transformations the
        // two runtimes ship: an unknown class, a missing type, a duplicate alias, a connector
        // class given as a transformation, `negate` without `predicate`, a predicate without
        // its type.
        step(
            "validate-transforms",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({
                "connector.class": "FileStreamSource", "name": "v", "topic": "t",
                "transforms": "a, a,b,c,d",
                "transforms.a.type": "com.example.Nope",
                "transforms.c.type": "FileStreamSink",
                "transforms.d.type": "com.example.AlsoNope",
                "transforms.d.negate": "true",
                "predicates": "p",
            })),
        ),
        // With the built-in transformations: a valid chain with a predicate (embedded keys,
        // their order, groups and version keys), and a bad value of a transformation's own
        // key (named without its prefix, as Connect's embedded validators name it) and of an
        // implicit key (named with it).
        step(
            "validate-transforms-chain",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({
                "connector.class": "FileStreamSource", "name": "v", "topic": "t",
                "transforms": "route,insert",
                "transforms.route.type": "RegexRouter",
                "transforms.route.regex": "(.*)",
                "transforms.route.replacement": "$1-x",
                "transforms.route.predicate": "isT",
                "transforms.route.negate": "true",
                "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.insert.static.field": "f",
                "transforms.insert.static.value": "v",
                "predicates": "isT",
                "predicates.isT.type": "TopicNameMatches",
                "predicates.isT.pattern": "t",
            })),
        ),
        step(
            "validate-transforms-bad-values",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({
                "connector.class": "FileStreamSource", "name": "v", "topic": "t",
                "transforms": "h,abstract",
                "transforms.h.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
                "transforms.h.fields": "a",
                "transforms.h.headers": "b",
                "transforms.h.operation": "bad",
                "transforms.h.negate": "maybe",
                "transforms.h.predicate": "p",
                "transforms.abstract.type": "org.apache.kafka.connect.transforms.InsertField",
            })),
        ),
        // Connector-level converters (KAFKA-13328/13329): their own keys are validated
        // against their `ConfigDef` and listed, prefixed, in their own groups; errors go on
        // the converter's key. A header converter's settings are only checked against its
        // `ConfigDef` (StringConverter's encoding has no validator), so a bad encoding is
        // accepted. A class that is not a converter is refused on the class key.
        step(
            "validate-converters",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({
                "connector.class": "FileStreamSource", "name": "v", "topic": "t",
                "key.converter": "org.apache.kafka.connect.json.JsonConverter",
                "key.converter.decimal.format": "FOO",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "maybe",
                "header.converter": "org.apache.kafka.connect.storage.StringConverter",
                "header.converter.converter.encoding": "NOPE-8",
            })),
        ),
        step(
            "validate-converter-not-a-converter",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({
                "connector.class": "FileStreamSource", "name": "v", "topic": "t",
                "value.converter": "java.lang.String",
                "value.converter.schemas.enable": "maybe",
            })),
        ),
        step(
            "post-converter-bad-values",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-conv", "config": src(json!({
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "maybe",
            }))})),
        ),
        step(
            "post-header-converter-encoding",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-hconv", "config": src(json!({
                "header.converter": "org.apache.kafka.connect.storage.StringConverter",
                "header.converter.converter.encoding": "NOPE-8",
            }))})),
        ),
        step("delete-header-converter-encoding", "DELETE", "/connectors/{P}-hconv", None)
            .wait(Wait::Gone("{P}-hconv")),
        step(
            "post-transforms-bad-values",
            "POST",
            "/connectors",
            Some(json!({"name": "{P}-xf", "config": src(json!({
                "transforms": "h",
                "transforms.h.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
                "transforms.h.fields": "a",
                "transforms.h.headers": "b",
                "transforms.h.operation": "bad",
                "transforms.h.negate": "maybe",
                "transforms.h.predicate": "p",
            }))})),
        ),
        step(
            "plugin-config-transformation",
            "GET",
            "/connector-plugins/org.apache.kafka.connect.transforms.RegexRouter/config",
            None,
        ),
        step(
            "plugin-config-predicate",
            "GET",
            "/connector-plugins/TopicNameMatches/config",
            None,
        ),
        step(
            "plugin-config-abstract-transformation",
            "GET",
            "/connector-plugins/org.apache.kafka.connect.transforms.InsertField/config",
            None,
        ),
        step(
            "plugin-config-ambiguous-alias",
            "GET",
            "/connector-plugins/Value/config",
            None,
        ),
        step(
            "validate-no-class",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            Some(json!({"name": "v"})),
        ),
        step(
            "validate-unknown-class",
            "PUT",
            "/connector-plugins/Nope/config/validate",
            Some(json!({"connector.class": "com.example.Nope", "name": "v"})),
        ),
        raw(
            "validate-malformed",
            "PUT",
            "/connector-plugins/FileStreamSource/config/validate",
            "{",
        ),
        step(
            "plugin-config",
            "GET",
            "/connector-plugins/FileStreamSinkConnector/config",
            None,
        ),
        step(
            "plugin-config-unknown",
            "GET",
            "/connector-plugins/com.example.Nope/config",
            None,
        ),
        step("logger-root", "GET", "/admin/loggers/root", None),
        step(
            "logger-put",
            "PUT",
            "/admin/loggers/org.example.differential",
            Some(json!({"level": "DEBUG"})),
        ),
        step(
            "logger-get",
            "GET",
            "/admin/loggers/org.example.differential",
            None,
        ),
        step(
            "logger-put-bad-level",
            "PUT",
            "/admin/loggers/org.example.differential",
            Some(json!({"level": "LOUD"})),
        ),
        step(
            "logger-put-no-level",
            "PUT",
            "/admin/loggers/org.example.differential",
            Some(json!({})),
        ),
        step(
            "logger-unknown",
            "GET",
            "/admin/loggers/org.example.never.set",
            None,
        ),
        step("delete", "DELETE", "/connectors/{P}-src2", None).wait(Wait::Gone("{P}-src2")),
        step("get-deleted", "GET", "/connectors/{P}-src2", None),
        step("delete-unknown", "DELETE", "/connectors/{P}-nope", None),
        step("get-unknown", "GET", "/connectors/{P}-nope", None),
        step("config-unknown", "GET", "/connectors/{P}-nope/config", None),
        step("status-unknown", "GET", "/connectors/{P}-nope/status", None),
        step("tasks-unknown", "GET", "/connectors/{P}-nope/tasks", None),
        step(
            "task-status-unknown",
            "GET",
            "/connectors/{P}-nope/tasks/0/status",
            None,
        ),
        step("unknown-path", "GET", "/no/such/path", None),
        step("unknown-subpath", "GET", "/connectors/{P}-src/nope", None),
        step("method-not-allowed", "DELETE", "/connectors", None),
        step("delete-sink", "DELETE", "/connectors/{P}-sink", None).wait(Wait::Gone("{P}-sink")),
        step("delete-source", "DELETE", "/connectors/{P}-src", None).wait(Wait::Gone("{P}-src")),
        step("list-end", "GET", "/connectors", None),
    ]
}

/// Applies the normalisations documented at the top of this file.
struct Normaliser<'a> {
    side: &'a Side,
    dir: String,
    /// `GET /`, whose `version` is compared as it is.
    root: bool,
}

impl Normaliser<'_> {
    fn string(&self, s: &str) -> String {
        s.replace(&self.side.base, "<base>")
            .replace(&self.side.worker, "<worker>")
            .replace(&self.side.token, "<P>")
            .replace(&self.dir, "<D>")
    }

    fn value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.string(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::Object(m) => {
                // The definition and value of a KIP-891 `*.plugin.version` key carry plugin
                // versions too.
                let plugin_version = m
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.ends_with(".plugin.version"));
                Value::Object(
                    m.iter()
                        .map(|(k, x)| {
                            let x = match (k.as_str(), x) {
                                ("default_value" | "value", Value::String(_)) if plugin_version => {
                                    json!("<version>")
                                }
                                ("recommended_values", Value::Array(a)) if plugin_version => {
                                    Value::Array(a.iter().map(|_| json!("<version>")).collect())
                                }
                                ("trace", Value::String(_)) => json!("<trace>"),
                                ("last_modified", Value::Number(_)) => json!("<ts>"),
                                ("version", Value::String(_)) if !self.root => json!("<version>"),
                                _ => self.value(x),
                            };
                            (self.string(k), x)
                        })
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }

    fn reply(&self, step: &Step, r: &Reply) -> Reply {
        let mut body = self.value(&r.body);
        if step.id == "root" {
            if let Some(o) = body.as_object_mut() {
                if o.contains_key("commit") {
                    o.insert("commit".into(), json!("<commit>"));
                }
            }
        }
        if step.compare == Compare::PluginIntersection {
            if let Some(a) = body.as_array_mut() {
                for p in a.iter_mut().filter_map(Value::as_object_mut) {
                    if p.contains_key("version") {
                        p.insert("version".into(), json!("<version>"));
                    }
                }
            }
        }
        if step.compare == Compare::SortedNames {
            if let Some(a) = body.as_array_mut() {
                a.sort_by_key(|x| x.to_string());
            }
        }
        Reply {
            status: r.status,
            body: keyed_by_name(body),
            location: r.location.as_deref().map(|l| self.string(l)),
        }
    }
}

/// Config lists become objects keyed by config name, so that the allowlist can name one key's
/// field (`/configs/tasks.max/definition/documentation`) and a key one side lacks shows as
/// that key alone: an array whose elements all have a distinct string `name` (`ConfigKeyInfo`)
/// or `value.name` (`ConfigInfo`).
fn keyed_by_name(v: Value) -> Value {
    match v {
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().map(keyed_by_name).collect();
            let name = |x: &Value| {
                x["name"]
                    .as_str()
                    .or_else(|| x["value"]["name"].as_str())
                    .map(str::to_string)
            };
            let names: Option<Vec<String>> = items.iter().map(name).collect();
            match names {
                Some(n)
                    if !n.is_empty()
                        && items.iter().all(Value::is_object)
                        && n.iter().collect::<BTreeSet<_>>().len() == n.len() =>
                {
                    Value::Object(n.into_iter().zip(items).collect())
                }
                _ => Value::Array(items),
            }
        }
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, x)| (k, keyed_by_name(x))).collect())
        }
        other => other,
    }
}

/// The leaf paths (JSON pointers; `status`, `location`) where two replies differ.
fn differing_fields(a: &Reply, b: &Reply) -> Vec<String> {
    fn walk(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<String>) {
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let seg = k.replace('~', "~0").replace('/', "~1");
                    walk(format!("{path}/{seg}"), x.get(k), y.get(k), out);
                }
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    walk(format!("{path}/{i}"), Some(p), Some(q), out);
                }
            }
            (x, y) if x != y => out.push(if path.is_empty() { "/".into() } else { path }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if a.status != b.status {
        out.push("status".into());
    }
    if a.location != b.location {
        out.push("location".into());
    }
    walk(String::new(), Some(&a.body), Some(&b.body), &mut out);
    out
}

/// The concrete pointers `pattern` (a JSON pointer whose `*` segments match every member or
/// element) names in either value.
fn expand(pattern: &str, a: &Value, b: &Value) -> Vec<String> {
    fn go(prefix: String, rest: &[&str], vals: &[&Value], out: &mut Vec<String>) {
        let Some((seg, tail)) = rest.split_first() else {
            out.push(prefix);
            return;
        };
        let mut keys: BTreeSet<String> = BTreeSet::new();
        if *seg == "*" {
            for v in vals {
                match v {
                    Value::Object(m) => {
                        keys.extend(m.keys().map(|k| k.replace('~', "~0").replace('/', "~1")))
                    }
                    Value::Array(x) => keys.extend((0..x.len()).map(|i| i.to_string())),
                    _ => {}
                }
            }
        } else {
            keys.insert(seg.to_string());
        }
        for k in keys {
            let p = format!("{prefix}/{k}");
            let next: Vec<&Value> = vals
                .iter()
                .filter_map(|v| v.pointer(&format!("/{k}")))
                .collect();
            if next.is_empty() {
                out.push(p);
            } else {
                go(p, tail, &next, out);
            }
        }
    }
    let segs: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let mut out = Vec::new();
    go(String::new(), &segs, &[a, b], &mut out);
    out
}

/// Removes the field at `pointer` (its parent keeps the rest).
fn remove_field(v: &mut Value, pointer: &str) {
    let (parent, last) = match pointer.rfind('/') {
        Some(i) => (&pointer[..i], &pointer[i + 1..]),
        None => return,
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&last);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = last.parse::<usize>() {
                if i < a.len() {
                    a[i] = Value::Null;
                }
            }
        }
        _ => {}
    }
}

/// Takes the allowlisted `field` out of both replies; returns whether it differed there.
fn tolerate(j: &mut Reply, t: &mut Reply, field: &str) -> bool {
    match field {
        "status" => {
            let differed = j.status != t.status;
            (j.status, t.status) = (0, 0);
            differed
        }
        "location" => {
            let differed = j.location != t.location;
            (j.location, t.location) = (None, None);
            differed
        }
        pattern => {
            let mut differed = false;
            for p in expand(pattern, &j.body, &t.body) {
                if j.body.pointer(&p) != t.body.pointer(&p) {
                    differed = true;
                }
                remove_field(&mut j.body, &p);
                remove_field(&mut t.body, &p);
            }
            differed
        }
    }
}

fn fill(s: &str, side: &Side, dir: &str) -> String {
    s.replace("{P}", &side.token).replace("{D}", dir)
}

fn wait_on(side: &Side, w: &Wait, dir: &str, status_marks: &BTreeMap<i32, i64>) {
    let t = Duration::from_secs(90);
    let f = |s: &str| fill(s, side, dir);
    match w {
        Wait::None => {}
        Wait::Restarted(pattern, n, tasks) => {
            let c = f(pattern);
            let mut keys: BTreeSet<String> =
                (0..*n).map(|i| format!("status-task-{c}-{i}")).collect();
            keys.insert(format!("status-connector-{c}"));
            wait_for(
                &format!("{}: RUNNING records of {c} after the restart", side.label),
                t,
                || {
                    let running: BTreeSet<String> = status_records(side)
                        .into_iter()
                        .filter(|(p, o, _, v)| {
                            *o >= status_marks.get(p).copied().unwrap_or(0)
                                && v["state"] == "RUNNING"
                        })
                        .map(|(_, _, k, _)| k)
                        .collect();
                    keys.is_subset(&running).then_some(())
                },
            );
            wait_on(
                side,
                &Wait::State(pattern, "RUNNING", *tasks),
                dir,
                status_marks,
            );
            return;
        }
        Wait::State(c, state, n) => {
            let c = f(c);
            wait_for(
                &format!("{}: {c} {state} with {n} tasks", side.label),
                t,
                || {
                    let s = side.status_of(&c)?;
                    let ts = s["tasks"].as_array()?;
                    (s["connector"]["state"] == *state
                        && ts.len() == *n
                        && ts.iter().all(|x| x["state"] == *state))
                    .then_some(())
                },
            )
        }
        Wait::Stopped(c) => {
            let c = f(c);
            wait_for(&format!("{}: {c} STOPPED", side.label), t, || {
                let s = side.status_of(&c)?;
                let tasks = side.request("GET", &format!("/connectors/{c}/tasks"), None);
                (s["connector"]["state"] == "STOPPED"
                    && s["tasks"].as_array()?.is_empty()
                    && tasks.body.as_array()?.is_empty())
                .then_some(())
            })
        }
        Wait::Gone(c) => {
            let c = f(c);
            wait_for(&format!("{}: {c} deleted", side.label), t, || {
                let r = side.request("GET", &format!("/connectors/{c}"), None);
                let s = side.request("GET", &format!("/connectors/{c}/status"), None);
                (r.status == 404 && s.status == 404).then_some(())
            })
        }
        Wait::TaskConfig(c, k, v) => {
            let c = f(c);
            wait_for(
                &format!("{}: {c} tasks with {k}={v}", side.label),
                t,
                || {
                    let r = side.request("GET", &format!("/connectors/{c}/tasks"), None);
                    let ok = r.body.as_array()?.first()?["config"][*k] == *v;
                    let s = side.status_of(&c)?;
                    let ts = s["tasks"].as_array()?;
                    (ok && s["connector"]["state"] == "RUNNING"
                        && ts.len() == 1
                        && ts[0]["state"] == "RUNNING")
                        .then_some(())
                },
            )
        }
        Wait::Topics(c) => {
            let c = f(c);
            wait_for(&format!("{}: {c} active topics", side.label), t, || {
                let r = side.request("GET", &format!("/connectors/{c}/topics"), None);
                (!r.body[&c]["topics"].as_array()?.is_empty()).then_some(())
            })
        }
    }
    // The status writes of the request settle: the connector's status answers the same twice
    // in a row, 100 ms apart (both sides read their status topic asynchronously).
    let connector = match w {
        Wait::None => return,
        Wait::State(c, ..)
        | Wait::Restarted(c, ..)
        | Wait::Stopped(c)
        | Wait::Gone(c)
        | Wait::TaskConfig(c, ..)
        | Wait::Topics(c) => f(c),
    };
    let status = || {
        let r = side.request("GET", &format!("/connectors/{connector}/status"), None);
        (r.status, r.body)
    };
    let mut last = status();
    wait_for(
        &format!("{}: {connector}'s status to settle", side.label),
        t,
        || {
            std::thread::sleep(Duration::from_millis(100));
            let now = status();
            let settled = now == last;
            last = now;
            settled.then_some(())
        },
    );
}

/// Keeps only the plugin entries whose `class` appears in both lists.
fn intersect_plugins(a: &mut Reply, b: &mut Reply) {
    let classes = |r: &Reply| -> BTreeSet<String> {
        r.body
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["class"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let common: BTreeSet<String> = classes(a).intersection(&classes(b)).cloned().collect();
    for r in [a, b] {
        if let Some(arr) = r.body.as_array_mut() {
            arr.retain(|p| p["class"].as_str().is_some_and(|c| common.contains(c)));
        }
    }
}

/// `conformance/rest-allowlist.txt`: `<request id> <field> <reason>` per line, `#` comments;
/// the field is `status`, `location` or a JSON pointer into the body (`*` matches every member).
fn allowlist() -> BTreeMap<String, Vec<(String, String)>> {
    let path = repo_root().join("conformance/rest-allowlist.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for l in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut parts = l.splitn(3, char::is_whitespace);
        let id = parts.next().unwrap_or_default();
        let field = parts.next().unwrap_or_default();
        let reason = parts.next().unwrap_or_default().trim();
        assert!(
            field == "status" || field == "location" || field.starts_with('/'),
            "allowlist line without a field (status, location or /json/pointer): {l}"
        );
        out.entry(id.to_string())
            .or_default()
            .push((field.to_string(), reason.to_string()));
    }
    out
}

/// Fetches the Connect jars (a no-op when cached); `None` (with the reason printed) when Java or
/// the jars are unavailable.
fn java_available() -> Option<()> {
    if Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        return missing("no `java` on PATH (the reference worker needs Java 17)");
    }
    let out = Command::new(repo_root().join("scripts/connect-java"))
        .arg("fetch")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => Some(()),
        Ok(o) => missing(&format!(
            "`scripts/connect-java fetch` failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => missing(&format!("running scripts/connect-java: {e}")),
    }
}

/// A consumer of the side's status topic, and the topic's partitions with their end offsets.
fn status_reader(side: &Side) -> (rdkafka::consumer::BaseConsumer, BTreeMap<i32, i64>) {
    use rdkafka::consumer::Consumer;
    let consumer: rdkafka::consumer::BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &side.bootstrap)
        .set("group.id", unique("status-reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let md = consumer
        .fetch_metadata(Some(&side.status_topic), Duration::from_secs(10))
        .unwrap();
    let ends = md.topics()[0]
        .partitions()
        .iter()
        .map(|p| {
            let (_, high) = consumer
                .fetch_watermarks(&side.status_topic, p.id(), Duration::from_secs(10))
                .unwrap();
            (p.id(), high)
        })
        .collect();
    (consumer, ends)
}

/// The end offset of each partition of the side's status topic.
fn status_ends(side: &Side) -> BTreeMap<i32, i64> {
    status_reader(side).1
}

/// Every record of the side's status topic up to its current end: (partition, offset, key,
/// JSON value; null for a tombstone).
fn status_records(side: &Side) -> Vec<(i32, i64, String, Value)> {
    use rdkafka::consumer::Consumer;
    use rdkafka::Message;
    let (consumer, ends) = status_reader(side);
    let mut tpl = rdkafka::TopicPartitionList::new();
    for p in ends.keys() {
        tpl.add_partition_offset(&side.status_topic, *p, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut left: BTreeSet<i32> = ends
        .iter()
        .filter(|(_, e)| **e > 0)
        .map(|(p, _)| *p)
        .collect();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !left.is_empty() {
        assert!(
            Instant::now() < deadline,
            "could not read {}",
            side.status_topic
        );
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let value = m
                .payload()
                .and_then(|v| serde_json::from_slice(v).ok())
                .unwrap_or(Value::Null);
            let key = String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned();
            if m.offset() + 1 >= ends[&m.partition()] {
                left.remove(&m.partition());
            }
            out.push((m.partition(), m.offset(), key, value));
        }
    }
    out
}

/// The Connect release the suite compares with (`CONNECT_VERSION`, by default the newest).
fn reference_version() -> String {
    std::env::var("CONNECT_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| VECTORS_CONNECT_VERSION.to_string())
}

/// Both sides resolve `${file:…}` references (the validation steps with a secret).
const FILE_PROVIDER: &str = "config.providers=file\nconfig.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n";

fn start_java(dir: &Path, bootstrap: &str, token: &str) -> Side {
    let port = common::faults::free_port();
    let group = unique("diff-java");
    let version = reference_version();
    let out = Command::new(repo_root().join("scripts/jvm-bridge"))
        .arg("file-plugin-path")
        .env("CONNECT_VERSION", &version)
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/jvm-bridge file-plugin-path");
    assert!(
        out.status.success(),
        "scripts/jvm-bridge file-plugin-path failed"
    );
    let plugin_path = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let props = distributed_properties(
        bootstrap,
        &group,
        &format!(
            "rest.advertised.host.name=127.0.0.1\nrest.advertised.port={port}\nplugin.path={plugin_path}\n{FILE_PROVIDER}"
        ),
    )
    .replace(
        "listeners=http://127.0.0.1:0",
        &format!("listeners=http://127.0.0.1:{port}"),
    );
    let jdir = dir.join("java");
    std::fs::create_dir_all(&jdir).unwrap();
    std::fs::write(jdir.join("worker.properties"), props).unwrap();
    let log = jdir.join("worker.log");
    let child = Command::new(repo_root().join("scripts/connect-java"))
        .arg(jdir.join("worker.properties"))
        .env("CONNECT_VERSION", &version)
        .env("CONNECT_JAVA_HEAP", "256m")
        // Tributary's root logger starts at INFO; scripts/connect-java defaults Java's to WARN.
        .env("CONNECT_LOG_LEVEL", "INFO")
        .stdout(std::fs::File::create(jdir.join("stdout.log")).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("starting scripts/connect-java");
    let mut side = Side {
        label: "java",
        base: format!("http://127.0.0.1:{port}"),
        token: token.to_string(),
        worker: format!("127.0.0.1:{port}"),
        java: Some(child),
        java_log: Some(log),
        _trib: None,
        bootstrap: bootstrap.to_string(),
        status_topic: format!("{group}-status"),
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(Some(st)) = side.java.as_mut().unwrap().try_wait() {
            panic!("Java worker exited with {st}: {}", side.java_log_tail());
        }
        let ok = reqwest::blocking::Client::new()
            .get(format!("{}/health", side.base))
            .timeout(Duration::from_secs(15))
            .send()
            .map(|r| r.status().as_u16() == 200)
            .unwrap_or(false);
        if ok {
            break;
        }
        if Instant::now() > deadline {
            panic!("Java worker not ready: {}", side.java_log_tail());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    side
}

fn start_tributary(dir: &Path, bootstrap: &str, token: &str) -> Side {
    let group = unique("diff-trib");
    let w = DistributedWorker::start(dir, "trib", bootstrap, &group, FILE_PROVIDER);
    w.wait_joined();
    Side {
        label: "tributary",
        base: w.url.clone(),
        token: token.to_string(),
        worker: w.id(),
        java: None,
        java_log: None,
        _trib: Some(w),
        bootstrap: bootstrap.to_string(),
        status_topic: format!("{group}-status"),
    }
}

#[test]
fn differential_rest_against_java_connect() {
    let Some(bootstrap) = kafka() else { return };
    if java_available().is_none() {
        return;
    }
    let dir = test_dir();
    let dpath = dir.path().display().to_string();
    let nonce = std::process::id() % 100_000;
    let java = start_java(dir.path(), &bootstrap, &format!("java{nonce}"));
    let trib = start_tributary(dir.path(), &bootstrap, &format!("trib{nonce}"));
    for side in [&java, &trib] {
        let mut lines = String::new();
        for i in 0..20 {
            lines.push_str(&format!("line {i}\n"));
        }
        std::fs::write(dir.path().join(format!("{}-in.txt", side.token)), &lines).unwrap();
        std::fs::write(dir.path().join(format!("{}-in2.txt", side.token)), &lines).unwrap();
    }
    std::fs::write(
        dir.path().join("diff-secrets.properties"),
        "db.secret=TopSecret456\n",
    )
    .unwrap();

    let steps = script();
    assert!(steps.len() >= 50, "the script has {} requests", steps.len());
    let ids: BTreeSet<&str> = steps.iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), steps.len(), "request ids must be unique");
    let allowed = allowlist();
    let mut failures = Vec::new();
    let mut tolerated = Vec::new();
    let mut matched = BTreeSet::new();
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();

    for st in &steps {
        let mut replies = Vec::new();
        for side in [&java, &trib] {
            let path = fill(&st.path, side, &dpath);
            let body = st.body.as_deref().map(|b| fill(b, side, &dpath));
            // Where the status topic ended before the request, for a restart's wait.
            let marks = match st.wait {
                Wait::Restarted(..) => status_ends(side),
                _ => BTreeMap::new(),
            };
            let r = side.request(st.method, &path, body.as_deref());
            wait_on(side, &st.wait, &dpath, &marks);
            let n = Normaliser {
                side,
                dir: dpath.clone(),
                root: st.id == "root",
            };
            replies.push(n.reply(st, &r));
        }
        if st.id.ends_with("resolved-secret") {
            for r in &replies {
                assert!(
                    !format!("{r:?}").contains("TopSecret456"),
                    "{}: a resolved value in the answer: {r:?}",
                    st.id
                );
            }
        }
        let (mut j, mut t) = (replies[0].clone(), replies[1].clone());
        if st.compare == Compare::PluginIntersection {
            intersect_plugins(&mut j, &mut t);
        }
        if j == t {
            matched.insert(st.id);
            eprintln!("same  {:<28} {} {}", st.id, st.method, st.path);
            continue;
        }
        let fields = differing_fields(&j, &t);
        let report = format!(
            "DIFF  {} ({} {}) in {}:\n  java:      {} {} {}\n  tributary: {} {} {}",
            st.id,
            st.method,
            st.path,
            fields.join(", "),
            j.status,
            j.location.as_deref().unwrap_or(""),
            j.body,
            t.status,
            t.location.as_deref().unwrap_or(""),
            t.body
        );
        // Allowlisted fields are taken out of both replies; the rest must still be equal.
        for (field, reason) in allowed.get(st.id).into_iter().flatten() {
            if tolerate(&mut j, &mut t, field) {
                eprintln!("  allowlisted {} {field}: {reason}", st.id);
                used.insert((st.id.to_string(), field.clone()));
            }
        }
        if j == t {
            tolerated.push(st.id);
            continue;
        }
        eprintln!(
            "{report}\n  not allowlisted: {}",
            differing_fields(&j, &t).join(", ")
        );
        failures.push(st.id);
    }
    let mut stale = Vec::new();
    for (id, entries) in &allowed {
        if !ids.contains(id.as_str()) {
            stale.push(format!("{id} (not a request id of the script)"));
            continue;
        }
        for (field, _) in entries {
            if !used.contains(&(id.clone(), field.clone())) {
                stale.push(format!("{id} {field} (no longer differs)"));
            }
        }
    }
    eprintln!(
        "{} requests: {} same, {} allowlisted differences, {} unexpected differences",
        steps.len(),
        matched.len(),
        tolerated.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "differences not in conformance/rest-allowlist.txt: {failures:?}"
    );
    assert!(
        stale.is_empty(),
        "allowlist entries to remove from conformance/rest-allowlist.txt: {stale:?}"
    );
}
