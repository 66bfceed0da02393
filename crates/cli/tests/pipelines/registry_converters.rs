//! Tributary's native schema-registry converters (`io.confluent.connect.avro.AvroConverter`,
//! `io.confluent.connect.json.JsonSchemaConverter`) against a real schema registry (Apicurio
//! Registry's Confluent-compatible API, started by `scripts/registry`) and a real broker:
//! pipelines through Avro and JSON Schema topics, the registry's view of what was written, the
//! bytes read by confluent-kafka-python's `AvroDeserializer` and `JSONDeserializer`, and the
//! failures Connect reports (no magic byte, unknown schema id, an incompatible schema, a
//! registry that is down).

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value as Json};

const AVRO: &str = "io.confluent.connect.avro.AvroConverter";
const JSON_SCHEMA: &str = "io.confluent.connect.json.JsonSchemaConverter";
const PROTOBUF: &str = "io.confluent.connect.protobuf.ProtobufConverter";

fn registry_get(registry: &SchemaRegistry, path: &str) -> (u16, Json) {
    let r = reqwest::blocking::get(format!("{}{path}", registry.ccompat)).unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Json::Null))
}

fn registry_send(registry: &SchemaRegistry, method: &str, path: &str, body: &Json) -> (u16, Json) {
    let r = reqwest::blocking::Client::new()
        .request(
            method.parse().unwrap(),
            format!("{}{path}", registry.ccompat),
        )
        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .body(body.to_string())
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Json::Null))
}

/// Worker lines making the Avro converter the worker's value converter.
fn avro_worker_lines(registry: &SchemaRegistry) -> String {
    converter_lines(AVRO, registry)
}

/// Worker lines making `class` the worker's value converter.
fn converter_lines(class: &str, registry: &SchemaRegistry) -> String {
    format!(
        "value.converter={class}\nvalue.converter.schema.registry.url={}\n",
        registry.ccompat
    )
}

fn lines(n: usize, prefix: &str) -> String {
    (0..n)
        .map(|i| format!("{prefix} line {i} – ünïcode {}\n", "x".repeat(i % 17)))
        .collect()
}

/// The registry id in a record's five-byte header.
fn schema_id(record: &[u8]) -> i32 {
    assert_eq!(record[0], 0, "magic byte");
    i32::from_be_bytes(record[1..5].try_into().unwrap())
}

/// A Connect user's Avro config (Confluent's class name, `schema.registry.url`) runs
/// unchanged: a file goes FileStreamSource → Avro topic → FileStreamSink and comes out equal;
/// the topic holds Confluent's wire format with the id the registry gave the subject
/// `<topic>-value`, whose schema is Avro's `"string"`; a second record makes no second
/// registration (one version).
#[test]
fn a_file_round_trips_through_an_avro_topic() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let (id, records, text) = file_round_trip(&bootstrap, &registry, AVRO, "\"string\"", "", "");
    // The datum: the line as an Avro string (zig-zag length, UTF-8).
    let first = text.lines().next().unwrap();
    let mut expected = vec![0];
    expected.extend_from_slice(&id.to_be_bytes());
    expected.push((first.len() * 2) as u8);
    expected.extend_from_slice(first.as_bytes());
    assert_eq!(records[0], expected);
}

/// The same with `io.confluent.connect.json.JsonSchemaConverter`, each line hoisted into a
/// struct `{"line": …}` (Apicurio refuses a JSON Schema that is not an object unless it names
/// its `$schema`, which Confluent's converter does not write): the subject's schema is the
/// object Confluent's JsonSchemaData makes, and each record is `{"line":"…"}` after the header.
#[test]
fn a_file_round_trips_through_a_json_schema_topic() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let (id, records, text) = file_round_trip(
        &bootstrap,
        &registry,
        JSON_SCHEMA,
        r#"{"type":"object","properties":{"line":{"type":"string","connect.index":0}}}"#,
        "transforms=hoist\ntransforms.hoist.type=org.apache.kafka.connect.transforms.HoistField$Value\ntransforms.hoist.field=line\n",
        "transforms=extract\ntransforms.extract.type=org.apache.kafka.connect.transforms.ExtractField$Value\ntransforms.extract.field=line\n",
    );
    let first = text.lines().next().unwrap();
    let mut expected = vec![0];
    expected.extend_from_slice(&id.to_be_bytes());
    expected.extend_from_slice(
        format!("{{\"line\":{}}}", serde_json::to_string(first).unwrap()).as_bytes(),
    );
    assert_eq!(records[0], expected);
}

