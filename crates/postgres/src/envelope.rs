//! Debezium's change events for a captured table: the key and value schemas, the `source`
//! block (`io.debezium.connector.postgresql.Source`), the envelope (`<topic>.Envelope`,
//! version 2) and the source partition and offsets, as Debezium 3.6.1 writes them.

use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use tributary_api::data::java_hash_map;
use tributary_api::data::{SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::ConnectResult;

use crate::config::{TypeSettings, DEBEZIUM_VERSION};
use crate::types::{self, Column, Kind};

/// `source.snapshot`'s values (Debezium's `SnapshotRecord`), as the `io.debezium.data.Enum`
/// schema lists them.
const SNAPSHOT_VALUES: &str =
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental";

/// A snapshot record's place (Debezium's `SnapshotMarkerResolver`): `last` wins over `first`,
/// then the table's own last and first records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMarker {
    First,
    FirstInDataCollection,
    True,
    LastInDataCollection,
    Last,
}

impl SnapshotMarker {
    /// The marker of a record from its position in the snapshot and in its table.
    pub fn resolve(
        first_in_snapshot: bool,
        last_in_snapshot: bool,
        first_in_table: bool,
        last_in_table: bool,
    ) -> SnapshotMarker {
        if last_in_snapshot {
            SnapshotMarker::Last
        } else if first_in_snapshot {
            SnapshotMarker::First
        } else if last_in_table {
            SnapshotMarker::LastInDataCollection
        } else if first_in_table {
            SnapshotMarker::FirstInDataCollection
        } else {
            SnapshotMarker::True
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            SnapshotMarker::First => "first",
            SnapshotMarker::FirstInDataCollection => "first_in_data_collection",
            SnapshotMarker::True => "true",
            SnapshotMarker::LastInDataCollection => "last_in_data_collection",
            SnapshotMarker::Last => "last",
        }
    }
}

/// `io.debezium.connector.postgresql.Source`, version 1.
pub fn source_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let s = || SchemaBuilder::string().build();
            let opt_s = || SchemaBuilder::string().optional().build();
            let l = || SchemaBuilder::int64().build();
            let opt_l = || SchemaBuilder::int64().optional().build();
            let snapshot = SchemaBuilder::string()
                .optional()
                .name("io.debezium.data.Enum")
                .version(1)
                .parameter("allowed", SNAPSHOT_VALUES)
                .default_value(Value::String("false".into()))
                .expect("a string default")
                .build();
            let fields = [
                ("version", s()),
                ("connector", s()),
                ("name", s()),
                ("ts_ms", l()),
                ("snapshot", snapshot),
                ("db", s()),
                ("sequence", opt_s()),
                ("ts_us", opt_l()),
                ("ts_ns", opt_l()),
                ("schema", s()),
                ("table", s()),
                ("txId", opt_l()),
                ("lsn", opt_l()),
                ("xmin", opt_l()),
                ("origin", opt_s()),
                ("origin_lsn", opt_l()),
            ];
            let mut b = SchemaBuilder::struct_()
                .name("io.debezium.connector.postgresql.Source")
                .version(1);
            for (name, schema) in fields {
                b = b.field(name, schema).expect("distinct fields");
            }
            b.build()
        })
        .clone()
}

/// `event.block`, version 1: the `transaction` block (null unless
/// `provide.transaction.metadata`).
pub(crate) fn transaction_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .optional()
        .name("event.block")
        .version(1)
        .field("id", SchemaBuilder::string().build())
        .and_then(|b| b.field("total_order", SchemaBuilder::int64().build()))
        .and_then(|b| b.field("data_collection_order", SchemaBuilder::int64().build()))
        .expect("distinct fields")
        .build()
}

