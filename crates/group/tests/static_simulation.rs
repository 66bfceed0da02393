//! Deterministic simulation of a Connect group running the `static` protocol (no Kafka):
//! static workers (claims set, possibly empty) and wildcard workers report what they run and
//! their claims, the leader computes V3 deltas with the static assignor, members apply
//! revocations and additions.
//!
//! Checked after every round: one assignment per member with one common delay; revocations
//! only of jobs the member runs; a job is only started where nobody ran it before the round
//! (revoke in one round, assign in the next) and never on two members; static workers only run
//! jobs they claim; wildcard workers never get a job claimed by a static worker the leader
//! knows; claimed jobs whose claimants are all absent stay unassigned; anything assignable but
//! unassigned is covered by a delay or a follow-up round; the leader's owner map and
//! unassigned list match what members run. After settling: every assignable job runs, the
//! wildcard workers are balanced (totals and per connector) and the layout is stable.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tributary_group::assignor::{
    assignments_on_wire, perform_assignment, static_claims_in_effect, ConfigSnapshot,
    ConnectAssignor, Job, Round, RoundInput, StaticAssignorState, UnassignedReason,
};
use tributary_group::protocol::CONFIG_MISMATCH;
use tributary_group::{Assignment, ConnectProtocol, ConnectorTaskId, WorkerMetadata};

const DELAY: i32 = 300_000;

/// A worker's static claims (`None`, `None` = wildcard).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Spec {
    connectors: Option<Vec<String>>,
    tasks: Option<Vec<ConnectorTaskId>>,
}

impl Spec {
    fn wildcard() -> Self {
        Spec::default()
    }

    /// A static worker claiming `claims`: connector names, or task ids `<connector>-<n>`.
    fn claims(claims: &[&str]) -> Self {
        let mut s = Spec {
            connectors: Some(vec![]),
            tasks: Some(vec![]),
        };
        for c in claims {
            match c.parse::<ConnectorTaskId>() {
                Ok(t) => s.tasks.as_mut().unwrap().push(t),
                Err(_) => s.connectors.as_mut().unwrap().push(c.to_string()),
            }
        }
        s
    }

    fn is_static(&self) -> bool {
        self.connectors.is_some() || self.tasks.is_some()
    }

    fn claims_job(&self, j: &Job) -> bool {
        match j {
            Job::Connector(c) => self.connectors.iter().flatten().any(|x| x == c),
            Job::Task(t) => self.tasks.iter().flatten().any(|x| x == t),
        }
    }
}

#[derive(Debug, Clone)]
struct Member {
    name: String,
    /// Start order (the first started member still present leads).
    inc: u32,
    spec: Spec,
    jobs: BTreeSet<Job>,
}

#[derive(Debug, Clone, Default)]
struct RoundInfo {
    delay: i32,
    revoked: usize,
    added: usize,
    out: BTreeMap<String, Assignment>,
}

impl RoundInfo {
    fn empty(&self) -> bool {
        self.revoked == 0 && self.added == 0
    }
}

struct Sim {
    connectors: BTreeMap<String, u32>,
    /// member id -> member.
    members: BTreeMap<String, Member>,
    leader: Option<String>,
    state: StaticAssignorState,
    /// Claims of every static worker (by name) seen by the current leader.
    known: BTreeMap<String, Spec>,
    /// The `static_claims` of each member's last assignment (member id -> claims).
    received: BTreeMap<String, Vec<tributary_group::StaticClaims>>,
    max_delay: i32,
    generation: i32,
    last_completed: i32,
    now: i64,
    incarnation: u32,
}

fn url(name: &str) -> String {
    format!("http://{name}:8083/")
}

fn conn(c: &str) -> Job {
    Job::Connector(c.to_string())
}

fn task(c: &str, n: u32) -> Job {
    Job::Task(ConnectorTaskId::new(c, n))
}

impl Sim {
    fn new(max_delay: i32, connectors: &[(&str, u32)]) -> Self {
        Sim {
            connectors: connectors
                .iter()
                .map(|(c, n)| (c.to_string(), *n))
                .collect(),
            members: BTreeMap::new(),
            leader: None,
            state: StaticAssignorState::new(max_delay),
            known: BTreeMap::new(),
            received: BTreeMap::new(),
            max_delay,
            generation: 10,
            last_completed: 10,
            now: 1_000_000,
            incarnation: 0,
        }
    }

    /// Starts worker `name` (a new process: new member id, nothing running); returns its id.
    fn join(&mut self, name: &str, spec: Spec) -> String {
        assert!(
            self.member_of(name).is_none(),
            "{name} is already in the group"
        );
        self.incarnation += 1;
        let id = format!("{name}-{:03}", self.incarnation);
        self.members.insert(
            id.clone(),
            Member {
                name: name.to_string(),
                inc: self.incarnation,
                spec,
                jobs: BTreeSet::new(),
            },
        );
        id
    }

    /// Joins with jobs already running (e.g. after the group ran `sessioned`).
    fn join_running(&mut self, name: &str, spec: Spec, jobs: &[Job]) -> String {
        let id = self.join(name, spec);
        self.members.get_mut(&id).unwrap().jobs = jobs.iter().cloned().collect();
        id
    }

