//! `GET /metrics`: the worker's metrics in the Prometheus / OpenMetrics text format, built at
//! scrape time.
//!
//! Connect's metric groups appear under the names the Prometheus JMX exporter gives Connect's
//! MBeans with the widely used rules (Strimzi's `connect-metrics-config`, the jmx_exporter
//! example for Connect): `kafka.connect:type=<group>,connector=C,task=T` attribute `a-b-c`
//! becomes `kafka_connect_<group without -metrics>_a_b_c{connector="C",task="T"}`, as a gauge.
//! The groups and their sources:
//!
//! - `app-info` → `kafka_connect_start_time_seconds`, `kafka_connect_version_info` and
//!   `kafka_connect_commit_id_info` (label `clientId`, the worker id; KIP-1120);
//! - `connect-worker-metrics` → `kafka_connect_worker_*` (and per connector, with a
//!   `connector` label, the `connector-*-task-count` attributes): Connect's
//!   `WorkerMetricsGroup`;
//! - `connect-worker-rebalance-metrics` → `kafka_connect_worker_rebalance_*` (distributed
//!   workers): Connect's `DistributedHerder.DistributedHerderMetrics`;
//! - `connector-metrics` → `kafka_connect_connector_{connector_class,connector_type,
//!   connector_version,status}{connector, <attribute>="<value>"} 1` (string attributes become a
//!   label, as the exporter's rules do);
//! - `connector-task-metrics` → `kafka_connect_connector_task_*` and
//!   `kafka_connect_connector_task_status{connector,task,status} 1`;
//! - `source-task-metrics` / `sink-task-metrics` / `task-error-metrics` →
//!   `kafka_connect_source_task_*`, `kafka_connect_sink_task_*`, `kafka_connect_task_error_*`;
//! - the task clients' librdkafka statistics, under the names the same rules give Java's client
//!   metrics (`kafka_producer_*`, `kafka_consumer_*`, `kafka_consumer_fetch_manager_*`, label
//!   `clientId`).
//!
//! The measurements come from [`crate::worker::metrics`]; `docs/metrics.md` lists every
//! series. Tributary adds task liveness (`tributary_task_last_call_age_ms`,
//! `tributary_task_call_running_ms`, `tributary_task_stalled`), connector health
//! (`tributary_connector_health`, `tributary_connector_failed_tasks`) and automatic restart
//! counts (`tributary_task_auto_restarts_total`, `tributary_connector_auto_restarts_total`), and
//! keeps its earlier series (from `GET /tributary/worker`):
//! `tributary_worker_generation`, `tributary_worker_leader`, `tributary_worker_rebalances`,
//! `tributary_worker_rebalance_time_ms`, `tributary_worker_jobs_stopped_last_rebalance`,
//! `tributary_worker_static_claims_in_effect`, `tributary_worker_connectors`,
//! `tributary_worker_tasks`, and per task `tributary_task_{starts,stops,records,
//! offset_commits,skipped_records}` (labels `connector`, `task`).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rdkafka::statistics::Statistics;

use crate::storage::status::State as RunState;
use crate::worker::metrics::{consumer_lags, TaskKind};
use crate::worker::{TaskCounters, Worker};
use crate::ConnectorTaskId;

use super::error::RestError;
use super::{call, RestState};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabels {
    connector: String,
    task: String,
}

fn gauge(registry: &mut Registry, name: &str, help: &str, value: i64) {
    let g: Gauge = Gauge::default();
    g.set(value);
    registry.register(name, help, g);
}

/// A per-task counter family: name, help text, and the counter it reports.
type CounterFamily = (
    &'static str,
    &'static str,
    fn(&crate::worker::TaskCountersSnapshot) -> u64,
);

