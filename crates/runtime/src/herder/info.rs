//! The herder's answers: the JSON bodies of Connect's REST API that the [`Herder`](super::Herder)
//! returns (`ConnectorInfo`, `ConnectorStateInfo`, `TaskInfo`, `ConfigInfos`, …; Connect's
//! `org.apache.kafka.connect.runtime.rest.entities`), with Connect's field names and order.
//! They live with the herder, below the REST layer, which serializes them as they are; the
//! bodies only the REST layer uses (`ServerInfo`, `PluginInfo`, `ErrorMessage`) stay with it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A task reference `{"connector","task"}` (`ConnectorTaskId` as JSON).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskRef {
    pub connector: String,
    pub task: u32,
}

/// `ConnectorInfo`: `{"name","config","tasks":[TaskRef],"type"}`; `type` is `source`, `sink`
/// or `unknown`. Config keys are sorted (Java's order is a `HashMap`'s).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConnectorInfo {
    pub name: String,
    pub config: BTreeMap<String, String>,
    pub tasks: Vec<TaskRef>,
    #[serde(rename = "type")]
    pub connector_type: String,
}

/// `auto_restart` in a connector's or task's status (Tributary, `tributary.restart.*`):
/// `{"restarts": n, "last_failure_trace": "…", "last_failure_ms": t, "next_restart_in_ms": n?,
/// "backoff_ms": n?, "exhausted": bool}` — the restarts requested for the instance by the
/// worker running it, the trace of its last failure and when it happened (ms since the epoch),
/// how long until the scheduled restart and the whole wait it was given (both absent when none
/// is scheduled), and whether `tributary.restart.max.attempts` was reached.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AutoRestartInfo {
    pub restarts: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_failure_trace: Option<String>,
    pub last_failure_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_restart_in_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backoff_ms: Option<u64>,
    pub exhausted: bool,
}

/// A connector's state in `ConnectorStateInfo`: `{"state","worker_id","version","trace"?}`.
/// `version` (KIP-891) is the plugin version from the status record, `null` when the record
/// has none (Connect shows it the same way, after `worker_id`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConnectorState {
    pub state: String,
    pub worker_id: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub trace: Option<String>,
    /// Tributary's automatic restarts of the instance, when its connector has them on and the
    /// answering worker runs it (see [`AutoRestartInfo`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub auto_restart: Option<AutoRestartInfo>,
}

/// A task's state: `{"id","state","worker_id","version","trace"?}`
/// (`ConnectorStateInfo.TaskState`); `version` as in [`ConnectorState`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskState {
    pub id: u32,
    pub state: String,
    pub worker_id: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub trace: Option<String>,
    /// Tributary's automatic restarts of the instance, when its connector has them on and the
    /// answering worker runs it (see [`AutoRestartInfo`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub auto_restart: Option<AutoRestartInfo>,
    /// Tributary: a task the answering worker runs whose `poll` / `put` has run for
    /// `tributary.task.stall.threshold.ms` or more (`{"last_call_age_ms"?, "call_running_ms",
    /// "stalled": true}`); absent otherwise, so a task making progress has Connect's body.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub progress: Option<crate::worker::metrics::Progress>,
    /// Tributary: the rate limits of a task the answering worker runs (issue #36:
    /// `{"records_per_second"?, "bytes_per_second"?, "throttled_ms_total", "at_limit"}`);
    /// absent for a task without limits.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub throttle: Option<crate::worker::throttle::ThrottleInfo>,
}

/// `ConnectorStateInfo`: `{"name","connector","tasks","type"}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConnectorStateInfo {
    pub name: String,
    pub connector: ConnectorState,
    pub tasks: Vec<TaskState>,
    #[serde(rename = "type")]
    pub connector_type: String,
}

/// `TaskInfo`: `{"id":{"connector","task"},"config":{…}}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskInfo {
    pub id: TaskRef,
    pub config: BTreeMap<String, String>,
}

/// `ConfigKeyInfo` (validate response), with Connect 4.4's field names and order: the key's
/// position in its group is `order_in_group` (Connect 4.1 wrote it as `order`, still accepted
/// when read).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigKeyInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub config_type: String,
    pub required: bool,
    pub default_value: Option<String>,
    pub importance: String,
    pub documentation: String,
    pub group: Option<String>,
    #[serde(alias = "order")]
    pub order_in_group: i32,
    pub width: String,
    pub display_name: String,
    pub dependents: Vec<String>,
}