    fn member_of(&self, name: &str) -> Option<String> {
        self.members
            .iter()
            .find(|(_, m)| m.name == name)
            .map(|(id, _)| id.clone())
    }

    fn leave(&mut self, name: &str) {
        let id = self.member_of(name).expect("present");
        self.members.remove(&id);
    }

    fn jobs(&self, name: &str) -> BTreeSet<Job> {
        self.members[&self.member_of(name).expect("present")]
            .jobs
            .clone()
    }

    fn sleep(&mut self, ms: i64) {
        self.now += ms;
    }

    fn all_jobs(&self) -> Vec<Job> {
        let mut v: Vec<Job> = self.connectors.keys().map(|c| conn(c)).collect();
        for (c, n) in &self.connectors {
            v.extend((0..*n).map(|t| task(c, t)));
        }
        v
    }

    fn ensure_leader(&mut self) {
        let ok = self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.contains_key(l));
        if !ok {
            // The oldest member leads; a new leader starts from scratch.
            self.leader = self
                .members
                .iter()
                .min_by_key(|(_, m)| m.inc)
                .map(|(id, _)| id.clone());
            // A new leader starts from scratch, except for the claims its last assignment
            // carried (none if it never received one).
            self.state = StaticAssignorState::new(self.max_delay);
            self.known.clear();
            let leader = self.leader.clone().unwrap_or_default();
            if let Some(claims) = self.received.get(&leader) {
                self.state.remember_claims(claims);
                for c in claims {
                    let name = c
                        .worker
                        .trim_start_matches("http://")
                        .trim_end_matches(":8083/");
                    self.known.insert(
                        name.to_string(),
                        Spec {
                            connectors: Some(c.connectors.clone()),
                            tasks: Some(c.tasks.clone()),
                        },
                    );
                }
            }
        }
    }

    fn metadata(&self) -> Vec<(String, WorkerMetadata)> {
        self.members
            .iter()
            .map(|(id, m)| {
                let mut md = WorkerMetadata::new(url(&m.name), 77);
                md.static_connectors = m.spec.connectors.clone();
                md.static_tasks = m.spec.tasks.clone();
                if !m.jobs.is_empty() {
                    let mut a = Assignment::default();
                    for j in &m.jobs {
                        match j {
                            Job::Connector(c) => a.connectors.push(c.clone()),
                            Job::Task(t) => a.tasks.push(t.clone()),
                        }
                    }
                    md.allocation = Some(a);
                }
                (id.clone(), md)
            })
            .collect()
    }

    fn snapshot(&self) -> ConfigSnapshot {
        ConfigSnapshot {
            offset: 77,
            connectors: self.connectors.clone(),
        }
    }

    /// A rebalance: compute, check the invariants, apply.
    fn round(&mut self) -> RoundInfo {
        if self.members.is_empty() {
            return RoundInfo::default();
        }
        self.ensure_leader();
        self.generation += 1;
        for m in self.members.values() {
            if m.spec.is_static() {
                self.known.insert(m.name.clone(), m.spec.clone());
            } else {
                self.known.remove(&m.name);
            }
        }
        let members = self.metadata();
        let leader = self.leader.clone().unwrap();
        let leader_url = url(&self.members[&leader].name);
        let snapshot = self.snapshot();
        // Through the assignor interface, as the herder's coordinator calls it.
        let out = ConnectAssignor::assign(
            &mut self.state,
            &Round {
                leader_id: &leader,
                leader_url: &leader_url,
                members: &members,
                snapshot: &snapshot,
                config_offset: 77,
                last_completed_generation: self.last_completed,
                generation: self.generation,
                now_ms: self.now,
            },
        );
        self.received = out
            .iter()
            .map(|(id, a)| (id.clone(), a.static_claims.clone()))
            .collect();
        let info = self.check_and_apply(out);
        self.last_completed = self.generation;
        info
    }

    fn exists(&self, j: &Job) -> bool {
        match j {
            Job::Connector(c) => self.connectors.contains_key(c),
            Job::Task(t) => self
                .connectors
                .get(&t.connector)
                .is_some_and(|n| t.task < *n),
        }
    }

    /// Names of the known static workers claiming `j`.
    fn claimants(&self, j: &Job) -> Vec<&str> {
        self.known
            .iter()
            .filter(|(_, s)| s.claims_job(j))
            .map(|(n, _)| n.as_str())
            .collect()
    }

    fn present(&self, name: &str) -> bool {
        self.members.values().any(|m| m.name == name)
    }

    /// Whether `j` can run now: claimed with a present claimant, or unclaimed with a wildcard
    /// worker present.
    fn assignable(&self, j: &Job) -> bool {
        let cs = self.claimants(j);
        if cs.is_empty() {
            self.members.values().any(|m| !m.spec.is_static())
        } else {
            cs.iter().any(|c| self.present(c))
        }
    }

    fn check_and_apply(&mut self, out: BTreeMap<String, Assignment>) -> RoundInfo {
        assert_eq!(
            out.keys().collect::<BTreeSet<_>>(),
            self.members.keys().collect::<BTreeSet<_>>(),
            "one assignment per member"
        );
        let delays: BTreeSet<i32> = out.values().map(|a| a.delay).collect();
        assert_eq!(delays.len(), 1, "same delay for everyone: {delays:?}");
        let delay = *delays.iter().next().unwrap();
        assert_eq!(delay, self.state.delay_ms());
        assert!((0..=self.max_delay.max(0)).contains(&delay));

        let running: BTreeSet<Job> = self
            .members
            .values()
            .flat_map(|m| m.jobs.iter().cloned())
            .collect();
        let mut info = RoundInfo {
            delay,
            ..Default::default()
        };
        let mut started = BTreeSet::new();
        for (id, a) in &out {
            assert_eq!(a.error, 0);
            assert_eq!(a.config_offset, 77);
            assert_eq!(a.leader, *self.leader.as_ref().unwrap());
            let m = &self.members[id];
            let revoked: Vec<Job> = a
                .revoked_connectors
                .iter()
                .map(|c| conn(c))
                .chain(a.revoked_tasks.iter().map(|t| Job::Task(t.clone())))
                .collect();
            let added: Vec<Job> = a
                .connectors
                .iter()
                .map(|c| conn(c))
                .chain(a.tasks.iter().map(|t| Job::Task(t.clone())))
                .collect();
            for j in &revoked {
                assert!(m.jobs.contains(j), "{id}: revoked {j} it does not run");
            }
            for j in &added {
                assert!(self.exists(j), "{id}: unconfigured {j} assigned");
                assert!(
                    !running.contains(j),
                    "{id}: {j} assigned while running somewhere before the round"
                );
                assert!(started.insert(j.clone()), "{j} assigned twice");
                if m.spec.is_static() {
                    assert!(m.spec.claims_job(j), "static {id} got unclaimed {j}");
                } else {
                    assert!(
                        self.claimants(j).is_empty(),
                        "wildcard {id} got {j}, claimed by {:?}",
                        self.claimants(j)
                    );
                }
            }
            info.revoked += revoked.len();
            info.added += added.len();
        }
        // Apply.
        for (id, a) in &out {
            let m = self.members.get_mut(id).unwrap();
            for c in &a.revoked_connectors {
                m.jobs.remove(&conn(c));
            }
            for t in &a.revoked_tasks {
                m.jobs.remove(&Job::Task(t.clone()));
            }
            m.jobs.extend(a.connectors.iter().map(|c| conn(c)));
            m.jobs.extend(a.tasks.iter().map(|t| Job::Task(t.clone())));
        }
        let mut seen = BTreeSet::new();
        for (id, m) in &self.members {
            for j in &m.jobs {
                assert!(seen.insert(j.clone()), "{j} on two members");
                assert!(self.exists(j), "{id} still runs unconfigured {j}");
                if m.spec.is_static() {
                    assert!(m.spec.claims_job(j), "static {id} runs unclaimed {j}");
                } else {
                    assert!(
                        self.claimants(j).is_empty(),
                        "wildcard {id} runs claimed {j}"
                    );
                }
            }
        }
        let mut unassigned = BTreeSet::new();
        let mut stuck = Vec::new();
        for j in self.all_jobs() {
            if seen.contains(&j) {
                continue;
            }
            unassigned.insert(j.clone());
            let cs = self.claimants(&j);
            if !cs.is_empty() && cs.iter().all(|c| !self.present(c)) {
                assert_eq!(
                    self.state.unassigned().get(&j),
                    Some(&UnassignedReason::NoPresentClaimant),
                    "{j}"
                );
            }
            if self.assignable(&j) {
                stuck.push(j);
            }
        }
        assert!(
            stuck.is_empty() || delay > 0 || info.revoked > 0,
            "assignable jobs {stuck:?} left without a delay or a follow-up round"
        );
        assert_eq!(
            self.state
                .unassigned()
                .keys()
                .cloned()
                .collect::<BTreeSet<_>>(),
            unassigned,
            "unassigned report"
        );
        for (id, m) in &self.members {
            let owned = &self.state.owners()[id];
            let mut o: BTreeSet<Job> = owned.connectors.iter().map(|c| conn(c)).collect();
            o.extend(owned.tasks.iter().map(|t| Job::Task(t.clone())));
            assert_eq!(o, m.jobs, "owner map of {id}");
            let r = &self.state.member_reports()[id];
            assert_eq!(r.is_static, m.spec.is_static());
        }
        info.out = out;
        info
    }

    /// Rounds until nothing is revoked and no delay runs, sleeping through delays; then checks
    /// convergence and stability.
    fn settle(&mut self) -> Vec<RoundInfo> {
        let mut rounds = Vec::new();
        for _ in 0..40 {
            let info = self.round();
            let done = info.revoked == 0 && info.delay == 0;
            let delay = info.delay;
            rounds.push(info);
            if done {
                self.assert_converged();
                let again = self.round();
                assert!(again.empty() && again.delay == 0, "not stable: {again:?}");
                return rounds;
            }
            self.sleep(delay as i64);
        }
        panic!("did not settle within 40 rounds");
    }

    fn assert_converged(&self) {
        if self.members.is_empty() {
            return;
        }
        for j in self.all_jobs() {
            let runs = self.members.values().any(|m| m.jobs.contains(&j));
            assert_eq!(runs, self.assignable(&j), "{j}: runs {runs}");
        }
        // Wildcard balance: connector totals, task totals and each connector's tasks.
        let wild: Vec<&Member> = self
            .members
            .values()
            .filter(|m| !m.spec.is_static())
            .collect();
        if wild.is_empty() {
            return;
        }
        let spread = |f: &dyn Fn(&Member) -> usize| {
            let v: Vec<usize> = wild.iter().map(|m| f(m)).collect();
            v.iter().max().unwrap() - v.iter().min().unwrap()
        };
        let is_conn = |j: &Job| matches!(j, Job::Connector(_));
        assert!(
            spread(&|m| m.jobs.iter().filter(|j| is_conn(j)).count()) <= 1,
            "wildcard connector totals"
        );
        assert!(
            spread(&|m| m.jobs.iter().filter(|j| !is_conn(j)).count()) <= 1,
            "wildcard task totals"
        );
        for c in self.connectors.keys() {
            let of_c = |m: &Member| {
                m.jobs
                    .iter()
                    .filter(|j| matches!(j, Job::Task(t) if &t.connector == c))
                    .count()
            };
            assert!(spread(&of_c) <= 1, "wildcard tasks of {c}");
        }
    }
}

