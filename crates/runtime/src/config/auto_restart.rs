//! Tributary's automatic restart settings (beyond Connect; off by default): a connector with
//! `tributary.restart.enable=true` has its FAILED connector instance and tasks restarted by
//! the worker that runs them, after an exponential backoff, up to an optional number of
//! attempts. The restarts are KIP-745 restart requests (`onlyFailed=true&includeTasks=true`)
//! written to the config topic, so they are durable and run on the owning worker (see
//! `herder/auto_restart.rs`).

use std::time::Duration;

use tributary_api::config::{ConfigDef, ConfigType, ConfigValue, Importance, Parsed, Validator};
use tributary_api::Props;

/// `tributary.restart.enable` (BOOLEAN, default false): restart FAILED instances.
pub const ENABLE: &str = "tributary.restart.enable";
/// `tributary.restart.backoff.initial.ms` (LONG ≥ 0, default 1000): the wait before the first
/// restart after a failure, ms; each further attempt waits twice as long as the one before.
pub const BACKOFF_INITIAL_MS: &str = "tributary.restart.backoff.initial.ms";
/// `tributary.restart.backoff.max.ms` (LONG ≥ 0, default 60000): the longest wait, ms; at
/// least `…backoff.initial.ms`.
pub const BACKOFF_MAX_MS: &str = "tributary.restart.backoff.max.ms";
/// `tributary.restart.max.attempts` (INT ≥ -1, default -1): restarts of one instance before the
/// worker gives up (-1: no limit).
pub const MAX_ATTEMPTS: &str = "tributary.restart.max.attempts";
/// `tributary.restart.stall.ms` (LONG ≥ 1, default unset; issue #36): a task that makes no
/// progress for this long — its `poll` or `put` has not returned, or records it sent have
/// waited this long (plus `offset.flush.interval.ms`) for an offset commit — is failed with
/// the reason in its trace and restarted with the backoff above. Needs
/// `tributary.restart.enable=true`.
pub const STALL_MS: &str = "tributary.restart.stall.ms";
/// The prefix of these keys; any other key under it is refused.
pub const PREFIX: &str = "tributary.restart.";

fn def() -> ConfigDef {
    use ConfigType::*;
    let at_least = |min: f64| {
        Some(Validator::Range {
            min: Some(min),
            max: None,
        })
    };
    ConfigDef::new()
        .define(ENABLE, Boolean, Some(Some("false")), None, Importance::Low, "Restart FAILED connector instances and tasks automatically (Tributary).")
        .define(BACKOFF_INITIAL_MS, Long, Some(Some("1000")), at_least(0.0), Importance::Low, "Wait before the first automatic restart after a failure, ms; doubled for each further attempt.")
        .define(BACKOFF_MAX_MS, Long, Some(Some("60000")), at_least(0.0), Importance::Low, "Longest wait between automatic restarts, ms.")
        .define(MAX_ATTEMPTS, Int, Some(Some("-1")), at_least(-1.0), Importance::Low, "Automatic restarts of one instance before giving up; -1 for no limit.")
        .define(STALL_MS, Long, Some(None), at_least(1.0), Importance::Low, "A task whose poll or put has not returned for this long (ms), or whose sent records have waited this long beyond offset.flush.interval.ms for an offset commit, is failed and restarted automatically (Tributary; needs tributary.restart.enable=true). Unset: stalled tasks are only reported.")
}

/// How a connector's failed instances are restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartPolicy {
    /// The wait before the first restart.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    /// Restarts of one instance before giving up; `None`: no limit.
    pub max_attempts: Option<u32>,
    /// `tributary.restart.stall.ms`: how long a task may make no progress before it is failed
    /// and restarted; `None`: stalled tasks are not restarted.
    pub stall: Option<Duration>,
}

