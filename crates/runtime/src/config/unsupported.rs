//! Settings Connect defines that Tributary does not implement yet, found wherever a connector
//! config enters: `POST`/`PUT` and validation (as errors on the key), and the worker when it
//! starts a connector or task from a config that arrived another way (the config topic, written
//! by a Java worker or left by a rolling replacement; a standalone connector file). A connector
//! never runs without a setting it was given: a problem marked fatal fails the connector or
//! task with a message naming the key; the others are settings that have no effect in Connect
//! either on a worker like this one, and are logged once.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use tributary_api::connector::ConnectorType;
use tributary_api::Props;

use super::worker::WorkerConfig;

use super::override_policy::OverridePolicy;

/// What the worker offers the connectors it runs, for the checks below (and its converters,
/// which validation reports as the defaults of the connector-level converter keys).
#[derive(Debug, Clone)]
pub struct WorkerSupport {
    /// Whether connector-specific offsets topics apply (distributed workers; Connect's
    /// standalone worker ignores `offsets.storage.topic`).
    pub connector_offsets_topics: bool,
    /// `connector.client.config.override.policy`.
    pub override_policy: OverridePolicy,
    /// The worker's `key.converter`, `value.converter` and `header.converter` settings.
    pub converters: [Option<String>; 3],
    /// `exactly.once.source.support=enabled` (KIP-618).
    pub exactly_once_source: bool,
    /// Where Connect's file connectors may read and write (issue #42).
    pub file_paths: super::file_connectors::FilePaths,
}

impl WorkerSupport {
    /// The support of a worker with this configuration.
    pub fn of(config: &WorkerConfig) -> WorkerSupport {
        let settings = config.settings();
        WorkerSupport {
            connector_offsets_topics: config.mode == super::worker::WorkerMode::Distributed,
            override_policy: settings.connector_client_config_override_policy.clone(),
            converters: [
                &settings.key_converter,
                &settings.value_converter,
                &settings.header_converter,
            ]
            .map(|c| Some(c.clone())),
            exactly_once_source: settings.exactly_once_source_support().enabled(),
            file_paths: super::file_connectors::FilePaths::of(config),
        }
    }
}

impl Default for WorkerSupport {
    /// A distributed worker with Connect's defaults.
    fn default() -> WorkerSupport {
        WorkerSupport {
            connector_offsets_topics: true,
            override_policy: OverridePolicy::All,
            converters: [None, None, None],
            exactly_once_source: false,
            file_paths: Default::default(),
        }
    }
}

/// One setting a connector config sets that this worker cannot honour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingProblem {
    /// The key, as the config spells it.
    pub key: String,
    /// What is wrong, for a validation error or a FAILED trace.
    pub message: String,
    /// Fatal: the connector must not run with it. Otherwise the setting has no effect (as in
    /// Connect on a worker without the feature) and is logged once.
    pub fatal: bool,
}

fn not_yet(key: &str, value: &str, what: &str) -> SettingProblem {
    SettingProblem {
        key: key.to_string(),
        message: format!(
            "Invalid value {value} for configuration {key}: Tributary does not support {what} yet; remove the setting or run this connector on an Apache Kafka Connect worker"
        ),
        fatal: true,
    }
}

