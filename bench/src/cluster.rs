//! Distributed-worker clusters for the benchmarks: worker processes with their REST clients,
//! their group view and counters, polling helpers and small statistics.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::rest::Rest;
use crate::tempdir;
use crate::worker::{distributed_properties, Worker};

/// How often [`wait_until`] polls.
pub const POLL: Duration = Duration::from_millis(10);

/// A `tributary distributed` worker process with its REST client and its directory.
pub struct Node {
    /// The process.
    pub worker: Worker,
    /// Its REST API.
    pub rest: Rest,
    _dir: tempfile::TempDir,
}

/// Start and stop counts of one connector or task instance on one worker (from
/// `GET /tributary/task-counters` or `GET /tributary/connector-counters`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Times the instance was started.
    pub starts: u64,
    /// Times the instance was stopped.
    pub stops: u64,
    /// Records the task moved (0 for connectors).
    pub records: u64,
}

impl Node {
    /// Spawns a worker of `group` (with [`distributed_properties`] followed by `extra`, which
    /// override them) without waiting for anything.
    pub fn start(
        binary: &Path,
        bootstrap: &str,
        group: &str,
        extra: &[(&str, &str)],
    ) -> Result<(Worker, tempfile::TempDir), String> {
        let dir = tempdir()?;
        let mut props = distributed_properties(bootstrap, group);
        for (k, v) in extra {
            props.retain(|(key, _)| key != k);
            props.push((k.to_string(), v.to_string()));
        }
        let worker = Worker::spawn_distributed(binary, dir.path(), &props)?;
        Ok((worker, dir))
    }

    /// Waits for the REST address of a worker from [`Node::start`] in its log.
    pub fn connect(
        mut worker: Worker,
        dir: tempfile::TempDir,
        timeout: Duration,
    ) -> Result<Node, String> {
        let url = worker.wait_rest(timeout)?;
        Ok(Node {
            worker,
            rest: Rest::new(&url, Duration::from_secs(10))?,
            _dir: dir,
        })
    }

    /// Spawns a worker of `group` (see [`Node::start`]) and waits for its REST address.
    pub fn spawn(
        binary: &Path,
        bootstrap: &str,
        group: &str,
        extra: &[(&str, &str)],
        timeout: Duration,
    ) -> Result<Node, String> {
        let (worker, dir) = Self::start(binary, bootstrap, group, extra)?;
        Self::connect(worker, dir, timeout)
    }

    /// `GET /tributary/worker`, `None` while the REST API does not answer with 200.
    pub fn info(&self) -> Option<Value> {
        match self.rest.get("/tributary/worker") {
            Ok((200, v)) => Some(v),
            _ => None,
        }
    }

    /// The worker id the status API reports for this worker (`host:port` of its REST API).
    pub fn id(&self) -> String {
        self.rest.base().trim_start_matches("http://").to_string()
    }

    /// `GET /tributary/task-counters` (task id `<conn>-<n>` → counts); empty when the REST API
    /// does not answer.
    pub fn task_counters(&self) -> BTreeMap<String, Counts> {
        self.counters("/tributary/task-counters")
    }

    /// `GET /tributary/connector-counters` (connector name → counts); empty when the REST API
    /// does not answer.
    pub fn connector_counters(&self) -> BTreeMap<String, Counts> {
        self.counters("/tributary/connector-counters")
    }

