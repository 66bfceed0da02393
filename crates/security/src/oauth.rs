//! OAUTHBEARER tokens as Java's Kafka clients log in with them (Kafka 4.1): the OIDC
//! client-credentials flow of `OAuthBearerLoginCallbackHandler` (KIP-768; the
//! `sasl.oauthbearer.client.credentials.*` and `sasl.oauthbearer.scope` keys of KIP-1139), and
//! Kafka's unsecured tokens, behind one cache ([`TokenSource`]) that refreshes as
//! `ExpiringCredentialRefreshingLogin` schedules it (`sasl.login.refresh.*`).
//!
//! What a client-credentials login does, as Java's `ClientCredentialsJwtRetriever` and
//! `HttpJwtRetriever` do it:
//!
//! - POST to `sasl.oauthbearer.token.endpoint.url` with `grant_type=client_credentials` (and
//!   `&scope=…` when a scope is set) as `application/x-www-form-urlencoded`, the client id and
//!   secret in an HTTP basic `Authorization` header (RFC 7617, standard base64; each part URL
//!   encoded first when `sasl.oauthbearer.header.urlencode=true`);
//! - retry with exponential backoff from `sasl.login.retry.backoff.ms` (default 100 ms) within
//!   `sasl.login.retry.backoff.max.ms` (default 10 000 ms) in all, except on the 4xx/5xx codes
//!   Java deems permanent (400, 401, 403, 404, …);
//! - take `access_token` (or `id_token`) from the JSON answer; it must be a JWT whose payload
//!   has `exp` and the subject claim (`sasl.oauthbearer.sub.claim.name`, default `sub`), as
//!   `ClientJwtValidator` checks. The token's lifetime is its `exp` claim (`expires_in` is not
//!   used, as in Java); the subject is the principal given to librdkafka.
//!
//! `https` endpoints are reached with the `ssl.*` options inside `sasl.jaas.config` (Java's
//! `JaasOptionsUtils.createSSLSocketFactory`: trust store, key store, host name check), else
//! with the system's trusted CAs. `file:` endpoints name a file holding the token
//! (`FileJwtRetriever`). As in Kafka 4.x, the endpoint must be listed in the JVM system
//! property `org.apache.kafka.sasl.oauthbearer.allowed.urls`, which Tributary reads from
//! `KAFKA_OPTS` (`-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=URL[,URL…]`), where Java's
//! start scripts pass it.
//!
//! Sources are shared: every client whose settings ask for the same login uses one
//! [`TokenSource`] (found again by [`lookup`] from the id librdkafka carries in its
//! `sasl.oauthbearer.config`), so a worker fetches one token per distinct login, not one per
//! client. [`TokenSource::token`] blocks (HTTP): call it on a blocking thread.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;

use crate::jaas::LoginModule;
use crate::SecurityError;

/// `sasl.login.callback.handler.class` for the client-credentials flow.
pub const LOGIN_CALLBACK_HANDLER: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler";

/// The JVM system property listing the OAuth URLs a Kafka 4.x client may use
/// (`BrokerSecurityConfigs.ALLOWED_SASL_OAUTHBEARER_URLS_CONFIG`; default: none).
pub const ALLOWED_URLS_PROPERTY: &str = "org.apache.kafka.sasl.oauthbearer.allowed.urls";

/// `sasl.oauthbearer.token.endpoint.url`.
pub const TOKEN_ENDPOINT_URL: &str = "sasl.oauthbearer.token.endpoint.url";
/// `sasl.oauthbearer.client.credentials.client.id` (KIP-1139, Kafka 4.1).
pub const CLIENT_ID: &str = "sasl.oauthbearer.client.credentials.client.id";
/// `sasl.oauthbearer.client.credentials.client.secret` (KIP-1139, Kafka 4.1).
pub const CLIENT_SECRET: &str = "sasl.oauthbearer.client.credentials.client.secret";
/// `sasl.oauthbearer.scope` (KIP-1139, Kafka 4.1).
pub const SCOPE: &str = "sasl.oauthbearer.scope";
/// `sasl.oauthbearer.sub.claim.name` (default `sub`).
pub const SUB_CLAIM_NAME: &str = "sasl.oauthbearer.sub.claim.name";
/// `sasl.oauthbearer.scope.claim.name` (default `scope`).
pub const SCOPE_CLAIM_NAME: &str = "sasl.oauthbearer.scope.claim.name";
/// `sasl.jaas.config`, where the older `clientId`, `clientSecret` and `scope` options live.
const JAAS: &str = "sasl.jaas.config";

/// How long after a failed refresh the next one is tried while the current token is still
/// valid (`ExpiringCredentialRefreshingLogin`'s 10 s).
const RETRY_AFTER_FAILED_REFRESH_MS: i64 = 10_000;
/// Connect and read timeouts of a token request when `sasl.login.connect.timeout.ms` /
/// `sasl.login.read.timeout.ms` are unset (Java's HTTP client then waits without limit).
const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
const DEFAULT_READ_TIMEOUT_MS: u64 = 30_000;
/// Longest answer read from a token endpoint.
const MAX_RESPONSE_BYTES: u64 = 1024 * 1024;

/// When to fetch the next token (`sasl.login.refresh.*`, Kafka's
/// `ExpiringCredentialRefreshConfig`); defaults and ranges as `SaslConfigs` defines them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefreshConfig {
    /// `sasl.login.refresh.window.factor`: the share of the token's lifetime after which it is
    /// refreshed, 0.5–1.0 (default 0.8).
    pub window_factor: f64,
    /// `sasl.login.refresh.window.jitter`: a random share added to the factor, 0–0.25
    /// (default 0.05).
    pub window_jitter: f64,
    /// `sasl.login.refresh.min.period.seconds`: the least time between refreshes, 0–900 s
    /// (default 60).
    pub min_period_s: u64,
    /// `sasl.login.refresh.buffer.seconds`: how long before expiry a refresh happens at the
    /// latest, 0–3600 s (default 300).
    pub buffer_s: u64,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig {
            window_factor: 0.8,
            window_jitter: 0.05,
            min_period_s: 60,
            buffer_s: 300,
        }
    }
}

