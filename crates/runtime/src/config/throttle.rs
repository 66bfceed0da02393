//! Tributary's per-task rate limits (issue #36; Connect has none, KIP-731 is a discussion):
//! `tributary.throttle.records.per.second` and `tributary.throttle.bytes.per.second`, connector
//! settings applied to each of its tasks, for sources before the records a `poll` returned are
//! sent and for sinks before `put`. Java workers ignore the keys (they pass them to the
//! connector, which ignores them too), so in a mixed cluster only tasks on Tributary workers
//! are throttled.

use tributary_api::config::{ConfigDef, ConfigType, ConfigValue, Importance, Parsed, Validator};
use tributary_api::Props;

/// `tributary.throttle.records.per.second` (DOUBLE > 0; default unset: no limit).
pub const RECORDS_PER_SECOND: &str = "tributary.throttle.records.per.second";
/// `tributary.throttle.bytes.per.second` (DOUBLE > 0; default unset: no limit): a record's
/// bytes are its serialized key, value and headers (sources) or as consumed (sinks).
pub const BYTES_PER_SECOND: &str = "tributary.throttle.bytes.per.second";
/// The prefix of these keys; any other key under it is refused.
pub const PREFIX: &str = "tributary.throttle.";

fn def() -> ConfigDef {
    let positive = || {
        Some(Validator::Range {
            min: Some(f64::MIN_POSITIVE),
            max: None,
        })
    };
    ConfigDef::new()
        .define(RECORDS_PER_SECOND, ConfigType::Double, Some(None), positive(), Importance::Low, "Records per second each task of the connector may move (Tributary; Java workers ignore it): a source's polled records wait before they are sent, a sink's before put. Unset: no limit.")
        .define(BYTES_PER_SECOND, ConfigType::Double, Some(None), positive(), Importance::Low, "Bytes per second (serialized keys, values and headers) each task of the connector may move (Tributary; Java workers ignore it). Unset: no limit.")
}

/// A task's limits; `None` fields are unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Records per second.
    pub records_per_second: Option<f64>,
    /// Bytes per second.
    pub bytes_per_second: Option<f64>,
}

impl Limits {
    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.records_per_second.is_some() || self.bytes_per_second.is_some()
    }
}

/// The problems of a connector config's `tributary.throttle.*` keys (`ConfigDef`'s messages;
/// unknown keys under the prefix are errors); empty when it sets none or they are valid.
pub fn problems(config: &Props) -> Vec<ConfigValue> {
    super::prefixed_problems(&def(), config, PREFIX, |key| {
        format!(
            "Unknown configuration {key}: the rate limits are {RECORDS_PER_SECOND} and {BYTES_PER_SECOND}"
        )
    })
}

/// The connector's limits. Errors: the first invalid key's message.
pub fn limits(config: &Props) -> Result<Limits, String> {
    if !config.keys().any(|k| k.starts_with(PREFIX)) {
        return Ok(Limits::default());
    }
    if let Some(p) = problems(config).first() {
        return Err(format!("{}: {}", p.name, p.errors.join("; ")));
    }
    let parsed = def().parse(config).map_err(|e| e.to_string())?;
    let rate = |k: &str| match parsed.get(k) {
        Some(Parsed::Double(v)) if *v > 0.0 => Some(*v),
        _ => None,
    };
    Ok(Limits {
        records_per_second: rate(RECORDS_PER_SECOND),
        bytes_per_second: rate(BYTES_PER_SECOND),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    #[test]
    fn limits_are_read_and_bad_values_refused() {
        assert_eq!(limits(&props(&[])).unwrap(), Limits::default());
        let l = limits(&props(&[
            (RECORDS_PER_SECOND, "1000"),
            (BYTES_PER_SECOND, "2.5e6"),
        ]))
        .unwrap();
        assert_eq!(l.records_per_second, Some(1000.0));
        assert_eq!(l.bytes_per_second, Some(2.5e6));
        for bad in ["0", "-1", "fast"] {
            let p = problems(&props(&[(RECORDS_PER_SECOND, bad)]));
            assert_eq!(p.len(), 1, "{bad}");
            assert_eq!(p[0].name, RECORDS_PER_SECOND);
            assert!(limits(&props(&[(RECORDS_PER_SECOND, bad)])).is_err());
        }
        let p = problems(&props(&[("tributary.throttle.record.per.second", "5")]));
        assert!(p[0].errors[0].contains("Unknown configuration"), "{p:?}");
    }
}
