//! The distributed herder without Kafka (what Connect's `DistributedHerderTest` covers, on
//! whole herders): workers on an in-memory config topic, status store, offsets and group
//! ([`HerderParts`]), each serving its REST API on 127.0.0.1 so followers reach the leader as
//! they do in a cluster. Their tasks are the Mock connectors', which move no data (their Kafka
//! clients point at a closed port and are never used).

use std::sync::Arc;
use std::time::Duration;

use tributary_group::client::memory::MemoryGroup;

use super::*;
use crate::config::worker::WorkerMode;
use crate::storage::config_store::MemoryConfigTopic;
use crate::storage::offset::MemoryOffsetBackingStore;
use crate::storage::status::MemoryStatusBackingStore;

/// `rebalance.timeout.ms` of the in-memory group.
const REBALANCE_TIMEOUT: Duration = Duration::from_secs(5);
/// `session.timeout.ms` of the in-memory group: how long a crashed worker stays a member.
const SESSION_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a test waits for the cluster to reach what it expects.
const PATIENCE: Duration = Duration::from_secs(30);

/// The shared "Kafka" of a cluster: config topic, statuses, offsets and group, in memory.
struct Cluster {
    topic: Arc<MemoryConfigTopic>,
    statuses: Arc<MemoryStatusBackingStore>,
    offsets: Arc<MemoryOffsetBackingStore>,
    group: Arc<MemoryGroup>,
    plugins: Arc<Plugins>,
}

/// A worker of a [`Cluster`] with its REST server.
struct TestWorker {
    herder: Arc<DistributedHerder>,
    url: String,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Cluster {
    fn new() -> Cluster {
        // RUST_LOG=tributary=debug shows the herders' and assignors' decisions.
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init()
            .ok();
        Cluster {
            topic: MemoryConfigTopic::new(),
            statuses: Arc::new(MemoryStatusBackingStore::default()),
            offsets: Arc::new(MemoryOffsetBackingStore::default()),
            group: MemoryGroup::new(REBALANCE_TIMEOUT, SESSION_TIMEOUT),
            plugins: Arc::new(Plugins::new(tributary_plugins::builtin())),
        }
    }

    /// Starts a worker with `extra` worker settings over the defaults below.
    async fn worker(&self, extra: &[(&str, &str)]) -> TestWorker {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{addr}");
        let mut raw: HashMap<String, String> = [
            ("bootstrap.servers", "127.0.0.1:1"),
            ("group.id", "herder-test"),
            ("config.storage.topic", "configs"),
            ("offset.storage.topic", "offsets"),
            ("status.storage.topic", "statuses"),
            (
                "key.converter",
                "org.apache.kafka.connect.storage.StringConverter",
            ),
            (
                "value.converter",
                "org.apache.kafka.connect.storage.StringConverter",
            ),
            ("scheduled.rebalance.max.delay.ms", "3000"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        raw.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let config = WorkerConfig::parse(WorkerMode::Distributed, raw, "test").unwrap();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let store = self.topic.store(move |e| {
            events_tx.send(e).ok();
        });
        let parts = HerderParts {
            config: Arc::new(store),
            config_events: events_rx,
            statuses: self.statuses.clone(),
            offsets: self.offsets.clone(),
            connector_offset_topics: None,
            member: Box::new(self.group.member(format!("connect-{addr}"))),
            rest_namespace: Vec::new(),
        };
        let herder = DistributedHerder::start_with(
            config,
            self.plugins.clone(),
            url.clone(),
            addr.to_string(),
            None,
            parts,
        )
        .await
        .unwrap();
        let state = crate::rest::RestState::new(herder.clone() as Arc<dyn Herder>, url.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, crate::rest::router(state)).await.ok();
        });
        TestWorker {
            herder,
            url,
            server,
        }
    }
}

impl Cluster {
    /// Two workers with `settings`, once both are members of one generation.
    async fn two_workers(&self, settings: &[(&str, &str)]) -> (TestWorker, TestWorker) {
        let a = self.worker(settings).await;
        let b = self.worker(settings).await;
        wait_until("two members in one generation", || {
            self.group.members().len() == 2 && a.view().generation == b.view().generation
        })
        .await;
        (a, b)
    }
}

impl TestWorker {
    /// Stops the instances a crashed worker left running (its zombies), at a test's end.
    fn stop_zombies(&self) {
        let worker = &self.herder.shared.worker;
        worker.stop_and_await_tasks(&worker.task_ids());
        worker.stop_connectors(&worker.connector_names());
    }

