//! Running in a container image (`scripts/image`, issue #33): the worker file from the
//! environment, in the conventions users' compose files and manifests already use, and the
//! health check an orchestrator runs.
//!
//! Environment conventions, both read at once (a key set twice is an error naming both
//! variables):
//! - Confluent's `cp-kafka-connect`: every `CONNECT_<NAME>` sets a worker key, `<NAME>` lower
//!   case with `___` → `-`, `__` → `_` and `_` → `.` (`CONNECT_BOOTSTRAP_SERVERS` →
//!   `bootstrap.servers`, `CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR` →
//!   `config.storage.replication.factor`), as Confluent's `env_to_props` does. Its
//!   `CONNECT_LOG4J_*` variables have no worker key: they are reported as not applying.
//! - Debezium's `debezium/connect` image: `BOOTSTRAP_SERVERS`, `GROUP_ID`,
//!   `CONFIG_STORAGE_TOPIC`, `OFFSET_STORAGE_TOPIC`, `STATUS_STORAGE_TOPIC`, `KEY_CONVERTER`,
//!   `VALUE_CONVERTER`, the `*_STORAGE_REPLICATION_FACTOR`s, `OFFSET_FLUSH_INTERVAL_MS`,
//!   `OFFSET_FLUSH_TIMEOUT_MS`, `SHUTDOWN_TIMEOUT` (`task.shutdown.graceful.timeout.ms`),
//!   `REST_HOST_NAME` / `REST_PORT` (the listener), `ADVERTISED_HOST_NAME` /
//!   `ADVERTISED_PORT`; `HEAP_OPTS` goes to the embedded JVM, as `KAFKA_HEAP_OPTS`.
//!
//! Without a listener setting the worker listens on `http://0.0.0.0:8083`, as both images do.

use std::collections::BTreeMap;

/// What `tributary healthcheck` asks without a URL, unless the entry point wrote another into
/// [`health_url_file`].
pub const DEFAULT_HEALTH_URL: &str = "http://127.0.0.1:8083/health";

/// Where the entry point leaves the health URL of the worker it runs
/// (`$TMPDIR/tributary-health-url`), for the image's `HEALTHCHECK`.
pub fn health_url_file() -> std::path::PathBuf {
    std::env::temp_dir().join("tributary-health-url")
}

/// The `/health` URL of the worker of `properties` (a worker file's keys): its first
/// `listeners` entry (Connect's default `http://:8083` without one), asked on 127.0.0.1 when
/// the listener binds every address or names none.
pub fn health_url(properties: &std::collections::HashMap<String, String>) -> String {
    let first = properties
        .get("listeners")
        .and_then(|l| l.split(',').map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("http://:8083");
    let (scheme, rest) = first.split_once("://").unwrap_or(("http", first));
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, p.trim_end_matches('/')),
        None => (rest, if scheme == "https" { "443" } else { "80" }),
    };
    let host = match host {
        "" | "0.0.0.0" | "[::]" | "::" => "127.0.0.1",
        h => h,
    };
    format!("{}://{host}:{port}/health", scheme.to_ascii_lowercase())
}

/// Debezium's image variables with the worker key each sets.
const DEBEZIUM: &[(&str, &str)] = &[
    ("BOOTSTRAP_SERVERS", "bootstrap.servers"),
    ("GROUP_ID", "group.id"),
    ("CONFIG_STORAGE_TOPIC", "config.storage.topic"),
    ("OFFSET_STORAGE_TOPIC", "offset.storage.topic"),
    ("STATUS_STORAGE_TOPIC", "status.storage.topic"),
    (
        "CONFIG_STORAGE_REPLICATION_FACTOR",
        "config.storage.replication.factor",
    ),
    (
        "OFFSET_STORAGE_REPLICATION_FACTOR",
        "offset.storage.replication.factor",
    ),
    (
        "STATUS_STORAGE_REPLICATION_FACTOR",
        "status.storage.replication.factor",
    ),
    ("KEY_CONVERTER", "key.converter"),
    ("VALUE_CONVERTER", "value.converter"),
    ("OFFSET_FLUSH_INTERVAL_MS", "offset.flush.interval.ms"),
    ("OFFSET_FLUSH_TIMEOUT_MS", "offset.flush.timeout.ms"),
    ("SHUTDOWN_TIMEOUT", "task.shutdown.graceful.timeout.ms"),
    ("ADVERTISED_HOST_NAME", "rest.advertised.host.name"),
    ("ADVERTISED_PORT", "rest.advertised.port"),
];

