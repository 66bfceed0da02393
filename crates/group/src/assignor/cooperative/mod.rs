//! The incremental cooperative assignor (KIP-415; Java `IncrementalCooperativeAssignor`,
//! protocols `compatible`, `sessioned` and `static`), as a pure state machine.
//!
//! The leader keeps a [`CooperativeAssignorState`] in memory across rebalances and calls
//! [`assign_cooperative`] (through [`super::ConnectAssignor`]; [`super::perform_assignment`] adds
//! the config-offset check) once per generation. Each member gets a **delta**: the jobs to start, the jobs to
//! stop (revoked) and the scheduled-rebalance `delay` (same for everyone).
//!
//! The round follows Java step by step: stale-memory check on a generation mismatch, failed
//! revocation check, deleted / duplicated / lost / created jobs, lost jobs held back for
//! `scheduled.rebalance.max.delay.ms` with candidate workers, load-balancing revocations with the
//! exponential backoff after consecutive revoking rounds, and two-round revoke-then-assign (a job
//! revoked in round N is only placed in round N+1).
//!
//! Deliberate differences from Java:
//! - **Per-connector balance.** Besides the per-worker connector and task totals (which differ
//!   by at most one once converged, as in Java), the tasks of every single connector are spread
//!   so that any two workers' counts of that connector differ by at most one. Load-balancing
//!   revocations target such a doubly balanced layout and try to keep jobs in place: a task is
//!   only revoked from a worker holding more of its connector than the floor share, never
//!   below it, and which workers keep the "+1" of each connector is chosen by augmenting paths
//!   that maximise the jobs kept (a heuristic, not an exact min-cost solution; with both
//!   balance rules old workers may occasionally have to trade a job among themselves). New and
//!   lost jobs are placed with the same rule.
//! - **Lost jobs at expiry** go to the candidate workers with the balance-aware placement rather
//!   than plain round-robin; any remaining imbalance is fixed by ordinary revocations.
//! - **Unconfigured jobs** that a member still runs (for example after a leader change following
//!   a connector deletion) are revoked at once; Java only revokes them one round later.
//! - Deterministic: members are handled in Java string order of their ids (Java uses hash
//!   order), so equal inputs give equal outputs.
//! - **Clean departures** (Java keeps every lost job for the delay): the leader may
//!   [`release`](CooperativeAssignorState::release) jobs of departed members that it has
//!   positive evidence were stopped by their owner (see
//!   [`departed_jobs`](CooperativeAssignorState::departed_jobs)); those are placed at once like
//!   new jobs. A departed member whose every job was released, or that held none, leaves
//!   nothing to wait for, so its departure alone does not start a scheduled delay. Without
//!   releases the rules are Java's.
//!
//! Static claims of the V3 `static` protocol are not interpreted here: every member is treated
//! as a wildcard worker. When the group runs `static`, [`super::static_assignor`] honours the
//! claims and runs these rules over the wildcard members and the unclaimed jobs only.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{java_string_cmp, ConfigSnapshot, Job, Round};
use crate::protocol::{Assignment, ConnectorTaskId, WorkerMetadata, NO_ERROR};

mod balance;

#[cfg(test)]
use balance::Extras;
use balance::{apply_plan, balance_plan, place_greedy};

/// Default of `scheduled.rebalance.max.delay.ms` (Java `DistributedConfig`): 300 000 ms.
pub const DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS: i32 = 300_000;

/// Multiplier of the backoff between consecutive revoking rebalances (Java uses an
/// `ExponentialBackoff` with initial interval 1 ms, multiplier 40, no jitter).
const BACKOFF_MULTIPLIER: f64 = 40.0;

/// The jobs one member runs after a round (its full assignment, not a delta).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberJobs {
    /// Connector instances, in Java string order.
    pub connectors: Vec<String>,
    /// Tasks, by connector (Java string order) then task number.
    pub tasks: Vec<ConnectorTaskId>,
}

/// A job that a departed member owned, as [`CooperativeAssignorState::departed_jobs`] lists
/// it: the leader looks for evidence that the owner stopped it before leaving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepartedJob {
    /// The connector instance or task.
    pub job: Job,
    /// The departed owner's advertised REST URL, from its member metadata (`http://host:port/`;
    /// Connect's worker id is its `host:port`).
    pub owner_url: String,
    /// The generation of the last round the owner was a member of (statuses carry the
    /// generation they were written in; a clean stop is reported at most this late).
    pub generation: i32,
    /// The generation of the round that gave the owner this job (it held it without a break
    /// since): a status the owner wrote before it is not about this stint. A clean stop is
    /// reported with a generation in `held_since..=generation`: the owner may leave before it
    /// learns the outcome of its last round, so its report can name an earlier generation.
    pub held_since: i32,
}

/// What the previous round left assigned for one connector (leader memory).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct PreviousJobs {
    connector: bool,
    tasks: Vec<u32>,
}

