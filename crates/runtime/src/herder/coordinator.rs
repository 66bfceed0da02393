//! The worker's side of one group round (Connect's `WorkerCoordinator`): JoinGroup with this
//! worker's metadata, the assignor when this worker leads, SyncGroup, and the decoded outcome.
//!
//! The herder hands in what it holds and the config snapshot, and gets back a typed
//! [`RoundOutcome`]: its own assignment, the negotiated protocol, and (as leader) the owner of
//! every job and the jobs that wait for departed workers. Member metadata is decoded once; the
//! assignors work on decoded values and their assignments are encoded once, at the wire edge.
//! Failures come back as a [`CoordinatorError`] that tells a rejoin request from an unreachable
//! coordinator, a refusal by the broker, or an unreadable payload.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use tributary_group::assignor::{
    decode_members, encode_assignments, perform_assignment, static_claims_in_effect,
    ConfigSnapshot, ConnectAssignor, CooperativeAssignorState, DepartedJob, EagerAssignor, Job,
    RoundInput, StaticAssignorState,
};
use tributary_group::client::{GroupError, GroupMembership, JoinResult, RejoinReason};
use tributary_group::{
    Assignment, ConnectProtocol, ConnectorTaskId, ProtocolError, StaticClaims, WorkerMetadata,
};

/// Who runs each job after a round, by advertised REST URL (known to the leader only; used to
/// route requests such as restarts, Java's `LeaderState`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOwners {
    /// Connector name -> owner URL.
    pub connectors: HashMap<String, String>,
    /// Task -> owner URL.
    pub tasks: HashMap<ConnectorTaskId, String>,
    /// Every member's URL, in the JoinGroup response's order (members without jobs too).
    pub members: Vec<String>,
}

/// What one completed round means for this worker.
#[derive(Debug, Clone)]
pub struct RoundOutcome {
    /// The generation joined.
    pub generation: i32,
    /// This worker's member id in that generation.
    pub member_id: String,
    /// The protocol the group selected.
    pub protocol: ConnectProtocol,
    /// This worker's assignment, decoded: the full assignment under eager, a delta (jobs to
    /// start, jobs to stop, delay) under the cooperative protocols.
    pub assignment: Assignment,
    /// Whether this worker computed the assignments.
    pub is_leader: bool,
    /// The owner of every job after the round (leader only).
    pub owners: Option<JobOwners>,
    /// Jobs of departed workers that nobody runs until their worker returns or the scheduled
    /// delay ends, and static jobs whose claimants are all away (leader only; report them
    /// UNASSIGNED).
    pub lost_jobs: Vec<Job>,
    /// This worker's static claims are honoured in this generation.
    pub static_in_effect: bool,
}

/// Why a round did not complete. [`CoordinatorError::retry_after`] tells the herder how long
/// to wait before the next attempt.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The group moved on during the round (rebalance in progress, unknown member, illegal
    /// generation): join again at once.
    #[error("the group needs another round: {0}")]
    Rejoin(String),
    /// The coordinator could not be reached or did not answer in time: retry shortly.
    #[error("the group coordinator is unavailable: {0}")]
    Unavailable(GroupError),
    /// The broker refused this worker (e.g. authorization, inconsistent protocols, group full):
    /// retrying soon will not help.
    #[error("the broker refused this worker's membership: {0}")]
    Refused(GroupError),
    /// Member metadata or an assignment could not be encoded or decoded.
    #[error("unreadable group payload: {0}")]
    Protocol(#[from] ProtocolError),
    /// The worker is stopping: the round was abandoned (a JoinGroup in flight is cancelled at
    /// once; a SyncGroup gets [`SYNC_GRACE_WHEN_STOPPING`]). The caller leaves the group.
    #[error("the worker is stopping")]
    Stopping,
}

