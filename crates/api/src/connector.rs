//! The [`Connector`] trait (Connect's `Connector`, `SourceConnector`, `SinkConnector`).

use std::sync::Arc;

use crate::config::{ConfigDef, ConfigValue};
use crate::error::ConnectResult;
use crate::record::{SourceMap, TopicPartition};
use crate::Props;

/// Whether a connector moves data into Kafka (source) or out of it (sink).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectorType {
    Source,
    Sink,
}

impl ConnectorType {
    /// The lowercase name used in REST bodies (`"source"`, `"sink"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorType::Source => "source",
            ConnectorType::Sink => "sink",
        }
    }
}

/// Offsets a user asks to write for a stopped connector (KIP-875, `PATCH` and `DELETE
/// /connectors/{c}/offsets`), as handed to [`Connector::alter_offsets`]. A `None` offset
/// removes the partition's offset (every partition is `None` for a reset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OffsetAlteration<'a> {
    /// A source connector's source partitions and offsets, normalized as the worker's
    /// internal JSON converter reads them back (integers are `i64`, as Java's `Long`).
    Source(&'a [(SourceMap, Option<SourceMap>)]),
    /// A sink connector's topic partitions and the offsets of the next record to consume.
    Sink(&'a [(TopicPartition, Option<i64>)]),
}

/// Whether a source connector can give exactly-once delivery with a given configuration
/// (Connect's `org.apache.kafka.connect.source.ExactlyOnceSupport`, KIP-618), as
/// [`Connector::exactly_once_support`] answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactlyOnceSupport {
    /// `SUPPORTED`: the connector's records and offsets make exactly-once delivery possible.
    Supported,
    /// `UNSUPPORTED`: the connector cannot give exactly-once delivery with this configuration.
    Unsupported,
}

/// Whether a source connector's tasks can define their own transaction boundaries
/// (`transaction.boundary=connector`) with a given configuration (Connect's
/// `ConnectorTransactionBoundaries`, KIP-618).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectorTransactionBoundaries {
    /// `SUPPORTED`.
    Supported,
    /// `UNSUPPORTED` (the default).
    Unsupported,
}

/// What the runtime offers a running connector (Connect's `ConnectorContext`).
pub trait ConnectorContext: Send + Sync {
    /// Asks the runtime to call [`Connector::task_configs`] again and apply the result.
    fn request_task_reconfiguration(&self);
    /// Reports an unrecoverable error: the connector is marked FAILED with this message.
    fn raise_error(&self, message: String);
    /// A source connector's reader of its tasks' committed offsets (Connect's
    /// `SourceConnectorContext.offsetStorageReader()`), over the same store its tasks commit
    /// to (the connector's own `offsets.storage.topic` with the worker's as fallback, when it
    /// has one); `None` for a sink connector or a runtime without offsets. May block on first
    /// use (reading the connector's offsets topic); errors when that store cannot be read.
    fn offset_storage_reader(
        &self,
    ) -> ConnectResult<Option<std::sync::Arc<dyn crate::source::OffsetStorageReader>>> {
        Ok(None)
    }
    /// Where the connector registers its own metrics (Connect's
    /// `ConnectorContext.pluginMetrics()`, KIP-877): tagged `connector=<name>`, shown on the
    /// worker's `/metrics` while the connector runs there. The default is a handle nothing
    /// reads, for contexts outside a worker.
    fn plugin_metrics(&self) -> crate::metrics::PluginMetrics {
        crate::metrics::PluginMetrics::default()
    }
}

/// A connector: configures itself and splits its work into task configurations.
///
/// The runtime calls, in order: [`Connector::initialize`], [`Connector::start`] with the
/// connector config, [`Connector::task_configs`] (possibly repeatedly) and [`Connector::stop`].
/// Calls may block; the runtime makes them off its async threads. The tasks named by
/// [`Connector::task_class`] are created by the plugin registry from that name.
pub trait Connector: Send {
    /// The connector's version (shown by `GET /connector-plugins`).
    fn version(&self) -> String;
    /// Source or sink.
    fn connector_type(&self) -> ConnectorType;
    /// The class name of the tasks this connector creates (Connect's `taskClass()`),
    /// written as `task.class` into every task config.
    fn task_class(&self) -> String;
    /// Hands the connector its context before [`Connector::start`].
    fn initialize(&mut self, _context: Arc<dyn ConnectorContext>) {}
    /// Starts the connector with its configuration. Errors fail the connector.
    fn start(&mut self, props: &Props) -> ConnectResult<()>;
    /// At most `max_tasks` task configurations (Connect's `taskConfigs(int)`).
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>>;
    /// Stops the connector.
    fn stop(&mut self) -> ConnectResult<()>;
    /// The connector's own configuration keys.
    fn config(&self) -> ConfigDef;
    /// Called before the runtime writes offsets a user altered or reset through the REST API
    /// (Connect's `SourceConnector.alterOffsets` / `SinkConnector.alterOffsets`, KIP-875), on
    /// a fresh instance that was never started, with the connector's configuration. `Ok(true)`:
    /// the connector handled them (or needs nothing done); `Ok(false)` (the default): the
    /// connector manages no offsets outside Kafka Connect's, or does not know, and the REST
    /// answer says that external offsets may need altering by hand. An error refuses the
    /// request: nothing is written and the REST answer is 500 with the message.
    fn alter_offsets(
        &mut self,
        _config: &Props,
        _offsets: OffsetAlteration<'_>,
    ) -> ConnectResult<bool> {
        Ok(false)
    }
    /// Whether this source connector can give exactly-once delivery with `config` (Connect's
    /// `SourceConnector.exactlyOnceSupport`, KIP-618). Called on a fresh instance, before
    /// `start`, when a connector config sets `exactly.once.support=required`. `None` (the
    /// default, Java's `null`): the connector does not say, and `required` is refused.
    fn exactly_once_support(&self, _config: &Props) -> Option<ExactlyOnceSupport> {
        None
    }
    /// Whether this source connector's tasks can define their own transaction boundaries with
    /// `config` (Connect's `SourceConnector.canDefineTransactionBoundaries`, KIP-618). Called
    /// on a fresh instance when a config sets `transaction.boundary=connector`; the default is
    /// [`ConnectorTransactionBoundaries::Unsupported`].
    fn can_define_transaction_boundaries(&self, _config: &Props) -> ConnectorTransactionBoundaries {
        ConnectorTransactionBoundaries::Unsupported
    }
    /// Validates a configuration; the default checks it against [`Connector::config`].
    fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        self.config().validate(props)
    }
}
