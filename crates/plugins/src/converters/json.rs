//! `org.apache.kafka.connect.json.JsonConverter`: Connect data as JSON, optionally wrapped in
//! an envelope carrying the schema, byte-for-byte as Kafka Connect's `JsonConverter` writes it.
//!
//! # Wire format
//!
//! With `schemas.enable=true` (the default) every key or value is written as
//! `{"schema":<schema>,"payload":<payload>}`; `"schema"` is `null` for schemaless data. A
//! schema is an object whose keys come in this order:
//!
//! 1. `"type"`: `int8`, `int16`, `int32`, `int64`, `float` (FLOAT32), `double` (FLOAT64),
//!    `boolean`, `string`, `bytes`, `array`, `map` or `struct`;
//! 2. by type: `"items"` (array element schema); `"keys"` and `"values"` (map); `"fields"`
//!    (struct: an array of field schemas, each with a trailing `"field"` key naming it);
//! 3. `"optional"` (always), then, when set, `"name"`, `"version"`, `"doc"`, `"parameters"`
//!    (string values, insertion order) and `"default"` (the default value as a payload).
//!
//! Payloads: integers as JSON integers; floats as Java's `Float.toString` /
//! `Double.toString` print them (NaN and the infinities as the strings `"NaN"`,
//! `"Infinity"`, `"-Infinity"`); bytes as standard padded base64; arrays as arrays; maps with
//! STRING keys as objects and all other maps as arrays of `[key, value]` pairs; structs as
//! objects in field order. Logical types: Decimal as base64 of the unscaled two's-complement
//! bytes (`decimal.format=BASE64`) or as a JSON number (`NUMERIC`, Java's
//! `BigDecimal.toString()`); Date, Time and Timestamp as their integer encodings. A null
//! field with a default is written as the default when `replace.null.with.default=true`.
//!
//! Strings are escaped as Jackson does: `\"`, `\\`, the short escapes `\b \f \n \r \t`, other
//! control characters as `\u00XX` (uppercase hex), and characters outside the Basic
//! Multilingual Plane as an escaped surrogate pair (`\uD83D\uDE00`); everything else,
//! including `/` and DEL, is written as UTF-8.
//!
//! # Reading
//!
//! Parsing follows Jackson as configured by Connect: numbers may have leading zeros, numbers
//! with a fraction or exponent keep their exact decimal value, integers become the narrowest of
//! int / long / big integer, anything after the first JSON value is ignored, and an empty input
//! is a "missing" value. Values are then coerced like Connect does (e.g. an `int8` payload of
//! `300` becomes `44`, a `string` payload of `1` becomes null); errors carry Connect's
//! messages ([`ConnectError::Data`], Java's `DataException`).
//!
//! Differences from Java, all on inputs Java rejects or cannot represent: the JDK 17 printing
//! quirks of a few floats (see [`super::java_fmt`]); a Decimal read as a JSON number with fewer
//! fractional digits than the schema's scale is rescaled to that scale when that appends at most
//! 1000 zeros (Java keeps the number's own scale, which Connect's Decimal encoding then
//! rejects); Rust values that the data model
//! accepts for logical schemas (raw `Bytes` for Decimal, `Int32` for Date/Time, `Int64` for
//! Timestamp) are written as their encodings where Java would fail on a class cast.

use std::sync::Arc;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use num_bigint::BigInt;
use tributary_api::config::{
    ConfigDef, ConfigKey, ConfigType, Importance, Parsed, Validator, Width,
};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::{
    Date, Decimal, Field, Schema, SchemaAndValue, SchemaRef, SchemaType, Struct, Time, Timestamp,
    Value,
};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::java_fmt::{double_to_string, float_to_string, MILLIS_PER_DAY};
use super::{converter_config_def, with_converter_type};

/// The envelope's schema key.
const ENVELOPE_SCHEMA: &str = "schema";
/// The envelope's payload key.
const ENVELOPE_PAYLOAD: &str = "payload";

/// The message of the error for input that is not an envelope while `schemas.enable=true`.
const NOT_AN_ENVELOPE: &str = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.";

/// How Decimal values are written (`decimal.format`, Java's `DecimalFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalFormat {
    /// Base64 of the unscaled value's two's-complement big-endian bytes (the default).
    Base64,
    /// A JSON number, as Java's `BigDecimal.toString()` prints it.
    Numeric,
}

/// Kafka Connect's `JsonConverter` (`org.apache.kafka.connect.json.JsonConverter`), also usable
/// as a header converter.
///
/// Settings: `schemas.enable` (default `true`), `schemas.cache.size` (default 1000; the
/// converter keeps the JSON of the last schema it wrote, by identity, which serves a task
/// whose records share one schema, and the schemas it read from the last
/// `min(schemas.cache.size, 16)` distinct schema texts, see [`SchemaTextCache`]; 0 turns the
/// reading cache off), `decimal.format` (`BASE64` default or `NUMERIC`, case-insensitive) and
/// `replace.null.with.default` (default `true`), and `schema.content` (KIP-1054, Connect 4.4;
/// default none): a schema in Connect's JSON form that, with `schemas.enable=true`, every value
/// read is converted with, the bytes being the bare payload (no envelope); writing is not
/// affected.
#[derive(Debug, Clone)]
pub struct JsonConverter {
    schemas_enabled: bool,
    /// The schema of `schema.content`, parsed when configured.
    fixed_schema: Option<SchemaRef>,
    schemas_cache_size: i32,
    decimal_format: DecimalFormat,
    replace_null_with_default: bool,
    schema_json: SchemaJsonCache,
    schema_text: SchemaTextCache,
}

impl Default for JsonConverter {
    fn default() -> Self {
        JsonConverter {
            schemas_enabled: true,
            fixed_schema: None,
            schemas_cache_size: 1000,
            decimal_format: DecimalFormat::Base64,
            replace_null_with_default: true,
            schema_json: SchemaJsonCache::default(),
            schema_text: SchemaTextCache::default(),
        }
    }
}

/// The JSON text of the last schema a converter wrote in an envelope, keyed by the schema's
/// identity (`Arc::ptr_eq`; the schema is held, so its address cannot be reused). Records of
/// one task mostly share one schema instance (a connector's constant schema, or the one a
/// transformation caches), so the schema is turned into JSON once rather than per record, as
/// Connect's `fromConnectSchema` cache does. A clone starts empty.
#[derive(Default)]
struct SchemaJsonCache(std::sync::Mutex<Option<(SchemaRef, Arc<[u8]>)>>);

impl Clone for SchemaJsonCache {
    fn clone(&self) -> Self {
        SchemaJsonCache::default()
    }
}

/// The schemas `deserialize` built last, keyed by the exact JSON text of the envelope's
/// `schema` field (Connect's `toConnectSchemaCache`, keyed there by the parsed JSON), most
/// recent first. A record whose schema text equals one of them reuses that schema instance:
/// its schema is neither parsed nor built again, and the instance a serializer sees next is
/// the same one, so [`SchemaJsonCache`] hits too. Records of one connector (Debezium's change
/// events crossing from a Java task, a sink reading JSON with schemas) mostly carry a few
/// schemas of a few KB each, which otherwise dominated a record's conversion. A clone starts
/// empty.
#[derive(Default)]
struct SchemaTextCache(std::sync::Mutex<Vec<(Box<[u8]>, SchemaRef)>>);

/// The most distinct schema texts a [`SchemaTextCache`] keeps (a linear search).
const SCHEMA_TEXT_CACHE_MAX: usize = 16;

impl SchemaTextCache {
    /// The schema read from `text` before, if kept (moved to the front).
    fn get(&self, text: &[u8]) -> Option<SchemaRef> {
        let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = entries.iter().position(|(t, _)| &t[..] == text)?;
        entries[..=at].rotate_right(1);
        Some(entries[0].1.clone())
    }

    /// Keeps `schema` as the one read from `text`, dropping the least recent beyond `limit`.
    fn put(&self, text: &[u8], schema: &SchemaRef, limit: usize) {
        let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(0, (text.into(), schema.clone()));
        entries.truncate(limit);
    }
}

impl Clone for SchemaTextCache {
    fn clone(&self) -> Self {
        SchemaTextCache::default()
    }
}

impl std::fmt::Debug for SchemaTextCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaTextCache")
    }
}

impl std::fmt::Debug for SchemaJsonCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaJsonCache")
    }
}

impl JsonConverter {
    /// A converter with Connect's defaults (schemas enabled, BASE64 decimals, nulls replaced
    /// by defaults), usable without [`Converter::configure`].
    pub fn new() -> JsonConverter {
        JsonConverter::default()
    }

    /// A converter with `schemas.enable=false` and otherwise default settings: what Connect
    /// uses for its internal topics (offsets, configs, status).
    pub fn new_schemaless() -> JsonConverter {
        JsonConverter {
            schemas_enabled: false,
            ..JsonConverter::default()
        }
    }