fn set(config: &Props, key: &str) -> Option<String> {
    config
        .get(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The settings of `config` (a connector of `kind`) this worker cannot honour, in key order.
/// Defaults and values that change nothing (`exactly.once.support=requested`,
/// `transaction.boundary=poll`, …) are not problems.
pub fn unsupported_settings(
    config: &Props,
    kind: ConnectorType,
    support: &WorkerSupport,
) -> Vec<SettingProblem> {
    let mut out = Vec::new();
    match kind {
        ConnectorType::Sink => {}
        ConnectorType::Source => {
            // With exactly-once support enabled, `required` is checked against the connector
            // (validation) and every boundary runs (the task refuses what it cannot run).
            if let Some(v) =
                set(config, "exactly.once.support").filter(|_| !support.exactly_once_source)
            {
                if v.eq_ignore_ascii_case("required") {
                    out.push(SettingProblem {
                        key: "exactly.once.support".into(),
                        message: "This worker does not have exactly-once source support enabled."
                            .into(),
                        fatal: true,
                    });
                }
            }
            if let Some(v) =
                set(config, "transaction.boundary").filter(|_| !support.exactly_once_source)
            {
                if !v.eq_ignore_ascii_case("poll") {
                    out.push(SettingProblem {
                        key: "transaction.boundary".into(),
                        message: format!("transaction.boundary={v} has no effect: this worker does not have exactly-once source support enabled"),
                        fatal: false,
                    });
                }
            }
            // Connector-specific offsets topics are read with the worker's clients, on the
            // worker's cluster: a connector producing to another cluster would have Connect
            // keep its offsets there (its own topic, or with exactly-once support the
            // offsets topic name on that cluster).
            let own_offsets_topic = set(config, "offsets.storage.topic");
            if support.connector_offsets_topics
                && (own_offsets_topic.is_some() || support.exactly_once_source)
            {
                if let Some(v) = set(config, "producer.override.bootstrap.servers") {
                    out.push(not_yet(
                        "producer.override.bootstrap.servers",
                        &v,
                        "keeping the source offsets of a connector that produces to another Kafka cluster on that cluster (KIP-618: offsets.storage.topic or exactly-once source support)",
                    ));
                }
            }
        }
    }
    // Only the clients the connector uses are checked, as in Connect: a sink with a dead
    // letter queue uses a producer too.
    let client_prefix = match kind {
        ConnectorType::Source => "producer.override.",
        ConnectorType::Sink => "consumer.override.",
    };
    let dlq_producer =
        kind == ConnectorType::Sink && set(config, "errors.deadletterqueue.topic.name").is_some();
    let mut overrides: Vec<&String> = config
        .keys()
        .filter(|k| {
            k.starts_with(client_prefix)
                || k.starts_with("admin.override.")
                || (dlq_producer && k.starts_with("producer.override."))
        })
        .collect();
    overrides.sort();
    for k in overrides {
        let client_key = k.split_once(".override.").map(|(_, c)| c).unwrap_or("");
        if !support.override_policy.allows(client_key) {
            out.push(SettingProblem {
                key: k.clone(),
                message: format!(
                    "The '{}' policy does not allow '{client_key}' to be overridden in the connector configuration.",
                    support.override_policy.name()
                ),
                fatal: true,
            });
        }
    }
    out
}

/// The message a connector or task fails with when its config has fatal problems: each key
/// with its reason, one per line; `None` when there is none. Non-fatal problems are logged
/// once per connector and key.
pub fn refusal(connector: &str, problems: &[SettingProblem]) -> Option<String> {
    static WARNED: OnceLock<Mutex<HashSet<(String, String)>>> = OnceLock::new();
    let mut fatal = Vec::new();
    for p in problems {
        if p.fatal {
            fatal.push(format!("{}: {}", p.key, p.message));
        } else if WARNED
            .get_or_init(|| Mutex::new(HashSet::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((connector.to_string(), p.key.clone()))
        {
            tracing::warn!(connector, key = %p.key, "{}", p.message);
        }
    }
    (!fatal.is_empty()).then(|| {
        format!(
            "Connector {connector} cannot run on this Tributary worker: its configuration sets what Tributary does not implement:\n{}",
            fatal.join("\n")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    fn keys(p: &[SettingProblem]) -> Vec<(&str, bool)> {
        p.iter().map(|p| (p.key.as_str(), p.fatal)).collect()
    }

    #[test]
    fn defaults_and_neutral_values_are_not_problems() {
        let c = props(&[
            ("transforms", ""),
            ("errors.tolerance", "none"),
            ("errors.retry.timeout", "0"),
            ("errors.log.enable", "false"),
            ("exactly.once.support", "requested"),
            ("transaction.boundary", "poll"),
            ("topic.creation.groups", ""),
            ("producer.override.linger.ms", "5"),
        ]);
        assert!(
            unsupported_settings(&c, ConnectorType::Source, &WorkerSupport::default()).is_empty()
        );
        assert!(
            unsupported_settings(&c, ConnectorType::Sink, &WorkerSupport::default()).is_empty()
        );
    }

    #[test]
    fn every_unimplemented_setting_is_named() {
        let c = props(&[
            // Implemented: transformations, predicates and error handling.
            ("transforms", "a"),
            ("predicates", "p"),
            ("errors.tolerance", "all"),
            ("errors.retry.timeout", "1000"),
            ("errors.log.enable", "true"),
            ("errors.deadletterqueue.topic.name", "dlq"),
            // Implemented: topic creation (KIP-158).
            ("topic.creation.default.partitions", "3"),
            ("exactly.once.support", "required"),
            ("transaction.boundary", "interval"),
            ("offsets.storage.topic", "mine"),
        ]);
        let src = unsupported_settings(&c, ConnectorType::Source, &WorkerSupport::default());
        assert_eq!(
            keys(&src),
            vec![
                ("exactly.once.support", true),
                ("transaction.boundary", false),
            ]
        );
        // Implemented (KIP-618), but only on the worker's own cluster.
        let mut elsewhere = c.clone();
        elsewhere.insert(
            "producer.override.bootstrap.servers".into(),
            "other:9092".into(),
        );
        let src =
            unsupported_settings(&elsewhere, ConnectorType::Source, &WorkerSupport::default());
        assert!(keys(&src).contains(&("producer.override.bootstrap.servers", true)));
        elsewhere.remove("offsets.storage.topic");
        let src =
            unsupported_settings(&elsewhere, ConnectorType::Source, &WorkerSupport::default());
        assert!(!keys(&src)
            .iter()
            .any(|(k, _)| *k == "producer.override.bootstrap.servers"));
        let sink = unsupported_settings(&c, ConnectorType::Sink, &WorkerSupport::default());
        assert!(keys(&sink).is_empty());
        assert!(!keys(&sink)
            .iter()
            .any(|(k, _)| k.starts_with("topic.creation")));
        // Connect ignores offsets.storage.topic on standalone workers.
        let standalone = WorkerSupport {
            connector_offsets_topics: false,
            ..WorkerSupport::default()
        };
        let src = unsupported_settings(&c, ConnectorType::Source, &standalone);
        assert!(!keys(&src)
            .iter()
            .any(|(k, _)| *k == "offsets.storage.topic"));
        let msg = refusal("c", &src).unwrap();
        assert!(
            msg.contains("exactly.once.support: This worker does not have exactly-once source support enabled."),
            "{msg}"
        );
        assert!(!msg.contains("transaction.boundary"), "{msg}");
    }

    #[test]
    fn override_policies_limit_client_overrides() {
        let c = props(&[
            ("producer.override.linger.ms", "5"),
            ("producer.override.sasl.mechanism", "PLAIN"),
            ("consumer.override.fetch.min.bytes", "1"),
        ]);
        let with = |policy| WorkerSupport {
            override_policy: policy,
            ..WorkerSupport::default()
        };
        assert!(
            unsupported_settings(&c, ConnectorType::Source, &with(OverridePolicy::All)).is_empty()
        );
        let p = unsupported_settings(&c, ConnectorType::Source, &with(OverridePolicy::Principal));
        assert_eq!(keys(&p), vec![("producer.override.linger.ms", true)]);
        assert_eq!(
            p[0].message,
            "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration."
        );
        let n = unsupported_settings(&c, ConnectorType::Source, &with(OverridePolicy::None));
        assert_eq!(n.len(), 2);
        // KIP-1188: only the listed keys.
        let allow = OverridePolicy::Allowlist(vec!["linger.ms".into(), "fetch.min.bytes".into()]);
        let a = unsupported_settings(&c, ConnectorType::Source, &with(allow));
        assert_eq!(keys(&a), vec![("producer.override.sasl.mechanism", true)]);
        assert_eq!(
            a[0].message,
            "The 'Allowlist' policy does not allow 'sasl.mechanism' to be overridden in the connector configuration."
        );
        let empty = unsupported_settings(
            &c,
            ConnectorType::Source,
            &with(OverridePolicy::Allowlist(Vec::new())),
        );
        // A source connector's consumer overrides are not its clients' (as with None).
        assert_eq!(empty.len(), 2);
        // A sink's producer overrides count only with a dead letter queue, which uses them.
        let sink = |extra: &[(&str, &str)]| {
            let mut c = c.clone();
            c.extend(props(extra));
            keys(&unsupported_settings(
                &c,
                ConnectorType::Sink,
                &with(OverridePolicy::None),
            ))
            .into_iter()
            .map(|(k, _)| k.to_string())
            .collect::<Vec<_>>()
        };
        assert_eq!(sink(&[]), ["consumer.override.fetch.min.bytes"]);
        assert_eq!(
            sink(&[("errors.deadletterqueue.topic.name", "dlq")]),
            [
                "consumer.override.fetch.min.bytes",
                "producer.override.linger.ms",
                "producer.override.sasl.mechanism"
            ]
        );
        assert_eq!(
            OverridePolicy::parse(
                "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy",
                &[]
            ),
            Ok(OverridePolicy::None)
        );
        assert!(OverridePolicy::parse("Custom", &[]).is_err());
    }
}
