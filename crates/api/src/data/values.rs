//! Connect's `Values.parseString`: the schema and value a piece of text stands for, as the
//! `SimpleHeaderConverter` reads header values and `InsertHeader` reads `value.literal`.
//!
//! The rules, as in Connect 4.1:
//! - the empty string is a STRING; `null` is null (no schema); `true` / `false` are BOOLEAN;
//! - text starting with a digit is tried as an ISO-8601 time (`HH:mm:ss.SSS'Z'`, 13
//!   characters), timestamp (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`, 24) or date (`yyyy-MM-dd`, 10),
//!   parsed leniently in UTC; then, as text starting with a digit, `+` or `-`, as a number:
//!   whole numbers within a long as the narrowest of INT8 / INT16 / INT32 / INT64 (not for
//!   magnitudes below 1 other than zero, nor above 10^19), numbers with a fraction or an
//!   exponent as FLOAT32 when finite there, else FLOAT64, else a Decimal;
//! - `[a,b,…]` is an ARRAY and `{k:v,…}` a MAP whose element, key and value schemas are the
//!   common schema of their members (numbers widen: INT8 < INT16 < INT32 < INT64 < FLOAT32 <
//!   FLOAT64), members converted to it; without a common schema the array or map has none.
//!   Inside them strings are double-quoted (`\` escapes), and a member that cannot be read
//!   makes the whole text a STRING;
//! - anything else is the STRING itself. Only the first value of the text counts: what
//!   follows it is ignored (`12,5` is the INT8 12), except that `true}` and the like are
//!   strings.
//!
//! Java uses the JVM's default time zone for the temporal forms; Tributary uses UTC, the time
//! zone Connect workers normally run in.

use num_bigint::BigInt;

use super::date_format::JavaDateFormat;
use super::java_fmt::{double_to_string, MILLIS_PER_DAY};
use super::logical::{Date, Decimal, Time, Timestamp};
use super::schema::{Schema, SchemaBuilder, SchemaRef, SchemaType};
use super::value::{SchemaAndValue, Value};

/// Connect's `Values.parseString`: the schema and value of `text` (see the module docs).
/// Never fails: what cannot be read otherwise is a STRING.
pub fn parse_string(text: &str) -> SchemaAndValue {
    if text.is_empty() {
        return SchemaAndValue {
            schema: Some(Schema::string_schema()),
            value: Value::String(String::new()),
        };
    }
    let mut parser = ValueParser {
        tokens: Tokenizer::new(text),
    };
    match parser.parse(false) {
        Ok(Some(sv)) => sv,
        // A top-level parse does not fail (arrays and maps fall back to strings); the error
        // arm keeps the function total.
        Ok(None) | Err(NotParsed) => SchemaAndValue::null(),
    }
}

/// Java's `String.trim()`: removes characters up to U+0020 from both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Java's `Utils.isBlank`.
fn is_blank(s: &str) -> bool {
    java_trim(s).is_empty()
}

/// Splits text into tokens: runs of ordinary characters, and each of the delimiters
/// `: , { } [ ] "` on its own unless backslash-escaped (Connect's `Values.Parser`).
struct Tokenizer {
    text: Vec<char>,
    original: String,
    pos: usize,
    peeked: Option<String>,
    previous: Option<String>,
}

impl Tokenizer {
    fn new(original: &str) -> Tokenizer {
        Tokenizer {
            text: original.chars().collect(),
            original: original.to_string(),
            pos: 0,
            peeked: None,
            previous: None,
        }
    }

    fn position(&self) -> usize {
        self.pos
    }

    /// Where the next token starts.
    fn mark(&self) -> usize {
        self.pos - self.peeked.as_ref().map_or(0, |t| t.chars().count())
    }

    fn rewind_to(&mut self, position: usize) {
        self.pos = position;
        self.peeked = None;
        self.previous = None;
    }

    fn has_next(&self) -> bool {
        self.peeked.is_some() || self.pos < self.text.len()
    }

    fn substring(&self, from: usize, to: usize) -> String {
        self.text[from..to].iter().collect()
    }

    fn next(&mut self) -> String {
        let token = match self.peeked.take() {
            Some(t) => t,
            None => self.consume_token(),
        };
        self.previous = Some(token.clone());
        token
    }

