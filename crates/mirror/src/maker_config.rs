//! MirrorMaker 2's dedicated-mode configuration (`MirrorMakerConfig` of Apache's
//! connect-mirror): an `mm2.properties` file naming clusters (`clusters = A, B`), their
//! connections (`A.bootstrap.servers`), the flows (`A->B.enabled = true`) and settings at every
//! level (top level, per cluster `A.`, per flow `A->B.`), turned into the configuration of the
//! worker and of each connector of every flow exactly as Java computes them.
//!
//! A setting's level decides where it lands:
//! - a cluster's client settings (`A.bootstrap.servers`, `A.security.protocol`, and the
//!   top-level security settings as a fallback) become `producer.`, `consumer.` and `admin.`
//!   settings of that cluster ([`MirrorMakerConfig::cluster_props`]);
//! - a flow's worker (the herder of a target cluster, [`MirrorMakerConfig::worker_config`]) gets
//!   the target cluster's settings and the top-level `offset.storage*`, `config.storage*`,
//!   `status.storage*`, converter, `task*`, `worker*` and `replication.policy*` settings, with
//!   Java's defaults (group `<source>-mm2`, topics `mm2-offsets.<source>.internal`, …,
//!   ByteArrayConverter);
//! - a flow's connectors ([`MirrorMakerConfig::connector_base_config`]) get the top-level
//!   settings their config definitions know, the source and target clusters' settings as
//!   `source.cluster.*` / `target.cluster.*` (clients' as `source.consumer.*`, …), and the
//!   flow's own `A->B.*` settings last.
//!
//! `conformance/java/MirrorVectors.java` checks every map against Apache's class.

use std::collections::{BTreeMap, BTreeSet};

use tributary_api::Props;

/// `clusters`: the cluster aliases.
pub const CLUSTERS_CONFIG: &str = "clusters";
/// `config.providers`: Java config providers (not supported natively in dedicated mode).
pub const CONFIG_PROVIDERS_CONFIG: &str = "config.providers";
/// `emit.heartbeats.enabled`: whether a flow emits heartbeats (default true), so a flow that is
/// not enabled still runs its heartbeat connector.
pub const EMIT_HEARTBEATS_ENABLED_CONFIG: &str = "emit.heartbeats.enabled";
/// `dedicated.mode.enable.internal.rest`: KIP-710's internal REST server (BOOLEAN, default
/// false).
pub const ENABLE_INTERNAL_REST_CONFIG: &str = "dedicated.mode.enable.internal.rest";
/// The converter MirrorMaker's workers default to.
pub const BYTE_ARRAY_CONVERTER: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// The three connectors of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MirrorConnector {
    Source,
    Checkpoint,
    Heartbeat,
}

impl MirrorConnector {
    /// Every connector, in the order Java's `MirrorHerder` starts them.
    pub const ALL: [MirrorConnector; 3] = [
        MirrorConnector::Source,
        MirrorConnector::Checkpoint,
        MirrorConnector::Heartbeat,
    ];

    /// The connector's class name.
    pub fn class(self) -> &'static str {
        match self {
            MirrorConnector::Source => "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            MirrorConnector::Checkpoint => {
                "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
            }
            MirrorConnector::Heartbeat => {
                "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
            }
        }
    }

    /// The class's simple name, the connector's default name.
    pub fn simple_name(self) -> &'static str {
        self.class().rsplit('.').next().unwrap_or_default()
    }
}

/// The client security settings MirrorMaker copies into clients: `security.protocol` and the
/// SSL and SASL settings of Kafka 4.4's clients (`MirrorClientConfig`'s definitions, with
/// `bootstrap.servers`).
pub const CLIENT_SECURITY_CONFIGS: &[&str] = &[
    "sasl.client.callback.handler.class",
    "sasl.jaas.config",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.mechanism",
    "sasl.oauthbearer.allow.unverified.audience",
    "sasl.oauthbearer.allow.unverified.issuer",
    "sasl.oauthbearer.assertion.algorithm",
    "sasl.oauthbearer.assertion.claim.aud",
    "sasl.oauthbearer.assertion.claim.exp.seconds",
    "sasl.oauthbearer.assertion.claim.iss",
    "sasl.oauthbearer.assertion.claim.jti.include",
    "sasl.oauthbearer.assertion.claim.nbf.seconds",
    "sasl.oauthbearer.assertion.claim.sub",
    "sasl.oauthbearer.assertion.file",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.template.file",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.header.urlencode",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwt.retriever.class",
    "sasl.oauthbearer.jwt.validator.class",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url",
    "security.protocol",
    "ssl.cipher.suites",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class",
    "ssl.key.password",
    "ssl.keymanager.algorithm",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.type",
    "ssl.protocol",
    "ssl.provider",
    "ssl.secure.random.implementation",
    "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
];

