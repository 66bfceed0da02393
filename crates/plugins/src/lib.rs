//! Tributary's built-in plugins, under Apache Kafka Connect's class names:
//! - [`converters`]: `StringConverter`, `ByteArrayConverter`, `JsonConverter`,
//!   `SimpleHeaderConverter`.
//! - [`file`]: `FileStreamSourceConnector` / `FileStreamSinkConnector` and their tasks.

pub mod converters;
pub mod file;

use tributary_api::plugin::PluginSet;

/// Every built-in plugin.
pub fn builtin() -> PluginSet {
    let mut set = PluginSet::default();
    set.extend(converters::plugins());
    set.extend(file::plugins());
    set
}
