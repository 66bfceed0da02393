//! Java transformations and predicates from `plugin.path` (issue #15), on the real broker:
//! Apache Kafka's own `connect-transforms` 4.4.0 (from Maven Central, in a plugin directory
//! made by `scripts/jvm-bridge plugin-path`) forced to run as Java with
//! `tributary.plugins.prefer.java`, in chains that mix them with a native transformation, with
//! Java predicates (negated too), on a native source and a native sink connector, give what the
//! native classes give, record for record and byte for byte; a Java transformation that throws
//! under `errors.tolerance=all` sends the record to the dead letter queue with the Java
//! exception; the listing shows the Java classes, and validation answers with their
//! `ConfigDef`.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::json;

const SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const T: &str = "org.apache.kafka.connect.transforms.";

/// The Apache classes the Java runs force to Java; `InsertField$Value` stays native.
fn forced() -> Vec<String> {
    [
        "HoistField$Value",
        "InsertHeader",
        "Filter",
        "ExtractField$Value",
        "TimestampConverter$Value",
        "predicates.TopicNameMatches",
        "predicates.HasHeaderKey",
    ]
    .iter()
    .map(|c| format!("{T}{c}"))
    .collect()
}

fn has_jvm(w: &StandaloneWorker) -> bool {
    std::fs::read_to_string(format!("/proc/{}/maps", w.child.id()))
        .unwrap()
        .contains("libjvm")
}

/// A native FileStreamSource into `topic` whose records go through HoistField (Java), then
/// InsertField (native), then InsertHeader (Java) where the Java TopicNameMatches predicate
/// matches, then a Java Filter under the same predicate negated (so nothing is dropped).
fn source_config(file: &Path, topic: &str) -> String {
    format!(
        "name=src\nconnector.class={SOURCE}\ntasks.max=1\nfile={}\ntopic={topic}\n\
value.converter=org.apache.kafka.connect.json.JsonConverter\n\
transforms=hoist,mark,hdr,keep\n\
transforms.hoist.type={T}HoistField$Value\ntransforms.hoist.field=line\n\
transforms.mark.type={T}InsertField$Value\ntransforms.mark.static.field=via\ntransforms.mark.static.value=tributary\n\
transforms.hdr.type={T}InsertHeader\ntransforms.hdr.header=origin\ntransforms.hdr.value.literal=file\ntransforms.hdr.predicate=onTopic\n\
transforms.keep.type={T}Filter\ntransforms.keep.predicate=onTopic\ntransforms.keep.negate=true\n\
predicates=onTopic\npredicates.onTopic.type={T}predicates.TopicNameMatches\npredicates.onTopic.pattern={topic}\n",
        file.display()
    )
}

/// A native FileStreamSink of `topic` whose records go through a Java Filter for records with
/// a `drop` header, then Java ExtractField (which throws on the string values) for records
/// with a `bad` header, with errors.tolerance=all and a dead letter queue.
fn sink_config(name: &str, file: &Path, topic: &str, dlq: &str) -> String {
    format!(
        "name={name}\nconnector.class={SINK}\ntasks.max=1\nfile={}\ntopics={topic}\n\
transforms=drop,extract\n\
transforms.drop.type={T}Filter\ntransforms.drop.predicate=hasDrop\n\
transforms.extract.type={T}ExtractField$Value\ntransforms.extract.field=x\ntransforms.extract.predicate=hasBad\n\
predicates=hasDrop,hasBad\n\
predicates.hasDrop.type={T}predicates.HasHeaderKey\npredicates.hasDrop.name=drop\n\
predicates.hasBad.type={T}predicates.HasHeaderKey\npredicates.hasBad.name=bad\n\
errors.tolerance=all\nerrors.deadletterqueue.topic.name={dlq}\n\
errors.deadletterqueue.topic.replication.factor=1\nerrors.deadletterqueue.context.headers.enable=true\n",
        file.display()
    )
}

