//! PostgreSQL column types as Debezium 3.6.1 represents them in Connect (its
//! `PostgresValueConverter`, under `decimal.handling.mode`, `binary.handling.mode`,
//! `time.precision.mode` and `interval.handling.mode`): each column's schema, and its value
//! from PostgreSQL's text output (what a snapshot's query and `pgoutput` both give), arrays
//! of the mapped types included.
//!
//! A type without a mapping here is refused ([`column_schema`] errors naming the column and
//! its type), never represented differently from Debezium.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use num_bigint::BigInt;
use tributary_api::data::java_fmt::append_jackson_string;
use tributary_api::data::{Decimal, SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::{ConnectError, ConnectResult};

use crate::config::{BinaryMode, DecimalMode, IntervalMode, TimeMode, TypeSettings, USE_HOSTED};

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
    /// An enum type's labels (`pg_enum`, in creation order), or an enum array's element's.
    pub enum_values: Option<Vec<String>>,
    /// An array type's element type name (`typelem`'s `typname`).
    pub element: Option<String>,
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
    /// `io.debezium.data.Uuid` / `io.debezium.data.Json` / `io.debezium.data.Xml` /
    /// `io.debezium.data.Enum`: the text as is.
    Named,
    /// `binary.handling.mode` base64, base64-url-safe or hex: the bytes as a string.
    BytesAs(BinaryMode),
    /// `io.debezium.time.MicroDuration`: µs, a month being 365.25 / 12 days.
    MicroDuration,
    /// `io.debezium.time.Interval`: ISO 8601 `PnYnMnDTnHnMnS`.
    IntervalString,
    /// `io.debezium.time.ZonedTime`: the time at UTC, ISO 8601 with its offset (`Z`).
    ZonedTime,
    /// `time.precision.mode=connect`: Connect's `Date` (days).
    ConnectDate,
    /// `time.precision.mode=connect`: Connect's `Time` (ms since midnight).
    ConnectTime,
    /// `time.precision.mode=connect`: Connect's `Timestamp` (ms since the epoch).
    ConnectTimestamp,
    /// `money` (`decimal.handling.mode=precise`): Connect's `Decimal` with scale
    /// `money.fraction.digits`, rounded half up.
    Money {
        scale: i32,
    },
    /// `money` under `decimal.handling.mode=double`.
    MoneyAsDouble,
    /// `hstore` (`hstore.handling.mode=json`): the JSON object's text, its pairs in the order
    /// of the Java `HashMap` the JDBC driver reads them into.
    HstoreJson,
    /// `hstore` (`hstore.handling.mode=map`): a map, in that order.
    HstoreMap,
    /// PostGIS `geometry` / `geography` (`io.debezium.data.geometry.Geometry` /
    /// `Geography`): the EWKB as PostgreSQL prints it in hex, as bytes, and its SRID.
    /// `not_null`: the column's (a `Geometry` field is optional whatever the column, and a
    /// `NOT NULL` one missing from a delete's old key tuple is an empty geometry).
    Geometry {
        not_null: bool,
    },
    /// `io.debezium.time.IsoDate` (`isostring`): `2024-02-29Z`.
    IsoDate,
    /// `io.debezium.time.IsoTime` (`isostring`): `12:34:56.789Z` (Java's `ISO_OFFSET_TIME` at
    /// UTC: the fraction's digits without trailing zeros).
    IsoTime,
    /// `io.debezium.time.IsoTimestamp` (`isostring`): `2024-02-29T12:34:56.789Z`.
    IsoTimestamp,
    /// `io.debezium.time.NanoTime` (`nanoseconds`): ns since midnight.
    NanoTime,
    /// `io.debezium.time.NanoTimestamp` (`nanoseconds`): ns since the epoch.
    NanoTimestamp,
    /// `bit(1)` / `varbit(1)`: Connect's boolean, from `1` or `0`.
    Bit,
    /// `bit(n)` / `varbit(n)` of more than one bit (`io.debezium.data.Bits`): the bits as
    /// Java's `BitSet.toByteArray` gives them, the string's last character being bit 0 (little
    /// endian, no byte past the highest bit set: `B'0000'` is no byte at all).
    Bits,
    /// `point` (`io.debezium.data.geometry.Point`): `x`, `y`, the point's WKB (little endian)
    /// and no SRID, from PostgreSQL's `(x,y)`.
    Point,
    /// An array of elements of the kind (one dimension, NULL elements allowed).
    Array(Box<Kind>),
}

/// The precision of a temporal type's modifier (-1: PostgreSQL's default, 6).
fn time_precision(typmod: i32) -> u32 {
    if typmod < 0 {
        6
    } else {
        typmod as u32
    }
}

/// A `bit` or `varbit` column's length in bits from its modifier, as PostgreSQL's JDBC driver
/// reports it (`TypeInfoCache.getPrecision`): `bit(n)` and `varbit(n)` are `n` long, a
/// `varbit` without a length `Integer.MAX_VALUE`.
fn bit_length(type_name: &str, typmod: i32) -> i32 {
    match (type_name, typmod) {
        (_, n) if n > 0 => n,
        ("bit", _) => 1,
        _ => i32::MAX,
    }
}

/// Whether Debezium leaves `column` out of its events, having no schema for its type (its
/// `PostgresValueConverter` returns none for arrays of intervals, money, xml, names, bit
/// strings, points and cursors; `TableSchemaBuilder` warns and skips the column).
pub fn ignored_by_debezium(column: &Column) -> bool {
    column.element.as_deref().is_some_and(|e| {
        matches!(
            e,
            "interval" | "money" | "xml" | "name" | "varbit" | "point" | "refcursor"
        )
    })
}

/// Arrays whose elements this version does not read yet (Debezium maps them).
fn array_not_mapped(element: &str) -> bool {
    // Debezium gives a `bit[]` column the schema of one `bit` (not an array): not mapped.
    matches!(element, "hstore" | "geometry" | "geography" | "bit")
}

