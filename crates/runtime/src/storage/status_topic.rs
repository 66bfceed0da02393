//! The status topic (Connect's `KafkaStatusBackingStore`): `status-connector-<c>` and
//! `status-task-<c>-<n>` records `{"state","trace","worker_id","generation","version"}`, read into a
//! last-write-wins cache. UNASSIGNED and FAILED are written only when safe (Connect's
//! `putSafe`): never over a status written by another worker in a newer generation.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use serde_json::{json, Value as Json};
use tributary_api::ConnectResult;

use super::kafka_log::{KafkaBasedLog, LogRecord, LogWriter, Recovery};
use super::status::{State, Status, StatusBackingStore, StatusListener};
use super::topic_admin::ManagedTopic;
use crate::ConnectorTaskId;

/// Whether status `new` of a connector or task, read from the topic, is older than the RUNNING
/// status `current` it would replace, and so must not hide it:
/// - a late UNASSIGNED (written by a worker that stopped its instance, delivered after a
///   broker outage, or read late) of the same or an older generation, unless the RUNNING
///   worker itself stopped the instance in that generation (a clean shutdown);
/// - any status another worker wrote in an older generation: a zombie (a worker that woke
///   after its session expired, its status cache too stale for the safe-write check) reporting
///   its old instance FAILED, for instance an exactly-once task whose producer was fenced.
///
/// Connect's `KafkaStatusBackingStore` applies every record it reads, so there these records
/// show a running instance UNASSIGNED or FAILED until its owner writes again; this is a
/// Tributary fix, found by the nemesis test.
fn stale(current: Option<&Status>, new: &Status) -> bool {
    let Some(cur) = current.filter(|c| c.state == State::Running) else {
        return false;
    };
    let own_stop = cur.worker_id == new.worker_id && new.generation >= cur.generation;
    let late_unassigned =
        new.state == State::Unassigned && cur.generation >= new.generation && !own_stop;
    let zombie = cur.worker_id != new.worker_id && cur.generation > new.generation;
    late_unassigned || zombie
}

#[derive(Default)]
struct Cache {
    connectors: HashMap<String, Status>,
    tasks: HashMap<String, BTreeMap<u32, Status>>,
    /// Keys whose last record was a tombstone: safe writes (UNASSIGNED, FAILED) to them are
    /// dropped, so a stopped instance of a deleted connector or task does not come back.
    deleted: std::collections::HashSet<String>,
    /// Active topics per connector (KIP-558).
    topics: HashMap<String, std::collections::BTreeSet<String>>,
}

/// The value bytes of a status record.
pub fn status_value(s: &Status) -> Vec<u8> {
    serde_json::to_vec(&json!({ "state": s.state.as_str(), "trace": s.trace, "worker_id": s.worker_id, "generation": s.generation, "version": s.version })).unwrap()
}

/// Parses a status value; `None` for malformed values.
pub fn parse_status(bytes: &[u8]) -> Option<Status> {
    let v: Json = serde_json::from_slice(bytes).ok()?;
    Some(Status {
        state: State::parse(v.get("state")?.as_str()?)?,
        trace: v.get("trace").and_then(Json::as_str).map(str::to_string),
        worker_id: v.get("worker_id")?.as_str()?.to_string(),
        generation: v.get("generation").and_then(Json::as_i64).unwrap_or(0) as i32,
        version: v.get("version").and_then(Json::as_str).map(str::to_string),
    })
}

