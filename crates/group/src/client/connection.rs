//! One broker connection: Kafka request framing over tokio TCP (or TLS with rustls) with
//! `kafka-protocol` codecs, ApiVersions negotiation, SASL authentication (SaslHandshake v1 +
//! SaslAuthenticate, as Java's `SaslClientAuthenticator`, with KIP-368 re-authentication
//! before the session the broker granted ends) and coordinator discovery. One request in
//! flight at a time.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, FindCoordinatorRequest, RequestHeader, ResponseHeader,
    SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tributary_security::sasl::SaslExchange;
use tributary_security::SaslCredentials;

use super::{error_name, GroupConfig, GroupError};

/// Largest response frame accepted (guards against garbage length prefixes).
const MAX_FRAME: usize = 100 * 1024 * 1024;

/// Request versions this client can speak, per API: (min, max). The negotiated version is the
/// highest one both the broker and this range allow.
pub(crate) fn client_versions(key: ApiKey) -> (i16, i16) {
    match key {
        ApiKey::ApiVersions => (0, 3),
        ApiKey::FindCoordinator => (1, 4),
        // v4+ has the MEMBER_ID_REQUIRED round trip (handled); v8 adds the reason.
        ApiKey::JoinGroup => (4, 9),
        ApiKey::SyncGroup => (3, 5),
        ApiKey::Heartbeat => (3, 4),
        ApiKey::LeaveGroup => (3, 5),
        // v10 adds topic ids (KIP-516).
        ApiKey::Metadata => (10, 12),
        // v1: the tokens travel in SaslAuthenticate requests (KIP-152).
        ApiKey::SaslHandshake => (1, 1),
        ApiKey::SaslAuthenticate => (0, 2),
        // The consumer group offsets of the offsets API (KIP-875; `group_offsets`).
        ApiKey::OffsetFetch => (2, 7),
        ApiKey::OffsetCommit => (2, 8),
        ApiKey::OffsetDelete => (0, 0),
        ApiKey::DeleteGroups => (0, 2),
        // A classic group's state (MirrorMaker's group offset sync).
        ApiKey::DescribeGroups => (0, 5),
        // MirrorMaker's topic ACL and topic config sync (`cluster_admin`).
        ApiKey::DescribeAcls => (1, 3),
        ApiKey::CreateAcls => (1, 3),
        ApiKey::IncrementalAlterConfigs => (0, 1),
        _ => (0, 0),
    }
}

/// How connections to brokers are secured: TLS (a rustls client configuration) and SASL
/// credentials, from the worker's `security.protocol`, `ssl.*` and `sasl.*`
/// ([`tributary_security::KafkaSecurity`]). The default is plain TCP without authentication.
#[derive(Clone, Default)]
pub struct ConnectionSecurity {
    /// TLS for every connection (`SSL`, `SASL_SSL`).
    pub tls: Option<SharedTls>,
    /// SASL after connecting (`SASL_PLAINTEXT`, `SASL_SSL`).
    pub sasl: Option<SaslCredentials>,
}

impl ConnectionSecurity {
    /// From a worker's parsed security settings (errors name the key, e.g. an unusable key).
    pub fn from_settings(
        security: &tributary_security::KafkaSecurity,
    ) -> Result<Self, tributary_security::SecurityError> {
        Ok(ConnectionSecurity {
            tls: security.tls_client_config()?.map(SharedTls::new),
            sasl: security.sasl().cloned(),
        })
    }
}

impl std::fmt::Debug for ConnectionSecurity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionSecurity")
            .field("tls", &self.tls.is_some())
            .field("sasl", &self.sasl)
            .finish()
    }
}

impl PartialEq for ConnectionSecurity {
    fn eq(&self, other: &Self) -> bool {
        let same_tls = match (&self.tls, &other.tls) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(&a.0, &b.0),
            _ => false,
        };
        same_tls && self.sasl == other.sasl
    }
}

impl Eq for ConnectionSecurity {}

/// A TLS client configuration that can be replaced while the client runs (certificates and
/// trust stores rotated without a restart, issue #42): each new connection takes the one in
/// force; open connections keep theirs.
#[derive(Clone)]
pub struct SharedTls(Arc<std::sync::RwLock<Arc<tributary_security::rustls::ClientConfig>>>);

