//! `side-by-side`: Apache Kafka Connect (Java; 4.4.0, the reference, unless `--connect-version`)
//! and Tributary measured in the same run
//! against the same broker, as distributed workers with the same worker settings, printed as ONE
//! table with ratios and the raw librdkafka ceiling.
//!
//! The run first warms the broker up (a plain producer writes `--warmup-lines` lines to a
//! warm-up topic and a plain consumer reads them back), then measures `--rounds` rounds. Each
//! round measures the ceiling first, then both runtimes, Java first in odd rounds and Tributary
//! first in even ones; every cell of the table is the median over the rounds (a ratio is the
//! ratio of two medians), and a second table lists each round.
//!
//! In each round, for each runtime:
//! 1. start → ready: from spawning a worker until its REST API answers `GET /health` with 200
//!    and `GET /connectors` with 200 (and, for Tributary, `/tributary/worker` reports a
//!    generation);
//! 2. idle RSS: the worker process's `VmRSS` (Java: the JVM's) `--idle-secs` after ready;
//! 3. create → RUNNING: `POST /connectors` of a FileStreamSource until the connector and its
//!    task report RUNNING;
//! 4. FileStreamSource throughput: records/s from the first time the topic is seen holding a
//!    record until it is seen holding every line of the input file;
//! 5. FileStreamSink throughput: a FileStreamSink over the round's ceiling topic (the same
//!    topic, written by the raw producer, for both runtimes); records/s from the first time its
//!    output file is seen non-empty until it is seen as long as the input;
//! 6. restart latency: `POST /connectors/{c}/restart?includeTasks=true` (KIP-745) until the
//!    status topic holds RUNNING records of the connector and its task written after the POST
//!    (median of `--restarts`);
//! 7. join: a second worker joins the cluster running 6 tasks (source, sink and a 4-task sink);
//!    tasks stopped = task status records `UNASSIGNED` written to the status topic until the
//!    cluster is balanced again (both runtimes default to `connect.protocol=sessioned`).
//!
//! The ceiling is timed exactly like rows 4 and 5, by the same polling code: a plain librdkafka
//! producer with Tributary's source-producer settings writes the input file into a fresh topic
//! (first record seen in the topic → every line seen), then a plain consumer with Tributary's
//! sink-consumer settings reads that topic and writes each value and a newline to a file through
//! a 64 KiB buffer, as FileStreamSink does (first byte seen in the file → file complete).
//!
//! The Java worker is started the way Connect's `connect-distributed.sh` starts it: heap
//! `-Xms256M -Xmx2G` unless `--java-heap` says otherwise, and `kafka-run-class.sh`'s default JVM
//! options; the classpath comes from `scripts/connect-java classpath` (jars from Maven Central).
//!
//! Progress goes to stderr; the tables (text, then Markdown) and notes naming the settings to
//! stdout. This is a measurement, not a test: nothing is asserted.

#[allow(dead_code)] // cpu and peak RSS of the raw producer are not in this table
#[path = "../raw.rs"]
mod raw;

use tributary_bench::{
    input, java, kafka, proc_stats, say, stamp, status_watch, table::Table, tempdir, worker,
    Runtime as Kind, RuntimeArgs,
};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};
use tributary_bench::cluster::median_f64;
use tributary_bench::rest::Rest;
use tributary_runtime::config::clients::{sink_consumer_config, source_producer_config};
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};

use crate::input::InputFile;
use crate::java::{free_port, jvm_size, JavaCmd, KAFKA_JVM_OPTS};
use crate::kafka::Broker;
use crate::status_watch::StatusWatch;
use crate::worker::Worker;

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "side-by-side",
    about = "Java Kafka Connect (4.4.0 unless --connect-version) and Tributary measured in the \
             same run on the same broker \
             (medians of --rounds rounds, alternating which runtime goes first)."
)]
struct Args {
    /// Lines in the input file.
    #[arg(long, default_value_t = 300_000)]
    lines: u64,
    /// Rounds to measure; each measures the ceiling and both runtimes, Java first in odd
    /// rounds and Tributary first in even ones. The table shows the median of the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Lines written to and read back from a warm-up topic before the first round (at most
    /// --lines; 0: no warm-up).
    #[arg(long, default_value_t = 200_000)]
    warmup_lines: u64,
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// Java maximum heap (`-Xmx`); Connect's start script uses 2G. The initial heap (`-Xms`) is
    /// Connect's 256M, or this when it is smaller.
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// Partitions of each worker group's offsets topic (`offset.storage.partitions`; Connect's
    /// default is 25).
    #[arg(long, default_value_t = 5)]
    offset_partitions: u32,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub).
    #[arg(long)]
    loghub: Option<PathBuf>,
    /// Where the generated input file is cached (default: $TRIBUTARY_CACHE/bench).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Seconds an idle worker runs after ready before its RSS is read.
    #[arg(long, default_value_t = 5)]
    idle_secs: u64,
    /// Restarts measured per runtime and round (a round counts their median).
    #[arg(long, default_value_t = 3)]
    restarts: usize,
    /// The Apache Kafka Connect release the Java worker runs (its jars from Maven Central
    /// through `scripts/connect-java`). From 4.2 on, Maven Central has no connect-file: the
    /// Java worker's `plugin.path` then holds connect-file 4.1.1, the last published, as
    /// `scripts/jvm-bridge file-plugin-path` prepares it.
    #[arg(long, default_value = "4.4.0")]
    connect_version: String,
}

