//! `MaskField`: replaces the values of chosen fields with an empty value of their type or a
//! configured replacement.

use std::collections::HashSet;
use std::marker::PhantomData;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Validator};
use tributary_api::data::{Decimal, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_compat::{
    as_logical, decimal_double_value, decimal_long_value, java_class, parse_big_decimal,
};
use crate::util::{
    check_non_empty_lists, field_value, map_get, map_put, non_empty_list, require_map,
    require_struct, PartMarker, Settings,
};

const FIELDS: &str = "fields";
const REPLACEMENT: &str = "replacement";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "mask fields";

/// The settings of `MaskField` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            FIELDS,
            ConfigType::List,
            None,
            Some(non_empty_list()),
            Importance::High,
            "The fields to mask.",
        )
        .define(
            REPLACEMENT,
            ConfigType::String,
            Some(None),
            Some(Validator::NonEmptyString),
            Importance::Low,
            "A replacement for every masked value, converted to the field's type (numbers and strings only).",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a field is null and its schema has a default, whether the default (true) or null (false) is kept or masked.",
        )
}

/// Masks fields of a struct (schema) or map (schemaless) key or value: each listed field's
/// value becomes the empty value of its type (`false`, `0` of the same width, `0.0`, `""`, a
/// zero decimal, the epoch for dates and times, an empty array or map), or, with
/// `replacement`, that text converted to the field's type (integers, floats, decimals and
/// strings only). Null values stay null; bytes and structs cannot be masked.
///
/// Follows `org.apache.kafka.connect.transforms.MaskField$Key` / `$Value`. Settings: `fields`
/// (a non-empty list), `replacement` (optional, non-empty) and `replace.null.with.default`
/// (default true). The schema is kept. As in Connect, a listed field missing from a map is
/// added with a null value, and a null key or value (tombstone) is not passed through: it fails
/// with `Only Map objects supported in absence of schema for [mask fields], found: null` (or the
/// Struct message with a schema).
pub struct MaskField<P: PartMarker> {
    fields: Vec<String>,
    replacement: Option<String>,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for MaskField<P> {
    fn default() -> Self {
        MaskField {
            fields: Vec::new(),
            replacement: None,
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

/// The empty value of the value's type.
fn empty_of(value: &Value) -> ConnectResult<Value> {
    Ok(match value {
        Value::Boolean(_) => Value::Boolean(false),
        Value::Int8(_) => Value::Int8(0),
        Value::Int16(_) => Value::Int16(0),
        Value::Int32(_) => Value::Int32(0),
        Value::Int64(_) => Value::Int64(0),
        Value::Float32(_) => Value::Float32(0.0),
        Value::Float64(_) => Value::Float64(0.0),
        Value::Decimal(_) => Value::Decimal(Decimal::new(0, 0)),
        Value::Date(_) => Value::Date(0),
        Value::Time(_) => Value::Time(0),
        Value::Timestamp(_) => Value::Timestamp(0),
        Value::String(_) => Value::String(String::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Map(_) => Value::Map(Vec::new()),
        other => {
            return Err(ConnectError::data(format!(
                "Cannot mask value of type: {}",
                java_class(other)
            )))
        }
    })
}

/// `replacement` converted to the value's type, as Connect's `Values.convertTo…` do for
/// integers and floats (through `BigDecimal`, so `"1.9"` gives 1 and out-of-range integers
/// wrap), and `new BigDecimal(replacement)` for decimals.
fn replaced(value: &Value, replacement: &str) -> ConnectResult<Value> {
    let number = || {
        parse_big_decimal(replacement).ok_or_else(|| {
            ConnectError::data(format!(
                "Unable to convert {replacement} (class java.lang.String) to a number"
            ))
        })
    };
    Ok(match value {
        Value::Int8(_) => Value::Int8(decimal_long_value(&number()?) as i8),
        Value::Int16(_) => Value::Int16(decimal_long_value(&number()?) as i16),
        Value::Int32(_) => Value::Int32(decimal_long_value(&number()?) as i32),
        Value::Int64(_) => Value::Int64(decimal_long_value(&number()?)),
        Value::Float32(_) => Value::Float32(decimal_double_value(&number()?) as f32),
        Value::Float64(_) => Value::Float64(decimal_double_value(&number()?)),
        Value::String(_) => Value::String(replacement.to_string()),
        Value::Decimal(_) => Value::Decimal(parse_big_decimal(replacement).ok_or_else(|| {
            ConnectError::data(format!(
                "Unable to convert {replacement} (class java.lang.String) to number"
            ))
        })?),
        other => {
            return Err(ConnectError::data(format!(
                "Cannot mask value of type {} with custom replacement.",
                java_class(other)
            )))
        }
    })
}

impl<P: PartMarker> MaskField<P> {
    fn masked(&self, value: &Value) -> ConnectResult<Value> {
        if value.is_null() {
            return Ok(Value::Null);
        }
        match &self.replacement {
            Some(r) => replaced(value, r),
            None => empty_of(value),
        }
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for MaskField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&config_def(), props, check_non_empty_lists)?;
        let mut seen = HashSet::new();
        self.fields = settings
            .list(FIELDS)
            .iter()
            .filter(|f| seen.insert(f.as_str()))
            .cloned()
            .collect();
        self.replacement = settings.string(REPLACEMENT).map(str::to_string);
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        let updated = match P::PART.schema(&record) {
            None => {
                let entries = require_map(value, PURPOSE)?;
                let mut updated = entries.to_vec();
                for f in &self.fields {
                    let masked = self.masked(map_get(entries, f).unwrap_or(&Value::Null))?;
                    map_put(&mut updated, f, masked);
                }
                Value::Map(updated)
            }
            Some(_) => {
                let value = require_struct(value, PURPOSE)?;
                let mut updated = Struct::new(value.schema().clone())?;
                for field in &value.schema().fields {
                    let orig = field_value(value, field, self.replace_null_with_default);
                    let v = if self.fields.contains(&field.name) {
                        self.masked(&as_logical(&field.schema, &orig)?)?
                    } else {
                        orig
                    };
                    updated = updated.put(&field.name, v)?;
                }
                Value::Struct(updated)
            }
        };
        let schema = P::PART.schema(&record).cloned();
        Ok(Some(P::PART.replace(record, schema, updated)))
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use crate::util::{KeyPart, ValuePart};
    use tributary_api::data::{Date, Schema, SchemaBuilder, SchemaRef, Time, Timestamp};

    fn schema() -> SchemaRef {
        let mut b = SchemaBuilder::struct_();
        for (name, s) in [
            ("magic", Schema::int32_schema()),
            ("bool", Schema::boolean_schema()),
            ("byte", Schema::int8_schema()),
            ("short", Schema::int16_schema()),
            ("int", Schema::int32_schema()),
            ("long", Schema::int64_schema()),
            ("float", Schema::float32_schema()),
            ("double", Schema::float64_schema()),
            ("string", Schema::string_schema()),
            ("date", Date::schema()),
            ("time", Time::schema()),
            ("timestamp", Timestamp::schema()),
            ("decimal", Decimal::schema(0)),
            (
                "array",
                SchemaBuilder::array(Schema::int32_schema()).build(),
            ),
            (
                "map",
                SchemaBuilder::map(Schema::string_schema(), Schema::string_schema()).build(),
            ),
            (
                "withDefault",
                SchemaBuilder::string()
                    .optional()
                    .default_value(Value::from("default"))
                    .unwrap()
                    .build(),
            ),
        ] {
            b = b.field(name, s).unwrap();
        }
        b.build()
    }

    fn values() -> Vec<(&'static str, Value)> {
        vec![
            ("magic", Value::Int32(42)),
            ("bool", Value::Boolean(true)),
            ("byte", Value::Int8(42)),
            ("short", Value::Int16(42)),
            ("int", Value::Int32(42)),
            ("long", Value::Int64(42)),
            ("float", Value::Float32(42.0)),
            ("double", Value::Float64(42.0)),
            ("string", Value::from("hmm")),
            ("date", Value::Date(19_000)),
            ("time", Value::Time(1000)),
            ("timestamp", Value::Timestamp(1_700_000_000_000)),
            ("decimal", Value::Decimal(Decimal::new(42, 0))),
            (
                "array",
                Value::Array(vec![Value::Int32(1), Value::Int32(2)]),
            ),
            ("map", map(&[("what", Value::from("what"))])),
        ]
    }

    fn struct_value() -> Value {
        let mut s = Struct::new(schema()).unwrap();
        for (k, v) in values() {
            s = s.put(k, v).unwrap();
        }
        Value::Struct(s)
    }

    fn all_but_magic() -> String {
        schema()
            .fields
            .iter()
            .filter(|f| f.name != "magic")
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn struct_fields_get_the_empty_value_of_their_type() {
        let fields = all_but_magic();
        let mut t: MaskField<ValuePart> =
            configured(&[("fields", &fields), ("replace.null.with.default", "false")]);
        let out = apply(&mut t, source_value(Some(schema()), struct_value())).unwrap();
        assert_eq!(out.value_schema, Some(schema()));
        let s = as_struct(&out.value);
        let want = [
            ("magic", Value::Int32(42)),
            ("bool", Value::Boolean(false)),
            ("byte", Value::Int8(0)),
            ("short", Value::Int16(0)),
            ("int", Value::Int32(0)),
            ("long", Value::Int64(0)),
            ("float", Value::Float32(0.0)),
            ("double", Value::Float64(0.0)),
            ("string", Value::from("")),
            ("date", Value::Date(0)),
            ("time", Value::Time(0)),
            ("timestamp", Value::Timestamp(0)),
            ("decimal", Value::Decimal(Decimal::new(0, 0))),
            ("array", Value::Array(vec![])),
            ("map", Value::Map(vec![])),
            ("withDefault", Value::Null),
        ];
        for (k, v) in want {
            assert_eq!(
                s.get_by_index(s.schema().field(k).unwrap().index),
                &v,
                "{k}"
            );
        }
        // With defaults replacing null, the default is what gets masked.
        let mut t: MaskField<ValuePart> = configured(&[("fields", "withDefault")]);
        let out = apply(&mut t, source_value(Some(schema()), struct_value())).unwrap();
        assert_eq!(
            as_struct(&out.value).get("withDefault"),
            Some(&Value::from(""))
        );
    }

    #[test]
    fn map_entries_are_masked_and_missing_ones_added_as_null() {
        let mut entries = values();
        entries.push(("bigdec", Value::Decimal(Decimal::new(420, 1))));
        let v = map(&entries);
        let mut t: MaskField<KeyPart> = configured(&[("fields", "int,string,bigdec,array,absent")]);
        let out = apply(&mut t, source_key(None, v)).unwrap();
        let Value::Map(m) = &out.key else { panic!() };
        assert_eq!(map_get(m, "magic"), Some(&Value::Int32(42)));
        assert_eq!(map_get(m, "int"), Some(&Value::Int32(0)));
        assert_eq!(map_get(m, "string"), Some(&Value::from("")));
        assert_eq!(
            map_get(m, "bigdec"),
            Some(&Value::Decimal(Decimal::new(0, 0)))
        );
        assert_eq!(map_get(m, "array"), Some(&Value::Array(vec![])));
        assert_eq!(map_get(m, "absent"), Some(&Value::Null));
        assert_eq!(m.len(), entries.len() + 1);
    }

    #[test]
    fn replacements_are_converted_to_the_field_type() {
        let cases = [
            ("short", "123", Value::Int16(123)),
            ("byte", "123", Value::Int8(123)),
            ("int", "123", Value::Int32(123)),
            ("long", "123", Value::Int64(123)),
            ("float", "123", Value::Float32(123.0)),
            ("double", "123", Value::Float64(123.0)),
            ("string", "123", Value::from("123")),
            ("decimal", "123.0", Value::Decimal(Decimal::new(1230, 1))),
            // Through BigDecimal: fractions are cut and integers wrap.
            ("int", "1.9", Value::Int32(1)),
            ("byte", "300", Value::Int8(44)),
        ];
        for (field, replacement, want) in cases {
            let mut t: MaskField<ValuePart> =
                configured(&[("fields", field), ("replacement", replacement)]);
            let out = apply(&mut t, source_value(Some(schema()), struct_value())).unwrap();
            assert_eq!(as_struct(&out.value).get(field), Some(&want), "{field}");
            let out = apply(&mut t, source_value(None, map(&values()))).unwrap();
            let Value::Map(m) = &out.value else { panic!() };
            assert_eq!(map_get(m, field), Some(&want), "{field} schemaless");
        }
    }

    #[test]
    fn unsupported_replacements_fail() {
        let cases = [
            (
                "time",
                "1",
                "Cannot mask value of type class java.util.Date with custom replacement.",
            ),
            (
                "bool",
                "false",
                "Cannot mask value of type class java.lang.Boolean with custom replacement.",
            ),
            (
                "array",
                "1",
                "Cannot mask value of type class java.util.ArrayList with custom replacement.",
            ),
            (
                "int",
                "foo",
                "Unable to convert foo (class java.lang.String) to a number",
            ),
            (
                "double",
                "foo",
                "Unable to convert foo (class java.lang.String) to a number",
            ),
            (
                "decimal",
                "foo",
                "Unable to convert foo (class java.lang.String) to number",
            ),
        ];
        for (field, replacement, msg) in cases {
            let mut t: MaskField<ValuePart> =
                configured(&[("fields", field), ("replacement", replacement)]);
            let err = apply(&mut t, source_value(Some(schema()), struct_value())).unwrap_err();
            assert_eq!(err, ConnectError::data(msg), "{field}");
        }
        let mut t: MaskField<ValuePart> = configured(&[("fields", "b")]);
        let err = apply(
            &mut t,
            source_value(None, map(&[("b", Value::Bytes(vec![1]))])),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "Cannot mask value of type: class [B");
    }

    #[test]
    fn tombstones_fail_as_in_connect() {
        let mut t: MaskField<ValuePart> = configured(&[("fields", "a")]);
        assert_eq!(
            apply(&mut t, source_value(None, Value::Null))
                .unwrap_err()
                .to_string(),
            "Only Map objects supported in absence of schema for [mask fields], found: null"
        );
        assert_eq!(
            apply(&mut t, source_value(Some(schema()), Value::Null))
                .unwrap_err()
                .to_string(),
            "Only Struct objects supported for [mask fields], found: null"
        );
    }

    #[test]
    fn configuration_errors() {
        assert_eq!(
            config_error::<MaskField<ValuePart>>(&[("fields", "a"), ("replacement", "")]),
            "Invalid value  for configuration replacement: String must be non-empty"
        );
        assert_eq!(
            config_error::<MaskField<ValuePart>>(&[("fields", "")]),
            "Invalid value [] for configuration fields: Empty list"
        );
        assert_eq!(
            config_error::<MaskField<ValuePart>>(&[]),
            "Missing required configuration \"fields\" which has no default value."
        );
    }
}
