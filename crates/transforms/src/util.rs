//! What the transformations share: which part of a record they work on (Connect's `$Key` /
//! `$Value` nested classes), Connect's `Requirements` checks and `SchemaUtil` helpers with
//! their exact error messages, schemaless map access, and [`Settings`], the typed reader of a
//! transformation's `Props` (Connect's `SimpleConfig`).

use std::any::Any;
use std::collections::HashMap;

use tributary_api::config::{ConfigDef, Parsed, Validator};
use tributary_api::data::{Field, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};
use tributary_api::record::{SinkRecord, SourceRecord};
use tributary_api::transforms::ConnectRecord;
use tributary_api::{ConnectError, ConnectResult, Props};

/// The part of a record a `$Key` or `$Value` transformation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Part {
    /// The record key (`…$Key`).
    Key,
    /// The record value (`…$Value`).
    #[default]
    Value,
}

impl Part {
    /// The schema of this part, `None` for schemaless data (Connect's `operatingSchema`).
    pub fn schema<R: ConnectRecord>(self, record: &R) -> Option<&SchemaRef> {
        match self {
            Part::Key => record.key_schema(),
            Part::Value => record.value_schema(),
        }
    }

    /// The value of this part (Connect's `operatingValue`).
    pub fn value<R: ConnectRecord>(self, record: &R) -> &Value {
        match self {
            Part::Key => record.key(),
            Part::Value => record.value(),
        }
    }

    /// The record with this part replaced and everything else kept (Connect's `newRecord` of a
    /// `$Key` / `$Value` class), changed in place: the other part and the headers are moved,
    /// not copied.
    pub fn replace<R: ConnectRecord>(
        self,
        mut record: R,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> R {
        self.set(&mut record, schema, value);
        record
    }

    /// Replaces this part of `record` and its schema in place; returns the old value (so a
    /// transformation can take the part out with a [`Value::Null`] and put its result back).
    pub fn set<R: ConnectRecord>(
        self,
        record: &mut R,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> Value {
        match self {
            Part::Key => record.set_key(schema, value),
            Part::Value => record.set_value(schema, value),
        }
    }
}

/// [`Part`] at the type level, so one generic transformation type gives both Connect classes:
/// `MyTransform<KeyPart>` is `…$Key`, `MyTransform<ValuePart>` is `…$Value`, each with the
/// `Default` that [`tributary_api::transforms::TransformationPlugin::of`] needs.
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

/// What a transformation is doing, for Connect's `… for [purpose] …` error messages.
pub type Purpose = &'static str;

/// Connect's `Requirements.requireSchema`: the schema, or a [`ConnectError::Data`]
/// `Schema required for [purpose]`.
pub fn require_schema(schema: Option<&SchemaRef>, purpose: Purpose) -> ConnectResult<&SchemaRef> {
    schema.ok_or_else(|| ConnectError::data(format!("Schema required for [{purpose}]")))
}

/// Connect's `Requirements.requireMap`: the entries of a schemaless map value, or a
/// [`ConnectError::Data`] `Only Map objects supported in absence of schema for [purpose], found:
/// <Java class>` (`null` for a null value).
pub fn require_map(value: &Value, purpose: Purpose) -> ConnectResult<&[(Value, Value)]> {
    match value {
        Value::Map(entries) => Ok(entries),
        other => Err(ConnectError::data(format!(
            "Only Map objects supported in absence of schema for [{purpose}], found: {}",
            other.kind_name()
        ))),
    }
}

/// Connect's `Requirements.requireMapOrNull`: `None` for null, otherwise as [`require_map`].
pub fn require_map_or_null(
    value: &Value,
    purpose: Purpose,
) -> ConnectResult<Option<&[(Value, Value)]>> {
    if value.is_null() {
        return Ok(None);
    }
    require_map(value, purpose).map(Some)
}

/// Connect's `Requirements.requireStruct`: the struct, or a [`ConnectError::Data`] `Only Struct
/// objects supported for [purpose], found: <Java class>` (`null` for a null value).
pub fn require_struct(value: &Value, purpose: Purpose) -> ConnectResult<&Struct> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "Only Struct objects supported for [{purpose}], found: {}",
            other.kind_name()
        ))),
    }
}

