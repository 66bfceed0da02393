//! The worker (Connect's `Worker`): owns the running connector and task instances of this
//! process, creates their clients and converters, and writes their statuses. The herder decides
//! what runs; the worker runs it. Every connector and task has its own thread, so blocking
//! plugin code never stalls the async runtime, and a failure or panic in one marks only that
//! instance FAILED.

pub mod chain;
pub mod connector;
pub mod connector_offsets;
pub mod consumed_headers;
pub mod converters;
pub mod errors;
pub mod metrics;
pub mod sink_task;
pub mod source_task;
pub mod submitted_records;
pub mod task;
pub mod topic_creation;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tributary_api::connector::{ConnectorContext, ConnectorType};
use tributary_api::plugin::TaskFactory;
use tributary_api::record::{SinkRecord, SourceRecord};
use tributary_api::source::OffsetStorageReader;
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::config::clients;
use crate::config::connector::tasks_max;
use crate::config::errors::ErrorHandlingConfig;
use crate::config::providers;
use crate::config::transforms;
use crate::config::unsupported::{self, unsupported_settings, WorkerSupport};
use crate::config::worker::{prefixed, WorkerConfig};
use crate::plugins::Plugins;
use crate::storage::connector_offset_store::{
    connector_offsets_topic, ConnectorOffsetBackingStore, ConnectorOffsetTopics,
};
use crate::storage::offset::{ConnectorOffsetReader, OffsetBackingStore};
use crate::storage::status::{State, Status, StatusBackingStore};
use crate::ConnectorTaskId;
use chain::TransformationChain;
use connector::WorkerConnector;
pub use task::TargetState;
use task::{error_trace, TaskControl, TaskStatusReporter};

/// A source task's `transactional.id` under exactly-once support: `<group.id>-<connector>-<task>`
/// (Connect's `Worker.taskTransactionalId`).
pub fn task_transactional_id(group_id: &str, connector: &str, task: u32) -> String {
    format!("{group_id}-{connector}-{task}")
}

/// Per-task counters, exposed for tests and benchmarks: how often the task instance was
/// started and stopped on this worker, records moved, offset commits, and records skipped
/// because of a failure that `errors.tolerance=all` tolerated.
#[derive(Debug, Default)]
pub struct TaskCounters {
    pub starts: AtomicU64,
    pub stops: AtomicU64,
    pub records: AtomicU64,
    pub offset_commits: AtomicU64,
    pub skipped: AtomicU64,
    /// Connect's task metric groups (see [`metrics`]).
    pub metrics: metrics::TaskMetrics,
}

