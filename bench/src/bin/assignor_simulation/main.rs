//! `assignor-simulation`: the incremental cooperative assignor (KIP-415) and the worker's side
//! of the group protocol driven through a simulated group of many workers, with no Kafka: a
//! worker joining, a worker leaving and a rolling restart of every worker, on a large cluster
//! (default 500 workers x 10,000 connectors x 10 tasks = 100,000 tasks). With `--grid`, the
//! cost of one join round as a function of workers x tasks instead, plotted as an SVG.
//!
//! # What is real and what is simulated
//!
//! Real code (the crates' public functions, unchanged):
//! - the leader's assignor: [`perform_assignment`] over a [`CooperativeAssignorState`], which
//!   runs the config-offset check (a no-op here: every member is at the leader's offset) and
//!   then `tributary_group::assignor::assign_cooperative` with a `Round`;
//! - Tributary's clean-departure rule on the leader: [`CooperativeAssignorState::departed_jobs`]
//!   and [`CooperativeAssignorState::release`];
//! - the wire: members encode their metadata (`sessioned`, V2, with the jobs they hold as the
//!   allocation, as KIP-415 members do), the leader decodes them ([`decode_members`]), computes
//!   the owners ([`owners_of`]) and encodes the assignments ([`encode_assignments`]); members
//!   decode theirs ([`Assignment::decode`]);
//! - the member's side: each member applies its assignment with the worker coordinator's
//!   [`delta`] (`tributary_runtime::herder::coordinator::delta`): it stops the revoked jobs and
//!   holds what it held minus the revoked plus the assigned.
//!
//! Modelled, because it is not reachable from outside the runtime (`WorkerCoordinator::round`
//! and its private `lead` need a group client and read the wall clock, and the herder's loop
//! needs a whole worker), faithfully to `crates/runtime/src/herder/coordinator.rs` and
//! `herder/distributed/herder_loop.rs`:
//! - the group (the broker's side): every membership change triggers a round in which every
//!   present member joins; rounds are instantaneous in simulated time. The leader is the first
//!   member to have joined and stays leader until it leaves; then the longest-standing member
//!   leads, with a fresh assignor state (non-leaders reset theirs every round, as the
//!   coordinator does). Member ids are Kafka-like (`connect-1-<uuid>`, deterministic), new at
//!   every join: a restarted worker comes back with a new member id and the same REST URL
//!   (`http://worker-NNNN:8083/`, its Connect worker id), holding nothing;
//! - the leader's `last_completed_generation` is its own last completed generation (-1 for a
//!   member that has not completed one);
//! - the follow-up round: a round in which any member had jobs revoked is followed at once by
//!   another round (the herder rejoins after revocations); an assignment's `delay` (ms)
//!   schedules a rejoin of every member at `now + delay` in simulated time, cancelled or
//!   re-armed by the next round's assignment (as the herder's `scheduled_rejoin`). Nothing
//!   sleeps: the simulated clock (ms) jumps to the next event;
//! - departures, two ways (`--departures`): `java` = no evidence that the departed worker
//!   stopped its jobs (a crash, or Java Connect's rule for every departure): its jobs are lost
//!   and wait `scheduled.rebalance.max.delay.ms` (`--delay-ms`, default 300,000 ms, Connect's
//!   default) for it to return; `clean` = a graceful stop that wrote UNASSIGNED statuses with
//!   its worker id and last generation (what a stopping Tributary worker writes), which the
//!   leader's evidence check accepts, so the jobs are released and placed at once. The status
//!   store is modelled by that rule only (the departed URL and its last generation).
//!
//! # Scenarios (each from the same balanced start)
//!
//! The start: `--workers` workers join at t = 0 and the first round assigns every job; the
//! layout is checked to be balanced. Then:
//! - `join`: one new worker joins;
//! - `leave`: the worker in the middle of the join order (never the leader) leaves; with `java`
//!   departures its jobs are reassigned when the delay expires (simulated 300 s later);
//! - `rolling`: every worker in turn, from the highest worker number down as a StatefulSet
//!   rolls (so the leader, worker 0, goes last), leaves and rejoins `--restart-down-ms` later
//!   (default 10,000 ms, well within the delay) with the same URL; the next worker leaves
//!   `--restart-gap-ms` (default 10,000 ms) after the previous one rejoined.
//!
//! After the last event the simulation runs until no round is pending (no follow-up, no
//! scheduled rejoin), at most `--max-rounds` rounds per event.
//!
//! # What is reported (one Markdown row per scenario and departure rule)
//!
//! - **balanced**: every connector and every task held by exactly one member, the members'
//!   task counts within 1 of each other and their connector counts within 1.
//! - **rounds to balanced**: rounds from the scenario's first round up to the one after which
//!   the layout is balanced and stays so to the end; **after the last event**: the same counted
//!   from the last membership change (the last rejoin of a rolling restart), with the simulated
//!   time (s) from that change to the balancing round.
//! - **assignor ms/round** (mean, max): wall-clock time of the leader's assignor step per round
//!   (`departed_jobs`, the evidence check, `release`, `perform_assignment`); **leader
//!   ms/round** (mean): the leader's whole step between JoinGroup and SyncGroup (decoding the
//!   members' metadata, the assignor step, `owners_of`, encoding the assignments).
//! - **revoked**: task revocations sent to members. **needless**: revocations no balanced
//!   target needed, per round: with `N` members and `T` configured tasks, a balanced target
//!   gives `T mod N` members `ceil(T/N)` tasks and the others `floor(T/N)`; a member holding `c`
//!   tasks before the round may lose `c - target` of them; the needless revocations of a round
//!   are its revocations minus the most that any balanced target allows (the floors going to
//!   the members where a floor explains one more revocation). This is "a task moved off a worker
//!   that was not leaving (it is in the round) and whose count was not above the balanced
//!   ceiling", with the remainder counted right: when more than `T mod N` members sit at the
//!   ceiling, some of them must give one task up. Revoking rounds during a delay, when lost
//!   tasks are unassigned, are judged against the same `T`. Only the members' totals are
//!   judged: Tributary's assignor also spreads every connector's tasks over the members (any
//!   two members' counts of one connector within 1), and a revocation that only this rule
//!   needs counts as needless here (for example when the tasks a departed worker leaves behind
//!   may only go to some of the remaining workers, which then pass others on).
//! - **moves**: task starts on a worker (by worker id, i.e. URL) other than the one that last
//!   ran the task, over the whole scenario (a task going back to the same worker after a
//!   restart is not a move); **min moves**: the fewest tasks whose worker must differ between
//!   the start and a balanced layout on the workers present at the end (every task of a worker
//!   that left and did not come back, plus the excess of each remaining worker over a balanced
//!   target chosen to keep the most in place; 0 for a rolling restart); **moved at end**:
//!   tasks whose worker at the end differs from the start.
//! - **unassigned task·s**: the integral over simulated time of the number of tasks that no
//!   member holds (tasks of a departed worker waiting for it or for the delay; a restart's own
//!   down time counts too).
//! - **wall s**: wall-clock time of the scenario's simulation (rounds plus the simulation's own
//!   bookkeeping).
//!
//! # Grid (`--grid`)
//!
//! For every `--grid-workers` count `W` and `--grid-tasks` total `T` (connectors of `--tasks`
//! tasks each, `T / tasks` connectors): a balanced start of `W` workers, then one worker joins;
//! the leader's assignor step of that join round (the revoking round) and of its follow-up round
//! (the assigning round) is timed `--grid-iterations` times on copies of the same state and
//! inputs (mean, ms). The join round's cost is written as an SVG line chart (x: tasks, y: ms,
//! one line per worker count) to `--plot` (default `docs/assignor-cost.svg`); the tables go to
//! stdout.
//!
//! Times are wall-clock on the machine that runs the simulation (one thread), in ms per round
//! unless labelled s; simulated times are in ms internally and printed in s.
//!
//! Progress goes to stderr, the results as Markdown to stdout. Run with
//! `cargo run --release -p tributary-bench --bin assignor-simulation -- [--workers N]
//! [--connectors N] [--tasks N] [--delay-ms MS] [--grid [--plot PATH]]`. This is a measurement,
//! not a test: nothing is asserted beyond the balanced start.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use tributary_bench::say;
use tributary_bench::table::Table;
use tributary_group::assignor::{
    decode_members, encode_assignments, perform_assignment, ConfigSnapshot,
    CooperativeAssignorState, Job, RoundInput,
};
use tributary_group::{Assignment, ConnectProtocol, WorkerMetadata};
use tributary_runtime::herder::coordinator::{delta, owners_of};

