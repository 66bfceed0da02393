//! `distributed-restart`: how long a KIP-745 restart of a connector and all its tasks takes on a
//! `tributary distributed` cluster (`connect.protocol=sessioned`), against a real Kafka broker.
//!
//! On a fresh `--workers`-worker cluster (default 3), VerifiableSource connectors with
//! `--tasks` tasks each (default `1,50`, at a low `--throughput`) are created one at a time and
//! left running.
//! Then, `--runs` times per connector (default 3), the leader is sent
//! `POST /connectors/{c}/restart?includeTasks=true&onlyFailed=false` and the time is taken
//! until every targeted instance (the connector and all its tasks) has been started again (its
//! start count in `GET /tributary/connector-counters` or `/tributary/task-counters`, summed
//! over the workers, went up) and `GET /connectors/{c}/status` shows it RUNNING. The table shows
//! the medians, as plain text and then in Markdown at the end of stdout; progress goes to
//! stderr. This is a measurement, not a test: nothing is asserted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use tributary_bench::cluster::{
    check_alive, connector_status, create_connector, leader, median_f64, ms, spawn_cluster,
    verifiable_source, wait_every, Node,
};
use tributary_bench::kafka::Broker;
use tributary_bench::table::Table;
use tributary_bench::worker::internal_topics;
use tributary_bench::{say, stamp};

/// How often the restart's progress is polled.
const POLL: Duration = Duration::from_millis(20);

/// Command-line options.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "distributed-restart",
    about = "Tributary distributed workers: POST /connectors/{c}/restart?includeTasks=true&onlyFailed=false to every instance RUNNING again (KIP-745), sessioned protocol."
)]
pub struct Args {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    pub bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    pub tributary: Option<PathBuf>,
    /// Workers in the cluster.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// `tasks.max` of each connector restarted (one connector per value).
    #[arg(long, value_delimiter = ',', default_value = "1,50")]
    pub tasks: Vec<usize>,
    /// `throughput` (records/s per task) of the connectors.
    #[arg(long, default_value_t = 10)]
    pub throughput: u64,
    /// Restarts timed per connector; the table shows the median.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Seconds a connector runs undisturbed before each restart.
    #[arg(long, default_value_t = 2)]
    pub pause_secs: u64,
    /// `connect.protocol` of the workers.
    #[arg(long, default_value = "sessioned")]
    pub protocol: String,
    /// Give up on any single wait (start, join, RUNNING) after this many seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Keep the benchmark's topics (internal and VerifiableSource) instead of deleting them.
    #[arg(long)]
    pub keep_topics: bool,
}

fn main() -> ExitCode {
    tributary_bench::exit_status("distributed-restart", run(&Args::parse()))
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
    let report = Report {
        args: args.clone(),
        bootstrap,
        results: result?,
    };
    print!("{}", report.render(false));
    println!();
    print!("{}", report.render(true));
    Ok(())
}

/// One timed restart.
#[derive(Debug, Clone, Copy)]
struct Restart {
    /// POST sent until its 202 arrived.
    post: Duration,
    /// POST sent until every instance was started again and RUNNING.
    running: Duration,
}

/// The restarts of one connector.
struct Connector {
    tasks: usize,
    runs: Vec<Restart>,
}

fn measure(
    args: &Args,
    binary: &Path,
    broker: &Broker,
    topics: &mut Vec<String>,
) -> Result<Vec<Connector>, String> {
    let stamp = stamp();
    let timeout = Duration::from_secs(args.timeout_secs);
    let group = format!("bench-restart-{stamp}");
    topics.extend(internal_topics(&group));
    let extra = [
        ("connect.protocol", args.protocol.as_str()),
        ("scheduled.rebalance.max.delay.ms", "1000"),
    ];
    say(format!(
        "{} {} workers in new group {group}",
        args.workers, args.protocol
    ));
    let mut nodes = spawn_cluster(
        binary,
        broker.bootstrap(),
        &group,
        &extra,
        args.workers.max(1),
        timeout,
    )?;
    let result = measure_on(args, broker, &group, &mut nodes, topics);
    say(format!("stopping {} workers", nodes.len()));
    for n in &mut nodes {
        n.stop();
    }
    result
}

