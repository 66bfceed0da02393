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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};
use tributary_api::{ConnectError, Props};
use tributary_group::assignor::{ConfigSnapshot, DepartedJob, Job};
use tributary_group::client::{ConnectionSecurity, GroupConfig, GroupMember, RejoinReason};
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
use crate::storage::config_topic::{ClusterConfigState, ConfigEvent, KafkaConfigBackingStore};
use crate::storage::connector_offset_store::ConnectorOffsetTopics;
use crate::storage::offset_topic::KafkaOffsetBackingStore;
use crate::storage::status::{State, Status, StatusBackingStore};
use crate::storage::status_topic::KafkaStatusBackingStore;
use crate::storage::topic_admin::{ensure_topics, InternalTopic, ManagedTopic};
use crate::worker::{TargetState, TaskCountersSnapshot, Worker};
use crate::ConnectorTaskId;

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
    config: Arc<KafkaConfigBackingStore>,
    statuses: Arc<KafkaStatusBackingStore>,
    offsets: Arc<KafkaOffsetBackingStore>,
    cluster_id: Option<String>,
    /// Advertised REST URL with a trailing slash, as Java puts it in member metadata.
    url: String,
    view: RwLock<View>,
    /// Serialises the leader's read-check-write sequences on the config topic.
    write_lock: Mutex<()>,
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
    /// Starts a distributed worker: creates or checks the internal topics, reads them to their
    /// end, creates the worker and joins the group. `url` is the advertised REST URL
    /// (`http://host:port`), `worker_id` its `host:port`.
    pub async fn start(
        config: WorkerConfig,
        plugins: Arc<Plugins>,
        url: String,
        worker_id: String,
        cluster_id: Option<String>,
    ) -> Result<Arc<DistributedHerder>, StartError> {
        let d = config
            .settings()
            .distributed()
            .ok_or_else(|| StartError::Config("not a distributed worker configuration".into()))?
            .clone();
        let group_id = d.group_id.clone();
        let bootstrap = config.bootstrap_servers();
        // The worker-level security keys: internal-topic clients and the group client use them.
        let security = crate::config::clients::worker_security(&config)
            .map_err(|e| StartError::Config(e.to_string()))?;
        let connection_security = ConnectionSecurity::from_settings(&security)
            .map_err(|e| StartError::Config(e.to_string()))?;
        let inherited = crate::config::clients::worker_security_layer(&config);
        // Checked once here: the same settings cannot fail below.
        crate::config::clients::client_config(
            crate::config::clients::ClientKind::Admin,
            &bootstrap,
            &[],
            &[("", inherited.clone())],
        )
        .map_err(|e| StartError::Config(e.to_string()))?;
        let client = {
            let (bootstrap, group_id) = (bootstrap.clone(), group_id.clone());
            move |suffix: &str| {
                let mut c = crate::config::clients::client_config(
                    crate::config::clients::ClientKind::Admin,
                    &bootstrap,
                    &[("client.id", format!("{group_id}-{suffix}"))],
                    &[("", inherited.clone())],
                )
                .unwrap_or_else(|_| rdkafka::ClientConfig::new());
                c.set("group.id", &group_id);
                c
            }
        };
        // (setting, topic, prefix of its topic settings, partitions, replication factor,
        // single partition)
        let topics = [
            (
                "config.storage.topic",
                &d.config_storage_topic,
                "config.storage.",
                1,
                d.config_storage_replication_factor,
                true,
            ),
            (
                "offset.storage.topic",
                &d.offset_storage_topic,
                "offset.storage.",
                d.offset_storage_partitions,
                d.offset_storage_replication_factor,
                false,
            ),
            (
                "status.storage.topic",
                &d.status_storage_topic,
                "status.storage.",
                d.status_storage_partitions,
                d.status_storage_replication_factor,
                false,
            ),
        ];
        let admin = client("shared-admin");
        // The three internal topics as they are created (and created again when deleted while
        // the worker runs): config, offsets, status.
        let managed: Vec<ManagedTopic> = topics
            .iter()
            .map(
                |(setting, name, prefix, partitions, rf, single)| ManagedTopic {
                    admin: admin.clone(),
                    security: connection_security.clone(),
                    topic: InternalTopic {
                        name: name.to_string(),
                        partitions: *partitions,
                        replication_factor: i32::from(*rf),
                        configs: topic_configs(&config, prefix),
                        single_partition: *single,
                        setting,
                    },
                },
            )
            .collect();
        let to_create: Vec<InternalTopic> = managed.iter().map(|m| m.topic.clone()).collect();
        // The three in one request per step.
        tokio::task::spawn_blocking(move || ensure_topics(&admin, &to_create)).await??;
        let [config_topic, offsets_topic, status_topic]: [ManagedTopic; 3] = managed
            .try_into()
            .unwrap_or_else(|_| unreachable!("three internal topics"));
        // Connector-specific offsets topics (KIP-618) are created like the worker's.
        let connector_offset_topics = Arc::new(ConnectorOffsetTopics::new(
            offsets_topic.clone(),
            Arc::new(client.clone()),
        ));

        let (events_tx, events_rx) = mpsc::unbounded_channel::<ConfigEvent>();
        let (requests_tx, requests_rx) = mpsc::unbounded_channel::<LoopRequest>();
        let c = client.clone();
        let status_worker_id = worker_id.clone();
        let transactional_leader =
            d.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled;
        let leader_group = group_id.clone();
        // The three stores read their topics at once.
        let offsets = {
            let c = c.clone();
            tokio::task::spawn_blocking(move || {
                KafkaOffsetBackingStore::start(
                    &offsets_topic.topic.name.clone(),
                    c("offsets"),
                    c("offsets"),
                    Some(offsets_topic),
                )
            })
        };
        let statuses = {
            let c = c.clone();
            tokio::task::spawn_blocking(move || {
                KafkaStatusBackingStore::start(
                    &status_topic.topic.name.clone(),
                    c("statuses"),
                    c("statuses"),
                    Some(status_topic),
                    &status_worker_id,
                )
            })
        };
        let config_store = tokio::task::spawn_blocking(move || {
            let config_store = KafkaConfigBackingStore::start(
                &config_topic.topic.name.clone(),
                c("configs"),
                c("configs"),
                Some(config_topic),
                move |e| {
                    // Fails only once the herder loop has ended (the worker is stopping), when
                    // config events no longer matter.
                    if events_tx.send(e).is_err() {
                        tracing::debug!("config event after the herder loop ended");
                    }
                },
            )?;
            // KIP-618: from `preparing` on, the leader writes the config topic in transactions.
            Ok::<_, ConnectError>(if transactional_leader {
                let mut producer = c("configs");
                producer.remove("group.id");
                config_store
                    .with_transactional_leader(producer, &format!("connect-cluster-{leader_group}"))
            } else {
                config_store
            })
        });
        let (offsets, statuses, config_store) = tokio::join!(offsets, statuses, config_store);
        let (offsets, statuses, config_store) = (
            Arc::new(offsets??),
            Arc::new(statuses??),
            Arc::new(config_store??),
        );

        let reconfigure = requests_tx.clone();
        // The worker's statuses go through a watch that reports its FAILED ones to the loop
        // (automatic restarts).
        let (failures_tx, failures_rx) = mpsc::unbounded_channel();
        let worker = Arc::new(Worker::new(
            worker_id.clone(),
            config.clone(),
            plugins,
            offsets.clone(),
            Arc::new(auto_restart::FailureWatch::new(
                statuses.clone(),
                worker_id.clone(),
                failures_tx,
            )),
            Arc::new(move |name| {
                // Fails only once the herder loop has ended (the worker is stopping).
                if reconfigure.send(LoopRequest::Reconfigure(name)).is_err() {
                    tracing::debug!("reconfiguration request after the herder loop ended");
                }
            }),
        ));
        worker.set_connector_offset_topics(connector_offset_topics);
        let url_slash = format!("{}/", url.trim_end_matches('/'));
        let shared = Arc::new(Shared {
            worker,
            config: config_store,
            statuses,
            offsets,
            cluster_id,
            url: url_slash,
            view: RwLock::new(View {
                static_claims: (d.connect_protocol == ConnectProtocol::Static
                    && (d.static_connectors.is_some() || d.static_tasks.is_some()))
                .then(|| {
                    (
                        d.static_connectors.clone(),
                        d.static_tasks
                            .as_ref()
                            .map(|t| t.iter().map(|t| t.to_string()).collect()),
                    )
                }),
                ..View::default()
            }),
            write_lock: Mutex::new(()),
            fencing_lock: Mutex::new(()),
            sync_timeout: d.worker_sync_timeout,
            verification_algorithms: d.inter_worker_verification_algorithms.clone(),
            key_ttl_ms: i64::try_from(d.inter_worker_key_ttl.as_millis()).unwrap_or(i64::MAX),
            membership: watch::Sender::new(Membership::joining()),
            stopping: AtomicBool::new(false),
            stop_requested: std::sync::OnceLock::new(),
            supervisor: Mutex::default(),
            rebalance_log: Mutex::default(),
        });

        let mut group = GroupConfig::new(group_id, format!("connect-{worker_id}"));
        group.session_timeout = d.session_timeout;
        group.heartbeat_interval = d.heartbeat_interval;
        group.rebalance_timeout = d.rebalance_timeout;
        group.security = connection_security;
        group.validate()?;
        let member = GroupMember::connect(&bootstrap, group).await?;
        let max_delay = d.scheduled_rebalance_max_delay;
        let coordinator = WorkerCoordinator::new(
            member,
            d.connect_protocol,
            shared.url.clone(),
            (d.static_connectors.clone(), d.static_tasks.clone()),
            max_delay,
        );
        // Another worker stopping a job (it leaves, or it was revoked ahead of the follow-up
        // round) means a rebalance is near: heartbeat often for a while so as to join it at
        // once rather than up to `heartbeat.interval.ms` later.
        let heartbeats = coordinator.heartbeat_handle();
        let me = shared.worker.worker_id.clone();
        shared.statuses.on_status(move |status| {
            if status.state == State::Unassigned && status.worker_id != me {
                heartbeats.expedite(EXPEDITE_AFTER_STOP);
            }
        });
        let (stop_tx, stop_rx) = watch::channel(false);
        let lp = HerderLoop {
            shared: shared.clone(),
            rejoin: coordinator.rejoin_needed(),
            coordinator,
            stopping: stop_rx,
            events: events_rx,
            requests: requests_rx,
            failures: failures_rx,
            need_rejoin: true,
            in_use: None,
            held: Assignment::default(),
            max_delay,
            scheduled_rejoin: None,
            unsync_retries: 0,
            known_connectors: BTreeSet::new(),
            started_from: HashMap::new(),
            pending_reconfigure: BTreeSet::new(),
            pending_restarts: BTreeMap::new(),
            reconfigure_backoff: None,
            sync_timeout: d.worker_sync_timeout,
            unsync_backoff: d.worker_unsync_backoff,
            http: crate::peer::peer_http_client(&config)
                .map_err(|(k, m)| StartError::Config(format!("{k}: {m}")))?,
            round_record: None,
        };
        if d.exactly_once_source_support.enabled() {
            shared
                .worker
                .set_exactly_once_coordinator(Arc::new(ExactlyOnceTasks {
                    shared: Arc::downgrade(&shared),
                    runtime: tokio::runtime::Handle::current(),
                    http: lp.http.clone(),
                }));
        }
        let handle = tokio::spawn(lp.run());
        Ok(Arc::new(DistributedHerder {
            shared,
            requests: requests_tx,
            stop_tx,
            loop_task: Mutex::new(Some(handle)),
        }))
    }

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
        f: impl FnOnce(&KafkaConfigBackingStore) -> tributary_api::ConnectResult<()>,
    ) -> HerderResult<()> {
        f(&self.shared.config).map_err(|e| HerderError::Internal(e.to_string()))
    }
}

