//! What a sink task's loop asks of its consumer, behind small traits (the part of Kafka's
//! `Consumer` that Connect's `WorkerSinkTask` uses), and their librdkafka implementation.
//!
//! [`SinkConsumer`] polls records; [`ConsumerOps`] is what the loop and the rebalance
//! callbacks do with the assignment (pause, resume, seek, commit); a [`RebalanceListener`] is
//! called from inside [`SinkConsumer::poll`] when partitions are revoked (before they go, so
//! their offsets can still be committed) and assigned (Kafka's `ConsumerRebalanceListener`).
//! The unit tests drive the loop with an in-memory consumer implementing the same traits.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::{BorrowedMessage, Headers as _, Message};
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};
use tributary_api::record::{TimestampType, TopicPartition};
use tributary_api::sink::PartitionOffsets;
use tributary_api::{ConnectError, ConnectResult};

use super::super::consumed_headers;
use super::super::TaskCounters;

/// What [`ConsumedRecord::try_for_each_header`] calls with each header's key and value.
pub type HeaderVisitor<'a> = dyn FnMut(&str, Option<&[u8]>) -> ConnectResult<()> + 'a;

/// A record as consumed: borrowed from the consumer until the loop has converted it.
pub trait ConsumedRecord {
    /// The topic it was consumed from.
    fn topic(&self) -> &str;
    /// The partition it was consumed from.
    fn partition(&self) -> i32;
    /// Its offset.
    fn offset(&self) -> i64;
    /// Its timestamp (ms since the epoch) and the timestamp's type.
    fn timestamp(&self) -> (Option<i64>, TimestampType);
    /// Its key bytes, `None` for a null key.
    fn key(&self) -> Option<&[u8]>;
    /// Its value bytes, `None` for a null value (a tombstone).
    fn payload(&self) -> Option<&[u8]>;
    /// Calls `f` with each header (key, value bytes) in order, stopping at the first error.
    fn try_for_each_header(&self, f: &mut HeaderVisitor<'_>) -> ConnectResult<()>;
    /// Its size as consumed: key, value and header bytes (the bytes rate of issue #36).
    fn size(&self) -> usize {
        let mut headers = 0;
        self.try_for_each_header(&mut |k, v| {
            headers += k.len() + v.map_or(0, <[u8]>::len);
            Ok(())
        })
        .unwrap_or_default();
        self.key().map_or(0, <[u8]>::len) + self.payload().map_or(0, <[u8]>::len) + headers
    }
}

/// What is done with a consumer's assignment, by the loop and from the rebalance callbacks.
pub trait ConsumerOps {
    /// The partitions assigned now.
    fn assignment(&self) -> ConnectResult<Vec<TopicPartition>>;
    /// Commits `offsets` (the next offset to consume per partition) and waits for the group
    /// coordinator. Errors are [`ConnectError::Retriable`]: the next commit tries again.
    fn commit_sync(&self, offsets: &PartitionOffsets) -> ConnectResult<()>;
    /// Stops fetching `partitions` (assigned ones).
    fn pause(&self, partitions: &[TopicPartition]) -> ConnectResult<()>;
    /// Fetches `partitions` again.
    fn resume(&self, partitions: &[TopicPartition]) -> ConnectResult<()>;
    /// Makes `offset` the next one fetched from `tp`. Errors when the partition cannot be
    /// sought yet (just assigned, not fetching): the loop tries again.
    fn seek(&self, tp: &TopicPartition, offset: i64) -> ConnectResult<()>;
}

/// A sink task's consumer (Kafka's `Consumer` as `WorkerSinkTask` uses it).
pub trait SinkConsumer: ConsumerOps {
    /// A record borrowed from the consumer.
    type Record<'a>: ConsumedRecord
    where
        Self: 'a;
    /// Subscribes to `topics` (a single entry starting with `^` is a regular expression).
    fn subscribe(&self, topics: &[String]) -> ConnectResult<()>;
    /// The next record, waiting up to `timeout` for one; rebalance callbacks run inside.
    /// `Some(Err)` is a consumer error the loop logs and goes on after.
    fn poll(&self, timeout: Duration) -> Option<Result<Self::Record<'_>, String>>;
    /// Leaves the group.
    fn unsubscribe(&self);
}

/// Called from inside [`SinkConsumer::poll`] on a rebalance (Kafka's
/// `ConsumerRebalanceListener`, as `WorkerSinkTask.HandleRebalance` implements it).
pub trait RebalanceListener: Send + Sync {
    /// `partitions` are taken away; they are still assigned while this runs.
    fn revoked(&self, consumer: &dyn ConsumerOps, partitions: &[TopicPartition]);
    /// `partitions` were added to the assignment.
    fn assigned(&self, consumer: &dyn ConsumerOps, partitions: &[TopicPartition]);
}

/// librdkafka's consumer context for a sink task: rebalances go to the loop's listener,
/// statistics to the task's metrics, OAUTHBEARER tokens from the worker's settings.
pub struct KafkaSinkContext {
    listener: Arc<dyn RebalanceListener>,
    counters: Arc<TaskCounters>,
}

impl ClientContext for KafkaSinkContext {
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

impl ConsumerContext for KafkaSinkContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(tpl) = rebalance {
            self.listener.revoked(consumer, &partitions(tpl));
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(tpl) = rebalance {
            self.listener.assigned(consumer, &partitions(tpl));
        }
    }
}

/// A sink task's librdkafka consumer.
pub type KafkaSinkConsumer = BaseConsumer<KafkaSinkContext>;

/// Creates the consumer of task `task` from `config`, its rebalances going to `listener`.
/// Errors: librdkafka refuses the configuration, or the initial OAUTHBEARER token fails.
pub fn kafka_consumer(
    config: &ClientConfig,
    task: &impl std::fmt::Display,
    listener: Arc<dyn RebalanceListener>,
    counters: Arc<TaskCounters>,
) -> ConnectResult<KafkaSinkConsumer> {
    let consumer: KafkaSinkConsumer = config
        .create_with_context(KafkaSinkContext { listener, counters })
        .map_err(|e| ConnectError::config(format!("Failed to create consumer for {task}: {e}")))?;
    crate::kafka_client::set_initial_token(consumer.client(), config)
        .map_err(|e| ConnectError::connect(format!("Consumer for {task}: {e}")))?;
    Ok(consumer)
}

fn partitions(tpl: &TopicPartitionList) -> Vec<TopicPartition> {
    tpl.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

fn list(partitions: &[TopicPartition]) -> TopicPartitionList {
    let mut tpl = TopicPartitionList::with_capacity(partitions.len());
    for tp in partitions {
        tpl.add_partition(&tp.topic, tp.partition);
    }
    tpl
}

impl<C: ConsumerContext> ConsumerOps for BaseConsumer<C> {
    fn assignment(&self) -> ConnectResult<Vec<TopicPartition>> {
        Consumer::assignment(self)
            .map(|t| partitions(&t))
            .map_err(|e| ConnectError::connect(format!("reading the assignment failed: {e}")))
    }

    fn commit_sync(&self, offsets: &PartitionOffsets) -> ConnectResult<()> {
        let mut tpl = TopicPartitionList::with_capacity(offsets.len());
        for (tp, off) in offsets {
            tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*off))
                .map_err(|e| ConnectError::connect(format!("invalid offset for {tp}: {e}")))?;
        }
        self.commit(&tpl, CommitMode::Sync)
            .map_err(|e| ConnectError::Retriable(format!("Commit of offsets failed: {e}")))
    }