/// A scalar type's schema builder and kind under `settings`; `None` for a type this version
/// does not map.
fn scalar_schema(
    type_name: &str,
    typmod: i32,
    enum_values: Option<&[String]>,
    settings: TypeSettings,
) -> Option<(SchemaBuilder, Kind)> {
    let named = |b: SchemaBuilder, name: &str| b.name(name).version(1);
    let precision = time_precision(typmod);
    if let Some(values) = enum_values {
        return Some((
            named(SchemaBuilder::string(), "io.debezium.data.Enum")
                .parameter("allowed", values.join(",")),
            Kind::Named,
        ));
    }
    Some(match type_name {
        "int2" => (SchemaBuilder::int16(), Kind::Int16),
        "int4" => (SchemaBuilder::int32(), Kind::Int32),
        "int8" | "oid" => (SchemaBuilder::int64(), Kind::Int64),
        "float4" => (SchemaBuilder::float32(), Kind::Float32),
        "float8" => (SchemaBuilder::float64(), Kind::Float64),
        "bool" => (SchemaBuilder::boolean(), Kind::Boolean),
        "text" | "varchar" | "bpchar" | "inet" | "cidr" | "macaddr" | "macaddr8" | "int4range"
        | "int8range" | "numrange" | "daterange" | "tsrange" => {
            (SchemaBuilder::string(), Kind::Text)
        }
        "numeric" => match settings.decimals {
            DecimalMode::Double => (SchemaBuilder::float64(), Kind::DecimalAsDouble),
            DecimalMode::String => (SchemaBuilder::string(), Kind::DecimalAsString),
            DecimalMode::Precise if typmod >= 4 => {
                let m = typmod - 4;
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
                    .field("scale", SchemaBuilder::int32().build())
                    .and_then(|b| b.field("value", SchemaBuilder::bytes().build()))
                    .ok()?,
                Kind::VariableScaleDecimal,
            ),
        },
        // Debezium reads a snapshot's money as a double and a stream's as a decimal, which
        // under decimal.handling.mode=string print differently (100.0, 100.00): not mapped.
        "money" => match settings.decimals {
            DecimalMode::Precise => (
                Decimal::builder(settings.money_fraction_digits),
                Kind::Money {
                    scale: settings.money_fraction_digits,
                },
            ),
            DecimalMode::Double => (SchemaBuilder::float64(), Kind::MoneyAsDouble),
            DecimalMode::String => return None,
        },
        "bytea" => match settings.binary {
            BinaryMode::Bytes => (SchemaBuilder::bytes(), Kind::Bytes),
            mode => (SchemaBuilder::string(), Kind::BytesAs(mode)),
        },
        "date" if settings.time == TimeMode::IsoString => (
            named(SchemaBuilder::string(), "io.debezium.time.IsoDate"),
            Kind::IsoDate,
        ),
        "timestamp" if settings.time == TimeMode::IsoString => (
            named(SchemaBuilder::string(), "io.debezium.time.IsoTimestamp"),
            Kind::IsoTimestamp,
        ),
        "timestamp" if settings.time == TimeMode::Nanoseconds => (
            named(SchemaBuilder::int64(), "io.debezium.time.NanoTimestamp"),
            Kind::NanoTimestamp,
        ),
        "time" if settings.time == TimeMode::IsoString => (
            named(SchemaBuilder::string(), "io.debezium.time.IsoTime"),
            Kind::IsoTime,
        ),
        "time" if settings.time == TimeMode::Nanoseconds => (
            named(SchemaBuilder::int64(), "io.debezium.time.NanoTime"),
            Kind::NanoTime,
        ),
        "date" if settings.time == TimeMode::Connect => {
            (tributary_api::data::Date::builder(), Kind::ConnectDate)
        }
        "date" => (
            named(SchemaBuilder::int32(), "io.debezium.time.Date"),
            Kind::Date,
        ),
        "timestamp" if settings.time == TimeMode::Connect => (
            tributary_api::data::Timestamp::builder(),
            Kind::ConnectTimestamp,
        ),
        "timestamp" if precision <= 3 && settings.time != TimeMode::Microseconds => (
            named(SchemaBuilder::int64(), "io.debezium.time.Timestamp"),
            Kind::TimestampMillis,
        ),
        "timestamp" => (
            named(SchemaBuilder::int64(), "io.debezium.time.MicroTimestamp"),
            Kind::TimestampMicros,
        ),
        "timestamptz" => (
            named(SchemaBuilder::string(), "io.debezium.time.ZonedTimestamp"),
            Kind::ZonedTimestamp { width: precision },
        ),
        "time" if settings.time == TimeMode::Connect => {
            (tributary_api::data::Time::builder(), Kind::ConnectTime)
        }
        "time" if precision <= 3 && settings.time == TimeMode::Adaptive => (
            named(SchemaBuilder::int32(), "io.debezium.time.Time"),
            Kind::TimeMillis,
        ),
        "time" => (
            named(SchemaBuilder::int64(), "io.debezium.time.MicroTime"),
            Kind::TimeMicros,
        ),
        "timetz" => (
            named(SchemaBuilder::string(), "io.debezium.time.ZonedTime"),
            Kind::ZonedTime,
        ),
        "interval" => match settings.intervals {
            IntervalMode::Numeric => (
                named(SchemaBuilder::int64(), "io.debezium.time.MicroDuration"),
                Kind::MicroDuration,
            ),
            IntervalMode::String => (
                named(SchemaBuilder::string(), "io.debezium.time.Interval"),
                Kind::IntervalString,
            ),
        },
        "uuid" => (
            named(SchemaBuilder::string(), "io.debezium.data.Uuid"),
            Kind::Named,
        ),
        "json" | "jsonb" => (
            named(SchemaBuilder::string(), "io.debezium.data.Json"),
            Kind::Named,
        ),
        // Debezium's Geometry builder is optional whatever the column (Geography's is not).
        "geometry" => (
            geometry_struct("io.debezium.data.geometry.Geometry", "Geometry")?.optional(),
            Kind::Geometry { not_null: false },
        ),
        "geography" => (
            geometry_struct("io.debezium.data.geometry.Geography", "Geography")?,
            Kind::Geometry { not_null: false },
        ),
        "hstore" if settings.hstore_as_map => (
            SchemaBuilder::map(
                SchemaBuilder::string().build(),
                SchemaBuilder::string().optional().build(),
            ),
            Kind::HstoreMap,
        ),
        "hstore" => (
            named(SchemaBuilder::string(), "io.debezium.data.Json"),
            Kind::HstoreJson,
        ),
        "tsvector" => (
            named(SchemaBuilder::string(), "io.debezium.data.Tsvector"),
            Kind::Named,
        ),
        "xml" => (
            named(SchemaBuilder::string(), "io.debezium.data.Xml"),
            Kind::Named,
        ),
        "point" => (
            SchemaBuilder::struct_()
                .name("io.debezium.data.geometry.Point")
                .version(1)
                .doc("Geometry (POINT)")
                .field("x", SchemaBuilder::float64().build())
                .and_then(|b| b.field("y", SchemaBuilder::float64().build()))
                .and_then(|b| b.field("wkb", SchemaBuilder::bytes().optional().build()))
                .and_then(|b| b.field("srid", SchemaBuilder::int32().optional().build()))
                .ok()?,
            Kind::Point,
        ),
        // The column's length as the JDBC driver reports it (`bit` is `bit(1)`; a `varbit`
        // without one is Integer.MAX_VALUE long): one bit is a boolean, more are Bits.
        "bit" | "varbit" => match bit_length(type_name, typmod) {
            1 => (SchemaBuilder::boolean(), Kind::Bit),
            length => (
                named(SchemaBuilder::bytes(), "io.debezium.data.Bits")
                    .parameter("length", length.to_string()),
                Kind::Bits,
            ),
        },
        _ => return None,
    })
}

