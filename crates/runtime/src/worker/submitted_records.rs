//! Which source offsets may be committed (Connect's `SubmittedRecords`): a source offset is
//! committable only once Kafka acknowledged its record **and every record submitted before it
//! for the same source partition**.
//!
//! Bookkeeping is incremental so that a high record rate stays cheap:
//! - every submitted record gets a sequence number and an entry in a ring indexed by
//!   `seq - base` (its partition slot and whether it is pending, acknowledged or done), so an
//!   acknowledgement is an index, not a hash-set insertion;
//! - records of the same source partition are recognised by pointer (the `Arc` of the previous
//!   record's partition) before falling back to the partition's JSON;
//! - acknowledgements are applied whenever [`SubmittedRecords::process_acks`] runs (every
//!   iteration of the task loop): each partition's acknowledged prefix is removed right away and
//!   only its last offset is kept, so [`SubmittedRecords::committable`] has nothing left to scan.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tributary_api::record::SourceMap;

/// Acknowledgements handed from the producer's delivery callback (another thread) to the task
/// thread, which can also wait for the next one.
#[derive(Default)]
pub struct AckInbox {
    state: Mutex<InboxState>,
    arrived: Condvar,
}

#[derive(Default)]
struct InboxState {
    acks: Vec<u64>,
    /// The task thread waits in [`AckInbox::wait`] for this many acknowledgements (0: nobody
    /// waits); the callback signals once that many are queued.
    wanted: usize,
}

impl AckInbox {
    /// Records that the record with sequence number `seq` was acknowledged.
    pub fn push(&self, seq: u64) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.acks.push(seq);
        if state.wanted != 0 && state.acks.len() >= state.wanted {
            state.wanted = 0;
            drop(state);
            self.arrived.notify_one();
        }
    }

    /// Waits until at least `count` acknowledgements are queued, or `timeout` passed.
    pub fn wait(&self, count: usize, timeout: Duration) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.acks.len() >= count.max(1) {
            return;
        }
        state.wanted = count.max(1);
        let (mut state, _) = self
            .arrived
            .wait_timeout(state, timeout)
            .unwrap_or_else(|p| p.into_inner());
        state.wanted = 0;
    }

    /// Moves the queued acknowledgements into `out` (which should be empty; its buffer is
    /// swapped in so neither side reallocates in the steady state).
    fn take_into(&self, out: &mut Vec<u64>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::swap(&mut state.acks, out);
    }
}

/// Where a submitted record stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent, not acknowledged yet.
    Pending,
    /// Acknowledged, but an earlier record of its partition is not.
    Acked,
    /// Acknowledged with every earlier record of its partition (its offset was taken over), or
    /// removed because it was never sent.
    Done,
}

/// One submitted record in the ring.
#[derive(Clone, Copy, Debug)]
struct Entry {
    slot: u32,
    state: State,
}

/// Keys of one-entry offsets seen so far (`StoredOffset::Scalar::key` indexes it); beyond this
/// many distinct keys, offsets are kept as maps.
const MAX_OFFSET_KEYS: usize = 64;

/// A record's source offset while its record is in flight. The usual offset, one key with a
/// number, boolean or null value (e.g. FileStreamSource's `{"position": 42}`), is kept in a few
/// bytes with the key interned instead of as a map (three allocations, ~300 bytes per record);
/// the map is rebuilt only for the offsets that get committed.
#[derive(Debug)]
enum StoredOffset {
    Scalar { key: u32, value: Scalar },
    Map(Box<SourceMap>),
}

/// A JSON value that needs no allocation.
#[derive(Debug)]
enum Scalar {
    Null,
    Bool(bool),
    Number(serde_json::Number),
}

impl StoredOffset {
    fn new(offset: SourceMap, keys: &mut Vec<String>) -> StoredOffset {
        if offset.len() == 1 {
            let (key, value) = offset.iter().next().expect("one entry");
            let scalar = match value {
                serde_json::Value::Null => Some(Scalar::Null),
                serde_json::Value::Bool(b) => Some(Scalar::Bool(*b)),
                serde_json::Value::Number(n) => Some(Scalar::Number(n.clone())),
                _ => None,
            };
            if let Some(value) = scalar {
                let id = match keys.iter().rposition(|k| k == key) {
                    Some(id) => Some(id),
                    None if keys.len() < MAX_OFFSET_KEYS => {
                        keys.push(key.clone());
                        Some(keys.len() - 1)
                    }
                    None => None,
                };
                if let Some(id) = id {
                    return StoredOffset::Scalar {
                        key: id as u32,
                        value,
                    };
                }
            }
        }
        StoredOffset::Map(Box::new(offset))
    }

