//! Tributary's flaky test source (`io.tributary.connect.testing.FlakySourceConnector`, alias
//! `FlakySource`): a testing aid, not part of Apache Kafka.
//!
//! It produces a slow trickle of numbered records from `tasks.max` tasks and lets a test make
//! chosen tasks fail, to exercise failure reporting, task restarts and rebalancing:
//!
//! - `fail.tasks`: task numbers (comma-separated) that fail at their first poll after every
//!   start, so they stay FAILED however often they are restarted.
//! - `fail.trigger.dir`: a directory watched by every task; task `n` fails at its next poll once
//!   a file (or anything) named `fail-<n>` exists there. The file is left in place, so a
//!   restarted task fails again until the test removes it. Failures can thus be triggered from
//!   outside the worker process, with nothing but the file system.
//!
//! Healthy tasks produce `records.per.second` records per second each (default 1; 0 produces
//! nothing) to `topic`. Task `n`'s records have source partition `{"task": n}`, source offset
//! `{"seqno": s}`, key `n` (INT32) and value `s` (INT64); `s` counts 0, 1, 2, … and continues
//! after the committed offset when the task is restarted. A poll returns within about 100 ms.
//!
//! - `block.in`: calls that block for `block.ms` (default 600000 ms) instead of returning, to
//!   stand for a plugin that hangs: `connector.start`, `task.poll`, `task.stop`. A blocked
//!   call ignores stop requests, as a hung plugin would.
//!
//! - `define.transactions=fibonacci`: the connector says it can define its own transaction
//!   boundaries (KIP-618's `canDefineTransactionBoundaries`), and a task running with
//!   `transaction.boundary=connector` under exactly-once support ends a transaction at every
//!   seqno of the Fibonacci sequence 1, 2, 3, 5, 8, 13, …: committed when that seqno is odd,
//!   aborted when it is even (as Connect's own test connector, `MonitorableSourceConnector`,
//!   does). So seqnos 0–1 are committed, 2 aborted, 3 and 4–5 committed, 6–8 aborted, and so
//!   on. The first, third, … transaction is ended by naming its last record
//!   (`commit_transaction_for` / `abort_transaction_for`), the second, fourth, … by a request
//!   for the batch (`commit_transaction` / `abort_transaction`), a batch never going past a
//!   boundary.
//!
//! - `tasks.generated`: how many task configs the connector returns, whatever `tasks.max` asks
//!   (default: exactly `tasks.max`). More than `tasks.max` stands for a connector that ignores
//!   its `maxTasks` argument, which Connect refuses unless `tasks.max.enforce=false`
//!   (KIP-1004).
//!
//! Each task registers one plugin metric (KIP-877), `records-polled` tagged `topic`: the
//! records its `poll` returned since it started.
//!
//! The connector assigns task numbers by adding `id` = 0, 1, … to copies of its config.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tracing::info;
use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::connector::{Connector, ConnectorTransactionBoundaries, ConnectorType};
use tributary_api::data::{Schema, Value};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::source::{SourceTask, SourceTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::{offset_seqno, parse_int, Clock, SystemClock, FLAKY_SOURCE_TASK_CLASS, VERSION};

/// Config key `topic` (STRING, required, non-empty): where records go.
pub const TOPIC_CONFIG: &str = "topic";
/// Config key `records.per.second` (DOUBLE, default 1, at least 0): each healthy task's rate.
pub const RECORDS_PER_SECOND_CONFIG: &str = "records.per.second";
/// The plugin metric (KIP-877) each task registers: records returned by `poll` since it
/// started, with base tags `connector`, `task` and its own `topic`; `/metrics` shows it as
/// `kafka_connect_plugins_records_polled`.
pub const POLLED_METRIC: &str = "records-polled";
/// Config key `fail.tasks` (LIST of task numbers, default empty): tasks that fail at once.
pub const FAIL_TASKS_CONFIG: &str = "fail.tasks";
/// Config key `fail.trigger.dir` (STRING, default none): directory of `fail-<n>` trigger files.
pub const FAIL_TRIGGER_DIR_CONFIG: &str = "fail.trigger.dir";
/// Config key `block.in` (LIST, default empty): calls that block (`connector.start`,
/// `task.poll`, `task.stop`).
pub const BLOCK_IN_CONFIG: &str = "block.in";
/// Config key `block.ms` (LONG, default 600000): how long a blocked call blocks, ms.
pub const BLOCK_MS_CONFIG: &str = "block.ms";
/// Config key `lifecycle.file` (STRING, default none): a file each task appends
/// `<task> <process id> start|stop <epoch ms>` lines to when it starts and stops, so a test
/// can check that no task ever ran in two processes at once.
pub const LIFECYCLE_FILE_CONFIG: &str = "lifecycle.file";
/// Config key `credential` (PASSWORD, default none): a password the connector keeps and never
/// uses, for tests of how the worker treats password settings (shown only to principals that
/// may read the connector's config, `[hidden]` in validation results).
pub const CREDENTIAL_CONFIG: &str = "credential";
/// Config key `define.transactions` (STRING, default empty; `fibonacci`): the task defines its
/// own transactions (see the module docs).
pub const DEFINE_TRANSACTIONS_CONFIG: &str = "define.transactions";
/// Config key `tasks.generated` (INT, default none, at least 0): how many task configs the
/// connector generates, ignoring `tasks.max` (none: `tasks.max` of them).
pub const TASKS_GENERATED_CONFIG: &str = "tasks.generated";
/// Task config key `id`: the task number, set by the connector.
pub const TASK_ID_CONFIG: &str = "id";
/// Key of the source partition map, `{"task": <n>}`.
pub const TASK_FIELD: &str = "task";
/// Key of the source offset map, `{"seqno": <s>}`.
pub const SEQNO_FIELD: &str = "seqno";

/// Longest a poll waits before returning no records.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Most records one poll returns when catching up.
const MAX_BATCH: u64 = 500;

/// The connector's configuration keys.
pub fn flaky_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            TOPIC_CONFIG,
            ConfigType::String,
            None,
            Some(Validator::NonEmptyString),
            Importance::High,
            "Topic the records are written to.",
        )
        .define(
            RECORDS_PER_SECOND_CONFIG,
            ConfigType::Double,
            Some(Some("1")),
            Some(Validator::Range {
                min: Some(0.0),
                max: None,
            }),
            Importance::Medium,
            "Records each healthy task produces per second; 0 produces none.",
        )
        .define(
            FAIL_TASKS_CONFIG,
            ConfigType::List,
            Some(Some("")),
            Some(Validator::Custom(Arc::new(|v| match v {
                Parsed::List(items) => items
                    .iter()
                    .find(|i| i.trim().parse::<u32>().is_err())
                    .map_or(Ok(()), |bad| Err(format!("'{bad}' is not a task number"))),
                _ => Ok(()),
            }))),
            Importance::Medium,
            "Task numbers (0-based) that fail at their first poll after each start.",
        )
        .define(
            FAIL_TRIGGER_DIR_CONFIG,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            "Directory in which a file named fail-<task number> makes that task fail at its next poll.",
        )
        .define(
            BLOCK_IN_CONFIG,
            ConfigType::List,
            Some(Some("")),
            Some(Validator::Custom(Arc::new(|v| match v {
                Parsed::List(items) => items
                    .iter()
                    .map(|i| i.trim())
                    .find(|i| !["connector.start", "task.poll", "task.stop"].contains(i))
                    .map_or(Ok(()), |bad| {
                        Err(format!(
                            "'{bad}' is not one of connector.start, task.poll, task.stop"
                        ))
                    }),
                _ => Ok(()),
            }))),
            Importance::Low,
            "Calls that block for block.ms instead of returning: connector.start, task.poll, task.stop.",
        )
        .define(
            CREDENTIAL_CONFIG,
            ConfigType::Password,
            Some(None),
            None,
            Importance::Low,
            "A password the connector keeps and never uses (tests of how the worker treats password settings).",
        )
        .define(
            LIFECYCLE_FILE_CONFIG,
            ConfigType::String,
            Some(None),
            None,
            Importance::Low,
            "File each task appends a line to when it starts and when it stops: task, process id, start or stop, epoch ms.",
        )
        .define(
            DEFINE_TRANSACTIONS_CONFIG,
            ConfigType::String,
            Some(Some("")),
            Some(Validator::Custom(Arc::new(|v| match v {
                Parsed::String(s) if !s.is_empty() && s != "fibonacci" => {
                    Err(format!("'{s}' is not one of: fibonacci (or empty)"))
                }
                _ => Ok(()),
            }))),
            Importance::Low,
            "fibonacci: with transaction.boundary=connector, tasks end a transaction at every Fibonacci seqno, committing odd and aborting even ones.",
        )
        .define(
            BLOCK_MS_CONFIG,
            ConfigType::Long,
            Some(Some("600000")),
            Some(Validator::Range {
                min: Some(0.0),
                max: None,
            }),
            Importance::Low,
            "How long a call listed in block.in blocks, in milliseconds.",
        )
        .define(
            TASKS_GENERATED_CONFIG,
            ConfigType::Int,
            Some(None),
            Some(Validator::Range {
                min: Some(0.0),
                max: None,
            }),
            Importance::Low,
            "How many task configs the connector generates whatever tasks.max says (default: tasks.max); more than tasks.max stands for a connector that ignores its maxTasks.",
        )
}