/// How long a SyncGroup already sent may still take once the worker is asked to stop. Letting
/// it finish tells the worker which jobs the round gave it, so that it can report them
/// UNASSIGNED before it leaves (the leader's evidence of a clean departure); the leader's
/// assignment normally arrives within milliseconds.
pub const SYNC_GRACE_WHEN_STOPPING: Duration = Duration::from_secs(2);

/// Resolves once `stopping` holds `true`, or its sender is gone (the herder was dropped).
pub async fn stopped(stopping: &mut tokio::sync::watch::Receiver<bool>) {
    // An error means the sender is gone, which also means stopping.
    stopping.wait_for(|s| *s).await.ok();
}

/// Kafka error codes after which joining again is the answer.
const REJOIN_CODES: [i16; 4] = [
    22, // ILLEGAL_GENERATION
    25, // UNKNOWN_MEMBER_ID
    27, // REBALANCE_IN_PROGRESS
    79, // MEMBER_ID_REQUIRED
];

impl From<GroupError> for CoordinatorError {
    fn from(e: GroupError) -> Self {
        match e {
            GroupError::RejoinNeeded(reason) => CoordinatorError::Rejoin(reason.to_string()),
            GroupError::NotJoined => CoordinatorError::Rejoin(e.to_string()),
            GroupError::Broker { code, .. } if REJOIN_CODES.contains(&code) => {
                CoordinatorError::Rejoin(e.to_string())
            }
            e if e.is_coordinator_error() => CoordinatorError::Unavailable(e),
            e => CoordinatorError::Refused(e),
        }
    }
}

impl CoordinatorError {
    /// How long to wait before the next round: none after a rejoin request, 500 ms after a
    /// transport failure or an unreadable payload, 5 s after a refusal.
    pub fn retry_after(&self) -> Duration {
        match self {
            CoordinatorError::Rejoin(_) | CoordinatorError::Stopping => Duration::ZERO,
            CoordinatorError::Unavailable(_) | CoordinatorError::Protocol(_) => {
                Duration::from_millis(500)
            }
            CoordinatorError::Refused(_) => Duration::from_secs(5),
        }
    }
}

/// This worker's static claims: `static.connectors` and `static.tasks` (`None` = unset).
pub type StaticClaimConfig = (Option<Vec<String>>, Option<Vec<ConnectorTaskId>>);

/// The group membership of one worker and the leader's memory between rounds.
pub struct WorkerCoordinator {
    /// The group membership: the Kafka group client, or an in-memory group in tests.
    member: Box<dyn GroupMembership>,
    /// The configured `connect.protocol`.
    protocol: ConnectProtocol,
    /// This worker's advertised REST URL.
    url: String,
    static_claims: StaticClaimConfig,
    /// The leader's memory for the cooperative protocols (KIP-415).
    cooperative: CooperativeAssignorState,
    /// The leader's memory for the `static` protocol.
    static_state: StaticAssignorState,
    /// The generation of this worker's last completed round (Java's
    /// `lastCompletedGenerationId`), for the leader's assignor.
    last_completed_generation: i32,
    /// The static claims carried by this worker's last assignment: where a new leader's
    /// memory of absent workers' claims starts.
    known_claims: Vec<StaticClaims>,
}

impl WorkerCoordinator {
    /// A coordinator for `member`, offering the protocols of `protocol`, with
    /// `scheduled.rebalance.max.delay.ms` = `max_delay` (whole ms up to `i32::MAX` are used).
    pub fn new(
        member: Box<dyn GroupMembership>,
        protocol: ConnectProtocol,
        url: String,
        static_claims: StaticClaimConfig,
        max_delay: Duration,
    ) -> Self {
        let max_delay_ms = i32::try_from(max_delay.as_millis()).unwrap_or(i32::MAX);
        WorkerCoordinator {
            member,
            protocol,
            url,
            static_claims,
            cooperative: CooperativeAssignorState::new(max_delay_ms),
            static_state: StaticAssignorState::new(max_delay_ms),
            last_completed_generation: -1,
            known_claims: Vec::new(),
        }
    }

