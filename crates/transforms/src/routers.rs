//! Connect's topic routers: [`RegexRouter`] and [`TimestampRouter`]
//! (`org.apache.kafka.connect.transforms.*`). Both change only the record's topic.

use std::any::Any;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::data::date_format::JavaDateFormat;
use tributary_api::data::SchemaRef;
use tributary_api::record::{SinkRecord, SourceRecord, TimestampType};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_regex::JavaRegex;
use crate::util::Settings;

/// The record with topic `topic` and everything else kept (Connect's `newRecord`), changed in
/// place.
fn with_topic<R: ConnectRecord>(mut record: R, topic: String) -> R {
    record.set_topic(topic);
    record
}

/// `org.apache.kafka.connect.transforms.RegexRouter`: when the whole topic matches the Java
/// regular expression `regex`, the topic becomes the first match replaced by `replacement`
/// (Java's `Matcher.replaceFirst`: `$1` or `${name}` insert a group, `\$` a dollar sign).
/// Records whose topic does not match are passed on unchanged.
///
/// Settings: `regex` (STRING, required, a valid regular expression) and `replacement`
/// (STRING, required). A replacement naming a group the expression lacks fails each matching
/// record with Java's message (`No group 2`).
#[derive(Debug, Clone, Default)]
pub struct RegexRouter {
    regex: Option<JavaRegex>,
    replacement: String,
    /// The last topic rerouted and its new name: records mostly come in runs of one topic,
    /// and the same topic always gets the same name.
    last: Option<(String, String)>,
}

impl RegexRouter {
    /// The settings: `regex` and `replacement`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                "regex",
                ConfigType::String,
                None,
                Some(regex_validator()),
                Importance::High,
                "A Java regular expression the whole topic name must match for the record to be \
                 rerouted.",
            )
            .define(
                "replacement",
                ConfigType::String,
                None,
                None,
                Importance::High,
                "The new topic, in which $1, $2, … stand for the expression's groups.",
            )
    }
}

/// Connect's `RegexValidator`: `Invalid regex: <why>`.
fn regex_validator() -> Validator {
    Validator::Custom(std::sync::Arc::new(|v: &Parsed| match v {
        Parsed::String(s) => JavaRegex::new(s)
            .map(|_| ())
            .map_err(|e| format!("Invalid regex: {e}")),
        _ => Ok(()),
    }))
}

impl<R: ConnectRecord> Transformation<R> for RegexRouter {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        let regex = settings.string("regex").unwrap_or_default();
        self.regex = Some(JavaRegex::new(regex).map_err(|e| {
            ConnectError::config(format!(
                "Invalid value {regex} for configuration regex: Invalid regex: {e}"
            ))
        })?);
        self.replacement = settings
            .string("replacement")
            .unwrap_or_default()
            .to_string();
        self.last = None;
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        if let Some((from, to)) = &self.last {
            if from == record.topic() {
                let to = to.clone();
                return Ok(Some(with_topic(record, to)));
            }
        }
        let Some(regex) = &self.regex else {
            return Ok(Some(record));
        };
        if !regex.matches(record.topic()) {
            tracing::trace!(
                topic = record.topic(),
                "not rerouting: the topic does not match the regex"
            );
            return Ok(Some(record));
        }
        let topic = regex
            .replace_first(record.topic(), &self.replacement)
            .map_err(ConnectError::connect)?;
        tracing::trace!(from = record.topic(), to = %topic, "rerouting");
        self.last = Some((record.topic().to_string(), topic.clone()));
        Ok(Some(with_topic(record, topic)))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// `org.apache.kafka.connect.transforms.TimestampRouter`: the topic becomes `topic.format`
/// with `${topic}` replaced by the record's topic and `${timestamp}` by the record's timestamp
/// written with the `java.text.SimpleDateFormat` pattern `timestamp.format` in UTC
/// ([`JavaDateFormat`]). Meant for sinks that name tables or indexes after the topic.
///
/// Settings: `topic.format` (STRING, default `${topic}-${timestamp}`) and `timestamp.format`
/// (STRING, default `yyyyMMdd`). A record without a timestamp fails; so does every record
/// when the pattern is invalid (Connect builds the formatter on first use, so the pattern is
/// not checked by `configure`).
#[derive(Debug, Clone)]
pub struct TimestampRouter {
    topic_format: String,
    format: Result<JavaDateFormat, String>,
}

impl Default for TimestampRouter {
    fn default() -> Self {
        TimestampRouter {
            topic_format: "${topic}-${timestamp}".into(),
            format: JavaDateFormat::new("yyyyMMdd"),
        }
    }
}

impl TimestampRouter {
    /// The settings: `topic.format` and `timestamp.format`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                "topic.format",
                ConfigType::String,
                Some(Some("${topic}-${timestamp}")),
                None,
                Importance::High,
                "The new topic: ${topic} stands for the record's topic, ${timestamp} for its \
                 formatted timestamp.",
            )
            .define(
                "timestamp.format",
                ConfigType::String,
                Some(Some("yyyyMMdd")),
                None,
                Importance::High,
                "The java.text.SimpleDateFormat pattern the timestamp is written with (UTC).",
            )
    }
}

