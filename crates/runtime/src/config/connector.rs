//! The framework's connector settings (Connect's `ConnectorConfig`, `SourceConnectorConfig`,
//! `SinkConnectorConfig`) and the checks `POST /connectors` runs before accepting a config.

use std::collections::HashMap;

use tributary_api::config::{
    ConfigDef, ConfigKey, ConfigType, ConfigValue, Importance, Parsed, Validator, Width,
};
use tributary_api::connector::ConnectorType;

/// Keys every connector has (`ConnectorConfig.configDef()`), in Connect's groups and order.
pub fn connector_config_def() -> ConfigDef {
    use ConfigType::*;
    let common = |name: &str,
                  t: ConfigType,
                  default: Option<Option<&str>>,
                  v: Option<Validator>,
                  imp: Importance,
                  doc: &str,
                  order: i32,
                  display: &str| ConfigKey {
        name: name.into(),
        config_type: t,
        default: default.map(|d| d.map(str::to_string)),
        validator: v,
        importance: imp,
        documentation: doc.into(),
        group: Some("Common".into()),
        order_in_group: order,
        width: if matches!(t, Class | List) {
            Width::Long
        } else {
            Width::Medium
        },
        display_name: display.into(),
        dependents: vec![],
    };
    let name_validator = Validator::Custom(std::sync::Arc::new(|v: &Parsed| {
        match v {
        Parsed::String(s) if s.is_empty() => Err("String may not be empty".into()),
        Parsed::String(s) if s.chars().any(|c| c.is_control()) => Err("String may not contain control sequences but had the following ASCII control characters".into()),
        _ => Ok(()),
    }
    }));
    ConfigDef::new()
        .define_key(common(
            "name",
            String,
            None,
            Some(name_validator),
            Importance::High,
            "Name of this connector; no other connector in the cluster may use the same one.",
            1,
            "Connector name",
        ))
        .define_key(common(
            "connector.class",
            String,
            None,
            None,
            Importance::High,
            "The connector implementation to run: its fully qualified class name, or a short alias such as FileStreamSink or FileStreamSinkConnector.",
            2,
            "Connector class",
        ))
        .define_key(common(
            CONNECTOR_VERSION_CONFIG,
            String,
            Some(None),
            None,
            Importance::Medium,
            "The version of the connector plugin to run (KIP-891): a version, a range such as [1.0,2.0), or latest; by default the one installed.",
            2,
            "Connector version",
        ))
        .define_key(common(
            "tasks.max",
            Int,
            Some(Some("1")),
            Some(Validator::Range {
                min: Some(1.0),
                max: None,
            }),
            Importance::High,
            "Upper limit on how many tasks this connector may run (at least 1).",
            3,
            "Tasks max",
        ))
        .define_key(common(
            "tasks.max.enforce",
            Boolean,
            Some(Some("true")),
            None,
            Importance::Low,
            "(Deprecated) If true, a connector that generates more task configurations than tasks.max fails, as do existing task sets larger than tasks.max; if false, both are tolerated.",
            4,
            "Enforce tasks max",
        ))
        .define_key(common(
            "key.converter",
            Class,
            Some(None),
            None,
            Importance::Low,
            "Converter class for keys; overrides the worker's.",
            5,
            "Key converter class",
        ))
        .define_key(common(
            "key.converter.plugin.version",
            String,
            Some(None),
            None,
            Importance::Low,
            "The version of the key converter plugin (KIP-891); by default that of the worker's key converter.",
            5,
            "Key converter version",
        ))
        .define_key(common(
            "value.converter",
            Class,
            Some(None),
            None,
            Importance::Low,
            "Converter class for values; overrides the worker's.",
            6,
            "Value converter class",
        ))
        .define_key(common(
            "value.converter.plugin.version",
            String,
            Some(None),
            None,
            Importance::Low,
            "The version of the value converter plugin (KIP-891); by default that of the worker's value converter.",
            6,
            "Value converter version",
        ))
        .define_key(common(
            "header.converter",
            Class,
            Some(None),
            None,
            Importance::Low,
            "HeaderConverter class; overrides the worker's.",
            7,
            "Header converter class",
        ))
        .define_key(common(
            "header.converter.plugin.version",
            String,
            Some(None),
            None,
            Importance::Low,
            "The version of the header converter plugin (KIP-891); by default that of the worker's header converter.",
            7,
            "Header converter version",
        ))
        .define_key(common(
            "config.action.reload",
            String,
            Some(Some("restart")),
            Some(Validator::OneOfIgnoreCase(vec![
                "none".into(),
                "restart".into(),
            ])),
            Importance::Low,
            "What to do when external configuration providers change a value.",
            8,
            "Reload Action",
        ))
        .define_key(ConfigKey {
            group: Some("Transforms".into()),
            ..common(
                "transforms",
                List,
                Some(Some("")),
                None,
                Importance::Low,
                "Comma-separated aliases of the transformations applied to each record, in the order given.",
                0,
                "Transforms",
            )
        })
        .define_key(ConfigKey {
            group: Some("Predicates".into()),
            ..common(
                "predicates",
                List,
                Some(Some("")),
                None,
                Importance::Low,
                "Comma-separated aliases of the predicates that transformations may refer to.",
                0,
                "Predicates",
            )
        })
        .define_key(ConfigKey {
            group: Some("Error Handling".into()),
            ..common(
                "errors.retry.timeout",
                Long,
                Some(Some("0")),
                None,
                Importance::Medium,
                "Maximum time in ms a failed operation is retried; 0 = no retries, -1 = infinite.",
                1,
                "Retry Timeout for Errors",
            )
        })
        .define_key(ConfigKey {
            group: Some("Error Handling".into()),
            ..common(
                "errors.retry.delay.max.ms",
                Long,
                Some(Some("60000")),
                None,
                Importance::Medium,
                "Maximum delay between retries, ms.",
                2,
                "Maximum Delay Between Retries for Errors",
            )
        })
        .define_key(ConfigKey {
            group: Some("Error Handling".into()),
            ..common(
                "errors.tolerance",
                String,
                Some(Some("none")),
                Some(Validator::OneOf(vec!["none".into(), "all".into()])),
                Importance::Medium,
                "none: fail on an error; all: skip problematic records.",
                3,
                "Error Tolerance",
            )
        })
        .define_key(ConfigKey {
            group: Some("Error Handling".into()),
            ..common(
                "errors.log.enable",
                Boolean,
                Some(Some("false")),
                None,
                Importance::Medium,
                "Log errors and failed operations.",
                4,
                "Log Errors",
            )
        })
        .define_key(ConfigKey {
            group: Some("Error Handling".into()),
            ..common(
                "errors.log.include.messages",
                Boolean,
                Some(Some("false")),
                None,
                Importance::Medium,
                "Include records in the error log.",
                5,
                "Log Error Details",
            )
        })
}