fn lines(n: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..n {
        data.extend_from_slice(format!("line {i} ünïcödé {}\n", "x".repeat(i % 13)).as_bytes());
    }
    data
}

/// What one run gives: the source topic's records, the sink's output file, the dead letter
/// queue's records, the listing of transformations and predicates, whether a JVM was loaded.
struct Run {
    source_records: Vec<Rec>,
    output: Vec<u8>,
    dlq: Vec<Rec>,
    listed: Vec<(String, String, String)>,
    jvm: bool,
    _dir: TestDir,
}

/// A record's key, value and headers.
type Content = (
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

const LINES: usize = 300;
const SINK_RECORDS: usize = 60;

fn is_drop(i: usize) -> bool {
    i.is_multiple_of(3)
}
fn is_bad(i: usize) -> bool {
    i % 5 == 1
}

fn run(bootstrap: &str, label: &str, extra: String) -> Run {
    let dir = test_dir();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, lines(LINES)).unwrap();
    let output = dir.path().join("output.txt");
    let source_topic = unique(&format!("jsmt-src-{label}"));
    let sink_topic = unique(&format!("jsmt-sink-{label}"));
    let dlq = unique(&format!("jsmt-dlq-{label}"));
    let sink = unique(&format!("jsmt-sink-{label}"));
    create_topic(bootstrap, &source_topic, 1);
    create_topic(bootstrap, &sink_topic, 1);
    let values: Vec<String> = (0..SINK_RECORDS).map(|i| format!("v{i}")).collect();
    let keys: Vec<String> = (0..SINK_RECORDS).map(|i| format!("k{i}")).collect();
    let records: Vec<Produced> = (0..SINK_RECORDS)
        .map(|i| {
            let headers: &[(&str, &str)] = if is_drop(i) {
                &[("drop", "1")]
            } else if is_bad(i) {
                &[("bad", "1")]
            } else {
                &[]
            };
            (Some(keys[i].as_str()), values[i].as_str(), headers)
        })
        .collect();
    produce(bootstrap, &sink_topic, &records);
    std::fs::write(
        dir.path().join("src.properties"),
        source_config(&input, &source_topic),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sink.properties"),
        sink_config(&sink, &output, &sink_topic, &dlq),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        bootstrap,
        &extra,
        &["src.properties", "sink.properties"],
    );
    w.wait_state("src", 1, "RUNNING");
    w.wait_state(&sink, 1, "RUNNING");
    let kept = (0..SINK_RECORDS)
        .filter(|&i| !is_drop(i) && !is_bad(i))
        .count();
    let bad = (0..SINK_RECORDS)
        .filter(|&i| !is_drop(i) && is_bad(i))
        .count();
    wait_for("the sink's output", Duration::from_secs(120), || {
        let out = std::fs::read(&output).unwrap_or_default();
        (out.iter().filter(|&&b| b == b'\n').count() >= kept).then_some(())
    });
    wait_for("the source's records", Duration::from_secs(120), || {
        (topic_end(bootstrap, &source_topic) >= LINES as i64).then_some(())
    });
    wait_for("the dead letter queue", Duration::from_secs(120), || {
        (topic_end(bootstrap, &dlq) >= bad as i64).then_some(())
    });
    let (code, body) = w.get("/connector-plugins?connectorsOnly=false");
    assert_eq!(code, 200, "{body}");
    let listed = body
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "transformation" || p["type"] == "predicate")
        .map(|p| {
            (
                p["class"].as_str().unwrap().to_string(),
                p["type"].as_str().unwrap().to_string(),
                p["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    Run {
        source_records: read_records(bootstrap, &source_topic),
        output: std::fs::read(&output).unwrap(),
        dlq: read_records(bootstrap, &dlq),
        listed,
        jvm: has_jvm(&w),
        _dir: dir,
    }
}

/// The chains above with Apache's classes forced to Java, on the native connectors and on
/// Apache's Java FileStream connectors, equal the chains with Tributary's native classes: the same source records (keys, values, headers, byte for byte), the same
/// sink output, and the same records in the dead letter queue, whose context headers carry the
/// Java exception's class and message.
#[test]
fn java_transformations_and_predicates_give_what_the_native_ones_give() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let forced = forced();
    let forced_refs: Vec<&str> = forced.iter().map(String::as_str).collect();
    let java = run(
        &bootstrap,
        "java",
        jvm_lines(&classpath, &plugin_path, &forced_refs),
    );
    // The same chains on Apache's Java FileStream connectors (Java records through the chain).
    let mut with_connectors = forced_refs.clone();
    with_connectors.extend([SOURCE, SINK]);
    let java_connectors = run(
        &bootstrap,
        "javaconn",
        jvm_lines(&classpath, &plugin_path, &with_connectors),
    );
    let native = run(&bootstrap, "native", String::new());

    assert!(java.jvm, "the Java chain ran in the worker's JVM");
    assert!(!native.jvm);

    // The source chain: HoistField (Java) → InsertField (native) → InsertHeader (Java, under a
    // Java predicate) → Filter (Java, predicate negated: nothing dropped).
    assert_eq!(java.source_records.len(), LINES);
    let first: serde_json::Value =
        serde_json::from_slice(java.source_records[0].value.as_ref().unwrap()).unwrap();
    assert_eq!(
        first["payload"],
        json!({"line": "line 0 ünïcödé ", "via": "tributary"})
    );
    assert_eq!(
        java.source_records[0].header("origin").as_deref(),
        Some("file")
    );
    // Keys, values and headers (the timestamps are each run's own).
    let content = |r: &Run| -> Vec<Content> {
        r.source_records
            .iter()
            .map(|r| (r.key.clone(), r.value.clone(), r.headers.clone()))
            .collect()
    };
    let n = content(&native);
    for run in [&java, &java_connectors] {
        let j = content(run);
        assert_eq!(j.len(), n.len());
        for (i, (a, b)) in j.iter().zip(&n).enumerate() {
            assert!(
                a == b,
                "record {i}: Java {:?} / native {:?}",
                String::from_utf8_lossy(a.1.as_deref().unwrap_or_default()),
                String::from_utf8_lossy(b.1.as_deref().unwrap_or_default())
            );
        }
    }

    // The sink chain: records with `drop` dropped by the Java Filter, records with `bad`
    // failed by the Java ExtractField into the dead letter queue, the others written.
    let expected: String = (0..SINK_RECORDS)
        .filter(|&i| !is_drop(i) && !is_bad(i))
        .map(|i| format!("v{i}\n"))
        .collect();
    assert_eq!(String::from_utf8(java.output.clone()).unwrap(), expected);
    assert_eq!(java.output, native.output);
    assert_eq!(java_connectors.output, native.output);
    let dlq_values =
        |r: &Run| -> Vec<Option<Vec<u8>>> { r.dlq.iter().map(|r| r.value.clone()).collect() };
    let bad: Vec<Option<Vec<u8>>> = (0..SINK_RECORDS)
        .filter(|&i| !is_drop(i) && is_bad(i))
        .map(|i| Some(format!("v{i}").into_bytes()))
        .collect();
    assert_eq!(dlq_values(&java), bad);
    assert_eq!(dlq_values(&java), dlq_values(&native));
    assert_eq!(dlq_values(&java_connectors), dlq_values(&native));
    assert!(java_connectors.jvm);
    let d = &java.dlq[0];
    assert_eq!(
        d.header("__connect.errors.exception.class.name").as_deref(),
        Some("org.apache.kafka.connect.errors.DataException")
    );
    assert_eq!(
        d.header("__connect.errors.class.name").as_deref(),
        Some("org.apache.kafka.connect.transforms.ExtractField$Value")
    );
    assert_eq!(
        d.header("__connect.errors.exception.message"),
        native.dlq[0].header("__connect.errors.exception.message"),
        "the Java exception's message is the native one's"
    );
    let trace = d.header("__connect.errors.exception.stacktrace").unwrap();
    assert!(
        trace.contains("at org.apache.kafka.connect.transforms.ExtractField.apply"),
        "{trace}"
    );

    // The listing: every Apache transformation and predicate, forced ones as the Java plugin.
    for class in &forced {
        let kind = if class.contains(".predicates.") {
            "predicate"
        } else {
            "transformation"
        };
        assert!(
            java.listed
                .contains(&(class.clone(), kind.to_string(), bridge_connect_version())),
            "{class}: {:?}",
            java.listed
        );
    }
    assert_eq!(
        java.listed.len(),
        native.listed.len(),
        "the same classes, Java or native"
    );
}

/// Validation of a connector using Java transformations answers with their `ConfigDef`: a
/// missing required key and a value their own validator refuses are reported as Connect
/// reports them (the same errors as for the native classes); a class in neither the native nor
/// the Java set is refused with Connect's message.
#[test]
fn validation_uses_the_java_config_def() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let forced = forced();
    let forced_refs: Vec<&str> = forced.iter().map(String::as_str).collect();
    let errors_of = |w: &StandaloneWorker| {
        let config = json!({
            "name": "v",
            "connector.class": SINK,
            "topics": "t",
            "file": "/tmp/x",
            "transforms": "h,ts,u",
            "transforms.h.type": format!("{T}HoistField$Value"),
            "transforms.ts.type": format!("{T}TimestampConverter$Value"),
            "transforms.ts.target.type": "bogus",
            "transforms.u.type": "com.example.NoSuchTransformation",
        });
        let (code, body) = w.send(
            "PUT",
            &format!("/connector-plugins/{SINK}/config/validate"),
            Some(&config.to_string()),
        );
        assert_eq!(code, 200, "{body}");
        let out: Vec<(String, Vec<String>)> = config_errors(&body).into_iter().collect();
        (body["error_count"].as_i64().unwrap(), out)
    };
    let dir = test_dir();
    let java_worker = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &plugin_path, &forced_refs),
        &[],
    );
    let java = errors_of(&java_worker);
    assert!(has_jvm(&java_worker), "validation asked the Java classes");
    drop(java_worker);
    let dir2 = test_dir();
    let native_worker = StandaloneWorker::start(dir2.path(), &bootstrap, "", &[]);
    let native = errors_of(&native_worker);
    assert_eq!(java.0, 3, "{java:?}");
    let find = |key: &str| {
        java.1
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, e)| e.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        find("transforms.h.field"),
        vec!["Missing required configuration \"transforms.h.field\" which has no default value."]
    );
    assert!(
        find("transforms.ts.target.type")[0]
            .starts_with("Invalid value bogus for configuration target.type: "),
        "{java:?}"
    );
    assert_eq!(
        find("transforms.u.type"),
        vec!["Invalid value com.example.NoSuchTransformation for configuration transforms.u.type: Class com.example.NoSuchTransformation could not be found."]
    );
    assert_eq!(java, native, "Java and native classes validate alike");
}

