//! The nemesis's checker: pure functions over what a run left behind (the records in the source
//! topics, the lines the sink tasks printed, the status topic, the assignments the workers
//! reported, the faults and when they happened), each returning what it found wrong. No Kafka
//! here: the unit tests at the end feed it small histories with one defect each.

use std::collections::{BTreeMap, BTreeSet};

/// A record a VerifiableSource task wrote: key = task, value = seqno.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub task: i64,
    pub seqno: i64,
    pub partition: i32,
    pub offset: i64,
    /// The record's timestamp (the producer's create time), epoch ms.
    pub timestamp_ms: i64,
}

/// A record a VerifiableSink task said it consumed (a line without `"flushed":true`).
#[derive(Debug, Clone, PartialEq)]
pub struct Consumed {
    pub task: i64,
    pub seqno: i64,
    pub offset: i64,
    /// When the sink task printed the line, epoch ms.
    pub time_ms: i64,
}

/// When a fault could explain an at-least-once duplicate: from the moment it was injected to
/// a grace period after it was healed (the takeover, the rejoin and the redelivery that follow
/// it), epoch ms.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub kind: String,
    pub start_ms: i64,
    pub end_ms: i64,
}

fn explained(windows: &[Window], at_ms: i64) -> bool {
    windows
        .iter()
        .any(|w| w.start_ms <= at_ms && at_ms <= w.end_ms)
}

/// What the checker found about one source topic.
#[derive(Debug, Default)]
pub struct SourceReport {
    pub records: usize,
    pub distinct: usize,
    /// Copies beyond the first of a (task, seqno).
    pub duplicates: usize,
    /// (task, seqno) missing below the task's highest seqno: lost records.
    pub lost: Vec<(i64, i64)>,
    /// Later copies of a (task, seqno) written outside every fault window.
    pub unexplained: Vec<(i64, i64, i64)>,
}

/// Every task's seqnos must run 0, 1, 2, … up to its highest with none missing; a later copy
/// of a seqno (at-least-once redelivery) must have been written inside a fault window.
pub fn check_source(records: &[Written], windows: &[Window]) -> SourceReport {
    let mut by_task: BTreeMap<i64, BTreeMap<i64, Vec<i64>>> = BTreeMap::new();
    for r in records {
        by_task
            .entry(r.task)
            .or_default()
            .entry(r.seqno)
            .or_default()
            .push(r.timestamp_ms);
    }
    let mut report = SourceReport {
        records: records.len(),
        ..SourceReport::default()
    };
    for (task, seqnos) in &by_task {
        report.distinct += seqnos.len();
        let max = seqnos.keys().next_back().copied().unwrap_or(-1);
        report.lost.extend(
            (0..=max)
                .filter(|s| !seqnos.contains_key(s))
                .map(|s| (*task, s)),
        );
        for (seqno, times) in seqnos {
            let mut times = times.clone();
            times.sort_unstable();
            report.duplicates += times.len() - 1;
            for t in &times[1..] {
                if !explained(windows, *t) {
                    report.unexplained.push((*task, *seqno, *t));
                }
            }
        }
    }
    report
}

/// What the checker found about one sink connector.
#[derive(Debug, Default)]
pub struct SinkReport {
    pub consumed: usize,
    /// Copies beyond the first of a consumed (task, offset).
    pub duplicates: usize,
    /// Records of the topic no sink task consumed: (task, offset).
    pub missing: Vec<(i64, i64)>,
    /// Records consumed that the topic does not hold for this reader (an aborted record
    /// delivered to a read_committed sink) or whose seqno differs: (task, offset, seqno).
    pub foreign: Vec<(i64, i64, i64)>,
    /// Redeliveries outside every fault window: (task, offset, time).
    pub unexplained: Vec<(i64, i64, i64)>,
}

/// The sink must have consumed every record of `topic` (records are told apart by (task,
/// offset): a task's records all go to one partition), nothing else, and any record twice only
/// inside a fault window.
pub fn check_sink(topic: &[Written], consumed: &[Consumed], windows: &[Window]) -> SinkReport {
    let expected: BTreeMap<(i64, i64), i64> = topic
        .iter()
        .map(|r| ((r.task, r.offset), r.seqno))
        .collect();
    let mut seen: BTreeMap<(i64, i64), Vec<i64>> = BTreeMap::new();
    let mut report = SinkReport {
        consumed: consumed.len(),
        ..SinkReport::default()
    };
    for c in consumed {
        if expected.get(&(c.task, c.offset)) != Some(&c.seqno) {
            report.foreign.push((c.task, c.offset, c.seqno));
            continue;
        }
        seen.entry((c.task, c.offset)).or_default().push(c.time_ms);
    }
    report.missing = expected
        .keys()
        .filter(|k| !seen.contains_key(k))
        .copied()
        .collect();
    for ((task, offset), times) in &mut seen {
        times.sort_unstable();
        report.duplicates += times.len() - 1;
        for t in &times[1..] {
            if !explained(windows, *t) {
                report.unexplained.push((*task, *offset, *t));
            }
        }
    }
    report
}