/// The protocol the simulated group runs (KIP-415 with sessions, V2).
const PROTOCOL: ConnectProtocol = ConnectProtocol::Sessioned;

/// No worker (a task never run yet).
const NOBODY: u32 = u32::MAX;

/// Command-line options.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "assignor-simulation",
    about = "The incremental cooperative assignor and the worker's group logic over a simulated group (no Kafka): join, leave and rolling restart of a large cluster; --grid: join-round cost over workers x tasks, plotted as SVG."
)]
pub struct Args {
    /// Workers in the balanced start.
    #[arg(long, default_value_t = 500)]
    pub workers: usize,
    /// Connectors.
    #[arg(long, default_value_t = 10_000)]
    pub connectors: usize,
    /// Tasks of every connector.
    #[arg(long, default_value_t = 10)]
    pub tasks: u32,
    /// `scheduled.rebalance.max.delay.ms` of the workers (simulated ms).
    #[arg(long, default_value_t = 300_000)]
    pub delay_ms: i32,
    /// The scenarios run, in order (`join`, `leave`, `rolling`).
    #[arg(long, value_delimiter = ',', default_value = "join,leave,rolling")]
    pub scenarios: Vec<String>,
    /// The departure rules for `leave` and `rolling` (`java`: lost jobs wait for the delay;
    /// `clean`: a graceful stop's evidence releases them at once).
    #[arg(long, value_delimiter = ',', default_value = "java,clean")]
    pub departures: Vec<String>,
    /// Rolling restart: simulated ms a worker is out of the group (leave to rejoin).
    #[arg(long, default_value_t = 10_000)]
    pub restart_down_ms: i64,
    /// Rolling restart: simulated ms from a worker's rejoin to the next worker's leave.
    #[arg(long, default_value_t = 10_000)]
    pub restart_gap_ms: i64,
    /// Give up on a scenario after this many rounds following one event.
    #[arg(long, default_value_t = 100)]
    pub max_rounds: usize,
    /// Measure the join round's cost over a grid of workers x tasks and plot it, instead of
    /// running the scenarios.
    #[arg(long)]
    pub grid: bool,
    /// Grid: worker counts.
    #[arg(long, value_delimiter = ',', default_value = "10,50,100,250,500")]
    pub grid_workers: Vec<usize>,
    /// Grid: total task counts (each a multiple of --tasks).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,50000,100000")]
    pub grid_tasks: Vec<usize>,
    /// Grid: timed runs of each round (mean reported).
    #[arg(long, default_value_t = 5)]
    pub grid_iterations: usize,
    /// Grid: where the SVG plot is written.
    #[arg(long, default_value = "docs/assignor-cost.svg")]
    pub plot: PathBuf,
}

