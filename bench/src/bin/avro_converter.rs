//! `avro-converter` (issue #29's benchmark): Tributary's native
//! `io.confluent.connect.avro.AvroConverter` against Java Connect 4.1.1 running Apicurio's Java
//! `io.apicurio.registry.utils.converter.AvroConverter` (2.6.13.Final, from
//! `scripts/registry converter-plugin`; Confluent's own converter is not on Maven Central), on
//! the same schema registry (Apicurio Registry 3.3.3 of `scripts/registry`) and the same broker,
//! in the same run; and Tributary's Avro pipelines as a ratio of the same pipelines with
//! `JsonConverter` (schemas on). Goals: Tributary's Avro ≥ 5x Java's on the source and the sink,
//! and ≥ 70% of Tributary's JSON rate.
//!
//! Three pipelines, each on a fresh distributed worker with the converter set on the connector:
//! 1. source: FileStreamSource over the input file (the one the other benchmarks use) → a fresh
//!    1-partition topic; records/s from the first record seen in the topic until every line is
//!    (end offset polled every 5 ms), counting only the records after the first sighting;
//! 2. sink: FileStreamSink reading the topic pipeline 1 of the same runtime and converter wrote
//!    in the same round (Apicurio's ids and framing are its own, so each runtime reads what its
//!    converter wrote) into a file; records/s from the first byte seen in the file until it is
//!    as long as the input (size polled every 5 ms);
//! 3. struct: a source of struct records (Tributary's built-in VerifiableSource, Kafka's
//!    `org.apache.kafka.connect.tools.VerifiableSourceConnector`, with `complete.record.data=true`;
//!    Java Connect 4.1.1 does not ship that connector, so its worker runs bench/java's
//!    `SequenceSourceConnector`, which sends the same records: a struct of name, task, topic,
//!    time_ms and seqno, one record per poll, a line per record on standard output, discarded
//!    here) unthrottled → a fresh topic until it holds `--records` records, timed as 1.
//!
//! For every pipeline the worker's peak RSS (the larger of `VmRSS` sampled every 100 ms from
//! ready to done and `VmHWM` at the end; Java: the JVM's) is kept too. Each round runs both
//! runtimes, Java first in odd rounds and Tributary first in even ones; Tributary runs the Avro
//! pipelines, then the JSON ones (Java's JSON ones too with `--java-json`). The table shows the
//! median of the rounds. Java runs as `connect-distributed.sh` runs it (heap `-Xms256M -Xmx2G`
//! unless `--java-heap`, `kafka-run-class.sh`'s JVM options). The registry subjects and the
//! topics the run made are deleted at its end. A measurement, not a test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Map, Value};
use tributary_bench::input::{self, InputFile};
use tributary_bench::java::{free_port, JavaCmd, BENCH_SOURCE_CONNECTOR};
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats::{memory, RssSampler};
use tributary_bench::rest::Rest;
use tributary_bench::source_run::{median, wait_ready};
use tributary_bench::table::Table;
use tributary_bench::worker::{self, Worker};
use tributary_bench::{exit_status, say, stamp, tempdir, Runtime, RuntimeArgs};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "avro-converter",
    about = "Tributary's native AvroConverter vs Java Connect 4.1.1 with Apicurio's Java \
             AvroConverter (same registry, same broker, same run): FileStreamSource → Kafka, \
             Kafka → FileStreamSink and struct records → Kafka; records/s and peak RSS, and \
             Tributary's Avro as a ratio of its JsonConverter pipelines."
)]
struct Args {
    /// Lines in the input file (the source and sink pipelines).
    #[arg(long, default_value_t = 300_000)]
    lines: u64,
    /// Struct records the struct pipeline sends (default: --lines).
    #[arg(long)]
    records: Option<u64>,
    /// Rounds; the table shows the median of the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// Java maximum heap (`-Xmx`); Connect's start script uses 2G. The initial heap (`-Xms`) is
    /// Connect's 256M, or this when it is smaller.
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// The registry's Confluent-compatible API, Tributary's `schema.registry.url` (default:
    /// $SCHEMA_REGISTRY_URL, else http://127.0.0.1:8081/apis/ccompat/v7).
    #[arg(long)]
    registry_url: Option<String>,
    /// The registry's Apicurio v2 API, the Java converter's `apicurio.registry.url` (default:
    /// $APICURIO_REGISTRY_URL, else http://127.0.0.1:8081/apis/registry/v2).
    #[arg(long)]
    apicurio_url: Option<String>,
    /// The Java worker's `plugin.path` holding Apicurio's converter (default: what
    /// `scripts/registry converter-plugin` prints).
    #[arg(long)]
    converter_plugin: Option<PathBuf>,
    /// Also run Java Connect's pipelines with JsonConverter (schemas on).
    #[arg(long)]
    java_json: bool,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub).
    #[arg(long)]
    loghub: Option<PathBuf>,
    /// Where the generated input file is cached (default: $TRIBUTARY_CACHE/bench).
    #[arg(long)]
    cache: Option<PathBuf>,
}

