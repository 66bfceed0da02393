//! One producer per worker for the at-least-once source tasks whose effective producer settings
//! are the same (issue #34): Connect gives every source task a producer of its own, and in
//! librdkafka each one costs threads (a main thread, one per broker, a poll thread) and buffers,
//! most of what an idle task costs. A task that sets `producer.override.*`, and every
//! exactly-once task (whose transactional producer Connect's zombie fencing needs), keeps a
//! producer of its own; `tributary.source.producer.shared=false` gives every task its own.
//!
//! Isolation is what Connect's per-task producers give:
//! - a record's delivery report reaches the task that sent it: the delivery opaque carries the
//!   task's slot above [`SLOT_SHIFT`] and the task's own opaque (its record sequence number)
//!   below, so a send error fails that task only, and its acknowledgements feed only its own
//!   offsets;
//! - a task waits for its own records only (its flush before an offset commit, its shutdown),
//!   not for the other tasks' traffic;
//! - a fatal producer error (an idempotent producer's, KIP-98) fails the tasks whose records
//!   were in flight, as it would fail them with producers of their own, and the next task to
//!   send leases a fresh producer ([`SharedProducers::lease`] never hands out a fatal one);
//!   records already acknowledged keep their offsets, which each task commits itself.
//!
//! A slot is freed only once every record sent through it was reported, so a late report
//! never reaches the task that takes the slot next. The producer closes with its last lease.
//! Its client id is `tributary-source-producer-<n>` (not Connect's
//! `connector-producer-<connector>-<task>`); a task that needs its own id for broker quotas
//! sets `producer.override.client.id`, which gives it its own producer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext};
use rdkafka::{ClientConfig, ClientContext};

use super::SourceProducerContext;
use crate::polled_producer::{PolledProducer, Refused};

/// Bits of a shared producer's delivery opaque below the task's slot: the task's own opaque
/// (its record sequence number, and the "sent alone" flag at bit 47), so a task's sequence
/// numbers must stay below 2^47 (at a million records a second, four and a half years).
pub const SLOT_SHIFT: u32 = 48;
const TASK_BITS: usize = (1 << SLOT_SHIFT) - 1;
/// Slots per shared producer: the opaque has 16 bits for them. A task that finds none free
/// gets a producer of its own.
const MAX_SLOTS: usize = 1 << (usize::BITS - SLOT_SHIFT);

/// Records a task sent and whose delivery report has not been handled yet, with a wait for
/// none to be left (a task's flush on a shared producer).
#[derive(Default)]
pub struct Outstanding {
    count: Mutex<u64>,
    drained: Condvar,
}

impl Outstanding {
    fn add(&self) {
        *self.lock() += 1;
    }

    /// One record reported (or not queued after all); returns how many are left.
    fn done(&self) -> u64 {
        let mut n = self.lock();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.drained.notify_all();
        }
        *n
    }

    /// How many records are outstanding.
    pub fn get(&self) -> u64 {
        *self.lock()
    }

    /// Waits until none is outstanding, at most `timeout`; whether none is.
    fn wait_drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut n = self.lock();
        while *n > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            n = self
                .drained
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.count.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A task's share of a shared producer, as Connect's per-task producer metrics show it: the
/// records and record bytes Kafka acknowledged, and the records outstanding, under the task's
/// own `client.id`. Request, byte and latency metrics of the brokers belong to the shared
/// producer, under its own `client.id` (`SharedProducers::statistics`).
pub struct TaskClientView {
    client_id: String,
    records: std::sync::atomic::AtomicI64,
    bytes: std::sync::atomic::AtomicI64,
}

impl TaskClientView {
    /// A view for a task whose producer `client.id` is `client_id`.
    pub fn new(client_id: &str) -> TaskClientView {
        TaskClientView {
            client_id: client_id.to_string(),
            records: Default::default(),
            bytes: Default::default(),
        }
    }

