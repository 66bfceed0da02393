//! Connect schemas ↔ Avro schemas, as Confluent's `AvroData` maps them
//! (`fromConnectSchema` / `toConnectSchema`).
//!
//! # Connect → Avro
//!
//! | Connect | Avro |
//! |---|---|
//! | INT8, INT16 | `{"type":"int","connect.type":"int8"}` (`"int16"`) |
//! | INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES | `int`, `long`, `float`, `double`, `boolean`, `string`, `bytes` |
//! | ARRAY | `{"type":"array","items":…}` |
//! | MAP with (required) STRING keys | `{"type":"map","values":…}` |
//! | other MAP | an array of records `io.confluent.connect.avro.MapEntry` with fields `key`, `value` |
//! | STRUCT | a record named by the schema's name, else `io.confluent.connect.avro.ConnectDefault` (then `ConnectDefault2`, …) |
//! | optional | `["null", T]`, or `[T, "null"]` when the schema has a default |
//! | Decimal | `bytes` with `scale`, `precision` (`connect.decimal.precision`, default 64) and `"logicalType":"decimal"` |
//! | Date, Time, Timestamp | `int` / `int` / `long` with `date` / `time-millis` / `timestamp-millis` |
//!
//! With `connect.meta.data=true` (the default) a schema also carries `connect.doc`,
//! `connect.version`, `connect.parameters`, `connect.default` and `connect.name`; a record field
//! gets a `default` (its schema's default, or `null` when optional). Parameters whose key starts
//! with `avro` become properties. The JSON is written as Avro's Java `Schema.toString()` writes
//! it (key order, a named type written in full once and by name after, a namespace only where it
//! differs from the enclosing one), so a schema registers as the same text a Java worker's
//! converter registers.
//!
//! # Avro → Connect
//!
//! The inverse, for any Avro schema (not only those written by Connect): records become
//! structs named by their full name (unless `io.confluent.connect.avro.ConnectDefault*`), enums
//! strings with `io.confluent.connect.avro.Enum` parameters, `fixed` bytes with
//! `connect.fixed.size`, a union of null and one type an optional schema, any other union a
//! struct `io.confluent.connect.avro.Union` with a field per branch. `connect.*` properties
//! restore names, versions, docs, parameters and defaults.

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;
use serde_json::{Map, Value as Json};
use tributary_api::data::java_fmt::double_to_string;
use tributary_api::data::{Date, Decimal, Schema, SchemaRef, SchemaType, Time, Timestamp, Value};
use tributary_api::{ConnectError, ConnectResult};

/// `AvroData.NAMESPACE`.
pub const NAMESPACE: &str = "io.confluent.connect.avro";
/// `AvroData.DEFAULT_SCHEMA_FULL_NAME`: the name of an unnamed struct's record.
pub const DEFAULT_SCHEMA_FULL_NAME: &str = "io.confluent.connect.avro.ConnectDefault";
/// `AvroData.AVRO_TYPE_UNION`: the Connect name of a struct standing for an Avro union.
pub const AVRO_TYPE_UNION: &str = "io.confluent.connect.avro.Union";
/// `AvroData.AVRO_TYPE_ENUM`: the parameter naming an Avro enum a string came from.
pub const AVRO_TYPE_ENUM: &str = "io.confluent.connect.avro.Enum";
pub(super) const MAP_ENTRY_TYPE_NAME: &str = "MapEntry";
pub(super) const CONNECT_NAME_PROP: &str = "connect.name";
pub(super) const CONNECT_DOC_PROP: &str = "connect.doc";
pub(super) const CONNECT_RECORD_DOC_PROP: &str = "connect.record.doc";
pub(super) const CONNECT_VERSION_PROP: &str = "connect.version";
pub(super) const CONNECT_DEFAULT_VALUE_PROP: &str = "connect.default";
pub(super) const CONNECT_PARAMETERS_PROP: &str = "connect.parameters";
pub(super) const CONNECT_INTERNAL_TYPE_NAME: &str = "connect.internal.type";
pub(super) const CONNECT_TYPE_PROP: &str = "connect.type";
pub(super) const AVRO_RECORD_DOC_PROP: &str = "io.confluent.connect.avro.record.doc";
pub(super) const AVRO_ENUM_DOC_PREFIX_PROP: &str = "io.confluent.connect.avro.enum.doc.";
pub(super) const AVRO_FIELD_DOC_PREFIX_PROP: &str = "io.confluent.connect.avro.field.doc.";
pub(super) const AVRO_FIELD_DEFAULT_FLAG_PROP: &str = "io.confluent.connect.avro.field.default";
pub(super) const AVRO_ENUM_DEFAULT_PREFIX_PROP: &str = "io.confluent.connect.avro.enum.default.";
pub(super) const CONNECT_AVRO_FIXED_SIZE_PROP: &str = "connect.fixed.size";
pub(super) const CONNECT_AVRO_DECIMAL_PRECISION_PROP: &str = "connect.decimal.precision";
pub(super) const CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT: i64 = 64;