/// The value converter of a pipeline.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Format {
    /// Tributary: Confluent's class, natively; Java: Apicurio's.
    Avro,
    /// `JsonConverter` with schemas.
    Json,
}

impl Format {
    fn label(self) -> &'static str {
        match self {
            Format::Avro => "avro",
            Format::Json => "json",
        }
    }
}

/// Which pipeline a measurement runs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Pipeline {
    Source,
    Sink,
    Struct,
}

impl Pipeline {
    const ALL: [Pipeline; 3] = [Pipeline::Source, Pipeline::Sink, Pipeline::Struct];

    fn label(self) -> &'static str {
        match self {
            Pipeline::Source => "source",
            Pipeline::Sink => "sink",
            Pipeline::Struct => "struct",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Pipeline::Source => "FileStreamSource → Kafka",
            Pipeline::Sink => "Kafka → FileStreamSink",
            Pipeline::Struct => "struct records (VerifiableSource) → Kafka",
        }
    }
}

/// One measurement: records/s and the worker's peak RSS.
#[derive(Debug, Clone, Copy)]
struct Measured {
    records_per_sec: f64,
    peak_rss_mib: f64,
    /// From `POST /connectors` to the first record (or byte) seen.
    first_secs: f64,
}

/// A cell of the results: runtime, converter, pipeline.
type Key = (Runtime, Format, Pipeline);

/// What every measurement of the run shares.
struct Ctx<'a> {
    binary: &'a Path,
    java: &'a JavaCmd,
    admin: &'a Broker,
    input: &'a InputFile,
    records: u64,
    work: &'a Path,
    ccompat: String,
    apicurio: String,
    plugin_path: PathBuf,
    run: u128,
}

/// How often completion is polled.
const POLL: Duration = Duration::from_millis(5);

/// The registry URL `flag`, else the environment variable `var`, else `default`.
fn url(flag: Option<&str>, var: &str, default: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var(var).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| default.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// The plugin.path directory holding Apicurio's converter: `flag`, else what
/// `scripts/registry converter-plugin` prints.
fn converter_plugin(flag: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/registry");
    let out = Command::new(&script)
        .arg("converter-plugin")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} converter-plugin failed", script.display()));
    }
    let dir = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
    Ok(PathBuf::from(dir))
}

