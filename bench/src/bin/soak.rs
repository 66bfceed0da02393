//! `soak`: a distributed cluster under a steady load while faults come on a schedule, measured
//! for what a production cluster cares about: records lost (must be 0), duplicates, recovery
//! time after each fault, and memory growth.
//!
//! Setup: a broker of the benchmark's own (`scripts/kafka` on free ports, data in a temporary
//! directory), `--workers` Tributary workers (release build, `connect.protocol=sessioned`,
//! `scheduled.rebalance.max.delay.ms` from `--delay-ms`) running one VerifiableSource
//! connector with `--tasks` tasks at `--rate` records/s each.
//!
//! Schedule: every `--fault-every-secs` a fault, alternately
//! 1. SIGKILL of one worker (round robin; the leader included), restarted at once, and
//! 2. the broker stopped and started again;
//!
//! for `--faults` faults. Recovery time of a fault: from the fault until every task is RUNNING
//! again and the topic's end offset has grown past where it was (records flow again).
//!
//! At the end the connector is paused and the topic read whole. Per task, the sequence numbers
//! 0..=max must all be there: a missing one is a lost record; one seen more than once is a
//! duplicate (Connect's at-least-once source delivery allows them after a crash, within the
//! offset flush window). RSS: every worker's `VmRSS` is sampled each second; growth is the
//! last sample against the first after warm-up, per worker process lifetime.
//!
//! This is a measurement, not a test: it prints, and exits non-zero only if records were lost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use tributary_bench::cluster::{
    connector_status, create_connector, verifiable_source, wait_every, Node,
};
use tributary_bench::{proc_stats, say};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "soak",
    about = "A Tributary cluster under steady load with worker kills and broker restarts on a schedule."
)]
struct Args {
    /// Distributed workers.
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// VerifiableSource tasks.
    #[arg(long, default_value_t = 6)]
    tasks: usize,
    /// Records per second per task.
    #[arg(long, default_value_t = 500)]
    rate: u64,
    /// Faults to inject (alternately a worker SIGKILL and a broker restart).
    #[arg(long, default_value_t = 6)]
    faults: usize,
    /// Seconds between faults.
    #[arg(long, default_value_t = 40)]
    fault_every_secs: u64,
    /// `scheduled.rebalance.max.delay.ms` of the workers.
    #[arg(long, default_value_t = 5000)]
    delay_ms: u64,
    /// The `tributary` binary (default: the release build next to this one).
    #[arg(long)]
    binary: Option<PathBuf>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The benchmark's own broker.
struct OwnBroker {
    port: u16,
    home: PathBuf,
}

impl OwnBroker {
    fn run(&self, what: &str) -> Result<(), String> {
        let status = Command::new(repo_root().join("scripts/kafka"))
            .arg(what)
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .status()
            .map_err(|e| format!("scripts/kafka: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "scripts/kafka {what} failed; log: {}",
                self.home.join("kafka.log").display()
            ))
        }
    }
    fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _stopped = self.run("stop");
    }
}

fn free_port_pair() -> u16 {
    loop {
        let p = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(0);
        if p > 0 && p < 65000 && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return p;
        }
    }
}

/// Per task: how many times each sequence number was read.
fn read_sequence_numbers(bootstrap: &str, topic: &str) -> Result<BTreeMap<i64, Vec<u32>>, String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("soak-reader-{}", std::process::id()))
        .set("enable.auto.commit", "false")
        .create()
        .map_err(|e| e.to_string())?;
    let meta = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(30))
        .map_err(|e| e.to_string())?;
    let partitions: Vec<i32> = meta
        .topics()
        .first()
        .map(|t| t.partitions().iter().map(|p| p.id()).collect())
        .unwrap_or_default();
    let mut ends = BTreeMap::new();
    let mut tpl = TopicPartitionList::new();
    for p in &partitions {
        let (_, high) = consumer
            .fetch_watermarks(topic, *p, Duration::from_secs(30))
            .map_err(|e| e.to_string())?;
        ends.insert(*p, high);
        tpl.add_partition_offset(topic, *p, Offset::Beginning)
            .map_err(|e| e.to_string())?;
    }
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let mut seen: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    let mut done: BTreeMap<i32, bool> = ends.iter().map(|(p, h)| (*p, *h == 0)).collect();
    let deadline = Instant::now() + Duration::from_secs(300);
    while done.values().any(|d| !d) && Instant::now() < deadline {
        let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) else {
            continue;
        };
        let parse =
            |b: Option<&[u8]>| -> Option<i64> { std::str::from_utf8(b?).ok()?.trim().parse().ok() };
        if let (Some(task), Some(seqno)) = (parse(m.key()), parse(m.payload())) {
            let counts = seen.entry(task).or_default();
            let i = seqno.max(0) as usize;
            if counts.len() <= i {
                counts.resize(i + 1, 0);
            }
            counts[i] += 1;
        }
        if m.offset() + 1 >= ends[&m.partition()] {
            done.insert(m.partition(), true);
        }
    }
    Ok(seen)
}

fn all_running(node: &Node, tasks: usize) -> bool {
    matches!(connector_status(&node.rest, "soak"), Ok(Some(s)) if s.all_running(tasks))
}

