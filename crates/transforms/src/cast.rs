//! `Cast`: casts fields, or the whole key or value, to another primitive type.

use std::marker::PhantomData;
use std::sync::Arc;

use base64::Engine;
use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::data::{
    Date, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Time, Timestamp, Value,
};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_compat::{
    as_logical, decimal_double_value, decimal_float_value, decimal_int_value, decimal_long_value,
    epoch_millis, iso_date_string, java_class, java_split, parse_java_double, parse_java_float,
};
use crate::util::{
    copy_schema_basics, field_value, invalid_config, java_list, map_get, map_put, require_map,
    require_struct, PartMarker, Settings,
};

const SPEC: &str = "spec";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "cast types";

/// The types a value can be cast from.
const INPUT_TYPES: &str = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]";
/// The types a value can be cast to.
const OUTPUT_TYPES: &str = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]";

fn is_output_type(t: SchemaType) -> bool {
    matches!(
        t,
        SchemaType::Int8
            | SchemaType::Int16
            | SchemaType::Int32
            | SchemaType::Int64
            | SchemaType::Float32
            | SchemaType::Float64
            | SchemaType::Boolean
            | SchemaType::String
    )
}

/// What `spec` asks for: casts of named fields (in spec order, a later cast of the same field
/// replacing an earlier one), or one cast of the whole key or value.
#[derive(Debug, Clone, PartialEq, Default)]
struct CastSpec {
    fields: Vec<(String, SchemaType)>,
    whole: Option<SchemaType>,
}

/// Java's `String.trim()`: drops characters up to the space on both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// A target type by name (`Schema.Type.valueOf` of the upper-cased name), checked to be one
/// a value can be cast to.
fn output_type(name: &str) -> ConnectResult<SchemaType> {
    let t = SchemaType::from_name(&name.to_ascii_lowercase())
        .filter(|_| name.is_ascii())
        .ok_or_else(|| {
            // Connect wraps the failed `Schema.Type.valueOf` in a ConfigException whose name and
            // value slots are swapped, which gives this text.
            ConnectError::config(format!(
                "Invalid value java.lang.IllegalArgumentException: No enum constant \
                 org.apache.kafka.connect.data.Schema.Type.{} for configuration Invalid type \
                 found in casting spec: {name}",
                name.to_uppercase()
            ))
        })?;
    if !is_output_type(t) {
        return Err(ConnectError::config(format!(
            "Cast transformation does not support casting to {t}; supported types are {OUTPUT_TYPES}"
        )));
    }
    Ok(t)
}

/// Reads `spec` with Connect's rules and messages.
fn parse_spec(items: &[String]) -> ConnectResult<CastSpec> {
    if items.is_empty() {
        return Err(ConnectError::config(
            "Must specify at least one field to cast.",
        ));
    }
    let mut spec = CastSpec::default();
    for item in items {
        let parts = java_split(item, ':');
        match parts.as_slice() {
            [whole] => spec.whole = Some(output_type(java_trim(whole))?),
            [field, type_name] => {
                let t = output_type(java_trim(type_name))?;
                let field = java_trim(field).to_string();
                match spec.fields.iter_mut().find(|(f, _)| *f == field) {
                    Some(entry) => entry.1 = t,
                    None => spec.fields.push((field, t)),
                }
            }
            [] => {
                // Connect reads a second part that is not there.
                return Err(ConnectError::config("Index 1 out of bounds for length 0"));
            }
            _ => {
                // Connect reports this under the name of ReplaceField's setting.
                return Err(invalid_config(
                    "renames",
                    &java_list(items),
                    &format!("Invalid rename mapping: {item}"),
                ));
            }
        }
    }
    if spec.whole.is_some() && items.len() > 1 {
        return Err(ConnectError::config(
            "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
        ));
    }
    Ok(spec)
}

/// The settings of `Cast` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    // Connect's validator throws the spec's own ConfigException: its message, unprefixed.
    let spec_check = Validator::CustomMessage(Arc::new(|v: &Parsed| match v {
        Parsed::List(items) => parse_spec(items).map(|_| ()).map_err(|e| e.to_string()),
        _ => Ok(()),
    }));
    ConfigDef::new()
        .define(
            SPEC,
            ConfigType::List,
            None,
            Some(spec_check),
            Importance::High,
            "The casts: field:type pairs (field1:type,field2:type) for fields of structs or maps, \
             or a single type to cast the whole key or value. Types: int8, int16, int32, int64, \
             float32, float64, boolean and string; bytes can only be cast to string (base64).",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a field is null and its schema has a default, whether the default (true) or null (false) is cast.",
        )
}

