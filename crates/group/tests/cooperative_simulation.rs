//! Deterministic simulation of a Connect group driven by the incremental cooperative assignor
//! (no Kafka): members report what they run, the leader computes deltas, members apply
//! revocations and additions. Every round is checked for safety (no job on two members, a job
//! revoked in a round is not handed out in that round, deltas consistent with what members run)
//! and for minimal movement (a revocation never takes a member below its balanced share of that
//! connector or of the connector instances). Once delays and follow-up rounds are done the
//! layout must be complete, balanced in totals and per connector, and stable.
//!
//! Scenario names follow Connect's `IncrementalCooperativeAssignorTest` and
//! `WorkerCoordinatorIncrementalTest`.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tributary_group::assignor::{
    assignments_on_wire, perform_assignment, ConfigSnapshot, ConnectAssignor,
    CooperativeAssignorState, DepartedJob, Job, Round, RoundInput,
};
use tributary_group::protocol::CONFIG_MISMATCH;
use tributary_group::{Assignment, ConnectProtocol, ConnectorTaskId, WorkerMetadata};

const DEFAULT_DELAY: i32 = 300_000;

/// A round's inputs at leader clock 0.
fn input<'a>(
    leader_id: &'a str,
    members: &'a [(String, WorkerMetadata)],
    leader_snapshot: ConfigSnapshot,
    last_completed_generation: i32,
    generation: i32,
) -> RoundInput<'a> {
    RoundInput {
        last_completed_generation,
        generation,
        ..RoundInput::first(leader_id, members, leader_snapshot)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Worker {
    conns: BTreeSet<String>,
    tasks: BTreeSet<ConnectorTaskId>,
}

impl Worker {
    fn is_empty(&self) -> bool {
        self.conns.is_empty() && self.tasks.is_empty()
    }
}

/// Result summary of one round.
#[derive(Debug, Clone, Default)]
struct RoundInfo {
    delay: i32,
    revoked_conns: usize,
    revoked_tasks: usize,
    added_conns: usize,
    added_tasks: usize,
    out: BTreeMap<String, Assignment>,
}

impl RoundInfo {
    fn no_revocations(&self) -> bool {
        self.revoked_conns == 0 && self.revoked_tasks == 0
    }
    fn empty(&self) -> bool {
        self.no_revocations() && self.added_conns == 0 && self.added_tasks == 0
    }
}

struct Sim {
    connectors: BTreeMap<String, u32>,
    workers: BTreeMap<String, Worker>,
    leader: Option<String>,
    state: CooperativeAssignorState,
    max_delay: i32,
    generation: i32,
    last_completed: i32,
    now: i64,
    next_worker: u32,
    rounds: usize,
}

impl Sim {
    fn new(max_delay: i32, connectors: &[(&str, u32)]) -> Self {
        Sim {
            connectors: connectors
                .iter()
                .map(|(c, n)| (c.to_string(), *n))
                .collect(),
            workers: BTreeMap::new(),
            leader: None,
            state: CooperativeAssignorState::new(max_delay),
            max_delay,
            generation: 1000,
            last_completed: 1000,
            now: 1_000_000,
            next_worker: 0,
            rounds: 0,
        }
    }

    /// The Java tests' default: connector1 and connector2 with 4 tasks each.
    fn standard(max_delay: i32) -> Self {
        Sim::new(max_delay, &[("connector1", 4), ("connector2", 4)])
    }

    fn add_worker(&mut self, id: &str) {
        assert!(self
            .workers
            .insert(id.to_string(), Worker::default())
            .is_none());
    }

    fn add_worker_with(&mut self, id: &str, conns: &[&str], tasks: &[(&str, u32)]) {
        let w = Worker {
            conns: conns.iter().map(|c| c.to_string()).collect(),
            tasks: tasks
                .iter()
                .map(|(c, t)| ConnectorTaskId::new(*c, *t))
                .collect(),
        };
        assert!(self.workers.insert(id.to_string(), w).is_none());
    }

    fn fresh_worker(&mut self) -> String {
        self.next_worker += 1;
        let id = format!("gen-worker-{:03}", self.next_worker);
        self.add_worker(&id);
        id
    }

    fn remove_worker(&mut self, id: &str) {
        assert!(self.workers.remove(id).is_some(), "{id} not present");
    }

    fn snapshot(&self) -> ConfigSnapshot {
        ConfigSnapshot {
            offset: 618,
            connectors: self.connectors.clone(),
        }
    }

    fn sleep(&mut self, ms: i64) {
        self.now += ms;
    }

    fn ensure_leader(&mut self) {
        let ok = self
            .leader
            .as_ref()
            .is_some_and(|l| self.workers.contains_key(l));
        if !ok {
            // The broker picks some remaining member; the new leader starts from scratch.
            self.leader = self.workers.keys().next().cloned();
            self.state = CooperativeAssignorState::new(self.max_delay);
        }
    }

    /// The leader restarts: a new process with empty memory (and a new member id would be
    /// equivalent: it comes back as an empty worker).
    fn leader_bounces(&mut self) -> String {
        let old = self.leader.clone().expect("leader");
        self.remove_worker(&old);
        self.leader = None;
        self.ensure_leader();
        self.add_worker(&old);
        old
    }

    fn metadata(&self) -> Vec<(String, WorkerMetadata)> {
        self.workers
            .iter()
            .map(|(id, w)| {
                let mut m = WorkerMetadata::new(format!("http://{id}:8083/"), 618);
                if !w.is_empty() {
                    m.allocation = Some(Assignment {
                        connectors: w.conns.iter().cloned().collect(),
                        tasks: w.tasks.iter().cloned().collect(),
                        ..Default::default()
                    });
                }
                (id.clone(), m)
            })
            .collect()
    }

    fn compute(&mut self, last_completed: i32) -> BTreeMap<String, Assignment> {
        self.ensure_leader();
        self.generation += 1;
        self.rounds += 1;
        let members = self.metadata();
        let leader = self.leader.clone().unwrap();
        let url = format!("http://{leader}:8083/");
        let snapshot = self.snapshot();
        // Through the assignor interface, as the herder's coordinator calls it.
        ConnectAssignor::assign(
            &mut self.state,
            &Round {
                leader_id: &leader,
                leader_url: &url,
                members: &members,
                snapshot: &snapshot,
                config_offset: 618,
                last_completed_generation: last_completed,
                generation: self.generation,
                now_ms: self.now,
            },
        )
    }

    /// A normal rebalance: compute, check, apply.
    fn round(&mut self) -> RoundInfo {
        let out = self.compute(self.last_completed);
        let info = self.check_and_apply(out, true);
        self.last_completed = self.generation;
        info
    }

    /// The computed assignment never reaches the members (they keep running what they ran);
    /// the leader's generation bookkeeping still advances (as in the Java tests).
    fn failed_round(&mut self) -> RoundInfo {
        let out = self.compute(self.last_completed);
        let info = self.check_and_apply(out, false);
        self.last_completed = self.generation;
        info
    }

    /// A round where the leader's last completed generation is older than the generation of
    /// its last computation (its sync failed outside the assignor).
    fn mismatched_round(&mut self) -> RoundInfo {
        let out = self.compute(self.last_completed - 1);
        let info = self.check_and_apply(out, true);
        self.last_completed = self.generation;
        info
    }

    fn check_and_apply(&mut self, out: BTreeMap<String, Assignment>, apply: bool) -> RoundInfo {
        let ids: BTreeSet<&String> = self.workers.keys().collect();
        assert_eq!(
            out.keys().collect::<BTreeSet<_>>(),
            ids,
            "one assignment per member"
        );
        let delays: BTreeSet<i32> = out.values().map(|a| a.delay).collect();
        assert!(delays.len() <= 1, "same delay for everyone: {delays:?}");
        let delay = delays.into_iter().next().unwrap_or(0);
        assert_eq!(delay, self.state.delay_ms());
        assert!(delay >= 0 && delay <= self.max_delay.max(0));

        // Jobs running anywhere before the round, and duplicates.
        let mut conn_count: BTreeMap<&String, usize> = BTreeMap::new();
        let mut task_count: BTreeMap<&ConnectorTaskId, usize> = BTreeMap::new();
        for w in self.workers.values() {
            for c in &w.conns {
                *conn_count.entry(c).or_default() += 1;
            }
            for t in &w.tasks {
                *task_count.entry(t).or_default() += 1;
            }
        }
        let mut info = RoundInfo {
            delay,
            ..Default::default()
        };
        let mut new_conns = BTreeSet::new();
        let mut new_tasks = BTreeSet::new();
        let nw = self.workers.len();
        let n_conns = self.connectors.len();
        for (id, a) in &out {
            assert_eq!(a.error, 0);
            assert_eq!(a.leader, *self.leader.as_ref().unwrap());
            let w = &self.workers[id];
            for c in &a.revoked_connectors {
                assert!(
                    w.conns.contains(c),
                    "{id}: revoked connector {c} not running"
                );
            }
            for t in &a.revoked_tasks {
                assert!(w.tasks.contains(t), "{id}: revoked task {t} not running");
            }
            for c in &a.connectors {
                assert!(self.connectors.contains_key(c), "unconfigured {c} assigned");
                assert!(
                    !conn_count.contains_key(c),
                    "{id}: connector {c} assigned while still running somewhere (or revoked this round)"
                );
                assert!(new_conns.insert(c.clone()), "connector {c} assigned twice");
            }
            for t in &a.tasks {
                assert!(
                    self.connectors
                        .get(&t.connector)
                        .is_some_and(|n| t.task < *n),
                    "unconfigured {t} assigned"
                );
                assert!(
                    !task_count.contains_key(t),
                    "{id}: task {t} assigned while still running somewhere (or revoked this round)"
                );
                assert!(new_tasks.insert(t.clone()), "task {t} assigned twice");
            }
            // Minimal movement: load-balancing revocations (of configured, non-duplicated jobs)
            // never take a member below its floor share.
            let lb_conns = a
                .revoked_connectors
                .iter()
                .filter(|c| self.connectors.contains_key(*c) && conn_count[c] == 1)
                .count();
            if lb_conns > 0 {
                let dup_or_deleted = w
                    .conns
                    .iter()
                    .filter(|c| !self.connectors.contains_key(*c) || conn_count[c] > 1)
                    .count();
                let kept = w.conns.len() - dup_or_deleted - lb_conns;
                assert!(
                    kept >= n_conns / nw,
                    "{id}: connector revocations below the floor ({kept} < {})",
                    n_conns / nw
                );
            }
            let mut lb_by_conn: BTreeMap<&str, usize> = BTreeMap::new();
            for t in &a.revoked_tasks {
                if self
                    .connectors
                    .get(&t.connector)
                    .is_some_and(|n| t.task < *n)
                    && task_count[t] == 1
                {
                    *lb_by_conn.entry(t.connector.as_str()).or_default() += 1;
                }
            }
            for (c, n) in lb_by_conn {
                let held = w
                    .tasks
                    .iter()
                    .filter(|t| t.connector == c && task_count[*t] == 1)
                    .count();
                let floor = self.connectors[c] as usize / nw;
                assert!(
                    held - n >= floor,
                    "{id}: revoked {n} of {c}'s {held} tasks, below the floor {floor}"
                );
            }
            info.revoked_conns += a.revoked_connectors.len();
            info.revoked_tasks += a.revoked_tasks.len();
            info.added_conns += a.connectors.len();
            info.added_tasks += a.tasks.len();
        }
        if apply {
            for (id, a) in &out {
                let w = self.workers.get_mut(id).unwrap();
                for c in &a.revoked_connectors {
                    w.conns.remove(c);
                }
                for t in &a.revoked_tasks {
                    w.tasks.remove(t);
                }
                w.conns.extend(a.connectors.iter().cloned());
                w.tasks.extend(a.tasks.iter().cloned());
            }
            // No job on two members, nothing unconfigured left running (delayed one round at
            // most for duplicates which were revoked from everyone).
            let mut seen_c = BTreeSet::new();
            let mut seen_t = BTreeSet::new();
            for (id, w) in &self.workers {
                for c in &w.conns {
                    assert!(seen_c.insert(c.clone()), "connector {c} on two members");
                    assert!(self.connectors.contains_key(c), "{id} still runs {c}");
                }
                for t in &w.tasks {
                    assert!(seen_t.insert(t.clone()), "task {t} on two members");
                }
                assert!(
                    self.state.owners().contains_key(id),
                    "{id} is missing from the assignor's owners"
                );
            }
            // Liveness: a job left unassigned must come back through a scheduled rebalance
            // (delay) or the follow-up of a revoking round; otherwise nobody would rejoin.
            let all_assigned = self.connectors.keys().all(|c| seen_c.contains(c))
                && self.connectors.iter().all(|(c, n)| {
                    (0..*n).all(|t| seen_t.contains(&ConnectorTaskId::new(c.clone(), t)))
                });
            let revoked_any = out
                .values()
                .any(|a| !a.revoked_connectors.is_empty() || !a.revoked_tasks.is_empty());
            assert!(
                all_assigned || delay > 0 || revoked_any,
                "jobs left unassigned without a delay or a follow-up round"
            );
            for (id, w) in &self.workers {
                let owned = &self.state.owners()[id];
                assert_eq!(
                    owned.connectors.iter().collect::<BTreeSet<_>>(),
                    w.conns.iter().collect::<BTreeSet<_>>(),
                    "owner map of {id}"
                );
                assert_eq!(
                    owned.tasks.iter().collect::<BTreeSet<_>>(),
                    w.tasks.iter().collect::<BTreeSet<_>>(),
                    "owner map of {id}"
                );
            }
        }
        info.out = out;
        info
    }

    /// Runs rounds until no revocation is pending and no delay runs, advancing the clock to
    /// each scheduled rebalance (as the workers' herders would). Returns the rounds.
    fn settle(&mut self) -> Vec<RoundInfo> {
        let mut rounds = Vec::new();
        for _ in 0..40 {
            let info = self.round();
            let done = info.no_revocations() && info.delay == 0;
            let delay = info.delay;
            rounds.push(info);
            if done {
                self.assert_converged();
                let again = self.round();
                assert!(again.empty() && again.delay == 0, "not stable: {again:?}");
                return rounds;
            }
            if delay > 0 {
                self.sleep(delay as i64);
            }
        }
        panic!("did not settle within 40 rounds");
    }

    fn counts(&self) -> (Vec<usize>, Vec<usize>) {
        let mut c: Vec<usize> = self.workers.values().map(|w| w.conns.len()).collect();
        let mut t: Vec<usize> = self.workers.values().map(|w| w.tasks.len()).collect();
        c.sort();
        t.sort();
        (c, t)
    }

    fn assert_counts(&self, conns: &[usize], tasks: &[usize]) {
        let (c, t) = self.counts();
        let mut ec = conns.to_vec();
        let mut et = tasks.to_vec();
        ec.sort();
        et.sort();
        assert_eq!((c, t), (ec, et), "connector and task allocations");
    }

    /// Complete, balanced in totals, balanced per connector.
    fn assert_converged(&self) {
        if self.workers.is_empty() {
            return;
        }
        let mut conns = BTreeSet::new();
        let mut tasks = BTreeSet::new();
        for w in self.workers.values() {
            conns.extend(w.conns.iter().cloned());
            tasks.extend(w.tasks.iter().cloned());
        }
        let want_c: BTreeSet<String> = self.connectors.keys().cloned().collect();
        let want_t: BTreeSet<ConnectorTaskId> = self
            .connectors
            .iter()
            .flat_map(|(c, n)| (0..*n).map(|t| ConnectorTaskId::new(c.clone(), t)))
            .collect();
        assert_eq!(conns, want_c, "every connector assigned");
        assert_eq!(tasks, want_t, "every task assigned");
        let (c, t) = self.counts();
        assert!(c[c.len() - 1] - c[0] <= 1, "connector totals {c:?}");
        assert!(t[t.len() - 1] - t[0] <= 1, "task totals {t:?}");
        for name in self.connectors.keys() {
            let per: Vec<usize> = self
                .workers
                .values()
                .map(|w| w.tasks.iter().filter(|t| &t.connector == name).count())
                .collect();
            let (min, max) = (per.iter().min().unwrap(), per.iter().max().unwrap());
            assert!(max - min <= 1, "tasks of {name} per worker: {per:?}");
        }
    }

    fn jobs_of(&self, id: &str) -> Worker {
        self.workers[id].clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Scenario table (§5.8)
// ---------------------------------------------------------------------------------------------

#[test]
fn first_member_alone_gets_everything() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(r.no_revocations());
    sim.assert_counts(&[2], &[8]);
    sim.assert_converged();
}

#[test]
fn new_member_joins_revoke_then_assign() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.round();
    sim.add_worker("worker2");
    let r2 = sim.round();
    assert_eq!(r2.delay, 0);
    assert_eq!((r2.revoked_conns, r2.revoked_tasks), (1, 4));
    assert_eq!((r2.added_conns, r2.added_tasks), (0, 0));
    sim.assert_counts(&[0, 1], &[0, 4]);
    let r3 = sim.round();
    assert!(r3.no_revocations());
    assert_eq!(r3.delay, 0);
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
    // Everything worker2 got came from worker1 (nothing else moved).
    assert_eq!(sim.jobs_of("worker2").tasks.len(), r2.revoked_tasks);
    let r4 = sim.round();
    assert!(r4.empty() && r4.delay == 0);
}

#[test]
fn wci_third_member_joins_one_task_revoked_from_each() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.add_worker("worker3");
    let r = sim.round();
    for id in ["worker1", "worker2"] {
        assert_eq!(r.out[id].revoked_tasks.len(), 1, "{id}");
        assert!(r.out[id].revoked_connectors.is_empty());
        assert!(r.out[id].tasks.is_empty() && r.out[id].connectors.is_empty());
    }
    assert!(r.out["worker3"].tasks.is_empty());
    sim.round();
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    sim.assert_converged();
}

