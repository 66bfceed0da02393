//! TLS to PostgreSQL as Debezium's JDBC connections use it (`database.sslmode`,
//! `database.sslrootcert`, the PostgreSQL JDBC driver's modes; a client certificate from
//! `database.sslcert` / `database.sslkey` / `database.sslpassword`): the rustls configuration of
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
    /// The client certificate presented when the server asks for one: `database.sslcert`
    /// and `database.sslkey`, else (as the JDBC driver) `~/.postgresql/postgresql.crt` and
    /// `~/.postgresql/postgresql.pk8` when both exist; none otherwise.
    pub client: Option<ClientFiles>,
}

/// A client certificate's files (the PostgreSQL JDBC driver's `sslcert`, `sslkey` and
/// `sslpassword`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFiles {
    /// The certificate chain: PEM (leaf first), or one DER certificate.
    pub cert: PathBuf,
    /// The private key: PKCS #8, as DER (the driver's `.pk8`) or PEM, encrypted or not.
    pub key: PathBuf,
    /// `database.sslpassword`: decrypts an encrypted key.
    pub password: Option<crate::config::Password>,
}

/// A client certificate chain and its PKCS #8 key, read from [`ClientFiles`].
struct ClientIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: Vec<u8>,
}

impl ClientFiles {
    /// The client files: `cert` and `key` when set (both are needed), else the JDBC driver's
    /// defaults when both exist. Errors: only one of them set.
    fn resolve(
        cert: Option<&str>,
        key: Option<&str>,
        password: Option<&str>,
    ) -> ConnectResult<Option<ClientFiles>> {
        let set = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        };
        let password = password.map(|p| crate::config::Password(p.to_string()));
        match (set(cert), set(key)) {
            (Some(cert), Some(key)) => Ok(Some(ClientFiles {
                cert,
                key,
                password,
            })),
            (None, None) => {
                let dir =
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".postgresql");
                let (cert, key) = (dir.join("postgresql.crt"), dir.join("postgresql.pk8"));
                Ok((cert.is_file() && key.is_file()).then_some(ClientFiles {
                    cert,
                    key,
                    password,
                }))
            }
            (Some(_), None) => Err(ConnectError::config(
                "database.sslkey: the key of database.sslcert's certificate is needed too",
            )),
            (None, Some(_)) => Err(ConnectError::config(
                "database.sslcert: the certificate of database.sslkey's key is needed too",
            )),
        }
    }

    /// Reads the certificate chain and the key (decrypting it with the password). Errors: a
    /// file that cannot be read, holds no certificate or key, or a key the password does not
    /// decrypt (each naming its key).
    fn read(&self) -> ConnectResult<ClientIdentity> {
        let bytes = |key: &str, path: &PathBuf| {
            std::fs::read(path).map_err(|e| {
                ConnectError::config(format!("{key}: cannot read {}: {e}", path.display()))
            })
        };
        let cert = bytes("database.sslcert", &self.cert)?;
        let chain = if cert.starts_with(b"-----BEGIN") {
            rustls_pemfile::certs(&mut cert.as_slice())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    ConnectError::config(format!("database.sslcert: {}: {e}", self.cert.display()))
                })?
        } else {
            vec![CertificateDer::from(cert)]
        };
        if chain.is_empty() {
            return Err(ConnectError::config(format!(
                "database.sslcert: {} holds no certificate",
                self.cert.display()
            )));
        }
        let key = bytes("database.sslkey", &self.key)?;
        let pem = if key.starts_with(b"-----BEGIN") {
            key
        } else {
            pkcs8_der_as_pem(&key).into_bytes()
        };
        let password = self.password.as_ref().map(|p| p.0.as_str());
        let key = tributary_security::stores::pem_private_key("database.sslkey", &pem, password)
            .map_err(|e| {
                ConnectError::config(
                    e.to_string()
                        .replace("ssl.key.password", "database.sslpassword"),
                )
            })?;
        Ok(ClientIdentity {
            chain,
            key: key.secret_pkcs8_der().to_vec(),
        })
    }
}

