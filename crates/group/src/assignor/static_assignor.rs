//! The static assignor: Tributary's leader step for the V3 `static` protocol, used when every
//! member of the group offered `static` (see `docs/static-assignments.md`).
//!
//! Jobs (connector instances and tasks) fall in two classes each round:
//! - **claimed** jobs: named by the `static.connectors` / `static.tasks` claims of some static
//!   worker, present or remembered from an earlier round (the leader remembers the claims of
//!   workers that left, keyed by their advertised URL). They only ever run on a present
//!   claimant: the current owner keeps the job; otherwise the present claimant with the fewest
//!   jobs (ties: lowest member id in Java string order) gets it; the other claimants are
//!   standbys. A claimed job with no present claimant stays unassigned.
//! - **unclaimed** jobs: placed on the **wildcard** workers (both claims unset) by the
//!   incremental cooperative rules of [`super::cooperative`], run over the wildcard members and
//!   the unclaimed jobs only (per-connector balance, revoke-then-assign, scheduled delay for
//!   lost jobs, backoff between revoking rounds). With no wildcard worker present they stay
//!   unassigned.
//!
//! Claims naming jobs that do not exist are ignored until the job exists. A static worker runs
//! nothing but jobs it claims, so one with empty claims runs nothing.
//!
//! A claimed job whose static owner left is held back for `scheduled.rebalance.max.delay.ms`
//! (the max delay of the state): the owner gets it back at once if it returns in time (same
//! advertised URL, whatever its new member id); once the delay has expired a standby claimant
//! takes it. Every move is two rounds: a job is revoked in one round and only assigned in a
//! later round in which no member reports running it, so it never runs on two workers at once.
//!
//! The leader keeps a [`StaticAssignorState`] in memory; like the cooperative state, it is lost
//! when leadership moves: the next leader starts empty, re-assigns lost claimed jobs at once to
//! a present claimant, and does not know the claims of workers that left before it became
//! leader (a job claimed only by such workers counts as unclaimed until its claimant returns).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::cooperative::{
    assign_cooperative_subset, CooperativeAssignorState, JobSubset, MemberJobs,
    DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS,
};
use super::{java_string_cmp, Job, Round};
use crate::protocol::{
    Assignment, ConnectProtocol, ConnectorTaskId, StaticClaims, WorkerMetadata, NO_ERROR,
};

/// Why a configured job is not assigned to anyone after a static round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnassignedReason {
    /// Claimed only by static workers none of which is in the group (rule 2).
    NoPresentClaimant,
    /// Lost with its static owner, which may return until the scheduled delay ends; a standby
    /// claimant takes it then (rule 5). The round's delay covers it.
    AwaitingOwner,
    /// Still run by a worker that must give it up (revoked this round, or a previous
    /// revocation not yet done); it is assigned in a later round (rule 6).
    Moving,
    /// Unclaimed, and no wildcard worker is in the group (rule 4).
    NoWildcardWorker,
    /// Unclaimed and held back by the cooperative rules among the wildcard workers (a lost job
    /// waiting for the scheduled delay, or a job being moved between wildcard workers).
    Wildcard,
}

/// What the last static round found out about one member, for reporting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StaticMemberReport {
    /// True for a static worker (at least one claim set, possibly empty); false for a
    /// wildcard worker. Under the `static` protocol a static worker's claims are in effect.
    pub is_static: bool,
    /// Claimed jobs that do not exist (yet): ignored until they do.
    pub pending_claims: Vec<Job>,
    /// Claimed existing jobs that another claimant owns or that nobody runs yet (this member is
    /// a standby for them).
    pub standby: Vec<Job>,
}

/// Whether a worker's static claims are honoured in a generation: only when the group
/// negotiated `static` and the worker is a static worker (`metadata` = its own metadata, as it
/// would send it). A static worker for which this is false runs under the cooperative rules as
/// a wildcard worker and should log a warning once per generation.
pub fn static_claims_in_effect(negotiated: ConnectProtocol, metadata: &WorkerMetadata) -> bool {
    negotiated == ConnectProtocol::Static && metadata.is_static()
}

