//! `connect-distributed`'s herder (Connect's `DistributedHerder`): workers share connectors and
//! tasks through a Kafka consumer group of protocol type `connect`, with configs, statuses and
//! offsets in Connect's internal topics.
//!
//! One async loop per worker ([`HerderLoop`]) owns group membership and everything that starts
//! or stops work: rebalances, config-topic events, connector reconfiguration, restarts. REST
//! calls read the config snapshot and the status cache directly, write config records directly
//! (leader-only writes under one lock), and hand anything touching running instances to the
//! loop. Requests that must run elsewhere fail with [`HerderError::NotLeader`] /
//! [`HerderError::NotAssigned`], which the REST layer forwards (after waiting for a rebalance
//! in progress to end, see [`Membership`]).
//!
//! Stopping ([`DistributedHerder::stop`]) is honoured at every point of the group round: a
//! JoinGroup in flight is abandoned, a SyncGroup in flight gets a short grace, and a worker
//! that is stopping never starts a connector or a task. It then stops what it runs, reports
//! every job it held UNASSIGNED (the leader's evidence that it left cleanly, see
//! `clean_stop_evidence`) and sends LeaveGroup, all within
//! `task.shutdown.graceful.timeout.ms`.

mod events;
mod handle;
mod herder_loop;
mod leader;
mod start;
#[cfg(test)]
mod tests;

pub use start::HerderParts;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};
use tributary_api::{ConnectError, Props};
use tributary_group::assignor::{ConfigSnapshot, DepartedJob, Job};
use tributary_group::client::{
    ConnectionSecurity, GroupConfig, GroupMember, GroupMembership, RejoinReason,
};
use tributary_group::{Assignment, ConnectProtocol};

use super::auto_restart;
use super::coordinator::{delta, stopped, CoordinatorError, RoundOutcome, WorkerCoordinator};
use super::fencing;
use super::info::{
    ConnectorInfo, ConnectorStateInfo, GroupView, StaticClaims, TaskInfo, TaskRef, TaskState,
    WorkerInfo,
};
use super::rebalances::{Jobs, LeaderView, RebalanceRecord};
use super::restart::build_restart_plan;
use super::session::{self, RequestSignature};
use super::validation::validate_for_put;
use super::{Created, Herder, HerderError, HerderResult, Membership, REBALANCE_EXPECTED};
use crate::config::unsupported::WorkerSupport;
use crate::config::worker::ExactlyOnceSourceSupport;
use crate::config::worker::WorkerConfig;
use crate::config_records::RestartRequest;
use crate::plugins::Plugins;
use crate::storage::config_store::ConfigBackingStore;
use crate::storage::config_topic::{ClusterConfigState, ConfigEvent, KafkaConfigBackingStore};
use crate::storage::connector_offset_store::ConnectorOffsetTopics;
use crate::storage::offset::OffsetBackingStore;
use crate::storage::offset_topic::KafkaOffsetBackingStore;
use crate::storage::status::{ClusterStatusStore, State, Status, StatusBackingStore};
use crate::storage::status_topic::KafkaStatusBackingStore;
use crate::storage::topic_admin::{ensure_topics, InternalTopic, ManagedTopic};
use crate::worker::{TargetState, TaskCountersSnapshot, Worker};
use crate::ConnectorTaskId;
use leader::{leader_fence_zombies, leader_write_task_configs, ExactlyOnceTasks};

/// What the REST side can see of the loop's state.
#[derive(Debug, Clone, Default)]
struct View {
    leader_url: Option<String>,
    is_leader: bool,
    generation: i32,
    protocol: Option<String>,
    /// Jobs this worker runs.
    connectors: BTreeSet<String>,
    tasks: BTreeSet<ConnectorTaskId>,
    /// The leader's map of owners' URLs, from the last assignment it computed.
    connector_owners: HashMap<String, String>,
    task_owners: HashMap<ConnectorTaskId, String>,
    rebalances: u64,
    last_rebalance_ms: u64,
    /// Total time spent in rebalances, ms.
    rebalancing_ms_total: u64,
    /// The longest rebalance, ms.
    rebalance_max_ms: u64,
    /// When the last rebalance completed, ms since the epoch (0 before the first).
    last_rebalance_completed_ms: i64,
    /// Jobs this worker stopped in its last rebalance (revocations).
    jobs_stopped_last_rebalance: u64,
    /// Whether this worker's static claims are honoured in the current generation.
    static_in_effect: bool,
    /// This worker's static claims, for reporting.
    static_claims: Option<StaticClaimLists>,
}