/// The same with `io.confluent.connect.protobuf.ProtobufConverter`: each line is a top-level
/// STRING, registered as the `google.protobuf.StringValue` wrapper message (Confluent registers
/// the whole `google/protobuf/wrappers.proto` and writes message index 7; Tributary registers a
/// file holding only that message, so the index is `[0]`), and each record is the message
/// index byte `0` then the wrapper's field 1.
#[test]
fn a_file_round_trips_through_a_protobuf_topic() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let (id, records, text) = file_round_trip(
        &bootstrap,
        &registry,
        PROTOBUF,
        "syntax = \"proto3\";\npackage google.protobuf;\n\nmessage StringValue {\n  string value = 1;\n}\n",
        "",
        "",
    );
    let first = text.lines().next().unwrap();
    let mut expected = vec![0];
    expected.extend_from_slice(&id.to_be_bytes());
    expected.extend_from_slice(&[0, 10, first.len() as u8]);
    expected.extend_from_slice(first.as_bytes());
    assert_eq!(records[0], expected);
}

/// A file through FileStreamSource → topic → FileStreamSink with `class` as the worker's value
/// converter (and the connector lines `source_extra`, `sink_extra`): the output equals the
/// input, the subject `<topic>-value` has one version whose schema is `schema_text` (parsed),
/// and every record carries its id. Returns the id, the records and the input.
fn file_round_trip(
    bootstrap: &str,
    registry: &SchemaRegistry,
    class: &str,
    schema_text: &str,
    source_extra: &str,
    sink_extra: &str,
) -> (i32, Vec<Vec<u8>>, String) {
    let dir = test_dir();
    let topic = unique("registry-lines");
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    let text = lines(500, "registry");
    std::fs::write(&input, &text).unwrap();
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=src\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\n{source_extra}",
            input.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=sink\nconnector.class=FileStreamSink\ntasks.max=1\nfile={}\ntopics={topic}\n{sink_extra}",
            output.display()
        ),
    )
    .unwrap();
    let worker = StandaloneWorker::start(
        dir.path(),
        bootstrap,
        &converter_lines(class, registry),
        &["src.properties", "sink.properties"],
    );
    wait_for(
        "the sink's file to equal the input",
        Duration::from_secs(60),
        || (std::fs::read_to_string(&output).unwrap_or_default() == text).then_some(()),
    );
    let records = read_topic(bootstrap, &topic);
    assert_eq!(records.len(), 500);
    let (code, latest) = registry_get(
        registry,
        &format!("/subjects/{topic}-value/versions/latest"),
    );
    assert_eq!(code, 200, "{latest}");
    assert_eq!(
        latest["version"], 1,
        "one registration for the whole stream: {latest}"
    );
    let registered = latest["schema"].as_str().unwrap();
    match serde_json::from_str::<Json>(schema_text) {
        Ok(expected) => assert_eq!(serde_json::from_str::<Json>(registered).unwrap(), expected),
        // Protobuf schemas are texts.
        Err(_) => assert_eq!(registered, schema_text),
    }
    let id = latest["id"].as_i64().unwrap() as i32;
    for r in &records {
        assert_eq!(schema_id(r), id);
    }
    drop(worker);
    (id, records, text)
}

