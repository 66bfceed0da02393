//! The Debezium pipeline of issue #15 on Tributary workers, on the real broker and a real
//! PostgreSQL: Debezium's PostgreSQL source connector (`debezium-connector-postgres`
//! 3.6.1.Final) reads a table through `pgoutput`, Kafka carries its change events, and
//! Debezium's JDBC sink (`debezium-connector-jdbc`) writes them into a second database. The
//! plugin jars are Debezium's own plugin archives from Maven Central, unpacked unchanged
//! (`scripts/plugins`); PostgreSQL is Debian's, a throwaway cluster with `wal_level=logical`
//! (`scripts/postgres`, whose `env` gives `PG_PORT` and friends; `scripts/test` starts it).
//!
//! - the snapshot, then an INSERT, an UPDATE and a DELETE arrive in Kafka with the keys and
//!   values Debezium gives them (JsonConverter envelopes, schemas on), and equal to what the
//!   same connector writes on Apache Kafka Connect 4.1.1 (`scripts/connect-java`);
//! - the JDBC sink, on a distributed worker, makes the target table equal to the source table;
//! - a worker killed with SIGKILL while rows are being inserted resumes from its stored offset
//!   and every row reaches Kafka.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::postgres::Pg;
use common::*;
use serde_json::{json, Value};

const PG_SOURCE: &str = "io.debezium.connector.postgresql.PostgresConnector";
const JDBC_SINK: &str = "io.debezium.connector.jdbc.JdbcSinkConnector";

/// Worker lines: JsonConverter for keys and values (Debezium's events carry schemas, which
/// the JDBC sink needs), the JVM and the plugin path.
fn worker_extra(classpath: &str, plugin_path: &str) -> String {
    format!(
        "key.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\nplugin.path={plugin_path}\ntributary.jvm.classpath={classpath}\ntributary.jvm.options=-Xmx512m -XX:+UseSerialGC\n"
    )
}

/// `config` with Debezium's own version of the class chosen (KIP-891): the native one is the
/// default.
fn hosted(mut config: BTreeMap<String, String>) -> BTreeMap<String, String> {
    config.insert("connector.plugin.version".into(), "3.6.1.Final".into());
    config
}

fn properties(name: &str, config: &BTreeMap<String, String>) -> String {
    let mut s = format!("name={name}\n");
    for (k, v) in config {
        s.push_str(&format!("{k}={v}\n"));
    }
    s
}

/// The source table every test starts from: three rows.
fn create_customers(pg: &Pg, db: &str) {
    pg.sql(
        db,
        "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text);
         INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Brendan', NULL),
           (3, 'Chloé', 'chloe@example.com');",
    );
}

/// An INSERT, an UPDATE and a DELETE (three transactions) of the table of [`create_customers`].
fn change_customers(pg: &Pg, db: &str) {
    pg.sql(
        db,
        "INSERT INTO customers VALUES (4, 'Dmitri', 'dmitri@example.com');
         UPDATE customers SET email = 'brendan@example.com' WHERE id = 2;
         DELETE FROM customers WHERE id = 3;",
    );
}

/// A record read back: key and value as JSON (`Null` for a tombstone).
fn json_records(bootstrap: &str, topic: &str) -> Vec<(Value, Value)> {
    read_topic_records(bootstrap, topic)
        .into_iter()
        .map(|(k, v)| {
            let parse = |b: &[u8]| {
                if b.is_empty() {
                    Value::Null
                } else {
                    serde_json::from_slice(b).unwrap()
                }
            };
            (parse(&k), parse(&v))
        })
        .collect()
}

