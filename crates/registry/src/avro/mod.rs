//! Avro in Confluent's wire format (`io.confluent.connect.avro.AvroConverter`): the schema
//! mapping of Confluent's `AvroData` ([`schema`]), the binary codec ([`data`]) and schema
//! compatibility ([`compat`]), as the [`Format`] of a [`RegistryConverter`].

pub mod compat;
pub mod data;
pub mod parsed;
pub mod schema;
pub mod to_connect;

use tributary_api::config::{ConfigDef, ConfigType};
use tributary_api::data::{Schema, SchemaRef, Value};
use tributary_api::{ConnectResult, Props};

use crate::config::{bool_key, int_key, KeyDoc};
use crate::converter::{Format, RegistryConverter};
use schema::{AvroDataConfig, AvroSchema, AvroType};

/// Confluent's `io.confluent.connect.avro.AvroConverter`.
pub type AvroConverter = RegistryConverter<AvroFormat>;

/// The Avro [`Format`]: `AvroDataConfig`'s settings.
pub struct AvroFormat {
    config: AvroDataConfig,
}

/// `AvroDataConfig`'s keys.
pub const AVRO_DATA_KEYS: &[KeyDoc] = &[
    (
        "connect.meta.data",
        ConfigType::Boolean,
        "true",
        "Keep Connect's metadata in Avro schemas.",
    ),
    (
        "enhanced.avro.schema.support",
        ConfigType::Boolean,
        "false",
        "Keep enums and full union names.",
    ),
    (
        "scrub.invalid.names",
        ConfigType::Boolean,
        "false",
        "Replace characters Avro names cannot hold.",
    ),
    (
        "allow.optional.map.keys",
        ConfigType::Boolean,
        "false",
        "Optional string map keys still make Avro maps.",
    ),
    (
        "flatten.singleton.unions",
        ConfigType::Boolean,
        "true",
        "A union of one type reads as the type.",
    ),
    (
        "discard.type.doc.default",
        ConfigType::Boolean,
        "false",
        "Do not keep type docs and defaults as parameters.",
    ),
];

impl Format for AvroFormat {
    type Parsed = AvroSchema;
    type Selector = ();
    const SCHEMA_TYPE: &'static str = "AVRO";
    const CLASS: &'static str = crate::AVRO_CONVERTER_CLASS;
    const DATA_NAME: &'static str = "Avro";

    fn configure(props: &Props) -> ConnectResult<Self> {
        Ok(AvroFormat {
            config: AvroDataConfig {
                connect_meta_data: bool_key(props, "connect.meta.data", true)?,
                enhanced_schema_support: bool_key(props, "enhanced.avro.schema.support", false)?,
                scrub_invalid_names: bool_key(props, "scrub.invalid.names", false)?,
                allow_optional_map_keys: bool_key(props, "allow.optional.map.keys", false)?,
                flatten_singleton_unions: bool_key(props, "flatten.singleton.unions", true)?,
                discard_type_doc_default: bool_key(props, "discard.type.doc.default", false)?,
                schemas_cache_size: int_key(props, "schemas.cache.config", 1000)?.max(1) as usize,
            },
        })
    }

    fn schema_text(&self, schema: &Schema) -> ConnectResult<String> {
        schema::from_connect_schema(&self.config, schema)
    }

    fn parse(&self, text: &str, references: &[String]) -> ConnectResult<AvroSchema> {
        AvroSchema::parse(text, references)
    }

    /// A named type's full name, else the type's name (`AvroSchema.name()`).
    fn record_name(avro: &AvroSchema) -> String {
        match &avro.root {
            AvroType::Ref(i) => avro.named(*i).full_name.clone(),
            AvroType::Primitive { ty, .. } => ty.clone(),
            AvroType::Array { .. } => "array".into(),
            AvroType::Map { .. } => "map".into(),
            AvroType::Union(_) => "union".into(),
        }
    }

    fn can_read(writer: &AvroSchema, reader: &AvroSchema) -> bool {
        compat::can_read(writer, reader)
    }

    fn select(data: &[u8]) -> ConnectResult<((), &[u8])> {
        Ok(((), data))
    }

    fn selected_name(avro: &AvroSchema, _: &()) -> ConnectResult<String> {
        Ok(Self::record_name(avro))
    }

    fn to_connect_schema(
        &self,
        avro: &AvroSchema,
        _: &(),
        version: Option<i32>,
    ) -> ConnectResult<SchemaRef> {
        schema::to_connect_schema(&self.config, avro, version)
    }

    fn encode(
        &self,
        avro: &AvroSchema,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        data::encode(avro, schema, value, out)
    }

    fn decode(
        &self,
        avro: &AvroSchema,
        _: &(),
        schema: &SchemaRef,
        bytes: &[u8],
    ) -> ConnectResult<Value> {
        data::decode(avro, schema, bytes)
    }

    fn cache_size(&self) -> usize {
        self.config.schemas_cache_size
    }

    fn serialize_failed(topic: &str) -> String {
        format!("Failed to serialize Avro data from topic {topic}: ")
    }

    fn deserialize_failed(topic: &str) -> String {
        format!("Failed to deserialize data for topic {topic} to Avro: ")
    }

    fn config_def() -> ConfigDef {
        crate::config::config_def(AVRO_DATA_KEYS, &[])
    }
}
