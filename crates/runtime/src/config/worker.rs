//! The worker's configuration (Connect's `WorkerConfig`, `StandaloneConfig`,
//! `DistributedConfig`): typed settings parsed from `worker.properties`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_group::{ConnectProtocol, ConnectorTaskId};

use super::override_policy::OverridePolicy;
pub use super::properties::prefixed;
use super::providers::ConfigProviders;
use super::ConfigError;
use super::SettingError;

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
        .define("key.converter.plugin.version", String, Some(None), None, Low, "The version of the key converter plugin (KIP-891): a version, a range such as [1.0,2.0), or latest; the worker refuses to start when the installed converter does not match.")
        .define("value.converter.plugin.version", String, Some(None), None, Low, "The version of the value converter plugin (KIP-891), as key.converter.plugin.version.")
        .define("header.converter.plugin.version", String, Some(None), None, Low, "The version of the header converter plugin (KIP-891), as key.converter.plugin.version.")
        .define("task.shutdown.graceful.timeout.ms", Long, Some(Some("5000")), None, Low, "Total milliseconds the worker gives its tasks to stop cleanly (not a per-task budget).")
        .define("offset.flush.interval.ms", Long, Some(Some("60000")), None, Low, "Interval between source offset commits, in ms.")
        .define("offset.flush.timeout.ms", Long, Some(Some("5000")), None, Low, "Milliseconds an offset commit may wait for outstanding records to be acknowledged; after that the commit is abandoned and retried later.")
        .define("tributary.rest.authorization.file", String, Some(None), None, Medium, "A policy file mapping REST principals (basic-auth users, client certificates) to roles over connector name patterns (Tributary, issue #36; see the README); reloaded on change. Unset: no authorization beyond authentication.")
        .define(crate::config::file_connectors::ALLOWED_PATHS_CONFIG, List, Some(Some("")), None, Medium, "Absolute directories Connect's file connectors (FileStreamSource, FileStreamSink) may read and write under (Tributary, issue #42); required for them under tributary.rest.authorization.file. Empty: anywhere but the worker's own files, without a policy.")
        .define("tributary.source.producer.shared", Boolean, Some(Some("true")), None, Low, "Whether at-least-once source tasks without producer.override.* settings share one producer per worker (Tributary); false gives every source task a producer of its own, as Connect does.")
        .define("tributary.task.stall.threshold.ms", Long, Some(Some("60000")), None, Low, "A task whose poll or put has run this long (ms) is reported stalled in its status and in /metrics (Tributary).")
        .define("metrics.sample.window.ms", Long, Some(Some("30000")), None, Low, "How often task clients report librdkafka statistics to /metrics, in ms (Connect's metrics sample window).")
        .define("plugin.path", List, Some(None), None, Low, "Directories of Java connector plugins (jars, uber-jars, class directories), as for Connect; their connectors run in an in-process JVM started on first use (crate tributary-jvm).")
        .define(
            "plugin.discovery",
            String,
            Some(Some("hybrid_warn")),
            Some(Validator::OneOfIgnoreCase(vec!["only_scan".into(), "hybrid_warn".into(), "hybrid_fail".into(), "service_load".into()])),
            Low,
            "How plugin.path is searched (KIP-898): only_scan, hybrid_warn, hybrid_fail or service_load, applied by Connect's own isolation classes.",
        )
        .define("tributary.jvm.classpath", String, Some(None), None, Low, "Class path of Tributary's Java bridge (the output of scripts/jvm-bridge): required with plugin.path.")
        .define("tributary.jvm.options", String, Some(Some("")), None, Low, "Options of the in-process JVM that hosts Java plugins, split on white space (e.g. -Xmx512m).")
        .define("tributary.plugins.prefer.java", List, Some(Some("")), None, Low, "Connector classes that run as the Java plugin of plugin.path even though Tributary has a built-in class of that name (e.g. org.apache.kafka.connect.file.FileStreamSinkConnector).")
        .define("listeners", List, Some(Some("http://:8083")), None, Low, "REST listeners, protocol://host:port; port 0 picks a free port.")
        .define("admin.listeners", List, Some(None), None, Low, "Listeners of the /admin endpoints (KIP-495); unset: on `listeners`; empty: disabled.")
        .define("rest.advertised.host.name", String, Some(None), None, Low, "Host name other workers and the status topic use for this worker.")
        .define("rest.advertised.port", Int, Some(None), None, Low, "Port advertised to other workers.")
        .define("rest.advertised.listener", String, Some(None), None, Low, "http or https.")
        .define("topic.creation.enable", Boolean, Some(Some("true")), None, Low, "Whether source connectors may create topics (KIP-158).")
        .define("topic.tracking.enable", Boolean, Some(Some("true")), None, Low, "Whether active topics are tracked (KIP-558).")
        .define("topic.tracking.allow.reset", Boolean, Some(Some("true")), None, Low, "Whether PUT /connectors/{c}/topics/reset is allowed.")
        .define("connector.client.config.override.policy", String, Some(Some("All")), None, Medium, "Which client overrides connectors may set.")
        .define("connector.client.config.override.allowlist", List, Some(Some("")), None, Medium, "With the Allowlist policy (KIP-1188), the client configurations connectors may override; empty: none.")
        .define("client.id", String, Some(Some("")), None, Low, "Client id prefix.")
        .define("config.providers", List, Some(Some("")), None, Low, "Names of the config providers resolving ${provider:path:key} references, each with config.providers.<name>.class (Connect's FileConfigProvider, DirectoryConfigProvider or EnvVarConfigProvider) and config.providers.<name>.param.* settings.")
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
            "internal.topics.automatic.creation.enable",
            Boolean,
            Some(Some("true")),
            None,
            Medium,
            "Whether the worker creates its internal topics (offsets, config, status, and connector-specific offsets topics) when they are missing; when false a missing one stops the worker (Connect 4.2).",
        )
        .define("tributary.connectors.dir", String, Some(None), None, Medium, "A directory of connector files (.properties, .json) the group leader keeps the cluster in line with (Tributary, issue #35): connectors created, updated, paused, resumed, stopped as the files say, REST changes to them reverted; unset: off.")
        .define(
            "tributary.connectors.reconcile.interval.ms",
            Long,
            Some(Some("60000")),
            Some(Validator::Range {
                min: Some(100.0),
                max: None,
            }),
            Low,
            "How often the leader compares the cluster with tributary.connectors.dir even when no file changed (reverting REST changes), ms; file changes are noticed within a second.",
        )
        .define("tributary.connectors.prune", Boolean, Some(Some("true")), None, Low, "Whether the leader deletes the connectors it manages from tributary.connectors.dir once their file is gone (connectors created over REST are never deleted).")
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
            Some(Validator::Range {
                min: Some(0.0),
                max: Some(i32::MAX as f64),
            }),
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
            "Exactly-once source support (KIP-618): disabled, preparing (on every worker before enabling) or enabled.",
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

