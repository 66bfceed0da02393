//! Watching a cluster through the REST API and the status topic: views, balance, CPU and memory.

use super::*;

/// The status API's view: connector and task states and workers.
#[derive(Debug, Default, Clone)]
pub(crate) struct View {
    /// Connector → (state, worker id).
    pub(crate) connectors: BTreeMap<String, (String, String)>,
    /// Task id `<c>-<n>` → (state, worker id).
    pub(crate) tasks: BTreeMap<String, (String, String)>,
}

/// `GET /connectors?expand=status` on `rest`; `None` unless it answers 200.
pub(crate) fn view(rest: &Rest) -> Option<View> {
    let (code, v) = rest.get("/connectors?expand=status").ok()?;
    if code != 200 {
        return None;
    }
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out = View::default();
    for (name, c) in v.as_object()? {
        let st = &c["status"];
        out.connectors.insert(
            name.clone(),
            (
                s(&st["connector"]["state"]),
                s(&st["connector"]["worker_id"]),
            ),
        );
        for t in st["tasks"].as_array().into_iter().flatten() {
            let Some(id) = t["id"].as_u64() else { continue };
            out.tasks
                .insert(format!("{name}-{id}"), (s(&t["state"]), s(&t["worker_id"])));
        }
    }
    Some(out)
}

/// Max minus min of `v` (0 for none).
pub(crate) fn spread(v: &[usize]) -> usize {
    match (v.iter().max(), v.iter().min()) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    }
}

/// How the connectors and tasks lie over the live workers, per the status API.
#[derive(Debug, Clone, Default)]
pub(crate) struct Balance {
    pub(crate) tasks_running: usize,
    pub(crate) tasks_total: usize,
    pub(crate) connectors_running: usize,
    pub(crate) connectors_total: usize,
    /// RUNNING tasks per live worker (in member order).
    pub(crate) tasks_per_worker: Vec<usize>,
    /// RUNNING connectors per live worker.
    pub(crate) connectors_per_worker: Vec<usize>,
    /// The most tasks of one connector on one worker.
    pub(crate) max_one_connector: usize,
    /// Connectors whose tasks are spread unevenly (two workers differ by more than 1).
    pub(crate) uneven_connectors: usize,
}

impl Balance {
    pub(crate) fn of(view: &View, live: &[String], connectors: &[String], tasks: usize) -> Balance {
        let index: HashMap<&str, usize> = live
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_str(), i))
            .collect();
        let mut b = Balance {
            tasks_total: connectors.len() * tasks,
            connectors_total: connectors.len(),
            tasks_per_worker: vec![0; live.len()],
            connectors_per_worker: vec![0; live.len()],
            ..Default::default()
        };
        for c in connectors {
            if let Some((state, w)) = view.connectors.get(c) {
                if let (true, Some(&i)) = (state == "RUNNING", index.get(w.as_str())) {
                    b.connectors_running += 1;
                    b.connectors_per_worker[i] += 1;
                }
            }
            let mut mine = vec![0usize; live.len()];
            for n in 0..tasks {
                if let Some((state, w)) = view.tasks.get(&format!("{c}-{n}")) {
                    if let (true, Some(&i)) = (state == "RUNNING", index.get(w.as_str())) {
                        b.tasks_running += 1;
                        b.tasks_per_worker[i] += 1;
                        mine[i] += 1;
                    }
                }
            }
            b.max_one_connector = b
                .max_one_connector
                .max(mine.iter().copied().max().unwrap_or(0));
            if spread(&mine) > 1 {
                b.uneven_connectors += 1;
            }
        }
        b
    }

    pub(crate) fn all_running(&self) -> bool {
        self.tasks_running == self.tasks_total && self.connectors_running == self.connectors_total
    }

    pub(crate) fn balanced(&self) -> bool {
        self.all_running()
            && spread(&self.tasks_per_worker) <= 1
            && spread(&self.connectors_per_worker) <= 1
    }

    pub(crate) fn balanced_per_connector(&self) -> bool {
        self.balanced() && self.uneven_connectors == 0
    }

    pub(crate) fn summary(&self) -> String {
        format!(
            "{}/{} tasks and {}/{} connectors RUNNING on live workers; tasks per worker {}–{}, connectors per worker {}–{}, at most {} tasks of one connector on one worker, {} connectors spread unevenly",
            self.tasks_running,
            self.tasks_total,
            self.connectors_running,
            self.connectors_total,
            self.tasks_per_worker.iter().min().unwrap_or(&0),
            self.tasks_per_worker.iter().max().unwrap_or(&0),
            self.connectors_per_worker.iter().min().unwrap_or(&0),
            self.connectors_per_worker.iter().max().unwrap_or(&0),
            self.max_one_connector,
            self.uneven_connectors
        )
    }
}

