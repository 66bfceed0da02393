//! Connect's REST API on axum (`RestServer`, `ConnectorsResource`, `ConnectorPluginsResource`,
//! `RootResource`). Handlers parse the request, call the [`Herder`] on a blocking thread and
//! map its errors to Connect's `{"error_code","message"}` bodies.

pub mod auth;
pub mod authorization;
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
pub mod ui;

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
    /// HTTP client for forwarded requests (trusting the REST trust store for https peers).
    pub http: reqwest::Client,
    /// TLS for an `https` listener.
    pub tls: Option<ServerTls>,
    /// Basic authentication (Connect's `BasicAuthSecurityRestExtension`), when configured.
    pub basic_auth: Option<auth::BasicAuth>,
    /// Whether `/admin` is served with the other endpoints (`admin.listeners` unset, KIP-495).
    pub admin_on_main: bool,
    /// TLS for an `https` admin listener (`admin.listeners.https.ssl.*` or `ssl.*`).
    pub admin_tls: Option<ServerTls>,
    /// `tributary.rest.authorization.file` (issue #36), when set.
    pub authorization: Option<Arc<authorization::PolicyFile>>,
}

impl RestState {
    /// State for a herder advertised at `advertised_url`, plain HTTP without authentication.
    pub fn new(herder: Arc<dyn Herder>, advertised_url: String) -> RestState {
        RestState {
            herder,
            advertised_url: Arc::new(advertised_url),
            http: reqwest::Client::new(),
            tls: None,
            basic_auth: None,
            admin_on_main: true,
            admin_tls: None,
            authorization: None,
        }
    }

    /// The same state with the worker's REST security ([`RestSecurity::from_worker`]).
    pub fn secured(mut self, security: &RestSecurity) -> RestState {
        self.http = security.http.clone();
        self.tls = security.server_tls.clone();
        self.basic_auth = security.basic_auth.clone();
        self.admin_on_main = security.admin_on_main;
        self.admin_tls = security.admin_server_tls.clone();
        self.authorization = security.authorization.clone();
        self
    }
}

/// The REST listener's TLS, the client for requests to other workers, and authentication, from
/// the worker file (`listeners=https://…` with `listeners.https.ssl.*` or `ssl.*`,
/// `ssl.client.auth`, `rest.extension.classes`).
#[derive(Clone)]
pub struct RestSecurity {
    /// Set when the listener is `https`.
    pub server_tls: Option<ServerTls>,
    /// Trusts the REST trust store (and presents the key store) for https peers.
    pub http: reqwest::Client,
    /// Set by `rest.extension.classes` naming Connect's basic-auth extension.
    pub basic_auth: Option<auth::BasicAuth>,
    /// `admin.listeners` is unset: `/admin` is served on `listeners`.
    pub admin_on_main: bool,
    /// Set when an admin listener is `https`.
    pub admin_server_tls: Option<ServerTls>,
    /// `tributary.rest.authorization.file` (issue #36), when set.
    pub authorization: Option<Arc<authorization::PolicyFile>>,
}

