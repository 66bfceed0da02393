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
