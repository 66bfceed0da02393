//! The native `MirrorSourceConnector` (issue #44) checked against Apache's (`connect-mirror`
//! from Maven Central, hosted from its plugin directory) as the oracle: one worker runs both
//! on the same topics of a second broker, Apache's as the default version of the class and the
//! native one chosen by `connector.plugin.version`, each under its own cluster aliases.

use crate::common;

use std::time::Duration;

use common::*;
use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;
use serde_json::Value as Json;
use tributary_mirror::records::OffsetSync;

const CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
/// The native classes' version: Tributary's.
const NATIVE: &str = env!("CARGO_PKG_VERSION");

/// The partition count of `topic` (0 when it does not exist).
fn partition_count(bootstrap: &str, topic: &str) -> usize {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("allow.auto.create.topics", "false")
        .create()
        .unwrap();
    c.fetch_metadata(Some(topic), Duration::from_secs(10))
        .ok()
        .and_then(|md| {
            md.topics()
                .iter()
                .find(|t| t.name() == topic && t.error().is_none())
                .map(|t| t.partitions().len())
        })
        .unwrap_or(0)
}

/// The settings set on `topic` itself (not defaults), sorted.
fn topic_settings(bootstrap: &str, topic: &str) -> Vec<(String, String)> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let res = rt
        .block_on(admin.describe_configs(&[ResourceSpecifier::Topic(topic)], &AdminOptions::new()))
        .unwrap();
    let mut out: Vec<(String, String)> = res
        .into_iter()
        .flat_map(|r| r.unwrap().entries)
        .filter(|e| !e.is_default && e.source == rdkafka::admin::ConfigSource::DynamicTopic)
        .filter_map(|e| e.value.map(|v| (e.name, v)))
        .collect();
    out.sort();
    out
}

/// Produces `n` records to each of `partitions` partitions of `topic`, with keys, values and
/// a header (every tenth record without a key, every seventh without a value: a tombstone).
fn produce_partitions(bootstrap: &str, topic: &str, partitions: i32, n: usize) {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer as _, ThreadedProducer};
    let p: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    for partition in 0..partitions {
        for i in 0..n {
            let key = format!("p{partition}-k{i}");
            let value = format!("p{partition} value {i}");
            let mut r = BaseRecord::<[u8], [u8]>::to(topic)
                .partition(partition)
                .headers(OwnedHeaders::new().insert(Header {
                    key: "n",
                    value: Some(key.as_bytes()),
                }));
            if i % 10 != 0 {
                r = r.key(key.as_bytes());
            }
            if i % 7 != 0 {
                r = r.payload(value.as_bytes());
            }
            p.send(r).map_err(|(e, _)| e).unwrap();
        }
    }
    p.flush(Duration::from_secs(30)).unwrap();
}

/// Deletes `topic` and waits until the broker no longer lists it (nothing when it does not
/// exist).
fn delete_topic(bootstrap: &str, topic: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(admin.delete_topics(&[topic], &AdminOptions::new()))
        .unwrap();
    wait_for(&format!("{topic} deleted"), Duration::from_secs(60), || {
        (partition_count(bootstrap, topic) == 0).then_some(())
    });
}

/// The offset syncs in `topic`, decoded.
fn offset_syncs(bootstrap: &str, topic: &str) -> Vec<OffsetSync> {
    read_records(bootstrap, topic)
        .into_iter()
        .map(|r| OffsetSync::decode(&r.key.unwrap(), &r.value.unwrap()).unwrap())
        .collect()
}

/// A connector's committed offsets (`GET /connectors/{name}/offsets`), with its source cluster
/// alias replaced by `ALIAS`, sorted.
fn committed(w: &StandaloneWorker, name: &str, alias: &str) -> Vec<String> {
    let (code, body) = w.get(&format!("/connectors/{name}/offsets"));
    assert_eq!(code, 200, "{body}");
    let mut out: Vec<String> = body["offsets"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut o| {
            assert_eq!(o["partition"]["cluster"], Json::from(alias), "{o}");
            o["partition"]["cluster"] = Json::from("ALIAS");
            o.to_string()
        })
        .collect();
    out.sort();
    out
}

fn connector(
    name: &str,
    alias: &str,
    source: &str,
    target: &str,
    prefix: &str,
    extra: &str,
) -> String {
    format!(
        "name={name}\nconnector.class={CLASS}\ntasks.max=2\n\
         source.cluster.alias={alias}\ntarget.cluster.alias=t{alias}\n\
         source.cluster.bootstrap.servers={source}\ntarget.cluster.bootstrap.servers={target}\n\
         topics={prefix}.*\nreplication.factor=1\noffset-syncs.topic.replication.factor=1\n\
         sync.topic.acls.enabled=false\nrefresh.topics.interval.seconds=1\n\
         consumer.poll.timeout.ms=500\nadmin.timeout.ms=30000\nproducer.override.linger.ms=5\n\
         key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
         value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
         header.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n{extra}"
    )
}