    /// Whether the envelope with the schema is written and expected.
    pub fn schemas_enabled(&self) -> bool {
        self.schemas_enabled
    }

    /// The configured `schemas.cache.size`.
    pub fn schemas_cache_size(&self) -> i32 {
        self.schemas_cache_size
    }

    /// The configured `decimal.format`.
    pub fn decimal_format(&self) -> DecimalFormat {
        self.decimal_format
    }

    /// The configuration keys (`JsonConverterConfig.configDef()`): `converter.type`,
    /// `schemas.enable`, `schemas.cache.size`, `schema.content`, `decimal.format`,
    /// `replace.null.with.default`.
    pub fn config_def() -> ConfigDef {
        let key = |name: &str,
                   config_type,
                   default: &str,
                   validator,
                   importance,
                   doc: &str,
                   group: &str,
                   order,
                   display: &str| ConfigKey {
            name: name.into(),
            config_type,
            default: Some(Some(default.into())),
            validator,
            importance,
            documentation: doc.into(),
            group: Some(group.into()),
            order_in_group: order,
            width: Width::Medium,
            display_name: display.into(),
            dependents: Vec::new(),
        };
        converter_config_def()
            .define_key(key(
                "schemas.enable",
                ConfigType::Boolean,
                "true",
                None,
                Importance::High,
                "When true, each serialized key and value is wrapped in an envelope that carries its schema next to the payload.",
                "Schemas",
                0,
                "Enable Schemas",
            ))
            .define_key(key(
                "schemas.cache.size",
                ConfigType::Int,
                "1000",
                None,
                Importance::High,
                "How many schemas this converter instance keeps in its cache, at most.",
                "Schemas",
                1,
                "Schema Cache Size",
            ))
            .define_key(ConfigKey {
                default: Some(None),
                ..key(
                    "schema.content",
                    ConfigType::String,
                    "",
                    None,
                    Importance::High,
                    "A schema (in the JSON form the envelopes carry) that every value read is converted with when schemas are enabled: the bytes are then the payload alone, without an envelope. Only reading (sink connectors) uses it (KIP-1054).",
                    "Schemas",
                    2,
                    "Schema Content",
                )
            })
            .define_key(key(
                "decimal.format",
                ConfigType::String,
                "BASE64",
                Some(Validator::OneOfIgnoreCase(vec!["NUMERIC".into(), "BASE64".into()])),
                Importance::Low,
                "How Decimal values are written: 'BASE64' (the default) as base64 of the unscaled bytes, 'NUMERIC' as a JSON number. Case-insensitive.",
                "Serialization",
                0,
                "Decimal Format",
            ))
            .define_key(key(
                "replace.null.with.default",
                ConfigType::Boolean,
                "true",
                None,
                Importance::Low,
                "When true, a null field whose schema has a default value is written as that default; when false it is written as null.",
                "Serialization",
                1,
                "Replace null with default",
            ))
    }

    /// Applies settings already carrying `converter.type`. Errors are
    /// [`ConnectError::Config`] naming the key.
    fn apply(&mut self, props: &Props) -> ConnectResult<()> {
        let parsed = Self::config_def().parse(props)?;
        if let Some(Parsed::Boolean(b)) = parsed.get("schemas.enable") {
            self.schemas_enabled = *b;
        }
        if let Some(Parsed::Int(n)) = parsed.get("schemas.cache.size") {
            self.schemas_cache_size = *n;
        }
        if let Some(Parsed::String(s)) = parsed.get("decimal.format") {
            self.decimal_format = if s.eq_ignore_ascii_case("NUMERIC") {
                DecimalFormat::Numeric
            } else {
                DecimalFormat::Base64
            };
        }
        if let Some(Parsed::Boolean(b)) = parsed.get("replace.null.with.default") {
            self.replace_null_with_default = *b;
        }
        self.fixed_schema = match parsed.get("schema.content") {
            Some(Parsed::String(text)) if !text.is_empty() => {
                let node = parse_json(text.as_bytes()).map_err(|_| {
                    ConnectError::data(
                        "Failed to parse schema in converter config due to serialization error: ",
                    )
                })?;
                match node {
                    Some(n) => Some(self.schema_from_json(&n)?),
                    None => None,
                }
            }
            _ => None,
        };
        Ok(())
    }

    /// Connect data to JSON bytes (`fromConnectData`): `None` for a null value without schema,
    /// otherwise the envelope (schemas enabled) or the bare payload.
    pub fn serialize(
        &self,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        if schema.is_none() && value.is_null() {
            return Ok(None);
        }
        let payload = self.to_json(schema.map(|s| s.as_ref()), value)?;
        let mut out = Vec::with_capacity(128);
        if self.schemas_enabled {
            // `{"schema":…,"payload":…}`, as write_node writes a two-entry object.
            out.push(b'{');
            write_string(&mut out, ENVELOPE_SCHEMA);
            out.push(b':');
            match schema {
                Some(s) => out.extend_from_slice(&self.schema_json(s)?),
                None => out.extend_from_slice(b"null"),
            }
            out.push(b',');
            write_string(&mut out, ENVELOPE_PAYLOAD);
            out.push(b':');
            write_node(&mut out, &payload);
            out.push(b'}');
        } else {
            write_node(&mut out, &payload);
        }
        Ok(Some(out))
    }