/// Whether Connect `version` ships connect-file on Maven Central (up to 4.1).
fn has_connect_file(version: &str) -> bool {
    version.starts_with("3.") || ["4.0.", "4.1."].iter().any(|p| version.starts_with(p))
}

/// The `plugin.path` of a Java worker of Connect `version` holding connect-file 4.1.1 (from
/// `scripts/jvm-bridge file-plugin-path`), or `None` where the release ships it.
fn java_file_plugin_path(version: &str) -> Result<Option<String>, String> {
    if has_connect_file(version) {
        return Ok(None);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/jvm-bridge");
    let out = std::process::Command::new(&script)
        .arg("file-plugin-path")
        .env("CONNECT_VERSION", version)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} file-plugin-path failed", script.display()));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| l.trim().to_string()))
}

fn main() -> ExitCode {
    tributary_bench::exit_status("side-by-side", run(&Args::parse()))
}

/// The order of the runtimes in round `round` (from 1): Java first in odd rounds.
fn order(round: usize) -> [Kind; 2] {
    if round % 2 == 1 {
        [Kind::Java, Kind::Tributary]
    } else {
        [Kind::Tributary, Kind::Java]
    }
}

/// Tasks running when the second worker joins (1 source, 1 sink, a 4-task sink).
const JOIN_TASKS: usize = 6;

/// How often completion is polled, for the runtimes and the ceiling alike.
const POLL: Duration = Duration::from_millis(5);

/// Bytes the ceiling consumer buffers before writing, as Tributary's FileStreamSink.
const WRITE_BUFFER: usize = 64 * 1024;

/// One runtime's figures in one round (or the medians over the rounds).
#[derive(Default, Debug, Clone)]
struct Figures {
    ready_ms: Option<f64>,
    idle_rss_mib: Option<f64>,
    create_running_ms: Option<f64>,
    /// Create of a 3-task connector → all its tasks RUNNING, on three workers.
    create_running_three_ms: Option<f64>,
    source_rps: Option<f64>,
    sink_rps: Option<f64>,
    restart_ms: Option<f64>,
    /// Tasks stopped (of [`JOIN_TASKS`]) when the second worker joined.
    join_stopped: Option<f64>,
}