/// Both connectors replicate the same topics: the remote topics get the same records (keys,
/// values, headers, timestamps, in order), the same partition counts and the same copied
/// settings (an excluded one left out); each writes offset syncs that map every upstream
/// offset to its downstream one and reach the last record; each commits the same source
/// offsets under Java's partition keys. A topic created while they run is picked up by both,
/// and after a restart each resumes where it stopped: nothing replicated twice, nothing
/// skipped. Settings the native connector does not implement are refused by name at
/// validation.
#[test]
fn native_mirror_source_replicates_as_apaches_does() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let source = second.bootstrap();
    let prefix = unique("mn").replace('-', "_");
    let orders = format!("{prefix}.orders");
    let wide = format!("{prefix}.wide");
    create_topic(&source, &orders, 1);
    create_topic_with_configs(
        &source,
        &wide,
        3,
        &[
            ("retention.ms", "123456789"),
            ("min.insync.replicas", "1"),
            ("max.message.bytes", "200000"),
        ],
    );
    let produce_range = |topic: &str, from: usize, to: usize| {
        let rows: Vec<(String, String, String)> = (from..to)
            .map(|i| {
                (
                    format!("k{i}"),
                    format!("value {i} ünïcödé"),
                    format!("h{i}"),
                )
            })
            .collect();
        let headers: Vec<[(&str, &str); 1]> = rows
            .iter()
            .map(|(_, _, h)| [("trace", h.as_str())])
            .collect();
        let recs: Vec<Produced<'_>> = rows
            .iter()
            .zip(&headers)
            .map(|((k, v, _), h)| (Some(k.as_str()), v.as_str(), &h[..]))
            .collect();
        produce(&source, topic, &recs);
    };
    produce_range(&orders, 0, 300);

    std::fs::write(
        dir.path().join("java.properties"),
        connector("mm2-java", "j", &source, &bootstrap, &prefix, ""),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("native.properties"),
        connector(
            "mm2-native",
            "n",
            &source,
            &bootstrap,
            &prefix,
            &format!("connector.plugin.version={NATIVE}\n"),
        ),
    )
    .unwrap();
    let files = ["java.properties", "native.properties"];
    let jvm = jvm_lines(&classpath, &plugin_path, &[]);
    let mut w = StandaloneWorker::start(dir.path(), &bootstrap, &jvm, &files);
    w.wait_state("mm2-java", 1, "RUNNING");
    w.wait_state("mm2-native", 1, "RUNNING");
    let (_, listed) = w.get("/connector-plugins?connectorsOnly=true");
    let versions: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == CLASS)
        .filter_map(|p| p["version"].as_str())
        .collect();
    assert!(versions.contains(&NATIVE), "{listed}");
    assert!(
        versions.contains(&bridge_connect_version().as_str()),
        "{listed}"
    );
    let (_, info) = w.get("/connectors/mm2-native");
    assert_eq!(info["config"]["connector.plugin.version"], NATIVE);

    let mirrored = |alias: &str, n: usize| {
        let topic = format!("{alias}.{orders}");
        wait_for(
            &format!("{n} records in {topic}"),
            Duration::from_secs(120),
            || {
                let got = read_records(&bootstrap, &topic);
                (got.len() >= n).then_some(got)
            },
        )
    };
    let expected = read_records(&source, &orders);
    let native = mirrored("n", 300);
    assert_eq!(
        native,
        mirrored("j", 300),
        "the same records as Apache's connector"
    );
    assert_eq!(
        native, expected,
        "keys, values, headers and timestamps, in order"
    );

    // The remote topics of the 3-partition topic: same partitions, same settings copied
    // (min.insync.replicas is excluded by default).
    for alias in ["n", "j"] {
        let remote = format!("{alias}.{wide}");
        wait_for(
            &format!("{remote} created"),
            Duration::from_secs(60),
            || (partition_count(&bootstrap, &remote) == 3).then_some(()),
        );
    }
    // Its records, partition by partition (keyless records and tombstones among them).
    produce_partitions(&source, &wide, 3, 40);
    for partition in 0..3 {
        let expected = read_partition_records(&source, &wide, partition);
        assert_eq!(expected.len(), 40);
        for alias in ["n", "j"] {
            let remote = format!("{alias}.{wide}");
            let got = wait_for(
                &format!("partition {partition} of {remote}"),
                Duration::from_secs(60),
                || {
                    let got = read_partition_records(&bootstrap, &remote, partition);
                    (got.len() >= 40).then_some(got)
                },
            );
            assert_eq!(got, expected, "{remote}-{partition}");
        }
    }
    let settings = topic_settings(&bootstrap, &format!("n.{wide}"));
    assert_eq!(settings, topic_settings(&bootstrap, &format!("j.{wide}")));
    assert!(
        settings.contains(&("retention.ms".into(), "123456789".into())),
        "{settings:?}"
    );
    assert!(
        settings.contains(&("max.message.bytes".into(), "200000".into())),
        "{settings:?}"
    );
    assert!(
        !settings.iter().any(|(k, _)| k == "min.insync.replicas"),
        "{settings:?}"
    );

    // Offset syncs, on the source cluster, named after each target alias: every sync maps an
    // upstream offset to the same downstream one (fresh remote topics), and the last record's
    // sync arrives (promoted at an offset commit).
    for alias in ["n", "j"] {
        let topic = format!("mm2-offset-syncs.t{alias}.internal");
        let syncs = wait_for(
            &format!("the last offset sync in {topic}"),
            Duration::from_secs(60),
            || {
                let s = offset_syncs(&source, &topic);
                s.iter()
                    .any(|s| s.topic == orders && s.upstream_offset == 299)
                    .then_some(s)
            },
        );
        let of_orders: Vec<&OffsetSync> = syncs.iter().filter(|s| s.topic == orders).collect();
        assert_eq!(
            of_orders[0].upstream_offset, 0,
            "{alias}: the first record is synced at once"
        );
        for s in &of_orders {
            assert_eq!(s.partition, 0);
            assert_eq!(s.upstream_offset, s.downstream_offset, "{alias}: {s:?}");
        }
    }

    // The same source offsets, under Java's partition keys.
    let last = |name: &str, alias: &str| {
        wait_for(
            &format!("{name}'s offset of record 299"),
            Duration::from_secs(60),
            || {
                let c = committed(&w, name, alias);
                c.iter()
                    .any(|o| o.contains(&orders) && o.contains("\"offset\":299"))
                    .then_some(c)
            },
        )
    };
    assert_eq!(last("mm2-native", "n"), last("mm2-java", "j"));

    // A topic created while they run is found by both.
    let late = format!("{prefix}.late");
    create_topic(&source, &late, 1);
    produce_range(&late, 0, 20);
    for alias in ["n", "j"] {
        let topic = format!("{alias}.{late}");
        let got = wait_for(
            &format!("20 records in {topic}"),
            Duration::from_secs(120),
            || {
                let got = read_records(&bootstrap, &topic);
                (got.len() >= 20).then_some(got)
            },
        );
        assert_eq!(got, read_records(&source, &late), "{alias}");
    }

    // Stopped and started again, each resumes after what it committed.
    let c = last("mm2-native", "n");
    assert!(!c.is_empty());
    assert!(w.terminate().success());
    produce_range(&orders, 300, 350);
    let w = StandaloneWorker::spawn(dir.path(), &files);
    w.wait_state("mm2-native", 1, "RUNNING");
    w.wait_state("mm2-java", 1, "RUNNING");
    let expected = read_records(&source, &orders);
    assert_eq!(expected.len(), 350);
    let native = mirrored("n", 350);
    assert_eq!(
        native, expected,
        "resumed with nothing twice and nothing skipped"
    );
    assert_eq!(native, mirrored("j", 350));

    // Settings the native connector does not implement are refused by name.
    let body = serde_json::json!({
        "connector.class": CLASS,
        "connector.plugin.version": NATIVE,
        "name": "refused",
        "topic.filter.class": "com.example.MyTopicFilter",
        "sync.topic.acls.enabled": "true",
    });
    let (code, v) = w.send(
        "PUT",
        "/connector-plugins/MirrorSourceConnector/config/validate",
        Some(&body.to_string()),
    );
    assert_eq!(code, 200, "{v}");
    let errors = |key: &str| -> Vec<String> {
        v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == key)
            .map(|c| {
                c["value"]["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(
        errors("topic.filter.class")
            .iter()
            .any(|e| e.contains("com.example.MyTopicFilter")),
        "{v}"
    );
    assert!(
        errors("sync.topic.acls.enabled")
            .iter()
            .any(|e| e.contains("ACL")),
        "{v}"
    );
}

/// The native `MirrorHeartbeatConnector` against Apache's, side by side on one worker, each
/// under its own cluster aliases: both write heartbeats into the target's compacted
/// one-partition `heartbeats` topic, once a second, keyed by their aliases, with the record
/// timestamp the heartbeat's, and commit the same source offsets under Java's partition keys.
#[test]
fn native_heartbeats_are_apaches() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    const HEARTBEAT: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
    let alias = unique("hb").replace('-', "_");
    let connector = |name: &str, side: &str, extra: &str| {
        format!(
            "name={name}\nconnector.class={HEARTBEAT}\ntasks.max=3\n\
             source.cluster.alias={alias}_{side}\ntarget.cluster.alias=t_{side}\n\
             target.cluster.bootstrap.servers={bootstrap}\n\
             heartbeats.topic.replication.factor=1\n\
             key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
             value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n{extra}"
        )
    };
    std::fs::write(
        dir.path().join("native.properties"),
        connector(
            "hb-native",
            "n",
            &format!("connector.plugin.version={NATIVE}\n"),
        ),
    )
    .unwrap();
    // The native connector alone first, on a broker without the topic: it creates it.
    delete_topic(&bootstrap, "heartbeats");
    let jvm = jvm_lines(&classpath, &plugin_path, &[]);
    let w = StandaloneWorker::start(dir.path(), &bootstrap, &jvm, &["native.properties"]);
    wait_for("the heartbeats topic", Duration::from_secs(60), || {
        (partition_count(&bootstrap, "heartbeats") == 1).then_some(())
    });
    assert!(
        topic_settings(&bootstrap, "heartbeats")
            .contains(&("cleanup.policy".into(), "compact".into())),
        "compacted"
    );
    // Then Apache's beside it.
    let java_config: serde_json::Map<String, Json> = connector("hb-java", "j", "")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), Json::from(v)))
        .collect();
    let (code, body) = w.send(
        "PUT",
        "/connectors/hb-java/config",
        Some(&Json::Object(java_config).to_string()),
    );
    assert_eq!(code, 201, "{body}");
    let java = w.wait_state("hb-java", 1, "RUNNING");
    let native = w.wait_state("hb-native", 1, "RUNNING");
    assert_eq!(
        native["tasks"].as_array().unwrap().len(),
        1,
        "one task: {native}"
    );
    assert_eq!(native["connector"]["version"], NATIVE, "{native}");
    assert_eq!(
        native["tasks"][0]["version"], NATIVE,
        "the native task runs: {native}"
    );
    assert_eq!(
        java["tasks"][0]["version"],
        bridge_connect_version().as_str(),
        "{java}"
    );
    assert_eq!(java["tasks"].as_array().unwrap().len(), 1, "{java}");
    let beats = |side: &str| {
        let source = format!("{alias}_{side}");
        wait_for(
            &format!("3 heartbeats of {source}"),
            Duration::from_secs(60),
            || {
                let got: Vec<(tributary_mirror::records::Heartbeat, Option<i64>)> =
                    read_records(&bootstrap, "heartbeats")
                        .into_iter()
                        .filter_map(|r| {
                            let hb = tributary_mirror::records::Heartbeat::decode(
                                r.key.as_deref()?,
                                r.value.as_deref()?,
                            )
                            .ok()?;
                            (hb.source_cluster_alias == source).then_some((hb, r.timestamp))
                        })
                        .collect();
                (got.len() >= 3).then_some(got)
            },
        )
    };
    for side in ["n", "j"] {
        let got = beats(side);
        for (hb, ts) in &got {
            assert_eq!(hb.target_cluster_alias, format!("t_{side}"));
            assert_eq!(
                *ts,
                Some(hb.timestamp),
                "the record's timestamp is the heartbeat's"
            );
        }
        let gaps: Vec<i64> = got
            .windows(2)
            .map(|w| w[1].0.timestamp - w[0].0.timestamp)
            .collect();
        assert!(
            gaps.iter().all(|g| *g >= 900),
            "{side}: a heartbeat a second: {gaps:?}"
        );
    }
    let offsets = |name: &str, side: &str| {
        wait_for(
            &format!("{name}'s offsets"),
            Duration::from_secs(60),
            || {
                let (code, body) = w.get(&format!("/connectors/{name}/offsets"));
                assert_eq!(code, 200, "{body}");
                let text = body["offsets"]
                    .to_string()
                    .replace(&format!("{alias}_{side}"), "S")
                    .replace(&format!("t_{side}"), "T");
                (body["offsets"].as_array().is_some_and(|a| !a.is_empty())).then_some(text)
            },
        )
    };
    assert_eq!(offsets("hb-native", "n"), offsets("hb-java", "j"));
}
