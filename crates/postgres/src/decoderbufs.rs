//! The messages of `decoderbufs` (Debezium's logical decoding output plugin,
//! `postgres-decoderbufs`, Debezium's default `plugin.name`), decoded: one protobuf
//! `RowMessage` per replication message (`pg_logicaldec.proto`), for a transaction's BEGIN
//! and COMMIT and for each row change, which names its table and carries each column's name,
//! type and value.
//!
//! Values come typed by the plugin's `set_datum_value` (integers, floats, booleans, dates as
//! days and timestamps as µs since the epoch, bytea as bytes, the rest as their text). Each is
//! turned back into the text PostgreSQL prints for it (session `DateStyle=ISO`,
//! `TimeZone=UTC`, `bytea_output=hex`), the text the snapshot's queries and `pgoutput` give,
//! so that one conversion ([`crate::types::value`]) serves all three, as Debezium's
//! `PgProtoColumnValue` and `PgOutputColumnValue` arrive at the same Connect values.

use chrono::{DateTime, Datelike, NaiveDate, Timelike};
use tributary_api::{ConnectError, ConnectResult};

use crate::pgoutput::Datum;

/// `decoderbufs.Op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
enum ProtoOp {
    Unknown = -1,
    Insert = 0,
    Update = 1,
    Delete = 2,
    Begin = 3,
    Commit = 4,
}

/// `decoderbufs.Point`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoPoint {
    #[prost(double, required, tag = "1")]
    x: f64,
    #[prost(double, required, tag = "2")]
    y: f64,
}

/// `decoderbufs.DatumMessage.datum`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum ProtoDatum {
    #[prost(int32, tag = "3")]
    Int32(i32),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(float, tag = "5")]
    Float(f32),
    #[prost(double, tag = "6")]
    Double(f64),
    #[prost(bool, tag = "7")]
    Bool(bool),
    #[prost(string, tag = "8")]
    String(String),
    #[prost(bytes, tag = "9")]
    Bytes(Vec<u8>),
    #[prost(message, tag = "10")]
    Point(ProtoPoint),
    #[prost(bool, tag = "11")]
    Missing(bool),
}

/// `decoderbufs.DatumMessage`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoDatumMessage {
    #[prost(string, optional, tag = "1")]
    column_name: Option<String>,
    #[prost(int64, optional, tag = "2")]
    column_type: Option<i64>,
    #[prost(oneof = "ProtoDatum", tags = "3, 4, 5, 6, 7, 8, 9, 10, 11")]
    datum: Option<ProtoDatum>,
}

/// `decoderbufs.TypeInfo`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoTypeInfo {
    #[prost(string, required, tag = "1")]
    modifier: String,
    #[prost(bool, required, tag = "2")]
    value_optional: bool,
}

/// `decoderbufs.RowMessage`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoRowMessage {
    #[prost(uint32, optional, tag = "1")]
    transaction_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    commit_time: Option<u64>,
    #[prost(string, optional, tag = "3")]
    table: Option<String>,
    #[prost(enumeration = "ProtoOp", optional, tag = "4")]
    op: Option<i32>,
    #[prost(message, repeated, tag = "5")]
    new_tuple: Vec<ProtoDatumMessage>,
    #[prost(message, repeated, tag = "6")]
    old_tuple: Vec<ProtoDatumMessage>,
    #[prost(message, repeated, tag = "7")]
    new_typeinfo: Vec<ProtoTypeInfo>,
}

/// A row change's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Insert,
    Update,
    Delete,
}

/// One column of a tuple: its name (unquoted), type and value as text.
#[derive(Debug, Clone, PartialEq)]
pub struct TupleColumn {
    pub name: String,
    /// `atttypid`.
    pub type_oid: u32,
    pub value: Datum,
}

/// A column as the new tuple's type information describes it (`format_type` of its type and
/// modifier, `NOT NULL`), which Debezium compares with the schema it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnShape {
    pub name: String,
    pub type_oid: u32,
    /// `format_type(atttypid, atttypmod)`, e.g. `character varying(255)`, `numeric(10,2)`.
    pub modifier: String,
    /// Not `NOT NULL`.
    pub optional: bool,
}