impl TaskCounters {
    pub fn record_start(&self) {
        self.starts.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_stop(&self) {
        self.stops.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_produced(&self, n: u64) {
        self.records.fetch_add(n, Ordering::Relaxed);
    }
    pub fn record_consumed(&self, n: u64) {
        self.records.fetch_add(n, Ordering::Relaxed);
    }
    pub fn record_offset_commit(&self) {
        self.offset_commits.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_skipped(&self, n: u64) {
        self.skipped.fetch_add(n, Ordering::Relaxed);
    }
}

/// A snapshot of [`TaskCounters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TaskCountersSnapshot {
    pub starts: u64,
    pub stops: u64,
    pub records: u64,
    pub offset_commits: u64,
    pub skipped: u64,
}

struct RunningTask {
    control: Arc<TaskControl>,
    thread: JoinHandle<()>,
    version: Option<String>,
}

struct RunningConnector {
    instance: Arc<WorkerConnector>,
    target: TargetState,
    /// The config the instance runs with, config provider references resolved.
    config: Props,
    /// The config as stored (references unresolved), for [`providers::reverse_transform`].
    raw_config: Props,
}

/// Connector context handed to connectors: reconfiguration requests go to the herder through
/// `on_reconfigure`; raised errors mark the connector FAILED.
struct WorkerConnectorContext {
    name: String,
    worker_id: String,
    generation: Arc<AtomicI32>,
    statuses: Arc<dyn StatusBackingStore>,
    on_reconfigure: Arc<dyn Fn(String) + Send + Sync>,
    version: Option<String>,
    /// A source connector's offsets (`None` for a sink connector).
    offsets: Option<ConnectorOffsets>,
}

impl ConnectorContext for WorkerConnectorContext {
    fn offset_storage_reader(&self) -> ConnectResult<Option<Arc<dyn OffsetStorageReader>>> {
        self.offsets
            .as_ref()
            .map(ConnectorOffsets::reader)
            .transpose()
    }
    fn request_task_reconfiguration(&self) {
        (self.on_reconfigure)(self.name.clone());
    }
    fn raise_error(&self, message: String) {
        let e = ConnectError::connect(message);
        self.statuses.put_connector(
            &self.name,
            Status {
                state: State::Failed,
                trace: Some(error_trace(&e, &format!("connector {}", self.name))),
                worker_id: self.worker_id.clone(),
                generation: self.generation.load(Ordering::Acquire),
                version: self.version.clone(),
            },
        );
    }
}

/// Connect's `TooManyTasksException`: a connector generated (or has stored) more task configs
/// than its `tasks.max` while `tasks.max.enforce` is true (KIP-1004).
pub struct TooManyTasks(pub ConnectError);

impl TooManyTasks {
    /// The status trace, naming Connect's exception class.
    pub fn trace(&self, context: &str) -> String {
        format!(
            "org.apache.kafka.connect.runtime.TooManyTasksException: {}\n\tat {context}\n",
            self.0
        )
    }
}

/// Connect's `Worker.checkTasksMax`: `num_tasks` task configs for connector `name` whose
/// `tasks.max` is `max`. More than `max` is an error while `tasks.max.enforce` (deprecated,
/// default true) holds, a warning otherwise.
pub fn check_tasks_max(
    name: &str,
    num_tasks: usize,
    max: usize,
    connector_config: &Props,
) -> Result<(), TooManyTasks> {
    if num_tasks <= max {
        return Ok(());
    }
    let enforce = connector_config
        .get("tasks.max.enforce")
        .map(|v| !v.trim().eq_ignore_ascii_case("false"))
        .unwrap_or(true);
    if enforce {
        return Err(TooManyTasks(ConnectError::connect(format!(
            "The connector {name} has generated {num_tasks} tasks, which is greater than {max}, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect."
        ))));
    }
    tracing::warn!(
        connector = name,
        "connector {name} generated {num_tasks} task configs, more than its tasks.max of {max}; running them since tasks.max.enforce is false (deprecated: a future Kafka Connect will always refuse this; the connector's taskConfigs should respect maxTasks)"
    );
    Ok(())
}

/// The offset store of a source connector with `connector_config` ([`Worker::offset_store_for`]):
/// `worker`, or, on a distributed worker (`topics`) when the connector names its own
/// `offsets.storage.topic`, a [`ConnectorOffsetBackingStore`] over that topic and `worker`
/// (the topic created and read to its end first: this blocks).
fn offset_store_for(
    worker: &Arc<dyn OffsetBackingStore>,
    topics: Option<&Arc<ConnectorOffsetTopics>>,
    connector_config: &Props,
) -> ConnectResult<Arc<dyn OffsetBackingStore>> {
    let Some(topics) = topics else {
        // As in Connect, a standalone worker keeps every connector's offsets in its own
        // store; said rather than silently accepted.
        if let Some(topic) = connector_offsets_topic(connector_config) {
            tracing::warn!(
                connector = connector_config.get("name").map(String::as_str).unwrap_or(""),
                topic,
                "offsets.storage.topic applies to distributed workers only: this worker keeps the connector's offsets in its own offset store"
            );
        }
        return Ok(worker.clone());
    };
    let Some(topic) =
        connector_offsets_topic(connector_config).filter(|t| t != topics.worker_topic())
    else {
        return Ok(worker.clone());
    };
    let connector = topics.store(&topic).map_err(|e| {
        ConnectError::connect(format!(
            "Failed to read the connector's offsets topic {topic}: {e}"
        ))
    })?;
    Ok(Arc::new(ConnectorOffsetBackingStore {
        connector,
        worker: worker.clone(),
        topic,
    }))
}

/// A source connector's `SourceConnectorContext.offsetStorageReader()`: its offset store,
/// opened on first use (on the connector's thread: a connector-specific offsets topic is read
/// to its end then) and kept.
struct ConnectorOffsets {
    name: String,
    config: Props,
    worker: Arc<dyn OffsetBackingStore>,
    topics: Option<Arc<ConnectorOffsetTopics>>,
    reader: std::sync::OnceLock<Arc<dyn OffsetStorageReader>>,
}

impl ConnectorOffsets {
    fn reader(&self) -> ConnectResult<Arc<dyn OffsetStorageReader>> {
        if let Some(r) = self.reader.get() {
            return Ok(r.clone());
        }
        let store = offset_store_for(&self.worker, self.topics.as_ref(), &self.config)?;
        let reader: Arc<dyn OffsetStorageReader> = Arc::new(ConnectorOffsetReader {
            connector: self.name.clone(),
            store,
        });
        Ok(self.reader.get_or_init(|| reader).clone())
    }
}

/// The outcome of a connector's asynchronous start ([`Worker::start_connector`]).
pub struct ConnectorStart(mpsc::Receiver<ConnectResult<()>>);

impl ConnectorStart {
    /// Waits for the connector's `start` to return (at once for PAUSED and STOPPED targets).
    pub fn wait(self) -> ConnectResult<()> {
        self.0.recv().unwrap_or_else(|_| {
            Err(ConnectError::connect(
                "the connector was shut down before it started",
            ))
        })
    }

    /// Waits at most `timeout`; `None` when `start` is still running.
    pub fn wait_for(self, timeout: Duration) -> Option<ConnectResult<()>> {
        match self.0.recv_timeout(timeout) {
            Ok(r) => Some(r),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => Some(Err(ConnectError::connect(
                "the connector was shut down before it started",
            ))),
        }
    }
}

/// The herder's part in starting exactly-once source tasks (KIP-618), which the worker calls
/// from the task's thread (blocking calls).
pub trait ExactlyOnceCoordinator: Send + Sync {
    /// The round of zombie fencing that must precede the start of task `id` (Connect's
    /// `fenceZombieSourceTasks(ConnectorTaskId)`): done by the leader, asked for with the
    /// internal `PUT /connectors/{c}/fence` from other workers.
    fn fence_before_start(&self, id: &ConnectorTaskId) -> ConnectResult<()>;
    /// The connector's current task-config generation (`None` before its first commit).
    fn task_generation(&self, connector: &str) -> Option<u32>;
    /// Errors unless `generation` is still the connector's latest and task `id` is still
    /// assigned to this worker (Connect's `verifyTaskGenerationAndOwnership`).
    fn verify_generation(&self, id: &ConnectorTaskId, generation: Option<u32>)
        -> ConnectResult<()>;
}

/// How long an exactly-once task's producer initialisation or transaction commit may take
/// before the task fails.
const EXACTLY_ONCE_COMMIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The worker: running instances of this process.
pub struct Worker {
    /// This worker's id: the advertised `host:port`.
    pub worker_id: String,
    pub config: WorkerConfig,
    pub plugins: Arc<Plugins>,
    offsets: Arc<dyn OffsetBackingStore>,
    statuses: Arc<dyn StatusBackingStore>,
    /// The group generation statuses are written with (0 in standalone mode).
    pub generation: Arc<AtomicI32>,
    connectors: Mutex<HashMap<String, RunningConnector>>,
    tasks: Mutex<HashMap<ConnectorTaskId, RunningTask>>,
    counters: Mutex<HashMap<ConnectorTaskId, Arc<TaskCounters>>>,
    /// Starts and stops of connector instances on this worker.
    connector_counters: Mutex<HashMap<String, Arc<TaskCounters>>>,
    /// `connect-worker-metrics`' startup counters.
    pub metrics: Arc<metrics::WorkerMetrics>,
    on_reconfigure: Arc<dyn Fn(String) + Send + Sync>,
    /// Set by the distributed herder when `exactly.once.source.support=enabled`.
    exactly_once: std::sync::OnceLock<Arc<dyn ExactlyOnceCoordinator>>,
    /// Set by the distributed herder: the connector-specific offsets topics (KIP-618) this
    /// worker follows. Unset (standalone), `offsets.storage.topic` does not apply.
    connector_offset_topics: std::sync::OnceLock<Arc<ConnectorOffsetTopics>>,
}

impl Worker {
    /// Hands the worker the herder's side of exactly-once source tasks (once, before any task
    /// starts).
    pub fn set_exactly_once_coordinator(&self, coordinator: Arc<dyn ExactlyOnceCoordinator>) {
        if self.exactly_once.set(coordinator).is_err() {
            tracing::warn!("the exactly-once coordinator was set already; keeping the first");
        }
    }

    /// The settings of an exactly-once source task `id` (KIP-618), `None` when the worker does
    /// not run source tasks exactly once. Errors for settings it cannot run.
    fn exactly_once_args(
        &self,
        id: &ConnectorTaskId,
        connector_config: &Props,
        producer: &mut rdkafka::ClientConfig,
    ) -> ConnectResult<Option<source_task::ExactlyOnceArgs>> {
        let settings = self.config.settings();
        let Some(distributed) = settings
            .distributed()
            .filter(|d| d.exactly_once_source_support.enabled())
        else {
            return Ok(None);
        };
        let coordinator = self.exactly_once.get().cloned().ok_or_else(|| {
            ConnectError::connect("exactly-once source support is enabled but this worker has no herder to fence zombies")
        })?;
        let setting = |key: &str| {
            connector_config
                .get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let boundary = match setting("transaction.boundary")
            .unwrap_or_else(|| "poll".into())
            .to_ascii_lowercase()
            .as_str()
        {
            "poll" => source_task::TransactionBoundary::Poll,
            "interval" => {
                let every = match setting("transaction.boundary.interval.ms") {
                    None => settings.offset_flush_interval,
                    Some(v) => match v.parse::<u64>() {
                        Ok(ms) => Duration::from_millis(ms),
                        Err(_) => {
                            return Err(ConnectError::config(format!(
                                "Invalid value {v} for configuration transaction.boundary.interval.ms: must be a non-negative number of milliseconds"
                            )))
                        }
                    },
                };
                source_task::TransactionBoundary::Interval(every)
            }
            "connector" => {
                // Validation asked the connector (Connect's check); asked again here for a
                // config that arrived another way (a Java worker's, say), since a task that
                // cannot end its transactions would never commit anything.
                let class = setting("connector.class").unwrap_or_default();
                let supported = self
                    .plugins
                    .new_connector(&class)
                    .map(|c| {
                        c.can_define_transaction_boundaries(connector_config)
                            == tributary_api::connector::ConnectorTransactionBoundaries::Supported
                    })
                    .unwrap_or(false);
                if !supported {
                    return Err(ConnectError::config(format!(
                        "Invalid value connector for configuration transaction.boundary: The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition. (connector class {class})"
                    )));
                }
                source_task::TransactionBoundary::Connector
            }
            other => {
                return Err(ConnectError::config(format!(
                    "Invalid value {other} for configuration transaction.boundary: String must be one of: poll, interval, connector"
                )))
            }
        };
        let transactional_id = task_transactional_id(&distributed.group_id, &id.connector, id.task);
        if let Some(set) = producer
            .get("transactional.id")
            .filter(|v| *v != transactional_id)
        {
            tracing::warn!(task = %id, "overriding transactional.id={set} with {transactional_id}, as Connect does for connectors when exactly-once source support is enabled");
        }
        producer
            .set("transactional.id", &transactional_id)
            .set("enable.idempotence", "true");
        let own_topic = self.connector_offsets_topic(connector_config);
        let generation = coordinator.task_generation(&id.connector);
        let (fence, verify) = (coordinator.clone(), coordinator);
        let (fence_id, verify_id) = (id.clone(), id.clone());
        Ok(Some(source_task::ExactlyOnceArgs {
            boundary,
            // Connect's `offsetStoreForExactlyOnceSourceTask`: offsets go, in the task's
            // transactions, to the connector's own topic when it has one (the worker's topic
            // then gets them after each commit, best-effort), else to the worker's topic.
            secondary_offsets: own_topic.is_some().then(|| self.offsets.clone()),
            offsets_topic: own_topic.unwrap_or_else(|| distributed.offset_storage_topic.clone()),
            pre_producer_check: Box::new(move || fence.fence_before_start(&fence_id)),
            post_producer_check: Box::new(move || verify.verify_generation(&verify_id, generation)),
            commit_timeout: EXACTLY_ONCE_COMMIT_TIMEOUT,
        }))
    }

    /// A worker with no running instances. `on_reconfigure` receives connector names whose
    /// connectors asked for task reconfiguration.
    pub fn new(
        worker_id: String,
        config: WorkerConfig,
        plugins: Arc<Plugins>,
        offsets: Arc<dyn OffsetBackingStore>,
        statuses: Arc<dyn StatusBackingStore>,
        on_reconfigure: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Worker {
        Worker {
            worker_id,
            config,
            plugins,
            offsets,
            statuses,
            generation: Arc::new(AtomicI32::new(0)),
            connectors: Mutex::new(HashMap::new()),
            tasks: Mutex::new(HashMap::new()),
            counters: Mutex::new(HashMap::new()),
            connector_counters: Mutex::new(HashMap::new()),
            metrics: Arc::default(),
            on_reconfigure,
            exactly_once: std::sync::OnceLock::new(),
            connector_offset_topics: std::sync::OnceLock::new(),
        }
    }

    /// Lets source connectors use their own offsets topics (distributed workers; once, before
    /// any connector starts).
    pub fn set_connector_offset_topics(&self, topics: Arc<ConnectorOffsetTopics>) {
        if self.connector_offset_topics.set(topics).is_err() {
            tracing::warn!("the connector offsets topics were set already; keeping the first");
        }
    }

    /// Stops following the connector-specific offsets topics (the worker is stopping).
    pub fn stop_connector_offset_topics(&self) {
        if let Some(topics) = self.connector_offset_topics.get() {
            topics.stop();
        }
    }

    /// The connector-specific offsets topic a source connector with `connector_config` uses,
    /// `None` when it uses the worker's store: no `offsets.storage.topic`, the worker's own
    /// topic, or a worker that does not apply the setting (standalone). Connect's
    /// `Worker.offsetStoreFor*`.
    pub fn connector_offsets_topic(&self, connector_config: &Props) -> Option<String> {
        let topics = self.connector_offset_topics.get()?;
        connector_offsets_topic(connector_config).filter(|t| t != topics.worker_topic())
    }

    /// The offset store of a source connector with `connector_config` (after its config
    /// provider references are resolved): the worker's, or a [`ConnectorOffsetBackingStore`]
    /// over the connector's own offsets topic and the worker's (the topic created and read to
    /// its end first: this blocks). Errors when the connector's topic cannot be created or read.
    pub fn offset_store_for(
        &self,
        connector_config: &Props,
    ) -> ConnectResult<Arc<dyn OffsetBackingStore>> {
        offset_store_for(
            &self.offsets,
            self.connector_offset_topics.get(),
            connector_config,
        )
    }

    fn put_connector_status_version(
        &self,
        name: &str,
        state: State,
        trace: Option<String>,
        version: Option<String>,
    ) {
        self.statuses.put_connector(
            name,
            Status {
                state,
                trace,
                worker_id: self.worker_id.clone(),
                generation: self.generation.load(Ordering::Acquire),
                version,
            },
        );
    }

    /// The plugin version of a connector class (what statuses carry, KIP-891).
    fn plugin_version(&self, class: &str) -> Option<String> {
        self.plugins
            .connector_plugin(class)
            .ok()
            .map(|p| p.version.to_string())
    }

    /// The version of the connector instance this worker runs under `name`, if any.
    pub fn connector_version(&self, name: &str) -> Option<String> {
        let class = self
            .connectors
            .lock()
            .unwrap()
            .get(name)
            .and_then(|c| c.config.get("connector.class").cloned())?;
        self.plugin_version(&class)
    }

    /// The statuses store.
    pub fn statuses(&self) -> &Arc<dyn StatusBackingStore> {
        &self.statuses
    }

    /// The worker's source offset store (the offsets topic, or the standalone offsets file).
    pub fn offset_store(&self) -> Arc<dyn OffsetBackingStore> {
        self.offsets.clone()
    }

    /// `config` with the worker's config provider references resolved (Connect's
    /// `WorkerConfigTransformer.transform`); `what` names the instance, e.g. `connector c`, in
    /// the error, which names the key, the reference and the provider.
    pub fn resolve_config(&self, what: &str, config: &Props) -> ConnectResult<Props> {
        self.config
            .providers()
            .transform(what, config)
            .map_err(|e| {
                ConnectError::config(format!(
                    "Failed to resolve the configuration of {what}: {e}"
                ))
            })
    }

    /// Starts a connector instance in `target` state. `config` is the connector's config as
    /// stored: its config provider references are resolved here ([`Self::resolve_config`]), and
    /// the instance gets the resolved values. Problems found before the plugin runs (a provider
    /// that fails, unknown class, settings Tributary does not implement) mark it FAILED and are
    /// returned.
    /// Otherwise the instance is created and, for STARTED, its `start` runs on the connector's
    /// own thread: this call does not wait for it (Connect's asynchronous `startConnector`).
    /// When `start` returns, RUNNING (and a task reconfiguration request through
    /// `on_reconfigure`) or FAILED with a trace is written; PAUSED and STOPPED are written at
    /// once. The returned [`ConnectorStart`] can be waited on for the outcome.
    pub fn start_connector(
        &self,
        name: &str,
        raw_config: Props,
        target: TargetState,
    ) -> ConnectResult<ConnectorStart> {
        let config = match self.resolve_config(&format!("connector {name}"), &raw_config) {
            Ok(c) => c,
            Err(e) => {
                let class = raw_config
                    .get("connector.class")
                    .cloned()
                    .unwrap_or_default();
                tracing::error!(connector = name, error = %e, "connector cannot start");
                self.metrics.connector_started(false);
                self.put_connector_status_version(
                    name,
                    State::Failed,
                    Some(error_trace(&e, &format!("connector {name}"))),
                    self.plugin_version(&class),
                );
                return Err(e);
            }
        };
        let class = config.get("connector.class").cloned().unwrap_or_default();
        let version = self.plugin_version(&class);
        // As Connect's `ConnectorConfig` (built when the connector starts), invalid
        // transformation, predicate or error handling settings fail the connector.
        let refused = self.plugins.connector_type(&class).and_then(|kind| {
            self.refusal(name, &config, kind)
                .or_else(|| transforms::check(&self.plugins, &config))
                .or_else(|| {
                    ErrorHandlingConfig::from_props(&config, kind)
                        .err()
                        .map(|e| e.to_string())
                })
                .or_else(|| {
                    self.topic_creation(&config, kind)
                        .err()
                        .map(|e| e.to_string())
                })
        });
        let instance = match (refused, self.plugins.new_connector(&class)) {
            (None, Ok(c)) => c,
            (refused, created) => {
                let e = match (refused, created) {
                    (Some(message), _) => ConnectError::config(message),
                    (None, Err(e)) => ConnectError::config(e.to_string()),
                    (None, Ok(_)) => unreachable!("handled above"),
                };
                tracing::error!(connector = name, error = %e, "connector cannot start");
                self.metrics.connector_started(false);
                // Connect fails the connector before its `WorkerConnector` exists, so the
                // status carries no version.
                self.put_connector_status_version(
                    name,
                    State::Failed,
                    Some(error_trace(&e, &format!("connector {name}"))),
                    None,
                );
                return Err(e);
            }
        };
        let ctx = Arc::new(WorkerConnectorContext {
            name: name.to_string(),
            worker_id: self.worker_id.clone(),
            generation: self.generation.clone(),
            statuses: self.statuses.clone(),
            on_reconfigure: self.on_reconfigure.clone(),
            version: version.clone(),
            offsets: (self.plugins.connector_type(&class) == Some(ConnectorType::Source)).then(
                || ConnectorOffsets {
                    name: name.to_string(),
                    config: config.clone(),
                    worker: self.offsets.clone(),
                    topics: self.connector_offset_topics.get().cloned(),
                    reader: std::sync::OnceLock::new(),
                },
            ),
        });
        let wc = Arc::new(WorkerConnector::new(name, instance, ctx));
        let previous = self.connectors.lock().unwrap().insert(
            name.to_string(),
            RunningConnector {
                instance: wc.clone(),
                target,
                config: config.clone(),
                raw_config,
            },
        );
        if let Some(prev) = previous {
            self.shutdown_instance(name, &prev.instance);
        }
        let (tx, rx) = mpsc::channel();
        match target {
            TargetState::Started => {
                wc.start(config, self.transition_done(name, &wc, target, version, tx));
            }
            TargetState::Paused | TargetState::Stopped => {
                let state = if target == TargetState::Paused {
                    State::Paused
                } else {
                    State::Stopped
                };
                self.put_connector_status_version(name, state, None, version);
                let _receiver_kept = tx.send(Ok(()));
            }
        }
        Ok(ConnectorStart(rx))
    }

    /// The completion of a connector's `start` or `stop` towards `target`: writes the status
    /// (unless the instance was shut down meanwhile), counts starts, asks for a task
    /// reconfiguration after a successful start, and hands the outcome to `tx`.
    fn transition_done(
        &self,
        name: &str,
        wc: &WorkerConnector,
        target: TargetState,
        version: Option<String>,
        tx: mpsc::Sender<ConnectResult<()>>,
    ) -> connector::Completion {
        let name = name.to_string();
        let live = wc.liveness();
        let statuses = self.statuses.clone();
        let worker_id = self.worker_id.clone();
        let generation = self.generation.clone();
        let on_reconfigure = self.on_reconfigure.clone();
        let counter = self.connector_counter(&name);
        let worker_metrics = self.metrics.clone();
        Box::new(move |result: ConnectResult<()>| {
            if live.load(Ordering::Acquire) {
                if target == TargetState::Started {
                    worker_metrics.connector_started(result.is_ok());
                }
                let (state, trace) = match (&result, target) {
                    (Err(e), _) => {
                        tracing::error!(connector = %name, error = %e, "connector failed to {}", if target == TargetState::Started { "start" } else { "stop" });
                        (
                            State::Failed,
                            Some(error_trace(e, &format!("connector {name}"))),
                        )
                    }
                    (Ok(()), TargetState::Started) => (State::Running, None),
                    (Ok(()), TargetState::Paused) => (State::Paused, None),
                    (Ok(()), TargetState::Stopped) => (State::Stopped, None),
                };
                statuses.put_connector(
                    &name,
                    Status {
                        state,
                        trace,
                        worker_id,
                        generation: generation.load(Ordering::Acquire),
                        version,
                    },
                );
                if result.is_ok() && target == TargetState::Started {
                    counter.record_start();
                    on_reconfigure(name);
                }
            }
            let _receiver_may_be_gone = tx.send(result);
        })
    }

    /// Shuts an instance down within `task.shutdown.graceful.timeout.ms`; one that does not
    /// stop in time is abandoned and reported.
    fn shutdown_instance(&self, name: &str, wc: &WorkerConnector) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        let started = wc.is_started();
        let wait = wc.begin_shutdown();
        self.finish_shutdown(name, started, wait, deadline);
    }

    /// Waits for a shutdown begun with [`WorkerConnector::begin_shutdown`] (until `deadline`),
    /// reports one that failed or timed out, and counts the stop of a started instance.
    fn finish_shutdown(
        &self,
        name: &str,
        started: bool,
        wait: connector::ShutdownWait,
        deadline: Instant,
    ) {
        if let Err(e) = wait.wait(deadline) {
            tracing::error!(connector = name, error = %e, "graceful stop of connector failed");
        }
        if started {
            self.connector_counter(name).record_stop();
        }
    }

    /// The message a connector (or its task) fails with when its config sets what this worker
    /// cannot honour ([`unsupported_settings`]); `None` when it may run.
    /// A source connector's topic creation rules (KIP-158): `Ok(None)` for sinks, when the
    /// worker sets `topic.creation.enable=false`, or when the config sets no
    /// `topic.creation.` key; `Err` is Connect's `ConfigException` message.
    fn topic_creation(
        &self,
        config: &Props,
        kind: ConnectorType,
    ) -> Result<Option<crate::config::topic_creation::TopicCreation>, crate::config::SettingError>
    {
        if kind != ConnectorType::Source {
            return Ok(None);
        }
        crate::config::topic_creation::TopicCreation::from_config(
            config,
            self.config.settings().topic_creation_enable,
        )
    }

    fn refusal(&self, name: &str, config: &Props, kind: ConnectorType) -> Option<String> {
        let support = WorkerSupport::of(&self.config);
        unsupported::refusal(name, &unsupported_settings(config, kind, &support))
    }

    /// Whether this worker runs the connector instance.
    pub fn owns_connector(&self, name: &str) -> bool {
        self.connectors.lock().unwrap().contains_key(name)
    }

    /// Whether the connector instance is running (started successfully, not paused/stopped).
    pub fn is_connector_running(&self, name: &str) -> bool {
        self.connectors
            .lock()
            .unwrap()
            .get(name)
            .map(|c| c.instance.is_running())
            .unwrap_or(false)
    }

    /// The task configs of a running connector (`Worker.connectorTaskConfigs`): at most
    /// `tasks.max`, each with `task.class`, and for sinks the connector's `topics` /
    /// `topics.regex`. Keys that hold config provider references in the connector's stored
    /// config get those references back ([`providers::reverse_transform`], as Connect's herders
    /// do before storing task configs), so no resolved value leaves the worker. Errors when the
    /// connector is not running, or produced more than `tasks.max` configs while
    /// `tasks.max.enforce` is true.
    pub fn connector_task_configs(&self, name: &str) -> ConnectResult<Vec<Props>> {
        // The plugin call runs without the worker's lock, so other connectors carry on.
        let (instance, config, raw_config) = {
            let connectors = self.connectors.lock().unwrap();
            let rc = connectors.get(name).ok_or_else(|| {
                ConnectError::connect(format!("Connector {name} is not running on this worker"))
            })?;
            (
                rc.instance.clone(),
                rc.config.clone(),
                rc.raw_config.clone(),
            )
        };
        if !instance.is_running() {
            return Err(ConnectError::connect(format!(
                "Connector {name} is not started"
            )));
        }
        let max = tasks_max(&config);
        let configs = instance.task_configs(max)?;
        if let Err(e) = check_tasks_max(name, configs.len(), max, &config) {
            // As Connect's `Worker.connectorTaskConfigs`: the connector fails (and so is no
            // longer running: nobody retries), and the error goes back to the herder.
            tracing::error!(connector = name, error = %e.0, "connector has failed");
            instance.fail();
            self.put_connector_status_version(
                name,
                State::Failed,
                Some(e.trace(&format!("connector {name}"))),
                config
                    .get("connector.class")
                    .and_then(|c| self.plugin_version(c)),
            );
            return Err(e.0);
        }
        let mut configs = configs;
        let class = config.get("connector.class").cloned().unwrap_or_default();
        let plugin = self
            .plugins
            .connector_plugin(&class)
            .map_err(|e| ConnectError::config(e.to_string()))?;
        let task_class = {
            // The task class comes from the connector; ask a fresh instance (cheap, no I/O).
            (plugin.new)().task_class()
        };
        for c in configs.iter_mut() {
            c.insert("task.class".into(), task_class.clone());
            if plugin.connector_type == ConnectorType::Sink {
                for k in ["topics", "topics.regex"] {
                    if let Some(v) = config.get(k) {
                        c.insert(k.into(), v.clone());
                    }
                }
            }
        }
        providers::reverse_transform(&raw_config, &mut configs);
        Ok(configs)
    }

    /// Changes a connector's target state: PAUSED and STOPPED stop the connector instance
    /// (Connect pauses a connector by stopping it), STARTED starts it again. Writes the status.
    pub fn set_connector_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()> {
        // Tasks follow the target state whether or not the connector instance runs here.
        for (_, t) in self
            .tasks
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| id.connector == name)
        {
            t.control.set_paused(target != TargetState::Started);
        }
        let (instance, config) = {
            let mut connectors = self.connectors.lock().unwrap();
            let Some(rc) = connectors.get_mut(name) else {
                return Ok(());
            };
            if rc.target == target {
                return Ok(());
            }
            if rc.instance.is_failed() && target != TargetState::Stopped {
                // As Connect's `WorkerConnector`: a failed connector only goes to STOPPED.
                tracing::warn!(
                    connector = name,
                    "cannot transition connector to {target:?} since it has failed"
                );
                return Ok(());
            }
            rc.target = target;
            (rc.instance.clone(), rc.config.clone())
        };
        // Asynchronous, as in Connect: the status is written when the plugin call returns.
        let version = config
            .get("connector.class")
            .and_then(|c| self.plugin_version(c));
        let (tx, _rx) = mpsc::channel();
        let done = self.transition_done(name, &instance, target, version, tx);
        match target {
            TargetState::Started => instance.start(config, done),
            TargetState::Paused | TargetState::Stopped => instance.stop(done),
        }
        Ok(())
    }

    /// Stops a connector instance and writes UNASSIGNED (unless it had FAILED), waiting at
    /// most `task.shutdown.graceful.timeout.ms` for its `stop`.
    pub fn stop_connector(&self, name: &str) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_connectors_by(&[name.to_string()], deadline);
    }

    /// Stops connector instances as [`Self::stop_connector`] does, all at once, waiting at
    /// most `task.shutdown.graceful.timeout.ms` in all.
    pub fn stop_connectors(&self, names: &[String]) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_connectors_by(names, deadline);
    }

