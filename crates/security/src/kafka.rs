//! A Kafka client's security settings as Java clients read them (`CommonClientConfigs`,
//! `SslConfigs`, `SaslConfigs`): `security.protocol`, the `ssl.*` stores, `sasl.mechanism` and
//! `sasl.jaas.config`, turned into librdkafka settings ([`KafkaSecurity::librdkafka_settings`])
//! and into a rustls client configuration and SASL credentials for Tributary's own group
//! client ([`KafkaSecurity::tls_client_config`], [`KafkaSecurity::sasl`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::jaas;
use crate::oauth;
use crate::stores;
pub use crate::tls::TlsClient;
use crate::tls::{identity_material, trust_material};
use crate::SecurityError;

/// `security.protocol` (default `PLAINTEXT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    #[default]
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    /// Parses Java's names (case-insensitive, as Kafka's `SecurityProtocol.forName`).
    pub fn parse(key: &str, value: &str) -> Result<Self, SecurityError> {
        match value.trim().to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(Self::Plaintext),
            "SSL" => Ok(Self::Ssl),
            "SASL_PLAINTEXT" => Ok(Self::SaslPlaintext),
            "SASL_SSL" => Ok(Self::SaslSsl),
            other => Err(SecurityError::new(
                key,
                format!("invalid security protocol {other} (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)"),
            )),
        }
    }

    /// Whether connections are encrypted with TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }

    /// Java's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "PLAINTEXT",
            Self::Ssl => "SSL",
            Self::SaslPlaintext => "SASL_PLAINTEXT",
            Self::SaslSsl => "SASL_SSL",
        }
    }
}

/// A SCRAM variant (RFC 5802 / RFC 7677; Kafka's `ScramMechanism`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScramMechanism {
    Sha256,
    Sha512,
}

/// SASL credentials from `sasl.mechanism` and `sasl.jaas.config`.
#[derive(Clone, PartialEq, Eq)]
pub enum SaslCredentials {
    /// `PLAIN` with `PlainLoginModule`'s `username` / `password`.
    Plain { username: String, password: String },
    /// `SCRAM-SHA-256` / `SCRAM-SHA-512` with `ScramLoginModule`'s `username` / `password`.
    Scram {
        mechanism: ScramMechanism,
        username: String,
        password: String,
    },
    /// `OAUTHBEARER` with tokens from an OIDC provider: the client-credentials flow of
    /// `sasl.login.callback.handler.class=…OAuthBearerLoginCallbackHandler` (see
    /// [`crate::oauth`]). The source is shared by every client with the same login settings.
    OAuthBearerOidc {
        /// Where the tokens come from (cached and refreshed).
        source: Arc<oauth::TokenSource>,
    },
    /// `OAUTHBEARER` with Kafka's unsecured JWS tokens (`OAuthBearerLoginModule` with
    /// `unsecuredLoginStringClaim_sub`; for tests and development, as in Kafka).
    OAuthBearerUnsecured {
        /// The principal (the `sub` claim unless `unsecuredLoginPrincipalClaimName` says).
        principal: String,
        /// `unsecuredLoginPrincipalClaimName` (default `sub`).
        principal_claim: String,
        /// `unsecuredLoginLifetimeSeconds` (default 3600 s).
        lifetime_s: u64,
        /// `unsecuredLoginListClaim_scope`, split on its first character as Kafka does.
        scope: Vec<String>,
    },
}

impl std::fmt::Debug for SaslCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Plain { username, .. } => write!(f, "PLAIN({username}, [hidden])"),
            Self::Scram {
                mechanism,
                username,
                ..
            } => {
                write!(f, "SCRAM-{mechanism:?}({username}, [hidden])")
            }
            Self::OAuthBearerUnsecured { principal, .. } => {
                write!(f, "OAUTHBEARER(unsecured, {principal})")
            }
            Self::OAuthBearerOidc { source } => {
                write!(f, "OAUTHBEARER({})", source.describe())
            }
        }
    }
}

