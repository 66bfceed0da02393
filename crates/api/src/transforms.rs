//! Single message transformations and predicates: Connect's
//! `org.apache.kafka.connect.transforms.Transformation` (KIP-66) and
//! `org.apache.kafka.connect.transforms.predicates.Predicate` (KIP-585).
//!
//! A transformation works on any record kind through [`ConnectRecord`], so one implementation
//! serves both sources (applied after `poll`, before the converters) and sinks (after the
//! converters, before `put`). The runtime builds the chain from the connector's `transforms`
//! aliases, configures each transformation with its `transforms.<alias>.` settings (prefix
//! removed) and, where `transforms.<alias>.predicate` names one, applies it only to the records
//! the predicate (possibly negated) accepts.
//!
//! Writing one's own: implement [`Transformation`] for every record kind (usually
//! `impl<R: ConnectRecord> Transformation<R> for MyTransform`) and list it in a
//! [`crate::plugin::PluginSet`] with [`TransformationPlugin::of`]:
//!
//! ```
//! use tributary_api::config::ConfigDef;
//! use tributary_api::data::Value;
//! use tributary_api::plugin::PluginSet;
//! use tributary_api::transforms::{ConnectRecord, Transformation, TransformationPlugin};
//! use tributary_api::{ConnectResult, Props};
//!
//! /// Drops records whose value is the string "skip".
//! #[derive(Default)]
//! struct SkipMarked;
//!
//! impl<R: ConnectRecord> Transformation<R> for SkipMarked {
//!     fn configure(&mut self, _props: &Props) -> ConnectResult<()> {
//!         Ok(())
//!     }
//!     fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
//!         match record.value() {
//!             Value::String(s) if s == "skip" => Ok(None),
//!             _ => Ok(Some(record)),
//!         }
//!     }
//!     fn config(&self) -> ConfigDef {
//!         ConfigDef::new()
//!     }
//! }
//!
//! let mut plugins = PluginSet::default();
//! plugins.transformations.push(TransformationPlugin::of::<SkipMarked>("com.example.SkipMarked", "1.0"));
//! ```

use std::sync::Arc;

use crate::config::ConfigDef;
use crate::data::{SchemaRef, Value};
use crate::record::{Headers, SinkRecord, SourceRecord};
use crate::{ConnectResult, Props};

/// What a transformation or predicate sees of a record (Connect's `ConnectRecord`): topic,
/// partition, key and value with their schemas, timestamp (ms since the epoch) and headers.
/// Implemented by [`SourceRecord`] and [`SinkRecord`].
pub trait ConnectRecord: Clone + Send + 'static {
    /// The topic the record goes to (source) or came from (sink; a transformation may rename it).
    fn topic(&self) -> &str;
    /// The partition, `None` when the producer's partitioner chooses (sources only).
    fn kafka_partition(&self) -> Option<i32>;
    /// The key's schema, `None` for schemaless data.
    fn key_schema(&self) -> Option<&SchemaRef>;
    /// The key; [`Value::Null`] when absent.
    fn key(&self) -> &Value;
    /// The value's schema, `None` for schemaless data.
    fn value_schema(&self) -> Option<&SchemaRef>;
    /// The value; [`Value::Null`] for a tombstone.
    fn value(&self) -> &Value;
    /// The timestamp in ms since the epoch, if any.
    fn timestamp(&self) -> Option<i64>;
    /// The headers, in order.
    fn headers(&self) -> &Headers;
    /// The headers, to change in place (Connect's headers are mutable on the record).
    fn headers_mut(&mut self) -> &mut Headers;
    /// A record of the same kind with these fields and every other field of `self` kept
    /// (Connect's `newRecord`): a source record keeps its source partition and offset, a sink
    /// record its Kafka offset, timestamp type and original topic, partition and offset.
    /// A sink record given a `None` partition keeps its own.
    #[allow(clippy::too_many_arguments)]
    fn new_record(
        &self,
        topic: String,
        kafka_partition: Option<i32>,
        key_schema: Option<SchemaRef>,
        key: Value,
        value_schema: Option<SchemaRef>,
        value: Value,
        timestamp: Option<i64>,
        headers: Headers,
    ) -> Self;
    /// Changes the topic in place, every other field kept: what [`Self::new_record`] with only
    /// the topic changed gives, without copying the key, value and headers.
    fn set_topic(&mut self, topic: String);
    /// Replaces the key and its schema in place (as [`Self::set_topic`] does for the topic);
    /// returns the old key.
    fn set_key(&mut self, schema: Option<SchemaRef>, key: Value) -> Value;
    /// Replaces the value and its schema in place (as [`Self::set_topic`] does for the topic);
    /// returns the old value.
    fn set_value(&mut self, schema: Option<SchemaRef>, value: Value) -> Value;
}

