//! Tributary's MirrorMaker 2 building blocks (crate `tributary-mirror`) against Apache's
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
use tributary_mirror::assignment;
use tributary_mirror::checkpoints::{CheckpointPlanner, GroupOffset};
use tributary_mirror::filter::NameFilter;
use tributary_mirror::maker_config::{
    MirrorConnector, MirrorMakerConfig, CLIENT_SECURITY_CONFIGS, CONNECTOR_CONFIGS,
};
use tributary_mirror::offset_sync_store::OffsetSyncStore;
use tributary_mirror::offset_syncs::OffsetSyncQueue;
use tributary_mirror::policy::ReplicationPolicy;
use tributary_mirror::records::{self, Checkpoint, Heartbeat, OffsetSync};

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
        json!({"replication.policy.separator": "\\E"}),
        json!({"replication.policy.separator": "|"}),
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
        "A---orders",
        "A\\Eorders",
        "A|orders",
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
        ("topics", json!({"topics": "a,a"})),
        ("topics", json!({"topics": ",,"})),
        ("topics", json!({"topics": "(", "topics.exclude": "a,"})),
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
    let base = json!({"source.cluster.alias": "A", "target.cluster.alias": "B",
                      "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
                      "name": "m", "tasks.max": "3"});
    let parts = json!([
        ["orders", 0],
        ["orders", 1],
        ["a-b", 2],
        ["x", 0],
        ["orders", 2]
    ]);
    for max_tasks in [1, 2, 3, 5, 9] {
        out.push(json!({"kind": "taskConfigs", "props": base, "partitions": parts, "maxTasks": max_tasks}));
    }
    out.push(json!({"kind": "taskConfigs", "props": base, "partitions": [], "maxTasks": 3}));
    for enabled in ["false", "FALSE", " false ", "true"] {
        let mut p = base.clone();
        p["enabled"] = json!(enabled);
        out.push(json!({"kind": "taskConfigs", "props": p, "partitions": parts, "maxTasks": 2}));
    }
    for (max_lag, steps) in offset_sync_runs() {
        out.push(json!({"kind": "offsetSyncs", "maxLag": max_lag, "steps": steps}));
    }
    for case in offset_sync_store_runs() {
        out.push(case);
    }
    for case in checkpoint_runs() {
        out.push(case);
    }
    for mm2 in mm2_files() {
        out.push(json!({"kind": "mm2", "props": mm2}));
    }
    out
}

/// Runs of the checkpoint task's decisions: offset syncs of local and remote topics, groups
/// committing, advancing, repeating and rewinding, a topic filter, both policies.
fn checkpoint_runs() -> Vec<Json> {
    let syncs = json!([
        ["orders", 0, 100, 10],
        ["orders", 0, 200, 110],
        ["orders", 1, 0, 0],
        ["B.orders", 0, 5, 50],
        ["C.B.orders", 0, 7, 70],
        ["pay", 0, 10, 1]
    ]);
    let o = |t: &str, p: i32, off: i64| json!([t, p, off, format!("m{off}")]);
    let rounds = json!([
        [
            "g",
            [
                o("orders", 0, 150),
                o("orders", 1, 0),
                o("B.orders", 0, 6),
                o("C.B.orders", 0, 7),
                o("pay", 0, 10),
                o("none", 0, 3)
            ]
        ],
        ["g", [o("orders", 0, 150), o("orders", 1, 0)]],
        ["g", [o("orders", 0, 250), o("orders", 1, 5)]],
        ["g", [o("orders", 0, 120)]],
        ["g", [o("orders", 0, 99), o("pay", 0, 9)]],
        ["h", [o("orders", 0, 200), o("pay", 0, 11)]],
        ["g", [o("orders", 0, 300)]]
    ]);
    let mut out = Vec::new();
    for (props, topics) in [
        (json!({}), None),
        (json!({}), Some(json!({"topics": r"orders, B\..*"}))),
        (
            json!({"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy", "source.cluster.alias": "A"}),
            None,
        ),
        (json!({"replication.policy.separator": "_"}), None),
    ] {
        let mut case = json!({"kind": "checkpoints", "props": props, "source": "A", "target": "B",
                              "syncs": syncs, "rounds": rounds});
        if let Some(t) = topics {
            case["topics"] = t;
        }
        out.push(case);
    }
    out
}

