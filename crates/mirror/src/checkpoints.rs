//! Which checkpoints the checkpoint task emits for a consumer group (Apache's
//! `MirrorCheckpointTask.checkpointsForGroup` and the `CheckpointStore` it consults): pure, fed
//! the group's committed upstream offsets and the [`OffsetSyncStore`].
//!
//! For each committed offset of a partition whose topic the topic filter accepts, the offset is
//! translated through the offset syncs; a partition with nothing to translate through, or
//! whose translation is `-1` (the group is behind every kept sync), gets no checkpoint. The
//! checkpoint names the partition as the target knows it: a topic that came from the target
//! takes its original name back (`B.orders` → `orders` for target `B`), any other gets the
//! source's prefix (`orders` → `A.orders`). It is emitted when it is the group's first for
//! that partition, when the group rewound upstream, or when its downstream offset advanced:
//! downstream, checkpoints never go back and never repeat.

use std::collections::{BTreeMap, HashMap};

use crate::filter::NameFilter;
use crate::offset_sync_store::OffsetSyncStore;
use crate::policy::ReplicationPolicy;
use crate::records::Checkpoint;

/// A consumer group's committed offset (with its metadata) on one cluster.
pub use tributary_group::client::group_offsets::CommittedOffset as GroupOffset;

/// The checkpoint task's decisions, and the last checkpoint of each group and partition.
#[derive(Debug)]
pub struct CheckpointPlanner {
    policy: ReplicationPolicy,
    source_alias: String,
    target_alias: String,
    /// `None`: every topic (what Java's test constructor uses).
    topics: Option<NameFilter>,
    last: HashMap<String, HashMap<(String, i32), Checkpoint>>,
}

impl CheckpointPlanner {
    /// A planner for the flow `source_alias` → `target_alias` that checkpoints the topics
    /// `topics` accepts (every topic with `None`), with no checkpoint emitted yet.
    pub fn new(
        policy: ReplicationPolicy,
        source_alias: &str,
        target_alias: &str,
        topics: Option<NameFilter>,
    ) -> CheckpointPlanner {
        CheckpointPlanner {
            policy,
            source_alias: source_alias.to_string(),
            target_alias: target_alias.to_string(),
            topics,
            last: HashMap::new(),
        }
    }

    /// The name of source topic `topic` on the target (`renameTopicPartition`).
    pub fn target_topic(&self, topic: &str) -> String {
        if self.policy.topic_source(topic).as_deref() == Some(self.target_alias.as_str()) {
            self.policy.original_topic(topic)
        } else {
            self.policy.format_remote_topic(&self.source_alias, topic)
        }
    }

    /// The checkpoints to emit for `group` now (`checkpointsForGroup`), by target partition.
    pub fn checkpoints_for_group(
        &self,
        group: &str,
        offsets: &[GroupOffset],
        store: &OffsetSyncStore,
    ) -> BTreeMap<(String, i32), Checkpoint> {
        let mut out = BTreeMap::new();
        for o in offsets {
            if !self.topics.as_ref().is_none_or(|f| f.accepts(&o.topic)) {
                continue;
            }
            let Some(downstream) = store.translate_downstream(&o.topic, o.partition, o.offset)
            else {
                continue;
            };
            if downstream < 0 {
                continue;
            }
            let checkpoint = Checkpoint {
                group: group.to_string(),
                topic: self.target_topic(&o.topic),
                partition: o.partition,
                upstream_offset: o.offset,
                downstream_offset: downstream,
                metadata: o.metadata.clone(),
            };
            if self.is_more_recent(&checkpoint) {
                out.insert((checkpoint.topic.clone(), checkpoint.partition), checkpoint);
            }
        }
        out
    }

    /// Whether `checkpoint` is to be emitted after the group's last one for its partition
    /// (`checkpointIsMoreRecent`).
    fn is_more_recent(&self, checkpoint: &Checkpoint) -> bool {
        let Some(last) = self
            .last
            .get(&checkpoint.group)
            .and_then(|c| c.get(&(checkpoint.topic.clone(), checkpoint.partition)))
        else {
            return true;
        };
        checkpoint.upstream_offset < last.upstream_offset
            || checkpoint.downstream_offset > last.downstream_offset
    }

    /// Records the checkpoints emitted for `group` (`CheckpointStore.update`).
    pub fn update(&mut self, group: &str, emitted: &BTreeMap<(String, i32), Checkpoint>) {
        let last = self.last.entry(group.to_string()).or_default();
        for (k, c) in emitted {
            last.insert(k.clone(), c.clone());
        }
    }