impl ConnectRecord for SourceRecord {
    fn set_topic(&mut self, topic: String) {
        self.topic = topic;
    }
    fn set_key(&mut self, schema: Option<SchemaRef>, key: Value) -> Value {
        self.key_schema = schema;
        std::mem::replace(&mut self.key, key)
    }
    fn set_value(&mut self, schema: Option<SchemaRef>, value: Value) -> Value {
        self.value_schema = schema;
        std::mem::replace(&mut self.value, value)
    }
    fn topic(&self) -> &str {
        &self.topic
    }
    fn kafka_partition(&self) -> Option<i32> {
        self.kafka_partition
    }
    fn key_schema(&self) -> Option<&SchemaRef> {
        self.key_schema.as_ref()
    }
    fn key(&self) -> &Value {
        &self.key
    }
    fn value_schema(&self) -> Option<&SchemaRef> {
        self.value_schema.as_ref()
    }
    fn value(&self) -> &Value {
        &self.value
    }
    fn timestamp(&self) -> Option<i64> {
        self.timestamp
    }
    fn headers(&self) -> &Headers {
        &self.headers
    }
    fn headers_mut(&mut self) -> &mut Headers {
        &mut self.headers
    }
    fn new_record(
        &self,
        topic: String,
        kafka_partition: Option<i32>,
        key_schema: Option<SchemaRef>,
        key: Value,
        value_schema: Option<SchemaRef>,
        value: Value,
        timestamp: Option<i64>,
        headers: Headers,
    ) -> Self {
        SourceRecord {
            source_partition: self.source_partition.clone(),
            source_offset: self.source_offset.clone(),
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            headers,
        }
    }
}

impl ConnectRecord for SinkRecord {
    fn set_topic(&mut self, topic: String) {
        self.topic = topic;
    }
    fn set_key(&mut self, schema: Option<SchemaRef>, key: Value) -> Value {
        self.key_schema = schema;
        std::mem::replace(&mut self.key, key)
    }
    fn set_value(&mut self, schema: Option<SchemaRef>, value: Value) -> Value {
        self.value_schema = schema;
        std::mem::replace(&mut self.value, value)
    }
    fn topic(&self) -> &str {
        &self.topic
    }
    fn kafka_partition(&self) -> Option<i32> {
        Some(self.kafka_partition)
    }
    fn key_schema(&self) -> Option<&SchemaRef> {
        self.key_schema.as_ref()
    }
    fn key(&self) -> &Value {
        &self.key
    }
    fn value_schema(&self) -> Option<&SchemaRef> {
        self.value_schema.as_ref()
    }
    fn value(&self) -> &Value {
        &self.value
    }
    fn timestamp(&self) -> Option<i64> {
        self.timestamp
    }
    fn headers(&self) -> &Headers {
        &self.headers
    }
    fn headers_mut(&mut self) -> &mut Headers {
        &mut self.headers
    }
    fn new_record(
        &self,
        topic: String,
        kafka_partition: Option<i32>,
        key_schema: Option<SchemaRef>,
        key: Value,
        value_schema: Option<SchemaRef>,
        value: Value,
        timestamp: Option<i64>,
        headers: Headers,
    ) -> Self {
        SinkRecord {
            topic,
            kafka_partition: kafka_partition.unwrap_or(self.kafka_partition),
            key_schema,
            key,
            value_schema,
            value,
            kafka_offset: self.kafka_offset,
            timestamp,
            timestamp_type: self.timestamp_type,
            headers,
            original_topic: self.original_topic.clone(),
            original_kafka_partition: self.original_kafka_partition,
            original_kafka_offset: self.original_kafka_offset,
        }
    }
}

/// A single message transformation (Connect's `Transformation<R>`, KIP-66).
///
/// Each task creates its own instances. The runtime calls [`Transformation::configure`] once
/// with the `transforms.<alias>.` settings (prefix removed, `type` included, `predicate` and
/// `negate` taken out, as Connect passes them), then [`Transformation::apply`] for each record
/// on the task's thread, and [`Transformation::close`] when the task stops. Errors: an error
/// from `configure` fails the task (as in Connect, validation does not configure
/// transformations: it checks the settings against [`Transformation::config`], naming
/// `transforms.<alias>.<key>`); a
/// [`crate::ConnectError::Data`] or other error from `apply` is handled by the connector's
/// `errors.tolerance` (KIP-298), a [`crate::ConnectError::Retriable`] is retried within
/// `errors.retry.timeout`.
pub trait Transformation<R: ConnectRecord>: Send {
    /// Reads this transformation's settings.
    fn configure(&mut self, props: &Props) -> ConnectResult<()>;
    /// The record transformed, or `None` to drop it (Connect's `null`).
    fn apply(&mut self, record: R) -> ConnectResult<Option<R>>;
    /// The settings this transformation accepts, for validation (Connect's `config()`).
    fn config(&self) -> ConfigDef;
    /// Releases what the transformation holds.
    fn close(&mut self) {}
    /// Hands the plugin its own metrics (KIP-877's `Monitorable.withPluginMetrics`), after
    /// `configure`, tagged `connector`, `task` and `transformation=<alias>` (a predicate:
    /// `predicate=<alias>`); the default ignores them.
    fn with_plugin_metrics(&mut self, _metrics: crate::metrics::PluginMetrics) {}
}