mod grid;
use grid::grid;

fn main() -> ExitCode {
    tributary_bench::exit_status("assignor-simulation", run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), String> {
    if args.workers == 0 || args.connectors == 0 || args.tasks == 0 {
        return Err("--workers, --connectors and --tasks must be positive".into());
    }
    if args.grid {
        return grid(args);
    }
    scenarios(args)
}

/// How a departed worker's jobs are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// No evidence of a clean stop: lost jobs wait for the delay (Java's rule; a crash).
    Java,
    /// A graceful stop whose UNASSIGNED statuses the leader accepts: jobs released at once.
    Clean,
}

impl Departure {
    fn parse(s: &str) -> Result<Departure, String> {
        match s {
            "java" => Ok(Departure::Java),
            "clean" => Ok(Departure::Clean),
            _ => Err(format!("unknown departure rule {s:?} (java, clean)")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Departure::Java => "java",
            Departure::Clean => "clean",
        }
    }
}

/// One simulated worker process while it is a member of the group.
#[derive(Debug, Clone)]
pub struct Worker {
    /// Worker number (identity across restarts).
    pub id: u32,
    /// Member id of this incarnation.
    pub member_id: String,
    /// Advertised REST URL (the Connect worker id is its `host:port`).
    pub url: String,
    /// The jobs it holds (what goes into its JoinGroup allocation).
    pub held: Assignment,
    /// Its last completed generation (-1 before the first).
    pub last_completed: i32,
}

/// Counters of one scenario.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Rounds run.
    pub rounds: usize,
    /// Assignor step per round, ms.
    pub assignor_ms: Vec<f64>,
    /// Leader's whole step per round, ms.
    pub leader_ms: Vec<f64>,
    /// Task revocations sent.
    pub revoked: usize,
    /// Revocations no balanced target needed.
    pub needless: usize,
    /// Task starts on a worker other than its last runner.
    pub moves: usize,
    /// Connector starts on a worker other than its last runner.
    pub connector_moves: usize,
    /// Unassigned task-milliseconds (simulated).
    pub unassigned_task_ms: f64,
    /// (round number, simulated ms) after which the layout has been balanced; `None` if it is
    /// not balanced after the last round.
    pub balanced_since: Option<(usize, i64)>,
    /// (round number before it, simulated ms) of the last membership change.
    pub last_event: (usize, i64),
    /// The slowest round's assignor ms, generation, tasks revoked and tasks assigned.
    pub slowest: (f64, i32, usize, usize),
}

