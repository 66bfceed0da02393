//! The native `PostgresConnector`'s settings: Debezium 3.6.1's keys and defaults
//! (`PostgresConnectorConfig`), and the refusal, naming the key, of every setting this version
//! does not implement, so that nothing is silently mapped differently from Debezium.

use regex::Regex;
use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::{ConnectError, ConnectResult, Props};

/// Debezium's version whose events this connector writes (`source.version`).
pub const DEBEZIUM_VERSION: &str = "3.6.1.Final";

/// What a refusal tells the user to do instead.
pub const USE_HOSTED: &str = "use Debezium's own connector (its plugin on plugin.path, selected with connector.plugin.version=3.6.1.Final)";

/// The `snapshot.mode`s Debezium knows, and whether this version implements them.
const SNAPSHOT_MODES: [(&str, bool); 9] = [
    ("initial", true),
    ("initial_only", true),
    ("no_data", true),
    ("never", true),
    ("always", true),
    ("when_needed", true),
    ("configuration_based", false),
    ("custom", false),
    ("recovery", false),
];

/// `decimal.handling.mode` (Debezium's `DecimalHandlingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalMode {
    /// `precise`: Connect's `Decimal`, or Debezium's `VariableScaleDecimal` without a scale.
    Precise,
    /// `double`: FLOAT64.
    Double,
    /// `string`: the plain decimal string.
    String,
}

/// `binary.handling.mode` (Debezium's `BinaryHandlingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryMode {
    /// `bytes` (the default): BYTES.
    Bytes,
    /// `base64`: a string, standard alphabet with padding.
    Base64,
    /// `base64-url-safe`: a string, URL-safe alphabet with padding.
    Base64UrlSafe,
    /// `hex`: a string of lowercase hexadecimal digits.
    Hex,
}

/// `time.precision.mode` (Debezium's `TemporalPrecisionMode`), of the modes this version
/// implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeMode {
    /// `adaptive` (the default): `io.debezium.time` types by the column's precision.
    Adaptive,
    /// `adaptive_time_microseconds`: as `adaptive`, every `time` as `MicroTime`.
    AdaptiveTimeMicroseconds,
    /// `microseconds`: every `time` as `MicroTime`, every `timestamp` as `MicroTimestamp`.
    Microseconds,
    /// `connect`: Connect's `Date`, `Time` and `Timestamp` (milliseconds).
    Connect,
    /// `nanoseconds`: every `time` as `NanoTime`, every `timestamp` as `NanoTimestamp`.
    Nanoseconds,
    /// `isostring`: `date`, `time` and `timestamp` as ISO 8601 strings at UTC (`IsoDate`,
    /// `IsoTime`, `IsoTimestamp`).
    IsoString,
}

/// `interval.handling.mode` (Debezium's `IntervalHandlingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalMode {
    /// `numeric` (the default): `io.debezium.time.MicroDuration`, µs (a month being 365.25 / 12
    /// days).
    Numeric,
    /// `string`: `io.debezium.time.Interval`, ISO 8601 `PnYnMnDTnHnMnS`.
    String,
}

/// The settings that decide how column values are represented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeSettings {
    pub decimals: DecimalMode,
    pub binary: BinaryMode,
    pub time: TimeMode,
    pub intervals: IntervalMode,
    /// `money.fraction.digits` (default 2): a `money` value's scale under
    /// `decimal.handling.mode=precise`.
    pub money_fraction_digits: i32,
    /// `hstore.handling.mode` (default `json`): an `hstore` as a JSON object's text
    /// (`io.debezium.data.Json`), or (`map`) as a map of strings to optional strings.
    pub hstore_as_map: bool,
}

impl Default for TypeSettings {
    fn default() -> Self {
        TypeSettings {
            decimals: DecimalMode::Precise,
            binary: BinaryMode::Bytes,
            time: TimeMode::Adaptive,
            intervals: IntervalMode::Numeric,
            money_fraction_digits: 2,
            hstore_as_map: false,
        }
    }
}

/// `lsn.flush.mode` (Debezium's `LsnFlushMode`): who confirms positions to the server (the
/// slot's `confirmed_flush_lsn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LsnFlushMode {
    /// `connector` (the default): the end of the last transaction whose offset is committed.
    Connector,
    /// `manual` (or `flush.lsn.source=false`): never; the slot is managed outside.
    Manual,
    /// `connector_and_driver`: as `connector`, and the position the server's keepalive gives
    /// once the confirmed position reached the start of the last message received (a
    /// commit's: its transaction's end, which a committed offset's `lsn_commit` reaches, e.g.
    /// a heartbeat's), as pgjdbc's keepalive flush does: a slot whose WAL holds nothing
    /// captured moves on, and a server shutting down (which waits until its walsenders'
    /// clients confirmed all they were sent) is not held up.
    ConnectorAndDriver,
}

/// `plugin.name` (Debezium's `LogicalDecoder`): the logical decoding output plugin the slot
/// is created with and the stream is read through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalDecoder {
    /// `decoderbufs` (Debezium's default): Debezium's own plugin (`postgres-decoderbufs`,
    /// installed in the server), protobuf row messages, no publication.
    DecoderBufs,
    /// `pgoutput`: PostgreSQL's built-in plugin, through a publication.
    PgOutput,
}

impl LogicalDecoder {
    /// The plugin's name as `pg_create_logical_replication_slot` takes it.
    pub fn name(self) -> &'static str {
        match self {
            LogicalDecoder::DecoderBufs => "decoderbufs",
            LogicalDecoder::PgOutput => "pgoutput",
        }
    }
}

/// `publication.autocreate.mode` (Debezium's `AutoCreateMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationAutocreate {
    /// `all_tables` (the default): `CREATE PUBLICATION … FOR ALL TABLES`.
    AllTables,
    /// `filtered`: a publication of the captured tables.
    Filtered,
    /// `disabled`: the publication must exist.
    Disabled,
    /// `no_tables`: a publication of no table (tables are added to it by hand).
    NoTables,
}