/// A claimed job that lost its owner and waits for it.
#[derive(Debug, Clone)]
struct LostJob {
    /// Identity (advertised URL, else member id) of the owner that left.
    owner_key: String,
    /// Leader-clock time at which a standby may take the job.
    deadline_ms: i64,
}

/// One member's claims.
#[derive(Debug, Clone, Default)]
struct Claims {
    connectors: BTreeSet<String>,
    tasks: BTreeSet<ConnectorTaskId>,
}

impl Claims {
    fn of(meta: &WorkerMetadata) -> Option<Claims> {
        if !meta.is_static() {
            return None;
        }
        Some(Claims {
            connectors: meta.static_connectors.iter().flatten().cloned().collect(),
            tasks: meta.static_tasks.iter().flatten().cloned().collect(),
        })
    }

    fn jobs(&self) -> impl Iterator<Item = Job> + '_ {
        self.connectors
            .iter()
            .map(|c| Job::Connector(c.clone()))
            .chain(self.tasks.iter().map(|t| Job::Task(t.clone())))
    }

    fn union(&mut self, other: Claims) {
        self.connectors.extend(other.connectors);
        self.tasks.extend(other.tasks);
    }
}

/// Leader-side memory of the static assignor.
///
/// Holds a [`CooperativeAssignorState`] for the wildcard part plus the static part's memory:
/// the owner of every claimed job after the last round, claimed jobs waiting for an owner that
/// left, and the claims of every static worker seen (so that jobs claimed by absent workers
/// stay unassigned). Create one when a worker becomes leader (or keep one and
/// [`reset`](Self::reset) it when leadership is lost) and feed every `static` leader round
/// through [`assign_static`] / [`perform_static_assignment`] / [`static_assignments`].
#[derive(Debug, Clone)]
pub struct StaticAssignorState {
    wildcard: CooperativeAssignorState,
    previous_generation: i32,
    /// Claimed job -> (member id, identity key) of its owner after the last round.
    static_prev: HashMap<Job, (String, String)>,
    lost: BTreeMap<Job, LostJob>,
    /// Identity key (advertised URL, else member id) -> last claims seen.
    claims: BTreeMap<String, Claims>,
    owners: BTreeMap<String, MemberJobs>,
    unassigned: BTreeMap<Job, UnassignedReason>,
    reports: BTreeMap<String, StaticMemberReport>,
    delay_ms: i32,
}

impl StaticAssignorState {
    /// Fresh state for `scheduled.rebalance.max.delay.ms` = `max_delay_ms` (negative values
    /// are treated as 0; with 0 a standby takes a lost job at once).
    pub fn new(max_delay_ms: i32) -> Self {
        StaticAssignorState {
            wildcard: CooperativeAssignorState::new(max_delay_ms),
            previous_generation: -1,
            static_prev: HashMap::new(),
            lost: BTreeMap::new(),
            claims: BTreeMap::new(),
            owners: BTreeMap::new(),
            unassigned: BTreeMap::new(),
            reports: BTreeMap::new(),
            delay_ms: 0,
        }
    }

    /// Forgets everything (as a newly elected leader would), keeping the max delay.
    pub fn reset(&mut self) {
        *self = Self::new(self.max_delay_ms());
    }

    /// `scheduled.rebalance.max.delay.ms` this state was created with (ms, >= 0).
    pub fn max_delay_ms(&self) -> i32 {
        self.wildcard.max_delay_ms()
    }

    /// The delay sent to every member in the last round (ms; 0 = no scheduled rebalance): the
    /// smaller of the wildcard part's delay and the time until the first claimed job waiting
    /// for its owner may go to a standby.
    pub fn delay_ms(&self) -> i32 {
        self.delay_ms
    }

    /// Generation of the last round computed by this leader (-1 before the first).
    pub fn previous_generation(&self) -> i32 {
        self.previous_generation
    }

