//! `connect-standalone`'s herder (Connect's `StandaloneHerder`): one worker, connector configs
//! in memory (from the command line's files and the REST API), offsets in a file, statuses in
//! memory. Every change is applied at once under one lock.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex};

use tributary_api::connector::ConnectorType;
use tributary_api::Props;

use super::restart::{build_restart_plan, RestartRequest};
use super::validation::{validate, validate_for_put};
use super::{Created, Herder, HerderError, HerderResult};
use crate::config::unsupported::WorkerSupport;
use crate::plugins::Plugins;
use crate::rest::entities::{
    ConfigInfos, ConnectorInfo, ConnectorStateInfo, TaskInfo, TaskRef, TaskState,
};
use crate::storage::status::State;
use crate::worker::{TargetState, TaskCountersSnapshot, Worker};
use crate::ConnectorTaskId;

struct Connector {
    config: Props,
    target: TargetState,
    task_configs: Vec<Props>,
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
                    let mut connectors = h.connectors.lock().unwrap();
                    h.update_tasks(&mut connectors, &name);
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

    fn task_ids(name: &str, c: &Connector) -> Vec<ConnectorTaskId> {
        (0..c.task_configs.len() as u32)
            .map(|t| ConnectorTaskId::new(name, t))
            .collect()
    }

    /// Recomputes task configs from the running connector; when they changed, stops the old
    /// tasks and starts new ones (`StandaloneHerder.updateConnectorTasks`).
    fn update_tasks(&self, connectors: &mut BTreeMap<String, Connector>, name: &str) {
        let Some(c) = connectors.get_mut(name) else {
            return;
        };
        if c.target != TargetState::Started || !self.worker.is_connector_running(name) {
            return;
        }
        let new_configs = match self.worker.connector_task_configs(name) {
            Ok(cfgs) => cfgs,
            Err(e) => {
                tracing::error!(connector = name, error = %e, "failed to compute task configs");
                return;
            }
        };
        if new_configs == c.task_configs {
            return;
        }
        self.worker.stop_and_await_tasks(&Self::task_ids(name, c));
        let old = c.task_configs.len() as u32;
        for t in new_configs.len() as u32..old {
            self.worker
                .statuses()
                .delete_task(&ConnectorTaskId::new(name, t));
        }
        c.task_configs = new_configs;
        self.start_tasks(name, c);
    }

    fn start_tasks(&self, name: &str, c: &Connector) {
        for (i, tc) in c.task_configs.iter().enumerate() {
            let id = ConnectorTaskId::new(name, i as u32);
            if let Err(e) = self.worker.start_task(&id, &c.config, tc.clone(), c.target) {
                tracing::error!(task = %id, error = %e, "task failed to start");
            }
        }
    }

    fn start_connector(&self, connectors: &mut BTreeMap<String, Connector>, name: &str) {
        let Some(c) = connectors.get(name) else {
            return;
        };
        let _ = self
            .worker
            .start_connector(name, c.config.clone(), c.target);
        self.update_tasks(connectors, name);
    }

