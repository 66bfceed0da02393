//! Connect values ↔ Protobuf messages, as Confluent's `ProtobufData.fromConnectData` /
//! `toConnectData` convert them; the binary codec is `prost-reflect`'s `DynamicMessage`.
//!
//! Writing follows the message's descriptor: each Connect field sets the message field of the
//! same name, converted to the field's Protobuf type (a union struct sets the member that is
//! not null); nulls and empty arrays are left unset; a top-level primitive sets its wrapper's
//! `value`. Decimal → `confluent.type.Decimal` (unscaled two's-complement bytes, precision,
//! scale), Date → `google.type.Date` (UTC), Time → `google.type.TimeOfDay` (0 ≤ ms ≤ 86400000),
//! Timestamp → `google.protobuf.Timestamp`.
//!
//! Reading follows Confluent's `setStructField`: scalars and repeated fields read their value
//! (the type's default when absent, unless proto3 `optional`), messages only when present, a
//! `oneof` as its union struct holding the member that is set.

use std::borrow::Cow;

use num_bigint::BigInt;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage,
    Value as PValue,
};
use tributary_api::data::{Decimal, Schema, SchemaRef, SchemaType, Struct, Value};
use tributary_api::{ConnectError, ConnectResult};

use super::schema::{
    is_union, real_oneof, DATE_TYPE, DECIMAL_TYPE, ENUM_PARAM, TIMESTAMP_TYPE, TIME_TYPE,
};

const MILLIS_PER_DAY: i64 = 86_400_000;

fn invalid(schema: &Schema, value: &Value) -> ConnectError {
    ConnectError::data(format!(
        "Invalid type for {}: {}",
        schema.schema_type.name(),
        value.kind_name()
    ))
}

/// The message of a Connect value of schema `schema` written as `message`. Errors: a value not
/// fitting its schema or the message (a field the message lacks, a type it cannot hold).
pub fn to_message(
    message: &MessageDescriptor,
    schema: &Schema,
    value: &Value,
) -> ConnectResult<DynamicMessage> {
    let mut out = DynamicMessage::new(message.clone());
    if schema.schema_type != SchemaType::Struct {
        let field = message.get_field_by_name("value").ok_or_else(|| {
            ConnectError::data(format!(
                "A {} value cannot be written as message {}",
                schema.schema_type.name(),
                message.full_name()
            ))
        })?;
        if let Some(v) = field_value(&field, schema, value)? {
            out.set_field(&field, v);
        }
        return Ok(out);
    }
    let Value::Struct(s) = value else {
        return Err(invalid(schema, value));
    };
    for f in &schema.fields {
        let v = s.get(&f.name).unwrap_or(&Value::Null);
        if v.is_null() {
            continue;
        }
        if is_union(&f.schema) {
            let Value::Struct(u) = v else {
                return Err(invalid(&f.schema, v));
            };
            let member = f
                .schema
                .fields
                .iter()
                .find_map(|m| u.get(&m.name).filter(|x| !x.is_null()).map(|x| (m, x)))
                .ok_or_else(|| ConnectError::data("Cannot find non-null field"))?;
            let field = message.get_field_by_name(&member.0.name).ok_or_else(|| {
                ConnectError::data(format!("Cannot find field with name {}", member.0.name))
            })?;
            if let Some(pv) = field_value(&field, &member.0.schema, member.1)? {
                out.set_field(&field, pv);
            }
            continue;
        }
        let field = message
            .get_field_by_name(&f.name)
            .ok_or_else(|| ConnectError::data(format!("Cannot find field with name {}", f.name)))?;
        if let Some(pv) = field_value(&field, &f.schema, v)? {
            out.set_field(&field, pv);
        }
    }
    Ok(out)
}