impl RefreshConfig {
    /// When to refresh a token that expires at `expire_ms` (ms since the epoch), `now_ms`
    /// being now and `start_ms` its `iat` when it has one; `random` is in 0..1 (the jitter's
    /// draw). The rules of `ExpiringCredentialRefreshingLogin.refreshMs`: after the factor
    /// (plus jitter) of the lifetime from its start, but no later than `buffer_s` before
    /// expiry and no sooner than `min_period_s` from now; when the time left is shorter than
    /// those two buffers together, at the factor of the time left. A token already expired is
    /// refreshed again in 10 s.
    pub fn refresh_at_ms(
        &self,
        now_ms: i64,
        start_ms: Option<i64>,
        expire_ms: i64,
        random: f64,
    ) -> i64 {
        if now_ms > expire_ms {
            return now_ms + RETRY_AFTER_FAILED_REFRESH_MS;
        }
        let pct = self.window_factor + self.window_jitter * random.clamp(0.0, 1.0);
        let min_ms = 1000 * self.min_period_s as i64;
        let buffer_ms = 1000 * self.buffer_s as i64;
        if now_ms + min_ms + buffer_ms > expire_ms {
            return now_ms + ((expire_ms - now_ms) as f64 * pct) as i64;
        }
        let start = start_ms.unwrap_or(now_ms);
        let proposed = start + ((expire_ms - start) as f64 * pct) as i64;
        if proposed > expire_ms - buffer_ms {
            return expire_ms - buffer_ms;
        }
        if proposed < now_ms + min_ms {
            return now_ms + min_ms;
        }
        proposed
    }
}

/// Backoff between token requests (`sasl.login.retry.backoff.ms` and
/// `sasl.login.retry.backoff.max.ms`, Kafka's `Retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryConfig {
    /// The first wait, ms (default 100); each further wait doubles it.
    pub backoff_ms: u64,
    /// The time all attempts may take together, ms (default 10 000).
    pub backoff_max_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            backoff_ms: 100,
            backoff_max_ms: 10_000,
        }
    }
}

impl RetryConfig {
    /// The wait after failed attempt `attempt` (1-based) with `remaining_ms` of the budget
    /// left; `None` when no attempt is left.
    pub fn wait_ms(&self, attempt: u32, remaining_ms: i64) -> Option<u64> {
        let wait = self
            .backoff_ms
            .saturating_mul(1u64 << attempt.saturating_sub(1).min(40));
        let wait = (wait as i64).min(remaining_ms);
        (wait > 0).then_some(wait as u64)
    }
}

/// A token as Kafka's clients hold it (`OAuthBearerToken`).
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    /// The compact JWT sent to the broker.
    pub value: String,
    /// The principal: the subject claim.
    pub principal: String,
    /// The scope claim's values (a string claim is one value, as in `ClientJwtValidator`).
    pub scope: Vec<String>,
    /// The `iat` claim, ms since the epoch.
    pub issued_at_ms: Option<i64>,
    /// The `exp` claim, ms since the epoch.
    pub expires_at_ms: i64,
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("principal", &self.principal)
            .field("scope", &self.scope)
            .field("issued_at_ms", &self.issued_at_ms)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

/// Why no token could be had: the setting to look at (without the client's `producer.` /
/// `consumer.` / `admin.` prefix, which the caller knows) and what happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct TokenError {
    /// The setting most likely at fault, e.g. `sasl.jaas.config` (a client secret the
    /// provider refused) or `sasl.oauthbearer.token.endpoint.url` (unreachable).
    pub key: String,
    /// What happened, with the provider's error (never the secret or the token).
    pub message: String,
}

impl TokenError {
    fn new(key: &str, message: impl Into<String>) -> TokenError {
        TokenError {
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// As a [`SecurityError`] naming the key with `prefix` (`producer.`, …).
    pub fn with_prefix(&self, prefix: &str) -> SecurityError {
        SecurityError::new(&format!("{prefix}{}", self.key), self.message.clone())
    }
}

/// The claims of a JWT access token, checked as Kafka's `ClientJwtValidator` checks them:
/// three dot-separated parts, a base64url JSON payload with a numeric `exp` (seconds) and a
/// non-blank string subject claim `sub_claim`; `iat` when present must be a number; the scope
/// claim `scope_claim` is a string (one value) or a list of strings. The signature is not
/// checked (that is the broker's work). Errors say what is missing.
pub fn parse_jwt(value: &str, sub_claim: &str, scope_claim: &str) -> Result<AccessToken, String> {
    let value = value.trim();
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() != 3 {
        return Err(format!(
            "the token is not a JWT (it has {} dot-separated parts, a JWT has 3)",
            parts.len()
        ));
    }
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[1].trim_end_matches('='))
        .map_err(|e| format!("the token's payload is not base64url: {e}"))?;
    let claims: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&payload)
        .map_err(|e| format!("the token's payload is not a JSON object: {e}"))?;
    let seconds = |name: &str| -> Result<Option<i64>, String> {
        match claims.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Number(n)) => n
                .as_f64()
                .map(|s| Some((s * 1000.0) as i64))
                .ok_or_else(|| format!("the token's {name} claim is not a number")),
            Some(_) => Err(format!("the token's {name} claim is not a number")),
        }
    };
    let expires_at_ms = seconds("exp")?.ok_or("the token has no exp claim")?;
    if expires_at_ms < 0 {
        return Err("the token's exp claim is negative".into());
    }
    let issued_at_ms = seconds("iat")?;
    if issued_at_ms.is_some_and(|t| t < 0) {
        return Err("the token's iat claim is negative".into());
    }
    let principal = match claims.get(sub_claim) {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(serde_json::Value::String(_)) | None | Some(serde_json::Value::Null) => {
            return Err(format!(
                "the token has no {sub_claim} claim (its principal)"
            ))
        }
        Some(_) => return Err(format!("the token's {sub_claim} claim is not a string")),
    };
    let scope = match claims.get(scope_claim) {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    Ok(AccessToken {
        value: value.to_string(),
        principal,
        scope,
        issued_at_ms,
        expires_at_ms,
    })
}

/// The token in a token endpoint's JSON answer: `access_token`, else `id_token` (Kafka's
/// `JwtResponseParser`), trimmed. Errors quote at most 1000 characters of the answer.
pub fn parse_token_response(body: &str) -> Result<String, String> {
    let json: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| format!("the token endpoint's answer is not JSON: {e}"))?;
    for field in ["access_token", "id_token"] {
        if let Some(serde_json::Value::String(s)) = json.get(field) {
            if !s.trim().is_empty() {
                return Ok(s.trim().to_string());
            }
        }
    }
    let snippet: String = body.chars().take(1000).collect();
    Err(format!(
        "the token endpoint's answer has no access_token: {snippet}"
    ))
}

