//! Configuration: Java properties files ([`properties`]), the worker's settings ([`worker`]),
//! connectors' framework settings ([`connector`]), Kafka client settings ([`clients`]), config
//! providers resolving `${provider:path:key}` references ([`providers`]) and the redaction of what
//! they resolved ([`secrets`]), the `transforms` and
//! `predicates` settings ([`transforms`]), error handling ([`errors`]), topic creation by source connectors ([`topic_creation`]), the connector client override
//! policy ([`override_policy`]) and the settings Tributary does not implement yet
//! ([`unsupported`]).

pub mod auto_restart;
pub mod clients;
pub mod connector;
pub mod errors;
pub mod file_connectors;
pub mod file_watch;
pub mod override_policy;
pub mod plugin_version;
pub mod properties;
pub mod providers;
pub mod secrets;
pub mod throttle;
pub mod topic_creation;
pub mod transforms;
pub mod unsupported;
pub mod worker;

/// A worker setting that cannot be read, naming its key, with Connect's `ConfigException`
/// messages. [`worker::WorkerConfig::parse`] reports it in a [`ConfigError`] after the file's
/// name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// A required key without a default is unset.
    #[error("Missing required configuration \"{0}\" which has no default value.")]
    Missing(String),
    /// A value the key does not accept: `reason` says why (Connect's validator message).
    #[error("Invalid value {value} for configuration {key}: {reason}")]
    Invalid {
        key: String,
        value: String,
        reason: String,
    },
    /// A key read as another type than its definition gives it (a mistake in the definition
    /// table, not in the user's file).
    #[error("Configuration {key} is not of type {wanted}")]
    Mistyped { key: String, wanted: &'static str },
    /// A key the definition table does not have for this kind of worker (a mistake in the
    /// table).
    #[error("Configuration {0} is not defined for this kind of worker")]
    Undefined(String),
    /// A rule across keys, e.g. `listeners` must not be empty.
    #[error("{0}")]
    Rule(String),
}

impl SettingError {
    /// [`SettingError::Invalid`] for `key`'s `value`.
    pub fn invalid(key: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        SettingError::Invalid {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// A configuration problem found at startup. The message names the file (when there is one)
/// and the key, e.g. `worker.properties: Missing required configuration "group.id" …`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The problems of a connector config's keys under `prefix` (Tributary's own families, e.g.
/// `tributary.restart.`): `def`'s validation errors, and each key under the prefix that `def`
/// does not define, with `unknown`'s message for it. Empty when the config sets none of them.
pub fn prefixed_problems(
    def: &tributary_api::config::ConfigDef,
    config: &tributary_api::Props,
    prefix: &str,
    unknown: impl Fn(&str) -> String,
) -> Vec<tributary_api::config::ConfigValue> {
    if !config.keys().any(|k| k.starts_with(prefix)) {
        return Vec::new();
    }
    let mut out: Vec<tributary_api::config::ConfigValue> = def
        .validate(config)
        .into_iter()
        .filter(|v| !v.errors.is_empty())
        .collect();
    for key in config.keys().filter(|k| k.starts_with(prefix)) {
        if !def.keys.iter().any(|d| &d.name == key) {
            let mut v = tributary_api::config::ConfigValue::new(key);
            v.value = config.get(key).cloned();
            v.errors.push(unknown(key));
            out.push(v);
        }
    }
    out
}

/// A config from `(key, value)` pairs (the config modules' tests).
#[cfg(test)]
pub(crate) fn props(pairs: &[(&str, &str)]) -> tributary_api::Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
