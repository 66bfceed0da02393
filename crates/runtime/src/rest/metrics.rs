//! `GET /metrics` (a Tributary addition): the worker's state in the Prometheus / OpenMetrics
//! text format, built at scrape time from the same view `GET /tributary/worker` shows.
//!
//! Gauges and counters: `tributary_worker_generation`, `tributary_worker_leader`,
//! `tributary_worker_rebalances_total`, `tributary_worker_rebalance_time_ms_total`,
//! `tributary_worker_jobs_stopped_last_rebalance`, `tributary_worker_static_claims_in_effect`,
//! `tributary_worker_connectors`, `tributary_worker_tasks`, and per task on this worker
//! `tributary_task_starts_total`, `tributary_task_stops_total`, `tributary_task_records_total`,
//! `tributary_task_offset_commits_total`, `tributary_task_skipped_records` (records skipped
//! under `errors.tolerance=all`) (labels `connector`, `task`).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

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
pub async fn metrics(State(s): State<RestState>) -> Result<Response, RestError> {
    let info = s.herder.worker_info();
    let tasks = call(&s, |h| Ok(h.task_counters())).await?;
    let mut registry = Registry::default();
    let num = |k: &str| info[k].as_i64().unwrap_or(0);
    gauge(
        &mut registry,
        "tributary_worker_generation",
        "Group generation of the last completed rebalance",
        num("generation"),
    );
    gauge(
        &mut registry,
        "tributary_worker_leader",
        "1 when this worker leads the group",
        i64::from(info["leader"] == true),
    );
    gauge(
        &mut registry,
        "tributary_worker_rebalances",
        "Rebalances this worker completed",
        num("rebalances"),
    );
    gauge(
        &mut registry,
        "tributary_worker_rebalance_time_ms",
        "Time spent in rebalances, ms",
        num("rebalancing_ms_total"),
    );
    gauge(
        &mut registry,
        "tributary_worker_jobs_stopped_last_rebalance",
        "Connectors and tasks this worker stopped in its last rebalance",
        num("jobs_stopped_last_rebalance"),
    );
    gauge(
        &mut registry,
        "tributary_worker_static_claims_in_effect",
        "1 when this worker's static claims are honoured",
        i64::from(info["static_in_effect"] == true),
    );
    gauge(
        &mut registry,
        "tributary_worker_connectors",
        "Connector instances running on this worker",
        info["connectors"]
            .as_array()
            .map(|a| a.len() as i64)
            .unwrap_or(0),
    );
    gauge(
        &mut registry,
        "tributary_worker_tasks",
        "Tasks running on this worker",
        info["tasks"]
            .as_array()
            .map(|a| a.len() as i64)
            .unwrap_or(0),
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
    let mut body = String::new();
    encode(&mut body, &registry)
        .map_err(|e| RestError::new(500, format!("cannot encode metrics: {e}")))?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    )
        .into_response())
}