/// `snapshot.mode`, of the modes this version implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMode {
    /// `initial` (Debezium's default): a snapshot when no completed one is in the offsets,
    /// then streaming from the slot, the snapshot taken in the slot's exported snapshot when
    /// the slot is new.
    Initial,
    /// `initial_only`: a snapshot, no streaming.
    InitialOnly,
    /// `no_data` (or its former name `never`): streaming only, from the slot's position.
    NoData,
    /// `always`: a snapshot at every start, then streaming.
    Always,
    /// `when_needed`: as `initial`, and a snapshot again when the committed offset's position
    /// is no longer in the slot (`WhenNeededSnapshotter`).
    WhenNeeded,
}

/// A password: its `Debug` shows `[hidden]`, so no formatted config carries it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[hidden]")
    }
}

/// The connector's settings, parsed. Built by [`PostgresConfig::parse`].
#[derive(Debug, Clone)]
pub struct PostgresConfig {
    pub hostname: String,
    pub port: u16,
    pub user: String,
    /// `database.password`; its `Debug` hides it.
    pub password: Option<Password>,
    pub dbname: String,
    /// `database.sslmode`, `database.sslrootcert`.
    pub ssl: crate::tls::SslSettings,
    /// `topic.prefix`: the first part of every topic name and the source partition's `server`.
    pub topic_prefix: String,
    /// `topic.delimiter` (default `.`).
    pub topic_delimiter: String,
    /// `decimal.handling.mode`, `binary.handling.mode`, `time.precision.mode`,
    /// `interval.handling.mode`.
    pub types: TypeSettings,
    /// `snapshot.fetch.size` (default 10,240 rows a round trip).
    pub fetch_size: usize,
    /// `max.batch.size` (default 2,048): records handed to the task at once at most.
    pub max_batch_size: usize,
    /// `max.queue.size` (default 8,192): records read ahead of the task at most (whole
    /// batches: [`PostgresConfig::queued_batches`]).
    pub max_queue_size: usize,
    pub tables: TableFilter,
    /// `column.include.list` / `column.exclude.list`.
    pub columns: ColumnFilter,
    /// `retriable.restart.connector.wait.ms` (default 10,000 ms): how long the task waits
    /// after a broken connection before it starts again from its committed offset.
    pub retry_wait: std::time::Duration,
    /// `status.update.interval.ms` (default 10,000 ms): how often the replication connection
    /// reports its positions to the server (a standby status update).
    pub status_update_interval: std::time::Duration,
    /// `connection.validation.timeout.ms` (default 60,000 ms): how long the connector's
    /// `validate` waits for its check of the database.
    pub validation_timeout: std::time::Duration,
    /// `database.tcpKeepAlive` (default true): TCP keepalives on both connections.
    pub tcp_keepalive: bool,
    /// `heartbeat.interval.ms` (default 0: no heartbeats).
    pub heartbeat_interval: std::time::Duration,
    /// `heartbeat.action.query`: run on each heartbeat.
    pub heartbeat_action_query: Option<String>,
    /// `topic.heartbeat.prefix` (default `__debezium-heartbeat`).
    pub heartbeat_prefix: String,
    /// `topic.heartbeat.name`: the heartbeat topic, overriding prefix and `topic.prefix`.
    pub heartbeat_topic_name: Option<String>,
    pub snapshot_mode: SnapshotMode,
    /// `slot.name` (default `debezium`).
    pub slot_name: String,
    /// `slot.drop.on.stop` (default false): the slot is dropped when the task stops.
    pub slot_drop_on_stop: bool,
    /// `plugin.name` (default `decoderbufs`).
    pub plugin: LogicalDecoder,
    /// `publication.name` (default `dbz_publication`; `pgoutput` only).
    pub publication_name: String,
    pub publication_autocreate: PublicationAutocreate,
    /// `tombstones.on.delete` (default true).
    pub tombstones_on_delete: bool,
    /// `lsn.flush.mode` (else `flush.lsn.source`).
    pub lsn_flush: LsnFlushMode,
    /// `provide.transaction.metadata` (default false): BEGIN and END records on
    /// [`PostgresConfig::transaction_topic`], each change event's `transaction` block filled.
    pub provide_transaction_metadata: bool,
    /// `topic.transaction` (default `transaction`): the transaction topic's last part.
    pub transaction_topic_suffix: String,
    /// `skipped.operations`: the `op` codes (`c`, `u`, `d`, `t`) whose events are not written
    /// (default `t`: no truncate events; `none`: every event).
    pub skipped_operations: Vec<char>,
    /// Whether `skipped.operations` was set (Debezium then restricts the publication's
    /// `publish` operations).
    pub skipped_operations_set: bool,
    /// `message.prefix.include.list` / `message.prefix.exclude.list`: the logical decoding
    /// messages captured, by prefix (Debezium's `LogicalDecodingMessageFilter`).
    pub messages: PrefixFilter,
}

/// Regular expressions matched case-insensitively against a whole logical decoding message
/// prefix: the include list when given, else the exclude list, else every prefix.
#[derive(Debug, Clone, Default)]
pub struct PrefixFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
}

impl PrefixFilter {
    /// Whether messages of `prefix` are captured.
    pub fn includes(&self, prefix: &str) -> bool {
        if !self.include.is_empty() {
            return self.include.iter().any(|r| r.is_match(prefix));
        }
        !self.exclude.iter().any(|r| r.is_match(prefix))
    }
}

/// `schema.include.list` / `schema.exclude.list` / `table.include.list` /
/// `table.exclude.list`: regular expressions matched case-insensitively against the whole
/// `schema` or `schema.table` name, as Debezium's `RelationalTableFilters` do.
#[derive(Debug, Clone, Default)]
pub struct TableFilter {
    schema_include: Vec<Regex>,
    schema_exclude: Vec<Regex>,
    table_include: Vec<Regex>,
    table_exclude: Vec<Regex>,
}

