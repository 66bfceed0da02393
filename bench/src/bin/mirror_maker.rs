//! MirrorMaker 2 from cluster A to cluster B (issue #44), in one run on two real brokers (the
//! benchmark's broker as B, a second one started with `scripts/kafka` as A):
//!
//! - **Tributary native**: `tributary mirror-maker mm2.properties` (dedicated mode, the native
//!   connectors);
//! - **Java MirrorMaker 2**: Apache's `org.apache.kafka.connect.mirror.MirrorMaker` on the same
//!   file (Connect 4.4.0's jars and `connect-mirror` 4.3.1 from Maven Central, the JVM started
//!   as `connect-mirror-maker.sh` starts it: `-Xms256M -Xmx2G` and `kafka-run-class.sh`'s
//!   options);
//! - **Tributary hosting Apache's classes**: the same dedicated mode with `connect-mirror` on
//!   `plugin.path` and `tributary.plugins.prefer.java` naming the three classes;
//! - **raw limit**: one process consuming A with librdkafka and producing each record to B.
//!
//! Each round preloads `--records` records (8-byte keys, `--value-bytes` values) into a topic of
//! `--partitions` partitions on A, then runs each contender in turn (a fresh source alias, so a
//! fresh remote topic) and measures records/s from the first record on B to the last (end
//! offsets polled every 50 ms: startup is left out), the CPU time the process spent over the
//! same span per million records (the raw limit's is the benchmark process's, its readers
//! included), the process's peak RSS, and then the
//! replication latency at a fixed rate (`--rate` records/s for `--latency-seconds`, produce on
//! A → consumed on B, from the record's timestamp, which MirrorMaker keeps): p50 and p99.
//! Prints the medians of `--rounds` rounds and the ratios to Java's and to the raw limit.
//!
//! Usage: `mirror-maker [--records N] [--partitions P] [--rounds R] [--rate N]
//! [--latency-seconds S] [--tributary PATH] [--skip-hosted] [--only raw,native,java,hosted]`
//! (`scripts/bench mirror`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::util::Timeout;
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use tributary_bench::java::JavaCmd;
use tributary_bench::proc_stats::RssSampler;
use tributary_bench::table::Table;
use tributary_bench::{say, stamp};

#[derive(Parser)]
struct Args {
    /// Records preloaded on A and replicated by each contender.
    #[arg(long, default_value_t = 1_000_000)]
    records: usize,
    /// The source topic's partitions (and the connectors' `tasks.max`).
    #[arg(long, default_value_t = 4)]
    partitions: i32,
    /// Bytes of each record's value.
    #[arg(long, default_value_t = 100)]
    value_bytes: usize,
    /// Rounds; the table shows medians.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Records/s of the latency phase.
    #[arg(long, default_value_t = 5_000)]
    rate: u64,
    /// Seconds of the latency phase.
    #[arg(long, default_value_t = 10)]
    latency_seconds: u64,
    /// The `tributary` binary (default: next to this one).
    #[arg(long)]
    tributary: Option<PathBuf>,
    /// Leave out Tributary hosting Apache's classes (it needs the Java bridge).
    #[arg(long)]
    skip_hosted: bool,
    /// Only these contenders (comma-separated: raw, native, java, hosted), e.g. to profile one;
    /// ratios to a contender left out print as NaN.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Raw,
    Native,
    Java,
    Hosted,
}