    /// The JSON text of `schema` ([`Self::schema_to_json`]), from the last-schema cache when
    /// `schema` is the instance written last.
    fn schema_json(&self, schema: &SchemaRef) -> ConnectResult<Arc<[u8]>> {
        let mut cache = self.schema_json.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, json)) = cache.as_ref() {
            if Arc::ptr_eq(cached, schema) {
                return Ok(json.clone());
            }
        }
        let mut text = Vec::new();
        write_node(&mut text, &self.schema_to_json(schema)?);
        let json: Arc<[u8]> = text.into();
        *cache = Some((schema.clone(), json.clone()));
        Ok(json)
    }

    /// JSON bytes to Connect data (`toConnectData`): a tombstone (`None`) gives no schema and a
    /// null value.
    pub fn deserialize(&self, bytes: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::null());
        };
        if let (true, Some(schema)) = (self.schemas_enabled, &self.fixed_schema) {
            // KIP-1054: the bytes are the payload of the configured schema.
            let node = parse_json(bytes).map_err(|_| {
                ConnectError::data(
                    "Converting byte[] to Kafka Connect data failed due to serialization error: ",
                )
            })?;
            let value = self.to_connect(Some(schema), node.as_ref())?;
            return Ok(SchemaAndValue {
                schema: Some(schema.clone()),
                value,
            });
        }
        if self.schemas_enabled {
            if let Some(read) = self.deserialize_envelope_cached(bytes) {
                return Ok(read);
            }
        }
        let node = parse_json(bytes).map_err(|_| {
            ConnectError::data(
                "Converting byte[] to Kafka Connect data failed due to serialization error: ",
            )
        })?;
        let (schema_node, payload) = if self.schemas_enabled {
            match &node {
                Some(Node::Object(entries))
                    if entries.len() == 2
                        && get(entries, ENVELOPE_SCHEMA).is_some()
                        && get(entries, ENVELOPE_PAYLOAD).is_some() =>
                {
                    (
                        get(entries, ENVELOPE_SCHEMA),
                        get(entries, ENVELOPE_PAYLOAD),
                    )
                }
                _ => return Err(ConnectError::data(NOT_AN_ENVELOPE)),
            }
        } else {
            (None, node.as_ref())
        };
        let schema = match schema_node {
            None | Some(Node::Null) => None,
            Some(n) => Some(self.schema_from_json(n)?),
        };
        let value = self.to_connect(schema.as_ref(), payload)?;
        Ok(SchemaAndValue { schema, value })
    }

    /// [`Self::deserialize`] of an envelope laid out as `{"schema":…,"payload":…}` (white
    /// space allowed, the two fields in that order, as every JsonConverter writes them), with
    /// the schema from [`SchemaTextCache`] when its text was read before. `None` when the bytes
    /// are laid out otherwise, the cache is off, or anything fails: the general path then
    /// reads them, and gives the error, as if this one had not been tried.
    fn deserialize_envelope_cached(&self, bytes: &[u8]) -> Option<SchemaAndValue> {
        let limit = usize::try_from(self.schemas_cache_size)
            .unwrap_or(0)
            .min(SCHEMA_TEXT_CACHE_MAX);
        if limit == 0 {
            return None;
        }
        let mut p = Parser { b: bytes, i: 0 };
        p.tokens(&[b"{", b"\"schema\"", b":"])?;
        let start = p.i;
        let end = skip_json_value(bytes, start)?;
        let text = &bytes[start..end];
        let schema = if text == b"null" {
            None
        } else if let Some(schema) = self.schema_text.get(text) {
            Some(schema)
        } else {
            // Parsed in place, at the depth the general path parses it.
            let mut q = Parser { b: bytes, i: start };
            let node = q.value(1).ok()?;
            if q.i != end {
                return None;
            }
            let schema = self.schema_from_json(&node).ok()?;
            self.schema_text.put(text, &schema, limit);
            Some(schema)
        };
        p.i = end;
        p.tokens(&[b",", b"\"payload\"", b":"])?;
        let payload = p.value(1).ok()?;
        p.tokens(&[b"}"])?;
        let value = self.to_connect(schema.as_ref(), Some(&payload)).ok()?;
        Some(SchemaAndValue { schema, value })
    }

    // ---------------------------------------------------------------- Connect -> JSON

    /// The JSON form of a schema (`asJsonSchema`).
    fn schema_to_json(&self, schema: &Schema) -> ConnectResult<Node> {
        let type_name = match schema.schema_type {
            SchemaType::Float32 => "float",
            SchemaType::Float64 => "double",
            t => t.name(),
        };
        let mut obj: Vec<(String, Node)> = vec![("type".into(), Node::Text(type_name.into()))];
        match schema.schema_type {
            SchemaType::Array => {
                obj.push((
                    "items".into(),
                    self.opt_schema_to_json(schema.value_schema.as_deref())?,
                ));
            }
            SchemaType::Map => {
                obj.push((
                    "keys".into(),
                    self.opt_schema_to_json(schema.key_schema.as_deref())?,
                ));
                obj.push((
                    "values".into(),
                    self.opt_schema_to_json(schema.value_schema.as_deref())?,
                ));
            }
            SchemaType::Struct => {
                let mut fields = Vec::with_capacity(schema.fields.len());
                for field in &schema.fields {
                    let mut f = match self.schema_to_json(&field.schema)? {
                        Node::Object(entries) => entries,
                        _ => unreachable!("schemas are objects"),
                    };
                    set(&mut f, "field", Node::Text(field.name.clone()));
                    fields.push(Node::Object(f));
                }
                obj.push(("fields".into(), Node::Array(fields)));
            }
            _ => {}
        }
        obj.push(("optional".into(), Node::Bool(schema.optional)));
        if let Some(name) = &schema.name {
            obj.push(("name".into(), Node::Text(name.clone())));
        }
        if let Some(version) = schema.version {
            obj.push(("version".into(), Node::Int(version)));
        }
        if let Some(doc) = &schema.doc {
            obj.push(("doc".into(), Node::Text(doc.clone())));
        }
        if let Some(params) = &schema.parameters {
            let params = params
                .iter()
                .map(|(k, v)| (k.clone(), Node::Text(v.clone())))
                .collect();
            obj.push(("parameters".into(), Node::Object(params)));
        }
        if let Some(default) = &schema.default_value {
            obj.push(("default".into(), self.to_json(Some(schema), default)?));
        }
        Ok(Node::Object(obj))
    }

    fn opt_schema_to_json(&self, schema: Option<&Schema>) -> ConnectResult<Node> {
        match schema {
            Some(s) => self.schema_to_json(s),
            None => Ok(Node::Null),
        }
    }

    /// The JSON form of a value under an optional schema (`convertToJson`).
    fn to_json(&self, schema: Option<&Schema>, value: &Value) -> ConnectResult<Node> {
        if value.is_null() {
            let Some(schema) = schema else {
                return Ok(Node::Null);
            };
            if let (Some(default), true) = (&schema.default_value, self.replace_null_with_default) {
                // A null default (a schema built field by field) is no default: no recursion.
                if !default.is_null() {
                    return self.to_json(Some(schema), default);
                }
            }
            if schema.optional {
                return Ok(Node::Null);
            }
            return Err(ConnectError::data(
                "Conversion error: null value for field that is required and has no default value",
            ));
        }
        if let Some(schema) = schema {
            if let Some(name) = schema.name.as_deref() {
                if let Some(node) = self.logical_to_json(name, schema, value)? {
                    return Ok(node);
                }
            }
        }
        let schema_type = match schema {
            Some(s) => s.schema_type,
            None => match value {
                Value::Decimal(_) | Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => {
                    return Err(ConnectError::data(format!(
                        "Java class class {} does not have corresponding schema type.",
                        value.kind_name()
                    )))
                }
                // Cannot be null: handled above.
                v => v.inferred_type().expect("non-null value has a type"),
            },
        };
        let wrong_type = || {
            let ty = schema.map_or("unknown schema".to_string(), |s| s.schema_type.to_string());
            ConnectError::data(format!(
                "Invalid type for {ty}: class {}",
                value.kind_name()
            ))
        };
        Ok(match (schema_type, value) {
            (SchemaType::Int8, Value::Int8(v)) => Node::Int(*v as i32),
            (SchemaType::Int16, Value::Int16(v)) => Node::Int(*v as i32),
            (SchemaType::Int32, Value::Int32(v)) => Node::Int(*v),
            (SchemaType::Int64, Value::Int64(v)) => Node::Long(*v),
            (SchemaType::Float32, Value::Float32(v)) => Node::Float(*v),
            (SchemaType::Float64, Value::Float64(v)) => Node::Double(*v),
            (SchemaType::Boolean, Value::Boolean(v)) => Node::Bool(*v),
            (SchemaType::String, Value::String(v)) => Node::Text(v.clone()),
            (SchemaType::Bytes, Value::Bytes(v)) => Node::Binary(v.clone()),
            (SchemaType::Bytes, v) => {
                return Err(ConnectError::data(format!(
                    "Invalid type for bytes type: class {}",
                    v.kind_name()
                )))
            }
            (SchemaType::Array, Value::Array(items)) => {
                let elem = schema.and_then(|s| s.value_schema.as_deref());
                Node::Array(
                    items
                        .iter()
                        .map(|item| self.to_json(elem, item))
                        .collect::<ConnectResult<_>>()?,
                )
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let object_mode = match schema {
                    None => entries.iter().all(|(k, _)| matches!(k, Value::String(_))),
                    Some(s) => {
                        s.key_schema.as_ref().map(|k| k.schema_type) == Some(SchemaType::String)
                    }
                };
                let key_schema = schema.and_then(|s| s.key_schema.as_deref());
                let value_schema = schema.and_then(|s| s.value_schema.as_deref());
                if object_mode {
                    let mut obj = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        let key = self.to_json(key_schema, k)?.as_text();
                        let val = self.to_json(value_schema, v)?;
                        set(&mut obj, &key, val);
                    }
                    Node::Object(obj)
                } else {
                    let mut list = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        list.push(Node::Array(vec![
                            self.to_json(key_schema, k)?,
                            self.to_json(value_schema, v)?,
                        ]));
                    }
                    Node::Array(list)
                }
            }
            (SchemaType::Struct, Value::Struct(st)) => {
                let schema = match schema {
                    Some(s)
                        if std::ptr::eq(st.schema().as_ref(), s) || st.schema().as_ref() == s =>
                    {
                        s
                    }
                    _ => return Err(ConnectError::data("Mismatching schema.")),
                };
                let mut obj = Vec::with_capacity(schema.fields.len());
                for field in &schema.fields {
                    let v = self.to_json(Some(&field.schema), st.get_by_index(field.index))?;
                    set(&mut obj, &field.name, v);
                }
                Node::Object(obj)
            }
            _ => return Err(wrong_type()),
        })
    }

    /// The JSON form of a logical value, or `None` when `name` is not a logical type.
    fn logical_to_json(
        &self,
        name: &str,
        schema: &Schema,
        value: &Value,
    ) -> ConnectResult<Option<Node>> {
        let wrong = |what: &str, expected: &str| {
            ConnectError::data(format!(
                "Invalid type for {what}, expected {expected} but was class {}",
                value.kind_name()
            ))
        };
        Ok(Some(match name {
            Decimal::LOGICAL_NAME => {
                let decimal = match value {
                    Value::Decimal(d) => d.clone(),
                    Value::Bytes(b) => Decimal::to_logical(schema, b)?,
                    _ => return Err(wrong("Decimal", "BigDecimal")),
                };
                match self.decimal_format {
                    DecimalFormat::Numeric => Node::Decimal(decimal),
                    DecimalFormat::Base64 => Node::Binary(decimal_bytes(schema, &decimal)?),
                }
            }
            Date::LOGICAL_NAME => match value {
                Value::Date(d) | Value::Int32(d) => Node::Int(*d),
                _ => return Err(wrong("Date", "Date")),
            },
            Time::LOGICAL_NAME => match value {
                Value::Time(t) | Value::Int32(t) => {
                    if *t < 0 || *t as i64 > MILLIS_PER_DAY {
                        return Err(ConnectError::data(
                            "Kafka Connect Time type should not have any date fields set to non-zero values.",
                        ));
                    }
                    Node::Int(*t)
                }
                _ => return Err(wrong("Time", "Date")),
            },
            Timestamp::LOGICAL_NAME => match value {
                Value::Timestamp(t) | Value::Int64(t) => Node::Long(*t),
                _ => return Err(wrong("Timestamp", "Date")),
            },
            _ => return Ok(None),
        }))
    }

    // ---------------------------------------------------------------- JSON -> Connect

    /// A schema from its JSON form (`asConnectSchema`); the node is not null.
    fn schema_from_json(&self, node: &Node) -> ConnectResult<SchemaRef> {
        let type_name = match node.get("type") {
            Some(Node::Text(t)) => t.as_str(),
            _ => return Err(ConnectError::data("Schema must contain 'type' field")),
        };
        let sub = |n: Option<&Node>| -> ConnectResult<Option<SchemaRef>> {
            match n {
                None | Some(Node::Null) => Ok(None),
                Some(n) => self.schema_from_json(n).map(Some),
            }
        };
        let schema_type = match type_name {
            "float" => SchemaType::Float32,
            "double" => SchemaType::Float64,
            "float32" | "float64" => {
                return Err(ConnectError::data(format!(
                    "Unknown schema type: {type_name}"
                )));
            }
            t => SchemaType::from_name(t)
                .ok_or_else(|| ConnectError::data(format!("Unknown schema type: {type_name}")))?,
        };
        let mut schema = Schema::new(schema_type);
        match schema_type {
            SchemaType::Array => {
                let items = match node.get("items") {
                    None | Some(Node::Null) => {
                        return Err(ConnectError::data(
                            "Array schema did not specify the element type",
                        ))
                    }
                    Some(n) => n,
                };
                schema.value_schema = Some(self.schema_from_json(items)?);
            }
            SchemaType::Map => {
                let keys = node
                    .get("keys")
                    .ok_or_else(|| ConnectError::data("Map schema did not specify the key type"))?;
                let values = node.get("values").ok_or_else(|| {
                    ConnectError::data("Map schema did not specify the value type")
                })?;
                schema.key_schema = Some(
                    sub(Some(keys))?
                        .ok_or_else(|| ConnectError::data("keySchema cannot be null."))?,
                );
                schema.value_schema = Some(
                    sub(Some(values))?
                        .ok_or_else(|| ConnectError::data("valueSchema cannot be null."))?,
                );
            }
            SchemaType::Struct => {
                let fields = match node.get("fields") {
                    Some(Node::Array(fields)) => fields,
                    _ => {
                        return Err(ConnectError::data(
                            "Struct schema's \"fields\" argument is not an array.",
                        ))
                    }
                };
                for field in fields {
                    let name = match field.get("field") {
                        Some(Node::Text(name)) => name.clone(),
                        _ => {
                            return Err(ConnectError::data(
                                "Struct schema's field name not specified properly",
                            ))
                        }
                    };
                    if schema.field(&name).is_some() {
                        return Err(ConnectError::data(format!(
                            "Cannot create field because of field name duplication {name}"
                        )));
                    }
                    let field_schema = self.schema_from_json(field)?;
                    let index = schema.fields.len();
                    schema.fields.push(Field {
                        name,
                        index,
                        schema: field_schema,
                    });
                }
            }
            _ => {}
        }
        schema.optional = matches!(node.get("optional"), Some(Node::Bool(true)));
        if let Some(Node::Text(name)) = node.get("name") {
            schema.name = Some(name.clone());
        }
        if let Some(v) = node.get("version") {
            if v.is_integral() {
                schema.version = Some(v.int_value());
            }
        }
        if let Some(Node::Text(doc)) = node.get("doc") {
            schema.doc = Some(doc.clone());
        }
        if let Some(Node::Object(params)) = node.get("parameters") {
            let mut map = indexmap::IndexMap::new();
            for (k, v) in params {
                match v {
                    Node::Text(t) => {
                        map.insert(k.clone(), t.clone());
                    }
                    _ => {
                        return Err(ConnectError::data(
                            "Schema parameters must have string values.",
                        ))
                    }
                }
            }
            schema.parameters = Some(map);
        }
        if let Some(default) = node.get("default") {
            let partial = Arc::new(schema.clone());
            let value = self.to_connect(Some(&partial), Some(default))?;
            if !value.is_null() {
                partial
                    .validate_value(&value)
                    .map_err(|_| ConnectError::data("Invalid default value"))?;
                schema.default_value = Some(value);
            }
        }
        Ok(Arc::new(schema))
    }

    /// A Connect value from JSON (`convertToConnect`); `None` is an absent node (Java's null).
    fn to_connect(&self, schema: Option<&SchemaRef>, node: Option<&Node>) -> ConnectResult<Value> {
        let schema_type = match schema {
            Some(schema) => {
                if matches!(node, None | Some(Node::Null)) {
                    if let (Some(default), true) =
                        (&schema.default_value, self.replace_null_with_default)
                    {
                        return Ok(default.clone());
                    }
                    if schema.optional {
                        return Ok(Value::Null);
                    }
                    return Err(ConnectError::data(format!(
                        "Invalid null value for required {} field",
                        schema.schema_type
                    )));
                }
                schema.schema_type
            }
            None => match node {
                None | Some(Node::Null) => return Ok(Value::Null),
                Some(Node::Bool(_)) => SchemaType::Boolean,
                Some(n) if n.is_number() => {
                    if n.is_integral() {
                        SchemaType::Int64
                    } else {
                        SchemaType::Float64
                    }
                }
                Some(Node::Array(_)) => SchemaType::Array,
                Some(Node::Object(_)) => SchemaType::Map,
                Some(Node::Text(_)) => SchemaType::String,
                Some(_) => return Err(ConnectError::data("Unknown schema type: null")),
            },
        };
        let node = node.expect("null nodes handled above");
        if let Some(schema) = schema {
            if let Some(name) = schema.name.as_deref() {
                if let Some(v) = logical_to_connect(name, schema, node)? {
                    return Ok(v);
                }
            }
        }
        Ok(match schema_type {
            SchemaType::Boolean => Value::Boolean(matches!(node, Node::Bool(true))),
            SchemaType::Int8 => Value::Int8(node.int_value() as i8),
            SchemaType::Int16 => Value::Int16(node.int_value() as i16),
            SchemaType::Int32 => Value::Int32(node.int_value()),
            SchemaType::Int64 => Value::Int64(node.long_value()),
            SchemaType::Float32 => Value::Float32(node.float_value()),
            SchemaType::Float64 => Value::Float64(node.double_value()),
            SchemaType::Bytes => match node.binary_value() {
                Ok(Some(b)) => Value::Bytes(b),
                Ok(None) => Value::Null,
                Err(()) => return Err(ConnectError::data("Invalid bytes field")),
            },
            SchemaType::String => match node {
                Node::Text(t) => Value::String(t.clone()),
                _ => Value::Null,
            },
            SchemaType::Array => {
                let elem = schema.and_then(|s| s.value_schema.as_ref());
                let items: Vec<&Node> = match node {
                    Node::Array(items) => items.iter().collect(),
                    Node::Object(entries) => entries.iter().map(|(_, v)| v).collect(),
                    _ => Vec::new(),
                };
                Value::Array(
                    items
                        .into_iter()
                        .map(|n| self.to_connect(elem, Some(n)))
                        .collect::<ConnectResult<_>>()?,
                )
            }
            SchemaType::Map => {
                let key_schema = schema.and_then(|s| s.key_schema.as_ref());
                let value_schema = schema.and_then(|s| s.value_schema.as_ref());
                let mut entries: Vec<(Value, Value)> = Vec::new();
                if schema.is_none() || key_schema.map(|k| k.schema_type) == Some(SchemaType::String)
                {
                    let Node::Object(fields) = node else {
                        return Err(ConnectError::data(format!(
                            "Maps with string fields should be encoded as JSON objects, but found {}",
                            node.node_type()
                        )));
                    };
                    for (k, v) in fields {
                        entries.push((
                            Value::String(k.clone()),
                            self.to_connect(value_schema, Some(v))?,
                        ));
                    }
                } else {
                    let Node::Array(items) = node else {
                        return Err(ConnectError::data(format!(
                            "Maps with non-string fields should be encoded as JSON array of tuples, but found {}",
                            node.node_type()
                        )));
                    };
                    for item in items {
                        let Node::Array(pair) = item else {
                            return Err(ConnectError::data(format!(
                                "Found invalid map entry instead of array tuple: {}",
                                item.node_type()
                            )));
                        };
                        if pair.len() != 2 {
                            return Err(ConnectError::data(format!(
                                "Found invalid map entry, expected length 2 but found :{}",
                                pair.len()
                            )));
                        }
                        let k = self.to_connect(key_schema, Some(&pair[0]))?;
                        let v = self.to_connect(value_schema, Some(&pair[1]))?;
                        match entries.iter_mut().find(|(ek, _)| *ek == k) {
                            Some(e) => e.1 = v,
                            None => entries.push((k, v)),
                        }
                    }
                }
                Value::Map(entries)
            }
            SchemaType::Struct => {
                let Node::Object(fields) = node else {
                    return Err(ConnectError::data(format!(
                        "Structs should be encoded as JSON objects, but found {}",
                        node.node_type()
                    )));
                };
                let schema = schema.expect("struct values only come with a schema");
                let mut st = Struct::new(schema.clone())?;
                for field in &schema.fields {
                    let v = self.to_connect(Some(&field.schema), get(fields, &field.name))?;
                    st = st.put(&field.name, v)?;
                }
                Value::Struct(st)
            }
        })
    }
}

