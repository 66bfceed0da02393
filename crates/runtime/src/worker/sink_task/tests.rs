//! The sink loop driven with in-memory clients in simulated time (what Connect's
//! `WorkerSinkTaskTest` does with `MockConsumer` and `MockTime`): delivery order, commits on
//! the flush interval, on request, on revocation and at stop; rewinds; pauses by the task and
//! by the connector; retriable `put` failures and their redelivery; errant records and the
//! dead letter queue; the rate limits; failures and panics.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tributary_api::converter::Converter;
use tributary_api::data::{SchemaAndValue, SchemaRef, Value};
use tributary_api::record::{SinkRecord, TopicPartition};
use tributary_api::sink::{PartitionOffsets, SinkTask, SinkTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_plugins::converters::string::StringConverter;

use super::memory::{Event, Journal, MemoryBroker, MemoryClients, Rebalance};
use super::*;
use crate::config::errors::ToleranceType;
use crate::config::throttle::Limits;
use crate::storage::status::{MemoryStatusBackingStore, StatusBackingStore};
use crate::worker::clock::ManualClock;
use crate::worker::task::TargetState;
use crate::worker::throttle::Throttle;
use crate::ConnectorTaskId;

const FLUSH_INTERVAL: Duration = Duration::from_secs(10);

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

/// What the test task does, set by the test.
#[derive(Default)]
struct Script {
    /// Results of the next non-empty `put`s (then `Ok`); an error's batch is not journaled.
    puts: VecDeque<ConnectResult<()>>,
    /// The back-off `put` sets (`SinkTaskContext::timeout`) before it fails.
    timeout_ms: Option<u64>,
    /// Rewinds `open` asks for.
    rewind_on_open: Vec<(TopicPartition, i64)>,
    /// `put` panics.
    panic_in_put: bool,
    /// `start` blocks until this receives (a task hung in `start`).
    start_gate: Option<std::sync::mpsc::Receiver<()>>,
    /// How long each non-empty `put` takes, on this clock.
    put_takes: Option<(Arc<ManualClock>, Duration)>,
}

/// A sink task that journals its calls and does what the script says; records whose value is
/// `errant` are reported through the errant record reporter.
struct ScriptedTask {
    journal: Journal,
    script: Arc<Mutex<Script>>,
    context: Arc<Mutex<Option<SinkTaskContext>>>,
}

impl SinkTask for ScriptedTask {
    fn version(&self) -> String {
        "1".into()
    }
    fn initialize(&mut self, context: SinkTaskContext) {
        *self.context.lock().unwrap() = Some(context);
    }
    fn start(&mut self, _props: &Props) -> ConnectResult<()> {
        let gate = self.script.lock().unwrap().start_gate.take();
        if let Some(gate) = gate {
            gate.recv().ok();
        }
        self.journal.push(Event::Start);
        Ok(())
    }
    fn open(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        self.journal.push(Event::Open(partitions.to_vec()));
        let ctx = self.context.lock().unwrap().clone().unwrap();
        for (tp, offset) in std::mem::take(&mut self.script.lock().unwrap().rewind_on_open) {
            ctx.offset(tp, offset);
        }
        Ok(())
    }
    fn close(&mut self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        let mut sorted = partitions.to_vec();
        sorted.sort_by_key(|tp| tp.partition);
        self.journal.push(Event::Close(sorted));
        Ok(())
    }
    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut script = self.script.lock().unwrap();
        if script.panic_in_put {
            panic!("put exploded");
        }
        if let Some((clock, took)) = &script.put_takes {
            clock.advance(*took);
        }
        if let Some(result) = script.puts.pop_front() {
            if result.is_err() {
                if let Some(ms) = script.timeout_ms {
                    let ctx = self.context.lock().unwrap().clone().unwrap();
                    ctx.timeout(ms);
                }
                return result;
            }
        }
        drop(script);
        let ctx = self.context.lock().unwrap().clone().unwrap();
        for r in records {
            if r.value == Value::String("errant".into()) {
                let reporter = ctx.errant_record_reporter().expect("a reporter");
                reporter.report(r, ConnectError::connect("refused by the sink"))?;
            }
        }
        self.journal.push(Event::Put(
            records
                .iter()
                .map(|r| {
                    (
                        r.original_topic.clone(),
                        r.original_kafka_partition,
                        r.original_kafka_offset,
                    )
                })
                .collect(),
        ));
        Ok(())
    }
    fn pre_commit(&mut self, current: &PartitionOffsets) -> ConnectResult<PartitionOffsets> {
        self.journal.push(Event::PreCommit(
            current.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        ));
        Ok(current.clone())
    }
    fn stop(&mut self) -> ConnectResult<()> {
        self.journal.push(Event::Stop);
        Ok(())
    }
}