    /// The offsets `sync.group.offsets.enabled` commits for the groups on the target (KIP-545,
    /// Java's `syncGroupOffset` over `CheckpointStore.computeConvertedUpstreamOffset`): each
    /// group's last checkpoints as offsets of the target's topics (downstream offset and the
    /// upstream metadata). `idle` holds the committed offsets on the target of the groups
    /// that are empty there: of those, only partitions without an offset or behind the
    /// checkpoint are committed (a consumer of the target that went further is never moved
    /// back); a group not in `idle` (unknown on the target, or with members, whose commit the
    /// coordinator refuses) gets all of its checkpoints. Groups with nothing to commit are
    /// left out.
    pub fn offsets_to_sync(
        &self,
        idle: &HashMap<String, HashMap<(String, i32), i64>>,
    ) -> BTreeMap<String, Vec<GroupOffset>> {
        let mut out = BTreeMap::new();
        for (group, checkpoints) in &self.last {
            let target = idle.get(group);
            let mut offsets: Vec<GroupOffset> = checkpoints
                .values()
                .filter(|c| {
                    target
                        .and_then(|t| t.get(&(c.topic.clone(), c.partition)))
                        .is_none_or(|&committed| committed < c.downstream_offset)
                })
                .map(|c| GroupOffset {
                    topic: c.topic.clone(),
                    partition: c.partition,
                    offset: c.downstream_offset,
                    metadata: c.metadata.clone(),
                })
                .collect();
            if !offsets.is_empty() {
                offsets.sort();
                out.insert(group.clone(), offsets);
            }
        }
        out
    }

    /// Seeds the last checkpoints (read back from the checkpoints topic at start).
    pub fn remember(&mut self, checkpoint: Checkpoint) {
        self.last
            .entry(checkpoint.group.clone())
            .or_default()
            .insert((checkpoint.topic.clone(), checkpoint.partition), checkpoint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::OffsetSync;
    use tributary_api::Props;

    fn offset(topic: &str, offset: i64) -> GroupOffset {
        GroupOffset {
            topic: topic.into(),
            partition: 0,
            offset,
            metadata: String::new(),
        }
    }

    #[test]
    fn checkpoints_translate_rename_and_never_go_back_downstream() {
        let mut store = OffsetSyncStore::new(true);
        store.read_to_end();
        for (topic, up, down) in [("orders", 100, 10), ("B.orders", 5, 50)] {
            store.handle(&OffsetSync {
                topic: topic.into(),
                partition: 0,
                upstream_offset: up,
                downstream_offset: down,
            });
        }
        let policy = ReplicationPolicy::from_props(&Props::new()).unwrap();
        let mut planner = CheckpointPlanner::new(policy, "A", "B", None);
        let first = planner.checkpoints_for_group(
            "g",
            &[offset("orders", 150), offset("B.orders", 5), offset("x", 1)],
            &store,
        );
        let got: Vec<_> = first
            .values()
            .map(|c| (c.topic.as_str(), c.upstream_offset, c.downstream_offset))
            .collect();
        // `orders` comes back prefixed, `B.orders` (from the target) by its original name; `x`
        // has no sync.
        assert_eq!(got, [("A.orders", 150, 11), ("orders", 5, 50)]);
        // Behind every sync: no checkpoint.
        assert!(planner
            .checkpoints_for_group("h", &[offset("orders", 50)], &store)
            .is_empty());
        planner.update("g", &first);
        // Repeated: nothing; a downstream step back without an upstream rewind: nothing.
        assert!(planner
            .checkpoints_for_group("g", &[offset("orders", 150)], &store)
            .is_empty());
        // An upstream rewind is emitted.
        let rewind = planner.checkpoints_for_group("g", &[offset("orders", 120)], &store);
        assert_eq!(rewind.len(), 1);
    }

    #[test]
    fn group_offsets_sync_never_moves_a_target_consumer_back() {
        let policy = ReplicationPolicy::from_props(&Props::new()).unwrap();
        let mut planner = CheckpointPlanner::new(policy, "A", "B", None);
        let checkpoint = |group: &str, partition: i32, downstream: i64| Checkpoint {
            group: group.into(),
            topic: "A.orders".into(),
            partition,
            upstream_offset: downstream * 10,
            downstream_offset: downstream,
            metadata: format!("m{partition}"),
        };
        for c in [
            checkpoint("idle", 0, 5),
            checkpoint("idle", 1, 7),
            checkpoint("idle", 2, 9),
            checkpoint("ahead", 0, 3),
            checkpoint("new", 0, 4),
        ] {
            planner.remember(c);
        }
        let idle = HashMap::from([
            (
                "idle".to_string(),
                // Partition 0 behind, 1 ahead, 2 without an offset.
                HashMap::from([
                    (("A.orders".to_string(), 0), 2),
                    (("A.orders".to_string(), 1), 8),
                ]),
            ),
            (
                "ahead".to_string(),
                HashMap::from([(("A.orders".to_string(), 0), 3)]),
            ),
        ]);
        let sync = planner.offsets_to_sync(&idle);
        let got: Vec<(&str, i32, i64, &str)> = sync
            .iter()
            .flat_map(|(g, offsets)| {
                offsets
                    .iter()
                    .map(move |o| (g.as_str(), o.partition, o.offset, o.metadata.as_str()))
            })
            .collect();
        assert_eq!(
            got,
            [("idle", 0, 5, "m0"), ("idle", 2, 9, "m2"), ("new", 0, 4, "m0")],
            "equal offsets and offsets ahead are left alone; a group not idle gets every checkpoint"
        );
    }
}
