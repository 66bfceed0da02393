//! Topic creation by source connectors (KIP-158; Connect's `SourceConnectorConfig`,
//! `TopicCreationConfig`, `TopicCreationGroup` and `TopicCreation`): the connector's
//! `topic.creation.groups`, and per group `topic.creation.<group>.include` / `.exclude`
//! (lists of regular expressions matched against the whole topic name; exclusion wins),
//! `.replication.factor` (SHORT: positive or -1, the broker's default), `.partitions` (INT:
//! positive or -1) and any other key, passed on as a topic config. The `default` group always
//! exists, takes every topic no other group takes, and must set `replication.factor` and
//! `partitions`; other groups inherit those two from it.
//!
//! As in Connect 4.1.1 these settings apply only when the worker has `topic.creation.enable`
//! (default true) and the connector sets some `topic.creation.` key; they are not checked by
//! `…/config/validate` but when the connector and its tasks start, which fail with Connect's
//! `ConfigException` message.

use std::collections::BTreeMap;

use regex::Regex;
use tributary_api::Props;

use super::SettingError;

/// Key prefix of every topic creation setting.
pub const TOPIC_CREATION_PREFIX: &str = "topic.creation.";
/// `topic.creation.groups`.
pub const TOPIC_CREATION_GROUPS: &str = "topic.creation.groups";
/// The group that always exists.
pub const DEFAULT_GROUP: &str = "default";

/// One group's settings, ready to create topics with.
#[derive(Debug, Clone)]
pub struct TopicCreationGroup {
    /// The group's name (`default` or an alias of `topic.creation.groups`).
    pub name: String,
    include: Regex,
    exclude: Regex,
    /// Partitions of a new topic; -1: the broker's default.
    pub partitions: i32,
    /// Replication factor of a new topic; -1: the broker's default.
    pub replication_factor: i16,
    /// Other topic configs (`cleanup.policy`, `retention.ms`, …), as written.
    pub configs: BTreeMap<String, String>,
}

impl TopicCreationGroup {
    /// Whether the group takes `topic`: an inclusion pattern matches the whole name and no
    /// exclusion pattern does.
    pub fn matches(&self, topic: &str) -> bool {
        !self.exclude.is_match(topic) && self.include.is_match(topic)
    }
}

/// A source connector's topic creation rules (Connect's `TopicCreation`).
#[derive(Debug, Clone)]
pub struct TopicCreation {
    /// The `default` group.
    pub default_group: TopicCreationGroup,
    /// The other groups, in `topic.creation.groups` order.
    pub groups: Vec<TopicCreationGroup>,
}

