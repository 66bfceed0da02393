//! The source loop driven with an in-memory producer and offset store in simulated time (what
//! Connect's `WorkerSourceTaskTest` does with `MockProducer` and `MockTime`): offsets committed
//! only up to the first record Kafka has not acknowledged, `commit` after the offsets are
//! written, `commit_record` with each record's metadata, refused sends failing the task or
//! tolerated, a full queue, a failed offset write, retriable `poll` errors, the rate limits,
//! pause, stop and panics.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::types::RDKafkaErrorCode;
use tributary_api::data::Value;
use tributary_api::record::{RecordMetadata, SourceMap, SourceRecord};
use tributary_api::source::{SourceTask, SourceTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_plugins::converters::string::StringConverter;

use super::memory::{Event, Journal, JournaledOffsets, MemoryClients, MemoryProducer};
use super::*;
use crate::config::throttle::Limits;
use crate::storage::offset::MemoryOffsetBackingStore;
use crate::storage::status::{MemoryStatusBackingStore, StatusBackingStore};
use crate::worker::clock::ManualClock;
use crate::worker::task::TargetState;
use crate::worker::throttle::Throttle;
use crate::ConnectorTaskId;

const FLUSH_INTERVAL: Duration = Duration::from_secs(10);

/// A record of source partition `{"p":0}` at source offset `{"n":n}`.
fn record(n: i64) -> SourceRecord {
    let mut partition = SourceMap::new();
    partition.insert("p".into(), 0.into());
    let mut offset = SourceMap::new();
    offset.insert("n".into(), n.into());
    SourceRecord::new(partition, offset, "t", None, Value::String(format!("v{n}")))
}

fn records(range: std::ops::Range<i64>) -> Vec<SourceRecord> {
    range.map(record).collect()
}

#[derive(Default)]
struct Script {
    /// What the next `poll`s return (then no records).
    polls: VecDeque<ConnectResult<Vec<SourceRecord>>>,
    panic_in_poll: bool,
    /// `commit_record` fails (after recording the call).
    fail_commit_record: bool,
    /// The value of each record `commit_record` was handed.
    committed_values: Vec<Value>,
}

struct ScriptedTask {
    journal: Journal,
    script: Arc<Mutex<Script>>,
    wants_commit_record: bool,
    reads_payload: bool,
}

impl SourceTask for ScriptedTask {
    fn version(&self) -> String {
        "1".into()
    }
    fn initialize(&mut self, _context: SourceTaskContext) {}
    fn start(&mut self, _props: &Props) -> ConnectResult<()> {
        self.journal.push(Event::Start);
        Ok(())
    }
    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        let mut s = self.script.lock().unwrap();
        if s.panic_in_poll {
            panic!("poll exploded");
        }
        let polled = s.polls.pop_front().unwrap_or(Ok(Vec::new()));
        if let Ok(r) = &polled {
            self.journal.push(Event::Poll(r.len()));
        }
        polled
    }
    fn commit(&mut self) -> ConnectResult<()> {
        self.journal.push(Event::Commit);
        Ok(())
    }
    fn wants_commit_record(&self) -> bool {
        self.wants_commit_record
    }
    fn commit_record_reads_payload(&self) -> bool {
        self.reads_payload
    }
    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<RecordMetadata>,
    ) -> ConnectResult<()> {
        self.journal.push(Event::CommitRecord(
            record.source_offset["n"].as_i64().unwrap(),
            metadata.map(|m| (m.partition, m.offset)),
        ));
        let mut script = self.script.lock().unwrap();
        script.committed_values.push(record.value.clone());
        if script.fail_commit_record {
            return Err(ConnectError::connect(
                "Sensor checkpoint-latency already exists",
            ));
        }
        Ok(())
    }
    fn stop(&mut self) -> ConnectResult<()> {
        self.journal.push(Event::Stop);
        Ok(())
    }
}

struct Setup {
    errors: ErrorHandlingConfig,
    limits: Limits,
    target: TargetState,
    wants_commit_record: bool,
    /// What the scripted task's `commit_record_reads_payload` answers.
    commit_record_reads_payload: bool,
    /// The task, instead of the scripted blocking one.
    task: Option<SourceTaskInstance>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            errors: ErrorHandlingConfig::default(),
            limits: Limits::default(),
            target: TargetState::Started,
            wants_commit_record: false,
            commit_record_reads_payload: true,
            task: None,
        }
    }
}

