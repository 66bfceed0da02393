//! Configuration: Java properties files ([`properties`]), the worker's settings ([`worker`]),
//! connectors' framework settings ([`connector`]) and Kafka client settings ([`clients`]).

pub mod clients;
pub mod connector;
pub mod properties;
pub mod worker;

/// A configuration problem found at startup. The message names the file (when there is one)
/// and the key, e.g. `worker.properties: Missing required configuration "group.id" …`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