/// The `AvroDataConfig` settings that shape the mapping (Confluent's defaults in
/// [`AvroDataConfig::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroDataConfig {
    /// `connect.meta.data` (default true): write and read the `connect.*` properties.
    pub connect_meta_data: bool,
    /// `enhanced.avro.schema.support` (default false): keep enums and full union branch names.
    pub enhanced_schema_support: bool,
    /// `scrub.invalid.names` (default false): replace characters Avro names cannot hold.
    pub scrub_invalid_names: bool,
    /// `allow.optional.map.keys` (default false): an optional STRING key still maps to an
    /// Avro map.
    pub allow_optional_map_keys: bool,
    /// `flatten.singleton.unions` (default true): a union of one type reads as that type.
    pub flatten_singleton_unions: bool,
    /// `discard.type.doc.default` (default false): docs and defaults of types are not kept
    /// as parameters.
    pub discard_type_doc_default: bool,
    /// `schemas.cache.config` (default 1000): how many schemas each direction keeps.
    pub schemas_cache_size: usize,
}

impl Default for AvroDataConfig {
    fn default() -> Self {
        AvroDataConfig {
            connect_meta_data: true,
            enhanced_schema_support: false,
            scrub_invalid_names: false,
            allow_optional_map_keys: false,
            flatten_singleton_unions: true,
            discard_type_doc_default: false,
            schemas_cache_size: 1000,
        }
    }
}

pub use super::parsed::{AvroNamed, AvroNamedKind, AvroRecordField, AvroSchema, AvroType};
pub use super::to_connect::{default_value_from_avro, to_connect_schema};

// ------------------------------------------------------------------ Connect → Avro

/// An Avro schema as `AvroData` builds it, before it is written as JSON.
#[derive(Debug, Clone)]
enum Node {
    Primitive {
        ty: &'static str,
        props: Map<String, Json>,
    },
    Array {
        items: Box<Node>,
        props: Map<String, Json>,
    },
    Map {
        values: Box<Node>,
        props: Map<String, Json>,
    },
    Union(Vec<Node>),
    Named(Box<Named>),
}

#[derive(Debug, Clone)]
struct Named {
    namespace: Option<String>,
    name: String,
    doc: Option<String>,
    kind: NamedKind,
    props: Map<String, Json>,
}

#[derive(Debug, Clone)]
enum NamedKind {
    Record(Vec<AvroField>),
    Fixed(usize),
    Enum {
        symbols: Vec<String>,
        default: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct AvroField {
    name: String,
    schema: Node,
    doc: Option<String>,
    default: Option<Json>,
    props: Map<String, Json>,
}

impl Node {
    fn props_mut(&mut self) -> Option<&mut Map<String, Json>> {
        match self {
            Node::Primitive { props, .. } | Node::Array { props, .. } | Node::Map { props, .. } => {
                Some(props)
            }
            Node::Named(n) => Some(&mut n.props),
            Node::Union(_) => None,
        }
    }
    fn is_named(&self) -> bool {
        match self {
            Node::Named(_) => true,
            Node::Union(branches) => branches.iter().any(|b| matches!(b, Node::Named(_))),
            _ => false,
        }
    }
}

fn primitive(ty: &'static str) -> Node {
    Node::Primitive {
        ty,
        props: Map::new(),
    }
}

/// One conversion's state (`AvroData.FromConnectContext`): schemas already converted (so an
/// equal schema is the same Avro type and an unnamed struct keeps its `ConnectDefaultN`), the
/// counter of unnamed types, and the (scrubbed) names of the schemas of the record fields
/// converted so far (`seenNamedTypes`).
struct FromConnect<'a> {
    config: &'a AvroDataConfig,
    converted: Vec<(Schema, Node)>,
    name_index: usize,
    seen_named_types: HashSet<String>,
}

/// Converts a Connect schema to the JSON text of its Avro schema, as `AvroData.fromConnectSchema`
/// followed by Avro's `Schema.toString()`.
///
/// Errors ([`ConnectError::Data`]): a Decimal without a `scale` parameter, an invalid
/// `connect.fixed.size`, a default value of the wrong type.
pub fn from_connect_schema(config: &AvroDataConfig, schema: &Schema) -> ConnectResult<String> {
    let mut ctx = FromConnect {
        config,
        converted: Vec::new(),
        name_index: 0,
        seen_named_types: HashSet::new(),
    };
    let node = ctx.convert(schema, false)?;
    let mut names = HashMap::new();
    let mut text = String::new();
    write_java_json(&mut text, &write_json(&node, &mut names, None));
    Ok(text)
}

pub(super) fn is_union_schema(schema: &Schema) -> bool {
    schema.name.as_deref() == Some(AVRO_TYPE_UNION)
}

pub(super) fn param<'s>(schema: &'s Schema, key: &str) -> Option<&'s str> {
    schema.parameters.as_ref()?.get(key).map(String::as_str)
}

