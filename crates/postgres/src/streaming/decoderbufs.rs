//! The stream read through `decoderbufs` (`plugin.name=decoderbufs`, Debezium's default), as
//! Debezium's `PgProtoMessageDecoder` and `PostgresChangeRecordEmitter` read it: BEGIN and
//! COMMIT messages of their own, each change naming its table, and the table's schema taken
//! from the change itself whenever its columns differ from the schema held (Debezium's
//! `synchronizeTableSchema`), the primary key and defaults from the catalog.
//!
//! Each change is handed to the same event building as `pgoutput`'s ([`Stream::change`]),
//! under a relation id of its own for each table.

use std::collections::HashMap;

use tributary_api::record::SourceRecord;
use tributary_api::ConnectResult;

use super::Stream;
use crate::decoderbufs::{ColumnShape, Message as DbufMessage, Op, TupleColumn};
use crate::envelope::CapturedTable;
use crate::pgoutput::{Datum, Message};
use crate::snapshot;

/// The tables `decoderbufs` messages named, and the transaction held back while resuming.
#[derive(Debug, Default)]
pub(super) struct Tables {
    /// Each captured table's relation id (in [`Stream`]'s `tables`), given at its first change.
    ids: HashMap<(String, String), u32>,
    /// The columns each table's schema was built from, as the plugin describes them.
    shapes: HashMap<u32, Vec<ColumnShape>>,
    /// A transaction read (messages and their positions) until its commit tells whether it
    /// was written before the restart: `decoderbufs` sends no commit position at BEGIN.
    held: Option<Vec<(i64, DbufMessage)>>,
    warned_unknown: bool,
}

