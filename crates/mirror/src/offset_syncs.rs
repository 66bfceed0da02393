//! When MirrorSourceTask writes offset syncs (`OffsetSyncWriter` of Apache's connect-mirror): a
//! pure queue the task feeds with each replicated record's upstream and downstream offsets
//! (from `commit_record`, once the target acknowledged it) and drains into the offset-syncs
//! topic.
//!
//! Per source partition, a sync is due at once when the partition has had none since the task
//! started, when the downstream offset translated from the last sync would lag by
//! `offset.lag.max` or more, when an upstream offset was skipped (a gap: compaction,
//! transactions' markers, a filter), or when the downstream topic was truncated. Otherwise the
//! latest sync waits (delayed) until the next offset commit promotes it, so a quiet partition
//! still gets a sync for its last record. At most [`MAX_OUTSTANDING`] syncs are in flight; the
//! others wait, the latest per partition.

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::records::OffsetSync;

/// Offset syncs in flight at most (Java's `MAX_OUTSTANDING_OFFSET_SYNCS`).
pub const MAX_OUTSTANDING: usize = 10;

/// `offset.lag.max`'s default: how far (records) the translated offset may lag before a sync
/// is due.
pub const OFFSET_LAG_MAX_DEFAULT: i64 = 100;

/// A source partition: topic and partition number.
pub type TopicPartition = (String, i32);

/// The offset sync of `tp` mapping `upstream` to `downstream`.
fn sync_of(tp: &TopicPartition, upstream: i64, downstream: i64) -> OffsetSync {
    OffsetSync {
        topic: tp.0.clone(),
        partition: tp.1,
        upstream_offset: upstream,
        downstream_offset: downstream,
    }
}

/// One partition's history (Java's `PartitionState`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PartitionState {
    previous_upstream: i64,
    previous_downstream: i64,
    last_sync_downstream: i64,
    should_sync: bool,
}

impl PartitionState {
    fn new() -> PartitionState {
        PartitionState {
            previous_upstream: -1,
            previous_downstream: -1,
            last_sync_downstream: -1,
            should_sync: false,
        }
    }

    /// Records a replicated record's offsets; whether a sync is due now.
    fn update(&mut self, upstream: i64, downstream: i64, max_lag: i64) -> bool {
        let first = self.last_sync_downstream == -1;
        // A consumer translating through the last sync lands one past it.
        let stale = downstream.wrapping_sub(self.last_sync_downstream.wrapping_add(1)) >= max_lag;
        let skipped = upstream.wrapping_sub(self.previous_upstream) != 1;
        let truncated = downstream < self.previous_downstream;
        if first || stale || skipped || truncated {
            self.last_sync_downstream = downstream;
            self.should_sync = true;
        }
        self.previous_upstream = upstream;
        self.previous_downstream = downstream;
        self.should_sync
    }
}

/// The syncs of one task: pending (to send now, in the order they became due), delayed (to
/// send at the next commit), and how many are in flight.
#[derive(Debug)]
pub struct OffsetSyncQueue {
    max_lag: i64,
    states: HashMap<TopicPartition, PartitionState>,
    pending: IndexMap<TopicPartition, OffsetSync>,
    delayed: IndexMap<TopicPartition, OffsetSync>,
    outstanding: usize,
}

impl OffsetSyncQueue {
    /// A queue for `offset.lag.max` = `max_lag` records.
    pub fn new(max_lag: i64) -> OffsetSyncQueue {
        OffsetSyncQueue {
            max_lag,
            states: HashMap::new(),
            pending: IndexMap::new(),
            delayed: IndexMap::new(),
            outstanding: 0,
        }
    }

