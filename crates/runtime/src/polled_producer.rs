//! A librdkafka producer whose events (delivery reports, errors, logs) are served by a thread of
//! its own that sleeps until librdkafka queues one: an idle producer costs no CPU.
//!
//! rust-rdkafka's `ThreadedProducer` (and the `FutureProducer` built on it) serves events with
//! `BaseProducer::poll(100 ms)` in a loop, and `poll(timeout)` waits in librdkafka for the time
//! left rounded *down* to whole milliseconds, then loops until its deadline: the last fraction
//! of a millisecond of every window becomes `rd_kafka_queue_poll(0)` calls in a tight loop.
//! That is about a millisecond of busy waiting per 100 ms window per producer, which thousands
//! of idle source tasks turn into whole cores. Calling `poll` with any other timeout has the
//! same problem.
//!
//! [`PolledProducer`] asks librdkafka to call back when its main queue (where the events of a
//! producer go) turns non-empty (`rd_kafka_queue_cb_event_enable`, the hook librdkafka offers
//! for integrating its queues into other event loops, which rust-rdkafka's `StreamConsumer`
//! uses too). The callback only sets a flag and wakes the poll thread; the thread then serves
//! what is queued with non-blocking polls (delivery callbacks run there, as with
//! `ThreadedProducer`), and goes back to sleep once the queue is empty. [`PolledProducer::flush`]
//! is librdkafka's flush, which sleeps until the poll thread handled every delivery report,
//! instead of polling in 100 ms windows.
//!
//! The queue hook (`QueueHook`) and the flush call librdkafka's C API where rust-rdkafka has no
//! wrapper, so they are `unsafe`; the crate's other `unsafe` calls are the allocator's option
//! (`allocator.rs`), the OAUTHBEARER token setter (`kafka_client.rs`) and the header probe of a
//! consumed message (`worker/consumed_headers.rs`).

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rdkafka::bindings as rdsys;
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::ClientConfig;

/// What wakes the poll thread.
#[derive(Default)]
struct Signals {
    state: Mutex<SignalState>,
    /// Signalled when an event was queued, or the producer is being dropped.
    wake: Condvar,
}

#[derive(Default)]
struct SignalState {
    /// librdkafka queued an event since the poll thread last looked.
    queued: bool,
    /// The producer is being dropped: the poll thread ends.
    stop: bool,
}

impl Signals {
    fn lock(&self) -> MutexGuard<'_, SignalState> {
        // Nothing holding this lock can panic; a poisoned lock still holds valid flags.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by librdkafka (on one of its threads) when the main queue turns non-empty.
    fn queued(&self) {
        self.lock().queued = true;
        self.wake.notify_one();
    }
}

/// librdkafka's callback: `opaque` is the `Signals` a [`QueueHook`] keeps alive. It must not
/// block: librdkafka calls it with the queue locked, from whichever thread queued the event.
extern "C" fn on_queued(_rk: *mut rdsys::rd_kafka_t, opaque: *mut c_void) {
    // SAFETY: `opaque` is `Arc::as_ptr` of the `Signals` held by the `QueueHook` that
    // registered this callback; the hook unregisters it before releasing that `Arc`, and
    // librdkafka calls it with the queue's lock held, which unregistering takes too, so no call
    // outlives the registration.
    let signals = unsafe { &*(opaque as *const Signals) };
    signals.queued();
}

/// A handle on a producer's main queue with the wake-up callback registered; unregisters and
/// releases the handle when dropped.
struct QueueHook {
    queue: *mut rdsys::rd_kafka_queue_t,
    /// Kept alive for the callback's pointer.
    _signals: Arc<Signals>,
}

// SAFETY: librdkafka queue handles may be used and destroyed from any thread.
unsafe impl Send for QueueHook {}

impl QueueHook {
    fn register<C: ProducerContext>(producer: &BaseProducer<C>, signals: Arc<Signals>) -> Self {
        let rk = producer.client().native_ptr();
        // SAFETY: `rk` is the live client of `producer`; the handle returned holds a reference
        // on the queue until `rd_kafka_queue_destroy` below, which runs before the producer is
        // destroyed (the poll thread drops its hook before its reference to the producer).
        let queue = unsafe { rdsys::rd_kafka_queue_get_main(rk) };
        // SAFETY: `queue` is valid; the opaque pointer stays valid while registered (see
        // `on_queued`).
        unsafe {
            rdsys::rd_kafka_queue_cb_event_enable(
                queue,
                Some(on_queued),
                Arc::as_ptr(&signals) as *mut c_void,
            )
        };
        QueueHook {
            queue,
            _signals: signals,
        }
    }

