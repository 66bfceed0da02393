//! Connector and task statuses (Connect's `ConnectorStatus`, `TaskStatus`,
//! `StatusBackingStore`). Standalone workers keep them in memory
//! ([`MemoryStatusBackingStore`]); distributed workers in the status topic.

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

use crate::ConnectorTaskId;

/// A runtime state (`AbstractStatus.State`), shown uppercase over REST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Unassigned,
    Running,
    Paused,
    Failed,
    Restarting,
    Stopped,
    Destroyed,
}

impl State {
    /// The uppercase REST / status-topic spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unassigned => "UNASSIGNED",
            State::Running => "RUNNING",
            State::Paused => "PAUSED",
            State::Failed => "FAILED",
            State::Restarting => "RESTARTING",
            State::Stopped => "STOPPED",
            State::Destroyed => "DESTROYED",
        }
    }

    /// Parses the uppercase spelling.
    pub fn parse(s: &str) -> Option<State> {
        Some(match s {
            "UNASSIGNED" => State::Unassigned,
            "RUNNING" => State::Running,
            "PAUSED" => State::Paused,
            "FAILED" => State::Failed,
            "RESTARTING" => State::Restarting,
            "STOPPED" => State::Stopped,
            "DESTROYED" => State::Destroyed,
            _ => return None,
        })
    }
}

/// One status: state, optional trace (for FAILED), the owning worker's id (`host:port`),
/// the group generation it was written in (newest generation wins) and the version of the
/// connector or task plugin that wrote it (KIP-891; `None` when unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub state: State,
    pub trace: Option<String>,
    pub worker_id: String,
    pub generation: i32,
    pub version: Option<String>,
}

/// Where statuses are kept (`StatusBackingStore`).
pub trait StatusBackingStore: Send + Sync {
    /// Records a connector's status.
    fn put_connector(&self, connector: &str, status: Status);
    /// Records a task's status.
    fn put_task(&self, id: &ConnectorTaskId, status: Status);
    /// A connector's status.
    fn connector(&self, connector: &str) -> Option<Status>;
    /// A task's status.
    fn task(&self, id: &ConnectorTaskId) -> Option<Status>;
    /// The statuses of a connector's tasks, by task number.
    fn tasks(&self, connector: &str) -> BTreeMap<u32, Status>;
    /// Forgets a connector and its tasks (deletion).
    fn delete_connector(&self, connector: &str);
    /// Forgets one task's status.
    fn delete_task(&self, id: &ConnectorTaskId);
    /// Records that a connector's task used a topic (KIP-558 active topics).
    fn put_topic(&self, connector: &str, topic: &str, task: u32);
    /// The topics a connector has used, sorted.
    fn topics(&self, connector: &str) -> Vec<String>;
    /// Forgets a connector's topics (`PUT /connectors/{c}/topics/reset`).
    fn delete_topics(&self, connector: &str);
}

/// What a distributed herder needs of a status store beyond [`StatusBackingStore`]: the
/// status topic shared by the cluster (Connect's `KafkaStatusBackingStore` calls of the same
/// names). Implemented by the status topic store and, for tests of the herder without Kafka, by
/// [`MemoryStatusBackingStore`], where every write is read at once.
pub trait ClusterStatusStore: StatusBackingStore {
    /// Waits for queued writes (up to Connect's 10 s).
    fn flush(&self);
    /// Waits at most `timeout` for queued writes.
    fn flush_within(&self, timeout: std::time::Duration);
    /// Reads every status written before this call; errors after `timeout`.
    fn refresh(&self, timeout: std::time::Duration) -> tributary_api::ConnectResult<()>;
    /// Registers the listener called with every status read from now on (this worker's own
    /// too); it must not block. Replaces an earlier one.
    fn on_status(&self, f: StatusListener);
    /// Every connector with a status.
    fn connectors(&self) -> Vec<String>;
    /// Stops following the topic.
    fn stop(&self);
}

/// A listener of [`ClusterStatusStore::on_status`].
pub type StatusListener = Box<dyn Fn(&Status) + Send + Sync>;

/// Statuses in memory (`MemoryStatusBackingStore`).
#[derive(Default)]
pub struct MemoryStatusBackingStore {
    listener: RwLock<Option<StatusListener>>,
    connectors: RwLock<HashMap<String, Status>>,
    tasks: RwLock<HashMap<String, BTreeMap<u32, Status>>>,
    topics: RwLock<HashMap<String, std::collections::BTreeSet<String>>>,
}

