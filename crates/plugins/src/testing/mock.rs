//! The Mock connectors (Kafka's `org.apache.kafka.connect.tools.MockConnector`,
//! `MockSourceConnector`, `MockSinkConnector`, `MockSourceTask` and `MockSinkTask`).
//!
//! They move no data. Kafka's system tests use them to watch how a cluster reports failures:
//! - `mock_mode` = `connector-failure`: the connector, once started, reports an error to the
//!   runtime (through [`ConnectorContext::raise_error`]) from a timer thread after `delay_ms`.
//! - `mock_mode` = `task-failure`: every task fails once more than `delay_ms` passed since it
//!   started, at its next `poll` (source) or `put` (sink).
//! - `mock_mode` = `task-hang` (Tributary's, not Kafka's): every task's `poll` (source) or
//!   `put` (sink) blocks for 10 minutes once more than `delay_ms` passed since it started,
//!   ignoring stop requests, as a hung plugin would (the stalled-task tests of issue #36).
//! - any other mode, or none: nothing happens.
//!
//! `delay_ms` defaults to [`DEFAULT_FAILURE_DELAY_MS`] (15 s). The connector always creates a
//! single task, whose config is the connector's config. No config keys are declared.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::debug;
use tributary_api::config::ConfigDef;
use tributary_api::connector::{Connector, ConnectorContext, ConnectorType};
use tributary_api::record::{SinkRecord, SourceRecord};
use tributary_api::sink::SinkTask;
use tributary_api::source::{SourceTask, SourceTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::{MOCK_SINK_TASK_CLASS, MOCK_SOURCE_TASK_CLASS, VERSION};

/// Config key `mock_mode`: which failure to simulate.
pub const MOCK_MODE_KEY: &str = "mock_mode";
/// Config key `delay_ms`: how long after start the failure happens, in milliseconds.
pub const DELAY_MS_KEY: &str = "delay_ms";
/// `mock_mode` value that fails the connector.
pub const CONNECTOR_FAILURE: &str = "connector-failure";
/// `mock_mode` value that fails the tasks.
pub const TASK_FAILURE: &str = "task-failure";
/// `mock_mode` value that makes the tasks hang (Tributary's).
pub const TASK_HANG: &str = "task-hang";
/// How long a hanging task's call blocks.
const HANG: Duration = Duration::from_secs(600);
/// Default of `delay_ms`: 15 seconds, as in Kafka.
pub const DEFAULT_FAILURE_DELAY_MS: u64 = 15_000;

/// Longest a mock source task's `poll` waits before returning no records.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// Reads `delay_ms`, or the default when absent; a negative delay counts as zero. Errors when
/// it is not an integer.
fn failure_delay(config: &Props) -> ConnectResult<Duration> {
    match config.get(DELAY_MS_KEY) {
        None => Ok(Duration::from_millis(DEFAULT_FAILURE_DELAY_MS)),
        Some(raw) => raw
            .parse::<i64>()
            .map(|ms| Duration::from_millis(ms.max(0) as u64))
            .map_err(|_| {
                ConnectError::config(format!(
                    "Invalid value {raw} for configuration {DELAY_MS_KEY}: not an integer"
                ))
            }),
    }
}

/// A cancellable one-shot timer thread.
struct FailureTimer {
    cancelled: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl FailureTimer {
    /// Runs `action` after `delay` on a new thread unless cancelled first.
    fn start(delay: Duration, action: impl FnOnce() + Send + 'static) -> FailureTimer {
        let cancelled = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = cancelled.clone();
        let thread = std::thread::Builder::new()
            .name("mock-connector-failure".into())
            .spawn(move || {
                let (lock, cvar) = &*flag;
                let deadline = Instant::now() + delay;
                let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !*done {
                    let now = Instant::now();
                    if now >= deadline {
                        drop(done);
                        action();
                        return;
                    }
                    done = cvar
                        .wait_timeout(done, deadline - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            })
            .expect("spawn mock connector timer thread");
        FailureTimer { cancelled, thread }
    }

    /// Cancels the timer (if it has not fired) and waits for its thread.
    fn cancel(self) {
        let (lock, cvar) = &*self.cancelled;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cvar.notify_all();
        if self.thread.join().is_err() {
            tracing::warn!("the mock connector's failure timer thread panicked");
        }
    }
}

/// The behaviour shared by [`MockSourceConnector`] and [`MockSinkConnector`]
/// (Kafka's `org.apache.kafka.connect.tools.MockConnector`): schedules the connector failure
/// and hands out one task config. Not a plugin by itself.
#[derive(Default)]
pub struct MockConnector {
    context: Option<Arc<dyn ConnectorContext>>,
    config: Props,
    timer: Option<FailureTimer>,
}

impl MockConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the context through which the failure is reported.
    pub fn initialize(&mut self, context: Arc<dyn ConnectorContext>) {
        self.context = Some(context);
    }

    /// Keeps the config; in `connector-failure` mode, starts the timer that raises the error.
    /// Errors when `delay_ms` is not an integer.
    pub fn start(&mut self, config: &Props) -> ConnectResult<()> {
        self.config = config.clone();
        if let Some(timer) = self.timer.take() {
            timer.cancel();
        }
        if config.get(MOCK_MODE_KEY).map(String::as_str) == Some(CONNECTOR_FAILURE) {
            let delay = failure_delay(config)?;
            debug!(
                "Started MockConnector with failure delay of {} ms",
                delay.as_millis()
            );
            let context = self.context.clone();
            self.timer = Some(FailureTimer::start(delay, move || {
                debug!("Triggering connector failure");
                match context {
                    Some(ctx) => ctx.raise_error(format!(
                        "MockConnector failure triggered by {MOCK_MODE_KEY}={CONNECTOR_FAILURE} after {} ms",
                        delay.as_millis()
                    )),
                    None => tracing::warn!("MockConnector has no context to report its failure to"),
                }
            }));
        }
        Ok(())
    }

    /// One task config: the connector's config.
    pub fn task_configs(&mut self, _max_tasks: usize) -> ConnectResult<Vec<Props>> {
        debug!("Creating single task for MockConnector");
        Ok(vec![self.config.clone()])
    }

    /// Cancels a pending failure and waits for the timer thread.
    pub fn stop(&mut self) -> ConnectResult<()> {
        if let Some(timer) = self.timer.take() {
            timer.cancel();
        }
        Ok(())
    }
}

impl Drop for MockConnector {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.cancel();
        }
    }
}

macro_rules! mock_connector {
    ($(#[$doc:meta])* $name:ident, $kind:expr, $task_class:expr) => {
        $(#[$doc])*
        #[derive(Default)]
        pub struct $name {
            delegate: MockConnector,
        }

        impl $name {
            /// A connector that has not been started.
            pub fn new() -> Self {
                Self::default()
            }
        }

        impl Connector for $name {
            fn version(&self) -> String {
                VERSION.to_string()
            }
            fn connector_type(&self) -> ConnectorType {
                $kind
            }
            fn task_class(&self) -> String {
                $task_class.to_string()
            }
            fn initialize(&mut self, context: Arc<dyn ConnectorContext>) {
                self.delegate.initialize(context);
            }
            fn start(&mut self, props: &Props) -> ConnectResult<()> {
                self.delegate.start(props)
            }
            fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
                self.delegate.task_configs(max_tasks)
            }
            fn stop(&mut self) -> ConnectResult<()> {
                self.delegate.stop()
            }
            fn config(&self) -> ConfigDef {
                ConfigDef::new()
            }
        }
    };
}

mock_connector!(
    /// A source connector that produces nothing and fails on request
    /// (Kafka's `org.apache.kafka.connect.tools.MockSourceConnector`); see the module docs.
    MockSourceConnector,
    ConnectorType::Source,
    MOCK_SOURCE_TASK_CLASS
);

mock_connector!(
    /// A sink connector that consumes and drops records and fails on request
    /// (Kafka's `org.apache.kafka.connect.tools.MockSinkConnector`); see the module docs.
    MockSinkConnector,
    ConnectorType::Sink,
    MOCK_SINK_TASK_CLASS
);

/// When a mock task is due to fail, if it is in `task-failure` mode.
#[derive(Debug, Default)]
struct TaskFailure {
    /// Start time and delay.
    armed: Option<(Instant, Duration)>,
    /// `task-hang` rather than `task-failure`.
    hang: bool,
}

impl TaskFailure {
    fn from_config(config: &Props) -> ConnectResult<TaskFailure> {
        let mode = config.get(MOCK_MODE_KEY).map(String::as_str);
        if mode != Some(TASK_FAILURE) && mode != Some(TASK_HANG) {
            return Ok(TaskFailure::default());
        }
        let delay = failure_delay(config)?;
        Ok(TaskFailure {
            armed: Some((Instant::now(), delay)),
            hang: mode == Some(TASK_HANG),
        })
    }

    /// An error once strictly more than the delay has passed since start.
    fn check(&self, what: &str) -> ConnectResult<()> {
        match self.armed {
            Some((started, delay)) if started.elapsed() > delay && self.hang => {
                debug!("{what} hangs");
                // A hung plugin: deaf to stop requests for the whole time.
                std::thread::sleep(HANG);
                Ok(())
            }
            Some((started, delay)) if started.elapsed() > delay => {
                debug!("Triggering {what} failure");
                Err(ConnectError::connect(format!(
                    "Mock{what} failure triggered by {MOCK_MODE_KEY}={TASK_FAILURE} after {} ms",
                    delay.as_millis()
                )))
            }
            _ => Ok(()),
        }
    }

    /// How long until the failure is due (`None`: never).
    fn remaining(&self) -> Option<Duration> {
        self.armed
            .map(|(started, delay)| delay.saturating_sub(started.elapsed()))
    }
}

/// The task of [`MockSourceConnector`] (Kafka's `org.apache.kafka.connect.tools.MockSourceTask`):
/// returns no records; in `task-failure` mode its `poll` fails once `delay_ms` passed.
#[derive(Default)]
pub struct MockSourceTask {
    context: Option<SourceTaskContext>,
    failure: TaskFailure,
}

impl MockSourceTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SourceTask for MockSourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Errors when `delay_ms` is not an integer (in `task-failure` mode).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.failure = TaskFailure::from_config(props)?;
        Ok(())
    }

    /// Fails when due; otherwise waits up to 100 ms (less when the failure is due sooner, none
    /// when stopping) and returns no records.
    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        self.failure.check("SourceTask")?;
        let stopping = self.context.as_ref().is_some_and(|c| c.is_stopping());
        if !stopping {
            let wait = match self.failure.remaining() {
                // Sleep just past the due time so the next poll fails.
                Some(left) => (left + Duration::from_millis(1)).min(IDLE_POLL),
                None => IDLE_POLL,
            };
            std::thread::sleep(wait);
        }
        Ok(Vec::new())
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
}

