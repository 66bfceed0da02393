//! A compacted Kafka topic read in full and followed (Connect's `KafkaBasedLog`): the consumer
//! is assigned every partition from the beginning (it never joins a group or commits), a
//! thread hands each record to a callback in order, and [`KafkaBasedLog::read_to_end`] waits
//! until every partition has been consumed up to the end offsets of the moment it was called.
//! Writes go through a producer with `acks=all` and Java's partitioner (murmur2), so keyed
//! records land in the same partition as Java's writers put them.
//!
//! An internal topic deleted while the worker runs (Connect goes on failing every read and
//! write, and its producers may auto-create the topic with the broker's defaults) is noticed
//! by the reading thread: it logs an error naming the topic and the worker setting, creates the
//! topic again with the settings it is created with at startup, reads it from the start and
//! hands the store a [`LogWriter`] to publish again what it holds in memory (see
//! [`Recovery`]). Writers never auto-create the topic.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use rdkafka::consumer::{BaseConsumer as RdBaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};
use tributary_api::{ConnectError, ConnectResult};
use tributary_group::client::ConnectionSecurity;

use tributary_group::client::TopicIdentity;

use super::topic_admin::{ensure_topic, ManagedTopic};
use crate::kafka_client::{set_initial_token, WorkerClientContext};
use crate::polled_producer::PolledProducer;

/// The log's consumers, with OAUTHBEARER tokens from the worker's login.
type BaseConsumer = RdBaseConsumer<WorkerClientContext>;

/// One record read from the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    /// `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

/// How long one write may take before it fails (Connect's 30 s budget for config writes), ms.
pub const WRITE_TIMEOUT_MS: u64 = 30_000;

type Progress = Arc<(Mutex<HashMap<i32, i64>>, Condvar)>;

/// How often the reading thread checks that its topic still exists (sooner after a read
/// error), ms.
const EXISTENCE_CHECK_MS: u64 = 2_000;

/// What a followed internal topic does when it is deleted while followed.
pub struct Recovery {
    /// The topic, its settings and the admin client that creates it.
    pub topic: ManagedTopic,
    /// Called on the reading thread once the topic exists again and the log is assigned its
    /// new partitions from the start. The flag tells whether this worker created the topic
    /// (exactly one worker of a group does; the others found it created); the writer
    /// publishes what the store holds. Writes are flushed after the call.
    pub on_recreated: OnRecreated,
}

/// [`Recovery::on_recreated`]: called with whether this worker created the topic, and the
/// writer to publish the store's contents with.
pub type OnRecreated = Box<dyn FnMut(bool, &LogWriter) + Send>;

/// A write's acknowledgement: (partition, offset), or why it failed.
type Acked = Result<(i32, i64), KafkaError>;

/// Where the acknowledgement of a write goes.
enum Reply {
    /// Nowhere: a failure is logged.
    Log,
    /// To a waiting writer.
    Wait(oneshot::Sender<Acked>),
}

/// The log producer's context: hands acknowledgements to their writers (on the producer's
/// poll thread).
struct LogProducerContext {
    topic: String,
}

impl ClientContext for LogProducerContext {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        crate::kafka_client::oauth_token(oauthbearer_config)
    }
}

impl ProducerContext for LogProducerContext {
    type DeliveryOpaque = Box<Reply>;
    fn delivery(&self, result: &DeliveryResult<'_>, reply: Box<Reply>) {
        let acked = match result {
            Ok(m) => Ok((m.partition(), m.offset())),
            Err((e, _)) => Err(e.clone()),
        };
        match *reply {
            Reply::Wait(tx) => {
                // The writer may have stopped waiting.
                let _receiver_may_be_gone = tx.send(acked);
            }
            Reply::Log => {
                if let Err(e) = acked {
                    tracing::warn!(topic = self.topic, "a write was not acknowledged: {e}");
                }
            }
        }
    }
}

type LogProducer = PolledProducer<LogProducerContext>;

/// Queues a keyed write whose acknowledgement goes to `reply`.
fn queue_write(
    producer: &LogProducer,
    topic: &str,
    key: &[u8],
    value: Option<&[u8]>,
    reply: Reply,
) -> Result<(), KafkaError> {
    let mut record: BaseRecord<'_, [u8], [u8], Box<Reply>> =
        BaseRecord::with_opaque_to(topic, Box::new(reply)).key(key);
    if let Some(v) = value {
        record = record.payload(v);
    }
    producer.send(record).map_err(|(e, _)| e)
}

/// The writing side of a log: asynchronous keyed writes to its topic.
#[derive(Clone)]
pub struct LogWriter {
    topic: String,
    producer: LogProducer,
}

impl LogWriter {
    /// Queues a write; failures (to queue it, or to have it acknowledged) are logged.
    pub fn send(&self, key: &[u8], value: Option<&[u8]>) {
        if let Err(e) = queue_write(&self.producer, &self.topic, key, value, Reply::Log) {
            tracing::warn!(topic = self.topic, "failed to queue a write: {e}");
        }
    }