/// A captured table: its columns, topic and schemas.
#[derive(Debug, Clone)]
pub struct CapturedTable {
    pub schema: String,
    pub table: String,
    pub topic: String,
    pub columns: Vec<(Column, SchemaRef, Kind)>,
    /// Indexes into `columns` of the value's fields (the included columns), in table order.
    pub value_columns: Vec<usize>,
    /// Indexes into `columns` of the primary key, in the key's order.
    pub key_columns: Vec<usize>,
    /// `<topic>.Key`; `None` for a table without a primary key (null keys, as Debezium).
    pub key_schema: Option<SchemaRef>,
    /// `<topic>.Value`.
    pub value_schema: SchemaRef,
    /// `<topic>.Envelope`.
    pub envelope_schema: SchemaRef,
}

/// A row as a change event carries it: its `Value` struct (the included columns) and its key
/// (null for a table without a primary key).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub value: Value,
    pub key: Value,
}

impl CapturedTable {
    /// The table's schemas from its columns (table order) and primary key (key order); the
    /// value holds the columns `included` accepts (`column.include.list` /
    /// `column.exclude.list`) but those Debezium leaves out ([`types::ignored_by_debezium`]),
    /// as Debezium's `TableSchemaBuilder` filters. Errors: an emitted
    /// column of a type without a mapping (named, see [`types::column_schema`]); a key column
    /// left out (named: Debezium's snapshot keys then hold its zero value, not followed).
    pub fn new(
        topic: String,
        schema: &str,
        table: &str,
        columns: Vec<Column>,
        key: &[String],
        settings: TypeSettings,
        included: &dyn Fn(&str) -> bool,
    ) -> ConnectResult<CapturedTable> {
        let full = format!("{schema}.{table}");
        let mut mapped = Vec::with_capacity(columns.len());
        let mut value_columns = Vec::new();
        for (i, c) in columns.into_iter().enumerate() {
            let in_key = key.contains(&c.name);
            let ignored = types::ignored_by_debezium(&c);
            if ignored && !in_key {
                tracing::warn!(
                    "Unexpected JDBC type '2003' for column '{}' that will be ignored",
                    c.name
                );
            }
            let in_value = included(&c.name) && !ignored;
            if in_key && !in_value && !ignored {
                // Debezium's snapshot then writes the column's zero value in the key.
                return Err(tributary_api::ConnectError::config(format!(
                    "column.include.list / column.exclude.list leave key column {full}.{} out of the value, which Tributary's native PostgresConnector does not follow; {}",
                    c.name,
                    crate::config::USE_HOSTED
                )));
            }
            let (s, kind) = if in_key || in_value {
                types::column_schema(&full, &c, settings)?
            } else {
                // Never converted: its text is skipped.
                (
                    SchemaBuilder::string().optional().build(),
                    types::Kind::Text,
                )
            };
            if in_value {
                value_columns.push(i);
            }
            mapped.push((c, s, kind));
        }
        let key_columns: Vec<usize> = key
            .iter()
            .filter_map(|k| mapped.iter().position(|(c, _, _)| &c.name == k))
            .collect();
        let key_schema = if key_columns.is_empty() {
            None
        } else {
            let mut b = SchemaBuilder::struct_().name(format!("{topic}.Key"));
            for i in &key_columns {
                let (c, s, _) = &mapped[*i];
                b = b.field(c.name.clone(), s.clone())?;
            }
            Some(b.build())
        };
        let mut b = SchemaBuilder::struct_()
            .optional()
            .name(format!("{topic}.Value"));
        for i in &value_columns {
            let (c, s, _) = &mapped[*i];
            b = b.field(c.name.clone(), s.clone())?;
        }
        let value_schema = b.build();
        let opt_l = || SchemaBuilder::int64().optional().build();
        let envelope_schema = SchemaBuilder::struct_()
            .name(format!("{topic}.Envelope"))
            .version(2)
            .field("before", value_schema.clone())?
            .field("after", value_schema.clone())?
            .field("source", source_schema())?
            .field("transaction", transaction_schema())?
            .field("op", SchemaBuilder::string().build())?
            .field("ts_ms", opt_l())?
            .field("ts_us", opt_l())?
            .field("ts_ns", opt_l())?
            .build();
        Ok(CapturedTable {
            schema: schema.to_string(),
            table: table.to_string(),
            topic,
            columns: mapped,
            value_columns,
            key_columns,
            key_schema,
            value_schema,
            envelope_schema,
        })
    }

