//! Test harness for Tributary's integration tests and the crates' tests against real systems:
//! finds the broker through `KAFKA_BOOTSTRAP` and the other services the project's scripts
//! start (tests skip themselves without them, or fail under CI), runs `tributary` worker
//! processes, talks to their REST API, reads and writes topics with librdkafka, and compiles
//! and runs the Java programs of the conformance vectors.

pub mod corpus;
pub mod declared;
pub mod eos;
pub mod faults;
pub mod mirror;
pub use mirror::*;
pub mod postgres;
pub mod secure;
pub mod text;

pub use secure::{oidc_kafka_opts, oidc_lines, sasl_ssl_lines, scram, secure, Secure};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

/// The `tributary` binary under test: `TRIBUTARY_BIN` when set, else `tributary` in the
/// directory above the test executable's (cargo puts integration tests in
/// `target/<profile>/deps` and the binary they test in `target/<profile>`, building it first).
/// Panics naming both when neither exists.
pub fn tributary_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("TRIBUTARY_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let beside = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("tributary"))
        .filter(|p| p.is_file());
    beside.unwrap_or_else(|| {
        panic!(
            "no tributary binary next to {} (set TRIBUTARY_BIN, or run the tests with cargo test -p tributary)",
            exe.display()
        )
    })
}

/// The broker's bootstrap address, or `None` (and a note on stderr) when the test must skip;
/// under CI a missing broker fails the test instead (see [`missing`]).
pub fn kafka() -> Option<String> {
    match std::env::var("KAFKA_BOOTSTRAP") {
        Ok(b) if !b.is_empty() => {
            name_logs_on_failure();
            Some(b)
        }
        _ => missing("KAFKA_BOOTSTRAP is not set (scripts/test starts Kafka and sets it)"),
    }
}

/// A prerequisite of a test is missing: outside CI the test says "skipped: …" and passes
/// (returns `None`); under CI (`CI=true`, as `.ci/run` runs) it fails, so a green CI run never
/// hides a check that did not run.
pub fn missing<T>(why: &str) -> Option<T> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if ci {
        panic!("a prerequisite of this test is missing under CI: {why}");
    }
    eprintln!("skipped: {why}");
    None
}

fn on_path(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("-version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The Connect release the conformance vectors are checked against: the newest (4.4.0);
/// `CONNECT_VERSION` picks another (`CONNECT_VERSION=4.1.1` for the release older workers of a
/// mixed cluster run).
pub const VECTORS_CONNECT_VERSION: &str = "4.4.0";

/// Compiles `conformance/java/<source>` with `javac` against Apache Kafka Connect's jars of
/// [`VECTORS_CONNECT_VERSION`] (`scripts/connect-java classpath`, which fetches them through
/// Maven when missing). Returns the classpath to run it with and the temporary directory
/// holding its classes; `None` (after [`missing`]) without java/javac or the jars.
pub fn java_vector_program(source: &str) -> Option<(String, tempfile::TempDir)> {
    java_vector_program_with(source, "")
}

/// [`java_vector_program`] with `extra` (a classpath, e.g. `dir/*`; empty for none) after
/// Connect's jars, to compile and run against other jars too.
#[allow(dead_code)]
pub fn java_vector_program_with(source: &str, extra: &str) -> Option<(String, tempfile::TempDir)> {
    if !on_path("java") || !on_path("javac") {
        return missing("java/javac not found (Java 17+ is needed for the conformance vectors)");
    }
    let root = repo_root();
    let version = std::env::var("CONNECT_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| VECTORS_CONNECT_VERSION.to_string());
    let out = std::process::Command::new(root.join("scripts/connect-java"))
        .arg("classpath")
        .env("CONNECT_VERSION", &version)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return missing("`scripts/connect-java classpath` failed (no Maven or no network?)");
    }
    let mut jars = String::from_utf8(out.stdout).unwrap().trim().to_string();
    if !extra.is_empty() {
        jars = format!("{jars}:{extra}");
    }
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("javac")
        .args(["-nowarn", "-encoding", "UTF-8", "-cp", &jars, "-d"])
        .arg(dir.path())
        .arg(root.join("conformance/java").join(source))
        .status()
        .expect("running javac");
    assert!(status.success(), "javac failed on {source}");
    let cp = format!("{jars}:{}", dir.path().display());
    Some((cp, dir))
}

/// Makes a failing test name the broker's log (`KAFKA_LOG_FILE`, set by `scripts/test`) after
/// its panic message; the test's directory, with the workers' logs, is kept (see [`TestDir`]).
fn name_logs_on_failure() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if let Ok(log) = std::env::var("KAFKA_LOG_FILE") {
                eprintln!("the broker's log: {log}");
            }
        }));
    });
}

