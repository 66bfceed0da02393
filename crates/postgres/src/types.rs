//! PostgreSQL column types as Debezium 3.6.1 represents them in Connect (its
//! `PostgresValueConverter` with `time.precision.mode=adaptive` and
//! `binary.handling.mode=bytes`): each column's schema, and its value from PostgreSQL's text
//! output (what a snapshot's query and `pgoutput` both give).
//!
//! A type without a mapping here is refused ([`column_schema`] errors naming the column and
//! its type), never represented differently from Debezium.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use num_bigint::BigInt;
use tributary_api::data::{Decimal, SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::{DecimalMode, USE_HOSTED};

/// A captured table's column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// The type's name in `pg_type` (`int4`, `varchar`, `timestamptz`, …).
    pub type_name: String,
    /// `atttypmod`: -1 when the type has no modifier.
    pub typmod: i32,
    /// `NOT NULL` (or a primary key column): a required field.
    pub not_null: bool,
    /// The default's expression (`pg_get_expr` of `pg_attrdef`), e.g. `'x'::text` or `42`.
    pub default: Option<String>,
}

/// How a column's text becomes a Connect value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    Text,
    /// `numeric(p, s)` as Connect's `Decimal` with scale `s`.
    Decimal {
        scale: i32,
    },
    /// `numeric` without a scale as `io.debezium.data.VariableScaleDecimal`.
    VariableScaleDecimal,
    /// `numeric` with `decimal.handling.mode=double`.
    DecimalAsDouble,
    /// `numeric` with `decimal.handling.mode=string`.
    DecimalAsString,
    Bytes,
    /// `io.debezium.time.Date`: days since the epoch.
    Date,
    /// `io.debezium.time.Timestamp`: ms since the epoch (precision ≤ 3).
    TimestampMillis,
    /// `io.debezium.time.MicroTimestamp`: µs since the epoch.
    TimestampMicros,
    /// `io.debezium.time.ZonedTimestamp`: ISO-8601 in UTC with `width` fraction digits.
    ZonedTimestamp {
        width: u32,
    },
    /// `io.debezium.time.Time`: ms since midnight (precision ≤ 3).
    TimeMillis,
    /// `io.debezium.time.MicroTime`: µs since midnight.
    TimeMicros,
    /// `io.debezium.data.Uuid` / `io.debezium.data.Json`: the text as is.
    Named,
}

/// The precision of a temporal type's modifier (-1: PostgreSQL's default, 6).
fn time_precision(typmod: i32) -> u32 {
    if typmod < 0 {
        6
    } else {
        typmod as u32
    }
}

/// The column's Connect schema and how its values convert. Errors (naming the column, its type
/// and the hosted alternative) for a type this version does not map.
pub fn column_schema(
    table: &str,
    column: &Column,
    decimals: DecimalMode,
) -> ConnectResult<(SchemaRef, Kind)> {
    let named = |b: SchemaBuilder, name: &str| b.name(name).version(1);
    let (builder, kind) = match column.type_name.as_str() {
        "int2" => (SchemaBuilder::int16(), Kind::Int16),
        "int4" => (SchemaBuilder::int32(), Kind::Int32),
        "int8" => (SchemaBuilder::int64(), Kind::Int64),
        "float4" => (SchemaBuilder::float32(), Kind::Float32),
        "float8" => (SchemaBuilder::float64(), Kind::Float64),
        "bool" => (SchemaBuilder::boolean(), Kind::Boolean),
        "text" | "varchar" | "bpchar" => (SchemaBuilder::string(), Kind::Text),
        "numeric" => match decimals {
            DecimalMode::Double => (SchemaBuilder::float64(), Kind::DecimalAsDouble),
            DecimalMode::String => (SchemaBuilder::string(), Kind::DecimalAsString),
            DecimalMode::Precise if column.typmod >= 4 => {
                let m = column.typmod - 4;
                let (precision, scale) = ((m >> 16) & 0xffff, m & 0xffff);
                (
                    Decimal::builder(scale)
                        .parameter("connect.decimal.precision", precision.to_string()),
                    Kind::Decimal { scale },
                )
            }
            DecimalMode::Precise => (
                SchemaBuilder::struct_()
                    .name("io.debezium.data.VariableScaleDecimal")
                    .version(1)
                    .doc("Variable scaled decimal")
                    .field("scale", SchemaBuilder::int32().build())?
                    .field("value", SchemaBuilder::bytes().build())?,
                Kind::VariableScaleDecimal,
            ),
        },
        "bytea" => (SchemaBuilder::bytes(), Kind::Bytes),
        "date" => (
            named(SchemaBuilder::int32(), "io.debezium.time.Date"),
            Kind::Date,
        ),
        "timestamp" if time_precision(column.typmod) <= 3 => (
            named(SchemaBuilder::int64(), "io.debezium.time.Timestamp"),
            Kind::TimestampMillis,
        ),
        "timestamp" => (
            named(SchemaBuilder::int64(), "io.debezium.time.MicroTimestamp"),
            Kind::TimestampMicros,
        ),
        "timestamptz" => (
            named(SchemaBuilder::string(), "io.debezium.time.ZonedTimestamp"),
            Kind::ZonedTimestamp {
                width: time_precision(column.typmod),
            },
        ),
        "time" if time_precision(column.typmod) <= 3 => (
            named(SchemaBuilder::int32(), "io.debezium.time.Time"),
            Kind::TimeMillis,
        ),
        "time" => (
            named(SchemaBuilder::int64(), "io.debezium.time.MicroTime"),
            Kind::TimeMicros,
        ),
        "uuid" => (
            named(SchemaBuilder::string(), "io.debezium.data.Uuid"),
            Kind::Named,
        ),
        "json" | "jsonb" => (
            named(SchemaBuilder::string(), "io.debezium.data.Json"),
            Kind::Named,
        ),
        other => {
            return Err(ConnectError::config(format!(
                "column {table}.{} has type {other}, which Tributary's native PostgresConnector does not map yet; {USE_HOSTED}",
                column.name
            )))
        }
    };
    let builder = if column.not_null {
        builder
    } else {
        builder.optional()
    };
    let default = match &column.default {
        Some(expression) => default_value(table, column, &kind, expression)?,
        None => None,
    };
    let builder = match default {
        Some(text) => {
            let schema = builder.clone().build();
            builder.default_value(value(&kind, &schema, Some(&text))?)?
        }
        None => builder,
    };
    Ok((builder.build(), kind))
}

