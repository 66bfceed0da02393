//! The worker's tasks: starting one on its own thread with its converters, transformation
//! chain, clients and offsets, listing them, and stopping them within a deadline (Connect's
//! `Worker.startTask`, `stopAndAwaitTasks`).

use super::*;

impl Worker {
    /// Starts a task. `connector_config` and `task_config` are the configs as stored: their
    /// config provider references are resolved here ([`Self::resolve_config`], as Connect's
    /// `ClusterConfigState.taskConfig` / `connectorConfig` do), and the task gets the resolved
    /// values. Problems creating it (a provider that fails, unknown task class, converters,
    /// clients) mark the task FAILED and are returned. `task_count` is how many task configs
    /// the connector has stored: more than its `tasks.max` fails the task, unless
    /// `tasks.max.enforce` is false ([`check_tasks_max`], as Connect's `Worker.startTask`).
    pub fn start_task(
        &self,
        id: &ConnectorTaskId,
        connector_config: &Props,
        task_config: Props,
        target: TargetState,
        task_count: usize,
    ) -> ConnectResult<()> {
        let counters = self
            .counters
            .lock()
            .unwrap()
            .entry(id.clone())
            .or_default()
            .clone();
        let task_version = self.plugin_version(connector_config);
        let control = TaskControl::new(target);
        let reporter = TaskStatusReporter {
            id: id.clone(),
            control: control.clone(),
            worker_id: self.worker_id.clone(),
            generation: self.generation.clone(),
            store: self.statuses.clone(),
            version: task_version.clone(),
            counters: Some(counters.clone()),
        };
        let fail = |e: ConnectError| {
            tracing::error!(task = %id, error = %e, "task failed to start");
            self.metrics.task_started(false);
            reporter.report(State::Failed, Some(error_trace(&e, &format!("task {id}"))));
            e
        };
        let connector_config = &self
            .resolve_config(&id.connector, &format!("task {id}"), connector_config)
            .map_err(fail)?;
        if let Err(e) = check_tasks_max(
            &id.connector,
            task_count,
            tasks_max(connector_config),
            connector_config,
        ) {
            tracing::error!(task = %id, error = %e.0, "task failed to start");
            self.metrics.task_started(false);
            reporter.report(State::Failed, Some(e.trace(&format!("task {id}"))));
            return Err(e.0);
        }
        let task_config = self
            .resolve_config(&id.connector, &format!("task {id}"), &task_config)
            .map_err(fail)?;
        let class = task_config.get("task.class").cloned().unwrap_or_default();
        let connector_class = connector_config
            .get("connector.class")
            .map(String::as_str)
            .unwrap_or_default();
        let factory = self
            .plugins
            .task_factory_for(
                connector_class,
                connector_config
                    .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
                    .map(String::as_str),
                &class,
            )
            .map_err(|e| fail(ConnectError::config(e.to_string())))?;
        // The connector may run on another worker (a Java one in a mixed cluster), so the
        // task checks its connector's settings too.
        let kind = match &factory {
            TaskFactory::Source(_) | TaskFactory::AsyncSource(_) => ConnectorType::Source,
            TaskFactory::Sink(_) | TaskFactory::AsyncSink(_) => ConnectorType::Sink,
        };
        if let Some(message) = self.refusal(&id.connector, connector_config, kind) {
            return Err(fail(ConnectError::config(message)));
        }
        // The file the task itself was given, as resolved now (issue #42).
        let file_refusal = task_config.get("file").and_then(|file| {
            let class = self.plugins.connector_plugin(connector_class).ok()?.class;
            crate::config::unsupported::WorkerSupport::of(&self.config)
                .file_paths
                .refusal(class, file)
        });
        if let Some(message) = file_refusal {
            return Err(fail(ConnectError::config(message)));
        }
        let topic_creation = self
            .topic_creation(connector_config, kind)
            .map_err(|e| fail(ConnectError::config(e.to_string())))?;
        let errors = ErrorHandlingConfig::from_props(connector_config, kind).map_err(fail)?;
        // Rate limits (issue #36): kept by the worker so a config update reaches the task.
        let throttle = Arc::new(throttle::Throttle::new(
            crate::config::throttle::limits(connector_config)
                .map_err(|e| fail(ConnectError::config(e)))?,
        ));
        // The task's own metrics (KIP-877), with its converters', transformations' and
        // predicates': closed when its thread ends, or here when it cannot start.
        let task_number = id.task.to_string();
        let plugin_metrics = self
            .plugins
            .plugin_metrics()
            .plugin_metrics(&[("connector", &id.connector), ("task", &task_number)]);
        let unstarted = CloseUnlessStarted(Some(plugin_metrics.clone()));
        let closing = plugin_metrics.clone();
        let converters = converters::task_converters(
            &self.plugins,
            &self.config,
            connector_config,
            &plugin_metrics,
        )
        .map_err(fail)?;
        let flush_interval = self.config.settings().offset_flush_interval;
        let track_topics = self.config.settings().topic_tracking_enable;
        let name = format!("task-{id}");
        // Every line the task's thread logs names its connector and task (Connect's MDC
        // `connector.context`); an error-level span is enabled whatever the log level.
        let span = tracing::error_span!("task", connector = %id.connector, task = id.task);
        let thread = match factory {
            TaskFactory::Source(_) | TaskFactory::AsyncSource(_) => {
                // A blocking task gets a thread; an async one shares the worker's runtime
                // (issue #43), or gets a runtime and thread of its own without one.
                let (task, shared) = match &factory {
                    TaskFactory::AsyncSource(new) => match self.runtime.clone() {
                        Some(rt) => (source_task::SourceTaskInstance::async_task(new(), rt), true),
                        None => {
                            let rt = source_task::AsyncRuntime::own().map_err(|e| {
                                fail(ConnectError::connect(format!(
                                    "cannot build the task's runtime: {e}"
                                )))
                            })?;
                            (
                                source_task::SourceTaskInstance::async_task(new(), rt),
                                false,
                            )
                        }
                    },
                    TaskFactory::Source(new) => {
                        (source_task::SourceTaskInstance::Blocking(new()), false)
                    }
                    TaskFactory::Sink(_) | TaskFactory::AsyncSink(_) => {
                        unreachable!("matched above")
                    }
                };
                // Each task gets its own transformations and predicates.
                let chain = TransformationChain::<SourceRecord>::build_monitored(
                    &self.plugins,
                    connector_config,
                    &plugin_metrics,
                )
                .map_err(fail)?;
                let producer_overrides = prefixed(connector_config, "producer.override.");
                // At-least-once tasks without producer overrides share the worker's producer
                // (issue #34); `exactly_once_args` below makes the others' producers their own.
                let shared_producers = (self.config.settings().source_producer_shared
                    && producer_overrides.is_empty())
                .then(|| self.shared_producers.clone());
                let mut producer_config = clients::source_producer_config(
                    &self.config,
                    &id.connector,
                    id.task,
                    producer_overrides,
                )
                .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                let offsets = self.offset_store_for(connector_config).map_err(fail)?;
                let exactly_once = self
                    .exactly_once_args(id, connector_config, &mut producer_config)
                    .map_err(fail)?;
                let args = source_task::SourceTaskArgs {
                    connector: id.connector.clone(),
                    task,
                    task_config,
                    producer_config,
                    exactly_once,
                    shared_producers,
                    converters,
                    offsets,
                    topic_creation: match topic_creation {
                        None => None,
                        Some(rules) => Some((
                            rules,
                            clients::connector_admin_config(
                                &self.config,
                                prefixed(connector_config, "admin.override."),
                            )
                            .map_err(|e| fail(ConnectError::config(e.to_string())))?,
                        )),
                    },
                    control: control.clone(),
                    throttle: throttle.clone(),
                    reporter,
                    counters,
                    offset_flush_interval: flush_interval,
                    offset_flush_timeout: self.config.settings().offset_flush_timeout,
                    track_topics,
                    chain,
                    errors,
                    plugin_metrics,
                };
                match (shared, self.runtime.clone()) {
                    (true, Some(source_task::AsyncRuntime::Shared(handle))) => {
                        use tracing::Instrument;
                        Ok(TaskThread::Runtime(
                            handle.spawn(
                                async move {
                                    source_task::run_on_runtime(args).await;
                                    closing.close();
                                }
                                .instrument(span),
                            ),
                        ))
                    }
                    _ => std::thread::Builder::new()
                        .name(name)
                        .spawn(move || {
                            span.in_scope(|| source_task::run(args));
                            closing.close();
                        })
                        .map(TaskThread::Os),
                }
            }
            TaskFactory::Sink(_) | TaskFactory::AsyncSink(_) => {
                let task: Box<dyn tributary_api::sink::SinkTask> = match &factory {
                    TaskFactory::Sink(new) => new(),
                    TaskFactory::AsyncSink(new) => {
                        let rt = match self.runtime.clone() {
                            Some(rt) => rt,
                            None => source_task::AsyncRuntime::own().map_err(|e| {
                                fail(ConnectError::connect(format!(
                                    "cannot build the task's runtime: {e}"
                                )))
                            })?,
                        };
                        Box::new(sink_task::AsyncSinkAdapter::new(new(), rt))
                    }
                    _ => unreachable!("matched above"),
                };
                let dlq_clients = if errors.dlq_topic.is_empty() {
                    None
                } else {
                    let admin = clients::connector_admin_config(
                        &self.config,
                        prefixed(connector_config, "admin.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                    let producer = clients::dlq_producer_config(
                        &self.config,
                        &id.connector,
                        id.task,
                        prefixed(connector_config, "producer.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?;
                    Some((admin, producer))
                };
                let chain = TransformationChain::<SinkRecord>::build_monitored(
                    &self.plugins,
                    connector_config,
                    &plugin_metrics,
                )
                .map_err(fail)?;
                let sink_clients = sink_task::KafkaSinkClients {
                    task: id.clone(),
                    consumer: clients::sink_consumer_config(
                        &self.config,
                        &id.connector,
                        id.task,
                        prefixed(connector_config, "consumer.override."),
                    )
                    .map_err(|e| fail(ConnectError::config(e.to_string())))?,
                    dlq: dlq_clients,
                };
                let args = sink_task::SinkTaskArgs {
                    task,
                    task_config,
                    converters,
                    control: control.clone(),
                    throttle: throttle.clone(),
                    reporter,
                    counters,
                    offset_flush_interval: flush_interval,
                    track_topics,
                    chain,
                    errors,
                    offset_flush_timeout: self.config.settings().offset_flush_timeout,
                    plugin_metrics,
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || {
                        span.in_scope(|| sink_task::run(args, sink_clients));
                        closing.close();
                    })
                    .map(TaskThread::Os)
            }
        }
        .map_err(|e| ConnectError::connect(format!("cannot spawn task thread: {e}")))?;
        unstarted.started();
        let previous = self.tasks.lock().unwrap().insert(
            id.clone(),
            RunningTask {
                control,
                thread,
                version: task_version,
                throttle,
            },
        );
        if let Some(prev) = previous {
            prev.control.stop();
        }
        self.metrics.task_started(true);
        Ok(())
    }

    /// The counters of every task running on this worker, in id order (the `/metrics`
    /// scrape's task groups: a task that left this worker is no longer reported, as Connect
    /// removes a task's metric groups when it stops).
    pub fn running_task_metrics(&self) -> Vec<(ConnectorTaskId, Arc<TaskCounters>)> {
        let ids = self.task_ids();
        let counters = self.counters.lock().unwrap();
        ids.into_iter()
            .filter_map(|id| counters.get(&id).map(|c| (id.clone(), c.clone())))
            .collect()
    }

    /// The progress of a task running on this worker (`None` for others): see
    /// [`metrics::TaskMetrics::progress`], stalled past `tributary.task.stall.threshold.ms`.
    pub fn task_progress(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        self.task_progress_all(id)
    }

    /// Samples the running tasks' counters and notes the running connectors into
    /// [`Self::history`] at `now_ms` (ms since the epoch; the live view's plots, issue #36).
    pub fn sample_history(&self, now_ms: i64) {
        let tasks = self
            .running_task_metrics()
            .into_iter()
            .map(|(id, c)| {
                let m = &c.metrics;
                let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                let (kind, records_in, records_out, lag) = match m.kind() {
                    Some(metrics::TaskKind::Source) => (
                        Some("source"),
                        load(&m.poll_total),
                        load(&m.write_total),
                        None,
                    ),
                    Some(metrics::TaskKind::Sink) => (
                        Some("sink"),
                        load(&m.read_total),
                        load(&m.send_total),
                        m.client_statistics()
                            .map(|s| metrics::consumer_lags(&s).map(|(_, _, lag)| lag).sum()),
                    ),
                    None => (None, 0, 0, None),
                };
                let throttled_ms = self.task_throttle(&id).map_or(0, |t| t.throttled_ms_total);
                let sample = history::TaskSample {
                    kind,
                    records_in,
                    records_out,
                    lag,
                    throttled_ms,
                    starts: load(&c.starts),
                };
                (id, sample)
            })
            .collect();
        self.history.record(now_ms, tasks, self.connector_names());
    }

    /// The rate limits of a task this worker runs and what they cost it (issue #36); `None`
    /// for a task without limits or not running here.
    pub fn task_throttle(&self, id: &ConnectorTaskId) -> Option<throttle::ThrottleInfo> {
        let t = self
            .tasks
            .lock()
            .unwrap()
            .get(id)
            .map(|t| t.throttle.clone())?;
        t.info(u64::try_from(metrics::now_ms()).unwrap_or(0))
    }

    /// Applies a connector's `tributary.throttle.*` to its running tasks (a config update
    /// reaches them without a restart); an invalid value leaves their limits as they are.
    pub fn update_task_limits(&self, connector: &str, config: &Props) {
        let Ok(limits) = crate::config::throttle::limits(config) else {
            return;
        };
        for (id, t) in self.tasks.lock().unwrap().iter() {
            if id.connector == connector && t.throttle.limits() != limits {
                tracing::info!(task = %id, ?limits, "rate limits changed");
                t.throttle.set_limits(limits);
            }
        }
    }

    /// Fails task `id` when it has made no progress for `limit` (issue #36,
    /// `tributary.restart.stall.ms`; see [`metrics::TaskMetrics::stall_reason`]): the instance
    /// is abandoned (Connect's `WorkerTask.cancel`: asked to stop, its statuses silenced) and
    /// FAILED is written with the reason in the trace, which the automatic restarts act on.
    /// Returns the reason when it did.
    pub fn fail_stalled_task(&self, id: &ConnectorTaskId, limit: Duration) -> Option<String> {
        let control = self
            .tasks
            .lock()
            .unwrap()
            .get(id)
            .map(|t| t.control.clone())?;
        if control.is_cancelled() || control.is_stopping() {
            return None;
        }
        let counters = self.counters.lock().unwrap().get(id).cloned()?;
        // A paused task makes no progress by design, unless it hangs in a call (its `start`).
        if control.is_paused() && counters.metrics.call_running().is_none() {
            return None;
        }
        let reason = counters.metrics.stall_reason(
            metrics::now_ms(),
            limit,
            self.config.settings().offset_flush_interval,
        )?;
        control.cancel();
        let trace = format!(
            "org.apache.kafka.connect.errors.ConnectException: Tributary stopped task {id}: it made no progress: {reason} ({}={}); it is restarted as tributary.restart.* say",
            crate::config::auto_restart::STALL_MS,
            limit.as_millis()
        );
        tracing::warn!(task = %id, "{trace}");
        self.statuses.put_task(
            id,
            Status {
                state: State::Failed,
                trace: Some(trace),
                worker_id: self.worker_id.clone(),
                generation: self.generation.load(std::sync::atomic::Ordering::Acquire),
                version: self
                    .tasks
                    .lock()
                    .unwrap()
                    .get(id)
                    .and_then(|t| t.version.clone()),
            },
        );
        Some(reason)
    }

    pub fn task_stall(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        self.task_progress_all(id).filter(|p| p.stalled)
    }

    pub(super) fn task_progress_all(&self, id: &ConnectorTaskId) -> Option<metrics::Progress> {
        if !self.tasks.lock().unwrap().contains_key(id) {
            return None;
        }
        let counters = self.counters.lock().unwrap().get(id).cloned()?;
        Some(counters.metrics.progress(
            metrics::now_ms(),
            self.config.settings().task_stall_threshold,
        ))
    }

    /// The connectors running on this worker with their class, type and plugin version
    /// (`connector-metrics`), in name order.
    pub fn running_connectors(
        &self,
    ) -> Vec<(String, String, Option<ConnectorType>, Option<String>)> {
        let classes: Vec<(String, String, Props)> = self
            .connectors
            .lock()
            .unwrap()
            .iter()
            .map(|(n, c)| {
                (
                    n.clone(),
                    c.config.get("connector.class").cloned().unwrap_or_default(),
                    c.config.clone(),
                )
            })
            .collect();
        let mut v: Vec<_> = classes
            .into_iter()
            .map(|(name, class, config)| {
                let kind = self.plugins.connector_type(&class);
                let version = self.plugin_version(&config);
                (name, class, kind, version)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The tasks running on this worker.
    pub fn task_ids(&self) -> Vec<ConnectorTaskId> {
        let mut v: Vec<_> = self.tasks.lock().unwrap().keys().cloned().collect();
        v.sort();
        v
    }

    /// The connectors running on this worker.
    pub fn connector_names(&self) -> Vec<String> {
        let mut v: Vec<_> = self.connectors.lock().unwrap().keys().cloned().collect();
        v.sort();
        v
    }

    /// Stops tasks and waits for them (up to `task.shutdown.graceful.timeout.ms` in all);
    /// writes UNASSIGNED for each that had not FAILED. A task that does not stop in time is
    /// abandoned (its thread finishes on its own) and reported, as Connect cancels it.
    pub fn stop_and_await_tasks(&self, ids: &[ConnectorTaskId]) {
        let deadline = Instant::now() + self.config.settings().task_shutdown_graceful_timeout;
        self.stop_and_await_tasks_by(ids, deadline);
    }

    /// [`Self::stop_and_await_tasks`], waiting for the tasks until `deadline` at most.
    pub fn stop_and_await_tasks_by(&self, ids: &[ConnectorTaskId], deadline: Instant) {
        let running: Vec<(ConnectorTaskId, RunningTask)> = {
            let mut tasks = self.tasks.lock().unwrap();
            ids.iter()
                .filter_map(|id| tasks.remove(id).map(|t| (id.clone(), t)))
                .collect()
        };
        for (_, t) in &running {
            t.control.stop();
        }
        for (id, t) in running {
            while !t.thread.is_finished() && Instant::now() < deadline {
                // On a blocking thread, polling task threads' end.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.thread.is_finished() {
                // The task's own panics are caught and reported as FAILED (task::catch_panic);
                // this is one outside that.
                if !t.thread.join() {
                    tracing::error!(task = %id, "task thread panicked");
                }
            } else {
                tracing::error!(task = %id, "graceful stop of task failed: still running after the shutdown timeout; abandoning it");
                t.control.cancel();
            }
            let failed = self
                .statuses
                .task(&id)
                .map(|s| s.state == State::Failed && s.worker_id == self.worker_id)
                .unwrap_or(false);
            if !failed {
                self.statuses.put_task(
                    &id,
                    Status {
                        state: State::Unassigned,
                        trace: None,
                        worker_id: self.worker_id.clone(),
                        generation: self.generation.load(Ordering::Acquire),
                        version: t.version.clone(),
                    },
                );
            }
        }
    }
}

/// Closes a task's plugin metrics (KIP-877) when dropped before [`CloseUnlessStarted::started`]:
/// a task that never got its thread leaves nothing registered.
struct CloseUnlessStarted(Option<tributary_api::metrics::PluginMetrics>);

impl CloseUnlessStarted {
    /// The task's thread runs and closes them when it ends.
    fn started(mut self) {
        self.0 = None;
    }
}

impl Drop for CloseUnlessStarted {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            m.close();
        }
    }
}
