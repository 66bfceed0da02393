//! Connect values ↔ Avro binary data (the datum after Confluent's five-byte header), as
//! Confluent's `AvroData.fromConnectData` / `toConnectData` followed by Avro's
//! `GenericDatumWriter` / `GenericDatumReader` produce and read it.
//!
//! The codec walks the Avro schema and the Connect value together, so a value goes straight to
//! bytes and bytes straight to a value, with no intermediate tree (Confluent converts to Avro's
//! generic objects first). Encoding follows the Avro specification's binary encoding: `int` and
//! `long` as zig-zag varints, `float` / `double` little-endian, `bytes` and `string` with a
//! length, arrays and maps as one block of items followed by a zero count, a union as the
//! branch index then the value, an enum as the symbol's index, `fixed` as its bytes. The tests
//! check both directions against the `apache-avro` crate's reader and writer, and the
//! integration tests against confluent-kafka-python's deserializer and Apicurio's Java
//! converter.
//!
//! Connect → Avro, per Connect type: INT8/INT16/INT32 as `int`, INT64 as `long`, Decimal as the
//! unscaled two's-complement bytes (padded to a `fixed` size), Date/Time as `int`, Timestamp as
//! `long`, STRUCT fields matched to the record's fields by name (a field the struct lacks is
//! written as its Avro default), maps with non-string keys as arrays of key/value records, an
//! optional value as the union branch of its type (or of null). A map with string keys is
//! written in the order Java's `HashMap` iterates it (Confluent copies it into one before Avro
//! writes it), so the bytes are the bytes a Java worker writes. Errors are
//! [`ConnectError::Data`] naming what did not fit.

use serde_json::Value as Json;
use tributary_api::data::{Decimal, Field, Schema, SchemaRef, SchemaType, Struct, Value};
use tributary_api::{ConnectError, ConnectResult};

use super::schema::{scrub_name, AvroNamedKind, AvroSchema, AvroType};

// ------------------------------------------------------------------ encoding

/// Appends `value` (of Connect schema `schema`) as Avro binary data of `avro` to `out`.
///
/// Errors ([`ConnectError::Data`]): a null for a non-optional type, a value of another type
/// than the schema says, a struct without a field the record needs (and which has no default),
/// a Decimal whose scale differs from its schema's.
pub fn encode(
    avro: &AvroSchema,
    schema: &Schema,
    value: &Value,
    out: &mut Vec<u8>,
) -> ConnectResult<()> {
    Encoder { avro }.write(&avro.root, Some(schema), value, out)
}

struct Encoder<'a> {
    avro: &'a AvroSchema,
}

fn mismatch(ty: &str, value: &Value) -> ConnectError {
    ConnectError::data(format!(
        "Invalid value for Avro type {ty}: a {} value",
        value.kind_name()
    ))
}

/// Zig-zag varint of a `long`.
pub fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