impl Ctx<'_> {
    /// The value converter settings of `format` on `runtime`, as connector settings.
    fn converter(&self, runtime: Runtime, format: Format) -> Map<String, Value> {
        let pairs: Vec<(&str, String)> = match (runtime, format) {
            (_, Format::Json) => vec![
                (
                    "value.converter",
                    "org.apache.kafka.connect.json.JsonConverter".into(),
                ),
                ("value.converter.schemas.enable", "true".into()),
            ],
            (Runtime::Tributary, Format::Avro) => vec![
                (
                    "value.converter",
                    "io.confluent.connect.avro.AvroConverter".into(),
                ),
                ("value.converter.schema.registry.url", self.ccompat.clone()),
            ],
            (Runtime::Java, Format::Avro) => vec![
                (
                    "value.converter",
                    "io.apicurio.registry.utils.converter.AvroConverter".into(),
                ),
                (
                    "value.converter.apicurio.registry.url",
                    self.apicurio.clone(),
                ),
                (
                    "value.converter.apicurio.registry.auto-register",
                    "true".into(),
                ),
                (
                    "value.converter.apicurio.registry.as-confluent",
                    "true".into(),
                ),
                (
                    "value.converter.apicurio.registry.use-id",
                    "contentId".into(),
                ),
                (
                    "value.converter.apicurio.registry.headers.enabled",
                    "false".into(),
                ),
            ],
        };
        pairs
            .into_iter()
            .map(|(k, v)| (k.into(), json!(v)))
            .collect()
    }

    /// Starts a worker of `runtime` in group `group` (standard output discarded when `quiet`);
    /// returns it and its REST client once it is ready.
    fn start(
        &self,
        runtime: Runtime,
        format: Format,
        group: &str,
        quiet: bool,
    ) -> Result<(Worker, Rest), String> {
        let dir = self.work.join(group);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut props = worker::distributed_properties(self.admin.bootstrap(), group);
        let (mut w, base) = match runtime {
            Runtime::Tributary => {
                let mut w = if quiet {
                    Worker::spawn_distributed_quiet(self.binary, &dir, &props)?
                } else {
                    Worker::spawn_distributed(self.binary, &dir, &props)?
                };
                let base = w.wait_rest(Duration::from_secs(120))?;
                (w, base)
            }
            Runtime::Java => {
                let port = free_port()?;
                for (k, v) in props.iter_mut() {
                    if k == "listeners" {
                        *v = format!("http://127.0.0.1:{port}");
                    }
                }
                props.push(("rest.advertised.host.name".into(), "127.0.0.1".into()));
                if format == Format::Avro {
                    props.push(("plugin.path".into(), self.plugin_path.display().to_string()));
                }
                let w = self.java.spawn(&dir, &props, quiet)?;
                (w, format!("http://127.0.0.1:{port}"))
            }
        };
        let rest = Rest::new(&base, Duration::from_secs(30))?;
        wait_ready(&mut w, &rest, runtime)?;
        Ok((w, rest))
    }

    /// Runs one pipeline on a fresh worker; `topic` is the topic the source pipelines write
    /// and the sink pipeline reads (created by the caller).
    fn measure(
        &self,
        runtime: Runtime,
        format: Format,
        pipeline: Pipeline,
        group: &str,
        topic: &str,
    ) -> Result<Measured, String> {
        let quiet = pipeline == Pipeline::Struct;
        let (mut w, rest) = self.start(runtime, format, group, quiet)?;
        let out = self.work.join(group).join("sink-out.txt");
        let mut config = self.converter(runtime, format);
        let (class, target) = match pipeline {
            Pipeline::Source => {
                config.insert("file".into(), json!(self.input.path));
                config.insert("topic".into(), json!(topic));
                ("FileStreamSource", self.input.lines)
            }
            Pipeline::Sink => {
                config.insert("file".into(), json!(out));
                config.insert("topics".into(), json!(topic));
                ("FileStreamSink", self.input.file_bytes)
            }
            Pipeline::Struct => {
                config.insert("topic".into(), json!(topic));
                config.insert("throughput".into(), json!("-1"));
                config.insert("complete.record.data".into(), json!("true"));
                let class = match runtime {
                    Runtime::Tributary => {
                        "org.apache.kafka.connect.tools.VerifiableSourceConnector"
                    }
                    Runtime::Java => BENCH_SOURCE_CONNECTOR,
                };
                (class, self.records)
            }
        };
        config.insert("connector.class".into(), json!(class));
        config.insert("tasks.max".into(), json!("1"));
        let name = format!("{}-{}", pipeline.label(), format.label());
        let result = (|| {
            let sampler = RssSampler::start(w.pid(), Duration::from_millis(100));
            let posted = Instant::now();
            let (code, body) = rest.send(
                "POST",
                "/connectors",
                Some(&json!({"name": name, "config": config})),
            )?;
            if code != 201 {
                return Err(format!("creating {name}: {code} {body}"));
            }
            let deadline = Instant::now() + Duration::from_secs(900);
            let mut first: Option<(Instant, u64)> = None;
            loop {
                let now = match pipeline {
                    Pipeline::Source | Pipeline::Struct => {
                        self.admin.try_end_offset(topic).unwrap_or(0).max(0) as u64
                    }
                    Pipeline::Sink => std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0),
                };
                if now > 0 && first.is_none() {
                    first = Some((Instant::now(), now));
                }
                if now >= target {
                    break;
                }
                w.check_alive()?;
                if Instant::now() > deadline {
                    let status = rest.get(&format!("/connectors/{name}/status")).map(|r| r.1);
                    return Err(format!(
                        "{name}: {now} of {target} after 900 s; status {status:?}"
                    ));
                }
                std::thread::sleep(POLL);
            }
            let (first_at, first_seen) = first.unwrap_or((Instant::now(), 0));
            let took = first_at.elapsed().as_secs_f64().max(1e-3);
            // Only what arrived after the first sighting counts; for the sink, in lines by the
            // share of the file's bytes.
            let records = match pipeline {
                Pipeline::Source => (self.input.lines - first_seen) as f64,
                Pipeline::Struct => (self.records.saturating_sub(first_seen)) as f64,
                Pipeline::Sink => {
                    self.input.lines as f64 * (target - first_seen) as f64 / target as f64
                }
            };
            let sampled = sampler.finish();
            let hwm = memory(w.pid()).map(|m| m.hwm_kib).unwrap_or(0);
            Ok(Measured {
                records_per_sec: records / took,
                peak_rss_mib: sampled.max(hwm) as f64 / 1024.0,
                first_secs: first_at.duration_since(posted).as_secs_f64(),
            })
        })();
        if result.is_err() {
            say(format!("{group}: worker log tail:\n{}", w.log_tail(40)));
        }
        w.terminate(Duration::from_secs(30));
        result
    }
}

