//! OAUTHBEARER tokens for the librdkafka clients the runtime creates (source producers, sink
//! consumers, the internal topics' producers and consumers, admin clients, the startup probe).
//!
//! A client configured for OAUTHBEARER carries the id of its login's token source in
//! `sasl.oauthbearer.config` ([`tributary_security::KafkaSecurity::librdkafka_settings`]).
//! Tokens reach librdkafka two ways:
//!
//! - every context implements `ClientContext::generate_oauth_token` through [`oauth_token`], so
//!   librdkafka's refresh requests (at 80 % of a token's lifetime) are answered with the
//!   source's current token wherever the client is polled (producers' polling threads, the
//!   sink task's and the internal topics' consumer loops);
//! - right after creation, [`set_initial_token`] sets the first token: librdkafka connects only
//!   once it has one, and some clients are never polled (admin clients, whose polling thread
//!   serves only their own queue; end-offset lookups), so they would otherwise wait forever.
//!   Long-lived clients that are not polled call it again before use.
//!
//! The token source caches and refreshes (see [`tributary_security::oauth`]); a call blocks
//! only when a new token is due (an HTTP request), which happens on librdkafka's or the
//! caller's blocking thread, never on an async task.

use std::error::Error;
use std::ffi::CString;

use rdkafka::client::{Client, OAuthToken};
use rdkafka::consumer::ConsumerContext;
use rdkafka::producer::{DeliveryResult, ProducerContext};
use rdkafka::{ClientConfig, ClientContext};

/// The librdkafka setting that carries the token source's id.
const SOURCE_SETTING: &str = "sasl.oauthbearer.config";

/// The least share of its lifetime a token handed to librdkafka has left. librdkafka asks
/// again at 80 % of the time a token had left when set, so each answer is a newer token than
/// the one it holds, and its re-authentications (KIP-368, at about 90 % of a session, which
/// ends with the token) never use one about to expire.
const LIBRDKAFKA_SHARE_LEFT: f64 = 0.5;

/// The context of the runtime's own clients (internal topics, admin clients, the startup
/// probe): librdkafka's defaults, plus OAUTHBEARER tokens from the configured source.
pub struct WorkerClientContext;

impl ClientContext for WorkerClientContext {
    const ENABLE_REFRESH_OAUTH_TOKEN: bool = true;

    fn generate_oauth_token(
        &self,
        oauthbearer_config: Option<&str>,
    ) -> Result<OAuthToken, Box<dyn Error>> {
        oauth_token(oauthbearer_config)
    }
}

impl ConsumerContext for WorkerClientContext {}

impl ProducerContext for WorkerClientContext {
    type DeliveryOpaque = ();

    /// Producers of this context only look metadata up (the startup probe).
    fn delivery(&self, _result: &DeliveryResult<'_>, _opaque: ()) {}
}

/// The current token of the source whose id librdkafka passes (its `sasl.oauthbearer.config`),
/// for `ClientContext::generate_oauth_token`: the token, its principal and its expiry (ms since
/// the epoch). Blocks while a due token is fetched. Errors (logged too): no such source, or
/// no token to be had; librdkafka then asks again in 10 s and keeps the current token.
pub fn oauth_token(oauthbearer_config: Option<&str>) -> Result<OAuthToken, Box<dyn Error>> {
    let id = oauthbearer_config.ok_or("no OAUTHBEARER token source is configured")?;
    let source = tributary_security::oauth::lookup(id)
        .ok_or_else(|| format!("unknown OAUTHBEARER token source {id}"))?;
    match source.token_with_share_left(LIBRDKAFKA_SHARE_LEFT) {
        Ok(t) => Ok(OAuthToken {
            token: t.value,
            principal_name: t.principal,
            lifetime_ms: t.expires_at_ms,
        }),
        Err(e) => {
            tracing::error!(
                "no OAuth access token for a Kafka client ({}): {e}",
                source.describe()
            );
            Err(e.to_string().into())
        }
    }
}

/// Why a client's OAUTHBEARER token could not be set ([`set_initial_token`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The token source has no token to give: `source` describes it (its setting).
    #[error("no OAuth access token ({source_name}): {message}")]
    NoToken {
        source_name: String,
        message: String,
    },
    /// The token or the principal holds a NUL byte, which librdkafka's C API cannot take.
    #[error("the {0} holds a NUL byte")]
    NulByte(&'static str),
    /// librdkafka refused the token (e.g. it had expired), with its message.
    #[error("librdkafka refused the OAuth token: {0}")]
    Refused(String),
}

/// Sets a new client's first OAUTHBEARER token (and again, for a long-lived client that is
/// not polled, before it is used), when `config` names a token source; otherwise does nothing.
/// Blocks while a due token is fetched. Errors: no token to be had (naming the setting), or
/// librdkafka refusing it (an expired token).
pub fn set_initial_token<C: ClientContext>(
    client: &Client<C>,
    config: &ClientConfig,
) -> Result<(), TokenError> {
    let Some(id) = config.get(SOURCE_SETTING) else {
        return Ok(());
    };
    let Some(source) = tributary_security::oauth::lookup(id) else {
        return Ok(());
    };
    let token = source
        .token_with_share_left(LIBRDKAFKA_SHARE_LEFT)
        .map_err(|e| TokenError::NoToken {
            source_name: source.describe(),
            message: e.to_string(),
        })?;
    set_token(client, &token.value, &token.principal, token.expires_at_ms)
}

/// `rd_kafka_oauthbearer_set_token` (no SASL extensions).
#[allow(unsafe_code)]
fn set_token<C: ClientContext>(
    client: &Client<C>,
    token: &str,
    principal: &str,
    expires_at_ms: i64,
) -> Result<(), TokenError> {
    let token = CString::new(token).map_err(|_| TokenError::NulByte("token"))?;
    let principal = CString::new(principal).map_err(|_| TokenError::NulByte("principal"))?;
    let mut errstr = [0u8; 512];
    // SAFETY: `client` is alive for the call (borrowed), so its handle is valid;
    // librdkafka copies both strings (NUL-terminated, alive for the call), takes no
    // extensions (null pointer with size 0), and writes at most `errstr.len()` bytes,
    // NUL-terminated, into `errstr`. The function is thread-safe (it takes the handle's lock).
    let code = unsafe {
        rdkafka::bindings::rd_kafka_oauthbearer_set_token(
            client.native_ptr(),
            token.as_ptr(),
            expires_at_ms,
            principal.as_ptr(),
            std::ptr::null_mut(),
            0,
            errstr.as_mut_ptr().cast(),
            errstr.len(),
        )
    };
    if code == rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        return Ok(());
    }
    let end = errstr.iter().position(|b| *b == 0).unwrap_or(errstr.len());
    Err(TokenError::Refused(
        String::from_utf8_lossy(&errstr[..end]).into_owned(),
    ))
}
