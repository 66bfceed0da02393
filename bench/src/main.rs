//! `standalone-throughput`: how fast a `tributary standalone` worker moves a large file into
//! Kafka with FileStreamSource, compared with a plain librdkafka producer writing the same lines
//! with the same producer settings to the same broker, plus the worker's memory (peak while
//! working, and idle with no connectors).
//!
//! One run:
//! 1. prepares the input file (cached): real loghub log lines, numbered so each is unique;
//! 2. raw ceiling: a `ThreadedProducer` with Tributary's source producer configuration reads the
//!    file line by line and produces every line to a fresh topic, then waits for all acks;
//! 3. Tributary: a release `tributary standalone` with a FileStreamSource over the file into
//!    another fresh topic, timed from the worker's start until the topic's end offset equals the
//!    line count, with its `VmRSS`/`VmHWM` sampled;
//! 4. an idle worker with no connectors, its memory measured a few seconds after its REST
//!    server is up.
//!
//! Steps 2 and 3 are repeated `--runs` times (after a warm-up of the broker) and the table shows
//! the median run; it is printed as plain text, then in Markdown at the end of stdout.
//! Progress goes to stderr. This is a measurement, not a test: nothing is asserted.

mod raw;
mod report;

use tributary_bench::{input, kafka, proc_stats, say, tempdir, worker};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use tributary_runtime::config::clients::source_producer_config;
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};

use crate::input::InputFile;
use crate::kafka::Broker;
use crate::proc_stats::{cpu_seconds, memory, RssSampler};
use crate::report::{IdleResult, Report, TributaryResult};
use crate::worker::Worker;

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "standalone-throughput",
    about = "Tributary standalone FileStreamSource throughput vs a raw librdkafka producer, and worker RSS."
)]
pub struct Args {
    /// Lines in the input file.
    #[arg(long, default_value_t = 1_000_000)]
    pub lines: u64,
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    pub bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    pub tributary: Option<PathBuf>,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub when set;
    /// otherwise the input is generated).
    #[arg(long)]
    pub loghub: Option<PathBuf>,
    /// Where the generated input file is cached (default: $TRIBUTARY_CACHE/bench, else
    /// ~/.cache/tributary/bench).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Seconds the idle worker runs before its memory is read.
    #[arg(long, default_value_t = 3)]
    pub idle_secs: u64,
    /// Give up on the Tributary run after this many seconds.
    #[arg(long, default_value_t = 900)]
    pub timeout_secs: u64,
    /// Lines the raw producer sends to a separate topic before anything is measured, to warm up
    /// the broker (0: no warm-up).
    #[arg(long, default_value_t = 200_000)]
    pub warmup_lines: u64,
    /// Measurements of each (raw, then Tributary, each on fresh topics); the table shows the
    /// median.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// An extra `key=value` line for worker.properties (repeatable), e.g.
    /// `producer.linger.ms=10`; `producer.*` settings apply to the raw producer too.
    #[arg(long = "worker-prop", value_name = "KEY=VALUE")]
    pub worker_props: Vec<String>,
    /// Keep the benchmark's topics instead of deleting them after each run.
    #[arg(long)]
    pub keep_topics: bool,
}

impl Args {
    fn bootstrap(&self) -> String {
        tributary_bench::bootstrap(self.bootstrap.as_deref())
    }

    fn tributary(&self) -> Result<PathBuf, String> {
        tributary_bench::tributary_binary(self.tributary.as_deref())
    }

    fn cache(&self) -> PathBuf {
        self.cache.clone().unwrap_or_else(|| {
            std::env::var("TRIBUTARY_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|_| {
                    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
                        .join(".cache/tributary")
                })
                .join("bench")
        })
    }
}

