//! `scale`: the scale runs of issue #12 on one machine, for Tributary and, labelled as such,
//! Apache Kafka Connect 4.1.1 (Java), against a real Kafka broker.
//!
//! Part `tributary` (and part `java` with `--java-workers` JVMs, started as
//! `connect-distributed.sh` starts them, with the same worker settings):
//! 1. `--workers` distributed workers (default 20, `connect.protocol=sessioned`,
//!    `scheduled.rebalance.max.delay.ms=--max-delay-ms`, Connect's session and heartbeat
//!    defaults) form a group; `--connectors` VerifiableSource connectors (default 200; on Java
//!    workers the benchmarks' own `dev.tributary.bench.SequenceSourceConnector`, which sends
//!    the same records) of `--tasks` tasks each (default 10) are created through the REST API,
//!    each task writing `--throughput` records/s (default 1) into one shared topic. Measured:
//!    spawn → every worker ready in one group, first POST → every task RUNNING, first POST →
//!    balanced, the CPU the workers use over `--cpu-secs` starting `--settle-secs` after that
//!    (nothing polled meanwhile), then each worker's RSS (`VmRSS`) and thread count.
//! 2. Join: one more worker is started. Measured: start → ready, start → balanced in total (every
//!    task and connector RUNNING on a live worker, the workers' task counts within 1 of each
//!    other and their connector counts too; for Tributary also every worker on one generation
//!    and every task's status on the worker it is assigned to), start → balanced per connector
//!    (additionally each connector's tasks spread over the workers within 1 of each other, which
//!    Tributary's assignor aims for and Java's does not), then `--after-secs` more of watching.
//!    Tasks moved (status owner before vs after), tasks stopped (an `UNASSIGNED` record in the
//!    status topic) that did not move, and for Tributary the stop counts of
//!    `GET /tributary/task-counters`.
//! 3. Kill: a worker that is not the leader is killed with SIGKILL. Measured: kill → the group
//!    noticed (Tributary: a new generation), kill → every task RUNNING again on a live worker,
//!    kill → balanced; and that no task ran on two workers at once, checked on every poll with
//!    the task counters (Tributary: an instance started and not stopped on two workers; a
//!    suspect is checked again polling the workers in reverse order) and, for both runtimes, in
//!    the status topic (a task going RUNNING on one worker while its last record says RUNNING
//!    on another live worker).
//!
//! Part `configs`: a config topic holding `--configs` connector configs (default 10,000),
//! written directly in Connect's config-topic format as Java writes it for a connector that ran
//! one task and was then stopped (`connector-<c>`, `task-<c>-0`, `commit-<c>` `{"tasks":1}`,
//! then `commit-<c>` `{"tasks":0}` and `target-state-<c>` STOPPED: five records a connector).
//! A fresh worker of that group (alone, so it leads and is assigned every connector) is started:
//! spawn → REST answers, → ready (joined), → `GET /connectors` lists every connector, → the
//! status topic holds a STOPPED record of every connector; RSS at ready, CPU over `--cpu-secs`
//! from `--settle-secs` after that, then RSS, peak RSS and threads; then what one
//! `GET /connectors/{c}/status` and one `GET /connectors?expand=status` take. The same worker
//! with an empty config topic is the baseline. For Tributary and for Java.
//!
//! Workers log to files (their standard output, where the source tasks print a line per
//! record, is discarded); ERROR and WARN lines are counted and the most frequent shown under
//! the tables. Progress goes to stderr; the tables (text, then Markdown) and notes to stdout.
//! This is a measurement, not a test: nothing is asserted, and a part that fails (e.g. Java not
//! coping with the load) is reported as such in the output.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;
use serde_json::{json, Value};
use tributary_bench::cluster::{median_f64, wait_every};
use tributary_bench::java::{JavaCmd, BENCH_SOURCE_CONNECTOR, BENCH_SOURCE_TASK};
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats;
use tributary_bench::rest::Rest;
use tributary_bench::status_watch::{StatusRecord, StatusWatch};
use tributary_bench::table::Table;
use tributary_bench::worker::{distributed_properties, internal_topics, Worker};
use tributary_bench::{say, stamp, tempdir, Runtime as Kind, RuntimeArgs};
use tributary_runtime::storage::config_topic::records;
use tributary_runtime::worker::TargetState;

/// Tributary's built-in VerifiableSource connector class.
const VERIFIABLE_SOURCE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
/// Its task class, as Connect writes it into task configs.
const VERIFIABLE_SOURCE_TASK: &str = "org.apache.kafka.connect.tools.VerifiableSourceTask";
/// Connect's default `offset.flush.interval.ms` (the benchmarks' 500 ms would mean thousands
/// of offset commits a second with this many tasks).
const OFFSET_FLUSH_MS: &str = "60000";
/// Timeout of one REST request (Java answers slowly under load; its own limit is 90 s).
const REST_TIMEOUT: Duration = Duration::from_secs(120);

/// Command-line options.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "scale",
    about = "Issue #12's scale runs: N sessioned workers with C connectors x T tasks, a worker joining, a worker killed, total RSS; the same with Java workers; a fresh worker on a config topic of 10,000 connectors."
)]
struct Args {
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// The parts to run, in order: `tributary`, `java`, `configs`.
    #[arg(long, value_delimiter = ',', default_value = "tributary,java,configs")]
    parts: Vec<String>,
    /// Tributary workers running the connectors before one more joins.
    #[arg(long, default_value_t = 20)]
    workers: usize,
    /// Connectors of the load (VerifiableSource; on Java workers the benchmarks'
    /// SequenceSourceConnector, which sends the same records).
    #[arg(long, default_value_t = 200)]
    connectors: usize,
    /// `tasks.max` of each connector.
    #[arg(long, default_value_t = 10)]
    tasks: usize,
    /// `throughput` of the connectors: records/s per task.
    #[arg(long, default_value_t = 1)]
    throughput: u64,
    /// `scheduled.rebalance.max.delay.ms` of every worker.
    #[arg(long, default_value_t = 10_000)]
    max_delay_ms: u64,
    /// `session.timeout.ms` of every worker (Connect's default).
    #[arg(long, default_value_t = 10_000)]
    session_timeout_ms: u64,
    /// `heartbeat.interval.ms` of every worker (Connect's default).
    #[arg(long, default_value_t = 3_000)]
    heartbeat_interval_ms: u64,
    /// Java workers running the connectors before one more joins (part `java`).
    #[arg(long, default_value_t = 4)]
    java_workers: usize,
    /// Connectors of the Java part (default: --connectors).
    #[arg(long)]
    java_connectors: Option<usize>,
    /// Java maximum heap (`-Xmx`); Connect's start script uses 2G (and -Xms256M).
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// Connector configs in the config topic of part `configs`.
    #[arg(long, default_value_t = 10_000)]
    configs: usize,
    /// Runtimes of part `configs` (`tributary`, `java`).
    #[arg(long, value_delimiter = ',', default_value = "tributary,java")]
    configs_runtimes: Vec<String>,
    /// How often the cluster's state is polled, in ms (each poll asks every worker).
    #[arg(long, default_value_t = 500)]
    poll_ms: u64,
    /// Seconds between "all RUNNING and balanced" and the CPU measurement (then the RSS
    /// reading).
    #[arg(long, default_value_t = 10)]
    settle_secs: u64,
    /// Seconds over which the workers' CPU use is measured, after --settle-secs (nothing is
    /// polled meanwhile).
    #[arg(long, default_value_t = 30)]
    cpu_secs: u64,
    /// Seconds the cluster is watched after it is balanced following the join (and after the
    /// kill), for later rebalances and stops.
    #[arg(long, default_value_t = 30)]
    after_secs: u64,
    /// Give up on any single wait after this many seconds.
    #[arg(long, default_value_t = 900)]
    timeout_secs: u64,
    /// Copy every worker's log into this directory.
    #[arg(long)]
    keep_logs: Option<PathBuf>,
    /// Keep the benchmark's topics instead of deleting them at the end.
    #[arg(long)]
    keep_topics: bool,
}

fn main() -> ExitCode {
    tributary_bench::exit_status("scale", run(&Args::parse()))
}

/// The connector class of the load and its task class: Tributary's built-in VerifiableSource,
/// or for Java the benchmarks' own plugin that emits the same records.
fn source_classes(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Tributary => (VERIFIABLE_SOURCE, VERIFIABLE_SOURCE_TASK),
        Kind::Java => (BENCH_SOURCE_CONNECTOR, BENCH_SOURCE_TASK),
    }
}

/// What every part needs.
struct Ctx<'a> {
    args: &'a Args,
    binary: PathBuf,
    java: Option<JavaCmd>,
    broker: Broker,
    stamp: u128,
    /// Topics to delete at the end.
    topics: RefCell<Vec<String>>,
    _run_dir: tempfile::TempDir,
}

impl Ctx<'_> {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.args.timeout_secs)
    }

    fn poll(&self) -> Duration {
        Duration::from_millis(self.args.poll_ms.max(50))
    }

    /// The worker settings of group `group` for a worker of `kind` (a Java worker also gets
    /// its REST port).
    fn worker_props(&self, kind: Kind, group: &str, port: Option<u16>) -> Vec<(String, String)> {
        let a = self.args;
        let mut props = distributed_properties(self.broker.bootstrap(), group);
        let mut set = |k: &str, v: String| {
            props.retain(|(key, _)| key != k);
            props.push((k.to_string(), v));
        };
        set("connect.protocol", "sessioned".into());
        set(
            "scheduled.rebalance.max.delay.ms",
            a.max_delay_ms.to_string(),
        );
        set("session.timeout.ms", a.session_timeout_ms.to_string());
        set("heartbeat.interval.ms", a.heartbeat_interval_ms.to_string());
        set("offset.flush.interval.ms", OFFSET_FLUSH_MS.into());
        if let (Kind::Java, Some(port)) = (kind, port) {
            set("listeners", format!("http://127.0.0.1:{port}"));
            set("rest.advertised.host.name", "127.0.0.1".into());
        }
        props
    }

    fn add_topics(&self, topics: impl IntoIterator<Item = String>) {
        self.topics.borrow_mut().extend(topics);
    }
}

