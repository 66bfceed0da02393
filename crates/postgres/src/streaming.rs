//! Streaming changes from a logical replication slot with `pgoutput` (or `decoderbufs`: see
//! the `decoderbufs` submodule), as Debezium's
//! `PostgresStreamingChangeEventSource` does: the publication and the slot created when
//! missing (`publication.autocreate.mode`), row changes as `c`, `u` and `d` events (a key
//! change as a delete, its tombstone and a create; a delete followed by its tombstone when
//! `tombstones.on.delete`), truncate events unless skipped (Debezium's default
//! `skipped.operations=t` skips them),
//! TOAST-ed values that did not change as `__debezium_unavailable_value`; the slot's position
//! confirmed to the server only once the offsets holding it are committed
//! ([`StreamingHandle::confirm`]).

use std::collections::HashMap;
use std::sync::Arc;

use pgwire_replication::{Lsn, ReplicationClient, ReplicationConfig, ReplicationEvent};
use tokio::sync::{mpsc, watch};
use tributary_api::data::Value;
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::{LogicalDecoder, LsnFlushMode, PostgresConfig};
use crate::envelope::{java_ordered, CapturedTable, EventBuilder, Row, SourcePosition};
use crate::pgoutput::{self, Datum, Message};
use crate::resume::{Plan, Resume, ResumeFilter};
use crate::slot::{
    prepare_publication, refuse_older_than_14, refuse_partitioned, slot_confirmed_lsn, slot_exists,
};
use crate::snapshot::{self, quote_ident};
use crate::transaction::{message_collection, TransactionContext};
use crate::types::Kind;

mod decoderbufs;

/// What Debezium puts in place of a TOAST-ed value that did not change
/// (`unavailable.value.placeholder`'s default).
pub const UNAVAILABLE_VALUE: &str = "__debezium_unavailable_value";

/// Microseconds between PostgreSQL's epoch (2000-01-01) and Unix's.
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// A failure of the replication stream: retriable (the task restarts from its committed
/// offset), as Debezium retries a broken replication connection.
fn replication_error(e: impl std::fmt::Display) -> ConnectError {
    ConnectError::Retriable(format!("replication stream: {e}"))
}

/// A failure of the replication client while connecting or starting to stream: permanent
/// (the task fails, naming it) when retrying cannot help (the server refused the login, or
/// answered with an error of class `28` invalid authorization, `3D` unknown database, `42`
/// syntax or access rule, `22` data), else retriable (a broken connection, the server
/// shutting down or still in recovery, the slot still held by the previous walsender).
fn replication_failure(e: pgwire_replication::PgWireError) -> ConnectError {
    use pgwire_replication::PgWireError as E;
    let permanent = match &e {
        E::Auth(_) => true,
        E::Server(message) => message
            .split("SQLSTATE ")
            .nth(1)
            .map(|code| code.get(..2).unwrap_or(""))
            .is_some_and(|class| matches!(class, "28" | "3D" | "42" | "22")),
        _ => false,
    };
    if permanent {
        ConnectError::connect(format!("replication connection: {e}"))
    } else {
        replication_error(e)
    }
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
    /// Relations' tables as their last relation message describes them, by relation id
    /// (`None`: not captured); built at the relation's first change after that message.
    tables: HashMap<u32, Option<CapturedTable>>,
    /// Relation ids to their schema, name and columns, as the last relation message listed.
    relations: HashMap<u32, (String, String, Vec<pgoutput::RelationColumn>)>,
    /// The transaction being read: its id and commit time (µs since the Unix epoch).
    tx: Option<(i64, i64)>,
    /// Where the last transaction's commit ended (`lsn_commit`, `sequence`'s first element).
    last_commit_lsn: Option<i64>,
    /// What a resumed stream skips.
    skip: ResumeFilter,
    /// The last transaction's commit time (µs since the Unix epoch), which a message outside
    /// a transaction carries (Debezium's `SourceInfo` keeps its timestamp when a message has
    /// none).
    last_ts_us: i64,
    /// The last message processed in full (a change's position, a commit record's),
    /// Debezium's `lastCompletelyProcessedLsn`.
    last_processed_lsn: Option<i64>,
    /// The offset Debezium's offset context holds after the last commit (or message outside
    /// a transaction), which heartbeats carry; `None` before the first.
    current_offset: Option<SourceMap>,
    /// `heartbeat.interval.ms` > 0: when the next heartbeat is due.
    heartbeats: Option<Heartbeats>,
    /// A transaction's Begin message came, and its position (the next message's: `pgoutput`
    /// on PostgreSQL 15 and later sends Begin with its first change) is not known yet.
    begin_pending: bool,
    /// The transaction metadata's counters (`provide.transaction.metadata`).
    transaction: TransactionContext,
    /// `decoderbufs`: the tables its messages name, and what it knows of them.
    decoderbufs: decoderbufs::Tables,
}