/// An OAuth error answer as Kafka's `HttpJwtRetriever.formatErrorMessage` shows it:
/// `{error - error_description}` (RFC 6749 §5.2), `{errorCode - errorSummary}`, the body, or
/// `{}` when empty. Also returns the `error` code, when there is one.
fn format_error_body(body: &str) -> (String, Option<String>) {
    if body.trim().is_empty() {
        return ("{}".into(), None);
    }
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => format!("\"{s}\""),
        serde_json::Value::Null => "null".into(),
        other => other.to_string(),
    };
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(json) => {
            if let Some(e) = json.get("error") {
                let d = json.get("error_description").map(text).unwrap_or_default();
                (
                    format!("{{{} - {d}}}", text(e)),
                    e.as_str().map(str::to_string),
                )
            } else if let Some(e) = json.get("errorCode") {
                let d = json.get("errorSummary").map(text).unwrap_or_default();
                (format!("{{{} - {d}}}", text(e)), None)
            } else {
                (body.trim().to_string(), None)
            }
        }
        Err(_) => (format!("{{{}}}", body.trim()), None),
    }
}

/// The HTTP codes after which Kafka's `HttpJwtRetriever` does not try again.
fn permanent_status(code: u16) -> bool {
    matches!(
        code,
        400 | 401
            | 402
            | 403
            | 404
            | 405
            | 406
            | 407
            | 409
            | 410
            | 411
            | 412
            | 413
            | 414
            | 415
            | 501
            | 505
    )
}

/// `URLEncoder.encode(s, UTF_8)`: letters, digits and `.-*_` kept, space as `+`, every other
/// byte as `%XX`.
pub fn form_urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Where tokens come from.
enum Endpoint {
    /// An `http`/`https` token endpoint.
    Http { url: String, agent: ureq::Agent },
    /// A `file:` URL: the file holds the token.
    File(PathBuf),
}

/// Which settings a client-credentials login took its values from (unprefixed), for errors.
#[derive(Debug, Clone, Copy)]
struct CredentialKeys {
    secret: &'static str,
    scope: &'static str,
}

/// A client-credentials login (`ClientCredentialsJwtRetriever` + `ClientJwtValidator`).
struct ClientCredentials {
    endpoint: Endpoint,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
    urlencode: bool,
    sub_claim: String,
    scope_claim: String,
    retry: RetryConfig,
    keys: CredentialKeys,
}

impl ClientCredentials {
    /// The request's headers and body, as `ClientCredentialsRequestFormatter` makes them.
    fn request(&self) -> (Vec<(&'static str, String)>, String) {
        let enc = |s: &str| {
            if self.urlencode {
                form_urlencode(s)
            } else {
                s.to_string()
            }
        };
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            enc(&self.client_id),
            enc(&self.client_secret)
        ));
        let headers = vec![
            ("Accept", "application/json".to_string()),
            ("Authorization", format!("Basic {basic}")),
            ("Cache-Control", "no-cache".to_string()),
            (
                "Content-Type",
                "application/x-www-form-urlencoded".to_string(),
            ),
        ];
        let mut body = "grant_type=client_credentials".to_string();
        if let Some(scope) = &self.scope {
            body.push_str("&scope=");
            body.push_str(&enc(scope));
        }
        (headers, body)
    }

    /// One token request; `Err((error, retry))`.
    fn attempt(&self, url: &str, agent: &ureq::Agent) -> Result<String, (TokenError, bool)> {
        let (headers, body) = self.request();
        let mut req = agent.post(url);
        for (k, v) in &headers {
            req = req.set(k, v);
        }
        let read = |resp: ureq::Response| -> String {
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut std::io::Read::take(resp.into_reader(), MAX_RESPONSE_BYTES),
                &mut text,
            )
            .ok();
            text
        };
        match req.send_string(&body) {
            Ok(resp) => {
                let code = resp.status();
                let text = read(resp);
                if (code == 200 || code == 201) && !text.trim().is_empty() {
                    Ok(text)
                } else {
                    Err((
                        TokenError::new(
                            TOKEN_ENDPOINT_URL,
                            format!(
                                "the token endpoint {url} answered {code} {}",
                                if text.trim().is_empty() {
                                    "with an empty body".to_string()
                                } else {
                                    format_error_body(&text).0
                                }
                            ),
                        ),
                        true,
                    ))
                }
            }
            Err(ureq::Error::Status(code, resp)) => {
                let (detail, error) = format_error_body(&read(resp));
                let key = match (code, error.as_deref()) {
                    (_, Some("invalid_scope")) => self.keys.scope,
                    (401, _) | (_, Some("invalid_client" | "unauthorized_client")) => {
                        self.keys.secret
                    }
                    _ => TOKEN_ENDPOINT_URL,
                };
                let hint = if key == self.keys.secret {
                    format!(" (client id {}: check the client secret)", self.client_id)
                } else {
                    String::new()
                };
                Err((
                    TokenError::new(
                        key,
                        format!(
                            "the token endpoint {url} refused the client-credentials request: \
                             {code} {detail}{hint}"
                        ),
                    ),
                    !permanent_status(code),
                ))
            }
            Err(ureq::Error::Transport(t)) => Err((
                TokenError::new(
                    TOKEN_ENDPOINT_URL,
                    // The transport error names the URL.
                    format!("could not reach the token endpoint: {t}"),
                ),
                true,
            )),
        }
    }

    /// The token, with retries (blocking).
    fn fetch(&self) -> Result<AccessToken, TokenError> {
        let text = match &self.endpoint {
            Endpoint::File(path) => std::fs::read_to_string(path).map_err(|e| {
                TokenError::new(
                    TOKEN_ENDPOINT_URL,
                    format!("cannot read the token file {}: {e}", path.display()),
                )
            })?,
            Endpoint::Http { url, agent } => {
                let end = now_ms() + self.retry.backoff_max_ms as i64;
                let mut attempt = 0;
                let body = loop {
                    attempt += 1;
                    match self.attempt(url, agent) {
                        Ok(body) => break body,
                        Err((e, retriable)) => {
                            let wait = if retriable {
                                self.retry.wait_ms(attempt, end - now_ms())
                            } else {
                                None
                            };
                            let Some(wait) = wait else { return Err(e) };
                            tracing::warn!(
                                attempt,
                                wait_ms = wait,
                                "OAuth token request failed, trying again: {e}"
                            );
                            // Token requests run on blocking threads (librdkafka's, or the
                            // runtime's blocking pool), as Java's retriever sleeps too.
                            std::thread::sleep(Duration::from_millis(wait));
                        }
                    }
                };
                parse_token_response(&body).map_err(|m| TokenError::new(TOKEN_ENDPOINT_URL, m))?
            }
        };
        parse_jwt(&text, &self.sub_claim, &self.scope_claim).map_err(|m| {
            let key = if m.contains(&format!(" {} claim", self.sub_claim)) {
                SUB_CLAIM_NAME
            } else {
                TOKEN_ENDPOINT_URL
            };
            TokenError::new(
                key,
                format!("the token for client id {}: {m}", self.client_id),
            )
        })
    }
}

