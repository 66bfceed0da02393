//! What the herder asks of the config topic (Connect's `ConfigBackingStore` interface), with
//! two implementations: [`KafkaConfigBackingStore`](super::config_topic::KafkaConfigBackingStore)
//! on the real topic, and [`MemoryConfigTopic`], an in-memory topic shared by any number of
//! workers' stores, for tests of the herder that need no Kafka.
//!
//! Both reduce the same records with [`ConfigLogState`], so a store of either kind reports the
//! same [`ConfigEvent`]s for the same writes. The in-memory topic also models the leader's
//! fencing of KIP-618: a store that claimed the write privileges writes in the leader's epoch,
//! and once another store claims them its privileged writes are refused, as a fenced
//! transactional producer's are.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tributary_api::{ConnectError, ConnectResult, Props};

use super::config_topic::{records, ClusterConfigState, ConfigEvent, ConfigLogState};
use crate::config_records::{RestartRequest, SessionKey, TargetState};

/// The config topic as the herder uses it (Connect's `ConfigBackingStore`): a snapshot of what
/// was read, and Connect's write sequences. Writes that say "then reads to the end" return once
/// the written records are in [`ConfigBackingStore::snapshot`]. Errors are Connect's
/// (`ConnectException` messages): a write the topic refused, a read that timed out, a fenced
/// leader.
pub trait ConfigBackingStore: Send + Sync {
    /// The current snapshot, shared (cheap however many connectors there are).
    fn snapshot(&self) -> Arc<ClusterConfigState>;
    /// Reads to the end of the topic (Connect's `refresh`); errors after `timeout`.
    fn refresh(&self, timeout: Duration) -> ConnectResult<()>;
    /// Called when this worker becomes the leader (Connect's `claimWritePrivileges`): with
    /// transactional leader writes (KIP-618), fences the previous leader's writer.
    fn claim_write_privileges(&self) -> ConnectResult<()>;
    /// Called when this worker is no longer the leader (Connect's
    /// `relinquishWritePrivileges`).
    fn relinquish_write_privileges(&self);
    /// Creates or updates a connector: its target state first (when given), then its config;
    /// then reads to the end.
    fn put_connector_config(
        &self,
        name: &str,
        config: &Props,
        target: Option<TargetState>,
    ) -> ConnectResult<()>;
    /// Deletes a connector (tombstones of its config and target state); then reads to the end.
    fn remove_connector_config(&self, name: &str) -> ConnectResult<()>;
    /// Publishes task configs: each `task-<c>-<n>`, then `commit-<c>`; then reads to the end.
    fn put_task_configs(&self, name: &str, configs: &[Props]) -> ConnectResult<()>;
    /// Publishes the task configs of several connectors at once (`(connector, configs)`):
    /// every connector's `task-<c>-<n>` records, then every `commit-<c>`, so that each commit
    /// still follows its connector's task records, as [`Self::put_task_configs`] orders them.
    /// The default writes them one connector after another. Errors: the first failed write
    /// (the connectors before it are written).
    fn put_task_configs_batch(&self, batch: &[(&str, &[Props])]) -> ConnectResult<()> {
        for (name, configs) in batch {
            self.put_task_configs(name, configs)?;
        }
        Ok(())
    }
    /// Writes a target state (acknowledged, not read back).
    fn put_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()>;
    /// Writes a KIP-745 restart request; then reads to the end.
    fn put_restart_request(&self, request: &RestartRequest) -> ConnectResult<()>;
    /// Writes a session key (KIP-507); then reads to the end.
    fn put_session_key(&self, key: &SessionKey) -> ConnectResult<()>;
    /// Writes a connector's task count record (KIP-618's `tasks-fencing-<c>`); then reads to
    /// the end.
    fn put_task_count_record(&self, name: &str, tasks: u32) -> ConnectResult<()>;
    /// Writes a cluster-wide log level (KIP-976; acknowledged, not read back).
    fn put_logger_level(&self, namespace: &str, level: &str) -> ConnectResult<()>;
    /// Stops following the topic.
    fn stop(&self);
}

/// One record of the in-memory topic: key, value (`None`: a tombstone).
type Record = records::Write;

/// The listener a store hands every event it reads (the herder loop's channel).
type Listener = Box<dyn Fn(ConfigEvent) + Send + Sync>;

/// An in-memory config topic: an append-only list of records that the [`MemoryConfigStore`]s
/// made from it read as workers read the real topic, each with its own reducer and listener.
#[derive(Default)]
pub struct MemoryConfigTopic {
    inner: Mutex<TopicInner>,
}

