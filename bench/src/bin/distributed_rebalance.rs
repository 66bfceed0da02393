//! `distributed-rebalance`: what a worker joining a busy cluster costs the tasks already
//! running, with eager rebalancing and with incremental cooperative rebalancing (KIP-415,
//! `connect.protocol=sessioned`), against a real Kafka broker.
//!
//! For each protocol (eager first, then sessioned; a fresh group, fresh topics and fresh
//! workers each time):
//! 1. `--workers` workers (default 3) form a group and run `--connectors` VerifiableSource
//!    connectors (default 6) of `--tasks` tasks each (default 10) at `--throughput`
//!    records/s per task (default 100), each connector writing into its own 1-partition topic;
//! 2. once the tasks are balanced and have run `--settle-secs`, the total of the topics' end
//!    offsets is sampled every `--sample-ms` (200 ms) from `--before-secs` (10 s) before a new
//!    worker is started until `--after-secs` (20 s) after;
//! 3. the new worker is spawned; the time until the cluster is balanced again (every task
//!    RUNNING on the worker it is assigned to, each worker within 1 of the average task count,
//!    all workers on one generation) is measured;
//! 4. when the sampling ends, task owners and `GET /tributary/task-counters` of every worker
//!    are compared with those just before the join: a task whose owner did not change should
//!    not have been stopped (every stop-count increment of such a task is counted).
//!
//! Reported per protocol: the tasks stopped that did not move, the time to balance, the steady
//! rate before the join, the lowest rate over a 1-s window after the join, and that dip in
//! percent (with the lowest 1-s window before the join as a noise reference). The table is
//! printed as plain text, then in Markdown at the end of stdout; progress goes to stderr. This
//! is a measurement, not a test: nothing is asserted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use tributary_bench::cluster::{
    check_alive, connector_status, create_connector, leader, ms, spawn_cluster, verifiable_source,
    wait_every, Node,
};
use tributary_bench::kafka::Broker;
use tributary_bench::rate::{average_rate, dip_percent, lowest_window, Sample, WindowRate};
use tributary_bench::table::Table;
use tributary_bench::worker::internal_topics;
use tributary_bench::{say, stamp};

/// How often the balance of the cluster is polled (kept coarse: the REST calls compete with the
/// workers for the CPU).
const BALANCE_POLL: Duration = Duration::from_millis(100);

/// Command-line options.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "distributed-rebalance",
    about = "Tributary distributed workers: a worker joining a busy cluster, eager vs sessioned (KIP-415): tasks stopped needlessly, time to balance, throughput dip."
)]
pub struct Args {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    pub bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    pub tributary: Option<PathBuf>,
    /// Workers running the connectors before one more joins.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// VerifiableSource connectors, each with its own topic.
    #[arg(long, default_value_t = 6)]
    pub connectors: usize,
    /// `tasks.max` of each connector.
    #[arg(long, default_value_t = 10)]
    pub tasks: usize,
    /// `throughput` (records/s per task) of the connectors.
    #[arg(long, default_value_t = 100)]
    pub throughput: u64,
    /// Seconds the balanced pipeline runs before the sampling starts.
    #[arg(long, default_value_t = 5)]
    pub settle_secs: u64,
    /// Seconds sampled before the new worker is started (the steady rate).
    #[arg(long, default_value_t = 10)]
    pub before_secs: u64,
    /// Seconds sampled after the new worker is started.
    #[arg(long, default_value_t = 20)]
    pub after_secs: u64,
    /// Sampling interval of the topics' end offsets, in ms.
    #[arg(long, default_value_t = 200)]
    pub sample_ms: u64,
    /// `scheduled.rebalance.max.delay.ms` of the workers (it only delays the reassignment of a
    /// departed worker's jobs and caps the backoff between consecutive revoking rounds).
    #[arg(long, default_value_t = 1000)]
    pub max_delay_ms: u64,
    /// The protocols measured, in order (`eager`, `compatible`, `sessioned`).
    #[arg(long, value_delimiter = ',', default_value = "eager,sessioned")]
    pub protocols: Vec<String>,
    /// Give up on any single wait (start, join, balance) after this many seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Keep the benchmark's topics (internal and VerifiableSource) instead of deleting them.
    #[arg(long)]
    pub keep_topics: bool,
}

