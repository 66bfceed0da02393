//! A transformation and a predicate for testing runtimes' transformation chains and error
//! handling (Tributary's own, under Tributary class names; hidden from `GET /connector-plugins`
//! like the other testing plugins).
//!
//! [`TestTransformation`] (`io.tributary.connect.testing.TestTransformation`) works on a
//! record's value as text (its Java string form), with these settings (all optional):
//!
//! | key | type | effect |
//! |---|---|---|
//! | `topic` | string | the record goes to (or, in a sink, is delivered as coming from) this topic |
//! | `value.suffix` | string | appended to the value (the value becomes a string) |
//! | `drop.containing` | string | a record whose value contains it is dropped |
//! | `fail.containing` | string | a record whose value contains it fails with a `DataException` |
//! | `retriable.containing` | string | a record whose value contains it fails with a `RetriableException` … |
//! | `retriable.failures` | int, default 1 | … this many times, then passes |
//! | `fail.configure` | boolean | `configure` fails with a `ConfigException` |
//!
//! It is `Monitorable` (KIP-877): given its metrics, it registers `records-applied`, the
//! records `apply` was called with.
//!
//! [`TestPredicate`] (`io.tributary.connect.testing.TestPredicate`) matches records whose value
//! contains `value.contains` (required).

use std::collections::HashMap;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::Value;
use tributary_api::transforms::{ConnectRecord, Predicate, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

/// Class name of [`TestTransformation`].
pub const TEST_TRANSFORMATION_CLASS: &str = "io.tributary.connect.testing.TestTransformation";
/// Class name of [`TestPredicate`].
pub const TEST_PREDICATE_CLASS: &str = "io.tributary.connect.testing.TestPredicate";

/// The text of a value: a string as is, anything else as Java prints it.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn setting(props: &Props, key: &str) -> Option<String> {
    props.get(key).filter(|v| !v.is_empty()).cloned()
}

/// The testing transformation (see the module documentation).
#[derive(Default)]
pub struct TestTransformation {
    topic: Option<String>,
    suffix: String,
    drop_containing: Option<String>,
    fail_containing: Option<String>,
    retriable_containing: Option<String>,
    retriable_failures: u32,
    /// Retriable failures given so far, per value.
    failures_given: HashMap<String, u32>,
    /// Records `apply` was called with: the plugin metric `records-applied` (KIP-877).
    applied: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// The plugin metric (KIP-877) [`TestTransformation`] registers when given its metrics.
pub const APPLIED_METRIC: &str = "records-applied";

impl<R: ConnectRecord> Transformation<R> for TestTransformation {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let parsed = Transformation::<R>::config(self).parse(props)?;
        if props
            .get("fail.configure")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        {
            return Err(ConnectError::config(
                "Invalid value true for configuration fail.configure: configure fails on request",
            ));
        }
        self.topic = setting(props, "topic");
        self.suffix = props.get("value.suffix").cloned().unwrap_or_default();
        self.drop_containing = setting(props, "drop.containing");
        self.fail_containing = setting(props, "fail.containing");
        self.retriable_containing = setting(props, "retriable.containing");
        self.retriable_failures = match parsed.get("retriable.failures") {
            Some(tributary_api::config::Parsed::Int(n)) => (*n).max(0) as u32,
            _ => 1,
        };
        Ok(())
    }

    fn with_plugin_metrics(&mut self, metrics: tributary_api::metrics::PluginMetrics) {
        let applied = std::sync::Arc::clone(&self.applied);
        let registered = metrics
            .metric_name(
                APPLIED_METRIC,
                "Records the transformation was applied to",
                &[],
            )
            .and_then(|name| {
                metrics.add_metric(&name, move || {
                    applied.load(std::sync::atomic::Ordering::Relaxed) as f64
                })
            });
        if let Err(e) = registered {
            tracing::warn!(error = %e, "TestTransformation cannot register its metric");
        }
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        self.applied
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let value = text(record.value());
        if self
            .drop_containing
            .as_ref()
            .is_some_and(|m| value.contains(m.as_str()))
        {
            return Ok(None);
        }
        if self
            .fail_containing
            .as_ref()
            .is_some_and(|m| value.contains(m.as_str()))
        {
            return Err(ConnectError::data(format!(
                "TestTransformation refuses the value '{value}'"
            )));
        }
        if self
            .retriable_containing
            .as_ref()
            .is_some_and(|m| value.contains(m.as_str()))
        {
            let given = self.failures_given.entry(value.clone()).or_insert(0);
            if *given < self.retriable_failures {
                *given += 1;
                return Err(ConnectError::Retriable(format!(
                    "TestTransformation is not ready for '{value}' (failure {given})"
                )));
            }
        }
        if self.topic.is_none() && self.suffix.is_empty() {
            return Ok(Some(record));
        }
        let (schema, new_value) = if self.suffix.is_empty() {
            (record.value_schema().cloned(), record.value().clone())
        } else {
            (
                record.value_schema().cloned(),
                Value::String(format!("{value}{}", self.suffix)),
            )
        };
        Ok(Some(
            record.new_record(
                self.topic
                    .clone()
                    .unwrap_or_else(|| record.topic().to_string()),
                record.kafka_partition(),
                record.key_schema().cloned(),
                record.key().clone(),
                schema,
                new_value,
                record.timestamp(),
                record.headers().clone(),
            ),
        ))
    }