impl RestSecurity {
    /// Reads the worker's REST security settings. `kafka_opts` is the `KAFKA_OPTS` environment
    /// value, where Connect users name the JAAS file. Errors are `(key, message)`: an https
    /// listener without a usable key store, a REST extension class Tributary does not have
    /// (Java code), a basic-auth extension without a readable JAAS file.
    pub fn from_worker(
        config: &crate::config::worker::WorkerConfig,
        kafka_opts: Option<&str>,
    ) -> Result<RestSecurity, (String, String)> {
        let raw: std::collections::BTreeMap<String, String> = config
            .raw_map()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let (ssl, prefix) = tributary_security::tls::rest_ssl_settings(&raw);
        let https = config
            .settings()
            .listeners
            .iter()
            .any(|l| l.protocol == "https");
        let server_tls = if https {
            Some(ServerTls::new(ssl, prefix).map_err(|e| (e.key, e.message))?)
        } else {
            None
        };
        let http = crate::peer::peer_http_client(config)?;
        let mut basic_auth = None;
        let classes = raw
            .get("rest.extension.classes")
            .map(|v| v.as_str())
            .unwrap_or("");
        for class in classes.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            if class != auth::BASIC_AUTH_EXTENSION {
                return Err((
                    "rest.extension.classes".into(),
                    format!(
                        "{class} is Java code, which Tributary cannot run (it has {})",
                        auth::BASIC_AUTH_EXTENSION
                    ),
                ));
            }
            let path = kafka_opts.and_then(auth::jaas_path_from_opts).ok_or_else(|| {
                (
                    "rest.extension.classes".to_string(),
                    "the basic-auth extension needs a JAAS file: set KAFKA_OPTS=-Djava.security.auth.login.config=/path/to/file, as for Connect".to_string(),
                )
            })?;
            basic_auth = Some(
                auth::BasicAuth::from_jaas_file(std::path::Path::new(&path))
                    .map_err(|e| ("rest.extension.classes".to_string(), e.to_string()))?,
            );
        }
        let admin = config.settings().admin_listeners.as_ref();
        let admin_server_tls = if admin.is_some_and(|l| l.iter().any(|l| l.protocol == "https")) {
            let (ssl, prefix) =
                tributary_security::tls::ssl_settings_with_prefix(&raw, "admin.listeners.https.");
            Some(ServerTls::new(ssl, prefix).map_err(|e| (e.key, e.message))?)
        } else {
            None
        };
        let authorization = match raw
            .get(authorization::FILE_SETTING)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
        {
            Some(path) => Some(
                authorization::PolicyFile::load(std::path::Path::new(path))
                    .map_err(|e| (authorization::FILE_SETTING.to_string(), e))?,
            ),
            None => None,
        };
        if authorization.is_some() {
            let unrestricted = config.providers().unrestricted();
            if !unrestricted.is_empty() {
                tracing::warn!(
                    "{} is set but config provider(s) {} are not limited: a principal with the write role over a connector can make them read any file or environment variable the worker can read (set config.providers.<name>.param.allowed.paths, or allowlist.pattern for an environment provider)",
                    authorization::FILE_SETTING,
                    unrestricted.join(", ")
                );
            }
        }
        Ok(RestSecurity {
            server_tls,
            http,
            basic_auth,
            admin_on_main: admin.is_none(),
            admin_server_tls,
            authorization,
        })
    }
}

/// An https listener's TLS: the rustls configuration built from its `ssl.*` settings, and
/// those settings, to build it again when its key store or trust store files change (issue
/// #42: certificates rotated without a restart; connections already open keep theirs).
#[derive(Clone)]
pub struct ServerTls {
    /// The configuration as first built.
    pub config: Arc<tributary_security::rustls::ServerConfig>,
    ssl: std::collections::BTreeMap<String, String>,
    prefix: &'static str,
}

impl ServerTls {
    /// Builds the configuration (Connect's `SSLUtils`; errors name the key).
    pub fn new(
        ssl: std::collections::BTreeMap<String, String>,
        prefix: &'static str,
    ) -> Result<ServerTls, tributary_security::SecurityError> {
        let config = tributary_security::tls::rest_server_config(&ssl, prefix)?;
        Ok(ServerTls {
            config,
            ssl,
            prefix,
        })
    }

    /// The store files the configuration was read from (`ssl.keystore.location`,
    /// `ssl.truststore.location`).
    pub fn files(&self) -> Vec<std::path::PathBuf> {
        ["ssl.keystore.location", "ssl.truststore.location"]
            .iter()
            .filter_map(|k| self.ssl.get(*k))
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .collect()
    }

    /// The configuration built again from the files as they are now.
    pub fn rebuild(&self) -> Result<Arc<tributary_security::rustls::ServerConfig>, String> {
        tributary_security::tls::rest_server_config(&self.ssl, self.prefix).map_err(|e| {
            format!(
                "{}{}: {}",
                self.prefix,
                e.key.trim_start_matches(self.prefix),
                e.message
            )
        })
    }

