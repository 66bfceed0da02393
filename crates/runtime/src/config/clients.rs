//! Kafka client settings for librdkafka: Connect's defaults for the producers and consumers it
//! creates (`Worker.baseProducerConfigs` / `baseConsumerConfigs`), the worker's `producer.*`,
//! `consumer.*`, `admin.*` prefixes and connectors' `producer.override.*` /
//! `consumer.override.*`, translated from Java client keys by [`JAVA_CLIENT_KEYS`].
//!
//! A Java key with a librdkafka equivalent is mapped to it (renamed, or its value converted); a
//! Java key with none is dropped and logged once per process at WARN (serializers, which
//! Connect overrides itself, at DEBUG). A key in neither list goes to librdkafka as is, so
//! librdkafka's own keys work too, and librdkafka refuses an unknown key by name when the
//! client is created.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use rdkafka::ClientConfig;
use tributary_security::{KafkaSecurity, SecurityError};

use super::worker::WorkerConfig;

/// Which client a setting is for: a few Java keys map to different librdkafka keys for a
/// producer than for a consumer or an admin client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Producer,
    Consumer,
    Admin,
}

/// How one Java client key reaches librdkafka.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMapping {
    /// librdkafka has the key under the same name and meaning.
    Same,
    /// librdkafka names it differently; the value carries over unchanged.
    Renamed(&'static str),
    /// Renamed and the value converted (see [`translate`]).
    Converted(&'static str),
    /// No librdkafka equivalent: dropped, with the reason logged once.
    Dropped(&'static str),
}

/// Every Java producer, consumer and admin client key (`ProducerConfig`, `ConsumerConfig`,
/// `AdminClientConfig`, `CommonClientConfigs` of Kafka 4.1, and those added up to 4.4) and what becomes of it. Security
/// keys (`security.protocol`, `ssl.*`, `sasl.*`) are not listed: [`KafkaSecurity`] reads them.
pub const JAVA_CLIENT_KEYS: &[(&str, KeyMapping)] = {
    use KeyMapping::*;
    &[
        ("acks", Same),
        ("allow.auto.create.topics", Same),
        ("auto.commit.interval.ms", Same),
        // `none` is librdkafka's `error`.
        ("auto.offset.reset", Converted("auto.offset.reset")),
        ("batch.size", Same),
        ("bootstrap.controllers", Dropped("librdkafka clients connect to brokers only")),
        ("bootstrap.resolve.timeout.ms", Dropped("librdkafka resolves the bootstrap servers on each connection attempt; it has no separate resolution timeout")),
        ("bootstrap.servers", Same),
        // Bytes to KiB.
        ("buffer.memory", Converted("queue.buffering.max.kbytes")),
        ("check.crcs", Same),
        ("client.dns.lookup", Same),
        ("client.id", Same),
        ("client.rack", Same),
        ("compression.gzip.level", Renamed("compression.level")),
        ("compression.lz4.level", Renamed("compression.level")),
        ("compression.type", Same),
        ("compression.zstd.level", Renamed("compression.level")),
        ("connections.max.idle.ms", Same),
        ("default.api.timeout.ms", Dropped("librdkafka has no default API timeout")),
        ("default.list.key.serde.inner", Dropped("Connect's converters replace serdes")),
        ("default.list.key.serde.type", Dropped("Connect's converters replace serdes")),
        ("default.list.value.serde.inner", Dropped("Connect's converters replace serdes")),
        ("default.list.value.serde.type", Dropped("Connect's converters replace serdes")),
        ("delivery.timeout.ms", Same),
        ("enable.auto.commit", Same),
        ("enable.idempotence", Same),
        ("enable.metrics.push", Same),
        ("exclude.internal.topics", Dropped("librdkafka never matches internal topics by pattern")),
        ("fetch.max.bytes", Same),
        ("fetch.max.wait.ms", Renamed("fetch.wait.max.ms")),
        ("fetch.min.bytes", Same),
        ("group.id", Same),
        ("group.instance.id", Same),
        ("group.protocol", Same),
        ("group.remote.assignor", Same),
        ("heartbeat.interval.ms", Same),
        ("interceptor.classes", Dropped("Java interceptors cannot run in librdkafka")),
        ("internal.leave.group.on.close", Dropped("librdkafka always leaves the group on close")),
        ("isolation.level", Same),
        ("key.deserializer", Dropped("Connect sets its own deserializers")),
        ("key.serializer", Dropped("Connect sets its own serializers")),
        ("linger.ms", Same),
        ("max.block.ms", Dropped("librdkafka's produce calls do not block")),
        ("max.in.flight.requests.per.connection", Same),
        ("max.partition.fetch.bytes", Same),
        ("max.poll.interval.ms", Same),
        ("max.poll.records", Dropped("librdkafka returns one record per poll; a sink task's put batches are at most 500 records")),
        ("max.request.size", Renamed("message.max.bytes")),
        // Java's refresh period is librdkafka's topic.metadata.refresh.interval.ms (its
        // metadata.max.age.ms is a cache lifetime, set to three times the period).
        ("metadata.max.age.ms", Converted("topic.metadata.refresh.interval.ms")),
        ("metadata.max.idle.ms", Dropped("librdkafka has no idle-topic metadata expiry")),
        ("metadata.cluster.check.enable", Dropped("librdkafka does not send the cluster and node check of Kafka 4.4's clients")),
        ("metadata.recovery.rebootstrap.trigger.ms", Same),
        ("metadata.recovery.strategy", Same),
        ("metric.reporters", Dropped("Java metric reporters cannot run in librdkafka")),
        ("metrics.num.samples", Dropped("Java client metrics only")),
        ("metrics.recording.level", Dropped("Java client metrics only")),
        ("metrics.sample.window.ms", Dropped("Java client metrics only")),
        ("partition.assignment.strategy", Converted("partition.assignment.strategy")),
        ("partitioner.adaptive.partitioning.enable", Dropped("librdkafka's partitioner is not adaptive")),
        ("partitioner.availability.timeout.ms", Dropped("librdkafka's partitioner is not adaptive")),
        ("partitioner.class", Dropped("Java partitioners cannot run in librdkafka; records are partitioned by murmur2 of the key, as Java's default partitioner does")),
        ("partitioner.ignore.keys", Dropped("librdkafka always partitions keyed records by key")),
        ("rebalance.timeout.ms", Dropped("librdkafka uses max.poll.interval.ms as the rebalance timeout")),
        // -1 (the OS default) is librdkafka's 0.
        ("receive.buffer.bytes", Converted("socket.receive.buffer.bytes")),
        ("reconnect.backoff.max.ms", Same),
        ("reconnect.backoff.ms", Same),
        // A producer's request timeout; for consumers and admin clients, the socket timeout.
        ("request.timeout.ms", Converted("request.timeout.ms")),
        ("retries", Same),
        ("retry.backoff.max.ms", Same),
        ("retry.backoff.ms", Same),
        ("security.providers", Dropped("Java security providers cannot run in librdkafka")),
        ("send.buffer.bytes", Converted("socket.send.buffer.bytes")),
        ("session.timeout.ms", Same),
        ("socket.connection.setup.timeout.max.ms", Dropped("librdkafka has one connection setup timeout")),
        ("socket.connection.setup.timeout.ms", Same),
        ("transaction.timeout.ms", Same),
        ("transactional.id", Same),
        ("value.deserializer", Dropped("Connect sets its own deserializers")),
        ("value.serializer", Dropped("Connect sets its own serializers")),
    ]
};

/// The producer's default bound on the records it buffers, in KiB: 32 MiB, the Java
/// producer's `buffer.memory` default (librdkafka's own default is 1 GiB).
pub const DEFAULT_PRODUCER_BUFFER_KBYTES: u64 = 32 * 1024;

/// The mapping of a Java client key, `None` for a key Java clients do not define.
pub fn mapping(key: &str) -> Option<KeyMapping> {
    JAVA_CLIENT_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, m)| *m)
}