/// Leader-side memory of the incremental cooperative assignor (Java
/// `IncrementalCooperativeAssignor` fields).
///
/// Create one when a worker becomes leader (or keep one per worker and call
/// [`reset`](Self::reset) when leadership is lost); feed every leader round through
/// [`assign_cooperative`]. The state is lost, by design, when leadership moves: the next leader
/// starts from [`new`](Self::new), finds no previous assignment and re-assigns the jobs of
/// departed workers at once (§5.4 "When the leader changes").
#[derive(Debug, Clone)]
pub struct CooperativeAssignorState {
    max_delay_ms: i32,
    previous: HashMap<String, PreviousJobs>,
    previous_revoked_connectors: Vec<String>,
    previous_revoked_tasks: Vec<ConnectorTaskId>,
    previous_generation: i32,
    previous_members: BTreeSet<String>,
    scheduled_rebalance_ms: i64,
    delay_ms: i32,
    candidate_workers: Vec<String>,
    revoked_in_previous: bool,
    successive_revoking_rounds: u32,
    owners: BTreeMap<String, MemberJobs>,
    lost_jobs: Vec<Job>,
    /// Advertised URL of every member of the last computed round.
    member_urls: HashMap<String, String>,
    /// The departed owner of every job in `lost_jobs`.
    lost_owners: BTreeMap<Job, DepartedOwner>,
    /// For every job assigned in the last computed round: its owner's member id and the
    /// generation since which that owner has held it.
    held_since: HashMap<Job, (String, i32)>,
    /// Jobs of departed members released for the next round ([`Self::release`]).
    released: HashSet<Job>,
}

impl CooperativeAssignorState {
    /// Fresh state (previous generation -1, nothing assigned, no delay) for
    /// `scheduled.rebalance.max.delay.ms` = `max_delay_ms` (ms, >= 0; negative values are
    /// treated as 0). With 0, lost jobs are re-assigned at once and load-balancing revocations
    /// are never postponed.
    pub fn new(max_delay_ms: i32) -> Self {
        CooperativeAssignorState {
            max_delay_ms: max_delay_ms.max(0),
            previous: HashMap::new(),
            previous_revoked_connectors: Vec::new(),
            previous_revoked_tasks: Vec::new(),
            previous_generation: -1,
            previous_members: BTreeSet::new(),
            scheduled_rebalance_ms: 0,
            delay_ms: 0,
            candidate_workers: Vec::new(),
            revoked_in_previous: false,
            successive_revoking_rounds: 0,
            owners: BTreeMap::new(),
            lost_jobs: Vec::new(),
            member_urls: HashMap::new(),
            lost_owners: BTreeMap::new(),
            held_since: HashMap::new(),
            released: HashSet::new(),
        }
    }

    /// The jobs whose owner has left the group, for a round with `members` in which the
    /// leader's last successful join was `last_completed_generation`: the jobs of the members of
    /// the last computed round that are not among `members`, and the lost jobs still waiting for
    /// their owner, each with that owner's URL and last generation. Empty when the leader's
    /// memory is stale (generation mismatch; such a round treats no job as lost).
    pub fn departed_jobs(
        &self,
        members: &[(String, WorkerMetadata)],
        last_completed_generation: i32,
    ) -> Vec<DepartedJob> {
        if self.previous_generation < 0 || self.previous_generation != last_completed_generation {
            return Vec::new();
        }
        let present: HashSet<&str> = members.iter().map(|(id, _)| id.as_str()).collect();
        let mut out: Vec<DepartedJob> = Vec::new();
        let mut seen: HashSet<&Job> = HashSet::new();
        for (job, owner) in &self.lost_owners {
            seen.insert(job);
            out.push(DepartedJob {
                job: job.clone(),
                owner_url: owner.url.clone(),
                generation: owner.generation,
                held_since: owner.held_since,
            });
        }
        for (id, jobs) in &self.owners {
            if present.contains(id.as_str()) {
                continue;
            }
            let url = self.member_urls.get(id).cloned().unwrap_or_default();
            let all = jobs
                .connectors
                .iter()
                .map(|c| Job::Connector(c.clone()))
                .chain(jobs.tasks.iter().map(|t| Job::Task(t.clone())));
            for job in all {
                if seen.contains(&job) {
                    continue;
                }
                let held_since = match self.held_since.get(&job) {
                    Some((owner, since)) if owner == id => *since,
                    _ => self.previous_generation,
                };
                out.push(DepartedJob {
                    job,
                    owner_url: url.clone(),
                    generation: self.previous_generation,
                    held_since,
                });
            }
        }
        out
    }

    /// Releases jobs of departed members for the next round: the leader has positive evidence
    /// that their owner stopped them (Tributary's clean-departure rule; Java has none). A
    /// released job that the round finds lost is placed at once like a new job instead of
    /// waiting for `scheduled.rebalance.max.delay.ms`; other jobs are unaffected. Releases apply
    /// to the next [`assign_cooperative`] call only.
    pub fn release(&mut self, jobs: impl IntoIterator<Item = Job>) {
        self.released.extend(jobs);
    }

    /// Jobs of departed members that the last round left unassigned, waiting for their worker
    /// to return until the scheduled delay ends (report them UNASSIGNED).
    pub fn lost_jobs(&self) -> &[Job] {
        &self.lost_jobs
    }

    /// Forgets everything (as a newly elected leader would), keeping the max delay.
    pub fn reset(&mut self) {
        *self = Self::new(self.max_delay_ms);
    }

    /// `scheduled.rebalance.max.delay.ms` this state was created with (ms).
    pub fn max_delay_ms(&self) -> i32 {
        self.max_delay_ms
    }

    /// The delay sent to every member in the last round (ms; 0 = no scheduled rebalance).
    pub fn delay_ms(&self) -> i32 {
        self.delay_ms
    }

    /// Leader-clock time (ms) at which the running delay ends; 0 when none runs.
    pub fn scheduled_rebalance_ms(&self) -> i64 {
        self.scheduled_rebalance_ms
    }

