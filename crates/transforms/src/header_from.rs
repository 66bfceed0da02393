//! `org.apache.kafka.connect.transforms.HeaderFrom$Key` / `$Value` (KIP-145): copies or moves
//! fields of the key or value into headers.

use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Validator};
use tributary_api::data::{Field, Schema, SchemaRef, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::{
    check_non_empty_lists, copy_schema_basics, field_value, non_empty_list, require_map,
    require_struct, PartMarker, Settings,
};

/// Whether the fields stay in the key or value (`copy`) or leave it (`move`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Operation {
    #[default]
    Copy,
    Move,
}

/// Connect's `HeaderFrom$Key` (`HeaderFrom<KeyPart>`) and `HeaderFrom$Value`
/// (`HeaderFrom<ValuePart>`): for each position `i`, the field `fields[i]` of the key or value
/// becomes a header named `headers[i]`, appended to the record's headers.
///
/// Settings: `fields` (LIST, required, not empty), `headers` (LIST, required, not empty, as
/// many names as `fields`), `operation` (`move` or `copy`, required) and
/// `replace.null.with.default` (BOOLEAN, default true: a null field with a default gives the
/// default).
///
/// With a schema the key or value must be a struct; a header gets the field's schema and
/// `move` leaves a struct whose schema keeps the name, version, doc and parameters but not the
/// optionality or default of the original. Without a schema the key or value must be a map;
/// a missing entry gives a null header without schema. Either way a null key or value is an
/// error, as in Connect (select records with a predicate to skip tombstones).
pub struct HeaderFrom<P: PartMarker> {
    fields: Vec<String>,
    headers: Vec<String>,
    operation: Operation,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for HeaderFrom<P> {
    fn default() -> Self {
        HeaderFrom {
            fields: Vec::new(),
            headers: Vec::new(),
            operation: Operation::Copy,
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker> HeaderFrom<P> {
    /// The settings: `fields`, `headers`, `operation`, `replace.null.with.default`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                "fields",
                ConfigType::List,
                None,
                Some(non_empty_list()),
                Importance::High,
                "The fields of the key or value to turn into headers.",
            )
            .define(
                "headers",
                ConfigType::List,
                None,
                Some(non_empty_list()),
                Importance::High,
                "The header names, one for each field of `fields`, in the same order.",
            )
            .define(
                "operation",
                ConfigType::String,
                None,
                Some(Validator::OneOf(vec!["move".into(), "copy".into()])),
                Importance::High,
                "`move` to take the fields out of the key or value, `copy` to leave them there.",
            )
            .define(
                "replace.null.with.default",
                ConfigType::Boolean,
                Some(Some("true")),
                None,
                Importance::Medium,
                "Whether a null field that has a default value gives that default (true) or \
                 null (false).",
            )
    }

    /// Connect's purpose text for this operation, used in error messages.
    fn purpose(&self) -> &'static str {
        match self.operation {
            Operation::Move => "header move",
            Operation::Copy => "header copy",
        }
    }

    fn apply_with_schema<R: ConnectRecord>(
        &self,
        record: &R,
        schema: &SchemaRef,
    ) -> ConnectResult<R> {
        let mut headers = record.headers().clone();
        let value = require_struct(P::PART.value(record), self.purpose())?;
        let (new_schema, new_value) = match self.operation {
            Operation::Move => {
                let moved = self.moved_schema(schema);
                let mut out = Struct::new(moved.clone())?;
                for field in &moved.fields {
                    let v = match value.schema().field(&field.name) {
                        Some(f) => field_value(value, f, self.replace_null_with_default),
                        None => Value::Null,
                    };
                    out = out.put(&field.name, v)?;
                }
                (moved, Value::Struct(out))
            }
            Operation::Copy => (schema.clone(), Value::Struct(value.clone())),
        };
        for (field_name, header_name) in self.fields.iter().zip(&self.headers) {
            let field_value = match value.schema().field(field_name) {
                Some(f) => field_value(value, f, self.replace_null_with_default),
                None => Value::Null,
            };
            let field_schema = schema.field(field_name).map(|f| f.schema.clone()).ok_or_else(|| {
                // Connect dereferences the missing field (a NullPointerException).
                ConnectError::connect(
                    "Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the \
                     return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null",
                )
            })?;
            if field_value.is_null() && !field_schema.optional {
                return Err(ConnectError::data(format!(
                    "A null value requires an optional schema but was {field_schema}"
                )));
            }
            headers.add(header_name.clone(), Some(field_schema), field_value);
        }
        Ok(replace_part::<P, R>(
            record,
            Some(new_schema),
            new_value,
            headers,
        ))
    }

    /// The struct schema without the moved fields; name, version, doc and parameters kept.
    fn moved_schema(&self, schema: &Schema) -> SchemaRef {
        let mut moved = Arc::unwrap_or_clone(
            copy_schema_basics(schema, tributary_api::data::SchemaBuilder::struct_()).build(),
        );
        let kept = schema
            .fields
            .iter()
            .filter(|f| !self.fields.contains(&f.name));
        for (index, f) in kept.enumerate() {
            moved.fields.push(Field {
                name: f.name.clone(),
                index,
                schema: f.schema.clone(),
            });
        }
        Arc::new(moved)
    }

    fn apply_schemaless<R: ConnectRecord>(&self, record: &R) -> ConnectResult<R> {
        let mut headers = record.headers().clone();
        let entries = require_map(P::PART.value(record), self.purpose())?;
        let mut updated = entries.to_vec();
        for (field_name, header_name) in self.fields.iter().zip(&self.headers) {
            let v = crate::util::map_get(entries, field_name)
                .cloned()
                .unwrap_or(Value::Null);
            if self.operation == Operation::Move {
                updated.retain(|(k, _)| k.as_str() != Some(field_name.as_str()));
            }
            headers.add(header_name.clone(), None, v);
        }
        Ok(replace_part::<P, R>(
            record,
            None,
            Value::Map(updated),
            headers,
        ))
    }
}

/// The record with its key or value (per `P`) and its headers replaced.
fn replace_part<P: PartMarker, R: ConnectRecord>(
    record: &R,
    schema: Option<SchemaRef>,
    value: Value,
    headers: tributary_api::record::Headers,
) -> R {
    let mut out = record.clone();
    P::PART.set(&mut out, schema, value);
    *out.headers_mut() = headers;
    out
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for HeaderFrom<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&Self::config_def(), props, check_non_empty_lists)?;
        let fields = settings.list("fields").to_vec();
        let headers = settings.list("headers").to_vec();
        if fields.len() != headers.len() {
            return Err(ConnectError::config(
                "'fields' config must have the same number of elements as 'headers' config.",
            ));
        }
        self.fields = fields;
        self.headers = headers;
        self.operation = match settings.string("operation") {
            Some("move") => Operation::Move,
            _ => Operation::Copy,
        };
        self.replace_null_with_default = settings.boolean("replace.null.with.default");
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let out = match P::PART.schema(&record).cloned() {
            Some(schema) => self.apply_with_schema(&record, &schema)?,
            None => self.apply_schemaless(&record)?,
        };
        Ok(Some(out))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{map, null, props, sink, source};
    use crate::util::{KeyPart, ValuePart};
    use tributary_api::data::SchemaBuilder;
    use tributary_api::record::{Header, SinkRecord, SourceRecord};