/// Casts fields of a struct (schema) or map (schemaless), or the whole key or value, to
/// another primitive type: integers, floats, booleans and strings to any of int8, int16,
/// int32, int64, float32, float64, boolean and string, and bytes to string (base64).
///
/// Follows `org.apache.kafka.connect.transforms.Cast$Key` / `$Value`, with Java's conversions:
/// narrowing integers wrap, floats are truncated toward zero and saturate, numbers are true
/// when not zero, strings are parsed as Java does (`"abc"` to a number fails with `Value (abc)
/// was out of range for requested data type`), and strings are what Java's `toString` gives.
/// Logical types: a Date, Time or Timestamp cast to a number becomes its encoded form (days or
/// milliseconds) first, and to a string its ISO 8601 form (`yyyy-MM-dd`,
/// `HH:mm:ss.SSS'Z'` or both, UTC); a Decimal is cast as a number (its integer part for
/// integers) or to its `BigDecimal.toString()`.
///
/// Settings: `spec` (required; `field:type` pairs, or a single type for the whole value) and
/// `replace.null.with.default` (default true). With a schema, a cast field's schema becomes a
/// plain schema of the new type keeping its optionality and its default (cast too); the struct
/// keeps its name, version, doc, parameters and optionality, and a whole-value cast keeps the
/// original schema's name, version, doc and parameters. A null key or value (tombstone) passes
/// unchanged; without a schema, a field of the spec missing from the map is added as null.
pub struct Cast<P: PartMarker> {
    spec: CastSpec,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for Cast<P> {
    fn default() -> Self {
        Cast {
            spec: CastSpec::default(),
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

/// A fresh builder of a primitive type.
fn builder_of(t: SchemaType) -> SchemaBuilder {
    SchemaBuilder::new(t)
}

/// The failure to parse a string as a number, as Connect reports it.
fn out_of_range(text: &str) -> ConnectError {
    ConnectError::data(format!(
        "Value ({text}) was out of range for requested data type"
    ))
}

fn unexpected(value: &Value) -> ConnectError {
    ConnectError::data(format!(
        "Unexpected type in Cast transformation: {}",
        java_class(value)
    ))
}

/// A number as Java's `Number.longValue()` gives it (with the Java conversions of each boxed
/// type), for the integer and boolean casts; `None` for a non-number.
fn long_value(value: &Value) -> Option<i64> {
    Some(match value {
        Value::Int8(v) => i64::from(*v),
        Value::Int16(v) => i64::from(*v),
        Value::Int32(v) => i64::from(*v),
        Value::Int64(v) => *v,
        Value::Float32(v) => *v as i64,
        Value::Float64(v) => *v as i64,
        Value::Decimal(d) => decimal_long_value(d),
        _ => return None,
    })
}

/// `Number.intValue()`: floats go through Java's float-to-int conversion, decimals keep the
/// low 32 bits of their integer part.
fn int_value(value: &Value) -> Option<i32> {
    Some(match value {
        Value::Float32(v) => *v as i32,
        Value::Float64(v) => *v as i32,
        Value::Decimal(d) => decimal_int_value(d),
        other => long_value(other)? as i32,
    })
}

fn cast_to_int8(value: &Value) -> ConnectResult<i8> {
    match value {
        Value::Boolean(b) => Ok(i8::from(*b)),
        Value::String(s) => s.parse().map_err(|_| out_of_range(s)),
        other => int_value(other)
            .map(|v| v as i8)
            .ok_or_else(|| unexpected(other)),
    }
}

fn cast_to_int16(value: &Value) -> ConnectResult<i16> {
    match value {
        Value::Boolean(b) => Ok(i16::from(*b)),
        Value::String(s) => s.parse().map_err(|_| out_of_range(s)),
        other => int_value(other)
            .map(|v| v as i16)
            .ok_or_else(|| unexpected(other)),
    }
}

fn cast_to_int32(value: &Value) -> ConnectResult<i32> {
    match value {
        Value::Boolean(b) => Ok(i32::from(*b)),
        Value::String(s) => s.parse().map_err(|_| out_of_range(s)),
        other => int_value(other).ok_or_else(|| unexpected(other)),
    }
}

fn cast_to_int64(value: &Value) -> ConnectResult<i64> {
    match value {
        Value::Boolean(b) => Ok(i64::from(*b)),
        Value::String(s) => s.parse().map_err(|_| out_of_range(s)),
        other => long_value(other).ok_or_else(|| unexpected(other)),
    }
}

fn cast_to_float32(value: &Value) -> ConnectResult<f32> {
    Ok(match value {
        Value::Int8(v) => f32::from(*v),
        Value::Int16(v) => f32::from(*v),
        Value::Int32(v) => *v as f32,
        Value::Int64(v) => *v as f32,
        Value::Float32(v) => *v,
        Value::Float64(v) => *v as f32,
        Value::Decimal(d) => decimal_float_value(d),
        Value::Boolean(b) => f32::from(u8::from(*b)),
        Value::String(s) => parse_java_float(s).ok_or_else(|| out_of_range(s))?,
        other => return Err(unexpected(other)),
    })
}

fn cast_to_float64(value: &Value) -> ConnectResult<f64> {
    Ok(match value {
        Value::Int8(v) => f64::from(*v),
        Value::Int16(v) => f64::from(*v),
        Value::Int32(v) => f64::from(*v),
        Value::Int64(v) => *v as f64,
        Value::Float32(v) => f64::from(*v),
        Value::Float64(v) => *v,
        Value::Decimal(d) => decimal_double_value(d),
        Value::Boolean(b) => f64::from(u8::from(*b)),
        Value::String(s) => parse_java_double(s).ok_or_else(|| out_of_range(s))?,
        other => return Err(unexpected(other)),
    })
}

fn cast_to_boolean(value: &Value) -> ConnectResult<bool> {
    match value {
        Value::Boolean(b) => Ok(*b),
        Value::String(s) => Ok(s.eq_ignore_ascii_case("true")),
        other => long_value(other)
            .map(|v| v != 0)
            .ok_or_else(|| unexpected(other)),
    }
}

fn cast_to_string(value: &Value) -> String {
    if let Some(millis) = epoch_millis(value) {
        return iso_date_string(millis);
    }
    match value {
        Value::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b),
        other => other.to_string(),
    }
}

/// The encoded form of a Date, Time or Timestamp value (Connect's `fromLogical`), which
/// casts to numbers start from.
fn encode_logical(schema: &Schema, value: Value) -> ConnectResult<Value> {
    Ok(match (schema.name.as_deref(), value) {
        (Some(Date::LOGICAL_NAME), Value::Date(d)) => Value::Int32(d),
        (Some(Time::LOGICAL_NAME), Value::Time(t)) => {
            if !(0..86_400_000).contains(&t) {
                return Err(ConnectError::data(
                    "Kafka Connect Time type should not have any date fields set to non-zero values.",
                ));
            }
            Value::Int32(t)
        }
        (Some(Timestamp::LOGICAL_NAME), Value::Timestamp(t)) => Value::Int64(t),
        (_, v) => v,
    })
}

/// Casts one value (Connect's `castValueToType`): `schema` is its schema, `None` when
/// schemaless (then its type is inferred from the value).
fn cast_value(schema: Option<&Schema>, value: &Value, target: SchemaType) -> ConnectResult<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let from = match schema {
        Some(s) => s.schema_type,
        None => match value {
            Value::Decimal(_) | Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => {
                return Err(ConnectError::data(format!(
                    "Cast transformation was passed a value of type {} which is not supported by Connect's data API",
                    java_class(value)
                )))
            }
            other => other.inferred_type().expect("not null"),
        },
    };
    if matches!(
        from,
        SchemaType::Array | SchemaType::Map | SchemaType::Struct
    ) {
        return Err(ConnectError::data(format!(
            "Cast transformation does not support casting from {from}; supported types are {INPUT_TYPES}"
        )));
    }
    let mut value = match schema {
        Some(s) => as_logical(s, value)?,
        None => value.clone(),
    };
    if let Some(s) = schema {
        if s.name.is_some() && target != SchemaType::String {
            value = encode_logical(s, value)?;
        }
    }
    Ok(match target {
        SchemaType::Int8 => Value::Int8(cast_to_int8(&value)?),
        SchemaType::Int16 => Value::Int16(cast_to_int16(&value)?),
        SchemaType::Int32 => Value::Int32(cast_to_int32(&value)?),
        SchemaType::Int64 => Value::Int64(cast_to_int64(&value)?),
        SchemaType::Float32 => Value::Float32(cast_to_float32(&value)?),
        SchemaType::Float64 => Value::Float64(cast_to_float64(&value)?),
        SchemaType::Boolean => Value::Boolean(cast_to_boolean(&value)?),
        SchemaType::String => Value::String(cast_to_string(&value)),
        other => {
            return Err(ConnectError::data(format!(
                "{other} is not supported in the Cast transformation."
            )))
        }
    })
}

impl<P: PartMarker> Cast<P> {
    fn field_cast(&self, name: &str) -> Option<SchemaType> {
        self.spec
            .fields
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, t)| *t)
    }