/// A task status record of the status topic (`status-task-<connector>-<n>`).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStatus {
    pub task: String,
    pub state: String,
    pub worker_id: String,
    pub generation: i64,
}

/// One answer of a worker's `GET /tributary/worker`: the tasks it was assigned in a generation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Assignment {
    pub cluster: String,
    pub worker_id: String,
    pub generation: i64,
    pub tasks: Vec<String>,
}

/// No task may be RUNNING on two workers in one generation: neither by the status topic (RUNNING
/// records of one task and generation naming two workers) nor by what the workers reported
/// (two workers of one cluster listing a task under the same generation). Returns each
/// violation, described.
pub fn check_single_owner(statuses: &[TaskStatus], assignments: &[Assignment]) -> Vec<String> {
    let mut violations = Vec::new();
    let mut running: BTreeMap<(&str, i64), BTreeSet<&str>> = BTreeMap::new();
    for s in statuses.iter().filter(|s| s.state == "RUNNING") {
        running
            .entry((&s.task, s.generation))
            .or_default()
            .insert(&s.worker_id);
    }
    for ((task, generation), workers) in running {
        if workers.len() > 1 {
            violations.push(format!(
                "status topic: {task} RUNNING on {workers:?} in generation {generation}"
            ));
        }
    }
    let mut owners: BTreeMap<(&str, i64, &str), BTreeSet<&str>> = BTreeMap::new();
    for a in assignments {
        for t in &a.tasks {
            owners
                .entry((&a.cluster, a.generation, t))
                .or_default()
                .insert(&a.worker_id);
        }
    }
    for ((cluster, generation, task), workers) in owners {
        if workers.len() > 1 {
            violations.push(format!(
                "{cluster}: {task} assigned to {workers:?} in generation {generation}"
            ));
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(task: i64, seqno: i64, offset: i64, ts: i64) -> Written {
        Written {
            task,
            seqno,
            partition: 0,
            offset,
            timestamp_ms: ts,
        }
    }

    fn window(start_ms: i64, end_ms: i64) -> Window {
        Window {
            kind: "kill".into(),
            start_ms,
            end_ms,
        }
    }

    #[test]
    fn a_missing_seqno_is_lost_and_a_duplicate_outside_every_window_is_unexplained() {
        let records = vec![
            w(0, 0, 0, 10),
            w(0, 2, 1, 20),
            w(0, 2, 2, 500),
            w(1, 0, 3, 10),
            w(1, 0, 4, 150),
        ];
        let r = check_source(&records, &[window(100, 200)]);
        assert_eq!(r.lost, vec![(0, 1)]);
        assert_eq!(r.duplicates, 2);
        assert_eq!(r.unexplained, vec![(0, 2, 500)]);
        assert_eq!(r.distinct, 3);
    }

    #[test]
    fn a_complete_sequence_has_nothing_to_report() {
        let records: Vec<Written> = (0..5).map(|s| w(0, s, s, s)).collect();
        let r = check_source(&records, &[]);
        assert!(r.lost.is_empty() && r.unexplained.is_empty() && r.duplicates == 0);
    }

    #[test]
    fn a_sink_missing_a_record_or_given_an_aborted_one_is_reported() {
        let topic = vec![w(0, 0, 0, 0), w(0, 1, 1, 0), w(0, 2, 3, 0)];
        let c = |offset, seqno, time_ms| Consumed {
            task: 0,
            seqno,
            offset,
            time_ms,
        };
        // Offset 2 held an aborted record (seqno 2 written again at offset 3).
        let consumed = vec![c(0, 0, 10), c(2, 2, 20), c(3, 2, 30), c(0, 0, 900)];
        let r = check_sink(&topic, &consumed, &[window(0, 100)]);
        assert_eq!(r.missing, vec![(0, 1)]);
        assert_eq!(r.foreign, vec![(0, 2, 2)]);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.unexplained, vec![(0, 0, 900)]);
    }

    #[test]
    fn a_task_of_one_generation_on_two_workers_is_a_violation() {
        let s = |worker: &str, generation, state: &str| TaskStatus {
            task: "t-0".into(),
            state: state.into(),
            worker_id: worker.into(),
            generation,
        };
        let ok = [
            s("a", 1, "RUNNING"),
            s("b", 2, "RUNNING"),
            s("a", 2, "UNASSIGNED"),
        ];
        assert!(check_single_owner(&ok, &[]).is_empty());
        let bad = [s("a", 3, "RUNNING"), s("b", 3, "RUNNING")];
        assert_eq!(check_single_owner(&bad, &[]).len(), 1);
        let a = |worker: &str, cluster: &str| Assignment {
            cluster: cluster.into(),
            worker_id: worker.into(),
            generation: 4,
            tasks: vec!["t-0".into()],
        };
        assert!(check_single_owner(&[], &[a("a", "x"), a("b", "y")]).is_empty());
        assert_eq!(
            check_single_owner(&[], &[a("a", "x"), a("b", "x")]).len(),
            1
        );
    }
}
