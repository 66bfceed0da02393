//! `side-by-side`: Apache Kafka Connect 4.1.1 (Java, run by `scripts/connect-java`) and Tributary
//! measured in the same run against the same broker, as distributed workers with the same
//! worker settings, printed as ONE table with ratios and the raw librdkafka ceiling.
//!
//! For each runtime, one after the other:
//! 1. start → ready: from spawning a worker until its REST API answers `GET /health` with 200
//!    and `GET /connectors` with 200 (the worker has joined its group);
//! 2. idle RSS: the worker process's `VmRSS` (Java: the JVM's) `--idle-secs` after ready;
//! 3. create → RUNNING: `POST /connectors` of a FileStreamSource until the connector and its
//!    task report RUNNING;
//! 4. FileStreamSource throughput: records/s from the first record in the topic until the
//!    topic holds every line of the input file (loghub-derived, or generated without loghub);
//! 5. FileStreamSink throughput: a FileStreamSink over that topic; records/s from the first
//!    byte of its output file until the file is as long as the input;
//! 6. restart latency: `POST /connectors/{c}/restart?includeTasks=true` (KIP-745) until the
//!    status topic holds RUNNING records of the connector and its task written after the POST
//!    (median of `--restarts`);
//! 7. join: a second worker joins the cluster running 6 tasks (source, sink and a 4-task sink);
//!    tasks stopped = task status records `UNASSIGNED` written to the status topic until the
//!    cluster is balanced again (both runtimes default to `connect.protocol=sessioned`).
//!
//! The ceiling: a raw librdkafka producer writes the same file into a fresh topic, and a raw
//! consumer reads the source topic back. Progress goes to stderr; the table (text, then
//! Markdown) to stdout. This is a measurement, not a test: nothing is asserted.

#[allow(dead_code)] // cpu and peak RSS of the raw producer are not in this table
#[path = "../raw.rs"]
mod raw;

use tributary_bench::{input, kafka, proc_stats, say, stamp, table::Table, tempdir, worker};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};
use tributary_bench::rest::Rest;
use tributary_runtime::config::clients::source_producer_config;
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};

use crate::input::InputFile;
use crate::kafka::Broker;
use crate::worker::Worker;

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "side-by-side",
    about = "Java Kafka Connect 4.1.1 and Tributary measured in the same run on the same broker."
)]
struct Args {
    /// Lines in the input file.
    #[arg(long, default_value_t = 300_000)]
    lines: u64,
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    tributary: Option<PathBuf>,
    /// The script that runs a Java Connect worker (default: scripts/connect-java of this
    /// workspace).
    #[arg(long)]
    connect_java: Option<PathBuf>,
    /// Java heap (`CONNECT_JAVA_HEAP`).
    #[arg(long, default_value = "256m")]
    java_heap: String,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub).
    #[arg(long)]
    loghub: Option<PathBuf>,
    /// Where the generated input file is cached (default: $TRIBUTARY_CACHE/bench).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Seconds an idle worker runs after ready before its RSS is read.
    #[arg(long, default_value_t = 5)]
    idle_secs: u64,
    /// Restarts measured per runtime (the table shows the median).
    #[arg(long, default_value_t = 3)]
    restarts: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("side-by-side: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Which runtime a measurement is of.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Java,
    Tributary,
}

/// One runtime's figures.
#[derive(Default, Debug)]
struct Figures {
    ready: Option<Duration>,
    idle_rss_kib: Option<u64>,
    create_running: Option<Duration>,
    source_rps: Option<f64>,
    sink_rps: Option<f64>,
    restart: Option<Duration>,
    join_stopped: Option<(usize, usize)>,
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.tributary.as_deref())?;
    let script = args.connect_java.clone().unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/connect-java")
    });
    let status = Command::new(&script)
        .arg("fetch")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !status.success() {
        return Err("scripts/connect-java fetch failed (needs java and mvn)".into());
    }
    let bootstrap = tributary_bench::bootstrap(args.bootstrap.as_deref());
    let shared = std::env::var("TRIBUTARY_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let loghub = args
        .loghub
        .clone()
        .unwrap_or_else(|| shared.join("data/loghub"));
    let cache = args.cache.clone().unwrap_or_else(|| {
        std::env::var("TRIBUTARY_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
                    .join(".cache/tributary")
            })
            .join("bench")
    });
    let input = input::prepare(&cache, &loghub, args.lines)
        .map_err(|e| format!("preparing the input file: {e}"))?;
    say(format!(
        "input {}: {} lines, {:.1} MB",
        input.path.display(),
        input.lines,
        input.file_bytes as f64 / 1e6
    ));
    let broker = Broker::connect(&bootstrap)?;
    let run_id = stamp();
    let mut topics = Vec::new();

    let result = (|| {
        let java = measure(
            args,
            Kind::Java,
            &binary,
            &script,
            &broker,
            &input,
            run_id,
            &mut topics,
        )?;
        let trib = measure(
            args,
            Kind::Tributary,
            &binary,
            &script,
            &broker,
            &input,
            run_id,
            &mut topics,
        )?;
        let (raw_p, raw_c) = ceiling(&broker, &input, run_id, &mut topics)?;
        Ok::<_, String>((java, trib, raw_p, raw_c))
    })();
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    broker.delete_topics(&names);
    let (java, trib, raw_p, raw_c) = result?;
    let table = render(args, &java, &trib, raw_p, raw_c);
    print!("{}", table.text());
    println!();
    print!("{}", table.markdown());
    println!();
    println!(
        "input: {} lines ({:.1} MB) of {} log lines; Java heap -Xmx{}; broker {}; one run, same broker, Java first.",
        input.lines,
        input.file_bytes as f64 / 1e6,
        input.origin,
        args.java_heap,
        broker.bootstrap()
    );
    Ok(())
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "n/a".into())
}

