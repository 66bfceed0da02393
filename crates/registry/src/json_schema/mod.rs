//! JSON Schema in Confluent's wire format (`io.confluent.connect.json.JsonSchemaConverter`): the
//! schema mapping of Confluent's `JsonSchemaData` ([`schema`]) and the JSON text of values
//! ([`data`]), as the [`Format`] of a [`RegistryConverter`].

pub mod data;
pub mod schema;

use serde_json::Value as Json;
use tributary_api::config::{ConfigDef, ConfigType};
use tributary_api::data::{Schema, SchemaRef, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::config::{bool_key, get, int_key, KeyDoc};
use crate::converter::{Format, RegistryConverter};
use data::JsonDataConfig;

/// Confluent's `io.confluent.connect.json.JsonSchemaConverter`.
pub type JsonSchemaConverter = RegistryConverter<JsonSchemaFormat>;

/// The JSON Schema [`Format`]: `JsonSchemaDataConfig`'s settings.
pub struct JsonSchemaFormat {
    config: JsonDataConfig,
}

/// `JsonSchemaDataConfig`'s keys Tributary implements.
pub const JSON_SCHEMA_DATA_KEYS: &[KeyDoc] = &[
    (
        "decimal.format",
        ConfigType::String,
        "BASE64",
        "BASE64 or NUMERIC.",
    ),
    (
        "object.additional.properties",
        ConfigType::Boolean,
        "true",
        "Whether objects allow other properties.",
    ),
    (
        "use.optional.for.nonrequired",
        ConfigType::Boolean,
        "false",
        "Properties not required are optional.",
    ),
    (
        "flatten.singleton.unions",
        ConfigType::Boolean,
        "true",
        "A oneOf of one schema reads as the schema.",
    ),
];

/// `JsonSchemaDataConfig` and serializer keys Tributary does not implement, with their default
/// (accepted when set to it).
const NOT_IMPLEMENTED: &[(&str, &str)] = &[
    ("json.fail.invalid.schema", "false"),
    ("json.oneof.for.nullables", "true"),
    ("json.write.dates.iso8601", "false"),
    ("json.indent.output", "false"),
    ("json.default.property.inclusion", ""),
    ("json.schema.spec.version", "draft_7"),
    ("ignore.modern.dialects", "false"),
    ("preserve.additional.properties", "false"),
    ("json.value.type", ""),
    ("json.key.type", ""),
];

impl Format for JsonSchemaFormat {
    type Parsed = Json;
    type Selector = ();
    const SCHEMA_TYPE: &'static str = "JSON";
    const CLASS: &'static str = crate::JSON_SCHEMA_CONVERTER_CLASS;
    const DATA_NAME: &'static str = "Json";
    const NULL_NEEDS_OPTIONAL: bool = false;

    fn configure(props: &Props) -> ConnectResult<Self> {
        for (key, default) in NOT_IMPLEMENTED {
            if let Some(v) = get(props, key).filter(|v| !v.is_empty()) {
                if !v.eq_ignore_ascii_case(default) {
                    return Err(ConnectError::config(format!(
                        "Invalid value {v} for configuration {key}: not implemented by Tributary's \
                         JsonSchemaConverter (only the default, {}, is supported)",
                        if default.is_empty() { "unset" } else { default }
                    )));
                }
            }
        }
        let decimal_numeric = match get(props, "decimal.format").unwrap_or("BASE64") {
            f if f.eq_ignore_ascii_case("BASE64") || f.is_empty() => false,
            f if f.eq_ignore_ascii_case("NUMERIC") => true,
            other => {
                return Err(ConnectError::config(format!(
                    "Invalid value {other} for configuration decimal.format: String must be one \
                     of (case insensitive): NUMERIC, BASE64"
                )))
            }
        };
        Ok(JsonSchemaFormat {
            config: JsonDataConfig {
                decimal_numeric,
                allow_additional_properties: bool_key(props, "object.additional.properties", true)?,
                use_optional_for_non_required: bool_key(
                    props,
                    "use.optional.for.nonrequired",
                    false,
                )?,
                flatten_singleton_unions: bool_key(props, "flatten.singleton.unions", true)?,
                schemas_cache_size: int_key(props, "schemas.cache.config", 1000)?.max(1) as usize,
            },
        })
    }

    fn schema_text(&self, schema: &Schema) -> ConnectResult<String> {
        schema::from_connect_schema(&self.config, schema)
    }

    fn parse(&self, text: &str, references: &[String]) -> ConnectResult<Json> {
        if !references.is_empty() {
            return Err(ConnectError::data(
                "JSON Schemas with references to other subjects are not supported by Tributary's \
                 JsonSchemaConverter",
            ));
        }
        serde_json::from_str(text)
            .map_err(|e| ConnectError::data(format!("Invalid JSON Schema: {e}")))
    }

    fn record_name(parsed: &Json) -> String {
        schema::record_name(parsed)
    }

    /// Whether `reader` accepts what `writer` describes: the same type, objects whose shared
    /// properties are readable, arrays of readable items, a `oneOf` with a branch that reads.
    fn can_read(writer: &Json, reader: &Json) -> bool {
        if writer == reader {
            return true;
        }
        let branches = |j: &Json| {
            j.get("oneOf")
                .or_else(|| j.get("anyOf"))
                .and_then(Json::as_array)
                .cloned()
        };
        if let Some(rb) = branches(reader) {
            return match branches(writer) {
                Some(wb) => wb.iter().all(|w| rb.iter().any(|r| Self::can_read(w, r))),
                None => rb.iter().any(|r| Self::can_read(writer, r)),
            };
        }
        let ty = |j: &Json| j.get("type").cloned();
        if ty(writer) != ty(reader) {
            return false;
        }
        match (writer.get("properties"), reader.get("properties")) {
            (Some(Json::Object(w)), Some(Json::Object(r))) => r
                .iter()
                .all(|(k, rv)| w.get(k).is_none_or(|wv| Self::can_read(wv, rv))),
            _ => match (writer.get("items"), reader.get("items")) {
                (Some(w), Some(r)) => Self::can_read(w, r),
                _ => true,
            },
        }
    }

    fn select(data: &[u8]) -> ConnectResult<((), &[u8])> {
        Ok(((), data))
    }

    fn selected_name(parsed: &Json, _: &()) -> ConnectResult<String> {
        Ok(Self::record_name(parsed))
    }

    fn to_connect_schema(
        &self,
        parsed: &Json,
        _: &(),
        version: Option<i32>,
    ) -> ConnectResult<SchemaRef> {
        schema::to_connect_schema(&self.config, parsed, version)
    }

    fn encode(
        &self,
        _parsed: &Json,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        if !data::write_value(&self.config, Some(schema), value, out)? {
            out.extend_from_slice(b"null");
        }
        Ok(())
    }

    fn decode(
        &self,
        _parsed: &Json,
        _: &(),
        schema: &SchemaRef,
        bytes: &[u8],
    ) -> ConnectResult<Value> {
        let json: Json = serde_json::from_slice(bytes)
            .map_err(|e| ConnectError::data(format!("Invalid JSON: {e}")))?;
        data::read_value(&self.config, Some(schema), Some(&json))
    }

    fn cache_size(&self) -> usize {
        self.config.schemas_cache_size
    }

    fn serialize_failed(topic: &str) -> String {
        format!("Converting Kafka Connect data to byte[] failed due to serialization error of topic {topic}: ")
    }

    fn deserialize_failed(topic: &str) -> String {
        format!("Converting byte[] to Kafka Connect data failed due to serialization error of topic {topic}: ")
    }

    fn config_def() -> ConfigDef {
        crate::config::config_def(JSON_SCHEMA_DATA_KEYS, NOT_IMPLEMENTED)
    }
}