/// Sink-only keys (`SinkConnectorConfig`): `topics` / `topics.regex` (exactly one must be set).
pub fn sink_config_def() -> ConfigDef {
    connector_config_def()
        .define(
            "topics",
            ConfigType::List,
            Some(Some("")),
            None,
            Importance::High,
            "Comma-separated names of the topics this sink reads.",
        )
        .define(
            "topics.regex",
            ConfigType::String,
            Some(Some("")),
            None,
            Importance::High,
            "This sink reads every topic whose name matches this regular expression. Set either this or topics, not both.",
        )
        .define(
            "errors.deadletterqueue.topic.name",
            ConfigType::String,
            Some(Some("")),
            None,
            Importance::Medium,
            "Dead letter queue topic.",
        )
        .define(
            "errors.deadletterqueue.topic.replication.factor",
            ConfigType::Short,
            Some(Some("3")),
            None,
            Importance::Medium,
            "DLQ replication factor.",
        )
        .define(
            "errors.deadletterqueue.context.headers.enable",
            ConfigType::Boolean,
            Some(Some("false")),
            None,
            Importance::Medium,
            "Add error context headers to DLQ records.",
        )
}

/// Source-only keys (`SourceConnectorConfig`).
pub fn source_config_def() -> ConfigDef {
    connector_config_def()
        .define(
            "topic.creation.groups",
            ConfigType::List,
            Some(Some("")),
            None,
            Importance::Low,
            "Groups of topic creation settings.",
        )
        .define(
            "exactly.once.support",
            ConfigType::String,
            Some(Some("requested")),
            Some(Validator::OneOfIgnoreCase(vec![
                "requested".into(),
                "required".into(),
            ])),
            Importance::Medium,
            "Whether exactly-once delivery is required.",
        )
        .define(
            "transaction.boundary",
            ConfigType::String,
            Some(Some("poll")),
            Some(Validator::OneOfIgnoreCase(vec![
                "poll".into(),
                "interval".into(),
                "connector".into(),
            ])),
            Importance::Medium,
            "Transaction boundaries for exactly-once sources.",
        )
        .define(
            "transaction.boundary.interval.ms",
            ConfigType::Long,
            Some(None),
            None,
            Importance::Low,
            "With transaction.boundary=interval, how often transactions are committed, ms.",
        )
        .define(
            "offsets.storage.topic",
            ConfigType::String,
            Some(None),
            None,
            Importance::Low,
            "A connector-specific offsets topic.",
        )
}

