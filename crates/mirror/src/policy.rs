//! MirrorMaker 2's replication policies (`ReplicationPolicy` of Apache's connect-mirror-client):
//! the name a replicated topic gets on the target cluster, the source cluster read back from a
//! name, and the names of MirrorMaker's internal topics.
//!
//! Two policies, as Apache ships them:
//! - [`PolicyKind::Default`] (`DefaultReplicationPolicy`): a remote topic is
//!   `<source alias><separator><topic>` (`A.orders`), the separator `.` unless
//!   `replication.policy.separator` says otherwise;
//! - [`PolicyKind::Identity`] (`IdentityReplicationPolicy`): topics keep their names, except
//!   heartbeat topics (names ending in `heartbeats`), which are named as the default policy
//!   names them so that heartbeats still trace the path they travelled.
//!
//! Every method answers exactly as the Java class does for the same configuration, edge cases
//! included (`conformance/java/MirrorVectors.java` checks them against Apache's classes). One
//! extension: `replication.policy.class` also accepts the two classes' simple names.

use tributary_api::Props;

/// `replication.policy.class`: the policy's class.
pub const POLICY_CLASS_CONFIG: &str = "replication.policy.class";
/// `replication.policy.separator`: what joins a source alias and a topic (default `.`).
pub const SEPARATOR_CONFIG: &str = "replication.policy.separator";
/// `replication.policy.internal.topic.separator.enabled`: whether internal topic names use the
/// configured separator too (default true); read only where the separator is configured, as
/// Java reads it.
pub const INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG: &str =
    "replication.policy.internal.topic.separator.enabled";
/// The default policy's class.
pub const DEFAULT_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
/// The identity policy's class.
pub const IDENTITY_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";
/// The separator when none is configured.
pub const SEPARATOR_DEFAULT: &str = ".";
/// The heartbeats topic's name (before a policy prefixes it with source aliases).
pub const HEARTBEATS_TOPIC: &str = "heartbeats";

/// Which policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyKind {
    /// `DefaultReplicationPolicy`.
    Default,
    /// `IdentityReplicationPolicy`, with the source cluster it names as every topic's source
    /// (its `source.cluster.alias` setting; `None` when the settings lack it).
    Identity {
        source_cluster_alias: Option<String>,
    },
}

/// A configured replication policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicationPolicy {
    kind: PolicyKind,
    separator: String,
    internal_separator_enabled: bool,
}

impl Default for ReplicationPolicy {
    /// The default policy with the default separator.
    fn default() -> Self {
        ReplicationPolicy {
            kind: PolicyKind::Default,
            separator: SEPARATOR_DEFAULT.to_string(),
            internal_separator_enabled: true,
        }
    }
}

impl ReplicationPolicy {
    /// The policy named by `replication.policy.class` in `props` (the default policy when the
    /// key is absent; the class's simple name is accepted too), configured from `props` as
    /// Java configures it with a connector's settings: `replication.policy.separator` when
    /// present, `replication.policy.internal.topic.separator.enabled` only alongside it (any
    /// value but `true`, in any case, turns it off), and for the identity policy
    /// `source.cluster.alias`. Errors name the key of a class that is neither policy (a custom
    /// Java policy class is not supported natively).
    pub fn from_props(props: &Props) -> Result<ReplicationPolicy, String> {
        let class = props
            .get(POLICY_CLASS_CONFIG)
            .map(|c| c.trim())
            .unwrap_or(DEFAULT_POLICY_CLASS);
        let kind = match class {
            DEFAULT_POLICY_CLASS | "DefaultReplicationPolicy" => PolicyKind::Default,
            IDENTITY_POLICY_CLASS | "IdentityReplicationPolicy" => PolicyKind::Identity {
                source_cluster_alias: props.get("source.cluster.alias").cloned(),
            },
            other => {
                return Err(format!(
                    "{POLICY_CLASS_CONFIG}={other}: Tributary's native MirrorMaker supports \
                     {DEFAULT_POLICY_CLASS} and {IDENTITY_POLICY_CLASS}; run Apache's Java \
                     connectors (connector.plugin.version) for another policy"
                ))
            }
        };
        let mut policy = ReplicationPolicy {
            kind,
            ..ReplicationPolicy::default()
        };
        if let Some(separator) = props.get(SEPARATOR_CONFIG) {
            policy.separator = separator.clone();
            if let Some(enabled) = props.get(INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG) {
                policy.internal_separator_enabled = enabled.eq_ignore_ascii_case("true");
            }
        }
        Ok(policy)
    }