fn set(jobs: &[Job]) -> BTreeSet<Job> {
    jobs.iter().cloned().collect()
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

#[test]
fn claims_are_honoured_and_the_rest_goes_to_wildcards() {
    let mut sim = Sim::new(DELAY, &[("a", 2), ("b", 3)]);
    sim.join("s-a", Spec::claims(&["a", "a-0", "a-1"]));
    sim.join("s-b0", Spec::claims(&["b-0"]));
    sim.join("w1", Spec::wildcard());
    sim.join("w2", Spec::wildcard());
    let r = sim.round();
    assert_eq!((r.revoked, r.delay), (0, 0));
    assert_eq!(
        sim.jobs("s-a"),
        set(&[conn("a"), task("a", 0), task("a", 1)])
    );
    assert_eq!(sim.jobs("s-b0"), set(&[task("b", 0)]));
    let wild: BTreeSet<Job> = sim.jobs("w1").union(&sim.jobs("w2")).cloned().collect();
    assert_eq!(wild, set(&[conn("b"), task("b", 1), task("b", 2)]));
    sim.settle();
}

#[test]
fn claims_in_effect_only_under_the_static_protocol() {
    let spare = WorkerMetadata {
        static_tasks: Some(vec![]),
        ..WorkerMetadata::new("u", 0)
    };
    assert!(static_claims_in_effect(ConnectProtocol::Static, &spare));
    assert!(!static_claims_in_effect(ConnectProtocol::Sessioned, &spare));
    assert!(!static_claims_in_effect(
        ConnectProtocol::Static,
        &WorkerMetadata::new("u", 0)
    ));
}

#[test]
fn static_worker_joining_takes_its_job_from_a_wildcard_in_two_rounds() {
    let mut sim = Sim::new(DELAY, &[("a", 4)]);
    sim.join("w1", Spec::wildcard());
    sim.join("w2", Spec::wildcard());
    sim.settle();
    let holder = if sim.jobs("w1").contains(&task("a", 2)) {
        "w1"
    } else {
        "w2"
    };
    sim.join("s", Spec::claims(&["a-2"]));
    let r1 = sim.round();
    assert_eq!(r1.revoked, 1, "revoked from the wildcard first");
    assert!(!sim.jobs(holder).contains(&task("a", 2)));
    assert!(sim.jobs("s").is_empty());
    assert_eq!(
        sim.state.unassigned().get(&task("a", 2)),
        Some(&UnassignedReason::Moving),
        "revoked this round, placed next round"
    );
    let r2 = sim.round();
    assert_eq!(r2.added, 1);
    assert_eq!(sim.jobs("s"), set(&[task("a", 2)]));
    sim.settle();
}

#[test]
fn static_owner_leaving_without_standby_leaves_the_job_unassigned() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    sim.join("w", Spec::wildcard());
    sim.join("s", Spec::claims(&["a-0"]));
    sim.settle();
    sim.leave("s");
    let r = sim.round();
    assert_eq!(r.delay, 0, "nobody could take it: no delay needed");
    assert_eq!(
        sim.state.unassigned().get(&task("a", 0)),
        Some(&UnassignedReason::NoPresentClaimant)
    );
    sim.settle();
    sim.sleep(10 * DELAY as i64);
    sim.settle();
    assert!(!sim.jobs("w").contains(&task("a", 0)));
    // It comes back: the job is its again.
    sim.join("s", Spec::claims(&["a-0"]));
    sim.round();
    assert_eq!(sim.jobs("s"), set(&[task("a", 0)]));
}

