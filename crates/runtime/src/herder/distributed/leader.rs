//! The leader's writes on behalf of other workers: task configs and the zombie fencing of
//! exactly-once source connectors (KIP-618), and the worker's side of exactly-once tasks.

use super::*;

/// The leader's write of a connector's task configs (`DistributedHerder.writeTaskConfigs`):
/// refused while the connector is STOPPED unless the set is empty (400), 404 for a connector
/// the config topic does not hold.
///
/// Writes that arrive while another is under way are combined: each caller queues its
/// connector's configs, and whoever holds the write lock next writes everything queued with
/// the reads and writes of one ([`ConfigBackingStore::put_task_configs_batch`]) and hands
/// each caller its outcome. With 200 connectors starting at once, their workers' forwards no
/// longer wait for 200 rounds of read, write, read, write, read one after another (issue #34).
pub(super) fn leader_write_task_configs(
    s: &Shared,
    name: &str,
    configs: &[Props],
) -> HerderResult<()> {
    let (reply, outcome) = std::sync::mpsc::channel();
    s.task_config_queue
        .lock()
        .unwrap()
        .push((name.to_string(), configs.to_vec(), reply));
    {
        let _guard = s.write_lock.lock().unwrap();
        let batch = std::mem::take(&mut *s.task_config_queue.lock().unwrap());
        if !batch.is_empty() {
            write_task_config_batch(s, batch);
        }
    }
    // Whoever took this request answered it before letting the write lock go.
    outcome.recv().unwrap_or_else(|_| {
        Err(HerderError::Internal(
            "the task config write was dropped".into(),
        ))
    })
}

/// A queued task-config write: the connector, its task configs, where its outcome goes.
pub(super) type QueuedTaskConfigs = (
    String,
    Vec<Props>,
    std::sync::mpsc::Sender<HerderResult<()>>,
);

/// Writes `batch` (the write lock held): requests the snapshot refuses are answered at once,
/// the others share one batched write and its outcome. A connector named twice keeps its last
/// configs (the earlier request is answered with the same outcome).
fn write_task_config_batch(s: &Shared, batch: Vec<QueuedTaskConfigs>) {
    let snap = s.config.snapshot();
    let mut accepted: Vec<(String, Vec<Props>)> = Vec::new();
    let mut waiting: Vec<std::sync::mpsc::Sender<HerderResult<()>>> = Vec::new();
    for (name, configs, reply) in batch {
        if !snap.contains(&name) {
            let _gone = reply.send(Err(HerderError::NotFound(format!(
                "Unknown connector: {name}"
            ))));
            continue;
        }
        if snap.target_state(&name) == TargetState::Stopped && !configs.is_empty() {
            let _gone = reply.send(Err(HerderError::BadRequest(format!(
                "Cannot publish a non-empty set of task configurations for connector {name} while it is in the STOPPED state"
            ))));
            continue;
        }
        accepted.retain(|(n, _)| *n != name);
        accepted.push((name, configs));
        waiting.push(reply);
    }
    if waiting.is_empty() {
        return;
    }
    let refs: Vec<(&str, &[Props])> = accepted
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_slice()))
        .collect();
    let result = s.config.put_task_configs_batch(&refs);
    for reply in waiting {
        let r = match &result {
            Ok(()) => Ok(()),
            Err(e) => Err(HerderError::from(e.clone())),
        };
        let _gone = reply.send(r);
    }
}

