//! Connect's converters of single primitive values, under their class names in
//! `org.apache.kafka.connect.converters`: the number converters (Connect's `NumberConverter`
//! subclasses `ShortConverter`, `IntegerConverter`, `LongConverter`, `FloatConverter`,
//! `DoubleConverter`, since Kafka 2.0) and `BooleanConverter` (KIP-959). Each is a converter
//! and a header converter, configured only by `converter.type`.
//!
//! The bytes are Kafka's serializers': big-endian two's complement for the integers, the IEEE
//! 754 bits for the floats (a FLOAT32 NaN keeps its payload, as `FloatSerializer` writes the raw
//! bits; a FLOAT64 NaN is written as the canonical `7ff8000000000000`, as `DoubleSerializer`
//! writes `Double.doubleToLongBits`), one byte `1`/`0` for a boolean; a Kafka null is a Connect
//! null and back.

use tributary_api::config::ConfigDef;
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::{Schema, SchemaAndValue, SchemaRef, SchemaType, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::converter_config_def;

/// `Converter` and `HeaderConverter` of a primitive converter with `write(schema, value)` and
/// `read(bytes)`: the same for keys, values and headers; nothing to configure beyond
/// `converter.type`.
macro_rules! converter_impls {
    ($ty:ty) => {
        impl Converter for $ty {
            /// Pure computation: never blocks.
            fn may_block(&self) -> bool {
                false
            }

            fn configure(&mut self, _configs: &Props, _is_key: bool) -> ConnectResult<()> {
                Ok(())
            }

            fn from_connect_data(
                &self,
                _topic: &str,
                schema: Option<&SchemaRef>,
                value: &Value,
            ) -> ConnectResult<Option<Vec<u8>>> {
                self.write(schema, value)
            }

            fn to_connect_data(
                &self,
                _topic: &str,
                value: Option<&[u8]>,
            ) -> ConnectResult<SchemaAndValue> {
                self.read(value)
            }

            /// `converter.type` only.
            fn config(&self) -> ConfigDef {
                converter_config_def()
            }
        }

        impl HeaderConverter for $ty {
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
                self.write(schema, value)
            }

            fn to_connect_header(
                &self,
                _topic: &str,
                _header_key: &str,
                value: Option<&[u8]>,
            ) -> ConnectResult<SchemaAndValue> {
                self.read(value)
            }
        }
    };
}

/// Which number a [`NumberConverter`] writes and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberKind {
    /// `ShortConverter`: INT16, 2 bytes.
    Short,
    /// `IntegerConverter`: INT32, 4 bytes.
    Integer,
    /// `LongConverter`: INT64, 8 bytes.
    Long,
    /// `FloatConverter`: FLOAT32, 4 bytes.
    Float,
    /// `DoubleConverter`: FLOAT64, 8 bytes.
    Double,
}

impl NumberKind {
    /// The converter's class name.
    pub fn class(self) -> &'static str {
        match self {
            NumberKind::Short => "org.apache.kafka.connect.converters.ShortConverter",
            NumberKind::Integer => "org.apache.kafka.connect.converters.IntegerConverter",
            NumberKind::Long => "org.apache.kafka.connect.converters.LongConverter",
            NumberKind::Float => "org.apache.kafka.connect.converters.FloatConverter",
            NumberKind::Double => "org.apache.kafka.connect.converters.DoubleConverter",
        }
    }

    /// The type name Connect's messages use (`NumberConverter.typeName`).
    fn type_name(self) -> &'static str {
        match self {
            NumberKind::Short => "short",
            NumberKind::Integer => "integer",
            NumberKind::Long => "long",
            NumberKind::Float => "float",
            NumberKind::Double => "double",
        }
    }

    /// The schema values are read with.
    fn schema(self) -> SchemaRef {
        match self {
            NumberKind::Short => Schema::optional_int16_schema(),
            NumberKind::Integer => Schema::optional_int32_schema(),
            NumberKind::Long => Schema::optional_int64_schema(),
            NumberKind::Float => Schema::optional_float32_schema(),
            NumberKind::Double => Schema::optional_float64_schema(),
        }
    }

    /// The size Kafka's deserializer requires, and its message when the data has another size
    /// (the float deserializers name no class, as Kafka's do).
    fn size(self) -> (usize, &'static str) {
        match self {
            NumberKind::Short => (2, "Size of data received by ShortDeserializer is not 2"),
            NumberKind::Integer => (4, "Size of data received by IntegerDeserializer is not 4"),
            NumberKind::Long => (8, "Size of data received by LongDeserializer is not 8"),
            NumberKind::Float => (4, "Size of data received by Deserializer is not 4"),
            NumberKind::Double => (8, "Size of data received by Deserializer is not 8"),
        }
    }
}