impl Figures {
    /// The median of each figure over `rounds` (over the rounds that have it).
    fn median(rounds: &[&Figures]) -> Figures {
        let m = |f: fn(&Figures) -> Option<f64>| {
            median_f64(&rounds.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
        };
        Figures {
            ready_ms: m(|f| f.ready_ms),
            idle_rss_mib: m(|f| f.idle_rss_mib),
            create_running_ms: m(|f| f.create_running_ms),
            create_running_three_ms: m(|f| f.create_running_three_ms),
            source_rps: m(|f| f.source_rps),
            sink_rps: m(|f| f.sink_rps),
            restart_ms: m(|f| f.restart_ms),
            join_stopped: m(|f| f.join_stopped),
        }
    }
}

/// The raw clients' records/s in one round, timed like the runtimes' source and sink rows.
#[derive(Debug, Clone, Copy)]
struct Ceiling {
    producer_rps: f64,
    consumer_rps: f64,
}

/// The figures of one round.
struct Round {
    order: [Kind; 2],
    ceiling: Ceiling,
    java: Figures,
    tributary: Figures,
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.runtimes.tributary.as_deref())?;
    let run_dir = tempdir()?;
    let script = args.runtimes.connect_java.as_deref();
    // `scripts/connect-java` (run by JavaCmd) and `scripts/jvm-bridge` read the release from
    // the environment.
    std::env::set_var("CONNECT_VERSION", &args.connect_version);
    let java = JavaCmd::for_benchmark(script, &args.java_heap, run_dir.path())?;
    let java_plugin_path = java_file_plugin_path(&args.connect_version)?;
    let bootstrap = tributary_bench::bootstrap(args.runtimes.bootstrap.as_deref());
    let loghub = input::loghub_dir(args.loghub.clone());
    let cache = args.cache.clone().unwrap_or_else(|| {
        std::env::var("TRIBUTARY_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
                    .join(".cache/tributary")
            })
            .join("bench")
    });
    let input = input::prepare(&cache, loghub.as_deref(), args.lines)
        .map_err(|e| format!("preparing the input file: {e}"))?;
    say(format!(
        "input {}: {} lines, {:.1} MB",
        input.path.display(),
        input.lines,
        input.file_bytes as f64 / 1e6
    ));
    let broker = Broker::connect(&bootstrap)?;
    let run_id = stamp();
    let began = Instant::now();
    let rounds_n = args.rounds.max(1);
    let ctx = Ctx {
        args,
        binary: &binary,
        java: &java,
        java_plugin_path: java_plugin_path.as_deref(),
        broker: &broker,
        input: &input,
        run_id,
    };

    // Every topic is deleted at the end of the run, not between rounds: after deletions, the
    // librdkafka client that reads end offsets did not see topics created next (UnknownPartition
    // for 30 s although the broker had created them).
    let mut topics = Vec::new();
    let mut rounds = Vec::new();
    let result = (|| {
        warm_up(&ctx, &mut topics)?;
        for round in 1..=rounds_n {
            let order = order(round);
            say(format!(
                "round {round} of {rounds_n}: ceiling, then {} and {}",
                order[0].title(),
                order[1].title()
            ));
            let (ceiling, shared_topic) = ceiling(&ctx, round, &mut topics)?;
            let mut figures = HashMap::new();
            for kind in order {
                figures.insert(
                    kind.label(),
                    measure(&ctx, kind, round, &shared_topic, &mut topics)?,
                );
            }
            rounds.push(Round {
                order,
                ceiling,
                java: figures.remove("java").unwrap_or_default(),
                tributary: figures.remove("tributary").unwrap_or_default(),
            });
        }
        Ok::<_, String>(())
    })();
    delete_topics(&broker, &topics);
    result?;
    let took = began.elapsed();

    let java_median = Figures::median(&rounds.iter().map(|r| &r.java).collect::<Vec<_>>());
    let trib_median = Figures::median(&rounds.iter().map(|r| &r.tributary).collect::<Vec<_>>());
    let ceiling = Ceiling {
        producer_rps: median_f64(
            &rounds
                .iter()
                .map(|r| r.ceiling.producer_rps)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(0.0),
        consumer_rps: median_f64(
            &rounds
                .iter()
                .map(|r| r.ceiling.consumer_rps)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(0.0),
    };
    let table = render(&args.connect_version, &java_median, &trib_median, ceiling);
    println!("Median of {} round(s):", rounds.len());
    print!("{}", table.text());
    println!();
    println!("Each round:");
    print!("{}", per_round(&rounds).text());
    println!();
    print!("{}", table.markdown());
    println!();
    for line in notes(&ctx, &rounds, took) {
        println!("{line}");
    }
    Ok(())
}

/// What every measurement needs.
struct Ctx<'a> {
    args: &'a Args,
    binary: &'a Path,
    java: &'a JavaCmd,
    /// The Java worker's `plugin.path` (connect-file) on releases without connect-file.
    java_plugin_path: Option<&'a str>,
    broker: &'a Broker,
    input: &'a InputFile,
    run_id: u128,
}

impl Ctx<'_> {
    /// The worker properties of group `group` (every worker of both runtimes uses these).
    fn worker_props(&self, group: &str) -> Vec<(String, String)> {
        let mut props = worker::distributed_properties(self.broker.bootstrap(), group);
        for (k, v) in props.iter_mut() {
            if k == "offset.storage.partitions" {
                *v = self.args.offset_partitions.to_string();
            }
        }
        props
    }

    /// The value of worker property `key` (as every worker gets it).
    fn worker_prop(&self, key: &str) -> String {
        self.worker_props("g")
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .unwrap_or_else(|| "default".into())
    }
}

/// Deletes `topics` (reporting, not failing on, errors).
fn delete_topics(broker: &Broker, topics: &[String]) {
    if !topics.is_empty() {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        broker.delete_topics(&names);
    }
}