impl SaslCredentials {
    /// The SASL mechanism name sent in SaslHandshake.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Self::Plain { .. } => "PLAIN",
            Self::Scram {
                mechanism: ScramMechanism::Sha256,
                ..
            } => "SCRAM-SHA-256",
            Self::Scram {
                mechanism: ScramMechanism::Sha512,
                ..
            } => "SCRAM-SHA-512",
            Self::OAuthBearerUnsecured { .. } | Self::OAuthBearerOidc { .. } => "OAUTHBEARER",
        }
    }

    /// The token source of an `OAUTHBEARER` login (for unsecured tokens, the shared source
    /// that makes them); `None` for other mechanisms.
    pub fn token_source(&self) -> Option<Arc<oauth::TokenSource>> {
        match self {
            Self::OAuthBearerOidc { source } => Some(source.clone()),
            Self::OAuthBearerUnsecured {
                principal,
                principal_claim,
                lifetime_s,
                scope,
            } => Some(oauth::unsecured_source(
                principal,
                principal_claim,
                *lifetime_s,
                scope,
                oauth::RefreshConfig::default(),
            )),
            Self::Plain { .. } | Self::Scram { .. } => None,
        }
    }
}

/// A client's security settings, parsed and with its stores read.
#[derive(Debug, Clone, Default)]
pub struct KafkaSecurity {
    /// `security.protocol`.
    pub protocol: SecurityProtocol,
    /// Present for `SSL` and `SASL_SSL`.
    pub tls: Option<TlsClient>,
    /// Present for `SASL_PLAINTEXT` and `SASL_SSL`.
    pub sasl: Option<SaslCredentials>,
}

/// Whether a client key is a security key this module reads (`security.protocol`, `ssl.*`,
/// `sasl.*`); such keys never reach librdkafka as they are.
pub fn is_security_key(key: &str) -> bool {
    key == "security.protocol" || key.starts_with("ssl.") || key.starts_with("sasl.")
}

/// Logs a setting Tributary accepts but does not apply, once per process.
fn warn_once(key: &str, reason: &str) {
    static SEEN: OnceLock<Mutex<std::collections::HashSet<String>>> = OnceLock::new();
    let first = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string());
    if first {
        tracing::warn!(key, "ignoring client setting {key}: {reason}");
    }
}

impl KafkaSecurity {
    /// Reads the security keys of one client's settings (already without their `producer.` /
    /// `consumer.` / `admin.` / override prefix). `prefix` is put before key names in errors
    /// so a message names the key as the user wrote it.
    ///
    /// Errors (naming the key): an unknown protocol, a store that cannot be read or decrypted,
    /// a mechanism Tributary cannot use (`GSSAPI`, which is Java's default `sasl.mechanism`),
    /// a `sasl.jaas.config` that does not parse or lacks the options its mechanism needs,
    /// Java callback classes (`sasl.client.callback.handler.class`, `sasl.login.class`,
    /// `ssl.engine.factory.class`, any `sasl.login.callback.handler.class` but Kafka's
    /// `OAuthBearerLoginCallbackHandler`), which cannot run outside a JVM, and OAuth settings
    /// that cannot be used (see [`crate::oauth`]; the token endpoint must be allowed by
    /// `-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=…` in the `KAFKA_OPTS` environment
    /// variable, as for Java clients). No token is fetched here.
    pub fn from_settings(
        settings: &BTreeMap<String, String>,
        prefix: &str,
    ) -> Result<KafkaSecurity, SecurityError> {
        let kafka_opts = std::env::var("KAFKA_OPTS").ok();
        Self::from_settings_with_opts(settings, prefix, kafka_opts.as_deref())
    }