    fn config(&self) -> ConfigDef {
        let string = |def: ConfigDef, key: &str, doc: &str| {
            def.define(
                key,
                ConfigType::String,
                Some(None),
                None,
                Importance::Medium,
                doc,
            )
        };
        let def = string(ConfigDef::new(), "topic", "The topic records get.");
        let def = def.define(
            "value.suffix",
            ConfigType::String,
            Some(Some("")),
            None,
            Importance::Medium,
            "Appended to each value.",
        );
        let def = string(
            def,
            "drop.containing",
            "Drop records whose value contains this.",
        );
        let def = string(
            def,
            "fail.containing",
            "Fail records whose value contains this.",
        );
        let def = string(
            def,
            "retriable.containing",
            "Fail records whose value contains this with a retriable error.",
        );
        def.define(
            "retriable.failures",
            ConfigType::Int,
            Some(Some("1")),
            None,
            Importance::Low,
            "How many retriable failures each such record gets before it passes.",
        )
        .define(
            "fail.configure",
            ConfigType::Boolean,
            Some(Some("false")),
            None,
            Importance::Low,
            "Whether configure fails.",
        )
    }
}

/// The testing predicate: matches records whose value contains `value.contains`.
#[derive(Default)]
pub struct TestPredicate {
    needle: String,
}

impl<R: ConnectRecord> Predicate<R> for TestPredicate {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        Predicate::<R>::config(self).parse(props)?;
        self.needle = props.get("value.contains").cloned().unwrap_or_default();
        Ok(())
    }

    fn test(&mut self, record: &R) -> bool {
        text(record.value()).contains(self.needle.as_str())
    }

    fn config(&self) -> ConfigDef {
        ConfigDef::new().define(
            "value.contains",
            ConfigType::String,
            None,
            None,
            Importance::High,
            "Matches records whose value contains this.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::record::SourceRecord;

    fn record(v: &str) -> SourceRecord {
        SourceRecord::new(
            serde_json::Map::new(),
            serde_json::Map::new(),
            "in",
            None,
            Value::String(v.into()),
        )
    }

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn transforms_drops_fails_and_retries_on_request() {
        let mut t = TestTransformation::default();
        Transformation::<SourceRecord>::configure(
            &mut t,
            &props(&[
                ("topic", "out"),
                ("value.suffix", "!"),
                ("drop.containing", "skip"),
                ("fail.containing", "bad"),
                ("retriable.containing", "slow"),
                ("retriable.failures", "2"),
            ]),
        )
        .unwrap();
        let r = t.apply(record("hi")).unwrap().unwrap();
        assert_eq!(
            (r.topic.as_str(), r.value),
            ("out", Value::String("hi!".into()))
        );
        assert!(t.apply(record("skip me")).unwrap().is_none());
        assert!(matches!(t.apply(record("bad")), Err(ConnectError::Data(_))));
        assert!(matches!(
            t.apply(record("slow")),
            Err(ConnectError::Retriable(_))
        ));
        assert!(matches!(
            t.apply(record("slow")),
            Err(ConnectError::Retriable(_))
        ));
        assert!(t.apply(record("slow")).unwrap().is_some());

        let mut t = TestTransformation::default();
        let e = Transformation::<SourceRecord>::configure(
            &mut t,
            &props(&[("fail.configure", "true")]),
        )
        .unwrap_err();
        assert!(matches!(e, ConnectError::Config(_)));

        let mut p = TestPredicate::default();
        Predicate::<SourceRecord>::configure(&mut p, &props(&[("value.contains", "x")])).unwrap();
        assert!(p.test(&record("axb")));
        assert!(!p.test(&record("ab")));
    }
}
