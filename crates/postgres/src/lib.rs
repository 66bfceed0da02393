//! Debezium's PostgreSQL connector natively (issue #45): `io.debezium.connector.postgresql.
//! PostgresConnector` writing the change events, schemas and offsets Debezium 3.6.1 writes.
//!
//! - [`config`]: Debezium's settings, and the refusal (naming the key) of each one this version
//!   does not implement;
//! - [`types`]: column types as Debezium represents them in Connect;
//! - [`envelope`]: key and value schemas, the `source` block, the envelope, offsets;
//! - [`snapshot`]: the consistent initial snapshot;
//! - [`pgoutput`] and [`streaming`]: changes from a logical replication slot.
//!
//! The native connector is the default version of its class (`PluginSet::native_defaults`):
//! with Debezium's plugin on `plugin.path` too, a connector runs natively unless
//! `connector.plugin.version` asks for Debezium's version (3.6.1.Final, KIP-891). A setting or
//! a captured column type this version does not implement is refused by name at validation,
//! pointing to that version.

pub mod config;
pub mod decoderbufs;
pub mod envelope;
pub mod pgoutput;
pub mod resume;
pub mod slot;
pub mod snapshot;
pub mod streaming;
pub mod tls;
pub mod transaction;
pub mod types;

use tokio::sync::mpsc;
use tributary_api::config::{ConfigDef, ConfigValue};
use tributary_api::connector::{Connector, ConnectorType};
use tributary_api::plugin::{ConnectorPlugin, PluginSet, TaskFactory, TaskPlugin};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::source::{AsyncSourceTask, SourceTaskContext, TaskFuture};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::config::PostgresConfig;
use crate::envelope::EventBuilder;

/// Debezium's connector class, under which the native connector runs.
pub const CONNECTOR_CLASS: &str = "io.debezium.connector.postgresql.PostgresConnector";
/// Debezium's task class.
pub const TASK_CLASS: &str = "io.debezium.connector.postgresql.PostgresConnectorTask";
/// The native connector's version: Tributary's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The native connector and its task, the default version of the class
/// (`PluginSet::native_defaults`): Debezium's plugin of the class, when on `plugin.path`, is
/// kept as another version, chosen by `connector.plugin.version`.
pub fn plugins() -> PluginSet {
    PluginSet {
        connectors: vec![ConnectorPlugin::native(
            CONNECTOR_CLASS,
            VERSION,
            ConnectorType::Source,
            || Box::new(PostgresConnector::default()),
        )],
        tasks: vec![TaskPlugin {
            class: TASK_CLASS,
            new: TaskFactory::async_source(|| Box::new(PostgresConnectorTask::default())),
        }],
        native_defaults: vec![CONNECTOR_CLASS],
        ..PluginSet::default()
    }
}

/// `PostgresConnector`: one task (Debezium's PostgreSQL connector never runs more).
#[derive(Default)]
pub struct PostgresConnector {
    props: Props,
}

impl Connector for PostgresConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }

    fn task_class(&self) -> String {
        TASK_CLASS.to_string()
    }

    /// Errors: a setting refused or invalid (named).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        PostgresConfig::parse(props)?;
        self.props = props.clone();
        Ok(())
    }

    fn task_configs(&mut self, _max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(vec![self.props.clone()])
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }

    fn config(&self) -> ConfigDef {
        config::config_def()
    }

    /// Connect's checks of the keys, plus one error on each refused setting.
    fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        let mut values = self.config().validate(props);
        for (key, message) in config::refused_settings(props) {
            // A refused key may hold a secret (`database.sslpassword`, …): shown as Connect
            // shows a password, never in plain text.
            let secret = ["password", "secret", "credential"]
                .iter()
                .any(|w| key.to_ascii_lowercase().contains(w));
            let value = if secret {
                props.get(&key).map(|_| "[hidden]")
            } else {
                props.get(&key).map(String::as_str)
            };
            ConfigValue::add_error(&mut values, &key, value, message);
        }
        // Debezium checks the database only when every setting is valid.
        if values.iter().all(|v| v.errors.is_empty()) {
            if let Err((key, message)) = check_database(props) {
                let value = props.get(key).map(String::as_str);
                ConfigValue::add_error(&mut values, key, value, message);
            }
        }
        values
    }
}

