//! Connect's header transformations `InsertHeader` and `DropHeaders`
//! (`org.apache.kafka.connect.transforms.*`, KIP-145). `HeaderFrom` is in
//! [`crate::header_from`].

use std::collections::HashSet;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::values::parse_string;
use tributary_api::data::SchemaAndValue;
use tributary_api::record::Headers;
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectResult, Props};

use crate::util::{check_non_empty_lists, non_empty_list, Settings};

/// The record with its headers replaced and everything else kept.
pub(crate) fn with_headers<R: ConnectRecord>(record: &R, headers: Headers) -> R {
    record.new_record(
        record.topic().to_string(),
        record.kafka_partition(),
        record.key_schema().cloned(),
        record.key().clone(),
        record.value_schema().cloned(),
        record.value().clone(),
        record.timestamp(),
        headers,
    )
}

/// `org.apache.kafka.connect.transforms.InsertHeader`: appends the header `header` to every
/// record (existing headers, even of the same name, stay).
///
/// Settings: `header` (STRING, required), the header's name; `value.literal` (STRING,
/// required), its value, read as Connect's `Values.parseString` reads text
/// ([`tributary_api::data::values::parse_string`]): `42` becomes an INT8 header, `true` a
/// BOOLEAN, `2024-01-31` a Date, `[1,2]` an array, `null` a null value without schema,
/// anything else a STRING.
#[derive(Debug, Clone)]
pub struct InsertHeader {
    header: String,
    literal: SchemaAndValue,
}

impl Default for InsertHeader {
    fn default() -> Self {
        InsertHeader {
            header: String::new(),
            literal: SchemaAndValue::null(),
        }
    }
}

impl InsertHeader {
    /// The settings: `header` and `value.literal`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                "header",
                ConfigType::String,
                None,
                None,
                Importance::High,
                "The name of the header to add.",
            )
            .define(
                "value.literal",
                ConfigType::String,
                None,
                None,
                Importance::High,
                "The value of the added header, read as Connect reads header text: numbers, \
                 booleans, ISO dates and times, arrays and maps get their type, anything else \
                 is a string.",
            )
    }
}

impl<R: ConnectRecord> Transformation<R> for InsertHeader {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        self.header = settings.string("header").unwrap_or_default().to_string();
        self.literal = parse_string(settings.string("value.literal").unwrap_or_default());
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let mut headers = record.headers().clone();
        headers.add(
            self.header.clone(),
            self.literal.schema.clone(),
            self.literal.value.clone(),
        );
        Ok(Some(with_headers(&record, headers)))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// `org.apache.kafka.connect.transforms.DropHeaders`: removes every header whose name is
/// listed; the others keep their order.
///
/// Settings: `headers` (LIST, required, not empty), the names to remove.
#[derive(Debug, Clone, Default)]
pub struct DropHeaders {
    names: HashSet<String>,
}

impl DropHeaders {
    /// The settings: `headers`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(
            "headers",
            ConfigType::List,
            None,
            Some(non_empty_list()),
            Importance::High,
            "The names of the headers to remove.",
        )
    }
}

