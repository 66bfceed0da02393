//! [`GroupMember`]: join / sync / heartbeat / leave against the group coordinator.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ApiKey, GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::codes::*;
use super::connection::{discover_coordinator, parse_bootstrap, Connection};
use super::{backoff, error_name, GroupConfig, GroupError, RejoinReason};

/// The protocol type of every Connect group.
pub const PROTOCOL_TYPE: &str = "connect";

/// The heartbeat period while heartbeats are expedited ([`HeartbeatHandle::expedite`]); the
/// configured `heartbeat.interval.ms` applies when it is shorter.
pub const EXPEDITED_HEARTBEAT: Duration = Duration::from_millis(100);

/// Membership state (Java `AbstractCoordinator.MemberState`, with the JoinGroup in flight
/// shown as `PreparingRebalance`). Heartbeats are sent only in `CompletingRebalance` and
/// `Stable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// Not in the group (before the first join, after leave or a reset).
    Unjoined,
    /// A JoinGroup is in flight.
    PreparingRebalance,
    /// JoinGroup succeeded; waiting for SyncGroup.
    CompletingRebalance,
    /// SyncGroup succeeded; the assignment is current.
    Stable,
}

/// The outcome of a successful JoinGroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinResult {
    /// The new generation id.
    pub generation: i32,
    /// This member's id (broker-assigned, `<client.id>-<uuid>`).
    pub member_id: String,
    /// The leader's member id.
    pub leader_id: String,
    /// The protocol the coordinator selected (e.g. `sessioned`; see
    /// [`crate::ConnectProtocol::from_wire_name`]).
    pub protocol_name: String,
    /// Leader only: every member's id and its metadata for the selected protocol, in the
    /// broker's order. Empty for followers.
    pub members: Vec<(String, Vec<u8>)>,
    /// How many JoinGroup requests this join took (2+ on a first join: the
    /// MEMBER_ID_REQUIRED round trip; more after retries).
    pub join_requests: u32,
}

impl JoinResult {
    /// True if this member is the leader and must compute assignments.
    pub fn is_leader(&self) -> bool {
        self.leader_id == self.member_id
    }
}

#[derive(Debug)]
struct Shared {
    generation: i32,
    member_id: String,
    protocol_name: Option<String>,
    state: MemberState,
    /// Address of the coordinator the main connection last found (hint for the heartbeat task).
    coordinator: Option<String>,
    /// Until when the heartbeat task sends a heartbeat every [`EXPEDITED_HEARTBEAT`] instead of
    /// every heartbeat interval ([`HeartbeatHandle::expedite`]).
    expedite_until: Option<Instant>,
}

impl Shared {
    fn reset_generation(&mut self) {
        self.generation = -1;
        self.protocol_name = None;
        self.state = MemberState::Unjoined;
    }
}

/// A Connect worker's membership in a Kafka group (the parts of Java's `WorkerGroupMember` +
/// `AbstractCoordinator` that speak the wire protocol).
///
/// The owner drives the rebalance: [`join`](Self::join), then [`sync`](Self::sync) (the
/// leader passes one assignment per member), then waits on [`rejoin_needed`](Self::rejoin_needed)
/// and repeats. A background task heartbeats every `heartbeat_interval` while the member is in
/// `CompletingRebalance` or `Stable`, and signals a needed rejoin (REBALANCE_IN_PROGRESS while
/// stable, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, session loss). Dropping the member stops the
/// heartbeat task without leaving; call [`leave`](Self::leave) for a clean exit.
pub struct GroupMember {
    config: GroupConfig,
    bootstrap: Vec<String>,
    /// Connection to the coordinator; taken out while a request is in flight, so a cancelled
    /// request never leaves a half-read connection behind.
    conn: Option<Connection>,
    shared: Arc<Mutex<Shared>>,
    rejoin_tx: Arc<watch::Sender<Option<RejoinReason>>>,
    heartbeat: JoinHandle<()>,
    /// Wakes the heartbeat task when heartbeats are expedited.
    wake: Arc<tokio::sync::Notify>,
}

