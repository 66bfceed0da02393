//! Connect's REST API on axum (`RestServer`, `ConnectorsResource`, `ConnectorPluginsResource`,
//! `RootResource`). Handlers parse the request, call the [`Herder`] on a blocking thread and
//! map its errors to Connect's `{"error_code","message"}` bodies.

pub mod connectors;
pub mod entities;
pub mod error;
pub mod forward;
pub mod loggers;
pub mod metrics;
pub mod openapi;
pub mod plugins;
#[cfg(test)]
pub(crate) mod test_server;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::routing::{get, post, put, MethodRouter};
use axum::Router;

use crate::config::worker::Listener;
use crate::herder::Herder;
use error::RestError;

/// What every handler gets: the herder and this worker's advertised base URL.
#[derive(Clone)]
pub struct RestState {
    pub herder: Arc<dyn Herder>,
    /// e.g. `http://127.0.0.1:8083` (no trailing slash).
    pub advertised_url: Arc<String>,
    /// HTTP client for forwarded requests.
    pub http: reqwest::Client,
}

impl RestState {
    /// State for a herder advertised at `advertised_url`.
    pub fn new(herder: Arc<dyn Herder>, advertised_url: String) -> RestState {
        RestState {
            herder,
            advertised_url: Arc::new(advertised_url),
            http: reqwest::Client::new(),
        }
    }
}

/// Runs a herder call on a blocking thread.
pub async fn call<T: Send + 'static>(
    state: &RestState,
    f: impl FnOnce(&dyn Herder) -> Result<T, crate::herder::HerderError> + Send + 'static,
) -> Result<T, RestError> {
    let herder = state.herder.clone();
    tokio::task::spawn_blocking(move || f(herder.as_ref()))
        .await
        .map_err(|e| RestError::new(500, format!("herder call failed: {e}")))?
        .map_err(RestError::from)
}

/// Every route this worker serves: its path (axum's syntax, which is also OpenAPI's) and its
/// handlers. [`router`] is built from this list, and the tests of [`openapi`] check the
/// document served at `/openapi.json` against it, path by path and method by method.
pub fn routes() -> Vec<(&'static str, MethodRouter<RestState>)> {
    vec![
        ("/", get(connectors::server_info)),
        ("/health", get(connectors::health)),
        ("/openapi.json", get(openapi::openapi)),
        (
            "/connectors",
            get(connectors::list).post(connectors::create),
        ),
        (
            "/connectors/{name}",
            get(connectors::get_connector).delete(connectors::delete),
        ),
        (
            "/connectors/{name}/config",
            get(connectors::get_config)
                .put(connectors::put_config)
                .patch(connectors::patch_config),
        ),
        ("/connectors/{name}/status", get(connectors::status)),
        ("/connectors/{name}/topics", get(connectors::topics)),
        (
            "/connectors/{name}/topics/reset",
            put(connectors::reset_topics),
        ),
        ("/connectors/{name}/restart", post(connectors::restart)),
        ("/connectors/{name}/pause", put(connectors::pause)),
        ("/connectors/{name}/resume", put(connectors::resume)),
        ("/connectors/{name}/stop", put(connectors::stop)),
        (
            "/connectors/{name}/tasks",
            get(connectors::tasks).post(connectors::put_tasks),
        ),
        // `GET /connectors/{c}/tasks-config` was removed in Kafka 4.0 (KIP-970): Java answers 404.
        (
            "/connectors/{name}/tasks/{task}/status",
            get(connectors::task_status),
        ),
        (
            "/connectors/{name}/tasks/{task}/restart",
            post(connectors::restart_task),
        ),
        ("/connector-plugins", get(plugins::list)),
        ("/connector-plugins/{plugin}/config", get(plugins::config)),
        (
            "/connector-plugins/{plugin}/config/validate",
            put(plugins::validate),
        ),
        ("/tributary/task-counters", get(connectors::task_counters)),
        ("/tributary/worker", get(connectors::worker_info)),
        (
            "/tributary/connector-counters",
            get(connectors::connector_counters),
        ),
        ("/metrics", get(metrics::metrics)),
        ("/admin/loggers", get(loggers::list)),
        (
            "/admin/loggers/{logger}",
            get(loggers::get).put(loggers::put),
        ),
    ]
}

/// The router with every Connect endpoint ([`routes`]), the 404/405 fallbacks, forwarding and
/// the JSON content-type check.
pub fn router(state: RestState) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |r, (path, handlers)| r.route(path, handlers))
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        // Handlers read bodies as large as forwarding buffers (axum's default is 2 MiB).
        .layer(axum::extract::DefaultBodyLimit::max(forward::MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            forward::forward,
        ))
        .layer(axum::middleware::from_fn(error::require_json))
        .with_state(state)
}

/// A bound REST listener: the socket address actually bound (port 0 resolved).
pub struct BoundListener {
    pub listener: tokio::net::TcpListener,
    pub local_addr: SocketAddr,
}

/// Binds the first `listeners` entry (an empty host binds every interface).
pub async fn bind(listener: &Listener) -> std::io::Result<BoundListener> {
    let host = if listener.host.is_empty() {
        "0.0.0.0"
    } else {
        listener.host.as_str()
    };
    let l = tokio::net::TcpListener::bind((host, listener.port)).await?;
    let local_addr = l.local_addr()?;
    Ok(BoundListener {
        listener: l,
        local_addr,
    })
}

/// The advertised host and port (`rest.advertised.host.name` / `.port`, else the listener's
/// host or this machine's name, and the bound port): Connect's worker id is `host:port`.
pub fn advertised(
    config: &crate::config::worker::WorkerConfig,
    listener: &Listener,
    bound: SocketAddr,
) -> (String, u16) {
    let settings = config.settings();
    let host = settings
        .rest_advertised_host_name
        .clone()
        .or_else(|| Some(listener.host.clone()).filter(|h| !h.is_empty() && h != "0.0.0.0"))
        .unwrap_or_else(|| {
            hostname::get()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_else(|| "localhost".into())
        });
    let port = settings.rest_advertised_port.unwrap_or(bound.port());
    (host, port)
}

/// Serves the API until `shutdown` resolves.
pub async fn serve(
    bound: BoundListener,
    state: RestState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(bound.listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
