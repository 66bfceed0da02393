//! Connect's built-in predicates (KIP-585), `org.apache.kafka.connect.transforms.predicates.*`:
//! [`HasHeaderKey`], [`RecordIsTombstone`] and [`TopicNameMatches`]. A connector uses them with
//! `predicates=<alias>`, `predicates.<alias>.type=…` and `transforms.<t>.predicate=<alias>`
//! (optionally `transforms.<t>.negate=true`).

use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::transforms::{ConnectRecord, Predicate};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_regex::JavaRegex;
use crate::util::Settings;

/// `org.apache.kafka.connect.transforms.predicates.HasHeaderKey`: true for records with at
/// least one header named `name`.
///
/// Settings: `name` (STRING, required, non-empty).
#[derive(Debug, Clone, Default)]
pub struct HasHeaderKey {
    name: String,
}

impl HasHeaderKey {
    /// The settings: `name`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(
            "name",
            ConfigType::String,
            None,
            Some(Validator::NonEmptyString),
            Importance::Medium,
            "The header key to look for.",
        )
    }
}

impl<R: ConnectRecord> Predicate<R> for HasHeaderKey {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        self.name = settings.string("name").unwrap_or_default().to_string();
        Ok(())
    }

    fn test(&mut self, record: &R) -> bool {
        record.headers().iter().any(|h| h.key == self.name)
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// `org.apache.kafka.connect.transforms.predicates.RecordIsTombstone`: true for records whose
/// value is null. It has no settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordIsTombstone;

impl<R: ConnectRecord> Predicate<R> for RecordIsTombstone {
    fn configure(&mut self, _props: &Props) -> ConnectResult<()> {
        Ok(())
    }

    fn test(&mut self, record: &R) -> bool {
        record.value().is_null()
    }

    fn config(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// `org.apache.kafka.connect.transforms.predicates.TopicNameMatches`: true for records whose
/// whole topic name matches the Java regular expression `pattern`.
///
/// Settings: `pattern` (STRING, required, non-empty, a valid regular expression).
#[derive(Debug, Clone, Default)]
pub struct TopicNameMatches {
    pattern: Option<JavaRegex>,
}

impl TopicNameMatches {
    /// The settings: `pattern`.
    pub fn config_def() -> ConfigDef {
        let check = |v: &Parsed| match v {
            Parsed::String(s) if s.is_empty() => Err("String must be non-empty".to_string()),
            Parsed::String(s) => JavaRegex::new(s)
                .map(|_| ())
                .map_err(|e| format!("Invalid regex: {e}")),
            _ => Ok(()),
        };
        ConfigDef::new().define(
            "pattern",
            ConfigType::String,
            None,
            Some(Validator::Custom(Arc::new(check))),
            Importance::Medium,
            "A Java regular expression that a record's whole topic name must match.",
        )
    }
}

impl<R: ConnectRecord> Predicate<R> for TopicNameMatches {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        let pattern = settings.string("pattern").unwrap_or_default();
        let regex = JavaRegex::new(pattern).map_err(|e| {
            ConnectError::config(format!(
                "Invalid value {pattern} for configuration pattern: entry must be a Java-compatible regular expression: {e}"
            ))
        })?;
        self.pattern = Some(regex);
        Ok(())
    }

    fn test(&mut self, record: &R) -> bool {
        self.pattern
            .as_ref()
            .is_some_and(|p| p.matches(record.topic()))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{null, props, sink, source};
    use tributary_api::data::{Schema, Value};
    use tributary_api::record::{SinkRecord, SourceRecord};

    fn configured<P: Default + Predicate<SourceRecord>>(pairs: &[(&str, &str)]) -> P {
        let mut p = P::default();
        p.configure(&props(pairs)).expect("valid settings");
        p
    }

    fn config_error<P: Default + Predicate<SourceRecord>>(pairs: &[(&str, &str)]) -> String {
        let mut p = P::default();
        p.configure(&props(pairs)).unwrap_err().to_string()
    }

    #[test]
    fn has_header_key_looks_at_every_header() {
        let mut p: HasHeaderKey = configured(&[("name", "h")]);
        let mut r = source("t", null(), null(), None);
        assert!(!Predicate::<SourceRecord>::test(&mut p, &r));
        r.headers.add("other", None, Value::Null);
        assert!(!Predicate::<SourceRecord>::test(&mut p, &r));
        r.headers.add("h", None, Value::Null);
        r.headers.add("later", None, Value::Null);
        assert!(Predicate::<SourceRecord>::test(&mut p, &r));
        let mut s = sink("t", null(), null(), None);
        let mut ps = HasHeaderKey::default();
        Predicate::<SinkRecord>::configure(&mut ps, &props(&[("name", "h")])).unwrap();
        assert!(!Predicate::<SinkRecord>::test(&mut ps, &s));
        s.headers
            .add("h", Some(Schema::string_schema()), Value::from("v"));
        assert!(Predicate::<SinkRecord>::test(&mut ps, &s));
    }

    #[test]
    fn has_header_key_needs_a_non_empty_name() {
        assert_eq!(
            config_error::<HasHeaderKey>(&[]),
            "Missing required configuration \"name\" which has no default value."
        );
        assert_eq!(
            config_error::<HasHeaderKey>(&[("name", "")]),
            "Invalid value  for configuration name: String must be non-empty"
        );
        let def = Predicate::<SourceRecord>::config(&HasHeaderKey::default());
        let key = def.key("name").unwrap();
        assert_eq!(key.config_type, ConfigType::String);
        assert!(key.required());
        assert_eq!(key.importance, Importance::Medium);
    }

    #[test]
    fn tombstones_have_a_null_value() {
        let mut p: RecordIsTombstone = configured(&[]);
        let tombstone = source("t", (None, Value::from("k")), null(), None);
        assert!(Predicate::<SourceRecord>::test(&mut p, &tombstone));
        let schema_tombstone = source(
            "t",
            null(),
            (Some(Schema::optional_string_schema()), Value::Null),
            None,
        );
        assert!(Predicate::<SourceRecord>::test(&mut p, &schema_tombstone));
        let live = source("t", null(), (None, Value::from("")), None);
        assert!(!Predicate::<SourceRecord>::test(&mut p, &live));
        let mut ps = RecordIsTombstone;
        assert!(Predicate::<SinkRecord>::test(
            &mut ps,
            &sink("t", null(), null(), None)
        ));
        assert!(Predicate::<SourceRecord>::config(&p).keys.is_empty());
    }

    #[test]
    fn topic_name_matches_the_whole_name() {
        let mut p: TopicNameMatches = configured(&[("pattern", "orders-.*")]);
        let r = |t: &str| source(t, null(), null(), None);
        assert!(Predicate::<SourceRecord>::test(&mut p, &r("orders-eu")));
        assert!(!Predicate::<SourceRecord>::test(
            &mut p,
            &r("old-orders-eu")
        ));
        let mut p: TopicNameMatches = configured(&[("pattern", "a|ab")]);
        assert!(Predicate::<SourceRecord>::test(&mut p, &r("ab")));
        assert!(!Predicate::<SourceRecord>::test(&mut p, &r("abc")));
        let mut p: TopicNameMatches = configured(&[("pattern", "(?!internal).*")]);
        assert!(!Predicate::<SourceRecord>::test(&mut p, &r("internal-x")));
        let mut ps = TopicNameMatches::default();
        Predicate::<SinkRecord>::configure(&mut ps, &props(&[("pattern", " t\\d ")])).unwrap();
        assert!(Predicate::<SinkRecord>::test(
            &mut ps,
            &sink("t1", null(), null(), None)
        ));
    }

    #[test]
    fn topic_name_matches_needs_a_valid_pattern() {
        assert_eq!(
            config_error::<TopicNameMatches>(&[]),
            "Missing required configuration \"pattern\" which has no default value."
        );
        assert_eq!(
            config_error::<TopicNameMatches>(&[("pattern", "")]),
            "Invalid value  for configuration pattern: String must be non-empty"
        );
        assert!(config_error::<TopicNameMatches>(&[("pattern", "(")])
            .starts_with("Invalid value ( for configuration pattern: Invalid regex: "));
    }
}
