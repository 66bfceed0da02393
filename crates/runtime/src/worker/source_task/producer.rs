//! The source task's producer context: delivery reports applied to the submitted records, send
//! failures reported or tolerated, batches the broker refused as too large kept to be sent
//! again one by one (what Java's producer callbacks and batch splitting do).

use super::*;

/// (sequence, (partition, offset)) of acknowledged records, collected by the producer callback;
/// `None` for a failed send that `errors.tolerance=all` let pass.
pub(super) type RecordAcks = Arc<Mutex<Vec<(u64, Option<(i32, i64)>)>>>;

/// How a failed send is handled: with `errors.tolerance=all`, reported and treated as done.
pub(super) struct SendFailures {
    pub(super) task: tributary_api::ConnectorTaskId,
    pub(super) reporters: Arc<ErrorReporters>,
    pub(super) operator: Arc<RetryWithToleranceOperator>,
    /// The polled form of records in flight, for the error log's record details
    /// (`errors.log.include.messages`).
    pub(super) originals: Option<Arc<Mutex<HashMap<u64, SourceRecord>>>>,
}

/// A record of a batch the broker refused as too large, kept (as the delivery report holds it)
/// to be sent again on its own.
pub(super) struct Refused {
    pub(super) seq: u64,
    pub(super) topic: String,
    pub(super) partition: i32,
    pub(super) key: Option<Vec<u8>>,
    pub(super) payload: Option<Vec<u8>>,
    pub(super) headers: Option<OwnedHeaders>,
    pub(super) timestamp: Option<i64>,
}

/// The producer context: records acknowledgements and the first delivery failure.
pub struct SourceProducerContext {
    /// Acknowledged records, kept only for tasks that want [`SourceTask::commit_record`]
    /// calls.
    pub(super) record_acks: Option<RecordAcks>,
    pub(super) acks: Arc<AckInbox>,
    pub(super) failure: Arc<Mutex<Option<String>>>,
    /// Set with `errors.tolerance=all`.
    pub(super) tolerated: Option<SendFailures>,
    /// Where librdkafka's statistics of the producer go.
    pub(super) counters: Arc<TaskCounters>,
    /// Records of batches the broker refused as too large, to be sent again one at a time;
    /// `None` for a transactional producer (a refused batch aborts the transaction).
    pub(super) refused: Option<Mutex<Vec<Refused>>>,
    /// Whether `refused` holds records (read for every record sent, without the lock).
    pub(super) refused_waiting: std::sync::atomic::AtomicBool,
    /// Records sent through a shared producer and not reported yet (unused with a producer
    /// of the task's own, whose flush counts them).
    pub(super) outstanding: shared_producer::Outstanding,
    /// What the task's records came to on a shared producer, reported as the client metrics of
    /// the task's own `client.id` (`connector-producer-<connector>-<task>`).
    pub(super) shared_view: shared_producer::TaskClientView,
}

/// The context of a task's own producer: the task's context, which a shared producer's
/// dispatcher would otherwise hold.
pub struct OwnContext(pub(super) Arc<SourceProducerContext>);

impl ClientContext for OwnContext {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        self.0.generate_oauth_token(oauthbearer_config)
    }

    fn stats(&self, statistics: rdkafka::Statistics) {
        self.0.stats(statistics)
    }
}

impl ProducerContext for OwnContext {
    type DeliveryOpaque = usize;
    fn delivery(&self, result: &DeliveryResult<'_>, opaque: usize) {
        self.0.delivery(result, opaque)
    }
}