/// The check of the database behind `validate` (Debezium's
/// `PostgresConnector.validateConnection`), within `connection.validation.timeout.ms`: a
/// connection and `SELECT version()`, then, natively, the captured tables' columns, so that a
/// column of a type this version does not map is refused before the connector is created.
/// Errors: the key the error belongs on (`database.hostname` for the connection's, as Debezium
/// reports it; `column.exclude.list` for a column's, the setting that leaves it out) and the
/// message. Runs on its own thread and runtime: `validate` is synchronous.
fn check_database(props: &Props) -> Result<(), (&'static str, String)> {
    const HOST: &str = "database.hostname";
    // A setting only connecting shows wrong (a key `database.sslpassword` does not decrypt) is
    // reported as Debezium's driver reports it: as the connection's error.
    let config = PostgresConfig::parse(props).map_err(|e| {
        (
            HOST,
            format!("Error while validating connector config: {e}"),
        )
    })?;
    let timeout = config.validation_timeout;
    let (tx, rx) = std::sync::mpsc::channel();
    let check = move || {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                tx.send(Err((
                    HOST,
                    format!("Error during connection validation: {e}"),
                )))
                .ok();
                return;
            }
        };
        let result = runtime.block_on(async {
            let failed = |e: ConnectError| {
                (
                    HOST,
                    format!("Error while validating connector config: {e}"),
                )
            };
            let client = snapshot::connect(&config).await.map_err(failed)?;
            client
                .simple_query("SELECT version()")
                .await
                .map_err(|e| failed(snapshot::pg_failure("SELECT version()", &e)))?;
            snapshot::captured_tables(&client, &config)
                .await
                .map(drop)
                .map_err(|e| ("column.exclude.list", e.to_string()))
        });
        tx.send(result).ok();
    };
    if let Err(e) = std::thread::Builder::new()
        .name("postgres-connection-validation".into())
        .spawn(check)
    {
        return Err((HOST, format!("Error during connection validation: {e}")));
    }
    match rx.recv_timeout(timeout) {
        Ok(result) => result,
        Err(_) => Err((
            HOST,
            format!(
                "Connection validation timed out after {} ms",
                timeout.as_millis()
            ),
        )),
    }
}

/// What the task does next.
enum State {
    /// Not started, or stopped.
    Idle,
    /// Taking the snapshot: its records arrive on the channel, which closes when it is done.
    Snapshot {
        records: mpsc::Receiver<ConnectResult<Vec<SourceRecord>>>,
        reader: tokio::task::JoinHandle<()>,
    },
    /// Streaming from the slot: records arrive on the channel; `handle` confirms the
    /// positions the offsets of `partition` commit.
    Streaming {
        records: mpsc::Receiver<ConnectResult<Vec<SourceRecord>>>,
        reader: tokio::task::JoinHandle<()>,
        handle: streaming::StreamingHandle,
        partition: SourceMap,
    },
    /// Nothing left to read (`initial_only` after its snapshot).
    Done,
    /// The connection failed: starting again from the committed offset at `at`
    /// (`retriable.restart.connector.wait.ms` after the failure).
    Restarting { at: tokio::time::Instant },
}

/// The committed offset of `partition`, read off the runtime's thread. Errors: the task was
/// not initialized, the offset store's.
async fn committed_offset(
    context: Option<&SourceTaskContext>,
    partition: &SourceMap,
) -> ConnectResult<Option<SourceMap>> {
    let reader = context
        .map(|c| c.offset_reader.clone())
        .ok_or_else(|| ConnectError::connect("the task was not initialized"))?;
    let partition = partition.clone();
    tokio::task::spawn_blocking(move || reader.offset(&partition))
        .await
        .map_err(|e| ConnectError::connect(format!("reading the offset: {e}")))?
}