struct Harness {
    lp: Option<Loop>,
    producer: MemoryProducer,
    offsets: Arc<JournaledOffsets>,
    clock: Arc<ManualClock>,
    journal: Journal,
    script: Arc<Mutex<Script>>,
    control: Arc<TaskControl>,
    statuses: Arc<MemoryStatusBackingStore>,
    counters: Arc<TaskCounters>,
    id: ConnectorTaskId,
}

fn parts(setup: Setup) -> (SourceTaskArgs, MemoryClients, Harness) {
    let journal = Journal::default();
    let script = Arc::new(Mutex::new(Script::default()));
    let control = TaskControl::new(setup.target);
    let statuses = Arc::new(MemoryStatusBackingStore::default());
    let counters = Arc::new(TaskCounters::default());
    let clock = Arc::new(ManualClock::new());
    let producer = MemoryProducer::default();
    let offsets = Arc::new(JournaledOffsets {
        store: MemoryOffsetBackingStore::default(),
        journal: journal.clone(),
        failing: AtomicUsize::new(0),
    });
    let id = ConnectorTaskId {
        connector: "source".into(),
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
    let args = SourceTaskArgs {
        connector: "source".into(),
        task: setup.task.unwrap_or_else(|| {
            SourceTaskInstance::Blocking(Box::new(ScriptedTask {
                journal: journal.clone(),
                script: script.clone(),
                wants_commit_record: setup.wants_commit_record,
                reads_payload: setup.commit_record_reads_payload,
            }))
        }),
        task_config: Props::new(),
        producer_config: ClientConfig::new(),
        converters: TaskConverters {
            key: Arc::new(StringConverter::new()),
            value: Arc::new(StringConverter::new()),
            header: Arc::new(StringConverter::new()),
            key_class: "org.apache.kafka.connect.storage.StringConverter",
            value_class: "org.apache.kafka.connect.storage.StringConverter",
            header_class: "org.apache.kafka.connect.storage.StringConverter",
        },
        offsets: offsets.clone(),
        topic_creation: None,
        control: control.clone(),
        throttle: Arc::new(Throttle::new(setup.limits)),
        reporter,
        track_topics: false,
        counters: counters.clone(),
        offset_flush_interval: FLUSH_INTERVAL,
        offset_flush_timeout: Duration::from_secs(5),
        chain: TransformationChain::default(),
        errors: setup.errors,
        exactly_once: None,
        plugin_metrics: Default::default(),
        shared_producers: None,
    };
    let clients = MemoryClients {
        producer: producer.clone(),
        clock: clock.clone(),
    };
    let harness = Harness {
        lp: None,
        producer,
        offsets,
        clock,
        journal,
        script,
        control,
        statuses,
        counters,
        id,
    };
    (args, clients, harness)
}

fn started(setup: Setup) -> Harness {
    let (args, clients, mut h) = parts(setup);
    h.lp = Some(Loop::start(args, clients).unwrap());
    h
}

impl Harness {
    fn lp(&mut self) -> &mut Loop {
        self.lp.as_mut().expect("started")
    }
    fn turn(&mut self) {
        self.lp().turn().unwrap();
    }
    fn polls(&self, batches: impl IntoIterator<Item = Vec<SourceRecord>>) {
        self.script
            .lock()
            .unwrap()
            .polls
            .extend(batches.into_iter().map(Ok));
    }
    /// Moves the clock to the next commit and turns once.
    fn commit_turn(&mut self) {
        self.clock.advance(FLUSH_INTERVAL);
        self.turn();
    }
    fn state(&self) -> Option<State> {
        self.statuses.task(&self.id).map(|s| s.state)
    }
    fn written_values(&self) -> Vec<String> {
        self.producer
            .state()
            .written
            .iter()
            .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
            .collect()
    }
}

#[test]
fn offsets_are_committed_on_the_interval_up_to_the_first_record_not_acknowledged() {
    let mut h = started(Setup::default());
    h.polls([records(0..5)]);
    h.turn();
    assert_eq!(h.state(), Some(State::Running));
    assert_eq!(h.producer.state().in_flight.len(), 5);
    // Kafka acknowledges 0, 1 and 3; 2 is still in flight.
    h.producer.ack(0);
    h.producer.ack(0);
    h.producer.ack(1);
    h.turn();
    assert!(
        h.journal.written().is_empty(),
        "committed before the interval"
    );
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![1]]);
    // `commit` follows the write of the offsets.
    let events = h.journal.events();
    assert_eq!(
        &events[events.len() - 2..],
        &[Event::OffsetsWritten(vec![1]), Event::Commit]
    );
    h.producer.ack_all();
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![1], vec![4]]);
}