    fn configured<T: Default + Transformation<SourceRecord>>(pairs: &[(&str, &str)]) -> T {
        let mut t = T::default();
        t.configure(&props(pairs)).expect("valid settings");
        t
    }

    fn config_error(pairs: &[(&str, &str)]) -> String {
        let mut t = HeaderFrom::<ValuePart>::default();
        Transformation::<SourceRecord>::configure(&mut t, &props(pairs))
            .unwrap_err()
            .to_string()
    }

    fn header(key: &str, schema: Option<SchemaRef>, value: Value) -> Header {
        Header {
            key: key.into(),
            schema,
            value,
        }
    }

    /// A struct schema `s` (version 2, doc, optional) with `a` INT32, `b` optional STRING and
    /// `c` INT64 defaulting to 9.
    fn schema() -> SchemaRef {
        SchemaBuilder::struct_()
            .name("s")
            .version(2)
            .doc("d")
            .optional()
            .field("a", Schema::int32_schema())
            .unwrap()
            .field("b", Schema::optional_string_schema())
            .unwrap()
            .field(
                "c",
                SchemaBuilder::int64()
                    .default_value(Value::Int64(9))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build()
    }

    fn value(schema: &SchemaRef) -> Value {
        Value::Struct(
            Struct::new(schema.clone())
                .unwrap()
                .put("a", 1)
                .unwrap()
                .put("b", "x")
                .unwrap(),
        )
    }

    #[test]
    fn copy_with_schema_keeps_the_value() {
        let mut t: HeaderFrom<ValuePart> = configured(&[
            ("fields", "a,c"),
            ("headers", "ha,hc"),
            ("operation", "copy"),
        ]);
        let s = schema();
        let mut r = source("t", null(), (Some(s.clone()), value(&s)), Some(4));
        r.headers.add("old", None, Value::Null);
        let out = t.apply(r.clone()).unwrap().unwrap();
        assert_eq!(out.value_schema, Some(s.clone()));
        assert_eq!(out.value, r.value);
        assert_eq!(
            out.headers.0,
            vec![
                header("old", None, Value::Null),
                header("ha", Some(Schema::int32_schema()), Value::Int32(1)),
                header("hc", Some(s.fields[2].schema.clone()), Value::Int64(9)),
            ]
        );
        assert_eq!((out.timestamp, out.kafka_partition), (Some(4), Some(3)));
    }

    #[test]
    fn move_with_schema_drops_the_fields_and_the_optionality() {
        let mut t: HeaderFrom<ValuePart> =
            configured(&[("fields", "b"), ("headers", "hb"), ("operation", "move")]);
        let s = schema();
        let out = t
            .apply(source("t", null(), (Some(s.clone()), value(&s)), None))
            .unwrap()
            .unwrap();
        let moved = out.value_schema.clone().unwrap();
        assert_eq!(moved.name.as_deref(), Some("s"));
        assert_eq!((moved.version, moved.doc.as_deref()), (Some(2), Some("d")));
        assert!(!moved.optional);
        let names: Vec<_> = moved.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        let Value::Struct(st) = &out.value else {
            panic!("struct expected")
        };
        assert_eq!(st.get("a"), Some(&Value::Int32(1)));
        // The default was written as the field's value.
        assert_eq!(st.get_by_index(1), &Value::Int64(9));
        assert_eq!(
            out.headers.0,
            vec![header(
                "hb",
                Some(Schema::optional_string_schema()),
                Value::from("x")
            )]
        );
    }

    #[test]
    fn without_default_replacement_a_null_required_field_fails() {
        let mut t: HeaderFrom<ValuePart> = configured(&[
            ("fields", "c"),
            ("headers", "hc"),
            ("operation", "copy"),
            ("replace.null.with.default", "false"),
        ]);
        let s = schema();
        let err = t
            .apply(source("t", null(), (Some(s.clone()), value(&s)), None))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "A null value requires an optional schema but was Schema{INT64}"
        );
        let mut t: HeaderFrom<ValuePart> = configured(&[
            ("fields", "a"),
            ("headers", "ha"),
            ("operation", "move"),
            ("replace.null.with.default", "false"),
        ]);
        let err = t
            .apply(source("t", null(), (Some(s.clone()), value(&s)), None))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value: null used for required field: \"c\", schema type: INT64"
        );
    }

    #[test]
    fn a_missing_field_with_schema_fails() {
        let mut t: HeaderFrom<ValuePart> =
            configured(&[("fields", "zz"), ("headers", "h"), ("operation", "copy")]);
        let s = schema();
        let err = t
            .apply(source("t", null(), (Some(s.clone()), value(&s)), None))
            .unwrap_err();
        assert!(err.to_string().contains("Schema.field(String)\" is null"));
    }

    #[test]
    fn schemaless_maps() {
        let mut t: HeaderFrom<ValuePart> = configured(&[
            ("fields", "a,missing"),
            ("headers", "ha,hm"),
            ("operation", "move"),
        ]);
        let v = map(&[("a", Value::Int32(1)), ("b", Value::from("x"))]);
        let out = t
            .apply(source("t", null(), (None, v), None))
            .unwrap()
            .unwrap();
        assert_eq!(out.value, map(&[("b", Value::from("x"))]));
        assert_eq!(out.value_schema, None);
        assert_eq!(
            out.headers.0,
            vec![
                header("ha", None, Value::Int32(1)),
                header("hm", None, Value::Null)
            ]
        );
        let mut t: HeaderFrom<ValuePart> =
            configured(&[("fields", "a"), ("headers", "ha"), ("operation", "copy")]);
        let v = map(&[("a", Value::Int32(1))]);
        let out = t
            .apply(source("t", null(), (None, v.clone()), None))
            .unwrap()
            .unwrap();
        assert_eq!(out.value, v);
    }

    #[test]
    fn null_and_wrong_values_fail_as_in_connect() {
        let mut t: HeaderFrom<ValuePart> =
            configured(&[("fields", "a"), ("headers", "ha"), ("operation", "move")]);
        let err = t.apply(source("t", null(), null(), None)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [header move], found: null"
        );
        let s = schema();
        let err = t
            .apply(source("t", null(), (Some(s), Value::Null), None))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Struct objects supported for [header move], found: null"
        );
        let mut t: HeaderFrom<ValuePart> =
            configured(&[("fields", "a"), ("headers", "ha"), ("operation", "copy")]);
        let err = t
            .apply(source("t", null(), (None, Value::from("text")), None))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [header copy], found: java.lang.String"
        );
    }

    #[test]
    fn the_key_variant_works_on_keys() {
        let mut t = HeaderFrom::<KeyPart>::default();
        Transformation::<SinkRecord>::configure(
            &mut t,
            &props(&[
                ("fields", "id"),
                ("headers", "key-id"),
                ("operation", "move"),
            ]),
        )
        .unwrap();
        let key = map(&[("id", Value::Int64(7)), ("k", Value::from("v"))]);
        let value = (None, Value::from("payload"));
        let out = t
            .apply(sink("t", (None, key), value.clone(), Some(1)))
            .unwrap()
            .unwrap();
        assert_eq!(out.key, map(&[("k", Value::from("v"))]));
        assert_eq!(out.value, value.1);
        assert_eq!(out.headers.0, vec![header("key-id", None, Value::Int64(7))]);
        assert_eq!(out.kafka_offset, 42);
    }

    #[test]
    fn settings_are_checked() {
        assert_eq!(
            config_error(&[("headers", "h"), ("operation", "copy")]),
            "Missing required configuration \"fields\" which has no default value."
        );
        assert_eq!(
            config_error(&[("fields", ""), ("headers", "h"), ("operation", "copy")]),
            "Invalid value [] for configuration fields: Empty list"
        );
        assert_eq!(
            config_error(&[("fields", "a"), ("headers", "h"), ("operation", "swap")]),
            "Invalid value swap for configuration operation: String must be one of: move, copy"
        );
        assert_eq!(
            config_error(&[("fields", "a,b"), ("headers", "h"), ("operation", "copy")]),
            "'fields' config must have the same number of elements as 'headers' config."
        );
        let def = HeaderFrom::<KeyPart>::config_def();
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fields",
                "headers",
                "operation",
                "replace.null.with.default"
            ]
        );
        assert_eq!(
            def.key("replace.null.with.default").unwrap().default,
            Some(Some("true".to_string()))
        );
    }
}