/// Every setting the three connectors define other than [`CLIENT_SECURITY_CONFIGS`] (Connect's
/// connector settings and MirrorMaker's): the top-level settings a flow's connectors inherit.
pub const CONNECTOR_CONFIGS: &[&str] = &[
    "admin.timeout.ms",
    "checkpoints.topic.replication.factor",
    "config.action.reload",
    "config.properties.exclude",
    "config.property.filter.class",
    "config.providers",
    "connector.class",
    "connector.plugin.version",
    "consumer.poll.timeout.ms",
    "emit.checkpoints.enabled",
    "emit.checkpoints.interval.seconds",
    "emit.heartbeats.enabled",
    "emit.heartbeats.interval.seconds",
    "emit.offset-syncs.enabled",
    "enabled",
    "errors.log.enable",
    "errors.log.include.messages",
    "errors.retry.delay.max.ms",
    "errors.retry.timeout",
    "errors.tolerance",
    "forwarding.admin.class",
    "group.filter.class",
    "groups",
    "groups.exclude",
    "header.converter",
    "header.converter.plugin.version",
    "heartbeats.replication.enabled",
    "heartbeats.topic.replication.factor",
    "key.converter",
    "key.converter.plugin.version",
    "metric.names.formats",
    "metric.reporters",
    "name",
    "offset-syncs.topic.location",
    "offset-syncs.topic.replication.factor",
    "offset.lag.max",
    "predicates",
    "refresh.groups.enabled",
    "refresh.groups.interval.seconds",
    "refresh.topics.enabled",
    "refresh.topics.interval.seconds",
    "replication.factor",
    "replication.policy.class",
    "replication.policy.internal.topic.separator.enabled",
    "replication.policy.separator",
    "source.cluster.alias",
    "sync.group.offsets.enabled",
    "sync.group.offsets.interval.seconds",
    "sync.topic.acls.enabled",
    "sync.topic.acls.interval.seconds",
    "sync.topic.configs.enabled",
    "sync.topic.configs.interval.seconds",
    "target.cluster.alias",
    "tasks.max",
    "tasks.max.enforce",
    "topic.filter.class",
    "topics",
    "topics.exclude",
    "transforms",
    "value.converter",
    "value.converter.plugin.version",
];

/// A parsed `mm2.properties`.
#[derive(Debug, Clone)]
pub struct MirrorMakerConfig {
    raw: Props,
    clusters: Vec<String>,
}

impl MirrorMakerConfig {
    /// Reads `props` (an `mm2.properties` file's entries). Errors as Java's: `clusters` missing
    /// (`Missing required configuration "clusters" which has no default value.`) or with an
    /// empty item, `security.protocol` not a protocol, `dedicated.mode.enable.internal.rest` not
    /// a boolean; and `config.providers`, which Tributary's dedicated mode does not support yet.
    /// Other settings are checked where they are used (the workers', the connectors').
    pub fn parse(props: Props) -> Result<MirrorMakerConfig, String> {
        let Some(clusters) = props.get(CLUSTERS_CONFIG) else {
            return Err(format!(
                "Missing required configuration \"{CLUSTERS_CONFIG}\" which has no default value."
            ));
        };
        let clusters = super::config_list(CLUSTERS_CONFIG, clusters)?;
        if let Some(protocol) = props.get("security.protocol") {
            const PROTOCOLS: [&str; 4] = ["SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"];
            if !PROTOCOLS.iter().any(|p| p.eq_ignore_ascii_case(protocol)) {
                return Err(format!(
                    "Invalid value {protocol} for configuration security.protocol: String must be \
                     one of (case insensitive): {}",
                    PROTOCOLS.join(", ")
                ));
            }
        }
        if let Some(v) = props.get(ENABLE_INTERNAL_REST_CONFIG) {
            super::config_bool(ENABLE_INTERNAL_REST_CONFIG, v)?;
        }
        if props
            .get(CONFIG_PROVIDERS_CONFIG)
            .is_some_and(|v| !v.trim().is_empty())
        {
            return Err(format!(
                "{CONFIG_PROVIDERS_CONFIG}: config providers are not supported by Tributary's \
                 MirrorMaker dedicated mode yet"
            ));
        }
        Ok(MirrorMakerConfig {
            raw: props,
            clusters,
        })
    }

