//! The client side of a SASL exchange, as Kafka's SaslAuthenticate requests carry it: PLAIN
//! and SCRAM-SHA-256/512 through rsasl, and OAUTHBEARER (RFC 7628, as Kafka's
//! `OAuthBearerSaslClient`) with a token from [`crate::oauth`] or Kafka's unsecured JWS tokens
//! (`OAuthBearerUnsecuredLoginCallbackHandler`'s token shape).

use std::io::Cursor;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use rsasl::prelude::{Mechname, MessageSent, SASLClient, SASLConfig, Session, State};

use crate::kafka::SaslCredentials;

/// A SASL failure on the client side (a bad server message, or a server signature that does
/// not verify).
#[derive(Debug, thiserror::Error)]
#[error("SASL {mechanism}: {message}")]
pub struct SaslError {
    pub mechanism: &'static str,
    pub message: String,
}

enum Inner {
    Rsasl {
        session: Box<Session>,
        finished: bool,
    },
    /// OAUTHBEARER: the initial response carries the token; a server message after it is an
    /// error (RFC 7628 §3.2.2), answered with a single `0x01` before the server fails the
    /// exchange.
    OAuthBearer {
        first: Option<Vec<u8>>,
        server_error: Option<String>,
    },
}

/// One authentication exchange. Call [`SaslExchange::step`] with `None` for the first client
/// message, then with each server message until it answers `Ok(None)` (done).
pub struct SaslExchange {
    mechanism: &'static str,
    inner: Inner,
}

impl SaslExchange {
    /// An OAUTHBEARER exchange presenting `token` (a JWT): the RFC 7628 initial client
    /// response as Kafka's `OAuthBearerClientInitialResponse` writes it, without
    /// authorization id or extensions: `n,,\x01auth=Bearer <token>\x01\x01`.
    pub fn oauth_bearer(token: &str) -> SaslExchange {
        SaslExchange {
            mechanism: "OAUTHBEARER",
            inner: Inner::OAuthBearer {
                first: Some(format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()),
                server_error: None,
            },
        }
    }

    /// Starts an exchange for `credentials`. For the OIDC flow the token must have been
    /// fetched already ([`crate::oauth::TokenSource::token`], which blocks): this takes the
    /// cached one, and fails when there is none.
    pub fn new(credentials: &SaslCredentials) -> Result<SaslExchange, SaslError> {
        let mechanism = credentials.mechanism();
        let err = |m: String| SaslError {
            mechanism,
            message: m,
        };
        let inner = match credentials {
            SaslCredentials::Plain { username, password }
            | SaslCredentials::Scram {
                username, password, ..
            } => {
                let config: Arc<SASLConfig> =
                    SASLConfig::with_credentials(None, username.clone(), password.clone())
                        .map_err(|e| err(e.to_string()))?;
                let name = Mechname::parse(mechanism.as_bytes()).map_err(|e| err(e.to_string()))?;
                let session = SASLClient::new(config)
                    .start_suggested(&[name])
                    .map_err(|e| err(e.to_string()))?;
                Inner::Rsasl {
                    session: Box::new(session),
                    finished: false,
                }
            }
            SaslCredentials::OAuthBearerUnsecured {
                principal,
                principal_claim,
                lifetime_s,
                scope,
            } => {
                let token = unsecured_jws(principal, principal_claim, *lifetime_s, scope);
                return Ok(SaslExchange::oauth_bearer(&token));
            }
            SaslCredentials::OAuthBearerOidc { source } => {
                let token = source.cached().ok_or_else(|| {
                    err(format!("no access token yet from {}", source.describe()))
                })?;
                return Ok(SaslExchange::oauth_bearer(&token.value));
            }
        };
        Ok(SaslExchange { mechanism, inner })
    }