#[test]
fn owner_bouncing_within_the_delay_gets_its_job_back() {
    let mut sim = Sim::new(DELAY, &[("a", 1)]);
    sim.join("w", Spec::wildcard());
    sim.join("s1", Spec::claims(&["a-0"]));
    let standby_id = sim.join("s2", Spec::claims(&["a-0"]));
    sim.settle();
    assert_eq!(
        sim.jobs("s1"),
        set(&[task("a", 0)]),
        "lowest id wins the tie"
    );
    assert_eq!(
        sim.state.member_reports()[&standby_id].standby,
        vec![task("a", 0)]
    );
    sim.leave("s1");
    let r = sim.round();
    assert_eq!(r.delay, DELAY);
    assert!(sim.jobs("s2").is_empty(), "the standby waits");
    assert_eq!(
        sim.state.unassigned().get(&task("a", 0)),
        Some(&UnassignedReason::AwaitingOwner)
    );
    sim.sleep(100_000);
    let r = sim.round();
    assert_eq!(r.delay, DELAY - 100_000, "the same deadline");
    sim.sleep(100_000);
    // The owner restarts (new member id, same URL) before the deadline.
    sim.join("s1", Spec::claims(&["a-0"]));
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!(sim.jobs("s1"), set(&[task("a", 0)]));
    assert!(sim.jobs("s2").is_empty());
    sim.settle();
}

