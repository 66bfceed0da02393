//! The nemesis (issue #30): a fault schedule with a checker, as Jepsen runs against databases,
//! sized for a small machine.
//!
//! Five workers in two clusters on a broker of the test's own: `alo` (2 workers, at-least-once
//! sources) and `eos` (3 workers, `exactly.once.source.support=enabled`), each running a
//! 2-task VerifiableSource and a 2-task VerifiableSink that reads the source's topic (the `eos`
//! sink with `isolation.level=read_committed`). Every worker reaches the broker through a
//! cutting TCP proxy of its own (a broker listener per worker advertises it) and is reached by
//! the other workers through another (`rest.advertised.port`), so either link can be cut.
//!
//! For `NEMESIS_SECONDS` (default 100) a seeded schedule (`NEMESIS_SEED`, printed first and on
//! failure, repeats a run) injects one fault at a time, holds it, heals it, and waits a
//! little: SIGKILL of a worker (restarted), SIGSTOP and SIGCONT after its session expired,
//! SIGTERM of one worker of a cluster and of another while the rebalance it started is under
//! way (both restarted), a broker stop and start, a cut between a worker and the broker, a cut
//! between a worker and its peers. Then the checker ([`checker`]) asks of what reached Kafka
//! and the sinks: no record lost; no duplicate under exactly-once; at-least-once duplicates
//! (counted) only inside a fault's window; no task RUNNING on two workers in one generation (the
//! status topic, and `GET /tributary/worker` polled throughout); and every connector RUNNING
//! again, records flowing, within [`RECOVERY_BOUND`] of the last fault. `scripts/bench nemesis`
//! runs it for longer in a release build.

#[path = "nemesis/checker.rs"]
mod checker;
use tributary_testkit as common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use checker::*;
use common::faults::{free_port, CutProxy, OwnBroker};
use common::*;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Value};

/// How long after the last fault is healed every connector must be RUNNING again with records
/// flowing.
const RECOVERY_BOUND: Duration = Duration::from_secs(150);
/// How long after a fault is healed a redelivery is still its doing: the worker's session
/// timeout (6 s), the scheduled rebalance delay (3 s), a restarted worker's rejoin, and the
/// sink consumer group's rebalance, which waits out a killed member's consumer session
/// ([`SINK_SESSION_MS`]) and may be held up by the next fault in turn.
const GRACE_MS: i64 = 60_000;
/// The sink tasks' consumer session timeout (`consumer.override.session.timeout.ms`): a killed
/// worker's sink consumer stays in its group, holding up the group's rebalances, this long.
const SINK_SESSION_MS: u32 = 10_000;
/// Records per second of each source task.
const THROUGHPUT: u32 = 25;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// xorshift64*: the schedule's only source of randomness, so a seed repeats a run's choices.
struct Rng(u64);

impl Rng {
    /// A generator whose state is the seed scrambled by splitmix64 (so that nearby seeds, such
    /// as clock readings, start far apart).
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Milliseconds in `lo..=hi`.
    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo + 1))
    }
}

/// One cluster: its group and the connectors it runs.
struct Cluster {
    name: &'static str,
    group: String,
    topic: String,
    source: String,
    sink: String,
    exactly_once: bool,
}

