//! `assignor-cost`: wall-clock cost of one incremental cooperative assignor round
//! (`tributary_group::assignor::assign_cooperative`) on a large group, in ms per round.
//!
//! Default workload: 1,000 connectors x 10 tasks over 100 workers. Prints the cost of a fresh
//! assignment (everything new), a steady-state round (nothing changes), a worker joining
//! (load-balancing revocations) and a worker leaving (lost jobs handed out after the delay).
//! Run with `cargo run --release -p tributary-bench --bin assignor-cost -- [connectors]
//! [tasks] [workers] [iterations]`.

use std::collections::BTreeMap;
use std::time::Instant;

use tributary_group::assignor::{
    assign_cooperative, ConfigSnapshot, CooperativeAssignorState, Round,
};
use tributary_group::{Assignment, WorkerMetadata};

/// The group as the members see it: member id -> (connectors, tasks) they run.
struct Group {
    running: BTreeMap<String, Assignment>,
}

impl Group {
    fn metadata(&self) -> Vec<(String, WorkerMetadata)> {
        self.running
            .iter()
            .map(|(id, a)| {
                let mut m = WorkerMetadata::new(format!("http://{id}:8083/"), 1);
                if !a.connectors.is_empty() || !a.tasks.is_empty() {
                    m.allocation = Some(a.clone());
                }
                (id.clone(), m)
            })
            .collect()
    }

    fn apply(&mut self, out: &BTreeMap<String, Assignment>) {
        for (id, a) in out {
            let r = self.running.entry(id.clone()).or_default();
            r.connectors.retain(|c| !a.revoked_connectors.contains(c));
            r.tasks.retain(|t| !a.revoked_tasks.contains(t));
            r.connectors.extend(a.connectors.iter().cloned());
            r.tasks.extend(a.tasks.iter().cloned());
        }
    }
}

struct Bench {
    state: CooperativeAssignorState,
    snapshot: ConfigSnapshot,
    generation: i32,
    now: i64,
}

impl Bench {
    /// Runs one round on a clone of `state` `iterations` times (timing only the assignor call,
    /// not metadata construction), then commits one round. Returns (mean ms per round, output).
    fn round(&mut self, group: &Group, iterations: usize) -> (f64, BTreeMap<String, Assignment>) {
        let members = group.metadata();
        let leader = members[0].0.clone();
        let url = members[0].1.url.clone();
        let round = Round {
            leader_id: &leader,
            leader_url: &url,
            members: &members,
            snapshot: &self.snapshot,
            config_offset: 1,
            last_completed_generation: self.generation,
            generation: self.generation + 1,
            now_ms: self.now,
        };
        let mut total = 0.0;
        for _ in 0..iterations {
            let mut s = self.state.clone();
            let t = Instant::now();
            let out = assign_cooperative(&mut s, &round);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(out);
            total += ms;
        }
        let out = assign_cooperative(&mut self.state, &round);
        self.generation += 1;
        (total / iterations as f64, out)
    }
}

fn moved(out: &BTreeMap<String, Assignment>) -> (usize, usize) {
    let revoked = out
        .values()
        .map(|a| a.revoked_connectors.len() + a.revoked_tasks.len())
        .sum();
    let added = out
        .values()
        .map(|a| a.connectors.len() + a.tasks.len())
        .sum();
    (revoked, added)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numeric argument"))
        .collect();
    let connectors = args.first().copied().unwrap_or(1000);
    let tasks = args.get(1).copied().unwrap_or(10) as u32;
    let workers = args.get(2).copied().unwrap_or(100);
    let iterations = args.get(3).copied().unwrap_or(20);

    let snapshot = ConfigSnapshot {
        offset: 1,
        connectors: (0..connectors)
            .map(|i| (format!("connector-{i:05}"), tasks))
            .collect(),
    };
    let mut group = Group {
        running: (0..workers)
            .map(|i| (format!("worker-{i:04}"), Assignment::default()))
            .collect(),
    };
    let mut bench = Bench {
        state: CooperativeAssignorState::new(300_000),
        snapshot,
        generation: 1,
        now: 1_000_000,
    };
    println!(
        "incremental cooperative assignor: {connectors} connectors x {tasks} tasks over {workers} workers, mean of {iterations} runs"
    );
    println!(
        "{:<40} {:>10} {:>10} {:>10}",
        "round", "ms/round", "revoked", "assigned"
    );
    let report = |name: &str, ms: f64, out: &BTreeMap<String, Assignment>| {
        let (r, a) = moved(out);
        println!("{name:<40} {ms:>10.3} {r:>10} {a:>10}");
    };

    let (ms, out) = bench.round(&group, iterations);
    report("fresh assignment", ms, &out);
    group.apply(&out);

    let (ms, out) = bench.round(&group, iterations);
    report("steady state", ms, &out);
    group.apply(&out);

    group
        .running
        .insert("worker-joiner".to_string(), Assignment::default());
    let (ms, out) = bench.round(&group, iterations);
    report("worker joins (revoking round)", ms, &out);
    group.apply(&out);
    let (ms, out) = bench.round(&group, iterations);
    report("worker joins (follow-up round)", ms, &out);
    group.apply(&out);

    let leaving = group.running.keys().nth(workers / 2).unwrap().clone();
    group.running.remove(&leaving);
    let (ms, out) = bench.round(&group, iterations);
    report("worker leaves (delay starts)", ms, &out);
    group.apply(&out);
    bench.now += 300_000;
    let (ms, out) = bench.round(&group, iterations);
    report("worker leaves (after the delay)", ms, &out);
    group.apply(&out);
}
