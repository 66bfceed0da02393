//! What the transformations share: which part of a record they work on (Connect's `$Key` /
//! `$Value` nested classes).

use tributary_api::data::{SchemaRef, Value};
use tributary_api::transforms::ConnectRecord;

/// The part of a record a `$Key` or `$Value` transformation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Part {
    /// The record key (`…$Key`).
    Key,
    /// The record value (`…$Value`).
    #[default]
    Value,
}

impl Part {
    /// The schema of this part, `None` for schemaless data (Connect's `operatingSchema`).
    pub fn schema<R: ConnectRecord>(self, record: &R) -> Option<&SchemaRef> {
        match self {
            Part::Key => record.key_schema(),
            Part::Value => record.value_schema(),
        }
    }

    /// The value of this part (Connect's `operatingValue`).
    pub fn value<R: ConnectRecord>(self, record: &R) -> &Value {
        match self {
            Part::Key => record.key(),
            Part::Value => record.value(),
        }
    }

    /// A record with this part replaced and everything else kept (Connect's `newRecord` of a
    /// `$Key` / `$Value` class).
    pub fn replace<R: ConnectRecord>(
        self,
        record: &R,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> R {
        match self {
            Part::Key => record.new_record(
                record.topic().to_string(),
                record.kafka_partition(),
                schema,
                value,
                record.value_schema().cloned(),
                record.value().clone(),
                record.timestamp(),
                record.headers().clone(),
            ),
            Part::Value => record.new_record(
                record.topic().to_string(),
                record.kafka_partition(),
                record.key_schema().cloned(),
                record.key().clone(),
                schema,
                value,
                record.timestamp(),
                record.headers().clone(),
            ),
        }
    }
}