/// A worker's static claims as configured: (`static.connectors`, `static.tasks` as strings),
/// each `None` when unset.
type StaticClaimLists = (Option<Vec<String>>, Option<Vec<String>>);

impl View {
    /// Whether the group runs a protocol with signed internal requests (KIP-507).
    fn sessioned(&self) -> bool {
        matches!(self.protocol.as_deref(), Some("sessioned") | Some("static"))
    }
}

struct Shared {
    worker: Arc<Worker>,
    /// The config topic (the Kafka store; an in-memory one in tests).
    config: Arc<dyn ConfigBackingStore>,
    /// The status topic (the Kafka store; an in-memory one in tests).
    statuses: Arc<dyn ClusterStatusStore>,
    /// The worker's offsets (the offsets topic; in memory in tests).
    offsets: Arc<dyn OffsetBackingStore>,
    cluster_id: Option<String>,
    /// Advertised REST URL with a trailing slash, as Java puts it in member metadata.
    url: String,
    view: RwLock<View>,
    /// Serialises the leader's read-check-write sequences on the config topic.
    write_lock: Mutex<()>,
    /// Task-config writes waiting for the write lock, written together by whoever takes it
    /// next ([`leader_write_task_configs`]).
    task_config_queue: Mutex<Vec<leader::QueuedTaskConfigs>>,
    /// The report of the leader's reconciliation of `tributary.connectors.dir`, when set.
    connectors_dir: Option<crate::herder::connectors_dir::SharedReport>,
    /// Serialises the leader's rounds of zombie fencing (KIP-618): a request arriving during a
    /// round finds the task count record written when it ends.
    fencing_lock: Mutex<()>,
    /// `worker.sync.timeout.ms`: how long the leader reads the config topic before fencing.
    sync_timeout: Duration,
    /// `inter.worker.verification.algorithms`.
    verification_algorithms: Vec<String>,
    /// `inter.worker.key.ttl.ms`.
    key_ttl_ms: i64,
    /// Where the group membership stands, for requests that wait for a rebalance to end.
    membership: watch::Sender<Membership>,
    /// Set once the worker is stopping: blocking sections start nothing more.
    stopping: AtomicBool,
    /// When the stop was requested: the clean stop ends `task.shutdown.graceful.timeout.ms`
    /// after it.
    stop_requested: std::sync::OnceLock<Instant>,
    /// Automatic restarts of the instances this worker runs.
    supervisor: Mutex<auto_restart::Supervisor>,
    /// The recent rebalances of this worker (`GET /tributary/rebalances`).
    rebalance_log: Mutex<super::rebalances::RebalanceLog>,
}

enum LoopRequest {
    RestartConnector(String, oneshot::Sender<HerderResult<()>>),
    RestartTask(ConnectorTaskId, oneshot::Sender<HerderResult<()>>),
    Reconfigure(String),
    /// KIP-1017's `GET /health`: answered as soon as the loop takes it.
    HealthCheck(oneshot::Sender<HerderResult<()>>),
}

/// How long heartbeats stay expedited after another worker was seen stopping a job (see
/// [`tributary_group::client::HeartbeatHandle`]): a rebalance (a clean departure, or the
/// follow-up round after revocations) is then likely within moments.
const EXPEDITE_AFTER_STOP: Duration = Duration::from_secs(3);