/// How a source makes tokens.
enum Login {
    /// Kafka's unsecured JWS (`OAuthBearerUnsecuredLoginCallbackHandler`), for tests.
    Unsecured {
        principal: String,
        principal_claim: String,
        lifetime_s: u64,
        scope: Vec<String>,
    },
    ClientCredentials(Box<ClientCredentials>),
}

struct Cached {
    token: AccessToken,
    /// When the token was obtained, ms since the epoch.
    obtained_at_ms: i64,
    refresh_at_ms: i64,
}

impl Cached {
    /// The share of the token's lifetime (from when it was obtained) still left at `now_ms`.
    fn share_left(&self, now_ms: i64) -> f64 {
        let lifetime = (self.token.expires_at_ms - self.obtained_at_ms).max(1) as f64;
        (self.token.expires_at_ms - now_ms) as f64 / lifetime
    }
}

/// A cached, refreshing source of OAUTHBEARER tokens for every client with the same login
/// settings (see the module documentation).
pub struct TokenSource {
    id: String,
    login: Login,
    refresh: RefreshConfig,
    cached: Mutex<Option<Cached>>,
    /// Held while fetching, so concurrent callers wait for one request.
    fetching: Mutex<()>,
}

impl PartialEq for TokenSource {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for TokenSource {}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.id, self.describe())
    }
}

impl TokenSource {
    /// The id librdkafka carries (`sasl.oauthbearer.config`) to find this source again with
    /// [`lookup`].
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What this source is, for logs: `client credentials of client id X at URL`, or
    /// `unsecured tokens for principal P`.
    pub fn describe(&self) -> String {
        match &self.login {
            Login::Unsecured { principal, .. } => format!("unsecured tokens for {principal}"),
            Login::ClientCredentials(cc) => format!(
                "client credentials of client id {} at {}",
                cc.client_id,
                match &cc.endpoint {
                    Endpoint::Http { url, .. } => url.clone(),
                    Endpoint::File(p) => format!("file:{}", p.display()),
                }
            ),
        }
    }

    /// Whether tokens come from an OIDC provider (the client-credentials flow), rather than
    /// being made locally (unsecured tokens).
    pub fn is_client_credentials(&self) -> bool {
        matches!(self.login, Login::ClientCredentials(_))
    }

    /// The current token without fetching: `None` before the first fetch or once expired.
    pub fn cached(&self) -> Option<AccessToken> {
        let cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        cached
            .as_ref()
            .filter(|c| c.token.expires_at_ms > now_ms())
            .map(|c| c.token.clone())
    }

    /// A valid token: the cached one until its refresh time, else a new one (blocking: an
    /// HTTP request with retries). When a refresh fails while the cached token is still
    /// valid, that token is returned (with a warning) and the refresh is tried again in 10 s.
    pub fn token(&self) -> Result<AccessToken, TokenError> {
        self.token_with_share_left(0.0)
    }

    /// [`TokenSource::token`], refreshing early when less than `min_share` (0..1) of the cached
    /// token's lifetime is left. librdkafka asks for a token at 80 % of the time the last one
    /// had left and re-authenticates connections (KIP-368) shortly before a token's expiry:
    /// answering with a token that has most of its life ahead means it never sets, nor
    /// re-authenticates with, one about to expire.
    pub fn token_with_share_left(&self, min_share: f64) -> Result<AccessToken, TokenError> {
        if let Some(t) = self.fresh(min_share) {
            return Ok(t);
        }
        let _one_at_a_time = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = self.fresh(min_share) {
            return Ok(t);
        }
        let result = match &self.login {
            Login::Unsecured {
                principal,
                principal_claim,
                lifetime_s,
                scope,
            } => {
                let value =
                    crate::sasl::unsecured_jws(principal, principal_claim, *lifetime_s, scope);
                let now = now_ms();
                Ok(AccessToken {
                    value,
                    principal: principal.clone(),
                    scope: scope.clone(),
                    issued_at_ms: Some(now / 1000 * 1000),
                    expires_at_ms: (now / 1000 + *lifetime_s as i64) * 1000,
                })
            }
            Login::ClientCredentials(cc) => cc.fetch(),
        };
        let now = now_ms();
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(token) => {
                let refresh_at_ms = self.refresh.refresh_at_ms(
                    now,
                    token.issued_at_ms,
                    token.expires_at_ms,
                    random_unit(),
                );
                if self.is_client_credentials() {
                    tracing::info!(
                        principal = token.principal,
                        expires_in_s = (token.expires_at_ms - now) / 1000,
                        refresh_in_s = (refresh_at_ms - now) / 1000,
                        "obtained an OAuth access token ({})",
                        self.describe()
                    );
                }
                *cached = Some(Cached {
                    token: token.clone(),
                    obtained_at_ms: now,
                    refresh_at_ms,
                });
                Ok(token)
            }
            Err(e) => match cached.as_mut() {
                Some(c) if c.token.expires_at_ms > now => {
                    tracing::warn!(
                        "could not refresh the OAuth access token ({}); the current one is valid for {} s more: {e}",
                        self.describe(),
                        (c.token.expires_at_ms - now) / 1000
                    );
                    c.refresh_at_ms = now + RETRY_AFTER_FAILED_REFRESH_MS;
                    Ok(c.token.clone())
                }
                _ => Err(e),
            },
        }
    }

    /// The cached token unless it is due for refresh or has less than `min_share` of its
    /// lifetime left.
    fn fresh(&self, min_share: f64) -> Option<AccessToken> {
        let cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        let now = now_ms();
        cached
            .as_ref()
            .filter(|c| now < c.refresh_at_ms.min(c.token.expires_at_ms))
            .filter(|c| c.share_left(now) >= min_share)
            .map(|c| c.token.clone())
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A number in 0..1 for the refresh jitter (not for anything secret).
fn random_unit() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(now_ms());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Every source made so far, by the fingerprint of its settings.
fn registry() -> &'static Mutex<BTreeMap<String, Arc<TokenSource>>> {
    static SOURCES: OnceLock<Mutex<BTreeMap<String, Arc<TokenSource>>>> = OnceLock::new();
    SOURCES.get_or_init(Default::default)
}

