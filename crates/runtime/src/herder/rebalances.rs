//! The timeline of recent rebalances (Tributary; `GET /tributary/rebalances` and the live view
//! at `/ui`): one [`RebalanceRecord`] per completed round of this worker, the last
//! [`RebalanceLog::CAPACITY`] kept in memory. Connect only counts rebalances
//! (`connect-worker-rebalance-metrics`); this says who joined or left, what moved and how long
//! it took.
//!
//! The leader sees every member and every job's owner, so its records carry `members`,
//! `joined`, `left` and `moved`; a follower only knows its own assignment, and leaves those
//! fields out. [`diff_round`] is the pure part: it compares two rounds' members and owners.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;

/// Connectors and tasks (as `connector-N`) of one side of a round on this worker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Jobs {
    pub connectors: Vec<String>,
    pub tasks: Vec<String>,
}

impl Jobs {
    /// Whether there is no job.
    pub fn is_empty(&self) -> bool {
        self.connectors.is_empty() && self.tasks.is_empty()
    }
}

/// A job whose owner changed in a round (leader only): `{"job","from","to"}`, owners by
/// advertised REST URL, `null` for a job that had none (new) or has none (waits for a departed
/// worker, or was deleted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// A connector name, or a task as `connector-N`.
    pub job: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// One completed rebalance as this worker saw it:
/// `{"generation","protocol","leader","leader_url","is_leader","completed_ms","duration_ms",
/// "assigned":{"connectors","tasks"},"revoked":{…},"members"?,"joined"?,"left"?,"moved"?}`.
/// `completed_ms` is ms since the epoch; `duration_ms` runs from the start of the round (the
/// JoinGroup, after an eager worker stopped its jobs) to the end of applying it (jobs stopped
/// and started), ms. `assigned` and `revoked` are this worker's: under eager the jobs started
/// and stopped, under the cooperative protocols the assignment's delta.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RebalanceRecord {
    pub generation: i32,
    /// The protocol the group selected (`eager`, `compatible`, `sessioned`, `static`).
    pub protocol: String,
    /// The leader's member id.
    pub leader: String,
    /// The leader's advertised REST URL.
    pub leader_url: String,
    /// Whether this worker led the round.
    pub is_leader: bool,
    pub completed_ms: i64,
    pub duration_ms: u64,
    pub assigned: Jobs,
    pub revoked: Jobs,
    /// Every member's advertised URL, sorted (leader only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<String>>,
    /// Members not in this worker's previous round as leader (leader only; every member
    /// when this worker did not lead the previous round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joined: Option<Vec<String>>,
    /// Members of this worker's previous round as leader that are gone (leader only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<Vec<String>>,
    /// Jobs whose owner changed since this worker's previous round as leader (leader only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<Vec<Moved>>,
}

/// What the leader knew after a round: members' URLs and each job's owner URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderView {
    pub members: BTreeSet<String>,
    /// Job (connector name or `connector-N`) -> owner URL.
    pub owners: BTreeMap<String, String>,
}

/// `(joined, left, moved)` between the leader's previous view (`None`: it did not lead the
/// previous round, so every member counts as joined and every job as moved from nobody) and
/// the current one. Pure.
pub fn diff_round(
    previous: Option<&LeaderView>,
    current: &LeaderView,
) -> (Vec<String>, Vec<String>, Vec<Moved>) {
    let empty = LeaderView::default();
    let prev = previous.unwrap_or(&empty);
    let joined = current.members.difference(&prev.members).cloned().collect();
    let left = prev.members.difference(&current.members).cloned().collect();
    let jobs: BTreeSet<&String> = prev.owners.keys().chain(current.owners.keys()).collect();
    let moved = jobs
        .into_iter()
        .filter_map(|job| {
            let from = prev.owners.get(job);
            let to = current.owners.get(job);
            (from != to).then(|| Moved {
                job: job.clone(),
                from: from.cloned(),
                to: to.cloned(),
            })
        })
        .collect();
    (joined, left, moved)
}

/// The last [`RebalanceLog::CAPACITY`] rounds of this worker, oldest first.
#[derive(Debug, Default)]
pub struct RebalanceLog {
    records: VecDeque<RebalanceRecord>,
    /// The leader's view after the last round this worker led (`None` once it followed).
    last_led: Option<LeaderView>,
}

impl RebalanceLog {
    /// How many rounds are kept.
    pub const CAPACITY: usize = 50;

    /// Adds a round; `leader_view` is `Some` when this worker led it, and fills the record's
    /// `members`, `joined`, `left` and `moved`.
    pub fn push(&mut self, mut record: RebalanceRecord, leader_view: Option<LeaderView>) {
        match leader_view {
            Some(view) => {
                let (joined, left, moved) = diff_round(self.last_led.as_ref(), &view);
                record.members = Some(view.members.iter().cloned().collect());
                record.joined = Some(joined);
                record.left = Some(left);
                record.moved = Some(moved);
                self.last_led = Some(view);
            }
            None => self.last_led = None,
        }
        if self.records.len() == Self::CAPACITY {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    /// The kept rounds, oldest first.
    pub fn records(&self) -> Vec<RebalanceRecord> {
        self.records.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(members: &[&str], owners: &[(&str, &str)]) -> LeaderView {
        LeaderView {
            members: members.iter().map(|m| m.to_string()).collect(),
            owners: owners
                .iter()
                .map(|(j, o)| (j.to_string(), o.to_string()))
                .collect(),
        }
    }

    fn record(generation: i32) -> RebalanceRecord {
        RebalanceRecord {
            generation,
            protocol: "sessioned".into(),
            leader: "m1".into(),
            leader_url: "http://a".into(),
            is_leader: true,
            completed_ms: 0,
            duration_ms: 5,
            assigned: Jobs::default(),
            revoked: Jobs::default(),
            members: None,
            joined: None,
            left: None,
            moved: None,
        }
    }

    #[test]
    fn a_departed_worker_is_left_and_its_jobs_moved() {
        let before = view(&["a", "b"], &[("c", "a"), ("c-0", "b"), ("c-1", "a")]);
        let after = view(&["a", "c"], &[("c", "a"), ("c-0", "c"), ("c-1", "a")]);
        let (joined, left, moved) = diff_round(Some(&before), &after);
        assert_eq!(joined, vec!["c".to_string()]);
        assert_eq!(left, vec!["b".to_string()]);
        assert_eq!(
            moved,
            vec![Moved {
                job: "c-0".into(),
                from: Some("b".into()),
                to: Some("c".into())
            }]
        );
    }

    #[test]
    fn the_log_keeps_the_last_rounds_and_forgets_the_leader_view_when_following() {
        let mut log = RebalanceLog::default();
        log.push(record(1), Some(view(&["a"], &[("c", "a")])));
        let first = &log.records()[0];
        assert_eq!(first.joined.as_deref(), Some(&["a".to_string()][..]));
        assert_eq!(first.moved.as_ref().unwrap()[0].from, None);
        log.push(record(2), None);
        assert_eq!(log.records()[1].members, None);
        // Leading again after following: the diff starts from nothing.
        log.push(record(3), Some(view(&["a"], &[("c", "a")])));
        assert_eq!(log.records()[2].joined.as_ref().unwrap().len(), 1);
        for g in 4..(RebalanceLog::CAPACITY as i32 + 10) {
            log.push(record(g), None);
        }
        let kept = log.records();
        assert_eq!(kept.len(), RebalanceLog::CAPACITY);
        assert_eq!(
            kept.last().unwrap().generation,
            RebalanceLog::CAPACITY as i32 + 9
        );
    }
}
