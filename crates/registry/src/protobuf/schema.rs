//! Connect schemas ↔ Protobuf schemas, as Confluent's `ProtobufData.fromConnectSchema` (with
//! `ProtobufSchema.toString`'s text) and `ProtobufData.toConnectSchema` map them, with
//! `ProtobufDataConfig`'s defaults.
//!
//! Connect → proto3 text: a struct becomes a message named after the struct's name
//! (`ConnectDefault1`, `ConnectDefault2`, … when unnamed; the namespace becomes the
//! `package`); fields are numbered by their `io.confluent.connect.protobuf.Tag` parameter or
//! their position (from 1); INT8/INT16 become `int32` with a `connect.type` parameter in a
//! `(confluent.field_meta)` option; INT32/INT64 keep a `io.confluent.connect.protobuf.Type`
//! parameter (`sint32`, `uint64`, …); arrays become `repeated`; maps become a repeated nested
//! `…Entry` message of `key = 1` and `value = 2`; structs become nested messages; a struct named
//! `io.confluent.connect.protobuf.Union.*` becomes a `oneof`; a string or int with
//! `io.confluent.connect.protobuf.Enum` parameters becomes a nested enum; Decimal, Date, Time
//! and Timestamp become `confluent.type.Decimal` (precision and scale as field meta),
//! `google.type.Date`, `google.type.TimeOfDay` and `google.protobuf.Timestamp`, imported. A
//! top-level primitive becomes its `google.protobuf.*Value` wrapper message.
//!
//! Protobuf → Connect: a message becomes a struct named by the message's (simple) name,
//! real `oneof`s first (struct `io.confluent.connect.protobuf.Union.<name>` in field
//! `<name>_<index>`), then the other fields, each optional with a `Tag` parameter;
//! `repeated` → array of optional elements, map entries → map named after the field, enums →
//! optional string named by the enum with `Enum` parameters, `sint32`/`uint32`/… → INT32/INT64
//! with a `Type` parameter, the logical messages above → their logical types, other messages
//! (wrappers included) → structs. A top-level wrapper message reads as its primitive
//! (`wrapper.for.raw.primitives=true`). Recursive messages are refused (Connect schemas are
//! trees).

use std::collections::HashSet;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor};
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, SchemaType, Time, Timestamp,
};
use tributary_api::{ConnectError, ConnectResult};

/// `ProtobufData.NAMESPACE`.
pub const NAMESPACE: &str = "io.confluent.connect.protobuf";
/// The parameter holding a field's number.
pub const TAG_PARAM: &str = "io.confluent.connect.protobuf.Tag";
/// The parameter holding an integer field's Protobuf type when not `int32`/`int64`.
pub const TYPE_PARAM: &str = "io.confluent.connect.protobuf.Type";
/// The parameter (and prefix of the symbols' parameters) of an enum.
pub const ENUM_PARAM: &str = "io.confluent.connect.protobuf.Enum";
/// The name prefix of a `oneof`'s struct.
pub const UNION_PREFIX: &str = "io.confluent.connect.protobuf.Union.";
/// Connect's Decimal precision parameter.
pub const CONNECT_PRECISION: &str = "connect.decimal.precision";
/// The field meta parameter keeping INT8/INT16.
pub const CONNECT_TYPE: &str = "connect.type";
/// The name of unnamed schemas, followed by a counter.
pub const DEFAULT_SCHEMA_NAME: &str = "ConnectDefault";

pub(crate) const DECIMAL_TYPE: &str = "confluent.type.Decimal";
pub(crate) const DATE_TYPE: &str = "google.type.Date";
pub(crate) const TIME_TYPE: &str = "google.type.TimeOfDay";
pub(crate) const TIMESTAMP_TYPE: &str = "google.protobuf.Timestamp";

/// The import declaring a well-known type Connect schemas map to.
fn import_of(ty: &str) -> Option<&'static str> {
    Some(match ty {
        DECIMAL_TYPE => "confluent/type/decimal.proto",
        DATE_TYPE => "google/type/date.proto",
        TIME_TYPE => "google/type/timeofday.proto",
        TIMESTAMP_TYPE => "google/protobuf/timestamp.proto",
        t if wrapper_field_type(t).is_some() => "google/protobuf/wrappers.proto",
        _ => return None,
    })
}