fn is_fixed_schema(schema: &Schema) -> bool {
    schema.schema_type == SchemaType::Bytes && param(schema, CONNECT_AVRO_FIXED_SIZE_PROP).is_some()
}

/// `AvroData.nonOptional`: the schema made required, its default kept.
fn non_optional(schema: &Schema) -> Schema {
    Schema {
        optional: false,
        ..schema.clone()
    }
}

impl FromConnect<'_> {
    fn name_or_default(&mut self, name: Option<&str>) -> ConnectResult<(Option<String>, String)> {
        Ok(match name {
            Some(n) => {
                let (ns, name) = split_name(n, self.config.scrub_invalid_names);
                for part in ns.iter().flat_map(|ns| ns.split('.')) {
                    validate_name(part)?;
                }
                validate_name(&name)?;
                (ns, name)
            }
            None => {
                self.name_index += 1;
                let suffix = if self.name_index > 1 {
                    self.name_index.to_string()
                } else {
                    String::new()
                };
                (
                    Some(NAMESPACE.to_string()),
                    format!("ConnectDefault{suffix}"),
                )
            }
        })
    }

    fn convert(&mut self, schema: &Schema, ignore_optional: bool) -> ConnectResult<Node> {
        if !is_union_schema(schema) && !schema.optional {
            if let Some((_, node)) = self.converted.iter().find(|(s, _)| s == schema) {
                return Ok(node.clone());
            }
        }
        let mut connect_type = None;
        let base = match schema.schema_type {
            SchemaType::Int8 => {
                connect_type = Some("int8");
                primitive("int")
            }
            SchemaType::Int16 => {
                connect_type = Some("int16");
                primitive("int")
            }
            SchemaType::Int32 => primitive("int"),
            SchemaType::Int64 => primitive("long"),
            SchemaType::Float32 => primitive("float"),
            SchemaType::Float64 => primitive("double"),
            SchemaType::Boolean => primitive("boolean"),
            SchemaType::String => self.string_node(schema)?,
            SchemaType::Bytes => self.bytes_node(schema)?,
            SchemaType::Array => {
                let value = value_schema(schema)?;
                Node::Array {
                    items: Box::new(self.convert(value, false)?),
                    props: Map::new(),
                }
            }
            SchemaType::Map => self.map_node(schema)?,
            SchemaType::Struct => {
                if is_union_schema(schema) {
                    let mut branches = Vec::new();
                    if schema.optional {
                        branches.push(primitive("null"));
                    }
                    for f in &schema.fields {
                        branches.push(self.convert(&non_optional(&f.schema), true)?);
                    }
                    Node::Union(branches)
                } else if schema.optional {
                    let inner = self.convert(&non_optional(schema), false)?;
                    Node::Union(vec![primitive("null"), inner])
                } else {
                    self.record_node(schema)?
                }
            }
        };
        let mut node = base;
        if !matches!(node, Node::Union(_)) {
            self.add_metadata(schema, &mut node, connect_type)?;
            if !ignore_optional {
                node = make_optional(schema, node);
            }
        }
        if !schema.optional {
            self.converted.push((schema.clone(), node.clone()));
        }
        Ok(node)
    }

    fn string_node(&mut self, schema: &Schema) -> ConnectResult<Node> {
        let Some(enum_name) = self
            .config
            .enhanced_schema_support
            .then(|| param(schema, AVRO_TYPE_ENUM))
            .flatten()
        else {
            return Ok(primitive("string"));
        };
        let prefix = format!("{AVRO_TYPE_ENUM}.");
        let symbols = schema
            .parameters
            .iter()
            .flatten()
            .filter_map(|(k, _)| k.strip_prefix(&prefix).map(str::to_string))
            .collect();
        let (_, name) = self.name_or_default(schema.name.as_deref())?;
        let (doc, default) = if self.config.discard_type_doc_default {
            (param(schema, "connect.enum.doc").map(str::to_string), None)
        } else {
            (
                param(schema, &format!("{AVRO_ENUM_DOC_PREFIX_PROP}{name}")).map(str::to_string),
                param(schema, &format!("{AVRO_ENUM_DEFAULT_PREFIX_PROP}{name}"))
                    .map(str::to_string),
            )
        };
        let (namespace, name) = split_name(enum_name, false);
        Ok(Node::Named(Box::new(Named {
            namespace,
            name,
            doc,
            kind: NamedKind::Enum { symbols, default },
            props: Map::new(),
        })))
    }

    fn bytes_node(&mut self, schema: &Schema) -> ConnectResult<Node> {
        let mut node = if is_fixed_schema(schema) {
            let size: usize = param(schema, CONNECT_AVRO_FIXED_SIZE_PROP)
                .unwrap_or_default()
                .parse()
                .map_err(|_| {
                    ConnectError::data(format!(
                        "Invalid {CONNECT_AVRO_FIXED_SIZE_PROP} parameter of schema {schema}"
                    ))
                })?;
            let (namespace, name) = self.name_or_default(schema.name.as_deref())?;
            Node::Named(Box::new(Named {
                namespace,
                name,
                doc: None,
                kind: NamedKind::Fixed(size),
                props: Map::new(),
            }))
        } else {
            primitive("bytes")
        };
        if is_decimal(schema) {
            let scale = decimal_scale(schema)?;
            let precision = match param(schema, CONNECT_AVRO_DECIMAL_PRECISION_PROP) {
                Some(p) => p.parse::<i64>().map_err(|_| {
                    ConnectError::data(format!(
                        "Invalid {CONNECT_AVRO_DECIMAL_PRECISION_PROP} parameter: {p}"
                    ))
                })?,
                None => CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT,
            };
            let props = node.props_mut().expect("bytes and fixed carry properties");
            props.insert("scale".into(), Json::from(scale));
            props.insert("precision".into(), Json::from(precision));
        }
        Ok(node)
    }

    fn map_node(&mut self, schema: &Schema) -> ConnectResult<Node> {
        let key = schema
            .key_schema
            .as_ref()
            .ok_or_else(|| ConnectError::data("Map schema without a key schema"))?;
        let value = value_schema(schema)?;
        if key.schema_type == SchemaType::String
            && (!key.optional || self.config.allow_optional_map_keys)
        {
            return Ok(Node::Map {
                values: Box::new(self.convert(value, false)?),
                props: Map::new(),
            });
        }
        let (namespace, name, props) = match &schema.name {
            None => (
                Some(NAMESPACE.to_string()),
                MAP_ENTRY_TYPE_NAME.to_string(),
                Map::new(),
            ),
            Some(n) => {
                let (ns, name) = self.name_or_default(Some(n))?;
                let mut props = Map::new();
                props.insert(
                    CONNECT_INTERNAL_TYPE_NAME.into(),
                    Json::from(MAP_ENTRY_TYPE_NAME),
                );
                (ns, name, props)
            }
        };
        let fields = vec![
            self.record_field("key", key, None)?,
            self.record_field("value", value, None)?,
        ];
        Ok(Node::Array {
            items: Box::new(Node::Named(Box::new(Named {
                namespace,
                name,
                doc: None,
                kind: NamedKind::Record(fields),
                props,
            }))),
            props: Map::new(),
        })
    }

    fn record_node(&mut self, schema: &Schema) -> ConnectResult<Node> {
        let (namespace, name) = self.name_or_default(schema.name.as_deref())?;
        let doc_key = if self.config.discard_type_doc_default {
            CONNECT_RECORD_DOC_PROP
        } else {
            AVRO_RECORD_DOC_PROP
        };
        let doc = param(schema, doc_key).map(str::to_string);
        let mut fields = Vec::with_capacity(schema.fields.len());
        for f in &schema.fields {
            let field_name = scrub_name(&f.name, self.config.scrub_invalid_names);
            validate_name(&field_name)?;
            let field_doc = if self.config.discard_type_doc_default {
                None
            } else {
                param(schema, &format!("{AVRO_FIELD_DOC_PREFIX_PROP}{}", f.name))
                    .map(str::to_string)
            };
            fields.push(self.record_field(&field_name, &f.schema, field_doc)?);
        }
        Ok(Node::Named(Box::new(Named {
            namespace,
            name,
            doc,
            kind: NamedKind::Record(fields),
            props: Map::new(),
        })))
    }

    fn record_field(
        &mut self,
        name: &str,
        schema: &Schema,
        doc: Option<String>,
    ) -> ConnectResult<AvroField> {
        let default = match &schema.default_value {
            Some(d) => Some(default_value_from_connect(self.config, schema, d)?),
            None if schema.optional => Some(Json::Null),
            None => None,
        };
        // Only the schemas of record fields count (`addAvroRecordField`): a named type first
        // met as an array's items, a map's values or a union's branch is not "seen".
        let seen_before = schema.name.as_ref().is_some_and(|n| {
            !self
                .seen_named_types
                .insert(scrub_full_name(n, self.config.scrub_invalid_names))
        });
        let node = self.convert(schema, false)?;
        let mut props = Map::new();
        if self.config.connect_meta_data && seen_before && node.is_named() {
            if let Some(params) = schema.parameters.as_ref().filter(|p| !p.is_empty()) {
                let json = self.parameters_json(params);
                if !json.is_empty() {
                    props.insert(CONNECT_PARAMETERS_PROP.into(), Json::Object(json));
                }
            }
        }
        let doc = if self.config.discard_type_doc_default {
            schema.doc.clone()
        } else {
            doc
        };
        Ok(AvroField {
            name: name.to_string(),
            schema: node,
            doc,
            default,
            props,
        })
    }

    fn parameters_json(&self, params: &IndexMap<String, String>) -> Map<String, Json> {
        params
            .iter()
            .filter(|(k, _)| {
                self.config.discard_type_doc_default || k.as_str() != AVRO_FIELD_DEFAULT_FLAG_PROP
            })
            .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
            .collect()
    }

    fn add_metadata(
        &self,
        schema: &Schema,
        node: &mut Node,
        connect_type: Option<&str>,
    ) -> ConnectResult<()> {
        let params_json = schema
            .parameters
            .as_ref()
            .map(|p| self.parameters_json(p))
            .unwrap_or_default();
        let connect_default = match &schema.default_value {
            Some(d)
                if self.config.discard_type_doc_default
                    || param(schema, AVRO_FIELD_DEFAULT_FLAG_PROP).is_none() =>
            {
                Some(default_value_from_connect(self.config, schema, d)?)
            }
            _ => None,
        };
        let props = node.props_mut().expect("not a union");
        if self.config.connect_meta_data {
            if let Some(doc) = &schema.doc {
                props.insert(CONNECT_DOC_PROP.into(), Json::from(doc.as_str()));
            }
            if let Some(v) = schema.version {
                props.insert(CONNECT_VERSION_PROP.into(), Json::from(v));
            }
            if !params_json.is_empty() {
                props.insert(CONNECT_PARAMETERS_PROP.into(), Json::Object(params_json));
            }
            if let Some(d) = connect_default {
                props.insert(CONNECT_DEFAULT_VALUE_PROP.into(), d);
            }
            if let Some(name) = &schema.name {
                props.insert(CONNECT_NAME_PROP.into(), Json::from(name.as_str()));
            }
            if let Some(t) = connect_type {
                props.insert(CONNECT_TYPE_PROP.into(), Json::from(t));
            }
        }
        let logical = match schema.name.as_deref() {
            Some(Decimal::LOGICAL_NAME) => Some("decimal"),
            Some(Time::LOGICAL_NAME) => Some("time-millis"),
            Some(Timestamp::LOGICAL_NAME) => Some("timestamp-millis"),
            Some(Date::LOGICAL_NAME) => Some("date"),
            _ => None,
        };
        if let Some(l) = logical {
            props.entry("logicalType").or_insert_with(|| Json::from(l));
        }
        for (k, v) in schema.parameters.iter().flatten() {
            if k.starts_with("avro") {
                props.insert(k.clone(), Json::from(v.as_str()));
            }
        }
        Ok(())
    }
}