    /// Stops connector instances as [`Self::stop_connector`] does, waiting for their `stop`
    /// until `deadline` at most (one still stopping then is abandoned and logged). Every
    /// instance is asked to stop before waiting for any, so stopping thousands of connectors
    /// takes about as long as the slowest one.
    pub fn stop_connectors_by(&self, names: &[String], deadline: Instant) {
        let removed: Vec<(&String, RunningConnector)> = {
            let mut connectors = self.connectors.lock().unwrap();
            names
                .iter()
                .filter_map(|n| connectors.remove(n).map(|rc| (n, rc)))
                .collect()
        };
        if removed.is_empty() {
            return;
        }
        let waits: Vec<_> = removed
            .iter()
            .map(|(_, rc)| (rc.instance.is_started(), rc.instance.begin_shutdown()))
            .collect();
        for ((name, rc), (started, wait)) in removed.iter().zip(waits) {
            self.finish_shutdown(name, started, wait, deadline);
            let failed = self
                .statuses
                .connector(name)
                .map(|s| s.state == State::Failed && s.worker_id == self.worker_id)
                .unwrap_or(false);
            if !failed {
                let version = rc
                    .config
                    .get("connector.class")
                    .and_then(|c| self.plugin_version(c));
                self.put_connector_status_version(name, State::Unassigned, None, version);
            }
        }
    }