    /// [`KafkaSecurity::from_settings`] with the JVM options (`KAFKA_OPTS`) given rather than
    /// read from the environment.
    pub fn from_settings_with_opts(
        settings: &BTreeMap<String, String>,
        prefix: &str,
        kafka_opts: Option<&str>,
    ) -> Result<KafkaSecurity, SecurityError> {
        let get = |k: &str| {
            settings
                .get(k)
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let named = |k: &str| format!("{prefix}{k}");
        let protocol = match get("security.protocol") {
            Some(v) => SecurityProtocol::parse(&named("security.protocol"), &v)?,
            None => SecurityProtocol::Plaintext,
        };
        for k in settings.keys().filter(|k| is_security_key(k)) {
            check_known(k, settings[k].trim(), &named(k))?;
        }
        // An empty ssl.endpoint.identification.algorithm turns host name checks off.
        let endpoint_check = settings
            .get("ssl.endpoint.identification.algorithm")
            .map(|v| v.trim().to_string());
        let tls = if protocol.uses_tls() {
            Some(tls_client(&get, &named, endpoint_check)?)
        } else {
            None
        };
        let sasl = if protocol.uses_sasl() {
            Some(sasl_credentials(&get, &named, kafka_opts)?)
        } else {
            None
        };
        Ok(KafkaSecurity {
            protocol,
            tls,
            sasl,
        })
    }

    /// librdkafka's settings for this client: `security.protocol`, the stores as inline PEM
    /// (`ssl.ca.pem`, `ssl.certificate.pem`, `ssl.key.pem`),
    /// `ssl.endpoint.identification.algorithm`, `sasl.mechanisms` with `sasl.username` /
    /// `sasl.password`, or for OAUTHBEARER `sasl.oauthbearer.config` set to the id of the
    /// login's [`oauth::TokenSource`]: the client's context hands librdkafka that source's
    /// tokens (`rdkafka`'s `ClientContext::generate_oauth_token`, finding the source with
    /// [`oauth::lookup`]), unsecured ones included, so librdkafka makes none itself.
    pub fn librdkafka_settings(&self) -> Vec<(String, String)> {
        let mut out = vec![(
            "security.protocol".to_string(),
            self.protocol.name().to_ascii_lowercase(),
        )];
        let mut set = |k: &str, v: String| out.push((k.to_string(), v));
        if let Some(tls) = &self.tls {
            if let Some(trust) = &tls.trust {
                set("ssl.ca.pem", stores::certificates_pem(trust));
            }
            if let Some(id) = &tls.identity {
                set("ssl.certificate.pem", id.chain_pem());
                set("ssl.key.pem", id.key_pem());
            }
            set(
                "ssl.endpoint.identification.algorithm",
                if tls.verify_hostname { "https" } else { "none" }.into(),
            );
        }
        match &self.sasl {
            Some(c @ SaslCredentials::Plain { username, password })
            | Some(
                c @ SaslCredentials::Scram {
                    username, password, ..
                },
            ) => {
                set("sasl.mechanisms", c.mechanism().into());
                set("sasl.username", username.clone());
                set("sasl.password", password.clone());
            }
            Some(
                c @ (SaslCredentials::OAuthBearerUnsecured { .. }
                | SaslCredentials::OAuthBearerOidc { .. }),
            ) => {
                set("sasl.mechanisms", "OAUTHBEARER".into());
                if let Some(source) = c.token_source() {
                    set("sasl.oauthbearer.config", source.id().to_string());
                }
            }
            None => {}
        }
        out
    }

    /// A rustls client configuration for this client's TLS settings; `None` without TLS.
    pub fn tls_client_config(&self) -> Result<Option<Arc<rustls::ClientConfig>>, SecurityError> {
        let Some(tls) = &self.tls else {
            return Ok(None);
        };
        crate::tls::client_config(tls).map(Some)
    }

    /// The SASL credentials, for SASL protocols.
    pub fn sasl(&self) -> Option<&SaslCredentials> {
        self.sasl.as_ref()
    }
}

/// Refuses keys that name Java code or settings Tributary cannot honour, and warns about keys
/// it accepts but does not apply.
fn check_known(key: &str, value: &str, named: &str) -> Result<(), SecurityError> {
    match key {
        "security.protocol"
        | "ssl.truststore.type"
        | "ssl.truststore.location"
        | "ssl.truststore.password"
        | "ssl.truststore.certificates"
        | "ssl.keystore.type"
        | "ssl.keystore.location"
        | "ssl.keystore.password"
        | "ssl.keystore.key"
        | "ssl.keystore.certificate.chain"
        | "ssl.key.password"
        | "ssl.endpoint.identification.algorithm"
        | "sasl.mechanism"
        | "sasl.jaas.config" => Ok(()),
        "ssl.protocol" | "ssl.enabled.protocols" => {
            for p in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                if !["TLSv1.2", "TLSv1.3", "TLS"].contains(&p) {
                    return Err(SecurityError::new(
                        named,
                        format!("{p} is not supported (TLSv1.2 and TLSv1.3 are)"),
                    ));
                }
            }
            Ok(())
        }
        "ssl.keymanager.algorithm"
        | "ssl.trustmanager.algorithm"
        | "ssl.cipher.suites"
        | "ssl.secure.random.implementation"
        | "ssl.provider" => {
            if !value.is_empty() && !matches!(value, "SunX509" | "PKIX") {
                warn_once(
                    named,
                    "a Java security provider setting; TLS runs with OpenSSL (librdkafka) and rustls defaults",
                );
            }
            Ok(())
        }
        "ssl.engine.factory.class" | "sasl.client.callback.handler.class" | "sasl.login.class" => {
            if value.is_empty() {
                Ok(())
            } else {
                Err(SecurityError::new(
                    named,
                    format!("{value} is Java code, which Tributary cannot run"),
                ))
            }
        }
        "sasl.login.callback.handler.class" => {
            if value.is_empty() || value == oauth::LOGIN_CALLBACK_HANDLER {
                Ok(())
            } else {
                Err(SecurityError::new(
                    named,
                    format!(
                        "{value} is Java code, which Tributary cannot run (for the OIDC \
                         client-credentials flow, set {})",
                        oauth::LOGIN_CALLBACK_HANDLER
                    ),
                ))
            }
        }
        "sasl.oauthbearer.jwt.retriever.class" => match value {
            ""
            | "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever"
            | "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever"
            | "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever" => Ok(()),
            "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever" => {
                Err(SecurityError::new(
                    named,
                    "the jwt-bearer grant (KIP-1139) is not supported yet; the client-credentials \
                     grant is (DefaultJwtRetriever)",
                ))
            }
            other => Err(SecurityError::new(
                named,
                format!("{other} is Java code, which Tributary cannot run"),
            )),
        },
        "sasl.oauthbearer.jwt.validator.class" => match value {
            ""
            | "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator"
            | "org.apache.kafka.common.security.oauthbearer.ClientJwtValidator" => Ok(()),
            other => Err(SecurityError::new(
                named,
                format!(
                    "{other} is not supported: Tributary checks a token's claims as Kafka's \
                     ClientJwtValidator does (DefaultJwtValidator)"
                ),
            )),
        },
        oauth::TOKEN_ENDPOINT_URL
        | oauth::CLIENT_ID
        | oauth::CLIENT_SECRET
        | oauth::SCOPE
        | oauth::SUB_CLAIM_NAME
        | oauth::SCOPE_CLAIM_NAME
        | "sasl.oauthbearer.header.urlencode"
        | "sasl.login.refresh.window.factor"
        | "sasl.login.refresh.window.jitter"
        | "sasl.login.refresh.min.period.seconds"
        | "sasl.login.refresh.buffer.seconds"
        | "sasl.login.retry.backoff.ms"
        | "sasl.login.retry.backoff.max.ms"
        | "sasl.login.connect.timeout.ms"
        | "sasl.login.read.timeout.ms" => Ok(()),
        "sasl.oauthbearer.jwks.endpoint.url"
        | "sasl.oauthbearer.jwks.endpoint.refresh.ms"
        | "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"
        | "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"
        | "sasl.oauthbearer.expected.audience"
        | "sasl.oauthbearer.expected.issuer"
        | "sasl.oauthbearer.clock.skew.seconds" => {
            warn_once(
                named,
                "a token validation setting: the broker checks the token's signature, \
                 audience and issuer; a client checks its claims as Kafka's ClientJwtValidator does",
            );
            Ok(())
        }
        k if k.starts_with("sasl.oauthbearer.assertion.") => {
            warn_once(
                named,
                "a setting of the jwt-bearer grant, which is not supported (client credentials are)",
            );
            Ok(())
        }
        k if k.starts_with("sasl.kerberos.") => {
            warn_once(named, "Kerberos (GSSAPI) is not supported");
            Ok(())
        }
        k if k.starts_with("ssl.") || k.starts_with("sasl.") => {
            warn_once(named, "not a Java client security setting Tributary knows");
            Ok(())
        }
        _ => Ok(()),
    }
}