fn three_connectors(max_delay: i32) -> Sim {
    let mut sim = Sim::new(
        max_delay,
        &[("connector1", 4), ("connector2", 4), ("connector3", 4)],
    );
    sim.add_worker("worker1");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    sim.assert_counts(&[3], &[12]);
    sim.add_worker("worker2");
    sim.round();
    sim.assert_counts(&[0, 2], &[0, 6]);
    sim
}

#[test]
fn consecutive_joins_back_off_between_revoking_rounds() {
    let mut sim = three_connectors(DEFAULT_DELAY);
    // R3: a second revoking round in a row is postponed (backoff 40 ms); revoked jobs placed.
    sim.add_worker("worker3");
    let r3 = sim.round();
    assert_eq!(r3.delay, 40);
    assert!(r3.no_revocations());
    sim.assert_counts(&[0, 1, 2], &[3, 3, 6]);
    // R4 after the delay, worker4 joins: revoke.
    sim.sleep(40);
    sim.add_worker("worker4");
    let r4 = sim.round();
    assert!(!r4.no_revocations());
    sim.assert_counts(&[0, 0, 1, 1], &[0, 3, 3, 3]);
    // R5: worker5 joins at once: no revocations, delay 1600.
    sim.add_worker("worker5");
    let r5 = sim.round();
    assert_eq!(r5.delay, 1600);
    assert!(r5.no_revocations());
    sim.assert_counts(&[0, 0, 1, 1, 1], &[1, 2, 3, 3, 3]);
    // R6 after the delay, worker6 joins: revoke, delay 0.
    sim.sleep(1600);
    sim.add_worker("worker6");
    let r6 = sim.round();
    assert_eq!(r6.delay, 0);
    assert!(!r6.no_revocations());
    sim.assert_counts(&[0, 0, 0, 1, 1, 1], &[0, 1, 2, 2, 2, 2]);
    // R7: follow-up, balanced.
    let r7 = sim.round();
    assert!(r7.no_revocations());
    sim.assert_counts(&[0, 0, 0, 1, 1, 1], &[2, 2, 2, 2, 2, 2]);
    sim.assert_converged();
    sim.settle();
}