/// The longest the status topic is read before the leader judges whether departed workers
/// stopped their jobs; when it takes longer, their jobs wait as lost jobs do.
const EVIDENCE_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest the herder loop waits for the leader to answer a forwarded task-config write
/// (the write is retried after that).
const FORWARD_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest [`DistributedHerder::stop`] waits for the internal topic logs to close.
const LOG_CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The distributed herder.
pub struct DistributedHerder {
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<LoopRequest>,
    /// Tells the herder loop to stop (see [`DistributedHerder::stop`]).
    stop_tx: watch::Sender<bool>,
    /// The herder loop, awaited by [`DistributedHerder::stop`].
    loop_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn topic_configs(config: &WorkerConfig, prefix: &str) -> HashMap<String, String> {
    config
        .with_prefix(prefix)
        .into_iter()
        .filter(|(k, _)| {
            ![
                "topic",
                "partitions",
                "replication.factor",
                "cleanup.policy",
            ]
            .contains(&k.as_str())
        })
        .collect()
}

/// Why new task configs of a connector could not be published (retried with backoff).
#[derive(Debug, thiserror::Error)]
enum ReconfigureError {
    /// The connector failed to produce task configs.
    #[error("the connector could not generate task configs: {0}")]
    TaskConfigs(ConnectError),
    /// The leader could not write them to the config topic.
    #[error("writing task configs failed: {0}")]
    Write(HerderError),
    /// No leader is known yet.
    #[error("no known leader to send task configs to")]
    NoLeader,
    /// Forwarding them to the leader failed.
    #[error("POST {url}: {detail}")]
    Forward { url: String, detail: String },
    /// The group rebalanced while the request was under way (given up, or answered 409 by
    /// the leader): sent again once the round is over, with no backoff.
    #[error("POST {url}: {detail}")]
    Rebalancing { url: String, detail: String },
}

/// Why a distributed worker could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A worker setting is invalid (e.g. `connect.protocol`).
    #[error("{0}")]
    Config(String),
    /// The internal topics could not be created, checked or read.
    #[error("{0}")]
    InternalTopics(#[from] ConnectError),
    /// The group coordinator refused the group settings or could not be reached.
    #[error("{0}")]
    Group(#[from] tributary_group::client::GroupError),
    /// A startup step panicked.
    #[error("a startup step failed: {0}")]
    Panicked(#[from] tokio::task::JoinError),
}

impl DistributedHerder {
    /// Stops the worker: wherever the herder loop is (joining, syncing, starting work, idle),
    /// it starts nothing more, stops every connector and task (their offsets committed, their
    /// statuses UNASSIGNED), reports the jobs it held but had not started UNASSIGNED too, and
    /// leaves the group, within `task.shutdown.graceful.timeout.ms`; then the internal topic
    /// logs are closed. Requests waiting for a rebalance are answered at once.
    pub async fn stop(&self) {
        self.shared.stop_requested.get_or_init(Instant::now);
        self.shared.stopping.store(true, Ordering::Release);
        self.shared.membership.send_modify(|m| m.stopping = true);
        self.stop_tx.send_replace(true);
        let handle = self.loop_task.lock().unwrap().take();
        if let Some(handle) = handle {
            // The loop bounds its own shutdown; this bound only guards against a loop stuck
            // in a blocking call.
            let bound = self
                .shared
                .worker
                .config
                .settings()
                .task_shutdown_graceful_timeout
                + Duration::from_secs(5);
            match tokio::time::timeout(bound, handle).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!("the herder loop failed: {e}"),
                Err(_) => tracing::error!(
                    ?bound,
                    "the herder loop did not finish its shutdown in time; exiting anyway"
                ),
            }
        }
        // What the stores still queue was flushed by the loop (statuses) or by the tasks
        // (offsets); closing them normally takes a few hundred ms, and at most
        // `LOG_CLOSE_WAIT` is spent on it (a broker that went away would hold each up 10 s).
        let s = self.shared.clone();
        let close = tokio::task::spawn_blocking(move || {
            std::thread::scope(|scope| {
                scope.spawn(|| s.config.stop());
                scope.spawn(|| s.statuses.stop());
                scope.spawn(|| s.offsets.stop());
                scope.spawn(|| s.worker.stop_connector_offset_topics());
            });
        });
        match tokio::time::timeout(LOG_CLOSE_WAIT, close).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("stopping the internal topic logs failed: {e}"),
            Err(_) => tracing::warn!(
                "the internal topic logs did not close within {LOG_CLOSE_WAIT:?}; exiting anyway"
            ),
        }
    }

    /// Whether this worker leads its group now: the last rebalance settled with it as leader
    /// and it is not stopping (what MirrorMaker's dedicated mode waits for before it writes
    /// its connectors' configs, as Java's `MirrorHerder.rebalanceSuccess` checks
    /// `isLeader()`).
    pub fn leads(&self) -> bool {
        let m = *self.shared.membership.borrow();
        !m.rebalancing && !m.stopping && self.shared.view.read().unwrap().is_leader
    }

    /// The config snapshot, shared (cheap: no copy of the configs).
    fn snapshot(&self) -> Arc<ClusterConfigState> {
        self.shared.config.snapshot()
    }

    fn require_leader(&self) -> HerderResult<()> {
        let v = self.shared.view.read().unwrap();
        if v.is_leader {
            Ok(())
        } else {
            Err(HerderError::NotLeader(v.leader_url.clone()))
        }
    }

    fn connector_type(&self, config: &Props) -> String {
        config
            .get("connector.class")
            .and_then(|c| self.shared.worker.plugins.connector_type(c))
            .map(|t| t.as_str().to_string())
            .unwrap_or_else(|| "unknown".into())
    }

    fn info(&self, snap: &ClusterConfigState, name: &str) -> HerderResult<ConnectorInfo> {
        let config = snap
            .connector_configs
            .get(name)
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))?;
        Ok(ConnectorInfo {
            name: name.to_string(),
            config: config.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            tasks: snap
                .tasks(name)
                .into_iter()
                .map(|id| TaskRef {
                    connector: id.connector,
                    task: id.task,
                })
                .collect(),
            connector_type: self.connector_type(config),
        })
    }

    fn call_loop<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<HerderResult<T>>) -> LoopRequest,
    ) -> HerderResult<T> {
        let (tx, rx) = oneshot::channel();
        self.requests
            .send(make(tx))
            .map_err(|_| HerderError::Internal("the herder is stopped".into()))?;
        rx.blocking_recv()
            .map_err(|_| HerderError::Internal("the herder is stopped".into()))?
    }

    /// The automatic restart record of an instance this worker runs (or ran), for its status.
    fn auto_restart_info(
        &self,
        instance: &auto_restart::Instance,
    ) -> Option<super::info::AutoRestartInfo> {
        let sup = self.shared.supervisor.lock().unwrap();
        let r = sup.record(instance)?;
        Some(super::info::AutoRestartInfo {
            restarts: r.restarts,
            last_failure_trace: r.last_failure_trace.clone(),
            last_failure_ms: r.last_failure_ms,
            next_restart_in_ms: r
                .due
                .map(|d| d.saturating_duration_since(Instant::now()).as_millis() as u64),
            backoff_ms: r.next_backoff_ms,
            exhausted: r.exhausted,
        })
    }

    fn write(
        &self,
        f: impl FnOnce(&dyn ConfigBackingStore) -> tributary_api::ConnectResult<()>,
    ) -> HerderResult<()> {
        f(self.shared.config.as_ref()).map_err(HerderError::from)
    }
}