/// What a source task's loop asks of its producer (Kafka's `Producer` as Connect's
/// `WorkerSourceTask` uses it): queue a record, wait for what was queued to be reported, and
/// the context that delivery reports reach. [`TaskProducer`] is librdkafka's; the loop's unit
/// tests use an in-memory one whose reports they script.
pub(super) trait RecordSender: Send {
    /// The task's producer context (delivery reports, failures, refused batches).
    fn context(&self) -> &Arc<SourceProducerContext>;
    /// Queues a record whose opaque is the task's (its sequence number and flags); a record
    /// the producer will not take comes back with the error (`QueueFull`: wait and try again).
    #[allow(clippy::result_large_err)]
    fn send<'a>(
        &self,
        record: BaseRecord<'a, [u8], [u8], usize>,
    ) -> Result<(), crate::polled_producer::Refused<'a, [u8], [u8], usize>>;
    /// Waits until every record queued was reported, at most `timeout`
    /// (`Producer::flush`'s contract: `OperationTimedOut` when some were not).
    fn flush(&self, timeout: Duration) -> rdkafka::error::KafkaResult<()>;
    /// The producer met a fatal error and takes no more records (a shared producer, which
    /// is replaced).
    fn is_fatal(&self) -> bool {
        false
    }
    /// The transactional producer of an exactly-once task; `None` for a producer that cannot
    /// run transactions.
    fn transactional(&self) -> Option<&PolledProducer<OwnContext>> {
        None
    }
    /// Whether `n` more records surely fit the producer's queue (so a send does not wait).
    fn has_room(&self, _n: usize) -> bool {
        true
    }
}

/// Records in a producer's queue below which a few more surely fit: a tenth of librdkafka's
/// default `queue.buffering.max.messages` (100,000).
const ROOM: usize = 10_000;

/// The transactional producer of an exactly-once task. Errors: the producer runs no
/// transactions (never for the producer the worker gives an exactly-once task).
pub(super) fn transactional(
    producer: &dyn RecordSender,
) -> ConnectResult<&PolledProducer<OwnContext>> {
    producer
        .transactional()
        .ok_or_else(|| ConnectError::connect("an exactly-once task needs a producer of its own"))
}

/// Begins a transaction on the exactly-once task's producer, with Connect's message on
/// failure.
pub(super) fn begin_transaction(producer: &dyn RecordSender) -> ConnectResult<()> {
    transactional(producer)?
        .begin_transaction()
        .map_err(|e| ConnectError::connect(format!("Failed to begin a transaction: {e}")))
}

/// The producer a source task sends through: its own (exactly-once tasks, tasks with
/// `producer.override.*`), or a place on a producer shared by the worker's tasks
/// ([`shared_producer`]).
pub(super) enum TaskProducer {
    Own(PolledProducer<OwnContext>),
    Shared(shared_producer::Lease),
}

impl TaskProducer {
    /// A place on the shared producer for `config` when `shared` is given and it has one,
    /// else a producer of the task's own; delivery reports reach `ctx` either way.
    pub(super) fn create(
        id: &tributary_api::ConnectorTaskId,
        ctx: &Arc<SourceProducerContext>,
        config: &ClientConfig,
        shared: &Option<(Arc<shared_producer::SharedProducers>, ClientConfig)>,
    ) -> ConnectResult<TaskProducer> {
        if let Some((producers, _)) = shared {
            match producers.lease(config, ctx.clone()) {
                Ok(Some(lease)) => return Ok(TaskProducer::Shared(lease)),
                Ok(None) => {
                    tracing::info!(task = %id, "the shared producer has no free slot; the task gets a producer of its own")
                }
                Err(e) => {
                    return Err(ConnectError::config(format!(
                        "Failed to create producer for {id}: {e}"
                    )))
                }
            }
        }
        // Delivery reports are served by the producer's own thread, which sleeps while nothing
        // is in flight.
        let producer = PolledProducer::create(config, OwnContext(ctx.clone()), &format!("dr-{id}"))
            .map_err(|e| {
                ConnectError::config(format!("Failed to create producer for {id}: {e}"))
            })?;
        crate::kafka_client::set_initial_token(producer.client(), config)
            .map_err(|e| ConnectError::connect(format!("Producer for {id}: {e}")))?;
        Ok(TaskProducer::Own(producer))
    }
}

impl RecordSender for TaskProducer {
    fn context(&self) -> &Arc<SourceProducerContext> {
        match self {
            TaskProducer::Own(p) => &p.context().0,
            TaskProducer::Shared(l) => l.context(),
        }
    }