/// Logs a dropped key once per process (WARN; DEBUG for serializers, which Connect overrides).
fn log_dropped(key: &str, reason: &str) {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let first = SEEN
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string());
    if !first {
        return;
    }
    if key.ends_with("serializer") || key.contains("serde") {
        tracing::debug!(key, "dropping client setting: {reason}");
    } else {
        tracing::warn!(key, "dropping client setting {key}: {reason}");
    }
}

/// Java assignor class names to librdkafka's strategy names; `None` for one librdkafka lacks.
fn assignor_name(class: &str) -> Option<&'static str> {
    match class.trim().rsplit('.').next().unwrap_or("") {
        "RangeAssignor" | "range" => Some("range"),
        "RoundRobinAssignor" | "roundrobin" => Some("roundrobin"),
        "CooperativeStickyAssignor" | "cooperative-sticky" => Some("cooperative-sticky"),
        _ => None,
    }
}

/// Translates one client setting for a `kind` client: the librdkafka settings it becomes,
/// empty when dropped (and logged once). Values that do not parse are passed on unconverted,
/// for librdkafka to refuse under the key's name.
pub fn translate(kind: ClientKind, key: &str, value: &str) -> Vec<(String, String)> {
    let one = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    match mapping(key) {
        None | Some(KeyMapping::Same) => one(key, value),
        Some(KeyMapping::Renamed(to)) => one(to, value),
        Some(KeyMapping::Dropped(reason)) => {
            log_dropped(key, reason);
            Vec::new()
        }
        Some(KeyMapping::Converted(to)) => match key {
            "buffer.memory" => match value.trim().parse::<u64>() {
                Ok(bytes) => one(to, &(bytes / 1024).max(1).to_string()),
                Err(_) => one(to, value),
            },
            "auto.offset.reset" if value.trim().eq_ignore_ascii_case("none") => one(to, "error"),
            "metadata.max.age.ms" => match value.trim().parse::<u64>() {
                Ok(ms) => vec![
                    (to.to_string(), ms.min(3_600_000).to_string()),
                    (
                        "metadata.max.age.ms".to_string(),
                        ms.saturating_mul(3).clamp(1, 86_400_000).to_string(),
                    ),
                ],
                Err(_) => one(to, value),
            },
            "send.buffer.bytes" | "receive.buffer.bytes" if value.trim() == "-1" => one(to, "0"),
            "request.timeout.ms" if kind != ClientKind::Producer => one("socket.timeout.ms", value),
            "partition.assignment.strategy" => {
                let mut names = Vec::new();
                for class in value.split(',').filter(|c| !c.trim().is_empty()) {
                    match assignor_name(class) {
                        Some(n) => names.push(n),
                        None => log_dropped(
                            class.trim(),
                            "librdkafka has no such assignor (it has range, roundrobin and cooperative-sticky)",
                        ),
                    }
                }
                if names.is_empty() {
                    Vec::new()
                } else {
                    one(to, &names.join(","))
                }
            }
            _ => one(to, value),
        },
    }
}