#[test]
fn consecutive_joins_max_delay_zero_revokes_at_once() {
    let mut sim = three_connectors(0);
    sim.add_worker("worker3");
    let r3 = sim.round();
    assert_eq!(r3.delay, 0);
    assert!(!r3.no_revocations());
    sim.assert_counts(&[0, 1, 1], &[3, 3, 4]);
    let r4 = sim.round();
    assert!(r4.no_revocations());
    sim.assert_counts(&[1, 1, 1], &[4, 4, 4]);
    sim.assert_converged();
}

#[test]
fn consecutive_joins_max_delay_one() {
    let mut sim = three_connectors(1);
    sim.add_worker("worker3");
    let r3 = sim.round();
    assert_eq!(r3.delay, 1);
    assert!(r3.no_revocations());
    sim.assert_counts(&[0, 1, 2], &[3, 3, 6]);
    sim.settle();
}

#[test]
fn worker_joins_while_backoff_delay_runs() {
    let mut sim = three_connectors(DEFAULT_DELAY);
    sim.add_worker("worker3");
    let r3 = sim.round();
    assert!(r3.delay > 0 && r3.no_revocations());
    sim.assert_counts(&[0, 1, 2], &[3, 3, 6]);
    sim.sleep(r3.delay as i64 / 2);
    sim.add_worker("worker4");
    let r4 = sim.round();
    assert_eq!(r4.delay, 20, "time left is re-sent");
    assert!(r4.no_revocations());
    sim.assert_counts(&[0, 0, 1, 2], &[0, 3, 3, 6]);
    sim.sleep(r4.delay as i64);
    sim.add_worker("worker5");
    let r5 = sim.round();
    assert_eq!(r5.delay, 0);
    sim.assert_counts(&[0, 0, 0, 1, 1], &[0, 0, 2, 3, 3]);
    let r6 = sim.round();
    assert_eq!(r6.delay, 0);
    assert!(r6.no_revocations());
    sim.assert_counts(&[0, 0, 1, 1, 1], &[2, 2, 2, 3, 3]);
    sim.assert_converged();
}