/// `ConfigValueInfo` (validate response).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigValueInfo {
    pub name: String,
    pub value: Option<String>,
    pub recommended_values: Vec<String>,
    pub errors: Vec<String>,
    pub visible: bool,
}

/// `ConfigInfo`: `{"definition","value"}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigInfo {
    pub definition: Option<ConfigKeyInfo>,
    pub value: Option<ConfigValueInfo>,
}

/// `ConfigInfos`: `{"name","error_count","groups","configs"}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigInfos {
    pub name: String,
    pub error_count: usize,
    pub groups: Vec<String>,
    pub configs: Vec<ConfigInfo>,
}

/// `GET /tributary/worker` (a Tributary addition), also read by `/metrics` and the live view:
/// `{"worker_id","mode"}` (`mode` is `standalone` or `distributed`) and, for a distributed
/// worker, its view of the group ([`GroupView`]'s fields, flattened into the same object).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkerInfo {
    /// `host:port`, as the worker advertises it.
    pub worker_id: String,
    /// `standalone` or `distributed`.
    pub mode: String,
    /// The group view of a distributed worker; `None` for a standalone one.
    #[serde(flatten)]
    pub group: Option<GroupView>,
    /// The producers this worker's at-least-once source tasks share (issue #34): each one's
    /// `client.id` and how many tasks send through it.
    #[serde(default)]
    pub shared_producers: Vec<SharedProducerInfo>,
    /// The leader's reconciliation of `tributary.connectors.dir` (issue #35), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectors_dir: Option<crate::herder::connectors_dir::ConnectorsDirReport>,
}

/// A producer shared by source tasks, as `GET /tributary/worker` reports it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SharedProducerInfo {
    /// Its `client.id`.
    pub client_id: String,
    /// The tasks sending through it.
    pub tasks: usize,
}

impl WorkerInfo {
    /// A standalone worker's answer.
    pub fn standalone(worker_id: String) -> WorkerInfo {
        WorkerInfo {
            worker_id,
            mode: "standalone".into(),
            group: None,
            shared_producers: Vec::new(),
            connectors_dir: None,
        }
    }
}

/// A distributed worker's view of its group, as `GET /tributary/worker` reports it. Times are
/// milliseconds; `*_completed_ms` is a wall-clock time (epoch ms, 0 before the first).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GroupView {
    /// A rebalance is in progress or due (also before the first join).
    pub rebalancing: bool,
    /// The worker is stopping.
    pub stopping: bool,
    /// This worker leads the group.
    pub leader: bool,
    /// The leader's advertised URL, when known.
    pub leader_url: Option<String>,
    /// The generation of the last completed rebalance (0 before the first).
    pub generation: i32,
    /// The protocol the group runs (`eager`, `compatible`, `sessioned`, `static`), when joined.
    pub protocol: Option<String>,
    /// The connectors assigned to this worker.
    pub connectors: Vec<String>,
    /// The tasks assigned to this worker (`<connector>-<n>`).
    pub tasks: Vec<String>,
    /// Rebalances this worker completed.
    pub rebalances: u64,
    /// Duration of the last rebalance, ms.
    pub last_rebalance_ms: u64,
    /// Time spent in rebalances, ms.
    pub rebalancing_ms_total: u64,
    /// The longest rebalance, ms.
    pub rebalance_max_ms: u64,
    /// When the last rebalance completed, epoch ms (0 before the first).
    pub last_rebalance_completed_ms: i64,
    /// Connectors and tasks this worker stopped in its last rebalance.
    pub jobs_stopped_last_rebalance: u64,
    /// The worker's static claims (`connect.protocol=static`), `null` when it has none.
    pub static_claims: Option<StaticClaims>,
    /// Whether the static claims are honoured (every member speaks the static protocol).
    pub static_in_effect: bool,
}

/// `static.connectors` and `static.tasks` as configured (each `null` when unset).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StaticClaims {
    pub connectors: Option<Vec<String>>,
    pub tasks: Option<Vec<String>>,
}
