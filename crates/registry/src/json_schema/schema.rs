//! Connect schemas ↔ JSON Schemas, as Confluent's `JsonSchemaData` maps them
//! (`fromConnectSchema` / `toConnectSchema`).
//!
//! # Connect → JSON Schema
//!
//! | Connect | JSON Schema |
//! |---|---|
//! | INT8 … INT64 | `{"type":"integer","connect.type":"int8"}` (`int16`, `int32`, `int64`) |
//! | FLOAT32, FLOAT64 | `{"type":"number","connect.type":"float32"}` (`float64`) |
//! | BOOLEAN, STRING | `{"type":"boolean"}`, `{"type":"string"}` |
//! | BYTES | `{"type":"string","connect.type":"bytes"}` (base64 text); a Decimal with `decimal.format=NUMERIC` is `"type":"number"` |
//! | ARRAY | `{"type":"array","items":…}` |
//! | MAP with (required) STRING keys | `{"type":"object","additionalProperties":…,"connect.type":"map"}` |
//! | other MAP | an array of `{"key":…,"value":…}` objects, `"connect.type":"map"` |
//! | STRUCT | `{"type":"object","title":<name>,"properties":{…}}`, each property with `"connect.index"` (its position) |
//! | optional | `{"oneOf":[{"type":"null"},…]}` |
//!
//! A schema's name is its `title`, its doc its `description`; `connect.version`,
//! `connect.parameters` (except `io.confluent.connect.json.*` ones) and `default` are kept.
//! With `object.additional.properties=false` objects get `"additionalProperties":false`.
//!
//! # JSON Schema → Connect
//!
//! The inverse for the JSON Schemas producers write: `type` (a string, or an array of types),
//! `properties` in `connect.index` order (else as written), `oneOf` / `anyOf` (with `null`
//! and one other schema: an optional schema; otherwise a struct `io.confluent.connect.json.OneOf`
//! with a field per branch), `allOf` (the properties of its object parts), `enum` and `const`
//! (strings with `io.confluent.connect.json.Enum` parameters), and `$ref` to a definition of
//! the same document (`#/definitions/…`, `#/$defs/…`). Integers without `connect.type` are
//! INT64, numbers FLOAT64. Not supported, refused with a [`ConnectError::Data`]: schemas
//! allowing anything (`{}`, `true`: Confluent's `ConnectVariant`), references to other
//! documents, recursive references.

use indexmap::IndexMap;
use serde_json::{Map, Value as Json};
use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, SchemaType};
use tributary_api::{ConnectError, ConnectResult};

use super::data::{read_value, write_value, JsonDataConfig};

/// `JsonSchemaData.NAMESPACE`: the prefix of parameters that stay out of `connect.parameters`.
pub const NAMESPACE: &str = "io.confluent.connect.json";
/// The Connect name of a struct standing for a `oneOf`.
pub const JSON_TYPE_ONE_OF: &str = "io.confluent.connect.json.OneOf";
/// The parameter naming a JSON enum (its symbols in `…Enum.<symbol>` parameters).
pub const JSON_TYPE_ENUM: &str = "io.confluent.connect.json.Enum";
const CONNECT_TYPE_PROP: &str = "connect.type";
const CONNECT_VERSION_PROP: &str = "connect.version";
const CONNECT_PARAMETERS_PROP: &str = "connect.parameters";
const CONNECT_INDEX_PROP: &str = "connect.index";
const NULL_MARKER: &str = "<NULL>";

/// Converts a Connect schema to JSON Schema text (`JsonSchemaData.fromConnectSchema`).
///
/// Errors ([`ConnectError::Data`]): a default value that does not fit its schema.
pub fn from_connect_schema(config: &JsonDataConfig, schema: &Schema) -> ConnectResult<String> {
    Ok(Json::Object(from_connect(config, schema, None, false)?).to_string())
}

fn param<'s>(schema: &'s Schema, key: &str) -> Option<&'s str> {
    schema.parameters.as_ref()?.get(key).map(String::as_str)
}

fn typed(ty: &str) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("type".into(), Json::from(ty));
    m
}

fn non_optional(schema: &Schema) -> Schema {
    Schema {
        optional: false,
        ..schema.clone()
    }
}

