//! The worker's configuration (Connect's `WorkerConfig`, `StandaloneConfig`,
//! `DistributedConfig`): typed settings parsed from `worker.properties`.

use std::collections::HashMap;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};

use super::ConfigError;

/// Which kind of worker a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerMode {
    Standalone,
    Distributed,
}

/// The keys common to every worker (`WorkerConfig`), with Connect's defaults.
pub fn worker_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    ConfigDef::new()
        .define("bootstrap.servers", List, Some(Some("localhost:9092")), None, High, "Kafka brokers to connect to, host:port list.")
        .define("key.converter", Class, None, None, High, "Converter class for record keys.")
        .define("value.converter", Class, None, None, High, "Converter class for record values.")
        .define(
            "header.converter",
            Class,
            Some(Some("org.apache.kafka.connect.storage.SimpleHeaderConverter")),
            None,
            Low,
            "HeaderConverter class for record headers.",
        )
        .define("task.shutdown.graceful.timeout.ms", Long, Some(Some("5000")), None, Low, "Total milliseconds the worker gives its tasks to stop cleanly (not a per-task budget).")
        .define("offset.flush.interval.ms", Long, Some(Some("60000")), None, Low, "Interval between source offset commits, in ms.")
        .define("offset.flush.timeout.ms", Long, Some(Some("5000")), None, Low, "Milliseconds an offset commit may wait for outstanding records to be acknowledged; after that the commit is abandoned and retried later.")
        .define("plugin.path", List, Some(None), None, Low, "Accepted for compatibility; Tributary's plugins are built in.")
        .define("listeners", List, Some(Some("http://:8083")), None, Low, "REST listeners, protocol://host:port; port 0 picks a free port.")
        .define("rest.advertised.host.name", String, Some(None), None, Low, "Host name other workers and the status topic use for this worker.")
        .define("rest.advertised.port", Int, Some(None), None, Low, "Port advertised to other workers.")
        .define("rest.advertised.listener", String, Some(None), None, Low, "http or https.")
        .define("topic.creation.enable", Boolean, Some(Some("true")), None, Low, "Whether source connectors may create topics (KIP-158).")
        .define("topic.tracking.enable", Boolean, Some(Some("true")), None, Low, "Whether active topics are tracked (KIP-558).")
        .define("topic.tracking.allow.reset", Boolean, Some(Some("true")), None, Low, "Whether PUT /connectors/{c}/topics/reset is allowed.")
        .define("connector.client.config.override.policy", String, Some(Some("All")), None, Medium, "Which client overrides connectors may set.")
        .define("client.id", String, Some(Some("")), None, Low, "Client id prefix.")
}

/// Keys only standalone workers have (`StandaloneConfig`).
pub fn standalone_config_def() -> ConfigDef {
    worker_config_def().define(
        "offset.storage.file.filename",
        ConfigType::String,
        None,
        None,
        Importance::High,
        "File in which source offsets are stored (Java-serialized map, as connect-standalone writes).",
    )
}

