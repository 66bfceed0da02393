//! `org.apache.kafka.connect.json.JsonConverter` (Connect's `connect-json`, a crate of its own as
//! there: the Java bridge uses it as its codec, the plugins register it): Connect data as JSON, optionally wrapped in
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
//! quirks of a few floats (see [`tributary_api::data::java_fmt`]); a Decimal read as a JSON number with fewer
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

use tributary_api::converter::{converter_config_def, with_converter_type};
use tributary_api::data::java_fmt::{double_to_string, float_to_string, MILLIS_PER_DAY};

mod node;
mod schema;
#[cfg(test)]
mod tests;
mod value;

use node::*;
use value::*;

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
    /// Whether a `float` or `double` written as the string `"NaN"`, `"Infinity"` or
    /// `"-Infinity"` (how Java's Jackson writes a non-finite number) reads back as that number
    /// instead of 0, as Connect's JsonConverter reads it ([`JsonConverter::non_finite_floats`]).
    non_finite_floats: bool,
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
            non_finite_floats: false,
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

    /// This converter, reading a `float` or `double` field whose JSON is the string `"NaN"`,
    /// `"Infinity"` or `"-Infinity"` as that number. Connect's JsonConverter reads such a
    /// string as 0 (Jackson's `TextNode.doubleValue`), so a converter for users' data keeps
    /// Connect's behaviour; this one is for envelopes that only carry Connect data between two
    /// runtimes (the hosted JVM's, whose Java side writes non-finite numbers so), where a 0
    /// would lose the value.
    pub fn non_finite_floats(mut self) -> JsonConverter {
        self.non_finite_floats = true;
        self
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
}

impl Converter for JsonConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

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
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

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