    /// A record Kafka acknowledged.
    pub(super) fn delivered(&self, msg: &rdkafka::message::BorrowedMessage<'_>) {
        let len = msg.key_len() + msg.payload_len();
        self.records.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len as i64, Ordering::Relaxed);
    }

    /// The task's producer statistics, in the shape of librdkafka's: `txmsgs`,
    /// `txmsg_bytes` and `msg_cnt` (`outstanding`) set, the broker-level fields zero.
    fn statistics(&self, outstanding: u64, at: &rdkafka::Statistics) -> rdkafka::Statistics {
        rdkafka::Statistics {
            name: self.client_id.clone(),
            client_id: self.client_id.clone(),
            client_type: "producer".into(),
            ts: at.ts,
            time: at.time,
            age: at.age,
            txmsgs: self.records.load(Ordering::Relaxed),
            txmsg_bytes: self.bytes.load(Ordering::Relaxed),
            msg_cnt: outstanding,
            ..Default::default()
        }
    }
}

/// A task's place on a shared producer.
struct Slot {
    task: Arc<SourceProducerContext>,
    /// The task let go of the slot while records were outstanding: freed with the last report.
    released: bool,
}

/// The context of a shared producer: hands each delivery report to the task in the opaque's
/// slot.
pub struct SharedDispatch {
    slots: RwLock<Vec<Option<Slot>>>,
    free: Mutex<Vec<usize>>,
    /// The producer's latest librdkafka statistics.
    statistics: Mutex<Option<Box<rdkafka::Statistics>>>,
}

impl SharedDispatch {
    fn new() -> SharedDispatch {
        SharedDispatch {
            slots: RwLock::new(Vec::new()),
            free: Mutex::new(Vec::new()),
            statistics: Mutex::new(None),
        }
    }

    /// A slot for `task`; `None` when all [`MAX_SLOTS`] are taken.
    fn take_slot(&self, task: Arc<SourceProducerContext>) -> Option<usize> {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let slot = Slot {
            task,
            released: false,
        };
        if let Some(i) = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            slots[i] = Some(slot);
            return Some(i);
        }
        if slots.len() >= MAX_SLOTS {
            return None;
        }
        slots.push(Some(slot));
        Some(slots.len() - 1)
    }

    /// Frees slot `i` if its task let go of it and nothing it sent is outstanding.
    fn free_if_done(&self, i: usize, releasing: bool) {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let Some(Some(slot)) = slots.get_mut(i) else {
            return;
        };
        if releasing {
            slot.released = true;
        }
        if slot.released && slot.task.outstanding.get() == 0 {
            slots[i] = None;
            self.free.lock().unwrap_or_else(|e| e.into_inner()).push(i);
        }
    }

    /// Tasks holding a slot (for tests and the worker's info).
    fn tasks(&self) -> usize {
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        slots.iter().flatten().filter(|s| !s.released).count()
    }
}

impl ClientContext for SharedDispatch {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        crate::kafka_client::oauth_token(oauthbearer_config)
    }

    /// Keeps the producer's statistics and hands each task its share
    /// ([`TaskClientView`]) as its client statistics.
    fn stats(&self, statistics: rdkafka::Statistics) {
        let tasks: Vec<Arc<SourceProducerContext>> = {
            let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
            slots
                .iter()
                .flatten()
                .filter(|s| !s.released)
                .map(|s| s.task.clone())
                .collect()
        };
        for task in tasks {
            let own = task
                .shared_view
                .statistics(task.outstanding.get(), &statistics);
            task.counters.metrics.set_client_statistics(own);
        }
        *self.statistics.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(statistics));
    }
}

impl ProducerContext for SharedDispatch {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, opaque: usize) {
        let i = opaque >> SLOT_SHIFT;
        let task = {
            let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
            slots
                .get(i)
                .and_then(Option::as_ref)
                .map(|s| s.task.clone())
        };
        let Some(task) = task else {
            // Cannot happen: a slot is kept while its records are outstanding.
            tracing::error!(
                slot = i,
                "delivery report for a free slot of a shared producer"
            );
            return;
        };
        task.delivery(result, opaque & TASK_BITS);
        if task.outstanding.done() == 0 {
            self.free_if_done(i, false);
        }
    }
}