/// The column's Connect schema and how its values convert. Errors (naming the column, its type
/// and the hosted alternative) for a type this version does not map.
pub fn column_schema(
    table: &str,
    column: &Column,
    settings: TypeSettings,
) -> ConnectResult<(SchemaRef, Kind)> {
    let refused = |type_name: &str| {
        ConnectError::config(format!(
            "column {table}.{} has type {type_name}, which Tributary's native PostgresConnector does not map yet; {USE_HOSTED}",
            column.name
        ))
    };
    let (builder, kind) = match &column.element {
        Some(element) => {
            // Debezium maps no array of intervals, money, xml, names, bits or points (such a
            // column is left out of the value: a key column is refused).
            if ignored_by_debezium(column) || array_not_mapped(element) {
                return Err(refused(&column.type_name));
            }
            let (element_builder, element_kind) = scalar_schema(
                element,
                column.typmod,
                column.enum_values.as_deref(),
                settings,
            )
            .ok_or_else(|| refused(&column.type_name))?;
            // Debezium's enum array elements alone are not optional.
            let element_builder = if column.enum_values.is_some() {
                element_builder
            } else {
                element_builder.optional()
            };
            (
                SchemaBuilder::array(element_builder.build()),
                Kind::Array(Box::new(element_kind)),
            )
        }
        None => scalar_schema(
            &column.type_name,
            column.typmod,
            column.enum_values.as_deref(),
            settings,
        )
        .ok_or_else(|| refused(&column.type_name))?,
    };
    let kind = match kind {
        Kind::Geometry { .. } => Kind::Geometry {
            not_null: column.not_null,
        },
        kind => kind,
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
            match value(&kind, &schema, Some(&text)) {
                Ok(v) => builder.default_value(v)?,
                // An expression (a generated column's `(id * 2)`): no default, as Debezium's
                // converter warns and leaves it out.
                Err(_) => {
                    tracing::warn!(
                        "Cannot parse column default value '{}' to type '{}'. Expression evaluation is not supported.",
                        column.default.as_deref().unwrap_or_default(),
                        column.type_name
                    );
                    builder
                }
            }
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
    if column.element.is_some() {
        return Ok(None);
    }
    if column.enum_values.is_some() {
        // `extractEnumDefault`: the quoted literal before its cast (`'ok'::mood`), else none.
        let literal = expression.rfind("::").and_then(|cast| {
            let value = &expression[..cast];
            (value.len() >= 2 && value.starts_with('\'') && value.ends_with('\''))
                .then(|| value[1..value.len() - 1].to_string())
        });
        return Ok(literal);
    }
    // Debezium's placeholders for generated defaults (`nextval(…)`, `now()`,
    // `CURRENT_TIMESTAMP`, …), by type, in the text form `value` reads.
    let placeholder = match column.type_name.as_str() {
        "bool" => Some("false"),
        "bpchar" | "varchar" | "text" | "xml" => Some(""),
        "json" | "jsonb" => Some("{}"),
        "uuid" => Some("00000000-0000-0000-0000-000000000000"),
        // Debezium assumes a generated bit default is more than one bit long.
        "bit" => Some("00"),
        "varbit" => Some("0"),
        "numeric" | "float4" | "float8" => Some("0.0"),
        "int2" | "int4" | "int8" => Some("0"),
        "date" => Some("1970-01-01"),
        "time" => Some("00:00:00"),
        "timestamp" => Some("1970-01-01 00:00:00"),
        "timestamptz" => Some("1970-01-01 00:00:00+00"),
        // A generated interval default has no placeholder natively (Debezium's "epoch").
        "interval" => None,
        // Types Debezium's PostgresDefaultValueConverter has no mapper for: no default.
        "bytea" | "oid" | "money" | "hstore" | "geometry" | "geography" | "point" | "inet" | "cidr" | "macaddr" | "macaddr8" | "int4range" | "int8range"
        | "numrange" | "daterange" | "tsrange" | "timetz" => return Ok(None),
        _ => {
            return Err(ConnectError::config(format!(
                "column {table}.{} has default {expression}, which Tributary's native PostgresConnector does not read for type {} yet; {USE_HOSTED}",
                column.name, column.type_name
            )))
        }
    };
    // `FUNCTION_DEFAULT_PATTERN` and `CURRENT_DATE_TIMES`.
    let function = {
        let e = expression.trim_start_matches('(');
        let name_len = e
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(e.len());
        (name_len > 0 && e[name_len..].starts_with('(') && e.contains(')'))
            || matches!(
                expression.to_ascii_lowercase().as_str(),
                "current_timestamp"
                    | "current_time"
                    | "current_date"
                    | "localtime"
                    | "localtimestamp"
            )
    };
    let literal = if function {
        match placeholder {
            Some(p) => Some(p.to_string()),
            None => {
                return Err(ConnectError::config(format!(
                    "column {table}.{} has default {expression}, which Tributary's native PostgresConnector does not read for type {} yet; {USE_HOSTED}",
                    column.name, column.type_name
                )))
            }
        }
    } else if !expression.contains('\'') {
        (!expression.starts_with("NULL::")).then(|| expression.to_string())
    } else {
        // The first quoted literal up to the next quote, as Debezium 3.6.1 reads it (a
        // doubled quote inside ends it: `'it''s'` gives `it`).
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
        // A one-bit column's default of more bits converts to nothing.
        Kind::Bit if text.len() != 1 => None,
        _ => Some(text),
    })
}

