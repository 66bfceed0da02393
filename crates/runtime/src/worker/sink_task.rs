//! A sink task's loop (Connect's `WorkerSinkTask`): consume with librdkafka in group
//! `connect-<connector>`, convert, `put`, and commit the offsets `pre_commit` returns every
//! `offset.flush.interval.ms`, when partitions are revoked, and on shutdown. Partition
//! assignment changes call the task's `open` / `close`.
//!
//! Delivery rule: an offset is committed only for records that were handed to `put`. Every
//! record the consumer returns is kept in a pending queue until `put` takes it, whatever the
//! task's state: a record that arrives while the task is paused (fetched before the pause took
//! effect, or from a partition assigned while paused) waits there for the resume instead of
//! being dropped, and the records of a revoked partition are dropped from the queue without
//! their offsets being committed, so the partition's next owner consumes them again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::{BorrowedMessage, Headers as _, Message};
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};
use tributary_api::record::{Headers, SinkRecord, TimestampType, TopicPartition};
use tributary_api::sink::{PartitionOffsets, SinkTask, SinkTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::converters::TaskConverters;
use super::task::{catch_panic, error_trace, TaskControl, TaskStatusReporter};
use super::TaskCounters;
use crate::storage::status::State;

/// Most records handed to one `put` (Java's `max.poll.records` default).
const MAX_BATCH: usize = 500;

struct Shared {
    task: Box<dyn SinkTask>,
    /// Next offset to consume per partition, for records already given to `put`.
    current: PartitionOffsets,
    /// Records returned by the consumer and not yet given to `put`, in consumption order.
    pending: VecDeque<SinkRecord>,
    /// Whether the loop has paused the consumer's partitions (the task's target state is
    /// PAUSED); partitions assigned meanwhile are paused as soon as they arrive.
    consumer_paused: bool,
    failure: Option<ConnectError>,
}

/// Consumer context calling the task's `open` / `close` on rebalances.
pub struct SinkConsumerContext {
    shared: Arc<Mutex<Shared>>,
}

impl ClientContext for SinkConsumerContext {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<rdkafka::client::OAuthToken, Box<dyn std::error::Error>> {
        crate::kafka_client::oauth_token(oauthbearer_config)
    }
}

fn partitions(tpl: &TopicPartitionList) -> Vec<TopicPartition> {
    tpl.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

fn commit(
    consumer: &BaseConsumer<SinkConsumerContext>,
    shared: &mut Shared,
    only: Option<&[TopicPartition]>,
) -> ConnectResult<()> {
    let current: PartitionOffsets = shared
        .current
        .iter()
        .filter(|(tp, _)| only.is_none_or(|o| o.contains(tp)))
        .map(|(tp, o)| (tp.clone(), *o))
        .collect();
    if current.is_empty() {
        return Ok(());
    }
    let to_commit = shared.task.pre_commit(&current)?;
    if to_commit.is_empty() {
        return Ok(());
    }
    let mut tpl = TopicPartitionList::new();
    for (tp, off) in &to_commit {
        tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*off))
            .map_err(|e| ConnectError::connect(format!("invalid offset for {tp}: {e}")))?;
    }
    consumer
        .commit(&tpl, CommitMode::Sync)
        .map_err(|e| ConnectError::Retriable(format!("Commit of offsets failed: {e}")))
}

impl ConsumerContext for SinkConsumerContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(tpl) = rebalance {
            let revoked = partitions(tpl);
            let mut shared = self.shared.lock().unwrap();
            if let Err(e) = commit(consumer, &mut shared, Some(&revoked)) {
                tracing::warn!("commit on revocation failed: {e}");
            }
            if let Err(e) = shared.task.close(&revoked) {
                shared.failure.get_or_insert(e);
            }
            for tp in &revoked {
                shared.current.remove(tp);
            }
            // Not handed to `put` and not committed: the partition's next owner reads them.
            shared.pending.retain(|r| {
                !revoked
                    .iter()
                    .any(|tp| tp.topic == r.topic && tp.partition == r.kafka_partition)
            });
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(tpl) = rebalance {
            let assigned = partitions(tpl);
            let mut shared = self.shared.lock().unwrap();
            if shared.consumer_paused {
                // Assigned while the task is paused: fetch nothing until it resumes.
                if let Err(e) = consumer.pause(tpl) {
                    tracing::warn!("pausing newly assigned partitions failed: {e}");
                }
            }
            if let Err(e) = shared.task.open(&assigned) {
                shared.failure.get_or_insert(e);
            }
        }
    }
}