/// A distributed worker's `exactly.once.source.support` (Connect's
/// `DistributedConfig.ExactlyOnceSourceSupport`, KIP-618). The upgrade path of an existing
/// cluster is `disabled` → `preparing` on every worker → `enabled` on every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExactlyOnceSourceSupport {
    /// `disabled` (the default): source tasks commit offsets after their records are
    /// acknowledged (at least once).
    #[default]
    Disabled,
    /// `preparing`: as `disabled` for tasks; the cluster is on its way to `enabled`.
    Preparing,
    /// `enabled`: each source task writes its records and offsets in transactions, and new
    /// task generations are started only after the old ones were fenced.
    Enabled,
}

impl ExactlyOnceSourceSupport {
    /// Reads the value, in any case; `None` for other values.
    pub fn parse(value: &str) -> Option<ExactlyOnceSourceSupport> {
        match value.trim().to_ascii_lowercase().as_str() {
            "disabled" => Some(ExactlyOnceSourceSupport::Disabled),
            "preparing" => Some(ExactlyOnceSourceSupport::Preparing),
            "enabled" => Some(ExactlyOnceSourceSupport::Enabled),
            _ => None,
        }
    }

    /// Whether source tasks run exactly once (`enabled`; Connect's `exactlyOnceSourceEnabled`).
    pub fn enabled(self) -> bool {
        self == ExactlyOnceSourceSupport::Enabled
    }
}

/// A parsed worker configuration: typed values plus the raw map (for client prefixes), with
/// its config providers' references resolved, and the providers themselves (for connector and
/// task configs).
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub mode: WorkerMode,
    /// The worker file, as the file system resolves it (`None` when not a file on disk).
    file: Option<std::path::PathBuf>,
    raw: HashMap<String, String>,
    settings: WorkerSettings,
    providers: Arc<ConfigProviders>,
}

impl WorkerConfig {
    /// Parses and validates a worker configuration. `source` (a file name) prefixes every error,
    /// which names the key: `worker.properties: Missing required configuration "key.converter" …`.
    /// All problems the definition table finds are reported at once, one per line; the typed
    /// [`settings`](Self::settings) are built here too, so a value they cannot use is a startup
    /// error naming the file and key as well.
    ///
    /// First, as Connect's `AbstractConfig` does, the config providers the map declares
    /// (`config.providers`, see [`ConfigProviders::from_worker_config`]) are set up and every
    /// `${provider:path:key}` reference in it is resolved with them; a provider setting that
    /// cannot be used, or a provider that fails, is an error naming the file and the key.
    pub fn parse(
        mode: WorkerMode,
        raw: HashMap<String, String>,
        source: &str,
    ) -> Result<WorkerConfig, ConfigError> {
        Self::parse_with(mode, raw, source, None)
    }

    /// [`Self::parse`], with a config provider class other than Connect's built-in ones
    /// created by `plugin_providers` (a Java provider of `plugin.path`, hosted;
    /// [`ConfigProviders::from_worker_config_with`]). It may block (a JVM starting): call it
    /// off the async runtime.
    pub fn parse_with(
        mode: WorkerMode,
        raw: HashMap<String, String>,
        source: &str,
        plugin_providers: Option<&tributary_api::config_provider::PluginConfigProviderFactory>,
    ) -> Result<WorkerConfig, ConfigError> {
        let providers = ConfigProviders::from_worker_config_with(&raw, plugin_providers)
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        let raw = providers
            .transform(source, &raw)
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        let def = match mode {
            WorkerMode::Standalone => standalone_config_def(),
            WorkerMode::Distributed => distributed_config_def(),
        };
        let mut errors: Vec<String> = def
            .validate(&raw)
            .into_iter()
            .flat_map(|cv| cv.errors)
            .map(|e| format!("{source}: {e}"))
            .collect();
        // Tributary's own namespace has no keys passed on to anything: one the worker does not
        // define is a mistake, refused rather than ignored.
        errors.extend(
            unknown_tributary_keys(&def, raw.keys().map(String::as_str))
                .into_iter()
                .map(|key| {
                    format!(
                        "{source}: Unknown configuration '{key}': not a Tributary worker setting"
                    )
                }),
        );
        if !errors.is_empty() {
            return Err(ConfigError(errors.join("\n")));
        }
        let parsed = def
            .parse(&raw)
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        let settings = WorkerSettings::from_parsed(mode, &parsed)
            .map_err(|e| ConfigError(format!("{source}: {e}")))?;
        Ok(WorkerConfig {
            mode,
            file: std::path::Path::new(source).canonicalize().ok(),
            raw,
            settings,
            providers: Arc::new(providers),
        })
    }

    /// The worker file this configuration was read from, when it is one.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }

    /// Keys of the worker file that look like misspellings of a worker setting, sorted: keys
    /// the worker's definition does not have, outside the families that are passed on or read
    /// elsewhere (see [`misspelled_keys`]), each with the closest key it has. Connect only
    /// logs unused keys (`AbstractConfig.logUnused`); the startup warns with the suggestion.
    pub fn misspelled_keys(&self) -> Vec<(String, String)> {
        let def = match self.mode {
            WorkerMode::Standalone => standalone_config_def(),
            WorkerMode::Distributed => distributed_config_def(),
        };
        let known: Vec<&str> = def.keys.iter().map(|k| k.name.as_str()).collect();
        misspelled_keys(self.raw.keys().map(String::as_str), &known)
    }

    /// Keys of the worker file that nothing reads, sorted: keys the worker's definition does not
    /// have, outside the families that are passed on or read elsewhere (see
    /// [`PASSED_ON_PREFIXES`]). Startup logs them as Connect's `AbstractConfig.logUnused` does.
    /// (Unknown `tributary.*` keys never get here: [`WorkerConfig::parse`] refuses them.)
    pub fn unused_keys(&self) -> Vec<String> {
        let def = match self.mode {
            WorkerMode::Standalone => standalone_config_def(),
            WorkerMode::Distributed => distributed_config_def(),
        };
        let mut out: Vec<String> = self
            .raw
            .keys()
            .filter(|k| {
                def.key(k).is_none() && !PASSED_ON_PREFIXES.iter().any(|p| k.starts_with(p))
            })
            .cloned()
            .collect();
        out.sort();
        out
    }