pub(super) fn value_schema(schema: &Schema) -> ConnectResult<&SchemaRef> {
    schema.value_schema.as_ref().ok_or_else(|| {
        ConnectError::data(format!(
            "{} schema without a value schema",
            schema.schema_type.name()
        ))
    })
}

fn make_optional(schema: &Schema, node: Node) -> Node {
    if !schema.optional {
        node
    } else if schema.default_value.is_some() {
        Node::Union(vec![node, primitive("null")])
    } else {
        Node::Union(vec![primitive("null"), node])
    }
}

pub(super) fn is_decimal(schema: &Schema) -> bool {
    schema
        .name
        .as_deref()
        .is_some_and(|n| n.eq_ignore_ascii_case(Decimal::LOGICAL_NAME))
}

pub(super) fn decimal_scale(schema: &Schema) -> ConnectResult<i64> {
    param(schema, Decimal::SCALE_FIELD)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ConnectError::data("Invalid Decimal schema: scale parameter not found."))
}

/// `AvroData.defaultValueFromConnect`: a Connect default as the JSON of an Avro default (bytes
/// as ISO-8859-1 text, logical types as their encodings, maps with non-string keys as arrays of
/// `[key, value]`).
fn default_value_from_connect(
    config: &AvroDataConfig,
    schema: &Schema,
    value: &Value,
) -> ConnectResult<Json> {
    let bad = || {
        ConnectError::data(format!(
            "Invalid type used for default value of {} field: {}",
            schema.schema_type.name(),
            value.kind_name()
        ))
    };
    Ok(match (schema.schema_type, value) {
        (_, Value::Null) => Json::Null,
        (SchemaType::Int8, Value::Int8(v)) => Json::from(*v),
        (SchemaType::Int16, Value::Int16(v)) => Json::from(*v),
        (SchemaType::Int32, Value::Int32(v) | Value::Date(v) | Value::Time(v)) => Json::from(*v),
        (SchemaType::Int64, Value::Int64(v) | Value::Timestamp(v)) => Json::from(*v),
        (SchemaType::Float32, Value::Float32(v)) => float_json(f64::from_str_lossy(&v.to_string())),
        (SchemaType::Float64, Value::Float64(v)) => float_json(*v),
        (SchemaType::Boolean, Value::Boolean(v)) => Json::from(*v),
        (SchemaType::String, Value::String(v)) => Json::from(v.as_str()),
        (SchemaType::Bytes, Value::Bytes(b)) => Json::from(latin1(b)),
        (SchemaType::Bytes, Value::Decimal(d)) => {
            Json::from(latin1(&Decimal::from_logical(schema, d)?))
        }
        (SchemaType::Array, Value::Array(items)) => {
            let elem = value_schema(schema)?;
            Json::Array(
                items
                    .iter()
                    .map(|v| default_value_from_connect(config, elem, v))
                    .collect::<ConnectResult<_>>()?,
            )
        }
        (SchemaType::Map, Value::Map(entries)) => {
            let key = schema.key_schema.as_ref().ok_or_else(bad)?;
            let val = value_schema(schema)?;
            if key.schema_type == SchemaType::String
                && (!key.optional || config.allow_optional_map_keys)
            {
                let mut obj = Map::new();
                for (k, v) in entries {
                    let k = k.as_str().ok_or_else(bad)?;
                    obj.insert(k.to_string(), default_value_from_connect(config, val, v)?);
                }
                Json::Object(obj)
            } else {
                Json::Array(
                    entries
                        .iter()
                        .map(|(k, v)| {
                            Ok(Json::Array(vec![
                                default_value_from_connect(config, key, k)?,
                                default_value_from_connect(config, val, v)?,
                            ]))
                        })
                        .collect::<ConnectResult<_>>()?,
                )
            }
        }
        (SchemaType::Struct, Value::Struct(s)) => {
            let mut obj = Map::new();
            for f in &schema.fields {
                let v = s.get(&f.name).unwrap_or(&Value::Null);
                let json = default_value_from_connect(config, &f.schema, v)?;
                if is_union_schema(schema) {
                    return Ok(json);
                }
                obj.insert(scrub_name(&f.name, config.scrub_invalid_names), json);
            }
            Json::Object(obj)
        }
        _ => return Err(bad()),
    })
}

