//! REST errors as Connect's `ErrorMessage` body `{"error_code": <status>, "message": "..."}`
//! (`ConnectExceptionMapper`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::entities::ErrorMessage;
use crate::herder::HerderError;

/// An error response.
#[derive(Debug, Clone, PartialEq)]
pub struct RestError {
    pub status: u16,
    pub message: String,
    /// Where the request must be forwarded (the leader's or the owner's URL).
    pub forward_to: Option<String>,
}

/// Response extension asking the forwarding layer ([`super::forward`]) to re-send the request
/// to this URL.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardTo(pub String);

impl RestError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        RestError {
            status,
            message: message.into(),
            forward_to: None,
        }
    }
}

impl From<HerderError> for RestError {
    fn from(e: HerderError) -> Self {
        RestError {
            status: e.status(),
            message: e.to_string(),
            forward_to: e.forward_target().map(str::to_string),
        }
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (
            status,
            Json(ErrorMessage {
                error_code: self.status,
                message: self.message,
            }),
        )
            .into_response();
        if let Some(url) = self.forward_to {
            resp.extensions_mut().insert(ForwardTo(url));
        }
        resp
    }
}

/// Unknown paths: Jersey's `HTTP 404 Not Found`.
pub async fn not_found() -> RestError {
    RestError::new(404, "HTTP 404 Not Found")
}

/// Known path, wrong method: Jersey's `HTTP 405 Method Not Allowed`.
pub async fn method_not_allowed() -> RestError {
    RestError::new(405, "HTTP 405 Method Not Allowed")
}

/// Connect's resources consume `application/json` only: a request to them whose body comes
/// with another `Content-Type` is answered as Jersey does, 415 `HTTP 415 Unsupported Media
/// Type`, before any handler (or forwarding) sees it. A request without `Content-Type` is
/// accepted. Tributary's own `/tributary/*` and `/metrics` paths are not checked.
pub async fn require_json(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let path = req.uri().path();
    let checked = path.starts_with("/connectors")
        || path.starts_with("/connector-plugins")
        || path.starts_with("/admin/loggers");
    if checked {
        if let Some(ct) = req.headers().get(axum::http::header::CONTENT_TYPE) {
            let essence = ct
                .to_str()
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            let json = essence == "application/json"
                || essence == "*/*"
                || (essence.starts_with("application/") && essence.ends_with("+json"));
            if !json {
                return RestError::new(415, "HTTP 415 Unsupported Media Type").into_response();
            }
        }
    }
    let resp = next.run(req).await;
    // axum's own rejections (a body over the size limit, …) are plain text: give them
    // Connect's error body.
    let is_json = resp
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.starts_with("application/json")
                || v.starts_with("application/openmetrics")
                || v.starts_with("text/plain; version")
        });
    if (resp.status().is_client_error() || resp.status().is_server_error()) && !is_json {
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 64 * 1024)
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        let message = if text.is_empty() {
            format!(
                "HTTP {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            )
        } else {
            text
        };
        return RestError::new(status.as_u16(), message).into_response();
    }
    resp
}
