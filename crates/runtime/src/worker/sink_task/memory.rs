//! In-memory clients for the sink loop's unit tests (what Kafka's `MockConsumer` is to
//! `WorkerSinkTaskTest`): a consumer over partitions held in memory, whose rebalances the test
//! scripts; a dead letter queue that keeps what it was sent; and a journal in which the
//! consumer, the dead letter queue and the test's task write what happened, in order.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tributary_api::record::{TimestampType, TopicPartition};
use tributary_api::sink::PartitionOffsets;
use tributary_api::{ConnectError, ConnectResult};

use super::consumer::HeaderVisitor;
use super::{ConsumedRecord, ConsumerOps, RebalanceListener, SinkClients, SinkConsumer};
use crate::config::errors::ErrorHandlingConfig;
use crate::worker::clock::{Clock, ManualClock};
use crate::worker::errors::{DeadLetterWriter, ProcessingContext, RawRecord};
use crate::worker::TaskCounters;
use crate::ConnectorTaskId;

/// What happened, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Start,
    Open(Vec<TopicPartition>),
    Close(Vec<TopicPartition>),
    /// The (original topic, partition, offset) of each record handed to `put`.
    Put(Vec<(String, i32, i64)>),
    PreCommit(BTreeMap<TopicPartition, i64>),
    /// Offsets the consumer committed.
    Commit(BTreeMap<TopicPartition, i64>),
    Stop,
    /// A record sent to the dead letter queue: (topic, partition, offset).
    DeadLetter(String, i32, i64),
    /// The dead letter queue was flushed.
    DeadLetterFlush,
}

/// A shared, ordered record of [`Event`]s.
pub type Journal = crate::worker::journal::Journal<Event>;

impl Journal {
    /// The offsets of every record handed to `put`, in order.
    pub fn delivered(&self) -> Vec<(String, i32, i64)> {
        self.events()
            .into_iter()
            .flat_map(|e| match e {
                Event::Put(r) => r,
                _ => Vec::new(),
            })
            .collect()
    }
    /// The offsets committed, in order.
    pub fn commits(&self) -> Vec<BTreeMap<TopicPartition, i64>> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Commit(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}

/// A record held by the in-memory broker.
#[derive(Debug, Clone)]
pub struct MemoryRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
}

impl ConsumedRecord for MemoryRecord {
    fn topic(&self) -> &str {
        &self.topic
    }
    fn partition(&self) -> i32 {
        self.partition
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    fn timestamp(&self) -> (Option<i64>, TimestampType) {
        match self.timestamp {
            Some(t) => (Some(t), TimestampType::CreateTime),
            None => (None, TimestampType::NoTimestampType),
        }
    }
    fn key(&self) -> Option<&[u8]> {
        self.key.as_deref()
    }
    fn payload(&self) -> Option<&[u8]> {
        self.value.as_deref()
    }
    fn try_for_each_header(&self, f: &mut HeaderVisitor<'_>) -> ConnectResult<()> {
        for (k, v) in &self.headers {
            f(k, v.as_deref())?;
        }
        Ok(())
    }
}

/// A rebalance the test scripts: applied at the start of the consumer's next poll.
#[derive(Debug, Clone)]
pub enum Rebalance {
    Assign(Vec<TopicPartition>),
    Revoke(Vec<TopicPartition>),
}

/// The partitions, the group's committed offsets and the one consumer's state.
#[derive(Debug, Default)]
pub struct BrokerState {
    pub logs: BTreeMap<TopicPartition, Vec<MemoryRecord>>,
    pub committed: HashMap<TopicPartition, i64>,
    pub subscribed: Vec<String>,
    pub assigned: BTreeSet<TopicPartition>,
    pub positions: HashMap<TopicPartition, i64>,
    pub paused: HashSet<TopicPartition>,
    pub rebalances: VecDeque<Rebalance>,
    /// Rebalances due at a later poll call: (the call's number, counted from 1, the rebalance).
    pub scheduled: Vec<(u64, Rebalance)>,
    /// Poll calls so far.
    pub polls: u64,
    /// The next commits to fail (retriably).
    pub failing_commits: usize,
    /// The next seeks to refuse (the partition not fetching yet).
    pub refused_seeks: usize,
    /// Where the next fetch starts, so partitions take turns.
    cursor: usize,
    pub unsubscribed: bool,
}

/// The in-memory broker a [`MemoryConsumer`] reads; the test appends to it, scripts rebalances
/// and reads what was committed.
#[derive(Debug, Clone, Default)]
pub struct MemoryBroker(Arc<Mutex<BrokerState>>);

impl MemoryBroker {
    pub fn state(&self) -> MutexGuard<'_, BrokerState> {
        self.0.lock().unwrap()
    }

