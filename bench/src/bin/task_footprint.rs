//! `task-footprint` (issue #43): what a slow source task costs a worker, in threads and memory,
//! for a blocking native task (FlakySource, whose `poll` sleeps on its thread) and an async
//! native task (VerifiableSource, whose throughput wait is a timer on the worker's runtime),
//! both at 1 record/s per task, against a real Kafka broker.
//!
//! For each kind, a fresh `tributary distributed` worker (its own group) joins and idles
//! `--idle-secs`; its RSS and threads are read (the idle worker). Then `--connectors`
//! connectors of `--tasks` tasks each are created; once every task is RUNNING the worker runs
//! them for `--settle-secs`, and RSS and threads are read again. The table gives, per task, the
//! threads and KiB above the idle worker, and the goals (≤ 0.2 threads and ≤ 0.3 MiB a
//! task). A measurement, not a test: nothing is asserted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use tributary_bench::cluster::{connector_status, create_connector, wait_every};
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats::{memory, thread_names, threads};
use tributary_bench::rest::Rest;
use tributary_bench::table::Table;
use tributary_bench::worker::{distributed_properties, internal_topics, Worker};
use tributary_bench::{say, stamp, tempdir};

#[derive(Parser, Debug)]
#[command(
    name = "task-footprint",
    about = "Threads and memory a slow source task costs a worker: blocking (FlakySource) and async (VerifiableSource) native tasks at 1 record/s."
)]
struct Args {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    tributary: Option<PathBuf>,
    /// Connectors per kind.
    #[arg(long, default_value_t = 10)]
    connectors: usize,
    /// `tasks.max` of each connector.
    #[arg(long, default_value_t = 10)]
    tasks: usize,
    /// Seconds the joined worker idles before its idle figures are read.
    #[arg(long, default_value_t = 10)]
    idle_secs: u64,
    /// Seconds the tasks run (all RUNNING) before the loaded figures are read.
    #[arg(long, default_value_t = 20)]
    settle_secs: u64,
    /// Give up on any wait after this many seconds.
    #[arg(long, default_value_t = 120)]
    timeout_secs: u64,
}

/// A kind of task measured.
#[derive(Clone, Copy)]
enum Kind {
    Blocking,
    Async,
}

impl Kind {
    fn title(self) -> &'static str {
        match self {
            Kind::Blocking => "blocking (FlakySource)",
            Kind::Async => "async (VerifiableSource)",
        }
    }

    /// The `POST /connectors` body of connector `name` writing to `topic` at 1 record/s a task.
    fn connector(self, name: &str, topic: &str, tasks: usize) -> Value {
        let config = match self {
            Kind::Blocking => json!({
                "connector.class": "FlakySource",
                "records.per.second": "1",
            }),
            Kind::Async => json!({
                "connector.class": "VerifiableSource",
                "throughput": "1",
            }),
        };
        let mut config = config.as_object().cloned().unwrap_or_default();
        config.insert("tasks.max".into(), tasks.to_string().into());
        config.insert("topic".into(), topic.into());
        json!({"name": name, "config": config})
    }
}

/// One kind's figures.
struct Footprint {
    idle_rss_kib: u64,
    idle_threads: u64,
    rss_kib: u64,
    threads: u64,
    tasks: usize,
}

impl Footprint {
    fn threads_per_task(&self) -> f64 {
        (self.threads as f64 - self.idle_threads as f64) / self.tasks as f64
    }
    fn kib_per_task(&self) -> f64 {
        (self.rss_kib as f64 - self.idle_rss_kib as f64) / self.tasks as f64
    }
}