/// Everything a sink task thread needs.
pub struct SinkTaskArgs {
    pub task: Box<dyn SinkTask>,
    pub task_config: Props,
    pub consumer_config: ClientConfig,
    pub converters: TaskConverters,
    pub control: Arc<TaskControl>,
    pub reporter: TaskStatusReporter,
    pub counters: Arc<TaskCounters>,
    pub offset_flush_interval: Duration,
    /// `topic.tracking.enable`: record the topics the task consumes from (KIP-558).
    pub track_topics: bool,
}

/// Runs the task until stopped or failed; writes RUNNING / PAUSED / FAILED statuses.
pub fn run(args: SinkTaskArgs) {
    let reporter = args.reporter.clone();
    let label = format!("task {}", reporter.id);
    if let Err(e) = catch_panic(&label, || run_inner(args)) {
        tracing::error!(task = %reporter.id, error = %e, "sink task failed");
        reporter.report(State::Failed, Some(error_trace(&e, &label)));
    }
}

fn subscription(config: &Props) -> ConnectResult<Vec<String>> {
    let topics: Vec<String> = config
        .get("topics")
        .map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    if !topics.is_empty() {
        return Ok(topics);
    }
    match config
        .get("topics.regex")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        // librdkafka treats a subscription starting with '^' as a regular expression.
        Some(re) => Ok(vec![if re.starts_with('^') {
            re.to_string()
        } else {
            format!("^{re}")
        }]),
        None => Err(ConnectError::config(
            "Must configure one of topics or topics.regex",
        )),
    }
}

fn run_inner(args: SinkTaskArgs) -> ConnectResult<()> {
    let SinkTaskArgs {
        mut task,
        task_config,
        consumer_config,
        converters,
        control,
        reporter,
        counters,
        offset_flush_interval,
        track_topics,
    } = args;
    let mut topics_seen = track_topics.then(std::collections::HashSet::<String>::new);
    task.initialize(SinkTaskContext {
        config: task_config.clone(),
    });
    task.start(&task_config)?;
    counters.record_start();
    let shared = Arc::new(Mutex::new(Shared {
        task,
        current: HashMap::new(),
        pending: VecDeque::new(),
        consumer_paused: control.is_paused(),
        failure: None,
    }));
    let consumer: BaseConsumer<SinkConsumerContext> = consumer_config
        .create_with_context(SinkConsumerContext {
            shared: shared.clone(),
        })
        .map_err(|e| {
            ConnectError::config(format!(
                "Failed to create consumer for {}: {e}",
                reporter.id
            ))
        })?;
    crate::kafka_client::set_initial_token(consumer.client(), &consumer_config)
        .map_err(|e| ConnectError::connect(format!("Consumer for {}: {e}", reporter.id)))?;
    let topics = subscription(&task_config)?;
    let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    consumer
        .subscribe(&refs)
        .map_err(|e| ConnectError::connect(format!("Failed to subscribe to {topics:?}: {e}")))?;

    let mut paused_reported: Option<bool> = None;
    let mut last_commit = Instant::now();
    let result = (|| -> ConnectResult<()> {
        loop {
            if control.is_stopping() {
                return Ok(());
            }
            let paused = control.is_paused();
            if paused_reported != Some(paused) {
                let mut s = shared.lock().unwrap();
                let assignment = consumer.assignment().unwrap_or_default();
                let applied = if paused {
                    consumer.pause(&assignment)
                } else {
                    consumer.resume(&assignment)
                };
                if let Err(e) = applied {
                    tracing::warn!(task = %reporter.id, "pausing or resuming the consumer failed: {e}");
                }
                s.consumer_paused = paused;
                drop(s);
                reporter.report(
                    if paused {
                        State::Paused
                    } else {
                        State::Running
                    },
                    None,
                );
                paused_reported = Some(paused);
            }
            // Poll at least once per turn (rebalance callbacks run inside `poll`), then until a
            // batch is pending. Nothing polled is ever dropped: it waits in `pending` for `put`.
            let mut wait = if paused {
                Duration::from_millis(100)
            } else if shared.lock().unwrap().pending.is_empty() {
                Duration::from_millis(500)
            } else {
                Duration::ZERO
            };
            // Converted records go to `pending` in one step after the polling (one lock).
            let mut polled: Vec<SinkRecord> = Vec::new();
            let room = MAX_BATCH.saturating_sub(shared.lock().unwrap().pending.len());
            loop {
                match consumer.poll(wait) {
                    None => break,
                    Some(Ok(msg)) => {
                        if let Some(seen) = &mut topics_seen {
                            if !seen.contains(msg.topic()) {
                                reporter.store.put_topic(
                                    &reporter.id.connector,
                                    msg.topic(),
                                    reporter.id.task,
                                );
                                seen.insert(msg.topic().to_string());
                            }
                        }
                        polled.push(convert(&msg, &converters)?);
                        if polled.len() >= room {
                            break;
                        }
                    }
                    Some(Err(e)) => {
                        tracing::warn!(task = %reporter.id, "consumer error: {e}");
                        break;
                    }
                }
                wait = Duration::ZERO;
            }
            if !polled.is_empty() {
                shared.lock().unwrap().pending.extend(polled);
            }
            {
                let mut s = shared.lock().unwrap();
                if let Some(e) = s.failure.take() {
                    return Err(e);
                }
                if !paused && !s.pending.is_empty() {
                    let n = s.pending.len().min(MAX_BATCH);
                    let batch: Vec<SinkRecord> = s.pending.drain(..n).collect();
                    put_with_retry(&mut s, &batch, &control)?;
                    counters.record_consumed(n as u64);
                    // The next offset per partition: the last record of each run of one
                    // partition is enough (records of a partition come in offset order).
                    for (i, r) in batch.iter().enumerate() {
                        let last_of_run = batch.get(i + 1).is_none_or(|next| {
                            next.kafka_partition != r.kafka_partition || next.topic != r.topic
                        });
                        if last_of_run {
                            s.current.insert(
                                TopicPartition::new(&r.topic, r.kafka_partition),
                                r.kafka_offset + 1,
                            );
                        }
                    }
                }
            }
            if last_commit.elapsed() >= offset_flush_interval {
                let mut s = shared.lock().unwrap();
                match commit(&consumer, &mut s, None) {
                    Ok(()) => counters.record_offset_commit(),
                    Err(ConnectError::Retriable(m)) => tracing::warn!(task = %reporter.id, "{m}"),
                    Err(e) => return Err(e),
                }
                last_commit = Instant::now();
            }
        }
    })();
    // Shutdown: commit, close every partition, stop the task (Java's closeAllPartitions + stop).
    let assigned = consumer
        .assignment()
        .map(|t| partitions(&t))
        .unwrap_or_default();
    let mut s = shared.lock().unwrap();
    if result.is_ok() {
        if let Err(e) = commit(&consumer, &mut s, None) {
            tracing::warn!(task = %reporter.id, "final commit failed: {e}");
        }
    }
    let close = s.task.close(&assigned);
    let stop = s.task.stop();
    counters.record_stop();
    drop(s);
    consumer.unsubscribe();
    result?;
    close?;
    stop
}