    /// [`CapturedTable::new`] for table `schema.table` of `config`: its topic, its type
    /// settings and its columns filtered by `column.include.list` / `column.exclude.list`.
    pub fn of(
        config: &crate::config::PostgresConfig,
        schema: &str,
        table: &str,
        columns: Vec<Column>,
        key: &[String],
    ) -> ConnectResult<CapturedTable> {
        CapturedTable::new(
            config.topic(schema, table),
            schema,
            table,
            columns,
            key,
            config.types,
            &|column: &str| config.columns.includes(schema, table, column),
        )
    }

    /// A row from its columns' text (`None`: NULL), every column's in table order.
    pub fn row(&self, texts: &[Option<&str>]) -> ConnectResult<Row> {
        let convert = |i: &usize| {
            let (_, schema, kind) = &self.columns[*i];
            types::value(kind, schema, texts.get(*i).copied().flatten())
        };
        let values = self
            .value_columns
            .iter()
            .map(convert)
            .collect::<ConnectResult<Vec<Value>>>()?;
        let value = Value::Struct(Struct::from_values(self.value_schema.clone(), values)?);
        let key = match &self.key_schema {
            None => Value::Null,
            Some(schema) => {
                let values = self
                    .key_columns
                    .iter()
                    .map(convert)
                    .collect::<ConnectResult<Vec<Value>>>()?;
                Value::Struct(Struct::from_values(schema.clone(), values)?)
            }
        };
        Ok(Row { value, key })
    }
}

/// Where and when a change happened, for its `source` block and offset.
#[derive(Debug, Clone)]
pub struct SourcePosition {
    /// Microseconds since the epoch (Debezium's `ts_usec`; `ts_ms`, `ts_us`, `ts_ns` derive).
    pub ts_us: i64,
    pub tx_id: Option<i64>,
    pub lsn: Option<i64>,
    /// The last commit's LSN (`sequence`'s first element, the offset's `lsn_commit`).
    pub last_commit_lsn: Option<i64>,
    /// `Some` for a snapshot record.
    pub snapshot: Option<SnapshotMarker>,
}

/// The connector's shared settings for building records.
#[derive(Debug, Clone)]
pub struct EventBuilder {
    /// `topic.prefix`: the `source.name` and the partition's `server`.
    pub server: String,
    pub db: String,
    /// `{"server": <topic.prefix>}`, shared by every record.
    pub partition: Arc<SourceMap>,
}

