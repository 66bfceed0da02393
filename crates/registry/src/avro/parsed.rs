//! A parsed Avro schema with its named types resolved ([`AvroSchema`]): what the mapping to
//! Connect schemas and the binary codec walk. Parsed from JSON text keeping every property
//! (`connect.*`, `logicalType`, …), which the mapping needs and `apache-avro`'s parser drops on
//! primitive types.

use std::collections::HashMap;

use serde_json::{Map, Value as Json};
use tributary_api::{ConnectError, ConnectResult};

/// A parsed Avro schema with named types resolved: what [`to_connect_schema`] and the value
/// conversions walk. `Ref`s point into [`AvroSchema::named`].
#[derive(Debug, Clone, PartialEq)]
pub enum AvroType {
    /// `null`, `boolean`, `int`, `long`, `float`, `double`, `bytes`, `string` with their
    /// properties.
    Primitive {
        /// The primitive type's name.
        ty: String,
        /// Every other key of the schema object (`logicalType`, `connect.*`, …).
        props: Map<String, Json>,
    },
    /// `{"type":"array","items":…}`.
    Array {
        /// The element type.
        items: Box<AvroType>,
        /// Other keys.
        props: Map<String, Json>,
    },
    /// `{"type":"map","values":…}`.
    Map {
        /// The value type.
        values: Box<AvroType>,
        /// Other keys.
        props: Map<String, Json>,
    },
    /// A union's branches.
    Union(Vec<AvroType>),
    /// A named type (record, enum, fixed) by its index in [`AvroSchema::named`].
    Ref(usize),
}

/// A named Avro type.
#[derive(Debug, Clone, PartialEq)]
pub struct AvroNamed {
    /// The full name (`namespace.name`).
    pub full_name: String,
    /// The doc, if any.
    pub doc: Option<String>,
    /// What kind of named type.
    pub kind: AvroNamedKind,
    /// Other keys.
    pub props: Map<String, Json>,
}

/// The body of a named type.
#[derive(Debug, Clone, PartialEq)]
pub enum AvroNamedKind {
    /// A record's fields: name, type, doc, default, other keys.
    Record(Vec<AvroRecordField>),
    /// An enum's symbols and default symbol.
    Enum {
        /// The symbols, in order (a value is written as its index).
        symbols: Vec<String>,
        /// The default symbol.
        default: Option<String>,
    },
    /// A fixed type's size in bytes.
    Fixed(usize),
}

/// A record field.
#[derive(Debug, Clone, PartialEq)]
pub struct AvroRecordField {
    /// The field's name.
    pub name: String,
    /// Its type.
    pub ty: AvroType,
    /// Its doc.
    pub doc: Option<String>,
    /// Its default (JSON), if any.
    pub default: Option<Json>,
    /// Other keys.
    pub props: Map<String, Json>,
}

/// A whole parsed Avro schema: the top type and every named type it defines.
#[derive(Debug, Clone, PartialEq)]
pub struct AvroSchema {
    /// The schema itself.
    pub root: AvroType,
    /// Named types, referenced by index.
    pub named: Vec<AvroNamed>,
}

impl AvroSchema {
    /// Parses Avro schema JSON text. `references` are the texts of schemas it may refer to by
    /// name (a registry's schema references), parsed first. Errors are
    /// [`ConnectError::Data`] naming what is wrong.
    pub fn parse(text: &str, references: &[String]) -> ConnectResult<AvroSchema> {
        let mut parser = Parser {
            named: Vec::new(),
            by_name: HashMap::new(),
        };
        for r in references {
            let json: Json = serde_json::from_str(r)
                .map_err(|e| ConnectError::data(format!("Invalid referenced Avro schema: {e}")))?;
            parser.parse(&json, None)?;
        }
        let json: Json = serde_json::from_str(text)
            .map_err(|e| ConnectError::data(format!("Invalid Avro schema: {e}")))?;
        let root = parser.parse(&json, None)?;
        Ok(AvroSchema {
            root,
            named: parser.named,
        })
    }

    /// The named type a `Ref` points to.
    pub fn named(&self, index: usize) -> &AvroNamed {
        &self.named[index]
    }
}

struct Parser {
    named: Vec<AvroNamed>,
    by_name: HashMap<String, usize>,
}

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

fn full_name(name: &str, namespace: Option<&str>) -> String {
    if name.contains('.') {
        name.to_string()
    } else {
        match namespace {
            Some(ns) if !ns.is_empty() => format!("{ns}.{name}"),
            _ => name.to_string(),
        }
    }
}

impl Parser {
    fn lookup(&self, name: &str, space: Option<&str>) -> ConnectResult<AvroType> {
        let full = full_name(name, space);
        self.by_name
            .get(&full)
            .or_else(|| self.by_name.get(name))
            .map(|&i| AvroType::Ref(i))
            .ok_or_else(|| ConnectError::data(format!("Undefined Avro name: {name}")))
    }