    fn stop_everything_of(&self, name: &str, c: &Connector) {
        self.worker.stop_and_await_tasks(&Self::task_ids(name, c));
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
        let _guard = self.connectors.lock().unwrap();
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
            &config,
        )?;
        let mut connectors = self.connectors.lock().unwrap();
        let existed = connectors.contains_key(name);
        if existed && !allow_replace {
            return Err(HerderError::Conflict(format!(
                "Connector {name} already exists"
            )));
        }
        let target = match connectors.remove(name) {
            Some(old) => {
                self.stop_everything_of(name, &old);
                old.target
            }
            None => initial_state.unwrap_or(TargetState::Started),
        };
        connectors.insert(
            name.to_string(),
            Connector {
                config,
                target,
                task_configs: Vec::new(),
            },
        );
        self.start_connector(&mut connectors, name);
        let info = self.info(name, &connectors[name]);
        Ok(Created {
            created: !existed,
            result: info,
        })
    }

    fn delete_connector(&self, name: &str) -> HerderResult<()> {
        let mut connectors = self.connectors.lock().unwrap();
        let c = connectors
            .remove(name)
            .ok_or_else(|| Self::not_found(name))?;
        self.stop_everything_of(name, &c);
        self.worker.statuses().delete_connector(name);
        self.worker.statuses().delete_topics(name);
        Ok(())
    }

    fn connector_status(&self, name: &str) -> HerderResult<ConnectorStateInfo> {
        let ctype = {
            let connectors = self.connectors.lock().unwrap();
            connectors
                .get(name)
                .map(|c| self.connector_type(&c.config))
                .unwrap_or_else(|| "unknown".into())
        };
        super::connector_state_info(self.worker.statuses().as_ref(), name, ctype)
    }

    fn task_status(&self, id: &ConnectorTaskId) -> HerderResult<TaskState> {
        super::task_state(self.worker.statuses().as_ref(), id)
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
        let mut connectors = self.connectors.lock().unwrap();
        let c = connectors
            .get_mut(name)
            .ok_or_else(|| Self::unknown(name))?;
        if c.target == TargetState::Stopped {
            // Pausing a stopped connector only changes its target; it has no tasks.
            c.target = TargetState::Paused;
            let _ = self
                .worker
                .set_connector_target_state(name, TargetState::Paused);
            return Ok(());
        }
        c.target = TargetState::Paused;
        let _ = self
            .worker
            .set_connector_target_state(name, TargetState::Paused);
        Ok(())
    }

    fn resume_connector(&self, name: &str) -> HerderResult<()> {
        let mut connectors = self.connectors.lock().unwrap();
        let c = connectors
            .get_mut(name)
            .ok_or_else(|| Self::unknown(name))?;
        let was = c.target;
        c.target = TargetState::Started;
        let _ = self
            .worker
            .set_connector_target_state(name, TargetState::Started);
        if was != TargetState::Started {
            self.update_tasks(&mut connectors, name);
        }
        Ok(())
    }

    fn stop_connector(&self, name: &str) -> HerderResult<()> {
        let mut connectors = self.connectors.lock().unwrap();
        let c = connectors
            .get_mut(name)
            .ok_or_else(|| Self::unknown(name))?;
        self.worker.stop_and_await_tasks(&Self::task_ids(name, c));
        for id in Self::task_ids(name, c) {
            self.worker.statuses().delete_task(&id);
        }
        c.task_configs.clear();
        c.target = TargetState::Stopped;
        let _ = self
            .worker
            .set_connector_target_state(name, TargetState::Stopped);
        Ok(())
    }

    fn restart_connector(&self, name: &str) -> HerderResult<()> {
        let mut connectors = self.connectors.lock().unwrap();
        if !connectors.contains_key(name) {
            return Err(HerderError::NotFound(format!("Unknown connector: {name}")));
        }
        self.worker.stop_connector(name);
        let c = &connectors[name];
        let result = self
            .worker
            .start_connector(name, c.config.clone(), c.target);
        self.update_tasks(&mut connectors, name);
        result.map_err(|e| HerderError::Internal(format!("Failed to start connector: {name}: {e}")))
    }

    fn restart_task(&self, id: &ConnectorTaskId) -> HerderResult<()> {
        let connectors = self.connectors.lock().unwrap();
        let c = connectors
            .get(&id.connector)
            .ok_or_else(|| HerderError::NotFound(format!("Unknown connector: {}", id.connector)))?;
        let tc = c
            .task_configs
            .get(id.task as usize)
            .ok_or_else(|| HerderError::NotFound(format!("Unknown task: {id}")))?;
        self.worker.stop_and_await_tasks(std::slice::from_ref(id));
        self.worker
            .start_task(id, &c.config, tc.clone(), c.target)
            .map_err(|_| HerderError::Internal(format!("Failed to start task: {id}")))
    }

    fn restart_connector_and_tasks(
        &self,
        request: RestartRequest,
    ) -> HerderResult<ConnectorStateInfo> {
        let name = request.connector.clone();
        let mut connectors = self.connectors.lock().unwrap();
        let c = connectors
            .get(&name)
            .ok_or_else(|| HerderError::NotFound(format!("Unknown connector: {name}")))?;
        let statuses = self.worker.statuses().clone();
        let ctype = self.connector_type(&c.config);
        let plan = build_restart_plan(
            &request,
            statuses.connector(&name).as_ref(),
            &statuses.tasks(&name),
            &ctype,
        )
        .ok_or_else(|| HerderError::NotFound(format!("Status for connector {name} not found")))?;
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
            let _ = self
                .worker
                .start_connector(&name, c.config.clone(), c.target);
        }
        let c = &connectors[&name];
        for id in &task_ids {
            if let Some(tc) = c.task_configs.get(id.task as usize) {
                let _ = self.worker.start_task(id, &c.config, tc.clone(), c.target);
            }
        }
        if plan.restart_connector {
            self.update_tasks(&mut connectors, &name);
        }
        Ok(plan.state_info)
    }

    fn validate_connector_config(
        &self,
        config: &Props,
        null_keys: &[String],
    ) -> HerderResult<ConfigInfos> {
        validate(
            &self.worker.plugins,
            &WorkerSupport::of(&self.worker.config),
            config,
            null_keys,
        )
    }

    fn connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)> {
        self.worker.all_connector_counters()
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