/// The source with settings `fingerprint`, made by `make` (given its new id) the first time.
fn shared(
    fingerprint: String,
    make: impl FnOnce(String) -> Result<TokenSource, SecurityError>,
) -> Result<Arc<TokenSource>, SecurityError> {
    let mut sources = registry().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = sources.get(&fingerprint) {
        return Ok(s.clone());
    }
    let source = Arc::new(make(format!(
        "tributary-token-source-{}",
        sources.len() + 1
    ))?);
    sources.insert(fingerprint, source.clone());
    Ok(source)
}

/// The source whose [`TokenSource::id`] is `id` (librdkafka's `sasl.oauthbearer.config`).
pub fn lookup(id: &str) -> Option<Arc<TokenSource>> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .find(|s| s.id == id)
        .cloned()
}

/// The source of Kafka's unsecured tokens for these `OAuthBearerLoginModule` options.
pub fn unsecured_source(
    principal: &str,
    principal_claim: &str,
    lifetime_s: u64,
    scope: &[String],
    refresh: RefreshConfig,
) -> Arc<TokenSource> {
    let fingerprint = format!(
        "unsecured\0{principal}\0{principal_claim}\0{lifetime_s}\0{}\0{refresh:?}",
        scope.join("\0")
    );
    shared(fingerprint, |id| {
        Ok(TokenSource {
            id,
            login: Login::Unsecured {
                principal: principal.to_string(),
                principal_claim: principal_claim.to_string(),
                lifetime_s,
                scope: scope.to_vec(),
            },
            refresh,
            cached: Mutex::new(None),
            fetching: Mutex::new(()),
        })
    })
    .expect("an unsecured token source cannot fail to build")
}

/// The value of JVM system property `name` in a `KAFKA_OPTS`-style string (`-Dname=value`
/// words; the last one wins, as on a Java command line).
pub fn system_property(opts: &str, name: &str) -> Option<String> {
    let prefix = format!("-D{name}=");
    opts.split_whitespace()
        .filter_map(|w| w.strip_prefix(&prefix))
        .next_back()
        .map(str::to_string)
}

/// Checks `url` against `org.apache.kafka.sasl.oauthbearer.allowed.urls` from `kafka_opts`
/// (Kafka's `ConfigurationUtils.throwIfURLIsNotAllowed`: the value must be one of the
/// comma-separated entries, compared after trimming; unset allows none).
pub fn check_url_allowed(
    key: &str,
    url: &str,
    kafka_opts: Option<&str>,
) -> Result<(), SecurityError> {
    let allowed = kafka_opts
        .and_then(|o| system_property(o, ALLOWED_URLS_PROPERTY))
        .unwrap_or_default();
    if allowed.split(',').map(str::trim).any(|a| a == url) {
        return Ok(());
    }
    Err(SecurityError::new(
        key,
        format!(
            "the URL {url} cannot be accessed due to restrictions: list it in the system \
             property {ALLOWED_URLS_PROPERTY}, as Kafka 4.x clients require; Tributary reads it \
             from KAFKA_OPTS as Connect's start scripts pass it to Java \
             (KAFKA_OPTS=\"-D{ALLOWED_URLS_PROPERTY}={url}\")"
        ),
    ))
}

/// Reads the OAUTHBEARER login settings of one client for the client-credentials flow
/// (`sasl.login.callback.handler.class=…OAuthBearerLoginCallbackHandler`): the keys above,
/// the `clientId` / `clientSecret` / `scope` options of `module` (the `sasl.jaas.config` login
/// module; the keys win over them, as in Kafka 4.1), the `sasl.login.*` refresh, retry and
/// timeout settings, and the JAAS `ssl.*` options for an `https` endpoint. `get` reads an
/// unprefixed key (blank as unset), `named` puts the client's prefix before a key.
///
/// Errors name the key: no endpoint URL, an endpoint not allowed by `KAFKA_OPTS`, a missing
/// client id or secret, an out-of-range or malformed number, unsupported JAAS options
/// (`extension_*`, which librdkafka's token API cannot carry), an unusable JAAS store.
pub(crate) fn client_credentials_source(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
    module: &LoginModule,
    kafka_opts: Option<&str>,
) -> Result<Arc<TokenSource>, SecurityError> {
    let jaas_key = named(JAAS);
    if let Some(ext) = module.options.keys().find(|k| k.starts_with("extension_")) {
        return Err(SecurityError::new(
            &jaas_key,
            format!("the SASL extension option {ext} is not supported yet (librdkafka's token API carries no extensions)"),
        ));
    }
    let url = get(TOKEN_ENDPOINT_URL).ok_or_else(|| {
        SecurityError::new(
            &named(TOKEN_ENDPOINT_URL),
            format!("must be set for {LOGIN_CALLBACK_HANDLER}"),
        )
    })?;
    let url_key = named(TOKEN_ENDPOINT_URL);
    let parsed = url::Url::parse(&url)
        .map_err(|e| SecurityError::new(&url_key, format!("{url} is not a valid URL: {e}")))?;
    let scheme = parsed.scheme().to_ascii_lowercase();
    if !["http", "https", "file"].contains(&scheme.as_str()) {
        return Err(SecurityError::new(
            &url_key,
            format!("{url} has the protocol {scheme}; only http, https and file are supported"),
        ));
    }
    check_url_allowed(&url_key, &url, kafka_opts)?;
    let jaas_option = |name: &str| {
        module
            .options
            .get(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    // KIP-1139: the keys first, then the (deprecated) JAAS options.
    let pick = |key: &'static str, option: &str| -> (Option<String>, &'static str) {
        match get(key) {
            Some(v) => (Some(v), key),
            None => (jaas_option(option), JAAS),
        }
    };
    let (client_id, _) = pick(CLIENT_ID, "clientId");
    let (client_secret, secret_key) = pick(CLIENT_SECRET, "clientSecret");
    let (scope, scope_key) = pick(SCOPE, "scope");
    let client_id = client_id.ok_or_else(|| {
        SecurityError::new(
            &named(CLIENT_ID),
            "the client id is required: set it, or the clientId option of sasl.jaas.config",
        )
    })?;
    let client_secret = client_secret.ok_or_else(|| {
        SecurityError::new(
            &named(CLIENT_SECRET),
            "the client secret is required: set it, or the clientSecret option of sasl.jaas.config",
        )
    })?;
    let urlencode = match get("sasl.oauthbearer.header.urlencode") {
        None => false,
        Some(v) => parse_bool(&named("sasl.oauthbearer.header.urlencode"), &v)?,
    };
    let retry = RetryConfig {
        backoff_ms: number(get, named, "sasl.login.retry.backoff.ms", 100, 0, u64::MAX)?,
        backoff_max_ms: number(
            get,
            named,
            "sasl.login.retry.backoff.max.ms",
            10_000,
            0,
            u64::MAX,
        )?,
    };
    if retry.backoff_max_ms < retry.backoff_ms {
        return Err(SecurityError::new(
            &named("sasl.login.retry.backoff.max.ms"),
            format!(
                "{} is less than sasl.login.retry.backoff.ms ({})",
                retry.backoff_max_ms, retry.backoff_ms
            ),
        ));
    }
    let connect_ms = number(
        get,
        named,
        "sasl.login.connect.timeout.ms",
        DEFAULT_CONNECT_TIMEOUT_MS,
        0,
        i32::MAX as u64,
    )?;
    let read_ms = number(
        get,
        named,
        "sasl.login.read.timeout.ms",
        DEFAULT_READ_TIMEOUT_MS,
        0,
        i32::MAX as u64,
    )?;
    let sub_claim = get(SUB_CLAIM_NAME).unwrap_or_else(|| "sub".into());
    let scope_claim = get(SCOPE_CLAIM_NAME).unwrap_or_else(|| "scope".into());
    let refresh = refresh_config(get, named)?;
    // The JAAS options' ssl.* settings secure an https endpoint (JaasOptionsUtils).
    let ssl_options: BTreeMap<String, String> = module
        .options
        .iter()
        .filter(|(k, _)| k.starts_with("ssl."))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let fingerprint = format!(
        "client_credentials\0{url}\0{client_id}\0{client_secret}\0{}\0{urlencode}\0{sub_claim}\0{scope_claim}\0{retry:?}\0{connect_ms}\0{read_ms}\0{refresh:?}\0{ssl_options:?}\0{secret_key}\0{scope_key}",
        scope.as_deref().unwrap_or("")
    );
    shared(fingerprint, |id| {
        let endpoint = if scheme == "file" {
            let path = parsed.to_file_path().map_err(|()| {
                SecurityError::new(&url_key, format!("{url} does not name a local file"))
            })?;
            Endpoint::File(path)
        } else {
            let mut agent = ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_millis(connect_ms))
                .timeout_read(Duration::from_millis(read_ms))
                .timeout_write(Duration::from_millis(read_ms))
                .redirects(0)
                .user_agent(concat!("tributary/", env!("CARGO_PKG_VERSION")));
            if scheme == "https" {
                agent = agent.tls_config(endpoint_tls(&ssl_options, &jaas_key)?);
            }
            Endpoint::Http {
                url: url.clone(),
                agent: agent.build(),
            }
        };
        Ok(TokenSource {
            id,
            login: Login::ClientCredentials(Box::new(ClientCredentials {
                endpoint,
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
                scope: scope.clone(),
                urlencode,
                sub_claim: sub_claim.clone(),
                scope_claim: scope_claim.clone(),
                retry,
                keys: CredentialKeys {
                    secret: secret_key,
                    scope: scope_key,
                },
            })),
            refresh,
            cached: Mutex::new(None),
            fetching: Mutex::new(()),
        })
    })
}