    /// Appends a record with `value` (and key `k<offset>`) to `tp`; returns its offset.
    pub fn append(&self, tp: &TopicPartition, value: Option<&str>) -> i64 {
        let mut s = self.state();
        let log = s.logs.entry(tp.clone()).or_default();
        let offset = log.len() as i64;
        log.push(MemoryRecord {
            topic: tp.topic.clone(),
            partition: tp.partition,
            offset,
            key: Some(format!("k{offset}").into_bytes()),
            value: value.map(|v| v.as_bytes().to_vec()),
            headers: Vec::new(),
            timestamp: Some(1_700_000_000_000 + offset),
        });
        offset
    }

    /// Appends `n` records with values `v0`, `v1`… to `tp`.
    pub fn append_n(&self, tp: &TopicPartition, n: usize) {
        for i in 0..n {
            self.append(tp, Some(&format!("v{i}")));
        }
    }

    /// Scripts a rebalance for the consumer's next poll.
    pub fn rebalance(&self, r: Rebalance) {
        self.state().rebalances.push_back(r);
    }

    /// Scripts a rebalance for the consumer's poll call `calls` calls from now (1: the next),
    /// so it can fall in the middle of one turn of the loop, after records were polled.
    pub fn rebalance_in_polls(&self, calls: u64, r: Rebalance) {
        let mut s = self.state();
        let at = s.polls + calls;
        s.scheduled.push((at, r));
    }

    /// The group's committed offset of `tp`.
    pub fn committed(&self, tp: &TopicPartition) -> Option<i64> {
        self.state().committed.get(tp).copied()
    }
}

/// A consumer over a [`MemoryBroker`]; an empty poll moves the clock by its timeout.
pub struct MemoryConsumer {
    broker: MemoryBroker,
    listener: Arc<dyn RebalanceListener>,
    clock: Arc<ManualClock>,
    journal: Journal,
}

impl MemoryConsumer {
    fn unassigned(s: &BrokerState, partitions: &[TopicPartition], what: &str) -> ConnectResult<()> {
        match partitions.iter().find(|tp| !s.assigned.contains(tp)) {
            Some(tp) => Err(ConnectError::connect(format!(
                "No current assignment for partition {tp} ({what})"
            ))),
            None => Ok(()),
        }
    }
}

impl ConsumerOps for MemoryConsumer {
    fn assignment(&self) -> ConnectResult<Vec<TopicPartition>> {
        Ok(self.broker.state().assigned.iter().cloned().collect())
    }

    fn commit_sync(&self, offsets: &PartitionOffsets) -> ConnectResult<()> {
        let mut s = self.broker.state();
        if s.failing_commits > 0 {
            s.failing_commits -= 1;
            return Err(ConnectError::Retriable(
                "Commit of offsets failed: coordinator not available".into(),
            ));
        }
        let keys: Vec<TopicPartition> = offsets.keys().cloned().collect();
        Self::unassigned(&s, &keys, "commit")?;
        s.committed
            .extend(offsets.iter().map(|(k, v)| (k.clone(), *v)));
        drop(s);
        self.journal.push(Event::Commit(
            offsets.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        ));
        Ok(())
    }

    fn pause(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        let mut s = self.broker.state();
        Self::unassigned(&s, partitions, "pause")?;
        s.paused.extend(partitions.iter().cloned());
        Ok(())
    }

    fn resume(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        let mut s = self.broker.state();
        Self::unassigned(&s, partitions, "resume")?;
        for tp in partitions {
            s.paused.remove(tp);
        }
        Ok(())
    }

    fn seek(&self, tp: &TopicPartition, offset: i64) -> ConnectResult<()> {
        let mut s = self.broker.state();
        Self::unassigned(&s, std::slice::from_ref(tp), "seek")?;
        if s.refused_seeks > 0 {
            s.refused_seeks -= 1;
            return Err(ConnectError::Retriable("Local: Erroneous state".into()));
        }
        s.positions.insert(tp.clone(), offset);
        Ok(())
    }
}

