//! `distributed-startup`: how quickly and how leanly `tributary distributed` workers come up,
//! against a real Kafka broker.
//!
//! One run measures, with fresh group ids and topic names throughout:
//! 1. idle memory: the `VmRSS` of a distributed worker that joined a group with no connectors,
//!    `--idle-secs` after it became ready (median over the fresh workers of step 2);
//! 2. startup: from spawning `tributary distributed` until its REST API answers and
//!    `GET /tributary/worker` reports a generation > 0, for `--runs` fresh workers, each in a new
//!    group (so each also creates its group's internal topics); the median is shown;
//! 3. task start: on a `--workers`-worker cluster (default 3), from the `POST /connectors` of a
//!    `--tasks`-task VerifiableSource connector (sent to the leader) until
//!    `GET /connectors/{c}/status` shows the connector and all its tasks RUNNING, for `--runs`
//!    connectors with new names (each deleted, and the cluster settled, before the next); the
//!    median is shown.
//!
//! The table is printed as plain text, then in Markdown at the end of stdout; progress goes to
//! stderr. Apache Kafka Connect's Java worker is not measured here (see the conformance
//! benchmark). This is a measurement, not a test: nothing is asserted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats::memory;
use tributary_bench::rest::Rest;
use tributary_bench::table::Table;
use tributary_bench::worker::{distributed_properties, internal_topics, Worker};
use tributary_bench::{say, tempdir};

/// What the Java column says until the side-by-side comparison exists.
const JAVA_TODO: &str = "TODO (Java: see conformance benchmark)";
/// How often readiness and task states are polled.
const POLL: Duration = Duration::from_millis(10);

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "distributed-startup",
    about = "Tributary distributed worker: idle RSS, start-to-joined time, and connector-to-tasks-RUNNING time on a cluster."
)]
pub struct Args {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    pub bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    pub tributary: Option<PathBuf>,
    /// Fresh single workers timed from start to joined, and connectors timed from POST to all
    /// tasks RUNNING; the table shows the medians.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Seconds a joined worker stays idle before its memory is read.
    #[arg(long, default_value_t = 3)]
    pub idle_secs: u64,
    /// Workers in the cluster that runs the connectors.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// `tasks.max` of the VerifiableSource connectors.
    #[arg(long, default_value_t = 10)]
    pub tasks: usize,
    /// `throughput` (records/s per task) of the VerifiableSource connectors.
    #[arg(long, default_value_t = 100)]
    pub throughput: u64,
    /// Give up on any single wait (start, join, tasks RUNNING, settling) after this many seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Keep the benchmark's topics (internal and VerifiableSource) instead of deleting them.
    #[arg(long)]
    pub keep_topics: bool,
}

fn main() -> ExitCode {
    tributary_bench::exit_status("distributed-startup", run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.tributary.as_deref())?;
    let bootstrap = tributary_bench::bootstrap(args.bootstrap.as_deref());
    let broker = Broker::connect(&bootstrap)?;
    let mut topics = Vec::new();
    let result = measure(args, &binary, &broker, &mut topics);
    if !topics.is_empty() {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        if args.keep_topics {
            say(format!("kept topics {names:?}"));
        } else {
            say(format!("deleting {} topics", names.len()));
            broker.delete_topics(&names);
        }
    }
    let report = result?;
    print!("{}", report.text());
    println!();
    print!("{}", report.markdown());
    Ok(())
}

/// One fresh worker's startup.
#[derive(Debug, Clone)]
struct Startup {
    /// Spawn until the REST server logged its address.
    rest_up: Duration,
    /// Spawn until REST answered and the worker reported a generation > 0.
    ready: Duration,
    /// `VmRSS` `--idle-secs` after `ready`, in KiB.
    idle_rss_kib: u64,
    /// `VmHWM` at the same moment, in KiB.
    idle_hwm_kib: u64,
}