/// A value converter that fails on the value `poison` (a record no converter can read).
struct PoisonAwareConverter(StringConverter);

impl Converter for PoisonAwareConverter {
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        self.0.configure(configs, is_key)
    }
    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.0.from_connect_data(topic, schema, value)
    }
    fn to_connect_data(&self, topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        if value == Some(b"poison".as_slice()) {
            return Err(ConnectError::Data(
                "Converting byte[] to Kafka Connect data failed".into(),
            ));
        }
        self.0.to_connect_data(topic, value)
    }
}

/// Settings of a test loop.
struct Setup {
    errors: ErrorHandlingConfig,
    limits: Limits,
    target: TargetState,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            errors: ErrorHandlingConfig::default(),
            limits: Limits::default(),
            target: TargetState::Started,
        }
    }
}

/// A sink loop on in-memory clients, and what the test reads and steers.
struct Harness {
    lp: Option<SinkLoop<memory::MemoryConsumer>>,
    broker: MemoryBroker,
    clock: Arc<ManualClock>,
    journal: Journal,
    script: Arc<Mutex<Script>>,
    context: Arc<Mutex<Option<SinkTaskContext>>>,
    control: Arc<TaskControl>,
    statuses: Arc<MemoryStatusBackingStore>,
    counters: Arc<TaskCounters>,
    id: ConnectorTaskId,
}

/// The parts of a loop before it starts: the task's arguments and its in-memory clients.
struct Parts {
    args: SinkTaskArgs,
    clients: MemoryClients,
}

fn parts(setup: Setup) -> (Parts, Harness) {
    let broker = MemoryBroker::default();
    let clock = Arc::new(ManualClock::new());
    let journal = Journal::default();
    let script = Arc::new(Mutex::new(Script::default()));
    let context = Arc::new(Mutex::new(None));
    let control = TaskControl::new(setup.target);
    let statuses = Arc::new(MemoryStatusBackingStore::default());
    let counters = Arc::new(TaskCounters::default());
    let id = ConnectorTaskId {
        connector: "sink".into(),
        task: 0,
    };
    let reporter = TaskStatusReporter {
        id: id.clone(),
        control: control.clone(),
        worker_id: "w:1".into(),
        generation: Arc::new(AtomicI32::new(1)),
        store: statuses.clone(),
        version: None,
        counters: Some(counters.clone()),
    };
    let task = ScriptedTask {
        journal: journal.clone(),
        script: script.clone(),
        context: context.clone(),
    };
    let args = SinkTaskArgs {
        task: Box::new(task),
        task_config: [("topics".to_string(), "t".to_string())]
            .into_iter()
            .collect(),
        converters: TaskConverters {
            key: Arc::new(StringConverter::new()),
            value: Arc::new(PoisonAwareConverter(StringConverter::new())),
            header: Arc::new(StringConverter::new()),
            key_class: "org.apache.kafka.connect.storage.StringConverter",
            value_class: "org.apache.kafka.connect.storage.StringConverter",
            header_class: "org.apache.kafka.connect.storage.StringConverter",
        },
        control: control.clone(),
        throttle: Arc::new(Throttle::new(setup.limits)),
        reporter,
        counters: counters.clone(),
        offset_flush_interval: FLUSH_INTERVAL,
        track_topics: false,
        chain: TransformationChain::default(),
        errors: setup.errors,
        offset_flush_timeout: Duration::from_secs(5),
        plugin_metrics: Default::default(),
    };
    let clients = MemoryClients {
        broker: broker.clone(),
        clock: clock.clone(),
        journal: journal.clone(),
    };
    let harness = Harness {
        lp: None,
        broker,
        clock,
        journal,
        script,
        context,
        control,
        statuses,
        counters,
        id,
    };
    (Parts { args, clients }, harness)
}