impl TableFilter {
    /// The order Debezium snapshots `tables` (captured `(schema, table)` pairs) in
    /// (`RelationalSnapshotChangeEventSource.addSignalingCollectionAndSort`): pattern by pattern
    /// of `table.include.list`, each pattern's tables sorted by `schema.table` as Java compares
    /// strings (UTF-16 code units), a table once; all sorted without an include list.
    pub fn snapshot_order(&self, tables: Vec<(String, String)>) -> Vec<(String, String)> {
        let id = |t: &(String, String)| format!("{}.{}", t.0, t.1);
        let java_cmp = |a: &String, b: &String| a.encode_utf16().cmp(b.encode_utf16());
        let mut sorted = tables;
        sorted.sort_by(|a, b| java_cmp(&id(a), &id(b)));
        if self.table_include.is_empty() {
            return sorted;
        }
        let mut ordered: Vec<(String, String)> = Vec::with_capacity(sorted.len());
        for pattern in &self.table_include {
            for t in &sorted {
                if pattern.is_match(&id(t)) && !ordered.contains(t) {
                    ordered.push(t.clone());
                }
            }
        }
        ordered
    }

    /// Whether table `schema.table` is captured.
    pub fn includes(&self, schema: &str, table: &str) -> bool {
        let full = format!("{schema}.{table}");
        let any = |list: &[Regex], s: &str| list.iter().any(|r| r.is_match(s));
        if !self.schema_include.is_empty() && !any(&self.schema_include, schema) {
            return false;
        }
        if any(&self.schema_exclude, schema) {
            return false;
        }
        if !self.table_include.is_empty() {
            return any(&self.table_include, &full);
        }
        !any(&self.table_exclude, &full)
    }
}

/// `column.include.list` / `column.exclude.list`: regular expressions matched
/// case-insensitively against a whole `schema.table.column` name (Debezium's
/// `ColumnNameFilterFactory` for PostgreSQL); an excluded column is left out of the value, not
/// of the key.
#[derive(Debug, Clone, Default)]
pub struct ColumnFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
}

impl ColumnFilter {
    /// Whether column `schema.table.column` is in the value.
    pub fn includes(&self, schema: &str, table: &str, column: &str) -> bool {
        let full = format!("{schema}.{table}.{column}");
        if !self.include.is_empty() {
            return self.include.iter().any(|r| r.is_match(&full));
        }
        !self.exclude.iter().any(|r| r.is_match(&full))
    }
}

/// Keys of older Debezium releases (or of its other connectors) that Debezium 3.6.1's
/// PostgresConnector no longer defines and ignores, as configurations copied from older
/// tutorials still carry them: `database.server.name` (the logical name `topic.prefix`
/// replaced), `database.server.id`, the schema history's `database.history.*` and
/// `schema.history.internal.*` (PostgreSQL's connector keeps none), `include.schema.changes`.
/// Ignored here too, each with a warning ([`ignored_settings`]); any other key this version
/// does not read is refused.
pub fn is_ignored_by_debezium(key: &str) -> bool {
    matches!(
        key,
        "database.server.name" | "database.server.id" | "include.schema.changes"
    ) || key.starts_with("database.history.")
        || key.starts_with("schema.history.internal.")
}

/// The keys of `props` that Debezium ignores and so does this version
/// ([`is_ignored_by_debezium`]), sorted, for the task to warn about.
pub fn ignored_settings(props: &Props) -> Vec<&str> {
    let mut keys: Vec<&str> = props
        .keys()
        .map(String::as_str)
        .filter(|k| is_ignored_by_debezium(k))
        .collect();
    keys.sort_unstable();
    keys
}

/// Keys of the Connect framework, which the connector leaves to the runtime.
fn is_framework_key(key: &str) -> bool {
    const EXACT: [&str; 11] = [
        "task.class",
        "name",
        "connector.class",
        "tasks.max",
        "connector.plugin.version",
        "exactly.once.support",
        "transaction.boundary",
        "offsets.storage.topic",
        "config.action.reload",
        "tasks.max.enforce",
        "transforms",
    ];
    const PREFIXES: [&str; 12] = [
        "key.converter",
        "value.converter",
        "header.converter",
        "transforms.",
        "predicates",
        "errors.",
        "topic.creation.",
        "transaction.boundary.",
        "producer.override.",
        "consumer.override.",
        "admin.override.",
        "tributary.",
    ];
    EXACT.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Debezium keys this version reads.
const IMPLEMENTED: [&str; 49] = [
    "database.hostname",
    "database.tcpKeepAlive",
    "status.update.interval.ms",
    "connection.validation.timeout.ms",
    "database.port",
    "database.user",
    "database.password",
    "database.dbname",
    "database.sslmode",
    "database.sslrootcert",
    "database.sslcert",
    "database.sslkey",
    "database.sslpassword",
    "topic.prefix",
    "topic.delimiter",
    "plugin.name",
    "snapshot.mode",
    "snapshot.fetch.size",
    "schema.include.list",
    "schema.exclude.list",
    "table.include.list",
    "table.exclude.list",
    "column.include.list",
    "column.exclude.list",
    "decimal.handling.mode",
    "time.precision.mode",
    "binary.handling.mode",
    "interval.handling.mode",
    "tombstones.on.delete",
    "provide.transaction.metadata",
    "topic.transaction",
    "lsn.flush.mode",
    "flush.lsn.source",
    "skipped.operations",
    "heartbeat.interval.ms",
    "heartbeat.action.query",
    "retriable.restart.connector.wait.ms",
    "topic.heartbeat.prefix",
    "topic.heartbeat.name",
    "slot.name",
    "publication.name",
    "publication.autocreate.mode",
    "slot.drop.on.stop",
    "message.prefix.include.list",
    "message.prefix.exclude.list",
    "max.batch.size",
    "max.queue.size",
    "money.fraction.digits",
    "hstore.handling.mode",
];

/// The settings this version refuses, each with its reason (empty: none). Shared by the
/// connector's `validate` (one error per key) and `start` (the first fails it).
pub fn refused_settings(props: &Props) -> Vec<(String, String)> {
    let mut refused = Vec::new();
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort();
    for key in keys {
        if is_framework_key(key)
            || IMPLEMENTED.contains(&key.as_str())
            || is_ignored_by_debezium(key)
        {
            continue;
        }
        refused.push((
            key.clone(),
            format!("'{key}' is not implemented by Tributary's native PostgresConnector yet; {USE_HOSTED}"),
        ));
    }
    let mut refuse_value = |key: &str, allowed: &[&str], default: &str| {
        let value = props.get(key).map_or(default, |v| v.trim());
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(value)) {
            refused.push((
                key.to_string(),
                format!("{key}={value} is not implemented by Tributary's native PostgresConnector yet (it implements {}); {USE_HOSTED}", allowed.join(", ")),
            ));
        }
    };
    refuse_value("plugin.name", &["decoderbufs", "pgoutput"], "decoderbufs");
    let mode = props
        .get("snapshot.mode")
        .map_or("initial", |v| v.trim())
        .to_ascii_lowercase();
    match SNAPSHOT_MODES.iter().find(|(m, _)| *m == mode) {
        Some((_, true)) => {}
        Some((_, false)) => refused.push((
            "snapshot.mode".into(),
            format!("snapshot.mode={mode} is not implemented by Tributary's native PostgresConnector yet (it implements initial, initial_only, no_data, never, always and when_needed); {USE_HOSTED}"),
        )),
        None => refused.push((
            "snapshot.mode".into(),
            format!("Value '{mode}' is not a valid snapshot.mode"),
        )),
    }
    refused
}