#[test]
fn standby_takes_over_once_the_delay_expires() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    sim.join("w", Spec::wildcard());
    sim.join("s1", Spec::claims(&["a-0", "a-1"]));
    sim.settle();
    sim.join("s2", Spec::claims(&["a-1"]));
    sim.settle();
    assert_eq!(sim.jobs("s1"), set(&[task("a", 0), task("a", 1)]));
    assert!(sim.jobs("s2").is_empty(), "the current owner keeps a-1");
    sim.leave("s1");
    let r = sim.round();
    assert_eq!(r.delay, DELAY);
    assert!(sim.jobs("s2").is_empty());
    assert!(sim.jobs("w").contains(&conn("a")));
    sim.sleep(DELAY as i64);
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!(sim.jobs("s2"), set(&[task("a", 1)]));
    // a-0 has no present claimant: stays unassigned, never on the wildcard.
    assert_eq!(
        sim.state.unassigned().get(&task("a", 0)),
        Some(&UnassignedReason::NoPresentClaimant)
    );
    // The old owner returns late: the standby keeps a-1, the owner gets a-0 back.
    sim.join("s1", Spec::claims(&["a-0", "a-1"]));
    sim.settle();
    assert_eq!(sim.jobs("s2"), set(&[task("a", 1)]));
    assert_eq!(sim.jobs("s1"), set(&[task("a", 0)]));
}

#[test]
fn zero_max_delay_hands_lost_jobs_to_a_standby_at_once() {
    let mut sim = Sim::new(0, &[("a", 1)]);
    sim.join("s1", Spec::claims(&["a-0"]));
    sim.settle();
    sim.join("s2", Spec::claims(&["a-0"]));
    sim.settle();
    assert_eq!(
        sim.jobs("s1"),
        set(&[task("a", 0)]),
        "the current owner keeps it"
    );
    sim.leave("s1");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!(sim.jobs("s2"), set(&[task("a", 0)]));
}

#[test]
fn connector_created_before_its_static_workers_join() {
    let mut sim = Sim::new(DELAY, &[("a", 3)]);
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert_eq!(sim.jobs("w").len(), 4);
    for (name, claim) in [("s0", "a-0"), ("s1", "a-1"), ("s2", "a-2"), ("sc", "a")] {
        sim.join(name, Spec::claims(&[claim]));
    }
    sim.settle();
    assert!(sim.jobs("w").is_empty());
    assert_eq!(sim.jobs("s1"), set(&[task("a", 1)]));
    assert_eq!(sim.jobs("sc"), set(&[conn("a")]));
}

#[test]
fn connector_created_after_its_static_workers_join() {
    let mut sim = Sim::new(DELAY, &[]);
    let s0 = sim.join("s0", Spec::claims(&["new-conn", "new-conn-0"]));
    sim.join("s1", Spec::claims(&["new-conn-1"]));
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert_eq!(
        sim.state.member_reports()[&s0].pending_claims,
        vec![conn("new-conn"), task("new-conn", 0)]
    );
    sim.connectors.insert("new-conn".into(), 0);
    let r = sim.round();
    assert_eq!(r.revoked, 0);
    assert_eq!(sim.jobs("s0"), set(&[conn("new-conn")]));
    sim.connectors.insert("new-conn".into(), 3);
    let r = sim.round();
    assert_eq!(r.revoked, 0);
    assert_eq!(
        sim.jobs("s0"),
        set(&[conn("new-conn"), task("new-conn", 0)])
    );
    assert_eq!(sim.jobs("s1"), set(&[task("new-conn", 1)]));
    assert_eq!(sim.jobs("w"), set(&[task("new-conn", 2)]));
    assert!(sim.state.member_reports()[&s0].pending_claims.is_empty());
    sim.settle();
}