/// Connect 4.1's group, order in group, width and display name of each framework key (facts of
/// `ConnectorConfig`, `SinkConnectorConfig`, `SourceConnectorConfig`, as its validate responses
/// report them), so that validation metadata matches field for field.
/// `connector.plugin.version` (KIP-891): the version of the connector plugin a connector runs.
pub const CONNECTOR_VERSION_CONFIG: &str = "connector.plugin.version";

const FRAMEWORK_LAYOUT: &[(&str, Option<&str>, i32, Width, &str)] = &[
    ("name", Some("Common"), 1, Width::Medium, "Connector name"),
    (
        "connector.class",
        Some("Common"),
        2,
        Width::Long,
        "Connector class",
    ),
    (
        CONNECTOR_VERSION_CONFIG,
        Some("Common"),
        3,
        Width::Medium,
        "Connector version",
    ),
    ("tasks.max", Some("Common"), 4, Width::Short, "Tasks max"),
    (
        "tasks.max.enforce",
        Some("Common"),
        5,
        Width::Short,
        "Enforce tasks max",
    ),
    (
        "key.converter",
        Some("Common"),
        6,
        Width::Short,
        "Key converter class",
    ),
    (
        "key.converter.plugin.version",
        Some("Common"),
        7,
        Width::Short,
        "Key converter version",
    ),
    (
        "value.converter",
        Some("Common"),
        8,
        Width::Short,
        "Value converter class",
    ),
    (
        "value.converter.plugin.version",
        Some("Common"),
        9,
        Width::Short,
        "Value converter version",
    ),
    (
        "header.converter",
        Some("Common"),
        10,
        Width::Short,
        "Header converter class",
    ),
    (
        "header.converter.plugin.version",
        Some("Common"),
        11,
        Width::Short,
        "Header converter version",
    ),
    (
        "transforms",
        Some("Transforms"),
        12,
        Width::Long,
        "Transforms",
    ),
    (
        "predicates",
        Some("Predicates"),
        13,
        Width::Long,
        "Predicates",
    ),
    (
        "config.action.reload",
        Some("Common"),
        14,
        Width::Medium,
        "Reload Action",
    ),
    (
        "errors.retry.timeout",
        Some("Error Handling"),
        1,
        Width::Medium,
        "Retry Timeout for Errors",
    ),
    (
        "errors.retry.delay.max.ms",
        Some("Error Handling"),
        2,
        Width::Medium,
        "Maximum Delay Between Retries for Errors",
    ),
    (
        "errors.tolerance",
        Some("Error Handling"),
        3,
        Width::Short,
        "Error Tolerance",
    ),
    (
        "errors.log.enable",
        Some("Error Handling"),
        4,
        Width::Short,
        "Log Errors",
    ),
    (
        "errors.log.include.messages",
        Some("Error Handling"),
        5,
        Width::Short,
        "Log Error Details",
    ),
    (
        "topic.creation.groups",
        Some("Topic Creation"),
        1,
        Width::Long,
        "Topic Creation Groups",
    ),
    (
        "exactly.once.support",
        Some("Exactly Once Support"),
        2,
        Width::Short,
        "Exactly once support",
    ),
    (
        "transaction.boundary",
        Some("Exactly Once Support"),
        3,
        Width::Short,
        "Transaction Boundary",
    ),
    (
        "transaction.boundary.interval.ms",
        Some("Exactly Once Support"),
        4,
        Width::Short,
        "Transaction boundary interval",
    ),
    (
        "offsets.storage.topic",
        Some("offsets.topic"),
        1,
        Width::Long,
        "Offsets topic",
    ),
    ("topics", Some("Common"), 4, Width::Long, "Topics"),
    (
        "topics.regex",
        Some("Common"),
        4,
        Width::Long,
        "Topics regex",
    ),
    (
        "errors.deadletterqueue.topic.name",
        Some("Error Handling"),
        6,
        Width::Medium,
        "Dead Letter Queue Topic Name",
    ),
    (
        "errors.deadletterqueue.topic.replication.factor",
        Some("Error Handling"),
        7,
        Width::Medium,
        "Dead Letter Queue Topic Replication Factor",
    ),
    (
        "errors.deadletterqueue.context.headers.enable",
        Some("Error Handling"),
        8,
        Width::Medium,
        "Enable Error Context Headers",
    ),
];