/// A column default as Debezium's `PostgresDefaultValueConverter` reads it: the literal's text
/// (`'x'::text` gives `x`, `42` gives `42`), a placeholder for a default a function generates,
/// or `None` where Debezium puts no default in the schema (`NULL::…`, types without a
/// mapper, `VariableScaleDecimal`'s struct). Errors for a type whose defaults this version
/// does not read (naming the column).
fn default_value(
    table: &str,
    column: &Column,
    kind: &Kind,
    expression: &str,
) -> ConnectResult<Option<String>> {
    // Debezium's placeholders for generated defaults (`nextval(…)`, `now()`, …), by type.
    let placeholder = match column.type_name.as_str() {
        "bool" => Some("false"),
        "bpchar" | "varchar" | "text" => Some(""),
        "numeric" | "float4" | "float8" => Some("0.0"),
        "int2" | "int4" | "int8" => Some("0"),
        "bytea" => return Ok(None),
        _ => None,
    };
    let Some(placeholder) = placeholder else {
        return Err(ConnectError::config(format!(
            "column {table}.{} has default {expression}, which Tributary's native PostgresConnector does not read for type {} yet; {USE_HOSTED}",
            column.name, column.type_name
        )));
    };
    let function = {
        let e = expression.trim_start_matches('(');
        let name_len = e
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(e.len());
        name_len > 0 && e[name_len..].starts_with('(') && e.contains(')')
    };
    let literal = if function {
        Some(placeholder.to_string())
    } else if !expression.contains('\'') {
        (!expression.starts_with("NULL::")).then(|| expression.to_string())
    } else {
        let start = expression.find('\'').expect("a quote") + 1;
        expression[start..]
            .find('\'')
            .map(|end| expression[start..start + end].to_string())
    };
    let Some(text) = literal else {
        return Ok(None);
    };
    Ok(match kind {
        // Java's Boolean.parseBoolean.
        Kind::Boolean => Some(
            if text.eq_ignore_ascii_case("true") {
                "t"
            } else {
                "f"
            }
            .into(),
        ),
        // A struct cannot be a default (KAFKA-12694): Debezium leaves it out.
        Kind::VariableScaleDecimal => None,
        _ => Some(text),
    })
}

fn bad(kind: &Kind, text: &str) -> ConnectError {
    ConnectError::data(format!("cannot read {text:?} as {kind:?}"))
}

fn parse<T: FromStr>(kind: &Kind, text: &str) -> ConnectResult<T> {
    text.parse().map_err(|_| bad(kind, text))
}

/// A float in PostgreSQL's text output (`NaN`, `Infinity` and `-Infinity` included).
fn float(kind: &Kind, text: &str) -> ConnectResult<f64> {
    match text {
        "NaN" => Ok(f64::NAN),
        "Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        _ => parse(kind, text),
    }
}

