//! The worker's connectors: starting one (config resolved, plugin created, target state),
//! its task configs, target-state transitions and stopping (Connect's `Worker.startConnector`,
//! `connectorTaskConfigs`, `setTargetState`, `stopAndAwaitConnectors`).

use super::*;

impl Worker {
    /// Starts a connector instance in `target` state. `config` is the connector's config as
    /// stored: its config provider references are resolved here ([`Self::resolve_config`]), and
    /// the instance gets the resolved values. Problems found before the plugin runs (a provider
    /// that fails, unknown class, settings Tributary does not implement) mark it FAILED and are
    /// returned.
    /// Otherwise the instance is created and, for STARTED, its `start` runs on the connector's
    /// own thread: this call does not wait for it (Connect's asynchronous `startConnector`).
    /// When `start` returns, RUNNING (and a task reconfiguration request through
    /// `on_reconfigure`) or FAILED with a trace is written; PAUSED and STOPPED are written at
    /// once. The returned [`ConnectorStart`] can be waited on for the outcome.
    pub fn start_connector(
        &self,
        name: &str,
        raw_config: Props,
        target: TargetState,
    ) -> ConnectResult<ConnectorStart> {
        let config = match self.resolve_connector_config(name, &raw_config) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(connector = name, error = %e, "connector cannot start");
                self.metrics.connector_started(false);
                self.put_connector_status_version(
                    name,
                    State::Failed,
                    Some(error_trace(&e, &format!("connector {name}"))),
                    self.plugin_version(&raw_config),
                );
                return Err(e);
            }
        };
        // A config update reaches the running tasks' rate limits at once (issue #36).
        self.update_task_limits(name, &config);
        let class = config.get("connector.class").cloned().unwrap_or_default();
        let version = self.plugin_version(&config);
        // As Connect's `ConnectorConfig` (built when the connector starts), invalid
        // transformation, predicate or error handling settings fail the connector.
        let refused = self.plugins.connector_type(&class).and_then(|kind| {
            self.refusal(name, &config, kind)
                .or_else(|| transforms::check(&self.plugins, &config))
                .or_else(|| {
                    ErrorHandlingConfig::from_props(&config, kind)
                        .err()
                        .map(|e| e.to_string())
                })
                .or_else(|| {
                    self.topic_creation(&config, kind)
                        .err()
                        .map(|e| e.to_string())
                })
        });
        let created = self
            .plugins
            .connector_plugin_in(
                &class,
                config
                    .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
                    .map(String::as_str),
            )
            .map(|p| (p.new)());
        let instance = match (refused, created) {
            (None, Ok(c)) => c,
            (refused, created) => {
                let e = match (refused, created) {
                    (Some(message), _) => ConnectError::config(message),
                    (None, Err(e)) => ConnectError::config(e.to_string()),
                    (None, Ok(_)) => unreachable!("handled above"),
                };
                tracing::error!(connector = name, error = %e, "connector cannot start");
                self.metrics.connector_started(false);
                // Connect fails the connector before its `WorkerConnector` exists, so the
                // status carries no version.
                self.put_connector_status_version(
                    name,
                    State::Failed,
                    Some(error_trace(&e, &format!("connector {name}"))),
                    None,
                );
                return Err(e);
            }
        };
        let ctx = Arc::new(WorkerConnectorContext {
            name: name.to_string(),
            worker_id: self.worker_id.clone(),
            generation: self.generation.clone(),
            statuses: self.statuses.clone(),
            on_reconfigure: self.on_reconfigure.clone(),
            version: version.clone(),
            offsets: (self.plugins.connector_type(&class) == Some(ConnectorType::Source)).then(
                || ConnectorOffsets {
                    name: name.to_string(),
                    config: config.clone(),
                    worker: self.offsets.clone(),
                    topics: self.connector_offset_topics.get().cloned(),
                    reader: std::sync::OnceLock::new(),
                },
            ),
            plugin_metrics: self
                .plugins
                .plugin_metrics()
                .plugin_metrics(&[("connector", name)]),
        });
        let wc = Arc::new(WorkerConnector::new(name, instance, ctx));
        let previous = self.connectors.lock().unwrap().insert(
            name.to_string(),
            RunningConnector {
                instance: wc.clone(),
                target,
                config: config.clone(),
                raw_config,
            },
        );
        if let Some(prev) = previous {
            self.shutdown_instance(name, &prev.instance);
        }
        let (tx, rx) = mpsc::channel();
        match target {
            TargetState::Started => {
                wc.start(config, self.transition_done(name, &wc, target, version, tx));
            }
            TargetState::Paused | TargetState::Stopped => {
                let state = if target == TargetState::Paused {
                    State::Paused
                } else {
                    State::Stopped
                };
                self.put_connector_status_version(name, state, None, version);
                let _receiver_kept = tx.send(Ok(()));
            }
        }
        Ok(ConnectorStart(rx))
    }

    /// The completion of a connector's `start` or `stop` towards `target`: writes the status
    /// (unless the instance was shut down meanwhile), counts starts, asks for a task
    /// reconfiguration after a successful start, and hands the outcome to `tx`.
    pub(super) fn transition_done(
        &self,
        name: &str,
        wc: &WorkerConnector,
        target: TargetState,
        version: Option<String>,
        tx: mpsc::Sender<ConnectResult<()>>,
    ) -> connector::Completion {
        let name = name.to_string();
        let live = wc.liveness();
        let statuses = self.statuses.clone();
        let worker_id = self.worker_id.clone();
        let generation = self.generation.clone();
        let on_reconfigure = self.on_reconfigure.clone();
        let counter = self.connector_counter(&name);
        let worker_metrics = self.metrics.clone();
        Box::new(move |result: ConnectResult<()>| {
            if live.load(Ordering::Acquire) {
                if target == TargetState::Started {
                    worker_metrics.connector_started(result.is_ok());
                }
                let (state, trace) = match (&result, target) {
                    (Err(e), _) => {
                        tracing::error!(connector = %name, error = %e, "connector failed to {}", if target == TargetState::Started { "start" } else { "stop" });
                        (
                            State::Failed,
                            Some(error_trace(e, &format!("connector {name}"))),
                        )
                    }
                    (Ok(()), TargetState::Started) => (State::Running, None),
                    (Ok(()), TargetState::Paused) => (State::Paused, None),
                    (Ok(()), TargetState::Stopped) => (State::Stopped, None),
                };
                statuses.put_connector(
                    &name,
                    Status {
                        state,
                        trace,
                        worker_id,
                        generation: generation.load(Ordering::Acquire),
                        version,
                    },
                );
                if result.is_ok() && target == TargetState::Started {
                    counter.record_start();
                    on_reconfigure(name);
                }
            }
            let _receiver_may_be_gone = tx.send(result);
        })
    }

    /// Shuts an instance down within `task.shutdown.graceful.timeout.ms`; one that does not
    /// stop in time is abandoned and reported.
    pub(super) fn shutdown_instance(&self, name: &str, wc: &WorkerConnector) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        let started = wc.is_started();
        let wait = wc.begin_shutdown();
        self.finish_shutdown(name, started, wait, deadline);
    }

    /// Waits for a shutdown begun with [`WorkerConnector::begin_shutdown`] (until `deadline`),
    /// reports one that failed or timed out, and counts the stop of a started instance.
    pub(super) fn finish_shutdown(
        &self,
        name: &str,
        started: bool,
        wait: connector::ShutdownWait,
        deadline: Instant,
    ) {
        if let Err(e) = wait.wait(deadline) {
            tracing::error!(connector = name, error = %e, "graceful stop of connector failed");
        }
        if started {
            self.connector_counter(name).record_stop();
        }
    }

    /// The message a connector (or its task) fails with when its config sets what this worker
    /// cannot honour ([`unsupported_settings`]); `None` when it may run.
    /// A source connector's topic creation rules (KIP-158): `Ok(None)` for sinks, when the
    /// worker sets `topic.creation.enable=false`, or when the config sets no
    /// `topic.creation.` key; `Err` is Connect's `ConfigException` message.
    pub(super) fn topic_creation(
        &self,
        config: &Props,
        kind: ConnectorType,
    ) -> Result<Option<crate::config::topic_creation::TopicCreation>, crate::config::SettingError>
    {
        if kind != ConnectorType::Source {
            return Ok(None);
        }
        crate::config::topic_creation::TopicCreation::from_config(
            config,
            self.config.settings().topic_creation_enable,
        )
    }

    pub(super) fn refusal(
        &self,
        name: &str,
        config: &Props,
        kind: ConnectorType,
    ) -> Option<String> {
        let support = WorkerSupport::of(&self.config);
        unsupported::refusal(name, &unsupported_settings(config, kind, &support)).or_else(|| {
            // Where a file connector may read and write, checked on the config as resolved now
            // (a reference may name another file than at validation; issue #42).
            let class = config.get("connector.class")?;
            let class = self.plugins.connector_plugin(class).ok()?.class;
            support.file_paths.refusal(class, config.get("file")?)
        })
    }

    /// Whether this worker runs the connector instance.
    pub fn owns_connector(&self, name: &str) -> bool {
        self.connectors.lock().unwrap().contains_key(name)
    }

    /// Whether the connector instance is running (started successfully, not paused/stopped).
    pub fn is_connector_running(&self, name: &str) -> bool {
        self.connectors
            .lock()
            .unwrap()
            .get(name)
            .map(|c| c.instance.is_running())
            .unwrap_or(false)
    }

    /// The task configs of a running connector (`Worker.connectorTaskConfigs`): at most
    /// `tasks.max`, each with `task.class`, and for sinks the connector's `topics` /
    /// `topics.regex`. Keys that hold config provider references in the connector's stored
    /// config get those references back ([`providers::reverse_transform`], as Connect's herders
    /// do before storing task configs), so no resolved value leaves the worker. Errors when the
    /// connector is not running, or produced more than `tasks.max` configs while
    /// `tasks.max.enforce` is true.
    pub fn connector_task_configs(&self, name: &str) -> ConnectResult<Vec<Props>> {
        // The plugin call runs without the worker's lock, so other connectors carry on.
        let (instance, config, raw_config) = {
            let connectors = self.connectors.lock().unwrap();
            let rc = connectors.get(name).ok_or_else(|| {
                ConnectError::connect(format!("Connector {name} is not running on this worker"))
            })?;
            (
                rc.instance.clone(),
                rc.config.clone(),
                rc.raw_config.clone(),
            )
        };
        if !instance.is_running() {
            return Err(ConnectError::connect(format!(
                "Connector {name} is not started"
            )));
        }
        let max = tasks_max(&config);
        let configs = instance.task_configs(max)?;
        if let Err(e) = check_tasks_max(name, configs.len(), max, &config) {
            // As Connect's `Worker.connectorTaskConfigs`: the connector fails (and so is no
            // longer running: nobody retries), and the error goes back to the herder.
            tracing::error!(connector = name, error = %e.0, "connector has failed");
            instance.fail();
            self.put_connector_status_version(
                name,
                State::Failed,
                Some(e.trace(&format!("connector {name}"))),
                self.plugin_version(&config),
            );
            return Err(e.0);
        }
        let mut configs = configs;
        let class = config.get("connector.class").cloned().unwrap_or_default();
        // The version the connector runs in (KIP-891's connector.plugin.version): asking
        // another version (a Java one) for its task class would start a JVM for nothing.
        let plugin = self
            .plugins
            .connector_plugin_in(
                &class,
                config
                    .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
                    .map(String::as_str),
            )
            .map_err(|e| ConnectError::config(e.to_string()))?;
        let task_class = {
            // The task class comes from the connector; ask a fresh instance (cheap, no I/O).
            (plugin.new)().task_class()
        };
        for c in configs.iter_mut() {
            c.insert("task.class".into(), task_class.clone());
            if plugin.connector_type == ConnectorType::Sink {
                for k in ["topics", "topics.regex"] {
                    if let Some(v) = config.get(k) {
                        c.insert(k.into(), v.clone());
                    }
                }
            }
        }
        providers::reverse_transform(&raw_config, &mut configs);
        Ok(configs)
    }

    /// Changes a connector's target state: PAUSED and STOPPED stop the connector instance
    /// (Connect pauses a connector by stopping it), STARTED starts it again. Writes the status.
    pub fn set_connector_target_state(&self, name: &str, target: TargetState) -> ConnectResult<()> {
        // Tasks follow the target state whether or not the connector instance runs here.
        for (_, t) in self
            .tasks
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| id.connector == name)
        {
            t.control.set_paused(target != TargetState::Started);
        }
        let (instance, config) = {
            let mut connectors = self.connectors.lock().unwrap();
            let Some(rc) = connectors.get_mut(name) else {
                return Ok(());
            };
            if rc.target == target {
                return Ok(());
            }
            if rc.instance.is_failed() && target != TargetState::Stopped {
                // As Connect's `WorkerConnector`: a failed connector only goes to STOPPED.
                tracing::warn!(
                    connector = name,
                    "cannot transition connector to {target:?} since it has failed"
                );
                return Ok(());
            }
            rc.target = target;
            (rc.instance.clone(), rc.config.clone())
        };
        // Asynchronous, as in Connect: the status is written when the plugin call returns.
        let version = self.plugin_version(&config);
        let (tx, _rx) = mpsc::channel();
        let done = self.transition_done(name, &instance, target, version, tx);
        match target {
            TargetState::Started => instance.start(config, done),
            TargetState::Paused | TargetState::Stopped => instance.stop(done),
        }
        Ok(())
    }

    /// Stops a connector instance and writes UNASSIGNED (unless it had FAILED), waiting at
    /// most `task.shutdown.graceful.timeout.ms` for its `stop`.
    pub fn stop_connector(&self, name: &str) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_connectors_by(&[name.to_string()], deadline);
    }

    /// Stops connector instances as [`Self::stop_connector`] does, all at once, waiting at
    /// most `task.shutdown.graceful.timeout.ms` in all.
    pub fn stop_connectors(&self, names: &[String]) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_connectors_by(names, deadline);
    }

    /// Stops connector instances as [`Self::stop_connector`] does, waiting for their `stop`
    /// until `deadline` at most (one still stopping then is abandoned and logged). Every
    /// instance is asked to stop before waiting for any, so stopping thousands of connectors
    /// takes about as long as the slowest one.
    pub fn stop_connectors_by(&self, names: &[String], deadline: Instant) {
        let removed: Vec<(&String, RunningConnector)> = {
            let mut connectors = self.connectors.lock().unwrap();
            names
                .iter()
                .filter_map(|n| connectors.remove(n).map(|rc| (n, rc)))
                .collect()
        };
        if removed.is_empty() {
            return;
        }
        let waits: Vec<_> = removed
            .iter()
            .map(|(_, rc)| (rc.instance.is_started(), rc.instance.begin_shutdown()))
            .collect();
        for ((name, rc), (started, wait)) in removed.iter().zip(waits) {
            self.finish_shutdown(name, started, wait, deadline);
            let failed = self
                .statuses
                .connector(name)
                .map(|s| s.state == State::Failed && s.worker_id == self.worker_id)
                .unwrap_or(false);
            if !failed {
                let version = self.plugin_version(&rc.config);
                self.put_connector_status_version(name, State::Unassigned, None, version);
            }
        }
    }
}
