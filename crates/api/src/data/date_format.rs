//! Java's `java.text.SimpleDateFormat` as Connect uses it: patterns such as
//! `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, formatting and lenient parsing in UTC.
//!
//! [`JavaDateFormat`] follows the JDK's rules (checked against JDK 17) for the English locale
//! Connect workers normally run with (`en` / `en_US`: English month, weekday, era and AM/PM
//! names, weeks starting on Sunday, one day enough for the first week of a year):
//!
//! - Pattern letters `G y Y M L d D E u F w W a H k K h m s S z Z X`; text between single
//!   quotes is literal (`''` is one quote), other non-letters are literal too. Other letters,
//!   an unterminated quote or `XXXX` are rejected with Java's messages.
//! - Dates before 1582-10-15 use the Julian calendar, as `GregorianCalendar` does (the week
//!   fields `w`, `W` and `F` of the last months of 1582, around the switch, may differ).
//! - Parsing is lenient, as `SimpleDateFormat` is by default: out-of-range fields roll over
//!   (`2024-13-45` is 2025-02-14), numbers may be negative or use an exponent (`2E3`), text
//!   after the last pattern field is ignored, and spaces or tabs before a field are skipped.
//!   Two-digit years (`yy` given exactly two digits) land within 80 years before and 20 years
//!   after the moment the format was created.
//! - Time zones: formatting is always UTC (`z` → `UTC`, `zzzz` → `Coordinated Universal Time`,
//!   `Z` → `+0000`, `X` → `Z`). Parsing reads offsets (`+0130`, `-05`, `+05:30`, `Z`,
//!   `GMT`, `GMT+01:30`) and the names of UTC; other zone names (`PST`, `CET`, …), which Java
//!   looks up in its time-zone database, are not recognised and make the parse fail.

use std::time::{SystemTime, UNIX_EPOCH};

use super::java_fmt::{civil_from_days, days_from_civil, MILLIS_PER_DAY};