    /// Generation of the last round computed by this leader (-1 before the first).
    pub fn previous_generation(&self) -> i32 {
        self.previous_generation
    }

    /// Member ids of the last computed round.
    pub fn previous_members(&self) -> &BTreeSet<String> {
        &self.previous_members
    }

    /// Workers that were empty while the current delay ran, in the order they were seen; lost
    /// jobs go to them when the delay expires.
    pub fn candidate_workers(&self) -> &[String] {
        &self.candidate_workers
    }

    /// Number of consecutive rounds that wanted load-balancing revocations (the backoff
    /// exponent).
    pub fn successive_revoking_rounds(&self) -> u32 {
        self.successive_revoking_rounds
    }

    /// Full post-round assignment per member id of the last round (jobs held after applying
    /// that round's revocations and additions). This is the leader's job-to-owner map used to
    /// route requests such as task restarts (Java `LeaderState`).
    pub fn owners(&self) -> &BTreeMap<String, MemberJobs> {
        &self.owners
    }

    /// The backoff after `n` consecutive revoking rounds, as Java's `ExponentialBackoff(1 or 0,
    /// 40, maxDelay, 0)`: `min(40^min(n, log40(maxDelay)), maxDelay)` truncated to whole ms;
    /// 0 when the max delay is 0. With the default 300 000: 40, 1600, 64 000, then 300 000.
    pub fn backoff_ms(&self, n: u32) -> i32 {
        let max = self.max_delay_ms as i64;
        let initial = max.min(if max == 0 { 0 } else { 1 });
        let exp_max = if max > initial {
            ((max as f64) / (initial.max(1) as f64)).ln() / BACKOFF_MULTIPLIER.ln()
        } else {
            0.0
        };
        if exp_max == 0.0 {
            return initial as i32;
        }
        let exp = (n as f64).min(exp_max);
        let term = (initial as f64) * BACKOFF_MULTIPLIER.powf(exp);
        (term as i64).min(max) as i32
    }

    fn reset_delay(&mut self) {
        self.candidate_workers.clear();
        self.scheduled_rebalance_ms = 0;
        self.delay_ms = 0;
    }
}

impl Default for CooperativeAssignorState {
    /// [`CooperativeAssignorState::new`] with the 300 000 ms default.
    fn default() -> Self {
        Self::new(DEFAULT_SCHEDULED_REBALANCE_MAX_DELAY_MS)
    }
}

/// A subset of the configured jobs for one round: the static assignor hands the cooperative
/// rules only the unclaimed jobs and the wildcard members. Jobs outside the subset are treated
/// like unconfigured ones (revoked from any member that runs them, never assigned).
#[derive(Debug, Clone, Default)]
pub(crate) struct JobSubset {
    /// Connector instances in the subset.
    pub(crate) connectors: HashSet<String>,
    /// Tasks in the subset.
    pub(crate) tasks: HashSet<ConnectorTaskId>,
}

/// Dense numbering of the configured jobs of one round.
struct Catalog<'a> {
    /// Connectors with their instance or at least one task in the round, in Java order.
    names: Vec<&'a str>,
    index: HashMap<&'a str, u32>,
    /// Whether the connector instance of `names[c]` is a job of the round.
    instance: Vec<bool>,
    /// Number of connector instances in the round.
    instances: usize,
    /// `task_base[c]..task_base[c + 1]` are the dense task ids of connector `c`.
    task_base: Vec<u32>,
    /// Connector of each dense task id.
    task_conn: Vec<u32>,
    /// Task number of each dense task id (ascending within a connector).
    task_num: Vec<u32>,
}

impl<'a> Catalog<'a> {
    fn new(snapshot: &'a ConfigSnapshot, subset: Option<&JobSubset>) -> Self {
        let mut names = Vec::new();
        let mut index = HashMap::new();
        let mut instance = Vec::new();
        let mut task_base = Vec::new();
        let mut task_conn = Vec::new();
        let mut task_num = Vec::new();
        let mut base = 0u32;
        let mut probe = ConnectorTaskId::new(String::new(), 0);
        for n in snapshot.connectors_sorted() {
            let count = snapshot.connectors[n];
            let ci = names.len() as u32;
            let has_instance = subset.is_none_or(|s| s.connectors.contains(n));
            let before = task_num.len();
            match subset {
                None => task_num.extend(0..count),
                Some(s) => {
                    probe.connector.clear();
                    probe.connector.push_str(n);
                    for t in 0..count {
                        probe.task = t;
                        if s.tasks.contains(&probe) {
                            task_num.push(t);
                        }
                    }
                }
            }
            let added = (task_num.len() - before) as u32;
            if !has_instance && added == 0 {
                continue;
            }
            names.push(n);
            index.insert(n, ci);
            instance.push(has_instance);
            task_base.push(base);
            base += added;
            task_conn.extend(std::iter::repeat_n(ci, added as usize));
        }
        task_base.push(base);
        let instances = instance.iter().filter(|i| **i).count();
        Catalog {
            names,
            index,
            instance,
            instances,
            task_base,
            task_conn,
            task_num,
        }
    }

    fn connectors(&self) -> usize {
        self.names.len()
    }

    fn tasks(&self) -> usize {
        self.task_conn.len()
    }

    fn task_count(&self, c: u32) -> u32 {
        self.task_base[c as usize + 1] - self.task_base[c as usize]
    }