impl MemoryStatusBackingStore {
    /// Hands `status` to the listener of [`ClusterStatusStore::on_status`], if any.
    fn notify(&self, status: &Status) {
        if let Some(f) = self.listener.read().unwrap().as_ref() {
            f(status);
        }
    }
}

/// Every write is read at once: nothing to flush or to catch up with.
impl ClusterStatusStore for MemoryStatusBackingStore {
    fn flush(&self) {}
    fn flush_within(&self, _timeout: std::time::Duration) {}
    fn refresh(&self, _timeout: std::time::Duration) -> tributary_api::ConnectResult<()> {
        Ok(())
    }
    fn on_status(&self, f: StatusListener) {
        *self.listener.write().unwrap() = Some(f);
    }
    fn connectors(&self) -> Vec<String> {
        self.connectors.read().unwrap().keys().cloned().collect()
    }
    fn stop(&self) {}
}

impl StatusBackingStore for MemoryStatusBackingStore {
    fn put_connector(&self, connector: &str, mut status: Status) {
        status.trace = status
            .trace
            .map(|t| crate::config::secrets::redact_for(connector, t));
        self.notify(&status);
        self.connectors
            .write()
            .unwrap()
            .insert(connector.to_string(), status);
    }
    fn put_task(&self, id: &ConnectorTaskId, mut status: Status) {
        status.trace = status
            .trace
            .map(|t| crate::config::secrets::redact_for(&id.connector, t));
        self.notify(&status);
        self.tasks
            .write()
            .unwrap()
            .entry(id.connector.clone())
            .or_default()
            .insert(id.task, status);
    }
    fn connector(&self, connector: &str) -> Option<Status> {
        self.connectors.read().unwrap().get(connector).cloned()
    }
    fn task(&self, id: &ConnectorTaskId) -> Option<Status> {
        self.tasks
            .read()
            .unwrap()
            .get(&id.connector)?
            .get(&id.task)
            .cloned()
    }
    fn tasks(&self, connector: &str) -> BTreeMap<u32, Status> {
        self.tasks
            .read()
            .unwrap()
            .get(connector)
            .cloned()
            .unwrap_or_default()
    }
    fn delete_connector(&self, connector: &str) {
        self.connectors.write().unwrap().remove(connector);
        self.tasks.write().unwrap().remove(connector);
    }
    fn delete_task(&self, id: &ConnectorTaskId) {
        if let Some(t) = self.tasks.write().unwrap().get_mut(&id.connector) {
            t.remove(&id.task);
        }
    }
    fn put_topic(&self, connector: &str, topic: &str, _task: u32) {
        self.topics
            .write()
            .unwrap()
            .entry(connector.to_string())
            .or_default()
            .insert(topic.to_string());
    }
    fn topics(&self, connector: &str) -> Vec<String> {
        self.topics
            .read()
            .unwrap()
            .get(connector)
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
    fn delete_topics(&self, connector: &str) {
        self.topics.write().unwrap().remove(connector);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn the_memory_store_hands_every_write_to_its_listener_and_lists_its_connectors() {
        let store = MemoryStatusBackingStore::default();
        let seen: Arc<Mutex<Vec<(State, String)>>> = Arc::default();
        let sink = seen.clone();
        ClusterStatusStore::on_status(
            &store,
            Box::new(move |s: &Status| {
                sink.lock().unwrap().push((s.state, s.worker_id.clone()));
            }),
        );
        let status = |state, worker: &str| Status {
            state,
            trace: None,
            worker_id: worker.into(),
            generation: 1,
            version: None,
        };
        store.put_connector("c", status(State::Running, "a:1"));
        store.put_task(
            &ConnectorTaskId::new("c", 0),
            status(State::Unassigned, "b:1"),
        );
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                (State::Running, "a:1".to_string()),
                (State::Unassigned, "b:1".to_string())
            ]
        );
        assert_eq!(
            ClusterStatusStore::connectors(&store),
            vec!["c".to_string()]
        );
        assert!(ClusterStatusStore::refresh(&store, std::time::Duration::ZERO).is_ok());
    }
}
