//! `task-footprint` (issue #43): what a slow task costs a worker, in threads and memory, for a
//! blocking native source task (FlakySource, whose `poll` sleeps on its thread), an async native
//! source task (VerifiableSource, whose throughput wait is a timer on the worker's runtime) and
//! an async native sink task (VerifiableSink, reading a topic of one partition per task that
//! this benchmark writes 1 record/s to per partition), all at 1 record/s per task, against a
//! real Kafka broker.
//!
//! For each kind, a fresh `tributary distributed` worker (its own group) joins and idles
//! `--idle-secs`; its RSS and threads are read (the idle worker). Then `--connectors`
//! connectors of `--tasks` tasks each are created; once every task is RUNNING the worker runs
//! them for `--settle-secs`, and RSS and threads are read again. The table gives, per task, the
//! threads and KiB above the idle worker, and the goals (≤ 0.2 threads and ≤ 0.3 MiB a
//! task). A measurement, not a test: nothing is asserted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;
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
    about = "Threads and memory a slow task costs a worker: blocking (FlakySource) and async (VerifiableSource) native source tasks and async native sink tasks (VerifiableSink) at 1 record/s."
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
    Sink,
}

impl Kind {
    fn title(self) -> &'static str {
        match self {
            Kind::Blocking => "blocking (FlakySource)",
            Kind::Async => "async (VerifiableSource)",
            Kind::Sink => "async sink (VerifiableSink)",
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
                "topic": topic,
            }),
            Kind::Sink => json!({
                "connector.class": "VerifiableSink",
                "topics": topic,
            }),
        };
        let mut config = config.as_object().cloned().unwrap_or_default();
        config.insert("tasks.max".into(), tasks.to_string().into());
        if let Kind::Blocking = self {
            config.insert("topic".into(), topic.into());
        }
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
    for kind in [Kind::Blocking, Kind::Async, Kind::Sink] {
        let mut topics = Vec::new();
        let measured = measure(args, kind, &binary, &broker, &mut topics);
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

/// A producer thread writing one record a second to each partition of some topics, until
/// dropped.
struct Feed {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Feed {
    fn start(bootstrap: &str, topics: Vec<String>, partitions: i32) -> Result<Feed, String> {
        let producer: BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("linger.ms", "5")
            .create()
            .map_err(|e| format!("the feed's producer: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                let mut next = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    for topic in &topics {
                        for p in 0..partitions {
                            let value = n.to_string();
                            let record = BaseRecord::<(), String>::to(topic)
                                .partition(p)
                                .payload(&value);
                            if let Err((e, _)) = producer.send(record) {
                                say(format!("feed: {e}"));
                            }
                        }
                    }
                    n += 1;
                    next += Duration::from_secs(1);
                    while Instant::now() < next && !stop.load(Ordering::Relaxed) {
                        producer.poll(Duration::from_millis(100));
                    }
                }
                producer.flush(Duration::from_secs(5)).ok();
            })
        };
        Ok(Feed {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

fn measure(
    args: &Args,
    kind: Kind,
    binary: &std::path::Path,
    broker: &Broker,
    topics: &mut Vec<String>,
) -> Result<Footprint, String> {
    let bootstrap = broker.bootstrap();
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
    let mut sink_topics = Vec::new();
    for name in &names {
        let topic = format!("{name}-topic");
        topics.push(topic.clone());
        if let Kind::Sink = kind {
            broker.create_topic_partitions(&topic, args.tasks as i32, &[])?;
            sink_topics.push(topic.clone());
        }
        create_connector(&rest, &kind.connector(name, &topic, args.tasks))?;
    }
    // The sink tasks' input: 1 record/s to every partition, from this process.
    let feed = (!sink_topics.is_empty())
        .then(|| Feed::start(bootstrap, sink_topics, args.tasks as i32))
        .transpose()?;
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
    drop(feed);
    Ok(Footprint {
        idle_rss_kib: idle.rss_kib,
        idle_threads,
        rss_kib: loaded.rss_kib,
        threads: loaded_threads,
        tasks: args.connectors * args.tasks,
    })
}
