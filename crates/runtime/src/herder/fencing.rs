//! Zombie fencing for exactly-once source connectors (KIP-618; Connect's
//! `DistributedHerder.fenceZombieSourceTasks` and `Worker.fenceZombies`): before the tasks of a
//! new task generation start, the leader fences the transactional producers of the previous
//! generation's tasks, then writes the connector's task count record
//! (`tasks-fencing-<connector>`) to the config topic. [`plan`] is the decision, pure;
//! [`fence_producers`] does the fencing against Kafka.

use std::time::Duration;

use rdkafka::producer::{BaseProducer, Producer};
use rdkafka::ClientConfig;
use tributary_api::{ConnectError, ConnectResult};

pub use crate::worker::task_transactional_id;

/// What the leader does for a fencing request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FencingPlan {
    /// The latest task configs are already fenced (their task count record is newer).
    Nothing,
    /// Write the task count record only: the connector never had a task count record (no
    /// transactional producer can exist yet), or both the last fenced generation and the new
    /// one have a single task (the new task's producer fences the old one itself).
    WriteRecord(u32),
    /// Fence the producers of tasks `0..fence`, then write `record`.
    FenceThenWrite { fence: u32, record: u32 },
}

/// Connect's decision in `doFenceZombieSourceTasks`: `pending` is whether task configs were
/// committed after the last task count record, `record` that record, `task_count` the number
/// of tasks in the latest configs.
pub fn plan(pending: bool, record: Option<u32>, task_count: u32) -> FencingPlan {
    if !pending {
        return FencingPlan::Nothing;
    }
    match record {
        Some(fence) if fence != 1 || task_count != 1 => FencingPlan::FenceThenWrite {
            fence,
            record: task_count,
        },
        _ => FencingPlan::WriteRecord(task_count),
    }
}

/// Fences the producers of `transactional_ids`: initialising a transactional producer with an
/// id bumps its epoch on the transaction coordinator, which aborts the older producer's open
/// transaction and refuses its later writes (what Java's `Admin.fenceProducers` does with the
/// same request, InitProducerId). `client` holds the connection and security settings; the
/// producers run in parallel, each up to `timeout`.
pub fn fence_producers(
    client: &ClientConfig,
    transactional_ids: &[String],
    timeout: Duration,
) -> ConnectResult<()> {
    let results: Vec<ConnectResult<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = transactional_ids
            .iter()
            .map(|id| {
                scope.spawn(move || {
                    let mut config = client.clone();
                    config
                        .set("transactional.id", id)
                        .set("enable.idempotence", "true")
                        .set("client.id", format!("fencing-{id}"));
                    let producer: BaseProducer = config.create().map_err(|e| {
                        ConnectError::connect(format!(
                            "Failed to create a producer to fence {id}: {e}"
                        ))
                    })?;
                    producer.init_transactions(timeout).map_err(|e| {
                        ConnectError::connect(format!("Failed to fence the producer of {id}: {e}"))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ConnectError::connect("fencing thread panicked")))
            })
            .collect()
    });
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactional_ids_follow_connect() {
        assert_eq!(
            task_transactional_id("connect-cluster", "my-source", 3),
            "connect-cluster-my-source-3"
        );
    }

    #[test]
    fn fencing_follows_connects_decision() {
        assert_eq!(plan(false, Some(3), 2), FencingPlan::Nothing);
        // First generation under exactly-once support: nothing to fence.
        assert_eq!(plan(true, None, 4), FencingPlan::WriteRecord(4));
        // One task before and after: the new producer fences the old one.
        assert_eq!(plan(true, Some(1), 1), FencingPlan::WriteRecord(1));
        assert_eq!(
            plan(true, Some(1), 2),
            FencingPlan::FenceThenWrite {
                fence: 1,
                record: 2
            }
        );
        assert_eq!(
            plan(true, Some(3), 1),
            FencingPlan::FenceThenWrite {
                fence: 3,
                record: 1
            }
        );
    }
}