    /// An acceptor configuration that follows the files while `serving` lives: rebuilt on each
    /// change, a store that no longer loads keeping the previous certificate in force (logged).
    fn watched(&self, serving: std::sync::Weak<()>) -> axum_server::tls_rustls::RustlsConfig {
        let rustls = axum_server::tls_rustls::RustlsConfig::from_config(self.config.clone());
        let target = rustls.clone();
        let source = self.clone();
        let alive = serving;
        crate::config::file_watch::watch(
            "rest-tls-stores",
            self.files(),
            move || alive.strong_count() > 0,
            move || {
                match source.rebuild() {
                    Ok(config) => {
                        target.reload_from_config(config);
                        tracing::info!(
                            files = ?source.files(),
                            "the REST listener's key and trust stores were reloaded"
                        );
                    }
                    Err(e) => tracing::error!(
                        "cannot reload the REST listener's stores: {e}; the previous certificate stays in force"
                    ),
                }
                true
            },
        );
        rustls
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

/// How long a request waits for a rebalance to end before it is answered 409 (Connect's REST
/// request timeout, `RestServer.DEFAULT_REST_REQUEST_TIMEOUT_MS`, is the same 90 s; Connect
/// answers 500 when a request outlives it).
pub const REBALANCE_WAIT: std::time::Duration = std::time::Duration::from_secs(90);

/// Runs a herder call that needs this worker's group membership settled (it must run on the
/// leader or on an instance's owner) on a blocking thread. When it fails because a rebalance
/// is in progress or due ([`crate::herder::HerderError::waits_for_rebalance`]), the request
/// waits (asynchronously) for the rebalance to end and runs again, as Connect's herder queues
/// requests behind a rebalance; after [`REBALANCE_WAIT`], or once the worker is stopping, the
/// last error is the answer (Connect's 409, or the forwarding to the leader or owner).
/// Standalone herders have no membership: their answer is the first one.
pub async fn call_settled<T: Send + 'static>(
    state: &RestState,
    f: impl Fn(&dyn Herder) -> Result<T, crate::herder::HerderError> + Clone + Send + 'static,
) -> Result<T, RestError> {
    call_settled_within(state, REBALANCE_WAIT, f).await
}

/// [`call_settled`] with a bound other than [`REBALANCE_WAIT`].
pub async fn call_settled_within<T: Send + 'static>(
    state: &RestState,
    bound: std::time::Duration,
    f: impl Fn(&dyn Herder) -> Result<T, crate::herder::HerderError> + Clone + Send + 'static,
) -> Result<T, RestError> {
    let Some(membership) = state.herder.membership() else {
        return call(state, f).await;
    };
    retry_after_rebalance(membership, bound, || {
        let herder = state.herder.clone();
        let g = f.clone();
        async move {
            tokio::task::spawn_blocking(move || g(herder.as_ref()))
                .await
                .map_err(|e| RestError::new(500, format!("herder call failed: {e}")))
        }
    })
    .await
}

