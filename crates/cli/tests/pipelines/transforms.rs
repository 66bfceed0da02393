//! Transformation chains and error handling on a real broker (KIP-66, KIP-585, KIP-298,
//! KIP-793): a FileStreamSource whose chain transforms, drops and routes records under
//! predicates; a sink whose transformation renames the topic and still commits (a restart
//! neither loses nor repeats records); `errors.tolerance=all` sending an unreadable record to
//! the dead letter queue with Connect's headers and its original bytes; `errors.tolerance=none`
//! failing the task with the stage in the trace; retries of a retriable failure; and
//! validation answers naming `transforms.<alias>.<key>`; a sink chain that filters on each
//! consumed record's Kafka headers.
//!
//! The chains mostly use Tributary's test transformation and predicate
//! (`io.tributary.connect.testing.TestTransformation` / `TestPredicate`), which drop, fail or
//! delay records on demand; the topic-renaming sink uses Connect's `RegexRouter`.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const TT: &str = "io.tributary.connect.testing.TestTransformation";
const TP: &str = "io.tributary.connect.testing.TestPredicate";

fn values(recs: &[Rec]) -> Vec<String> {
    recs.iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

/// The lines of a file (empty when it does not exist yet).
fn file_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn create(w: &StandaloneWorker, name: &str, config: Value) -> (u16, Value) {
    w.send(
        "POST",
        "/connectors",
        Some(&json!({"name": name, "config": config}).to_string()),
    )
}

/// The task's status once it is FAILED.
fn wait_task_failed(w: &StandaloneWorker, name: &str) -> Value {
    wait_for(
        &format!("task of {name} to fail"),
        Duration::from_secs(60),
        || {
            let (_, s) = w.get(&format!("/connectors/{name}/status"));
            (s["tasks"][0]["state"] == "FAILED").then(|| s["tasks"][0].clone())
        },
    )
}

#[test]
fn a_source_chain_transforms_drops_and_routes_records_under_predicates() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let main_topic = unique("chain-main");
    let routed = unique("chain-routed");
    let input = d.join("in.txt");
    std::fs::write(
        &input,
        "keep 1\ndrop 2\nspecial 3\nkeep 4\nspecial drop 5\n",
    )
    .unwrap();
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let (code, body) = create(
        &w,
        "chain-src",
        json!({
            "connector.class": "FileStreamSource",
            "file": input.display().to_string(),
            "topic": main_topic,
            // Order matters: `tag` runs before `dropper`, which runs before `route`.
            "transforms": "tag,dropper,route",
            "transforms.tag.type": TT,
            "transforms.tag.value.suffix": "!",
            "transforms.tag.predicate": "isSpecial",
            "transforms.dropper.type": "TestTransformation",
            "transforms.dropper.drop.containing": "drop",
            "transforms.route.type": TT,
            "transforms.route.topic": routed,
            "transforms.route.predicate": "isSpecial",
            "transforms.route.negate": "true",
            "predicates": "isSpecial",
            "predicates.isSpecial.type": "TestPredicate",
            "predicates.isSpecial.value.contains": "special",
        }),
    );
    assert_eq!(code, 201, "{body}");
    w.wait_state("chain-src", 1, "RUNNING");
    // Records that are not special go to the routed topic unchanged; special ones stay on the
    // connector's topic with the suffix; "drop" records go nowhere.
    let routed_values = wait_for("the routed records", Duration::from_secs(60), || {
        let v = values(&read_records(&bootstrap, &routed));
        (v.len() >= 2).then_some(v)
    });
    assert_eq!(routed_values, ["keep 1", "keep 4"]);
    let main_values = wait_for("the special record", Duration::from_secs(60), || {
        let v = values(&read_records(&bootstrap, &main_topic));
        (!v.is_empty()).then_some(v)
    });
    assert_eq!(main_values, ["special 3!"]);
    // Nothing more arrives: the dropped records were not sent anywhere.
    std::fs::write(
        &input,
        "keep 1\ndrop 2\nspecial 3\nkeep 4\nspecial drop 5\nspecial 6\n",
    )
    .unwrap();
    let main_values = wait_for("the next special record", Duration::from_secs(60), || {
        let v = values(&read_records(&bootstrap, &main_topic));
        (v.len() >= 2).then_some(v)
    });
    assert_eq!(main_values, ["special 3!", "special 6!"]);
    assert_eq!(
        values(&read_records(&bootstrap, &routed)),
        ["keep 1", "keep 4"]
    );
}