/// The herder's loop: the single place that decides what this worker runs.
struct HerderLoop {
    shared: Arc<Shared>,
    /// Group membership and the leader's assignor memory.
    coordinator: WorkerCoordinator,
    /// Turns true when the worker is asked to stop.
    stopping: watch::Receiver<bool>,
    rejoin: tokio::sync::watch::Receiver<Option<tributary_group::client::RejoinReason>>,
    events: mpsc::UnboundedReceiver<ConfigEvent>,
    /// FAILED statuses this worker wrote (automatic restarts).
    failures: mpsc::UnboundedReceiver<auto_restart::Failure>,
    requests: mpsc::UnboundedReceiver<LoopRequest>,
    need_rejoin: bool,
    /// When the last rounds that config changes asked for completed (the last few): two or
    /// more within [`herder_loop::BURST_WINDOW`] mean changes are streaming in (connectors
    /// created one after another), and the next such round waits for the burst to pause.
    config_rounds: std::collections::VecDeque<Instant>,
    /// The pending rejoin was asked for by config changes during a burst: wait for them to
    /// pause first ([`HerderLoop::coalesce_config_events`]).
    coalesce: bool,
    /// The pending rejoin was asked for by config changes.
    config_rejoin: bool,
    /// The protocol negotiated in the last completed rebalance.
    in_use: Option<ConnectProtocol>,
    /// The jobs this worker holds (cooperative: what goes into the next JoinGroup metadata).
    held: Assignment,
    /// `scheduled.rebalance.max.delay.ms`.
    max_delay: Duration,
    /// When the delay of the last assignment is up (a rejoin is due).
    scheduled_rejoin: Option<Instant>,
    /// Failed attempts to catch up with the config topic (cooperative backoff).
    unsync_retries: u32,
    /// Connectors in the config snapshot at the last rebalance.
    known_connectors: BTreeSet<String>,
    /// The config snapshot offset each connector instance this worker started was started
    /// from: a config record read before it (a `ConnectorConfigUpdate` queued while the
    /// rebalance that assigned the connector was under way) is already in that instance and
    /// does not bounce it.
    started_from: HashMap<String, i64>,
    /// Owned connectors whose task configs must be (re)generated.
    pending_reconfigure: BTreeSet<String>,
    /// KIP-745 restart requests read from the config topic, processed once no rebalance is
    /// pending (one per connector: the one with the highest impact).
    pending_restarts: BTreeMap<String, RestartRequest>,
    reconfigure_backoff: Option<(Instant, Duration)>,
    sync_timeout: Duration,
    unsync_backoff: Duration,
    http: reqwest::Client,
    /// The path prefix of the group's REST namespace ([`HerderParts::rest_namespace`]), put
    /// after the leader's URL when forwarding to it.
    rest_namespace: String,
    /// The round being completed, for the rebalance timeline: filled by `rebalance`, logged
    /// with its duration once it succeeded.
    round_record: Option<(RebalanceRecord, Option<LeaderView>)>,
    /// The generation of the round completed before the one being applied (-1: none): a
    /// status a leader wrote in a later generation was written while this worker was out of
    /// the group.
    previous_generation: i32,
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The tasks of `connector` in a set of task ids (a range of the ordered set, not a scan).
fn tasks_of<'a>(
    tasks: &'a BTreeSet<ConnectorTaskId>,
    connector: &str,
) -> impl Iterator<Item = &'a ConnectorTaskId> {
    tasks.range(ConnectorTaskId::new(connector, 0)..=ConnectorTaskId::new(connector, u32::MAX))
}

