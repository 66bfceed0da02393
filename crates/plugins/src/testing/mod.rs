//! Connectors for testing Connect runtimes, not for moving real data.
//!
//! Apache Kafka ships a handful of connectors in its `connect-test-plugins` module (package
//! `org.apache.kafka.connect.tools`) that its own system tests drive a cluster of workers with.
//! Tributary provides them under the same class names so those tests run unchanged:
//!
//! - [`verifiable`]: [`VerifiableSourceConnector`] / [`VerifiableSourceTask`] produce a numbered
//!   stream per task (`seqno`), resumable from committed offsets, and print one JSON line per
//!   produced and per acknowledged record; [`VerifiableSinkConnector`] / [`VerifiableSinkTask`]
//!   print one JSON line per consumed and per flushed record. Test harnesses parse those lines
//!   from the worker's standard output to check delivery.
//! - [`mock`]: [`MockSourceConnector`] / [`MockSinkConnector`] and their tasks produce and
//!   consume nothing; with `mock_mode` they fail the connector or the task after `delay_ms`.
//!
//! And one of Tributary's own, under a Tributary class name:
//!
//! - [`flaky`]: [`FlakySourceConnector`] / [`FlakySourceTask`]
//!   (`io.tributary.connect.testing.FlakySourceConnector`): a slow trickle of numbered records
//!   whose tasks fail on demand, at start (`fail.tasks`) or when a trigger file appears
//!   (`fail.trigger.dir`).
//!
//! - [`transforms`]: [`TestTransformation`] and [`TestPredicate`]
//!   (`io.tributary.connect.testing.TestTransformation` / `…TestPredicate`): renames topics,
//!   changes, drops or fails records, or fails them retriably a number of times, on demand.
//!
//! And test input: [`text`] generates log-like lines for tests and benchmarks.
//!
//! [`plugins`] registers all of them.

pub mod flaky;
pub mod mock;
pub mod transforms;
pub mod verifiable;

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use tributary_api::connector::ConnectorType;
use tributary_api::data::Value;
use tributary_api::plugin::{ConnectorPlugin, PluginSet, TaskFactory, TaskPlugin};
use tributary_api::transforms::{PredicatePlugin, TransformationPlugin};

pub use flaky::{FlakySourceConnector, FlakySourceTask};
pub use mock::{
    MockConnector, MockSinkConnector, MockSinkTask, MockSourceConnector, MockSourceTask,
};
pub use transforms::{
    TestPredicate, TestTransformation, TEST_PREDICATE_CLASS, TEST_TRANSFORMATION_CLASS,
};
pub use verifiable::{
    AsyncVerifiableSinkTask, AsyncVerifiableSourceTask, VerifiableSinkConnector,
    VerifiableSinkTask, VerifiableSourceConnector, VerifiableSourceTask,
};

/// The version reported by the testing connectors and tasks: this crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Class name of `VerifiableSourceConnector`.
pub const VERIFIABLE_SOURCE_CONNECTOR_CLASS: &str =
    "org.apache.kafka.connect.tools.VerifiableSourceConnector";
/// Class name of `VerifiableSourceTask`.
pub const VERIFIABLE_SOURCE_TASK_CLASS: &str =
    "org.apache.kafka.connect.tools.VerifiableSourceTask";
/// Class name of `VerifiableSinkConnector`.
pub const VERIFIABLE_SINK_CONNECTOR_CLASS: &str =
    "org.apache.kafka.connect.tools.VerifiableSinkConnector";