/// A handle that asks the heartbeat task of a [`GroupMember`] to heartbeat more often for a
/// while: cheap to clone, usable from any thread, and harmless once the member is gone.
///
/// A member learns that the group is rebalancing only from a heartbeat response (Java's
/// `AbstractCoordinator` likewise), so after another member stopped work (a clean departure,
/// or the revocations that precede the follow-up round of KIP-415) a member that heartbeats
/// every [`EXPEDITED_HEARTBEAT`] rejoins within about that, instead of within up to
/// `heartbeat.interval.ms`. The broker accepts heartbeats at any rate; nothing else changes on
/// the wire.
#[derive(Clone)]
pub struct HeartbeatHandle {
    shared: std::sync::Weak<Mutex<Shared>>,
    wake: std::sync::Weak<tokio::sync::Notify>,
}

impl HeartbeatHandle {
    /// A handle whose [`expedite`](Self::expedite) does nothing: for members that learn of a
    /// rebalance without heartbeats (the in-memory group of [`super::memory`]).
    pub fn inert() -> Self {
        HeartbeatHandle {
            shared: std::sync::Weak::new(),
            wake: std::sync::Weak::new(),
        }
    }

    /// Heartbeats at once, then every [`EXPEDITED_HEARTBEAT`] (or the heartbeat interval, if
    /// shorter) for `window` from now; a later call extends the window, never shortens it.
    /// A call while heartbeats are already expedited only extends the window: the next
    /// heartbeat is at most [`EXPEDITED_HEARTBEAT`] away anyway, and waking the task on every
    /// call made a heartbeat per call (hundreds a second per worker when many jobs stop at
    /// once, e.g. 2,000 tasks being placed).
    pub fn expedite(&self, window: Duration) {
        let (Some(shared), Some(wake)) = (self.shared.upgrade(), self.wake.upgrade()) else {
            return;
        };
        let wake_now = extend_expedited(
            &mut shared.lock().unwrap().expedite_until,
            Instant::now(),
            window,
        );
        if wake_now {
            wake.notify_one();
        }
    }
}

/// Extends the expedited window `until` to at least `now + window`; true when heartbeats were
/// not expedited at `now` (the heartbeat task is to be woken).
fn extend_expedited(until: &mut Option<Instant>, now: Instant, window: Duration) -> bool {
    let already = until.filter(|u| *u > now);
    let wanted = now + window;
    if already.is_none_or(|u| u < wanted) {
        *until = Some(wanted);
    }
    already.is_none()
}