trait FromStrLossy {
    fn from_str_lossy(s: &str) -> f64;
}
impl FromStrLossy for f64 {
    /// A float32 printed shortest and read back as a double: Jackson writes a float node as
    /// `Float.toString` does (`0.1`, not `0.10000000149011612`).
    fn from_str_lossy(s: &str) -> f64 {
        s.parse().unwrap_or(f64::NAN)
    }
}

fn float_json(v: f64) -> Json {
    serde_json::Number::from_f64(v)
        .map(Json::Number)
        .unwrap_or(Json::Null)
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Avro's name rule, as Avro's Java `Schema.Name` checks it when a schema is built: a letter or
/// `_`, then letters, digits or `_`. Errors are [`ConnectError::Data`] with Avro's messages
/// (`Illegal character in: my-topic`); `scrub.invalid.names=true` makes such names valid.
fn validate_name(name: &str) -> ConnectResult<()> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err(ConnectError::data("Empty name")),
        Some(c) if !(c.is_alphabetic() || c == '_') => {
            return Err(ConnectError::data(format!(
                "Illegal initial character: {name}"
            )))
        }
        Some(_) => {}
    }
    if chars.any(|c| !(c.is_alphanumeric() || c == '_')) {
        return Err(ConnectError::data(format!("Illegal character in: {name}")));
    }
    Ok(())
}