/// The notes printed under the tables: what produced the figures.
fn notes(ctx: &Ctx<'_>, rounds: &[Round], took: Duration) -> Vec<String> {
    let args = ctx.args;
    let orders: Vec<String> = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "round {}: {} then {}",
                i + 1,
                r.order[0].title(),
                r.order[1].title()
            )
        })
        .collect();
    let warmup = args.warmup_lines.min(ctx.input.lines);
    vec![
        format!(
            "rounds: {}, each cell the median of the rounds (ratios are ratios of medians); \
             the ceiling first in every round, then the runtimes in alternating order ({}).",
            rounds.len(),
            orders.join("; ")
        ),
        if warmup > 0 {
            format!(
                "warm-up: {warmup} lines produced to and consumed from a warm-up topic before \
                 round 1."
            )
        } else {
            "warm-up: none (--warmup-lines 0).".into()
        },
        format!(
            "input: {} lines ({:.1} MB) of {} log lines ({}).",
            ctx.input.lines,
            ctx.input.file_bytes as f64 / 1e6,
            ctx.input.origin,
            if ctx.input.origin == "loghub" {
                "loghub sample logs, numbered"
            } else {
                "no loghub files found"
            }
        ),
        format!(
            "Java: Connect {}{} (jars from Maven Central), JVM started as connect-distributed.sh \
             does: heap {} ({}), {}; log level WARN (herder and REST server INFO).",
            args.connect_version,
            if ctx.java_plugin_path.is_some() {
                " with connect-file 4.1.1 on its plugin.path"
            } else {
                ""
            },
            ctx.java.heap.join(" "),
            if jvm_size(&args.java_heap) == jvm_size("2G") {
                "Connect's start-script default"
            } else {
                "--java-heap"
            },
            KAFKA_JVM_OPTS.join(" ")
        ),
        format!(
            "workers: distributed, one group per runtime and round; offsets topic {} partitions, \
             status topic {}, config topic 1, replication factor 1; offset.flush.interval.ms={}; \
             connect.protocol left at its default (sessioned); String converters.",
            args.offset_partitions,
            ctx.worker_prop("status.storage.partitions"),
            ctx.worker_prop("offset.flush.interval.ms")
        ),
        format!(
            "memory: VmRSS of the worker process (for Java, the JVM itself), read {} s after \
             ready with no connectors.",
            args.idle_secs
        ),
        "throughput: source = first record seen in a fresh 1-partition topic → every line seen \
         (end offset polled every 5 ms); sink = first byte seen in the output file → file \
         complete (size polled every 5 ms); both sinks read the topic the raw producer wrote \
         in the same round."
            .into(),
        "ceiling: a plain librdkafka producer (Tributary's source-producer settings) and a plain \
         consumer (its sink-consumer settings, writing the file through a 64 KiB buffer), timed \
         by the same polling as the runtime rows."
            .into(),
        format!(
            "restart: median of {} restarts per round; broker {} (same broker for everything); \
             whole run {:.1} min.",
            args.restarts.max(1),
            ctx.broker.bootstrap(),
            took.as_secs_f64() / 60.0
        ),
    ]
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "n/a".into())
}

fn fmt_ms(v: f64) -> String {
    format!("{v:.0} ms")
}

fn fmt_rps(v: f64) -> String {
    format!("{v:.0} rec/s")
}

fn fmt_mib(v: f64) -> String {
    format!("{v:.0} MiB")
}

fn fmt_stopped(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0} of {JOIN_TASKS}")
    } else {
        format!("{v:.1} of {JOIN_TASKS}")
    }
}

fn render(version: &str, j: &Figures, t: &Figures, ceiling: Ceiling) -> Table {
    let java = format!("Java Connect {version}");
    let mut table = Table::new(&[
        "measure",
        &java,
        "Tributary",
        "Tributary advantage",
        "librdkafka ceiling",
    ]);
    let ratio = |a: Option<f64>, b: Option<f64>, f: fn(f64, f64) -> String| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => f(a, b),
        _ => "n/a".into(),
    };
    table.row(
        "idle worker RSS",
        vec![
            opt(j.idle_rss_mib, fmt_mib),
            opt(t.idle_rss_mib, fmt_mib),
            ratio(j.idle_rss_mib, t.idle_rss_mib, |a, b| {
                if a >= b {
                    format!("{:.1}x less", a / b)
                } else {
                    format!("{:.1}x more", b / a)
                }
            }),
            "".into(),
        ],
    );
    let time_row = |table: &mut Table, label: &str, a: Option<f64>, b: Option<f64>| {
        table.row(
            label,
            vec![
                opt(a, fmt_ms),
                opt(b, fmt_ms),
                ratio(a, b, |a, b| {
                    if a >= b {
                        format!("{:.1}x faster", a / b)
                    } else {
                        format!("{:.1}x slower", b / a)
                    }
                }),
                "".into(),
            ],
        )
    };
    time_row(
        &mut table,
        "start → ready (REST + joined)",
        j.ready_ms,
        t.ready_ms,
    );
    let rate_row = |table: &mut Table, label: &str, a: Option<f64>, b: Option<f64>, c: String| {
        table.row(
            label,
            vec![
                opt(a, fmt_rps),
                opt(b, fmt_rps),
                ratio(a, b, |a, b| format!("{:.2}x", b / a)),
                c,
            ],
        )
    };
    rate_row(
        &mut table,
        "FileStreamSource throughput",
        j.source_rps,
        t.source_rps,
        format!("{} (producer)", fmt_rps(ceiling.producer_rps)),
    );
    rate_row(
        &mut table,
        "FileStreamSink throughput",
        j.sink_rps,
        t.sink_rps,
        format!("{} (consumer)", fmt_rps(ceiling.consumer_rps)),
    );
    time_row(
        &mut table,
        "connector create → all tasks RUNNING",
        j.create_running_ms,
        t.create_running_ms,
    );
    time_row(
        &mut table,
        "connector create → all tasks RUNNING, 3 workers (3 tasks)",
        j.create_running_three_ms,
        t.create_running_three_ms,
    );
    time_row(
        &mut table,
        "KIP-745 restart → RUNNING",
        j.restart_ms,
        t.restart_ms,
    );
    table.row(
        "tasks stopped when a 2nd worker joins (sessioned)",
        vec![
            opt(j.join_stopped, fmt_stopped),
            opt(t.join_stopped, fmt_stopped),
            "".into(),
            "".into(),
        ],
    );
    table
}