/// The pattern letters in Java's order (`DateFormatSymbols.patternChars`).
const PATTERN_CHARS: &str = "GyMdkHmsSEDFwWahKzZYuXL";

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const SHORT_MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// Indexed by Java's `DAY_OF_WEEK` (1 = Sunday); index 0 is unused, as in Java.
const WEEKDAYS: [&str; 8] = [
    "",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const SHORT_WEEKDAYS: [&str; 8] = ["", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const ERAS: [&str; 2] = ["BC", "AD"];
const AM_PM: [&str; 2] = ["AM", "PM"];
/// The names of the UTC zone, long then short (what `z` parses besides offsets).
const UTC_NAMES: [&str; 2] = ["Coordinated Universal Time", "UTC"];

/// Days since the epoch of 1582-10-15, the first day of the Gregorian calendar.
const GREGORIAN_CUTOVER_DAY: i64 = -141_427;
const CUTOVER_YEAR: i64 = 1582;
/// Java's `Calendar.SUNDAY`, the first day of the week in the English locale.
const SUNDAY: i64 = 1;

/// One pattern letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Letter {
    Era,
    Year,
    Month,
    DayOfMonth,
    HourOfDay1,
    HourOfDay0,
    Minute,
    Second,
    Millisecond,
    DayOfWeek,
    DayOfYear,
    DayOfWeekInMonth,
    WeekOfYear,
    WeekOfMonth,
    AmPm,
    Hour1,
    Hour0,
    ZoneName,
    ZoneValue,
    WeekYear,
    IsoDayOfWeek,
    IsoZone,
    MonthStandalone,
}

impl Letter {
    fn of(c: char) -> Option<Letter> {
        use Letter::*;
        const ALL: [Letter; 23] = [
            Era,
            Year,
            Month,
            DayOfMonth,
            HourOfDay1,
            HourOfDay0,
            Minute,
            Second,
            Millisecond,
            DayOfWeek,
            DayOfYear,
            DayOfWeekInMonth,
            WeekOfYear,
            WeekOfMonth,
            AmPm,
            Hour1,
            Hour0,
            ZoneName,
            ZoneValue,
            WeekYear,
            IsoDayOfWeek,
            IsoZone,
            MonthStandalone,
        ];
        PATTERN_CHARS.chars().position(|p| p == c).map(|i| ALL[i])
    }

    /// Whether a field before this one must stop after as many digits as its letter count
    /// (Java's `shouldObeyCount`: numeric fields that may abut).
    fn is_abutting_numeric(self, count: usize) -> bool {
        use Letter::*;
        match self {
            Month | MonthStandalone => count <= 2,
            Year | DayOfMonth | HourOfDay1 | HourOfDay0 | Minute | Second | Millisecond
            | DayOfYear | DayOfWeekInMonth | WeekOfYear | WeekOfMonth | Hour1 | Hour0
            | WeekYear | IsoDayOfWeek => true,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Literal(char),
    Field(Letter, usize),
}

/// A compiled `SimpleDateFormat` pattern in UTC (see the module docs).
#[derive(Debug, Clone)]
pub struct JavaDateFormat {
    pattern: String,
    items: Vec<Item>,
    /// Start of the 100-year window two-digit years fall in (ms since the epoch) and its year.
    century_start: i64,
    century_start_year: i64,
}

impl JavaDateFormat {
    /// Compiles `pattern`. The error is Java's `IllegalArgumentException` message
    /// (`Illegal pattern character 'q'`, `Unterminated quote`,
    /// `invalid ISO 8601 format: length=4`).
    pub fn new(pattern: &str) -> Result<JavaDateFormat, String> {
        let items = compile(pattern)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let (century_start, century_start_year) = minus_80_years(now);
        Ok(JavaDateFormat {
            pattern: pattern.to_string(),
            items,
            century_start,
            century_start_year,
        })
    }

    /// The pattern as given (Java's `toPattern()`).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The instant `millis` (ms since the epoch) written with the pattern, in UTC.
    pub fn format(&self, millis: i64) -> String {
        let f = CalendarFields::of(millis);
        let mut out = String::new();
        for item in &self.items {
            match *item {
                Item::Literal(c) => out.push(c),
                Item::Field(letter, count) => format_field(&mut out, &f, letter, count),
            }
        }
        out
    }

    /// Parses `text` from its start as Java's `DateFormat.parse(String)` does: the instant
    /// (ms since the epoch) when the pattern matched a prefix of `text`, `None` otherwise
    /// (Java's `ParseException`). Text after the matched prefix is ignored.
    pub fn parse(&self, text: &str) -> Option<i64> {
        self.parse_prefix(text).map(|(millis, _)| millis)
    }

    /// Like [`JavaDateFormat::parse`], also giving how many characters were read.
    pub fn parse_prefix(&self, text: &str) -> Option<(i64, usize)> {
        let chars: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let mut fields = ParsedFields::default();
        let mut ambiguous_year = false;
        for (i, item) in self.items.iter().enumerate() {
            match *item {
                Item::Literal(c) => {
                    if chars.get(pos) != Some(&c) {
                        return None;
                    }
                    pos += 1;
                }
                Item::Field(letter, count) => {
                    let obey_count = match self.items.get(i + 1) {
                        Some(Item::Field(next, next_count)) => {
                            next.is_abutting_numeric(*next_count)
                        }
                        _ => false,
                    };
                    pos = self.parse_field(
                        &chars,
                        pos,
                        letter,
                        count,
                        obey_count,
                        &mut fields,
                        &mut ambiguous_year,
                    )?;
                }
            }
        }
        let mut millis = fields.resolve()?;
        if ambiguous_year && millis < self.century_start {
            fields.add_years(100);
            millis = fields.resolve()?;
        }
        if pos == 0 {
            return None;
        }
        Some((millis, pos))
    }

    /// Parses one field starting at `start`; the position after it, `None` on failure.
    #[allow(clippy::too_many_arguments)]
    fn parse_field(
        &self,
        text: &[char],
        start: usize,
        letter: Letter,
        count: usize,
        obey_count: bool,
        fields: &mut ParsedFields,
        ambiguous_year: &mut bool,
    ) -> Option<usize> {
        let mut pos = start;
        while pos < text.len() && (text[pos] == ' ' || text[pos] == '\t') {
            pos += 1;
        }
        if pos >= text.len() {
            return None;
        }
        let actual_start = pos;
        // A numeric field that abuts the next one reads at most `count` characters, counted
        // from before any skipped blanks (as Java does).
        let number = || {
            let limit = if obey_count {
                if start + count > text.len() {
                    return None;
                }
                start + count
            } else {
                text.len()
            };
            parse_java_int(text, pos, limit)
        };
        use Letter::*;
        match letter {
            Era => match_names(text, start, &ERAS, 0).map(|(i, end)| {
                fields.set(F_ERA, i as i64);
                end
            }),
            Year | WeekYear => {
                let (mut value, end) = number()?;
                if count <= 2
                    && end - actual_start == 2
                    && text[actual_start].is_ascii_digit()
                    && text[actual_start + 1].is_ascii_digit()
                {
                    let ambiguous = self.century_start_year.rem_euclid(100);
                    *ambiguous_year = i64::from(value) == ambiguous;
                    let adjusted = (self.century_start_year / 100) * 100
                        + i64::from(value)
                        + if i64::from(value) < ambiguous { 100 } else { 0 };
                    value = adjusted as i32;
                }
                fields.set(
                    if letter == Year { F_YEAR } else { F_WEEK_YEAR },
                    i64::from(value),
                );
                Some(end)
            }
            Month | MonthStandalone if count <= 2 => {
                let (value, end) = number()?;
                fields.set(F_MONTH, i64::from(value) - 1);
                Some(end)
            }
            Month | MonthStandalone => match_names(text, start, &MONTHS, 0)
                .or_else(|| match_names(text, start, &SHORT_MONTHS, 0))
                .map(|(i, end)| {
                    fields.set(F_MONTH, i as i64);
                    end
                }),
            HourOfDay1 => {
                let (value, end) = number()?;
                fields.set(F_HOUR_OF_DAY, if value == 24 { 0 } else { value.into() });
                Some(end)
            }
            Hour1 => {
                let (value, end) = number()?;
                fields.set(F_HOUR, if value == 12 { 0 } else { value.into() });
                Some(end)
            }
            DayOfWeek => match_names(text, start, &WEEKDAYS, 1)
                .or_else(|| match_names(text, start, &SHORT_WEEKDAYS, 1))
                .map(|(i, end)| {
                    fields.set(F_DAY_OF_WEEK, i as i64);
                    end
                }),
            AmPm => match_names(text, start, &AM_PM, 0).map(|(i, end)| {
                fields.set(F_AM_PM, i as i64);
                end
            }),
            ZoneName | ZoneValue => parse_general_zone(text, start, pos, fields),
            IsoZone => match text[pos] {
                'Z' => {
                    fields.set(F_ZONE_OFFSET, 0);
                    fields.set(F_DST_OFFSET, 0);
                    Some(pos + 1)
                }
                '+' | '-' => {
                    let sign = if text[pos] == '+' { 1 } else { -1 };
                    parse_numeric_zone(text, pos + 1, sign, count, count == 3, fields)
                }
                _ => None,
            },
            _ => {
                let (value, end) = number()?;
                let (field, value) = match letter {
                    DayOfMonth => (F_DAY_OF_MONTH, value.into()),
                    HourOfDay0 => (F_HOUR_OF_DAY, value.into()),
                    Minute => (F_MINUTE, value.into()),
                    Second => (F_SECOND, value.into()),
                    Millisecond => (F_MILLISECOND, value.into()),
                    DayOfYear => (F_DAY_OF_YEAR, value.into()),
                    DayOfWeekInMonth => (F_DAY_OF_WEEK_IN_MONTH, value.into()),
                    WeekOfYear => (F_WEEK_OF_YEAR, value.into()),
                    WeekOfMonth => (F_WEEK_OF_MONTH, value.into()),
                    Hour0 => (F_HOUR, value.into()),
                    // ISO day of week (1 = Monday … 7 = Sunday) to Java's (1 = Sunday).
                    IsoDayOfWeek => (
                        F_DAY_OF_WEEK,
                        match value {
                            7 => 1,
                            1..=6 => i64::from(value) + 1,
                            other => other.into(),
                        },
                    ),
                    _ => return None,
                };
                fields.set(field, value);
                Some(end)
            }
        }
    }
}

/// Compiles a pattern into literals and fields (Java's `SimpleDateFormat.compile`).
fn compile(pattern: &str) -> Result<Vec<Item>, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut items = Vec::new();
    let mut in_quote = false;
    let mut run: Option<(Letter, usize)> = None;
    let flush = |run: &mut Option<(Letter, usize)>, items: &mut Vec<Item>| -> Result<(), String> {
        if let Some((letter, count)) = run.take() {
            if letter == Letter::IsoZone && count >= 4 {
                return Err(format!("invalid ISO 8601 format: length={count}"));
            }
            items.push(Item::Field(letter, count));
        }
        Ok(())
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                // Two quotes are one literal quote, inside or outside a quoted section.
                i += 2;
                flush(&mut run, &mut items)?;
                items.push(Item::Literal('\''));
                continue;
            }
            if !in_quote {
                flush(&mut run, &mut items)?;
            }
            in_quote = !in_quote;
            i += 1;
            continue;
        }
        if in_quote || !c.is_ascii_alphabetic() {
            flush(&mut run, &mut items)?;
            items.push(Item::Literal(c));
            i += 1;
            continue;
        }
        let letter = Letter::of(c).ok_or_else(|| format!("Illegal pattern character '{c}'"))?;
        match &mut run {
            Some((l, count)) if *l == letter => *count += 1,
            _ => {
                flush(&mut run, &mut items)?;
                run = Some((letter, 1));
            }
        }
        i += 1;
    }
    if in_quote {
        return Err("Unterminated quote".into());
    }
    flush(&mut run, &mut items)?;
    Ok(items)
}