/// A started loop (the task started, the consumer subscribed).
fn started(setup: Setup) -> Harness {
    let (parts, mut h) = parts(setup);
    h.lp = Some(SinkLoop::start(parts.args, parts.clients).unwrap());
    h
}

/// A started loop with the dead letter queue and `errors.tolerance=all`.
fn tolerant() -> Harness {
    started(Setup {
        errors: ErrorHandlingConfig {
            tolerance: ToleranceType::All,
            dlq_topic: "dlq".into(),
            ..Default::default()
        },
        ..Default::default()
    })
}

impl Harness {
    fn lp(&mut self) -> &mut SinkLoop<memory::MemoryConsumer> {
        self.lp.as_mut().expect("started")
    }

    /// One turn of the loop; it must not fail.
    fn turn(&mut self) {
        self.lp().turn().unwrap();
    }

    /// Turns until `done` holds, at most `max` turns (a turn with nothing to do moves the
    /// simulated clock by its poll's timeout).
    fn turn_until(&mut self, max: usize, what: &str, mut done: impl FnMut(&Harness) -> bool) {
        for _ in 0..max {
            if done(self) {
                return;
            }
            self.turn();
        }
        assert!(
            done(self),
            "{what}: not after {max} turns; {:?}",
            self.journal.events()
        );
    }

    fn context(&self) -> SinkTaskContext {
        self.context.lock().unwrap().clone().unwrap()
    }

    fn delivered_offsets(&self, p: i32) -> Vec<i64> {
        self.journal
            .delivered()
            .into_iter()
            .filter(|(_, partition, _)| *partition == p)
            .map(|(_, _, o)| o)
            .collect()
    }

    fn state(&self) -> Option<State> {
        self.statuses.task(&self.id).map(|s| s.state)
    }

    /// Shuts the loop down after it ended with `result`.
    fn shut_down(&mut self, result: ConnectResult<()>) -> ConnectResult<()> {
        self.lp.take().expect("started").shut_down(result)
    }
}

fn offsets(pairs: &[(i32, i64)]) -> BTreeMap<TopicPartition, i64> {
    pairs.iter().map(|(p, o)| (tp(*p), *o)).collect()
}

#[test]
fn records_are_delivered_in_order_and_committed_on_the_flush_interval() {
    let mut h = started(Setup::default());
    assert_eq!(h.broker.state().subscribed, vec!["t".to_string()]);
    h.broker.append_n(&tp(0), 3);
    h.broker.append_n(&tp(1), 2);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn_until(5, "every record delivered", |h| {
        h.journal.delivered().len() == 5
    });
    assert_eq!(h.state(), Some(State::Running));
    assert_eq!(h.delivered_offsets(0), vec![0, 1, 2]);
    assert_eq!(h.delivered_offsets(1), vec![0, 1]);
    assert!(
        h.journal.commits().is_empty(),
        "committed before the interval"
    );
    // Idle turns move the simulated clock by their polls' timeouts: the commit comes once
    // offset.flush.interval.ms has passed since the loop started, not before.
    h.turn_until(100, "a commit", |h| !h.journal.commits().is_empty());
    assert!(
        h.clock.elapsed() >= FLUSH_INTERVAL,
        "{:?}",
        h.clock.elapsed()
    );
    assert!(h.clock.elapsed() < FLUSH_INTERVAL + Duration::from_secs(1));
    assert_eq!(h.journal.commits(), vec![offsets(&[(0, 3), (1, 2)])]);
    let events = h.journal.events();
    let commit = events
        .iter()
        .position(|e| matches!(e, Event::Commit(_)))
        .unwrap();
    assert_eq!(
        events[commit - 1],
        Event::PreCommit(offsets(&[(0, 3), (1, 2)]))
    );
    assert_eq!(h.broker.committed(&tp(0)), Some(3));
    // Nothing new: the next interval commits nothing again (pre_commit sees the same offsets,
    // the consumer commits them once more, as Connect's does).
    assert_eq!(
        h.counters
            .offset_commits
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn a_commit_requested_by_the_task_happens_at_the_next_turn() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 2);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(3, "delivered", |h| h.journal.delivered().len() == 2);
    let before = h.clock.elapsed();
    h.context().request_commit();
    h.turn();
    assert_eq!(h.journal.commits(), vec![offsets(&[(0, 2)])]);
    assert!(h.clock.elapsed() - before < FLUSH_INTERVAL);
}