#[test]
fn claims_on_tasks_that_do_not_exist_yet_take_effect_when_they_appear() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    sim.join("s3", Spec::claims(&["a-3"]));
    sim.join("w1", Spec::wildcard());
    sim.join("w2", Spec::wildcard());
    sim.settle();
    assert!(sim.jobs("s3").is_empty(), "provisioned ahead: idle");
    sim.connectors.insert("a".into(), 5);
    sim.settle();
    assert_eq!(sim.jobs("s3"), set(&[task("a", 3)]));
    // The task count shrinks: the claim is pending again and the task stops.
    sim.connectors.insert("a".into(), 3);
    let r = sim.round();
    assert!(r.revoked >= 1);
    assert!(sim.jobs("s3").is_empty());
    sim.settle();
    // Deleting the connector stops everything.
    sim.connectors.remove("a");
    sim.settle();
    assert!(sim.members.values().all(|m| m.jobs.is_empty()));
}

#[test]
fn duplicate_claims_give_one_owner_and_one_standby() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    let s1 = sim.join("s1", Spec::claims(&["a-0"]));
    let s2 = sim.join("s2", Spec::claims(&["a-0", "a-1"]));
    sim.round();
    // a-0 (first in order) goes to the lowest id among equals; a-1 only to s2.
    assert_eq!(sim.jobs("s1"), set(&[task("a", 0)]));
    assert_eq!(sim.jobs("s2"), set(&[task("a", 1)]));
    assert!(sim.state.member_reports()[&s1].standby.is_empty());
    assert_eq!(sim.state.member_reports()[&s2].standby, vec![task("a", 0)]);
    // A third claimant of both becomes a standby: current owners keep their jobs.
    sim.join("s3", Spec::claims(&["a-0", "a-1"]));
    let r = sim.round();
    assert!(r.empty(), "current owners keep their jobs");
    sim.settle();
}

#[test]
fn fewest_jobs_then_lowest_id_choose_between_claimants() {
    let mut sim = Sim::new(DELAY, &[("a", 3)]);
    sim.join("b-worker", Spec::claims(&["a-0", "a-1", "a-2"]));
    sim.join("a-worker", Spec::claims(&["a-0", "a-1", "a-2"]));
    sim.round();
    // Alternating by job count, ties to the lower id.
    assert_eq!(sim.jobs("a-worker"), set(&[task("a", 0), task("a", 2)]));
    assert_eq!(sim.jobs("b-worker"), set(&[task("a", 1)]));
}

#[test]
fn duplicated_job_is_revoked_from_both_then_placed() {
    let mut sim = Sim::new(DELAY, &[("a", 1)]);
    sim.join_running("s1", Spec::claims(&["a-0"]), &[task("a", 0)]);
    sim.join_running("s2", Spec::claims(&["a-0"]), &[task("a", 0)]);
    let r = sim.round();
    assert_eq!(r.revoked, 2);
    let r = sim.round();
    assert_eq!(r.added, 1);
    sim.settle();
}

#[test]
fn mixed_static_and_wildcard_workers_balance_the_wildcards() {
    let mut sim = Sim::new(DELAY, &[("a", 7), ("b", 5), ("c", 2)]);
    for w in ["w1", "w2", "w3"] {
        sim.join(w, Spec::wildcard());
    }
    sim.join("s1", Spec::claims(&["a", "a-0", "a-1", "a-2"]));
    sim.join("s2", Spec::claims(&["b-4"]));
    sim.settle();
    sim.join("w4", Spec::wildcard());
    sim.settle();
    sim.leave("w2");
    sim.settle();
    sim.leave("s1");
    sim.settle();
    // The leader remembers s1's claims: its jobs stay unassigned.
    for j in [conn("a"), task("a", 0), task("a", 2)] {
        assert!(sim.members.values().all(|m| !m.jobs.contains(&j)), "{j}");
    }
}

#[test]
fn empty_claims_run_nothing() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    let spare = sim.join(
        "spare",
        Spec {
            connectors: Some(vec![]),
            tasks: None,
        },
    );
    sim.settle();
    assert!(sim.jobs("spare").is_empty());
    assert_eq!(
        sim.state.unassigned().get(&task("a", 0)),
        Some(&UnassignedReason::NoWildcardWorker)
    );
    assert!(sim.state.member_reports()[&spare].is_static);
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert!(sim.jobs("spare").is_empty());
    assert_eq!(sim.jobs("w").len(), 3);
}

#[test]
fn unsatisfiable_claims_leave_the_worker_idle() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    let s = sim.join("s", Spec::claims(&["nope", "nope-4", "a-9"]));
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert!(sim.jobs("s").is_empty());
    assert_eq!(sim.jobs("w").len(), 3);
    assert_eq!(
        sim.state.member_reports()[&s].pending_claims,
        vec![conn("nope"), task("a", 9), task("nope", 4)]
    );
}