/// A bit string's bytes as Java's `BitSet.toByteArray` gives them for the set whose bit `i` is
/// the string's `i`-th character from the end (Debezium's `PostgresValueConverter.convertBits`):
/// little endian, ending at the byte of the highest bit set. `None`: not a string of `0` and `1`.
fn bit_set_bytes(text: &str) -> Option<Vec<u8>> {
    let mut bytes = vec![0u8; text.len().div_ceil(8)];
    for (i, c) in text.bytes().rev().enumerate() {
        match c {
            b'1' => bytes[i / 8] |= 1 << (i % 8),
            b'0' => {}
            _ => return None,
        }
    }
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    Some(bytes)
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

/// A `money` value as Debezium's `PostgresMoney` reads PostgreSQL's text of it (`$1,234.56`,
/// `-$0.50`, or the plugin's `1234.56`): a sign (`-` or parentheses), one currency symbol,
/// thousands separators dropped.
fn money(kind: &Kind, text: &str) -> ConnectResult<Decimal> {
    let negative = text.starts_with('-') || text.starts_with('(');
    let mut s = text.trim_start_matches('-');
    if let Some(inner) = s.strip_prefix('(') {
        s = inner.strip_suffix(')').unwrap_or(inner);
    }
    if s.starts_with(|c: char| !c.is_ascii_digit() && c != '.') {
        s = &s[s.chars().next().map_or(0, char::len_utf8)..];
    }
    let digits = s.replace(',', "");
    let d = decimal(kind, &digits)?;
    Ok(if negative {
        Decimal::new(-d.unscaled, d.scale)
    } else {
        d
    })
}

/// Debezium's `Geometry` / `Geography` struct: the (E)WKB and the SRID.
fn geometry_struct(name: &str, doc: &str) -> Option<SchemaBuilder> {
    SchemaBuilder::struct_()
        .name(name)
        .version(1)
        .doc(doc)
        .field("wkb", SchemaBuilder::bytes().build())
        .and_then(|b| b.field("srid", SchemaBuilder::int32().optional().build()))
        .ok()
}

/// Hex digits (upper or lower case) as bytes; `None` for anything else.
fn hex_digits(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The SRID of an EWKB (Debezium's `PostgisGeometry.parseSrid`): the 4 bytes after the type
/// when its SRID flag (0x20000000) is set, in the byte order its first byte gives; `Some(None)`
/// without; `None` for fewer than 9 bytes.
fn ewkb_srid(ewkb: &[u8]) -> Option<Option<i32>> {
    if ewkb.len() < 9 {
        return None;
    }
    let little = ewkb[0] != 0;
    let int = |b: &[u8]| {
        let a: [u8; 4] = b.try_into().ok()?;
        Some(if little {
            i32::from_le_bytes(a)
        } else {
            i32::from_be_bytes(a)
        })
    };
    let geometry_type = int(&ewkb[1..5])?;
    if geometry_type & 0x2000_0000 == 0 {
        return Some(None);
    }
    Some(Some(int(&ewkb[5..9])?))
}

/// The pairs of an `hstore`'s text (`"a"=>"1", "b"=>NULL`, backslash escapes inside the
/// quotes), in order; `None` when the text is not one.
fn hstore_pairs(text: &str) -> Option<Vec<(String, Option<String>)>> {
    fn quoted(chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<String> {
        if chars.next()? != '"' {
            return None;
        }
        let mut s = String::new();
        loop {
            match chars.next()? {
                '\\' => s.push(chars.next()?),
                '"' => return Some(s),
                c => s.push(c),
            }
        }
    }
    let mut chars = text.chars().peekable();
    let mut pairs = Vec::new();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(pairs);
        }
        let key = quoted(&mut chars)?;
        if (chars.next()?, chars.next()?) != ('=', '>') {
            return None;
        }
        let value = if chars.peek() == Some(&'"') {
            Some(quoted(&mut chars)?)
        } else {
            let word: String = chars.by_ref().take(4).collect();
            (word == "NULL").then_some(())?;
            None
        };
        pairs.push((key, value));
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(pairs),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

/// `pairs` in the order a Java `HashMap` they were put into iterates them.
fn java_map_order(pairs: Vec<(String, Option<String>)>) -> Vec<(String, Option<String>)> {
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    tributary_api::data::java_hash_map::order(&keys)
        .into_iter()
        .map(|(k, v)| (pairs[k].0.clone(), pairs[v].1.clone()))
        .collect()
}

/// `d` at `scale`, rounded half up (away from zero), as Java's `setScale(…, HALF_UP)`.
fn round_half_up(d: Decimal, scale: i32) -> Decimal {
    if d.scale <= scale {
        return rescale(d, scale);
    }
    let factor = BigInt::from(10).pow((d.scale - scale) as u32);
    let half = &factor / 2;
    let negative = d.unscaled < BigInt::from(0);
    let magnitude = if negative { -d.unscaled } else { d.unscaled };
    let rounded: BigInt = (magnitude + half) / factor;
    Decimal::new(if negative { -rounded } else { rounded }, scale)
}

/// `text` rescaled to `scale` (PostgreSQL prints a `numeric(p, s)` with `s` digits already).
fn rescale(d: Decimal, scale: i32) -> Decimal {
    if d.scale >= scale {
        return d;
    }
    let factor = BigInt::from(10).pow((scale - d.scale) as u32);
    Decimal::new(d.unscaled * factor, scale)
}

/// A `bytea`'s text (`bytea_output=hex`: `\\x` and the digits) as bytes.
fn hex(kind: &Kind, text: &str) -> ConnectResult<Vec<u8>> {
    text.strip_prefix("\\x")
        .and_then(hex_digits)
        .ok_or_else(|| bad(kind, text))
}

fn naive_timestamp(kind: &Kind, text: &str) -> ConnectResult<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").map_err(|_| bad(kind, text))
}

/// A time of day as Java's `ISO_LOCAL_TIME` prints it: `HH:MM:SS`, then the fraction's digits
/// without trailing zeros (none when it is zero).
fn java_iso_time(t: NaiveTime) -> String {
    let mut s = t.format("%H:%M:%S").to_string();
    let nanos = t.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let digits = format!("{nanos:09}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s
}

fn micros_of_day(t: NaiveTime) -> i64 {
    i64::from(t.num_seconds_from_midnight()) * 1_000_000 + i64::from(t.nanosecond() / 1_000)
}

/// The value of a missing (NULL) column: null when its field is optional; else, as Debezium's
/// `JdbcValueConverters.convertValue` gives it (a `NOT NULL` column missing from a delete's
/// old key tuple under `REPLICA IDENTITY DEFAULT`), the field's default, or its type's zero:
/// 0, false, "", empty bytes, the epoch, midnight.
fn fallback(kind: &Kind, schema: &SchemaRef) -> ConnectResult<Value> {
    if schema.optional && !matches!(kind, Kind::Geometry { not_null: true }) {
        return Ok(Value::Null);
    }
    if let Some(default) = &schema.default_value {
        return Ok(default.clone());
    }
    let zero = match kind {
        Kind::Int16 | Kind::Int32 | Kind::Int64 | Kind::Float32 | Kind::Float64 => "0",
        Kind::Decimal { .. } | Kind::VariableScaleDecimal | Kind::DecimalAsDouble => "0",
        Kind::Money { .. } | Kind::MoneyAsDouble => "0",
        Kind::HstoreJson | Kind::HstoreMap => "",
        // PostgisGeometry.createEmpty(): an empty GEOMETRYCOLLECTION.
        Kind::Geometry { .. } => "010700000000000000",
        Kind::DecimalAsString => "0",
        Kind::Boolean => "f",
        Kind::Bit => "0",
        Kind::Bits => "",
        Kind::Point => "(0,0)",
        Kind::Text | Kind::Named => "",
        Kind::Bytes | Kind::BytesAs(_) => "\\x",
        Kind::MicroDuration | Kind::IntervalString => "00:00:00",
        Kind::ZonedTime => "00:00:00+00",
        Kind::ConnectDate => "1970-01-01",
        Kind::ConnectTime => "00:00:00",
        Kind::ConnectTimestamp => "1970-01-01 00:00:00",
        Kind::IsoDate => "1970-01-01",
        Kind::IsoTime | Kind::NanoTime => "00:00:00",
        Kind::IsoTimestamp | Kind::NanoTimestamp => "1970-01-01 00:00:00",
        Kind::Array(_) => "{}",
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
        Kind::Bit => Value::Boolean(match text {
            "1" => true,
            "0" => false,
            _ => return Err(bad(kind, text)),
        }),
        Kind::Bits => Value::Bytes(bit_set_bytes(text).ok_or_else(|| bad(kind, text))?),
        Kind::Point => {
            let (x, y) = text
                .strip_prefix('(')
                .and_then(|t| t.strip_suffix(')'))
                .and_then(|t| t.split_once(','))
                .ok_or_else(|| bad(kind, text))?;
            let (x, y) = (float(kind, x.trim())?, float(kind, y.trim())?);
            // Debezium's Point.buildWKBPoint: byte order 1, type 1 (POINT), x and y.
            let mut wkb = Vec::with_capacity(21);
            wkb.push(1u8);
            wkb.extend_from_slice(&1u32.to_le_bytes());
            wkb.extend_from_slice(&x.to_le_bytes());
            wkb.extend_from_slice(&y.to_le_bytes());
            Value::Struct(Struct::from_values(
                schema.clone(),
                vec![
                    Value::Float64(x),
                    Value::Float64(y),
                    Value::Bytes(wkb),
                    Value::Null,
                ],
            )?)
        }
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
        Kind::Money { scale } => Value::Decimal(round_half_up(money(kind, text)?, *scale)),
        Kind::MoneyAsDouble => {
            let d = money(kind, text)?;
            Value::Float64(
                format!("{}e-{}", d.unscaled, d.scale)
                    .parse()
                    .map_err(|_| bad(kind, text))?,
            )
        }
        Kind::Geometry { .. } => {
            let ewkb = hex_digits(text).ok_or_else(|| bad(kind, text))?;
            let srid = ewkb_srid(&ewkb).ok_or_else(|| bad(kind, text))?;
            Value::Struct(Struct::from_values(
                schema.clone(),
                vec![Value::Bytes(ewkb), srid.map_or(Value::Null, Value::Int32)],
            )?)
        }
        Kind::HstoreJson => {
            let pairs = hstore_pairs(text).ok_or_else(|| bad(kind, text))?;
            let mut json = String::with_capacity(text.len() + 2);
            json.push('{');
            for (i, (k, v)) in java_map_order(pairs).into_iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                append_jackson_string(&mut json, &k);
                json.push(':');
                match v {
                    Some(v) => append_jackson_string(&mut json, &v),
                    None => json.push_str("null"),
                }
            }
            json.push('}');
            Value::String(json)
        }
        Kind::HstoreMap => Value::Map(
            java_map_order(hstore_pairs(text).ok_or_else(|| bad(kind, text))?)
                .into_iter()
                .map(|(k, v)| (Value::String(k), v.map_or(Value::Null, Value::String)))
                .collect(),
        ),
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
        Kind::TimeMillis | Kind::TimeMicros | Kind::ConnectTime => {
            let t = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").map_err(|_| bad(kind, text))?;
            let micros = micros_of_day(t);
            match kind {
                Kind::TimeMillis => Value::Int32((micros / 1_000) as i32),
                Kind::ConnectTime => Value::Time((micros / 1_000) as i32),
                _ => Value::Int64(micros),
            }
        }
        Kind::ConnectDate => {
            let d = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| bad(kind, text))?;
            let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("the epoch");
            Value::Date((d - epoch).num_days() as i32)
        }
        Kind::IsoDate => {
            let d = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| bad(kind, text))?;
            Value::String(d.format("%Y-%m-%dZ").to_string())
        }
        Kind::IsoTime => {
            let t = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").map_err(|_| bad(kind, text))?;
            Value::String(format!("{}Z", java_iso_time(t)))
        }
        Kind::IsoTimestamp => {
            let t = naive_timestamp(kind, text)?;
            Value::String(format!(
                "{}T{}Z",
                t.format("%Y-%m-%d"),
                java_iso_time(t.time())
            ))
        }
        Kind::NanoTime => {
            let t = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").map_err(|_| bad(kind, text))?;
            Value::Int64(micros_of_day(t) * 1_000)
        }
        Kind::NanoTimestamp => match naive_timestamp(kind, text)?.and_utc().timestamp_nanos_opt() {
            Some(ns) => Value::Int64(ns),
            // Outside 1677-09-21 to 2262-04-11: Debezium warns and writes null (an error for
            // a required field).
            None if schema.optional => {
                tracing::warn!("Failed to convert value '{text}' to io.debezium.time.NanoTimestamp: outside the range of INT64 epoch nanoseconds");
                Value::Null
            }
            None => return Err(bad(kind, text)),
        },
        Kind::ConnectTimestamp => {
            Value::Timestamp(naive_timestamp(kind, text)?.and_utc().timestamp_millis())
        }
        Kind::BytesAs(mode) => binary(*mode, hex(kind, text)?),
        Kind::MicroDuration => Value::Int64(
            Interval::parse(text)
                .ok_or_else(|| bad(kind, text))?
                .micros(),
        ),
        Kind::IntervalString => {
            Value::String(Interval::parse(text).ok_or_else(|| bad(kind, text))?.iso())
        }
        Kind::ZonedTime => Value::String(zoned_time(text).ok_or_else(|| bad(kind, text))?),
        Kind::Array(element) => {
            let element_schema = schema
                .value_schema
                .as_ref()
                .ok_or_else(|| bad(kind, text))?;
            let elements = array_elements(text).ok_or_else(|| {
                ConnectError::data(format!(
                    "cannot read {text:?} as a one-dimensional array; {USE_HOSTED}"
                ))
            })?;
            Value::Array(
                elements
                    .iter()
                    .map(|e| value(element, element_schema, e.as_deref()))
                    .collect::<ConnectResult<Vec<Value>>>()?,
            )
        }
    })
}

