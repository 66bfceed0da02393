//! How Java prints the objects Connect values stand for, shared by [`Value`]'s `Display` and
//! the converters.
//!
//! - [`double_to_string`] / [`float_to_string`]: `Double.toString` / `Float.toString` as
//!   specified since JDK 19 (the shortest decimal that rounds to the value; when that has one
//!   digit, the closest two-digit decimal if it also rounds to the value). JDK 17's older
//!   algorithm prints a handful of values with extra digits (e.g. `1.0E23` as
//!   `9.999999999999999E22`); Tributary follows the current specification.
//! - [`to_java_string`]: `String.valueOf(object)` for the Java object a [`Value`] stands for.
//! - [`java_date_to_string`]: `java.util.Date.toString()` with the time zone fixed to UTC.

use super::value::{Struct, Value};

/// Milliseconds in a day.
pub const MILLIS_PER_DAY: i64 = 86_400_000;

/// Java's `Double.toString(v)` (JDK 19+ specification).
pub fn double_to_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let (digits, exp) = shortest(&format!("{:e}", v.abs()), || {
        let two = format!("{:.1e}", v.abs());
        (two.parse::<f64>().ok() == Some(v.abs())).then_some(two)
    });
    layout(v.is_sign_negative(), &digits, exp)
}

/// Java's `Float.toString(v)` (JDK 19+ specification).
pub fn float_to_string(v: f32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let (digits, exp) = shortest(&format!("{:e}", v.abs()), || {
        let two = format!("{:.1e}", v.abs());
        (two.parse::<f32>().ok() == Some(v.abs())).then_some(two)
    });
    layout(v.is_sign_negative(), &digits, exp)
}

/// Splits Rust's `{:e}` form (`d.ddde±x`) into significant digits and exponent; a one-digit
/// result is replaced by the closest two-digit decimal when `two_digits` finds one that rounds
/// back to the value.
fn shortest(sci: &str, two_digits: impl FnOnce() -> Option<String>) -> (String, i32) {
    let parse = |s: &str| -> (String, i32) {
        let (mant, exp) = s.split_once('e').expect("exponent form");
        let digits: String = mant.chars().filter(|c| *c != '.').collect();
        (digits, exp.parse().expect("exponent"))
    };
    let (mut digits, mut exp) = parse(sci);
    if digits.len() == 1 {
        if let Some(two) = two_digits() {
            (digits, exp) = parse(&two);
        }
    }
    let trimmed = digits.trim_end_matches('0');
    let digits = if trimmed.is_empty() {
        "0".to_string()
    } else {
        trimmed.to_string()
    };
    (digits, exp)
}

/// Java's layout: plain notation for 10^-3 <= |v| < 10^7, computerized scientific otherwise,
/// always with at least one digit after the point.
fn layout(negative: bool, digits: &str, exp: i32) -> String {
    let mut s = String::new();
    if negative {
        s.push('-');
    }
    if (-3..7).contains(&exp) {
        if exp < 0 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            s.push_str(digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                s.push_str(digits);
                s.extend(std::iter::repeat_n('0', int_len - digits.len()));
                s.push_str(".0");
            } else {
                s.push_str(&digits[..int_len]);
                s.push('.');
                s.push_str(&digits[int_len..]);
            }
        }
    } else {
        s.push_str(&digits[..1]);
        s.push('.');
        if digits.len() > 1 {
            s.push_str(&digits[1..]);
        } else {
            s.push('0');
        }
        s.push('E');
        s.push_str(&exp.to_string());
    }
    s
}

/// Civil date (year, month 1-12, day 1-31) of a day count since 1970-01-01 (proleptic
/// Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian; inverse of
/// [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `java.util.Date.toString()` in UTC: `EEE MMM dd HH:mm:ss zzz yyyy`.
pub fn java_date_to_string(millis: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let ms = millis.rem_euclid(MILLIS_PER_DAY);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[(days + 4).rem_euclid(7) as usize],
        MONTHS[m as usize - 1],
        d,
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        y
    )
}

/// `String.valueOf(object)` for the Java object a [`Value`] stands for (also what [`Value`]'s
/// `Display` writes).
///
/// Numbers come out as Java prints them (`100.0`, `1.0E7`, `1.0E-5`), decimals as
/// `BigDecimal.toString()`, lists as `[a, b]`, maps as `{k=v, k2=v2}`, structs as
/// `Struct{f=v,g=w}` with unset (null) fields left out, null as `null`, and the Date, Time and
/// Timestamp logical values as `java.util.Date.toString()` in UTC. One deliberate difference:
/// Java shows a `byte[]` by identity (`[B@1b6d3586`), Tributary lists its bytes (`[1, 2]`).
pub fn to_java_string(value: &Value) -> String {
    let mut s = String::new();
    append_java_string(&mut s, value);
    s
}