/// A producer shared by source tasks.
pub struct SharedProducer {
    producer: PolledProducer<SharedDispatch>,
    /// `client.id`.
    name: String,
}

impl SharedProducer {
    /// Records queued or in flight on the producer, every task's.
    pub fn in_flight_count(&self) -> i32 {
        self.producer.in_flight_count()
    }

    /// Whether librdkafka raised a fatal error: the producer takes no more records.
    pub fn is_fatal(&self) -> bool {
        // librdkafka's error events carry the underlying code (`Fenced`, `OutOfOrderSequence…`),
        // not `_FATAL`: the client says whether one was fatal.
        self.producer.client().fatal_error().is_some()
    }

    /// Its `client.id`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tasks sending through it.
    pub fn tasks(&self) -> usize {
        self.producer.context().tasks()
    }

    /// Raises a fatal error in librdkafka, as a broker's fatal idempotence error would: for
    /// tests of what follows one (`rd_kafka_test_fatal_error`).
    #[doc(hidden)]
    #[allow(unsafe_code)]
    pub fn raise_fatal_error_for_test(&self, reason: &str) {
        let reason = std::ffi::CString::new(reason).unwrap_or_default();
        let rk = self.producer.client().native_ptr();
        // SAFETY: `rk` is the live client of the producer `self` holds; `reason` outlives the
        // call, which copies it.
        unsafe {
            rdkafka::bindings::rd_kafka_test_fatal_error(
                rk,
                rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                reason.as_ptr(),
            );
        }
    }
}

/// A producer config without its `client.id` (and statistics interval), sorted by key.
type ConfigKey = Vec<(String, String)>;

/// The worker's shared producers, one per effective producer config (every setting but
/// `client.id`). A producer lives while a task leases it; a fatal one is replaced on the next
/// lease.
#[derive(Default)]
pub struct SharedProducers {
    by_config: Mutex<HashMap<ConfigKey, Weak<SharedProducer>>>,
    created: AtomicU64,
}

impl SharedProducers {
    /// A registry with no producer yet.
    pub fn new() -> SharedProducers {
        SharedProducers::default()
    }

    /// A place for `task` on the shared producer for `config` (created, or replaced when
    /// fatal, as needed). `Ok(None)` when that producer has no free slot.
    ///
    /// Errors: librdkafka refused the config (as it would a task's own producer), or the
    /// OAUTHBEARER token could not be set.
    pub fn lease(
        &self,
        config: &ClientConfig,
        task: Arc<SourceProducerContext>,
    ) -> KafkaResult<Option<Lease>> {
        let mut key: ConfigKey = config
            .config_map()
            .into_iter()
            .filter(|(k, _)| *k != "client.id" && *k != "statistics.interval.ms")
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        key.sort();
        let mut by_config = self.by_config.lock().unwrap_or_else(|e| e.into_inner());
        by_config.retain(|_, p| p.strong_count() > 0);
        let live = by_config
            .get(&key)
            .and_then(Weak::upgrade)
            .filter(|p| !p.is_fatal());
        let producer = match live {
            Some(p) => p,
            None => {
                let n = self.created.fetch_add(1, Ordering::Relaxed) + 1;
                let name = format!("tributary-source-producer-{n}");
                let mut shared = config.clone();
                shared.set("client.id", &name);
                let producer =
                    PolledProducer::create(&shared, SharedDispatch::new(), &format!("dr-{name}"))?;
                crate::kafka_client::set_initial_token(producer.client(), &shared)
                    .map_err(|e| KafkaError::ClientCreation(e.to_string()))?;
                tracing::info!(producer = %name, "created a producer shared by source tasks");
                let p = Arc::new(SharedProducer { producer, name });
                by_config.insert(key, Arc::downgrade(&p));
                p
            }
        };
        drop(by_config);
        let Some(slot) = producer.producer.context().take_slot(task.clone()) else {
            return Ok(None);
        };
        Ok(Some(Lease {
            producer,
            slot,
            task,
        }))
    }