/// `plugin.path` directory with Debezium's transformations (`scripts/jvm-bridge
/// debezium-transforms`), `None` without Maven or network.
fn debezium_transforms() -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(root.join("scripts/jvm-bridge"))
        .arg("debezium-transforms")
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return missing("`scripts/jvm-bridge debezium-transforms` failed (no mvn, or no network?)");
    }
    Some(String::from_utf8(out.stdout).unwrap().trim().to_string())
}

/// A Debezium change event for table `t` (id, name) as JsonConverter writes it.
fn change_event(op: &str, before: Option<(i32, &str)>, after: Option<(i32, &str)>) -> String {
    let row_schema = json!({"type": "struct", "name": "dbserver.public.t.Value", "optional": true,
        "fields": [{"field": "id", "type": "int32", "optional": false},
                   {"field": "name", "type": "string", "optional": true}]});
    let mut before_schema = row_schema.clone();
    before_schema["field"] = json!("before");
    let mut after_schema = row_schema;
    after_schema["field"] = json!("after");
    let row = |r: Option<(i32, &str)>| r.map(|(id, name)| json!({"id": id, "name": name}));
    json!({
        "schema": {"type": "struct", "name": "dbserver.public.t.Envelope", "optional": false,
            "fields": [before_schema, after_schema,
                {"field": "source", "type": "struct", "name": "io.debezium.connector.postgresql.Source",
                 "optional": false, "fields": [
                    {"field": "db", "type": "string", "optional": false},
                    {"field": "table", "type": "string", "optional": false}]},
                {"field": "op", "type": "string", "optional": false},
                {"field": "ts_ms", "type": "int64", "optional": true}]},
        "payload": {"before": row(before), "after": row(after),
            "source": {"db": "db", "table": "t"}, "op": op, "ts_ms": 1_700_000_000_000i64}
    })
    .to_string()
}

