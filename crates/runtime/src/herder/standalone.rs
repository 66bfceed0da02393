//! `connect-standalone`'s herder (Connect's `StandaloneHerder`): one worker, connector configs
//! in memory (from the command line's files and the REST API), offsets in a file, statuses in
//! memory.
//!
//! Locking: the map of connectors is locked only to read or write it, never across a plugin
//! call or a wait. Changes to one connector are serialized by that connector's own lock (held
//! across its plugin calls and bounded stops), so a connector that blocks in `start`,
//! `taskConfigs` or `stop` holds up only the requests about itself. Connector starts are
//! asynchronous: a started connector asks for its task configs through the reconfiguration
//! thread.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex};

use tributary_api::connector::ConnectorType;
use tributary_api::Props;

use super::info::{ConnectorInfo, ConnectorStateInfo, TaskInfo, TaskRef, TaskState};
use super::restart::build_restart_plan;
use super::validation::validate_for_put;
use super::{Created, Herder, HerderError, HerderResult};
use crate::config::unsupported::WorkerSupport;
use crate::config_records::RestartRequest;
use crate::plugins::Plugins;
use crate::storage::status::State;
use crate::worker::{TargetState, TaskCountersSnapshot, Worker};
use crate::ConnectorTaskId;

struct Connector {
    config: Props,
    target: TargetState,
    task_configs: Vec<Props>,
    /// Serializes the changes to this connector (see the module's notes on locking).
    serial: Arc<Mutex<()>>,
}

impl Connector {
    fn new(config: Props, target: TargetState, serial: Arc<Mutex<()>>) -> Connector {
        Connector {
            config,
            target,
            task_configs: Vec::new(),
            serial,
        }
    }
}

/// The standalone herder.
pub struct StandaloneHerder {
    worker: Arc<Worker>,
    cluster_id: Option<String>,
    connectors: Mutex<BTreeMap<String, Connector>>,
}

impl StandaloneHerder {
    /// A herder over `worker`. Connector reconfiguration requests arrive on `reconfigure_rx`
    /// (the worker's `on_reconfigure` sends there) and are handled on a thread of their own.
    pub fn new(
        worker: Arc<Worker>,
        cluster_id: Option<String>,
        reconfigure_rx: mpsc::Receiver<String>,
    ) -> Arc<StandaloneHerder> {
        let herder = Arc::new(StandaloneHerder {
            worker,
            cluster_id,
            connectors: Mutex::new(BTreeMap::new()),
        });
        let weak = Arc::downgrade(&herder);
        std::thread::Builder::new()
            .name("herder-reconfigure".into())
            .spawn(move || {
                while let Ok(name) = reconfigure_rx.recv() {
                    let Some(h) = weak.upgrade() else { break };
                    if let Some(serial) = h.serial(&name) {
                        let _one_change_at_a_time =
                            serial.lock().unwrap_or_else(|e| e.into_inner());
                        h.update_tasks(&name);
                    }
                }
            })
            .expect("spawning the reconfiguration thread");
        herder
    }