    /// The schema after the casts (Connect's `getOrBuildSchema`).
    fn updated_schema(&self, schema: &Schema) -> ConnectResult<SchemaRef> {
        let (mut builder, target) = match self.spec.whole {
            Some(t) => (copy_schema_basics(schema, builder_of(t)), t),
            None => {
                if schema.schema_type != SchemaType::Struct {
                    return Err(ConnectError::data("Cannot list fields on non-struct type"));
                }
                let mut builder = copy_schema_basics(schema, SchemaBuilder::struct_());
                for field in &schema.fields {
                    let field_schema = match self.field_cast(&field.name) {
                        Some(t) => {
                            let mut fb = builder_of(t);
                            if field.schema.optional {
                                fb = fb.optional();
                            }
                            if let Some(d) = &field.schema.default_value {
                                fb = fb.default_value(cast_value(Some(&field.schema), d, t)?)?;
                            }
                            fb.build()
                        }
                        None => field.schema.clone(),
                    };
                    builder = builder.field(field.name.clone(), field_schema)?;
                }
                (builder, SchemaType::Struct)
            }
        };
        if schema.optional {
            builder = builder.optional();
        }
        if let Some(d) = &schema.default_value {
            builder = builder.default_value(cast_value(Some(schema), d, target)?)?;
        }
        Ok(builder.build())
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for Cast<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&config_def(), props, |key, v| match (key, v) {
            (SPEC, Parsed::List(items)) => parse_spec(items).map(|_| ()),
            _ => Ok(()),
        })?;
        self.spec = parse_spec(settings.list(SPEC))?;
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        if value.is_null() {
            return Ok(Some(record));
        }
        let updated = match P::PART.schema(&record) {
            None => {
                let cast = match self.spec.whole {
                    Some(t) => cast_value(None, value, t)?,
                    None => {
                        let entries = require_map(value, PURPOSE)?;
                        let mut updated = entries.to_vec();
                        for (field, t) in &self.spec.fields {
                            let v = map_get(entries, field).unwrap_or(&Value::Null);
                            map_put(&mut updated, field, cast_value(None, v, *t)?);
                        }
                        Value::Map(updated)
                    }
                };
                P::PART.replace(record, None, cast)
            }
            Some(schema) => {
                let updated_schema = self.updated_schema(schema)?;
                let cast = match self.spec.whole {
                    Some(t) => cast_value(Some(schema), value, t)?,
                    None => {
                        let s = require_struct(value, PURPOSE)?;
                        let mut out = Struct::new(updated_schema.clone())?;
                        for field in &s.schema().fields {
                            let orig = field_value(s, field, self.replace_null_with_default);
                            let v = match self.field_cast(&field.name) {
                                Some(t) => cast_value(Some(&field.schema), &orig, t)?,
                                None => orig,
                            };
                            if updated_schema.field(&field.name).is_none() {
                                return Err(ConnectError::data("field cannot be null."));
                            }
                            out = out.put(&field.name, v)?;
                        }
                        Value::Struct(out)
                    }
                };
                P::PART.replace(record, Some(updated_schema), cast)
            }
        };
        Ok(Some(updated))
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
    use tributary_api::data::Decimal;