    /// Events waiting in the queue.
    fn len(&self) -> usize {
        // SAFETY: the handle is valid until dropped.
        unsafe { rdsys::rd_kafka_queue_length(self.queue) }
    }
}

impl Drop for QueueHook {
    fn drop(&mut self) {
        // SAFETY: the handle is valid; unregistering takes the queue's lock, so once it
        // returns no callback runs with `self._signals`' pointer.
        unsafe {
            rdsys::rd_kafka_queue_cb_event_enable(self.queue, None, std::ptr::null_mut());
            rdsys::rd_kafka_queue_destroy(self.queue);
        }
        // `self._signals`, which the callback pointed to, is released after this.
    }
}

/// The poll thread: serves every queued event, then sleeps until librdkafka queues another or
/// the producer is dropped.
fn serve<C: ProducerContext>(producer: Arc<BaseProducer<C>>, signals: Arc<Signals>) {
    let hook = QueueHook::register(&producer, signals.clone());
    loop {
        // Events queued before the hook was registered are served here too.
        while hook.len() > 0 {
            // One event per call (a delivery report event covers a batch of records); never
            // blocks, so the deadline loop inside `poll` ends at once.
            producer.poll(Duration::ZERO);
        }
        let mut st = signals.lock();
        while !st.queued && !st.stop {
            st = signals.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.stop {
            break;
        }
        st.queued = false;
    }
    // The queue handle goes before the producer reference (see `QueueHook::register`).
    drop(hook);
    drop(producer);
}

struct Inner<C: ProducerContext + 'static> {
    producer: Arc<BaseProducer<C>>,
    signals: Arc<Signals>,
    thread: Option<JoinHandle<()>>,
}

impl<C: ProducerContext + 'static> Drop for Inner<C> {
    fn drop(&mut self) {
        {
            let mut st = self.signals.lock();
            st.stop = true;
            self.signals.wake.notify_all();
        }
        if let Some(t) = self.thread.take() {
            // A delivery callback holding the last clone would drop it on the poll thread.
            if t.thread().id() != std::thread::current().id() && t.join().is_err() {
                tracing::error!("a producer's poll thread panicked");
            }
        }
        // The producer itself goes with `self.producer` (librdkafka purges what is still
        // queued and reports it, as `BaseProducer`'s drop does).
    }
}

/// A record `send` could not queue, with the reason (as `BaseProducer::send` returns it).
pub type Refused<'a, K, P, D> = (KafkaError, BaseRecord<'a, K, P, D>);

/// A [`BaseProducer`] served by a poll thread of its own that blocks until librdkafka has an
/// event (see the module docs). Clones share the producer; the thread ends when the last clone
/// is dropped.
pub struct PolledProducer<C: ProducerContext + 'static> {
    inner: Arc<Inner<C>>,
}

impl<C: ProducerContext + 'static> Clone for PolledProducer<C> {
    fn clone(&self) -> Self {
        PolledProducer {
            inner: self.inner.clone(),
        }
    }
}

