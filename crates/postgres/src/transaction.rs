//! Transaction metadata (`provide.transaction.metadata`), as Debezium's `TransactionMonitor`,
//! `TransactionContext` and `DefaultTransactionStructMaker` (3.6.1) give it: a BEGIN record
//! and an END record per transaction on the transaction topic, each change event's
//! `transaction` block (`event.block {id, total_order, data_collection_order}`), each id
//! written as `<txId>:<lsn>` with the position of the record that carries it (Debezium's
//! `PostgresTransactionMonitor`), and the
//! transaction's counters in every offset written inside it (`transaction_id`,
//! `transaction_data_collection_order_<collection>`), so a task restarted mid-transaction
//! goes on counting where it stopped.

use std::sync::{Arc, OnceLock};

use tributary_api::data::java_hash_map;
use tributary_api::data::{SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::ConnectResult;

/// The offset key of the transaction id (`TransactionContext.OFFSET_TRANSACTION_ID`).
const OFFSET_ID: &str = "transaction_id";
/// The prefix of a collection's event count in the offset.
const OFFSET_COUNT_PREFIX: &str = "transaction_data_collection_order_";

/// The collection a logical decoding message counts under, as Debezium names it: a new
/// `LogicalDecodingMessageId` per message, which has no `toString` of its own, so Java's
/// default (`<class>@<identity hash in hex>`) names it: each message counts alone, under a
/// name no two JVMs share. An identity hash is a non-zero 31-bit number; a random one stands
/// in for it.
pub fn message_collection() -> String {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let identity = ((random as u32) & 0x7fff_ffff).max(1);
    format!(
        "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@{identity:x}"
    )
}

/// The transaction being written: its id (the PostgreSQL `xid` as a decimal string), and
/// its events counted per collection (`schema.table`, or [`message_collection`]) in the
/// order each collection first had one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionContext {
    id: Option<String>,
    per_collection: Vec<(String, i64)>,
}

impl TransactionContext {
    /// The context a committed offset stored (`TransactionContext.load`): none without a
    /// `transaction_id`.
    pub fn from_offset(offset: Option<&SourceMap>) -> TransactionContext {
        let Some(offset) = offset else {
            return TransactionContext::default();
        };
        TransactionContext {
            id: offset
                .get(OFFSET_ID)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            per_collection: offset
                .iter()
                .filter_map(|(k, v)| {
                    Some((
                        k.strip_prefix(OFFSET_COUNT_PREFIX)?.to_string(),
                        v.as_i64()?,
                    ))
                })
                .collect(),
        }
    }

    /// Whether a transaction is in progress.
    pub fn in_progress(&self) -> bool {
        self.id.is_some()
    }

    /// The transaction in progress's id.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// A transaction `id` begins: the counters start again.
    pub fn begin(&mut self, id: String) {
        self.per_collection.clear();
        self.id = Some(id);
    }

    /// The transaction ended.
    pub fn end(&mut self) {
        *self = TransactionContext::default();
    }

    /// The events of the transaction so far.
    pub fn total(&self) -> i64 {
        self.per_collection.iter().map(|(_, n)| n).sum()
    }