    fn send<'a>(
        &self,
        record: BaseRecord<'a, [u8], [u8], usize>,
    ) -> Result<(), crate::polled_producer::Refused<'a, [u8], [u8], usize>> {
        match self {
            TaskProducer::Own(p) => p.send(record),
            TaskProducer::Shared(l) => l.send(record),
        }
    }

    fn flush(&self, timeout: Duration) -> rdkafka::error::KafkaResult<()> {
        match self {
            TaskProducer::Own(p) => p.flush(timeout),
            TaskProducer::Shared(l) => l.flush(timeout),
        }
    }

    fn is_fatal(&self) -> bool {
        matches!(self, TaskProducer::Shared(l) if l.producer().is_fatal())
    }

    fn has_room(&self, n: usize) -> bool {
        let queued = match self {
            TaskProducer::Own(p) => p.in_flight_count(),
            TaskProducer::Shared(l) => l.producer().in_flight_count(),
        };
        usize::try_from(queued)
            .unwrap_or(usize::MAX)
            .saturating_add(n)
            < ROOM
    }

    fn transactional(&self) -> Option<&PolledProducer<OwnContext>> {
        match self {
            TaskProducer::Own(p) => Some(p),
            // A task leases a shared producer only when it is not exactly-once.
            TaskProducer::Shared(_) => None,
        }
    }
}

impl ClientContext for SourceProducerContext {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        crate::kafka_client::oauth_token(oauthbearer_config)
    }

    fn stats(&self, statistics: rdkafka::Statistics) {
        self.counters.metrics.set_client_statistics(statistics);
    }
}

impl ProducerContext for SourceProducerContext {
    type DeliveryOpaque = usize;
    fn delivery(&self, result: &DeliveryResult<'_>, opaque: usize) {
        use rdkafka::Message;
        match result {
            Ok(msg) => {
                self.shared_view.delivered(msg);
                self.acknowledged(opaque, msg.partition(), msg.offset());
            }
            Err((e, msg)) => self.refused(opaque, e, msg.topic(), |seq| Refused {
                seq,
                topic: msg.topic().to_string(),
                partition: msg.partition(),
                key: msg.key().map(<[u8]>::to_vec),
                payload: msg.payload().map(<[u8]>::to_vec),
                headers: msg.headers().map(|h| h.detach()),
                timestamp: msg.timestamp().to_millis(),
            }),
        }
    }
}

impl SourceProducerContext {
    /// Kafka acknowledged the record sent with delivery opaque `opaque`, written at
    /// `partition` and `offset`.
    pub(super) fn acknowledged(&self, opaque: usize, partition: i32, offset: i64) {
        if opaque == OFFSET_RECORD {
            return;
        }
        let seq = (opaque & !SENT_ALONE) as u64;
        self.forget_original(seq);
        if let Some(meta) = &self.record_acks {
            meta.lock().unwrap().push((seq, Some((partition, offset))));
        }
        self.acks.push(seq)
    }

    /// Kafka refused the record sent with delivery opaque `opaque` to `topic` with `e`;
    /// `kept` copies it, for a record sent again on its own (its batch was refused as too
    /// large, or lost to the shared producer's fatal error).
    pub(super) fn refused(
        &self,
        opaque: usize,
        e: &KafkaError,
        topic: &str,
        kept: impl FnOnce(u64) -> Refused,
    ) {
        if opaque == OFFSET_RECORD {
            // An offset record of an exactly-once transaction: a failure fails the commit.
            let mut f = self.failure.lock().unwrap();
            if f.is_none() {
                *f = Some(format!(
                    "Failed to write source offsets in the transaction: {e}"
                ));
            }
            return;
        }
        let alone = opaque & SENT_ALONE != 0;
        let seq = (opaque & !SENT_ALONE) as u64;
        if let (Some(refused), false) = (&self.refused, alone) {
            if is_too_large(e) || lost_to_fatal_error(e) {
                // The broker refused the batch this record was in (a record too large on its
                // own is refused by `send`): it is sent again on its own.
                tracing::debug!("record {seq} sent again alone: its batch was refused: {e}");
                let mut refused = refused.lock().unwrap();
                self.refused_waiting.store(true, Ordering::Release);
                refused.push(kept(seq));
                return;
            }
        }
        self.send_failed(seq, e, topic);
    }
}

