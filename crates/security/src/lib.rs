//! Security settings as Java Kafka clients and Connect read them, for Tributary's Kafka clients
//! (librdkafka and its own group client) and its REST server.
//!
//! - [`kafka`]: `security.protocol`, `ssl.*` and `sasl.*` of one client into librdkafka
//!   settings, a rustls client configuration and SASL credentials.
//! - [`stores`]: JKS, PKCS12 and PEM trust and key stores (Kafka's `DefaultSslEngineFactory`).
//! - [`jaas`]: `sasl.jaas.config` values and JAAS files.
//! - [`oauth`]: OAUTHBEARER tokens: the OIDC client-credentials flow and Kafka's unsecured
//!   tokens, cached and refreshed as Java's login does it.
//! - [`sasl`]: the client side of PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER.
//! - [`tls`]: rustls client and server configurations.

pub mod jaas;
pub mod kafka;
pub mod oauth;
pub mod sasl;
pub mod stores;
pub mod tls;

pub use kafka::{
    is_security_key, KafkaSecurity, SaslCredentials, ScramMechanism, SecurityProtocol, TlsClient,
};
pub use rustls;

/// A setting that cannot be used, naming the key as the user wrote it (with its prefix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct SecurityError {
    /// The setting, e.g. `producer.ssl.truststore.location`.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl SecurityError {
    /// An error about `key`.
    pub fn new(key: &str, message: impl Into<String>) -> SecurityError {
        SecurityError {
            key: key.to_string(),
            message: message.into(),
        }
    }
}