impl Contender {
    fn label(self) -> &'static str {
        match self {
            Contender::Raw => "raw limit (librdkafka consumer → producer, one process)",
            Contender::Native => "Tributary, native connectors (dedicated mode)",
            Contender::Java => "Java MirrorMaker 2 (connect-mirror-maker, -Xmx2G)",
            Contender::Hosted => "Tributary hosting Apache's classes",
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Outcome {
    records_per_s: f64,
    /// The process's CPU time (user + system) per million records replicated, from the first
    /// record on B to the last (s).
    cpu_s_per_million: f64,
    peak_rss_kib: u64,
    p50_ms: f64,
    p99_ms: f64,
}

/// A second broker for cluster A (`scripts/kafka` with its own port and directory).
struct SecondBroker {
    port: u16,
    home: PathBuf,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl SecondBroker {
    fn start(dir: &Path) -> Result<SecondBroker, String> {
        let port = tributary_testkit::faults::free_ports(2);
        let b = SecondBroker {
            port,
            home: dir.join("broker-a"),
        };
        let ok = b.script("start")?;
        if !ok {
            return Err("scripts/kafka start of cluster A's broker failed".into());
        }
        Ok(b)
    }
    fn script(&self, action: &str) -> Result<bool, String> {
        Command::new(repo().join("scripts/kafka"))
            .arg(action)
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .map_err(|e| e.to_string())
    }
    fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for SecondBroker {
    fn drop(&mut self) {
        self.script("stop").ok();
    }
}

fn producer(bootstrap: &str) -> Result<ThreadedProducer<DefaultProducerContext>, String> {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "5")
        .set("log_level", "3")
        .create()
        .map_err(|e| e.to_string())
}

/// Produces `n` records spread over `partitions` partitions of `topic`.
fn preload(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    n: usize,
    value_bytes: usize,
) -> Result<(), String> {
    let p = producer(bootstrap)?;
    let value = vec![b'x'; value_bytes];
    for i in 0..n {
        let key = (i as u64).to_be_bytes();
        let mut r = BaseRecord::<[u8], [u8]>::to(topic)
            .key(&key[..])
            .payload(&value[..])
            .partition((i % partitions as usize) as i32);
        loop {
            match p.send(r) {
                Ok(()) => break,
                Err((e, back)) => {
                    if e.rdkafka_error_code() != Some(rdkafka::types::RDKafkaErrorCode::QueueFull) {
                        return Err(e.to_string());
                    }
                    r = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }
    p.flush(Duration::from_secs(60)).map_err(|e| e.to_string())
}

/// The sum of `topic`'s end offsets on `consumer`'s cluster (0 while it does not exist).
fn records_in(consumer: &BaseConsumer, topic: &str, partitions: i32) -> i64 {
    (0..partitions)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Timeout::After(Duration::from_secs(5)))
                .map(|(_, h)| h)
                .unwrap_or(0)
        })
        .sum()
}

/// Records/s from the first record of `topic` on B to the `n`th (polled every 50 ms), and the
/// CPU seconds process `pid` (`"self"` for this one) spent per million records over the same
/// span; an error after `timeout`.
fn time_replication(
    b: &str,
    topic: &str,
    partitions: i32,
    n: usize,
    timeout: Duration,
    pid: &str,
) -> Result<(f64, f64), String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("log_level", "3")
        .create()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    let cpu = || tributary_bench::proc_stats::cpu_seconds(pid).unwrap_or(f64::NAN);
    let mut first: Option<(Instant, i64, f64)> = None;
    loop {
        let now = Instant::now();
        let count = records_in(&consumer, topic, partitions);
        if count > 0 && first.is_none() {
            first = Some((now, count, cpu()));
        }
        if count as usize >= n {
            let (t0, c0, cpu0) = first.expect("seen");
            let secs = now.duration_since(t0).as_secs_f64().max(0.001);
            let records = (count - c0).max(1) as f64;
            return Ok((records / secs, (cpu() - cpu0) * 1e6 / records));
        }
        if now > deadline {
            return Err(format!("{topic}: {count} of {n} records after {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Produces `rate` records/s to `topic` on A for `seconds` while consuming `remote` on B; the
/// latencies (ms) from each record's timestamp to its consumption on B, sorted.
fn latencies(
    a: &str,
    topic: &str,
    b: &str,
    remote: &str,
    rate: u64,
    seconds: u64,
) -> Result<Vec<f64>, String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("group.id", format!("bench-latency-{}", stamp()))
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "10")
        .set("log_level", "3")
        .create()
        .map_err(|e| e.to_string())?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(remote, 0, Offset::End)
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    // Let the assignment settle at the end before producing.
    consumer.poll(Duration::from_millis(500));
    let total = rate * seconds;
    let a = a.to_string();
    let topic_a = topic.to_string();
    let feeder = std::thread::spawn(move || -> Result<(), String> {
        let p = ClientConfig::new()
            .set("bootstrap.servers", &a)
            .set("linger.ms", "0")
            .set("log_level", "3")
            .create::<ThreadedProducer<DefaultProducerContext>>()
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        for i in 0..total {
            let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let key = i.to_be_bytes();
            p.send(
                BaseRecord::<[u8], [u8]>::to(&topic_a)
                    .key(&key[..])
                    .payload(&b"latency"[..])
                    .partition(0),
            )
            .map_err(|(e, _)| e.to_string())?;
        }
        p.flush(Duration::from_secs(30)).map_err(|e| e.to_string())
    });
    let mut out = Vec::with_capacity(total as usize);
    let deadline = Instant::now() + Duration::from_secs(seconds + 60);
    while (out.len() as u64) < total && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            if let Some(ts) = m.timestamp().to_millis() {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0);
                out.push((now - ts) as f64);
            }
        }
    }
    feeder
        .join()
        .map_err(|_| "the feeder panicked".to_string())??;
    if (out.len() as u64) < total {
        return Err(format!(
            "{remote}: {} of {total} latency records arrived",
            out.len()
        ));
    }
    out.sort_by(|x, y| x.total_cmp(y));
    Ok(out)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// The raw limit: one process, consumer on A (every partition, from the beginning) and
/// producer on B (same partition), until `n` records are through.
fn raw_copy(
    a: &str,
    topic: &str,
    b: &str,
    remote: &str,
    partitions: i32,
    n: usize,
) -> Result<(), String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", a)
        .set("group.id", format!("bench-raw-{}", stamp()))
        .set("enable.auto.commit", "false")
        .set("log_level", "3")
        .create()
        .map_err(|e| e.to_string())?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .map_err(|e| e.to_string())?;
    }
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let producer = producer(b)?;
    let mut copied = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    while copied < n && Instant::now() < deadline {
        let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) else {
            continue;
        };
        let mut r = BaseRecord::<[u8], [u8]>::to(remote).partition(m.partition());
        if let Some(k) = m.key() {
            r = r.key(k);
        }
        if let Some(v) = m.payload() {
            r = r.payload(v);
        }
        if let Some(ts) = m.timestamp().to_millis() {
            r = r.timestamp(ts);
        }
        loop {
            match producer.send(r) {
                Ok(()) => break,
                Err((_, back)) => {
                    r = back;
                    producer.poll(Duration::from_millis(1));
                }
            }
        }
        copied += 1;
    }
    producer
        .flush(Duration::from_secs(60))
        .map_err(|e| e.to_string())
}