/// Struct records (VerifiableSource with `complete.record.data=true`) are registered as the
/// Avro record Confluent's AvroData makes of their schema, and confluent-kafka-python's
/// `AvroDeserializer` (fastavro, with its own registry client) reads every field of every
/// record back.
#[test]
fn confluent_kafka_python_reads_what_tributary_writes() {
    struct_records_read_by_python(AVRO, "avro", |schema| {
        assert_eq!(schema["type"], "record");
        schema["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    });
}

/// The same with the JSON Schema converter and confluent-kafka-python's `JSONDeserializer`,
/// which also validates each record against the schema Tributary registered.
#[test]
fn confluent_kafka_python_reads_and_validates_tributarys_json_schema_records() {
    struct_records_read_by_python(JSON_SCHEMA, "json", |schema| {
        assert_eq!(schema["type"], "object");
        let props = schema["properties"].as_object().unwrap();
        let mut names: Vec<(i64, String)> = props
            .iter()
            .map(|(k, v)| (v["connect.index"].as_i64().unwrap(), k.clone()))
            .collect();
        names.sort();
        names.into_iter().map(|(_, k)| k).collect()
    });
}

/// The same with the Protobuf converter and confluent-kafka-python's `ProtobufDeserializer`:
/// the registered schema is the proto3 message Confluent's ProtobufData makes of
/// VerifiableSource's schema. Python's deserializer needs a generated message class and Python
/// has no `.proto` compiler here (no protoc, no grpcio-tools), so the script builds the class at
/// runtime with `google.protobuf`'s descriptor APIs from the registered message's fields (names,
/// numbers, types) and lets `ProtobufDeserializer` read the header, the message indexes and the
/// message.
#[test]
fn confluent_kafka_python_reads_tributarys_protobuf_records() {
    struct_records_read_by_python(PROTOBUF, "protobuf", |schema| {
        let text = schema.as_str().unwrap();
        assert!(text.starts_with("syntax = \"proto3\";\n"), "{text}");
        text.lines()
            .filter(|l| l.starts_with("  ") && l.contains(" = "))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .collect()
    });
}

/// VerifiableSource struct records through `class`; the registered schema's field names (as
/// `field_names` reads them) are VerifiableSource's, and Python's deserializer `kind` decodes
/// the first 200 records to the values sent.
fn struct_records_read_by_python(
    class: &str,
    kind: &str,
    field_names: impl Fn(&Json) -> Vec<String>,
) {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let Some(python) = python_with_confluent_kafka() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("registry-structs");
    std::fs::write(
        dir.path().join("v.properties"),
        format!(
            "name=v\nconnector.class=org.apache.kafka.connect.tools.VerifiableSourceConnector\n\
             tasks.max=1\ntopic={topic}\nthroughput=1000\ncomplete.record.data=true\n"
        ),
    )
    .unwrap();
    let worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &converter_lines(class, &registry),
        &["v.properties"],
    );
    wait_for("200 records", Duration::from_secs(60), || {
        (topic_end(&bootstrap, &topic) >= 200).then_some(())
    });
    let mut records = read_topic(&bootstrap, &topic);
    records.truncate(200);
    let (code, latest) = registry_get(
        &registry,
        &format!("/subjects/{topic}-value/versions/latest"),
    );
    assert_eq!(code, 200, "{latest}");
    let text = latest["schema"].as_str().unwrap();
    let schema: Json = serde_json::from_str(text).unwrap_or_else(|_| Json::from(text));
    assert_eq!(
        field_names(&schema),
        ["name", "task", "topic", "time_ms", "seqno"]
    );
    let hex: String = records.iter().map(|r| format!("{}\n", to_hex(r))).collect();
    let input = dir.path().join("records.hex");
    std::fs::write(&input, hex).unwrap();
    let decoded = run_python_decoder(&python, &registry, kind, &topic, &input);
    assert_eq!(decoded.len(), 200);
    for (i, d) in decoded.iter().enumerate() {
        assert_eq!(d["seqno"], i as i64, "{d}");
        assert_eq!(d["task"], 0);
        assert_eq!(d["topic"], topic.as_str());
        assert_eq!(d["name"], "v");
        assert!(d["time_ms"].as_i64().unwrap() > 1_600_000_000_000);
    }
    drop(worker);
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A Python 3 with confluent-kafka's schema registry support (scripts/test installs it), or
/// `None` after [`missing`].
fn python_with_confluent_kafka() -> Option<String> {
    let ok = std::process::Command::new("python3")
        .args([
            "-c",
            "import confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.json_schema, fastavro",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some("python3".into())
    } else {
        missing("python3 with confluent-kafka[avro] (scripts/test installs it with pip)")
    }
}

/// Decodes each hex line of `input` (a record value of `topic`) with confluent-kafka-python's
/// `AvroDeserializer` (`kind` `avro`) or `JSONDeserializer` (`json`) against the registry; one
/// JSON object per record.
fn run_python_decoder(
    python: &str,
    registry: &SchemaRegistry,
    kind: &str,
    topic: &str,
    input: &std::path::Path,
) -> Vec<Json> {
    let script = r#"
import json, sys
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField
url, kind, topic, path = sys.argv[1:5]
# A request the registry never answers (seen once) times out and is retried, instead of
# hanging the test: the client has no timeout by default.
client = SchemaRegistryClient({"url": url, "timeout": 30})
if kind == "avro":
    deserializer = AvroDeserializer(client)
elif kind == "protobuf":
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    text = client.get_latest_version(topic + "-value").schema.schema_str
    types = {"string": 9, "int32": 5, "int64": 3, "bool": 8, "double": 1, "float": 2, "bytes": 12}
    fdp = descriptor_pb2.FileDescriptorProto(name="runtime.proto", syntax="proto3")
    msg = fdp.message_type.add()
    for line in text.splitlines():
        words = line.replace(";", "").split()
        if line.startswith("message "):
            msg.name = words[1]
        elif line.startswith("  ") and len(words) == 4 and words[2] == "=":
            msg.field.add(name=words[1], number=int(words[3]), type=types[words[0]], label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(msg.name))
    inner = ProtobufDeserializer(cls, {"use.deprecated.format": False})
    def deserializer(b, ctx):
        m = inner(b, ctx)
        return {f.name: getattr(m, f.name) for f in m.DESCRIPTOR.fields}
else:
    deserializer = JSONDeserializer(None, schema_registry_client=client)
ctx = SerializationContext(topic, MessageField.VALUE)
for line in open(path):
    value = deserializer(bytes.fromhex(line.strip()), ctx)
    print(json.dumps(value, default=str))
"#;
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&registry.ccompat)
        .arg(kind)
        .arg(topic)
        .arg(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Python deserializer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Bad input reaches a sink as Connect reports it: a record without the magic byte and one
/// with an unknown schema id fail the task (`errors.tolerance=none`) with Confluent's message;
/// with `errors.tolerance=all` and a dead letter queue they go there, original bytes kept, and
/// the good records around them reach the file in order.
#[test]
fn records_without_magic_byte_or_with_unknown_ids_fail_the_task_or_go_to_the_dead_letter_queue() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("avro-bad");
    // Good records first, written by the converter itself (a source), then the bad ones and a
    // last good one produced raw.
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "good 1\ngood 2\n").unwrap();
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=src\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\n",
            input.display()
        ),
    )
    .unwrap();
    let worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &avro_worker_lines(&registry),
        &["src.properties"],
    );
    wait_topic_end(&bootstrap, &topic, 2);
    let good = read_topic(&bootstrap, &topic);
    let id = schema_id(&good[0]);
    produce_raw(&bootstrap, &topic, b"k", b"plain text, no magic byte");
    let mut unknown = vec![0, 0x7f, 0xff, 0xff, 0xfe];
    unknown.extend_from_slice(&[4, b'h', b'i']);
    produce_raw(&bootstrap, &topic, b"k", &unknown);
    let mut last = vec![0];
    last.extend_from_slice(&id.to_be_bytes());
    last.push(12);
    last.extend_from_slice(b"good 3");
    produce_raw(&bootstrap, &topic, b"k", &last);

    // errors.tolerance=none: the task fails on the first bad record, naming it.
    let out_none = dir.path().join("none.txt");
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "strict", "config": {
                "connector.class": "FileStreamSink", "topics": topic,
                "file": out_none.display().to_string()}})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let status = wait_for(
        "the strict sink task to fail",
        Duration::from_secs(60),
        || {
            let (_, s) = worker.get("/connectors/strict/status");
            (s["tasks"][0]["state"] == "FAILED").then_some(s)
        },
    );
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("Unknown magic byte!"), "{trace}");
    assert!(
        trace.contains(&format!(
            "Failed to deserialize data for topic {topic} to Avro"
        )),
        "{trace}"
    );
    // Nothing from the bad record on reached the file (the records before it may not have
    // either: a batch's records are all converted before `put`, as in Connect).
    let written = std::fs::read_to_string(&out_none).unwrap_or_default();
    assert!("good 1\ngood 2\n".starts_with(&written), "{written}");

    // errors.tolerance=all with a dead letter queue.
    let dlq = unique("avro-dlq");
    let out_all = dir.path().join("all.txt");
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "tolerant", "config": {
                "connector.class": "FileStreamSink", "topics": topic,
                "file": out_all.display().to_string(),
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true"}})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    wait_for(
        "the tolerant sink's output",
        Duration::from_secs(60),
        || {
            (std::fs::read_to_string(&out_all).unwrap_or_default() == "good 1\ngood 2\ngood 3\n")
                .then_some(())
        },
    );
    wait_topic_end(&bootstrap, &dlq, 2);
    let dead = read_records(&bootstrap, &dlq);
    assert_eq!(
        dead[0].value.as_deref(),
        Some(&b"plain text, no magic byte"[..])
    );
    assert_eq!(dead[1].value.as_deref(), Some(&unknown[..]));
    let message = dead[1]
        .header("__connect.errors.exception.message")
        .unwrap_or_default();
    assert!(message.contains("2147483646"), "{message}");
    assert_eq!(
        worker.get("/connectors/tolerant/status").1["tasks"][0]["state"],
        "RUNNING"
    );
    drop(worker);
}