/// A `numeric`'s text as an unscaled integer and its scale (the digits after the point).
fn decimal(kind: &Kind, text: &str) -> ConnectResult<Decimal> {
    if text == "NaN" || text.ends_with("Infinity") {
        return Err(ConnectError::data(format!(
            "numeric value {text} has no Decimal representation; {USE_HOSTED}"
        )));
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let unscaled = BigInt::from_str(&format!("{int}{frac}")).map_err(|_| bad(kind, text))?;
    Ok(Decimal::new(unscaled, frac.len() as i32))
}

/// `text` rescaled to `scale` (PostgreSQL prints a `numeric(p, s)` with `s` digits already).
fn rescale(d: Decimal, scale: i32) -> Decimal {
    if d.scale >= scale {
        return d;
    }
    let factor = BigInt::from(10).pow((scale - d.scale) as u32);
    Decimal::new(d.unscaled * factor, scale)
}

fn hex(kind: &Kind, text: &str) -> ConnectResult<Vec<u8>> {
    let digits = text.strip_prefix("\\x").ok_or_else(|| bad(kind, text))?;
    if digits.len() % 2 != 0 {
        return Err(bad(kind, text));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| bad(kind, text)))
        .collect()
}

fn naive_timestamp(kind: &Kind, text: &str) -> ConnectResult<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").map_err(|_| bad(kind, text))
}

fn micros_of_day(t: NaiveTime) -> i64 {
    i64::from(t.num_seconds_from_midnight()) * 1_000_000 + i64::from(t.nanosecond() / 1_000)
}

/// The value of a missing (NULL) column: null when its field is optional; else, as Debezium's
/// `JdbcValueConverters.convertValue` gives it (a `NOT NULL` column missing from a delete's
/// old key tuple under `REPLICA IDENTITY DEFAULT`), the field's default, or its type's zero:
/// 0, false, "", empty bytes, the epoch, midnight.
fn fallback(kind: &Kind, schema: &SchemaRef) -> ConnectResult<Value> {
    if schema.optional {
        return Ok(Value::Null);
    }
    if let Some(default) = &schema.default_value {
        return Ok(default.clone());
    }
    let zero = match kind {
        Kind::Int16 | Kind::Int32 | Kind::Int64 | Kind::Float32 | Kind::Float64 => "0",
        Kind::Decimal { .. } | Kind::VariableScaleDecimal | Kind::DecimalAsDouble => "0",
        Kind::DecimalAsString => "0",
        Kind::Boolean => "f",
        Kind::Text | Kind::Named => "",
        Kind::Bytes => "\\x",
        Kind::Date => "1970-01-01",
        Kind::TimestampMillis | Kind::TimestampMicros => "1970-01-01 00:00:00",
        Kind::ZonedTimestamp { .. } => return Ok(Value::String("1970-01-01T00:00:00Z".into())),
        Kind::TimeMillis | Kind::TimeMicros => "00:00:00",
    };
    value(kind, schema, Some(zero))
}