#[test]
fn commit_is_called_at_each_interval_even_with_no_offset_to_write() {
    // As Connect's `commitOffsets`, which calls `commitSourceTask` when nothing was flushed:
    // a task that finishes work at its commit (MirrorSourceTask's delayed offset syncs) does
    // not wait for another record.
    let mut h = started(Setup::default());
    h.producer.state().auto_ack = true;
    h.polls([records(0..2)]);
    h.turn();
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![1]]);
    let commits = |h: &Harness| {
        h.journal
            .events()
            .iter()
            .filter(|e| **e == Event::Commit)
            .count()
    };
    assert_eq!(commits(&h), 1);
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![1]], "nothing new to write");
    assert_eq!(commits(&h), 2, "commit is called all the same");
}

#[test]
fn commit_record_gets_each_acknowledged_record_with_its_metadata() {
    let mut h = started(Setup {
        wants_commit_record: true,
        ..Default::default()
    });
    h.polls([records(0..2), records(2..3)]);
    h.turn();
    h.producer.ack(1);
    h.producer.ack(0);
    // Handed over on the task's thread, before its next poll.
    h.turn();
    let acked: Vec<Event> = h
        .journal
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::CommitRecord(..)))
        .collect();
    assert_eq!(
        acked,
        vec![
            Event::CommitRecord(1, Some((0, 0))),
            Event::CommitRecord(0, Some((0, 1))),
        ]
    );
}

#[test]
fn commit_record_gets_the_payload_unless_the_task_does_not_read_it() {
    let committed = |reads_payload: bool, errors: ErrorHandlingConfig| {
        let mut h = started(Setup {
            wants_commit_record: true,
            commit_record_reads_payload: reads_payload,
            errors,
            ..Default::default()
        });
        h.polls([records(0..2)]);
        h.turn();
        h.producer.ack(0);
        h.producer.ack(0);
        h.turn();
        let acked: Vec<i64> = h
            .journal
            .events()
            .into_iter()
            .filter_map(|e| match e {
                Event::CommitRecord(n, Some(_)) => Some(n),
                _ => None,
            })
            .collect();
        assert_eq!(acked, vec![0, 1], "source offsets are always there");
        let values = std::mem::take(&mut h.script.lock().unwrap().committed_values);
        values
    };
    let v = |s: &str| Value::String(s.into());
    assert_eq!(
        committed(true, ErrorHandlingConfig::default()),
        vec![v("v0"), v("v1")]
    );
    assert_eq!(
        committed(false, ErrorHandlingConfig::default()),
        vec![Value::Null, Value::Null]
    );
    // The error log shows polled records in full: they are kept whole for it.
    let logging = ErrorHandlingConfig {
        log_enable: true,
        log_include_messages: true,
        ..Default::default()
    };
    assert_eq!(committed(false, logging), vec![v("v0"), v("v1")]);
}

#[test]
fn a_failing_commit_record_is_logged_and_fails_nothing() {
    // As Connect's `commitTaskRecord`, which logs what `commitRecord` throws.
    let mut h = started(Setup {
        wants_commit_record: true,
        ..Default::default()
    });
    h.script.lock().unwrap().fail_commit_record = true;
    h.producer.state().auto_ack = true;
    h.polls([records(0..2), records(2..4)]);
    h.turn();
    h.turn();
    h.turn();
    assert_eq!(h.state(), Some(State::Running));
    let acked = h
        .journal
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::CommitRecord(..)))
        .count();
    assert_eq!(acked, 4, "every record handed over");
    h.commit_turn();
    assert_eq!(h.journal.written().last(), Some(&vec![3]));
}