/// The waiting of [`call_settled`]: runs `attempt` and, while it fails with an error that waits
/// for a rebalance and `membership` shows one in progress (or, after a refusal because one was
/// expected, until the next settle), waits for it to end and runs `attempt` again, until
/// `bound` has passed or the worker stops.
async fn retry_after_rebalance<T, Fut>(
    mut membership: tokio::sync::watch::Receiver<crate::herder::Membership>,
    bound: std::time::Duration,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, RestError>
where
    Fut: std::future::Future<Output = Result<Result<T, crate::herder::HerderError>, RestError>>,
{
    let deadline = tokio::time::Instant::now() + bound;
    loop {
        // The membership as it stood before the call: what the wait below compares against.
        let before = *membership.borrow_and_update();
        let e = match attempt().await? {
            Ok(v) => return Ok(v),
            Err(e) if e.waits_for_rebalance() && !before.stopping => e,
            Err(e) => return Err(e.into()),
        };
        // Wait while a rebalance runs; a worker that expected one (and refused for that)
        // waits for the next settle. Otherwise the error stands (e.g. a forward to the leader).
        let expected = matches!(&e, crate::herder::HerderError::Conflict(_));
        if !before.rebalancing && !expected {
            return Err(e.into());
        }
        let settled =
            membership.wait_for(|m| m.stopping || (!m.rebalancing && m.settled > before.settled));
        match tokio::time::timeout_at(deadline, settled).await {
            Ok(Ok(m)) if !m.stopping => {
                tracing::debug!(error = %e, "a request waited for a rebalance; running it again");
            }
            // Stopping, the herder gone, or out of time: the error stands.
            _ => return Err(e.into()),
        }
    }
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
            "/connectors/{name}/offsets",
            get(connectors::get_offsets)
                .patch(connectors::alter_offsets)
                .delete(connectors::reset_offsets),
        ),
        (
            "/connectors/{name}/tasks",
            get(connectors::tasks).post(connectors::put_tasks),
        ),
        ("/connectors/{name}/fence", put(connectors::fence_zombies)),
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
        ("/tributary/rebalances", get(ui::rebalances)),
        ("/tributary/history", get(ui::history)),
        ("/ui", get(ui::page)),
        (
            "/tributary/connector-health",
            get(connectors::connector_health),
        ),
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
    let admin = state.admin_on_main;
    scoped_router(state, |path| admin || !is_admin_path(path))
}

/// The router of MirrorMaker's internal REST server for one flow's herder (KIP-710, Java's
/// `InternalMirrorResource`): only the endpoints followers call on their leader, task
/// configurations and zombie fencing (`/connectors/{name}/tasks`, `/connectors/{name}/fence`),
/// nested by the caller under the flow's namespace.
pub fn internal_router(state: RestState) -> Router {
    let routes = [
        ("/connectors/{name}/tasks", post(connectors::put_tasks)),
        ("/connectors/{name}/fence", put(connectors::fence_zombies)),
    ];
    layered(
        state,
        routes
            .into_iter()
            .fold(Router::new(), |r, (path, handlers)| r.route(path, handlers)),
    )
}

/// Whether a route belongs to the admin endpoints (KIP-495: `/admin/...`).
fn is_admin_path(path: &str) -> bool {
    path == "/admin" || path.starts_with("/admin/")
}

/// The router of an `admin.listeners` listener: only the `/admin` endpoints.
pub fn admin_router(state: RestState) -> Router {
    scoped_router(state, is_admin_path)
}

fn scoped_router(state: RestState, keep: impl Fn(&str) -> bool) -> Router {
    let routes = routes()
        .into_iter()
        .filter(|(path, _)| keep(path))
        .fold(Router::new(), |r, (path, handlers)| r.route(path, handlers));
    layered(state, routes)
}

/// `routes` with the fallbacks, forwarding, authorization and the JSON content-type check.
fn layered(state: RestState, routes: Router<RestState>) -> Router {
    routes
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        // Handlers read bodies as large as forwarding buffers (axum's default is 2 MiB).
        .layer(axum::extract::DefaultBodyLimit::max(forward::MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            forward::forward,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            authorization::authorize,
        ))
        .layer(axum::middleware::from_fn(error::require_json))
        .layer(axum::middleware::from_fn_with_state(
            state.basic_auth.clone(),
            optional_basic_auth,
        ))
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
    let tls = state.tls.clone();
    // The live view's history of this worker's jobs (issue #36) is sampled while it serves.
    let sampler = tokio::spawn(ui::run_history_sampler(Arc::downgrade(
        state.herder.worker(),
    )));
    let served = serve_router(bound, router(state), tls, shutdown).await;
    sampler.abort();
    served
}

/// Serves the `/admin` endpoints on an `admin.listeners` listener (KIP-495), with its own TLS.
pub async fn serve_admin(
    bound: BoundListener,
    state: RestState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = state.admin_tls.clone();
    serve_router(bound, admin_router(state), tls, shutdown).await
}