/// The simulated group, its workers and the leader's memory.
#[derive(Clone)]
pub struct Sim {
    snapshot: ConfigSnapshot,
    conn_index: Arc<HashMap<String, u32>>,
    tasks_per_connector: u32,
    total_tasks: usize,
    departure: Departure,
    max_rounds: usize,
    /// The leader's assignor memory (reset when leadership moves).
    state: CooperativeAssignorState,
    leader: Option<String>,
    /// Present members in join order.
    members: Vec<Worker>,
    generation: i32,
    now: i64,
    follow_up: bool,
    scheduled: Option<i64>,
    /// URL -> last generation of workers that stopped cleanly (the evidence in the statuses).
    clean_stops: HashMap<String, i32>,
    incarnations: Vec<u32>,
    /// Worker that last ran each task (dense index) / connector.
    last_task_runner: Vec<u32>,
    last_conn_runner: Vec<u32>,
    stats: Stats,
}

/// What one round did (progress output).
#[derive(Debug, Clone, Copy)]
struct RoundSummary {
    revoked: usize,
    assigned: usize,
    delay: i32,
    balanced: bool,
    assignor_ms: f64,
}

/// The layout after a round.
struct Layout {
    balanced: bool,
    /// Worker id holding each task (dense index), `NOBODY` if none.
    task_owner: Vec<u32>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A Kafka-like member id (`<client id>-<uuid>`), deterministic per worker and incarnation.
fn member_id(worker: u32, incarnation: u32) -> String {
    let a = splitmix(((worker as u64) << 32) | incarnation as u64);
    let b = splitmix(a);
    format!(
        "connect-1-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

fn worker_url(worker: u32) -> String {
    format!("http://worker-{worker:04}:8083/")
}

impl Sim {
    /// A group of `workers` workers that joined at t = 0 and had every job of the snapshot
    /// assigned; errors if that does not end balanced.
    fn start(
        workers: usize,
        connectors: usize,
        tasks: u32,
        delay_ms: i32,
        max_rounds: usize,
    ) -> Result<Sim, String> {
        let snapshot = ConfigSnapshot {
            offset: 1,
            connectors: (0..connectors)
                .map(|i| (format!("connector-{i:05}"), tasks))
                .collect(),
        };
        let conn_index: HashMap<String, u32> = snapshot
            .connectors
            .keys()
            .enumerate()
            .map(|(i, c)| (c.clone(), i as u32))
            .collect();
        let total_tasks = connectors * tasks as usize;
        let mut sim = Sim {
            snapshot,
            conn_index: Arc::new(conn_index),
            tasks_per_connector: tasks,
            total_tasks,
            departure: Departure::Java,
            max_rounds,
            state: CooperativeAssignorState::new(delay_ms),
            leader: None,
            members: Vec::new(),
            generation: 0,
            now: 0,
            follow_up: false,
            scheduled: None,
            clean_stops: HashMap::new(),
            incarnations: Vec::new(),
            last_task_runner: vec![NOBODY; total_tasks],
            last_conn_runner: vec![NOBODY; connectors],
            stats: Stats::default(),
        };
        for w in 0..workers as u32 {
            sim.join(w);
        }
        sim.event("start", None, false)?;
        if !sim.layout().balanced {
            return Err(format!(
                "the start of {workers} workers is not balanced after {} rounds",
                sim.stats.rounds
            ));
        }
        Ok(sim)
    }

    /// A copy of this (balanced) group for a scenario: counters reset.
    fn scenario(&self, departure: Departure) -> Sim {
        let mut s = self.clone();
        s.departure = departure;
        s.stats = Stats::default();
        s
    }

    fn task_index(&self, connector: &str, task: u32) -> usize {
        self.conn_index[connector] as usize * self.tasks_per_connector as usize + task as usize
    }

    /// Tasks held by the present members.
    fn running_tasks(&self) -> usize {
        self.members.iter().map(|w| w.held.tasks.len()).sum()
    }

    /// Moves the simulated clock to `t`, accumulating the unassigned task time.
    fn advance(&mut self, t: i64) {
        if t > self.now {
            let unassigned = self.total_tasks.saturating_sub(self.running_tasks());
            self.stats.unassigned_task_ms += unassigned as f64 * (t - self.now) as f64;
            self.now = t;
        }
    }

    /// Worker `id` (re)joins, holding nothing, with a new member id.
    fn join(&mut self, id: u32) {
        let i = id as usize;
        if self.incarnations.len() <= i {
            self.incarnations.resize(i + 1, 0);
        }
        self.incarnations[i] += 1;
        let url = worker_url(id);
        self.clean_stops.remove(&url);
        self.members.push(Worker {
            id,
            member_id: member_id(id, self.incarnations[i]),
            url,
            held: Assignment::default(),
            last_completed: -1,
        });
        self.stats.last_event = (self.stats.rounds, self.now);
    }

    /// Worker `id` leaves (cleanly, with evidence, under [`Departure::Clean`]).
    fn leave(&mut self, id: u32) {
        let Some(pos) = self.members.iter().position(|w| w.id == id) else {
            return;
        };
        let w = self.members.remove(pos);
        if self.departure == Departure::Clean {
            self.clean_stops.insert(w.url, w.last_completed);
        }
        self.stats.last_event = (self.stats.rounds, self.now);
    }

    /// One round: every present member joins with what it holds; the leader assigns; every
    /// member applies its assignment.
    fn round(&mut self) -> Result<RoundSummary, String> {
        if self.members.is_empty() {
            return Err("no member left".into());
        }
        // Leadership: kept while the leader is present, else the longest-standing member leads
        // with a fresh memory.
        let present = |id: &str| self.members.iter().any(|w| w.member_id == id);
        if !self.leader.as_deref().is_some_and(present) {
            self.leader = Some(self.members[0].member_id.clone());
            self.state.reset();
        }
        let leader_id = self.leader.clone().unwrap_or_default();
        let leader_pos = self
            .members
            .iter()
            .position(|w| w.member_id == leader_id)
            .unwrap_or(0);
        let generation = self.generation + 1;

        // JoinGroup: every member's metadata, on the wire.
        let join: Vec<(String, Vec<u8>)> = self
            .members
            .iter()
            .map(|w| {
                let mut m = WorkerMetadata::new(w.url.clone(), self.snapshot.offset);
                m.allocation = Some(w.held.clone());
                m.encode(PROTOCOL).map(|b| (w.member_id.clone(), b))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let leader_snapshot = self.snapshot.clone();
        let last_completed = self.members[leader_pos].last_completed;

        // The leader's step (WorkerCoordinator::round / lead for `sessioned`).
        let leader_start = Instant::now();
        let members = decode_members(&join).map_err(|e| e.to_string())?;
        let assignor_start = Instant::now();
        let departed = self.state.departed_jobs(&members, last_completed);
        if !departed.is_empty() && self.departure == Departure::Clean {
            let jobs: Vec<Job> = departed
                .iter()
                .filter(|d| self.clean_stops.get(&d.owner_url) == Some(&d.generation))
                .map(|d| d.job.clone())
                .collect();
            self.state.release(jobs);
        }
        let input = RoundInput {
            leader_id: &leader_id,
            members: &members,
            leader_snapshot,
            last_completed_generation: last_completed,
            generation,
            now_ms: self.now,
        };
        let snapshot = &self.snapshot;
        let assignments = perform_assignment(&mut self.state, input, || snapshot.clone());
        let assignor_ms = assignor_start.elapsed().as_secs_f64() * 1e3;
        let owners = owners_of(&members, &assignments, PROTOCOL);
        let sync = encode_assignments(&assignments, PROTOCOL).map_err(|e| e.to_string())?;
        let leader_ms = leader_start.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(owners);
        self.generation = generation;

        // SyncGroup: every member decodes and applies its assignment.
        let sync: HashMap<String, Vec<u8>> = sync.into_iter().collect();
        let held_before: Vec<usize> = self.members.iter().map(|w| w.held.tasks.len()).collect();
        let mut revoked_per_member = vec![0usize; self.members.len()];
        let (mut any_revoked, mut delay, mut assigned) = (false, 0, 0);
        let mut members_now = std::mem::take(&mut self.members);
        for (i, w) in members_now.iter_mut().enumerate() {
            let bytes = sync
                .get(&w.member_id)
                .ok_or_else(|| format!("no assignment for {}", w.member_id))?;
            let a = Assignment::decode(bytes).map_err(|e| e.to_string())?;
            let d = delta(PROTOCOL, &w.held, &a, (&w.held.connectors, &w.held.tasks));
            any_revoked |= !d.stop_connectors.is_empty() || !d.stop_tasks.is_empty();
            revoked_per_member[i] = d.stop_tasks.len();
            assigned += a.tasks.len();
            for t in &a.tasks {
                let k = self.task_index(&t.connector, t.task);
                let last = self.last_task_runner[k];
                if last != NOBODY && last != w.id {
                    self.stats.moves += 1;
                }
                self.last_task_runner[k] = w.id;
            }
            for c in &a.connectors {
                let k = self.conn_index[c] as usize;
                let last = self.last_conn_runner[k];
                if last != NOBODY && last != w.id {
                    self.stats.connector_moves += 1;
                }
                self.last_conn_runner[k] = w.id;
            }
            w.held = d.held;
            w.last_completed = generation;
            delay = a.delay;
        }
        self.members = members_now;
        self.follow_up = any_revoked;
        self.scheduled = (delay > 0).then(|| self.now + delay as i64);

        let revoked: usize = revoked_per_member.iter().sum();
        self.stats.rounds += 1;
        self.stats.assignor_ms.push(assignor_ms);
        self.stats.leader_ms.push(leader_ms);
        self.stats.revoked += revoked;
        self.stats.needless += needless(&held_before, &revoked_per_member, self.total_tasks);
        if assignor_ms > self.stats.slowest.0 {
            self.stats.slowest = (assignor_ms, generation, revoked, assigned);
        }
        let balanced = self.layout().balanced;
        if !balanced {
            self.stats.balanced_since = None;
        } else if self.stats.balanced_since.is_none() {
            self.stats.balanced_since = Some((self.stats.rounds, self.now));
        }
        Ok(RoundSummary {
            revoked,
            assigned,
            delay,
            balanced,
            assignor_ms,
        })
    }

    /// One membership change's round, printed, then the rounds it leads to (printed too when
    /// `verbose`) up to `until`.
    fn event(&mut self, what: &str, until: Option<i64>, verbose: bool) -> Result<(), String> {
        let s = self.round()?;
        if verbose {
            self.print_round(what, &s);
        }
        let mut n = 0;
        loop {
            let due =
                self.follow_up || self.scheduled.is_some_and(|t| until.is_none_or(|u| t <= u));
            if !due {
                break;
            }
            if !self.follow_up {
                if let Some(t) = self.scheduled.take() {
                    self.advance(t);
                }
            }
            let what = if self.follow_up {
                "follow-up"
            } else {
                "scheduled rejoin"
            };
            let s = self.round()?;
            if verbose {
                self.print_round(what, &s);
            }
            n += 1;
            if n >= self.max_rounds {
                return Err(format!(
                    "no convergence: {n} rounds after one event (generation {})",
                    self.generation
                ));
            }
        }
        if let Some(u) = until {
            self.advance(u);
        }
        Ok(())
    }

    fn print_round(&self, what: &str, s: &RoundSummary) {
        say(format!(
            "  gen {} t={:.3} s {what}: {} members, revoked {} tasks, assigned {}, delay {} ms, {}, assignor {:.1} ms",
            self.generation,
            self.now as f64 / 1e3,
            self.members.len(),
            s.revoked,
            s.assigned,
            s.delay,
            if s.balanced { "balanced" } else { "not balanced" },
            s.assignor_ms
        ));
    }

    /// Who holds what, and whether it is balanced.
    fn layout(&self) -> Layout {
        let mut task_owner = vec![NOBODY; self.total_tasks];
        let mut task_holders = vec![0u8; self.total_tasks];
        let mut conn_holders = vec![0u8; self.conn_index.len()];
        let (mut tmin, mut tmax, mut cmin, mut cmax) = (usize::MAX, 0, usize::MAX, 0);
        for w in &self.members {
            for t in &w.held.tasks {
                let k = self.task_index(&t.connector, t.task);
                task_owner[k] = w.id;
                task_holders[k] = task_holders[k].saturating_add(1);
            }
            for c in &w.held.connectors {
                let k = self.conn_index[c] as usize;
                conn_holders[k] = conn_holders[k].saturating_add(1);
            }
            tmin = tmin.min(w.held.tasks.len());
            tmax = tmax.max(w.held.tasks.len());
            cmin = cmin.min(w.held.connectors.len());
            cmax = cmax.max(w.held.connectors.len());
        }
        let balanced = task_holders.iter().all(|&n| n == 1)
            && conn_holders.iter().all(|&n| n == 1)
            && tmax <= tmin + 1
            && cmax <= cmin + 1;
        Layout {
            balanced,
            task_owner,
        }
    }
}

/// The revocations of one round that no balanced target needed: `held[i]` tasks held by member
/// `i` before the round, `revoked[i]` revoked from it, `total` configured tasks (see the module
/// documentation).
fn needless(held: &[usize], revoked: &[usize], total: usize) -> usize {
    let n = held.len();
    if n == 0 {
        return 0;
    }
    let (floor, rem) = (total / n, total % n);
    let ceil = if rem == 0 { floor } else { floor + 1 };
    let (mut allowed, mut gain) = (0usize, 0usize);
    for (&c, &x) in held.iter().zip(revoked) {
        let over_ceil = c.saturating_sub(ceil);
        allowed += x.min(over_ceil);
        // A floor target instead of the ceiling allows one more revocation here.
        if rem > 0 && c >= ceil && x > over_ceil {
            gain += 1;
        }
    }
    allowed += gain.min(n - rem);
    revoked.iter().sum::<usize>().saturating_sub(allowed)
}

/// The fewest tasks whose worker must change between `start` (worker id of every task) and a
/// balanced layout on the workers `end`.
fn min_moves(start: &[u32], end: &[u32]) -> usize {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for &w in start {
        *counts.entry(w).or_default() += 1;
    }
    let total = start.len();
    let departed: usize = counts
        .iter()
        .filter(|(w, _)| !end.contains(w))
        .map(|(_, n)| n)
        .sum();
    let mut remaining: Vec<usize> = end
        .iter()
        .map(|w| counts.get(w).copied().unwrap_or(0))
        .collect();
    remaining.sort_unstable_by(|a, b| b.cmp(a));
    let n = remaining.len().max(1);
    let (floor, rem) = (total / n, total % n);
    let excess: usize = remaining
        .iter()
        .enumerate()
        .map(|(i, &c)| c.saturating_sub(if i < rem { floor + 1 } else { floor }))
        .sum();
    departed + excess
}

/// The result of one scenario.
struct Outcome {
    name: String,
    events: usize,
    stats: Stats,
    min_moves: usize,
    moved_at_end: usize,
    wall_s: f64,
}

fn scenarios(args: &Args) -> Result<(), String> {
    let departures: Vec<Departure> = args
        .departures
        .iter()
        .map(|d| Departure::parse(d))
        .collect::<Result<_, _>>()?;
    let total_tasks = args.connectors * args.tasks as usize;
    say(format!(
        "balanced start: {} workers, {} connectors x {} tasks ({} tasks), delay {} ms",
        args.workers,
        thousands(args.connectors),
        args.tasks,
        thousands(total_tasks),
        args.delay_ms
    ));
    let started = Instant::now();
    let base = Sim::start(
        args.workers,
        args.connectors,
        args.tasks,
        args.delay_ms,
        args.max_rounds,
    )?;
    say(format!(
        "balanced start in {} round(s), assignor {:.1} ms, wall {:.1} s",
        base.stats.rounds,
        base.stats.assignor_ms.iter().sum::<f64>(),
        started.elapsed().as_secs_f64()
    ));
    let start_owner = base.layout().task_owner;

    let mut outcomes = Vec::new();
    for scenario in &args.scenarios {
        let runs: Vec<Option<Departure>> = match scenario.as_str() {
            "join" => vec![None],
            "leave" | "rolling" => departures.iter().copied().map(Some).collect(),
            s => return Err(format!("unknown scenario {s:?} (join, leave, rolling)")),
        };
        for departure in runs {
            let mut sim = base.scenario(departure.unwrap_or(Departure::Java));
            let name = match departure {
                None => format!("{scenario}: 1 worker joins"),
                Some(d) if scenario == "leave" => format!("leave ({}): 1 worker leaves", d.name()),
                Some(d) => format!("rolling ({}): {} workers restart", d.name(), args.workers),
            };
            say(&name);
            let t = Instant::now();
            let events = match scenario.as_str() {
                "join" => {
                    sim.join(args.workers as u32);
                    sim.event("worker joins", None, true)?;
                    1
                }
                "leave" => {
                    let id = sim.members[sim.members.len() / 2].id;
                    sim.leave(id);
                    sim.event(&format!("worker-{id:04} leaves"), None, true)?;
                    1
                }
                _ => rolling(&mut sim, args, t)?,
            };
            let end = sim.layout();
            let ids: Vec<u32> = sim.members.iter().map(|w| w.id).collect();
            let outcome = Outcome {
                name,
                events,
                min_moves: min_moves(&start_owner, &ids),
                moved_at_end: start_owner
                    .iter()
                    .zip(&end.task_owner)
                    .filter(|(a, b)| a != b)
                    .count(),
                stats: sim.stats,
                wall_s: t.elapsed().as_secs_f64(),
            };
            let (ms, generation, revoked, assigned) = outcome.stats.slowest;
            let mut sorted = outcome.stats.assignor_ms.clone();
            sorted.sort_by(f64::total_cmp);
            let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
            say(format!(
                "  done in {:.1} s wall, {} rounds; assignor ms p50 {:.1}, p99 {:.1}; slowest round: generation {generation}, {ms:.1} ms, revoked {revoked} tasks, assigned {assigned}",
                outcome.wall_s, outcome.stats.rounds, pct(0.5), pct(0.99)
            ));
            outcomes.push(outcome);
        }
    }

    println!(
        "Incremental cooperative assignor over a simulated group: {} workers, {} connectors x {} tasks ({} tasks), scheduled.rebalance.max.delay.ms = {} ms; rolling restart: {} ms down, {} ms between restarts.\n",
        args.workers,
        thousands(args.connectors),
        args.tasks,
        thousands(total_tasks),
        thousands(args.delay_ms as usize),
        thousands(args.restart_down_ms as usize),
        thousands(args.restart_gap_ms as usize)
    );
    let mut table = Table::new(&[
        "scenario",
        "events",
        "rounds",
        "rounds to balanced",
        "after the last event: rounds / simulated s",
        "assignor ms/round mean / max",
        "leader ms/round mean",
        "tasks revoked",
        "needless revocations",
        "task moves",
        "min moves",
        "moved at end",
        "unassigned task·s",
        "wall s",
    ]);
    for o in &outcomes {
        let s = &o.stats;
        let (to_balanced, after) = match s.balanced_since {
            Some((r, t)) => (
                r.to_string(),
                format!(
                    "{} / {:.3}",
                    r.saturating_sub(s.last_event.0),
                    (t - s.last_event.1) as f64 / 1e3
                ),
            ),
            None => ("not balanced".into(), "not balanced".into()),
        };
        table.row(
            o.name.clone(),
            vec![
                o.events.to_string(),
                s.rounds.to_string(),
                to_balanced,
                after,
                format!("{:.1} / {:.1}", mean(&s.assignor_ms), max(&s.assignor_ms)),
                format!("{:.1}", mean(&s.leader_ms)),
                thousands(s.revoked),
                thousands(s.needless),
                thousands(s.moves),
                thousands(o.min_moves),
                thousands(o.moved_at_end),
                thousands((s.unassigned_task_ms / 1e3).round() as usize),
                format!("{:.1}", o.wall_s),
            ],
        );
    }
    print!("{}", table.markdown());
    println!(
        "\nBalanced: every job held once, task and connector counts within 1. Needless revocations: beyond what any balanced target of the round's members' task totals allows (a revocation that only the assignor's per-connector spreading needs counts as needless; see the module doc). Moves: task starts on a worker other than its last one; min moves: fewest tasks that had to change worker between the start and the end; moved at end: tasks on another worker at the end than at the start. Connector moves: {}.",
        outcomes
            .iter()
            .map(|o| format!("{} {}", o.name, o.stats.connector_moves))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// The rolling restart: every worker, highest number first, leaves and rejoins. Returns the
/// number of membership changes.
fn rolling(sim: &mut Sim, args: &Args, started: Instant) -> Result<usize, String> {
    let mut ids: Vec<u32> = sim.members.iter().map(|w| w.id).collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    let n = ids.len();
    for (i, &id) in ids.iter().enumerate() {
        let t = sim.now;
        sim.leave(id);
        sim.event("leave", Some(t + args.restart_down_ms), false)?;
        let t = sim.now;
        sim.join(id);
        let last = i + 1 == n;
        let until = (!last).then_some(t + args.restart_gap_ms);
        sim.event("rejoin", until, false)?;
        if (i + 1) % 50 == 0 || last {
            say(format!(
                "  {}/{n} restarted, t={:.0} s simulated, {} rounds, {:.1} s wall",
                i + 1,
                sim.now as f64 / 1e3,
                sim.stats.rounds,
                started.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(2 * n)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).unwrap_or_default())
        .collect();
    groups.join(",")
}
