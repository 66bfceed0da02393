//! The eager assignor (Java `EagerAssignor`, protocol `default`).
//!
//! After the config-offset check, connectors (sorted) are dealt round-robin over the sorted
//! member ids with a single circular iterator, and then, continuing the same iterator, each
//! connector's tasks in task-number order. Every member receives a full V0 assignment (empty
//! lists if it got nothing), all with the leader's id and URL and the same config offset.

use std::collections::BTreeMap;

use super::{java_string_cmp, ConfigSnapshot};
use crate::protocol::{Assignment, NO_ERROR};

/// Round-robin assignment of `snapshot`'s jobs over `member_ids` (no config check).
///
/// Returns one [`Assignment`] per member id (error 0, `leader_id`, `leader_url`,
/// `config_offset`, full lists, no revocations, delay 0). Member ids are sorted in Java string
/// order; duplicates are collapsed. With no members the map is empty.
pub fn assign_eager<'a>(
    member_ids: impl IntoIterator<Item = &'a str>,
    leader_id: &str,
    leader_url: &str,
    config_offset: i64,
    snapshot: &ConfigSnapshot,
) -> BTreeMap<String, Assignment> {
    let mut members: Vec<&str> = member_ids.into_iter().collect();
    members.sort_by(|a, b| java_string_cmp(a, b));
    members.dedup();
    let mut out: BTreeMap<String, Assignment> = members
        .iter()
        .map(|m| {
            (
                m.to_string(),
                Assignment {
                    error: NO_ERROR,
                    leader: leader_id.to_string(),
                    leader_url: leader_url.to_string(),
                    config_offset,
                    ..Default::default()
                },
            )
        })
        .collect();
    if members.is_empty() {
        return out;
    }
    let mut next = members.iter().cycle();
    let connectors = snapshot.connectors_sorted();
    for c in &connectors {
        let m = next.next().expect("cycle over non-empty list");
        out.get_mut(*m)
            .expect("member")
            .connectors
            .push(c.to_string());
    }
    for c in &connectors {
        for t in snapshot.tasks(c) {
            let m = next.next().expect("cycle over non-empty list");
            out.get_mut(*m).expect("member").tasks.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::{assignments_on_wire, perform_assignment, EagerAssignor, RoundInput};
    use crate::protocol::{
        ConnectProtocol, ConnectorTaskId, ProtocolError, WorkerMetadata, CONFIG_MISMATCH,
    };

    /// One eager round through [`perform_assignment`].
    fn perform_eager_assignment(
        leader_id: &str,
        members: &[(String, WorkerMetadata)],
        leader_snapshot: ConfigSnapshot,
        fresh: impl FnOnce() -> ConfigSnapshot,
    ) -> BTreeMap<String, Assignment> {
        perform_assignment(
            &mut EagerAssignor,
            RoundInput::first(leader_id, members, leader_snapshot),
            fresh,
        )
    }

    /// One eager round on raw metadata through [`assignments_on_wire`].
    fn eager_assignments(
        leader_id: &str,
        members: &[(String, Vec<u8>)],
        leader_snapshot: ConfigSnapshot,
        fresh: impl FnOnce() -> ConfigSnapshot,
    ) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
        assignments_on_wire(
            &mut EagerAssignor,
            ConnectProtocol::Eager,
            members,
            RoundInput::first(leader_id, &[], leader_snapshot),
            fresh,
        )
    }

    const LEADER_URL: &str = "http://leader:8083/";

    fn snapshot(offset: i64, connectors: &[(&str, u32)]) -> ConfigSnapshot {
        ConfigSnapshot {
            offset,
            connectors: connectors
                .iter()
                .map(|(c, n)| (c.to_string(), *n))
                .collect(),
        }
    }

    fn members(leader_offset: i64, member_offset: i64) -> Vec<(String, WorkerMetadata)> {
        vec![
            (
                "leader".to_string(),
                WorkerMetadata::new(LEADER_URL, leader_offset),
            ),
            (
                "member".to_string(),
                WorkerMetadata::new("http://member:8083/", member_offset),
            ),
        ]
    }

    fn jobs(a: &Assignment) -> (Vec<&str>, Vec<String>) {
        (
            a.connectors.iter().map(String::as_str).collect(),
            a.tasks.iter().map(ConnectorTaskId::to_string).collect(),
        )
    }

    #[test]
    fn one_connector_one_task() {
        let snap = snapshot(1, &[("c1", 1)]);
        let out = perform_eager_assignment("leader", &members(1, 1), snap, || unreachable!());
        assert_eq!(jobs(&out["leader"]), (vec!["c1"], vec![]));
        assert_eq!(jobs(&out["member"]), (vec![], vec!["c1-0".to_string()]));
        for a in out.values() {
            assert_eq!(a.leader, "leader");
            assert_eq!(a.leader_url, LEADER_URL);
            assert_eq!(a.config_offset, 1);
            assert!(!a.failed());
        }
    }

    #[test]
    fn two_connectors_three_tasks() {
        let snap = snapshot(1, &[("c2", 1), ("c1", 2)]);
        let out = perform_eager_assignment("leader", &members(1, 1), snap, || unreachable!());
        assert_eq!(
            jobs(&out["leader"]),
            (vec!["c1"], vec!["c1-0".to_string(), "c2-0".to_string()])
        );
        assert_eq!(jobs(&out["member"]), (vec!["c2"], vec!["c1-1".to_string()]));
    }

    #[test]
    fn three_connectors_one_task_each() {
        let snap = snapshot(1, &[("c1", 1), ("c2", 1), ("c3", 1)]);
        let out = perform_eager_assignment("leader", &members(1, 1), snap, || unreachable!());
        assert_eq!(
            jobs(&out["leader"]),
            (vec!["c1", "c3"], vec!["c2-0".to_string()])
        );
        assert_eq!(
            jobs(&out["member"]),
            (vec!["c2"], vec!["c1-0".to_string(), "c3-0".to_string()])
        );
    }

    #[test]
    fn leader_behind_takes_fresh_snapshot() {
        let stale = snapshot(1, &[("c1", 1)]);
        let fresh = snapshot(4, &[("c1", 1), ("c2", 1)]);
        let out = perform_eager_assignment("leader", &members(1, 3), stale, || fresh);
        assert_eq!(out["leader"].config_offset, 4);
        assert_eq!(jobs(&out["leader"]), (vec!["c1"], vec!["c1-0".to_string()]));
        assert_eq!(jobs(&out["member"]), (vec!["c2"], vec!["c2-0".to_string()]));
    }

    #[test]
    fn leader_behind_config_mismatch() {
        let stale = snapshot(1, &[("c1", 1)]);
        let out = perform_eager_assignment("leader", &members(1, 3), stale.clone(), || stale);
        assert_eq!(out.len(), 2);
        for a in out.values() {
            assert_eq!(*a, Assignment::config_mismatch("leader", LEADER_URL, 3));
            assert_eq!(a.error, CONFIG_MISMATCH);
        }
    }

    #[test]
    fn member_without_jobs_still_gets_assignment_and_inconsistent_connector_gets_no_tasks() {
        let snap = snapshot(0, &[("c1", 0)]);
        let ms = vec![
            ("a".to_string(), WorkerMetadata::new("http://a/", 0)),
            ("b".to_string(), WorkerMetadata::new("http://b/", 0)),
            ("c".to_string(), WorkerMetadata::new("http://c/", 0)),
        ];
        let out = perform_eager_assignment("b", &ms, snap, || unreachable!());
        assert_eq!(out.len(), 3);
        assert_eq!(out["a"].connectors, vec!["c1".to_string()]);
        assert!(out["a"].tasks.is_empty());
        assert!(out["b"].connectors.is_empty() && out["c"].connectors.is_empty());
        assert_eq!(out["c"].leader_url, "http://b/");
    }

    #[test]
    fn wire_level_assignments_are_v0_and_decode() {
        let raw: Vec<(String, Vec<u8>)> = members(1, 1)
            .into_iter()
            .map(|(id, m)| {
                let bytes = m.encode(ConnectProtocol::Sessioned).unwrap();
                (id, bytes)
            })
            .collect();
        let out = eager_assignments("leader", &raw, snapshot(1, &[("c1", 1)]), || unreachable!())
            .unwrap();
        assert_eq!(out.len(), 2);
        for (_, bytes) in &out {
            let (v, _) = Assignment::decode_versioned(bytes).unwrap();
            assert_eq!(v, 0);
        }
        assert!(eager_assignments(
            "leader",
            &[("x".into(), vec![0])],
            snapshot(1, &[]),
            || unreachable!()
        )
        .is_err());
    }
}
