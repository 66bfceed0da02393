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
    // The body is Connect's `Map<String, String>`: anything but an object is a 500, and so is
    // an object or an array as a value; a number or a boolean is read as its text.
    if !v.is_object() {
        return Err(RestError::new(
            500,
            "Cannot deserialize value of type `java.util.HashMap<java.lang.String,java.lang.String>` from non-object JSON",
        ));
    }
    let text = std::str::from_utf8(&body).map_err(|e| RestError::new(500, e.to_string()))?;
    let mut level = None;
    for (k, v) in crate::config::properties::json_object_texts(text)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?
        .unwrap_or_default()
    {
        let v = match v {
            crate::config::properties::JsonText::Text(s) => Some(s),
            crate::config::properties::JsonText::Null => None,
            crate::config::properties::JsonText::Structured(kind) => {
                return Err(RestError::new(
                    500,
                    format!(
                        "Cannot deserialize value of type `java.lang.String` from {kind} (for key \"{k}\")"
                    ),
                ))
            }
        };
        if k == "level" {
            level = v;
        }
    }
    let level = level.ok_or_else(|| {
        RestError::new(
            400,
            "Desired 'level' parameter was not specified in request.",
        )
    })?;
    let level = logging::parse_level(&level)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rest::test_server::{send, serve};

    // Found by scripts/fuzz-rest: the body is Connect's `Map<String,String>`. A number or a
    // boolean level was "not specified" (400) where Connect reads its text (an unknown level,
    // 404); a body that is not an object, or a structured value, was a 400 where Connect
    // cannot deserialize it (500).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_level_body_is_read_as_connects_string_map() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let path = "/admin/loggers/org.example.fuzzed";
        for (body, code, message) in [
            (json!({"level": 5}), 404, Some("invalid log level '5'.")),
            (
                json!({"level": true}),
                404,
                Some("invalid log level 'true'."),
            ),
            (
                json!({"level": null}),
                400,
                Some("Desired 'level' parameter was not specified in request."),
            ),
            (
                json!({}),
                400,
                Some("Desired 'level' parameter was not specified in request."),
            ),
            (json!({"level": {}}), 500, None),
            (json!({"level": "INFO", "other": ["x"]}), 500, None),
            (json!([]), 500, None),
            (json!("INFO"), 500, None),
        ] {
            let (got, v) = send(&url, "PUT", path, Some(&body.to_string())).await;
            assert_eq!(got, code, "{body}: {v}");
            assert_eq!(v["error_code"], code, "{v}");
            if let Some(m) = message {
                assert_eq!(v["message"], m);
            }
        }
        // Nothing above changed the level; a valid body does.
        assert_eq!(send(&url, "GET", path, None).await.0, 404);
        let (code, v) = send(&url, "PUT", path, Some(r#"{"level":"debug"}"#)).await;
        assert_eq!((code, v), (200, json!(["org.example.fuzzed"])));
        let (code, v) = send(&url, "GET", path, None).await;
        assert_eq!((code, &v["level"]), (200, &json!("DEBUG")));
    }
}
