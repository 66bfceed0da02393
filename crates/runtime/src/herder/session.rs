//! KIP-507 request signing between workers (Connect's `InternalRequestSignature`): the leader
//! distributes a session key through the config topic; a worker sending an internal request
//! (the task configs it generated) signs the exact body bytes with HMAC and the key, and the
//! leader checks the signature before acting.

use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::HerderError;
use crate::config_records::SessionKey;

/// The header carrying the base64 signature.
pub const SIGNATURE_HEADER: &str = "X-Connect-Authorization";
/// The header naming the signature algorithm.
pub const ALGORITHM_HEADER: &str = "X-Connect-Request-Signature-Algorithm";
/// The only algorithm Tributary generates and verifies (Connect's default).
pub const HMAC_SHA256: &str = "HmacSHA256";

/// A new random key for `HmacSHA256` (32 bytes, the JDK's default key size for it), created
/// now (`now_ms`, ms since the epoch).
pub fn generate_key(now_ms: i64) -> SessionKey {
    let mut key = vec![0u8; 32];
    rand::thread_rng().fill_bytes(&mut key);
    SessionKey {
        key,
        algorithm: HMAC_SHA256.to_string(),
        creation_timestamp: now_ms,
    }
}

/// Whether a key must be replaced: it expired (`creation + ttl_ms <= now_ms`) or is not a
/// 32-byte HmacSHA256 key (what a Java leader also checks).
pub fn needs_rotation(key: Option<&SessionKey>, now_ms: i64, ttl_ms: i64) -> bool {
    match key {
        None => true,
        Some(k) => {
            k.creation_timestamp.saturating_add(ttl_ms) <= now_ms
                || k.algorithm != HMAC_SHA256
                || k.key.len() != 32
        }
    }
}

/// The base64 HMAC-SHA256 of `body` under `key`.
pub fn sign(key: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(body);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// A received signature: the two headers' values, if present.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSignature {
    pub signature: Option<String>,
    pub algorithm: Option<String>,
}

/// Checks a signed internal request, in Connect's order: missing header → 400, algorithm not
/// accepted → 400, malformed signature → 400, no session key yet → 503 (as a
/// [`HerderError::Internal`] carrying that code in its text is not enough, so it is returned as
/// `Unavailable`), wrong signature → 403.
pub fn verify(
    sig: &RequestSignature,
    body: &[u8],
    key: Option<&SessionKey>,
    accepted: &[String],
) -> Result<(), SignatureError> {
    let (Some(signature), Some(algorithm)) = (&sig.signature, &sig.algorithm) else {
        return Err(SignatureError::BadRequest(
            "Internal request missing required signature".into(),
        ));
    };
    if !accepted.iter().any(|a| a == algorithm) {
        return Err(SignatureError::BadRequest(format!(
            "This worker does not support the request signature algorithm {algorithm}; it accepts {}",
            accepted.join(", ")
        )));
    }
    if algorithm != HMAC_SHA256 {
        return Err(SignatureError::BadRequest(format!(
            "Unknown signature algorithm {algorithm}"
        )));
    }
    let given = base64::engine::general_purpose::STANDARD
        .decode(signature)
        .map_err(|_| {
            SignatureError::BadRequest("Internal request signature is not valid base64".into())
        })?;
    let Some(key) = key else {
        return Err(SignatureError::Unavailable(
            "This worker has no session key yet and cannot verify internal requests".into(),
        ));
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(&key.key).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.verify_slice(&given).map_err(|_| {
        SignatureError::Forbidden("Internal request contained invalid signature.".into())
    })
}

/// Why a signed request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// 400.
    #[error("{0}")]
    BadRequest(String),
    /// 403.
    #[error("{0}")]
    Forbidden(String),
    /// 503.
    #[error("{0}")]
    Unavailable(String),
}

impl SignatureError {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            SignatureError::BadRequest(_) => 400,
            SignatureError::Forbidden(_) => 403,
            SignatureError::Unavailable(_) => 503,
        }
    }
}

impl From<SignatureError> for HerderError {
    fn from(e: SignatureError) -> Self {
        match e {
            SignatureError::BadRequest(m) => HerderError::BadRequest(m),
            SignatureError::Forbidden(m) => HerderError::Forbidden(m),
            SignatureError::Unavailable(m) => HerderError::Unavailable(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SessionKey {
        SessionKey {
            key: vec![7; 32],
            algorithm: HMAC_SHA256.into(),
            creation_timestamp: 0,
        }
    }

    #[test]
    fn a_good_signature_verifies_and_anything_else_is_refused_with_connects_codes() {
        let body = br#"[{"k":"v"}]"#;
        let accepted = vec![HMAC_SHA256.to_string()];
        let good = RequestSignature {
            signature: Some(sign(&key().key, body)),
            algorithm: Some(HMAC_SHA256.into()),
        };
        assert_eq!(verify(&good, body, Some(&key()), &accepted), Ok(()));
        assert_eq!(
            verify(&good, b"[]", Some(&key()), &accepted)
                .unwrap_err()
                .status(),
            403,
            "body changed"
        );
        assert_eq!(
            verify(&RequestSignature::default(), body, Some(&key()), &accepted)
                .unwrap_err()
                .status(),
            400
        );
        let other_alg = RequestSignature {
            algorithm: Some("HmacSHA1".into()),
            ..good.clone()
        };
        assert_eq!(
            verify(&other_alg, body, Some(&key()), &accepted)
                .unwrap_err()
                .status(),
            400
        );
        let garbage = RequestSignature {
            signature: Some("not base64!".into()),
            ..good.clone()
        };
        assert_eq!(
            verify(&garbage, body, Some(&key()), &accepted)
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(
            verify(&good, body, None, &accepted).unwrap_err().status(),
            503
        );
        let forged = RequestSignature {
            signature: Some(sign(&[1; 32], body)),
            ..good
        };
        assert_eq!(
            verify(&forged, body, Some(&key()), &accepted)
                .unwrap_err()
                .status(),
            403
        );
    }

    #[test]
    fn rotation_when_missing_expired_or_foreign() {
        assert!(needs_rotation(None, 0, 10));
        assert!(!needs_rotation(Some(&key()), 5, 10));
        assert!(needs_rotation(Some(&key()), 10, 10));
        let short = SessionKey {
            key: vec![1; 16],
            ..key()
        };
        assert!(needs_rotation(Some(&short), 1, 10));
        assert_eq!(generate_key(3).key.len(), 32);
    }
}