/// Debezium's `ExtractNewRecordState` (from `debezium-connect-plugins` 3.6.1.Final, Maven
/// Central), a Java transformation Tributary has no native class for, unwraps change events
/// for a native FileStreamSink, followed in the chain by the native `ReplaceField$Value`, and
/// guarded by the native `RecordIsTombstone` predicate, negated.
#[test]
fn debezium_extract_new_record_state_unwraps_change_events() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let Some(debezium) = debezium_transforms() else {
        return;
    };
    let dir = test_dir();
    let topic = unique("jsmt-dbz");
    create_topic(&bootstrap, &topic, 1);
    let events = [
        change_event("c", None, Some((1, "a"))),
        change_event("u", Some((1, "a")), Some((1, "b"))),
        change_event("d", Some((1, "b")), None),
    ];
    let records: Vec<Produced> = events
        .iter()
        .map(|e| (Some("1"), e.as_str(), &[][..]))
        .collect();
    produce(&bootstrap, &topic, &records);
    let output = dir.path().join("output.txt");
    std::fs::write(
        dir.path().join("sink.properties"),
        format!(
            "name=dbz\nconnector.class={SINK}\ntasks.max=1\nfile={}\ntopics={topic}\n\
value.converter=org.apache.kafka.connect.json.JsonConverter\n\
transforms=unwrap,rename\n\
transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState\n\
transforms.unwrap.add.fields=op\ntransforms.unwrap.delete.tombstone.handling.mode=rewrite\n\
transforms.unwrap.predicate=tombstone\ntransforms.unwrap.negate=true\n\
transforms.rename.type={T}ReplaceField$Value\ntransforms.rename.renames=name:title\n\
predicates=tombstone\npredicates.tombstone.type={T}predicates.RecordIsTombstone\n",
            output.display()
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        &jvm_lines(&classpath, &format!("{plugin_path},{debezium}"), &[]),
        &["sink.properties"],
    );
    w.wait_state("dbz", 1, "RUNNING");
    let text = wait_for("the unwrapped rows", Duration::from_secs(120), || {
        let out = std::fs::read_to_string(&output).unwrap_or_default();
        (out.lines().count() >= 3).then_some(out)
    });
    // Debezium's unwrapped rows (`__deleted` from the rewrite of the delete, `__op` from
    // add.fields), with the native ReplaceField's renaming after it.
    assert_eq!(
        text,
        "Struct{id=1,title=a,__deleted=false,__op=c}\n\
         Struct{id=1,title=b,__deleted=false,__op=u}\n\
         Struct{id=1,title=b,__deleted=true,__op=d}\n"
    );
    let (code, body) = w.get("/connector-plugins?connectorsOnly=false");
    assert_eq!(code, 200);
    assert!(
        body.as_array().unwrap().iter().any(|p| p
            == &json!({"class": "io.debezium.transforms.ExtractNewRecordState",
                "type": "transformation", "version": "3.6.1.Final"})),
        "{body}"
    );
    assert!(has_jvm(&w));
}
