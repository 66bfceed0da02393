//! Byte-exact conformance with Apache Kafka Connect (4.4.0; `CONNECT_VERSION` picks another
//! release), checked live against Java.
//!
//! `conformance/java/ConnectVectors.java` is compiled with `javac` against the jars that
//! `scripts/connect-java fetch` downloads (nothing is committed) and run twice:
//!
//! 1. `encode`: Java prints its encodings of a fixed set of sample inputs (group member metadata
//!    and assignments V0/V1/V2, JsonConverter output with schemas on and off for every schema
//!    and logical type, config-topic and status-topic record values). Tributary encodes the same
//!    inputs, built here the same way, and must produce the same bytes. Tributary also decodes
//!    each of Java's encodings and encodes the result again: that must give what Java gives
//!    for the same round trip, and the decoded values must be the inputs.
//! 2. `decode`: Java decodes Tributary's encodings (and its own, as the reference), re-encodes
//!    them and describes what it read; for every case both answers must agree.
//!
//! Without `java`/`javac` or the jars (and no way to fetch them) the test prints why and passes.

use tributary_testkit as common;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::{Command, Stdio};

use num_bigint::BigInt;
use tributary_api::converter::Converter;
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, Struct, Time, Timestamp, Value,
};
use tributary_api::Props;
use tributary_group::{Assignment, ConnectorTaskId, WorkerMetadata};
use tributary_plugins::converters::json::JsonConverter;
use tributary_runtime::config_records::{RestartRequest, SessionKey};
use tributary_runtime::storage::config_topic::{records, ConfigEvent, ConfigLogState};
use tributary_runtime::storage::status::{State, Status};
use tributary_runtime::storage::status_topic::{parse_status, status_value};
use tributary_runtime::worker::TargetState;

const TOPIC: &str = "topic";
const URL: &str = "http://127.0.0.1:8083/";
const LEADER: &str = "connect-1-5b7e0c1a-3f1d-4c2e-9a57-0d9c1e6b2a44";

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The compiled vector program: (classpath for `java`, temp dir holding the classes).
fn java_program() -> Option<(String, tempfile::TempDir)> {
    common::java_vector_program("ConnectVectors.java")
}

