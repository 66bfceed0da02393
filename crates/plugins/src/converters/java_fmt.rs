//! Java's text forms of Connect values, shared by the converters.
//!
//! The number and object printing ([`double_to_string`], [`float_to_string`],
//! [`to_java_string`], [`java_date_to_string`]) lives in [`tributary_api::data::java_fmt`] and is
//! re-exported here. This module adds [`format_date`] / [`format_time`] /
//! [`format_timestamp`]: the ISO-8601 patterns of Connect's `Values` class (`yyyy-MM-dd`,
//! `HH:mm:ss.SSS'Z'`, `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`), in UTC.

pub use tributary_api::data::java_fmt::{
    double_to_string, float_to_string, java_date_to_string, to_java_string, MILLIS_PER_DAY,
};

use tributary_api::data::java_fmt::civil_from_days;
#[cfg(test)]
use tributary_api::data::java_fmt::days_from_civil;

/// `yyyy-MM-dd` of epoch milliseconds, UTC.
pub fn format_date(millis: i64) -> String {
    let (y, m, d) = civil_from_days(millis.div_euclid(MILLIS_PER_DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `HH:mm:ss.SSS'Z'` of epoch milliseconds, UTC.
pub fn format_time(millis: i64) -> String {
    let ms = millis.rem_euclid(MILLIS_PER_DAY);
    format!(
        "{:02}:{:02}:{:02}.{:03}Z",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` of epoch milliseconds, UTC.
pub fn format_timestamp(millis: i64) -> String {
    format!("{}T{}", format_date(millis), format_time(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_in_utc() {
        assert_eq!(format_date(19000 * MILLIS_PER_DAY), "2022-01-08");
        assert_eq!(format_time(3_723_004), "01:02:03.004Z");
        assert_eq!(
            format_timestamp(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(java_date_to_string(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(days_from_civil(2022, 1, 8), 19000);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }
}
