//! `debezium-snapshot` (issues #15 and #45's benchmark): Debezium's PostgreSQL source
//! connector snapshotting a table of `--rows` rows (default 1,000,000) into Kafka and then
//! streaming `--changes` row changes (default 1,000,000), three ways in the same run on the same
//! broker and database: Debezium's Java plugin (from `plugin.path`) hosted by Java Connect
//! 4.1.1, the same plugin hosted by Tributary (in its in-process JVM), and Tributary's native
//! connector of the same class (`connector.plugin.version`, issue #45); plus the idle RSS of a
//! Tributary worker with `plugin.path` set but no Java plugin in use, next to one without it.
//!
//! The stream: once the snapshot is in Kafka the connector is paused, the changes are made
//! (updates of existing rows, inserts of new ones and deletes of those, in transactions of 1,
//! 10, 100 and 1,000 rows in turn; a delete gives a record and its tombstone), the connector is
//! resumed, and the records/s are counted from the resume until every change event is in the
//! topic: the connector catching up on WAL the slot holds, as after a restart or a burst.
//!
//! The table (`id` integer key, a name, an e-mail, an amount and a timestamp per row) is made
//! once per run in a database of its own in the PostgreSQL of `scripts/postgres`. Each round
//! runs each runtime (Java first in odd rounds, Tributary first in even ones) on a fresh
//! distributed worker with `JsonConverter` (schemas on, Connect's default) and a fresh
//! replication slot and topic prefix: records/s from `POST /connectors` until the table's topic
//! holds every row, the time from the POST to the first record in the topic (for Tributary it
//! includes starting its JVM, which a Java worker did before it was ready) and the records/s
//! from then on, and the worker's peak RSS (`VmRSS` sampled every 100 ms). Java runs as
//! `connect-distributed.sh` runs it (heap `-Xms256M -Xmx2G` unless `--java-heap`); Tributary's
//! JVM gets the same heap options (`tributary.jvm.options`). Prints the medians, each round and
//! the ratios. A measurement, not a test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tributary_bench::java::JavaCmd;
use tributary_bench::kafka::Broker;
use tributary_bench::proc_stats::{self, memory, RssSampler};
use tributary_bench::rest::Rest;
use tributary_bench::source_run::{median, start, wait_ready};
use tributary_bench::table::Table;
use tributary_bench::{exit_status, say, stamp, tempdir, worker, Runtime, RuntimeArgs};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "debezium-snapshot",
    about = "Debezium PostgreSQL snapshot of a large table: records/s and RSS hosted by \
             Tributary and by Java Connect 4.1.1 in the same run; idle RSS with plugin.path set."
)]
struct Args {
    /// Rows in the snapshotted table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Row changes streamed after the snapshot (0: none); a multiple of 4 (half updates, a
    /// quarter inserts, a quarter deletes).
    #[arg(long, default_value_t = 1_000_000)]
    changes: u64,
    /// Rounds; the table shows the median of the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// Java maximum heap (`-Xmx`), of Java Connect and of Tributary's JVM; Connect's start
    /// script uses 2G.
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// `scripts/postgres` (its `env` and `psql` commands reach the database).
    #[arg(long)]
    postgres: PathBuf,
    /// The `plugin.path` holding Debezium's PostgreSQL connector (`scripts/plugins debezium`).
    #[arg(long)]
    plugin_path: PathBuf,
    /// Tributary's Java bridge class path (`scripts/jvm-bridge classpath`).
    #[arg(long)]
    jvm_classpath: String,
    /// Seconds an idle worker runs before its memory is read.
    #[arg(long, default_value_t = 5)]
    idle_secs: u64,
    /// Only these variants (`native`, `hosted`, `java`, comma-separated; default all three),
    /// e.g. to profile one: the ratios to Java need `java`.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// The database connection settings `scripts/postgres env` prints.
struct Pg {
    script: PathBuf,
    host: String,
    port: String,
    user: String,
    password: String,
}

impl Pg {
    fn from_script(script: &Path) -> Result<Pg, String> {
        let out = Command::new(script)
            .arg("env")
            .output()
            .map_err(|e| format!("{}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!("{} env failed", script.display()));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let get = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(str::to_string)
                .ok_or_else(|| format!("{} env printed no {k}", script.display()))
        };
        Ok(Pg {
            script: script.to_path_buf(),
            host: get("PG_HOST")?,
            port: get("PG_PORT")?,
            user: get("PG_USER")?,
            password: get("PG_PASSWORD")?,
        })
    }

    /// Runs the statements of `script` (read from standard input, so it may be long) in
    /// database `db`.
    fn script(&self, db: &str, script: &str) -> Result<(), String> {
        use std::io::Write;
        let mut child = Command::new(&self.script)
            .args(["psql", "-d", db, "-v", "ON_ERROR_STOP=1", "-Atq", "-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", self.script.display()))?;
        child
            .stdin
            .take()
            .ok_or("psql has no stdin")?
            .write_all(script.as_bytes())
            .map_err(|e| format!("writing to psql: {e}"))?;
        let out = child.wait_with_output().map_err(|e| format!("psql: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "psql -d {db} -f -: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    }

    /// Runs `sql` in database `db`; returns its unaligned output.
    fn sql(&self, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(&self.script)
            .args(["psql", "-d", db, "-v", "ON_ERROR_STOP=1", "-Atq", "-c", sql])
            .output()
            .map_err(|e| format!("{}: {e}", self.script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "psql -d {db} -c {sql:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

/// One snapshot: records/s from the POST, seconds to the first record, records/s from the
/// first record on, and the worker's peak RSS (KiB) over the snapshot and the stream; the
/// stream's records/s (0 without changes).
struct Snapshot {
    records_per_sec: f64,
    first_record_secs: f64,
    records_per_sec_after_first: f64,
    peak_rss_kib: u64,
    stream_records_per_sec: f64,
    /// While the stream caught up: the CPU PostgreSQL's walsender serving the slot used, and
    /// the worker's, in cores (CPU seconds over the seconds it took; 0 without changes).
    stream_walsender_cores: f64,
    stream_worker_cores: f64,
}

/// What runs the connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Variant {
    /// Tributary's native connector (`connector.plugin.version` = Tributary's version).
    Native,
    /// Debezium's plugin hosted by Tributary.
    Hosted,
    /// Debezium's plugin on Java Connect.
    Java,
}

impl Variant {
    fn runtime(self) -> Runtime {
        match self {
            Variant::Java => Runtime::Java,
            _ => Runtime::Tributary,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Variant::Native => "native",
            Variant::Hosted => "hosted",
            Variant::Java => "java",
        }
    }

    fn title(self, heap: &str) -> String {
        match self {
            Variant::Native => "Tributary, native connector".to_string(),
            Variant::Hosted => format!("Tributary hosting Debezium (JVM -Xmx{heap})"),
            Variant::Java => format!("{} (-Xmx{heap})", Runtime::Java.title()),
        }
    }

    /// `connector.plugin.version`, when chosen.
    fn plugin_version(self) -> Option<&'static str> {
        match self {
            Variant::Native => Some(env!("CARGO_PKG_VERSION")),
            Variant::Hosted => Some(DEBEZIUM_VERSION),
            Variant::Java => None,
        }
    }
}

/// Debezium's release on `plugin.path` (`scripts/plugins debezium`).
const DEBEZIUM_VERSION: &str = "3.6.1.Final";

/// The change script: `changes / 2` updates of existing rows, `changes / 4` inserts of new
/// rows (ids after `rows`) and as many deletes of them, in transactions of 1, 10, 100 and 1,000
/// rows in turn; the table ends as it began but for the amounts. Returns the script and the
/// records it gives (a delete gives two: the event and its tombstone).
fn change_script(rows: u64, changes: u64) -> (String, u64) {
    let sizes = [1u64, 10, 100, 1000];
    let mut script = String::new();
    let emit = |kind: &str, total: u64, first_id: u64, script: &mut String| {
        let (mut done, mut turn) = (0u64, 0usize);
        while done < total {
            let n = sizes[turn % sizes.len()].min(total - done);
            let (a, b) = (first_id + done, first_id + done + n - 1);
            let sql = match kind {
                "update" => {
                    format!("UPDATE rows SET amount = amount + 1 WHERE id BETWEEN {a} AND {b}")
                }
                "insert" => format!(
                    "INSERT INTO rows SELECT g, 'customer ' || g, 'c' || g || '@example.com', \
                     (g % 100000) / 100.0, timestamp '2026-01-01' + g * interval '1 second' \
                     FROM generate_series({a}, {b}) g"
                ),
                _ => format!("DELETE FROM rows WHERE id BETWEEN {a} AND {b}"),
            };
            script.push_str(&format!("BEGIN;\n{sql};\nCOMMIT;\n"));
            done += n;
            turn += 1;
        }
    };
    let (updates, inserts) = (changes / 2, changes / 4);
    emit("update", updates.min(rows), 1, &mut script);
    emit("insert", inserts, rows + 1, &mut script);
    emit("delete", inserts, rows + 1, &mut script);
    (script, updates.min(rows) + inserts + 2 * inserts)
}

fn worker_props(
    args: &Args,
    runtime: Runtime,
    bootstrap: &str,
    group: &str,
) -> Vec<(String, String)> {
    let mut props = worker::distributed_properties(bootstrap, group);
    for (k, v) in props.iter_mut() {
        if k == "key.converter" || k == "value.converter" {
            *v = "org.apache.kafka.connect.json.JsonConverter".into();
        }
    }
    props.push(("plugin.path".into(), args.plugin_path.display().to_string()));
    if runtime == Runtime::Tributary {
        props.push(("tributary.jvm.classpath".into(), args.jvm_classpath.clone()));
        props.push((
            "tributary.jvm.options".into(),
            format!("-Xms256M -Xmx{}", args.java_heap),
        ));
    }
    props
}

/// Waits until the connector and its task report `state`.
fn wait_connector_state(rest: &Rest, state: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = rest.get("/connectors/dbz/status")?;
        if body["connector"]["state"] == state
            && body["tasks"]
                .as_array()
                .is_some_and(|t| !t.is_empty() && t.iter().all(|t| t["state"] == state))
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("the connector is not {state} after 120 s: {body}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pid of PostgreSQL's walsender serving `slot` once a connection streams from it (at
/// most 120 s), as a string for `/proc/<pid>`.
fn walsender_pid(ctx: &Context<'_>, slot: &str) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let pid = ctx.pg.sql(
            "postgres",
            &format!(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '{slot}' AND active"
            ),
        )?;
        if !pid.is_empty() {
            return Ok(pid);
        }
        if Instant::now() > deadline {
            return Err(format!("no walsender streams from slot {slot} after 120 s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `topic` holds `count` records (at most 1800 s); returns when it did.
fn wait_records(
    ctx: &Context<'_>,
    w: &mut tributary_bench::worker::Worker,
    rest: &Rest,
    topic: &str,
    count: i64,
) -> Result<Instant, String> {
    let deadline = Instant::now() + Duration::from_secs(1800);
    let mut polls = 0u64;
    loop {
        let end = ctx.admin.try_end_offset(topic).unwrap_or(0);
        if end >= count {
            return Ok(Instant::now());
        }
        w.check_alive()?;
        polls += 1;
        // A failed task gives no more records: say so now rather than at the deadline.
        if polls.is_multiple_of(40) {
            let (_, status) = rest.get("/connectors/dbz/status")?;
            if status.to_string().contains("\"FAILED\"") {
                return Err(format!("the connector failed: {status}"));
            }
        }
        if Instant::now() > deadline {
            let status = rest.get("/connectors/dbz/status").map(|r| r.1);
            return Err(format!(
                "{end} of {count} records in {topic} after 1800 s; status {status:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn snapshot(
    args: &Args,
    variant: Variant,
    ctx: &Context<'_>,
    name: &str,
) -> Result<Snapshot, String> {
    let runtime = variant.runtime();
    let group = format!("dbzbench-{name}");
    let prefix = format!("dbz{name}").replace('-', "");
    let topic = format!("{prefix}.public.rows");
    ctx.admin.create_topic(&topic)?;
    let props = worker_props(args, runtime, &ctx.bootstrap, &group);
    let dir = ctx.work.join(&group);
    let (mut w, base) = start(runtime, ctx.binary, ctx.java, &dir, props)?;
    let rest = Rest::new(&base, Duration::from_secs(30))?;
    let slot = format!("bench_{}", prefix.to_lowercase());
    let result = (|| {
        wait_ready(&mut w, &rest, runtime)?;
        let config = json!({
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "tasks.max": "1",
            "database.hostname": ctx.pg.host,
            "database.port": ctx.pg.port,
            "database.user": ctx.pg.user,
            "database.password": ctx.pg.password,
            "database.dbname": DATABASE,
            "topic.prefix": prefix,
            "plugin.name": "pgoutput",
            "slot.name": slot,
            "slot.drop.on.stop": "false",
            "publication.name": format!("{slot}_pub"),
            "publication.autocreate.mode": "filtered",
            "table.include.list": "public.rows",
            // Plain connections for every variant, as the README's figures were measured
            // (scripts/postgres offers TLS, which `prefer` would take).
            "database.sslmode": "disable",
            "snapshot.mode": "initial",
        });
        let mut config = config;
        if let Some(v) = variant.plugin_version() {
            config["connector.plugin.version"] = json!(v);
        }
        let sampler = RssSampler::start(w.pid(), Duration::from_millis(100));
        let began = Instant::now();
        let (code, body) = rest.send(
            "POST",
            "/connectors",
            Some(&json!({"name": "dbz", "config": config})),
        )?;
        if code != 201 {
            return Err(format!("create answered {code}: {body}"));
        }
        let deadline = Instant::now() + Duration::from_secs(1800);
        let mut first: Option<(Instant, i64)> = None;
        loop {
            let end = ctx.admin.try_end_offset(&topic).unwrap_or(0);
            if end > 0 && first.is_none() {
                first = Some((Instant::now(), end));
            }
            if end >= args.rows as i64 {
                break;
            }
            w.check_alive()?;
            if Instant::now() > deadline {
                let status = rest.get("/connectors/dbz/status").map(|r| r.1);
                return Err(format!(
                    "{end} of {} records in {topic} after 1800 s; status {status:?}",
                    args.rows
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let took = began.elapsed();
        let (first_at, first_count) = first.unwrap_or((Instant::now(), 0));
        let after_first = first_at.elapsed().as_secs_f64();
        let mut stream_records_per_sec = 0.0;
        let (mut stream_walsender_cores, mut stream_worker_cores) = (0.0, 0.0);
        if args.changes > 0 {
            // The stream: changes made while the connector is paused, then caught up on.
            let (code, body) = rest.send("PUT", "/connectors/dbz/pause", None)?;
            if code != 202 {
                return Err(format!("pause answered {code}: {body}"));
            }
            wait_connector_state(&rest, "PAUSED")?;
            let (script, records) = change_script(args.rows, args.changes);
            ctx.pg.script(DATABASE, &script)?;
            let resumed = Instant::now();
            let (code, body) = rest.send("PUT", "/connectors/dbz/resume", None)?;
            if code != 202 {
                return Err(format!("resume answered {code}: {body}"));
            }
            // The walsender serving the slot once the connector streams again, and the CPU it
            // and the worker use until the stream caught up: which of them is the bottleneck.
            let walsender = walsender_pid(ctx, &slot)?;
            let worker = w.pid().to_string();
            let cpu = |pid: &str| proc_stats::cpu_seconds(pid).unwrap_or(0.0);
            let (walsender_0, worker_0, t0) = (cpu(&walsender), cpu(&worker), Instant::now());
            let done = wait_records(ctx, &mut w, &rest, &topic, (args.rows + records) as i64)?;
            let (walsender_1, worker_1) = (cpu(&walsender), cpu(&worker));
            let span = done.duration_since(t0).as_secs_f64().max(0.001);
            stream_walsender_cores = (walsender_1 - walsender_0) / span;
            stream_worker_cores = (worker_1 - worker_0) / span;
            stream_records_per_sec = records as f64 / done.duration_since(resumed).as_secs_f64();
        }
        Ok(Snapshot {
            records_per_sec: args.rows as f64 / took.as_secs_f64(),
            first_record_secs: first_at.duration_since(began).as_secs_f64(),
            records_per_sec_after_first: (args.rows as i64 - first_count) as f64
                / after_first.max(0.001),
            peak_rss_kib: sampler.finish(),
            stream_records_per_sec,
            stream_walsender_cores,
            stream_worker_cores,
        })
    })();
    // Stopped, then its slot is dropped (slot.drop.on.stop stays false: the native connector
    // does not implement it yet, and a slot in use cannot be dropped).
    rest.send("DELETE", "/connectors/dbz", None).ok();
    w.terminate(Duration::from_secs(60));
    ctx.pg
        .sql(
            "postgres",
            &format!(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{slot}'"
            ),
        )
        .ok();
    let mut topics: Vec<String> = worker::internal_topics(&group).to_vec();
    topics.push(topic);
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    ctx.admin.delete_topics(&names);
    result
}

/// The idle RSS (KiB) of a Tributary worker `idle_secs` after it joined, with or without
/// `plugin.path`.
fn idle_rss(args: &Args, ctx: &Context<'_>, with_plugins: bool, name: &str) -> Result<u64, String> {
    let group = format!("dbzbench-idle-{name}");
    let mut props = worker::distributed_properties(&ctx.bootstrap, &group);
    if with_plugins {
        props.push(("plugin.path".into(), args.plugin_path.display().to_string()));
        props.push(("tributary.jvm.classpath".into(), args.jvm_classpath.clone()));
    }
    let dir = ctx.work.join(&group);
    let (mut w, base) = start(Runtime::Tributary, ctx.binary, ctx.java, &dir, props)?;
    let rest = Rest::new(&base, Duration::from_secs(30))?;
    let result = (|| {
        wait_ready(&mut w, &rest, Runtime::Tributary)?;
        // The plugins are listed (the scan ran), and still no JVM.
        let (_, plugins) = rest.get("/connector-plugins")?;
        if with_plugins && !plugins.to_string().contains("PostgresConnector") {
            return Err(format!("Debezium's connector is not listed: {plugins}"));
        }
        std::thread::sleep(Duration::from_secs(args.idle_secs));
        memory(w.pid())
            .map(|m| m.rss_kib)
            .ok_or_else(|| "could not read the worker's memory".to_string())
    })();
    w.terminate(Duration::from_secs(30));
    let topics = worker::internal_topics(&group);
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    ctx.admin.delete_topics(&names);
    result
}

const DATABASE: &str = "tributary_bench_dbz";

/// What every measurement of a run shares.
struct Context<'a> {
    binary: &'a Path,
    java: &'a JavaCmd,
    admin: &'a Broker,
    bootstrap: String,
    work: &'a Path,
    pg: &'a Pg,
}

fn run(args: &Args) -> Result<(), String> {
    let binary = tributary_bench::tributary_binary(args.runtimes.tributary.as_deref())?;
    let work = tempdir()?;
    let java = JavaCmd::for_benchmark(
        args.runtimes.connect_java.as_deref(),
        &args.java_heap,
        work.path(),
    )?;
    let bootstrap = tributary_bench::bootstrap(args.runtimes.bootstrap.as_deref());
    let admin = Broker::connect(&bootstrap)?;
    let pg = Pg::from_script(&args.postgres)?;
    say(format!(
        "making table public.rows of {} rows in database {DATABASE}",
        args.rows
    ));
    pg.sql("postgres", &format!("DROP DATABASE IF EXISTS {DATABASE}"))?;
    pg.sql("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
    pg.sql(
        DATABASE,
        &format!(
            "CREATE TABLE rows (id integer PRIMARY KEY, name text NOT NULL, email text, \
             amount numeric(12,2), created timestamp NOT NULL); \
             INSERT INTO rows SELECT g, 'customer ' || g, 'c' || g || '@example.com', \
             (g % 100000) / 100.0, timestamp '2026-01-01' + g * interval '1 second' \
             FROM generate_series(1, {}) g; ANALYZE rows;",
            args.rows
        ),
    )?;
    let ctx = Context {
        binary: &binary,
        java: &java,
        admin: &admin,
        bootstrap: bootstrap.clone(),
        work: work.path(),
        pg: &pg,
    };
    let run = stamp();
    let rounds = args.rounds.max(1);
    let mut results: BTreeMap<Variant, Vec<Snapshot>> = BTreeMap::new();
    let mut per_round = Table::new(&[
        "round",
        "runs the connector",
        "snapshot records/s",
        "POST → first record s",
        "records/s after first",
        "stream records/s",
        "peak RSS MiB",
    ]);
    let heap = &args.java_heap;
    for round in 1..=rounds {
        let mut order = [Variant::Java, Variant::Hosted, Variant::Native];
        // Each variant first in turn.
        order.rotate_left((round - 1) % 3);
        for variant in order {
            if !args.only.is_empty() && !args.only.iter().any(|o| o == variant.label()) {
                continue;
            }
            let name = format!("{run}-{round}-{}", variant.label());
            let s = snapshot(args, variant, &ctx, &name)?;
            say(format!(
                "round {round}: {}: snapshot {:.0} records/s ({:.1} s to the first record, {:.0} \
                 records/s after it), stream {:.0} records/s (walsender {:.2} of a core, worker \
                 {:.2} cores), peak RSS {} MiB",
                variant.title(heap),
                s.records_per_sec,
                s.first_record_secs,
                s.records_per_sec_after_first,
                s.stream_records_per_sec,
                s.stream_walsender_cores,
                s.stream_worker_cores,
                s.peak_rss_kib / 1024
            ));
            per_round.row(
                round.to_string(),
                vec![
                    variant.title(heap),
                    format!("{:.0}", s.records_per_sec),
                    format!("{:.1}", s.first_record_secs),
                    format!("{:.0}", s.records_per_sec_after_first),
                    format!("{:.0}", s.stream_records_per_sec),
                    format!("{}", s.peak_rss_kib / 1024),
                ],
            );
            results.entry(variant).or_default().push(s);
        }
    }
    let idle_plain = idle_rss(args, &ctx, false, &format!("{run}-plain"))?;
    let idle_plugins = idle_rss(args, &ctx, true, &format!("{run}-plugins"))?;
    pg.sql("postgres", &format!("DROP DATABASE IF EXISTS {DATABASE}"))
        .ok();

    let med = |r: Variant, f: fn(&Snapshot) -> f64| {
        median(
            results
                .get(&r)
                .map(|v| v.iter().map(f).collect())
                .unwrap_or_default(),
        )
    };
    let rate = |r: Variant| med(r, |s| s.records_per_sec);
    let first = |r: Variant| med(r, |s| s.first_record_secs);
    let after = |r: Variant| med(r, |s| s.records_per_sec_after_first);
    let stream = |r: Variant| med(r, |s| s.stream_records_per_sec);
    let rss = |r: Variant| med(r, |s| s.peak_rss_kib as f64 / 1024.0);
    let walsender = |r: Variant| med(r, |s| s.stream_walsender_cores);
    let worker = |r: Variant| med(r, |s| s.stream_worker_cores);
    let mut table = Table::new(&[
        "Debezium PostgreSQL (median)",
        "snapshot records/s",
        "POST → first record s",
        "records/s after first",
        "stream records/s",
        "peak RSS MiB",
    ]);
    let all = [Variant::Native, Variant::Hosted, Variant::Java];
    for variant in all {
        table.row(
            variant.title(heap),
            vec![
                format!("{:.0}", rate(variant)),
                format!("{:.1}", first(variant)),
                format!("{:.0}", after(variant)),
                format!("{:.0}", stream(variant)),
                format!("{:.0}", rss(variant)),
            ],
        );
    }
    for variant in [Variant::Native, Variant::Hosted] {
        let ratio = |f: &dyn Fn(Variant) -> f64| format!("{:.2}x", f(variant) / f(Variant::Java));
        table.row(
            format!("{} / Java", variant.title(heap)),
            vec![
                ratio(&rate),
                ratio(&first),
                ratio(&after),
                ratio(&stream),
                ratio(&rss),
            ],
        );
    }
    println!(
        "Median of {rounds} round(s), a table of {} rows then {} row changes, JsonConverter with schemas:",
        args.rows, args.changes
    );
    print!("{}", table.text());
    println!("\nEach round:");
    print!("{}", per_round.text());
    println!();
    print!("{}", table.markdown());
    println!("\nWhile the stream caught up (median), CPU in cores of PostgreSQL's walsender / of the worker:");
    for variant in all {
        println!(
            "  {}: walsender {:.2}, worker {:.2}",
            variant.title(heap),
            walsender(variant),
            worker(variant)
        );
    }
    println!(
        "\nIdle Tributary worker RSS: {} MiB without plugin.path, {} MiB with plugin.path \
         (Debezium listed, no Java plugin in use, no JVM started)",
        idle_plain / 1024,
        idle_plugins / 1024
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit_status("debezium-snapshot", run(&args))
}