/// Deletes the registry `subjects` (soft, then permanently), best effort: the registry keeps
/// them in memory only, and other tests use it.
fn delete_subjects(ccompat: &str, subjects: &[String]) {
    let Ok(client) = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
    else {
        return;
    };
    for s in subjects {
        let url = format!("{ccompat}/subjects/{s}");
        client.delete(&url).send().ok();
        client.delete(format!("{url}?permanent=true")).send().ok();
    }
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.runtimes.tributary.as_deref())?;
    let work = tempdir()?;
    let mut java = JavaCmd::for_benchmark(
        args.runtimes.connect_java.as_deref(),
        &args.java_heap,
        work.path(),
    )?;
    java.add_bench_plugins(&work.path().join("java-plugins"))?;
    let plugin_path = converter_plugin(args.converter_plugin.as_deref())?;
    let bootstrap = tributary_bench::bootstrap(args.runtimes.bootstrap.as_deref());
    let ccompat = url(
        args.registry_url.as_deref(),
        "SCHEMA_REGISTRY_URL",
        "http://127.0.0.1:8081/apis/ccompat/v7",
    );
    let apicurio = url(
        args.apicurio_url.as_deref(),
        "APICURIO_REGISTRY_URL",
        "http://127.0.0.1:8081/apis/registry/v2",
    );
    match reqwest::blocking::get(format!("{ccompat}/subjects")) {
        Ok(r) if r.status().is_success() => {}
        Ok(r) => return Err(format!("{ccompat}/subjects answered {}", r.status())),
        Err(e) => {
            return Err(format!(
                "no schema registry at {ccompat} (scripts/registry start): {e}"
            ))
        }
    }
    let cache = args.cache.clone().unwrap_or_else(|| {
        std::env::var("TRIBUTARY_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()))
                    .join(".cache/tributary")
            })
            .join("bench")
    });
    let loghub = input::loghub_dir(args.loghub.clone());
    let input = input::prepare(&cache, loghub.as_deref(), args.lines)
        .map_err(|e| format!("preparing the input file: {e}"))?;
    say(format!(
        "input {}: {} lines, {:.1} MB ({})",
        input.path.display(),
        input.lines,
        input.file_bytes as f64 / 1e6,
        input.origin
    ));
    say(format!(
        "registry {ccompat} (Tributary), {apicurio} (Java); Java plugin.path {}",
        plugin_path.display()
    ));
    let admin = Broker::connect(&bootstrap)?;
    let records = args.records.unwrap_or(args.lines);
    let ctx = Ctx {
        binary: &binary,
        java: &java,
        admin: &admin,
        input: &input,
        records,
        work: work.path(),
        ccompat,
        apicurio,
        plugin_path,
        run: stamp(),
    };
    let began = Instant::now();
    let mut topics: Vec<String> = Vec::new();
    // The registry subjects the Avro pipelines register under (TopicNameStrategy).
    let mut subjects: Vec<String> = Vec::new();
    let mut results: BTreeMap<Key, Vec<Measured>> = BTreeMap::new();
    let mut per_round = Table::new(&[
        "round",
        "runtime",
        "converter",
        "source rec/s",
        "source MiB",
        "sink rec/s",
        "sink MiB",
        "struct rec/s",
        "struct MiB",
        "POST → first record s (source, sink, struct)",
    ]);
    let outcome = (|| {
        let rounds = args.rounds.max(1);
        for round in 1..=rounds {
            let order = if round % 2 == 1 {
                [Runtime::Java, Runtime::Tributary]
            } else {
                [Runtime::Tributary, Runtime::Java]
            };
            say(format!(
                "round {round} of {rounds}: {} first",
                order[0].title()
            ));
            for runtime in order {
                let formats: &[Format] = match runtime {
                    Runtime::Java if !args.java_json => &[Format::Avro],
                    _ => &[Format::Avro, Format::Json],
                };
                for &format in formats {
                    let stem = format!(
                        "avrobench-{}-r{round}-{}-{}",
                        ctx.run,
                        runtime.label(),
                        format.label()
                    );
                    let lines_topic = format!("{stem}-lines");
                    let struct_topic = format!("{stem}-structs");
                    for t in [&lines_topic, &struct_topic] {
                        admin.create_topic(t)?;
                        topics.push(t.clone());
                        if format == Format::Avro {
                            subjects.push(format!("{t}-value"));
                        }
                    }
                    let mut row = Vec::new();
                    for pipeline in Pipeline::ALL {
                        let group = format!("{stem}-{}", pipeline.label());
                        topics.extend(worker::internal_topics(&group));
                        let topic = match pipeline {
                            Pipeline::Struct => &struct_topic,
                            _ => &lines_topic,
                        };
                        let m = ctx.measure(runtime, format, pipeline, &group, topic)?;
                        say(format!(
                            "round {round}: {} {format:?} {}: {:.0} records/s, peak RSS {:.0} \
                             MiB, first record {:.2} s after the POST",
                            runtime.title(),
                            pipeline.label(),
                            m.records_per_sec,
                            m.peak_rss_mib,
                            m.first_secs
                        ));
                        results
                            .entry((runtime, format, pipeline))
                            .or_default()
                            .push(m);
                        row.push(m);
                    }
                    let mut cells = vec![runtime.title().to_string(), format!("{format:?}")];
                    for m in &row {
                        cells.push(format!("{:.0}", m.records_per_sec));
                        cells.push(format!("{:.0}", m.peak_rss_mib));
                    }
                    cells.push(
                        row.iter()
                            .map(|m| format!("{:.2}", m.first_secs))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    per_round.row(round.to_string(), cells);
                }
            }
        }
        Ok::<_, String>(())
    })();
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    if !names.is_empty() {
        admin.delete_topics(&names);
    }
    delete_subjects(&ctx.ccompat, &subjects);
    outcome?;
    let took = began.elapsed();

    let med = |k: Key, f: fn(&Measured) -> f64| -> Option<f64> {
        results
            .get(&k)
            .filter(|v| !v.is_empty())
            .map(|v| median(v.iter().map(f).collect()))
    };
    let table = render(args, &med);
    let rounds = args.rounds.max(1);
    println!(
        "Median of {rounds} round(s); {} input lines ({:.1} MB, {}), {records} struct records:",
        input.lines,
        input.file_bytes as f64 / 1e6,
        input.origin
    );
    print!("{}", table.text());
    println!("\nEach round (records/s and peak RSS MiB per pipeline):");
    print!("{}", per_round.text());
    println!();
    print!("{}", table.markdown());
    println!();
    println!(
        "Tributary: value.converter=io.confluent.connect.avro.AvroConverter, \
         schema.registry.url={}. Java Connect 4.1.1: \
         value.converter=io.apicurio.registry.utils.converter.AvroConverter (2.6.13.Final, \
         plugin.path), apicurio.registry.url={}, auto-register=true, as-confluent=true, \
         use-id=contentId, headers.enabled=false; heap {}. JSON: JsonConverter, \
         schemas.enable=true. Key converter: StringConverter.",
        ctx.ccompat,
        ctx.apicurio,
        java.heap.join(" ")
    );
    println!(
        "records/s: from the first record seen (topic end offset, or output file size, polled \
         every 5 ms) to the last; peak RSS: the worker process's (the JVM's) largest VmRSS / \
         VmHWM during the pipeline; one fresh distributed worker per pipeline; struct records: \
         Tributary's built-in VerifiableSource, bench/java's SequenceSourceConnector on Java \
         (the same records). Whole run {:.1} min.",
        took.as_secs_f64() / 60.0
    );
    Ok(())
}