    fn whole<P: PartMarker>(t: &str) -> Cast<P> {
        configured(&[("spec", t)])
    }

    fn cast_whole(
        schema: Option<SchemaRef>,
        value: Value,
        t: &str,
    ) -> ConnectResult<(Option<SchemaRef>, Value)> {
        let mut c: Cast<ValuePart> = whole(t);
        let out = apply(&mut c, source_value(schema, value))?;
        Ok((out.value_schema, out.value))
    }

    /// Issue #30, case 4: validating `spec` gives Connect's messages as its validator throws
    /// them (Connect 4.1.1's `Cast.Value().config().validate(...)`), with no
    /// `Invalid value … for configuration spec: ` before them; configure fails with the same.
    #[test]
    fn spec_validation_gives_connects_messages_unprefixed() {
        let cases = [
            (
                "int33",
                "Invalid value java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type.INT33 for configuration Invalid type found in casting spec: int33",
            ),
            (
                "int32,a:int64",
                "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
            ),
            (
                "a:int64,int32",
                "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
            ),
            (
                "map",
                "Cast transformation does not support casting to MAP; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
            ),
            (
                "a:b:c",
                "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c",
            ),
            ("", "Must specify at least one field to cast."),
        ];
        for (spec, message) in cases {
            let mut props = Props::new();
            props.insert("spec".into(), spec.into());
            let errors: Vec<String> = config_def()
                .validate(&props)
                .into_iter()
                .flat_map(|cv| cv.errors)
                .collect();
            assert_eq!(errors, [message], "{spec}");
            assert_eq!(
                config_error::<Cast<ValuePart>>(&[("spec", spec)]),
                message,
                "{spec}"
            );
        }
    }

