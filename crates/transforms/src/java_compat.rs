//! Java behaviours the transformations reproduce: `String.split`, the casts Connect's code
//! relies on, and the number parsing and formatting of `java.lang` / `java.math`.

use num_bigint::BigInt;
use tributary_api::data::java_fmt::{civil_from_days, MILLIS_PER_DAY};
use tributary_api::data::{Date, Decimal, Schema, Time, Timestamp, Value};
use tributary_api::{ConnectError, ConnectResult};

/// Java's `s.split(sep)` for a single literal separator character: the parts between
/// separators, with trailing empty parts removed (an empty input gives one empty part).
pub(crate) fn java_split(s: &str, sep: char) -> Vec<&str> {
    if s.is_empty() {
        return vec![""];
    }
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// The key of a schemaless map entry as the `String` Connect's code casts it to; another key
/// type fails as Java's cast does.
pub(crate) fn string_key(key: &Value) -> ConnectResult<&str> {
    match key {
        Value::String(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "class {} cannot be cast to class java.lang.String",
            other.kind_name()
        ))),
    }
}

/// The Java class of a value as `Object.getClass()` prints it in messages: `class
/// java.lang.Integer`.
pub(crate) fn java_class(value: &Value) -> String {
    format!("class {}", value.kind_name())
}

/// A value under a logical-type schema in its logical form: Tributary also carries these in
/// their encoded form (Decimal as raw bytes, Date and Time as INT32, Timestamp as INT64), where
/// Connect always has a `BigDecimal` or `java.util.Date`.
pub(crate) fn as_logical(schema: &Schema, value: &Value) -> ConnectResult<Value> {
    Ok(match (schema.name.as_deref(), value) {
        (Some(Decimal::LOGICAL_NAME), Value::Bytes(b)) => {
            Value::Decimal(Decimal::to_logical(schema, b)?)
        }
        (Some(Date::LOGICAL_NAME), Value::Int32(d)) => Value::Date(*d),
        (Some(Time::LOGICAL_NAME), Value::Int32(t)) => Value::Time(*t),
        (Some(Timestamp::LOGICAL_NAME), Value::Int64(t)) => Value::Timestamp(*t),
        _ => value.clone(),
    })
}

/// Milliseconds since the epoch of a Date, Time or Timestamp value (`java.util.Date.getTime`).
pub(crate) fn epoch_millis(value: &Value) -> Option<i64> {
    match value {
        Value::Date(d) => Some(i64::from(*d) * MILLIS_PER_DAY),
        Value::Time(t) => Some(i64::from(*t)),
        Value::Timestamp(t) => Some(*t),
        _ => None,
    }
}

/// The integer part of a decimal, rounded toward zero.
fn decimal_integer_part(d: &Decimal) -> BigInt {
    if d.scale <= 0 {
        &d.unscaled * BigInt::from(10u32).pow(d.scale.unsigned_abs())
    } else {
        &d.unscaled / BigInt::from(10u32).pow(d.scale.unsigned_abs())
    }
}

/// `BigDecimal.longValue()`: the integer part's low 64 bits.
pub(crate) fn decimal_long_value(d: &Decimal) -> i64 {
    // A multiple of 10^64 has 64 zero low bits; a pure fraction has no integer part (both
    // shortcuts also keep huge scales from building huge powers of ten).
    let digits = d.unscaled.magnitude().to_string().len() as i64;
    if d.scale <= -64 || i64::from(d.scale) >= digits {
        return 0;
    }
    let bytes = decimal_integer_part(d).to_signed_bytes_le();
    let fill = if bytes.last().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut low = [fill; 8];
    for (i, b) in bytes.iter().take(8).enumerate() {
        low[i] = *b;
    }
    i64::from_le_bytes(low)
}

/// `BigDecimal.intValue()`: the integer part's low 32 bits.
pub(crate) fn decimal_int_value(d: &Decimal) -> i32 {
    decimal_long_value(d) as i32
}

/// `BigDecimal.doubleValue()`: the closest double.
pub(crate) fn decimal_double_value(d: &Decimal) -> f64 {
    format!("{}e{}", d.unscaled, -i64::from(d.scale))
        .parse()
        .unwrap_or(f64::NAN)
}

/// `BigDecimal.floatValue()`: the closest float (rounded once, not through a double).
pub(crate) fn decimal_float_value(d: &Decimal) -> f32 {
    format!("{}e{}", d.unscaled, -i64::from(d.scale))
        .parse()
        .unwrap_or(f32::NAN)
}

/// `new BigDecimal(s)`: an optional sign, digits with an optional point (at least one digit),
/// and an optional exponent; no spaces. `None` where Java throws `NumberFormatException`.
pub(crate) fn parse_big_decimal(s: &str) -> Option<Decimal> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int_part) || !digits(frac_part) || int_part.len() + frac_part.len() == 0 {
        return None;
    }
    let exp: i64 = match exponent {
        Some(e) => {
            let e_digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if e_digits.is_empty() || !digits(e_digits) {
                return None;
            }
            e.parse().ok()?
        }
        None => 0,
    };
    let scale = i32::try_from(frac_part.len() as i64 - exp).ok()?;
    let negative = s.starts_with('-');
    let unscaled: BigInt = format!("{}{int_part}{frac_part}", if negative { "-" } else { "" })
        .parse()
        .ok()?;
    Some(Decimal::new(unscaled, scale))
}