impl Cache {
    /// Applies one record; `at` is its (partition, offset), named by every warning about a
    /// record that is skipped. Returns the connector or task status the record carried.
    fn apply(&mut self, key: &str, value: Option<&[u8]>, at: (i32, i64)) -> Option<Status> {
        let (partition, offset) = at;
        if let Some(rest) = key.strip_prefix("status-topic-") {
            // status-topic-<topic>:connector-<connector>
            let Some((topic, connector)) = rest.split_once(":connector-") else {
                tracing::warn!(
                    key,
                    partition,
                    offset,
                    "ignoring topic status record with an invalid key"
                );
                return None;
            };
            match value {
                Some(_) => {
                    self.topics
                        .entry(connector.to_string())
                        .or_default()
                        .insert(topic.to_string());
                }
                None => {
                    if let Some(t) = self.topics.get_mut(connector) {
                        t.remove(topic);
                    }
                }
            }
            return None;
        }
        if value.is_none() {
            self.deleted.insert(key.to_string());
        } else {
            self.deleted.remove(key);
        }
        let status = match value {
            None => None,
            Some(b) => match parse_status(b) {
                Some(s) => Some(s),
                None => {
                    tracing::warn!(key, partition, offset, "ignoring malformed status record");
                    return None;
                }
            },
        };
        if let Some(c) = key.strip_prefix("status-connector-") {
            match &status {
                Some(s) => {
                    if stale(self.connectors.get(c), s) {
                        tracing::debug!(
                            key,
                            partition,
                            offset,
                            state = s.state.as_str(),
                            generation = s.generation,
                            "ignoring a connector status older than its RUNNING one"
                        );
                        return None;
                    }
                    self.connectors.insert(c.to_string(), s.clone());
                }
                None => {
                    self.connectors.remove(c);
                }
            }
            status
        } else if let Some(rest) = key.strip_prefix("status-task-") {
            let Some((c, n)) = rest
                .rsplit_once('-')
                .and_then(|(c, n)| Some((c.to_string(), n.parse::<u32>().ok()?)))
            else {
                tracing::warn!(
                    key,
                    partition,
                    offset,
                    "ignoring status record with an invalid task key"
                );
                return None;
            };
            let tasks = self.tasks.entry(c).or_default();
            match &status {
                Some(s) => {
                    if stale(tasks.get(&n), s) {
                        tracing::debug!(
                            key,
                            partition,
                            offset,
                            state = s.state.as_str(),
                            generation = s.generation,
                            "ignoring a task status older than its RUNNING one"
                        );
                        return None;
                    }
                    tasks.insert(n, s.clone());
                }
                None => {
                    tasks.remove(&n);
                }
            }
            status
        } else {
            tracing::warn!(
                key,
                partition,
                offset,
                "discarding status record with an unknown key"
            );
            None
        }
    }
}

/// The status topic.
pub struct KafkaStatusBackingStore {
    log: KafkaBasedLog,
    cache: Arc<RwLock<Cache>>,
    listener: Arc<RwLock<Option<StatusListener>>>,
}

impl KafkaStatusBackingStore {
    /// Reads the topic to its end, then keeps following it. With `managed`, a deleted topic is
    /// created again and this worker writes again the statuses it holds whose last writer was
    /// `worker_id` (each worker publishes its own connectors and tasks).
    pub fn start(
        topic: &str,
        producer: rdkafka::ClientConfig,
        consumer: rdkafka::ClientConfig,
        managed: Option<ManagedTopic>,
        worker_id: &str,
    ) -> ConnectResult<KafkaStatusBackingStore> {
        let cache = Arc::new(RwLock::new(Cache::default()));
        let cb = cache.clone();
        let listener: Arc<RwLock<Option<StatusListener>>> = Arc::new(RwLock::new(None));
        let listen = listener.clone();
        let held = cache.clone();
        let me = worker_id.to_string();
        let recovery = managed.map(|topic| Recovery {
            topic,
            on_recreated: Box::new(move |_created: bool, writer: &LogWriter| {
                let cache = held.read().unwrap();
                let mut written = 0;
                for (c, s) in &cache.connectors {
                    if s.worker_id == me {
                        writer.send(
                            format!("status-connector-{c}").as_bytes(),
                            Some(&status_value(s)),
                        );
                        written += 1;
                    }
                }
                for (c, tasks) in &cache.tasks {
                    for (n, s) in tasks {
                        if s.worker_id == me {
                            writer.send(
                                format!("status-task-{c}-{n}").as_bytes(),
                                Some(&status_value(s)),
                            );
                            written += 1;
                        }
                    }
                }
                tracing::warn!(
                    statuses = written,
                    "wrote this worker's statuses into the new status topic"
                );
            }),
        });
        let log = KafkaBasedLog::start(
            topic,
            producer,
            consumer,
            Box::new(
                move |rec: LogRecord| match rec.key.as_deref().map(std::str::from_utf8) {
                    Some(Ok(key)) => {
                        let status = cb.write().unwrap().apply(
                            key,
                            rec.value.as_deref(),
                            (rec.partition, rec.offset),
                        );
                        // Outside the cache lock: the listener may read the store.
                        if let (Some(status), Some(f)) = (status, &*listen.read().unwrap()) {
                            f(&status);
                        }
                    }
                    _ => tracing::warn!(
                        partition = rec.partition,
                        offset = rec.offset,
                        "ignoring status record without a UTF-8 key"
                    ),
                },
            ),
            recovery,
        )?;
        Ok(KafkaStatusBackingStore {
            log,
            cache,
            listener,
        })
    }

    /// Waits for queued writes.
    pub fn flush(&self) {
        self.log.flush(std::time::Duration::from_secs(10));
    }

    /// Waits at most `timeout` for queued writes.
    pub fn flush_within(&self, timeout: std::time::Duration) {
        self.log.flush(timeout);
    }

    /// Reads the topic up to its current end (every status written before this call is in
    /// the cache afterwards). Blocks; errors when that takes longer than `timeout`.
    pub fn refresh(&self, timeout: std::time::Duration) -> ConnectResult<()> {
        self.log.read_to_end(timeout)
    }