    #[test]
    fn whole_values_with_schema() {
        let cases = [
            ("int8", Value::Int8(42)),
            ("int16", Value::Int16(42)),
            ("int32", Value::Int32(42)),
            ("int64", Value::Int64(42)),
            ("float32", Value::Float32(42.0)),
            ("float64", Value::Float64(42.0)),
            ("boolean", Value::Boolean(true)),
            ("string", Value::from("42")),
        ];
        for (t, want) in cases {
            let (schema, v) =
                cast_whole(Some(Schema::int32_schema()), Value::Int32(42), t).unwrap();
            assert_eq!(v, want, "{t}");
            let schema = schema.unwrap();
            assert_eq!(schema.schema_type, SchemaType::from_name(t).unwrap());
            assert!(!schema.optional);
        }
        let (_, v) = cast_whole(Some(Schema::int32_schema()), Value::Int32(0), "boolean").unwrap();
        assert_eq!(v, Value::Boolean(false));
        let mut c: Cast<KeyPart> = whole("int8");
        let out = apply(
            &mut c,
            source_key(Some(Schema::int32_schema()), Value::Int32(42)),
        )
        .unwrap();
        assert_eq!(out.key_schema.unwrap().schema_type, SchemaType::Int8);
        assert_eq!(out.key, Value::Int8(42));
    }

    #[test]
    fn whole_value_casts_keep_the_schema_basics_and_cast_the_default() {
        let schema = SchemaBuilder::int64()
            .name("n")
            .version(2)
            .doc("d")
            .optional()
            .default_value(Value::Int64(-42))
            .unwrap()
            .build();
        let (s, v) = cast_whole(Some(schema), Value::Int64(42), "int32").unwrap();
        let s = s.unwrap();
        assert_eq!(v, Value::Int32(42));
        assert_eq!(
            (s.name.as_deref(), s.version, s.doc.as_deref()),
            (Some("n"), Some(2), Some("d"))
        );
        assert!(s.optional);
        assert_eq!(s.default_value, Some(Value::Int32(-42)));
    }