/// The `value` field type of a `google.protobuf.*Value` wrapper.
pub(crate) fn wrapper_field_type(full_name: &str) -> Option<&'static str> {
    Some(match full_name {
        "google.protobuf.DoubleValue" => "double",
        "google.protobuf.FloatValue" => "float",
        "google.protobuf.Int64Value" => "int64",
        "google.protobuf.UInt64Value" => "uint64",
        "google.protobuf.Int32Value" => "int32",
        "google.protobuf.UInt32Value" => "uint32",
        "google.protobuf.BoolValue" => "bool",
        "google.protobuf.StringValue" => "string",
        "google.protobuf.BytesValue" => "bytes",
        _ => return None,
    })
}

/// The Connect schema of a wrapper message (`toUnwrappedSchema`), required.
fn unwrapped(full_name: &str) -> Option<SchemaBuilder> {
    Some(match full_name {
        "google.protobuf.DoubleValue" => SchemaBuilder::float64(),
        "google.protobuf.FloatValue" => SchemaBuilder::float32(),
        "google.protobuf.Int64Value"
        | "google.protobuf.UInt64Value"
        | "google.protobuf.UInt32Value" => SchemaBuilder::int64(),
        "google.protobuf.Int32Value" => SchemaBuilder::int32(),
        "google.protobuf.BoolValue" => SchemaBuilder::boolean(),
        "google.protobuf.StringValue" => SchemaBuilder::string(),
        "google.protobuf.BytesValue" => SchemaBuilder::bytes(),
        _ => return None,
    })
}

fn param<'a>(schema: &'a Schema, key: &str) -> Option<&'a str> {
    schema
        .parameters
        .as_ref()
        .and_then(|p| p.get(key))
        .map(String::as_str)
}

/// Whether a Connect schema is a `oneof`'s struct.
pub fn is_union(schema: &Schema) -> bool {
    schema.schema_type == SchemaType::Struct
        && schema
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with(&UNION_PREFIX[..UNION_PREFIX.len() - 1]))
}

// ---------------------------------------------------------------------------------------
// Connect → text

#[derive(Default)]
struct Ctx {
    index: u32,
    imports: Vec<&'static str>,
}

impl Ctx {
    fn name_or_default(&mut self, name: Option<&str>) -> String {
        match name {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                self.index += 1;
                format!("{DEFAULT_SCHEMA_NAME}{}", self.index)
            }
        }
    }

    fn unqualified(&mut self, name: Option<&str>) -> String {
        let full = self.name_or_default(name);
        match full.rfind('.') {
            Some(i) => full[i + 1..].to_string(),
            None => full,
        }
    }

    fn import(&mut self, file: &'static str) {
        if !self.imports.contains(&file) {
            self.imports.push(file);
        }
    }
}

struct FieldDef {
    repeated: bool,
    ty: String,
    name: String,
    tag: i64,
    params: Vec<(String, String)>,
}

#[derive(Default)]
struct MessageDef {
    name: String,
    fields: Vec<FieldDef>,
    oneofs: Vec<(String, Vec<FieldDef>)>,
    nested: Vec<MessageDef>,
    enums: Vec<(String, Vec<(String, i64)>)>,
}

fn tag_of(schema: &Schema) -> ConnectResult<Option<i64>> {
    param(schema, TAG_PARAM)
        .map(|t| {
            t.trim().parse::<i64>().map_err(|_| {
                ConnectError::data(format!("Invalid {TAG_PARAM} parameter {t}: not a number"))
            })
        })
        .transpose()
}

/// The proto3 schema text of a Connect schema (`fromConnectSchema` then `toString`). Errors:
/// a top-level array or map, nested arrays, a bad `Tag` parameter.
pub fn from_connect_schema(schema: &Schema) -> ConnectResult<String> {
    let mut ctx = Ctx::default();
    if schema.schema_type != SchemaType::Struct {
        let wrapper = match schema.schema_type {
            SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 => "Int32Value",
            SchemaType::Int64 => "Int64Value",
            SchemaType::Float32 => "FloatValue",
            SchemaType::Float64 => "DoubleValue",
            SchemaType::Boolean => "BoolValue",
            SchemaType::String => "StringValue",
            SchemaType::Bytes => "BytesValue",
            other => {
                return Err(ConnectError::data(format!(
                    "Unsupported root schema of type {}",
                    other.name()
                )))
            }
        };
        let ty = wrapper_field_type(&format!("google.protobuf.{wrapper}")).unwrap_or("string");
        return Ok(format!(
            "syntax = \"proto3\";\npackage google.protobuf;\n\nmessage {wrapper} {{\n  {ty} value = 1;\n}}\n"
        ));
    }
    let full = ctx.name_or_default(schema.name.as_deref());
    let (package, name) = match full.rfind('.') {
        Some(i) => (Some(full[..i].to_string()), full[i + 1..].to_string()),
        None => (None, full.clone()),
    };
    let root = message_def(&mut ctx, &name, schema)?;
    let mut out = String::from("syntax = \"proto3\";\n");
    if let Some(p) = package {
        out.push_str(&format!("package {p};\n"));
    }
    if !ctx.imports.is_empty() {
        out.push('\n');
        for i in &ctx.imports {
            out.push_str(&format!("import \"{i}\";\n"));
        }
    }
    out.push('\n');
    render_message(&root, &mut out);
    Ok(out)
}