/// `mm2.properties` for flow `alias` → `target` over topic prefix `topics`, with `extra` lines.
#[allow(clippy::too_many_arguments)]
fn mm2_file(
    dir: &Path,
    alias: &str,
    target: &str,
    a: &str,
    b: &str,
    topics: &str,
    partitions: i32,
    extra: &str,
) -> PathBuf {
    let text = format!(
        "clusters = {alias}, {target}\n{alias}.bootstrap.servers = {a}\n{target}.bootstrap.servers = {b}\n\
         {alias}->{target}.enabled = true\n{alias}->{target}.topics = {topics}\n\
         emit.heartbeats.enabled = false\ntasks.max = {partitions}\n\
         replication.factor=1\ncheckpoints.topic.replication.factor=1\nheartbeats.topic.replication.factor=1\n\
         offset-syncs.topic.replication.factor=1\noffset.storage.replication.factor=1\n\
         status.storage.replication.factor=1\nconfig.storage.replication.factor=1\n\
         refresh.topics.interval.seconds=1\nsync.topic.acls.enabled=false\n{extra}"
    );
    let path = dir.join(format!("mm2-{alias}.properties"));
    std::fs::write(&path, text).expect("writing mm2.properties");
    path
}

fn spawn(mut cmd: Command, log: &Path) -> Result<Child, String> {
    let f = std::fs::File::create(log).map_err(|e| e.to_string())?;
    cmd.stdout(f.try_clone().map_err(|e| e.to_string())?)
        .stderr(f)
        .spawn()
        .map_err(|e| e.to_string())
}

