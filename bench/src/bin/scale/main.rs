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

mod members;
mod observe;
mod report;
mod steps;

use members::*;
use observe::*;
use report::*;
use steps::*;

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
    /// An extra `key=value` setting of every Tributary worker (repeatable), e.g.
    /// `tributary.source.producer.shared=false` to compare a producer per task.
    #[arg(long = "worker-setting")]
    worker_settings: Vec<String>,
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
        if kind == Kind::Tributary {
            for s in &a.worker_settings {
                if let Some((k, v)) = s.split_once('=') {
                    set(k.trim(), v.trim().to_string());
                }
            }
        }
        props
    }

    fn add_topics(&self, topics: impl IntoIterator<Item = String>) {
        self.topics.borrow_mut().extend(topics);
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