/// `met` or `NOT met`.
fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

/// The table of medians: one rate row and one RSS row per pipeline.
fn render(args: &Args, med: &dyn Fn(Key, fn(&Measured) -> f64) -> Option<f64>) -> Table {
    let java_title = format!(
        "Java Connect 4.1.1 + Apicurio AvroConverter (-Xmx{})",
        args.java_heap
    );
    let mut header = vec![
        "measure (median)",
        java_title.as_str(),
        "Tributary AvroConverter",
        "Tributary / Java (goal ≥ 5x)",
        "Tributary JsonConverter",
        "Tributary Avro / JSON (goal ≥ 0.70)",
    ];
    if args.java_json {
        header.push("Java Connect 4.1.1 JsonConverter");
    }
    let mut table = Table::new(&header);
    let rate = |m: &Measured| m.records_per_sec;
    let rss = |m: &Measured| m.peak_rss_mib;
    let opt = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "n/a".into());
    for pipeline in Pipeline::ALL {
        let j = med((Runtime::Java, Format::Avro, pipeline), rate);
        let t = med((Runtime::Tributary, Format::Avro, pipeline), rate);
        let tj = med((Runtime::Tributary, Format::Json, pipeline), rate);
        let goal = pipeline != Pipeline::Struct;
        let mut cells = vec![
            opt(j),
            opt(t),
            match (j, t) {
                (Some(j), Some(t)) if j > 0.0 => {
                    if goal {
                        format!("{:.1}x ({})", t / j, met(t / j >= 5.0))
                    } else {
                        format!("{:.1}x", t / j)
                    }
                }
                _ => "n/a".into(),
            },
            opt(tj),
            match (t, tj) {
                (Some(t), Some(tj)) if tj > 0.0 => {
                    format!("{:.2} ({})", t / tj, met(t / tj >= 0.70))
                }
                _ => "n/a".into(),
            },
        ];
        if args.java_json {
            cells.push(opt(med((Runtime::Java, Format::Json, pipeline), rate)));
        }
        table.row(format!("{}, records/s", pipeline.title()), cells);

        let j = med((Runtime::Java, Format::Avro, pipeline), rss);
        let t = med((Runtime::Tributary, Format::Avro, pipeline), rss);
        let tj = med((Runtime::Tributary, Format::Json, pipeline), rss);
        let mut cells = vec![
            opt(j),
            opt(t),
            match (j, t) {
                (Some(j), Some(t)) if t > 0.0 => format!("{:.1}x less", j / t),
                _ => "n/a".into(),
            },
            opt(tj),
            match (t, tj) {
                (Some(t), Some(tj)) if tj > 0.0 => format!("{:.2}", t / tj),
                _ => "n/a".into(),
            },
        ];
        if args.java_json {
            cells.push(opt(med((Runtime::Java, Format::Json, pipeline), rss)));
        }
        table.row(format!("{}, peak RSS MiB", pipeline.title()), cells);
    }
    table
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit_status("avro-converter", run(&args))
}
