//! Connect's logical types: `Decimal`, `Date`, `Time`, `Timestamp`.

use std::fmt;

use num_bigint::BigInt;

use super::schema::{Schema, SchemaBuilder, SchemaRef, SchemaType};
use super::value::{bigint_to_string, Value};
use crate::error::{ConnectError, ConnectResult};

/// An arbitrary-precision decimal: unscaled integer × 10^-scale (Java's `BigDecimal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    /// The digits without the decimal point (Java's `unscaledValue()`).
    pub unscaled: BigInt,
    /// How many of the digits lie right of the decimal point; negative values append zeros.
    pub scale: i32,
}

impl Decimal {
    /// A decimal from its unscaled value and scale.
    pub fn new(unscaled: impl Into<BigInt>, scale: i32) -> Decimal {
        Decimal {
            unscaled: unscaled.into(),
            scale,
        }
    }

    /// Java's `BigDecimal.toPlainString()` (no exponent).
    pub fn to_plain_string(&self) -> String {
        let digits = bigint_to_string(&self.unscaled);
        let (neg, digits) = match digits.strip_prefix('-') {
            Some(d) => (true, d.to_string()),
            None => (false, digits),
        };
        let s = if self.scale <= 0 {
            let mut s = digits;
            if s != "0" {
                s.extend(std::iter::repeat_n('0', (-self.scale) as usize));
            }
            s
        } else {
            let scale = self.scale as usize;
            if digits.len() > scale {
                let (a, b) = digits.split_at(digits.len() - scale);
                format!("{a}.{b}")
            } else {
                format!("0.{}{}", "0".repeat(scale - digits.len()), digits)
            }
        };
        if neg {
            format!("-{s}")
        } else {
            s
        }
    }

    /// Parses a plain decimal string like `-12.345` (scale = digits after the point).
    pub fn parse(s: &str) -> ConnectResult<Decimal> {
        let bad = || ConnectError::data(format!("Invalid decimal: {s}"));
        let t = s.trim();
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i32>().map_err(|_| bad())?),
            None => (t, 0),
        };
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        let joined = format!("{int_part}{frac_part}");
        let unscaled: BigInt = joined.parse().map_err(|_| bad())?;
        Ok(Decimal {
            unscaled,
            scale: frac_part.len() as i32 - exp,
        })
    }
}

/// Java's `BigDecimal.toString()`: plain unless the exponent is small, scientific otherwise.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = bigint_to_string(&self.unscaled);
        let n_digits = digits.trim_start_matches('-').len() as i64;
        let adjusted = -(self.scale as i64) + (n_digits - 1);
        if self.scale >= 0 && adjusted >= -6 {
            return f.write_str(&self.to_plain_string());
        }
        let neg = digits.starts_with('-');
        let d = digits.trim_start_matches('-');
        let mut s = String::new();
        if neg {
            s.push('-');
        }
        s.push_str(&d[..1]);
        if d.len() > 1 {
            s.push('.');
            s.push_str(&d[1..]);
        }
        s.push('E');
        if adjusted >= 0 {
            s.push('+');
        }
        s.push_str(&adjusted.to_string());
        f.write_str(&s)
    }
}

/// Whether `value` is acceptable for logical type `name`; `None` if `name` is not a logical
/// type this crate knows (then the physical type decides).
///
/// Connect accepts only `BigDecimal` for Decimal and `java.util.Date` for the temporal types,
/// whatever the scale; Tributary also accepts the encoded forms (raw `Bytes` for Decimal,
/// `Int32` for Date/Time, `Int64` for Timestamp). A scale that differs from the schema's is
/// reported by [`Decimal::from_logical`], as in Connect.
pub(crate) fn value_matches_logical(name: &str, value: &Value) -> Option<bool> {
    Some(match name {
        Decimal::LOGICAL_NAME => matches!(value, Value::Decimal(_) | Value::Bytes(_)),
        Date::LOGICAL_NAME => matches!(value, Value::Date(_) | Value::Int32(_)),
        Time::LOGICAL_NAME => matches!(value, Value::Time(_) | Value::Int32(_)),
        Timestamp::LOGICAL_NAME => matches!(value, Value::Timestamp(_) | Value::Int64(_)),
        _ => return None,
    })
}