fn stop(mut child: Child) {
    // SIGTERM, then SIGKILL after 30 s.
    Command::new("kill")
        .arg(child.id().to_string())
        .status()
        .ok();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().ok();
    child.wait().ok();
}

struct Setup {
    tributary: PathBuf,
    /// The `java` binary, heap and options (`JavaCmd`'s, as `kafka-run-class.sh` sets them).
    java: JavaCmd,
    /// Apache's MirrorMaker driver's class path (`scripts/jvm-bridge mirror-maker-classpath`).
    mirror_maker_classpath: String,
    /// The worker lines that host Apache's classes (`plugin.path`, the bridge, prefer.java).
    jvm_lines: String,
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    who: Contender,
    setup: &Setup,
    dir: &Path,
    a: &str,
    b: &str,
    topic: &str,
    latency_topic: &str,
    args: &Args,
    round: usize,
) -> Result<Outcome, String> {
    // Unique per run: a flow's group is named after its aliases, and the benchmark's broker B
    // outlives runs.
    let alias = format!(
        "r{round}{}{}",
        format!("{who:?}").to_lowercase(),
        &topic[topic.len().saturating_sub(6)..]
    );
    // A latency topic of its own: no other contender's records to replicate first.
    let latency_topic = &format!("{latency_topic}{}", format!("{who:?}").to_lowercase());
    tributary_bench::kafka::Broker::connect(a)?.create_topic_partitions(latency_topic, 1, &[])?;
    let target = format!("b{}", stamp());
    let remote = format!("{alias}.{topic}");
    let remote_latency = format!("{alias}.{latency_topic}");
    if who == Contender::Raw {
        let broker = tributary_bench::kafka::Broker::connect(b)?;
        broker.create_topic_partitions(&remote, args.partitions, &[])?;
        broker.create_topic_partitions(&remote_latency, 1, &[])?;
        let (a2, t2, b2, r2) = (
            a.to_string(),
            topic.to_string(),
            b.to_string(),
            remote.clone(),
        );
        let (partitions, n) = (args.partitions, args.records);
        let copier = std::thread::spawn(move || raw_copy(&a2, &t2, &b2, &r2, partitions, n));
        let sampler = RssSampler::start(std::process::id(), Duration::from_millis(100));
        let (rate, cpu) = time_replication(
            b,
            &remote,
            args.partitions,
            args.records,
            Duration::from_secs(600),
            "self",
        )?;
        copier
            .join()
            .map_err(|_| "raw copy panicked".to_string())??;
        let peak = sampler.finish();
        // Latency: the same consumer → producer loop over the latency topic, at the fixed rate.
        let (a2, t2, b2, r2) = (
            a.to_string(),
            latency_topic.to_string(),
            b.to_string(),
            remote_latency.clone(),
        );
        let total = (args.rate * args.latency_seconds) as usize;
        let copier = std::thread::spawn(move || raw_copy(&a2, &t2, &b2, &r2, 1, total));
        let l = latencies(
            a,
            latency_topic,
            b,
            &remote_latency,
            args.rate,
            args.latency_seconds,
        )?;
        copier
            .join()
            .map_err(|_| "raw copy panicked".to_string())??;
        return Ok(Outcome {
            records_per_s: rate,
            cpu_s_per_million: cpu,
            peak_rss_kib: peak,
            p50_ms: percentile(&l, 0.5),
            p99_ms: percentile(&l, 0.99),
        });
    }
    let topics = format!("{topic},{latency_topic}");
    let log = dir.join(format!("{alias}.log"));
    let child = match who {
        Contender::Native => {
            let file = mm2_file(dir, &alias, &target, a, b, &topics, args.partitions, "");
            let mut cmd = Command::new(&setup.tributary);
            cmd.arg("mirror-maker").arg(&file).current_dir(dir);
            spawn(cmd, &log)?
        }
        Contender::Hosted => {
            let extra: String = setup
                .jvm_lines
                .lines()
                .map(|l| format!("{target}.{l}\n"))
                .collect();
            let file = mm2_file(dir, &alias, &target, a, b, &topics, args.partitions, &extra);
            let mut cmd = Command::new(&setup.tributary);
            cmd.arg("mirror-maker").arg(&file).current_dir(dir);
            spawn(cmd, &log)?
        }
        Contender::Java => {
            let java = &setup.java;
            let file = mm2_file(dir, &alias, &target, a, b, &topics, args.partitions, "");
            let mut cmd = Command::new(&java.java);
            cmd.args(&java.heap)
                .args(&java.jvm)
                .arg("-cp")
                .arg(&setup.mirror_maker_classpath)
                .arg("org.apache.kafka.connect.mirror.MirrorMaker")
                .arg(&file)
                .current_dir(dir);
            spawn(cmd, &log)?
        }
        Contender::Raw => unreachable!(),
    };
    let pid = child.id();
    let sampler = RssSampler::start(pid, Duration::from_millis(100));
    let measured = time_replication(
        b,
        &remote,
        args.partitions,
        args.records,
        Duration::from_secs(900),
        &pid.to_string(),
    )
    .and_then(|rate| {
        let l = latencies(
            a,
            latency_topic,
            b,
            &remote_latency,
            args.rate,
            args.latency_seconds,
        )?;
        Ok((rate, l))
    });
    let peak = sampler.finish();
    stop(child);
    let ((rate, cpu), l) =
        measured.map_err(|e| format!("{}: {e}; log {}", who.label(), log.display()))?;
    Ok(Outcome {
        records_per_s: rate,
        cpu_s_per_million: cpu,
        peak_rss_kib: peak,
        p50_ms: percentile(&l, 0.5),
        p99_ms: percentile(&l, 0.99),
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|x, y| x.total_cmp(y));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn run(args: Args) -> Result<(), String> {
    let b = tributary_bench::bootstrap(None);
    let dir = tributary_bench::tempdir()?;
    let tributary = tributary_bench::tributary_binary(args.tributary.as_deref())?;
    say("starting cluster A's broker");
    let broker_a = SecondBroker::start(dir.path())?;
    let a = broker_a.bootstrap();
    let java = JavaCmd::for_benchmark(None, "2G", dir.path())?;
    let (classpath, plugin_path) =
        tributary_testkit::java_bridge().ok_or("scripts/jvm-bridge failed (java, javac, mvn)")?;
    let out = Command::new(repo().join("scripts/jvm-bridge"))
        .arg("mirror-maker-classpath")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err("scripts/jvm-bridge mirror-maker-classpath failed".into());
    }
    let mirror_maker_classpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let classes = "org.apache.kafka.connect.mirror.MirrorSourceConnector,org.apache.kafka.connect.mirror.MirrorCheckpointConnector,org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
    let setup = Setup {
        tributary,
        java,
        mirror_maker_classpath,
        jvm_lines: format!(
            "plugin.path={plugin_path}\ntributary.jvm.classpath={classpath}\ntributary.plugins.prefer.java={classes}\n"
        ),
    };
    let mut contenders = vec![Contender::Raw, Contender::Native, Contender::Java];
    if !args.skip_hosted {
        contenders.push(Contender::Hosted);
    }
    if !args.only.is_empty() {
        contenders.retain(|c| {
            args.only
                .iter()
                .any(|o| o.eq_ignore_ascii_case(&format!("{c:?}")))
        });
        if contenders.is_empty() {
            return Err(format!(
                "--only {}: no contender of raw, native, java, hosted",
                args.only.join(",")
            ));
        }
    }
    let mut results: Vec<(Contender, Vec<Outcome>)> =
        contenders.iter().map(|c| (*c, Vec::new())).collect();
    for round in 0..args.rounds {
        let topic = format!("mmbench{}", stamp());
        let latency_topic = format!("{topic}lat");
        let broker = tributary_bench::kafka::Broker::connect(&a)?;
        broker.create_topic_partitions(&topic, args.partitions, &[])?;
        say(format!(
            "round {}: preloading {} records into {topic} on A",
            round + 1,
            args.records
        ));
        preload(&a, &topic, args.partitions, args.records, args.value_bytes)?;
        // Alternate the order of the contenders between rounds.
        let mut order = contenders.clone();
        if round % 2 == 1 {
            order.reverse();
        }
        for who in order {
            say(format!("round {}: {}", round + 1, who.label()));
            let o = run_one(
                who,
                &setup,
                dir.path(),
                &a,
                &b,
                &topic,
                &latency_topic,
                &args,
                round,
            )?;
            say(format!(
                "  {:.0} records/s, {:.1} CPU s per million records, peak RSS {:.1} MiB, latency p50 {:.0} ms, p99 {:.0} ms",
                o.records_per_s,
                o.cpu_s_per_million,
                o.peak_rss_kib as f64 / 1024.0,
                o.p50_ms,
                o.p99_ms
            ));
            results
                .iter_mut()
                .find(|(c, _)| *c == who)
                .expect("listed")
                .1
                .push(o);
        }
    }
    let med = |c: Contender, f: fn(&Outcome) -> f64| {
        median(
            results
                .iter()
                .find(|(x, _)| *x == c)
                .map(|(_, v)| v.iter().map(f).collect())
                .unwrap_or_default(),
        )
    };
    let java_rate = med(Contender::Java, |o| o.records_per_s);
    let raw_rate = med(Contender::Raw, |o| o.records_per_s);
    let java_rss = med(Contender::Java, |o| o.peak_rss_kib as f64);
    let java_cpu = med(Contender::Java, |o| o.cpu_s_per_million);
    let java_p99 = med(Contender::Java, |o| o.p99_ms);
    let mut t = Table::new(&[
        "",
        "records/s",
        "× Java",
        "% of raw",
        "CPU s / 1M records",
        "÷ Java's CPU",
        "peak RSS",
        "÷ Java's RSS",
        "p50 ms",
        "p99 ms",
        "p99 ÷ Java's",
    ]);
    for (c, _) in &results {
        let rate = med(*c, |o| o.records_per_s);
        let rss = med(*c, |o| o.peak_rss_kib as f64);
        let p99 = med(*c, |o| o.p99_ms);
        let cpu = med(*c, |o| o.cpu_s_per_million);
        t.row(
            c.label(),
            vec![
                format!("{rate:.0}"),
                format!("{:.2}", rate / java_rate),
                format!("{:.0} %", 100.0 * rate / raw_rate),
                format!("{cpu:.1}"),
                format!("{:.2}", cpu / java_cpu),
                format!("{:.1} MiB", rss / 1024.0),
                format!("{:.3}", rss / java_rss),
                format!("{:.0}", med(*c, |o| o.p50_ms)),
                format!("{p99:.0}"),
                format!("{:.2}", p99 / java_p99),
            ],
        );
    }
    println!(
        "\nMirrorMaker 2, A → B: {} records of {} value bytes in {} partitions, median of {} rounds; latency at {} records/s for {} s\n",
        args.records, args.value_bytes, args.partitions, args.rounds, args.rate, args.latency_seconds
    );
    println!("{}", t.text());
    println!("{}", t.markdown());
    Ok(())
}

fn main() -> std::process::ExitCode {
    tributary_bench::exit_status("mirror-maker", run(Args::parse()))
}