fn main() -> ExitCode {
    tributary_bench::exit_status("distributed-rebalance", run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.tributary.as_deref())?;
    let bootstrap = tributary_bench::bootstrap(args.bootstrap.as_deref());
    let stamp = stamp();
    let mut results = Vec::new();
    let mut failure = None;
    // Every protocol's topics are deleted at the end: deleting topics between the runs can leave
    // the next run's topic creation waiting for the broker.
    let mut topics = Vec::new();
    for protocol in &args.protocols {
        // A fresh connection per protocol, so no metadata is cached from the previous run.
        let r = Broker::connect(&bootstrap)
            .and_then(|broker| measure(args, &binary, &broker, protocol, stamp, &mut topics));
        match r {
            Ok(r) => results.push(r),
            Err(e) => {
                failure = Some(format!("{protocol}: {e}"));
                break;
            }
        }
    }
    if !topics.is_empty() {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        if args.keep_topics {
            say(format!("kept topics {names:?}"));
        } else {
            say(format!("deleting {} topics", names.len()));
            Broker::connect(&bootstrap)?.delete_topics(&names);
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let report = Report {
        args: args.clone(),
        bootstrap,
        results,
    };
    print!("{}", report.render(false));
    println!();
    print!("{}", report.render(true));
    Ok(())
}

/// What one protocol's run measured.
struct Outcome {
    /// The `connect.protocol` setting.
    protocol: String,
    /// The protocol the workers reported in use.
    in_use: String,
    /// Tasks whose owner did not change across the join, but that were stopped (stop-count
    /// increments summed over workers).
    unmoved_stops: u64,
    /// Tasks whose owner did not change.
    unmoved: usize,
    /// Tasks that moved to another worker.
    moved: usize,
    /// Stop-count increments of all tasks, summed over workers.
    all_stops: u64,
    /// Spawning the new worker until it reported a generation > 0.
    joined: Duration,
    /// Spawning the new worker until the cluster was balanced.
    balanced: Duration,
    /// Generation of the group before the join and once balanced.
    generations: (i64, i64),
    /// Tasks per worker once balanced (the new worker last).
    spread: Vec<usize>,
    /// Steady rate over the `--before-secs` before the join.
    steady: Option<WindowRate>,
    /// Lowest 1-s window rate after the join.
    lowest_after: Option<WindowRate>,
    /// Lowest 1-s window rate before the join (noise reference).
    lowest_before: Option<WindowRate>,
    /// Average rate over the whole window after the join.
    average_after: Option<WindowRate>,
    /// Samples taken.
    samples: usize,
}

/// The group's view of who runs what: task id (`<conn>-<n>`) → worker id, the generation
/// every worker reported (all equal), and tasks per worker.
struct View {
    owners: BTreeMap<String, String>,
    generation: i64,
    per_worker: Vec<usize>,
}

/// The cluster's view when it is balanced over all of `nodes`, else `None`: every worker on
/// one generation > 0, each task assigned exactly once, each worker's task count within 1 of
/// the average, and every task RUNNING (per the status API) on the worker it is assigned to.
fn balanced(
    nodes: &mut [Node],
    connectors: &[String],
    tasks_per_connector: usize,
) -> Result<Option<View>, String> {
    check_alive(nodes)?;
    let total = connectors.len() * tasks_per_connector;
    let mut owners = BTreeMap::new();
    let mut generation = None;
    let mut per_worker = Vec::new();
    for n in nodes.iter() {
        let Some(info) = n.info() else {
            return Ok(None);
        };
        let g = info["generation"].as_i64().unwrap_or(0);
        if g <= 0 || generation.is_some_and(|x| x != g) {
            return Ok(None);
        }
        generation = Some(g);
        let id = info["worker_id"].as_str().unwrap_or_default().to_string();
        let tasks = info["tasks"].as_array().cloned().unwrap_or_default();
        for t in &tasks {
            let t = t.as_str().unwrap_or_default().to_string();
            if owners.insert(t, id.clone()).is_some() {
                return Ok(None);
            }
        }
        per_worker.push(tasks.len());
    }
    let avg = total as f64 / nodes.len() as f64;
    if owners.len() != total || per_worker.iter().any(|&c| (c as f64 - avg).abs() > 1.0) {
        return Ok(None);
    }
    for c in connectors {
        let Some(status) = connector_status(&nodes[0].rest, c)? else {
            return Ok(None);
        };
        if !status.all_running(tasks_per_connector) {
            return Ok(None);
        }
        for (n, (_, worker)) in &status.tasks {
            if owners.get(&format!("{c}-{n}")) != Some(worker) {
                return Ok(None);
            }
        }
    }
    Ok(Some(View {
        owners,
        generation: generation.unwrap_or(0),
        per_worker,
    }))
}

/// Stop counts per (worker index, task id).
fn stops(nodes: &[Node]) -> BTreeMap<(usize, String), u64> {
    let mut out = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for (task, c) in n.task_counters() {
            out.insert((i, task), c.stops);
        }
    }
    out
}

fn measure(
    args: &Args,
    binary: &Path,
    broker: &Broker,
    protocol: &str,
    stamp: u128,
    topics: &mut Vec<String>,
) -> Result<Outcome, String> {
    let timeout = Duration::from_secs(args.timeout_secs);
    let group = format!("bench-rebal-{stamp}-{protocol}");
    topics.extend(internal_topics(&group));
    let mut data_topics = Vec::new();
    let mut connectors = Vec::new();
    for c in 0..args.connectors {
        let topic = format!("{group}-vs-{c}");
        broker.create_topic(&topic)?;
        topics.push(topic.clone());
        data_topics.push(topic);
        connectors.push(format!("bench-rebal-{stamp}-{protocol}-c{c}"));
    }
    let max_delay = args.max_delay_ms.to_string();
    let extra = [
        ("connect.protocol", protocol),
        ("scheduled.rebalance.max.delay.ms", max_delay.as_str()),
    ];
    say(format!(
        "{protocol}: {} workers in new group {group}",
        args.workers
    ));
    let mut nodes = spawn_cluster(
        binary,
        broker.bootstrap(),
        &group,
        &extra,
        args.workers.max(1),
        timeout,
    )?;
    let result = measure_on(
        args,
        binary,
        broker,
        protocol,
        &group,
        &extra,
        &data_topics,
        &connectors,
        &mut nodes,
    );
    say(format!("{protocol}: stopping {} workers", nodes.len()));
    for n in &mut nodes {
        n.stop();
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn measure_on(
    args: &Args,
    binary: &Path,
    broker: &Broker,
    protocol: &str,
    group: &str,
    extra: &[(&str, &str)],
    data_topics: &[String],
    connectors: &[String],
    nodes: &mut Vec<Node>,
) -> Result<Outcome, String> {
    let timeout = Duration::from_secs(args.timeout_secs);
    wait_every("the group to form", timeout, BALANCE_POLL, || {
        check_alive(nodes)?;
        let gens: Vec<i64> = nodes
            .iter()
            .map(|n| n.info().and_then(|i| i["generation"].as_i64()).unwrap_or(0))
            .collect();
        let same = gens.iter().all(|g| *g > 0 && *g == gens[0]);
        Ok((same && leader(nodes).is_some()).then_some(()))
    })?;
    let lead = leader(nodes).ok_or("no leader")?;
    let in_use = nodes[lead].info().map(|i| i["protocol"].to_string());
    let in_use = in_use.unwrap_or_default().trim_matches('"').to_string();
    say(format!(
        "{protocol}: group formed (protocol in use: {in_use}); creating {} connectors x {} tasks at {} records/s per task",
        connectors.len(),
        args.tasks,
        args.throughput
    ));
    for (name, topic) in connectors.iter().zip(data_topics) {
        let body = verifiable_source(name, topic, args.tasks, args.throughput);
        create_connector(&nodes[lead].rest, &body)?;
    }
    let before = wait_every("the tasks to be balanced", timeout, BALANCE_POLL, || {
        balanced(nodes, connectors, args.tasks)
    })?;
    say(format!(
        "{protocol}: balanced at generation {} (tasks per worker {:?}); running {} s before sampling",
        before.generation, before.per_worker, args.settle_secs
    ));
    std::thread::sleep(Duration::from_secs(args.settle_secs));

    // Sample the topics' end offsets on a thread of its own, with its own broker connection.
    let sample_every = Duration::from_millis(args.sample_ms.max(10));
    let span = Duration::from_secs(args.before_secs + args.after_secs);
    let bootstrap = broker.bootstrap().to_string();
    let sampled_topics = data_topics.to_vec();
    let sampler = std::thread::spawn(move || -> Result<Vec<(Instant, u64)>, String> {
        let broker = Broker::connect(&bootstrap)?;
        let start = Instant::now();
        let mut out = Vec::new();
        let mut next = start;
        while next <= start + span {
            let now = Instant::now();
            if now < next {
                std::thread::sleep(next - now);
            }
            // A sample whose offsets cannot all be read is skipped.
            let totals: Result<Vec<i64>, String> = sampled_topics
                .iter()
                .map(|t| broker.try_end_offset(t))
                .collect();
            match totals {
                Ok(v) => out.push((
                    Instant::now(),
                    v.iter().map(|o| o.max(&0)).sum::<i64>() as u64,
                )),
                Err(e) => eprintln!("bench: skipped a sample: {e}"),
            }
            next += sample_every;
        }
        Ok(out)
    });

    std::thread::sleep(Duration::from_secs(args.before_secs));
    // The owners and stop counts just before the join.
    let owners_before = before.owners.clone();
    let generation_before = nodes[0]
        .info()
        .and_then(|i| i["generation"].as_i64())
        .unwrap_or(before.generation);
    let stops_before = stops(nodes);
    say(format!("{protocol}: starting worker {}", nodes.len() + 1));
    let (worker, dir) = Node::start(binary, broker.bootstrap(), group, extra)?;
    let join_at = worker.started;
    nodes.push(Node::connect(worker, dir, timeout)?);
    let new = nodes.len() - 1;
    wait_every(
        "the new worker to join",
        timeout,
        Duration::from_millis(20),
        || {
            nodes[new].worker.check_alive()?;
            Ok((nodes[new]
                .info()
                .and_then(|i| i["generation"].as_i64())
                .unwrap_or(0)
                > 0)
            .then_some(()))
        },
    )?;
    let joined = join_at.elapsed();
    let after = wait_every("the cluster to balance", timeout, BALANCE_POLL, || {
        balanced(nodes, connectors, args.tasks)
    })?;
    let balanced_after = join_at.elapsed();
    say(format!(
        "{protocol}: new worker joined after {:.0} ms; balanced after {:.0} ms at generation {} (tasks per worker {:?})",
        ms(joined),
        ms(balanced_after),
        after.generation,
        after.per_worker
    ));
    let raw = sampler
        .join()
        .map_err(|_| "the sampling thread panicked".to_string())??;

    // Compare owners and stop counts at the end of the sampling with those before the join.
    let end = wait_every(
        "the cluster to be balanced at the end",
        timeout,
        BALANCE_POLL,
        || balanced(nodes, connectors, args.tasks),
    )?;
    let stops_after = stops(nodes);
    let stop_increments = |task: &str| -> u64 {
        stops_after
            .iter()
            .filter(|((_, t), _)| t == task)
            .map(|((w, t), after)| {
                let was = stops_before.get(&(*w, t.clone())).copied().unwrap_or(0);
                after.saturating_sub(was)
            })
            .sum()
    };
    let mut unmoved = 0;
    let mut moved = 0;
    let mut unmoved_stops = 0;
    let mut all_stops = 0;
    for (task, was) in &owners_before {
        let n = stop_increments(task);
        all_stops += n;
        if end.owners.get(task) == Some(was) {
            unmoved += 1;
            unmoved_stops += n;
        } else {
            moved += 1;
        }
    }
    say(format!(
        "{protocol}: {moved} tasks moved, {unmoved} stayed; stops of tasks that stayed: {unmoved_stops}, of all tasks: {all_stops}"
    ));

    let samples: Vec<Sample> = raw
        .iter()
        .map(|(at, total)| Sample {
            t: if *at >= join_at {
                (*at - join_at).as_secs_f64()
            } else {
                -(join_at - *at).as_secs_f64()
            },
            total: *total,
        })
        .collect();
    let before_secs = args.before_secs as f64;
    let after_secs = args.after_secs as f64;
    Ok(Outcome {
        protocol: protocol.to_string(),
        in_use,
        unmoved_stops,
        unmoved,
        moved,
        all_stops,
        joined,
        balanced: balanced_after,
        generations: (generation_before, after.generation),
        spread: after.per_worker,
        steady: average_rate(&samples, -before_secs, 0.0),
        lowest_after: lowest_window(&samples, 0.0, after_secs, 1.0),
        lowest_before: lowest_window(&samples, -before_secs, 0.0, 1.0),
        average_after: average_rate(&samples, 0.0, after_secs),
        samples: samples.len(),
    })
}

/// Everything the run measured.
struct Report {
    args: Args,
    bootstrap: String,
    results: Vec<Outcome>,
}

fn rate_cell(r: Option<WindowRate>) -> String {
    r.map(|r| format!("{:.0} records/s", r.per_sec))
        .unwrap_or_else(|| "n/a".into())
}

impl Report {
    fn table(&self) -> Table {
        let mut header = vec![String::new()];
        header.extend(self.results.iter().map(|r| r.protocol.clone()));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header);
        let a = &self.args;
        let total = a.connectors * a.tasks;
        let row = |t: &mut Table, label: String, f: &dyn Fn(&Outcome) -> String| {
            t.row(label, self.results.iter().map(f).collect());
        };
        row(
            &mut t,
            "tasks stopped that did not move (stop increments)".into(),
            &|r| format!("{} (of {} that stayed)", r.unmoved_stops, r.unmoved),
        );
        row(&mut t, "tasks moved".into(), &|r| {
            format!("{} of {total}", r.moved)
        });
        row(&mut t, "task stops in all".into(), &|r| {
            r.all_stops.to_string()
        });
        row(
            &mut t,
            format!("start worker {} → joined", a.workers + 1),
            &|r| format!("{:.0} ms", ms(r.joined)),
        );
        row(
            &mut t,
            format!(
                "start worker {} → balanced ({total} tasks RUNNING, each worker within 1 of {:.0}, one generation)",
                a.workers + 1,
                total as f64 / (a.workers + 1) as f64
            ),
            &|r| format!("{:.0} ms", ms(r.balanced)),
        );
        row(&mut t, "generation before → balanced".into(), &|r| {
            format!("{} → {}", r.generations.0, r.generations.1)
        });
        row(
            &mut t,
            format!("steady rate, {} s before the join", a.before_secs),
            &|r| rate_cell(r.steady),
        );
        row(
            &mut t,
            format!("lowest 1-s window, {} s after the join", a.after_secs),
            &|r| {
                r.lowest_after
                    .map(|w| format!("{:.0} records/s (at +{:.1} s)", w.per_sec, w.from))
                    .unwrap_or_else(|| "n/a".into())
            },
        );
        row(
            &mut t,
            "dip".into(),
            &|r| match (r.steady, r.lowest_after) {
                (Some(s), Some(l)) => format!("{:.0} %", dip_percent(s.per_sec, l.per_sec)),
                _ => "n/a".into(),
            },
        );
        row(
            &mut t,
            "lowest 1-s window before the join (noise reference)".into(),
            &|r| rate_cell(r.lowest_before),
        );
        row(
            &mut t,
            format!("average rate, {} s after the join", a.after_secs),
            &|r| rate_cell(r.average_after),
        );
        t
    }

    fn notes(&self) -> Vec<String> {
        let a = &self.args;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0);
        let mut notes = vec![format!(
            "Broker {} on the same host ({cores} cores, shared); release `tributary distributed`; per protocol a fresh group of {} workers (internal topics with replication factor 1, session.timeout.ms=6000, heartbeat.interval.ms=1000, scheduled.rebalance.max.delay.ms={}) runs {} VerifiableSource connectors x {} tasks at {} records/s per task ({} records/s in all), each connector into its own 1-partition topic; then worker {} is started.",
            self.bootstrap,
            a.workers,
            a.max_delay_ms,
            a.connectors,
            a.tasks,
            a.throughput,
            a.connectors as u64 * a.tasks as u64 * a.throughput,
            a.workers + 1,
        )];
        notes.push(format!(
            "Stops: task owners (GET /tributary/worker) and stop counts (GET /tributary/task-counters) of every worker just before the join and {} s after it; a task that did not move should not have been stopped. Balanced: every worker on one generation, each task assigned once, each worker within 1 of the average task count, every task RUNNING (GET /connectors/{{c}}/status) on the worker it is assigned to; polled every {} ms.",
            a.after_secs,
            BALANCE_POLL.as_millis()
        ));
        notes.push(format!(
            "Rate: the sum of the {} topics' end offsets sampled every {} ms from {} s before the join to {} s after it ({}); the steady rate is the average over the {} s before; the lowest 1-s window is the smallest (increase / time) between a sample after the join and the first sample at least 1 s later; dip = (steady - lowest) / steady.",
            a.connectors,
            a.sample_ms,
            a.before_secs,
            a.after_secs,
            self.results
                .iter()
                .map(|r| format!("{}: {} samples", r.protocol, r.samples))
                .collect::<Vec<_>>()
                .join(", "),
            a.before_secs,
        ));
        for r in &self.results {
            notes.push(format!(
                "{}: protocol in use {}; tasks per worker once balanced {:?} (the new worker last).",
                r.protocol, r.in_use, r.spread
            ));
        }
        notes
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
