//! Automatic restarts (Tributary, beyond Connect; `config/auto_restart.rs` has the settings):
//! the worker that runs a FAILED connector instance or task schedules its restart after an
//! exponential backoff, and when it is due writes a KIP-745 restart request
//! (`onlyFailed=true&includeTasks=true`) for the connector to the config topic. Every worker
//! reads it, and the owner of each FAILED instance restarts it, as for a REST restart.
//!
//! [`Supervisor`] is the pure core: failures in, due restarts out, with each instance's restart
//! count and last failure kept for its status and metrics. [`FailureWatch`] is the edge: the
//! worker's status store, reporting every FAILED status this worker writes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::config::auto_restart::RestartPolicy;
use crate::storage::status::{State, Status, StatusBackingStore};
use crate::ConnectorTaskId;

/// A connector instance or a task.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Instance {
    Connector(String),
    Task(ConnectorTaskId),
}

impl Instance {
    /// The connector the instance belongs to.
    pub fn connector(&self) -> &str {
        match self {
            Instance::Connector(c) => c,
            Instance::Task(t) => &t.connector,
        }
    }
}

/// A failure this worker wrote: the instance and its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub instance: Instance,
    pub trace: Option<String>,
}

/// One instance's automatic restarts, shown as `auto_restart` in its status (see
/// [`crate::herder::info::AutoRestartInfo`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// Restarts requested for the instance on this worker.
    pub restarts: u32,
    /// The trace of its last failure.
    pub last_failure_trace: Option<String>,
    /// When it last failed, ms since the epoch.
    pub last_failure_ms: i64,
    /// When the next restart is due (`None`: none scheduled).
    pub due: Option<Instant>,
    /// The wait before that restart, ms.
    pub next_backoff_ms: Option<u64>,
    /// The attempt limit was reached: no more restarts.
    pub exhausted: bool,
}

/// The pure core: schedules restarts of failed instances under their connector's policy.
#[derive(Debug, Default)]
pub struct Supervisor {
    records: BTreeMap<Instance, Record>,
}

impl Supervisor {
    /// Records a failure at `now` (`now_ms` since the epoch) and, under `policy` (`None`:
    /// automatic restarts off), schedules the instance's next restart `policy.backoff(restarts
    /// so far)` later, unless the attempt limit is reached.
    pub fn failed(
        &mut self,
        failure: Failure,
        policy: Option<&RestartPolicy>,
        now: Instant,
        now_ms: i64,
    ) {
        let Some(policy) = policy else {
            return;
        };
        let rec = self.records.entry(failure.instance).or_default();
        rec.last_failure_trace = failure.trace;
        rec.last_failure_ms = now_ms;
        if policy.max_attempts.is_some_and(|max| rec.restarts >= max) {
            rec.exhausted = true;
            rec.due = None;
            rec.next_backoff_ms = None;
            return;
        }
        let wait = policy.backoff(rec.restarts);
        rec.due = Some(now + wait);
        rec.next_backoff_ms = Some(wait.as_millis() as u64);
    }

    /// When the next restart is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.records.values().filter_map(|r| r.due).min()
    }

    /// The connectors with a restart due by `now` (one restart request each); every due
    /// instance counts an attempt.
    pub fn take_due(&mut self, now: Instant) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (inst, rec) in self.records.iter_mut() {
            if rec.due.is_some_and(|d| d <= now) {
                rec.due = None;
                rec.next_backoff_ms = None;
                rec.restarts += 1;
                out.insert(inst.connector().to_string());
            }
        }
        out
    }

    /// An instance's record.
    pub fn record(&self, instance: &Instance) -> Option<&Record> {
        self.records.get(instance)
    }

    /// Every record (for metrics).
    pub fn records(&self) -> impl Iterator<Item = (&Instance, &Record)> {
        self.records.iter()
    }

    /// Forgets a connector's instances (deleted, or automatic restarts turned off).
    pub fn forget_connector(&mut self, connector: &str) {
        self.records.retain(|i, _| i.connector() != connector);
    }
}

/// The worker's status store, reporting the FAILED statuses written for `worker_id` to the
/// herder loop.
pub struct FailureWatch {
    inner: Arc<dyn StatusBackingStore>,
    worker_id: String,
    failures: mpsc::UnboundedSender<Failure>,
}