/// A condition on records deciding whether a transformation applies (Connect's
/// `Predicate<R>`, KIP-585). Configured with the `predicates.<alias>.` settings (prefix removed).
pub trait Predicate<R: ConnectRecord>: Send {
    /// Reads this predicate's settings.
    fn configure(&mut self, props: &Props) -> ConnectResult<()>;
    /// Whether the record matches.
    fn test(&mut self, record: &R) -> bool;
    /// [`Predicate::test`] for a predicate that can fail (a hosted Java predicate whose `test`
    /// throws): the runtime calls this one, and an error is handled as a failure of the
    /// transformation it guards (`errors.tolerance`), as in Connect, where both run in one
    /// stage. The default never fails.
    fn try_test(&mut self, record: &R) -> ConnectResult<bool> {
        Ok(self.test(record))
    }
    /// The settings this predicate accepts, for validation.
    fn config(&self) -> ConfigDef;
    /// Releases what the predicate holds.
    fn close(&mut self) {}
    /// Hands the plugin its own metrics (KIP-877's `Monitorable.withPluginMetrics`), after
    /// `configure`, tagged `connector`, `task` and `transformation=<alias>` (a predicate:
    /// `predicate=<alias>`); the default ignores them.
    fn with_plugin_metrics(&mut self, _metrics: crate::metrics::PluginMetrics) {}
}

/// Creates a transformation for one record kind.
pub type TransformationFactory<R> = Arc<dyn Fn() -> Box<dyn Transformation<R>> + Send + Sync>;
/// Creates a predicate for one record kind.
pub type PredicateFactory<R> = Arc<dyn Fn() -> Box<dyn Predicate<R>> + Send + Sync>;

/// A transformation plugin under its Java class name (e.g.
/// `org.apache.kafka.connect.transforms.InsertField$Value`), with a constructor for each record
/// kind. Build one with [`TransformationPlugin::of`]; plugins found at run time (Java ones of
/// `plugin.path`, crate `tributary-jvm`) leak their names once per worker and build theirs
/// from closures.
#[derive(Clone)]
pub struct TransformationPlugin {
    /// The Java class name users put in `transforms.<alias>.type`.
    pub class: &'static str,
    /// The plugin's version as `GET /connector-plugins` shows it.
    pub version: &'static str,
    /// A new, unconfigured instance for source records.
    pub new_source: TransformationFactory<SourceRecord>,
    /// A new, unconfigured instance for sink records.
    pub new_sink: TransformationFactory<SinkRecord>,
}

impl TransformationPlugin {
    /// The plugin for `T`, which implements [`Transformation`] for both record kinds.
    pub fn of<T>(class: &'static str, version: &'static str) -> TransformationPlugin
    where
        T: Default + Transformation<SourceRecord> + Transformation<SinkRecord> + 'static,
    {
        TransformationPlugin {
            class,
            version,
            new_source: Arc::new(|| Box::new(T::default())),
            new_sink: Arc::new(|| Box::new(T::default())),
        }
    }
}

/// A predicate plugin under its Java class name (e.g.
/// `org.apache.kafka.connect.transforms.predicates.HasHeaderKey`).
#[derive(Clone)]
pub struct PredicatePlugin {
    /// The Java class name users put in `predicates.<alias>.type`.
    pub class: &'static str,
    /// The plugin's version.
    pub version: &'static str,
    /// A new, unconfigured instance for source records.
    pub new_source: PredicateFactory<SourceRecord>,
    /// A new, unconfigured instance for sink records.
    pub new_sink: PredicateFactory<SinkRecord>,
}

impl PredicatePlugin {
    /// The plugin for `P`, which implements [`Predicate`] for both record kinds.
    pub fn of<P>(class: &'static str, version: &'static str) -> PredicatePlugin
    where
        P: Default + Predicate<SourceRecord> + Predicate<SinkRecord> + 'static,
    {
        PredicatePlugin {
            class,
            version,
            new_source: Arc::new(|| Box::new(P::default())),
            new_sink: Arc::new(|| Box::new(P::default())),
        }
    }
}