#[test]
fn a_revocation_commits_what_was_delivered_closes_and_drops_what_was_not() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 3);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn_until(3, "first batch", |h| h.journal.delivered().len() == 3);
    // The next batch fails retriably: it waits in the queue for its redelivery.
    h.script
        .lock()
        .unwrap()
        .puts
        .push_back(Err(ConnectError::Retriable("busy".into())));
    h.broker.append_n(&tp(0), 3);
    h.turn();
    assert_eq!(
        h.journal.delivered().len(),
        3,
        "the failed batch is not delivered"
    );
    h.broker.rebalance(Rebalance::Revoke(vec![tp(0)]));
    h.turn();
    let events = h.journal.events();
    let tail: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::PreCommit(_) | Event::Commit(_) | Event::Close(_)))
        .collect();
    // Connect's order: the revoked partitions' delivered offsets committed, then closed.
    assert_eq!(
        tail,
        vec![
            &Event::PreCommit(offsets(&[(0, 3)])),
            &Event::Commit(offsets(&[(0, 3)])),
            &Event::Close(vec![tp(0)]),
        ]
    );
    assert_eq!(
        h.broker.committed(&tp(0)),
        Some(3),
        "undelivered records are not committed"
    );
    assert!(h.context().assignment().unwrap() == [tp(1)].into_iter().collect());
    // The partition comes back: its undelivered records are consumed again, once each.
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(200, "the rest delivered", |h| {
        h.journal.delivered().len() == 6
    });
    assert_eq!(h.delivered_offsets(0), vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn records_polled_before_a_revocation_in_the_same_turn_are_not_delivered() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn();
    h.broker.append_n(&tp(0), 4);
    // The second poll call of the next turn revokes partition 0: the loop has one of its
    // records in hand by then (the consumer alternates partitions, partition 1 is empty).
    h.broker
        .rebalance_in_polls(2, Rebalance::Revoke(vec![tp(0)]));
    h.turn();
    h.turn();
    assert!(
        h.delivered_offsets(0).is_empty(),
        "a revoked partition's records reached put: {:?}",
        h.delivered_offsets(0)
    );
    assert_eq!(
        h.broker.committed(&tp(0)),
        None,
        "nothing of partition 0 committed"
    );
    // Later commits never name the revoked partition (its new owner commits it).
    h.broker.append_n(&tp(1), 2);
    h.turn_until(200, "a commit of partition 1", |h| {
        h.journal.commits().iter().any(|c| c.contains_key(&tp(1)))
    });
    assert!(
        h.journal.commits().iter().all(|c| !c.contains_key(&tp(0))),
        "{:?}",
        h.journal.commits()
    );
    // Back to this task: every record of partition 0 is delivered, once each.
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(200, "partition 0 delivered", |h| {
        h.delivered_offsets(0).len() == 4
    });
    assert_eq!(h.delivered_offsets(0), vec![0, 1, 2, 3]);
}