    /// The config providers this worker declares (empty when none), which resolve connector and
    /// task configs when their instances start.
    pub fn providers(&self) -> &ConfigProviders {
        &self.providers
    }

    /// The typed settings, parsed once by [`WorkerConfig::parse`], with Connect's defaults for
    /// the keys left unset.
    pub fn settings(&self) -> &WorkerSettings {
        &self.settings
    }

    /// The value of any key as written, config provider references resolved.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.raw.get(key).map(String::as_str)
    }

    /// The raw map.
    pub fn raw_map(&self) -> &HashMap<String, String> {
        &self.raw
    }

    /// `bootstrap.servers` joined as librdkafka wants it.
    pub fn bootstrap_servers(&self) -> String {
        self.settings.bootstrap_servers.join(",")
    }

    /// Every setting under `prefix` (e.g. `producer.`), with the prefix removed.
    pub fn with_prefix(&self, prefix: &str) -> HashMap<String, String> {
        prefixed(&self.raw, prefix)
    }
}

/// The worker settings the runtime uses, typed and checked once by [`WorkerConfig::parse`]
/// (see [`WorkerConfig::settings`]).
///
/// Connect's defaults are declared once, in the definition tables ([`worker_config_def`],
/// [`standalone_config_def`], [`distributed_config_def`]); these fields are read from the
/// values those tables parsed, defaults included, and repeat none of them. A field is named
/// after its key (dots as underscores; durations drop the `.ms`), and durations are
/// [`Duration`]s.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// `bootstrap.servers` (LIST; default `localhost:9092`).
    pub bootstrap_servers: Vec<String>,
    /// `key.converter` (CLASS; required).
    pub key_converter: String,
    /// `value.converter` (CLASS; required).
    pub value_converter: String,
    /// `header.converter` (CLASS; default
    /// `org.apache.kafka.connect.storage.SimpleHeaderConverter`).
    pub header_converter: String,
    /// `task.shutdown.graceful.timeout.ms` (LONG, ms; default 5000 ms): the total time the
    /// worker gives its tasks to stop cleanly. A negative value counts as 0.
    pub task_shutdown_graceful_timeout: Duration,
    /// `offset.flush.interval.ms` (LONG, ms; default 60000 ms): interval between source offset
    /// commits. Values below 1 ms count as 1 ms.
    pub offset_flush_interval: Duration,
    /// `offset.flush.timeout.ms` (LONG, ms; default 5000 ms): how long an offset commit waits
    /// for outstanding records. A negative value counts as 0.
    pub offset_flush_timeout: Duration,
    /// `metrics.sample.window.ms` (LONG, ms; default 30000 ms): Connect's metric sample
    /// window; here, how often task producers and consumers emit librdkafka statistics
    /// (`statistics.interval.ms`) for `/metrics`. Values below 1 ms count as 1 ms.
    pub metrics_sample_window: Duration,
    /// `tributary.task.stall.threshold.ms` (LONG, ms; default 60000 ms; Tributary): a task
    /// whose `poll` or `put` has run this long is reported stalled. Values below 1 ms count as
    /// 1 ms.
    pub task_stall_threshold: Duration,
    /// `tributary.source.producer.shared` (BOOLEAN; default true; Tributary, issue #34):
    /// at-least-once source tasks without `producer.override.*` settings send through one
    /// producer per worker (`worker::source_task::shared_producer`); false gives each its own.
    pub source_producer_shared: bool,
    /// `listeners` (LIST; default `http://:8083`), parsed; never empty.
    pub listeners: Vec<Listener>,
    /// `admin.listeners` (LIST; default null, KIP-495): `None` serves `/admin` on `listeners`;
    /// an empty list disables it; otherwise `/admin` is served only there.
    pub admin_listeners: Option<Vec<Listener>>,
    /// `rest.advertised.host.name` (STRING; default null); `None` when unset or empty.
    pub rest_advertised_host_name: Option<String>,
    /// `rest.advertised.port` (INT; default null); must be a port number (0..=65535).
    pub rest_advertised_port: Option<u16>,
    /// `topic.creation.enable` (BOOLEAN; default true).
    pub topic_creation_enable: bool,
    /// `topic.tracking.enable` (BOOLEAN; default true).
    pub topic_tracking_enable: bool,
    /// `topic.tracking.allow.reset` (BOOLEAN; default true).
    pub topic_tracking_allow_reset: bool,
    /// `connector.client.config.override.policy` (STRING; default `All`).
    pub connector_client_config_override_policy: OverridePolicy,
    /// The settings only this kind of worker has.
    pub mode: ModeSettings,
}

/// The settings only one kind of worker has.
#[derive(Debug, Clone)]
pub enum ModeSettings {
    /// A standalone worker's (`StandaloneConfig`).
    Standalone(StandaloneSettings),
    /// A distributed worker's (`DistributedConfig`), boxed: it is much the larger.
    Distributed(Box<DistributedSettings>),
}

/// The settings of a standalone worker (`StandaloneConfig`).
#[derive(Debug, Clone)]
pub struct StandaloneSettings {
    /// `offset.storage.file.filename` (STRING; required).
    pub offset_storage_file_filename: PathBuf,
}

