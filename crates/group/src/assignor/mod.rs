//! Leader-side assignment computations, as pure functions over decoded member metadata.
//!
//! - [`ConnectAssignor`] (Connect's interface of the same name): one implementation per
//!   protocol, [`EagerAssignor`], [`CooperativeAssignorState`] and [`StaticAssignorState`];
//!   [`perform_assignment`] runs one on a round's inputs ([`RoundInput`]) after the
//!   config-offset check, [`assignments_on_wire`] on raw JoinGroup metadata.
//! - [`check_config_offset`]: the config-offset check shared by Java's `EagerAssignor` and
//!   `IncrementalCooperativeAssignor`, which yields CONFIG_MISMATCH assignments
//!   when the leader is behind.
//! - [`eager`]: the eager (`default` protocol) round-robin assignor.
//! - [`cooperative`]: the incremental cooperative (KIP-415, `compatible` / `sessioned`)
//!   assignor as a pure state machine over the leader's memory.
//! - [`static_assignor`]: Tributary's `static` (V3) assignor: static claims honoured, unclaimed
//!   jobs placed on wildcard workers with the cooperative rules.

pub mod cooperative;
pub mod eager;
pub mod static_assignor;

pub use cooperative::{
    assign_cooperative, CooperativeAssignorState, DepartedJob, MemberJobs,
    DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS,
};
pub use eager::assign_eager;
pub use static_assignor::{
    assign_static, static_claims_in_effect, StaticAssignorState, StaticMemberReport,
    UnassignedReason,
};

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use crate::protocol::{
    Assignment, ConnectProtocol, ConnectorTaskId, ProtocolError, WorkerMetadata,
};

/// One unit of work in the group: a connector instance or one of its tasks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Job {
    /// The connector instance with this name.
    Connector(String),
    /// A task.
    Task(ConnectorTaskId),
}

impl fmt::Display for Job {
    /// The connector name, or the task id `<connector>-<n>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Job::Connector(c) => f.write_str(c),
            Job::Task(t) => t.fmt(f),
        }
    }
}

/// The part of the leader's config-topic state an assignor needs (a subset of Java's
/// `ClusterConfigState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfigSnapshot {
    /// Offset of the next config-topic record to read; -1 if nothing was read.
    pub offset: i64,
    /// Configured connectors and their committed task counts: the connector's tasks are
    /// `<connector>-0..count-1`. A connector with an inconsistent (incompletely committed)
    /// task set must be given count 0: it gets its connector instance assigned but no tasks.
    pub connectors: BTreeMap<String, u32>,
}

impl ConfigSnapshot {
    /// Connector names sorted in Java `String` order (UTF-16 code units).
    pub fn connectors_sorted(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.connectors.keys().map(String::as_str).collect();
        v.sort_by(|a, b| java_string_cmp(a, b));
        v
    }

    /// The tasks of `connector` in task-number order (empty for unknown connectors).
    pub fn tasks(&self, connector: &str) -> Vec<ConnectorTaskId> {
        let n = self.connectors.get(connector).copied().unwrap_or(0);
        (0..n).map(|t| ConnectorTaskId::new(connector, t)).collect()
    }
}

/// Outcome of the config-offset check (both of Connect's assignors make it first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigCheck {
    /// Assign from `snapshot`; every assignment carries `config_offset`.
    Ok {
        /// The snapshot to assign from (the leader's, or the fresh one).
        snapshot: ConfigSnapshot,
        /// Offset to put in the assignments: the max member offset, or the fresh snapshot's
        /// offset if a fresh snapshot had to be taken.
        config_offset: i64,
    },
    /// The leader is behind some member even after a fresh snapshot: send every member
    /// [`Assignment::config_mismatch`] with `max_offset`.
    Mismatch {
        /// Largest config offset any member reported.
        max_offset: i64,
    },
}