/// `AvroData.splitName`: namespace and name of a full name, each part scrubbed when asked.
fn split_name(full: &str, scrub: bool) -> (Option<String>, String) {
    if full.is_empty() {
        return (None, String::new());
    }
    let mut parts: Vec<String> = full.split('.').map(|p| scrub_name(p, scrub)).collect();
    let name = parts.pop().unwrap_or_default();
    if parts.is_empty() {
        (None, name)
    } else {
        (Some(parts.join(".")), name)
    }
}

fn scrub_full_name(name: &str, scrub: bool) -> String {
    if !scrub {
        return name.to_string();
    }
    match split_name(name, true) {
        (None, n) => n,
        (Some(ns), n) => format!("{ns}.{n}"),
    }
}

/// `AvroData.doScrubName` when `scrub`: a name Avro accepts, made as Java makes it
/// (`URLEncoder.encode` in UTF-8, then every character but `[A-Za-z0-9_]` replaced by `_`, and
/// an `x` before a leading digit).
pub fn scrub_name(name: &str, scrub: bool) -> String {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if !scrub
        || name.is_empty()
        || (name.chars().all(ok) && !name.starts_with(|c: char| c.is_ascii_digit()))
    {
        return name.to_string();
    }
    let mut encoded = String::with_capacity(name.len() * 3);
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*' | '_') {
            encoded.push(c);
        } else if c == ' ' {
            encoded.push('+');
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                encoded.push_str(&format!("%{b:02X}"));
            }
        }
    }
    if encoded.starts_with(|c: char| c.is_ascii_digit()) {
        encoded.insert(0, 'x');
    }
    encoded
        .chars()
        .map(|c| if ok(c) { c } else { '_' })
        .collect()
}