/// The task of [`MockSinkConnector`] (Kafka's `org.apache.kafka.connect.tools.MockSinkTask`):
/// drops what it receives; in `task-failure` mode its `put` fails once `delay_ms` passed.
///
/// Kafka's task asks the framework for a `put` call at least every 250 ms so that the failure
/// is noticed even without data; Tributary's sink loop calls `put` (possibly with no records)
/// after every consumer poll, at least every half second.
#[derive(Debug, Default)]
pub struct MockSinkTask {
    failure: TaskFailure,
}

impl MockSinkTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SinkTask for MockSinkTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    /// Errors when `delay_ms` is not an integer (in `task-failure` mode).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.failure = TaskFailure::from_config(props)?;
        Ok(())
    }

    /// Fails when due; otherwise drops the records.
    fn put(&mut self, _records: &[SinkRecord]) -> ConnectResult<()> {
        self.failure.check("SinkTask")
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{context, props};
    use super::*;
    use std::sync::mpsc;

    /// Records raised errors and forwards them to a channel.
    struct ChannelContext(Mutex<mpsc::Sender<String>>);

    impl ConnectorContext for ChannelContext {
        fn request_task_reconfiguration(&self) {}
        fn raise_error(&self, message: String) {
            // The test may have stopped listening; its assertions read what arrived.
            self.0.lock().unwrap().send(message).ok();
        }
    }

    fn connector_with_channel(connector: &mut dyn Connector) -> mpsc::Receiver<String> {
        let (tx, rx) = mpsc::channel();
        connector.initialize(Arc::new(ChannelContext(Mutex::new(tx))));
        rx
    }

    #[test]
    fn one_task_config_equal_to_the_connector_config() {
        let p = props(&[("mock_mode", "task-failure"), ("delay_ms", "5"), ("x", "y")]);
        let mut source = MockSourceConnector::new();
        source.start(&p).unwrap();
        assert_eq!(source.task_configs(5).unwrap(), vec![p.clone()]);
        source.stop().unwrap();
        let mut sink = MockSinkConnector::new();
        sink.start(&p).unwrap();
        assert_eq!(sink.task_configs(3).unwrap(), vec![p]);
        sink.stop().unwrap();
        assert_eq!(source.connector_type(), ConnectorType::Source);
        assert_eq!(sink.connector_type(), ConnectorType::Sink);
        assert_eq!(source.task_class(), MOCK_SOURCE_TASK_CLASS);
        assert_eq!(sink.task_class(), MOCK_SINK_TASK_CLASS);
    }

    #[test]
    fn connector_failure_raises_an_error_after_the_delay() {
        for connector in [
            &mut MockSourceConnector::new() as &mut dyn Connector,
            &mut MockSinkConnector::new(),
        ] {
            let rx = connector_with_channel(connector);
            let started = Instant::now();
            connector
                .start(&props(&[
                    ("mock_mode", "connector-failure"),
                    ("delay_ms", "50"),
                ]))
                .unwrap();
            let message = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("raise_error called");
            assert!(started.elapsed() >= Duration::from_millis(50));
            assert!(message.contains("connector-failure"), "{message}");
            connector.stop().unwrap();
            assert!(rx.try_recv().is_err(), "raised once");
        }
    }

    #[test]
    fn stopping_cancels_a_pending_connector_failure() {
        let mut connector = MockSourceConnector::new();
        let rx = connector_with_channel(&mut connector);
        connector
            .start(&props(&[("mock_mode", "connector-failure")]))
            .unwrap();
        let started = Instant::now();
        connector.stop().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "stop is prompt");
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    }

    #[test]
    fn other_modes_do_nothing_and_bad_delays_are_rejected() {
        let mut connector = MockSinkConnector::new();
        let rx = connector_with_channel(&mut connector);
        connector
            .start(&props(&[("mock_mode", "task-failure"), ("delay_ms", "0")]))
            .unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        connector.stop().unwrap();
        assert!(connector
            .start(&props(&[
                ("mock_mode", "connector-failure"),
                ("delay_ms", "soon")
            ]))
            .is_err());
        assert!(MockSinkTask::new()
            .start(&props(&[
                ("mock_mode", "task-failure"),
                ("delay_ms", "1.5")
            ]))
            .is_err());
    }

    #[test]
    fn source_task_fails_at_poll_after_the_delay() {
        let p = props(&[("mock_mode", "task-failure"), ("delay_ms", "30")]);
        let (ctx, _) = context(&p, Arc::default());
        let mut task = MockSourceTask::new();
        task.initialize(ctx);
        task.start(&p).unwrap();
        let started = Instant::now();
        let mut polls = 0;
        let err = loop {
            match task.poll() {
                Ok(records) => assert!(records.is_empty()),
                Err(e) => break e,
            }
            polls += 1;
            assert!(polls < 1_000, "fails within a bounded number of polls");
        };
        assert!(started.elapsed() >= Duration::from_millis(29));
        assert!(matches!(err, ConnectError::Connect(_)));
    }

    #[test]
    fn source_task_without_failure_mode_idles_and_returns_promptly_when_stopping() {
        let p = props(&[]);
        let (ctx, stopping) = context(&p, Arc::default());
        let mut task = MockSourceTask::new();
        task.initialize(ctx);
        task.start(&p).unwrap();
        assert!(task.poll().unwrap().is_empty());
        stopping.set(true);
        assert!(task.poll().unwrap().is_empty());
    }

    #[test]
    fn sink_task_fails_at_put_after_the_delay() {
        let mut task = MockSinkTask::new();
        task.start(&props(&[("mock_mode", "task-failure"), ("delay_ms", "20")]))
            .unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert!(matches!(task.put(&[]), Err(ConnectError::Connect(_))));

        let mut patient = MockSinkTask::new();
        patient
            .start(&props(&[("mock_mode", "task-failure")]))
            .unwrap();
        patient.put(&[]).unwrap(); // 15 s default delay not yet over
        let mut plain = MockSinkTask::new();
        plain.start(&props(&[("delay_ms", "0")])).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        plain.put(&[]).unwrap();
    }
}