/// Now, since the epoch, in ns.
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl EventBuilder {
    pub fn new(server: &str, db: &str) -> EventBuilder {
        let mut partition = SourceMap::new();
        partition.insert("server".into(), server.into());
        EventBuilder {
            server: server.to_string(),
            db: db.to_string(),
            partition: Arc::new(partition),
        }
    }

    fn source(&self, table: &CapturedTable, pos: &SourcePosition) -> ConnectResult<Value> {
        self.source_of(&table.schema, &table.table, pos)
    }

    /// The `source` block of an event of table `schema.table` (both empty for a logical
    /// decoding message, as Debezium's `SourceInfo` has no table then).
    fn source_of(&self, schema: &str, table: &str, pos: &SourcePosition) -> ConnectResult<Value> {
        let opt = |v: Option<i64>| v.map_or(Value::Null, Value::Int64);
        let sequence = format!(
            "[{},{}]",
            pos.last_commit_lsn
                .map_or("null".to_string(), |l| format!("\"{l}\"")),
            pos.lsn.map_or("null".to_string(), |l| format!("\"{l}\""))
        );
        Ok(Value::Struct(Struct::from_values(
            source_schema(),
            vec![
                Value::String(DEBEZIUM_VERSION.into()),
                Value::String("postgresql".into()),
                Value::String(self.server.clone()),
                Value::Int64(pos.ts_us.div_euclid(1000)),
                Value::String(pos.snapshot.map_or("false", SnapshotMarker::as_str).into()),
                Value::String(self.db.clone()),
                Value::String(sequence),
                Value::Int64(pos.ts_us),
                Value::Int64(pos.ts_us * 1000),
                Value::String(schema.to_string()),
                Value::String(table.to_string()),
                opt(pos.tx_id),
                opt(pos.lsn),
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        )?))
    }

    /// A change event: `op` is `r`, `c`, `u`, `d` or `t`; its key is `after`'s, else
    /// `before`'s, else null.
    pub fn event(
        &self,
        table: &CapturedTable,
        op: &str,
        before: Option<Row>,
        after: Option<Row>,
        pos: &SourcePosition,
        offset: SourceMap,
    ) -> ConnectResult<SourceRecord> {
        let key = after
            .as_ref()
            .or(before.as_ref())
            .map_or(Value::Null, |r| r.key.clone());
        let before = before.map_or(Value::Null, |r| r.value);
        let after = after.map_or(Value::Null, |r| r.value);
        let now = now_ns();
        let envelope = Struct::from_values(
            table.envelope_schema.clone(),
            vec![
                before,
                after,
                self.source(table, pos)?,
                Value::Null,
                Value::String(op.into()),
                Value::Int64(now.div_euclid(1_000_000)),
                Value::Int64(now.div_euclid(1_000)),
                Value::Int64(now),
            ],
        )?;
        let mut record = SourceRecord::new(
            Arc::clone(&self.partition),
            offset,
            table.topic.clone(),
            Some(table.envelope_schema.clone()),
            Value::Struct(envelope),
        );
        record.key_schema = table.key_schema.clone();
        record.key = key;
        Ok(record)
    }

    /// A truncate event of `table` (`op` `t`, no `before` or `after`), as Debezium's
    /// `Envelope.truncate`: no key, nor key schema.
    pub fn truncate(
        &self,
        table: &CapturedTable,
        pos: &SourcePosition,
        offset: SourceMap,
    ) -> ConnectResult<SourceRecord> {
        let mut record = self.event(table, "t", None, None, pos, offset)?;
        record.key_schema = None;
        record.key = Value::Null;
        Ok(record)
    }

    /// A heartbeat record (Debezium's `HeartbeatImpl`) to `topic`, partition 0, carrying
    /// `offset`: key `io.debezium.connector.common.ServerNameKey {serverName: topic.prefix}`,
    /// value `io.debezium.connector.common.Heartbeat {ts_ms: now}`.
    pub fn heartbeat(&self, topic: &str, offset: SourceMap) -> SourceRecord {
        static SCHEMAS: OnceLock<(SchemaRef, SchemaRef)> = OnceLock::new();
        let (key_schema, value_schema) = SCHEMAS.get_or_init(|| {
            let key = SchemaBuilder::struct_()
                .name("io.debezium.connector.common.ServerNameKey")
                .version(1)
                .field("serverName", SchemaBuilder::string().build())
                .expect("one field")
                .build();
            let value = SchemaBuilder::struct_()
                .name("io.debezium.connector.common.Heartbeat")
                .version(1)
                .field("ts_ms", SchemaBuilder::int64().build())
                .expect("one field")
                .build();
            (key, value)
        });
        let key = Struct::from_values(key_schema.clone(), vec![Value::String(self.server.clone())])
            .expect("a string field");
        let value = Struct::from_values(
            value_schema.clone(),
            vec![Value::Int64(now_ns().div_euclid(1_000_000))],
        )
        .expect("an int64 field");
        let mut record = SourceRecord::new(
            Arc::clone(&self.partition),
            offset,
            topic.to_string(),
            Some(value_schema.clone()),
            Value::Struct(value),
        );
        record.kafka_partition = Some(0);
        record.key_schema = Some(key_schema.clone());
        record.key = Value::Struct(key);
        record
    }

    /// A logical decoding message's event (`pg_logical_emit_message`), as Debezium's
    /// `LogicalDecodingMessageMonitor` writes it to `<topic.prefix>.message`: key
    /// `MessageKey {prefix}`, value `MessageValue {op: "m", ts_ms, source, transaction,
    /// message: {prefix, content}}`, `content` as `binary.handling.mode` gives bytes.
    pub fn message(
        &self,
        prefix: &str,
        content: Value,
        pos: &SourcePosition,
        offset: SourceMap,
    ) -> ConnectResult<SourceRecord> {
        let schemas = message_schemas(&content);
        let block = Struct::from_values(
            schemas.block.clone(),
            vec![Value::String(prefix.to_string()), content],
        )?;
        let value = Struct::from_values(
            schemas.value.clone(),
            vec![
                Value::String("m".into()),
                Value::Int64(now_ns().div_euclid(1_000_000)),
                self.source_of("", "", pos)?,
                Value::Null,
                Value::Struct(block),
            ],
        )?;
        let key =
            Struct::from_values(schemas.key.clone(), vec![Value::String(prefix.to_string())])?;
        let mut record = SourceRecord::new(
            Arc::clone(&self.partition),
            offset,
            format!("{}.message", self.server),
            Some(schemas.value.clone()),
            Value::Struct(value),
        );
        record.key_schema = Some(schemas.key.clone());
        record.key = Value::Struct(key);
        Ok(record)
    }
}

/// The schemas of a logical decoding message's event (`PostgresSchemaFactory`).
struct MessageSchemas {
    key: SchemaRef,
    block: SchemaRef,
    value: SchemaRef,
}

/// The message schemas for a `content` of bytes (`binary.handling.mode=bytes`) or of a string
/// (the other modes).
fn message_schemas(content: &Value) -> &'static MessageSchemas {
    static BYTES: OnceLock<MessageSchemas> = OnceLock::new();
    static STRING: OnceLock<MessageSchemas> = OnceLock::new();
    let (cell, content_schema): (_, fn() -> SchemaRef) = match content {
        Value::String(_) => (&STRING, || SchemaBuilder::string().optional().build()),
        _ => (&BYTES, || SchemaBuilder::bytes().optional().build()),
    };
    cell.get_or_init(|| {
        let opt_s = || SchemaBuilder::string().optional().build();
        let key = SchemaBuilder::struct_()
            .name("io.debezium.connector.postgresql.MessageKey")
            .version(1)
            .field("prefix", opt_s())
            .expect("one field")
            .build();
        let block = SchemaBuilder::struct_()
            .name("io.debezium.connector.postgresql.Message")
            .version(1)
            .field("prefix", opt_s())
            .and_then(|b| b.field("content", content_schema()))
            .expect("distinct fields")
            .build();
        let value = SchemaBuilder::struct_()
            .name("io.debezium.connector.postgresql.MessageValue")
            .version(1)
            .field("op", SchemaBuilder::string().build())
            .and_then(|b| b.field("ts_ms", SchemaBuilder::int64().optional().build()))
            .and_then(|b| b.field("source", source_schema()))
            .and_then(|b| b.field("transaction", transaction_schema()))
            .and_then(|b| b.field("message", block.clone()))
            .expect("distinct fields")
            .build();
        MessageSchemas { key, block, value }
    })
}

