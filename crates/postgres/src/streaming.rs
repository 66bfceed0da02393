//! Streaming changes from a logical replication slot with `pgoutput`, as Debezium's
//! `PostgresStreamingChangeEventSource` does: the publication and the slot created when
//! missing (`publication.autocreate.mode`), row changes as `c`, `u` and `d` events (a key
//! change as a delete, its tombstone and a create; a delete followed by its tombstone when
//! `tombstones.on.delete`), truncates skipped (Debezium's default `skipped.operations=t`),
//! TOAST-ed values that did not change as `__debezium_unavailable_value`; the slot's position
//! confirmed to the server only once the offsets holding it are committed
//! ([`StreamingHandle::confirm`]).

use std::collections::HashMap;

use pgwire_replication::{Lsn, ReplicationClient, ReplicationConfig, ReplicationEvent, TlsConfig};
use tokio::sync::{mpsc, watch};
use tributary_api::data::Value;
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::{PostgresConfig, PublicationAutocreate};
use crate::envelope::{java_ordered, CapturedTable, EventBuilder, SourcePosition};
use crate::pgoutput::{self, Datum, Message};
use crate::snapshot::{self, quote_ident};
use crate::types::Kind;

/// What Debezium puts in place of a TOAST-ed value that did not change
/// (`unavailable.value.placeholder`'s default).
pub const UNAVAILABLE_VALUE: &str = "__debezium_unavailable_value";

/// Microseconds between PostgreSQL's epoch (2000-01-01) and Unix's.
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// Records per batch handed to the task at most.
const BATCH: usize = 1_000;

fn replication_error(e: impl std::fmt::Display) -> ConnectError {
    ConnectError::connect(format!("replication stream: {e}"))
}

/// Creates the publication (per `publication.autocreate.mode`) and the slot when missing.
/// Errors: the database's; a missing publication with `disabled`.
async fn prepare(client: &tokio_postgres::Client, config: &PostgresConfig) -> ConnectResult<()> {
    let pg = |what: &'static str| {
        move |e: tokio_postgres::Error| {
            let detail = e
                .as_db_error()
                .map(|d| format!("{}: {}", d.code().code(), d.message()))
                .unwrap_or_else(|| e.to_string());
            ConnectError::connect(format!("{what}: {detail}"))
        }
    };
    let exists = client
        .query_opt(
            "SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = $1",
            &[&config.publication_name],
        )
        .await
        .map_err(pg("looking for the publication"))?
        .is_some();
    if !exists {
        let name = quote_ident(&config.publication_name);
        let sql = match config.publication_autocreate {
            PublicationAutocreate::Disabled => {
                return Err(ConnectError::connect(format!(
                    "Publication '{}' does not exist and publication.autocreate.mode is disabled",
                    config.publication_name
                )))
            }
            PublicationAutocreate::AllTables => format!("CREATE PUBLICATION {name} FOR ALL TABLES"),
            PublicationAutocreate::Filtered => {
                let tables = snapshot::captured_tables(client, config).await?;
                if tables.is_empty() {
                    return Err(ConnectError::connect(format!(
                        "No table filters found for filtered publication {}",
                        config.publication_name
                    )));
                }
                let list: Vec<String> = tables
                    .iter()
                    .map(|t| format!("{}.{}", quote_ident(&t.schema), quote_ident(&t.table)))
                    .collect();
                format!("CREATE PUBLICATION {name} FOR TABLE {}", list.join(", "))
            }
        };
        tracing::info!("Creating publication: {sql}");
        client
            .batch_execute(&sql)
            .await
            .map_err(pg("creating the publication"))?;
    }
    let slot = client
        .query_opt(
            "SELECT plugin FROM pg_catalog.pg_replication_slots \
             WHERE slot_name = $1 AND database = current_database()",
            &[&config.slot_name],
        )
        .await
        .map_err(pg("looking for the replication slot"))?;
    match slot {
        Some(row) => {
            let plugin: String = row.get(0);
            if plugin != "pgoutput" {
                return Err(ConnectError::connect(format!(
                    "replication slot '{}' uses plugin {plugin}, not pgoutput",
                    config.slot_name
                )));
            }
        }
        None => {
            tracing::info!(
                "Creating replication slot '{}' (pgoutput)",
                config.slot_name
            );
            client
                .query(
                    "SELECT pg_catalog.pg_create_logical_replication_slot($1, 'pgoutput')",
                    &[&config.slot_name],
                )
                .await
                .map_err(pg("creating the replication slot"))?;
        }
    }
    Ok(())
}

/// The task's side of a running stream: confirms positions to the server.
#[derive(Clone)]
pub struct StreamingHandle {
    confirmed: watch::Sender<u64>,
}

impl StreamingHandle {
    /// Confirms to the server that every change before `lsn` is durable (the slot may release
    /// the WAL before it). Called once the offsets holding it are committed.
    pub fn confirm(&self, lsn: u64) {
        self.confirmed.send_if_modified(|current| {
            let raise = lsn > *current;
            if raise {
                *current = lsn;
            }
            raise
        });
    }
}