/// The value of field `field` for Connect value `value`; `None` leaves the field unset.
fn field_value(
    field: &FieldDescriptor,
    schema: &Schema,
    value: &Value,
) -> ConnectResult<Option<PValue>> {
    if value.is_null() {
        return Ok(None);
    }
    if field.is_map() {
        let Value::Map(entries) = value else {
            return Err(invalid(schema, value));
        };
        let Kind::Message(entry) = field.kind() else {
            return Err(ConnectError::data("Map field without an entry message"));
        };
        let (kf, vf) = (entry.map_entry_key_field(), entry.map_entry_value_field());
        let (ks, vs) = map_schemas(schema)?;
        let mut map = std::collections::HashMap::new();
        for (k, v) in entries {
            let Some(key) = single_value(&kf, ks, k)? else {
                continue;
            };
            let key = map_key(key)?;
            let value = single_value(&vf, vs, v)?.unwrap_or_else(|| vf.default_value());
            map.insert(key, value);
        }
        return Ok(Some(PValue::Map(map)));
    }
    if field.is_list() {
        let list = match (value, field.kind()) {
            (Value::Array(items), _) => {
                let elem = schema
                    .value_schema
                    .as_deref()
                    .ok_or_else(|| ConnectError::data("Array schema without a value schema"))?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match single_value(field, elem, item)? {
                        Some(v) => out.push(v),
                        None => out.push(field.default_value_of_kind()),
                    }
                }
                out
            }
            (Value::Map(entries), Kind::Message(entry)) => {
                let (ks, vs) = map_schemas(schema)?;
                let (Some(kf), Some(vf)) = (
                    entry.get_field_by_name("key"),
                    entry.get_field_by_name("value"),
                ) else {
                    return Err(ConnectError::data(format!(
                        "Map entry {} without key or value",
                        entry.full_name()
                    )));
                };
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let mut m = DynamicMessage::new(entry.clone());
                    if let Some(k) = single_value(&kf, ks, k)? {
                        m.set_field(&kf, k);
                    }
                    if let Some(v) = single_value(&vf, vs, v)? {
                        m.set_field(&vf, v);
                    }
                    out.push(PValue::Message(m));
                }
                out
            }
            _ => return Err(invalid(schema, value)),
        };
        return Ok(if list.is_empty() {
            None
        } else {
            Some(PValue::List(list))
        });
    }
    single_value(field, schema, value)
}

trait DefaultOfKind {
    fn default_value_of_kind(&self) -> PValue;
}

impl DefaultOfKind for FieldDescriptor {
    fn default_value_of_kind(&self) -> PValue {
        match self.kind() {
            Kind::Message(m) => PValue::Message(DynamicMessage::new(m)),
            k => PValue::default_value(&k),
        }
    }
}

/// The key and value schemas of a map schema. Errors: a map schema without them.
fn map_schemas(schema: &Schema) -> ConnectResult<(&SchemaRef, &SchemaRef)> {
    match (schema.key_schema.as_ref(), schema.value_schema.as_ref()) {
        (Some(k), Some(v)) => Ok((k, v)),
        _ => Err(ConnectError::data("Map schema without key or value schema")),
    }
}

fn map_key(v: PValue) -> ConnectResult<MapKey> {
    Ok(match v {
        PValue::Bool(b) => MapKey::Bool(b),
        PValue::I32(i) => MapKey::I32(i),
        PValue::I64(i) => MapKey::I64(i),
        PValue::U32(i) => MapKey::U32(i),
        PValue::U64(i) => MapKey::U64(i),
        PValue::String(s) => MapKey::String(s),
        PValue::EnumNumber(i) => MapKey::I32(i),
        other => return Err(ConnectError::data(format!("Invalid map key {other:?}"))),
    })
}

