//! `org.apache.kafka.connect.storage.SimpleHeaderConverter`: header values as the text Connect's
//! `Values.convertToString` writes, parsed back with (a subset of) `Values.parseString`.
//!
//! Writing (UTF-8):
//! - strings as they are; numbers and booleans as Java prints them; bytes as base64;
//! - Date / Time / Timestamp values as `yyyy-MM-dd`, `HH:mm:ss.SSS'Z'` or
//!   `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` in UTC (Time for instants before 1970-01-02, Date for
//!   whole days, Timestamp otherwise);
//! - arrays as `[a,b]`, maps as `{k:v}`, structs as `{"field":v}` (defaults applied), with
//!   nested strings and bytes double-quoted (`\` and `"` backslash-escaped) and nested null
//!   as `null`.
//!
//! Reading is Connect's `Values.parseString` ([`tributary_api::data::values::parse_string`]):
//! the empty string is a STRING; `true` / `false` are BOOLEAN; `null` is a null value without
//! schema; ISO dates, times and timestamps in the formats above are Date, Time and Timestamp;
//! numbers become the narrowest of INT8 / INT16 / INT32 / INT64 when whole and within a long,
//! else FLOAT32 / FLOAT64 when they have a fraction and fit, else a Decimal; `[…]` and `{…}`
//! are arrays and maps with their common element, key and value schemas; everything else is a
//! STRING.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use tributary_api::config::ConfigDef;
use tributary_api::converter::HeaderConverter;
pub use tributary_api::data::values::parse_string;
use tributary_api::data::{SchemaAndValue, SchemaRef, Value};
use tributary_api::{ConnectResult, Props};

use super::java_fmt::{
    double_to_string, float_to_string, format_date, format_time, format_timestamp, MILLIS_PER_DAY,
};

/// Kafka Connect's `SimpleHeaderConverter`; it has no settings.
#[derive(Debug, Clone, Default)]
pub struct SimpleHeaderConverter;

impl SimpleHeaderConverter {
    /// A converter; it has no settings.
    pub fn new() -> SimpleHeaderConverter {
        SimpleHeaderConverter
    }

    /// No configuration keys.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
    }
}

impl HeaderConverter for SimpleHeaderConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

    fn configure(&mut self, _configs: &Props) -> ConnectResult<()> {
        Ok(())
    }

    /// The value's text (see the module docs) as UTF-8; null gives `None`.
    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        _schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        if value.is_null() {
            return Ok(None);
        }
        Ok(Some(convert_to_string(value).into_bytes()))
    }

    /// The schema and value parsed from the UTF-8 text (see the module docs).
    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        Ok(match value {
            None => SchemaAndValue::null(),
            Some(bytes) => parse_string(&String::from_utf8_lossy(bytes)),
        })
    }
}

/// Connect's `Values.convertToString` of a non-null value.
pub fn convert_to_string(value: &Value) -> String {
    let mut s = String::new();
    append(&mut s, value, false);
    s
}

fn append_millis(s: &mut String, millis: i64) {
    s.push_str(&if millis < MILLIS_PER_DAY {
        format_time(millis)
    } else if millis % MILLIS_PER_DAY == 0 {
        format_date(millis)
    } else {
        format_timestamp(millis)
    });
}

fn append(s: &mut String, value: &Value, embedded: bool) {
    let quoted = |s: &mut String, text: &str| {
        if embedded {
            s.push('"');
            s.push_str(&text.replace('\\', "\\\\").replace('"', "\\\""));
            s.push('"');
        } else {
            s.push_str(text);
        }
    };
    match value {
        Value::Null => s.push_str("null"),
        Value::Float32(v) => s.push_str(&float_to_string(*v)),
        Value::Float64(v) => s.push_str(&double_to_string(*v)),
        Value::String(text) => quoted(s, text),
        Value::Bytes(b) => {
            // Base64 never contains `\` or `"`, so quoting adds only the quotes.
            quoted(s, &STANDARD.encode(b));
        }
        Value::Date(d) => append_millis(s, *d as i64 * MILLIS_PER_DAY),
        Value::Time(t) => append_millis(s, *t as i64),
        Value::Timestamp(t) => append_millis(s, *t),
        Value::Array(items) => {
            s.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                append(s, item, true);
            }
            s.push(']');
        }
        Value::Map(entries) => {
            s.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                append(s, k, true);
                s.push(':');
                append(s, v, true);
            }
            s.push('}');
        }
        Value::Struct(st) => {
            s.push('{');
            for (i, field) in st.schema().fields.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                append(s, &Value::String(field.name.clone()), true);
                s.push(':');
                append(s, st.get(&field.name).unwrap_or(&Value::Null), true);
            }
            s.push('}');
        }
        // Integers, booleans and decimals print as Java does.
        other => s.push_str(&other.to_string()),
    }
}