/// The parsed configuration.
struct FlakyConfig {
    topic: String,
    records_per_second: f64,
    fail_tasks: Vec<u32>,
    trigger_dir: Option<PathBuf>,
    block_in: Vec<String>,
    block: Duration,
    lifecycle_file: Option<PathBuf>,
    fibonacci_transactions: bool,
    tasks_generated: Option<usize>,
}

impl FlakyConfig {
    /// Appends `<task> <pid> <event> <epoch ms>` to `lifecycle.file`, when set.
    fn record_lifecycle(&self, task: u32, event: &str) {
        use std::io::Write;
        let Some(path) = &self.lifecycle_file else {
            return;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let line = format!("{task} {} {event} {now}\n", std::process::id());
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("cannot append to {}: {e}", path.display());
        }
    }

    /// Blocks for `block.ms` when `call` is listed in `block.in`.
    fn maybe_block(&self, call: &str) {
        if self.block_in.iter().any(|c| c == call) {
            info!(
                "FlakySource blocking in {call} for {} ms as configured",
                self.block.as_millis()
            );
            std::thread::sleep(self.block);
        }
    }
}

impl FlakyConfig {
    fn parse(props: &Props) -> ConnectResult<FlakyConfig> {
        let mut parsed = flaky_config_def().parse(props)?;
        let topic = match parsed.remove(TOPIC_CONFIG) {
            Some(Parsed::String(s)) => s,
            _ => {
                return Err(ConnectError::config(format!(
                    "Missing required configuration \"{TOPIC_CONFIG}\""
                )))
            }
        };
        let records_per_second = match parsed.remove(RECORDS_PER_SECOND_CONFIG) {
            Some(Parsed::Double(d)) => d,
            _ => 1.0,
        };
        let fail_tasks = match parsed.remove(FAIL_TASKS_CONFIG) {
            Some(Parsed::List(items)) => items
                .iter()
                .filter_map(|i| i.trim().parse::<u32>().ok())
                .collect(),
            _ => Vec::new(),
        };
        let trigger_dir = match parsed.remove(FAIL_TRIGGER_DIR_CONFIG) {
            Some(Parsed::String(s)) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => None,
        };
        let block_in = match parsed.remove(BLOCK_IN_CONFIG) {
            Some(Parsed::List(items)) => items.iter().map(|i| i.trim().to_string()).collect(),
            _ => Vec::new(),
        };
        let block = match parsed.remove(BLOCK_MS_CONFIG) {
            Some(Parsed::Long(ms)) => Duration::from_millis(ms.max(0) as u64),
            _ => Duration::from_secs(600),
        };
        let lifecycle_file = match parsed.remove(LIFECYCLE_FILE_CONFIG) {
            Some(Parsed::String(s)) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => None,
        };
        let fibonacci_transactions = matches!(
            parsed.remove(DEFINE_TRANSACTIONS_CONFIG),
            Some(Parsed::String(s)) if s == "fibonacci"
        );
        let tasks_generated = match parsed.remove(TASKS_GENERATED_CONFIG) {
            Some(Parsed::Int(n)) => Some(n.max(0) as usize),
            _ => None,
        };
        Ok(FlakyConfig {
            tasks_generated,
            fibonacci_transactions,
            topic,
            records_per_second,
            fail_tasks,
            trigger_dir,
            block_in,
            block,
            lifecycle_file,
        })
    }
}