/// Appends `json` as the text Avro's Java `Schema.toString()` writes (Jackson writing to a
/// `Writer`): no whitespace, members in order, strings with Jackson's escapes (`\"`, `\\`,
/// `\b \f \n \r \t`, other control characters as `\u00XX` in uppercase hex, every other
/// character as itself), integers as they are and other numbers as `Double.toString` prints
/// them (`1.0E10`, `1.0E-7`, `0.1`).
fn write_java_json(out: &mut String, json: &Json) {
    match json {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&double_to_string(f)),
            _ => out.push_str(&n.to_string()),
        },
        Json::String(s) => tributary_api::data::java_fmt::append_jackson_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_java_json(out, item);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                tributary_api::data::java_fmt::append_jackson_string(out, k);
                out.push(':');
                write_java_json(out, v);
            }
            out.push('}');
        }
    }
}

/// Writes a node as Avro's Java `Schema.toJson` does: `names` holds the named types written so
/// far (by full name), `space` the enclosing namespace.
fn write_json(node: &Node, names: &mut HashMap<String, ()>, space: Option<&str>) -> Json {
    match node {
        Node::Primitive { ty, props } => {
            if props.is_empty() {
                Json::from(*ty)
            } else {
                let mut obj = Map::new();
                obj.insert("type".into(), Json::from(*ty));
                obj.extend(props.clone());
                Json::Object(obj)
            }
        }
        Node::Array { items, props } => {
            let mut obj = Map::new();
            obj.insert("type".into(), Json::from("array"));
            obj.insert("items".into(), write_json(items, names, space));
            obj.extend(props.clone());
            Json::Object(obj)
        }
        Node::Map { values, props } => {
            let mut obj = Map::new();
            obj.insert("type".into(), Json::from("map"));
            obj.insert("values".into(), write_json(values, names, space));
            obj.extend(props.clone());
            Json::Object(obj)
        }
        Node::Union(branches) => Json::Array(
            branches
                .iter()
                .map(|b| write_json(b, names, space))
                .collect(),
        ),
        Node::Named(named) => {
            let full = match &named.namespace {
                Some(ns) if !ns.is_empty() => format!("{ns}.{}", named.name),
                _ => named.name.clone(),
            };
            if names.contains_key(&full) {
                let same_space = named.namespace.as_deref().filter(|s| !s.is_empty()) == space
                    || named.namespace.is_none();
                return Json::from(if same_space { named.name.clone() } else { full });
            }
            names.insert(full, ());
            let mut obj = Map::new();
            let ty = match named.kind {
                NamedKind::Record(_) => "record",
                NamedKind::Fixed(_) => "fixed",
                NamedKind::Enum { .. } => "enum",
            };
            obj.insert("type".into(), Json::from(ty));
            obj.insert("name".into(), Json::from(named.name.as_str()));
            match named.namespace.as_deref() {
                Some(ns) => {
                    if Some(ns) != space {
                        obj.insert("namespace".into(), Json::from(ns));
                    }
                }
                None => {
                    if space.is_some() {
                        obj.insert("namespace".into(), Json::from(""));
                    }
                }
            }
            if let Some(doc) = &named.doc {
                obj.insert("doc".into(), Json::from(doc.as_str()));
            }
            let inner_space = named.namespace.as_deref();
            match &named.kind {
                NamedKind::Record(fields) => {
                    let fields = fields
                        .iter()
                        .map(|f| {
                            let mut fo = Map::new();
                            fo.insert("name".into(), Json::from(f.name.as_str()));
                            fo.insert("type".into(), write_json(&f.schema, names, inner_space));
                            if let Some(doc) = &f.doc {
                                fo.insert("doc".into(), Json::from(doc.as_str()));
                            }
                            if let Some(d) = &f.default {
                                if default_fits(&f.schema, d) {
                                    fo.insert("default".into(), d.clone());
                                } else {
                                    tracing::warn!(
                                        field = %f.name,
                                        "Ignoring invalid default for field {}",
                                        f.name
                                    );
                                }
                            }
                            fo.extend(f.props.clone());
                            Json::Object(fo)
                        })
                        .collect();
                    obj.insert("fields".into(), Json::Array(fields));
                }
                NamedKind::Fixed(size) => {
                    obj.insert("size".into(), Json::from(*size));
                }
                NamedKind::Enum { symbols, default } => {
                    obj.insert(
                        "symbols".into(),
                        Json::Array(symbols.iter().map(|s| Json::from(s.as_str())).collect()),
                    );
                    if let Some(d) = default {
                        obj.insert("default".into(), Json::from(d.as_str()));
                    }
                }
            }
            obj.extend(named.props.clone());
            Json::Object(obj)
        }
    }
}