/// `GET /metrics`.
pub async fn metrics(
    State(s): State<RestState>,
    visible: super::authorization::Visible,
) -> Result<Response, RestError> {
    let info = s.herder.worker_info();
    let tasks = call(&s, |h| Ok(h.task_counters())).await?;
    let connect = call(&s, |h| {
        let statuses = h.status_store();
        let all_connectors = h.connectors().unwrap_or_default();
        let mut f = connect_families(
            h.worker(),
            statuses.as_ref(),
            &h.worker_info(),
            &all_connectors,
        );
        if let Some(r) = h.worker_info().connectors_dir {
            f.set(
                "tributary_connectors_drift_total",
                "Changes this worker made as leader to bring managed connectors changed over REST back in line with tributary.connectors.dir",
                &[],
                r.drift_total as f64,
            );
            f.set(
                "tributary_connectors_dir_changes_total",
                "Changes this worker made as leader to keep the cluster in line with tributary.connectors.dir",
                &[],
                r.changes_total as f64,
            );
            f.set(
                "tributary_connectors_dir_errors",
                "Problems of the last reconciliation of tributary.connectors.dir (unreadable files, refused configs)",
                &[],
                r.errors.len() as f64,
            );
        }
        for (instance, restarts) in h.auto_restart_counts() {
            match instance {
                crate::herder::auto_restart::Instance::Connector(c) => f.set(
                    "tributary_connector_auto_restarts_total",
                    "Automatic restarts this worker requested for the connector instance (tributary.restart.*)",
                    &[("connector", &c)],
                    f64::from(restarts),
                ),
                crate::herder::auto_restart::Instance::Task(t) => f.set(
                    "tributary_task_auto_restarts_total",
                    "Automatic restarts this worker requested for the task (tributary.restart.*)",
                    &[("connector", &t.connector), ("task", &t.task.to_string())],
                    f64::from(restarts),
                ),
            }
        }
        Ok(f)
    })
    .await?;
    let mut registry = Registry::default();
    // A standalone worker reports no group: its group gauges are 0.
    let group = info.group.clone().unwrap_or_default();
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    gauge(
        &mut registry,
        "tributary_worker_generation",
        "Group generation of the last completed rebalance",
        i64::from(group.generation),
    );
    gauge(
        &mut registry,
        "tributary_worker_leader",
        "1 when this worker leads the group",
        i64::from(group.leader),
    );
    gauge(
        &mut registry,
        "tributary_worker_rebalances",
        "Rebalances this worker completed",
        count(group.rebalances),
    );
    gauge(
        &mut registry,
        "tributary_worker_rebalance_time_ms",
        "Time spent in rebalances, ms",
        count(group.rebalancing_ms_total),
    );
    gauge(
        &mut registry,
        "tributary_worker_jobs_stopped_last_rebalance",
        "Connectors and tasks this worker stopped in its last rebalance",
        count(group.jobs_stopped_last_rebalance),
    );
    gauge(
        &mut registry,
        "tributary_worker_static_claims_in_effect",
        "1 when this worker's static claims are honoured",
        i64::from(group.static_in_effect),
    );
    gauge(
        &mut registry,
        "tributary_worker_connectors",
        "Connector instances running on this worker",
        group.connectors.len() as i64,
    );
    gauge(
        &mut registry,
        "tributary_worker_tasks",
        "Tasks running on this worker",
        group.tasks.len() as i64,
    );
    let families: [CounterFamily; 5] = [
        (
            "tributary_task_starts",
            "Times the task was started on this worker",
            |c| c.starts,
        ),
        (
            "tributary_task_stops",
            "Times the task was stopped on this worker",
            |c| c.stops,
        ),
        (
            "tributary_task_records",
            "Records the task moved on this worker",
            |c| c.records,
        ),
        (
            "tributary_task_offset_commits",
            "Offset commits of the task on this worker",
            |c| c.offset_commits,
        ),
        (
            "tributary_task_skipped_records",
            "Records the task skipped because errors.tolerance=all tolerated their failure",
            |c| c.skipped,
        ),
    ];
    for (name, help, get) in families {
        let family: Family<TaskLabels, Gauge> = Family::default();
        for (id, c) in &tasks {
            family
                .get_or_create(&TaskLabels {
                    connector: id.connector.clone(),
                    task: id.task.to_string(),
                })
                .set(get(c) as i64);
        }
        registry.register(name, help, family);
    }
    connect.register(&mut registry);
    let mut body = String::new();
    encode(&mut body, &registry)
        .map_err(|e| RestError::new(500, format!("cannot encode metrics: {e}")))?;
    let body = visible_samples(&body, &visible);
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    )
        .into_response())
}