impl Herder for DistributedHerder {
    fn worker_id(&self) -> String {
        self.shared.worker.worker_id.clone()
    }

    fn kafka_cluster_id(&self) -> Option<String> {
        self.shared.cluster_id.clone()
    }

    fn plugins(&self) -> &Plugins {
        &self.shared.worker.plugins
    }

    fn connectors(&self) -> HerderResult<Vec<String>> {
        Ok(self.snapshot().connectors())
    }

    fn connector_info(&self, name: &str) -> HerderResult<ConnectorInfo> {
        self.info(&self.snapshot(), name)
    }

    fn connector_config(&self, name: &str) -> HerderResult<Props> {
        self.snapshot()
            .connector_configs
            .get(name)
            .cloned()
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))
    }

    fn put_connector_config(
        &self,
        name: &str,
        config: Props,
        allow_replace: bool,
        initial_state: Option<TargetState>,
    ) -> HerderResult<Created<ConnectorInfo>> {
        validate_for_put(
            &self.shared.worker.plugins,
            &WorkerSupport::of(&self.shared.worker.config),
            self.shared.worker.config.providers(),
            &config,
        )?;
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        let existed = self.snapshot().contains(name);
        if existed && !allow_replace {
            return Err(HerderError::Conflict(format!(
                "Connector {name} already exists"
            )));
        }
        let target = if existed { None } else { initial_state };
        self.write(|s| s.put_connector_config(name, &config, target))?;
        Ok(Created {
            created: !existed,
            result: self.info(&self.snapshot(), name)?,
        })
    }

    fn delete_connector(&self, name: &str) -> HerderResult<()> {
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Connector {name} not found")));
        }
        self.write(|s| s.remove_connector_config(name))
    }

    fn connector_status(&self, name: &str) -> HerderResult<ConnectorStateInfo> {
        let ctype = self
            .snapshot()
            .connector_configs
            .get(name)
            .map(|c| self.connector_type(c))
            .unwrap_or_else(|| "unknown".into());
        let mut info = super::connector_state_info(self.shared.statuses.as_ref(), name, ctype)?;
        info.connector.auto_restart =
            self.auto_restart_info(&auto_restart::Instance::Connector(name.to_string()));
        for t in &mut info.tasks {
            t.auto_restart = self.auto_restart_info(&auto_restart::Instance::Task(
                ConnectorTaskId::new(name, t.id),
            ));
        }
        super::add_progress(&self.shared.worker, &mut info);
        Ok(info)
    }

    fn task_status(&self, id: &ConnectorTaskId) -> HerderResult<TaskState> {
        let mut state = super::task_state(self.shared.statuses.as_ref(), id)?;
        state.auto_restart = self.auto_restart_info(&auto_restart::Instance::Task(id.clone()));
        state.progress = self.shared.worker.task_stall(id);
        Ok(state)
    }

    fn task_configs(&self, name: &str) -> HerderResult<Vec<TaskInfo>> {
        let snap = self.snapshot();
        if !snap.contains(name) {
            return Err(HerderError::NotFound(format!("Connector {name} not found")));
        }
        Ok(snap
            .tasks(name)
            .into_iter()
            .map(|id| TaskInfo {
                config: snap
                    .task_config(&id)
                    .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default(),
                id: TaskRef {
                    connector: id.connector,
                    task: id.task,
                },
            })
            .collect())
    }

    fn pause_connector(&self, name: &str) -> HerderResult<()> {
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        self.write(|s| s.put_target_state(name, TargetState::Paused))
    }

    fn resume_connector(&self, name: &str) -> HerderResult<()> {
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        self.write(|s| s.put_target_state(name, TargetState::Started))
    }

    fn stop_connector(&self, name: &str) -> HerderResult<()> {
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        // Connect writes the empty task set first; the target state goes first here so that a
        // reconfiguration racing with this call (it runs on the herder loop, not under this
        // lock) sees STOPPED and publishes nothing. The records in the topic are the same.
        self.write(|s| {
            s.put_target_state(name, TargetState::Stopped)?;
            s.refresh(Duration::from_secs(30))?;
            s.put_task_configs(name, &[])?;
            s.refresh(Duration::from_secs(30))
        })
    }

    fn connector_offsets(
        &self,
        name: &str,
    ) -> HerderResult<crate::worker::connector_offsets::ConnectorOffsets> {
        let snap = self.snapshot();
        let config = snap
            .connector_configs
            .get(name)
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))?;
        crate::worker::connector_offsets::connector_offsets_of(&self.shared.worker, name, config)
    }

    fn modify_connector_offsets(
        &self,
        name: &str,
        offsets: Option<Vec<crate::worker::connector_offsets::ConnectorOffset>>,
    ) -> HerderResult<crate::worker::connector_offsets::Message> {
        // Connect's `modifyConnectorOffsetsChecks`: no rebalance pending, the leader, the
        // config topic read to its end, the connector STOPPED with no tasks.
        if self.shared.membership.borrow().rebalancing {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        self.require_leader()?;
        // Serialised with the leader's config writes, so that no resume is written meanwhile
        // through this worker.
        let _guard = self.shared.write_lock.lock().unwrap();
        self.shared
            .config
            .refresh(Duration::from_secs(30))
            .map_err(|_| {
                HerderError::Internal(
                    "Failed to read to end of config topic before modifying connector offsets"
                        .into(),
                )
            })?;
        let snap = self.snapshot();
        let config = snap
            .connector_configs
            .get(name)
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))?;
        crate::worker::connector_offsets::require_stopped(
            name,
            snap.target_state(name) == TargetState::Stopped,
            snap.task_counts.get(name).copied().unwrap_or(0) as usize,
        )?;
        crate::worker::connector_offsets::modify_connector_offsets(
            &self.shared.worker,
            name,
            config,
            offsets.as_deref(),
        )
    }

    fn restart_connector(&self, name: &str) -> HerderResult<()> {
        let name = name.to_string();
        self.call_loop(|tx| LoopRequest::RestartConnector(name, tx))
    }

    fn restart_task(&self, id: &ConnectorTaskId) -> HerderResult<()> {
        let id = id.clone();
        self.call_loop(|tx| LoopRequest::RestartTask(id, tx))
    }

    fn restart_connector_and_tasks(
        &self,
        request: RestartRequest,
    ) -> HerderResult<ConnectorStateInfo> {
        let snap = self.snapshot();
        if !snap.contains(&request.connector) {
            return Err(HerderError::NotFound(format!(
                "Unknown connector: {}",
                request.connector
            )));
        }
        self.require_leader()?;
        // The preview is planned from the statuses as they are before the request is written:
        // once it is in the config topic, this very worker may start restarting instances
        // (Connect plans on its tick thread before it processes the request).
        let ctype = self.connector_type(&snap.connector_configs[&request.connector]);
        let statuses = &self.shared.statuses;
        let plan = build_restart_plan(
            &request,
            statuses.connector(&request.connector).as_ref(),
            &statuses.tasks(&request.connector),
            &ctype,
        );
        self.write(|s| s.put_restart_request(&request))?;
        plan.map(|p| p.state_info).ok_or_else(|| {
            HerderError::NotFound(format!(
                "Status for connector {} not found",
                request.connector
            ))
        })
    }

    fn connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)> {
        self.shared.worker.all_connector_counters()
    }

    /// Ready once the worker has completed its first rebalance.
    fn is_ready(&self) -> bool {
        self.shared.membership.borrow().settled > 0
    }

    /// A round trip through the herder loop, which handles requests between rebalances,
    /// config events and restarts: a loop stuck in one of them does not answer.
    fn health_check(&self) -> HerderResult<()> {
        self.call_loop(LoopRequest::HealthCheck)
    }

    fn auto_restart_counts(&self) -> Vec<(auto_restart::Instance, u32)> {
        let sup = self.shared.supervisor.lock().unwrap();
        sup.records()
            .map(|(i, r)| (i.clone(), r.restarts))
            .collect()
    }

    fn worker(&self) -> &Arc<Worker> {
        &self.shared.worker
    }

    fn status_store(&self) -> Arc<dyn crate::storage::status::StatusBackingStore> {
        self.shared.worker.statuses().clone()
    }

    fn worker_config(&self) -> &crate::config::worker::WorkerConfig {
        &self.shared.worker.config
    }

    fn task_counters(&self) -> Vec<(ConnectorTaskId, TaskCountersSnapshot)> {
        self.shared.worker.all_task_counters()
    }

    fn put_task_configs(
        &self,
        name: &str,
        configs: Vec<Props>,
        body: &[u8],
        signature: RequestSignature,
    ) -> HerderResult<()> {
        // KIP-507: signatures are checked once the group runs a sessioned protocol.
        if self.shared.view.read().unwrap().sessioned() {
            let key = self.snapshot().session_key.clone();
            session::verify(
                &signature,
                body,
                key.as_ref(),
                &self.shared.verification_algorithms,
            )?;
        }
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector: {name}")));
        }
        self.require_leader()?;
        leader_write_task_configs(&self.shared, name, &configs)
    }

    fn fence_zombies(
        &self,
        name: &str,
        body: &[u8],
        signature: RequestSignature,
    ) -> HerderResult<()> {
        // KIP-507: signed like the other internal requests.
        if self.shared.view.read().unwrap().sessioned() {
            let key = self.snapshot().session_key.clone();
            session::verify(
                &signature,
                body,
                key.as_ref(),
                &self.shared.verification_algorithms,
            )?;
        }
        leader_fence_zombies(&self.shared, name)
    }

    fn set_cluster_logger_level(&self, namespace: &str, level: &str) -> HerderResult<()> {
        self.write(|s| s.put_logger_level(namespace, level))
    }

    fn membership(&self) -> Option<watch::Receiver<Membership>> {
        Some(self.shared.membership.subscribe())
    }

    fn rebalances(&self) -> Vec<RebalanceRecord> {
        self.shared.rebalance_log.lock().unwrap().records()
    }

    fn worker_info(&self) -> WorkerInfo {
        let m = *self.shared.membership.borrow();
        let v = self.shared.view.read().unwrap();
        WorkerInfo {
            worker_id: self.worker_id(),
            mode: "distributed".into(),
            group: Some(GroupView {
                rebalancing: m.rebalancing,
                stopping: m.stopping,
                leader: v.is_leader,
                leader_url: v.leader_url.clone(),
                generation: v.generation,
                protocol: v.protocol.clone(),
                connectors: v.connectors.iter().cloned().collect(),
                tasks: v.tasks.iter().map(|t| t.to_string()).collect(),
                rebalances: v.rebalances,
                last_rebalance_ms: v.last_rebalance_ms,
                rebalancing_ms_total: v.rebalancing_ms_total,
                rebalance_max_ms: v.rebalance_max_ms,
                last_rebalance_completed_ms: v.last_rebalance_completed_ms,
                jobs_stopped_last_rebalance: v.jobs_stopped_last_rebalance,
                static_claims: v.static_claims.as_ref().map(|(c, t)| StaticClaims {
                    connectors: c.clone(),
                    tasks: t.clone(),
                }),
                static_in_effect: v.static_in_effect,
            }),
        }
    }
}