/// One connector's start on the cluster.
#[derive(Debug, Clone)]
struct TaskStart {
    /// POST sent until its response arrived.
    post: Duration,
    /// POST sent until the status showed the connector and all tasks RUNNING.
    running: Duration,
    /// Tasks per worker id when they were all RUNNING.
    spread: Vec<usize>,
}

/// Everything one run measured.
struct Report {
    args_workers: usize,
    args_tasks: usize,
    args_throughput: u64,
    idle_secs: u64,
    bootstrap: String,
    initial_rebalance_delay: Option<String>,
    startups: Vec<Startup>,
    cluster_formed: Duration,
    starts: Vec<TaskStart>,
    cluster_rss_kib: Vec<u64>,
}

/// A distributed worker process with its REST client and its directory.
struct Node {
    worker: Worker,
    rest: Rest,
    rest_up: Duration,
    _dir: tempfile::TempDir,
}

impl Node {
    /// Spawns a worker of `group` and waits for its REST server's address in its log.
    fn spawn(
        binary: &std::path::Path,
        bootstrap: &str,
        group: &str,
        timeout: Duration,
    ) -> Result<Node, String> {
        let dir = tempdir()?;
        let props = distributed_properties(bootstrap, group);
        let mut worker = Worker::spawn_distributed(binary, dir.path(), &props)?;
        let url = worker.wait_rest(timeout)?;
        let rest_up = worker.started.elapsed();
        let rest = Rest::new(&url, Duration::from_secs(10))?;
        Ok(Node {
            worker,
            rest,
            rest_up,
            _dir: dir,
        })
    }

    /// `GET /tributary/worker`, `None` while the REST API does not answer with 200.
    fn info(&self) -> Option<Value> {
        match self.rest.get("/tributary/worker") {
            Ok((200, v)) => Some(v),
            _ => None,
        }
    }

    /// The generation this worker reports (0 before it joined).
    fn generation(&self) -> i64 {
        self.info()
            .and_then(|v| v["generation"].as_i64())
            .unwrap_or(0)
    }