    /// The text of the next `n` tokens, or `None` (position unchanged) if there are fewer.
    fn next_n(&mut self, n: usize) -> Option<String> {
        let start = self.mark();
        for _ in 0..n {
            if !self.has_next() {
                self.rewind_to(start);
                return None;
            }
            self.next();
        }
        Some(self.substring(start, self.position()))
    }

    fn consume_token(&mut self) -> String {
        let start = self.pos;
        let mut escaped = false;
        while self.pos < self.text.len() {
            let c = self.text[self.pos];
            match c {
                '\\' => escaped = !escaped,
                ':' | ',' | '{' | '}' | '[' | ']' | '"' => {
                    if !escaped {
                        if start < self.pos {
                            return self.substring(start, self.pos);
                        }
                        self.pos += 1;
                        return self.substring(start, start + 1);
                    }
                    escaped = false;
                }
                _ => escaped = false,
            }
            self.pos += 1;
        }
        self.substring(start, self.pos)
    }

    /// Whether the next non-blank token is `expected` (trimmed); consumes it if so. Blank
    /// tokens before it are dropped either way.
    fn can_consume(&mut self, expected: &str) -> bool {
        if self.peeked.is_none() {
            if !self.has_next() {
                return false;
            }
            self.peeked = Some(self.consume_token());
        }
        while self.peeked.as_deref().is_some_and(is_blank) && self.pos < self.text.len() {
            self.peeked = Some(self.consume_token());
        }
        if self.peeked.as_deref().map(java_trim) == Some(expected) {
            self.peeked = None;
            true
        } else {
            false
        }
    }
}

/// A value that cannot be read (Connect's internal `DataException` of the parser).
struct NotParsed;

struct ValueParser {
    tokens: Tokenizer,
}

impl ValueParser {
    /// A literal token that makes up the whole text, or any literal inside an array or map.
    fn can_parse_single_token_literal(&mut self, embedded: bool, literal: &str) -> bool {
        let start = self.tokens.mark();
        if self.tokens.can_consume(literal) && (embedded || !self.tokens.has_next()) {
            return true;
        }
        self.tokens.rewind_to(start);
        false
    }

    /// The next value; `Ok(None)` for null or when nothing is left.
    fn parse(&mut self, embedded: bool) -> Result<Option<SchemaAndValue>, NotParsed> {
        if !self.tokens.has_next() {
            return Ok(None);
        }
        if embedded && self.tokens.can_consume("\"") {
            return Ok(Some(self.parse_quoted_string()));
        }
        if self.can_parse_single_token_literal(embedded, "null") {
            return Ok(None);
        }
        for (literal, b) in [("true", true), ("false", false)] {
            if self.can_parse_single_token_literal(embedded, literal) {
                return Ok(Some(SchemaAndValue {
                    schema: Some(Schema::boolean_schema()),
                    value: Value::Boolean(b),
                }));
            }
        }
        let start = self.tokens.mark();
        let structured = if self.tokens.can_consume("[") {
            Some(self.parse_array())
        } else if self.tokens.can_consume("{") {
            Some(self.parse_map())
        } else {
            None
        };
        match structured {
            Some(Ok(sv)) => return Ok(Some(sv)),
            Some(Err(NotParsed)) => self.tokens.rewind_to(start),
            None => {}
        }
        let token = self.tokens.next();
        if is_blank(&token) {
            return Ok(Some(SchemaAndValue {
                schema: Some(Schema::string_schema()),
                value: Value::String(token),
            }));
        }
        self.parse_next_token(embedded, java_trim(&token).to_string())
            .map(Some)
    }

    fn parse_next_token(
        &mut self,
        embedded: bool,
        token: String,
    ) -> Result<SchemaAndValue, NotParsed> {
        let first = token.chars().next().unwrap_or(' ');
        let starts_with_digit = first.is_ascii_digit();
        if starts_with_digit {
            if let Some(t) = self.parse_multiple_tokens_as_temporal(&token) {
                return Ok(t);
            }
        }
        if starts_with_digit || first == '+' || first == '-' {
            if let Some(n) = parse_as_number(&token) {
                return Ok(n);
            }
        }
        if embedded {
            return Err(NotParsed);
        }
        Ok(SchemaAndValue {
            schema: Some(Schema::string_schema()),
            value: Value::String(self.tokens.original.clone()),
        })
    }