/// The timeline record of a completed round (its duration and completion time are filled in
/// when it is logged) and, when this worker led it, the members and owners it computed.
/// `stopped_before` are the jobs an eager worker stopped before joining.
fn round_record(
    outcome: &RoundOutcome,
    stopped_before: Option<Jobs>,
) -> (RebalanceRecord, Option<LeaderView>) {
    let a = &outcome.assignment;
    let revoked = stopped_before.unwrap_or_else(|| Jobs {
        connectors: a.revoked_connectors.clone(),
        tasks: a.revoked_tasks.iter().map(|t| t.to_string()).collect(),
    });
    let record = RebalanceRecord {
        generation: outcome.generation,
        protocol: outcome.protocol.wire_name().to_string(),
        leader: a.leader.clone(),
        leader_url: a.leader_url.clone(),
        is_leader: outcome.is_leader,
        completed_ms: 0,
        duration_ms: 0,
        assigned: Jobs {
            connectors: a.connectors.clone(),
            tasks: a.tasks.iter().map(|t| t.to_string()).collect(),
        },
        revoked,
        members: None,
        joined: None,
        left: None,
        moved: None,
    };
    let leader_view = outcome.owners.as_ref().map(|o| LeaderView {
        members: o.members.iter().cloned().collect(),
        owners: o
            .connectors
            .iter()
            .map(|(c, url)| (c.clone(), url.clone()))
            .chain(o.tasks.iter().map(|(t, url)| (t.to_string(), url.clone())))
            .collect(),
    });
    (record, leader_view)
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
    /// The round being completed, for the rebalance timeline: filled by `rebalance`, logged
    /// with its duration once it succeeded.
    round_record: Option<(RebalanceRecord, Option<LeaderView>)>,
}