/// A schema the registry refuses (409: the subject's compatibility rule rejects it) fails the
/// source task with the registry's message, and nothing is written to the topic.
#[test]
fn an_incompatible_schema_is_refused_and_nothing_is_written() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("avro-409");
    let subject = format!("{topic}-value");
    let (code, body) = registry_send(
        &registry,
        "POST",
        &format!("/subjects/{subject}/versions"),
        &json!({"schema": r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#}),
    );
    assert_eq!(code, 200, "{body}");
    let (code, body) = registry_send(
        &registry,
        "PUT",
        &format!("/config/{subject}"),
        &json!({"compatibility": "FULL"}),
    );
    assert_eq!(code, 200, "{body}");
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a line\n").unwrap();
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=src\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\n",
            input.display()
        ),
    )
    .unwrap();
    let worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &avro_worker_lines(&registry),
        &["src.properties"],
    );
    let status = wait_for("the source task to fail", Duration::from_secs(60), || {
        let (_, s) = worker.get("/connectors/src/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains(&format!("Failed to serialize Avro data from topic {topic}")),
        "{trace}"
    );
    assert!(trace.contains("error code: 409"), "{trace}");
    assert_eq!(topic_end(&bootstrap, &topic), 0);
    drop(worker);
}

/// With `auto.register.schemas=false` a schema must already be in its subject: a source whose
/// schema is not fails with the registry's "not found"; once the schema is registered by hand,
/// a restarted task writes with that id.
#[test]
fn without_auto_registration_the_schema_must_be_registered_first() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("avro-noreg");
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "one\ntwo\n").unwrap();
    std::fs::write(
        dir.path().join("src.properties"),
        format!(
            "name=src\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\nvalue.converter={AVRO}\nvalue.converter.schema.registry.url={}\nvalue.converter.auto.register.schemas=false\n",
            input.display(),
            registry.ccompat
        ),
    )
    .unwrap();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &["src.properties"]);
    let status = wait_for("the source task to fail", Duration::from_secs(60), || {
        let (_, s) = worker.get("/connectors/src/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("error code: 404"), "{trace}");
    assert_eq!(topic_end(&bootstrap, &topic), 0);
    let (code, body) = registry_send(
        &registry,
        "POST",
        &format!("/subjects/{topic}-value/versions"),
        &json!({"schema": "\"string\""}),
    );
    assert_eq!(code, 200, "{body}");
    let id = body["id"].as_i64().unwrap() as i32;
    let (code, body) = worker.send("POST", "/connectors/src/tasks/0/restart", None);
    assert!(code == 204 || code == 202, "{code} {body}");
    wait_topic_end(&bootstrap, &topic, 2);
    for r in read_topic(&bootstrap, &topic) {
        assert_eq!(schema_id(&r), id);
    }
    drop(worker);
}

/// `use.latest.version=true` (with `auto.register.schemas=false`) writes with the subject's
/// latest schema and its id, once `latest.compatibility.strict` found that it reads the
/// record's schema; a latest schema that cannot read it fails the task naming the subject.
#[test]
fn use_latest_version_writes_with_the_latest_schema_when_it_reads_the_records() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "one\ntwo\n").unwrap();
    let run = |name: &str, latest: &str| -> (String, i64) {
        let topic = unique("registry-latest");
        let (code, body) = registry_send(
            &registry,
            "POST",
            &format!("/subjects/{topic}-value/versions"),
            &json!({ "schema": latest }),
        );
        assert_eq!(code, 200, "{body}");
        let id = body["id"].as_i64().unwrap();
        let (code, body) = worker.send(
            "POST",
            "/connectors",
            Some(
                &json!({"name": name, "config": {
                    "connector.class": "FileStreamSource", "tasks.max": "1",
                    "file": input.display().to_string(), "topic": topic,
                    "value.converter": AVRO,
                    "value.converter.schema.registry.url": registry.ccompat,
                    "value.converter.auto.register.schemas": "false",
                    "value.converter.use.latest.version": "true"}})
                .to_string(),
            ),
        );
        assert_eq!(code, 201, "{body}");
        (topic, id)
    };
    // The latest schema is a union that reads a string: records are written with its id and
    // its branch index (1), not with a schema of their own.
    let (topic, id) = run("ok", r#"["null","string"]"#);
    wait_topic_end(&bootstrap, &topic, 2);
    for r in read_topic(&bootstrap, &topic) {
        assert_eq!(i64::from(schema_id(&r)), id);
        assert_eq!(r[5], 2, "union branch 1 (zig-zag)");
    }
    // A latest schema that cannot read a string.
    let (topic, _) = run("bad", r#""int""#);
    let status = wait_for("the source task to fail", Duration::from_secs(60), || {
        let (_, s) = worker.get("/connectors/bad/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains(&format!("Latest schema of subject {topic}-value")),
        "{trace}"
    );
    assert_eq!(topic_end(&bootstrap, &topic), 0);
    drop(worker);
}

/// `value.subject.name.strategy=…RecordNameStrategy` registers a struct's schema under the
/// record's full name, and `TopicRecordNameStrategy` under `<topic>-<full name>`.
#[test]
fn subject_name_strategies_name_the_subjects() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "x\n").unwrap();
    let record = unique("strategy").replace('-', "_");
    for (name, strategy) in [
        (
            "record",
            "io.confluent.kafka.serializers.subject.RecordNameStrategy",
        ),
        (
            "topic-record",
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
        ),
    ] {
        let topic = unique("registry-strategy");
        let (code, body) = worker.send(
            "POST",
            "/connectors",
            Some(
                &json!({"name": name, "config": {
                    "connector.class": "FileStreamSource", "tasks.max": "1",
                    "file": input.display().to_string(), "topic": topic,
                    "transforms": "hoist,name",
                    "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                    "transforms.hoist.field": "line",
                    "transforms.name.type": "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
                    "transforms.name.schema.name": format!("t.{record}.Line"),
                    "value.converter": AVRO,
                    "value.converter.schema.registry.url": registry.ccompat,
                    "value.converter.value.subject.name.strategy": strategy}})
                .to_string(),
            ),
        );
        assert_eq!(code, 201, "{body}");
        wait_topic_end(&bootstrap, &topic, 1);
        let subject = if name == "record" {
            format!("t.{record}.Line")
        } else {
            format!("{topic}-t.{record}.Line")
        };
        let (code, latest) =
            registry_get(&registry, &format!("/subjects/{subject}/versions/latest"));
        assert_eq!(code, 200, "{subject}: {latest}");
        let id = latest["id"].as_i64().unwrap();
        assert_eq!(i64::from(schema_id(&read_topic(&bootstrap, &topic)[0])), id);
    }
    drop(worker);
}

/// A registry that does not answer loses nothing, even with `errors.tolerance=all`: the source
/// task fails (after the client's retries; Connect would skip the records), nothing is written
/// or committed; pointed at the registry again (a config update), every line arrives exactly
/// once.
#[test]
fn a_registry_outage_fails_the_task_and_loses_no_record() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("avro-outage");
    let input = dir.path().join("in.txt");
    let text = lines(50, "outage");
    std::fs::write(&input, &text).unwrap();
    // A port nothing listens on: bound and released.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://127.0.0.1:{}", dead.local_addr().unwrap().port());
    drop(dead);
    let config = |url: &str| {
        json!({
            "connector.class": "FileStreamSource", "tasks.max": "1",
            "file": input.display().to_string(), "topic": topic,
            "value.converter": AVRO,
            "value.converter.schema.registry.url": url,
            "value.converter.max.retries": "1",
            "value.converter.retries.wait.ms": "10",
            "errors.tolerance": "all",
        })
    };
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    let (code, body) = worker.send(
        "POST",
        "/connectors",
        Some(&json!({"name": "src", "config": config(&dead_url)}).to_string()),
    );
    assert_eq!(code, 201, "{body}");
    let status = wait_for("the source task to fail", Duration::from_secs(60), || {
        let (_, s) = worker.get("/connectors/src/status");
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("Network connection error while serializing Avro data"),
        "{trace}"
    );
    assert_eq!(topic_end(&bootstrap, &topic), 0);
    let (code, body) = worker.send(
        "PUT",
        "/connectors/src/config",
        Some(&config(&registry.ccompat).to_string()),
    );
    assert_eq!(code, 200, "{body}");
    wait_topic_end(&bootstrap, &topic, 50);
    let (code, latest) = registry_get(
        &registry,
        &format!("/subjects/{topic}-value/versions/latest"),
    );
    assert_eq!(code, 200, "{latest}");
    let records = read_topic(&bootstrap, &topic);
    let got: Vec<String> = records
        .iter()
        .map(|r| {
            // "string" datum: header, zig-zag length varint, UTF-8.
            let mut pos = 5;
            let mut n: u64 = 0;
            let mut shift = 0;
            loop {
                let b = r[pos];
                pos += 1;
                n |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    break;
                }
                shift += 7;
            }
            let len = (n >> 1) as usize;
            String::from_utf8(r[pos..pos + len].to_vec()).unwrap()
        })
        .collect();
    let expected: Vec<&str> = text.lines().collect();
    assert_eq!(got, expected);
    drop(worker);
}

/// Settings Tributary does not implement are refused naming the key, at create time (the
/// converter is configured during validation).
#[test]
fn unimplemented_settings_are_refused_naming_the_key() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let dir = test_dir();
    let worker = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    for (key, value) in [
        (
            "value.converter.basic.auth.credentials.source",
            "SASL_INHERIT",
        ),
        ("value.converter.use.latest.with.metadata", "app=x"),
        (
            "value.converter.value.subject.name.strategy",
            "com.example.MyStrategy",
        ),
    ] {
        let (code, body) = worker.send(
            "POST",
            "/connectors",
            Some(
                &json!({"name": "c", "config": {
                    "connector.class": "FileStreamSink", "topics": "t",
                    "value.converter": AVRO,
                    "value.converter.schema.registry.url": registry.ccompat,
                    key: value}})
                .to_string(),
            ),
        );
        assert_eq!(code, 400, "{key}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        let short = key.strip_prefix("value.converter.").unwrap();
        assert!(message.contains(short), "{key}: {message}");
    }
    drop(worker);
}