impl RestartPolicy {
    /// The wait before restart number `attempt` (0 for the first): `initial × 2^attempt`,
    /// capped at `max`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.initial
            .checked_mul(factor)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

/// The problems of a connector config's `tributary.restart.*` keys, each as a
/// [`ConfigValue`] naming the key with its errors (`ConfigDef`'s messages); empty when the
/// config sets none of them or they are valid. Unknown keys under the prefix are errors.
pub fn problems(config: &Props) -> Vec<ConfigValue> {
    let mut out = super::prefixed_problems(&def(), config, PREFIX, |key| {
        format!(
            "Unknown configuration {key}: the automatic restart settings are {ENABLE}, {BACKOFF_INITIAL_MS}, {BACKOFF_MAX_MS}, {MAX_ATTEMPTS} and {STALL_MS}"
        )
    });
    if out.is_empty() && config.contains_key(STALL_MS) && !matches!(policy(config), Ok(Some(_))) {
        // Refused rather than ignored: without automatic restarts nothing would restart it.
        let mut v = ConfigValue::new(STALL_MS);
        v.value = config.get(STALL_MS).cloned();
        v.errors.push(format!(
            "{STALL_MS} restarts stalled tasks automatically: it needs {ENABLE}=true"
        ));
        out.push(v);
    }
    if out.is_empty() {
        if let Ok(Some(p)) = policy(config) {
            if p.max < p.initial {
                let mut v = ConfigValue::new(BACKOFF_MAX_MS);
                v.value = config.get(BACKOFF_MAX_MS).cloned();
                v.errors.push(format!(
                    "Invalid value {} for configuration {BACKOFF_MAX_MS}: must be at least {BACKOFF_INITIAL_MS} ({})",
                    p.max.as_millis(),
                    p.initial.as_millis()
                ));
                out.push(v);
            }
        }
    }
    out
}

/// The connector's restart policy: `None` when `tributary.restart.enable` is not true.
/// Errors: the first invalid key's message.
pub fn policy(config: &Props) -> Result<Option<RestartPolicy>, String> {
    if !config.keys().any(|k| k.starts_with(PREFIX)) {
        return Ok(None);
    }
    let parsed = def().parse(config).map_err(|e| e.to_string())?;
    if !matches!(parsed.get(ENABLE), Some(Parsed::Boolean(true))) {
        return Ok(None);
    }
    let long = |k: &str| match parsed.get(k) {
        Some(Parsed::Long(v)) => (*v).max(0) as u64,
        _ => 0,
    };
    let max_attempts = match parsed.get(MAX_ATTEMPTS) {
        Some(Parsed::Int(n)) if *n >= 0 => Some(*n as u32),
        _ => None,
    };
    let stall = match parsed.get(STALL_MS) {
        Some(Parsed::Long(v)) if *v >= 1 => Some(Duration::from_millis(*v as u64)),
        _ => None,
    };
    Ok(Some(RestartPolicy {
        initial: Duration::from_millis(long(BACKOFF_INITIAL_MS)),
        max: Duration::from_millis(long(BACKOFF_MAX_MS)),
        max_attempts,
        stall,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::props;

    #[test]
    fn off_unless_enabled() {
        assert_eq!(policy(&props(&[])), Ok(None));
        assert_eq!(policy(&props(&[(BACKOFF_MAX_MS, "5")])), Ok(None));
        assert!(problems(&props(&[("name", "x")])).is_empty());
    }

    #[test]
    fn defaults_and_backoff_growth() {
        let p = policy(&props(&[(ENABLE, "true")])).unwrap().unwrap();
        assert_eq!(p.initial, Duration::from_secs(1));
        assert_eq!(p.max, Duration::from_secs(60));
        assert_eq!(p.max_attempts, None);
        let waits: Vec<u64> = (0..8).map(|a| p.backoff(a).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(p.backoff(200), Duration::from_secs(60));
        let p = policy(&props(&[(ENABLE, "true"), (MAX_ATTEMPTS, "3")]))
            .unwrap()
            .unwrap();
        assert_eq!(p.max_attempts, Some(3));
    }

    #[test]
    fn bad_values_name_the_key() {
        let errors = |pairs: &[(&str, &str)]| -> Vec<(String, Vec<String>)> {
            problems(&props(pairs))
                .into_iter()
                .map(|v| (v.name, v.errors))
                .collect()
        };
        let e = errors(&[(ENABLE, "maybe")]);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].0, ENABLE);
        let e = errors(&[(ENABLE, "true"), (MAX_ATTEMPTS, "-2")]);
        assert_eq!(e[0].0, MAX_ATTEMPTS);
        let e = errors(&[(ENABLE, "true"), ("tributary.restart.backof.max.ms", "1")]);
        assert_eq!(e[0].0, "tributary.restart.backof.max.ms");
        assert!(e[0].1[0].contains("Unknown configuration"), "{e:?}");
        let e = errors(&[
            (ENABLE, "true"),
            (BACKOFF_INITIAL_MS, "5000"),
            (BACKOFF_MAX_MS, "100"),
        ]);
        assert_eq!(e[0].0, BACKOFF_MAX_MS);
    }
}