impl SharedTls {
    /// Starts with `config`.
    pub fn new(config: Arc<tributary_security::rustls::ClientConfig>) -> SharedTls {
        SharedTls(Arc::new(std::sync::RwLock::new(config)))
    }

    /// The configuration new connections use.
    pub fn current(&self) -> Arc<tributary_security::rustls::ClientConfig> {
        self.0.read().unwrap().clone()
    }

    /// Replaces it for the connections made from now on.
    pub fn replace(&self, config: Arc<tributary_security::rustls::ClientConfig>) {
        *self.0.write().unwrap() = config;
    }

    /// A handle that does not keep it alive (for a watcher that ends with the client).
    pub fn downgrade(
        &self,
    ) -> std::sync::Weak<std::sync::RwLock<Arc<tributary_security::rustls::ClientConfig>>> {
        Arc::downgrade(&self.0)
    }
}

/// A byte stream to a broker: TCP or TLS over TCP.
trait BrokerStream: AsyncRead + AsyncWrite + Unpin + Send + Sync {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + Sync> BrokerStream for T {}

/// A connection to one broker.
pub(crate) struct Connection {
    addr: String,
    stream: Box<dyn BrokerStream>,
    client_id: StrBytes,
    correlation_id: i32,
    /// Broker's supported (min, max) per API key, from ApiVersions.
    broker_versions: HashMap<i16, (i16, i16)>,
    /// How it was secured: to authenticate again (KIP-368), or to connect again once the
    /// session has ended.
    security: ConnectionSecurity,
    /// When the broker granted a limited session (`connections.max.reauth.ms`, or an
    /// OAUTHBEARER token's expiry): when to authenticate again, and when the session ends.
    session: Option<Session>,
    /// Timeout of the requests re-authentication sends.
    timeout: Duration,
}

/// A SASL session with an end (KIP-368).
#[derive(Debug, Clone, Copy)]
struct Session {
    /// Java's client re-authenticates after 85–95 % of the session lifetime.
    reauth_at: Instant,
    /// The broker closes the connection at the first request after this.
    ends_at: Instant,
}

impl Connection {
    /// Opens a TCP connection, does the TLS handshake when `security` asks for TLS, the
    /// ApiVersions handshake, and SASL authentication when it has credentials.
    pub(crate) async fn connect(
        addr: &str,
        client_id: &str,
        timeout: Duration,
        security: &ConnectionSecurity,
    ) -> Result<Self, GroupError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| GroupError::Timeout {
                what: format!("connect to {addr}"),
            })?
            .map_err(|e| GroupError::Io {
                addr: addr.to_string(),
                source: e,
            })?;
        // Only latency depends on it: a socket that refuses TCP_NODELAY still works.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(addr, error = %e, "cannot set TCP_NODELAY on the connection");
        }
        let stream: Box<dyn BrokerStream> = match &security.tls {
            None => Box::new(stream),
            Some(tls) => {
                let host = host_of(addr);
                let name =
                    tributary_security::rustls::pki_types::ServerName::try_from(host.to_string())
                        .map_err(|e| GroupError::Tls {
                        addr: addr.to_string(),
                        message: format!("{host} is not a valid server name: {e}"),
                    })?;
                let connector = tokio_rustls::TlsConnector::from(tls.current());
                let tls_stream = tokio::time::timeout(timeout, connector.connect(name, stream))
                    .await
                    .map_err(|_| GroupError::Timeout {
                        what: format!("TLS handshake with {addr}"),
                    })?
                    .map_err(|e| GroupError::Tls {
                        addr: addr.to_string(),
                        message: e.to_string(),
                    })?;
                Box::new(tls_stream)
            }
        };
        let mut conn = Connection {
            addr: addr.to_string(),
            stream,
            client_id: StrBytes::from_string(client_id.to_string()),
            correlation_id: 0,
            broker_versions: HashMap::new(),
            security: security.clone(),
            session: None,
            timeout,
        };
        conn.api_versions(timeout).await?;
        if let Some(credentials) = &security.sasl {
            conn.authenticate(credentials, timeout).await?;
        }
        Ok(conn)
    }

    /// The exchange for `credentials`; for the OIDC flow the token comes from its source on a
    /// blocking thread (an HTTP request when the cached one is due for refresh).
    async fn exchange(&self, credentials: &SaslCredentials) -> Result<SaslExchange, GroupError> {
        if let SaslCredentials::OAuthBearerOidc { source } = credentials {
            let source = source.clone();
            let token = tokio::task::spawn_blocking(move || source.token())
                .await
                .map_err(|e| GroupError::Token {
                    addr: self.addr.clone(),
                    message: format!("the token request did not complete: {e}"),
                })?
                .map_err(|e| GroupError::Token {
                    addr: self.addr.clone(),
                    message: e.to_string(),
                })?;
            return Ok(SaslExchange::oauth_bearer(&token.value));
        }
        SaslExchange::new(credentials).map_err(|e| GroupError::Authentication {
            addr: self.addr.clone(),
            message: e.to_string(),
        })
    }

    /// SaslHandshake v1 naming the mechanism, then SaslAuthenticate requests carrying the
    /// exchange's messages until it completes. A broker refusal is
    /// [`GroupError::Authentication`] with the broker's message.
    async fn authenticate(
        &mut self,
        credentials: &SaslCredentials,
        timeout: Duration,
    ) -> Result<(), GroupError> {
        let addr = self.addr.clone();
        let auth_err = |message: String| GroupError::Authentication {
            addr: addr.clone(),
            message,
        };
        let mut exchange = self.exchange(credentials).await?;
        let mechanism = exchange.mechanism();
        let version = self.version(ApiKey::SaslHandshake)?;
        let mut hs = SaslHandshakeRequest::default();
        hs.mechanism = StrBytes::from_static_str(mechanism);
        let resp = self.send_now(&hs, version, timeout).await?;
        if resp.error_code != 0 {
            let enabled: Vec<String> = resp.mechanisms.iter().map(|m| m.to_string()).collect();
            return Err(auth_err(format!(
                "the broker does not enable {mechanism} on this listener ({}; it enables {})",
                error_name(resp.error_code),
                enabled.join(", ")
            )));
        }
        let version = self.version(ApiKey::SaslAuthenticate)?;
        let mut message = exchange.step(None).map_err(|e| auth_err(e.to_string()))?;
        let mut lifetime_ms = 0;
        while let Some(bytes) = message {
            let mut req = SaslAuthenticateRequest::default();
            req.auth_bytes = Bytes::from(bytes);
            let resp = self.send_now(&req, version, timeout).await?;
            lifetime_ms = resp.session_lifetime_ms;
            if resp.error_code != 0 {
                let detail = resp
                    .error_message
                    .as_ref()
                    .map(|m| m.to_string())
                    .unwrap_or_else(|| error_name(resp.error_code));
                return Err(auth_err(format!(
                    "{detail} ({mechanism}, {})",
                    error_name(resp.error_code)
                )));
            }
            message = exchange
                .step(Some(&resp.auth_bytes))
                .map_err(|e| auth_err(e.to_string()))?;
        }
        // KIP-368: a positive lifetime means the broker closes the connection at the first
        // request after it unless the client authenticated again.
        self.session = (lifetime_ms > 0).then(|| {
            let now = Instant::now();
            // Spreads the re-authentications of many connections (not for anything secret).
            let jitter = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos() % 1000)
                .unwrap_or(500) as f64
                / 1000.0;
            let share = 0.85 + 0.1 * jitter;
            Session {
                reauth_at: now + Duration::from_millis((lifetime_ms as f64 * share) as u64),
                ends_at: now + Duration::from_millis(lifetime_ms as u64),
            }
        });
        tracing::debug!(
            addr = %self.addr,
            mechanism,
            session_lifetime_ms = lifetime_ms,
            "SASL authentication succeeded"
        );
        Ok(())
    }

    /// Authenticates again when the session is due for it (KIP-368: SaslHandshake and
    /// SaslAuthenticate on the open connection, between two requests, as Java's client does).
    /// A connection left idle past the end of its session (the broker would close it at the
    /// next request) is replaced by a new one to the same broker, which is all a group member
    /// needs: its membership does not live in the connection.
    async fn reauthenticate_if_due(&mut self) -> Result<(), GroupError> {
        let Some(session) = self.session else {
            return Ok(());
        };
        let now = Instant::now();
        if now < session.reauth_at {
            return Ok(());
        }
        // A second of margin: a request sent just before the end may arrive after it.
        if now + Duration::from_secs(1) >= session.ends_at {
            tracing::debug!(addr = %self.addr, "the SASL session ended while idle; connecting again");
            let client_id = self.client_id.to_string();
            let fresh = Box::pin(Connection::connect(
                &self.addr,
                &client_id,
                self.timeout,
                &self.security,
            ))
            .await?;
            *self = fresh;
            return Ok(());
        }
        let Some(credentials) = self.security.sasl.clone() else {
            return Ok(());
        };
        tracing::debug!(addr = %self.addr, "authenticating again before the SASL session ends");
        self.authenticate(&credentials, self.timeout).await
    }

    /// The `host:port` this connection goes to.
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    async fn api_versions(&mut self, timeout: Duration) -> Result<(), GroupError> {
        let mut req = ApiVersionsRequest::default();
        req.client_software_name = StrBytes::from_static_str("tributary");
        req.client_software_version = StrBytes::from_static_str(env!("CARGO_PKG_VERSION"));
        let mut resp = self.send(&req, 3, timeout).await?;
        if resp.error_code == 35 {
            // UNSUPPORTED_VERSION: the broker answered in v0 with its ranges; retry at v0.
            resp = self
                .send(&ApiVersionsRequest::default(), 0, timeout)
                .await?;
        }
        if resp.error_code != 0 {
            return Err(GroupError::Broker {
                api: "ApiVersions",
                code: resp.error_code,
                name: error_name(resp.error_code),
            });
        }
        self.broker_versions = resp
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        Ok(())
    }

    /// The version to use for `key`: the highest both sides support.
    pub(crate) fn version(&self, key: ApiKey) -> Result<i16, GroupError> {
        let (our_min, our_max) = client_versions(key);
        let (broker_min, broker_max) =
            self.broker_versions
                .get(&(key as i16))
                .copied()
                .ok_or(GroupError::UnsupportedApi {
                    api: key as i16,
                    broker: None,
                })?;
        let v = our_max.min(broker_max);
        if v < our_min.max(broker_min) {
            return Err(GroupError::UnsupportedApi {
                api: key as i16,
                broker: Some((broker_min, broker_max)),
            });
        }
        Ok(v)
    }

    /// Sends one request at `version` and waits (up to `timeout`) for its response,
    /// authenticating again first when the SASL session is due for it.
    /// Any error leaves the connection unusable; callers drop it.
    pub(crate) async fn send<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, GroupError> {
        self.reauthenticate_if_due().await?;
        self.send_now(req, version, timeout).await
    }

    /// [`Connection::send`] without the re-authentication check (for the SASL requests).
    async fn send_now<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, GroupError> {
        let api_name = api_name(R::KEY);
        match tokio::time::timeout(timeout, self.send_inner(req, version)).await {
            Ok(r) => r,
            Err(_) => Err(GroupError::Timeout {
                what: format!("{api_name} v{version} to {}", self.addr),
            }),
        }
    }

    async fn send_inner<R: Request>(
        &mut self,
        req: &R,
        version: i16,
    ) -> Result<R::Response, GroupError> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let correlation_id = self.correlation_id;
        let mut header = RequestHeader::default();
        header.request_api_key = R::KEY;
        header.request_api_version = version;
        header.correlation_id = correlation_id;
        header.client_id = Some(self.client_id.clone());

        let mut body = BytesMut::new();
        body.put_i32(0); // length placeholder
        header
            .encode(&mut body, R::header_version(version))
            .map_err(|e| GroupError::Codec(format!("encode request header: {e}")))?;
        req.encode(&mut body, version).map_err(|e| {
            GroupError::Codec(format!("encode {} v{version}: {e}", api_name(R::KEY)))
        })?;
        let len = (body.len() - 4) as i32;
        body[..4].copy_from_slice(&len.to_be_bytes());

        let io = |e| GroupError::Io {
            addr: self.addr.clone(),
            source: e,
        };
        self.stream.write_all(&body).await.map_err(io)?;
        let io = |e| GroupError::Io {
            addr: self.addr.clone(),
            source: e,
        };
        let size = self.stream.read_i32().await.map_err(io)?;
        if size < 0 || size as usize > MAX_FRAME {
            return Err(GroupError::Codec(format!(
                "invalid response frame size {size}"
            )));
        }
        let mut frame = vec![0u8; size as usize];
        let io = |e| GroupError::Io {
            addr: self.addr.clone(),
            source: e,
        };
        self.stream.read_exact(&mut frame).await.map_err(io)?;
        let mut frame = Bytes::from(frame);
        let resp_header = ResponseHeader::decode(&mut frame, R::Response::header_version(version))
            .map_err(|e| GroupError::Codec(format!("decode response header: {e}")))?;
        if resp_header.correlation_id != correlation_id {
            return Err(GroupError::Codec(format!(
                "correlation id mismatch: sent {correlation_id}, got {}",
                resp_header.correlation_id
            )));
        }
        let resp = R::Response::decode(&mut frame, version).map_err(|e| {
            GroupError::Codec(format!(
                "decode {} v{version} response: {e}",
                api_name(R::KEY)
            ))
        })?;
        if frame.has_remaining() {
            tracing::trace!(
                api = api_name(R::KEY),
                extra = frame.remaining(),
                "ignoring trailing bytes in response"
            );
        }
        Ok(resp)
    }
}