/// Serves MirrorMaker's internal REST server (KIP-710) on `bound` until `shutdown`: each
/// flow's [`internal_router`] under its namespace path (`/<source>/<target>`,
/// [`crate::peer::namespace_path`]); HTTPS when the first state has TLS.
pub async fn serve_internal(
    bound: BoundListener,
    flows: Vec<(String, RestState)>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = flows.first().and_then(|(_, s)| s.tls.clone());
    let app = flows
        .into_iter()
        .fold(Router::new(), |r, (namespace, state)| {
            r.nest(&namespace, internal_router(state))
        })
        .fallback(error::not_found);
    serve_router(bound, app, tls, shutdown).await
}

async fn serve_router(
    bound: BoundListener,
    app: Router,
    tls: Option<ServerTls>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let Some(tls) = tls else {
        return axum::serve(bound.listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
    };
    let handle = axum_server::Handle::new();
    let stopper = handle.clone();
    tokio::spawn(async move {
        shutdown.await;
        stopper.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
    });
    let listener = bound.listener.into_std()?;
    // The stores are watched while the listener serves.
    let serving = Arc::new(());
    let rustls =
        axum_server::tls_rustls::RustlsAcceptor::new(tls.watched(Arc::downgrade(&serving)));
    let served = axum_server::from_tcp(listener)
        .acceptor(client_certificate::PrincipalAcceptor(rustls))
        .handle(handle)
        .serve(app.into_make_service())
        .await;
    drop(serving);
    served
}

/// The subject of a TLS client certificate as a request extension
/// ([`authorization::ClientCertificate`]), for REST authorization (issue #36).
mod client_certificate {
    use std::future::Future;
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use axum_server::accept::{Accept, DefaultAcceptor};
    use axum_server::tls_rustls::RustlsAcceptor;
    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio_rustls::server::TlsStream;

    use super::authorization::ClientCertificate;

    /// Accepts TLS connections as `RustlsAcceptor` does, and gives each request of a
    /// connection that presented a certificate the certificate's subject.
    #[derive(Clone)]
    pub struct PrincipalAcceptor(pub RustlsAcceptor<DefaultAcceptor>);

    type Accepted<I, S> = io::Result<(TlsStream<I>, WithCertificate<S>)>;

    impl<I, S> Accept<I, S> for PrincipalAcceptor
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        S: Send + 'static,
    {
        type Stream = TlsStream<I>;
        type Service = WithCertificate<S>;
        type Future = Pin<Box<dyn Future<Output = Accepted<I, S>> + Send>>;

        fn accept(&self, stream: I, service: S) -> Self::Future {
            let handshake = self.0.accept(stream, service);
            Box::pin(async move {
                let (stream, service) = handshake.await?;
                let subject = stream
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|chain| chain.first())
                    .and_then(|cert| subject_of(cert.as_ref()));
                Ok((
                    stream,
                    WithCertificate {
                        inner: service,
                        subject,
                    },
                ))
            })
        }
    }

    /// The subject DN of a DER certificate, as `CN=app,O=acme` (RFC 4514 order reversed to
    /// the certificate's, as Java's `X500Principal.getName()` writes it).
    fn subject_of(der: &[u8]) -> Option<String> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let parts: Vec<String> = cert
            .subject()
            .iter_rdn()
            .flat_map(|rdn| rdn.iter())
            .filter_map(|attr| {
                let key = x509_parser::objects::oid2abbrev(
                    attr.attr_type(),
                    x509_parser::objects::oid_registry(),
                )
                .ok()?;
                Some(format!("{key}={}", attr.as_str().ok()?))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.into_iter().rev().collect::<Vec<_>>().join(","))
    }

    /// A connection's service, putting the certificate's subject in each request.
    #[derive(Clone)]
    pub struct WithCertificate<S> {
        inner: S,
        subject: Option<String>,
    }

    impl<S, B> tower_service::Service<axum::http::Request<B>> for WithCertificate<S>
    where
        S: tower_service::Service<axum::http::Request<B>>,
    {
        type Response = S::Response;
        type Error = S::Error;
        type Future = S::Future;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            self.inner.poll_ready(cx)
        }

        fn call(&mut self, mut req: axum::http::Request<B>) -> Self::Future {
            if let Some(s) = &self.subject {
                req.extensions_mut().insert(ClientCertificate(s.clone()));
            }
            self.inner.call(req)
        }
    }
}