    #[test]
    fn logical_values_cast_to_strings_and_numbers() {
        let (_, v) = cast_whole(
            Some(Decimal::schema(0)),
            Value::Decimal(Decimal::new(42, 0)),
            "string",
        )
        .unwrap();
        assert_eq!(v, Value::from("42"));
        let (_, v) = cast_whole(
            Some(Timestamp::schema()),
            Value::Timestamp(86_400_001),
            "string",
        )
        .unwrap();
        assert_eq!(v, Value::from("1970-01-02T00:00:00.001Z"));
        let (s, v) = cast_whole(Some(Timestamp::schema()), Value::Timestamp(7), "int64").unwrap();
        assert_eq!(v, Value::Int64(7));
        // A whole-value cast keeps the schema's name, as in Connect.
        assert_eq!(s.unwrap().name.as_deref(), Some(Timestamp::LOGICAL_NAME));

        let fields = [
            (
                "date_to_int32",
                Date::schema(),
                Value::Date(1),
                "int32",
                Value::Int32(1),
            ),
            (
                "timestamp_to_int64",
                Timestamp::schema(),
                Value::Timestamp(0),
                "int64",
                Value::Int64(0),
            ),
            (
                "time_to_int64",
                Time::schema(),
                Value::Time(1),
                "int64",
                Value::Int64(1),
            ),
            (
                "decimal_to_int32",
                Decimal::schema(0),
                Value::Decimal(Decimal::new(i64::from(i32::MAX) + 1, 0)),
                "int32",
                Value::Int32(i32::MIN),
            ),
            (
                "timestamp_to_float64",
                Timestamp::schema(),
                Value::Timestamp(i64::MAX),
                "float64",
                Value::Float64(9.223372036854776E18),
            ),
            (
                "date",
                Date::schema(),
                Value::Date(1),
                "string",
                Value::from("1970-01-02"),
            ),
            (
                "time",
                Time::schema(),
                Value::Time(3_600_000),
                "string",
                Value::from("01:00:00.000Z"),
            ),
            (
                "decimal",
                Decimal::schema(0),
                Value::Decimal(Decimal::new(1982, 0)),
                "string",
                Value::from("1982"),
            ),
            (
                "encoded_date",
                Date::schema(),
                Value::Int32(1),
                "string",
                Value::from("1970-01-02"),
            ),
        ];
        let mut b = SchemaBuilder::struct_();
        let mut spec = Vec::new();
        for (name, schema, _, t, _) in &fields {
            b = b.field(*name, schema.clone()).unwrap();
            spec.push(format!("{name}:{t}"));
        }
        b = b
            .field(
                "null_timestamp_to_int32",
                Timestamp::builder().optional().build(),
            )
            .unwrap();
        spec.push("null_timestamp_to_int32:int32".into());
        let schema = b.build();
        let mut s = Struct::new(schema.clone()).unwrap();
        for (name, _, v, _, _) in &fields {
            s = s.put(name, v.clone()).unwrap();
        }
        let spec = spec.join(",");
        let mut c: Cast<ValuePart> = configured(&[("spec", &spec)]);
        let out = apply(&mut c, source_value(Some(schema), Value::Struct(s))).unwrap();
        let out_schema = out.value_schema.clone().unwrap();
        let v = as_struct(&out.value);
        for (name, _, _, t, want) in fields {
            assert_eq!(v.get(name), Some(&want), "{name}");
            let fs = &out_schema.field(name).unwrap().schema;
            assert_eq!(fs.schema_type, SchemaType::from_name(t).unwrap());
            assert_eq!(fs.name, None, "{name}");
        }
        assert_eq!(v.get("null_timestamp_to_int32"), Some(&Value::Null));
        assert_eq!(
            out_schema.field("null_timestamp_to_int32").unwrap().schema,
            Schema::optional_int32_schema()
        );
    }