/// Human-readable API name for logs and errors.
pub(crate) fn api_name(key: i16) -> &'static str {
    match ApiKey::try_from(key) {
        Ok(ApiKey::ApiVersions) => "ApiVersions",
        Ok(ApiKey::FindCoordinator) => "FindCoordinator",
        Ok(ApiKey::JoinGroup) => "JoinGroup",
        Ok(ApiKey::SyncGroup) => "SyncGroup",
        Ok(ApiKey::Heartbeat) => "Heartbeat",
        Ok(ApiKey::LeaveGroup) => "LeaveGroup",
        Ok(ApiKey::SaslHandshake) => "SaslHandshake",
        Ok(ApiKey::SaslAuthenticate) => "SaslAuthenticate",
        Ok(ApiKey::Metadata) => "Metadata",
        _ => "request",
    }
}

/// The host part of `host:port` (brackets of an IPv6 literal removed).
fn host_of(addr: &str) -> &str {
    let host = match addr.rfind(':') {
        Some(i) => &addr[..i],
        None => addr,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Splits `"host:port,host:port"` into trimmed, non-empty addresses.
pub(crate) fn parse_bootstrap(bootstrap: &str) -> Vec<String> {
    bootstrap
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Finds the group coordinator (FindCoordinator, key_type 0 = GROUP) through the first
/// reachable bootstrap broker and connects to it. One attempt per bootstrap address; the
/// caller retries with backoff. Retriable broker errors come back as
/// [`GroupError::CoordinatorUnavailable`].
pub(crate) async fn discover_coordinator(
    bootstrap: &[String],
    config: &GroupConfig,
) -> Result<Connection, GroupError> {
    let mut last_err = GroupError::NoBootstrap;
    for addr in bootstrap {
        match find_coordinator_via(addr, config).await {
            Ok(conn) => return Ok(conn),
            Err(e) => {
                tracing::debug!(bootstrap = %addr, error = %e, "coordinator lookup failed");
                last_err = e;
            }
        }
    }
    Err(last_err)
}

async fn find_coordinator_via(addr: &str, config: &GroupConfig) -> Result<Connection, GroupError> {
    let mut conn = Connection::connect(
        addr,
        &config.client_id,
        config.request_timeout,
        &config.security,
    )
    .await?;
    let version = conn.version(ApiKey::FindCoordinator)?;
    let mut req = FindCoordinatorRequest::default();
    req.key_type = 0;
    let group = StrBytes::from_string(config.group_id.clone());
    if version >= 4 {
        req.coordinator_keys = vec![group];
    } else {
        req.key = group;
    }
    let resp = conn.send(&req, version, config.request_timeout).await?;
    let (code, host, port, node) = if version >= 4 {
        let c = resp.coordinators.first().ok_or_else(|| {
            GroupError::Codec("FindCoordinator response without coordinators".into())
        })?;
        (c.error_code, c.host.to_string(), c.port, c.node_id.0)
    } else {
        (
            resp.error_code,
            resp.host.to_string(),
            resp.port,
            resp.node_id.0,
        )
    };
    match code {
        0 => {}
        // COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
        14..=16 => {
            return Err(GroupError::CoordinatorUnavailable {
                code,
                name: error_name(code),
            })
        }
        _ => {
            return Err(GroupError::Broker {
                api: "FindCoordinator",
                code,
                name: error_name(code),
            })
        }
    }
    let coord_addr = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    tracing::debug!(group = %config.group_id, coordinator = %coord_addr, node, "found group coordinator");
    if coord_addr == conn.addr() {
        return Ok(conn);
    }
    Connection::connect(
        &coord_addr,
        &config.client_id,
        config.request_timeout,
        &config.security,
    )
    .await
}

/// Connects to the first reachable bootstrap broker with `security` (TLS handshake, ApiVersions,
/// SASL authentication) and closes the connection: a worker checks its credentials at startup,
/// so a wrong password or an untrusted certificate stops it with a clear error rather than
/// retries. Authentication and TLS errors are returned at once; otherwise the last
/// connection error when no broker answered.
pub async fn check_connection(
    bootstrap: &str,
    client_id: &str,
    timeout: Duration,
    security: &ConnectionSecurity,
) -> Result<(), GroupError> {
    let mut last_err = GroupError::NoBootstrap;
    for addr in parse_bootstrap(bootstrap) {
        match Connection::connect(&addr, client_id, timeout, security).await {
            Ok(_) => return Ok(()),
            Err(e @ (GroupError::Authentication { .. } | GroupError::Tls { .. })) => return Err(e),
            Err(e) => last_err = e,
        }
    }
    Err(last_err)
}

/// A topic as the broker describes it: absent, or present under a topic id (KIP-516).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicIdentity {
    /// The broker answered UNKNOWN_TOPIC_OR_PARTITION.
    Absent,
    /// The topic exists; the id changes when the topic is deleted and created again.
    Present(u128),
}

/// Looks `topic` up (Metadata v10+, never auto-creating it) through the first reachable
/// bootstrap broker. Errors: no broker reachable, a broker too old for topic ids (< 2.8), or a
/// topic error other than UNKNOWN_TOPIC_OR_PARTITION.
pub async fn topic_identity(
    bootstrap: &str,
    client_id: &str,
    topic: &str,
    timeout: Duration,
    security: &ConnectionSecurity,
) -> Result<TopicIdentity, GroupError> {
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::{MetadataRequest, TopicName};
    let mut last_err = GroupError::NoBootstrap;
    for addr in parse_bootstrap(bootstrap) {
        let attempt = async {
            let mut conn = Connection::connect(&addr, client_id, timeout, security).await?;
            let version = conn.version(ApiKey::Metadata)?;
            let mut wanted = MetadataRequestTopic::default();
            wanted.name = Some(TopicName(StrBytes::from_string(topic.to_string())));
            let mut req = MetadataRequest::default();
            req.topics = Some(vec![wanted]);
            req.allow_auto_topic_creation = false;
            let resp = conn.send(&req, version, timeout).await?;
            let t = resp
                .topics
                .iter()
                .find(|t| t.name.as_ref().map(|n| n.0.as_str()) == Some(topic))
                .ok_or_else(|| {
                    GroupError::Codec(format!("Metadata response without topic {topic}"))
                })?;
            match t.error_code {
                0 => Ok(TopicIdentity::Present(t.topic_id.as_u128())),
                3 => Ok(TopicIdentity::Absent),
                code => Err(GroupError::Broker {
                    api: "Metadata",
                    code,
                    name: error_name(code),
                }),
            }
        };
        match attempt.await {
            Ok(found) => return Ok(found),
            Err(e) => last_err = e,
        }
    }
    Err(last_err)
}
