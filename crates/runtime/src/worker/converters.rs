//! The converters a task uses: the connector's `key.converter` / `value.converter` /
//! `header.converter` if set (configured from its `key.converter.*` … settings), otherwise the
//! worker's (configured from the worker's prefixed settings), as Connect's `Worker` does.

use std::collections::HashMap;
use std::sync::Arc;

use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::worker::{prefixed, WorkerConfig};
use crate::plugins::Plugins;

/// A task's key, value and header converters, with their class names (which error reports
/// name as the executing class of a conversion stage). Shared with the task's errant record
/// reporter, hence the `Arc`s.
pub struct TaskConverters {
    pub key: Arc<dyn Converter>,
    pub value: Arc<dyn Converter>,
    pub header: Arc<dyn HeaderConverter>,
    /// The key converter's class name.
    pub key_class: &'static str,
    /// The value converter's class name.
    pub value_class: &'static str,
    /// The header converter's class name.
    pub header_class: &'static str,
}

impl TaskConverters {
    /// Whether any of the three may block its thread ([`Converter::may_block`]).
    pub fn may_block(&self) -> bool {
        self.key.may_block() || self.value.may_block() || self.header.may_block()
    }
}

/// The class and settings of the converter `key` names: the connector's when it sets one,
/// else the worker's (`worker_class`, the worker's typed setting of `key`).
fn pick(
    key: &str,
    connector: &HashMap<String, String>,
    worker: &WorkerConfig,
    worker_class: &str,
) -> (String, HashMap<String, String>) {
    if let Some(class) = connector.get(key).filter(|c| !c.trim().is_empty()) {
        return (
            class.trim().to_string(),
            prefixed(connector, &format!("{key}.")),
        );
    }
    (
        worker_class.to_string(),
        worker.with_prefix(&format!("{key}.")),
    )
}

/// Creates and configures the converters for a connector's tasks, then hands each a child of
/// the task's plugin metrics `metrics` tagged `converter=key|value|header` (KIP-877). Errors
/// name the converter class that could not be found or configured.
pub fn task_converters(
    plugins: &Plugins,
    worker: &WorkerConfig,
    connector: &HashMap<String, String>,
    metrics: &tributary_api::metrics::PluginMetrics,
) -> ConnectResult<TaskConverters> {
    let settings = worker.settings();
    let (kc, kp) = pick("key.converter", connector, worker, &settings.key_converter);
    let (vc, vp) = pick(
        "value.converter",
        connector,
        worker,
        &settings.value_converter,
    );
    let (hc, hp) = pick(
        "header.converter",
        connector,
        worker,
        &settings.header_converter,
    );
    // KIP-891: each converter runs in the version its settings ask for (`plugin.version` under
    // its prefix), read from where its class comes from: the connector's for a converter the
    // connector names, the worker's for the worker's (as Connect's `Worker` reads them).
    fn requirement(settings: &HashMap<String, String>) -> Option<&str> {
        settings.get("plugin.version").map(String::as_str)
    }
    let key_plugin = plugins
        .converter_plugin_in(&kc, requirement(&kp))
        .map_err(|e| ConnectError::config(e.to_string()))?;
    let mut key = (key_plugin.new)();
    key.configure(&kp, true)?;
    let value_plugin = plugins
        .converter_plugin_in(&vc, requirement(&vp))
        .map_err(|e| ConnectError::config(e.to_string()))?;
    let mut value = (value_plugin.new)();
    value.configure(&vp, false)?;
    let header_plugin = plugins
        .header_converter_plugin_in(&hc, requirement(&hp))
        .map_err(|e| ConnectError::config(e.to_string()))?;
    let mut header = (header_plugin.new)();
    header.configure(&hp)?;
    key.with_plugin_metrics(metrics.child(&[("converter", "key")]));
    value.with_plugin_metrics(metrics.child(&[("converter", "value")]));
    header.with_plugin_metrics(metrics.child(&[("converter", "header")]));
    Ok(TaskConverters {
        key: Arc::from(key),
        value: Arc::from(value),
        header: Arc::from(header),
        key_class: key_plugin.class,
        value_class: value_plugin.class,
        header_class: header_plugin.class,
    })
}
