//! How the checkpoint connector translates a consumer group's upstream offsets into the
//! target's (Apache's `OffsetSyncStore`, KAFKA-14666): a pure store of the offset syncs read
//! from the offset-syncs topic, and the translation through them.
//!
//! Per source partition the store keeps [`SYNCS_PER_PARTITION`] (64) slots, newest first,
//! spaced so that slot `i` holds a sync roughly `2^i` offsets behind the newest: recent
//! offsets translate precisely and old ones still translate, with bounded memory. A sync with
//! an upstream offset below the newest one (the upstream topic was recreated, or the source
//! task restarted from older offsets) clears the partition to that sync alone; so does every
//! sync read before the store has read to the end of the topic, when it was started with
//! `must_read_to_end` (Java's `initializationMustReadToEnd`: only the last sync of the
//! initial read counts).
//!
//! Translation of upstream offset `u`: the newest kept sync at or before `u`; `u` past it
//! translates to one past its downstream offset (a consumer there has read the synced record;
//! nothing later is known), `u` equal to it to its downstream offset; with every kept sync
//! after `u`, `-1` (the group is behind what the store can translate); without syncs for the
//! partition, or before the initial read ended, nothing.

use std::collections::HashMap;

use crate::records::OffsetSync;

/// Syncs kept per source partition (Java's `SYNCS_PER_PARTITION`, `Long.SIZE`).
pub const SYNCS_PER_PARTITION: usize = 64;

/// A sync as the store keeps it: its offsets and the identity of the record it came from
/// (Java compares slots by reference: two slots holding the same record are duplicates, two
/// records with equal offsets are not).
#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u64,
    upstream: i64,
    downstream: i64,
}

impl PartialEq for Slot {
    fn eq(&self, other: &Slot) -> bool {
        self.id == other.id
    }
}

/// The offset syncs of every source partition, and whether the initial read ended.
#[derive(Debug)]
pub struct OffsetSyncStore {
    syncs: HashMap<(String, i32), [Slot; SYNCS_PER_PARTITION]>,
    must_read_to_end: bool,
    read_to_end: bool,
    next_id: u64,
}

impl OffsetSyncStore {
    /// A store still reading the offset-syncs topic for the first time. With
    /// `must_read_to_end`, syncs read before [`OffsetSyncStore::read_to_end`] each replace
    /// their partition's (Java's `start(initializationMustReadToEnd)`).
    pub fn new(must_read_to_end: bool) -> OffsetSyncStore {
        OffsetSyncStore {
            syncs: HashMap::new(),
            must_read_to_end,
            read_to_end: false,
            next_id: 0,
        }
    }

    /// The initial read reached the end of the topic: translations start.
    pub fn read_to_end(&mut self) {
        self.read_to_end = true;
    }

    /// One sync read from the topic (Java's `handleRecord`).
    pub fn handle(&mut self, sync: &OffsetSync) {
        let slot = Slot {
            id: self.next_id,
            upstream: sync.upstream_offset,
            downstream: sync.downstream_offset,
        };
        self.next_id += 1;
        let only_last = !self.read_to_end && self.must_read_to_end;
        match self.syncs.get_mut(&(sync.topic.clone(), sync.partition)) {
            None => {
                self.syncs.insert(
                    (sync.topic.clone(), sync.partition),
                    [slot; SYNCS_PER_PARTITION],
                );
            }
            Some(slots) => {
                let original = *slots;
                update(slots, &original, slot, only_last);
            }
        }
    }

    /// The downstream offset of upstream offset `upstream` of `topic`/`partition` (Java's
    /// `translateDownstream`): `None` when nothing can be said (initial read in progress, no
    /// sync for the partition), `Some(-1)` when every kept sync is after `upstream`.
    pub fn translate_downstream(&self, topic: &str, partition: i32, upstream: i64) -> Option<i64> {
        if !self.read_to_end {
            return None;
        }
        let slots = self.syncs.get(&(topic.to_string(), partition))?;
        let sync = slots
            .iter()
            .find(|s| s.upstream <= upstream)
            .unwrap_or(&slots[SYNCS_PER_PARTITION - 1]);
        if sync.upstream > upstream {
            return Some(-1);
        }
        let step = i64::from(upstream != sync.upstream);
        Some(sync.downstream + step)
    }