/// Class name of `VerifiableSinkTask`.
pub const VERIFIABLE_SINK_TASK_CLASS: &str = "org.apache.kafka.connect.tools.VerifiableSinkTask";
/// Class name of `MockSourceConnector`.
pub const MOCK_SOURCE_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.tools.MockSourceConnector";
/// Class name of `MockSourceTask`.
pub const MOCK_SOURCE_TASK_CLASS: &str = "org.apache.kafka.connect.tools.MockSourceTask";
/// Class name of `MockSinkConnector`.
pub const MOCK_SINK_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.tools.MockSinkConnector";
/// Class name of `MockSinkTask`.
pub const MOCK_SINK_TASK_CLASS: &str = "org.apache.kafka.connect.tools.MockSinkTask";
/// Class name of Tributary's flaky test source connector.
pub const FLAKY_SOURCE_CONNECTOR_CLASS: &str = "io.tributary.connect.testing.FlakySourceConnector";
/// Class name of Tributary's flaky test source task.
pub const FLAKY_SOURCE_TASK_CLASS: &str = "io.tributary.connect.testing.FlakySourceTask";

/// The testing plugins: the Verifiable and Mock connectors under Kafka's class names, the
/// flaky source, the test transformation and the test predicate under Tributary's, with the
/// connectors' tasks.
///
/// Kafka's abstract-ish `MockConnector` base is not a plugin there (it is neither a source nor a
/// sink connector) and is not registered here either.
pub fn plugins() -> PluginSet {
    let connector =
        |class, connector_type, new| ConnectorPlugin::native(class, VERSION, connector_type, new);
    PluginSet {
        connectors: vec![
            connector(
                VERIFIABLE_SOURCE_CONNECTOR_CLASS,
                ConnectorType::Source,
                || Box::new(VerifiableSourceConnector::new()),
            ),
            connector(VERIFIABLE_SINK_CONNECTOR_CLASS, ConnectorType::Sink, || {
                Box::new(VerifiableSinkConnector::new())
            }),
            connector(MOCK_SOURCE_CONNECTOR_CLASS, ConnectorType::Source, || {
                Box::new(MockSourceConnector::new())
            }),
            connector(MOCK_SINK_CONNECTOR_CLASS, ConnectorType::Sink, || {
                Box::new(MockSinkConnector::new())
            }),
            connector(FLAKY_SOURCE_CONNECTOR_CLASS, ConnectorType::Source, || {
                Box::new(FlakySourceConnector::new())
            }),
        ],
        tasks: vec![
            TaskPlugin {
                class: VERIFIABLE_SOURCE_TASK_CLASS,
                new: TaskFactory::async_source(|| Box::new(AsyncVerifiableSourceTask::new())),
            },
            TaskPlugin {
                class: VERIFIABLE_SINK_TASK_CLASS,
                new: TaskFactory::async_sink(|| Box::new(AsyncVerifiableSinkTask::new())),
            },
            TaskPlugin {
                class: MOCK_SOURCE_TASK_CLASS,
                new: TaskFactory::source(|| Box::new(MockSourceTask::new())),
            },
            TaskPlugin {
                class: MOCK_SINK_TASK_CLASS,
                new: TaskFactory::sink(|| Box::new(MockSinkTask::new())),
            },
            TaskPlugin {
                class: FLAKY_SOURCE_TASK_CLASS,
                new: TaskFactory::source(|| Box::new(FlakySourceTask::new())),
            },
        ],
        converters: Vec::new(),
        header_converters: Vec::new(),
        transformations: vec![TransformationPlugin::of::<TestTransformation>(
            TEST_TRANSFORMATION_CLASS,
            VERSION,
        )],
        predicates: vec![PredicatePlugin::of::<TestPredicate>(
            TEST_PREDICATE_CLASS,
            VERSION,
        )],
        metric_collectors: Vec::new(),
        previews: Vec::new(),
        native_defaults: Vec::new(),
    }
}