fn render(args: &Args, j: &Figures, t: &Figures, raw_p: f64, raw_c: f64) -> Table {
    let _ = args;
    let mut table = Table::new(&[
        "measure",
        "Java Connect 4.1.1",
        "Tributary",
        "Tributary advantage",
        "librdkafka ceiling",
    ]);
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    let lower = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.1}x less", a / b),
        _ => "n/a".into(),
    };
    let faster = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}x", b / a),
        _ => "n/a".into(),
    };
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    table.row(
        "idle worker RSS",
        vec![
            opt(j.idle_rss_kib, |k| format!("{:.0} MiB", k as f64 / 1024.0)),
            opt(t.idle_rss_kib, |k| format!("{:.0} MiB", k as f64 / 1024.0)),
            lower(
                j.idle_rss_kib.map(|v| v as f64),
                t.idle_rss_kib.map(|v| v as f64),
            ),
            "".into(),
        ],
    );
    let time_row = |table: &mut Table, label: &str, a: Option<Duration>, b: Option<Duration>| {
        table.row(
            label,
            vec![
                opt(a, ms),
                opt(b, ms),
                match (secs(a), secs(b)) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:.1}x faster", a / b),
                    _ => "n/a".into(),
                },
                "".into(),
            ],
        )
    };
    time_row(
        &mut table,
        "start → ready (REST + joined)",
        j.ready,
        t.ready,
    );
    let rps = |v: f64| format!("{:.0} rec/s", v);
    table.row(
        "FileStreamSource throughput",
        vec![
            opt(j.source_rps, rps),
            opt(t.source_rps, rps),
            faster(j.source_rps, t.source_rps),
            format!("{} (producer)", rps(raw_p)),
        ],
    );
    table.row(
        "FileStreamSink throughput",
        vec![
            opt(j.sink_rps, rps),
            opt(t.sink_rps, rps),
            faster(j.sink_rps, t.sink_rps),
            format!("{} (consumer)", rps(raw_c)),
        ],
    );
    time_row(
        &mut table,
        "connector create → all tasks RUNNING",
        j.create_running,
        t.create_running,
    );
    time_row(
        &mut table,
        "KIP-745 restart → RUNNING (median)",
        j.restart,
        t.restart,
    );
    let stopped = |v: Option<(usize, usize)>| opt(v, |(s, n)| format!("{s} of {n}"));
    table.row(
        "tasks stopped when a 2nd worker joins (sessioned)",
        vec![
            stopped(j.join_stopped),
            stopped(t.join_stopped),
            "".into(),
            "".into(),
        ],
    );
    table
}