fn message_def(ctx: &mut Ctx, name: &str, schema: &Schema) -> ConnectResult<MessageDef> {
    let mut message = MessageDef {
        name: name.to_string(),
        ..MessageDef::default()
    };
    let mut index = 1;
    for field in &schema.fields {
        let tag = match tag_of(&field.schema)? {
            Some(t) => t,
            None => {
                index += 1;
                index - 1
            }
        };
        if let Some(def) = field_def(ctx, &mut message, &field.schema, &field.name, tag)? {
            message.fields.push(def);
        }
    }
    Ok(message)
}

fn field_def(
    ctx: &mut Ctx,
    message: &mut MessageDef,
    schema: &Schema,
    name: &str,
    tag: i64,
) -> ConnectResult<Option<FieldDef>> {
    let repeated = matches!(schema.schema_type, SchemaType::Array | SchemaType::Map);
    let elem: &Schema = if schema.schema_type == SchemaType::Array {
        schema
            .value_schema
            .as_deref()
            .ok_or_else(|| ConnectError::data("Array schema without a value schema"))?
    } else {
        schema
    };
    let mut params = Vec::new();
    let ty = data_type(ctx, elem, name, &mut params)?;
    if elem.schema_type == SchemaType::Struct {
        if is_union(elem) {
            let full = elem.name.as_deref().unwrap_or_default();
            let union_name = ctx.unqualified(Some(full.strip_prefix(UNION_PREFIX).unwrap_or(full)));
            let mut members = Vec::new();
            for field in &elem.fields {
                let tag = tag_of(&field.schema)?.unwrap_or(0);
                if let Some(def) = field_def(ctx, message, &field.schema, &field.name, tag)? {
                    members.push(def);
                }
            }
            message.oneofs.push((union_name, members));
            return Ok(None);
        }
        if message.name != ty && !message.nested.iter().any(|m| m.name == ty) {
            let nested = message_def(ctx, &ty, elem)?;
            message.nested.push(nested);
        }
    } else if elem.schema_type == SchemaType::Map {
        let mut entry = MessageDef {
            name: ty.clone(),
            ..MessageDef::default()
        };
        let key = elem
            .key_schema
            .as_deref()
            .ok_or_else(|| ConnectError::data("Map schema without a key schema"))?;
        let value = elem
            .value_schema
            .as_deref()
            .ok_or_else(|| ConnectError::data("Map schema without a value schema"))?;
        for (schema, name, tag) in [(key, "key", 1), (value, "value", 2)] {
            let def = field_def(ctx, &mut entry, schema, name, tag)?.ok_or_else(|| {
                ConnectError::data("A map's key or value cannot be a union (oneof)")
            })?;
            entry.fields.push(def);
        }
        message.nested.push(entry);
    } else if param(elem, ENUM_PARAM).is_some() {
        let enum_name = ctx.unqualified(elem.name.as_deref());
        if !message.enums.iter().any(|(n, _)| *n == enum_name) {
            let prefix = format!("{ENUM_PARAM}.");
            let mut values = Vec::new();
            for (k, v) in elem.parameters.iter().flatten() {
                if let Some(symbol) = k.strip_prefix(&prefix) {
                    let number = v.trim().parse::<i64>().map_err(|_| {
                        ConnectError::data(format!("Invalid enum value {v} for parameter {k}"))
                    })?;
                    values.push((symbol.to_string(), number));
                }
            }
            message.enums.push((enum_name, values));
        }
    } else if let Some(file) = import_of(&ty) {
        ctx.import(file);
    }
    Ok(Some(FieldDef {
        repeated,
        ty,
        name: name.to_string(),
        tag,
        params,
    }))
}