/// Time as the testing tasks see it: wall-clock milliseconds and a way to wait.
///
/// Tasks use [`SystemClock`]; unit tests substitute a simulated clock so that rate limits can be
/// checked by counting records over simulated time rather than by measuring real time.
pub(crate) trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// Waits for `d` (a simulated clock just advances).
    fn sleep(&self, d: Duration);
    /// Waits for `d` or until `stop` is set, whichever comes first; returns whether `stop` is
    /// set. The real clock wakes at once on a stop; a simulated one advances in slices.
    fn wait_for_stop(&self, d: Duration, stop: &tributary_api::source::StopSignal) -> bool {
        let mut left = d;
        while !left.is_zero() && !stop.is_stopped() {
            let slice = left.min(Duration::from_millis(100));
            self.sleep(slice);
            left -= slice;
        }
        stop.is_stopped()
    }
}

/// The real clock.
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
    fn wait_for_stop(&self, d: Duration, stop: &tributary_api::source::StopSignal) -> bool {
        stop.wait(d)
    }
}

/// Milliseconds since the Unix epoch (Java's `System.currentTimeMillis()`).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Writes one line to standard output, the channel Kafka's system tests read these connectors'
/// reports from. Write errors (a closed stdout) are ignored rather than failing the task.
pub(crate) fn print_line(line: &str) {
    if cfg!(test) {
        // Goes through the test harness's output capture.
        println!("{line}");
    } else {
        let mut out = std::io::stdout().lock();
        // Ignored on purpose (see above): a closed stdout must not fail the task.
        writeln!(out, "{line}").and_then(|()| out.flush()).ok();
    }
}

/// A Connect value as JSON, for the report lines: numbers, strings, booleans and null as they
/// are, bytes as base64 (as Jackson writes `byte[]`), arrays as arrays, maps with string keys
/// and structs as objects (a map with other keys as an array of `[key, value]` pairs), logical
/// values as their underlying numbers or decimal string.
pub(crate) fn value_to_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Null => J::Null,
        Value::Int8(v) => J::from(*v),
        Value::Int16(v) => J::from(*v),
        Value::Int32(v) | Value::Date(v) | Value::Time(v) => J::from(*v),
        Value::Int64(v) | Value::Timestamp(v) => J::from(*v),
        Value::Float32(v) => J::from(*v as f64),
        Value::Float64(v) => J::from(*v),
        Value::Boolean(v) => J::from(*v),
        Value::String(s) => J::from(s.as_str()),
        Value::Bytes(b) => J::from(STANDARD.encode(b)),
        Value::Array(items) => J::Array(items.iter().map(value_to_json).collect()),
        Value::Map(entries) => {
            if entries.iter().all(|(k, _)| matches!(k, Value::String(_))) {
                J::Object(
                    entries
                        .iter()
                        .map(|(k, v)| (k.as_str().unwrap_or("").to_string(), value_to_json(v)))
                        .collect(),
                )
            } else {
                J::Array(
                    entries
                        .iter()
                        .map(|(k, v)| J::Array(vec![value_to_json(k), value_to_json(v)]))
                        .collect(),
                )
            }
        }
        Value::Struct(s) => J::Object(
            s.schema()
                .fields
                .iter()
                .map(|f| {
                    (
                        f.name.clone(),
                        value_to_json(s.get(&f.name).unwrap_or(&Value::Null)),
                    )
                })
                .collect(),
        ),
        Value::Decimal(d) => J::from(d.to_plain_string()),
    }
}

/// Parses an integer config value the way Java's `Integer.parseInt` / `Long.parseLong` do
/// (no surrounding whitespace, optional sign); `None` when absent or malformed.
pub(crate) fn parse_int<T: std::str::FromStr>(raw: Option<&String>) -> Option<T> {
    raw.and_then(|s| s.parse::<T>().ok())
}

