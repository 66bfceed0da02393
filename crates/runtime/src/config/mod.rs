//! Configuration: Java properties files ([`properties`]), the worker's settings ([`worker`]),
//! connectors' framework settings ([`connector`]), Kafka client settings ([`clients`]), config
//! providers resolving `${provider:path:key}` references ([`providers`]), the `transforms` and
//! `predicates` settings ([`transforms`]), error handling ([`errors`]), topic creation by source connectors ([`topic_creation`]), the connector client override
//! policy ([`override_policy`]) and the settings Tributary does not implement yet
//! ([`unsupported`]).

pub mod auto_restart;
pub mod clients;
pub mod connector;
pub mod errors;
pub mod override_policy;
pub mod properties;
pub mod providers;
pub mod topic_creation;
pub mod transforms;
pub mod unsupported;
pub mod worker;

/// A configuration problem found at startup. The message names the file (when there is one)
/// and the key, e.g. `worker.properties: Missing required configuration "group.id" …`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