/// Converts a column's text (with session settings `DateStyle=ISO`, `TimeZone=UTC`,
/// `bytea_output=hex`, `extra_float_digits=1`) to its Connect value; `None` is SQL NULL.
pub fn value(kind: &Kind, schema: &SchemaRef, text: Option<&str>) -> ConnectResult<Value> {
    let Some(text) = text else {
        return fallback(kind, schema);
    };
    Ok(match kind {
        Kind::Int16 => Value::Int16(parse(kind, text)?),
        Kind::Int32 => Value::Int32(parse(kind, text)?),
        Kind::Int64 => Value::Int64(parse(kind, text)?),
        Kind::Float32 => Value::Float32(float(kind, text)? as f32),
        Kind::Float64 | Kind::DecimalAsDouble => Value::Float64(float(kind, text)?),
        Kind::Boolean => Value::Boolean(match text {
            "t" => true,
            "f" => false,
            _ => return Err(bad(kind, text)),
        }),
        Kind::Text | Kind::Named | Kind::DecimalAsString => Value::String(text.to_string()),
        Kind::Decimal { scale } => Value::Decimal(rescale(decimal(kind, text)?, *scale)),
        Kind::VariableScaleDecimal => {
            let d = decimal(kind, text)?;
            Value::Struct(Struct::from_values(
                schema.clone(),
                vec![
                    Value::Int32(d.scale),
                    Value::Bytes(d.unscaled.to_signed_bytes_be()),
                ],
            )?)
        }
        Kind::Bytes => Value::Bytes(hex(kind, text)?),
        Kind::Date => {
            let d = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| bad(kind, text))?;
            let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("the epoch");
            Value::Int32((d - epoch).num_days() as i32)
        }
        Kind::TimestampMillis => {
            Value::Int64(naive_timestamp(kind, text)?.and_utc().timestamp_millis())
        }
        Kind::TimestampMicros => {
            Value::Int64(naive_timestamp(kind, text)?.and_utc().timestamp_micros())
        }
        Kind::ZonedTimestamp { width } => {
            // PostgreSQL prints the offset as +HH, +HH:MM or +HH:MM:SS.
            let t = DateTime::parse_from_str(&format!("{text}00"), "%Y-%m-%d %H:%M:%S%.f%#z")
                .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f%#z"))
                .map_err(|_| bad(kind, text))?
                .naive_utc();
            let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
            if *width > 0 {
                let digits = format!("{:09}", t.nanosecond());
                s.push('.');
                s.push_str(&digits[..(*width as usize).min(9)]);
            }
            s.push('Z');
            Value::String(s)
        }
        Kind::TimeMillis | Kind::TimeMicros => {
            let t = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").map_err(|_| bad(kind, text))?;
            let micros = micros_of_day(t);
            if *kind == Kind::TimeMillis {
                Value::Int32((micros / 1_000) as i32)
            } else {
                Value::Int64(micros)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(type_name: &str, typmod: i32) -> Column {
        Column {
            name: "c".into(),
            type_name: type_name.into(),
            typmod,
            not_null: false,
            default: None,
        }
    }

    fn convert(type_name: &str, typmod: i32, text: &str) -> Value {
        let (schema, kind) =
            column_schema("t", &col(type_name, typmod), DecimalMode::Precise).unwrap();
        value(&kind, &schema, Some(text)).unwrap()
    }

    #[test]
    fn values_are_debeziums() {
        // numeric(10,2): typmod is ((10 << 16) | 2) + 4.
        let Value::Decimal(d) = convert("numeric", (10 << 16 | 2) + 4, "12.34") else {
            panic!()
        };
        assert_eq!(
            (d.unscaled.to_signed_bytes_be(), d.scale),
            (vec![0x04, 0xd2], 2)
        );
        let Value::Struct(s) = convert("numeric", -1, "3.14159") else {
            panic!()
        };
        assert_eq!(s.get("scale"), Some(&Value::Int32(5)));
        assert_eq!(s.get("value"), Some(&Value::Bytes(vec![0x04, 0xcb, 0x2f])));
        assert_eq!(
            convert("bytea", -1, "\\x0102ff"),
            Value::Bytes(vec![1, 2, 255])
        );
        assert_eq!(convert("date", -1, "2024-02-29"), Value::Int32(19782));
        assert_eq!(
            convert("timestamp", -1, "2024-02-29 12:34:56.789"),
            Value::Int64(1_709_210_096_789_000)
        );
        assert_eq!(
            convert("timestamptz", -1, "2024-02-29 10:34:56.789+00"),
            Value::String("2024-02-29T10:34:56.789000Z".into())
        );
        assert_eq!(
            convert("timestamptz", 3, "2024-02-29 12:34:56+02:30"),
            Value::String("2024-02-29T10:04:56.000Z".into())
        );
        assert_eq!(
            convert("time", -1, "12:34:56.5"),
            Value::Int64(45_296_500_000)
        );
        assert_eq!(convert("time", 3, "12:34:56.5"), Value::Int32(45_296_500));
        assert_eq!(convert("float4", -1, "1.5"), Value::Float32(1.5));
        assert_eq!(convert("bool", -1, "f"), Value::Boolean(false));
    }

    #[test]
    fn defaults_are_read_as_debezium_reads_them() {
        let default_of = |type_name: &str, typmod: i32, expression: &str| {
            let mut c = col(type_name, typmod);
            c.default = Some(expression.into());
            let (schema, _) = column_schema("t", &c, DecimalMode::Precise).unwrap();
            schema.default_value.clone()
        };
        assert_eq!(
            default_of("text", -1, "'x'::text"),
            Some(Value::String("x".into()))
        );
        assert_eq!(default_of("int4", -1, "42"), Some(Value::Int32(42)));
        assert_eq!(
            default_of("int4", -1, "'-1'::integer"),
            Some(Value::Int32(-1))
        );
        // A generated default gets Debezium's placeholder.
        assert_eq!(
            default_of("int8", -1, "nextval('t_id_seq'::regclass)"),
            Some(Value::Int64(0))
        );
        assert_eq!(default_of("bool", -1, "true"), Some(Value::Boolean(true)));
        assert_eq!(default_of("text", -1, "NULL::text"), None);
        assert_eq!(default_of("numeric", -1, "1.5"), None, "no struct default");
        assert_eq!(default_of("bytea", -1, "'\\x00'::bytea"), None);
        let mut c = col("date", -1);
        c.default = Some("CURRENT_DATE".into());
        assert!(column_schema("t", &c, DecimalMode::Precise).is_err());
    }

    #[test]
    fn an_unmapped_type_is_refused_by_column() {
        let e = column_schema("public.t", &col("inet", -1), DecimalMode::Precise).unwrap_err();
        assert!(e.to_string().contains("public.t.c has type inet"), "{e}");
    }
}
