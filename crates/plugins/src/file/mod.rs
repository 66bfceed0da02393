//! The FileStream connectors (Apache Kafka Connect's `connect-file` module,
//! package `org.apache.kafka.connect.file`): a source that tails a text file (or reads standard
//! input) line by line into one topic, and a sink that appends every record's value as one line
//! to a file (or standard output).
//!
//! - [`FileStreamSourceConnector`] / [`FileStreamSourceTask`]: config keys [`FILE_CONFIG`],
//!   [`TOPIC_CONFIG`] and [`TASK_BATCH_SIZE_CONFIG`] (see [`source_config_def`]). Source
//!   partition `{"filename": <file>}`, source offset `{"position": <byte position>}`.
//! - [`FileStreamSinkConnector`] / [`FileStreamSinkTask`]: config key [`FILE_CONFIG`]
//!   (see [`sink_config_def`]); the framework's `topics` / `topics.regex` are handled by the
//!   runtime.
//!
//! [`plugins`] registers all four under their Java class names.

pub mod sink;
pub mod source;

use tributary_api::connector::ConnectorType;
use tributary_api::plugin::{ConnectorPlugin, PluginSet, TaskFactory, TaskPlugin};

pub use sink::{sink_config_def, FileStreamSinkConnector, FileStreamSinkTask};
pub use source::{
    source_config_def, FileStreamSourceConnector, FileStreamSourceTask, DEFAULT_TASK_BATCH_SIZE,
    FILENAME_FIELD, POSITION_FIELD, TASK_BATCH_SIZE_CONFIG, TOPIC_CONFIG,
};

/// The version reported by the FileStream connectors and tasks: this crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Config key `file` of both connectors (STRING, default null, importance HIGH): the file to
/// read (source) or append to (sink). Absent or empty means standard input (source) or standard
/// output (sink).
pub const FILE_CONFIG: &str = "file";

/// Class name of the source connector (`org.apache.kafka.connect.file.FileStreamSourceConnector`).
pub const SOURCE_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
/// Class name of the source task (`org.apache.kafka.connect.file.FileStreamSourceTask`).
pub const SOURCE_TASK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceTask";
/// Class name of the sink connector (`org.apache.kafka.connect.file.FileStreamSinkConnector`).
pub const SINK_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
/// Class name of the sink task (`org.apache.kafka.connect.file.FileStreamSinkTask`).
pub const SINK_TASK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkTask";

/// The FileStream connector plugins: both connectors and both tasks, under Connect's class names.
pub fn plugins() -> PluginSet {
    PluginSet {
        connectors: vec![
            ConnectorPlugin::native(
                SOURCE_CONNECTOR_CLASS,
                VERSION,
                ConnectorType::Source,
                || Box::new(FileStreamSourceConnector::new()),
            ),
            ConnectorPlugin::native(SINK_CONNECTOR_CLASS, VERSION, ConnectorType::Sink, || {
                Box::new(FileStreamSinkConnector::new())
            }),
        ],
        tasks: vec![
            TaskPlugin {
                class: SOURCE_TASK_CLASS,
                new: TaskFactory::source(|| Box::new(FileStreamSourceTask::new())),
            },
            TaskPlugin {
                class: SINK_TASK_CLASS,
                new: TaskFactory::sink(|| Box::new(FileStreamSinkTask::new())),
            },
        ],
        converters: Vec::new(),
        header_converters: Vec::new(),
        ..PluginSet::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_are_registered_under_connects_class_names() {
        let set = plugins();
        let classes: Vec<_> = set
            .connectors
            .iter()
            .map(|c| (c.class, c.connector_type))
            .collect();
        assert_eq!(
            classes,
            vec![
                (SOURCE_CONNECTOR_CLASS, ConnectorType::Source),
                (SINK_CONNECTOR_CLASS, ConnectorType::Sink)
            ]
        );
        for c in &set.connectors {
            assert_eq!(c.version, VERSION);
            let connector = (c.new)();
            assert_eq!(connector.connector_type(), c.connector_type);
            assert_eq!(connector.version(), VERSION);
            let task_class = connector.task_class();
            let task = set
                .tasks
                .iter()
                .find(|t| t.class == task_class)
                .expect("task registered");
            match (c.connector_type, &task.new) {
                (ConnectorType::Source, TaskFactory::Source(f)) => {
                    assert_eq!(f().version(), VERSION)
                }
                (ConnectorType::Sink, TaskFactory::Sink(f)) => assert_eq!(f().version(), VERSION),
                _ => panic!("task kind does not match connector kind for {}", c.class),
            }
        }
        assert_eq!(set.tasks.len(), 2);
        assert!(set.converters.is_empty() && set.header_converters.is_empty());
    }
}