/// A worker process of either runtime with its REST client.
struct Member {
    kind: Kind,
    /// `w1`, `w2`, …
    name: String,
    worker: Worker,
    rest: Rest,
    /// The worker id statuses name (`127.0.0.1:<port>`).
    id: String,
    alive: bool,
    /// The worker's directory (its properties and log), removed with the member.
    _dir: tempfile::TempDir,
}

impl Member {
    /// `GET /tributary/worker` (Tributary only).
    fn info(&self) -> Option<Value> {
        if self.kind != Kind::Tributary {
            return None;
        }
        match self.rest.get("/tributary/worker") {
            Ok((200, v)) => Some(v),
            _ => None,
        }
    }

    /// The group generation this worker is in: Tributary's `/tributary/worker`, Java's last
    /// "Joined group at generation N" log line; 0 when unknown.
    fn generation(&self) -> i64 {
        match self.kind {
            Kind::Tributary => self
                .info()
                .and_then(|i| i["generation"].as_i64())
                .unwrap_or(0),
            Kind::Java => {
                const MARK: &str = "Joined group at generation ";
                let tail = log_tail(&self.worker.log, 4 << 20);
                tail.rfind(MARK)
                    .and_then(|at| {
                        tail[at + MARK.len()..]
                            .split(|c: char| !c.is_ascii_digit())
                            .next()?
                            .parse()
                            .ok()
                    })
                    .unwrap_or(0)
            }
        }
    }

    /// REST answers `/health` and `/connectors` with 200, and (Tributary) the worker reports a
    /// generation.
    fn ready(&self) -> bool {
        let ok = |p: &str| self.rest.get(p).map(|r| r.0 == 200).unwrap_or(false);
        ok("/health") && ok("/connectors") && (self.kind == Kind::Java || self.generation() > 0)
    }

    /// Whether this worker says it leads the group (Tributary: `/tributary/worker`; Java: the
    /// `leaderUrl` of the last assignment its log shows).
    fn is_leader(&self) -> bool {
        match self.kind {
            Kind::Tributary => self.info().is_some_and(|i| i["leader"] == true),
            Kind::Java => {
                let log = log_tail(&self.worker.log, 4 << 20);
                let Some(at) = log.rfind("leaderUrl='") else {
                    return false;
                };
                let url = &log[at + "leaderUrl='".len()..];
                let url = url.split('\'').next().unwrap_or_default();
                url.trim_end_matches('/') == self.rest.base()
            }
        }
    }

    /// Task id → (starts, stops) of `GET /tributary/task-counters` (Tributary only; empty when
    /// it does not answer).
    fn task_counters(&self) -> BTreeMap<String, (u64, u64)> {
        let Ok((200, v)) = self.rest.get("/tributary/task-counters") else {
            return BTreeMap::new();
        };
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, c)| {
                        let n = |f: &str| c[f].as_u64().unwrap_or(0);
                        (k.clone(), (n("starts"), n("stops")))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn rss_kib(&self) -> Option<u64> {
        proc_stats::memory(self.worker.pid()).map(|m| m.rss_kib)
    }
}

/// The last `max` bytes of the file at `path` (lossy UTF-8; empty when unreadable).
fn log_tail(path: &std::path::Path, max: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(max))).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok();
    String::from_utf8_lossy(&buf).into_owned()
}

/// Spawns workers of `kind` in `group` named `names` back to back, then waits for each one's
/// REST address.
fn spawn_members(
    ctx: &Ctx<'_>,
    kind: Kind,
    group: &str,
    names: &[String],
) -> Result<Vec<Member>, String> {
    let mut started = Vec::new();
    for name in names {
        let dir = tempdir()?;
        let (worker, url) = match kind {
            Kind::Tributary => {
                let props = ctx.worker_props(kind, group, None);
                let w = Worker::spawn_distributed_quiet(&ctx.binary, dir.path(), &props)?;
                (w, None)
            }
            Kind::Java => {
                let port = tributary_bench::java::free_port()?;
                let props = ctx.worker_props(kind, group, Some(port));
                let java = ctx.java.as_ref().ok_or("no Java command")?;
                let w = java.spawn(dir.path(), &props, true)?;
                (w, Some(format!("http://127.0.0.1:{port}")))
            }
        };
        started.push((name.clone(), worker, url, dir));
    }
    started
        .into_iter()
        .map(|(name, mut worker, url, dir)| {
            let url = match url {
                Some(u) => u,
                None => worker.wait_rest(Duration::from_secs(120))?,
            };
            let rest = Rest::new(&url, REST_TIMEOUT)?;
            let id = url.trim_start_matches("http://").to_string();
            Ok(Member {
                kind,
                name,
                worker,
                rest,
                id,
                alive: true,
                _dir: dir,
            })
        })
        .collect()
}

/// Fails with a worker's log tail if a live member has exited.
fn check_alive(members: &mut [Member]) -> Result<(), String> {
    for m in members.iter_mut().filter(|m| m.alive) {
        m.worker
            .check_alive()
            .map_err(|e| format!("worker {} ({}): {e}", m.name, m.id))?;
    }
    Ok(())
}

/// Waits until every live member is ready; returns each one's spawn → ready time.
fn wait_ready(
    members: &mut [Member],
    timeout: Duration,
    every: Duration,
) -> Result<Vec<Duration>, String> {
    let deadline = Instant::now() + timeout;
    let mut ready: Vec<Option<Duration>> = vec![None; members.len()];
    loop {
        check_alive(members)?;
        for (m, r) in members.iter().zip(ready.iter_mut()) {
            if r.is_none() && m.ready() {
                *r = Some(m.worker.started.elapsed());
            }
        }
        if ready.iter().all(Option::is_some) {
            return Ok(ready.into_iter().flatten().collect());
        }
        if Instant::now() > deadline {
            let n = ready.iter().filter(|r| r.is_some()).count();
            return Err(format!(
                "only {n} of {} workers ready after {timeout:?}",
                members.len()
            ));
        }
        std::thread::sleep(every);
    }
}

/// SIGTERM to every live member at once, then waits until all exited; those still running
/// after `timeout` are killed (SIGKILL). Returns how many had to be killed.
fn stop_all(members: &mut [Member], timeout: Duration) -> usize {
    for m in members.iter().filter(|m| m.alive) {
        // Best effort: a worker that ignores it is killed below.
        Command::new("kill")
            .arg("-TERM")
            .arg(m.worker.pid().to_string())
            .status()
            .ok();
    }
    let deadline = Instant::now() + timeout;
    loop {
        let running = members
            .iter_mut()
            .filter(|m| m.alive)
            .map(|m| m.worker.child.try_wait())
            .filter(|r| !matches!(r, Ok(Some(_))))
            .count();
        if running == 0 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut killed = 0;
    for m in members.iter_mut().filter(|m| m.alive) {
        if let Ok(None) = m.worker.child.try_wait() {
            say(format!(
                "worker {} did not stop within {timeout:?} of SIGTERM; killing it",
                m.name
            ));
            killed += 1;
            // Best effort: it may have exited meanwhile.
            m.worker.child.kill().ok();
            m.worker.child.wait().ok();
        }
        m.alive = false;
    }
    killed
}

/// Counts a log's ERROR and WARN lines and its most frequent messages (timestamps cut).
#[derive(Default, Debug, Clone)]
struct LogSummary {
    errors: usize,
    warnings: usize,
    panics: usize,
    /// Message (without timestamp) → count.
    messages: BTreeMap<String, usize>,
}

impl LogSummary {
    fn add(&mut self, kind: Kind, log: &str) {
        for line in log.lines() {
            let level = match kind {
                Kind::Tributary => {
                    if line.contains(" ERROR ") {
                        Some("ERROR")
                    } else if line.contains(" WARN ") {
                        Some("WARN")
                    } else {
                        None
                    }
                }
                Kind::Java => {
                    if line.contains("] ERROR ") {
                        Some("ERROR")
                    } else if line.contains("] WARN ") {
                        Some("WARN")
                    } else {
                        None
                    }
                }
            };
            if line.contains("panicked") {
                self.panics += 1;
            }
            let Some(level) = level else { continue };
            if level == "ERROR" {
                self.errors += 1;
            } else {
                self.warnings += 1;
            }
            let at = line.find(level).unwrap_or(0);
            let mut msg: String = line[at..].chars().take(160).collect();
            // Numbers vary from line to line (ids, generations, ports): group them.
            msg = msg
                .split(|c: char| c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("#");
            *self.messages.entry(msg).or_default() += 1;
        }
    }

    fn top(&self, n: usize) -> Vec<String> {
        let mut v: Vec<(&String, &usize)> = self.messages.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.into_iter()
            .take(n)
            .map(|(m, c)| format!("{c}x {m}"))
            .collect()
    }

    fn cell(&self) -> String {
        format!(
            "{} ERROR, {} WARN{}",
            self.errors,
            self.warnings,
            if self.panics > 0 {
                format!(", {} panics", self.panics)
            } else {
                String::new()
            }
        )
    }
}

/// Summarizes every member's log and copies it to `--keep-logs` if asked.
fn collect_logs(ctx: &Ctx<'_>, members: &[Member], part: &str) -> LogSummary {
    let mut summary = LogSummary::default();
    for m in members {
        let text = m.worker.log_text();
        summary.add(m.kind, &text);
        if let Some(dir) = &ctx.args.keep_logs {
            let target = dir.join(format!("{part}-{}.log", m.name));
            let copied = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&target, &text));
            if let Err(e) = copied {
                say(format!("cannot keep the log in {}: {e}", target.display()));
            }
        }
    }
    summary
}

/// The status API's view: connector and task states and workers.
#[derive(Debug, Default, Clone)]
struct View {
    /// Connector → (state, worker id).
    connectors: BTreeMap<String, (String, String)>,
    /// Task id `<c>-<n>` → (state, worker id).
    tasks: BTreeMap<String, (String, String)>,
}

/// `GET /connectors?expand=status` on `rest`; `None` unless it answers 200.
fn view(rest: &Rest) -> Option<View> {
    let (code, v) = rest.get("/connectors?expand=status").ok()?;
    if code != 200 {
        return None;
    }
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out = View::default();
    for (name, c) in v.as_object()? {
        let st = &c["status"];
        out.connectors.insert(
            name.clone(),
            (
                s(&st["connector"]["state"]),
                s(&st["connector"]["worker_id"]),
            ),
        );
        for t in st["tasks"].as_array().into_iter().flatten() {
            let Some(id) = t["id"].as_u64() else { continue };
            out.tasks
                .insert(format!("{name}-{id}"), (s(&t["state"]), s(&t["worker_id"])));
        }
    }
    Some(out)
}

