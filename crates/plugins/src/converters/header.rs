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
//! Reading: the empty string is a STRING; `true` / `false` are BOOLEAN; `null` is a null value
//! without schema; ISO dates, times and timestamps in the formats above are Date, Time and
//! Timestamp; numbers become the narrowest of INT8 / INT16 / INT32 / INT64 when whole and
//! within a long, else FLOAT32 / FLOAT64 when they have a fraction and fit, else a Decimal;
//! everything else, including text that looks like an array or map, is read as a STRING
//! (Java would parse arrays and maps; Tributary does not yet).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use num_bigint::BigInt;
use tributary_api::config::ConfigDef;
use tributary_api::converter::HeaderConverter;
use tributary_api::data::{
    Date, Decimal, Schema, SchemaAndValue, SchemaRef, Time, Timestamp, Value,
};
use tributary_api::{ConnectResult, Props};

use super::java_fmt::{
    days_from_civil, double_to_string, float_to_string, format_date, format_time, format_timestamp,
    MILLIS_PER_DAY,
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

/// Connect's `Values.parseString` for scalar text (see the module docs).
pub fn parse_string(text: &str) -> SchemaAndValue {
    let string = || SchemaAndValue {
        schema: Some(Schema::string_schema()),
        value: Value::String(text.to_string()),
    };
    if text.is_empty() {
        return string();
    }
    let token = text.trim();
    match token {
        "null" => return SchemaAndValue::null(),
        "true" | "false" => {
            return SchemaAndValue {
                schema: Some(Schema::boolean_schema()),
                value: Value::Boolean(token == "true"),
            }
        }
        _ => {}
    }
    let first = token.chars().next().unwrap_or(' ');
    if first.is_ascii_digit() {
        if let Some(t) = parse_temporal(token) {
            return t;
        }
    }
    if first.is_ascii_digit() || first == '+' || first == '-' {
        if let Some(n) = parse_number(token) {
            return n;
        }
    }
    string()
}

fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn parse_date_part(s: &str) -> Option<i64> {
    let (y, rest) = s.split_once('-')?;
    let (m, d) = rest.split_once('-')?;
    let (y, m, d) = (digits(y)?, digits(m)?, digits(d)?);
    if y.to_string().len() > 4 || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

fn parse_time_part(s: &str) -> Option<i64> {
    let body = s.strip_suffix('Z')?;
    let (hms, ms) = body.split_once('.')?;
    let mut parts = hms.split(':');
    let (h, m, sec) = (
        digits(parts.next()?)?,
        digits(parts.next()?)?,
        digits(parts.next()?)?,
    );
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 || ms.len() != 3 {
        return None;
    }
    Some(((h * 60 + m) * 60 + sec) * 1000 + digits(ms)?)
}

/// ISO date (10 chars), time (13) or timestamp (24), by length as Connect decides.
fn parse_temporal(token: &str) -> Option<SchemaAndValue> {
    match token.len() {
        13 => parse_time_part(token).map(|ms| SchemaAndValue {
            schema: Some(Time::schema()),
            value: Value::Time(ms as i32),
        }),
        24 => {
            let (date, time) = token.split_once('T')?;
            let millis = parse_date_part(date)? * MILLIS_PER_DAY + parse_time_part(time)?;
            Some(SchemaAndValue {
                schema: Some(Timestamp::schema()),
                value: Value::Timestamp(millis),
            })
        }
        10 => {
            let days = parse_date_part(token)?;
            Some(SchemaAndValue {
                schema: Some(Date::schema()),
                value: Value::Date(i32::try_from(days).ok()?),
            })
        }
        _ => None,
    }
}

/// Java's `new BigDecimal(token)` grammar: sign, digits with an optional point, optional
/// exponent.
fn parse_big_decimal(token: &str) -> Option<Decimal> {
    let body = token.strip_prefix(['+', '-']).unwrap_or(token);
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.len() + frac.len() == 0
        || !int_part
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let exp: i32 = match exp {
        Some(e) => {
            let digits_part = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits_part.is_empty() || !digits_part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            e.strip_prefix('+').unwrap_or(e).parse().ok()?
        }
        None => 0,
    };
    let mut unscaled: BigInt = format!("{int_part}{frac}").parse().ok()?;
    if token.starts_with('-') {
        unscaled = -unscaled;
    }
    Some(Decimal::new(unscaled, frac.len() as i32 - exp))
}

/// Connect's number inference for header text.
fn parse_number(token: &str) -> Option<SchemaAndValue> {
    let d = parse_big_decimal(token)?;
    let text = d.to_string();
    let as_f64: f64 = text.parse().ok()?;
    let as_f32: f32 = text.parse().ok()?;
    let zero = d.unscaled == BigInt::from(0);
    let abs = as_f64.abs();
    // Whole numbers within a long (and not below 1 in magnitude unless zero) are integers.
    let whole = zero || d.scale <= 0 || {
        let ten = BigInt::from(10u8).pow(d.scale as u32);
        &d.unscaled % &ten == BigInt::from(0)
    };
    if whole && abs <= 1e19 && (zero || abs >= 1.0) {
        let int_value = if d.scale <= 0 {
            d.unscaled.clone() * BigInt::from(10u8).pow((-d.scale) as u32)
        } else {
            d.unscaled.clone() / BigInt::from(10u8).pow(d.scale as u32)
        };
        if let Ok(l) = i64::try_from(&int_value) {
            return Some(if let Ok(v) = i8::try_from(l) {
                SchemaAndValue {
                    schema: Some(Schema::int8_schema()),
                    value: Value::Int8(v),
                }
            } else if let Ok(v) = i16::try_from(l) {
                SchemaAndValue {
                    schema: Some(Schema::int16_schema()),
                    value: Value::Int16(v),
                }
            } else if let Ok(v) = i32::try_from(l) {
                SchemaAndValue {
                    schema: Some(Schema::int32_schema()),
                    value: Value::Int32(v),
                }
            } else {
                SchemaAndValue {
                    schema: Some(Schema::int64_schema()),
                    value: Value::Int64(l),
                }
            });
        }
    }
    if d.scale != 0 && as_f32.is_finite() {
        return Some(SchemaAndValue {
            schema: Some(Schema::float32_schema()),
            value: Value::Float32(as_f32),
        });
    }
    if d.scale != 0 && as_f64.is_finite() {
        return Some(SchemaAndValue {
            schema: Some(Schema::float64_schema()),
            value: Value::Float64(as_f64),
        });
    }
    let scale = d.scale;
    Some(SchemaAndValue {
        schema: Some(Decimal::schema(scale)),
        value: Value::Decimal(d),
    })
}