fn int_of(value: &Value) -> Option<i64> {
    Some(match value {
        Value::Int8(v) => i64::from(*v),
        Value::Int16(v) => i64::from(*v),
        Value::Int32(v) => i64::from(*v),
        Value::Int64(v) => *v,
        _ => return None,
    })
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn set(m: &mut DynamicMessage, name: &str, v: PValue) -> ConnectResult<()> {
    let f = m.descriptor().get_field_by_name(name).ok_or_else(|| {
        ConnectError::data(format!(
            "{} has no field {name}",
            m.descriptor().full_name()
        ))
    })?;
    m.try_set_field(&f, v)
        .map_err(|e| ConnectError::data(format!("Invalid value for {name}: {e}")))
}

/// One (not repeated) value of `field`.
fn single_value(
    field: &FieldDescriptor,
    schema: &Schema,
    value: &Value,
) -> ConnectResult<Option<PValue>> {
    if value.is_null() {
        return Ok(None);
    }
    let bad = || invalid(schema, value);
    Ok(Some(match field.kind() {
        Kind::Message(m) => {
            let mut msg = DynamicMessage::new(m.clone());
            match (m.full_name(), value) {
                (DECIMAL_TYPE, Value::Decimal(d)) => {
                    let digits = d.unscaled.magnitude().to_string().len() as u32;
                    set(
                        &mut msg,
                        "value",
                        PValue::Bytes(d.unscaled.to_signed_bytes_be().into()),
                    )?;
                    set(&mut msg, "precision", PValue::U32(digits))?;
                    set(&mut msg, "scale", PValue::I32(d.scale))?;
                }
                (DATE_TYPE, Value::Date(days)) => {
                    let (y, mo, d) = civil_from_days(i64::from(*days));
                    set(&mut msg, "year", PValue::I32(y as i32))?;
                    set(&mut msg, "month", PValue::I32(mo as i32))?;
                    set(&mut msg, "day", PValue::I32(d as i32))?;
                }
                (TIME_TYPE, Value::Time(ms)) => {
                    let ms = i64::from(*ms);
                    if !(0..=MILLIS_PER_DAY).contains(&ms) {
                        return Err(ConnectError::data(
                            "Time values must use number of millis greater than 0 and less than 86400000",
                        ));
                    }
                    let secs = ms / 1000;
                    set(&mut msg, "hours", PValue::I32((secs / 3600) as i32))?;
                    set(&mut msg, "minutes", PValue::I32((secs / 60 % 60) as i32))?;
                    set(&mut msg, "seconds", PValue::I32((secs % 60) as i32))?;
                    set(
                        &mut msg,
                        "nanos",
                        PValue::I32((ms % 1000 * 1_000_000) as i32),
                    )?;
                }
                (TIMESTAMP_TYPE, Value::Timestamp(ms)) => {
                    set(&mut msg, "seconds", PValue::I64(ms.div_euclid(1000)))?;
                    set(
                        &mut msg,
                        "nanos",
                        PValue::I32((ms.rem_euclid(1000) * 1_000_000) as i32),
                    )?;
                }
                (_, Value::Struct(_)) => msg = to_message(&m, schema, value)?,
                (name, v) if super::schema::wrapper_field_type(name).is_some() => {
                    let inner = m
                        .get_field_by_name("value")
                        .ok_or_else(|| ConnectError::data("Wrapper without value"))?;
                    if let Some(x) = single_value(&inner, schema, v)? {
                        msg.set_field(&inner, x);
                    }
                }
                _ => return Err(bad()),
            }
            PValue::Message(msg)
        }
        Kind::Enum(e) => {
            let number = match value {
                Value::String(s) => {
                    let tagged = schema
                        .parameters
                        .as_ref()
                        .and_then(|p| p.get(&format!("{ENUM_PARAM}.{s}")))
                        .and_then(|t| t.trim().parse::<i32>().ok());
                    match tagged.or_else(|| e.get_value_by_name(s).map(|v| v.number())) {
                        Some(n) => n,
                        None => {
                            return Err(ConnectError::data(format!(
                                "Invalid symbol {s} for enum {}",
                                e.full_name()
                            )))
                        }
                    }
                }
                v => int_of(v)
                    .and_then(|i| i32::try_from(i).ok())
                    .ok_or_else(bad)?,
            };
            PValue::EnumNumber(number)
        }
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            PValue::I32(int_of(value).ok_or_else(bad)? as i32)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => PValue::I64(int_of(value).ok_or_else(bad)?),
        Kind::Uint32 | Kind::Fixed32 => PValue::U32(int_of(value).ok_or_else(bad)? as u32),
        Kind::Uint64 | Kind::Fixed64 => PValue::U64(int_of(value).ok_or_else(bad)? as u64),
        Kind::Float => match value {
            Value::Float32(f) => PValue::F32(*f),
            Value::Float64(f) => PValue::F32(*f as f32),
            v => PValue::F32(int_of(v).ok_or_else(bad)? as f32),
        },
        Kind::Double => match value {
            Value::Float32(f) => PValue::F64(f64::from(*f)),
            Value::Float64(f) => PValue::F64(*f),
            v => PValue::F64(int_of(v).ok_or_else(bad)? as f64),
        },
        Kind::Bool => match value {
            Value::Boolean(b) => PValue::Bool(*b),
            _ => return Err(bad()),
        },
        Kind::String => match value {
            Value::String(s) => PValue::String(s.clone()),
            _ => return Err(bad()),
        },
        Kind::Bytes => match value {
            Value::Bytes(b) => PValue::Bytes(b.clone().into()),
            _ => return Err(bad()),
        },
    }))
}

// ---------------------------------------------------------------------------------------
// Protobuf → Connect

/// The Connect value of message `message` read as Connect schema `schema` (made by
/// [`super::schema::to_connect_schema`] from the message's descriptor).
pub fn from_message(schema: &SchemaRef, message: &DynamicMessage) -> ConnectResult<Value> {
    if schema.schema_type != SchemaType::Struct {
        let field = message
            .descriptor()
            .get_field_by_name("value")
            .ok_or_else(|| ConnectError::data("Wrapper message without a value field"))?;
        return to_connect(schema, &field, &message.get_field(&field));
    }
    struct_value(schema, message)
}

fn struct_value(schema: &SchemaRef, message: &DynamicMessage) -> ConnectResult<Value> {
    let desc = message.descriptor();
    let mut values = Vec::with_capacity(schema.fields.len());
    for f in &schema.fields {
        if is_union(&f.schema) {
            let mut union = None;
            for (i, m) in f.schema.fields.iter().enumerate() {
                let Some(fd) = desc.get_field_by_name(&m.name) else {
                    continue;
                };
                if message.has_field(&fd) {
                    let mut members = vec![Value::Null; f.schema.fields.len()];
                    members[i] = to_connect(&m.schema, &fd, &message.get_field(&fd))?;
                    union = Some(Value::Struct(Struct::from_values(
                        f.schema.clone(),
                        members,
                    )?));
                    break;
                }
            }
            values.push(union.unwrap_or(Value::Null));
            continue;
        }
        let fd = desc
            .get_field_by_name(&f.name)
            .ok_or_else(|| ConnectError::data(format!("Cannot find field with name {}", f.name)))?;
        let primitive_or_repeated =
            !matches!(fd.kind(), Kind::Message(_)) || fd.is_list() || fd.is_map();
        let proto3_optional = fd.field_descriptor_proto().proto3_optional();
        let present = message.has_field(&fd);
        if (primitive_or_repeated && !proto3_optional) || present {
            values.push(to_connect(&f.schema, &fd, &message.get_field(&fd))?);
        } else {
            values.push(Value::Null);
        }
        let _ = real_oneof(&fd);
    }
    Ok(Value::Struct(Struct::from_values(schema.clone(), values)?))
}

fn get<'a>(m: &'a DynamicMessage, name: &str) -> Option<Cow<'a, PValue>> {
    m.get_field_by_name(name)
}