/// Every round's figures, one row per runtime and round, with the ceiling's.
fn per_round(rounds: &[Round]) -> Table {
    let mut table = Table::new(&[
        "round",
        "idle RSS",
        "start → ready",
        "source",
        "sink",
        "create → RUNNING",
        "create, 3 workers",
        "restart",
        "stopped on join",
    ]);
    for (i, r) in rounds.iter().enumerate() {
        table.row(
            format!("{} ceiling", i + 1),
            vec![
                "".into(),
                "".into(),
                fmt_rps(r.ceiling.producer_rps),
                fmt_rps(r.ceiling.consumer_rps),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
            ],
        );
        for (pos, kind) in r.order.iter().enumerate() {
            let f = match kind {
                Kind::Java => &r.java,
                Kind::Tributary => &r.tributary,
            };
            table.row(
                format!(
                    "{} {} ({})",
                    i + 1,
                    kind.title(),
                    if pos == 0 { "1st" } else { "2nd" }
                ),
                vec![
                    opt(f.idle_rss_mib, fmt_mib),
                    opt(f.ready_ms, fmt_ms),
                    opt(f.source_rps, fmt_rps),
                    opt(f.sink_rps, fmt_rps),
                    opt(f.create_running_ms, fmt_ms),
                    opt(f.create_running_three_ms, fmt_ms),
                    opt(f.restart_ms, fmt_ms),
                    opt(f.join_stopped, fmt_stopped),
                ],
            );
        }
    }
    table
}

/// Polls `progress` every [`POLL`] until it reaches `target`; returns the time from the first
/// poll that saw a non-zero value to the first that saw `target` or more. The runtimes' rows
/// and the ceiling are timed by this one function, so they share their start and end events.
fn time_to_complete(
    what: &str,
    target: u64,
    timeout: Duration,
    mut progress: impl FnMut() -> Result<u64, String>,
) -> Result<Duration, String> {
    let mut first = None;
    let deadline = Instant::now() + timeout;
    loop {
        let now = progress()?;
        if now > 0 && first.is_none() {
            first = Some(Instant::now());
        }
        if now >= target {
            return Ok(first.map(|t| t.elapsed()).unwrap_or_default());
        }
        if Instant::now() > deadline {
            return Err(format!("{what}: {now} of {target} after {timeout:?}"));
        }
        std::thread::sleep(POLL);
    }
}

/// Records/s of `lines` records over `took`.
fn per_sec(lines: u64, took: Duration) -> f64 {
    lines as f64 / took.as_secs_f64().max(1e-3)
}

/// The end offset of `topic` as a count (0 while it cannot be read).
fn topic_records(broker: &Broker, topic: &str) -> u64 {
    broker.try_end_offset(topic).unwrap_or(0).max(0) as u64
}

/// The size of `path` (0 while it does not exist).
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The configuration Tributary derives for a source task's producer and a sink task's consumer
/// from the worker properties of group `group`.
fn client_configs(ctx: &Ctx<'_>, group: &str) -> Result<(ClientConfig, ClientConfig), String> {
    let cfg = WorkerConfig::parse(
        WorkerMode::Distributed,
        ctx.worker_props(group)
            .into_iter()
            .collect::<HashMap<_, _>>(),
        "worker.properties",
    )
    .map_err(|e| e.0)?;
    Ok((
        source_producer_config(&cfg, "sbs-raw", 0, HashMap::new()).map_err(|e| e.to_string())?,
        sink_consumer_config(&cfg, group, 0, HashMap::new()).map_err(|e| e.to_string())?,
    ))
}

/// Reads `topic` from its beginning with `config` and writes each value and a newline to `out`
/// until `lines` records are read; returns the records read.
fn consume_to_file(
    config: &ClientConfig,
    topic: &str,
    lines: u64,
    out: &Path,
) -> Result<u64, String> {
    let consumer: BaseConsumer = config
        .create()
        .map_err(|e| format!("creating the raw consumer: {e}"))?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let file = File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut writer = BufWriter::with_capacity(WRITE_BUFFER, file);
    let mut n = 0u64;
    let deadline = Instant::now() + Duration::from_secs(600);
    while n < lines {
        if Instant::now() > deadline {
            return Err(format!("raw consumer: {n} of {lines} records from {topic}"));
        }
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                writer
                    .write_all(m.payload().unwrap_or_default())
                    .and_then(|()| writer.write_all(b"\n"))
                    .map_err(|e| format!("{}: {e}", out.display()))?;
                n += 1;
                if m.offset() + 1 >= lines as i64 {
                    break;
                }
            }
            Some(Err(e)) => say(format!("raw consumer: {e}")),
            None => {}
        }
    }
    writer
        .flush()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(n)
}

