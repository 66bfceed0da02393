//! Mixed clusters: Apache Kafka Connect 4.1.1 and 4.4.0 (Java) workers and Tributary workers in
//! one group under the `sessioned` protocol, sharing connectors, statuses, offsets and REST
//! requests, and rolling upgrades from Connect 4.4.0 to Tributary and back.
//!
//! Java workers run through `scripts/connect-java` (jars fetched by Maven, 256 MB heap) on
//! fixed free ports; their logs stay in the test directory. Gated on `KAFKA_BOOTSTRAP` and on
//! `java` being installed (and the jars being fetchable); otherwise the tests print why and pass,
//! except under CI, where a missing prerequisite fails them.

use tributary_testkit as common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const WORKER_EXTRA: &str =
    "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=5000\nrebalance.timeout.ms=30000\n";

/// The Connect release older workers of a mixed cluster run (the broker's).
const REFERENCE_4_1: &str = "4.1.1";
/// The newest Connect release.
const REFERENCE_4_4: &str = "4.4.0";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The broker, when Java and the Connect jars are there too.
fn gate() -> Option<String> {
    let bootstrap = kafka()?;
    let java = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !java {
        return missing("java not found (the mixed-cluster tests run Java Connect workers)");
    }
    let fetched = Command::new(repo_root().join("scripts/connect-java"))
        .arg("fetch")
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !fetched {
        return missing("`scripts/connect-java fetch` failed (no Maven or no network?)");
    }
    Some(bootstrap)
}

/// [`gate`], and Connect 4.4.0's jars fetched too.
fn gate_4_4() -> Option<String> {
    let bootstrap = gate()?;
    let fetched = Command::new(repo_root().join("scripts/connect-java"))
        .arg("fetch")
        .env("CONNECT_VERSION", REFERENCE_4_4)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !fetched {
        return missing("`CONNECT_VERSION=4.4.0 scripts/connect-java fetch` failed");
    }
    Some(bootstrap)
}