impl HerderLoop {
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared) -> T + Send + 'static,
    ) -> T {
        let s = self.shared.clone();
        tokio::task::spawn_blocking(move || f(&s))
            .await
            .expect("blocking herder call panicked")
    }

    /// Whether the worker was asked to stop.
    fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Publishes whether a rebalance is in progress or due; the end of one counts as a settle.
    fn publish_membership(&self, rebalancing: bool) {
        self.shared.membership.send_if_modified(|m| {
            if m.rebalancing == rebalancing {
                return false;
            }
            m.rebalancing = rebalancing;
            if !rebalancing {
                m.settled += 1;
            }
            true
        });
    }

    async fn run(mut self) {
        loop {
            if self.is_stopping() {
                break;
            }
            if self.need_rejoin {
                self.publish_membership(true);
                let started = Instant::now();
                // A rebalance may ask for another one (the follow-up round after revocations).
                self.need_rejoin = false;
                match self.rebalance().await {
                    Ok(()) => {
                        let mut v = self.shared.view.write().unwrap();
                        v.rebalances += 1;
                        v.last_rebalance_ms = started.elapsed().as_millis() as u64;
                        v.rebalancing_ms_total += v.last_rebalance_ms;
                        v.rebalance_max_ms = v.rebalance_max_ms.max(v.last_rebalance_ms);
                        v.last_rebalance_completed_ms = crate::worker::metrics::now_ms();
                        if let Some((mut record, leader_view)) = self.round_record.take() {
                            record.duration_ms = v.last_rebalance_ms;
                            record.completed_ms = v.last_rebalance_completed_ms;
                            self.shared
                                .rebalance_log
                                .lock()
                                .unwrap()
                                .push(record, leader_view);
                        }
                    }
                    Err(CoordinatorError::Stopping) => break,
                    Err(e) => {
                        match &e {
                            CoordinatorError::Rejoin(_) => tracing::info!("rejoining: {e}"),
                            CoordinatorError::Refused(_) => tracing::error!(
                                "rebalance failed, retrying in {:?}: {e}",
                                e.retry_after()
                            ),
                            _ => tracing::warn!(
                                "rebalance failed, retrying in {:?}: {e}",
                                e.retry_after()
                            ),
                        }
                        self.need_rejoin = true;
                        tokio::select! {
                            _ = stopped(&mut self.stopping) => {}
                            _ = tokio::time::sleep(e.retry_after()) => {}
                        }
                        continue;
                    }
                }
                if self.need_rejoin || self.is_stopping() {
                    continue;
                }
                self.publish_membership(false);
            }
            if !self.need_rejoin {
                for (_, r) in std::mem::take(&mut self.pending_restarts) {
                    self.process_restart(r).await;
                }
            }
            self.reconfigure_pending().await;
            let key_wait = self.maybe_rotate_session_key().await;
            let restart_wait = self.request_due_restarts().await;
            let wait = match self.reconfigure_backoff {
                Some((at, _)) => at.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            }
            .min(key_wait)
            .min(restart_wait)
            .min(
                self.scheduled_rejoin
                    .map(|t| t.saturating_duration_since(Instant::now()))
                    .unwrap_or(Duration::from_secs(3600)),
            );
            if let Some(t) = self.scheduled_rejoin {
                if Instant::now() >= t {
                    self.scheduled_rejoin = None;
                    self.need_rejoin = true;
                    continue;
                }
            }
            tokio::select! {
                biased;
                _ = stopped(&mut self.stopping) => break,
                ev = self.events.recv() => {
                    if let Some(ev) = ev {
                        let mut evs = vec![ev];
                        while let Ok(e) = self.events.try_recv() {
                            evs.push(e);
                        }
                        self.handle_events(evs).await;
                    }
                }
                req = self.requests.recv() => {
                    match req {
                        // Every sender is gone: the herder was dropped without a stop.
                        None => break,
                        Some(r) => self.handle_request(r).await,
                    }
                }
                Some(failure) = self.failures.recv() => self.on_failure(failure),
                changed = self.rejoin.changed() => {
                    if changed.is_ok() {
                        let reason = self.rejoin.borrow_and_update().clone();
                        if let Some(reason) = reason {
                            tracing::info!("rejoining the group: {reason}");
                            if reason == RejoinReason::SessionLost {
                                // Never run jobs while outside the group.
                                self.stop_all_work().await;
                            }
                            self.need_rejoin = true;
                        }
                    }
                }
                _ = tokio::time::sleep(wait) => {}
            }
        }
        self.shutdown().await;
    }
}

impl HerderLoop {
    /// A FAILED status this worker wrote: scheduled for an automatic restart under its
    /// connector's `tributary.restart.*` settings (nothing when they are off).
    fn on_failure(&mut self, failure: auto_restart::Failure) {
        let snap = self.shared.config.snapshot();
        let policy = snap
            .connector_configs
            .get(failure.instance.connector())
            .and_then(|c| crate::config::auto_restart::policy(c).ok().flatten());
        let mut sup = self.shared.supervisor.lock().unwrap();
        if policy.is_none() {
            sup.forget_connector(failure.instance.connector());
            return;
        }
        tracing::info!(instance = ?failure.instance, "failed; automatic restart scheduled");
        sup.failed(
            failure,
            policy.as_ref(),
            Instant::now(),
            crate::worker::metrics::now_ms(),
        );
    }

