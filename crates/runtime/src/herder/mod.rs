//! The herder, Connect's control plane (`Herder`, `AbstractHerder`): accepts connector
//! configurations, decides what runs, and answers the REST API. [`standalone`] is
//! `connect-standalone`'s herder. [`info`] holds the bodies the herder answers with.
//!
//! Herder calls are synchronous (they may wait for connectors and tasks to start or stop); the
//! REST layer runs them on blocking threads.

pub mod auto_restart;
pub mod config_reload;
pub mod connectors_dir;
pub mod coordinator;
pub mod distributed;
pub mod fencing;
pub mod health;
pub mod info;
pub mod rebalances;
pub mod restart;
pub mod session;
pub mod standalone;
pub mod validation;

use std::collections::HashMap;

use tributary_api::Props;

pub use crate::herder_error::{HerderError, HerderResult, REBALANCE_EXPECTED};

use crate::config_records::RestartRequest;
use crate::plugins::Plugins;
use crate::worker::{TargetState, TaskCountersSnapshot};
use crate::ConnectorTaskId;
use info::{ConfigInfos, ConnectorInfo, ConnectorStateInfo, TaskInfo, TaskState, WorkerInfo};

/// Where a distributed worker's group membership stands, for requests that can only run once
/// it is settled (see [`Herder::membership`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Membership {
    /// How many times the worker has finished a rebalance with no further one pending.
    pub settled: u64,
    /// A rebalance is in progress or due (also before the first join).
    pub rebalancing: bool,
    /// The worker is stopping: nothing will settle any more.
    pub stopping: bool,
}

impl Membership {
    /// Before the first join: rebalancing, never settled.
    pub fn joining() -> Membership {
        Membership {
            settled: 0,
            rebalancing: true,
            stopping: false,
        }
    }
}

/// Whether `put_connector_config` created the connector or replaced its config.
#[derive(Debug, Clone, PartialEq)]
pub struct Created<T> {
    pub created: bool,
    pub result: T,
}