fn append_java_string(s: &mut String, value: &Value) {
    match value {
        Value::Float32(v) => s.push_str(&float_to_string(*v)),
        Value::Float64(v) => s.push_str(&double_to_string(*v)),
        Value::Date(d) => s.push_str(&java_date_to_string(*d as i64 * MILLIS_PER_DAY)),
        Value::Time(t) => s.push_str(&java_date_to_string(*t as i64)),
        Value::Timestamp(t) => s.push_str(&java_date_to_string(*t)),
        Value::Array(items) => {
            s.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                append_java_string(s, item);
            }
            s.push(']');
        }
        Value::Map(entries) => {
            s.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                append_java_string(s, k);
                s.push('=');
                append_java_string(s, v);
            }
            s.push('}');
        }
        Value::Struct(st) => append_struct(s, st),
        Value::Null => s.push_str("null"),
        Value::Int8(v) => s.push_str(&v.to_string()),
        Value::Int16(v) => s.push_str(&v.to_string()),
        Value::Int32(v) => s.push_str(&v.to_string()),
        Value::Int64(v) => s.push_str(&v.to_string()),
        Value::Boolean(v) => s.push_str(if *v { "true" } else { "false" }),
        Value::String(v) => s.push_str(v),
        Value::Bytes(b) => s.push_str(&format!("{b:?}")),
        Value::Decimal(d) => s.push_str(&d.to_string()),
    }
}

/// Appends `Struct.toString()` of `st` to `s`.
pub(crate) fn append_struct(s: &mut String, st: &Struct) {
    s.push_str("Struct{");
    let mut first = true;
    for field in &st.schema().fields {
        let v = st.get_by_index(field.index);
        if v.is_null() {
            continue;
        }
        if !first {
            s.push(',');
        }
        first = false;
        s.push_str(&field.name);
        s.push('=');
        append_java_string(s, v);
    }
    s.push('}');
}

/// Appends `s` as a JSON string as Jackson's writer-based generator (`JsonFactory.createGenerator`
/// on a `Writer`, as Avro's `Schema.toString` and Debezium's hstore JSON use it) writes one:
/// `\"`, `\\`, the short escapes `\b \f \n \r \t`, other control characters as `\u00XX`
/// (uppercase hex), every other character as is (outside the Basic Multilingual Plane too,
/// unlike [`write_json_string`]).
pub fn append_jackson_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let b = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[b >> 4]));
                out.push(char::from(HEX[b & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `s` as a JSON string with Jackson's escaping, as Connect's and Confluent's
/// serializers write it: `\"`, `\\`, the short escapes `\b \f \n \r \t`, other control
/// characters as `\u00XX` (uppercase hex), characters outside the Basic Multilingual Plane as an
/// escaped surrogate pair; everything else as UTF-8.
pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let escape_unit = |out: &mut Vec<u8>, u: u16| {
        out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            out.push(HEX[((u >> shift) & 0xf) as usize]);
        }
    };
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Runs of bytes that need no escape are copied whole; a byte that starts an escape is an
    // ASCII control character, `"`, `\`, or the first byte of a character outside the Basic
    // Multilingual Plane (0xF0 and up), which is written as two escaped UTF-16 units.
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x20 && b != b'"' && b != b'\\' && b < 0xF0 {
            i += 1;
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x20 => escape_unit(out, u16::from(b)),
            _ => {
                // A 4-byte UTF-8 sequence starts here (`s` is valid UTF-8).
                let c = s[i..].chars().next().expect("a character starts here");
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    escape_unit(out, *u);
                }
                i += c.len_utf8();
                run = i;
                continue;
            }
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java() {
        let cases: &[(f64, &str)] = &[
            (0.1, "0.1"),
            (1e21, "1.0E21"),
            (1e-7, "1.0E-7"),
            (100.0, "100.0"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123456789.125, "1.23456789125E8"),
            (1e7, "1.0E7"),
            (9999999.999, "9999999.999"),
            (0.001, "0.001"),
            (0.000999, "9.99E-4"),
            (4.9e-324, "4.9E-324"),
            (f64::MAX, "1.7976931348623157E308"),
            (2e-3, "0.002"),
            (1e23, "1.0E23"),
            (2.2250738585072014E-308, "2.2250738585072014E-308"),
            (12345678912345678.0, "1.2345678912345678E16"),
            (-1.5, "-1.5"),
        ];
        for (v, want) in cases {
            assert_eq!(double_to_string(*v), *want, "{v:e}");
        }
    }

    #[test]
    #[allow(clippy::excessive_precision)] // the Java literals, as written there
    fn floats_print_as_java() {
        let cases: &[(f32, &str)] = &[
            (1.5, "1.5"),
            (0.1, "0.1"),
            (3.4028235e38, "3.4028235E38"),
            (1.4e-45, "1.4E-45"),
            (1e-5, "1.0E-5"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (123456.7, "123456.7"),
            (16777216.0, "1.6777216E7"),
            (3.0e10, "3.0E10"),
            (1.17549435E-38, "1.1754944E-38"),
        ];
        for (v, want) in cases {
            assert_eq!(float_to_string(*v), *want, "{v:e}");
        }
    }
}
