//! Exactly-once source tasks (KIP-618): the transaction boundary, the transactional producer's
//! start (zombie fencing done), the offsets a transaction carries, and committing, ending and
//! aborting transactions (Connect's `ExactlyOnceWorkerSourceTask`).

use super::*;

/// How an exactly-once source task delimits its transactions (`transaction.boundary`, KIP-618).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionBoundary {
    /// `poll`: every non-empty batch `poll` returns is one transaction.
    Poll,
    /// `interval`: a transaction is committed once this long has passed since the last
    /// commit (`transaction.boundary.interval.ms`, default `offset.flush.interval.ms`).
    Interval(Duration),
    /// `connector`: the task ends its transactions through its
    /// [`SourceTaskContext::transaction_context`] (Connect's `TransactionContext`).
    Connector,
}

/// Why an exactly-once task's producer runs transactions: the worker gives such a task a
/// producer of its own (a panic here fails the task).
const EOS_PRODUCER: &str = "an exactly-once task owns its producer";

/// A fallible check an exactly-once task runs around the initialisation of its producer.
pub type ProducerCheck = Box<dyn FnOnce() -> ConnectResult<()> + Send>;

/// What an exactly-once source task needs besides a regular one (Connect's
/// `ExactlyOnceWorkerSourceTask`, KIP-618). Its producer config carries the task's
/// `transactional.id`.
pub struct ExactlyOnceArgs {
    pub boundary: TransactionBoundary,
    /// The offsets topic the task's offsets are written to, in its transactions.
    pub offsets_topic: String,
    /// With a connector-specific offsets topic, the worker's offset store: committed offsets
    /// are written there too after each commit, best-effort (Connect's secondary store).
    pub secondary_offsets: Option<Arc<dyn OffsetBackingStore>>,
    /// Run before the producer is initialised: the round of zombie fencing the leader does
    /// for the connector's new task generation (Connect's `preProducerCheck`).
    pub pre_producer_check: ProducerCheck,
    /// Run after the producer is initialised (which fenced the older producers of this task's
    /// `transactional.id`): the task's generation must still be the connector's latest and
    /// the task still assigned to this worker (Connect's `postProducerCheck`).
    pub post_producer_check: ProducerCheck,
    /// How long a commit (and the initialisation) may take before the task fails.
    pub commit_timeout: Duration,
}

/// The state of an exactly-once task's transactions.
pub(super) struct Transactions {
    pub(super) boundary: TransactionBoundary,
    pub(super) offsets_topic: String,
    pub(super) secondary_offsets: Option<Arc<dyn OffsetBackingStore>>,
    pub(super) commit_timeout: Duration,
    /// With `transaction.boundary=connector`: the context the task ends transactions through.
    pub(super) context: Option<Arc<TransactionContext>>,
    /// Whether a transaction is open (records were sent since the last commit).
    pub(super) open: bool,
    /// The latest offset of each source partition sent in the open transaction: offset key
    /// and value bytes, written to the offsets topic just before the commit.
    pub(super) offsets: PendingOffsets,
    pub(super) last_commit: Instant,
}

/// The latest source offset of each source partition sent in an exactly-once task's open
/// transaction, serialized only when the transaction commits (a task's records usually share
/// one partition map, recognised by pointer before its contents are compared).
#[derive(Default)]
pub(super) struct PendingOffsets(Vec<(Arc<SourceMap>, SourceMap)>);