#[test]
fn a_sink_whose_transformation_renames_the_topic_commits_what_it_consumed() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("rename-in");
    create_topic(&bootstrap, &topic, 1);
    let out = d.join("out.txt");
    // A name of its own, so that no earlier run's consumer group members are in the way.
    let name = unique("renaming-sink");
    let connector = json!({
        "name": name,
        "connector.class": "FileStreamSink",
        "file": out.display().to_string(),
        "topics": topic,
        // Connect's RegexRouter (by its alias): every record seems to come from another topic.
        "transforms": "rename",
        "transforms.rename.type": "RegexRouter",
        "transforms.rename.regex": "(.*)",
        "transforms.rename.replacement": "$1-renamed",
    });
    std::fs::write(d.join("sink.json"), connector.to_string()).unwrap();
    let first: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
    produce_values(&bootstrap, &topic, Some(0), &first);
    let mut w = StandaloneWorker::start(d, &bootstrap, "", &["sink.json"]);
    w.wait_state(&name, 1, "RUNNING");
    wait_for(
        "the first records in the file",
        Duration::from_secs(60),
        || (file_lines(&out).len() >= 20).then_some(()),
    );
    // A clean stop commits the offsets of what was delivered, for the consumed partition.
    assert!(w.terminate().success(), "{}", w.log_text());
    let second: Vec<String> = (20..30).map(|i| format!("line {i}")).collect();
    produce_values(&bootstrap, &topic, Some(0), &second);
    let w = StandaloneWorker::start(d, &bootstrap, "", &["sink.json"]);
    w.wait_state(&name, 1, "RUNNING");
    let lines = wait_for("every record in the file", Duration::from_secs(60), || {
        let l = file_lines(&out);
        (l.len() >= 30).then_some(l)
    });
    let expected: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
    assert_eq!(lines, expected, "records were lost or delivered twice");
    // The task keeps committing for the consumed partition (no commit error in the log).
    let log = w.log_text();
    assert!(!log.contains("Commit of offsets failed"), "{log}");
}

/// A sink task reads each consumed record's Kafka headers, whether a record has none, one or
/// several (the worker skips librdkafka's header parse for records without any; a mistake there
/// would drop headers): a chain that keeps only records with a `keep` header (Connect's
/// `Filter` under `HasHeaderKey`, negated) writes exactly those, in order.
#[test]
fn a_sink_chain_sees_the_kafka_headers_of_every_consumed_record() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("headers-in");
    create_topic(&bootstrap, &topic, 1);
    let out = d.join("out.txt");
    let name = unique("header-sink");
    let connector = json!({
        "name": name,
        "connector.class": "FileStreamSink",
        "file": out.display().to_string(),
        "topics": topic,
        "transforms": "unkept",
        "transforms.unkept.type": "Filter",
        "transforms.unkept.predicate": "kept",
        "transforms.unkept.negate": "true",
        "predicates": "kept",
        "predicates.kept.type": "HasHeaderKey",
        "predicates.kept.name": "keep",
    });
    std::fs::write(d.join("sink.json"), connector.to_string()).unwrap();
    let records: Vec<Produced<'_>> = vec![
        (None, "none 0", &[]),
        (None, "kept 1", &[("keep", "1")]),
        (None, "other 2", &[("other", "x")]),
        (None, "kept 3", &[("other", "x"), ("keep", "")]),
        (None, "none 4", &[]),
        (None, "none 5", &[]),
        (
            Some("k"),
            "kept 6",
            &[("a", "1"), ("b", "2"), ("keep", "3")],
        ),
        (None, "none 7", &[]),
    ];
    produce(&bootstrap, &topic, &records);
    // The last record, kept, tells that the whole topic was read.
    produce(
        &bootstrap,
        &topic,
        &[(None, "kept last", &[("keep", "end")])],
    );
    let w = StandaloneWorker::start(d, &bootstrap, "", &["sink.json"]);
    w.wait_state(&name, 1, "RUNNING");
    let lines = wait_for(
        "the last kept record in the file",
        Duration::from_secs(60),
        || {
            let l = file_lines(&out);
            l.last().is_some_and(|x| x == "kept last").then_some(l)
        },
    );
    assert_eq!(
        lines,
        ["kept 1", "kept 3", "kept 6", "kept last"],
        "{}",
        w.log_text()
    );
}