fn data_type(
    ctx: &mut Ctx,
    schema: &Schema,
    field_name: &str,
    params: &mut Vec<(String, String)>,
) -> ConnectResult<String> {
    match schema.name.as_deref() {
        Some(Decimal::LOGICAL_NAME) => {
            if let Some(p) = param(schema, CONNECT_PRECISION) {
                params.push(("precision".into(), p.into()));
            }
            if let Some(s) = param(schema, Decimal::SCALE_FIELD) {
                params.push(("scale".into(), s.into()));
            }
            return Ok(DECIMAL_TYPE.into());
        }
        Some(Date::LOGICAL_NAME) => return Ok(DATE_TYPE.into()),
        Some(Time::LOGICAL_NAME) => return Ok(TIME_TYPE.into()),
        Some(Timestamp::LOGICAL_NAME) => return Ok(TIMESTAMP_TYPE.into()),
        _ => {}
    }
    Ok(match schema.schema_type {
        SchemaType::Int8 => {
            params.push((CONNECT_TYPE.into(), "int8".into()));
            "int32".into()
        }
        SchemaType::Int16 => {
            params.push((CONNECT_TYPE.into(), "int16".into()));
            "int32".into()
        }
        SchemaType::Int32 => param(schema, ENUM_PARAM)
            .or_else(|| param(schema, TYPE_PARAM))
            .unwrap_or("int32")
            .into(),
        SchemaType::Int64 => param(schema, TYPE_PARAM).unwrap_or("int64").into(),
        SchemaType::Float32 => "float".into(),
        SchemaType::Float64 => "double".into(),
        SchemaType::Boolean => "bool".into(),
        SchemaType::String => param(schema, ENUM_PARAM).unwrap_or("string").into(),
        SchemaType::Bytes => "bytes".into(),
        SchemaType::Array => return Err(ConnectError::data("Array cannot be nested")),
        SchemaType::Map => to_map_entry(&ctx.unqualified(schema.name.as_deref())),
        SchemaType::Struct => {
            let name = ctx.unqualified(schema.name.as_deref());
            if name == field_name {
                format!("{name}Message")
            } else {
                name
            }
        }
    })
}

/// `ProtobufSchema.toMapEntry`: `lower_underscore` names become `UpperCamel`, then `Entry`.
fn to_map_entry(name: &str) -> String {
    let mut out = String::new();
    if name.contains('_') {
        for word in name.split('_').filter(|w| !w.is_empty()) {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_uppercase());
                out.push_str(&chars.as_str().to_lowercase());
            }
        }
    } else {
        out.push_str(name);
    }
    out.push_str("Entry");
    out
}