    fn pause(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        Consumer::pause(self, &list(partitions))
            .map_err(|e| ConnectError::connect(format!("pausing partitions failed: {e}")))
    }

    fn resume(&self, partitions: &[TopicPartition]) -> ConnectResult<()> {
        Consumer::resume(self, &list(partitions))
            .map_err(|e| ConnectError::connect(format!("resuming partitions failed: {e}")))
    }

    fn seek(&self, tp: &TopicPartition, offset: i64) -> ConnectResult<()> {
        Consumer::seek(
            self,
            &tp.topic,
            tp.partition,
            Offset::Offset(offset),
            Duration::from_secs(5),
        )
        .map_err(|e| ConnectError::Retriable(e.to_string()))
    }
}

impl SinkConsumer for KafkaSinkConsumer {
    type Record<'a> = BorrowedMessage<'a>;

    fn subscribe(&self, topics: &[String]) -> ConnectResult<()> {
        let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
        Consumer::subscribe(self, &refs)
            .map_err(|e| ConnectError::connect(format!("Failed to subscribe to {topics:?}: {e}")))
    }

    fn poll(&self, timeout: Duration) -> Option<Result<BorrowedMessage<'_>, String>> {
        BaseConsumer::poll(self, timeout).map(|r| r.map_err(|e| e.to_string()))
    }

    fn unsubscribe(&self) {
        Consumer::unsubscribe(self);
    }
}

impl ConsumedRecord for BorrowedMessage<'_> {
    fn topic(&self) -> &str {
        Message::topic(self)
    }

    fn partition(&self) -> i32 {
        Message::partition(self)
    }

    fn offset(&self) -> i64 {
        Message::offset(self)
    }

    fn timestamp(&self) -> (Option<i64>, TimestampType) {
        match Message::timestamp(self) {
            rdkafka::Timestamp::NotAvailable => (None, TimestampType::NoTimestampType),
            rdkafka::Timestamp::CreateTime(t) => (Some(t), TimestampType::CreateTime),
            rdkafka::Timestamp::LogAppendTime(t) => (Some(t), TimestampType::LogAppendTime),
        }
    }

    fn key(&self) -> Option<&[u8]> {
        Message::key(self)
    }

    fn payload(&self) -> Option<&[u8]> {
        Message::payload(self)
    }

    fn try_for_each_header(&self, f: &mut HeaderVisitor<'_>) -> ConnectResult<()> {
        if let Some(h) = consumed_headers::headers(self) {
            for header in h.iter() {
                f(header.key, header.value)?;
            }
        }
        Ok(())
    }
}