/// A worker file built from the environment: its keys (sorted), where each came from, and
/// what was said about variables that do not apply.
#[derive(Debug, Default, PartialEq)]
pub struct EnvWorkerConfig {
    /// Worker key → value.
    pub properties: BTreeMap<String, String>,
    /// Worker key → the variable that set it.
    pub sources: BTreeMap<String, String>,
    /// Options for the embedded JVM (`HEAP_OPTS`).
    pub jvm_options: Option<String>,
    /// Variables read but not applying, with why.
    pub notes: Vec<String>,
}

/// Confluent's `env_to_props` name rule for what follows `CONNECT_`.
pub fn confluent_key(rest: &str) -> String {
    rest.to_ascii_lowercase()
        .replace("___", "-")
        .replace("__", "\u{0}")
        .replace('_', ".")
        .replace('\u{0}', "_")
}

/// The worker config the variables `env` describe. Errors: a key set by two variables (with
/// different values), naming both.
pub fn from_env(env: &[(String, String)]) -> Result<EnvWorkerConfig, String> {
    let mut out = EnvWorkerConfig::default();
    let set = |out: &mut EnvWorkerConfig, key: String, value: &str, var: &str| {
        if let Some(previous) = out.sources.get(&key) {
            if out.properties.get(&key).map(String::as_str) != Some(value) {
                return Err(format!(
                    "environment: {previous} and {var} both set worker key '{key}', to different values"
                ));
            }
        }
        out.properties.insert(key.clone(), value.to_string());
        out.sources.insert(key, var.to_string());
        Ok(())
    };
    let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    for (var, value) in env {
        if let Some(rest) = var.strip_prefix("CONNECT_") {
            if rest.is_empty() {
                continue;
            }
            if rest.starts_with("LOG4J") {
                out.notes.push(format!(
                    "{var} does not apply: the worker logs to standard error; set levels with TRIBUTARY_LOG or /admin/loggers"
                ));
                continue;
            }
            set(&mut out, confluent_key(rest), value, var)?;
        }
    }
    for (var, key) in DEBEZIUM {
        if let Some(value) = lookup(var) {
            set(&mut out, key.to_string(), value, var)?;
        }
    }
    match (lookup("REST_HOST_NAME"), lookup("REST_PORT")) {
        (None, None) => {}
        (host, port) => {
            let listener = format!(
                "http://{}:{}",
                host.unwrap_or("0.0.0.0"),
                port.unwrap_or("8083")
            );
            let var = if port.is_some() {
                "REST_PORT"
            } else {
                "REST_HOST_NAME"
            };
            set(&mut out, "listeners".to_string(), &listener, var)?;
        }
    }
    out.jvm_options = lookup("HEAP_OPTS").map(str::to_string);
    if !out.properties.contains_key("listeners") {
        out.properties
            .insert("listeners".to_string(), "http://0.0.0.0:8083".to_string());
        out.sources
            .insert("listeners".to_string(), "the image's default".to_string());
    }
    Ok(out)
}

impl EnvWorkerConfig {
    /// The worker file's text: one `key=value` line per key, escaped as Java properties.
    pub fn to_properties(&self) -> String {
        let mut text =
            String::from("# Written by `tributary container` from environment variables.\n");
        for (k, v) in &self.properties {
            let source = self.sources.get(k).map(String::as_str).unwrap_or_default();
            text.push_str(&format!(
                "# from {source}\n{}={}\n",
                escape(k, true),
                escape(v, false)
            ));
        }
        text
    }
}

/// Java properties escaping: backslashes, line breaks, and in keys `=`, `:` and spaces.
fn escape(s: &str, key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '=' | ':' if key => {
                out.push('\\');
                out.push(c);
            }
            ' ' if key || i == 0 => out.push_str("\\ "),
            c => out.push(c),
        }
    }
    out
}

