//! Plugin descriptors: how a crate of connectors and converters tells the runtime what it
//! provides, under Connect's Java class names (Connect scans the plugin path; Tributary links
//! its built-in plugins in and lists them here, and `tributary-jvm` adds the Java connectors of
//! `plugin.path` as hosted [`ConnectorPlugin`]s).

use std::sync::Arc;

use crate::connector::{Connector, ConnectorType};
use crate::converter::{Converter, HeaderConverter};
use crate::sink::{AsyncSinkTask, SinkTask};
use crate::source::{AsyncSourceTask, SourceTask};
use crate::transforms::{PredicatePlugin, TransformationPlugin};

/// Creates a connector instance.
pub type ConnectorFactory = Arc<dyn Fn() -> Box<dyn Connector> + Send + Sync>;

/// Creates the task instances of a hosted connector plugin, given the `task.class` its
/// connector named: the tasks are loaded where the connector was (for a Java plugin, by the
/// connector's class loader, as Connect's `Worker` does), not looked up among the
/// [`TaskPlugin`]s.
pub type HostedTaskFactory = Arc<dyn Fn(&str) -> TaskFactory + Send + Sync>;

/// A connector plugin: its Java class name (e.g.
/// `org.apache.kafka.connect.file.FileStreamSourceConnector`), version and constructor.
/// Aliases (simple class name, and without the `Connector` suffix) are derived by the runtime.
///
/// Built-in plugins have `'static` names and `tasks: None` (their tasks are [`TaskPlugin`]s);
/// plugins found at run time (Java plugins of `plugin.path`, crate `tributary-jvm`) leak their
/// names once per worker and create their own tasks through `tasks`.
#[derive(Clone)]
pub struct ConnectorPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub connector_type: ConnectorType,
    pub new: ConnectorFactory,
    /// For hosted plugins: how to create this connector's tasks.
    pub tasks: Option<HostedTaskFactory>,
}

impl ConnectorPlugin {
    /// A built-in connector plugin, created by `new`.
    pub fn native(
        class: &'static str,
        version: &'static str,
        connector_type: ConnectorType,
        new: fn() -> Box<dyn Connector>,
    ) -> ConnectorPlugin {
        ConnectorPlugin {
            class,
            version,
            connector_type,
            new: Arc::new(new),
            tasks: None,
        }
    }

    /// Whether the plugin is hosted (its tasks come from `tasks`, not from [`TaskPlugin`]s).
    pub fn is_hosted(&self) -> bool {
        self.tasks.is_some()
    }
}

/// How to create a task of a given `task.class`.
#[derive(Clone)]
pub enum TaskFactory {
    Source(Arc<dyn Fn() -> Box<dyn SourceTask> + Send + Sync>),
    /// A source task whose calls never block: run on the worker's shared runtime (issue #43).
    AsyncSource(Arc<dyn Fn() -> Box<dyn AsyncSourceTask> + Send + Sync>),
    Sink(Arc<dyn Fn() -> Box<dyn SinkTask> + Send + Sync>),
    /// A sink task whose calls return futures, driven on the worker's runtime (issue #43).
    AsyncSink(Arc<dyn Fn() -> Box<dyn AsyncSinkTask> + Send + Sync>),
}

impl TaskFactory {
    /// A source task factory from a plain constructor.
    pub fn source(new: fn() -> Box<dyn SourceTask>) -> TaskFactory {
        TaskFactory::Source(Arc::new(new))
    }
    /// An async source task factory from a plain constructor.
    pub fn async_source(new: fn() -> Box<dyn AsyncSourceTask>) -> TaskFactory {
        TaskFactory::AsyncSource(Arc::new(new))
    }
    /// An async sink task factory from a plain constructor.
    pub fn async_sink(new: fn() -> Box<dyn AsyncSinkTask>) -> TaskFactory {
        TaskFactory::AsyncSink(Arc::new(new))
    }
    /// A sink task factory from a plain constructor.
    pub fn sink(new: fn() -> Box<dyn SinkTask>) -> TaskFactory {
        TaskFactory::Sink(Arc::new(new))
    }
}

/// A task plugin: the class name connectors put in `task.class`, and its constructor.
#[derive(Clone)]
pub struct TaskPlugin {
    pub class: &'static str,
    pub new: TaskFactory,
}

/// Creates an unconfigured converter (a closure, so a hosted Java converter can hold its JVM).
pub type ConverterFactory = std::sync::Arc<dyn Fn() -> Box<dyn Converter> + Send + Sync>;
/// Creates an unconfigured header converter.
pub type HeaderConverterFactory =
    std::sync::Arc<dyn Fn() -> Box<dyn HeaderConverter> + Send + Sync>;

/// A converter plugin under its Java class name
/// (e.g. `org.apache.kafka.connect.json.JsonConverter`).
#[derive(Clone)]
pub struct ConverterPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub new: ConverterFactory,
}

/// A header converter plugin under its Java class name.
#[derive(Clone)]
pub struct HeaderConverterPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub new: HeaderConverterFactory,
}

/// Everything one plugin crate provides.
#[derive(Clone, Default)]
pub struct PluginSet {
    pub connectors: Vec<ConnectorPlugin>,
    pub tasks: Vec<TaskPlugin>,
    pub converters: Vec<ConverterPlugin>,
    pub header_converters: Vec<HeaderConverterPlugin>,
    pub transformations: Vec<TransformationPlugin>,
    pub predicates: Vec<PredicatePlugin>,
    /// Plugin metrics kept outside the worker's registry (the hosted JVM's), read at every
    /// scrape of `/metrics` (KIP-877).
    pub metric_collectors: Vec<crate::metrics::MetricCollector>,
    /// Built-in connector classes that are previews: a Java plugin of the same class (from
    /// `plugin.path`) is added beside the native one as another version (KIP-891) instead of
    /// being shadowed by it, so the newest (the Java one) stays the default and the native one
    /// runs when `connector.plugin.version` asks for its version.
    pub previews: Vec<&'static str>,
    /// Built-in connector classes whose native version is the default even beside Java
    /// versions of the class from `plugin.path` (KIP-891): the Java ones are kept as other
    /// versions, run when `connector.plugin.version` asks for one of theirs, and the native
    /// one runs otherwise, though its version number is lower (MirrorMaker 2's connectors,
    /// issue #44).
    pub native_defaults: Vec<&'static str>,
}

impl PluginSet {
    /// Adds all of `other`'s plugins.
    pub fn extend(&mut self, other: PluginSet) {
        self.connectors.extend(other.connectors);
        self.tasks.extend(other.tasks);
        self.converters.extend(other.converters);
        self.header_converters.extend(other.header_converters);
        self.transformations.extend(other.transformations);
        self.predicates.extend(other.predicates);
        self.metric_collectors.extend(other.metric_collectors);
        self.previews.extend(other.previews);
        self.native_defaults.extend(other.native_defaults);
    }
}
