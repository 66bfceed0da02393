//! The Kafka clients MirrorMaker's connectors and tasks open on their own clusters, configured
//! as `MirrorConnectorConfig` builds them from a connector's settings, then translated to
//! librdkafka by the runtime's Java client key table (`tributary_runtime::config::clients`).
//!
//! For a client of role `role` on cluster side `side` (`source` or `target`), of kind `kind`
//! (`consumer`, `producer` or `admin`), the settings are, later ones winning:
//! 1. `<side>.cluster.*`, keeping only `bootstrap.servers` and the security settings
//!    (`MirrorClientConfig`'s client definitions, [`CLIENT_SECURITY_CONFIGS`]);
//! 2. `<kind>.*`;
//! 3. `<side>.<kind>.*`;
//!    (of 2 and 3, not the connector's own settings that share the prefixes:
//!    `consumer.poll.timeout.ms`, `admin.timeout.ms`, Connect's `producer.override.*` and
//!    `admin.override.*`);
//! 4. for a consumer, `enable.auto.commit=false` always and `auto.offset.reset=earliest` unless
//!    set;
//! 5. `client.id` = `[<user's client.id>|]<source alias>-><target alias>|<connector name>|<role>`
//!    (`addClientId`).

use std::collections::HashMap;

use rdkafka::ClientConfig;
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_runtime::config::clients::{client_config, ClientKind};

use crate::maker_config::CLIENT_SECURITY_CONFIGS;

/// `source.cluster.alias`'s default (also what `offset-syncs.topic.location` names for the
/// source cluster).
pub const SOURCE_CLUSTER_ALIAS_DEFAULT: &str = "source";
/// `target.cluster.alias`'s default.
pub const TARGET_CLUSTER_ALIAS_DEFAULT: &str = "target";

/// Which of a flow's two clusters a client talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Source,
    Target,
}

impl Side {
    /// `source` or `target`, as in `source.cluster.bootstrap.servers`.
    pub fn prefix(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }
}

/// A connector's or task's settings, read for its clients.
#[derive(Debug, Clone)]
pub struct MirrorClients<'a> {
    props: &'a Props,
}

impl<'a> MirrorClients<'a> {
    /// The clients of the connector or task configured by `props`.
    pub fn new(props: &'a Props) -> MirrorClients<'a> {
        MirrorClients { props }
    }

    fn alias(&self, key: &str, default: &str) -> String {
        self.props
            .get(key)
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| default.to_string())
    }

    /// `source.cluster.alias` (default `source`).
    pub fn source_alias(&self) -> String {
        self.alias("source.cluster.alias", SOURCE_CLUSTER_ALIAS_DEFAULT)
    }

    /// `target.cluster.alias` (default `target`).
    pub fn target_alias(&self) -> String {
        self.alias("target.cluster.alias", TARGET_CLUSTER_ALIAS_DEFAULT)
    }