/// `tributary healthcheck`: 0 when `url` (default `http://127.0.0.1:8083/health`) answers 200
/// within 5 s, as an orchestrator's readiness check wants (Connect's `GET /health`, KIP-1017,
/// answers 200 once the worker has started); otherwise the reason.
pub async fn healthcheck(url: Option<String>) -> Result<(), String> {
    // Without a URL: the one the entry point derived from the worker file's listener, since
    // a compose file or manifest may move it off 8083.
    let url = url
        .or_else(|| {
            std::fs::read_to_string(health_url_file())
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_HEALTH_URL.to_string());
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        // The probe runs inside the container against its own listener, whose certificate
        // names the host the clients use, not 127.0.0.1.
        .danger_accept_invalid_certs(true)
        .build()
        .map_err(|e| format!("healthcheck: {e}"))?;
    let resp = client
        .get(&url)
        .send()
        .await
        .map_err(|e| format!("healthcheck: {url}: {e}"))?;
    if resp.status().as_u16() == 200 {
        Ok(())
    } else {
        let status = resp.status();
        let body = resp.text().await.unwrap_or_default();
        Err(format!("healthcheck: {url}: {status}: {body}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_health_url_follows_the_first_listener() {
        let props = |l: Option<&str>| {
            l.map(|l| {
                [("listeners".to_string(), l.to_string())]
                    .into_iter()
                    .collect()
            })
            .unwrap_or_default()
        };
        assert_eq!(health_url(&props(None)), "http://127.0.0.1:8083/health");
        assert_eq!(
            health_url(&props(Some("http://0.0.0.0:9000, https://a:9443"))),
            "http://127.0.0.1:9000/health"
        );
        assert_eq!(
            health_url(&props(Some("HTTPS://connect-1:8443"))),
            "https://connect-1:8443/health"
        );
        assert_eq!(
            health_url(&props(Some("http://:8084"))),
            "http://127.0.0.1:8084/health"
        );
    }

    #[test]
    fn confluent_names_become_worker_keys() {
        assert_eq!(confluent_key("BOOTSTRAP_SERVERS"), "bootstrap.servers");
        assert_eq!(
            confluent_key("CONFIG_STORAGE_REPLICATION_FACTOR"),
            "config.storage.replication.factor"
        );
        assert_eq!(confluent_key("PRODUCER_CLIENT__ID"), "producer.client_id");
        assert_eq!(confluent_key("SOME___DASHED_KEY"), "some-dashed.key");
        let c = from_env(&env(&[
            ("CONNECT_BOOTSTRAP_SERVERS", "k:9092"),
            ("CONNECT_GROUP_ID", "g"),
            ("CONNECT_LOG4J_ROOT_LOGLEVEL", "INFO"),
            ("PATH", "/bin"),
        ]))
        .unwrap();
        assert_eq!(c.properties["bootstrap.servers"], "k:9092");
        assert_eq!(c.properties["group.id"], "g");
        assert_eq!(c.properties["listeners"], "http://0.0.0.0:8083");
        assert_eq!(c.properties.len(), 3, "{c:?}");
        assert!(c.notes[0].starts_with("CONNECT_LOG4J_ROOT_LOGLEVEL does not apply"));
    }

    #[test]
    fn debezium_variables_and_its_listener() {
        let c = from_env(&env(&[
            ("BOOTSTRAP_SERVERS", "k:9092"),
            ("GROUP_ID", "1"),
            ("CONFIG_STORAGE_TOPIC", "my_connect_configs"),
            ("REST_PORT", "8084"),
            ("HEAP_OPTS", "-Xmx1g"),
        ]))
        .unwrap();
        assert_eq!(c.properties["config.storage.topic"], "my_connect_configs");
        assert_eq!(c.properties["listeners"], "http://0.0.0.0:8084");
        assert_eq!(c.jvm_options.as_deref(), Some("-Xmx1g"));
        assert_eq!(c.sources["group.id"], "GROUP_ID");
    }

    #[test]
    fn one_key_from_two_variables_must_agree() {
        let err = from_env(&env(&[("CONNECT_GROUP_ID", "a"), ("GROUP_ID", "b")])).unwrap_err();
        assert!(err.contains("CONNECT_GROUP_ID and GROUP_ID"), "{err}");
        assert!(from_env(&env(&[("CONNECT_GROUP_ID", "a"), ("GROUP_ID", "a")])).is_ok());
    }

    #[test]
    fn properties_are_escaped() {
        let c = from_env(&env(&[("CONNECT_SASL_JAAS_CONFIG", "a b=\"c\\d\"\nx")])).unwrap();
        let text = c.to_properties();
        assert!(
            text.contains("sasl.jaas.config=a b=\"c\\\\d\"\\nx"),
            "{text}"
        );
    }
}