    fn view(&self) -> View {
        self.herder.shared.view.read().unwrap().clone()
    }

    /// The connectors and tasks this worker runs (its worker's instances).
    fn running(&self) -> BTreeSet<String> {
        let worker = &self.herder.shared.worker;
        let mut jobs: BTreeSet<String> = worker.connector_names().into_iter().collect();
        jobs.extend(worker.task_ids().iter().map(|t| t.to_string()));
        jobs
    }

    /// Simulates a crash: the herder loop (and with it the group member) vanishes without
    /// leaving the group or reporting anything; its instances are left running, as a zombie's.
    fn crash(&self) {
        if let Some(handle) = self.herder.loop_task.lock().unwrap().take() {
            handle.abort();
        }
    }

    /// Runs a herder call off the async threads (it may block on the config topic).
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&DistributedHerder) -> T + Send + 'static,
    ) -> T {
        let herder = self.herder.clone();
        tokio::task::spawn_blocking(move || f(&herder))
            .await
            .unwrap()
    }
}

/// Waits until `check` holds (every 20 ms), failing with `what` after [`PATIENCE`].
async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mock_source(extra: &[(&str, &str)]) -> Props {
    let mut config: Props = [
        (
            "connector.class",
            "org.apache.kafka.connect.tools.MockSourceConnector",
        ),
        ("tasks.max", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    config.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    config
}

/// Creates connector `name` through the leader among `workers`.
async fn create(workers: &[&TestWorker], name: &str, config: Props) {
    let leader = workers
        .iter()
        .find(|w| w.view().is_leader)
        .expect("a leader among the workers");
    let name = name.to_string();
    let mut config = config;
    config.insert("name".into(), name.clone());
    leader
        .call(move |h| h.put_connector_config(&name, config, false, None))
        .await
        .unwrap();
}

/// Every job of `connectors` (each with one task) runs on exactly one of `workers`.
fn each_job_once(workers: &[&TestWorker], connectors: &[String]) -> bool {
    let running: Vec<BTreeSet<String>> = workers.iter().map(|w| w.running()).collect();
    connectors.iter().all(|c| {
        [c.clone(), format!("{c}-0")]
            .iter()
            .all(|job| running.iter().filter(|r| r.contains(job)).count() == 1)
    })
}

fn state_of_task(cluster: &Cluster, connector: &str) -> Option<(State, String)> {
    cluster
        .statuses
        .task(&ConnectorTaskId::new(connector, 0))
        .map(|s| (s.state, s.worker_id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jobs_are_spread_over_the_workers_and_a_clean_departure_moves_them_at_once() {
    let cluster = Cluster::new();
    // A delay longer than the test's patience: jobs that waited for it would fail the test.
    let settings = [("scheduled.rebalance.max.delay.ms", "600000")];
    let (a, b, c) = (
        cluster.worker(&settings).await,
        cluster.worker(&settings).await,
        cluster.worker(&settings).await,
    );
    wait_until("three members in one generation with a leader", || {
        let views = [a.view(), b.view(), c.view()];
        cluster.group.members().len() == 3
            && views.iter().filter(|v| v.is_leader).count() == 1
            && views
                .iter()
                .all(|v| v.generation == views[0].generation && v.generation > 0)
    })
    .await;
    let names: Vec<String> = (0..6).map(|i| format!("mock-{i}")).collect();
    for n in &names {
        create(&[&a, &b, &c], n, mock_source(&[])).await;
    }
    let all = [&a, &b, &c];
    wait_until("12 jobs, each running on one worker, 4 per worker", || {
        each_job_once(&all, &names) && all.iter().all(|w| w.running().len() == 4)
    })
    .await;
    for n in &names {
        wait_until(
            "the task's RUNNING status, naming the worker that runs it",
            || {
                state_of_task(&cluster, n).is_some_and(|(state, owner)| {
                    state == State::Running
                        && all.iter().any(|w| {
                            w.herder.shared.worker.worker_id == owner
                                && w.running().contains(&format!("{n}-0"))
                        })
                })
            },
        )
        .await;
    }

    // b stops cleanly, in a settled group: its jobs are reported UNASSIGNED in the generation
    // the leader last saw it in, and the leader hands them out at once instead of waiting
    // scheduled.rebalance.max.delay.ms for b to come back.
    wait_until("every worker on the group's generation", || {
        let g = cluster.group.generation();
        all.iter().all(|w| w.view().generation == g)
    })
    .await;
    let b_jobs = b.running();
    b.herder.stop().await;
    let rest = [&a, &c];
    wait_until("b's jobs running on a and c", || {
        each_job_once(&rest, &names) && rest.iter().all(|w| w.running().len() == 6)
    })
    .await;
    for job in b_jobs {
        assert!(a.running().contains(&job) ^ c.running().contains(&job));
    }
    a.herder.stop().await;
    c.herder.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crashed_workers_jobs_wait_for_the_scheduled_delay_then_move() {
    let cluster = Cluster::new();
    let (a, b) = cluster.two_workers(&[]).await;
    let names: Vec<String> = (0..4).map(|i| format!("mock-{i}")).collect();
    for n in &names {
        create(&[&a, &b], n, mock_source(&[])).await;
    }
    wait_until("8 jobs, 4 per worker", || {
        each_job_once(&[&a, &b], &names) && a.running().len() == 4 && b.running().len() == 4
    })
    .await;
    let lost = b.running();
    let survivor = if a.view().is_leader { &a } else { &b };
    assert!(
        std::ptr::eq(survivor, &a),
        "the first worker leads (the group keeps its first leader)"
    );
    let generation = a.view().generation;
    b.crash();
    // b's session expires; the round that follows leaves its jobs unassigned…
    wait_until("a round without b", || {
        cluster.group.members().len() == 1 && a.view().generation > generation
    })
    .await;
    let after_expiry = Instant::now();
    assert!(
        lost.iter().all(|job| !a.running().contains(job)),
        "lost jobs wait for their worker to return"
    );
    // …until scheduled.rebalance.max.delay.ms (3 s) has passed, when a takes them.
    wait_until("b's jobs on a", || a.running().len() == 8).await;
    assert!(
        after_expiry.elapsed() >= Duration::from_millis(1500),
        "the lost jobs were held back for the delay"
    );
    for n in &names {
        wait_until("task statuses name a", || {
            state_of_task(&cluster, n)
                == Some((State::Running, a.herder.shared.worker.worker_id.clone()))
        })
        .await;
    }
    b.stop_zombies();
    a.herder.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_request_restarts_only_the_failed_task_on_the_worker_that_owns_it() {
    let cluster = Cluster::new();
    let (a, b) = cluster.two_workers(&[]).await;
    // The task fails at its first poll after 300 ms; a healthy connector beside it.
    create(
        &[&a, &b],
        "failing",
        mock_source(&[("mock_mode", "task-failure"), ("delay_ms", "300")]),
    )
    .await;
    create(&[&a, &b], "healthy", mock_source(&[])).await;
    let names = ["failing".to_string(), "healthy".to_string()];
    wait_until("the failing task FAILED", || {
        each_job_once(&[&a, &b], &names)
            && state_of_task(&cluster, "failing").is_some_and(|(s, _)| s == State::Failed)
    })
    .await;
    let (_, owner) = state_of_task(&cluster, "failing").unwrap();
    let healthy_task = cluster
        .statuses
        .task(&ConnectorTaskId::new("healthy", 0))
        .unwrap();
    let connector_before = cluster.statuses.connector("failing").unwrap();

    // Recorded from now on: every status written.
    let written = Arc::new(Mutex::new(Vec::<Status>::new()));
    let w = written.clone();
    cluster
        .statuses
        .on_status(Box::new(move |s| w.lock().unwrap().push(s.clone())));
    let request = || RestartRequest {
        connector: "failing".into(),
        only_failed: true,
        include_tasks: true,
    };
    // Asked of the follower, the request must be made on the leader (the REST layer forwards
    // it there); the leader writes it, and the owner's herder loop restarts the task.
    let (leader, follower) = if a.view().is_leader {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match follower
        .call(move |h| h.restart_connector_and_tasks(request()))
        .await
    {
        Err(HerderError::NotLeader(Some(url))) => {
            assert_eq!(url.trim_end_matches('/'), leader.url)
        }
        other => panic!("a follower must send the request to the leader: {other:?}"),
    }
    let plan = leader
        .call(move |h| h.restart_connector_and_tasks(request()))
        .await
        .unwrap();
    assert_eq!(
        plan.connector.state, "RUNNING",
        "the connector is not selected"
    );
    assert_eq!(plan.tasks[0].state, "RESTARTING");
    wait_until("the task RUNNING again on its owner", || {
        let written = written.lock().unwrap();
        let restarting = written.iter().position(|s| s.state == State::Restarting);
        restarting.is_some_and(|at| {
            written[at..]
                .iter()
                .any(|s| s.state == State::Running && s.worker_id == owner)
        })
    })
    .await;
    let restarts = written
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.state == State::Restarting)
        .count();
    assert_eq!(restarts, 1, "only the failed task restarts (onlyFailed)");
    assert_eq!(
        cluster.statuses.connector("failing").unwrap(),
        connector_before
    );
    assert_eq!(
        cluster
            .statuses
            .task(&ConnectorTaskId::new("healthy", 0))
            .unwrap(),
        healthy_task
    );
    a.herder.stop().await;
    b.herder.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_the_leader_crashes_another_leads_and_the_old_leaders_writes_are_fenced() {
    let cluster = Cluster::new();
    let a = cluster.worker(&[]).await;
    let b = cluster.worker(&[]).await;
    wait_until("two members, a leading", || {
        cluster.group.members().len() == 2
            && a.view().is_leader
            && a.view().generation == b.view().generation
    })
    .await;
    create(&[&a, &b], "mock-0", mock_source(&[])).await;
    // a vanishes while it leads; its config store still holds the write privileges.
    let zombie_store = a.herder.shared.config.clone();
    a.crash();
    wait_until("b leads alone", || {
        b.view().is_leader && cluster.group.members().len() == 1
    })
    .await;
    create(&[&b], "mock-1", mock_source(&[])).await;
    wait_until("both connectors on b", || {
        each_job_once(&[&b], &["mock-0".into(), "mock-1".into()])
    })
    .await;
    let refused = zombie_store.put_task_configs("mock-1", &[Props::new(), Props::new()]);
    assert!(
        refused.is_err(),
        "the old leader's write is refused once b claimed the write privileges"
    );
    assert_eq!(b.herder.shared.config.snapshot().task_count("mock-1"), 1);
    a.stop_zombies();
    b.herder.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_joining_worker_takes_jobs_by_revocation_only_and_a_config_update_during_that_rebalance_applies(
) {
    let cluster = Cluster::new();
    let settings = [("scheduled.rebalance.max.delay.ms", "600000")];
    let (a, b) = cluster.two_workers(&settings).await;
    let names: Vec<String> = (0..6).map(|i| format!("mock-{i}")).collect();
    for n in &names {
        create(&[&a, &b], n, mock_source(&[])).await;
    }
    wait_until("12 jobs, 6 per worker, the tasks started", || {
        each_job_once(&[&a, &b], &names)
            && a.running().len() == 6
            && b.running().len() == 6
            && names
                .iter()
                .all(|n| state_of_task(&cluster, n).is_some_and(|(s, _)| s == State::Running))
    })
    .await;
    let before = [a.running(), b.running()];
    let counters_before = [
        a.call(|h| h.task_counters()).await,
        b.call(|h| h.task_counters()).await,
    ];
    let generation = a.view().generation;

    // c joins; while that rebalance runs, mock-0's config changes (through the leader).
    let c = cluster.worker(&settings).await;
    let mut updated = mock_source(&[("delay_ms", "12345")]);
    updated.insert("name".into(), "mock-0".into());
    a.call(move |h| h.put_connector_config("mock-0", updated, true, None))
        .await
        .unwrap();
    let all = [&a, &b, &c];
    wait_until(
        "4 jobs per worker, each once, mock-0's task on its new config",
        || {
            let config = a.herder.shared.config.snapshot();
            each_job_once(&all, &names)
                && all.iter().all(|w| w.running().len() == 4)
                && config
                    .task_config(&ConnectorTaskId::new("mock-0", 0))
                    .is_some_and(|t| t.get("delay_ms").map(String::as_str) == Some("12345"))
        },
    )
    .await;
    assert!(a.view().generation > generation);

    // a and b only gave jobs up: nothing moved between them, and every task they kept (but
    // mock-0's, restarted for its new config) ran on without a stop.
    for ((w, had), counted) in [&a, &b].iter().zip(&before).zip(&counters_before) {
        let now = w.running();
        assert!(now.is_subset(had), "{now:?} ⊄ {had:?}");
        let counters = w.call(|h| h.task_counters()).await;
        for (id, n) in counters {
            let was = counted
                .iter()
                .find(|(t, _)| *t == id)
                .map(|(_, c)| (c.starts, c.stops));
            let kept = now.contains(&id.to_string());
            if kept && id.connector != "mock-0" {
                assert_eq!(
                    Some((n.starts, n.stops)),
                    was,
                    "{id} was stopped or started although kept"
                );
            } else if !kept {
                assert_eq!(n.stops, n.starts, "{id} revoked: stopped");
            }
        }
    }
    let moved: BTreeSet<String> = c.running();
    assert!(moved
        .iter()
        .all(|j| before[0].contains(j) || before[1].contains(j)));
    for w in all {
        w.herder.stop().await;
    }
}

/// The leader's evidence of a clean stop: the owner's UNASSIGNED written in a generation from
/// the one that gave it the job up to its last round. A Java worker that stops while a round is
/// under way reports the generation it last learnt, one before the round the leader saw it in
/// (CI: a 60 s wait for a Java worker that had said goodbye).
#[test]
fn clean_stop_evidence_accepts_the_owners_unassigned_of_its_current_stint() {
    let statuses = MemoryStatusBackingStore::default();
    let task = ConnectorTaskId::new("fs", 0);
    let departed = DepartedJob {
        job: Job::Task(task.clone()),
        owner_url: "http://127.0.0.1:8083/".into(),
        generation: 8,
        held_since: 5,
    };
    let put = |state: State, worker: &str, generation: i32| {
        statuses.put_task(
            &task,
            Status {
                state,
                trace: None,
                worker_id: worker.into(),
                generation,
                version: None,
            },
        )
    };
    put(State::Running, "127.0.0.1:8083", 7);
    assert!(!clean_stop_evidence(&statuses, &departed), "still RUNNING");
    for generation in [5, 7, 8] {
        put(State::Unassigned, "127.0.0.1:8083", generation);
        assert!(
            clean_stop_evidence(&statuses, &departed),
            "UNASSIGNED in {generation}"
        );
    }
    put(State::Unassigned, "127.0.0.1:8083", 4);
    assert!(
        !clean_stop_evidence(&statuses, &departed),
        "an UNASSIGNED from before the job was given to it again"
    );
    put(State::Unassigned, "127.0.0.1:8083", 9);
    assert!(
        !clean_stop_evidence(&statuses, &departed),
        "the leader's own report of the lost job"
    );
    put(State::Unassigned, "127.0.0.1:8084", 8);
    assert!(
        !clean_stop_evidence(&statuses, &departed),
        "another worker's"
    );
}

/// Task-config writes that queue up behind the leader's write lock are written together by
/// whoever takes the lock next, and each caller gets its own outcome (issue #34: 200
/// connectors starting at once no longer wait for 200 writes one after another).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queued_task_config_writes_are_written_together_with_each_callers_outcome() {
    let cluster = Cluster::new();
    let a = cluster.worker(&[]).await;
    wait_until("a leads", || a.view().is_leader).await;
    let names: Vec<String> = (0..6).map(|i| format!("batch-{i}")).collect();
    // PAUSED: no connector runs to write task configs of its own meanwhile.
    for n in &names {
        let (name, mut config) = (n.clone(), mock_source(&[]));
        config.insert("name".into(), name.clone());
        a.call(move |h| h.put_connector_config(&name, config, false, Some(TargetState::Paused)))
            .await
            .unwrap();
    }
    let shared = a.herder.shared.clone();
    // Holding the write lock, as a write under way does, while the callers queue up.
    let held = shared.write_lock.lock().unwrap();
    let mut callers = Vec::new();
    for n in names.iter().cloned().chain(["unknown".to_string()]) {
        let shared = shared.clone();
        callers.push(std::thread::spawn(move || {
            let configs: Vec<Props> = (0..3)
                .map(|t| Props::from([("marker".to_string(), format!("{n}-{t}"))]))
                .collect();
            (n.clone(), leader_write_task_configs(&shared, &n, &configs))
        }));
    }
    let deadline = std::time::Instant::now() + PATIENCE;
    while shared.task_config_queue.lock().unwrap().len() < names.len() + 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the writes never queued"
        );
        std::thread::yield_now();
    }
    drop(held);
    for caller in callers {
        let (name, outcome) = caller.join().unwrap();
        if name == "unknown" {
            assert!(
                matches!(outcome, Err(HerderError::NotFound(_))),
                "{outcome:?}"
            );
        } else {
            outcome.unwrap();
        }
    }
    let snap = shared.config.snapshot();
    for n in &names {
        assert_eq!(snap.task_count(n), 3, "{n}");
        for t in 0..3u32 {
            let id = ConnectorTaskId::new(n, t);
            assert_eq!(
                snap.task_config(&id).and_then(|c| c.get("marker")).cloned(),
                Some(format!("{n}-{t}"))
            );
        }
    }
    assert!(shared.task_config_queue.lock().unwrap().is_empty());
    a.herder.stop().await;
}