    /// The worker.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    fn connector_type(&self, config: &Props) -> String {
        config
            .get("connector.class")
            .and_then(|c| self.worker.plugins.connector_type(c))
            .map(|t| t.as_str().to_string())
            .unwrap_or_else(|| "unknown".into())
    }

    fn info(&self, name: &str, c: &Connector) -> ConnectorInfo {
        ConnectorInfo {
            name: name.to_string(),
            config: c
                .config
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            tasks: (0..c.task_configs.len() as u32)
                .map(|t| TaskRef {
                    connector: name.to_string(),
                    task: t,
                })
                .collect(),
            connector_type: self.connector_type(&c.config),
        }
    }

    /// The lock serializing changes to connector `name`, if it exists.
    fn serial(&self, name: &str) -> Option<Arc<Mutex<()>>> {
        self.connectors
            .lock()
            .unwrap()
            .get(name)
            .map(|c| c.serial.clone())
    }

    /// Whether `serial` is still the lock of connector `name` (it was not deleted or replaced
    /// while the caller waited for it).
    fn still_current(&self, name: &str, serial: &Arc<Mutex<()>>) -> bool {
        self.connectors
            .lock()
            .unwrap()
            .get(name)
            .is_some_and(|c| Arc::ptr_eq(&c.serial, serial))
    }

    /// Runs `f` holding connector `name`'s serial lock; `missing` when it does not exist (or
    /// was deleted meanwhile).
    fn with_connector<T>(
        &self,
        name: &str,
        missing: impl Fn() -> HerderError,
        f: impl FnOnce() -> HerderResult<T>,
    ) -> HerderResult<T> {
        let serial = self.serial(name).ok_or_else(&missing)?;
        let _one_change_at_a_time = serial.lock().unwrap_or_else(|e| e.into_inner());
        if !self.still_current(name, &serial) {
            return Err(missing());
        }
        f()
    }

    /// Recomputes task configs from the running connector; when they changed, stops the old
    /// tasks and starts new ones (`StandaloneHerder.updateConnectorTasks`). The caller holds the
    /// connector's serial lock; the map is not locked across the plugin call.
    fn update_tasks(&self, name: &str) {
        let (target, old) = {
            let connectors = self.connectors.lock().unwrap();
            let Some(c) = connectors.get(name) else {
                return;
            };
            (c.target, c.task_configs.clone())
        };
        if target != TargetState::Started || !self.worker.is_connector_running(name) {
            return;
        }
        let new_configs = match self.worker.connector_task_configs(name) {
            Ok(cfgs) => cfgs,
            Err(e) => {
                tracing::error!(connector = name, error = %e, "failed to compute task configs");
                return;
            }
        };
        if new_configs == old {
            return;
        }
        self.worker
            .stop_and_await_tasks(&Self::ids(name, old.len()));
        for t in new_configs.len()..old.len() {
            self.worker
                .statuses()
                .delete_task(&ConnectorTaskId::new(name, t as u32));
        }
        let config = {
            let mut connectors = self.connectors.lock().unwrap();
            let Some(c) = connectors.get_mut(name) else {
                return;
            };
            c.task_configs = new_configs.clone();
            c.config.clone()
        };
        self.start_tasks(name, &config, &new_configs, target);
    }

    fn ids(name: &str, n: usize) -> Vec<ConnectorTaskId> {
        (0..n as u32)
            .map(|t| ConnectorTaskId::new(name, t))
            .collect()
    }

    fn start_tasks(&self, name: &str, config: &Props, task_configs: &[Props], target: TargetState) {
        for (i, tc) in task_configs.iter().enumerate() {
            let id = ConnectorTaskId::new(name, i as u32);
            if let Err(e) =
                self.worker
                    .start_task(&id, config, tc.clone(), target, task_configs.len())
            {
                tracing::error!(task = %id, error = %e, "task failed to start");
            }
        }
    }

    /// Starts the connector instance (asynchronously: its tasks follow through
    /// [`Self::update_tasks`] once it runs).
    fn start_connector(
        &self,
        name: &str,
        config: Props,
        target: TargetState,
    ) -> HerderResult<crate::worker::ConnectorStart> {
        self.worker
            .start_connector(name, config, target)
            .map_err(|e| HerderError::Internal(format!("Failed to start connector: {name}: {e}")))
    }

    fn stop_everything_of(&self, name: &str, tasks: usize) {
        self.worker.stop_and_await_tasks(&Self::ids(name, tasks));
        self.worker.stop_connector(name);
    }

    fn not_found(name: &str) -> HerderError {
        HerderError::NotFound(format!("Connector {name} not found"))
    }

    fn unknown(name: &str) -> HerderError {
        HerderError::NotFound(format!("Unknown connector {name}"))
    }

    /// Stops every connector and task (clean shutdown; source tasks commit their offsets).
    pub fn stop(&self) {
        self.worker.stop_all();
    }
}

impl Herder for StandaloneHerder {
    fn worker_id(&self) -> String {
        self.worker.worker_id.clone()
    }

    fn kafka_cluster_id(&self) -> Option<String> {
        self.cluster_id.clone()
    }