/// One worker process (restarted in place), with its two proxies.
struct Node {
    name: String,
    cluster: usize,
    dir: PathBuf,
    rest_port: u16,
    /// In front of the REST listener: what the other workers reach (its advertised address).
    peers: CutProxy,
    /// Between the worker and its broker listener.
    link: CutProxy,
    child: Option<Child>,
    runs: u32,
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// `GET` on a worker: `None` when it does not answer (down, paused, cut).
fn get(url: &str, path: &str) -> Option<(u16, Value)> {
    let r = http().get(format!("{url}{path}")).send().ok()?;
    let code = r.status().as_u16();
    Some((code, r.json().unwrap_or(Value::Null)))
}

impl Node {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.rest_port)
    }

    /// Starts the worker process and waits until its REST API answers.
    fn spawn(&mut self) {
        self.runs += 1;
        let stdout = std::fs::File::create(self.dir.join(format!("stdout-{}.log", self.runs)));
        let log = self.dir.join(format!("worker-{}.log", self.runs));
        let child = Command::new(env!("CARGO_BIN_EXE_tributary"))
            .args(["distributed", "worker.properties"])
            .current_dir(&self.dir)
            .stdout(stdout.unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("starting tributary");
        self.child = Some(child);
        let url = self.url();
        wait_for(
            &format!("{} to serve REST", self.name),
            Duration::from_secs(90),
            || {
                if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                    panic!(
                        "{} exited with {status}: {}",
                        self.name,
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
                get(&url, "/").map(|_| ())
            },
        );
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("a running worker").id();
        let status = Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -{signal} {pid}");
    }

    fn kill(&mut self) {
        let mut child = self.child.take().expect("a running worker");
        child.kill().ok(); // it may have exited: then it is down either way
        child.wait().ok();
    }

    /// Waits for the exit a SIGTERM asked for: a clean one, within a minute.
    fn wait_exit(&mut self) {
        let mut child = self.child.take().expect("a running worker");
        let name = &self.name;
        let status = wait_for(
            &format!("{name} to exit after SIGTERM"),
            Duration::from_secs(60),
            || child.try_wait().unwrap(),
        );
        assert!(
            status.success(),
            "{name} exited with {status} after SIGTERM"
        );
    }

    /// This worker's `GET /tributary/worker`.
    fn info(&self) -> Option<Value> {
        get(&self.url(), "/tributary/worker").map(|(_, v)| v)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // A paused worker must be woken to die cleanly; both are best effort here.
            Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status()
                .ok();
            c.kill().ok();
            c.wait().ok();
        }
    }
}

/// The faults the schedule draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    Kill,
    Pause,
    TermInRebalance,
    BrokerBounce,
    CutLink,
    CutPeers,
}

const FAULTS: [Fault; 6] = [
    Fault::Kill,
    Fault::Pause,
    Fault::TermInRebalance,
    Fault::BrokerBounce,
    Fault::CutLink,
    Fault::CutPeers,
];

/// Prints the seed when the test fails, so the run can be repeated.
struct SeedOnFailure(u64);

impl Drop for SeedOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "nemesis: FAILED with seed {0}; NEMESIS_SEED={0} repeats the schedule",
                self.0
            );
        }
    }
}

/// Every record of `topic` (all partitions), once no transaction is open on it: with
/// `read_committed`, only the committed ones.
fn read_written(bootstrap: &str, topic: &str, isolation: &str) -> Vec<Written> {
    let client = |isolation: &str| -> BaseConsumer {
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", unique("nemesis-reader"))
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "true")
            .set("isolation.level", isolation)
            .create()
            .unwrap()
    };
    let raw = client("read_uncommitted");
    let committed = client("read_committed");
    let metadata = raw
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    let partitions: Vec<i32> = metadata.topics()[0]
        .partitions()
        .iter()
        .map(|p| p.id())
        .collect();
    // A zombie's open transaction holds the last stable offset back until it is aborted (at
    // the latest after the transaction timeout).
    wait_for(
        &format!("no open transaction on {topic}"),
        Duration::from_secs(120),
        || {
            partitions
                .iter()
                .all(|p| {
                    let w =
                        |c: &BaseConsumer| c.fetch_watermarks(topic, *p, Duration::from_secs(5));
                    matches!((w(&raw), w(&committed)), (Ok((_, h)), Ok((_, s))) if h == s)
                })
                .then_some(())
        },
    );
    let consumer = client(isolation);
    let mut tpl = TopicPartitionList::new();
    for p in &partitions {
        tpl.add_partition_offset(topic, *p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut at_end = BTreeSet::new();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while at_end.len() < partitions.len() {
        assert!(
            Instant::now() < deadline,
            "could not read {topic} to its end"
        );
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                let text =
                    |b: Option<&[u8]>| String::from_utf8_lossy(b.unwrap_or_default()).to_string();
                out.push(Written {
                    task: text(m.key()).parse().unwrap(),
                    seqno: text(m.payload()).parse().unwrap(),
                    partition: m.partition(),
                    offset: m.offset(),
                    timestamp_ms: m.timestamp().to_millis().unwrap_or(0),
                });
            }
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(p))) => {
                at_end.insert(p);
            }
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {}
        }
    }
    out
}