/// The config-offset check every Connect assignor runs first (Java
/// `EagerAssignor.ensureLeaderConfig` / `IncrementalCooperativeAssignor.ensureLeaderConfig`).
///
/// `max_offset` = largest `config_offset` among `members` (the leader included). If
/// `leader_snapshot.offset < max_offset`, `fresh_snapshot` is called **once** (it should return
/// whatever the leader's config reader has reached, without blocking); if that is still behind,
/// the result is [`ConfigCheck::Mismatch`], else the fresh snapshot is used with its own offset.
/// Otherwise the leader's snapshot is used with `max_offset`. With no members, the leader's
/// snapshot and offset are used.
pub fn check_config_offset<'a>(
    members: impl IntoIterator<Item = &'a WorkerMetadata>,
    leader_snapshot: ConfigSnapshot,
    fresh_snapshot: impl FnOnce() -> ConfigSnapshot,
) -> ConfigCheck {
    let max_offset = members
        .into_iter()
        .map(|m| m.config_offset)
        .max()
        .unwrap_or(leader_snapshot.offset);
    if leader_snapshot.offset < max_offset {
        let fresh = fresh_snapshot();
        if fresh.offset < max_offset {
            tracing::info!(
                leader_offset = leader_snapshot.offset,
                fresh_offset = fresh.offset,
                max_offset,
                "leader is behind the config topic; sending CONFIG_MISMATCH to trigger a re-sync"
            );
            return ConfigCheck::Mismatch { max_offset };
        }
        let config_offset = fresh.offset;
        return ConfigCheck::Ok {
            snapshot: fresh,
            config_offset,
        };
    }
    ConfigCheck::Ok {
        snapshot: leader_snapshot,
        config_offset: max_offset,
    }
}

/// CONFIG_MISMATCH assignments for every member id (Connect's `ConnectProtocol.Assignment.CONFIG_MISMATCH`): error 1, the leader's id and
/// URL, `max_offset`, empty lists, delay 0.
pub fn config_mismatch_assignments<'a>(
    member_ids: impl IntoIterator<Item = &'a str>,
    leader_id: &str,
    leader_url: &str,
    max_offset: i64,
) -> BTreeMap<String, Assignment> {
    member_ids
        .into_iter()
        .map(|m| {
            (
                m.to_string(),
                Assignment::config_mismatch(leader_id, leader_url, max_offset),
            )
        })
        .collect()
}

/// Compares strings as Java's `String.compareTo` does (UTF-16 code units), which differs from
/// Rust's byte order only for characters above U+FFFF versus U+E000..=U+FFFF.
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Inputs of one leader round after the config-offset check: what an assignor is given (what Connect's `performTaskAssignment` is given).
#[derive(Debug, Clone, Copy)]
pub struct Round<'a> {
    /// The leader's member id (goes into every assignment).
    pub leader_id: &'a str,
    /// The leader's advertised REST URL (from its own metadata).
    pub leader_url: &'a str,
    /// `(member id, decoded metadata)` of every member from the JoinGroup response; each
    /// member's `allocation` is what it currently runs (`None` = nothing).
    pub members: &'a [(String, WorkerMetadata)],
    /// The config snapshot chosen by the config-offset check.
    pub snapshot: &'a ConfigSnapshot,
    /// Config offset to put into every assignment (from the config-offset check).
    pub config_offset: i64,
    /// Generation of the leader's own last **successful** join (Java
    /// `WorkerCoordinator.lastCompletedGenerationId`); if it differs from the generation of
    /// the last round this state computed, the state's memory is treated as stale.
    pub last_completed_generation: i32,
    /// Generation just joined (Java `WorkerCoordinator.generationId`).
    pub generation: i32,
    /// Leader wall clock in ms (only differences matter).
    pub now_ms: i64,
}