fn put_with_retry(
    shared: &mut Shared,
    batch: &[SinkRecord],
    control: &TaskControl,
) -> ConnectResult<()> {
    loop {
        match shared.task.put(batch) {
            Err(ConnectError::Retriable(m)) => {
                tracing::warn!("retriable error from put, retrying: {m}");
                if control.is_stopping() {
                    return Err(ConnectError::Retriable(m));
                }
                // On the task's own thread, between retries of put.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

fn convert(msg: &BorrowedMessage<'_>, converters: &TaskConverters) -> ConnectResult<SinkRecord> {
    let topic = msg.topic();
    let key = converters.key.to_connect_data(topic, msg.key())?;
    let value = converters.value.to_connect_data(topic, msg.payload())?;
    let mut headers = Headers::new();
    if let Some(h) = msg.headers() {
        for header in h.iter() {
            let sv = converters
                .header
                .to_connect_header(topic, header.key, header.value)?;
            headers.add(header.key, sv.schema, sv.value);
        }
    }
    let (timestamp, timestamp_type) = match msg.timestamp() {
        rdkafka::Timestamp::NotAvailable => (None, TimestampType::NoTimestampType),
        rdkafka::Timestamp::CreateTime(t) => (Some(t), TimestampType::CreateTime),
        rdkafka::Timestamp::LogAppendTime(t) => (Some(t), TimestampType::LogAppendTime),
    };
    Ok(SinkRecord {
        topic: topic.to_string(),
        kafka_partition: msg.partition(),
        key_schema: key.schema,
        key: key.value,
        value_schema: value.schema,
        value: value.value,
        kafka_offset: msg.offset(),
        timestamp,
        timestamp_type,
        headers,
    })
}