/// The leader's round of zombie fencing for a source connector (Connect's
/// `doFenceZombieSourceTasks`, KIP-618): when task configs were committed after the
/// connector's last task count record, the producers of the tasks that record counts are
/// fenced (see [`fencing::plan`]) and a new record with the current task count is written.
/// Errors: 409 via [`HerderError::NotLeader`] off the leader (forwarded), 404 for an unknown
/// connector, 400 for a sink, 500 when the config topic cannot be read or the producers
/// cannot be fenced, 409 when new task configs were committed during the round.
pub(super) fn leader_fence_zombies(s: &Shared, name: &str) -> HerderResult<()> {
    {
        let v = s.view.read().unwrap();
        if !v.is_leader {
            return Err(HerderError::NotLeader(v.leader_url.clone()));
        }
    }
    let snap = s.config.snapshot();
    let Some(config) = snap.connector_configs.get(name) else {
        return Err(HerderError::NotFound(format!("Connector {name} not found")));
    };
    let source = config
        .get("connector.class")
        .and_then(|c| s.worker.plugins.connector_type(c))
        == Some(tributary_api::connector::ConnectorType::Source);
    if !source {
        return Err(HerderError::BadRequest(format!(
            "Connector {name} is not a source connector"
        )));
    }
    let _round = s.fencing_lock.lock().unwrap();
    s.config.refresh(s.sync_timeout).map_err(|_| {
        HerderError::Internal(
            "Failed to read to end of config topic before performing zombie fencing".into(),
        )
    })?;
    let snap = s.config.snapshot();
    let task_count = snap.task_counts.get(name).copied().unwrap_or(0);
    let generation = snap.task_config_generation(name);
    let write_record = |count: u32| {
        let _guard = s.write_lock.lock().unwrap();
        s.config.put_task_count_record(name, count).map_err(|e| {
            HerderError::Internal(format!(
                "Failed to write the task count record of connector {name}: {e}"
            ))
        })
    };
    match fencing::plan(
        snap.pending_fencing.contains(name),
        snap.task_count_records.get(name).copied(),
        task_count,
    ) {
        fencing::FencingPlan::Nothing => {
            tracing::debug!(
                connector = name,
                "no zombie fencing needed: the latest task generation is fenced already"
            );
            Ok(())
        }
        fencing::FencingPlan::WriteRecord(count) => write_record(count),
        fencing::FencingPlan::FenceThenWrite { fence, record } => {
            let group = s
                .worker
                .config
                .settings()
                .distributed()
                .map(|d| d.group_id.clone())
                .unwrap_or_default();
            let ids: Vec<String> = (0..fence)
                .map(|t| fencing::task_transactional_id(&group, name, t))
                .collect();
            let resolved = s
                .worker
                .resolve_config(name, &format!("connector {name}"), config)
                .map_err(HerderError::from)?;
            let client = crate::config::clients::connector_admin_config(
                &s.worker.config,
                crate::config::worker::prefixed(&resolved, "admin.override."),
            )
            .map_err(|e| HerderError::Internal(e.to_string()))?;
            tracing::info!(
                connector = name,
                producers = fence,
                "fencing the producers of the previous task generation"
            );
            fencing::fence_producers(&client, &ids, FENCING_TIMEOUT).map_err(|e| {
                HerderError::Internal(format!("Failed to perform zombie fencing: {e}"))
            })?;
            s.config.refresh(s.sync_timeout).map_err(|_| {
                HerderError::Internal("Failed to read to end of config topic".into())
            })?;
            if s.config.snapshot().task_config_generation(name) != generation {
                return Err(HerderError::Conflict(
                    "Fencing failed because new task configurations were generated for the connector".into(),
                ));
            }
            write_record(record)
        }
    }
}

/// How long fencing a producer may take (Connect's REST request timeout, 90 s).
pub(super) const FENCING_TIMEOUT: Duration = Duration::from_secs(90);

/// The distributed herder's side of exactly-once source tasks, called from task threads.
pub(super) struct ExactlyOnceTasks {
    /// Weak: the worker (held by `Shared`) holds this.
    pub(super) shared: std::sync::Weak<Shared>,
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) http: reqwest::Client,
    /// The group's REST namespace path prefix (see `HerderLoop::rest_namespace`).
    pub(super) rest_namespace: String,
}

impl ExactlyOnceTasks {
    fn shared(&self) -> tributary_api::ConnectResult<Arc<Shared>> {
        self.shared
            .upgrade()
            .ok_or_else(|| ConnectError::connect("the worker is stopping"))
    }
}

/// How long a task keeps asking for its round of zombie fencing before it fails: a round fails
/// for passing reasons (the leader cannot read the config topic to its end during a broker
/// restart or a network cut, the leader changes, a forwarded request finds no leader).
pub(super) const FENCING_RETRY_FOR: Duration = Duration::from_secs(120);

