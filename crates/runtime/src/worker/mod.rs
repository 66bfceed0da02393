//! The worker (Connect's `Worker`): owns the running connector and task instances of this
//! process, creates their clients and converters, and writes their statuses. The herder decides
//! what runs; the worker runs it. Every connector and task has its own thread, so blocking
//! plugin code never stalls the async runtime, and a failure or panic in one marks only that
//! instance FAILED.

pub mod chain;
pub mod clock;
pub mod connector;
mod connector_lifecycle;
pub mod connector_offsets;
pub mod consumed_headers;
pub mod converters;
pub mod errors;
pub mod history;
#[cfg(test)]
mod journal;
pub mod metrics;
pub mod sink_task;
pub mod source_task;
pub mod submitted_records;
pub mod task;
mod task_lifecycle;
pub mod throttle;
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

/// Where a task's loop runs: a thread of its own, or a tokio task on the worker's runtime (an
/// async native task, issue #43).
enum TaskThread {
    Os(JoinHandle<()>),
    Runtime(tokio::task::JoinHandle<()>),
}

impl TaskThread {
    /// Whether the loop has ended.
    fn is_finished(&self) -> bool {
        match self {
            TaskThread::Os(t) => t.is_finished(),
            TaskThread::Runtime(t) => t.is_finished(),
        }
    }

    /// Reaps a finished loop; false when it panicked outside the task's own panic handling.
    fn join(self) -> bool {
        match self {
            TaskThread::Os(t) => t.join().is_ok(),
            // Finished: its outcome is ready; a panic outside the loop's own handling shows
            // as a join error, read without blocking.
            // A cancelled loop (the runtime shutting down) did not panic.
            TaskThread::Runtime(t) => futures::FutureExt::now_or_never(t)
                .is_none_or(|r| r.map_or_else(|e| !e.is_panic(), |()| true)),
        }
    }
}

struct RunningTask {
    control: Arc<TaskControl>,
    thread: TaskThread,
    version: Option<String>,
    /// The task's rate limits (issue #36), updated in place by a connector config change.
    throttle: Arc<throttle::Throttle>,
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
    /// The connector's own metrics (KIP-877), tagged `connector`.
    plugin_metrics: tributary_api::metrics::PluginMetrics,
}

impl ConnectorContext for WorkerConnectorContext {
    fn plugin_metrics(&self) -> tributary_api::metrics::PluginMetrics {
        self.plugin_metrics.clone()
    }
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
    /// The producers at-least-once source tasks share (issue #34).
    pub shared_producers: Arc<source_task::shared_producer::SharedProducers>,
    /// The last 15 minutes of this worker's jobs, for the live view (issue #36).
    pub history: Arc<history::History>,
    /// The multi-threaded runtime the worker was created in, where async native tasks run
    /// (issue #43); `None` outside one (each async task then gets a runtime of its own).
    runtime: Option<source_task::AsyncRuntime>,
    /// Set by the herder: where a connector's config reloads go when a config provider gave its
    /// values a TTL ([`ConfigReload`]).
    config_reloads: std::sync::OnceLock<Arc<dyn Fn(ConfigReload) + Send + Sync>>,
}

/// A restart of connector `connector` due in `delay` because a config provider gave the values
/// at `path` of its config that TTL, and its `config.action.reload` is `restart` (Connect's
/// `WorkerConfigTransformer.scheduleReload`): a later reload of the same connector and path
/// replaces this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigReload {
    pub connector: String,
    pub path: String,
    pub delay: Duration,
}

impl Worker {
    /// Hands the worker where its connectors' config reloads go (once, before any connector
    /// starts): the herder restarts the connector when one is due
    /// ([`crate::herder::config_reload`]).
    pub fn set_config_reload_handler(&self, handler: Arc<dyn Fn(ConfigReload) + Send + Sync>) {
        if self.config_reloads.set(handler).is_err() {
            tracing::warn!("the config reload handler was set already; keeping the first");
        }
    }

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
                // The version the connector runs (KIP-891), not the class's default.
                let class = setting("connector.class").unwrap_or_default();
                let supported = self
                    .plugins
                    .new_connector_for(connector_config)
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
            metrics: Arc::new(metrics::WorkerMetrics::started_now()),
            on_reconfigure,
            exactly_once: std::sync::OnceLock::new(),
            connector_offset_topics: std::sync::OnceLock::new(),
            config_reloads: std::sync::OnceLock::new(),
            shared_producers: Arc::default(),
            history: Arc::default(),
            runtime: source_task::AsyncRuntime::shared(),
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

    /// The version of the connector plugin a config runs (what statuses carry, KIP-891): its
    /// `connector.class` in the version its `connector.plugin.version` asks for.
    fn plugin_version(&self, config: &Props) -> Option<String> {
        let class = config.get("connector.class")?;
        self.plugins
            .connector_plugin_in(
                class,
                config
                    .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
                    .map(String::as_str),
            )
            .ok()
            .map(|p| p.version.to_string())
    }

    /// The version of the connector instance this worker runs under `name`, if any.
    pub fn connector_version(&self, name: &str) -> Option<String> {
        let config = self
            .connectors
            .lock()
            .unwrap()
            .get(name)
            .map(|c| c.config.clone())?;
        self.plugin_version(&config)
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
    /// What was resolved is recorded as connector `connector`'s, to be redacted from what is
    /// derived from it (issue #42, [`crate::config::secrets`]).
    pub fn resolve_config(
        &self,
        connector: &str,
        what: &str,
        config: &Props,
    ) -> ConnectResult<Props> {
        self.resolve(connector, what, config).map(|r| r.configs)
    }

    fn resolve(
        &self,
        connector: &str,
        what: &str,
        config: &Props,
    ) -> ConnectResult<crate::config::providers::Resolved> {
        let resolved = self
            .config
            .providers()
            .resolve_with_ttls(what, config)
            .map_err(|e| {
                ConnectError::config(format!(
                    "Failed to resolve the configuration of {what}: {e}"
                ))
            })?;
        crate::config::secrets::record(Some(connector), &resolved.found);
        Ok(resolved)
    }

    /// [`Self::resolve_config`] of connector `name`'s own config as it starts, scheduling its
    /// restart for each TTL a provider gave (Connect's `WorkerConfigTransformer.transform` with
    /// a connector name): under `config.action.reload=restart`, the default; none under `none`.
    pub fn resolve_connector_config(&self, name: &str, config: &Props) -> ConnectResult<Props> {
        let resolved = self.resolve(name, &format!("connector {name}"), config)?;
        let action = config
            .get("config.action.reload")
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_else(|| "restart".to_string());
        if action == "restart" {
            for (path, ttl) in &resolved.ttls {
                let delay = Duration::from_millis(u64::try_from(*ttl).unwrap_or(0));
                match self.config_reloads.get() {
                    Some(reload) => {
                        tracing::info!(
                            connector = name,
                            "Scheduling a restart of connector {name} in {ttl} ms"
                        );
                        reload(ConfigReload {
                            connector: name.to_string(),
                            path: path.clone(),
                            delay,
                        });
                    }
                    None => tracing::warn!(
                        connector = name,
                        "a config provider gave path '{path}' a TTL of {ttl} ms, but this worker has no herder to restart connector {name}"
                    ),
                }
            }
        }
        Ok(resolved.configs)
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