/// Whether a record failed because its producer met a fatal error (purged from its queue, or
/// failed in flight): not the record's own failure. A task on a shared producer sends it
/// again on the producer's replacement; a task's own producer takes no more records, so there
/// the resend fails the task.
pub(super) fn lost_to_fatal_error(e: &KafkaError) -> bool {
    matches!(
        e,
        KafkaError::MessageProduction(
            RDKafkaErrorCode::Fatal
                | RDKafkaErrorCode::PurgeQueue
                | RDKafkaErrorCode::PurgeInflight
        )
    )
}

/// Whether a send failed because the record, or the batch it was in, is too large.
pub(super) fn is_too_large(e: &KafkaError) -> bool {
    matches!(
        e,
        KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge)
    )
}

impl SourceProducerContext {
    /// The polled form of a record whose fate is known, no longer needed for the error log.
    pub(super) fn forget_original(&self, seq: u64) -> Option<SourceRecord> {
        self.tolerated
            .as_ref()
            .and_then(|t| t.originals.as_ref())
            .and_then(|o| o.lock().unwrap().remove(&seq))
    }

    /// A record Kafka refused (when sent, or in its delivery report): Connect's
    /// `producerSendFailed`. With `errors.tolerance=all` it is reported and counts as done;
    /// otherwise the task fails.
    pub(super) fn send_failed(&self, seq: u64, e: &KafkaError, topic: &str) {
        let original = self.forget_original(seq);
        if let Some(t) = &self.tolerated {
            tracing::trace!(task = %t.task, "Ignoring failed record send to {topic}: {e}");
            let mut ctx = ProcessingContext::default();
            let outcome = t.operator.execute_failed(
                &mut ctx,
                Stage::KafkaProduce,
                WORKER_SOURCE_TASK_CLASS,
                ConnectError::connect(format!("{e}")),
            );
            t.reporters
                .report(&ctx, original.as_ref().map(Original::Source));
            if outcome.is_ok() {
                if let Some(meta) = &self.record_acks {
                    meta.lock().unwrap().push((seq, None));
                }
                self.acks.push(seq);
                return;
            }
        }
        let mut f = self.failure.lock().unwrap();
        if f.is_none() {
            *f = Some(format!(
                "Unrecoverable exception from producer send callback: {e} (topic {topic})"
            ));
        }
    }

    /// Keeps a record that a fatal shared producer would not take, to be sent again (after the
    /// records it lost before, in sequence order) on the producer that replaces it.
    pub(super) fn keep_for_resend(&self, seq: u64, rec: &BaseRecord<'_, [u8], [u8], usize>) {
        let Some(refused) = &self.refused else {
            return;
        };
        let mut refused = refused.lock().unwrap();
        self.refused_waiting.store(true, Ordering::Release);
        refused.push(Refused {
            seq,
            topic: rec.topic.to_string(),
            // librdkafka's RD_KAFKA_PARTITION_UA: the partitioner chooses, as it did first.
            partition: rec.partition.unwrap_or(-1),
            key: rec.key.map(<[u8]>::to_vec),
            payload: rec.payload.map(<[u8]>::to_vec),
            headers: rec.headers.clone(),
            timestamp: rec.timestamp,
        });
    }

    /// Takes the records of refused batches reported so far, in the order they were sent.
    pub(super) fn take_refused(&self) -> Vec<Refused> {
        let Some(refused) = &self.refused else {
            return Vec::new();
        };
        let mut refused = refused.lock().unwrap();
        self.refused_waiting.store(false, Ordering::Release);
        let mut taken = std::mem::take(&mut *refused);
        drop(refused);
        taken.sort_by_key(|r| r.seq);
        taken
    }

    /// Whether records of refused batches wait to be sent again.
    pub(super) fn has_refused(&self) -> bool {
        self.refused_waiting.load(Ordering::Acquire)
    }
}
