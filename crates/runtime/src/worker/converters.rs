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

fn pick<'a>(
    key: &str,
    connector: &'a HashMap<String, String>,
    worker: &'a WorkerConfig,
) -> Option<(String, HashMap<String, String>)> {
    if let Some(class) = connector.get(key).filter(|c| !c.trim().is_empty()) {
        return Some((
            class.trim().to_string(),
            prefixed(connector, &format!("{key}.")),
        ));
    }
    worker
        .string(key)
        .map(|class| (class, worker.with_prefix(&format!("{key}."))))
}

/// Creates and configures the converters for a connector's tasks. Errors name the converter
/// class that could not be found or configured.
pub fn task_converters(
    plugins: &Plugins,
    worker: &WorkerConfig,
    connector: &HashMap<String, String>,
) -> ConnectResult<TaskConverters> {
    let (kc, kp) = pick("key.converter", connector, worker)
        .ok_or_else(|| ConnectError::config("key.converter is not set"))?;
    let (vc, vp) = pick("value.converter", connector, worker)
        .ok_or_else(|| ConnectError::config("value.converter is not set"))?;
    let (hc, hp) = pick("header.converter", connector, worker).unwrap_or_else(|| {
        (
            "org.apache.kafka.connect.storage.SimpleHeaderConverter".into(),
            HashMap::new(),
        )
    });
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