impl<R: ConnectRecord> Transformation<R> for TimestampRouter {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        self.topic_format = settings
            .string("topic.format")
            .unwrap_or_default()
            .to_string();
        self.format = JavaDateFormat::new(settings.string("timestamp.format").unwrap_or_default());
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let Some(timestamp) = record.timestamp() else {
            return Err(ConnectError::data(format!(
                "Timestamp missing on record: {}",
                record_to_string(&record)
            )));
        };
        let format = self
            .format
            .as_ref()
            .map_err(|e| ConnectError::connect(e.clone()))?;
        let topic = self
            .topic_format
            .replace("${topic}", record.topic())
            .replace("${timestamp}", &format.format(timestamp));
        Ok(Some(with_topic(record, topic)))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// A record as Connect's `toString()` shows it: `SourceRecord{…} ConnectRecord{…}` or
/// `SinkRecord{…} ConnectRecord{…}`.
fn record_to_string<R: ConnectRecord>(r: &R) -> String {
    let any: &dyn Any = r;
    let prefix = if let Some(s) = any.downcast_ref::<SourceRecord>() {
        format!(
            "SourceRecord{{sourcePartition={}, sourceOffset={}}} ",
            java_map(&s.source_partition),
            java_map(&s.source_offset)
        )
    } else if let Some(s) = any.downcast_ref::<SinkRecord>() {
        let timestamp_type = match s.timestamp_type {
            TimestampType::NoTimestampType => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        };
        format!(
            "SinkRecord{{kafkaOffset={}, timestampType={timestamp_type}, originalTopic={}, originalKafkaPartition={}, originalKafkaOffset={}}} ",
            s.kafka_offset, s.original_topic, s.original_kafka_partition, s.original_kafka_offset
        )
    } else {
        String::new()
    };
    let schema = |s: Option<&SchemaRef>| s.map_or("null".to_string(), |s| s.to_string());
    let headers: Vec<String> = r
        .headers()
        .iter()
        .map(|h| {
            format!(
                "ConnectHeader(key={}, value={}, schema={})",
                h.key,
                h.value,
                schema(h.schema.as_ref())
            )
        })
        .collect();
    format!(
        "{prefix}ConnectRecord{{topic='{}', kafkaPartition={}, key={}, keySchema={}, value={}, valueSchema={}, timestamp={}, headers=ConnectHeaders(headers={})}}",
        r.topic(),
        r.kafka_partition().map_or("null".to_string(), |p| p.to_string()),
        r.key(),
        schema(r.key_schema()),
        r.value(),
        schema(r.value_schema()),
        r.timestamp().map_or("null".to_string(), |t| t.to_string()),
        if headers.is_empty() {
            String::new()
        } else {
            format!("[{}]", headers.join(", "))
        }
    )
}

/// A source partition or offset as Java's `Map.toString()` shows it.
fn java_map(map: &serde_json::Map<String, serde_json::Value>) -> String {
    fn value(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(items) => {
                format!(
                    "[{}]",
                    items.iter().map(value).collect::<Vec<_>>().join(", ")
                )
            }
            serde_json::Value::Object(m) => java_map(m),
            other => other.to_string(),
        }
    }
    let entries: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", value(v)))
        .collect();
    format!("{{{}}}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{null, props, sink, source};
    use tributary_api::data::{Schema, Value};

    fn configured<T: Default + Transformation<SourceRecord>>(pairs: &[(&str, &str)]) -> T {
        let mut t = T::default();
        t.configure(&props(pairs)).expect("valid settings");
        t
    }

    fn config_error<T: Default + Transformation<SourceRecord>>(pairs: &[(&str, &str)]) -> String {
        T::default()
            .configure(&props(pairs))
            .unwrap_err()
            .to_string()
    }

    fn routed<T: Transformation<SourceRecord>>(t: &mut T, topic: &str) -> String {
        let r = source(
            topic,
            null(),
            (None, Value::from("v")),
            Some(1_704_104_430_123),
        );
        t.apply(r).unwrap().unwrap().topic
    }

    #[test]
    fn regex_router_rewrites_matching_topics() {
        let mut t: RegexRouter = configured(&[("regex", "(.*)-(\\d+)"), ("replacement", "$1_v$2")]);
        assert_eq!(routed(&mut t, "orders-12"), "orders_v12");
        assert_eq!(routed(&mut t, "orders"), "orders");
        assert_eq!(routed(&mut t, "orders-12x"), "orders-12x");
        let mut t: RegexRouter = configured(&[("regex", "a|ab"), ("replacement", "X")]);
        assert_eq!(routed(&mut t, "ab"), "Xb");
        let mut t: RegexRouter = configured(&[
            ("regex", "(?<name>[a-z]+)\\.raw"),
            ("replacement", "clean.${name}"),
        ]);
        assert_eq!(routed(&mut t, "users.raw"), "clean.users");
    }

    #[test]
    fn regex_router_reuses_a_topics_new_name_only_for_that_topic() {
        let mut t: RegexRouter = configured(&[("regex", "(.*)-(\\d+)"), ("replacement", "$1_v$2")]);
        for _ in 0..2 {
            assert_eq!(routed(&mut t, "a-1"), "a_v1");
            assert_eq!(routed(&mut t, "a-1"), "a_v1");
            assert_eq!(routed(&mut t, "b-2"), "b_v2");
            assert_eq!(routed(&mut t, "plain"), "plain");
        }
        // Configured anew, it forgets what it learned.
        Transformation::<SourceRecord>::configure(
            &mut t,
            &props(&[("regex", "(.*)-1"), ("replacement", "$1-one")]),
        )
        .unwrap();
        assert_eq!(routed(&mut t, "a-1"), "a-one");
    }

    #[test]
    fn regex_router_keeps_everything_but_the_topic() {
        let mut t: RegexRouter = configured(&[("regex", "t"), ("replacement", "u")]);
        let mut r = source(
            "t",
            (Some(Schema::string_schema()), Value::from("k")),
            (None, Value::from("v")),
            Some(8),
        );
        r.headers.add("h", None, Value::from("x"));
        let out = t.apply(r.clone()).unwrap().unwrap();
        assert_eq!(out.topic, "u");
        assert_eq!(
            SourceRecord {
                topic: "t".into(),
                ..out
            },
            r
        );
        let mut ts = RegexRouter::default();
        Transformation::<SinkRecord>::configure(
            &mut ts,
            &props(&[("regex", "t"), ("replacement", "u")]),
        )
        .unwrap();
        let out = ts.apply(sink("t", null(), null(), None)).unwrap().unwrap();
        assert_eq!(
            (out.topic.as_str(), out.original_topic.as_str()),
            ("u", "t")
        );
    }

    #[test]
    fn regex_router_errors() {
        assert_eq!(
            config_error::<RegexRouter>(&[("replacement", "x")]),
            "Missing required configuration \"regex\" which has no default value."
        );
        assert_eq!(
            config_error::<RegexRouter>(&[("regex", "x")]),
            "Missing required configuration \"replacement\" which has no default value."
        );
        assert!(
            config_error::<RegexRouter>(&[("regex", "(x"), ("replacement", "y")])
                .starts_with("Invalid value (x for configuration regex: Invalid regex: ")
        );
        let mut t: RegexRouter = configured(&[("regex", "(a)"), ("replacement", "$2")]);
        let err = t.apply(source("a", null(), null(), None)).unwrap_err();
        assert_eq!(err.to_string(), "No group 2");
        // A topic that does not match never reaches the replacement.
        assert_eq!(routed(&mut t, "b"), "b");
    }

    #[test]
    fn timestamp_router_defaults() {
        let mut t: TimestampRouter = configured(&[]);
        assert_eq!(routed(&mut t, "orders"), "orders-20240101");
        let mut ts = TimestampRouter::default();
        Transformation::<SinkRecord>::configure(&mut ts, &props(&[])).unwrap();
        let out = ts
            .apply(sink("logs", null(), null(), Some(0)))
            .unwrap()
            .unwrap();
        assert_eq!(out.topic, "logs-19700101");
        assert_eq!(out.kafka_offset, 42);
        let def = TimestampRouter::config_def();
        assert_eq!(
            def.key("topic.format").unwrap().default,
            Some(Some("${topic}-${timestamp}".to_string()))
        );
        assert_eq!(
            def.key("timestamp.format").unwrap().default,
            Some(Some("yyyyMMdd".to_string()))
        );
    }

    #[test]
    fn timestamp_router_formats() {
        let mut t: TimestampRouter = configured(&[
            ("topic.format", "${timestamp}.${topic}.${topic}"),
            ("timestamp.format", "yyyy-MM-dd'T'HH"),
        ]);
        assert_eq!(routed(&mut t, "a"), "2024-01-01T10.a.a");
        let mut t: TimestampRouter = configured(&[("topic.format", "fixed")]);
        assert_eq!(routed(&mut t, "a"), "fixed");
    }

    #[test]
    fn timestamp_router_errors() {
        let mut t: TimestampRouter = configured(&[]);
        let err = t
            .apply(source("t", null(), (None, Value::from("v")), None))
            .unwrap_err();
        assert!(matches!(err, ConnectError::Data(_)));
        assert_eq!(
            err.to_string(),
            "Timestamp missing on record: SourceRecord{sourcePartition={file=f}, \
             sourceOffset={position=7}} ConnectRecord{topic='t', kafkaPartition=3, key=null, \
             keySchema=null, value=v, valueSchema=null, timestamp=null, \
             headers=ConnectHeaders(headers=)}"
        );
        let mut s = sink(
            "t",
            (Some(Schema::string_schema()), Value::from("k")),
            null(),
            None,
        );
        s.headers
            .add("h", Some(Schema::string_schema()), Value::from("x"));
        let err =
            Transformation::<SinkRecord>::apply(&mut TimestampRouter::default(), s).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Timestamp missing on record: SinkRecord{kafkaOffset=42, timestampType=CreateTime, \
             originalTopic=t, originalKafkaPartition=1, originalKafkaOffset=42} \
             ConnectRecord{topic='t', kafkaPartition=1, key=k, keySchema=Schema{STRING}, \
             value=null, valueSchema=null, timestamp=null, headers=ConnectHeaders(headers=[\
             ConnectHeader(key=h, value=x, schema=Schema{STRING})])}"
        );
        let mut t: TimestampRouter = configured(&[("timestamp.format", "yyyyq")]);
        let err = t.apply(source("t", null(), null(), Some(1))).unwrap_err();
        assert_eq!(err.to_string(), "Illegal pattern character 'q'");
    }
}