/// The stream's state between messages.
struct Stream<'a> {
    config: &'a PostgresConfig,
    events: &'a EventBuilder,
    client: &'a tokio_postgres::Client,
    /// Captured tables by `schema.table`.
    tables: HashMap<String, CapturedTable>,
    /// Relation ids to `schema.table` and the column names the relation message listed.
    relations: HashMap<u32, (String, Vec<String>)>,
    /// The transaction being read: its id and commit time (µs since the Unix epoch).
    tx: Option<(i64, i64)>,
    /// Where the last transaction's commit ended (`lsn_commit`, `sequence`'s first element).
    last_commit_lsn: Option<i64>,
}

impl Stream<'_> {
    async fn reload_tables(&mut self) -> ConnectResult<()> {
        self.tables = snapshot::captured_tables(self.client, self.config)
            .await?
            .into_iter()
            .map(|t| (format!("{}.{}", t.schema, t.table), t))
            .collect();
        Ok(())
    }

    /// The captured table of relation `id`, its catalog read again when its columns changed.
    async fn table(&mut self, id: u32) -> ConnectResult<Option<&CapturedTable>> {
        let Some((name, columns)) = self.relations.get(&id).cloned() else {
            return Err(ConnectError::connect(format!(
                "a change of relation {id} came before its description"
            )));
        };
        let current =
            |t: &CapturedTable| t.columns.iter().map(|(c, _, _)| &c.name).eq(columns.iter());
        if self.tables.get(&name).is_some_and(|t| !current(t)) {
            self.reload_tables().await?;
        }
        Ok(self.tables.get(&name).filter(|t| current(t)))
    }

    /// A tuple as the text of each column, an unchanged TOAST-ed value as Debezium's
    /// placeholder. Errors: an unchanged value of a type Debezium would not give the
    /// placeholder to (named).
    fn texts(table: &CapturedTable, tuple: &[Datum]) -> ConnectResult<Vec<Option<String>>> {
        tuple
            .iter()
            .zip(&table.columns)
            .map(|(d, (c, _, kind))| match d {
                Datum::Null => Ok(None),
                Datum::Text(t) => Ok(Some(t.clone())),
                Datum::Unchanged => match kind {
                    Kind::Text | Kind::Named => Ok(Some(UNAVAILABLE_VALUE.to_string())),
                    Kind::Bytes => Ok(Some(format!(
                        "\\x{}",
                        UNAVAILABLE_VALUE
                            .bytes()
                            .map(|b| format!("{b:02x}"))
                            .collect::<String>()
                    ))),
                    _ => Err(ConnectError::connect(format!(
                        "column {}.{}.{} has a TOAST-ed value the native connector does not represent yet; {}",
                        table.schema,
                        table.table,
                        c.name,
                        crate::config::USE_HOSTED
                    ))),
                },
            })
            .collect()
    }

    fn row(table: &CapturedTable, tuple: &[Datum]) -> ConnectResult<Value> {
        let texts = Self::texts(table, tuple)?;
        let refs: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
        table.row(&refs)
    }

    /// A streaming record's offset (`PostgresOffsetContext.getOffset`), keys in Java's order.
    fn offset(&self, pos: &SourcePosition, message_type: &str) -> SourceMap {
        let mut entries: Vec<(&str, serde_json::Value)> = Vec::with_capacity(6);
        if let Some(lsn) = pos.lsn {
            entries.push(("lsn_proc", lsn.into()));
        }
        entries.push(("messageType", message_type.into()));
        if let Some(commit) = pos.last_commit_lsn {
            entries.push(("lsn_commit", commit.into()));
        }
        if let Some(lsn) = pos.lsn {
            entries.push(("lsn", lsn.into()));
        }
        if let Some(tx) = pos.tx_id {
            entries.push(("txId", tx.into()));
        }
        entries.push(("ts_usec", pos.ts_us.into()));
        java_ordered(&entries)
    }

    /// The records of one change message (none for a table not captured).
    async fn change(&mut self, lsn: i64, message: Message) -> ConnectResult<Vec<SourceRecord>> {
        let (tx_id, ts_us) = self.tx.unwrap_or((0, 0));
        let pos = SourcePosition {
            ts_us,
            tx_id: Some(tx_id),
            lsn: Some(lsn),
            last_commit_lsn: self.last_commit_lsn,
            snapshot: None,
        };
        let tombstones = self.config.tombstones_on_delete;
        let relation = match &message {
            Message::Insert { relation, .. }
            | Message::Update { relation, .. }
            | Message::Delete { relation, .. } => *relation,
            _ => return Ok(Vec::new()),
        };
        let offset_update = self.offset(&pos, "UPDATE");
        let offset_insert = self.offset(&pos, "INSERT");
        let offset_delete = self.offset(&pos, "DELETE");
        let events = self.events;
        let Some(table) = self.table(relation).await? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let delete = |out: &mut Vec<SourceRecord>, before: Value, offset: SourceMap| {
            let record = events.event(table, "d", before, Value::Null, &pos, offset)?;
            let tombstone = tombstones.then(|| {
                let mut t = record.clone();
                t.value_schema = None;
                t.value = Value::Null;
                t
            });
            out.push(record);
            out.extend(tombstone);
            ConnectResult::Ok(())
        };
        match message {
            Message::Insert { new, .. } => {
                let after = Self::row(table, &new)?;
                out.push(events.event(table, "c", Value::Null, after, &pos, offset_insert)?);
            }
            Message::Update {
                old: Some((b'K', old)),
                new,
                ..
            } => {
                // The key changed: Debezium's delete (with its tombstone) and create.
                delete(&mut out, Self::row(table, &old)?, offset_update.clone())?;
                let after = Self::row(table, &new)?;
                out.push(events.event(table, "c", Value::Null, after, &pos, offset_update)?);
            }
            Message::Update { old, new, .. } => {
                let before = match old {
                    Some((_, old)) => Self::row(table, &old)?,
                    None => Value::Null,
                };
                let after = Self::row(table, &new)?;
                out.push(events.event(table, "u", before, after, &pos, offset_update)?);
            }
            Message::Delete { old: (_, old), .. } => {
                delete(&mut out, Self::row(table, &old)?, offset_delete)?;
            }
            _ => {}
        }
        Ok(out)
    }
}