/// Java's `Character` case-insensitive comparison of two characters (as `regionMatches`).
fn eq_ignore_case(a: char, b: char) -> bool {
    if a == b {
        return true;
    }
    let upper = |c: char| {
        let mut u = c.to_uppercase();
        match (u.next(), u.next()) {
            (Some(x), None) => x,
            _ => c,
        }
    };
    let lower = |c: char| {
        let mut l = c.to_lowercase();
        match (l.next(), l.next()) {
            (Some(x), None) => x,
            _ => c,
        }
    };
    let (ua, ub) = (upper(a), upper(b));
    ua == ub || lower(ua) == lower(ub)
}

/// Whether `name` appears at `start` of `text`, ignoring case.
fn region_matches(text: &[char], start: usize, name: &str) -> bool {
    let mut i = start;
    for n in name.chars() {
        match text.get(i) {
            Some(&c) if eq_ignore_case(c, n) => i += 1,
            _ => return false,
        }
    }
    true
}

/// The longest of `names[from..]` found at `start` (Java's `matchString`): its index and the
/// position after it.
fn match_names(text: &[char], start: usize, names: &[&str], from: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for (i, name) in names.iter().enumerate().skip(from) {
        let len = name.chars().count();
        if len > best.map_or(0, |(_, l)| l) && region_matches(text, start, name) {
            best = Some((i, len));
        }
    }
    best.map(|(i, len)| (i, start + len))
}