    fn plugins(&self) -> &Plugins {
        &self.worker.plugins
    }

    fn connectors(&self) -> HerderResult<Vec<String>> {
        Ok(self.connectors.lock().unwrap().keys().cloned().collect())
    }

    fn connector_info(&self, name: &str) -> HerderResult<ConnectorInfo> {
        let connectors = self.connectors.lock().unwrap();
        let c = connectors.get(name).ok_or_else(|| Self::not_found(name))?;
        Ok(self.info(name, c))
    }

    fn connector_config(&self, name: &str) -> HerderResult<Props> {
        let connectors = self.connectors.lock().unwrap();
        Ok(connectors
            .get(name)
            .ok_or_else(|| Self::not_found(name))?
            .config
            .clone())
    }

    fn put_connector_config(
        &self,
        name: &str,
        config: Props,
        allow_replace: bool,
        initial_state: Option<TargetState>,
    ) -> HerderResult<Created<ConnectorInfo>> {
        validate_for_put(
            &self.worker.plugins,
            &WorkerSupport::of(&self.worker.config),
            self.worker.config.providers(),
            &config,
        )?;
        // Automatic restarts need the config topic's KIP-745 restart path: distributed only.
        if let Ok(Some(_)) = crate::config::auto_restart::policy(&config) {
            return Err(HerderError::BadRequest(format!(
                "{} is only supported by distributed workers (automatic restarts go through the config topic)",
                crate::config::auto_restart::ENABLE
            )));
        }
        loop {
            // A new connector: its serial lock is taken before it appears in the map.
            let fresh = Arc::new(Mutex::new(()));
            let fresh_guard = fresh.lock().unwrap_or_else(|e| e.into_inner());
            let existing = {
                let mut connectors = self.connectors.lock().unwrap();
                match connectors.get(name) {
                    Some(_) if !allow_replace => {
                        return Err(HerderError::Conflict(format!(
                            "Connector {name} already exists"
                        )));
                    }
                    Some(c) => Some(c.serial.clone()),
                    None => {
                        let target = initial_state.unwrap_or(TargetState::Started);
                        connectors.insert(
                            name.to_string(),
                            Connector::new(config.clone(), target, fresh.clone()),
                        );
                        None
                    }
                }
            };
            let Some(serial) = existing else {
                let target = initial_state.unwrap_or(TargetState::Started);
                // A failed start is logged and reported in the connector's status, as in Connect
                // (Worker::start_connector); the start itself is not waited for.
                let _status_tells = self.start_connector(name, config.clone(), target);
                // Read before the serial lock goes: a DELETE waiting for it would otherwise
                // remove the connector first, and this create would answer 404.
                let info = self.connector_info(name)?;
                drop(fresh_guard);
                return Ok(Created {
                    created: true,
                    result: info,
                });
            };
            drop(fresh_guard);
            let _one_change_at_a_time = serial.lock().unwrap_or_else(|e| e.into_inner());
            if !self.still_current(name, &serial) {
                continue; // deleted meanwhile: create it afresh
            }
            let (old_tasks, target) = {
                let mut connectors = self.connectors.lock().unwrap();
                let c = connectors
                    .get_mut(name)
                    .expect("checked under the serial lock");
                let old = c.task_configs.len();
                c.config = config.clone();
                c.task_configs.clear();
                (old, c.target)
            };
            self.stop_everything_of(name, old_tasks);
            // As above: a failed start is logged and reported in the connector's status.
            let _status_tells = self.start_connector(name, config.clone(), target);
            let info = self.connector_info(name)?;
            return Ok(Created {
                created: false,
                result: info,
            });
        }
    }

    fn delete_connector(&self, name: &str) -> HerderResult<()> {
        self.with_connector(
            name,
            || Self::not_found(name),
            || {
                let tasks = self
                    .connectors
                    .lock()
                    .unwrap()
                    .get(name)
                    .map(|c| c.task_configs.len())
                    .ok_or_else(|| Self::not_found(name))?;
                self.stop_everything_of(name, tasks);
                self.worker.statuses().delete_connector(name);
                self.worker.statuses().delete_topics(name);
                // Removed last: a create of the same name waits until the old one is gone, so
                // its statuses are never deleted by this one.
                self.connectors.lock().unwrap().remove(name);
                Ok(())
            },
        )
    }