    /// A time or timestamp is split by its colons into five tokens: try those first.
    fn parse_multiple_tokens_as_temporal(&mut self, token: &str) -> Option<SchemaAndValue> {
        let position = self.tokens.mark();
        if let Some(rest) = self.tokens.next_n(4) {
            if let Some(t) = parse_as_temporal(&format!("{token}{rest}")) {
                return Some(t);
            }
        }
        self.tokens.rewind_to(position);
        parse_as_temporal(token)
    }

    fn parse_quoted_string(&mut self) -> SchemaAndValue {
        let mut content = String::new();
        while self.tokens.has_next() {
            if self.tokens.can_consume("\"") {
                break;
            }
            content.push_str(&self.tokens.next());
        }
        parse_as_temporal(&content).unwrap_or(SchemaAndValue {
            schema: Some(Schema::string_schema()),
            value: Value::String(content),
        })
    }

    fn parse_array(&mut self) -> Result<SchemaAndValue, NotParsed> {
        let mut items = Vec::new();
        let mut element_schema = SchemaMerger::default();
        while self.tokens.has_next() {
            if self.tokens.can_consume("]") {
                return Ok(match element_schema.common {
                    Some(common) => {
                        let items = items
                            .into_iter()
                            .map(|v| convert_to(&common, v))
                            .collect::<Result<Vec<_>, _>>()?;
                        SchemaAndValue {
                            schema: Some(SchemaBuilder::array(common).build()),
                            value: Value::Array(items),
                        }
                    }
                    None => SchemaAndValue {
                        schema: Some(Schema::new(SchemaType::Array).into()),
                        value: Value::Array(items),
                    },
                });
            }
            if self.tokens.can_consume(",") {
                return Err(NotParsed);
            }
            let element = self.parse(true)?;
            element_schema.merge(element.as_ref());
            items.push(element.map_or(Value::Null, |e| e.value));
            let position = self.tokens.mark();
            if self.tokens.can_consume("]") {
                self.tokens.rewind_to(position);
            } else if !self.tokens.can_consume(",") {
                return Err(NotParsed);
            }
        }
        Err(NotParsed)
    }

    fn parse_map(&mut self) -> Result<SchemaAndValue, NotParsed> {
        let mut entries: Vec<(Value, Value)> = Vec::new();
        let mut key_schema = SchemaMerger::default();
        let mut value_schema = SchemaMerger::default();
        while self.tokens.has_next() {
            if self.tokens.can_consume("}") {
                let (schema, entries) = match (key_schema.common, value_schema.common) {
                    (Some(k), Some(v)) => {
                        let mut aligned = Vec::new();
                        for (key, value) in entries {
                            put(&mut aligned, convert_to(&k, key)?, convert_to(&v, value)?);
                        }
                        (SchemaBuilder::map(k, v).build(), aligned)
                    }
                    (Some(k), None) => {
                        let mut aligned = Vec::new();
                        for (key, value) in entries {
                            put(&mut aligned, convert_to(&k, key)?, value);
                        }
                        let schema = Schema {
                            key_schema: Some(k),
                            ..Schema::new(SchemaType::Map)
                        };
                        (schema.into(), aligned)
                    }
                    _ => (Schema::new(SchemaType::Map).into(), entries),
                };
                return Ok(SchemaAndValue {
                    schema: Some(schema),
                    value: Value::Map(entries),
                });
            }
            if self.tokens.can_consume(",") {
                return Err(NotParsed);
            }
            let key = match self.parse(true)? {
                Some(k) if !k.value.is_null() => k,
                _ => return Err(NotParsed),
            };
            if !self.tokens.can_consume(":") {
                return Err(NotParsed);
            }
            let value = self.parse(true)?;
            let entry_value = value.as_ref().map_or(Value::Null, |v| v.value.clone());
            put(&mut entries, key.value.clone(), entry_value);
            self.tokens.can_consume(",");
            key_schema.merge(Some(&key));
            value_schema.merge(value.as_ref());
        }
        Err(NotParsed)
    }
}

