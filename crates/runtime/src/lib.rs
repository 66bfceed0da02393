//! Tributary's runtime, the counterpart of Apache Kafka Connect's `connect-runtime`.
//!
//! - `allocator`: mimalloc as the allocator of Rust's allocations.
//! - [`config`]: worker and connector configuration (Java properties files, `WorkerConfig`,
//!   `ConnectorConfig`), and the mapping of client settings onto librdkafka.
//! - [`plugins`]: the plugin registry resolving Connect class names and aliases.
//! - [`config_records`]: restart requests and the session key, shared by `storage` and
//!   `herder`.
//! - [`declared_connectors`]: connectors declared in files, diffed against a cluster (issue
//!   #35: `tributary apply`, `tributary.connectors.dir`).
//! - [`polled_producer`]: librdkafka producers served by an event-driven poll thread (source
//!   tasks and internal topics).
//! - [`kafka_client`]: OAUTHBEARER tokens for every librdkafka client the runtime creates.
//! - [`storage`]: offset and status backing stores.
//! - [`worker`]: the worker owning running connector and task instances
//!   (`Worker`, `WorkerConnector`, `WorkerSourceTask`, `WorkerSinkTask`).
//! - [`herder`]: the control plane (`Herder`, `StandaloneHerder`).
//! - [`rest`]: Connect's REST API on axum; handlers only call the herder.

// Async code must not block its runtime thread (clippy.toml names the methods).
#![deny(clippy::disallowed_methods)]

mod allocator;
pub mod config;
pub mod config_records;
pub mod declared_connectors;
pub mod herder;
pub mod herder_error;
pub mod kafka_client;
pub mod logging;
pub mod peer;
pub mod plugins;
pub mod polled_producer;
pub mod rest;
pub mod storage;
pub mod worker;

/// The Apache Kafka version whose Connect REST API and formats Tributary implements (the newest
/// release, 4.4.0; it works in groups with 4.1 workers too); reported as `version` by `GET /`.
pub const COMPATIBLE_KAFKA_VERSION: &str = "4.4.0";

pub use tributary_api::ConnectorTaskId;