/// Connect's `Requirements.requireStructOrNull`: `None` for null, otherwise as
/// [`require_struct`].
pub fn require_struct_or_null(value: &Value, purpose: Purpose) -> ConnectResult<Option<&Struct>> {
    if value.is_null() {
        return Ok(None);
    }
    require_struct(value, purpose).map(Some)
}

/// Connect's `Requirements.requireSinkRecord`: the record as a [`SinkRecord`], or a
/// [`ConnectError::Data`] `Only SinkRecord supported for [purpose], found:
/// org.apache.kafka.connect.source.SourceRecord`.
pub fn require_sink_record<R: ConnectRecord>(
    record: &R,
    purpose: Purpose,
) -> ConnectResult<&SinkRecord> {
    let any: &dyn Any = record;
    any.downcast_ref::<SinkRecord>().ok_or_else(|| {
        let class = if any.is::<SourceRecord>() {
            "org.apache.kafka.connect.source.SourceRecord"
        } else {
            std::any::type_name::<R>()
        };
        ConnectError::data(format!(
            "Only SinkRecord supported for [{purpose}], found: {class}"
        ))
    })
}

/// Connect's `SchemaUtil.copySchemaBasics(source, builder)`: `builder` with the name, version,
/// doc and parameters of `source` (type, optionality, default and fields are not copied).
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

/// Connect's one-argument `SchemaUtil.copySchemaBasics(source)`: a builder of the same type
/// (an array keeps its element schema; a map, as in Connect, gets no key or value schema) with
/// the basics of `source` copied by [`copy_schema_basics`].
pub fn copy_schema_basics_of(source: &Schema) -> SchemaBuilder {
    let builder = match (source.schema_type, &source.value_schema) {
        (SchemaType::Array, Some(elements)) => SchemaBuilder::array(elements.clone()),
        (t, _) => SchemaBuilder::new(t),
    };
    copy_schema_basics(source, builder)
}

/// The value of `field` in `s`: with the field schema's default in place of null when
/// `replace_null_with_default` (Connect's `Struct.get(Field)`), the raw value otherwise
/// (`Struct.getWithoutDefault`). The setting `replace.null.with.default` (KIP-1040) chooses.
pub fn field_value(s: &Struct, field: &Field, replace_null_with_default: bool) -> Value {
    let raw = s.get_by_index(field.index);
    if raw.is_null() && replace_null_with_default {
        if let Some(default) = &field.schema.default_value {
            return default.clone();
        }
    }
    raw.clone()
}

/// The value under the string key `key` of a schemaless map (Java's `map.get(key)`), `None`
/// when absent.
pub fn map_get<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// Java's `map.put(key, value)` on a schemaless map: replaces the value of an existing string
/// key in place, appends a new entry otherwise.
pub fn map_put(entries: &mut Vec<(Value, Value)>, key: &str, value: Value) {
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => entries.push((Value::String(key.to_string()), value)),
    }
}

/// Java's `List.toString()` of a list of strings: `[a, b]`, as Connect's configuration errors
/// show list values.
pub fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Connect's `new ConfigException(name, value, message)`: `Invalid value <value> for
/// configuration <name>: <message>`.
pub fn invalid_config(name: &str, value: &str, message: &str) -> ConnectError {
    ConnectError::config(format!(
        "Invalid value {value} for configuration {name}: {message}"
    ))
}

/// Connect's `NonEmptyListValidator` for configuration: an empty list fails with
/// `Invalid value [] for configuration <key>: Empty list`.
pub fn non_empty_list() -> Validator {
    Validator::Custom(std::sync::Arc::new(|v: &Parsed| match v {
        Parsed::List(items) if items.is_empty() => Err("Empty list".into()),
        _ => Ok(()),
    }))
}

/// The check of [`non_empty_list`] with Connect's exact message, for [`Settings::parse_with`].
pub fn check_non_empty_lists(key: &str, v: &Parsed) -> ConnectResult<()> {
    match v {
        Parsed::List(items) if items.is_empty() => Err(invalid_config(key, "[]", "Empty list")),
        _ => Ok(()),
    }
}