#[test]
fn follower_leaves_for_good() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.remove_worker("worker2");
    let r2 = sim.round();
    assert_eq!(r2.delay, DEFAULT_DELAY);
    assert!(r2.empty());
    sim.sleep(DEFAULT_DELAY as i64 / 2);
    let r3 = sim.round();
    assert_eq!(r3.delay, DEFAULT_DELAY / 2);
    assert!(r3.empty());
    sim.sleep(DEFAULT_DELAY as i64 / 2 + 1);
    let r4 = sim.round();
    assert_eq!(r4.delay, 0);
    assert!(r4.no_revocations());
    sim.assert_counts(&[2], &[8]);
    sim.assert_converged();
}

#[test]
fn wci_follower_leaves_three_workers() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    // worker3 holds 0 connectors and 2 tasks.
    let leaving = sim
        .workers
        .iter()
        .find(|(_, w)| w.conns.is_empty())
        .map(|(id, _)| id.clone())
        .unwrap();
    assert_ne!(Some(&leaving), sim.leader.as_ref());
    sim.remove_worker(&leaving);
    let r = sim.round();
    assert_eq!(r.delay, DEFAULT_DELAY);
    assert!(r.empty());
    sim.sleep(DEFAULT_DELAY as i64 / 2);
    assert_eq!(sim.round().delay, DEFAULT_DELAY / 2);
    sim.sleep(DEFAULT_DELAY as i64 / 2);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(r.no_revocations());
    for a in r.out.values() {
        assert_eq!(a.tasks.len(), 1, "each survivor gets one task");
    }
    sim.assert_converged();
}

#[test]
fn follower_bounces_within_the_delay() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    let before = sim.jobs_of("worker2");
    sim.remove_worker("worker2");
    assert_eq!(sim.round().delay, DEFAULT_DELAY);
    sim.sleep(DEFAULT_DELAY as i64 / 2);
    assert_eq!(sim.round().delay, DEFAULT_DELAY / 2);
    sim.sleep(DEFAULT_DELAY as i64 / 4);
    sim.add_worker("worker2");
    let r = sim.round();
    assert_eq!(r.delay, DEFAULT_DELAY / 4);
    assert!(r.empty(), "nothing assigned while the delay runs");
    sim.sleep(DEFAULT_DELAY as i64 / 4);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(r.no_revocations());
    sim.assert_counts(&[1, 1], &[4, 4]);
    // The returning worker gets exactly its old jobs back.
    assert_eq!(sim.jobs_of("worker2"), before);
    sim.assert_converged();
}