    /// Which policy this is.
    pub fn kind(&self) -> &PolicyKind {
        &self.kind
    }

    /// The separator between a source alias and a topic.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// The name `topic` of cluster `source_cluster_alias` gets on the target
    /// (`formatRemoteTopic`).
    pub fn format_remote_topic(&self, source_cluster_alias: &str, topic: &str) -> String {
        match &self.kind {
            PolicyKind::Identity { .. } if !looks_like_heartbeat(topic) => topic.to_string(),
            _ => format!("{source_cluster_alias}{}{topic}", self.separator),
        }
    }

    /// The cluster `topic` was replicated from, `None` for a topic that is not remote
    /// (`topicSource`).
    pub fn topic_source(&self, topic: &str) -> Option<String> {
        match &self.kind {
            PolicyKind::Identity {
                source_cluster_alias,
            } if !looks_like_heartbeat(topic) => source_cluster_alias.clone(),
            _ => {
                let parts = java_split(topic, &self.separator);
                if parts.len() < 2 {
                    None
                } else {
                    Some(parts[0].to_string())
                }
            }
        }
    }

    /// The name `topic` had on the cluster it was replicated from, `None` for a topic that is
    /// not remote (`upstreamTopic`).
    pub fn upstream_topic(&self, topic: &str) -> Option<String> {
        match &self.kind {
            PolicyKind::Identity { .. } if !looks_like_heartbeat(topic) => Some(topic.to_string()),
            _ => {
                // The source is everything before the first separator, so the rest follows it.
                let source = self.topic_source(topic)?;
                topic
                    .get(source.len() + self.separator.len()..)
                    .map(str::to_string)
            }
        }
    }

    /// The name `topic` had where it was first written, following its upstream names back
    /// through every hop (`originalTopic`).
    pub fn original_topic(&self, topic: &str) -> String {
        let mut current = topic.to_string();
        loop {
            match self.upstream_topic(&current) {
                Some(upstream) if upstream != current => current = upstream,
                _ => return current,
            }
        }
    }

    /// The heartbeats topic (`heartbeats`).
    pub fn heartbeats_topic(&self) -> &'static str {
        HEARTBEATS_TOPIC
    }

    /// The separator of internal topic names: the configured one, or `.` where
    /// `replication.policy.internal.topic.separator.enabled=false`.
    fn internal_separator(&self) -> &str {
        if self.internal_separator_enabled {
            &self.separator
        } else {
            "."
        }
    }

    /// The offset-syncs topic of cluster `cluster_alias` (`mm2-offset-syncs.<alias>.internal`).
    pub fn offset_syncs_topic(&self, cluster_alias: &str) -> String {
        let s = self.internal_separator();
        format!("mm2-offset-syncs{s}{cluster_alias}{s}internal")
    }

    /// The checkpoints topic of cluster `cluster_alias` (`<alias>.checkpoints.internal`).
    pub fn checkpoints_topic(&self, cluster_alias: &str) -> String {
        let s = self.internal_separator();
        format!("{cluster_alias}{s}checkpoints{s}internal")
    }

    /// Whether `topic` is a heartbeats topic, replicated or not (`isHeartbeatsTopic`).
    pub fn is_heartbeats_topic(&self, topic: &str) -> bool {
        self.original_topic(topic) == HEARTBEATS_TOPIC
    }

    /// Whether `topic` is a checkpoints topic (`isCheckpointsTopic`).
    pub fn is_checkpoints_topic(&self, topic: &str) -> bool {
        let s = self.internal_separator();
        topic.ends_with(&format!("{s}checkpoints{s}internal"))
    }

    /// Whether `topic` is one of MirrorMaker's internal topics (`isMM2InternalTopic`): an
    /// offset-syncs-like name (`mm2…` ending in `<separator>internal`) or a checkpoints topic.
    pub fn is_mm2_internal_topic(&self, topic: &str) -> bool {
        (topic.starts_with("mm2")
            && topic.ends_with(&format!("{}internal", self.internal_separator())))
            || self.is_checkpoints_topic(topic)
    }

    /// Whether `topic` is internal to Kafka or MirrorMaker and so never replicated
    /// (`isInternalTopic`, Connect 4.x): names starting with `__` or `.`, and MirrorMaker's own.
    pub fn is_internal_topic(&self, topic: &str) -> bool {
        topic.starts_with("__") || topic.starts_with('.') || self.is_mm2_internal_topic(topic)
    }
}