/// A leader's assignor for one Connect protocol (Connect's `ConnectAssignor`, whose
/// `performAssignment` is [`perform_assignment`] here): given a round on a config-checked
/// snapshot, every member's assignment. The state an assignor keeps between rounds (the
/// cooperative assignor's memory of lost jobs, the static one's claims) lives in the
/// implementing value.
pub trait ConnectAssignor {
    /// Every member's assignment for `round` (the config-offset check passed).
    fn assign(&mut self, round: &Round<'_>) -> BTreeMap<String, Assignment>;
    /// The jobs the last round held back waiting for an owner: lost jobs under
    /// `scheduled.rebalance.max.delay.ms` (cooperative), claimed jobs whose claimant is absent
    /// (static). None for the eager assignor.
    fn held_back(&self) -> Vec<Job>;
}

/// The eager assignor (Connect's `EagerAssignor`, protocol `default`): round-robin over the
/// members in Java string order, connectors first, then every connector's tasks; it keeps no
/// state between rounds.
#[derive(Debug, Clone, Copy, Default)]
pub struct EagerAssignor;

impl ConnectAssignor for EagerAssignor {
    fn assign(&mut self, round: &Round<'_>) -> BTreeMap<String, Assignment> {
        assign_eager(
            round.members.iter().map(|(id, _)| id.as_str()),
            round.leader_id,
            round.leader_url,
            round.config_offset,
            round.snapshot,
        )
    }
    fn held_back(&self) -> Vec<Job> {
        Vec::new()
    }
}

impl ConnectAssignor for CooperativeAssignorState {
    fn assign(&mut self, round: &Round<'_>) -> BTreeMap<String, Assignment> {
        assign_cooperative(self, round)
    }
    fn held_back(&self) -> Vec<Job> {
        self.lost_jobs().to_vec()
    }
}

impl ConnectAssignor for StaticAssignorState {
    fn assign(&mut self, round: &Round<'_>) -> BTreeMap<String, Assignment> {
        assign_static(self, round)
    }
    fn held_back(&self) -> Vec<Job> {
        self.unassigned()
            .iter()
            .filter(|(_, r)| {
                matches!(
                    r,
                    UnassignedReason::NoPresentClaimant | UnassignedReason::AwaitingOwner
                )
            })
            .map(|(j, _)| j.clone())
            .collect()
    }
}

/// What the leader knows when a round starts, before the config-offset check.
#[derive(Debug, Clone)]
pub struct RoundInput<'a> {
    /// The leader's member id.
    pub leader_id: &'a str,
    /// `(member id, decoded metadata)` of every member from the JoinGroup response.
    pub members: &'a [(String, WorkerMetadata)],
    /// The leader's config snapshot.
    pub leader_snapshot: ConfigSnapshot,
    /// Generation of the leader's own last successful join (see [`Round`]).
    pub last_completed_generation: i32,
    /// Generation just joined.
    pub generation: i32,
    /// Leader wall clock, epoch ms (only differences matter).
    pub now_ms: i64,
}

impl<'a> RoundInput<'a> {
    /// The inputs of a new leader's first round: no completed generation (-1), generation 1,
    /// clock 0 (what a simulation's first round or a one-off assignment needs).
    pub fn first(
        leader_id: &'a str,
        members: &'a [(String, WorkerMetadata)],
        leader_snapshot: ConfigSnapshot,
    ) -> RoundInput<'a> {
        RoundInput {
            leader_id,
            members,
            leader_snapshot,
            last_completed_generation: -1,
            generation: 1,
            now_ms: 0,
        }
    }
}

/// One leader round (Connect's `performAssignment`): the config-offset check (CONFIG_MISMATCH
/// for every member, `assignor` not asked and its state untouched, when the leader is behind),
/// then `assignor` on the checked snapshot. The leader's URL comes from its own metadata entry
/// (empty if absent). `fresh_snapshot` is called at most once, only when the leader is behind
/// the members.
pub fn perform_assignment(
    assignor: &mut dyn ConnectAssignor,
    input: RoundInput<'_>,
    fresh_snapshot: impl FnOnce() -> ConfigSnapshot,
) -> BTreeMap<String, Assignment> {
    let RoundInput {
        leader_id,
        members,
        leader_snapshot,
        last_completed_generation,
        generation,
        now_ms,
    } = input;
    let leader_url = members
        .iter()
        .find(|(id, _)| id == leader_id)
        .map(|(_, m)| m.url.as_str())
        .unwrap_or_default();
    match check_config_offset(
        members.iter().map(|(_, m)| m),
        leader_snapshot,
        fresh_snapshot,
    ) {
        ConfigCheck::Mismatch { max_offset } => config_mismatch_assignments(
            members.iter().map(|(id, _)| id.as_str()),
            leader_id,
            leader_url,
            max_offset,
        ),
        ConfigCheck::Ok {
            snapshot,
            config_offset,
        } => assignor.assign(&Round {
            leader_id,
            leader_url,
            members,
            snapshot: &snapshot,
            config_offset,
            last_completed_generation,
            generation,
            now_ms,
        }),
    }
}