/// A source whose tasks fail on demand: a testing aid of Tributary's (not in Kafka); see the
/// module docs. Creates exactly `tasks.max` tasks (or `tasks.generated`).
#[derive(Debug, Default)]
pub struct FlakySourceConnector {
    config: Props,
    tasks_generated: Option<usize>,
}

impl FlakySourceConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Connector for FlakySourceConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }
    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }
    fn task_class(&self) -> String {
        FLAKY_SOURCE_TASK_CLASS.to_string()
    }
    /// Checks the configuration (see [`flaky_config_def`]).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let config = FlakyConfig::parse(props)?;
        config.maybe_block("connector.start");
        self.config = props.clone();
        self.tasks_generated = config.tasks_generated;
        Ok(())
    }
    /// Exactly `max_tasks` configs (`tasks.generated` when set): the connector's config plus
    /// `id`.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok((0..self.tasks_generated.unwrap_or(max_tasks))
            .map(|i| {
                let mut props = self.config.clone();
                props.insert(TASK_ID_CONFIG.to_string(), i.to_string());
                props
            })
            .collect())
    }
    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }
    fn config(&self) -> ConfigDef {
        flaky_config_def()
    }
    /// Supported with `define.transactions=fibonacci`.
    fn can_define_transaction_boundaries(&self, config: &Props) -> ConnectorTransactionBoundaries {
        match FlakyConfig::parse(config) {
            Ok(c) if c.fibonacci_transactions => ConnectorTransactionBoundaries::Supported,
            _ => ConnectorTransactionBoundaries::Unsupported,
        }
    }
}