    /// The record at `upstream` of `tp` was written at `downstream` on the target
    /// (`maybeQueueOffsetSyncs`): its sync becomes pending when due, else delayed (replacing
    /// the partition's earlier delayed one).
    pub fn record(&mut self, tp: &TopicPartition, upstream: i64, downstream: i64) {
        // No allocation on the common path (a partition seen before, its sync delayed).
        let due = match self.states.get_mut(tp) {
            Some(state) => state.update(upstream, downstream, self.max_lag),
            None => {
                let mut state = PartitionState::new();
                let due = state.update(upstream, downstream, self.max_lag);
                self.states.insert(tp.clone(), state);
                due
            }
        };
        if due {
            if let Some(state) = self.states.get_mut(tp) {
                state.should_sync = false;
            }
            self.delayed.shift_remove(tp);
            // A partition already pending keeps its place and takes the newer sync, as a
            // `LinkedHashMap.put` does.
            self.pending
                .insert(tp.clone(), sync_of(tp, upstream, downstream));
        } else if let Some(sync) = self.delayed.get_mut(tp) {
            sync.upstream_offset = upstream;
            sync.downstream_offset = downstream;
        } else {
            self.delayed
                .insert(tp.clone(), sync_of(tp, upstream, downstream));
        }
    }

    /// Makes every delayed sync pending (`promoteDelayedOffsetSyncs`, at each offset commit).
    pub fn promote_delayed(&mut self) {
        for (tp, sync) in self.delayed.drain(..) {
            self.pending.insert(tp, sync);
        }
    }

    /// The pending syncs that may be sent now, oldest first, counted as in flight
    /// (`firePendingOffsetSyncs`): as many as [`MAX_OUTSTANDING`] allows.
    pub fn take_sendable(&mut self) -> Vec<OffsetSync> {
        let n = MAX_OUTSTANDING
            .saturating_sub(self.outstanding)
            .min(self.pending.len());
        self.outstanding += n;
        self.pending.drain(..n).map(|(_, s)| s).collect()
    }

    /// A sync sent earlier was acknowledged or failed: one less in flight.
    pub fn completed(&mut self) {
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// The pending syncs, in order (for tests and metrics).
    pub fn pending(&self) -> impl Iterator<Item = &OffsetSync> {
        self.pending.values()
    }

    /// The delayed syncs, in order.
    pub fn delayed(&self) -> impl Iterator<Item = &OffsetSync> {
        self.delayed.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        ("t".to_string(), p)
    }

    fn ups(it: impl Iterator<Item = OffsetSync>) -> Vec<(i32, i64, i64)> {
        it.map(|s| (s.partition, s.upstream_offset, s.downstream_offset))
            .collect()
    }

    #[test]
    fn the_first_record_syncs_then_contiguous_ones_wait_for_the_lag() {
        let mut q = OffsetSyncQueue::new(3);
        q.record(&tp(0), 0, 10);
        assert_eq!(ups(q.take_sendable().into_iter()), [(0, 0, 10)]);
        q.completed();
        q.record(&tp(0), 1, 11);
        q.record(&tp(0), 2, 12);
        assert!(q.take_sendable().is_empty(), "within the lag: delayed");
        assert_eq!(ups(q.delayed().cloned()), [(0, 2, 12)]);
        q.record(&tp(0), 3, 13);
        q.record(&tp(0), 4, 14); // 14 - (10 + 1) >= 3
        assert_eq!(ups(q.take_sendable().into_iter()), [(0, 4, 14)]);
        assert_eq!(q.delayed().count(), 0);
    }

    #[test]
    fn a_gap_upstream_syncs_at_once_and_a_commit_promotes_the_rest() {
        let mut q = OffsetSyncQueue::new(100);
        q.record(&tp(0), 0, 0);
        q.record(&tp(1), 5, 0);
        assert_eq!(q.take_sendable().len(), 2);
        q.completed();
        q.completed();
        q.record(&tp(0), 1, 1);
        q.record(&tp(0), 3, 2); // skipped upstream offset 2
        q.record(&tp(1), 6, 1);
        assert_eq!(ups(q.pending().cloned()), [(0, 3, 2)]);
        q.promote_delayed();
        assert_eq!(ups(q.take_sendable().into_iter()), [(0, 3, 2), (1, 6, 1)]);
    }

    #[test]
    fn at_most_ten_are_in_flight() {
        let mut q = OffsetSyncQueue::new(100);
        for p in 0..12 {
            q.record(&tp(p), 0, 0);
        }
        assert_eq!(q.take_sendable().len(), MAX_OUTSTANDING);
        assert!(q.take_sendable().is_empty());
        q.completed();
        assert_eq!(ups(q.take_sendable().into_iter()), [(10, 0, 0)]);
    }
}
