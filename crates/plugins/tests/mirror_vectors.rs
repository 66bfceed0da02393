//! Tributary's MirrorMaker 2 building blocks (`tributary_plugins::mirror`) against Apache's
//! own classes (connect-mirror and connect-mirror-client 4.3.1, the newest on Maven Central, on
//! Connect 4.4.0's clients), live: `conformance/java/MirrorVectors.java` answers every case
//! below with Apache's `DefaultReplicationPolicy` / `IdentityReplicationPolicy`,
//! `DefaultTopicFilter` / `DefaultGroupFilter`, `OffsetSync`, `Checkpoint`, `Heartbeat` and
//! `MirrorUtils`, and the answers must be Tributary's: remote and internal topic names, topic
//! sources across separators and edge cases, filter decisions, the internal records' bytes, and
//! the source partitions as JSON (the offsets topic's key bytes).
//!
//! Without `java`/`javac`, Maven or the jars the test prints why and passes (under `CI` it
//! fails).

use tributary_testkit as common;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value as Json};
use tributary_api::Props;
use tributary_plugins::mirror::filter::NameFilter;
use tributary_plugins::mirror::maker_config::{
    MirrorConnector, MirrorMakerConfig, CLIENT_SECURITY_CONFIGS, CONNECTOR_CONFIGS,
};
use tributary_plugins::mirror::policy::ReplicationPolicy;
use tributary_plugins::mirror::records::{self, Checkpoint, Heartbeat, OffsetSync};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn props(v: &Json) -> Props {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Every case, as the Java program reads it.
fn cases() -> Vec<Json> {
    let policies = [
        json!({}),
        json!({"replication.policy.separator": "_"}),
        json!({"replication.policy.separator": "_",
               "replication.policy.internal.topic.separator.enabled": "false"}),
        json!({"replication.policy.separator": "--",
               "replication.policy.internal.topic.separator.enabled": "TRUE"}),
        json!({"replication.policy.separator": ""}),
        json!({"replication.policy.internal.topic.separator.enabled": "false"}),
        json!({"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
               "source.cluster.alias": "A"}),
        json!({"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}),
        json!({"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
               "source.cluster.alias": "A", "replication.policy.separator": "_"}),
    ];
    let topics = [
        "orders",
        "A.orders",
        "B.A.orders",
        "A.",
        ".x",
        "..",
        "",
        "a.b.c.d",
        "heartbeats",
        "A.heartbeats",
        "B.A.heartbeats",
        "xheartbeats",
        "A_heartbeats",
        "A_orders",
        "B_A_orders",
        "A--orders",
        "A.checkpoints.internal",
        "A_checkpoints_internal",
        "mm2-offset-syncs.A.internal",
        "x-internal",
        "__consumer_offsets",
        ".hidden",
        "connect-offsets",
        "mm2-offset-syncs_A_internal",
        "mm2x.internal",
        "mm2",
        "A.checkpoints_internal",
    ];
    let mut out = Vec::new();
    for p in &policies {
        for t in topics {
            for alias in ["A", "us-east"] {
                out.push(json!({"kind": "policy", "props": p, "topic": t, "alias": alias}));
            }
        }
    }
    let filters = [
        ("topics", json!({})),
        ("topics", json!({"topics": " orders , pay.* "})),
        ("topics", json!({"topics": "  "})),
        ("topics", json!({"topics": "orders,"})),
        ("topics", json!({"topics": "a,,b"})),
        (
            "topics",
            json!({"topics": "orders(", "topics.exclude": "x"}),
        ),
        ("topics", json!({"topics": ".*", "topics.exclude": ""})),
        ("topics", json!({"topics": "(?!tmp-).*"})),
        ("groups", json!({})),
        (
            "groups",
            json!({"groups": "billing.*", "groups.exclude": "billing-test"}),
        ),
    ];
    let names = [
        "orders",
        "payments",
        "",
        "tmp-x",
        "a.internal",
        "a-internal",
        "mm2-offset-syncs.B.internal",
        "a.replica",
        "__consumer_offsets",
        "connect-sink",
        "console-consumer-42",
        "billing",
        "billing-test",
        "billing-test2",
    ];
    for (which, p) in &filters {
        for n in names {
            out.push(json!({"kind": "filter", "which": which, "props": p, "name": n}));
        }
    }
    for (topic, partition, up, down) in [
        ("orders", 0, 0i64, 0i64),
        ("A.orders", 7, 1_234_567_890_123, 42),
        ("x", i32::MAX, i64::MAX, -1),
        ("", 0, -1, i64::MIN),
    ] {
        out.push(
            json!({"kind": "offsetSync", "topic": topic, "partition": partition,
                        "upstream": up, "downstream": down}),
        );
        out.push(
            json!({"kind": "sourcePartition", "topic": topic, "partition": partition,
                        "cluster": "us-east", "offset": up}),
        );
    }
    for (group, topic, metadata) in [
        ("g", "A.orders", ""),
        ("consumer-group-ü", "orders", "some metadata"),
        ("", "", "x"),
    ] {
        out.push(
            json!({"kind": "checkpoint", "group": group, "topic": topic, "partition": 3,
                        "upstream": 100, "downstream": 99, "metadata": metadata}),
        );
    }
    for (s, t, ts) in [("A", "B", 1_700_000_000_000i64), ("us-east", "", 0)] {
        out.push(json!({"kind": "heartbeat", "source": s, "target": t, "timestamp": ts}));
    }
    out.push(json!({"kind": "names"}));
    for mm2 in mm2_files() {
        out.push(json!({"kind": "mm2", "props": mm2}));
    }
    out
}

/// `mm2.properties` files: Apache's documented example, and settings at every level.
fn mm2_files() -> Vec<Json> {
    vec![
        // Apache's example (connect-mirror-maker.properties), as shipped.
        json!({
            "clusters": "A, B",
            "A.bootstrap.servers": "A_host1:9092, A_host2:9092, A_host3:9092",
            "B.bootstrap.servers": "B_host1:9092, B_host2:9092, B_host3:9092",
            "replication.factor": "1",
            "checkpoints.topic.replication.factor": "1",
            "heartbeats.topic.replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "config.storage.replication.factor": "1",
            "A->B.enabled": "true",
            "A->B.topics": ".*",
            "B->A.enabled": "true",
            "B->A.topics": ".*",
        }),
        // Three clusters, one flow off, heartbeats off for one pair, security at the top level
        // and per cluster, client overrides, worker and converter settings, unknown keys.
        json!({
            "clusters": "us-east,us-west , eu",
            "us-east.bootstrap.servers": "e:9092",
            "us-west.bootstrap.servers": "w:9092",
            "eu.bootstrap.servers": "eu:9092",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "eu.security.protocol": "SSL",
            "eu.ssl.truststore.location": "/etc/eu.jks",
            "us-east.consumer.max.poll.records": "1000",
            "us-east.producer.ssl.truststore.location": "/etc/east-producer.jks",
            "us-west.admin.request.timeout.ms": "5000",
            "us-east->us-west.enabled": "true",
            "us-east->us-west.topics": "orders.*, payments",
            "us-east->us-west.emit.checkpoints.interval.seconds": "5",
            "us-east->eu.enabled": "TRUE",
            "us-east->eu.emit.heartbeats.enabled": "false",
            "eu->us-east.emit.heartbeats.enabled": "false",
            "us-west->eu.enabled": "false",
            "topics.exclude": ".*\\.tmp",
            "groups": "billing.*",
            "sync.topic.acls.enabled": "false",
            "replication.policy.separator": "_",
            "replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
            "offset.storage.partitions": "5",
            "config.storage.topic": "my-configs",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "key.converter.schemas.enable": "false",
            "tasks.max": "4",
            "task.shutdown.graceful.timeout.ms": "1000",
            "worker.id": "w1",
            "unknown.setting": "x",
            "dedicated.mode.enable.internal.rest": "true",
        }),
        // Heartbeats off everywhere and no flow enabled: no flow at all.
        json!({"clusters": "A, B", "emit.heartbeats.enabled": "false"}),
        // One cluster, duplicates.
        json!({"clusters": "A, A", "A.bootstrap.servers": "a:1"}),
        // No clusters.
        json!({"A.bootstrap.servers": "a:1"}),
    ]
}

fn sorted_json(p: &Props) -> Json {
    let m: std::collections::BTreeMap<&String, &String> = p.iter().collect();
    json!(m)
}

/// Tributary's answer to `case`, in the Java program's shape.
fn tributary(case: &Json) -> Json {
    let s = |k: &str| case[k].as_str().unwrap().to_string();
    let i = |k: &str| case[k].as_i64().unwrap();
    match case["kind"].as_str().unwrap() {
        "policy" => {
            let p = ReplicationPolicy::from_props(&props(&case["props"])).unwrap();
            let (topic, alias) = (s("topic"), s("alias"));
            json!({
                "remote": p.format_remote_topic(&alias, &topic),
                "source": p.topic_source(&topic),
                "upstream": p.upstream_topic(&topic),
                "original": p.original_topic(&topic),
                "heartbeats": p.heartbeats_topic(),
                "offsetSyncs": p.offset_syncs_topic(&alias),
                "checkpoints": p.checkpoints_topic(&alias),
                "isHeartbeats": p.is_heartbeats_topic(&topic),
                "isCheckpoints": p.is_checkpoints_topic(&topic),
                "isMM2Internal": p.is_mm2_internal_topic(&topic),
                "isInternal": p.is_internal_topic(&topic),
            })
        }
        "filter" => {
            let p = props(&case["props"]);
            let f = if case["which"] == "topics" {
                NameFilter::topics(&p)
            } else {
                NameFilter::groups(&p)
            };
            match f {
                Ok(f) => json!({"accepts": f.accepts(&s("name"))}),
                Err(e) if e.starts_with("Configuration '") => json!({
                    "error": "org.apache.kafka.common.config.ConfigException", "message": e}),
                Err(_) => json!({"error": "java.util.regex.PatternSyntaxException"}),
            }
        }
        "offsetSync" => {
            let r = OffsetSync {
                topic: s("topic"),
                partition: i("partition") as i32,
                upstream_offset: i("upstream"),
                downstream_offset: i("downstream"),
            };
            assert_eq!(OffsetSync::decode(&r.key(), &r.value()).unwrap(), r);
            json!({"key": hex(&r.key()), "value": hex(&r.value())})
        }
        "checkpoint" => {
            let r = Checkpoint {
                group: s("group"),
                topic: s("topic"),
                partition: i("partition") as i32,
                upstream_offset: i("upstream"),
                downstream_offset: i("downstream"),
                metadata: s("metadata"),
            };
            assert_eq!(Checkpoint::decode(&r.key(), &r.value()).unwrap(), r);
            json!({"key": hex(&r.key()), "value": hex(&r.value()),
                   "partition": serde_json::to_string(&r.source_partition()).unwrap()})
        }
        "heartbeat" => {
            let r = Heartbeat {
                source_cluster_alias: s("source"),
                target_cluster_alias: s("target"),
                timestamp: i("timestamp"),
            };
            assert_eq!(Heartbeat::decode(&r.key(), &r.value()).unwrap(), r);
            json!({"key": hex(&r.key()), "value": hex(&r.value()),
                   "partition": serde_json::to_string(&r.source_partition()).unwrap()})
        }
        "names" => {
            let mut client: Vec<&str> = CLIENT_SECURITY_CONFIGS.to_vec();
            client.push("bootstrap.servers");
            client.sort();
            let mut all: Vec<&str> = CONNECTOR_CONFIGS
                .iter()
                .chain(CLIENT_SECURITY_CONFIGS)
                .copied()
                .collect();
            all.sort();
            json!({"client": client, "connectors": all})
        }
        "mm2" => {
            let c = match MirrorMakerConfig::parse(props(&case["props"])) {
                Ok(c) => c,
                Err(e) => return json!({"error": e}),
            };
            let mut workers = serde_json::Map::new();
            let mut connectors = serde_json::Map::new();
            let mut pairs = Vec::new();
            for (s, t) in c.cluster_pairs() {
                let flow = format!("{s}->{t}");
                workers.insert(flow.clone(), sorted_json(&c.worker_config(&s, &t)));
                let mut cs = serde_json::Map::new();
                for (label, k) in [
                    ("Source", MirrorConnector::Source),
                    ("Checkpoint", MirrorConnector::Checkpoint),
                    ("Heartbeat", MirrorConnector::Heartbeat),
                ] {
                    cs.insert(
                        label.into(),
                        sorted_json(&c.connector_base_config(&s, &t, k)),
                    );
                }
                connectors.insert(flow.clone(), Json::Object(cs));
                pairs.push(flow);
            }
            pairs.sort();
            let mut clusters: Vec<&String> = c.clusters().iter().collect();
            clusters.sort();
            let cluster_props: serde_json::Map<String, Json> = clusters
                .into_iter()
                .map(|k| (k.clone(), sorted_json(&c.cluster_props(k))))
                .collect();
            json!({"workers": workers, "connectors": connectors, "pairs": pairs,
                   "clusterProps": cluster_props})
        }
        "sourcePartition" => json!({
            "partition": serde_json::to_string(&records::source_partition(
                &s("topic"), i("partition") as i32, &s("cluster"))).unwrap(),
            "offset": serde_json::to_string(&records::source_offset(i("offset"))).unwrap(),
        }),
        other => panic!("unknown case kind {other}"),
    }
}

#[test]
fn mirror_maker_policies_filters_and_records_match_apaches() {
    let Some((_, plugin_path)) = common::java_bridge() else {
        return;
    };
    let mirror_jars = format!("{plugin_path}/connect-mirror/*");
    let Some((cp, _classes)) = common::java_vector_program_with("MirrorVectors.java", &mirror_jars)
    else {
        return;
    };
    let cases = cases();
    let input: String = cases.iter().map(|c| format!("{c}\n")).collect();
    let mut child = Command::new("java")
        .args([
            "-Xmx256m",
            "-cp",
            &cp,
            "org.apache.kafka.connect.mirror.MirrorVectors",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running java");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "MirrorVectors failed");
    let java: Vec<Json> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(java.len(), cases.len(), "one Java answer per case");
    let mut differ = Vec::new();
    for (case, java) in cases.iter().zip(&java) {
        let ours = tributary(case);
        if &ours != java {
            differ.push(format!("{case}\n  java:      {java}\n  tributary: {ours}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} cases differ from Apache's classes:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
}