#[test]
fn switch_from_sessioned_revokes_misplaced_jobs_first() {
    // The group ran `sessioned` (claims ignored) and now every member speaks `static`.
    let mut sim = Sim::new(DELAY, &[("a", 2), ("b", 2)]);
    sim.join_running(
        "s1",
        Spec::claims(&["b-1"]),
        &[conn("a"), task("a", 0), task("b", 0)],
    );
    sim.join_running(
        "w1",
        Spec::wildcard(),
        &[conn("b"), task("a", 1), task("b", 1)],
    );
    let r = sim.round();
    assert_eq!(r.revoked, 4, "s1 gives up a, a-0, b-0; w1 gives up b-1");
    let r = sim.round();
    assert_eq!(r.revoked, 0);
    assert_eq!(sim.jobs("s1"), set(&[task("b", 1)]));
    sim.settle();
}

#[test]
fn no_wildcard_worker_leaves_unclaimed_jobs_unassigned() {
    let mut sim = Sim::new(DELAY, &[("a", 1)]);
    sim.join("s", Spec::claims(&["a-0"]));
    sim.settle();
    assert_eq!(sim.jobs("s"), set(&[task("a", 0)]));
    assert_eq!(
        sim.state.unassigned().get(&conn("a")),
        Some(&UnassignedReason::NoWildcardWorker)
    );
}

#[test]
fn one_worker_per_job() {
    let mut sim = Sim::new(DELAY, &[("c1", 3), ("c2", 2)]);
    let mut names = Vec::new();
    for j in sim.all_jobs() {
        let name = format!("worker-{j}");
        sim.join(&name, Spec::claims(&[&j.to_string()]));
        names.push((name, j));
    }
    sim.settle();
    for (name, j) in &names {
        assert_eq!(sim.jobs(name), set(std::slice::from_ref(j)));
    }
}

#[test]
fn claims_of_an_absent_worker_survive_a_leader_change() {
    let mut sim = Sim::new(DELAY, &[("a", 2)]);
    sim.join("leader", Spec::wildcard());
    sim.join("pinned", Spec::claims(&["a", "a-0"]));
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert_eq!(sim.jobs("pinned"), set(&[conn("a"), task("a", 0)]));
    // The claimant goes away; its jobs stay unassigned.
    sim.leave("pinned");
    sim.settle();
    // The leader goes too: the next leader still knows the claims from its last assignment
    // and keeps the claimed jobs off the wildcard worker.
    sim.leave("leader");
    sim.settle();
    assert_eq!(sim.jobs("w"), set(&[task("a", 1)]));
    // The claimant comes back and gets its jobs.
    sim.join("pinned", Spec::claims(&["a", "a-0"]));
    sim.settle();
    assert_eq!(sim.jobs("pinned"), set(&[conn("a"), task("a", 0)]));
    assert_eq!(sim.jobs("w"), set(&[task("a", 1)]));
}

#[test]
fn new_leader_without_memory_keeps_the_invariants() {
    let mut sim = Sim::new(DELAY, &[("a", 3)]);
    sim.join("aaa-static", Spec::claims(&["a-0"]));
    sim.join("s2", Spec::claims(&["a-0", "a-1"]));
    sim.join("w", Spec::wildcard());
    sim.settle();
    assert!(sim.jobs("aaa-static").contains(&task("a", 0)));
    // The leader (lowest id) leaves: the new leader starts from scratch and hands the lost
    // job to the standby at once.
    sim.leave("aaa-static");
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!(sim.jobs("s2"), set(&[task("a", 0), task("a", 1)]));
    sim.settle();
}

#[test]
fn wire_level_assignments_are_v3() {
    let members: Vec<(String, Vec<u8>)> =
        [("m1", Spec::claims(&["a-0"])), ("m2", Spec::wildcard())]
            .iter()
            .map(|(id, spec)| {
                let md = WorkerMetadata {
                    static_connectors: spec.connectors.clone(),
                    static_tasks: spec.tasks.clone(),
                    ..WorkerMetadata::new(url(id), 5)
                };
                (id.to_string(), md.encode(ConnectProtocol::Static).unwrap())
            })
            .collect();
    let snap = ConfigSnapshot {
        offset: 5,
        connectors: BTreeMap::from([("a".to_string(), 2)]),
    };
    let mut state = StaticAssignorState::default();
    let out = assignments_on_wire(
        &mut state,
        ConnectProtocol::Static,
        &members,
        RoundInput::first("m1", &[], snap.clone()),
        || panic!("not behind"),
    )
    .unwrap();
    let decoded: BTreeMap<String, Assignment> = out
        .iter()
        .map(|(id, b)| {
            let (v, a) = Assignment::decode_versioned(b).unwrap();
            assert_eq!(v, 3);
            (id.clone(), a)
        })
        .collect();
    assert_eq!(decoded["m1"].tasks, vec![ConnectorTaskId::new("a", 0)]);
    assert!(decoded["m1"].connectors.is_empty());
    assert_eq!(decoded["m2"].connectors, vec!["a".to_string()]);
    assert_eq!(decoded["m2"].tasks, vec![ConnectorTaskId::new("a", 1)]);
    assert_eq!(decoded["m1"].leader_url, url("m1"));

    // Leader behind even after a fresh snapshot: CONFIG_MISMATCH, state untouched.
    let mut behind = StaticAssignorState::default();
    let decoded_members: Vec<(String, WorkerMetadata)> = members
        .iter()
        .map(|(id, b)| (id.clone(), WorkerMetadata::decode(b).unwrap()))
        .collect();
    let stale = ConfigSnapshot {
        offset: 3,
        ..snap.clone()
    };
    let out = perform_assignment(
        &mut behind,
        RoundInput::first("m1", &decoded_members, stale),
        || ConfigSnapshot {
            offset: 4,
            ..snap.clone()
        },
    );
    assert!(out.values().all(|a| a.error == CONFIG_MISMATCH));
    assert_eq!(behind.previous_generation(), -1);

    // Undecodable metadata is an error.
    let bad = vec![("m1".to_string(), vec![0u8, 3, 0])];
    let bad_input = RoundInput {
        last_completed_generation: 1,
        generation: 2,
        ..RoundInput::first("m1", &[], snap)
    };
    assert!(assignments_on_wire(
        &mut state,
        ConnectProtocol::Static,
        &bad,
        bad_input,
        || unreachable!()
    )
    .is_err());
}

