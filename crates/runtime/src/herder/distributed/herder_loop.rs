//! The herder loop: group rounds (join, sync, apply the assignment), starting and stopping
//! work, the rebalance timeline, shutdown.

use super::*;

/// The timeline record of a completed round (its duration and completion time are filled in
/// when it is logged) and, when this worker led it, the members and owners it computed.
/// `stopped_before` are the jobs an eager worker stopped before joining.
pub(super) fn round_record(
    outcome: &RoundOutcome,
    stopped_before: Option<Jobs>,
) -> (RebalanceRecord, Option<LeaderView>) {
    let a = &outcome.assignment;
    let revoked = stopped_before.unwrap_or_else(|| Jobs {
        connectors: a.revoked_connectors.clone(),
        tasks: a.revoked_tasks.iter().map(|t| t.to_string()).collect(),
    });
    let record = RebalanceRecord {
        generation: outcome.generation,
        protocol: outcome.protocol.wire_name().to_string(),
        leader: a.leader.clone(),
        leader_url: a.leader_url.clone(),
        is_leader: outcome.is_leader,
        completed_ms: 0,
        duration_ms: 0,
        assigned: Jobs {
            connectors: a.connectors.clone(),
            tasks: a.tasks.iter().map(|t| t.to_string()).collect(),
        },
        revoked,
        members: None,
        joined: None,
        left: None,
        moved: None,
    };
    let leader_view = outcome.owners.as_ref().map(|o| LeaderView {
        members: o.members.iter().cloned().collect(),
        owners: o
            .connectors
            .iter()
            .map(|(c, url)| (c.clone(), url.clone()))
            .chain(o.tasks.iter().map(|(t, url)| (t.to_string(), url.clone())))
            .collect(),
    });
    (record, leader_view)
}