#[test]
fn wci_bounce_with_three_workers() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    let before = sim.jobs_of("worker3");
    sim.remove_worker("worker3");
    assert_eq!(sim.round().delay, DEFAULT_DELAY);
    sim.sleep(1000);
    sim.add_worker("worker3");
    let r = sim.round();
    assert_eq!(r.delay, DEFAULT_DELAY - 1000);
    assert!(r.out["worker3"].tasks.is_empty() && r.empty());
    sim.sleep(DEFAULT_DELAY as i64);
    let r = sim.round();
    assert_eq!(r.out["worker3"].tasks.len(), before.tasks.len());
    assert_eq!(sim.jobs_of("worker3"), before);
    assert!(r.no_revocations());
    sim.assert_converged();
}

#[test]
fn lost_jobs_spread_over_two_empty_candidates() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    let lost = sim.jobs_of("worker2");
    sim.remove_worker("worker2");
    sim.round();
    sim.add_worker("worker2");
    sim.add_worker("worker4");
    let r = sim.round();
    assert!(r.empty());
    assert_eq!(sim.state.candidate_workers(), ["worker2", "worker4"]);
    sim.sleep(DEFAULT_DELAY as i64);
    let r = sim.round();
    let got2 = r.out["worker2"].tasks.len() + r.out["worker2"].connectors.len();
    let got4 = r.out["worker4"].tasks.len() + r.out["worker4"].connectors.len();
    assert_eq!(got2 + got4, lost.tasks.len() + lost.conns.len());
    assert!(got2 > 0 && got4 > 0, "spread over both candidates");
    assert!(r.out["worker1"].tasks.is_empty() && r.out["worker3"].tasks.is_empty());
    assert!(sim.state.candidate_workers().is_empty());
    assert_eq!(sim.state.scheduled_rebalance_ms(), 0);
    sim.settle();
}

#[test]
fn returning_worker_leaves_again_before_expiry() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.remove_worker("worker2");
    sim.round();
    sim.add_worker("worker2");
    sim.round();
    sim.remove_worker("worker2");
    let r = sim.round();
    assert!(r.delay > 0 && r.empty());
    sim.sleep(DEFAULT_DELAY as i64);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(r.no_revocations());
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
}

#[test]
fn max_delay_zero_follower_leaves() {
    let mut sim = Sim::standard(0);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    sim.remove_worker("worker2");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    sim.assert_counts(&[2], &[8]);
    sim.assert_converged();
}

#[test]
fn leader_leaves_for_good() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    assert_eq!(sim.leader.as_deref(), Some("worker1"));
    sim.remove_worker("worker1");
    let r = sim.round();
    assert_eq!(sim.leader.as_deref(), Some("worker2"));
    assert_eq!(r.delay, 0, "a new leader reassigns at once");
    assert!(r.no_revocations());
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
    let r = sim.round();
    assert!(r.empty() && r.delay == 0);
}

#[test]
fn leader_bounces_and_returns_as_follower() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.remove_worker("worker1");
    sim.round();
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.add_worker("worker1");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    sim.assert_counts(&[0, 1, 1], &[0, 3, 3]);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(r.no_revocations());
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    sim.assert_converged();
}

#[test]
fn leader_restarts_in_place() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    let old = sim.leader_bounces();
    assert_ne!(sim.leader.as_deref(), Some(old.as_str()));
    let rounds = sim.settle();
    assert!(
        rounds.iter().all(|r| r.delay == 0),
        "no delay after a leader change"
    );
}

#[test]
fn first_assignment_never_delivered() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    let r1 = sim.failed_round();
    assert_eq!(r1.delay, 0);
    sim.assert_counts(&[0, 0], &[0, 0]);
    let r2 = sim.round();
    assert_eq!(r2.delay, 0, "same members: lost jobs re-assigned at once");
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
}

fn later_revoking_round_not_delivered(mismatch: bool) {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    sim.add_worker("worker3");
    let r = sim.failed_round();
    assert!(!r.no_revocations());
    sim.assert_counts(&[0, 1, 1], &[0, 4, 4]);
    let r = if mismatch {
        sim.mismatched_round()
    } else {
        sim.round()
    };
    assert!(r.delay > 0);
    assert!(r.no_revocations());
    sim.assert_counts(&[0, 1, 1], &[0, 4, 4]);
    sim.sleep(r.delay as i64);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    sim.assert_counts(&[0, 1, 1], &[0, 3, 3]);
    let r = sim.round();
    assert!(r.no_revocations());
    sim.assert_counts(&[0, 1, 1], &[2, 3, 3]);
    sim.assert_converged();
}

#[test]
fn later_revoking_assignment_not_delivered() {
    later_revoking_round_not_delivered(false);
}

#[test]
fn later_revoking_assignment_not_delivered_generation_mismatch() {
    later_revoking_round_not_delivered(true);
}

#[test]
fn connector_deleted() {
    let mut sim = Sim::new(
        DEFAULT_DELAY,
        &[("connector1", 4), ("connector2", 4), ("connector3", 4)],
    );
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.round();
    sim.assert_counts(&[1, 2], &[6, 6]);
    sim.assert_converged();
    sim.connectors.remove("connector3");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!((r.revoked_conns, r.revoked_tasks), (1, 4));
    assert_eq!((r.added_conns, r.added_tasks), (0, 0));
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
    // Deleting does not count as a revoking round: a join right after revokes at once.
    sim.add_worker("worker3");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(!r.no_revocations());
    sim.settle();
}

#[test]
fn duplicated_jobs_revoked_from_every_holder() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.round();
    sim.add_worker_with(
        "worker2",
        &["connector1"],
        &[
            ("connector1", 0),
            ("connector1", 1),
            ("connector1", 2),
            ("connector1", 3),
        ],
    );
    let r = sim.round();
    assert_eq!(r.delay, 0);
    for id in ["worker1", "worker2"] {
        assert!(r.out[id]
            .revoked_connectors
            .contains(&"connector1".to_string()));
        assert_eq!(
            r.out[id]
                .revoked_tasks
                .iter()
                .filter(|t| t.connector == "connector1")
                .count(),
            4
        );
    }
    // Java: c(0,1) t(0,4). Per-connector balance also revokes 2 of connector2's tasks now
    // (they must end up split 2/2), so Tributary reaches t(0,2) here.
    sim.assert_counts(&[0, 1], &[0, 2]);
    let r = sim.round();
    assert!(r.no_revocations());
    sim.assert_counts(&[1, 1], &[4, 4]);
    sim.assert_converged();
    assert!(sim.round().empty());
}

