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
    /// The generation of the last round the owner was a member of: a clean stop is reported
    /// by the owner with this generation (statuses carry the generation they were written in).
    pub generation: i32,
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
    /// The departed owner (URL, last generation) of every job in `lost_jobs`.
    lost_owners: BTreeMap<Job, (String, i32)>,
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
        for (job, (url, generation)) in &self.lost_owners {
            seen.insert(job);
            out.push(DepartedJob {
                job: job.clone(),
                owner_url: url.clone(),
                generation: *generation,
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
                out.push(DepartedJob {
                    job,
                    owner_url: url.clone(),
                    generation: self.previous_generation,
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

/// Load-balancing plan: revocations and placements towards a balanced layout.
#[derive(Debug, Default)]
struct Plan {
    revoke_conns: Vec<(usize, u32)>,
    revoke_tasks: Vec<(usize, u32)>,
    place_conns: Vec<(usize, u32)>,
    place_tasks: Vec<(usize, u32)>,
}

impl Plan {
    fn has_revocations(&self) -> bool {
        !self.revoke_conns.is_empty() || !self.revoke_tasks.is_empty()
    }
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
pub(crate) fn assign_cooperative_subset(
    state: &mut CooperativeAssignorState,
    round: &Round<'_>,
    subset: Option<&JobSubset>,
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
    let w_count = members.len();
    let cat = Catalog::new(round.snapshot, subset);
    let (nc, nt) = (cat.connectors(), cat.tasks());

    // 1. Stale memory check.
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
    let departed: HashMap<Job, (String, i32)> = state
        .departed_jobs(round.members, round.last_completed_generation)
        .into_iter()
        .map(|d| (d.job, (d.owner_url, d.generation)))
        .collect();

    // 2. Active jobs, per member, as dense ids; unconfigured jobs are remembered by name.
    let mut loads: Vec<Load> = vec![Load::default(); w_count];
    let mut deltas: Vec<Delta> = vec![Delta::default(); w_count];
    let mut conn_held = vec![0u32; nc];
    let mut task_held = vec![0u32; nt];
    let mut unknown_conns: HashSet<&str> = HashSet::new();
    let mut unknown_tasks: HashSet<&ConnectorTaskId> = HashSet::new();
    for (w, (_, meta)) in members.iter().enumerate() {
        let Some(alloc) = meta.allocation.as_ref() else {
            continue;
        };
        let load = &mut loads[w];
        for c in &alloc.connectors {
            match cat.conn(c) {
                Some(ci) => load.conns.push(ci),
                None => {
                    if !deltas[w].revoke_unknown_conns.contains(c) {
                        deltas[w].revoke_unknown_conns.push(c.clone());
                    }
                    unknown_conns.insert(c.as_str());
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
            let dense = ci.and_then(|ci| cat.task_in(ci, t.task));
            match dense {
                Some(d) => load.tasks.push(d),
                None => {
                    if !deltas[w].revoke_unknown_tasks.contains(t) {
                        deltas[w].revoke_unknown_tasks.push(t.clone());
                    }
                    unknown_tasks.insert(t);
                }
            }
        }
        load.conns.sort_unstable();
        load.conns.dedup();
        load.tasks.sort_unstable();
        load.tasks.dedup();
        for &c in &load.conns {
            conn_held[c as usize] += 1;
        }
        for &t in &load.tasks {
            task_held[t as usize] += 1;
        }
    }

    // 3. Failed revocation check: a job revoked last round is still running somewhere.
    let failed_revocation = state.previous_revoked_connectors.iter().any(|c| {
        cat.conn(c)
            .map_or(unknown_conns.contains(c.as_str()), |ci| {
                conn_held[ci as usize] > 0
            })
    }) || state.previous_revoked_tasks.iter().any(|t| {
        cat.task(&t.connector, t.task)
            .map_or(unknown_tasks.contains(t), |d| task_held[d as usize] > 0)
    });
    let mut prev_conn = vec![false; nc];
    let mut prev_task = vec![false; nt];
    if failed_revocation {
        tracing::debug!("a previous revocation did not take effect; previous assignment := active");
        for c in 0..nc {
            prev_conn[c] = conn_held[c] > 0;
        }
        for t in 0..nt {
            prev_task[t] = task_held[t] > 0;
        }
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

    // 4-6. Duplicated jobs are revoked from every holder; unconfigured (deleted) ones were
    // already queued for revocation above. `loads` becomes `next`.
    for (w, load) in loads.iter_mut().enumerate() {
        let d = &mut deltas[w];
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
    // Released lost jobs (their departed owner stopped them) are placed like new ones.
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
    let mut assign_conns: Vec<u32> = (0..nc as u32)
        .filter(|&c| {
            cat.instance[c as usize]
                && conn_held[c as usize] == 0
                && (!prev_conn[c as usize] || released_conns.binary_search(&c).is_ok())
        })
        .collect();
    let mut assign_tasks: Vec<u32> = (0..nt as u32)
        .filter(|&t| {
            task_held[t as usize] == 0
                && (!prev_task[t as usize] || released_tasks.binary_search(&t).is_ok())
        })
        .collect();
    // Departed members that leave nothing to wait for: every job they held was released (or
    // they held none).
    let lost_set: HashSet<Job> = lost_conns
        .iter()
        .map(|&c| Job::Connector(cat.names[c as usize].to_string()))
        .chain(lost_tasks.iter().map(|&t| Job::Task(cat.task_id(t))))
        .collect();
    let clean_departed: HashSet<String> = state
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
        .collect();

    // 7. Lost-job handling (§5.4).
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

    // 8-9. Load-balancing revocations, then placement of new and re-assigned jobs.
    let all: Vec<usize> = (0..w_count).collect();
    if state.delay_ms == 0 {
        let plan = balance_plan(&cat, &loads, &assign_conns, &assign_tasks, &preferred);
        let revoke_now = if plan.has_revocations() {
            if state.revoked_in_previous {
                state.successive_revoking_rounds += 1;
                state.delay_ms = state.backoff_ms(state.successive_revoking_rounds);
                if state.delay_ms != 0 {
                    state.scheduled_rebalance_ms = round.now_ms + state.delay_ms as i64;
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
            apply_plan(&mut loads, &mut deltas, &plan);
        } else {
            place_greedy(
                &cat,
                &mut loads,
                &mut deltas,
                &all,
                &assign_conns,
                &assign_tasks,
            );
        }
    } else {
        state.revoked_in_previous = false;
        place_greedy(
            &cat,
            &mut loads,
            &mut deltas,
            &all,
            &assign_conns,
            &assign_tasks,
        );
    }

    // 10. Output deltas and the full post-round assignment.
    let mut out = BTreeMap::new();
    let mut owners = BTreeMap::new();
    let mut new_prev: HashMap<String, PreviousJobs> = HashMap::with_capacity(nc);
    let mut revoked_conns_all = Vec::new();
    let mut revoked_tasks_all = Vec::new();
    for (w, (id, _)) in members.iter().enumerate() {
        let d = &mut deltas[w];
        let load = &mut loads[w];
        load.conns.sort_unstable();
        load.tasks.sort_unstable();
        d.add_conns.sort_unstable();
        d.add_tasks.sort_unstable();
        d.revoke_conns.sort_unstable();
        d.revoke_tasks.sort_unstable();
        let mut revoked_connectors: Vec<String> = d
            .revoke_conns
            .iter()
            .map(|&c| cat.names[c as usize].to_string())
            .collect();
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
                connectors: d
                    .add_conns
                    .iter()
                    .map(|&c| cat.names[c as usize].to_string())
                    .collect(),
                tasks: d.add_tasks.iter().map(|&t| cat.task_id(t)).collect(),
                revoked_connectors,
                revoked_tasks,
                delay: state.delay_ms,
                static_claims: Vec::new(),
            },
        );
        owners.insert(
            id.to_string(),
            MemberJobs {
                connectors: load
                    .conns
                    .iter()
                    .map(|&c| cat.names[c as usize].to_string())
                    .collect(),
                tasks: load.tasks.iter().map(|&t| cat.task_id(t)).collect(),
            },
        );
        for &c in &load.conns {
            new_prev
                .entry(cat.names[c as usize].to_string())
                .or_default()
                .connector = true;
        }
        for &t in &load.tasks {
            let c = cat.task_conn[t as usize];
            new_prev
                .entry(cat.names[c as usize].to_string())
                .or_default()
                .tasks
                .push(cat.task_num[t as usize]);
        }
    }

    // 11. Memory: everything assigned after this round plus the lost jobs of this round.
    for &c in &lost_conns {
        new_prev
            .entry(cat.names[c as usize].to_string())
            .or_default()
            .connector = true;
    }
    for &t in &lost_tasks {
        let c = cat.task_conn[t as usize];
        new_prev
            .entry(cat.names[c as usize].to_string())
            .or_default()
            .tasks
            .push(cat.task_num[t as usize]);
    }
    state.previous = new_prev;
    state.previous_revoked_connectors = revoked_conns_all;
    state.previous_revoked_tasks = revoked_tasks_all;
    state.previous_generation = round.generation;
    state.previous_members = member_ids.iter().map(|s| s.to_string()).collect();
    state.owners = owners;
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

enum LostOutcome {
    /// Lost jobs stay unassigned (delay running) or there are none.
    Keep,
    /// Lost jobs are placed like new jobs.
    Reassign,
    /// Lost jobs go to these candidate members (indices), the delay having expired.
    ToCandidates(Vec<usize>),
}

/// Sheet §5.4 (Java `handleLostAssignments`).
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

fn apply_plan(loads: &mut [Load], deltas: &mut [Delta], plan: &Plan) {
    let mut rc: Vec<Vec<u32>> = vec![Vec::new(); loads.len()];
    let mut rt: Vec<Vec<u32>> = vec![Vec::new(); loads.len()];
    for &(w, c) in &plan.revoke_conns {
        rc[w].push(c);
        deltas[w].revoke_conns.push(c);
    }
    for &(w, t) in &plan.revoke_tasks {
        rt[w].push(t);
        deltas[w].revoke_tasks.push(t);
    }
    for (w, load) in loads.iter_mut().enumerate() {
        if !rc[w].is_empty() {
            rc[w].sort_unstable();
            load.conns.retain(|c| rc[w].binary_search(c).is_err());
        }
        if !rt[w].is_empty() {
            rt[w].sort_unstable();
            load.tasks.retain(|t| rt[w].binary_search(t).is_err());
        }
    }
    for &(w, c) in &plan.place_conns {
        loads[w].conns.push(c);
        deltas[w].add_conns.push(c);
    }
    for &(w, t) in &plan.place_tasks {
        loads[w].tasks.push(t);
        deltas[w].add_tasks.push(t);
    }
}

/// Adds `conns` and `tasks` (sorted dense ids, held by nobody) to the `eligible` members
/// without moving anything: each connector to the member with the fewest connectors, each task
/// to the member with the fewest tasks of that connector, then the fewest tasks (ties: lower
/// member index). On empty members this yields a layout balanced per connector and in total.
fn place_greedy(
    cat: &Catalog<'_>,
    loads: &mut [Load],
    deltas: &mut [Delta],
    eligible: &[usize],
    conns: &[u32],
    tasks: &[u32],
) {
    if eligible.is_empty() {
        return;
    }
    for &c in conns {
        let w = *eligible
            .iter()
            .min_by_key(|&&w| (loads[w].conns.len(), w))
            .expect("non-empty");
        loads[w].conns.push(c);
        deltas[w].add_conns.push(c);
    }
    if tasks.is_empty() {
        return;
    }
    // Count, per member, the tasks of the connectors that receive tasks.
    let nw = loads.len();
    let mut slot = vec![u32::MAX; cat.connectors()];
    let mut k = 0u32;
    for &t in tasks {
        let c = cat.task_conn[t as usize] as usize;
        if slot[c] == u32::MAX {
            slot[c] = k;
            k += 1;
        }
    }
    let mut count = vec![0u32; k as usize * nw];
    for (w, load) in loads.iter().enumerate() {
        for &t in &load.tasks {
            let s = slot[cat.task_conn[t as usize] as usize];
            if s != u32::MAX {
                count[s as usize * nw + w] += 1;
            }
        }
    }
    let mut total: Vec<usize> = loads.iter().map(|l| l.tasks.len()).collect();
    for &t in tasks {
        let s = slot[cat.task_conn[t as usize] as usize] as usize;
        let row = &mut count[s * nw..(s + 1) * nw];
        let w = *eligible
            .iter()
            .min_by_key(|&&w| (row[w], total[w], w))
            .expect("non-empty");
        row[w] += 1;
        total[w] += 1;
        loads[w].tasks.push(t);
        deltas[w].add_tasks.push(t);
    }
}

/// Computes the revocations and placements that lead to a layout where connector totals, task
/// totals and every connector's task counts differ by at most one between members, keeping as
/// many held jobs in place as it can. `assign_*` are the jobs placeable now (held by nobody);
/// other unheld configured jobs (duplicates being revoked) only reserve room.
fn balance_plan(
    cat: &Catalog<'_>,
    loads: &[Load],
    assign_conns: &[u32],
    assign_tasks: &[u32],
    preferred: &[usize],
) -> Plan {
    let nw = loads.len();
    let mut pref = vec![false; nw];
    for &w in preferred {
        pref[w] = true;
    }
    let mut plan = Plan::default();

    // Connector instances: one group balanced on totals.
    {
        let total = cat.instances;
        let (fl, ex) = (total / nw, total % nw);
        let mut order: Vec<usize> = (0..nw).collect();
        order.sort_by_key(|&w| (Reverse(loads[w].conns.len()), w));
        let mut quota = vec![fl; nw];
        for &w in order.iter().take(ex) {
            quota[w] += 1;
        }
        let mut deficit = vec![0usize; nw];
        for w in 0..nw {
            let held = loads[w].conns.len();
            if held > quota[w] {
                let mut cs = loads[w].conns.clone();
                cs.sort_unstable();
                for &c in &cs[quota[w]..] {
                    plan.revoke_conns.push((w, c));
                }
            } else {
                deficit[w] = quota[w] - held;
            }
        }
        let mut holes: Vec<(usize, usize)> = (0..nw)
            .filter(|&w| deficit[w] > 0)
            .map(|w| (w, deficit[w]))
            .collect();
        holes.sort_by_key(|&(w, _)| (!pref[w], w));
        fill_holes(&holes, assign_conns.iter().copied(), &mut plan.place_conns);
    }

    // Tasks: per connector c, q_c = n_c / W on every member plus one "extra" on r_c = n_c % W
    // members; each member's number of extras is balanced too, so totals differ by <= 1.
    let nc = cat.connectors();
    if cat.tasks() == 0 {
        return plan;
    }
    // holders[c] = (member, its sorted held tasks of c).
    let mut holders: Vec<Vec<(u32, Vec<u32>)>> = vec![Vec::new(); nc];
    let mut held_total = vec![0usize; nw];
    for (w, load) in loads.iter().enumerate() {
        let mut ts = load.tasks.clone();
        ts.sort_unstable();
        held_total[w] = ts.len();
        let mut i = 0;
        while i < ts.len() {
            let c = cat.task_conn[ts[i] as usize];
            let mut j = i + 1;
            while j < ts.len() && cat.task_conn[ts[j] as usize] == c {
                j += 1;
            }
            holders[c as usize].push((w as u32, ts[i..j].to_vec()));
            i = j;
        }
    }
    let q: Vec<usize> = (0..nc)
        .map(|c| cat.task_count(c as u32) as usize / nw)
        .collect();
    let r: Vec<usize> = (0..nc)
        .map(|c| cat.task_count(c as u32) as usize % nw)
        .collect();
    let extras: usize = r.iter().sum();
    let (f_extra, high_count) = (extras / nw, extras % nw);
    // Gain edges: members holding more than q_c of c keep one extra job if they get an extra.
    let mut gain_count = vec![0usize; nw];
    for c in 0..nc {
        if r[c] == 0 {
            continue;
        }
        for (w, ts) in &holders[c] {
            if ts.len() > q[c] {
                gain_count[*w as usize] += 1;
            }
        }
    }
    // gains[c] = members holding more than q_c of c (they keep one more job with an extra).
    let gains: Vec<Vec<u32>> = (0..nc)
        .map(|c| {
            if r[c] == 0 {
                return Vec::new();
            }
            holders[c]
                .iter()
                .filter(|(_, ts)| ts.len() > q[c])
                .map(|(w, _)| *w)
                .collect()
        })
        .collect();
    let mut ex = Extras {
        x: vec![Vec::new(); nc],
        users: vec![Vec::new(); nw],
        used: vec![0; nw],
        f_extra,
        high_left: high_count,
    };
    let mut conn_order: Vec<usize> = (0..nc).filter(|&c| r[c] > 0).collect();
    conn_order.sort_by_key(|&c| (Reverse(r[c]), c));
    // Phase 1: keep extras where they are held: greedy, members with fewer keep-candidates first.
    for &c in &conn_order {
        let mut ws = gains[c].clone();
        ws.sort_by_key(|&w| (gain_count[w as usize], w));
        for w in ws {
            if ex.x[c].len() == r[c] {
                break;
            }
            if ex.room(w as usize) {
                ex.take(c, w as usize);
            }
        }
    }
    // ... then augmenting paths over keep edges only: a maximum number of kept extras, i.e.
    // the fewest revocations.
    let gain = |c: usize, w: usize| gains[c].contains(&(w as u32));
    ex.augment_all(
        &conn_order,
        &r,
        nw,
        |c, ex, out| out.extend(gains[c].iter().copied().filter(|w| !ex.x[c].contains(w))),
        &gain,
        false,
    );
    // Phase 2: complete, largest remaining demand first, to the members with the most room.
    let mut by_demand = conn_order.clone();
    by_demand.sort_by_key(|&c| (Reverse(r[c] - ex.x[c].len()), c));
    let mut mark = vec![usize::MAX; nw];
    let mut by_room: Vec<u32> = (0..nw as u32).collect();
    for &c in &by_demand {
        if ex.x[c].len() == r[c] {
            continue;
        }
        for &w in &ex.x[c] {
            mark[w as usize] = c;
        }
        by_room.sort_by_key(|&w| (ex.used[w as usize], w));
        for &w in &by_room {
            if ex.x[c].len() == r[c] {
                break;
            }
            if mark[w as usize] != c && ex.room(w as usize) {
                ex.take(c, w as usize);
                mark[w as usize] = c;
            }
        }
    }
    // Rarely needed: augmenting paths over all edges (a complete layout always exists), first
    // only through steps that keep as many held extras as they give up, then any.
    let any_edge = |c: usize, ex: &Extras, out: &mut Vec<u32>| {
        out.extend((0..nw as u32).filter(|w| !ex.x[c].contains(w)))
    };
    ex.augment_all(&conn_order, &r, nw, any_edge, &gain, true);
    ex.augment_all(&conn_order, &r, nw, any_edge, &gain, false);
    // Last resort (should not happen): ignore the per-member extras budget.
    for &c in &conn_order {
        let mut w = 0;
        while ex.x[c].len() < r[c] && w < nw {
            if !ex.x[c].contains(&(w as u32)) {
                tracing::warn!("cooperative assignor: extras layout incomplete; relaxing totals");
                ex.x[c].push(w as u32);
            }
            w += 1;
        }
    }
    let x = ex.x;

    // Quotas -> revocations and placements.
    let mut quota = vec![0usize; nw];
    let mut held = vec![0usize; nw];
    let mut place_from = 0usize;
    for c in 0..nc {
        quota.iter_mut().for_each(|v| *v = q[c]);
        for &w in &x[c] {
            quota[w as usize] += 1;
        }
        for (w, ts) in &holders[c] {
            let w = *w as usize;
            held[w] = ts.len();
            if ts.len() > quota[w] {
                for &t in &ts[quota[w]..] {
                    plan.revoke_tasks.push((w, t));
                }
            }
        }
        // Placeable tasks of c (assign_tasks is sorted, hence grouped by connector).
        let start = place_from;
        while place_from < assign_tasks.len()
            && cat.task_conn[assign_tasks[place_from] as usize] as usize == c
        {
            place_from += 1;
        }
        let mut to_place = assign_tasks[start..place_from].iter();
        if start < place_from {
            // Holes: biggest first, then members with fewer tasks overall.
            let mut holes: Vec<(usize, usize)> = (0..nw)
                .filter(|&w| quota[w] > held[w])
                .map(|w| (w, quota[w] - held[w]))
                .collect();
            holes.sort_by_key(|&(w, n)| (!pref[w], Reverse(n), held_total[w], w));
            fill_holes(&holes, to_place.by_ref().copied(), &mut plan.place_tasks);
        }
        for (w, _) in &holders[c] {
            held[*w as usize] = 0;
        }
    }
    plan
}

/// Places `jobs` into `holes` (member, free slots) round-robin, one per hole and pass.
fn fill_holes(
    holes: &[(usize, usize)],
    mut jobs: impl Iterator<Item = u32>,
    out: &mut Vec<(usize, u32)>,
) {
    let mut left: Vec<usize> = holes.iter().map(|h| h.1).collect();
    loop {
        let mut any = false;
        for (i, &(w, _)) in holes.iter().enumerate() {
            if left[i] == 0 {
                continue;
            }
            let Some(j) = jobs.next() else {
                return;
            };
            out.push((w, j));
            left[i] -= 1;
            any = true;
        }
        if !any {
            return;
        }
    }
}

/// Which members get an extra task of which connector (one per member and connector), with
/// each member's number of extras within `f_extra` (+1 for `high_left` members).
struct Extras {
    x: Vec<Vec<u32>>,
    users: Vec<Vec<u32>>,
    used: Vec<usize>,
    f_extra: usize,
    high_left: usize,
}

impl Extras {
    fn room(&self, w: usize) -> bool {
        self.used[w] < self.f_extra || (self.used[w] == self.f_extra && self.high_left > 0)
    }

    fn take(&mut self, c: usize, w: usize) {
        if self.used[w] == self.f_extra {
            self.high_left -= 1;
        }
        self.used[w] += 1;
        self.x[c].push(w as u32);
        self.users[w].push(c as u32);
    }

    /// Augments every connector still short of extras until no path is left. `edges(c, ex,
    /// out)` lists the members `c` may move to; with `strict`, a connector may only leave a
    /// member where it is held above its floor (`gain`) if the step into that member also
    /// landed on such a member, so no path loses a kept job.
    fn augment_all(
        &mut self,
        order: &[usize],
        r: &[usize],
        nw: usize,
        edges: impl Fn(usize, &Extras, &mut Vec<u32>),
        gain: &impl Fn(usize, usize) -> bool,
        strict: bool,
    ) {
        if order.iter().all(|&c| self.x[c].len() >= r[c]) {
            return;
        }
        let mut dead = vec![false; 2 * nw];
        loop {
            let mut progress = false;
            for &c in order {
                while self.x[c].len() < r[c] && self.augment(c, nw, &edges, gain, strict, &mut dead)
                {
                    progress = true;
                    dead.iter_mut().for_each(|d| *d = false);
                }
            }
            if !progress {
                return;
            }
        }
    }

    /// BFS for an augmenting path giving `c0` one more extra: `c0` takes member `w1`, whose
    /// user `c1` moves to `w2`, ..., until a member with room. States are (member, whether the
    /// step into it landed on a kept job). States found not to reach any room are marked
    /// `dead` (valid until the next successful augmentation).
    fn augment(
        &mut self,
        c0: usize,
        nw: usize,
        edges: &impl Fn(usize, &Extras, &mut Vec<u32>),
        gain: &impl Fn(usize, usize) -> bool,
        strict: bool,
        dead: &mut [bool],
    ) -> bool {
        let mut parent: Vec<Option<(usize, Option<usize>)>> = vec![None; 2 * nw];
        let mut visited = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        let mut buf = Vec::new();
        let state = |c: usize, w: usize| 2 * w + usize::from(!strict || gain(c, w));
        let mut end = None;
        edges(c0, self, &mut buf);
        for &w in &buf {
            let s = state(c0, w as usize);
            if !dead[s] && parent[s].is_none() {
                parent[s] = Some((c0, None));
                visited.push(s);
                if self.room(w as usize) {
                    end = Some(s);
                    break;
                }
                queue.push_back(s);
            }
        }
        'bfs: while end.is_none() {
            let Some(s) = queue.pop_front() else {
                break;
            };
            let (w, landed_on_gain) = (s / 2, s % 2 == 1);
            for i in 0..self.users[w].len() {
                let c = self.users[w][i] as usize;
                if strict && !landed_on_gain && gain(c, w) {
                    continue;
                }
                buf.clear();
                edges(c, self, &mut buf);
                for &w2 in &buf {
                    let s2 = state(c, w2 as usize);
                    if !dead[s2] && parent[s2].is_none() {
                        parent[s2] = Some((c, Some(s)));
                        visited.push(s2);
                        if self.room(w2 as usize) {
                            end = Some(s2);
                            break 'bfs;
                        }
                        queue.push_back(s2);
                    }
                }
            }
        }
        let Some(mut s) = end else {
            for s in visited {
                dead[s] = true;
            }
            return false;
        };
        let w_end = s / 2;
        if self.used[w_end] == self.f_extra {
            self.high_left -= 1;
        }
        self.used[w_end] += 1;
        loop {
            let w = s / 2;
            let (c, from) = parent[s].expect("on path");
            self.x[c].push(w as u32);
            self.users[w].push(c as u32);
            match from {
                None => break,
                Some(ps) => {
                    // c gives up the previous member, which the previous connector takes.
                    let prev = ps / 2;
                    self.x[c].retain(|&v| v as usize != prev);
                    self.users[prev].retain(|&v| v as usize != c);
                    s = ps;
                }
            }
        }
        true
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
