//! The settings of the schema-registry converters (Confluent's `AbstractKafkaSchemaSerDeConfig`,
//! `AvroConverterConfig` and `AvroDataConfig`), as the converter receives them (the
//! `key.converter.` / `value.converter.` prefix already stripped).
//!
//! Every key Confluent's converter documents is either implemented or refused: a key that
//! Tributary does not implement, set to anything but its default, is a
//! [`ConnectError::Config`] naming the key, never silently ignored. Keys neither converter
//! knows are ignored, as Confluent's converter ignores them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::subject::SubjectNameStrategy;

/// How requests authenticate (`basic.auth.credentials.source`, `bearer.auth.credentials.source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No credentials.
    None,
    /// HTTP basic: `user:password`, from `basic.auth.user.info` (`USER_INFO`) or from the
    /// URL's user info (`URL`, the default).
    Basic(String),
    /// A bearer token (`bearer.auth.credentials.source=STATIC_TOKEN`, `bearer.auth.token`).
    Bearer(String),
}

/// The registry client's settings.
#[derive(Clone)]
pub struct RegistryConfig {
    /// `schema.registry.url`: the base URLs, tried in order (user info taken out).
    pub urls: Vec<String>,
    /// Credentials.
    pub auth: Auth,
    /// `schema.registry.ssl.*`: the TLS client configuration, for `https` URLs.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// `request.header.*`: extra HTTP headers.
    pub headers: Vec<(String, String)>,
    /// `http.connect.timeout.ms` (default 60000).
    pub connect_timeout: Duration,
    /// `http.read.timeout.ms` (default 60000).
    pub read_timeout: Duration,
    /// `max.retries` (default 3).
    pub max_retries: u32,
    /// `retries.wait.ms` (default 1000).
    pub retry_wait: Duration,
    /// `retries.max.wait.ms` (default 20000).
    pub retry_max_wait: Duration,
}

/// The serializer's and deserializer's settings besides the client's.
#[derive(Debug, Clone)]
pub struct SerdeConfig {
    /// `auto.register.schemas` (default true): register a schema not yet in its subject.
    pub auto_register: bool,
    /// `use.latest.version` (default false): write with the subject's latest schema.
    pub use_latest_version: bool,
    /// `latest.compatibility.strict` (default true): with `use.latest.version`, the latest
    /// schema must be able to read what the record's own schema writes.
    pub latest_compatibility_strict: bool,
    /// `latest.cache.ttl.sec` (default -1, for ever): how long a latest version is kept.
    pub latest_cache_ttl: Option<Duration>,
    /// `use.schema.id` (default -1, unset): write with this schema id.
    pub use_schema_id: Option<i32>,
    /// `id.compatibility.strict` (default true): with `use.schema.id`, the id's schema must be
    /// able to read what the record's own schema writes.
    pub id_compatibility_strict: bool,
    /// `normalize.schemas` (default false).
    pub normalize: bool,
    /// `key.subject.name.strategy` / `value.subject.name.strategy`.
    pub subject_strategy: SubjectNameStrategy,
}

pub(crate) fn get<'a>(props: &'a Props, key: &str) -> Option<&'a str> {
    props.get(key).map(|v| v.trim())
}

pub(crate) fn bool_key(props: &Props, key: &str, default: bool) -> ConnectResult<bool> {
    match get(props, key) {
        None | Some("") => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(ConnectError::config(format!(
            "Invalid value {v} for configuration {key}: Expected value to be either true or false"
        ))),
    }
}

pub(crate) fn int_key(props: &Props, key: &str, default: i64) -> ConnectResult<i64> {
    match get(props, key) {
        None | Some("") => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            ConnectError::config(format!(
                "Invalid value {v} for configuration {key}: Not a number of type INT"
            ))
        }),
    }
}

fn ms(props: &Props, key: &str, default: i64) -> ConnectResult<Duration> {
    Ok(Duration::from_millis(
        int_key(props, key, default)?.max(0) as u64
    ))
}