/// The exposition `text` as the caller may see it (REST authorization, issue #42): a sample of
/// a connector it may not read is left out (the connector named by its `connector` label, or by
/// the client id of a task's client, `connector-producer-<c>-<n>` and the like), and so is one
/// labelled with a topic or the class of a connector whose config it may not see; what a
/// connector's config providers resolved is replaced by the references in its samples.
fn visible_samples(text: &str, visible: &super::authorization::Visible) -> String {
    let mut out = String::with_capacity(text.len());
    // Each connector's values, looked up once per scrape.
    let mut redactions: HashMap<String, crate::config::secrets::Redactions> = HashMap::new();
    for line in text.lines() {
        let labels = if line.starts_with('#') {
            Vec::new()
        } else {
            sample_labels(line)
        };
        let label = |k: &str| labels.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let connector = label("connector")
            .map(str::to_string)
            .or_else(|| label("clientId").and_then(client_connector));
        let Some(c) = connector else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let from_config = ["topic", "connector_class"]
            .iter()
            .any(|k| label(k).is_some());
        if !visible.connector(&c) || (from_config && !visible.shows_config(&c)) {
            continue;
        }
        let own = redactions
            .entry(c.clone())
            .or_insert_with(|| crate::config::secrets::of_connector(&c));
        out.push_str(&own.redact(line));
        out.push('\n');
    }
    out
}

/// The connector a task's Kafka client belongs to, from its client id
/// (`connector-producer-<connector>-<task>`, `connector-consumer-…`, `connector-dlq-producer-…`).
fn client_connector(client_id: &str) -> Option<String> {
    let rest = [
        "connector-dlq-producer-",
        "connector-producer-",
        "connector-consumer-",
    ]
    .iter()
    .find_map(|p| client_id.strip_prefix(p))?;
    let (connector, task) = rest.rsplit_once('-')?;
    task.parse::<u32>().ok().map(|_| connector.to_string())
}

/// The labels of a sample line `name{a="x",b="y\"z"} 1`, values unescaped.
fn sample_labels(line: &str) -> Vec<(String, String)> {
    let Some(open) = line.find('{') else {
        return Vec::new();
    };
    let mut labels = Vec::new();
    let mut chars = line[open + 1..].chars();
    loop {
        let name: String = chars.by_ref().take_while(|c| *c != '=').collect();
        let name = name.trim_start_matches(',').trim().to_string();
        if name.is_empty() || name.contains('}') || chars.next() != Some('"') {
            return labels;
        }
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(other) => value.push(other),
                    None => return labels,
                },
                '"' => break,
                other => value.push(other),
            }
        }
        labels.push((name, value));
    }
}

/// A label set: (name, value) pairs in order.
type Labels = Vec<(String, String)>;

/// Gauge families collected during a scrape, registered in first-use order.
#[derive(Default)]
struct Families {
    order: Vec<(String, String)>,
    families: BTreeMap<String, Family<Labels, Gauge<f64, AtomicU64>>>,
}

impl Families {
    /// Sets `name{labels}` to `value` (the family is created with `help` on first use).
    fn set(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        let family = self.families.entry(name.to_string()).or_insert_with(|| {
            self.order.push((name.to_string(), help.to_string()));
            Family::default()
        });
        let labels: Labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        family.get_or_create(&labels).set(value);
    }

    fn register(mut self, registry: &mut Registry) {
        for (name, help) in self.order {
            if let Some(f) = self.families.remove(&name) {
                registry.register(name, help, f);
            }
        }
    }
}

/// The metrics connectors and tasks registered for themselves (KIP-877, group `plugins`):
/// `kafka_connect_plugins_<name>`, labelled by every tag (`connector`, `task`, then the
/// plugin's own), as the JMX exporter's rules name MBean `kafka.connect:type=plugins,…`.
fn plugin_group(f: &mut Families, samples: &[tributary_api::metrics::Sample]) {
    for sample in samples {
        let name = format!("kafka_connect_plugins_{}", prometheus_name(&sample.name));
        let labels: Vec<(String, &str)> = sample
            .tags
            .iter()
            .map(|(k, v)| (prometheus_name(k), v.as_str()))
            .collect();
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let help = if sample.description.is_empty() {
            "A metric the plugin registered (KIP-877)"
        } else {
            sample.description.as_str()
        };
        f.set(&name, help, &labels, sample.value);
    }
}

/// A metric or label name as the JMX exporter writes it: lower case, every character outside
/// `[a-z0-9_]` replaced by `_`.
fn prometheus_name(name: &str) -> String {
    name.chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_') => c,
            _ => '_',
        })
        .collect()
}

