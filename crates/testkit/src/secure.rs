//! The secured broker of `scripts/kafka-secure` (SASL_SSL, mutual TLS, SASL_PLAINTEXT with
//! an OIDC provider): its addresses and files, and the worker-file lines that reach it.

use crate::missing;

/// The secured broker's addresses and files.
pub struct Secure {
    pub sasl_ssl: String,
    pub mtls: String,
    pub sasl_plaintext: String,
    pub vars: std::collections::HashMap<String, String>,
}

impl Secure {
    pub fn var(&self, name: &str) -> String {
        self.vars
            .get(name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} is not set by scripts/kafka-secure env"))
    }
}

pub fn secure() -> Option<Secure> {
    let vars: std::collections::HashMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("KAFKA_SECURE_"))
        .collect();
    match vars.get("KAFKA_SECURE_SASL_SSL") {
        Some(b) if !b.is_empty() => Some(Secure {
            sasl_ssl: b.clone(),
            mtls: vars["KAFKA_SECURE_MTLS"].clone(),
            sasl_plaintext: vars["KAFKA_SECURE_SASL_PLAINTEXT"].clone(),
            vars,
        }),
        _ => missing("KAFKA_SECURE_SASL_SSL is not set (scripts/test starts scripts/kafka-secure)"),
    }
}

pub fn scram(user: &str, password: &str) -> String {
    format!(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{user}\" password=\"{password}\";"
    )
}

/// The Kafka security lines of a worker file for SASL_SSL with SCRAM-SHA-512, at worker level
/// and under `producer.`, `consumer.` and `admin.` (Connect's task clients do not inherit the
/// worker-level keys), with the trust store in `store` format.
pub fn sasl_ssl_lines(s: &Secure, user: &str, password: &str, store: &str) -> String {
    let trust = match store {
        "JKS" => format!(
            "ssl.truststore.location={}\nssl.truststore.password=store-secret\n",
            s.var("KAFKA_SECURE_TRUSTSTORE_JKS")
        ),
        "PKCS12" => format!(
            "ssl.truststore.type=PKCS12\nssl.truststore.location={}\nssl.truststore.password=store-secret\n",
            s.var("KAFKA_SECURE_TRUSTSTORE_P12")
        ),
        _ => format!(
            "ssl.truststore.type=PEM\nssl.truststore.location={}\n",
            s.var("KAFKA_SECURE_CA_PEM")
        ),
    };
    let common = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={}\n{trust}",
        scram(user, password)
    );
    let mut out = common.clone();
    for prefix in ["producer.", "consumer.", "admin."] {
        for line in common.lines() {
            out.push_str(prefix);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The OAUTHBEARER lines of a worker file for the OIDC client-credentials flow against the
/// secured broker's provider, as a Java Connect worker file has them: the worker level with the
/// `clientId` / `clientSecret` / `scope` JAAS options, `producer.` and `consumer.` with Kafka
/// 4.1's keys (KIP-1139) instead.
pub fn oidc_lines(s: &Secure, client_id: &str, client_secret: &str) -> String {
    let common = format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\nsasl.oauthbearer.token.endpoint.url={}\n",
        s.var("KAFKA_SECURE_OIDC_TOKEN_URL")
    );
    let mut out = format!(
        "{common}sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"{client_id}\" clientSecret=\"{client_secret}\" scope=\"kafka\";\n"
    );
    for prefix in ["producer.", "consumer."] {
        for line in common.lines() {
            out.push_str(&format!("{prefix}{line}\n"));
        }
        out.push_str(&format!(
            "{prefix}sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n{prefix}sasl.oauthbearer.client.credentials.client.id={client_id}\n{prefix}sasl.oauthbearer.client.credentials.client.secret={client_secret}\n{prefix}sasl.oauthbearer.scope=kafka\n"
        ));
    }
    out
}

/// `KAFKA_OPTS` allowing the provider's token endpoint, as Kafka 4.x clients require.
pub fn oidc_kafka_opts(s: &Secure) -> String {
    format!(
        "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={}",
        s.var("KAFKA_SECURE_OIDC_TOKEN_URL")
    )
}