    /// The configured protocol.
    pub fn protocol(&self) -> ConnectProtocol {
        self.protocol
    }

    /// The heartbeat's signal that a new round is needed.
    pub fn rejoin_needed(&self) -> tokio::sync::watch::Receiver<Option<RejoinReason>> {
        self.member.rejoin_needed()
    }

    /// Leaves the group (LeaveGroup with `reason`).
    pub async fn leave(&mut self, reason: &str) -> Result<(), GroupError> {
        self.member.leave(reason).await
    }

    /// A handle that expedites this worker's heartbeats (see
    /// [`tributary_group::client::HeartbeatHandle`]).
    pub fn heartbeat_handle(&self) -> tributary_group::client::HeartbeatHandle {
        self.member.heartbeat_handle()
    }

    /// One round: joins with `config_offset` and (cooperative) `held`, the jobs this worker
    /// runs; as leader, assigns from `leader_snapshot` (`fresh` is called at most once, when a
    /// member has read further in the config topic, and may block; `released` is called at
    /// most once, with the jobs of departed members, and returns those it has evidence their
    /// owner stopped, which are then re-assigned at once; it may block); syncs and decodes this
    /// worker's assignment.
    ///
    /// Once `stopping` turns true, a JoinGroup in flight is abandoned at once and a SyncGroup
    /// in flight gets [`SYNC_GRACE_WHEN_STOPPING`]; either way the round ends with
    /// [`CoordinatorError::Stopping`] (after a completed SyncGroup the outcome is returned: the
    /// caller decides not to start its jobs).
    pub async fn round(
        &mut self,
        config_offset: i64,
        held: Option<Assignment>,
        leader_snapshot: ConfigSnapshot,
        fresh: impl FnOnce() -> ConfigSnapshot,
        released: impl FnOnce(&[DepartedJob]) -> Vec<Job>,
        stopping: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Result<RoundOutcome, CoordinatorError> {
        let mut metadata = WorkerMetadata::new(self.url.clone(), config_offset);
        metadata.allocation = held;
        if self.protocol == ConnectProtocol::Static {
            metadata.static_connectors = self.static_claims.0.clone();
            metadata.static_tasks = self.static_claims.1.clone();
        }
        let protocols = self.protocol.join_protocols(&metadata)?;
        // A JoinGroup is safe to abandon: the caller's LeaveGroup then takes this member out
        // of the round (or out of the broker's pending members) before the group forms.
        let join = tokio::select! {
            biased;
            _ = stopped(stopping) => return Err(CoordinatorError::Stopping),
            joined = self.member.join(protocols) => joined?,
        };
        let negotiated = ConnectProtocol::from_wire_name(&join.protocol_name)?;
        let (to_send, owners, lost_jobs) = if join.is_leader() {
            let members = decode_members(&join.members)?;
            // The assignor may read the config and status topics (`fresh`, `released`): off
            // the async threads.
            let (assignments, lost) = blocking_section(|| {
                self.lead(
                    negotiated,
                    &join,
                    &members,
                    leader_snapshot,
                    fresh,
                    released,
                )
            });
            let owners = owners_of(&members, &assignments, negotiated);
            let encoded = encode_assignments(&assignments, negotiated)?;
            (encoded, Some(owners), lost)
        } else {
            (Vec::new(), None, Vec::new())
        };
        let bytes = tokio::select! {
            biased;
            synced = self.member.sync(to_send) => synced?,
            _ = async {
                stopped(stopping).await;
                tokio::time::sleep(SYNC_GRACE_WHEN_STOPPING).await;
            } => return Err(CoordinatorError::Stopping),
        };
        let assignment = Assignment::decode(&bytes)?;
        if !join.is_leader() {
            // The leader's memory is only valid while this worker leads.
            self.cooperative.reset();
            self.static_state.reset();
        }
        if negotiated == ConnectProtocol::Static {
            self.known_claims = assignment.static_claims.clone();
        }
        self.last_completed_generation = join.generation;
        let own = WorkerMetadata {
            static_connectors: self.static_claims.0.clone(),
            static_tasks: self.static_claims.1.clone(),
            ..WorkerMetadata::new("", 0)
        };
        Ok(RoundOutcome {
            generation: join.generation,
            is_leader: assignment.leader == join.member_id,
            member_id: join.member_id,
            protocol: negotiated,
            assignment,
            owners,
            lost_jobs,
            static_in_effect: self.protocol == ConnectProtocol::Static
                && static_claims_in_effect(negotiated, &own),
        })
    }

    /// Whether this worker set static claims (`static.connectors` or `static.tasks`).
    pub fn has_static_claims(&self) -> bool {
        self.static_claims.0.is_some() || self.static_claims.1.is_some()
    }

    /// The leader's step: decoded assignments per member and the jobs left waiting.
    fn lead(
        &mut self,
        negotiated: ConnectProtocol,
        join: &JoinResult,
        members: &[(String, WorkerMetadata)],
        leader_snapshot: ConfigSnapshot,
        fresh: impl FnOnce() -> ConfigSnapshot,
        released: impl FnOnce(&[DepartedJob]) -> Vec<Job>,
    ) -> (BTreeMap<String, Assignment>, Vec<Job>) {
        let assignor: &mut dyn ConnectAssignor = match negotiated {
            ConnectProtocol::Eager => &mut EagerAssignor,
            ConnectProtocol::Static => {
                if self.static_state.previous_generation() < 0 {
                    // A new leader: the claims the group knew before it.
                    self.static_state.remember_claims(&self.known_claims);
                }
                &mut self.static_state
            }
            ConnectProtocol::Compatible | ConnectProtocol::Sessioned => {
                // Tributary's clean-departure rule: jobs their departed owner reported
                // stopped are placed at once instead of waiting for the scheduled delay.
                let departed = self
                    .cooperative
                    .departed_jobs(members, self.last_completed_generation);
                if !departed.is_empty() {
                    let jobs = released(&departed);
                    if !jobs.is_empty() {
                        tracing::info!(
                            jobs = jobs.len(),
                            of = departed.len(),
                            "jobs of departed workers were stopped by them; re-assigning them at once"
                        );
                    }
                    self.cooperative.release(jobs);
                }
                &mut self.cooperative
            }
        };
        let input = RoundInput {
            leader_id: &join.member_id,
            members,
            leader_snapshot,
            last_completed_generation: self.last_completed_generation,
            generation: join.generation,
            now_ms: now_ms(),
        };
        let out = perform_assignment(assignor, input, fresh);
        (out, assignor.held_back())
    }
}

/// Runs `f`, which may block, without stalling the other tasks of a multi-threaded runtime.
fn blocking_section<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Owner URLs of every job after a round: eager assignments are complete; cooperative ones
/// are deltas over what each member held (its metadata's allocation).
pub fn owners_of(
    members: &[(String, WorkerMetadata)],
    assignments: &BTreeMap<String, Assignment>,
    protocol: ConnectProtocol,
) -> JobOwners {
    let mut owners = JobOwners {
        members: members.iter().map(|(_, m)| m.url.clone()).collect(),
        ..Default::default()
    };
    for (id, meta) in members {
        let Some(a) = assignments.get(id) else {
            continue;
        };
        let url = &meta.url;
        if protocol != ConnectProtocol::Eager {
            if let Some(alloc) = &meta.allocation {
                // Sets: a worker may hold thousands of tasks and lose hundreds in a round.
                let revoked_connectors: HashSet<&String> = a.revoked_connectors.iter().collect();
                let revoked_tasks: HashSet<&ConnectorTaskId> = a.revoked_tasks.iter().collect();
                for c in alloc
                    .connectors
                    .iter()
                    .filter(|c| !revoked_connectors.contains(c))
                {
                    owners.connectors.insert(c.clone(), url.clone());
                }
                for t in alloc.tasks.iter().filter(|t| !revoked_tasks.contains(t)) {
                    owners.tasks.insert(t.clone(), url.clone());
                }
            }
        }
        for c in &a.connectors {
            owners.connectors.insert(c.clone(), url.clone());
        }
        for t in &a.tasks {
            owners.tasks.insert(t.clone(), url.clone());
        }
    }
    owners
}

/// What a worker does with its assignment: the jobs to stop and what it holds afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    /// Connectors to stop.
    pub stop_connectors: Vec<String>,
    /// Tasks to stop.
    pub stop_tasks: Vec<ConnectorTaskId>,
    /// The jobs held after the round (what goes into the next JoinGroup's allocation).
    pub held: Assignment,
}