impl TopicCreation {
    /// The rules of a source connector's config: `Ok(None)` when the worker disables topic
    /// creation or the config sets no `topic.creation.` key. `Err` is Connect's
    /// `ConfigException` message for the first bad or missing setting, in Connect's order.
    pub fn from_config(
        config: &Props,
        worker_enabled: bool,
    ) -> Result<Option<TopicCreation>, SettingError> {
        if !worker_enabled || !config.keys().any(|k| k.starts_with(TOPIC_CREATION_PREFIX)) {
            return Ok(None);
        }
        // The default group: its include and exclude are checked for presence only (the
        // default group takes every topic, whatever they say).
        let rf_key = format!("{TOPIC_CREATION_PREFIX}{DEFAULT_GROUP}.replication.factor");
        let p_key = format!("{TOPIC_CREATION_PREFIX}{DEFAULT_GROUP}.partitions");
        let default_rf = replication_factor(&rf_key, config.get(&rf_key), None)?;
        let default_partitions = partitions(&p_key, config.get(&p_key), None)?;
        let mut aliases: Vec<String> = Vec::new();
        for alias in list(config.get(TOPIC_CREATION_GROUPS)) {
            if alias == DEFAULT_GROUP {
                tracing::warn!(
                    "'{DEFAULT_GROUP}' topic creation group always exists and does not need to be listed explicitly"
                );
                continue;
            }
            if !aliases.contains(&alias) {
                aliases.push(alias);
            }
        }
        let mut groups = Vec::new();
        for alias in &aliases {
            let prefix = format!("{TOPIC_CREATION_PREFIX}{alias}.");
            let include = regex_list(&format!("{prefix}include"), config)?;
            let exclude = regex_list(&format!("{prefix}exclude"), config)?;
            let rf_key = format!("{prefix}replication.factor");
            let p_key = format!("{prefix}partitions");
            groups.push(TopicCreationGroup {
                name: alias.clone(),
                include,
                exclude,
                replication_factor: replication_factor(
                    &rf_key,
                    config.get(&rf_key),
                    Some(default_rf),
                )?,
                partitions: partitions(&p_key, config.get(&p_key), Some(default_partitions))?,
                configs: other_configs(config, &prefix),
            });
        }
        let default_prefix = format!("{TOPIC_CREATION_PREFIX}{DEFAULT_GROUP}.");
        Ok(Some(TopicCreation {
            default_group: TopicCreationGroup {
                name: DEFAULT_GROUP.into(),
                include: Regex::new("^(?:.*)$").expect("a valid pattern"),
                exclude: Regex::new("^(?:)$").expect("a valid pattern"),
                partitions: default_partitions,
                replication_factor: default_rf,
                configs: other_configs(config, &default_prefix),
            },
            groups,
        }))
    }

    /// The group that creates `topic`: the first listed group that takes it, else `default`.
    pub fn group_for(&self, topic: &str) -> &TopicCreationGroup {
        self.groups
            .iter()
            .find(|g| g.matches(topic))
            .unwrap_or(&self.default_group)
    }
}

/// A LIST value as Connect's `ConfigDef` parses it: comma-separated, trimmed, an empty
/// string is the empty list.
fn list(value: Option<&String>) -> Vec<String> {
    match value.map(|v| v.trim()) {
        None | Some("") => Vec::new(),
        Some(v) => v.split(',').map(|s| s.trim().to_string()).collect(),
    }
}

fn invalid(key: &str, value: &str, message: &str) -> SettingError {
    SettingError::invalid(key, value, message)
}

fn missing(key: &str) -> SettingError {
    SettingError::Missing(key.to_string())
}

fn replication_factor(
    key: &str,
    value: Option<&String>,
    default: Option<i16>,
) -> Result<i16, SettingError> {
    let v = match value {
        Some(v) => v
            .trim()
            .parse::<i16>()
            .map_err(|_| invalid(key, v, "Not a number of type SHORT"))?,
        None => default.ok_or_else(|| missing(key))?,
    };
    if v != -1 && v < 1 {
        return Err(invalid(
            key,
            &v.to_string(),
            "Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
        ));
    }
    Ok(v)
}

fn partitions(
    key: &str,
    value: Option<&String>,
    default: Option<i32>,
) -> Result<i32, SettingError> {
    let v = match value {
        Some(v) => v
            .trim()
            .parse::<i32>()
            .map_err(|_| invalid(key, v, "Not a number of type INT"))?,
        None => default.ok_or_else(|| missing(key))?,
    };
    if v != -1 && v < 1 {
        return Err(invalid(
            key,
            &v.to_string(),
            "Number of partitions must be positive, or -1 to use the broker's default",
        ));
    }
    Ok(v)
}

/// A group's include or exclude list as one whole-name pattern (Connect joins the list with
/// `|`; an empty list matches no topic name).
fn regex_list(key: &str, config: &Props) -> Result<Regex, SettingError> {
    let items = list(config.get(key));
    for item in &items {
        if let Err(e) = Regex::new(item) {
            return Err(invalid(
                key,
                &format!("[{}]", items.join(", ")),
                &format!("Syntax error in regular expression: {e}"),
            ));
        }
    }
    Regex::new(&format!("^(?:{})$", items.join("|"))).map_err(|e| {
        invalid(
            key,
            &format!("[{}]", items.join(", ")),
            &format!("Syntax error in regular expression: {e}"),
        )
    })
}