/// Keys Confluent's converters document that Tributary does not implement, with the value
/// that is their default (setting the key to it is accepted). Anything else is refused.
const NOT_IMPLEMENTED: &[(&str, &str)] = &[
    ("use.latest.with.metadata", ""),
    ("use.schema.guid", ""),
    (
        "context.name.strategy",
        "io.confluent.kafka.serializers.context.NullContextNameStrategy",
    ),
    (
        "key.schema.id.serializer",
        "io.confluent.kafka.serializers.schema.id.PrefixSchemaIdSerializer",
    ),
    (
        "value.schema.id.serializer",
        "io.confluent.kafka.serializers.schema.id.PrefixSchemaIdSerializer",
    ),
    (
        "key.schema.id.deserializer",
        "io.confluent.kafka.serializers.schema.id.DualSchemaIdDeserializer",
    ),
    (
        "value.schema.id.deserializer",
        "io.confluent.kafka.serializers.schema.id.DualSchemaIdDeserializer",
    ),
    ("schema.reflection", "false"),
    ("generalized.sum.type.support", "false"),
    ("ignore.default.for.nullables", "false"),
    ("schema.backup.enabled", "false"),
    ("rule.executors", ""),
    ("rule.actions", ""),
    ("proxy.host", ""),
    ("proxy.port", "-1"),
    ("bearer.auth.issuer.endpoint.url", ""),
    ("bearer.auth.client.id", ""),
    ("bearer.auth.client.secret", ""),
    ("bearer.auth.logical.cluster", ""),
    ("bearer.auth.identity.pool.id", ""),
    ("bearer.auth.custom.provider.class", ""),
    ("basic.auth.credentials.provider.class", ""),
    ("schema.format", ""),
    ("propagate.schema.tags", "false"),
];

fn refuse_not_implemented(props: &Props) -> ConnectResult<()> {
    for (key, default) in NOT_IMPLEMENTED {
        if let Some(v) = get(props, key) {
            if !v.is_empty() && !v.eq_ignore_ascii_case(default) {
                return Err(ConnectError::config(format!(
                    "Invalid value {v} for configuration {key}: not implemented by Tributary's \
                     schema-registry converters (only the default, {}, is supported)",
                    if default.is_empty() { "unset" } else { default }
                )));
            }
        }
    }
    Ok(())
}

