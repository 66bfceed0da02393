//! Plugin descriptors: how a crate of connectors and converters tells the runtime what it
//! provides, under Connect's Java class names (Connect scans the plugin path; Tributary links
//! plugins in and lists them here).

use crate::connector::{Connector, ConnectorType};
use crate::converter::{Converter, HeaderConverter};
use crate::sink::SinkTask;
use crate::source::SourceTask;
use crate::transforms::{PredicatePlugin, TransformationPlugin};

/// A connector plugin: its Java class name (e.g.
/// `org.apache.kafka.connect.file.FileStreamSourceConnector`), version and constructor.
/// Aliases (simple class name, and without the `Connector` suffix) are derived by the runtime.
#[derive(Clone, Copy)]
pub struct ConnectorPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub connector_type: ConnectorType,
    pub new: fn() -> Box<dyn Connector>,
}

/// How to create a task of a given `task.class`.
#[derive(Clone, Copy)]
pub enum TaskFactory {
    Source(fn() -> Box<dyn SourceTask>),
    Sink(fn() -> Box<dyn SinkTask>),
}

/// A task plugin: the class name connectors put in `task.class`, and its constructor.
#[derive(Clone, Copy)]
pub struct TaskPlugin {
    pub class: &'static str,
    pub new: TaskFactory,
}

/// A converter plugin under its Java class name
/// (e.g. `org.apache.kafka.connect.json.JsonConverter`).
#[derive(Clone, Copy)]
pub struct ConverterPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub new: fn() -> Box<dyn Converter>,
}

/// A header converter plugin under its Java class name.
#[derive(Clone, Copy)]
pub struct HeaderConverterPlugin {
    pub class: &'static str,
    pub version: &'static str,
    pub new: fn() -> Box<dyn HeaderConverter>,
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
    }
}