/// The records the sink connector `sink` said it consumed, from every run's standard output of
/// every worker.
fn consumed_by(nodes: &[Node], sink: &str) -> Vec<Consumed> {
    let int = |v: &Value| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(-1)
    };
    let mut out = Vec::new();
    for n in nodes {
        for run in 1..=n.runs {
            let text = std::fs::read_to_string(n.dir.join(format!("stdout-{run}.log")))
                .unwrap_or_default();
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    continue; // a line cut short by a SIGKILL
                };
                if v.get("sinkTask").is_none() || v.get("flushed").is_some() || v["name"] != sink {
                    continue;
                }
                out.push(Consumed {
                    task: int(&v["task"]),
                    seqno: int(&v["seqno"]),
                    offset: int(&v["offset"]),
                    time_ms: int(&v["time_ms"]),
                });
            }
        }
    }
    out
}

/// The task status records of a cluster's status topic.
fn task_statuses(bootstrap: &str, group: &str) -> Vec<TaskStatus> {
    common::eos::read_all(bootstrap, &format!("{group}-status"))
        .records
        .into_iter()
        .filter(|(k, _)| k.starts_with("status-task-"))
        .filter_map(|(k, v)| {
            let v = v?;
            Some(TaskStatus {
                task: k.trim_start_matches("status-task-").to_string(),
                state: v["state"].as_str()?.to_string(),
                worker_id: v["worker_id"].as_str()?.to_string(),
                generation: v["generation"].as_i64()?,
            })
        })
        .collect()
}

/// Whether `connector` and all its `tasks` tasks are in `state`, as some live worker of the
/// cluster reports it: `None` when they are, else what the workers report.
fn state_gap(nodes: &[&Node], connector: &str, tasks: usize, state: &str) -> Option<String> {
    let mut seen = Vec::new();
    for n in nodes {
        let Some((code, s)) = get(&n.url(), &format!("/connectors/{connector}/status")) else {
            seen.push(format!("{}: no answer", n.name));
            continue;
        };
        let ts = s["tasks"].as_array().cloned().unwrap_or_default();
        if code == 200
            && s["connector"]["state"] == state
            && ts.len() == tasks
            && ts.iter().all(|t| t["state"] == state)
        {
            return None;
        }
        seen.push(format!("{}: {code} {s}", n.name));
    }
    Some(format!("{connector} not {state}: {}", seen.join("; ")))
}

/// The last stable offsets of `topic`'s two partitions, summed: it grows as transactions (or,
/// outside them, records) are committed.
fn committed_size(bootstrap: &str, topic: &str) -> i64 {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    (0..2)
        .map(|p| {
            c.fetch_watermarks(topic, p, Duration::from_secs(5))
                .map(|(_, h)| h)
                .unwrap_or(0)
        })
        .sum()
}