#[test]
fn records_polled_after_a_partition_comes_back_in_the_same_turn_are_delivered() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn();
    h.broker.append_n(&tp(0), 3);
    // Revoked and assigned again inside the second poll call (an eager rebalance), which then
    // returns the first record again (the position went back to the committed offset).
    h.broker
        .rebalance_in_polls(2, Rebalance::Revoke(vec![tp(0)]));
    h.broker
        .rebalance_in_polls(2, Rebalance::Assign(vec![tp(0)]));
    h.turn_until(200, "every record delivered", |h| {
        h.delivered_offsets(0).len() >= 3
    });
    h.turn();
    assert_eq!(
        h.delivered_offsets(0),
        vec![0, 1, 2],
        "each record once, in order"
    );
}

#[test]
fn a_stopped_task_is_not_called_by_the_consumers_revocation_when_it_leaves() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 2);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(3, "delivered", |h| h.journal.delivered().len() == 2);
    h.shut_down(Ok(())).unwrap();
    assert!(h.broker.state().unsubscribed);
    // The consumer left the group after `stop` (its revocation ran then): the task saw
    // nothing after its `stop`, as Connect skips a stopped task's revocation.
    let events = h.journal.events();
    let stop = events
        .iter()
        .position(|e| matches!(e, Event::Stop))
        .expect("stopped");
    assert!(
        events[stop + 1..]
            .iter()
            .all(|e| !matches!(e, Event::Close(_) | Event::PreCommit(_) | Event::Commit(_))),
        "called after stop: {:?}",
        &events[stop + 1..]
    );
}

#[test]
fn a_retriable_put_failure_pauses_every_partition_and_redelivers_after_the_tasks_timeout() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn();
    {
        let mut s = h.script.lock().unwrap();
        s.puts
            .push_back(Err(ConnectError::Retriable("busy".into())));
        s.timeout_ms = Some(2_000);
    }
    h.broker.append_n(&tp(0), 2);
    h.turn();
    let failed_at = h.clock.elapsed();
    assert!(h.journal.delivered().is_empty());
    // Meanwhile nothing is fetched: every partition is paused until the redelivery.
    h.broker.append_n(&tp(1), 1);
    h.turn();
    let paused: HashSet<TopicPartition> = h.broker.state().paused.clone();
    assert_eq!(paused, [tp(0), tp(1)].into_iter().collect());
    h.turn_until(20, "redelivered", |h| !h.journal.delivered().is_empty());
    let waited = h.clock.elapsed() - failed_at;
    assert!(waited >= Duration::from_millis(2_000), "{waited:?}");
    assert!(waited < Duration::from_millis(2_600), "{waited:?}");
    // The same batch, alone; then the partitions resume and the rest follows.
    assert_eq!(
        h.journal.delivered(),
        vec![("t".into(), 0, 0), ("t".into(), 0, 1)]
    );
    h.turn_until(5, "the rest", |h| h.journal.delivered().len() == 3);
    assert!(h.broker.state().paused.is_empty());
}

#[test]
fn without_a_timeout_a_retriable_failure_is_redelivered_at_the_next_commit() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.script
        .lock()
        .unwrap()
        .puts
        .push_back(Err(ConnectError::Retriable("busy".into())));
    h.broker.append_n(&tp(0), 1);
    h.turn();
    h.turn_until(100, "redelivered", |h| !h.journal.delivered().is_empty());
    assert!(
        h.clock.elapsed() >= FLUSH_INTERVAL,
        "{:?}",
        h.clock.elapsed()
    );
}

#[test]
fn a_rewind_from_open_seeks_and_becomes_the_offset_to_commit() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 5);
    h.script.lock().unwrap().rewind_on_open = vec![(tp(0), 3)];
    // The first seek finds the partition not fetching yet: tried again, its records held.
    h.broker.state().refused_seeks = 1;
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(10, "delivered", |h| h.journal.delivered().len() == 2);
    assert_eq!(h.delivered_offsets(0), vec![3, 4]);
    h.context().request_commit();
    h.turn();
    assert_eq!(h.broker.committed(&tp(0)), Some(5));
}

#[test]
fn a_rewind_later_drops_queued_records_and_consumes_again_from_the_offset() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 4);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(3, "delivered", |h| h.journal.delivered().len() == 4);
    h.context().offset(tp(0), 1);
    h.turn_until(5, "again", |h| h.journal.delivered().len() == 7);
    assert_eq!(h.delivered_offsets(0), vec![0, 1, 2, 3, 1, 2, 3]);
}