/// A decoded `decoderbufs` message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A transaction begins: its id and commit time (µs since the Unix epoch).
    Begin { xid: u32, commit_us: i64 },
    /// A transaction commits.
    Commit { xid: u32, commit_us: i64 },
    /// A row change of table `schema.table` (its transaction's id and commit time are its
    /// BEGIN's). `new` and `old` are empty when the plugin sent
    /// no tuple (an update or delete of a table without a replica identity, an update that
    /// kept its key); `shapes` describes `new`'s columns.
    Change {
        schema: String,
        table: String,
        op: Op,
        new: Vec<TupleColumn>,
        old: Vec<TupleColumn>,
        shapes: Vec<ColumnShape>,
    },
    /// An operation this version of the plugin does not know (Debezium warns once and skips).
    Unknown(i32),
}

fn malformed(what: impl std::fmt::Display) -> ConnectError {
    ConnectError::connect(format!("a decoderbufs message {what}"))
}

/// Decodes one replication message. Errors: not a `RowMessage`; a change without its table,
/// or with type information that does not match its columns (Debezium's checks).
pub fn decode(data: &[u8]) -> ConnectResult<Message> {
    use prost::Message as _;
    let m = ProtoRowMessage::decode(data)
        .map_err(|e| malformed(format_args!("could not be decoded: {e}")))?;
    let xid = m.transaction_id.unwrap_or(0);
    let commit_us = m.commit_time.unwrap_or(0) as i64;
    let op = match m.op.map(ProtoOp::try_from) {
        Some(Ok(ProtoOp::Begin)) => return Ok(Message::Begin { xid, commit_us }),
        Some(Ok(ProtoOp::Commit)) => return Ok(Message::Commit { xid, commit_us }),
        Some(Ok(ProtoOp::Insert)) => Op::Insert,
        Some(Ok(ProtoOp::Update)) => Op::Update,
        Some(Ok(ProtoOp::Delete)) => Op::Delete,
        Some(Ok(ProtoOp::Unknown)) => return Ok(Message::Unknown(-1)),
        Some(Err(_)) | None => return Ok(Message::Unknown(m.op.unwrap_or(-1))),
    };
    if !m.new_typeinfo.is_empty() && m.new_typeinfo.len() != m.new_tuple.len() {
        return Err(malformed(format_args!(
            "of transaction {xid} has {} data columns but only {} of type info",
            m.new_tuple.len(),
            m.new_typeinfo.len()
        )));
    }
    if op != Op::Delete && !m.new_tuple.is_empty() && m.new_typeinfo.is_empty() {
        return Err(malformed(
            "has no type information: the decoderbufs plugin in the database is too old",
        ));
    }
    let (schema, table) = m
        .table
        .as_deref()
        .and_then(split_qualified)
        .ok_or_else(|| malformed(format_args!("names no table: {:?}", m.table)))?;
    let columns = |tuple: Vec<ProtoDatumMessage>| {
        tuple
            .into_iter()
            .map(|d| {
                let name = unquote(d.column_name.as_deref().unwrap_or_default());
                let type_oid = d.column_type.unwrap_or(0) as u32;
                TupleColumn {
                    name,
                    type_oid,
                    value: text(type_oid, d.datum),
                }
            })
            .collect::<Vec<_>>()
    };
    let new = columns(m.new_tuple);
    let shapes = new
        .iter()
        .zip(m.new_typeinfo)
        .map(|(c, t)| ColumnShape {
            name: c.name.clone(),
            type_oid: c.type_oid,
            modifier: t.modifier,
            optional: t.value_optional,
        })
        .collect();
    Ok(Message::Change {
        schema,
        table,
        op,
        new,
        old: columns(m.old_tuple),
        shapes,
    })
}

/// An identifier as `quote_identifier` printed it, unquoted (`"a""b"` is `a"b`).
fn unquote(s: &str) -> String {
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => s.to_string(),
    }
}

/// `schema.table` as `quote_qualified_identifier` printed it, split and unquoted.
fn split_qualified(s: &str) -> Option<(String, String)> {
    let mut in_quotes = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            '.' if !in_quotes => return Some((unquote(&s[..i]), unquote(&s[i + 1..]))),
            _ => {}
        }
    }
    None
}

// The type OIDs (pg_type.dat) whose values `set_datum_value` sends in a form of their own.
const BYTEA: u32 = 17;
const CASH: u32 = 790;
const DATE: u32 = 1082;
const TIME: u32 = 1083;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const TIMETZ: u32 = 1266;