    /// Registers `f`, called (on the topic's reading thread, so it must not block) with every
    /// connector and task status read from now on, including this worker's own. Replaces an
    /// earlier listener.
    pub fn on_status(&self, f: impl Fn(&Status) + Send + Sync + 'static) {
        *self.listener.write().unwrap() = Some(Box::new(f));
    }

    /// Stops following the topic.
    pub fn stop(&self) {
        self.log.stop();
    }

    fn safe(current: Option<&Status>, new: &Status) -> bool {
        match current {
            None => true,
            Some(c) => c.worker_id == new.worker_id || c.generation <= new.generation,
        }
    }

    /// Every connector with a status.
    pub fn connectors(&self) -> Vec<String> {
        self.cache
            .read()
            .unwrap()
            .connectors
            .keys()
            .cloned()
            .collect()
    }
}

impl super::status::ClusterStatusStore for KafkaStatusBackingStore {
    fn flush(&self) {
        KafkaStatusBackingStore::flush(self)
    }
    fn flush_within(&self, timeout: std::time::Duration) {
        KafkaStatusBackingStore::flush_within(self, timeout)
    }
    fn refresh(&self, timeout: std::time::Duration) -> ConnectResult<()> {
        KafkaStatusBackingStore::refresh(self, timeout)
    }
    fn on_status(&self, f: super::status::StatusListener) {
        *self.listener.write().unwrap() = Some(f);
    }
    fn connectors(&self) -> Vec<String> {
        KafkaStatusBackingStore::connectors(self)
    }
    fn stop(&self) {
        KafkaStatusBackingStore::stop(self)
    }
}