fn other_configs(config: &Props, prefix: &str) -> BTreeMap<String, String> {
    config
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|rest| (rest, v)))
        .filter(|(k, _)| !["include", "exclude", "replication.factor", "partitions"].contains(k))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    #[test]
    fn nothing_applies_without_settings_or_when_the_worker_disables_it() {
        let c = props(&[("topic", "t")]);
        assert!(TopicCreation::from_config(&c, true).unwrap().is_none());
        let c = props(&[("topic.creation.default.partitions", "x")]);
        assert!(TopicCreation::from_config(&c, false).unwrap().is_none());
    }

    #[test]
    fn groups_take_topics_in_order_and_inherit_the_defaults() {
        let c = props(&[
            ("topic.creation.groups", "compacted, logs,default"),
            ("topic.creation.default.replication.factor", "1"),
            ("topic.creation.default.partitions", "3"),
            ("topic.creation.default.retention.ms", "1000"),
            ("topic.creation.compacted.include", "db\\..*, cfg"),
            ("topic.creation.compacted.exclude", "db\\.tmp.*"),
            ("topic.creation.compacted.cleanup.policy", "compact"),
            ("topic.creation.logs.include", ".*"),
            ("topic.creation.logs.partitions", "6"),
        ]);
        let tc = TopicCreation::from_config(&c, true).unwrap().unwrap();
        assert_eq!(tc.groups.len(), 2);
        let g = tc.group_for("db.users");
        assert_eq!(
            (g.name.as_str(), g.partitions, g.replication_factor),
            ("compacted", 3, 1)
        );
        assert_eq!(
            g.configs.get("cleanup.policy").map(String::as_str),
            Some("compact")
        );
        assert_eq!(tc.group_for("cfg").name, "compacted");
        // Exclusion wins; a partial match is no match.
        assert_eq!(tc.group_for("db.tmp1").name, "logs");
        assert_eq!(tc.group_for("db.tmp1").partitions, 6);
        assert_eq!(tc.group_for("xcfg").name, "logs");
        assert_eq!(
            tc.default_group
                .configs
                .get("retention.ms")
                .map(String::as_str),
            Some("1000")
        );
    }

    #[test]
    fn bad_settings_get_connects_messages() {
        let err = |pairs: &[(&str, &str)]| {
            TopicCreation::from_config(&props(pairs), true)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&[("topic.creation.default.partitions", "3")]),
            "Missing required configuration \"topic.creation.default.replication.factor\" which has no default value."
        );
        assert_eq!(
            err(&[("topic.creation.groups", "")]),
            "Missing required configuration \"topic.creation.default.replication.factor\" which has no default value."
        );
        assert_eq!(
            err(&[("topic.creation.default.replication.factor", "1")]),
            "Missing required configuration \"topic.creation.default.partitions\" which has no default value."
        );
        assert_eq!(
            err(&[("topic.creation.default.replication.factor", "0"), ("topic.creation.default.partitions", "1")]),
            "Invalid value 0 for configuration topic.creation.default.replication.factor: Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default"
        );
        assert_eq!(
            err(&[("topic.creation.default.replication.factor", "-1"), ("topic.creation.default.partitions", "0")]),
            "Invalid value 0 for configuration topic.creation.default.partitions: Number of partitions must be positive, or -1 to use the broker's default"
        );
        assert_eq!(
            err(&[("topic.creation.default.replication.factor", "x"), ("topic.creation.default.partitions", "1")]),
            "Invalid value x for configuration topic.creation.default.replication.factor: Not a number of type SHORT"
        );
        assert!(err(&[
            ("topic.creation.default.replication.factor", "1"),
            ("topic.creation.default.partitions", "1"),
            ("topic.creation.groups", "g"),
            ("topic.creation.g.include", "a(")
        ])
        .starts_with("Invalid value [a(] for configuration topic.creation.g.include: Syntax error in regular expression: "));
    }
}