/// The settings of a distributed worker (`DistributedConfig`). Partition counts and
/// replication factors of -1 mean the broker's default.
#[derive(Debug, Clone)]
pub struct DistributedSettings {
    /// `exactly.once.source.support` (STRING; default `disabled`; KIP-618).
    pub exactly_once_source_support: ExactlyOnceSourceSupport,
    /// `group.id` (STRING; required).
    pub group_id: String,
    /// `config.storage.topic` (STRING; required).
    pub config_storage_topic: String,
    /// `config.storage.replication.factor` (SHORT; default 3).
    pub config_storage_replication_factor: i16,
    /// `offset.storage.topic` (STRING; required).
    pub offset_storage_topic: String,
    /// `offset.storage.partitions` (INT; default 25).
    pub offset_storage_partitions: i32,
    /// `offset.storage.replication.factor` (SHORT; default 3).
    pub offset_storage_replication_factor: i16,
    /// `status.storage.topic` (STRING; required).
    pub status_storage_topic: String,
    /// `status.storage.partitions` (INT; default 5).
    pub status_storage_partitions: i32,
    /// `status.storage.replication.factor` (SHORT; default 3).
    pub status_storage_replication_factor: i16,
    /// `session.timeout.ms` (INT, ms; default 10000 ms); must not be negative.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (INT, ms; default 3000 ms); must not be negative.
    pub heartbeat_interval: Duration,
    /// `rebalance.timeout.ms` (INT, ms; default 60000 ms); must not be negative.
    pub rebalance_timeout: Duration,
    /// `worker.sync.timeout.ms` (INT, ms; default 3000 ms); must not be negative.
    pub worker_sync_timeout: Duration,
    /// `worker.unsync.backoff.ms` (INT, ms; default 300000 ms); must not be negative.
    pub worker_unsync_backoff: Duration,
    /// `scheduled.rebalance.max.delay.ms` (INT, ms; default 300000 ms); must not be negative.
    pub scheduled_rebalance_max_delay: Duration,
    /// `tributary.connectors.dir` (STRING; default unset; Tributary, issue #35): the directory
    /// of connector files the leader reconciles the cluster to; `None` when unset or empty.
    pub connectors_dir: Option<std::path::PathBuf>,
    /// `tributary.connectors.reconcile.interval.ms` (LONG, ms; default 60000, at least 100):
    /// the period of the leader's reconciliation when no file changed.
    pub connectors_reconcile_interval: Duration,
    /// `tributary.connectors.prune` (BOOLEAN; default true): whether managed connectors whose
    /// file is gone are deleted.
    pub connectors_prune: bool,
    /// `internal.topics.automatic.creation.enable` (BOOLEAN; default true; Connect 4.2): whether
    /// the worker creates missing internal topics, connector-specific offsets topics included.
    pub internal_topics_automatic_creation: bool,
    /// `connect.protocol` (STRING; default `sessioned`).
    pub connect_protocol: ConnectProtocol,
    /// `inter.worker.key.ttl.ms` (INT, ms; default 3600000 ms); must not be negative.
    pub inter_worker_key_ttl: Duration,
    /// `inter.worker.verification.algorithms` (LIST; default `HmacSHA256`).
    pub inter_worker_verification_algorithms: Vec<String>,
    /// `static.connectors` (LIST; default null, Tributary only): `None` when unset,
    /// `Some(empty)` when set to the empty string.
    pub static_connectors: Option<Vec<String>>,
    /// `static.tasks` (LIST; default null, Tributary only), as task ids `<connector>-<n>`:
    /// `None` when unset, `Some(empty)` when set to the empty string.
    pub static_tasks: Option<Vec<ConnectorTaskId>>,
}

impl WorkerSettings {
    /// The standalone settings, when this is a standalone worker.
    pub fn standalone(&self) -> Option<&StandaloneSettings> {
        match &self.mode {
            ModeSettings::Standalone(s) => Some(s),
            ModeSettings::Distributed(_) => None,
        }
    }

    /// `exactly.once.source.support` (`disabled` for a standalone worker, which has no such
    /// setting in Connect either).
    pub fn exactly_once_source_support(&self) -> ExactlyOnceSourceSupport {
        self.distributed()
            .map(|d| d.exactly_once_source_support)
            .unwrap_or_default()
    }

    /// The distributed settings, when this is a distributed worker.
    pub fn distributed(&self) -> Option<&DistributedSettings> {
        match &self.mode {
            ModeSettings::Distributed(d) => Some(d.as_ref()),
            ModeSettings::Standalone(_) => None,
        }
    }

