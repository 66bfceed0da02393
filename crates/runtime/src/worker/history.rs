//! The recent history of the jobs this worker runs (Tributary, issue #36), for the live view's
//! plots at `/ui`: every [`INTERVAL_MS`] a sampler reads each running task's counters (the same
//! atomics `/metrics` reports) and notes each running connector, keeping the last [`POINTS`]
//! samples per job (15 minutes) in memory. Nothing outside the worker is needed, and a job that
//! stopped or moved keeps its past points until they age out, so merging every worker's
//! history says which worker held which job, when.
//!
//! [`History`] is the pure part (samples in, points out); [`Worker::sample_history`] reads the
//! counters and the REST server runs the clock (`rest::ui::run_history_sampler`).
//!
//! Memory: a task's point is 72 bytes, so 15 minutes cost about 13 KiB per task.
//!
//! [`Worker::sample_history`]: super::Worker::sample_history

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use serde::Serialize;

use crate::ConnectorTaskId;

/// Ms between two samples.
pub const INTERVAL_MS: i64 = 5_000;
/// Samples kept per job: 15 minutes at [`INTERVAL_MS`].
pub const POINTS: usize = 180;

/// A task's counters at one sample, cumulative since the task's counters were created on
/// this worker (they survive the task's restarts here), as `/metrics` shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskSample {
    /// `source` or `sink` (`None` before the task's loop started).
    pub kind: Option<&'static str>,
    /// Records in: a source task's `source-record-poll-total`, a sink task's
    /// `sink-record-read-total`.
    pub records_in: u64,
    /// Records out: a source task's `source-record-write-total`, a sink task's
    /// `sink-record-send-total`.
    pub records_out: u64,
    /// A sink task's consumer lag summed over the partitions it fetches, records (librdkafka's
    /// `consumer_lag`, the per-partition `kafka_consumer_fetch_manager_records_lag` of
    /// `/metrics`); `None` for a source task or before the consumer's first statistics.
    pub lag: Option<i64>,
    /// Ms the task waited for its rate limits (`tributary_task_throttled_seconds_total` × 1000).
    pub throttled_ms: u64,
    /// Times the task started on this worker (a restart adds one).
    pub starts: u64,
}

/// One task's point: `[t, in, out, lag, throttled_ms, starts]` in JSON, `t` in ms since the
/// epoch, `lag` `null` when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPoint {
    pub t: i64,
    pub sample: TaskSample,
}

impl Serialize for TaskPoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = &self.sample;
        (
            self.t,
            p.records_in,
            p.records_out,
            p.lag,
            p.throttled_ms,
            p.starts,
        )
            .serialize(s)
    }
}

/// A task's points in an answer: `{"connector","task","kind","points":[[t,in,out,lag,
/// throttled_ms,starts],…]}`, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSeries {
    pub connector: String,
    pub task: u32,
    /// `source`, `sink`, or `null` before the task's loop started.
    pub kind: Option<&'static str>,
    pub points: Vec<TaskPoint>,
}

/// A connector's points in an answer: `{"connector","times":[t,…]}`, the samples at which its
/// instance ran on this worker, ms since the epoch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorSeries {
    pub connector: String,
    pub times: Vec<i64>,
}

/// What `GET /tributary/history` answers for one worker: `{"worker_id","worker_url",
/// "interval_ms","window_ms","connectors":[…],"tasks":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    pub worker_id: String,
    /// The worker's advertised REST URL (set by the REST layer).
    pub worker_url: String,
    pub interval_ms: i64,
    /// How far back points go, ms ([`POINTS`] × [`INTERVAL_MS`]).
    pub window_ms: i64,
    pub connectors: Vec<ConnectorSeries>,
    pub tasks: Vec<TaskSeries>,
}

#[derive(Debug, Default)]
struct Rings {
    tasks: BTreeMap<ConnectorTaskId, VecDeque<TaskPoint>>,
    connectors: BTreeMap<String, VecDeque<i64>>,
}

/// The points of every job this worker ran in the last [`POINTS`] samples.
#[derive(Debug, Default)]
pub struct History {
    rings: Mutex<Rings>,
}

impl History {
    /// Adds the sample taken at `now_ms` (ms since the epoch) of the running `tasks` and
    /// `connectors`, and forgets points older than the window (and jobs left with none).
    pub fn record(
        &self,
        now_ms: i64,
        tasks: Vec<(ConnectorTaskId, TaskSample)>,
        connectors: Vec<String>,
    ) {
        let oldest = now_ms - INTERVAL_MS * POINTS as i64;
        let mut rings = self.rings.lock().unwrap();
        for (id, sample) in tasks {
            let ring = rings.tasks.entry(id).or_default();
            // A task of another kind under the same id is another job (its connector was
            // deleted and created again as a sink, say): its points start afresh.
            if ring.back().is_some_and(|p| {
                p.sample.kind.is_some() && sample.kind.is_some() && p.sample.kind != sample.kind
            }) {
                ring.clear();
            }
            ring.push_back(TaskPoint { t: now_ms, sample });
        }
        for name in connectors {
            rings.connectors.entry(name).or_default().push_back(now_ms);
        }
        rings.tasks.retain(|_, ring| {
            while ring.len() > POINTS || ring.front().is_some_and(|p| p.t <= oldest) {
                ring.pop_front();
            }
            !ring.is_empty()
        });
        rings.connectors.retain(|_, ring| {
            while ring.len() > POINTS || ring.front().is_some_and(|t| *t <= oldest) {
                ring.pop_front();
            }
            !ring.is_empty()
        });
    }