impl ExactlyOnceTasks {
    /// Asks for a round of zombie fencing until one succeeds, the task is no longer this
    /// worker's, the worker stops, or [`FENCING_RETRY_FOR`] has passed (then the last error).
    fn fence_with_retries(&self, id: &ConnectorTaskId) -> tributary_api::ConnectResult<()> {
        let deadline = std::time::Instant::now() + FENCING_RETRY_FOR;
        let mut wait = Duration::from_millis(500);
        loop {
            let error = match self.fence_once(id) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            let s = self.shared()?;
            let still_ours = s.view.read().unwrap().tasks.contains(id);
            let stopping = s.stopping.load(std::sync::atomic::Ordering::Acquire);
            if !still_ours || stopping || std::time::Instant::now() + wait > deadline {
                return Err(error);
            }
            tracing::warn!(task = %id, "{error}; asking again in {wait:?}");
            // On the task's own thread, before its producer starts.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(wait);
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    }
}

impl crate::worker::ExactlyOnceCoordinator for ExactlyOnceTasks {
    /// A round of zombie fencing for the task's connector (KIP-618), asked again while it
    /// fails for passing reasons (see [`FENCING_RETRY_FOR`]).
    fn fence_before_start(&self, id: &ConnectorTaskId) -> tributary_api::ConnectResult<()> {
        self.fence_with_retries(id)
    }

    fn task_generation(&self, connector: &str) -> Option<u32> {
        self.shared
            .upgrade()
            .and_then(|s| s.config.snapshot().task_config_generation(connector))
    }

    fn verify_generation(
        &self,
        id: &ConnectorTaskId,
        generation: Option<u32>,
    ) -> tributary_api::ConnectResult<()> {
        let s = self.shared()?;
        s.config.refresh(s.sync_timeout)?;
        let latest = s.config.snapshot().task_config_generation(&id.connector);
        if latest != generation {
            return Err(ConnectError::connect(format!(
                "Task {id} belongs to an older generation of its connector's task configurations (generation {generation:?}, latest {latest:?}); it will not run"
            )));
        }
        if !s.view.read().unwrap().tasks.contains(id) {
            return Err(ConnectError::connect(format!(
                "Task {id} is no longer assigned to this worker; it will not run"
            )));
        }
        Ok(())
    }
}

impl ExactlyOnceTasks {
    /// One round of zombie fencing: on the leader itself, or forwarded to it.
    fn fence_once(&self, id: &ConnectorTaskId) -> tributary_api::ConnectResult<()> {
        let s = self.shared()?;
        let leader_url = match leader_fence_zombies(&s, &id.connector) {
            Ok(()) => return Ok(()),
            Err(HerderError::NotLeader(url)) => url,
            Err(e) => {
                return Err(ConnectError::connect(format!(
                    "Failed to perform round of zombie fencing: {e}"
                )))
            }
        };
        let Some(leader) = leader_url else {
            return Err(ConnectError::connect(
                "Failed to perform round of zombie fencing: the leader of the cluster is not known",
            ));
        };
        let url = format!(
            "{}/fence",
            crate::peer::connector_url(
                &format!("{}{}", leader.trim_end_matches('/'), self.rest_namespace),
                &id.connector
            )
        );
        let mut req = self.http.put(&url);
        if let Some(key) = s.config.snapshot().session_key.as_ref() {
            req = req
                .header(session::SIGNATURE_HEADER, session::sign(&key.key, b""))
                .header(session::ALGORITHM_HEADER, session::HMAC_SHA256);
        }
        tracing::debug!(task = %id, url, "forwarding the zombie fencing request to the leader");
        let answer = self.runtime.block_on(async move {
            let resp = tokio::time::timeout(FENCING_TIMEOUT, req.send())
                .await
                .map_err(|_| "no answer in time".to_string())?
                .map_err(|e| e.to_string())?;
            let status = resp.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(format!(
                    "{status} {}",
                    resp.text().await.unwrap_or_default()
                ))
            }
        });
        answer.map_err(|e| {
            ConnectError::connect(format!(
                "Failed to perform round of zombie fencing: forwarding to the leader at {leader}: {e}"
            ))
        })
    }
}
