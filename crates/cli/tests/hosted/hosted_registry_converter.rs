//! A schema-registry converter of `plugin.path` hosted by Tributary (issue #29): Apicurio's
//! Java `io.apicurio.registry.utils.converter.AvroConverter` (2.6.13.Final, from
//! `scripts/registry converter-plugin`) against a real Apicurio Registry 3.3.3
//! (`scripts/registry`, started by `scripts/test`), converting on both sides of a native
//! FileStreamSource → Kafka → FileStreamSink pipeline, as it does on a Java Connect worker.
//!
//! Its `toConnectData` of an Avro `string` returns Avro's `org.apache.avro.util.Utf8`, without
//! a schema: a Java worker hands that object to the sink task as it is; the bridge used to
//! refuse it when encoding the Connect data that crosses to Tributary (JsonConverter has no
//! schema type for `Utf8`), failing the sink task. The bridge now normalises plugin-produced
//! values by schema type (by class without a schema) before they cross.
//!
//! Settings that work against the 3.3.3 server: the 2.6 client speaks Apicurio's v2 REST API,
//! which 3.x still serves, so `apicurio.registry.url` is `APICURIO_REGISTRY_URL`
//! (`…/apis/registry/v2`), with `apicurio.registry.auto-register=true` (the serializer
//! otherwise looks the schema up and fails on a new topic). `apicurio.registry.as-confluent`
//! only changes the framing (a 4-byte id after a zero magic byte instead of Apicurio's 8-byte
//! one), not the API the client calls; with `apicurio.registry.use-id=contentId` that id is the
//! one the server's Confluent-compatible API (`SCHEMA_REGISTRY_URL`) knows the schema by.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

const AVRO_CONVERTER: &str = "io.apicurio.registry.utils.converter.AvroConverter";

/// 500 lines: multi-byte UTF-8, quotes, backslashes, tabs, and a few empty lines.
fn input() -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..500 {
        if i % 100 == 7 {
            data.push(b'\n');
            continue;
        }
        data.extend_from_slice(
            format!(
                "line {i} ünïcödé \"quoted\" back\\slash {}\tend\n",
                "x".repeat(i % 61)
            )
            .as_bytes(),
        );
    }
    data
}

/// Waits until `output` holds `lines` lines; fails at once, with the task's trace, when the
/// sink's task FAILED.
fn wait_output(w: &StandaloneWorker, sink: &str, output: &Path, lines: usize) -> Vec<u8> {
    wait_for(
        &format!("{lines} lines in {}", output.display()),
        Duration::from_secs(120),
        || {
            let (_, status) = w.get(&format!("/connectors/{sink}/status"));
            if let Some(t) = status["tasks"]
                .as_array()
                .and_then(|ts| ts.iter().find(|t| t["state"] == "FAILED"))
            {
                panic!("the sink task of {sink} FAILED: {}", t["trace"]);
            }
            let out = std::fs::read(output).unwrap_or_default();
            (out.iter().filter(|&&b| b == b'\n').count() >= lines).then_some(out)
        },
    )
}

fn connector(name: &str, class: &str, file: &Path, topic: &str, extra: &str) -> String {
    let topic_key = if class == "FileStreamSource" {
        "topic"
    } else {
        "topics"
    };
    format!(
        "name={name}\nconnector.class={class}\ntasks.max=1\nfile={}\n{topic_key}={topic}\n{extra}",
        file.display()
    )
}