    /// The cooperative state of the wildcard part (wildcard members and unclaimed jobs only).
    pub fn wildcard(&self) -> &CooperativeAssignorState {
        &self.wildcard
    }

    /// Full post-round assignment per member id of the last round, static and wildcard
    /// members alike (the leader's job-to-owner map).
    pub fn owners(&self) -> &BTreeMap<String, MemberJobs> {
        &self.owners
    }

    /// Configured jobs nobody runs after the last round, and why (report them UNASSIGNED).
    pub fn unassigned(&self) -> &BTreeMap<Job, UnassignedReason> {
        &self.unassigned
    }

    /// Per member id of the last round: static or wildcard, pending claims and standby jobs.
    pub fn member_reports(&self) -> &BTreeMap<String, StaticMemberReport> {
        &self.reports
    }

    /// Every static worker's claims this state knows (present and absent workers), sorted by
    /// worker identity: what the `static` assignments carry to every member.
    pub fn known_claims(&self) -> Vec<StaticClaims> {
        self.claims
            .iter()
            .map(|(worker, c)| StaticClaims {
                worker: worker.clone(),
                connectors: c.connectors.iter().cloned().collect(),
                tasks: c.tasks.iter().cloned().collect(),
            })
            .collect()
    }

    /// Adds claims learnt from the group (the `static_claims` of this worker's last assignment)
    /// for workers this state knows nothing of. A worker that has just become leader calls it
    /// before its first round, so jobs claimed by absent workers stay unassigned instead of
    /// going to wildcard workers; a present worker's own claims replace these in the round.
    pub fn remember_claims(&mut self, claims: &[StaticClaims]) {
        for c in claims {
            self.claims
                .entry(c.worker.clone())
                .or_insert_with(|| Claims {
                    connectors: c.connectors.iter().cloned().collect(),
                    tasks: c.tasks.iter().cloned().collect(),
                });
        }
    }
}

impl Default for StaticAssignorState {
    /// [`StaticAssignorState::new`] with the 300 000 ms default.
    fn default() -> Self {
        Self::new(DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS)
    }
}

/// Orders jobs as assignments list them: connector instances first (Java string order), then
/// tasks by connector (Java string order) and number.
fn job_cmp(a: &Job, b: &Job) -> std::cmp::Ordering {
    match (a, b) {
        (Job::Connector(x), Job::Connector(y)) => java_string_cmp(x, y),
        (Job::Connector(_), Job::Task(_)) => std::cmp::Ordering::Less,
        (Job::Task(_), Job::Connector(_)) => std::cmp::Ordering::Greater,
        (Job::Task(x), Job::Task(y)) => {
            java_string_cmp(&x.connector, &y.connector).then(x.task.cmp(&y.task))
        }
    }
}

fn split_jobs<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> (Vec<String>, Vec<ConnectorTaskId>) {
    let mut v: Vec<&Job> = jobs.into_iter().collect();
    v.sort_by(|a, b| job_cmp(a, b));
    let mut conns = Vec::new();
    let mut tasks = Vec::new();
    for j in v {
        match j {
            Job::Connector(c) => conns.push(c.clone()),
            Job::Task(t) => tasks.push(t.clone()),
        }
    }
    (conns, tasks)
}