/// An integer as the date format's `DecimalFormat` reads it (integer only, no grouping):
/// an optional `-`, ASCII digits, and an optional exponent `E` with an optional `-` and
/// digits, within `text[pos..limit]`. Gives Java's `Number.intValue()` of the number (a long
/// wraps, a larger or fractional number saturates or truncates) and the position after it.
fn parse_java_int(text: &[char], pos: usize, limit: usize) -> Option<(i32, usize)> {
    let limit = limit.min(text.len());
    let mut i = pos;
    let negative = i < limit && text[i] == '-';
    if negative {
        i += 1;
    }
    let digits_start = i;
    while i < limit && text[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    let digits: String = text[digits_start..i].iter().collect();
    let mut exponent: i64 = 0;
    if i < limit && text[i] == 'E' {
        let mut j = i + 1;
        let exp_negative = j < limit && text[j] == '-';
        if exp_negative {
            j += 1;
        }
        let exp_start = j;
        while j < limit && text[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            let exp_digits: String = text[exp_start..j].iter().collect();
            exponent = exp_digits.parse::<i64>().unwrap_or(i64::MAX / 2);
            if exp_negative {
                exponent = -exponent;
            }
            i = j;
        }
    }
    let trimmed = digits.trim_start_matches('0');
    let value: i32 = if trimmed.is_empty() {
        0
    } else if exponent >= 0 && (trimmed.len() as i64 + exponent) <= 19 {
        let text = format!("{trimmed}{}", "0".repeat(exponent as usize));
        match text.parse::<i64>() {
            Ok(v) => (if negative { -v } else { v }) as i32,
            // Beyond a long: Java keeps a double, whose intValue saturates.
            Err(_) => {
                if negative {
                    i32::MIN
                } else {
                    i32::MAX
                }
            }
        }
    } else {
        let v: f64 = format!("{}{trimmed}e{exponent}", if negative { "-" } else { "" })
            .parse()
            .unwrap_or(0.0);
        v as i32
    };
    Some((value, i))
}

/// `z` / `Z`: `+hhmm` / `-hhmm`, `GMT`, `GMT+hh:mm`, or a name of UTC.
fn parse_general_zone(
    text: &[char],
    start: usize,
    pos: usize,
    fields: &mut ParsedFields,
) -> Option<usize> {
    let c = text[pos];
    if c == '+' || c == '-' {
        let sign = if c == '+' { 1 } else { -1 };
        return parse_numeric_zone(text, pos + 1, sign, 0, false, fields);
    }
    if (c == 'G' || c == 'g') && region_matches(text, start, "GMT") {
        let after = start + 3;
        match text.get(after) {
            Some('+') => return parse_numeric_zone(text, after + 1, 1, 0, true, fields),
            Some('-') => return parse_numeric_zone(text, after + 1, -1, 0, true, fields),
            _ => {
                fields.set(F_ZONE_OFFSET, 0);
                fields.set(F_DST_OFFSET, 0);
                return Some(after);
            }
        }
    }
    // The names of UTC, the formatter's zone: the zone stays UTC, no offset field is set.
    UTC_NAMES
        .iter()
        .find(|name| region_matches(text, pos, name))
        .map(|name| pos + name.chars().count())
}

/// Hours and minutes of an offset (Java's `subParseNumericZone`): `count` 1 reads hours only,
/// `colon` wants `hh:mm`; hours may have one digit only with a colon and no count.
fn parse_numeric_zone(
    text: &[char],
    start: usize,
    sign: i64,
    count: usize,
    colon: bool,
    fields: &mut ParsedFields,
) -> Option<usize> {
    let digit = |i: usize| text.get(i).and_then(|c| c.to_digit(10)).map(i64::from);
    let mut i = start;
    let mut hours = digit(i)?;
    i += 1;
    match digit(i) {
        Some(d) => {
            hours = hours * 10 + d;
            i += 1;
        }
        None => {
            if count > 0 || !colon {
                return None;
            }
        }
    }
    if hours > 23 {
        return None;
    }
    let mut minutes = 0;
    if count != 1 {
        if colon {
            if text.get(i) != Some(&':') {
                return None;
            }
            i += 1;
        }
        minutes = digit(i)? * 10 + digit(i + 1)?;
        i += 2;
        if minutes > 59 {
            return None;
        }
    }
    fields.set(F_ZONE_OFFSET, sign * (hours * 60 + minutes) * 60_000);
    fields.set(F_DST_OFFSET, 0);
    Some(i)
}

// Calendar fields a parse may set, as indexes into `ParsedFields`.
const F_ERA: usize = 0;
const F_YEAR: usize = 1;
const F_MONTH: usize = 2;
const F_WEEK_OF_YEAR: usize = 3;
const F_WEEK_OF_MONTH: usize = 4;
const F_DAY_OF_MONTH: usize = 5;
const F_DAY_OF_YEAR: usize = 6;
const F_DAY_OF_WEEK: usize = 7;
const F_DAY_OF_WEEK_IN_MONTH: usize = 8;
const F_AM_PM: usize = 9;
const F_HOUR: usize = 10;
const F_HOUR_OF_DAY: usize = 11;
const F_MINUTE: usize = 12;
const F_SECOND: usize = 13;
const F_MILLISECOND: usize = 14;
const F_ZONE_OFFSET: usize = 15;
const F_DST_OFFSET: usize = 16;
const F_WEEK_YEAR: usize = 17;
const FIELD_COUNT: usize = 18;

/// The fields a parse set, each with the order it was set in (Java's `CalendarBuilder`
/// stamps: the most recently set fields win when several combinations could give the date).
#[derive(Debug, Default, Clone)]
struct ParsedFields {
    values: [i64; FIELD_COUNT],
    stamps: [u32; FIELD_COUNT],
    next_stamp: u32,
}

impl ParsedFields {
    fn set(&mut self, field: usize, value: i64) {
        self.next_stamp += 1;
        self.stamps[field] = self.next_stamp;
        self.values[field] = value;
    }

    fn is_set(&self, field: usize) -> bool {
        self.stamps[field] != 0
    }

    /// The field's value, 0 when unset (Java's `internalGet` after `clear()`).
    fn get(&self, field: usize) -> i64 {
        self.values[field]
    }

    fn add_years(&mut self, years: i64) {
        self.values[F_YEAR] += years;
        self.values[F_WEEK_YEAR] += years;
    }

    /// The instant the fields denote (Java's lenient `GregorianCalendar.computeTime` in UTC).
    fn resolve(&self) -> Option<i64> {
        let s = &self.stamps;
        let week_date = self.is_set(F_WEEK_YEAR) && s[F_WEEK_YEAR] > s[F_YEAR];

        // Time of day (the date part may roll over into days).
        let hour_of_day_stamp = s[F_HOUR_OF_DAY];
        let hour_stamp = aggregate(s[F_HOUR], s[F_AM_PM]);
        let mut best = hour_stamp.max(hour_of_day_stamp);
        if best == 0 {
            best = s[F_HOUR].max(s[F_AM_PM]);
        }
        let mut time_of_day: i64 = if best != 0 && best == hour_of_day_stamp {
            self.get(F_HOUR_OF_DAY)
        } else {
            let mut t = self.get(F_HOUR);
            if best != 0 && self.is_set(F_AM_PM) {
                t = t.wrapping_add(12 * self.get(F_AM_PM));
            }
            t
        };
        time_of_day = time_of_day
            .wrapping_mul(60)
            .wrapping_add(self.get(F_MINUTE))
            .wrapping_mul(60)
            .wrapping_add(self.get(F_SECOND))
            .wrapping_mul(1000)
            .wrapping_add(self.get(F_MILLISECOND));
        let mut day_offset = time_of_day / MILLIS_PER_DAY;
        time_of_day %= MILLIS_PER_DAY;
        if time_of_day < 0 {
            time_of_day += MILLIS_PER_DAY;
            day_offset -= 1;
        }

        let days = if week_date {
            day_offset.wrapping_add(self.week_date_days())
        } else {
            let mut year = if self.is_set(F_YEAR) {
                self.get(F_YEAR)
            } else {
                1970
            };
            match (self.is_set(F_ERA), self.get(F_ERA)) {
                (false, _) | (true, 1) => {}
                (true, 0) => year = 1 - year,
                _ => return None,
            }
            let mode = self.date_mode();
            let gregorian = || day_offset.wrapping_add(self.date_in_year(true, year, mode));
            let julian = || day_offset.wrapping_add(self.date_in_year(false, year, mode));
            // Years before the cutover year, and days of the cutover year counted by day or
            // week of the year, are Julian; otherwise the Gregorian date unless it falls
            // before the cutover.
            let julian_only = year < CUTOVER_YEAR
                || (year == CUTOVER_YEAR
                    && matches!(mode, DateMode::DayOfYear | DateMode::WeekOfYear { .. }));
            if julian_only {
                julian()
            } else {
                let g = gregorian();
                if g >= GREGORIAN_CUTOVER_DAY {
                    g
                } else {
                    julian()
                }
            }
        };
        let zone = if self.is_set(F_ZONE_OFFSET) {
            self.get(F_ZONE_OFFSET)
        } else {
            0
        };
        let dst = if self.is_set(F_DST_OFFSET) {
            self.get(F_DST_OFFSET)
        } else {
            0
        };
        Some(
            days.wrapping_mul(MILLIS_PER_DAY)
                .wrapping_add(time_of_day)
                .wrapping_sub(zone + dst),
        )
    }

    /// Which fields give the day within the year (Java's `Calendar.selectFields`).
    fn date_mode(&self) -> DateMode {
        let s = &self.stamps;
        let dow = s[F_DAY_OF_WEEK];
        let mut dom = s[F_DAY_OF_MONTH];
        let mut wom = aggregate(s[F_WEEK_OF_MONTH], dow);
        let mut dowim = aggregate(s[F_DAY_OF_WEEK_IN_MONTH], dow);
        let doy = s[F_DAY_OF_YEAR];
        let mut woy = aggregate(s[F_WEEK_OF_YEAR], dow);
        let mut best = dom.max(wom).max(dowim).max(doy).max(woy);
        if best == 0 {
            wom = s[F_WEEK_OF_MONTH];
            dowim = s[F_DAY_OF_WEEK_IN_MONTH].max(dow);
            woy = s[F_WEEK_OF_YEAR];
            best = wom.max(dowim).max(woy);
            if best == 0 {
                dom = s[F_MONTH];
                best = dom;
            }
        }
        let use_dow = dow != 0;
        if best == dom
            || (best == wom && s[F_WEEK_OF_MONTH] >= s[F_WEEK_OF_YEAR])
            || (best == dowim && s[F_DAY_OF_WEEK_IN_MONTH] >= s[F_WEEK_OF_YEAR])
        {
            if best == dom {
                DateMode::DayOfMonth
            } else if (wom == dowim && s[F_WEEK_OF_MONTH] >= s[F_DAY_OF_WEEK_IN_MONTH])
                || (wom != dowim && best == wom)
            {
                DateMode::WeekOfMonth { use_dow }
            } else {
                DateMode::DayOfWeekInMonth {
                    use_dow,
                    use_dowim: s[F_DAY_OF_WEEK_IN_MONTH] != 0,
                }
            }
        } else if best == doy {
            DateMode::DayOfYear
        } else {
            DateMode::WeekOfYear { use_dow }
        }
    }

    /// Days since the epoch of the date the fields give in `year` (Java's
    /// `GregorianCalendar.getFixedDate`), in the Gregorian or the Julian calendar.
    fn date_in_year(&self, gregorian: bool, mut year: i64, mode: DateMode) -> i64 {
        let month_based = matches!(
            mode,
            DateMode::DayOfMonth | DateMode::WeekOfMonth { .. } | DateMode::DayOfWeekInMonth { .. }
        );
        let mut month = 0;
        if month_based {
            month = self.get(F_MONTH);
            year += month.div_euclid(12);
            month = month.rem_euclid(12);
        }
        let first = days_in_calendar(gregorian, year, month as u32 + 1, 1);
        match mode {
            DateMode::DayOfMonth => {
                if self.is_set(F_DAY_OF_MONTH) {
                    first.wrapping_add(self.get(F_DAY_OF_MONTH) - 1)
                } else {
                    first
                }
            }
            DateMode::WeekOfMonth { use_dow } => {
                let mut start = first_week_start(first);
                if use_dow {
                    start = day_of_week_on_or_before(start + 6, self.get(F_DAY_OF_WEEK));
                }
                start.wrapping_add(7 * (self.get(F_WEEK_OF_MONTH) - 1))
            }
            DateMode::DayOfWeekInMonth { use_dow, use_dowim } => {
                let dow = if use_dow {
                    self.get(F_DAY_OF_WEEK)
                } else {
                    SUNDAY
                };
                let dowim = if use_dowim {
                    self.get(F_DAY_OF_WEEK_IN_MONTH)
                } else {
                    1
                };
                if dowim >= 0 {
                    day_of_week_on_or_before(first.wrapping_add(7 * dowim - 1), dow)
                } else {
                    let next = days_in_calendar(
                        gregorian,
                        year + i64::from(month == 11),
                        ((month + 1) % 12) as u32 + 1,
                        1,
                    );
                    let last = next - first + 7 * (dowim + 1);
                    day_of_week_on_or_before(first + last - 1, dow)
                }
            }
            DateMode::DayOfYear => first.wrapping_add(self.get(F_DAY_OF_YEAR) - 1),
            DateMode::WeekOfYear { use_dow } => {
                let mut start = first_week_start(first);
                if use_dow && self.get(F_DAY_OF_WEEK) != SUNDAY {
                    start = day_of_week_on_or_before(start + 6, self.get(F_DAY_OF_WEEK));
                }
                start.wrapping_add(7 * (self.get(F_WEEK_OF_YEAR) - 1))
            }
        }
    }

    /// Days since the epoch of a week-year date (Java's `setWeekDate`).
    fn week_date_days(&self) -> i64 {
        let mut week = if self.is_set(F_WEEK_OF_YEAR) {
            self.get(F_WEEK_OF_YEAR)
        } else {
            1
        };
        let mut dow = if self.is_set(F_DAY_OF_WEEK) {
            self.get(F_DAY_OF_WEEK)
        } else {
            SUNDAY
        };
        if !(1..=7).contains(&dow) {
            if dow >= 8 {
                dow -= 1;
                week += dow / 7;
                dow = dow % 7 + 1;
            } else {
                while dow <= 0 {
                    dow += 7;
                    week -= 1;
                }
            }
            dow = if dow == 7 { 1 } else { dow + 1 };
        }
        let year = self.get(F_WEEK_YEAR);
        let jan1 = days_of_year_start(year);
        let week1 = first_week_start(jan1);
        week1 + (dow - SUNDAY).rem_euclid(7) + 7 * (week - 1)
    }
}

/// Which fields decide the day within the year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DateMode {
    DayOfMonth,
    WeekOfMonth { use_dow: bool },
    DayOfWeekInMonth { use_dow: bool, use_dowim: bool },
    DayOfYear,
    WeekOfYear { use_dow: bool },
}