impl SinkConsumer for MemoryConsumer {
    type Record<'a> = MemoryRecord;

    fn subscribe(&self, topics: &[String]) -> ConnectResult<()> {
        self.broker.state().subscribed = topics.to_vec();
        Ok(())
    }

    fn poll(&self, timeout: Duration) -> Option<Result<MemoryRecord, String>> {
        {
            let mut s = self.broker.state();
            s.polls += 1;
            let now = s.polls;
            let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut s.scheduled)
                .into_iter()
                .partition(|(at, _)| *at <= now);
            s.scheduled = later;
            s.rebalances.extend(due.into_iter().map(|(_, r)| r));
        }
        loop {
            // Each callback runs without the broker's lock: it calls back into the consumer.
            let next = self.broker.state().rebalances.pop_front();
            match next {
                None => break,
                Some(Rebalance::Revoke(tps)) => {
                    self.listener.revoked(self, &tps);
                    let mut s = self.broker.state();
                    for tp in &tps {
                        s.assigned.remove(tp);
                        s.paused.remove(tp);
                        s.positions.remove(tp);
                    }
                }
                Some(Rebalance::Assign(tps)) => {
                    {
                        let mut s = self.broker.state();
                        for tp in &tps {
                            s.assigned.insert(tp.clone());
                            let start = s.committed.get(tp).copied().unwrap_or(0);
                            s.positions.insert(tp.clone(), start);
                        }
                    }
                    self.listener.assigned(self, &tps);
                }
            }
        }
        let mut s = self.broker.state();
        let fetching: Vec<TopicPartition> = s
            .assigned
            .iter()
            .filter(|tp| !s.paused.contains(*tp))
            .cloned()
            .collect();
        for i in 0..fetching.len() {
            let tp = &fetching[(s.cursor + i) % fetching.len()];
            let position = s.positions.get(tp).copied().unwrap_or(0);
            let record = s
                .logs
                .get(tp)
                .and_then(|log| log.get(position as usize))
                .cloned();
            if let Some(record) = record {
                s.positions.insert(tp.clone(), position + 1);
                s.cursor = (s.cursor + i + 1) % fetching.len();
                return Some(Ok(record));
            }
        }
        drop(s);
        // Nothing to fetch: the poll waits its whole timeout.
        self.clock.advance(timeout);
        None
    }

    /// Leaves the group: as librdkafka's consumer does, the assigned partitions are revoked
    /// through the listener (which runs after the task stopped, at shutdown).
    fn unsubscribe(&self) {
        let assigned: Vec<TopicPartition> = {
            let mut s = self.broker.state();
            s.unsubscribed = true;
            s.assigned.iter().cloned().collect()
        };
        if !assigned.is_empty() {
            self.listener.revoked(self, &assigned);
            self.broker.state().assigned.clear();
        }
    }
}

/// A dead letter queue that keeps what it was sent, journaled.
pub struct MemoryDeadLetterQueue {
    pub journal: Journal,
}

impl DeadLetterWriter for MemoryDeadLetterQueue {
    fn send(&self, _task: &ConnectorTaskId, _ctx: &ProcessingContext, original: &RawRecord) {
        self.journal.push(Event::DeadLetter(
            original.topic.clone(),
            original.partition,
            original.offset,
        ));
    }

    fn flush(&self, _timeout: Duration) {
        self.journal.push(Event::DeadLetterFlush);
    }
}

/// The in-memory clients of one sink loop.
pub struct MemoryClients {
    pub broker: MemoryBroker,
    pub clock: Arc<ManualClock>,
    pub journal: Journal,
}

impl SinkClients for MemoryClients {
    type Consumer = MemoryConsumer;

    fn dead_letter_queue(
        &mut self,
        errors: &ErrorHandlingConfig,
    ) -> ConnectResult<Option<Box<dyn DeadLetterWriter>>> {
        Ok((!errors.dlq_topic.is_empty()).then(|| {
            Box::new(MemoryDeadLetterQueue {
                journal: self.journal.clone(),
            }) as Box<dyn DeadLetterWriter>
        }))
    }

    fn consumer(
        self,
        listener: Arc<dyn RebalanceListener>,
        _counters: Arc<TaskCounters>,
    ) -> ConnectResult<MemoryConsumer> {
        Ok(MemoryConsumer {
            broker: self.broker,
            listener,
            clock: self.clock,
            journal: self.journal,
        })
    }

    fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }
}