    /// Queues a write and returns where its acknowledgement arrives.
    fn send_acked(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> ConnectResult<oneshot::Receiver<Acked>> {
        let (tx, rx) = oneshot::channel();
        queue_write(&self.producer, &self.topic, key, value, Reply::Wait(tx)).map_err(|e| {
            ConnectError::connect(format!("Failed to write to {}: {e}", self.topic))
        })?;
        Ok(rx)
    }
}

/// A followed Kafka topic.
pub struct KafkaBasedLog {
    topic: String,
    producer: LogProducer,
    writer: LogWriter,
    /// A client of its own for end-offset queries (Connect uses an admin client): on the
    /// reading consumer's connection they would queue behind its long-polling fetch and wait
    /// up to `fetch.wait.max.ms` (500 ms) each time the topic is idle.
    /// Shared with the reading thread, which polls it for its OAUTHBEARER token refreshes.
    offsets_client: Arc<BaseConsumer>,
    /// The topic's partitions (replaced when the topic is created again).
    partitions: Arc<Mutex<Vec<i32>>>,
    /// Next offset to consume per partition (last consumed + 1).
    progress: Progress,
    /// Set while the topic is deleted and being created again.
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The end-offset queries of [`Self::read_to_end`], shared by concurrent callers.
    end_queries: SharedEndQueries,
}

/// End-offset queries shared by concurrent reads to the end, as Connect's `KafkaBasedLog`
/// serves every `readToEnd` queued while it works with one round of end offsets: a caller
/// takes the outcome of the first query that *started* after it called (or a later one), so
/// it still reaches every record written before its call. One query runs at a time; 1,800
/// source tasks starting at once each read the offsets topic to its end (issue #34), and
/// without sharing each asked every partition's end on its own.
#[derive(Default)]
struct SharedEndQueries {
    state: Mutex<EndQueries>,
    finished: Condvar,
}

#[derive(Default)]
struct EndQueries {
    /// Queries started so far (the number of the last one).
    started: u64,
    /// The number of the last finished query, and its outcome.
    last: Option<(u64, ConnectResult<HashMap<i32, i64>>)>,
    /// Whether a query is under way.
    running: bool,
    /// Callers waiting for a query to finish.
    waiting: usize,
}

impl SharedEndQueries {
    /// The end offsets of `topic` from a query that started after this call: `query` runs on
    /// this thread when no query is under way, else the caller waits for the one under way to
    /// finish and takes the next (until `deadline`, then a timeout error).
    fn ends(
        &self,
        topic: &str,
        deadline: Instant,
        query: impl FnOnce() -> ConnectResult<HashMap<i32, i64>>,
    ) -> ConnectResult<HashMap<i32, i64>> {
        let mut st = self.state.lock().unwrap();
        let ticket = st.started + 1;
        loop {
            if let Some((n, outcome)) = &st.last {
                if *n >= ticket {
                    return outcome.clone();
                }
            }
            if !st.running {
                st.running = true;
                st.started += 1;
                let mine = st.started;
                drop(st);
                // Marks the query finished however it ends (a panic included).
                struct Finish<'a>(
                    &'a SharedEndQueries,
                    u64,
                    Option<ConnectResult<HashMap<i32, i64>>>,
                );
                impl Drop for Finish<'_> {
                    fn drop(&mut self) {
                        let mut st = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
                        st.running = false;
                        let outcome = self.2.take().unwrap_or_else(|| {
                            Err(ConnectError::connect("the end-offset query failed"))
                        });
                        st.last = Some((self.1, outcome));
                        self.0.finished.notify_all();
                    }
                }
                let mut finish = Finish(self, mine, None);
                let outcome = query();
                finish.2 = Some(outcome.clone());
                drop(finish);
                return outcome;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ConnectError::connect(format!(
                    "Timed out reading topic {topic} to its end"
                )));
            }
            st.waiting += 1;
            st = self.finished.wait_timeout(st, deadline - now).unwrap().0;
            st.waiting -= 1;
        }
    }
}