    fn connector_status(&self, name: &str) -> HerderResult<ConnectorStateInfo> {
        let ctype = {
            let connectors = self.connectors.lock().unwrap();
            connectors
                .get(name)
                .map(|c| self.connector_type(&c.config))
                .unwrap_or_else(|| "unknown".into())
        };
        let mut info = super::connector_state_info(self.worker.statuses().as_ref(), name, ctype)?;
        super::add_progress(&self.worker, &mut info);
        Ok(info)
    }

    fn task_status(&self, id: &ConnectorTaskId) -> HerderResult<TaskState> {
        let mut state = super::task_state(self.worker.statuses().as_ref(), id)?;
        state.progress = self.worker.task_stall(id);
        state.throttle = self.worker.task_throttle(id);
        Ok(state)
    }

    fn task_configs(&self, name: &str) -> HerderResult<Vec<TaskInfo>> {
        let connectors = self.connectors.lock().unwrap();
        let c = connectors.get(name).ok_or_else(|| Self::not_found(name))?;
        Ok(c.task_configs
            .iter()
            .enumerate()
            .map(|(i, tc)| TaskInfo {
                id: TaskRef {
                    connector: name.to_string(),
                    task: i as u32,
                },
                config: tc.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            })
            .collect())
    }

    fn pause_connector(&self, name: &str) -> HerderResult<()> {
        self.with_connector(
            name,
            || Self::unknown(name),
            || {
                if let Some(c) = self.connectors.lock().unwrap().get_mut(name) {
                    // Pausing a stopped connector only changes its target; it has no tasks.
                    c.target = TargetState::Paused;
                }
                self.worker
                    .set_connector_target_state(name, TargetState::Paused)
                    .map_err(HerderError::from)
            },
        )
    }

    fn resume_connector(&self, name: &str) -> HerderResult<()> {
        self.with_connector(
            name,
            || Self::unknown(name),
            || {
                if let Some(c) = self.connectors.lock().unwrap().get_mut(name) {
                    c.target = TargetState::Started;
                }
                // The restarted instance asks for its task configs (tasks of a stopped connector
                // are created again then).
                self.worker
                    .set_connector_target_state(name, TargetState::Started)
                    .map_err(HerderError::from)
            },
        )
    }

    fn stop_connector(&self, name: &str) -> HerderResult<()> {
        self.with_connector(
            name,
            || Self::unknown(name),
            || {
                let tasks = {
                    let mut connectors = self.connectors.lock().unwrap();
                    let c = connectors
                        .get_mut(name)
                        .ok_or_else(|| Self::unknown(name))?;
                    c.target = TargetState::Stopped;
                    std::mem::take(&mut c.task_configs).len()
                };
                let ids = Self::ids(name, tasks);
                self.worker.stop_and_await_tasks(&ids);
                for id in &ids {
                    self.worker.statuses().delete_task(id);
                }
                self.worker
                    .set_connector_target_state(name, TargetState::Stopped)
                    .map_err(HerderError::from)
            },
        )
    }

    fn connector_offsets(
        &self,
        name: &str,
    ) -> HerderResult<crate::worker::connector_offsets::ConnectorOffsets> {
        let config = self
            .connectors
            .lock()
            .unwrap()
            .get(name)
            .map(|c| c.config.clone())
            .ok_or_else(|| Self::not_found(name))?;
        crate::worker::connector_offsets::connector_offsets_of(&self.worker, name, &config)
    }