/// Decimal's wire bytes, with Connect's message for a scale that differs from the schema's.
fn decimal_bytes(schema: &Schema, decimal: &Decimal) -> ConnectResult<Vec<u8>> {
    let scale = schema
        .parameters
        .as_ref()
        .and_then(|p| p.get(Decimal::SCALE_FIELD))
        .and_then(|s| s.parse::<i32>().ok());
    match scale {
        Some(s) if s != decimal.scale => Err(ConnectError::data(format!(
            "Decimal value has mismatching scale for given Decimal schema. Schema has scale {s}, value has scale {}.",
            decimal.scale
        ))),
        _ => Decimal::from_logical(schema, decimal),
    }
}

/// A logical value from JSON, or `None` when `name` is not a logical type.
fn logical_to_connect(name: &str, schema: &Schema, node: &Node) -> ConnectResult<Option<Value>> {
    Ok(Some(match name {
        Decimal::LOGICAL_NAME => {
            if node.is_number() {
                let mut d = node.decimal_value();
                let scale = schema
                    .parameters
                    .as_ref()
                    .and_then(|p| p.get(Decimal::SCALE_FIELD))
                    .and_then(|s| s.parse::<i32>().ok());
                // Rescaling appends zeros; more than a JSON number may have digits (a
                // `1e700000000`) would be a giant computation, so such a number keeps its own
                // scale, as every number does in Java.
                if let Some(scale) = scale {
                    if scale > d.scale
                        && i64::from(scale) - i64::from(d.scale) <= MAX_NUMBER_LENGTH as i64
                    {
                        d = Decimal::new(
                            d.unscaled * BigInt::from(10u8).pow((scale - d.scale) as u32),
                            scale,
                        );
                    }
                }
                Value::Decimal(d)
            } else if matches!(node, Node::Text(_) | Node::Binary(_)) {
                let bytes = node
                    .binary_value()
                    .ok()
                    .flatten()
                    .ok_or_else(|| ConnectError::data("Invalid bytes for Decimal field"))?;
                Value::Decimal(
                    Decimal::to_logical(schema, &bytes)
                        .map_err(|_| ConnectError::data("Invalid bytes for Decimal field"))?,
                )
            } else {
                return Err(ConnectError::data(format!(
                    "Invalid type for Decimal, underlying representation should be numeric or bytes but was {}",
                    node.node_type()
                )));
            }
        }
        Date::LOGICAL_NAME => match node {
            Node::Int(d) => Value::Date(*d),
            _ => {
                return Err(ConnectError::data(format!(
                    "Invalid type for Date, underlying representation should be integer but was {}",
                    node.node_type()
                )))
            }
        },
        Time::LOGICAL_NAME => match node {
            Node::Int(t) => {
                if *t < 0 || *t as i64 > MILLIS_PER_DAY {
                    return Err(ConnectError::data(
                        "Time values must use number of milliseconds greater than 0 and less than 86400000",
                    ));
                }
                Value::Time(*t)
            }
            _ => {
                return Err(ConnectError::data(format!(
                    "Invalid type for Time, underlying representation should be integer but was {}",
                    node.node_type()
                )))
            }
        },
        Timestamp::LOGICAL_NAME => {
            if !node.is_integral() {
                return Err(ConnectError::data(format!(
                    "Invalid type for Timestamp, underlying representation should be integral but was {}",
                    node.node_type()
                )));
            }
            Value::Timestamp(node.long_value())
        }
        _ => return Ok(None),
    }))
}

