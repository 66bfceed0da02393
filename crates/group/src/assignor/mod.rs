//! Leader-side assignment computations, as pure functions over decoded member metadata.
//!
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
    assign_cooperative, cooperative_assignments, perform_cooperative_assignment,
    CooperativeAssignorState, CooperativeRound, DepartedJob, MemberJobs,
    DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS,
};
pub use eager::{assign_eager, eager_assignments, perform_eager_assignment};
// `checked_round` is defined below.
pub use static_assignor::{
    assign_static, perform_static_assignment, static_assignments, static_claims_in_effect,
    StaticAssignorState, StaticMemberReport, UnassignedReason,
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

/// One leader round of an incremental protocol: the config-offset check (CONFIG_MISMATCH for
/// every member, `assign` not called, when the leader is behind), then `assign` on the checked
/// snapshot. The leader's URL comes from its own metadata entry (empty if absent). `fresh_snapshot`
/// is called at most once, only when the leader is behind; `assign` is e.g.
/// [`assign_cooperative`] or [`assign_static`] over the leader's state.
#[allow(clippy::too_many_arguments)]
pub fn checked_round(
    leader_id: &str,
    members: &[(String, WorkerMetadata)],
    leader_snapshot: ConfigSnapshot,
    fresh_snapshot: impl FnOnce() -> ConfigSnapshot,
    last_completed_generation: i32,
    generation: i32,
    now_ms: i64,
    assign: impl FnOnce(&cooperative::CooperativeRound<'_>) -> BTreeMap<String, Assignment>,
) -> BTreeMap<String, Assignment> {
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
        } => assign(&cooperative::CooperativeRound {
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