impl HerderLoop {
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared) -> T + Send + 'static,
    ) -> T {
        let s = self.shared.clone();
        tokio::task::spawn_blocking(move || f(&s))
            .await
            .expect("blocking herder call panicked")
    }

    /// Whether the worker was asked to stop.
    pub(super) fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Publishes whether a rebalance is in progress or due; the end of one counts as a settle.
    pub(super) fn publish_membership(&self, rebalancing: bool) {
        self.shared.membership.send_if_modified(|m| {
            if m.rebalancing == rebalancing {
                return false;
            }
            m.rebalancing = rebalancing;
            if !rebalancing {
                m.settled += 1;
            }
            true
        });
    }

    pub(super) async fn run(mut self) {
        loop {
            if self.is_stopping() {
                break;
            }
            if self.need_rejoin {
                if std::mem::take(&mut self.coalesce) {
                    self.coalesce_config_events().await;
                }
                let config_round = std::mem::take(&mut self.config_rejoin);
                self.publish_membership(true);
                let started = Instant::now();
                // A rebalance may ask for another one (the follow-up round after revocations).
                self.need_rejoin = false;
                match self.rebalance().await {
                    Ok(()) => {
                        if config_round {
                            self.config_rounds.push_back(Instant::now());
                            while self.config_rounds.len() > 2 {
                                self.config_rounds.pop_front();
                            }
                        }
                        let mut v = self.shared.view.write().unwrap();
                        v.rebalances += 1;
                        v.last_rebalance_ms = started.elapsed().as_millis() as u64;
                        v.rebalancing_ms_total += v.last_rebalance_ms;
                        v.rebalance_max_ms = v.rebalance_max_ms.max(v.last_rebalance_ms);
                        v.last_rebalance_completed_ms = crate::worker::metrics::now_ms();
                        if let Some((mut record, leader_view)) = self.round_record.take() {
                            record.duration_ms = v.last_rebalance_ms;
                            record.completed_ms = v.last_rebalance_completed_ms;
                            self.shared
                                .rebalance_log
                                .lock()
                                .unwrap()
                                .push(record, leader_view);
                        }
                    }
                    Err(CoordinatorError::Stopping) => break,
                    Err(e) => {
                        match &e {
                            CoordinatorError::Rejoin(_) => tracing::info!("rejoining: {e}"),
                            CoordinatorError::Refused(_) => tracing::error!(
                                "rebalance failed, retrying in {:?}: {e}",
                                e.retry_after()
                            ),
                            _ => tracing::warn!(
                                "rebalance failed, retrying in {:?}: {e}",
                                e.retry_after()
                            ),
                        }
                        self.need_rejoin = true;
                        tokio::select! {
                            _ = stopped(&mut self.stopping) => {}
                            _ = tokio::time::sleep(e.retry_after()) => {}
                        }
                        continue;
                    }
                }
                if self.need_rejoin || self.is_stopping() {
                    continue;
                }
                self.publish_membership(false);
            }
            if !self.need_rejoin {
                for (_, r) in std::mem::take(&mut self.pending_restarts) {
                    self.process_restart(r).await;
                }
            }
            self.reconfigure_pending().await;
            let key_wait = self.maybe_rotate_session_key().await;
            let restart_wait = self.request_due_restarts().await;
            let stall_wait = self.fail_stalled_tasks();
            let wait = match self.reconfigure_backoff {
                Some((at, _)) => at.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            }
            .min(key_wait)
            .min(restart_wait)
            .min(stall_wait)
            .min(
                self.scheduled_rejoin
                    .map(|t| t.saturating_duration_since(Instant::now()))
                    .unwrap_or(Duration::from_secs(3600)),
            );
            if let Some(t) = self.scheduled_rejoin {
                if Instant::now() >= t {
                    self.scheduled_rejoin = None;
                    self.need_rejoin = true;
                    continue;
                }
            }
            tokio::select! {
                biased;
                _ = stopped(&mut self.stopping) => break,
                ev = self.events.recv() => {
                    if let Some(ev) = ev {
                        let mut evs = vec![ev];
                        while let Ok(e) = self.events.try_recv() {
                            evs.push(e);
                        }
                        let before = self.need_rejoin;
                        self.handle_events(evs).await;
                        if !before && self.need_rejoin {
                            self.config_rejoin = true;
                            self.coalesce = self.in_config_burst();
                        }
                    }
                }
                req = self.requests.recv() => {
                    match req {
                        // Every sender is gone: the herder was dropped without a stop.
                        None => break,
                        Some(r) => self.handle_request(r).await,
                    }
                }
                Some(failure) = self.failures.recv() => self.on_failure(failure),
                changed = self.rejoin.changed() => {
                    if changed.is_ok() {
                        let reason = self.rejoin.borrow_and_update().clone();
                        if let Some(reason) = reason {
                            tracing::info!("rejoining the group: {reason}");
                            if reason == RejoinReason::SessionLost {
                                // Never run jobs while outside the group.
                                self.stop_all_work().await;
                            }
                            self.need_rejoin = true;
                        }
                    }
                }
                _ = tokio::time::sleep(wait) => {}
            }
        }
        self.shutdown().await;
    }
}

/// Two rounds asked for by config changes within this long of each other mean a burst.
pub(super) const BURST_WINDOW: Duration = Duration::from_secs(1);
/// During a burst, a round asked for by config changes waits until none arrived for this long…
const COALESCE_QUIET: Duration = Duration::from_millis(30);
/// …but never longer than this.
const COALESCE_MAX: Duration = Duration::from_millis(300);

impl HerderLoop {
    /// Whether config changes are streaming in: the last two rounds they asked for both
    /// completed within [`BURST_WINDOW`].
    fn in_config_burst(&self) -> bool {
        self.config_rounds.len() >= 2
            && self
                .config_rounds
                .iter()
                .all(|t| t.elapsed() < BURST_WINDOW)
    }