/// Days from the Unix epoch to PostgreSQL's (2000-01-01), which the plugin adds to a date.
const PG_EPOCH_DAYS: i32 = 10_957;
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A column's value as PostgreSQL's text of it: NULL (no datum), an unchanged TOAST-ed value
/// (`datum_missing`), or the text.
fn text(type_oid: u32, datum: Option<ProtoDatum>) -> Datum {
    let Some(datum) = datum else {
        return Datum::Null;
    };
    Datum::Text(match (type_oid, datum) {
        (_, ProtoDatum::Missing(_)) => return Datum::Unchanged,
        (_, ProtoDatum::Bool(b)) => if b { "t" } else { "f" }.to_string(),
        (DATE, ProtoDatum::Int32(days)) => date_text(days),
        (_, ProtoDatum::Int32(i)) => i.to_string(),
        (TIMESTAMP, ProtoDatum::Int64(us)) => timestamp_text(us, ""),
        (TIMESTAMPTZ, ProtoDatum::Int64(us)) => timestamp_text(us, "+00"),
        (TIME, ProtoDatum::Int64(us)) => time_text(us),
        // money: the cents (Debezium reads them with two decimals, whatever the locale).
        (CASH, ProtoDatum::Int64(cents)) => format!(
            "{}{}.{:02}",
            if cents < 0 { "-" } else { "" },
            cents.unsigned_abs() / 100,
            cents.unsigned_abs() % 100
        ),
        (_, ProtoDatum::Int64(i)) => i.to_string(),
        (_, ProtoDatum::Float(f)) => float_text(f64::from(f), f.to_string()),
        // timetz: the plugin sends the time at UTC (µs, time + zone); any day it falls into.
        (TIMETZ, ProtoDatum::Double(us)) => {
            format!("{}+00", time_text((us as i64).rem_euclid(MICROS_PER_DAY)))
        }
        (_, ProtoDatum::Double(f)) => float_text(f, f.to_string()),
        (_, ProtoDatum::String(s)) => s,
        (BYTEA, ProtoDatum::Bytes(b)) => {
            let mut s = String::with_capacity(2 + 2 * b.len());
            s.push_str("\\x");
            for byte in b {
                s.push_str(&format!("{byte:02x}"));
            }
            s
        }
        // Every other type: its output function's text, as bytes.
        (_, ProtoDatum::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
        (_, ProtoDatum::Point(p)) => format!("({},{})", p.x, p.y),
    })
}

/// A float as PostgreSQL prints it (`extra_float_digits` ≥ 1: the shortest text that reads
/// back as the same value; `NaN`, `Infinity`, `-Infinity`).
fn float_text(f: f64, shortest: String) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        shortest
    }
}

/// A date, `days` since the Unix epoch (the plugin's shift of PostgreSQL's, wrapping for
/// `infinity`), as `YYYY-MM-DD` (with ` BC` before year 1).
fn date_text(days: i32) -> String {
    if days == i32::MAX.wrapping_add(PG_EPOCH_DAYS) {
        return "infinity".into();
    }
    if days == i32::MIN.wrapping_add(PG_EPOCH_DAYS) {
        return "-infinity".into();
    }
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("the epoch");
    match epoch.checked_add_signed(chrono::Duration::days(i64::from(days))) {
        Some(d) => with_era(d.year(), &d.format("-%m-%d").to_string()),
        None => days.to_string(),
    }
}

/// `rest` after the year, PostgreSQL's way: a year ≤ 0 is printed as `1 - year` with ` BC`.
fn with_era(year: i32, rest: &str) -> String {
    if year <= 0 {
        format!("{:04}{rest} BC", 1 - year)
    } else {
        format!("{year:04}{rest}")
    }
}