impl RegistryConfig {
    /// Reads the client's settings. Errors ([`ConnectError::Config`]) name the key: a missing
    /// `schema.registry.url`, an unparsable URL or number, an authentication source or TLS
    /// setting Tributary does not implement or cannot load.
    pub fn from_props(props: &Props) -> ConnectResult<RegistryConfig> {
        refuse_not_implemented(props)?;
        let raw_urls = get(props, "schema.registry.url").filter(|v| !v.is_empty()).ok_or_else(|| {
            ConnectError::config(
                "Missing required configuration \"schema.registry.url\" which has no default value.",
            )
        })?;
        let mut urls = Vec::new();
        let mut url_user_info = None;
        for u in raw_urls.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            let mut parsed = url::Url::parse(u).map_err(|e| {
                ConnectError::config(format!(
                    "Invalid value {u} for configuration schema.registry.url: {e}"
                ))
            })?;
            if !parsed.username().is_empty() {
                url_user_info = Some(format!(
                    "{}:{}",
                    decode(parsed.username()),
                    decode(parsed.password().unwrap_or_default())
                ));
                parsed.set_username("").ok();
                parsed.set_password(None).ok();
            }
            urls.push(parsed.to_string().trim_end_matches('/').to_string());
        }
        let basic_source = get(props, "basic.auth.credentials.source").unwrap_or("URL");
        let user_info = get(props, "basic.auth.user.info")
            .or_else(|| get(props, "schema.registry.basic.auth.user.info"))
            .filter(|v| !v.is_empty());
        let mut auth = match basic_source.to_ascii_uppercase().as_str() {
            "" | "URL" => url_user_info.map(Auth::Basic).unwrap_or(Auth::None),
            "USER_INFO" => user_info
                .map(|u| Auth::Basic(u.to_string()))
                .unwrap_or(Auth::None),
            other => {
                return Err(ConnectError::config(format!(
                    "Invalid value {other} for configuration basic.auth.credentials.source: \
                     Tributary supports URL and USER_INFO"
                )))
            }
        };
        if let Some(source) = get(props, "bearer.auth.credentials.source").filter(|v| !v.is_empty())
        {
            if !source.eq_ignore_ascii_case("STATIC_TOKEN") {
                return Err(ConnectError::config(format!(
                    "Invalid value {source} for configuration bearer.auth.credentials.source: \
                     Tributary supports STATIC_TOKEN"
                )));
            }
            let token = get(props, "bearer.auth.token").filter(|v| !v.is_empty()).ok_or_else(|| {
                ConnectError::config(
                    "Missing configuration bearer.auth.token for bearer.auth.credentials.source=STATIC_TOKEN",
                )
            })?;
            auth = Auth::Bearer(token.to_string());
        }
        let ssl: BTreeMap<String, String> = props
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("schema.registry.")
                    .filter(|k| k.starts_with("ssl."))
                    .map(|k| (k.to_string(), v.clone()))
            })
            .collect();
        let tls = if !ssl.is_empty() || urls.iter().any(|u| u.starts_with("https:")) {
            let config = tributary_security::tls::rest_client_config(&ssl, "schema.registry.")
                .map_err(|e| ConnectError::config(e.to_string()))?;
            Some(Arc::new(config))
        } else {
            None
        };
        let headers = props
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("request.header.")
                    .map(|h| (h.to_string(), v.clone()))
            })
            .collect();
        Ok(RegistryConfig {
            urls,
            auth,
            tls,
            headers,
            connect_timeout: ms(props, "http.connect.timeout.ms", 60_000)?,
            read_timeout: ms(props, "http.read.timeout.ms", 60_000)?,
            max_retries: int_key(props, "max.retries", 3)?.max(0) as u32,
            retry_wait: ms(props, "retries.wait.ms", 1000)?,
            retry_max_wait: ms(props, "retries.max.wait.ms", 20_000)?,
        })
    }
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

impl SerdeConfig {
    /// Reads the serializer's, deserializer's and `AvroData`'s settings; `is_key` picks
    /// `key.subject.name.strategy` or `value.subject.name.strategy`. Errors name the key.
    pub fn from_props(props: &Props, is_key: bool) -> ConnectResult<SerdeConfig> {
        refuse_not_implemented(props)?;
        let strategy_key = if is_key {
            "key.subject.name.strategy"
        } else {
            "value.subject.name.strategy"
        };
        let subject_strategy = match get(props, strategy_key).filter(|v| !v.is_empty()) {
            None => SubjectNameStrategy::Topic,
            Some(class) => SubjectNameStrategy::from_class(class).ok_or_else(|| {
                ConnectError::config(format!(
                    "Invalid value {class} for configuration {strategy_key}: Tributary supports \
                     io.confluent.kafka.serializers.subject.TopicNameStrategy, RecordNameStrategy \
                     and TopicRecordNameStrategy"
                ))
            })?,
        };
        let ttl = int_key(props, "latest.cache.ttl.sec", -1)?;
        let use_schema_id = int_key(props, "use.schema.id", -1)?;
        Ok(SerdeConfig {
            auto_register: bool_key(props, "auto.register.schemas", true)?,
            use_latest_version: bool_key(props, "use.latest.version", false)?,
            latest_compatibility_strict: bool_key(props, "latest.compatibility.strict", true)?,
            latest_cache_ttl: (ttl >= 0).then(|| Duration::from_secs(ttl as u64)),
            use_schema_id: (use_schema_id >= 0).then_some(use_schema_id as i32),
            id_compatibility_strict: bool_key(props, "id.compatibility.strict", true)?,
            normalize: bool_key(props, "normalize.schemas", false)?,
            subject_strategy,
        })
    }
}