/// The later of two stamps, or unset (0) when either is unset.
fn aggregate(a: u32, b: u32) -> u32 {
    if a == 0 || b == 0 {
        0
    } else {
        a.max(b)
    }
}

/// Java's `DAY_OF_WEEK` (1 = Sunday … 7 = Saturday) of a day since the epoch.
fn day_of_week(days: i64) -> i64 {
    (days + 4).rem_euclid(7) + 1
}

/// The latest day on or before `days` that falls on `dow` (any integer, taken modulo 7).
fn day_of_week_on_or_before(days: i64, dow: i64) -> i64 {
    days - (day_of_week(days) - dow).rem_euclid(7)
}

/// The first day of week 1 of a period starting on `first` (weeks start on Sunday; a single
/// day makes a first week).
fn first_week_start(first: i64) -> i64 {
    let start = day_of_week_on_or_before(first + 6, SUNDAY);
    if start - first >= 1 {
        start - 7
    } else {
        start
    }
}

/// Java's week number of `date` in the period starting on `first`.
fn week_number(first: i64, date: i64) -> i64 {
    (date - first_week_start(first)).div_euclid(7) + 1
}

/// Days since the epoch of a date in the Gregorian (`true`) or Julian calendar.
fn days_in_calendar(gregorian: bool, year: i64, month: u32, day: u32) -> i64 {
    if gregorian {
        days_from_civil(year, month, day)
    } else {
        days_from_julian(year, month, day)
    }
}