/// Connect's state names as its metrics report them (`running`, `failed`, …).
fn state_name(state: RunState) -> String {
    state.as_str().to_ascii_lowercase()
}

/// A share of two counts (0 when both are 0), as Connect's startup percentages.
fn share(part: u64, other: u64) -> f64 {
    if part + other == 0 {
        0.0
    } else {
        part as f64 / (part + other) as f64
    }
}

/// Every Connect metric group of this worker (see the module docs for the names).
fn connect_families(
    worker: &Arc<Worker>,
    statuses: &dyn crate::storage::status::StatusBackingStore,
    info: &crate::herder::info::WorkerInfo,
    all_connectors: &[String],
) -> Families {
    let mut f = Families::default();
    let tasks = worker.running_task_metrics();
    let connectors = worker.running_connectors();
    worker_group(&mut f, worker, &tasks, &connectors, statuses);
    // The producers source tasks share, under their own client ids; each task's records on
    // them are under the task's (issue #34).
    for stats in worker.shared_producers.statistics() {
        client_group(&mut f, &stats);
    }
    if let Some(group) = &info.group {
        rebalance_group(&mut f, group);
    }
    plugin_group(&mut f, &worker.plugins.plugin_metrics().samples());
    for (name, class, kind, version) in &connectors {
        let c = name.as_str();
        let help = "Connect connector-metrics string attribute, as a label (value 1)";
        f.set(
            "kafka_connect_connector_connector_class",
            help,
            &[("connector", c), ("connector_class", class)],
            1.0,
        );
        let kind = match kind {
            Some(tributary_api::connector::ConnectorType::Source) => "source",
            Some(tributary_api::connector::ConnectorType::Sink) => "sink",
            None => "unknown",
        };
        f.set(
            "kafka_connect_connector_connector_type",
            help,
            &[("connector", c), ("connector_type", kind)],
            1.0,
        );
        f.set(
            "kafka_connect_connector_connector_version",
            help,
            &[
                ("connector", c),
                ("connector_version", version.as_deref().unwrap_or("unknown")),
            ],
            1.0,
        );
        if let Some(st) = statuses.connector(name) {
            f.set(
                "kafka_connect_connector_status",
                help,
                &[("connector", c), ("status", &state_name(st.state))],
                1.0,
            );
        }
    }
    for (id, counters) in &tasks {
        task_groups(&mut f, id, counters, statuses);
        if let Some(t) = worker.task_throttle(id) {
            let task = id.task.to_string();
            let l: [(&str, &str); 2] = [("connector", &id.connector), ("task", &task)];
            f.set(
                "tributary_task_throttled_seconds_total",
                "Seconds the task waited for its rate limits (tributary.throttle.*)",
                &l,
                t.throttled_ms_total as f64 / 1000.0,
            );
            f.set(
                "tributary_task_throttled",
                "1 when the task waited for its rate limits within the last 2 s (it runs at its limit)",
                &l,
                f64::from(u8::from(t.at_limit)),
            );
        }
        if let Some(p) = worker.task_progress(id) {
            let task = id.task.to_string();
            let l: [(&str, &str); 2] = [("connector", &id.connector), ("task", &task)];
            f.set(
                "tributary_task_last_call_age_ms",
                "Ms since the task's loop last completed a poll/put turn (NaN before the first)",
                &l,
                p.last_call_age_ms.map(|v| v as f64).unwrap_or(f64::NAN),
            );
            f.set(
                "tributary_task_call_running_ms",
                "Ms the task's running poll/put call has run (0: none running)",
                &l,
                p.call_running_ms.unwrap_or(0) as f64,
            );
            f.set(
                "tributary_task_stalled",
                "1 when the task's poll/put has run for tributary.task.stall.threshold.ms or more",
                &l,
                f64::from(u8::from(p.stalled)),
            );
        }
    }
    // Every connector's health, as this worker sees the statuses (the same on every worker).
    for (name, summary) in crate::herder::health::summaries(statuses, all_connectors) {
        f.set(
            "tributary_connector_health",
            "1, with the connector's health (healthy, degraded, failed, paused, stopped, unassigned, restarting) as label",
            &[("connector", &name), ("health", summary.health.as_label())],
            1.0,
        );
        f.set(
            "tributary_connector_failed_tasks",
            "The connector's FAILED tasks, cluster-wide",
            &[("connector", &name)],
            summary.count("FAILED") as f64,
        );
    }
    f
}