impl<C: ProducerContext + 'static> PolledProducer<C> {
    /// Creates the producer from `config` with `context` (whose delivery callback runs on the
    /// poll thread) and starts the poll thread, named `thread_name`.
    pub fn create(config: &ClientConfig, context: C, thread_name: &str) -> KafkaResult<Self> {
        let producer = Arc::new(BaseProducer::from_config_and_context(config, context)?);
        let signals = Arc::new(Signals::default());
        let thread = {
            let (producer, signals) = (producer.clone(), signals.clone());
            std::thread::Builder::new()
                .name(thread_name.to_string())
                .spawn(move || serve(producer, signals))
                .map_err(|e| {
                    tracing::error!("cannot spawn a producer's poll thread: {e}");
                    KafkaError::ClientCreation(format!("cannot spawn the poll thread: {e}"))
                })?
        };
        Ok(PolledProducer {
            inner: Arc::new(Inner {
                producer,
                signals,
                thread: Some(thread),
            }),
        })
    }

    /// Queues a record (`BaseProducer::send`); its delivery report reaches the context's
    /// `delivery` on the poll thread. A record that cannot be queued comes back with the error.
    #[allow(clippy::result_large_err)]
    pub fn send<'a, K, P>(
        &self,
        record: BaseRecord<'a, K, P, C::DeliveryOpaque>,
    ) -> Result<(), Refused<'a, K, P, C::DeliveryOpaque>>
    where
        K: rdkafka::message::ToBytes + ?Sized,
        P: rdkafka::message::ToBytes + ?Sized,
    {
        self.inner.producer.send(record)
    }

    /// The producer's context (the one its delivery callback runs on).
    pub fn context(&self) -> &Arc<C> {
        self.inner.producer.context()
    }

    /// The underlying librdkafka client (to hand it an OAUTHBEARER token, for instance).
    pub fn client(&self) -> &rdkafka::client::Client<C> {
        self.inner.producer.client()
    }

    /// Records queued or in flight, plus events not served yet (`rd_kafka_outq_len`).
    pub fn in_flight_count(&self) -> i32 {
        self.inner.producer.in_flight_count()
    }

    /// Initialises a transactional producer (`transactional.id` set; KIP-98): fences the
    /// producers of older epochs with the same id and aborts their open transaction. Blocks up
    /// to `timeout`.
    pub fn init_transactions(&self, timeout: Duration) -> KafkaResult<()> {
        self.inner.producer.init_transactions(timeout)
    }

    /// Begins a transaction (local: no request to the broker).
    pub fn begin_transaction(&self) -> KafkaResult<()> {
        self.inner.producer.begin_transaction()
    }

    /// Commits the open transaction: waits (up to `timeout`) for every record sent in it to be
    /// acknowledged, with their delivery reports served by the poll thread, then commits.
    /// `KafkaError::Transaction` tells whether the error is retriable, needs an abort, or is
    /// fatal (a fenced producer).
    pub fn commit_transaction(&self, timeout: Duration) -> KafkaResult<()> {
        // rust-rdkafka's `BaseProducer::commit_transaction` flushes by polling the producer
        // itself; here the poll thread serves the reports while librdkafka's flush sleeps, so
        // its own flush finds nothing left.
        self.flush(timeout)?;
        self.inner.producer.commit_transaction(timeout)
    }

    /// Aborts the open transaction; its records are never visible to `read_committed`
    /// consumers.
    pub fn abort_transaction(&self, timeout: Duration) -> KafkaResult<()> {
        self.inner.producer.abort_transaction(timeout)
    }

    /// Sends what is queued at once (no `linger.ms` wait) and waits until every record was
    /// acknowledged and its delivery report handled, at most `timeout`; the same contract as
    /// `Producer::flush` (`KafkaError::Flush` with `OperationTimedOut` when time runs out).
    /// Not from a delivery callback: the reports it waits for are handled on that same thread.
    pub fn flush(&self, timeout: Duration) -> KafkaResult<()> {
        // librdkafka's own flush: with delivery reports as events it sends what lingers and
        // sleeps until the count of records not yet reported (which drops only once the poll
        // thread handled their reports) reaches zero. `BaseProducer::flush` would instead poll
        // the queue itself in 100 ms windows.
        let ms = i32::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
        let rk = self.inner.producer.client().native_ptr();
        // SAFETY: `rk` is the live client of the producer `self` holds.
        match unsafe { rdsys::rd_kafka_flush(rk, ms) } {
            rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR => Ok(()),
            e => Err(KafkaError::Flush(e.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use rdkafka::error::RDKafkaErrorCode;
    use rdkafka::mocking::MockCluster;
    use rdkafka::producer::DeliveryResult;
    use rdkafka::{ClientContext, Message};

    use super::*;

    /// A delivery report: the record's number, and its partition and offset or the error.
    type Report = (usize, KafkaResult<(i32, i64)>);

    /// Hands every delivery report to a channel.
    struct Reports(Mutex<mpsc::Sender<Report>>);

    impl ClientContext for Reports {}

    impl ProducerContext for Reports {
        type DeliveryOpaque = usize;
        fn delivery(&self, result: &DeliveryResult<'_>, n: usize) {
            let report = match result {
                Ok(m) => Ok((m.partition(), m.offset())),
                Err((e, _)) => Err(e.clone()),
            };
            // The test may have finished reading.
            let _receiver_may_be_gone = self.0.lock().unwrap().send((n, report));
        }
    }

    /// A generous bound for things that happen within milliseconds (not a timing assertion).
    const PATIENCE: Duration = Duration::from_secs(30);

    fn producer(
        bootstrap: &str,
        extra: &[(&str, &str)],
    ) -> (PolledProducer<Reports>, mpsc::Receiver<Report>) {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", bootstrap);
        for (k, v) in extra {
            config.set(*k, *v);
        }
        let (tx, rx) = mpsc::channel();
        let p = PolledProducer::create(&config, Reports(Mutex::new(tx)), "test-poll").unwrap();
        (p, rx)
    }

    fn send(p: &PolledProducer<Reports>, topic: &str, n: usize) {
        let value = format!("record {n}");
        let record: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(topic, n).payload(value.as_bytes());
        p.send(record).map_err(|(e, _)| e).unwrap();
    }

    #[test]
    fn delivery_reports_reach_the_context_without_anyone_polling() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 1, 1).unwrap();
        let (p, reports) = producer(&cluster.bootstrap_servers(), &[]);
        for n in 0..10 {
            send(&p, "t", n);
        }
        let mut offsets: Vec<(usize, i64)> = (0..10)
            .map(|_| {
                let (n, r) = reports.recv_timeout(PATIENCE).expect("a delivery report");
                (n, r.expect("acknowledged").1)
            })
            .collect();
        offsets.sort();
        assert_eq!(
            offsets,
            (0..10).map(|n| (n, n as i64)).collect::<Vec<_>>(),
            "each record acknowledged once, in order"
        );
        assert_eq!(p.in_flight_count(), 0);
    }

    #[test]
    fn flush_returns_once_every_delivery_report_was_handled() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 3, 1).unwrap();
        // Records linger: flush must send them at once rather than wait for linger.ms.
        let (p, reports) = producer(&cluster.bootstrap_servers(), &[("linger.ms", "60000")]);
        p.flush(PATIENCE).expect("nothing to flush");
        for n in 0..100 {
            send(&p, "t", n);
        }
        p.flush(PATIENCE).expect("flushed");
        let handled: Vec<usize> = reports.try_iter().map(|(n, _)| n).collect();
        assert_eq!(
            handled.len(),
            100,
            "every report handled before flush returned"
        );
        assert_eq!(p.in_flight_count(), 0);
    }

    #[test]
    fn flush_gives_up_when_records_stay_unacknowledged() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 1, 1).unwrap();
        let (p, reports) = producer(
            &cluster.bootstrap_servers(),
            &[("message.timeout.ms", "300000")],
        );
        cluster.broker_down(1).unwrap();
        send(&p, "t", 0);
        match p.flush(Duration::from_millis(200)) {
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut)) => {}
            other => panic!("expected a flush timeout, got {other:?}"),
        }
        assert!(
            reports.try_recv().is_err(),
            "no report for an unsent record"
        );
        // Dropping the producer purges the record and reports it as failed.
        drop(p);
        let (n, r) = reports.recv_timeout(PATIENCE).expect("the purged record");
        assert_eq!(n, 0);
        assert!(r.is_err());
    }

    #[test]
    fn dropping_the_last_clone_ends_the_poll_thread_and_releases_the_producer() {
        let cluster = MockCluster::new(1).unwrap();
        cluster.create_topic("t", 1, 1).unwrap();
        let (p, reports) = producer(&cluster.bootstrap_servers(), &[]);
        let clone = p.clone();
        drop(p);
        send(&clone, "t", 7);
        let (n, r) = reports.recv_timeout(PATIENCE).expect("served by the clone");
        assert_eq!((n, r.is_ok()), (7, true));
        drop(clone);
        // The context (holding the channel's sender) goes with the producer, which the poll
        // thread holds too: the channel closes only once that thread ended.
        assert_eq!(
            reports.recv_timeout(PATIENCE),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
    }
}