/// One static round for an already config-checked snapshot (rules 1-6 of the design).
///
/// `round` is read as for [`super::assign_cooperative`]: every member's `allocation` is what
/// it runs now and its `static_connectors` / `static_tasks` are its claims. Returns one
/// [`Assignment`] per distinct member id (error 0, the round's leader, URL and config offset)
/// with the jobs to start, the jobs to stop and the delay (the same for everyone). Static
/// members never get a job they do not claim. Updates `state` (owners, unassigned jobs,
/// member reports). With no members the result is empty and `state` is untouched.
pub fn assign_static(
    state: &mut StaticAssignorState,
    round: &Round<'_>,
) -> BTreeMap<String, Assignment> {
    // Members in Java string order; a repeated id keeps its first metadata.
    let mut members: Vec<(&str, &WorkerMetadata)> = Vec::with_capacity(round.members.len());
    {
        let mut seen = HashSet::new();
        for (id, m) in round.members {
            if seen.insert(id.as_str()) {
                members.push((id.as_str(), m));
            }
        }
    }
    if members.is_empty() {
        return BTreeMap::new();
    }
    members.sort_by(|a, b| java_string_cmp(a.0, b.0));
    let nw = members.len();
    let snapshot = round.snapshot;
    let exists = |j: &Job| match j {
        Job::Connector(c) => snapshot.connectors.contains_key(c),
        Job::Task(t) => snapshot
            .connectors
            .get(&t.connector)
            .is_some_and(|&n| t.task < n),
    };
    let now = round.now_ms;
    let max_delay = state.max_delay_ms();

    // Stale memory check (as the cooperative assignor): forget last round's owners.
    if state.previous_generation != round.last_completed_generation {
        tracing::debug!(
            previous = state.previous_generation,
            last_completed = round.last_completed_generation,
            "static assignor: generation mismatch, ignoring the previous assignment"
        );
        state.static_prev.clear();
    }

    // Identity of every member (stable across restarts): its advertised URL, else its id.
    let keys: Vec<String> = members
        .iter()
        .map(|(id, m)| {
            if m.url.is_empty() {
                id.to_string()
            } else {
                m.url.clone()
            }
        })
        .collect();
    let present_ids: HashSet<&str> = members.iter().map(|(id, _)| *id).collect();
    let present_keys: HashSet<&str> = keys.iter().map(String::as_str).collect();

    // Claims: present members' claims replace what is remembered under their identity.
    let claims: Vec<Option<Claims>> = members.iter().map(|(_, m)| Claims::of(m)).collect();
    for k in &keys {
        state.claims.remove(k);
    }
    for (w, c) in claims.iter().enumerate() {
        if let Some(c) = c {
            state
                .claims
                .entry(keys[w].clone())
                .or_default()
                .union(c.clone());
        }
    }
    let mut claimants: HashMap<Job, Vec<usize>> = HashMap::new();
    let mut reports: Vec<StaticMemberReport> = vec![StaticMemberReport::default(); nw];
    for (w, c) in claims.iter().enumerate() {
        let Some(c) = c else { continue };
        reports[w].is_static = true;
        for j in c.jobs() {
            if exists(&j) {
                claimants.entry(j).or_default().push(w);
            } else {
                reports[w].pending_claims.push(j);
            }
        }
    }
    let mut absent_claimed: HashSet<Job> = HashSet::new();
    for (k, c) in &state.claims {
        if !present_keys.contains(k.as_str()) {
            absent_claimed.extend(c.jobs().filter(|j| exists(j)));
        }
    }
    let is_claimed = |j: &Job| claimants.contains_key(j) || absent_claimed.contains(j);

    // What every member runs now.
    let mut held: Vec<Vec<Job>> = vec![Vec::new(); nw];
    let mut holders: HashMap<Job, Vec<usize>> = HashMap::new();
    for (w, (_, m)) in members.iter().enumerate() {
        let Some(a) = m.allocation.as_ref() else {
            continue;
        };
        let mut js: Vec<Job> = a
            .connectors
            .iter()
            .map(|c| Job::Connector(c.clone()))
            .chain(a.tasks.iter().map(|t| Job::Task(t.clone())))
            .collect();
        js.sort();
        js.dedup();
        for j in &js {
            holders.entry(j.clone()).or_default().push(w);
        }
        held[w] = js;
    }

    // Static members keep the claimed jobs they run alone; everything else they run is revoked.
    let mut loads: Vec<BTreeSet<Job>> = vec![BTreeSet::new(); nw];
    let mut adds: Vec<Vec<Job>> = vec![Vec::new(); nw];
    let mut revokes: Vec<Vec<Job>> = vec![Vec::new(); nw];
    for w in 0..nw {
        if claims[w].is_none() {
            continue;
        }
        for j in &held[w] {
            let keep = exists(j)
                && holders[j].len() == 1
                && claimants.get(j).is_some_and(|cs| cs.contains(&w));
            if keep {
                loads[w].insert(j.clone());
            } else {
                revokes[w].push(j.clone());
            }
        }
    }

    // Configured jobs in assignment order.
    let mut all_jobs: Vec<Job> = Vec::new();
    for c in snapshot.connectors_sorted() {
        all_jobs.push(Job::Connector(c.to_string()));
    }
    for c in snapshot.connectors_sorted() {
        for t in 0..snapshot.connectors[c] {
            all_jobs.push(Job::Task(ConnectorTaskId::new(c, t)));
        }
    }

    // Claimed jobs (rules 1, 2, 5, 6).
    let mut unassigned: BTreeMap<Job, UnassignedReason> = BTreeMap::new();
    let mut free: Vec<&Job> = Vec::new();
    for j in all_jobs.iter().filter(|j| is_claimed(j)) {
        match holders.get(j) {
            Some(hs) if !hs.is_empty() => {
                state.lost.remove(j);
                let kept = hs.len() == 1 && loads[hs[0]].contains(j);
                if !kept {
                    unassigned.insert(j.clone(), UnassignedReason::Moving);
                }
            }
            _ => {
                if !state.lost.contains_key(j) && max_delay > 0 {
                    if let Some((owner, key)) = state.static_prev.get(j) {
                        if !present_ids.contains(owner.as_str()) {
                            state.lost.insert(
                                j.clone(),
                                LostJob {
                                    owner_key: key.clone(),
                                    deadline_ms: now + max_delay as i64,
                                },
                            );
                        }
                    }
                }
                free.push(j);
            }
        }
    }
    let mut count: Vec<usize> = loads.iter().map(BTreeSet::len).collect();
    let mut static_delay: Option<i64> = None;
    for j in free {
        let cs: &[usize] = claimants.get(j).map(Vec::as_slice).unwrap_or(&[]);
        if let Some(l) = state.lost.get(j) {
            if let Some(&w) = cs.iter().find(|&&w| keys[w] == l.owner_key) {
                // The owner came back in time.
                state.lost.remove(j);
                loads[w].insert(j.clone());
                adds[w].push(j.clone());
                count[w] += 1;
                continue;
            }
            // An owner that came back without this claim no longer waits for it.
            let owner_back = present_keys.contains(l.owner_key.as_str());
            if now < l.deadline_ms && !owner_back {
                if cs.is_empty() {
                    unassigned.insert(j.clone(), UnassignedReason::NoPresentClaimant);
                } else {
                    let left = l.deadline_ms - now;
                    static_delay = Some(static_delay.map_or(left, |d| d.min(left)));
                    unassigned.insert(j.clone(), UnassignedReason::AwaitingOwner);
                }
                continue;
            }
            state.lost.remove(j);
        }
        match cs.iter().min_by_key(|&&w| (count[w], w)) {
            Some(&w) => {
                loads[w].insert(j.clone());
                adds[w].push(j.clone());
                count[w] += 1;
            }
            None => {
                unassigned.insert(j.clone(), UnassignedReason::NoPresentClaimant);
            }
        }
    }
    // Waiting entries only survive for jobs still configured, claimed and unheld.
    state
        .lost
        .retain(|j, _| exists(j) && is_claimed(j) && !holders.contains_key(j));

    // Unclaimed jobs (rule 4): the cooperative rules over the wildcard members, restricted to
    // the unclaimed jobs no static member runs (those are being revoked from it).
    let wild: Vec<(String, WorkerMetadata)> = members
        .iter()
        .enumerate()
        .filter(|(w, _)| claims[*w].is_none())
        .map(|(_, (id, m))| (id.to_string(), (*m).clone()))
        .collect();
    let held_by_static = |j: &Job| {
        holders
            .get(j)
            .is_some_and(|hs| hs.iter().any(|&w| claims[w].is_some()))
    };
    let mut subset = JobSubset::default();
    for j in all_jobs.iter().filter(|j| !is_claimed(j)) {
        if held_by_static(j) {
            unassigned.insert(j.clone(), UnassignedReason::Moving);
            continue;
        }
        match j {
            Job::Connector(c) => {
                subset.connectors.insert(c.clone());
            }
            Job::Task(t) => {
                subset.tasks.insert(t.clone());
            }
        }
    }
    let mut out: BTreeMap<String, Assignment> = BTreeMap::new();
    let mut owners: BTreeMap<String, MemberJobs> = BTreeMap::new();
    let mut coop_delay = 0;
    if wild.is_empty() {
        for j in all_jobs.iter().filter(|j| !is_claimed(j)) {
            unassigned
                .entry(j.clone())
                .or_insert(UnassignedReason::NoWildcardWorker);
        }
    } else {
        out = assign_cooperative_subset(
            &mut state.wildcard,
            &Round {
                members: &wild,
                ..*round
            },
            Some(&subset),
        );
        coop_delay = state.wildcard.delay_ms();
        let mut placed: HashSet<Job> = HashSet::new();
        for (id, jobs) in state.wildcard.owners() {
            placed.extend(jobs.connectors.iter().map(|c| Job::Connector(c.clone())));
            placed.extend(jobs.tasks.iter().map(|t| Job::Task(t.clone())));
            owners.insert(id.clone(), jobs.clone());
        }
        for j in all_jobs.iter().filter(|j| !is_claimed(j)) {
            if !placed.contains(j) {
                unassigned
                    .entry(j.clone())
                    .or_insert(UnassignedReason::Wildcard);
            }
        }
    }

    // One delay for everyone: the earliest of the two parts' scheduled rebalances.
    let static_delay = static_delay
        .map(|d| d.clamp(1, i32::MAX as i64) as i32)
        .unwrap_or(0);
    let delay = match (coop_delay, static_delay) {
        (0, d) | (d, 0) => d,
        (a, b) => a.min(b),
    };
    for a in out.values_mut() {
        a.delay = delay;
    }

    // Static members' assignments and the new memory.
    state.static_prev.clear();
    for (w, (id, _)) in members.iter().enumerate() {
        if claims[w].is_none() {
            continue;
        }
        let (connectors, tasks) = split_jobs(&adds[w]);
        let (revoked_connectors, revoked_tasks) = split_jobs(&revokes[w]);
        out.insert(
            id.to_string(),
            Assignment {
                error: NO_ERROR,
                leader: round.leader_id.to_string(),
                leader_url: round.leader_url.to_string(),
                config_offset: round.config_offset,
                connectors,
                tasks,
                revoked_connectors,
                revoked_tasks,
                delay,
                static_claims: Vec::new(),
            },
        );
        let (connectors, tasks) = split_jobs(&loads[w]);
        owners.insert(id.to_string(), MemberJobs { connectors, tasks });
        for j in &loads[w] {
            state
                .static_prev
                .insert(j.clone(), (id.to_string(), keys[w].clone()));
        }
    }
    for (w, r) in reports.iter_mut().enumerate() {
        if !r.is_static {
            continue;
        }
        let mut standby: Vec<Job> = claims[w]
            .as_ref()
            .map(|c| {
                c.jobs()
                    .filter(|j| exists(j) && !loads[w].contains(j))
                    .collect()
            })
            .unwrap_or_default();
        standby.sort_by(job_cmp);
        r.standby = standby;
        r.pending_claims.sort_by(job_cmp);
    }
    if !unassigned.is_empty() {
        tracing::debug!(
            unassigned = unassigned.len(),
            delay,
            "static assignor: jobs left unassigned this round"
        );
    }
    state.reports = members
        .iter()
        .map(|(id, _)| id.to_string())
        .zip(reports)
        .collect();
    state.owners = owners;
    state.unassigned = unassigned;
    state.delay_ms = delay;
    state.previous_generation = round.generation;
    // Every member learns every claim the leader knows, so that a next leader does too.
    let known = state.known_claims();
    for a in out.values_mut() {
        a.static_claims = known.clone();
    }
    out
}
