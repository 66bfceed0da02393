//! The live view of the cluster (Tributary, beyond Connect): `GET /ui`, one self-contained
//! HTML page (its script and style inline, compiled into the binary) that polls this worker's
//! JSON endpoints every second, and `GET /tributary/rebalances`, the timeline of recent
//! rebalances it shows (see [`crate::herder::rebalances`]).

use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::error::RestError;
use super::RestState;

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
/// another `scope`; with `scope=leader` and no known leader, this worker answers.
pub async fn rebalances(
    State(s): State<RestState>,
    Query(q): Query<RebalancesQuery>,
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
        "rebalances": s.herder.rebalances(),
    })))
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
            "/connectors?expand=status&expand=info",
        ] {
            assert!(PAGE.contains(endpoint), "the page does not poll {endpoint}");
        }
    }
}