/// A check of one parsed setting, by key (see [`Settings::parse_with`]).
pub type KeyCheck<'a> = dyn Fn(&str, &Parsed) -> ConnectResult<()> + 'a;

/// A transformation's parsed settings (Connect's `SimpleConfig`): `Props` read through the
/// transformation's [`ConfigDef`], with defaults applied.
///
/// [`Settings::parse`] checks every key in definition order and fails on the first problem
/// with Connect's message: a missing required key, a value of the wrong type, or a built-in
/// validator ([`Validator::Range`], [`Validator::OneOf`], …) rejecting it. Keys the definition
/// does not list are ignored, as in Connect.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: HashMap<String, Parsed>,
}

impl Settings {
    /// Parses `props` with `def`; [`Validator::Custom`] validators run too (their message is
    /// prefixed with `Invalid value <v> for configuration <k>: `).
    pub fn parse(def: &ConfigDef, props: &Props) -> ConnectResult<Settings> {
        Self::parse_inner(def, props, None)
    }

    /// Like [`Settings::parse`], but instead of the definition's [`Validator::Custom`] and
    /// [`Validator::CustomMessage`] validators, calls `check(key, value)` for each key right after that key is parsed, so a
    /// transformation can fail with Connect's exact message (some of Connect's validators throw
    /// a `ConfigException` with no key/value prefix).
    pub fn parse_with(
        def: &ConfigDef,
        props: &Props,
        check: impl Fn(&str, &Parsed) -> ConnectResult<()>,
    ) -> ConnectResult<Settings> {
        Self::parse_inner(def, props, Some(&check))
    }

