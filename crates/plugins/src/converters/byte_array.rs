//! `org.apache.kafka.connect.converters.ByteArrayConverter`: passes BYTES values through
//! unchanged.

use tributary_api::config::ConfigDef;
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::{Schema, SchemaAndValue, SchemaRef, SchemaType, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::converter_config_def;

/// Kafka Connect's `ByteArrayConverter`, also usable as a header converter.
///
/// Writing accepts only a BYTES schema (or none) and a bytes value (or null, written as a Kafka
/// null). Errors ([`ConnectError::Data`], Java's `DataException`):
/// `Invalid schema type for ByteArrayConverter: <TYPE>` and
/// `ByteArrayConverter is not compatible with objects of type class <java class>`.
/// Reading gives an optional BYTES schema and the bytes as they are.
#[derive(Debug, Clone, Default)]
pub struct ByteArrayConverter;

impl ByteArrayConverter {
    /// A converter; it has no settings.
    pub fn new() -> ByteArrayConverter {
        ByteArrayConverter
    }

    fn write(schema: Option<&SchemaRef>, value: &Value) -> ConnectResult<Option<Vec<u8>>> {
        if let Some(s) = schema {
            if s.schema_type != SchemaType::Bytes {
                return Err(ConnectError::data(format!(
                    "Invalid schema type for ByteArrayConverter: {}",
                    s.schema_type
                )));
            }
        }
        match value {
            Value::Null => Ok(None),
            Value::Bytes(b) => Ok(Some(b.clone())),
            other => Err(ConnectError::data(format!(
                "ByteArrayConverter is not compatible with objects of type class {}",
                other.kind_name()
            ))),
        }
    }

    fn read(value: Option<&[u8]>) -> SchemaAndValue {
        SchemaAndValue {
            schema: Some(Schema::optional_bytes_schema()),
            value: value.map_or(Value::Null, |b| Value::Bytes(b.to_vec())),
        }
    }
}

impl Converter for ByteArrayConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

    /// Nothing to configure beyond `converter.type`.
    fn configure(&mut self, _configs: &Props, _is_key: bool) -> ConnectResult<()> {
        Ok(())
    }

    fn from_connect_data(
        &self,
        _topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        Self::write(schema, value)
    }

    /// As [`Converter::from_connect_data`], handing over a bytes value's buffer.
    fn from_connect_data_owned(
        &self,
        _topic: &str,
        schema: Option<&SchemaRef>,
        value: Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        match value {
            Value::Bytes(b) if schema.is_none_or(|s| s.schema_type == SchemaType::Bytes) => {
                Ok(Some(b))
            }
            other => Self::write(schema, &other),
        }
    }

    fn to_connect_data(&self, _topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        Ok(Self::read(value))
    }

    /// `converter.type` only.
    fn config(&self) -> ConfigDef {
        converter_config_def()
    }
}

impl HeaderConverter for ByteArrayConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

    fn configure(&mut self, _configs: &Props) -> ConnectResult<()> {
        Ok(())
    }

    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        Self::write(schema, value)
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        Ok(Self::read(value))
    }
}