// ---------------------------------------------------------------------------------------------
// Property-based: random event sequences
// ---------------------------------------------------------------------------------------------

/// Claim pool: jobs of the connectors the events create (c0..c3, up to 6 tasks), plus jobs
/// that never exist.
fn claim() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u32..4, 0i32..6).prop_map(|(c, t)| format!("c{c}-{t}")),
        1 => (0u32..4).prop_map(|c| format!("c{c}")),
        1 => Just("ghost-0".to_string()),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        3 => Just(Spec::wildcard()),
        1 => Just(Spec::claims(&[])),
        5 => proptest::collection::vec(claim(), 1..4).prop_map(|cs| {
            let refs: Vec<&str> = cs.iter().map(String::as_str).collect();
            Spec::claims(&refs)
        }),
    ]
}

#[derive(Debug, Clone)]
enum Event {
    Join(u8, Spec),
    Leave(usize),
    Bounce(usize),
    SetConnector(u32, Option<u32>),
    Sleep(i64),
    Settle,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (0u8..10, spec()).prop_map(|(n, s)| Event::Join(n, s)),
        2 => (0usize..16).prop_map(Event::Leave),
        2 => (0usize..16).prop_map(Event::Bounce),
        3 => (0u32..4, proptest::option::of(0u32..6)).prop_map(|(c, n)| Event::SetConnector(c, n)),
        2 => prop_oneof![Just(10i64), Just(150_000), Just(400_000)].prop_map(Event::Sleep),
        1 => Just(Event::Settle),
    ]
}

fn run_events(max_delay: i32, events: &[Event]) {
    let mut sim = Sim::new(max_delay, &[("c0", 2)]);
    // Specs stay fixed per worker name (a worker's claims are its configuration).
    let mut specs: BTreeMap<String, Spec> = BTreeMap::new();
    for e in events {
        match e {
            Event::Join(n, s) => {
                let name = format!("worker{n}");
                let s = specs
                    .entry(name.clone())
                    .or_insert_with(|| s.clone())
                    .clone();
                if sim.member_of(&name).is_none() {
                    sim.join(&name, s);
                }
            }
            Event::Leave(i) => {
                if !sim.members.is_empty() {
                    let name = sim
                        .members
                        .values()
                        .nth(i % sim.members.len())
                        .unwrap()
                        .name
                        .clone();
                    sim.leave(&name);
                }
            }
            Event::Bounce(i) => {
                if !sim.members.is_empty() {
                    let m = sim
                        .members
                        .values()
                        .nth(i % sim.members.len())
                        .unwrap()
                        .clone();
                    sim.leave(&m.name);
                    sim.round();
                    sim.join(&m.name, m.spec);
                }
            }
            Event::SetConnector(c, n) => {
                let name = format!("c{c}");
                match n {
                    Some(n) => sim.connectors.insert(name, *n),
                    None => sim.connectors.remove(&name),
                };
            }
            Event::Sleep(ms) => sim.sleep(*ms),
            Event::Settle => {
                sim.settle();
                continue;
            }
        }
        sim.round();
    }
    sim.settle();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_keep_the_invariants(
        events in proptest::collection::vec(event(), 1..40),
        delay in prop_oneof![Just(0i32), Just(1000), Just(300_000)],
    ) {
        run_events(delay, &events);
    }
}

#[test]
fn owner_returning_without_the_claim_releases_the_job_to_a_standby() {
    let mut sim = Sim::new(DELAY, &[("a", 1)]);
    sim.join("w", Spec::wildcard());
    sim.join("s1", Spec::claims(&["a-0"]));
    sim.join("s2", Spec::claims(&["a-0"]));
    sim.settle();
    assert_eq!(sim.jobs("s1"), set(&[task("a", 0)]));
    sim.leave("s1");
    assert_eq!(sim.round().delay, DELAY);
    // s1 comes back reconfigured as a spare: no need to wait for it any longer.
    sim.join("s1", Spec::claims(&[]));
    let r = sim.round();
    assert_eq!(r.delay, 0);
    assert_eq!(sim.jobs("s2"), set(&[task("a", 0)]));
    sim.settle();
}