/// The transactions a task defines with `define.transactions=fibonacci`: the next boundary
/// seqno (a Fibonacci number) and how many boundaries came before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FibonacciBoundaries {
    previous: i64,
    next: i64,
    index: u64,
}

impl FibonacciBoundaries {
    /// The first boundary at or after `seqno`.
    fn from(seqno: i64) -> Self {
        let mut b = FibonacciBoundaries {
            previous: 1,
            next: 1,
            index: 0,
        };
        while b.next < seqno {
            b.advance();
        }
        b
    }

    fn advance(&mut self) {
        (self.previous, self.next) = (self.next, self.previous + self.next);
        self.index += 1;
    }
}

/// A task of [`FlakySourceConnector`]; see the module docs.
pub struct FlakySourceTask {
    context: Option<SourceTaskContext>,
    clock: Arc<dyn Clock>,
    id: u32,
    topic: String,
    records_per_second: f64,
    fail_at_start: bool,
    trigger_file: Option<PathBuf>,
    config: Option<FlakyConfig>,
    partition: Arc<SourceMap>,
    seqno: i64,
    start_ms: i64,
    emitted: u64,
    /// Records returned by `poll` since the task started, shown as the task's plugin metric
    /// `records-polled` (KIP-877, tagged `topic`).
    polled: Arc<std::sync::atomic::AtomicU64>,
    /// Set with `define.transactions=fibonacci` and a transaction context.
    transactions: Option<FibonacciBoundaries>,
}

impl Default for FlakySourceTask {
    fn default() -> Self {
        Self::new()
    }
}