    /// Builds the settings from the values `ConfigDef::parse` returned for `mode`'s table
    /// (every defined key present, defaults applied). Errors name the key and the value.
    fn from_parsed(
        mode: WorkerMode,
        parsed: &HashMap<String, Parsed>,
    ) -> Result<WorkerSettings, SettingError> {
        let v = Values(parsed);
        let listeners = v.list("listeners")?;
        if listeners.is_empty() {
            return Err(SettingError::Rule("Invalid value for configuration listeners: the list of listeners must not be empty".into()));
        }
        let listeners = listeners
            .iter()
            .map(|l| Listener::parse(l))
            .collect::<Result<Vec<_>, _>>()?;
        let admin_listeners = v
            .opt_list("admin.listeners")?
            .map(|l| {
                l.iter()
                    .map(|l| {
                        Listener::parse(l).map_err(|e| match e {
                            SettingError::Invalid { value, reason, .. } => SettingError::Invalid {
                                key: "admin.listeners".into(),
                                value,
                                reason,
                            },
                            other => other,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let mode = match mode {
            WorkerMode::Standalone => ModeSettings::Standalone(StandaloneSettings {
                offset_storage_file_filename: PathBuf::from(
                    v.string("offset.storage.file.filename")?,
                ),
            }),
            WorkerMode::Distributed => {
                ModeSettings::Distributed(Box::new(DistributedSettings::from_values(&v)?))
            }
        };
        let policy = v.string("connector.client.config.override.policy")?;
        let allowlist = v.list("connector.client.config.override.allowlist")?;
        let connector_client_config_override_policy = OverridePolicy::parse(&policy, &allowlist)?;
        let rest_advertised_port = match v.opt_long("rest.advertised.port")? {
            None => None,
            Some(p) => Some(u16::try_from(p).map_err(|_| {
                SettingError::invalid(
                    "rest.advertised.port",
                    p,
                    "Value must be no less than 0 and no greater than 65535",
                )
            })?),
        };
        Ok(WorkerSettings {
            bootstrap_servers: v.list("bootstrap.servers")?,
            key_converter: v.string("key.converter")?,
            value_converter: v.string("value.converter")?,
            header_converter: v.string("header.converter")?,
            task_shutdown_graceful_timeout: v
                .millis_at_least("task.shutdown.graceful.timeout.ms", 0)?,
            offset_flush_interval: v.millis_at_least("offset.flush.interval.ms", 1)?,
            offset_flush_timeout: v.millis_at_least("offset.flush.timeout.ms", 0)?,
            metrics_sample_window: v.millis_at_least("metrics.sample.window.ms", 1)?,
            task_stall_threshold: v.millis_at_least("tributary.task.stall.threshold.ms", 1)?,
            source_producer_shared: v.boolean("tributary.source.producer.shared")?,
            listeners,
            admin_listeners,
            rest_advertised_host_name: v
                .opt_string("rest.advertised.host.name")?
                .filter(|h| !h.is_empty()),
            rest_advertised_port,
            topic_creation_enable: v.boolean("topic.creation.enable")?,
            topic_tracking_enable: v.boolean("topic.tracking.enable")?,
            topic_tracking_allow_reset: v.boolean("topic.tracking.allow.reset")?,
            connector_client_config_override_policy,
            mode,
        })
    }
}

impl DistributedSettings {
    /// Reads the distributed keys.
    fn from_values(v: &Values) -> Result<DistributedSettings, SettingError> {
        let static_connectors = v.opt_list("static.connectors")?;
        let static_tasks = match v.opt_list("static.tasks")? {
            None => None,
            Some(list) => Some(
                list.iter()
                    .map(|t| {
                        t.parse::<ConnectorTaskId>().map_err(|_| {
                            SettingError::invalid(
                                "static.tasks",
                                t,
                                "a task id is <connector>-<task number>, e.g. my-connector-0",
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        // The definition's validator already limits the value to Connect's three.
        let eos = v.string("exactly.once.source.support")?;
        let exactly_once_source_support =
            ExactlyOnceSourceSupport::parse(&eos).ok_or_else(|| {
                SettingError::invalid(
                    "exactly.once.source.support",
                    &eos,
                    "String must be one of (case insensitive): DISABLED, ENABLED, PREPARING",
                )
            })?;
        let protocol = v.string("connect.protocol")?;
        let connect_protocol = ConnectProtocol::from_config(&protocol)
            .map_err(|e| SettingError::invalid("connect.protocol", &protocol, e.to_string()))?;
        Ok(DistributedSettings {
            exactly_once_source_support,
            group_id: v.string("group.id")?,
            config_storage_topic: v.string("config.storage.topic")?,
            config_storage_replication_factor: v.short("config.storage.replication.factor")?,
            offset_storage_topic: v.string("offset.storage.topic")?,
            offset_storage_partitions: v.int("offset.storage.partitions")?,
            offset_storage_replication_factor: v.short("offset.storage.replication.factor")?,
            status_storage_topic: v.string("status.storage.topic")?,
            status_storage_partitions: v.int("status.storage.partitions")?,
            status_storage_replication_factor: v.short("status.storage.replication.factor")?,
            session_timeout: v.millis("session.timeout.ms")?,
            heartbeat_interval: v.millis("heartbeat.interval.ms")?,
            rebalance_timeout: v.millis("rebalance.timeout.ms")?,
            worker_sync_timeout: v.millis("worker.sync.timeout.ms")?,
            worker_unsync_backoff: v.millis("worker.unsync.backoff.ms")?,
            scheduled_rebalance_max_delay: v.millis("scheduled.rebalance.max.delay.ms")?,
            connectors_dir: v
                .opt_string("tributary.connectors.dir")?
                .filter(|d| !d.trim().is_empty())
                .map(std::path::PathBuf::from),
            connectors_reconcile_interval: v
                .millis("tributary.connectors.reconcile.interval.ms")?,
            connectors_prune: v.boolean("tributary.connectors.prune")?,
            internal_topics_automatic_creation: v
                .boolean("internal.topics.automatic.creation.enable")?,
            connect_protocol,
            inter_worker_key_ttl: v.millis("inter.worker.key.ttl.ms")?,
            inter_worker_verification_algorithms: v.list("inter.worker.verification.algorithms")?,
            static_connectors,
            static_tasks,
        })
    }
}

/// Typed reads of the values `ConfigDef::parse` returned: every key of the table is there,
/// with its default when unset, so a key missing or of another type here is a mistake in this
/// file, reported as an error naming the key rather than a panic.
struct Values<'a>(&'a HashMap<String, Parsed>);

impl Values<'_> {
    fn get(&self, key: &str) -> Result<&Parsed, SettingError> {
        self.0
            .get(key)
            .ok_or_else(|| SettingError::Undefined(key.to_string()))
    }

    fn mistyped(key: &str, wanted: &'static str) -> SettingError {
        SettingError::Mistyped {
            key: key.to_string(),
            wanted,
        }
    }

    fn opt_string(&self, key: &str) -> Result<Option<String>, SettingError> {
        match self.get(key)? {
            Parsed::String(s) => Ok(Some(s.clone())),
            Parsed::Null => Ok(None),
            _ => Err(Self::mistyped(key, "STRING")),
        }
    }

    /// A string that has no null default.
    fn string(&self, key: &str) -> Result<String, SettingError> {
        self.opt_string(key)?
            .ok_or_else(|| SettingError::Missing(key.to_string()))
    }

    fn opt_long(&self, key: &str) -> Result<Option<i64>, SettingError> {
        match self.get(key)? {
            Parsed::Int(x) => Ok(Some(i64::from(*x))),
            Parsed::Short(x) => Ok(Some(i64::from(*x))),
            Parsed::Long(x) => Ok(Some(*x)),
            Parsed::Null => Ok(None),
            _ => Err(Self::mistyped(key, "INT, SHORT or LONG")),
        }
    }

    fn long(&self, key: &str) -> Result<i64, SettingError> {
        self.opt_long(key)?
            .ok_or_else(|| SettingError::Missing(key.to_string()))
    }

    fn int(&self, key: &str) -> Result<i32, SettingError> {
        i32::try_from(self.long(key)?).map_err(|_| Self::mistyped(key, "INT"))
    }

    fn short(&self, key: &str) -> Result<i16, SettingError> {
        i16::try_from(self.long(key)?).map_err(|_| Self::mistyped(key, "SHORT"))
    }

    fn boolean(&self, key: &str) -> Result<bool, SettingError> {
        match self.get(key)? {
            Parsed::Boolean(b) => Ok(*b),
            _ => Err(Self::mistyped(key, "BOOLEAN")),
        }
    }

    fn opt_list(&self, key: &str) -> Result<Option<Vec<String>>, SettingError> {
        match self.get(key)? {
            Parsed::List(l) => Ok(Some(l.clone())),
            Parsed::Null => Ok(None),
            _ => Err(Self::mistyped(key, "LIST")),
        }
    }

    /// A list that has no null default.
    fn list(&self, key: &str) -> Result<Vec<String>, SettingError> {
        self.opt_list(key)?
            .ok_or_else(|| SettingError::Missing(key.to_string()))
    }

    /// A duration in ms that must not be negative.
    fn millis(&self, key: &str) -> Result<Duration, SettingError> {
        let ms = self.long(key)?;
        u64::try_from(ms)
            .map(Duration::from_millis)
            .map_err(|_| SettingError::invalid(key, ms, "Value must be at least 0"))
    }

    /// A duration in ms where values below `min_ms` count as `min_ms`.
    fn millis_at_least(&self, key: &str, min_ms: u64) -> Result<Duration, SettingError> {
        let ms = self.long(key)?;
        Ok(Duration::from_millis(
            u64::try_from(ms).unwrap_or(0).max(min_ms),
        ))
    }
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
    pub fn parse(s: &str) -> Result<Listener, SettingError> {
        let bad = |why: &str| SettingError::invalid("listeners", s, why);
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

    /// Issue #30, case 5: an unknown key in Tributary's namespace is refused, naming the file
    /// and the key, in both modes; every `tributary.*` worker key the code reads is accepted;
    /// other unknown keys are only listed, for the startup's log.
    #[test]
    fn unknown_tributary_keys_are_refused_and_other_unknown_keys_listed() {
        let standalone = [
            ("key.converter", "a"),
            ("value.converter", "b"),
            ("offset.storage.file.filename", "/tmp/x"),
        ];
        let distributed = [
            ("key.converter", "a"),
            ("value.converter", "b"),
            ("group.id", "g"),
            ("config.storage.topic", "c"),
            ("offset.storage.topic", "o"),
            ("status.storage.topic", "s"),
        ];
        let ours = [
            ("tributary.task.stall.threshold.ms", "1000"),
            ("tributary.jvm.classpath", "/x.jar"),
            ("tributary.jvm.options", "-Xmx64m"),
            ("tributary.plugins.prefer.java", "a.B"),
        ];
        for (mode, base) in [
            (WorkerMode::Standalone, &standalone[..]),
            (WorkerMode::Distributed, &distributed[..]),
        ] {
            let mut pairs = base.to_vec();
            pairs.extend(ours);
            pairs.extend([
                ("no.such.setting", "1"),
                ("producer.linger.ms", "5"),
                ("ssl.truststore.type", "PEM"),
            ]);
            let cfg = WorkerConfig::parse(mode, map(&pairs), "w.properties").unwrap();
            assert_eq!(cfg.unused_keys(), ["no.such.setting"], "{mode:?}");

            pairs.push(("tributary.rest.authorisation.file", "/x"));
            pairs.push(("tributary.jvm.option", "-Xmx64m"));
            let err = WorkerConfig::parse(mode, map(&pairs), "w.properties")
                .unwrap_err()
                .0;
            assert_eq!(
                err,
                "w.properties: Unknown configuration 'tributary.jvm.option': not a Tributary worker setting\n\
                 w.properties: Unknown configuration 'tributary.rest.authorisation.file': not a Tributary worker setting",
                "{mode:?}"
            );
        }
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
        assert_eq!(
            cfg.settings().offset_flush_interval,
            Duration::from_millis(1000)
        );
        assert_eq!(cfg.bootstrap_servers(), "a:1,b:2");
        assert_eq!(cfg.with_prefix("producer.")["linger.ms"], "7");
        assert_eq!(
            cfg.settings().listeners[0],
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
        let claims = |cfg: WorkerConfig| {
            let d = cfg.settings().distributed().cloned().unwrap();
            (d.static_connectors, d.static_tasks)
        };
        assert_eq!(claims(with(&[]).unwrap()), (None, None));
        let (c, t) = claims(
            with(&[
                ("static.connectors", ""),
                ("static.tasks", "my-conn-0, other-12"),
            ])
            .unwrap(),
        );
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

    /// The smallest valid configuration of each kind of worker.
    fn minimal(mode: WorkerMode) -> HashMap<String, String> {
        let mut m = map(&[("key.converter", "K"), ("value.converter", "V")]);
        match mode {
            WorkerMode::Standalone => m.extend(map(&[("offset.storage.file.filename", "/tmp/o")])),
            WorkerMode::Distributed => m.extend(map(&[
                ("group.id", "g"),
                ("config.storage.topic", "c"),
                ("offset.storage.topic", "o"),
                ("status.storage.topic", "s"),
            ])),
        }
        m
    }

    fn settings_with(mode: WorkerMode, extra: &[(&str, &str)]) -> Result<WorkerSettings, String> {
        let mut m = minimal(mode);
        m.extend(map(extra));
        WorkerConfig::parse(mode, m, "w.properties")
            .map(|c| c.settings().clone())
            .map_err(|e| e.0)
    }

    /// The defaults are Apache Kafka Connect's (`WorkerConfig`, `StandaloneConfig`,
    /// `DistributedConfig`), written out here on purpose as the reference to check against.
    #[test]
    fn typed_settings_default_to_connects_values() {
        let ms = Duration::from_millis;
        for mode in [WorkerMode::Standalone, WorkerMode::Distributed] {
            let s = settings_with(mode, &[]).unwrap();
            assert_eq!(s.bootstrap_servers, vec!["localhost:9092"]);
            assert_eq!(s.key_converter, "K");
            assert_eq!(s.value_converter, "V");
            assert_eq!(
                s.header_converter,
                "org.apache.kafka.connect.storage.SimpleHeaderConverter"
            );
            assert_eq!(s.task_shutdown_graceful_timeout, ms(5_000));
            assert_eq!(s.offset_flush_interval, ms(60_000));
            assert_eq!(s.offset_flush_timeout, ms(5_000));
            assert_eq!(
                s.listeners,
                vec![Listener {
                    protocol: "http".into(),
                    host: "".into(),
                    port: 8083
                }]
            );
            assert_eq!(s.rest_advertised_host_name, None);
            assert_eq!(s.rest_advertised_port, None);
            assert!(s.topic_creation_enable);
            assert!(s.topic_tracking_enable);
            assert!(s.topic_tracking_allow_reset);
            assert_eq!(
                s.connector_client_config_override_policy,
                OverridePolicy::All
            );
        }
        let s = settings_with(WorkerMode::Standalone, &[]).unwrap();
        assert!(s.distributed().is_none());
        assert_eq!(
            s.standalone().unwrap().offset_storage_file_filename,
            PathBuf::from("/tmp/o")
        );

        let s = settings_with(WorkerMode::Distributed, &[]).unwrap();
        assert!(s.standalone().is_none());
        let d = s.distributed().unwrap();
        assert_eq!(d.group_id, "g");
        assert_eq!(d.config_storage_topic, "c");
        assert_eq!(d.offset_storage_topic, "o");
        assert_eq!(d.status_storage_topic, "s");
        assert_eq!(d.config_storage_replication_factor, 3);
        assert_eq!(d.offset_storage_partitions, 25);
        assert_eq!(d.offset_storage_replication_factor, 3);
        assert_eq!(d.status_storage_partitions, 5);
        assert_eq!(d.status_storage_replication_factor, 3);
        assert_eq!(d.session_timeout, ms(10_000));
        assert_eq!(d.heartbeat_interval, ms(3_000));
        assert_eq!(d.rebalance_timeout, ms(60_000));
        assert_eq!(d.worker_sync_timeout, ms(3_000));
        assert_eq!(d.worker_unsync_backoff, ms(300_000));
        assert_eq!(d.scheduled_rebalance_max_delay, ms(300_000));
        assert_eq!(d.connect_protocol, ConnectProtocol::Sessioned);
        assert_eq!(d.inter_worker_key_ttl, ms(3_600_000));
        assert_eq!(d.inter_worker_verification_algorithms, vec!["HmacSHA256"]);
        assert_eq!(d.static_connectors, None);
        assert_eq!(d.static_tasks, None);
    }

    #[test]
    fn typed_settings_take_set_values() {
        let ms = Duration::from_millis;
        let s = settings_with(
            WorkerMode::Distributed,
            &[
                ("bootstrap.servers", "a:1,b:2"),
                ("header.converter", "H"),
                ("task.shutdown.graceful.timeout.ms", "1234"),
                ("offset.flush.interval.ms", "10"),
                ("offset.flush.timeout.ms", "20"),
                ("listeners", "http://127.0.0.1:0"),
                ("rest.advertised.host.name", "me"),
                ("rest.advertised.port", "9999"),
                ("topic.creation.enable", "false"),
                ("topic.tracking.enable", "false"),
                ("topic.tracking.allow.reset", "false"),
                ("connector.client.config.override.policy", "None"),
                ("config.storage.replication.factor", "1"),
                ("offset.storage.partitions", "7"),
                ("offset.storage.replication.factor", "-1"),
                ("status.storage.partitions", "-1"),
                ("status.storage.replication.factor", "2"),
                ("session.timeout.ms", "6000"),
                ("heartbeat.interval.ms", "1000"),
                ("rebalance.timeout.ms", "30000"),
                ("worker.sync.timeout.ms", "500"),
                ("worker.unsync.backoff.ms", "0"),
                ("scheduled.rebalance.max.delay.ms", "0"),
                ("connect.protocol", "COMPATIBLE"),
                ("inter.worker.key.ttl.ms", "60000"),
                (
                    "inter.worker.verification.algorithms",
                    "HmacSHA256, HmacSHA512",
                ),
                ("static.connectors", ""),
                ("static.tasks", "c-0"),
            ],
        )
        .unwrap();
        assert_eq!(s.bootstrap_servers, vec!["a:1", "b:2"]);
        assert_eq!(s.header_converter, "H");
        assert_eq!(s.task_shutdown_graceful_timeout, ms(1234));
        assert_eq!(s.offset_flush_interval, ms(10));
        assert_eq!(s.offset_flush_timeout, ms(20));
        assert_eq!(s.listeners[0].host, "127.0.0.1");
        assert_eq!(s.rest_advertised_host_name.as_deref(), Some("me"));
        assert_eq!(s.rest_advertised_port, Some(9999));
        assert!(!s.topic_creation_enable);
        assert!(!s.topic_tracking_enable);
        assert!(!s.topic_tracking_allow_reset);
        assert_eq!(
            s.connector_client_config_override_policy,
            OverridePolicy::None
        );
        let allow = settings_with(
            WorkerMode::Distributed,
            &[
                ("connector.client.config.override.policy", "Allowlist"),
                (
                    "connector.client.config.override.allowlist",
                    "linger.ms, sasl.jaas.config",
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            allow.connector_client_config_override_policy,
            OverridePolicy::Allowlist(vec!["linger.ms".into(), "sasl.jaas.config".into()])
        );
        let d = s.distributed().unwrap();
        assert_eq!(d.config_storage_replication_factor, 1);
        assert_eq!(d.offset_storage_partitions, 7);
        assert_eq!(d.offset_storage_replication_factor, -1);
        assert_eq!(d.status_storage_partitions, -1);
        assert_eq!(d.status_storage_replication_factor, 2);
        assert_eq!(d.session_timeout, ms(6_000));
        assert_eq!(d.heartbeat_interval, ms(1_000));
        assert_eq!(d.rebalance_timeout, ms(30_000));
        assert_eq!(d.worker_sync_timeout, ms(500));
        assert_eq!(d.worker_unsync_backoff, ms(0));
        assert_eq!(d.scheduled_rebalance_max_delay, ms(0));
        assert_eq!(d.connect_protocol, ConnectProtocol::Compatible);
        assert_eq!(d.inter_worker_key_ttl, ms(60_000));
        assert_eq!(
            d.inter_worker_verification_algorithms,
            vec!["HmacSHA256", "HmacSHA512"]
        );
        assert_eq!(d.static_connectors, Some(vec![]));
        assert_eq!(
            d.static_tasks.as_ref().unwrap()[0],
            "c-0".parse::<ConnectorTaskId>().unwrap()
        );

        // An empty advertised host name is no host name; the clamped durations keep their
        // floor (negative timeouts are 0, the flush interval at least 1 ms).
        let s = settings_with(
            WorkerMode::Standalone,
            &[
                ("rest.advertised.host.name", ""),
                ("task.shutdown.graceful.timeout.ms", "-5"),
                ("offset.flush.timeout.ms", "-5"),
                ("offset.flush.interval.ms", "0"),
            ],
        )
        .unwrap();
        assert_eq!(s.rest_advertised_host_name, None);
        assert_eq!(s.task_shutdown_graceful_timeout, ms(0));
        assert_eq!(s.offset_flush_timeout, ms(0));
        assert_eq!(s.offset_flush_interval, ms(1));
    }

    /// A value the typed settings cannot use stops startup with the file, key and value.
    #[test]
    fn typed_settings_refuse_bad_values_naming_file_and_key() {
        let durations = [
            "session.timeout.ms",
            "heartbeat.interval.ms",
            "rebalance.timeout.ms",
            "worker.sync.timeout.ms",
            "worker.unsync.backoff.ms",
            "scheduled.rebalance.max.delay.ms",
            "inter.worker.key.ttl.ms",
        ];
        for key in durations {
            for bad in ["soon", "-1"] {
                let err = settings_with(WorkerMode::Distributed, &[(key, bad)]).unwrap_err();
                assert!(
                    err.starts_with("w.properties: Invalid value ")
                        && err.contains(bad)
                        && err.contains(&format!("for configuration {key}:")),
                    "{key}={bad}: {err}"
                );
            }
        }
        for key in [
            "task.shutdown.graceful.timeout.ms",
            "offset.flush.interval.ms",
            "offset.flush.timeout.ms",
        ] {
            for mode in [WorkerMode::Standalone, WorkerMode::Distributed] {
                let err = settings_with(mode, &[(key, "5s")]).unwrap_err();
                assert_eq!(
                    err,
                    format!("w.properties: Invalid value 5s for configuration {key}: Not a number of type LONG")
                );
            }
        }
        for (key, bad) in [
            ("offset.storage.partitions", "0"),
            ("status.storage.replication.factor", "three"),
            ("topic.tracking.enable", "yes"),
            ("connect.protocol", "lazy"),
        ] {
            let err = settings_with(WorkerMode::Distributed, &[(key, bad)]).unwrap_err();
            assert!(
                err.starts_with("w.properties: Invalid value ")
                    && err.contains(&format!("{bad} for configuration {key}:")),
                "{key}={bad}: {err}"
            );
        }
        let err = settings_with(WorkerMode::Standalone, &[("rest.advertised.port", "70000")])
            .unwrap_err();
        assert_eq!(err, "w.properties: Invalid value 70000 for configuration rest.advertised.port: Value must be no less than 0 and no greater than 65535");
        let err = settings_with(
            WorkerMode::Standalone,
            &[("connector.client.config.override.policy", "Some")],
        )
        .unwrap_err();
        assert!(
            err.starts_with("w.properties: Invalid value Some for configuration connector.client.config.override.policy"),
            "{err}"
        );
    }

    /// References in the worker file are resolved with the providers the same file declares,
    /// before anything is parsed (Connect's `AbstractConfig`); failures name the file and key.
    #[test]
    fn worker_file_references_resolve_with_its_own_providers() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("worker-secrets.properties");
        std::fs::write(&secrets, "interval=1234\nhost=127.0.0.1\n").unwrap();
        let providers = [
            ("config.providers", "file,dir"),
            (
                "config.providers.file.class",
                "org.apache.kafka.common.config.provider.FileConfigProvider",
            ),
            (
                "config.providers.dir.class",
                "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            ),
        ];
        let reference = |key: &str| format!("${{file:{}:{key}}}", secrets.display());
        let interval = reference("interval");
        let listeners = format!("http://{}:0", reference("host"));
        let mut extra = providers.to_vec();
        extra.push(("offset.flush.interval.ms", &interval));
        extra.push(("listeners", &listeners));
        extra.push(("producer.client.secret", "${file:no-path-given}"));
        let s = settings_with(WorkerMode::Standalone, &extra).unwrap();
        assert_eq!(s.offset_flush_interval, Duration::from_millis(1234));
        assert_eq!(s.listeners[0].host, "127.0.0.1");
        let mut m = minimal(WorkerMode::Standalone);
        m.extend(map(&extra));
        let cfg = WorkerConfig::parse(WorkerMode::Standalone, m, "w.properties").unwrap();
        assert_eq!(cfg.raw("offset.flush.interval.ms"), Some("1234"));
        // No path: the file provider has nothing, the reference stays.
        assert_eq!(
            cfg.raw("producer.client.secret"),
            Some("${file:no-path-given}")
        );
        assert!(cfg.providers().get("dir").is_some());

        // An unreadable file stops startup, naming the file and the key.
        let mut extra = providers.to_vec();
        extra.push((
            "offset.flush.interval.ms",
            "${file:/no/such/file.properties:interval}",
        ));
        let err = settings_with(WorkerMode::Standalone, &extra).unwrap_err();
        assert!(
            err.starts_with("w.properties: cannot resolve ${file:/no/such/file.properties:interval} in configuration offset.flush.interval.ms: config provider 'file' (FileConfigProvider) failed: Could not read properties from file /no/such/file.properties"),
            "{err}"
        );
        // So does a path outside allowed.paths (KIP-993).
        let allowed = dir.path().join("allowed");
        std::fs::create_dir(&allowed).unwrap();
        let allowed = allowed.display().to_string();
        let mut extra = providers.to_vec();
        extra.push(("config.providers.file.param.allowed.paths", &allowed));
        extra.push(("offset.flush.interval.ms", &interval));
        let err = settings_with(WorkerMode::Standalone, &extra).unwrap_err();
        assert!(
            err.contains("w.properties: ")
                && err.contains("in configuration offset.flush.interval.ms")
                && err.contains("is not allowed to be accessed"),
            "{err}"
        );
        // A class Tributary cannot run names its key.
        let err = settings_with(
            WorkerMode::Distributed,
            &[
                ("config.providers", "vault"),
                (
                    "config.providers.vault.class",
                    "com.example.VaultConfigProvider",
                ),
            ],
        )
        .unwrap_err();
        assert!(
            err.starts_with("w.properties: Invalid value com.example.VaultConfigProvider for configuration config.providers.vault.class: "),
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

/// Prefixes of worker keys read outside the definition table: the clients' settings (with or
/// without a client prefix), REST listener TLS, config providers, converter settings, and
/// Tributary's own families (which are checked where they are read).
const PASSED_ON_PREFIXES: &[&str] = &[
    "producer.",
    "consumer.",
    "admin.",
    "ssl.",
    "sasl.",
    "security.",
    "listeners.",
    "config.providers",
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "internal.",
    "metric.reporters",
];

/// Tributary's own namespace (`tributary.*`): every worker key in it is in the definition.
const TRIBUTARY_PREFIX: &str = "tributary.";

/// The keys of `keys` in Tributary's namespace that `def` does not define, sorted. Pure.
fn unknown_tributary_keys<'a>(
    def: &ConfigDef,
    keys: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let mut out: Vec<&str> = keys
        .into_iter()
        .filter(|k| k.starts_with(TRIBUTARY_PREFIX) && def.key(k).is_none())
        .collect();
    out.sort();
    out
}

/// `(key, closest known key)` for every key of `keys` that is not in `known`, does not start
/// with a [`PASSED_ON_PREFIXES`] entry, and is close to a known key (Jaro-Winkler similarity of
/// at least 0.9, or at most 2 edits): a misspelling rather than a client setting passed on.
/// Sorted by key. Pure.
pub fn misspelled_keys<'a>(
    keys: impl IntoIterator<Item = &'a str>,
    known: &[&str],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = keys
        .into_iter()
        .filter(|k| !known.contains(k) && !PASSED_ON_PREFIXES.iter().any(|p| k.starts_with(p)))
        .filter_map(|k| {
            let (best, score) = known
                .iter()
                .map(|c| (*c, strsim::jaro_winkler(k, c)))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            (score >= 0.9 || strsim::damerau_levenshtein(k, best) <= 2)
                .then(|| (k.to_string(), best.to_string()))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod misspelling_tests {
    use super::*;

    #[test]
    fn a_misspelled_key_gets_the_closest_known_key() {
        let def = distributed_config_def();
        let known: Vec<&str> = def.keys.iter().map(|k| k.name.as_str()).collect();
        let found = misspelled_keys(
            [
                "offset.flush.intervl.ms",
                "group.id",
                "bootstrap.server",
                "producer.linger.ms",
                "ssl.truststore.location",
                "completely.unrelated",
            ],
            &known,
        );
        assert_eq!(
            found,
            vec![
                (
                    "bootstrap.server".to_string(),
                    "bootstrap.servers".to_string()
                ),
                (
                    "offset.flush.intervl.ms".to_string(),
                    "offset.flush.interval.ms".to_string()
                ),
            ]
        );
    }
}