    fn into_map(self, keys: &[String]) -> SourceMap {
        match self {
            StoredOffset::Map(map) => *map,
            StoredOffset::Scalar { key, value } => {
                let value = match value {
                    Scalar::Null => serde_json::Value::Null,
                    Scalar::Bool(b) => serde_json::Value::Bool(b),
                    Scalar::Number(n) => serde_json::Value::Number(n),
                };
                let mut map = SourceMap::with_capacity(1);
                map.insert(keys[key as usize].clone(), value);
                map
            }
        }
    }
}

/// A source partition with records in flight.
struct Slot {
    /// The partition's JSON (the key of `SubmittedRecords::index`).
    key: String,
    partition: Arc<SourceMap>,
    /// Records of this partition not yet acknowledged with all before them, in order.
    records: VecDeque<(u64, StoredOffset)>,
    /// The offset of the last record of the acknowledged prefix, not yet returned by
    /// `committable`.
    committable: Option<StoredOffset>,
    /// Listed in `SubmittedRecords::dirty`.
    dirty: bool,
}

/// Records submitted to the producer and not yet committed, per source partition.
#[derive(Default)]
pub struct SubmittedRecords {
    next_seq: u64,
    /// Sequence number of `ring[0]`; every record before it is done.
    base: u64,
    ring: VecDeque<Entry>,
    slots: Vec<Slot>,
    /// Slots no partition uses (reused before growing `slots`).
    free: Vec<usize>,
    /// Slot of each partition in use, by the partition's JSON.
    index: HashMap<String, usize>,
    /// The partition of the previous submitted record and its slot.
    last: Option<(Arc<SourceMap>, usize)>,
    /// Slots with new acknowledgements or removals to look at.
    dirty: Vec<usize>,
    /// Records submitted whose offsets did not become committable yet.
    pending: usize,
    /// Acknowledgements delivered by the producer callback, drained by the task thread.
    inbox: Arc<AckInbox>,
    /// The buffer swapped with the inbox's.
    drained: Vec<u64>,
    /// Interned keys of one-entry offsets.
    offset_keys: Vec<String>,
}

impl SubmittedRecords {
    /// Nothing submitted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where the producer's delivery callback pushes acknowledged sequence numbers.
    pub fn inbox(&self) -> Arc<AckInbox> {
        self.inbox.clone()
    }