/// The delta of `assignment` for a worker that holds `held` and runs `running`: under eager
/// (the full assignment), stop whatever runs that is not assigned; under the cooperative
/// protocols, stop the revoked jobs, then hold what was held minus the revoked plus the added.
/// The held assignment takes the leader, its URL and the config offset of `assignment`.
pub fn delta(
    protocol: ConnectProtocol,
    held: &Assignment,
    assignment: &Assignment,
    running: (&[String], &[ConnectorTaskId]),
) -> Delta {
    // Membership through sets: with thousands of tasks a worker, `Vec::contains` made a
    // round quadratic (found by the assignor simulation).
    let assigned_connectors: HashSet<&String> = assignment.connectors.iter().collect();
    let assigned_tasks: HashSet<&ConnectorTaskId> = assignment.tasks.iter().collect();
    let mut out = if protocol == ConnectProtocol::Eager {
        Delta {
            stop_connectors: running
                .0
                .iter()
                .filter(|c| !assigned_connectors.contains(c))
                .cloned()
                .collect(),
            stop_tasks: running
                .1
                .iter()
                .filter(|t| !assigned_tasks.contains(t))
                .cloned()
                .collect(),
            held: Assignment {
                connectors: assignment.connectors.clone(),
                tasks: assignment.tasks.clone(),
                ..Default::default()
            },
        }
    } else {
        let mut next = held.clone();
        let revoked_connectors: HashSet<&String> = assignment.revoked_connectors.iter().collect();
        let revoked_tasks: HashSet<&ConnectorTaskId> = assignment.revoked_tasks.iter().collect();
        next.connectors.retain(|c| !revoked_connectors.contains(c));
        next.tasks.retain(|t| !revoked_tasks.contains(t));
        let mut held_connectors: HashSet<String> = next.connectors.iter().cloned().collect();
        let mut held_tasks: HashSet<ConnectorTaskId> = next.tasks.iter().cloned().collect();
        for c in &assignment.connectors {
            if held_connectors.insert(c.clone()) {
                next.connectors.push(c.clone());
            }
        }
        for t in &assignment.tasks {
            if held_tasks.insert(t.clone()) {
                next.tasks.push(t.clone());
            }
        }
        Delta {
            stop_connectors: assignment.revoked_connectors.clone(),
            stop_tasks: assignment.revoked_tasks.clone(),
            held: next,
        }
    };
    out.held.leader = assignment.leader.clone();
    out.held.leader_url = assignment.leader_url.clone();
    out.held.config_offset = assignment.config_offset;
    out.held.static_claims = Vec::new();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(c: &str, n: u32) -> ConnectorTaskId {
        ConnectorTaskId::new(c, n)
    }

    fn assignment(
        connectors: &[&str],
        tasks: &[ConnectorTaskId],
        revoked_c: &[&str],
        revoked_t: &[ConnectorTaskId],
    ) -> Assignment {
        Assignment {
            leader: "leader-1".into(),
            leader_url: "http://l:8083/".into(),
            config_offset: 9,
            connectors: connectors.iter().map(|c| c.to_string()).collect(),
            tasks: tasks.to_vec(),
            revoked_connectors: revoked_c.iter().map(|c| c.to_string()).collect(),
            revoked_tasks: revoked_t.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn cooperative_delta_stops_only_the_revoked_and_adds_the_new() {
        let held = assignment(&["a", "b"], &[t("a", 0), t("b", 0)], &[], &[]);
        let got = assignment(&["c"], &[t("c", 0)], &["b"], &[t("a", 0)]);
        let d = delta(
            ConnectProtocol::Sessioned,
            &held,
            &got,
            (&["a".into(), "b".into()], &[t("a", 0), t("b", 0)]),
        );
        assert_eq!(d.stop_connectors, vec!["b".to_string()]);
        assert_eq!(d.stop_tasks, vec![t("a", 0)]);
        assert_eq!(d.held.connectors, vec!["a".to_string(), "c".to_string()]);
        assert_eq!(d.held.tasks, vec![t("b", 0), t("c", 0)]);
        assert_eq!(
            (d.held.leader.as_str(), d.held.config_offset),
            ("leader-1", 9)
        );
    }

    #[test]
    fn eager_delta_stops_everything_not_in_the_full_assignment() {
        let full = assignment(&["a"], &[t("a", 1)], &[], &[]);
        let d = delta(
            ConnectProtocol::Eager,
            &Assignment::default(),
            &full,
            (&["a".into(), "b".into()], &[t("a", 0), t("a", 1)]),
        );
        assert_eq!(d.stop_connectors, vec!["b".to_string()]);
        assert_eq!(d.stop_tasks, vec![t("a", 0)]);
        assert_eq!(d.held.connectors, vec!["a".to_string()]);
        assert_eq!(d.held.tasks, vec![t("a", 1)]);
    }

    #[test]
    fn owners_combine_what_members_keep_with_what_they_get() {
        let mut m1 = WorkerMetadata::new("http://w1/", 0);
        m1.allocation = Some(assignment(&["a"], &[t("a", 0), t("a", 1)], &[], &[]));
        let m2 = WorkerMetadata::new("http://w2/", 0);
        let members = vec![("m1".to_string(), m1), ("m2".to_string(), m2)];
        let mut out = BTreeMap::new();
        out.insert("m1".to_string(), assignment(&[], &[], &[], &[t("a", 1)]));
        out.insert("m2".to_string(), assignment(&["b"], &[t("b", 0)], &[], &[]));
        let owners = owners_of(&members, &out, ConnectProtocol::Sessioned);
        assert_eq!(owners.connectors["a"], "http://w1/");
        assert_eq!(owners.connectors["b"], "http://w2/");
        assert_eq!(owners.tasks[&t("a", 0)], "http://w1/");
        assert!(!owners.tasks.contains_key(&t("a", 1)));
        assert_eq!(owners.tasks[&t("b", 0)], "http://w2/");
    }

    #[test]
    fn errors_say_when_to_retry() {
        let rejoin: CoordinatorError = GroupError::Broker {
            api: "SyncGroup",
            code: 27,
            name: "RebalanceInProgress".into(),
        }
        .into();
        assert!(matches!(rejoin, CoordinatorError::Rejoin(_)));
        assert_eq!(rejoin.retry_after(), Duration::ZERO);
        let down: CoordinatorError = GroupError::NoBootstrap.into();
        assert!(matches!(down, CoordinatorError::Unavailable(_)));
        let refused: CoordinatorError = GroupError::Broker {
            api: "JoinGroup",
            code: 30,
            name: "GroupAuthorizationFailed".into(),
        }
        .into();
        assert!(matches!(refused, CoordinatorError::Refused(_)));
        assert!(refused.retry_after() > down.retry_after());
    }
}