#[test]
fn a_partition_the_task_pauses_is_held_until_it_resumes() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn();
    h.context().pause(&[tp(0)]).unwrap();
    h.broker.append_n(&tp(0), 2);
    h.broker.append_n(&tp(1), 2);
    h.turn_until(5, "the other partition", |h| {
        h.delivered_offsets(1).len() == 2
    });
    h.turn();
    assert!(h.delivered_offsets(0).is_empty());
    assert!(h.broker.state().paused.contains(&tp(0)));
    h.context().resume(&[tp(0)]).unwrap();
    h.turn_until(5, "resumed", |h| h.delivered_offsets(0).len() == 2);
    assert!(h.broker.state().paused.is_empty());
}

#[test]
fn a_paused_connector_reports_paused_and_hands_nothing_to_put() {
    let mut h = started(Setup {
        target: TargetState::Paused,
        ..Default::default()
    });
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.broker.append_n(&tp(0), 3);
    for _ in 0..5 {
        h.turn();
    }
    assert_eq!(h.state(), Some(State::Paused));
    assert!(h.journal.delivered().is_empty());
    assert!(
        h.broker.state().paused.contains(&tp(0)),
        "assigned while paused: paused"
    );
    h.control.set_paused(false);
    h.turn_until(5, "delivered after resuming", |h| {
        h.journal.delivered().len() == 3
    });
    assert_eq!(h.state(), Some(State::Running));
}

#[test]
fn a_tolerated_conversion_failure_goes_to_the_dead_letter_queue_before_its_offset_is_committed() {
    let mut h = tolerant();
    h.broker.append(&tp(0), Some("a"));
    h.broker.append(&tp(0), Some("poison"));
    h.broker.append(&tp(0), Some("b"));
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(5, "delivered", |h| h.journal.delivered().len() == 2);
    assert_eq!(h.delivered_offsets(0), vec![0, 2]);
    h.context().request_commit();
    h.turn();
    let events = h.journal.events();
    let sent = events
        .iter()
        .position(|e| *e == Event::DeadLetter("t".into(), 0, 1))
        .expect("the poison record in the dead letter queue");
    let flushed = events
        .iter()
        .position(|e| *e == Event::DeadLetterFlush)
        .unwrap();
    let committed = events
        .iter()
        .position(|e| matches!(e, Event::Commit(_)))
        .unwrap();
    assert!(sent < flushed && flushed < committed, "{events:?}");
    assert_eq!(h.broker.committed(&tp(0)), Some(3));
    assert_eq!(
        h.counters
            .skipped
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn a_conversion_failure_without_tolerance_fails_the_task_and_commits_nothing() {
    let mut h = started(Setup::default());
    h.broker.append(&tp(0), Some("a"));
    h.broker.append(&tp(0), Some("poison"));
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    let mut result = Ok(());
    for _ in 0..3 {
        result = h.lp().turn();
        if result.is_err() {
            break;
        }
    }
    let err = result.unwrap_err();
    assert!(err.to_string().contains("Tolerance exceeded"), "{err}");
    let err = h.shut_down(Err(err)).unwrap_err();
    assert!(err.to_string().contains("Tolerance exceeded"), "{err}");
    assert!(h.journal.commits().is_empty());
    let events = h.journal.events();
    assert_eq!(
        &events[events.len() - 2..],
        &[Event::Close(vec![tp(0)]), Event::Stop]
    );
}

#[test]
fn records_the_task_reports_as_errant_reach_the_dead_letter_queue_before_the_commit() {
    let mut h = tolerant();
    h.broker.append(&tp(0), Some("a"));
    h.broker.append(&tp(0), Some("errant"));
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(5, "delivered", |h| h.journal.delivered().len() == 2);
    h.context().request_commit();
    h.turn();
    let events = h.journal.events();
    let sent = events
        .iter()
        .position(|e| *e == Event::DeadLetter("t".into(), 0, 1))
        .expect("the errant record in the dead letter queue");
    let flushed = events
        .iter()
        .rposition(|e| *e == Event::DeadLetterFlush)
        .unwrap();
    let committed = events
        .iter()
        .position(|e| matches!(e, Event::Commit(_)))
        .unwrap();
    assert!(sent < flushed && flushed < committed, "{events:?}");
}

#[test]
fn a_failed_commit_is_tried_again_at_the_next_interval() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 2);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.broker.state().failing_commits = 1;
    h.turn_until(100, "an attempt", |h| {
        h.journal
            .events()
            .iter()
            .any(|e| matches!(e, Event::PreCommit(_)))
    });
    assert!(h.journal.commits().is_empty());
    assert_eq!(
        h.state(),
        Some(State::Running),
        "a failed commit does not fail the task"
    );
    let first = h.clock.elapsed();
    h.turn_until(100, "committed", |h| !h.journal.commits().is_empty());
    assert!(h.clock.elapsed() - first >= FLUSH_INTERVAL);
    assert_eq!(h.broker.committed(&tp(0)), Some(2));
}