/// Days since the epoch of January 1 of `year` in the calendar in force on that day.
fn days_of_year_start(year: i64) -> i64 {
    days_in_calendar(year > CUTOVER_YEAR, year, 1, 1)
}

/// Days since the epoch of a Julian calendar date (proleptic; year 0 is 1 BC).
fn days_from_julian(year: i64, month: u32, day: u32) -> i64 {
    let a = (14 - i64::from(month)) / 12;
    let y = year + 4800 - a;
    let m = i64::from(month) + 12 * a - 3;
    let jdn = i64::from(day) + (153 * m + 2) / 5 + 365 * y + y.div_euclid(4) - 32_083;
    jdn - 2_440_588
}

/// The Julian calendar date (year, month 1-12, day) of a day since the epoch.
fn julian_from_days(days: i64) -> (i64, u32, u32) {
    let c = days + 2_440_588 + 32_082;
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - (1461 * d).div_euclid(4);
    let m = (5 * e + 2) / 153;
    let day = e - (153 * m + 2) / 5 + 1;
    let month = m + 3 - 12 * (m / 10);
    let year = d - 4800 + m / 10;
    (year, month as u32, day as u32)
}

/// The calendar fields of an instant in UTC, as `GregorianCalendar` computes them.
struct CalendarFields {
    /// Proleptic year (0 = 1 BC).
    year: i64,
    month0: i64,
    day_of_month: i64,
    day_of_year: i64,
    day_of_week: i64,
    week_of_year: i64,
    week_of_month: i64,
    hour_of_day: i64,
    minute: i64,
    second: i64,
    millisecond: i64,
}

impl CalendarFields {
    fn of(millis: i64) -> CalendarFields {
        let days = millis.div_euclid(MILLIS_PER_DAY);
        let ms = millis.rem_euclid(MILLIS_PER_DAY);
        let (year, month, dom) = if days >= GREGORIAN_CUTOVER_DAY {
            civil_from_days(days)
        } else {
            julian_from_days(days)
        };
        let jan1 = if days >= GREGORIAN_CUTOVER_DAY && year > CUTOVER_YEAR {
            days_from_civil(year, 1, 1)
        } else {
            days_from_julian(year, 1, 1)
        };
        let mut week_of_year = week_number(jan1, days);
        if week_of_year >= 52 {
            let next_jan1 = days_of_year_start(year + 1);
            let next_week1 = day_of_week_on_or_before(next_jan1 + 6, SUNDAY);
            if next_week1 - next_jan1 >= 1 && days >= next_week1 - 7 {
                week_of_year = 1;
            }
        }
        CalendarFields {
            year,
            month0: i64::from(month) - 1,
            day_of_month: dom.into(),
            day_of_year: days - jan1 + 1,
            day_of_week: day_of_week(days),
            week_of_year,
            week_of_month: week_number(days - (i64::from(dom) - 1), days),
            hour_of_day: ms / 3_600_000,
            minute: ms / 60_000 % 60,
            second: ms / 1000 % 60,
            millisecond: ms % 1000,
        }
    }

    /// The year as `y` shows it: years of the era, counted back from 1 BC.
    fn year_of_era(&self) -> i64 {
        if self.year > 0 {
            self.year
        } else {
            1 - self.year
        }
    }

    /// The week-based year (`Y`).
    fn week_year(&self) -> i64 {
        let mut y = self.year;
        if self.month0 == 0 {
            if self.week_of_year >= 52 {
                y -= 1;
            }
        } else if self.week_of_year == 1 {
            y += 1;
        }
        y
    }
}

/// Java's `zeroPaddingNumber`: at least `min` digits; a `max` of 2 keeps the last two.
fn push_number(out: &mut String, value: i64, min: usize, max_two: bool) {
    let mut digits = value.unsigned_abs().to_string();
    if max_two && digits.len() > 2 {
        digits = digits[digits.len() - 2..].to_string();
    }
    if value < 0 {
        out.push('-');
    }
    for _ in digits.len()..min {
        out.push('0');
    }
    out.push_str(&digits);
}

