//! Connect values ↔ JSON text, as Confluent's `JsonSchemaData.fromConnectData` /
//! `toConnectData` and its serializer's Jackson `ObjectMapper` write and read them.
//!
//! Writing: integers as JSON integers, floats as Java's `Float.toString` / `Double.toString`
//! (non-finite ones quoted, as Jackson does), bytes as standard base64 text, a Decimal as base64
//! of its unscaled bytes or, with `decimal.format=NUMERIC`, as a number (`BigDecimal.toString`),
//! Date/Time/Timestamp as their integers, maps with required STRING keys as objects and others
//! as arrays of `{"key":…,"value":…}`, structs as objects in field order. A null is the schema's
//! default when it has one, `null` when optional; a required field without a value or default
//! is left out. Strings are escaped as Jackson escapes them.
//!
//! Reading: the inverse, with Confluent's rules for nulls (the default, else null for optional
//! schemas, else an error), base64 text for bytes, a number or base64 text for a Decimal, and a
//! `oneOf` struct set from the first branch the value fits. A value of another JSON type than
//! the schema's is a [`ConnectError::Data`] (Jackson would read it as 0 or null). A Decimal read
//! from a JSON number keeps the precision of a double (serde_json's numbers).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value as Json;
use tributary_api::data::java_fmt::{double_to_string, float_to_string, write_json_string};
use tributary_api::data::{
    Date, Decimal, Field, Schema, SchemaRef, SchemaType, Struct, Time, Timestamp, Value,
};
use tributary_api::{ConnectError, ConnectResult};

use super::schema::JSON_TYPE_ONE_OF;

/// The `JsonSchemaDataConfig` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonDataConfig {
    /// `decimal.format=NUMERIC` (default `BASE64`).
    pub decimal_numeric: bool,
    /// `object.additional.properties` (default true).
    pub allow_additional_properties: bool,
    /// `use.optional.for.nonrequired` (default false).
    pub use_optional_for_non_required: bool,
    /// `flatten.singleton.unions` (default true).
    pub flatten_singleton_unions: bool,
    /// `schemas.cache.config` (default 1000).
    pub schemas_cache_size: usize,
}

impl Default for JsonDataConfig {
    fn default() -> Self {
        JsonDataConfig {
            decimal_numeric: false,
            allow_additional_properties: true,
            use_optional_for_non_required: false,
            flatten_singleton_unions: true,
            schemas_cache_size: 1000,
        }
    }
}

fn mismatch(schema: Option<&Schema>, value: &Value) -> ConnectError {
    let ty = schema
        .map(|s| s.schema_type.name())
        .unwrap_or("unknown schema");
    ConnectError::data(format!("Invalid type for {ty}: {}", value.kind_name()))
}

