//! One FileStreamSource throughput measurement on a fresh distributed worker of either runtime
//! (the `security-throughput` and `transform-chain` benchmarks): start the worker with given
//! extra worker properties, create a FileStreamSource with given extra connector settings, and
//! time `POST /connectors` → every input line in the counted topic (its end offset, or records
//! counted by a `read_committed` consumer when transactions put markers in the log).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Map, Value};

use crate::input::InputFile;
use crate::java::{free_port, JavaCmd};
use crate::kafka::Broker;
use crate::rest::Rest;
use crate::worker::{self, Worker};
use crate::Runtime;

/// What a source benchmark prepares once, before its rounds: the release binary, a work
/// directory (removed with it), how Java Connect starts, the input file and an admin client on
/// the broker.
pub struct SourceSetup {
    /// The release `tributary` binary.
    pub binary: PathBuf,
    /// Where worker directories go (removed when the setup is dropped).
    pub work: tempfile::TempDir,
    /// How Java Connect is started.
    pub java: JavaCmd,
    /// The input file the source reads.
    pub input: InputFile,
    /// An admin client on the broker.
    pub admin: Broker,
}

impl SourceSetup {
    /// Prepares a run: `binary` (default: `tributary` beside this executable), Java Connect with
    /// `java_heap` through `connect_java` (default: `scripts/connect-java`), `lines` lines of
    /// input (from `loghub`'s files, else generated; cached in `~/.cache/tributary/bench`), an
    /// admin client on `bootstrap`. Errors name what could not be prepared.
    pub fn prepare(
        binary: Option<&Path>,
        connect_java: Option<&Path>,
        java_heap: &str,
        bootstrap: &str,
        loghub: Option<&Path>,
        lines: u64,
    ) -> Result<SourceSetup, String> {
        let binary = crate::tributary_binary(binary)?;
        let work = crate::tempdir()?;
        let java = JavaCmd::for_benchmark(connect_java, java_heap, work.path())?;
        let cache = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
            .join(".cache/tributary/bench");
        let input = crate::input::prepare(&cache, loghub, lines).map_err(|e| e.to_string())?;
        crate::say(format!(
            "input {}: {} lines",
            input.path.display(),
            input.lines
        ));
        let admin = Broker::connect(bootstrap)?;
        Ok(SourceSetup {
            binary,
            work,
            java,
            input,
            admin,
        })
    }

    /// What every measurement of the run shares.
    pub fn bench(&self) -> SourceBench<'_> {
        SourceBench {
            binary: &self.binary,
            java: &self.java,
            input: &self.input,
            admin: &self.admin,
            work: self.work.path(),
        }
    }
}

/// What every measurement of a run shares.
pub struct SourceBench<'a> {
    /// The release `tributary` binary.
    pub binary: &'a Path,
    /// How Java Connect is started.
    pub java: &'a JavaCmd,
    /// The input file the source reads.
    pub input: &'a InputFile,
    /// An admin client on the broker (creates and deletes topics, reads end offsets).
    pub admin: &'a Broker,
    /// Where worker directories go.
    pub work: &'a Path,
}

/// One measurement's own settings.
pub struct SourceCase<'a> {
    /// Which runtime runs the worker.
    pub runtime: Runtime,
    /// The bootstrap servers the worker uses (may differ from the admin client's listener).
    pub bootstrap: &'a str,
    /// The worker group; the internal topics and the source's topic (`<group>-lines`) are
    /// named after it.
    pub group: &'a str,
    /// Worker properties added to [`worker::distributed_properties`].
    pub worker_extra: Vec<(String, String)>,
    /// Connector settings added to the FileStreamSource's (`file`, `topic`, `tasks.max`).
    pub connector_extra: Map<String, Value>,
    /// The topic whose end offset is counted, when it is not `<group>-lines` (e.g. the topic a
    /// RegexRouter sends the records to); created before the connector.
    pub counted_topic: Option<String>,
    /// Count the records a `read_committed` consumer sees instead of reading the end offset:
    /// under exactly-once support the log also holds transaction markers, so the end offset
    /// runs ahead of the records, and a record only counts once its transaction commits.
    pub read_committed: bool,
}

/// Starts a worker of `runtime` with `props` in `dir`; returns it and its REST base URL.
pub fn start(
    runtime: Runtime,
    binary: &Path,
    java: &JavaCmd,
    dir: &Path,
    mut props: Vec<(String, String)>,
) -> Result<(Worker, String), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    match runtime {
        Runtime::Tributary => {
            let mut w = Worker::spawn_distributed(binary, dir, &props)?;
            let base = w.wait_rest(Duration::from_secs(120))?;
            Ok((w, base))
        }
        Runtime::Java => {
            let port = free_port()?;
            for (k, v) in props.iter_mut() {
                if k == "listeners" {
                    *v = format!("http://127.0.0.1:{port}");
                }
            }
            props.push(("rest.advertised.host.name".into(), "127.0.0.1".into()));
            let w = java.spawn(dir, &props, false)?;
            Ok((w, format!("http://127.0.0.1:{port}")))
        }
    }
}