fn one_of(branches: Vec<Json>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("oneOf".into(), Json::Array(branches));
    m
}

fn null_schema() -> Json {
    Json::Object(typed("null"))
}

fn from_connect(
    config: &JsonDataConfig,
    schema: &Schema,
    index: Option<usize>,
    ignore_optional: bool,
) -> ConnectResult<Map<String, Json>> {
    let mut props: Map<String, Json> = Map::new();
    let connect_type = |t: &str| Some(t.to_string());
    let (mut node, ctype, combined) = match schema.schema_type {
        SchemaType::Int8 => (typed("integer"), connect_type("int8"), false),
        SchemaType::Int16 => (typed("integer"), connect_type("int16"), false),
        SchemaType::Int32 => (typed("integer"), connect_type("int32"), false),
        SchemaType::Int64 => (typed("integer"), connect_type("int64"), false),
        SchemaType::Float32 => (typed("number"), connect_type("float32"), false),
        SchemaType::Float64 => (typed("number"), connect_type("float64"), false),
        SchemaType::Boolean => (typed("boolean"), None, false),
        SchemaType::String => {
            if param(schema, JSON_TYPE_ENUM).is_some() {
                let prefix = format!("{JSON_TYPE_ENUM}.");
                let symbols = schema
                    .parameters
                    .iter()
                    .flatten()
                    .filter_map(|(k, _)| k.strip_prefix(&prefix))
                    .map(|s| {
                        if s == NULL_MARKER {
                            Json::Null
                        } else {
                            Json::from(s)
                        }
                    })
                    .collect();
                let mut m = Map::new();
                m.insert("enum".into(), Json::Array(symbols));
                (m, None, false)
            } else {
                (typed("string"), None, false)
            }
        }
        SchemaType::Bytes => {
            let numeric = schema.name.as_deref()
                == Some(tributary_api::data::Decimal::LOGICAL_NAME)
                && config.decimal_numeric;
            (
                typed(if numeric { "number" } else { "string" }),
                connect_type("bytes"),
                false,
            )
        }
        SchemaType::Array => {
            let elem = schema
                .value_schema
                .as_ref()
                .ok_or_else(|| ConnectError::data("Array schema without element schema"))?;
            let mut m = typed("array");
            m.insert(
                "items".into(),
                Json::Object(from_connect(config, elem, None, false)?),
            );
            (m, None, false)
        }
        SchemaType::Map => {
            let key = schema
                .key_schema
                .as_ref()
                .ok_or_else(|| ConnectError::data("Map schema without key schema"))?;
            let value = schema
                .value_schema
                .as_ref()
                .ok_or_else(|| ConnectError::data("Map schema without value schema"))?;
            if key.schema_type == SchemaType::String && !key.optional {
                let mut m = typed("object");
                m.insert(
                    "additionalProperties".into(),
                    Json::Object(from_connect(config, value, None, false)?),
                );
                (m, connect_type("map"), false)
            } else {
                let mut entry = typed("object");
                let mut properties = Map::new();
                properties.insert(
                    "key".into(),
                    Json::Object(from_connect(config, key, Some(0), false)?),
                );
                properties.insert(
                    "value".into(),
                    Json::Object(from_connect(config, value, Some(1), false)?),
                );
                entry.insert("properties".into(), Json::Object(properties));
                let mut m = typed("array");
                m.insert("items".into(), Json::Object(entry));
                (m, connect_type("map"), false)
            }
        }
        SchemaType::Struct => {
            if schema.name.as_deref() == Some(JSON_TYPE_ONE_OF) {
                let mut branches = Vec::new();
                if schema.optional {
                    branches.push(null_schema());
                }
                for f in &schema.fields {
                    branches.push(Json::Object(from_connect(
                        config,
                        &non_optional(&f.schema),
                        Some(f.index),
                        true,
                    )?));
                }
                (one_of(branches), None, true)
            } else if schema.optional && !ignore_optional {
                let inner = from_connect(config, &non_optional(schema), None, false)?;
                (one_of(vec![null_schema(), Json::Object(inner)]), None, true)
            } else {
                let mut m = typed("object");
                let mut properties = Map::new();
                for f in &schema.fields {
                    properties.insert(
                        f.name.clone(),
                        Json::Object(from_connect(config, &f.schema, Some(f.index), false)?),
                    );
                }
                m.insert("properties".into(), Json::Object(properties));
                if !config.allow_additional_properties {
                    m.insert("additionalProperties".into(), Json::Bool(false));
                }
                (m, None, false)
            }
        }
    };
    if !combined {
        if let Some(name) = &schema.name {
            node.insert("title".into(), Json::from(name.as_str()));
        }
        if let Some(doc) = &schema.doc {
            node.insert("description".into(), Json::from(doc.as_str()));
        }
        if let Some(d) = &schema.default_value {
            let mut text = Vec::new();
            write_value(config, Some(schema), d, &mut text)?;
            let json: Json = serde_json::from_slice(&text)
                .map_err(|e| ConnectError::data(format!("Invalid default value: {e}")))?;
            node.insert("default".into(), json);
        }
        if let Some(t) = ctype {
            props.insert(CONNECT_TYPE_PROP.into(), Json::from(t));
        }
        if let Some(v) = schema.version {
            props.insert(CONNECT_VERSION_PROP.into(), Json::from(v));
        }
        let params: Map<String, Json> = schema
            .parameters
            .iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with(NAMESPACE))
            .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
            .collect();
        if !params.is_empty() {
            props.insert(CONNECT_PARAMETERS_PROP.into(), Json::Object(params));
        }
        if schema.optional && !ignore_optional {
            node.extend(std::mem::take(&mut props));
            node = one_of(vec![null_schema(), Json::Object(node)]);
        }
    }
    if let Some(i) = index {
        props.insert(CONNECT_INDEX_PROP.into(), Json::from(i));
    }
    node.extend(props);
    Ok(node)
}