    /// Dense id of the connector instance `c`, if it is a job of the round.
    fn conn(&self, c: &str) -> Option<u32> {
        self.index
            .get(c)
            .copied()
            .filter(|&ci| self.instance[ci as usize])
    }

    /// Dense id of task `t` of the connector with dense id `ci`, if it is a job of the round.
    fn task_in(&self, ci: u32, t: u32) -> Option<u32> {
        let (lo, hi) = (
            self.task_base[ci as usize] as usize,
            self.task_base[ci as usize + 1] as usize,
        );
        let nums = &self.task_num[lo..hi];
        // Fast path for complete connectors (task numbers 0..count).
        if (t as usize) < nums.len() && nums[t as usize] == t {
            return Some((lo + t as usize) as u32);
        }
        nums.binary_search(&t).ok().map(|i| (lo + i) as u32)
    }

    fn task(&self, c: &str, t: u32) -> Option<u32> {
        self.task_in(*self.index.get(c)?, t)
    }

    fn task_id(&self, t: u32) -> ConnectorTaskId {
        let c = self.task_conn[t as usize];
        ConnectorTaskId::new(self.names[c as usize], self.task_num[t as usize])
    }
}

/// One member's jobs during the round (dense ids).
#[derive(Debug, Clone, Default)]
struct Load {
    conns: Vec<u32>,
    tasks: Vec<u32>,
}

/// Per-member changes of the round.
#[derive(Debug, Clone, Default)]
struct Delta {
    add_conns: Vec<u32>,
    add_tasks: Vec<u32>,
    revoke_conns: Vec<u32>,
    revoke_tasks: Vec<u32>,
    revoke_unknown_conns: Vec<String>,
    revoke_unknown_tasks: Vec<ConnectorTaskId>,
}

/// One incremental cooperative round (`IncrementalCooperativeAssignor.performTaskAssignment`) for an already config-checked snapshot.
///
/// Returns one [`Assignment`] per distinct member id (error 0, `round.leader_id` /
/// `leader_url`, `round.config_offset`): the connectors and tasks to **start**, the
/// connectors and tasks to **stop** (revoked), and the delay in ms (identical for all
/// members). Updates `state` (the leader's memory, including [`CooperativeAssignorState::owners`]).
/// With no members the result is empty and `state` is untouched.
pub fn assign_cooperative(
    state: &mut CooperativeAssignorState,
    round: &Round<'_>,
) -> BTreeMap<String, Assignment> {
    assign_cooperative_subset(state, round, None)
}

/// [`assign_cooperative`] restricted to `subset` of the snapshot's jobs (all of them with
/// `None`): members running jobs outside the subset have them revoked, as for unconfigured jobs.
///
/// The steps of Connect's `IncrementalCooperativeAssignor.performTaskAssignment`, each a
/// function below: what the members run ([`active_jobs`]), what the previous round assigned
/// ([`previous_assignment`]), duplicates revoked ([`revoke_duplicates`]), jobs nobody runs
/// ([`unheld_jobs`]), lost jobs ([`handle_lost`]), balancing ([`place`]), and the members'
/// assignments with the leader's memory for the next round ([`finish_round`]).
pub(crate) fn assign_cooperative_subset(
    state: &mut CooperativeAssignorState,
    round: &Round<'_>,
    subset: Option<&JobSubset>,
) -> BTreeMap<String, Assignment> {
    let members = distinct_members(round);
    if members.is_empty() {
        return BTreeMap::new();
    }
    let cat = Catalog::new(round.snapshot, subset);

    // The leader's memory is only valid if it led the last completed round.
    let released = std::mem::take(&mut state.released);
    if state.previous_generation != round.last_completed_generation {
        tracing::debug!(
            previous = state.previous_generation,
            last_completed = round.last_completed_generation,
            "generation mismatch: ignoring the previous assignment"
        );
        state.previous.clear();
    }
    // The departed owners of jobs, for the jobs that this round finds lost.
    let departed: HashMap<Job, DepartedOwner> = state
        .departed_jobs(round.members, round.last_completed_generation)
        .into_iter()
        .map(|d| {
            let owner = DepartedOwner {
                url: d.owner_url,
                generation: d.generation,
                held_since: d.held_since,
            };
            (d.job, owner)
        })
        .collect();

    let mut active = active_jobs(&cat, &members);
    let (prev_conn, prev_task) = previous_assignment(state, &cat, &active);
    revoke_duplicates(&mut active);
    let Active {
        mut loads,
        mut deltas,
        conn_held,
        task_held,
        ..
    } = active;
    let unheld = unheld_jobs(
        &cat,
        &released,
        (&prev_conn, &prev_task),
        (&conn_held, &task_held),
    );
    let Unheld {
        lost_conns,
        lost_tasks,
        mut assign_conns,
        mut assign_tasks,
    } = unheld;

    // Lost jobs: kept for their worker (the scheduled delay), or placed now.
    let clean_departed = clean_departures(state, &members, &cat, (&lost_conns, &lost_tasks));
    let member_ids: Vec<&str> = members.iter().map(|(id, _)| *id).collect();
    let mut preferred: Vec<usize> = Vec::new();
    state.lost_jobs.clear();
    match handle_lost(
        state,
        &member_ids,
        &clean_departed,
        &loads,
        !lost_conns.is_empty() || !lost_tasks.is_empty(),
        round.now_ms,
    ) {
        LostOutcome::Keep => {
            // Jobs of departed members that wait for them (scheduled delay).
            state.lost_jobs = lost_conns
                .iter()
                .map(|&c| Job::Connector(cat.names[c as usize].to_string()))
                .chain(lost_tasks.iter().map(|&t| Job::Task(cat.task_id(t))))
                .collect();
        }
        LostOutcome::Reassign => {
            assign_conns.extend_from_slice(&lost_conns);
            assign_conns.sort_unstable();
            assign_tasks.extend_from_slice(&lost_tasks);
            assign_tasks.sort_unstable();
        }
        LostOutcome::ToCandidates(cands) => {
            // The delay has just expired (delay is 0 again, revokedInPrevious false), so the
            // balancing plan below runs; the lost jobs fill the candidates' holes first.
            preferred = cands;
            assign_conns.extend_from_slice(&lost_conns);
            assign_conns.sort_unstable();
            assign_tasks.extend_from_slice(&lost_tasks);
            assign_tasks.sort_unstable();
        }
    }

    place(
        state,
        &cat,
        (&mut loads, &mut deltas),
        (&assign_conns, &assign_tasks),
        &preferred,
        round.now_ms,
    );
    finish_round(
        state,
        round,
        &cat,
        &members,
        (loads, deltas),
        (&lost_conns, &lost_tasks),
        &departed,
    )
}

