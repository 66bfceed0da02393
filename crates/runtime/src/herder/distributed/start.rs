//! Starting a distributed worker: the internal topics, the three stores reading them, the
//! group client ([`DistributedHerder::start`]), then the worker and the herder loop wired to
//! what they were given ([`DistributedHerder::start_with`], which tests call with in-memory
//! stores and group).

use super::*;

/// What a distributed herder runs on, as Connect's `DistributedHerder` is given its config and
/// status backing stores and its group member: the Kafka stores and group client
/// ([`DistributedHerder::start`]), or in-memory ones
/// ([`MemoryConfigTopic`](crate::storage::config_store::MemoryConfigTopic),
/// [`MemoryStatusBackingStore`](crate::storage::status::MemoryStatusBackingStore),
/// [`MemoryOffsetBackingStore`](crate::storage::offset::MemoryOffsetBackingStore),
/// [`MemoryGroup`](tributary_group::client::memory::MemoryGroup)) for tests without Kafka.
pub struct HerderParts {
    /// The config topic's store, read to its end.
    pub config: Arc<dyn ConfigBackingStore>,
    /// The events the config store reads from now on (its listener's channel).
    pub config_events: mpsc::UnboundedReceiver<ConfigEvent>,
    /// The status topic's store, read to its end.
    pub statuses: Arc<dyn ClusterStatusStore>,
    /// The worker's offsets (the offsets topic), read to its end.
    pub offsets: Arc<dyn OffsetBackingStore>,
    /// Connector-specific offsets topics (KIP-618); `None` where there is no Kafka, when a
    /// connector naming one fails to start.
    pub connector_offset_topics: Option<Arc<ConnectorOffsetTopics>>,
    /// The group membership, not joined yet.
    pub member: Box<dyn GroupMembership>,
    /// The REST namespace (path segments) under which the group's workers serve their internal
    /// endpoints, which a follower forwards to: MirrorMaker's `[<source>, <target>]` (KIP-710;
    /// Java's `restNamespace`), empty for a Connect worker.
    pub rest_namespace: Vec<String>,
}