    /// Writes a KIP-745 restart request (`onlyFailed`, `includeTasks`) for every connector
    /// with an automatic restart due; returns how long until the next one is due.
    async fn request_due_restarts(&mut self) -> Duration {
        let due = self
            .shared
            .supervisor
            .lock()
            .unwrap()
            .take_due(Instant::now());
        for connector in due {
            let request = RestartRequest {
                connector: connector.clone(),
                only_failed: true,
                include_tasks: true,
            };
            tracing::info!(connector = %connector, "automatic restart of failed instances");
            let written = self
                .blocking(move |s| s.config.put_restart_request(&request))
                .await;
            if let Err(e) = written {
                tracing::warn!(connector = %connector, "automatic restart request not written: {e}");
            }
        }
        let next = self.shared.supervisor.lock().unwrap().next_due();
        next.map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600))
    }

    /// KIP-507: the leader of a sessioned group writes a new session key when there is none,
    /// or it expired, or it is not a key this worker would generate. Returns how long until the
    /// next check is due.
    async fn maybe_rotate_session_key(&mut self) -> Duration {
        let (leader, sessioned) = {
            let v = self.shared.view.read().unwrap();
            (v.is_leader, v.sessioned())
        };
        if !leader || !sessioned || self.need_rejoin {
            return Duration::from_secs(3600);
        }
        let now = now_ms();
        let ttl = self.shared.key_ttl_ms;
        let current = self.shared.config.snapshot().session_key.clone();
        if session::needs_rotation(current.as_ref(), now, ttl) {
            let key = session::generate_key(now);
            match self.blocking(move |s| s.config.put_session_key(&key)).await {
                Ok(()) => tracing::info!("wrote a new session key"),
                Err(e) => {
                    tracing::warn!("could not write a session key: {e}");
                    return Duration::from_secs(1);
                }
            }
            return Duration::from_millis(ttl.max(1000) as u64);
        }
        let expires = current
            .map(|k| k.creation_timestamp.saturating_add(ttl))
            .unwrap_or(now);
        Duration::from_millis((expires - now).max(1000) as u64)
    }

    /// Stops the given jobs and waits for them (revocation); flushes the status store so no
    /// stale status lands after the next rebalance.
    async fn stop_jobs(&mut self, connectors: Vec<String>, tasks: Vec<ConnectorTaskId>) {
        if connectors.is_empty() && tasks.is_empty() {
            return;
        }
        {
            let mut v = self.shared.view.write().unwrap();
            for c in &connectors {
                v.connectors.remove(c);
            }
            for t in &tasks {
                v.tasks.remove(t);
            }
            v.jobs_stopped_last_rebalance += (connectors.len() + tasks.len()) as u64;
        }
        self.blocking(move |s| {
            s.worker.stop_and_await_tasks(&tasks);
            s.worker.stop_connectors(&connectors);
            s.statuses.flush();
        })
        .await;
    }

    /// Stops every job this worker runs (eager revocation, lost coordinator, shutdown) and
    /// forgets the held assignment.
    async fn stop_all_work(&mut self) {
        let (connectors, tasks) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.iter().cloned().collect(),
                v.tasks.iter().cloned().collect(),
            )
        };
        self.stop_jobs(connectors, tasks).await;
        self.held = Assignment::default();
    }

    /// The clean stop, bounded in all by `task.shutdown.graceful.timeout.ms` from the stop
    /// request (and at least `2R`, below, from now): stops every connector and task at once
    /// (tasks commit their offsets as they stop, and each stopped instance is reported
    /// UNASSIGNED), reports UNASSIGNED the jobs it held but had not started, waits for those
    /// statuses to be written, then sends LeaveGroup. A task still running `R` = min(1 s, a
    /// quarter of the timeout) before the end is abandoned, as Connect abandons it, so that the
    /// statuses and the LeaveGroup fit within the bound.
    async fn shutdown(&mut self) {
        let started = Instant::now();
        let graceful = self
            .shared
            .worker
            .config
            .settings()
            .task_shutdown_graceful_timeout;
        let reserve = (graceful / 4).min(Duration::from_secs(1));
        // Counted from the stop request (a SyncGroup in flight may have taken some of it).
        let requested = *self.shared.stop_requested.get_or_init(Instant::now);
        // A loop that noticed the stop late still gives the work at least `R`.
        let deadline = (requested + graceful).max(started + 2 * reserve);
        let work_deadline = deadline - reserve;
        let (connectors, tasks): (Vec<String>, Vec<ConnectorTaskId>) = {
            let mut v = self.shared.view.write().unwrap();
            (
                std::mem::take(&mut v.connectors).into_iter().collect(),
                std::mem::take(&mut v.tasks).into_iter().collect(),
            )
        };
        let held = std::mem::take(&mut self.held);
        let stopped_jobs = connectors.len() + tasks.len();
        self.blocking(move |s| {
            // What actually runs here; held jobs that never started are reported below.
            let running_c: BTreeSet<String> = s.worker.connector_names().into_iter().collect();
            let running_t: BTreeSet<ConnectorTaskId> = s.worker.task_ids().into_iter().collect();
            let connectors: BTreeSet<String> = connectors
                .into_iter()
                .chain(running_c.iter().cloned())
                .collect();
            let tasks: Vec<ConnectorTaskId> = tasks
                .into_iter()
                .chain(running_t.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let connector_list: Vec<String> = connectors.iter().cloned().collect();
            std::thread::scope(|scope| {
                scope.spawn(|| s.worker.stop_and_await_tasks_by(&tasks, work_deadline));
                s.worker.stop_connectors_by(&connector_list, work_deadline);
            });
            // Jobs the last round gave this worker that it did not run: their UNASSIGNED
            // tells the leader they were let go (a FAILED status of this worker stays).
            let generation = s.worker.generation.load(Ordering::Acquire);
            let status = Status {
                state: State::Unassigned,
                trace: None,
                worker_id: s.worker.worker_id.clone(),
                generation,
                version: None,
            };
            let failed_here = |st: Option<Status>| {
                st.is_some_and(|st| st.state == State::Failed && st.worker_id == s.worker.worker_id)
            };
            for c in held.connectors.iter().chain(connectors.iter()) {
                if !running_c.contains(c) && !failed_here(s.statuses.connector(c)) {
                    s.statuses.put_connector(c, status.clone());
                }
            }
            for t in held.tasks.iter().chain(tasks.iter()) {
                if !running_t.contains(t) && !failed_here(s.statuses.task(t)) {
                    s.statuses.put_task(t, status.clone());
                }
            }
            // Half the reserve is left for the LeaveGroup.
            let flush_by = deadline - reserve / 2;
            s.statuses.flush_within(
                flush_by
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(100)),
            );
        })
        .await;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(200));
        match tokio::time::timeout(left, self.coordinator.leave("the worker is shutting down"))
            .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("leaving the group failed: {e}"),
            Err(_) => tracing::warn!("leaving the group timed out"),
        }
        tracing::info!(
            jobs = stopped_jobs,
            ms = started.elapsed().as_millis() as u64,
            "stopped this worker's jobs and left the group"
        );
    }

    /// Whether the protocol in use (the last negotiated one, else the configured one) is eager.
    fn eager_in_use(&self) -> bool {
        self.in_use.unwrap_or(self.coordinator.protocol()) == ConnectProtocol::Eager
    }

    /// One rebalance. Eager: stop everything, join, start the full assignment. Cooperative
    /// (KIP-415): join with the held assignment, stop only what is revoked, start what is
    /// added, rejoin at once after revocations, and rejoin when the assignment's delay is up.
    async fn rebalance(&mut self) -> Result<(), CoordinatorError> {
        self.shared
            .view
            .write()
            .unwrap()
            .jobs_stopped_last_rebalance = 0;
        let eager_before = self.eager_in_use();
        // Under eager every job stops before the round: those are its revocations.
        let stopped_before = eager_before.then(|| {
            let v = self.shared.view.read().unwrap();
            Jobs {
                connectors: v.connectors.iter().cloned().collect(),
                tasks: v.tasks.iter().map(|t| t.to_string()).collect(),
            }
        });
        if eager_before {
            self.stop_all_work().await;
        }
        let outcome = loop {
            let snap = self.shared.config.snapshot();
            let config = self.shared.config.clone();
            let fresh = move || {
                if let Err(e) = config.refresh(Duration::from_secs(30)) {
                    tracing::warn!("could not read the config topic to its end: {e}");
                }
                config_snapshot(&config.snapshot())
            };
            let held = (!eager_before).then(|| self.held.clone());
            let statuses = self.shared.statuses.clone();
            let released = move |departed: &[DepartedJob]| -> Vec<Job> {
                let evident = |d: &&DepartedJob| clean_stop_evidence(statuses.as_ref(), d);
                // A worker that stopped cleanly wrote its statuses before it left; when this
                // worker has not read them all yet, it reads the topic up to its end first.
                if !departed.iter().all(|d| evident(&d)) {
                    if let Err(e) = statuses.refresh(EVIDENCE_READ_TIMEOUT) {
                        tracing::warn!("could not read the status topic to its end: {e}");
                    }
                }
                departed
                    .iter()
                    .filter(evident)
                    .map(|d| d.job.clone())
                    .collect()
            };
            let outcome = self
                .coordinator
                .round(
                    snap.offset,
                    held,
                    config_snapshot(&snap),
                    fresh,
                    released,
                    &mut self.stopping,
                )
                .await?;
            self.in_use = Some(outcome.protocol);
            self.record_round(&outcome);
            if outcome.assignment.failed() {
                tracing::info!(
                    offset = outcome.assignment.config_offset,
                    "the leader's config is behind; reading the config topic and rejoining"
                );
                let mut stop = self.stopping.clone();
                let read = tokio::select! {
                    r = self.blocking(|s| s.config.refresh(Duration::from_secs(30))) => r,
                    _ = stopped(&mut stop) => return Err(CoordinatorError::Stopping),
                };
                if let Err(e) = read {
                    tracing::warn!("could not read the config topic to its end: {e}");
                }
                continue;
            }
            if self.shared.config.snapshot().offset < outcome.assignment.config_offset {
                let timeout = self.sync_timeout;
                let mut stop = self.stopping.clone();
                let read = tokio::select! {
                    r = self.blocking(move |s| s.config.refresh(timeout)) => r,
                    // Stopping: the outcome still tells which jobs this worker was given.
                    _ = stopped(&mut stop) => Ok(()),
                };
                if let Err(e) = read {
                    tracing::warn!("could not read the config topic to offset {} in time: {e}; leaving the group", outcome.assignment.config_offset);
                    if let Err(e) = self
                        .coordinator
                        .leave("taking too long to read the log")
                        .await
                    {
                        tracing::debug!("leaving the group failed: {e}");
                    }
                    let mut stop = self.stopping.clone();
                    tokio::select! {
                        _ = self.unsync_backoff_sleep() => {}
                        _ = stopped(&mut stop) => return Err(CoordinatorError::Stopping),
                    }
                    continue;
                }
            }
            self.unsync_retries = 0;
            break outcome;
        };
        self.round_record = Some(round_record(&outcome, stopped_before));
        self.apply(outcome).await;
        Ok(())
    }

    /// Publishes what a completed round tells the REST side (generation, protocol, leader,
    /// owners, whether static claims are honoured).
    fn record_round(&self, outcome: &RoundOutcome) {
        let in_effect = outcome.static_in_effect;
        if self.coordinator.protocol() == ConnectProtocol::Static
            && self.coordinator.has_static_claims()
            && !in_effect
        {
            tracing::warn!(generation = outcome.generation, protocol = outcome.protocol.wire_name(), "static claims are ignored: not every worker in the group offers the static protocol");
        }
        self.shared
            .worker
            .generation
            .store(outcome.generation, Ordering::Release);
        let mut v = self.shared.view.write().unwrap();
        v.static_in_effect = in_effect;
        v.generation = outcome.generation;
        v.protocol = Some(outcome.protocol.wire_name().to_string());
        v.is_leader = outcome.is_leader;
        v.leader_url = Some(outcome.assignment.leader_url.clone()).filter(|u| !u.is_empty());
        if let Some(o) = &outcome.owners {
            v.connector_owners = o.connectors.clone();
            v.task_owners = o.tasks.clone();
        }
    }

    /// Applies a completed round: stops what the assignment takes away, then (unless the
    /// config topic moved past the assignment) starts what it adds; the leader tombstones
    /// stale statuses and reports the jobs that wait for departed workers as UNASSIGNED.
    async fn apply(&mut self, outcome: RoundOutcome) {
        // The leader claims the config topic's transactional writer (when the worker uses
        // one); a former leader lets it go.
        let leader = self.shared.view.read().unwrap().is_leader;
        self.blocking(move |s| {
            if leader {
                if let Err(e) = s.config.claim_write_privileges() {
                    tracing::warn!("{e}; the config topic is written without a transaction until the next rebalance");
                }
            } else {
                s.config.relinquish_write_privileges();
            }
        })
        .await;
        let RoundOutcome {
            assignment,
            protocol: negotiated,
            lost_jobs,
            ..
        } = outcome;
        // Delay: a later assignment re-arms or cancels the scheduled rejoin.
        self.scheduled_rejoin = (assignment.delay > 0)
            .then(|| Instant::now() + Duration::from_millis(assignment.delay as u64));
        let revoked =
            !assignment.revoked_connectors.is_empty() || !assignment.revoked_tasks.is_empty();
        let (running_c, running_t): (Vec<String>, Vec<ConnectorTaskId>) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.iter().cloned().collect(),
                v.tasks.iter().cloned().collect(),
            )
        };
        let d = delta(
            negotiated,
            &self.held,
            &assignment,
            (&running_c, &running_t),
        );
        self.stop_jobs(d.stop_connectors, d.stop_tasks).await;
        self.held = d.held;
        if self.is_stopping() {
            // A worker that is stopping starts nothing; its shutdown reports the jobs it was
            // given UNASSIGNED and leaves.
            tracing::info!(
                generation = self.shared.worker.generation.load(Ordering::Acquire),
                "stopping: not starting the jobs of the last round"
            );
            return;
        }
        // The jobs of the assignment were computed from the config topic at its offset; if this
        // worker has read past it (a connector was created meanwhile), it starts nothing and
        // rejoins so that the leader assigns the newer configuration (Connect does the same).
        let snap_now = self.shared.config.snapshot();
        let config_moved = snap_now.offset != assignment.config_offset;
        self.known_connectors = snap_now.connectors().into_iter().collect();
        tracing::info!(
            generation = self.shared.worker.generation.load(Ordering::Acquire),
            protocol = negotiated.wire_name(),
            connectors = ?self.held.connectors,
            tasks = ?self.held.tasks.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            revoked = revoked,
            delay_ms = assignment.delay,
            "joined the group"
        );
        if config_moved {
            tracing::info!(
                assignment_offset = assignment.config_offset,
                offset = snap_now.offset,
                "the config topic moved past the assignment; rejoining before starting work"
            );
            self.need_rejoin = true;
            return;
        }
        self.start_work().await;
        if self.shared.view.read().unwrap().is_leader {
            self.blocking(tombstone_stale_statuses).await;
            if !lost_jobs.is_empty() {
                tracing::info!(
                    jobs = lost_jobs.len(),
                    delay_ms = assignment.delay,
                    "jobs of departed workers wait for them"
                );
                let generation = self.shared.worker.generation.load(Ordering::Acquire);
                self.blocking(move |s| mark_unassigned(s, &lost_jobs, generation))
                    .await;
            }
        }
        if revoked && negotiated != ConnectProtocol::Eager {
            // The follow-up round of revoke-then-assign.
            self.need_rejoin = true;
        }
    }

    /// Backs off after failing to catch up with the config topic: eager sleeps
    /// `worker.unsync.backoff.ms`; cooperative sleeps max delay / 10 / retries left (5 to 1),
    /// and after 5 attempts stops this worker's jobs so they can safely run elsewhere.
    async fn unsync_backoff_sleep(&mut self) {
        if self.eager_in_use() {
            tokio::time::sleep(self.unsync_backoff).await;
            return;
        }
        let retries_left = 5 - self.unsync_retries.min(4);
        self.unsync_retries += 1;
        let wait = self.max_delay / 10 / retries_left;
        tokio::time::sleep(wait).await;
        if self.unsync_retries >= 5 {
            tracing::warn!("could not catch up with the config topic after 5 attempts; stopping this worker's jobs");
            self.stop_all_work().await;
            self.unsync_retries = 0;
        }
    }

    /// Starts the held jobs that are not running yet (and tasks stopped for reconfiguration).
    async fn start_work(&mut self) {
        let snap = self.shared.config.snapshot();
        let (running_c, running_t) = {
            let v = self.shared.view.read().unwrap();
            (v.connectors.clone(), v.tasks.clone())
        };
        let connectors: Vec<String> = self
            .held
            .connectors
            .iter()
            .filter(|c| snap.contains(c) && !running_c.contains(*c))
            .cloned()
            .collect();
        let tasks: Vec<ConnectorTaskId> = self
            .held
            .tasks
            .iter()
            .filter(|id| snap.task_config(id).is_some() && !running_t.contains(*id))
            .cloned()
            .collect();
        {
            let mut v = self.shared.view.write().unwrap();
            v.connectors.extend(connectors.iter().cloned());
            v.tasks.extend(tasks.iter().cloned());
        }
        for c in &connectors {
            self.started_from.insert(c.clone(), snap.offset);
        }
        let snap2 = snap.clone();
        // Connector starts are asynchronous: each asks for its task reconfiguration when its
        // `start` returns, so a connector that blocks in `start` holds up nothing here. A stop
        // requested meanwhile ends the starting (the shutdown reports the rest UNASSIGNED).
        self.blocking(move |s| {
            let stopping = || s.stopping.load(Ordering::Acquire);
            for c in &connectors {
                if stopping() {
                    return;
                }
                let target = snap2.target_state(c);
                if let Err(e) =
                    s.worker
                        .start_connector(c, snap2.connector_configs[c].clone(), target)
                {
                    tracing::debug!(connector = %c, "connector not started: {e}");
                }
            }
            for id in &tasks {
                if stopping() {
                    return;
                }
                let cfg = &snap2.connector_configs[&id.connector];
                // A task that cannot start reports FAILED through its status; the loop goes on.
                if let Err(e) = s.worker.start_task(
                    id,
                    cfg,
                    snap2.task_configs[id].clone(),
                    snap2.target_state(&id.connector),
                    snap2.task_count(&id.connector),
                ) {
                    tracing::debug!(task = %id, "task not started: {e}");
                }
            }
        })
        .await;
    }

    async fn handle_events(&mut self, events: Vec<ConfigEvent>) {
        let owned_connectors = self.shared.view.read().unwrap().connectors.clone();
        let owned_tasks = self.shared.view.read().unwrap().tasks.clone();
        for ev in events {
            match ev {
                ConfigEvent::ConnectorConfigUpdate {
                    connector: c,
                    read_at,
                } => {
                    let in_instance = self
                        .started_from
                        .get(&c)
                        .is_some_and(|from| read_at <= *from);
                    if owned_connectors.contains(&c) && in_instance {
                        tracing::debug!(
                            connector = %c,
                            read_at,
                            "the running instance was started with this config already"
                        );
                    } else if owned_connectors.contains(&c) {
                        // An existing connector's config changed: bounce it on its owner.
                        let snap = self.shared.config.snapshot();
                        self.started_from.insert(c.clone(), snap.offset);
                        if let Some(cfg) = snap.connector_configs.get(&c).cloned() {
                            let target = snap.target_state(&c);
                            let name = c.clone();
                            // The new instance asks for task reconfiguration once started.
                            self.blocking(move |s| {
                                s.worker.stop_connector(&name);
                                if let Err(e) = s.worker.start_connector(&name, cfg, target) {
                                    tracing::debug!(connector = %name, "connector not started: {e}");
                                }
                            })
                            .await;
                        }
                    } else if !self.known_connectors.contains(&c) {
                        // A connector this worker has not seen: the leader assigns it.
                        self.need_rejoin = true;
                    }
                }
                ConfigEvent::ConnectorConfigRemove(c) => {
                    self.started_from.remove(&c);
                    self.need_rejoin = true;
                }
                ConfigEvent::TaskConfigUpdate { connector, .. } => {
                    // Cooperative: stop the local tasks of the connectors whose task configs
                    // changed; they start again with the new configs after the rebalance if
                    // they are still assigned here. Eager stops everything anyway.
                    if !self.eager_in_use() {
                        let local: Vec<ConnectorTaskId> =
                            tasks_of(&owned_tasks, &connector).cloned().collect();
                        self.stop_jobs(Vec::new(), local).await;
                        self.shared
                            .view
                            .write()
                            .unwrap()
                            .jobs_stopped_last_rebalance = 0;
                    }
                    self.need_rejoin = true;
                }
                ConfigEvent::TargetStateChange(c) => {
                    let target = self.shared.config.snapshot().target_state(&c);
                    if owned_connectors.contains(&c) || tasks_of(&owned_tasks, &c).next().is_some()
                    {
                        let name = c.clone();
                        self.blocking(move |s| {
                            if let Err(e) = s.worker.set_connector_target_state(&name, target) {
                                tracing::warn!(connector = %name, "could not apply target state {target:?}: {e}");
                            }
                        })
                        .await;
                        if target == TargetState::Started && owned_connectors.contains(&c) {
                            self.pending_reconfigure.insert(c);
                        }
                    }
                }
                ConfigEvent::RestartRequest(r) => {
                    // Keep the request with the higher impact when one is already pending.
                    let keep = self
                        .pending_restarts
                        .get(&r.connector)
                        .map(|p| p.impact() < r.impact())
                        .unwrap_or(true);
                    if keep {
                        self.pending_restarts.insert(r.connector.clone(), r);
                    }
                }
                ConfigEvent::SessionKeyUpdate(_) => {}
                ConfigEvent::LoggerLevel(ns, level) => {
                    if let Some(level) = crate::logging::parse_level(&level) {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_millis() as i64)
                            .unwrap_or(0);
                        let changed = crate::logging::set_level(&ns, level, now);
                        tracing::info!(
                            namespace = ns,
                            level,
                            ?changed,
                            "applied a cluster-wide log level"
                        );
                    }
                }
            }
        }
    }

    /// KIP-745: restart the selected instances this worker owns, planned from its own view.
    async fn process_restart(&mut self, request: RestartRequest) {
        let (owned_connector, owned_tasks) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.contains(&request.connector),
                v.tasks
                    .iter()
                    .filter(|t| t.connector == request.connector)
                    .cloned()
                    .collect::<BTreeSet<_>>(),
            )
        };
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&request.connector).cloned() else {
            return;
        };
        let statuses = self.shared.statuses.clone();
        let Some(plan) = build_restart_plan(
            &request,
            statuses.connector(&request.connector).as_ref(),
            &statuses.tasks(&request.connector),
            "",
        ) else {
            return;
        };
        let restart_connector = plan.restart_connector && owned_connector;
        if restart_connector {
            self.started_from
                .insert(request.connector.clone(), snap.offset);
        }
        let tasks: Vec<ConnectorTaskId> = plan
            .task_ids
            .iter()
            .map(|t| ConnectorTaskId::new(&request.connector, *t))
            .filter(|id| owned_tasks.contains(id))
            .collect();
        if !restart_connector && tasks.is_empty() {
            return;
        }
        let target = snap.target_state(&request.connector);
        let name = request.connector.clone();
        let generation = self.shared.worker.generation.load(Ordering::Acquire);
        self.blocking(move |s| {
            let status = |state| Status {
                state,
                trace: None,
                worker_id: s.worker.worker_id.clone(),
                generation,
                version: s.worker.connector_version(&name),
            };
            if restart_connector {
                s.worker.stop_connector(&name);
                s.statuses.put_connector(&name, status(State::Restarting));
            }
            s.worker.stop_and_await_tasks(&tasks);
            for id in &tasks {
                s.statuses.put_task(id, status(State::Restarting));
            }
            if restart_connector {
                // Asks for task reconfiguration itself once started.
                if let Err(e) = s.worker.start_connector(&name, cfg.clone(), target) {
                    tracing::debug!(connector = %name, "connector not started: {e}");
                }
            }
            for id in &tasks {
                if let Some(tc) = snap.task_config(id) {
                    if let Err(e) = s.worker.start_task(
                        id,
                        &cfg,
                        tc.clone(),
                        target,
                        snap.task_count(&id.connector),
                    ) {
                        tracing::debug!(task = %id, "task not started: {e}");
                    }
                }
            }
        })
        .await;
    }

    async fn handle_request(&mut self, req: LoopRequest) {
        match req {
            LoopRequest::Reconfigure(c) => {
                self.pending_reconfigure.insert(c);
            }
            LoopRequest::HealthCheck(reply) => {
                // The prober may have given up waiting.
                reply.send(Ok(())).ok();
            }
            LoopRequest::RestartConnector(c, reply) => {
                let r = self.restart_connector(c).await;
                // The REST caller may have given up waiting; the restart happened anyway.
                reply.send(r).ok();
            }
            LoopRequest::RestartTask(id, reply) => {
                let r = self.restart_task(id).await;
                // The REST caller may have given up waiting; the restart happened anyway.
                reply.send(r).ok();
            }
        }
    }

    fn route(&self, owner: Option<String>) -> HerderError {
        let v = self.shared.view.read().unwrap();
        if v.is_leader {
            HerderError::NotAssigned(owner)
        } else {
            HerderError::NotLeader(v.leader_url.clone())
        }
    }

    async fn restart_connector(&mut self, c: String) -> HerderResult<()> {
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&c).cloned() else {
            return Err(HerderError::NotFound(format!("Unknown connector: {c}")));
        };
        if self.need_rejoin {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        if !self.shared.view.read().unwrap().connectors.contains(&c) {
            let owner = self
                .shared
                .view
                .read()
                .unwrap()
                .connector_owners
                .get(&c)
                .cloned();
            return Err(self.route(owner));
        }
        let target = snap.target_state(&c);
        let name = c.clone();
        // Connect answers once the connector started; a `start` that takes longer than the
        // graceful timeout is left running (its status tells how it ends) so that the herder
        // loop is not held up by it.
        let wait = self
            .shared
            .worker
            .config
            .settings()
            .task_shutdown_graceful_timeout;
        let r = self
            .blocking(move |s| {
                s.worker.stop_connector(&name);
                s.worker
                    .start_connector(&name, cfg, target)
                    .and_then(|started| started.wait_for(wait).unwrap_or(Ok(())))
            })
            .await;
        r.map_err(|e| HerderError::Internal(format!("Failed to start connector: {c}: {e}")))
    }

    async fn restart_task(&mut self, id: ConnectorTaskId) -> HerderResult<()> {
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&id.connector).cloned() else {
            return Err(HerderError::NotFound(format!(
                "Unknown connector: {}",
                id.connector
            )));
        };
        let Some(tc) = snap.task_config(&id).cloned() else {
            return Err(HerderError::NotFound(format!("Unknown task: {id}")));
        };
        if self.need_rejoin {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        if !self.shared.view.read().unwrap().tasks.contains(&id) {
            let owner = self
                .shared
                .view
                .read()
                .unwrap()
                .task_owners
                .get(&id)
                .cloned();
            return Err(self.route(owner));
        }
        let target = snap.target_state(&id.connector);
        let count = snap.task_count(&id.connector);
        let tid = id.clone();
        self.blocking(move |s| {
            s.worker.stop_and_await_tasks(std::slice::from_ref(&tid));
            s.worker.start_task(&tid, &cfg, tc, target, count)
        })
        .await
        .map_err(|_| HerderError::Internal(format!("Failed to start task: {id}")))
    }

    /// Regenerates task configs of owned, running connectors; publishes them when they changed
    /// (directly on the leader, through the leader's internal endpoint elsewhere). Failures are
    /// retried with a backoff from 250 ms doubling to 60 s.
    async fn reconfigure_pending(&mut self) {
        if self.pending_reconfigure.is_empty() || self.need_rejoin {
            return;
        }
        if let Some((at, _)) = self.reconfigure_backoff {
            if Instant::now() < at {
                return;
            }
        }
        let pending: Vec<String> = std::mem::take(&mut self.pending_reconfigure)
            .into_iter()
            .collect();
        let mut failed = false;
        for c in pending {
            if let Err(e) = self.reconfigure(&c).await {
                tracing::warn!(
                    connector = c,
                    "task reconfiguration failed, will retry: {e}"
                );
                if matches!(e, ReconfigureError::NoLeader) {
                    // Only a rebalance tells this worker who leads.
                    self.need_rejoin = true;
                }
                self.pending_reconfigure.insert(c);
                failed = true;
            }
        }
        self.reconfigure_backoff = if failed {
            let next = self
                .reconfigure_backoff
                .map(|(_, d)| (d * 2).min(Duration::from_secs(60)))
                .unwrap_or(Duration::from_millis(250));
            Some((Instant::now() + next, next))
        } else {
            None
        };
    }

    async fn reconfigure(&mut self, c: &str) -> Result<(), ReconfigureError> {
        let snap = self.shared.config.snapshot();
        if !snap.contains(c)
            || snap.target_state(c) != TargetState::Started
            || !self.shared.view.read().unwrap().connectors.contains(c)
        {
            return Ok(());
        }
        let name = c.to_string();
        let configs = match self
            .blocking(move |s| s.worker.connector_task_configs(&name))
            .await
        {
            Ok(c) => c,
            Err(e) if !self.shared.worker.is_connector_running(c) => {
                tracing::debug!(
                    connector = c,
                    "skipping reconfiguration of a connector that is not running: {e}"
                );
                return Ok(());
            }
            Err(e) => return Err(ReconfigureError::TaskConfigs(e)),
        };
        let current: Vec<Props> = snap
            .tasks(c)
            .iter()
            .filter_map(|id| snap.task_config(id).cloned())
            .collect();
        let applied_changed =
            snap.applied_connector_configs.get(c) != snap.connector_configs.get(c);
        let count = snap.task_counts.get(c).copied().unwrap_or(0) as usize;
        if configs == current
            && count == configs.len()
            && !applied_changed
            && !snap.inconsistent.contains(c)
        {
            return Ok(());
        }
        let (is_leader, leader_url) = {
            let v = self.shared.view.read().unwrap();
            (v.is_leader, v.leader_url.clone())
        };
        if is_leader {
            let name = c.to_string();
            return self
                .blocking(move |s| leader_write_task_configs(s, &name, &configs))
                .await
                .map_err(ReconfigureError::Write);
        }
        let leader = leader_url.ok_or(ReconfigureError::NoLeader)?;
        let url = format!("{}/connectors/{}/tasks", leader.trim_end_matches('/'), c);
        let body = serde_json::to_vec(&configs).unwrap_or_default();
        let mut req = self
            .http
            .post(&url)
            .header("Content-Type", "application/json");
        if let Some(key) = snap.session_key.as_ref() {
            req = req
                .header(session::SIGNATURE_HEADER, session::sign(&key.key, &body))
                .header(session::ALGORITHM_HEADER, session::HMAC_SHA256);
        }
        // The leader may hold the request until its rebalance ends (a Java leader queues it
        // behind the rebalance), and that rebalance may wait for this very worker: the loop
        // gives the request up when the group rebalances or the worker stops, and retries it
        // later (Connect forwards from an executor of its own for the same reason).
        let mut rejoin = self.rejoin.clone();
        let mut stop = self.stopping.clone();
        let abandoned = |why: &str| ReconfigureError::Forward {
            url: url.clone(),
            detail: format!("given up: {why}"),
        };
        let resp = tokio::select! {
            sent = req.body(body).send() => sent.map_err(|e| ReconfigureError::Forward {
                url: url.clone(),
                detail: e.to_string(),
            })?,
            _ = rejoin.wait_for(|r| r.is_some()) => {
                return Err(abandoned("the group is rebalancing"))
            }
            _ = stopped(&mut stop) => return Err(abandoned("the worker is stopping")),
            _ = tokio::time::sleep(FORWARD_TIMEOUT) => {
                return Err(abandoned("no answer in time"))
            }
        };
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(ReconfigureError::Forward {
                detail: format!(
                    "{} {}",
                    resp.status(),
                    resp.text().await.unwrap_or_default()
                ),
                url,
            })
        }
    }
}

