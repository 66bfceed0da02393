//! Kafka client settings for librdkafka: Connect's defaults for the producers and consumers it
//! creates (`Worker.baseProducerConfigs` / `baseConsumerConfigs`), the worker's `producer.*`,
//! `consumer.*`, `admin.*` prefixes and connectors' `producer.override.*` /
//! `consumer.override.*`, translated from Java client keys where librdkafka names them
//! differently. Java-only keys with no librdkafka meaning are dropped with a debug log.

use std::collections::HashMap;

use rdkafka::ClientConfig;

use super::worker::WorkerConfig;

/// Java client keys librdkafka has no use for (serializers, JVM memory and class settings).
const JAVA_ONLY_KEYS: &[&str] = &[
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
    "max.block.ms",
    "interceptor.classes",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.sample.window.ms",
    "metrics.recording.level",
    "partitioner.class",
    "partitioner.ignore.keys",
    "partitioner.adaptive.partitioning.enable",
    "partitioner.availability.timeout.ms",
    "client.dns.lookup",
    "auto.include.jmx.reporter",
    "exclude.internal.topics",
    "default.api.timeout.ms",
    "max.poll.records",
    "max.poll.interval.ms.connect",
    "retry.backoff.max.ms",
    "metadata.max.idle.ms",
    "send.buffer.bytes",
    "receive.buffer.bytes",
    "enable.metrics.push",
    "group.protocol",
    "internal.leave.group.on.close",
    "allow.auto.create.topics.connect",
    "ssl.endpoint.identification.algorithm.connect",
];

/// The producer's default bound on the records it buffers, in KiB: 32 MiB, the Java
/// producer's `buffer.memory` default (librdkafka's own default is 1 GiB).
pub const DEFAULT_PRODUCER_BUFFER_KBYTES: u64 = 32 * 1024;

/// Translates one Java client setting to librdkafka: `None` drops it.
///
/// `buffer.memory` (bytes) becomes `queue.buffering.max.kbytes` (KiB, at least 1); a value
/// that is not a number is passed on as is, for librdkafka to reject by that name.
pub fn translate(key: &str, value: &str) -> Option<(String, String)> {
    if JAVA_ONLY_KEYS.contains(&key) {
        tracing::debug!(key, "dropping Java-only client setting");
        return None;
    }
    if key == "buffer.memory" {
        let kbytes = match value.trim().parse::<u64>() {
            Ok(bytes) => (bytes / 1024).max(1).to_string(),
            Err(_) => value.to_string(),
        };
        return Some(("queue.buffering.max.kbytes".into(), kbytes));
    }
    let mapped = match key {
        "max.request.size" => "message.max.bytes",
        "fetch.max.bytes" => "fetch.max.bytes",
        "max.partition.fetch.bytes" => "max.partition.fetch.bytes",
        other => other,
    };
    Some((mapped.to_string(), value.to_string()))
}

/// Builds a librdkafka configuration: `base` first, then `overrides` (already without
/// prefixes) translated on top. librdkafka rejects unknown keys when the client is created;
/// callers report that error with the key's name.
pub fn client_config(
    bootstrap: &str,
    base: &[(&str, String)],
    overrides: &[HashMap<String, String>],
) -> ClientConfig {
    let mut cfg = ClientConfig::new();
    cfg.set("bootstrap.servers", bootstrap);
    cfg.set("log_level", "3");
    for (k, v) in base {
        cfg.set(*k, v);
    }
    for layer in overrides {
        let mut keys: Vec<_> = layer.keys().collect();
        keys.sort();
        for k in keys {
            if let Some((k, v)) = translate(k, &layer[k]) {
                cfg.set(k, v);
            }
        }
    }
    cfg
}

/// The producer configuration for a source task (`Worker.baseProducerConfigs`): acks=all,
/// idempotence (which keeps per-partition order as Connect's single in-flight request does),
/// client id `connector-producer-<connector>-<task>`, records buffered bounded to
/// [`DEFAULT_PRODUCER_BUFFER_KBYTES`] (as Java's `buffer.memory`; librdkafka would otherwise
/// buffer up to 1 GiB), then the worker's `producer.*` settings, then the connector's
/// `producer.override.*` settings.
pub fn source_producer_config(
    worker: &WorkerConfig,
    connector: &str,
    task: u32,
    connector_overrides: HashMap<String, String>,
) -> ClientConfig {
    client_config(
        &worker.bootstrap_servers(),
        &[
            ("acks", "all".into()),
            ("enable.idempotence", "true".into()),
            (
                "client.id",
                format!("connector-producer-{connector}-{task}"),
            ),
            ("linger.ms", "5".into()),
            ("message.timeout.ms", "0".into()),
            ("queue.buffering.max.messages", "1000000".into()),
            (
                "queue.buffering.max.kbytes",
                DEFAULT_PRODUCER_BUFFER_KBYTES.to_string(),
            ),
        ],
        &[worker.with_prefix("producer."), connector_overrides],
    )
}

/// The consumer configuration for a sink task (`Worker.baseConsumerConfigs`): group
/// `connect-<connector>`, no auto commit, `auto.offset.reset=earliest`, client id
/// `connector-consumer-<connector>-<task>`, then `consumer.*`, then `consumer.override.*`.
pub fn sink_consumer_config(
    worker: &WorkerConfig,
    connector: &str,
    task: u32,
    connector_overrides: HashMap<String, String>,
) -> ClientConfig {
    client_config(
        &worker.bootstrap_servers(),
        &[
            ("group.id", format!("connect-{connector}")),
            ("enable.auto.commit", "false".into()),
            ("enable.auto.offset.store", "false".into()),
            ("auto.offset.reset", "earliest".into()),
            // Java's consumer lets the broker create a missing subscribed topic.
            ("allow.auto.create.topics", "true".into()),
            (
                "client.id",
                format!("connector-consumer-{connector}-{task}"),
            ),
        ],
        &[worker.with_prefix("consumer."), connector_overrides],
    )
}

/// The admin configuration: `admin.*` over the worker's bootstrap servers.
pub fn admin_config(worker: &WorkerConfig) -> ClientConfig {
    client_config(
        &worker.bootstrap_servers(),
        &[],
        &[worker.with_prefix("admin.")],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_only_keys_are_dropped_and_others_mapped() {
        assert_eq!(translate("key.serializer", "x"), None);
        assert_eq!(
            translate("max.request.size", "10"),
            Some(("message.max.bytes".into(), "10".into()))
        );
        assert_eq!(
            translate("buffer.memory", "33554432"),
            Some(("queue.buffering.max.kbytes".into(), "32768".into()))
        );
        assert_eq!(
            translate("buffer.memory", "100"),
            Some(("queue.buffering.max.kbytes".into(), "1".into()))
        );
        assert_eq!(
            translate("linger.ms", "3"),
            Some(("linger.ms".into(), "3".into()))
        );
    }

    #[test]
    fn overrides_layer_on_top_of_defaults() {
        let mut o = HashMap::new();
        o.insert("acks".to_string(), "1".to_string());
        let cfg = client_config("b:1", &[("acks", "all".into())], &[o]);
        assert_eq!(cfg.get("acks"), Some("1"));
        assert_eq!(cfg.get("bootstrap.servers"), Some("b:1"));
    }
}