/// Runs of the offset-sync store: syncs read during the initial read and after it (with and
/// without `mustReadToEnd`), contiguous, sparse, rewound, on two partitions, and translations
/// of offsets before, at, between and after them.
fn offset_sync_store_runs() -> Vec<Json> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut out = Vec::new();
    for must_read_to_end in [true, false] {
        // Dense: every offset synced, then a rewind.
        let dense: Vec<Json> = (0..300).map(|u| json!(["t", 0, u, u * 2 + 7])).collect();
        let mut after = dense.clone();
        after.push(json!(["t", 0, 5, 9000]));
        after.push(json!(["t", 0, 6, 9001]));
        let queries: Vec<Json> = [0, 3, 5, 6, 7, 100]
            .iter()
            .map(|u| json!(["t", 0, u]))
            .chain([json!(["u", 0, 1])])
            .collect();
        out.push(
            json!({"kind": "offsetSyncStore", "mustReadToEnd": must_read_to_end,
                        "initial": dense[..50], "after": after, "queries": queries}),
        );
        // Sparse and pseudo-random: gaps, equal offsets, two partitions interleaved.
        let mut up = [0i64, 0];
        let mut down = [0i64, 0];
        let mut syncs = Vec::new();
        for _ in 0..2_000 {
            let p = next(2) as usize;
            up[p] += next(40) as i64;
            down[p] += 1 + next(3) as i64;
            syncs.push(json!(["t", p, up[p], down[p]]));
        }
        let mut queries = Vec::new();
        for (p, top) in up.iter().enumerate() {
            for _ in 0..20 {
                queries.push(json!(["t", p, next(*top as u64 + 50)]));
            }
            queries.push(json!(["t", p, top]));
        }
        out.push(
            json!({"kind": "offsetSyncStore", "mustReadToEnd": must_read_to_end,
                        "initial": syncs[..700], "after": syncs[700..], "queries": queries}),
        );
        // Only initial syncs.
        out.push(
            json!({"kind": "offsetSyncStore", "mustReadToEnd": must_read_to_end,
                        "initial": syncs[..100], "after": [], "queries": queries[..5]}),
        );
    }
    out
}

