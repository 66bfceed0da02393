//! `sink-memory` (issue #34): what librdkafka's prefetch settings cost a sink task. A topic is
//! filled with a backlog, then a standalone worker's FileStreamSink (to `/dev/null`) drains it
//! with one consumer per task, once per variant of the sink consumers' settings (worker
//! `consumer.*` keys): peak resident memory of the worker (sampled `VmRSS`) and records/s from
//! the sink's first commit past a tenth of the backlog until its committed offsets reach the end
//! of the topic. Medians of `--rounds`. A measurement, not a test.
//!
//! librdkafka prefetches into a queue per consumer until it holds `queued.min.messages`
//! (100,000 by default) or `queued.max.messages.kbytes` (64 MiB), so a sink task that falls
//! behind can hold tens of MiB of records Java's consumer would leave on the broker (it keeps
//! one fetch, `max.partition.fetch.bytes` = 1 MiB per partition).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::util::Timeout;
use rdkafka::ClientConfig;
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats::RssSampler;
use tributary_bench::table::Table;
use tributary_bench::worker::{worker_properties, Worker};
use tributary_bench::{bootstrap, exit_status, say, stamp, tempdir, tributary_binary};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "sink-memory",
    about = "Peak memory and throughput of FileStreamSink tasks draining a backlog, for several \
             settings of the sink consumers' prefetch queue."
)]
struct Args {
    /// Records in the backlog.
    #[arg(long, default_value_t = 4_000_000)]
    records: u64,
    /// Bytes of each record's value.
    #[arg(long, default_value_t = 200)]
    record_size: usize,
    /// Sink tasks (and partitions of the topic).
    #[arg(long, default_value_t = 4)]
    tasks: u32,
    /// Rounds per variant; the table shows medians.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// A variant: `label` or `label:key=value,key=value` (worker `consumer.<key>` settings);
    /// repeatable. Default: librdkafka's defaults and three smaller queues.
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    tributary: Option<std::path::PathBuf>,
}

/// The default variants: librdkafka's defaults, then bounds on the queue by messages and by
/// size.
const DEFAULT_VARIANTS: &[&str] = &[
    "librdkafka defaults",
    "queued.min.messages=20000:queued.min.messages=20000",
    "queued.max.messages.kbytes=8192:queued.max.messages.kbytes=8192",
    "queued.max.messages.kbytes=4096:queued.max.messages.kbytes=4096",
    "queued.max.messages.kbytes=2048:queued.max.messages.kbytes=2048",
];

/// One variant: its label and the worker's `consumer.*` settings.
struct Variant {
    label: String,
    settings: Vec<(String, String)>,
}

fn parse_variant(spec: &str) -> Result<Variant, String> {
    let (label, rest) = match spec.rsplit_once(':') {
        Some((l, r)) if r.contains('=') => (l, r),
        _ => (spec, ""),
    };
    let mut settings = Vec::new();
    for kv in rest.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("variant {spec:?}: {kv:?} is not key=value"))?;
        settings.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(Variant {
        label: label.to_string(),
        settings,
    })
}

/// Fills `topic` (`partitions` partitions) with `records` values of `size` bytes, round robin.
fn fill(
    bootstrap: &str,
    topic: &str,
    partitions: u32,
    records: u64,
    size: usize,
) -> Result<(), String> {
    let producer: ThreadedProducer<_> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("queue.buffering.max.kbytes", "262144")
        .set("compression.type", "none")
        .create()
        .map_err(|e| format!("producer: {e}"))?;
    let value: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
    for i in 0..records {
        let partition = (i % u64::from(partitions)) as i32;
        let mut record: BaseRecord<'_, (), [u8]> = BaseRecord::to(topic)
            .payload(&value[..])
            .partition(partition);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    record = r;
                    producer.poll(Duration::from_millis(10));
                }
            }
        }
    }
    producer
        .flush(Timeout::After(Duration::from_secs(120)))
        .map_err(|e| format!("flushing the backlog: {e}"))
}

/// Creates `topic` with `partitions` partitions.
fn create_topic(broker: &Broker, topic: &str, partitions: u32) -> Result<(), String> {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    let admin: AdminClient<_> = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .create()
        .map_err(|e| format!("admin client: {e}"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let new = NewTopic::new(topic, partitions as i32, TopicReplication::Fixed(1));
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in rt
        .block_on(admin.create_topics([&new], &opts))
        .map_err(|e| format!("creating {topic}: {e}"))?
    {
        r.map_err(|(t, e)| format!("creating {t}: {e}"))?;
    }
    Ok(())
}

/// Records committed by consumer group `group` on `topic`'s partitions (0 for a partition
/// without a commit).
fn committed(consumer: &BaseConsumer, topic: &str, partitions: u32) -> Result<u64, String> {
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p as i32);
    }
    let got = consumer
        .committed_offsets(tpl, Timeout::After(Duration::from_secs(10)))
        .map_err(|e| format!("committed offsets: {e}"))?;
    Ok(got
        .elements()
        .iter()
        .map(|e| match e.offset() {
            Offset::Offset(o) if o > 0 => o as u64,
            _ => 0,
        })
        .sum())
}

