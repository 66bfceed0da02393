//! rustls configurations from Java's TLS settings: a client one for Tributary's own Kafka
//! connections (the group client), and a server one for the REST listener
//! (`listeners=https://…`, `ssl.client.auth`); and the TLS material those settings name
//! ([`TlsClient`], [`trust_material`], [`identity_material`]), read for every client that
//! speaks TLS (Kafka's, the REST peers', an OAuth token endpoint's, a schema registry's).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use crate::stores::{self, Identity, StoreType};
use crate::SecurityError;

/// The TLS side of a client: whom it trusts, the identity it presents (mutual TLS), and whether
/// the broker's certificate must name the host (`ssl.endpoint.identification.algorithm=https`,
/// Java's default).
#[derive(Debug, Clone)]
pub struct TlsClient {
    /// Trusted CA certificates; `None` trusts the system's CAs (Java's default truststore).
    pub trust: Option<Vec<CertificateDer<'static>>>,
    /// The key and chain presented when the broker asks for one.
    pub identity: Option<Identity>,
    /// Check the broker's host name (or IP address) against its certificate.
    pub verify_hostname: bool,
}

/// The trusted certificates from `ssl.truststore.certificates` (inline PEM) or
/// `ssl.truststore.location` with its type and password; `None` when neither is set.
pub(crate) fn trust_material(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
) -> Result<Option<Vec<CertificateDer<'static>>>, SecurityError> {
    let store_type = match get("ssl.truststore.type") {
        Some(t) => StoreType::parse(&named("ssl.truststore.type"), &t)?,
        None => StoreType::Jks,
    };
    if let Some(pem) = get("ssl.truststore.certificates") {
        let certs =
            stores::pem_certificates(&named("ssl.truststore.certificates"), pem.as_bytes())?;
        if certs.is_empty() {
            return Err(SecurityError::new(
                &named("ssl.truststore.certificates"),
                "holds no certificate",
            ));
        }
        return Ok(Some(certs));
    }
    match get("ssl.truststore.location") {
        Some(path) => stores::load_truststore(
            &named("ssl.truststore.location"),
            &path,
            store_type,
            get("ssl.truststore.password").as_deref(),
        )
        .map(Some),
        None => Ok(None),
    }
}

/// The key and chain from `ssl.keystore.key` + `ssl.keystore.certificate.chain` (inline PEM)
/// or `ssl.keystore.location` with its type and passwords; `None` when neither is set.
pub(crate) fn identity_material(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
) -> Result<Option<Identity>, SecurityError> {
    let store_type = match get("ssl.keystore.type") {
        Some(t) => StoreType::parse(&named("ssl.keystore.type"), &t)?,
        None => StoreType::Jks,
    };
    match (
        get("ssl.keystore.key"),
        get("ssl.keystore.certificate.chain"),
    ) {
        (Some(key), Some(chain)) => {
            let chain = stores::pem_certificates(
                &named("ssl.keystore.certificate.chain"),
                chain.as_bytes(),
            )?;
            let key = stores::pem_private_key(
                &named("ssl.keystore.key"),
                key.as_bytes(),
                get("ssl.key.password").as_deref(),
            )?;
            return Ok(Some(Identity { chain, key }));
        }
        (Some(_), None) => {
            return Err(SecurityError::new(
                &named("ssl.keystore.certificate.chain"),
                "must be set together with ssl.keystore.key",
            ))
        }
        (None, Some(_)) => {
            return Err(SecurityError::new(
                &named("ssl.keystore.key"),
                "must be set together with ssl.keystore.certificate.chain",
            ))
        }
        (None, None) => {}
    }
    match get("ssl.keystore.location") {
        Some(path) => stores::load_keystore(
            &named("ssl.keystore.location"),
            &path,
            store_type,
            get("ssl.keystore.password").as_deref(),
            get("ssl.key.password").as_deref(),
        )
        .map(Some),
        None => Ok(None),
    }
}

/// The crypto provider every configuration uses (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(
    trust: Option<&[CertificateDer<'static>]>,
    key: &str,
) -> Result<RootCertStore, SecurityError> {
    let mut roots = RootCertStore::empty();
    match trust {
        Some(certs) => {
            for c in certs {
                roots.add(c.clone()).map_err(|e| {
                    SecurityError::new(key, format!("a trusted certificate is not usable: {e}"))
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for c in found.certs {
                // The system store may hold certificates rustls cannot parse; skip them as
                // OpenSSL does.
                roots.add(c).ok();
            }
        }
    }
    Ok(roots)
}

/// A client configuration: trusts `tls.trust` (or the system's CAs), presents `tls.identity`
/// when asked, and checks the server's name unless `tls.verify_hostname` is false. Errors name
/// `ssl.truststore.location` / `ssl.keystore.location` when a certificate or key is unusable.
pub fn client_config(tls: &TlsClient) -> Result<Arc<rustls::ClientConfig>, SecurityError> {
    let provider = provider();
    let roots = roots(tls.trust.as_deref(), "ssl.truststore.location")?;
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| SecurityError::new("ssl.truststore.location", e.to_string()))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| SecurityError::new("ssl.enabled.protocols", e.to_string()))?;
    let builder = if tls.verify_hostname {
        builder.with_webpki_verifier(webpki)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnlyVerifier(webpki)))
    };
    let config = match &tls.identity {
        Some(id) => builder
            .with_client_auth_cert(id.chain.clone(), id.private_key())
            .map_err(|e| {
                SecurityError::new(
                    "ssl.keystore.location",
                    format!("the key store's key or certificate is not usable: {e}"),
                )
            })?,
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// `ssl.client.auth` of a server listener (Connect's REST `listeners.https.ssl.client.auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No client certificate is asked for (the default).
    #[default]
    None,
    /// A certificate is asked for; a client without one is still served.
    Requested,
    /// A client without a trusted certificate is refused during the handshake.
    Required,
}