#[test]
fn a_send_kafka_refuses_fails_the_task_and_its_offset_is_never_committed() {
    let mut h = started(Setup::default());
    h.polls([records(0..3)]);
    h.turn();
    h.producer.ack(0);
    h.producer
        .fail(0, RDKafkaErrorCode::TopicAuthorizationFailed);
    let err = h.lp().turn().unwrap_err().to_string();
    assert!(
        err.contains("Unrecoverable exception from producer send callback"),
        "{err}"
    );
    h.producer.state().flush_acks = true;
    let lp = h.lp.take().unwrap();
    assert!(lp.shut_down(Err(ConnectError::connect(err))).is_err());
    // Only the record before the refused one is committed.
    assert_eq!(h.journal.written(), vec![vec![0]]);
}

#[test]
fn with_tolerance_all_a_refused_send_is_reported_and_counted_as_done() {
    let mut h = started(Setup {
        errors: ErrorHandlingConfig {
            tolerance: ToleranceType::All,
            ..Default::default()
        },
        ..Default::default()
    });
    h.polls([records(0..3)]);
    h.turn();
    h.producer
        .fail(1, RDKafkaErrorCode::TopicAuthorizationFailed);
    h.producer.ack_all();
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![2]]);
    assert_eq!(h.state(), Some(State::Running));
    assert_eq!(
        h.counters
            .metrics
            .errors
            .record_errors
            .load(Ordering::Relaxed),
        1
    );
}

#[test]
fn a_full_queue_waits_for_acknowledgements_and_loses_or_repeats_nothing() {
    let mut h = started(Setup::default());
    h.producer.state().capacity = Some(3);
    h.polls([records(0..10)]);
    h.turn();
    assert!(h.producer.state().queue_full > 0, "the queue filled up");
    h.producer.ack_all();
    let values: Vec<String> = (0..10).map(|n| format!("v{n}")).collect();
    assert_eq!(h.written_values(), values);
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![9]]);
}

#[test]
fn a_failed_offset_write_is_tried_again_at_the_next_interval_and_commit_waits_for_it() {
    let mut h = started(Setup::default());
    h.producer.state().auto_ack = true;
    h.offsets.failing.store(1, Ordering::SeqCst);
    h.polls([records(0..2)]);
    h.turn();
    h.commit_turn();
    assert!(h.journal.written().is_empty());
    assert!(
        !h.journal.events().contains(&Event::Commit),
        "commit before the write"
    );
    assert_eq!(h.state(), Some(State::Running));
    h.commit_turn();
    assert_eq!(h.journal.written(), vec![vec![1]]);
    assert!(h.journal.events().contains(&Event::Commit));
}

#[test]
fn a_retriable_poll_error_is_followed_by_another_poll() {
    let mut h = started(Setup::default());
    h.producer.state().auto_ack = true;
    h.script
        .lock()
        .unwrap()
        .polls
        .push_back(Err(ConnectError::Retriable("source busy".into())));
    h.polls([records(0..1)]);
    h.turn();
    h.turn();
    assert_eq!(h.written_values(), vec!["v0".to_string()]);
    assert_eq!(h.state(), Some(State::Running));
}

#[test]
fn a_stop_stops_the_task_before_the_final_commit_which_waits_for_records_in_flight() {
    let mut h = started(Setup::default());
    h.polls([records(0..3)]);
    h.turn();
    h.producer.state().flush_acks = true;
    h.control.stop();
    h.lp().run().unwrap();
    h.lp.take().unwrap().shut_down(Ok(())).unwrap();
    let events = h.journal.events();
    assert_eq!(
        &events[events.len() - 3..],
        &[Event::Stop, Event::OffsetsWritten(vec![2]), Event::Commit]
    );
}

#[test]
fn records_acknowledged_after_the_last_turn_reach_commit_record_before_the_task_stops() {
    let mut h = started(Setup {
        wants_commit_record: true,
        ..Default::default()
    });
    h.polls([records(0..2)]);
    h.turn();
    // Acknowledged, and the task asked to stop before another turn.
    h.producer.ack(0);
    h.producer.ack(0);
    h.control.stop();
    h.lp.take().unwrap().shut_down(Ok(())).unwrap();
    let events = h.journal.events();
    let stop = events.iter().position(|e| *e == Event::Stop).unwrap();
    let acked: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::CommitRecord(..)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(acked.len(), 2, "{events:?}");
    assert!(
        acked.iter().all(|i| *i < stop),
        "before the stop: {events:?}"
    );
}