    /// Starts a task. `connector_config` and `task_config` are the configs as stored: their
    /// config provider references are resolved here ([`Self::resolve_config`], as Connect's
    /// `ClusterConfigState.taskConfig` / `connectorConfig` do), and the task gets the resolved
    /// values. Problems creating it (a provider that fails, unknown task class, converters,
    /// clients) mark the task FAILED and are returned. `task_count` is how many task configs
    /// the connector has stored: more than its `tasks.max` fails the task, unless
    /// `tasks.max.enforce` is false ([`check_tasks_max`], as Connect's `Worker.startTask`).
    pub fn start_task(
        &self,
        id: &ConnectorTaskId,
        connector_config: &Props,
        task_config: Props,
        target: TargetState,
        task_count: usize,
    ) -> ConnectResult<()> {
        let counters = self
            .counters
            .lock()
            .unwrap()
            .entry(id.clone())
            .or_default()
            .clone();
        let task_version = connector_config
            .get("connector.class")
            .and_then(|c| self.plugin_version(c));
        let reporter = TaskStatusReporter {
            id: id.clone(),
            worker_id: self.worker_id.clone(),
            generation: self.generation.clone(),
            store: self.statuses.clone(),
            version: task_version.clone(),
            counters: Some(counters.clone()),
        };
        let fail = |e: ConnectError| {
            tracing::error!(task = %id, error = %e, "task failed to start");
            self.metrics.task_started(false);
            reporter.report(State::Failed, Some(error_trace(&e, &format!("task {id}"))));
            e
        };
        let connector_config = &self
            .resolve_config(&format!("task {id}"), connector_config)
            .map_err(fail)?;
        if let Err(e) = check_tasks_max(
            &id.connector,
            task_count,
            tasks_max(connector_config),
            connector_config,
        ) {
            tracing::error!(task = %id, error = %e.0, "task failed to start");
            self.metrics.task_started(false);
            reporter.report(State::Failed, Some(e.trace(&format!("task {id}"))));
            return Err(e.0);
        }
        let task_config = self
            .resolve_config(&format!("task {id}"), &task_config)
            .map_err(fail)?;
        let class = task_config.get("task.class").cloned().unwrap_or_default();
        let connector_class = connector_config
            .get("connector.class")
            .map(String::as_str)
            .unwrap_or_default();
        let factory = self
            .plugins
            .task_factory_for(connector_class, &class)
            .map_err(|e| fail(ConnectError::config(e.to_string())))?;
        // The connector may run on another worker (a Java one in a mixed cluster), so the
        // task checks its connector's settings too.
        let kind = match &factory {
            TaskFactory::Source(_) => ConnectorType::Source,
            TaskFactory::Sink(_) => ConnectorType::Sink,
        };
        if let Some(message) = self.refusal(&id.connector, connector_config, kind) {
            return Err(fail(ConnectError::config(message)));
        }
        let topic_creation = self
            .topic_creation(connector_config, kind)
            .map_err(|e| fail(ConnectError::config(e.to_string())))?;
        let errors = ErrorHandlingConfig::from_props(connector_config, kind).map_err(fail)?;
        let converters = converters::task_converters(&self.plugins, &self.config, connector_config)
            .map_err(fail)?;
        let control = TaskControl::new(target);
        let flush_interval = self.config.settings().offset_flush_interval;
        let track_topics = self.config.settings().topic_tracking_enable;
        let name = format!("task-{id}");
        // Every line the task's thread logs names its connector and task (Connect's MDC
        // `connector.context`); an error-level span is enabled whatever the log level.
        let span = tracing::error_span!("task", connector = %id.connector, task = id.task);
        let thread = match factory {
            TaskFactory::Source(new) => {
                // Each task gets its own transformations and predicates.
                let chain =
                    TransformationChain::<SourceRecord>::build(&self.plugins, connector_config)
                        .map_err(fail)?;
                let mut producer_config = clients::source_producer_config(
                    &self.config,
                    &id.connector,
                    id.task,
                    prefixed(connector_config, "producer.override."),
                )
                .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                let offsets = self.offset_store_for(connector_config).map_err(fail)?;
                let exactly_once = self
                    .exactly_once_args(id, connector_config, &mut producer_config)
                    .map_err(fail)?;
                let args = source_task::SourceTaskArgs {
                    connector: id.connector.clone(),
                    task: new(),
                    task_config,
                    producer_config,
                    exactly_once,
                    converters,
                    offsets,
                    topic_creation: match topic_creation {
                        None => None,
                        Some(rules) => Some((
                            rules,
                            clients::connector_admin_config(
                                &self.config,
                                prefixed(connector_config, "admin.override."),
                            )
                            .map_err(|e| fail(ConnectError::config(e.to_string())))?,
                        )),
                    },
                    control: control.clone(),
                    reporter,
                    counters,
                    offset_flush_interval: flush_interval,
                    offset_flush_timeout: self.config.settings().offset_flush_timeout,
                    track_topics,
                    chain,
                    errors,
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || span.in_scope(|| source_task::run(args)))
            }
            TaskFactory::Sink(new) => {
                let dlq_clients = if errors.dlq_topic.is_empty() {
                    None
                } else {
                    let admin = clients::connector_admin_config(
                        &self.config,
                        prefixed(connector_config, "admin.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                    let producer = clients::dlq_producer_config(
                        &self.config,
                        &id.connector,
                        id.task,
                        prefixed(connector_config, "producer.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                    Some((admin, producer))
                };
                let chain =
                    TransformationChain::<SinkRecord>::build(&self.plugins, connector_config)
                        .map_err(fail)?;
                let args = sink_task::SinkTaskArgs {
                    task: new(),
                    task_config,
                    consumer_config: clients::sink_consumer_config(
                        &self.config,
                        &id.connector,
                        id.task,
                        prefixed(connector_config, "consumer.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?,
                    converters,
                    control: control.clone(),
                    reporter,
                    counters,
                    offset_flush_interval: flush_interval,
                    track_topics,
                    chain,
                    errors,
                    dlq_clients,
                    offset_flush_timeout: self.config.settings().offset_flush_timeout,
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || span.in_scope(|| sink_task::run(args)))
            }
        }
        .map_err(|e| ConnectError::connect(format!("cannot spawn task thread: {e}")))?;
        let previous = self.tasks.lock().unwrap().insert(
            id.clone(),
            RunningTask {
                control,
                thread,
                version: task_version,
            },
        );
        if let Some(prev) = previous {
            prev.control.stop();
        }
        self.metrics.task_started(true);
        Ok(())
    }

    /// The counters of every task running on this worker, in id order (the `/metrics`
    /// scrape's task groups: a task that left this worker is no longer reported, as Connect
    /// removes a task's metric groups when it stops).
    pub fn running_task_metrics(&self) -> Vec<(ConnectorTaskId, Arc<TaskCounters>)> {
        let ids = self.task_ids();
        let counters = self.counters.lock().unwrap();
        ids.into_iter()
            .filter_map(|id| counters.get(&id).map(|c| (id.clone(), c.clone())))
            .collect()
    }

    /// The progress of a task running on this worker (`None` for others): see
    /// [`metrics::TaskMetrics::progress`], stalled past `tributary.task.stall.threshold.ms`.
    pub fn task_progress(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        self.task_progress_all(id)
    }

    /// [`Self::task_progress`] only when the task is stalled: what its status shows, so that
    /// the status of a task making progress stays Connect's, unchanging body.
    pub fn task_stall(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        self.task_progress_all(id).filter(|p| p.stalled)
    }

    fn task_progress_all(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        if !self.tasks.lock().unwrap().contains_key(id) {
            return None;
        }
        let counters = self.counters.lock().unwrap().get(id).cloned()?;
        Some(counters.metrics.progress(
            metrics::now_ms(),
            self.config.settings().task_stall_threshold,
        ))
    }

    /// The connectors running on this worker with their class, type and plugin version
    /// (`connector-metrics`), in name order.
    pub fn running_connectors(
        &self,
    ) -> Vec<(String, String, Option<ConnectorType>, Option<String>)> {
        let classes: Vec<(String, String)> = self
            .connectors
            .lock()
            .unwrap()
            .iter()
            .map(|(n, c)| {
                (
                    n.clone(),
                    c.config.get("connector.class").cloned().unwrap_or_default(),
                )
            })
            .collect();
        let mut v: Vec<_> = classes
            .into_iter()
            .map(|(name, class)| {
                let kind = self.plugins.connector_type(&class);
                let version = self.plugin_version(&class);
                (name, class, kind, version)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The tasks running on this worker.
    pub fn task_ids(&self) -> Vec<ConnectorTaskId> {
        let mut v: Vec<_> = self.tasks.lock().unwrap().keys().cloned().collect();
        v.sort();
        v
    }

    /// The connectors running on this worker.
    pub fn connector_names(&self) -> Vec<String> {
        let mut v: Vec<_> = self.connectors.lock().unwrap().keys().cloned().collect();
        v.sort();
        v
    }

    /// Stops tasks and waits for them (up to `task.shutdown.graceful.timeout.ms` in all);
    /// writes UNASSIGNED for each that had not FAILED. A task that does not stop in time is
    /// abandoned (its thread finishes on its own) and reported, as Connect cancels it.
    pub fn stop_and_await_tasks(&self, ids: &[ConnectorTaskId]) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_and_await_tasks_by(ids, deadline);
    }

    /// [`Self::stop_and_await_tasks`], waiting for the tasks until `deadline` at most.
    pub fn stop_and_await_tasks_by(&self, ids: &[ConnectorTaskId], deadline: Instant) {
        let running: Vec<(ConnectorTaskId, RunningTask)> = {
            let mut tasks = self.tasks.lock().unwrap();
            ids.iter()
                .filter_map(|id| tasks.remove(id).map(|t| (id.clone(), t)))
                .collect()
        };
        for (_, t) in &running {
            t.control.stop();
        }
        for (id, t) in running {
            while !t.thread.is_finished() && Instant::now() < deadline {
                // On a blocking thread, polling task threads' end.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.thread.is_finished() {
                // The task's own panics are caught and reported as FAILED (task::catch_panic);
                // this is one outside that.
                if t.thread.join().is_err() {
                    tracing::error!(task = %id, "task thread panicked");
                }
            } else {
                tracing::error!(task = %id, "graceful stop of task failed: still running after the shutdown timeout; abandoning it");
            }
            let failed = self
                .statuses
                .task(&id)
                .map(|s| s.state == State::Failed && s.worker_id == self.worker_id)
                .unwrap_or(false);
            if !failed {
                self.statuses.put_task(
                    &id,
                    Status {
                        state: State::Unassigned,
                        trace: None,
                        worker_id: self.worker_id.clone(),
                        generation: self.generation.load(Ordering::Acquire),
                        version: t.version.clone(),
                    },
                );
            }
        }
    }

    /// Counters of a task on this worker.
    pub fn task_counters(&self, id: &ConnectorTaskId) -> Option<TaskCountersSnapshot> {
        self.counters
            .lock()
            .unwrap()
            .get(id)
            .map(|c| TaskCountersSnapshot {
                starts: c.starts.load(Ordering::Relaxed),
                stops: c.stops.load(Ordering::Relaxed),
                records: c.records.load(Ordering::Relaxed),
                offset_commits: c.offset_commits.load(Ordering::Relaxed),
                skipped: c.skipped.load(Ordering::Relaxed),
            })
    }

    fn connector_counter(&self, name: &str) -> Arc<TaskCounters> {
        self.connector_counters
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_default()
            .clone()
    }

    /// Starts and stops of every connector instance this worker has run (records and offset
    /// commits stay 0).
    pub fn all_connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)> {
        let mut v: Vec<_> = self
            .connector_counters
            .lock()
            .unwrap()
            .iter()
            .map(|(n, c)| {
                (
                    n.clone(),
                    TaskCountersSnapshot {
                        starts: c.starts.load(Ordering::Relaxed),
                        stops: c.stops.load(Ordering::Relaxed),
                        records: 0,
                        offset_commits: 0,
                        skipped: 0,
                    },
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Counters of every task this worker has run.
    pub fn all_task_counters(&self) -> Vec<(ConnectorTaskId, TaskCountersSnapshot)> {
        let ids: Vec<_> = self.counters.lock().unwrap().keys().cloned().collect();
        let mut v: Vec<_> = ids
            .into_iter()
            .filter_map(|id| self.task_counters(&id).map(|c| (id, c)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Stops everything (clean shutdown): tasks first, then connectors.
    pub fn stop_all(&self) {
        let ids = self.task_ids();
        self.stop_and_await_tasks(&ids);
        self.stop_connectors(&self.connector_names());
    }
}