/// `connect-worker-metrics`, worker-wide and per connector.
fn worker_group(
    f: &mut Families,
    worker: &Worker,
    tasks: &[(ConnectorTaskId, Arc<TaskCounters>)],
    connectors: &[(
        String,
        String,
        Option<tributary_api::connector::ConnectorType>,
        Option<String>,
    )],
    statuses: &dyn crate::storage::status::StatusBackingStore,
) {
    let m = &worker.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    // Connect's `kafka.connect:type=app-info,client-id=<worker id>` (`AppInfoParser`; KIP-1120
    // tags its metrics with the client id), under the names Strimzi's exporter rules give it.
    let client = ("clientId", worker.worker_id.as_str());
    f.set(
        "kafka_connect_start_time_seconds",
        "When the worker started, seconds since the epoch (app-info start-time-ms)",
        &[client],
        load(&m.start_time_ms) as f64 / 1000.0,
    );
    f.set(
        "kafka_connect_version_info",
        "The Kafka Connect version the worker answers as (app-info version)",
        &[client, ("version", crate::COMPATIBLE_KAFKA_VERSION)],
        1.0,
    );
    let commit = format!("tributary-{}", env!("CARGO_PKG_VERSION"));
    f.set(
        "kafka_connect_commit_id_info",
        "The build the worker runs (app-info commit-id)",
        &[client, ("commit_id", commit.as_str())],
        1.0,
    );
    f.set(
        "kafka_connect_worker_connector_count",
        "Connectors run in this worker",
        &[],
        connectors.len() as f64,
    );
    f.set(
        "kafka_connect_worker_task_count",
        "Tasks run in this worker",
        &[],
        tasks.len() as f64,
    );
    for (what, ok, failed) in [
        (
            "connector",
            load(&m.connector_startup_success),
            load(&m.connector_startup_failure),
        ),
        (
            "task",
            load(&m.task_startup_success),
            load(&m.task_startup_failure),
        ),
    ] {
        let name = |attr: &str| format!("kafka_connect_worker_{what}_startup_{attr}");
        f.set(
            &name("attempts_total"),
            &format!("{what} startups this worker attempted"),
            &[],
            (ok + failed) as f64,
        );
        f.set(
            &name("success_total"),
            &format!("{what} starts that succeeded"),
            &[],
            ok as f64,
        );
        f.set(
            &name("failure_total"),
            &format!("{what} starts that failed"),
            &[],
            failed as f64,
        );
        f.set(
            &name("success_percentage"),
            &format!("Share of this worker's {what} starts that succeeded (0..1)"),
            &[],
            share(ok, failed),
        );
        f.set(
            &name("failure_percentage"),
            &format!("Share of this worker's {what} starts that failed (0..1)"),
            &[],
            share(failed, ok),
        );
    }
    // Per connector: its tasks on this worker by state.
    let mut per_connector: BTreeMap<&str, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for (name, ..) in connectors {
        per_connector.entry(name.as_str()).or_default();
    }
    for (id, _) in tasks {
        let state = statuses
            .task(id)
            .filter(|s| s.worker_id == worker.worker_id)
            .map(|s| s.state);
        let key = match state {
            Some(RunState::Running) => "running",
            Some(RunState::Paused) => "paused",
            Some(RunState::Failed) => "failed",
            Some(RunState::Restarting) => "restarting",
            Some(RunState::Destroyed) => "destroyed",
            _ => "unassigned",
        };
        let counts = per_connector.entry(id.connector.as_str()).or_default();
        *counts.entry("total").or_default() += 1;
        *counts.entry(key).or_default() += 1;
    }
    for (connector, counts) in per_connector {
        for key in [
            "total",
            "running",
            "paused",
            "failed",
            "unassigned",
            "destroyed",
            "restarting",
        ] {
            f.set(
                &format!("kafka_connect_worker_connector_{key}_task_count"),
                &format!("The connector's tasks on this worker ({key})"),
                &[("connector", connector)],
                counts.get(key).copied().unwrap_or(0) as f64,
            );
        }
    }
}