/// Warms the broker up: the raw producer writes `--warmup-lines` lines to a warm-up topic and
/// the raw consumer reads them back. Nothing is timed.
fn warm_up(ctx: &Ctx<'_>, topics: &mut Vec<String>) -> Result<(), String> {
    let lines = ctx.args.warmup_lines.min(ctx.input.lines);
    if lines == 0 {
        return Ok(());
    }
    let group = format!("sbs-warmup-{}", ctx.run_id);
    let topic = format!("{group}-lines");
    ctx.broker.create_topic(&topic)?;
    topics.push(topic.clone());
    let (producer, consumer) = client_configs(ctx, &group)?;
    say(format!(
        "warm-up: {lines} lines to {topic} and back (not measured)"
    ));
    raw::run(&producer, ctx.input, &topic, Some(lines))?;
    let dir = tempdir()?;
    consume_to_file(&consumer, &topic, lines, &dir.path().join("warmup.txt"))?;
    Ok(())
}

/// The round's ceiling: the raw producer writes the input file into a fresh topic, then the raw
/// consumer reads it back into a file; both timed by [`time_to_complete`] as the runtimes are.
/// Returns the records/s and the topic (which both runtimes' sinks then read).
fn ceiling(
    ctx: &Ctx<'_>,
    round: usize,
    topics: &mut Vec<String>,
) -> Result<(Ceiling, String), String> {
    let group = format!("sbs-raw-{}-r{round}", ctx.run_id);
    let topic = format!("{group}-lines");
    ctx.broker.create_topic(&topic)?;
    topics.push(topic.clone());
    let (producer, consumer) = client_configs(ctx, &group)?;
    let target = ctx.input.lines;

    let handle = {
        let (producer, input, topic) = (producer.clone(), ctx.input.clone(), topic.clone());
        std::thread::spawn(move || raw::run(&producer, &input, &topic, None))
    };
    let timed = time_to_complete("raw producer", target, Duration::from_secs(600), || {
        let n = topic_records(ctx.broker, &topic);
        if n < target && handle.is_finished() {
            return Err("the raw producer stopped early".into());
        }
        Ok(n)
    });
    let produced = handle
        .join()
        .map_err(|_| "the raw producer panicked".to_string())?;
    let producer_took = timed.map_err(|e| match &produced {
        Err(p) => format!("{e}: {p}"),
        Ok(_) => e,
    })?;
    produced?;
    let producer_rps = per_sec(target, producer_took);

    let dir = tempdir()?;
    let out = dir.path().join("raw-sink.txt");
    let handle = {
        let (consumer, topic, out) = (consumer.clone(), topic.clone(), out.clone());
        std::thread::spawn(move || consume_to_file(&consumer, &topic, target, &out))
    };
    let bytes = ctx.input.file_bytes;
    let timed = time_to_complete("raw consumer", bytes, Duration::from_secs(600), || {
        let n = file_len(&out);
        if n < bytes && handle.is_finished() {
            return Err("the raw consumer stopped early".into());
        }
        Ok(n)
    });
    let consumed = handle
        .join()
        .map_err(|_| "the raw consumer panicked".to_string())?;
    let consumer_took = timed.map_err(|e| match &consumed {
        Err(c) => format!("{e}: {c}"),
        Ok(_) => e,
    })?;
    consumed?;
    let consumer_rps = per_sec(target, consumer_took);
    say(format!(
        "round {round}: ceiling: producer {producer_rps:.0} rec/s, consumer {consumer_rps:.0} rec/s"
    ));
    Ok((
        Ceiling {
            producer_rps,
            consumer_rps,
        },
        topic,
    ))
}

/// A started worker of either runtime.
struct Started {
    worker: Worker,
    rest: Rest,
}

/// Spawns a worker of `kind` in group `group` in `dir` and waits until it is ready; returns it
/// with the time that took.
fn start(
    ctx: &Ctx<'_>,
    kind: Kind,
    dir: &Path,
    group: &str,
) -> Result<(Started, Duration), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut props = ctx.worker_props(group);
    let (mut w, base) = match kind {
        Kind::Tributary => {
            let mut w = Worker::spawn_distributed(ctx.binary, dir, &props)?;
            let base = w.wait_rest(Duration::from_secs(120))?;
            (w, base)
        }
        Kind::Java => {
            let port = free_port()?;
            for (k, v) in props.iter_mut() {
                if k == "listeners" {
                    *v = format!("http://127.0.0.1:{port}");
                }
            }
            props.push(("rest.advertised.host.name".into(), "127.0.0.1".into()));
            if let Some(path) = ctx.java_plugin_path {
                props.push(("plugin.path".into(), path.to_string()));
            }
            (
                ctx.java.spawn(dir, &props, false)?,
                format!("http://127.0.0.1:{port}"),
            )
        }
    };
    let rest = Rest::new(&base, Duration::from_secs(30))?;
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        w.check_alive()?;
        let health = rest.get("/health").map(|r| r.0).unwrap_or(0);
        let list = rest.get("/connectors").map(|r| r.0).unwrap_or(0);
        let joined = match kind {
            Kind::Java => true,
            Kind::Tributary => rest
                .get("/tributary/worker")
                .map(|(_, v)| v["generation"].as_i64().unwrap_or(0) > 0)
                .unwrap_or(false),
        };
        if health == 200 && list == 200 && joined {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("worker not ready; log tail:\n{}", w.log_tail(30)));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = w.started.elapsed();
    Ok((Started { worker: w, rest }, took))
}