/// The TLS configuration for an `https` token endpoint from the JAAS options' `ssl.*`
/// settings (Java's `ConfigDef.withClientSslSupport` over them): trust store, key store and
/// `ssl.endpoint.identification.algorithm` (default `https`); none set trusts the system's CAs.
fn endpoint_tls(
    options: &BTreeMap<String, String>,
    jaas_key: &str,
) -> Result<Arc<rustls::ClientConfig>, SecurityError> {
    let get = |k: &str| {
        options
            .get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let named = |k: &str| format!("{jaas_key} option {k}");
    let verify_hostname = match options.get("ssl.endpoint.identification.algorithm") {
        None => true,
        Some(v) if v.trim().is_empty() => false,
        Some(v) if v.trim().eq_ignore_ascii_case("https") => true,
        Some(v) => {
            return Err(SecurityError::new(
                &named("ssl.endpoint.identification.algorithm"),
                format!("{v} is not supported (https, or empty to turn host name checks off)"),
            ))
        }
    };
    let tls = crate::tls::TlsClient {
        trust: crate::tls::trust_material(&get, &named)?,
        identity: crate::tls::identity_material(&get, &named)?,
        verify_hostname,
    };
    crate::tls::client_config(&tls)
        .map_err(|e| SecurityError::new(jaas_key, format!("option {}: {}", e.key, e.message)))
}

/// `sasl.login.refresh.*` with the ranges of `SaslConfigs.addClientSaslSupport`.
pub(crate) fn refresh_config(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
) -> Result<RefreshConfig, SecurityError> {
    let fraction = |key: &str, default: f64, min: f64, max: f64| -> Result<f64, SecurityError> {
        match get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if (min..=max).contains(&x) => Ok(x),
                Ok(_) => Err(SecurityError::new(
                    &named(key),
                    format!("{v} is out of range (between {min} and {max})"),
                )),
                Err(_) => Err(SecurityError::new(
                    &named(key),
                    format!("{v} is not a number"),
                )),
            },
        }
    };
    Ok(RefreshConfig {
        window_factor: fraction("sasl.login.refresh.window.factor", 0.8, 0.5, 1.0)?,
        window_jitter: fraction("sasl.login.refresh.window.jitter", 0.05, 0.0, 0.25)?,
        min_period_s: number(
            get,
            named,
            "sasl.login.refresh.min.period.seconds",
            60,
            0,
            900,
        )?,
        buffer_s: number(
            get,
            named,
            "sasl.login.refresh.buffer.seconds",
            300,
            0,
            3600,
        )?,
    })
}