/// `connect-worker-rebalance-metrics` (distributed workers).
fn rebalance_group(f: &mut Families, group: &crate::herder::info::GroupView) {
    let completed = group.rebalances as f64;
    f.set(
        "kafka_connect_worker_rebalance_completed_rebalances_total",
        "Rebalances this worker completed",
        &[],
        completed,
    );
    f.set(
        "kafka_connect_worker_rebalance_rebalancing",
        "1 while this worker is rebalancing",
        &[],
        f64::from(u8::from(group.rebalancing)),
    );
    f.set(
        "kafka_connect_worker_rebalance_epoch",
        "The group generation this worker is in",
        &[],
        f64::from(group.generation),
    );
    let avg = if completed > 0.0 {
        group.rebalancing_ms_total as f64 / completed
    } else {
        f64::NAN
    };
    f.set(
        "kafka_connect_worker_rebalance_rebalance_avg_time_ms",
        "Mean time of this worker's rebalances, ms",
        &[],
        avg,
    );
    f.set(
        "kafka_connect_worker_rebalance_rebalance_max_time_ms",
        "Longest rebalance of this worker, ms",
        &[],
        if completed > 0.0 {
            group.rebalance_max_ms as f64
        } else {
            f64::NAN
        },
    );
    let last = group.last_rebalance_completed_ms;
    f.set(
        "kafka_connect_worker_rebalance_time_since_last_rebalance_ms",
        "Time since this worker completed its last rebalance, ms (-1 before the first)",
        &[],
        if last > 0 {
            (crate::worker::metrics::now_ms() - last).max(0) as f64
        } else {
            -1.0
        },
    );
}

/// `connector-task-metrics`, `source-task-metrics` or `sink-task-metrics`, `task-error-metrics`
/// and the task client's statistics.
fn task_groups(
    f: &mut Families,
    id: &ConnectorTaskId,
    counters: &TaskCounters,
    statuses: &dyn crate::storage::status::StatusBackingStore,
) {
    let task = id.task.to_string();
    let l: [(&str, &str); 2] = [("connector", &id.connector), ("task", &task)];
    let m = &counters.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    if let Some(st) = statuses.task(id) {
        f.set(
            "kafka_connect_connector_task_status",
            "The task's status (value 1)",
            &[l[0], l[1], ("status", &state_name(st.state))],
            1.0,
        );
    }
    let (running, paused) = m.state_ratios();
    let (ok, failed) = m.commit_percentages();
    let ct = "kafka_connect_connector_task_";
    for (attr, help, v) in [
        (
            "running_ratio",
            "Share of time the task spent running",
            running,
        ),
        ("pause_ratio", "Share of time the task spent paused", paused),
        (
            "offset_commit_avg_time_ms",
            "Mean offset commit time, ms",
            m.commit_time.avg_ms(),
        ),
        (
            "offset_commit_max_time_ms",
            "Longest offset commit, ms",
            m.commit_time.max_ms(),
        ),
        (
            "offset_commit_success_percentage",
            "Share of offset commits that succeeded",
            ok,
        ),
        (
            "offset_commit_failure_percentage",
            "Share of offset commits that failed",
            failed,
        ),
        (
            "batch_size_avg",
            "Mean records per poll/put batch",
            m.batch_sizes.avg(),
        ),
        (
            "batch_size_max",
            "Largest poll/put batch",
            m.batch_sizes.max(),
        ),
    ] {
        f.set(&format!("{ct}{attr}"), help, &l, v);
    }
    match m.kind() {
        Some(TaskKind::Source) => {
            let st = "kafka_connect_source_task_";
            for (attr, help, v) in [
                (
                    "source_record_poll_total",
                    "Records returned by poll",
                    load(&m.poll_total),
                ),
                (
                    "source_record_write_total",
                    "Records written to Kafka after transformations",
                    load(&m.write_total),
                ),
                (
                    "poll_batch_avg_time_ms",
                    "Mean poll time, ms",
                    m.poll_time.avg_ms(),
                ),
                (
                    "poll_batch_max_time_ms",
                    "Longest poll, ms",
                    m.poll_time.max_ms(),
                ),
                (
                    "source_record_active_count",
                    "Records sent and not yet acknowledged",
                    m.active.load(Ordering::Relaxed) as f64,
                ),
                (
                    "source_record_active_count_max",
                    "Most records sent and not yet acknowledged",
                    m.active_max.load(Ordering::Relaxed) as f64,
                ),
            ] {
                f.set(&format!("{st}{attr}"), help, &l, v);
            }
        }
        Some(TaskKind::Sink) => {
            let st = "kafka_connect_sink_task_";
            let lag_max = m
                .client_statistics()
                .map(|s| consumer_lags(&s).map(|(_, _, lag)| lag).max().unwrap_or(0) as f64)
                .unwrap_or(f64::NAN);
            for (attr, help, v) in [
                (
                    "sink_record_read_total",
                    "Records read from Kafka",
                    load(&m.read_total),
                ),
                (
                    "sink_record_send_total",
                    "Records handed to put after transformations",
                    load(&m.send_total),
                ),
                (
                    "put_batch_avg_time_ms",
                    "Mean put time, ms",
                    m.put_time.avg_ms(),
                ),
                (
                    "put_batch_max_time_ms",
                    "Longest put, ms",
                    m.put_time.max_ms(),
                ),
                (
                    "offset_commit_completion_total",
                    "Offset commits that completed",
                    load(&m.commit_completion_total),
                ),
                (
                    "offset_commit_seq_no",
                    "Offset commit attempts",
                    load(&m.commit_seq_no),
                ),
                (
                    "partition_count",
                    "Partitions assigned to the task",
                    m.partition_count.load(Ordering::Relaxed) as f64,
                ),
                (
                    "sink_record_lag_max",
                    "Largest consumer lag over the task's partitions",
                    lag_max,
                ),
            ] {
                f.set(&format!("{st}{attr}"), help, &l, v);
            }
        }
        None => {}
    }
    let e = &m.errors;
    let te = "kafka_connect_task_error_";
    for (attr, help, v) in [
        (
            "total_record_failures",
            "Failed record operations (retries included)",
            load(&e.record_failures),
        ),
        (
            "total_record_errors",
            "Records whose processing failed",
            load(&e.record_errors),
        ),
        (
            "total_records_skipped",
            "Records skipped because of errors",
            load(&e.records_skipped),
        ),
        ("total_retries", "Retried operations", load(&e.retries)),
        (
            "total_errors_logged",
            "Errors written to the log",
            load(&e.errors_logged),
        ),
        (
            "deadletterqueue_produce_requests",
            "Records sent to the dead letter queue",
            load(&e.dlq_requests),
        ),
        (
            "deadletterqueue_produce_failures",
            "Failed dead letter queue sends",
            load(&e.dlq_failures),
        ),
        (
            "last_error_timestamp",
            "When the last error happened, ms since the epoch (0: none)",
            e.last_error_ms.load(Ordering::Relaxed) as f64,
        ),
    ] {
        f.set(&format!("{te}{attr}"), help, &l, v);
    }
    if let Some(stats) = m.client_statistics() {
        client_group(f, &stats);
    }
}