/// What the REST API needs from a herder (Connect's `Herder` interface).
pub trait Herder: Send + Sync {
    /// This worker's id (`host:port`).
    fn worker_id(&self) -> String;
    /// The Kafka cluster id, found at startup.
    fn kafka_cluster_id(&self) -> Option<String>;
    /// The plugins this worker has.
    fn plugins(&self) -> &Plugins;
    /// Connector names, sorted.
    fn connectors(&self) -> HerderResult<Vec<String>>;
    /// `GET /connectors/{c}`. 404 `Connector c not found`.
    fn connector_info(&self, name: &str) -> HerderResult<ConnectorInfo>;
    /// `GET /connectors/{c}/config`.
    fn connector_config(&self, name: &str) -> HerderResult<Props>;
    /// Creates or (with `allow_replace`) replaces a connector. Validates first (400 with the
    /// error list); 409 `Connector c already exists` when it exists and replacing is not allowed.
    fn put_connector_config(
        &self,
        name: &str,
        config: Props,
        allow_replace: bool,
        initial_state: Option<TargetState>,
    ) -> HerderResult<Created<ConnectorInfo>>;
    /// `PATCH /connectors/{c}/config`: `None` values remove keys; the result is validated and
    /// applied like a `PUT`.
    fn patch_connector_config(
        &self,
        name: &str,
        patch: HashMap<String, Option<String>>,
    ) -> HerderResult<ConnectorInfo> {
        let mut config = self.connector_config(name)?;
        for (k, v) in patch {
            match v {
                Some(v) => {
                    config.insert(k, v);
                }
                None => {
                    config.remove(&k);
                }
            }
        }
        Ok(self.put_connector_config(name, config, true, None)?.result)
    }
    /// `DELETE /connectors/{c}`.
    fn delete_connector(&self, name: &str) -> HerderResult<()>;
    /// `GET /connectors/{c}/status`. 404 `No status found for connector c`.
    fn connector_status(&self, name: &str) -> HerderResult<ConnectorStateInfo>;
    /// `GET /connectors/{c}/tasks/{t}/status`. 404 `No status found for task c-t`.
    fn task_status(&self, id: &ConnectorTaskId) -> HerderResult<TaskState>;
    /// `GET /connectors/{c}/tasks`.
    fn task_configs(&self, name: &str) -> HerderResult<Vec<TaskInfo>>;
    /// `PUT /connectors/{c}/pause`.
    fn pause_connector(&self, name: &str) -> HerderResult<()>;
    /// `PUT /connectors/{c}/resume`.
    fn resume_connector(&self, name: &str) -> HerderResult<()>;
    /// `PUT /connectors/{c}/stop` (KIP-875).
    fn stop_connector(&self, name: &str) -> HerderResult<()>;
    /// `GET /connectors/{c}/offsets` (KIP-875): a source connector's partitions and offsets,
    /// a sink connector's consumer group offsets. 404 `Connector c not found`.
    fn connector_offsets(
        &self,
        name: &str,
    ) -> HerderResult<crate::worker::connector_offsets::ConnectorOffsets>;
    /// `PATCH /connectors/{c}/offsets` (`Some`: the offsets to write) and `DELETE` (`None`: a
    /// reset), only for a STOPPED connector (400 with Connect's message otherwise); on the
    /// leader in distributed mode ([`HerderError::NotLeader`] elsewhere). The answer is
    /// Connect's `{"message": ...}`.
    fn modify_connector_offsets(
        &self,
        name: &str,
        offsets: Option<Vec<crate::worker::connector_offsets::ConnectorOffset>>,
    ) -> HerderResult<crate::worker::connector_offsets::Message>;
    /// Legacy `POST /connectors/{c}/restart`: the connector instance only.
    fn restart_connector(&self, name: &str) -> HerderResult<()>;
    /// `POST /connectors/{c}/tasks/{t}/restart`.
    fn restart_task(&self, id: &ConnectorTaskId) -> HerderResult<()>;
    /// KIP-745 `POST /connectors/{c}/restart?includeTasks&onlyFailed`: the 202 body previews
    /// the plan with RESTARTING for every selected instance.
    fn restart_connector_and_tasks(
        &self,
        request: RestartRequest,
    ) -> HerderResult<ConnectorStateInfo>;
    /// `PUT /connector-plugins/{p}/config/validate`; `null_keys` are the keys the body gave as
    /// JSON `null` (each reported with Connect's null-value error). Config provider references
    /// are resolved before validating (see [`validation::validate_resolving`]).
    fn validate_connector_config(
        &self,
        config: &Props,
        null_keys: &[String],
    ) -> HerderResult<ConfigInfos> {
        validation::validate_resolving(
            self.plugins(),
            &crate::config::unsupported::WorkerSupport::of(self.worker_config()),
            self.worker_config().providers(),
            config,
            null_keys,
        )
    }
    /// Per-task counters on this worker (a Tributary addition, for tests and benchmarks).
    fn task_counters(&self) -> Vec<(ConnectorTaskId, TaskCountersSnapshot)>;
    /// The internal `POST /connectors/{c}/tasks`: a follower hands the leader the task configs
    /// its connector generated. Only distributed herders have it (404 otherwise).
    fn put_task_configs(
        &self,
        name: &str,
        _configs: Vec<Props>,
        _body: &[u8],
        _signature: session::RequestSignature,
    ) -> HerderResult<()> {
        Err(HerderError::NotFound(format!("Unknown connector: {name}")))
    }
    /// The internal `PUT /connectors/{c}/fence` (KIP-618): a worker about to start an
    /// exactly-once source task asks the leader for the round of zombie fencing of the
    /// connector's new task generation. Only distributed herders have it (404 otherwise).
    fn fence_zombies(
        &self,
        name: &str,
        _body: &[u8],
        _signature: session::RequestSignature,
    ) -> HerderResult<()> {
        Err(HerderError::NotFound(format!("Connector {name} not found")))
    }
    /// `PUT /admin/loggers/{ns}?scope=cluster` (KIP-976): applies a level on every worker.
    /// Standalone applies it locally.
    fn set_cluster_logger_level(&self, namespace: &str, level: &str) -> HerderResult<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        crate::logging::set_level(namespace, level, now);
        Ok(())
    }
    /// Starts and stops of connector instances on this worker (a Tributary addition).
    fn connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)>;
    /// Whether the herder completed its startup (Connect's `Herder.isReady`): a distributed
    /// worker once it has joined the group for the first time; a standalone one at once.
    fn is_ready(&self) -> bool {
        true
    }
    /// KIP-1017's liveness probe (Connect's `Herder.healthCheck`): returns once the herder's
    /// control loop has handled a request, which blocks while the loop is busy or stuck; the
    /// REST layer bounds the wait. Errors when the herder has stopped.
    fn health_check(&self) -> HerderResult<()>;
    /// Automatic restarts requested per instance by this worker (`tributary.restart.*`;
    /// distributed workers only), for `/metrics`.
    fn auto_restart_counts(&self) -> Vec<(auto_restart::Instance, u32)> {
        Vec::new()
    }
    /// The worker running this herder's instances (for `/metrics`).
    fn worker(&self) -> &std::sync::Arc<crate::worker::Worker>;
    /// The status store (statuses and KIP-558 active topics).
    fn status_store(&self) -> std::sync::Arc<dyn crate::storage::status::StatusBackingStore>;
    /// The worker configuration.
    fn worker_config(&self) -> &crate::config::worker::WorkerConfig;
    /// The last rounds this worker completed, oldest first, for `GET /tributary/rebalances`
    /// (Tributary; see [`rebalances::RebalanceRecord`]). Standalone herders have none.
    fn rebalances(&self) -> Vec<rebalances::RebalanceRecord> {
        Vec::new()
    }
    /// This worker's view of the group, for `GET /tributary/worker` (a Tributary addition).
    fn worker_info(&self) -> WorkerInfo {
        WorkerInfo::standalone(self.worker_id())
    }
    /// The state of this worker's group membership, watched by requests that wait for a
    /// rebalance to end before they run (distributed herders only; `None` otherwise).
    fn membership(&self) -> Option<tokio::sync::watch::Receiver<Membership>> {
        None
    }
    /// The group's current session key (KIP-507) of a distributed worker; `None` otherwise.
    /// Forwarded requests sign their caller's principal with it (REST authorization).
    fn session_key(&self) -> Option<crate::config_records::SessionKey> {
        None
    }
}