#[test]
fn the_records_rate_spaces_polls_in_simulated_time() {
    let mut h = started(Setup {
        limits: Limits {
            records_per_second: Some(100.0),
            bytes_per_second: None,
        },
        ..Default::default()
    });
    h.producer.state().auto_ack = true;
    h.polls((0..5).map(|i| records(i * 100..(i + 1) * 100)));
    for _ in 0..5 {
        h.turn();
    }
    assert_eq!(h.written_values().len(), 500);
    // Five batches of 100 at 100 a second: the fifth goes four simulated seconds in.
    let took = h.clock.elapsed();
    assert!(took >= Duration::from_secs(4), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_paused_task_is_not_polled_and_reports_paused() {
    let mut h = started(Setup {
        target: TargetState::Paused,
        ..Default::default()
    });
    h.polls([records(0..1)]);
    for _ in 0..3 {
        h.turn();
    }
    assert_eq!(h.state(), Some(State::Paused));
    assert!(!h
        .journal
        .events()
        .iter()
        .any(|e| matches!(e, Event::Poll(_))));
    // Each paused turn waits in simulated time, not on the wall clock.
    assert!(h.clock.elapsed() >= Duration::from_millis(1_500));
    h.control.set_paused(false);
    h.turn();
    assert_eq!(h.state(), Some(State::Running));
    assert!(h.journal.events().contains(&Event::Poll(1)));
}

#[test]
fn a_panic_in_poll_fails_the_task_with_a_trace() {
    let (args, clients, h) = parts(Setup::default());
    h.script.lock().unwrap().panic_in_poll = true;
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    if let Err(e) = catch_panic(&label, || run_inner(args, clients)) {
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
    let status = h.statuses.task(&h.id).unwrap();
    assert_eq!(status.state, State::Failed);
    assert!(status.trace.unwrap().contains("panicked: poll exploded"));
    assert_eq!(h.journal.events().last(), Some(&Event::Start));
}

/// An async task whose `poll` awaits batches from a channel (cancel-safe), optionally
/// blocking its thread once (a task that blocks the runtime by mistake).
struct ChannelTask {
    batches: tokio::sync::mpsc::UnboundedReceiver<Vec<SourceRecord>>,
    journal: Journal,
    block_once: Option<Duration>,
    /// `poll` panics once a batch with this many records arrives.
    panic_at: Option<usize>,
}

impl tributary_api::source::AsyncSourceTask for ChannelTask {
    fn version(&self) -> String {
        "1".into()
    }
    fn start<'a>(&'a mut self, _props: &'a Props) -> tributary_api::source::TaskFuture<'a, ()> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.journal.push(Event::Start);
            Ok(())
        })
    }
    fn poll(&mut self) -> tributary_api::source::TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            if let Some(d) = self.block_once.take() {
                // Blocks the runtime thread: what the watchdog reports.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(d);
            }
            let batch = self.batches.recv().await.unwrap_or_default();
            if self.panic_at == Some(batch.len()) {
                panic!("poll exploded");
            }
            self.journal.push(Event::Poll(batch.len()));
            Ok(batch)
        })
    }
    fn commit(&mut self) -> tributary_api::source::TaskFuture<'_, ()> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.journal.push(Event::Commit);
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

fn channel_task(
    runtime: AsyncRuntime,
    block_once: Option<Duration>,
) -> (
    Setup,
    tokio::sync::mpsc::UnboundedSender<Vec<SourceRecord>>,
    Journal,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let journal = Journal::default();
    let task = ChannelTask {
        batches: rx,
        journal: journal.clone(),
        block_once,
        panic_at: Some(13),
    };
    let setup = Setup {
        task: Some(SourceTaskInstance::async_task(Box::new(task), runtime)),
        ..Default::default()
    };
    (setup, tx, journal)
}

#[test]
fn an_async_task_runs_in_the_blocking_loop_on_a_runtime_of_its_own() {
    let (setup, tx, journal) = channel_task(AsyncRuntime::own().unwrap(), None);
    let (args, clients, mut h) = parts(setup);
    h.producer.state().auto_ack = true;
    h.lp = Some(Loop::start(args, clients).unwrap());
    tx.send(records(0..3)).unwrap();
    h.turn();
    assert_eq!(h.written_values(), vec!["v0", "v1", "v2"]);
    tx.send(records(3..4)).unwrap();
    h.commit_turn();
    assert_eq!(
        journal.events(),
        vec![Event::Start, Event::Poll(3), Event::Poll(1), Event::Commit]
    );
    assert_eq!(h.journal.written(), vec![vec![3]]);
}