/// The text `Double.parseDouble` / `Float.parseFloat` accept, made readable for Rust's parser:
/// surrounding whitespace (and control characters) trimmed, an optional sign, `NaN`,
/// `Infinity`, or decimal digits with an optional point and exponent and an optional `f`/`d`
/// type suffix. Java's hexadecimal form (`0x1.8p1`) is not accepted.
fn java_float_text(s: &str) -> Option<String> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let (sign, body) = match t.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", t.strip_prefix('+').unwrap_or(t)),
    };
    if body == "NaN" || body == "Infinity" {
        return Some(format!(
            "{sign}{}",
            if body == "NaN" { "NaN" } else { "inf" }
        ));
    }
    let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
    // The remaining grammar is BigDecimal's.
    parse_big_decimal(body)?;
    Some(format!("{sign}{body}"))
}

/// `Double.parseDouble(s)`; `None` where Java throws `NumberFormatException`.
pub(crate) fn parse_java_double(s: &str) -> Option<f64> {
    java_float_text(s)?.parse().ok()
}

/// `Float.parseFloat(s)`; `None` where Java throws `NumberFormatException`.
pub(crate) fn parse_java_float(s: &str) -> Option<f32> {
    java_float_text(s)?.parse().ok()
}

/// `Values.dateFormatFor(date).format(date)` in UTC: `HH:mm:ss.SSS'Z'` before one day after
/// the epoch (so for every time of day, and for every instant before 1970), `yyyy-MM-dd` at
/// midnight, `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` otherwise.
pub(crate) fn iso_date_string(millis: i64) -> String {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let ms = millis.rem_euclid(MILLIS_PER_DAY);
    let time = format!(
        "{:02}:{:02}:{:02}.{:03}Z",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    );
    if millis < MILLIS_PER_DAY {
        return time;
    }
    let (y, m, d) = civil_from_days(days);
    let date = format!("{y:04}-{m:02}-{d:02}");
    if ms == 0 {
        date
    } else {
        format!("{date}T{time}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_drops_trailing_empty_parts_like_java() {
        assert_eq!(java_split("a:b", ':'), ["a", "b"]);
        assert_eq!(java_split("a:b:", ':'), ["a", "b"]);
        assert_eq!(java_split(":b", ':'), ["", "b"]);
        assert_eq!(java_split("a::", ':'), ["a"]);
        assert!(java_split("::", ':').is_empty());
        assert_eq!(java_split("", ':'), [""]);
        assert_eq!(java_split("abc", ':'), ["abc"]);
    }

    #[test]
    fn decimals_convert_like_big_decimal() {
        let d = |s: &str| parse_big_decimal(s).unwrap();
        assert_eq!(decimal_long_value(&d("-12.99")), -12);
        assert_eq!(decimal_long_value(&d("1e2")), 100);
        // Low 64 bits of 2^64 + 5.
        assert_eq!(decimal_long_value(&d("18446744073709551621")), 5);
        assert_eq!(decimal_int_value(&d("4294967297.5")), 1);
        assert_eq!(decimal_int_value(&d("-4294967297")), -1);
        assert_eq!(decimal_long_value(&d("0.999")), 0);
        assert_eq!(decimal_long_value(&d("1e-1000000000")), 0);
        assert_eq!(decimal_long_value(&d("3e1000000000")), 0);
        assert_eq!(decimal_long_value(&d("3e63")), i64::MIN);
        assert_eq!(decimal_double_value(&d("0.1")), 0.1);
        assert_eq!(decimal_float_value(&d("0.1")), 0.1f32);
        assert_eq!(d("1.50"), Decimal::new(150, 2));
        assert_eq!(d("-1E+3"), Decimal::new(-1, -3));
        assert_eq!(d(".5"), Decimal::new(5, 1));
        assert_eq!(d("5."), Decimal::new(5, 0));
        for bad in [
            "", ".", "1.2.3", " 1", "1_000", "e5", "1e", "0x10", "+-1", "1e+-2",
        ] {
            assert_eq!(parse_big_decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_parse_like_java() {
        assert_eq!(parse_java_double(" 1.5 "), Some(1.5));
        assert_eq!(parse_java_double("1.5d"), Some(1.5));
        assert_eq!(parse_java_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_java_double("NaN").unwrap().is_nan());
        assert_eq!(parse_java_double("inf"), None);
        assert_eq!(parse_java_double("1,5"), None);
        assert_eq!(parse_java_float("3.4028236e38"), Some(f32::INFINITY));
        assert_eq!(parse_java_float("1e-50f"), Some(0.0));
    }

    #[test]
    fn dates_format_like_values_date_format_for() {
        assert_eq!(iso_date_string(0), "00:00:00.000Z");
        assert_eq!(iso_date_string(45_296_789), "12:34:56.789Z");
        assert_eq!(iso_date_string(-1), "23:59:59.999Z");
        assert_eq!(iso_date_string(86_400_000), "1970-01-02");
        assert_eq!(
            iso_date_string(1_700_000_000_000),
            "2023-11-14T22:13:20.000Z"
        );
        assert_eq!(iso_date_string(1_699_920_000_000), "2023-11-14");
    }

    #[test]
    fn only_string_keys_name_fields() {
        assert_eq!(string_key(&Value::from("a")), Ok("a"));
        assert_eq!(
            string_key(&Value::Int32(1)).unwrap_err().to_string(),
            "class java.lang.Integer cannot be cast to class java.lang.String"
        );
    }
}