/// Keys of distributed workers (`DistributedConfig`).
pub fn distributed_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    let rf = || {
        Some(Validator::Custom(std::sync::Arc::new(
            |v: &Parsed| match v {
                Parsed::Short(x) if *x == -1 || *x >= 1 => Ok(()),
                Parsed::Int(x) if *x == -1 || *x >= 1 => Ok(()),
                Parsed::Null => Ok(()),
                _ => Err("Value must be -1 or at least 1".to_string()),
            },
        )))
    };
    worker_config_def()
        .define(
            "group.id",
            String,
            None,
            None,
            High,
            "Identifies the Connect cluster: workers sharing this value form one group.",
        )
        .define(
            "config.storage.topic",
            String,
            None,
            None,
            High,
            "Config topic (1 partition, compacted).",
        )
        .define(
            "config.storage.replication.factor",
            Short,
            Some(Some("3")),
            rf(),
            Low,
            "Replication factor of the config topic.",
        )
        .define(
            "offset.storage.topic",
            String,
            None,
            None,
            High,
            "Offsets topic (compacted).",
        )
        .define(
            "offset.storage.partitions",
            Int,
            Some(Some("25")),
            rf(),
            Low,
            "Partitions of the offsets topic.",
        )
        .define(
            "offset.storage.replication.factor",
            Short,
            Some(Some("3")),
            rf(),
            Low,
            "Replication factor of the offsets topic.",
        )
        .define(
            "status.storage.topic",
            String,
            None,
            None,
            High,
            "Status topic (compacted).",
        )
        .define(
            "status.storage.partitions",
            Int,
            Some(Some("5")),
            rf(),
            Low,
            "Partitions of the status topic.",
        )
        .define(
            "status.storage.replication.factor",
            Short,
            Some(Some("3")),
            rf(),
            Low,
            "Replication factor of the status topic.",
        )
        .define(
            "session.timeout.ms",
            Int,
            Some(Some("10000")),
            None,
            High,
            "Group session timeout, ms.",
        )
        .define(
            "heartbeat.interval.ms",
            Int,
            Some(Some("3000")),
            None,
            High,
            "Heartbeat interval, ms.",
        )
        .define(
            "rebalance.timeout.ms",
            Int,
            Some(Some("60000")),
            None,
            High,
            "Rebalance timeout, ms.",
        )
        .define(
            "worker.sync.timeout.ms",
            Int,
            Some(Some("3000")),
            None,
            Medium,
            "Time to catch up on the config topic before leaving the group, ms.",
        )
        .define(
            "worker.unsync.backoff.ms",
            Int,
            Some(Some("300000")),
            None,
            Medium,
            "Backoff before rejoining after failing to catch up, ms.",
        )
        .define(
            "scheduled.rebalance.max.delay.ms",
            Int,
            Some(Some("300000")),
            Some(Validator::Range {
                min: Some(0.0),
                max: None,
            }),
            Medium,
            "How long lost jobs wait for their worker, ms (KIP-415).",
        )
        .define(
            "connect.protocol",
            String,
            Some(Some("sessioned")),
            Some(Validator::OneOfIgnoreCase(vec![
                "eager".into(),
                "compatible".into(),
                "sessioned".into(),
                "static".into(),
            ])),
            Low,
            "Group protocol: eager, compatible, sessioned (KIP-415/507) or static.",
        )
        .define(
            "inter.worker.key.generation.algorithm",
            String,
            Some(Some("HmacSHA256")),
            None,
            Low,
            "Session key algorithm (KIP-507).",
        )
        .define(
            "inter.worker.key.size",
            Int,
            Some(None),
            None,
            Low,
            "Session key size, bits.",
        )
        .define(
            "inter.worker.key.ttl.ms",
            Int,
            Some(Some("3600000")),
            None,
            Low,
            "Session key lifetime, ms.",
        )
        .define(
            "inter.worker.signature.algorithm",
            String,
            Some(Some("HmacSHA256")),
            None,
            Low,
            "Request signature algorithm.",
        )
        .define(
            "inter.worker.verification.algorithms",
            List,
            Some(Some("HmacSHA256")),
            None,
            Low,
            "Accepted request signature algorithms.",
        )
        .define(
            "exactly.once.source.support",
            String,
            Some(Some("disabled")),
            Some(Validator::OneOfIgnoreCase(vec![
                "disabled".into(),
                "enabled".into(),
                "preparing".into(),
            ])),
            High,
            "Exactly-once source support (KIP-618). Tributary implements only disabled and refuses the others.",
        )
        .define(
            "static.connectors",
            List,
            Some(None),
            None,
            Low,
            "Connectors this worker claims under connect.protocol=static.",
        )
        .define(
            "static.tasks",
            List,
            Some(None),
            None,
            Low,
            "Tasks this worker claims under connect.protocol=static.",
        )
}

/// A parsed worker configuration: typed values plus the raw map (for client prefixes).
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub mode: WorkerMode,
    raw: HashMap<String, String>,
    parsed: HashMap<String, Parsed>,
}

impl WorkerConfig {
    /// Parses and validates a worker configuration. `source` (a file name) prefixes every error,
    /// which names the key: `worker.properties: Missing required configuration "key.converter" …`.
    /// All problems are reported at once, one per line.
    pub fn parse(
        mode: WorkerMode,
        raw: HashMap<String, String>,
        source: &str,
    ) -> Result<WorkerConfig, ConfigError> {
        let def = match mode {
            WorkerMode::Standalone => standalone_config_def(),
            WorkerMode::Distributed => distributed_config_def(),
        };
        let errors: Vec<String> = def
            .validate(&raw)
            .into_iter()
            .flat_map(|cv| cv.errors)
            .map(|e| format!("{source}: {e}"))
            .collect();
        if !errors.is_empty() {
            return Err(ConfigError(errors.join("\n")));
        }
        let parsed = def
            .parse(&raw)
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        let cfg = WorkerConfig { mode, raw, parsed };
        cfg.listeners()
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        if mode == WorkerMode::Distributed {
            cfg.static_claims()
                .map_err(|e| ConfigError(format!("{source}: {e}")))?;
            // Not implemented yet: refused, so nobody believes they have it.
            if let Some(eos) = cfg.string("exactly.once.source.support") {
                if !eos.eq_ignore_ascii_case("disabled") {
                    return Err(ConfigError(format!(
                        "{source}: Invalid value {eos} for configuration exactly.once.source.support: Tributary does not support exactly-once source (KIP-618) yet; set it to disabled or run Apache Kafka Connect workers"
                    )));
                }
            }
        }
        if let Some(policy) = cfg.string("connector.client.config.override.policy") {
            super::unsupported::OverridePolicy::parse(&policy)
                .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        }
        Ok(cfg)
    }