    /// The Java client settings of one client, as `MirrorConnectorConfig`'s
    /// `<side><Kind>Config(role)` builds them (see the module's documentation).
    pub fn java_settings(
        &self,
        side: Side,
        kind: ClientKind,
        role: &str,
    ) -> HashMap<String, String> {
        let kind_prefix = match kind {
            ClientKind::Consumer => "consumer.",
            ClientKind::Producer => "producer.",
            ClientKind::Admin => "admin.",
        };
        let cluster_prefix = format!("{}.cluster.", side.prefix());
        let side_kind_prefix = format!("{}.{kind_prefix}", side.prefix());
        let with_prefix = |prefix: &str| -> Vec<(String, String)> {
            self.props
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_string(), v.clone())))
                .collect()
        };
        let mut settings: HashMap<String, String> = with_prefix(&cluster_prefix)
            .into_iter()
            .filter(|(k, _)| {
                k == "bootstrap.servers" || CLIENT_SECURITY_CONFIGS.contains(&k.as_str())
            })
            .collect();
        // Under `consumer.` and `admin.` are MirrorMaker's own settings too, and under
        // `producer.` / `admin.` Connect's `*.override.*`: Java's clients ignore them as unknown
        // keys; librdkafka would refuse them.
        let client_setting = |(k, _): &(String, String)| {
            !(k.starts_with("override.")
                || (kind == ClientKind::Consumer && k == "poll.timeout.ms")
                || (kind == ClientKind::Admin && k == "timeout.ms"))
        };
        settings.extend(with_prefix(kind_prefix).into_iter().filter(client_setting));
        settings.extend(
            with_prefix(&side_kind_prefix)
                .into_iter()
                .filter(client_setting),
        );
        if kind == ClientKind::Consumer {
            settings.insert("enable.auto.commit".into(), "false".into());
            settings
                .entry("auto.offset.reset".into())
                .or_insert_with(|| "earliest".into());
        }
        let label = format!(
            "{}->{}|{}|{role}",
            self.source_alias(),
            self.target_alias(),
            self.props
                .get("name")
                .map(String::as_str)
                .unwrap_or_default()
        );
        let client_id = match settings.get("client.id") {
            Some(user) => format!("{user}|{label}"),
            None => label,
        };
        settings.insert("client.id".into(), client_id);
        settings
    }

    /// The librdkafka configuration of one client (`base` settings first, for the runtime's
    /// defaults of that kind of client). Errors: `<side>.cluster.bootstrap.servers` missing, or
    /// a security setting that cannot be used, named with its prefix.
    pub fn client(
        &self,
        side: Side,
        kind: ClientKind,
        role: &str,
        base: &[(&str, String)],
    ) -> ConnectResult<ClientConfig> {
        let mut settings = self.java_settings(side, kind, role);
        let Some(bootstrap) = settings.remove("bootstrap.servers") else {
            return Err(ConnectError::config(format!(
                "Missing required configuration \"{}.cluster.bootstrap.servers\" which has no default value.",
                side.prefix()
            )));
        };
        client_config(kind, &bootstrap, base, &[("", settings)]).map_err(|e| {
            ConnectError::config(format!(
                "{}.cluster.{}: {}",
                side.prefix(),
                e.key,
                e.message
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_consumer_takes_the_clusters_connection_settings_and_the_prefixed_client_settings() {
        let p = props(&[
            ("name", "mm2"),
            ("admin.timeout.ms", "1000"),
            ("admin.override.request.timeout.ms", "1000"),
            ("source.cluster.alias", "A"),
            ("target.cluster.alias", "B"),
            ("source.cluster.bootstrap.servers", "a:9092"),
            ("source.cluster.security.protocol", "PLAINTEXT"),
            // Not a connection setting: left out, as MirrorClientConfig's definitions do.
            ("source.cluster.max.poll.records", "7"),
            ("consumer.fetch.min.bytes", "10"),
            ("source.consumer.fetch.min.bytes", "20"),
            ("source.consumer.auto.offset.reset", "latest"),
            ("consumer.enable.auto.commit", "true"),
            ("target.consumer.fetch.min.bytes", "30"),
            ("consumer.poll.timeout.ms", "500"),
            ("producer.override.linger.ms", "5"),
        ]);
        let s = MirrorClients::new(&p).java_settings(
            Side::Source,
            ClientKind::Consumer,
            "replication-consumer",
        );
        assert_eq!(s.get("bootstrap.servers").unwrap(), "a:9092");
        assert_eq!(s.get("security.protocol").unwrap(), "PLAINTEXT");
        assert!(!s.contains_key("max.poll.records"));
        assert_eq!(
            s.get("fetch.min.bytes").unwrap(),
            "20",
            "source.consumer.* wins"
        );
        assert_eq!(
            s.get("auto.offset.reset").unwrap(),
            "latest",
            "kept when set"
        );
        assert_eq!(s.get("enable.auto.commit").unwrap(), "false", "always off");
        assert_eq!(s.get("client.id").unwrap(), "A->B|mm2|replication-consumer");
        assert!(!s.contains_key("poll.timeout.ms"), "the task's own setting");
        let admin = MirrorClients::new(&p).java_settings(Side::Source, ClientKind::Admin, "a");
        assert!(!admin
            .keys()
            .any(|k| k == "timeout.ms" || k.starts_with("override.")));
    }

    #[test]
    fn a_users_client_id_comes_first_and_defaults_fill_the_rest() {
        let p = props(&[
            ("name", "m"),
            ("target.cluster.bootstrap.servers", "b:9092"),
            ("producer.client.id", "mine"),
        ]);
        let s = MirrorClients::new(&p).java_settings(
            Side::Target,
            ClientKind::Producer,
            "offset-syncs-target-producer",
        );
        assert_eq!(
            s.get("client.id").unwrap(),
            "mine|source->target|m|offset-syncs-target-producer"
        );
        assert!(!s.contains_key("auto.offset.reset"), "consumers only");
        let e = MirrorClients::new(&p)
            .client(Side::Source, ClientKind::Admin, "x", &[])
            .unwrap_err();
        assert!(
            e.to_string().contains("source.cluster.bootstrap.servers"),
            "{e}"
        );
    }
}