    /// The slot of `partition`, creating it when the partition has none.
    fn slot_for(&mut self, partition: &Arc<SourceMap>) -> usize {
        if let Some((last, slot)) = &self.last {
            if Arc::ptr_eq(last, partition) {
                return *slot;
            }
        }
        let key = serde_json::to_string(&**partition).unwrap_or_default();
        let slot = match self.index.get(&key) {
            Some(&slot) => slot,
            None => {
                let new = Slot {
                    key: key.clone(),
                    partition: partition.clone(),
                    records: VecDeque::new(),
                    committable: None,
                    dirty: false,
                };
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot] = new;
                        slot
                    }
                    None => {
                        self.slots.push(new);
                        self.slots.len() - 1
                    }
                };
                self.index.insert(key, slot);
                slot
            }
        };
        self.last = Some((partition.clone(), slot));
        slot
    }

    /// Registers a record about to be sent; returns its sequence number (the delivery opaque).
    pub fn submit(&mut self, partition: Arc<SourceMap>, offset: SourceMap) -> u64 {
        let slot = self.slot_for(&partition);
        let seq = self.next_seq;
        self.next_seq += 1;
        let offset = StoredOffset::new(offset, &mut self.offset_keys);
        self.slots[slot].records.push_back((seq, offset));
        self.ring.push_back(Entry {
            slot: slot as u32,
            state: State::Pending,
        });
        self.pending += 1;
        seq
    }

    fn entry(&mut self, seq: u64) -> Option<&mut Entry> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.ring.get_mut(i)
    }

    fn mark_dirty(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        if !s.dirty {
            s.dirty = true;
            self.dirty.push(slot);
        }
    }

    /// Forgets a record that was never sent (the send failed synchronously).
    pub fn remove(&mut self, seq: u64) {
        let Some(entry) = self.entry(seq) else {
            return;
        };
        if entry.state == State::Done {
            return;
        }
        entry.state = State::Done;
        let slot = entry.slot as usize;
        let records = &mut self.slots[slot].records;
        // Usually the last record submitted.
        if let Some(pos) = records.iter().rposition(|(s, _)| *s == seq) {
            records.remove(pos);
            self.pending -= 1;
        }
        // Acknowledged records behind it may now form a prefix.
        self.mark_dirty(slot);
        self.advance();
    }

    /// Marks a record acknowledged (directly, without the inbox).
    pub fn ack(&mut self, seq: u64) {
        self.mark_acked(seq);
        self.advance();
    }

    fn mark_acked(&mut self, seq: u64) {
        let Some(entry) = self.entry(seq) else {
            return;
        };
        if entry.state != State::Pending {
            return;
        }
        entry.state = State::Acked;
        let slot = entry.slot as usize;
        self.mark_dirty(slot);
    }

    /// Applies the acknowledgements the producer callback delivered since the last call:
    /// each partition's acknowledged prefix is dropped, keeping only its last offset.
    /// Cheap when nothing arrived; the task loop calls it every iteration.
    pub fn process_acks(&mut self) {
        let mut acks = std::mem::take(&mut self.drained);
        self.inbox.take_into(&mut acks);
        for &seq in &acks {
            self.mark_acked(seq);
        }
        acks.clear();
        self.drained = acks;
        self.advance();
    }

    /// Moves the acknowledged prefix of every dirty slot into its committable offset and drops
    /// the done entries at the front of the ring.
    fn advance(&mut self) {
        for slot in std::mem::take(&mut self.dirty) {
            let s = &mut self.slots[slot];
            s.dirty = false;
            while let Some((seq, _)) = s.records.front() {
                let i = (seq - self.base) as usize;
                if self.ring[i].state != State::Acked {
                    break;
                }
                self.ring[i].state = State::Done;
                s.committable = s.records.pop_front().map(|(_, o)| o);
                self.pending -= 1;
            }
        }
        while self.ring.front().is_some_and(|e| e.state == State::Done) {
            self.ring.pop_front();
            self.base += 1;
        }
    }

    /// Takes, per source partition, the offset of the last record that was acknowledged with
    /// every record of its partition before it (since the previous call): the committable
    /// offsets. Applies pending acknowledgements first.
    pub fn committable(&mut self) -> Vec<(Arc<SourceMap>, SourceMap)> {
        self.process_acks();
        let mut out = Vec::new();
        for slot in &mut self.slots {
            if let Some(offset) = slot.committable.take() {
                out.push((slot.partition.clone(), offset.into_map(&self.offset_keys)));
            }
        }
        self.release_idle_slots();
        out
    }

    /// Puts back offsets [`Self::committable`] returned that could not be written (a failed
    /// offset flush, as Connect's `OffsetStorageWriter.cancelFlush` keeps them): each is
    /// committable again, unless a newer offset of its partition became committable meanwhile.
    pub fn restore(&mut self, offsets: Vec<(Arc<SourceMap>, SourceMap)>) {
        for (partition, offset) in offsets {
            let slot = self.slot_for(&partition);
            let slot = &mut self.slots[slot];
            if slot.committable.is_none() {
                slot.committable = Some(StoredOffset::Map(Box::new(offset)));
            }
        }
    }

    /// Frees the slots of partitions with nothing in flight (so a task cycling through many
    /// partitions does not keep them all).
    fn release_idle_slots(&mut self) {
        for i in 0..self.slots.len() {
            let slot = &mut self.slots[i];
            if slot.records.is_empty() && slot.committable.is_none() && !slot.key.is_empty() {
                self.index.remove(&slot.key);
                slot.key = String::new();
                slot.partition = Arc::default();
                slot.records = VecDeque::new();
                self.free.push(i);
                if self.last.as_ref().is_some_and(|(_, s)| *s == i) {
                    self.last = None;
                }
            }
        }
    }

    /// Records submitted whose offsets did not become committable yet (not acknowledged, or
    /// behind an unacknowledged record of their partition).
    pub fn pending(&self) -> usize {
        self.pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(k: &str, v: i64) -> SourceMap {
        let mut m = SourceMap::new();
        m.insert(k.into(), v.into());
        m
    }

    fn part(v: i64) -> Arc<SourceMap> {
        Arc::new(map("p", v))
    }

    fn plain(got: Vec<(Arc<SourceMap>, SourceMap)>) -> Vec<(SourceMap, SourceMap)> {
        let mut got: Vec<_> = got.into_iter().map(|(p, o)| ((*p).clone(), o)).collect();
        got.sort_by_key(|(p, _)| serde_json::to_string(p).unwrap());
        got
    }

    #[test]
    fn offsets_that_could_not_be_written_are_committable_again_unless_newer_ones_are() {
        let mut s = SubmittedRecords::new();
        let (a, b) = (part(1), part(2));
        let s1 = s.submit(a.clone(), map("n", 1));
        let s2 = s.submit(b.clone(), map("n", 1));
        s.ack(s1);
        s.ack(s2);
        let taken = s.committable();
        assert_eq!(taken.len(), 2);
        // Partition b moved on before the failed write came back.
        let s3 = s.submit(b.clone(), map("n", 2));
        s.ack(s3);
        s.restore(taken);
        let mut again = s.committable();
        again.sort_by_key(|(p, _)| p["p"].as_i64());
        assert_eq!(again, vec![(a, map("n", 1)), (b, map("n", 2))]);
        assert!(s.committable().is_empty());
    }

    #[test]
    fn only_the_acknowledged_prefix_is_committable() {
        let mut s = SubmittedRecords::new();
        let a = s.submit(part(1), map("o", 10));
        let b = s.submit(part(1), map("o", 20));
        let c = s.submit(part(1), map("o", 30));
        let other = s.submit(part(2), map("o", 5));
        s.ack(b);
        s.ack(other);
        let got = plain(s.committable());
        assert_eq!(got, vec![(map("p", 2), map("o", 5))]);
        s.ack(a);
        assert_eq!(plain(s.committable()), vec![(map("p", 1), map("o", 20))]);
        assert_eq!(s.pending(), 1);
        s.inbox().push(c);
        assert_eq!(plain(s.committable()), vec![(map("p", 1), map("o", 30))]);
        assert_eq!(s.pending(), 0);
        assert!(s.committable().is_empty());
    }

    #[test]
    fn removed_records_do_not_block_the_prefix() {
        let mut s = SubmittedRecords::new();
        let a = s.submit(part(1), map("o", 1));
        let b = s.submit(part(1), map("o", 2));
        s.ack(b);
        assert!(s.committable().is_empty());
        s.remove(a);
        assert_eq!(plain(s.committable()), vec![(map("p", 1), map("o", 2))]);
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn shared_and_equal_partitions_are_the_same_partition() {
        let mut s = SubmittedRecords::new();
        let shared = part(1);
        let a = s.submit(shared.clone(), map("o", 1));
        // An equal map in another allocation, then the shared one again.
        let b = s.submit(part(1), map("o", 2));
        let c = s.submit(shared.clone(), map("o", 3));
        s.ack(c);
        s.ack(b);
        assert!(s.committable().is_empty(), "a is not acknowledged yet");
        s.ack(a);
        assert_eq!(plain(s.committable()), vec![(map("p", 1), map("o", 3))]);
    }

    #[test]
    fn acknowledgements_are_applied_incrementally() {
        let mut s = SubmittedRecords::new();
        let p = part(7);
        let seqs: Vec<u64> = (0..1000)
            .map(|i| s.submit(p.clone(), map("o", i)))
            .collect();
        let inbox = s.inbox();
        // Out of order: the odd ones first, then the even ones below 500.
        for &seq in seqs.iter().filter(|q| *q % 2 == 1) {
            inbox.push(seq);
        }
        s.process_acks();
        assert_eq!(s.pending(), 1000);
        for &seq in seqs.iter().filter(|q| *q % 2 == 0 && **q < 500) {
            inbox.push(seq);
        }
        s.process_acks();
        // 0..500 are all acknowledged; 500 is not, so 500.. stay pending.
        assert_eq!(s.pending(), 500);
        assert_eq!(plain(s.committable()), vec![(map("p", 7), map("o", 499))]);
        for &seq in seqs.iter().filter(|q| *q % 2 == 0 && **q >= 500) {
            s.ack(seq);
        }
        assert_eq!(plain(s.committable()), vec![(map("p", 7), map("o", 999))]);
        assert_eq!(s.pending(), 0);
        assert!(s.ring.is_empty());
        // Duplicate or unknown acknowledgements are ignored.
        s.ack(3);
        s.ack(5000);
        assert!(s.committable().is_empty());
    }

    #[test]
    fn partitions_interleave_independently() {
        let mut s = SubmittedRecords::new();
        let (p1, p2) = (part(1), part(2));
        let mut seqs = Vec::new();
        for i in 0..10 {
            seqs.push((1, s.submit(p1.clone(), map("o", i))));
            seqs.push((2, s.submit(p2.clone(), map("o", 100 + i))));
        }
        // Acknowledge all of partition 2 and the first half of partition 1.
        for &(p, seq) in &seqs {
            if p == 2 {
                s.ack(seq);
            }
        }
        for &(_, seq) in seqs.iter().filter(|(p, _)| *p == 1).take(5) {
            s.ack(seq);
        }
        assert_eq!(
            plain(s.committable()),
            vec![(map("p", 1), map("o", 4)), (map("p", 2), map("o", 109))]
        );
        assert_eq!(s.pending(), 5);
        // Partition 2's slot is released and reused by a new partition.
        let q = s.submit(part(3), map("o", 0));
        s.ack(q);
        assert_eq!(plain(s.committable()), vec![(map("p", 3), map("o", 0))]);
        for &(_, seq) in seqs.iter().filter(|(p, _)| *p == 1).skip(5) {
            s.ack(seq);
        }
        assert_eq!(plain(s.committable()), vec![(map("p", 1), map("o", 9))]);
        assert_eq!(s.pending(), 0);
        assert!(s.ring.is_empty());
    }

    #[test]
    fn offsets_of_any_shape_come_back_unchanged() {
        let mut s = SubmittedRecords::new();
        let offsets: Vec<SourceMap> = [
            serde_json::json!({"position": 42}),
            serde_json::json!({"position": null}),
            serde_json::json!({"position": -3}),
            serde_json::json!({"done": true}),
            serde_json::json!({"ratio": 0.5}),
            serde_json::json!({"name": "x"}),
            serde_json::json!({"a": 1, "b": 2}),
            serde_json::json!({}),
            serde_json::json!({"nested": {"k": [1, 2]}}),
        ]
        .into_iter()
        .map(|v| v.as_object().unwrap().clone())
        .collect();
        for (i, offset) in offsets.iter().enumerate() {
            let seq = s.submit(part(i as i64), offset.clone());
            s.ack(seq);
        }
        let mut got = plain(s.committable());
        got.sort_by_key(|(p, _)| p["p"].as_i64());
        let want: Vec<_> = offsets
            .iter()
            .enumerate()
            .map(|(i, o)| (map("p", i as i64), o.clone()))
            .collect();
        assert_eq!(got, want);
        // More distinct keys than are interned still round-trip.
        let p = part(100);
        for i in 0..(MAX_OFFSET_KEYS as i64 + 5) {
            let seq = s.submit(p.clone(), map(&format!("k{i}"), i));
            s.ack(seq);
            let last = format!("k{i}");
            assert_eq!(plain(s.committable()), vec![(map("p", 100), map(&last, i))]);
        }
    }

    #[test]
    fn a_waiting_task_is_woken_by_enough_acknowledgements() {
        let inbox = Arc::new(AckInbox::default());
        let pusher = {
            let inbox = inbox.clone();
            std::thread::spawn(move || {
                for seq in 0..3 {
                    // A test thread.
                    #[allow(clippy::disallowed_methods)]
                    std::thread::sleep(Duration::from_millis(5));
                    inbox.push(seq);
                }
            })
        };
        let start = std::time::Instant::now();
        inbox.wait(3, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(5));
        pusher.join().unwrap();
        let mut got = Vec::new();
        inbox.take_into(&mut got);
        assert_eq!(got, vec![0, 1, 2]);
        // Already there: no wait.
        inbox.push(9);
        inbox.wait(1, Duration::from_secs(10));
    }
}