/// Whether a field default is valid for the field's schema (Avro's default validation; for a
/// union, the first branch decides). Java's `Schema.Field` drops an invalid default with a
/// warning.
fn default_fits(node: &Node, default: &Json) -> bool {
    match node {
        Node::Union(branches) => branches.first().is_some_and(|b| default_fits(b, default)),
        Node::Primitive { ty, .. } => match *ty {
            "null" => default.is_null(),
            "boolean" => default.is_boolean(),
            "int" | "long" => default.is_i64() || default.is_u64(),
            "float" | "double" => default.is_number(),
            "string" | "bytes" => default.is_string(),
            _ => false,
        },
        Node::Array { items, .. } => default
            .as_array()
            .is_some_and(|a| a.iter().all(|v| default_fits(items, v))),
        Node::Map { values, .. } => default
            .as_object()
            .is_some_and(|o| o.values().all(|v| default_fits(values, v))),
        Node::Named(n) => match &n.kind {
            NamedKind::Record(fields) => default.as_object().is_some_and(|o| {
                fields.iter().all(|f| match o.get(&f.name) {
                    Some(v) => default_fits(&f.schema, v),
                    None => f.default.is_some(),
                })
            }),
            NamedKind::Fixed(size) => default.as_str().is_some_and(|s| s.chars().count() == *size),
            NamedKind::Enum { symbols, .. } => default
                .as_str()
                .is_some_and(|s| symbols.iter().any(|x| x == s)),
        },
    }
}
