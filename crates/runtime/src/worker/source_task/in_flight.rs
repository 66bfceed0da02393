//! The polled records a task's `commit_record` is handed once Kafka acknowledged them, by
//! submission sequence number.

use std::collections::VecDeque;

use tributary_api::record::SourceRecord;

/// Records in flight by sequence number: a ring indexed by `seq - base`, since sequence numbers
/// are handed out in increasing order and most records are acknowledged roughly in that order
/// (a hash map cost a hash, an insertion and a removal per record). A sequence number never
/// inserted (a record not sent) is an empty place, dropped once it reaches the front.
#[derive(Default)]
pub(super) struct InFlightRecords {
    /// Sequence number of `ring[0]`.
    base: u64,
    ring: VecDeque<Option<SourceRecord>>,
}

impl InFlightRecords {
    /// Keeps `record` as submission `seq`, which must be above every `seq` inserted before.
    pub(super) fn insert(&mut self, seq: u64, record: SourceRecord) {
        if self.ring.is_empty() {
            self.base = seq;
        }
        let Some(index) = seq.checked_sub(self.base) else {
            debug_assert!(false, "in-flight record {seq} inserted below {}", self.base);
            return;
        };
        let index = index as usize;
        while self.ring.len() < index {
            self.ring.push_back(None);
        }
        if index == self.ring.len() {
            self.ring.push_back(Some(record));
        } else {
            self.ring[index] = Some(record);
        }
    }

    /// Takes submission `seq`'s record, if it is kept.
    pub(super) fn remove(&mut self, seq: u64) -> Option<SourceRecord> {
        let index = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let record = self.ring.get_mut(index)?.take();
        while matches!(self.ring.front(), Some(None)) {
            self.ring.pop_front();
            self.base += 1;
        }
        record
    }

    /// Records kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.ring.iter().filter(|r| r.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::data::Value;
    use tributary_api::record::SourceMap;

    fn record(n: i64) -> SourceRecord {
        let mut offset = SourceMap::new();
        offset.insert("n".into(), n.into());
        SourceRecord::new(SourceMap::new(), offset, "t", None, Value::Null)
    }

    fn n(r: &SourceRecord) -> i64 {
        r.source_offset["n"].as_i64().unwrap()
    }

    #[test]
    fn records_come_back_by_sequence_number_in_any_order_and_once() {
        let mut f = InFlightRecords::default();
        for seq in [5, 6, 8, 9] {
            f.insert(seq, record(seq as i64));
        }
        assert!(f.remove(7).is_none(), "7 was never inserted");
        assert_eq!(n(&f.remove(8).unwrap()), 8);
        assert!(f.remove(8).is_none(), "taken once");
        assert_eq!(n(&f.remove(5).unwrap()), 5);
        assert_eq!(f.len(), 2);
        f.insert(12, record(12));
        assert_eq!(n(&f.remove(12).unwrap()), 12);
        assert_eq!(n(&f.remove(6).unwrap()), 6);
        assert_eq!(n(&f.remove(9).unwrap()), 9);
        assert_eq!(f.len(), 0);
        assert!(f.ring.is_empty(), "empty places at the front are dropped");
        assert!(f.remove(3).is_none() && f.remove(100).is_none());
        f.insert(20, record(20));
        assert_eq!(n(&f.remove(20).unwrap()), 20);
    }
}