impl FailureWatch {
    /// Wraps `inner`; failures go to `failures`.
    pub fn new(
        inner: Arc<dyn StatusBackingStore>,
        worker_id: String,
        failures: mpsc::UnboundedSender<Failure>,
    ) -> FailureWatch {
        FailureWatch {
            inner,
            worker_id,
            failures,
        }
    }

    fn watch(&self, instance: impl FnOnce() -> Instance, status: &Status) {
        if status.state == State::Failed && status.worker_id == self.worker_id {
            // The loop is gone only when the worker stops.
            self.failures
                .send(Failure {
                    instance: instance(),
                    trace: status.trace.clone(),
                })
                .ok();
        }
    }
}

impl StatusBackingStore for FailureWatch {
    fn put_connector(&self, connector: &str, status: Status) {
        self.watch(|| Instance::Connector(connector.to_string()), &status);
        self.inner.put_connector(connector, status);
    }
    fn put_task(&self, id: &ConnectorTaskId, status: Status) {
        self.watch(|| Instance::Task(id.clone()), &status);
        self.inner.put_task(id, status);
    }
    fn connector(&self, connector: &str) -> Option<Status> {
        self.inner.connector(connector)
    }
    fn task(&self, id: &ConnectorTaskId) -> Option<Status> {
        self.inner.task(id)
    }
    fn tasks(&self, connector: &str) -> BTreeMap<u32, Status> {
        self.inner.tasks(connector)
    }
    fn delete_connector(&self, connector: &str) {
        self.inner.delete_connector(connector)
    }
    fn delete_task(&self, id: &ConnectorTaskId) {
        self.inner.delete_task(id)
    }
    fn put_topic(&self, connector: &str, topic: &str, task: u32) {
        self.inner.put_topic(connector, topic, task)
    }
    fn topics(&self, connector: &str) -> Vec<String> {
        self.inner.topics(connector)
    }
    fn delete_topics(&self, connector: &str) {
        self.inner.delete_topics(connector)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn task(n: u32) -> Instance {
        Instance::Task(ConnectorTaskId::new("c", n))
    }

    fn fail(s: &mut Supervisor, i: Instance, p: &RestartPolicy, now: Instant) {
        s.failed(
            Failure {
                instance: i,
                trace: Some("boom".into()),
            },
            Some(p),
            now,
            1,
        );
    }

    #[test]
    fn backoff_grows_and_attempts_stop_at_the_limit() {
        let p = RestartPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(300),
            max_attempts: Some(3),
            stall: None,
        };
        let mut s = Supervisor::default();
        let t0 = Instant::now();
        let mut now = t0;
        let mut waits = Vec::new();
        for _ in 0..4 {
            fail(&mut s, task(0), &p, now);
            let Some(due) = s.next_due() else { break };
            waits.push((due - now).as_millis());
            assert!(s.take_due(due - Duration::from_millis(1)).is_empty());
            assert_eq!(s.take_due(due), BTreeSet::from(["c".to_string()]));
            now = due + Duration::from_millis(5);
        }
        assert_eq!(waits, vec![100, 200, 300]);
        let r = s.record(&task(0)).unwrap();
        assert_eq!(r.restarts, 3);
        assert!(r.exhausted);
        assert_eq!(r.last_failure_trace.as_deref(), Some("boom"));
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn off_without_a_policy_and_forgotten_with_the_connector() {
        let mut s = Supervisor::default();
        s.failed(
            Failure {
                instance: task(1),
                trace: None,
            },
            None,
            Instant::now(),
            1,
        );
        assert!(s.record(&task(1)).is_none());
        let p = RestartPolicy {
            initial: Duration::ZERO,
            max: Duration::ZERO,
            max_attempts: None,
            stall: None,
        };
        fail(&mut s, task(1), &p, Instant::now());
        fail(&mut s, Instance::Connector("c".into()), &p, Instant::now());
        assert_eq!(
            s.take_due(Instant::now()).len(),
            1,
            "one request per connector"
        );
        s.forget_connector("c");
        assert_eq!(s.records().count(), 0);
    }
}