impl PendingOffsets {
    pub(super) fn set(&mut self, partition: &Arc<SourceMap>, offset: &SourceMap) {
        match self
            .0
            .iter_mut()
            .find(|(p, _)| Arc::ptr_eq(p, partition) || **p == **partition)
        {
            Some((_, o)) => o.clone_from(offset),
            None => self.0.push((partition.clone(), offset.clone())),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The offsets-topic records (key, value) of the pending offsets, which are then cleared.
    pub(super) fn drain_serialized(&mut self, connector: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.0
            .drain(..)
            .map(|(p, o)| (offset_key(connector, &p), offset_value(&o)))
            .collect()
    }
}

/// Connect's `ExactlyOnceWorkerSourceTask.initializeAndStart` up to the task's start: the
/// fencing check, the producer's initialisation (which fences older producers of the same
/// `transactional.id` and aborts their open transaction), then the generation check.
pub(super) fn start_transactions(
    producer: &PolledProducer<OwnContext>,
    eos: ExactlyOnceArgs,
) -> ConnectResult<Transactions> {
    (eos.pre_producer_check)()?;
    producer
        .init_transactions(eos.commit_timeout)
        .map_err(|e| {
            ConnectError::connect(format!(
                "Failed to initialize the transactional producer: {e}"
            ))
        })?;
    (eos.post_producer_check)()?;
    Ok(Transactions {
        context: (eos.boundary == TransactionBoundary::Connector)
            .then(|| Arc::new(TransactionContext::default())),
        boundary: eos.boundary,
        offsets_topic: eos.offsets_topic,
        secondary_offsets: eos.secondary_offsets,
        commit_timeout: eos.commit_timeout,
        open: false,
        offsets: PendingOffsets::default(),
        last_commit: Instant::now(),
    })
}

impl Transactions {
    /// Whether an `interval` boundary is due: a transaction is open and the interval passed.
    pub(super) fn due(&self) -> bool {
        match self.boundary {
            TransactionBoundary::Interval(every) => {
                self.open && self.last_commit.elapsed() >= every
            }
            TransactionBoundary::Poll | TransactionBoundary::Connector => false,
        }
    }
}

impl Loop {
    /// Commits the open transaction of an exactly-once task: the offsets of its records are
    /// written to the offsets topic in it, then it is committed (records and offsets become
    /// visible together). Any failure fails the task, as in Connect; a fenced producer means
    /// another worker runs this task now.
    pub(super) fn commit_transaction(&mut self) -> ConnectResult<()> {
        let Some(t) = self.transactions.as_mut() else {
            return Ok(());
        };
        if !t.open {
            if t.offsets.is_empty() {
                return Ok(());
            }
            // The offsets of the records of a transaction the task aborted: committed in a
            // transaction of their own, so the task does not read those records again.
            begin_transaction(self.producer.as_ref())?;
            t.open = true;
        }
        let began = Instant::now();
        let entries = t.offsets.drain_serialized(&self.connector);
        let secondary: Vec<OffsetEntry> = match &t.secondary_offsets {
            Some(_) => entries
                .iter()
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
            None => Vec::new(),
        };
        for (key, value) in entries {
            let mut rec: BaseRecord<'_, [u8], [u8], usize> =
                BaseRecord::with_opaque_to(&t.offsets_topic, OFFSET_RECORD)
                    .key(&key[..])
                    .payload(&value[..]);
            loop {
                match self.producer.send(rec) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        rec = back;
                        self.acks.wait(1, QUEUE_FULL_WAIT);
                    }
                    Err((e, _)) => {
                        return Err(ConnectError::connect(format!(
                            "Failed to write source offsets to {}: {e}",
                            t.offsets_topic
                        )))
                    }
                }
            }
        }
        let committed = self
            .producer
            .transactional()
            .expect(EOS_PRODUCER)
            .commit_transaction(t.commit_timeout);
        t.open = false;
        t.last_commit = Instant::now();
        if let Err(e) = committed {
            let fenced = matches!(&e, KafkaError::Transaction(err) if err.is_fatal());
            if !fenced {
                if let Err(abort) = self
                    .producer
                    .transactional()
                    .expect(EOS_PRODUCER)
                    .abort_transaction(t.commit_timeout)
                {
                    tracing::warn!(task = %self.reporter.id, "aborting the failed transaction failed: {abort}");
                }
            }
            self.counters.metrics.commit_done(false, began.elapsed());
            return Err(ConnectError::connect(format!(
                "Failed to commit the transaction of task {}{}: {e}",
                self.reporter.id,
                if fenced {
                    " (the producer was fenced: another instance of the task has taken over)"
                } else {
                    ""
                }
            )));
        }
        self.counters.metrics.commit_done(true, began.elapsed());
        if let Some(worker) = &t.secondary_offsets {
            ConnectorOffsetBackingStore::write_secondary(worker.clone(), secondary);
        }
        self.check_failure()?;
        // Everything sent is acknowledged and committed: nothing is left to track.
        self.submitted.process_acks();
        let _ = self.submitted.committable();
        self.deliver_commit_records()?;
        self.counters.record_offset_commit();
        self.task.commit()
    }

    /// Ends the open transaction as the task asked through its transaction context
    /// (`transaction.boundary=connector`): committed, or aborted and then the offsets of its
    /// records committed (Connect's connector-defined `TransactionBoundaryManager`).
    pub(super) fn end_transaction(
        &mut self,
        request: TransactionBoundaryRequest,
    ) -> ConnectResult<()> {
        if request == TransactionBoundaryRequest::Abort {
            let Some((open, timeout)) = self
                .transactions
                .as_ref()
                .map(|t| (t.open, t.commit_timeout))
            else {
                return Ok(());
            };
            if !open {
                tracing::warn!(task = %self.reporter.id, "Ignoring request by task to abort transaction as the current transaction is empty");
                return Ok(());
            }
            tracing::info!(task = %self.reporter.id, "Aborting transaction as requested by connector");
            // Every record handed to the producer is acknowledged first, so none fails as
            // purged by the abort.
            if let Err(e) = self.producer.flush(timeout) {
                return Err(ConnectError::connect(format!(
                    "Failed to send the records of the transaction the task aborted: {e}"
                )));
            }
            self.check_failure()?;
            if let Err(e) = self
                .producer
                .transactional()
                .expect(EOS_PRODUCER)
                .abort_transaction(timeout)
            {
                return Err(ConnectError::connect(format!(
                    "Failed to abort the transaction of task {}: {e}",
                    self.reporter.id
                )));
            }
            if let Some(t) = self.transactions.as_mut() {
                t.open = false;
            }
        }
        self.commit_transaction()
    }

    /// Ends the open transaction if the task asked for it for the batch (commit or abort);
    /// nothing for other boundaries. Errors fail the task (e.g. both asked for).
    pub(super) fn end_requested_batch_transaction(&mut self) -> ConnectResult<()> {
        let Some(context) = self.transactions.as_ref().and_then(|t| t.context.clone()) else {
            return Ok(());
        };
        match context.take_for_batch()? {
            Some(request) => self.end_transaction(request),
            None => Ok(()),
        }
    }

    /// Aborts the open transaction (a failed task).
    pub(super) fn abort_transaction(&mut self) {
        if let Some(t) = self.transactions.as_mut() {
            if t.open {
                t.open = false;
                t.offsets.clear();
                if let Err(e) = self
                    .producer
                    .transactional()
                    .expect(EOS_PRODUCER)
                    .abort_transaction(t.commit_timeout)
                {
                    tracing::warn!(task = %self.reporter.id, "aborting the open transaction failed: {e}");
                }
            }
        }
    }
}
