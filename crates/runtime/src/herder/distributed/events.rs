//! What the herder loop does between rounds: config-topic events, KIP-745 restart requests,
//! requests from the REST side, and connector reconfiguration (task configs generated and
//! written through the leader).

use super::*;

impl HerderLoop {
    pub(super) async fn handle_events(&mut self, events: Vec<ConfigEvent>) {
        let owned_connectors = self.shared.view.read().unwrap().connectors.clone();
        let owned_tasks = self.shared.view.read().unwrap().tasks.clone();
        for ev in events {
            match ev {
                ConfigEvent::ConnectorConfigUpdate {
                    connector: c,
                    read_at,
                } => {
                    let in_instance = self
                        .started_from
                        .get(&c)
                        .is_some_and(|from| read_at <= *from);
                    if owned_connectors.contains(&c) && in_instance {
                        tracing::debug!(
                            connector = %c,
                            read_at,
                            "the running instance was started with this config already"
                        );
                    } else if owned_connectors.contains(&c) {
                        // An existing connector's config changed: bounce it on its owner.
                        let snap = self.shared.config.snapshot();
                        self.started_from.insert(c.clone(), snap.offset);
                        if let Some(cfg) = snap.connector_configs.get(&c).cloned() {
                            let target = snap.target_state(&c);
                            let name = c.clone();
                            // The new instance asks for task reconfiguration once started.
                            self.blocking(move |s| {
                                s.worker.stop_connector(&name);
                                if let Err(e) = s.worker.start_connector(&name, cfg, target) {
                                    tracing::debug!(connector = %name, "connector not started: {e}");
                                }
                            })
                            .await;
                        }
                    } else if !self.known_connectors.contains(&c) {
                        // A connector this worker has not seen: the leader assigns it.
                        self.need_rejoin = true;
                    }
                }
                ConfigEvent::ConnectorConfigRemove(c) => {
                    self.started_from.remove(&c);
                    self.need_rejoin = true;
                }
                ConfigEvent::TaskConfigUpdate { connector, .. } => {
                    // Cooperative: stop the local tasks of the connectors whose task configs
                    // changed; they start again with the new configs after the rebalance if
                    // they are still assigned here. Eager stops everything anyway.
                    if !self.eager_in_use() {
                        let local: Vec<ConnectorTaskId> =
                            tasks_of(&owned_tasks, &connector).cloned().collect();
                        self.stop_jobs(Vec::new(), local).await;
                        self.shared
                            .view
                            .write()
                            .unwrap()
                            .jobs_stopped_last_rebalance = 0;
                    }
                    self.need_rejoin = true;
                }
                ConfigEvent::TargetStateChange(c) => {
                    let target = self.shared.config.snapshot().target_state(&c);
                    if owned_connectors.contains(&c) || tasks_of(&owned_tasks, &c).next().is_some()
                    {
                        let name = c.clone();
                        self.blocking(move |s| {
                            if let Err(e) = s.worker.set_connector_target_state(&name, target) {
                                tracing::warn!(connector = %name, "could not apply target state {target:?}: {e}");
                            }
                        })
                        .await;
                        if target == TargetState::Started && owned_connectors.contains(&c) {
                            self.pending_reconfigure.insert(c);
                        }
                    }
                }
                ConfigEvent::RestartRequest(r) => {
                    // Keep the request with the higher impact when one is already pending.
                    let keep = self
                        .pending_restarts
                        .get(&r.connector)
                        .map(|p| p.impact() < r.impact())
                        .unwrap_or(true);
                    if keep {
                        self.pending_restarts.insert(r.connector.clone(), r);
                    }
                }
                ConfigEvent::SessionKeyUpdate(_) => {}
                ConfigEvent::LoggerLevel(ns, level) => {
                    if let Some(level) = crate::logging::parse_level(&level) {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_millis() as i64)
                            .unwrap_or(0);
                        let changed = crate::logging::set_level(&ns, level, now);
                        tracing::info!(
                            namespace = ns,
                            level,
                            ?changed,
                            "applied a cluster-wide log level"
                        );
                    }
                }
            }
        }
    }

    /// KIP-745: restart the selected instances this worker owns, planned from its own view.
    pub(super) async fn process_restart(&mut self, request: RestartRequest) {
        let (owned_connector, owned_tasks) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.contains(&request.connector),
                v.tasks
                    .iter()
                    .filter(|t| t.connector == request.connector)
                    .cloned()
                    .collect::<BTreeSet<_>>(),
            )
        };
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&request.connector).cloned() else {
            return;
        };
        let statuses = self.shared.statuses.clone();
        let Some(plan) = build_restart_plan(
            &request,
            statuses.connector(&request.connector).as_ref(),
            &statuses.tasks(&request.connector),
            "",
        ) else {
            return;
        };
        let restart_connector = plan.restart_connector && owned_connector;
        if restart_connector {
            self.started_from
                .insert(request.connector.clone(), snap.offset);
        }
        let tasks: Vec<ConnectorTaskId> = plan
            .task_ids
            .iter()
            .map(|t| ConnectorTaskId::new(&request.connector, *t))
            .filter(|id| owned_tasks.contains(id))
            .collect();
        if !restart_connector && tasks.is_empty() {
            return;
        }
        let target = snap.target_state(&request.connector);
        let name = request.connector.clone();
        let generation = self.shared.worker.generation.load(Ordering::Acquire);
        self.blocking(move |s| {
            let status = |state| Status {
                state,
                trace: None,
                worker_id: s.worker.worker_id.clone(),
                generation,
                version: s.worker.connector_version(&name),
            };
            if restart_connector {
                s.worker.stop_connector(&name);
                s.statuses.put_connector(&name, status(State::Restarting));
            }
            s.worker.stop_and_await_tasks(&tasks);
            for id in &tasks {
                s.statuses.put_task(id, status(State::Restarting));
            }
            if restart_connector {
                // Asks for task reconfiguration itself once started.
                if let Err(e) = s.worker.start_connector(&name, cfg.clone(), target) {
                    tracing::debug!(connector = %name, "connector not started: {e}");
                }
            }
            for id in &tasks {
                if let Some(tc) = snap.task_config(id) {
                    if let Err(e) = s.worker.start_task(
                        id,
                        &cfg,
                        tc.clone(),
                        target,
                        snap.task_count(&id.connector),
                    ) {
                        tracing::debug!(task = %id, "task not started: {e}");
                    }
                }
            }
        })
        .await;
    }

    pub(super) async fn handle_request(&mut self, req: LoopRequest) {
        match req {
            LoopRequest::Reconfigure(c) => {
                self.pending_reconfigure.insert(c);
            }
            LoopRequest::HealthCheck(reply) => {
                // The prober may have given up waiting.
                reply.send(Ok(())).ok();
            }
            LoopRequest::RestartConnector(c, reply) => {
                let r = self.restart_connector(c).await;
                // The REST caller may have given up waiting; the restart happened anyway.
                reply.send(r).ok();
            }
            LoopRequest::RestartTask(id, reply) => {
                let r = self.restart_task(id).await;
                // The REST caller may have given up waiting; the restart happened anyway.
                reply.send(r).ok();
            }
        }
    }

    pub(super) fn route(&self, owner: Option<String>) -> HerderError {
        let v = self.shared.view.read().unwrap();
        if v.is_leader {
            HerderError::NotAssigned(owner)
        } else {
            HerderError::NotLeader(v.leader_url.clone())
        }
    }

    pub(super) async fn restart_connector(&mut self, c: String) -> HerderResult<()> {
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&c).cloned() else {
            return Err(HerderError::NotFound(format!("Unknown connector: {c}")));
        };
        if self.need_rejoin {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        if !self.shared.view.read().unwrap().connectors.contains(&c) {
            let owner = self
                .shared
                .view
                .read()
                .unwrap()
                .connector_owners
                .get(&c)
                .cloned();
            return Err(self.route(owner));
        }
        let target = snap.target_state(&c);
        let name = c.clone();
        // Connect answers once the connector started; a `start` that takes longer than the
        // graceful timeout is left running (its status tells how it ends) so that the herder
        // loop is not held up by it.
        let wait = self
            .shared
            .worker
            .config
            .settings()
            .task_shutdown_graceful_timeout;
        let r = self
            .blocking(move |s| {
                s.worker.stop_connector(&name);
                s.worker
                    .start_connector(&name, cfg, target)
                    .and_then(|started| started.wait_for(wait).unwrap_or(Ok(())))
            })
            .await;
        r.map_err(|e| HerderError::Internal(format!("Failed to start connector: {c}: {e}")))
    }

    pub(super) async fn restart_task(&mut self, id: ConnectorTaskId) -> HerderResult<()> {
        let snap = self.shared.config.snapshot();
        let Some(cfg) = snap.connector_configs.get(&id.connector).cloned() else {
            return Err(HerderError::NotFound(format!(
                "Unknown connector: {}",
                id.connector
            )));
        };
        let Some(tc) = snap.task_config(&id).cloned() else {
            return Err(HerderError::NotFound(format!("Unknown task: {id}")));
        };
        if self.need_rejoin {
            return Err(HerderError::Conflict(REBALANCE_EXPECTED.into()));
        }
        if !self.shared.view.read().unwrap().tasks.contains(&id) {
            let owner = self
                .shared
                .view
                .read()
                .unwrap()
                .task_owners
                .get(&id)
                .cloned();
            return Err(self.route(owner));
        }
        let target = snap.target_state(&id.connector);
        let count = snap.task_count(&id.connector);
        let tid = id.clone();
        self.blocking(move |s| {
            s.worker.stop_and_await_tasks(std::slice::from_ref(&tid));
            s.worker.start_task(&tid, &cfg, tc, target, count)
        })
        .await
        .map_err(|_| HerderError::Internal(format!("Failed to start task: {id}")))
    }

    /// Regenerates task configs of owned, running connectors; publishes them when they changed
    /// (directly on the leader, through the leader's internal endpoint elsewhere). Failures are
    /// retried with a backoff from 250 ms doubling to 60 s; a request the group's rebalance cut
    /// short is no failure, and goes again 250 ms later (after the round).
    pub(super) async fn reconfigure_pending(&mut self) {
        if self.pending_reconfigure.is_empty() || self.need_rejoin {
            return;
        }
        if let Some((at, _)) = self.reconfigure_backoff {
            if Instant::now() < at {
                return;
            }
        }
        let pending: Vec<String> = std::mem::take(&mut self.pending_reconfigure)
            .into_iter()
            .collect();
        let mut failed = false;
        let mut rebalancing = false;
        // All at once: each forward may wait for the leader's config-topic write, and the
        // leader writes the forwards that queue up together (ten connectors of a worker
        // forwarded one after another got one connector's tasks into each round, issue #34).
        // Connect forwards from an executor of its own, so several are in flight there too.
        let outcomes = {
            let this = &*self;
            futures::future::join_all(pending.iter().map(|c| this.reconfigure(c))).await
        };
        for (c, outcome) in pending.into_iter().zip(outcomes) {
            match outcome {
                Ok(()) => {}
                Err(e @ ReconfigureError::Rebalancing { .. }) => {
                    // Not a failure of the request: it goes again right after the round
                    // (a backoff growing over a long run of rounds, connectors created one
                    // after another, held the last tasks up for tens of seconds).
                    tracing::debug!(
                        connector = c,
                        "task reconfiguration waits for the rebalance: {e}"
                    );
                    self.pending_reconfigure.insert(c);
                    rebalancing = true;
                }
                Err(e) => {
                    tracing::warn!(
                        connector = c,
                        "task reconfiguration failed, will retry: {e}"
                    );
                    if matches!(e, ReconfigureError::NoLeader) {
                        // Only a rebalance tells this worker who leads.
                        self.need_rejoin = true;
                    }
                    self.pending_reconfigure.insert(c);
                    failed = true;
                }
            }
        }
        self.reconfigure_backoff = if failed {
            let next = self
                .reconfigure_backoff
                .map(|(_, d)| (d * 2).min(Duration::from_secs(60)))
                .unwrap_or(Duration::from_millis(250));
            Some((Instant::now() + next, next))
        } else if rebalancing {
            // Again after the round (which clears the rejoin signal), or in 250 ms at most.
            let first = Duration::from_millis(250);
            Some((Instant::now() + first, first))
        } else {
            None
        };
    }

    pub(super) async fn reconfigure(&self, c: &str) -> Result<(), ReconfigureError> {
        let snap = self.shared.config.snapshot();
        if !snap.contains(c)
            || snap.target_state(c) != TargetState::Started
            || !self.shared.view.read().unwrap().connectors.contains(c)
        {
            return Ok(());
        }
        let name = c.to_string();
        let configs = match self
            .blocking(move |s| s.worker.connector_task_configs(&name))
            .await
        {
            Ok(c) => c,
            Err(e) if !self.shared.worker.is_connector_running(c) => {
                tracing::debug!(
                    connector = c,
                    "skipping reconfiguration of a connector that is not running: {e}"
                );
                return Ok(());
            }
            Err(e) => return Err(ReconfigureError::TaskConfigs(e)),
        };
        let current: Vec<Props> = snap
            .tasks(c)
            .iter()
            .filter_map(|id| snap.task_config(id).cloned())
            .collect();
        let applied_changed =
            snap.applied_connector_configs.get(c) != snap.connector_configs.get(c);
        let count = snap.task_counts.get(c).copied().unwrap_or(0) as usize;
        if configs == current
            && count == configs.len()
            && !applied_changed
            && !snap.inconsistent.contains(c)
        {
            return Ok(());
        }
        let (is_leader, leader_url) = {
            let v = self.shared.view.read().unwrap();
            (v.is_leader, v.leader_url.clone())
        };
        if is_leader {
            let name = c.to_string();
            return self
                .blocking(move |s| leader_write_task_configs(s, &name, &configs))
                .await
                .map_err(ReconfigureError::Write);
        }
        let leader = leader_url.ok_or(ReconfigureError::NoLeader)?;
        let url = format!(
            "{}/tasks",
            crate::peer::connector_url(
                &format!("{}{}", leader.trim_end_matches('/'), self.rest_namespace),
                c
            )
        );
        let body = serde_json::to_vec(&configs).unwrap_or_default();
        let mut req = self
            .http
            .post(&url)
            .header("Content-Type", "application/json");
        if let Some(key) = snap.session_key.as_ref() {
            req = req
                .header(session::SIGNATURE_HEADER, session::sign(&key.key, &body))
                .header(session::ALGORITHM_HEADER, session::HMAC_SHA256);
        }
        // The leader may hold the request until its rebalance ends (a Java leader queues it
        // behind the rebalance), and that rebalance may wait for this very worker: the loop
        // gives the request up when the group rebalances or the worker stops, and retries it
        // later (Connect forwards from an executor of its own for the same reason).
        let mut rejoin = self.rejoin.clone();
        let mut stop = self.stopping.clone();
        let abandoned = |why: &str| ReconfigureError::Forward {
            url: url.clone(),
            detail: format!("given up: {why}"),
        };
        let resp = tokio::select! {
            sent = req.body(body).send() => sent.map_err(|e| ReconfigureError::Forward {
                url: url.clone(),
                detail: e.to_string(),
            })?,
            _ = rejoin.wait_for(|r| r.is_some()) => {
                return Err(ReconfigureError::Rebalancing {
                    url: url.clone(),
                    detail: "given up: the group is rebalancing".into(),
                })
            }
            _ = stopped(&mut stop) => return Err(abandoned("the worker is stopping")),
            _ = tokio::time::sleep(FORWARD_TIMEOUT) => {
                return Err(abandoned("no answer in time"))
            }
        };
        if resp.status().is_success() {
            tracing::info!(connector = c, url, "task configs handed to the leader");
            Ok(())
        } else if resp.status().as_u16() == 409 {
            // The leader is rebalancing (Connect's "Cannot complete request momentarily due
            // to stale configuration" / rebalance in progress).
            Err(ReconfigureError::Rebalancing {
                detail: format!("409 {}", resp.text().await.unwrap_or_default()),
                url,
            })
        } else {
            Err(ReconfigureError::Forward {
                detail: format!(
                    "{} {}",
                    resp.status(),
                    resp.text().await.unwrap_or_default()
                ),
                url,
            })
        }
    }
}