    /// The points after `since_ms` (all with 0) of the jobs `keep` accepts (by connector
    /// name), jobs without such points left out.
    pub fn snapshot(
        &self,
        worker_id: &str,
        since_ms: i64,
        keep: &dyn Fn(&str) -> bool,
    ) -> Snapshot {
        let rings = self.rings.lock().unwrap();
        let tasks = rings
            .tasks
            .iter()
            .filter(|(id, _)| keep(&id.connector))
            .filter_map(|(id, ring)| {
                let points: Vec<TaskPoint> =
                    ring.iter().filter(|p| p.t > since_ms).copied().collect();
                let kind = ring.iter().rev().find_map(|p| p.sample.kind);
                (!points.is_empty()).then(|| TaskSeries {
                    connector: id.connector.clone(),
                    task: id.task,
                    kind,
                    points,
                })
            })
            .collect();
        let connectors = rings
            .connectors
            .iter()
            .filter(|(name, _)| keep(name))
            .filter_map(|(name, ring)| {
                let times: Vec<i64> = ring.iter().copied().filter(|t| *t > since_ms).collect();
                (!times.is_empty()).then(|| ConnectorSeries {
                    connector: name.clone(),
                    times,
                })
            })
            .collect();
        Snapshot {
            worker_id: worker_id.to_string(),
            worker_url: String::new(),
            interval_ms: INTERVAL_MS,
            window_ms: INTERVAL_MS * POINTS as i64,
            connectors,
            tasks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: &str, t: u32) -> ConnectorTaskId {
        ConnectorTaskId::new(c, t)
    }

    fn sample(records: u64) -> TaskSample {
        TaskSample {
            kind: Some("source"),
            records_in: records,
            records_out: records,
            ..TaskSample::default()
        }
    }

    #[test]
    fn a_task_costs_what_the_module_docs_say() {
        // 72 bytes a point, 180 points: about 13 KiB per task.
        assert_eq!(std::mem::size_of::<TaskPoint>(), 72);
    }

    #[test]
    fn points_age_out_after_the_window_and_jobs_with_none_are_forgotten() {
        let h = History::default();
        let all = |_: &str| true;
        for i in 0..(POINTS as i64 + 10) {
            let tasks = if i < 5 {
                vec![(id("a", 0), sample(i as u64)), (id("b", 0), sample(0))]
            } else {
                vec![(id("a", 0), sample(i as u64))]
            };
            h.record(i * INTERVAL_MS, tasks, vec!["a".into()]);
        }
        let s = h.snapshot("w", 0, &all);
        // b stopped running after the fifth sample: its points aged out.
        assert_eq!(s.tasks.len(), 1);
        let a = &s.tasks[0];
        assert_eq!(a.points.len(), POINTS);
        assert_eq!(
            a.points.last().unwrap().sample.records_in,
            POINTS as u64 + 9
        );
        assert_eq!(a.points[0].t, 10 * INTERVAL_MS);
        assert_eq!(s.connectors[0].times.len(), POINTS);
    }

    #[test]
    fn a_task_of_another_kind_under_the_same_id_starts_afresh() {
        let h = History::default();
        h.record(INTERVAL_MS, vec![(id("a", 0), sample(7))], vec![]);
        let sink = TaskSample {
            kind: Some("sink"),
            ..TaskSample::default()
        };
        h.record(2 * INTERVAL_MS, vec![(id("a", 0), sink)], vec![]);
        let s = h.snapshot("w", 0, &|_| true);
        assert_eq!(s.tasks[0].kind, Some("sink"));
        assert_eq!(s.tasks[0].points.len(), 1);
    }

    #[test]
    fn a_snapshot_keeps_points_after_since_of_the_connectors_asked_for() {
        let h = History::default();
        for i in 1..=4 {
            h.record(
                i * INTERVAL_MS,
                vec![(id("a", 0), sample(i as u64)), (id("b", 1), sample(0))],
                vec!["a".into(), "b".into()],
            );
        }
        let s = h.snapshot("w", 2 * INTERVAL_MS, &|c| c == "a");
        assert_eq!(s.tasks.len(), 1);
        assert_eq!(
            s.tasks[0].points.iter().map(|p| p.t).collect::<Vec<_>>(),
            vec![3 * INTERVAL_MS, 4 * INTERVAL_MS]
        );
        assert_eq!(s.connectors.len(), 1);
        assert_eq!(
            s.connectors[0].times,
            vec![3 * INTERVAL_MS, 4 * INTERVAL_MS]
        );
        // Nothing new: nothing in the answer.
        assert!(h.snapshot("w", 4 * INTERVAL_MS, &|_| true).tasks.is_empty());
        let json = serde_json::to_value(&s.tasks[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"connector": "a", "task": 0, "kind": "source",
                               "points": [[15000, 3, 3, null, 0, 0], [20000, 4, 4, null, 0, 0]]})
        );
    }
}