/// The round's members in Java string order; a repeated id keeps its first metadata.
fn distinct_members<'a>(round: &Round<'a>) -> Vec<(&'a str, &'a WorkerMetadata)> {
    let mut members: Vec<(&str, &WorkerMetadata)> = Vec::with_capacity(round.members.len());
    let mut seen = HashSet::new();
    for (id, m) in round.members {
        if seen.insert(id.as_str()) {
            members.push((id.as_str(), m));
        }
    }
    members.sort_by(|a, b| java_string_cmp(a.0, b.0));
    members
}

/// What the members run, from their metadata (dense ids, per member in `members`' order),
/// with how many hold each job; jobs that are not configured (deleted, or outside the
/// subset) are queued for revocation by name.
struct Active<'a> {
    loads: Vec<Load>,
    deltas: Vec<Delta>,
    conn_held: Vec<u32>,
    task_held: Vec<u32>,
    unknown_conns: HashSet<&'a str>,
    unknown_tasks: HashSet<&'a ConnectorTaskId>,
}

/// The jobs each member runs (Connect's `memberAssignments`).
fn active_jobs<'a>(cat: &Catalog<'_>, members: &[(&'a str, &'a WorkerMetadata)]) -> Active<'a> {
    let w_count = members.len();
    let mut active = Active {
        loads: vec![Load::default(); w_count],
        deltas: vec![Delta::default(); w_count],
        conn_held: vec![0u32; cat.connectors()],
        task_held: vec![0u32; cat.tasks()],
        unknown_conns: HashSet::new(),
        unknown_tasks: HashSet::new(),
    };
    for (w, (_, meta)) in members.iter().enumerate() {
        let Some(alloc) = meta.allocation.as_ref() else {
            continue;
        };
        let load = &mut active.loads[w];
        let delta = &mut active.deltas[w];
        for c in &alloc.connectors {
            match cat.conn(c) {
                Some(ci) => load.conns.push(ci),
                None => {
                    if !delta.revoke_unknown_conns.contains(c) {
                        delta.revoke_unknown_conns.push(c.clone());
                    }
                    active.unknown_conns.insert(c.as_str());
                }
            }
        }
        let mut last: Option<(&str, Option<u32>)> = None;
        for t in &alloc.tasks {
            let ci = match last {
                Some((name, ci)) if name == t.connector => ci,
                _ => {
                    let ci = cat.index.get(t.connector.as_str()).copied();
                    last = Some((t.connector.as_str(), ci));
                    ci
                }
            };
            match ci.and_then(|ci| cat.task_in(ci, t.task)) {
                Some(d) => load.tasks.push(d),
                None => {
                    if !delta.revoke_unknown_tasks.contains(t) {
                        delta.revoke_unknown_tasks.push(t.clone());
                    }
                    active.unknown_tasks.insert(t);
                }
            }
        }
        load.conns.sort_unstable();
        load.conns.dedup();
        load.tasks.sort_unstable();
        load.tasks.dedup();
        for &c in &load.conns {
            active.conn_held[c as usize] += 1;
        }
        for &t in &load.tasks {
            active.task_held[t as usize] += 1;
        }
    }
    active
}

/// What the previous round assigned, per connector and task (dense ids): the leader's memory,
/// or, when a job revoked in the previous round still runs somewhere (a failed revocation),
/// what runs now. Clears the memory of the previous round's revocations.
fn previous_assignment(
    state: &mut CooperativeAssignorState,
    cat: &Catalog<'_>,
    active: &Active<'_>,
) -> (Vec<bool>, Vec<bool>) {
    let (nc, nt) = (cat.connectors(), cat.tasks());
    let failed_revocation = state.previous_revoked_connectors.iter().any(|c| {
        cat.conn(c)
            .map_or(active.unknown_conns.contains(c.as_str()), |ci| {
                active.conn_held[ci as usize] > 0
            })
    }) || state.previous_revoked_tasks.iter().any(|t| {
        cat.task(&t.connector, t.task)
            .map_or(active.unknown_tasks.contains(t), |d| {
                active.task_held[d as usize] > 0
            })
    });
    let mut prev_conn = vec![false; nc];
    let mut prev_task = vec![false; nt];
    if failed_revocation {
        tracing::debug!("a previous revocation did not take effect; previous assignment := active");
        prev_conn = active.conn_held.iter().map(|&n| n > 0).collect();
        prev_task = active.task_held.iter().map(|&n| n > 0).collect();
    } else {
        for (ci, name) in cat.names.iter().enumerate() {
            if let Some(p) = state.previous.get(*name) {
                prev_conn[ci] = p.connector && cat.instance[ci];
                for &t in &p.tasks {
                    if let Some(d) = cat.task(name, t) {
                        prev_task[d as usize] = true;
                    }
                }
            }
        }
    }
    state.previous_revoked_connectors.clear();
    state.previous_revoked_tasks.clear();
    (prev_conn, prev_task)
}