fn int_field(m: &DynamicMessage, name: &str) -> i64 {
    match get(m, name).as_deref() {
        Some(PValue::I32(v)) => i64::from(*v),
        Some(PValue::I64(v)) => *v,
        Some(PValue::U32(v)) => i64::from(*v),
        Some(PValue::U64(v)) => *v as i64,
        _ => 0,
    }
}

fn mismatch(schema: &Schema, value: &PValue) -> ConnectError {
    ConnectError::data(format!(
        "Invalid type for {}: {value:?}",
        schema.schema_type.name()
    ))
}

/// The Connect value of a field's value.
fn to_connect(schema: &SchemaRef, field: &FieldDescriptor, value: &PValue) -> ConnectResult<Value> {
    match schema.name.as_deref() {
        Some(Decimal::LOGICAL_NAME) => {
            let PValue::Message(m) = value else {
                return Err(mismatch(schema, value));
            };
            let bytes = match get(m, "value").as_deref() {
                Some(PValue::Bytes(b)) => b.to_vec(),
                _ => Vec::new(),
            };
            return Ok(Value::Decimal(Decimal::new(
                BigInt::from_signed_bytes_be(&bytes),
                int_field(m, "scale") as i32,
            )));
        }
        Some(tributary_api::data::Date::LOGICAL_NAME) => {
            let PValue::Message(m) = value else {
                return Err(mismatch(schema, value));
            };
            let days = days_from_civil(
                int_field(m, "year"),
                int_field(m, "month"),
                int_field(m, "day"),
            );
            return Ok(Value::Date(days as i32));
        }
        Some(tributary_api::data::Time::LOGICAL_NAME) => {
            let PValue::Message(m) = value else {
                return Err(mismatch(schema, value));
            };
            let ms = (int_field(m, "hours") * 3600
                + int_field(m, "minutes") * 60
                + int_field(m, "seconds"))
                * 1000
                + int_field(m, "nanos") / 1_000_000;
            return Ok(Value::Time(ms as i32));
        }
        Some(tributary_api::data::Timestamp::LOGICAL_NAME) => {
            let PValue::Message(m) = value else {
                return Err(mismatch(schema, value));
            };
            return Ok(Value::Timestamp(
                int_field(m, "seconds") * 1000 + int_field(m, "nanos") / 1_000_000,
            ));
        }
        _ => {}
    }
    // A wrapper message read as its primitive.
    if schema.schema_type.is_primitive() {
        if let PValue::Message(m) = value {
            if let Some(inner) = m.descriptor().get_field_by_name("value") {
                return to_connect(schema, &inner, &m.get_field(&inner));
            }
        }
    }
    Ok(match (schema.schema_type, value) {
        (SchemaType::Int8, v) => Value::Int8(num(schema, v)? as i8),
        (SchemaType::Int16, v) => Value::Int16(num(schema, v)? as i16),
        (SchemaType::Int32, v) => Value::Int32(num(schema, v)? as i32),
        (SchemaType::Int64, PValue::U32(u)) => Value::Int64(i64::from(*u)),
        (SchemaType::Int64, v) => Value::Int64(num(schema, v)?),
        (SchemaType::Float32, PValue::F32(f)) => Value::Float32(*f),
        (SchemaType::Float64, PValue::F64(f)) => Value::Float64(*f),
        (SchemaType::Boolean, PValue::Bool(b)) => Value::Boolean(*b),
        (SchemaType::String, PValue::String(s)) => Value::String(s.clone()),
        (SchemaType::String, PValue::EnumNumber(n)) => {
            let Kind::Enum(e) = field.kind() else {
                return Err(mismatch(schema, value));
            };
            match e.get_value(*n) {
                Some(v) => Value::String(v.name().to_string()),
                None => Value::String(n.to_string()),
            }
        }
        (SchemaType::Bytes, PValue::Bytes(b)) => Value::Bytes(b.to_vec()),
        (SchemaType::Array, PValue::List(items)) => {
            let elem = schema
                .value_schema
                .as_ref()
                .ok_or_else(|| ConnectError::data("Array schema without a value schema"))?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(to_connect(elem, field, item)?);
            }
            Value::Array(out)
        }
        (SchemaType::Map, PValue::List(entries)) => {
            let (ks, vs) = map_schemas(schema)?;
            let mut out = Vec::with_capacity(entries.len());
            for e in entries {
                let PValue::Message(m) = e else {
                    return Err(mismatch(schema, e));
                };
                let d = m.descriptor();
                let (Some(kf), Some(vf)) =
                    (d.get_field_by_name("key"), d.get_field_by_name("value"))
                else {
                    return Err(mismatch(schema, e));
                };
                out.push((entry_value(ks, &kf, m)?, entry_value(vs, &vf, m)?));
            }
            Value::Map(out)
        }
        (SchemaType::Map, PValue::Map(map)) => {
            let (ks, vs) = map_schemas(schema)?;
            let Kind::Message(entry) = field.kind() else {
                return Err(mismatch(schema, value));
            };
            let (kf, vf) = (entry.map_entry_key_field(), entry.map_entry_value_field());
            let mut keys: Vec<&MapKey> = map.keys().collect();
            keys.sort();
            let mut out = Vec::with_capacity(keys.len());
            for k in keys {
                let key = match k.clone() {
                    MapKey::Bool(b) => PValue::Bool(b),
                    MapKey::I32(i) => PValue::I32(i),
                    MapKey::I64(i) => PValue::I64(i),
                    MapKey::U32(i) => PValue::U32(i),
                    MapKey::U64(i) => PValue::U64(i),
                    MapKey::String(s) => PValue::String(s),
                };
                out.push((to_connect(ks, &kf, &key)?, to_connect(vs, &vf, &map[k])?));
            }
            Value::Map(out)
        }
        (SchemaType::Struct, PValue::Message(m)) => struct_value(schema, m)?,
        (_, v) => return Err(mismatch(schema, v)),
    })
}

fn entry_value(
    schema: &SchemaRef,
    f: &FieldDescriptor,
    m: &DynamicMessage,
) -> ConnectResult<Value> {
    if matches!(f.kind(), Kind::Message(_)) && !m.has_field(f) {
        return Ok(Value::Null);
    }
    to_connect(schema, f, &m.get_field(f))
}

fn num(schema: &Schema, v: &PValue) -> ConnectResult<i64> {
    Ok(match v {
        PValue::I32(i) => i64::from(*i),
        PValue::I64(i) => *i,
        PValue::U32(i) => i64::from(*i),
        PValue::U64(i) => *i as i64,
        PValue::EnumNumber(i) => i64::from(*i),
        other => return Err(mismatch(schema, other)),
    })
}