    fn modify_connector_offsets(
        &self,
        name: &str,
        offsets: Option<Vec<crate::worker::connector_offsets::ConnectorOffset>>,
    ) -> HerderResult<crate::worker::connector_offsets::Message> {
        // Under the connector's serial lock: no resume can start its tasks meanwhile.
        self.with_connector(
            name,
            || Self::not_found(name),
            || {
                let (config, target, tasks) = {
                    let connectors = self.connectors.lock().unwrap();
                    let c = connectors.get(name).ok_or_else(|| Self::not_found(name))?;
                    (c.config.clone(), c.target, c.task_configs.len())
                };
                crate::worker::connector_offsets::require_stopped(
                    name,
                    target == TargetState::Stopped,
                    tasks,
                )?;
                crate::worker::connector_offsets::modify_connector_offsets(
                    &self.worker,
                    name,
                    &config,
                    offsets.as_deref(),
                )
            },
        )
    }

    fn restart_connector(&self, name: &str) -> HerderResult<()> {
        let unknown = || HerderError::NotFound(format!("Unknown connector: {name}"));
        self.with_connector(name, unknown, || {
            let (config, target) = {
                let connectors = self.connectors.lock().unwrap();
                let c = connectors.get(name).ok_or_else(unknown)?;
                (c.config.clone(), c.target)
            };
            self.worker.stop_connector(name);
            // Connect answers once the connector started (or failed to).
            self.start_connector(name, config, target)?
                .wait()
                .map_err(|e| {
                    HerderError::Internal(format!("Failed to start connector: {name}: {e}"))
                })
        })
    }

    fn restart_task(&self, id: &ConnectorTaskId) -> HerderResult<()> {
        let name = &id.connector;
        let unknown = || HerderError::NotFound(format!("Unknown connector: {name}"));
        self.with_connector(name, unknown, || {
            let (config, tc, target, count) = {
                let connectors = self.connectors.lock().unwrap();
                let c = connectors.get(name).ok_or_else(unknown)?;
                let tc = c
                    .task_configs
                    .get(id.task as usize)
                    .cloned()
                    .ok_or_else(|| HerderError::NotFound(format!("Unknown task: {id}")))?;
                (c.config.clone(), tc, c.target, c.task_configs.len())
            };
            self.worker.stop_and_await_tasks(std::slice::from_ref(id));
            self.worker
                .start_task(id, &config, tc, target, count)
                .map_err(|_| HerderError::Internal(format!("Failed to start task: {id}")))
        })
    }

    fn restart_connector_and_tasks(
        &self,
        request: RestartRequest,
    ) -> HerderResult<ConnectorStateInfo> {
        let name = request.connector.clone();
        let unknown = || HerderError::NotFound(format!("Unknown connector: {name}"));
        self.with_connector(&name, unknown, || {
            let (config, target, task_configs) = {
                let connectors = self.connectors.lock().unwrap();
                let c = connectors.get(&name).ok_or_else(unknown)?;
                (c.config.clone(), c.target, c.task_configs.clone())
            };
            let statuses = self.worker.statuses().clone();
            let ctype = self.connector_type(&config);
            let plan = build_restart_plan(
                &request,
                statuses.connector(&name).as_ref(),
                &statuses.tasks(&name),
                &ctype,
            )
            .ok_or_else(|| {
                HerderError::NotFound(format!("Status for connector {name} not found"))
            })?;
            let task_ids: Vec<ConnectorTaskId> = plan
                .task_ids
                .iter()
                .map(|t| ConnectorTaskId::new(&name, *t))
                .collect();
            let write = |state: State, ids: &[ConnectorTaskId], conn: bool| {
                let status = |s| crate::storage::status::Status {
                    state: s,
                    trace: None,
                    worker_id: self.worker.worker_id.clone(),
                    generation: 0,
                    version: self.worker.connector_version(&name),
                };
                if conn {
                    statuses.put_connector(&name, status(state));
                }
                for id in ids {
                    statuses.put_task(id, status(state));
                }
            };
            if plan.restart_connector {
                self.worker.stop_connector(&name);
                write(State::Restarting, &[], true);
            }
            self.worker.stop_and_await_tasks(&task_ids);
            write(State::Restarting, &task_ids, false);
            if plan.restart_connector {
                // Asynchronous; the restarted instance asks for its task configs once it runs. A
                // failed start is logged and reported in the connector's status.
                let _status_tells = self.start_connector(&name, config.clone(), target);
            }
            for id in &task_ids {
                if let Some(tc) = task_configs.get(id.task as usize) {
                    if let Err(e) =
                        self.worker
                            .start_task(id, &config, tc.clone(), target, task_configs.len())
                    {
                        tracing::error!(task = %id, error = %e, "task failed to start");
                    }
                }
            }
            Ok(plan.state_info)
        })
    }