/// Round-trip times over the client's brokers: (mean weighted by samples, max), ms.
fn rtt_ms(s: &Statistics) -> (f64, f64) {
    let (mut sum, mut cnt, mut max) = (0i64, 0i64, 0i64);
    for b in s.brokers.values() {
        if let Some(w) = &b.rtt {
            sum += w.sum;
            cnt += w.cnt;
            max = max.max(w.max);
        }
    }
    if cnt == 0 {
        (f64::NAN, f64::NAN)
    } else {
        (sum as f64 / cnt as f64 / 1000.0, max as f64 / 1000.0)
    }
}

/// A task client's librdkafka statistics under the names of Java's client metrics.
fn client_group(f: &mut Families, s: &Statistics) {
    let l: [(&str, &str); 1] = [("clientId", &s.client_id)];
    let (rtt_avg, rtt_max) = rtt_ms(s);
    if s.client_type == "producer" {
        let (mut q_sum, mut q_cnt, mut q_max) = (0i64, 0i64, 0i64);
        for b in s.brokers.values() {
            if let Some(w) = &b.int_latency {
                q_sum += w.sum;
                q_cnt += w.cnt;
                q_max = q_max.max(w.max);
            }
        }
        let (q_avg, q_max) = if q_cnt == 0 {
            (f64::NAN, f64::NAN)
        } else {
            (q_sum as f64 / q_cnt as f64 / 1000.0, q_max as f64 / 1000.0)
        };
        for (name, help, v) in [
            (
                "kafka_producer_record_send_total",
                "Records the producer sent (librdkafka txmsgs)",
                s.txmsgs as f64,
            ),
            (
                "kafka_producer_byte_total",
                "Record bytes the producer sent (librdkafka txmsg_bytes)",
                s.txmsg_bytes as f64,
            ),
            (
                "kafka_producer_outgoing_byte_total",
                "Bytes sent to brokers (librdkafka tx_bytes)",
                s.tx_bytes as f64,
            ),
            (
                "kafka_producer_incoming_byte_total",
                "Bytes received from brokers (librdkafka rx_bytes)",
                s.rx_bytes as f64,
            ),
            (
                "kafka_producer_request_total",
                "Requests sent to brokers (librdkafka tx)",
                s.tx as f64,
            ),
            (
                "kafka_producer_response_total",
                "Responses received from brokers (librdkafka rx)",
                s.rx as f64,
            ),
            (
                "kafka_producer_request_latency_avg",
                "Mean broker round-trip time, ms (librdkafka rtt)",
                rtt_avg,
            ),
            (
                "kafka_producer_request_latency_max",
                "Longest broker round-trip time, ms (librdkafka rtt)",
                rtt_max,
            ),
            (
                "kafka_producer_record_queue_time_avg",
                "Mean time records waited in the producer queue, ms (librdkafka int_latency)",
                q_avg,
            ),
            (
                "kafka_producer_record_queue_time_max",
                "Longest time a record waited in the producer queue, ms (librdkafka int_latency)",
                q_max,
            ),
            (
                "kafka_producer_records_in_queue",
                "Records in the producer queue (librdkafka msg_cnt)",
                s.msg_cnt as f64,
            ),
        ] {
            f.set(name, help, &l, v);
        }
    } else if s.client_type == "consumer" {
        let mut lag_max = -1i64;
        for (topic, partition, lag) in consumer_lags(s) {
            lag_max = lag_max.max(lag);
            let p = partition.to_string();
            f.set(
                "kafka_consumer_fetch_manager_records_lag",
                "Consumer lag of a partition, records (librdkafka consumer_lag)",
                &[l[0], ("topic", topic), ("partition", &p)],
                lag as f64,
            );
        }
        for (name, help, v) in [
            ("kafka_consumer_fetch_manager_records_consumed_total", "Records the consumer received (librdkafka rxmsgs)", s.rxmsgs as f64),
            ("kafka_consumer_fetch_manager_bytes_consumed_total", "Record bytes the consumer received (librdkafka rxmsg_bytes)", s.rxmsg_bytes as f64),
            (
                "kafka_consumer_fetch_manager_records_lag_max",
                "Largest consumer lag over the assigned partitions, records (librdkafka consumer_lag)",
                if lag_max < 0 { f64::NAN } else { lag_max as f64 },
            ),
            ("kafka_consumer_fetch_manager_fetch_latency_avg", "Mean broker round-trip time, ms (librdkafka rtt)", rtt_avg),
            ("kafka_consumer_fetch_manager_fetch_latency_max", "Longest broker round-trip time, ms (librdkafka rtt)", rtt_max),
            ("kafka_consumer_incoming_byte_total", "Bytes received from brokers (librdkafka rx_bytes)", s.rx_bytes as f64),
            ("kafka_consumer_outgoing_byte_total", "Bytes sent to brokers (librdkafka tx_bytes)", s.tx_bytes as f64),
            ("kafka_consumer_request_total", "Requests sent to brokers (librdkafka tx)", s.tx as f64),
        ] {
            f.set(name, help, &l, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_labels_are_read_with_their_escapes() {
        assert_eq!(
            sample_labels(r#"x_total{connector="a\"b",topic="t\\1",task="0"} 3"#),
            vec![
                ("connector".to_string(), "a\"b".to_string()),
                ("topic".to_string(), "t\\1".to_string()),
                ("task".to_string(), "0".to_string()),
            ]
        );
        assert!(sample_labels("x_total 3").is_empty());
        assert_eq!(
            client_connector("connector-producer-a-src-0").as_deref(),
            Some("a-src")
        );
        assert_eq!(
            client_connector("connector-dlq-producer-b-1-12").as_deref(),
            Some("b-1")
        );
        assert_eq!(client_connector("tributary-source-producer-1"), None);
        assert!(sample_labels("x_total{} 3").is_empty());
    }
}
