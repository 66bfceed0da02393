//! `/admin/loggers` (Connect's `LoggingResource`, KIP-495 and KIP-976): read and change log
//! levels of this worker, or (with `?scope=cluster`) of every worker through the config topic.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::error::RestError;
use super::{call, RestState};
use crate::logging;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn level_json(l: &logging::LoggerLevel) -> Value {
    json!({ "level": l.level, "last_modified": l.last_modified })
}

/// `GET /admin/loggers`: every logger with a level set, plus root.
pub async fn list() -> Json<BTreeMap<String, Value>> {
    Json(
        logging::all()
            .iter()
            .map(|(k, v)| (k.clone(), level_json(v)))
            .collect(),
    )
}

/// `GET /admin/loggers/{name}`.
pub async fn get(Path(name): Path<String>) -> Result<Json<Value>, RestError> {
    logging::level(&name)
        .map(|l| Json(level_json(&l)))
        .ok_or_else(|| RestError::new(404, format!("Logger {name} not found.")))
}

/// `PUT /admin/loggers/{name}` with `{"level": …}`: 200 with the loggers changed on this worker;
/// with `scope=cluster`, 204 after the level was written to the config topic for every worker.
pub async fn put(
    State(s): State<RestState>,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Result<Response, RestError> {
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?;
    let level = v.get("level").and_then(Value::as_str).ok_or_else(|| {
        RestError::new(
            400,
            "Desired 'level' parameter was not specified in request.",
        )
    })?;
    let level = logging::parse_level(level)
        .ok_or_else(|| RestError::new(404, format!("invalid log level '{level}'.")))?;
    let scope = q
        .as_deref()
        .and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .find(|(k, _)| k == "scope")
                .map(|(_, v)| v)
        })
        .unwrap_or_else(|| "worker".into());
    if scope.eq_ignore_ascii_case("cluster") {
        let (n, l) = (name.clone(), level.to_string());
        call(&s, move |h| h.set_cluster_logger_level(&n, &l)).await?;
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(Json(logging::set_level(&name, level, now_ms())).into_response())
}