#[test]
fn duplicated_jobs_of_a_deleted_connector() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.round();
    sim.connectors.remove("connector1");
    sim.add_worker_with(
        "worker2",
        &["connector1"],
        &[
            ("connector1", 0),
            ("connector1", 1),
            ("connector1", 2),
            ("connector1", 3),
        ],
    );
    let r = sim.round();
    assert_eq!(r.delay, 0);
    sim.assert_counts(&[0, 1], &[0, 2]);
    let r = sim.round();
    assert!(r.no_revocations());
    sim.assert_counts(&[0, 1], &[2, 2]);
    sim.assert_converged();
    assert!(sim.round().empty());
}

// ---------------------------------------------------------------------------------------------
// Further scripted sequences
// ---------------------------------------------------------------------------------------------

#[test]
fn config_mismatch_when_leader_is_behind() {
    let mut state = CooperativeAssignorState::new(DEFAULT_DELAY);
    let members = vec![
        ("a".to_string(), WorkerMetadata::new("http://a/", 5)),
        ("b".to_string(), WorkerMetadata::new("http://b/", 9)),
    ];
    let stale = ConfigSnapshot {
        offset: 5,
        connectors: BTreeMap::from([("c".to_string(), 2)]),
    };
    let out = perform_assignment(
        &mut state,
        input("a", &members, stale.clone(), 1, 2),
        || stale.clone(),
    );
    assert_eq!(out.len(), 2);
    for a in out.values() {
        assert_eq!(a.error, CONFIG_MISMATCH);
        assert_eq!(a.config_offset, 9);
        assert_eq!(a.leader_url, "http://a/");
    }
    assert_eq!(state.previous_generation(), -1, "state untouched");
    // Fresh snapshot caught up: normal assignment at the fresh offset.
    let fresh = ConfigSnapshot {
        offset: 10,
        connectors: stale.connectors.clone(),
    };
    let out = perform_assignment(&mut state, input("a", &members, stale, -1, 2), || fresh);
    assert!(out.values().all(|a| a.error == 0 && a.config_offset == 10));
    assert_eq!(out.values().map(|a| a.tasks.len()).sum::<usize>(), 2);
}

#[test]
fn wire_level_assignments_encode_with_the_selected_version() {
    let mut state = CooperativeAssignorState::new(DEFAULT_DELAY);
    let raw: Vec<(String, Vec<u8>)> = ["m1", "m2"]
        .iter()
        .map(|id| {
            let m = WorkerMetadata::new(format!("http://{id}/"), 3);
            (
                id.to_string(),
                m.encode(ConnectProtocol::Sessioned).unwrap(),
            )
        })
        .collect();
    let snap = ConfigSnapshot {
        offset: 3,
        connectors: BTreeMap::from([("c1".to_string(), 3)]),
    };
    for (protocol, version) in [
        (ConnectProtocol::Compatible, 1),
        (ConnectProtocol::Sessioned, 2),
    ] {
        let out = assignments_on_wire(
            &mut CooperativeAssignorState::new(DEFAULT_DELAY),
            protocol,
            &raw,
            input("m1", &[], snap.clone(), -1, 1),
            || unreachable!(),
        )
        .unwrap();
        assert_eq!(out.len(), 2);
        let mut tasks = 0;
        for (_, bytes) in &out {
            let (v, a) = Assignment::decode_versioned(bytes).unwrap();
            assert_eq!(v, version);
            assert_eq!(a.leader, "m1");
            tasks += a.tasks.len();
        }
        assert_eq!(tasks, 3);
    }
    assert!(assignments_on_wire(
        &mut state,
        ConnectProtocol::Sessioned,
        &[("x".into(), vec![0])],
        input("m1", &[], snap, -1, 1),
        || unreachable!(),
    )
    .is_err());
}

#[test]
fn worker_returns_after_the_delay_expired() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.round();
    sim.remove_worker("worker3");
    sim.round();
    sim.sleep(DEFAULT_DELAY as i64);
    let r = sim.round();
    assert!(r.no_revocations(), "lost jobs only go to survivors");
    sim.assert_converged();
    sim.add_worker("worker3");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    // Only what worker3 will get moves.
    let moved = r.revoked_tasks;
    sim.settle();
    assert_eq!(sim.jobs_of("worker3").tasks.len(), moved);
}

#[test]
fn connector_added_and_task_count_changes() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.settle();
    sim.connectors.insert("connector3".into(), 5);
    let r = sim.round();
    assert!(r.no_revocations(), "new jobs fill the gaps");
    assert_eq!((r.added_conns, r.added_tasks), (1, 5));
    sim.assert_converged();
    // Grow a connector: new tasks are created and placed.
    sim.connectors.insert("connector1".into(), 9);
    sim.settle();
    // Shrink it: the removed tasks are revoked from their holders.
    sim.connectors.insert("connector1".into(), 2);
    let r = sim.round();
    assert!(r.revoked_tasks >= 7);
    sim.settle();
}

#[test]
fn per_connector_balance_beyond_java() {
    // Totals are balanced (2/2) but each connector sits on one worker: a new leader (who has
    // no memory) must still spread each connector, swapping one task each way.
    let mut sim = Sim::new(DEFAULT_DELAY, &[("a", 2), ("b", 2)]);
    sim.add_worker_with("w1", &["a"], &[("a", 0), ("a", 1)]);
    sim.add_worker_with("w2", &["b"], &[("b", 0), ("b", 1)]);
    let r = sim.round();
    assert_eq!(r.revoked_tasks, 2);
    assert_eq!(r.revoked_conns, 0);
    let rounds = sim.settle();
    assert_eq!(rounds.iter().map(|r| r.revoked_tasks).sum::<usize>(), 0);
    sim.assert_converged();
}

#[test]
fn many_workers_join_one_by_one_then_leave() {
    let mut sim = Sim::new(
        DEFAULT_DELAY,
        &[("a", 10), ("b", 7), ("c", 3), ("d", 1), ("e", 0)],
    );
    sim.add_worker("w00");
    sim.settle();
    for _ in 0..8 {
        let id = sim.fresh_worker();
        sim.settle();
        assert!(!sim.jobs_of(&id).tasks.is_empty());
    }
    for _ in 0..5 {
        let id = sim.workers.keys().nth(1).unwrap().clone();
        sim.remove_worker(&id);
        sim.settle();
    }
}