/// Converts a JSON Schema (text) to a Connect schema (`JsonSchemaData.toConnectSchema`);
/// `version` is the registry's, used for the top schema when it has no `connect.version`.
pub fn to_connect_schema(
    config: &JsonDataConfig,
    root: &Json,
    version: Option<i32>,
) -> ConnectResult<SchemaRef> {
    ToConnect {
        config,
        root,
        refs: Vec::new(),
    }
    .convert(root, version, false)
}

struct ToConnect<'a> {
    config: &'a JsonDataConfig,
    root: &'a Json,
    /// References being followed (a recursive one is refused).
    refs: Vec<String>,
}

fn unsupported(what: &str) -> ConnectError {
    ConnectError::data(format!("Unsupported JSON Schema: {what}"))
}

impl<'a> ToConnect<'a> {
    fn resolve(&self, reference: &str) -> ConnectResult<&'a Json> {
        let pointer = reference.strip_prefix('#').ok_or_else(|| {
            unsupported(&format!("a reference to another document ({reference})"))
        })?;
        self.root.pointer(pointer).ok_or_else(|| {
            ConnectError::data(format!("Unresolved JSON Schema reference {reference}"))
        })
    }

    fn convert<'n>(
        &mut self,
        node: &'n Json,
        version: Option<i32>,
        force_optional: bool,
    ) -> ConnectResult<SchemaRef>
    where
        'a: 'n,
    {
        let obj = match node {
            Json::Object(o) if !o.is_empty() => o,
            Json::Bool(false) => return Err(unsupported("false (no value is valid)")),
            _ => {
                return Err(unsupported(
                    "a schema allowing any value ({} or true: Confluent's ConnectVariant)",
                ))
            }
        };
        if let Some(Json::String(r)) = obj.get("$ref") {
            if self.refs.contains(r) {
                return Err(unsupported(&format!("a recursive reference ({r})")));
            }
            let target = self.resolve(r)?;
            self.refs.push(r.clone());
            let result = self.convert(target, version, force_optional);
            self.refs.pop();
            return result;
        }
        let ctype = obj.get(CONNECT_TYPE_PROP).and_then(Json::as_str);
        let mut builder = if let Some(branches) = obj
            .get("oneOf")
            .or_else(|| obj.get("anyOf"))
            .and_then(Json::as_array)
        {
            if branches.len() == 1 && self.config.flatten_singleton_unions {
                return self.convert(&branches[0], None, false);
            }
            let is_null = |b: &Json| b.get("type").and_then(Json::as_str) == Some("null");
            if branches.len() == 2 {
                if let Some(other) = match (is_null(&branches[0]), is_null(&branches[1])) {
                    (true, false) => Some(&branches[1]),
                    (false, true) => Some(&branches[0]),
                    _ => None,
                } {
                    return self.convert(other, version, true);
                }
            }
            let mut b = SchemaBuilder::struct_().name(JSON_TYPE_ONE_OF);
            let mut index = 0;
            for branch in branches {
                if is_null(branch) {
                    b = b.optional();
                } else {
                    let field = self.convert(branch, None, true)?;
                    b = b.field(format!("{JSON_TYPE_ONE_OF}.field.{index}"), field)?;
                    index += 1;
                }
            }
            b
        } else if let Some(parts) = obj.get("allOf").and_then(Json::as_array) {
            return self.all_of(parts, version, force_optional);
        } else if let Some(symbols) = obj.get("enum").and_then(Json::as_array) {
            enum_builder(symbols)
        } else if let Some(c) = obj.get("const") {
            enum_builder(std::slice::from_ref(c))
        } else {
            let ty = match obj.get("type") {
                Some(Json::String(t)) => t.as_str(),
                Some(Json::Array(types)) => {
                    // `"type": ["null", "string"]`: a union of the types.
                    let branches: Vec<Json> = types
                        .iter()
                        .map(|t| {
                            let mut o = obj.clone();
                            o.insert("type".into(), t.clone());
                            Json::Object(o)
                        })
                        .collect();
                    let mut o = Map::new();
                    o.insert("oneOf".into(), Json::Array(branches));
                    return self.convert(&Json::Object(o), version, force_optional);
                }
                None if obj.contains_key("properties") => "object",
                None => return Err(unsupported(&format!("a schema without a type ({node})"))),
                Some(other) => return Err(unsupported(&format!("type {other}"))),
            };
            match ty {
                "boolean" => SchemaBuilder::boolean(),
                "integer" | "number" => match ctype {
                    Some("int8") => SchemaBuilder::int8(),
                    Some("int16") => SchemaBuilder::int16(),
                    Some("int32") => SchemaBuilder::int32(),
                    Some("int64") => SchemaBuilder::int64(),
                    Some("float32") => SchemaBuilder::float32(),
                    Some("float64") => SchemaBuilder::float64(),
                    Some("bytes") => SchemaBuilder::bytes(),
                    Some(other) => return Err(unsupported(&format!("connect.type {other}"))),
                    None if ty == "integer" => SchemaBuilder::int64(),
                    None => SchemaBuilder::float64(),
                },
                "string" => {
                    if ctype == Some("bytes") {
                        SchemaBuilder::bytes()
                    } else {
                        SchemaBuilder::string()
                    }
                }
                "array" => {
                    let items = obj.get("items").ok_or_else(|| {
                        ConnectError::data("Array schema did not specify the items type")
                    })?;
                    let entry = items.get("properties").and_then(Json::as_object);
                    match (ctype, entry) {
                        (Some("map"), Some(p)) => {
                            let key = p
                                .get("key")
                                .ok_or_else(|| unsupported("a map entry without key"))?;
                            let value = p
                                .get("value")
                                .ok_or_else(|| unsupported("a map entry without value"))?;
                            SchemaBuilder::map(
                                self.convert(key, None, false)?,
                                self.convert(value, None, false)?,
                            )
                        }
                        _ => SchemaBuilder::array(self.convert(items, None, false)?),
                    }
                }
                "object" => {
                    if ctype == Some("map") {
                        let values = obj
                            .get("additionalProperties")
                            .ok_or_else(|| unsupported("a map without additionalProperties"))?;
                        SchemaBuilder::map(
                            Schema::string_schema(),
                            self.convert(values, None, false)?,
                        )
                    } else {
                        let properties = obj.get("properties").and_then(Json::as_object);
                        let required: Vec<&str> = obj
                            .get("required")
                            .and_then(Json::as_array)
                            .map(|r| r.iter().filter_map(Json::as_str).collect())
                            .unwrap_or_default();
                        self.struct_of(properties.into_iter().flatten(), &required)?
                    }
                }
                "null" => return Err(unsupported("a standalone null schema")),
                other => return Err(unsupported(&format!("type {other}"))),
            }
        };
        if let Some(title) = obj.get("title").and_then(Json::as_str) {
            if builder.clone().build().name.is_none() {
                builder = builder.name(title);
            }
        }
        match obj.get(CONNECT_VERSION_PROP).and_then(Json::as_i64) {
            Some(v) => builder = builder.version(v as i32),
            None => {
                if let Some(v) = version {
                    builder = builder.version(v);
                }
            }
        }
        if let Some(d) = obj.get("description").and_then(Json::as_str) {
            builder = builder.doc(d);
        }
        if let Some(params) = obj.get(CONNECT_PARAMETERS_PROP).and_then(Json::as_object) {
            for (k, v) in params {
                if let Some(v) = v.as_str() {
                    builder = builder.parameter(k.clone(), v);
                }
            }
        }
        if let Some(d) = obj.get("default") {
            let partial = builder.clone().build();
            let v = read_value(self.config, Some(&partial), Some(d))?;
            if !v.is_null() {
                builder = builder.default_value(v)?;
            }
        }
        if force_optional {
            builder = builder.optional();
        }
        Ok(builder.build())
    }

    fn struct_of<'n>(
        &mut self,
        properties: impl Iterator<Item = (&'n String, &'n Json)>,
        required: &[&str],
    ) -> ConnectResult<SchemaBuilder>
    where
        'a: 'n,
    {
        let mut sorted: Vec<(i64, &'n String, &'n Json)> = Vec::new();
        for (name, sub) in properties {
            let index = sub
                .get(CONNECT_INDEX_PROP)
                .and_then(Json::as_i64)
                .unwrap_or(sorted.len() as i64);
            sorted.push((index, name, sub));
        }
        sorted.sort_by_key(|(i, _, _)| *i);
        let mut b = SchemaBuilder::struct_();
        for (_, name, sub) in sorted {
            let optional =
                self.config.use_optional_for_non_required && !required.contains(&name.as_str());
            b = b.field(name.clone(), self.convert(sub, None, optional)?)?;
        }
        Ok(b)
    }

    /// `allOf`: a struct of every object part's properties; otherwise the one part that says
    /// what the value is (a combined schema first, then a string or number).
    fn all_of<'n>(
        &mut self,
        parts: &'n [Json],
        version: Option<i32>,
        force_optional: bool,
    ) -> ConnectResult<SchemaRef>
    where
        'a: 'n,
    {
        let mut properties: IndexMap<&'n String, &'n Json> = IndexMap::new();
        let mut required = Vec::new();
        for part in parts {
            let part = match part.get("$ref").and_then(Json::as_str) {
                Some(r) => self.resolve(r)?,
                None => part,
            };
            if let Some(p) = part.get("properties").and_then(Json::as_object) {
                properties.extend(p.iter());
            }
            if let Some(r) = part.get("required").and_then(Json::as_array) {
                required.extend(r.iter().filter_map(Json::as_str));
            }
        }
        if !properties.is_empty() {
            let mut b = self.struct_of(properties.into_iter(), &required)?;
            if force_optional {
                b = b.optional();
            }
            return Ok(b.build());
        }
        let pick = parts
            .iter()
            .find(|p| p.get("oneOf").is_some() || p.get("anyOf").is_some())
            .or_else(|| {
                parts.iter().find(|p| {
                    matches!(
                        p.get("type").and_then(Json::as_str),
                        Some("string" | "number" | "integer")
                    )
                })
            })
            .ok_or_else(|| unsupported("an allOf without properties or a typed part"))?;
        self.convert(pick, version, force_optional)
    }
}

fn enum_builder(symbols: &[Json]) -> SchemaBuilder {
    let mut b = SchemaBuilder::string().parameter(JSON_TYPE_ENUM, "");
    for s in symbols {
        let symbol = match s {
            Json::Null => NULL_MARKER.to_string(),
            Json::String(t) => t.clone(),
            other => other.to_string(),
        };
        b = b.parameter(format!("{JSON_TYPE_ENUM}.{symbol}"), symbol);
    }
    b
}

/// The title of a JSON Schema (what the record name strategies use), or `object`/the type.
pub fn record_name(root: &Json) -> String {
    root.get("title")
        .and_then(Json::as_str)
        .map(str::to_string)
        .or_else(|| root.get("type").and_then(Json::as_str).map(str::to_string))
        .unwrap_or_default()
}