    /// The latest librdkafka statistics of each shared producer alive now (for `/metrics`,
    /// under the producer's own `client.id`).
    pub fn statistics(&self) -> Vec<Box<rdkafka::Statistics>> {
        let by_config = self.by_config.lock().unwrap_or_else(|e| e.into_inner());
        by_config
            .values()
            .filter_map(Weak::upgrade)
            .filter_map(|p| {
                p.producer
                    .context()
                    .statistics
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
            })
            .collect()
    }

    /// The shared producers alive now, with their tasks: `(client.id, tasks)`.
    pub fn live(&self) -> Vec<(String, usize)> {
        let by_config = self.by_config.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = by_config
            .values()
            .filter_map(Weak::upgrade)
            .map(|p| (p.name.clone(), p.tasks()))
            .collect();
        v.sort();
        v
    }
}

/// A task's place on a shared producer; lets go of it when dropped (the slot itself is freed
/// once the task's last record was reported).
pub struct Lease {
    producer: Arc<SharedProducer>,
    slot: usize,
    task: Arc<SourceProducerContext>,
}

impl Lease {
    /// Queues a record whose opaque is the task's own (below [`SLOT_SHIFT`]); a record that
    /// cannot be queued comes back with its opaque as given.
    #[allow(clippy::result_large_err)]
    pub fn send<'a>(
        &self,
        mut record: BaseRecord<'a, [u8], [u8], usize>,
    ) -> Result<(), Refused<'a, [u8], [u8], usize>> {
        let own = record.delivery_opaque;
        debug_assert!(own <= TASK_BITS, "a task opaque above the slot shift");
        record.delivery_opaque = (self.slot << SLOT_SHIFT) | (own & TASK_BITS);
        self.task.outstanding.add();
        self.producer
            .producer
            .send(record)
            .map_err(|(e, mut back)| {
                self.task.outstanding.done();
                back.delivery_opaque = own;
                (e, back)
            })
    }

    /// Waits until every record this task sent was reported, at most `timeout`: the contract
    /// of `Producer::flush` for this task's records only (`KafkaError::Flush` with
    /// `OperationTimedOut` when time runs out).
    pub fn flush(&self, timeout: Duration) -> KafkaResult<()> {
        if self.task.outstanding.wait_drained(timeout) {
            Ok(())
        } else {
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut))
        }
    }

    /// The task's context.
    pub fn context(&self) -> &Arc<SourceProducerContext> {
        &self.task
    }

    /// The producer.
    pub fn producer(&self) -> &Arc<SharedProducer> {
        &self.producer
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.producer
            .producer
            .context()
            .free_if_done(self.slot, true);
    }
}

#[cfg(test)]
mod tests {
    //! On a real broker (`KAFKA_BOOTSTRAP`): reports reach the task that sent the record, a
    //! task waits for its own records only, a fatal error hands the next lease a new producer
    //! and the records it lost are kept to be sent again, not failed.

    use super::super::producer::RecordAcks;
    use super::*;
    use crate::worker::submitted_records::SubmittedRecords;
    use crate::worker::TaskCounters;

    fn task_context() -> (Arc<SourceProducerContext>, RecordAcks) {
        let acks: RecordAcks = Arc::default();
        let ctx = SourceProducerContext {
            record_acks: Some(acks.clone()),
            acks: SubmittedRecords::new().inbox(),
            failure: Arc::default(),
            tolerated: None,
            counters: Arc::new(TaskCounters::default()),
            refused: Some(Mutex::new(Vec::new())),
            refused_waiting: Default::default(),
            outstanding: Outstanding::default(),
            shared_view: TaskClientView::new("connector-producer-c-0"),
        };
        (Arc::new(ctx), acks)
    }

