//! Forwarding of requests that must run on another worker (Connect's
//! `HerderRequestHandler.completeOrForwardRequest`): when a handler answers with a
//! [`ForwardTo`] target (the leader, or the owner of an instance), the request is re-sent there
//! with the same method, path, query and body, and the hidden `forward` parameter limits it to
//! two hops: a user request has none and is forwarded with `forward=true`, which may be
//! forwarded once more with `forward=false`, which is answered 409 if it still cannot run.

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::{ForwardTo, RestError};
use super::RestState;

/// Largest request body the worker reads (bytes): the forwarding layer buffers bodies up to
/// this size, and the router lets handlers read as much. Connect sets no limit; a larger body
/// is answered 413.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Whether reading a body failed because it is larger than the limit (rather than because the
/// client went away).
fn too_large(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.to_string() == "length limit exceeded" {
            return true;
        }
        source = err.source();
    }
    false
}

fn conflict() -> Response {
    RestError::new(
        409,
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
    )
    .into_response()
}

/// A request body read whole, up to [`MAX_BODY`]: 413 beyond it.
pub async fn read_body(body: Body) -> Result<axum::body::Bytes, Response> {
    match to_bytes(body, MAX_BODY).await {
        Ok(b) => Ok(b),
        Err(e) if too_large(&e) => Err(RestError::new(
            413,
            format!("Request body is larger than the limit of {MAX_BODY} bytes"),
        )
        .into_response()),
        Err(e) => {
            Err(RestError::new(500, format!("cannot read request body: {e}")).into_response())
        }
    }
}

/// The middleware.
pub async fn forward(State(state): State<RestState>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match read_body(body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let inner = Request::from_parts(parts.clone(), Body::from(bytes.clone()));
    let resp = next.run(inner).await;
    let Some(ForwardTo(target)) = resp.extensions().get::<ForwardTo>().cloned() else {
        return resp;
    };
    let pairs: Vec<(String, String)> = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let forward = pairs
        .iter()
        .find(|(k, _)| k == "forward")
        .map(|(_, v)| v.eq_ignore_ascii_case("true"));
    let next_forward = match forward {
        None => "true",
        Some(true) => "false",
        Some(false) => return conflict(),
    };
    // Under a nested router (MirrorMaker's internal REST server, KIP-710) the request's own
    // path lacks the namespace; the original one has it, and is what the leader serves.
    let path = parts
        .extensions
        .get::<axum::extract::OriginalUri>()
        .map_or_else(|| parts.uri.path().to_string(), |o| o.0.path().to_string());
    let url = forward_url(&target, &path, &pairs, next_forward);
    tracing::debug!(%url, method = %parts.method, "forwarding request");
    let principal = parts
        .extensions
        .get::<super::authorization::RequestPrincipal>()
        .map(|p| &p.0);
    let out = peer_request(
        &state,
        &parts.headers,
        principal,
        parts.method.clone(),
        &url,
        &bytes,
    );
    match out.send().await {
        Ok(r) => {
            let status = StatusCode::from_u16(r.status().as_u16())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let location = r.headers().get("location").cloned();
            let content_type = r.headers().get("content-type").cloned();
            let body = r.bytes().await.unwrap_or_default();
            let mut resp = (status, body).into_response();
            if let Some(l) = location {
                resp.headers_mut().insert("location", l);
            }
            resp.headers_mut().insert(
                "content-type",
                content_type.unwrap_or(HeaderValue::from_static("application/json")),
            );
            resp
        }
        Err(e) => RestError::new(500, format!("IO Error trying to forward REST request: {e}"))
            .into_response(),
    }
}

/// A request to another worker on behalf of a caller (a forwarded request, or the live view's
/// fan-out) with `body` (JSON; none when empty): Connect's `User-Agent`, the caller's
/// `Authorization` header, and with REST authorization (issues #36, #42) the caller's principal
/// signed with the session key (KIP-507's key) over the method, the URL's path and query, the
/// body and a fresh stamp, so the other worker authorizes the caller rather than this worker
/// and accepts the signature once.
pub fn peer_request(
    state: &RestState,
    headers: &axum::http::HeaderMap,
    principal: Option<&super::authorization::Principal>,
    method: axum::http::Method,
    url: &str,
    body: &[u8],
) -> reqwest::RequestBuilder {
    let mut out = state
        .http
        .request(method.clone(), url)
        .header("User-Agent", "kafka-connect");
    if let Some(auth) = headers.get("authorization") {
        out = out.header("Authorization", auth.clone());
    }
    if let (Some(p), Some(key)) = (principal, state.herder.session_key()) {
        use super::authorization::{
            new_stamp, sign_principal, PRINCIPAL_HEADER, PRINCIPAL_SIGNATURE_HEADER,
            PRINCIPAL_STAMP_HEADER,
        };
        let named = p.to_header();
        let path_and_query = reqwest::Url::parse(url)
            .map(|u| match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_string(),
            })
            .unwrap_or_default();
        let stamp = new_stamp();
        let signature = sign_principal(
            &key.key,
            &named,
            method.as_str(),
            &path_and_query,
            body,
            &stamp,
        );
        out = out
            .header(PRINCIPAL_HEADER, named)
            .header(PRINCIPAL_SIGNATURE_HEADER, signature)
            .header(PRINCIPAL_STAMP_HEADER, stamp);
    }
    if !body.is_empty() {
        out = out
            .header("Content-Type", "application/json")
            .body(body.to_vec());
    }
    out
}

/// The forwarded URL: target base, same path, the original query without `forward`, then
/// `forward=<next>`.
fn forward_url(target: &str, path: &str, pairs: &[(String, String)], next_forward: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs.iter().filter(|(k, _)| k != "forward") {
        query.append_pair(k, v);
    }
    query.append_pair("forward", next_forward);
    format!(
        "{}{}?{}",
        target.trim_end_matches('/'),
        path,
        query.finish()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_urls_keep_the_query_and_set_the_hop() {
        let pairs = vec![
            ("includeTasks".to_string(), "true".to_string()),
            ("forward".to_string(), "true".to_string()),
        ];
        assert_eq!(
            forward_url("http://h:1/", "/connectors/a/restart", &pairs, "false"),
            "http://h:1/connectors/a/restart?includeTasks=true&forward=false"
        );
    }
}