#[test]
fn the_records_rate_spaces_batches_in_simulated_time() {
    let mut h = started(Setup {
        limits: Limits {
            records_per_second: Some(100.0),
            bytes_per_second: None,
        },
        ..Default::default()
    });
    h.broker.append_n(&tp(0), 1_500);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(500, "every record", |h| {
        h.journal.delivered().len() == 1_500
    });
    // Three batches of 500 at 100 records a second: each batch is booked when it goes and the
    // next waits for it, so the third goes ten simulated seconds in, whatever the wall clock.
    let took = h.clock.elapsed();
    assert!(took >= Duration::from_secs(10), "{took:?}");
    assert!(took <= Duration::from_secs(11), "{took:?}");
    assert_eq!(h.delivered_offsets(0), (0..1_500).collect::<Vec<_>>());
}

#[test]
fn a_stop_commits_closes_every_partition_and_stops_the_task_in_that_order() {
    let mut h = started(Setup::default());
    h.broker.append_n(&tp(0), 2);
    h.broker.append_n(&tp(1), 1);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0), tp(1)]));
    h.turn_until(5, "delivered", |h| h.journal.delivered().len() == 3);
    h.control.stop();
    h.lp().run().unwrap();
    h.shut_down(Ok(())).unwrap();
    let events = h.journal.events();
    assert_eq!(
        &events[events.len() - 4..],
        &[
            Event::PreCommit(offsets(&[(0, 2), (1, 1)])),
            Event::Commit(offsets(&[(0, 2), (1, 1)])),
            Event::Close(vec![tp(0), tp(1)]),
            Event::Stop,
        ]
    );
    assert!(h.broker.state().unsubscribed);
}

#[test]
fn a_panic_in_put_fails_the_task_with_a_trace() {
    let (parts, h) = parts(Setup::default());
    h.broker.append_n(&tp(0), 1);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.script.lock().unwrap().panic_in_put = true;
    run(parts.args, parts.clients);
    let status = h.statuses.task(&h.id).unwrap();
    assert_eq!(status.state, State::Failed);
    let trace = status.trace.unwrap();
    assert!(trace.contains("panicked: put exploded"), "{trace}");
}

#[test]
fn a_task_hung_in_start_is_seen_as_stalled_in_start() {
    let (parts, h) = parts(Setup::default());
    let (release, gate) = std::sync::mpsc::channel();
    h.script.lock().unwrap().start_gate = Some(gate);
    let control = h.control.clone();
    let thread = std::thread::spawn(move || run(parts.args, parts.clients));
    let metrics = &h.counters.metrics;
    let began = std::time::Instant::now();
    while metrics.call_running() != Some(TaskCall::Start) {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "start never began"
        );
        std::thread::yield_now();
    }
    // No status while it hangs (Connect reports RUNNING only once `start` returned), and the
    // stall check names the call, ahead of time as the restart policy's clock would see it.
    assert_eq!(h.state(), None);
    let later = crate::worker::metrics::now_ms() + 61_000;
    let reason = metrics
        .stall_reason(later, Duration::from_secs(60), FLUSH_INTERVAL)
        .unwrap();
    assert!(
        reason.starts_with("its start has not returned for"),
        "{reason}"
    );
    control.stop();
    release.send(()).unwrap();
    thread.join().unwrap();
    assert_eq!(metrics.call_running(), None);
    let events = h.journal.events();
    assert_eq!(events.first(), Some(&Event::Start));
    assert_eq!(events.last(), Some(&Event::Stop));
}

