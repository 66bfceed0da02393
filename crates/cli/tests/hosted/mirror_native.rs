//! The native MirrorMaker 2 connectors (issue #44) checked against Apache's (`connect-mirror`
//! from Maven Central, hosted from its plugin directory) as the oracle: one worker runs both
//! on the same topics of a second broker, each under its own cluster aliases. The native
//! version is the default of each class; Apache's runs when `connector.plugin.version` names
//! its version (KIP-891), and the tests name each explicitly.

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

/// Replaces the settings set on `topic` with `settings` (AlterConfigs: the others go back to
/// their defaults).
fn alter_topic_settings(bootstrap: &str, topic: &str, settings: &[(&str, &str)]) {
    use rdkafka::admin::AlterConfig;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut change = AlterConfig::new(ResourceSpecifier::Topic(topic));
    for (k, v) in settings {
        change = change.set(k, v);
    }
    for r in rt
        .block_on(admin.alter_configs(&[change], &AdminOptions::new()))
        .unwrap()
    {
        r.unwrap();
    }
}

/// Raises `topic`'s partition count to `total` (CreatePartitions).
fn add_partitions(bootstrap: &str, topic: &str, total: usize) {
    use rdkafka::admin::NewPartitions;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for r in rt
        .block_on(
            admin.create_partitions(&[NewPartitions::new(topic, total)], &AdminOptions::new()),
        )
        .unwrap()
    {
        r.unwrap();
    }
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

/// Partition `partition` of `topic` holds `n` records on `source`, and both connectors' remote
/// topics (`n.` and `j.`) on `target` get the same records in that partition.
fn assert_partition_mirrored(source: &str, target: &str, topic: &str, partition: i32, n: usize) {
    let expected = read_partition_records(source, topic, partition);
    assert_eq!(expected.len(), n);
    for alias in ["n", "j"] {
        let remote = format!("{alias}.{topic}");
        let got = wait_for(
            &format!("partition {partition} of {remote}"),
            Duration::from_secs(60),
            || {
                let got = read_partition_records(target, &remote, partition);
                (got.len() >= n).then_some(got)
            },
        );
        assert_eq!(got, expected, "{remote}-{partition}");
    }
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
         sync.topic.configs.interval.seconds=1\nmetric.names.formats=new\n\
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
        connector(
            "mm2-java",
            "j",
            &source,
            &bootstrap,
            &prefix,
            &format!("connector.plugin.version={}\n", bridge_connect_version()),
        ),
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
        assert_partition_mirrored(&source, &bootstrap, &wide, partition, 40);
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
    // Settings changed on the source later reach the remote topics (sync.topic.configs), and
    // one removed there is removed on the remote topics too: the same for both connectors.
    alter_topic_settings(
        &source,
        &wide,
        &[("retention.ms", "222222222"), ("min.insync.replicas", "1")],
    );
    let synced = |alias: &str| {
        let remote = format!("{alias}.{wide}");
        wait_for(
            &format!("{remote}'s settings synced"),
            Duration::from_secs(60),
            || {
                let s = topic_settings(&bootstrap, &remote);
                (s.contains(&("retention.ms".into(), "222222222".into()))
                    && !s.iter().any(|(k, _)| k == "max.message.bytes"))
                .then_some(s)
            },
        )
    };
    assert_eq!(synced("n"), synced("j"));

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

    // MirrorMaker's metrics (KIP-1280 names): the same series for both connectors' remote
    // topic, record-count at the 300 records replicated, with the same tags.
    let series = |name: &str, alias: &str| {
        let remote = format!("{alias}.{orders}");
        metric_series(&metrics_page(&w.url), name)
            .into_iter()
            .filter(|(labels, _)| labels.get("topic") == Some(&remote))
            .map(|(mut labels, v)| {
                for k in ["connector", "source", "target", "topic", "task"] {
                    labels.remove(k);
                }
                (labels, v)
            })
            .collect::<Vec<_>>()
    };
    for alias in ["n", "j"] {
        wait_for(
            &format!("record-count 300 for {alias}.{orders}"),
            Duration::from_secs(60),
            || {
                series("kafka_connect_plugins_record_count", alias)
                    .iter()
                    .any(|(_, v)| *v == 300.0)
                    .then_some(())
            },
        );
    }
    for name in [
        "kafka_connect_plugins_record_count",
        "kafka_connect_plugins_byte_count",
    ] {
        assert_eq!(series(name, "n"), series(name, "j"), "{name}");
    }
    let page = metrics_page(&w.url);
    for name in [
        "record_rate",
        "byte_rate",
        "record_age_ms",
        "record_age_ms_max",
        "record_age_ms_min",
        "record_age_ms_avg",
        "replication_latency_ms",
        "replication_latency_ms_max",
        "replication_latency_ms_min",
        "replication_latency_ms_avg",
    ] {
        let name = format!("kafka_connect_plugins_{name}");
        let native: Vec<_> = series(&name, "n").into_iter().map(|(l, _)| l).collect();
        let java: Vec<_> = series(&name, "j").into_iter().map(|(l, _)| l).collect();
        assert!(!native.is_empty(), "{name}:\n{page}");
        assert_eq!(native, java, "{name}");
    }

    // Partitions added to the source topic while the connectors run: the remote topics get
    // them too (refresh.topics), and the new partitions' records follow. (After the metrics:
    // the tasks are reconfigured, and a new task's counts start again, Java's as ours.)
    add_partitions(&source, &wide, 5);
    for alias in ["n", "j"] {
        let remote = format!("{alias}.{wide}");
        wait_for(
            &format!("{remote} grown to 5 partitions"),
            Duration::from_secs(60),
            || (partition_count(&bootstrap, &remote) == 5).then_some(()),
        );
    }
    for partition in 3..5 {
        produce_partitions_from(&source, &wide, partition, 25);
        assert_partition_mirrored(&source, &bootstrap, &wide, partition, 25);
    }
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
    let java_version = format!("connector.plugin.version={}\n", bridge_connect_version());
    let java_config: serde_json::Map<String, Json> = connector("hb-java", "j", &java_version)
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

/// `group`'s committed offsets of `partitions` partitions of `topic` on `bootstrap`: (offset,
/// metadata) each, `None` where nothing is committed.
fn group_offsets(
    bootstrap: &str,
    group: &str,
    topic: &str,
    partitions: i32,
) -> Vec<Option<(i64, String)>> {
    use rdkafka::{Offset, TopicPartitionList};
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    let got = c.committed_offsets(tpl, Duration::from_secs(30)).unwrap();
    (0..partitions)
        .map(|p| {
            let e = got.find_partition(topic, p).unwrap();
            match e.offset() {
                Offset::Offset(o) => Some((o, e.metadata().to_string())),
                _ => None,
            }
        })
        .collect()
}

/// The latest checkpoint of each (group, partition) in `topic`, with the remote topic's name
/// as it is written.
fn latest_checkpoints(
    bootstrap: &str,
    topic: &str,
) -> std::collections::BTreeMap<(String, i32), tributary_mirror::records::Checkpoint> {
    read_records(bootstrap, topic)
        .into_iter()
        .filter_map(|r| {
            tributary_mirror::records::Checkpoint::decode(r.key.as_deref()?, r.value.as_deref()?)
                .ok()
        })
        .map(|c| ((c.group.clone(), c.partition), c))
        .collect()
}

/// The native `MirrorCheckpointConnector` against Apache's, side by side on one worker, each
/// for its own flow (aliases `n` and `j`) over the same source topic, whose records the native
/// source connector replicates for both: the same consumer groups found (a group with offsets
/// only of a topic the filter rejects is left out) and given to the tasks; the same
/// checkpoints (offsets translated through the offset syncs, the committed metadata kept) in
/// each flow's `<alias>.checkpoints.internal`; the same offsets committed for the group on the
/// target (`sync.group.offsets.enabled`); the same source offsets. Java's
/// `RemoteClusterUtils` reads the native checkpoints, and a consumer of the target that
/// starts at the offsets it translates reads what the group had not consumed on the source.
#[test]
fn native_checkpoints_are_apaches() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let mirror_jars = format!("{plugin_path}/connect-mirror/*");
    let Some((probe_cp, _classes)) =
        java_vector_program_with("RemoteClusterUtilsProbe.java", &mirror_jars)
    else {
        return;
    };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let source = second.bootstrap();
    let prefix = unique("cp").replace('-', "_");
    let orders = format!("{prefix}.orders");
    let skipped = format!("{prefix}.skipped");
    create_topic(&source, &orders, 2);
    create_topic(&source, &skipped, 1);
    produce_partitions(&source, &orders, 2, 200);
    let group = format!("{prefix}-g");
    let other = format!("{prefix}-other");
    // Everything consumed: the translation of the log end is exact (the last record's sync).
    commit_group(&source, &group, &orders, &[(0, 200, "m0"), (1, 200, "m1")]);
    commit_group(&source, &other, &skipped, &[(0, 0, "")]);

    const CHECKPOINT: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector";
    let flow = |name: &str, class: &str, alias: &str, extra: &str| {
        format!(
            "name={name}\nconnector.class={class}\ntasks.max=2\n\
             source.cluster.alias={alias}\ntarget.cluster.alias=t{alias}\n\
             source.cluster.bootstrap.servers={source}\ntarget.cluster.bootstrap.servers={bootstrap}\n\
             topics={orders}\ngroups={prefix}.*\nreplication.factor=1\n\
             offset-syncs.topic.replication.factor=1\ncheckpoints.topic.replication.factor=1\n\
             sync.topic.acls.enabled=false\noffset.lag.max=0\nconsumer.poll.timeout.ms=500\n\
             emit.checkpoints.interval.seconds=1\nrefresh.groups.interval.seconds=1\n\
             sync.group.offsets.enabled=true\nsync.group.offsets.interval.seconds=1\n\
             admin.timeout.ms=30000\nmetric.names.formats=new\n\
             key.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
             value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n\
             header.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n{extra}"
        )
    };
    let native = format!("connector.plugin.version={NATIVE}\n");
    for (file, body) in [
        ("src-n.properties", flow("src-n", CLASS, "n", &native)),
        ("src-j.properties", flow("src-j", CLASS, "j", &native)),
        ("cp-n.properties", flow("cp-n", CHECKPOINT, "n", &native)),
        (
            "cp-j.properties",
            flow(
                "cp-j",
                CHECKPOINT,
                "j",
                &format!("connector.plugin.version={}\n", bridge_connect_version()),
            ),
        ),
    ] {
        std::fs::write(dir.path().join(file), body).unwrap();
    }
    let files = [
        "src-n.properties",
        "src-j.properties",
        "cp-n.properties",
        "cp-j.properties",
    ];
    let jvm = jvm_lines(&classpath, &plugin_path, &[]);
    let w = StandaloneWorker::start(dir.path(), &bootstrap, &jvm, &files);
    let cp_native = w.wait_state("cp-n", 1, "RUNNING");
    let cp_java = w.wait_state("cp-j", 1, "RUNNING");
    assert_eq!(cp_native["tasks"][0]["version"], NATIVE, "{cp_native}");
    assert_eq!(
        cp_java["tasks"][0]["version"],
        bridge_connect_version().as_str(),
        "{cp_java}"
    );
    // The same groups, to one task each (the other group has no offsets of `topics`).
    let assigned = |name: &str| {
        let (code, tasks) = w.get(&format!("/connectors/{name}/tasks"));
        assert_eq!(code, 200, "{tasks}");
        tasks
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["config"]["task.assigned.groups"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(assigned("cp-n"), std::slice::from_ref(&group));
    assert_eq!(assigned("cp-n"), assigned("cp-j"));

    // The same checkpoints, each flow's remote topic named after its alias.
    // Each partition's latest checkpoint, once partition 0's reached `upstream` and every
    // translation is exact (the remote topics are fresh: the same offsets; the first
    // checkpoints may come while the last offset syncs are on their way, and are then
    // translated through an earlier sync).
    let checkpoints = |alias: &str, upstream: i64| {
        let topic = format!("{alias}.checkpoints.internal");
        wait_for(
            &format!("checkpoints at {upstream} in {topic}"),
            Duration::from_secs(120),
            || {
                let got = latest_checkpoints(&bootstrap, &topic);
                let ours: Vec<_> = got
                    .into_iter()
                    .filter(|((g, _), _)| *g == group)
                    .map(|(_, mut c)| {
                        assert_eq!(c.topic, format!("{alias}.{orders}"), "{c:?}");
                        c.topic = "REMOTE".into();
                        c
                    })
                    .collect();
                (ours.len() == 2
                    && ours[0].upstream_offset >= upstream
                    && ours
                        .iter()
                        .all(|c| c.downstream_offset == c.upstream_offset))
                .then_some(ours)
            },
        )
    };
    let native_checkpoints = checkpoints("n", 200);
    assert_eq!(native_checkpoints, checkpoints("j", 200));
    let summary: Vec<(i32, i64, i64, &str)> = native_checkpoints
        .iter()
        .map(|c| {
            (
                c.partition,
                c.upstream_offset,
                c.downstream_offset,
                c.metadata.as_str(),
            )
        })
        .collect();
    assert_eq!(summary, [(0, 200, 200, "m0"), (1, 200, 200, "m1")]);

    // The group's offsets synced on the target, with the metadata, by both.
    let synced = |alias: &str, at: i64| {
        let topic = format!("{alias}.{orders}");
        wait_for(
            &format!("{group}'s offsets on {topic} at {at}"),
            Duration::from_secs(120),
            || {
                let got = group_offsets(&bootstrap, &group, &topic, 2);
                (got.iter()
                    .all(|o| o.as_ref().is_some_and(|(o, _)| *o >= at)))
                .then_some(got)
            },
        )
    };
    let on_target = synced("n", 200);
    assert_eq!(
        on_target,
        [Some((200, "m0".to_string())), Some((200, "m1".to_string()))]
    );
    assert_eq!(on_target, synced("j", 200));

    // The group moves on upstream; its checkpoints follow.
    produce_partitions(&source, &orders, 1, 50);
    commit_group(&source, &group, &orders, &[(0, 250, "m0-250")]);
    let moved = checkpoints("n", 250);
    assert_eq!(moved, checkpoints("j", 250));
    assert_eq!(
        (moved[0].upstream_offset, moved[0].downstream_offset),
        (250, 250)
    );

    // Java's RemoteClusterUtils reads the native checkpoints as it reads Apache's.
    let probe = |alias: &str| {
        let out = std::process::Command::new("java")
            .args([
                "-Xmx256m",
                "-cp",
                &probe_cp,
                "RemoteClusterUtilsProbe",
                &bootstrap,
                alias,
                &group,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "RemoteClusterUtilsProbe failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let read = probe("n");
    assert!(
        read.lines()
            .any(|l| l == "checkpointTopic n.checkpoints.internal"),
        "{read}"
    );
    let translated: Vec<&str> = read
        .lines()
        .filter(|l| l.starts_with("translated "))
        .collect();
    assert_eq!(
        translated,
        [
            format!("translated n.{orders} 0 250 m0-250"),
            format!("translated n.{orders} 1 200 m1"),
        ]
    );
    let java_read = probe("j");
    assert_eq!(
        java_read
            .lines()
            .filter(|l| l.starts_with("translated "))
            .map(|l| l.replace(&format!("j.{orders}"), "REMOTE"))
            .collect::<Vec<_>>(),
        translated
            .iter()
            .map(|l| l.replace(&format!("n.{orders}"), "REMOTE"))
            .collect::<Vec<_>>()
    );
    // A consumer failing over to the target at the translated offset reads what the group
    // had not consumed upstream.
    produce_partitions(&source, &orders, 1, 10);
    let remote = format!("n.{orders}");
    let upstream = read_partition_records(&source, &orders, 0);
    assert_eq!(upstream.len(), 260);
    let downstream = wait_for(
        &format!("260 records in {remote}-0"),
        Duration::from_secs(60),
        || {
            let got = read_partition_records(&bootstrap, &remote, 0);
            (got.len() >= 260).then_some(got)
        },
    );
    assert_eq!(downstream[250..], upstream[250..]);

    // The same source offsets (the checkpoint's partition, offset 0).
    let offsets = |name: &str, alias: &str| {
        let (code, body) = w.get(&format!("/connectors/{name}/offsets"));
        assert_eq!(code, 200, "{body}");
        let mut o: Vec<String> = body["offsets"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|o| {
                o.to_string()
                    .replace(&format!("{alias}.{orders}"), "REMOTE")
            })
            .collect();
        o.sort();
        o
    };
    let native_offsets = wait_for("cp-n's offsets", Duration::from_secs(60), || {
        let o = offsets("cp-n", "n");
        (o.len() == 2).then_some(o)
    });
    assert_eq!(native_offsets, offsets("cp-j", "j"));

    // Their checkpoint-latency-ms series (KIP-1280 names), with the same tags: one per group
    // and partition natively; Apache's 4.3.1 registers the sensor of the first partition only
    // (every group and partition gets the same sensor name, refused after the first), so its
    // series are among the native ones.
    for name in [
        "checkpoint_latency_ms",
        "checkpoint_latency_ms_max",
        "checkpoint_latency_ms_min",
        "checkpoint_latency_ms_avg",
    ] {
        let name = format!("kafka_connect_plugins_{name}");
        let of = |alias: &str| {
            let mut labels: Vec<_> = metric_series(&metrics_page(&w.url), &name)
                .into_iter()
                .filter(|(l, _)| {
                    l.get("group") == Some(&group)
                        && l.get("source").map(String::as_str) == Some(alias)
                })
                .map(|(mut l, _)| {
                    assert_eq!(l.get("topic"), Some(&format!("{alias}.{orders}")), "{l:?}");
                    for k in ["connector", "source", "target", "topic", "task"] {
                        l.remove(k);
                    }
                    l
                })
                .collect();
            labels.sort_by_key(|l| format!("{l:?}"));
            labels
        };
        let native = of("n");
        assert_eq!(native.len(), 2, "{name}: both partitions");
        let java = of("j");
        assert!(!java.is_empty(), "{name}");
        assert!(
            java.iter().all(|l| native.contains(l)),
            "{name}: {java:?} in {native:?}"
        );
    }
}

/// One connector moves from Apache's `MirrorSourceConnector` to the native one and back by its
/// `connector.plugin.version` alone (Apache's version, Tributary's) (a handover: same name, same committed source offsets):
/// each picks up where the other stopped, so the remote topic holds every source record once,
/// in order.
#[test]
fn a_flow_hands_over_between_apaches_and_the_native_connector() {
    let Some(bootstrap) = kafka() else { return };
    let Some((classpath, plugin_path)) = java_bridge() else {
        return;
    };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let source = second.bootstrap();
    let prefix = unique("ho").replace('-', "_");
    let topic = format!("{prefix}.orders");
    create_topic(&source, &topic, 2);
    produce_partitions(&source, &topic, 2, 50);
    std::fs::write(
        dir.path().join("handover.properties"),
        connector(
            "mm2-handover",
            "h",
            &source,
            &bootstrap,
            &prefix,
            &format!("connector.plugin.version={}\n", bridge_connect_version()),
        ),
    )
    .unwrap();
    let jvm = jvm_lines(&classpath, &plugin_path, &[]);
    let w = StandaloneWorker::start(dir.path(), &bootstrap, &jvm, &["handover.properties"]);
    let remote = format!("h.{topic}");
    let replicated = |per_partition: usize| {
        for p in 0..2 {
            let want = read_partition_records(&source, &topic, p);
            assert_eq!(want.len(), per_partition);
            let got = wait_for(
                &format!("{per_partition} records in {remote}-{p}"),
                Duration::from_secs(120),
                || {
                    let got = read_partition_records(&bootstrap, &remote, p);
                    (got.len() >= per_partition).then_some(got)
                },
            );
            assert_eq!(got, want, "partition {p}: each record once, in order");
        }
    };
    let version_of = |w: &StandaloneWorker| {
        let status = w.wait_state("mm2-handover", 2, "RUNNING");
        status["tasks"][0]["version"].as_str().unwrap().to_string()
    };
    assert_eq!(version_of(&w), bridge_connect_version());
    replicated(50);
    let config = |version: Option<&str>| -> String {
        let mut c: serde_json::Map<String, Json> =
            connector("mm2-handover", "h", &source, &bootstrap, &prefix, "")
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), Json::from(v)))
                .collect();
        if let Some(v) = version {
            c.insert("connector.plugin.version".into(), Json::from(v));
        }
        Json::Object(c).to_string()
    };
    // To the native connector…
    let (code, body) = w.send(
        "PUT",
        "/connectors/mm2-handover/config",
        Some(&config(Some(NATIVE))),
    );
    assert_eq!(code, 200, "{body}");
    wait_for("the native tasks", Duration::from_secs(60), || {
        (version_of(&w) == NATIVE).then_some(())
    });
    produce_partitions(&source, &topic, 2, 30);
    replicated(80);
    // …and back to Apache's.
    let java = bridge_connect_version();
    let (code, body) = w.send(
        "PUT",
        "/connectors/mm2-handover/config",
        Some(&config(Some(&java))),
    );
    assert_eq!(code, 200, "{body}");
    wait_for("Apache's tasks", Duration::from_secs(60), || {
        (version_of(&w) == java).then_some(())
    });
    produce_partitions(&source, &topic, 2, 30);
    replicated(110);
}

/// Apache's MirrorMaker 2 driver (`connect-mirror-maker.sh`'s class, Java) and
/// `tributary mirror-maker` as two processes of one dedicated cluster, with KIP-710's internal
/// REST servers: they share the flow's group (the Java process running Apache's classes, the
/// Tributary one the native ones), the records of A reach B, and after the Java process is
/// killed (SIGKILL) the Tributary one runs the whole flow with no record missing.
#[test]
fn a_java_and_a_tributary_mirror_maker_share_a_dedicated_cluster() {
    let Some(bootstrap) = kafka() else { return };
    let Some(classpath) = mirror_maker_classpath() else {
        return;
    };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let source = second.bootstrap();
    let tag = unique("mx").replace('-', "_");
    let (a, b) = (format!("a{tag}"), format!("b{tag}"));
    let topic = format!("{tag}.orders");
    create_topic(&source, &topic, 4);
    produce_partitions(&source, &topic, 4, 50);
    let port = faults::free_ports(2);
    let file = |name: &str, port: u16| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "clusters = {a}, {b}\n{a}.bootstrap.servers = {source}\n{b}.bootstrap.servers = {bootstrap}\n\
                 {a}->{b}.enabled = true\n{a}->{b}.topics = {tag}.*\nemit.heartbeats.enabled = false\n\
                 tasks.max = 4\nreplication.factor=1\ncheckpoints.topic.replication.factor=1\n\
                 heartbeats.topic.replication.factor=1\noffset-syncs.topic.replication.factor=1\n\
                 offset.storage.replication.factor=1\nstatus.storage.replication.factor=1\n\
                 config.storage.replication.factor=1\nrefresh.topics.interval.seconds=1\n\
                 sync.topic.acls.enabled=false\n{b}.offset.flush.interval.ms=1000\n\
                 {b}.scheduled.rebalance.max.delay.ms=3000\n\
                 dedicated.mode.enable.internal.rest = true\nlisteners = http://127.0.0.1:{port}\n"
            ),
        )
        .unwrap();
        path
    };
    let java_file = file("java.properties", port);
    let ours = file("tributary.properties", port + 1);
    let log = dir.path().join("java-mirror-maker.log");
    std::fs::write(
        dir.path().join("log4j2.properties"),
        "rootLogger.level = INFO\nrootLogger.appenderRef.console.ref = STDERR\nappender.console.type = Console\nappender.console.name = STDERR\nappender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\nappender.console.layout.pattern = [%d] %p %m (%c)%n\n",
    )
    .unwrap();
    let logf = std::fs::File::create(&log).unwrap();
    let mut java = std::process::Command::new("java")
        .args(["-Xms256M", "-Xmx1G"])
        .arg(format!(
            "-Dlog4j2.configurationFile={}",
            dir.path().join("log4j2.properties").display()
        ))
        .args([
            "-cp",
            &classpath,
            "org.apache.kafka.connect.mirror.MirrorMaker",
        ])
        .arg(&java_file)
        .stdout(logf.try_clone().unwrap())
        .stderr(logf)
        .spawn()
        .unwrap();
    let java_output = || std::fs::read_to_string(&log).unwrap_or_default();
    let remote = format!("{a}.{topic}");
    let all = |per_partition: usize, who: &dyn Fn() -> String| {
        for p in 0..4 {
            let want = read_partition_records(&source, &topic, p);
            assert_eq!(want.len(), per_partition);
            let got = wait_for(
                &format!("{per_partition} records in {remote}-{p}"),
                Duration::from_secs(180),
                || {
                    let got = read_partition_records(&bootstrap, &remote, p);
                    (got.len() >= per_partition).then_some(got)
                },
            );
            // At least once: every source record, in order (a crash may add duplicates).
            let mut next = 0;
            for r in &got {
                if next < want.len() && *r == want[next] {
                    next += 1;
                }
            }
            assert_eq!(
                next,
                want.len(),
                "partition {p}: a record is missing\n{}",
                who()
            );
        }
    };
    all(50, &java_output);
    let tributary = MirrorMakerProcess::start(dir.path(), &ours, &[]);
    // The Tributary process joins the Java one's group and gets a share of the flow.
    wait_for(
        "the Tributary process to run a share of the flow",
        Duration::from_secs(120),
        || {
            tributary
                .output()
                .lines()
                .any(|l| l.contains("joined the group") && !l.contains("connectors=[] tasks=[]"))
                .then_some(())
        },
    );
    produce_partitions(&source, &topic, 4, 25);
    all(75, &|| tributary.output());
    // The Java process dies; the Tributary one runs everything.
    java.kill().ok();
    java.wait().ok();
    produce_partitions(&source, &topic, 4, 25);
    all(100, &|| {
        format!("{}\n--- java ---\n{}", tributary.output(), java_output())
    });
}