impl DistributedHerder {
    /// Starts a distributed worker: creates or checks the internal topics, reads them to their
    /// end, finds the group coordinator, then [`start_with`](Self::start_with) those. `url` is
    /// the advertised REST URL (`http://host:port`), `worker_id` its `host:port`,
    /// `rest_namespace` that of [`HerderParts::rest_namespace`] (empty for a Connect worker).
    pub async fn start(
        config: WorkerConfig,
        plugins: Arc<Plugins>,
        url: String,
        worker_id: String,
        cluster_id: Option<String>,
        rest_namespace: Vec<String>,
    ) -> Result<Arc<DistributedHerder>, StartError> {
        let d = config
            .settings()
            .distributed()
            .ok_or_else(|| StartError::Config("not a distributed worker configuration".into()))?
            .clone();
        let group_id = d.group_id.clone();
        let bootstrap = config.bootstrap_servers();
        // The worker-level security keys: internal-topic clients and the group client use them.
        let security = crate::config::clients::worker_security(&config)
            .map_err(|e| StartError::Config(e.to_string()))?;
        let connection_security = ConnectionSecurity::from_settings(&security)
            .map_err(|e| StartError::Config(e.to_string()))?;
        if let Some(tls) = &connection_security.tls {
            crate::config::clients::watch_group_tls(&config, tls);
        }
        let inherited = crate::config::clients::worker_security_layer(&config);
        // Checked once here: the same settings cannot fail below.
        crate::config::clients::client_config(
            crate::config::clients::ClientKind::Admin,
            &bootstrap,
            &[],
            &[("", inherited.clone())],
        )
        .map_err(|e| StartError::Config(e.to_string()))?;
        let client = {
            let (bootstrap, group_id) = (bootstrap.clone(), group_id.clone());
            move |suffix: &str| {
                let mut c = crate::config::clients::client_config(
                    crate::config::clients::ClientKind::Admin,
                    &bootstrap,
                    &[("client.id", format!("{group_id}-{suffix}"))],
                    &[("", inherited.clone())],
                )
                .unwrap_or_else(|_| rdkafka::ClientConfig::new());
                c.set("group.id", &group_id);
                c
            }
        };
        // (setting, topic, prefix of its topic settings, partitions, replication factor,
        // single partition)
        let topics = [
            (
                "config.storage.topic",
                &d.config_storage_topic,
                "config.storage.",
                1,
                d.config_storage_replication_factor,
                true,
            ),
            (
                "offset.storage.topic",
                &d.offset_storage_topic,
                "offset.storage.",
                d.offset_storage_partitions,
                d.offset_storage_replication_factor,
                false,
            ),
            (
                "status.storage.topic",
                &d.status_storage_topic,
                "status.storage.",
                d.status_storage_partitions,
                d.status_storage_replication_factor,
                false,
            ),
        ];
        let admin = client("shared-admin");
        // The three internal topics as they are created (and created again when deleted while
        // the worker runs): config, offsets, status.
        let managed: Vec<ManagedTopic> = topics
            .iter()
            .map(
                |(setting, name, prefix, partitions, rf, single)| ManagedTopic {
                    admin: admin.clone(),
                    security: connection_security.clone(),
                    topic: InternalTopic {
                        name: name.to_string(),
                        partitions: *partitions,
                        replication_factor: i32::from(*rf),
                        configs: topic_configs(&config, prefix),
                        single_partition: *single,
                        setting,
                        auto_create: d.internal_topics_automatic_creation,
                    },
                },
            )
            .collect();
        let to_create: Vec<InternalTopic> = managed.iter().map(|m| m.topic.clone()).collect();
        // The three in one request per step.
        tokio::task::spawn_blocking(move || ensure_topics(&admin, &to_create)).await??;
        let [config_topic, offsets_topic, status_topic]: [ManagedTopic; 3] = managed
            .try_into()
            .unwrap_or_else(|_| unreachable!("three internal topics"));
        // Connector-specific offsets topics (KIP-618) are created like the worker's.
        let connector_offset_topics = Arc::new(ConnectorOffsetTopics::new(
            offsets_topic.clone(),
            Arc::new(client.clone()),
        ));

        let (events_tx, events_rx) = mpsc::unbounded_channel::<ConfigEvent>();
        let c = client.clone();
        let status_worker_id = worker_id.clone();
        let transactional_leader =
            d.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled;
        let leader_group = group_id.clone();
        // The three stores read their topics at once.
        let offsets = {
            let c = c.clone();
            tokio::task::spawn_blocking(move || {
                KafkaOffsetBackingStore::start(
                    &offsets_topic.topic.name.clone(),
                    c("offsets"),
                    c("offsets"),
                    Some(offsets_topic),
                )
            })
        };
        let statuses = {
            let c = c.clone();
            tokio::task::spawn_blocking(move || {
                KafkaStatusBackingStore::start(
                    &status_topic.topic.name.clone(),
                    c("statuses"),
                    c("statuses"),
                    Some(status_topic),
                    &status_worker_id,
                )
            })
        };
        let config_store = tokio::task::spawn_blocking(move || {
            let config_store = KafkaConfigBackingStore::start(
                &config_topic.topic.name.clone(),
                c("configs"),
                c("configs"),
                Some(config_topic),
                move |e| {
                    // Fails only once the herder loop has ended (the worker is stopping), when
                    // config events no longer matter.
                    if events_tx.send(e).is_err() {
                        tracing::debug!("config event after the herder loop ended");
                    }
                },
            )?;
            // KIP-618: from `preparing` on, the leader writes the config topic in transactions.
            Ok::<_, ConnectError>(if transactional_leader {
                let mut producer = c("configs");
                producer.remove("group.id");
                config_store
                    .with_transactional_leader(producer, &format!("connect-cluster-{leader_group}"))
            } else {
                config_store
            })
        });
        let (offsets, statuses, config_store) = tokio::join!(offsets, statuses, config_store);
        let (offsets, statuses, config_store) = (
            Arc::new(offsets??),
            Arc::new(statuses??),
            Arc::new(config_store??),
        );

        let mut group = GroupConfig::new(group_id, format!("connect-{worker_id}"));
        group.session_timeout = d.session_timeout;
        group.heartbeat_interval = d.heartbeat_interval;
        group.rebalance_timeout = d.rebalance_timeout;
        group.security = connection_security;
        group.validate()?;
        let member = GroupMember::connect(&bootstrap, group).await?;
        let parts = HerderParts {
            config: config_store,
            config_events: events_rx,
            statuses,
            offsets,
            connector_offset_topics: Some(connector_offset_topics),
            member: Box::new(member),
            rest_namespace,
        };
        Self::start_with(config, plugins, url, worker_id, cluster_id, parts).await
    }