/// A job more than one member runs is revoked from every holder (unconfigured ones were
/// queued for revocation already); what is left of `loads` is what stays.
fn revoke_duplicates(active: &mut Active<'_>) {
    let (conn_held, task_held) = (&active.conn_held, &active.task_held);
    for (load, d) in active.loads.iter_mut().zip(active.deltas.iter_mut()) {
        load.conns.retain(|&c| {
            let dup = conn_held[c as usize] > 1;
            if dup {
                d.revoke_conns.push(c);
            }
            !dup
        });
        load.tasks.retain(|&t| {
            let dup = task_held[t as usize] > 1;
            if dup {
                d.revoke_tasks.push(t);
            }
            !dup
        });
    }
}

/// Jobs no member runs: lost ones (assigned in the previous round, their owner gone) and
/// those to assign now (new ones, and lost ones that their departed owner released).
struct Unheld {
    lost_conns: Vec<u32>,
    lost_tasks: Vec<u32>,
    assign_conns: Vec<u32>,
    assign_tasks: Vec<u32>,
}

/// Sorts the jobs nobody runs into lost and to-assign; `released` jobs (a departed owner
/// reported them stopped) are placed like new ones.
fn unheld_jobs(
    cat: &Catalog<'_>,
    released: &HashSet<Job>,
    (prev_conn, prev_task): (&[bool], &[bool]),
    (conn_held, task_held): (&[u32], &[u32]),
) -> Unheld {
    let (nc, nt) = (cat.connectors(), cat.tasks());
    let conn_released =
        |c: u32| released.contains(&Job::Connector(cat.names[c as usize].to_string()));
    let task_released = |t: u32| released.contains(&Job::Task(cat.task_id(t)));
    let (released_conns, lost_conns): (Vec<u32>, Vec<u32>) = (0..nc as u32)
        .filter(|&c| prev_conn[c as usize] && conn_held[c as usize] == 0)
        .partition(|&c| conn_released(c));
    let (released_tasks, lost_tasks): (Vec<u32>, Vec<u32>) = (0..nt as u32)
        .filter(|&t| prev_task[t as usize] && task_held[t as usize] == 0)
        .partition(|&t| task_released(t));
    if !released_conns.is_empty() || !released_tasks.is_empty() {
        tracing::debug!(
            connectors = released_conns.len(),
            tasks = released_tasks.len(),
            "jobs of cleanly departed workers are re-assigned at once"
        );
    }
    let assign_conns: Vec<u32> = (0..nc as u32)
        .filter(|&c| {
            cat.instance[c as usize]
                && conn_held[c as usize] == 0
                && (!prev_conn[c as usize] || released_conns.binary_search(&c).is_ok())
        })
        .collect();
    let assign_tasks: Vec<u32> = (0..nt as u32)
        .filter(|&t| {
            task_held[t as usize] == 0
                && (!prev_task[t as usize] || released_tasks.binary_search(&t).is_ok())
        })
        .collect();
    Unheld {
        lost_conns,
        lost_tasks,
        assign_conns,
        assign_tasks,
    }
}

/// Departed members that leave nothing to wait for: every job they held was released (or
/// they held none).
fn clean_departures(
    state: &CooperativeAssignorState,
    members: &[(&str, &WorkerMetadata)],
    cat: &Catalog<'_>,
    (lost_conns, lost_tasks): (&[u32], &[u32]),
) -> HashSet<String> {
    let lost_set: HashSet<Job> = lost_conns
        .iter()
        .map(|&c| Job::Connector(cat.names[c as usize].to_string()))
        .chain(lost_tasks.iter().map(|&t| Job::Task(cat.task_id(t))))
        .collect();
    state
        .previous_members
        .iter()
        .filter(|m| !members.iter().any(|(id, _)| id == m))
        .filter(|m| {
            state.owners.get(*m).is_none_or(|jobs| {
                jobs.connectors
                    .iter()
                    .all(|c| !lost_set.contains(&Job::Connector(c.clone())))
                    && jobs
                        .tasks
                        .iter()
                        .all(|t| !lost_set.contains(&Job::Task(t.clone())))
            })
        })
        .cloned()
        .collect()
}

