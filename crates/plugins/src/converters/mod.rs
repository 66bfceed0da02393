//! Tributary's built-in converters, under Kafka Connect's class names:
//!
//! - [`string::StringConverter`], `org.apache.kafka.connect.storage.StringConverter`
//! - [`byte_array::ByteArrayConverter`], `org.apache.kafka.connect.converters.ByteArrayConverter`
//! - [`json::JsonConverter`], `org.apache.kafka.connect.json.JsonConverter` (also a header
//!   converter)
//! - [`header::SimpleHeaderConverter`], `org.apache.kafka.connect.storage.SimpleHeaderConverter`
//! - [`primitive::NumberConverter`] as `ShortConverter`, `IntegerConverter`, `LongConverter`,
//!   `FloatConverter` and `DoubleConverter`, and [`primitive::BooleanConverter`] (KIP-959), all
//!   in `org.apache.kafka.connect.converters` (also header converters)
//!
//! Their output is byte-compatible with Kafka Connect's; `conformance/java/JsonConverterVectors.java`
//! produced the golden vectors the tests compare against.

pub mod byte_array;
pub mod header;
pub mod java_fmt;
/// Connect's `JsonConverter`, from its own crate (`connect-json`).
pub use tributary_json as json;
pub mod primitive;
pub mod string;

pub use tributary_api::converter::{converter_config_def, with_converter_type};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::plugin::{ConverterPlugin, HeaderConverterPlugin, PluginSet};

/// The version the built-in converters report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The converter plugins: String, ByteArray, Json and the primitive converters;
/// SimpleHeaderConverter and JsonConverter (plus StringConverter, ByteArrayConverter and the
/// primitive converters, which Java also lets be used for headers) as header converters.
pub fn plugins() -> PluginSet {
    let mut set = PluginSet {
        converters: vec![
            ConverterPlugin {
                class: "org.apache.kafka.connect.storage.StringConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(string::StringConverter::new()) as Box<dyn Converter>
                }),
            },
            ConverterPlugin {
                class: "org.apache.kafka.connect.converters.ByteArrayConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(byte_array::ByteArrayConverter::new()) as Box<dyn Converter>
                }),
            },
            ConverterPlugin {
                class: "org.apache.kafka.connect.json.JsonConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(json::JsonConverter::new()) as Box<dyn Converter>
                }),
            },
        ],
        header_converters: vec![
            HeaderConverterPlugin {
                class: "org.apache.kafka.connect.storage.SimpleHeaderConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(header::SimpleHeaderConverter::new()) as Box<dyn HeaderConverter>
                }),
            },
            HeaderConverterPlugin {
                class: "org.apache.kafka.connect.json.JsonConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(json::JsonConverter::new()) as Box<dyn HeaderConverter>
                }),
            },
            HeaderConverterPlugin {
                class: "org.apache.kafka.connect.storage.StringConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(string::StringConverter::new()) as Box<dyn HeaderConverter>
                }),
            },
            HeaderConverterPlugin {
                class: "org.apache.kafka.connect.converters.ByteArrayConverter",
                version: VERSION,
                new: std::sync::Arc::new(|| {
                    Box::new(byte_array::ByteArrayConverter::new()) as Box<dyn HeaderConverter>
                }),
            },
        ],
        ..PluginSet::default()
    };
    for kind in [
        primitive::NumberKind::Short,
        primitive::NumberKind::Integer,
        primitive::NumberKind::Long,
        primitive::NumberKind::Float,
        primitive::NumberKind::Double,
    ] {
        set.converters.push(ConverterPlugin {
            class: kind.class(),
            version: VERSION,
            new: std::sync::Arc::new(move || {
                Box::new(primitive::NumberConverter::new(kind)) as Box<dyn Converter>
            }),
        });
        set.header_converters.push(HeaderConverterPlugin {
            class: kind.class(),
            version: VERSION,
            new: std::sync::Arc::new(move || {
                Box::new(primitive::NumberConverter::new(kind)) as Box<dyn HeaderConverter>
            }),
        });
    }
    set.converters.push(ConverterPlugin {
        class: primitive::BOOLEAN_CONVERTER,
        version: VERSION,
        new: std::sync::Arc::new(|| {
            Box::new(primitive::BooleanConverter::new()) as Box<dyn Converter>
        }),
    });
    set.header_converters.push(HeaderConverterPlugin {
        class: primitive::BOOLEAN_CONVERTER,
        version: VERSION,
        new: std::sync::Arc::new(|| {
            Box::new(primitive::BooleanConverter::new()) as Box<dyn HeaderConverter>
        }),
    });
    set
}