/// The leader's write of a connector's task configs (`DistributedHerder.writeTaskConfigs`):
/// refused while the connector is STOPPED unless the set is empty.
fn leader_write_task_configs(s: &Shared, name: &str, configs: &[Props]) -> HerderResult<()> {
    let _guard = s.write_lock.lock().unwrap();
    let snap = s.config.snapshot();
    if !snap.contains(name) {
        return Err(HerderError::NotFound(format!("Unknown connector: {name}")));
    }
    if snap.target_state(name) == TargetState::Stopped && !configs.is_empty() {
        return Err(HerderError::BadRequest(format!(
            "Cannot publish a non-empty set of task configurations for connector {name} while it is in the STOPPED state"
        )));
    }
    s.config
        .put_task_configs(name, configs)
        .map_err(|e| HerderError::Internal(e.to_string()))
}

/// The leader's round of zombie fencing for a source connector (Connect's
/// `doFenceZombieSourceTasks`, KIP-618): when task configs were committed after the
/// connector's last task count record, the producers of the tasks that record counts are
/// fenced (see [`fencing::plan`]) and a new record with the current task count is written.
/// Errors: 409 via [`HerderError::NotLeader`] off the leader (forwarded), 404 for an unknown
/// connector, 400 for a sink, 500 when the config topic cannot be read or the producers
/// cannot be fenced, 409 when new task configs were committed during the round.
fn leader_fence_zombies(s: &Shared, name: &str) -> HerderResult<()> {
    {
        let v = s.view.read().unwrap();
        if !v.is_leader {
            return Err(HerderError::NotLeader(v.leader_url.clone()));
        }
    }
    let snap = s.config.snapshot();
    let Some(config) = snap.connector_configs.get(name) else {
        return Err(HerderError::NotFound(format!("Connector {name} not found")));
    };
    let source = config
        .get("connector.class")
        .and_then(|c| s.worker.plugins.connector_type(c))
        == Some(tributary_api::connector::ConnectorType::Source);
    if !source {
        return Err(HerderError::BadRequest(format!(
            "Connector {name} is not a source connector"
        )));
    }
    let _round = s.fencing_lock.lock().unwrap();
    s.config.refresh(s.sync_timeout).map_err(|_| {
        HerderError::Internal(
            "Failed to read to end of config topic before performing zombie fencing".into(),
        )
    })?;
    let snap = s.config.snapshot();
    let task_count = snap.task_counts.get(name).copied().unwrap_or(0);
    let generation = snap.task_config_generation(name);
    let write_record = |count: u32| {
        let _guard = s.write_lock.lock().unwrap();
        s.config.put_task_count_record(name, count).map_err(|e| {
            HerderError::Internal(format!(
                "Failed to write the task count record of connector {name}: {e}"
            ))
        })
    };
    match fencing::plan(
        snap.pending_fencing.contains(name),
        snap.task_count_records.get(name).copied(),
        task_count,
    ) {
        fencing::FencingPlan::Nothing => {
            tracing::debug!(
                connector = name,
                "no zombie fencing needed: the latest task generation is fenced already"
            );
            Ok(())
        }
        fencing::FencingPlan::WriteRecord(count) => write_record(count),
        fencing::FencingPlan::FenceThenWrite { fence, record } => {
            let group = s
                .worker
                .config
                .settings()
                .distributed()
                .map(|d| d.group_id.clone())
                .unwrap_or_default();
            let ids: Vec<String> = (0..fence)
                .map(|t| fencing::task_transactional_id(&group, name, t))
                .collect();
            let resolved = s
                .worker
                .resolve_config(&format!("connector {name}"), config)
                .map_err(|e| HerderError::Internal(e.to_string()))?;
            let client = crate::config::clients::connector_admin_config(
                &s.worker.config,
                crate::config::worker::prefixed(&resolved, "admin.override."),
            )
            .map_err(|e| HerderError::Internal(e.to_string()))?;
            tracing::info!(
                connector = name,
                producers = fence,
                "fencing the producers of the previous task generation"
            );
            fencing::fence_producers(&client, &ids, FENCING_TIMEOUT).map_err(|e| {
                HerderError::Internal(format!("Failed to perform zombie fencing: {e}"))
            })?;
            s.config.refresh(s.sync_timeout).map_err(|_| {
                HerderError::Internal("Failed to read to end of config topic".into())
            })?;
            if s.config.snapshot().task_config_generation(name) != generation {
                return Err(HerderError::Conflict(
                    "Fencing failed because new task configurations were generated for the connector".into(),
                ));
            }
            write_record(record)
        }
    }
}