    #[test]
    fn struct_fields_follow_connects_conversions() {
        let schema = SchemaBuilder::struct_()
            .name("s")
            .field("int8", Schema::int8_schema())
            .unwrap()
            .field("int16", Schema::optional_int16_schema())
            .unwrap()
            .field(
                "int32",
                SchemaBuilder::int32()
                    .default_value(Value::Int32(2))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .field("int64", Schema::int64_schema())
            .unwrap()
            .field("float32", Schema::float32_schema())
            .unwrap()
            .field(
                "float64",
                SchemaBuilder::float64()
                    .default_value(Value::Float64(-1.0))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .field("boolean", Schema::boolean_schema())
            .unwrap()
            .field("string", Schema::string_schema())
            .unwrap()
            .field("bytes", Schema::bytes_schema())
            .unwrap()
            .field("timestamp", Timestamp::schema())
            .unwrap()
            .field("optional", Schema::optional_float32_schema())
            .unwrap()
            .build();
        let v = Struct::new(schema.clone())
            .unwrap()
            .put("int8", Value::Int8(8))
            .unwrap()
            .put("int16", Value::Int16(16))
            .unwrap()
            .put("int32", 32)
            .unwrap()
            .put("int64", Value::Int64(64))
            .unwrap()
            .put("float32", Value::Float32(32.0))
            .unwrap()
            .put("float64", Value::Float64(-64.0))
            .unwrap()
            .put("boolean", true)
            .unwrap()
            .put("string", "42")
            .unwrap()
            .put(
                "bytes",
                Value::Bytes(vec![0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10]),
            )
            .unwrap()
            .put("timestamp", Value::Timestamp(0))
            .unwrap();
        let spec = "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32,bytes:string,optional:int32";
        let mut c: Cast<ValuePart> = configured(&[("spec", spec)]);
        let out = apply(&mut c, source_value(Some(schema.clone()), Value::Struct(v))).unwrap();
        let s = as_struct(&out.value);
        let want = [
            ("int8", Value::Int16(8)),
            ("int16", Value::Int32(16)),
            ("int32", Value::Int64(32)),
            ("int64", Value::Boolean(true)),
            ("float32", Value::Float64(32.0)),
            ("float64", Value::Boolean(true)),
            ("boolean", Value::Int8(1)),
            ("string", Value::Int32(42)),
            ("bytes", Value::from("/ty6mHZUMhA=")),
            ("timestamp", Value::Timestamp(0)),
            ("optional", Value::Null),
        ];
        for (k, v) in want {
            assert_eq!(s.get(k), Some(&v), "{k}");
        }
        let os = out.value_schema.unwrap();
        assert_eq!(os.name.as_deref(), Some("s"));
        assert_eq!(
            os.field("int16").unwrap().schema,
            Schema::optional_int32_schema()
        );
        assert_eq!(
            os.field("int32").unwrap().schema.default_value,
            Some(Value::Int64(2))
        );
        assert_eq!(
            os.field("float64").unwrap().schema.default_value,
            Some(Value::Boolean(true))
        );
        // Fields not cast keep their schema, logical name included.
        assert_eq!(os.field("timestamp").unwrap().schema, Timestamp::schema());
        let names: Vec<_> = os.fields.iter().map(|f| f.name.clone()).collect();
        let orig: Vec<_> = schema.fields.iter().map(|f| f.name.clone()).collect();
        assert_eq!(names, orig);
    }

    #[test]
    fn java_number_conversions() {
        let cases = [
            (Value::Float64(300.7), "int8", Value::Int8(44)),
            (Value::Float64(1e20), "int32", Value::Int32(i32::MAX)),
            (Value::Float64(1e20), "int16", Value::Int16(-1)),
            (Value::Float32(f32::NAN), "int64", Value::Int64(0)),
            (Value::Float64(0.5), "boolean", Value::Boolean(false)),
            (
                Value::Int64(i64::from(i32::MAX) + 1),
                "int32",
                Value::Int32(i32::MIN),
            ),
            (Value::Float64(0.1), "float32", Value::Float32(0.1)),
            (Value::Float32(1.1), "string", Value::from("1.1")),
            (Value::Float64(1e7), "string", Value::from("1.0E7")),
            (Value::from("TRUE"), "boolean", Value::Boolean(true)),
            (Value::from("yes"), "boolean", Value::Boolean(false)),
            (Value::from(" 2.5 "), "float64", Value::Float64(2.5)),
            (Value::from("+12"), "int16", Value::Int16(12)),
            (Value::Boolean(true), "float32", Value::Float32(1.0)),
        ];
        for (input, t, want) in cases {
            let (_, v) = cast_whole(None, input.clone(), t).unwrap();
            assert_eq!(v, want, "{input:?} to {t}");
        }
        for (input, t) in [
            ("abc", "int32"),
            ("128", "int8"),
            (" 1", "int64"),
            ("1,5", "float32"),
        ] {
            let err = cast_whole(None, Value::from(input), t).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("Value ({input}) was out of range for requested data type")
            );
        }
    }

    #[test]
    fn schemaless_maps_and_values() {
        let mut c: Cast<ValuePart> = configured(&[("spec", "int8:int16,string:int32,absent:int8")]);
        let v = map(&[
            ("int8", Value::Int8(8)),
            ("string", Value::from("42")),
            ("other", Value::Int32(1)),
        ]);
        let out = apply(&mut c, source_value(None, v)).unwrap();
        assert_eq!(out.value_schema, None);
        assert_eq!(
            out.value,
            map(&[
                ("int8", Value::Int16(8)),
                ("string", Value::Int32(42)),
                ("other", Value::Int32(1)),
                ("absent", Value::Null),
            ])
        );
        let err = cast_whole(None, Value::Bytes(vec![1]), "int8").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unexpected type in Cast transformation: class [B"
        );
        let (_, v) = cast_whole(None, Value::Bytes(vec![1, 2]), "string").unwrap();
        assert_eq!(v, Value::from("AQI="));
        let err = cast_whole(None, Value::Decimal(Decimal::new(1, 0)), "int8").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cast transformation was passed a value of type class java.math.BigDecimal which is not supported by Connect's data API"
        );
        let err = cast_whole(None, map(&[]), "int8").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cast transformation does not support casting from MAP; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
        );
    }

    #[test]
    fn nulls_defaults_and_errors() {
        let mut c: Cast<ValuePart> = whole("int8");
        let rec = source_value(Some(Schema::optional_int32_schema()), Value::Null);
        assert_eq!(apply(&mut c, rec.clone()).unwrap(), rec);
        let rec = source_value(None, Value::Null);
        assert_eq!(apply(&mut c, rec.clone()).unwrap(), rec);

        let schema = SchemaBuilder::struct_()
            .field(
                "magic",
                SchemaBuilder::int32()
                    .optional()
                    .default_value(Value::Int32(42))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        for (setting, want) in [("true", Value::from("42")), ("false", Value::Null)] {
            let mut c: Cast<ValuePart> = configured(&[
                ("spec", "magic:string"),
                ("replace.null.with.default", setting),
            ]);
            let v = Value::Struct(Struct::new(schema.clone()).unwrap());
            let out = apply(&mut c, source_value(Some(schema.clone()), v)).unwrap();
            let s = as_struct(&out.value);
            assert_eq!(s.schema().fields[0].schema.schema_type, SchemaType::String);
            assert_eq!(s.get_by_index(0), &want);
        }

        let struct_schema = SchemaBuilder::struct_().build();
        let v = Value::Struct(Struct::new(struct_schema.clone()).unwrap());
        assert_eq!(
            cast_whole(Some(struct_schema), v, "int8").unwrap_err().to_string(),
            "Cast transformation does not support casting from STRUCT; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
        );
        let mut c: Cast<ValuePart> = configured(&[("spec", "a:int8")]);
        let err = apply(
            &mut c,
            source_value(Some(Schema::int32_schema()), Value::Int32(1)),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "Cannot list fields on non-struct type"
        );
        let err = apply(&mut c, source_value(None, Value::Int32(1)));
        assert_eq!(
            err.unwrap_err().to_string(),
            "Only Map objects supported in absence of schema for [cast types], found: java.lang.Integer"
        );
    }

    #[test]
    fn spec_errors() {
        let cases = [
            ("", "Must specify at least one field to cast."),
            (
                "foo:faketype",
                "Invalid value java.lang.IllegalArgumentException: No enum constant \
                 org.apache.kafka.connect.data.Schema.Type.FAKETYPE for configuration Invalid \
                 type found in casting spec: faketype",
            ),
            (
                "foo:array",
                "Cast transformation does not support casting to ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
            ),
            (
                "bytes",
                "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
            ),
            (
                "foo:int8:extra",
                "Invalid value [foo:int8:extra] for configuration renames: Invalid rename mapping: foo:int8:extra",
            ),
            (
                "foo:int8,int32",
                "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
            ),
        ];
        for (spec, msg) in cases {
            assert_eq!(
                config_error::<Cast<ValuePart>>(&[("spec", spec)]),
                msg,
                "{spec}"
            );
        }
        assert_eq!(
            config_error::<Cast<ValuePart>>(&[]),
            "Missing required configuration \"spec\" which has no default value."
        );
        // Types are read in any case, with spaces around the parts.
        let c: Cast<ValuePart> = configured(&[("spec", " a : INT8 ,b:Float64")]);
        assert_eq!(
            c.spec.fields,
            vec![
                ("a".to_string(), SchemaType::Int8),
                ("b".to_string(), SchemaType::Float64)
            ]
        );
    }
}