    /// The mechanism name, for SaslHandshake.
    pub fn mechanism(&self) -> &'static str {
        self.mechanism
    }

    /// The next client message: for `None` the first one; for a server message, the answer,
    /// or `Ok(None)` once the exchange is complete (the server's final message verified).
    pub fn step(&mut self, server: Option<&[u8]>) -> Result<Option<Vec<u8>>, SaslError> {
        let mechanism = self.mechanism;
        match &mut self.inner {
            Inner::OAuthBearer {
                first,
                server_error,
            } => {
                if let Some(first) = first.take() {
                    return Ok(Some(first));
                }
                match server {
                    // The broker's error (JSON, RFC 7628 §3.2.2): acknowledge it; the broker
                    // then fails the exchange with its own message.
                    Some(msg) if !msg.is_empty() && server_error.is_none() => {
                        *server_error = Some(String::from_utf8_lossy(msg).into_owned());
                        Ok(Some(vec![0x01]))
                    }
                    _ => match server_error.take() {
                        Some(e) => Err(SaslError {
                            mechanism,
                            message: format!("the broker refused the token: {e}"),
                        }),
                        None => Ok(None),
                    },
                }
            }
            Inner::Rsasl { session, finished } => {
                if *finished {
                    return Ok(None);
                }
                let mut out = Cursor::new(Vec::new());
                let state = session.step(server, &mut out).map_err(|e| SaslError {
                    mechanism,
                    message: e.to_string(),
                })?;
                match state {
                    State::Running => Ok(Some(out.into_inner())),
                    State::Finished(MessageSent::Yes) => {
                        *finished = true;
                        Ok(Some(out.into_inner()))
                    }
                    State::Finished(MessageSent::No) => {
                        *finished = true;
                        Ok(None)
                    }
                }
            }
        }
    }
}

/// An unsecured JWS (`alg: none`) as Kafka's unsecured login handler makes it: `iat`, `exp`
/// (seconds since the epoch), the principal claim, and `scope` when given.
pub fn unsecured_jws(
    principal: &str,
    principal_claim: &str,
    lifetime_s: u64,
    scope: &[String],
) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let header = b64.encode(br#"{"alg":"none"}"#);
    let mut claims = format!(
        "{{\"iat\":{now},\"exp\":{},{}:{}",
        now + lifetime_s,
        json_string(principal_claim),
        json_string(principal)
    );
    if !scope.is_empty() {
        let list: Vec<String> = scope.iter().map(|s| json_string(s)).collect();
        claims.push_str(&format!(",\"scope\":[{}]", list.join(",")));
    }
    claims.push('}');
    format!("{header}.{}.", b64.encode(claims.as_bytes()))
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_one_message() {
        let mut ex = SaslExchange::new(&SaslCredentials::Plain {
            username: "u".into(),
            password: "p".into(),
        })
        .unwrap();
        assert_eq!(ex.step(None).unwrap(), Some(b"\0u\0p".to_vec()));
        assert_eq!(ex.step(Some(b"")).unwrap(), None);
    }

    #[test]
    fn scram_starts_with_a_client_first_message() {
        let mut ex = SaslExchange::new(&SaslCredentials::Scram {
            mechanism: crate::kafka::ScramMechanism::Sha512,
            username: "connect".into(),
            password: "p".into(),
        })
        .unwrap();
        assert_eq!(ex.mechanism(), "SCRAM-SHA-512");
        let first = String::from_utf8(ex.step(None).unwrap().unwrap()).unwrap();
        assert!(first.starts_with("n,,n=connect,r="), "{first}");
        // A server-first message with a nonce that does not extend ours is refused.
        assert!(ex.step(Some(b"r=other,s=c2FsdA==,i=4096")).is_err());
    }

    #[test]
    fn oauthbearer_sends_the_token_and_acknowledges_an_error() {
        let mut ex = SaslExchange::oauth_bearer("a.b.c");
        assert_eq!(ex.mechanism(), "OAUTHBEARER");
        assert_eq!(
            ex.step(None).unwrap(),
            Some(b"n,,\x01auth=Bearer a.b.c\x01\x01".to_vec())
        );
        // Success: an empty server message ends it.
        assert_eq!(ex.step(Some(b"")).unwrap(), None);
        let mut ex = SaslExchange::oauth_bearer("a.b.c");
        ex.step(None).unwrap();
        let challenge = br#"{"status":"invalid_token"}"#;
        assert_eq!(ex.step(Some(challenge)).unwrap(), Some(vec![0x01]));
        let e = ex.step(Some(b"")).unwrap_err();
        assert!(e.message.contains("invalid_token"), "{e}");
    }

    #[test]
    fn unsecured_tokens_carry_the_principal() {
        let t = unsecured_jws("connect", "sub", 60, &["a".into()]);
        let parts: Vec<&str> = t.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[2], "");
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        assert_eq!(b64.decode(parts[0]).unwrap(), br#"{"alg":"none"}"#);
        let claims = String::from_utf8(b64.decode(parts[1]).unwrap()).unwrap();
        assert!(claims.contains("\"sub\":\"connect\""), "{claims}");
        assert!(claims.contains("\"scope\":[\"a\"]"), "{claims}");
    }
}
