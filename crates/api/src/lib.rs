//! Tributary's connector API, the Rust counterpart of Apache Kafka Connect's `connect-api`.
//!
//! What a connector or converter author sees, and nothing of the runtime:
//! - [`data`]: Connect's data model: [`data::Schema`], [`data::Value`], [`data::Struct`] and the
//!   logical types Decimal, Date, Time and Timestamp (`org.apache.kafka.connect.data`).
//! - [`record`]: [`record::SourceRecord`], [`record::SinkRecord`] and headers
//!   (`org.apache.kafka.connect.source/sink`, `…connect.header`).
//! - [`connector`]: the [`connector::Connector`] trait and its context.
//! - [`source`] / [`sink`]: the task traits [`source::SourceTask`] and [`sink::SinkTask`].
//! - [`config`]: [`config::ConfigDef`], Kafka's config definition used for parsing and validation.
//! - [`converter`]: the [`converter::Converter`] and [`converter::HeaderConverter`] traits.
//! - [`plugin`]: descriptors by which plugin crates list their connectors and converters.
//! - [`transforms`]: the [`transforms::Transformation`] and [`transforms::Predicate`] traits
//!   (KIP-66, KIP-585) over [`transforms::ConnectRecord`].
//! - [`metrics`]: [`metrics::PluginMetrics`], the metrics a plugin registers for itself (KIP-877).
//! - [`error`]: [`error::ConnectError`], the one error type crossing this boundary.

pub mod config;
pub mod config_provider;
pub mod connector;
pub mod converter;
pub mod data;
pub mod error;
pub mod metrics;
pub mod plugin;
pub mod record;
pub mod sink;
pub mod source;
pub mod task_id;
pub mod transforms;

pub use error::{ConnectError, ConnectResult};
pub use task_id::ConnectorTaskId;

/// A connector's or task's configuration: Connect's `Map<String, String>`.
pub type Props = std::collections::HashMap<String, String>;