impl<R: ConnectRecord> Transformation<R> for DropHeaders {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&Self::config_def(), props, check_non_empty_lists)?;
        self.names = settings.list("headers").iter().cloned().collect();
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let kept = record
            .headers()
            .iter()
            .filter(|h| !self.names.contains(&h.key))
            .cloned()
            .collect();
        Ok(Some(with_headers(&record, Headers(kept))))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{null, props, sink, source};
    use tributary_api::data::{Date, Decimal, Schema, SchemaType, Value};
    use tributary_api::record::{Header, SinkRecord, SourceRecord};

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

    fn header(key: &str, schema: Option<tributary_api::data::SchemaRef>, value: Value) -> Header {
        Header {
            key: key.into(),
            schema,
            value,
        }
    }

    /// The header the literal gives, added to a record without headers.
    fn inserted(literal: &str) -> Header {
        let mut t: InsertHeader = configured(&[("header", "h"), ("value.literal", literal)]);
        let r = source("t", null(), null(), None);
        let out = t.apply(r).unwrap().unwrap();
        assert_eq!(out.headers.len(), 1);
        out.headers.0[0].clone()
    }

    #[test]
    fn insert_header_types_the_literal_as_connect_does() {
        assert_eq!(
            inserted("hello"),
            header("h", Some(Schema::string_schema()), Value::from("hello"))
        );
        assert_eq!(
            inserted("42"),
            header("h", Some(Schema::int8_schema()), Value::Int8(42))
        );
        assert_eq!(
            inserted("true"),
            header("h", Some(Schema::boolean_schema()), Value::Boolean(true))
        );
        assert_eq!(
            inserted("1.5"),
            header("h", Some(Schema::float32_schema()), Value::Float32(1.5))
        );
        assert_eq!(inserted("null"), header("h", None, Value::Null));
        assert_eq!(
            inserted("2024-01-01"),
            header("h", Some(Date::schema()), Value::Date(19723))
        );
        assert_eq!(
            inserted("12345678901234567890"),
            header(
                "h",
                Some(Decimal::schema(0)),
                Value::Decimal(Decimal::parse("12345678901234567890").unwrap())
            )
        );
        let list = inserted("[1,2]");
        assert_eq!(list.schema.as_ref().unwrap().schema_type, SchemaType::Array);
        assert_eq!(
            list.value,
            Value::Array(vec![Value::Int8(1), Value::Int8(2)])
        );
        // Settings are trimmed, as Connect trims STRING settings.
        assert_eq!(
            inserted("  7 "),
            header("h", Some(Schema::int8_schema()), Value::Int8(7))
        );
        assert_eq!(
            inserted(""),
            header("h", Some(Schema::string_schema()), Value::from(""))
        );
    }

    #[test]
    fn insert_header_appends_and_keeps_the_rest_of_the_record() {
        let mut t: InsertHeader = configured(&[("header", "h"), ("value.literal", "x")]);
        let mut r = source(
            "t",
            (Some(Schema::string_schema()), Value::from("k")),
            (None, Value::from("v")),
            Some(5),
        );
        r.headers.add("h", None, Value::from("old"));
        let out = t.apply(r.clone()).unwrap().unwrap();
        assert_eq!(
            out.headers.0,
            vec![
                header("h", None, Value::from("old")),
                header("h", Some(Schema::string_schema()), Value::from("x"))
            ]
        );
        assert_eq!(
            (out.topic.as_str(), out.kafka_partition, out.timestamp),
            ("t", Some(3), Some(5))
        );
        assert_eq!((&out.key, &out.value), (&r.key, &r.value));
        assert_eq!(out.source_offset, r.source_offset);

        let mut ts = InsertHeader::default();
        Transformation::<SinkRecord>::configure(
            &mut ts,
            &props(&[("header", "h"), ("value.literal", "x")]),
        )
        .unwrap();
        let s = sink("t", null(), null(), Some(9));
        let out = ts.apply(s).unwrap().unwrap();
        assert_eq!(out.kafka_offset, 42);
        assert_eq!(out.headers.len(), 1);
    }

    #[test]
    fn insert_header_settings() {
        assert_eq!(
            config_error::<InsertHeader>(&[("value.literal", "x")]),
            "Missing required configuration \"header\" which has no default value."
        );
        assert_eq!(
            config_error::<InsertHeader>(&[("header", "h")]),
            "Missing required configuration \"value.literal\" which has no default value."
        );
        let def = Transformation::<SourceRecord>::config(&InsertHeader::default());
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["header", "value.literal"]);
        assert!(def
            .keys
            .iter()
            .all(|k| k.required() && k.importance == Importance::High));
    }

    #[test]
    fn drop_headers_removes_the_listed_names() {
        let mut t: DropHeaders = configured(&[("headers", "a, c")]);
        let mut r = source("t", null(), null(), None);
        for k in ["a", "b", "c", "a", "d"] {
            r.headers.add(k, None, Value::from(k));
        }
        let out = t.apply(r).unwrap().unwrap();
        let keys: Vec<_> = out.headers.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(keys, ["b", "d"]);
        let out = t.apply(source("t", null(), null(), None)).unwrap().unwrap();
        assert!(out.headers.is_empty());

        let mut ts = DropHeaders::default();
        Transformation::<SinkRecord>::configure(&mut ts, &props(&[("headers", "x")])).unwrap();
        let mut s = sink("t", null(), null(), None);
        s.headers.add("x", None, Value::Null);
        s.headers.add("y", None, Value::Null);
        let out = ts.apply(s).unwrap().unwrap();
        assert_eq!(out.headers.0, vec![header("y", None, Value::Null)]);
    }

    #[test]
    fn drop_headers_needs_names() {
        assert_eq!(
            config_error::<DropHeaders>(&[]),
            "Missing required configuration \"headers\" which has no default value."
        );
        assert_eq!(
            config_error::<DropHeaders>(&[("headers", " ")]),
            "Invalid value [] for configuration headers: Empty list"
        );
        let def = Transformation::<SourceRecord>::config(&DropHeaders::default());
        assert_eq!(def.key("headers").unwrap().config_type, ConfigType::List);
    }
}