/// An async sink task whose `put` awaits a timer of the runtime before taking the batch.
struct TimerTask {
    journal: Journal,
}

impl tributary_api::sink::AsyncSinkTask for TimerTask {
    fn version(&self) -> String {
        "1".into()
    }
    fn start<'a>(&'a mut self, _props: &'a Props) -> tributary_api::source::TaskFuture<'a, ()> {
        Box::pin(async move {
            self.journal.push(Event::Start);
            Ok(())
        })
    }
    fn put<'a>(
        &'a mut self,
        records: &'a [SinkRecord],
    ) -> tributary_api::source::TaskFuture<'a, ()> {
        Box::pin(async move {
            if !records.is_empty() {
                // Only a runtime with a timer completes this.
                tokio::time::sleep(Duration::from_millis(5)).await;
                self.journal.push(Event::Put(
                    records
                        .iter()
                        .map(|r| (r.topic.clone(), r.kafka_partition, r.kafka_offset))
                        .collect(),
                ));
            }
            Ok(())
        })
    }
    fn flush<'a>(
        &'a mut self,
        offsets: &'a PartitionOffsets,
    ) -> tributary_api::source::TaskFuture<'a, ()> {
        Box::pin(async move {
            self.journal.push(Event::PreCommit(
                offsets.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            ));
            Ok(())
        })
    }
    fn stop(&mut self) -> tributary_api::source::TaskFuture<'_, ()> {
        Box::pin(async move {
            self.journal.push(Event::Stop);
            Ok(())
        })
    }
}

#[test]
fn an_async_sink_task_is_driven_through_the_loop_in_connects_order() {
    let (mut parts, mut h) = parts(Setup::default());
    let runtime = crate::worker::source_task::AsyncRuntime::own().unwrap();
    parts.args.task = Box::new(AsyncSinkAdapter::new(
        Box::new(TimerTask {
            journal: h.journal.clone(),
        }),
        runtime,
    ));
    h.lp = Some(SinkLoop::start(parts.args, parts.clients).unwrap());
    h.broker.append_n(&tp(0), 3);
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn_until(5, "delivered", |h| h.journal.delivered().len() == 3);
    h.control.stop();
    h.lp().run().unwrap();
    h.shut_down(Ok(())).unwrap();
    let events = h.journal.events();
    assert_eq!(events.first(), Some(&Event::Start));
    assert_eq!(
        &events[events.len() - 3..],
        &[
            Event::PreCommit(offsets(&[(0, 3)])),
            Event::Commit(offsets(&[(0, 3)])),
            Event::Stop,
        ]
    );
}

#[test]
fn the_redelivery_back_off_counts_from_when_put_failed() {
    let mut h = started(Setup::default());
    h.broker.rebalance(Rebalance::Assign(vec![tp(0)]));
    h.turn();
    {
        let mut s = h.script.lock().unwrap();
        s.puts
            .push_back(Err(ConnectError::Retriable("busy".into())));
        s.timeout_ms = Some(2_000);
        // The failing put takes 30 s, longer than the back-off it asks for.
        s.put_takes = Some((h.clock.clone(), Duration::from_secs(30)));
    }
    h.broker.append_n(&tp(0), 1);
    h.turn();
    let failed_at = h.clock.elapsed();
    h.script.lock().unwrap().put_takes = None;
    h.turn();
    assert!(
        h.journal.delivered().is_empty(),
        "redelivered before its back-off"
    );
    h.turn_until(20, "redelivered", |h| !h.journal.delivered().is_empty());
    assert!(h.clock.elapsed() - failed_at >= Duration::from_secs(2));
}