/// Waits (polling every few ms, at most 30 s) until `done` holds.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let began = std::time::Instant::now();
    while !done() {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{what}: not within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_task_on_the_shared_runtime_is_awaited_and_a_stop_drops_its_waiting_poll() {
    let runtime = AsyncRuntime::shared().expect("a multi-threaded runtime");
    let (setup, tx, journal) = channel_task(runtime, None);
    let (args, clients, h) = parts(setup);
    h.producer.state().auto_ack = true;
    h.producer.state().flush_acks = true;
    let task = tokio::spawn(drive_on_runtime(args, clients));
    tx.send(records(0..3)).unwrap();
    until("the batch sent", || h.written_values().len() == 3).await;
    assert_eq!(h.state(), Some(State::Running));
    // The task now waits in `poll` for its next batch: a future, not a thread.
    until("waiting in poll", || {
        h.counters.metrics.call_running() == Some(TaskCall::Poll)
    })
    .await;
    // The stop wakes the waiting poll, which is dropped; stop, the final commit and commit
    // follow, in Connect's order.
    h.control.stop();
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the loop ended")
        .unwrap()
        .unwrap();
    assert_eq!(
        journal.events(),
        vec![Event::Start, Event::Poll(3), Event::Stop, Event::Commit]
    );
    assert_eq!(h.journal.written(), vec![vec![2]]);
    assert_eq!(h.counters.metrics.blocking_steps.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_task_that_blocks_the_runtime_is_reported() {
    let runtime = AsyncRuntime::shared().unwrap();
    let (setup, tx, _journal) = channel_task(runtime, Some(Duration::from_millis(300)));
    let (args, clients, h) = parts(setup);
    h.producer.state().auto_ack = true;
    let task = tokio::spawn(drive_on_runtime(args, clients));
    tx.send(records(0..1)).unwrap();
    until("the record sent", || h.written_values().len() == 1).await;
    let metrics = &h.counters.metrics;
    assert_eq!(metrics.blocking_steps.load(Ordering::Relaxed), 1);
    assert!(metrics.blocking_step_max_ms.load(Ordering::Relaxed) >= 300);
    h.control.stop();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_task_whose_sends_may_wait_sends_and_commits_off_the_runtime() {
    let runtime = AsyncRuntime::shared().unwrap();
    let (mut setup, tx, journal) = channel_task(runtime, None);
    // A rate limit can make a send wait: its batches go to the blocking pool.
    setup.limits = Limits {
        records_per_second: Some(1_000_000.0),
        bytes_per_second: None,
    };
    let (args, clients, h) = parts(setup);
    h.producer.state().auto_ack = true;
    let task = tokio::spawn(drive_on_runtime(args, clients));
    tx.send(records(0..200)).unwrap();
    until("the batch sent", || h.written_values().len() == 200).await;
    // A commit is due at the next turn: it waits for the offset store off the runtime too.
    h.clock.advance(FLUSH_INTERVAL);
    tx.send(records(200..201)).unwrap();
    until("the offsets committed", || !h.journal.written().is_empty()).await;
    until("commit called", || {
        journal.events().contains(&Event::Commit)
    })
    .await;
    assert_eq!(h.journal.written(), vec![vec![200]]);
    h.control.stop();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_an_async_poll_fails_the_task_after_stop_and_the_final_commit() {
    let runtime = AsyncRuntime::shared().unwrap();
    let (setup, tx, journal) = channel_task(runtime, None);
    let (args, clients, h) = parts(setup);
    h.producer.state().auto_ack = true;
    h.producer.state().flush_acks = true;
    let task = tokio::spawn(drive_on_runtime(args, clients));
    tx.send(records(0..2)).unwrap();
    until("the batch sent", || h.written_values().len() == 2).await;
    // A batch of 13 makes the task's poll panic.
    tx.send(records(2..15)).unwrap();
    let err = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the loop ended")
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.contains("panicked: poll exploded"), "{err}");
    // The task was stopped and what Kafka acknowledged committed, as after any failure.
    assert_eq!(
        journal.events(),
        vec![Event::Start, Event::Poll(2), Event::Stop, Event::Commit]
    );
    assert_eq!(h.journal.written(), vec![vec![1]]);
    assert_eq!(
        h.counters.metrics.call_running(),
        None,
        "no call left running"
    );
}
