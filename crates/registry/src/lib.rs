//! Schema-registry converters for Tributary: Connect data in Confluent's wire format (magic
//! byte, schema id, data), with schemas kept in a registry speaking Confluent's REST API
//! (Confluent Schema Registry, or Apicurio Registry's `/apis/ccompat/v7`).
//!
//! - [`avro::AvroConverter`], under Confluent's class name
//!   `io.confluent.connect.avro.AvroConverter`, as key and value converter;
//! - [`json_schema::JsonSchemaConverter`], `io.confluent.connect.json.JsonSchemaConverter`;
//! - [`protobuf::ProtobufConverter`], `io.confluent.connect.protobuf.ProtobufConverter`;
//! - all three are a [`converter::RegistryConverter`] over their [`converter::Format`].
//! - [`client::RegistryClient`]: the registry client (failover over URLs, basic and bearer
//!   authentication, TLS, retries, caches).
//!
//! Settings are Confluent's (`schema.registry.url`, `auto.register.schemas`,
//! `value.subject.name.strategy`, …: [`config`]); one that Tributary does not implement is
//! refused naming the key.

pub mod avro;
pub mod client;
pub mod config;
pub mod converter;
pub mod json_schema;
pub mod protobuf;
pub mod subject;
pub mod wire;

use std::sync::Arc;

use tributary_api::converter::Converter;
use tributary_api::plugin::{ConverterPlugin, PluginSet};

/// The version the converters report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Confluent's Avro converter class.
pub const AVRO_CONVERTER_CLASS: &str = "io.confluent.connect.avro.AvroConverter";
/// Confluent's JSON Schema converter class.
pub const JSON_SCHEMA_CONVERTER_CLASS: &str = "io.confluent.connect.json.JsonSchemaConverter";

/// Confluent's Protobuf converter class.
pub const PROTOBUF_CONVERTER_CLASS: &str = "io.confluent.connect.protobuf.ProtobufConverter";

/// The converter plugins of this crate.
pub fn plugins() -> PluginSet {
    PluginSet {
        converters: vec![
            ConverterPlugin {
                class: AVRO_CONVERTER_CLASS,
                version: VERSION,
                new: Arc::new(|| Box::new(avro::AvroConverter::new()) as Box<dyn Converter>),
            },
            ConverterPlugin {
                class: JSON_SCHEMA_CONVERTER_CLASS,
                version: VERSION,
                new: Arc::new(|| {
                    Box::new(json_schema::JsonSchemaConverter::new()) as Box<dyn Converter>
                }),
            },
            ConverterPlugin {
                class: PROTOBUF_CONVERTER_CLASS,
                version: VERSION,
                new: Arc::new(|| {
                    Box::new(protobuf::ProtobufConverter::new()) as Box<dyn Converter>
                }),
            },
        ],
        ..PluginSet::default()
    }
}