impl Encoder<'_> {
    fn write(
        &self,
        ty: &AvroType,
        schema: Option<&Schema>,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        match ty {
            AvroType::Primitive { ty, .. } => self.write_primitive(ty, schema, value, out),
            AvroType::Union(branches) => self.write_union(branches, schema, value, out),
            AvroType::Array { items, .. } => {
                let elem = schema.and_then(|s| s.value_schema.as_deref());
                match value {
                    Value::Array(list) => {
                        if !list.is_empty() {
                            write_long(out, list.len() as i64);
                            for v in list {
                                self.write(items, elem, v, out)?;
                            }
                        }
                        out.push(0);
                        Ok(())
                    }
                    // A Connect map with non-string keys: an array of key/value records.
                    Value::Map(entries) => {
                        let AvroType::Ref(i) = items.as_ref() else {
                            return Err(mismatch("array", value));
                        };
                        let AvroNamedKind::Record(fields) = &self.avro.named(*i).kind else {
                            return Err(mismatch("array", value));
                        };
                        let (key_ty, value_ty) = match (
                            fields.iter().find(|f| f.name == "key"),
                            fields.iter().find(|f| f.name == "value"),
                        ) {
                            (Some(k), Some(v)) => (&k.ty, &v.ty),
                            _ => return Err(mismatch("array", value)),
                        };
                        let key_schema = schema.and_then(|s| s.key_schema.as_deref());
                        if !entries.is_empty() {
                            write_long(out, entries.len() as i64);
                            for (k, v) in entries {
                                self.write(key_ty, key_schema, k, out)?;
                                self.write(value_ty, elem, v, out)?;
                            }
                        }
                        out.push(0);
                        Ok(())
                    }
                    other => Err(mismatch("array", other)),
                }
            }
            AvroType::Map { values, .. } => {
                let Value::Map(entries) = value else {
                    return Err(mismatch("map", value));
                };
                let elem = schema.and_then(|s| s.value_schema.as_deref());
                let keys = entries
                    .iter()
                    .map(|(k, _)| match k {
                        Value::String(s) => Ok(s.as_str()),
                        other => Err(mismatch("map key string", other)),
                    })
                    .collect::<ConnectResult<Vec<&str>>>()?;
                let order = tributary_api::data::java_hash_map::order(&keys);
                if !order.is_empty() {
                    write_long(out, order.len() as i64);
                    for (key, value) in order {
                        write_bytes(out, keys[key].as_bytes());
                        self.write(values, elem, &entries[value].1, out)?;
                    }
                }
                out.push(0);
                Ok(())
            }
            AvroType::Ref(i) => {
                let named = self.avro.named(*i);
                match &named.kind {
                    AvroNamedKind::Record(fields) => {
                        let Value::Struct(s) = value else {
                            return Err(mismatch(&named.full_name, value));
                        };
                        for (pos, f) in fields.iter().enumerate() {
                            match struct_field(s, pos, &f.name) {
                                Some((v, fs)) => self.write(&f.ty, Some(fs), v, out)?,
                                None => {
                                    let Some(d) = &f.default else {
                                        return Err(ConnectError::data(format!(
                                            "Field {} of Avro record {} has no value and no default",
                                            f.name, named.full_name
                                        )));
                                    };
                                    self.write_json_default(&f.ty, d, out)?;
                                }
                            }
                        }
                        Ok(())
                    }
                    AvroNamedKind::Enum { symbols, .. } => {
                        let Value::String(sym) = value else {
                            return Err(mismatch(&named.full_name, value));
                        };
                        let index = symbols.iter().position(|s| s == sym).ok_or_else(|| {
                            ConnectError::data(format!(
                                "Symbol {sym} is not in enum {}",
                                named.full_name
                            ))
                        })?;
                        write_long(out, index as i64);
                        Ok(())
                    }
                    AvroNamedKind::Fixed(size) => {
                        let bytes = match (value, schema) {
                            (Value::Decimal(d), Some(s)) => {
                                pad_to_fixed(Decimal::from_logical(s, d)?, *size)
                            }
                            (Value::Bytes(b), Some(s)) if is_decimal(s) => {
                                pad_to_fixed(b.clone(), *size)
                            }
                            (Value::Bytes(b), _) => b.clone(),
                            (other, _) => return Err(mismatch(&named.full_name, other)),
                        };
                        if bytes.len() != *size {
                            return Err(ConnectError::data(format!(
                                "Fixed {} needs {size} bytes, got {}",
                                named.full_name,
                                bytes.len()
                            )));
                        }
                        out.extend_from_slice(&bytes);
                        Ok(())
                    }
                }
            }
        }
    }

    fn write_primitive(
        &self,
        ty: &str,
        schema: Option<&Schema>,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        match (ty, value) {
            ("null", Value::Null) => {}
            ("boolean", Value::Boolean(b)) => out.push(u8::from(*b)),
            ("int", Value::Int8(v)) => write_long(out, i64::from(*v)),
            ("int", Value::Int16(v)) => write_long(out, i64::from(*v)),
            ("int", Value::Int32(v) | Value::Date(v) | Value::Time(v)) => {
                write_long(out, i64::from(*v))
            }
            ("long", Value::Int64(v) | Value::Timestamp(v)) => write_long(out, *v),
            // Avro's promotions a writer applies when a later schema widened the type.
            ("long", Value::Int8(v)) => write_long(out, i64::from(*v)),
            ("long", Value::Int16(v)) => write_long(out, i64::from(*v)),
            ("long", Value::Int32(v)) => write_long(out, i64::from(*v)),
            ("float", Value::Float32(v)) => out.extend_from_slice(&v.to_le_bytes()),
            ("double", Value::Float64(v)) => out.extend_from_slice(&v.to_le_bytes()),
            ("double", Value::Float32(v)) => out.extend_from_slice(&f64::from(*v).to_le_bytes()),
            ("string", Value::String(s)) => write_bytes(out, s.as_bytes()),
            ("bytes", Value::Bytes(b)) => write_bytes(out, b),
            ("bytes", Value::Decimal(d)) => {
                let s = schema.ok_or_else(|| mismatch("bytes", value))?;
                write_bytes(out, &Decimal::from_logical(s, d)?)
            }
            ("null", other) => {
                return Err(ConnectError::data(format!(
                    "Found {} value for Avro type null",
                    other.kind_name()
                )))
            }
            (_, Value::Null) => {
                return Err(ConnectError::data(
                    "Found null value for non-optional schema",
                ))
            }
            (ty, other) => return Err(mismatch(ty, other)),
        }
        Ok(())
    }

    fn write_union(
        &self,
        branches: &[AvroType],
        schema: Option<&Schema>,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        let null_branch = branches
            .iter()
            .position(|b| matches!(b, AvroType::Primitive { ty, .. } if ty == "null"));
        if value.is_null() {
            let index = null_branch
                .ok_or_else(|| ConnectError::data("Found null value for non-optional schema"))?;
            write_long(out, index as i64);
            return Ok(());
        }
        // A Connect struct standing for a union: the one field set names the branch.
        if let (Value::Struct(s), Some(sch)) = (value, schema) {
            if sch.name.as_deref() == Some(super::schema::AVRO_TYPE_UNION) {
                let non_null: Vec<usize> = (0..branches.len())
                    .filter(|i| Some(*i) != null_branch)
                    .collect();
                for (pos, f) in sch.fields.iter().enumerate() {
                    // `struct.get(field)`: a null field with a default is its default.
                    let v = match (s.get_by_index(pos), &f.schema.default_value) {
                        (Value::Null, Some(d)) => d,
                        (v, _) => v,
                    };
                    if !v.is_null() {
                        let index = *non_null.get(pos).ok_or_else(|| mismatch("union", value))?;
                        write_long(out, index as i64);
                        return self.write(&branches[index], Some(&f.schema), v, out);
                    }
                }
                return Err(ConnectError::data("Union struct has no field set"));
            }
        }
        let index = self
            .branch_for(branches, schema, value)
            .ok_or_else(|| mismatch("union", value))?;
        write_long(out, index as i64);
        self.write(&branches[index], schema, value, out)
    }

    /// The union branch a non-null value goes to: for Connect's optional types the one
    /// non-null branch; otherwise the first branch whose type fits the value.
    fn branch_for(
        &self,
        branches: &[AvroType],
        schema: Option<&Schema>,
        value: &Value,
    ) -> Option<usize> {
        let non_null: Vec<usize> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| !matches!(b, AvroType::Primitive { ty, .. } if ty == "null"))
            .map(|(i, _)| i)
            .collect();
        if non_null.len() == 1 {
            return Some(non_null[0]);
        }
        non_null
            .into_iter()
            .find(|&i| self.fits(&branches[i], schema, value))
    }

    fn fits(&self, ty: &AvroType, schema: Option<&Schema>, value: &Value) -> bool {
        match (ty, value) {
            (AvroType::Primitive { ty, .. }, v) => matches!(
                (ty.as_str(), v),
                ("boolean", Value::Boolean(_))
                    | (
                        "int",
                        Value::Int8(_)
                            | Value::Int16(_)
                            | Value::Int32(_)
                            | Value::Date(_)
                            | Value::Time(_)
                    )
                    | ("long", Value::Int64(_) | Value::Timestamp(_))
                    | ("float", Value::Float32(_))
                    | ("double", Value::Float64(_))
                    | ("string", Value::String(_))
                    | ("bytes", Value::Bytes(_) | Value::Decimal(_))
            ),
            (AvroType::Array { .. }, Value::Array(_)) => true,
            (AvroType::Map { .. }, Value::Map(_)) => true,
            (AvroType::Ref(i), v) => {
                let named = self.avro.named(*i);
                match (&named.kind, v) {
                    (AvroNamedKind::Record(_), Value::Struct(s)) => {
                        s.schema().name.as_deref() == Some(named.full_name.as_str())
                            || schema.and_then(|s| s.name.as_deref()).is_none()
                    }
                    (AvroNamedKind::Enum { .. }, Value::String(_)) => true,
                    (AvroNamedKind::Fixed(_), Value::Bytes(_) | Value::Decimal(_)) => true,
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Writes a record field's Avro default (JSON, as the schema gives it).
    fn write_json_default(&self, ty: &AvroType, d: &Json, out: &mut Vec<u8>) -> ConnectResult<()> {
        let bad = || ConnectError::data(format!("Invalid Avro default {d}"));
        match ty {
            AvroType::Primitive { ty, .. } => match (ty.as_str(), d) {
                ("null", Json::Null) => {}
                ("boolean", Json::Bool(b)) => out.push(u8::from(*b)),
                ("int" | "long", n) => write_long(out, n.as_i64().ok_or_else(bad)?),
                ("float", n) => {
                    out.extend_from_slice(&(n.as_f64().ok_or_else(bad)? as f32).to_le_bytes())
                }
                ("double", n) => out.extend_from_slice(&n.as_f64().ok_or_else(bad)?.to_le_bytes()),
                ("string", Json::String(s)) => write_bytes(out, s.as_bytes()),
                ("bytes", Json::String(s)) => {
                    let b: Vec<u8> = s.chars().map(|c| c as u32 as u8).collect();
                    write_bytes(out, &b)
                }
                _ => return Err(bad()),
            },
            // A union's default is of its first branch.
            AvroType::Union(branches) => {
                let first = branches.first().ok_or_else(bad)?;
                write_long(out, 0);
                self.write_json_default(first, d, out)?;
            }
            AvroType::Array { items, .. } => {
                let a = d.as_array().ok_or_else(bad)?;
                if !a.is_empty() {
                    write_long(out, a.len() as i64);
                    for v in a {
                        self.write_json_default(items, v, out)?;
                    }
                }
                out.push(0);
            }
            AvroType::Map { values, .. } => {
                let o = d.as_object().ok_or_else(bad)?;
                if !o.is_empty() {
                    write_long(out, o.len() as i64);
                    for (k, v) in o {
                        write_bytes(out, k.as_bytes());
                        self.write_json_default(values, v, out)?;
                    }
                }
                out.push(0);
            }
            AvroType::Ref(i) => match &self.avro.named(*i).kind {
                AvroNamedKind::Record(fields) => {
                    let o = d.as_object().ok_or_else(bad)?;
                    for f in fields {
                        let v = o.get(&f.name).or(f.default.as_ref()).ok_or_else(bad)?;
                        self.write_json_default(&f.ty, v, out)?;
                    }
                }
                AvroNamedKind::Enum { symbols, .. } => {
                    let s = d.as_str().ok_or_else(bad)?;
                    let i = symbols.iter().position(|x| x == s).ok_or_else(bad)?;
                    write_long(out, i as i64);
                }
                AvroNamedKind::Fixed(_) => {
                    let s = d.as_str().ok_or_else(bad)?;
                    out.extend(s.chars().map(|c| c as u32 as u8));
                }
            },
        }
        Ok(())
    }
}

/// The value and schema of a struct's field for the Avro field `name`, trying position `pos`
/// first (records written from Connect schemas list the fields in the same order): the field of
/// that name, else the one whose name `scrub.invalid.names` makes `name` (`my-field` for
/// `my_field`). A null with a default gives the default, as Connect's `Struct.get`.
fn struct_field<'s>(s: &'s Struct, pos: usize, name: &str) -> Option<(&'s Value, &'s Schema)> {
    let schema = s.schema();
    let scrubs_to = |f: &&Field| f.name != name && scrub_name(&f.name, true) == name;
    let field = match schema.fields.get(pos) {
        Some(f) if f.name == name => f,
        Some(f) if scrubs_to(&f) && schema.field(name).is_none() => f,
        _ => match schema.field(name) {
            Some(f) => f,
            None => schema.fields.iter().find(scrubs_to)?,
        },
    };
    let v = s.get_by_index(field.index);
    let v = match (&field.schema.default_value, v) {
        (Some(d), Value::Null) => d,
        _ => v,
    };
    Some((v, &field.schema))
}

fn is_decimal(s: &Schema) -> bool {
    s.name.as_deref() == Some(Decimal::LOGICAL_NAME)
}

/// Sign-extends an unscaled decimal's two's-complement bytes to a `fixed` size.
fn pad_to_fixed(bytes: Vec<u8>, size: usize) -> Vec<u8> {
    if bytes.len() >= size {
        return bytes;
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut out = vec![fill; size - bytes.len()];
    out.extend_from_slice(&bytes);
    out
}

// ------------------------------------------------------------------ decoding

/// Reads one Avro datum of `avro` from `input` as a Connect value of `schema` (the Connect
/// schema [`super::schema::to_connect_schema`] made of `avro`).
///
/// Errors ([`ConnectError::Data`]): input that ends early, a union or enum index out of range,
/// a string that is not UTF-8, bytes left over after the datum.
pub fn decode(avro: &AvroSchema, schema: &SchemaRef, input: &[u8]) -> ConnectResult<Value> {
    let mut reader = Reader { input, pos: 0 };
    let value = Decoder { avro }.read(&avro.root, schema, &mut reader)?;
    Ok(value)
}

struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
}

fn truncated() -> ConnectError {
    ConnectError::data("Avro data ends early")
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> ConnectResult<u8> {
        let b = *self.input.get(self.pos).ok_or_else(truncated)?;
        self.pos += 1;
        Ok(b)
    }
    fn long(&mut self) -> ConnectResult<i64> {
        let mut n: u64 = 0;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift >= 64 {
                return Err(ConnectError::data("Invalid Avro varint: too long"));
            }
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        Ok(((n >> 1) as i64) ^ -((n & 1) as i64))
    }
    fn int(&mut self) -> ConnectResult<i32> {
        let v = self.long()?;
        i32::try_from(v).map_err(|_| ConnectError::data(format!("Avro int out of range: {v}")))
    }
    fn take(&mut self, n: usize) -> ConnectResult<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(truncated)?;
        let s = self.input.get(self.pos..end).ok_or_else(truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn bytes(&mut self) -> ConnectResult<&'a [u8]> {
        let n = self.long()?;
        let n = usize::try_from(n)
            .map_err(|_| ConnectError::data(format!("Invalid Avro length: {n}")))?;
        self.take(n)
    }
    /// Item counts of an array or map, block by block (a negative count is followed by the
    /// block's size in bytes).
    fn block_count(&mut self) -> ConnectResult<usize> {
        let n = self.long()?;
        let n = if n < 0 {
            self.long()?;
            n.checked_neg()
                .ok_or_else(|| ConnectError::data("Invalid Avro block count"))?
        } else {
            n
        };
        usize::try_from(n).map_err(|_| ConnectError::data(format!("Invalid Avro block count: {n}")))
    }
}

struct Decoder<'a> {
    avro: &'a AvroSchema,
}

impl Decoder<'_> {
    fn read(&self, ty: &AvroType, schema: &SchemaRef, r: &mut Reader<'_>) -> ConnectResult<Value> {
        match ty {
            AvroType::Primitive { ty, .. } => self.read_primitive(ty, schema, r),
            AvroType::Union(branches) => {
                let index = r.long()?;
                let branch = usize::try_from(index)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .ok_or_else(|| {
                        ConnectError::data(format!("Invalid Avro union index {index}"))
                    })?;
                if matches!(branch, AvroType::Primitive { ty, .. } if ty == "null") {
                    return Ok(Value::Null);
                }
                if schema.name.as_deref() == Some(super::schema::AVRO_TYPE_UNION)
                    && schema.schema_type == SchemaType::Struct
                {
                    // The Connect field of this branch: branches in order, null left out.
                    let index = index as usize;
                    let nulls_before = branches[..index]
                        .iter()
                        .filter(|b| matches!(b, AvroType::Primitive { ty, .. } if ty == "null"))
                        .count();
                    let field = schema.fields.get(index - nulls_before).ok_or_else(|| {
                        ConnectError::data("Union branch without a Connect field")
                    })?;
                    let v = self.read(branch, &field.schema, r)?;
                    let s = Struct::new(schema.clone())?.put(&field.name, v)?;
                    return Ok(Value::Struct(s));
                }
                self.read(branch, schema, r)
            }
            AvroType::Array { items, .. } => {
                if schema.schema_type == SchemaType::Map {
                    return self.read_map_entries(items, schema, r);
                }
                let elem = schema
                    .value_schema
                    .as_ref()
                    .ok_or_else(|| ConnectError::data("Array schema without element schema"))?;
                let mut list = Vec::new();
                loop {
                    let n = r.block_count()?;
                    if n == 0 {
                        break;
                    }
                    list.reserve(n.min(r.input.len()));
                    for _ in 0..n {
                        list.push(self.read(items, elem, r)?);
                    }
                }
                Ok(Value::Array(list))
            }
            AvroType::Map { values, .. } => {
                let elem = schema
                    .value_schema
                    .as_ref()
                    .ok_or_else(|| ConnectError::data("Map schema without value schema"))?;
                let mut entries = Vec::new();
                loop {
                    let n = r.block_count()?;
                    if n == 0 {
                        break;
                    }
                    for _ in 0..n {
                        let k = utf8(r.bytes()?)?;
                        entries.push((Value::String(k), self.read(values, elem, r)?));
                    }
                }
                Ok(Value::Map(entries))
            }
            AvroType::Ref(i) => {
                let named = self.avro.named(*i);
                match &named.kind {
                    AvroNamedKind::Record(fields) => {
                        let mut values = Vec::with_capacity(fields.len());
                        for (pos, f) in fields.iter().enumerate() {
                            let fs = schema.fields.get(pos).ok_or_else(|| {
                                ConnectError::data(format!(
                                    "No Connect field for Avro field {}",
                                    f.name
                                ))
                            })?;
                            values.push(self.read(&f.ty, &fs.schema, r)?);
                        }
                        Ok(Value::Struct(Struct::from_values(schema.clone(), values)?))
                    }
                    AvroNamedKind::Enum { symbols, .. } => {
                        let index = r.long()?;
                        let sym = usize::try_from(index)
                            .ok()
                            .and_then(|i| symbols.get(i))
                            .ok_or_else(|| {
                                ConnectError::data(format!(
                                    "Invalid index {index} of enum {}",
                                    named.full_name
                                ))
                            })?;
                        Ok(Value::String(sym.clone()))
                    }
                    AvroNamedKind::Fixed(size) => {
                        let b = r.take(*size)?;
                        if is_decimal(schema) {
                            Ok(Value::Decimal(Decimal::to_logical(schema, b)?))
                        } else {
                            Ok(Value::Bytes(b.to_vec()))
                        }
                    }
                }
            }
        }
    }

    fn read_map_entries(
        &self,
        items: &AvroType,
        schema: &SchemaRef,
        r: &mut Reader<'_>,
    ) -> ConnectResult<Value> {
        let (AvroType::Ref(i), Some(ks), Some(vs)) =
            (items, &schema.key_schema, &schema.value_schema)
        else {
            return Err(ConnectError::data("Invalid map entry array"));
        };
        let AvroNamedKind::Record(fields) = &self.avro.named(*i).kind else {
            return Err(ConnectError::data("Invalid map entry array"));
        };
        let mut entries = Vec::new();
        loop {
            let n = r.block_count()?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let mut key = Value::Null;
                let mut value = Value::Null;
                for f in fields {
                    if f.name == "key" {
                        key = self.read(&f.ty, ks, r)?;
                    } else {
                        value = self.read(&f.ty, vs, r)?;
                    }
                }
                entries.push((key, value));
            }
        }
        Ok(Value::Map(entries))
    }

    fn read_primitive(
        &self,
        ty: &str,
        schema: &SchemaRef,
        r: &mut Reader<'_>,
    ) -> ConnectResult<Value> {
        let name = schema.name.as_deref();
        Ok(match ty {
            "null" => Value::Null,
            "boolean" => Value::Boolean(r.byte()? != 0),
            "int" => {
                let v = r.int()?;
                match (schema.schema_type, name) {
                    (SchemaType::Int8, _) => Value::Int8(v as i8),
                    (SchemaType::Int16, _) => Value::Int16(v as i16),
                    (_, Some(tributary_api::data::Date::LOGICAL_NAME)) => Value::Date(v),
                    (_, Some(tributary_api::data::Time::LOGICAL_NAME)) => Value::Time(v),
                    _ => Value::Int32(v),
                }
            }
            "long" => {
                let v = r.long()?;
                match name {
                    Some(tributary_api::data::Timestamp::LOGICAL_NAME) => Value::Timestamp(v),
                    _ => Value::Int64(v),
                }
            }
            "float" => Value::Float32(f32::from_le_bytes(
                r.take(4)?.try_into().map_err(|_| truncated())?,
            )),
            "double" => Value::Float64(f64::from_le_bytes(
                r.take(8)?.try_into().map_err(|_| truncated())?,
            )),
            "string" => Value::String(utf8(r.bytes()?)?),
            "bytes" => {
                let b = r.bytes()?;
                if is_decimal(schema) {
                    Value::Decimal(Decimal::to_logical(schema, b)?)
                } else {
                    Value::Bytes(b.to_vec())
                }
            }
            other => {
                return Err(ConnectError::data(format!("Unknown Avro type {other}")));
            }
        })
    }
}

fn utf8(b: &[u8]) -> ConnectResult<String> {
    String::from_utf8(b.to_vec())
        .map_err(|e| ConnectError::data(format!("Invalid UTF-8 in an Avro string: {e}")))
}