    fn parse(&mut self, json: &Json, space: Option<&str>) -> ConnectResult<AvroType> {
        match json {
            Json::String(s) if PRIMITIVES.contains(&s.as_str()) => Ok(AvroType::Primitive {
                ty: s.clone(),
                props: Map::new(),
            }),
            Json::String(s) => self.lookup(s, space),
            Json::Array(branches) => Ok(AvroType::Union(
                branches
                    .iter()
                    .map(|b| self.parse(b, space))
                    .collect::<ConnectResult<_>>()?,
            )),
            Json::Object(obj) => self.parse_object(obj, space),
            other => Err(ConnectError::data(format!(
                "Invalid Avro schema: {other} is not a schema"
            ))),
        }
    }

    fn parse_object(
        &mut self,
        obj: &Map<String, Json>,
        space: Option<&str>,
    ) -> ConnectResult<AvroType> {
        let ty = obj
            .get("type")
            .ok_or_else(|| ConnectError::data("Invalid Avro schema: no type"))?;
        let ty = match ty {
            Json::String(t) => t.as_str(),
            // {"type": {...}} or {"type": [...]}: the type itself.
            other => return self.parse(other, space),
        };
        let props = |skip: &[&str]| -> Map<String, Json> {
            obj.iter()
                .filter(|(k, _)| k.as_str() != "type" && !skip.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        match ty {
            "array" => {
                let items = obj.get("items").ok_or_else(|| {
                    ConnectError::data("Invalid Avro schema: array without items")
                })?;
                Ok(AvroType::Array {
                    items: Box::new(self.parse(items, space)?),
                    props: props(&["items"]),
                })
            }
            "map" => {
                let values = obj
                    .get("values")
                    .ok_or_else(|| ConnectError::data("Invalid Avro schema: map without values"))?;
                Ok(AvroType::Map {
                    values: Box::new(self.parse(values, space)?),
                    props: props(&["values"]),
                })
            }
            "record" | "error" | "enum" | "fixed" => {
                let name = obj.get("name").and_then(Json::as_str).ok_or_else(|| {
                    ConnectError::data(format!("Invalid Avro schema: {ty} without a name"))
                })?;
                let ns = obj.get("namespace").and_then(Json::as_str).or(space);
                let full = full_name(name, ns);
                let own_space = full.rsplit_once('.').map(|(ns, _)| ns.to_string());
                let index = self.named.len();
                self.by_name.insert(full.clone(), index);
                let doc = obj.get("doc").and_then(Json::as_str).map(str::to_string);
                self.named.push(AvroNamed {
                    full_name: full,
                    doc,
                    kind: AvroNamedKind::Fixed(0),
                    props: props(&[
                        "name",
                        "namespace",
                        "doc",
                        "fields",
                        "symbols",
                        "size",
                        "default",
                        "aliases",
                    ]),
                });
                let kind = match ty {
                    "enum" => AvroNamedKind::Enum {
                        symbols: obj
                            .get("symbols")
                            .and_then(Json::as_array)
                            .ok_or_else(|| {
                                ConnectError::data("Invalid Avro schema: enum without symbols")
                            })?
                            .iter()
                            .filter_map(|s| s.as_str().map(str::to_string))
                            .collect(),
                        default: obj
                            .get("default")
                            .and_then(Json::as_str)
                            .map(str::to_string),
                    },
                    "fixed" => {
                        AvroNamedKind::Fixed(obj.get("size").and_then(Json::as_u64).ok_or_else(
                            || ConnectError::data("Invalid Avro schema: fixed without size"),
                        )? as usize)
                    }
                    _ => {
                        let mut fields = Vec::new();
                        for f in obj.get("fields").and_then(Json::as_array).ok_or_else(|| {
                            ConnectError::data("Invalid Avro schema: record without fields")
                        })? {
                            let fo = f.as_object().ok_or_else(|| {
                                ConnectError::data("Invalid Avro schema: a field is not an object")
                            })?;
                            let name = fo.get("name").and_then(Json::as_str).ok_or_else(|| {
                                ConnectError::data("Invalid Avro schema: a field without a name")
                            })?;
                            let fty = fo.get("type").ok_or_else(|| {
                                ConnectError::data(format!(
                                    "Invalid Avro schema: field {name} without a type"
                                ))
                            })?;
                            fields.push(AvroRecordField {
                                name: name.to_string(),
                                ty: self.parse(fty, own_space.as_deref())?,
                                doc: fo.get("doc").and_then(Json::as_str).map(str::to_string),
                                default: fo.get("default").cloned(),
                                props: fo
                                    .iter()
                                    .filter(|(k, _)| {
                                        !matches!(
                                            k.as_str(),
                                            "name"
                                                | "type"
                                                | "doc"
                                                | "default"
                                                | "order"
                                                | "aliases"
                                        )
                                    })
                                    .map(|(k, v)| (k.clone(), v.clone()))
                                    .collect(),
                            });
                        }
                        AvroNamedKind::Record(fields)
                    }
                };
                self.named[index].kind = kind;
                Ok(AvroType::Ref(index))
            }
            t if PRIMITIVES.contains(&t) => Ok(AvroType::Primitive {
                ty: t.to_string(),
                props: props(&[]),
            }),
            other => self.lookup(other, space),
        }
    }
}