impl FlakySourceTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    pub(crate) fn with_clock(clock: Arc<dyn Clock>) -> Self {
        FlakySourceTask {
            context: None,
            clock,
            id: 0,
            topic: String::new(),
            records_per_second: 1.0,
            fail_at_start: false,
            trigger_file: None,
            config: None,
            partition: Arc::default(),
            seqno: 0,
            start_ms: 0,
            emitted: 0,
            polled: Arc::default(),
            transactions: None,
        }
    }

    fn record(&self, seqno: i64) -> SourceRecord {
        let mut offset = SourceMap::new();
        offset.insert(SEQNO_FIELD.into(), seqno.into());
        let mut record = SourceRecord::new(
            Arc::clone(&self.partition),
            offset,
            self.topic.clone(),
            Some(Schema::int64_schema()),
            Value::Int64(seqno),
        );
        record.key_schema = Some(Schema::int32_schema());
        record.key = Value::Int32(self.id as i32);
        record
    }

    /// With Fibonacci transactions: when `batch` ends at the next boundary, asks for the
    /// transaction to be committed (odd boundary) or aborted (even), naming the record or the
    /// batch in turn.
    fn define_transaction(&mut self, batch: &[SourceRecord]) {
        let (Some(b), Some(last)) = (self.transactions.as_mut(), batch.last()) else {
            return;
        };
        if self.seqno - 1 != b.next {
            return;
        }
        let Some(tc) = self
            .context
            .as_ref()
            .and_then(|c| c.transaction_context.as_ref())
        else {
            return;
        };
        let commit = b.next % 2 == 1;
        match (commit, b.index % 2 == 0) {
            (true, true) => tc.commit_transaction_for(last),
            (true, false) => tc.commit_transaction(),
            (false, true) => tc.abort_transaction_for(last),
            (false, false) => tc.abort_transaction(),
        }
        b.advance();
    }
}