fn format_field(out: &mut String, f: &CalendarFields, letter: Letter, count: usize) {
    use Letter::*;
    let long = count >= 4;
    match letter {
        Era => out.push_str(ERAS[usize::from(f.year > 0)]),
        Year => push_number(out, f.year_of_era(), count, count == 2),
        WeekYear => push_number(out, f.week_year(), count, count == 2),
        Month | MonthStandalone => match count {
            3 => out.push_str(SHORT_MONTHS[f.month0 as usize]),
            c if c >= 4 => out.push_str(MONTHS[f.month0 as usize]),
            _ => push_number(out, f.month0 + 1, count, false),
        },
        DayOfMonth => push_number(out, f.day_of_month, count, false),
        HourOfDay1 => push_number(
            out,
            if f.hour_of_day == 0 {
                24
            } else {
                f.hour_of_day
            },
            count,
            false,
        ),
        HourOfDay0 => push_number(out, f.hour_of_day, count, false),
        Minute => push_number(out, f.minute, count, false),
        Second => push_number(out, f.second, count, false),
        Millisecond => push_number(out, f.millisecond, count, false),
        DayOfWeek => out.push_str(if long {
            WEEKDAYS[f.day_of_week as usize]
        } else {
            SHORT_WEEKDAYS[f.day_of_week as usize]
        }),
        DayOfYear => push_number(out, f.day_of_year, count, false),
        DayOfWeekInMonth => push_number(out, (f.day_of_month - 1) / 7 + 1, count, false),
        WeekOfYear => push_number(out, f.week_of_year, count, false),
        WeekOfMonth => push_number(out, f.week_of_month, count, false),
        AmPm => out.push_str(AM_PM[usize::from(f.hour_of_day >= 12)]),
        Hour1 => {
            let h = f.hour_of_day % 12;
            push_number(out, if h == 0 { 12 } else { h }, count, false)
        }
        Hour0 => push_number(out, f.hour_of_day % 12, count, false),
        ZoneName => out.push_str(if long { UTC_NAMES[0] } else { UTC_NAMES[1] }),
        ZoneValue => out.push_str("+0000"),
        IsoZone => out.push('Z'),
        IsoDayOfWeek => push_number(
            out,
            if f.day_of_week == SUNDAY {
                7
            } else {
                f.day_of_week - 1
            },
            count,
            false,
        ),
    }
}