/// A timestamp, `us` since the Unix epoch (`i64::MAX` / `i64::MIN`: `infinity` /
/// `-infinity`, which the plugin passes unshifted), as `YYYY-MM-DD HH:MM:SS[.ffffff]` and
/// `zone`.
fn timestamp_text(us: i64, zone: &str) -> String {
    if us == i64::MAX {
        return "infinity".into();
    }
    if us == i64::MIN {
        return "-infinity".into();
    }
    match DateTime::from_timestamp_micros(us) {
        Some(t) => {
            let t = t.naive_utc();
            let rest = format!(
                "{} {}{zone}",
                t.format("-%m-%d"),
                time_text(
                    i64::from(t.num_seconds_from_midnight()) * 1_000_000
                        + i64::from(t.nanosecond() / 1_000)
                )
            );
            match rest.split_once(' ') {
                // The era goes after the time and zone: `0044-03-15 12:00:00 BC`.
                Some((date, time)) if t.year() <= 0 => {
                    format!("{:04}{date} {time} BC", 1 - t.year())
                }
                _ => format!("{:04}{rest}", t.year()),
            }
        }
        None => us.to_string(),
    }
}

/// A time of day, `us` since midnight (up to `24:00:00`), as `HH:MM:SS[.ffffff]`, the
/// fraction without trailing zeros.
fn time_text(us: i64) -> String {
    let (secs, frac) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let digits = format!("{frac:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s
}

/// The type modifier (`atttypmod`) of a column `format_type` printed as `modifier`, type
/// `type_name` (`pg_type.typname`), as Debezium's schema from a `decoderbufs` change has it
/// (`TypeMetadataImpl`: a length and a scale from the parenthesised numbers): the one the
/// type's `typmodin` computes from those numbers, -1 without any, and -1 for an array of a
/// time type (whose precision Debezium takes as the default, 6). Errors: numbers this version
/// cannot place (named).
pub fn typmod_of(type_name: &str, modifier: &str) -> ConnectResult<i32> {
    let Some(open) = modifier.find('(') else {
        return Ok(-1);
    };
    let close = modifier[open..]
        .find(')')
        .map(|c| open + c)
        .ok_or_else(|| malformed(format_args!("has a type {modifier:?}")))?;
    let numbers: Vec<i32> = modifier[open + 1..close]
        .split(',')
        .map(|n| n.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| malformed(format_args!("has a type {modifier:?}")))?;
    let element = type_name.strip_prefix('_').unwrap_or(type_name);
    // Debezium reads the first number as an array's length, and takes the scale (a time's
    // precision) of the array type with no modifier: 6, as with none.
    if type_name.starts_with('_')
        && matches!(
            element,
            "time" | "timetz" | "timestamp" | "timestamptz" | "interval"
        )
    {
        return Ok(-1);
    }
    Ok(match (element, numbers.as_slice()) {
        ("varchar" | "bpchar", [n]) => n + 4,
        ("numeric", [p]) => (p << 16) + 4,
        ("numeric", [p, s]) => ((p << 16) | (s & 0x7ff)) + 4,
        ("bit" | "varbit", [n]) => *n,
        ("time" | "timetz" | "timestamp" | "timestamptz", [p]) => *p,
        // An interval without a field restriction: every field (INTERVAL_FULL_RANGE).
        ("interval", [p]) if !modifier.contains(" to ") => (0x7fff << 16) | p,
        _ => {
            return Err(ConnectError::connect(format!(
                "a column of type {modifier} changed since the change was written, which Tributary's native PostgresConnector does not read back yet; {}",
                crate::config::USE_HOSTED
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    const BOOL: u32 = 16;
    const INT4: u32 = 23;
    const FLOAT4: u32 = 700;
    const FLOAT8: u32 = 701;

    fn datum(name: &str, oid: u32, d: Option<ProtoDatum>) -> ProtoDatumMessage {
        ProtoDatumMessage {
            column_name: Some(name.into()),
            column_type: Some(i64::from(oid)),
            datum: d,
        }
    }

    #[test]
    fn row_messages_decode_to_the_text_postgres_prints() {
        let insert = ProtoRowMessage {
            transaction_id: Some(771),
            commit_time: Some(1_700_000_000_123_456),
            table: Some("\"My Schema\".\"t.x\"".into()),
            op: Some(ProtoOp::Insert as i32),
            new_tuple: vec![
                datum("id", INT4, Some(ProtoDatum::Int32(-7))),
                datum("\"Name\"", 25, Some(ProtoDatum::String("é".into()))),
                datum("b", BYTEA, Some(ProtoDatum::Bytes(vec![0, 0xab]))),
                datum("d", DATE, Some(ProtoDatum::Int32(-1))),
                datum("ts", TIMESTAMP, Some(ProtoDatum::Int64(1_500_000))),
                datum("tz", TIMESTAMPTZ, Some(ProtoDatum::Int64(i64::MAX))),
                datum("t", TIME, Some(ProtoDatum::Int64(MICROS_PER_DAY))),
                // 01:00:00-02 is 03:00:00 at UTC.
                datum("ttz", TIMETZ, Some(ProtoDatum::Double(10_800_000_000.0))),
                datum("f", FLOAT4, Some(ProtoDatum::Float(1.1))),
                datum("g", FLOAT8, Some(ProtoDatum::Double(f64::NEG_INFINITY))),
                datum("ok", BOOL, Some(ProtoDatum::Bool(true))),
                datum("m", CASH, Some(ProtoDatum::Int64(-5))),
                datum("e", 16_400, Some(ProtoDatum::Bytes(b"{1,2}".to_vec()))),
                datum("n", 1700, None),
                datum("big", 25, Some(ProtoDatum::Missing(true))),
            ],
            old_tuple: vec![],
            new_typeinfo: (0..15)
                .map(|i| ProtoTypeInfo {
                    modifier: if i == 0 {
                        "integer".into()
                    } else {
                        "text".into()
                    },
                    value_optional: i != 0,
                })
                .collect(),
        };
        let Message::Change {
            schema,
            table,
            op,
            new,
            old,
            shapes,
        } = decode(&insert.encode_to_vec()).unwrap()
        else {
            panic!("not a change")
        };
        assert_eq!(op, Op::Insert);
        assert_eq!((schema.as_str(), table.as_str()), ("My Schema", "t.x"));
        assert!(old.is_empty());
        let texts: Vec<Datum> = new.iter().map(|c| c.value.clone()).collect();
        let t = |s: &str| Datum::Text(s.into());
        assert_eq!(
            texts,
            vec![
                t("-7"),
                t("é"),
                t("\\x00ab"),
                t("1969-12-31"),
                t("1970-01-01 00:00:01.5"),
                t("infinity"),
                t("24:00:00"),
                t("03:00:00+00"),
                t("1.1"),
                t("-Infinity"),
                t("t"),
                t("-0.05"),
                t("{1,2}"),
                Datum::Null,
                Datum::Unchanged,
            ]
        );
        assert_eq!(new[1].name, "Name");
        assert_eq!(
            shapes[0],
            ColumnShape {
                name: "id".into(),
                type_oid: INT4,
                modifier: "integer".into(),
                optional: false
            }
        );
        let begin = ProtoRowMessage {
            transaction_id: Some(9),
            commit_time: Some(5),
            op: Some(ProtoOp::Begin as i32),
            ..Default::default()
        };
        assert_eq!(
            decode(&begin.encode_to_vec()).unwrap(),
            Message::Begin {
                xid: 9,
                commit_us: 5
            }
        );
        assert!(decode(b"\xff\xff").is_err());
    }

    #[test]
    fn dates_and_timestamps_before_year_one_carry_their_era() {
        // 0001-01-01 BC is 1 BC, year 0 in chrono's reckoning.
        let days = (NaiveDate::from_ymd_opt(0, 3, 15).unwrap()
            - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
        .num_days();
        assert_eq!(date_text(days as i32), "0001-03-15 BC");
        let us = days * MICROS_PER_DAY + 3_600_000_000;
        assert_eq!(timestamp_text(us, "+00"), "0001-03-15 01:00:00+00 BC");
        assert_eq!(timestamp_text(i64::MIN, ""), "-infinity");
        assert_eq!(date_text(i32::MAX.wrapping_add(PG_EPOCH_DAYS)), "infinity");
    }

    #[test]
    fn type_modifiers_read_back_as_typmodin_computes_them() {
        assert_eq!(typmod_of("varchar", "character varying(255)").unwrap(), 259);
        assert_eq!(typmod_of("numeric", "numeric(10,2)").unwrap(), 655_366);
        assert_eq!(typmod_of("_bpchar", "character(3)[]").unwrap(), 7);
        assert_eq!(
            typmod_of("timestamptz", "timestamp(3) with time zone").unwrap(),
            3
        );
        assert_eq!(typmod_of("int4", "integer").unwrap(), -1);
        assert_eq!(
            typmod_of("_time", "time(3) without time zone[]").unwrap(),
            -1
        );
        assert!(typmod_of("interval", "interval day to second(2)").is_err());
    }
}
