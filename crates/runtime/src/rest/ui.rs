//! The live view of the cluster (Tributary, beyond Connect): `GET /ui`, one self-contained
//! HTML page (its script and style inline, compiled into the binary) that polls this worker's
//! JSON endpoints every second, and `GET /tributary/rebalances`, the timeline of recent
//! rebalances it shows (see [`crate::herder::rebalances`]); `GET /tributary/history`, the last
//! 15 minutes of the jobs' counters its plots draw (see [`crate::worker::history`]), sampled
//! by [`run_history_sampler`].

use std::sync::Weak;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::authorization::{RequestPrincipal, Visible};
use super::error::RestError;
use super::RestState;
use crate::worker::history;
use crate::worker::Worker;

/// The page: `ui/index.html`, with its script and style inline.
pub const PAGE: &str = include_str!("ui/index.html");

/// `GET /ui`: the live view (`text/html`).
pub async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}

/// The query of `GET /tributary/rebalances`.
#[derive(Debug, Deserialize)]
pub struct RebalancesQuery {
    /// `leader`: answer with the leader's timeline (forwarded to the leader), whose records
    /// name the members that joined and left and the jobs that moved.
    scope: Option<String>,
}

/// `GET /tributary/rebalances[?scope=leader]`: `{"worker_id","leader_url","rebalances":[…]}`,
/// the last rounds this worker (or with `scope=leader`, the leader) completed, oldest first
/// ([`crate::herder::rebalances::RebalanceRecord`]). A standalone worker has none. 400 for
/// another `scope`; with `scope=leader` and no known leader, this worker answers. Jobs the
/// caller may not read (REST authorization, issue #36) are left out.
pub async fn rebalances(
    State(s): State<RestState>,
    Query(q): Query<RebalancesQuery>,
    visible: Visible,
) -> Result<Json<serde_json::Value>, RestError> {
    let info = s.herder.worker_info();
    match q.scope.as_deref() {
        None => {}
        Some("leader") => {
            if let (Some(false), Some(url)) = (
                info.group.as_ref().map(|g| g.leader),
                info.group.as_ref().and_then(|g| g.leader_url.as_deref()),
            ) {
                let mut e = RestError::new(409, "this worker is not the leader");
                e.forward_to = Some(url.trim_end_matches('/').to_string());
                return Err(e);
            }
        }
        Some(other) => {
            return Err(RestError::new(
                400,
                format!("scope must be leader, not {other}"),
            ))
        }
    }
    Ok(Json(serde_json::json!({
        "worker_id": s.herder.worker_id(),
        "leader_url": info.group.as_ref().and_then(|g| g.leader_url.clone()),
        "rebalances": visible_rebalances(s.herder.rebalances(), &visible),
    })))
}

/// The records with only the jobs `visible` lets the caller see (REST authorization).
fn visible_rebalances(
    mut records: Vec<crate::herder::rebalances::RebalanceRecord>,
    visible: &Visible,
) -> Vec<crate::herder::rebalances::RebalanceRecord> {
    if visible.is_all() {
        return records;
    }
    for r in &mut records {
        for jobs in [&mut r.assigned, &mut r.revoked] {
            jobs.connectors.retain(|c| visible.connector(c));
            jobs.tasks.retain(|t| visible.job(t));
        }
        if let Some(moved) = r.moved.as_mut() {
            moved.retain(|m| visible.job(&m.job));
        }
    }
    records
}

/// Samples `worker`'s jobs into its history every [`history::INTERVAL_MS`] until the worker is
/// dropped (spawned by the REST server: the history is what the live view shows).
pub async fn run_history_sampler(worker: Weak<Worker>) {
    let mut tick = tokio::time::interval(Duration::from_millis(history::INTERVAL_MS as u64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(w) = worker.upgrade() else { return };
        w.sample_history(crate::worker::metrics::now_ms());
    }
}

/// The query of `GET /tributary/history`.
#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    /// `cluster`: every member's history (forwarded to the leader, which asks each member).
    scope: Option<String>,
    /// Only points after this time, ms since the epoch (the live view asks for what is new).
    since: Option<String>,
}

/// How long the leader waits for a member's history, ms.
const MEMBER_HISTORY_TIMEOUT_MS: u64 = 5_000;