/// `ProtobufSchema.toMapField`: an `UpperCamelEntry` name becomes `upper_camel`.
pub fn to_map_field(name: &str) -> String {
    let Some(stem) = name.strip_suffix("Entry") else {
        return name.to_string();
    };
    let mut out = String::new();
    for (i, c) in stem.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn indent(text: &str, out: &mut String) {
    for line in text.trim_end_matches('\n').split('\n') {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

fn render_field(field: &FieldDef, in_oneof: bool) -> String {
    let mut s = String::new();
    if field.repeated && !in_oneof {
        s.push_str("repeated ");
    }
    s.push_str(&format!("{} {} = {}", field.ty, field.name, field.tag));
    if !field.params.is_empty() {
        // `(confluent.field_meta) = { params: [ { key: …, value: … }, … ] }`, laid out as
        // ProtobufSchemaUtils does (precision and scale put their value first).
        let mut list = String::from("[\n");
        for (i, (k, v)) in field.params.iter().enumerate() {
            let (k, v) = (escape(k), escape(v));
            let body = if k == "precision" || k == "scale" {
                format!("value: \"{v}\",\nkey: \"{k}\"")
            } else {
                format!("key: \"{k}\",\nvalue: \"{v}\"")
            };
            let mut entry = String::from("{\n");
            indent(&body, &mut entry);
            entry.push('}');
            if i + 1 < field.params.len() {
                entry.push(',');
            }
            indent(&entry, &mut list);
        }
        list.push(']');
        let mut option = String::from("(confluent.field_meta) = {\n");
        indent(&format!("params: {list}"), &mut option);
        option.push('}');
        s.push_str(&format!(" [{option}]"));
    }
    s.push_str(";\n");
    s
}

fn render_message(message: &MessageDef, out: &mut String) {
    out.push_str(&format!("message {} {{", message.name));
    if !message.fields.is_empty() {
        out.push('\n');
        for f in &message.fields {
            indent(&render_field(f, false), out);
        }
    }
    if !message.oneofs.is_empty() {
        out.push('\n');
        for (name, fields) in &message.oneofs {
            let mut s = format!("oneof {name} {{");
            if !fields.is_empty() {
                s.push('\n');
                for f in fields {
                    indent(&render_field(f, true), &mut s);
                }
            }
            s.push_str("}\n");
            indent(&s, out);
        }
    }
    if !message.nested.is_empty() || !message.enums.is_empty() {
        out.push('\n');
        for m in &message.nested {
            let mut s = String::new();
            render_message(m, &mut s);
            indent(&s, out);
        }
        for (name, values) in &message.enums {
            let mut s = format!("enum {name} {{");
            if !values.is_empty() {
                s.push('\n');
                for (symbol, number) in values {
                    indent(&format!("{symbol} = {number};\n"), &mut s);
                }
            }
            s.push_str("}\n");
            indent(&s, out);
        }
    }
    out.push_str("}\n");
}

// ---------------------------------------------------------------------------------------
// Protobuf → Connect

/// The Connect schema of message `message` (`toConnectSchema`), with the registry's
/// `version`. Errors: recursive messages, groups.
pub fn to_connect_schema(
    message: &MessageDescriptor,
    version: Option<i32>,
) -> ConnectResult<SchemaRef> {
    let mut builder = match unwrapped(message.full_name()) {
        Some(b) => b,
        None => struct_schema(message, &mut HashSet::new())?,
    };
    if let Some(v) = version {
        builder = builder.version(v);
    }
    Ok(builder.build())
}

/// The real (not proto3-`optional`) oneofs of a message, with their index among all oneofs.
pub(crate) fn real_oneofs(message: &MessageDescriptor) -> Vec<(usize, OneofDescriptor)> {
    message
        .oneofs()
        .enumerate()
        .filter(|(_, o)| !o.is_synthetic())
        .collect()
}

/// The real oneof a field belongs to.
pub(crate) fn real_oneof(field: &FieldDescriptor) -> Option<OneofDescriptor> {
    field.containing_oneof().filter(|o| !o.is_synthetic())
}

fn struct_schema(
    message: &MessageDescriptor,
    seen: &mut HashSet<String>,
) -> ConnectResult<SchemaBuilder> {
    if !seen.insert(message.full_name().to_string()) {
        return Err(ConnectError::data(format!(
            "Recursive message {} cannot be a Connect schema (not supported by Tributary's \
             ProtobufConverter)",
            message.full_name()
        )));
    }
    let mut builder = SchemaBuilder::struct_().name(message.name());
    for (index, oneof) in real_oneofs(message) {
        let mut union = SchemaBuilder::struct_().name(format!("{UNION_PREFIX}{}", oneof.name()));
        for field in oneof.fields() {
            union = union.field(field.name(), field_schema(&field, true, seen)?)?;
        }
        builder = builder.field(
            format!("{}_{index}", oneof.name()),
            union.optional().build(),
        )?;
    }
    for field in message.fields() {
        if real_oneof(&field).is_some() {
            continue;
        }
        builder = builder.field(field.name(), field_schema(&field, false, seen)?)?;
    }
    seen.remove(message.full_name());
    Ok(builder)
}

/// The `(confluent.field_meta)` parameters of a field.
pub(crate) fn field_meta_params(field: &FieldDescriptor) -> Vec<(String, String)> {
    let options = field.options();
    let mut out = Vec::new();
    for (ext, value) in options.extensions() {
        if ext.full_name() != "confluent.field_meta" {
            continue;
        }
        let Some(meta) = value.as_message() else {
            continue;
        };
        if let Some(params) = meta.get_field_by_name("params") {
            if let Some(map) = params.as_map() {
                for (k, v) in map {
                    if let (prost_reflect::MapKey::String(k), Some(v)) = (k, v.as_str()) {
                        out.push((k.clone(), v.to_string()));
                    }
                }
            }
        }
    }
    out
}

fn field_schema(
    field: &FieldDescriptor,
    oneof_member: bool,
    seen: &mut HashSet<String>,
) -> ConnectResult<SchemaRef> {
    let meta = || field_meta_params(field);
    let meta_param = |key: &str| meta().into_iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut is_map = false;
    let mut builder = match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => match meta_param(CONNECT_TYPE).as_deref() {
            Some("int8") => SchemaBuilder::int8(),
            Some("int16") => SchemaBuilder::int16(),
            _ => {
                let b = SchemaBuilder::int32();
                match field.kind() {
                    Kind::Sint32 => b.parameter(TYPE_PARAM, "sint32"),
                    Kind::Sfixed32 => b.parameter(TYPE_PARAM, "sfixed32"),
                    _ => b,
                }
            }
        },
        k @ (Kind::Uint32
        | Kind::Fixed32
        | Kind::Int64
        | Kind::Uint64
        | Kind::Sint64
        | Kind::Fixed64
        | Kind::Sfixed64) => {
            let b = SchemaBuilder::int64();
            let name = match k {
                Kind::Uint32 => "uint32",
                Kind::Fixed32 => "fixed32",
                Kind::Uint64 => "uint64",
                Kind::Sint64 => "sint64",
                Kind::Fixed64 => "fixed64",
                Kind::Sfixed64 => "sfixed64",
                _ => "",
            };
            if name.is_empty() {
                b
            } else {
                b.parameter(TYPE_PARAM, name)
            }
        }
        Kind::Float => SchemaBuilder::float32(),
        Kind::Double => SchemaBuilder::float64(),
        Kind::Bool => SchemaBuilder::boolean(),
        Kind::String => SchemaBuilder::string(),
        Kind::Bytes => SchemaBuilder::bytes(),
        Kind::Enum(e) => {
            let mut b = SchemaBuilder::string()
                .name(e.name())
                .parameter(ENUM_PARAM, e.name());
            for v in e.values() {
                b = b.parameter(format!("{ENUM_PARAM}.{}", v.name()), v.number().to_string());
            }
            b.optional()
        }
        Kind::Message(m) => {
            let b = match m.full_name() {
                DECIMAL_TYPE => {
                    let params = meta();
                    let get = |k: &str| {
                        params
                            .iter()
                            .find(|(p, _)| p == k)
                            .and_then(|(_, v)| v.trim().parse::<i32>().ok())
                    };
                    let mut b = Decimal::builder(get("scale").unwrap_or(0));
                    if let Some(p) = get("precision") {
                        b = b.parameter(CONNECT_PRECISION, p.to_string());
                    }
                    b
                }
                DATE_TYPE => Date::builder(),
                TIME_TYPE => Time::builder(),
                TIMESTAMP_TYPE => Timestamp::builder(),
                _ if field.is_map() || is_map_entry(field, &m) => {
                    is_map = true;
                    let key = m.get_field(1).or_else(|| m.get_field_by_name("key"));
                    let value = m.get_field(2).or_else(|| m.get_field_by_name("value"));
                    let (Some(key), Some(value)) = (key, value) else {
                        return Err(ConnectError::data(format!(
                            "Map entry {} without key or value",
                            m.full_name()
                        )));
                    };
                    SchemaBuilder::map(
                        field_schema(&key, false, seen)?,
                        field_schema(&value, false, seen)?,
                    )
                    .name(to_map_field(m.name()))
                }
                _ => struct_schema(&m, seen)?,
            };
            b.optional()
        }
    };
    if field.is_list() && !is_map {
        builder = SchemaBuilder::array(builder.optional().build()).optional();
    }
    // oneof members and (with optional.for.nullables=false, wrapper.for.nullables=false)
    // every field are optional.
    let _ = oneof_member;
    builder = builder
        .optional()
        .parameter(TAG_PARAM, field.number().to_string());
    Ok(builder.build())
}

/// `isMapDescriptor`: a repeated message named `…Entry` of exactly `key` and `value`.
fn is_map_entry(field: &FieldDescriptor, m: &MessageDescriptor) -> bool {
    if !field.is_list() {
        return false;
    }
    let fields: Vec<FieldDescriptor> = m.fields().collect();
    m.name().ends_with("Entry")
        && fields.len() == 2
        && fields[0].name() == "key"
        && fields[1].name() == "value"
        && !fields[0].is_list()
        && !fields[1].is_list()
}