    /// A setting of the file as written (no level resolved).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.raw.get(key).map(String::as_str)
    }

    /// Every setting of the file as written.
    pub fn settings(&self) -> &Props {
        &self.raw
    }

    /// The cluster aliases, each once.
    pub fn clusters(&self) -> &[String] {
        &self.clusters
    }

    /// The flows `(source, target)` that run (`clusterPairs`): those enabled
    /// (`A->B.enabled=true`) and those emitting heartbeats (`emit.heartbeats.enabled`, top
    /// level or `A->B.`, default true), which is every pair unless heartbeats are turned off.
    /// Sorted (Java lists them in its `HashSet`'s order, which nothing depends on).
    pub fn cluster_pairs(&self) -> Vec<(String, String)> {
        let global_heartbeats = self
            .raw
            .get(EMIT_HEARTBEATS_ENABLED_CONFIG)
            .is_none_or(|v| java_bool(v));
        let mut pairs = Vec::new();
        for source in &self.clusters {
            for target in &self.clusters {
                if source == target {
                    continue;
                }
                let prefix = format!("{source}->{target}.");
                let enabled = self
                    .raw
                    .get(&format!("{prefix}enabled"))
                    .is_some_and(|v| java_bool(v));
                let heartbeats = self
                    .raw
                    .get(&format!("{prefix}{EMIT_HEARTBEATS_ENABLED_CONFIG}"))
                    .map_or(global_heartbeats, |v| java_bool(v));
                if enabled || heartbeats {
                    pairs.push((source.clone(), target.clone()));
                }
            }
        }
        pairs.sort();
        pairs
    }

    /// Cluster `cluster`'s settings (`clusterProps`): its `<cluster>.` settings stripped of
    /// the prefix, with each client security setting (and `bootstrap.servers`) also as a
    /// `producer.`, `consumer.` and `admin.` setting where not set there, then the top-level
    /// ones of those where not set at the cluster's level.
    pub fn cluster_props(&self, cluster: &str) -> Props {
        let mut props = stripped(&self.raw, &format!("{cluster}."));
        let client_keys =
            std::iter::once("bootstrap.servers").chain(CLIENT_SECURITY_CONFIGS.iter().copied());
        for k in client_keys.clone() {
            if let Some(v) = props.get(k).cloned() {
                for p in ["producer.", "consumer.", "admin."] {
                    props.entry(format!("{p}{k}")).or_insert_with(|| v.clone());
                }
            }
        }
        for k in client_keys {
            if let Some(v) = self.raw.get(k) {
                for p in ["producer.", "consumer.", "admin.", ""] {
                    props.entry(format!("{p}{k}")).or_insert_with(|| v.clone());
                }
            }
        }
        props
    }

    /// The worker configuration of flow `source`->`target` (`workerConfig`): the herder of the
    /// target cluster that runs the flow's connectors.
    pub fn worker_config(&self, source: &str, target: &str) -> Props {
        let mut props = self.cluster_props(target);
        for prefix in [
            "offset.storage",
            "config.storage",
            "status.storage",
            "key.converter",
            "value.converter",
            "header.converter",
            "task",
            "worker",
            "replication.policy",
            CONFIG_PROVIDERS_CONFIG,
        ] {
            props.extend(with_prefix(&self.raw, prefix));
        }
        let defaults = [
            ("client.id", format!("{source}->{target}")),
            ("group.id", format!("{source}-mm2")),
            (
                "offset.storage.topic",
                format!("mm2-offsets.{source}.internal"),
            ),
            (
                "status.storage.topic",
                format!("mm2-status.{source}.internal"),
            ),
            (
                "config.storage.topic",
                format!("mm2-configs.{source}.internal"),
            ),
            ("key.converter", BYTE_ARRAY_CONVERTER.to_string()),
            ("value.converter", BYTE_ARRAY_CONVERTER.to_string()),
            ("header.converter", BYTE_ARRAY_CONVERTER.to_string()),
        ];
        for (k, v) in defaults {
            props.entry(k.to_string()).or_insert(v);
        }
        props
    }

    /// The configuration of `connector` in flow `source`->`target` (`connectorBaseConfig`).
    pub fn connector_base_config(
        &self,
        source: &str,
        target: &str,
        connector: MirrorConnector,
    ) -> Props {
        let names: BTreeSet<&str> = CONNECTOR_CONFIGS
            .iter()
            .chain(CLIENT_SECURITY_CONFIGS)
            .copied()
            .collect();
        let mut props: Props = self
            .raw
            .iter()
            .filter(|(k, _)| names.contains(k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        props.extend(with_prefix(&self.raw, CONFIG_PROVIDERS_CONFIG));
        props.extend(with_prefix(&self.raw, "replication.policy"));
        for (cluster, cluster_prefix, client_prefix) in [
            (source, "source.cluster.", "source."),
            (target, "target.cluster.", "target."),
        ] {
            for (k, v) in self.cluster_props(cluster) {
                let client = ["consumer", "producer", "admin"]
                    .iter()
                    .any(|p| k.starts_with(p));
                let prefix = if client {
                    client_prefix
                } else {
                    cluster_prefix
                };
                props.insert(format!("{prefix}{k}"), v);
            }
        }
        let defaults = [
            ("name", connector.simple_name().to_string()),
            ("connector.class", connector.class().to_string()),
            ("source.cluster.alias", source.to_string()),
            ("target.cluster.alias", target.to_string()),
        ];
        for (k, v) in defaults {
            props.entry(k.to_string()).or_insert(v);
        }
        props.extend(stripped(&self.raw, &format!("{source}->{target}.")));
        props
            .entry("enabled".to_string())
            .or_insert_with(|| "false".to_string());
        props
    }
}

/// Java's `Boolean.parseBoolean`: `true` in any case, anything else false.
fn java_bool(v: &str) -> bool {
    v.eq_ignore_ascii_case("true")
}

/// The entries whose key starts with `prefix` and is longer, with `prefix` removed (Kafka's
/// `Utils.entriesWithPrefix(map, prefix)`).
fn stripped(raw: &Props, prefix: &str) -> Props {
    raw.iter()
        .filter(|(k, _)| k.len() > prefix.len() && k.starts_with(prefix))
        .map(|(k, v)| (k[prefix.len()..].to_string(), v.clone()))
        .collect()
}

/// The entries whose key starts with `prefix` (or is `prefix`), keys kept.
fn with_prefix(raw: &Props, prefix: &str) -> BTreeMap<String, String> {
    raw.iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> MirrorMakerConfig {
        let props: Props = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        MirrorMakerConfig::parse(props).unwrap()
    }

    #[test]
    fn every_pair_runs_for_heartbeats_unless_they_are_off() {
        let c = parse("clusters=A, B\nA.bootstrap.servers=a:9092\nB.bootstrap.servers=b:9092\nA->B.enabled=true");
        assert_eq!(
            c.cluster_pairs(),
            [("A".into(), "B".into()), ("B".into(), "A".into())]
        );
        let c = parse("clusters=A, B\nemit.heartbeats.enabled=false\nA->B.enabled=true");
        assert_eq!(c.cluster_pairs(), [("A".into(), "B".into())]);
    }

    #[test]
    fn a_flow_gets_its_clusters_and_its_own_settings() {
        let c = parse(
            "clusters=A, B\nA.bootstrap.servers=a:9092\nB.bootstrap.servers=b:9092\n\
             A->B.enabled=true\nA->B.topics=orders.*\ntopics=ignored\nsecurity.protocol=SSL",
        );
        let w = c.worker_config("A", "B");
        assert_eq!(w["bootstrap.servers"], "b:9092");
        assert_eq!(w["group.id"], "A-mm2");
        assert_eq!(w["offset.storage.topic"], "mm2-offsets.A.internal");
        assert_eq!(w["security.protocol"], "SSL");
        let s = c.connector_base_config("A", "B", MirrorConnector::Source);
        assert_eq!(s["topics"], "orders.*", "the flow's setting wins");
        assert_eq!(s["source.cluster.bootstrap.servers"], "a:9092");
        assert_eq!(s["source.consumer.bootstrap.servers"], "a:9092");
        assert_eq!(s["target.admin.bootstrap.servers"], "b:9092");
        assert_eq!(s["name"], "MirrorSourceConnector");
        assert_eq!(s["enabled"], "true");
        let b = c.connector_base_config("B", "A", MirrorConnector::Heartbeat);
        assert_eq!(b["enabled"], "false");
    }

    #[test]
    fn clusters_are_required() {
        let e = MirrorMakerConfig::parse(Props::new()).unwrap_err();
        assert_eq!(
            e,
            "Missing required configuration \"clusters\" which has no default value."
        );
    }
}