#[test]
fn a_fault_schedule_loses_nothing_duplicates_only_at_least_once_and_recovers() {
    let Some(_) = kafka() else { return };
    let seed: u64 = std::env::var("NEMESIS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| now_ms() as u64 | 1);
    let seconds: u64 = std::env::var("NEMESIS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    eprintln!("nemesis: seed {seed}, {seconds} s of faults (NEMESIS_SEED={seed} repeats it)");
    let _seed = SeedOnFailure(seed);
    let mut rng = Rng::new(seed);
    let started_ms = now_ms();
    let dir = test_dir();
    let d = dir.path();

    // The broker: a listener per worker, advertised as that worker's proxy.
    const WORKERS: [(&str, usize); 5] = [("a1", 0), ("a2", 0), ("e1", 1), ("e2", 1), ("e3", 1)];
    let port = OwnBroker::pick_port();
    let behind: Vec<u16> = WORKERS.iter().map(|_| free_port()).collect();
    let links: Vec<CutProxy> = behind.iter().map(|b| CutProxy::start(*b)).collect();
    let mut listeners = vec![
        format!("PLAINTEXT://127.0.0.1:{port}"),
        format!("CONTROLLER://127.0.0.1:{}", port + 1),
    ];
    let mut advertised = vec![format!("PLAINTEXT://127.0.0.1:{port}")];
    let mut protocols = vec![
        "PLAINTEXT:PLAINTEXT".to_string(),
        "CONTROLLER:PLAINTEXT".into(),
    ];
    for (i, (b, l)) in behind.iter().zip(&links).enumerate() {
        listeners.push(format!("W{i}://127.0.0.1:{b}"));
        advertised.push(format!("W{i}://127.0.0.1:{}", l.port));
        protocols.push(format!("W{i}:PLAINTEXT"));
    }
    let extra = format!(
        "listeners={}\nadvertised.listeners={}\nlistener.security.protocol.map={}\n",
        listeners.join(","),
        advertised.join(","),
        protocols.join(",")
    );
    let broker = OwnBroker::start_on(d, port, &extra);
    let bootstrap = broker.bootstrap();

    let clusters: Vec<Cluster> = [("alo", false), ("eos", true)]
        .into_iter()
        .map(|(name, exactly_once)| {
            let group = unique(&format!("nemesis-{name}"));
            Cluster {
                name,
                topic: format!("{group}-data"),
                source: format!("{name}-source"),
                sink: format!("{name}-sink"),
                group,
                exactly_once,
            }
        })
        .collect();
    for c in &clusters {
        create_topic(&bootstrap, &c.topic, 2);
    }
    let mut nodes: Vec<Node> = WORKERS
        .iter()
        .zip(links)
        .map(|((name, cluster), link)| {
            let rest_port = free_port();
            let peers = CutProxy::start(rest_port);
            let c = &clusters[*cluster];
            let mut extra = format!(
                "rest.advertised.host.name=127.0.0.1\nrest.advertised.port={}\nscheduled.rebalance.max.delay.ms=3000\n",
                peers.port
            );
            if c.exactly_once {
                extra.push_str("exactly.once.source.support=enabled\n");
            }
            let props = distributed_properties(&format!("127.0.0.1:{}", link.port), &c.group, &extra)
                .replace(
                    "listeners=http://127.0.0.1:0",
                    &format!("listeners=http://127.0.0.1:{rest_port}"),
                );
            let dir = d.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("worker.properties"), props).unwrap();
            Node {
                name: name.to_string(),
                cluster: *cluster,
                dir,
                rest_port,
                peers,
                link,
                child: None,
                runs: 0,
            }
        })
        .collect();
    for n in &mut nodes {
        n.spawn();
    }
    for n in &nodes {
        wait_for(
            &format!("{} to join", n.name),
            Duration::from_secs(90),
            || {
                n.info()
                    .and_then(|i| i["generation"].as_i64())
                    .filter(|g| *g > 0)
            },
        );
    }
    let members = |c: usize, nodes: &[Node]| -> Vec<usize> {
        (0..nodes.len())
            .filter(|i| nodes[*i].cluster == c)
            .collect()
    };

    for (ci, c) in clusters.iter().enumerate() {
        let first = &nodes[members(ci, &nodes)[0]];
        // A transaction whose commit the broker refuses while it restarts (EndTxn answered
        // with an unknown server error) fails an exactly-once task, as it fails Java's
        // (the producer cannot tell whether it committed); the worker restarts it itself
        // (Tributary's automatic restart), which is what "with no hand" below allows.
        let source = json!({"name": c.source, "config": {
            "connector.class": "VerifiableSource", "tasks.max": "2", "topic": c.topic,
            "throughput": THROUGHPUT.to_string(),
            "tributary.restart.enable": "true",
            "tributary.restart.backoff.max.ms": "5000",
        }});
        let mut sink_config = json!({
            "connector.class": "VerifiableSink", "tasks.max": "2", "topics": c.topic,
            "consumer.override.session.timeout.ms": SINK_SESSION_MS.to_string(),
            "consumer.override.heartbeat.interval.ms": (SINK_SESSION_MS / 4).to_string(),
        });
        if c.exactly_once {
            sink_config["consumer.override.isolation.level"] = json!("read_committed");
        }
        let sink = json!({"name": c.sink, "config": sink_config});
        for body in [source, sink] {
            let client = reqwest::blocking::Client::new();
            let r = client
                .post(format!("{}/connectors", first.url()))
                .json(&body)
                .send()
                .unwrap();
            assert_eq!(r.status().as_u16(), 201, "{}", r.text().unwrap_or_default());
        }
    }
    // `None` when every connector and task is RUNNING, else what is not.
    let not_running = |nodes: &[Node]| -> Option<String> {
        clusters.iter().enumerate().find_map(|(ci, c)| {
            let live: Vec<&Node> = members(ci, nodes).into_iter().map(|i| &nodes[i]).collect();
            state_gap(&live, &c.source, 2, "RUNNING")
                .or_else(|| state_gap(&live, &c.sink, 2, "RUNNING"))
        })
    };
    wait_for("every connector RUNNING", Duration::from_secs(120), || {
        not_running(&nodes).is_none().then_some(())
    });

    // Throughout: every worker's assignment, as it reports it.
    let stop = Arc::new(AtomicBool::new(false));
    let assignments: Arc<Mutex<BTreeSet<Assignment>>> = Arc::default();
    let observer = {
        let targets: Vec<(String, String)> = nodes
            .iter()
            .map(|n| (clusters[n.cluster].name.to_string(), n.url()))
            .collect();
        let (stop, assignments) = (stop.clone(), assignments.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                for (cluster, url) in &targets {
                    let Some((200, i)) = get(url, "/tributary/worker") else {
                        continue;
                    };
                    if i["rebalancing"] == true {
                        continue;
                    }
                    let tasks = i["tasks"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|t| t.as_str().map(str::to_string))
                        .collect();
                    let id = i["worker_id"].as_str().unwrap_or_default().to_string();
                    let generation = i["generation"].as_i64().unwrap_or(-1);
                    assignments.lock().unwrap().insert(Assignment {
                        cluster: cluster.clone(),
                        worker_id: id,
                        generation,
                        tasks,
                    });
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };

    // The schedule.
    let mut windows = vec![Window {
        kind: "startup".into(),
        start_ms: started_ms,
        end_ms: now_ms() + GRACE_MS,
    }];
    let mut counts: std::collections::BTreeMap<Fault, usize> = Default::default();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        // The quiet time between faults is the schedule itself, not a wait for a condition.
        std::thread::sleep(rng.ms(2000, 5000));
        let fault = FAULTS[rng.below(FAULTS.len())];
        let victim = rng.below(nodes.len());
        let start_ms = now_ms();
        let what = match fault {
            Fault::Kill => {
                nodes[victim].kill();
                std::thread::sleep(rng.ms(2000, 8000));
                nodes[victim].spawn();
                format!("SIGKILL {}", nodes[victim].name)
            }
            Fault::Pause => {
                // Longer than the 6 s session: it wakes up expelled from the group.
                nodes[victim].signal("STOP");
                std::thread::sleep(rng.ms(8000, 12000));
                nodes[victim].signal("CONT");
                format!("SIGSTOP {} and SIGCONT", nodes[victim].name)
            }
            Fault::TermInRebalance => {
                let peers: Vec<usize> = members(nodes[victim].cluster, &nodes)
                    .into_iter()
                    .filter(|i| *i != victim)
                    .collect();
                let second = peers[rng.below(peers.len())];
                nodes[victim].signal("TERM");
                // The other worker gets SIGTERM once it is in the rebalance the first one's
                // leaving started (or after 10 s, said in the log of faults): it reports
                // `rebalancing` from the moment it learns of the round until it has its
                // assignment, often only a few milliseconds.
                let until = Instant::now() + Duration::from_secs(10);
                let seen = loop {
                    if nodes[second]
                        .info()
                        .is_some_and(|i| i["rebalancing"] == true)
                    {
                        break true;
                    }
                    if Instant::now() > until {
                        break false;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                nodes[second].signal("TERM");
                nodes[victim].wait_exit();
                nodes[second].wait_exit();
                std::thread::sleep(rng.ms(1000, 5000));
                nodes[victim].spawn();
                nodes[second].spawn();
                format!(
                    "SIGTERM {} then {} {}",
                    nodes[victim].name,
                    nodes[second].name,
                    if seen {
                        "in its rebalance"
                    } else {
                        "(no rebalance seen)"
                    }
                )
            }
            Fault::BrokerBounce => {
                broker.run("stop");
                std::thread::sleep(rng.ms(2000, 6000));
                broker.run("start");
                "broker stop and start".to_string()
            }
            Fault::CutLink => {
                nodes[victim].link.cut();
                std::thread::sleep(rng.ms(4000, 10000));
                nodes[victim].link.restore();
                format!("cut {} from the broker", nodes[victim].name)
            }
            Fault::CutPeers => {
                nodes[victim].peers.cut();
                std::thread::sleep(rng.ms(4000, 10000));
                nodes[victim].peers.restore();
                format!("cut {} from its peers", nodes[victim].name)
            }
        };
        let heal_ms = now_ms();
        eprintln!(
            "nemesis: +{:>4}s {what} ({} ms)",
            (start_ms - started_ms) / 1000,
            heal_ms - start_ms
        );
        *counts.entry(fault).or_default() += 1;
        windows.push(Window {
            kind: what,
            start_ms,
            end_ms: heal_ms + GRACE_MS,
        });
    }

    // Recovery: every connector RUNNING, both sources committing records again and both sinks
    // consuming them, with no hand.
    let healed = Instant::now();
    let progress = |nodes: &[Node]| -> Vec<(i64, usize)> {
        clusters
            .iter()
            .map(|c| {
                (
                    committed_size(&bootstrap, &c.topic),
                    consumed_by(nodes, &c.sink).len(),
                )
            })
            .collect()
    };
    let before = progress(&nodes);
    while let Some(why) = not_running(&nodes).or_else(|| {
        let now = progress(&nodes);
        let stalled: Vec<&str> = now
            .iter()
            .zip(&before)
            .zip(&clusters)
            .filter(|((now, then), _)| now.0 <= then.0 + 20 || now.1 <= then.1 + 20)
            .map(|(_, c)| c.name)
            .collect();
        (!stalled.is_empty()).then(|| format!("not committing and consuming: {stalled:?}"))
    }) {
        assert!(
            healed.elapsed() < RECOVERY_BOUND,
            "not recovered {RECOVERY_BOUND:?} after the last fault: {why}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let recovery = healed.elapsed();

    // The sources stop (the exactly-once one committing its last transaction); the sinks
    // catch up.
    for (ci, c) in clusters.iter().enumerate() {
        let first = &nodes[members(ci, &nodes)[0]];
        wait_for(
            &format!("{} to stop", c.source),
            Duration::from_secs(60),
            || {
                let r = http()
                    .put(format!("{}/connectors/{}/stop", first.url(), c.source))
                    .send()
                    .ok()?;
                (r.status().as_u16() == 204).then_some(())
            },
        );
    }
    let stopped_gap = || {
        clusters.iter().enumerate().find_map(|(ci, c)| {
            let live: Vec<&Node> = members(ci, &nodes).into_iter().map(|i| &nodes[i]).collect();
            state_gap(&live, &c.source, 0, "STOPPED")
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Some(gap) = stopped_gap() {
        assert!(
            Instant::now() < deadline,
            "the sources are not STOPPED after 60 s: {gap}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let mut summary = vec![format!(
        "nemesis: seed {seed}: {} faults survived ({}), recovered in {:.1} s",
        windows.len() - 1,
        counts
            .iter()
            .map(|(k, v)| format!("{k:?} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        recovery.as_secs_f64()
    )];
    let mut failures = Vec::new();
    for c in &clusters {
        let isolation = if c.exactly_once {
            "read_committed"
        } else {
            "read_uncommitted"
        };
        let written = read_written(&bootstrap, &c.topic, isolation);
        let source = check_source(&written, &windows);
        let sink = wait_for(
            &format!("{} to consume every record", c.sink),
            Duration::from_secs(120),
            || {
                let r = check_sink(&written, &consumed_by(&nodes, &c.sink), &windows);
                r.missing.is_empty().then_some(r)
            },
        );
        summary.push(format!(
            "nemesis: {}: {} records checked, {} distinct, {} duplicates, {} lost",
            c.source,
            source.records,
            source.distinct,
            source.duplicates,
            source.lost.len()
        ));
        summary.push(format!(
            "nemesis: {}: {} records consumed, {} redelivered, {} missing, {} foreign",
            c.sink,
            sink.consumed,
            sink.duplicates,
            sink.missing.len(),
            sink.foreign.len()
        ));
        if !source.lost.is_empty() {
            failures.push(format!(
                "{}: lost {:?}",
                c.source,
                &source.lost[..source.lost.len().min(10)]
            ));
        }
        if c.exactly_once && source.duplicates > 0 {
            failures.push(format!(
                "{}: {} duplicates under exactly-once",
                c.source, source.duplicates
            ));
        }
        if !source.unexplained.is_empty() {
            failures.push(format!(
                "{}: duplicates outside every fault window (task, seqno, ms): {:?}",
                c.source,
                &source.unexplained[..source.unexplained.len().min(10)]
            ));
        }
        if !sink.foreign.is_empty() {
            failures.push(format!(
                "{}: consumed records the topic does not hold for it (task, offset, seqno): {:?}",
                c.sink,
                &sink.foreign[..sink.foreign.len().min(10)]
            ));
        }
        if !sink.unexplained.is_empty() {
            failures.push(format!(
                "{}: redeliveries outside every fault window (task, offset, ms): {:?}",
                c.sink,
                &sink.unexplained[..sink.unexplained.len().min(10)]
            ));
        }
    }
    stop.store(true, Ordering::Release);
    observer.join().unwrap();
    let statuses: Vec<TaskStatus> = clusters
        .iter()
        .flat_map(|c| task_statuses(&bootstrap, &c.group))
        .collect();
    let observed: Vec<Assignment> = assignments.lock().unwrap().iter().cloned().collect();
    let violations = check_single_owner(&statuses, &observed);
    summary.push(format!(
        "nemesis: single owner: {} task status records and {} reported assignments checked, {} violations",
        statuses.len(),
        observed.len(),
        violations.len()
    ));
    failures.extend(violations);
    for line in &summary {
        eprintln!("{line}");
    }
    if !failures.is_empty() {
        let log: Vec<String> = windows
            .iter()
            .map(|w| {
                format!(
                    "  {:>6} ms .. {:>6} ms  {}",
                    w.start_ms - started_ms,
                    w.end_ms - started_ms,
                    w.kind
                )
            })
            .collect();
        panic!(
            "{}\nfault windows (ms from the start of the run at epoch ms {started_ms}, grace included):\n{}",
            failures.join("\n"),
            log.join("\n")
        );
    }
}