#[test]
fn join_to_a_balanced_cluster_moves_only_what_the_joiner_gets() {
    let names: Vec<String> = (0..20).map(|i| format!("conn-{i:02}")).collect();
    let spec: Vec<(&str, u32)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), (i % 7) as u32 + 1))
        .collect();
    let mut sim = Sim::new(DEFAULT_DELAY, &spec);
    for i in 0..4 {
        sim.add_worker(&format!("w{i}"));
    }
    sim.settle();
    for _ in 0..4 {
        let id = sim.fresh_worker();
        let r = sim.round();
        let revoked = r.revoked_tasks + r.revoked_conns;
        sim.settle();
        let got = sim.jobs_of(&id);
        let got = got.tasks.len() + got.conns.len();
        // Nearly everything that moves goes to the joiner. The extras layout is a heuristic,
        // not an exact min-cost solution: a job may occasionally be re-homed on an old member.
        assert!(
            got <= revoked && revoked <= got + 1 + got / 8,
            "moved {revoked}, joiner got {got}"
        );
        sim.sleep(100_000);
    }
}

// ---------------------------------------------------------------------------------------------
// Property-based: random event sequences
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Event {
    Join,
    Leave(usize),
    Bounce(usize),
    LeaderLeave,
    LeaderBounce,
    AddConnector(u32),
    DeleteConnector(usize),
    SetTasks(usize, u32),
    Sleep(i64),
    FailedSync,
    Settle,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => Just(Event::Join),
        2 => (0usize..16).prop_map(Event::Leave),
        2 => (0usize..16).prop_map(Event::Bounce),
        1 => Just(Event::LeaderLeave),
        1 => Just(Event::LeaderBounce),
        3 => (0u32..9).prop_map(Event::AddConnector),
        1 => (0usize..16).prop_map(Event::DeleteConnector),
        2 => ((0usize..16), (0u32..9)).prop_map(|(c, n)| Event::SetTasks(c, n)),
        3 => prop_oneof![Just(10i64), Just(1000), Just(150_000), Just(400_000)].prop_map(Event::Sleep),
        1 => Just(Event::FailedSync),
        2 => Just(Event::Settle),
    ]
}

fn run_events(max_delay: i32, events: &[Event]) {
    let mut sim = Sim::new(max_delay, &[("seed-a", 3), ("seed-b", 5)]);
    sim.fresh_worker();
    sim.round();
    let mut next_conn = 0;
    for e in events {
        match e {
            Event::Join => {
                if sim.workers.len() < 12 {
                    sim.fresh_worker();
                }
            }
            Event::Leave(i) => {
                if sim.workers.len() > 1 {
                    let id = sim
                        .workers
                        .keys()
                        .nth(i % sim.workers.len())
                        .unwrap()
                        .clone();
                    sim.remove_worker(&id);
                }
            }
            Event::Bounce(i) => {
                let id = sim
                    .workers
                    .keys()
                    .nth(i % sim.workers.len())
                    .unwrap()
                    .clone();
                sim.remove_worker(&id);
                if sim.workers.is_empty() {
                    sim.fresh_worker();
                } else {
                    sim.round();
                }
                sim.add_worker(&id);
                if sim.leader.as_deref() == Some(id.as_str()) {
                    sim.leader = None;
                }
            }
            Event::LeaderLeave => {
                if sim.workers.len() > 1 {
                    let id = sim.leader.clone().unwrap();
                    sim.remove_worker(&id);
                }
            }
            Event::LeaderBounce => {
                sim.leader_bounces();
            }
            Event::AddConnector(n) => {
                next_conn += 1;
                sim.connectors.insert(format!("conn-{next_conn:03}"), *n);
            }
            Event::DeleteConnector(i) => {
                if !sim.connectors.is_empty() {
                    let c = sim
                        .connectors
                        .keys()
                        .nth(i % sim.connectors.len())
                        .unwrap()
                        .clone();
                    sim.connectors.remove(&c);
                }
            }
            Event::SetTasks(i, n) => {
                if !sim.connectors.is_empty() {
                    let c = sim
                        .connectors
                        .keys()
                        .nth(i % sim.connectors.len())
                        .unwrap()
                        .clone();
                    sim.connectors.insert(c, *n);
                }
            }
            Event::Sleep(ms) => sim.sleep(*ms),
            Event::FailedSync => {
                sim.failed_round();
            }
            Event::Settle => {
                sim.settle();
                continue;
            }
        }
        sim.round();
    }
    // Once the delay and the follow-up rounds are done: complete, balanced, stable.
    sim.settle();
}

// ---------------------------------------------------------------------------------------------
// Clean departures (Tributary's rule; Java keeps every lost job for the delay)
// ---------------------------------------------------------------------------------------------

impl Sim {
    /// The jobs of departed members as the leader lists them before the next round.
    fn departed(&self) -> Vec<DepartedJob> {
        self.state
            .departed_jobs(&self.metadata(), self.last_completed)
    }

    /// Releases the departed jobs `pick` selects (the leader found their owner's UNASSIGNED).
    fn release(&mut self, pick: impl Fn(&DepartedJob) -> bool) -> Vec<Job> {
        let jobs: Vec<Job> = self
            .departed()
            .iter()
            .filter(|d| pick(d))
            .map(|d| d.job.clone())
            .collect();
        self.state.release(jobs.clone());
        jobs
    }
}

fn jobs(w: &Worker) -> BTreeSet<Job> {
    w.conns
        .iter()
        .map(|c| Job::Connector(c.clone()))
        .chain(w.tasks.iter().map(|t| Job::Task(t.clone())))
        .collect()
}

#[test]
fn a_clean_departure_moves_its_jobs_at_once() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.settle();
    let leaving = jobs(&sim.jobs_of("worker3"));
    assert!(!leaving.is_empty());
    let generation = sim.generation;
    sim.remove_worker("worker3");
    let departed = sim.departed();
    assert_eq!(
        departed
            .iter()
            .map(|d| d.job.clone())
            .collect::<BTreeSet<_>>(),
        leaving
    );
    for d in &departed {
        assert_eq!(d.owner_url, "http://worker3:8083/");
        assert_eq!(d.generation, generation, "the last round worker3 was in");
    }
    sim.release(|_| true);
    let r = sim.round();
    assert_eq!(r.delay, 0, "nothing waits for a worker that said goodbye");
    assert!(r.no_revocations());
    assert_eq!(r.added_conns + r.added_tasks, leaving.len());
    assert!(sim.state.lost_jobs().is_empty());
    sim.assert_converged();
    assert_eq!(sim.settle().len(), 1, "already settled");
}