    fn config(bootstrap: &str, task: u32) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", bootstrap)
            .set("acks", "all")
            .set("enable.idempotence", "true")
            .set("linger.ms", "5")
            .set("client.id", format!("connector-producer-c-{task}"));
        c
    }

    fn send(lease: &Lease, topic: &str, key: &str, seq: usize) {
        let record = BaseRecord::with_opaque_to(topic, seq)
            .key(key.as_bytes())
            .payload(b"v".as_slice());
        lease.send(record).map_err(|(e, _)| e).unwrap();
    }

    #[test]
    // A test thread, polling librdkafka's state while it reports the fatal error.
    #[allow(clippy::disallowed_methods)]
    fn reports_reach_their_task_and_a_fatal_producer_is_replaced_losing_nothing() {
        let Some(bootstrap) = tributary_testkit::kafka() else {
            return;
        };
        let topic = tributary_testkit::unique("shared-producer");
        let producers = SharedProducers::new();
        let (a, a_acks) = task_context();
        let (b, b_acks) = task_context();
        let la = producers
            .lease(&config(&bootstrap, 0), a.clone())
            .unwrap()
            .unwrap();
        let lb = producers
            .lease(&config(&bootstrap, 1), b.clone())
            .unwrap()
            .unwrap();
        assert!(
            Arc::ptr_eq(la.producer(), lb.producer()),
            "settings that differ only in client.id share one producer"
        );
        assert_eq!(
            producers.live(),
            vec![(la.producer().name().to_string(), 2)]
        );
        // Different settings: another producer.
        let (c, _) = task_context();
        let lc = producers
            .lease(&config(&bootstrap, 2).set("linger.ms", "1").clone(), c)
            .unwrap()
            .unwrap();
        assert!(!Arc::ptr_eq(la.producer(), lc.producer()));
        drop(lc);

        for seq in 0..50 {
            send(&la, &topic, "a", seq);
            send(&lb, &topic, "b", seq + 1000);
        }
        la.flush(Duration::from_secs(60)).unwrap();
        lb.flush(Duration::from_secs(60)).unwrap();
        let seqs = |acks: &RecordAcks| -> Vec<u64> {
            let mut v: Vec<u64> = acks.lock().unwrap().iter().map(|(s, _)| *s).collect();
            v.sort();
            v
        };
        assert_eq!(seqs(&a_acks), (0..50).collect::<Vec<u64>>());
        assert_eq!(seqs(&b_acks), (1000..1050).collect::<Vec<u64>>());
        assert!(a_acks.lock().unwrap().iter().all(|(_, at)| at.is_some()));

        // A fatal error: records sent from then on are not the task's failure but kept to be
        // sent again, and the next lease gets a new producer.
        let first = la.producer().name().to_string();
        la.producer()
            .raise_fatal_error_for_test("test: fatal idempotence error");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !la.producer().is_fatal() {
            assert!(
                Instant::now() < deadline,
                "the fatal error was not reported"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let lost = BaseRecord::with_opaque_to(&topic, 50)
            .key(b"a".as_slice())
            .payload(b"v".as_slice());
        // A fatal producer takes no more records (the task then keeps the record to send it
        // again on the replacement; `Loop::send`).
        assert!(la.send(lost).is_err(), "a fatal producer took a record");
        assert_eq!(a.outstanding.get(), 0, "a refused send is not outstanding");
        assert!(a.failure.lock().unwrap().is_none(), "{:?}", a.failure);
        drop(la);
        let (a2, a2_acks) = task_context();
        let la2 = producers
            .lease(&config(&bootstrap, 0), a2)
            .unwrap()
            .unwrap();
        assert_ne!(
            la2.producer().name(),
            first,
            "a fatal producer is never leased"
        );
        assert!(!la2.producer().is_fatal());
        send(&la2, &topic, "a", 50);
        la2.flush(Duration::from_secs(60)).unwrap();
        assert_eq!(seqs(&a2_acks), vec![50]);
        // The task still on the old producer sees it fatal.
        assert!(lb.producer().is_fatal());
    }
}