/// The assignor's view of a config snapshot: offset and task counts per connector.
fn config_snapshot(snap: &ClusterConfigState) -> ConfigSnapshot {
    ConfigSnapshot {
        offset: snap.offset,
        connectors: snap
            .connector_configs
            .keys()
            .map(|c| (c.clone(), snap.tasks(c).len() as u32))
            .collect(),
    }
}

/// The worker id (`host:port`) of an advertised REST URL (`http://host:port/`), as Connect
/// derives a worker's id from the same advertised host and port.
fn worker_id_of_url(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

/// Whether the status store holds positive evidence that the departed owner of `d` stopped it
/// before leaving (Tributary's clean-departure rule): the job's latest status is UNASSIGNED,
/// written by that worker in a generation from the one that gave it the job to the last round
/// it was a member of. Connect workers (Java's and Tributary's) write exactly this when they
/// stop a job, and a worker that vanished leaves its last RUNNING (or other) status. A worker
/// that stops while a round is under way reports the generation it last learnt, one before the
/// round the leader saw it in, so that one counts too; an UNASSIGNED from an earlier stint
/// (before the job was given to it again) does not. The leader's own UNASSIGNED reports of lost
/// jobs carry a later generation, so they never count.
fn clean_stop_evidence(statuses: &dyn StatusBackingStore, d: &DepartedJob) -> bool {
    let status = match &d.job {
        Job::Connector(c) => statuses.connector(c),
        Job::Task(t) => statuses.task(t),
    };
    status.is_some_and(|s| {
        s.state == State::Unassigned
            && (d.held_since..=d.generation).contains(&s.generation)
            && s.worker_id == worker_id_of_url(&d.owner_url)
    })
}

/// Reports `jobs` UNASSIGNED in `generation`, keeping the last worker id of each.
fn mark_unassigned(s: &Shared, jobs: &[Job], generation: i32) {
    for job in jobs {
        let last = match job {
            Job::Connector(c) => s.statuses.connector(c),
            Job::Task(t) => s.statuses.task(t),
        };
        let status = Status {
            state: State::Unassigned,
            trace: None,
            worker_id: last.map(|st| st.worker_id).unwrap_or_default(),
            generation,
            version: None,
        };
        match job {
            Job::Connector(c) => s.statuses.put_connector(c, status),
            Job::Task(t) => s.statuses.put_task(t, status),
        }
    }
}

/// The leader's clean-up after a rebalance: statuses of deleted connectors, and of tasks
/// beyond a connector's task count, are tombstoned.
fn tombstone_stale_statuses(s: &Shared) {
    let snap = s.config.snapshot();
    for c in s.statuses.connectors() {
        if !snap.contains(&c) {
            s.statuses.delete_connector(&c);
            s.statuses.delete_topics(&c);
            continue;
        }
        let n = snap.tasks(&c).len() as u32;
        let stale: BTreeMap<u32, Status> = s
            .statuses
            .tasks(&c)
            .into_iter()
            .filter(|(t, _)| *t >= n)
            .collect();
        for t in stale.keys() {
            s.statuses.delete_task(&ConnectorTaskId::new(&c, *t));
        }
    }
}