/// One HTTP request; `(0, Null)` when the server cannot be reached.
fn http(method: &str, url: &str, body: Option<&str>) -> (u16, Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut req = client.request(method.parse().unwrap(), url);
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    match req.send() {
        Ok(r) => {
            let status = r.status().as_u16();
            let text = r.text().unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

/// Repeats a request while the group is still settling (409 rebalancing, 5xx, no answer);
/// returns the first other answer.
fn http_settled(method: &str, url: &str, body: Option<&str>) -> (u16, Value) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, v) = http(method, url, body);
        if !(code == 0 || code == 409 || code >= 500) || Instant::now() > deadline {
            return (code, v);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A Java Connect distributed worker (`scripts/connect-java`) on a fixed port.
struct JavaWorker {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl JavaWorker {
    fn start(dir: &Path, name: &str, bootstrap: &str, group: &str) -> JavaWorker {
        Self::start_with(dir, name, bootstrap, group, "")
    }

    /// [`JavaWorker::start`] with `extra` lines in the worker file (e.g. Kafka security).
    fn start_with(dir: &Path, name: &str, bootstrap: &str, group: &str, extra: &str) -> JavaWorker {
        Self::start_with_opts(dir, name, bootstrap, group, extra, "")
    }

    /// [`JavaWorker::start_with`] with JVM options in `KAFKA_OPTS`, as Connect's scripts take them.
    fn start_with_opts(
        dir: &Path,
        name: &str,
        bootstrap: &str,
        group: &str,
        extra: &str,
        kafka_opts: &str,
    ) -> JavaWorker {
        Self::start_version(
            dir,
            name,
            (bootstrap, group),
            extra,
            kafka_opts,
            REFERENCE_4_1,
        )
    }

    /// A worker of Apache Kafka Connect `version` (fetched by `scripts/connect-java`).
    fn start_version(
        dir: &Path,
        name: &str,
        (bootstrap, group): (&str, &str),
        extra: &str,
        kafka_opts: &str,
        version: &str,
    ) -> JavaWorker {
        let wdir = dir.join(name);
        std::fs::create_dir_all(&wdir).unwrap();
        let port = common::faults::free_port();
        let props = distributed_properties(bootstrap, group, &format!("{WORKER_EXTRA}{extra}")).replace(
            "listeners=http://127.0.0.1:0",
            &format!("listeners=http://127.0.0.1:{port}\nrest.advertised.host.name=127.0.0.1\nrest.advertised.port={port}"),
        );
        std::fs::write(wdir.join("worker.properties"), props).unwrap();
        let child = Command::new(repo_root().join("scripts/connect-java"))
            .arg(wdir.join("worker.properties"))
            .env("CONNECT_JAVA_HEAP", "256m")
            .env("CONNECT_VERSION", version)
            .env("KAFKA_OPTS", kafka_opts)
            .current_dir(&wdir)
            .stdout(std::fs::File::create(wdir.join("stdout.log")).unwrap())
            .stderr(std::fs::File::create(wdir.join("stderr.log")).unwrap())
            .spawn()
            .expect("starting scripts/connect-java");
        let mut w = JavaWorker {
            child,
            port,
            dir: wdir,
        };
        let url = w.url();
        wait_for(
            &format!("Java worker {name} to answer GET /"),
            Duration::from_secs(180),
            || {
                if let Ok(Some(s)) = w.child.try_wait() {
                    panic!(
                        "Java worker {name} exited with {s}: {}",
                        std::fs::read_to_string(w.dir.join("stderr.log")).unwrap_or_default()
                    );
                }
                (http("GET", &format!("{url}/"), None).0 == 200).then_some(())
            },
        );
        w
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn id(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        // Best effort: the worker may have exited already.
        self.child.kill().ok();
        self.child.wait().ok();
    }

    /// SIGTERM (a clean shutdown: offsets committed, group left), SIGKILL after 60 s.
    fn terminate(&mut self) {
        // Without the signal the worker is killed after the deadline below.
        if let Err(e) = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
        {
            eprintln!("cannot run kill -TERM {}: {e}", self.child.id());
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill();
    }
}

impl Drop for JavaWorker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn create(url: &str, name: &str, config: Value) {
    let body = serde_json::json!({ "name": name, "config": config }).to_string();
    let (code, v) = http_settled("POST", &format!("{url}/connectors"), Some(&body));
    assert_eq!(code, 201, "creating {name} through {url}: {v}");
}

/// The connector's status as `url` reports it, once it and `tasks` tasks are all in `state`.
fn wait_state(url: &str, name: &str, tasks: usize, state: &str) -> Value {
    let mut last = Value::Null;
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let (code, v) = http("GET", &format!("{url}/connectors/{name}/status"), None);
        if code == 200 {
            let ts = v["tasks"].as_array().cloned().unwrap_or_default();
            if v["connector"]["state"] == state
                && ts.len() == tasks
                && ts.iter().all(|t| t["state"] == state)
            {
                return v;
            }
            last = v;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {name} to be {state} with {tasks} tasks at {url}; last status: {last}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The workers running a connector and its tasks, from a status body.
fn owners(status: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    out.insert(
        status["connector"]["worker_id"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    );
    for t in status["tasks"].as_array().into_iter().flatten() {
        out.insert(t["worker_id"].as_str().unwrap_or("").to_string());
    }
    out
}

fn task_owners(status: &Value) -> BTreeSet<String> {
    status["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["worker_id"].as_str().unwrap_or("").to_string())
        .collect()
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn lines_of(path: &Path) -> Vec<Vec<u8>> {
    terminated_lines(&std::fs::read(path).unwrap_or_default())
}

/// Waits until every line of `expected` occurs in the file at `out` at least as often as in
/// `expected`; returns how many extra (duplicate) lines the file has. Every extra line must be
/// an exact copy of an expected one.
fn wait_all_lines(what: &str, out: &Path, expected: &[Vec<u8>], timeout: Duration) -> usize {
    let mut want: HashMap<&[u8], usize> = HashMap::new();
    for l in expected {
        *want.entry(l.as_slice()).or_default() += 1;
    }
    let deadline = Instant::now() + timeout;
    loop {
        let got = lines_of(out);
        let mut have: HashMap<&[u8], usize> = HashMap::new();
        for l in &got {
            *have.entry(l.as_slice()).or_default() += 1;
        }
        let missing: usize = want
            .iter()
            .map(|(l, n)| n.saturating_sub(*have.get(l).unwrap_or(&0)))
            .sum();
        if missing == 0 {
            // Extra lines may only be exact copies of expected ones (redelivery), never
            // anything else.
            let strangers: Vec<&Vec<u8>> = got
                .iter()
                .filter(|l| !want.contains_key(l.as_slice()))
                .collect();
            assert!(
                strangers.is_empty(),
                "{what}: {} lines in {} are no line written: first {:?}",
                strangers.len(),
                out.display(),
                String::from_utf8_lossy(strangers[0])
            );
            return got.len() - expected.len();
        }
        if Instant::now() > deadline {
            panic!(
                "{what}: {missing} of {} lines never arrived in {} ({} lines there)",
                expected.len(),
                out.display(),
                got.len()
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn numbered(prefix: &str, from: usize, to: usize) -> String {
    (from..to).map(|i| format!("{prefix}-{i}\n")).collect()
}

#[test]
fn connectors_span_java_and_tributary_workers() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed");
    let topic = format!("{group}-lines");
    create_topic(&bootstrap, &topic, 3);

    let mut java = JavaWorker::start(d, "java-1", &bootstrap, &group);
    let t1 = DistributedWorker::start(d, "trib-1", &bootstrap, &group, WORKER_EXTRA);
    let t2 = DistributedWorker::start(d, "trib-2", &bootstrap, &group, WORKER_EXTRA);
    t1.wait_joined();
    t2.wait_joined();
    let (j, u1, u2) = (java.url(), t1.url.clone(), t2.url.clone());
    let tributary_ids: BTreeSet<String> = [t1.id(), t2.id()].into();

    let (a, b, out) = (d.join("a.txt"), d.join("b.txt"), d.join("sink.txt"));
    append(&a, &numbered("a", 0, 100));
    append(&b, &numbered("b", 0, 100));
    // Created through either side's REST API.
    create(
        &j,
        "sink",
        serde_json::json!({"connector.class": "FileStreamSink", "tasks.max": "3", "topics": topic, "file": out}),
    );
    create(
        &u1,
        "src-a",
        serde_json::json!({"connector.class": "FileStreamSource", "tasks.max": "1", "topic": topic, "file": a}),
    );
    create(
        &j,
        "src-b",
        serde_json::json!({"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1", "topic": topic, "file": b}),
    );

    // Everyone sees the same statuses; the tasks run on both implementations.
    let mut all_task_owners = BTreeSet::new();
    for (name, n) in [("sink", 3), ("src-a", 1), ("src-b", 1)] {
        for url in [&j, &u1, &u2] {
            wait_state(url, name, n, "RUNNING");
        }
        all_task_owners.extend(task_owners(&wait_state(&j, name, n, "RUNNING")));
    }
    // Rebalancing may still move tasks; wait until the group's assignment covers both sides.
    wait_for(
        "tasks on both Java and Tributary workers",
        Duration::from_secs(120),
        || {
            let mut owners_now = BTreeSet::new();
            for (name, n) in [("sink", 3), ("src-a", 1), ("src-b", 1)] {
                owners_now.extend(task_owners(&wait_state(&u2, name, n, "RUNNING")));
            }
            all_task_owners = owners_now.clone();
            (owners_now.contains(&java.id())
                && owners_now.iter().any(|o| tributary_ids.contains(o)))
            .then_some(())
        },
    );
    eprintln!("task owners: {all_task_owners:?} (java {})", java.id());
    let mut expected: Vec<Vec<u8>> = lines_of(&a);
    expected.extend(lines_of(&b));
    wait_all_lines("initial lines", &out, &expected, Duration::from_secs(120));

    // KIP-891: statuses carry the plugin version, whichever side wrote them, and both sides
    // show it (Java's FileStream plugins say 4.1.1, Tributary's its own version).
    for url in [&j, &u1] {
        let st = wait_state(url, "sink", 3, "RUNNING");
        assert!(
            st["connector"]["version"].is_string(),
            "status at {url}: {st}"
        );
        for t in st["tasks"].as_array().unwrap() {
            assert!(t["version"].is_string(), "status at {url}: {st}");
        }
    }

    // Restarts through either side.
    let (code, v) = http_settled(
        "POST",
        &format!("{u2}/connectors/sink/restart?includeTasks=true"),
        None,
    );
    assert_eq!(code, 202, "restart through Tributary: {v}");
    wait_state(&j, "sink", 3, "RUNNING");
    let (code, v) = http_settled("POST", &format!("{j}/connectors/src-a/restart"), None);
    assert_eq!(code, 204, "restart through Java: {v}");
    let (code, v) = http_settled(
        "POST",
        &format!("{u1}/connectors/src-b/tasks/0/restart"),
        None,
    );
    assert_eq!(code, 204, "task restart through Tributary: {v}");
    wait_state(&u1, "src-b", 1, "RUNNING");
    wait_state(&u2, "src-a", 1, "RUNNING");

    // Pause through Java, resume through Tributary; lines written meanwhile arrive after.
    let (code, v) = http_settled("PUT", &format!("{j}/connectors/src-a/pause"), None);
    assert_eq!(code, 202, "pause through Java: {v}");
    wait_state(&u1, "src-a", 1, "PAUSED");
    wait_state(&j, "src-a", 1, "PAUSED");
    append(&a, &numbered("a", 100, 150));
    // Nothing of src-a flows while it is paused: lines appended to b meanwhile (src-b runs)
    // arrive through the same topic and sink, and none of a's new lines comes with them.
    append(&b, &numbered("b", 100, 110));
    let mut live = lines_of(&b);
    live.extend(lines_of(&a).into_iter().take(100));
    wait_all_lines(
        "src-b's lines while src-a is paused",
        &out,
        &live,
        Duration::from_secs(120),
    );
    let early: Vec<Vec<u8>> = lines_of(&out)
        .into_iter()
        .filter(|l| l.starts_with(b"a-1") && l.len() == 5)
        .collect();
    assert!(
        early.is_empty(),
        "src-a delivered while paused: {} lines",
        early.len()
    );
    let (code, v) = http_settled("PUT", &format!("{u2}/connectors/src-a/resume"), None);
    assert_eq!(code, 202, "resume through Tributary: {v}");
    wait_state(&j, "src-a", 1, "RUNNING");
    let mut expected = lines_of(&a);
    expected.extend(lines_of(&b));
    wait_all_lines(
        "lines after resume",
        &out,
        &expected,
        Duration::from_secs(120),
    );

    // Pause through Tributary, resume through Java.
    let (code, _) = http_settled("PUT", &format!("{u1}/connectors/sink/pause"), None);
    assert_eq!(code, 202);
    wait_state(&j, "sink", 3, "PAUSED");
    let (code, _) = http_settled("PUT", &format!("{j}/connectors/sink/resume"), None);
    assert_eq!(code, 202);
    wait_state(&u2, "sink", 3, "RUNNING");

    // Delete through Tributary; gone on every worker.
    let (code, v) = http_settled("DELETE", &format!("{u1}/connectors/src-b"), None);
    assert_eq!(code, 204, "delete through Tributary: {v}");
    for url in [&j, &u1, &u2] {
        wait_for("src-b to be gone", Duration::from_secs(60), || {
            let (_, list) = http("GET", &format!("{url}/connectors"), None);
            (list.is_array() && !list.as_array().unwrap().contains(&Value::from("src-b")))
                .then_some(())
        });
    }

    // Killing the Java worker moves its connectors and tasks to the Tributary workers.
    java.kill();
    for (name, n) in [("sink", 3), ("src-a", 1)] {
        wait_for(
            &format!("{name} to run on Tributary workers only"),
            Duration::from_secs(120),
            || {
                let st = wait_state(&u1, name, n, "RUNNING");
                owners(&st).is_subset(&tributary_ids).then_some(())
            },
        );
    }
    append(&a, &numbered("a", 150, 200));
    let mut expected = lines_of(&a);
    expected.extend(lines_of(&b));
    wait_all_lines(
        "lines after the Java worker died",
        &out,
        &expected,
        Duration::from_secs(120),
    );

    // And the reverse: a new Java worker joins, the Tributary workers die, Java runs it all.
    let java2 = JavaWorker::start(d, "java-2", &bootstrap, &group);
    let (j2, j2_id) = (java2.url(), java2.id());
    let (mut t1, mut t2) = (t1, t2);
    t1.kill();
    t2.kill();
    for (name, n) in [("sink", 3), ("src-a", 1)] {
        wait_for(
            &format!("{name} to run on the Java worker"),
            Duration::from_secs(180),
            || {
                let st = wait_state(&j2, name, n, "RUNNING");
                (owners(&st) == BTreeSet::from([j2_id.clone()])).then_some(())
            },
        );
    }
    append(&a, &numbered("a", 200, 250));
    let mut expected = lines_of(&a);
    expected.extend(lines_of(&b));
    let dups = wait_all_lines(
        "lines after the Tributary workers died",
        &out,
        &expected,
        Duration::from_secs(120),
    );
    eprintln!(
        "mixed cluster: all {} lines arrived, {dups} duplicates",
        expected.len()
    );
}

#[test]
fn rolling_replacement_of_java_workers_by_tributary_loses_no_line() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("rolling");
    // Generated logs, plus the loghub sample logs when present.
    let generated = d.join("generated");
    std::fs::create_dir_all(&generated).unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for (i, lines) in [4_000, 2_000].into_iter().enumerate() {
        let path = generated.join(format!("Generated_{i}.log"));
        std::fs::write(&path, corpus::synthetic_log(lines, 20 + i as u64)).unwrap();
        files.push(path);
    }
    files.extend(corpus::loghub_files());

    // Each file is fed in three parts, split at line ends: one before the start and one after
    // each of the first two replacements, so data is in flight across the hand-overs.
    struct Pipe {
        name: String,
        input: PathBuf,
        output: PathBuf,
        parts: Vec<Vec<u8>>,
        expected: Vec<Vec<u8>>,
    }
    let mut pipes = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let stem = f.file_stem().unwrap().to_string_lossy().to_lowercase();
        let mut cuts = vec![0];
        for k in 1..3 {
            let mut at = data.len() * k / 3;
            while at < data.len() && data[at - 1] != b'\n' {
                at += 1;
            }
            cuts.push(at);
        }
        cuts.push(data.len());
        let parts = cuts.windows(2).map(|w| data[w[0]..w[1]].to_vec()).collect();
        pipes.push(Pipe {
            name: stem.replace('_', "-"),
            input: d.join(f.file_name().unwrap()),
            output: d.join(format!("{stem}.out")),
            parts,
            expected: terminated_lines(&data),
        });
    }
    let feed = |part: usize| {
        for p in &pipes {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p.input)
                .unwrap();
            f.write_all(&p.parts[part]).unwrap();
        }
    };
    feed(0);

    let mut javas: Vec<JavaWorker> = (1..=3)
        .map(|i| JavaWorker::start(d, &format!("java-{i}"), &bootstrap, &group))
        .collect();
    let j = javas[0].url();
    for p in &pipes {
        let topic = format!("{group}-{}", p.name);
        create(
            &j,
            &format!("{}-source", p.name),
            serde_json::json!({"connector.class": "FileStreamSource", "tasks.max": "1", "topic": topic, "file": p.input}),
        );
        create(
            &j,
            &format!("{}-sink", p.name),
            serde_json::json!({"connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic, "file": p.output}),
        );
    }
    for p in &pipes {
        wait_state(&j, &format!("{}-source", p.name), 1, "RUNNING");
        wait_state(&j, &format!("{}-sink", p.name), 1, "RUNNING");
    }

    let mut tributaries = Vec::new();
    for (i, java) in javas.iter_mut().enumerate() {
        let t = DistributedWorker::start(
            d,
            &format!("trib-{}", i + 1),
            &bootstrap,
            &group,
            WORKER_EXTRA,
        );
        t.wait_joined();
        java.terminate();
        eprintln!("rolling: java-{} replaced by {}", i + 1, t.id());
        // The group settles with the remaining workers running every pipeline.
        for p in &pipes {
            wait_state(&t.url, &format!("{}-source", p.name), 1, "RUNNING");
            wait_state(&t.url, &format!("{}-sink", p.name), 1, "RUNNING");
        }
        tributaries.push(t);
        if i < 2 {
            feed(i + 1);
        }
    }

    // Only Tributary workers remain; every terminated line arrives.
    let ids: BTreeSet<String> = tributaries.iter().map(|t| t.id()).collect();
    let u = tributaries[0].url.clone();
    let mut duplicates = 0;
    let mut total = 0;
    for p in &pipes {
        let st = wait_state(&u, &format!("{}-source", p.name), 1, "RUNNING");
        assert!(owners(&st).is_subset(&ids), "{st}");
        duplicates += wait_all_lines(&p.name, &p.output, &p.expected, Duration::from_secs(180));
        total += p.expected.len();
    }
    eprintln!(
        "rolling replacement: {} files, {total} lines, none lost, {duplicates} duplicates",
        pipes.len()
    );
}

/// Waits until the connectors `names` and their tasks all run, on exactly `workers` together
/// (as `url` reports them); returns how long that took.
fn wait_all_on(url: &str, names: &[String], workers: &BTreeSet<String>) -> Duration {
    let started = Instant::now();
    wait_for(
        &format!("{names:?} to run on {workers:?}"),
        Duration::from_secs(180),
        || {
            let mut on = BTreeSet::new();
            for name in names {
                let (_, v) = http("GET", &format!("{url}/connectors/{name}/status"), None);
                let ts = v["tasks"].as_array().cloned().unwrap_or_default();
                let running = v["connector"]["state"] == "RUNNING"
                    && !ts.is_empty()
                    && ts.iter().all(|t| t["state"] == "RUNNING");
                if !running {
                    return None;
                }
                on.extend(owners(&v));
            }
            (on == *workers).then_some(())
        },
    );
    started.elapsed()
}

/// Clean departures in a mixed group follow the leader's rules. Under a Tributary leader a
/// Java worker stopped with SIGTERM hands its connectors and tasks over at once: Java writes
/// their UNASSIGNED records when it stops them, and closes its status store before it leaves
/// the group, which is the evidence the leader looks for. Under a Java leader a Tributary
/// worker stopped with SIGTERM gets Connect's behaviour: its jobs wait for
/// `scheduled.rebalance.max.delay.ms`, then move; nothing Tributary wrote confuses the Java
/// leader.
#[test]
fn clean_departures_in_a_mixed_group_follow_the_leaders_rules() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    // Four one-task FileStreamSource connectors over files that stay empty: 8 jobs.
    let names: Vec<String> = (0..4).map(|i| format!("fs-{i}")).collect();
    let create_all = |url: &str, group: &str| {
        for name in &names {
            let file = d.join(format!("{group}-{name}.txt"));
            std::fs::write(&file, b"").unwrap();
            create(
                url,
                name,
                serde_json::json!({"connector.class": "FileStreamSource", "tasks.max": "1", "topic": format!("{group}-{name}"), "file": file}),
            );
        }
    };

    // A Tributary leader and a Java worker; the delay (60 s) would be plain to see.
    let group = unique("mixed-leave-t");
    let delay = "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=60000\n";
    let t1 = DistributedWorker::start(d, "trib-1", &bootstrap, &group, delay);
    t1.wait_joined();
    assert_eq!(t1.get("/tributary/worker").1["leader"], true);
    let mut j1 = JavaWorker::start_with(d, "java-1", &bootstrap, &group, delay);
    create_all(&t1.url, &group);
    wait_all_on(&t1.url, &names, &[t1.id(), j1.id()].into());
    let signalled = Instant::now();
    j1.terminate();
    wait_all_on(&t1.url, &names, &[t1.id()].into());
    let took = signalled.elapsed();
    eprintln!("Java worker stopped under a Tributary leader: its jobs moved in {took:?}");
    assert!(
        took < Duration::from_secs(30),
        "the Java worker's jobs moved without waiting for the 60 s delay: {took:?}"
    );

    // A Java leader and a Tributary worker; a 15 s delay.
    let group = unique("mixed-leave-j");
    let delay = "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=15000\n";
    let j2 = JavaWorker::start_with(d, "java-2", &bootstrap, &group, delay);
    let mut t2 = DistributedWorker::start(d, "trib-2", &bootstrap, &group, delay);
    t2.wait_joined();
    assert_eq!(t2.get("/tributary/worker").1["leader"], false);
    create_all(&j2.url(), &group);
    wait_all_on(&j2.url(), &names, &[j2.id(), t2.id()].into());
    let signalled = Instant::now();
    let status = t2.terminate();
    assert!(status.success(), "{}", t2.log_text());
    wait_all_on(&j2.url(), &names, &[j2.id()].into());
    let took = signalled.elapsed();
    eprintln!("Tributary worker stopped under a Java leader: its jobs moved in {took:?}");
    assert!(
        took >= Duration::from_secs(10),
        "the Java leader kept Connect's delay (15 s): {took:?}"
    );
}

/// A connector a Java worker accepts with a transformation runs on Tributary workers with that
/// transformation, never without it: when this Tributary build has the class (Connect's
/// `RegexRouter`), every instance runs on both workers; when it does not, the instances Tributary
/// is given fail naming `transforms.route.type`, and none of them is ever RUNNING there.
#[test]
fn a_connector_with_transforms_from_a_java_worker_never_runs_without_them_on_tributary() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed-xf");
    let topic = format!("{group}-data");
    create_topic(&bootstrap, &topic, 4);

    let java = JavaWorker::start(d, "java-1", &bootstrap, &group);
    let t1 = DistributedWorker::start(d, "trib-1", &bootstrap, &group, WORKER_EXTRA);
    t1.wait_joined();
    let j = java.url();
    let tributary = t1.id();
    let router = "org.apache.kafka.connect.transforms.RegexRouter";
    let (_, plugins) = t1.get("/connector-plugins?connectorsOnly=false");
    let has_router = plugins
        .as_array()
        .is_some_and(|a| a.iter().any(|p| p["class"] == router));
    // Two connectors, so that the balanced assignment gives each worker one of them; each has
    // four tasks, spread over both workers.
    let names = ["xf-a", "xf-b"];
    for name in names {
        create(
            &j,
            name,
            serde_json::json!({
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "tasks.max": "4",
                "topics": topic,
                "file": d.join(format!("{name}.txt")).display().to_string(),
                "transforms": "route",
                "transforms.route.type": router,
                "transforms.route.regex": "(.*)",
                "transforms.route.replacement": "$1-routed",
            }),
        );
    }
    let refused = |v: &Value| {
        v["state"] == "FAILED"
            && v["trace"]
                .as_str()
                .is_some_and(|t| t.contains("transforms.route.type"))
    };
    let settles = |v: &Value| {
        if has_router {
            v["state"] == "RUNNING"
        } else if v["worker_id"] == tributary.as_str() {
            refused(v)
        } else {
            v["state"] == "RUNNING"
        }
    };
    let mut on_tributary = 0;
    for name in names {
        let settled = wait_for(
            &format!("{name}'s instances to settle"),
            Duration::from_secs(180),
            || {
                let (code, v) = http("GET", &format!("{j}/connectors/{name}/status"), None);
                if code != 200 {
                    return None;
                }
                let mut instances = vec![v["connector"].clone()];
                instances.extend(v["tasks"].as_array().cloned().unwrap_or_default());
                for i in &instances {
                    assert!(
                        has_router
                            || !(i["worker_id"] == tributary.as_str() && i["state"] == "RUNNING"),
                        "{name} ran on Tributary without its transforms: {v}"
                    );
                }
                let connector_done = settles(&v["connector"]);
                let tasks = v["tasks"].as_array().cloned().unwrap_or_default();
                let done = if v["connector"]["worker_id"] == tributary.as_str() && !has_router {
                    connector_done
                } else {
                    connector_done && tasks.len() == 4 && tasks.iter().all(settles)
                };
                done.then_some(v)
            },
        );
        let mut instances = vec![settled["connector"].clone()];
        instances.extend(settled["tasks"].as_array().cloned().unwrap_or_default());
        on_tributary += instances
            .iter()
            .filter(|i| i["worker_id"] == tributary.as_str())
            .count();
    }
    assert!(
        on_tributary > 0,
        "Tributary was given none of the instances, so the test proved nothing"
    );
}

/// The offsets API (KIP-875) across runtimes: a source created through the Java worker is
/// stopped, moved back and reset through either worker (whichever leads, the other one's
/// request is forwarded to it across runtimes), and both report the same offsets.
#[test]
fn offsets_are_altered_and_reset_through_java_and_tributary_workers() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed-offsets");
    let java = JavaWorker::start(d, "java-1", &bootstrap, &group);
    let t1 = DistributedWorker::start(d, "trib-1", &bootstrap, &group, WORKER_EXTRA);
    t1.wait_joined();
    let (j, t) = (java.url(), t1.url.clone());
    // The worker's offsets topic, then a connector-specific one (KIP-618's
    // `offsets.storage.topic`, created by whichever runtime starts the connector's task).
    for (name, own_topic) in [("src", None), ("own", Some(format!("{group}-own-offsets")))] {
        offsets_round_trip(&bootstrap, d, &group, (&j, &t), name, own_topic.as_deref());
    }
}

/// Creates FileStreamSource `name` through the Java worker (`j`), lets it read a file, then
/// reads, alters and resets its offsets alternately through the Tributary (`t`) and the Java
/// worker; both must show the same offsets at every step.
fn offsets_round_trip(
    bootstrap: &str,
    d: &Path,
    group: &str,
    (j, t): (&str, &str),
    name: &str,
    own_topic: Option<&str>,
) {
    let input = d.join(format!("{name}.txt"));
    std::fs::write(&input, "one\ntwo\nthree\n").unwrap();
    let filename = input.display().to_string();
    let topic = format!("{group}-{name}-lines");
    let mut config = serde_json::json!({
        "connector.class": "FileStreamSource",
        "file": filename,
        "topic": topic,
    });
    if let Some(own) = own_topic {
        config["offsets.storage.topic"] = serde_json::json!(own);
    }
    create(j, name, config);
    wait_for("3 records", Duration::from_secs(120), || {
        (topic_end(bootstrap, &topic) == 3).then_some(())
    });
    let (code, v) = http_settled("PUT", &format!("{t}/connectors/{name}/stop"), None);
    assert_eq!(code, 204, "{v}");
    wait_state(j, name, 0, "STOPPED");
    let at_end = serde_json::json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": 14}}]});
    for url in [j, t] {
        let (code, v) = http("GET", &format!("{url}/connectors/{name}/offsets"), None);
        assert_eq!((code, &v), (200, &at_end), "GET offsets at {url}");
    }
    let patch = serde_json::json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": 4}}]}).to_string();
    let (code, v) = http_settled(
        "PATCH",
        &format!("{t}/connectors/{name}/offsets"),
        Some(&patch),
    );
    assert_eq!(
        (code, v),
        (
            200,
            serde_json::json!({"message": "The offsets for this connector have been altered successfully"})
        )
    );
    let moved = serde_json::json!({"offsets": [{"partition": {"filename": filename}, "offset": {"position": 4}}]});
    for url in [j, t] {
        wait_for(
            &format!("the moved offset at {url}"),
            Duration::from_secs(30),
            || {
                (http("GET", &format!("{url}/connectors/{name}/offsets"), None).1 == moved)
                    .then_some(())
            },
        );
    }
    let (code, v) = http_settled("DELETE", &format!("{j}/connectors/{name}/offsets"), None);
    assert_eq!(
        (code, v),
        (
            200,
            serde_json::json!({"message": "The offsets for this connector have been reset successfully"})
        )
    );
    for url in [j, t] {
        wait_for(
            &format!("no offsets at {url}"),
            Duration::from_secs(30),
            || {
                (http("GET", &format!("{url}/connectors/{name}/offsets"), None).1
                    == serde_json::json!({"offsets": []}))
                .then_some(())
            },
        );
    }
    // Resumed, the source reads the whole file again, wherever its task runs.
    let (code, v) = http_settled("PUT", &format!("{t}/connectors/{name}/resume"), None);
    assert_eq!(code, 202, "{v}");
    wait_for("6 records", Duration::from_secs(120), || {
        (topic_end(bootstrap, &topic) == 6).then_some(())
    });
}

/// One Java and two Tributary workers share a group on the secured broker (SASL_SSL with
/// SCRAM-SHA-512, the same worker file lines on both sides): they agree on statuses and a
/// FileStream pipeline created through the Java worker delivers every line.
/// The dead letter queue records a Java worker and a Tributary worker write for the same
/// failures are the same bytes (KIP-298, KIP-610): two worker groups, one per runtime, each run
/// the same FileStreamSink (same name, own consumer group) over one topic holding a record
/// JsonConverter cannot read and one `ExtractField$Value` refuses. Key, value, timestamp and
/// every header are equal, in order, except the stack trace, whose first line
/// (`<exception class>: <message>`) is equal; the sink files are equal too.
#[test]
fn dead_letter_queue_records_equal_javas_byte_for_byte() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("dlq-cmp-in");
    create_topic(&bootstrap, &topic, 1);
    produce(
        &bootstrap,
        &topic,
        &[
            (Some("k1"), r#"{"a":1}"#, &[("h", "one")]),
            (Some("k2"), "not json", &[("h1", "v1"), ("h2", "[1,2]")]),
            (Some("k3"), r#""just text""#, &[("h3", "x")]),
            (None, r#"{"a":"two"}"#, &[]),
        ],
    );
    let config = |out: &Path, dlq: &str, group: &str| {
        serde_json::json!({
            "connector.class": "FileStreamSink",
            "tasks.max": "1",
            "topics": topic,
            "file": out,
            "consumer.override.group.id": group,
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "transforms": "pick",
            "transforms.pick.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
            "transforms.pick.field": "a",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        })
    };
    let java = JavaWorker::start(d, "java", &bootstrap, &unique("dlq-cmp-java"));
    let trib =
        DistributedWorker::start(d, "trib", &bootstrap, &unique("dlq-cmp-trib"), WORKER_EXTRA);
    trib.wait_joined();
    let mut dead = Vec::new();
    let mut files = Vec::new();
    for (label, url) in [("java", java.url()), ("tributary", trib.url.clone())] {
        let out = d.join(format!("out-{label}.txt"));
        let dlq = unique(&format!("dlq-cmp-{label}"));
        create(
            &url,
            "dlq-cmp",
            config(&out, &dlq, &unique("dlq-cmp-reader")),
        );
        wait_state(&url, "dlq-cmp", 1, "RUNNING");
        let records = wait_for(
            &format!("{label}'s two dead letter queue records"),
            Duration::from_secs(120),
            || {
                let r = read_records(&bootstrap, &dlq);
                (r.len() >= 2).then_some(r)
            },
        );
        wait_for(
            &format!("{label}'s sink file"),
            Duration::from_secs(60),
            || (lines_of(&out).len() >= 2).then_some(()),
        );
        dead.push(records);
        files.push(lines_of(&out));
    }
    assert_eq!(files[0], files[1], "the sink files differ");
    assert_eq!(files[0], [b"1".to_vec(), b"two".to_vec()]);
    let (java_dead, trib_dead) = (&dead[0], &dead[1]);
    assert_eq!(java_dead.len(), 2, "{java_dead:?}");
    assert_eq!(trib_dead.len(), java_dead.len(), "{trib_dead:?}");
    const TRACE: &str = "__connect.errors.exception.stacktrace";
    let first_line = |r: &Rec| {
        r.header(TRACE)
            .map(|t| t.lines().next().unwrap_or_default().to_string())
    };
    let without_trace = |r: &Rec| {
        let mut r = r.clone();
        r.headers.retain(|(k, _)| k != TRACE);
        r
    };
    for (j, t) in java_dead.iter().zip(trib_dead) {
        assert_eq!(
            without_trace(t),
            without_trace(j),
            "Tributary's record, then Java's"
        );
        assert!(first_line(j).is_some(), "Java wrote no stack trace: {j:?}");
        assert_eq!(first_line(t), first_line(j));
        let names: Vec<&str> = t.headers.iter().map(|(k, _)| k.as_str()).collect();
        let java_names: Vec<&str> = j.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, java_names, "header order");
    }
    // What failed where, as both wrote it.
    assert_eq!(
        trib_dead[0].header("__connect.errors.stage").as_deref(),
        Some("VALUE_CONVERTER")
    );
    assert_eq!(
        trib_dead[1].header("__connect.errors.stage").as_deref(),
        Some("TRANSFORMATION")
    );
}

#[test]
fn java_and_tributary_workers_share_a_cluster_on_the_secured_broker() {
    let Some(_) = gate() else {
        return;
    };
    let Some(s) = secure() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed-secured");
    let topic = format!("{group}-lines");
    create_topic(&s.var("KAFKA_SECURE_INTERNAL"), &topic, 2);
    let security = sasl_ssl_lines(&s, "connect", "connect-secret", "JKS");
    let java = JavaWorker::start_with(d, "java-1", &s.sasl_ssl, &group, &security);
    let t1 = DistributedWorker::start(
        d,
        "trib-1",
        &s.sasl_ssl,
        &group,
        &format!("{WORKER_EXTRA}{security}"),
    );
    let t2 = DistributedWorker::start(
        d,
        "trib-2",
        &s.sasl_ssl,
        &group,
        &format!(
            "{WORKER_EXTRA}{}",
            sasl_ssl_lines(&s, "connect", "connect-secret", "PKCS12")
        ),
    );
    t1.wait_joined();
    t2.wait_joined();
    let (j, u1) = (java.url(), t1.url.clone());
    let (input, out) = (d.join("in.txt"), d.join("out.txt"));
    append(&input, &numbered("s", 0, 300));
    create(
        &j,
        "sink",
        serde_json::json!({"connector.class": "FileStreamSink", "tasks.max": "2", "topics": topic, "file": out}),
    );
    create(
        &u1,
        "src",
        serde_json::json!({"connector.class": "FileStreamSource", "tasks.max": "1", "topic": topic, "file": input}),
    );
    for url in [&j, &u1, &t2.url] {
        wait_state(url, "sink", 2, "RUNNING");
        wait_state(url, "src", 1, "RUNNING");
    }
    let expected = lines_of(&input);
    wait_all_lines(
        "every line through the secured broker",
        &out,
        &expected,
        Duration::from_secs(120),
    );
}

/// A Java and a Tributary worker whose files have the same OIDC client-credentials lines
/// (tokens from the secured broker's OpenID Connect provider, `KAFKA_OPTS` allowing its
/// endpoint on both sides) share a group on the OAUTH listener: a FileStream pipeline whose sink
/// is created through the Java worker and source through Tributary delivers every line, before
/// and after the first tokens expired.
#[test]
fn java_and_tributary_workers_share_a_cluster_over_oidc() {
    let Some(_) = gate() else {
        return;
    };
    let Some(s) = secure() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed-oidc");
    let topic = format!("{group}-lines");
    let oauth = s.var("KAFKA_SECURE_OAUTH");
    let ttl: u64 = s.var("KAFKA_SECURE_OIDC_TOKEN_TTL").parse().unwrap();
    create_topic(&s.var("KAFKA_SECURE_INTERNAL"), &topic, 2);
    let security = oidc_lines(&s, "connect", "connect-secret");
    let opts = oidc_kafka_opts(&s);
    let started = Instant::now();
    let java = JavaWorker::start_with_opts(d, "java-1", &oauth, &group, &security, &opts);
    let t1 = DistributedWorker::start_with_env(
        d,
        "trib-1",
        &oauth,
        &group,
        &format!("{WORKER_EXTRA}{security}"),
        &[("KAFKA_OPTS", &opts)],
    );
    t1.wait_joined();
    let (j, u1) = (java.url(), t1.url.clone());
    let (input, out) = (d.join("in.txt"), d.join("out.txt"));
    append(&input, &numbered("o", 0, 300));
    create(
        &j,
        "sink",
        serde_json::json!({"connector.class": "FileStreamSink", "tasks.max": "2", "topics": topic, "file": out}),
    );
    create(
        &u1,
        "src",
        serde_json::json!({"connector.class": "FileStreamSource", "tasks.max": "1", "topic": topic, "file": input}),
    );
    for url in [&j, &u1] {
        wait_state(url, "sink", 2, "RUNNING");
        wait_state(url, "src", 1, "RUNNING");
    }
    wait_all_lines(
        "every line over OAUTHBEARER",
        &out,
        &lines_of(&input),
        Duration::from_secs(120),
    );
    // Waiting for expiry (not for a state): both sides' first tokens were fetched at startup.
    if let Some(left) = Duration::from_secs(ttl + 3).checked_sub(started.elapsed()) {
        std::thread::sleep(left);
    }
    append(&input, &numbered("o", 300, 600));
    wait_all_lines(
        "every line after the first tokens expired",
        &out,
        &lines_of(&input),
        Duration::from_secs(120),
    );
    for url in [&j, &u1] {
        wait_state(url, "sink", 2, "RUNNING");
        wait_state(url, "src", 1, "RUNNING");
    }
}

/// Java-hosted tasks move between Java and Tributary workers: Apache's FileStreamSink (forced
/// to run as Java on the Tributary worker, `tributary.plugins.prefer.java`) with two tasks
/// runs on a Java worker and a Tributary worker at once; when the Java worker leaves, the
/// Tributary worker hosts both tasks in its JVM; when a new Java worker joins and the
/// Tributary worker leaves, the Java worker runs them. Every line produced in each phase
/// reaches the output file, and nothing else does.
#[test]
fn java_hosted_tasks_move_between_java_and_tributary_workers() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
    let dir = test_dir();
    let d = dir.path();
    let group = unique("mixed-jvm");
    let topic = format!("{group}-lines");
    create_topic(&bootstrap, &topic, 2);
    let extra = format!(
        "{WORKER_EXTRA}{}",
        jvm_lines(&classpath, &plugin_path, &[SINK])
    );
    let mut java = JavaWorker::start(d, "java-1", &bootstrap, &group);
    let mut trib = DistributedWorker::start(d, "trib-1", &bootstrap, &group, &extra);
    trib.wait_joined();
    let out = d.join("out.txt");
    create(
        &java.url(),
        "jsink",
        serde_json::json!({"connector.class": SINK, "tasks.max": "2", "topics": topic, "file": out}),
    );
    let both: BTreeSet<String> = [java.id(), trib.id()].into();
    wait_for(
        "the two tasks on the Java and the Tributary worker",
        Duration::from_secs(120),
        || (task_owners(&wait_state(&trib.url, "jsink", 2, "RUNNING")) == both).then_some(()),
    );
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let mut phase = |name: &str| {
        let lines: Vec<String> = (0..400).map(|i| format!("{name} line {i}")).collect();
        // No key: the producer spreads the lines over both partitions, so both tasks write.
        produce_values(&bootstrap, &topic, None, &lines);
        expected.extend(lines.iter().map(|l| l.as_bytes().to_vec()));
        let extra = wait_all_lines(name, &out, &expected, Duration::from_secs(120));
        eprintln!("{name}: {} lines, {extra} redelivered", expected.len());
    };
    phase("both");

    java.terminate();
    let only_trib: BTreeSet<String> = [trib.id()].into();
    wait_for(
        "both tasks on the Tributary worker",
        Duration::from_secs(120),
        || (owners(&wait_state(&trib.url, "jsink", 2, "RUNNING")) == only_trib).then_some(()),
    );
    assert!(
        std::fs::read_to_string(format!("/proc/{}/maps", trib.child.id()))
            .unwrap()
            .contains("libjvm"),
        "the Tributary worker hosts the Java tasks in its JVM"
    );
    phase("tributary");

    let java2 = JavaWorker::start(d, "java-2", &bootstrap, &group);
    let everyone: BTreeSet<String> = [java2.id(), trib.id()].into();
    wait_for(
        "the tasks spread over the Tributary and the new Java worker",
        Duration::from_secs(120),
        || {
            (task_owners(&wait_state(&java2.url(), "jsink", 2, "RUNNING")) == everyone)
                .then_some(())
        },
    );
    trib.terminate();
    let only_java: BTreeSet<String> = [java2.id()].into();
    wait_for(
        "the connector and both tasks on the Java worker",
        Duration::from_secs(120),
        || (owners(&wait_state(&java2.url(), "jsink", 2, "RUNNING")) == only_java).then_some(()),
    );
    phase("java");
}

/// Exactly-once source support (KIP-618) across Java and Tributary workers: each fences the
/// other's zombie task producers (the same `transactional.id` scheme), each reads the task
/// count records the other writes, and a `read_committed` consumer sees every sequence number
/// of each task exactly once through two SIGKILLs and two task generations. The connector is
/// a Java plugin both runtimes load from `plugin.path` (`bench/java`'s SequenceSourceConnector,
/// which sends VerifiableSource's records; Connect 4.1.1's jars carry no VerifiableSource), so
/// on the Tributary worker its tasks are Java-hosted and their records go through Tributary's
/// transactional producers.
#[test]
fn java_and_tributary_workers_fence_each_others_exactly_once_tasks() {
    use common::eos::*;
    let Some(bootstrap) = gate() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let bench_java = repo_root().join("bench/java/dev/tributary/bench");
    let plugins = java_plugin_dir(
        d,
        "sequence",
        &classpath,
        &[
            bench_java.join("SequenceSourceConnector.java"),
            bench_java.join("SequenceSourceTask.java"),
        ],
    );
    let group = unique("mixed-eos");
    let topic = unique("mixed-eos-seq");
    create_topic(&bootstrap, &topic, 1);
    let eos = format!(
        "exactly.once.source.support=enabled\nplugin.path={}\n",
        plugins.display()
    );
    let tributary = DistributedWorker::start(
        d,
        "tributary-1",
        &bootstrap,
        &group,
        &format!(
            "{WORKER_EXTRA}exactly.once.source.support=enabled\n{}",
            jvm_lines(&classpath, &plugins.display().to_string(), &[])
        ),
    );
    tributary.wait_joined();
    let mut java = JavaWorker::start_with(d, "java-1", &bootstrap, &group, &eos);
    let config = serde_json::json!({
        "connector.class": "dev.tributary.bench.SequenceSourceConnector",
        "tasks.max": "2", "topic": topic, "throughput": "300",
        "transaction.boundary": "interval", "transaction.boundary.interval.ms": "100",
    });
    create(&tributary.url, "seq", config.clone());
    let status = wait_state(&tributary.url, "seq", 2, "RUNNING");
    let progressed = |by: i64| {
        let from = stable_end(&bootstrap, &topic);
        wait_for("committed records", Duration::from_secs(120), || {
            (stable_end(&bootstrap, &topic) > from + by).then_some(())
        });
    };
    progressed(500);
    // The Java worker runs a task: killed, its task moves to the Tributary worker, whose
    // producer fences the Java one.
    assert!(
        task_owners(&status).contains(&java.id()),
        "the Java worker runs no task: {status}"
    );
    java.kill();
    wait_for(
        "the Tributary worker to run both tasks",
        Duration::from_secs(120),
        || {
            let (_, v) = http(
                "GET",
                &format!("{}/connectors/seq/status", tributary.url),
                None,
            );
            let ts = v["tasks"].as_array().cloned().unwrap_or_default();
            (ts.len() == 2
                && ts
                    .iter()
                    .all(|t| t["state"] == "RUNNING" && t["worker_id"] == tributary.id().as_str()))
            .then_some(())
        },
    );
    progressed(1000);
    // A Java worker joins and the Tributary worker is killed: the Java worker runs the tasks
    // on from the offsets the Tributary tasks committed in their transactions.
    let java2 = JavaWorker::start_with(d, "java-2", &bootstrap, &group, &eos);
    // Not before the Java worker's task has started: a task whose fencing request to the
    // (Tributary) leader is cut by the leader's death fails for good, in Connect too.
    wait_for(
        "the Java worker to run a task",
        Duration::from_secs(120),
        || {
            let (_, v) = http(
                "GET",
                &format!("{}/connectors/seq/status", tributary.url),
                None,
            );
            let ts = v["tasks"].as_array().cloned().unwrap_or_default();
            (ts.len() == 2
                && ts.iter().all(|t| t["state"] == "RUNNING")
                && ts.iter().any(|t| t["worker_id"] == java2.id().as_str()))
            .then_some(())
        },
    );
    progressed(300);
    let mut tributary = tributary;
    tributary.kill();
    wait_for(
        "the Java worker to run both tasks",
        Duration::from_secs(180),
        || {
            let (_, v) = http(
                "GET",
                &format!("{}/connectors/seq/status", java2.url()),
                None,
            );
            let ts = v["tasks"].as_array().cloned().unwrap_or_default();
            (ts.len() == 2
                && ts
                    .iter()
                    .all(|t| t["state"] == "RUNNING" && t["worker_id"] == java2.id().as_str()))
            .then_some(())
        },
    );
    progressed(1000);
    // A new generation through the Java leader: it fences after the task count record the
    // Tributary leader wrote.
    let mut one = config.clone();
    one["tasks.max"] = serde_json::json!("1");
    let (code, v) = http_settled(
        "PUT",
        &format!("{}/connectors/seq/config", java2.url()),
        Some(&one.to_string()),
    );
    assert_eq!(code, 200, "{v}");
    wait_state(&java2.url(), "seq", 1, "RUNNING");
    progressed(500);
    let records = task_count_records(&bootstrap, &group, "seq");
    assert_eq!(
        records.first().map(String::as_str),
        Some(r#"{"task-count":2}"#),
        "{records:?}"
    );
    assert_eq!(
        records.last().map(String::as_str),
        Some(r#"{"task-count":1}"#),
        "{records:?}"
    );
    let (code, v) = http_settled("PUT", &format!("{}/connectors/seq/stop", java2.url()), None);
    assert_eq!(code, 204, "{v}");
    wait_state(&java2.url(), "seq", 0, "STOPPED");
    let by_task = seqnos_by_task(&read_committed(&bootstrap, &topic));
    assert_eq!(by_task.len(), 2, "{:?}", by_task.keys());
    assert_exactly_once(&by_task);
}

/// A plugin directory with `bench/java`'s SequenceSourceConnector, compiled against the Java
/// bridge's Connect API jars: the Java connector every implementation in these tests runs
/// (Connect's own `connect-file` is not published after 4.1, and 4.1's does not run on 4.4).
fn sequence_plugin(dir: &Path, classpath: &str) -> PathBuf {
    let bench_java = repo_root().join("bench/java/dev/tributary/bench");
    java_plugin_dir(
        dir,
        "sequence",
        classpath,
        &[
            bench_java.join("SequenceSourceConnector.java"),
            bench_java.join("SequenceSourceTask.java"),
        ],
    )
}

/// Every status record of `connector`'s tasks in the status topic of `group`, in log order per
/// task: `(task, state, worker_id)`.
fn task_status_history(
    bootstrap: &str,
    group: &str,
    connector: &str,
) -> Vec<(String, String, String)> {
    let prefix = format!("status-task-{connector}-");
    common::eos::read_all(bootstrap, &format!("{group}-status"))
        .records
        .into_iter()
        .filter_map(|(key, value)| {
            let task = key.strip_prefix(&prefix)?.to_string();
            let v = value?;
            Some((
                task,
                v["state"].as_str().unwrap_or_default().to_string(),
                v["worker_id"].as_str().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

/// No task RUNNING on two workers at once, as the status topic tells it: a task a worker
/// reported RUNNING is reported stopped (UNASSIGNED or FAILED) by that worker before another
/// worker reports it RUNNING.
fn assert_one_owner_at_a_time(history: &[(String, String, String)]) {
    let mut running_on: HashMap<&str, &str> = HashMap::new();
    for (task, state, worker) in history {
        match state.as_str() {
            "RUNNING" => {
                if let Some(other) = running_on.get(task.as_str()) {
                    assert_eq!(
                        other, worker,
                        "task {task} RUNNING on {worker} while RUNNING on {other}: {history:?}"
                    );
                }
                running_on.insert(task, worker);
            }
            "UNASSIGNED" | "FAILED" if running_on.get(task.as_str()) == Some(&worker.as_str()) => {
                running_on.remove(task.as_str());
            }
            _ => {}
        }
    }
}

/// Each task's sequence numbers in `topic` run from 0 to their maximum with none missing
/// (at-least-once: a number may repeat after a task moved); returns the records per task.
fn assert_no_seqno_lost(bootstrap: &str, topic: &str, tasks: usize) -> Vec<usize> {
    let by_task = common::eos::seqnos_by_task(&read_topic_records(bootstrap, topic));
    assert_eq!(by_task.len(), tasks, "{:?}", by_task.keys());
    by_task
        .iter()
        .map(|(task, seqnos)| {
            let seen: BTreeSet<i64> = seqnos.iter().copied().collect();
            let max = *seen.last().unwrap();
            let gaps: Vec<i64> = (0..max).filter(|n| !seen.contains(n)).take(10).collect();
            assert!(
                gaps.is_empty(),
                "task {task}: seqnos missing {gaps:?} (max {max})"
            );
            seqnos.len()
        })
        .collect()
}

/// The tasks of `connector` all RUNNING, as `url` reports them, on workers among `live`; the
/// status body.
fn wait_running_on(url: &str, connector: &str, tasks: usize, live: &BTreeSet<String>) -> Value {
    wait_for(
        &format!("{connector}'s {tasks} tasks RUNNING on {live:?}"),
        Duration::from_secs(180),
        || {
            let (_, v) = http("GET", &format!("{url}/connectors/{connector}/status"), None);
            let ts = v["tasks"].as_array().cloned().unwrap_or_default();
            let on_live = ts.len() == tasks
                && ts.iter().all(|t| {
                    t["state"] == "RUNNING"
                        && t["worker_id"].as_str().is_some_and(|w| live.contains(w))
                })
                && v["connector"]["worker_id"]
                    .as_str()
                    .is_some_and(|w| live.contains(w));
            on_live.then_some(v)
        },
    )
}

/// Connect 4.1.1, Connect 4.4.0 and Tributary workers in one group: a Java connector's tasks
/// run on each of them, and each implementation's REST API answers for the whole cluster.
#[test]
fn java_4_1_java_4_4_and_tributary_workers_share_one_group() {
    let Some(bootstrap) = gate_4_4() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let plugins = sequence_plugin(d, &classpath);
    let group = unique("mixed-versions");
    let topic = unique("mixed-versions-seq");
    create_topic(&bootstrap, &topic, 1);
    let plugin_path = format!("plugin.path={}\n", plugins.display());
    let tributary = DistributedWorker::start(
        d,
        "tributary-1",
        &bootstrap,
        &group,
        &format!(
            "{WORKER_EXTRA}{}",
            jvm_lines(&classpath, &plugins.display().to_string(), &[])
        ),
    );
    tributary.wait_joined();
    let old = JavaWorker::start_version(
        d,
        "java-4.1",
        (&bootstrap, &group),
        &plugin_path,
        "",
        REFERENCE_4_1,
    );
    let new = JavaWorker::start_version(
        d,
        "java-4.4",
        (&bootstrap, &group),
        &plugin_path,
        "",
        REFERENCE_4_4,
    );
    // `GET /` names each worker's version.
    assert_eq!(
        http("GET", &format!("{}/", old.url()), None).1["version"],
        "4.1.1"
    );
    assert_eq!(
        http("GET", &format!("{}/", new.url()), None).1["version"],
        "4.4.0"
    );
    let config = serde_json::json!({
        "connector.class": "dev.tributary.bench.SequenceSourceConnector",
        "tasks.max": "3", "topic": topic, "throughput": "100",
    });
    create(&new.url(), "seq", config);
    let all: BTreeSet<String> = [tributary.id(), old.id(), new.id()].into();
    let status = wait_running_on(&tributary.url, "seq", 3, &all);
    assert_eq!(
        task_owners(&status),
        all,
        "one task on each implementation: {status}"
    );
    for url in [tributary.url.clone(), old.url(), new.url()] {
        assert_eq!(
            wait_state(&url, "seq", 3, "RUNNING")["tasks"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
    let from = topic_end(&bootstrap, &topic);
    wait_for("records from every task", Duration::from_secs(120), || {
        (topic_end(&bootstrap, &topic) > from + 300).then_some(())
    });
    let (code, v) = http_settled("PUT", &format!("{}/connectors/seq/stop", old.url()), None);
    assert_eq!(code, 204, "{v}");
    wait_state(&tributary.url, "seq", 0, "STOPPED");
    let counts = assert_no_seqno_lost(&bootstrap, &topic, 3);
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    assert_one_owner_at_a_time(&task_status_history(&bootstrap, &group, "seq"));
}

/// A rolling upgrade of a 3-worker Connect 4.4.0 cluster to Tributary under load, one worker at
/// a time (SIGTERM, then a Tributary worker in its place), and the rollback to Connect 4.4.0
/// the same way: the Java connector's tasks move with every step, no sequence number is lost,
/// and no task is RUNNING on two workers at once.
#[test]
fn rolling_upgrade_from_java_4_4_to_tributary_and_back_loses_no_record() {
    let Some(bootstrap) = gate_4_4() else { return };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let plugins = sequence_plugin(d, &classpath);
    let group = unique("upgrade");
    let topic = unique("upgrade-seq");
    create_topic(&bootstrap, &topic, 1);
    let plugin_path = format!("plugin.path={}\n", plugins.display());
    let java = |name: &str| {
        JavaWorker::start_version(
            d,
            name,
            (&bootstrap, &group),
            &plugin_path,
            "",
            REFERENCE_4_4,
        )
    };
    let tributary = |name: &str| {
        let w = DistributedWorker::start(
            d,
            name,
            &bootstrap,
            &group,
            &format!(
                "{WORKER_EXTRA}{}",
                jvm_lines(&classpath, &plugins.display().to_string(), &[])
            ),
        );
        w.wait_joined();
        w
    };
    let mut javas: Vec<JavaWorker> = ["java-1", "java-2", "java-3"]
        .iter()
        .map(|n| java(n))
        .collect();
    let config = serde_json::json!({
        "connector.class": "dev.tributary.bench.SequenceSourceConnector",
        "tasks.max": "3", "topic": topic, "throughput": "100",
    });
    create(&javas[0].url(), "seq", config);
    let mut live: BTreeSet<String> = javas.iter().map(JavaWorker::id).collect();
    wait_running_on(&javas[0].url(), "seq", 3, &live);
    let progressed = |by: i64| {
        let from = topic_end(&bootstrap, &topic);
        wait_for("records flowing", Duration::from_secs(120), || {
            (topic_end(&bootstrap, &topic) > from + by).then_some(())
        });
    };
    progressed(200);
    // Upgrade: each Java worker in turn leaves and a Tributary worker takes its place.
    let mut tributaries: Vec<DistributedWorker> = Vec::new();
    for i in 0..3 {
        let mut leaving = javas.remove(0);
        leaving.terminate();
        live.remove(&leaving.id());
        let t = tributary(&format!("tributary-{}", i + 1));
        live.insert(t.id());
        wait_running_on(&t.url, "seq", 3, &live);
        tributaries.push(t);
        progressed(100);
    }
    let on_tributary: BTreeSet<String> = tributaries.iter().map(|t| t.id()).collect();
    let status = wait_running_on(&tributaries[0].url, "seq", 3, &on_tributary);
    assert_eq!(task_owners(&status), on_tributary, "{status}");
    // Rollback: each Tributary worker in turn leaves and a Java 4.4.0 worker takes its place.
    for i in 0..3 {
        let mut leaving = tributaries.remove(0);
        leaving.terminate();
        live.remove(&leaving.id());
        let j = java(&format!("java-back-{}", i + 1));
        live.insert(j.id());
        wait_running_on(&j.url(), "seq", 3, &live);
        javas.push(j);
        progressed(100);
    }
    let status = wait_running_on(&javas[0].url(), "seq", 3, &live);
    assert!(task_owners(&status).is_subset(&live), "{status}");
    let (code, v) = http_settled(
        "PUT",
        &format!("{}/connectors/seq/stop", javas[0].url()),
        None,
    );
    assert_eq!(code, 204, "{v}");
    wait_state(&javas[0].url(), "seq", 0, "STOPPED");
    assert_no_seqno_lost(&bootstrap, &topic, 3);
    let history = task_status_history(&bootstrap, &group, "seq");
    let owners: BTreeSet<&str> = history
        .iter()
        .filter(|(_, state, _)| state == "RUNNING")
        .map(|(_, _, worker)| worker.as_str())
        .collect();
    assert!(
        owners.len() >= 6,
        "the tasks ran on the Java, Tributary and Java workers in turn: {owners:?}"
    );
    assert_one_owner_at_a_time(&history);
}

/// The check of the tests above fails on a task RUNNING on a second worker before the first
/// reported it stopped, and passes on a clean handover.
#[test]
fn the_one_owner_check_catches_a_task_running_twice() {
    let h = |rows: &[(&str, &str, &str)]| -> Vec<(String, String, String)> {
        rows.iter()
            .map(|(t, s, w)| (t.to_string(), s.to_string(), w.to_string()))
            .collect()
    };
    assert_one_owner_at_a_time(&h(&[
        ("0", "RUNNING", "a"),
        ("0", "UNASSIGNED", "a"),
        ("0", "RUNNING", "b"),
    ]));
    let twice = h(&[("0", "RUNNING", "a"), ("0", "RUNNING", "b")]);
    assert!(std::panic::catch_unwind(|| assert_one_owner_at_a_time(&twice)).is_err());
}

/// Connectors as code (issue #35) against Java Connect 4.1.1: `tributary apply` speaks only
/// the REST API, so the scenario the Tributary cluster runs (`cluster/declared_connectors.rs`)
/// holds against a Java worker too: KIP-980 creates, PUT of changed configs only, pause, stop,
/// `--prune` of managed connectors only, a broken file left out.
#[test]
fn apply_and_the_admin_cli_work_against_a_java_worker() {
    let Some(bootstrap) = gate() else {
        return;
    };
    let dir = test_dir();
    let group = unique("apply-java");
    let java = JavaWorker::start(dir.path(), "java-apply", &bootstrap, &group);
    common::declared::apply_scenario(&java.url(), dir.path(), &group);
    // The admin CLI too: every command's output and exit code against Java.
    common::declared::admin_scenario(&java.url(), dir.path(), &group);
}