/// A started worker of either runtime.
struct Started {
    worker: Worker,
    rest: Rest,
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Spawns a worker of `kind` in group `group` in `dir` and waits until it is ready; returns it
/// with the time that took.
fn start(
    args: &Args,
    kind: Kind,
    binary: &Path,
    script: &Path,
    dir: &Path,
    bootstrap: &str,
    group: &str,
) -> Result<(Started, Duration), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut props = worker::distributed_properties(bootstrap, group);
    let (mut w, base) = match kind {
        Kind::Tributary => {
            let mut w = Worker::spawn_distributed(binary, dir, &props)?;
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
            let text: String = props.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
            let file = dir.join("worker.properties");
            std::fs::write(&file, text).map_err(|e| e.to_string())?;
            let log = dir.join("worker.log");
            let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
            let err = out.try_clone().map_err(|e| e.to_string())?;
            let started = Instant::now();
            let child = Command::new(script)
                .arg(&file)
                .env("CONNECT_JAVA_HEAP", &args.java_heap)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| format!("{}: {e}", script.display()))?;
            (
                Worker {
                    child,
                    log,
                    started,
                },
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

/// Reads a group's status topic from a marked position.
struct StatusWatch {
    consumer: BaseConsumer,
    topic: String,
}

impl StatusWatch {
    fn new(bootstrap: &str, topic: &str) -> Result<StatusWatch, String> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("{topic}-watch-{}", stamp()))
            .set("enable.auto.commit", "false")
            .set("log_level", "3")
            .create()
            .map_err(|e| e.to_string())?;
        Ok(StatusWatch {
            consumer,
            topic: topic.to_string(),
        })
    }

    /// Assigns every partition at its current end.
    fn mark(&self) -> Result<(), String> {
        let md = self
            .consumer
            .fetch_metadata(Some(&self.topic), Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        let mut tpl = TopicPartitionList::new();
        for t in md.topics() {
            for p in t.partitions() {
                let (_, high) = self
                    .consumer
                    .fetch_watermarks(&self.topic, p.id(), Duration::from_secs(10))
                    .map_err(|e| e.to_string())?;
                tpl.add_partition_offset(&self.topic, p.id(), Offset::Offset(high))
                    .map_err(|e| e.to_string())?;
            }
        }
        self.consumer.assign(&tpl).map_err(|e| e.to_string())
    }

    /// Status records (key, state) read within `wait`.
    fn poll(&self, wait: Duration) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Some(Ok(m)) = self.consumer.poll(Duration::from_millis(5)) {
                let key = m
                    .key()
                    .map(|k| String::from_utf8_lossy(k).to_string())
                    .unwrap_or_default();
                let state = m
                    .payload()
                    .and_then(|p| serde_json::from_slice::<Value>(p).ok())
                    .and_then(|v| v["state"].as_str().map(str::to_string))
                    .unwrap_or_default();
                out.push((key, state));
            }
        }
        out
    }
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

#[allow(clippy::too_many_arguments)]
fn measure(
    args: &Args,
    kind: Kind,
    binary: &Path,
    script: &Path,
    broker: &Broker,
    input: &InputFile,
    run_id: u128,
    topics: &mut Vec<String>,
) -> Result<Figures, String> {
    let label = match kind {
        Kind::Java => "java",
        Kind::Tributary => "tributary",
    };
    let dir = tempdir()?;
    let group = format!("sbs-{label}-{run_id}");
    topics.extend(worker::internal_topics(&group));
    let topic = format!("sbs-{label}-{run_id}-lines");
    let idle_topic = format!("sbs-{label}-{run_id}-idle");
    broker.create_topic(&topic)?;
    broker.create_topic(&idle_topic)?;
    topics.push(topic.clone());
    topics.push(idle_topic.clone());
    let mut f = Figures::default();

    say(format!("{label}: starting worker 1"));
    let (mut w1, ready) = start(
        args,
        kind,
        binary,
        script,
        &dir.path().join("w1"),
        broker.bootstrap(),
        &group,
    )?;
    f.ready = Some(ready);
    say(format!(
        "{label}: ready after {:.0} ms",
        ready.as_secs_f64() * 1e3
    ));
    std::thread::sleep(Duration::from_secs(args.idle_secs));
    f.idle_rss_kib = proc_stats::memory(w1.worker.pid()).map(|m| m.rss_kib);
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
    f.create_running = Some(t0.elapsed());
    let target = input.lines as i64;
    let mut first = None;
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let end = broker.try_end_offset(&topic).unwrap_or(0);
        if end > 0 && first.is_none() {
            first = Some(Instant::now());
        }
        if end >= target {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{label}: source wrote {end} of {target} records"));
        }
        w1.worker.check_alive()?;
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = first.map(|t| t.elapsed()).unwrap_or_default();
    f.source_rps = Some(input.lines as f64 / took.as_secs_f64().max(1e-3));
    say(format!(
        "{label}: source {:.0} rec/s",
        f.source_rps.unwrap()
    ));

    // Sink: first byte → whole file.
    let out = dir.path().join("sink-out.txt");
    create(
        rest,
        "sbs-sink",
        json!({"connector.class": "FileStreamSink", "tasks.max": "1",
               "file": out.display().to_string(), "topics": topic}),
    )?;
    let mut first = None;
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let len = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        if len > 0 && first.is_none() {
            first = Some(Instant::now());
        }
        if len >= input.file_bytes {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{label}: sink wrote {len} of {} bytes",
                input.file_bytes
            ));
        }
        w1.worker.check_alive()?;
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = first.map(|t| t.elapsed()).unwrap_or_default();
    f.sink_rps = Some(input.lines as f64 / took.as_secs_f64().max(1e-3));
    say(format!("{label}: sink {:.0} rec/s", f.sink_rps.unwrap()));

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
            for (k, s) in watch.poll(Duration::from_millis(5)) {
                if s == "RUNNING" && k == "status-connector-sbs-source" {
                    conn = true;
                }
                if s == "RUNNING" && k == "status-task-sbs-source-0" {
                    task = true;
                }
            }
        }
        if conn && task {
            times.push(t0.elapsed());
        }
    }
    times.sort();
    f.restart = times.get(times.len() / 2).copied();
    say(format!("{label}: restarts {times:?}"));

    // Join: 6 tasks on worker 1, then worker 2 joins.
    create(
        rest,
        "sbs-fanout",
        json!({"connector.class": "FileStreamSink", "tasks.max": "4",
               "file": dir.path().join("fanout.txt").display().to_string(), "topics": idle_topic}),
    )?;
    wait_running(rest, "sbs-fanout", 4, Duration::from_secs(120))?;
    wait_running(rest, "sbs-sink", 1, Duration::from_secs(120))?;
    wait_running(rest, "sbs-source", 1, Duration::from_secs(120))?;
    std::thread::sleep(Duration::from_secs(2));
    watch.mark()?;
    say(format!("{label}: starting worker 2"));
    let (mut w2, _) = start(
        args,
        kind,
        binary,
        script,
        &dir.path().join("w2"),
        broker.bootstrap(),
        &group,
    )?;
    let mut records = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut balanced_at = None;
    loop {
        records.extend(watch.poll(Duration::from_millis(200)));
        let owners: Option<Vec<BTreeMap<i64, String>>> =
            [("sbs-source", 1), ("sbs-sink", 1), ("sbs-fanout", 4)]
                .iter()
                .map(|(c, n)| status_all_running(rest, c, *n))
                .collect();
        let spread = owners.is_some_and(|o| {
            let workers: std::collections::BTreeSet<&String> =
                o.iter().flat_map(|m| m.values()).collect();
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
        .filter(|(k, s)| k.starts_with("status-task-") && s == "UNASSIGNED")
        .count();
    f.join_stopped = balanced_at.map(|_| (stopped, 6));
    say(format!("{label}: {stopped} task(s) stopped on join"));

    w2.worker.terminate(Duration::from_secs(30));
    w1.worker.terminate(Duration::from_secs(30));
    let _ = HashMap::<(), ()>::new();
    Ok(f)
}

/// The raw producer over the input file into a fresh topic, and a raw consumer reading it back:
/// records/s of each.
fn ceiling(
    broker: &Broker,
    input: &InputFile,
    run_id: u128,
    topics: &mut Vec<String>,
) -> Result<(f64, f64), String> {
    let topic = format!("sbs-raw-{run_id}");
    broker.create_topic(&topic)?;
    topics.push(topic.clone());
    let dir = tempdir()?;
    let props = worker::worker_properties(broker.bootstrap(), dir.path());
    let cfg = WorkerConfig::parse(
        WorkerMode::Standalone,
        props.into_iter().collect::<HashMap<_, _>>(),
        "worker.properties",
    )
    .map_err(|e| e.0)?;
    let producer = source_producer_config(&cfg, "bench-raw", 0, HashMap::new());
    say("ceiling: raw producer");
    let r = raw::run(&producer, input, &topic, None)?;
    let prod_rps = r.records as f64 / r.elapsed.as_secs_f64();
    say("ceiling: raw consumer");
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", format!("sbs-raw-{run_id}"))
        .set("enable.auto.commit", "false")
        .set("log_level", "3")
        .create()
        .map_err(|e| e.to_string())?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, Offset::Beginning)
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let target = input.lines as i64;
    let mut n = 0i64;
    let mut first = None;
    let deadline = Instant::now() + Duration::from_secs(600);
    while n < target && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            first.get_or_insert_with(Instant::now);
            n += 1;
            if m.offset() + 1 >= target {
                break;
            }
        }
    }
    let took = first.map(|t| t.elapsed()).unwrap_or_default();
    Ok((prod_rps, n as f64 / took.as_secs_f64().max(1e-3)))
}