/// One drain: (peak RSS MiB, records/s).
fn drain(
    args: &Args,
    binary: &std::path::Path,
    broker: &Broker,
    topic: &str,
    variant: &Variant,
    round: usize,
) -> Result<(f64, f64), String> {
    let dir = tempdir()?;
    let name = format!("{topic}-sink-{round}-{}", stamp());
    let mut props = worker_properties(broker.bootstrap(), dir.path());
    props.push(("offset.flush.interval.ms".into(), "200".into()));
    props.extend(
        variant
            .settings
            .iter()
            .map(|(k, v)| (format!("consumer.{k}"), v.clone())),
    );
    let connector = format!(
        "name={name}\nconnector.class=FileStreamSink\ntasks.max={}\ntopics={topic}\nfile=/dev/null\n",
        args.tasks
    );
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", format!("connect-{name}"))
        .create()
        .map_err(|e| format!("consumer: {e}"))?;
    let mut worker = Worker::spawn(
        binary,
        dir.path(),
        &props,
        &[("sink.properties", connector)],
    )?;
    let sampler = RssSampler::start(worker.pid(), Duration::from_millis(20));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(600);
    // Timed from the first commit past a tenth of the backlog to the last: the consumer
    // group's first join (and the broker's initial rebalance delay) stay out of the rate.
    let mut tenth: Option<(Instant, u64)> = None;
    let outcome = loop {
        if let Err(e) = worker.check_alive() {
            break Err(e);
        }
        match committed(&consumer, topic, args.tasks) {
            Ok(n) if n >= args.records => {
                let (t0, n0) = tenth.unwrap_or((started, 0));
                break Ok((t0.elapsed(), args.records - n0));
            }
            Ok(n) if tenth.is_none() && n >= args.records / 10 => {
                tenth = Some((Instant::now(), n));
            }
            Ok(_) => {}
            Err(e) => break Err(e),
        }
        if Instant::now() > deadline {
            break Err(format!(
                "the sink did not drain the backlog: {}",
                worker.log_tail(20)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    worker.terminate(Duration::from_secs(20));
    let peak_kib = sampler.finish();
    let (took, records) = outcome?;
    Ok((
        peak_kib as f64 / 1024.0,
        records as f64 / took.as_secs_f64(),
    ))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn run(args: Args) -> Result<(), String> {
    let binary = tributary_binary(args.tributary.as_deref())?;
    let broker = Broker::connect(&bootstrap(args.bootstrap.as_deref()))?;
    let specs: Vec<String> = if args.variants.is_empty() {
        DEFAULT_VARIANTS.iter().map(|s| s.to_string()).collect()
    } else {
        args.variants.clone()
    };
    let variants = specs
        .iter()
        .map(|s| parse_variant(s))
        .collect::<Result<Vec<_>, _>>()?;
    let topic = format!("sink-memory-{}", stamp());
    create_topic(&broker, &topic, args.tasks)?;
    say(format!(
        "filling {topic} ({} partitions) with {} records of {} bytes",
        args.tasks, args.records, args.record_size
    ));
    fill(
        broker.bootstrap(),
        &topic,
        args.tasks,
        args.records,
        args.record_size,
    )?;
    let mut table = Table::new(&["sink consumer settings", "peak RSS", "records/s"]);
    let mut results = Vec::new();
    for v in &variants {
        let mut peaks = Vec::new();
        let mut rates = Vec::new();
        for round in 0..args.rounds.max(1) {
            let (peak, rate) = drain(&args, &binary, &broker, &topic, v, round)?;
            say(format!(
                "{}: round {}: peak {peak:.0} MiB, {rate:.0} records/s",
                v.label,
                round + 1
            ));
            peaks.push(peak);
            rates.push(rate);
        }
        results.push((v.label.clone(), median(peaks), median(rates)));
    }
    let base_rate = results.first().map(|r| r.2).unwrap_or(1.0);
    for (label, peak, rate) in &results {
        table.row(
            label.clone(),
            vec![
                format!("{peak:.0} MiB"),
                format!("{rate:.0} ({:.0}%)", rate / base_rate * 100.0),
            ],
        );
    }
    broker.delete_topics(&[&topic]);
    println!("{}", table.text());
    println!("{}", table.markdown());
    println!(
        "{} sink tasks (FileStreamSink to /dev/null, String converters) draining {} records of {} bytes from {} partitions; standalone worker, release build; peak = largest VmRSS sampled every 20 ms; records/s from the first commit past a tenth of the backlog until the committed offsets reach the end (offset.flush.interval.ms=200); medians of {} rounds; the percentage is of the first variant.",
        args.tasks, args.records, args.record_size, args.tasks, args.rounds
    );
    Ok(())
}

fn main() -> ExitCode {
    exit_status("sink-memory", run(Args::parse()))
}