/// Waits (up to 180 s) until the worker answers `GET /connectors` and (Tributary) has joined
/// its group.
pub fn wait_ready(w: &mut Worker, rest: &Rest, runtime: Runtime) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        w.check_alive()?;
        let ok = rest.get("/connectors").map(|r| r.0 == 200).unwrap_or(false)
            && match runtime {
                Runtime::Java => true,
                Runtime::Tributary => rest
                    .get("/tributary/worker")
                    .map(|(_, v)| v["generation"].as_i64().unwrap_or(0) > 0)
                    .unwrap_or(false),
            };
        if ok {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("worker not ready; log tail:\n{}", w.log_tail(30)));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl SourceBench<'_> {
    /// Runs `case`: records/s from `POST /connectors` until the counted topic holds every input
    /// line (at most 600 s). The worker is stopped and the case's topics deleted afterwards.
    pub fn measure(&self, case: SourceCase<'_>) -> Result<f64, String> {
        self.measure_timed(case).map(|m| m.records_per_sec)
    }

    /// [`SourceBench::measure`], with the time until the first record was counted.
    pub fn measure_timed(&self, case: SourceCase<'_>) -> Result<SourceMeasurement, String> {
        let group = case.group;
        let topic = format!("{group}-lines");
        let counted = case.counted_topic.clone().unwrap_or_else(|| topic.clone());
        self.admin.create_topic(&topic)?;
        if counted != topic {
            self.admin.create_topic(&counted)?;
        }
        let mut props = worker::distributed_properties(case.bootstrap, group);
        props.extend(case.worker_extra);
        let dir = self.work.join(group);
        let (mut w, base) = start(case.runtime, self.binary, self.java, &dir, props)?;
        let rest = Rest::new(&base, Duration::from_secs(30))?;
        let result = (|| {
            wait_ready(&mut w, &rest, case.runtime)?;
            let mut config = Map::new();
            config.insert(
                "connector.class".into(),
                json!("org.apache.kafka.connect.file.FileStreamSourceConnector"),
            );
            config.insert("file".into(), json!(self.input.path));
            config.insert("topic".into(), json!(topic));
            config.insert("tasks.max".into(), json!("1"));
            config.extend(case.connector_extra);
            // Assigned before the clock starts, so its start-up is not timed.
            let mut counter = if case.read_committed {
                Some(CommittedCounter::new(self.admin.bootstrap(), &counted)?)
            } else {
                None
            };
            let began = Instant::now();
            let body = json!({"name": "src", "config": config});
            let (code, body) = rest.send("POST", "/connectors", Some(&body))?;
            if code != 201 {
                return Err(format!("create answered {code}: {body}"));
            }
            let deadline = Instant::now() + Duration::from_secs(600);
            let mut first_record = None;
            loop {
                let end = match &mut counter {
                    Some(c) => c.poll()?,
                    None => self.admin.try_end_offset(&counted).unwrap_or(0),
                };
                if end > 0 && first_record.is_none() {
                    first_record = Some(began.elapsed());
                }
                if end >= self.input.lines as i64 {
                    break;
                }
                w.check_alive()?;
                if Instant::now() > deadline {
                    let status = rest.get("/connectors/src/status").map(|r| r.1);
                    return Err(format!(
                        "{end} of {} records in {counted} after 600 s; status {status:?}",
                        self.input.lines
                    ));
                }
                if counter.is_none() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let took = began.elapsed();
            Ok(SourceMeasurement {
                records_per_sec: self.input.lines as f64 / took.as_secs_f64(),
                first_record: first_record.unwrap_or(took),
            })
        })();
        w.terminate(Duration::from_secs(30));
        let mut topics: Vec<String> = worker::internal_topics(group).to_vec();
        topics.push(topic.clone());
        if counted != topic {
            topics.push(counted);
        }
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        self.admin.delete_topics(&names);
        result
    }
}

/// One measurement: records/s from `POST /connectors` to the last record, and how long the
/// first record took to be counted (the connector's and task's start, and with exactly-once
/// support the first transaction's commit).
#[derive(Debug, Clone, Copy)]
pub struct SourceMeasurement {
    /// Input lines / seconds from `POST /connectors` until the last was counted.
    pub records_per_sec: f64,
    /// From `POST /connectors` until the first record was counted.
    pub first_record: Duration,
}

/// Counts the records of partition 0 of a topic that a `read_committed` consumer sees.
struct CommittedCounter {
    consumer: BaseConsumer,
    seen: i64,
}

impl CommittedCounter {
    fn new(bootstrap: &str, topic: &str) -> Result<CommittedCounter, String> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("bench-counter-{topic}"))
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            .set("log_level", "3")
            .create()
            .map_err(|e| format!("counting consumer for {topic}: {e}"))?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, 0, Offset::Beginning)
            .map_err(|e| e.to_string())?;
        consumer.assign(&tpl).map_err(|e| e.to_string())?;
        Ok(CommittedCounter { consumer, seen: 0 })
    }

    /// Reads what is there (waiting up to 100 ms for the first record, at most 100,000
    /// records a call) and returns the count so far.
    fn poll(&mut self) -> Result<i64, String> {
        let mut timeout = Duration::from_millis(100);
        for _ in 0..100_000 {
            let Some(m) = self.consumer.poll(timeout) else {
                break;
            };
            m.map_err(|e| format!("counting records: {e}"))?;
            self.seen += 1;
            timeout = Duration::ZERO;
        }
        Ok(self.seen)
    }
}

/// The median of `v` (0 when empty; the upper middle of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    v[v.len() / 2]
}