impl ClientAuth {
    /// Parses `none`, `requested`, `required` (case-insensitive).
    pub fn parse(key: &str, value: &str) -> Result<Self, SecurityError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "none" => Ok(Self::None),
            "requested" => Ok(Self::Requested),
            "required" => Ok(Self::Required),
            other => Err(SecurityError::new(
                key,
                format!("invalid value {other} (none, requested or required)"),
            )),
        }
    }
}

/// A server configuration presenting `identity`; with client authentication, client
/// certificates must chain to `trust` (the server's trust store). `key_prefix` names the keys
/// in errors (e.g. `listeners.https.`).
pub fn server_config(
    identity: &Identity,
    client_auth: ClientAuth,
    trust: Option<&[CertificateDer<'static>]>,
    key_prefix: &str,
) -> Result<Arc<rustls::ServerConfig>, SecurityError> {
    let provider = provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| {
            SecurityError::new(&format!("{key_prefix}ssl.enabled.protocols"), e.to_string())
        })?;
    let builder = match client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        _ => {
            let key = format!("{key_prefix}ssl.truststore.location");
            let roots = roots(trust, &key)?;
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if client_auth == ClientAuth::Requested {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| SecurityError::new(&key, e.to_string()))?,
            )
        }
    };
    let config = builder
        .with_single_cert(identity.chain.clone(), identity.private_key())
        .map_err(|e| {
            SecurityError::new(
                &format!("{key_prefix}ssl.keystore.location"),
                format!("the key store's key or certificate is not usable: {e}"),
            )
        })?;
    Ok(Arc::new(config))
}

/// Checks the chain and signatures as WebPKI does, but not the host name
/// (`ssl.endpoint.identification.algorithm=` empty, as Java allows; PostgreSQL's
/// `sslmode=verify-ca`).
#[derive(Debug)]
pub struct ChainOnlyVerifier(pub Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnlyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The TLS settings of Connect's REST server and of its client for requests between workers
/// (`RestServerConfig`, `SSLUtils`): the `listeners.https.` keys when any is set, otherwise the
/// worker's top-level `ssl.*` keys (Connect's "all or nothing" prefix rule). `settings` is the
/// whole worker file.
pub fn rest_ssl_settings(
    settings: &std::collections::BTreeMap<String, String>,
) -> (std::collections::BTreeMap<String, String>, &'static str) {
    ssl_settings_with_prefix(settings, "listeners.https.")
}

/// The `prefix` keys (e.g. `admin.listeners.https.`) when any is set, otherwise the top-level
/// `ssl.*` keys: Connect's `valuesWithPrefixAllOrNothing`.
pub fn ssl_settings_with_prefix(
    settings: &std::collections::BTreeMap<String, String>,
    prefix: &'static str,
) -> (std::collections::BTreeMap<String, String>, &'static str) {
    let prefixed: std::collections::BTreeMap<String, String> = settings
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|s| (s.to_string(), v.clone())))
        .collect();
    if prefixed.is_empty() {
        let top = settings
            .iter()
            .filter(|(k, _)| k.starts_with("ssl."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (top, "")
    } else {
        (prefixed, prefix)
    }
}

/// A lookup of `settings` that treats blank values as unset (Connect's null defaults).
fn non_empty(
    settings: &std::collections::BTreeMap<String, String>,
) -> impl Fn(&str) -> Option<String> + '_ {
    move |k| {
        settings
            .get(k)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    }
}

/// The REST server's TLS configuration from [`rest_ssl_settings`]: the key store is required,
/// `ssl.client.auth` (`none` by default) decides whether client certificates are asked for and
/// checked against the trust store. Errors name the key with its prefix.
pub fn rest_server_config(
    ssl: &std::collections::BTreeMap<String, String>,
    prefix: &str,
) -> Result<Arc<rustls::ServerConfig>, SecurityError> {
    let get = non_empty(ssl);
    let named = |k: &str| format!("{prefix}{k}");
    let identity = identity_material(&get, &named)?.ok_or_else(|| {
        SecurityError::new(
            &named("ssl.keystore.location"),
            "an https listener needs a key store (ssl.keystore.location, or ssl.keystore.key with ssl.keystore.certificate.chain)",
        )
    })?;
    let client_auth = match get("ssl.client.auth") {
        Some(v) => ClientAuth::parse(&named("ssl.client.auth"), &v)?,
        None => ClientAuth::None,
    };
    let trust = trust_material(&get, &named)?;
    server_config(&identity, client_auth, trust.as_deref(), prefix)
}

/// The client configuration for requests to other workers over https: trusts the REST trust
/// store (or the system's CAs), presents the REST key store when one is set (for
/// `ssl.client.auth=required` peers), and checks host names unless
/// `ssl.endpoint.identification.algorithm` is empty.
pub fn rest_client_config(
    ssl: &std::collections::BTreeMap<String, String>,
    prefix: &str,
) -> Result<rustls::ClientConfig, SecurityError> {
    let get = non_empty(ssl);
    let named = |k: &str| format!("{prefix}{k}");
    let tls = TlsClient {
        trust: trust_material(&get, &named)?,
        identity: identity_material(&get, &named)?,
        verify_hostname: ssl
            .get("ssl.endpoint.identification.algorithm")
            .map(|v| !v.trim().is_empty())
            .unwrap_or(true),
    };
    client_config(&tls).map(|c| (*c).clone())
}