/// The `seqno` of a committed source offset, as an integer.
pub(crate) fn offset_seqno(offset: &tributary_api::record::SourceMap, field: &str) -> Option<i64> {
    let v = offset.get(field)?;
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers shared by the testing connectors' unit tests.

    use std::collections::HashMap;
    use std::sync::atomic::{AtomicI64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tributary_api::record::SourceMap;
    use tributary_api::source::{OffsetStorageReader, SourceTaskContext};
    use tributary_api::{ConnectResult, Props};

    use super::Clock;

    /// Committed offsets in memory, keyed by the partition's JSON.
    #[derive(Default)]
    pub struct MemOffsets(Mutex<HashMap<String, SourceMap>>);

    impl MemOffsets {
        /// Stores `offset` for `partition`.
        pub fn put(&self, partition: serde_json::Value, offset: serde_json::Value) {
            let offset = match offset {
                serde_json::Value::Object(m) => m,
                _ => panic!("offset must be an object"),
            };
            self.0.lock().unwrap().insert(partition.to_string(), offset);
        }
    }

    impl OffsetStorageReader for MemOffsets {
        fn offset(&self, partition: &SourceMap) -> ConnectResult<Option<SourceMap>> {
            let key = serde_json::Value::Object(partition.clone()).to_string();
            Ok(self.0.lock().unwrap().get(&key).cloned())
        }
    }

    /// A source task context over `offsets`, with its stop flag.
    pub fn context(
        props: &Props,
        offsets: Arc<MemOffsets>,
    ) -> (SourceTaskContext, tributary_api::source::StopSignal) {
        let stopping = tributary_api::source::StopSignal::new();
        (
            SourceTaskContext {
                config: props.clone(),
                offset_reader: offsets,
                stopping: stopping.clone(),
                transaction_context: None,
                plugin_metrics: Default::default(),
            },
            stopping,
        )
    }

    /// Props from pairs.
    pub fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A simulated clock: every reading advances it by one millisecond (time passes while a
    /// task works) and sleeping advances it by the slept duration, without waiting.
    pub struct FakeClock(pub AtomicI64);

    impl FakeClock {
        /// A clock at `start_ms`.
        pub fn at(start_ms: i64) -> Arc<FakeClock> {
            Arc::new(FakeClock(AtomicI64::new(start_ms)))
        }
        /// The current simulated time, without advancing it.
        pub fn peek(&self) -> i64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    impl Clock for FakeClock {
        fn now_ms(&self) -> i64 {
            self.0.fetch_add(1, Ordering::SeqCst) + 1
        }
        fn sleep(&self, d: Duration) {
            self.0.fetch_add(d.as_millis() as i64, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_are_registered_with_matching_tasks() {
        let set = plugins();
        assert_eq!(set.connectors.len(), 5);
        assert_eq!(set.tasks.len(), 5);
        for c in &set.connectors {
            let connector = (c.new)();
            assert_eq!(connector.connector_type(), c.connector_type, "{}", c.class);
            assert_eq!(connector.version(), VERSION);
            let task_class = connector.task_class();
            let task = set
                .tasks
                .iter()
                .find(|t| t.class == task_class)
                .unwrap_or_else(|| panic!("task of {} registered", c.class));
            match (c.connector_type, &task.new) {
                (ConnectorType::Source, TaskFactory::Source(f)) => {
                    assert_eq!(f().version(), VERSION)
                }
                (ConnectorType::Source, TaskFactory::AsyncSource(f)) => {
                    assert_eq!(f().version(), VERSION)
                }
                (ConnectorType::Sink, TaskFactory::Sink(f)) => assert_eq!(f().version(), VERSION),
                (ConnectorType::Sink, TaskFactory::AsyncSink(f)) => {
                    assert_eq!(f().version(), VERSION)
                }
                _ => panic!("task kind does not match connector kind for {}", c.class),
            }
        }
    }

    #[test]
    fn values_render_as_json() {
        let m = Value::Map(vec![(Value::from("a"), Value::Int32(1))]);
        assert_eq!(value_to_json(&m), serde_json::json!({"a": 1}));
        assert_eq!(value_to_json(&Value::Int64(7)), serde_json::json!(7));
        assert_eq!(
            value_to_json(&Value::Bytes(b"hi".to_vec())),
            serde_json::json!("aGk=")
        );
        assert_eq!(value_to_json(&Value::Null), serde_json::Value::Null);
    }
}