impl SourceTask for FlakySourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Parses the config (the task number `id` is required) and resumes after the committed
    /// offset of partition `{"task": <id>}`.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let config = FlakyConfig::parse(props)?;
        self.id = parse_int(props.get(TASK_ID_CONFIG)).ok_or_else(|| {
            ConnectError::config(format!(
                "FlakySourceTask needs a task number in '{TASK_ID_CONFIG}'"
            ))
        })?;
        self.topic = config.topic.clone();
        self.records_per_second = config.records_per_second;
        self.fail_at_start = config.fail_tasks.contains(&self.id);
        self.trigger_file = config
            .trigger_dir
            .as_ref()
            .map(|dir| dir.join(format!("fail-{}", self.id)));
        let mut partition = SourceMap::new();
        partition.insert(TASK_FIELD.into(), self.id.into());
        self.partition = Arc::new(partition);
        let previous = match &self.context {
            Some(ctx) => ctx.offset_reader.offset(&self.partition)?,
            None => None,
        };
        self.seqno = previous
            .and_then(|o| offset_seqno(&o, SEQNO_FIELD))
            .map_or(0, |s| s + 1);
        self.start_ms = self.clock.now_ms();
        self.emitted = 0;
        if let Some(ctx) = &self.context {
            let metrics = &ctx.plugin_metrics;
            let name = metrics.metric_name(
                POLLED_METRIC,
                "Records the task returned from poll since it started",
                &[("topic", &self.topic)],
            )?;
            let polled = Arc::clone(&self.polled);
            metrics.add_metric(&name, move || {
                polled.load(std::sync::atomic::Ordering::Relaxed) as f64
            })?;
        }
        let has_transaction_context = self
            .context
            .as_ref()
            .is_some_and(|c| c.transaction_context.is_some());
        self.transactions = (config.fibonacci_transactions && has_transaction_context)
            .then(|| FibonacciBoundaries::from(self.seqno));
        config.record_lifecycle(self.id, "start");
        self.config = Some(config);
        info!(
            "Started FlakySourceTask {} producing to {} from seqno {}{}",
            self.id,
            self.topic,
            self.seqno,
            if self.fail_at_start {
                " (will fail: listed in fail.tasks)"
            } else {
                ""
            }
        );
        Ok(())
    }

    /// Fails if this task is listed in `fail.tasks` or its trigger file exists; otherwise
    /// returns the records due by now at the configured rate (at most 500), or waits up to
    /// 100 ms and returns none.
    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        if let Some(c) = &self.config {
            c.maybe_block("task.poll");
        }
        if self.fail_at_start {
            return Err(ConnectError::connect(format!(
                "FlakySourceTask {} failed as configured by {FAIL_TASKS_CONFIG}",
                self.id
            )));
        }
        if let Some(trigger) = &self.trigger_file {
            if trigger.exists() {
                return Err(ConnectError::connect(format!(
                    "FlakySourceTask {} failed: trigger file {} exists",
                    self.id,
                    trigger.display()
                )));
            }
        }
        let stopping = self.context.as_ref().is_some_and(|c| c.is_stopping());
        if self.records_per_second <= 0.0 {
            if let Some(c) = self.context.as_ref().filter(|_| !stopping) {
                self.clock.wait_for_stop(WAIT_SLICE, &c.stopping);
            }
            return Ok(Vec::new());
        }
        let now = self.clock.now_ms();
        let elapsed_ms = (now - self.start_ms).max(0) as f64;
        // The first record is due at once, then one every 1/rate seconds.
        let due = (elapsed_ms * self.records_per_second / 1000.0).floor() as u64 + 1;
        if self.emitted < due {
            let mut n = (due - self.emitted).min(MAX_BATCH);
            if let Some(b) = &self.transactions {
                // A batch never goes past the next boundary.
                n = n.min((b.next - self.seqno + 1).max(1) as u64);
            }
            let records: Vec<_> = (0..n).map(|i| self.record(self.seqno + i as i64)).collect();
            self.seqno += n as i64;
            self.emitted += n;
            self.polled
                .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            self.define_transaction(&records);
            return Ok(records);
        }
        if !stopping {
            let next_due_ms = self.emitted as f64 * 1000.0 / self.records_per_second;
            let wait_ms = (next_due_ms - elapsed_ms).ceil().max(1.0);
            let wait = Duration::from_millis(wait_ms as u64).min(WAIT_SLICE);
            match &self.context {
                Some(c) => {
                    self.clock.wait_for_stop(wait, &c.stopping);
                }
                None => self.clock.sleep(wait),
            }
        }
        Ok(Vec::new())
    }

    fn stop(&mut self) -> ConnectResult<()> {
        if let Some(c) = &self.config {
            c.maybe_block("task.stop");
            c.record_lifecycle(self.id, "stop");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{context, props, FakeClock, MemOffsets};
    use super::*;

    fn started(p: &Props, offsets: Arc<MemOffsets>, clock: Arc<dyn Clock>) -> FlakySourceTask {
        let (ctx, _) = context(p, offsets);
        let mut t = FlakySourceTask::with_clock(clock);
        t.initialize(ctx);
        t.start(p).unwrap();
        t
    }

    fn task_props(id: u32, extra: &[(&str, &str)]) -> Props {
        let mut p = props(&[("topic", "flaky"), ("records.per.second", "1000")]);
        p.insert("id".into(), id.to_string());
        p.extend(props(extra));
        p
    }

    fn seqno(r: &SourceRecord) -> i64 {
        match r.value {
            Value::Int64(n) => n,
            ref v => panic!("unexpected value {v:?}"),
        }
    }

    /// Polls until `n` records arrived (bounded).
    fn take(t: &mut FlakySourceTask, n: usize) -> Vec<SourceRecord> {
        let mut out = Vec::new();
        for _ in 0..10_000 {
            if out.len() >= n {
                break;
            }
            out.extend(t.poll().unwrap());
        }
        assert!(out.len() >= n, "got {} of {n} records", out.len());
        out
    }

    #[test]
    fn connector_validates_and_numbers_its_tasks() {
        let mut c = FlakySourceConnector::new();
        assert!(c.start(&props(&[])).is_err(), "topic required");
        assert!(c
            .start(&props(&[("topic", "t"), ("fail.tasks", "1,x")]))
            .is_err());
        assert!(c
            .start(&props(&[("topic", "t"), ("records.per.second", "-1")]))
            .is_err());
        c.start(&props(&[("topic", "t"), ("fail.tasks", "1, 2")]))
            .unwrap();
        let configs = c.task_configs(3).unwrap();
        let ids: Vec<_> = configs.iter().map(|p| p["id"].as_str()).collect();
        assert_eq!(ids, vec!["0", "1", "2"]);
        assert!(configs.iter().all(|p| p["fail.tasks"] == "1, 2"));
        assert_eq!(c.task_class(), FLAKY_SOURCE_TASK_CLASS);
        // `tasks.generated` ignores `tasks.max` (a connector Connect refuses, KIP-1004).
        c.start(&props(&[("topic", "t"), ("tasks.generated", "3")]))
            .unwrap();
        assert_eq!(c.task_configs(1).unwrap().len(), 3);
        assert!(c
            .start(&props(&[("topic", "t"), ("tasks.generated", "-1")]))
            .is_err());
    }

    #[test]
    fn healthy_task_emits_numbered_records_and_resumes() {
        let offsets = Arc::new(MemOffsets::default());
        let mut t = started(&task_props(2, &[]), offsets.clone(), Arc::new(SystemClock));
        let records = take(&mut t, 3);
        let first = &records[0];
        assert_eq!(
            serde_json::Value::Object((*first.source_partition).clone()),
            serde_json::json!({"task": 2})
        );
        assert_eq!(first.key, Value::Int32(2));
        assert_eq!(first.topic, "flaky");
        let seqnos: Vec<_> = records.iter().map(seqno).collect();
        assert_eq!(seqnos[..3], [0, 1, 2]);
        for r in &records {
            assert_eq!(r.source_offset["seqno"], seqno(r));
        }

        offsets.put(
            serde_json::json!({"task": 2}),
            serde_json::json!({"seqno": 9}),
        );
        let mut again = started(&task_props(2, &[]), offsets, Arc::new(SystemClock));
        assert_eq!(seqno(&take(&mut again, 1)[0]), 10);
    }

    #[test]
    fn rate_is_honoured_over_simulated_time() {
        for (rate, secs, expected) in [("1", 5, 6), ("5", 2, 11), ("0.5", 4, 3)] {
            let clock = FakeClock::at(0);
            let p = task_props(0, &[("records.per.second", rate)]);
            let mut t = started(&p, Arc::default(), clock.clone());
            let end = clock.peek() + secs * 1000;
            let mut count = 0;
            let mut polls = 0;
            while clock.peek() < end {
                count += t.poll().unwrap().len();
                polls += 1;
                assert!(polls < 100_000);
            }
            // The first record is due at once, then one per period.
            assert!(
                (expected - 1..=expected).contains(&count),
                "rate {rate}: {count} records in {secs} s"
            );
        }
        // Zero: no records, and polls still return.
        let clock = FakeClock::at(0);
        let mut idle = started(
            &task_props(0, &[("records.per.second", "0")]),
            Arc::default(),
            clock.clone(),
        );
        for _ in 0..20 {
            assert!(idle.poll().unwrap().is_empty());
        }
        assert!(
            clock.peek() <= 20 * 101 + 10,
            "each idle poll waits about 100 ms"
        );
    }

    #[test]
    fn listed_tasks_fail_at_first_poll_and_others_run() {
        let extra = [("fail.tasks", "1,3")];
        for id in [1, 3] {
            let mut t = started(
                &task_props(id, &extra),
                Arc::default(),
                Arc::new(SystemClock),
            );
            let err = t.poll().unwrap_err();
            assert!(err.to_string().contains("fail.tasks"), "{err}");
        }
        for id in [0, 2] {
            let mut t = started(
                &task_props(id, &extra),
                Arc::default(),
                Arc::new(SystemClock),
            );
            assert!(!take(&mut t, 1).is_empty());
        }
    }

    #[test]
    fn trigger_file_fails_its_task_at_next_poll() {
        let dir = tempfile::tempdir().unwrap();
        let dir_str = dir.path().to_str().unwrap().to_string();
        let extra = [("fail.trigger.dir", dir_str.as_str())];
        let mut t0 = started(
            &task_props(0, &extra),
            Arc::default(),
            Arc::new(SystemClock),
        );
        let mut t1 = started(
            &task_props(1, &extra),
            Arc::default(),
            Arc::new(SystemClock),
        );
        take(&mut t0, 1);
        take(&mut t1, 1);

        std::fs::write(dir.path().join("fail-1"), b"").unwrap();
        let err = t1.poll().unwrap_err();
        assert!(err.to_string().contains("fail-1"), "{err}");
        take(&mut t0, 2); // other tasks unaffected

        // Still there: a restarted task fails again; once removed, it runs.
        let mut restarted = started(
            &task_props(1, &extra),
            Arc::default(),
            Arc::new(SystemClock),
        );
        assert!(restarted.poll().is_err());
        std::fs::remove_file(dir.path().join("fail-1")).unwrap();
        let mut restarted = started(
            &task_props(1, &extra),
            Arc::default(),
            Arc::new(SystemClock),
        );
        take(&mut restarted, 1);
    }

    #[test]
    fn missing_task_number_is_rejected() {
        let mut t = FlakySourceTask::new();
        assert!(t.start(&props(&[("topic", "t")])).is_err());
    }

    /// The transactions a Fibonacci task asks for, as the runtime reads the requests: (last
    /// seqno, committed?) for each, over `polls` polls, resuming at `offset` when given.
    fn fibonacci_requests(offset: Option<i64>, until: i64) -> Vec<(i64, bool)> {
        use tributary_api::source::{TransactionBoundaryRequest, TransactionContext};
        let p = task_props(0, &[("define.transactions", "fibonacci")]);
        let offsets = Arc::new(MemOffsets::default());
        if let Some(o) = offset {
            offsets.put(
                serde_json::json!({"task": 0}),
                serde_json::json!({"seqno": o}),
            );
        }
        let (mut ctx, _) = context(&p, offsets);
        let tc = Arc::new(TransactionContext::default());
        ctx.transaction_context = Some(tc.clone());
        let mut t = FlakySourceTask::with_clock(FakeClock::at(0));
        t.initialize(ctx);
        t.start(&p).unwrap();
        let mut ended = Vec::new();
        let mut last = -1;
        while last < until {
            let batch = t.poll().unwrap();
            for r in &batch {
                last = seqno(r);
                if let Some(req) = tc.take_for_record(r).unwrap() {
                    ended.push((last, req == TransactionBoundaryRequest::Commit));
                }
            }
            if let Some(req) = tc.take_for_batch().unwrap() {
                ended.push((last, req == TransactionBoundaryRequest::Commit));
            }
        }
        ended
    }

    #[test]
    fn fibonacci_transactions_end_at_fibonacci_seqnos_committing_odd_ones() {
        assert_eq!(
            fibonacci_requests(None, 34),
            vec![
                (1, true),
                (2, false),
                (3, true),
                (5, true),
                (8, false),
                (13, true),
                (21, true),
                (34, false)
            ]
        );
        // Resumed after seqno 5: the same boundaries from there on.
        assert_eq!(
            fibonacci_requests(Some(5), 21),
            vec![(8, false), (13, true), (21, true)]
        );
        // Without a transaction context (no exactly-once support), nothing is asked.
        let p = task_props(0, &[("define.transactions", "fibonacci")]);
        let mut t = started(&p, Arc::default(), FakeClock::at(0));
        assert!(take(&mut t, 40).len() >= 40);
        let mut c = FlakySourceConnector::new();
        assert_eq!(
            c.can_define_transaction_boundaries(&p),
            ConnectorTransactionBoundaries::Supported
        );
        assert_eq!(
            c.can_define_transaction_boundaries(&task_props(0, &[])),
            ConnectorTransactionBoundaries::Unsupported
        );
        assert!(c
            .start(&props(&[("topic", "t"), ("define.transactions", "x")]))
            .is_err());
    }
}