/// The instant 80 years before `millis` (same month, day and time; February 29 becomes
/// February 28) and its year: the start of the two-digit-year window.
fn minus_80_years(millis: i64) -> (i64, i64) {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let ms = millis.rem_euclid(MILLIS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let year = y - 80;
    let mut day = d;
    while day > 28 && civil_from_days(days_from_civil(year, m, day)).1 != m {
        day -= 1;
    }
    (days_from_civil(year, m, day) * MILLIS_PER_DAY + ms, year)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(pattern: &str, millis: i64) -> String {
        JavaDateFormat::new(pattern).unwrap().format(millis)
    }

    fn parse(pattern: &str, text: &str) -> Option<(i64, usize)> {
        JavaDateFormat::new(pattern).unwrap().parse_prefix(text)
    }

    // Expected values below were produced by JDK 17's SimpleDateFormat (UTC, locale `en`).

    #[test]
    fn every_letter_formats_as_java() {
        assert_eq!(
            fmt(
                "G yyyy yy y Y M MM MMM MMMM L LLL d D F w W E EEEE u a H k K h m s S SSS SSSS z zzzz Z X XX XXX",
                1_704_104_430_123
            ),
            "AD 2024 24 2024 2024 1 01 Jan January 1 Jan 1 1 1 1 1 Mon Monday 1 AM 10 10 10 10 20 30 123 123 0123 UTC Coordinated Universal Time +0000 Z Z Z"
        );
        assert_eq!(
            fmt("y yy yyy yyyyy", 1_704_104_430_123),
            "2024 24 2024 02024"
        );
        assert_eq!(fmt("h K k H", 0), "12 0 24 0");
        assert_eq!(fmt("S", 5), "5");
        assert_eq!(fmt("w Y W", 1_735_603_200_000), "1 2025 5");
        assert_eq!(
            fmt("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 0),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(fmt("'o''clock' ''", 0), "o'clock '");
        assert_eq!(
            fmt("EEE, d MMM yyyy hh:mm a", 1_709_676_000_000),
            "Tue, 5 Mar 2024 10:00 PM"
        );
    }

    #[test]
    fn old_dates_use_the_julian_calendar_and_eras() {
        assert_eq!(fmt("yyyyMMdd", -62_135_769_600_000), "00010101");
        assert_eq!(fmt("G yyyy-MM-dd", -62_135_769_600_001), "BC 0001-12-31");
        assert_eq!(fmt("yyyy-MM-dd", -12_219_292_800_001), "1582-10-04");
        assert_eq!(fmt("yyyy-MM-dd", -12_219_292_800_000), "1582-10-15");
        assert_eq!(fmt("yyyy", -99_999_999_999_999), "1200");
    }

    #[test]
    fn bad_patterns_are_rejected_with_javas_messages() {
        let err = |p: &str| JavaDateFormat::new(p).unwrap_err();
        assert_eq!(err("q"), "Illegal pattern character 'q'");
        assert_eq!(err("'"), "Unterminated quote");
        assert_eq!(err("XXXX"), "invalid ISO 8601 format: length=4");
        assert_eq!(err("y'x"), "Unterminated quote");
    }

    #[test]
    fn parsing_is_lenient_as_java() {
        type Case = (&'static str, &'static str, Option<(i64, usize)>);
        let cases: &[Case] = &[
            ("yyyy", "2E3", Some((946_684_800_000, 3))),
            ("yyyy-MM-dd", "2024-1-1xx", Some((1_704_067_200_000, 8))),
            (
                "yyyy-MM-dd",
                "-2024-01-01",
                Some((-126_039_974_400_000, 11)),
            ),
            ("yyyy-MM-dd", "+2024-01-01", None),
            ("yyyy-MM-dd", "2024-13-45", Some((1_739_491_200_000, 10))),
            ("yyyyMMdd", "20240101", Some((1_704_067_200_000, 8))),
            ("yyyyMMdd", "2024011", Some((1_704_067_200_000, 7))),
            (
                "yyyyMMddHHmm",
                "202401011230",
                Some((1_704_112_200_000, 12)),
            ),
            ("yy-MM-dd", "145-01-01", Some((-57_591_475_200_000, 9))),
            ("yy-MM-dd", "5-01-01", Some((-62_009_539_200_000, 7))),
            ("HH:mm:ss.SSS", "99:99:99.999", Some((362_439_999, 12))),
            ("hh:mm a", "12:30 AM", Some((1_800_000, 8))),
            ("hh:mm a", "12:30 pm", Some((45_000_000, 8))),
            ("hh:mm", "12:30", Some((1_800_000, 5))),
            ("HH:mm a", "10:30 PM", Some((37_800_000, 8))),
            (
                "EEE, dd MMM yyyy",
                "Tue, 05 mar 2024",
                Some((1_709_596_800_000, 16)),
            ),
            (
                "EEE, dd MMM yyyy",
                "Tuesday, 05 March 2024",
                Some((1_709_596_800_000, 22)),
            ),
            ("EEE", "Mon", Some((345_600_000, 3))),
            ("D yyyy", "60 2024", Some((1_709_164_800_000, 7))),
            ("yyyy D", "2024 60", Some((1_709_164_800_000, 7))),
            (
                "yyyy-MM-dd HH:mm:ss Z",
                "2024-01-01 10:00:00 +0130",
                Some((1_704_097_800_000, 25)),
            ),
            (
                "yyyy-MM-dd HH:mm:ss Z",
                "2024-01-01 10:00:00 GMT-01:30",
                Some((1_704_108_600_000, 29)),
            ),
            (
                "yyyy-MM-dd HH:mm:ss z",
                "2024-01-01 10:00:00 UTC",
                Some((1_704_103_200_000, 23)),
            ),
            (
                "yyyy-MM-dd HH:mm:ss X",
                "2024-01-01 10:00:00 -05",
                Some((1_704_121_200_000, 23)),
            ),
            (
                "yyyy-MM-dd HH:mm:ss XXX",
                "2024-01-01 10:00:00 +05:30",
                Some((1_704_083_400_000, 26)),
            ),
            (
                "yyyy-MM-dd HH:mm:ss XX",
                "2024-01-01 10:00:00 Z",
                Some((1_704_103_200_000, 21)),
            ),
            (
                "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
                "2024-01-01T10:20:30.123Z",
                Some((1_704_104_430_123, 24)),
            ),
            ("yyyy-MM-dd", "1582-10-10", Some((-12_218_860_800_000, 10))),
            ("yyyy-MM-dd", "1582-10-04", Some((-12_219_379_200_000, 10))),
            ("G yyyy", "BC 0001", Some((-62_167_392_000_000, 7))),
            ("yyyy", "0000", Some((-62_167_392_000_000, 4))),
            ("yyyy", "-0001", Some((-62_198_928_000_000, 5))),
            ("MM/dd/yyyy", "2/30/2024", Some((1_709_251_200_000, 9))),
            ("yyyy-MM-dd", "2024-01", None),
            ("kk:mm", "24:00", Some((0, 5))),
            ("KK:mm a", "11:00 PM", Some((82_800_000, 8))),
            (
                "yyyy-MM-dd HH",
                "2024-01-01 -5",
                Some((1_704_049_200_000, 13)),
            ),
            ("ss", "99999999999", Some((1_215_752_191_000, 11))),
            ("SSS", "5", Some((5, 1))),
            ("w yyyy", "10 2024", Some((1_709_424_000_000, 7))),
            ("MMM yyyy", "SEPT 2024", None),
            ("u yyyy", "3 2024", Some((1_704_240_000_000, 6))),
            (
                "F E yyyy MM",
                "2 Tue 2024 03",
                Some((1_710_201_600_000, 13)),
            ),
            ("yyyy", "12.5", Some((-61_788_700_800_000, 2))),
            ("yyyy", "1E", Some((-62_135_769_600_000, 1))),
            ("yyyy", "E3", None),
            ("yyyy", "--5", None),
            ("yyyy", "2E-3", Some((-62_167_392_000_000, 4))),
            ("yyyy", "2E+3", Some((-62_104_233_600_000, 1))),
            ("HH", "1E1", Some((36_000_000, 3))),
            ("yyyy-MM", "2024-1E1", Some((1_727_740_800_000, 8))),
            ("MMdd", "1231", Some((31_449_600_000, 4))),
            ("MMdd", "1E12", None),
            ("yyyy", " 2024", Some((1_704_067_200_000, 5))),
            ("EEE", " Mon", None),
            ("yyyy MMM", "2024  Jan", None),
            ("yyyy-MM-dd", "2024-01-01T00", Some((1_704_067_200_000, 10))),
            ("HH:mm", "-1:-5", Some((-3_900_000, 5))),
            ("yyyy HH", "2024 24", Some((1_704_153_600_000, 7))),
            (
                "dd/MM/yyyy HH:mm:ss",
                "31/12/2023 23:59:60",
                Some((1_704_067_200_000, 19)),
            ),
            ("h a", "13 PM", Some((90_000_000, 5))),
            (
                "yyyy-MM-dd a",
                "2024-01-01 PM",
                Some((1_704_110_400_000, 13)),
            ),
            ("ss.SSS", "01.5", Some((1005, 4))),
            (
                "yyyy.MM.dd G",
                "2024.01.01 AD",
                Some((1_704_067_200_000, 13)),
            ),
            (
                "yyyy.MM.dd G",
                "2024.01.01 bc",
                Some((-126_008_352_000_000, 13)),
            ),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(parse(pattern, text), *want, "{pattern} / {text}");
        }
    }

    #[test]
    fn two_digit_years_fall_in_the_window_around_now() {
        let f = JavaDateFormat::new("yy-MM-dd").unwrap();
        let (start, start_year) = (f.century_start, f.century_start_year);
        let (now_y, _, _) = civil_from_days(start.div_euclid(MILLIS_PER_DAY));
        assert_eq!(now_y, start_year);
        // A two-digit year one above the window's start year is in the window's century.
        let yy = (start_year + 1) % 100;
        let millis = f.parse(&format!("{yy:02}-01-01")).unwrap();
        let (y, _, _) = civil_from_days(millis.div_euclid(MILLIS_PER_DAY));
        assert_eq!(y, start_year + 1);
        // One below lands a century later.
        let yy = (start_year - 1).rem_euclid(100);
        let millis = f.parse(&format!("{yy:02}-01-01")).unwrap();
        let (y, _, _) = civil_from_days(millis.div_euclid(MILLIS_PER_DAY));
        assert_eq!(y, start_year + 99);
    }

    #[test]
    fn format_then_parse_round_trips() {
        let f = JavaDateFormat::new("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").unwrap();
        for millis in [
            0,
            1_704_104_430_123,
            -1,
            951_782_400_000,
            253_402_300_799_999,
        ] {
            assert_eq!(f.parse(&f.format(millis)), Some(millis));
        }
        let julian = JavaDateFormat::new("G yyyy-MM-dd HH:mm:ss.SSS").unwrap();
        for millis in [
            -62_135_769_600_001,
            -12_219_292_800_001,
            -99_999_999_999_999,
        ] {
            assert_eq!(julian.parse(&julian.format(millis)), Some(millis));
        }
    }
}