/// Runs of the offset-sync queue: replicated records (`["record", topic, partition, upstream,
/// downstream]`) and commits (`["promote"]`), contiguous, with gaps, truncations, lags around
/// `offset.lag.max` and several partitions interleaved; one pseudo-random run.
fn offset_sync_runs() -> Vec<(i64, Vec<Json>)> {
    let rec = |t: &str, p: i32, up: i64, down: i64| json!(["record", t, p, up, down]);
    let promote = || json!(["promote"]);
    let mut runs = vec![
        (
            3,
            vec![
                rec("t", 0, 0, 10),
                rec("t", 0, 1, 11),
                rec("t", 0, 2, 12),
                rec("t", 0, 3, 13),
                rec("t", 0, 4, 14),
                promote(),
                rec("t", 0, 5, 15),
                promote(),
                promote(),
            ],
        ),
        (
            100,
            vec![
                rec("t", 0, 0, 0),
                rec("u", 1, 5, 0),
                rec("t", 0, 1, 1),
                rec("t", 0, 3, 2),
                rec("u", 1, 6, 1),
                rec("t", 0, 4, 0),
                rec("t", 0, 5, 1),
                promote(),
                rec("u", 1, 7, 2),
                rec("t", 0, 6, 2),
            ],
        ),
        (0, vec![rec("t", 0, 0, 0), rec("t", 0, 1, 1), promote()]),
    ];
    // Pseudo-random: 3 partitions, mostly contiguous, sometimes a gap, a truncation or a commit.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut up = [0i64; 3];
    let mut down = [0i64; 3];
    let mut steps = Vec::new();
    for _ in 0..300 {
        let p = next(3) as usize;
        match next(20) {
            0 => steps.push(promote()),
            1 => up[p] += 1 + next(5) as i64,
            2 => down[p] = down[p].saturating_sub(next(10) as i64),
            _ => {}
        }
        steps.push(rec("r", p as i32, up[p], down[p]));
        up[p] += 1;
        down[p] += 1;
    }
    runs.push((7, steps));
    runs
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
        // Empty cluster aliases, a bad protocol, a bad boolean: refused.
        json!({"clusters": "A,,B"}),
        json!({"clusters": " , "}),
        json!({"clusters": "A, B", "security.protocol": "bogus"}),
        json!({"clusters": "A, B", "dedicated.mode.enable.internal.rest": "yes"}),
        // Aliases that prefix each other, top-level keys the connectors define, exact prefixes,
        // an enabled flag with spaces (false in Java).
        json!({
            "clusters": "A, A.B",
            "A.bootstrap.servers": "a:1",
            "A.B.bootstrap.servers": "ab:1",
            "A.consumer": "x",
            "bootstrap.servers": "top:1",
            "name": "my-name",
            "enabled": "true",
            "target.cluster.alias": "T",
            "replication.policy": "rp",
            "task": "t",
            "security.protocol": "ssl",
            "A->A.B.enabled": " true",
        }),
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
            let key = r.key().unwrap();
            assert_eq!(OffsetSync::decode(&key, &r.value()).unwrap(), r);
            json!({"key": hex(&key), "value": hex(&r.value())})
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
            let (key, value) = (r.key().unwrap(), r.value().unwrap());
            assert_eq!(Checkpoint::decode(&key, &value).unwrap(), r);
            json!({"key": hex(&key), "value": hex(&value),
                   "partition": serde_json::to_string(&r.source_partition()).unwrap()})
        }
        "heartbeat" => {
            let r = Heartbeat {
                source_cluster_alias: s("source"),
                target_cluster_alias: s("target"),
                timestamp: i("timestamp"),
            };
            let key = r.key().unwrap();
            assert_eq!(Heartbeat::decode(&key, &r.value()).unwrap(), r);
            json!({"key": hex(&key), "value": hex(&r.value()),
                   "partition": serde_json::to_string(&r.source_partition()).unwrap()})
        }
        "taskConfigs" => {
            let parts: Vec<(String, i32)> = case["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p[0].as_str().unwrap().to_string(),
                        p[1].as_i64().unwrap() as i32,
                    )
                })
                .collect();
            let configs =
                assignment::task_configs(&props(&case["props"]), &parts, i("maxTasks") as usize)
                    .unwrap();
            for c in &configs {
                let back = assignment::task_partitions(c).unwrap();
                assert!(back.iter().all(|p| parts.contains(p)), "{back:?}");
            }
            json!({"tasks": configs.iter().map(sorted_json).collect::<Vec<_>>()})
        }
        "checkpoints" => {
            let mut store = OffsetSyncStore::new(true);
            for s in case["syncs"].as_array().unwrap() {
                store.handle(&OffsetSync {
                    topic: s[0].as_str().unwrap().to_string(),
                    partition: s[1].as_i64().unwrap() as i32,
                    upstream_offset: s[2].as_i64().unwrap(),
                    downstream_offset: s[3].as_i64().unwrap(),
                });
            }
            store.read_to_end();
            let policy = ReplicationPolicy::from_props(&props(&case["props"])).unwrap();
            let topics = case
                .get("topics")
                .map(|t| NameFilter::topics(&props(t)).unwrap());
            let mut planner = CheckpointPlanner::new(
                policy,
                case["source"].as_str().unwrap(),
                case["target"].as_str().unwrap(),
                topics,
            );
            let mut rounds = Vec::new();
            for round in case["rounds"].as_array().unwrap() {
                let group = round[0].as_str().unwrap();
                let offsets: Vec<GroupOffset> = round[1]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| GroupOffset {
                        topic: o[0].as_str().unwrap().to_string(),
                        partition: o[1].as_i64().unwrap() as i32,
                        offset: o[2].as_i64().unwrap(),
                        metadata: o[3].as_str().unwrap().to_string(),
                    })
                    .collect();
                let emitted = planner.checkpoints_for_group(group, &offsets, &store);
                planner.update(group, &emitted);
                rounds.push(
                    emitted
                        .values()
                        .map(|c| {
                            json!([
                                c.topic,
                                c.partition,
                                c.upstream_offset,
                                c.downstream_offset,
                                c.metadata
                            ])
                        })
                        .collect::<Vec<_>>(),
                );
            }
            json!({"rounds": rounds})
        }
        "offsetSyncStore" => {
            let sync = |s: &Json| OffsetSync {
                topic: s[0].as_str().unwrap().to_string(),
                partition: s[1].as_i64().unwrap() as i32,
                upstream_offset: s[2].as_i64().unwrap(),
                downstream_offset: s[3].as_i64().unwrap(),
            };
            let mut store = OffsetSyncStore::new(case["mustReadToEnd"].as_bool().unwrap());
            for s in case["initial"].as_array().unwrap() {
                store.handle(&sync(s));
            }
            store.read_to_end();
            for s in case["after"].as_array().unwrap() {
                store.handle(&sync(s));
            }
            let mut translations = Vec::new();
            let mut slots = Vec::new();
            for q in case["queries"].as_array().unwrap() {
                let (t, p, u) = (
                    q[0].as_str().unwrap(),
                    q[1].as_i64().unwrap() as i32,
                    q[2].as_i64().unwrap(),
                );
                translations.push(json!(store.translate_downstream(t, p, u)));
                let kept: Vec<Json> = (0..tributary_mirror::offset_sync_store::SYNCS_PER_PARTITION)
                    .filter_map(|i| store.slot(t, p, i))
                    .map(|(u, d)| json!([u, d]))
                    .collect();
                slots.push(json!(kept));
            }
            json!({"translations": translations, "slots": slots})
        }
        "offsetSyncs" => {
            let mut q = OffsetSyncQueue::new(i("maxLag"));
            let list = |it: &mut dyn Iterator<Item = &OffsetSync>| -> Json {
                it.map(|s| json!([s.topic, s.partition, s.upstream_offset, s.downstream_offset]))
                    .collect()
            };
            let mut states = Vec::new();
            for step in case["steps"].as_array().unwrap() {
                if step[0] == "promote" {
                    q.promote_delayed();
                } else {
                    q.record(
                        &(
                            step[1].as_str().unwrap().to_string(),
                            step[2].as_i64().unwrap() as i32,
                        ),
                        step[3].as_i64().unwrap(),
                        step[4].as_i64().unwrap(),
                    );
                }
                states.push(
                    json!({"pending": list(&mut q.pending()), "delayed": list(&mut q.delayed())}),
                );
            }
            json!({"states": states})
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
        .stderr(Stdio::piped())
        .spawn()
        .expect("running java");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    // Java's log (the plugin scanner's complaints about classes missing from this narrow
    // classpath) is shown only when the run fails.
    assert!(
        out.status.success(),
        "MirrorVectors failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