/// Inserts or replaces an entry keeping the first insertion's position (`LinkedHashMap.put`).
fn put(entries: &mut Vec<(Value, Value)>, key: Value, value: Value) {
    match entries.iter_mut().find(|(k, _)| *k == key) {
        Some(entry) => entry.1 = value,
        None => entries.push((key, value)),
    }
}

/// The schema common to the members of an array, or to the keys or values of a map.
#[derive(Default)]
struct SchemaMerger {
    common: Option<SchemaRef>,
    incompatible: bool,
}

impl SchemaMerger {
    fn merge(&mut self, latest: Option<&SchemaAndValue>) {
        let Some(schema) = latest.and_then(|sv| sv.schema.as_ref()) else {
            return;
        };
        if self.incompatible {
            return;
        }
        self.common = match self.common.take() {
            None => Some(schema.clone()),
            Some(previous) => merge_schemas(&previous, schema),
        };
        self.incompatible = self.common.is_none();
    }
}

/// A schema for values of both schemas, `None` if there is none: numbers widen, other types
/// must be equal.
fn merge_schemas(previous: &SchemaRef, new: &SchemaRef) -> Option<SchemaRef> {
    use SchemaType::*;
    let rank = |t: SchemaType| match t {
        Int8 => Some(0),
        Int16 => Some(1),
        Int32 => Some(2),
        Int64 => Some(3),
        Float32 => Some(4),
        Float64 => Some(5),
        _ => None,
    };
    if previous.schema_type != new.schema_type {
        let (p, n) = (rank(previous.schema_type)?, rank(new.schema_type)?);
        return Some(if n > p { new.clone() } else { previous.clone() });
    }
    if previous.optional == new.optional {
        return Some(if previous.optional {
            previous.clone()
        } else {
            new.clone()
        });
    }
    (previous == new).then(|| previous.clone())
}

/// A member converted to the common schema (Connect's `Values.convertTo`, for the values the
/// parser produces). A date, time or timestamp keeps its instant.
fn convert_to(schema: &Schema, value: Value) -> Result<Value, NotParsed> {
    if value.is_null() {
        return if schema.optional {
            Ok(Value::Null)
        } else {
            Err(NotParsed)
        };
    }
    let name = schema.name.as_deref();
    Ok(match schema.schema_type {
        SchemaType::Int8 => match value {
            Value::Int8(_) => value,
            other => Value::Int8(as_long(&other)? as i8),
        },
        SchemaType::Int16 => match value {
            Value::Int16(_) => value,
            other => Value::Int16(as_long(&other)? as i16),
        },
        SchemaType::Int32 if name == Some(Date::LOGICAL_NAME) => match instant(&value) {
            Some(millis) => temporal_as(TemporalKind::Date, millis, value),
            None => Value::Date(as_long(&value)? as i32),
        },
        SchemaType::Int32 if name == Some(Time::LOGICAL_NAME) => match instant(&value) {
            Some(millis) => temporal_as(TemporalKind::Time, millis, value),
            None => Value::Time(as_long(&value)? as i32),
        },
        SchemaType::Int32 => match value {
            Value::Int32(_) => value,
            other => Value::Int32(as_long(&other)? as i32),
        },
        SchemaType::Int64 if name == Some(Timestamp::LOGICAL_NAME) => match instant(&value) {
            Some(millis) => Value::Timestamp(millis),
            None => Value::Timestamp(as_long(&value)?),
        },
        SchemaType::Int64 => match value {
            Value::Int64(_) => value,
            other => Value::Int64(as_long(&other)?),
        },
        SchemaType::Float32 => match value {
            Value::Float32(_) => value,
            other => Value::Float32(as_double(&other)? as f32),
        },
        SchemaType::Float64 => match value {
            Value::Float64(_) => value,
            other => Value::Float64(as_double(&other)?),
        },
        SchemaType::Bytes if name == Some(Decimal::LOGICAL_NAME) => match value {
            Value::Decimal(_) => value,
            Value::Bytes(b) => {
                Value::Decimal(Decimal::to_logical(schema, &b).map_err(|_| NotParsed)?)
            }
            Value::String(s) => Value::Decimal(Decimal::parse(&s).map_err(|_| NotParsed)?),
            other => {
                let d = as_double(&other)?;
                Value::Decimal(Decimal::parse(&double_to_string(d)).map_err(|_| NotParsed)?)
            }
        },
        SchemaType::Bytes => match value {
            Value::Bytes(_) => value,
            Value::Decimal(d) => {
                Value::Bytes(Decimal::from_logical(schema, &d).map_err(|_| NotParsed)?)
            }
            _ => return Err(NotParsed),
        },
        SchemaType::String => match value {
            Value::String(_) => value,
            _ => return Err(NotParsed),
        },
        SchemaType::Boolean => match value {
            Value::Boolean(_) => value,
            other => Value::Boolean(as_long(&other)? != 0),
        },
        SchemaType::Array => match value {
            Value::Array(_) => value,
            _ => return Err(NotParsed),
        },
        SchemaType::Map => match value {
            Value::Map(_) => value,
            _ => return Err(NotParsed),
        },
        SchemaType::Struct => match value {
            Value::Struct(_) => value,
            _ => return Err(NotParsed),
        },
    })
}