/// `PostgresConnectorTask`.
pub struct PostgresConnectorTask {
    context: Option<SourceTaskContext>,
    state: State,
    /// The task's configuration, kept to start again after a connection failure.
    props: Props,
}

impl Default for PostgresConnectorTask {
    fn default() -> Self {
        PostgresConnectorTask {
            context: None,
            state: State::Idle,
            props: Props::new(),
        }
    }
}

impl PostgresConnectorTask {
    /// Reads the committed offset and starts what `snapshot.mode` asks: `no_data` streams from
    /// it ([`resume::Resume`]); `initial` streams from it when it says the snapshot is done,
    /// else snapshots (again from the beginning, as Debezium redoes an interrupted one) and
    /// then streams; `initial_only` snapshots unless one completed. Errors: a setting (named),
    /// the offset store's, the database's (retriable when the connection failed).
    async fn begin(&mut self) -> ConnectResult<()> {
        let config = PostgresConfig::parse(&self.props)?;
        let events = EventBuilder::new(&config.topic_prefix, &config.dbname);
        let partition = (*events.partition).clone();
        let offset = committed_offset(self.context.as_ref(), &partition).await?;
        let plan = resume::plan(&config, offset.as_ref()).await?;
        if let Some(plan) = plan {
            let (handle, confirmed) = streaming::confirmations();
            let (tx, rx) = mpsc::channel(config.queued_batches());
            let reader = tokio::spawn(async move {
                if let Err(e) = streaming::run(&config, &events, &tx, confirmed, plan).await {
                    tx.send(Err(e)).await.ok();
                }
            });
            self.state = State::Streaming {
                records: rx,
                reader,
                handle,
                partition,
            };
            return Ok(());
        }
        if let Some(offset) = offset.filter(envelope::snapshot_done) {
            tracing::info!(
                ?offset,
                "Previous snapshot has completed successfully; snapshot.mode=initial_only has nothing more to do"
            );
            self.state = State::Done;
            return Ok(());
        }
        let (tx, rx) = mpsc::channel(config.queued_batches());
        let reader = tokio::spawn(async move {
            if let Err(e) = snapshot::run(&config, &events, &tx, None).await {
                // Nobody to tell when the task already stopped.
                tx.send(Err(e)).await.ok();
            }
        });
        self.state = State::Snapshot {
            records: rx,
            reader,
        };
        Ok(())
    }

    /// After a retriable failure (the connection to PostgreSQL broke): stops reading and
    /// starts again from the committed offset after `retriable.restart.connector.wait.ms`,
    /// as Debezium restarts its task; records already handed over may come again
    /// (at-least-once), none is skipped.
    fn restart_later(&mut self, cause: &ConnectError) {
        let wait = PostgresConfig::parse(&self.props)
            .map(|c| c.retry_wait)
            .unwrap_or(std::time::Duration::from_secs(10));
        tracing::warn!(
            "{cause}; the connector will restart from its committed offset in {} ms",
            wait.as_millis()
        );
        if let State::Snapshot { reader, .. } | State::Streaming { reader, .. } = std::mem::replace(
            &mut self.state,
            State::Restarting {
                at: tokio::time::Instant::now() + wait,
            },
        ) {
            reader.abort();
        }
    }
}