/// Start counts per instance of connector `name` (the connector under its name, tasks as
/// `<name>-<n>`), summed over `nodes`.
fn starts(nodes: &[Node], name: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let prefix = format!("{name}-");
    for n in nodes {
        for (task, c) in n.task_counters() {
            if task
                .strip_prefix(&prefix)
                .is_some_and(|rest| rest.parse::<u64>().is_ok())
            {
                *out.entry(task).or_insert(0) += c.starts;
            }
        }
        if let Some(c) = n.connector_counters().get(name) {
            *out.entry(name.to_string()).or_insert(0) += c.starts;
        }
    }
    out
}

/// A summary of connector `name`'s status on the leader and of every worker's assignment, for
/// error messages.
fn describe(nodes: &[Node], lead: usize, name: &str) -> String {
    let status = match connector_status(&nodes[lead].rest, name) {
        Ok(Some(s)) => {
            let mut states: BTreeMap<&str, usize> = BTreeMap::new();
            for (state, _) in s.tasks.values() {
                *states.entry(state.as_str()).or_default() += 1;
            }
            format!(
                "status: connector {} on {}, tasks {states:?}",
                s.state, s.worker_id
            )
        }
        Ok(None) => "no status".into(),
        Err(e) => e,
    };
    let workers: Vec<String> = nodes
        .iter()
        .map(|n| match n.info() {
            Some(i) => format!(
                "{} generation {} connectors {} tasks {}",
                n.id(),
                i["generation"],
                i["connectors"],
                i["tasks"].as_array().map(Vec::len).unwrap_or(0)
            ),
            None => format!("{} not answering", n.id()),
        })
        .collect();
    format!("{status}; workers: {}", workers.join("; "))
}

fn measure_on(
    args: &Args,
    broker: &Broker,
    group: &str,
    nodes: &mut [Node],
    topics: &mut Vec<String>,
) -> Result<Vec<Connector>, String> {
    let timeout = Duration::from_secs(args.timeout_secs);
    wait_every("the group to form", timeout, POLL, || {
        check_alive(nodes)?;
        let gens: Vec<i64> = nodes
            .iter()
            .map(|n| n.info().and_then(|i| i["generation"].as_i64()).unwrap_or(0))
            .collect();
        let same = gens.iter().all(|g| *g > 0 && *g == gens[0]);
        Ok((same && leader(nodes).is_some()).then_some(()))
    })?;
    let lead = leader(nodes).ok_or("no leader")?;
    let all_running = |nodes: &mut [Node], name: &str, tasks: usize| {
        check_alive(nodes)?;
        Ok(connector_status(&nodes[lead].rest, name)?
            .is_some_and(|s| s.all_running(tasks))
            .then_some(()))
    };
    let mut names = Vec::new();
    for (i, &tasks) in args.tasks.iter().enumerate() {
        let name = format!("{group}-c{i}-{tasks}t");
        let topic = format!("{group}-vs-{i}");
        broker.create_topic(&topic)?;
        topics.push(topic.clone());
        let body = verifiable_source(&name, &topic, tasks, args.throughput);
        create_connector(&nodes[lead].rest, &body)?;
        // One at a time: each connector runs before the next is created.
        wait_every(&format!("{name} to run"), timeout, POLL, || {
            all_running(nodes, &name, tasks)
        })
        .map_err(|e| format!("{e}; {}", describe(nodes, lead, &name)))?;
        say(format!("{name} ({tasks} tasks) running"));
        names.push((name, tasks));
    }
    say(format!(
        "connectors {:?} running; restarting each {} times via the leader {}",
        names.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        args.runs,
        nodes[lead].rest.base()
    ));
    let mut out = Vec::new();
    for (name, tasks) in &names {
        let mut runs = Vec::new();
        for run in 1..=args.runs.max(1) {
            std::thread::sleep(Duration::from_secs(args.pause_secs));
            wait_every(&format!("{name} to run"), timeout, POLL, || {
                all_running(nodes, name, *tasks)
            })?;
            let before = starts(nodes, name);
            if before.len() != tasks + 1 {
                return Err(format!(
                    "{name}: counters for {} instances, expected {}: {before:?}",
                    before.len(),
                    tasks + 1
                ));
            }
            let path = format!("/connectors/{name}/restart?includeTasks=true&onlyFailed=false");
            let sent = Instant::now();
            let (code, resp) = nodes[lead].rest.send("POST", &path, None)?;
            let post = sent.elapsed();
            if code != 202 {
                return Err(format!("POST {path} answered {code}: {resp}"));
            }
            wait_every(
                &format!("{name}'s instances to restart"),
                timeout,
                POLL,
                || {
                    let now = starts(nodes, name);
                    let restarted = before
                        .iter()
                        .all(|(k, was)| now.get(k).is_some_and(|n| n > was));
                    if !restarted {
                        check_alive(nodes)?;
                        return Ok(None);
                    }
                    all_running(nodes, name, *tasks)
                },
            )?;
            let running = sent.elapsed();
            say(format!(
                "{name} ({tasks} tasks) restart {run}/{}: 202 after {:.0} ms, all {} instances restarted and RUNNING after {:.0} ms",
                args.runs,
                ms(post),
                tasks + 1,
                ms(running)
            ));
            runs.push(Restart { post, running });
        }
        out.push(Connector {
            tasks: *tasks,
            runs,
        });
    }
    Ok(out)
}