fn list(props: &Props, key: &str) -> ConnectResult<Vec<Regex>> {
    let Some(value) = props.get(key) else {
        return Ok(Vec::new());
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|p| {
            Regex::new(&format!("(?i)^(?:{p})$")).map_err(|e| {
                ConnectError::config(format!(
                    "{key}: '{p}' is not a valid regular expression: {e}"
                ))
            })
        })
        .collect()
}

impl PostgresConfig {
    /// Parses `props`. Errors name the key: a refused setting ([`refused_settings`]), a
    /// missing required key, a number or regular expression that does not parse.
    pub fn parse(props: &Props) -> ConnectResult<PostgresConfig> {
        if let Some((key, message)) = refused_settings(props).into_iter().next() {
            return Err(ConnectError::config(format!("{key}: {message}")));
        }
        let required = |key: &str| -> ConnectResult<String> {
            props
                .get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    ConnectError::config(format!(
                        "The '{key}' value is invalid: A value is required"
                    ))
                })
        };
        let port = match props.get("database.port") {
            None => 5432,
            Some(p) => p.trim().parse().map_err(|_| {
                ConnectError::config(format!("database.port: '{p}' is not a valid port"))
            })?,
        };
        let fetch_size = match props.get("snapshot.fetch.size") {
            None => 10_240,
            Some(n) => n.trim().parse::<usize>().map_err(|_| {
                ConnectError::config(format!("snapshot.fetch.size: '{n}' is not a number"))
            })?,
        }
        .max(1);
        let positive = |key: &str, default: usize| match props.get(key) {
            None => Ok(default),
            Some(n) => match n.trim().parse::<usize>() {
                Ok(v) if v > 0 => Ok(v),
                _ => Err(ConnectError::config(format!(
                    "{key}: '{n}' is not a positive integer"
                ))),
            },
        };
        let money_fraction_digits = match props.get("money.fraction.digits") {
            None => 2,
            Some(n) => n.trim().parse::<i16>().map(i32::from).map_err(|_| {
                ConnectError::config(format!("money.fraction.digits: '{n}' is not a number"))
            })?,
        };
        let max_batch_size = positive("max.batch.size", 2048)?;
        let max_queue_size = positive("max.queue.size", 8192)?;
        // Debezium's CommonConnectorConfig.validateMaxQueueSize.
        if max_queue_size <= max_batch_size {
            return Err(ConnectError::config(format!(
                "max.queue.size: {max_queue_size} must be larger than the maximum batch size (max.batch.size={max_batch_size})"
            )));
        }
        if props.get("schema.include.list").is_some() && props.get("schema.exclude.list").is_some()
        {
            return Err(ConnectError::config(
                "schema.exclude.list: \"schema.include.list\" is already specified",
            ));
        }
        if props.get("message.prefix.include.list").is_some()
            && props.get("message.prefix.exclude.list").is_some()
        {
            return Err(ConnectError::config(
                "message.prefix.exclude.list: \"message.prefix.include.list\" is already specified",
            ));
        }
        if props.get("column.include.list").is_some() && props.get("column.exclude.list").is_some()
        {
            return Err(ConnectError::config(
                "column.exclude.list: \"column.include.list\" is already specified",
            ));
        }
        if props.get("table.include.list").is_some() && props.get("table.exclude.list").is_some() {
            return Err(ConnectError::config(
                "table.exclude.list: \"table.include.list\" is already specified",
            ));
        }
        let decimal_mode = match props
            .get("decimal.handling.mode")
            .map_or("precise", |v| v.trim())
            .to_ascii_lowercase()
            .as_str()
        {
            "precise" => DecimalMode::Precise,
            "double" => DecimalMode::Double,
            "string" => DecimalMode::String,
            other => {
                return Err(ConnectError::config(format!(
                    "decimal.handling.mode: Value '{other}' is not one of precise, double, string"
                )))
            }
        };
        let word = |key: &str, default: &str| {
            props
                .get(key)
                .map_or(default, |v| v.trim())
                .to_ascii_lowercase()
        };
        let hstore_as_map = match word("hstore.handling.mode", "json").as_str() {
            "json" => false,
            "map" => true,
            other => {
                return Err(ConnectError::config(format!(
                    "hstore.handling.mode: Value '{other}' is not one of json, map"
                )))
            }
        };
        let binary = match word("binary.handling.mode", "bytes").as_str() {
            "bytes" => BinaryMode::Bytes,
            "base64" => BinaryMode::Base64,
            "base64-url-safe" => BinaryMode::Base64UrlSafe,
            "hex" => BinaryMode::Hex,
            other => {
                return Err(ConnectError::config(format!(
                    "binary.handling.mode: Value '{other}' is not one of bytes, base64, base64-url-safe, hex"
                )))
            }
        };
        let time = match word("time.precision.mode", "adaptive").as_str() {
            "adaptive_time_microseconds" => TimeMode::AdaptiveTimeMicroseconds,
            "microseconds" => TimeMode::Microseconds,
            "connect" => TimeMode::Connect,
            "nanoseconds" => TimeMode::Nanoseconds,
            "isostring" => TimeMode::IsoString,
            "adaptive" => TimeMode::Adaptive,
            other => {
                return Err(ConnectError::config(format!(
                    "time.precision.mode: Value '{other}' is not one of adaptive, adaptive_time_microseconds, connect, isostring, microseconds, nanoseconds"
                )))
            }
        };
        let intervals = match word("interval.handling.mode", "numeric").as_str() {
            "numeric" => IntervalMode::Numeric,
            "string" => IntervalMode::String,
            other => {
                return Err(ConnectError::config(format!(
                    "interval.handling.mode: Value '{other}' is not one of numeric, string"
                )))
            }
        };
        let snapshot_mode = match word("snapshot.mode", "initial").as_str() {
            "initial" => SnapshotMode::Initial,
            "initial_only" => SnapshotMode::InitialOnly,
            "always" => SnapshotMode::Always,
            "when_needed" => SnapshotMode::WhenNeeded,
            _ => SnapshotMode::NoData,
        };
        let publication_autocreate = match word("publication.autocreate.mode", "all_tables").as_str() {
            "all_tables" => PublicationAutocreate::AllTables,
            "filtered" => PublicationAutocreate::Filtered,
            "disabled" => PublicationAutocreate::Disabled,
            "no_tables" => PublicationAutocreate::NoTables,
            other => {
                return Err(ConnectError::config(format!(
                    "publication.autocreate.mode: Value '{other}' is not one of all_tables, filtered, disabled, no_tables"
                )))
            }
        };
        let tombstones_on_delete = match word("tombstones.on.delete", "true").as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(ConnectError::config(format!(
                    "tombstones.on.delete: Value '{other}' is not a boolean"
                )))
            }
        };
        let provide_transaction_metadata =
            match word("provide.transaction.metadata", "false").as_str() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(ConnectError::config(format!(
                        "provide.transaction.metadata: Value '{other}' is not a boolean"
                    )))
                }
            };
        let mut skipped_operations = Vec::new();
        for op in word("skipped.operations", "t").split(',').map(str::trim) {
            match op {
                "none" | "" => {}
                "c" | "u" | "d" | "t" => skipped_operations.extend(op.chars()),
                other => {
                    return Err(ConnectError::config(format!(
                        "skipped.operations: Value '{other}' is not one of c, u, d, t, none"
                    )))
                }
            }
        }
        let millis = |key: &str, default: u64| -> ConnectResult<std::time::Duration> {
            let ms = match props.get(key) {
                None => default,
                Some(n) => n.trim().parse::<u64>().map_err(|_| {
                    ConnectError::config(format!("{key}: '{n}' is not a number of milliseconds"))
                })?,
            };
            Ok(std::time::Duration::from_millis(ms))
        };
        let non_empty = |key: &str| {
            props
                .get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let tcp_keepalive = match word("database.tcpKeepAlive", "true").as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(ConnectError::config(format!(
                    "database.tcpKeepAlive: Value '{other}' is not a boolean"
                )))
            }
        };
        let validation_timeout = millis("connection.validation.timeout.ms", 60_000)?;
        if validation_timeout.is_zero() {
            return Err(ConnectError::config(
                "connection.validation.timeout.ms: the value must be positive",
            ));
        }
        let slot_drop_on_stop = match word("slot.drop.on.stop", "false").as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(ConnectError::config(format!(
                    "slot.drop.on.stop: Value '{other}' is not a boolean"
                )))
            }
        };
        let lsn_flush = match props.get("lsn.flush.mode").map(|v| v.trim().to_ascii_lowercase()) {
            Some(v) if v == "connector" => LsnFlushMode::Connector,
            Some(v) if v == "manual" => LsnFlushMode::Manual,
            Some(v) if v == "connector_and_driver" => LsnFlushMode::ConnectorAndDriver,
            Some(other) => {
                return Err(ConnectError::config(format!(
                    "lsn.flush.mode: Value '{other}' must be one of connector, manual, connector_and_driver"
                )))
            }
            None => match props.get("flush.lsn.source").map(|v| v.trim().to_ascii_lowercase()) {
                None => LsnFlushMode::Connector,
                Some(v) => {
                    tracing::warn!("Property 'flush.lsn.source' is deprecated and replaced by 'lsn.flush.mode' and will be removed in a future build.");
                    match v.as_str() {
                        "true" => LsnFlushMode::Connector,
                        "false" => LsnFlushMode::Manual,
                        other => {
                            return Err(ConnectError::config(format!(
                                "flush.lsn.source: Value '{other}' is not a boolean"
                            )))
                        }
                    }
                }
            },
        };
        let mut heartbeat_interval = millis("heartbeat.interval.ms", 0)?;
        // Debezium's fallback: the keepalive flush needs records to carry positions to Kafka.
        if lsn_flush == LsnFlushMode::ConnectorAndDriver
            && heartbeat_interval.is_zero()
            && !provide_transaction_metadata
        {
            tracing::warn!("heartbeat.interval.ms was internally set to 600000 ms since lsn.flush.mode=connector_and_driver requires periodic opportunities to propagate LSNs to Kafka. If this behavior is not desired, explicitly set heartbeat.interval.ms to more than 0 or enable provide.transaction.metadata.");
            heartbeat_interval = std::time::Duration::from_millis(600_000);
        }
        Ok(PostgresConfig {
            slot_drop_on_stop,
            ssl: crate::tls::SslSettings::parse_with_client(
                props.get("database.sslmode").map(String::as_str),
                props.get("database.sslrootcert").map(String::as_str),
                props.get("database.sslcert").map(String::as_str),
                props.get("database.sslkey").map(String::as_str),
                props.get("database.sslpassword").map(String::as_str),
            )?,
            retry_wait: millis("retriable.restart.connector.wait.ms", 10_000)?,
            status_update_interval: millis("status.update.interval.ms", 10_000)?,
            validation_timeout,
            tcp_keepalive,
            heartbeat_interval,
            lsn_flush,
            heartbeat_action_query: non_empty("heartbeat.action.query"),
            heartbeat_prefix: non_empty("topic.heartbeat.prefix")
                .unwrap_or_else(|| "__debezium-heartbeat".into()),
            heartbeat_topic_name: non_empty("topic.heartbeat.name"),
            skipped_operations,
            skipped_operations_set: props.contains_key("skipped.operations"),
            snapshot_mode,
            slot_name: props
                .get("slot.name")
                .map_or("debezium", |v| v.trim())
                .to_string(),
            plugin: if word("plugin.name", "decoderbufs") == "pgoutput" {
                LogicalDecoder::PgOutput
            } else {
                LogicalDecoder::DecoderBufs
            },
            publication_name: props
                .get("publication.name")
                .map_or("dbz_publication", |v| v.trim())
                .to_string(),
            publication_autocreate,
            tombstones_on_delete,
            provide_transaction_metadata,
            transaction_topic_suffix: non_empty("topic.transaction")
                .unwrap_or_else(|| "transaction".into()),
            hostname: required("database.hostname")?,
            port,
            user: required("database.user")?,
            password: props.get("database.password").cloned().map(Password),
            dbname: required("database.dbname")?,
            topic_prefix: required("topic.prefix")?,
            topic_delimiter: props
                .get("topic.delimiter")
                .cloned()
                .unwrap_or_else(|| ".".into()),
            types: TypeSettings {
                decimals: decimal_mode,
                binary,
                time,
                intervals,
                money_fraction_digits,
                hstore_as_map,
            },
            fetch_size,
            max_batch_size,
            max_queue_size,
            messages: PrefixFilter {
                include: list(props, "message.prefix.include.list")?,
                exclude: list(props, "message.prefix.exclude.list")?,
            },
            columns: ColumnFilter {
                include: list(props, "column.include.list")?,
                exclude: list(props, "column.exclude.list")?,
            },
            tables: TableFilter {
                schema_include: list(props, "schema.include.list")?,
                schema_exclude: list(props, "schema.exclude.list")?,
                table_include: list(props, "table.include.list")?,
                table_exclude: list(props, "table.exclude.list")?,
            },
        })
    }

    /// The heartbeat topic: `topic.heartbeat.name`, else `<topic.heartbeat.prefix><topic.delimiter><topic.prefix>`
    /// (Debezium's `AbstractTopicNamingStrategy.heartbeatTopic`).
    pub fn heartbeat_topic(&self) -> String {
        self.heartbeat_topic_name.clone().unwrap_or_else(|| {
            format!(
                "{}{}{}",
                self.heartbeat_prefix, self.topic_delimiter, self.topic_prefix
            )
        })
    }

    /// The transaction topic (`provide.transaction.metadata`), as Debezium's topic naming
    /// strategy names it: `<topic.prefix><topic.delimiter><topic.transaction>`.
    pub fn transaction_topic(&self) -> String {
        format!(
            "{}{}{}",
            self.topic_prefix, self.topic_delimiter, self.transaction_topic_suffix
        )
    }

    /// The batches waiting for the task at most: with the one being filled and the one the
    /// task holds, no more than `max.queue.size` records are read ahead (at least one).
    pub fn queued_batches(&self) -> usize {
        (self.max_queue_size / self.max_batch_size)
            .saturating_sub(2)
            .max(1)
    }

    /// Whether events of operation `op` (`c`, `u`, `d`, `t`) are not written.
    pub fn skips(&self, op: char) -> bool {
        self.skipped_operations.contains(&op)
    }

    /// The topic of table `schema.table` (Debezium's default topic naming strategy).
    pub fn topic(&self, schema: &str, table: &str) -> String {
        let d = &self.topic_delimiter;
        format!("{}{d}{schema}{d}{table}", self.topic_prefix)
    }
}