    fn connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)> {
        self.worker.all_connector_counters()
    }

    /// Takes the herder's lock, as every change of connectors does: a change stuck in a
    /// plugin call holds the probe up (Connect's standalone `HealthCheckThread` synchronizes on
    /// the herder the same way).
    fn health_check(&self) -> HerderResult<()> {
        drop(self.connectors.lock().unwrap());
        Ok(())
    }

    fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    fn status_store(&self) -> Arc<dyn crate::storage::status::StatusBackingStore> {
        self.worker.statuses().clone()
    }

    fn worker_config(&self) -> &crate::config::worker::WorkerConfig {
        &self.worker.config
    }

    fn task_counters(&self) -> Vec<(ConnectorTaskId, TaskCountersSnapshot)> {
        self.worker.all_task_counters()
    }
}

/// The connector type of a config, if its class resolves (for callers outside the herder).
pub fn connector_type_of(plugins: &Plugins, config: &Props) -> Option<ConnectorType> {
    plugins.connector_type(config.get("connector.class")?)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::Duration;

    use super::*;
    use crate::config::worker::{WorkerConfig, WorkerMode};
    use crate::rest::connectors::health_within;
    use crate::rest::RestState;
    use crate::storage::offset_file::FileOffsetBackingStore;
    use crate::storage::status::MemoryStatusBackingStore;

    fn herder(dir: &std::path::Path) -> Arc<StandaloneHerder> {
        let offsets_file = dir.join("offsets");
        let raw: HashMap<String, String> = [
            ("bootstrap.servers", "127.0.0.1:1"),
            ("key.converter", "StringConverter"),
            ("value.converter", "StringConverter"),
            (
                "offset.storage.file.filename",
                offsets_file.to_str().unwrap(),
            ),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let config = WorkerConfig::parse(WorkerMode::Standalone, raw, "test").unwrap();
        let worker = Arc::new(Worker::new(
            "127.0.0.1:0".into(),
            config,
            Arc::new(Plugins::new(tributary_plugins::builtin())),
            Arc::new(FileOffsetBackingStore::open(&offsets_file).unwrap()),
            Arc::new(MemoryStatusBackingStore::default()),
            Arc::new(|_| {}),
        ));
        let (_tx, rx) = mpsc::channel();
        StandaloneHerder::new(worker, None, rx)
    }

    async fn body(r: axum::response::Response) -> (u16, serde_json::Value) {
        let status = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// KIP-1017: healthy while the herder answers; Connect's 500 `unhealthy` body while a
    /// change holds the herder past the timeout; healthy again once it lets go.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn health_is_unhealthy_while_the_herder_is_stuck() {
        let dir = tempfile::tempdir().unwrap();
        let h = herder(dir.path());
        let state = RestState::new(h.clone() as Arc<dyn Herder>, "http://127.0.0.1:0".into());
        let healthy = serde_json::json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."});
        assert_eq!(
            body(health_within(&state, Duration::from_secs(10)).await).await,
            (200, healthy.clone())
        );
        // Another thread holds the herder, as a change stuck in a plugin call would.
        let (locked_tx, locked_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let stuck = h.clone();
        let holder = std::thread::spawn(move || {
            let _held = stuck.connectors.lock().unwrap();
            locked_tx.send(()).unwrap();
            release_rx.recv().ok();
        });
        locked_rx.recv().unwrap();
        let (code, b) = body(health_within(&state, Duration::from_millis(300)).await).await;
        assert_eq!(code, 500);
        assert_eq!(
            b,
            serde_json::json!({"status": "unhealthy", "message": "Worker was unable to handle this request and may be unable to handle other requests."})
        );
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        assert_eq!(
            body(health_within(&state, Duration::from_secs(10)).await).await,
            (200, healthy)
        );
    }
}