    fn parse_inner(
        def: &ConfigDef,
        props: &Props,
        check: Option<&KeyCheck<'_>>,
    ) -> ConnectResult<Settings> {
        let mut values = HashMap::new();
        for key in &def.keys {
            let mut single = key.clone();
            if check.is_some()
                && matches!(
                    single.validator,
                    Some(Validator::Custom(_) | Validator::CustomMessage(_))
                )
            {
                single.validator = None;
            }
            let single_def = ConfigDef {
                keys: vec![single.clone()],
            };
            if let Some(cv) = single_def.validate(props).into_iter().next() {
                if let Some(e) = cv.errors.into_iter().next() {
                    return Err(ConnectError::config(e));
                }
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

    /// A STRING (or CLASS / PASSWORD) setting; `None` when null.
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

    /// An INT setting; `None` when null.
    pub fn int(&self, key: &str) -> Option<i32> {
        match self.get(key) {
            Parsed::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// A LONG setting; `None` when null.
    pub fn long(&self, key: &str) -> Option<i64> {
        match self.get(key) {
            Parsed::Long(v) => Some(*v),
            _ => None,
        }
    }

    /// A LIST setting; empty when null.
    pub fn list(&self, key: &str) -> &[String] {
        match self.get(key) {
            Parsed::List(items) => items,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::config::{ConfigType, Importance};
    use tributary_api::record::{SinkRecord, TimestampType};

    #[test]
    fn requirements_name_the_purpose_and_the_java_class() {
        let err = require_struct(&Value::from("x"), "field insertion").unwrap_err();
        assert_eq!(
            err,
            ConnectError::data(
                "Only Struct objects supported for [field insertion], found: java.lang.String"
            )
        );
        let err = require_map(&Value::Null, "flattening").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [flattening], found: null"
        );
        assert_eq!(require_struct_or_null(&Value::Null, "p"), Ok(None));
        assert_eq!(require_map_or_null(&Value::Null, "p"), Ok(None));
        assert_eq!(
            require_schema(None, "updating schema metadata")
                .unwrap_err()
                .to_string(),
            "Schema required for [updating schema metadata]"
        );
    }

    #[test]
    fn sink_records_are_recognised() {
        let sink = SinkRecord::new(
            "t",
            0,
            None,
            Value::Null,
            None,
            Value::Null,
            7,
            None,
            TimestampType::NoTimestampType,
            Default::default(),
        );
        assert_eq!(require_sink_record(&sink, "p").unwrap().kafka_offset, 7);
        let source = SourceRecord::new(
            serde_json::Map::new(),
            serde_json::Map::new(),
            "t",
            None,
            Value::Null,
        );
        assert_eq!(
            require_sink_record(&source, "field insertion")
                .unwrap_err()
                .to_string(),
            "Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord"
        );
    }

    #[test]
    fn schema_basics_are_copied_but_not_type_or_optionality() {
        let src = SchemaBuilder::int32()
            .name("n")
            .version(3)
            .doc("d")
            .parameter("a", "b")
            .optional()
            .build();
        let copy = copy_schema_basics(&src, SchemaBuilder::struct_()).build();
        assert_eq!(copy.schema_type, SchemaType::Struct);
        assert_eq!(copy.name.as_deref(), Some("n"));
        assert_eq!(copy.version, Some(3));
        assert_eq!(copy.doc.as_deref(), Some("d"));
        assert_eq!(copy.parameters.as_ref().unwrap()["a"], "b");
        assert!(!copy.optional);
        let arr = SchemaBuilder::array(Schema::string_schema())
            .name("x")
            .build();
        let copy = copy_schema_basics_of(&arr).build();
        assert_eq!(copy.value_schema, Some(Schema::string_schema()));
        assert_eq!(copy.name.as_deref(), Some("x"));
    }

    #[test]
    fn maps_are_updated_in_place() {
        let mut m = vec![(Value::from("a"), Value::Int32(1))];
        map_put(&mut m, "a", Value::Int32(2));
        map_put(&mut m, "b", Value::Int32(3));
        assert_eq!(
            m,
            vec![
                (Value::from("a"), Value::Int32(2)),
                (Value::from("b"), Value::Int32(3))
            ]
        );
        assert_eq!(map_get(&m, "b"), Some(&Value::Int32(3)));
        assert_eq!(map_get(&m, "c"), None);
    }

    #[test]
    fn field_value_applies_the_default_only_when_asked() {
        let schema = SchemaBuilder::struct_()
            .field(
                "f",
                SchemaBuilder::int32()
                    .optional()
                    .default_value(Value::Int32(5))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let s = Struct::new(schema.clone()).unwrap();
        let f = &schema.fields[0];
        assert_eq!(field_value(&s, f, true), Value::Int32(5));
        assert_eq!(field_value(&s, f, false), Value::Null);
    }

    fn def() -> ConfigDef {
        ConfigDef::new()
            .define("name", ConfigType::String, None, None, Importance::High, "")
            .define(
                "flag",
                ConfigType::Boolean,
                Some(Some("true")),
                None,
                Importance::Low,
                "",
            )
            .define(
                "items",
                ConfigType::List,
                Some(Some("")),
                Some(Validator::Custom(std::sync::Arc::new(
                    |_| Err("bad".into()),
                ))),
                Importance::Low,
                "",
            )
    }

    #[test]
    fn settings_read_typed_values_and_report_connects_messages() {
        let mut props = Props::new();
        assert_eq!(
            Settings::parse(&def(), &props).unwrap_err().to_string(),
            "Missing required configuration \"name\" which has no default value."
        );
        props.insert("name".into(), "n".into());
        props.insert("flag".into(), "yes".into());
        assert_eq!(
            Settings::parse(&def(), &props).unwrap_err().to_string(),
            "Invalid value yes for configuration flag: Expected value to be either true or false"
        );
        props.insert("flag".into(), "FALSE".into());
        assert_eq!(
            Settings::parse(&def(), &props).unwrap_err().to_string(),
            "Invalid value  for configuration items: bad"
        );
        let s = Settings::parse_with(&def(), &props, |_, _| Ok(())).unwrap();
        assert_eq!(s.string("name"), Some("n"));
        assert!(!s.boolean("flag"));
        assert!(s.list("items").is_empty());
        let err = Settings::parse_with(&def(), &props, |k, _| {
            if k == "items" {
                Err(ConnectError::config("exact"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "exact");
    }
}