    /// During a burst of config changes (say 200 connectors created one after another), waits
    /// until none arrived for [`COALESCE_QUIET`] (at most [`COALESCE_MAX`]) and handles those
    /// that did, so that one round assigns them all instead of one round each: each round
    /// stops every worker's other work for its duration (issue #34, task start at scale).
    /// An isolated change is never held up: it needs two recent rounds of its kind.
    async fn coalesce_config_events(&mut self) {
        let deadline = Instant::now() + COALESCE_MAX;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.is_stopping() {
                return;
            }
            let next = tokio::select! {
                biased;
                _ = stopped(&mut self.stopping) => return,
                ev = tokio::time::timeout(COALESCE_QUIET.min(left), self.events.recv()) => ev,
            };
            let Ok(Some(ev)) = next else {
                return;
            };
            let mut evs = vec![ev];
            while let Ok(e) = self.events.try_recv() {
                evs.push(e);
            }
            self.handle_events(evs).await;
        }
    }

    /// Fails the tasks of this worker that made no progress for their connector's
    /// `tributary.restart.stall.ms` (issue #36); their FAILED status schedules their automatic
    /// restart ([`Self::on_failure`]). Returns when to look again: every second while a
    /// connector of a task here sets it.
    pub(super) fn fail_stalled_tasks(&self) -> Duration {
        let snap = self.shared.config.snapshot();
        let worker = &self.shared.worker;
        let mut watched = false;
        for id in worker.task_ids() {
            let stall = snap
                .connector_configs
                .get(&id.connector)
                .and_then(|c| crate::config::auto_restart::policy(c).ok().flatten())
                .and_then(|p| p.stall);
            let Some(limit) = stall else {
                continue;
            };
            watched = true;
            if let Some(reason) = worker.fail_stalled_task(&id, limit) {
                tracing::info!(task = %id, "stalled ({reason}): failed for an automatic restart");
            }
        }
        if watched {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(3600)
        }
    }

    /// A FAILED status this worker wrote: scheduled for an automatic restart under its
    /// connector's `tributary.restart.*` settings (nothing when they are off).
    pub(super) fn on_failure(&mut self, failure: auto_restart::Failure) {
        let snap = self.shared.config.snapshot();
        let policy = snap
            .connector_configs
            .get(failure.instance.connector())
            .and_then(|c| crate::config::auto_restart::policy(c).ok().flatten());
        let mut sup = self.shared.supervisor.lock().unwrap();
        if policy.is_none() {
            sup.forget_connector(failure.instance.connector());
            return;
        }
        tracing::info!(instance = ?failure.instance, "failed; automatic restart scheduled");
        sup.failed(
            failure,
            policy.as_ref(),
            Instant::now(),
            crate::worker::metrics::now_ms(),
        );
    }

    /// Writes a KIP-745 restart request (`onlyFailed`, `includeTasks`) for every connector
    /// with an automatic restart due; returns how long until the next one is due.
    pub(super) async fn request_due_restarts(&mut self) -> Duration {
        let due = self
            .shared
            .supervisor
            .lock()
            .unwrap()
            .take_due(Instant::now());
        for connector in due {
            let request = RestartRequest {
                connector: connector.clone(),
                only_failed: true,
                include_tasks: true,
            };
            tracing::info!(connector = %connector, "automatic restart of failed instances");
            let written = self
                .blocking(move |s| s.config.put_restart_request(&request))
                .await;
            if let Err(e) = written {
                tracing::warn!(connector = %connector, "automatic restart request not written: {e}");
            }
        }
        let next = self.shared.supervisor.lock().unwrap().next_due();
        next.map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600))
    }

    /// KIP-507: the leader of a sessioned group writes a new session key when there is none,
    /// or it expired, or it is not a key this worker would generate. Returns how long until the
    /// next check is due.
    pub(super) async fn maybe_rotate_session_key(&mut self) -> Duration {
        let (leader, sessioned) = {
            let v = self.shared.view.read().unwrap();
            (v.is_leader, v.sessioned())
        };
        if !leader || !sessioned || self.need_rejoin {
            return Duration::from_secs(3600);
        }
        let now = now_ms();
        let ttl = self.shared.key_ttl_ms;
        let current = self.shared.config.snapshot().session_key.clone();
        if session::needs_rotation(current.as_ref(), now, ttl) {
            let key = session::generate_key(now);
            match self.blocking(move |s| s.config.put_session_key(&key)).await {
                Ok(()) => tracing::info!("wrote a new session key"),
                Err(e) => {
                    tracing::warn!("could not write a session key: {e}");
                    return Duration::from_secs(1);
                }
            }
            return Duration::from_millis(ttl.max(1000) as u64);
        }
        let expires = current
            .map(|k| k.creation_timestamp.saturating_add(ttl))
            .unwrap_or(now);
        Duration::from_millis((expires - now).max(1000) as u64)
    }

    /// Stops the given jobs and waits for them (revocation); flushes the status store so no
    /// stale status lands after the next rebalance.
    pub(super) async fn stop_jobs(&mut self, connectors: Vec<String>, tasks: Vec<ConnectorTaskId>) {
        if connectors.is_empty() && tasks.is_empty() {
            return;
        }
        {
            let mut v = self.shared.view.write().unwrap();
            for c in &connectors {
                v.connectors.remove(c);
            }
            for t in &tasks {
                v.tasks.remove(t);
            }
            v.jobs_stopped_last_rebalance += (connectors.len() + tasks.len()) as u64;
        }
        self.blocking(move |s| {
            s.worker.stop_and_await_tasks(&tasks);
            s.worker.stop_connectors(&connectors);
            s.statuses.flush();
        })
        .await;
    }

    /// Stops every job this worker runs (eager revocation, lost coordinator, shutdown) and
    /// forgets the held assignment.
    pub(super) async fn stop_all_work(&mut self) {
        let (connectors, tasks) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.iter().cloned().collect(),
                v.tasks.iter().cloned().collect(),
            )
        };
        self.stop_jobs(connectors, tasks).await;
        self.held = Assignment::default();
    }

    /// The clean stop, bounded in all by `task.shutdown.graceful.timeout.ms` from the stop
    /// request (and at least `2R`, below, from now): stops every connector and task at once
    /// (tasks commit their offsets as they stop, and each stopped instance is reported
    /// UNASSIGNED), reports UNASSIGNED the jobs it held but had not started, waits for those
    /// statuses to be written, then sends LeaveGroup. A task still running `R` = min(1 s, a
    /// quarter of the timeout) before the end is abandoned, as Connect abandons it, so that the
    /// statuses and the LeaveGroup fit within the bound.
    pub(super) async fn shutdown(&mut self) {
        let started = Instant::now();
        let graceful = self
            .shared
            .worker
            .config
            .settings()
            .task_shutdown_graceful_timeout;
        let reserve = (graceful / 4).min(Duration::from_secs(1));
        // Counted from the stop request (a SyncGroup in flight may have taken some of it).
        let requested = *self.shared.stop_requested.get_or_init(Instant::now);
        // A loop that noticed the stop late still gives the work at least `R`.
        let deadline = (requested + graceful).max(started + 2 * reserve);
        let work_deadline = deadline - reserve;
        let (connectors, tasks): (Vec<String>, Vec<ConnectorTaskId>) = {
            let mut v = self.shared.view.write().unwrap();
            (
                std::mem::take(&mut v.connectors).into_iter().collect(),
                std::mem::take(&mut v.tasks).into_iter().collect(),
            )
        };
        let held = std::mem::take(&mut self.held);
        let stopped_jobs = connectors.len() + tasks.len();
        self.blocking(move |s| {
            // What actually runs here; held jobs that never started are reported below.
            let running_c: BTreeSet<String> = s.worker.connector_names().into_iter().collect();
            let running_t: BTreeSet<ConnectorTaskId> = s.worker.task_ids().into_iter().collect();
            let connectors: BTreeSet<String> = connectors
                .into_iter()
                .chain(running_c.iter().cloned())
                .collect();
            let tasks: Vec<ConnectorTaskId> = tasks
                .into_iter()
                .chain(running_t.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let connector_list: Vec<String> = connectors.iter().cloned().collect();
            std::thread::scope(|scope| {
                scope.spawn(|| s.worker.stop_and_await_tasks_by(&tasks, work_deadline));
                s.worker.stop_connectors_by(&connector_list, work_deadline);
            });
            // Jobs the last round gave this worker that it did not run: their UNASSIGNED
            // tells the leader they were let go (a FAILED status of this worker stays).
            let generation = s.worker.generation.load(Ordering::Acquire);
            let status = Status {
                state: State::Unassigned,
                trace: None,
                worker_id: s.worker.worker_id.clone(),
                generation,
                version: None,
            };
            let failed_here = |st: Option<Status>| {
                st.is_some_and(|st| st.state == State::Failed && st.worker_id == s.worker.worker_id)
            };
            for c in held.connectors.iter().chain(connectors.iter()) {
                if !running_c.contains(c) && !failed_here(s.statuses.connector(c)) {
                    s.statuses.put_connector(c, status.clone());
                }
            }
            for t in held.tasks.iter().chain(tasks.iter()) {
                if !running_t.contains(t) && !failed_here(s.statuses.task(t)) {
                    s.statuses.put_task(t, status.clone());
                }
            }
            // Half the reserve is left for the LeaveGroup.
            let flush_by = deadline - reserve / 2;
            s.statuses.flush_within(
                flush_by
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(100)),
            );
        })
        .await;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(200));
        match tokio::time::timeout(left, self.coordinator.leave("the worker is shutting down"))
            .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("leaving the group failed: {e}"),
            Err(_) => tracing::warn!("leaving the group timed out"),
        }
        tracing::info!(
            jobs = stopped_jobs,
            ms = started.elapsed().as_millis() as u64,
            "stopped this worker's jobs and left the group"
        );
    }

    /// Whether the protocol in use (the last negotiated one, else the configured one) is eager.
    pub(super) fn eager_in_use(&self) -> bool {
        self.in_use.unwrap_or(self.coordinator.protocol()) == ConnectProtocol::Eager
    }

    /// One rebalance. Eager: stop everything, join, start the full assignment. Cooperative
    /// (KIP-415): join with the held assignment, stop only what is revoked, start what is
    /// added, rejoin at once after revocations, and rejoin when the assignment's delay is up.
    pub(super) async fn rebalance(&mut self) -> Result<(), CoordinatorError> {
        self.shared
            .view
            .write()
            .unwrap()
            .jobs_stopped_last_rebalance = 0;
        let eager_before = self.eager_in_use();
        // Under eager every job stops before the round: those are its revocations.
        let stopped_before = eager_before.then(|| {
            let v = self.shared.view.read().unwrap();
            Jobs {
                connectors: v.connectors.iter().cloned().collect(),
                tasks: v.tasks.iter().map(|t| t.to_string()).collect(),
            }
        });
        if eager_before {
            self.stop_all_work().await;
        }
        let outcome = loop {
            let snap = self.shared.config.snapshot();
            let config = self.shared.config.clone();
            let fresh = move || {
                if let Err(e) = config.refresh(Duration::from_secs(30)) {
                    tracing::warn!("could not read the config topic to its end: {e}");
                }
                config_snapshot(&config.snapshot())
            };
            let held = (!eager_before).then(|| self.held.clone());
            let statuses = self.shared.statuses.clone();
            let released = move |departed: &[DepartedJob]| -> Vec<Job> {
                let evident = |d: &&DepartedJob| clean_stop_evidence(statuses.as_ref(), d);
                // A worker that stopped cleanly wrote its statuses before it left; when this
                // worker has not read them all yet, it reads the topic up to its end first.
                if !departed.iter().all(|d| evident(&d)) {
                    if let Err(e) = statuses.refresh(EVIDENCE_READ_TIMEOUT) {
                        tracing::warn!("could not read the status topic to its end: {e}");
                    }
                }
                departed
                    .iter()
                    .filter(evident)
                    .map(|d| d.job.clone())
                    .collect()
            };
            let outcome = self
                .coordinator
                .round(
                    snap.offset,
                    held,
                    config_snapshot(&snap),
                    fresh,
                    released,
                    &mut self.stopping,
                )
                .await?;
            self.in_use = Some(outcome.protocol);
            self.previous_generation = self.shared.worker.generation.load(Ordering::Acquire);
            self.record_round(&outcome);
            if outcome.assignment.failed() {
                tracing::info!(
                    offset = outcome.assignment.config_offset,
                    "the leader's config is behind; reading the config topic and rejoining"
                );
                let mut stop = self.stopping.clone();
                let read = tokio::select! {
                    r = self.blocking(|s| s.config.refresh(Duration::from_secs(30))) => r,
                    _ = stopped(&mut stop) => return Err(CoordinatorError::Stopping),
                };
                if let Err(e) = read {
                    tracing::warn!("could not read the config topic to its end: {e}");
                }
                continue;
            }
            if self.shared.config.snapshot().offset < outcome.assignment.config_offset {
                let timeout = self.sync_timeout;
                let mut stop = self.stopping.clone();
                let read = tokio::select! {
                    r = self.blocking(move |s| s.config.refresh(timeout)) => r,
                    // Stopping: the outcome still tells which jobs this worker was given.
                    _ = stopped(&mut stop) => Ok(()),
                };
                if let Err(e) = read {
                    tracing::warn!("could not read the config topic to offset {} in time: {e}; leaving the group", outcome.assignment.config_offset);
                    if let Err(e) = self
                        .coordinator
                        .leave("taking too long to read the log")
                        .await
                    {
                        tracing::debug!("leaving the group failed: {e}");
                    }
                    let mut stop = self.stopping.clone();
                    tokio::select! {
                        _ = self.unsync_backoff_sleep() => {}
                        _ = stopped(&mut stop) => return Err(CoordinatorError::Stopping),
                    }
                    continue;
                }
            }
            self.unsync_retries = 0;
            break outcome;
        };
        self.round_record = Some(round_record(&outcome, stopped_before));
        self.apply(outcome).await;
        Ok(())
    }

    /// Publishes what a completed round tells the REST side (generation, protocol, leader,
    /// owners, whether static claims are honoured).
    pub(super) fn record_round(&self, outcome: &RoundOutcome) {
        let in_effect = outcome.static_in_effect;
        if self.coordinator.protocol() == ConnectProtocol::Static
            && self.coordinator.has_static_claims()
            && !in_effect
        {
            tracing::warn!(generation = outcome.generation, protocol = outcome.protocol.wire_name(), "static claims are ignored: not every worker in the group offers the static protocol");
        }
        self.shared
            .worker
            .generation
            .store(outcome.generation, Ordering::Release);
        let mut v = self.shared.view.write().unwrap();
        v.static_in_effect = in_effect;
        v.generation = outcome.generation;
        v.protocol = Some(outcome.protocol.wire_name().to_string());
        v.is_leader = outcome.is_leader;
        v.leader_url = Some(outcome.assignment.leader_url.clone()).filter(|u| !u.is_empty());
        if let Some(o) = &outcome.owners {
            v.connector_owners = o.connectors.clone();
            v.task_owners = o.tasks.clone();
        }
    }

    /// Applies a completed round: stops what the assignment takes away, then (unless the
    /// config topic moved past the assignment) starts what it adds; the leader tombstones
    /// stale statuses and reports the jobs that wait for departed workers as UNASSIGNED.
    pub(super) async fn apply(&mut self, outcome: RoundOutcome) {
        // The leader claims the config topic's transactional writer (when the worker uses
        // one); a former leader lets it go.
        let leader = self.shared.view.read().unwrap().is_leader;
        self.blocking(move |s| {
            if leader {
                if let Err(e) = s.config.claim_write_privileges() {
                    tracing::warn!("{e}; the config topic is written without a transaction until the next rebalance");
                }
            } else {
                s.config.relinquish_write_privileges();
            }
        })
        .await;
        let RoundOutcome {
            assignment,
            protocol: negotiated,
            lost_jobs,
            ..
        } = outcome;
        // Delay: a later assignment re-arms or cancels the scheduled rejoin.
        self.scheduled_rejoin = (assignment.delay > 0)
            .then(|| Instant::now() + Duration::from_millis(assignment.delay as u64));
        let revoked =
            !assignment.revoked_connectors.is_empty() || !assignment.revoked_tasks.is_empty();
        let (running_c, running_t): (Vec<String>, Vec<ConnectorTaskId>) = {
            let v = self.shared.view.read().unwrap();
            (
                v.connectors.iter().cloned().collect(),
                v.tasks.iter().cloned().collect(),
            )
        };
        let d = delta(
            negotiated,
            &self.held,
            &assignment,
            (&running_c, &running_t),
        );
        self.stop_jobs(d.stop_connectors, d.stop_tasks).await;
        self.held = d.held;
        if self.is_stopping() {
            // A worker that is stopping starts nothing; its shutdown reports the jobs it was
            // given UNASSIGNED and leaves.
            tracing::info!(
                generation = self.shared.worker.generation.load(Ordering::Acquire),
                "stopping: not starting the jobs of the last round"
            );
            return;
        }
        // The jobs of the assignment were computed from the config topic at its offset; if this
        // worker has read past it (a connector was created meanwhile), it starts nothing and
        // rejoins so that the leader assigns the newer configuration (Connect does the same).
        let snap_now = self.shared.config.snapshot();
        let config_moved = snap_now.offset != assignment.config_offset;
        self.known_connectors = snap_now.connectors().into_iter().collect();
        tracing::info!(
            generation = self.shared.worker.generation.load(Ordering::Acquire),
            protocol = negotiated.wire_name(),
            connectors = ?self.held.connectors,
            tasks = ?self.held.tasks.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            revoked = revoked,
            delay_ms = assignment.delay,
            "joined the group"
        );
        if config_moved {
            tracing::info!(
                assignment_offset = assignment.config_offset,
                offset = snap_now.offset,
                "the config topic moved past the assignment; rejoining before starting work"
            );
            self.need_rejoin = true;
            return;
        }
        self.start_work().await;
        self.restart_jobs_reported_lost(&running_c, &running_t)
            .await;
        if self.shared.view.read().unwrap().is_leader {
            self.blocking(tombstone_stale_statuses).await;
            if !lost_jobs.is_empty() {
                tracing::info!(
                    jobs = lost_jobs.len(),
                    delay_ms = assignment.delay,
                    "jobs of departed workers wait for them"
                );
                let generation = self.shared.worker.generation.load(Ordering::Acquire);
                self.blocking(move |s| mark_unassigned(s, &lost_jobs, generation))
                    .await;
            }
        }
        if revoked && negotiated != ConnectProtocol::Eager {
            // The follow-up round of revoke-then-assign.
            self.need_rejoin = true;
        }
    }

    /// Restarts the jobs this worker ran before the round (`before_*`) and still runs whose
    /// latest status is UNASSIGNED: its membership lapsed (a stopped process, a cut-off
    /// worker) and the leader reported them lost meanwhile, then gave them back to it when it
    /// joined again as a new member. Restarted, each writes its own status again, as under
    /// Connect, whose worker stops every job when its generation resets and starts what it is
    /// given. (A job this worker stops reports UNASSIGNED only once it no longer runs here.)
    async fn restart_jobs_reported_lost(
        &mut self,
        before_c: &[String],
        before_t: &[ConnectorTaskId],
    ) {
        if self.need_rejoin || self.is_stopping() {
            return;
        }
        let (now_c, now_t) = {
            let v = self.shared.view.read().unwrap();
            (v.connectors.clone(), v.tasks.clone())
        };
        // UNASSIGNED in a generation after the last round this worker completed before this
        // one: written while it was not a member (its own UNASSIGNED of an earlier stop of
        // the job carries an earlier generation, and is stale once the job started again).
        let previous = self.previous_generation;
        let lost = |st: Option<Status>| {
            st.is_some_and(|st| st.state == State::Unassigned && st.generation > previous)
        };
        let connectors: Vec<String> = before_c
            .iter()
            .filter(|c| now_c.contains(*c) && lost(self.shared.statuses.connector(c)))
            .cloned()
            .collect();
        let tasks: Vec<ConnectorTaskId> = before_t
            .iter()
            .filter(|t| now_t.contains(*t) && lost(self.shared.statuses.task(t)))
            .cloned()
            .collect();
        for c in connectors {
            tracing::warn!(
                connector = %c,
                "connector {c} runs here but was reported UNASSIGNED while this worker was out of the group: restarting it"
            );
            if let Err(e) = self.restart_connector(c.clone()).await {
                tracing::warn!(connector = %c, "restarting connector {c}: {e}");
            }
        }
        for t in tasks {
            tracing::warn!(
                task = %t,
                "task {t} runs here but was reported UNASSIGNED while this worker was out of the group: restarting it"
            );
            if let Err(e) = self.restart_task(t.clone()).await {
                tracing::warn!(task = %t, "restarting task {t}: {e}");
            }
        }
    }

    /// Backs off after failing to catch up with the config topic: eager sleeps
    /// `worker.unsync.backoff.ms`; cooperative sleeps max delay / 10 / retries left (5 to 1),
    /// and after 5 attempts stops this worker's jobs so they can safely run elsewhere.
    pub(super) async fn unsync_backoff_sleep(&mut self) {
        if self.eager_in_use() {
            tokio::time::sleep(self.unsync_backoff).await;
            return;
        }
        let retries_left = 5 - self.unsync_retries.min(4);
        self.unsync_retries += 1;
        let wait = self.max_delay / 10 / retries_left;
        tokio::time::sleep(wait).await;
        if self.unsync_retries >= 5 {
            tracing::warn!("could not catch up with the config topic after 5 attempts; stopping this worker's jobs");
            self.stop_all_work().await;
            self.unsync_retries = 0;
        }
    }

    /// Starts the held jobs that are not running yet (and tasks stopped for reconfiguration).
    pub(super) async fn start_work(&mut self) {
        let snap = self.shared.config.snapshot();
        let (running_c, running_t) = {
            let v = self.shared.view.read().unwrap();
            (v.connectors.clone(), v.tasks.clone())
        };
        let connectors: Vec<String> = self
            .held
            .connectors
            .iter()
            .filter(|c| snap.contains(c) && !running_c.contains(*c))
            .cloned()
            .collect();
        let tasks: Vec<ConnectorTaskId> = self
            .held
            .tasks
            .iter()
            .filter(|id| snap.task_config(id).is_some() && !running_t.contains(*id))
            .cloned()
            .collect();
        {
            let mut v = self.shared.view.write().unwrap();
            v.connectors.extend(connectors.iter().cloned());
            v.tasks.extend(tasks.iter().cloned());
        }
        for c in &connectors {
            self.started_from.insert(c.clone(), snap.offset);
        }
        let snap2 = snap.clone();
        // Connector starts are asynchronous: each asks for its task reconfiguration when its
        // `start` returns, so a connector that blocks in `start` holds up nothing here. A stop
        // requested meanwhile ends the starting (the shutdown reports the rest UNASSIGNED).
        self.blocking(move |s| {
            let stopping = || s.stopping.load(Ordering::Acquire);
            for c in &connectors {
                if stopping() {
                    return;
                }
                let target = snap2.target_state(c);
                if let Err(e) =
                    s.worker
                        .start_connector(c, snap2.connector_configs[c].clone(), target)
                {
                    tracing::debug!(connector = %c, "connector not started: {e}");
                }
            }
            for id in &tasks {
                if stopping() {
                    return;
                }
                let cfg = &snap2.connector_configs[&id.connector];
                // A task that cannot start reports FAILED through its status; the loop goes on.
                if let Err(e) = s.worker.start_task(
                    id,
                    cfg,
                    snap2.task_configs[id].clone(),
                    snap2.target_state(&id.connector),
                    snap2.task_count(&id.connector),
                ) {
                    tracing::debug!(task = %id, "task not started: {e}");
                }
            }
        })
        .await;
    }
}