#[derive(Default)]
struct TopicInner {
    records: Vec<Record>,
    /// The leader epoch: bumped by every claim of the write privileges.
    leader_epoch: u64,
    readers: Vec<Arc<Reader>>,
}

/// A store's reading side: its reducer and its listener.
struct Reader {
    state: Mutex<ConfigLogState>,
    listener: Listener,
}

impl MemoryConfigTopic {
    /// An empty topic.
    pub fn new() -> Arc<MemoryConfigTopic> {
        Arc::default()
    }

    /// A worker's store on this topic: it reads every record written so far (without events,
    /// as a starting worker catches up), then hands `listener` an event for each record
    /// written from now on, by any store.
    pub fn store(
        self: &Arc<Self>,
        listener: impl Fn(ConfigEvent) + Send + Sync + 'static,
    ) -> MemoryConfigStore {
        let reader = Arc::new(Reader {
            state: Mutex::new(ConfigLogState::new()),
            listener: Box::new(listener),
        });
        let mut inner = self.inner.lock().unwrap();
        {
            let mut st = reader.state.lock().unwrap();
            for (offset, (k, v)) in inner.records.iter().enumerate() {
                st.apply(k, v.as_deref(), offset as i64);
            }
        }
        inner.readers.push(reader.clone());
        MemoryConfigStore {
            topic: self.clone(),
            reader,
            epoch: Mutex::new(None),
        }
    }

    /// Every record written so far, in order.
    pub fn records(&self) -> Vec<Record> {
        self.inner.lock().unwrap().records.clone()
    }

    /// Appends `records` and has every store read them (events outside the topic's lock, so a
    /// listener may write). `epoch`: the writer's leader epoch for a privileged write, refused
    /// with Connect's message when another store claimed the privileges since.
    fn append(&self, records: &[Record], epoch: Option<u64>) -> ConnectResult<()> {
        let (readers, first) = {
            let mut inner = self.inner.lock().unwrap();
            if let Some(e) = epoch {
                if e != inner.leader_epoch {
                    return Err(ConnectError::connect(
                        "Failed to perform fencable send to config topic: this instance has been fenced by a newer instance",
                    ));
                }
            }
            let first = inner.records.len();
            inner.records.extend(records.iter().cloned());
            (inner.readers.clone(), first)
        };
        for reader in readers {
            let events: Vec<ConfigEvent> = {
                let mut st = reader.state.lock().unwrap();
                records
                    .iter()
                    .enumerate()
                    .flat_map(|(i, (k, v))| st.apply(k, v.as_deref(), (first + i) as i64))
                    .collect()
            };
            for e in events {
                (reader.listener)(e);
            }
        }
        Ok(())
    }

    fn claim(&self) -> u64 {
        let mut inner = self.inner.lock().unwrap();
        inner.leader_epoch += 1;
        inner.leader_epoch
    }
}

/// One worker's store on a [`MemoryConfigTopic`]. Every write is read by every store of the
/// topic before it returns, so "then reads to the end" always holds.
pub struct MemoryConfigStore {
    topic: Arc<MemoryConfigTopic>,
    reader: Arc<Reader>,
    /// The leader epoch this store claimed, while it holds the write privileges.
    epoch: Mutex<Option<u64>>,
}

impl MemoryConfigStore {
    /// A leader's write: in the epoch it claimed, when it claimed one (refused once another
    /// store claimed after it); a plain write otherwise.
    fn write_privileged(&self, records: &[Record]) -> ConnectResult<()> {
        let epoch = *self.epoch.lock().unwrap();
        let result = self.topic.append(records, epoch);
        if result.is_err() {
            // As a fenced transactional producer is dropped.
            self.epoch.lock().unwrap().take();
        }
        result
    }
}

impl ConfigBackingStore for MemoryConfigStore {
    fn snapshot(&self) -> Arc<ClusterConfigState> {
        self.reader.state.lock().unwrap().state.clone()
    }

    fn refresh(&self, _timeout: Duration) -> ConnectResult<()> {
        Ok(())
    }

    fn claim_write_privileges(&self) -> ConnectResult<()> {
        let mut epoch = self.epoch.lock().unwrap();
        if epoch.is_none() {
            *epoch = Some(self.topic.claim());
        }
        Ok(())
    }

    fn relinquish_write_privileges(&self) {
        self.epoch.lock().unwrap().take();
    }

    fn put_connector_config(
        &self,
        name: &str,
        config: &Props,
        target: Option<TargetState>,
    ) -> ConnectResult<()> {
        self.write_privileged(&records::connector_config(name, config, target))
    }

    fn remove_connector_config(&self, name: &str) -> ConnectResult<()> {
        self.write_privileged(&records::connector_removal(name))
    }