    /// One more event of `collection`, at position `lsn`: its `transaction` block
    /// (`event.block`).
    pub fn event(&mut self, collection: &str, lsn: Option<i64>) -> ConnectResult<Value> {
        let order = match self
            .per_collection
            .iter_mut()
            .find(|(c, _)| c == collection)
        {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.per_collection.push((collection.to_string(), 1));
                1
            }
        };
        Ok(Value::Struct(Struct::from_values(
            crate::envelope::transaction_schema(),
            vec![
                Value::String(self.written_id(lsn)),
                Value::Int64(self.total()),
                Value::Int64(order),
            ],
        )?))
    }

    /// The id as records show it: `<txId>:<lsn>` (`null` for an unknown position, as Java's
    /// `String.format` writes it).
    fn written_id(&self, lsn: Option<i64>) -> String {
        let lsn = lsn.map_or("null".to_string(), |l| l.to_string());
        format!("{}:{lsn}", self.id.as_deref().unwrap_or("null"))
    }

    /// The collections' counts in the order Debezium's `HashMap` of them iterates.
    fn counts_in_java_order(&self) -> Vec<(&str, i64)> {
        let keys: Vec<&str> = self
            .per_collection
            .iter()
            .map(|(c, _)| c.as_str())
            .collect();
        java_hash_map::order(&keys)
            .into_iter()
            .map(|(k, _)| (keys[k], self.per_collection[k].1))
            .collect()
    }

    /// `offset` with this context stored in it (`TransactionContext.store`), all keys in the
    /// order Java's `HashMap` of the offset iterates them. Unchanged when no transaction is in
    /// progress.
    pub fn store(&self, offset: SourceMap) -> SourceMap {
        if self.id.is_none() && self.per_collection.is_empty() {
            return offset;
        }
        let mut entries: Vec<(String, serde_json::Value)> = offset.into_iter().collect();
        if let Some(id) = &self.id {
            entries.push((OFFSET_ID.into(), id.clone().into()));
        }
        for (collection, n) in self.counts_in_java_order() {
            entries.push((format!("{OFFSET_COUNT_PREFIX}{collection}"), n.into()));
        }
        let refs: Vec<(&str, serde_json::Value)> = entries
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        crate::envelope::java_ordered(&refs)
    }

    /// The BEGIN (`end` false) or END record of this transaction for `topic`, committed at
    /// `ts_ms` (ms since the epoch), carrying `offset` (with this context stored; its `lsn`
    /// the position in the id): key `TransactionMetadataKey {id}`, value
    /// `TransactionMetadataValue {status, id, event_count, data_collections, ts_ms}` (the
    /// counts only on END).
    pub fn record(
        &self,
        partition: &Arc<SourceMap>,
        topic: &str,
        end: bool,
        ts_ms: i64,
        offset: SourceMap,
    ) -> ConnectResult<SourceRecord> {
        let schemas = schemas();
        let lsn = offset.get("lsn").and_then(serde_json::Value::as_i64);
        let id = Value::String(self.written_id(lsn));
        let (count, collections) = if end {
            let collections = self
                .counts_in_java_order()
                .into_iter()
                .map(|(c, n)| {
                    Ok(Value::Struct(Struct::from_values(
                        schemas.collection.clone(),
                        vec![Value::String(c.to_string()), Value::Int64(n)],
                    )?))
                })
                .collect::<ConnectResult<Vec<Value>>>()?;
            (Value::Int64(self.total()), Value::Array(collections))
        } else {
            (Value::Null, Value::Null)
        };
        let value = Struct::from_values(
            schemas.value.clone(),
            vec![
                Value::String(if end { "END" } else { "BEGIN" }.into()),
                id.clone(),
                count,
                collections,
                Value::Int64(ts_ms),
            ],
        )?;
        let key = Struct::from_values(schemas.key.clone(), vec![id])?;
        let mut record = SourceRecord::new(
            Arc::clone(partition),
            self.store(offset),
            topic.to_string(),
            Some(schemas.value.clone()),
            Value::Struct(value),
        );
        record.key_schema = Some(schemas.key.clone());
        record.key = Value::Struct(key);
        Ok(record)
    }
}

/// The transaction topic's schemas (Debezium's `SchemaFactory`, all version 1).
struct Schemas {
    key: SchemaRef,
    collection: SchemaRef,
    value: SchemaRef,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let key = SchemaBuilder::struct_()
            .name("io.debezium.connector.common.TransactionMetadataKey")
            .version(1)
            .field("id", SchemaBuilder::string().build())
            .expect("one field")
            .build();
        let collection = SchemaBuilder::struct_()
            .optional()
            .name("event.collection")
            .version(1)
            .field("data_collection", SchemaBuilder::string().build())
            .and_then(|b| b.field("event_count", SchemaBuilder::int64().build()))
            .expect("distinct fields")
            .build();
        let value = SchemaBuilder::struct_()
            .name("io.debezium.connector.common.TransactionMetadataValue")
            .version(1)
            .field("status", SchemaBuilder::string().build())
            .and_then(|b| b.field("id", SchemaBuilder::string().build()))
            .and_then(|b| b.field("event_count", SchemaBuilder::int64().optional().build()))
            .and_then(|b| {
                b.field(
                    "data_collections",
                    SchemaBuilder::array(collection.clone()).optional().build(),
                )
            })
            .and_then(|b| b.field("ts_ms", SchemaBuilder::int64().build()))
            .expect("distinct fields")
            .build();
        Schemas {
            key,
            collection,
            value,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_counted_per_collection_and_stored_in_the_offset() {
        let mut tx = TransactionContext::default();
        assert!(!tx.in_progress());
        let base = SourceMap::from_iter([("lsn".to_string(), 5.into())]);
        assert_eq!(tx.store(base.clone()), base);
        tx.begin("771".into());
        for c in ["public.b", "public.a", "public.b"] {
            tx.event(c, Some(1)).unwrap();
        }
        let block = tx.event("public.b", Some(40)).unwrap();
        let Value::Struct(s) = block else { panic!() };
        assert_eq!(s.get("id"), Some(&Value::String("771:40".into())));
        assert_eq!(s.get("total_order"), Some(&Value::Int64(4)));
        assert_eq!(s.get("data_collection_order"), Some(&Value::Int64(3)));
        let stored = tx.store(base);
        assert_eq!(stored["transaction_id"], "771");
        assert_eq!(stored["transaction_data_collection_order_public.b"], 3);
        assert_eq!(stored["transaction_data_collection_order_public.a"], 1);
        // A restarted task reads the same context back.
        assert_eq!(TransactionContext::from_offset(Some(&stored)).total(), 4);
        assert_eq!(
            TransactionContext::from_offset(Some(&stored)).id(),
            Some("771")
        );
        tx.end();
        assert_eq!(tx, TransactionContext::default());
    }
}