    /// The upstream and downstream offsets kept in slot `index` of a partition (for tests).
    pub fn slot(&self, topic: &str, partition: i32, index: usize) -> Option<(i64, i64)> {
        self.syncs
            .get(&(topic.to_string(), partition))
            .and_then(|s| s.get(index))
            .map(|s| (s.upstream, s.downstream))
    }
}

/// Slot `i` no newer than allowed relative to slot `j` (Java's `invariantB`).
fn invariant_b(i_sync: Slot, j_sync: Slot, i: usize, j: usize) -> bool {
    let bound = j_sync
        .upstream
        .wrapping_add(1i64 << j)
        .wrapping_sub(1i64 << i);
    i_sync == j_sync || bound < 0 || i_sync.upstream <= bound
}

/// Slot `i` far enough from slot `j` (Java's `invariantC`).
fn invariant_c(i_sync: Slot, j_sync: Slot, i: usize) -> bool {
    let bound = j_sync.upstream.wrapping_add(1i64 << i.saturating_sub(2));
    i_sync == j_sync || (bound >= 0 && i_sync.upstream >= bound)
}

/// Puts `sync` first and shifts older syncs down where the spacing allows (Java's
/// `updateSyncArray`).
fn update(
    syncs: &mut [Slot; SYNCS_PER_PARTITION],
    original: &[Slot; SYNCS_PER_PARTITION],
    sync: Slot,
    only_last: bool,
) {
    if only_last || sync.upstream < syncs[0].upstream {
        *syncs = [sync; SYNCS_PER_PARTITION];
        return;
    }
    let mut replacement = sync;
    let mut replacement_index = 0;
    syncs[0] = replacement;
    for current in 1..SYNCS_PER_PARTITION {
        let previous = current - 1;
        loop {
            let old = original[replacement_index];
            let is_recent = invariant_b(syncs[previous], old, previous, current);
            let separated_from_previous = invariant_c(syncs[previous], old, previous);
            let next = current + 1;
            let separated_from_next =
                next >= SYNCS_PER_PARTITION || invariant_c(old, syncs[next], current);
            let next_replacement = replacement_index + 1;
            let duplicate =
                next_replacement < SYNCS_PER_PARTITION && old == original[next_replacement];
            let promote = is_recent && separated_from_previous && separated_from_next;
            if promote {
                replacement = old;
            }
            let skip = duplicate || !separated_from_previous;
            if promote || skip {
                replacement_index += 1;
            }
            if !(replacement_index < current && skip) {
                break;
            }
        }
        if invariant_b(syncs[previous], syncs[current], previous, current) {
            break;
        }
        syncs[current] = replacement;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sync(up: i64, down: i64) -> OffsetSync {
        OffsetSync {
            topic: "t".into(),
            partition: 0,
            upstream_offset: up,
            downstream_offset: down,
        }
    }

    #[test]
    fn translation_waits_for_the_initial_read_and_steps_past_a_sync() {
        let mut store = OffsetSyncStore::new(true);
        store.handle(&sync(100, 200));
        assert_eq!(
            store.translate_downstream("t", 0, 150),
            None,
            "initial read"
        );
        store.read_to_end();
        assert_eq!(store.translate_downstream("t", 0, 100), Some(200));
        assert_eq!(store.translate_downstream("t", 0, 150), Some(201));
        assert_eq!(
            store.translate_downstream("t", 0, 99),
            Some(-1),
            "behind every sync"
        );
        assert_eq!(store.translate_downstream("t", 1, 100), None, "no sync");
    }

    #[test]
    fn older_syncs_stay_reachable_at_growing_distances() {
        let mut store = OffsetSyncStore::new(true);
        store.read_to_end();
        for up in 0..10_000 {
            store.handle(&sync(up, up + 5));
        }
        // Recent offsets translate exactly, older ones to a sync not far behind.
        assert_eq!(store.translate_downstream("t", 0, 9_999), Some(10_004));
        let far = store.translate_downstream("t", 0, 5_000).unwrap();
        assert!((4_000..=5_005).contains(&far), "{far}");
        // A rewind upstream clears the partition.
        store.handle(&sync(10, 20_000));
        assert_eq!(store.slot("t", 0, 63), Some((10, 20_000)));
    }
}