/// `GET /tributary/history[?scope=cluster][&since=<ms>]`: `{"workers":[{"worker_id",
/// "worker_url","interval_ms","window_ms","connectors":[{"connector","times"}],"tasks":
/// [{"connector","task","kind","points":[[t,in,out,lag,throttled_ms,starts],…]}]}],
/// "unreachable":[{"url","error"}]}` ([`crate::worker::history`]): this worker's last 15
/// minutes, or with `scope=cluster` every member's as the leader knows them (a member that
/// does not answer, such as a Java worker, is listed in `unreachable`). Only connectors the
/// caller may read (REST authorization, issue #36) are shown. 400 for another `scope` or a
/// `since` that is not a number.
pub async fn history(
    State(s): State<RestState>,
    Query(q): Query<HistoryQuery>,
    visible: Visible,
    principal: Option<axum::Extension<RequestPrincipal>>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, RestError> {
    let since = match q.since.as_deref() {
        None => 0,
        Some(v) => v.trim().parse::<i64>().map_err(|_| {
            RestError::new(
                400,
                format!("since must be a time in ms since the epoch, not {v}"),
            )
        })?,
    };
    let who = principal.as_ref().map(|p| p.0 .0.clone());
    let keep = |connector: &str| visible.connector(connector);
    let own = {
        let worker = s.herder.worker();
        let mut snapshot = worker.history.snapshot(&worker.worker_id, since, &keep);
        snapshot.worker_url = s.advertised_url.trim_end_matches('/').to_string();
        snapshot
    };
    let info = s.herder.worker_info();
    match q.scope.as_deref() {
        None => {
            return Ok(Json(
                serde_json::json!({"workers": [own], "unreachable": []}),
            ));
        }
        Some("cluster") => {}
        Some(other) => {
            return Err(RestError::new(
                400,
                format!("scope must be cluster, not {other}"),
            ))
        }
    }
    let Some(group) = info.group.as_ref() else {
        // Standalone: this worker is the cluster.
        return Ok(Json(
            serde_json::json!({"workers": [own], "unreachable": []}),
        ));
    };
    if !group.leader {
        if let Some(url) = group.leader_url.as_deref() {
            let mut e = RestError::new(409, "this worker is not the leader");
            e.forward_to = Some(url.trim_end_matches('/').to_string());
            return Err(e);
        }
        return Ok(Json(
            serde_json::json!({"workers": [own], "unreachable": []}),
        ));
    }
    let members: Vec<String> = s
        .herder
        .rebalances()
        .iter()
        .rev()
        .find_map(|r| r.members.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.trim_end_matches('/').to_string())
        .filter(|m| *m != own.worker_url)
        .collect();
    let asks = members.iter().map(|url| {
        let request = super::forward::peer_request(
            &s,
            &headers,
            who.as_ref(),
            Method::GET,
            &format!("{url}/tributary/history?since={since}"),
            &[],
        )
        .timeout(Duration::from_millis(MEMBER_HISTORY_TIMEOUT_MS));
        async move {
            let answer = async {
                let r = request.send().await.map_err(|e| e.to_string())?;
                if !r.status().is_success() {
                    return Err(format!("HTTP {}", r.status().as_u16()));
                }
                let mut v: serde_json::Value = r.json().await.map_err(|e| e.to_string())?;
                v["workers"]
                    .get_mut(0)
                    .map(serde_json::Value::take)
                    .ok_or_else(|| "no history in the answer".to_string())
            }
            .await;
            (url.clone(), answer)
        }
    });
    let mut workers = vec![serde_json::to_value(&own).unwrap_or_default()];
    let mut unreachable = Vec::new();
    for (url, answer) in futures::future::join_all(asks).await {
        match answer {
            Ok(w) => workers.push(w),
            Err(error) => unreachable.push(serde_json::json!({"url": url, "error": error})),
        }
    }
    Ok(Json(
        serde_json::json!({"workers": workers, "unreachable": unreachable}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained() {
        // No external script, style or font: the page works without network access.
        for needle in ["src=\"http", "href=\"http", "@import", "cdn"] {
            assert!(!PAGE.contains(needle), "the page references {needle}");
        }
        for endpoint in [
            "/tributary/worker",
            "/tributary/rebalances",
            "/tributary/history?scope=cluster",
            "/connectors?expand=status&expand=info",
        ] {
            assert!(PAGE.contains(endpoint), "the page does not poll {endpoint}");
        }
    }
}