/// Apicurio's AvroConverter as the worker's value converter (Apicurio's own settings: the
/// schema's global id in a record header), and as a connector's value converter with
/// `apicurio.registry.as-confluent=true` (Confluent's framing in the value), each on a native
/// FileStreamSource → topic → FileStreamSink pipeline: the records in Kafka are Avro written
/// through the registry, and each output file equals its input byte for byte, as on Java
/// Connect 4.1.1.
#[test]
fn apicurio_avro_converter_round_trips_a_file_through_the_registry() {
    let Some(bootstrap) = kafka() else { return };
    let Some(registry) = schema_registry() else {
        return;
    };
    let Some((classpath, _)) = java_bridge() else {
        return;
    };
    let Some(plugin_path) = apicurio_converter_plugin() else {
        return;
    };
    let data = input();
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let dir = test_dir();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, &data).unwrap();

    // Pipeline 1: the worker's value.converter, Apicurio's defaults (headers carry the id).
    let topic = unique("apicurio-avro");
    create_topic(&bootstrap, &topic, 1);
    let output = dir.path().join("output.txt");
    let sink = unique("apicurio-sink");
    std::fs::write(
        dir.path().join("src.properties"),
        connector("apicurio-src", "FileStreamSource", &input, &topic, ""),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sink.properties"),
        connector(&sink, "FileStreamSink", &output, &topic, ""),
    )
    .unwrap();

    // Pipeline 2: the connectors' value.converter, Confluent's framing, the content id.
    let confluent_topic = unique("apicurio-confluent");
    create_topic(&bootstrap, &confluent_topic, 1);
    let confluent_output = dir.path().join("confluent-output.txt");
    let confluent_sink = unique("apicurio-confluent-sink");
    let confluent = format!(
        "value.converter={AVRO_CONVERTER}\nvalue.converter.apicurio.registry.url={}\nvalue.converter.apicurio.registry.auto-register=true\nvalue.converter.apicurio.registry.as-confluent=true\nvalue.converter.apicurio.registry.use-id=contentId\nvalue.converter.apicurio.registry.headers.enabled=false\n",
        registry.apicurio_v2
    );
    std::fs::write(
        dir.path().join("csrc.properties"),
        connector(
            "apicurio-confluent-src",
            "FileStreamSource",
            &input,
            &confluent_topic,
            &confluent,
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("csink.properties"),
        connector(
            &confluent_sink,
            "FileStreamSink",
            &confluent_output,
            &confluent_topic,
            &confluent,
        ),
    )
    .unwrap();

    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &format!(
            "{}value.converter={AVRO_CONVERTER}\nvalue.converter.apicurio.registry.url={}\nvalue.converter.apicurio.registry.auto-register=true\n",
            jvm_lines(&classpath, &plugin_path, &[]),
            registry.apicurio_v2
        ),
        &[
            "src.properties",
            "sink.properties",
            "csrc.properties",
            "csink.properties",
        ],
    );

    let out = wait_output(&w, &sink, &output, lines);
    assert!(out == data, "the output file equals the input");
    let out = wait_output(&w, &confluent_sink, &confluent_output, lines);
    assert!(out == data, "the as-confluent output file equals the input");

    // In Kafka: Avro strings (a zig-zag length, then the UTF-8 bytes), the schema's global id
    // in Apicurio's header.
    let expected: Vec<&[u8]> = data.split(|&b| b == b'\n').take(lines).collect::<Vec<_>>();
    let records = read_records(&bootstrap, &topic);
    assert_eq!(records.len(), lines);
    for (r, line) in records.iter().zip(&expected) {
        let value = r.value.as_deref().unwrap();
        assert_eq!(&avro_string(value), line, "an Avro string");
        let id = r
            .headers
            .iter()
            .find(|(k, _)| k == "apicurio.value.globalId")
            .and_then(|(_, v)| v.as_ref());
        assert_eq!(id.map(Vec::len), Some(8), "{:?}", r.headers);
    }
    // Confluent's framing: magic byte 0, the 4-byte content id, then the Avro string; the id is
    // the `"string"` schema in the registry's Confluent-compatible API.
    let records = read_records(&bootstrap, &confluent_topic);
    assert_eq!(records.len(), lines);
    let mut ids = std::collections::BTreeSet::new();
    for (r, line) in records.iter().zip(&expected) {
        let value = r.value.as_deref().unwrap();
        assert_eq!(value[0], 0, "Confluent's magic byte");
        ids.insert(u32::from_be_bytes(value[1..5].try_into().unwrap()));
        assert_eq!(&avro_string(&value[5..]), line, "an Avro string");
    }
    assert_eq!(ids.len(), 1, "one schema: {ids:?}");
    let id = ids.into_iter().next().unwrap();
    let schema: serde_json::Value =
        reqwest::blocking::get(format!("{}/schemas/ids/{id}", registry.ccompat))
            .unwrap()
            .json()
            .unwrap();
    assert_eq!(schema["schema"], "\"string\"", "{schema}");
}

/// The bytes of one Avro-encoded `string` (a zig-zag varint length, then the bytes); panics
/// when `b` holds anything else.
fn avro_string(b: &[u8]) -> Vec<u8> {
    let (mut n, mut shift, mut i) = (0u64, 0, 0);
    loop {
        let byte = b[i];
        n |= u64::from(byte & 0x7f) << shift;
        i += 1;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let len = (n >> 1) as i64 ^ -((n & 1) as i64);
    assert_eq!(b.len() - i, len as usize, "an Avro string's length");
    b[i..].to_vec()
}