/// Applies [`FRAMEWORK_LAYOUT`] to the keys of `def` it lists.
fn with_connect_layout(mut def: ConfigDef) -> ConfigDef {
    for key in &mut def.keys {
        if let Some((_, group, order, width, display)) =
            FRAMEWORK_LAYOUT.iter().find(|(n, ..)| *n == key.name)
        {
            key.group = group.map(str::to_string);
            key.order_in_group = *order;
            key.width = *width;
            key.display_name = display.to_string();
        }
    }
    def
}

/// The framework definition for a connector of the given type, with Connect's layout.
pub fn config_def_for(kind: ConnectorType) -> ConfigDef {
    with_connect_layout(match kind {
        ConnectorType::Source => source_config_def(),
        ConnectorType::Sink => sink_config_def(),
    })
}

/// Framework-level checks beyond single keys: a sink must set exactly one of `topics` and
/// `topics.regex`, the regex must compile, and the dead letter queue topic must not be one the
/// sink consumes (`SinkConnectorConfig.validate`). Errors are appended to the matching
/// [`ConfigValue`]s.
pub fn validate_sink_topics(props: &HashMap<String, String>, values: &mut [ConfigValue]) {
    let topics = props.get("topics").map(|s| s.trim()).unwrap_or("");
    let regex = props.get("topics.regex").map(|s| s.trim()).unwrap_or("");
    let mut add = |key: &str, msg: String| {
        if let Some(v) = values.iter_mut().find(|v| v.name == key) {
            v.errors.push(msg);
        }
    };
    if topics.is_empty() && regex.is_empty() {
        let msg = "Must configure one of topics or topics.regex".to_string();
        add("topics", msg.clone());
        add("topics.regex", msg);
    } else if !topics.is_empty() && !regex.is_empty() {
        let msg =
            "topics and topics.regex are mutually exclusive options, but both are set.".to_string();
        add("topics", msg.clone());
        add("topics.regex", msg);
    } else if !regex.is_empty() {
        if let Err(e) = regex::Regex::new(regex) {
            add(
                "topics.regex",
                format!("Invalid value {regex} for configuration topics.regex: {e}"),
            );
        }
    }
    // The dead letter queue must not be a topic the sink consumes.
    let dlq = props
        .get("errors.deadletterqueue.topic.name")
        .map(|s| s.trim())
        .unwrap_or("");
    if !dlq.is_empty() {
        if !topics.is_empty() {
            let mut list: Vec<&str> = Vec::new();
            for t in topics.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
            if list.contains(&dlq) {
                add(
                    "topics",
                    format!(
                        "The DLQ topic '{dlq}' may not be included in the list of topics ('topics=[{}]') consumed by the connector",
                        list.join(", ")
                    ),
                );
            }
        }
        if !regex.is_empty() {
            if let Ok(re) = regex::Regex::new(&format!("^(?:{regex})$")) {
                if re.is_match(dlq) {
                    add(
                        "topics.regex",
                        format!(
                            "The DLQ topic '{dlq}' may not be matched by the regex for the topics ('topics.regex={regex}') consumed by the connector"
                        ),
                    );
                }
            }
        }
    }
}

/// The connector's `tasks.max` (default 1).
pub fn tasks_max(props: &HashMap<String, String>) -> usize {
    props
        .get("tasks.max")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(pairs: &[(&str, &str)]) -> Vec<(String, Vec<String>)> {
        let props: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut values = vec![ConfigValue::new("topics"), ConfigValue::new("topics.regex")];
        validate_sink_topics(&props, &mut values);
        values.into_iter().map(|v| (v.name, v.errors)).collect()
    }

    #[test]
    fn the_dead_letter_queue_may_not_be_a_consumed_topic() {
        assert_eq!(
            errors_of(&[("topics", "a, dlq,a"), ("errors.deadletterqueue.topic.name", " dlq ")])[0].1,
            vec!["The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"]
        );
        assert_eq!(
            errors_of(&[("topics.regex", "d.*"), ("errors.deadletterqueue.topic.name", "dlq")])[1].1,
            vec!["The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"]
        );
        // The regex must match the whole name, as Java's `Matcher.matches`.
        assert!(errors_of(&[
            ("topics.regex", "d"),
            ("errors.deadletterqueue.topic.name", "dlq")
        ])
        .iter()
        .all(|(_, e)| e.is_empty()));
    }
}