#[test]
fn unreleased_jobs_wait_and_a_late_release_moves_them_while_the_delay_runs() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    for w in ["worker1", "worker2", "worker3"] {
        sim.add_worker(w);
    }
    sim.settle();
    let leaving: Vec<Job> = jobs(&sim.jobs_of("worker2")).into_iter().collect();
    assert!(leaving.len() >= 3, "{leaving:?}");
    sim.remove_worker("worker2");
    // Only the first job has its owner's UNASSIGNED yet.
    let first = leaving[0].clone();
    sim.release(|d| d.job == first);
    let r = sim.round();
    assert_eq!(r.delay, DEFAULT_DELAY, "the other jobs wait for worker2");
    assert_eq!(r.added_conns + r.added_tasks, 1);
    assert_eq!(sim.state.lost_jobs().len(), leaving.len() - 1);
    // A later round still knows who owned the waiting jobs, and in which generation.
    sim.sleep(1000);
    let waiting = sim.departed();
    assert_eq!(waiting.len(), leaving.len() - 1);
    assert!(waiting
        .iter()
        .all(|d| d.owner_url == "http://worker2:8083/"));
    let second = leaving[1].clone();
    sim.release(|d| d.job == second);
    let r = sim.round();
    assert_eq!(
        r.delay,
        DEFAULT_DELAY - 1000,
        "the delay goes on for the rest"
    );
    assert_eq!(r.added_conns + r.added_tasks, 1);
    // Once every job is released, nothing is left to wait for.
    sim.release(|_| true);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert!(sim.state.lost_jobs().is_empty());
    sim.settle();
}

#[test]
fn a_departure_without_jobs_after_a_revoking_round_starts_no_delay() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.settle();
    // worker3 joins: the first round revokes for it; it leaves before the follow-up round.
    sim.add_worker("worker3");
    let r = sim.round();
    assert!(!r.no_revocations());
    assert!(sim.jobs_of("worker3").is_empty());
    sim.remove_worker("worker3");
    assert!(sim.departed().is_empty(), "it held nothing");
    let r = sim.round();
    assert_eq!(r.delay, 0, "there is nothing of worker3's to wait for");
    sim.assert_converged();
}

/// A departed job names the round that gave it to its owner as well as the owner's last round:
/// a worker stopping while a round is under way reports its jobs UNASSIGNED with the generation
/// it last learnt, which is evidence for every job it held since then.
#[test]
fn a_departed_job_names_the_round_that_gave_it_to_its_owner() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.settle();
    let early: BTreeSet<Job> = jobs(&sim.jobs_of("worker2"));
    let early_generation = sim.generation;
    assert!(!early.is_empty());
    // worker3 joins: jobs move to it over two rounds; worker2 keeps the rest.
    sim.add_worker("worker3");
    sim.settle();
    let kept: BTreeSet<Job> = jobs(&sim.jobs_of("worker2"));
    assert!(kept.is_subset(&early), "worker2 only gave jobs away");
    // More rounds in which nothing moves.
    sim.round();
    sim.round();
    let last = sim.generation;
    let given_to_3: BTreeSet<Job> = jobs(&sim.jobs_of("worker3"));
    sim.remove_worker("worker2");
    sim.remove_worker("worker3");
    let departed = sim.departed();
    assert_eq!(departed.len(), kept.len() + given_to_3.len());
    for d in &departed {
        assert_eq!(d.generation, last);
        if kept.contains(&d.job) {
            assert!(d.held_since <= early_generation, "{d:?}");
        } else {
            assert!(given_to_3.contains(&d.job));
            assert!(
                d.held_since > early_generation && d.held_since < last,
                "{d:?}"
            );
        }
    }
    // The next round keeps them waiting; a later one still names the same rounds.
    let r = sim.round();
    assert_eq!(r.delay, DEFAULT_DELAY);
    let waiting = sim.departed();
    assert_eq!(waiting.len(), departed.len());
    for d in &waiting {
        let before = departed.iter().find(|b| b.job == d.job).unwrap();
        assert_eq!(
            (d.generation, d.held_since),
            (before.generation, before.held_since)
        );
    }
}

#[test]
fn no_departed_jobs_from_stale_memory() {
    let mut sim = Sim::standard(DEFAULT_DELAY);
    sim.add_worker("worker1");
    sim.add_worker("worker2");
    sim.settle();
    sim.remove_worker("worker2");
    assert!(!sim.departed().is_empty());
    assert!(sim
        .state
        .departed_jobs(&sim.metadata(), sim.last_completed - 1)
        .is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_keep_the_invariants(
        events in proptest::collection::vec(event(), 1..40),
        delay in prop_oneof![Just(0i32), Just(1), Just(1000), Just(300_000)],
    ) {
        run_events(delay, &events);
    }

    #[test]
    fn fresh_and_join_assignments_are_balanced_and_minimal(
        tasks in proptest::collection::vec(0u32..12, 1..12),
        workers in 1usize..9,
        joins in 1usize..4,
    ) {
        let names: Vec<String> = (0..tasks.len()).map(|i| format!("c{i:02}")).collect();
        let spec: Vec<(&str, u32)> = names.iter().map(String::as_str).zip(tasks.iter().copied()).collect();
        let mut sim = Sim::new(DEFAULT_DELAY, &spec);
        for _ in 0..workers {
            sim.fresh_worker();
        }
        let first = sim.round();
        prop_assert!(first.no_revocations());
        sim.assert_converged();
        for _ in 0..joins {
            let id = sim.fresh_worker();
            let r = sim.round();
            let moved = r.revoked_tasks;
            sim.settle();
            let got = sim.jobs_of(&id).tasks.len();
            // Everything the joiner gets was revoked in the join round. Moving *only* the
            // joiner's share is not always possible under per-connector balance (old members
            // may have to trade extras); the per-round floor checks bound the rest.
            prop_assert!(got <= moved, "moved {}, joiner got {}", moved, got);
            sim.sleep(400_000);
        }
    }
}