impl Converter for JsonConverter {
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        self.apply(&with_converter_type(
            configs,
            if is_key { "key" } else { "value" },
        ))
    }

    fn from_connect_data(
        &self,
        _topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.serialize(schema, value)
    }

    fn to_connect_data(&self, _topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        self.deserialize(value)
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// As a header converter (Java's `JsonConverter` implements `HeaderConverter` too): the same
/// encoding as for values. `configure` takes the settings as given; they must include
/// `converter.type` or it defaults to `header`.
impl HeaderConverter for JsonConverter {
    fn configure(&mut self, configs: &Props) -> ConnectResult<()> {
        let mut props = configs.clone();
        props
            .entry("converter.type".into())
            .or_insert_with(|| "header".into());
        self.apply(&props)
    }

    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.serialize(schema, value)
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        self.deserialize(value)
    }
}

// -------------------------------------------------------------------- JSON tree

/// A JSON value as Jackson's tree model holds it, with the number node kinds Connect's
/// coercions depend on.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    /// An integer that fits in 32 bits (`IntNode`).
    Int(i32),
    /// An integer that fits in 64 bits (`LongNode`).
    Long(i64),
    /// A larger integer (`BigIntegerNode`).
    BigInt(BigInt),
    /// A number with a fraction or exponent, kept exact (`DecimalNode`).
    Decimal(Decimal),
    Float(f32),
    Double(f64),
    Text(String),
    Binary(Vec<u8>),
    Array(Vec<Node>),
    /// Entries in insertion order; keys are unique.
    Object(Vec<(String, Node)>),
}

/// The value of `key` in an object's entries.
fn get<'a>(entries: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Sets `key`, replacing an existing entry in place (as `LinkedHashMap.put` does).
fn set(entries: &mut Vec<(String, Node)>, key: &str, value: Node) {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 = value,
        None => entries.push((key.to_string(), value)),
    }
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => get(entries, key),
            _ => None,
        }
    }

    fn is_integral(&self) -> bool {
        matches!(self, Node::Int(_) | Node::Long(_) | Node::BigInt(_))
    }

    fn is_number(&self) -> bool {
        matches!(
            self,
            Node::Int(_)
                | Node::Long(_)
                | Node::BigInt(_)
                | Node::Decimal(_)
                | Node::Float(_)
                | Node::Double(_)
        )
    }

    /// Jackson's node type name (`JsonNodeType`), as Connect's messages show it.
    fn node_type(&self) -> &'static str {
        match self {
            Node::Null => "NULL",
            Node::Bool(_) => "BOOLEAN",
            Node::Text(_) => "STRING",
            Node::Binary(_) => "BINARY",
            Node::Array(_) => "ARRAY",
            Node::Object(_) => "OBJECT",
            _ => "NUMBER",
        }
    }

    /// `JsonNode.intValue()`: numbers narrowed as Java casts them, 0 for non-numbers.
    fn int_value(&self) -> i32 {
        self.long_value() as i32
    }

    /// `JsonNode.longValue()`: numbers narrowed as Java casts them, 0 for non-numbers.
    fn long_value(&self) -> i64 {
        match self {
            Node::Int(v) => *v as i64,
            Node::Long(v) => *v,
            Node::BigInt(v) => low_i64(v),
            Node::Decimal(d) => decimal_low_i64(d),
            Node::Float(v) => *v as i64,
            Node::Double(v) => *v as i64,
            _ => 0,
        }
    }

    /// `JsonNode.floatValue()`.
    fn float_value(&self) -> f32 {
        match self {
            Node::Int(v) => *v as f32,
            Node::Long(v) => *v as f32,
            Node::BigInt(v) => v.to_string().parse().unwrap_or(0.0),
            Node::Decimal(d) => d.to_string().parse().unwrap_or(0.0),
            Node::Float(v) => *v,
            Node::Double(v) => *v as f32,
            _ => 0.0,
        }
    }

    /// `JsonNode.doubleValue()`.
    fn double_value(&self) -> f64 {
        match self {
            Node::Int(v) => *v as f64,
            Node::Long(v) => *v as f64,
            Node::BigInt(v) => v.to_string().parse().unwrap_or(0.0),
            Node::Decimal(d) => d.to_string().parse().unwrap_or(0.0),
            Node::Float(v) => *v as f64,
            Node::Double(v) => *v,
            _ => 0.0,
        }
    }

    /// `JsonNode.decimalValue()` of a number node.
    fn decimal_value(&self) -> Decimal {
        match self {
            Node::Int(v) => Decimal::new(*v, 0),
            Node::Long(v) => Decimal::new(*v, 0),
            Node::BigInt(v) => Decimal::new(v.clone(), 0),
            Node::Decimal(d) => d.clone(),
            Node::Float(v) => Decimal::parse(&float_to_string(*v)).unwrap_or(Decimal::new(0, 0)),
            Node::Double(v) => Decimal::parse(&double_to_string(*v)).unwrap_or(Decimal::new(0, 0)),
            _ => Decimal::new(0, 0),
        }
    }

    /// `JsonNode.binaryValue()`: base64-decoded text, the bytes of a binary node, `None` for
    /// anything else; `Err` for text that is not base64.
    fn binary_value(&self) -> Result<Option<Vec<u8>>, ()> {
        match self {
            Node::Binary(b) => Ok(Some(b.clone())),
            Node::Text(t) => {
                let cleaned: String = t.chars().filter(|c| *c > ' ').collect();
                BASE64_READ
                    .decode(cleaned.as_bytes())
                    .map(Some)
                    .map_err(|_| ())
            }
            _ => Ok(None),
        }
    }

    /// `JsonNode.asText()`: the string of a text node, the JSON text of scalars.
    fn as_text(&self) -> String {
        match self {
            Node::Text(t) => t.clone(),
            Node::Null => "null".into(),
            Node::Binary(b) => STANDARD.encode(b),
            Node::Array(_) | Node::Object(_) => String::new(),
            scalar => {
                let mut out = Vec::new();
                write_node(&mut out, scalar);
                String::from_utf8(out).unwrap_or_default()
            }
        }
    }
}