/// Streams from the slot until `out` closes (the task stopped), sending records in batches.
/// `confirmed` carries the positions the task confirms ([`StreamingHandle`]). Errors: the
/// database's, the stream's, a change that cannot be represented.
pub async fn run(
    config: &PostgresConfig,
    events: &EventBuilder,
    out: &mpsc::Sender<ConnectResult<Vec<SourceRecord>>>,
    mut confirmed: watch::Receiver<u64>,
) -> ConnectResult<()> {
    let client = snapshot::connect(config).await?;
    client
        .batch_execute(
            "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'; \
             SET extra_float_digits = 1; SET IntervalStyle = 'postgres'",
        )
        .await
        .map_err(|e| ConnectError::connect(format!("setting the session: {e}")))?;
    prepare(&client, config).await?;
    let mut stream = Stream {
        config,
        events,
        client: &client,
        tables: HashMap::new(),
        relations: HashMap::new(),
        tx: None,
        last_commit_lsn: None,
    };
    stream.reload_tables().await?;
    // pgoutput prints values with the walsender session's settings: pinned as the snapshot's.
    let repl = ReplicationConfig::new(
        config.hostname.clone(),
        config.user.clone(),
        config.password.clone().unwrap_or_default(),
        config.dbname.clone(),
        config.slot_name.clone(),
        config.publication_name.as_str(),
    )
    .with_port(config.port)
    .with_tls(TlsConfig::disabled())
    .with_start_lsn(Lsn(0))
    .with_options(
        "-c TimeZone=UTC -c DateStyle=ISO,MDY -c bytea_output=hex -c extra_float_digits=1 -c IntervalStyle=postgres",
    )
    .with_application_name("Debezium Streaming");
    let mut repl = ReplicationClient::connect(repl)
        .await
        .map_err(replication_error)?;
    tracing::info!(slot = %config.slot_name, "Streaming from the replication slot");
    let mut batch: Vec<SourceRecord> = Vec::new();
    loop {
        let event = tokio::select! {
            e = repl.recv() => e.map_err(replication_error)?,
            changed = confirmed.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let lsn = *confirmed.borrow_and_update();
                repl.update_applied_lsn(Lsn(lsn));
                continue;
            }
        };
        let Some(event) = event else {
            return Err(replication_error("the server ended the stream"));
        };
        match event {
            ReplicationEvent::Begin {
                xid,
                commit_time_micros,
                ..
            } => stream.tx = Some((i64::from(xid), commit_time_micros + PG_EPOCH_US)),
            ReplicationEvent::Commit { end_lsn, .. } => {
                stream.tx = None;
                stream.last_commit_lsn = Some(end_lsn.0 as i64);
                if !batch.is_empty() && out.send(Ok(std::mem::take(&mut batch))).await.is_err() {
                    return Ok(());
                }
            }
            ReplicationEvent::XLogData {
                wal_start, data, ..
            } => {
                let message = pgoutput::decode(&data)?;
                if let Message::Relation {
                    id,
                    namespace,
                    name,
                    columns,
                    ..
                } = &message
                {
                    stream.relations.insert(
                        *id,
                        (
                            format!("{namespace}.{name}"),
                            columns.iter().map(|c| c.name.clone()).collect(),
                        ),
                    );
                    continue;
                }
                batch.extend(stream.change(wal_start.0 as i64, message).await?);
                if batch.len() >= BATCH && out.send(Ok(std::mem::take(&mut batch))).await.is_err() {
                    return Ok(());
                }
            }
            ReplicationEvent::KeepAlive { .. } | ReplicationEvent::Message { .. } => {}
            ReplicationEvent::StoppedAt { .. } => {
                return Err(replication_error("the stream stopped"));
            }
        }
    }
}

/// A handle and the receiver [`run`] reads confirmations from.
pub fn confirmations() -> (StreamingHandle, watch::Receiver<u64>) {
    let (tx, rx) = watch::channel(0);
    (StreamingHandle { confirmed: tx }, rx)
}