/// Load-balancing revocations (unless revoking rounds follow each other too fast, when they
/// are postponed by the backoff delay), or, while a delay runs, only the placement of the jobs
/// to assign on the least loaded members.
fn place(
    state: &mut CooperativeAssignorState,
    cat: &Catalog<'_>,
    (loads, deltas): (&mut [Load], &mut [Delta]),
    (assign_conns, assign_tasks): (&[u32], &[u32]),
    preferred: &[usize],
    now_ms: i64,
) {
    let all: Vec<usize> = (0..loads.len()).collect();
    if state.delay_ms != 0 {
        state.revoked_in_previous = false;
        place_greedy(cat, loads, deltas, &all, assign_conns, assign_tasks);
        return;
    }
    let plan = balance_plan(cat, loads, assign_conns, assign_tasks, preferred);
    let revoke_now = if plan.has_revocations() {
        if state.revoked_in_previous {
            state.successive_revoking_rounds += 1;
            state.delay_ms = state.backoff_ms(state.successive_revoking_rounds);
            if state.delay_ms != 0 {
                state.scheduled_rebalance_ms = now_ms + state.delay_ms as i64;
                tracing::debug!(
                    delay_ms = state.delay_ms,
                    "consecutive revoking rebalance: postponing revocations"
                );
                false
            } else {
                true
            }
        } else {
            state.revoked_in_previous = true;
            true
        }
    } else {
        if state.revoked_in_previous {
            state.revoked_in_previous = false;
            state.successive_revoking_rounds = 0;
        }
        true
    };
    if revoke_now {
        apply_plan(loads, deltas, &plan);
    } else {
        place_greedy(cat, loads, deltas, &all, assign_conns, assign_tasks);
    }
}

/// Each member's [`Assignment`] (what to start, what to stop, the delay), and the leader's
/// memory for the next round: everything assigned after this round plus this round's lost
/// jobs, the revocations, the members and owners.
fn finish_round(
    state: &mut CooperativeAssignorState,
    round: &Round<'_>,
    cat: &Catalog<'_>,
    members: &[(&str, &WorkerMetadata)],
    (mut loads, mut deltas): (Vec<Load>, Vec<Delta>),
    (lost_conns, lost_tasks): (&[u32], &[u32]),
    departed: &HashMap<Job, DepartedOwner>,
) -> BTreeMap<String, Assignment> {
    let mut out = BTreeMap::new();
    let mut owners = BTreeMap::new();
    let mut held_since: HashMap<Job, (String, i32)> =
        HashMap::with_capacity(state.held_since.len());
    let mut new_prev: HashMap<String, PreviousJobs> = HashMap::with_capacity(cat.connectors());
    let mut revoked_conns_all = Vec::new();
    let mut revoked_tasks_all = Vec::new();
    let conn_name = |c: u32| cat.names[c as usize].to_string();
    for (w, (id, _)) in members.iter().enumerate() {
        let d = &mut deltas[w];
        let load = &mut loads[w];
        load.conns.sort_unstable();
        load.tasks.sort_unstable();
        d.add_conns.sort_unstable();
        d.add_tasks.sort_unstable();
        d.revoke_conns.sort_unstable();
        d.revoke_tasks.sort_unstable();
        let mut revoked_connectors: Vec<String> =
            d.revoke_conns.iter().map(|&c| conn_name(c)).collect();
        revoked_connectors.append(&mut d.revoke_unknown_conns);
        let mut revoked_tasks: Vec<ConnectorTaskId> =
            d.revoke_tasks.iter().map(|&t| cat.task_id(t)).collect();
        revoked_tasks.append(&mut d.revoke_unknown_tasks);
        revoked_conns_all.extend(revoked_connectors.iter().cloned());
        revoked_tasks_all.extend(revoked_tasks.iter().cloned());
        out.insert(
            id.to_string(),
            Assignment {
                error: NO_ERROR,
                leader: round.leader_id.to_string(),
                leader_url: round.leader_url.to_string(),
                config_offset: round.config_offset,
                connectors: d.add_conns.iter().map(|&c| conn_name(c)).collect(),
                tasks: d.add_tasks.iter().map(|&t| cat.task_id(t)).collect(),
                revoked_connectors,
                revoked_tasks,
                delay: state.delay_ms,
                static_claims: Vec::new(),
            },
        );
        let jobs = MemberJobs {
            connectors: load.conns.iter().map(|&c| conn_name(c)).collect(),
            tasks: load.tasks.iter().map(|&t| cat.task_id(t)).collect(),
        };
        let all = (jobs.connectors.iter().map(|c| Job::Connector(c.clone())))
            .chain(jobs.tasks.iter().map(|t| Job::Task(t.clone())));
        for job in all {
            let since = match state.held_since.get(&job) {
                Some((owner, since)) if owner == id => *since,
                _ => round.generation,
            };
            held_since.insert(job, (id.to_string(), since));
        }
        owners.insert(id.to_string(), jobs);
    }
    // The memory: everything assigned after this round plus the lost jobs of this round.
    let kept_conns = loads.iter().flat_map(|l| l.conns.iter()).chain(lost_conns);
    for &c in kept_conns {
        new_prev.entry(conn_name(c)).or_default().connector = true;
    }
    let kept_tasks = loads.iter().flat_map(|l| l.tasks.iter()).chain(lost_tasks);
    for &t in kept_tasks {
        let c = cat.task_conn[t as usize];
        new_prev
            .entry(conn_name(c))
            .or_default()
            .tasks
            .push(cat.task_num[t as usize]);
    }
    state.previous = new_prev;
    state.previous_revoked_connectors = revoked_conns_all;
    state.previous_revoked_tasks = revoked_tasks_all;
    state.previous_generation = round.generation;
    state.previous_members = members.iter().map(|(id, _)| id.to_string()).collect();
    state.owners = owners;
    state.held_since = held_since;
    state.member_urls = members
        .iter()
        .map(|(id, m)| (id.to_string(), m.url.clone()))
        .collect();
    state.lost_owners = state
        .lost_jobs
        .iter()
        .filter_map(|j| departed.get(j).map(|o| (j.clone(), o.clone())))
        .collect();
    out
}