/// Everything the run measured.
struct Report {
    args: Args,
    bootstrap: String,
    results: Vec<Connector>,
}

fn median_ms(values: impl Iterator<Item = Duration>) -> String {
    let v: Vec<f64> = values.map(ms).collect();
    median_f64(&v)
        .map(|m| format!("{m:.0} ms"))
        .unwrap_or_else(|| "n/a".into())
}

impl Report {
    fn table(&self) -> Table {
        let mut header = vec![String::new()];
        header.extend(
            self.results
                .iter()
                .map(|c| format!("{} task{}", c.tasks, if c.tasks == 1 { "" } else { "s" })),
        );
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header);
        let runs = self.args.runs.max(1);
        t.row(
            "instances restarted (connector + tasks)",
            self.results
                .iter()
                .map(|c| (c.tasks + 1).to_string())
                .collect(),
        );
        t.row(
            format!("POST restart → 202 (median of {runs})"),
            self.results
                .iter()
                .map(|c| median_ms(c.runs.iter().map(|r| r.post)))
                .collect(),
        );
        t.row(
            format!("POST restart → every instance restarted and RUNNING (median of {runs})"),
            self.results
                .iter()
                .map(|c| median_ms(c.runs.iter().map(|r| r.running)))
                .collect(),
        );
        t.row(
            "per run",
            self.results
                .iter()
                .map(|c| {
                    c.runs
                        .iter()
                        .map(|r| format!("{:.0}", ms(r.running)))
                        .collect::<Vec<_>>()
                        .join(", ")
                        + " ms"
                })
                .collect(),
        );
        t
    }

    fn notes(&self) -> Vec<String> {
        let a = &self.args;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0);
        vec![
            format!(
                "Broker {} on the same host ({cores} cores, shared); release `tributary distributed`, {} workers with connect.protocol={} (internal topics with replication factor 1, session.timeout.ms=6000, heartbeat.interval.ms=1000); VerifiableSource connectors at {} records/s per task, each into its own 1-partition topic, created one at a time (each RUNNING before the next) and then all running.",
                self.bootstrap, a.workers, a.protocol, a.throughput
            ),
            format!(
                "Each restart: after {} s undisturbed and the connector and its tasks RUNNING, POST /connectors/{{c}}/restart?includeTasks=true&onlyFailed=false to the leader; timed until every instance's start count (GET /tributary/connector-counters and /tributary/task-counters, summed over the workers) went up and GET /connectors/{{c}}/status on the leader shows it RUNNING; polled every {} ms.",
                a.pause_secs,
                POLL.as_millis()
            ),
        ]
    }

    /// The results as an aligned plain-text table (or a Markdown one) with notes.
    fn render(&self, markdown: bool) -> String {
        let t = self.table();
        let mut out = if markdown { t.markdown() } else { t.text() };
        out.push('\n');
        for n in self.notes() {
            out.push_str(&n);
            out.push('\n');
        }
        out
    }
}