fn decimal_scale(schema: &Schema) -> Option<i32> {
    schema
        .parameters
        .as_ref()?
        .get(Decimal::SCALE_FIELD)?
        .parse()
        .ok()
}

impl Decimal {
    /// `org.apache.kafka.connect.data.Decimal`.
    pub const LOGICAL_NAME: &'static str = "org.apache.kafka.connect.data.Decimal";
    /// The schema parameter holding the scale.
    pub const SCALE_FIELD: &'static str = "scale";

    /// `Decimal.builder(scale)`: BYTES with the logical name, version 1 and the scale parameter.
    pub fn builder(scale: i32) -> SchemaBuilder {
        SchemaBuilder::bytes()
            .name(Self::LOGICAL_NAME)
            .parameter(Self::SCALE_FIELD, scale.to_string())
            .version(1)
    }
    /// `Decimal.schema(scale)`.
    pub fn schema(scale: i32) -> SchemaRef {
        Self::builder(scale).build()
    }
    /// Encodes as Connect does: the unscaled value's two's-complement big-endian bytes
    /// (`BigInteger.toByteArray`). Errors if the scale differs from the schema's.
    pub fn from_logical(schema: &Schema, value: &Decimal) -> ConnectResult<Vec<u8>> {
        match decimal_scale(schema) {
            Some(s) if s == value.scale => Ok(value.unscaled.to_signed_bytes_be()),
            Some(s) => Err(ConnectError::data(format!(
                "Decimal value has mismatching scale for given Decimal schema. Schema has scale {s}, value has scale {}.",
                value.scale
            ))),
            None => Err(ConnectError::data(
                "Invalid Decimal schema: scale parameter not found.",
            )),
        }
    }
    /// Decodes the unscaled two's-complement bytes with the schema's scale.
    pub fn to_logical(schema: &Schema, bytes: &[u8]) -> ConnectResult<Decimal> {
        let scale = decimal_scale(schema).ok_or_else(|| {
            ConnectError::data("Invalid Decimal schema: scale parameter not found.")
        })?;
        Ok(Decimal {
            unscaled: BigInt::from_signed_bytes_be(bytes),
            scale,
        })
    }
}

/// The Date logical type: INT32 days since the epoch.
pub struct Date;
impl Date {
    /// `org.apache.kafka.connect.data.Date`.
    pub const LOGICAL_NAME: &'static str = "org.apache.kafka.connect.data.Date";
    /// `Date.builder()`: INT32 with the logical name and version 1.
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder::int32().name(Self::LOGICAL_NAME).version(1)
    }
    /// The required schema, i.e. `builder()` built as is.
    pub fn schema() -> SchemaRef {
        Self::builder().build()
    }
}

/// The Time logical type: INT32 milliseconds since midnight.
pub struct Time;
impl Time {
    /// `org.apache.kafka.connect.data.Time`.
    pub const LOGICAL_NAME: &'static str = "org.apache.kafka.connect.data.Time";
    /// `Time.builder()`: INT32 with the logical name and version 1.
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder::int32().name(Self::LOGICAL_NAME).version(1)
    }
    /// The required schema, i.e. `builder()` built as is.
    pub fn schema() -> SchemaRef {
        Self::builder().build()
    }
}

/// The Timestamp logical type: INT64 milliseconds since the epoch.
pub struct Timestamp;
impl Timestamp {
    /// `org.apache.kafka.connect.data.Timestamp`.
    pub const LOGICAL_NAME: &'static str = "org.apache.kafka.connect.data.Timestamp";
    /// `Timestamp.builder()`: INT64 with the logical name and version 1.
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder::int64().name(Self::LOGICAL_NAME).version(1)
    }
    /// The required schema, i.e. `builder()` built as is.
    pub fn schema() -> SchemaRef {
        Self::builder().build()
    }
}

/// Whether a schema's type is the physical type of logical `name`.
pub fn logical_physical_type(name: &str) -> Option<SchemaType> {
    Some(match name {
        Decimal::LOGICAL_NAME => SchemaType::Bytes,
        Date::LOGICAL_NAME | Time::LOGICAL_NAME => SchemaType::Int32,
        Timestamp::LOGICAL_NAME => SchemaType::Int64,
        _ => return None,
    })
}