/// `BigDecimal.longValue()`: the fraction dropped, the low 64 bits kept, without computing a
/// power of ten the result cannot depend on (so `1e700000000` costs no more than `1e7`). As
/// the JDK: a value below one in magnitude is 0, and so is one whose scale is -64 or less
/// (10^64 is a multiple of 2^64, so its low 64 bits are all zero).
fn decimal_low_i64(d: &Decimal) -> i64 {
    if d.scale <= -64 {
        return 0;
    }
    if d.scale <= 0 {
        return low_i64(&(&d.unscaled * BigInt::from(10u8).pow((-d.scale) as u32)));
    }
    // |unscaled| < 2^bits < 10^scale when bits * 0.302 <= scale (0.302 > log10 2): only a
    // fraction.
    if d.unscaled.bits() * 302 <= d.scale as u64 * 1000 {
        return 0;
    }
    // Here scale < bits * 0.302: 10^scale is about the size of the unscaled value itself.
    low_i64(&(&d.unscaled / BigInt::from(10u8).pow(d.scale as u32)))
}

/// The low 64 bits of a big integer, as Java's `BigInteger.longValue()`.
fn low_i64(v: &BigInt) -> i64 {
    let bytes = v.to_signed_bytes_le();
    let mut buf = [if v.sign() == num_bigint::Sign::Minus {
        0xff
    } else {
        0
    }; 8];
    for (i, b) in bytes.iter().take(8).enumerate() {
        buf[i] = *b;
    }
    i64::from_le_bytes(buf)
}

/// Base64 as Jackson reads it: standard alphabet, padding required, trailing bits ignored.
const BASE64_READ: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

// -------------------------------------------------------------------- writing

fn write_node(out: &mut Vec<u8>, node: &Node) {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Node::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::Long(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::BigInt(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Node::Decimal(d) => out.extend_from_slice(d.to_string().as_bytes()),
        Node::Float(v) => write_number_text(out, float_to_string(*v)),
        Node::Double(v) => write_number_text(out, double_to_string(*v)),
        Node::Text(s) => write_string(out, s),
        Node::Binary(b) => {
            out.push(b'"');
            out.extend_from_slice(STANDARD.encode(b).as_bytes());
            out.push(b'"');
        }
        Node::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_node(out, item);
            }
            out.push(b']');
        }
        Node::Object(entries) => {
            out.push(b'{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write_node(out, v);
            }
            out.push(b'}');
        }
    }
}