/// A documented key: name, type, default, description.
pub type KeyDoc = (&'static str, ConfigType, &'static str, &'static str);

/// A key of Confluent's converters Tributary does not implement, with the one value it
/// accepts (its default; empty: only unset).
pub type Refused = (&'static str, &'static str);

/// A validator accepting only `allowed` values (case-insensitive; blank is unset), so that
/// validation refuses, on the key itself, a value Tributary does not implement (Connect
/// validates converter settings against the converter's `ConfigDef`, without configuring it).
pub fn only(allowed: &[&str]) -> Validator {
    let allowed: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
    Validator::Custom(Arc::new(move |v: &Parsed| {
        let text = v.to_config_string().unwrap_or_default();
        let text = text.trim();
        if text.is_empty() || allowed.iter().any(|a| a.eq_ignore_ascii_case(text)) {
            return Ok(());
        }
        let supported: Vec<&str> = allowed
            .iter()
            .map(String::as_str)
            .filter(|a| !a.is_empty())
            .collect();
        Err(if supported.is_empty() {
            "not implemented by Tributary's schema-registry converters (only unset is supported)"
                .to_string()
        } else {
            format!(
                "not implemented by Tributary's schema-registry converters (supported: {})",
                supported.join(", ")
            )
        })
    }))
}

/// The keys every schema-registry converter reports for validation and
/// `GET /connector-plugins/…/config` (Confluent's documented ones that Tributary implements),
/// plus the format's own `format_keys`; the keys Tributary does not implement (common ones
/// and the format's `format_refused`) are defined with a validator accepting only their
/// default, so validation refuses another value on the key.
pub fn config_def(format_keys: &[KeyDoc], format_refused: &[Refused]) -> ConfigDef {
    let mut def = implemented_keys(format_keys);
    for (key, default) in NOT_IMPLEMENTED.iter().chain(format_refused) {
        if let Some(k) = def.keys.iter_mut().find(|k| k.name == *key) {
            k.validator = Some(only(&[default]));
            continue;
        }
        def = def.define(
            key,
            ConfigType::String,
            Some(Some(default)),
            Some(only(&[default])),
            Importance::Low,
            "Not implemented by Tributary: only the default is accepted.",
        );
    }
    for k in &mut def.keys {
        match k.name.as_str() {
            "basic.auth.credentials.source" => k.validator = Some(only(&["URL", "USER_INFO"])),
            "bearer.auth.credentials.source" => k.validator = Some(only(&["STATIC_TOKEN"])),
            "key.subject.name.strategy" | "value.subject.name.strategy" => {
                k.validator = Some(only(&[
                    "io.confluent.kafka.serializers.subject.TopicNameStrategy",
                    "io.confluent.kafka.serializers.subject.RecordNameStrategy",
                    "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
                    "TopicNameStrategy",
                    "RecordNameStrategy",
                    "TopicRecordNameStrategy",
                ]))
            }
            _ => {}
        }
    }
    def
}

fn implemented_keys(format_keys: &[KeyDoc]) -> ConfigDef {
    const COMMON: &[KeyDoc] = &[
        (
            "basic.auth.credentials.source",
            ConfigType::String,
            "URL",
            "URL or USER_INFO.",
        ),
        (
            "basic.auth.user.info",
            ConfigType::Password,
            "",
            "user:password for USER_INFO.",
        ),
        (
            "bearer.auth.credentials.source",
            ConfigType::String,
            "STATIC_TOKEN",
            "STATIC_TOKEN.",
        ),
        (
            "bearer.auth.token",
            ConfigType::Password,
            "",
            "The bearer token.",
        ),
        (
            "auto.register.schemas",
            ConfigType::Boolean,
            "true",
            "Register new schemas.",
        ),
        (
            "use.latest.version",
            ConfigType::Boolean,
            "false",
            "Write with the subject's latest schema.",
        ),
        (
            "latest.compatibility.strict",
            ConfigType::Boolean,
            "true",
            "Check that the latest schema reads the record's.",
        ),
        (
            "latest.cache.ttl.sec",
            ConfigType::Long,
            "-1",
            "Seconds a latest version is kept (-1: for ever).",
        ),
        (
            "use.schema.id",
            ConfigType::Int,
            "-1",
            "Schema id to write with (-1: none).",
        ),
        (
            "id.compatibility.strict",
            ConfigType::Boolean,
            "true",
            "Check that the id's schema reads the record's.",
        ),
        (
            "normalize.schemas",
            ConfigType::Boolean,
            "false",
            "Normalize schemas when registering.",
        ),
        (
            "key.subject.name.strategy",
            ConfigType::Class,
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
            "Subject of key schemas.",
        ),
        (
            "value.subject.name.strategy",
            ConfigType::Class,
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
            "Subject of value schemas.",
        ),
        (
            "max.schemas.per.subject",
            ConfigType::Int,
            "1000",
            "Schemas cached per subject.",
        ),
        (
            "schemas.cache.config",
            ConfigType::Int,
            "1000",
            "Connect schemas cached.",
        ),
        (
            "http.connect.timeout.ms",
            ConfigType::Int,
            "60000",
            "Connection timeout (ms).",
        ),
        (
            "http.read.timeout.ms",
            ConfigType::Int,
            "60000",
            "Read timeout (ms).",
        ),
        (
            "max.retries",
            ConfigType::Int,
            "3",
            "Retries of a failed request.",
        ),
        (
            "retries.wait.ms",
            ConfigType::Int,
            "1000",
            "First wait before a retry (ms).",
        ),
        (
            "retries.max.wait.ms",
            ConfigType::Int,
            "20000",
            "Longest wait before a retry (ms).",
        ),
    ];
    let def = ConfigDef::new().define(
        "schema.registry.url",
        ConfigType::List,
        None,
        None,
        Importance::High,
        "Comma-separated list of URLs for the schema registry, tried in order.",
    );
    COMMON
        .iter()
        .chain(format_keys)
        .fold(def, |def, (name, ty, default, doc)| {
            def.define(
                name,
                *ty,
                Some(Some(default)),
                None,
                Importance::Medium,
                doc,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(def: &ConfigDef, key: &str, value: &str) -> Vec<String> {
        let props: Props = [
            (
                "schema.registry.url".to_string(),
                "http://r:8081".to_string(),
            ),
            (key.to_string(), value.to_string()),
        ]
        .into_iter()
        .collect();
        def.validate(&props)
            .into_iter()
            .find(|v| v.name == key)
            .map(|v| v.errors)
            .unwrap_or_default()
    }

    #[test]
    fn validation_refuses_unimplemented_values_on_their_keys() {
        let def = config_def(&[], &[("json.fail.invalid.schema", "false")]);
        for (key, bad, good) in [
            ("basic.auth.credentials.source", "SASL_INHERIT", "USER_INFO"),
            (
                "bearer.auth.credentials.source",
                "OAUTHBEARER",
                "STATIC_TOKEN",
            ),
            ("use.latest.with.metadata", "app=x", ""),
            (
                "value.subject.name.strategy",
                "com.example.Mine",
                "io.confluent.kafka.serializers.subject.RecordNameStrategy",
            ),
            ("json.fail.invalid.schema", "true", "false"),
        ] {
            let e = errors(&def, key, bad);
            assert_eq!(e.len(), 1, "{key}: {e:?}");
            assert!(
                e[0].contains(key) && e[0].contains("not implemented"),
                "{e:?}"
            );
            assert!(errors(&def, key, good).is_empty(), "{key}={good}");
        }
    }
}