/// Who held a job whose owner departed: its URL, the generation of its last round, and the
/// generation since which it held the job (see [`DepartedJob`]).
#[derive(Debug, Clone)]
struct DepartedOwner {
    url: String,
    generation: i32,
    held_since: i32,
}

enum LostOutcome {
    /// Lost jobs stay unassigned (delay running) or there are none.
    Keep,
    /// Lost jobs are placed like new jobs.
    Reassign,
    /// Lost jobs go to these candidate members (indices), the delay having expired.
    ToCandidates(Vec<usize>),
}

/// Lost jobs (Connect's `IncrementalCooperativeAssignor.handleLostAssignments`).
///
/// `clean_departed` are departed members that leave nothing to wait for (Tributary's
/// clean-departure rule): they count as present when deciding whether anybody left.
fn handle_lost(
    state: &mut CooperativeAssignorState,
    member_ids: &[&str],
    clean_departed: &HashSet<String>,
    loads: &[Load],
    any_lost: bool,
    now: i64,
) -> LostOutcome {
    if !any_lost && !state.revoked_in_previous {
        state.reset_delay();
        return LostOutcome::Keep;
    }
    let present: HashSet<&str> = member_ids
        .iter()
        .copied()
        .chain(clean_departed.iter().map(String::as_str))
        .collect();
    if state.scheduled_rebalance_ms <= 0
        && state
            .previous_members
            .iter()
            .all(|m| present.contains(m.as_str()))
    {
        // Nobody left: the jobs were most likely never delivered (failed sync).
        return LostOutcome::Reassign;
    }
    if state.max_delay_ms == 0 {
        return LostOutcome::Reassign;
    }
    if state.scheduled_rebalance_ms > 0 && now >= state.scheduled_rebalance_ms {
        let cands: Vec<usize> = state
            .candidate_workers
            .iter()
            .filter_map(|c| member_ids.iter().position(|m| m == c))
            .collect();
        state.reset_delay();
        state.revoked_in_previous = false;
        if cands.is_empty() {
            LostOutcome::Reassign
        } else {
            LostOutcome::ToCandidates(cands)
        }
    } else {
        for (w, load) in loads.iter().enumerate() {
            if load.conns.is_empty()
                && load.tasks.is_empty()
                && !state.candidate_workers.iter().any(|c| c == member_ids[w])
            {
                state.candidate_workers.push(member_ids[w].to_string());
            }
        }
        state.delay_ms = if now < state.scheduled_rebalance_ms {
            (state.scheduled_rebalance_ms - now).min(state.max_delay_ms as i64) as i32
        } else {
            state.max_delay_ms
        };
        state.scheduled_rebalance_ms = now + state.delay_ms as i64;
        LostOutcome::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_matches_java_exponential_backoff() {
        // Values computed with Java 17 running Kafka's ExponentialBackoff(min(1,max), 40, max, 0).
        let cases: &[(i32, [i32; 6])] = &[
            (0, [0; 6]),
            (1, [1; 6]),
            (2, [2; 6]),
            (40, [40; 6]),
            (41, [40, 41, 41, 41, 41, 41]),
            (1600, [40, 1600, 1600, 1600, 1600, 1600]),
            (300_000, [40, 1600, 64_000, 300_000, 300_000, 300_000]),
            (60_000, [40, 1600, 60_000, 60_000, 60_000, 60_000]),
            (1000, [40, 999, 999, 999, 999, 999]),
            (100_000, [40, 1600, 64_000, 99_999, 99_999, 99_999]),
        ];
        for (max, expected) in cases {
            let s = CooperativeAssignorState::new(*max);
            let got: Vec<i32> = (1..=6).map(|n| s.backoff_ms(n)).collect();
            assert_eq!(got, expected, "max delay {max}");
        }
    }

    #[test]
    fn augment_moves_extras_to_make_room() {
        // c1 holds members 1 and 2 and needs a third: only member 0 is free of c1, but it is
        // full (c0 uses it); c0 moves to member 2, which has room, and c1 takes member 0.
        let mut ex = Extras {
            x: vec![vec![0], vec![1, 2]],
            users: vec![vec![0], vec![1], vec![1]],
            used: vec![1, 1, 1],
            f_extra: 1,
            high_left: 0,
        };
        ex.used[2] = 0; // member 2 has room (pretend it had capacity 2)
        let all = |c: usize, ex: &Extras, out: &mut Vec<u32>| {
            out.extend((0..3u32).filter(|w| !ex.x[c].contains(w)))
        };
        let mut dead = vec![false; 6];
        let no_gain = |_: usize, _: usize| false;
        assert!(ex.augment(1, 3, &all, &no_gain, false, &mut dead));
        assert_eq!(ex.x[0], vec![2]);
        let mut c1 = ex.x[1].clone();
        c1.sort();
        assert_eq!(c1, vec![0, 1, 2]);
        // No room anywhere now: no path, and the visited members are marked dead.
        assert!(!ex.augment(0, 3, &all, &no_gain, false, &mut dead));
        assert!(dead.iter().any(|d| *d));
    }
}