/// Connect's `NumberConverter` for one [`NumberKind`]. Writing ignores the schema and takes
/// only a value of the kind's own type (an `Integer` for `IntegerConverter`, …) or null;
/// anything else fails with Connect's `Failed to serialize to <type> (was class <java
/// class>): ` ([`ConnectError::Data`]). Reading gives the kind's optional schema; data of
/// another size fails with `Failed to deserialize <type>: ` and Kafka's deserializer message.
#[derive(Debug, Clone, Copy)]
pub struct NumberConverter {
    kind: NumberKind,
}

impl NumberConverter {
    /// A converter of `kind`; it has no settings beyond `converter.type`.
    pub fn new(kind: NumberKind) -> NumberConverter {
        NumberConverter { kind }
    }

    /// The schema is not looked at, as Connect's `NumberConverter` does not.
    fn write(&self, _schema: Option<&SchemaRef>, value: &Value) -> ConnectResult<Option<Vec<u8>>> {
        let bytes = match (self.kind, value) {
            (_, Value::Null) => return Ok(None),
            (NumberKind::Short, Value::Int16(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Integer, Value::Int32(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Long, Value::Int64(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Float, Value::Float32(v)) => v.to_bits().to_be_bytes().to_vec(),
            (NumberKind::Double, Value::Float64(v)) => {
                // Java's `doubleToLongBits`: every NaN is the canonical one.
                let bits = if v.is_nan() {
                    0x7ff8_0000_0000_0000
                } else {
                    v.to_bits()
                };
                bits.to_be_bytes().to_vec()
            }
            (kind, other) => {
                return Err(ConnectError::data(format!(
                    "Failed to serialize to {} (was class {}): ",
                    kind.type_name(),
                    other.kind_name()
                )))
            }
        };
        Ok(Some(bytes))
    }

    fn read(&self, data: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        let schema = Some(self.kind.schema());
        let Some(data) = data else {
            return Ok(SchemaAndValue {
                schema,
                value: Value::Null,
            });
        };
        let (size, wrong_size) = self.kind.size();
        if data.len() != size {
            return Err(ConnectError::data(format!(
                "Failed to deserialize {}: {wrong_size}",
                self.kind.type_name()
            )));
        }
        let value = match self.kind {
            NumberKind::Short => Value::Int16(i16::from_be_bytes([data[0], data[1]])),
            NumberKind::Integer => Value::Int32(i32::from_be_bytes(fixed(data))),
            NumberKind::Long => Value::Int64(i64::from_be_bytes(fixed(data))),
            NumberKind::Float => Value::Float32(f32::from_bits(u32::from_be_bytes(fixed(data)))),
            NumberKind::Double => Value::Float64(f64::from_bits(u64::from_be_bytes(fixed(data)))),
        };
        Ok(SchemaAndValue { schema, value })
    }
}

/// `data` as an array of the length the caller checked.
fn fixed<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(data);
    out
}

converter_impls!(NumberConverter);

/// Connect's `BooleanConverter` (KIP-959): a BOOLEAN schema (or none) and a boolean (or null)
/// to one byte, `1` or `0`. Errors ([`ConnectError::Data`]): `Invalid schema type for
/// BooleanConverter: <TYPE>`, `BooleanConverter is not compatible with objects of type class
/// <java class>`, and on reading `Failed to deserialize boolean: ` with Kafka's
/// `BooleanDeserializer` message (the size is not 1, or the byte is neither 0 nor 1).
#[derive(Debug, Clone, Copy, Default)]
pub struct BooleanConverter;

/// `BooleanConverter`'s class name.
pub const BOOLEAN_CONVERTER: &str = "org.apache.kafka.connect.converters.BooleanConverter";

impl BooleanConverter {
    /// A converter; it has no settings beyond `converter.type`.
    pub fn new() -> BooleanConverter {
        BooleanConverter
    }

    fn write(&self, schema: Option<&SchemaRef>, value: &Value) -> ConnectResult<Option<Vec<u8>>> {
        if let Some(s) = schema {
            if s.schema_type != SchemaType::Boolean {
                return Err(ConnectError::data(format!(
                    "Invalid schema type for BooleanConverter: {}",
                    s.schema_type
                )));
            }
        }
        match value {
            Value::Null => Ok(None),
            Value::Boolean(b) => Ok(Some(vec![u8::from(*b)])),
            other => Err(ConnectError::data(format!(
                "BooleanConverter is not compatible with objects of type class {}",
                other.kind_name()
            ))),
        }
    }

    fn read(&self, data: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        let schema = Some(Schema::optional_boolean_schema());
        let value = match data {
            None => Value::Null,
            Some([1]) => Value::Boolean(true),
            Some([0]) => Value::Boolean(false),
            Some([b]) => {
                return Err(ConnectError::data(format!(
                    "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: {}",
                    *b as i8
                )))
            }
            Some(_) => {
                return Err(ConnectError::data(
                    "Failed to deserialize boolean: Size of data received by BooleanDeserializer is not 1",
                ))
            }
        };
        Ok(SchemaAndValue { schema, value })
    }
}

converter_impls!(BooleanConverter);

#[cfg(test)]
mod tests {
    use super::*;

    fn number(kind: NumberKind) -> NumberConverter {
        NumberConverter::new(kind)
    }

    /// What Kafka's serializers write (their big-endian layouts, checked by hand against
    /// `IntegerSerializer`, `LongSerializer`, `ShortSerializer`, `FloatSerializer` and
    /// `DoubleSerializer`), and back.
    #[test]
    fn numbers_are_kafkas_serializer_bytes_both_ways() {
        let cases: Vec<(NumberKind, Value, Vec<u8>)> = vec![
            (NumberKind::Short, Value::Int16(-2), vec![0xff, 0xfe]),
            (NumberKind::Integer, Value::Int32(258), vec![0, 0, 1, 2]),
            (
                NumberKind::Integer,
                Value::Int32(i32::MIN),
                vec![0x80, 0, 0, 0],
            ),
            (NumberKind::Long, Value::Int64(-1), vec![0xff; 8]),
            (
                NumberKind::Long,
                Value::Int64(1 << 40),
                vec![0, 0, 1, 0, 0, 0, 0, 0],
            ),
            (
                NumberKind::Float,
                Value::Float32(1.5),
                vec![0x3f, 0xc0, 0, 0],
            ),
            (
                NumberKind::Double,
                Value::Float64(-0.25),
                vec![0xbf, 0xd0, 0, 0, 0, 0, 0, 0],
            ),
        ];
        for (kind, value, bytes) in cases {
            let c = number(kind);
            assert_eq!(
                Converter::from_connect_data(&c, "t", None, &value).unwrap(),
                Some(bytes.clone()),
                "{kind:?} {value:?}"
            );
            let back = Converter::to_connect_data(&c, "t", Some(&bytes)).unwrap();
            assert_eq!(back.value, value, "{kind:?}");
            assert_eq!(back.schema, Some(kind.schema()));
            assert!(back.schema.unwrap().optional);
        }
    }

    #[test]
    fn nulls_stay_null_and_nans_are_written_as_kafkas_serializers_write_them() {
        for kind in [
            NumberKind::Short,
            NumberKind::Integer,
            NumberKind::Long,
            NumberKind::Float,
            NumberKind::Double,
        ] {
            let c = number(kind);
            assert_eq!(
                Converter::from_connect_data(&c, "t", None, &Value::Null).unwrap(),
                None
            );
            assert_eq!(
                Converter::to_connect_data(&c, "t", None).unwrap().value,
                Value::Null
            );
        }
        let nan = f32::from_bits(0x7fc0_0001);
        let bytes = Converter::from_connect_data(
            &number(NumberKind::Float),
            "t",
            None,
            &Value::Float32(nan),
        )
        .unwrap()
        .unwrap();
        assert_eq!(bytes, vec![0x7f, 0xc0, 0, 1]);
        let nan = f64::from_bits(0x7ff8_0000_0000_0002);
        let bytes = Converter::from_connect_data(
            &number(NumberKind::Double),
            "t",
            None,
            &Value::Float64(nan),
        )
        .unwrap()
        .unwrap();
        assert_eq!(bytes, vec![0x7f, 0xf8, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn wrong_types_and_sizes_get_connects_messages() {
        let e =
            Converter::from_connect_data(&number(NumberKind::Integer), "t", None, &Value::Int64(1))
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to serialize to integer (was class java.lang.Long): "
        );
        let e =
            Converter::to_connect_data(&number(NumberKind::Long), "t", Some(&[1, 2])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to deserialize long: Size of data received by LongDeserializer is not 8"
        );
        let e =
            Converter::to_connect_data(&number(NumberKind::Double), "t", Some(&[1])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to deserialize double: Size of data received by Deserializer is not 8"
        );
    }

    #[test]
    fn booleans_are_one_byte_and_refuse_other_schemas_types_and_bytes() {
        let c = BooleanConverter::new();
        let bool_schema = Schema::boolean_schema();
        for (b, byte) in [(true, 1u8), (false, 0u8)] {
            assert_eq!(
                Converter::from_connect_data(&c, "t", Some(&bool_schema), &Value::Boolean(b))
                    .unwrap(),
                Some(vec![byte])
            );
            let back = Converter::to_connect_data(&c, "t", Some(&[byte])).unwrap();
            assert_eq!(back.value, Value::Boolean(b));
            assert_eq!(back.schema, Some(Schema::optional_boolean_schema()));
        }
        assert_eq!(
            Converter::from_connect_data(&c, "t", None, &Value::Null).unwrap(),
            None
        );
        let e =
            Converter::from_connect_data(&c, "t", Some(&Schema::int32_schema()), &Value::Int32(1))
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid schema type for BooleanConverter: INT32"
        );
        let e =
            Converter::from_connect_data(&c, "t", None, &Value::String("true".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "BooleanConverter is not compatible with objects of type class java.lang.String"
        );
        let e = Converter::to_connect_data(&c, "t", Some(&[0xff])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: -1"
        );
        let e = Converter::to_connect_data(&c, "t", Some(&[0, 1])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Failed to deserialize boolean: Size of data received by BooleanDeserializer is not 1"
        );
    }

    #[test]
    fn headers_go_the_same_way() {
        let c = number(NumberKind::Short);
        let bytes =
            HeaderConverter::from_connect_header(&c, "t", "h", None, &Value::Int16(7)).unwrap();
        assert_eq!(bytes, Some(vec![0, 7]));
        let back = HeaderConverter::to_connect_header(&c, "t", "h", Some(&[0, 7])).unwrap();
        assert_eq!(back.value, Value::Int16(7));
    }
}