impl GroupMember {
    /// Validates `config`, finds the group coordinator through `bootstrap`
    /// (`"host:port,host:port"`), retrying retriable errors with backoff for up to
    /// `config.request_timeout`, and starts the heartbeat task. Does not join.
    pub async fn connect(bootstrap: &str, config: GroupConfig) -> Result<Self, GroupError> {
        config.validate()?;
        let bootstrap = parse_bootstrap(bootstrap);
        if bootstrap.is_empty() {
            return Err(GroupError::InvalidConfig(
                "empty bootstrap server list".into(),
            ));
        }
        let deadline = Instant::now() + config.request_timeout;
        let mut attempt = 0;
        let conn = loop {
            match discover_coordinator(&bootstrap, &config).await {
                Ok(c) => break c,
                Err(e) if e.is_coordinator_error() && Instant::now() < deadline => {
                    tracing::debug!(error = %e, "coordinator discovery failed; retrying");
                    tokio::time::sleep(backoff(
                        config.retry_backoff,
                        config.retry_backoff_max,
                        attempt,
                    ))
                    .await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let shared = Arc::new(Mutex::new(Shared {
            generation: -1,
            member_id: String::new(),
            protocol_name: None,
            state: MemberState::Unjoined,
            coordinator: Some(conn.addr().to_string()),
            expedite_until: None,
        }));
        let (rejoin_tx, _) = watch::channel(None);
        let rejoin_tx = Arc::new(rejoin_tx);
        let wake = Arc::new(tokio::sync::Notify::new());
        let heartbeat = tokio::spawn(heartbeat_loop(
            config.clone(),
            bootstrap.clone(),
            shared.clone(),
            rejoin_tx.clone(),
            wake.clone(),
        ));
        Ok(GroupMember {
            config,
            bootstrap,
            conn: Some(conn),
            shared,
            rejoin_tx,
            heartbeat,
            wake,
        })
    }

    /// A handle that expedites this member's heartbeats ([`HeartbeatHandle::expedite`]).
    pub fn heartbeat_handle(&self) -> HeartbeatHandle {
        HeartbeatHandle {
            shared: Arc::downgrade(&self.shared),
            wake: Arc::downgrade(&self.wake),
        }
    }

    /// Convenience constructor with the parameters spelled out (timeouts in any unit; sent in
    /// ms); other settings take Connect defaults.
    pub async fn connect_with(
        bootstrap: &str,
        group_id: &str,
        client_id: &str,
        session_timeout: Duration,
        rebalance_timeout: Duration,
        heartbeat_interval: Duration,
    ) -> Result<Self, GroupError> {
        let config = GroupConfig {
            session_timeout,
            rebalance_timeout,
            heartbeat_interval,
            ..GroupConfig::new(group_id, client_id)
        };
        Self::connect(bootstrap, config).await
    }

    /// The configuration in use.
    pub fn config(&self) -> &GroupConfig {
        &self.config
    }

    /// Current member id ("" before the first join or after a reset/leave).
    pub fn member_id(&self) -> String {
        self.shared.lock().unwrap().member_id.clone()
    }

    /// Current generation (-1 when none).
    pub fn generation(&self) -> i32 {
        self.shared.lock().unwrap().generation
    }

    /// Protocol selected at the last successful join, if the generation is still valid.
    pub fn protocol_name(&self) -> Option<String> {
        self.shared.lock().unwrap().protocol_name.clone()
    }

    /// Current membership state.
    pub fn state(&self) -> MemberState {
        self.shared.lock().unwrap().state
    }

    /// A watch that becomes `Some(reason)` when the owner must call [`join`](Self::join)
    /// again (set by the heartbeat task or [`request_rejoin`](Self::request_rejoin); cleared
    /// when `join` starts). Use `rx.wait_for(|r| r.is_some()).await`.
    pub fn rejoin_needed(&self) -> watch::Receiver<Option<RejoinReason>> {
        self.rejoin_tx.subscribe()
    }

    /// Requests a rejoin (e.g. after processing revocations, or on a config change).
    pub fn request_rejoin(&self, reason: impl Into<String>) {
        let _guard = self.shared.lock().unwrap();
        self.rejoin_tx
            .send_replace(Some(RejoinReason::Requested(reason.into())));
    }

    /// Takes the coordinator connection, discovering the coordinator if it is unknown
    /// (one round over the bootstrap servers).
    async fn take_coordinator(&mut self) -> Result<Connection, GroupError> {
        if let Some(c) = self.conn.take() {
            return Ok(c);
        }
        let conn = discover_coordinator(&self.bootstrap, &self.config).await?;
        self.shared.lock().unwrap().coordinator = Some(conn.addr().to_string());
        Ok(conn)
    }

    fn coordinator_unknown(&mut self, why: &GroupError) {
        tracing::info!(group = %self.config.group_id, error = %why, "group coordinator unknown; will rediscover");
        self.conn = None;
        self.shared.lock().unwrap().coordinator = None;
    }

    /// Sends JoinGroup with `protocols` (`(name, metadata)`, most preferred first) until it
    /// succeeds, handling the cases `AbstractCoordinator` handles: MEMBER_ID_REQUIRED (store the returned id and
    /// rejoin at once), UNKNOWN_MEMBER_ID (reset id and generation, rejoin at once),
    /// REBALANCE_IN_PROGRESS (rejoin at once), COORDINATOR_LOAD_IN_PROGRESS (sleep the retry
    /// backoff), coordinator errors and disconnects (rediscover with exponential backoff).
    /// Other errors (INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, authorization, …)
    /// are returned as [`GroupError::Broker`]. Retries without a deadline; wrap it in
    /// `tokio::time::timeout` to bound it (cancelling is safe).
    ///
    /// Clears the [`rejoin_needed`](Self::rejoin_needed) signal; the member then stays in
    /// `CompletingRebalance` until [`sync`](Self::sync).
    pub async fn join(
        &mut self,
        protocols: Vec<(String, Vec<u8>)>,
    ) -> Result<JoinResult, GroupError> {
        let reason = {
            let mut s = self.shared.lock().unwrap();
            s.state = MemberState::PreparingRebalance;
            let prev = self.rejoin_tx.send_replace(None);
            match prev {
                Some(r) => r.to_string(),
                None if s.generation < 0 => "joining the group".to_string(),
                None => "rejoining the group".to_string(),
            }
        };
        let protocols: Vec<JoinGroupRequestProtocol> = protocols
            .into_iter()
            .map(|(name, metadata)| {
                let mut p = JoinGroupRequestProtocol::default();
                p.name = StrBytes::from_string(name);
                p.metadata = Bytes::from(metadata);
                p
            })
            .collect();
        let mut attempt: u32 = 0;
        let mut join_requests: u32 = 0;
        loop {
            let mut conn = match self.take_coordinator().await {
                Ok(c) => c,
                Err(e) if e.is_coordinator_error() => {
                    self.coordinator_unknown(&e);
                    tokio::time::sleep(backoff(
                        self.config.retry_backoff,
                        self.config.retry_backoff_max,
                        attempt,
                    ))
                    .await;
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(self.fail_join(e)),
            };
            let version = match conn.version(ApiKey::JoinGroup) {
                Ok(v) => v,
                Err(e) => return Err(self.fail_join(e)),
            };
            let member_id = self.shared.lock().unwrap().member_id.clone();
            let mut req = JoinGroupRequest::default();
            req.group_id = GroupId(StrBytes::from_string(self.config.group_id.clone()));
            req.session_timeout_ms = self.config.session_timeout.as_millis() as i32;
            req.rebalance_timeout_ms = self.config.rebalance_timeout.as_millis() as i32;
            req.member_id = StrBytes::from_string(member_id.clone());
            req.group_instance_id = None;
            req.protocol_type = StrBytes::from_static_str(PROTOCOL_TYPE);
            req.protocols = protocols.clone();
            if version >= 8 {
                req.reason = Some(StrBytes::from_string(reason.clone()));
            }
            tracing::debug!(group = %self.config.group_id, member_id = %member_id, version, "sending JoinGroup");
            join_requests += 1;
            let resp = match conn.send(&req, version, self.config.join_timeout()).await {
                Ok(r) => {
                    self.conn = Some(conn);
                    r
                }
                Err(e) => {
                    self.coordinator_unknown(&e);
                    tokio::time::sleep(backoff(
                        self.config.retry_backoff,
                        self.config.retry_backoff_max,
                        attempt,
                    ))
                    .await;
                    attempt += 1;
                    continue;
                }
            };
            match resp.error_code {
                NONE => {
                    if let Some(t) = &resp.protocol_type {
                        if t.as_str() != PROTOCOL_TYPE {
                            return Err(self.fail_join(GroupError::IllegalState(format!(
                                "JoinGroup response protocol type `{}` is not `{PROTOCOL_TYPE}`",
                                t.as_str()
                            ))));
                        }
                    }
                    if resp.skip_assignment {
                        return Err(self.fail_join(GroupError::IllegalState(
                            "JoinGroup response asked a dynamic Connect member to skip assignment"
                                .into(),
                        )));
                    }
                    let Some(protocol_name) = resp.protocol_name.as_ref().map(|p| p.to_string())
                    else {
                        return Err(self.fail_join(GroupError::IllegalState(
                            "JoinGroup response without a protocol name".into(),
                        )));
                    };
                    let result = JoinResult {
                        generation: resp.generation_id,
                        member_id: resp.member_id.to_string(),
                        leader_id: resp.leader.to_string(),
                        protocol_name: protocol_name.clone(),
                        members: resp
                            .members
                            .iter()
                            .map(|m| (m.member_id.to_string(), m.metadata.to_vec()))
                            .collect(),
                        join_requests,
                    };
                    {
                        let mut s = self.shared.lock().unwrap();
                        s.generation = result.generation;
                        s.member_id = result.member_id.clone();
                        s.protocol_name = Some(protocol_name);
                        s.state = MemberState::CompletingRebalance;
                    }
                    tracing::info!(
                        group = %self.config.group_id,
                        generation = result.generation,
                        member_id = %result.member_id,
                        leader = %result.leader_id,
                        protocol = %result.protocol_name,
                        members = result.members.len(),
                        "joined group"
                    );
                    return Ok(result);
                }
                MEMBER_ID_REQUIRED => {
                    tracing::debug!(member_id = %resp.member_id.as_str(), "JoinGroup: MEMBER_ID_REQUIRED; rejoining with the assigned id");
                    self.shared.lock().unwrap().member_id = resp.member_id.to_string();
                }
                UNKNOWN_MEMBER_ID => {
                    tracing::info!(member_id = %member_id, "JoinGroup: UNKNOWN_MEMBER_ID; resetting member id");
                    let mut s = self.shared.lock().unwrap();
                    s.member_id.clear();
                    s.generation = -1;
                    s.protocol_name = None;
                }
                ILLEGAL_GENERATION => {
                    let mut s = self.shared.lock().unwrap();
                    s.generation = -1;
                    s.protocol_name = None;
                }
                REBALANCE_IN_PROGRESS => {
                    tracing::debug!("JoinGroup: REBALANCE_IN_PROGRESS; retrying");
                }
                COORDINATOR_LOAD_IN_PROGRESS => {
                    tokio::time::sleep(self.config.retry_backoff).await;
                }
                COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => {
                    let e = GroupError::CoordinatorUnavailable {
                        code: resp.error_code,
                        name: error_name(resp.error_code),
                    };
                    self.coordinator_unknown(&e);
                    tokio::time::sleep(backoff(
                        self.config.retry_backoff,
                        self.config.retry_backoff_max,
                        attempt,
                    ))
                    .await;
                    attempt += 1;
                }
                code => {
                    return Err(self.fail_join(GroupError::Broker {
                        api: "JoinGroup",
                        code,
                        name: error_name(code),
                    }))
                }
            }
        }
    }

    fn fail_join(&mut self, e: GroupError) -> GroupError {
        tracing::warn!(group = %self.config.group_id, error = %e, "JoinGroup failed");
        let mut s = self.shared.lock().unwrap();
        if s.state == MemberState::PreparingRebalance {
            s.state = MemberState::Unjoined;
        }
        e
    }

    /// Sends SyncGroup for the generation of the last [`join`](Self::join) and returns this
    /// member's assignment bytes. The leader passes exactly one `(member id, assignment)` per
    /// member (the broker fills in empty bytes for anyone left out, which Java workers cannot
    /// decode); followers pass an empty list.
    ///
    /// Errors: [`GroupError::NotJoined`] outside `CompletingRebalance`;
    /// [`GroupError::RejoinNeeded`] for REBALANCE_IN_PROGRESS (ids kept), UNKNOWN_MEMBER_ID
    /// (generation and member id reset), ILLEGAL_GENERATION (generation reset, member id kept)
    /// and coordinator loss — call `join` again; [`GroupError::Broker`] for anything else.
    pub async fn sync(
        &mut self,
        assignments: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<u8>, GroupError> {
        let (generation, member_id, protocol_name) = {
            let s = self.shared.lock().unwrap();
            match (&s.state, &s.protocol_name) {
                (MemberState::CompletingRebalance, Some(p)) => {
                    (s.generation, s.member_id.clone(), p.clone())
                }
                _ => return Err(GroupError::NotJoined),
            }
        };
        let mut conn = match self.take_coordinator().await {
            Ok(c) => c,
            Err(e) => return Err(self.sync_coordinator_lost(e)),
        };
        let version = conn.version(ApiKey::SyncGroup)?;
        let mut req = SyncGroupRequest::default();
        req.group_id = GroupId(StrBytes::from_string(self.config.group_id.clone()));
        req.generation_id = generation;
        req.member_id = StrBytes::from_string(member_id.clone());
        req.group_instance_id = None;
        req.protocol_type = Some(StrBytes::from_static_str(PROTOCOL_TYPE));
        req.protocol_name = Some(StrBytes::from_string(protocol_name.clone()));
        req.assignments = assignments
            .into_iter()
            .map(|(m, a)| {
                let mut x = SyncGroupRequestAssignment::default();
                x.member_id = StrBytes::from_string(m);
                x.assignment = Bytes::from(a);
                x
            })
            .collect();
        tracing::debug!(generation, member_id = %member_id, assignments = req.assignments.len(), "sending SyncGroup");
        let resp = match conn.send(&req, version, self.config.join_timeout()).await {
            Ok(r) => {
                self.conn = Some(conn);
                r
            }
            Err(e) => return Err(self.sync_coordinator_lost(e)),
        };
        let mut s = self.shared.lock().unwrap();
        match resp.error_code {
            NONE => {
                if let Some(t) = &resp.protocol_type {
                    if t.as_str() != PROTOCOL_TYPE {
                        s.reset_generation();
                        return Err(GroupError::Broker {
                            api: "SyncGroup",
                            code: 23,
                            name: error_name(23),
                        });
                    }
                }
                if let Some(n) = &resp.protocol_name {
                    if n.as_str() != protocol_name {
                        s.reset_generation();
                        return Err(GroupError::Broker {
                            api: "SyncGroup",
                            code: 23,
                            name: error_name(23),
                        });
                    }
                }
                if s.generation != generation || s.state != MemberState::CompletingRebalance {
                    // The heartbeat task reset the generation meanwhile.
                    return Err(GroupError::RejoinNeeded(RejoinReason::IllegalGeneration));
                }
                s.state = MemberState::Stable;
                tracing::info!(group = %self.config.group_id, generation, bytes = resp.assignment.len(), "synced group");
                Ok(resp.assignment.to_vec())
            }
            REBALANCE_IN_PROGRESS => {
                s.state = MemberState::Unjoined;
                Err(GroupError::RejoinNeeded(RejoinReason::RebalanceInProgress))
            }
            UNKNOWN_MEMBER_ID => {
                if s.generation == generation {
                    s.reset_generation();
                    s.member_id.clear();
                }
                s.state = MemberState::Unjoined;
                Err(GroupError::RejoinNeeded(RejoinReason::UnknownMemberId))
            }
            ILLEGAL_GENERATION => {
                if s.generation == generation {
                    s.reset_generation();
                }
                s.state = MemberState::Unjoined;
                Err(GroupError::RejoinNeeded(RejoinReason::IllegalGeneration))
            }
            COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => {
                s.state = MemberState::Unjoined;
                drop(s);
                let e = GroupError::CoordinatorUnavailable {
                    code: resp.error_code,
                    name: error_name(resp.error_code),
                };
                self.coordinator_unknown(&e);
                Err(GroupError::RejoinNeeded(RejoinReason::CoordinatorLost))
            }
            code => {
                s.state = MemberState::Unjoined;
                Err(GroupError::Broker {
                    api: "SyncGroup",
                    code,
                    name: error_name(code),
                })
            }
        }
    }

    fn sync_coordinator_lost(&mut self, e: GroupError) -> GroupError {
        self.coordinator_unknown(&e);
        self.shared.lock().unwrap().state = MemberState::Unjoined;
        GroupError::RejoinNeeded(RejoinReason::CoordinatorLost)
    }

    /// Convenience loop: `join`, then (leader) `assign(&join_result)` to produce the SyncGroup
    /// assignments, then `sync`, repeating from `join` whenever sync says
    /// [`GroupError::RejoinNeeded`]. `protocols` is called before every JoinGroup, since the
    /// metadata must be rebuilt each time. Returns the join result and this member's
    /// assignment bytes.
    pub async fn join_and_sync<P, A>(
        &mut self,
        mut protocols: P,
        mut assign: A,
    ) -> Result<(JoinResult, Vec<u8>), GroupError>
    where
        P: FnMut() -> Vec<(String, Vec<u8>)>,
        A: FnMut(&JoinResult) -> Result<Vec<(String, Vec<u8>)>, GroupError>,
    {
        loop {
            let joined = self.join(protocols()).await?;
            let assignments = if joined.is_leader() {
                assign(&joined)?
            } else {
                Vec::new()
            };
            match self.sync(assignments).await {
                Ok(bytes) => return Ok((joined, bytes)),
                Err(GroupError::RejoinNeeded(r)) => {
                    tracing::info!(reason = %r, "SyncGroup needs a rejoin");
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends LeaveGroup (v3+ member list with `reason` from v5) if this member holds a member
    /// id, then resets generation and member id (the next join starts from "") and stops
    /// heartbeating. UNKNOWN_MEMBER_ID from the broker counts as success. Transport errors are
    /// returned after the local reset.
    pub async fn leave(&mut self, reason: &str) -> Result<(), GroupError> {
        let member_id = {
            let mut s = self.shared.lock().unwrap();
            let id = std::mem::take(&mut s.member_id);
            s.reset_generation();
            id
        };
        if member_id.is_empty() {
            return Ok(());
        }
        let mut conn = match self.take_coordinator().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "cannot reach the coordinator to leave the group");
                return Err(e);
            }
        };
        let version = conn.version(ApiKey::LeaveGroup)?;
        let mut req = LeaveGroupRequest::default();
        req.group_id = GroupId(StrBytes::from_string(self.config.group_id.clone()));
        let mut m = MemberIdentity::default();
        m.member_id = StrBytes::from_string(member_id.clone());
        if version >= 5 {
            m.reason = Some(StrBytes::from_string(reason.to_string()));
        }
        req.members = vec![m];
        tracing::info!(group = %self.config.group_id, member_id = %member_id, reason, "leaving group");
        let resp = match conn.send(&req, version, self.config.request_timeout).await {
            Ok(r) => {
                self.conn = Some(conn);
                r
            }
            Err(e) => {
                self.coordinator_unknown(&e);
                return Err(e);
            }
        };
        let code = if resp.error_code != NONE {
            resp.error_code
        } else {
            resp.members.first().map(|m| m.error_code).unwrap_or(NONE)
        };
        match code {
            NONE | UNKNOWN_MEMBER_ID => Ok(()),
            code => Err(GroupError::Broker {
                api: "LeaveGroup",
                code,
                name: error_name(code),
            }),
        }
    }

    /// Leaves the group (errors are logged) and stops the heartbeat task.
    pub async fn close(mut self, reason: &str) {
        if let Err(e) = self.leave(reason).await {
            tracing::warn!(error = %e, "LeaveGroup failed during close");
        }
        self.heartbeat.abort();
    }
}

impl Drop for GroupMember {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

/// The heartbeat task (Java `AbstractCoordinator.HeartbeatThread`): every heartbeat interval,
/// while `CompletingRebalance` or `Stable`, send Heartbeat on its own connection and react per
/// `AbstractCoordinator`.
///
/// Session loss is judged from the moment the last successful heartbeat was *sent*: the
/// coordinator cannot have expired the session before that moment plus the session timeout,
/// so signalling [`RejoinReason::SessionLost`] then (and the herder stopping its jobs) lets a
/// cut-off worker stop before the group gives its jobs to others. Each network wait is bounded
/// by the heartbeat interval, so a silent network delays the signal by at most that.
async fn heartbeat_loop(
    config: GroupConfig,
    bootstrap: Vec<String>,
    shared: Arc<Mutex<Shared>>,
    rejoin_tx: Arc<watch::Sender<Option<RejoinReason>>>,
    wake: Arc<tokio::sync::Notify>,
) {
    let mut conn: Option<Connection> = None;
    // When the last successful heartbeat was sent.
    let mut last_ok = Instant::now();
    let mut session_lost_signalled_for: Option<i32> = None;
    let mut delay = config.heartbeat_interval;
    let request_timeout = config
        .request_timeout
        .min(config.session_timeout)
        .min(config.heartbeat_interval.max(Duration::from_millis(100)));
    let fast = config.heartbeat_interval.min(EXPEDITED_HEARTBEAT);
    loop {
        // Expedited heartbeats (`HeartbeatHandle::expedite`) wake the task early.
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = wake.notified() => {}
        }
        let (state, generation, member_id, coordinator, expedited) = {
            let mut s = shared.lock().unwrap();
            let expedited = s.expedite_until.is_some_and(|u| Instant::now() < u);
            if !expedited {
                s.expedite_until = None;
            }
            (
                s.state,
                s.generation,
                s.member_id.clone(),
                s.coordinator.clone(),
                expedited,
            )
        };
        delay = if expedited {
            fast
        } else {
            config.heartbeat_interval
        };
        if !matches!(
            state,
            MemberState::CompletingRebalance | MemberState::Stable
        ) {
            last_ok = Instant::now();
            continue;
        }
        if last_ok.elapsed() >= config.session_timeout
            && session_lost_signalled_for != Some(generation)
        {
            tracing::warn!(group = %config.group_id, generation, "no successful heartbeat within the session timeout");
            session_lost_signalled_for = Some(generation);
            let _g = shared.lock().unwrap();
            rejoin_tx.send_replace(Some(RejoinReason::SessionLost));
        }
        if conn.is_none() {
            let found = match coordinator {
                Some(addr) => {
                    Connection::connect(&addr, &config.client_id, request_timeout, &config.security)
                        .await
                }
                None => discover_coordinator(&bootstrap, &config).await,
            };
            match found {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    tracing::debug!(error = %e, "heartbeat: coordinator unreachable");
                    delay = config.retry_backoff;
                    continue;
                }
            }
        }
        let c = conn.as_mut().expect("connected above");
        let version = match c.version(ApiKey::Heartbeat) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(error = %e, "heartbeat: broker lacks a usable Heartbeat version");
                conn = None;
                continue;
            }
        };
        let mut req = HeartbeatRequest::default();
        req.group_id = GroupId(StrBytes::from_string(config.group_id.clone()));
        req.generation_id = generation;
        req.member_id = StrBytes::from_string(member_id);
        req.group_instance_id = None;
        let sent_at = Instant::now();
        let code = match c.send(&req, version, request_timeout).await {
            Ok(resp) => resp.error_code,
            Err(e) => {
                tracing::debug!(error = %e, "heartbeat failed; reconnecting");
                conn = None;
                delay = config.retry_backoff;
                continue;
            }
        };
        match code {
            NONE => last_ok = sent_at,
            REBALANCE_IN_PROGRESS => {
                last_ok = sent_at;
                let s = shared.lock().unwrap();
                if s.state == MemberState::Stable && s.generation == generation {
                    tracing::info!(group = %config.group_id, generation, "heartbeat: group is rebalancing; rejoin needed");
                    rejoin_tx.send_if_modified(|r| {
                        if r.is_none() {
                            *r = Some(RejoinReason::RebalanceInProgress);
                            true
                        } else {
                            false
                        }
                    });
                }
            }
            ILLEGAL_GENERATION | UNKNOWN_MEMBER_ID => {
                last_ok = sent_at;
                let mut s = shared.lock().unwrap();
                if s.generation == generation
                    && matches!(
                        s.state,
                        MemberState::CompletingRebalance | MemberState::Stable
                    )
                {
                    let reason = if code == UNKNOWN_MEMBER_ID {
                        s.member_id.clear();
                        RejoinReason::UnknownMemberId
                    } else {
                        RejoinReason::IllegalGeneration
                    };
                    s.reset_generation();
                    tracing::info!(group = %config.group_id, generation, %reason, "heartbeat: member reset; rejoin needed");
                    rejoin_tx.send_replace(Some(reason));
                }
            }
            COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => {
                tracing::info!(code, "heartbeat: coordinator moved; rediscovering");
                conn = None;
                shared.lock().unwrap().coordinator = None;
                delay = config.retry_backoff;
            }
            FENCED_INSTANCE_ID => {
                tracing::error!(
                    "heartbeat: FENCED_INSTANCE_ID (static membership is not used by Connect)"
                );
            }
            code => {
                tracing::warn!(code, name = %error_name(code), "heartbeat: unexpected error");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expediting_wakes_the_heartbeat_task_once_per_window() {
        let t0 = Instant::now();
        let window = Duration::from_secs(3);
        let mut until = None;
        assert!(extend_expedited(&mut until, t0, window), "first call wakes");
        assert_eq!(until, Some(t0 + window));
        // Later calls inside the window extend it without waking the task again.
        let t1 = t0 + Duration::from_secs(1);
        assert!(!extend_expedited(&mut until, t1, window));
        assert_eq!(until, Some(t1 + window));
        // A shorter window never shortens it.
        assert!(!extend_expedited(&mut until, t1, Duration::from_millis(10)));
        assert_eq!(until, Some(t1 + window));
        // Once it expired, the next call wakes again.
        let t2 = t1 + window + Duration::from_millis(1);
        assert!(extend_expedited(&mut until, t2, window));
        assert_eq!(until, Some(t2 + window));
    }
}