/// A cluster of one runtime running the benchmark's connectors.
pub(crate) struct Cluster {
    pub(crate) kind: Kind,
    pub(crate) group: String,
    pub(crate) members: Vec<Member>,
    pub(crate) connectors: Vec<String>,
    pub(crate) tasks: usize,
    pub(crate) watch: StatusWatch,
}

/// One poll of a cluster.
pub(crate) struct Poll {
    pub(crate) view: Option<View>,
    pub(crate) balance: Option<Balance>,
    /// Tributary: every live worker on one generation, each task assigned once and RUNNING
    /// (per the status API) on the worker it is assigned to. Java: always true.
    pub(crate) consistent: bool,
    /// Tributary: the generation every live worker reports, if they agree.
    pub(crate) generation: Option<i64>,
    /// Task id → member id, per `/tributary/worker` (Tributary).
    pub(crate) assigned: BTreeMap<String, String>,
}

impl Poll {
    pub(crate) fn settled(&self) -> bool {
        self.consistent && self.balance.as_ref().is_some_and(Balance::balanced)
    }

    pub(crate) fn owners(&self) -> BTreeMap<String, String> {
        self.view
            .as_ref()
            .map(|v| {
                v.tasks
                    .iter()
                    .map(|(t, (_, w))| (t.clone(), w.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Cluster {
    pub(crate) fn live(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| m.alive)
    }

    pub(crate) fn live_ids(&self) -> Vec<String> {
        self.live().map(|m| m.id.clone()).collect()
    }

    pub(crate) fn dead_ids(&self) -> BTreeSet<String> {
        self.members
            .iter()
            .filter(|m| !m.alive)
            .map(|m| m.id.clone())
            .collect()
    }

    pub(crate) fn poll(&mut self) -> Result<Poll, String> {
        check_alive(&mut self.members)?;
        let rest = &self.live().next().ok_or("no live worker")?.rest;
        let view = view(rest);
        let balance = view
            .as_ref()
            .map(|v| Balance::of(v, &self.live_ids(), &self.connectors, self.tasks));
        let mut p = Poll {
            view,
            balance,
            consistent: true,
            generation: None,
            assigned: BTreeMap::new(),
        };
        if self.kind == Kind::Tributary {
            let mut generation = None;
            let mut consistent = true;
            for m in self.live() {
                let Some(info) = m.info() else {
                    consistent = false;
                    continue;
                };
                let g = info["generation"].as_i64().unwrap_or(0);
                if g <= 0 || generation.is_some_and(|x| x != g) {
                    consistent = false;
                }
                generation.get_or_insert(g);
                for t in info["tasks"].as_array().into_iter().flatten() {
                    let t = t.as_str().unwrap_or_default().to_string();
                    if p.assigned.insert(t, m.id.clone()).is_some() {
                        consistent = false;
                    }
                }
            }
            if let Some(v) = &p.view {
                for (t, (state, w)) in &v.tasks {
                    if state == "RUNNING" && p.assigned.get(t) != Some(w) {
                        consistent = false;
                    }
                }
            }
            p.consistent = consistent;
            p.generation = if consistent { generation } else { None };
        }
        Ok(p)
    }

    /// Tributary: tasks with a started, not stopped instance on two live workers at once
    /// (`GET /tributary/task-counters`); a suspect is checked again asking the workers in
    /// reverse order, so that a move caught between two requests is not counted.
    pub(crate) fn double_running(&self) -> Vec<String> {
        if self.kind != Kind::Tributary {
            return Vec::new();
        }
        let running = |order: &[&Member]| {
            let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for m in order {
                for (t, (starts, stops)) in m.task_counters() {
                    if starts > stops {
                        out.entry(t).or_default().push(m.id.clone());
                    }
                }
            }
            out
        };
        let live: Vec<&Member> = self.live().collect();
        let first = running(&live);
        if first.values().all(|w| w.len() < 2) {
            return Vec::new();
        }
        let reversed: Vec<&Member> = live.iter().rev().copied().collect();
        let second = running(&reversed);
        first
            .iter()
            .filter(|(_, w)| w.len() >= 2)
            .filter_map(|(t, _)| {
                let w = second.get(t)?;
                (w.len() >= 2).then(|| format!("{t} on {}", w.join(" and ")))
            })
            .collect()
    }

    /// Tributary: stop counts per (member id, task).
    pub(crate) fn stop_counts(&self) -> BTreeMap<(String, String), u64> {
        let mut out = BTreeMap::new();
        if self.kind == Kind::Tributary {
            for m in self.live() {
                for (t, (_, stops)) in m.task_counters() {
                    out.insert((m.id.clone(), t), stops);
                }
            }
        }
        out
    }
}

/// What the status topic showed while a cluster changed.
#[derive(Default)]
pub(crate) struct StatusLog {
    /// Task → (state, worker) of its last record (seeded from the status API).
    pub(crate) last: HashMap<String, (String, String)>,
    /// Tasks with an UNASSIGNED record (stopped).
    pub(crate) stopped: BTreeSet<String>,
    /// Tasks that went RUNNING on a worker while their last record said RUNNING on another
    /// live worker.
    pub(crate) suspects: Vec<String>,
    pub(crate) records: usize,
}

impl StatusLog {
    pub(crate) fn new(view: &View) -> StatusLog {
        StatusLog {
            last: view.tasks.clone().into_iter().collect(),
            ..Default::default()
        }
    }

    pub(crate) fn feed(&mut self, records: Vec<StatusRecord>, dead: &BTreeSet<String>) {
        for r in records {
            self.records += 1;
            let Some(task) = r.task() else { continue };
            let task = task.to_string();
            if r.state == "UNASSIGNED" {
                self.stopped.insert(task.clone());
            }
            if r.state == "RUNNING" {
                if let Some((state, w)) = self.last.get(&task) {
                    if state == "RUNNING" && *w != r.worker_id && !dead.contains(w) {
                        self.suspects.push(format!(
                            "{task}: RUNNING on {} while last RUNNING on {w}",
                            r.worker_id
                        ));
                    }
                }
            }
            self.last.insert(task, (r.state, r.worker_id));
        }
    }
}

/// Sleeps `span` and returns the CPU time the live members used meanwhile, in cores (CPU
/// seconds per second, summed over the members).
pub(crate) fn cpu_over(members: &[Member], span: Duration) -> Option<f64> {
    let cpu = |m: &Member| proc_stats::cpu_seconds(&m.worker.pid().to_string());
    let before: Vec<Option<f64>> = members
        .iter()
        .map(|m| m.alive.then(|| cpu(m)).flatten())
        .collect();
    let t = Instant::now();
    std::thread::sleep(span);
    let mut total = 0.0;
    for (m, b) in members.iter().zip(before) {
        if let (Some(b), Some(a)) = (b, m.alive.then(|| cpu(m)).flatten()) {
            total += a - b;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    (secs > 0.0).then(|| total / secs)
}

/// Process figures of the live members.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mem {
    /// (member name, VmRSS KiB, threads).
    pub(crate) per_worker: Vec<(String, u64, u64)>,
}

impl Mem {
    pub(crate) fn read(members: &[Member]) -> Mem {
        Mem {
            per_worker: members
                .iter()
                .filter(|m| m.alive)
                .map(|m| {
                    (
                        m.name.clone(),
                        m.rss_kib().unwrap_or(0),
                        proc_stats::threads(m.worker.pid()).unwrap_or(0),
                    )
                })
                .collect(),
        }
    }

    pub(crate) fn total_mib(&self) -> f64 {
        self.per_worker
            .iter()
            .map(|(_, r, _)| *r as f64)
            .sum::<f64>()
            / 1024.0
    }

    pub(crate) fn median_mib(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .per_worker
            .iter()
            .map(|(_, r, _)| *r as f64 / 1024.0)
            .collect();
        median_f64(&v)
    }

    pub(crate) fn range_mib(&self) -> (f64, f64) {
        let v: Vec<f64> = self
            .per_worker
            .iter()
            .map(|(_, r, _)| *r as f64 / 1024.0)
            .collect();
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(0.0, f64::max),
        )
    }

    pub(crate) fn median_threads(&self) -> Option<f64> {
        let v: Vec<f64> = self.per_worker.iter().map(|(_, _, t)| *t as f64).collect();
        median_f64(&v)
    }

    pub(crate) fn list(&self) -> String {
        self.per_worker
            .iter()
            .map(|(n, r, t)| format!("{n} {:.0} MiB/{t} thr", *r as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
