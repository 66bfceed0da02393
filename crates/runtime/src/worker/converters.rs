//! The converters a task uses: the connector's `key.converter` / `value.converter` /
//! `header.converter` if set (configured from its `key.converter.*` … settings), otherwise the
//! worker's (configured from the worker's prefixed settings), as Connect's `Worker` does.

use std::collections::HashMap;

use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::worker::{prefixed, WorkerConfig};
use crate::plugins::Plugins;

/// A task's key, value and header converters.
pub struct TaskConverters {
    pub key: Box<dyn Converter>,
    pub value: Box<dyn Converter>,
    pub header: Box<dyn HeaderConverter>,
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

/// Creates and configures the converters for a connector's tasks. Errors name the converter
/// class that could not be found or configured.
pub fn task_converters(
    plugins: &Plugins,
    worker: &WorkerConfig,
    connector: &HashMap<String, String>,
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
    let mut key = plugins
        .new_converter(&kc)
        .map_err(|e| ConnectError::config(e.to_string()))?;
    key.configure(&kp, true)?;
    let mut value = plugins
        .new_converter(&vc)
        .map_err(|e| ConnectError::config(e.to_string()))?;
    value.configure(&vp, false)?;
    let mut header = plugins
        .new_header_converter(&hc)
        .map_err(|e| ConnectError::config(e.to_string()))?;
    header.configure(&hp)?;
    Ok(TaskConverters { key, value, header })
}