/// `bytes` as `binary.handling.mode` represents them: BYTES, or a string in base64 (standard or
/// URL-safe alphabet, padded) or lowercase hexadecimal.
pub fn binary(mode: BinaryMode, bytes: Vec<u8>) -> Value {
    use base64::Engine as _;
    match mode {
        BinaryMode::Bytes => Value::Bytes(bytes),
        BinaryMode::Base64 => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        BinaryMode::Base64UrlSafe => {
            Value::String(base64::engine::general_purpose::URL_SAFE.encode(bytes))
        }
        BinaryMode::Hex => Value::String(bytes.iter().map(|b| format!("{b:02x}")).collect()),
    }
}

/// An interval as the PostgreSQL JDBC driver's `PGInterval` reads PostgreSQL's output
/// (`IntervalStyle=postgres`: `1 year 2 mons -3 days -04:05:06.78`): each unit signed on its
/// own, the time's sign on its hours, minutes and seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Interval {
    years: i32,
    months: i32,
    days: i32,
    hours: i32,
    minutes: i32,
    whole_seconds: i32,
    micros: i32,
}

impl Interval {
    fn parse(text: &str) -> Option<Interval> {
        let mut i = Interval::default();
        let mut tokens = text.split_whitespace().peekable();
        while let Some(token) = tokens.next() {
            if token.contains(':') {
                let (negative, t) = match token.as_bytes()[0] {
                    b'-' => (true, &token[1..]),
                    b'+' => (false, &token[1..]),
                    _ => (false, token),
                };
                let mut parts = t.split(':');
                let hours: i32 = parts.next()?.parse().ok()?;
                let minutes: i32 = parts.next()?.parse().ok()?;
                let seconds = parts.next().unwrap_or("0");
                let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
                let whole: i32 = whole.parse().ok()?;
                let micros: i32 = if fraction.is_empty() {
                    0
                } else {
                    format!("{fraction:0<6}")[..6].parse().ok()?
                };
                let sign = if negative { -1 } else { 1 };
                i.hours = sign * hours;
                i.minutes = sign * minutes;
                i.whole_seconds = sign * whole;
                i.micros = sign * micros;
                continue;
            }
            let n: i32 = token.parse().ok()?;
            match tokens.next()?.trim_end_matches('s') {
                "year" => i.years = n,
                "mon" => i.months = n,
                "day" => i.days = n,
                _ => return None,
            }
        }
        Some(i)
    }