/// The connector's configuration keys, as `GET /connector-plugins/.../config` lists them.
pub fn config_def() -> ConfigDef {
    let mut def = ConfigDef::new();
    for (key, t, default, doc) in [
        ("database.hostname", ConfigType::String, None, "Resolvable hostname or IP address of the database server."),
        ("database.port", ConfigType::Int, Some("5432"), "Port of the database server."),
        ("database.user", ConfigType::String, None, "Name of the database user to be used when connecting to the database."),
        ("database.password", ConfigType::Password, Some(""), "Password of the database user to be used when connecting to the database."),
        ("database.dbname", ConfigType::String, None, "The name of the database from which the connector should capture changes."),
        ("database.sslmode", ConfigType::String, Some("prefer"), "Whether to use an encrypted connection: disable, allow, prefer, require, verify-ca or verify-full."),
        ("database.sslcert", ConfigType::String, None, "File containing the SSL Certificate for the client."),
        ("database.sslkey", ConfigType::String, None, "File containing the SSL private key for the client."),
        ("database.sslpassword", ConfigType::Password, None, "Password to access the client private key from the file specified by 'database.sslkey'."),
        ("database.sslrootcert", ConfigType::String, None, "The PEM file of the certificates the server's is verified against (verify-ca, verify-full; default ~/.postgresql/root.crt)."),
        ("database.tcpKeepAlive", ConfigType::Boolean, Some("true"), "Whether the connections to the database send TCP keepalives."),
        ("status.update.interval.ms", ConfigType::Int, Some("10000"), "Milliseconds between the replication connection's reports of its positions to the server."),
        ("connection.validation.timeout.ms", ConfigType::Long, Some("60000"), "Milliseconds the validation of a configuration waits for its check of the database."),
        ("topic.prefix", ConfigType::String, None, "Topic prefix that identifies and provides a namespace for the particular database server."),
        ("topic.delimiter", ConfigType::String, Some("."), "Delimiter between the parts of topic names."),
        ("plugin.name", ConfigType::String, Some("decoderbufs"), "The name of the Postgres logical decoding plug-in installed on the server: decoderbufs (the default) or pgoutput."),
        ("snapshot.mode", ConfigType::String, Some("initial"), "The criteria for running a snapshot (initial, initial_only, no_data, never, always and when_needed natively, for now)."),
        ("snapshot.fetch.size", ConfigType::Int, Some("10240"), "Rows read per round trip during the snapshot."),
        ("hstore.handling.mode", ConfigType::String, Some("json"), "Specify how HSTORE columns should be represented in change events: json (the default) or map."),
        ("money.fraction.digits", ConfigType::Short, Some("2"), "Number of fractional digits when money type is converted to 'precise' decimal number."),
        ("max.batch.size", ConfigType::Int, Some("2048"), "Maximum size of each batch of source records."),
        ("max.queue.size", ConfigType::Int, Some("8192"), "Maximum size of the queue for change events read from the database log but not yet recorded or forwarded."),
        ("schema.include.list", ConfigType::List, Some(""), "Regular expressions of the schemas to capture."),
        ("schema.exclude.list", ConfigType::List, Some(""), "Regular expressions of the schemas not to capture."),
        ("table.include.list", ConfigType::List, Some(""), "Regular expressions of the tables (schema.table) to capture."),
        ("table.exclude.list", ConfigType::List, Some(""), "Regular expressions of the tables (schema.table) not to capture."),
        ("column.include.list", ConfigType::List, Some(""), "Regular expressions of the columns (schema.table.column) in the change events' values."),
        ("column.exclude.list", ConfigType::List, Some(""), "Regular expressions of the columns (schema.table.column) left out of the change events' values."),
        ("decimal.handling.mode", ConfigType::String, Some("precise"), "How DECIMAL and NUMERIC columns are represented: precise, double or string."),
        ("time.precision.mode", ConfigType::String, Some("adaptive"), "Time, date, and timestamps can be represented with different kinds of precisions: adaptive (the default), adaptive_time_microseconds, connect, isostring, microseconds or nanoseconds."),
        ("binary.handling.mode", ConfigType::String, Some("bytes"), "How binary columns are represented: bytes, base64, base64-url-safe or hex."),
        ("interval.handling.mode", ConfigType::String, Some("numeric"), "How interval columns are represented: numeric (microseconds) or string (ISO 8601)."),
        ("tombstones.on.delete", ConfigType::Boolean, Some("true"), "Whether a delete is followed by a tombstone."),
        ("lsn.flush.mode", ConfigType::String, Some("connector"), "Who confirms positions to the server: connector (the last committed transaction's end), manual (never), connector_and_driver (also the server's position while nothing is pending)."),
        ("flush.lsn.source", ConfigType::Boolean, Some("true"), "(Deprecated) true: lsn.flush.mode=connector; false: manual."),
        ("provide.transaction.metadata", ConfigType::Boolean, Some("false"), "Whether BEGIN and END records of each transaction go to the transaction topic and change events carry their transaction block."),
        ("topic.transaction", ConfigType::String, Some("transaction"), "The transaction topic's name after topic.prefix and topic.delimiter."),
        ("retriable.restart.connector.wait.ms", ConfigType::Long, Some("10000"), "Milliseconds to wait before restarting the connector after a retriable error (a broken connection)."),
        ("heartbeat.interval.ms", ConfigType::Int, Some("0"), "Length of an interval in milli-seconds in in which the connector periodically sends heartbeat messages to a heartbeat topic (0: none)."),
        ("heartbeat.action.query", ConfigType::String, Some(""), "A query run against the database on each heartbeat."),
        ("topic.heartbeat.prefix", ConfigType::String, Some("__debezium-heartbeat"), "The prefix of the heartbeat topic's name."),
        ("topic.heartbeat.name", ConfigType::String, Some(""), "The heartbeat topic's name, instead of the prefix and topic.prefix."),
        ("skipped.operations", ConfigType::List, Some("t"), "The operations whose events are not written: c, u, d, t (truncate), or none."),
        ("slot.name", ConfigType::String, Some("debezium"), "The logical replication slot streamed from (created when missing)."),
        ("publication.name", ConfigType::String, Some("dbz_publication"), "The publication the slot streams (created per publication.autocreate.mode)."),
        ("publication.autocreate.mode", ConfigType::String, Some("all_tables"), "Whether and how the publication is created when missing: all_tables, filtered, disabled, no_tables."),
        ("slot.drop.on.stop", ConfigType::Boolean, Some("false"), "Whether the replication slot is dropped when the task stops (not for production: changes made while the task is stopped are lost)."),
        ("message.prefix.include.list", ConfigType::List, Some(""), "Regular expressions of the logical decoding message prefixes to capture."),
        ("message.prefix.exclude.list", ConfigType::List, Some(""), "Regular expressions of the logical decoding message prefixes not to capture."),
    ] {
        def = def.define(key, t, Some(default), None, Importance::High, doc);
    }
    def
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        let mut p: Props = [
            (
                "connector.class",
                "io.debezium.connector.postgresql.PostgresConnector",
            ),
            ("database.hostname", "db"),
            ("database.user", "u"),
            ("database.dbname", "inventory"),
            ("topic.prefix", "dbserver1"),
            ("plugin.name", "pgoutput"),
            ("snapshot.mode", "initial_only"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in pairs {
            p.insert(k.to_string(), v.to_string());
        }
        p
    }

    #[test]
    fn keys_debezium_no_longer_reads_are_ignored_and_others_refused() {
        let p = props(&[
            ("database.server.name", "legacy"),
            ("database.history.kafka.topic", "schema-changes"),
            ("include.schema.changes", "false"),
            ("database.sslfactory", "org.example.Factory"),
            ("snapshot.locking.mode", "none"),
        ]);
        let refused: Vec<String> = refused_settings(&p).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            refused,
            vec!["database.sslfactory", "snapshot.locking.mode"]
        );
        assert_eq!(
            ignored_settings(&p),
            vec![
                "database.history.kafka.topic",
                "database.server.name",
                "include.schema.changes"
            ]
        );
    }

    #[test]
    fn lsn_flush_mode_is_read_as_debezium_reads_it() {
        let parse = |pairs: &[(&str, &str)]| PostgresConfig::parse(&props(pairs));
        let c = parse(&[]).unwrap();
        assert_eq!(c.lsn_flush, LsnFlushMode::Connector);
        assert!(c.heartbeat_interval.is_zero());
        // The keepalive flush needs heartbeats to carry positions: 10 minutes unless set.
        let c = parse(&[("lsn.flush.mode", "CONNECTOR_AND_DRIVER")]).unwrap();
        assert_eq!(c.lsn_flush, LsnFlushMode::ConnectorAndDriver);
        assert_eq!(c.heartbeat_interval.as_millis(), 600_000);
        let c = parse(&[
            ("lsn.flush.mode", "connector_and_driver"),
            ("heartbeat.interval.ms", "5000"),
        ])
        .unwrap();
        assert_eq!(c.heartbeat_interval.as_millis(), 5_000);
        let c = parse(&[
            ("lsn.flush.mode", "connector_and_driver"),
            ("provide.transaction.metadata", "true"),
        ])
        .unwrap();
        assert!(c.heartbeat_interval.is_zero());
        // The deprecated boolean, and lsn.flush.mode over it.
        let c = parse(&[("flush.lsn.source", "false")]).unwrap();
        assert_eq!(c.lsn_flush, LsnFlushMode::Manual);
        let c = parse(&[
            ("flush.lsn.source", "false"),
            ("lsn.flush.mode", "connector"),
        ])
        .unwrap();
        assert_eq!(c.lsn_flush, LsnFlushMode::Connector);
        let e = parse(&[("lsn.flush.mode", "driver")]).unwrap_err();
        assert!(e.to_string().contains("lsn.flush.mode"), "{e}");
    }

    #[test]
    fn a_setting_not_implemented_is_refused_by_name() {
        assert!(refused_settings(&props(&[])).is_empty());
        let refused = refused_settings(&props(&[
            ("snapshot.mode", "configuration_based"),
            ("database.sslfactory", "org.example.Factory"),
            ("key.converter.schemas.enable", "false"),
        ]));
        let keys: Vec<&str> = refused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, vec!["database.sslfactory", "snapshot.mode"]);
        assert!(refused
            .iter()
            .all(|(_, m)| m.contains("connector.plugin.version")));
        // Debezium's default plugin, decoderbufs, and pgoutput; nothing else.
        let mut p = props(&[]);
        p.remove("plugin.name");
        assert!(refused_settings(&p).is_empty());
        assert_eq!(
            PostgresConfig::parse(&p).unwrap().plugin,
            LogicalDecoder::DecoderBufs
        );
        p.insert("plugin.name".into(), "wal2json".into());
        assert_eq!(refused_settings(&p)[0].0, "plugin.name");
        let e =
            PostgresConfig::parse(&props(&[("time.precision.mode", "fortnights")])).unwrap_err();
        assert!(e.to_string().contains("time.precision.mode"), "{e}");
        let e = PostgresConfig::parse(&props(&[("snapshot.mode", "recovery")])).unwrap_err();
        assert!(e.to_string().contains("snapshot.mode"), "{e}");
    }

    #[test]
    fn the_queue_holds_at_most_max_queue_size_records_in_whole_batches() {
        let parse = |pairs: &[(&str, &str)]| PostgresConfig::parse(&props(pairs));
        let c = parse(&[]).unwrap();
        assert_eq!((c.max_batch_size, c.max_queue_size), (2048, 8192));
        assert_eq!(c.queued_batches(), 2);
        let c = parse(&[("max.batch.size", "100"), ("max.queue.size", "1000")]).unwrap();
        assert_eq!((c.max_batch_size, c.queued_batches()), (100, 8));
        let c = parse(&[("max.batch.size", "2"), ("max.queue.size", "3")]).unwrap();
        assert_eq!(c.queued_batches(), 1);
        let e = parse(&[("max.queue.size", "2048")]).unwrap_err();
        assert!(
            e.to_string().contains("larger than the maximum batch size"),
            "{e}"
        );
        let e = parse(&[("max.batch.size", "0")]).unwrap_err();
        assert!(e.to_string().contains("max.batch.size"), "{e}");
        assert!(refused_settings(&props(&[("max.batch.size", "100")])).is_empty());
    }

    #[test]
    fn the_password_never_shows_in_a_formatted_config() {
        let c = PostgresConfig::parse(&props(&[("database.password", "s3cr3t-pw")])).unwrap();
        assert!(!format!("{c:?}").contains("s3cr3t-pw"));
        assert_eq!(c.password.unwrap().0, "s3cr3t-pw");
    }

    #[test]
    fn tables_are_filtered_as_debezium_filters_them() {
        let c = PostgresConfig::parse(&props(&[("table.include.list", "public.cust.*,inv\\.t")]))
            .unwrap();
        assert!(c.tables.includes("public", "customers"));
        assert!(c.tables.includes("PUBLIC", "Customers"), "case-insensitive");
        assert!(c.tables.includes("inv", "t"));
        assert!(!c.tables.includes("public", "orders"));
        assert!(
            !c.tables.includes("x", "public.customers"),
            "the whole name"
        );
        let t = |s: &str, n: &str| (s.to_string(), n.to_string());
        assert_eq!(
            c.tables.snapshot_order(vec![
                t("public", "customers"),
                t("inv", "t"),
                t("public", "cust_b"),
                t("public", "Cust_a")
            ]),
            vec![
                t("public", "Cust_a"),
                t("public", "cust_b"),
                t("public", "customers"),
                t("inv", "t")
            ],
            "pattern by pattern, each sorted as Java sorts strings"
        );
        let c = PostgresConfig::parse(&props(&[("schema.exclude.list", "audit")])).unwrap();
        assert!(!c.tables.includes("audit", "log") && c.tables.includes("public", "log"));
        assert_eq!(c.topic("public", "t"), "dbserver1.public.t");
        assert!(PostgresConfig::parse(&props(&[
            ("table.include.list", "a"),
            ("table.exclude.list", "b")
        ]))
        .is_err());
    }
}