fn write_number(out: &mut Vec<u8>, text: String) {
    if text.ends_with("Infinity") || text == "NaN" {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// Writes `value` (of `schema`) as JSON text to `out`; returns false when the value is a null
/// that Confluent leaves out (a required schema without a default), writing nothing.
pub fn write_value(
    config: &JsonDataConfig,
    schema: Option<&Schema>,
    value: &Value,
    out: &mut Vec<u8>,
) -> ConnectResult<bool> {
    if value.is_null() {
        return match schema {
            None => Ok(false),
            Some(s) => match &s.default_value {
                Some(d) if !d.is_null() => write_value(config, schema, d, out),
                _ if s.optional => {
                    out.extend_from_slice(b"null");
                    Ok(true)
                }
                _ => Ok(false),
            },
        };
    }
    let name = schema.and_then(|s| s.name.as_deref());
    match (name, value) {
        (Some(Decimal::LOGICAL_NAME), Value::Decimal(d)) => {
            let s = schema.expect("named");
            if config.decimal_numeric {
                out.extend_from_slice(d.to_string().as_bytes());
            } else {
                let bytes = Decimal::from_logical(s, d)?;
                out.push(b'"');
                out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
                out.push(b'"');
            }
            return Ok(true);
        }
        (Some(Date::LOGICAL_NAME | Time::LOGICAL_NAME), Value::Date(v) | Value::Time(v)) => {
            out.extend_from_slice(v.to_string().as_bytes());
            return Ok(true);
        }
        (Some(Timestamp::LOGICAL_NAME), Value::Timestamp(v)) => {
            out.extend_from_slice(v.to_string().as_bytes());
            return Ok(true);
        }
        _ => {}
    }
    match value {
        Value::Null => unreachable!("handled above"),
        Value::Int8(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Int16(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Int32(v) | Value::Date(v) | Value::Time(v) => {
            out.extend_from_slice(v.to_string().as_bytes())
        }
        Value::Int64(v) | Value::Timestamp(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Float32(v) => write_number(out, float_to_string(*v)),
        Value::Float64(v) => write_number(out, double_to_string(*v)),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::String(s) => write_json_string(out, s),
        Value::Bytes(b) => {
            out.push(b'"');
            out.extend_from_slice(STANDARD.encode(b).as_bytes());
            out.push(b'"');
        }
        Value::Decimal(d) => out.extend_from_slice(d.to_string().as_bytes()),
        Value::Array(items) => {
            let elem = schema.and_then(|s| s.value_schema.as_deref());
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Jackson's ArrayNode.add(null) writes null.
                if !write_value(config, elem, v, out)? {
                    out.extend_from_slice(b"null");
                }
            }
            out.push(b']');
        }
        Value::Map(entries) => {
            let key_schema = schema.and_then(|s| s.key_schema.as_deref());
            let value_schema = schema.and_then(|s| s.value_schema.as_deref());
            let object_mode = match key_schema {
                Some(k) => k.schema_type == SchemaType::String && !k.optional,
                None => entries.iter().all(|(k, _)| matches!(k, Value::String(_))),
            };
            if object_mode {
                out.push(b'{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    let Value::String(key) = k else {
                        return Err(mismatch(key_schema, k));
                    };
                    write_json_string(out, key);
                    out.push(b':');
                    if !write_value(config, value_schema, v, out)? {
                        out.extend_from_slice(b"null");
                    }
                }
                out.push(b'}');
            } else {
                out.push(b'[');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(b"{\"key\":");
                    if !write_value(config, key_schema, k, out)? {
                        out.extend_from_slice(b"null");
                    }
                    out.extend_from_slice(b",\"value\":");
                    if !write_value(config, value_schema, v, out)? {
                        out.extend_from_slice(b"null");
                    }
                    out.push(b'}');
                }
                out.push(b']');
            }
        }
        Value::Struct(st) => {
            let s = schema.unwrap_or(st.schema().as_ref());
            if s.name.as_deref() == Some(JSON_TYPE_ONE_OF) {
                for f in &s.fields {
                    if let Some(v) = st.get(&f.name).filter(|v| !v.is_null()) {
                        return write_value(config, Some(&f.schema), v, out);
                    }
                }
                return write_value(config, Some(s), &Value::Null, out);
            }
            out.push(b'{');
            let mut first = true;
            for f in &s.fields {
                let v = st.get_by_index(f.index);
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                write_json_string(out, &f.name);
                out.push(b':');
                if write_value(config, Some(&f.schema), v, out)? {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push(b'}');
        }
    }
    Ok(true)
}

/// Reads a JSON value as a Connect value of `schema` (`None`: schemaless, as Confluent infers
/// it). `json` `None` is a missing property.
pub fn read_value(
    config: &JsonDataConfig,
    schema: Option<&Schema>,
    json: Option<&Json>,
) -> ConnectResult<Value> {
    let Some(schema) = schema else {
        return Ok(schemaless(json));
    };
    let json = match json {
        None | Some(Json::Null) => {
            if let Some(d) = &schema.default_value {
                return Ok(d.clone());
            }
            if json.is_none() || schema.optional {
                return Ok(Value::Null);
            }
            return Err(ConnectError::data(format!(
                "Invalid null value for required {} field",
                schema.schema_type.name()
            )));
        }
        Some(j) => j,
    };
    let bad = || {
        ConnectError::data(format!(
            "Invalid JSON for a {} schema: {json}",
            schema.schema_type.name()
        ))
    };
    let int = || json.as_i64().ok_or_else(bad);
    match schema.name.as_deref() {
        Some(Decimal::LOGICAL_NAME) => {
            return match json {
                Json::Number(n) => Decimal::parse(&n.to_string())
                    .or_else(|_| Decimal::parse(&format!("{}", n.as_f64().unwrap_or(0.0))))
                    .map(Value::Decimal),
                Json::String(s) => {
                    let bytes = STANDARD
                        .decode(s)
                        .map_err(|e| ConnectError::data(format!("Invalid bytes for Decimal field: {e}")))?;
                    Ok(Value::Decimal(Decimal::to_logical(schema, &bytes)?))
                }
                _ => Err(ConnectError::data(format!(
                    "Invalid type for Decimal, underlying representation should be numeric or bytes but was {json}"
                ))),
            };
        }
        Some(Date::LOGICAL_NAME) => return Ok(Value::Date(int()? as i32)),
        Some(Time::LOGICAL_NAME) => return Ok(Value::Time(int()? as i32)),
        Some(Timestamp::LOGICAL_NAME) => return Ok(Value::Timestamp(int()?)),
        _ => {}
    }
    Ok(match schema.schema_type {
        SchemaType::Boolean => Value::Boolean(json.as_bool().ok_or_else(bad)?),
        SchemaType::Int8 => Value::Int8(int()? as i16 as i8),
        SchemaType::Int16 => Value::Int16(int()? as i16),
        SchemaType::Int32 => Value::Int32(int()? as i32),
        SchemaType::Int64 => Value::Int64(int()?),
        SchemaType::Float32 => Value::Float32(json.as_f64().ok_or_else(bad)? as f32),
        SchemaType::Float64 => Value::Float64(json.as_f64().ok_or_else(bad)?),
        SchemaType::String => Value::String(json.as_str().ok_or_else(bad)?.to_string()),
        SchemaType::Bytes => {
            let text = json.as_str().ok_or_else(bad)?;
            Value::Bytes(
                STANDARD
                    .decode(text)
                    .map_err(|e| ConnectError::data(format!("Invalid bytes field: {e}")))?,
            )
        }
        SchemaType::Array => {
            let elem = schema.value_schema.as_deref();
            Value::Array(
                json.as_array()
                    .ok_or_else(bad)?
                    .iter()
                    .map(|v| read_value(config, elem, Some(v)))
                    .collect::<ConnectResult<_>>()?,
            )
        }
        SchemaType::Map => {
            let key = schema.key_schema.as_deref();
            let val = schema.value_schema.as_deref();
            match json {
                Json::Object(o) if key.is_none_or(|k| k.schema_type == SchemaType::String && !k.optional) => {
                    Value::Map(
                        o.iter()
                            .map(|(k, v)| Ok((Value::String(k.clone()), read_value(config, val, Some(v))?)))
                            .collect::<ConnectResult<_>>()?,
                    )
                }
                Json::Object(_) => {
                    return Err(ConnectError::data(
                        "Maps with non-string fields should be encoded as JSON array of objects, but found OBJECT",
                    ))
                }
                Json::Array(entries) => Value::Map(
                    entries
                        .iter()
                        .map(|e| {
                            let o = e.as_object().ok_or_else(|| {
                                ConnectError::data(format!("Found invalid map entry instead of object: {e}"))
                            })?;
                            if o.len() != 2 {
                                return Err(ConnectError::data(format!(
                                    "Found invalid map entry, expected length 2 but found :{}",
                                    o.len()
                                )));
                            }
                            Ok((read_value(config, key, o.get("key"))?, read_value(config, val, o.get("value"))?))
                        })
                        .collect::<ConnectResult<_>>()?,
                ),
                _ => return Err(bad()),
            }
        }
        SchemaType::Struct => {
            let schema_ref: SchemaRef = std::sync::Arc::new(schema.clone());
            if schema.name.as_deref() == Some(JSON_TYPE_ONE_OF) {
                return read_one_of(config, schema_ref, json);
            }
            let obj = json.as_object().ok_or_else(|| {
                ConnectError::data(format!(
                    "Structs should be encoded as JSON objects, but found {json}"
                ))
            })?;
            let values = schema
                .fields
                .iter()
                .map(|f| read_value(config, Some(&f.schema), obj.get(&f.name)))
                .collect::<ConnectResult<Vec<_>>>()?;
            Value::Struct(Struct::from_values(schema_ref, values)?)
        }
    })
}

/// A `oneOf` struct: the first branch whose simple type fits the value, else the struct branch
/// sharing most property names with it (Confluent's `matchStructSchema`).
fn read_one_of(config: &JsonDataConfig, schema: SchemaRef, json: &Json) -> ConnectResult<Value> {
    let mut best: Option<(usize, &Field)> = None;
    for f in &schema.fields {
        if fits_simple(&f.schema, json) {
            let v = read_value(config, Some(&f.schema), Some(json))?;
            return Ok(Value::Struct(Struct::new(schema.clone())?.put(&f.name, v)?));
        }
        let score = match_struct(&f.schema, json);
        if score > best.map_or(0, |(s, _)| s) {
            best = Some((score, f));
        }
    }
    let (_, f) =
        best.ok_or_else(|| ConnectError::data("Did not find matching oneof field for data"))?;
    let v = read_value(config, Some(&f.schema), Some(json))?;
    Ok(Value::Struct(Struct::new(schema.clone())?.put(&f.name, v)?))
}

fn fits_simple(schema: &Schema, json: &Json) -> bool {
    match schema.schema_type {
        SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 | SchemaType::Int64 => {
            json.is_i64() || json.is_u64()
        }
        SchemaType::Float32 | SchemaType::Float64 => json.is_number(),
        SchemaType::Boolean => json.is_boolean(),
        SchemaType::String => json.is_string(),
        SchemaType::Bytes => false,
        SchemaType::Array => json.is_array(),
        SchemaType::Map => json.is_object() || json.is_array(),
        SchemaType::Struct => false,
    }
}

fn match_struct(schema: &Schema, json: &Json) -> usize {
    let (SchemaType::Struct, Some(obj)) = (schema.schema_type, json.as_object()) else {
        return 0;
    };
    schema
        .fields
        .iter()
        .filter_map(|f| obj.get(&f.name).map(|v| 1 + match_struct(&f.schema, v)))
        .sum()
}

/// Confluent's schemaless reading: booleans, INT64 integers, FLOAT64 other numbers, strings,
/// arrays, maps of objects.
fn schemaless(json: Option<&Json>) -> Value {
    match json {
        None | Some(Json::Null) => Value::Null,
        Some(Json::Bool(b)) => Value::Boolean(*b),
        Some(Json::Number(n)) => match n.as_i64() {
            Some(i) => Value::Int64(i),
            None => Value::Float64(n.as_f64().unwrap_or(f64::NAN)),
        },
        Some(Json::String(s)) => Value::String(s.clone()),
        Some(Json::Array(a)) => Value::Array(a.iter().map(|v| schemaless(Some(v))).collect()),
        Some(Json::Object(o)) => Value::Map(
            o.iter()
                .map(|(k, v)| (Value::String(k.clone()), schemaless(Some(v))))
                .collect(),
        ),
    }
}