fn number(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
    key: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, SecurityError> {
    match get(key) {
        None => Ok(default),
        Some(v) => match v.parse::<i64>() {
            Ok(x) if x >= min as i64 && (x as u64) <= max => Ok(x as u64),
            Ok(_) => Err(SecurityError::new(
                &named(key),
                format!("{v} is out of range (at least {min}, at most {max})"),
            )),
            Err(_) => Err(SecurityError::new(
                &named(key),
                format!("{v} is not a whole number"),
            )),
        },
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, SecurityError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(SecurityError::new(key, format!("{v} is not true or false"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.c2ln",
            b64.encode(br#"{"alg":"RS256","typ":"at+jwt"}"#),
            b64.encode(claims.as_bytes())
        )
    }

    #[test]
    fn jwt_claims_as_the_client_validator_reads_them() {
        let t = parse_jwt(
            &jwt(r#"{"sub":"connect","exp":1800000000,"iat":1799999970,"scope":"kafka","aud":"kafka"}"#),
            "sub",
            "scope",
        )
        .unwrap();
        assert_eq!(t.principal, "connect");
        assert_eq!(t.expires_at_ms, 1_800_000_000_000);
        assert_eq!(t.issued_at_ms, Some(1_799_999_970_000));
        assert_eq!(t.scope, vec!["kafka".to_string()]);
        // Another subject claim, a list scope, no iat.
        let t = parse_jwt(
            &jwt(r#"{"client_id":"c1","exp":10,"roles":["a","b"]}"#),
            "client_id",
            "roles",
        )
        .unwrap();
        assert_eq!((t.principal.as_str(), t.issued_at_ms), ("c1", None));
        assert_eq!(t.scope, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn tokens_without_what_kafka_needs_are_refused() {
        let e = parse_jwt("opaque-token", "sub", "scope").unwrap_err();
        assert!(e.contains("not a JWT"), "{e}");
        let e = parse_jwt(&jwt(r#"{"sub":"connect"}"#), "sub", "scope").unwrap_err();
        assert!(e.contains("no exp claim"), "{e}");
        let e = parse_jwt(&jwt(r#"{"exp":10}"#), "sub", "scope").unwrap_err();
        assert!(e.contains("no sub claim"), "{e}");
        let e = parse_jwt(&jwt(r#"{"exp":10,"sub":" "}"#), "sub", "scope").unwrap_err();
        assert!(e.contains("no sub claim"), "{e}");
        let e = parse_jwt(&jwt(r#"{"exp":"soon","sub":"x"}"#), "sub", "scope").unwrap_err();
        assert!(e.contains("exp claim is not a number"), "{e}");
        assert!(parse_jwt("a.!!!.c", "sub", "scope").is_err());
    }

    #[test]
    fn token_responses() {
        assert_eq!(
            parse_token_response(
                r#"{"access_token":" abc ","expires_in":30,"token_type":"Bearer"}"#
            )
            .unwrap(),
            "abc"
        );
        assert_eq!(
            parse_token_response(r#"{"access_token":"","id_token":"idt"}"#).unwrap(),
            "idt"
        );
        let e = parse_token_response(r#"{"token_type":"Bearer"}"#).unwrap_err();
        assert!(e.contains("no access_token") && e.contains("Bearer"), "{e}");
        assert!(parse_token_response("<html>").is_err());
    }

    #[test]
    fn oauth_error_bodies_as_java_formats_them() {
        assert_eq!(
            format_error_body(
                r#"{"error":"invalid_client","error_description":"client authentication failed"}"#
            ),
            (
                r#"{"invalid_client" - "client authentication failed"}"#.to_string(),
                Some("invalid_client".to_string())
            )
        );
        assert_eq!(format_error_body("").0, "{}");
        assert_eq!(format_error_body("oops").0, "{oops}");
        assert!(permanent_status(401) && permanent_status(400) && !permanent_status(500));
        assert!(!permanent_status(503) && !permanent_status(429));
    }

    #[test]
    fn refresh_times_follow_javas_rules() {
        let cfg = RefreshConfig::default();
        let now = 1_000_000_000;
        // One hour: 80 % (+ up to 5 % jitter) of the lifetime from its start.
        let exp = now + 3_600_000;
        assert_eq!(cfg.refresh_at_ms(now, Some(now), exp, 0.0), now + 2_880_000);
        assert_eq!(cfg.refresh_at_ms(now, Some(now), exp, 1.0), now + 3_060_000);
        // Lifetime shorter than min period + buffer (60 + 300 s): 80 % of the time left.
        let exp = now + 30_000;
        assert_eq!(
            cfg.refresh_at_ms(now, Some(now - 5_000), exp, 0.0),
            now + 24_000
        );
        // The refresh never lands inside the buffer before expiry...
        let exp = now + 600_000;
        assert_eq!(cfg.refresh_at_ms(now, Some(now), exp, 0.0), exp - 300_000);
        // ...nor sooner than the minimum period from now (a token issued long ago).
        let exp = now + 1_000_000;
        assert_eq!(
            cfg.refresh_at_ms(now, Some(now - 10_000_000), exp, 0.0),
            now + 60_000
        );
        // Already expired: again in 10 s.
        assert_eq!(cfg.refresh_at_ms(now, None, now - 1, 0.5), now + 10_000);
        // Factor 1.0 without jitter and no buffers: at expiry.
        let full = RefreshConfig {
            window_factor: 1.0,
            window_jitter: 0.0,
            min_period_s: 0,
            buffer_s: 0,
        };
        assert_eq!(
            full.refresh_at_ms(now, None, now + 50_000, 0.7),
            now + 50_000
        );
    }

    #[test]
    fn retry_waits_double_within_the_budget() {
        let r = RetryConfig::default();
        assert_eq!(r.wait_ms(1, 10_000), Some(100));
        assert_eq!(r.wait_ms(2, 10_000), Some(200));
        assert_eq!(r.wait_ms(4, 10_000), Some(800));
        assert_eq!(r.wait_ms(8, 5_000), Some(5_000));
        assert_eq!(r.wait_ms(3, 0), None);
        assert_eq!(r.wait_ms(60, 1), Some(1));
    }

    #[test]
    fn requests_as_the_java_formatter_makes_them() {
        let cc = ClientCredentials {
            endpoint: Endpoint::File(PathBuf::from("/unused")),
            client_id: "my client".into(),
            client_secret: "s3cr=t".into(),
            scope: Some("kafka write".into()),
            urlencode: false,
            sub_claim: "sub".into(),
            scope_claim: "scope".into(),
            retry: RetryConfig::default(),
            keys: CredentialKeys {
                secret: JAAS,
                scope: JAAS,
            },
        };
        let (headers, body) = cc.request();
        let auth = &headers
            .iter()
            .find(|(k, _)| *k == "Authorization")
            .unwrap()
            .1;
        assert_eq!(
            auth,
            &format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("my client:s3cr=t")
            )
        );
        assert_eq!(body, "grant_type=client_credentials&scope=kafka write");
        let cc = ClientCredentials {
            urlencode: true,
            scope: None,
            ..cc
        };
        let (headers, body) = cc.request();
        let auth = &headers
            .iter()
            .find(|(k, _)| *k == "Authorization")
            .unwrap()
            .1;
        assert_eq!(
            auth,
            &format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("my+client:s3cr%3Dt")
            )
        );
        assert_eq!(body, "grant_type=client_credentials");
        assert_eq!(form_urlencode("a-b_c.d*e ~é"), "a-b_c.d*e+%7E%C3%A9");
    }

    #[test]
    fn the_allowed_urls_come_from_kafka_opts() {
        let url = "https://idp.example/token";
        let opts = format!("-Xmx1g -D{ALLOWED_URLS_PROPERTY}=http://other, {url} -Dx=y");
        // The words are split on white space, as a shell splits KAFKA_OPTS: only the first
        // entry of that property reaches it here.
        assert!(check_url_allowed("k", url, Some(&opts)).is_err());
        let opts = format!("-D{ALLOWED_URLS_PROPERTY}=http://other,{url}");
        assert!(check_url_allowed("k", url, Some(&opts)).is_ok());
        let e = check_url_allowed("producer.sasl.oauthbearer.token.endpoint.url", url, None)
            .unwrap_err();
        assert_eq!(e.key, "producer.sasl.oauthbearer.token.endpoint.url");
        assert!(e.message.contains(ALLOWED_URLS_PROPERTY), "{e}");
        assert_eq!(system_property("-Da=1 -Da=2", "a").as_deref(), Some("2"));
    }

    fn module(options: &[(&str, &str)]) -> LoginModule {
        LoginModule {
            class: "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule".into(),
            flag: "required".into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn settings_source(
        settings: &[(&str, &str)],
        options: &[(&str, &str)],
        opts: Option<&str>,
    ) -> Result<Arc<TokenSource>, SecurityError> {
        let map: BTreeMap<String, String> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let get = |k: &str| map.get(k).cloned().filter(|v| !v.trim().is_empty());
        let named = |k: &str| format!("consumer.{k}");
        client_credentials_source(&get, &named, &module(options), opts)
    }

    #[test]
    fn settings_errors_name_the_key() {
        let opts = format!("-D{ALLOWED_URLS_PROPERTY}=http://127.0.0.1:1/token");
        let url = [(TOKEN_ENDPOINT_URL, "http://127.0.0.1:1/token")];
        let e = settings_source(
            &[],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap_err();
        assert_eq!(e.key, "consumer.sasl.oauthbearer.token.endpoint.url");
        let e = settings_source(&url, &[("clientSecret", "b")], Some(&opts)).unwrap_err();
        assert_eq!(
            e.key,
            "consumer.sasl.oauthbearer.client.credentials.client.id"
        );
        let e = settings_source(&url, &[("clientId", "a")], Some(&opts)).unwrap_err();
        assert_eq!(
            e.key,
            "consumer.sasl.oauthbearer.client.credentials.client.secret"
        );
        let e = settings_source(
            &url,
            &[
                ("clientId", "a"),
                ("clientSecret", "b"),
                ("extension_x", "1"),
            ],
            Some(&opts),
        )
        .unwrap_err();
        assert_eq!(e.key, "consumer.sasl.jaas.config");
        let e = settings_source(
            &[url[0], ("sasl.login.refresh.window.factor", "0.3")],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap_err();
        assert_eq!(e.key, "consumer.sasl.login.refresh.window.factor");
        let e = settings_source(
            &[(TOKEN_ENDPOINT_URL, "ftp://x/token")],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap_err();
        assert!(e.message.contains("only http, https and file"), "{e}");
        let e =
            settings_source(&url, &[("clientId", "a"), ("clientSecret", "b")], None).unwrap_err();
        assert!(e.message.contains(ALLOWED_URLS_PROPERTY), "{e}");
    }

    #[test]
    fn sources_are_shared_and_keys_win_over_jaas_options() {
        let opts = format!("-D{ALLOWED_URLS_PROPERTY}=http://127.0.0.1:2/token");
        let url = (TOKEN_ENDPOINT_URL, "http://127.0.0.1:2/token");
        let a = settings_source(
            &[url],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap();
        let b = settings_source(
            &[url],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(lookup(a.id()).unwrap().id(), a.id());
        let c = settings_source(
            &[url, (CLIENT_ID, "from-key")],
            &[("clientId", "a"), ("clientSecret", "b")],
            Some(&opts),
        )
        .unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(
            c.describe().contains("client id from-key"),
            "{}",
            c.describe()
        );
        assert!(!format!("{c:?}").contains("\"b\""));
    }

    #[test]
    fn a_file_endpoint_is_read_and_cached_until_refresh() {
        let dir = std::env::temp_dir().join(format!("tributary-oauth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token.jwt");
        let exp = now_ms() / 1000 + 3600;
        std::fs::write(
            &file,
            jwt(&format!(r#"{{"sub":"filed","exp":{exp}}}"#)) + "\n",
        )
        .unwrap();
        let url = url::Url::from_file_path(&file).unwrap().to_string();
        let opts = format!("-D{ALLOWED_URLS_PROPERTY}={url}");
        let s = settings_source(
            &[
                (TOKEN_ENDPOINT_URL, &url),
                (CLIENT_ID, "c"),
                (CLIENT_SECRET, "s"),
            ],
            &[],
            Some(&opts),
        )
        .unwrap();
        assert!(s.cached().is_none());
        let t = s.token().unwrap();
        assert_eq!(t.principal, "filed");
        assert_eq!(t.expires_at_ms, exp * 1000);
        // Cached: a changed file is not read again before the refresh time.
        std::fs::write(&file, "garbage").unwrap();
        assert_eq!(s.token().unwrap(), t);
        assert_eq!(s.cached(), Some(t.clone()));
        // Asked for more of the lifetime than is left, the file is read again: the garbage is
        // no token, so the cached one, still valid, is kept.
        assert_eq!(s.token_with_share_left(1.1).unwrap(), t);
        let valid = jwt(&format!(r#"{{"sub":"refiled","exp":{}}}"#, exp + 60));
        std::fs::write(&file, valid).unwrap();
        // The failed refresh is tried again in 10 s, not at once...
        assert_eq!(s.token().unwrap(), t);
        // ...unless more lifetime is asked for.
        assert_eq!(s.token_with_share_left(1.1).unwrap().principal, "refiled");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn unsecured_sources_make_tokens_locally() {
        let s = unsecured_source(
            "connect",
            "sub",
            60,
            &["a".into()],
            RefreshConfig::default(),
        );
        assert!(!s.is_client_credentials());
        let t = s.token().unwrap();
        assert_eq!(t.principal, "connect");
        let claims = parse_jwt(&t.value, "sub", "scope").unwrap();
        assert_eq!(claims.expires_at_ms, t.expires_at_ms);
        assert!(Arc::ptr_eq(
            &s,
            &unsecured_source(
                "connect",
                "sub",
                60,
                &["a".into()],
                RefreshConfig::default()
            )
        ));
    }
}