/// Heartbeats (`heartbeat.interval.ms`, Debezium's `HeartbeatImpl` and
/// `DatabaseHeartbeatImpl`).
struct Heartbeats {
    interval: std::time::Duration,
    next: tokio::time::Instant,
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Stream<'_> {
    /// The captured table of relation `id` as its last relation message describes it, as
    /// Debezium's `PgOutputMessageDecoder` rebuilds a table at each relation message: the
    /// message's columns (names, types, modifiers) in its order, with the catalog's current
    /// `NOT NULL`, defaults and primary key for those it still has (a column dropped since is
    /// optional, without a default). So a change written before an `ALTER TABLE` the
    /// connector reads later keeps the columns it had, and a generated column (never in the
    /// stream) is left out. `None` for a table not captured. Errors: the database's; a type
    /// this version does not map (named).
    async fn table(&mut self, id: u32) -> ConnectResult<Option<&CapturedTable>> {
        if !self.tables.contains_key(&id) {
            let Some((schema, name, relation)) = self.relations.get(&id).cloned() else {
                return Err(ConnectError::connect(format!(
                    "a change of relation {id} came before its description"
                )));
            };
            let table = if self.config.tables.includes(&schema, &name) {
                // Debezium refuses names that differ only by case (its decoder's check).
                let mut seen = std::collections::HashSet::new();
                if let Some(c) = relation
                    .iter()
                    .find(|c| !seen.insert(c.name.to_lowercase()))
                {
                    return Err(ConnectError::connect(format!(
                        "Table '{schema}.{name}' has columns that differ only by case. Column name: '{}'. Debezium does not support case-sensitive duplicate column names as this causes data corruption. Please rename one of the duplicate columns before running Debezium.",
                        c.name
                    )));
                }
                let oid = id.to_string();
                let catalog = snapshot::table_columns(self.client, &oid).await?;
                let key: Vec<String> = snapshot::primary_key(self.client, &oid)
                    .await?
                    .into_iter()
                    .filter(|k| relation.iter().any(|c| &c.name == k))
                    .collect();
                let mut columns = Vec::with_capacity(relation.len());
                for c in &relation {
                    let mut column =
                        snapshot::column_of_type(self.client, &c.name, c.type_oid, c.typmod)
                            .await?;
                    if let Some(now) = catalog.iter().find(|k| k.name == c.name) {
                        column.not_null = now.not_null;
                        column.default = now.default.clone();
                    }
                    columns.push(column);
                }
                Some(CapturedTable::of(
                    self.config,
                    &schema,
                    &name,
                    columns,
                    &key,
                )?)
            } else {
                None
            };
            self.tables.insert(id, table);
        }
        Ok(self.tables.get(&id).and_then(Option::as_ref))
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

    fn row(table: &CapturedTable, tuple: &[Datum]) -> ConnectResult<Row> {
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

    /// The transaction's BEGIN record (`provide.transaction.metadata`), at `lsn`, the
    /// position of the first message after the Begin message (the Begin message's own on
    /// PostgreSQL 15 and later, which sends it with the transaction's first change), as
    /// Debezium's streaming source dispatches it: the counters start again, and the record
    /// carries the transaction's id, commit time and position with the last position
    /// processed before it. None when not asked for, or when the transaction (or its start)
    /// was written before the restart: then the counters the offset stored go on.
    fn begun(&mut self, lsn: i64) -> ConnectResult<Option<SourceRecord>> {
        if !std::mem::take(&mut self.begin_pending) || !self.config.provide_transaction_metadata {
            return Ok(None);
        }
        let Some((tx_id, ts_us)) = self.tx else {
            return Ok(None);
        };
        if self.skip.skip_change(lsn) {
            return Ok(None);
        }
        // The transaction the offset stored as in progress, replayed after a restart: its
        // counters go on and no second BEGIN is written (Debezium's TransactionMonitor).
        if self.transaction.id() == Some(tx_id.to_string().as_str()) {
            return Ok(None);
        }
        self.transaction.begin(tx_id.to_string());
        let pos = self.in_transaction_at(lsn);
        let mut offset = self.offset(&pos, "BEGIN");
        match self.last_processed_lsn.or(self.last_commit_lsn) {
            Some(processed) => offset.insert("lsn_proc".into(), processed.into()),
            None => offset.remove("lsn_proc"),
        };
        let record = self.transaction.record(
            &self.events.partition,
            &self.config.transaction_topic(),
            false,
            ts_us.div_euclid(1000),
            offset,
        )?;
        Ok(Some(record))
    }

    /// `records` (one message's, in order) with the transaction metadata Debezium's
    /// `TransactionMonitor.dataEvent` adds (`provide.transaction.metadata`), each event
    /// counted under `collection`: its `transaction` block and the counters in its offset (a
    /// tombstone shares its delete's offset). A record of a transaction other than the one in
    /// progress (none began: the offset stored none) first ends that one (END record) and
    /// begins its own (BEGIN record); a message outside any transaction ends the one in
    /// progress.
    fn with_transaction(
        &mut self,
        records: Vec<SourceRecord>,
        collection: &str,
        transactional: bool,
    ) -> ConnectResult<Vec<SourceRecord>> {
        if !self.config.provide_transaction_metadata || records.is_empty() {
            return Ok(records);
        }
        let topic = self.config.transaction_topic();
        let partition = Arc::clone(&self.events.partition);
        let mut out = Vec::with_capacity(records.len() + 2);
        let mut last_offset: Option<SourceMap> = None;
        for mut record in records {
            if matches!(record.value, Value::Null) {
                if let Some(offset) = &last_offset {
                    record.source_offset = offset.clone();
                }
                out.push(record);
                continue;
            }
            let (tx_id, ts_us) = self.tx.unwrap_or((0, self.last_ts_us));
            let ts_ms = ts_us.div_euclid(1000);
            let id = tx_id.to_string();
            // Outside a transaction, or in another one than the one in progress: that one ends.
            let other = !transactional || self.transaction.id() != Some(id.as_str());
            if other && self.transaction.in_progress() {
                let end = self.transaction.record(
                    &partition,
                    &topic,
                    true,
                    ts_ms,
                    record.source_offset.clone(),
                )?;
                out.push(end);
            }
            if !transactional {
                self.transaction.end();
                out.push(record);
                continue;
            }
            if other {
                self.transaction.begin(id);
                let begin = self.transaction.record(
                    &partition,
                    &topic,
                    false,
                    ts_ms,
                    record.source_offset.clone(),
                )?;
                out.push(begin);
            }
            let lsn = record
                .source_offset
                .get("lsn")
                .and_then(serde_json::Value::as_i64);
            let block = self.transaction.event(collection, lsn)?;
            if let Value::Struct(value) = std::mem::replace(&mut record.value, Value::Null) {
                record.value = Value::Struct(value.put("transaction", block)?);
            }
            record.source_offset = self.transaction.store(record.source_offset);
            last_offset = Some(record.source_offset.clone());
            out.push(record);
        }
        Ok(out)
    }

    /// The transaction's END record (`provide.transaction.metadata`, a transaction in
    /// progress), carrying the commit's `offset`; the counters end.
    fn ended(&mut self, ts_us: i64, offset: SourceMap) -> ConnectResult<Option<SourceRecord>> {
        if !self.config.provide_transaction_metadata || !self.transaction.in_progress() {
            return Ok(None);
        }
        let record = self.transaction.record(
            &self.events.partition,
            &self.config.transaction_topic(),
            true,
            ts_us.div_euclid(1000),
            offset,
        )?;
        self.transaction.end();
        Ok(Some(record))
    }

    /// A heartbeat when one is due (`idle`: no message came before it was), as Debezium's
    /// heartbeat sends it: `heartbeat.action.query` run first (its failure logged), then a
    /// record to the heartbeat topic with the last commit's offset, so that committing it
    /// lets the slot release WAL that only uncaptured changes filled. None before the first
    /// commit, or when not due.
    async fn heartbeat(&mut self, idle: bool) -> Option<SourceRecord> {
        let offset = self.current_offset.clone();
        self.heartbeat_with(idle, offset).await
    }

    /// [`Stream::heartbeat`] carrying `offset` (none: no heartbeat). No idle heartbeat while a
    /// transaction is being read: the last commit's offset would be older than the records
    /// already handed over.
    async fn heartbeat_with(
        &mut self,
        idle: bool,
        offset: Option<SourceMap>,
    ) -> Option<SourceRecord> {
        let beats = self.heartbeats.as_mut()?;
        let now = tokio::time::Instant::now();
        if now < beats.next {
            return None;
        }
        beats.next = now + beats.interval;
        if idle && self.tx.is_some() {
            return None;
        }
        if let Some(query) = &self.config.heartbeat_action_query {
            match self.client.batch_execute(query).await {
                Ok(()) => tracing::debug!("Executed heartbeat action query"),
                Err(e) => tracing::error!(
                    "Could not execute heartbeat action (Error: {}): {e}",
                    e.code().map_or("", |c| c.code())
                ),
            }
        }
        let offset = offset?;
        tracing::debug!(idle, "Generating heartbeat event");
        Some(
            self.events
                .heartbeat(&self.config.heartbeat_topic(), offset),
        )
    }

    /// The event of a logical decoding message at `lsn` (none when its prefix is not
    /// captured, or it was written before a restart), as Debezium's streaming source gives
    /// it: within a transaction, that transaction's id and commit time; on its own, no
    /// transaction id, the last commit time, and its own position as the last commit
    /// (`lsn_commit`), Debezium committing it at once.
    fn logical_message(
        &mut self,
        lsn: i64,
        transactional: bool,
        prefix: &str,
        content: Vec<u8>,
    ) -> ConnectResult<Vec<SourceRecord>> {
        if transactional {
            if self.skip.skip_change(lsn) {
                return Ok(Vec::new());
            }
        } else {
            if self.skip.written_before(lsn) {
                return Ok(Vec::new());
            }
            self.last_commit_lsn = Some(lsn);
            self.last_processed_lsn = Some(lsn);
        }
        let pos = SourcePosition {
            ts_us: if transactional {
                self.tx.map_or(self.last_ts_us, |(_, ts)| ts)
            } else {
                self.last_ts_us
            },
            tx_id: if transactional {
                self.tx.map(|(id, _)| id)
            } else {
                None
            },
            lsn: Some(lsn),
            last_commit_lsn: self.last_commit_lsn,
            snapshot: None,
        };
        let mut offset = self.offset(&pos, "MESSAGE");
        if transactional {
            // Not the last event of its position for Debezium: the processed position stays
            // the one before it.
            match self.last_processed_lsn.or(self.last_commit_lsn) {
                Some(processed) => offset.insert("lsn_proc".into(), processed.into()),
                None => offset.remove("lsn_proc"),
            };
        }
        if !transactional {
            self.current_offset = Some(offset.clone());
        }
        if !self.config.messages.includes(prefix) {
            return Ok(Vec::new());
        }
        let content = crate::types::binary(self.config.types.binary, content);
        let record = self.events.message(prefix, content, &pos, offset)?;
        self.with_transaction(vec![record], &message_collection(), transactional)
    }

    /// The truncate events of the captured tables among `relations` (one `TRUNCATE`
    /// statement), in its order. As in Debezium, only the last table's event counts as the
    /// position processed (`lsn_proc`): a restart from an earlier one's offset replays the
    /// whole truncate (whose earlier events then carry the last processed position this
    /// stream knows, which may be before the one Debezium would give).
    async fn truncate(
        &mut self,
        pos: SourcePosition,
        relations: Vec<u32>,
    ) -> ConnectResult<Vec<SourceRecord>> {
        let mut tables = Vec::new();
        for relation in relations {
            if let Some(table) = self.table(relation).await? {
                tables.push(table.clone());
            }
        }
        let lsn = pos.lsn;
        let mut out = Vec::with_capacity(tables.len());
        for (i, table) in tables.iter().enumerate() {
            let last = i + 1 == tables.len();
            let mut offset = self.offset(&pos, "TRUNCATE");
            if !last {
                let known = self.last_processed_lsn.or(self.last_commit_lsn);
                match known.filter(|p| Some(*p) < lsn) {
                    Some(processed) => offset.insert("lsn_proc".into(), processed.into()),
                    None => offset.remove("lsn_proc"),
                };
            }
            let record = self.events.truncate(table, &pos, offset)?;
            let collection = format!("{}.{}", table.schema, table.table);
            out.extend(self.with_transaction(vec![record], &collection, true)?);
        }
        Ok(out)
    }

    /// A transaction `xid` committing at `ts_us` (µs since the Unix epoch) begins; its BEGIN
    /// record waits for its position ([`Stream::begun`]).
    fn began(&mut self, xid: u32, ts_us: i64) {
        self.tx = Some((i64::from(xid), ts_us));
        self.last_ts_us = ts_us;
        self.begin_pending = true;
    }

    /// The transaction being read commits, its commit record ending at `end` (Debezium's
    /// position of a commit): the commit's offset becomes the one heartbeats carry, and
    /// `batch` gets the heartbeat due and the transaction's END record.
    async fn committed(&mut self, end: i64, batch: &mut Vec<SourceRecord>) -> ConnectResult<()> {
        self.last_processed_lsn = Some(end);
        self.last_commit_lsn = Some(end);
        let skipped = self.skip.skipping();
        self.skip.commit();
        self.begin_pending = false;
        if let Some((tx_id, ts_us)) = self.tx.take() {
            let pos = SourcePosition {
                ts_us,
                tx_id: Some(tx_id),
                lsn: Some(end),
                last_commit_lsn: Some(end),
                snapshot: None,
            };
            let offset = self.offset(&pos, "COMMIT");
            self.current_offset = Some(offset.clone());
            // As Debezium commits a transaction: the heartbeat first (its offset still holding
            // the transaction's counters), then the END record.
            let in_progress = Some(self.transaction.store(offset.clone()));
            batch.extend(self.heartbeat_with(false, in_progress).await);
            if !skipped {
                batch.extend(self.ended(ts_us, offset)?);
            }
        } else {
            batch.extend(self.heartbeat(false).await);
        }
        Ok(())
    }

    /// The position of a message at `lsn` in the transaction being read (its id and commit
    /// time), after the last commit.
    fn in_transaction_at(&self, lsn: i64) -> SourcePosition {
        let (tx_id, ts_us) = self.tx.unwrap_or((0, 0));
        SourcePosition {
            ts_us,
            tx_id: Some(tx_id),
            lsn: Some(lsn),
            last_commit_lsn: self.last_commit_lsn,
            snapshot: None,
        }
    }

    /// The records of one change message (none for a table not captured).
    async fn change(&mut self, lsn: i64, message: Message) -> ConnectResult<Vec<SourceRecord>> {
        let pos = self.in_transaction_at(lsn);
        let tombstones = self.config.tombstones_on_delete;
        let relation = match &message {
            Message::Insert { relation, .. }
            | Message::Update { relation, .. }
            | Message::Delete { relation, .. } => *relation,
            Message::Truncate { relations } if !self.config.skips('t') => {
                return self.truncate(pos, relations.clone()).await;
            }
            _ => return Ok(Vec::new()),
        };
        let skips = |op: char| self.config.skips(op);
        let (skip_c, skip_u, skip_d) = (skips('c'), skips('u'), skips('d'));
        // The one offset the message's records carry (the `messageType` of its operation).
        let offset = self.offset(
            &pos,
            match &message {
                Message::Insert { .. } => "INSERT",
                Message::Update { .. } => "UPDATE",
                _ => "DELETE",
            },
        );
        let events = self.events;
        let Some(table) = self.table(relation).await? else {
            return Ok(Vec::new());
        };
        let collection = format!("{}.{}", table.schema, table.table);
        let mut out = Vec::new();
        let delete = |out: &mut Vec<SourceRecord>, before: Row, offset: SourceMap| {
            if skip_d {
                return Ok(());
            }
            let record = events.event(table, "d", Some(before), None, &pos, offset)?;
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
            Message::Insert { .. } if skip_c => {}
            Message::Insert { new, .. } => {
                let after = Self::row(table, &new)?;
                out.push(events.event(table, "c", None, Some(after), &pos, offset)?);
            }
            Message::Update { old, mut new, .. } => {
                // A TOAST-ed value that did not change is the old tuple's when it was sent
                // (REPLICA IDENTITY FULL), as Debezium's emitter takes it from its old values.
                if let Some((_, old)) = &old {
                    for (n, o) in new.iter_mut().zip(old) {
                        if *n == Datum::Unchanged && matches!(o, Datum::Text(_)) {
                            *n = o.clone();
                        }
                    }
                }
                let after = Self::row(table, &new)?;
                let before = match old {
                    Some((_, old)) => Some(Self::row(table, &old)?),
                    None => None,
                };
                // The key changed (old and new keys compared, as Debezium's emitter does,
                // whatever the replica identity sent): a delete (with its tombstone) and a
                // create.
                // Each part is skipped by its own operation, as Debezium's dispatcher skips.
                match before {
                    Some(before) if before.key != after.key => {
                        delete(&mut out, before, offset.clone())?;
                        if !skip_c {
                            out.push(events.event(table, "c", None, Some(after), &pos, offset)?);
                        }
                    }
                    before if !skip_u => {
                        out.push(events.event(table, "u", before, Some(after), &pos, offset)?);
                    }
                    _ => {}
                }
            }
            Message::Delete { old: (_, old), .. } => {
                delete(&mut out, Self::row(table, &old)?, offset)?;
            }
            _ => {}
        }
        self.with_transaction(out, &collection, true)
    }
}

/// The replication session's settings: `pgoutput` prints values with the walsender session's
/// settings, pinned as the snapshot's.
fn replication_config(config: &PostgresConfig, start_lsn: u64) -> ConnectResult<ReplicationConfig> {
    let settings = ReplicationConfig::new(
        config.hostname.clone(),
        config.user.clone(),
        config
            .password
            .as_ref()
            .map(|p| p.0.clone())
            .unwrap_or_default(),
        config.dbname.clone(),
        config.slot_name.clone(),
        config.publication_name.as_str(),
    )
    .with_port(config.port)
    .with_tcp_keepalive(config.tcp_keepalive)
    .with_status_interval(config.status_update_interval)
    .with_tls(config.ssl.replication(&config.hostname)?)
    .with_start_lsn(Lsn(start_lsn))
    .with_options(
        "-c TimeZone=UTC -c DateStyle=ISO,MDY -c bytea_output=hex -c extra_float_digits=1 -c IntervalStyle=postgres",
    )
    .with_application_name("Debezium Streaming");
    Ok(match config.plugin {
        // decoderbufs takes no option (and refuses pgoutput's).
        LogicalDecoder::DecoderBufs => settings.with_plugin_options(""),
        LogicalDecoder::PgOutput => settings,
    })
}

/// Creates the slot on a replication session that stays open, exporting its snapshot
/// (`CREATE_REPLICATION_SLOT … LOGICAL <plugin.name> EXPORT_SNAPSHOT`, as Debezium creates it):
/// the session, not started yet, and the snapshot, valid until the session's next command.
async fn create_slot_exporting(
    config: &PostgresConfig,
) -> ConnectResult<(ReplicationClient, snapshot::ExportedSnapshot)> {
    let mut repl = ReplicationClient::connect_gated(replication_config(config, 0)?)
        .await
        .map_err(replication_failure)?;
    let command = format!(
        "CREATE_REPLICATION_SLOT {} LOGICAL {} EXPORT_SNAPSHOT",
        quote_ident(&config.slot_name),
        config.plugin.name()
    );
    tracing::info!("Creating replication slot with command {command}");
    let rows = repl
        .simple_query(&command)
        .await
        .map_err(|e| ConnectError::connect(format!("Creation of replication slot failed: {e}")))?;
    let column = |i: usize| {
        rows.first()
            .and_then(|r| r.get(i).cloned().flatten())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .ok_or_else(|| replication_error(format!("CREATE_REPLICATION_SLOT gave no column {i}")))
    };
    let lsn = snapshot::parse_lsn(&column(1)?)?;
    let name = column(2)?;
    tracing::info!(slot = %config.slot_name, "Created the slot at {lsn}, exporting snapshot {name}");
    Ok((repl, snapshot::ExportedSnapshot { name, lsn }))
}

/// Runs `plan`: the snapshot first when asked (in the snapshot a new slot exports, as Debezium
/// takes it), then streams from the slot until `out` closes (the task stopped), sending
/// records in batches. The publication and the slot are created when missing. `confirmed`
/// carries the positions the task confirms ([`StreamingHandle`]). Errors: the database's, the
/// stream's, a change that cannot be represented.
pub async fn run(
    config: &PostgresConfig,
    events: &EventBuilder,
    out: &mpsc::Sender<ConnectResult<Vec<SourceRecord>>>,
    confirmed: watch::Receiver<u64>,
    plan: Plan,
) -> ConnectResult<()> {
    let client = snapshot::connect(config).await?;
    client
        .batch_execute(
            "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'; \
             SET extra_float_digits = 1; SET IntervalStyle = 'postgres'",
        )
        .await
        .map_err(|e| ConnectError::connect(format!("setting the session: {e}")))?;
    refuse_older_than_14(&client, config).await?;
    refuse_partitioned(&client, config).await?;
    if config.plugin == LogicalDecoder::PgOutput {
        prepare_publication(&client, config).await?;
    }
    let exists = slot_exists(&client, config).await?;
    let (repl, resume) = match plan {
        Plan::SnapshotThenStream if !exists => {
            let (mut repl, exported) = create_slot_exporting(config).await?;
            match snapshot::run(config, events, out, Some(&exported)).await? {
                snapshot::SnapshotEnd::Stopped => return Ok(()),
                snapshot::SnapshotEnd::Completed { .. } => {}
            }
            // Streaming begins where the slot was created: its confirmed position.
            repl.start().await.map_err(replication_failure)?;
            (repl, Resume::default())
        }
        Plan::SnapshotThenStream => {
            let start_lsn = match snapshot::run(config, events, out, None).await? {
                snapshot::SnapshotEnd::Stopped => return Ok(()),
                snapshot::SnapshotEnd::Completed { lsn } => lsn.unwrap_or(0) as u64,
            };
            let resume = Resume {
                start_lsn,
                ..Resume::default()
            };
            (connect_streaming(config, &resume).await?, resume)
        }
        Plan::Stream(resume) => {
            if !exists {
                tracing::info!(
                    "Creating replication slot '{}' ({})",
                    config.slot_name,
                    config.plugin.name()
                );
                client
                    .query(
                        "SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
                        &[&config.slot_name, &config.plugin.name()],
                    )
                    .await
                    .map_err(snapshot::pg_error("creating the replication slot"))?;
            }
            (connect_streaming(config, &resume).await?, resume)
        }
    };
    let start_position = match resume.start_lsn {
        0 => slot_confirmed_lsn(&client, config).await?,
        lsn => Some(lsn as i64),
    };
    let stream = Stream {
        config,
        events,
        client: &client,
        tables: HashMap::new(),
        relations: HashMap::new(),
        tx: None,
        last_commit_lsn: resume.last_commit_lsn,
        skip: ResumeFilter::new(&resume),
        // Debezium's last completely processed position starts where the stream starts.
        last_processed_lsn: start_position,
        current_offset: None,
        heartbeats: (!config.heartbeat_interval.is_zero()).then(|| Heartbeats {
            interval: config.heartbeat_interval,
            next: tokio::time::Instant::now() + config.heartbeat_interval,
        }),
        begin_pending: false,
        transaction: resume.transaction.clone(),
        decoderbufs: decoderbufs::Tables::default(),
        last_ts_us: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64),
    };
    stream.run(repl, out, confirmed).await
}

async fn connect_streaming(
    config: &PostgresConfig,
    resume: &Resume,
) -> ConnectResult<ReplicationClient> {
    tracing::info!(
        slot = %config.slot_name,
        "Streaming from the replication slot at {} (0: its confirmed position)",
        resume.start_lsn
    );
    let mut settings = replication_config(config, resume.start_lsn)?;
    // Until the task confirms more, the server hears the stored transaction end, not the
    // start position (which may lie inside a transaction not yet written in full).
    if config.lsn_flush == LsnFlushMode::Manual {
        // Nothing confirmed: the server ignores a position of 0.
        settings = settings.with_ack_lsn(Lsn(0));
    } else if let Some(commit) = resume.last_commit_lsn {
        settings = settings.with_ack_lsn(Lsn((commit as u64).min(resume.start_lsn)));
    }
    ReplicationClient::connect(settings)
        .await
        .map_err(replication_failure)
}

impl Stream<'_> {
    async fn run(
        mut self,
        mut repl: ReplicationClient,
        out: &mpsc::Sender<ConnectResult<Vec<SourceRecord>>>,
        mut confirmed: watch::Receiver<u64>,
    ) -> ConnectResult<()> {
        // Every captured table's columns mapped, or the task fails now, naming the column.
        snapshot::captured_tables(self.client, self.config).await?;
        let mut batch: Vec<SourceRecord> = Vec::new();
        // The server's position as its last keepalive gave it.
        let mut server_end: Option<Lsn> = None;
        // Under lsn.flush.mode=connector_and_driver, the keepalive flush of pgjdbc (which
        // Debezium turns on): once the task confirmed a position at or past the start of the
        // last message received (a commit's: its transaction's end, which only a committed
        // offset's lsn_commit reaches), everything received is durable and the server's
        // position holds nothing more to write: it is confirmed.
        let keepalive_flush = self.config.lsn_flush == LsnFlushMode::ConnectorAndDriver;
        let mut last_message_start: u64 = 0;
        let flushable = |confirmed: &watch::Receiver<u64>, last_message_start: u64| {
            keepalive_flush && *confirmed.borrow() >= last_message_start
        };
        loop {
            let next_beat = self.heartbeats.as_ref().map(|h| h.next);
            let event = tokio::select! {
                // A failure while streaming is retried, as Debezium retries any failure of its
                // replication stream.
                e = repl.recv() => e.map_err(replication_error)?,
                _ = sleep_until(next_beat), if next_beat.is_some() => {
                    // Idle: a heartbeat with the last position, as Debezium's stream loop
                    // sends one when no message came.
                    if let Some(beat) = self.heartbeat(true).await {
                        batch.push(beat);
                        if out.send(Ok(std::mem::take(&mut batch))).await.is_err() {
                            return Ok(());
                        }
                    }
                    continue;
                }
                changed = confirmed.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let lsn = *confirmed.borrow_and_update();
                    if self.config.lsn_flush == LsnFlushMode::Manual {
                        continue;
                    }
                    if let Some(end) = server_end.filter(|_| flushable(&confirmed, last_message_start)) {
                        repl.update_applied_lsn(end);
                    }
                    repl.update_applied_lsn(Lsn(lsn));
                    continue;
                }
            };
            let Some(event) = event else {
                return Err(replication_error("the server ended the stream"));
            };
            match event {
                ReplicationEvent::Begin {
                    final_lsn,
                    xid,
                    commit_time_micros,
                } => {
                    self.began(xid, commit_time_micros + PG_EPOCH_US);
                    self.skip.begin(final_lsn.0 as i64, i64::from(xid));
                }
                ReplicationEvent::Commit { end_lsn, .. } => {
                    // Debezium's position of a commit is its message's: the transaction's end.
                    last_message_start = end_lsn.0;
                    self.committed(end_lsn.0 as i64, &mut batch).await?;
                    if !batch.is_empty() && out.send(Ok(std::mem::take(&mut batch))).await.is_err()
                    {
                        return Ok(());
                    }
                }
                ReplicationEvent::XLogData {
                    wal_start, data, ..
                } if self.config.plugin == LogicalDecoder::DecoderBufs => {
                    last_message_start = wal_start.0;
                    let message = crate::decoderbufs::decode(&data)?;
                    let commit = matches!(message, crate::decoderbufs::Message::Commit { .. });
                    self.decoderbufs_message(wal_start.0 as i64, message, &mut batch)
                        .await?;
                    if (commit || batch.len() >= self.config.max_batch_size)
                        && !batch.is_empty()
                        && out.send(Ok(std::mem::take(&mut batch))).await.is_err()
                    {
                        return Ok(());
                    }
                }
                ReplicationEvent::XLogData {
                    wal_start, data, ..
                } => {
                    // A relation (or type) message before the first change has no position
                    // (the server sends 0 for it, not the last write at its position).
                    if wal_start.0 != 0 {
                        last_message_start = wal_start.0;
                        batch.extend(self.begun(wal_start.0 as i64)?);
                    }
                    let message = pgoutput::decode(&data)?;
                    if let Message::Relation {
                        id,
                        namespace,
                        name,
                        columns,
                        ..
                    } = &message
                    {
                        self.relations
                            .insert(*id, (namespace.clone(), name.clone(), columns.clone()));
                        self.tables.remove(id);
                        continue;
                    }
                    let lsn = wal_start.0 as i64;
                    if self.skip.skip_change(lsn) {
                        tracing::debug!("Skipping the change at {lsn}, written before the restart");
                        continue;
                    }
                    batch.extend(self.change(lsn, message).await?);
                    self.last_processed_lsn = Some(lsn);
                    if batch.len() >= self.config.max_batch_size
                        && out.send(Ok(std::mem::take(&mut batch))).await.is_err()
                    {
                        return Ok(());
                    }
                }
                ReplicationEvent::Message {
                    transactional,
                    lsn,
                    prefix,
                    content,
                } => {
                    // The message's own LSN is its XLogData's start, Debezium's position.
                    last_message_start = lsn.0;
                    if transactional {
                        batch.extend(self.begun(lsn.0 as i64)?);
                    }
                    let record = self.logical_message(
                        lsn.0 as i64,
                        transactional,
                        &prefix,
                        content.to_vec(),
                    )?;
                    batch.extend(record);
                    // A message outside a transaction is a commit of its own.
                    if !transactional {
                        batch.extend(self.heartbeat(false).await);
                    }
                    if !transactional
                        && !batch.is_empty()
                        && out.send(Ok(std::mem::take(&mut batch))).await.is_err()
                    {
                        return Ok(());
                    }
                }
                ReplicationEvent::KeepAlive { wal_end, .. } => {
                    server_end = Some(wal_end);
                    if flushable(&confirmed, last_message_start) {
                        repl.update_applied_lsn(wal_end);
                    }
                }
                ReplicationEvent::StoppedAt { .. } => {
                    return Err(replication_error("the stream stopped"));
                }
            }
        }
    }
}