/// Runs the program in `mode` with `input` on stdin; returns its output lines split on tabs.
fn run_java(cp: &str, mode: &str, input: &str) -> Vec<Vec<String>> {
    let mut child = Command::new("java")
        .args([
            "-Xmx128m",
            "-Duser.timezone=UTC",
            "-cp",
            cp,
            "ConnectVectors",
            mode,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("running java");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "ConnectVectors {mode} failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

// ------------------------------------------------------------------ the sample inputs

fn t(c: &str, n: u32) -> ConnectorTaskId {
    ConnectorTaskId::new(c, n)
}

fn held() -> Assignment {
    Assignment {
        leader: LEADER.into(),
        leader_url: URL.into(),
        config_offset: 42,
        connectors: vec!["orders-sink".into()],
        tasks: vec![
            t("orders-sink", 0),
            t("orders-sink", 2),
            t("files-source", 0),
        ],
        ..Default::default()
    }
}

fn revoking() -> Assignment {
    Assignment {
        leader: LEADER.into(),
        leader_url: URL.into(),
        config_offset: 43,
        connectors: vec!["files-source".into()],
        tasks: vec![t("files-source", 1), t("orders-sink", 1)],
        revoked_connectors: vec!["orders-sink".into()],
        revoked_tasks: vec![t("orders-sink", 0), t("files-source", 0)],
        delay: 300_000,
        ..Default::default()
    }
}

fn protocol_case(kind: &str, name: &str) -> Option<Vec<u8>> {
    let version: i16 = kind.rsplit('v').next()?.parse().ok()?;
    let bytes = if kind.starts_with("meta-") {
        let mut m = WorkerMetadata::new(URL, 42);
        match name {
            "worker" => {}
            "fresh" => m.config_offset = -1,
            "held" => m.allocation = Some(held()),
            _ => return None,
        }
        m.encode_version(version)
    } else {
        let a = match (version, name) {
            (0, "basic") => Assignment {
                leader: LEADER.into(),
                leader_url: URL.into(),
                config_offset: 7,
                connectors: vec!["a".into(), "b".into()],
                tasks: vec![t("a", 0), t("b", 1), t("c", 2)],
                ..Default::default()
            },
            (_, "mismatch") => Assignment::config_mismatch(LEADER, URL, 99),
            (_, "held") => held(),
            (_, "revoking") => revoking(),
            _ => return None,
        };
        a.encode_version(version)
    };
    Some(bytes.expect("encoding"))
}

fn json_converter(kind: &str) -> JsonConverter {
    let mut c = JsonConverter::new();
    let props: Props = HashMap::from([
        (
            "schemas.enable".to_string(),
            kind.ends_with("-on").to_string(),
        ),
        (
            "decimal.format".to_string(),
            if kind.starts_with("json-num") {
                "NUMERIC"
            } else {
                "BASE64"
            }
            .to_string(),
        ),
    ]);
    Converter::configure(&mut c, &props, false).unwrap();
    c
}

fn person_schema() -> SchemaRef {
    let address = SchemaBuilder::struct_()
        .name("com.example.Address")
        .optional()
        .field("street", Schema::string_schema())
        .unwrap()
        .field("zip", Schema::optional_int32_schema())
        .unwrap()
        .build();
    SchemaBuilder::struct_()
        .name("com.example.Person")
        .version(3)
        .doc("A person")
        .parameter("p1", "v1")
        .parameter("a0", "v0")
        .field("name", Schema::string_schema())
        .unwrap()
        .field(
            "age",
            SchemaBuilder::int32()
                .optional()
                .default_value(Value::Int32(18))
                .unwrap()
                .doc("years")
                .build(),
        )
        .unwrap()
        .field("score", Schema::float64_schema())
        .unwrap()
        .field(
            "tags",
            SchemaBuilder::array(Schema::string_schema()).build(),
        )
        .unwrap()
        .field(
            "attrs",
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema())
                .optional()
                .build(),
        )
        .unwrap()
        .field(
            "codes",
            SchemaBuilder::map(Schema::int32_schema(), Schema::optional_string_schema()).build(),
        )
        .unwrap()
        .field("address", address)
        .unwrap()
        .field("balance", Decimal::builder(2).optional().build())
        .unwrap()
        .field("birthday", Date::builder().optional().build())
        .unwrap()
        .field("wake", Time::schema())
        .unwrap()
        .field("updated", Timestamp::builder().optional().build())
        .unwrap()
        .field("raw", Schema::optional_bytes_schema())
        .unwrap()
        .build()
}

fn person(s: &SchemaRef) -> Value {
    let address = s.field("address").unwrap().schema.clone();
    let st = Struct::new(s.clone())
        .unwrap()
        .put("name", "Ada")
        .unwrap()
        .put("score", Value::Float64(97.5))
        .unwrap()
        .put("tags", Value::Array(vec!["a".into(), "b".into()]))
        .unwrap()
        .put(
            "attrs",
            Value::Map(vec![
                ("x".into(), Value::Int64(1)),
                ("y".into(), Value::Int64(-2)),
            ]),
        )
        .unwrap()
        .put(
            "codes",
            Value::Map(vec![
                (Value::Int32(1), "one".into()),
                (Value::Int32(2), Value::Null),
            ]),
        )
        .unwrap()
        .put(
            "address",
            Value::Struct(
                Struct::new(address)
                    .unwrap()
                    .put("street", "Main St")
                    .unwrap()
                    .put("zip", 12345)
                    .unwrap(),
            ),
        )
        .unwrap()
        .put("balance", Value::Decimal(Decimal::new(-123456, 2)))
        .unwrap()
        .put("birthday", Value::Date(19000))
        .unwrap()
        .put("wake", Value::Time(25200123))
        .unwrap()
        .put("updated", Value::Timestamp(1700000000123))
        .unwrap()
        .put("raw", Value::Bytes(vec![1, 2, 3]))
        .unwrap();
    Value::Struct(st)
}

/// The JSON sample inputs, as `ConnectVectors.jsonCases()` builds them.
fn json_case(name: &str) -> Option<(Option<SchemaRef>, Value)> {
    let s = |schema: SchemaRef, v: Value| Some((Some(schema), v));
    match name {
        "int8" => s(Schema::int8_schema(), Value::Int8(-12)),
        "int16" => s(Schema::int16_schema(), Value::Int16(-1234)),
        "int32" => s(Schema::int32_schema(), Value::Int32(123456789)),
        "int64" => s(Schema::int64_schema(), Value::Int64(-9007199254740993)),
        "float32" => s(Schema::float32_schema(), Value::Float32(3.25)),
        "float64" => s(Schema::float64_schema(), Value::Float64(-0.1)),
        "float64_big" => s(Schema::float64_schema(), Value::Float64(1.5e300)),
        "boolean" => s(Schema::boolean_schema(), Value::Boolean(true)),
        "string" => s(
            Schema::string_schema(),
            Value::String("h\u{e9}llo \"q\" \\ \n\t\u{1} \u{2713} \u{1F600}".into()),
        ),
        "bytes" => s(Schema::bytes_schema(), Value::Bytes(vec![0, 1, 2, 255])),
        "optional_null" => s(Schema::optional_string_schema(), Value::Null),
        "default_used" => s(
            SchemaBuilder::int32()
                .optional()
                .default_value(Value::Int32(42))
                .unwrap()
                .build(),
            Value::Null,
        ),
        "named_int" => s(
            SchemaBuilder::int64()
                .name("com.example.Id")
                .version(2)
                .doc("an id")
                .parameter("k", "v")
                .build(),
            Value::Int64(5),
        ),
        "array" => s(
            SchemaBuilder::array(Schema::int32_schema()).build(),
            Value::Array(vec![Value::Int32(1), Value::Int32(2), Value::Int32(3)]),
        ),
        "array_empty" => s(
            SchemaBuilder::array(Schema::string_schema()).build(),
            Value::Array(vec![]),
        ),
        "map_string_keys" => s(
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema()).build(),
            Value::Map(vec![
                ("a".into(), Value::Int64(1)),
                ("b".into(), Value::Int64(2)),
            ]),
        ),
        "map_int_keys" => s(
            SchemaBuilder::map(Schema::int32_schema(), Schema::string_schema()).build(),
            Value::Map(vec![
                (Value::Int32(1), "x".into()),
                (Value::Int32(2), "y".into()),
            ]),
        ),
        "struct" => {
            let schema = person_schema();
            let v = person(&schema);
            s(schema, v)
        }
        "decimal" => s(Decimal::schema(2), Value::Decimal(Decimal::new(-123456, 2))),
        "decimal_zero" => s(Decimal::schema(3), Value::Decimal(Decimal::new(0, 3))),
        "decimal_big" => s(
            Decimal::schema(0),
            Value::Decimal(Decimal::new(
                "123456789012345678901234567890".parse::<BigInt>().unwrap(),
                0,
            )),
        ),
        "date" => s(Date::schema(), Value::Date(19000)),
        "date_negative" => s(Date::schema(), Value::Date(-3)),
        "time" => s(Time::schema(), Value::Time(25200123)),
        "timestamp" => s(Timestamp::schema(), Value::Timestamp(1700000000123)),
        "timestamp_negative" => s(Timestamp::schema(), Value::Timestamp(-1)),
        "schemaless_map" => Some((
            None,
            Value::Map(vec![
                ("a".into(), Value::Int64(1)),
                (
                    "b".into(),
                    Value::Array(vec![Value::Boolean(true), "x".into(), Value::Float64(2.5)]),
                ),
                ("c".into(), Value::Null),
                ("d".into(), "text".into()),
            ]),
        )),
        "schemaless_string" => Some((None, "plain".into())),
        _ => None,
    }
}

fn connector_props() -> Props {
    [
        ("name", "files-source"),
        ("connector.class", "FileStreamSource"),
        ("tasks.max", "1"),
        ("file", "/tmp/in \u{e9}.txt"),
        ("topic", "lines"),
        ("empty", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn task_props() -> Props {
    [
        (
            "task.class",
            "org.apache.kafka.connect.file.FileStreamSourceTask",
        ),
        ("file", "/tmp/in \u{e9}.txt"),
        ("topic", "lines"),
        ("batch.size", "2000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

const SESSION_KEY: [u8; 32] = [
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
];

fn session_key() -> SessionKey {
    SessionKey {
        key: SESSION_KEY.to_vec(),
        algorithm: "HmacSHA256".into(),
        creation_timestamp: 1700000000123,
    }
}

fn restart(include_tasks: bool, only_failed: bool) -> RestartRequest {
    RestartRequest {
        connector: "files-source".into(),
        only_failed,
        include_tasks,
    }
}

fn config_case(name: &str) -> Option<Vec<u8>> {
    Some(match name {
        "connector" => records::properties(&connector_props()),
        "task" => records::properties(&task_props()),
        "commit" => records::commit(3),
        "target-started" => records::target_state(TargetState::Started),
        "target-paused" => records::target_state(TargetState::Paused),
        "target-stopped" => records::target_state(TargetState::Stopped),
        "restart-plain" => records::restart(&restart(false, false)),
        "restart-failed-tasks" => records::restart(&restart(true, true)),
        "session-key" => records::session_key(&session_key()),
        "logger-level" => records::logger_level("DEBUG"),
        _ => return None,
    })
}

fn status_case(name: &str) -> Option<Status> {
    Some(match name {
        "running" => Status {
            state: State::Running,
            trace: None,
            worker_id: "127.0.0.1:8083".into(),
            generation: 5,
            version: Some("4.1.1".into()),
        },
        "failed" => Status {
            state: State::Failed,
            trace: Some(
                "org.apache.kafka.connect.errors.ConnectException: boom\n\tat x.y(Z.java:1)\n"
                    .into(),
            ),
            worker_id: "127.0.0.1:8084".into(),
            generation: 7,
            version: Some("4.1.1".into()),
        },
        "unassigned-no-version" => Status {
            state: State::Unassigned,
            trace: None,
            worker_id: "127.0.0.1:8083".into(),
            generation: 2,
            version: None,
        },
        _ => return None,
    })
}

/// Tributary's encoding of a sample input (`None`: no such case here, which is a failure).
fn tributary_encode(kind: &str, name: &str) -> Option<Option<Vec<u8>>> {
    if kind.starts_with("meta-") || kind.starts_with("assign-") {
        return protocol_case(kind, name).map(Some);
    }
    if kind.starts_with("json-") {
        let (schema, value) = json_case(name)?;
        let c = json_converter(kind);
        return Some(
            c.from_connect_data(TOPIC, schema.as_ref(), &value)
                .unwrap_or_else(|e| panic!("{kind} {name}: Tributary cannot encode: {e}")),
        );
    }
    match kind {
        "config" => config_case(name).map(Some),
        "status" => status_case(name).map(|s| Some(status_value(&s))),
        _ => None,
    }
}

// ------------------------------------------------------------------ decoding Java's bytes

/// Tributary decodes `bytes` and encodes the result again; the `String` says what it read.
fn tributary_round_trip(
    kind: &str,
    name: &str,
    bytes: &[u8],
) -> Result<(Option<Vec<u8>>, String), String> {
    if kind.starts_with("meta-") {
        let (v, m) = WorkerMetadata::decode_versioned(bytes).map_err(|e| e.to_string())?;
        let expected = protocol_case(kind, name).map(|b| WorkerMetadata::decode(&b).unwrap());
        if Some(&m) != expected.as_ref() {
            return Err(format!("decoded {m:?}, expected {expected:?}"));
        }
        return Ok((
            Some(m.encode_version(v).map_err(|e| e.to_string())?),
            format!("{m:?}"),
        ));
    }
    if kind.starts_with("assign-") {
        let (v, a) = Assignment::decode_versioned(bytes).map_err(|e| e.to_string())?;
        let expected = protocol_case(kind, name).map(|b| Assignment::decode(&b).unwrap());
        if Some(&a) != expected.as_ref() {
            return Err(format!("decoded {a:?}, expected {expected:?}"));
        }
        return Ok((
            Some(a.encode_version(v).map_err(|e| e.to_string())?),
            format!("{a:?}"),
        ));
    }
    if kind.starts_with("json-") {
        let c = json_converter(kind);
        let sv = c
            .to_connect_data(TOPIC, Some(bytes))
            .map_err(|e| e.to_string())?;
        let out = c
            .from_connect_data(TOPIC, sv.schema.as_ref(), &sv.value)
            .map_err(|e| e.to_string())?;
        return Ok((out, format!("{:?}", sv.schema.map(|s| s.schema_type))));
    }
    if kind == "status" {
        let s = parse_status(bytes).ok_or("status value not understood")?;
        let expected = status_case(name);
        if Some(&s) != expected.as_ref() {
            return Err(format!("decoded {s:?}, expected {expected:?}"));
        }
        return Ok((Some(status_value(&s)), format!("{s:?}")));
    }
    config_round_trip(name, bytes)
}

/// Feeds a config record through Tributary's config-topic reducer, as if read from the topic,
/// checks what it understood and writes it again with Tributary's record encoders.
fn config_round_trip(name: &str, bytes: &[u8]) -> Result<(Option<Vec<u8>>, String), String> {
    let mut log = ConfigLogState::new();
    let c = "files-source";
    let mut offset = 0;
    let mut apply = |log: &mut ConfigLogState, key: &str, value: &[u8]| {
        offset += 1;
        log.apply(key, Some(value), offset)
    };
    // Every case but the connector config itself reads in the presence of the connector.
    if name != "connector" {
        apply(
            &mut log,
            &format!("connector-{c}"),
            &records::properties(&connector_props()),
        );
    }
    let out = match name {
        "connector" => {
            apply(&mut log, &format!("connector-{c}"), bytes);
            let props = log
                .state
                .connector_configs
                .get(c)
                .ok_or("no connector config")?;
            if props != &connector_props() {
                return Err(format!("read {props:?}"));
            }
            records::properties(props)
        }
        "task" => {
            // Three task records, committed by a commit record Tributary wrote.
            for n in 0..3 {
                apply(&mut log, &format!("task-{c}-{n}"), bytes);
            }
            let events = apply(&mut log, &format!("commit-{c}"), &records::commit(3));
            if !events
                .iter()
                .any(|e| matches!(e, ConfigEvent::TaskConfigUpdate { .. }))
            {
                return Err(format!("no task update after the commit: {events:?}"));
            }
            let tasks = log.state.tasks(c);
            if tasks.len() != 3 {
                return Err(format!("{} tasks", tasks.len()));
            }
            let props = log.state.task_config(&tasks[2]).unwrap().clone();
            if props != task_props() {
                return Err(format!("read {props:?}"));
            }
            records::properties(&props)
        }
        "commit" => {
            // The commit of three task configs (written by Tributary) makes them visible.
            for n in 0..3 {
                apply(
                    &mut log,
                    &format!("task-{c}-{n}"),
                    &records::properties(&task_props()),
                );
            }
            apply(&mut log, &format!("commit-{c}"), bytes);
            let n = log.state.tasks(c).len() as u32;
            if n != 3 {
                return Err(format!("{n} tasks after the commit"));
            }
            records::commit(n)
        }
        n if n.starts_with("target-") => {
            // Start from another state, so that the record is a change.
            let before = if n == "target-started" {
                TargetState::Paused
            } else {
                TargetState::Started
            };
            apply(
                &mut log,
                &format!("target-state-{c}"),
                &records::target_state(before),
            );
            let events = apply(&mut log, &format!("target-state-{c}"), bytes);
            if !events.contains(&ConfigEvent::TargetStateChange(c.into())) {
                return Err(format!("no target-state change: {events:?}"));
            }
            let t = log.state.target_state(c);
            let expected = match n {
                "target-started" => TargetState::Started,
                "target-paused" => TargetState::Paused,
                _ => TargetState::Stopped,
            };
            if t != expected {
                return Err(format!("read {t:?}"));
            }
            records::target_state(t)
        }
        n if n.starts_with("restart-") => {
            let events = apply(&mut log, &format!("restart-connector-{c}"), bytes);
            let Some(ConfigEvent::RestartRequest(r)) = events.first() else {
                return Err(format!("no restart request: {events:?}"));
            };
            let expected = restart(n == "restart-failed-tasks", n == "restart-failed-tasks");
            if r != &expected {
                return Err(format!("read {r:?}"));
            }
            records::restart(r)
        }
        "session-key" => {
            apply(&mut log, "session-key", bytes);
            let k = log.state.session_key.clone().ok_or("no session key")?;
            if k != session_key() {
                return Err(format!("read {k:?}"));
            }
            records::session_key(&k)
        }
        "logger-level" => {
            let events = apply(&mut log, "logger-cluster-org.example", bytes);
            let Some(ConfigEvent::LoggerLevel(ns, level)) = events.first() else {
                return Err(format!("no logger level: {events:?}"));
            };
            if ns != "org.example" || level != "DEBUG" {
                return Err(format!("read {ns} {level}"));
            }
            records::logger_level(level)
        }
        _ => return Err("unknown config case".into()),
    };
    Ok((Some(out), String::new()))
}

/// Java's own schemaless JSON round trips lose order (its decoder builds hash maps) and
/// precision (whole numbers wider than 64 bits wrap, `0.000` loses its trailing zeros): there
/// the two sides are compared as JSON values, and these listed cases not at all.
const LOSSY_IN_JAVA: &[(&str, &str)] = &[
    ("json-num-off", "decimal_big"),
    ("json-num-off", "decimal_zero"),
];

fn same_json(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<serde_json::Value>(a),
        serde_json::from_slice::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn show(b: &Option<Vec<u8>>) -> String {
    match b {
        None => "NULL".into(),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) if !s.is_empty() && s.chars().all(|c| !c.is_control() || c == '\n') => {
                format!("{s:?}")
            }
            _ => hex(b),
        },
    }
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    (s != "NULL").then(|| unhex(s))
}

#[test]
fn tributary_and_java_encode_and_decode_alike() {
    let Some((cp, _classes)) = java_program() else {
        return;
    };
    let java = run_java(&cp, "encode", "");
    assert!(
        java.len() > 100,
        "too few vectors from Java: {}",
        java.len()
    );
    let mut failures: Vec<String> = Vec::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();

    // Tributary's own encodings, fed to Java below next to Java's.
    let mut to_java = String::new();
    for row in &java {
        let (kind, name, java_hex) = (&row[0], &row[1], &row[2]);
        *kinds.entry(kind.clone()).or_default() += 1;
        assert!(
            !java_hex.starts_with("ERR"),
            "Java failed on {kind} {name}: {java_hex}"
        );
        let java_bytes = parse_hex(java_hex);
        match tributary_encode(kind, name) {
            None => failures.push(format!("{kind} {name}: no such case on the Tributary side")),
            Some(ours) => {
                if ours != java_bytes {
                    failures.push(format!(
                        "{kind} {name}: encodings differ\n    java:      {}\n    tributary: {}",
                        show(&java_bytes),
                        show(&ours)
                    ));
                }
                let h = ours.as_deref().map(hex).unwrap_or_else(|| "NULL".into());
                to_java.push_str(&format!("{kind}\ttributary:{name}\t{h}\n"));
            }
        }
        if let Some(b) = &java_bytes {
            to_java.push_str(&format!("{kind}\tjava:{name}\t{}\n", hex(b)));
        }
    }

    // Java decodes (and re-encodes) both sides' bytes.
    let decoded = run_java(&cp, "decode", &to_java);
    let mut java_answer: HashMap<(String, String), Vec<String>> = HashMap::new();
    for row in decoded {
        java_answer.insert((row[0].clone(), row[1].clone()), row[2..].to_vec());
    }
    for row in &java {
        let (kind, name) = (&row[0], &row[1]);
        let Some(java_bytes) = parse_hex(&row[2]) else {
            continue;
        };
        let lossy = LOSSY_IN_JAVA.contains(&(kind.as_str(), name.as_str()));
        let reference = &java_answer[&(kind.clone(), format!("java:{name}"))];
        assert!(
            !reference[0].starts_with("ERR"),
            "Java cannot decode its own {kind} {name}: {}",
            reference[0]
        );
        let reference_bytes = parse_hex(&reference[0]);
        let comparable = |a: &Option<Vec<u8>>, b: &Option<Vec<u8>>| {
            a == b
                || (kind.ends_with("-off")
                    && matches!((a, b), (Some(x), Some(y)) if same_json(x, y)))
        };

        // Java reading Tributary's bytes ends where Java reading its own bytes ends.
        match java_answer.get(&(kind.clone(), format!("tributary:{name}"))) {
            None => failures.push(format!(
                "{kind} {name}: Java gave no answer for Tributary's bytes"
            )),
            Some(ans) if ans[0].starts_with("ERR") => failures.push(format!(
                "{kind} {name}: Java cannot decode Tributary's bytes: {}",
                ans[0]
            )),
            Some(ans) => {
                if !lossy && !comparable(&parse_hex(&ans[0]), &reference_bytes) {
                    failures.push(format!(
                        "{kind} {name}: Java re-encodes Tributary's bytes as {}, its own as {}",
                        show(&parse_hex(&ans[0])),
                        show(&reference_bytes)
                    ));
                }
                if ans.get(1) != reference.get(1) {
                    failures.push(format!(
                        "{kind} {name}: Java reads Tributary's bytes as {:?}, its own as {:?}",
                        ans.get(1),
                        reference.get(1)
                    ));
                }
            }
        }

        // Tributary reading Java's bytes ends where Java does.
        match tributary_round_trip(kind, name, &java_bytes) {
            Err(e) => failures.push(format!(
                "{kind} {name}: Tributary cannot read Java's bytes: {e}"
            )),
            Ok((again, _)) => {
                if !lossy && !comparable(&again, &reference_bytes) {
                    failures.push(format!(
                        "{kind} {name}: Tributary re-encodes Java's bytes as {}, Java as {}",
                        show(&again),
                        show(&reference_bytes)
                    ));
                }
            }
        }
    }
    eprintln!("conformance vectors checked per kind: {kinds:?}");
    assert!(
        failures.is_empty(),
        "{} mismatches with Java:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ------------------------------------------------- Connect's primitive converters, live

/// A Connect value as `PrimitiveConverterVectors.java` reads it (`<type>:<text>`).
fn primitive_arg(v: &Value) -> String {
    match v {
        Value::Null => "null:".into(),
        Value::Int16(x) => format!("int16:{x}"),
        Value::Int32(x) => format!("int32:{x}"),
        Value::Int64(x) => format!("int64:{x}"),
        Value::Float32(x) => format!("float32bits:{:08x}", x.to_bits()),
        Value::Float64(x) => format!("float64bits:{:016x}", x.to_bits()),
        Value::Boolean(b) => format!("boolean:{b}"),
        Value::String(s) => format!("string:{s}"),
        other => panic!("no vector form for {other:?}"),
    }
}

/// A value read back, as the Java program shows it (floats as raw bits).
fn primitive_shown(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int16(x) => x.to_string(),
        Value::Int32(x) => x.to_string(),
        Value::Int64(x) => x.to_string(),
        Value::Float32(x) => format!("{:08x}", x.to_bits()),
        Value::Float64(x) => format!("{:016x}", x.to_bits()),
        Value::Boolean(b) => b.to_string(),
        other => panic!("not a primitive: {other:?}"),
    }
}

/// Tributary's and Java's `ShortConverter`, `IntegerConverter`, `LongConverter`,
/// `FloatConverter`, `DoubleConverter` and `BooleanConverter` give the same bytes, the same
/// values and schemas, and the same error messages, for values of every type, nulls, extreme
/// and special numbers (NaN with a payload, -0.0, infinities), wrong types, wrong schemas and
/// data of the wrong size; run live against Connect's jars.
#[test]
fn primitive_converters_match_connects_byte_for_byte() {
    let Some((cp, _classes)) = common::java_vector_program("PrimitiveConverterVectors.java") else {
        return;
    };
    let plugins = tributary_plugins::converters::plugins();
    let converter = |class: &str| -> Box<dyn Converter> {
        let plugin = plugins
            .converters
            .iter()
            .find(|p| p.class == class)
            .unwrap_or_else(|| panic!("{class} is not a built-in"));
        let mut c = (plugin.new)();
        c.configure(&Props::new(), false).unwrap();
        c
    };
    let pkg = "org.apache.kafka.connect.converters.";
    let values = [
        Value::Null,
        Value::Int16(i16::MIN),
        Value::Int16(-2),
        Value::Int32(i32::MAX),
        Value::Int32(258),
        Value::Int64(i64::MIN),
        Value::Int64(1 << 40),
        Value::Float32(f32::from_bits(0x7fc0_0001)),
        Value::Float32(-0.0),
        Value::Float32(f32::INFINITY),
        Value::Float32(1.5),
        Value::Float64(f64::NEG_INFINITY),
        Value::Float64(-0.25),
        Value::Float64(f64::from_bits(0x7ff8_0000_0000_0002)),
        Value::Boolean(true),
        Value::Boolean(false),
        Value::String("7".into()),
    ];
    let reads = [
        "null",
        "",
        "00",
        "01",
        "ff",
        "7fff",
        "80000000",
        "0000000000000102",
        "3fc00000",
        "bfd0000000000000",
        "7ff8000000000002",
        "0102030405",
    ];
    let classes = [
        "ShortConverter",
        "IntegerConverter",
        "LongConverter",
        "FloatConverter",
        "DoubleConverter",
        "BooleanConverter",
    ];
    let mut input = String::new();
    let mut ours = Vec::new();
    for class in classes {
        let full = format!("{pkg}{class}");
        let c = converter(&full);
        for (i, v) in values.iter().enumerate() {
            for schema in ["none", "BOOLEAN", "INT32"] {
                // The number converters ignore the schema: one is enough for them.
                if class != "BooleanConverter" && schema != "none" {
                    continue;
                }
                let name = format!("{class}-from-{i}-{schema}");
                input.push_str(&format!(
                    "{name}\t{full}\tfrom\t{schema}\t{}\n",
                    primitive_arg(v)
                ));
                let schema_ref = match schema {
                    "BOOLEAN" => Some(Schema::optional_boolean_schema()),
                    "INT32" => Some(Schema::optional_int32_schema()),
                    _ => None,
                };
                let result = match c.from_connect_data("t", schema_ref.as_ref(), v) {
                    Ok(bytes) => bytes.map_or("null".into(), |b| hex(&b)),
                    Err(e) => format!("ERR {e}"),
                };
                ours.push(vec![name, result]);
            }
        }
        for (i, r) in reads.iter().enumerate() {
            let name = format!("{class}-to-{i}");
            input.push_str(&format!("{name}\t{full}\tto\tnone\t{r}\n"));
            let bytes = (*r != "null").then(|| unhex(r));
            let result = match c.to_connect_data("t", bytes.as_deref()) {
                Ok(sv) => {
                    let s = sv.schema.expect("a schema");
                    format!(
                        "{} {} {}",
                        s.schema_type,
                        s.optional,
                        primitive_shown(&sv.value)
                    )
                }
                Err(e) => format!("ERR {e}"),
            };
            ours.push(vec![name, result]);
        }
    }
    let mut child = Command::new("java")
        .args(["-Xmx128m", "-cp", &cp, "PrimitiveConverterVectors"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running java");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "PrimitiveConverterVectors failed");
    let java: Vec<Vec<String>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    assert_eq!(java.len(), ours.len());
    let differ: Vec<String> = java
        .iter()
        .zip(&ours)
        .filter(|(j, t)| j != t)
        .map(|(j, t)| format!("{}: Java {:?}, Tributary {:?}", j[0], j[1], t[1]))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