fn main() -> ExitCode {
    tributary_bench::exit_status("standalone-throughput", run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), String> {
    let binary = args.tributary()?;
    let bootstrap = args.bootstrap();
    let input = input::prepare(
        &args.cache(),
        input::loghub_dir(args.loghub.clone()).as_deref(),
        args.lines,
    )
    .map_err(|e| format!("preparing the input file: {e}"))?;
    say(format!(
        "input {}: {} lines, {:.1} MB of values",
        input.path.display(),
        input.lines,
        input.payload_bytes as f64 / 1e6
    ));

    let broker = Broker::connect(&bootstrap)?;
    let stamp = tributary_bench::stamp();
    let mut topics = Topics {
        created: Vec::new(),
        keep: args.keep_topics,
    };
    let result = measure(args, &binary, &broker, &input, stamp, &mut topics);
    topics.cleanup(&broker);
    let report = result?;
    print!("{}", report.text());
    println!();
    print!("{}", report.markdown());
    Ok(())
}

/// The topics a run created, deleted at the end unless they are to be kept.
struct Topics {
    created: Vec<String>,
    keep: bool,
}

impl Topics {
    /// Creates a fresh topic.
    fn create(&mut self, broker: &Broker, name: String) -> Result<String, String> {
        broker.create_topic(&name)?;
        self.created.push(name.clone());
        Ok(name)
    }

    /// Deletes the topics created so far (or names them, when kept).
    fn cleanup(&mut self, broker: &Broker) {
        if self.created.is_empty() {
            return;
        }
        let names: Vec<&str> = self.created.iter().map(String::as_str).collect();
        if self.keep {
            say(format!("kept topics {names:?}"));
        } else {
            broker.delete_topics(&names);
        }
        self.created.clear();
    }
}

fn measure(
    args: &Args,
    binary: &std::path::Path,
    broker: &Broker,
    input: &InputFile,
    stamp: u128,
    topics: &mut Topics,
) -> Result<Report, String> {
    // The raw producer uses the configuration Tributary derives from the same
    // worker.properties the Tributary runs use.
    let raw_dir = tempdir()?;
    let props = worker_props(args, broker, raw_dir.path())?;
    let worker_config = WorkerConfig::parse(
        WorkerMode::Standalone,
        props.iter().cloned().collect::<HashMap<_, _>>(),
        "worker.properties",
    )
    .map_err(|e| e.0)?;
    let producer_config = source_producer_config(&worker_config, "bench-raw", 0, HashMap::new())
        .map_err(|e| e.to_string())?;
    let mut settings: Vec<_> = producer_config
        .config_map()
        .iter()
        .filter(|(k, _)| !matches!(**k, "bootstrap.servers" | "log_level"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    settings.sort();
    say(format!("raw producer settings: {}", settings.join(" ")));
    if args.warmup_lines > 0 {
        let n = args.warmup_lines.min(input.lines);
        let topic = topics.create(broker, format!("bench-warmup-{stamp}"))?;
        say(format!("warm-up: {n} records to {topic}"));
        raw::run(&producer_config, input, &topic, Some(n))?;
        topics.cleanup(broker);
    }

    let mut raws = Vec::new();
    let mut tributaries = Vec::new();
    for run in 1..=args.runs.max(1) {
        let raw_topic = topics.create(broker, format!("bench-raw-{stamp}-{run}"))?;
        let trib_topic = topics.create(broker, format!("bench-tributary-{stamp}-{run}"))?;
        say(format!("run {run}: raw producer to {raw_topic}"));
        let raw = raw::run(&producer_config, input, &raw_topic, None)?;
        let raw_end = broker.try_end_offset(&raw_topic)?;
        say(format!(
            "run {run}: raw: {} records acknowledged in {:.2} s (end offset {raw_end})",
            raw.records,
            raw.elapsed.as_secs_f64()
        ));
        raws.push(raw);
        tributaries.push(run_tributary(args, binary, broker, input, &trib_topic)?);
        topics.cleanup(broker);
    }

    let idle = run_idle(args, binary, broker)?;

    Ok(Report {
        input: input.clone(),
        bootstrap: broker.bootstrap().to_string(),
        worker_props: args.worker_props.clone(),
        raw: raws,
        tributary: tributaries,
        idle,
    })
}

/// The benchmark's worker configuration with offsets in `dir`, plus `--worker-prop` lines.
fn worker_props(args: &Args, broker: &Broker, dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut props = worker::worker_properties(broker.bootstrap(), dir);
    for p in &args.worker_props {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("--worker-prop {p}: expected KEY=VALUE"))?;
        props.retain(|(key, _)| key != k.trim());
        props.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(props)
}

fn run_tributary(
    args: &Args,
    binary: &std::path::Path,
    broker: &Broker,
    input: &InputFile,
    topic: &str,
) -> Result<TributaryResult, String> {
    let dir = tempdir()?;
    let props = worker_props(args, broker, dir.path())?;
    let source = worker::source_properties("bench-source", input, topic);
    say(format!(
        "tributary: {} standalone worker.properties source.properties (topic {topic})",
        binary.display()
    ));
    let mut w = Worker::spawn(binary, dir.path(), &props, &[("source.properties", source)])?;
    let sampler = RssSampler::start(w.pid(), Duration::from_millis(20));
    let timeout = Duration::from_secs(args.timeout_secs);
    let target = input.lines as i64;
    let mut first_record = None;
    let mut last_report = Instant::now();
    let outcome = loop {
        if let Err(e) = w.check_alive() {
            break Err(e);
        }
        let end = broker.try_end_offset(topic).unwrap_or(0);
        if end > 0 && first_record.is_none() {
            first_record = Some(w.started.elapsed());
        }
        if end >= target {
            break Ok((w.started.elapsed(), end));
        }
        if w.started.elapsed() > timeout {
            break Err(format!(
                "only {end} of {target} records after {timeout:?}; log tail:\n{}",
                w.log_tail(30)
            ));
        }
        if last_report.elapsed() >= Duration::from_secs(2) {
            say(format!(
                "tributary: {:6.1} s  {end}/{target} records",
                w.started.elapsed().as_secs_f64()
            ));
            last_report = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mem = memory(w.pid()).unwrap_or_default();
    let cpu = cpu_seconds(&w.pid().to_string()).unwrap_or(0.0);
    let sampled_peak = sampler.finish();
    w.terminate(Duration::from_secs(60));
    let (elapsed, end) = outcome?;
    let final_end = broker.try_end_offset(topic).unwrap_or(end);
    if final_end != target {
        say(format!(
            "tributary: warning: end offset {final_end} after stopping, expected {target}"
        ));
    }
    say(format!(
        "tributary: {end} records in {:.2} s (first record after {:.2} s)",
        elapsed.as_secs_f64(),
        first_record.unwrap_or_default().as_secs_f64()
    ));
    Ok(TributaryResult {
        elapsed,
        first_record: first_record.unwrap_or_default(),
        records: end as u64,
        peak_rss_kib: sampled_peak.max(mem.hwm_kib),
        cpu_seconds: cpu,
    })
}

fn run_idle(args: &Args, binary: &std::path::Path, broker: &Broker) -> Result<IdleResult, String> {
    let dir = tempdir()?;
    let props = worker_props(args, broker, dir.path())?;
    say(format!(
        "idle: worker with no connectors, memory read {} s after its REST server is up",
        args.idle_secs
    ));
    let mut w = Worker::spawn(binary, dir.path(), &props, &[])?;
    w.wait_rest(Duration::from_secs(60))?;
    std::thread::sleep(Duration::from_secs(args.idle_secs));
    w.check_alive()?;
    let mem = memory(w.pid()).ok_or("the idle worker vanished")?;
    w.terminate(Duration::from_secs(30));
    Ok(IdleResult {
        rss_kib: mem.rss_kib,
        hwm_kib: mem.hwm_kib,
        after: Duration::from_secs(args.idle_secs),
    })
}