/// A handle and the receiver [`run`] reads confirmations from.
pub fn confirmations() -> (StreamingHandle, watch::Receiver<u64>) {
    let (tx, rx) = watch::channel(0);
    (StreamingHandle { confirmed: tx }, rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_of_the_server_fail_the_task_and_broken_connections_are_retried() {
        use pgwire_replication::PgWireError as E;
        let permanent = |e: E| !matches!(replication_failure(e), ConnectError::Retriable(_));
        assert!(permanent(E::Auth("password authentication failed".into())));
        for message in [
            "FATAL: password authentication failed for user \"x\" (SQLSTATE 28P01)",
            "FATAL: database \"nope\" does not exist (SQLSTATE 3D000)",
            "ERROR: publication \"p\" does not exist (SQLSTATE 42704)",
            "FATAL: must be superuser or replication role (SQLSTATE 42501)",
        ] {
            assert!(permanent(E::Server(message.into())), "{message}");
        }
        for message in [
            "ERROR: replication slot \"s\" is active for PID 7 (SQLSTATE 55006)",
            "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)",
            "FATAL: the database system is starting up (SQLSTATE 57P03)",
            "ERROR: logical decoding cannot be used while in recovery (SQLSTATE 0A000)",
            "no code",
        ] {
            assert!(!permanent(E::Server(message.into())), "{message}");
        }
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(!permanent(E::from(reset)));
    }
}
