//! Tributary's built-in plugins, under Apache Kafka Connect's class names:
//! - [`converters`]: `StringConverter`, `ByteArrayConverter`, `JsonConverter`,
//!   `SimpleHeaderConverter`.
//! - [`file`]: `FileStreamSourceConnector` / `FileStreamSinkConnector` and their tasks.
//! - [`testing`]: connectors for testing runtimes: Kafka's `VerifiableSource/Sink` and
//!   `MockSource/Sink` connectors (`org.apache.kafka.connect.tools`) and Tributary's
//!   `FlakySourceConnector`.
//!
//! [`builtin`] also lists the transformations and predicates of `tributary-transforms`.

pub mod converters;
pub mod file;
pub mod testing;

use tributary_api::plugin::PluginSet;

/// Every built-in plugin.
pub fn builtin() -> PluginSet {
    let mut set = PluginSet::default();
    set.extend(converters::plugins());
    set.extend(file::plugins());
    set.extend(testing::plugins());
    set.extend(tributary_transforms::plugins());
    set
}