fn run(args: &Args) -> Result<bool, String> {
    let binary = args.binary.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("tributary")))
            .unwrap_or_else(|| PathBuf::from("tributary"))
    });
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let broker = OwnBroker {
        port: free_port_pair(),
        home: home.path().join("broker"),
    };
    say(format!(
        "soak: starting a broker of its own on {}",
        broker.bootstrap()
    ));
    broker.run("start")?;
    let bootstrap = broker.bootstrap();
    let group = format!("soak-{}", std::process::id());
    let topic = format!("{group}-data");
    let delay = args.delay_ms.to_string();
    let extra = [("scheduled.rebalance.max.delay.ms", delay.as_str())];
    let mut nodes: Vec<Node> = (0..args.workers)
        .map(|_| Node::spawn(&binary, &bootstrap, &group, &extra, Duration::from_secs(60)))
        .collect::<Result<_, _>>()?;
    create_connector(
        &nodes[0].rest,
        &verifiable_source("soak", &topic, args.tasks, args.rate),
    )?;
    wait_every(
        "every task RUNNING",
        Duration::from_secs(120),
        Duration::from_millis(200),
        || Ok(all_running(&nodes[0], args.tasks).then_some(())),
    )?;
    let admin: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .map_err(|e| e.to_string())?;
    let end_offset = |admin: &BaseConsumer| -> Option<i64> {
        admin
            .fetch_watermarks(&topic, 0, Duration::from_secs(5))
            .ok()
            .map(|(_, h)| h)
    };

    // RSS of each worker process, first sample after a warm-up and the latest.
    let mut rss: Vec<(u32, u64, u64)> = Vec::new();
    let sample = |nodes: &[Node], rss: &mut Vec<(u32, u64, u64)>| {
        for n in nodes {
            let pid = n.worker.pid();
            let Some(m) = proc_stats::memory(pid) else {
                continue;
            };
            match rss.iter_mut().find(|(p, _, _)| *p == pid) {
                Some(entry) => entry.2 = m.rss_kib,
                None => rss.push((pid, m.rss_kib, m.rss_kib)),
            }
        }
    };
    std::thread::sleep(Duration::from_secs(10));
    sample(&nodes, &mut rss);

    let mut recoveries: Vec<(String, f64)> = Vec::new();
    let started = Instant::now();
    for f in 0..args.faults {
        let next = Duration::from_secs(args.fault_every_secs * (f as u64 + 1));
        while started.elapsed() < next {
            sample(&nodes, &mut rss);
            std::thread::sleep(Duration::from_secs(1));
        }
        let before = end_offset(&admin).unwrap_or(0);
        let at = Instant::now();
        let what = if f % 2 == 0 {
            let victim = (f / 2) % nodes.len();
            say(format!("soak: fault {}: SIGKILL of worker {victim}", f + 1));
            let _killed = nodes[victim].worker.child.kill();
            let _reaped = nodes[victim].worker.child.wait();
            let replacement =
                Node::spawn(&binary, &bootstrap, &group, &extra, Duration::from_secs(60))?;
            nodes[victim] = replacement;
            format!("SIGKILL of worker {victim}")
        } else {
            say(format!("soak: fault {}: broker stop and start", f + 1));
            broker.run("stop")?;
            broker.run("start")?;
            "broker restart".to_string()
        };
        let recovered = wait_every(
            "recovery (every task RUNNING, records flowing)",
            Duration::from_secs(300),
            Duration::from_millis(200),
            || {
                let flowing = end_offset(&admin).is_some_and(|e| e > before);
                Ok((flowing && nodes.iter().any(|n| all_running(n, args.tasks))).then_some(()))
            },
        );
        let secs = at.elapsed().as_secs_f64();
        match recovered {
            Ok(()) => {
                say(format!("soak: recovered from {what} in {secs:.1} s"));
                recoveries.push((what, secs));
            }
            Err(e) => {
                say(format!("soak: no recovery from {what}: {e}"));
                recoveries.push((what, f64::NAN));
            }
        }
    }
    sample(&nodes, &mut rss);
    nodes[0].rest.send("PUT", "/connectors/soak/pause", None)?;
    wait_every(
        "the connector PAUSED",
        Duration::from_secs(60),
        Duration::from_millis(200),
        || {
            Ok(matches!(connector_status(&nodes[0].rest, "soak"),
            Ok(Some(s)) if s.state == "PAUSED" && s.tasks.values().all(|(t, _)| t == "PAUSED"))
            .then_some(()))
        },
    )?;
    let seen = read_sequence_numbers(&bootstrap, &topic)?;
    let (mut total, mut lost, mut dups) = (0u64, 0u64, 0u64);
    for counts in seen.values() {
        for c in counts {
            total += u64::from(*c);
            if *c == 0 {
                lost += 1;
            } else {
                dups += u64::from(c - 1);
            }
        }
    }
    for n in &mut nodes {
        n.stop();
    }
    println!();
    println!(
        "soak: {} workers, {} VerifiableSource tasks at {} records/s each, {} faults every {} s, scheduled.rebalance.max.delay.ms={}",
        args.workers, args.tasks, args.rate, args.faults, args.fault_every_secs, args.delay_ms
    );
    println!("| measure | result |");
    println!("|---|---:|");
    println!("| records read | {total} |");
    println!("| records lost | {lost} |");
    println!("| duplicates | {dups} |");
    for (what, secs) in &recoveries {
        println!("| recovery after {what} | {secs:.1} s |");
    }
    for (pid, first, last) in &rss {
        println!(
            "| worker pid {pid} RSS, first → last sample | {:.1} → {:.1} MiB |",
            *first as f64 / 1024.0,
            *last as f64 / 1024.0
        );
    }
    Ok(lost == 0)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("soak: records were lost");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("soak: {e}");
            ExitCode::FAILURE
        }
    }
}