    /// Waits until the worker reports a generation > 0; returns the time since it was spawned.
    fn wait_joined(&mut self, timeout: Duration) -> Result<Duration, String> {
        let deadline = Instant::now() + timeout;
        loop {
            self.worker.check_alive()?;
            if self.generation() > 0 {
                return Ok(self.worker.started.elapsed());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "worker {} did not join within {timeout:?}; log tail:\n{}",
                    self.rest.base(),
                    self.worker.log_tail(30)
                ));
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Polls `cond` every [`POLL`] until it returns `Some`, failing with `what` after `timeout`.
fn wait_until<T>(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = cond()? {
            return Ok(v);
        }
        if Instant::now() > deadline {
            return Err(format!("timed out after {timeout:?} waiting for {what}"));
        }
        std::thread::sleep(POLL);
    }
}

fn measure(
    args: &Args,
    binary: &std::path::Path,
    broker: &Broker,
    topics: &mut Vec<String>,
) -> Result<Report, String> {
    let stamp = tributary_bench::stamp();
    let timeout = Duration::from_secs(args.timeout_secs);
    let runs = args.runs.max(1);

    // 1 and 2: fresh single workers, each in its own new group.
    let mut startups = Vec::new();
    for run in 1..=runs {
        let group = format!("bench-dist-{stamp}-single-{run}");
        topics.extend(internal_topics(&group));
        say(format!(
            "startup {run}/{runs}: a worker in new group {group}"
        ));
        let mut node = Node::spawn(binary, broker.bootstrap(), &group, timeout)?;
        let ready = node.wait_joined(timeout)?;
        say(format!(
            "startup {run}/{runs}: REST up after {:.0} ms, joined and ready after {:.0} ms; idle for {} s",
            ms(node.rest_up),
            ms(ready),
            args.idle_secs
        ));
        std::thread::sleep(Duration::from_secs(args.idle_secs));
        node.worker.check_alive()?;
        let mem = memory(node.worker.pid()).ok_or("the idle worker vanished")?;
        say(format!(
            "startup {run}/{runs}: idle VmRSS {:.1} MiB (VmHWM {:.1} MiB)",
            mib(mem.rss_kib),
            mib(mem.hwm_kib)
        ));
        node.worker.terminate(Duration::from_secs(30));
        startups.push(Startup {
            rest_up: node.rest_up,
            ready,
            idle_rss_kib: mem.rss_kib,
            idle_hwm_kib: mem.hwm_kib,
        });
    }

    // 3: a cluster, then connectors started one at a time.
    let group = format!("bench-dist-{stamp}-cluster");
    topics.extend(internal_topics(&group));
    say(format!(
        "cluster: {} workers in new group {group}",
        args.workers
    ));
    let formed_from = Instant::now();
    let mut nodes = Vec::new();
    for _ in 0..args.workers.max(1) {
        // Spawned back to back; each waits only for its own REST address.
        let dir = tempdir()?;
        let props = distributed_properties(broker.bootstrap(), &group);
        let worker = Worker::spawn_distributed(binary, dir.path(), &props)?;
        nodes.push((worker, dir));
    }
    let mut cluster = Vec::new();
    for (mut worker, dir) in nodes {
        let url = worker.wait_rest(timeout)?;
        cluster.push(Node {
            rest_up: worker.started.elapsed(),
            rest: Rest::new(&url, Duration::from_secs(10))?,
            worker,
            _dir: dir,
        });
    }
    let result = run_cluster(
        args,
        broker,
        &mut cluster,
        formed_from,
        stamp,
        topics,
        timeout,
    );
    for n in &mut cluster {
        n.worker.terminate(Duration::from_secs(30));
    }
    let (cluster_formed, starts, cluster_rss_kib) = result?;

    Ok(Report {
        args_workers: args.workers.max(1),
        args_tasks: args.tasks,
        args_throughput: args.throughput,
        idle_secs: args.idle_secs,
        bootstrap: broker.bootstrap().to_string(),
        initial_rebalance_delay: broker.broker_config("group.initial.rebalance.delay.ms"),
        startups,
        cluster_formed,
        starts,
        cluster_rss_kib,
    })
}

/// Waits until every worker of `cluster` reports the same generation > 0 with nothing assigned
/// and the leader lists no connectors; returns that generation.
fn wait_settled(cluster: &mut [Node], timeout: Duration) -> Result<i64, String> {
    wait_until("the cluster to settle", timeout, || {
        let mut gens = Vec::new();
        for n in cluster.iter_mut() {
            n.worker.check_alive()?;
            let Some(info) = n.info() else {
                return Ok(None);
            };
            let empty = |k: &str| info[k].as_array().map(Vec::is_empty).unwrap_or(true);
            if !empty("connectors") || !empty("tasks") {
                return Ok(None);
            }
            gens.push(info["generation"].as_i64().unwrap_or(0));
        }
        let leaders = cluster
            .iter()
            .filter(|n| n.info().is_some_and(|i| i["leader"] == true))
            .count();
        let same = gens.iter().all(|g| *g > 0 && *g == gens[0]);
        Ok((same && leaders == 1).then_some(gens[0]))
    })
}

/// Forms the cluster, then starts and deletes `--runs` connectors; returns the cluster's
/// formation time, each start, and every worker's `VmRSS` with the last connector running.
fn run_cluster(
    args: &Args,
    broker: &Broker,
    cluster: &mut [Node],
    formed_from: Instant,
    stamp: u128,
    topics: &mut Vec<String>,
    timeout: Duration,
) -> Result<(Duration, Vec<TaskStart>, Vec<u64>), String> {
    let generation = wait_settled(cluster, timeout)?;
    let formed = formed_from.elapsed();
    say(format!(
        "cluster: formed after {:.0} ms (generation {generation})",
        ms(formed)
    ));
    let leader = cluster
        .iter()
        .position(|n| n.info().is_some_and(|i| i["leader"] == true))
        .ok_or("no leader")?;
    let runs = args.runs.max(1);
    let mut starts = Vec::new();
    let mut rss = Vec::new();
    for run in 1..=runs {
        let name = format!("bench-vs-{stamp}-{run}");
        let topic = format!("bench-dist-{stamp}-vs-{run}");
        broker.create_topic(&topic)?;
        topics.push(topic.clone());
        let body = json!({
            "name": name,
            "config": {
                "connector.class": "VerifiableSource",
                "tasks.max": args.tasks.to_string(),
                "topic": topic,
                "throughput": args.throughput.to_string(),
            }
        });
        let rest = &cluster[leader].rest;
        say(format!(
            "connector {run}/{runs}: POST {name} ({} tasks) to the leader {}",
            args.tasks,
            rest.base()
        ));
        let sent = Instant::now();
        let (code, resp) = rest.send("POST", "/connectors", Some(&body))?;
        let post = sent.elapsed();
        if code != 201 {
            return Err(format!("POST /connectors answered {code}: {resp}"));
        }
        let status = wait_until(&format!("{name}'s tasks to be RUNNING"), timeout, || {
            for n in cluster.iter_mut() {
                n.worker.check_alive()?;
            }
            let (code, status) = cluster[leader]
                .rest
                .get(&format!("/connectors/{name}/status"))?;
            if code != 200 {
                return Ok(None);
            }
            let running = |v: &Value| v["state"] == "RUNNING";
            let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
            Ok((running(&status["connector"])
                && tasks.len() >= args.tasks
                && tasks.iter().all(running))
            .then_some(status))
        })?;
        let running = sent.elapsed();
        let mut spread: Vec<usize> = cluster
            .iter()
            .map(|n| {
                let id = n.rest.base().trim_start_matches("http://");
                status["tasks"]
                    .as_array()
                    .map(|ts| ts.iter().filter(|t| t["worker_id"] == id).count())
                    .unwrap_or(0)
            })
            .collect();
        spread.sort_unstable_by(|a, b| b.cmp(a));
        say(format!(
            "connector {run}/{runs}: POST answered after {:.0} ms; all {} tasks RUNNING after {:.0} ms (tasks per worker {spread:?})",
            ms(post),
            args.tasks,
            ms(running)
        ));
        starts.push(TaskStart {
            post,
            running,
            spread,
        });
        if run == runs {
            std::thread::sleep(Duration::from_secs(args.idle_secs));
            rss = cluster
                .iter()
                .filter_map(|n| memory(n.worker.pid()).map(|m| m.rss_kib))
                .collect();
        }
        let (code, resp) =
            cluster[leader]
                .rest
                .send("DELETE", &format!("/connectors/{name}"), None)?;
        if code != 204 && code != 200 {
            return Err(format!("DELETE /connectors/{name} answered {code}: {resp}"));
        }
        let settled = wait_settled(cluster, timeout)?;
        say(format!(
            "connector {run}/{runs}: deleted; cluster settled at generation {settled}"
        ));
    }
    Ok((formed, starts, rss))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The median (the lower of the middle two for an even count); 0 for none.
fn median<T: Copy + Ord + Default>(values: impl Iterator<Item = T>) -> T {
    let mut v: Vec<T> = values.collect();
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

fn list(values: impl Iterator<Item = String>) -> String {
    values.collect::<Vec<_>>().join(", ")
}

impl Report {
    fn table(&self) -> Table {
        let mut t = Table::new(&["", "Tributary", "Java Kafka Connect"]);
        t.row(
            format!(
                "idle RSS, worker joined to a group, no connectors ({} s idle)",
                self.idle_secs
            ),
            vec![
                format!(
                    "{:.1} MiB",
                    mib(median(self.startups.iter().map(|s| s.idle_rss_kib)))
                ),
                JAVA_TODO.into(),
            ],
        );
        t.row(
            format!(
                "start → joined and ready, fresh group (median of {})",
                self.startups.len()
            ),
            vec![
                format!(
                    "{:.0} ms",
                    ms(median(self.startups.iter().map(|s| s.ready)))
                ),
                JAVA_TODO.into(),
            ],
        );
        t.row(
            format!(
                "POST {}-task VerifiableSource → all tasks RUNNING, {} workers (median of {})",
                self.args_tasks,
                self.args_workers,
                self.starts.len()
            ),
            vec![
                format!(
                    "{:.0} ms",
                    ms(median(self.starts.iter().map(|s| s.running)))
                ),
                JAVA_TODO.into(),
            ],
        );
        t
    }

    fn notes(&self) -> Vec<String> {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0);
        let mut notes = vec![
            format!(
                "Broker {} on the same host ({cores} cores), group.initial.rebalance.delay.ms={}; release `tributary distributed`, internal topics with replication factor 1 (configs 1, offsets 5, status 3 partitions), session.timeout.ms=6000, heartbeat.interval.ms=1000.",
                self.bootstrap,
                self.initial_rebalance_delay.as_deref().unwrap_or("unknown")
            ),
            format!(
                "Startup: timed from spawning the process until REST answers and GET /tributary/worker reports generation > 0; each worker is the first of a new group, so this includes creating and reading its three internal topics. Per worker: ready {} ms (REST up {} ms).",
                list(self.startups.iter().map(|s| format!("{:.0}", ms(s.ready)))),
                list(self.startups.iter().map(|s| format!("{:.0}", ms(s.rest_up)))),
            ),
            format!(
                "Idle RSS: VmRSS {} s after ready, per worker {} MiB (VmHWM {} MiB).",
                self.idle_secs,
                list(self.startups.iter().map(|s| format!("{:.1}", mib(s.idle_rss_kib)))),
                list(self.startups.iter().map(|s| format!("{:.1}", mib(s.idle_hwm_kib)))),
            ),
            format!(
                "Tasks: {} workers started together formed a group in {:.0} ms; then, one at a time, a VerifiableSource connector (tasks.max={}, throughput={} records/s per task, its own 1-partition topic) is POSTed to the leader and timed until GET /connectors/{{c}}/status on the leader shows the connector and every task RUNNING; it is then deleted and the cluster left to settle before the next. Per connector: {} ms (POST answered after {} ms; tasks per worker {}).",
                self.args_workers,
                ms(self.cluster_formed),
                self.args_tasks,
                self.args_throughput,
                list(self.starts.iter().map(|s| format!("{:.0}", ms(s.running)))),
                list(self.starts.iter().map(|s| format!("{:.0}", ms(s.post)))),
                list(self.starts.iter().map(|s| format!("{:?}", s.spread))),
            ),
        ];
        if !self.cluster_rss_kib.is_empty() {
            notes.push(format!(
                "Cluster workers' VmRSS {} s after the last connector's tasks were all RUNNING: {} MiB.",
                self.idle_secs,
                list(self.cluster_rss_kib.iter().map(|k| format!("{:.1}", mib(*k))))
            ));
        }
        notes.push("TODO: Java: see conformance benchmark (Apache Kafka Connect's Java worker is not measured here).".into());
        notes
    }

    /// The results as an aligned plain-text table with notes.
    fn text(&self) -> String {
        let mut out = self.table().text();
        out.push('\n');
        for n in self.notes() {
            out.push_str(&n);
            out.push('\n');
        }
        out
    }

    /// The results as a Markdown table with notes, ready for the README.
    fn markdown(&self) -> String {
        let mut out = self.table().markdown();
        out.push('\n');
        for n in self.notes() {
            out.push_str(&n);
            out.push('\n');
        }
        out
    }
}