/// Adds the progress of the stalled tasks `worker` runs (Tributary's `progress` field).
pub fn add_progress(worker: &crate::worker::Worker, info: &mut ConnectorStateInfo) {
    for t in &mut info.tasks {
        let id = ConnectorTaskId::new(&info.name, t.id);
        t.progress = worker.task_stall(&id);
        t.throttle = worker.task_throttle(&id);
    }
}

/// A status trace of connector `connector` as answers show it: none when empty, and what the
/// connector's config providers resolved replaced by the references (issue #42; the trace may
/// have been written by another worker, Java or older, that did not redact it).
fn shown_trace(connector: &str, trace: Option<String>) -> Option<String> {
    trace
        .filter(|t| !t.is_empty())
        .map(|t| crate::config::secrets::redact_for(connector, t))
}

/// A connector's `ConnectorStateInfo` from a status store: 404 `No status found for connector c`
/// without a connector status; tasks in id order; empty traces left out.
pub fn connector_state_info(
    statuses: &dyn crate::storage::status::StatusBackingStore,
    name: &str,
    connector_type: String,
) -> HerderResult<ConnectorStateInfo> {
    let cs = statuses
        .connector(name)
        .ok_or_else(|| HerderError::NotFound(format!("No status found for connector {name}")))?;
    let tasks = statuses
        .tasks(name)
        .into_iter()
        .map(|(id, s)| TaskState {
            id,
            state: s.state.as_str().into(),
            worker_id: s.worker_id,
            version: s.version,
            trace: shown_trace(name, s.trace),
            auto_restart: None,
            progress: None,
            throttle: None,
        })
        .collect();
    Ok(ConnectorStateInfo {
        name: name.to_string(),
        connector: info::ConnectorState {
            state: cs.state.as_str().into(),
            worker_id: cs.worker_id,
            version: cs.version,
            trace: shown_trace(name, cs.trace),
            auto_restart: None,
        },
        tasks,
        connector_type,
    })
}

/// One task's `TaskState` from a status store: 404 `No status found for task c-t` without one.
pub fn task_state(
    statuses: &dyn crate::storage::status::StatusBackingStore,
    id: &ConnectorTaskId,
) -> HerderResult<TaskState> {
    let s = statuses
        .task(id)
        .ok_or_else(|| HerderError::NotFound(format!("No status found for task {id}")))?;
    Ok(TaskState {
        id: id.task,
        state: s.state.as_str().into(),
        worker_id: s.worker_id,
        version: s.version,
        trace: shown_trace(&id.connector, s.trace),
        auto_restart: None,
        progress: None,
        throttle: None,
    })
}
