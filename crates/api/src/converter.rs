//! The [`Converter`] and [`HeaderConverter`] traits (Connect's `Converter`, `HeaderConverter`):
//! between Connect's data model and the bytes of Kafka record keys, values and headers.

use crate::config::ConfigDef;
use crate::data::{SchemaAndValue, SchemaRef, Value};
use crate::error::ConnectResult;
use crate::Props;

/// A record's Kafka headers as bytes, in order: key and value (`None` for a null value).
pub type RecordHeaders = Vec<(String, Option<Vec<u8>>)>;

/// Converts keys or values between Connect data and bytes.
///
/// Configured once with its own settings (the `key.converter.` / `value.converter.` prefix
/// already stripped) and whether it converts keys. `None` bytes stand for a Kafka null.
pub trait Converter: Send + Sync {
    /// Hands the converter its own metrics (KIP-877's `Monitorable.withPluginMetrics`), after
    /// `configure`, tagged `connector`, `task` and `converter=key|value`; the default ignores
    /// them.
    fn with_plugin_metrics(&mut self, _metrics: crate::metrics::PluginMetrics) {}
    /// Applies the converter's settings. Errors name the offending key.
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()>;
    /// Connect data to bytes (`fromConnectData`). Errors are [`crate::ConnectError::Data`].
    // Named after Connect's `fromConnectData`; a converter method, not a constructor.
    #[allow(clippy::wrong_self_convention)]
    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>>;
    /// [`Converter::from_connect_data`] for a value the caller no longer needs: a converter
    /// may reuse the value's buffer (e.g. a UTF-8 string's bytes) instead of copying it. The
    /// result must equal `from_connect_data(topic, schema, &value)`; the default delegates to
    /// it.
    // Named after Connect's `fromConnectData`; a converter method, not a constructor.
    #[allow(clippy::wrong_self_convention)]
    fn from_connect_data_owned(
        &self,
        topic: &str,
        schema: Option<&SchemaRef>,
        value: Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.from_connect_data(topic, schema, &value)
    }
    /// Bytes to Connect data (`toConnectData`). Errors are [`crate::ConnectError::Data`].
    fn to_connect_data(&self, topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue>;
    /// Whether the converter reads or writes the record's Kafka headers (Connect's
    /// `fromConnectData(topic, headers, schema, value)` / `toConnectData(topic, headers,
    /// value)`): the runtime then calls [`Converter::from_connect_data_with_headers`] and
    /// [`Converter::to_connect_data_with_headers`] instead. Default false.
    fn uses_headers(&self) -> bool {
        false
    }
    /// Whether a call may block its thread (I/O such as a schema registry's HTTP, a JVM
    /// call): then an async task's records are converted off the worker's runtime (issue #43).
    /// Default true; a converter doing pure computation says false.
    fn may_block(&self) -> bool {
        true
    }
    /// [`Converter::from_connect_data`] with the record's Kafka headers as converted so far
    /// (the header converter runs first, as in Connect), which the converter may change (e.g.
    /// add a schema id header). The default ignores them.
    // Named after Connect's `fromConnectData`; a converter method, not a constructor.
    #[allow(clippy::wrong_self_convention)]
    fn from_connect_data_with_headers(
        &self,
        topic: &str,
        _headers: &mut RecordHeaders,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.from_connect_data(topic, schema, value)
    }
    /// [`Converter::to_connect_data`] with the consumed record's Kafka headers. The default
    /// ignores them.
    fn to_connect_data_with_headers(
        &self,
        topic: &str,
        _headers: &RecordHeaders,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        self.to_connect_data(topic, value)
    }
    /// The converter's configuration keys.
    fn config(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// Converts header values between Connect data and bytes (`HeaderConverter`).
pub trait HeaderConverter: Send + Sync {
    /// Hands the header converter its own metrics (KIP-877), after `configure`, tagged
    /// `connector`, `task` and `converter=header`; the default ignores them.
    fn with_plugin_metrics(&mut self, _metrics: crate::metrics::PluginMetrics) {}
    /// Applies the converter's settings.
    fn configure(&mut self, configs: &Props) -> ConnectResult<()>;
    /// Whether a call may block its thread ([`Converter::may_block`]). Default true.
    fn may_block(&self) -> bool {
        true
    }
    /// Connect data to header bytes.
    // Named after Connect's `fromConnectHeader`; a converter method, not a constructor.
    #[allow(clippy::wrong_self_convention)]
    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>>;
    /// Header bytes to Connect data.
    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue>;
}

/// Connect's `ConverterConfig.newConfigDef()`: the required `converter.type` key (`key`,
/// `value` or `header`), which `configure(configs, isKey)` fills in.
pub fn converter_config_def() -> ConfigDef {
    ConfigDef::new().define(
        "converter.type",
        crate::config::ConfigType::String,
        None,
        Some(crate::config::Validator::OneOf(vec![
            "key".into(),
            "value".into(),
            "header".into(),
        ])),
        crate::config::Importance::Low,
        "The role this converter plays: key, value or header.",
    )
}

/// `configs` with `converter.type` set to `ty`, as Java's `configure(configs, isKey)` does.
pub fn with_converter_type(configs: &Props, ty: &str) -> Props {
    let mut props = configs.clone();
    props.insert("converter.type".into(), ty.into());
    props
}