impl Stream<'_> {
    /// Handles one `decoderbufs` message at `lsn` (its `XLogData` start), its records added to
    /// `batch`. While a resumed stream has not yet passed the last transaction written in
    /// full, a transaction is held until its commit, whose position decides whether it was
    /// (Debezium's `WalPositionLocator` compares commit positions too).
    pub(super) async fn decoderbufs_message(
        &mut self,
        lsn: i64,
        message: DbufMessage,
        batch: &mut Vec<SourceRecord>,
    ) -> ConnectResult<()> {
        if let Some(held) = &mut self.decoderbufs.held {
            let commit = matches!(message, DbufMessage::Commit { .. });
            held.push((lsn, message));
            if !commit {
                return Ok(());
            }
            let held = self.decoderbufs.held.take().unwrap_or_default();
            for (lsn, message) in held {
                Box::pin(self.decoderbufs_read(lsn, message, Some(lsn), batch)).await?;
            }
            return Ok(());
        }
        if matches!(message, DbufMessage::Begin { .. }) && self.skip.awaits_commits() {
            self.decoderbufs.held = Some(vec![(lsn, message)]);
            return Ok(());
        }
        self.decoderbufs_read(lsn, message, None, batch).await
    }

    /// Reads one message; `end`: where its transaction's commit ends, when known before it.
    async fn decoderbufs_read(
        &mut self,
        lsn: i64,
        message: DbufMessage,
        end: Option<i64>,
        batch: &mut Vec<SourceRecord>,
    ) -> ConnectResult<()> {
        match message {
            DbufMessage::Begin { xid, commit_us } => {
                self.began(xid, commit_us);
                // Only a held transaction's commit position matters (see above).
                self.skip
                    .begin_ending_at(end.unwrap_or(i64::MAX), i64::from(xid));
                // The BEGIN message has a position of its own (the transaction's first
                // record's), Debezium's position of the BEGIN record.
                batch.extend(self.begun(lsn)?);
            }
            DbufMessage::Commit { .. } => {
                // A commit message's position is where the commit record ends.
                self.committed(lsn, batch).await?;
            }
            DbufMessage::Change {
                schema,
                table,
                op,
                new,
                old,
                shapes,
                ..
            } => {
                if self.skip.skip_change(lsn) {
                    tracing::debug!("Skipping the change at {lsn}, written before the restart");
                    return Ok(());
                }
                let Some(relation) = self.decoderbufs_table(&schema, &table, op, &shapes).await?
                else {
                    self.last_processed_lsn = Some(lsn);
                    return Ok(());
                };
                let Some(Some(captured)) = self.tables.get(&relation) else {
                    return Ok(());
                };
                let align = |tuple: Vec<TupleColumn>| aligned(captured, tuple);
                // An update or delete without its tuple (a table without a replica identity)
                // gives no event, as Debezium skips empty messages.
                let message = match op {
                    Op::Insert | Op::Update if new.is_empty() => None,
                    Op::Delete if old.is_empty() => None,
                    Op::Insert => Some(Message::Insert {
                        relation,
                        new: align(new),
                    }),
                    Op::Update => Some(Message::Update {
                        relation,
                        old: (!old.is_empty()).then(|| (b'O', align(old))),
                        new: align(new),
                    }),
                    Op::Delete => Some(Message::Delete {
                        relation,
                        old: (b'K', align(old)),
                    }),
                };
                if let Some(message) = message {
                    batch.extend(self.change(lsn, message).await?);
                }
                self.last_processed_lsn = Some(lsn);
            }
            DbufMessage::Unknown(op) => {
                if !std::mem::replace(&mut self.decoderbufs.warned_unknown, true) {
                    tracing::warn!("Received message with type '{op}' that is unknown to this version of connector, consider upgrading");
                }
            }
        }
        Ok(())
    }

    /// The relation id of table `schema.table` with its schema in [`Stream`]'s `tables` (none
    /// when not captured), as Debezium holds it: first the catalog's; then, at an insert or
    /// update whose columns (names, types, modifiers, `NOT NULL`) differ from those it was
    /// built from, rebuilt from the change's columns with the catalog's primary key and
    /// defaults. Errors: the database's; a type not mapped (named).
    async fn decoderbufs_table(
        &mut self,
        schema: &str,
        table: &str,
        op: Op,
        shapes: &[ColumnShape],
    ) -> ConnectResult<Option<u32>> {
        if !self.config.tables.includes(schema, table) {
            return Ok(None);
        }
        let next = self.decoderbufs.ids.len() as u32 + 1;
        let id = *self
            .decoderbufs
            .ids
            .entry((schema.to_string(), table.to_string()))
            .or_insert(next);
        let from_change = op != Op::Delete
            && !shapes.is_empty()
            && self.decoderbufs.shapes.get(&id).map(Vec::as_slice) != Some(shapes);
        if !from_change && self.tables.contains_key(&id) {
            return Ok(Some(id));
        }
        // The catalog as it is now (none for a table dropped since): its columns, as the plugin
        // describes them too, and its key.
        let catalog = match snapshot::table_oid(self.client, schema, table).await? {
            Some(oid) => Catalog {
                columns: snapshot::table_columns(self.client, &oid).await?,
                shapes: snapshot::column_shapes(self.client, &oid).await?,
                key: snapshot::primary_key(self.client, &oid).await?,
            },
            None if from_change => Catalog::default(),
            None => return Ok(None),
        };
        let shapes = if from_change {
            shapes.to_vec()
        } else {
            catalog.shapes.clone()
        };
        let captured = self
            .decoderbufs_schema(schema, table, &catalog, &shapes)
            .await?;
        self.tables.insert(id, Some(captured));
        self.decoderbufs.shapes.insert(id, shapes);
        Ok(Some(id))
    }

    /// Table `schema.table`'s schema from `shapes` (Debezium's `tableFromFromMessage`): the
    /// columns' types, modifiers ([`crate::decoderbufs::typmod_of`]) and `NOT NULL` as given,
    /// the `catalog`'s defaults and primary key (those of its columns still among `shapes`).
    async fn decoderbufs_schema(
        &self,
        schema: &str,
        table: &str,
        catalog: &Catalog,
        shapes: &[ColumnShape],
    ) -> ConnectResult<CapturedTable> {
        let mut columns = Vec::with_capacity(shapes.len());
        for shape in shapes {
            let mut column =
                snapshot::column_of_type(self.client, &shape.name, shape.type_oid, -1).await?;
            let same = catalog
                .shapes
                .iter()
                .position(|s| s.name == shape.name)
                .filter(|i| {
                    let s = &catalog.shapes[*i];
                    s.type_oid == shape.type_oid && s.modifier == shape.modifier
                });
            // A domain's name has no modifier: its own (column_of_type's) stays. A modifier
            // Debezium's reading does not place (an interval's fields): the catalog's, if the
            // column still has it.
            column.typmod = match crate::decoderbufs::typmod_of(&column.type_name, &shape.modifier)
            {
                Ok(-1) => column.typmod,
                Ok(typmod) => typmod,
                Err(e) => same.and_then(|i| catalog.columns.get(i)).ok_or(e)?.typmod,
            };
            column.not_null = !shape.optional;
            column.default = catalog
                .columns
                .iter()
                .find(|c| c.name == shape.name)
                .and_then(|c| c.default.clone());
            columns.push(column);
        }
        let key: Vec<String> = catalog
            .key
            .iter()
            .filter(|k| shapes.iter().any(|s| &s.name == *k))
            .cloned()
            .collect();
        CapturedTable::of(self.config, schema, table, columns, &key)
    }
}

/// A table in the catalog: its columns (as [`snapshot::table_columns`] and as `decoderbufs`
/// describes them, in the same order) and its key.
#[derive(Default)]
struct Catalog {
    columns: Vec<crate::types::Column>,
    shapes: Vec<ColumnShape>,
    key: Vec<String>,
}

/// A tuple's values in the order of `table`'s columns, by name (NULL for a column the tuple
/// lacks; a column the table lacks is left out, as Debezium leaves it out).
fn aligned(table: &CapturedTable, tuple: Vec<TupleColumn>) -> Vec<Datum> {
    let mut by_name: HashMap<String, Datum> =
        tuple.into_iter().map(|c| (c.name, c.value)).collect();
    table
        .columns
        .iter()
        .map(|(c, _, _)| by_name.remove(&c.name).unwrap_or(Datum::Null))
        .collect()
}