/// How long fencing a producer may take (Connect's REST request timeout, 90 s).
const FENCING_TIMEOUT: Duration = Duration::from_secs(90);

/// The distributed herder's side of exactly-once source tasks, called from task threads.
struct ExactlyOnceTasks {
    /// Weak: the worker (held by `Shared`) holds this.
    shared: std::sync::Weak<Shared>,
    runtime: tokio::runtime::Handle,
    http: reqwest::Client,
}

impl ExactlyOnceTasks {
    fn shared(&self) -> tributary_api::ConnectResult<Arc<Shared>> {
        self.shared
            .upgrade()
            .ok_or_else(|| ConnectError::connect("the worker is stopping"))
    }
}

impl crate::worker::ExactlyOnceCoordinator for ExactlyOnceTasks {
    fn fence_before_start(&self, id: &ConnectorTaskId) -> tributary_api::ConnectResult<()> {
        let s = self.shared()?;
        let leader_url = match leader_fence_zombies(&s, &id.connector) {
            Ok(()) => return Ok(()),
            Err(HerderError::NotLeader(url)) => url,
            Err(e) => {
                return Err(ConnectError::connect(format!(
                    "Failed to perform round of zombie fencing: {e}"
                )))
            }
        };
        let Some(leader) = leader_url else {
            return Err(ConnectError::connect(
                "Failed to perform round of zombie fencing: the leader of the cluster is not known",
            ));
        };
        let url = format!(
            "{}/fence",
            crate::peer::connector_url(leader.trim_end_matches('/'), &id.connector)
        );
        let mut req = self.http.put(&url);
        if let Some(key) = s.config.snapshot().session_key.as_ref() {
            req = req
                .header(session::SIGNATURE_HEADER, session::sign(&key.key, b""))
                .header(session::ALGORITHM_HEADER, session::HMAC_SHA256);
        }
        tracing::debug!(task = %id, url, "forwarding the zombie fencing request to the leader");
        let answer = self.runtime.block_on(async move {
            let resp = tokio::time::timeout(FENCING_TIMEOUT, req.send())
                .await
                .map_err(|_| "no answer in time".to_string())?
                .map_err(|e| e.to_string())?;
            let status = resp.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(format!(
                    "{status} {}",
                    resp.text().await.unwrap_or_default()
                ))
            }
        });
        answer.map_err(|e| {
            ConnectError::connect(format!(
                "Failed to perform round of zombie fencing: forwarding to the leader at {leader}: {e}"
            ))
        })
    }

    fn task_generation(&self, connector: &str) -> Option<u32> {
        self.shared
            .upgrade()
            .and_then(|s| s.config.snapshot().task_config_generation(connector))
    }

    fn verify_generation(
        &self,
        id: &ConnectorTaskId,
        generation: Option<u32>,
    ) -> tributary_api::ConnectResult<()> {
        let s = self.shared()?;
        s.config.refresh(s.sync_timeout)?;
        let latest = s.config.snapshot().task_config_generation(&id.connector);
        if latest != generation {
            return Err(ConnectError::connect(format!(
                "Task {id} belongs to an older generation of its connector's task configurations (generation {generation:?}, latest {latest:?}); it will not run"
            )));
        }
        if !s.view.read().unwrap().tasks.contains(id) {
            return Err(ConnectError::connect(format!(
                "Task {id} is no longer assigned to this worker; it will not run"
            )));
        }
        Ok(())
    }
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
/// written by that worker in the generation of the last round it was a member of. Connect
/// workers (Java's and Tributary's) write exactly this when they stop a job, and a worker that
/// vanished leaves its last RUNNING (or other) status. The leader's own UNASSIGNED reports of
/// lost jobs carry a later generation, so they never count.
fn clean_stop_evidence(statuses: &dyn StatusBackingStore, d: &DepartedJob) -> bool {
    let status = match &d.job {
        Job::Connector(c) => statuses.connector(c),
        Job::Task(t) => statuses.task(t),
    };
    status.is_some_and(|s| {
        s.state == State::Unassigned
            && s.generation == d.generation
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