    /// The raw value of any key.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.raw.get(key).map(String::as_str)
    }

    /// The raw map.
    pub fn raw_map(&self) -> &HashMap<String, String> {
        &self.raw
    }

    /// A string setting (STRING/CLASS/PASSWORD), `None` when null.
    pub fn string(&self, key: &str) -> Option<String> {
        match self.parsed.get(key) {
            Some(Parsed::String(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// An integer setting (INT/SHORT/LONG) widened to i64.
    pub fn long(&self, key: &str) -> Option<i64> {
        match self.parsed.get(key)? {
            Parsed::Int(v) => Some(*v as i64),
            Parsed::Short(v) => Some(*v as i64),
            Parsed::Long(v) => Some(*v),
            _ => None,
        }
    }

    /// A boolean setting.
    pub fn boolean(&self, key: &str) -> Option<bool> {
        match self.parsed.get(key)? {
            Parsed::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// A list setting; `None` when null (unset with a null default).
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.parsed.get(key)? {
            Parsed::List(l) => Some(l.clone()),
            _ => None,
        }
    }

    /// `bootstrap.servers` joined as librdkafka wants it.
    pub fn bootstrap_servers(&self) -> String {
        self.list("bootstrap.servers").unwrap_or_default().join(",")
    }

    /// Every setting under `prefix` (e.g. `producer.`), with the prefix removed.
    pub fn with_prefix(&self, prefix: &str) -> HashMap<String, String> {
        prefixed(&self.raw, prefix)
    }

    /// The parsed `listeners`: (protocol, host, port); an empty host binds every interface.
    /// Errors: an empty list, a blank entry, an unknown protocol or a bad port.
    pub fn listeners(&self) -> Result<Vec<Listener>, String> {
        let list = self.list("listeners").unwrap_or_default();
        if list.is_empty() {
            return Err("Invalid value for configuration listeners: the list of listeners must not be empty".into());
        }
        list.iter().map(|l| Listener::parse(l)).collect()
    }

    /// The static claims (`static.connectors`, `static.tasks`) for `connect.protocol=static`:
    /// `None` when unset, `Some(empty)` when set to the empty string. Task ids have Connect's
    /// form `<connector>-<n>` (the last dash separates the number); a malformed one is an error
    /// naming the key and the value.
    pub fn static_claims(
        &self,
    ) -> Result<
        (
            Option<Vec<String>>,
            Option<Vec<tributary_group::ConnectorTaskId>>,
        ),
        String,
    > {
        let connectors = self.list("static.connectors");
        let tasks = match self.list("static.tasks") {
            None => None,
            Some(list) => Some(
                list.iter()
                    .map(|t| {
                        t.parse::<tributary_group::ConnectorTaskId>().map_err(|_| {
                            format!("Invalid value {t} for configuration static.tasks: a task id is <connector>-<task number>, e.g. my-connector-0")
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok((connectors, tasks))
    }

    /// `offset.flush.interval.ms`.
    pub fn offset_flush_interval_ms(&self) -> u64 {
        self.long("offset.flush.interval.ms")
            .unwrap_or(60_000)
            .max(1) as u64
    }

    /// `offset.flush.timeout.ms`.
    pub fn offset_flush_timeout_ms(&self) -> u64 {
        self.long("offset.flush.timeout.ms").unwrap_or(5_000).max(0) as u64
    }

    /// `task.shutdown.graceful.timeout.ms`.
    pub fn task_shutdown_timeout_ms(&self) -> u64 {
        self.long("task.shutdown.graceful.timeout.ms")
            .unwrap_or(5_000)
            .max(0) as u64
    }
}

/// Every entry of `map` under `prefix`, with the prefix removed.
pub fn prefixed(map: &HashMap<String, String>, prefix: &str) -> HashMap<String, String> {
    map.iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|s| (s.to_string(), v.clone())))
        .collect()
}

/// One REST listener (`listeners` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub protocol: String,
    pub host: String,
    pub port: u16,
}

impl Listener {
    /// Parses `protocol://host:port` (`http://:8083`, `http://127.0.0.1:0`, `http://[::1]:8083`).
    pub fn parse(s: &str) -> Result<Listener, String> {
        let bad = |why: &str| format!("Invalid value {s} for configuration listeners: {why}");
        let s = s.trim();
        if s.is_empty() {
            return Err(bad("blank listener"));
        }
        let (protocol, rest) = s
            .split_once("://")
            .ok_or_else(|| bad("expected protocol://host:port"))?;
        let protocol = protocol.to_ascii_lowercase();
        if protocol != "http" && protocol != "https" {
            return Err(bad("the protocol must be http or https"));
        }
        if protocol == "https" {
            return Err(bad("https listeners are not supported yet"));
        }
        let rest = rest.trim_end_matches('/');
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("missing port"))?;
        let port: u16 = port.parse().map_err(|_| bad("invalid port"))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(Listener {
            protocol,
            host,
            port,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn missing_required_keys_are_all_named_with_the_file() {
        let err = WorkerConfig::parse(WorkerMode::Standalone, map(&[]), "w.properties")
            .unwrap_err()
            .0;
        assert!(
            err.contains("w.properties: Missing required configuration \"key.converter\""),
            "{err}"
        );
        assert!(err.contains("\"value.converter\""), "{err}");
        assert!(err.contains("\"offset.storage.file.filename\""), "{err}");
        let err = WorkerConfig::parse(
            WorkerMode::Distributed,
            map(&[("key.converter", "a"), ("value.converter", "b")]),
            "d.properties",
        )
        .unwrap_err()
        .0;
        for k in [
            "group.id",
            "config.storage.topic",
            "offset.storage.topic",
            "status.storage.topic",
        ] {
            assert!(err.contains(&format!("\"{k}\"")), "{err}");
        }
    }

    #[test]
    fn typed_values_and_prefixes() {
        let cfg = WorkerConfig::parse(
            WorkerMode::Standalone,
            map(&[
                (
                    "key.converter",
                    "org.apache.kafka.connect.storage.StringConverter",
                ),
                (
                    "value.converter",
                    "org.apache.kafka.connect.storage.StringConverter",
                ),
                ("offset.storage.file.filename", "/tmp/x"),
                ("offset.flush.interval.ms", "1000"),
                ("producer.linger.ms", "7"),
                ("bootstrap.servers", "a:1, b:2"),
                ("listeners", "http://127.0.0.1:0"),
            ]),
            "w",
        )
        .unwrap();
        assert_eq!(cfg.offset_flush_interval_ms(), 1000);
        assert_eq!(cfg.bootstrap_servers(), "a:1,b:2");
        assert_eq!(cfg.with_prefix("producer.")["linger.ms"], "7");
        assert_eq!(
            cfg.listeners().unwrap()[0],
            Listener {
                protocol: "http".into(),
                host: "127.0.0.1".into(),
                port: 0
            }
        );
    }

    #[test]
    fn bad_values_name_key_and_value() {
        let err = WorkerConfig::parse(
            WorkerMode::Standalone,
            map(&[
                ("key.converter", "x"),
                ("value.converter", "y"),
                ("offset.storage.file.filename", "/tmp/x"),
                ("offset.flush.interval.ms", "soon"),
            ]),
            "w.properties",
        )
        .unwrap_err()
        .0;
        assert_eq!(err, "w.properties: Invalid value soon for configuration offset.flush.interval.ms: Not a number of type LONG");
        let err = WorkerConfig::parse(
            WorkerMode::Standalone,
            map(&[
                ("key.converter", "x"),
                ("value.converter", "y"),
                ("offset.storage.file.filename", "/tmp/x"),
                ("listeners", "ftp://:1"),
            ]),
            "w.properties",
        )
        .unwrap_err()
        .0;
        assert!(
            err.contains("listeners") && err.contains("ftp://:1"),
            "{err}"
        );
    }

    #[test]
    fn static_claims_distinguish_unset_from_empty_and_name_bad_task_ids() {
        let base = [
            ("key.converter", "a"),
            ("value.converter", "b"),
            ("group.id", "g"),
            ("config.storage.topic", "c"),
            ("offset.storage.topic", "o"),
            ("status.storage.topic", "s"),
        ];
        let with = |extra: &[(&str, &str)]| {
            let mut m = map(&base);
            m.extend(map(extra));
            WorkerConfig::parse(WorkerMode::Distributed, m, "w.properties")
        };
        assert_eq!(with(&[]).unwrap().static_claims().unwrap(), (None, None));
        let (c, t) = with(&[
            ("static.connectors", ""),
            ("static.tasks", "my-conn-0, other-12"),
        ])
        .unwrap()
        .static_claims()
        .unwrap();
        assert_eq!(c, Some(vec![]));
        assert_eq!(
            t.unwrap().iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            vec!["my-conn-0", "other-12"]
        );
        let err = with(&[("static.tasks", "my-conn-x")]).unwrap_err().0;
        assert!(
            err.contains("w.properties")
                && err.contains("static.tasks")
                && err.contains("my-conn-x"),
            "{err}"
        );
    }

    #[test]
    fn listener_forms() {
        assert_eq!(Listener::parse("http://:8083").unwrap().host, "");
        assert_eq!(Listener::parse("HTTP://[::1]:80").unwrap().host, "::1");
        assert!(Listener::parse("http://host").is_err());
    }
}
