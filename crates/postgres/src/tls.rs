//! TLS to PostgreSQL as Debezium's JDBC connections use it (`database.sslmode`,
//! `database.sslrootcert`, the PostgreSQL JDBC driver's modes): the rustls configuration of
//! the queries' connections (`tokio-postgres`) and the settings of the replication
//! connection (`pgwire-replication`), verifying the server alike on both.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tributary_api::{ConnectError, ConnectResult};

/// `database.sslmode` (the PostgreSQL JDBC driver's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// `disable`: never TLS.
    Disable,
    /// `allow` and `prefer` (Debezium's default): TLS when the server offers it, its
    /// certificate not verified (`allow` is taken as `prefer`: TLS whenever possible).
    Prefer,
    /// `require`: TLS, the certificate not verified.
    Require,
    /// `verify-ca`: TLS, the certificate chain verified against `database.sslrootcert`.
    VerifyCa,
    /// `verify-full`: as `verify-ca`, and the certificate names the host.
    VerifyFull,
}

/// The TLS settings of the connector's connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslSettings {
    pub mode: SslMode,
    /// `database.sslrootcert`: PEM certificates trusted for `verify-ca` / `verify-full`
    /// (default, as the JDBC driver's: `~/.postgresql/root.crt`).
    pub root_cert: Option<PathBuf>,
}

impl SslSettings {
    /// Parses `database.sslmode` (default `prefer`) and `database.sslrootcert`. Errors: a mode
    /// that is none of the driver's.
    pub fn parse(mode: Option<&str>, root_cert: Option<&str>) -> ConnectResult<SslSettings> {
        let mode = match mode.map_or("prefer", str::trim).to_ascii_lowercase().as_str() {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(ConnectError::config(format!(
                    "database.sslmode: Value '{other}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        Ok(SslSettings {
            mode,
            root_cert: root_cert
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        })
    }

    /// The trusted roots' file: `database.sslrootcert`, else `~/.postgresql/root.crt`.
    fn root_path(&self) -> PathBuf {
        self.root_cert.clone().unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".postgresql").join("root.crt")
        })
    }

    /// `tokio-postgres`'s mode (verification is the rustls configuration's).
    pub fn postgres_mode(&self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as M;
        match self.mode {
            SslMode::Disable => M::Disable,
            SslMode::Prefer => M::Prefer,
            _ => M::Require,
        }
    }

    /// The rustls configuration of the queries' connections. Errors: the roots' file cannot
    /// be read or holds no certificate (named).
    pub fn client_config(&self) -> ConnectResult<rustls::ClientConfig> {
        let provider = tributary_security::tls::provider();
        let verifier: Arc<dyn ServerCertVerifier> = match self.mode {
            SslMode::Disable | SslMode::Prefer | SslMode::Require => {
                Arc::new(Unverified(provider.clone()))
            }
            SslMode::VerifyCa | SslMode::VerifyFull => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in self.roots()? {
                    roots
                        .add(cert)
                        .map_err(|e| ConnectError::config(format!("database.sslrootcert: {e}")))?;
                }
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| ConnectError::config(format!("database.sslrootcert: {e}")))?;
                if self.mode == SslMode::VerifyCa {
                    Arc::new(tributary_security::tls::ChainOnlyVerifier(webpki))
                } else {
                    webpki
                }
            }
        };
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ConnectError::config(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth())
    }

    fn roots(&self) -> ConnectResult<Vec<CertificateDer<'static>>> {
        let path = self.root_path();
        let text = std::fs::read(&path).map_err(|e| {
            ConnectError::config(format!(
                "database.sslrootcert: cannot read {}: {e}",
                path.display()
            ))
        })?;
        let certs = rustls_pemfile::certs(&mut text.as_slice())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                ConnectError::config(format!("database.sslrootcert: {}: {e}", path.display()))
            })?;
        if certs.is_empty() {
            return Err(ConnectError::config(format!(
                "database.sslrootcert: {} holds no PEM certificate",
                path.display()
            )));
        }
        Ok(certs)
    }

    /// The replication connection's TLS settings for `host`, verifying as
    /// [`Self::client_config`] does (`verify-full` checks an IP address against the
    /// certificate's IP names).
    pub fn replication(&self, host: &str) -> pgwire_replication::TlsConfig {
        use pgwire_replication::TlsConfig;
        match self.mode {
            SslMode::VerifyFull if host.parse::<std::net::IpAddr>().is_ok() => TlsConfig {
                sni_hostname: Some(host.to_string()),
                ..TlsConfig::verify_full(Some(self.root_path()))
            },
            SslMode::Disable => TlsConfig::disabled(),
            SslMode::Prefer => TlsConfig {
                mode: pgwire_replication::config::SslMode::Prefer,
                ..TlsConfig::default()
            },
            SslMode::Require => TlsConfig::require(),
            SslMode::VerifyCa => TlsConfig::verify_ca(Some(self.root_path())),
            SslMode::VerifyFull => TlsConfig::verify_full(Some(self.root_path())),
        }
    }
}

/// `require` / `prefer`: the certificate is not verified (the handshake's signature is).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_the_jdbc_drivers() {
        let mode = |m: &str| SslSettings::parse(Some(m), None).unwrap().mode;
        assert_eq!(mode("disable"), SslMode::Disable);
        assert_eq!(mode("allow"), SslMode::Prefer);
        assert_eq!(mode("PREFER"), SslMode::Prefer);
        assert_eq!(mode("verify-full"), SslMode::VerifyFull);
        assert_eq!(
            SslSettings::parse(None, None).unwrap().mode,
            SslMode::Prefer,
            "Debezium's default"
        );
        let e = SslSettings::parse(Some("always"), None).unwrap_err();
        assert!(e.to_string().contains("database.sslmode"), "{e}");
        let missing = SslSettings::parse(Some("verify-ca"), Some("/nonexistent/root.crt")).unwrap();
        let e = missing.client_config().unwrap_err();
        assert!(e.to_string().contains("/nonexistent/root.crt"), "{e}");
    }
}