/// A snapshot record's offset (`PostgresOffsetContext.getOffset` during a snapshot), its keys
/// in the order Java's `HashMap` iterates them (as Connect's JSON converter writes them).
pub fn snapshot_offset(pos: &SourcePosition, last: bool) -> SourceMap {
    let mut entries: Vec<(&str, serde_json::Value)> = vec![("ts_usec", pos.ts_us.into())];
    if let Some(tx) = pos.tx_id {
        entries.push(("txId", tx.into()));
    }
    if let Some(lsn) = pos.lsn {
        entries.push(("lsn", lsn.into()));
    }
    entries.push(("snapshot", "INITIAL".into()));
    entries.push(("last_snapshot_record", last.into()));
    // The last record goes out once the snapshot completed (Debezium buffers it until then).
    entries.push(("snapshot_completed", last.into()));
    java_ordered(&entries)
}

/// `entries` in the order a Java `HashMap` they were put into iterates them.
pub fn java_ordered(entries: &[(&str, serde_json::Value)]) -> SourceMap {
    let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
    java_hash_map::order(&keys)
        .into_iter()
        .map(|(k, v)| (entries[k].0.to_string(), entries[v].1.clone()))
        .collect()
}

/// Whether a committed offset says the initial snapshot is done, as Debezium's
/// `OffsetContext.Loader` and `CommonOffsetContext.isInitialSnapshotRunning` read it: unless
/// `snapshot` names an initial snapshot (`INITIAL`, or `true` / `"true"` as older versions
/// wrote it) that neither reached its last record (`last_snapshot_record`, a boolean) nor
/// completed (`snapshot_completed`, `true` or `"true"`). A `BLOCKING` (on-demand) snapshot's
/// offset is a streaming one.
pub fn snapshot_done(offset: &SourceMap) -> bool {
    use serde_json::Value as J;
    let initial = match offset.get("snapshot") {
        Some(J::Bool(b)) => *b,
        Some(J::String(s)) => s == "INITIAL" || s == "true",
        _ => false,
    };
    let last = offset.get("last_snapshot_record") == Some(&J::Bool(true));
    let completed = matches!(offset.get("snapshot_completed"), Some(J::Bool(true)))
        || matches!(offset.get("snapshot_completed"), Some(J::String(s)) if s == "true");
    !initial || last || completed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_wins_over_first_as_in_debezium() {
        use SnapshotMarker::*;
        assert_eq!(SnapshotMarker::resolve(true, true, true, true), Last);
        assert_eq!(SnapshotMarker::resolve(true, false, true, false), First);
        assert_eq!(
            SnapshotMarker::resolve(false, false, true, true),
            LastInDataCollection
        );
        assert_eq!(
            SnapshotMarker::resolve(false, false, true, false),
            FirstInDataCollection
        );
        assert_eq!(SnapshotMarker::resolve(false, false, false, false), True);
    }

    #[test]
    fn a_snapshot_offset_marks_its_last_record() {
        let pos = SourcePosition {
            ts_us: 5,
            tx_id: Some(7),
            lsn: Some(9),
            last_commit_lsn: None,
            snapshot: Some(SnapshotMarker::True),
        };
        assert!(!snapshot_done(&snapshot_offset(&pos, false)));
        assert!(snapshot_done(&snapshot_offset(&pos, true)));
        let mut streaming = SourceMap::new();
        streaming.insert("lsn".into(), 9.into());
        assert!(snapshot_done(&streaming));
        // Older versions' flags, and an on-demand snapshot's offset, as Debezium reads them.
        let with = |pairs: &[(&str, serde_json::Value)]| {
            let mut o = streaming.clone();
            for (k, v) in pairs {
                o.insert(k.to_string(), v.clone());
            }
            o
        };
        assert!(!snapshot_done(&with(&[("snapshot", true.into())])));
        assert!(!snapshot_done(&with(&[("snapshot", "true".into())])));
        assert!(snapshot_done(&with(&[("snapshot", "BLOCKING".into())])));
        assert!(snapshot_done(&with(&[
            ("snapshot", "INITIAL".into()),
            ("snapshot_completed", "true".into())
        ])));
        assert!(!snapshot_done(&with(&[
            ("snapshot", "INITIAL".into()),
            ("last_snapshot_record", false.into())
        ])));
    }
}