/// Basic authentication when the worker has it configured; otherwise every request passes.
async fn optional_basic_auth(
    axum::extract::State(auth): axum::extract::State<Option<auth::BasicAuth>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match auth {
        Some(a) => auth::require(axum::extract::State(a), req, next).await,
        None => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::watch;

    use super::retry_after_rebalance;
    use crate::herder::{HerderError, Membership, REBALANCE_EXPECTED};

    fn settled(n: u64) -> Membership {
        Membership {
            settled: n,
            rebalancing: false,
            stopping: false,
        }
    }

    /// What one attempt of a herder call yields.
    type Attempt = std::future::Ready<Result<Result<u32, HerderError>, super::RestError>>;

    /// An attempt that fails with `error` until `ok_after` attempts were made; the counter
    /// tells how many were made.
    fn attempts(error: HerderError, ok_after: u32) -> (Arc<AtomicU32>, impl FnMut() -> Attempt) {
        let count = Arc::new(AtomicU32::new(0));
        let c = count.clone();
        let f = move || {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            std::future::ready(Ok(if n > ok_after {
                Ok(n)
            } else {
                Err(error.clone())
            }))
        };
        (count, f)
    }

    #[tokio::test]
    async fn a_request_during_a_rebalance_waits_for_it_and_runs_again() {
        let (tx, rx) = watch::channel(Membership::joining());
        let (count, f) = attempts(HerderError::NotLeader(None), 1);
        let call = tokio::spawn(retry_after_rebalance(rx, Duration::from_secs(30), f));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!call.is_finished(), "it waits while the rebalance runs");
        assert_eq!(count.load(Ordering::SeqCst), 1);
        tx.send_replace(settled(1));
        let got = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, Ok(2), "run again once the rebalance ended");
    }

    #[tokio::test]
    async fn past_the_bound_the_answer_is_connects_409() {
        let (_tx, rx) = watch::channel(Membership::joining());
        let (_, f) = attempts(HerderError::NotLeader(None), u32::MAX);
        let started = std::time::Instant::now();
        let e = retry_after_rebalance(rx, Duration::from_millis(200), f)
            .await
            .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(e.status, 409);
        assert_eq!(
            e.message,
            "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
        );
    }

    #[tokio::test]
    async fn a_stopping_worker_answers_at_once() {
        let (tx, rx) = watch::channel(Membership::joining());
        let (_, f) = attempts(HerderError::NotLeader(None), u32::MAX);
        let call = tokio::spawn(retry_after_rebalance(rx, Duration::from_secs(30), f));
        tokio::time::sleep(Duration::from_millis(50)).await;
        tx.send_modify(|m| m.stopping = true);
        let e = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.status, 409);
    }

    #[tokio::test]
    async fn a_refusal_for_an_expected_rebalance_waits_for_the_next_settle() {
        let (tx, rx) = watch::channel(settled(1));
        let (_, f) = attempts(HerderError::Conflict(REBALANCE_EXPECTED.into()), 1);
        let call = tokio::spawn(retry_after_rebalance(rx, Duration::from_secs(30), f));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!call.is_finished());
        tx.send_modify(|m| m.rebalancing = true);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!call.is_finished(), "still rebalancing");
        tx.send_replace(settled(2));
        let got = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, Ok(2));
    }

    #[tokio::test]
    async fn without_a_rebalance_a_request_for_the_leader_is_forwarded_at_once() {
        let (_tx, rx) = watch::channel(settled(3));
        let (count, f) = attempts(HerderError::NotLeader(Some("http://l:8083/".into())), 9);
        let e = retry_after_rebalance(rx, Duration::from_secs(30), f)
            .await
            .unwrap_err();
        assert_eq!(e.forward_to.as_deref(), Some("http://l:8083/"));
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