/// Waits until `topic` holds at least `n` records and returns them all.
fn wait_records(
    bootstrap: &str,
    topic: &str,
    n: usize,
    w: &StandaloneWorker,
) -> Vec<(Value, Value)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        if topic_end(bootstrap, topic) >= n as i64 {
            return json_records(bootstrap, topic);
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "timed out waiting for {n} records in {topic} (have {}); worker log:\n{}",
                topic_end(bootstrap, topic),
                w.log_text()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Snapshot (op `r`), then INSERT (`c`), UPDATE (`u`) and DELETE (`d` and a tombstone) of
/// `public.customers` reach `<prefix>.public.customers` from Debezium's task hosted by a
/// standalone Tributary worker, with Debezium's keys (the primary key struct) and values (the
/// change event envelope: before, after, source, op), as JsonConverter writes them.
#[test]
fn debezium_snapshot_then_changes_reach_kafka() {
    let Some(bootstrap) = kafka() else { return };
    let Some(pg) = Pg::from_env() else { return };
    let Some((classpath, plugin_path)) = debezium_plugins() else {
        return;
    };
    let db = unique("dbz_src").replace('-', "_");
    let _db_guard = pg.create_db(&db);
    create_customers(&pg, &db);
    let prefix = unique("dbz");
    let topic = format!("{prefix}.public.customers");

    let dir = test_dir();
    std::fs::write(
        dir.path().join("pg.properties"),
        properties("pg-source", &hosted(pg.source_config(&db, &prefix))),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &worker_extra(&classpath, &plugin_path),
        &["pg.properties"],
    );
    w.wait_state("pg-source", 1, "RUNNING");
    let snapshot = wait_records(&bootstrap, &topic, 3, &w);
    let ops: Vec<_> = snapshot
        .iter()
        .map(|(_, v)| v["payload"]["op"].clone())
        .collect();
    assert_eq!(
        ops,
        vec![json!("r"), json!("r"), json!("r")],
        "{snapshot:?}"
    );
    let ids: Vec<_> = snapshot
        .iter()
        .map(|(k, _)| k["payload"]["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1), json!(2), json!(3)]);
    // The key is the primary key struct, with its schema (JsonConverter, schemas on).
    assert_eq!(
        snapshot[0].0["schema"]["fields"],
        json!([{"type": "int32", "optional": false, "field": "id"}]),
        "{:?}",
        snapshot[0].0
    );
    let after = &snapshot[2].1["payload"]["after"];
    assert_eq!(
        after,
        &json!({"id": 3, "name": "Chloé", "email": "chloe@example.com"})
    );
    assert_eq!(snapshot[0].1["payload"]["source"]["db"], json!(db));
    assert_eq!(
        snapshot[0].1["payload"]["source"]["connector"],
        json!("postgresql")
    );

    change_customers(&pg, &db);
    // c, u, d and the delete's tombstone.
    let all = wait_records(&bootstrap, &topic, 7, &w);
    let changes = &all[3..];
    assert_eq!(changes[0].0["payload"], json!({"id": 4}));
    assert_eq!(changes[0].1["payload"]["op"], json!("c"));
    assert_eq!(
        changes[0].1["payload"]["after"],
        json!({"id": 4, "name": "Dmitri", "email": "dmitri@example.com"})
    );
    assert_eq!(changes[1].0["payload"], json!({"id": 2}));
    assert_eq!(changes[1].1["payload"]["op"], json!("u"));
    assert_eq!(
        changes[1].1["payload"]["after"],
        json!({"id": 2, "name": "Brendan", "email": "brendan@example.com"})
    );
    assert_eq!(changes[2].0["payload"], json!({"id": 3}));
    assert_eq!(changes[2].1["payload"]["op"], json!("d"));
    assert_eq!(changes[2].1["payload"]["after"], Value::Null);
    assert_eq!(changes[2].1["payload"]["before"]["id"], json!(3));
    assert_eq!(changes[3].0["payload"], json!({"id": 3}));
    assert_eq!(changes[3].1, Value::Null, "the delete's tombstone");
    // The task's commit() (called after the worker stored its offsets) confirms what was
    // written to the replication slot, so PostgreSQL may recycle that WAL: the slot's
    // confirmed_flush_lsn reaches the last change's LSN.
    let last_lsn = changes[2].1["payload"]["source"]["lsn"].as_i64().unwrap();
    assert!(last_lsn > 0);
    let slot_sql = format!(
        "SELECT coalesce(confirmed_flush_lsn - '0/0', 0) FROM pg_replication_slots WHERE slot_name = 'slot_{db}'"
    );
    wait_for(
        "the replication slot to confirm the streamed changes",
        Duration::from_secs(60),
        || {
            let flushed: i64 = pg.sql("postgres", &slot_sql).trim().parse().unwrap_or(0);
            (flushed >= last_lsn).then_some(())
        },
    );
}

/// PostgreSQL → Debezium's PostgresConnector → Kafka → Debezium JDBC sink → PostgreSQL on a
/// distributed Tributary worker, both created over REST (the source runs natively, its class's
/// default version; the sink hosted): after the snapshot and a series of inserts, updates and
/// deletes, the target table equals the source table.
#[test]
fn jdbc_sink_makes_the_target_table_equal_to_the_source() {
    let Some(bootstrap) = kafka() else { return };
    let Some(pg) = Pg::from_env() else { return };
    let Some((classpath, plugin_path)) = debezium_plugins() else {
        return;
    };
    jdbc_pipeline(
        &bootstrap,
        &pg,
        &worker_extra(&classpath, &plugin_path),
        |_| {},
    );
}

/// The same pipeline with Avro: Debezium's events are written by Tributary's native
/// `io.confluent.connect.avro.AvroConverter` (keys and values) into a real schema registry and
/// read back by the JDBC sink through the same converter; the target table equals the source.
/// The registry holds the key and value subjects, the value's schema being Debezium's
/// envelope record.
#[test]
fn jdbc_sink_makes_the_target_table_equal_to_the_source_through_avro() {
    let Some(bootstrap) = kafka() else { return };
    let Some(pg) = Pg::from_env() else { return };
    let Some((classpath, plugin_path)) = debezium_plugins() else {
        return;
    };
    let Some(registry) = schema_registry() else {
        return;
    };
    let url = registry.ccompat.clone();
    let extra = format!(
        "key.converter=io.confluent.connect.avro.AvroConverter\nkey.converter.schema.registry.url={url}\nvalue.converter=io.confluent.connect.avro.AvroConverter\nvalue.converter.schema.registry.url={url}\nplugin.path={plugin_path}\ntributary.jvm.classpath={classpath}\ntributary.jvm.options=-Xmx512m -XX:+UseSerialGC\n"
    );
    jdbc_pipeline(&bootstrap, &pg, &extra, |topic| {
        let latest = |subject: &str| -> Value {
            let r = reqwest::blocking::get(format!("{url}/subjects/{subject}/versions/latest"))
                .unwrap();
            assert_eq!(r.status().as_u16(), 200, "{subject}");
            let body: Value = r.json().unwrap();
            serde_json::from_str(body["schema"].as_str().unwrap()).unwrap()
        };
        let key = latest(&format!("{topic}-key"));
        assert_eq!(key["type"], "record", "{key}");
        assert_eq!(key["connect.name"], format!("{topic}.Key"), "{key}");
        let value = latest(&format!("{topic}-value"));
        assert_eq!(
            value["connect.name"],
            format!("{topic}.Envelope"),
            "{value}"
        );
        let fields: Vec<&str> = value["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert!(
            fields.starts_with(&["before", "after", "source"]),
            "{value}"
        );
        assert!(fields.contains(&"op"), "{value}");
        // `after` refers to the record `before` defined, by name, as Avro requires.
        assert_eq!(
            value["fields"][1]["type"],
            json!(["null", "Value"]),
            "{value}"
        );
        for r in read_topic(&bootstrap, topic)
            .iter()
            .filter(|r| !r.is_empty())
        {
            assert_eq!(r[0], 0, "Confluent's magic byte");
        }
    });
}

/// Debezium's PostgreSQL source and JDBC sink on one distributed worker whose converters are
/// set by `extra`: the snapshot and then inserts, updates and deletes make the target table
/// equal to the source. `check` is called with the topic once the target is equal.
fn jdbc_pipeline(bootstrap: &str, pg: &Pg, extra: &str, check: impl Fn(&str)) {
    let bootstrap = bootstrap.to_string();
    let src = unique("dbz_pipe_src").replace('-', "_");
    let dst = unique("dbz_pipe_dst").replace('-', "_");
    let _src_guard = pg.create_db(&src);
    let _dst_guard = pg.create_db(&dst);
    create_customers(pg, &src);
    // A topic prefix Avro accepts in a record name (Debezium names its schemas after it).
    let prefix = unique("pipe").replace('-', "_");
    let topic = format!("{prefix}.public.customers");
    create_topic(&bootstrap, &topic, 1);

    let dir = test_dir();
    let group = unique("dbz-pipeline");
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    w.wait_joined();
    // Both plugins are listed with their own versions.
    let (code, listed) = w.get("/connector-plugins");
    assert_eq!(code, 200, "{listed}");
    let version = |class: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["class"] == class)
            .map(|p| (p["type"].clone(), p["version"].clone()))
    };
    // Debezium's PostgresConnector beside the native version of the class (issue #45), each
    // listed under its own version (KIP-891); the native one is the default and runs here.
    let pg_versions: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == PG_SOURCE && p["type"] == "source")
        .map(|p| &p["version"])
        .collect();
    assert_eq!(
        pg_versions,
        vec![&json!(env!("CARGO_PKG_VERSION")), &json!("3.6.1.Final")],
        "{listed}"
    );
    assert_eq!(
        version(JDBC_SINK).map(|v| v.0),
        Some(json!("sink")),
        "{listed}"
    );
    // Debezium's own validation answers over REST: a config without the database settings
    // is refused key by key.
    let (code, v) = w.send(
        "PUT",
        &format!("/connector-plugins/{PG_SOURCE}/config/validate"),
        Some(&json!({"connector.class": PG_SOURCE, "name": "v", "topic.prefix": "v"}).to_string()),
    );
    assert_eq!(code, 200, "{v}");
    assert!(v["error_count"].as_i64().unwrap() > 0, "{v}");
    let errors_of = |key: &str| -> Vec<Value> {
        v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == key)
            .map(|c| c["value"]["errors"].as_array().unwrap().clone())
            .unwrap_or_default()
    };
    assert!(!errors_of("database.hostname").is_empty(), "{v}");
    assert!(errors_of("topic.prefix").is_empty(), "{v}");
    let create = |name: &str, config: Value| {
        let body = json!({"name": name, "config": config});
        let (code, resp) = w.send("POST", "/connectors", Some(&body.to_string()));
        assert_eq!(code, 201, "{resp}");
    };
    create("pg-source", json!(pg.source_config(&src, &prefix)));
    create(
        "jdbc-sink",
        json!({
            "connector.class": JDBC_SINK,
            "tasks.max": "1",
            "topics": topic,
            "connection.url": format!("jdbc:postgresql://{}:{}/{dst}", pg.host, pg.port),
            "connection.username": pg.user,
            "connection.password": pg.password,
            "insert.mode": "upsert",
            "delete.enabled": "true",
            "primary.key.mode": "record_key",
            "schema.evolution": "basic",
            "collection.name.format": "customers",
        }),
    );
    w.wait_state("pg-source", 1, "RUNNING");
    w.wait_state("jdbc-sink", 1, "RUNNING");

    let rows = "SELECT id, name, coalesce(email, '<null>') FROM customers ORDER BY id";
    let wait_equal = |what: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(180);
        loop {
            let want = pg.sql(&src, rows);
            let have = pg.sql(&dst, "SELECT to_regclass('customers') IS NOT NULL");
            if have.trim() == "t" && pg.sql(&dst, rows) == want {
                return want;
            }
            if std::time::Instant::now() > deadline {
                panic!(
                    "{what}: the target never equalled the source ({want:?}); sink status {}; worker log:\n{}",
                    w.get("/connectors/jdbc-sink/status").1,
                    w.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let after_snapshot = wait_equal("after the snapshot");
    assert_eq!(after_snapshot.lines().count(), 3);

    pg.sql(
        &src,
        "INSERT INTO customers SELECT g, 'name ' || g, 'mail' || g || '@example.com'
           FROM generate_series(10, 209) g;
         UPDATE customers SET name = name || ' (updated)' WHERE id % 3 = 0;
         UPDATE customers SET email = NULL WHERE id = 1;
         DELETE FROM customers WHERE id % 5 = 0;
         INSERT INTO customers VALUES (500, 'Zoë', 'zoe@example.com');",
    );
    let end = wait_equal("after the changes");
    // 3 snapshot rows + 200 inserted + 1, minus the deleted multiples of 5 among 10..209 (40).
    assert_eq!(end.lines().count(), 3 + 200 + 1 - 40, "{end}");
    assert!(end.contains("1|Ada|<null>"), "{end}");
    assert!(end.contains("500|Zoë|zoe@example.com"), "{end}");
    assert!(
        end.contains("12|name 12 (updated)|mail12@example.com"),
        "{end}"
    );
    check(&topic);
}

/// A standalone worker hosting Debezium's source task is killed with SIGKILL while rows are
/// being inserted one transaction at a time; a new worker over the same offsets file resumes
/// from the stored offset (no second snapshot) and every inserted row reaches Kafka.
#[test]
fn killed_worker_resumes_from_its_stored_offset() {
    let Some(bootstrap) = kafka() else { return };
    let Some(pg) = Pg::from_env() else { return };
    let Some((classpath, plugin_path)) = debezium_plugins() else {
        return;
    };
    let db = unique("dbz_kill").replace('-', "_");
    let _db_guard = pg.create_db(&db);
    create_customers(&pg, &db);
    let prefix = unique("kill");
    let topic = format!("{prefix}.public.customers");

    let dir = test_dir();
    std::fs::write(
        dir.path().join("pg.properties"),
        properties("pg-source", &hosted(pg.source_config(&db, &prefix))),
    )
    .unwrap();
    let extra = worker_extra(&classpath, &plugin_path);
    let mut w = StandaloneWorker::start(dir.path(), &bootstrap, &extra, &["pg.properties"]);
    w.wait_state("pg-source", 1, "RUNNING");
    wait_records(&bootstrap, &topic, 3, &w);

    // Rows 1000.. inserted one transaction at a time: the first half while the first worker
    // streams (it is killed meanwhile), the second half once it is dead, across the restart.
    const ROWS: i64 = 400;
    let killed = Arc::new(AtomicBool::new(false));
    let writer = {
        let (pg, db, killed) = (pg.clone(), db.clone(), killed.clone());
        std::thread::spawn(move || {
            for i in 1000..1000 + ROWS {
                if i == 1000 + ROWS / 2 {
                    wait_for("the kill", Duration::from_secs(300), || {
                        killed.load(Ordering::Acquire).then_some(())
                    });
                }
                pg.sql(
                    &db,
                    &format!("INSERT INTO customers VALUES ({i}, 'row {i}', NULL)"),
                );
            }
        })
    };
    // Mid-stream: some rows are in Kafka, and the offsets file has a streaming offset (an
    // LSN past the snapshot), when the worker dies.
    wait_records(&bootstrap, &topic, 3 + 60, &w);
    wait_for(
        "a streaming offset in the offsets file",
        Duration::from_secs(60),
        || {
            let text = std::fs::read(dir.path().join("offsets")).unwrap_or_default();
            String::from_utf8_lossy(&text)
                .contains("lsn_proc")
                .then_some(())
        },
    );
    w.kill();
    killed.store(true, Ordering::Release);
    let at_kill = topic_end(&bootstrap, &topic);
    assert!(
        at_kill < 3 + ROWS,
        "killed before every row was in Kafka ({at_kill} records)"
    );

    let w2 = StandaloneWorker::spawn(dir.path(), &["pg.properties"]);
    w2.wait_state("pg-source", 1, "RUNNING");
    writer.join().unwrap();
    let total = pg.sql(&db, "SELECT count(*) FROM customers");
    assert_eq!(total.trim(), (3 + ROWS).to_string());

    let want: BTreeSet<i64> = (1..=3).chain(1000..1000 + ROWS).collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    let records = loop {
        let records = json_records(&bootstrap, &topic);
        let seen: BTreeSet<i64> = records
            .iter()
            .filter_map(|(k, _)| k["payload"]["id"].as_i64())
            .collect();
        if want.is_subset(&seen) {
            break records;
        }
        if std::time::Instant::now() > deadline {
            let lost: Vec<_> = want.difference(&seen).collect();
            panic!(
                "rows never reached Kafka after the restart: {lost:?}; worker log:\n{}",
                w2.log_text()
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(
        (records.len() as i64) > at_kill,
        "the new worker wrote records"
    );
    // Resumed from the stored offset: the snapshot was not taken again, and the rows the
    // first worker had written are not all written again (at most the unflushed tail is).
    let snapshot_reads = records
        .iter()
        .filter(|(_, v)| v["payload"]["op"] == "r")
        .count();
    assert_eq!(snapshot_reads, 3, "no second snapshot");
    let inserts = records
        .iter()
        .filter(|(_, v)| v["payload"]["op"] == "c")
        .count() as i64;
    assert!(
        inserts < 2 * ROWS,
        "{inserts} inserts for {ROWS} rows: the new worker started over"
    );
}

/// What legitimately differs between two runs of the connector on two databases: the names
/// (`prefix`, `db`, slot) become placeholders, and the times, LSNs and transaction ids of the
/// `source` block and the envelope become `"<t>"`.
fn normalise(record: &(Value, Value), prefix: &str, db: &str) -> (Value, Value) {
    let rename = |v: &Value| -> Value {
        let text = v
            .to_string()
            .replace(prefix, "<prefix>")
            .replace(db, "<db>");
        serde_json::from_str(&text).unwrap()
    };
    let (key, mut value) = (rename(&record.0), rename(&record.1));
    if let Some(payload) = value.get_mut("payload").and_then(Value::as_object_mut) {
        for f in ["ts_ms", "ts_us", "ts_ns"] {
            if payload.contains_key(f) {
                payload.insert(f.into(), json!("<t>"));
            }
        }
        if let Some(source) = payload.get_mut("source").and_then(Value::as_object_mut) {
            for f in ["ts_ms", "ts_us", "ts_ns", "txId", "lsn", "xmin", "sequence"] {
                if source.contains_key(f) {
                    source.insert(f.into(), json!("<t>"));
                }
            }
        }
    }
    (key, value)
}

/// The same PostgresConnector configuration, on the same table content and the same changes,
/// run by a Tributary worker (natively: the class's default version, with Debezium's plugin on
/// its `plugin.path` too) and by Apache Kafka Connect 4.1.1 hosting Debezium
/// (`scripts/connect-java`, the same `plugin.path`): the records in Kafka are equal, key for key
/// and value for value (schemas included), once names, times and LSNs are normalised
/// ([`normalise`]).
#[test]
fn same_change_events_as_java_connect() {
    let Some(bootstrap) = kafka() else { return };
    let Some(pg) = Pg::from_env() else { return };
    let Some((classpath, plugin_path)) = debezium_plugins() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let fetched = Command::new(root.join("scripts/connect-java"))
        .arg("fetch")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !fetched {
        missing::<()>("`scripts/connect-java fetch` failed (no Maven or no network?)");
        return;
    }
    let dir = test_dir();
    let side = |label: &str| {
        let db = unique(&format!("dbz_{label}")).replace('-', "_");
        let guard = pg.create_db(&db);
        create_customers(&pg, &db);
        let prefix = unique(&format!("cmp{label}"));
        (db, prefix, guard)
    };
    let (tdb, tprefix, _tdb_guard) = side("trib");
    let (jdb, jprefix, _jdb_guard) = side("java");

    // Tributary: a standalone worker with the connector file.
    let tdir = dir.path().join("tributary");
    std::fs::create_dir_all(&tdir).unwrap();
    std::fs::write(
        tdir.join("pg.properties"),
        properties("pg-source", &pg.source_config(&tdb, &tprefix)),
    )
    .unwrap();
    let trib = StandaloneWorker::start(
        &tdir,
        &bootstrap,
        &worker_extra(&classpath, &plugin_path),
        &["pg.properties"],
    );

    // Java Connect: a distributed worker with the same plugin.path and converters.
    let jdir = dir.path().join("java");
    std::fs::create_dir_all(&jdir).unwrap();
    let port = common::faults::free_port();
    let props = distributed_properties(
        &bootstrap,
        &unique("dbz-java"),
        &format!(
            "key.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\nplugin.path={plugin_path}\nrest.advertised.host.name=127.0.0.1\nrest.advertised.port={port}\n"
        ),
    )
    .replace(
        "listeners=http://127.0.0.1:0",
        &format!("listeners=http://127.0.0.1:{port}"),
    );
    std::fs::write(jdir.join("worker.properties"), props).unwrap();
    let mut java = Command::new(root.join("scripts/connect-java"))
        .arg(jdir.join("worker.properties"))
        .env("CONNECT_JAVA_HEAP", "512m")
        .current_dir(&jdir)
        .stdout(std::fs::File::create(jdir.join("stdout.log")).unwrap())
        .stderr(std::fs::File::create(jdir.join("stderr.log")).unwrap())
        .spawn()
        .expect("starting scripts/connect-java");
    struct KillOnDrop<'a>(&'a mut std::process::Child);
    impl Drop for KillOnDrop<'_> {
        fn drop(&mut self) {
            self.0.kill().ok();
            self.0.wait().ok();
        }
    }
    let java = KillOnDrop(&mut java);
    let java_url = format!("http://127.0.0.1:{port}");
    let client = reqwest::blocking::Client::new();
    let java_log = || std::fs::read_to_string(jdir.join("stderr.log")).unwrap_or_default();
    let mut config = pg.source_config(&jdb, &jprefix);
    config.insert("name".into(), "pg-source".into());
    let body = json!({"name": "pg-source", "config": config}).to_string();
    wait_for(
        "the Java worker to accept the connector",
        Duration::from_secs(180),
        || {
            let r = client
                .post(format!("{java_url}/connectors"))
                .header("Content-Type", "application/json")
                .body(body.clone())
                .send()
                .ok()?;
            match r.status().as_u16() {
                201 => Some(()),
                // Not yet joined / no leader yet.
                409 | 404 | 500 | 503 => None,
                code => panic!(
                    "Java worker answered {code}: {}",
                    r.text().unwrap_or_default()
                ),
            }
        },
    );

    trib.wait_state("pg-source", 1, "RUNNING");
    let ttopic = format!("{tprefix}.public.customers");
    let jtopic = format!("{jprefix}.public.customers");
    wait_records(&bootstrap, &ttopic, 3, &trib);
    wait_for("the Java side's snapshot", Duration::from_secs(180), || {
        (topic_end(&bootstrap, &jtopic) >= 3).then_some(())
    });
    change_customers(&pg, &tdb);
    change_customers(&pg, &jdb);
    let t = wait_records(&bootstrap, &ttopic, 7, &trib);
    wait_for("the Java side's changes", Duration::from_secs(180), || {
        (topic_end(&bootstrap, &jtopic) >= 7).then_some(())
    });
    let j = json_records(&bootstrap, &jtopic);
    let t: Vec<_> = t.iter().map(|r| normalise(r, &tprefix, &tdb)).collect();
    let j: Vec<_> = j.iter().map(|r| normalise(r, &jprefix, &jdb)).collect();
    assert_eq!(t.len(), 7);
    for (i, (tr, jr)) in t.iter().zip(&j).enumerate() {
        assert_eq!(tr.0, jr.0, "key {i} differs (Tributary, then Java)");
        assert_eq!(tr.1, jr.1, "value {i} differs (Tributary, then Java)");
    }
    assert_eq!(t.len(), j.len(), "Java log:\n{}", java_log());
    drop(java);
}