/// Jackson quotes the non-finite numbers (`QUOTE_NON_NUMERIC_NUMBERS`).
fn write_number_text(out: &mut Vec<u8>, text: String) {
    if text.ends_with("Infinity") || text == "NaN" {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// A JSON string with Jackson's escaping (`tributary_api::data::java_fmt::write_json_string`).
fn write_string(out: &mut Vec<u8>, s: &str) {
    tributary_api::data::java_fmt::write_json_string(out, s);
}

// -------------------------------------------------------------------- parsing

/// How deeply arrays and objects may nest (Jackson's default stream constraint).
const MAX_DEPTH: usize = 1000;

/// How many digits a number may have (Jackson's default `maxNumberLength`).
const MAX_NUMBER_LENGTH: usize = 1000;

/// Parses the first JSON value of `bytes` and ignores whatever follows it (Jackson's
/// `readTree`). `Ok(None)` for input holding only whitespace (Jackson's missing node).
fn parse_json(bytes: &[u8]) -> Result<Option<Node>, String> {
    let mut p = Parser { b: bytes, i: 0 };
    p.skip_ws();
    if p.i >= p.b.len() {
        return Ok(None);
    }
    p.value(0).map(Some)
}

/// Where the JSON value starting at `start` ends (exclusive), found by matching brackets
/// outside strings, without parsing or checking it; `None` when the bytes end first. Only for
/// text that is then parsed, or compared with text that was.
fn skip_json_value(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            _ if depth == 0 => {
                // A scalar: up to the next delimiter.
                i += 1;
                while b.get(i).is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    i += 1;
                }
                return Some(i);
            }
            _ => i += 1,
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    /// Steps over each of `tokens` in turn, white space allowed before and after each;
    /// `None` when the bytes at the cursor are not the next token.
    fn tokens(&mut self, tokens: &[&[u8]]) -> Option<()> {
        for token in tokens {
            self.skip_ws();
            if !self.b[self.i.min(self.b.len())..].starts_with(token) {
                return None;
            }
            self.i += token.len();
        }
        self.skip_ws();
        Some(())
    }

    fn skip_ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }

    fn literal(&mut self, word: &[u8], node: Node) -> Result<Node, String> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(node)
        } else {
            self.err("unrecognized token")
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut entries: Vec<(String, Node)> = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Node::Object(entries));
                }
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return self.err("expected field name");
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek() != Some(b':') {
                        return self.err("expected ':'");
                    }
                    self.i += 1;
                    self.skip_ws();
                    let v = self.value(depth + 1)?;
                    set(&mut entries, &key, v);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Node::Object(entries));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Node::Array(items));
                }
                loop {
                    self.skip_ws();
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Node::Array(items));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(Node::Text(self.string()?)),
            Some(b't') => self.literal(b"true", Node::Bool(true)),
            Some(b'f') => self.literal(b"false", Node::Bool(false)),
            Some(b'n') => self.literal(b"null", Node::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            _ => self.err("unexpected character"),
        }
    }

    fn number(&mut self) -> Result<Node, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - s
        };
        let int_len = digits(self);
        if int_len == 0 {
            return self.err("expected digit");
        }
        let mut is_float = false;
        let mut frac_len = 0;
        if self.peek() == Some(b'.') {
            self.i += 1;
            is_float = true;
            frac_len = digits(self);
            if frac_len == 0 {
                return self.err("expected fraction digit");
            }
        }
        let mut exp_len = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            is_float = true;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            exp_len = digits(self);
            if exp_len == 0 {
                return self.err("expected exponent digit");
            }
        }
        // Jackson's StreamReadConstraints: at most 1000 digits (integer, fraction and exponent
        // digits together), refused before any arithmetic on the number.
        let length = int_len + frac_len + exp_len;
        if length > MAX_NUMBER_LENGTH {
            return Err(format!(
                "Number value length ({length}) exceeds the maximum allowed ({MAX_NUMBER_LENGTH}, from `StreamReadConstraints.getMaxNumberLength()`)"
            ));
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).expect("ASCII");
        if is_float {
            return Decimal::parse(text)
                .map(Node::Decimal)
                .map_err(|e| e.to_string());
        }
        let v: BigInt = text.parse().map_err(|_| "bad integer".to_string())?;
        Ok(match i64::try_from(&v) {
            Ok(l) => match i32::try_from(l) {
                Ok(i) => Node::Int(i),
                Err(_) => Node::Long(l),
            },
            Err(_) => Node::BigInt(v),
        })
    }

    fn hex4(&mut self) -> Result<u16, String> {
        let Some(h) = self.b.get(self.i..self.i + 4) else {
            return self.err("truncated escape");
        };
        let s = std::str::from_utf8(h).map_err(|_| "bad escape".to_string())?;
        let v = u16::from_str_radix(s, 16).map_err(|_| format!("bad escape at byte {}", self.i))?;
        self.i += 4;
        Ok(v)
    }

    /// A string; the cursor is on the opening quote.
    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        let mut units: Vec<u16> = Vec::new();
        let flush = |out: &mut Vec<u8>, units: &mut Vec<u16>| {
            if !units.is_empty() {
                let s: String = char::decode_utf16(units.drain(..))
                    .map(|r| r.unwrap_or('\u{fffd}'))
                    .collect();
                out.extend_from_slice(s.as_bytes());
            }
        };
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    if e == b'u' {
                        units.push(self.hex4()?);
                        continue;
                    }
                    flush(&mut out, &mut units);
                    out.push(match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => return self.err("unrecognized escape"),
                    });
                }
                c if c < 0x20 => return self.err("unescaped control character"),
                c => {
                    flush(&mut out, &mut units);
                    out.push(c);
                }
            }
        }
        flush(&mut out, &mut units);
        String::from_utf8(out).map_err(|_| "invalid UTF-8".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> Node {
        parse_json(bytes).unwrap().unwrap()
    }

    #[test]
    fn a_null_default_is_no_default() {
        // A schema whose default is null (set field by field, not through the builder, which
        // clears it) is written as one without a default, not by recursing into the default.
        let mut schema = Schema::new(SchemaType::String);
        schema.optional = true;
        schema.default_value = Some(Value::Null);
        let schema = Arc::new(schema);
        let c = JsonConverter::new_schemaless();
        assert_eq!(
            c.serialize(Some(&schema), &Value::Null).unwrap().as_deref(),
            Some(&b"null"[..])
        );
        let built = tributary_api::data::SchemaBuilder::string()
            .optional()
            .default_value(Value::Null)
            .unwrap()
            .build();
        assert_eq!(built.default_value, None);
    }

    #[test]
    fn parser_keeps_number_kinds() {
        assert_eq!(text(b"7"), Node::Int(7));
        assert_eq!(text(b"007"), Node::Int(7));
        assert_eq!(text(b"3000000000"), Node::Long(3_000_000_000));
        assert!(matches!(text(b"12345678901234567890"), Node::BigInt(_)));
        assert_eq!(text(b"1.50"), Node::Decimal(Decimal::new(150, 2)));
        assert_eq!(text(b"1E2"), Node::Decimal(Decimal::new(1, -2)));
        assert_eq!(parse_json(b"  ").unwrap(), None);
        assert!(parse_json(b"{").is_err());
        assert!(parse_json(b"\"a\x01\"").is_err());
    }

    #[test]
    fn narrowing_follows_java() {
        assert_eq!(text(b"300").int_value() as i8, 44);
        assert_eq!(text(b"12.9").int_value(), 12);
        assert_eq!(text(b"-12.9").int_value(), -12);
        assert_eq!(text(b"18446744073709551617").long_value(), 1);
        assert_eq!(
            text(b"12345678901234567890").long_value(),
            -6101065172474983726
        );
    }

    /// `BigDecimal.longValue()` by its definition: the integer part computed in full.
    fn naive_long_value(d: &Decimal) -> i64 {
        let int_part = if d.scale <= 0 {
            &d.unscaled * BigInt::from(10u8).pow((-d.scale) as u32)
        } else {
            &d.unscaled / BigInt::from(10u8).pow(d.scale as u32)
        };
        low_i64(&int_part)
    }

    #[test]
    fn decimal_narrowing_skips_only_powers_of_ten_that_cannot_matter() {
        let unscaled = [
            BigInt::from(0),
            BigInt::from(1),
            BigInt::from(-7),
            BigInt::from(123_456_789),
            BigInt::from(-987_654_321_987_654_321i64),
            "340282366920938463463374607431768211457".parse().unwrap(),
        ];
        for u in &unscaled {
            for scale in -80..=80 {
                let d = Decimal::new(u.clone(), scale);
                assert_eq!(decimal_low_i64(&d), naive_long_value(&d), "{d:?}");
            }
        }
    }

    /// Numbers whose exponent alone asks for a giant integer (issue #30, case 6). Java
    /// (Jackson 2.19 as Connect 4.1.1 configures it, JDK 17) reads `1e700000000` at once: 0
    /// under an integer schema (`BigDecimal.longValue()`), itself under a Decimal schema; it
    /// refuses an exponent beyond an int and a number of more than 1000 digits while parsing.
    /// The conversions run on a thread given a generous deadline, so the test fails rather
    /// than hangs when a giant number is computed.
    #[test]
    fn giant_exponents_are_read_without_computing_giant_numbers() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let c = JsonConverter::new();
            let read = |schema: &str, payload: &str| {
                c.deserialize(Some(
                    format!(r#"{{"schema":{schema},"payload":{payload}}}"#).as_bytes(),
                ))
                .map(|sv| sv.value)
            };
            let decimal = r#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}"#;
            let mut out = Vec::new();
            for payload in [
                "1e700000000",
                "-1e700000000",
                "1.5e700000000",
                "1e-700000000",
            ] {
                out.push(read(r#"{"type":"int64"}"#, payload));
                out.push(read(r#"{"type":"int32"}"#, payload));
                out.push(read(r#"{"type":"int8"}"#, payload));
            }
            out.push(read(decimal, "1e700000000"));
            out.push(read(decimal, "1e2"));
            out.push(read(r#"{"type":"int64"}"#, "1e700000000000000"));
            out.push(read(r#"{"type":"int64"}"#, &"1".repeat(1001)));
            out.push(read(
                r#"{"type":"int64"}"#,
                &format!("{}e11", "1".repeat(999)),
            ));
            out.push(read(
                r#"{"type":"int64"}"#,
                &format!("{}e1", "1".repeat(999)),
            ));
            // The receiver is gone only when the test has already failed.
            tx.send(out).ok();
        });
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the conversions finish");
        let mut out = out.into_iter();
        for _ in 0..4 {
            assert_eq!(out.next().unwrap().unwrap(), Value::Int64(0));
            assert_eq!(out.next().unwrap().unwrap(), Value::Int32(0));
            assert_eq!(out.next().unwrap().unwrap(), Value::Int8(0));
        }
        // Too far from the schema's scale to rescale: the number's own scale, as in Java.
        assert_eq!(
            out.next().unwrap().unwrap(),
            Value::Decimal(Decimal::new(1, -700_000_000))
        );
        assert_eq!(
            out.next().unwrap().unwrap(),
            Value::Decimal(Decimal::new(10_000, 2))
        );
        for _ in 0..3 {
            match out.next().unwrap() {
                Err(ConnectError::Data(message)) => assert_eq!(
                    message,
                    "Converting byte[] to Kafka Connect data failed due to serialization error: "
                ),
                other => panic!("{other:?}"),
            }
        }
        // 999 digits and one of exponent: within Jackson's 1000.
        assert!(matches!(out.next().unwrap().unwrap(), Value::Int64(_)));
        assert_eq!(
            parse_json("1".repeat(1001).as_bytes()).unwrap_err(),
            "Number value length (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNumberLength()`)"
        );
    }

    #[test]
    fn the_envelope_follows_each_records_schema_across_the_last_schema_cache() {
        use tributary_api::data::Schema;
        let c = JsonConverter::new();
        let int = Schema::int32_schema();
        let text = Schema::optional_string_schema();
        let write = |s: &SchemaRef, v: Value| {
            String::from_utf8(c.serialize(Some(s), &v).unwrap().unwrap()).unwrap()
        };
        for _ in 0..2 {
            assert_eq!(
                write(&int, Value::Int32(7)),
                r#"{"schema":{"type":"int32","optional":false},"payload":7}"#
            );
            assert_eq!(
                write(&int, Value::Int32(8)),
                r#"{"schema":{"type":"int32","optional":false},"payload":8}"#
            );
            assert_eq!(
                write(&text, Value::from("a\"b")),
                r#"{"schema":{"type":"string","optional":true},"payload":"a\"b"}"#
            );
        }
        assert_eq!(
            c.serialize(None, &Value::from("x")).unwrap().unwrap(),
            br#"{"schema":null,"payload":"x"}"#
        );
    }

    /// Envelopes of Debezium's shape: a struct key and an optional struct value.
    fn change_event(id: i32, name: &str) -> (Vec<u8>, Vec<u8>) {
        let key = format!(
            r#"{{"schema":{{"type":"struct","fields":[{{"type":"int32","optional":false,"field":"id"}}],"optional":false,"name":"db.public.t.Key"}},"payload":{{"id":{id}}}}}"#
        );
        let value = format!(
            r#"{{"schema":{{"type":"struct","fields":[{{"type":"int32","optional":false,"field":"id"}},{{"type":"string","optional":true,"field":"name"}},{{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"ts"}}],"optional":true,"name":"db.public.t.Value"}},"payload":{{"id":{id},"name":"{name}","ts":1700000000000000}}}}"#
        );
        (key.into_bytes(), value.into_bytes())
    }

    #[test]
    fn envelopes_with_a_schema_read_before_share_its_instance_and_read_as_without_the_cache() {
        let cached = JsonConverter::new();
        let uncached = JsonConverter {
            schemas_cache_size: 0,
            ..JsonConverter::new()
        };
        let mut keys = Vec::new();
        let mut values = Vec::new();
        for id in 0..3 {
            let (key, value) = change_event(id, &format!("n\\u00e9{id}"));
            let k = cached.deserialize(Some(&key)).unwrap();
            let v = cached.deserialize(Some(&value)).unwrap();
            assert_eq!(k, uncached.deserialize(Some(&key)).unwrap());
            assert_eq!(v, uncached.deserialize(Some(&value)).unwrap());
            keys.push(k.schema.unwrap());
            values.push(v.schema.unwrap());
        }
        // Key and value schemas alternate; each text keeps one instance.
        assert!(keys.iter().all(|s| Arc::ptr_eq(s, &keys[0])));
        assert!(values.iter().all(|s| Arc::ptr_eq(s, &values[0])));
        assert!(!Arc::ptr_eq(&keys[0], &values[0]));
        // Without the cache every record builds its own.
        let (key, _) = change_event(9, "x");
        let a = uncached.deserialize(Some(&key)).unwrap().schema.unwrap();
        let b = uncached.deserialize(Some(&key)).unwrap().schema.unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn envelopes_laid_out_otherwise_or_broken_read_as_without_the_cache() {
        let cached = JsonConverter::new();
        let uncached = JsonConverter {
            schemas_cache_size: 0,
            ..JsonConverter::new()
        };
        let schema = r#"{"type":"struct","fields":[{"type":"string","optional":true,"field":"s"}],"optional":false}"#;
        let inputs = [
            format!(r#" {{ "schema" : {schema} , "payload" : {{"s":"a}}]\"b"}} }} "#),
            format!(r#"{{"payload":{{"s":"x"}},"schema":{schema}}}"#),
            format!(r#"{{"sch\u0065ma":{schema},"payload":{{"s":"x"}}}}"#),
            format!(r#"{{"schema":{schema},"payload":{{"s":"x"}}}} trailing"#),
            format!(r#"{{"schema":{schema},"payload":{{"s":"x"}},"extra":1}}"#),
            format!(r#"{{"schema":{schema},"payload":{{"s":1}}}}"#),
            format!(r#"{{"schema":{schema},"payload":{{"s":"x"}}"#),
            format!(r#"{{"schema":{schema}]],"payload":{{"s":"x"}}}}"#),
            r#"{"schema":{"type":"nope"},"payload":1}"#.to_string(),
            r#"{"schema":{"type":"int32"}},"payload":1}"#.to_string(),
            r#"{"schema":null,"payload":{"a":[1,2]}}"#.to_string(),
            r#"{"schema":"int32","payload":1}"#.to_string(),
            r#"{"schema":{"type":"int32","optional":false},"payload":7}"#.to_string(),
        ];
        // Twice, so that the second pass meets the schemas the first one cached.
        for _ in 0..2 {
            for input in &inputs {
                let got = cached.deserialize(Some(input.as_bytes()));
                let want = uncached.deserialize(Some(input.as_bytes()));
                match (got, want) {
                    (Ok(g), Ok(w)) => assert_eq!(g, w, "{input}"),
                    (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{input}"),
                    (g, w) => panic!("{input}: {g:?} against {w:?}"),
                }
            }
        }
    }

    proptest::proptest! {
        /// Envelopes with bytes changed, inserted or removed (broken, re-laid-out or with
        /// another schema text) read as they do with the cache off: the same value, or the
        /// same error. The converter keeps its cache across cases, so the schemas cached by
        /// earlier mutations are met again. (No `e` is inserted: an exponent put before a
        /// long run of digits makes a number whose reading takes minutes either way.)
        #[test]
        fn mutated_envelopes_read_as_without_the_cache(
            which in 0usize..2,
            edits in proptest::collection::vec((0usize..4000, 0u8..3, proptest::sample::select(
                b"{}[],:\" \\0123456789.nulltrfsachmpyod-".to_vec())), 0..4),
        ) {
            thread_local! {
                static CACHED: JsonConverter = JsonConverter::new();
            }
            let (key, value) = change_event(7, "x\\\"y");
            let mut bytes = if which == 0 { key } else { value };
            for (at, kind, b) in edits {
                let at = at % (bytes.len() + 1);
                match kind {
                    0 if at < bytes.len() => bytes[at] = b,
                    1 => bytes.insert(at, b),
                    _ if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
            }
            let uncached = JsonConverter {
                schemas_cache_size: 0,
                ..JsonConverter::new()
            };
            let want = uncached.deserialize(Some(&bytes));
            let got = CACHED.with(|c| c.deserialize(Some(&bytes)));
            match (got, want) {
                (Ok(g), Ok(w)) => proptest::prop_assert_eq!(g, w),
                (Err(g), Err(w)) => proptest::prop_assert_eq!(g.to_string(), w.to_string()),
                (g, w) => proptest::prop_assert!(false, "{:?} against {:?}", g, w),
            }
        }
    }

    #[test]
    fn the_schema_text_cache_keeps_the_most_recent_texts() {
        let c = JsonConverter::new();
        let envelope = |n: usize| {
            format!(
                r#"{{"schema":{{"type":"int32","optional":false,"name":"s{n}"}},"payload":{n}}}"#
            )
        };
        let first = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
        for n in 1..SCHEMA_TEXT_CACHE_MAX {
            c.deserialize(Some(envelope(n).as_bytes())).unwrap();
        }
        // Still kept (the cache is full, schema 0 the least recent) ...
        let again = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
        assert!(Arc::ptr_eq(
            first.as_ref().unwrap(),
            again.as_ref().unwrap()
        ));
        // ... and moved to the front: one more text drops schema 1, not schema 0.
        c.deserialize(Some(envelope(SCHEMA_TEXT_CACHE_MAX).as_bytes()))
            .unwrap();
        let kept = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
        assert!(Arc::ptr_eq(first.as_ref().unwrap(), kept.as_ref().unwrap()));
        assert_eq!(c.schema_text.0.lock().unwrap().len(), SCHEMA_TEXT_CACHE_MAX);
        assert!(c
            .schema_text
            .get(
                envelope(1)[10..]
                    .split(",\"payload")
                    .next()
                    .unwrap()
                    .as_bytes()
            )
            .is_none());
    }

    #[test]
    fn strings_escape_as_jackson() {
        let mut out = Vec::new();
        write_string(&mut out, "a\"\\/\n\u{1}\u{7f}é😀");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"\\\\/\\n\\u0001\u{7f}é\\uD83D\\uDE00\""
        );
    }

    /// KIP-1054's `schema.content`: with schemas enabled, the bytes are the bare payload of
    /// the configured schema; without schemas it is ignored; a schema that is not JSON fails
    /// configure with Connect's message; writing still writes envelopes.
    #[test]
    fn a_configured_schema_reads_bare_payloads() {
        let schema_text = r#"{"type":"struct","fields":[{"field":"a","type":"int32","optional":false},{"field":"b","type":"string","optional":true}],"optional":false,"name":"r"}"#;
        let mut c = JsonConverter::new();
        Converter::configure(
            &mut c,
            &Props::from([("schema.content".to_string(), schema_text.to_string())]),
            false,
        )
        .unwrap();
        let read = c.deserialize(Some(br#"{"a":1,"b":"x"}"#)).unwrap();
        let schema = read.schema.clone().unwrap();
        assert_eq!(schema.name.as_deref(), Some("r"));
        let Value::Struct(st) = &read.value else {
            panic!("{:?}", read.value)
        };
        assert_eq!(st.get("a"), Some(&Value::Int32(1)));
        assert_eq!(st.get("b"), Some(&Value::String("x".into())));
        // An envelope is a payload like any other here: a struct without field `a` fails.
        assert!(c
            .deserialize(Some(br#"{"schema":null,"payload":{"a":1}}"#))
            .is_err());
        assert_eq!(c.deserialize(None).unwrap().value, Value::Null);
        // Writing is not affected: an envelope.
        let written = c.serialize(Some(&schema), &read.value).unwrap().unwrap();
        assert!(written.starts_with(br#"{"schema":"#));

        // Ignored without schemas.
        let mut plain = JsonConverter::new();
        Converter::configure(
            &mut plain,
            &Props::from([
                ("schema.content".to_string(), schema_text.to_string()),
                ("schemas.enable".to_string(), "false".to_string()),
            ]),
            false,
        )
        .unwrap();
        let read = plain.deserialize(Some(br#"{"a":1}"#)).unwrap();
        assert!(read.schema.is_none());

        // Not JSON.
        let mut bad = JsonConverter::new();
        let e = Converter::configure(
            &mut bad,
            &Props::from([("schema.content".to_string(), "{nope".to_string())]),
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to parse schema in converter config due to serialization error: "
        );
    }
}
