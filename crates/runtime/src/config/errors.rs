//! A connector's error handling settings (KIP-298, Connect's `ConnectorConfig` `errors.*` and
//! `SinkConnectorConfig` `errors.deadletterqueue.*`).

use tributary_api::config::{ConfigDef, Parsed};
use tributary_api::connector::ConnectorType;
use tributary_api::{ConnectResult, Props};

use super::connector::config_def_for;

/// `errors.tolerance` (Connect's `ToleranceType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToleranceType {
    /// `none` (the default): any error in a tolerated stage fails the task.
    None,
    /// `all`: a record whose conversion or transformation fails is skipped (and reported).
    All,
}

/// The `errors.*` settings of a connector, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorHandlingConfig {
    /// `errors.retry.timeout`, ms: how long a failing operation is retried when it fails with a
    /// retriable error; 0 (the default) means no retry, -1 retrying for ever.
    pub retry_timeout_ms: i64,
    /// `errors.retry.delay.max.ms`: the longest wait between two attempts, ms (default 60000).
    pub retry_delay_max_ms: i64,
    /// `errors.tolerance`.
    pub tolerance: ToleranceType,
    /// `errors.log.enable`: log each error with its stage and class.
    pub log_enable: bool,
    /// `errors.log.include.messages`: include the record's coordinates (sinks) or the record
    /// (sources) in that log line.
    pub log_include_messages: bool,
    /// `errors.deadletterqueue.topic.name` (sinks; empty: no dead letter queue), trimmed.
    pub dlq_topic: String,
    /// `errors.deadletterqueue.topic.replication.factor` (default 3), used when the topic is
    /// created.
    pub dlq_replication_factor: i16,
    /// `errors.deadletterqueue.context.headers.enable`: add the `__connect.errors.*` headers.
    pub dlq_context_headers: bool,
}

impl Default for ErrorHandlingConfig {
    /// Connect's defaults: no retries, no tolerance, no log, no dead letter queue.
    fn default() -> Self {
        ErrorHandlingConfig {
            retry_timeout_ms: 0,
            retry_delay_max_ms: 60_000,
            tolerance: ToleranceType::None,
            log_enable: false,
            log_include_messages: false,
            dlq_topic: String::new(),
            dlq_replication_factor: 3,
            dlq_context_headers: false,
        }
    }
}

impl ErrorHandlingConfig {
    /// Reads the settings of a connector of `kind` (the dead letter queue keys only for sinks).
    /// Errors: [`ConnectError::Config`] with `ConfigDef`'s message naming the key (e.g. `Invalid
    /// value x for configuration errors.retry.timeout: Not a number of type LONG`).
    pub fn from_props(props: &Props, kind: ConnectorType) -> ConnectResult<ErrorHandlingConfig> {
        let def = config_def_for(kind);
        let keys = [
            "errors.retry.timeout",
            "errors.retry.delay.max.ms",
            "errors.tolerance",
            "errors.log.enable",
            "errors.log.include.messages",
            "errors.deadletterqueue.topic.name",
            "errors.deadletterqueue.topic.replication.factor",
            "errors.deadletterqueue.context.headers.enable",
        ];
        let only = ConfigDef {
            keys: def
                .keys
                .into_iter()
                .filter(|k| keys.contains(&k.name.as_str()))
                .collect(),
        };
        let parsed = only.parse(props)?;
        let long = |k: &str, d: i64| match parsed.get(k) {
            Some(Parsed::Long(v)) => *v,
            _ => d,
        };
        let boolean = |k: &str| matches!(parsed.get(k), Some(Parsed::Boolean(true)));
        let string = |k: &str| match parsed.get(k) {
            Some(Parsed::String(s)) => s.trim().to_string(),
            _ => String::new(),
        };
        let tolerance = if string("errors.tolerance").eq_ignore_ascii_case("all") {
            ToleranceType::All
        } else {
            ToleranceType::None
        };
        let dlq_replication_factor =
            match parsed.get("errors.deadletterqueue.topic.replication.factor") {
                Some(Parsed::Short(v)) => *v,
                _ => 3,
            };
        Ok(ErrorHandlingConfig {
            retry_timeout_ms: long("errors.retry.timeout", 0),
            retry_delay_max_ms: long("errors.retry.delay.max.ms", 60_000),
            tolerance,
            log_enable: boolean("errors.log.enable"),
            log_include_messages: boolean("errors.log.include.messages"),
            dlq_topic: string("errors.deadletterqueue.topic.name"),
            dlq_replication_factor,
            dlq_context_headers: boolean("errors.deadletterqueue.context.headers.enable"),
        })
    }

    /// Whether sink tasks get an errant record reporter (KIP-610): with a dead letter queue or
    /// error logging (Connect's `SinkConnectorConfig.enableErrantRecordReporter`).
    pub fn enable_errant_record_reporter(&self) -> bool {
        !self.dlq_topic.is_empty() || self.log_enable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    #[test]
    fn defaults_and_settings() {
        let d = ErrorHandlingConfig::from_props(&Props::new(), ConnectorType::Sink).unwrap();
        assert_eq!(d, ErrorHandlingConfig::default());
        let c = ErrorHandlingConfig::from_props(
            &props(&[
                ("errors.retry.timeout", "-1"),
                ("errors.retry.delay.max.ms", "500"),
                ("errors.tolerance", "all"),
                ("errors.log.enable", "true"),
                ("errors.log.include.messages", "TRUE"),
                ("errors.deadletterqueue.topic.name", " dlq "),
                ("errors.deadletterqueue.topic.replication.factor", "1"),
                ("errors.deadletterqueue.context.headers.enable", "true"),
            ]),
            ConnectorType::Sink,
        )
        .unwrap();
        assert_eq!(c.retry_timeout_ms, -1);
        assert_eq!(c.retry_delay_max_ms, 500);
        assert_eq!(c.tolerance, ToleranceType::All);
        assert!(c.log_enable && c.log_include_messages && c.dlq_context_headers);
        assert_eq!((c.dlq_topic.as_str(), c.dlq_replication_factor), ("dlq", 1));
        assert!(c.enable_errant_record_reporter());
        let e = ErrorHandlingConfig::from_props(
            &props(&[("errors.retry.timeout", "soon")]),
            ConnectorType::Source,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value soon for configuration errors.retry.timeout: Not a number of type LONG"
        );
        // Validation is case-sensitive, as Connect's `ValidString.in`.
        assert!(ErrorHandlingConfig::from_props(
            &props(&[("errors.tolerance", "ALL")]),
            ConnectorType::Source
        )
        .is_err());
    }
}