/// The instant (ms since the epoch) of a date, time or timestamp value (a `java.util.Date`).
fn instant(value: &Value) -> Option<i64> {
    match value {
        Value::Date(d) => Some(i64::from(*d) * MILLIS_PER_DAY),
        Value::Time(t) => Some(i64::from(*t)),
        Value::Timestamp(t) => Some(*t),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum TemporalKind {
    Date,
    Time,
}

/// The instant as a value of the given logical type when it fits that type, else `original`.
fn temporal_as(kind: TemporalKind, millis: i64, original: Value) -> Value {
    match kind {
        TemporalKind::Date if millis.rem_euclid(MILLIS_PER_DAY) == 0 => {
            i32::try_from(millis.div_euclid(MILLIS_PER_DAY)).map_or(original, Value::Date)
        }
        TemporalKind::Time => i32::try_from(millis).map_or(original, Value::Time),
        _ => original,
    }
}

/// Java's `Number.longValue()` of a numeric value.
fn as_long(value: &Value) -> Result<i64, NotParsed> {
    Ok(match value {
        Value::Int8(v) => (*v).into(),
        Value::Int16(v) => (*v).into(),
        Value::Int32(v) => (*v).into(),
        Value::Int64(v) => *v,
        Value::Float32(v) => *v as i64,
        Value::Float64(v) => *v as i64,
        Value::Decimal(d) => {
            let whole = if d.scale <= 0 {
                &d.unscaled * BigInt::from(10u8).pow(d.scale.unsigned_abs())
            } else {
                &d.unscaled / BigInt::from(10u8).pow(d.scale as u32)
            };
            // The low 64 bits, as BigInteger.longValue() keeps.
            let bytes = whole.to_signed_bytes_le();
            let mut low = [if whole.sign() == num_bigint::Sign::Minus {
                0xff
            } else {
                0
            }; 8];
            for (i, b) in bytes.iter().take(8).enumerate() {
                low[i] = *b;
            }
            i64::from_le_bytes(low)
        }
        _ => return Err(NotParsed),
    })
}

/// Java's `Number.doubleValue()` of a numeric value.
fn as_double(value: &Value) -> Result<f64, NotParsed> {
    Ok(match value {
        Value::Float32(v) => (*v).into(),
        Value::Float64(v) => *v,
        Value::Decimal(d) => d.to_string().parse().map_err(|_| NotParsed)?,
        other => as_long(other)? as f64,
    })
}

/// A time (13 characters), timestamp (24) or date (10) in ISO-8601 form, escaped colons
/// allowed; parsed leniently as Java's `SimpleDateFormat` does.
fn parse_as_temporal(token: &str) -> Option<SchemaAndValue> {
    let token = token.replace("\\:", ":");
    let (pattern, schema) = match token.chars().count() {
        13 => ("HH:mm:ss.SSS'Z'", Time::schema()),
        24 => ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Timestamp::schema()),
        10 => ("yyyy-MM-dd", Date::schema()),
        _ => return None,
    };
    let millis = JavaDateFormat::new(pattern).ok()?.parse(&token)?;
    // Java keeps a java.util.Date whatever its range; a value that does not fit the logical
    // type's Rust form is kept as a timestamp.
    let value = match schema.name.as_deref() {
        Some(Time::LOGICAL_NAME) => {
            temporal_as(TemporalKind::Time, millis, Value::Timestamp(millis))
        }
        Some(Date::LOGICAL_NAME) => {
            temporal_as(TemporalKind::Date, millis, Value::Timestamp(millis))
        }
        _ => Value::Timestamp(millis),
    };
    Some(SchemaAndValue {
        schema: Some(schema),
        value,
    })
}

/// Java's `new BigDecimal(token)`: sign, digits with an optional point, optional exponent.
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
    let exp: i64 = match exp {
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v: i64 = e.strip_prefix('+').unwrap_or(e).parse().ok()?;
            i32::try_from(v).ok()?.into()
        }
        None => 0,
    };
    let scale = i32::try_from(frac.len() as i64 - exp).ok()?;
    let mut unscaled: BigInt = format!("{int_part}{frac}").parse().ok()?;
    if token.starts_with('-') {
        unscaled = -unscaled;
    }
    Some(Decimal::new(unscaled, scale))
}