fn main() -> ExitCode {
    tributary_bench::exit_status("task-footprint", run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.tributary.as_deref())?;
    let bootstrap = tributary_bench::bootstrap(args.bootstrap.as_deref());
    let broker = Broker::connect(&bootstrap)?;
    let mut results = Vec::new();
    for kind in [Kind::Blocking, Kind::Async] {
        let mut topics = Vec::new();
        let measured = measure(args, kind, &binary, &bootstrap, &mut topics);
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        broker.delete_topics(&names);
        results.push((kind, measured?));
    }
    let mut table = Table::new(&[
        "kind",
        "tasks",
        "idle RSS MiB",
        "idle threads",
        "RSS MiB",
        "threads",
        "threads / task",
        "KiB / task",
    ]);
    for (kind, f) in &results {
        table.row(
            kind.title(),
            vec![
                f.tasks.to_string(),
                format!("{:.1}", f.idle_rss_kib as f64 / 1024.0),
                f.idle_threads.to_string(),
                format!("{:.1}", f.rss_kib as f64 / 1024.0),
                f.threads.to_string(),
                format!("{:.2}", f.threads_per_task()),
                format!("{:.0}", f.kib_per_task()),
            ],
        );
    }
    table.row(
        "goal (issue #43)",
        vec![
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "≤ 0.20".into(),
            "≤ 307".into(),
        ],
    );
    print!("{}", table.text());
    println!();
    print!("{}", table.markdown());
    Ok(())
}

fn measure(
    args: &Args,
    kind: Kind,
    binary: &std::path::Path,
    bootstrap: &str,
    topics: &mut Vec<String>,
) -> Result<Footprint, String> {
    let timeout = Duration::from_secs(args.timeout_secs);
    let group = format!("footprint-{}", stamp());
    topics.extend(internal_topics(&group));
    let dir = tempdir()?;
    let props = distributed_properties(bootstrap, &group);
    let mut worker = Worker::spawn_distributed_quiet(binary, dir.path(), &props)?;
    let url = worker.wait_rest(timeout)?;
    let rest = Rest::new(&url, Duration::from_secs(10))?;
    say(format!(
        "{}: worker at {url}, waiting until it joined",
        kind.title()
    ));
    wait_every(
        "the worker to join",
        timeout,
        Duration::from_millis(50),
        || {
            worker.check_alive()?;
            Ok(match rest.get("/tributary/worker") {
                Ok((200, v)) if v["generation"].as_i64().unwrap_or(0) > 0 => Some(()),
                _ => None,
            })
        },
    )?;
    let pid = worker.pid();
    std::thread::sleep(Duration::from_secs(args.idle_secs));
    let idle = memory(pid).ok_or("the worker is gone")?;
    let idle_threads = threads(pid).ok_or("the worker is gone")?;
    say(format!(
        "idle: {} KiB, {idle_threads} threads; creating {} connectors x {} tasks",
        idle.rss_kib, args.connectors, args.tasks
    ));
    let names: Vec<String> = (0..args.connectors)
        .map(|i| format!("{group}-c{i}"))
        .collect();
    for name in &names {
        let topic = format!("{name}-topic");
        topics.push(topic.clone());
        create_connector(&rest, &kind.connector(name, &topic, args.tasks))?;
    }
    let began = Instant::now();
    wait_every(
        "every task RUNNING",
        timeout,
        Duration::from_millis(200),
        || {
            worker.check_alive()?;
            for name in &names {
                match connector_status(&rest, name)? {
                    Some(s) if s.all_running(args.tasks) => {}
                    _ => return Ok(None),
                }
            }
            Ok(Some(()))
        },
    )?;
    say(format!(
        "every task RUNNING after {:.1} s; running {} s",
        began.elapsed().as_secs_f64(),
        args.settle_secs
    ));
    std::thread::sleep(Duration::from_secs(args.settle_secs));
    let loaded = memory(pid).ok_or("the worker is gone")?;
    let loaded_threads = threads(pid).ok_or("the worker is gone")?;
    let names: Vec<String> = thread_names(pid)
        .into_iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect();
    say(format!("threads by name: {}", names.join(", ")));
    worker.terminate(Duration::from_secs(30));
    Ok(Footprint {
        idle_rss_kib: idle.rss_kib,
        idle_threads,
        rss_kib: loaded.rss_kib,
        threads: loaded_threads,
        tasks: args.connectors * args.tasks,
    })
}