impl StatusBackingStore for KafkaStatusBackingStore {
    fn put_connector(&self, connector: &str, mut status: Status) {
        // What the connector's config providers resolved never reaches the topic (issue #42).
        status.trace = status
            .trace
            .map(|t| crate::config::secrets::redact_for(connector, t));
        if matches!(status.state, State::Unassigned | State::Failed) {
            let cache = self.cache.read().unwrap();
            if cache
                .deleted
                .contains(&format!("status-connector-{connector}"))
                || !Self::safe(cache.connectors.get(connector), &status)
            {
                return;
            }
        }
        self.log.send(
            format!("status-connector-{connector}").as_bytes(),
            Some(&status_value(&status)),
        );
    }
    fn put_task(&self, id: &ConnectorTaskId, mut status: Status) {
        status.trace = status
            .trace
            .map(|t| crate::config::secrets::redact_for(&id.connector, t));
        if matches!(status.state, State::Unassigned | State::Failed) {
            let cache = self.cache.read().unwrap();
            if cache
                .deleted
                .contains(&format!("status-task-{}-{}", id.connector, id.task))
                || !Self::safe(
                    cache.tasks.get(&id.connector).and_then(|t| t.get(&id.task)),
                    &status,
                )
            {
                return;
            }
        }
        self.log.send(
            format!("status-task-{}-{}", id.connector, id.task).as_bytes(),
            Some(&status_value(&status)),
        );
    }
    fn connector(&self, connector: &str) -> Option<Status> {
        self.cache
            .read()
            .unwrap()
            .connectors
            .get(connector)
            .cloned()
    }
    fn task(&self, id: &ConnectorTaskId) -> Option<Status> {
        self.cache
            .read()
            .unwrap()
            .tasks
            .get(&id.connector)?
            .get(&id.task)
            .cloned()
    }
    fn tasks(&self, connector: &str) -> BTreeMap<u32, Status> {
        self.cache
            .read()
            .unwrap()
            .tasks
            .get(connector)
            .cloned()
            .unwrap_or_default()
    }
    fn delete_connector(&self, connector: &str) {
        let tasks: Vec<u32> = self.tasks(connector).keys().copied().collect();
        for t in tasks {
            self.delete_task(&ConnectorTaskId::new(connector, t));
        }
        self.log
            .send(format!("status-connector-{connector}").as_bytes(), None);
    }
    fn delete_task(&self, id: &ConnectorTaskId) {
        self.log.send(
            format!("status-task-{}-{}", id.connector, id.task).as_bytes(),
            None,
        );
    }
    fn put_topic(&self, connector: &str, topic: &str, task: u32) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let value = json!({ "topic": { "name": topic, "connector": connector, "task": task, "discoverTimestamp": now } });
        self.log.send(
            format!("status-topic-{topic}:connector-{connector}").as_bytes(),
            Some(&serde_json::to_vec(&value).unwrap()),
        );
    }
    fn topics(&self, connector: &str) -> Vec<String> {
        self.cache
            .read()
            .unwrap()
            .topics
            .get(connector)
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
    fn delete_topics(&self, connector: &str) {
        for t in self.topics(connector) {
            self.log.send(
                format!("status-topic-{t}:connector-{connector}").as_bytes(),
                None,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(state: State, worker: &str, generation: i32) -> Status {
        Status {
            state,
            trace: None,
            worker_id: worker.into(),
            generation,
            version: None,
        }
    }

    #[test]
    fn values_are_connects_json() {
        let s = Status {
            state: State::Failed,
            trace: Some("t".into()),
            worker_id: "h:1".into(),
            generation: 3,
            version: Some("4.1.1".into()),
        };
        assert_eq!(
            status_value(&s),
            br#"{"state":"FAILED","trace":"t","worker_id":"h:1","generation":3,"version":"4.1.1"}"#
                .to_vec()
        );
        assert_eq!(
            status_value(&st(State::Running, "h:1", 2)),
            br#"{"state":"RUNNING","trace":null,"worker_id":"h:1","generation":2,"version":null}"#
                .to_vec()
        );
        assert_eq!(parse_status(&status_value(&s)), Some(s));
    }

    #[test]
    fn a_stale_unassigned_does_not_hide_a_running_task() {
        let mut c = Cache::default();
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Running, "b:1", 5))),
            (0, 0),
        );
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Unassigned, "a:1", 4))),
            (0, 0),
        );
        assert_eq!(c.tasks["my-conn"][&0].state, State::Running);
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Unassigned, "b:1", 6))),
            (0, 0),
        );
        assert_eq!(c.tasks["my-conn"][&0].state, State::Unassigned);
        c.apply("status-task-my-conn-0", None, (0, 0));
        assert!(c.tasks["my-conn"].is_empty());
    }

    #[test]
    fn a_worker_stopping_its_own_task_in_the_same_generation_shows_unassigned() {
        let mut c = Cache::default();
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Running, "b:1", 5))),
            (0, 0),
        );
        let applied = c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Unassigned, "b:1", 5))),
            (0, 1),
        );
        assert_eq!(applied.map(|s| s.state), Some(State::Unassigned));
        assert_eq!(c.tasks["my-conn"][&0].state, State::Unassigned);
        // Another worker's UNASSIGNED of the same generation still does not hide it.
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Running, "b:1", 6))),
            (0, 2),
        );
        let ignored = c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Unassigned, "a:1", 6))),
            (0, 3),
        );
        assert!(ignored.is_none());
        assert_eq!(c.tasks["my-conn"][&0].state, State::Running);
    }

    #[test]
    fn a_zombies_failure_of_an_older_generation_never_hides_the_new_owners_running_task() {
        let mut c = Cache::default();
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Running, "b:1", 19))),
            (0, 0),
        );
        let ignored = c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Failed, "a:1", 18))),
            (0, 1),
        );
        assert!(ignored.is_none());
        assert_eq!(c.tasks["my-conn"][&0].state, State::Running);
        // The owner's own failure stands, and so does another worker's in a newer generation.
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Failed, "b:1", 19))),
            (0, 2),
        );
        assert_eq!(c.tasks["my-conn"][&0].state, State::Failed);
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Running, "b:1", 19))),
            (0, 3),
        );
        c.apply(
            "status-task-my-conn-0",
            Some(&status_value(&st(State::Failed, "a:1", 20))),
            (0, 4),
        );
        assert_eq!(c.tasks["my-conn"][&0].state, State::Failed);
    }

    #[test]
    fn a_late_unassigned_of_the_previous_owner_never_hides_a_running_connector() {
        let mut c = Cache::default();
        c.apply(
            "status-connector-my-conn",
            Some(&status_value(&st(State::Running, "b:1", 19))),
            (0, 0),
        );
        // Written before the RUNNING (its producer held it through a broker outage), appended
        // after it.
        let ignored = c.apply(
            "status-connector-my-conn",
            Some(&status_value(&st(State::Unassigned, "a:1", 18))),
            (0, 1),
        );
        assert!(ignored.is_none());
        assert_eq!(c.connectors["my-conn"].state, State::Running);
        // The owner stopping it stands.
        c.apply(
            "status-connector-my-conn",
            Some(&status_value(&st(State::Unassigned, "b:1", 19))),
            (0, 2),
        );
        assert_eq!(c.connectors["my-conn"].state, State::Unassigned);
    }

    #[test]
    fn safe_writes_respect_newer_generations_of_other_workers() {
        let newer = st(State::Running, "b:1", 5);
        assert!(!KafkaStatusBackingStore::safe(
            Some(&newer),
            &st(State::Unassigned, "a:1", 4)
        ));
        assert!(KafkaStatusBackingStore::safe(
            Some(&newer),
            &st(State::Unassigned, "b:1", 4)
        ));
        assert!(KafkaStatusBackingStore::safe(
            Some(&newer),
            &st(State::Failed, "a:1", 5)
        ));
        assert!(KafkaStatusBackingStore::safe(
            None,
            &st(State::Failed, "a:1", 0)
        ));
    }
}