/// The number a token stands for (Connect's `parseAsNumber`); `None` if it is not one.
fn parse_as_number(token: &str) -> Option<SchemaAndValue> {
    let d = parse_big_decimal(token)?;
    if let Some(exact) = parse_as_exact_integer(&d) {
        return Some(exact);
    }
    let text = d.to_string();
    let as_f32: f32 = text.parse().ok()?;
    let as_f64: f64 = text.parse().ok()?;
    if as_f32.is_finite() && d.scale != 0 {
        return Some(SchemaAndValue {
            schema: Some(Schema::float32_schema()),
            value: Value::Float32(as_f32),
        });
    }
    if as_f64.is_finite() && d.scale != 0 {
        return Some(SchemaAndValue {
            schema: Some(Schema::float64_schema()),
            value: Value::Float64(as_f64),
        });
    }
    Some(SchemaAndValue {
        schema: Some(Decimal::schema(d.scale)),
        value: Value::Decimal(d),
    })
}

/// A whole number of magnitude 1 to 10^19 (or zero) that fits a long, as the narrowest
/// integer type.
fn parse_as_exact_integer(d: &Decimal) -> Option<SchemaAndValue> {
    let zero = BigInt::from(0);
    if d.unscaled == zero {
        return Some(SchemaAndValue {
            schema: Some(Schema::int8_schema()),
            value: Value::Int8(0),
        });
    }
    let digits = d.unscaled.magnitude().to_string();
    // The power of ten of the leading digit.
    let adjusted = digits.len() as i64 - 1 - i64::from(d.scale);
    let power_of_ten = digits[1..].bytes().all(|b| b == b'0');
    if adjusted > 19 || (adjusted == 19 && !power_of_ten) || adjusted < 0 {
        return None;
    }
    let trailing_zeros = digits.len() - digits.trim_end_matches('0').len();
    if i64::from(d.scale) > trailing_zeros as i64 {
        return None;
    }
    let whole = if d.scale <= 0 {
        &d.unscaled * BigInt::from(10u8).pow(d.scale.unsigned_abs())
    } else {
        &d.unscaled / BigInt::from(10u8).pow(d.scale as u32)
    };
    let l = i64::try_from(&whole).ok()?;
    Some(if let Ok(v) = i8::try_from(l) {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact description: schema (type, logical name, `?` when optional, element / key
    /// and value schemas) and value.
    fn describe(sv: &SchemaAndValue) -> String {
        fn schema(s: &Option<SchemaRef>) -> String {
            let Some(s) = s else {
                return "null".into();
            };
            let mut out = s.schema_type.to_string();
            if let Some(n) = &s.name {
                out.push('/');
                out.push_str(n.rsplit('.').next().unwrap_or(n));
            }
            if s.optional {
                out.push('?');
            }
            match s.schema_type {
                SchemaType::Array => out.push_str(&format!("<{}>", schema(&s.value_schema))),
                SchemaType::Map => out.push_str(&format!(
                    "<{},{}>",
                    schema(&s.key_schema),
                    schema(&s.value_schema)
                )),
                _ => {}
            }
            out
        }
        format!("{} {:?}", schema(&sv.schema), sv.value)
    }

    fn parsed(text: &str) -> String {
        describe(&parse_string(text))
    }

    // Expected results were produced with Connect 4.1.1's Values.parseString (TZ=UTC).

    #[test]
    fn scalars() {
        assert_eq!(parsed(""), r#"STRING String("")"#);
        assert_eq!(parsed("null"), "null Null");
        assert_eq!(parsed("true "), "BOOLEAN Boolean(true)");
        assert_eq!(parsed(" true"), "BOOLEAN Boolean(true)");
        assert_eq!(parsed("true}"), r#"STRING String("true}")"#);
        assert_eq!(parsed("  "), r#"STRING String("  ")"#);
        assert_eq!(parsed(" , "), r#"STRING String(" , ")"#);
        assert_eq!(parsed("12,5"), "INT8 Int8(12)");
        assert_eq!(parsed("1 2"), r#"STRING String("1 2")"#);
        assert_eq!(parsed("x\\:y"), r#"STRING String("x\\:y")"#);
        assert_eq!(parsed("\"quoted\""), r#"STRING String("\"quoted\"")"#);
    }

    #[test]
    fn numbers() {
        assert_eq!(parsed("1.50"), "FLOAT32 Float32(1.5)");
        assert_eq!(parsed("2.0"), "INT8 Int8(2)");
        assert_eq!(parsed("1e20"), "FLOAT32 Float32(1e20)");
        assert_eq!(parsed("1e19"), "FLOAT32 Float32(1e19)");
        assert_eq!(parsed("0.0"), "INT8 Int8(0)");
        assert_eq!(parsed("-0"), "INT8 Int8(0)");
        assert_eq!(parsed("0.5"), "FLOAT32 Float32(0.5)");
        assert_eq!(parsed("+.5e+3"), "INT16 Int16(500)");
        assert_eq!(parsed("1."), "INT8 Int8(1)");
        assert_eq!(parsed("-129"), "INT16 Int16(-129)");
        assert_eq!(parsed("-"), r#"STRING String("-")"#);
        assert_eq!(parsed("1-2"), r#"STRING String("1-2")"#);
        assert_eq!(parsed("nul"), r#"STRING String("nul")"#);
        assert_eq!(parsed("null "), "null Null");
        assert_eq!(parsed("3000000000"), "INT64 Int64(3000000000)");
        let big = parse_string("10000000000000000000");
        assert_eq!(big.schema, Some(Decimal::schema(0)));
        assert_eq!(
            big.value,
            Value::Decimal(Decimal::new(BigInt::from(10u64.pow(19)), 0))
        );
        let huge = parse_string("9223372036854775808");
        assert_eq!(huge.schema, Some(Decimal::schema(0)));
        assert_eq!(parse_string("1e400").schema, Some(Decimal::schema(-400)));
        assert_eq!(
            parsed("1e999999999999"),
            r#"STRING String("1e999999999999")"#
        );
    }

    #[test]
    fn temporals() {
        assert_eq!(parsed("2024-01-01,foo"), "INT32/Date Date(19723)");
        assert_eq!(parsed("2024-1-1xx"), "INT32/Date Date(19723)");
        assert_eq!(parsed("99:99:99.999Z"), "INT32/Time Time(362439999)");
        assert_eq!(
            parsed("2024-01-01T10:20:30.123Z"),
            "INT64/Timestamp Timestamp(1704104430123)"
        );
        assert_eq!(parsed("10:20:30.123Z"), "INT32/Time Time(37230123)");
        assert_eq!(
            parsed("2024-01-01T10:20:30.123"),
            r#"STRING String("2024-01-01T10:20:30.123")"#
        );
    }

    #[test]
    fn arrays_and_maps() {
        assert_eq!(
            parsed("[1,2.5,300]"),
            "ARRAY<FLOAT32> Array([Float32(1.0), Float32(2.5), Float32(300.0)])"
        );
        assert_eq!(parsed("[1,null]"), r#"STRING String("[1,null]")"#);
        assert_eq!(
            parsed(r#"{"a":1,"b":null}"#),
            r#"STRING String("{\"a\":1,\"b\":null}")"#
        );
        assert_eq!(
            parsed(r#"["a","b"]"#),
            r#"ARRAY<STRING> Array([String("a"), String("b")])"#
        );
        assert_eq!(
            parsed(r#"["a",1]"#),
            r#"ARRAY<null> Array([String("a"), Int8(1)])"#
        );
        assert_eq!(
            parsed("[[1,2],[300]]"),
            "ARRAY<ARRAY<INT16>> Array([Array([Int8(1), Int8(2)]), Array([Int16(300)])])"
        );
        assert_eq!(
            parsed("[1, 2024-01-01]"),
            "ARRAY<INT32/Date> Array([Date(1), Date(19723)])"
        );
        assert_eq!(
            parsed("[12:00:00.000Z, 2024-01-01]"),
            "ARRAY<INT32/Date> Array([Time(43200000), Date(19723)])"
        );
        assert_eq!(parsed("[]"), "ARRAY<null> Array([])");
        assert_eq!(parsed("{}"), "MAP<null,null> Map([])");
        assert_eq!(parsed("[1,]"), "ARRAY<INT8> Array([Int8(1)])");
        assert_eq!(parsed("[1]x"), "ARRAY<INT8> Array([Int8(1)])");
        assert_eq!(parsed("[1,,2]"), r#"STRING String("[1,,2]")"#);
        assert_eq!(
            parsed("[  1 , 2 ]"),
            "ARRAY<INT8> Array([Int8(1), Int8(2)])"
        );
        assert_eq!(
            parsed(r#"{"a":[1,2]}"#),
            r#"MAP<STRING,ARRAY<INT8>> Map([(String("a"), Array([Int8(1), Int8(2)]))])"#
        );
        assert_eq!(parsed("{1:2,3:null}"), r#"STRING String("{1:2,3:null}")"#);
        assert_eq!(
            parsed("[true,false]"),
            "ARRAY<BOOLEAN> Array([Boolean(true), Boolean(false)])"
        );
        assert_eq!(parsed("[null]"), "ARRAY<null> Array([Null])");
        assert_eq!(
            parsed("[2024-01-01T10:20:30.123Z]"),
            "ARRAY<INT64/Timestamp> Array([Timestamp(1704104430123)])"
        );
        assert_eq!(
            parsed(r#"{"k":"v","k":"w"}"#),
            r#"MAP<STRING,STRING> Map([(String("k"), String("w"))])"#
        );
        assert_eq!(
            parsed(r#"{"a":1,"b":"x"}"#),
            r#"MAP<STRING,null> Map([(String("a"), Int8(1)), (String("b"), String("x"))])"#
        );
        assert_eq!(
            parsed(r#"[1, "2024-01-01"]"#),
            "ARRAY<INT32/Date> Array([Date(1), Date(19723)])"
        );
        assert_eq!(
            parsed("[2024-01-01, 10:00:00.000Z]"),
            "ARRAY<INT32/Time> Array([Date(19723), Time(36000000)])"
        );
        assert_eq!(
            parsed("[10:00:00.000Z, 2024-01-01T10:20:30.123Z]"),
            "ARRAY<INT64/Timestamp> Array([Timestamp(36000000), Timestamp(1704104430123)])"
        );
        assert_eq!(
            parsed("[9223372036854775807, 1.5]"),
            "ARRAY<FLOAT32> Array([Float32(9.223372e18), Float32(1.5)])"
        );
        assert_eq!(
            parsed(r#"{"a":1, "b":2.5}"#),
            r#"MAP<STRING,FLOAT32> Map([(String("a"), Float32(1.0)), (String("b"), Float32(2.5))])"#
        );
        assert_eq!(
            parsed(r#"{"a":null}"#),
            r#"MAP<STRING,null> Map([(String("a"), Null)])"#
        );
        assert_eq!(parsed("[null,null]"), "ARRAY<null> Array([Null, Null])");
        assert_eq!(parsed("[1"), r#"STRING String("[1")"#);
        assert_eq!(parsed("[,]"), r#"STRING String("[,]")"#);
        assert_eq!(
            parsed("[1.5, 100000000000000000000]").split(' ').next(),
            Some("ARRAY<null>")
        );
        assert_eq!(
            parsed(r#"["a\"b", " "]"#),
            r#"ARRAY<STRING> Array([String("a\\\"b"), String("")])"#
        );
    }
}
