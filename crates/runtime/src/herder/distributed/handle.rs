//! What the REST API asks of a distributed worker (Connect's `Herder` interface): reads of
//! the config snapshot and the status cache, leader-only config writes, and requests handed to
//! the herder loop.

use super::*;

impl Herder for DistributedHerder {
    fn worker_id(&self) -> String {
        self.shared.worker.worker_id.clone()
    }

    fn kafka_cluster_id(&self) -> Option<String> {
        self.shared.cluster_id.clone()
    }

    fn plugins(&self) -> &Plugins {
        &self.shared.worker.plugins
    }

    fn connectors(&self) -> HerderResult<Vec<String>> {
        Ok(self.snapshot().connectors())
    }

    fn connector_info(&self, name: &str) -> HerderResult<ConnectorInfo> {
        self.info(&self.snapshot(), name)
    }

    fn connector_config(&self, name: &str) -> HerderResult<Props> {
        self.snapshot()
            .connector_configs
            .get(name)
            .cloned()
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))
    }

    fn put_connector_config(
        &self,
        name: &str,
        config: Props,
        allow_replace: bool,
        initial_state: Option<TargetState>,
    ) -> HerderResult<Created<ConnectorInfo>> {
        validate_for_put(
            &self.shared.worker.plugins,
            &WorkerSupport::of(&self.shared.worker.config),
            self.shared.worker.config.providers(),
            &config,
        )?;
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        let existed = self.snapshot().contains(name);
        if existed && !allow_replace {
            return Err(HerderError::Conflict(format!(
                "Connector {name} already exists"
            )));
        }
        let target = if existed { None } else { initial_state };
        self.write(|s| s.put_connector_config(name, &config, target))?;
        Ok(Created {
            created: !existed,
            result: self.info(&self.snapshot(), name)?,
        })
    }

    fn delete_connector(&self, name: &str) -> HerderResult<()> {
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Connector {name} not found")));
        }
        self.write(|s| s.remove_connector_config(name))
    }

    fn connector_status(&self, name: &str) -> HerderResult<ConnectorStateInfo> {
        let ctype = self
            .snapshot()
            .connector_configs
            .get(name)
            .map(|c| self.connector_type(c))
            .unwrap_or_else(|| "unknown".into());
        let mut info =
            crate::herder::connector_state_info(self.shared.statuses.as_ref(), name, ctype)?;
        info.connector.auto_restart =
            self.auto_restart_info(&auto_restart::Instance::Connector(name.to_string()));
        for t in &mut info.tasks {
            t.auto_restart = self.auto_restart_info(&auto_restart::Instance::Task(
                ConnectorTaskId::new(name, t.id),
            ));
        }
        crate::herder::add_progress(&self.shared.worker, &mut info);
        Ok(info)
    }

    fn task_status(&self, id: &ConnectorTaskId) -> HerderResult<TaskState> {
        let mut state = crate::herder::task_state(self.shared.statuses.as_ref(), id)?;
        state.auto_restart = self.auto_restart_info(&auto_restart::Instance::Task(id.clone()));
        state.progress = self.shared.worker.task_stall(id);
        state.throttle = self.shared.worker.task_throttle(id);
        Ok(state)
    }

    fn task_configs(&self, name: &str) -> HerderResult<Vec<TaskInfo>> {
        let snap = self.snapshot();
        if !snap.contains(name) {
            return Err(HerderError::NotFound(format!("Connector {name} not found")));
        }
        Ok(snap
            .tasks(name)
            .into_iter()
            .map(|id| TaskInfo {
                config: snap
                    .task_config(&id)
                    .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default(),
                id: TaskRef {
                    connector: id.connector,
                    task: id.task,
                },
            })
            .collect())
    }

    fn pause_connector(&self, name: &str) -> HerderResult<()> {
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        self.write(|s| s.put_target_state(name, TargetState::Paused))
    }

    fn resume_connector(&self, name: &str) -> HerderResult<()> {
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        self.write(|s| s.put_target_state(name, TargetState::Started))
    }

    fn stop_connector(&self, name: &str) -> HerderResult<()> {
        self.require_leader()?;
        let _guard = self.shared.write_lock.lock().unwrap();
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector {name}")));
        }
        // Connect writes the empty task set first; the target state goes first here so that a
        // reconfiguration racing with this call (it runs on the herder loop, not under this
        // lock) sees STOPPED and publishes nothing. The records in the topic are the same.
        self.write(|s| {
            s.put_target_state(name, TargetState::Stopped)?;
            s.refresh(Duration::from_secs(30))?;
            s.put_task_configs(name, &[])?;
            s.refresh(Duration::from_secs(30))
        })
    }

    fn connector_offsets(
        &self,
        name: &str,
    ) -> HerderResult<crate::worker::connector_offsets::ConnectorOffsets> {
        let snap = self.snapshot();
        let config = snap
            .connector_configs
            .get(name)
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))?;
        crate::worker::connector_offsets::connector_offsets_of(&self.shared.worker, name, config)
    }

    fn modify_connector_offsets(
        &self,
        name: &str,
        offsets: Option<Vec<crate::worker::connector_offsets::ConnectorOffset>>,
    ) -> HerderResult<crate::worker::connector_offsets::Message> {
        // Connect's `modifyConnectorOffsetsChecks`: no rebalance pending, the leader, the
        // config topic read to its end, the connector STOPPED with no tasks.
        if self.shared.membership.borrow().rebalancing {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        self.require_leader()?;
        // Serialised with the leader's config writes, so that no resume is written meanwhile
        // through this worker.
        let _guard = self.shared.write_lock.lock().unwrap();
        self.shared
            .config
            .refresh(Duration::from_secs(30))
            .map_err(|_| {
                HerderError::Internal(
                    "Failed to read to end of config topic before modifying connector offsets"
                        .into(),
                )
            })?;
        let snap = self.snapshot();
        let config = snap
            .connector_configs
            .get(name)
            .ok_or_else(|| HerderError::NotFound(format!("Connector {name} not found")))?;
        crate::worker::connector_offsets::require_stopped(
            name,
            snap.target_state(name) == TargetState::Stopped,
            snap.task_counts.get(name).copied().unwrap_or(0) as usize,
        )?;
        crate::worker::connector_offsets::modify_connector_offsets(
            &self.shared.worker,
            name,
            config,
            offsets.as_deref(),
        )
    }

    fn restart_connector(&self, name: &str) -> HerderResult<()> {
        let name = name.to_string();
        self.call_loop(|tx| LoopRequest::RestartConnector(name, tx))
    }

    fn restart_task(&self, id: &ConnectorTaskId) -> HerderResult<()> {
        let id = id.clone();
        self.call_loop(|tx| LoopRequest::RestartTask(id, tx))
    }

    fn restart_connector_and_tasks(
        &self,
        request: RestartRequest,
    ) -> HerderResult<ConnectorStateInfo> {
        let snap = self.snapshot();
        if !snap.contains(&request.connector) {
            return Err(HerderError::NotFound(format!(
                "Unknown connector: {}",
                request.connector
            )));
        }
        self.require_leader()?;
        // The preview is planned from the statuses as they are before the request is written:
        // once it is in the config topic, this very worker may start restarting instances
        // (Connect plans on its tick thread before it processes the request).
        let ctype = self.connector_type(&snap.connector_configs[&request.connector]);
        let statuses = &self.shared.statuses;
        let plan = build_restart_plan(
            &request,
            statuses.connector(&request.connector).as_ref(),
            &statuses.tasks(&request.connector),
            &ctype,
        );
        self.write(|s| s.put_restart_request(&request))?;
        plan.map(|p| p.state_info).ok_or_else(|| {
            HerderError::NotFound(format!(
                "Status for connector {} not found",
                request.connector
            ))
        })
    }

    fn connector_counters(&self) -> Vec<(String, TaskCountersSnapshot)> {
        self.shared.worker.all_connector_counters()
    }

    /// Ready once the worker has completed its first rebalance.
    fn is_ready(&self) -> bool {
        self.shared.membership.borrow().settled > 0
    }

    /// A round trip through the herder loop, which handles requests between rebalances,
    /// config events and restarts: a loop stuck in one of them does not answer.
    fn health_check(&self) -> HerderResult<()> {
        self.call_loop(LoopRequest::HealthCheck)
    }

    fn auto_restart_counts(&self) -> Vec<(auto_restart::Instance, u32)> {
        let sup = self.shared.supervisor.lock().unwrap();
        sup.records()
            .map(|(i, r)| (i.clone(), r.restarts))
            .collect()
    }

    fn worker(&self) -> &Arc<Worker> {
        &self.shared.worker
    }

    fn status_store(&self) -> Arc<dyn crate::storage::status::StatusBackingStore> {
        self.shared.worker.statuses().clone()
    }

    fn worker_config(&self) -> &crate::config::worker::WorkerConfig {
        &self.shared.worker.config
    }

    fn task_counters(&self) -> Vec<(ConnectorTaskId, TaskCountersSnapshot)> {
        self.shared.worker.all_task_counters()
    }

    fn put_task_configs(
        &self,
        name: &str,
        configs: Vec<Props>,
        body: &[u8],
        signature: RequestSignature,
    ) -> HerderResult<()> {
        // KIP-507: signatures are checked once the group runs a sessioned protocol.
        if self.shared.view.read().unwrap().sessioned() {
            let key = self.snapshot().session_key.clone();
            session::verify(
                &signature,
                body,
                key.as_ref(),
                &self.shared.verification_algorithms,
            )?;
        }
        if !self.snapshot().contains(name) {
            return Err(HerderError::NotFound(format!("Unknown connector: {name}")));
        }
        self.require_leader()?;
        leader_write_task_configs(&self.shared, name, &configs)
    }

    fn fence_zombies(
        &self,
        name: &str,
        body: &[u8],
        signature: RequestSignature,
    ) -> HerderResult<()> {
        // KIP-507: signed like the other internal requests.
        if self.shared.view.read().unwrap().sessioned() {
            let key = self.snapshot().session_key.clone();
            session::verify(
                &signature,
                body,
                key.as_ref(),
                &self.shared.verification_algorithms,
            )?;
        }
        leader_fence_zombies(&self.shared, name)
    }

    fn set_cluster_logger_level(&self, namespace: &str, level: &str) -> HerderResult<()> {
        self.write(|s| s.put_logger_level(namespace, level))
    }

    fn session_key(&self) -> Option<crate::config_records::SessionKey> {
        self.snapshot().session_key.clone()
    }

    fn membership(&self) -> Option<watch::Receiver<Membership>> {
        Some(self.shared.membership.subscribe())
    }

    fn rebalances(&self) -> Vec<RebalanceRecord> {
        self.shared.rebalance_log.lock().unwrap().records()
    }

    fn worker_info(&self) -> WorkerInfo {
        let m = *self.shared.membership.borrow();
        let v = self.shared.view.read().unwrap();
        WorkerInfo {
            worker_id: self.worker_id(),
            mode: "distributed".into(),
            group: Some(GroupView {
                rebalancing: m.rebalancing,
                stopping: m.stopping,
                leader: v.is_leader,
                leader_url: v.leader_url.clone(),
                generation: v.generation,
                protocol: v.protocol.clone(),
                connectors: v.connectors.iter().cloned().collect(),
                tasks: v.tasks.iter().map(|t| t.to_string()).collect(),
                rebalances: v.rebalances,
                last_rebalance_ms: v.last_rebalance_ms,
                rebalancing_ms_total: v.rebalancing_ms_total,
                rebalance_max_ms: v.rebalance_max_ms,
                last_rebalance_completed_ms: v.last_rebalance_completed_ms,
                jobs_stopped_last_rebalance: v.jobs_stopped_last_rebalance,
                static_claims: v.static_claims.as_ref().map(|(c, t)| StaticClaims {
                    connectors: c.clone(),
                    tasks: t.clone(),
                }),
                static_in_effect: v.static_in_effect,
            }),
            shared_producers: Vec::new(),
            connectors_dir: self
                .shared
                .connectors_dir
                .as_ref()
                .map(|r| r.lock().unwrap().clone()),
        }
    }
}