    /// `PGInterval.getSeconds()`.
    fn seconds(&self) -> f64 {
        f64::from(self.whole_seconds) + f64::from(self.micros) / 1_000_000.0
    }

    /// `MicroDuration.durationMicros` with a month of 365.25 / 12 days, in Java's double
    /// arithmetic.
    fn micros(&self) -> i64 {
        let days =
            f64::from(self.years * 12 + self.months) * (365.25 / 12.0) + f64::from(self.days);
        let seconds = (((days * 24.0 + f64::from(self.hours)) * 60.0) + f64::from(self.minutes))
            * 60.0
            + self.seconds();
        (seconds * 1e6) as i64
    }

    /// `Interval.toIsoString`: `PnYnMnDTnHnMnS`, the seconds without trailing zeros.
    fn iso(&self) -> String {
        let seconds = self.seconds();
        let seconds = if seconds == 0.0 {
            "0".to_string()
        } else {
            format!("{seconds}")
        };
        format!(
            "P{}Y{}M{}DT{}H{}M{seconds}S",
            self.years, self.months, self.days, self.hours, self.minutes
        )
    }
}

/// A `timetz` text (`HH:MM:SS[.f]+HH[:MM[:SS]]`) as Debezium's `ZonedTime`: the same instant
/// at UTC, ISO 8601 (`HH:MM:SS`, the fraction without trailing zeros, `Z`).
fn zoned_time(text: &str) -> Option<String> {
    let sign_at = text.rfind(['+', '-'])?;
    let (time, offset) = text.split_at(sign_at);
    let t = NaiveTime::parse_from_str(time, "%H:%M:%S%.f").ok()?;
    let mut offset_parts = offset[1..].split(':');
    let mut offset_seconds: i64 = 0;
    for unit in [3600, 60, 1] {
        if let Some(p) = offset_parts.next() {
            offset_seconds += p.parse::<i64>().ok()? * unit;
        }
    }
    if offset.starts_with('-') {
        offset_seconds = -offset_seconds;
    }
    let utc = t - chrono::Duration::seconds(offset_seconds);
    let mut s = utc.format("%H:%M:%S").to_string();
    let nanos = utc.nanosecond();
    if nanos > 0 {
        let digits = format!("{nanos:09}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s.push('Z');
    Some(s)
}

/// The elements of a one-dimensional array's text (`{1,NULL,"a b","x\"y"}`), `None` for an
/// element that is NULL; `None` for another shape (dimensions, bounds).
fn array_elements(text: &str) -> Option<Vec<Option<String>>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut elements = Vec::new();
    if inner.is_empty() {
        return Some(elements);
    }
    let mut chars = inner.chars().peekable();
    loop {
        let element = if chars.peek() == Some(&'"') {
            chars.next();
            let mut e = String::new();
            loop {
                match chars.next()? {
                    '\\' => e.push(chars.next()?),
                    '"' => break,
                    c => e.push(c),
                }
            }
            Some(e)
        } else {
            let mut e = String::new();
            while let Some(c) = chars.peek() {
                if *c == ',' {
                    break;
                }
                if *c == '{' || *c == '"' {
                    return None;
                }
                e.push(*c);
                chars.next();
            }
            (e != "NULL").then_some(e)
        };
        elements.push(element);
        match chars.next() {
            None => return Some(elements),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_is_its_ewkb_with_the_srid_read_from_it() {
        // POINT(1 2) with SRID 4326 (little-endian EWKB), and without an SRID (big-endian).
        assert_eq!(
            ewkb_srid(&hex_digits("0101000020E6100000000000000000F03F0000000000000040").unwrap()),
            Some(Some(4326))
        );
        assert_eq!(
            ewkb_srid(&hex_digits("00000000013FF00000000000004000000000000000").unwrap()),
            Some(None)
        );
        assert_eq!(ewkb_srid(&[1, 2, 3]), None);
        assert!(hex_digits("0g").is_none());
        let schema = geometry_struct("io.debezium.data.geometry.Geometry", "Geometry")
            .unwrap()
            .optional()
            .build();
        // A NOT NULL column missing from a delete's old key tuple: the empty geometry.
        let kind = Kind::Geometry { not_null: true };
        let v = value(&kind, &schema, None).unwrap();
        let Value::Struct(s) = v else { panic!("{v:?}") };
        assert_eq!(s.get("srid"), Some(&Value::Null));
        assert_eq!(
            s.get("wkb"),
            Some(&Value::Bytes(vec![1, 7, 0, 0, 0, 0, 0, 0, 0]))
        );
        let nullable = Kind::Geometry { not_null: false };
        assert_eq!(value(&nullable, &schema, None).unwrap(), Value::Null);
    }

    #[test]
    fn hstore_reads_as_the_jdbc_drivers_map_and_writes_as_jackson() {
        let pairs =
            hstore_pairs(r#""b"=>"2", "a"=>NULL, "q\"uote"=>"back\\slash", "x y"=>"""#).unwrap();
        assert_eq!(
            pairs,
            vec![
                ("b".into(), Some("2".into())),
                ("a".into(), None),
                ("q\"uote".into(), Some("back\\slash".into())),
                ("x y".into(), Some(String::new())),
            ]
        );
        assert_eq!(hstore_pairs(""), Some(vec![]));
        assert!(hstore_pairs(r#""a"=>"1" "b""#).is_none());
        let schema = SchemaBuilder::string().optional().build();
        let json = value(&Kind::HstoreJson, &schema, Some(r#""b"=>"2", "a"=>NULL"#)).unwrap();
        // Java's HashMap puts "a" (hash 97) before "b" (98).
        assert_eq!(json, Value::String(r#"{"a":null,"b":"2"}"#.into()));
        let mut s = String::new();
        append_jackson_string(&mut s, "\u{1f}\n\"é😀");
        assert_eq!(s, "\"\\u001F\\n\\\"é😀\"");
    }

    #[test]
    fn money_reads_as_debeziums_postgres_money_and_rounds_half_up() {
        let kind = Kind::Money { scale: 2 };
        let d = |text: &str| money(&kind, text).unwrap();
        assert_eq!(d("$1,234.56"), Decimal::new(BigInt::from(123_456), 2));
        assert_eq!(d("-$0.50"), Decimal::new(BigInt::from(-50), 2));
        assert_eq!(d("($7.25)"), Decimal::new(BigInt::from(-725), 2));
        assert_eq!(d("1234.56"), Decimal::new(BigInt::from(123_456), 2));
        assert!(money(&kind, "$abc").is_err());
        let r = |text: &str, scale| round_half_up(d(text), scale);
        assert_eq!(r("$12.35", 1), Decimal::new(BigInt::from(124), 1));
        assert_eq!(r("-$12.35", 1), Decimal::new(BigInt::from(-124), 1));
        assert_eq!(r("$12.34", 1), Decimal::new(BigInt::from(123), 1));
        assert_eq!(r("$12.34", 3), Decimal::new(BigInt::from(12_340), 3));
    }

    fn col(type_name: &str, typmod: i32) -> Column {
        Column {
            name: "c".into(),
            type_name: type_name.into(),
            typmod,
            not_null: false,
            default: None,
            enum_values: None,
            element: None,
        }
    }

    fn convert(type_name: &str, typmod: i32, text: &str) -> Value {
        let (schema, kind) =
            column_schema("t", &col(type_name, typmod), TypeSettings::default()).unwrap();
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
            let (schema, _) = column_schema("t", &c, TypeSettings::default()).unwrap();
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
        assert_eq!(
            default_of("text", -1, "'it''s'::text"),
            Some(Value::String("it".into())),
            "Debezium 3.6.1's reading"
        );
        // Generated temporal defaults get Debezium's placeholders, literals their value.
        assert_eq!(
            default_of("date", -1, "CURRENT_DATE"),
            Some(Value::Int32(0))
        );
        assert_eq!(default_of("timestamp", -1, "now()"), Some(Value::Int64(0)));
        assert_eq!(
            default_of(
                "timestamptz",
                -1,
                "'2024-01-01 08:00:00+00'::timestamp with time zone"
            ),
            Some(Value::String("2024-01-01T08:00:00.000000Z".into()))
        );
        assert_eq!(
            default_of("interval", -1, "'1 day'::interval"),
            Some(Value::Int64(86_400_000_000))
        );
        let mut c = col("interval", -1);
        c.default = Some("make_interval(1)".into());
        assert!(column_schema("t", &c, TypeSettings::default()).is_err());
        let mut c = col("mood", -1);
        c.enum_values = Some(vec!["sad".into(), "ok".into()]);
        c.default = Some("'ok'::mood".into());
        let (schema, _) = column_schema("t", &c, TypeSettings::default()).unwrap();
        assert_eq!(schema.default_value, Some(Value::String("ok".into())));
    }

    #[test]
    fn intervals_times_and_arrays_read_as_debezium_reads_them() {
        let i = Interval::parse("1 year 2 mons -3 days -04:05:06.78").unwrap();
        assert_eq!(
            (
                i.years,
                i.months,
                i.days,
                i.hours,
                i.minutes,
                i.whole_seconds,
                i.micros
            ),
            (1, 2, -3, -4, -5, -6, -780_000)
        );
        assert_eq!(i.iso(), "P1Y2M-3DT-4H-5M-6.78S");
        assert_eq!(Interval::parse("00:00:00").unwrap().iso(), "P0Y0M0DT0H0M0S");
        assert_eq!(Interval::parse("1 day").unwrap().micros(), 86_400_000_000);
        // A month is 365.25 / 12 days.
        assert_eq!(
            Interval::parse("1 mon").unwrap().micros(),
            2_629_800_000_000
        );
        assert_eq!(
            Interval::parse("00:00:00.000001").unwrap().iso(),
            "P0Y0M0DT0H0M0.000001S"
        );
        assert!(Interval::parse("1 fortnight").is_none());
        assert_eq!(zoned_time("12:34:56.5+02").as_deref(), Some("10:34:56.5Z"));
        assert_eq!(zoned_time("01:00:00-03:30").as_deref(), Some("04:30:00Z"));
        assert_eq!(zoned_time("01:00:00+02").as_deref(), Some("23:00:00Z"));
        assert_eq!(
            array_elements(r#"{1,NULL,"a b","x\"y","NULL",""}"#).unwrap(),
            vec![
                Some("1".into()),
                None,
                Some("a b".into()),
                Some("x\"y".into()),
                Some("NULL".into()),
                Some("".into())
            ]
        );
        assert_eq!(array_elements("{}").unwrap(), Vec::<Option<String>>::new());
        assert!(array_elements("{{1,2},{3,4}}").is_none(), "two dimensions");
        assert!(array_elements("[0:1]={1,2}").is_none(), "explicit bounds");
        let mut c = col("_int4", -1);
        c.element = Some("int4".into());
        let (schema, kind) = column_schema("t", &c, TypeSettings::default()).unwrap();
        assert_eq!(
            value(&kind, &schema, Some("{1,NULL,3}")).unwrap(),
            Value::Array(vec![Value::Int32(1), Value::Null, Value::Int32(3)])
        );
        let hex = TypeSettings {
            binary: BinaryMode::Hex,
            ..TypeSettings::default()
        };
        let (schema, kind) = column_schema("t", &col("bytea", -1), hex).unwrap();
        assert_eq!(
            value(&kind, &schema, Some("\\x01ff")).unwrap(),
            Value::String("01ff".into())
        );
    }

    #[test]
    fn an_unmapped_type_is_refused_by_column() {
        let e = column_schema("public.t", &col("box", -1), TypeSettings::default()).unwrap_err();
        assert!(e.to_string().contains("public.t.c has type box"), "{e}");
    }

    #[test]
    fn bit_strings_are_java_bit_sets() {
        // The last character is bit 0; no byte past the highest bit set.
        assert_eq!(bit_set_bytes("101"), Some(vec![0b101]));
        assert_eq!(bit_set_bytes("0000"), Some(vec![]));
        assert_eq!(bit_set_bytes(""), Some(vec![]));
        assert_eq!(bit_set_bytes("100000000"), Some(vec![0, 1]));
        assert_eq!(bit_set_bytes("000000000101"), Some(vec![5]));
        assert_eq!(bit_set_bytes("10x"), None);
        assert_eq!(bit_length("bit", -1), 1);
        assert_eq!(bit_length("bit", 12), 12);
        assert_eq!(bit_length("varbit", -1), i32::MAX);
    }

    #[test]
    fn a_point_carries_its_wkb() {
        let (schema, kind) =
            column_schema("t", &col("point", -1), TypeSettings::default()).unwrap();
        let Value::Struct(s) = value(&kind, &schema, Some("(1.5,-2)")).unwrap() else {
            panic!("a struct");
        };
        let values = s.into_values();
        assert_eq!(values[0], Value::Float64(1.5));
        assert_eq!(values[1], Value::Float64(-2.0));
        let mut wkb = vec![1u8, 1, 0, 0, 0];
        wkb.extend_from_slice(&1.5f64.to_le_bytes());
        wkb.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(values[2], Value::Bytes(wkb));
        assert_eq!(values[3], Value::Null);
        assert!(value(&kind, &schema, Some("1.5,-2")).is_err());
    }
}
