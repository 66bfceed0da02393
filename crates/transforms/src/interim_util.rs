//! Helpers shared by the header, router, timestamp and predicate modules that belong in
//! [`crate::util`] (Connect's `Requirements` checks, `SchemaUtil.copySchemaBasics`, the part
//! of a record as a type, struct and map access, and the typed settings reader). They carry
//! the same names and signatures as the `util` versions, so that switching the imports to
//! `crate::util` and deleting this module is all a merge needs.

use std::collections::HashMap;

use tributary_api::config::{ConfigDef, Parsed, Validator};
use tributary_api::data::{Field, Schema, SchemaBuilder, Struct, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::Part;

/// [`Part`] at the type level: `MyTransform<KeyPart>` is `…$Key`, `MyTransform<ValuePart>` is
/// `…$Value`, each with the `Default` that `TransformationPlugin::of` needs.
pub trait PartMarker: Send + Sync + 'static {
    /// The part this marker stands for.
    const PART: Part;
}

/// The record key (`…$Key`), as a type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyPart;

/// The record value (`…$Value`), as a type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValuePart;

impl PartMarker for KeyPart {
    const PART: Part = Part::Key;
}

impl PartMarker for ValuePart {
    const PART: Part = Part::Value;
}

/// What a transformation is doing, for Connect's "… for [purpose] …" error messages.
pub type Purpose = &'static str;

/// Connect's `Requirements.requireMap`: the entries, or `Only Map objects supported in absence
/// of schema for [purpose], found: <Java class>`.
pub fn require_map(value: &Value, purpose: Purpose) -> ConnectResult<&[(Value, Value)]> {
    match value {
        Value::Map(entries) => Ok(entries),
        other => Err(ConnectError::data(format!(
            "Only Map objects supported in absence of schema for [{purpose}], found: {}",
            other.kind_name()
        ))),
    }
}

/// Connect's `Requirements.requireStruct`: the struct, or `Only Struct objects supported for
/// [purpose], found: <Java class>`.
pub fn require_struct(value: &Value, purpose: Purpose) -> ConnectResult<&Struct> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "Only Struct objects supported for [{purpose}], found: {}",
            other.kind_name()
        ))),
    }
}

/// Connect's `Requirements.requireStructOrNull`: `None` for null, else as [`require_struct`].
pub fn require_struct_or_null(value: &Value, purpose: Purpose) -> ConnectResult<Option<&Struct>> {
    if value.is_null() {
        return Ok(None);
    }
    require_struct(value, purpose).map(Some)
}

/// Connect's `SchemaUtil.copySchemaBasics(source, builder)`: name, version, doc and
/// parameters of `source` on `builder`.
pub fn copy_schema_basics(source: &Schema, mut builder: SchemaBuilder) -> SchemaBuilder {
    if let Some(name) = &source.name {
        builder = builder.name(name.clone());
    }
    if let Some(version) = source.version {
        builder = builder.version(version);
    }
    if let Some(doc) = &source.doc {
        builder = builder.doc(doc.clone());
    }
    if let Some(params) = &source.parameters {
        for (k, v) in params {
            builder = builder.parameter(k.clone(), v.clone());
        }
    }
    builder
}

/// The value of `field` in `s`, its schema's default in place of null when
/// `replace_null_with_default` (Connect's `Struct.get` / `getWithoutDefault`).
pub fn field_value(s: &Struct, field: &Field, replace_null_with_default: bool) -> Value {
    let raw = s.get_by_index(field.index);
    if raw.is_null() && replace_null_with_default {
        if let Some(default) = &field.schema.default_value {
            return default.clone();
        }
    }
    raw.clone()
}

/// The value under the string key `key` of a schemaless map (Java's `map.get`).
pub fn map_get<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// Java's `map.put(key, value)` on a schemaless map: replaces in place or appends.
pub fn map_put(entries: &mut Vec<(Value, Value)>, key: &str, value: Value) {
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => entries.push((Value::String(key.to_string()), value)),
    }
}

/// Connect's `new ConfigException(name, value, message)`.
pub fn invalid_config(name: &str, value: &str, message: &str) -> ConnectError {
    ConnectError::config(format!(
        "Invalid value {value} for configuration {name}: {message}"
    ))
}

/// Connect's `NonEmptyListValidator` in a [`ConfigDef`].
pub fn non_empty_list() -> Validator {
    Validator::Custom(std::sync::Arc::new(|v: &Parsed| match v {
        Parsed::List(items) if items.is_empty() => Err("Empty list".into()),
        _ => Ok(()),
    }))
}

/// The check of [`non_empty_list`] with Connect's exact message (`Invalid value [] for
/// configuration <key>: Empty list`), for [`Settings::parse_with`].
pub fn check_non_empty_lists(key: &str, v: &Parsed) -> ConnectResult<()> {
    match v {
        Parsed::List(items) if items.is_empty() => Err(invalid_config(key, "[]", "Empty list")),
        _ => Ok(()),
    }
}

/// A transformation's parsed settings (Connect's `SimpleConfig`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: HashMap<String, Parsed>,
}

impl Settings {
    /// Parses `props` with `def`, failing on the first problem with Connect's message.
    pub fn parse(def: &ConfigDef, props: &Props) -> ConnectResult<Settings> {
        Self::parse_inner(def, props, None)
    }

    /// Like [`Settings::parse`], with `check(key, value)` in place of the definition's custom
    /// validators, right after each key is parsed.
    pub fn parse_with(
        def: &ConfigDef,
        props: &Props,
        check: impl Fn(&str, &Parsed) -> ConnectResult<()>,
    ) -> ConnectResult<Settings> {
        Self::parse_inner(def, props, Some(&check))
    }

    #[allow(clippy::type_complexity)]
    fn parse_inner(
        def: &ConfigDef,
        props: &Props,
        check: Option<&dyn Fn(&str, &Parsed) -> ConnectResult<()>>,
    ) -> ConnectResult<Settings> {
        let mut values = HashMap::new();
        for key in &def.keys {
            let mut single = key.clone();
            if check.is_some() && matches!(single.validator, Some(Validator::Custom(_))) {
                single.validator = None;
            }
            let single_def = ConfigDef {
                keys: vec![single.clone()],
            };
            if let Some(e) = single_def
                .validate(props)
                .into_iter()
                .next()
                .and_then(|cv| cv.errors.into_iter().next())
            {
                return Err(ConnectError::config(e));
            }
            let raw = props
                .get(&key.name)
                .map(String::as_str)
                .or(key.default.as_ref().and_then(|d| d.as_deref()));
            let parsed = ConfigDef::parse_value(&single, raw).map_err(ConnectError::config)?;
            if let Some(check) = check {
                check(&key.name, &parsed)?;
            }
            values.insert(key.name.clone(), parsed);
        }
        Ok(Settings { values })
    }

    /// The parsed value of `key` ([`Parsed::Null`] for an undefined key).
    pub fn get(&self, key: &str) -> &Parsed {
        self.values.get(key).unwrap_or(&Parsed::Null)
    }

    /// A STRING setting; `None` when null.
    pub fn string(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Parsed::String(s) => Some(s),
            _ => None,
        }
    }

    /// A BOOLEAN setting; `false` when null.
    pub fn boolean(&self, key: &str) -> bool {
        matches!(self.get(key), Parsed::Boolean(true))
    }

    /// A LIST setting; empty when null.
    pub fn list(&self, key: &str) -> &[String] {
        match self.get(key) {
            Parsed::List(items) => items,
            _ => &[],
        }
    }
}