/// A DER PKCS #8 key (the JDBC driver's `.pk8`) as PEM text: `ENCRYPTED PRIVATE KEY` when its
/// outer sequence starts with an algorithm (an `EncryptedPrivateKeyInfo`), else `PRIVATE KEY`
/// (a `PrivateKeyInfo` starts with its version, an integer).
fn pkcs8_der_as_pem(der: &[u8]) -> String {
    use base64::Engine as _;
    // The tag after the outer SEQUENCE's header (short or long form length).
    let inner_tag = match der {
        [0x30, len, rest @ ..] if *len < 0x80 => rest.first().copied(),
        [0x30, len, rest @ ..] => rest.get(usize::from(len & 0x7f)).copied(),
        _ => None,
    };
    let label = if inner_tag == Some(0x30) {
        "ENCRYPTED PRIVATE KEY"
    } else {
        "PRIVATE KEY"
    };
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

impl SslSettings {
    /// Parses `database.sslmode` (default `prefer`) and `database.sslrootcert`, without a
    /// client certificate. Errors: a mode that is none of the driver's.
    pub fn parse(mode: Option<&str>, root_cert: Option<&str>) -> ConnectResult<SslSettings> {
        SslSettings::parse_with_client(mode, root_cert, None, None, None)
    }

    /// [`SslSettings::parse`], with the client certificate of `database.sslcert`,
    /// `database.sslkey` and `database.sslpassword` (read and decrypted here once, so that a
    /// bad file fails validation). Errors: those of [`SslSettings::parse`]; a client file that
    /// cannot be read or decrypted (named).
    pub fn parse_with_client(
        mode: Option<&str>,
        root_cert: Option<&str>,
        cert: Option<&str>,
        key: Option<&str>,
        password: Option<&str>,
    ) -> ConnectResult<SslSettings> {
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
        let client = ClientFiles::resolve(cert, key, password)?;
        if let Some(files) = &client {
            files.read()?;
        }
        Ok(SslSettings {
            mode,
            root_cert: root_cert
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            client,
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
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ConnectError::config(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        match &self.client {
            None => Ok(builder.with_no_client_auth()),
            Some(files) => {
                let identity = files.read()?;
                let key = rustls::pki_types::PrivateKeyDer::Pkcs8(identity.key.into());
                builder
                    .with_client_auth_cert(identity.chain, key)
                    .map_err(|e| ConnectError::config(format!("database.sslkey: {e}")))
            }
        }
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
    /// certificate's IP names), with the client certificate. Errors: the client files'
    /// (named).
    pub fn replication(&self, host: &str) -> ConnectResult<pgwire_replication::TlsConfig> {
        use pgwire_replication::TlsConfig;
        let tls = match self.mode {
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
        };
        let client_identity = match &self.client {
            None => None,
            Some(files) => {
                let identity = files.read()?;
                Some(pgwire_replication::config::ClientIdentity {
                    cert_chain: identity.chain.iter().map(|c| c.to_vec()).collect(),
                    pkcs8_key: identity.key,
                })
            }
        };
        Ok(TlsConfig {
            client_identity,
            ..tls
        })
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

    #[test]
    fn client_files_need_both_halves_and_name_what_is_wrong() {
        let e = ClientFiles::resolve(Some("/c.crt"), None, None).unwrap_err();
        assert!(e.to_string().starts_with("database.sslkey"), "{e}");
        let e = ClientFiles::resolve(None, Some("/k.pk8"), None).unwrap_err();
        assert!(e.to_string().starts_with("database.sslcert"), "{e}");
        let e = SslSettings::parse_with_client(
            Some("require"),
            None,
            Some("/nonexistent/c.crt"),
            Some("/nonexistent/k.pk8"),
            Some("secret"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/c.crt"), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn a_der_key_is_labelled_by_its_structure() {
        // PrivateKeyInfo: SEQUENCE { INTEGER 0, … }; EncryptedPrivateKeyInfo: SEQUENCE {
        // SEQUENCE (the algorithm), … }, in short and long length forms.
        assert!(pkcs8_der_as_pem(&[0x30, 0x03, 0x02, 0x01, 0x00])
            .starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(pkcs8_der_as_pem(&[0x30, 0x82, 0x01, 0x00, 0x30, 0x00])
            .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"));
        assert!(
            pkcs8_der_as_pem(&[0x30, 0x81, 0x80, 0x02]).starts_with("-----BEGIN PRIVATE KEY-----")
        );
    }
}