    fn put_task_configs(&self, name: &str, configs: &[Props]) -> ConnectResult<()> {
        self.write_privileged(&records::task_configs(name, configs))?;
        self.write_privileged(&[records::task_commit(name, configs.len())])
    }

    fn put_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()> {
        self.topic.append(
            &[(
                format!("target-state-{name}"),
                Some(records::target_state(target)),
            )],
            None,
        )
    }

    fn put_restart_request(&self, request: &RestartRequest) -> ConnectResult<()> {
        self.topic.append(
            &[(
                format!("restart-connector-{}", request.connector),
                Some(records::restart(request)),
            )],
            None,
        )
    }

    fn put_session_key(&self, key: &SessionKey) -> ConnectResult<()> {
        self.write_privileged(&[("session-key".into(), Some(records::session_key(key)))])
    }

    fn put_task_count_record(&self, name: &str, tasks: u32) -> ConnectResult<()> {
        self.write_privileged(&[(
            format!("tasks-fencing-{name}"),
            Some(records::task_count(tasks)),
        )])
    }

    fn put_logger_level(&self, namespace: &str, level: &str) -> ConnectResult<()> {
        self.topic.append(
            &[(
                format!("logger-cluster-{namespace}"),
                Some(records::logger_level(level)),
            )],
            None,
        )
    }

    fn stop(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    /// A worker's store with the events it read.
    type Worker = (MemoryConfigStore, Arc<Mutex<Vec<ConfigEvent>>>);

    /// Two workers' stores on one topic.
    fn two_workers() -> (Arc<MemoryConfigTopic>, [Worker; 2]) {
        let topic = MemoryConfigTopic::new();
        let store = || {
            let seen: Arc<Mutex<Vec<ConfigEvent>>> = Arc::default();
            let sink = seen.clone();
            (topic.store(move |e| sink.lock().unwrap().push(e)), seen)
        };
        let stores = [store(), store()];
        (topic, stores)
    }

    #[test]
    fn every_store_reads_every_write_with_the_events_of_the_real_topic() {
        let (_, [(leader, _), (follower, seen)]) = two_workers();
        let config = props(&[("connector.class", "FileStreamSource"), ("tasks.max", "2")]);
        leader
            .put_connector_config("c", &config, Some(TargetState::Stopped))
            .unwrap();
        leader
            .put_task_configs("c", &[props(&[("task", "0")]), props(&[("task", "1")])])
            .unwrap();
        let snap = follower.snapshot();
        assert_eq!(snap.connector_configs["c"], config);
        assert_eq!(snap.target_state("c"), TargetState::Stopped);
        assert_eq!(snap.task_count("c"), 2);
        // The target state came before the connector's first config: no event of its own.
        let events = seen.lock().unwrap().clone();
        assert_eq!(
            events,
            vec![
                ConfigEvent::ConnectorConfigUpdate {
                    connector: "c".into(),
                    read_at: 2,
                },
                ConfigEvent::TaskConfigUpdate {
                    connector: "c".into(),
                    tasks: snap.tasks("c"),
                },
            ]
        );
    }

    #[test]
    fn a_store_made_later_reads_the_topic_from_the_start_without_events() {
        let (topic, [(leader, _), _]) = two_workers();
        leader
            .put_connector_config("c", &props(&[("k", "v")]), None)
            .unwrap();
        let seen: Arc<Mutex<Vec<ConfigEvent>>> = Arc::default();
        let sink = seen.clone();
        let late = topic.store(move |e| sink.lock().unwrap().push(e));
        assert!(late.snapshot().contains("c"));
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn a_fenced_leaders_privileged_write_is_refused_and_lands_nowhere() {
        let (topic, [(old, _), (new, _)]) = two_workers();
        old.claim_write_privileges().unwrap();
        old.put_connector_config("a", &props(&[("k", "1")]), None)
            .unwrap();
        // A new leader claims the privileges: the old one is fenced.
        new.claim_write_privileges().unwrap();
        let before = topic.records().len();
        let err = old
            .put_task_configs("a", &[props(&[("task", "0")])])
            .unwrap_err();
        assert!(err.to_string().contains("fenced"), "{err}");
        assert_eq!(topic.records().len(), before, "nothing written");
        assert_eq!(new.snapshot().task_count("a"), 0);
        // The new leader writes; a store that is not the leader writes unprivileged records
        // (restart requests) as before.
        new.put_task_configs("a", &[props(&[("task", "0")])])
            .unwrap();
        assert_eq!(old.snapshot().task_count("a"), 1);
        old.put_restart_request(&RestartRequest {
            connector: "a".into(),
            only_failed: false,
            include_tasks: true,
        })
        .unwrap();
    }
}