/// Whether the identity policy treats `topic` as a heartbeats topic (a name ending in
/// `heartbeats`).
fn looks_like_heartbeat(topic: &str) -> bool {
    topic.ends_with(HEARTBEATS_TOPIC)
}

/// `topic` split around `separator` as Java's `Pattern.split` (limit 0) splits it around a
/// quoted pattern: no match gives the whole input; otherwise trailing empty strings are
/// dropped. An empty separator matches between every two characters.
fn java_split<'a>(topic: &'a str, separator: &str) -> Vec<&'a str> {
    let mut parts: Vec<&str> = if separator.is_empty() {
        topic
            .char_indices()
            .map(|(i, c)| &topic[i..i + c.len_utf8()])
            .collect()
    } else {
        if !topic.contains(separator) {
            return vec![topic];
        }
        topic.split(separator).collect()
    };
    if parts.is_empty() {
        return vec![topic];
    }
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
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
    fn the_default_policy_prefixes_the_source_alias() {
        let p = ReplicationPolicy::default();
        assert_eq!(p.format_remote_topic("A", "orders"), "A.orders");
        assert_eq!(p.topic_source("A.orders").as_deref(), Some("A"));
        assert_eq!(p.upstream_topic("B.A.orders").as_deref(), Some("A.orders"));
        assert_eq!(p.original_topic("B.A.orders"), "orders");
        assert_eq!(p.topic_source("orders"), None);
        assert_eq!(p.upstream_topic("orders"), None);
        // Java drops trailing empty parts: `A.` is not remote, `.x` comes from "".
        assert_eq!(p.topic_source("A."), None);
        assert_eq!(p.topic_source(".x").as_deref(), Some(""));
        assert!(p.is_heartbeats_topic("B.A.heartbeats"));
        assert!(!p.is_heartbeats_topic("A.heartbeats2"));
        assert_eq!(p.offset_syncs_topic("A"), "mm2-offset-syncs.A.internal");
        assert_eq!(p.checkpoints_topic("A"), "A.checkpoints.internal");
    }

    #[test]
    fn a_custom_separator_applies_to_internal_topics_unless_disabled() {
        let p = ReplicationPolicy::from_props(&props(&[(SEPARATOR_CONFIG, "_")])).unwrap();
        assert_eq!(p.format_remote_topic("A", "orders"), "A_orders");
        assert_eq!(p.checkpoints_topic("A"), "A_checkpoints_internal");
        let p = ReplicationPolicy::from_props(&props(&[
            (SEPARATOR_CONFIG, "_"),
            (INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG, "FALSE"),
        ]))
        .unwrap();
        assert_eq!(p.checkpoints_topic("A"), "A.checkpoints.internal");
        assert_eq!(p.format_remote_topic("A", "orders"), "A_orders");
        // Without a separator the flag is not read at all.
        let p = ReplicationPolicy::from_props(&props(&[(
            INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG,
            "false",
        )]))
        .unwrap();
        assert_eq!(p, ReplicationPolicy::default());
    }

    #[test]
    fn the_identity_policy_keeps_names_but_prefixes_heartbeats() {
        let p = ReplicationPolicy::from_props(&props(&[
            (POLICY_CLASS_CONFIG, IDENTITY_POLICY_CLASS),
            ("source.cluster.alias", "A"),
        ]))
        .unwrap();
        assert_eq!(p.format_remote_topic("A", "orders"), "orders");
        assert_eq!(p.topic_source("orders").as_deref(), Some("A"));
        assert_eq!(p.original_topic("orders"), "orders");
        assert_eq!(p.format_remote_topic("A", "heartbeats"), "A.heartbeats");
        assert_eq!(p.topic_source("A.heartbeats").as_deref(), Some("A"));
    }

    #[test]
    fn another_policy_class_is_refused_naming_the_key() {
        let e = ReplicationPolicy::from_props(&props(&[(POLICY_CLASS_CONFIG, "com.example.P")]))
            .unwrap_err();
        assert!(
            e.starts_with("replication.policy.class=com.example.P"),
            "{e}"
        );
    }
}