#[test]
fn tolerated_failures_go_to_the_dead_letter_queue_with_connects_headers() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("dlq-in");
    let dlq = unique("dlq");
    create_topic(&bootstrap, &topic, 1);
    produce(
        &bootstrap,
        &topic,
        &[
            (Some("k1"), r#"{"a":1}"#, &[("h", "one")]),
            (Some("k2"), "not json", &[("h1", "v1"), ("h2", "v2")]),
            (None, r#""ok""#, &[]),
            (Some("k4"), r#""fail me""#, &[]),
            (Some("k5"), r#""last""#, &[]),
        ],
    );
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let out = d.join("out.txt");
    // Sinks get names of their own: a consumer group left by an earlier run is not reused.
    let name = unique("dlq-sink");
    let (code, body) = create(
        &w,
        &name,
        json!({
            "connector.class": "FileStreamSink",
            "file": out.display().to_string(),
            "topics": topic,
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "transforms": "picky",
            "transforms.picky.type": TT,
            "transforms.picky.fail.containing": "fail",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.log.include.messages": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        }),
    );
    assert_eq!(code, 201, "{body}");
    // The good records reach the sink, in order.
    let lines = wait_for(
        "the good records in the file",
        Duration::from_secs(60),
        || {
            let l = file_lines(&out);
            (l.len() >= 3).then_some(l)
        },
    );
    assert_eq!(lines, ["{a=1}", "ok", "last"]);
    let dead = wait_for(
        "two dead letter queue records",
        Duration::from_secs(60),
        || {
            let r = read_records(&bootstrap, &dlq);
            (r.len() >= 2).then_some(r)
        },
    );
    assert_eq!(dead.len(), 2);
    // The unreadable record: its original key, value and headers, then the context headers.
    let bad = &dead[0];
    assert_eq!(bad.key.as_deref(), Some(&b"k2"[..]));
    assert_eq!(bad.value.as_deref(), Some(&b"not json"[..]));
    let names: Vec<&str> = bad.headers.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "h1",
            "h2",
            "__connect.errors.topic",
            "__connect.errors.partition",
            "__connect.errors.offset",
            "__connect.errors.connector.name",
            "__connect.errors.task.id",
            "__connect.errors.stage",
            "__connect.errors.class.name",
            "__connect.errors.exception.class.name",
            "__connect.errors.exception.message",
            "__connect.errors.exception.stacktrace",
        ]
    );
    assert_eq!(bad.header("h1").as_deref(), Some("v1"));
    assert_eq!(bad.header("__connect.errors.topic"), Some(topic.clone()));
    assert_eq!(
        bad.header("__connect.errors.partition").as_deref(),
        Some("0")
    );
    assert_eq!(bad.header("__connect.errors.offset").as_deref(), Some("1"));
    assert_eq!(
        bad.header("__connect.errors.connector.name"),
        Some(name.clone())
    );
    assert_eq!(bad.header("__connect.errors.task.id").as_deref(), Some("0"));
    assert_eq!(
        bad.header("__connect.errors.stage").as_deref(),
        Some("VALUE_CONVERTER")
    );
    assert_eq!(
        bad.header("__connect.errors.class.name").as_deref(),
        Some("org.apache.kafka.connect.json.JsonConverter")
    );
    assert_eq!(
        bad.header("__connect.errors.exception.class.name")
            .as_deref(),
        Some("org.apache.kafka.connect.errors.DataException")
    );
    assert!(bad
        .header("__connect.errors.exception.stacktrace")
        .is_some_and(|t| t.starts_with("org.apache.kafka.connect.errors.DataException: ")));
    // The record the transformation refused: stage TRANSFORMATION, the transformation's class,
    // and the bytes as consumed.
    let refused = &dead[1];
    assert_eq!(refused.key.as_deref(), Some(&b"k4"[..]));
    assert_eq!(refused.value.as_deref(), Some(&br#""fail me""#[..]));
    assert_eq!(
        refused.header("__connect.errors.stage").as_deref(),
        Some("TRANSFORMATION")
    );
    assert_eq!(
        refused.header("__connect.errors.class.name").as_deref(),
        Some(TT)
    );
    assert_eq!(
        refused.header("__connect.errors.offset").as_deref(),
        Some("3")
    );
    // The task keeps running; the skipped records are counted and logged as Connect logs them.
    let status = w.wait_state(&name, 1, "RUNNING");
    assert_eq!(status["tasks"][0]["state"], "RUNNING");
    let skipped = wait_for("the skipped count", Duration::from_secs(30), || {
        let (_, c) = w.get("/tributary/task-counters");
        c[format!("{name}-0")]["skipped"]
            .as_u64()
            .filter(|n| *n >= 2)
    });
    assert_eq!(skipped, 2);
    let log = w.log_text();
    assert!(
        log.contains(&format!(
            "Error encountered in task {name}-0. Executing stage 'VALUE_CONVERTER' with class 'org.apache.kafka.connect.json.JsonConverter', where consumed record is {{topic='{topic}', partition=0, offset=1, timestamp="
        )),
        "{log}"
    );
}

/// Issue #30, case 6: a JSON number whose exponent alone asks for a giant integer does not
/// stall a sink. As in Java (Connect 4.1.1, Jackson 2.19, JDK 17), `1e700000000` reads at once
/// as 0 under an int64 schema and as itself under a Decimal schema; an exponent beyond an int
/// is refused while parsing and, under `errors.tolerance=all`, skipped; the good record after
/// them arrives.
#[test]
fn giant_exponents_do_not_stall_a_sink() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("giant-in");
    create_topic(&bootstrap, &topic, 1);
    let decimal = r#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}"#;
    let int64 = r#"{"schema":{"type":"int64"},"payload":1e700000000}"#.to_string();
    let giant_decimal = format!(r#"{{"schema":{decimal},"payload":1e700000000}}"#);
    let refused = r#"{"schema":{"type":"int32"},"payload":1e700000000000000}"#;
    let good = r#"{"schema":{"type":"string"},"payload":"good"}"#;
    produce(
        &bootstrap,
        &topic,
        &[
            (None, int64.as_str(), &[]),
            (None, giant_decimal.as_str(), &[]),
            (None, refused, &[]),
            (None, good, &[]),
        ],
    );
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let out = d.join("out.txt");
    let name = unique("giant-sink");
    let (code, body) = create(
        &w,
        &name,
        json!({
            "connector.class": "FileStreamSink",
            "file": out.display().to_string(),
            "topics": topic,
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.decimal.format": "NUMERIC",
            "errors.tolerance": "all",
        }),
    );
    assert_eq!(code, 201, "{body}");
    let lines = wait_for(
        "the records after the giant numbers in the file",
        Duration::from_secs(60),
        || {
            let l = file_lines(&out);
            (l.len() >= 3).then_some(l)
        },
    );
    assert_eq!(lines, ["0", "1E+700000000", "good"]);
    let skipped = wait_for("the skipped count", Duration::from_secs(30), || {
        let (_, c) = w.get("/tributary/task-counters");
        c[format!("{name}-0")]["skipped"]
            .as_u64()
            .filter(|n| *n >= 1)
    });
    assert_eq!(skipped, 1);
    assert_eq!(
        w.wait_state(&name, 1, "RUNNING")["tasks"][0]["state"],
        "RUNNING"
    );
}

#[test]
fn without_tolerance_a_failure_fails_the_task_naming_the_stage_and_class() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let topic = unique("strict-in");
    create_topic(&bootstrap, &topic, 1);
    produce(&bootstrap, &topic, &[(None, "not json", &[])]);
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let name = unique("strict-sink");
    let (code, body) = create(
        &w,
        &name,
        json!({
            "connector.class": "FileStreamSink",
            "file": d.join("out.txt").display().to_string(),
            "topics": topic,
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        }),
    );
    assert_eq!(code, 201, "{body}");
    let task = wait_task_failed(&w, &name);
    let trace = task["trace"].as_str().unwrap();
    assert!(
        trace.starts_with(
            "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"
        ),
        "{trace}"
    );
    assert!(
        trace
            .contains("'VALUE_CONVERTER' with class 'org.apache.kafka.connect.json.JsonConverter'")
            && trace.contains("Caused by: org.apache.kafka.connect.errors.DataException"),
        "{trace}"
    );

    // A source whose transformation fails a record.
    let input = d.join("in.txt");
    std::fs::write(&input, "fine\nbad one\n").unwrap();
    let (code, body) = create(
        &w,
        "strict-src",
        json!({
            "connector.class": "FileStreamSource",
            "file": input.display().to_string(),
            "topic": unique("strict-out"),
            "transforms": "t",
            "transforms.t.type": TT,
            "transforms.t.fail.containing": "bad",
        }),
    );
    assert_eq!(code, 201, "{body}");
    let task = wait_task_failed(&w, "strict-src");
    let trace = task["trace"].as_str().unwrap();
    assert!(
        trace.contains(&format!("'TRANSFORMATION' with class '{TT}'"))
            && trace.contains("TestTransformation refuses the value 'bad one'"),
        "{trace}"
    );
}

#[test]
fn retriable_failures_are_retried_until_they_pass() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let input = d.join("in.txt");
    std::fs::write(&input, "a\nslow b\nc\n").unwrap();
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let retried = unique("retried");
    let (code, body) = create(
        &w,
        "retrying-src",
        json!({
            "connector.class": "FileStreamSource",
            "file": input.display().to_string(),
            "topic": retried,
            "transforms": "t",
            "transforms.t.type": TT,
            "transforms.t.retriable.containing": "slow",
            "transforms.t.retriable.failures": "2",
            "errors.retry.timeout": "600000",
            "errors.retry.delay.max.ms": "1000",
        }),
    );
    assert_eq!(code, 201, "{body}");
    let got = wait_for("the three records", Duration::from_secs(60), || {
        let v = values(&read_records(&bootstrap, &retried));
        (v.len() >= 3).then_some(v)
    });
    assert_eq!(got, ["a", "slow b", "c"]);
    assert_eq!(
        w.get("/connectors/retrying-src/status").1["tasks"][0]["state"],
        "RUNNING"
    );

    // Without retries (errors.retry.timeout=0, the default) the same failure is tolerated with
    // `all`: the record is skipped.
    let skipped = unique("not-retried");
    let (code, body) = create(
        &w,
        "impatient-src",
        json!({
            "connector.class": "FileStreamSource",
            "file": input.display().to_string(),
            "topic": skipped,
            "transforms": "t",
            "transforms.t.type": TT,
            "transforms.t.retriable.containing": "slow",
            "errors.tolerance": "all",
        }),
    );
    assert_eq!(code, 201, "{body}");
    let got = wait_for("the two records", Duration::from_secs(60), || {
        let v = values(&read_records(&bootstrap, &skipped));
        (v.len() >= 2).then_some(v)
    });
    assert_eq!(got, ["a", "c"]);
}

#[test]
fn validation_names_transform_keys_and_configure_failures_fail_the_task() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let input = d.join("in.txt");
    std::fs::write(&input, "x\n").unwrap();
    let w = StandaloneWorker::start(d, &bootstrap, "", &[]);
    let base = |extra: Value| {
        let mut c = json!({
            "connector.class": "FileStreamSource",
            "file": input.display().to_string(),
            "topic": unique("validated"),
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let bad = |name: &str, extra: Value| -> String {
        let (code, body) = create(&w, name, base(extra));
        assert_eq!(code, 400, "{body}");
        body["message"].as_str().unwrap().to_string()
    };
    let m = bad(
        "v1",
        json!({"transforms": "a", "transforms.a.type": TT, "transforms.a.retriable.failures": "many"}),
    );
    assert!(
        m.contains("Invalid value many for configuration transforms.a.retriable.failures: Not a number of type INT"),
        "{m}"
    );
    let m = bad(
        "v2",
        json!({"transforms": "a,b", "transforms.a.type": "com.example.Nope"}),
    );
    assert!(
        m.contains("Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found.")
            && m.contains("Missing required configuration \"transforms.b.type\" which has no default value."),
        "{m}"
    );
    let m = bad(
        "v3",
        json!({"transforms": "a", "transforms.a.type": TT, "transforms.a.negate": "true"}),
    );
    assert!(
        m.contains("Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."),
        "{m}"
    );
    let m = bad(
        "v4",
        json!({"transforms": "a,a", "transforms.a.type": TT, "predicates": "p", "predicates.p.type": TP}),
    );
    assert!(
        m.contains("Invalid value [a, a] for configuration transforms: Duplicate alias provided.")
            && m.contains("Missing required configuration \"predicates.p.value.contains\" which has no default value."),
        "{m}"
    );

    // The validate endpoint reports each alias's keys in its group.
    let (code, v) = w.send(
        "PUT",
        "/connector-plugins/FileStreamSource/config/validate",
        Some(
            &base(
                json!({"name": "v", "transforms": "a", "transforms.a.type": "TestTransformation"}),
            )
            .to_string(),
        ),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["error_count"], 0, "{v}");
    assert!(v["groups"]
        .as_array()
        .unwrap()
        .contains(&json!("Transforms: a")));
    let key = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "transforms.a.type")
        .unwrap();
    assert_eq!(key["value"]["value"], TT);
    assert_eq!(key["definition"]["group"], "Transforms: a");
    let (code, keys) = w.get(&format!("/connector-plugins/{TT}/config"));
    assert_eq!(code, 200);
    assert!(keys
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["name"] == "retriable.failures"));

    // As in Connect, validation does not configure transformations: a `configure` that fails,
    // or a predicate alias `predicates` does not list, fails the task.
    let (code, body) = create(
        &w,
        "v5",
        base(
            json!({"transforms": "a", "transforms.a.type": TT, "transforms.a.fail.configure": "true"}),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let trace = wait_task_failed(&w, "v5")["trace"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        trace.starts_with("org.apache.kafka.connect.errors.ConnectException: org.apache.kafka.common.config.ConfigException: Invalid value true for configuration fail.configure"),
        "{trace}"
    );
    let (code, body) = create(
        &w,
        "v6",
        base(json!({"transforms": "a", "transforms.a.type": TT, "transforms.a.predicate": "nope"})),
    );
    assert_eq!(code, 201, "{body}");
    let trace = wait_task_failed(&w, "v6")["trace"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        trace.contains("ConfigException: Unknown configuration 'predicates.nope.plugin.version'"),
        "{trace}"
    );
}