/// One layer of client settings, without its prefix, and the prefix it was written under
/// (`producer.`, `consumer.override.`, or `""` for worker-level keys), which errors put back.
pub type Layer<'a> = (&'a str, HashMap<String, String>);

/// The worker-level security keys (`security.protocol`, `ssl.*`, `sasl.*`): what Connect's
/// internal-topic clients, admin clients and group membership use from the top level of the
/// worker file.
pub fn worker_security_layer(worker: &WorkerConfig) -> HashMap<String, String> {
    worker
        .raw_map()
        .iter()
        .filter(|(k, _)| tributary_security::is_security_key(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The worker-level security settings, parsed with their stores read (the group client's and
/// internal clients' TLS and SASL). Errors name the key.
pub fn worker_security(worker: &WorkerConfig) -> Result<KafkaSecurity, SecurityError> {
    let layer: BTreeMap<String, String> = worker_security_layer(worker).into_iter().collect();
    KafkaSecurity::from_settings(&layer, "")
}

/// Reads the worker-level key and trust stores again when their files change, for the group
/// client's new connections (issue #42; `tls` is its configuration in force): a store that no
/// longer loads keeps the previous configuration, logged. librdkafka's clients (internal topics,
/// tasks) read the stores when they are created: those created after the change use the new
/// files, those running keep what they read.
pub fn watch_group_tls(worker: &WorkerConfig, tls: &tributary_group::client::SharedTls) {
    let layer: BTreeMap<String, String> = worker_security_layer(worker).into_iter().collect();
    let files: Vec<std::path::PathBuf> = ["ssl.keystore.location", "ssl.truststore.location"]
        .iter()
        .filter_map(|k| layer.get(*k))
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .collect();
    let target = tls.downgrade();
    let alive = target.clone();
    super::file_watch::watch(
        "group-tls-stores",
        files,
        move || alive.strong_count() > 0,
        move || {
            let Some(target) = target.upgrade() else {
                return false;
            };
            match KafkaSecurity::from_settings(&layer, "").and_then(|s| s.tls_client_config()) {
                Ok(Some(config)) => {
                    *target.write().unwrap() = config;
                    tracing::info!("the worker's Kafka key and trust stores were reloaded for the group client's new connections");
                }
                Ok(None) => {}
                Err(e) => tracing::error!(
                    "cannot reload the worker's Kafka stores: {}: {}; the previous ones stay in force",
                    e.key,
                    e.message
                ),
            }
            true
        },
    );
}

/// Checks every client security setting of the worker file at startup, as Java clients would
/// when created: the worker-level keys (internal topics, group, admin), and those under
/// `producer.`, `consumer.` and `admin.`. The first unusable one is returned, named as written.
pub fn check_worker_security(worker: &WorkerConfig) -> Result<(), SecurityError> {
    all_client_security(worker).map(|_| ())
}

/// The worker file's client security settings, parsed: the worker-level keys (prefix `""`),
/// then those under `producer.`, `consumer.` and `admin.`. The first unusable one is an error,
/// named as written.
pub fn all_client_security(
    worker: &WorkerConfig,
) -> Result<Vec<(&'static str, KafkaSecurity)>, SecurityError> {
    let mut all = vec![("", worker_security(worker)?)];
    for prefix in ["producer.", "consumer.", "admin."] {
        let settings = if prefix == "admin." {
            admin_layer(worker)
        } else {
            worker.with_prefix(prefix)
        };
        let layer: BTreeMap<String, String> = settings
            .into_iter()
            .filter(|(k, _)| tributary_security::is_security_key(k))
            .collect();
        all.push((prefix, KafkaSecurity::from_settings(&layer, prefix)?));
    }
    Ok(all)
}

/// Builds a librdkafka configuration: `base` first, then the `layers` (already without
/// prefixes) translated on top, later layers winning. Security keys (`security.protocol`,
/// `ssl.*`, `sasl.*`) of all layers are merged and read by [`KafkaSecurity`]: Java's stores
/// and JAAS settings become librdkafka's inline PEM and SASL settings.
///
/// Errors: a security setting that cannot be used (a store that cannot be read, GSSAPI, …),
/// named with the prefix of the layer it came from. librdkafka rejects other unknown keys when
/// the client is created; callers report that error with the key's name.
pub fn client_config(
    kind: ClientKind,
    bootstrap: &str,
    base: &[(&str, String)],
    layers: &[Layer<'_>],
) -> Result<ClientConfig, SecurityError> {
    let mut cfg = ClientConfig::new();
    cfg.set("bootstrap.servers", bootstrap);
    cfg.set("log_level", "3");
    for (k, v) in base {
        cfg.set(*k, v);
    }
    let mut security: BTreeMap<String, String> = BTreeMap::new();
    let mut origin: HashMap<String, &str> = HashMap::new();
    for (prefix, layer) in layers {
        let mut keys: Vec<_> = layer.keys().collect();
        keys.sort();
        for k in keys {
            if tributary_security::is_security_key(k) {
                security.insert(k.clone(), layer[k].clone());
                origin.insert(k.clone(), prefix);
                continue;
            }
            for (k, v) in translate(kind, k, &layer[k]) {
                cfg.set(k, v);
            }
        }
    }
    if !security.is_empty() {
        let parsed = KafkaSecurity::from_settings(&security, "").map_err(|mut e| {
            let prefix = origin
                .get(&e.key)
                .or_else(|| origin.get("security.protocol"))
                .copied()
                .unwrap_or("");
            e.key = format!("{prefix}{}", e.key);
            e
        })?;
        for (k, v) in parsed.librdkafka_settings() {
            cfg.set(k, v);
        }
    }
    Ok(cfg)
}

/// The producer configuration for a source task (`Worker.baseProducerConfigs`): acks=all,
/// idempotence (which keeps per-partition order as Connect's single in-flight request does),
/// keyed records partitioned by murmur2 as Java's default partitioner does (so a key lands on
/// the partition a Java worker would choose),
/// client id `connector-producer-<connector>-<task>`, records buffered bounded to
/// [`DEFAULT_PRODUCER_BUFFER_KBYTES`] (as Java's `buffer.memory`; librdkafka would otherwise
/// buffer up to 1 GiB), then the worker's `producer.*` settings, then the connector's
/// `producer.override.*` settings. As in Connect, worker-level security keys do not apply to
/// task clients: they go under `producer.`.
pub fn source_producer_config(
    worker: &WorkerConfig,
    connector: &str,
    task: u32,
    connector_overrides: HashMap<String, String>,
) -> Result<ClientConfig, SecurityError> {
    producer_config(
        worker,
        format!("connector-producer-{connector}-{task}"),
        connector_overrides,
    )
}

/// The producer configuration of a sink task's dead letter queue (Connect's
/// `baseProducerConfigs` with client id `connector-dlq-producer-<connector>-<task>`): the
/// settings of [`source_producer_config`], `producer.*` and the connector's
/// `producer.override.*`.
pub fn dlq_producer_config(
    worker: &WorkerConfig,
    connector: &str,
    task: u32,
    connector_overrides: HashMap<String, String>,
) -> Result<ClientConfig, SecurityError> {
    producer_config(
        worker,
        format!("connector-dlq-producer-{connector}-{task}"),
        connector_overrides,
    )
}

/// The admin configuration of a connector's clients (Connect's `Worker.adminConfigs`): the
/// worker's ([`admin_config`]), then the connector's `admin.override.*`.
pub fn connector_admin_config(
    worker: &WorkerConfig,
    connector_overrides: HashMap<String, String>,
) -> Result<ClientConfig, SecurityError> {
    client_config(
        ClientKind::Admin,
        &worker.bootstrap_servers(),
        &[],
        &[
            ("", worker_security_layer(worker)),
            ("admin.", admin_layer(worker)),
            ("admin.override.", connector_overrides),
        ],
    )
}

fn producer_config(
    worker: &WorkerConfig,
    client_id: String,
    connector_overrides: HashMap<String, String>,
) -> Result<ClientConfig, SecurityError> {
    client_config(
        ClientKind::Producer,
        &worker.bootstrap_servers(),
        &[
            ("acks", "all".into()),
            ("partitioner", "murmur2_random".into()),
            ("enable.idempotence", "true".into()),
            ("client.id", client_id),
            ("linger.ms", "5".into()),
            ("statistics.interval.ms", statistics_interval_ms(worker)),
            ("message.timeout.ms", "0".into()),
            ("queue.buffering.max.messages", "1000000".into()),
            (
                "queue.buffering.max.kbytes",
                DEFAULT_PRODUCER_BUFFER_KBYTES.to_string(),
            ),
        ],
        &[
            ("producer.", worker.with_prefix("producer.")),
            ("producer.override.", connector_overrides),
        ],
    )
}

/// librdkafka's `statistics.interval.ms` for task clients: the worker's
/// `metrics.sample.window.ms` (their statistics feed `/metrics`).
fn statistics_interval_ms(worker: &WorkerConfig) -> String {
    let ms = worker.settings().metrics_sample_window.as_millis();
    // librdkafka's maximum is 86400000.
    ms.min(86_400_000).to_string()
}

/// The consumer configuration for a sink task (`Worker.baseConsumerConfigs`): group
/// `connect-<connector>`, no auto commit, `auto.offset.reset=earliest`, client id
/// `connector-consumer-<connector>-<task>`, then `consumer.*`, then `consumer.override.*`.
pub fn sink_consumer_config(
    worker: &WorkerConfig,
    connector: &str,
    task: u32,
    connector_overrides: HashMap<String, String>,
) -> Result<ClientConfig, SecurityError> {
    client_config(
        ClientKind::Consumer,
        &worker.bootstrap_servers(),
        &[
            ("group.id", format!("connect-{connector}")),
            ("enable.auto.commit", "false".into()),
            ("enable.auto.offset.store", "false".into()),
            ("auto.offset.reset", "earliest".into()),
            // Java's consumer lets the broker create a missing subscribed topic.
            ("allow.auto.create.topics", "true".into()),
            // librdkafka stops fetching for up to this long once its queue holds
            // `queued.min.messages`; Java's consumer fetches again as soon as its buffer drains.
            // At the 1 s default a fast sink stalls for most of every second.
            ("fetch.queue.backoff.ms", "10".into()),
            // librdkafka prefetches into a queue per consumer until it holds 100,000 messages
            // or 64 MiB: a sink task behind its topic held about 55 MiB. 4 MiB kept the
            // throughput (bench `sink-memory`, issue #34: 4 tasks draining a backlog peaked
            // at 82 MiB instead of 243 MiB, at the same records/s); Java's consumer buffers
            // one fetch, 1 MiB a partition. `consumer.queued.max.messages.kbytes` overrides it.
            ("queued.max.messages.kbytes", "4096".into()),
            ("statistics.interval.ms", statistics_interval_ms(worker)),
            (
                "client.id",
                format!("connector-consumer-{connector}-{task}"),
            ),
        ],
        &[
            ("consumer.", worker.with_prefix("consumer.")),
            ("consumer.override.", connector_overrides),
        ],
    )
}

/// The worker's `admin.*` client settings, without the worker's own `admin.listeners` keys
/// (KIP-495), which share the prefix but are not client settings.
fn admin_layer(worker: &WorkerConfig) -> HashMap<String, String> {
    worker
        .with_prefix("admin.")
        .into_iter()
        .filter(|(k, _)| k != "listeners" && !k.starts_with("listeners."))
        .collect()
}

/// The admin configuration (`Worker.adminConfigs`, `ConnectUtils.lookupKafkaClusterId`): the
/// worker-level security keys, then `admin.*`, over the worker's bootstrap servers.
pub fn admin_config(worker: &WorkerConfig) -> Result<ClientConfig, SecurityError> {
    client_config(
        ClientKind::Admin,
        &worker.bootstrap_servers(),
        &[],
        &[
            ("", worker_security_layer(worker)),
            ("admin.", admin_layer(worker)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(kind: ClientKind, k: &str, v: &str) -> Vec<(String, String)> {
        translate(kind, k, v)
    }
    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn java_keys_are_mapped_converted_or_dropped() {
        use ClientKind::*;
        assert!(tr(Producer, "key.serializer", "x").is_empty());
        assert!(tr(Consumer, "max.poll.records", "10").is_empty());
        assert_eq!(
            tr(Producer, "max.request.size", "10"),
            pairs(&[("message.max.bytes", "10")])
        );
        assert_eq!(
            tr(Producer, "buffer.memory", "33554432"),
            pairs(&[("queue.buffering.max.kbytes", "32768")])
        );
        assert_eq!(
            tr(Producer, "buffer.memory", "100"),
            pairs(&[("queue.buffering.max.kbytes", "1")])
        );
        assert_eq!(tr(Producer, "linger.ms", "3"), pairs(&[("linger.ms", "3")]));
        assert_eq!(
            tr(Consumer, "metadata.max.age.ms", "2000"),
            pairs(&[
                ("topic.metadata.refresh.interval.ms", "2000"),
                ("metadata.max.age.ms", "6000")
            ])
        );
        assert_eq!(
            tr(Consumer, "fetch.max.wait.ms", "50"),
            pairs(&[("fetch.wait.max.ms", "50")])
        );
        assert_eq!(
            tr(Consumer, "auto.offset.reset", "none"),
            pairs(&[("auto.offset.reset", "error")])
        );
        assert_eq!(
            tr(Consumer, "receive.buffer.bytes", "-1"),
            pairs(&[("socket.receive.buffer.bytes", "0")])
        );
        assert_eq!(
            tr(Producer, "request.timeout.ms", "9000"),
            pairs(&[("request.timeout.ms", "9000")])
        );
        assert_eq!(
            tr(Consumer, "request.timeout.ms", "9000"),
            pairs(&[("socket.timeout.ms", "9000")])
        );
        assert_eq!(
            tr(
                Consumer,
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, org.apache.kafka.clients.consumer.StickyAssignor"
            ),
            pairs(&[("partition.assignment.strategy", "cooperative-sticky")])
        );
        // librdkafka's own keys pass through.
        assert_eq!(
            tr(Consumer, "queued.min.messages", "5"),
            pairs(&[("queued.min.messages", "5")])
        );
    }

    /// Every librdkafka key the table maps to exists in the librdkafka this build links: a
    /// native config answers its default.
    #[test]
    fn every_mapped_key_exists_in_librdkafka() {
        let native = ClientConfig::new().create_native_config().unwrap();
        let mut targets: Vec<&str> = vec![
            "socket.timeout.ms",
            "metadata.max.age.ms",
            "queue.buffering.max.kbytes",
        ];
        for (k, m) in JAVA_CLIENT_KEYS {
            match m {
                KeyMapping::Same => targets.push(k),
                KeyMapping::Renamed(to) | KeyMapping::Converted(to) => targets.push(to),
                KeyMapping::Dropped(_) => {}
            }
        }
        for key in targets {
            // Properties without a default (e.g. transactional.id) answer "unknown" only when
            // the name itself is unknown; set a value to tell them apart.
            if native.get(key).is_err() {
                let mut c = ClientConfig::new();
                c.set(key, "1");
                let err = c
                    .create_native_config()
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                assert!(
                    !err.contains("No such configuration property"),
                    "{key}: {err}"
                );
            }
        }
    }

    /// The linked librdkafka speaks TLS, SCRAM and OAUTHBEARER (built with OpenSSL): a
    /// client for a SASL_SSL cluster can be configured.
    #[test]
    fn librdkafka_is_built_with_tls_and_sasl() {
        let native = ClientConfig::new().create_native_config().unwrap();
        let features = native.get("builtin.features").unwrap();
        for f in ["ssl", "sasl_plain", "sasl_scram", "sasl_oauthbearer"] {
            assert!(
                features.split(',').any(|x| x == f),
                "{f} missing: {features}"
            );
        }
        let mut layer = HashMap::new();
        for (k, v) in [
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
            ),
        ] {
            layer.insert(k.to_string(), v.to_string());
        }
        let cfg = client_config(ClientKind::Producer, "b:1", &[], &[("producer.", layer)]).unwrap();
        cfg.create_native_config().unwrap();
        assert_eq!(cfg.get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(cfg.get("sasl.mechanisms"), Some("SCRAM-SHA-512"));
        assert_eq!(cfg.get("sasl.username"), Some("u"));
        assert_eq!(cfg.get("sasl.jaas.config"), None);
    }

    #[test]
    fn security_errors_name_the_layer_the_key_came_from() {
        let mut worker = HashMap::new();
        worker.insert("security.protocol".to_string(), "SASL_SSL".to_string());
        let mut ovr = HashMap::new();
        ovr.insert("sasl.mechanism".to_string(), "GSSAPI".to_string());
        let e = client_config(
            ClientKind::Consumer,
            "b:1",
            &[],
            &[("consumer.", worker), ("consumer.override.", ovr)],
        )
        .unwrap_err();
        assert_eq!(e.key, "consumer.override.sasl.mechanism");
    }

    #[test]
    fn the_table_has_each_java_key_once() {
        let mut seen = HashSet::new();
        for (k, _) in JAVA_CLIENT_KEYS {
            assert!(seen.insert(*k), "{k} listed twice");
        }
    }

    #[test]
    fn overrides_layer_on_top_of_defaults() {
        let mut o = HashMap::new();
        o.insert("acks".to_string(), "1".to_string());
        let cfg = client_config(
            ClientKind::Producer,
            "b:1",
            &[("acks", "all".into())],
            &[("producer.", o)],
        )
        .unwrap();
        assert_eq!(cfg.get("acks"), Some("1"));
        assert_eq!(cfg.get("bootstrap.servers"), Some("b:1"));
    }

    /// A sink task's consumer prefetches at most 4 MiB (issue #34), unless the worker's
    /// `consumer.*` or the connector's `consumer.override.*` say otherwise.
    #[test]
    fn a_sink_consumer_queues_4_mib_unless_told_otherwise() {
        use crate::config::worker::{WorkerConfig, WorkerMode};
        let worker = |extra: &[(&str, &str)]| {
            let mut m: HashMap<String, String> = [
                ("bootstrap.servers", "b:1"),
                ("offset.storage.file.filename", "/tmp/o"),
            ]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            m.entry("key.converter".into())
                .or_insert("org.apache.kafka.connect.storage.StringConverter".into());
            m.entry("value.converter".into())
                .or_insert("org.apache.kafka.connect.storage.StringConverter".into());
            WorkerConfig::parse(WorkerMode::Standalone, m, "w.properties").unwrap()
        };
        let queued = |w: &WorkerConfig, o: &[(&str, &str)]| {
            let o = o
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            sink_consumer_config(w, "c", 0, o)
                .unwrap()
                .get("queued.max.messages.kbytes")
                .map(str::to_string)
        };
        assert_eq!(queued(&worker(&[]), &[]).as_deref(), Some("4096"));
        let w = worker(&[("consumer.queued.max.messages.kbytes", "65536")]);
        assert_eq!(queued(&w, &[]).as_deref(), Some("65536"));
        assert_eq!(
            queued(&w, &[("queued.max.messages.kbytes", "1024")]).as_deref(),
            Some("1024")
        );
    }
}