/// [`perform_assignment`] on raw JoinGroup member metadata (`(member id, metadata bytes)`),
/// returning the SyncGroup assignments `(member id, assignment bytes)` encoded for `protocol`
/// (`Eager` = V0, `Compatible` = V1, `Sessioned` = V2, `Static` = V3). `input.members` is
/// ignored: the decoded `members` take its place.
///
/// Errors if a member's metadata cannot be decoded (Java fails the assignment too) or an
/// assignment cannot be encoded in `protocol`'s version.
pub fn assignments_on_wire(
    assignor: &mut dyn ConnectAssignor,
    protocol: ConnectProtocol,
    members: &[(String, Vec<u8>)],
    input: RoundInput<'_>,
    fresh_snapshot: impl FnOnce() -> ConfigSnapshot,
) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
    assign_on_wire(members, protocol, |decoded| {
        perform_assignment(
            assignor,
            RoundInput {
                members: decoded,
                ..input
            },
            fresh_snapshot,
        )
    })
}

/// Decodes JoinGroup member metadata: `(member id, metadata bytes)` to `(member id,
/// WorkerMetadata)`, in the same order.
///
/// Errors on the first member whose metadata does not decode.
pub fn decode_members(
    members: &[(String, Vec<u8>)],
) -> Result<Vec<(String, WorkerMetadata)>, ProtocolError> {
    members
        .iter()
        .map(|(id, bytes)| Ok((id.clone(), WorkerMetadata::decode(bytes)?)))
        .collect()
}

/// Encodes decoded assignments for SyncGroup under `protocol`: member id → assignment to
/// `(member id, assignment bytes)`, in member id order.
///
/// Errors when an assignment cannot be written in `protocol`'s version.
pub fn encode_assignments(
    assignments: &BTreeMap<String, Assignment>,
    protocol: ConnectProtocol,
) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
    assignments
        .iter()
        .map(|(id, a)| Ok((id.clone(), a.encode(protocol)?)))
        .collect()
}

/// An assignor run at the wire edge: decodes the members' metadata, lets `assign` compute the
/// decoded assignments and encodes them under `protocol`.
///
/// Errors if a member's metadata cannot be decoded or an assignment cannot be encoded.
pub fn assign_on_wire(
    members: &[(String, Vec<u8>)],
    protocol: ConnectProtocol,
    assign: impl FnOnce(&[(String, WorkerMetadata)]) -> BTreeMap<String, Assignment>,
) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
    encode_assignments(&assign(&decode_members(members)?), protocol)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(offset: i64) -> ConfigSnapshot {
        ConfigSnapshot {
            offset,
            connectors: BTreeMap::from([("c1".to_string(), 1)]),
        }
    }

    #[test]
    fn leader_up_to_date_uses_max_offset() {
        let ms = [WorkerMetadata::new("u", 5), WorkerMetadata::new("v", 3)];
        let r = check_config_offset(&ms, snap(5), || panic!("no fresh snapshot needed"));
        assert_eq!(
            r,
            ConfigCheck::Ok {
                snapshot: snap(5),
                config_offset: 5
            }
        );
    }

    #[test]
    fn leader_behind_catches_up_with_fresh_snapshot() {
        let ms = [WorkerMetadata::new("u", 3), WorkerMetadata::new("v", 9)];
        let r = check_config_offset(&ms, snap(3), || snap(11));
        assert_eq!(
            r,
            ConfigCheck::Ok {
                snapshot: snap(11),
                config_offset: 11
            }
        );
    }

    #[test]
    fn leader_behind_gives_mismatch() {
        let ms = [WorkerMetadata::new("u", 3), WorkerMetadata::new("v", 9)];
        let r = check_config_offset(&ms, snap(3), || snap(8));
        assert_eq!(r, ConfigCheck::Mismatch { max_offset: 9 });
    }

    #[test]
    fn java_order() {
        assert_eq!(java_string_cmp("a", "b"), Ordering::Less);
        // U+FFFD (one unit 0xFFFD) sorts after U+1F600 (surrogates 0xD83D..) in Java.
        assert_eq!(java_string_cmp("\u{FFFD}", "\u{1F600}"), Ordering::Greater);
        assert_eq!("\u{FFFD}".cmp("\u{1F600}"), Ordering::Less);
    }
}
