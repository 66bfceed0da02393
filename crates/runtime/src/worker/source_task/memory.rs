//! In-memory clients for the source loop's unit tests (what Kafka's `MockProducer` is to
//! `WorkerSourceTaskTest`): a producer whose delivery reports the test gives (or that
//! acknowledges at once), an offset store that can fail, and a journal of what happened.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::producer::BaseRecord;
use tributary_api::{ConnectError, ConnectResult};

use super::producer::{RecordSender, SourceProducerContext};
use super::shared_producer::SharedProducers;
use super::SourceClients;
use crate::storage::offset::{MemoryOffsetBackingStore, OffsetBackingStore, OffsetEntry};
use crate::worker::clock::{Clock, ManualClock};

/// What happened, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Start,
    /// `poll` returned this many records.
    Poll(usize),
    /// `commit_record` for the record with source offset `n`, with its metadata.
    CommitRecord(i64, Option<(i32, i64)>),
    /// Source offsets written: the `n` of each.
    OffsetsWritten(Vec<i64>),
    /// `commit` (after offsets were written).
    Commit,
    Stop,
}

/// A shared, ordered record of [`Event`]s.
pub type Journal = crate::worker::journal::Journal<Event>;

impl Journal {
    /// The offsets written, in order.
    pub fn written(&self) -> Vec<Vec<i64>> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::OffsetsWritten(o) => Some(o),
                _ => None,
            })
            .collect()
    }
}

/// A record the producer was handed.
#[derive(Debug, Clone)]
pub struct Sent {
    pub opaque: usize,
    pub topic: String,
    pub value: Option<Vec<u8>>,
}

#[derive(Default)]
pub struct ProducerState {
    /// Sent and not reported yet, in order.
    pub in_flight: VecDeque<Sent>,
    /// Acknowledged, in the order they were written (the topic's log).
    pub written: Vec<Sent>,
    /// Acknowledge every record as it is sent.
    pub auto_ack: bool,
    /// The most records in flight; a send beyond gets `QueueFull` (and the oldest record in
    /// flight is acknowledged meanwhile, as librdkafka delivers while the task waits).
    pub capacity: Option<usize>,
    /// How many sends got `QueueFull`.
    pub queue_full: usize,
    /// `flush` acknowledges what is in flight (else it times out when anything is).
    pub flush_acks: bool,
}

/// The in-memory producer; clones share it.
#[derive(Clone, Default)]
pub struct MemoryProducer {
    state: Arc<Mutex<ProducerState>>,
    ctx: Arc<OnceLock<Arc<SourceProducerContext>>>,
}

impl MemoryProducer {
    pub fn state(&self) -> MutexGuard<'_, ProducerState> {
        self.state.lock().unwrap()
    }

    fn ctx(&self) -> &Arc<SourceProducerContext> {
        self.ctx.get().expect("the loop created the producer")
    }

    /// Acknowledges the record in flight with this opaque.
    fn ack_opaque(&self, opaque: usize) {
        let mut s = self.state();
        let i = s
            .in_flight
            .iter()
            .position(|r| r.opaque == opaque)
            .expect("in flight");
        let rec = s.in_flight.remove(i).unwrap();
        s.written.push(rec);
        let offset = s.written.len() as i64 - 1;
        drop(s);
        self.ctx().acknowledged(opaque, 0, offset);
    }

    /// Acknowledges the `i`-th record in flight (0: the oldest).
    pub fn ack(&self, i: usize) {
        let opaque = self.state().in_flight[i].opaque;
        self.ack_opaque(opaque);
    }

    /// Acknowledges everything in flight, oldest first.
    pub fn ack_all(&self) {
        while !self.state().in_flight.is_empty() {
            self.ack(0);
        }
    }

    /// Reports the `i`-th record in flight as refused with `code`.
    pub fn fail(&self, i: usize, code: RDKafkaErrorCode) {
        let rec = self.state().in_flight.remove(i).unwrap();
        let e = KafkaError::MessageProduction(code);
        self.ctx()
            .refused(rec.opaque, &e, &rec.topic, |_| unreachable!("not kept"));
    }
}

impl RecordSender for MemoryProducer {
    fn context(&self) -> &Arc<SourceProducerContext> {
        self.ctx()
    }

    fn send<'a>(
        &self,
        record: BaseRecord<'a, [u8], [u8], usize>,
    ) -> Result<(), crate::polled_producer::Refused<'a, [u8], [u8], usize>> {
        let mut s = self.state();
        if s.capacity.is_some_and(|c| s.in_flight.len() >= c) {
            s.queue_full += 1;
            let oldest = s.in_flight.front().map(|r| r.opaque);
            drop(s);
            if let Some(opaque) = oldest {
                self.ack_opaque(opaque);
            }
            return Err((
                KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull),
                record,
            ));
        }
        let sent = Sent {
            opaque: record.delivery_opaque,
            topic: record.topic.to_string(),
            value: record.payload.map(<[u8]>::to_vec),
        };
        let opaque = sent.opaque;
        s.in_flight.push_back(sent);
        let auto = s.auto_ack;
        drop(s);
        if auto {
            self.ack_opaque(opaque);
        }
        Ok(())
    }

    fn flush(&self, _timeout: Duration) -> KafkaResult<()> {
        if self.state().flush_acks {
            self.ack_all();
        }
        if self.state().in_flight.is_empty() {
            Ok(())
        } else {
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut))
        }
    }
}

/// An offset store whose next writes fail (retriably) when asked, journaling what it wrote.
pub struct JournaledOffsets {
    pub store: MemoryOffsetBackingStore,
    pub journal: Journal,
    pub failing: AtomicUsize,
}

impl OffsetBackingStore for JournaledOffsets {
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<std::collections::HashMap<Vec<u8>, Vec<u8>>> {
        self.store.get(keys)
    }

    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()> {
        if self
            .failing
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(ConnectError::Retriable(
                "Timed out waiting for the offsets to be written".into(),
            ));
        }
        let mut ns: Vec<i64> = entries
            .iter()
            .filter_map(|(_, v)| v.as_ref())
            .map(|v| {
                let offset: serde_json::Value = serde_json::from_slice(v).unwrap();
                offset["n"].as_i64().unwrap()
            })
            .collect();
        ns.sort_unstable();
        self.store.set(entries)?;
        self.journal.push(Event::OffsetsWritten(ns));
        Ok(())
    }

    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>> {
        self.store.entries()
    }
}

/// The in-memory clients of one source loop.
pub struct MemoryClients {
    pub producer: MemoryProducer,
    pub clock: Arc<ManualClock>,
}

impl SourceClients for MemoryClients {
    fn producer(
        &mut self,
        _task: &tributary_api::ConnectorTaskId,
        ctx: &Arc<SourceProducerContext>,
        _config: &rdkafka::ClientConfig,
        _shared: &Option<(Arc<SharedProducers>, rdkafka::ClientConfig)>,
    ) -> ConnectResult<Box<dyn RecordSender>> {
        self.producer
            .ctx
            .set(ctx.clone())
            .map_err(|_| ConnectError::connect("one producer per loop"))?;
        Ok(Box::new(self.producer.clone()))
    }

    fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }
}