    fn counters(&self, path: &str) -> BTreeMap<String, Counts> {
        let Ok((200, v)) = self.rest.get(path) else {
            return BTreeMap::new();
        };
        let n = |c: &Value, k: &str| c[k].as_u64().unwrap_or(0);
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, c)| {
                        let counts = Counts {
                            starts: n(c, "starts"),
                            stops: n(c, "stops"),
                            records: n(c, "records"),
                        };
                        (k.clone(), counts)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// SIGTERM, then waits up to 30 s for a clean exit (SIGKILL after that).
    pub fn stop(&mut self) {
        self.worker.terminate(Duration::from_secs(30));
    }
}

/// Spawns `n` workers of `group` back to back (see [`Node::start`]) and waits for each one's
/// REST address.
pub fn spawn_cluster(
    binary: &Path,
    bootstrap: &str,
    group: &str,
    extra: &[(&str, &str)],
    n: usize,
    timeout: Duration,
) -> Result<Vec<Node>, String> {
    let mut started = Vec::new();
    for _ in 0..n {
        started.push(Node::start(binary, bootstrap, group, extra)?);
    }
    started
        .into_iter()
        .map(|(w, d)| Node::connect(w, d, timeout))
        .collect()
}

/// Fails with a worker's log tail if any worker of `nodes` has exited.
pub fn check_alive(nodes: &mut [Node]) -> Result<(), String> {
    for n in nodes.iter_mut() {
        n.worker
            .check_alive()
            .map_err(|e| format!("worker {}: {e}", n.rest.base()))?;
    }
    Ok(())
}

/// The index of the worker of `nodes` that reports itself the leader, if any.
pub fn leader(nodes: &[Node]) -> Option<usize> {
    nodes
        .iter()
        .position(|n| n.info().is_some_and(|i| i["leader"] == true))
}

/// Polls `cond` every [`POLL`] until it returns `Some`, failing with `what` after `timeout`.
pub fn wait_until<T>(
    what: &str,
    timeout: Duration,
    cond: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    wait_every(what, timeout, POLL, cond)
}

/// Polls `cond` every `every` until it returns `Some`, failing with `what` after `timeout`.
pub fn wait_every<T>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut cond: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = cond()? {
            return Ok(v);
        }
        if Instant::now() > deadline {
            return Err(format!("timed out after {timeout:?} waiting for {what}"));
        }
        std::thread::sleep(every);
    }
}

/// The `POST /connectors` body of a VerifiableSource connector `name` with `tasks` tasks
/// writing `throughput` records/s each into `topic`.
pub fn verifiable_source(name: &str, topic: &str, tasks: usize, throughput: u64) -> Value {
    json!({
        "name": name,
        "config": {
            "connector.class": "VerifiableSource",
            "tasks.max": tasks.to_string(),
            "topic": topic,
            "throughput": throughput.to_string(),
        }
    })
}

/// `POST /connectors` with `body` to `rest`; an error unless it answers 201.
pub fn create_connector(rest: &Rest, body: &Value) -> Result<(), String> {
    let (code, resp) = rest.send("POST", "/connectors", Some(body))?;
    if code != 201 {
        return Err(format!("POST /connectors answered {code}: {resp}"));
    }
    Ok(())
}

/// The state of `GET /connectors/{name}/status` on `rest`: the connector's state and
/// worker, and per task number its state and worker; `None` unless it answers 200.
pub fn connector_status(rest: &Rest, name: &str) -> Result<Option<ConnectorStatus>, String> {
    let (code, v) = rest.get(&format!("/connectors/{name}/status"))?;
    if code != 200 {
        return Ok(None);
    }
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let tasks = v["tasks"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| Some((t["id"].as_u64()?, (s(&t["state"]), s(&t["worker_id"])))))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(ConnectorStatus {
        state: s(&v["connector"]["state"]),
        worker_id: s(&v["connector"]["worker_id"]),
        tasks,
    }))
}

/// A connector's status as `GET /connectors/{c}/status` reports it.
#[derive(Debug, Clone, Default)]
pub struct ConnectorStatus {
    /// The connector's state (`RUNNING`, `RESTARTING`, ...).
    pub state: String,
    /// The worker running the connector.
    pub worker_id: String,
    /// Per task number: state and worker.
    pub tasks: BTreeMap<u64, (String, String)>,
}

impl ConnectorStatus {
    /// Whether the connector and exactly `tasks` tasks are all `RUNNING`.
    pub fn all_running(&self, tasks: usize) -> bool {
        self.state == "RUNNING"
            && self.tasks.len() == tasks
            && self.tasks.values().all(|(s, _)| s == "RUNNING")
    }
}

/// Milliseconds of a duration, as a float.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median of `values` (the mean of the middle two for an even count); `None` for none.
pub fn median_f64(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median_f64(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median_f64(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median_f64(&[]), None);
    }

    #[test]
    fn all_running_needs_every_task() {
        let mut s = ConnectorStatus {
            state: "RUNNING".into(),
            ..Default::default()
        };
        s.tasks.insert(0, ("RUNNING".into(), "w".into()));
        assert!(s.all_running(1));
        assert!(!s.all_running(2));
        s.tasks.insert(1, ("RESTARTING".into(), "w".into()));
        assert!(!s.all_running(2));
    }
}