/// Max minus min of `v` (0 for none).
fn spread(v: &[usize]) -> usize {
    match (v.iter().max(), v.iter().min()) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    }
}

/// How the connectors and tasks lie over the live workers, per the status API.
#[derive(Debug, Clone, Default)]
struct Balance {
    tasks_running: usize,
    tasks_total: usize,
    connectors_running: usize,
    connectors_total: usize,
    /// RUNNING tasks per live worker (in member order).
    tasks_per_worker: Vec<usize>,
    /// RUNNING connectors per live worker.
    connectors_per_worker: Vec<usize>,
    /// The most tasks of one connector on one worker.
    max_one_connector: usize,
    /// Connectors whose tasks are spread unevenly (two workers differ by more than 1).
    uneven_connectors: usize,
}

impl Balance {
    fn of(view: &View, live: &[String], connectors: &[String], tasks: usize) -> Balance {
        let index: HashMap<&str, usize> = live
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_str(), i))
            .collect();
        let mut b = Balance {
            tasks_total: connectors.len() * tasks,
            connectors_total: connectors.len(),
            tasks_per_worker: vec![0; live.len()],
            connectors_per_worker: vec![0; live.len()],
            ..Default::default()
        };
        for c in connectors {
            if let Some((state, w)) = view.connectors.get(c) {
                if let (true, Some(&i)) = (state == "RUNNING", index.get(w.as_str())) {
                    b.connectors_running += 1;
                    b.connectors_per_worker[i] += 1;
                }
            }
            let mut mine = vec![0usize; live.len()];
            for n in 0..tasks {
                if let Some((state, w)) = view.tasks.get(&format!("{c}-{n}")) {
                    if let (true, Some(&i)) = (state == "RUNNING", index.get(w.as_str())) {
                        b.tasks_running += 1;
                        b.tasks_per_worker[i] += 1;
                        mine[i] += 1;
                    }
                }
            }
            b.max_one_connector = b
                .max_one_connector
                .max(mine.iter().copied().max().unwrap_or(0));
            if spread(&mine) > 1 {
                b.uneven_connectors += 1;
            }
        }
        b
    }

    fn all_running(&self) -> bool {
        self.tasks_running == self.tasks_total && self.connectors_running == self.connectors_total
    }

    fn balanced(&self) -> bool {
        self.all_running()
            && spread(&self.tasks_per_worker) <= 1
            && spread(&self.connectors_per_worker) <= 1
    }

    fn balanced_per_connector(&self) -> bool {
        self.balanced() && self.uneven_connectors == 0
    }

    fn summary(&self) -> String {
        format!(
            "{}/{} tasks and {}/{} connectors RUNNING on live workers; tasks per worker {}–{}, connectors per worker {}–{}, at most {} tasks of one connector on one worker, {} connectors spread unevenly",
            self.tasks_running,
            self.tasks_total,
            self.connectors_running,
            self.connectors_total,
            self.tasks_per_worker.iter().min().unwrap_or(&0),
            self.tasks_per_worker.iter().max().unwrap_or(&0),
            self.connectors_per_worker.iter().min().unwrap_or(&0),
            self.connectors_per_worker.iter().max().unwrap_or(&0),
            self.max_one_connector,
            self.uneven_connectors
        )
    }
}

/// A cluster of one runtime running the benchmark's connectors.
struct Cluster {
    kind: Kind,
    group: String,
    members: Vec<Member>,
    connectors: Vec<String>,
    tasks: usize,
    watch: StatusWatch,
}

/// One poll of a cluster.
struct Poll {
    view: Option<View>,
    balance: Option<Balance>,
    /// Tributary: every live worker on one generation, each task assigned once and RUNNING
    /// (per the status API) on the worker it is assigned to. Java: always true.
    consistent: bool,
    /// Tributary: the generation every live worker reports, if they agree.
    generation: Option<i64>,
    /// Task id → member id, per `/tributary/worker` (Tributary).
    assigned: BTreeMap<String, String>,
}

impl Poll {
    fn settled(&self) -> bool {
        self.consistent && self.balance.as_ref().is_some_and(Balance::balanced)
    }