fn tls_client(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
    endpoint_check: Option<String>,
) -> Result<TlsClient, SecurityError> {
    let trust = trust_material(get, named)?;
    let identity = identity_material(get, named)?;
    let verify_hostname = match endpoint_check {
        None => true,
        Some(v) if v.is_empty() => false,
        Some(v) if v.eq_ignore_ascii_case("https") => true,
        Some(v) => {
            return Err(SecurityError::new(
                &named("ssl.endpoint.identification.algorithm"),
                format!("{v} is not supported (https, or empty to turn host name checks off)"),
            ))
        }
    };
    Ok(TlsClient {
        trust,
        identity,
        verify_hostname,
    })
}

fn sasl_credentials(
    get: &dyn Fn(&str) -> Option<String>,
    named: &dyn Fn(&str) -> String,
    kafka_opts: Option<&str>,
) -> Result<SaslCredentials, SecurityError> {
    let mechanism = get("sasl.mechanism").unwrap_or_else(|| "GSSAPI".into());
    let mech_key = named("sasl.mechanism");
    let jaas_key = named("sasl.jaas.config");
    let upper = mechanism.to_ascii_uppercase();
    // Kafka's OAuth login handler is the one Java class Tributary does itself: for OAUTHBEARER.
    let oidc =
        get("sasl.login.callback.handler.class").as_deref() == Some(oauth::LOGIN_CALLBACK_HANDLER);
    if oidc && upper != "OAUTHBEARER" {
        return Err(SecurityError::new(
            &named("sasl.login.callback.handler.class"),
            format!(
                "{} logs in with sasl.mechanism=OAUTHBEARER, not {mechanism}",
                oauth::LOGIN_CALLBACK_HANDLER
            ),
        ));
    }
    if upper == "GSSAPI" {
        return Err(SecurityError::new(
            &mech_key,
            "GSSAPI (Kerberos) is not supported (Java's default when sasl.mechanism is unset); \
             use SCRAM-SHA-512, SCRAM-SHA-256, PLAIN or OAUTHBEARER",
        ));
    }
    if !["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"].contains(&upper.as_str()) {
        return Err(SecurityError::new(
            &mech_key,
            format!(
                "{mechanism} is not supported (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN or OAUTHBEARER)"
            ),
        ));
    }
    let text = get("sasl.jaas.config").ok_or_else(|| {
        SecurityError::new(
            &jaas_key,
            format!("must be set for sasl.mechanism={mechanism} (Tributary has no JAAS file for Kafka clients)"),
        )
    })?;
    let module =
        jaas::single_module(&text).map_err(|e| SecurityError::new(&jaas_key, e.to_string()))?;
    let expect = |class: &str| {
        if module.simple_name() == class {
            Ok(())
        } else {
            Err(SecurityError::new(
                &jaas_key,
                format!(
                    "sasl.mechanism={mechanism} needs {class}, not {}",
                    module.class
                ),
            ))
        }
    };
    let option = |name: &str| {
        module.options.get(name).cloned().ok_or_else(|| {
            SecurityError::new(
                &jaas_key,
                format!("{} needs the option {name}", module.simple_name()),
            )
        })
    };
    match upper.as_str() {
        "PLAIN" => {
            expect("PlainLoginModule")?;
            Ok(SaslCredentials::Plain {
                username: option("username")?,
                password: option("password")?,
            })
        }
        "SCRAM-SHA-256" | "SCRAM-SHA-512" => {
            expect("ScramLoginModule")?;
            Ok(SaslCredentials::Scram {
                mechanism: if upper == "SCRAM-SHA-256" {
                    ScramMechanism::Sha256
                } else {
                    ScramMechanism::Sha512
                },
                username: option("username")?,
                password: option("password")?,
            })
        }
        _ if oidc => {
            expect("OAuthBearerLoginModule")?;
            Ok(SaslCredentials::OAuthBearerOidc {
                source: oauth::client_credentials_source(get, named, &module, kafka_opts)?,
            })
        }
        _ => {
            expect("OAuthBearerLoginModule")?;
            let principal_claim = module
                .options
                .get("unsecuredLoginPrincipalClaimName")
                .cloned()
                .unwrap_or_else(|| "sub".into());
            let principal = module
                .options
                .get(&format!("unsecuredLoginStringClaim_{principal_claim}"))
                .cloned()
                .ok_or_else(|| {
                    if get(oauth::TOKEN_ENDPOINT_URL).is_some() {
                        // As in Java, the token endpoint is only used by Kafka's OAuth login
                        // handler; without it the unsecured handler runs.
                        SecurityError::new(
                            &named("sasl.login.callback.handler.class"),
                            format!(
                                "must be {} for the OIDC client-credentials flow of {}; without \
                                 it OAuthBearerLoginModule makes unsecured tokens, which need \
                                 unsecuredLoginStringClaim_{principal_claim}",
                                oauth::LOGIN_CALLBACK_HANDLER,
                                named(oauth::TOKEN_ENDPOINT_URL)
                            ),
                        )
                    } else {
                        SecurityError::new(
                            &jaas_key,
                            format!(
                                "OAuthBearerLoginModule needs unsecuredLoginStringClaim_{principal_claim} \
                                 for unsecured tokens, or sasl.login.callback.handler.class={} with \
                                 sasl.oauthbearer.token.endpoint.url for the OIDC client-credentials flow",
                                oauth::LOGIN_CALLBACK_HANDLER
                            ),
                        )
                    }
                })?;
            let lifetime_s = match module.options.get("unsecuredLoginLifetimeSeconds") {
                Some(v) => v.parse().map_err(|_| {
                    SecurityError::new(
                        &jaas_key,
                        format!("unsecuredLoginLifetimeSeconds={v} is not a number"),
                    )
                })?,
                None => 3600,
            };
            let scope = module
                .options
                .get("unsecuredLoginListClaim_scope")
                .map(|v| {
                    let mut chars = v.chars();
                    match chars.next() {
                        Some(sep) => chars
                            .as_str()
                            .split(sep)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect(),
                        None => Vec::new(),
                    }
                })
                .unwrap_or_default();
            Ok(SaslCredentials::OAuthBearerUnsecured {
                principal,
                principal_claim,
                lifetime_s,
                scope,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn plaintext_by_default_and_no_tls_or_sasl() {
        let s = KafkaSecurity::from_settings(&settings(&[]), "").unwrap();
        assert_eq!(s.protocol, SecurityProtocol::Plaintext);
        assert!(s.tls.is_none() && s.sasl.is_none());
        assert_eq!(
            s.librdkafka_settings(),
            vec![("security.protocol".into(), "plaintext".into())]
        );
    }

    #[test]
    fn scram_from_the_jaas_config() {
        let s = KafkaSecurity::from_settings(
            &settings(&[
                ("security.protocol", "sasl_plaintext"),
                ("sasl.mechanism", "SCRAM-SHA-512"),
                (
                    "sasl.jaas.config",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
                ),
            ]),
            "producer.",
        )
        .unwrap();
        let rd = s.librdkafka_settings();
        assert!(rd.contains(&("sasl.mechanisms".into(), "SCRAM-SHA-512".into())));
        assert!(rd.contains(&("sasl.username".into(), "u".into())));
        assert!(rd.contains(&("sasl.password".into(), "p".into())));
        assert!(!format!("{s:?}").contains("\"p\""));
    }

    #[test]
    fn errors_name_the_key_as_written() {
        let e = KafkaSecurity::from_settings(
            &settings(&[("security.protocol", "SASL_SSL")]),
            "consumer.",
        )
        .unwrap_err();
        assert_eq!(e.key, "consumer.sasl.mechanism");
        assert!(e.message.contains("GSSAPI"), "{e}");
        let e = KafkaSecurity::from_settings(
            &settings(&[
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "PLAIN"),
                (
                    "sasl.jaas.config",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
                ),
            ]),
            "",
        )
        .unwrap_err();
        assert_eq!(e.key, "sasl.jaas.config");
        let e = KafkaSecurity::from_settings(
            &settings(&[
                ("security.protocol", "SSL"),
                ("ssl.truststore.location", "/nonexistent/ts.jks"),
            ]),
            "",
        )
        .unwrap_err();
        assert_eq!(e.key, "ssl.truststore.location");
        let e = KafkaSecurity::from_settings(&settings(&[("security.protocol", "TLS")]), "admin.")
            .unwrap_err();
        assert_eq!(e.key, "admin.security.protocol");
        let e = KafkaSecurity::from_settings(
            &settings(&[("ssl.engine.factory.class", "com.x.Factory")]),
            "",
        )
        .unwrap_err();
        assert_eq!(e.key, "ssl.engine.factory.class");
    }

    #[test]
    fn unsecured_oauthbearer() {
        let s = KafkaSecurity::from_settings(
            &settings(&[
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "OAUTHBEARER"),
                (
                    "sasl.jaas.config",
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"connect\" unsecuredLoginListClaim_scope=\",a,b\";",
                ),
            ]),
            "",
        )
        .unwrap();
        let rd = s.librdkafka_settings();
        // librdkafka gets the tokens from the source its config names, not its own handler.
        let id = s.sasl().unwrap().token_source().unwrap().id().to_string();
        assert!(rd.contains(&("sasl.oauthbearer.config".into(), id.clone())));
        assert!(!rd
            .iter()
            .any(|(k, _)| k == "enable.sasl.oauthbearer.unsecure.jwt"));
        let token = crate::oauth::lookup(&id).unwrap().token().unwrap();
        assert_eq!(token.principal, "connect");
    }

    #[test]
    fn oidc_client_credentials_as_connect_writes_them() {
        let url = "http://127.0.0.1:9/token";
        let opts = format!("-D{}={url}", crate::oauth::ALLOWED_URLS_PROPERTY);
        let base = [
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.login.callback.handler.class", crate::oauth::LOGIN_CALLBACK_HANDLER),
            ("sasl.oauthbearer.token.endpoint.url", url),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"connect\" clientSecret=\"connect-secret\" scope=\"kafka\";",
            ),
        ];
        let s = KafkaSecurity::from_settings_with_opts(&settings(&base), "producer.", Some(&opts))
            .unwrap();
        let Some(SaslCredentials::OAuthBearerOidc { source }) = s.sasl() else {
            panic!("{s:?}")
        };
        assert!(source.describe().contains("client id connect"));
        assert!(!format!("{s:?}").contains("connect-secret"));
        let rd = s.librdkafka_settings();
        assert!(rd.contains(&("sasl.oauthbearer.config".into(), source.id().to_string())));
        assert!(rd.contains(&("sasl.mechanisms".into(), "OAUTHBEARER".into())));
        // Not allowed by KAFKA_OPTS: refused naming the key with its prefix.
        let e = KafkaSecurity::from_settings_with_opts(&settings(&base), "producer.", None)
            .unwrap_err();
        assert_eq!(e.key, "producer.sasl.oauthbearer.token.endpoint.url");
        // The handler with another mechanism, another handler class, a token URL without the
        // handler: each refused naming the key.
        let mut other = base.to_vec();
        other[1] = ("sasl.mechanism", "PLAIN");
        let e =
            KafkaSecurity::from_settings_with_opts(&settings(&other), "", Some(&opts)).unwrap_err();
        assert_eq!(e.key, "sasl.login.callback.handler.class");
        let mut other = base.to_vec();
        other[2] = ("sasl.login.callback.handler.class", "com.example.Handler");
        let e =
            KafkaSecurity::from_settings_with_opts(&settings(&other), "", Some(&opts)).unwrap_err();
        assert_eq!(e.key, "sasl.login.callback.handler.class");
        let mut other = base.to_vec();
        other.remove(2);
        let e =
            KafkaSecurity::from_settings_with_opts(&settings(&other), "", Some(&opts)).unwrap_err();
        assert_eq!(e.key, "sasl.login.callback.handler.class");
        let mut other = base.to_vec();
        other.push((
            "sasl.oauthbearer.jwt.retriever.class",
            "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever",
        ));
        let e =
            KafkaSecurity::from_settings_with_opts(&settings(&other), "", Some(&opts)).unwrap_err();
        assert_eq!(e.key, "sasl.oauthbearer.jwt.retriever.class");
    }
}