/// The repository's root: found at run time from the crate the running test belongs to
/// (`CARGO_MANIFEST_DIR`, which `cargo test` sets) up to the directory holding `scripts/kafka`,
/// else this crate's own directory as it was compiled. Not only the compile-time path: cargo
/// reuses a build of this library made in another checkout of the repository (its fingerprint
/// does not include the absolute path), whose path would then be stale.
pub fn repo_root() -> PathBuf {
    let compiled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let running = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    running
        .iter()
        .flat_map(|dir| dir.ancestors())
        .find(|dir| dir.join("scripts/kafka").is_file())
        .map(Path::to_path_buf)
        .unwrap_or(compiled)
}

/// `../shared` (or `TRIBUTARY_SHARED`).
pub fn shared_dir() -> PathBuf {
    std::env::var("TRIBUTARY_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo_root().join("../shared"))
}

/// A name unique to this test run: `<prefix>-<pid>-<ns>-<n>`, `n` counting the calls.
pub fn unique(prefix: &str) -> String {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{prefix}-{}-{}-{n}",
        std::process::id(),
        nanos % 1_000_000_000
    )
}

/// Polls `cond` every 50 ms until it returns `Some`, or panics with `what` after `timeout`.
pub fn wait_for<T>(what: &str, timeout: Duration, mut cond: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = cond() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Connect's basic authentication of a worker's REST API (`BasicAuthSecurityRestExtension`
/// with its `PropertyFileLoginModule`), as a test sets it up: the users in
/// `dir/users.properties` and a JAAS file naming them.
pub struct RestBasicAuth {
    /// The worker's `KAFKA_OPTS`: `-Djava.security.auth.login.config=<the JAAS file>`.
    pub kafka_opts: String,
}

impl RestBasicAuth {
    /// The worker setting that turns the extension on (a line of a worker file).
    pub const SETTING: &'static str = "rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension\n";

    /// Writes the users (`(name, password)`) and the JAAS file into `dir`.
    pub fn write(dir: &Path, users: &[(&str, &str)]) -> RestBasicAuth {
        let creds = dir.join("users.properties");
        // A properties key escapes `=`, `:` and spaces (a user may be named `CN=app`).
        let key = |u: &str| {
            u.chars()
                .flat_map(|c| match c {
                    '=' | ':' | ' ' => vec!['\\', c],
                    c => vec![c],
                })
                .collect::<String>()
        };
        let lines: String = users
            .iter()
            .map(|(u, p)| format!("{}={p}\n", key(u)))
            .collect();
        std::fs::write(&creds, lines).unwrap();
        let jaas = dir.join("rest.jaas");
        std::fs::write(
            &jaas,
            format!(
                "KafkaConnect {{\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\"{}\";\n}};\n",
                creds.display()
            ),
        )
        .unwrap();
        RestBasicAuth {
            kafka_opts: format!("-Djava.security.auth.login.config={}", jaas.display()),
        }
    }
}

/// The `Authorization` header of HTTP basic authentication: `Basic <base64(user:password)>`.
pub fn basic_authorization(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// One REST request with `headers` (a JSON `body` when given; 60 s timeout): the status and
/// the body as JSON, or as a JSON string when it is not JSON (e.g. `/metrics`).
pub fn rest_request(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
    headers: &[(&str, &str)],
) -> (u16, serde_json::Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut req = client.request(method.parse().unwrap(), format!("{url}{path}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let r = req.send().unwrap();
    let code = r.status().as_u16();
    let text = r.text().unwrap_or_default();
    (
        code,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}

/// Splits on `\n`, `\r\n` and lone `\r`; drops an unterminated tail (FileStreamSource holds it).
pub fn terminated_lines(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'\n' => {
                out.push(data[start..i].to_vec());
                start = i + 1;
            }
            b'\r' => {
                out.push(data[start..i].to_vec());
                if i + 1 < data.len() && data[i + 1] == b'\n' {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A `tributary standalone` process with its own directory, offsets file and log.
pub struct StandaloneWorker {
    pub dir: PathBuf,
    pub child: Child,
    pub url: String,
    pub log: PathBuf,
}

impl StandaloneWorker {
    /// Writes `worker.properties` (with `extra` lines) into `dir` and starts the worker with the
    /// given connector files; waits until its REST API answers.
    pub fn start(
        dir: &Path,
        bootstrap: &str,
        extra: &str,
        connector_files: &[&str],
    ) -> StandaloneWorker {
        let props = format!(
            "bootstrap.servers={bootstrap}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename={}/offsets\noffset.flush.interval.ms=1000\nlisteners=http://127.0.0.1:0\n{extra}\n",
            dir.display()
        );
        std::fs::write(dir.join("worker.properties"), props).unwrap();
        Self::spawn(dir, connector_files)
    }

    /// Starts the worker over an existing `worker.properties` in `dir`.
    pub fn spawn(dir: &Path, connector_files: &[&str]) -> StandaloneWorker {
        Self::spawn_with_env(dir, connector_files, &[])
    }

    /// [`Self::spawn`] with extra environment variables for the worker process.
    pub fn spawn_with_env(
        dir: &Path,
        connector_files: &[&str],
        env: &[(&str, &str)],
    ) -> StandaloneWorker {
        let log = dir.join(format!("worker-{}.log", unique("run")));
        let logf = std::fs::File::create(&log).unwrap();
        let stdout = std::fs::File::create(dir.join("stdout.log")).unwrap();
        let child = Command::new(tributary_binary())
            .arg("standalone")
            .arg("worker.properties")
            .args(connector_files)
            .envs(env.iter().copied())
            .current_dir(dir)
            .stdout(stdout)
            .stderr(logf)
            .spawn()
            .expect("starting tributary");
        let mut w = StandaloneWorker {
            dir: dir.to_path_buf(),
            child,
            url: String::new(),
            log,
        };
        let re = regex::Regex::new(r"REST server listening on (https?://\S+)").unwrap();
        w.url = wait_for("the worker's REST server", Duration::from_secs(60), || {
            if let Ok(Some(status)) = w.child.try_wait() {
                panic!("worker exited with {status}: {}", w.log_text());
            }
            let text = w.log_text();
            re.captures(&text).map(|c| c[1].to_string())
        });
        w
    }

    /// The first line of the worker's log containing `needle`, waited for up to `timeout`
    /// (`what` names it if it never comes).
    pub fn wait_log_line(&self, what: &str, needle: &str, timeout: Duration) -> String {
        wait_for(what, timeout, || {
            self.log_text()
                .lines()
                .find(|l| l.contains(needle))
                .map(str::to_string)
        })
    }

    pub fn log_text(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            // An unreadable log (e.g. cut mid-character) shows as empty text.
            f.read_to_string(&mut s).ok();
        }
        s
    }

    /// `GET path`: the status and the body as text (`/metrics`' exposition).
    pub fn get_text(&self, path: &str) -> (u16, String) {
        let r = reqwest::blocking::get(format!("{}{path}", self.url)).unwrap();
        let status = r.status().as_u16();
        (status, r.text().unwrap())
    }

    pub fn get(&self, path: &str) -> (u16, serde_json::Value) {
        let r = reqwest::blocking::get(format!("{}{path}", self.url)).unwrap();
        let status = r.status().as_u16();
        let text = r.text().unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }

    /// One request; waits up to 90 s for the answer (Connect's REST request timeout: a create
    /// may start the worker's JVM to validate a Java plugin's config).
    pub fn send(&self, method: &str, path: &str, body: Option<&str>) -> (u16, serde_json::Value) {
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(90))
            .build()
            .unwrap();
        let mut req = client.request(method.parse().unwrap(), format!("{}{path}", self.url));
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().unwrap();
        let status = r.status().as_u16();
        let text = r.text().unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }

    /// Waits until the connector and all its tasks (at least `tasks`) are in `state`; on
    /// timeout the panic shows the last status seen.
    pub fn wait_state(&self, connector: &str, tasks: usize, state: &str) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (code, body) = self.get(&format!("/connectors/{connector}/status"));
            if code == 200 {
                if let Some(ts) = body["tasks"].as_array() {
                    if body["connector"]["state"] == state
                        && ts.len() >= tasks
                        && ts.iter().all(|t| t["state"] == state)
                    {
                        return body;
                    }
                }
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {connector} to be {state} with {tasks} tasks; last status: {body}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        // Best effort: the worker may have exited already.
        self.child.kill().ok();
        self.child.wait().ok();
    }

    /// SIGTERM and wait for a clean exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        unsafe_sigterm(self.child.id());
        wait_for("the worker to exit", Duration::from_secs(60), || {
            self.child.try_wait().unwrap()
        })
    }
}

impl Drop for StandaloneWorker {
    fn drop(&mut self) {
        // Best effort: the worker may have exited already.
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn unsafe_sigterm(pid: u32) {
    // The caller's wait for the exit fails the test when the signal did not arrive.
    if let Err(e) = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
    {
        eprintln!("cannot run kill -TERM {pid}: {e}");
    }
}

/// Every record value in a topic's partition 0, from the beginning to the current end (see
/// [`read_topic_records`]).
pub fn read_topic(bootstrap: &str, topic: &str) -> Vec<Vec<u8>> {
    read_topic_records(bootstrap, topic)
        .into_iter()
        .map(|(_, value)| value)
        .collect()
}

/// The end offset of a topic's partition 0 (0 when the topic does not exist yet).
pub fn topic_end(bootstrap: &str, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(5))
        .map(|(_, h)| h)
        .unwrap_or(0)
}

/// Waits (up to 60 s) until partition 0 of `topic` ends at offset `n`.
pub fn wait_topic_end(bootstrap: &str, topic: &str, n: i64) {
    wait_for(
        &format!("{n} records in {topic}"),
        Duration::from_secs(60),
        || (topic_end(bootstrap, topic) == n).then_some(()),
    );
}

/// The worker file of a distributed worker in group `group` (topics named after the group,
/// replication factor 1, a short session timeout so that dead workers are noticed quickly).
pub fn distributed_properties(bootstrap: &str, group: &str, extra: &str) -> String {
    format!(
        "bootstrap.servers={bootstrap}\ngroup.id={group}\nconfig.storage.topic={group}-configs\noffset.storage.topic={group}-offsets\nstatus.storage.topic={group}-status\nconfig.storage.replication.factor=1\noffset.storage.replication.factor=1\nstatus.storage.replication.factor=1\noffset.storage.partitions=5\nstatus.storage.partitions=3\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\nlisteners=http://127.0.0.1:0\noffset.flush.interval.ms=500\nsession.timeout.ms=6000\nheartbeat.interval.ms=1000\n{extra}\n"
    )
}

/// A `tributary distributed` process.
pub struct DistributedWorker {
    pub inner: StandaloneWorker,
    pub name: String,
}

impl DistributedWorker {
    /// Starts worker `name` of `group` in its own directory under `dir`.
    pub fn start(
        dir: &Path,
        name: &str,
        bootstrap: &str,
        group: &str,
        extra: &str,
    ) -> DistributedWorker {
        let wdir = dir.join(name);
        std::fs::create_dir_all(&wdir).unwrap();
        std::fs::write(
            wdir.join("worker.properties"),
            distributed_properties(bootstrap, group, extra),
        )
        .unwrap();
        DistributedWorker {
            inner: Self::spawn_in(&wdir, &[]),
            name: name.to_string(),
        }
    }

    /// [`DistributedWorker::start`] with extra environment variables (e.g. `KAFKA_OPTS`).
    pub fn start_with_env(
        dir: &Path,
        name: &str,
        bootstrap: &str,
        group: &str,
        extra: &str,
        env: &[(&str, &str)],
    ) -> DistributedWorker {
        let wdir = dir.join(name);
        std::fs::create_dir_all(&wdir).unwrap();
        std::fs::write(
            wdir.join("worker.properties"),
            distributed_properties(bootstrap, group, extra),
        )
        .unwrap();
        DistributedWorker {
            inner: Self::spawn_in(&wdir, env),
            name: name.to_string(),
        }
    }

    fn spawn_in(wdir: &Path, env: &[(&str, &str)]) -> StandaloneWorker {
        let log = wdir.join(format!("worker-{}.log", unique("run")));
        let logf = std::fs::File::create(&log).unwrap();
        let child = Command::new(tributary_binary())
            .args(["distributed", "worker.properties"])
            .envs(env.iter().copied())
            .current_dir(wdir)
            .stdout(Stdio::null())
            .stderr(logf)
            .spawn()
            .expect("starting tributary");
        let mut w = StandaloneWorker {
            dir: wdir.to_path_buf(),
            child,
            url: String::new(),
            log,
        };
        let re = regex::Regex::new(r"REST server listening on (https?://\S+)").unwrap();
        w.url = wait_for("the worker's REST server", Duration::from_secs(90), || {
            if let Ok(Some(status)) = w.child.try_wait() {
                panic!("worker exited with {status}: {}", w.log_text());
            }
            re.captures(&w.log_text()).map(|c| c[1].to_string())
        });
        w
    }

    /// This worker's id (`host:port`).
    pub fn id(&self) -> String {
        self.inner.url.trim_start_matches("http://").to_string()
    }

    /// Waits until this worker has joined the group (it reports a generation).
    pub fn wait_joined(&self) {
        wait_for(
            &format!("{} to join", self.name),
            Duration::from_secs(90),
            || {
                let (_, w) = self.inner.get("/tributary/worker");
                (w["generation"].as_i64().unwrap_or(0) > 0).then_some(())
            },
        );
    }
}

impl std::ops::Deref for DistributedWorker {
    type Target = StandaloneWorker;
    fn deref(&self) -> &StandaloneWorker {
        &self.inner
    }
}

impl std::ops::DerefMut for DistributedWorker {
    fn deref_mut(&mut self) -> &mut StandaloneWorker {
        &mut self.inner
    }
}

/// Every record (key, value) in a topic's partition 0, from the beginning to the current end
/// (see [`read_records`]; a null key or value reads as empty).
pub fn read_topic_records(bootstrap: &str, topic: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    read_records(bootstrap, topic)
        .into_iter()
        .map(|r| (r.key.unwrap_or_default(), r.value.unwrap_or_default()))
        .collect()
}

/// Produces one raw record (used to put garbage into a config topic, or an offset into an
/// offsets topic), to the partition Java's producer would choose for its key (murmur2), where
/// a Connect worker writes that key too.
pub fn produce_raw(bootstrap: &str, topic: &str, key: &[u8], value: &[u8]) {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("partitioner", "murmur2_random")
        .create()
        .unwrap();
    p.send(BaseRecord::<[u8], [u8]>::to(topic).key(key).payload(value))
        .map_err(|(e, _)| e)
        .unwrap();
    p.flush(Duration::from_secs(10)).unwrap();
}

impl StandaloneWorker {
    /// Sends a request with a JSON body and extra headers.
    pub fn send_with_headers(
        &self,
        method: &str,
        path: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> (u16, serde_json::Value) {
        let client = reqwest::blocking::Client::new();
        let mut req = client
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .header("Content-Type", "application/json")
            .body(body.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().unwrap();
        let status = r.status().as_u16();
        let text = r.text().unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }
}

/// A test's working directory: removed afterwards unless the test failed or
/// `TRIBUTARY_KEEP_TEST_DIRS` is set (then its path is printed, with the workers' logs inside:
/// Tributary workers' `worker-*.log`, Java workers' `stderr.log`).
pub struct TestDir(Option<tempfile::TempDir>, PathBuf);

impl TestDir {
    pub fn path(&self) -> &Path {
        &self.1
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking() || std::env::var("TRIBUTARY_KEEP_TEST_DIRS").is_ok() {
            if let Some(d) = self.0.take() {
                let kept = d.keep();
                eprintln!("kept test directory {}", kept.display());
            }
        }
    }
}

/// A fresh [`TestDir`].
pub fn test_dir() -> TestDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().to_path_buf();
    TestDir(Some(d), p)
}

/// Creates `topic` with `partitions` partitions (replication factor 1).
pub fn create_topic(bootstrap: &str, topic: &str, partitions: i32) {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let res = rt
        .block_on(admin.create_topics(
            &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        ))
        .unwrap();
    for r in res {
        r.unwrap();
    }
}

/// Creates `topic` with `partitions` partitions (replication factor 1) and the topic configs
/// `configs` (e.g. `max.message.bytes`).
pub fn create_topic_with_configs(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    configs: &[(&str, &str)],
) {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
    for (k, v) in configs {
        new = new.set(k, v);
    }
    let res = rt
        .block_on(admin.create_topics(&[new], &AdminOptions::new()))
        .unwrap();
    for r in res {
        r.unwrap();
    }
}

/// Produces `values` (no key) to `topic`, partition `partition` when given, and waits until
/// the broker acknowledged them all.
pub fn produce_values(bootstrap: &str, topic: &str, partition: Option<i32>, values: &[String]) {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    for v in values {
        let mut r = BaseRecord::<[u8], [u8]>::to(topic).payload(v.as_bytes());
        if let Some(p) = partition {
            r = r.partition(p);
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
    }
    p.flush(Duration::from_secs(30)).unwrap();
}

/// A consumed record with its key, value and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    /// Headers in record order.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    /// The record's timestamp (ms since the epoch), when it has one.
    pub timestamp: Option<i64>,
}

impl Rec {
    /// A consumed message as a record.
    pub fn of(m: &impl Message) -> Rec {
        Rec {
            key: m.key().map(<[u8]>::to_vec),
            value: m.payload().map(<[u8]>::to_vec),
            headers: m
                .headers()
                .map(|h| {
                    h.iter()
                        .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                        .collect()
                })
                .unwrap_or_default(),
            timestamp: m.timestamp().to_millis(),
        }
    }

    /// The first header named `key`, as text.
    pub fn header(&self, key: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_ref())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// Every record of partition 0 of `topic`, from the beginning to the current end (empty when
/// the topic does not exist; what was read by then after 120 s). The one whole-topic reader of
/// the harness: the others map its records.
pub fn read_records(bootstrap: &str, topic: &str) -> Vec<Rec> {
    read_partition_records(bootstrap, topic, 0)
}

/// Every record of partition `partition` of `topic`, as [`read_records`] reads partition 0.
pub fn read_partition_records(bootstrap: &str, topic: &str, partition: i32) -> Vec<Rec> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let Ok((_, high)) = consumer.fetch_watermarks(topic, partition, Duration::from_secs(10)) else {
        return Vec::new();
    };
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, partition, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while (out.len() as i64) < high && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            out.push(Rec::of(&m));
            if m.offset() + 1 >= high {
                break;
            }
        }
    }
    out
}

/// A record to produce: key, value, headers.
pub type Produced<'a> = (Option<&'a str>, &'a str, &'a [(&'a str, &'a str)]);

/// Produces records to partition 0 of `topic` and waits for them.
pub fn produce(bootstrap: &str, topic: &str, records: &[Produced<'_>]) {
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    for (key, value, headers) in records {
        let mut h = OwnedHeaders::new();
        for (k, v) in headers.iter() {
            h = h.insert(Header {
                key: k,
                value: Some(v.as_bytes()),
            });
        }
        let mut r = BaseRecord::<[u8], [u8]>::to(topic)
            .partition(0)
            .payload(value.as_bytes())
            .headers(h);
        if let Some(k) = key {
            r = r.key(k.as_bytes());
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
    }
    p.flush(Duration::from_secs(30)).unwrap();
}

/// The Connect release the hosted JVM runs on (`scripts/jvm-bridge`: 4.4.0 unless
/// `CONNECT_VERSION` names another), which is the version Apache's plugins report: their
/// `version()` is the Kafka clients' version, whatever release the plugin jar comes from.
pub fn bridge_connect_version() -> String {
    std::env::var("CONNECT_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "4.4.0".to_string())
}

/// `(tributary.jvm.classpath, plugin.path)` from `scripts/jvm-bridge`, which builds the bridge
/// and fetches Connect's jars through Maven when missing; `None` (after [`missing`]) without
/// Java or Maven.
pub fn java_bridge() -> Option<(String, String)> {
    let root = repo_root();
    let run = |arg: &str| -> Option<String> {
        let out = Command::new(root.join("scripts/jvm-bridge"))
            .arg(arg)
            .stderr(std::process::Stdio::inherit())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
    };
    let Some(classpath) = run("classpath") else {
        return missing("`scripts/jvm-bridge` failed (no java/javac/mvn, or no network?)");
    };
    let plugin_path = run("plugin-path")?;
    Some((classpath, plugin_path))
}

/// The worker-file lines that enable Java plugins: `plugin.path`, the bridge's classpath, a
/// small serial-GC heap, and the classes forced to run as Java (`prefer_java`).
pub fn jvm_lines(classpath: &str, plugin_path: &str, prefer_java: &[&str]) -> String {
    format!(
        "plugin.path={plugin_path}\ntributary.jvm.classpath={classpath}\ntributary.jvm.options=-Xmx256m -XX:+UseSerialGC\ntributary.plugins.prefer.java={}\n",
        prefer_java.join(",")
    )
}

/// A second single-node KRaft broker started by `scripts/kafka` on free ports (broker and
/// controller) with its data under `dir`, for tests that need two clusters; stopped when
/// dropped. `None` (or a failure under CI) when it cannot start.
pub struct SecondBroker {
    port: u16,
    home: PathBuf,
}

impl SecondBroker {
    pub fn start(dir: &Path) -> Option<SecondBroker> {
        // A free port whose successor (the controller's) is free too.
        let port = faults::free_ports(2);
        let home = dir.join("second-broker");
        let b = SecondBroker { port, home };
        let ok = b.script("start").is_some_and(|s| s.success());
        if !ok {
            return missing("`scripts/kafka start` of a second broker failed");
        }
        Some(b)
    }

    fn script(&self, action: &str) -> Option<std::process::ExitStatus> {
        let root = repo_root();
        Command::new(root.join("scripts/kafka"))
            .arg(action)
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .ok()
    }

    /// The broker's bootstrap address.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for SecondBroker {
    fn drop(&mut self) {
        self.script("stop");
    }
}

/// `(tributary.jvm.classpath, plugin.path)`: the bridge from `scripts/jvm-bridge` and the
/// Debezium plugins (PostgreSQL source, JDBC sink) from `scripts/plugins` (both fetched through
/// Maven when missing).
pub fn debezium_plugins() -> Option<(String, String)> {
    plugins_script("debezium")
}

/// The bridge's class path and the `plugin.path` `scripts/plugins <action>` prints; `None`
/// (after [`missing`]) without them.
fn plugins_script(action: &str) -> Option<(String, String)> {
    let (classpath, _) = java_bridge()?;
    let out = Command::new(repo_root().join("scripts/plugins"))
        .arg(action)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok();
    match out {
        Some(o) if o.status.success() => Some((
            classpath,
            String::from_utf8(o.stdout).unwrap().trim().to_string(),
        )),
        _ => missing(&format!(
            "`scripts/plugins {action}` failed (no mvn, or no network?)"
        )),
    }
}

/// The bridge's class path and a `plugin.path` holding a third-party Java config provider from
/// Maven Central (`scripts/plugins config-providers`: Strimzi's
/// `io.strimzi.kafka.EnvVarConfigProvider`); `None` (after [`missing`]) without them.
pub fn config_provider_plugins() -> Option<(String, String)> {
    plugins_script("config-providers")
}

/// The schema registry of `scripts/registry` (Apicurio Registry), which `scripts/test` starts,
/// exporting the variables of `scripts/registry env`.
pub struct SchemaRegistry {
    /// The Confluent-compatible API (`SCHEMA_REGISTRY_URL`, `…/apis/ccompat/v7`).
    pub ccompat: String,
    /// Apicurio's own v2 REST API (`APICURIO_REGISTRY_URL`, `…/apis/registry/v2`), what
    /// Apicurio's 2.x serdes and converters call `apicurio.registry.url`.
    pub apicurio_v2: String,
}

/// The registry, or `None` (after [`missing`]: a failure under CI) when `SCHEMA_REGISTRY_URL`
/// is unset. `APICURIO_REGISTRY_URL` defaults to the v2 API of the same server.
pub fn schema_registry() -> Option<SchemaRegistry> {
    match std::env::var("SCHEMA_REGISTRY_URL") {
        Ok(u) if !u.is_empty() => {
            let ccompat = u.trim_end_matches('/').to_string();
            let apicurio_v2 = std::env::var("APICURIO_REGISTRY_URL")
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| ccompat.replace("/apis/ccompat/v7", "/apis/registry/v2"));
            Some(SchemaRegistry {
                ccompat,
                apicurio_v2,
            })
        }
        _ => missing(
            "SCHEMA_REGISTRY_URL is not set (scripts/test starts scripts/registry and sets it)",
        ),
    }
}

/// A plugin.path directory holding Apicurio's Kafka Connect converters
/// (`io.apicurio:apicurio-registry-utils-converter`, fetched through Maven by
/// `scripts/registry converter-plugin` when missing); `None` (after [`missing`]) when that fails.
pub fn apicurio_converter_plugin() -> Option<String> {
    let root = repo_root();
    let out = Command::new(root.join("scripts/registry"))
        .arg("converter-plugin")
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok();
    match out {
        Some(o) if o.status.success() => {
            Some(String::from_utf8(o.stdout).unwrap().trim().to_string())
        }
        _ => missing("`scripts/registry converter-plugin` failed (no mvn, or no network?)"),
    }
}

/// A plugin directory (returned; `<dir>/<name>-plugins`) holding one plugin, `<name>/<name>.jar`:
/// the Java `sources` compiled with `javac` against `classpath` (Connect's API jars) and packed
/// with `jar`, as a plugin author ships one. Panics when javac or jar fails.
pub fn java_plugin_dir(dir: &Path, name: &str, classpath: &str, sources: &[PathBuf]) -> PathBuf {
    java_plugin_dir_with_services(dir, name, classpath, sources, &[])
}

/// [`java_plugin_dir`], the jar also holding a ServiceLoader manifest
/// (`META-INF/services/<interface>`) naming each implementation of `services`
/// (`(interface, class)`), as a plugin author ships those Connect finds only through one
/// (config providers, REST extensions).
pub fn java_plugin_dir_with_services(
    dir: &Path,
    name: &str,
    classpath: &str,
    sources: &[PathBuf],
    services: &[(&str, &str)],
) -> PathBuf {
    let classes = dir.join(format!("{name}-classes"));
    let manifests = classes.join("META-INF/services");
    for (interface, class) in services {
        std::fs::create_dir_all(&manifests).unwrap();
        let file = manifests.join(interface);
        let mut text = std::fs::read_to_string(&file).unwrap_or_default();
        text.push_str(class);
        text.push('\n');
        std::fs::write(file, text).unwrap();
    }
    let plugins = dir.join(format!("{name}-plugins"));
    let plugin = plugins.join(name);
    std::fs::create_dir_all(&classes).unwrap();
    std::fs::create_dir_all(&plugin).unwrap();
    let status = Command::new("javac")
        .args(["-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d"])
        .arg(&classes)
        .args(sources)
        .status()
        .expect("running javac");
    assert!(status.success(), "javac failed on {sources:?}");
    let status = Command::new("jar")
        .arg("cf")
        .arg(plugin.join(format!("{name}.jar")))
        .arg("-C")
        .arg(&classes)
        .arg(".")
        .status()
        .expect("running jar");
    assert!(status.success(), "jar failed");
    plugins
}

/// The errors of a `PUT /connector-plugins/{class}/config/validate` answer (`ConfigInfos`), by
/// key: only the keys that have some, sorted.
pub fn config_errors(infos: &serde_json::Value) -> std::collections::BTreeMap<String, Vec<String>> {
    infos["configs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let errors: Vec<String> = c["value"]["errors"]
                .as_array()?
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect();
            let name = c["value"]["name"].as_str()?.to_string();
            (!errors.is_empty()).then_some((name, errors))
        })
        .collect()
}

/// The series of gauge `name` in a Prometheus text page (`GET /metrics`): each one's labels
/// and value, in page order.
pub fn metric_series(
    page: &str,
    name: &str,
) -> Vec<(std::collections::BTreeMap<String, String>, f64)> {
    let label = regex::Regex::new(r#"([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)""#).unwrap();
    page.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (labels, value) = match rest.strip_prefix('{') {
                Some(r) => {
                    let end = r.rfind('}')?;
                    (&r[..end], r[end + 1..].trim())
                }
                None if rest.starts_with(' ') => ("", rest.trim()),
                None => return None,
            };
            let labels = label
                .captures_iter(labels)
                .map(|c| (c[1].to_string(), c[2].to_string()))
                .collect();
            Some((labels, value.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// A worker's `GET /metrics` page.
pub fn metrics_page(url: &str) -> String {
    reqwest::blocking::get(format!("{url}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default()
}