/// Waits (up to `timeout`) until `topic` has partitions that all have a leader; returns them
/// sorted. `stop` ends the wait early (`None`).
fn wait_for_partitions(
    consumer: &BaseConsumer,
    topic: &str,
    timeout: Duration,
    stop: &AtomicBool,
) -> Option<Vec<i32>> {
    let deadline = Instant::now() + timeout;
    loop {
        let md = consumer.fetch_metadata(Some(topic), Duration::from_secs(5));
        if let Ok(md) = md {
            if let Some(t) = md.topics().iter().find(|t| t.name() == topic) {
                // Every partition needs a leader, or reading its end offsets stalls
                // (a topic created a moment ago elects them one by one).
                let led = t
                    .partitions()
                    .iter()
                    .all(|p| p.leader() >= 0 && p.error().is_none());
                if t.error().is_none() && !t.partitions().is_empty() && led {
                    let mut ps: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
                    ps.sort();
                    return Some(ps);
                }
            }
        }
        if Instant::now() > deadline || stop.load(Ordering::Acquire) {
            return None;
        }
        // On the log's own thread or a blocking caller.
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The low and high watermarks of `topic`/`partition`, asking again after errors a broker gives
/// while leadership settles (a topic just created or recreated, a leader moving:
/// `NOT_LEADER_OR_FOLLOWER`, `LEADER_NOT_AVAILABLE`, `UNKNOWN_TOPIC_OR_PARTITION`, timeouts) until
/// `deadline`; other errors are returned at once. Each attempt waits up to `wait`.
fn watermarks_retrying(
    client: &BaseConsumer,
    topic: &str,
    partition: i32,
    wait: Duration,
    deadline: Instant,
) -> rdkafka::error::KafkaResult<(i64, i64)> {
    use rdkafka::types::RDKafkaErrorCode as Code;
    loop {
        let result = client.fetch_watermarks(topic, partition, wait);
        let retriable = match &result {
            Err(e) => matches!(
                e.rdkafka_error_code(),
                Some(
                    Code::NotLeaderForPartition
                        | Code::LeaderNotAvailable
                        | Code::UnknownTopicOrPartition
                        | Code::UnknownPartition
                        | Code::RequestTimedOut
                        | Code::OperationTimedOut
                        | Code::BrokerTransportFailure
                        | Code::AllBrokersDown
                        | Code::NotCoordinator
                )
            ),
            Ok(_) => false,
        };
        if !retriable || Instant::now() + Duration::from_millis(100) >= deadline {
            return result;
        }
        tracing::debug!(topic, partition, error = ?result.err(), "end offsets not available yet; asking again");
        // On a watermark query thread of a blocking caller.
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The broker's answer about `topic` (absent, or present with its KIP-516 topic id); `None`
/// when that cannot be told (e.g. the broker is unreachable): only a definite answer starts a
/// recreation.
fn topic_identity(
    bootstrap: &str,
    topic: &str,
    security: &ConnectionSecurity,
) -> Option<TopicIdentity> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    match rt.block_on(tributary_group::client::topic_identity(
        bootstrap,
        "tributary-internal-topic-check",
        topic,
        Duration::from_secs(5),
        security,
    )) {
        Ok(identity) => Some(identity),
        Err(e) => {
            tracing::debug!(topic, "could not look the topic up: {e}");
            None
        }
    }
}

/// Assigns every partition of `topic` to `consumer`, from the log start; returns the
/// watermarks queried for it (with a query's error, that partition starts at `Beginning`).
fn assign_from_start(
    consumer: &BaseConsumer,
    offsets_client: &BaseConsumer,
    topic: &str,
    partitions: &[i32],
) -> ConnectResult<Watermarks> {
    // At the log start offsets asked for here rather than at `Offset::Beginning`: librdkafka
    // asks for those itself and, when the broker is not ready to answer (a topic created a
    // moment ago), asks again only 500 ms later, a wait every later read to the end would take.
    let deadline = Instant::now() + Duration::from_secs(5);
    let starts = query_watermarks(offsets_client, topic, partitions, deadline);
    let mut tpl = TopicPartitionList::new();
    for (p, r) in &starts {
        let offset = match r {
            Ok((low, _)) => Offset::Offset(*low),
            Err(_) => Offset::Beginning,
        };
        tpl.add_partition_offset(topic, *p, offset)
            .map_err(|e| ConnectError::connect(e.to_string()))?;
    }
    consumer
        .assign(&tpl)
        .map_err(|e| ConnectError::connect(format!("Failed to assign {topic}: {e}")))?;
    Ok(starts)
}

/// Each partition's (low, high) watermarks, or the error of their query.
type Watermarks = Vec<(i32, rdkafka::error::KafkaResult<(i64, i64)>)>;

/// The offsets a read to the end must reach: the high watermark of each partition holding
/// records. Errors when a query failed.
fn ends_of(topic: &str, watermarks: Watermarks) -> ConnectResult<HashMap<i32, i64>> {
    let mut ends = HashMap::new();
    for (p, r) in watermarks {
        let (low, high) = r.map_err(|e| {
            ConnectError::connect(format!("Failed to read end offsets of {topic}: {e}"))
        })?;
        if high > low {
            ends.insert(p, high);
        }
    }
    Ok(ends)
}

/// The (low, high) watermarks of each of `partitions` of `topic`, queried at once (one round
/// trip each, on a thread each), each asked again after the errors of a topic whose leadership
/// settles, until `deadline`.
fn query_watermarks(
    client: &BaseConsumer,
    topic: &str,
    partitions: &[i32],
    deadline: Instant,
) -> Watermarks {
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(500))
        .min(Duration::from_secs(10));
    std::thread::scope(|scope| {
        let handles: Vec<_> = partitions
            .iter()
            .map(|p| {
                scope.spawn(move || (*p, watermarks_retrying(client, topic, *p, wait, deadline)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("watermark query thread"))
            .collect()
    })
}

/// The reading thread's state for following one topic.
struct Follower {
    topic: String,
    consumer: Arc<BaseConsumer>,
    /// Polled along with `consumer` so it serves its OAUTHBEARER token refreshes.
    offsets_client: Arc<BaseConsumer>,
    partitions: Arc<Mutex<Vec<i32>>>,
    progress: Progress,
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    writer: LogWriter,
    recovery: Option<Recovery>,
    /// This worker created the topic again and has not yet published its state into it.
    created_here: bool,
    /// Where to look the topic up (the consumer's `bootstrap.servers`).
    bootstrap: String,
    /// How to connect there (the worker's TLS and SASL settings).
    security: ConnectionSecurity,
    /// The id of the topic this log follows; a different id means the topic was deleted and
    /// created again, even when this worker never saw it absent.
    topic_id: Option<u128>,
}

impl Follower {
    /// Records the consumer's positions as progress when they are past the last delivered
    /// record (the end of a log written in transactions is a commit marker).
    fn advance_to_position(&self) {
        let Ok(positions) = self.consumer.position() else {
            return;
        };
        let (lock, cv) = &*self.progress;
        let mut progress = lock.lock().unwrap();
        let mut moved = false;
        for e in positions.elements() {
            if let rdkafka::Offset::Offset(o) = e.offset() {
                let at = progress.entry(e.partition()).or_insert(-1);
                if o > *at {
                    *at = o;
                    moved = true;
                }
            }
        }
        if moved {
            cv.notify_all();
        }
    }

    fn run(mut self, mut callback: Box<dyn FnMut(LogRecord) + Send>) {
        let mut last_check = Instant::now();
        let mut suspect = false;
        let mut last_error: Option<(String, Instant)> = None;
        while !self.stop.load(Ordering::Acquire) {
            // Never assigned anything: only serves events (token refreshes) and errors.
            if let Some(Err(e)) = self.offsets_client.poll(Duration::ZERO) {
                tracing::debug!(topic = self.topic, "end-offset client: {e}");
            }
            match self.consumer.poll(Duration::from_millis(100)) {
                None => {
                    // Transaction markers (and aborted records) occupy offsets but are never
                    // delivered: once caught up, the position tells how far the log was read.
                    self.advance_to_position();
                }
                Some(Ok(m)) => {
                    let rec = LogRecord {
                        partition: m.partition(),
                        offset: m.offset(),
                        key: m.key().map(<[u8]>::to_vec),
                        value: m.payload().map(<[u8]>::to_vec),
                    };
                    drop(m);
                    let (p, o) = (rec.partition, rec.offset);
                    callback(rec);
                    let (lock, cv) = &*self.progress;
                    lock.lock().unwrap().insert(p, o + 1);
                    cv.notify_all();
                }
                Some(Err(e)) => {
                    suspect = true;
                    // Our position is past the end of the partition: the topic was deleted and
                    // created again (by another worker, or an operator) before this worker
                    // noticed the gap. Read the new topic from the start.
                    let replaced = matches!(
                        e.rdkafka_error_code(),
                        Some(
                            RDKafkaErrorCode::AutoOffsetReset | RDKafkaErrorCode::OffsetOutOfRange
                        )
                    );
                    if replaced && self.recovery.is_some() {
                        // Errors for positions of the topic this log followed before a
                        // recreation may still arrive after it: the topic id tells.
                        let same =
                            match topic_identity(&self.bootstrap, &self.topic, &self.security) {
                                Some(TopicIdentity::Present(id)) => self.topic_id == Some(id),
                                _ => false,
                            };
                        if !same {
                            self.recreate("was deleted and created again");
                            last_check = Instant::now();
                        }
                        continue;
                    }
                    // The same error repeats on every poll while it lasts: log it once a minute.
                    let text = e.to_string();
                    let repeat = last_error.as_ref().is_some_and(|(t, at)| {
                        *t == text && at.elapsed() < Duration::from_secs(60)
                    });
                    if !repeat {
                        tracing::warn!(topic = self.topic, "error reading topic: {text}");
                        last_error = Some((text, Instant::now()));
                    }
                }
            }
            if self.recovery.is_some() {
                let due = if suspect { 1_000 } else { EXISTENCE_CHECK_MS };
                if last_check.elapsed() >= Duration::from_millis(due) {
                    last_check = Instant::now();
                    suspect = false;
                    let found = topic_identity(&self.bootstrap, &self.topic, &self.security);
                    let what = match found {
                        Some(TopicIdentity::Absent) => Some("was deleted"),
                        Some(TopicIdentity::Present(id))
                            if self.topic_id.is_some_and(|k| k != id) =>
                        {
                            Some("was deleted and created again")
                        }
                        Some(TopicIdentity::Present(id)) => {
                            self.topic_id = Some(id);
                            None
                        }
                        None => None,
                    };
                    // `lost` still set: an earlier attempt did not finish.
                    let what = what.or(self.lost.load(Ordering::Acquire).then_some("was deleted"));
                    if let Some(what) = what {
                        self.recreate(what);
                        last_check = Instant::now();
                    }
                }
            }
        }
    }

    /// Creates the deleted topic again (retrying until it exists with the right settings or
    /// the log stops), follows it from the start and lets the store publish its state.
    fn recreate(&mut self, what: &str) {
        let Some(recovery) = self.recovery.as_mut() else {
            return;
        };
        let spec = &recovery.topic.topic;
        if !spec.auto_create && !self.lost.swap(true, Ordering::AcqRel) {
            tracing::error!(
                topic = spec.name,
                setting = spec.setting,
                "internal topic '{}' ({}) {what} while this worker was running; internal.topics.automatic.creation.enable=false, so the worker does not create it: waiting for it to be created, then reading it from the start and publishing what this worker holds",
                spec.name,
                spec.setting,
            );
        } else if !self.lost.swap(true, Ordering::AcqRel) {
            tracing::error!(
            topic = spec.name,
            setting = spec.setting,
            "internal topic '{}' ({}) {what} while this worker was running; creating it (cleanup.policy=compact, {} partitions, replication factor {}) when absent, reading it from the start and publishing what this worker holds",
            spec.name,
            spec.setting,
            if spec.partitions < 0 { "the broker's default".to_string() } else { spec.partitions.to_string() },
            if spec.replication_factor < 0 { "the broker's default".to_string() } else { spec.replication_factor.to_string() },
            );
        }
        loop {
            match ensure_topic(&recovery.topic.admin, spec) {
                Ok(created) => {
                    self.created_here |= created;
                    break;
                }
                Err(e) => {
                    tracing::error!(
                        topic = spec.name,
                        setting = spec.setting,
                        "could not create internal topic '{}' again; retrying in 5 s: {e}",
                        spec.name
                    );
                    let until = Instant::now() + Duration::from_secs(5);
                    while Instant::now() < until {
                        if self.stop.load(Ordering::Acquire) {
                            return;
                        }
                        // On the log's own thread or a blocking caller.
                        #[allow(clippy::disallowed_methods)]
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            }
        }
        let Some(partitions) = wait_for_partitions(
            &self.consumer,
            &self.topic,
            Duration::from_secs(60),
            &self.stop,
        ) else {
            tracing::error!(
                topic = spec.name,
                "internal topic '{}' was created again but its partitions have no leader yet; checking again shortly",
                spec.name
            );
            return;
        };
        if let Err(e) = assign_from_start(
            &self.consumer,
            &self.offsets_client,
            &self.topic,
            &partitions,
        ) {
            tracing::error!(topic = spec.name, "could not follow the new topic: {e}");
            return;
        }
        {
            let (lock, cv) = &*self.progress;
            lock.lock().unwrap().clear();
            *self.partitions.lock().unwrap() = partitions.clone();
            cv.notify_all();
        }
        self.topic_id = match topic_identity(&self.bootstrap, &self.topic, &self.security) {
            Some(TopicIdentity::Present(id)) => Some(id),
            _ => None,
        };
        let created = std::mem::take(&mut self.created_here);
        (recovery.on_recreated)(created, &self.writer);
        if let Err(e) = self.writer.producer.flush(Duration::from_secs(30)) {
            // Each write's own failure is logged by the writer; this only says they are late.
            tracing::warn!(
                topic = spec.name,
                error = %e,
                "records written to the recreated internal topic not all acknowledged yet"
            );
        }
        self.lost.store(false, Ordering::Release);
        self.progress.1.notify_all();
        tracing::warn!(
            topic = spec.name,
            setting = spec.setting,
            created_here = created,
            partitions = partitions.len(),
            "internal topic '{}' ({}) exists again; this worker follows it from the start",
            spec.name,
            spec.setting
        );
    }
}

impl KafkaBasedLog {
    /// Starts following `topic`: waits up to 30 s for its partitions, reads it to the end
    /// (delivering every record to `callback` before returning), then keeps consuming on a
    /// thread of its own. `producer` / `consumer` are the client configurations; the log forces
    /// `acks=all`, Java's partitioner, no auto commit and reading from the beginning.
    /// With `recovery`, the log creates its topic again when it is deleted (see [`Recovery`]).
    pub fn start(
        topic: &str,
        mut producer: ClientConfig,
        mut consumer: ClientConfig,
        callback: Box<dyn FnMut(LogRecord) + Send>,
        recovery: Option<Recovery>,
    ) -> ConnectResult<KafkaBasedLog> {
        producer
            .set("acks", "all")
            // A write to a deleted internal topic must not create it with the broker's
            // defaults (not compacted, one partition): the reading thread creates it again.
            .set("allow.auto.create.topics", "false")
            .set("partitioner", "murmur2_random")
            .set("message.timeout.ms", WRITE_TIMEOUT_MS.to_string())
            .set("linger.ms", "0")
            // One request in flight per connection, as Connect forces: retries never reorder
            // the records of a key.
            .set("max.in.flight.requests.per.connection", "1");
        consumer
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            // A followed log starts at the beginning; a position past the end later means the
            // topic was replaced, which a recoverable log must notice rather than skip.
            .set(
                "auto.offset.reset",
                if recovery.is_some() {
                    "error"
                } else {
                    "earliest"
                },
            )
            .set("enable.partition.eof", "false")
            // Records of aborted transactions (exactly-once source tasks' offsets, a fenced
            // leader's config writes, KIP-618) are never read; librdkafka's default too.
            .set("isolation.level", "read_committed");
        if consumer.get("group.id").is_none() {
            consumer.set("group.id", format!("tributary-log-{topic}"));
        }
        let bootstrap = consumer.get("bootstrap.servers").map(str::to_string);
        let producer_config = producer;
        let consumer_config = consumer;
        let producer = PolledProducer::create(
            &producer_config,
            LogProducerContext {
                topic: topic.to_string(),
            },
            &format!("dr-{topic}"),
        )
        .map_err(|e| {
            ConnectError::connect(format!("Failed to create producer for topic {topic}: {e}"))
        })?;
        let offsets_client: Arc<BaseConsumer> = Arc::new(
            consumer_config
                .create_with_context(WorkerClientContext)
                .map_err(|e| {
                    ConnectError::connect(format!("Failed to create client for topic {topic}: {e}"))
                })?,
        );
        let consumer: Arc<BaseConsumer> = Arc::new(
            consumer_config
                .create_with_context(WorkerClientContext)
                .map_err(|e| {
                    ConnectError::connect(format!(
                        "Failed to create consumer for topic {topic}: {e}"
                    ))
                })?,
        );
        let token = |r: Result<(), crate::kafka_client::TokenError>| {
            r.map_err(|e| ConnectError::connect(format!("Kafka client for topic {topic}: {e}")))
        };
        token(set_initial_token(producer.client(), &producer_config))?;
        token(set_initial_token(offsets_client.client(), &consumer_config))?;
        token(set_initial_token(consumer.client(), &consumer_config))?;
        let started = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let partitions = wait_for_partitions(&consumer, topic, Duration::from_secs(30), &stop)
            .ok_or_else(|| {
                ConnectError::connect(format!(
                    "Could not look up partition metadata for topic {topic} within 30 s"
                ))
            })?;
        tracing::debug!(
            topic,
            ms = started.elapsed().as_millis() as u64,
            "partition metadata ready"
        );
        let watermarks = assign_from_start(&consumer, &offsets_client, topic, &partitions)?;
        let progress: Progress = Arc::new((Mutex::new(HashMap::new()), Condvar::new()));
        let partitions = Arc::new(Mutex::new(partitions));
        let lost = Arc::new(AtomicBool::new(false));
        let follower = Follower {
            topic: topic.to_string(),
            consumer: consumer.clone(),
            offsets_client: offsets_client.clone(),
            partitions: partitions.clone(),
            progress: progress.clone(),
            lost: lost.clone(),
            stop: stop.clone(),
            writer: LogWriter {
                topic: topic.to_string(),
                producer: producer.clone(),
            },
            topic_id: match recovery.as_ref().zip(bootstrap.as_deref()) {
                Some((r, b)) => match topic_identity(b, topic, &r.topic.security) {
                    Some(TopicIdentity::Present(id)) => Some(id),
                    _ => None,
                },
                None => None,
            },
            bootstrap: bootstrap.unwrap_or_default(),
            security: recovery
                .as_ref()
                .map(|r| r.topic.security.clone())
                .unwrap_or_default(),
            recovery,
            created_here: false,
        };
        let thread = std::thread::Builder::new()
            .name(format!("log-{topic}"))
            .spawn(move || follower.run(callback))
            .map_err(|e| ConnectError::connect(format!("cannot spawn log thread: {e}")))?;
        let log = KafkaBasedLog {
            topic: topic.to_string(),
            writer: LogWriter {
                topic: topic.to_string(),
                producer: producer.clone(),
            },
            producer,
            offsets_client,
            partitions,
            progress,
            lost,
            stop,
            thread: Mutex::new(Some(thread)),
            end_queries: SharedEndQueries::default(),
        };
        let t0 = Instant::now();
        let timeout = Duration::from_secs(15 * 60);
        // Nothing was written yet: the end offsets the assignment queried are the ones to reach.
        match ends_of(topic, watermarks) {
            Ok(ends) => log.read_to(ends, Instant::now() + timeout)?,
            Err(_) => log.read_to_end(timeout)?,
        }
        tracing::debug!(
            topic,
            partitions = log.partition_count(),
            ms = t0.elapsed().as_millis() as u64,
            "read the topic to its end"
        );
        Ok(log)
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The topic's partition count.
    pub fn partition_count(&self) -> usize {
        self.partitions.lock().unwrap().len()
    }

    /// Waits (until `deadline`) while the topic is being created again; errors if it still is.
    fn check_not_lost(&self, deadline: Instant) -> ConnectResult<()> {
        let (lock, cv) = &*self.progress;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.lost.load(Ordering::Acquire) {
            let now = Instant::now();
            if now >= deadline {
                return Err(ConnectError::connect(format!(
                    "Internal topic {} was deleted while this worker was running; it is being created again (see the worker's log)",
                    self.topic
                )));
            }
            guard = cv
                .wait_timeout(guard, (deadline - now).min(Duration::from_millis(100)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(())
    }

    /// Waits until the record at `offset` of `partition` (or a later one) has been read: for a
    /// record written in a transaction, until its commit marker let a `read_committed` reader
    /// past it (the markers are written after the commit returns, so the end offsets read just
    /// after a commit may not cover it yet). Errors after `timeout`.
    pub fn wait_until_read(
        &self,
        partition: i32,
        offset: i64,
        timeout: Duration,
    ) -> ConnectResult<()> {
        let deadline = Instant::now() + timeout;
        let (lock, cv) = &*self.progress;
        let mut progress = lock.lock().unwrap();
        loop {
            if progress.get(&partition).copied().unwrap_or(-1) > offset {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ConnectError::connect(format!(
                    "Timed out reading topic {} up to offset {offset} of partition {partition}",
                    self.topic
                )));
            }
            progress = cv
                .wait_timeout(progress, (deadline - now).min(Duration::from_secs(1)))
                .unwrap()
                .0;
        }
    }

    /// Waits until every record written before this call has been handed to the callback.
    /// Errors when that does not happen within `timeout`.
    pub fn read_to_end(&self, timeout: Duration) -> ConnectResult<()> {
        let deadline = Instant::now() + timeout;
        self.check_not_lost(deadline)?;
        let partitions = self.partitions.lock().unwrap().clone();
        if let Err(e) = self.producer.flush(timeout) {
            // The read below still goes to the current end; writes not yet acknowledged may lie
            // past it.
            tracing::warn!(
                topic = %self.topic,
                error = %e,
                "queued writes not all acknowledged before reading to the end; the read may miss them"
            );
        }
        // The end offsets of all partitions, queried at once (one round trip each), and shared
        // with the reads to the end that called meanwhile.
        let ends = self.end_queries.ends(&self.topic, deadline, || {
            let results =
                query_watermarks(&self.offsets_client, &self.topic, &partitions, deadline);
            tracing::debug!(
                topic = self.topic,
                ms = (timeout - deadline.saturating_duration_since(Instant::now())).as_millis()
                    as u64,
                "end offsets queried"
            );
            ends_of(&self.topic, results)
        })?;
        self.read_to(ends, deadline)
    }

    /// Waits until every partition in `ends` has been read up to its end offset there (until
    /// `deadline`); a topic being created again meanwhile is read to its new end.
    fn read_to(&self, ends: HashMap<i32, i64>, deadline: Instant) -> ConnectResult<()> {
        let (lock, cv) = &*self.progress;
        let mut progress = lock.lock().unwrap();
        loop {
            if ends
                .iter()
                .all(|(p, end)| progress.get(p).copied().unwrap_or(-1) >= *end)
            {
                return Ok(());
            }
            if self.lost.load(Ordering::Acquire) {
                // The topic is being created again: the end offsets above are of the old one.
                drop(progress);
                return self.read_to_end(deadline.saturating_duration_since(Instant::now()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ConnectError::connect(format!(
                    "Timed out reading topic {} to its end",
                    self.topic
                )));
            }
            // Woken by progress; a deleted topic is noticed within the 1 s bound.
            let wait = (deadline - now).min(Duration::from_secs(1));
            progress = cv.wait_timeout(progress, wait).unwrap().0;
        }
    }

    /// Writes a record and waits for Kafka's acknowledgement (up to [`WRITE_TIMEOUT_MS`]).
    /// Returns the record's (partition, offset).
    pub fn send_sync(&self, key: &[u8], value: Option<&[u8]>) -> ConnectResult<(i32, i64)> {
        let fut = self.writer.send_acked(key, value)?;
        match futures::executor::block_on(fut) {
            Ok(Ok(acked)) => Ok(acked),
            Ok(Err(e)) => Err(ConnectError::connect(format!(
                "Failed to write to {}: {e}",
                self.topic
            ))),
            Err(_) => Err(ConnectError::connect(format!(
                "Write to {} was cancelled",
                self.topic
            ))),
        }
    }

    /// Writes records in order and waits for Kafka's acknowledgement of every one (each up to
    /// [`WRITE_TIMEOUT_MS`]), as Connect's `KafkaConfigBackingStore.sendPrivileged` does
    /// without a fencable producer: all are sent before the first is waited for, so they
    /// travel in one request where they fit (one request in flight keeps them in order).
    /// Errors: the first write that failed or was cancelled.
    pub fn send_all_sync(&self, records: &[(&[u8], Option<&[u8]>)]) -> ConnectResult<()> {
        let mut pending = Vec::with_capacity(records.len());
        for (key, value) in records {
            pending.push(self.writer.send_acked(key, *value)?);
        }
        for fut in pending {
            match futures::executor::block_on(fut) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    return Err(ConnectError::connect(format!(
                        "Failed to write to {}: {e}",
                        self.topic
                    )))
                }
                Err(_) => {
                    return Err(ConnectError::connect(format!(
                        "Write to {} was cancelled",
                        self.topic
                    )))
                }
            }
        }
        Ok(())
    }

    /// Writes records and waits for Kafka's acknowledgement of all of them, at most `timeout`
    /// and only while `abort` answers false (checked every 20 ms). Errors: a write failed
    /// (non-retriable), or the wait ended first (retriable; the writes may still land).
    pub fn send_all_within(
        &self,
        records: &[(Vec<u8>, Option<Vec<u8>>)],
        timeout: Duration,
        abort: &dyn Fn() -> bool,
    ) -> ConnectResult<()> {
        use futures::FutureExt;
        let mut pending = Vec::with_capacity(records.len());
        for (key, value) in records {
            pending.push(self.writer.send_acked(key, value.as_deref())?);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut left = Vec::with_capacity(pending.len());
            for mut fut in pending {
                match (&mut fut).now_or_never() {
                    None => left.push(fut),
                    Some(Ok(Ok(_))) => {}
                    Some(Ok(Err(e))) => {
                        return Err(ConnectError::connect(format!(
                            "Failed to write to {}: {e}",
                            self.topic
                        )))
                    }
                    Some(Err(_)) => {
                        return Err(ConnectError::connect(format!(
                            "Write to {} was cancelled",
                            self.topic
                        )))
                    }
                }
            }
            pending = left;
            if pending.is_empty() {
                return Ok(());
            }
            if abort() || std::time::Instant::now() >= deadline {
                return Err(ConnectError::Retriable(format!(
                    "{} writes to {} not acknowledged yet; giving up waiting",
                    pending.len(),
                    self.topic
                )));
            }
            // On the log's own thread or a blocking caller.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes a record without waiting; failures are logged.
    pub fn send(&self, key: &[u8], value: Option<&[u8]>) {
        self.writer.send(key, value);
    }

    /// Waits for every queued write (up to `timeout`); a timeout is logged, as each failed
    /// write is by the writer.
    pub fn flush(&self, timeout: Duration) {
        if let Err(e) = self.producer.flush(timeout) {
            tracing::warn!(
                topic = %self.topic,
                error = %e,
                ?timeout,
                "queued writes not all acknowledged"
            );
        }
    }

    /// Stops following the topic.
    pub fn stop(&self) {
        self.flush(Duration::from_secs(10));
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.lock().unwrap().take() {
            if t.join().is_err() {
                tracing::error!(topic = %self.topic, "the log's reading thread panicked");
            }
        }
    }
}

impl Drop for KafkaBasedLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    const PATIENCE: Duration = Duration::from_secs(30);

    /// Callers that arrive while a query runs share the next one; none takes the outcome of a
    /// query that started before it called.
    #[test]
    fn concurrent_reads_to_the_end_share_queries_that_started_after_them() {
        let shared = Arc::new(SharedEndQueries::default());
        let queries = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (release_first, hold_first) = mpsc::channel::<()>();
        let (first_running, running) = mpsc::channel::<()>();
        // The first query: held until the test lets it go; answers end offset 1.
        let first = {
            let (shared, queries) = (shared.clone(), queries.clone());
            std::thread::spawn(move || {
                shared.ends("t", Instant::now() + PATIENCE, || {
                    queries.fetch_add(1, Ordering::SeqCst);
                    first_running.send(()).unwrap();
                    hold_first.recv().unwrap();
                    Ok(HashMap::from([(0, 1)]))
                })
            })
        };
        running.recv_timeout(PATIENCE).unwrap();
        // Eight callers while it runs: they must not take its outcome (records written after it
        // began may lie past offset 1); one of them runs the next query for all of them.
        let later: Vec<_> = (0..8)
            .map(|_| {
                let (shared, queries) = (shared.clone(), queries.clone());
                std::thread::spawn(move || {
                    shared.ends("t", Instant::now() + PATIENCE, || {
                        queries.fetch_add(1, Ordering::SeqCst);
                        Ok(HashMap::from([(0, 2)]))
                    })
                })
            })
            .collect();
        // Let them all queue behind the first query before it finishes.
        let deadline = Instant::now() + PATIENCE;
        while shared.state.lock().unwrap().waiting < 8 {
            assert!(Instant::now() < deadline, "the callers never waited");
            std::thread::yield_now();
        }
        release_first.send(()).unwrap();
        assert_eq!(first.join().unwrap().unwrap(), HashMap::from([(0, 1)]));
        for t in later {
            assert_eq!(t.join().unwrap().unwrap(), HashMap::from([(0, 2)]));
        }
        assert_eq!(
            queries.load(Ordering::SeqCst),
            2,
            "the eight waiting callers shared one query"
        );
    }

    /// A failed query is every waiting caller's failure, and the next caller queries again.
    #[test]
    fn a_failed_query_fails_its_callers_and_the_next_read_queries_again() {
        let shared = SharedEndQueries::default();
        let err = shared.ends("t", Instant::now() + PATIENCE, || {
            Err(ConnectError::connect("broker gone"))
        });
        assert!(err.unwrap_err().to_string().contains("broker gone"));
        let ok = shared.ends("t", Instant::now() + PATIENCE, || Ok(HashMap::new()));
        assert_eq!(ok.unwrap(), HashMap::new());
    }
}