    /// Starts the worker and the herder loop on `parts` (see [`start`](Self::start)), which
    /// joins the group at once.
    pub async fn start_with(
        config: WorkerConfig,
        plugins: Arc<Plugins>,
        url: String,
        worker_id: String,
        cluster_id: Option<String>,
        parts: HerderParts,
    ) -> Result<Arc<DistributedHerder>, StartError> {
        let d = config
            .settings()
            .distributed()
            .ok_or_else(|| StartError::Config("not a distributed worker configuration".into()))?
            .clone();
        let HerderParts {
            config: config_store,
            config_events: events_rx,
            statuses,
            offsets,
            connector_offset_topics,
            member,
            rest_namespace,
        } = parts;
        let rest_namespace = crate::peer::namespace_path(&rest_namespace);
        let (requests_tx, requests_rx) = mpsc::unbounded_channel::<LoopRequest>();

        let reconfigure = requests_tx.clone();
        // The worker's statuses go through a watch that reports its FAILED ones to the loop
        // (automatic restarts).
        let (failures_tx, failures_rx) = mpsc::unbounded_channel();
        let worker = Arc::new(Worker::new(
            worker_id.clone(),
            config.clone(),
            plugins,
            offsets.clone(),
            Arc::new(auto_restart::FailureWatch::new(
                statuses.clone(),
                worker_id.clone(),
                failures_tx,
            )),
            Arc::new(move |name| {
                // Fails only once the herder loop has ended (the worker is stopping).
                if reconfigure.send(LoopRequest::Reconfigure(name)).is_err() {
                    tracing::debug!("reconfiguration request after the herder loop ended");
                }
            }),
        ));
        // Connector restarts when config provider values expire, through this herder once it
        // exists.
        let reload_herder: crate::herder::config_reload::HerderSlot = Arc::default();
        worker.set_config_reload_handler(crate::herder::config_reload::handler(
            reload_herder.clone(),
        ));
        if let Some(topics) = connector_offset_topics {
            worker.set_connector_offset_topics(topics);
        }
        let url_slash = format!("{}/", url.trim_end_matches('/'));
        let shared = Arc::new(Shared {
            worker,
            config: config_store,
            statuses,
            offsets,
            cluster_id,
            url: url_slash,
            view: RwLock::new(View {
                static_claims: (d.connect_protocol == ConnectProtocol::Static
                    && (d.static_connectors.is_some() || d.static_tasks.is_some()))
                .then(|| {
                    (
                        d.static_connectors.clone(),
                        d.static_tasks
                            .as_ref()
                            .map(|t| t.iter().map(|t| t.to_string()).collect()),
                    )
                }),
                ..View::default()
            }),
            write_lock: Mutex::new(()),
            task_config_queue: Mutex::default(),
            connectors_dir: d.connectors_dir.as_ref().map(|_| Arc::default()),
            fencing_lock: Mutex::new(()),
            sync_timeout: d.worker_sync_timeout,
            verification_algorithms: d.inter_worker_verification_algorithms.clone(),
            key_ttl_ms: i64::try_from(d.inter_worker_key_ttl.as_millis()).unwrap_or(i64::MAX),
            membership: watch::Sender::new(Membership::joining()),
            stopping: AtomicBool::new(false),
            stop_requested: std::sync::OnceLock::new(),
            supervisor: Mutex::default(),
            rebalance_log: Mutex::default(),
        });

        let max_delay = d.scheduled_rebalance_max_delay;
        let coordinator = WorkerCoordinator::new(
            member,
            d.connect_protocol,
            shared.url.clone(),
            (d.static_connectors.clone(), d.static_tasks.clone()),
            max_delay,
        );
        // Another worker stopping a job (it leaves, or it was revoked ahead of the follow-up
        // round) means a rebalance is near: heartbeat often for a while so as to join it at
        // once rather than up to `heartbeat.interval.ms` later.
        let heartbeats = coordinator.heartbeat_handle();
        let me = shared.worker.worker_id.clone();
        shared.statuses.on_status(Box::new(move |status: &Status| {
            if status.state == State::Unassigned && status.worker_id != me {
                heartbeats.expedite(EXPEDITE_AFTER_STOP);
            }
        }));
        let (stop_tx, stop_rx) = watch::channel(false);
        let lp = HerderLoop {
            shared: shared.clone(),
            rejoin: coordinator.rejoin_needed(),
            coordinator,
            stopping: stop_rx,
            events: events_rx,
            requests: requests_rx,
            failures: failures_rx,
            need_rejoin: true,
            config_rounds: std::collections::VecDeque::new(),
            coalesce: false,
            config_rejoin: false,
            in_use: None,
            held: Assignment::default(),
            max_delay,
            scheduled_rejoin: None,
            unsync_retries: 0,
            known_connectors: BTreeSet::new(),
            started_from: HashMap::new(),
            pending_reconfigure: BTreeSet::new(),
            pending_restarts: BTreeMap::new(),
            reconfigure_backoff: None,
            sync_timeout: d.worker_sync_timeout,
            unsync_backoff: d.worker_unsync_backoff,
            http: crate::peer::peer_http_client(&config)
                .map_err(|(k, m)| StartError::Config(format!("{k}: {m}")))?,
            rest_namespace: rest_namespace.clone(),
            round_record: None,
            previous_generation: -1,
        };
        if d.exactly_once_source_support.enabled() {
            shared
                .worker
                .set_exactly_once_coordinator(Arc::new(ExactlyOnceTasks {
                    shared: Arc::downgrade(&shared),
                    runtime: tokio::runtime::Handle::current(),
                    http: lp.http.clone(),
                    rest_namespace,
                }));
        }
        let stop_rx = stop_tx.subscribe();
        let handle = tokio::spawn(lp.run());
        let herder = Arc::new(DistributedHerder {
            shared: shared.clone(),
            requests: requests_tx,
            stop_tx,
            loop_task: Mutex::new(Some(handle)),
        });
        let weak: std::sync::Weak<dyn Herder> =
            Arc::downgrade(&(herder.clone() as Arc<dyn Herder>));
        reload_herder.set(weak).ok();
        if let (Some(dir), Some(report)) = (&d.connectors_dir, &shared.connectors_dir) {
            let weak: std::sync::Weak<dyn Herder> =
                Arc::downgrade(&(herder.clone() as Arc<dyn Herder>));
            let leader_of = Arc::downgrade(&shared);
            let is_leader = move || {
                leader_of.upgrade().is_some_and(|s| {
                    let m = *s.membership.borrow();
                    !m.rebalancing && !m.stopping && s.view.read().unwrap().is_leader
                })
            };
            let settings = crate::herder::connectors_dir::Settings {
                dir: dir.clone(),
                interval: d.connectors_reconcile_interval,
                prune: d.connectors_prune,
            };
            tokio::spawn(crate::herder::connectors_dir::run(
                weak,
                is_leader,
                settings,
                report.clone(),
                stop_rx,
            ));
        }
        Ok(herder)
    }
}