fn status_all_running(rest: &Rest, name: &str, tasks: usize) -> Option<BTreeMap<i64, String>> {
    let (code, s) = rest.get(&format!("/connectors/{name}/status")).ok()?;
    let ts = s["tasks"].as_array()?;
    (code == 200
        && s["connector"]["state"] == "RUNNING"
        && ts.len() == tasks
        && ts.iter().all(|t| t["state"] == "RUNNING"))
    .then(|| {
        ts.iter()
            .map(|t| {
                (
                    t["id"].as_i64().unwrap_or(-1),
                    t["worker_id"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    })
}

fn wait_running(rest: &Rest, name: &str, tasks: usize, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    while status_all_running(rest, name, tasks).is_none() {
        if Instant::now() > deadline {
            let s = rest.get(&format!("/connectors/{name}/status"));
            return Err(format!("{name} not RUNNING after {timeout:?}: {s:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

fn create(rest: &Rest, name: &str, config: Value) -> Result<(), String> {
    let (code, body) = rest.send(
        "POST",
        "/connectors",
        Some(&json!({"name": name, "config": config})),
    )?;
    if code != 201 {
        return Err(format!("creating {name}: {code} {body}"));
    }
    Ok(())
}

/// Measures one runtime in round `round`; its sink reads `sink_topic` (the round's ceiling
/// topic).
fn measure(
    ctx: &Ctx<'_>,
    kind: Kind,
    round: usize,
    sink_topic: &str,
    topics: &mut Vec<String>,
) -> Result<Figures, String> {
    let label = format!("round {round}: {}", kind.label());
    let args = ctx.args;
    let broker = ctx.broker;
    let input = ctx.input;
    let dir = tempdir()?;
    let group = format!("sbs-{}-{}-r{round}", kind.label(), ctx.run_id);
    topics.extend(worker::internal_topics(&group));
    let topic = format!("{group}-lines");
    let idle_topic = format!("{group}-idle");
    broker.create_topic(&topic)?;
    broker.create_topic(&idle_topic)?;
    topics.push(topic.clone());
    topics.push(idle_topic.clone());
    // The sink's consumer group (`connect-<name>`) is new for every runtime and round, so each
    // sink reads the shared topic from its beginning.
    let sink = format!("sbs-sink-{}-{}-r{round}", kind.label(), ctx.run_id);
    let mut f = Figures::default();

    say(format!("{label}: starting worker 1"));
    let (mut w1, ready) = start(ctx, kind, &dir.path().join("w1"), &group)?;
    f.ready_ms = Some(ready.as_secs_f64() * 1e3);
    say(format!(
        "{label}: ready after {:.0} ms",
        ready.as_secs_f64() * 1e3
    ));
    std::thread::sleep(Duration::from_secs(args.idle_secs));
    f.idle_rss_mib = proc_stats::memory(w1.worker.pid()).map(|m| m.rss_kib as f64 / 1024.0);
    let rest = &w1.rest;

    // Source: create → RUNNING, then throughput.
    let t0 = Instant::now();
    create(
        rest,
        "sbs-source",
        json!({"connector.class": "FileStreamSource", "tasks.max": "1",
               "file": input.path.display().to_string(), "topic": topic}),
    )?;
    wait_running(rest, "sbs-source", 1, Duration::from_secs(120))?;
    f.create_running_ms = Some(t0.elapsed().as_secs_f64() * 1e3);
    let worker = &mut w1.worker;
    let took = time_to_complete(
        &format!("{label}: source"),
        input.lines,
        Duration::from_secs(900),
        || {
            worker.check_alive()?;
            Ok(topic_records(broker, &topic))
        },
    )?;
    f.source_rps = Some(per_sec(input.lines, took));
    say(format!(
        "{label}: source {:.0} rec/s",
        f.source_rps.unwrap_or_default()
    ));

    // Sink: first byte → whole file.
    let out = dir.path().join("sink-out.txt");
    create(
        rest,
        &sink,
        json!({"connector.class": "FileStreamSink", "tasks.max": "1",
               "file": out.display().to_string(), "topics": sink_topic}),
    )?;
    let took = time_to_complete(
        &format!("{label}: sink"),
        input.file_bytes,
        Duration::from_secs(900),
        || {
            worker.check_alive()?;
            Ok(file_len(&out))
        },
    )?;
    f.sink_rps = Some(per_sec(input.lines, took));
    say(format!(
        "{label}: sink {:.0} rec/s",
        f.sink_rps.unwrap_or_default()
    ));

    // Restarts: POST → RUNNING records of the connector and its task after the POST.
    let status_topic = format!("{group}-status");
    let watch = StatusWatch::new(broker.bootstrap(), &status_topic)?;
    let mut times = Vec::new();
    for _ in 0..args.restarts.max(1) {
        wait_running(rest, "sbs-source", 1, Duration::from_secs(60))?;
        std::thread::sleep(Duration::from_millis(500));
        watch.mark()?;
        let t0 = Instant::now();
        let (code, body) = rest.send(
            "POST",
            "/connectors/sbs-source/restart?includeTasks=true&onlyFailed=false",
            None,
        )?;
        if code != 202 {
            return Err(format!("{label}: restart answered {code} {body}"));
        }
        let (mut conn, mut task) = (false, false);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(conn && task) && Instant::now() < deadline {
            for r in watch.poll(Duration::from_millis(5)) {
                let (k, s) = (r.key, r.state);
                if s == "RUNNING" && k == "status-connector-sbs-source" {
                    conn = true;
                }
                if s == "RUNNING" && k == "status-task-sbs-source-0" {
                    task = true;
                }
            }
        }
        if conn && task {
            times.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    f.restart_ms = median_f64(&times);
    say(format!("{label}: restarts (ms) {times:.0?}"));

    // Join: 6 tasks on worker 1, then worker 2 joins.
    create(
        rest,
        "sbs-fanout",
        json!({"connector.class": "FileStreamSink", "tasks.max": "4",
               "file": dir.path().join("fanout.txt").display().to_string(), "topics": idle_topic}),
    )?;
    let jobs = [("sbs-source", 1), (sink.as_str(), 1), ("sbs-fanout", 4)];
    for (name, tasks) in jobs {
        wait_running(rest, name, tasks, Duration::from_secs(120))?;
    }
    std::thread::sleep(Duration::from_secs(2));
    watch.mark()?;
    say(format!("{label}: starting worker 2"));
    let (mut w2, _) = start(ctx, kind, &dir.path().join("w2"), &group)?;
    let mut records = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut balanced_at = None;
    loop {
        records.extend(watch.poll(Duration::from_millis(200)));
        let owners: Option<Vec<BTreeMap<i64, String>>> = jobs
            .iter()
            .map(|(c, n)| status_all_running(rest, c, *n))
            .collect();
        let spread = owners.is_some_and(|o| {
            let workers: BTreeSet<&String> = o.iter().flat_map(|m| m.values()).collect();
            workers.len() >= 2
        });
        if spread && balanced_at.is_none() {
            balanced_at = Some(Instant::now());
        }
        // Keep reading a few seconds after the spread, for late status writes.
        if balanced_at.is_some_and(|t| t.elapsed() > Duration::from_secs(5)) {
            break;
        }
        if Instant::now() > deadline {
            say(format!(
                "{label}: the cluster did not spread tasks over both workers"
            ));
            break;
        }
    }
    let stopped = records
        .iter()
        .filter(|r| r.task().is_some() && r.state == "UNASSIGNED")
        .count();
    f.join_stopped = balanced_at.map(|_| stopped as f64);
    say(format!("{label}: {stopped} task(s) stopped on join"));

    // Create on three workers: a third worker joins; once the cluster has settled (every
    // job RUNNING, then 3 s), a 3-task connector is created until its tasks are RUNNING.
    say(format!("{label}: starting worker 3"));
    let (mut w3, _) = start(ctx, kind, &dir.path().join("w3"), &group)?;
    for (name, tasks) in jobs {
        wait_running(rest, name, tasks, Duration::from_secs(120))?;
    }
    std::thread::sleep(Duration::from_secs(3));
    let t0 = Instant::now();
    create(
        rest,
        "sbs-three",
        json!({"connector.class": "FileStreamSink", "tasks.max": "3",
               "file": dir.path().join("three.txt").display().to_string(), "topics": idle_topic}),
    )?;
    wait_running(rest, "sbs-three", 3, Duration::from_secs(120))?;
    f.create_running_three_ms = Some(t0.elapsed().as_secs_f64() * 1e3);
    say(format!(
        "{label}: create on 3 workers {:.0} ms",
        f.create_running_three_ms.unwrap_or_default()
    ));

    w3.worker.terminate(Duration::from_secs(30));
    w2.worker.terminate(Duration::from_secs(30));
    w1.worker.terminate(Duration::from_secs(30));
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_which_runtime_goes_first() {
        assert_eq!(order(1), [Kind::Java, Kind::Tributary]);
        assert_eq!(order(2), [Kind::Tributary, Kind::Java]);
        assert_eq!(order(3), [Kind::Java, Kind::Tributary]);
    }

    #[test]
    fn medians_per_figure() {
        let a = Figures {
            ready_ms: Some(3.0),
            source_rps: Some(10.0),
            ..Default::default()
        };
        let b = Figures {
            ready_ms: Some(1.0),
            ..Default::default()
        };
        let c = Figures {
            ready_ms: Some(2.0),
            source_rps: Some(30.0),
            ..Default::default()
        };
        let m = Figures::median(&[&a, &b, &c]);
        assert_eq!(m.ready_ms, Some(2.0));
        assert_eq!(m.source_rps, Some(20.0));
        assert_eq!(m.sink_rps, None);
    }
}
