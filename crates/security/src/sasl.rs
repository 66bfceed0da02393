//! The client side of a SASL exchange, as Kafka's SaslAuthenticate requests carry it: PLAIN
//! and SCRAM-SHA-256/512 through rsasl, and OAUTHBEARER with Kafka's unsecured JWS tokens
//! (RFC 7628 client response, `OAuthBearerUnsecuredLoginCallbackHandler`'s token shape).

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
    OneShot {
        first: Option<Vec<u8>>,
    },
}

/// One authentication exchange. Call [`SaslExchange::step`] with `None` for the first client
/// message, then with each server message until it answers `Ok(None)` (done).
pub struct SaslExchange {
    mechanism: &'static str,
    inner: Inner,
}

impl SaslExchange {
    /// Starts an exchange for `credentials`.
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
                // RFC 7628: gs2 header, then key=value pairs separated by \x01.
                let first = format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes();
                Inner::OneShot { first: Some(first) }
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
            Inner::OneShot { first } => Ok(first.take()),
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
