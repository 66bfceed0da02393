//! What a worker's coordinator asks of its group membership: the part of Java's
//! `AbstractCoordinator` that `WorkerCoordinator` builds on (join, sync, leave, the heartbeat's
//! "rejoin needed" signal). [`GroupMember`](super::GroupMember) implements it over the Kafka
//! protocol; [`MemoryGroup`](super::memory::MemoryGroup)'s members implement it in memory, so
//! the herder can be tested without a broker.

use tokio::sync::watch;

use super::{GroupError, HeartbeatHandle, JoinResult, RejoinReason};

/// A member of a classic consumer group of protocol type `connect`, as the worker's
/// coordinator drives it: [`join`](Self::join), then [`sync`](Self::sync), then wait on
/// [`rejoin_needed`](Self::rejoin_needed) and join again; [`leave`](Self::leave) to go.
///
/// `join` and `sync` must be safe to cancel (the coordinator abandons them when the worker
/// stops); a member dropped without `leave` stays in the group until its session expires, as a
/// crashed worker does.
#[async_trait::async_trait]
pub trait GroupMembership: Send + Sync {
    /// JoinGroup with `protocols` (`(name, metadata)`, most preferred first), retried until
    /// the group forms; clears the rejoin signal. Errors: what the coordinator refuses for
    /// good (inconsistent protocols, authorization, …).
    async fn join(&mut self, protocols: Vec<(String, Vec<u8>)>) -> Result<JoinResult, GroupError>;
    /// SyncGroup: the leader passes one `(member id, assignment)` per member, followers an
    /// empty list; returns this member's assignment bytes. [`GroupError::RejoinNeeded`] when
    /// the group moved on meanwhile.
    async fn sync(&mut self, assignments: Vec<(String, Vec<u8>)>) -> Result<Vec<u8>, GroupError>;
    /// LeaveGroup with `reason`; the next join starts without a member id.
    async fn leave(&mut self, reason: &str) -> Result<(), GroupError>;
    /// The signal that a new round is needed (`None` while none is).
    fn rejoin_needed(&self) -> watch::Receiver<Option<RejoinReason>>;
    /// A handle that makes this member heartbeat more often for a while (a no-op where
    /// heartbeats are not needed to learn of a rebalance).
    fn heartbeat_handle(&self) -> HeartbeatHandle;
}

#[async_trait::async_trait]
impl GroupMembership for super::GroupMember {
    async fn join(&mut self, protocols: Vec<(String, Vec<u8>)>) -> Result<JoinResult, GroupError> {
        super::GroupMember::join(self, protocols).await
    }

    async fn sync(&mut self, assignments: Vec<(String, Vec<u8>)>) -> Result<Vec<u8>, GroupError> {
        super::GroupMember::sync(self, assignments).await
    }

    async fn leave(&mut self, reason: &str) -> Result<(), GroupError> {
        super::GroupMember::leave(self, reason).await
    }

    fn rejoin_needed(&self) -> watch::Receiver<Option<RejoinReason>> {
        super::GroupMember::rejoin_needed(self)
    }

    fn heartbeat_handle(&self) -> HeartbeatHandle {
        super::GroupMember::heartbeat_handle(self)
    }
}