impl AsyncSourceTask for PostgresConnectorTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Checks the settings and begins (see `begin`). Errors: a setting (named), the offset
    /// store's, the database's.
    fn start<'a>(&'a mut self, props: &'a Props) -> TaskFuture<'a, ()> {
        Box::pin(async move {
            let config = PostgresConfig::parse(props)?;
            for key in config::ignored_settings(props) {
                tracing::warn!(
                    "The configuration '{key}' was supplied but is not a setting of Debezium's PostgresConnector 3.6.1, which ignores it; ignored"
                );
            }
            if config.slot_drop_on_stop {
                tracing::warn!(
                    "Connector has enabled automated replication slot removal upon restart (slot.drop.on.stop = true). This setting is not recommended for production environments, as a new replication slot will be created after a connector restart, resulting in missed data change events."
                );
            }
            self.props = props.clone();
            self.begin().await
        })
    }

    /// The snapshot's or the stream's next batch; once the snapshot is done (`initial_only`),
    /// empty batches once a second. A retriable failure (the connection broke) starts the
    /// task again from its committed offset after `retriable.restart.connector.wait.ms`.
    /// Errors: the others (a change that cannot be represented, the database refusing), which
    /// fail the task.
    fn poll(&mut self) -> TaskFuture<'_, Vec<SourceRecord>> {
        Box::pin(async move {
            let wait = std::time::Duration::from_secs(1);
            let received = match &mut self.state {
                State::Snapshot { records, .. } => match records.recv().await {
                    Some(batch) => Some(batch),
                    None => {
                        self.state = State::Done;
                        None
                    }
                },
                State::Streaming { records, .. } => {
                    Some(match tokio::time::timeout(wait, records.recv()).await {
                        Ok(Some(batch)) => batch,
                        Ok(None) => Err(ConnectError::connect("the replication stream ended")),
                        Err(_) => Ok(Vec::new()),
                    })
                }
                State::Restarting { at } => {
                    let at = *at;
                    if tokio::time::Instant::now() < at {
                        let until = at.min(tokio::time::Instant::now() + wait);
                        tokio::time::sleep_until(until).await;
                        return Ok(Vec::new());
                    }
                    Some(self.begin().await.map(|()| Vec::new()))
                }
                State::Idle | State::Done => None,
            };
            if let Some(received) = received {
                return match received {
                    Err(e @ ConnectError::Retriable(_)) => {
                        self.restart_later(&e);
                        Ok(Vec::new())
                    }
                    other => other,
                };
            }
            if let Some(c) = &self.context {
                let stopped = c.stopping.stopped();
                tokio::time::timeout(std::time::Duration::from_secs(1), stopped)
                    .await
                    .ok();
            }
            Ok(Vec::new())
        })
    }

    /// Once offsets were committed, confirms the last committed transaction's end to the
    /// server (`lsn_commit` of the committed offset), so the slot keeps the WAL of every change
    /// not yet durable in Kafka and nothing else.
    fn commit(&mut self) -> TaskFuture<'_, ()> {
        Box::pin(async move {
            let State::Streaming {
                handle, partition, ..
            } = &self.state
            else {
                return Ok(());
            };
            let offset = committed_offset(self.context.as_ref(), partition).await?;
            if let Some(lsn) = offset
                .as_ref()
                .and_then(|o| o.get("lsn_commit"))
                .and_then(serde_json::Value::as_u64)
            {
                handle.confirm(lsn);
            }
            Ok(())
        })
    }

    /// Stops reading; under `slot.drop.on.stop` drops the slot once the replication
    /// connection has let go of it, as Debezium's replication connection does on close.
    /// Errors: none (a slot that cannot be dropped is logged).
    fn stop(&mut self) -> TaskFuture<'_, ()> {
        Box::pin(async move {
            let streamed = match std::mem::replace(&mut self.state, State::Idle) {
                State::Snapshot { reader, .. } | State::Streaming { reader, .. } => {
                    reader.abort();
                    reader.await.ok();
                    true
                }
                _ => false,
            };
            if let (true, Ok(config)) = (streamed, PostgresConfig::parse(&self.props)) {
                if config.slot_drop_on_stop {
                    slot::drop_slot(&config).await;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_never_echoes_a_refused_secret() {
        let props: Props = [
            ("connector.class", CONNECTOR_CLASS),
            ("database.hostname", "db"),
            ("database.user", "u"),
            ("database.dbname", "inventory"),
            ("topic.prefix", "p"),
            ("plugin.name", "pgoutput"),
            ("database.sslpassword", "k3y-pw"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let values = PostgresConnector::default().validate(&props);
        let shown = format!("{values:?}");
        assert!(shown.contains("database.sslpassword"), "refused by name");
        assert!(!shown.contains("k3y-pw"), "{shown}");
    }
}