    fn owners(&self) -> BTreeMap<String, String> {
        self.view
            .as_ref()
            .map(|v| {
                v.tasks
                    .iter()
                    .map(|(t, (_, w))| (t.clone(), w.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Cluster {
    fn live(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| m.alive)
    }

    fn live_ids(&self) -> Vec<String> {
        self.live().map(|m| m.id.clone()).collect()
    }

    fn dead_ids(&self) -> BTreeSet<String> {
        self.members
            .iter()
            .filter(|m| !m.alive)
            .map(|m| m.id.clone())
            .collect()
    }

    fn poll(&mut self) -> Result<Poll, String> {
        check_alive(&mut self.members)?;
        let rest = &self.live().next().ok_or("no live worker")?.rest;
        let view = view(rest);
        let balance = view
            .as_ref()
            .map(|v| Balance::of(v, &self.live_ids(), &self.connectors, self.tasks));
        let mut p = Poll {
            view,
            balance,
            consistent: true,
            generation: None,
            assigned: BTreeMap::new(),
        };
        if self.kind == Kind::Tributary {
            let mut generation = None;
            let mut consistent = true;
            for m in self.live() {
                let Some(info) = m.info() else {
                    consistent = false;
                    continue;
                };
                let g = info["generation"].as_i64().unwrap_or(0);
                if g <= 0 || generation.is_some_and(|x| x != g) {
                    consistent = false;
                }
                generation.get_or_insert(g);
                for t in info["tasks"].as_array().into_iter().flatten() {
                    let t = t.as_str().unwrap_or_default().to_string();
                    if p.assigned.insert(t, m.id.clone()).is_some() {
                        consistent = false;
                    }
                }
            }
            if let Some(v) = &p.view {
                for (t, (state, w)) in &v.tasks {
                    if state == "RUNNING" && p.assigned.get(t) != Some(w) {
                        consistent = false;
                    }
                }
            }
            p.consistent = consistent;
            p.generation = if consistent { generation } else { None };
        }
        Ok(p)
    }

    /// Tributary: tasks with a started, not stopped instance on two live workers at once
    /// (`GET /tributary/task-counters`); a suspect is checked again asking the workers in
    /// reverse order, so that a move caught between two requests is not counted.
    fn double_running(&self) -> Vec<String> {
        if self.kind != Kind::Tributary {
            return Vec::new();
        }
        let running = |order: &[&Member]| {
            let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for m in order {
                for (t, (starts, stops)) in m.task_counters() {
                    if starts > stops {
                        out.entry(t).or_default().push(m.id.clone());
                    }
                }
            }
            out
        };
        let live: Vec<&Member> = self.live().collect();
        let first = running(&live);
        if first.values().all(|w| w.len() < 2) {
            return Vec::new();
        }
        let reversed: Vec<&Member> = live.iter().rev().copied().collect();
        let second = running(&reversed);
        first
            .iter()
            .filter(|(_, w)| w.len() >= 2)
            .filter_map(|(t, _)| {
                let w = second.get(t)?;
                (w.len() >= 2).then(|| format!("{t} on {}", w.join(" and ")))
            })
            .collect()
    }

    /// Tributary: stop counts per (member id, task).
    fn stop_counts(&self) -> BTreeMap<(String, String), u64> {
        let mut out = BTreeMap::new();
        if self.kind == Kind::Tributary {
            for m in self.live() {
                for (t, (_, stops)) in m.task_counters() {
                    out.insert((m.id.clone(), t), stops);
                }
            }
        }
        out
    }
}

/// What the status topic showed while a cluster changed.
#[derive(Default)]
struct StatusLog {
    /// Task → (state, worker) of its last record (seeded from the status API).
    last: HashMap<String, (String, String)>,
    /// Tasks with an UNASSIGNED record (stopped).
    stopped: BTreeSet<String>,
    /// Tasks that went RUNNING on a worker while their last record said RUNNING on another
    /// live worker.
    suspects: Vec<String>,
    records: usize,
}

impl StatusLog {
    fn new(view: &View) -> StatusLog {
        StatusLog {
            last: view.tasks.clone().into_iter().collect(),
            ..Default::default()
        }
    }

    fn feed(&mut self, records: Vec<StatusRecord>, dead: &BTreeSet<String>) {
        for r in records {
            self.records += 1;
            let Some(task) = r.task() else { continue };
            let task = task.to_string();
            if r.state == "UNASSIGNED" {
                self.stopped.insert(task.clone());
            }
            if r.state == "RUNNING" {
                if let Some((state, w)) = self.last.get(&task) {
                    if state == "RUNNING" && *w != r.worker_id && !dead.contains(w) {
                        self.suspects.push(format!(
                            "{task}: RUNNING on {} while last RUNNING on {w}",
                            r.worker_id
                        ));
                    }
                }
            }
            self.last.insert(task, (r.state, r.worker_id));
        }
    }
}

/// Sleeps `span` and returns the CPU time the live members used meanwhile, in cores (CPU
/// seconds per second, summed over the members).
fn cpu_over(members: &[Member], span: Duration) -> Option<f64> {
    let cpu = |m: &Member| proc_stats::cpu_seconds(&m.worker.pid().to_string());
    let before: Vec<Option<f64>> = members
        .iter()
        .map(|m| m.alive.then(|| cpu(m)).flatten())
        .collect();
    let t = Instant::now();
    std::thread::sleep(span);
    let mut total = 0.0;
    for (m, b) in members.iter().zip(before) {
        if let (Some(b), Some(a)) = (b, m.alive.then(|| cpu(m)).flatten()) {
            total += a - b;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    (secs > 0.0).then(|| total / secs)
}

/// Process figures of the live members.
#[derive(Debug, Clone, Default)]
struct Mem {
    /// (member name, VmRSS KiB, threads).
    per_worker: Vec<(String, u64, u64)>,
}

impl Mem {
    fn read(members: &[Member]) -> Mem {
        Mem {
            per_worker: members
                .iter()
                .filter(|m| m.alive)
                .map(|m| {
                    (
                        m.name.clone(),
                        m.rss_kib().unwrap_or(0),
                        proc_stats::threads(m.worker.pid()).unwrap_or(0),
                    )
                })
                .collect(),
        }
    }

    fn total_mib(&self) -> f64 {
        self.per_worker
            .iter()
            .map(|(_, r, _)| *r as f64)
            .sum::<f64>()
            / 1024.0
    }

    fn median_mib(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .per_worker
            .iter()
            .map(|(_, r, _)| *r as f64 / 1024.0)
            .collect();
        median_f64(&v)
    }

    fn range_mib(&self) -> (f64, f64) {
        let v: Vec<f64> = self
            .per_worker
            .iter()
            .map(|(_, r, _)| *r as f64 / 1024.0)
            .collect();
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(0.0, f64::max),
        )
    }

    fn median_threads(&self) -> Option<f64> {
        let v: Vec<f64> = self.per_worker.iter().map(|(_, _, t)| *t as f64).collect();
        median_f64(&v)
    }

    fn list(&self) -> String {
        self.per_worker
            .iter()
            .map(|(n, r, t)| format!("{n} {:.0} MiB/{t} thr", *r as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What the join measured.
#[derive(Debug, Default)]
struct JoinOutcome {
    ready: Option<Duration>,
    balanced: Option<Duration>,
    balanced_per_connector: Option<Duration>,
    /// At the end of the watch (the new worker last).
    end: Balance,
    moved: usize,
    unmoved: usize,
    connectors_moved: usize,
    stopped: usize,
    stopped_unmoved: usize,
    /// Tributary: stop-count increments of tasks that did not move / of all tasks.
    counter_stops: Option<(u64, u64)>,
    generations: Option<(i64, i64)>,
    double: Vec<String>,
    suspects: Vec<String>,
    status_records: usize,
    mem: Mem,
}

/// What the kill measured.
#[derive(Debug, Default)]
struct KillOutcome {
    victim: String,
    victim_tasks: usize,
    victim_connectors: usize,
    noticed: Option<Duration>,
    running: Option<Duration>,
    balanced: Option<Duration>,
    end: Balance,
    double: Vec<String>,
    suspects: Vec<String>,
    generations: Option<(i64, i64)>,
}

/// What one runtime's cluster part measured.
#[derive(Debug, Default)]
struct ClusterOutcome {
    workers: usize,
    connectors: usize,
    tasks: usize,
    formed: Option<Duration>,
    ready_median: Option<Duration>,
    posts: Option<Duration>,
    running: Option<Duration>,
    balanced: Option<Duration>,
    steady: Option<Balance>,
    /// The most tasks seen RUNNING before the cluster was balanced, and when (after the first
    /// POST).
    peak_running: Option<(usize, Duration)>,
    /// CPU of all workers over the settle period (cores).
    cpu_cores: Option<f64>,
    mem: Option<Mem>,
    join: Option<JoinOutcome>,
    kill: Option<KillOutcome>,
    logs: LogSummary,
    /// SIGTERM to every worker → all exited.
    stop: Option<Duration>,
    /// Workers still running 60 s after SIGTERM (then killed).
    stop_killed: usize,
    failure: Option<String>,
    /// What the cluster looked like when a step failed.
    last_state: Option<String>,
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.runtimes.tributary.as_deref())?;
    let bootstrap = tributary_bench::bootstrap(args.runtimes.bootstrap.as_deref());
    let run_dir = tempdir()?;
    let wants_java = args.parts.iter().any(|p| p == "java")
        || (args.parts.iter().any(|p| p == "configs")
            && args.configs_runtimes.iter().any(|r| r == "java"));
    let java = if wants_java {
        let script = args.runtimes.connect_java.as_deref();
        let mut java = JavaCmd::for_benchmark(script, &args.java_heap, run_dir.path())?;
        java.add_bench_plugins(&run_dir.path().join("java-plugins"))?;
        Some(java)
    } else {
        None
    };
    let ctx = Ctx {
        args,
        binary,
        java,
        broker: Broker::connect(&bootstrap)?,
        stamp: stamp(),
        topics: RefCell::new(Vec::new()),
        _run_dir: run_dir,
    };
    let began = Instant::now();
    let mut clusters: Vec<(Kind, ClusterOutcome)> = Vec::new();
    let mut configs: Vec<(Kind, ConfigsOutcome)> = Vec::new();
    for part in &args.parts {
        match part.as_str() {
            "tributary" => clusters.push((
                Kind::Tributary,
                cluster_part(&ctx, Kind::Tributary, args.workers, args.connectors),
            )),
            "java" => clusters.push((
                Kind::Java,
                cluster_part(
                    &ctx,
                    Kind::Java,
                    args.java_workers,
                    args.java_connectors.unwrap_or(args.connectors),
                ),
            )),
            "configs" => {
                for r in &args.configs_runtimes {
                    let kind = match r.as_str() {
                        "tributary" => Kind::Tributary,
                        "java" => Kind::Java,
                        other => return Err(format!("--configs-runtimes: unknown {other}")),
                    };
                    configs.push((kind, configs_part(&ctx, kind)));
                }
            }
            other => return Err(format!("--parts: unknown part {other}")),
        }
    }
    let topics = ctx.topics.borrow().clone();
    if !topics.is_empty() {
        if args.keep_topics {
            say(format!("kept {} topics", topics.len()));
        } else {
            say(format!("deleting {} topics", topics.len()));
            let names: Vec<&str> = topics.iter().map(String::as_str).collect();
            ctx.broker.delete_topics(&names);
        }
    }
    let took = began.elapsed();
    let tables = [
        (!clusters.is_empty()).then(|| cluster_table(args, &clusters)),
        (!configs.is_empty()).then(|| configs_table(args, &configs)),
    ];
    for t in tables.iter().flatten() {
        print!("{}", t.text());
        println!();
    }
    for t in tables.iter().flatten() {
        print!("{}", t.markdown());
        println!();
    }
    for line in notes(&ctx, &clusters, &configs, took) {
        println!("{line}");
    }
    Ok(())
}

/// POST `body` to `/connectors`, retrying while the worker answers 409 (a rebalance is in
/// progress), a 5xx, or not at all, for up to `timeout`.
fn create_with_retry(rest: &Rest, body: &Value, timeout: Duration) -> Result<u32, String> {
    let deadline = Instant::now() + timeout;
    let mut retries = 0;
    loop {
        let last = match rest.send("POST", "/connectors", Some(body)) {
            Ok((201, _)) => return Ok(retries),
            Ok((code, resp)) if code == 409 || code >= 500 => format!("{code} {resp}"),
            Ok((code, resp)) => return Err(format!("POST /connectors answered {code}: {resp}")),
            Err(e) => e,
        };
        if Instant::now() > deadline {
            return Err(format!("POST /connectors kept failing: {last}"));
        }
        retries += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn cluster_part(ctx: &Ctx<'_>, kind: Kind, workers: usize, connectors: usize) -> ClusterOutcome {
    let a = ctx.args;
    let mut out = ClusterOutcome {
        workers,
        connectors,
        tasks: a.tasks,
        ..Default::default()
    };
    let group = format!("scale-{}-{}", kind.label(), ctx.stamp);
    ctx.add_topics(internal_topics(&group));
    let topic = format!("{group}-vs");
    ctx.add_topics([topic.clone()]);
    let names: Vec<String> = (1..=workers.max(1)).map(|i| format!("w{i}")).collect();
    say(format!(
        "{}: starting {} workers in group {group}",
        kind.title(),
        names.len()
    ));
    let t0 = Instant::now();
    let mut cluster = match ctx
        .broker
        .create_topic(&topic)
        .and_then(|()| spawn_members(ctx, kind, &group, &names))
    {
        Ok(members) => Cluster {
            kind,
            group: group.clone(),
            members,
            connectors: (0..connectors)
                .map(|c| format!("{group}-c{c:03}"))
                .collect(),
            tasks: a.tasks,
            // Marked (assigned at the end of each partition) once the workers created the topic.
            watch: match StatusWatch::new(ctx.broker.bootstrap(), &format!("{group}-status")) {
                Ok(w) => w,
                Err(e) => {
                    out.failure = Some(e);
                    return out;
                }
            },
        },
        Err(e) => {
            out.failure = Some(format!("starting the workers: {e}"));
            return out;
        }
    };
    let result = cluster_steps(ctx, &mut cluster, &topic, t0, &mut out);
    if let Err(e) = result {
        say(format!("{}: {e}", kind.title()));
        out.failure = Some(e);
        if let Ok(p) = cluster.poll() {
            out.last_state = p.balance.map(|b| b.summary());
        }
    }
    say(format!(
        "{}: stopping {} workers",
        kind.title(),
        cluster.live().count()
    ));
    let t = Instant::now();
    out.stop_killed = stop_all(&mut cluster.members, Duration::from_secs(60));
    out.stop = Some(t.elapsed());
    out.logs = collect_logs(ctx, &cluster.members, kind.label());
    say(format!("{}: logs: {}", kind.title(), out.logs.cell()));
    out
}

fn cluster_steps(
    ctx: &Ctx<'_>,
    cl: &mut Cluster,
    topic: &str,
    t0: Instant,
    out: &mut ClusterOutcome,
) -> Result<(), String> {
    let a = ctx.args;
    let title = cl.kind.title();
    let timeout = ctx.timeout();
    let ready = wait_ready(&mut cl.members, timeout, Duration::from_millis(100))?;
    out.ready_median = median_f64(&ready.iter().map(|d| d.as_secs_f64()).collect::<Vec<_>>())
        .map(Duration::from_secs_f64);
    // Every worker on one generation.
    wait_every("the group to form", timeout, ctx.poll(), || {
        check_alive(&mut cl.members)?;
        let gens: Vec<i64> = cl.live().map(Member::generation).collect();
        Ok(gens.iter().all(|g| *g > 0 && *g == gens[0]).then_some(()))
    })?;
    out.formed = Some(t0.elapsed());
    say(format!(
        "{title}: {} workers in one group after {:.1} s; creating {} connectors x {} tasks at {} records/s per task",
        cl.members.len(),
        t0.elapsed().as_secs_f64(),
        cl.connectors.len(),
        cl.tasks,
        a.throughput
    ));
    cl.watch.mark()?;
    let lead = cl.members.iter().position(Member::is_leader).unwrap_or(0);
    let t_post = Instant::now();
    let mut retries = 0;
    for (i, c) in cl.connectors.iter().enumerate() {
        let body = json!({
            "name": c,
            "config": {
                "connector.class": source_classes(cl.kind).0,
                "tasks.max": cl.tasks.to_string(),
                "topic": topic,
                "throughput": a.throughput.to_string(),
            }
        });
        retries += create_with_retry(&cl.members[lead].rest, &body, timeout).map_err(|e| {
            format!(
                "creating connector {} of {}: {e}",
                i + 1,
                cl.connectors.len()
            )
        })?;
        if (i + 1) % 50 == 0 {
            say(format!(
                "{title}: {} connectors created ({:.1} s)",
                i + 1,
                t_post.elapsed().as_secs_f64()
            ));
        }
    }
    out.posts = Some(t_post.elapsed());
    say(format!(
        "{title}: {} POSTs took {:.1} s ({retries} retried after 409/5xx); waiting for every task RUNNING",
        cl.connectors.len(),
        t_post.elapsed().as_secs_f64()
    ));
    let mut last = String::new();
    let mut last_said = Instant::now();
    let steady = wait_every(
        "every task RUNNING and balanced",
        timeout,
        ctx.poll(),
        || {
            let p = cl.poll()?;
            if let Some(b) = &p.balance {
                if out.peak_running.is_none_or(|(n, _)| b.tasks_running > n) {
                    out.peak_running = Some((b.tasks_running, t_post.elapsed()));
                }
                if out.running.is_none() && b.all_running() {
                    out.running = Some(t_post.elapsed());
                    say(format!(
                        "{title}: every task RUNNING {:.1} s after the first POST",
                        t_post.elapsed().as_secs_f64()
                    ));
                }
                last = b.summary();
            }
            if last_said.elapsed() > Duration::from_secs(15) {
                say(format!("{title}: {last}"));
                last_said = Instant::now();
            }
            Ok(p.settled().then_some(p))
        },
    )
    .map_err(|e| format!("{e} (last: {last})"))?;
    out.balanced = Some(t_post.elapsed());
    let b = steady.balance.clone().unwrap_or_default();
    say(format!(
        "{title}: balanced {:.1} s after the first POST: {}",
        t_post.elapsed().as_secs_f64(),
        b.summary()
    ));
    out.steady = Some(b);
    std::thread::sleep(Duration::from_secs(a.settle_secs));
    out.cpu_cores = cpu_over(&cl.members, Duration::from_secs(a.cpu_secs));
    let mem = Mem::read(&cl.members);
    say(format!(
        "{title}: CPU {} while idle; RSS total {:.0} MiB, median {:.1} MiB per worker; {}",
        cores(out.cpu_cores),
        mem.total_mib(),
        mem.median_mib().unwrap_or(0.0),
        mem.list()
    ));
    out.mem = Some(mem);
    out.join = Some(join(ctx, cl)?);
    out.kill = Some(kill(ctx, cl)?);
    Ok(())
}

/// Watches the cluster after a change: every `--poll-ms` it feeds the status topic's new records
/// to `log`, calls `step` with `None`, polls every worker, notes tasks RUNNING on two workers,
/// and calls `step` with the poll and the last balance summary, until that call returns true.
/// Returns the last poll and the tasks seen RUNNING on two workers; fails after `--timeout-secs`
/// with `what` and the last balance summary. (`step` sees `None` first so that a check of its
/// own is not delayed by the poll.)
fn watch_until(
    ctx: &Ctx<'_>,
    cl: &mut Cluster,
    log: &mut StatusLog,
    what: &str,
    mut step: impl FnMut(&Cluster, Option<(&Poll, &str)>) -> Result<bool, String>,
) -> Result<(Poll, Vec<String>), String> {
    let deadline = Instant::now() + ctx.timeout();
    let mut last = String::new();
    let mut double = Vec::new();
    let end = loop {
        let dead = cl.dead_ids();
        log.feed(cl.watch.poll(Duration::from_millis(100)), &dead);
        step(cl, None)?;
        let p = cl.poll()?;
        double.extend(cl.double_running());
        if let Some(b) = &p.balance {
            last = b.summary();
        }
        if step(cl, Some((&p, &last)))? {
            break p;
        }
        if Instant::now() > deadline {
            return Err(format!("{what} {:?} (last: {last})", ctx.timeout()));
        }
        std::thread::sleep(ctx.poll());
    };
    log.feed(cl.watch.poll(Duration::from_millis(500)), &cl.dead_ids());
    Ok((end, double))
}

fn join(ctx: &Ctx<'_>, cl: &mut Cluster) -> Result<JoinOutcome, String> {
    let title = cl.kind.title();
    let before = cl.poll()?;
    if !before.settled() {
        return Err("the cluster is not balanced before the join".into());
    }
    let owners_before = before.owners();
    let connector_owners_before: BTreeMap<String, String> = before
        .view
        .as_ref()
        .map(|v| {
            v.connectors
                .iter()
                .map(|(c, (_, w))| (c.clone(), w.clone()))
                .collect()
        })
        .unwrap_or_default();
    let stops_before = cl.stop_counts();
    let mut log = StatusLog::new(before.view.as_ref().ok_or("no status view")?);
    cl.watch.mark()?;
    let name = format!("w{}", cl.members.len() + 1);
    say(format!("{title}: starting worker {name}"));
    let mut new = spawn_members(ctx, cl.kind, &cl.group, std::slice::from_ref(&name))?;
    let started = new[0].worker.started;
    cl.members.append(&mut new);
    let mut o = JoinOutcome::default();
    let watch_for = Duration::from_secs(ctx.args.after_secs);
    let what = format!("not balanced after {name} started, within");
    let (end, double) = watch_until(ctx, cl, &mut log, &what, |cl, polled| {
        let Some((p, last)) = polled else {
            let newest = cl.members.last().ok_or("no workers")?;
            if o.ready.is_none() && newest.ready() {
                o.ready = Some(started.elapsed());
                say(format!(
                    "{title}: {name} ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
            }
            return Ok(false);
        };
        if let Some(b) = &p.balance {
            if p.settled() && o.balanced.is_none() {
                o.balanced = Some(started.elapsed());
                say(format!(
                    "{title}: balanced {:.1} s after {name} started: {last}",
                    started.elapsed().as_secs_f64()
                ));
            }
            if p.settled() && b.balanced_per_connector() && o.balanced_per_connector.is_none() {
                o.balanced_per_connector = Some(started.elapsed());
            }
        }
        Ok(o.balanced
            .is_some_and(|t| started.elapsed() >= t + watch_for && p.settled()))
    })?;
    o.double = double;
    let owners_after = end.owners();
    for (t, w) in &owners_before {
        if owners_after.get(t) == Some(w) {
            o.unmoved += 1;
            if log.stopped.contains(t) {
                o.stopped_unmoved += 1;
            }
        } else {
            o.moved += 1;
        }
    }
    o.stopped = log.stopped.len();
    if let Some(v) = &end.view {
        o.connectors_moved = v
            .connectors
            .iter()
            .filter(|(c, (_, w))| connector_owners_before.get(*c) != Some(w))
            .count();
    }
    if cl.kind == Kind::Tributary {
        let stops_after = cl.stop_counts();
        let increments = |task: &str| -> u64 {
            stops_after
                .iter()
                .filter(|((_, t), _)| t == task)
                .map(|((w, t), after)| {
                    after.saturating_sub(
                        stops_before
                            .get(&(w.clone(), t.clone()))
                            .copied()
                            .unwrap_or(0),
                    )
                })
                .sum()
        };
        let (mut unmoved, mut all) = (0, 0);
        for (t, w) in &owners_before {
            let n = increments(t);
            all += n;
            if owners_after.get(t) == Some(w) {
                unmoved += n;
            }
        }
        o.counter_stops = Some((unmoved, all));
        o.generations = before.generation.zip(end.generation);
    }
    o.end = end.balance.clone().unwrap_or_default();
    o.suspects = log.suspects;
    o.status_records = log.records;
    o.double.sort();
    o.double.dedup();
    o.mem = Mem::read(&cl.members);
    say(format!(
        "{title}: join: {} tasks moved, {} stayed; tasks stopped (UNASSIGNED) {} of which {} stayed; {}",
        o.moved, o.unmoved, o.stopped, o.stopped_unmoved, o.end.summary()
    ));
    Ok(o)
}

fn kill(ctx: &Ctx<'_>, cl: &mut Cluster) -> Result<KillOutcome, String> {
    let title = cl.kind.title();
    let before = cl.poll()?;
    if !before.settled() {
        return Err("the cluster is not balanced before the kill".into());
    }
    let owners = before.owners();
    // A worker that does not lead, and not the newest: the middle one of the first ones.
    let leader = cl.members.iter().position(|m| m.alive && m.is_leader());
    let candidates: Vec<usize> = (0..cl.members.len().saturating_sub(1))
        .filter(|i| Some(*i) != leader && cl.members[*i].alive)
        .collect();
    let victim = *candidates
        .get(candidates.len() / 2)
        .ok_or("no worker to kill")?;
    let mut o = KillOutcome {
        victim: format!("{} ({})", cl.members[victim].name, cl.members[victim].id),
        victim_tasks: owners
            .values()
            .filter(|w| **w == cl.members[victim].id)
            .count(),
        victim_connectors: before
            .view
            .as_ref()
            .map(|v| {
                v.connectors
                    .values()
                    .filter(|(_, w)| *w == cl.members[victim].id)
                    .count()
            })
            .unwrap_or(0),
        ..Default::default()
    };
    let gen_before = cl.live().map(Member::generation).max().unwrap_or(0);
    let mut log = StatusLog::new(before.view.as_ref().ok_or("no status view")?);
    cl.watch.mark()?;
    say(format!(
        "{title}: SIGKILL of {} running {} tasks and {} connectors",
        o.victim, o.victim_tasks, o.victim_connectors
    ));
    let t0 = Instant::now();
    let m = &mut cl.members[victim];
    m.worker.child.kill().map_err(|e| format!("kill: {e}"))?;
    m.worker.child.wait().ok();
    m.alive = false;
    let (end, double) = watch_until(
        ctx,
        cl,
        &mut log,
        "tasks not RUNNING again after the kill within",
        |cl, polled| {
            let Some((p, last)) = polled else {
                return Ok(false);
            };
            if o.noticed.is_none() {
                let gens: Vec<i64> = cl.live().map(Member::generation).collect();
                if gens.iter().any(|x| *x > gen_before) {
                    o.noticed = Some(t0.elapsed());
                    say(format!(
                        "{title}: the group noticed after {:.1} s",
                        t0.elapsed().as_secs_f64()
                    ));
                }
            }
            if let Some(b) = &p.balance {
                if o.running.is_none() && b.all_running() && p.consistent {
                    o.running = Some(t0.elapsed());
                    say(format!(
                        "{title}: every task RUNNING again {:.1} s after the kill",
                        t0.elapsed().as_secs_f64()
                    ));
                }
                if o.balanced.is_none() && p.settled() {
                    o.balanced = Some(t0.elapsed());
                    say(format!(
                        "{title}: balanced {:.1} s after the kill: {last}",
                        t0.elapsed().as_secs_f64()
                    ));
                }
            }
            Ok(o.balanced
                .is_some_and(|t| t0.elapsed() >= t + Duration::from_secs(5))
                && p.settled())
        },
    )?;
    o.double = double;
    o.end = end.balance.clone().unwrap_or_default();
    o.generations = before.generation.zip(end.generation);
    o.suspects = log.suspects;
    o.double.sort();
    o.double.dedup();
    Ok(o)
}

/// What the config-topic part measured for one runtime.
#[derive(Debug, Default)]
struct ConfigsOutcome {
    configs: usize,
    records: usize,
    write: Option<Duration>,
    baseline_ready: Option<Duration>,
    baseline_rss_kib: Option<u64>,
    rest: Option<Duration>,
    ready: Option<Duration>,
    listed: Option<Duration>,
    stopped: Option<Duration>,
    assigned: Option<usize>,
    rss_ready_kib: Option<u64>,
    rss_settled_kib: Option<u64>,
    hwm_kib: Option<u64>,
    threads: Option<u64>,
    /// CPU of the fresh worker over the settle period (cores).
    cpu_cores: Option<f64>,
    /// `GET /connectors/<c>/status` (median of 3).
    status_one: Option<Duration>,
    /// `GET /connectors?expand=status`: its time, or why there is none.
    status_all: Option<Result<Duration, String>>,
    logs: LogSummary,
    failure: Option<String>,
}

/// Writes `n` connectors that ran one task and were then stopped into `topic`, as Connect
/// writes them; returns the number of records.
fn write_configs(
    broker: &Broker,
    kind: Kind,
    topic: &str,
    data_topic: &str,
    n: usize,
) -> Result<usize, String> {
    let (connector_class, task_class) = source_classes(kind);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("enable.idempotence", "true")
        .set("linger.ms", "20")
        .set("log_level", "3")
        .create()
        .map_err(|e| format!("producer: {e}"))?;
    let mut count = 0;
    let mut send = |key: String, value: Vec<u8>| -> Result<(), String> {
        let mut record = BaseRecord::to(topic).key(&key).payload(&value);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    producer.poll(Duration::from_millis(50));
                    record = r;
                }
                Err((e, _)) => return Err(format!("producing {key}: {e}")),
            }
        }
        producer.poll(Duration::ZERO);
        count += 1;
        Ok(())
    };
    for i in 0..n {
        let name = format!("cfg-{i:05}");
        let config: HashMap<String, String> = [
            ("connector.class", connector_class),
            ("name", name.as_str()),
            ("tasks.max", "1"),
            ("topic", data_topic),
            ("throughput", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut task = config.clone();
        task.insert("id".into(), "0".into());
        task.insert("task.class".into(), task_class.into());
        send(format!("connector-{name}"), records::properties(&config))?;
        send(format!("task-{name}-0"), records::properties(&task))?;
        send(format!("commit-{name}"), records::commit(1))?;
        send(format!("commit-{name}"), records::commit(0))?;
        send(
            format!("target-state-{name}"),
            records::target_state(TargetState::Stopped),
        )?;
    }
    producer
        .flush(Duration::from_secs(120))
        .map_err(|e| format!("flushing the config records: {e}"))?;
    let end = broker.try_end_offset(topic)?;
    if end != count as i64 {
        return Err(format!(
            "the config topic ends at {end}, {count} records were written"
        ));
    }
    Ok(count)
}

fn configs_part(ctx: &Ctx<'_>, kind: Kind) -> ConfigsOutcome {
    let a = ctx.args;
    let mut out = ConfigsOutcome {
        configs: a.configs,
        ..Default::default()
    };
    let title = kind.title();
    let mut members: Vec<Member> = Vec::new();
    let result = (|| -> Result<(), String> {
        // The baseline: the same worker on an empty config topic.
        let group = format!("scale-cfg0-{}-{}", kind.label(), ctx.stamp);
        ctx.add_topics(internal_topics(&group));
        say(format!("{title}: a worker on an empty config topic"));
        let mut m = spawn_members(ctx, kind, &group, &["empty".to_string()])?;
        let ready = wait_ready(&mut m, ctx.timeout(), Duration::from_millis(20))?;
        out.baseline_ready = ready.first().copied();
        std::thread::sleep(Duration::from_secs(a.settle_secs));
        out.baseline_rss_kib = m[0].rss_kib();
        stop_all(&mut m, Duration::from_secs(60));
        members.append(&mut m);

        let group = format!("scale-cfg-{}-{}", kind.label(), ctx.stamp);
        ctx.add_topics(internal_topics(&group));
        let config_topic = format!("{group}-configs");
        ctx.broker
            .create_topic_with(&config_topic, &[("cleanup.policy", "compact")])?;
        say(format!(
            "{title}: writing {} connector configs into {config_topic}",
            a.configs
        ));
        let t = Instant::now();
        out.records = write_configs(
            &ctx.broker,
            kind,
            &config_topic,
            &format!("{group}-vs"),
            a.configs,
        )?;
        out.write = Some(t.elapsed());
        say(format!(
            "{title}: {} records written in {:.1} s; starting a fresh worker",
            out.records,
            t.elapsed().as_secs_f64()
        ));
        let mut m = spawn_members(ctx, kind, &group, &["fresh".to_string()])?;
        let started = m[0].worker.started;
        let mut watch: Option<StatusWatch> = None;
        let mut connector_states: HashMap<String, String> = HashMap::new();
        let deadline = Instant::now() + ctx.timeout();
        let mut every = Duration::from_millis(20);
        loop {
            check_alive(&mut m)?;
            let w = &m[0];
            if out.rest.is_none() && w.rest.get("/").map(|r| r.0 == 200).unwrap_or(false) {
                out.rest = Some(started.elapsed());
            }
            if out.rest.is_some() && out.ready.is_none() && w.ready() {
                out.ready = Some(started.elapsed());
                out.rss_ready_kib = w.rss_kib();
                say(format!(
                    "{title}: ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
                every = Duration::from_millis(250);
            }
            if out.ready.is_some() && out.listed.is_none() {
                let n = w
                    .rest
                    .get("/connectors")
                    .ok()
                    .and_then(|(_, v)| v.as_array().map(Vec::len));
                if n == Some(a.configs) {
                    out.listed = Some(started.elapsed());
                }
            }
            if out.ready.is_some() && watch.is_none() {
                // The worker created its status topic before it joined.
                let w = StatusWatch::new(ctx.broker.bootstrap(), &format!("{group}-status"))?;
                w.from_beginning()?;
                watch = Some(w);
            }
            if let Some(w) = &watch {
                for r in w.poll(Duration::from_millis(50)) {
                    if let Some(c) = r.key.strip_prefix("status-connector-") {
                        connector_states.insert(c.to_string(), r.state);
                    }
                }
                let n = connector_states
                    .values()
                    .filter(|s| *s == "STOPPED")
                    .count();
                if out.listed.is_some() && n == a.configs {
                    out.stopped = Some(started.elapsed());
                    say(format!(
                        "{title}: every connector STOPPED (status topic) after {:.1} s",
                        started.elapsed().as_secs_f64()
                    ));
                    break;
                }
            }
            if Instant::now() > deadline {
                members.append(&mut m);
                return Err(format!(
                    "the fresh worker did not write STOPPED for every connector within {:?}",
                    ctx.timeout()
                ));
            }
            std::thread::sleep(every);
        }
        out.assigned = m[0]
            .info()
            .and_then(|i| i["connectors"].as_array().map(Vec::len));
        std::thread::sleep(Duration::from_secs(a.settle_secs));
        out.cpu_cores = cpu_over(&m, Duration::from_secs(a.cpu_secs));
        let pid = m[0].worker.pid();
        let mem = proc_stats::memory(pid);
        out.rss_settled_kib = mem.map(|m| m.rss_kib);
        out.hwm_kib = mem.map(|m| m.hwm_kib);
        out.threads = proc_stats::threads(pid);
        // What one status request and the status of every connector cost with this many.
        let mut one = Vec::new();
        for i in 0..3 {
            let t = Instant::now();
            let path = format!("/connectors/cfg-{:05}/status", i * (a.configs / 3));
            if let Ok((200, _)) = m[0].rest.get(&path) {
                one.push(t.elapsed().as_secs_f64());
            }
        }
        out.status_one = median_f64(&one).map(Duration::from_secs_f64);
        let t = Instant::now();
        let n = m[0]
            .rest
            .get("/connectors?expand=status")
            .ok()
            .and_then(|(code, v)| (code == 200).then(|| v.as_object().map(|o| o.len())))
            .flatten();
        out.status_all = Some(match n {
            Some(n) if n == a.configs => Ok(t.elapsed()),
            Some(n) => Err(format!("{n} connectors in the answer")),
            None => Err(format!(
                "no answer within {:.0} s",
                t.elapsed().as_secs_f64()
            )),
        });
        say(format!(
            "{title}: GET /connectors/<c>/status {}, GET /connectors?expand=status {}",
            secs_ms(out.status_one),
            match &out.status_all {
                Some(Ok(d)) => secs_ms(Some(*d)),
                Some(Err(e)) => e.clone(),
                None => "n/a".into(),
            }
        ));
        members.append(&mut m);
        Ok(())
    })();
    if let Err(e) = result {
        say(format!("{title}: {e}"));
        out.failure = Some(e);
    }
    stop_all(&mut members, Duration::from_secs(60));
    out.logs = collect_logs(ctx, &members, &format!("configs-{}", kind.label()));
    out
}

fn secs(d: Option<Duration>) -> String {
    d.map(|d| format!("{:.1} s", d.as_secs_f64()))
        .unwrap_or_else(|| "n/a".into())
}

/// CPU in cores (CPU seconds per second).
fn cores(c: Option<f64>) -> String {
    c.map(|c| format!("{c:.2} cores"))
        .unwrap_or_else(|| "n/a".into())
}

/// Milliseconds below 10 s, seconds above.
fn secs_ms(d: Option<Duration>) -> String {
    match d {
        Some(d) if d < Duration::from_secs(10) => format!("{:.0} ms", d.as_secs_f64() * 1e3),
        other => secs(other),
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map(|k| format!("{:.0} MiB", k as f64 / 1024.0))
        .unwrap_or_else(|| "n/a".into())
}

fn per_worker_range(v: &[usize]) -> String {
    match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "n/a".into(),
    }
}

fn join_cell(o: &ClusterOutcome, f: impl Fn(&JoinOutcome) -> String) -> String {
    o.join.as_ref().map(f).unwrap_or_else(|| "n/a".into())
}

fn kill_cell(o: &ClusterOutcome, f: impl Fn(&KillOutcome) -> String) -> String {
    o.kill.as_ref().map(f).unwrap_or_else(|| "n/a".into())
}

fn cluster_table(args: &Args, results: &[(Kind, ClusterOutcome)]) -> Table {
    let mut header = vec!["scale run".to_string()];
    header.extend(results.iter().map(|(k, o)| {
        format!(
            "{} ({} workers{})",
            k.title(),
            o.workers,
            if *k == Kind::Java {
                format!(", -Xmx{} each", args.java_heap)
            } else {
                String::new()
            }
        )
    }));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    let row = |t: &mut Table, label: &str, f: &dyn Fn(&ClusterOutcome) -> String| {
        t.row(label, results.iter().map(|(_, o)| f(o)).collect());
    };
    row(&mut t, "load", &|o| {
        format!(
            "{} connectors × {} tasks = {} tasks at {} rec/s each",
            o.connectors,
            o.tasks,
            o.connectors * o.tasks,
            args.throughput
        )
    });
    row(&mut t, "spawn → all workers ready in one group", &|o| {
        secs(o.formed)
    });
    row(&mut t, "POSTs of every connector took", &|o| secs(o.posts));
    row(&mut t, "first POST → every task RUNNING", &|o| {
        secs(o.running)
    });
    row(&mut t, "first POST → balanced", &|o| secs(o.balanced));
    row(
        &mut t,
        "most tasks RUNNING at once before that (when)",
        &|o| {
            o.peak_running
                .map(|(n, d)| format!("{n} ({})", secs(Some(d))))
                .unwrap_or_else(|| "n/a".into())
        },
    );
    row(&mut t, "RSS per worker, median (min–max)", &|o| {
        o.mem
            .as_ref()
            .map(|m| {
                let (lo, hi) = m.range_mib();
                format!("{:.1} MiB ({lo:.0}–{hi:.0})", m.median_mib().unwrap_or(0.0))
            })
            .unwrap_or_else(|| "n/a".into())
    });
    row(&mut t, "RSS, all workers", &|o| {
        o.mem
            .as_ref()
            .map(|m| format!("{:.0} MiB", m.total_mib()))
            .unwrap_or_else(|| "n/a".into())
    });
    row(
        &mut t,
        &format!(
            "CPU of all workers at that load (the {} s from {} s after balanced)",
            args.cpu_secs, args.settle_secs
        ),
        &|o| cores(o.cpu_cores),
    );
    row(&mut t, "threads per worker, median", &|o| {
        o.mem
            .as_ref()
            .and_then(Mem::median_threads)
            .map(|n| format!("{n:.0}"))
            .unwrap_or_else(|| "n/a".into())
    });
    row(&mut t, "join: start of 1 more worker → ready", &|o| {
        join_cell(o, |j| secs(j.ready))
    });
    row(
        &mut t,
        "join: start → balanced in total (tasks and connectors per worker max−min ≤ 1, all RUNNING)",
        &|o| join_cell(o, |j| secs(j.balanced)),
    );
    row(
        &mut t,
        "join: start → balanced per connector (each connector's tasks max−min ≤ 1 over workers)",
        &|o| {
            join_cell(o, |j| {
                j.balanced_per_connector
                    .map(|d| secs(Some(d)))
                    .unwrap_or_else(|| format!("not within +{} s", args.after_secs))
            })
        },
    );
    row(&mut t, "join: tasks / connectors per worker after", &|o| {
        join_cell(o, |j| {
            format!(
                "{} / {}",
                per_worker_range(&j.end.tasks_per_worker),
                per_worker_range(&j.end.connectors_per_worker)
            )
        })
    });
    row(
        &mut t,
        "join: most tasks of one connector on one worker",
        &|o| join_cell(o, |j| j.end.max_one_connector.to_string()),
    );
    row(&mut t, "join: tasks moved", &|o| {
        join_cell(o, |j| format!("{} of {}", j.moved, j.moved + j.unmoved))
    });
    row(
        &mut t,
        "join: tasks stopped that did not move (status topic UNASSIGNED)",
        &|o| join_cell(o, |j| format!("{} of {}", j.stopped_unmoved, j.unmoved)),
    );
    row(
        &mut t,
        "join: task stops that did not move (task counters)",
        &|o| {
            join_cell(o, |j| {
                j.counter_stops
                    .map(|(u, all)| format!("{u} (of {all} stops)"))
                    .unwrap_or_else(|| "n/a".into())
            })
        },
    );
    row(&mut t, "RSS, all workers after the join", &|o| {
        join_cell(o, |j| format!("{:.0} MiB", j.mem.total_mib()))
    });
    row(&mut t, "kill: SIGKILL of a worker holding", &|o| {
        kill_cell(o, |k| {
            format!(
                "{} tasks, {} connectors",
                k.victim_tasks, k.victim_connectors
            )
        })
    });
    row(&mut t, "kill → group noticed (new generation)", &|o| {
        kill_cell(o, |k| secs(k.noticed))
    });
    row(
        &mut t,
        "kill → every task RUNNING on a live worker",
        &|o| kill_cell(o, |k| secs(k.running)),
    );
    row(&mut t, "kill → balanced", &|o| {
        kill_cell(o, |k| secs(k.balanced))
    });
    row(
        &mut t,
        "tasks seen RUNNING on two workers (join and kill)",
        &|o| {
            let (Some(j), Some(k)) = (&o.join, &o.kill) else {
                return "n/a".into();
            };
            let counters = j.double.len() + k.double.len();
            let status = j.suspects.len() + k.suspects.len();
            if o.join.as_ref().is_some_and(|j| j.counter_stops.is_some()) {
                format!("{counters} (counters), {status} (status topic)")
            } else {
                format!("{status} (status topic)")
            }
        },
    );
    row(&mut t, "SIGTERM to every worker → all exited", &|o| {
        if o.stop_killed > 0 {
            format!("{} ({} SIGKILLed after 60 s)", secs(o.stop), o.stop_killed)
        } else {
            secs(o.stop)
        }
    });
    row(&mut t, "worker logs", &|o| o.logs.cell());
    row(&mut t, "outcome", &|o| {
        o.failure
            .as_ref()
            .map(|f| format!("FAILED: {}", f.lines().next().unwrap_or_default()))
            .unwrap_or_else(|| "completed".into())
    });
    t
}

fn configs_table(args: &Args, results: &[(Kind, ConfigsOutcome)]) -> Table {
    let mut header = vec![format!(
        "config topic of {} connectors (STOPPED)",
        args.configs
    )];
    header.extend(results.iter().map(|(k, _)| k.title().to_string()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    let row = |t: &mut Table, label: &str, f: &dyn Fn(&ConfigsOutcome) -> String| {
        t.row(label, results.iter().map(|(_, o)| f(o)).collect());
    };
    row(&mut t, "empty config topic: start → ready", &|o| {
        secs(o.baseline_ready)
    });
    row(&mut t, "empty config topic: RSS", &|o| {
        mib(o.baseline_rss_kib)
    });
    row(&mut t, "start → REST answers GET /", &|o| secs(o.rest));
    row(
        &mut t,
        "start → ready (REST, /health, joined the group)",
        &|o| secs(o.ready),
    );
    row(&mut t, "start → GET /connectors lists all", &|o| {
        secs(o.listed)
    });
    row(
        &mut t,
        "start → every connector STOPPED (status topic)",
        &|o| secs(o.stopped),
    );
    row(&mut t, "RSS at ready", &|o| mib(o.rss_ready_kib));
    row(
        &mut t,
        &format!(
            "RSS {} s after every connector STOPPED",
            args.settle_secs + args.cpu_secs
        ),
        &|o| mib(o.rss_settled_kib),
    );
    row(&mut t, "peak RSS (VmHWM)", &|o| mib(o.hwm_kib));
    row(&mut t, "threads", &|o| {
        o.threads
            .map(|n| n.to_string())
            .unwrap_or_else(|| "n/a".into())
    });
    row(
        &mut t,
        &format!(
            "CPU (the {} s from {} s after every connector STOPPED)",
            args.cpu_secs, args.settle_secs
        ),
        &|o| cores(o.cpu_cores),
    );
    row(&mut t, "GET /connectors/<c>/status (median of 3)", &|o| {
        secs_ms(o.status_one)
    });
    row(
        &mut t,
        &format!(
            "GET /connectors?expand=status ({} connectors)",
            args.configs
        ),
        &|o| match &o.status_all {
            Some(Ok(d)) => secs_ms(Some(*d)),
            Some(Err(e)) => e.clone(),
            None => "n/a".into(),
        },
    );
    row(&mut t, "worker logs", &|o| o.logs.cell());
    row(&mut t, "outcome", &|o| {
        o.failure
            .as_ref()
            .map(|f| format!("FAILED: {}", f.lines().next().unwrap_or_default()))
            .unwrap_or_else(|| "completed".into())
    });
    t
}

fn notes(
    ctx: &Ctx<'_>,
    clusters: &[(Kind, ClusterOutcome)],
    configs: &[(Kind, ConfigsOutcome)],
    took: Duration,
) -> Vec<String> {
    let a = ctx.args;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mut n = vec![format!(
        "One run (not a median), {:.1} min in all, on this machine ({cores} cores, shared; broker {} on the same host). Every worker: connect.protocol=sessioned, scheduled.rebalance.max.delay.ms={}, session.timeout.ms={}, heartbeat.interval.ms={}, offset.flush.interval.ms={OFFSET_FLUSH_MS}, internal topics with replication factor 1 (offsets 5 partitions, status 3), String converters. Tributary: release build. Java: Connect 4.1.1 jars from Maven Central, JVM started as connect-distributed.sh does ({} {}).",
        took.as_secs_f64() / 60.0,
        ctx.broker.bootstrap(),
        a.max_delay_ms,
        a.session_timeout_ms,
        a.heartbeat_interval_ms,
        ctx.java.as_ref().map(|j| j.heap.join(" ")).unwrap_or_else(|| format!("-Xms256M -Xmx{}", a.java_heap)),
        tributary_bench::java::KAFKA_JVM_OPTS.join(" "),
    )];
    if ctx.java.is_some() {
        n.push(format!("The load: Tributary runs its built-in VerifiableSource ({VERIFIABLE_SOURCE}). Java Connect does not ship one on Maven Central, so the Java workers run the benchmark's own {BENCH_SOURCE_CONNECTOR} (bench/java, compiled with javac by the benchmark), which sends the same records: one a poll, at most `throughput` records/s per task counted from the task's start, key = task number (INT32), value = sequence number (INT64), source partition {{\"id\": task}}, offset {{\"seqno\": n}}, resuming after the committed offset, and a JSON line on stdout per record sent and acknowledged. Both runtimes' stdout is discarded."));
    }
    n.push(format!(
        "Scale run: VerifiableSource connectors ({VERIFIABLE_SOURCE}; Java: {BENCH_SOURCE_CONNECTOR}) all writing into one 1-partition topic, created one after the other through one worker's REST API (a 409 during a rebalance is retried every 500 ms). The state is polled every {} ms: GET /connectors?expand=status on one worker, and for Tributary GET /tributary/worker and /tributary/task-counters on every worker. CPU = the user and system time (/proc/<pid>/stat) the worker processes used in the {} s that start {} s after the cluster is balanced, nothing polled meanwhile; RSS = VmRSS of each worker process (the JVM for Java) right after that.",
        a.poll_ms.max(50),
        a.cpu_secs,
        a.settle_secs
    ));
    n.push(format!(
        "Balanced in total: every connector and task RUNNING (status API) on a live worker, task counts per worker max−min ≤ 1 and connector counts max−min ≤ 1; for Tributary also every worker on one generation and each task RUNNING on the worker /tributary/worker assigns it to. Per connector: additionally each connector's task counts over the workers max−min ≤ 1 (Tributary's assignor aims for it; Java's assignor does not). After the join the cluster is watched {} s more; moved = status owner changed; stopped = the task has an UNASSIGNED record in the status topic from the join to the end of the watch.",
        a.after_secs
    ));
    n.push("Kill: SIGKILL of a worker that does not lead the group (a new leader would re-assign at once, without the delay); timed from the signal. Expected: about session.timeout.ms (the group notices) plus scheduled.rebalance.max.delay.ms (the lost tasks wait for the worker to return). Two workers at once: Tributary's task counters (an instance started and not stopped on two workers in the same poll, confirmed by a second poll in reverse order) and, for both runtimes, the status topic (a task going RUNNING on one worker while its last record says RUNNING on another live worker).".into());
    for (k, o) in clusters {
        let t = k.title();
        if let Some(m) = &o.mem {
            n.push(format!("{t}: RSS and threads per worker: {}.", m.list()));
        }
        if let Some(j) = &o.join {
            n.push(format!(
                "{t}: join: tasks per worker after {:?} (the new worker last); connectors per worker {:?}; {} connectors moved; {} tasks had an UNASSIGNED record; {} status records read{}.",
                j.end.tasks_per_worker,
                j.end.connectors_per_worker,
                j.connectors_moved,
                j.stopped,
                j.status_records,
                j.generations
                    .map(|(a, b)| format!("; generation {a} → {b}"))
                    .unwrap_or_default()
            ));
            n.push(format!("{t}: after the join: {}.", j.mem.list()));
        }
        if let Some(k) = &o.kill {
            n.push(format!(
                "{t}: kill: victim {}; afterwards {}{}.",
                k.victim,
                k.end.summary(),
                k.generations
                    .map(|(a, b)| format!("; generation {a} → {b}"))
                    .unwrap_or_default()
            ));
        }
        for (label, list) in [
            ("join, counters", o.join.as_ref().map(|j| &j.double)),
            ("join, status topic", o.join.as_ref().map(|j| &j.suspects)),
            ("kill, counters", o.kill.as_ref().map(|k| &k.double)),
            ("kill, status topic", o.kill.as_ref().map(|k| &k.suspects)),
        ] {
            if let Some(l) = list.filter(|l| !l.is_empty()) {
                n.push(format!(
                    "{t}: RUNNING on two workers ({label}): {}{}",
                    l.iter().take(10).cloned().collect::<Vec<_>>().join("; "),
                    if l.len() > 10 { " …" } else { "" }
                ));
            }
        }
        if let Some(f) = &o.failure {
            n.push(format!(
                "{t}: the run stopped: {f}{}",
                o.last_state
                    .as_ref()
                    .map(|s| format!(" (state then: {s})"))
                    .unwrap_or_default()
            ));
        }
        let top = o.logs.top(6);
        if !top.is_empty() {
            n.push(format!(
                "{t}: most frequent ERROR/WARN log lines (digits replaced by #): {}",
                top.join(" | ")
            ));
        }
    }
    if let Some((_, c)) = configs.first() {
        n.push(format!(
            "Config topic: {} connectors written directly into a fresh compacted config topic, {} records (as Connect writes a VerifiableSource connector, for Java {BENCH_SOURCE_CONNECTOR}, that ran one task and was then stopped: connector-, task-…-0, commit {{\"tasks\":1}}, commit {{\"tasks\":0}}, target-state STOPPED; 5 config keys a connector). Then one fresh worker of that group starts alone: it leads and is assigned every connector (STOPPED: none runs, and no task). Ready = GET /health and GET /connectors answer 200 (Tributary: and /tributary/worker reports a generation); every connector STOPPED = the group's status topic, read from its start, holds a STOPPED record of each. The request timings are taken after the RSS reading, one request at a time (time out after {} s). The baseline worker is the same on an empty config topic.",
            c.configs, c.records, REST_TIMEOUT.as_secs()
        ));
    }
    for (k, o) in configs {
        let t = k.title();
        if let Some(x) = o.assigned {
            n.push(format!(
                "{t}: /tributary/worker shows {x} connectors assigned to the fresh worker."
            ));
        }
        if let Some(w) = o.write {
            n.push(format!(
                "{t}: writing the config records took {:.1} s.",
                w.as_secs_f64()
            ));
        }
        if let Some(f) = &o.failure {
            n.push(format!("{t}: config-topic run stopped: {f}"));
        }
        let top = o.logs.top(6);
        if !top.is_empty() {
            n.push(format!(
                "{t}: config-topic run, most frequent ERROR/WARN log lines: {}",
                top.join(" | ")
            ));
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(tasks: &[(&str, &str, &str)], connectors: &[(&str, &str)]) -> View {
        View {
            connectors: connectors
                .iter()
                .map(|(c, w)| (c.to_string(), ("RUNNING".to_string(), w.to_string())))
                .collect(),
            tasks: tasks
                .iter()
                .map(|(t, s, w)| (t.to_string(), (s.to_string(), w.to_string())))
                .collect(),
        }
    }

    #[test]
    fn balance_in_total_and_per_connector() {
        let live = ["a".to_string(), "b".to_string()];
        let conns = ["c".to_string(), "d".to_string()];
        // c's two tasks both on a, d's both on b: balanced in total, not per connector.
        let v = view(
            &[
                ("c-0", "RUNNING", "a"),
                ("c-1", "RUNNING", "a"),
                ("d-0", "RUNNING", "b"),
                ("d-1", "RUNNING", "b"),
            ],
            &[("c", "a"), ("d", "b")],
        );
        let b = Balance::of(&v, &live, &conns, 2);
        assert!(b.balanced());
        assert!(!b.balanced_per_connector());
        assert_eq!(b.max_one_connector, 2);
        assert_eq!(b.uneven_connectors, 2);
        // A task on a dead worker is not running.
        let v = view(
            &[
                ("c-0", "RUNNING", "a"),
                ("c-1", "RUNNING", "x"),
                ("d-0", "RUNNING", "b"),
                ("d-1", "RUNNING", "a"),
            ],
            &[("c", "a"), ("d", "b")],
        );
        let b = Balance::of(&v, &live, &conns, 2);
        assert!(!b.all_running());
        assert_eq!(b.tasks_running, 3);
    }

    #[test]
    fn status_log_flags_running_on_two_live_workers_only() {
        let v = view(&[("c-0", "RUNNING", "a"), ("c-1", "RUNNING", "x")], &[]);
        let mut log = StatusLog::new(&v);
        let rec = |k: &str, s: &str, w: &str| StatusRecord {
            key: k.into(),
            state: s.into(),
            worker_id: w.into(),
        };
        let dead: BTreeSet<String> = ["x".to_string()].into();
        log.feed(
            vec![
                // x is dead: its task may start elsewhere.
                rec("status-task-c-1", "RUNNING", "b"),
                // a stopped c-0 first: fine.
                rec("status-task-c-0", "UNASSIGNED", "a"),
                rec("status-task-c-0", "RUNNING", "b"),
                // b still runs c-0 when a starts it: flagged.
                rec("status-task-c-0", "RUNNING", "a"),
            ],
            &dead,
        );
        assert_eq!(log.stopped.len(), 1);
        assert_eq!(log.suspects.len(), 1, "{:?}", log.suspects);
    }

    #[test]
    fn log_summary_counts_levels() {
        let mut s = LogSummary::default();
        s.add(
            Kind::Tributary,
            "2025-01-01T00:00:00Z ERROR x: bad 12\n2025-01-01T00:00:01Z  WARN y: meh\n2025-01-01T00:00:02Z ERROR x: bad 13\n",
        );
        assert_eq!((s.errors, s.warnings), (2, 1));
        assert_eq!(s.top(1), vec!["2x ERROR x: bad ".to_string()]);
        let mut j = LogSummary::default();
        j.add(Kind::Java, "[2025-01-01 00:00:00,000] WARN z (c)\n");
        assert_eq!(j.warnings, 1);
    }
}
