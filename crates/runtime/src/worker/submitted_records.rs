//! Which source offsets may be committed (Connect's `SubmittedRecords`): a source offset is
//! committable only once Kafka acknowledged its record **and every record submitted before it
//! for the same source partition**.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use tributary_api::record::SourceMap;

/// Records submitted to the producer and not yet committed, per source partition.
#[derive(Default)]
pub struct SubmittedRecords {
    next_seq: u64,
    /// Per source partition (keyed by its JSON), the partition map and the records in order.
    partitions: HashMap<String, (SourceMap, VecDeque<(u64, SourceMap)>)>,
    pending: usize,
    acked: HashSet<u64>,
    /// Acknowledgements delivered by the producer callback, drained by the task thread.
    inbox: Arc<Mutex<Vec<u64>>>,
}

impl SubmittedRecords {
    pub fn new() -> Self {
        Self::default()
    }

    /// Where the producer's delivery callback pushes acknowledged sequence numbers.
    pub fn inbox(&self) -> Arc<Mutex<Vec<u64>>> {
        self.inbox.clone()
    }

    /// Registers a record about to be sent; returns its sequence number (the delivery opaque).
    pub fn submit(&mut self, partition: SourceMap, offset: SourceMap) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = serde_json::to_string(&partition).unwrap_or_default();
        self.partitions
            .entry(key)
            .or_insert_with(|| (partition, VecDeque::new()))
            .1
            .push_back((seq, offset));
        self.pending += 1;
        seq
    }

    /// Forgets a record that was never sent (the send failed synchronously).
    pub fn remove(&mut self, seq: u64) {
        for (_, queue) in self.partitions.values_mut() {
            if let Some(pos) = queue.iter().position(|(s, _)| *s == seq) {
                queue.remove(pos);
                self.pending -= 1;
                return;
            }
        }
    }

    /// Marks a record acknowledged (directly, without the inbox).
    pub fn ack(&mut self, seq: u64) {
        self.acked.insert(seq);
    }

    fn drain_inbox(&mut self) {
        let acks = std::mem::take(&mut *self.inbox.lock().unwrap());
        self.acked.extend(acks);
    }

    /// Removes the acknowledged prefix of each partition's records and returns, per source
    /// partition, the offset of the last record in that prefix: the committable offsets.
    pub fn committable(&mut self) -> Vec<(SourceMap, SourceMap)> {
        self.drain_inbox();
        let mut out = Vec::new();
        for (partition, queue) in self.partitions.values_mut() {
            let mut last = None;
            while let Some((seq, _)) = queue.front() {
                if !self.acked.remove(seq) {
                    break;
                }
                last = queue.pop_front().map(|(_, o)| o);
                self.pending -= 1;
            }
            if let Some(o) = last {
                out.push((partition.clone(), o));
            }
        }
        self.partitions.retain(|_, (_, q)| !q.is_empty());
        out
    }

    /// Records submitted and not yet committable.
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

    #[test]
    fn only_the_acknowledged_prefix_is_committable() {
        let mut s = SubmittedRecords::new();
        let a = s.submit(map("p", 1), map("o", 10));
        let b = s.submit(map("p", 1), map("o", 20));
        let c = s.submit(map("p", 1), map("o", 30));
        let other = s.submit(map("p", 2), map("o", 5));
        s.ack(b);
        s.ack(other);
        let got = s.committable();
        assert_eq!(got, vec![(map("p", 2), map("o", 5))]);
        s.ack(a);
        assert_eq!(s.committable(), vec![(map("p", 1), map("o", 20))]);
        assert_eq!(s.pending(), 1);
        s.inbox().lock().unwrap().push(c);
        assert_eq!(s.committable(), vec![(map("p", 1), map("o", 30))]);
        assert_eq!(s.pending(), 0);
        assert!(s.committable().is_empty());
    }

    #[test]
    fn removed_records_do_not_block_the_prefix() {
        let mut s = SubmittedRecords::new();
        let a = s.submit(map("p", 1), map("o", 1));
        let b = s.submit(map("p", 1), map("o", 2));
        s.remove(a);
        s.ack(b);
        assert_eq!(s.committable(), vec![(map("p", 1), map("o", 2))]);
    }
}
