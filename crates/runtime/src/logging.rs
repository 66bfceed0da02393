//! Log levels changeable at runtime (Connect's `Loggers`, KIP-495 `/admin/loggers`): a
//! registry of namespaces with their level and the time it was last set, applied to the
//! process's `tracing` filter through a hook the binary installs.
//!
//! Namespaces are Connect's logger names. Those naming Tributary's own modules
//! (`tributary_runtime.worker`, or with `::`) reach the filter as `tracing` targets; the others
//! (Java package and class names, `io.debezium…`) and root also go to the listener
//! [`on_java_level`] installs: the worker's JVM sets them on the hosted plugins' log4j2 loggers,
//! whose events reach this process's log as `tracing` events of target `java` (the filter lets
//! them through down to the most verbose of those levels, so log4j2 decides per logger).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// The root logger's name.
pub const ROOT: &str = "root";

/// A level and when it was last set (ms since the epoch; `None` if never changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggerLevel {
    pub level: String,
    pub last_modified: Option<i64>,
}

type Hook = Box<dyn Fn(&str) + Send + Sync>;
type JavaHook = Box<dyn Fn(&str, &str) + Send + Sync>;

struct Registry {
    levels: BTreeMap<String, LoggerLevel>,
    hook: Option<Hook>,
    java: Option<JavaHook>,
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut levels = BTreeMap::new();
        levels.insert(
            ROOT.to_string(),
            LoggerLevel {
                level: "INFO".into(),
                last_modified: None,
            },
        );
        Mutex::new(Registry {
            levels,
            hook: None,
            java: None,
        })
    })
}

/// Installs the hook that applies a `tracing` filter directive string (e.g.
/// `info,tributary_runtime::worker=debug`), and records the root level in force.
pub fn install(root_level: &str, hook: impl Fn(&str) + Send + Sync + 'static) {
    let mut r = registry().lock().unwrap();
    r.levels.insert(
        ROOT.to_string(),
        LoggerLevel {
            level: root_level.to_ascii_uppercase(),
            last_modified: None,
        },
    );
    r.hook = Some(Box::new(hook));
}

/// Whether a logger name is one of Tributary's own modules (a `tracing` target), not a Java
/// logger.
fn is_tributary(name: &str) -> bool {
    name.starts_with("tributary")
}

/// Installs the listener that sets Java loggers' levels (`(logger, LEVEL)`, `root` included,
/// Connect's level names), and hands it every such level set so far, root first. Called once
/// the worker knows it can host Java plugins; the listener must not block (it runs under this
/// registry's lock, from REST handlers too).
pub fn on_java_level(hook: impl Fn(&str, &str) + Send + Sync + 'static) {
    let mut r = registry().lock().unwrap();
    hook(ROOT, &r.levels[ROOT].level);
    for (name, l) in &r.levels {
        if name != ROOT && !is_tributary(name) {
            hook(name, &l.level);
        }
    }
    r.java = Some(Box::new(hook));
}

/// Normalises a level name; `None` for an unknown one. Java's FATAL maps to ERROR.
pub fn parse_level(level: &str) -> Option<&'static str> {
    Some(match level.to_ascii_uppercase().as_str() {
        "TRACE" => "TRACE",
        "DEBUG" => "DEBUG",
        "INFO" => "INFO",
        "WARN" => "WARN",
        "ERROR" => "ERROR",
        "FATAL" => "FATAL",
        "OFF" => "OFF",
        _ => return None,
    })
}

fn tracing_level(level: &str) -> &'static str {
    match level {
        "TRACE" => "trace",
        "DEBUG" => "debug",
        "INFO" => "info",
        "WARN" => "warn",
        "ERROR" | "FATAL" => "error",
        _ => "off",
    }
}

/// How much a level lets through, as `tracing` orders it (OFF least, TRACE most).
fn verbosity(level: &str) -> tracing::level_filters::LevelFilter {
    tracing_level(level)
        .parse()
        .unwrap_or(tracing::level_filters::LevelFilter::OFF)
}

fn directives(levels: &BTreeMap<String, LoggerLevel>) -> String {
    let mut out = vec![tracing_level(&levels[ROOT].level).to_string()];
    // Java plugins' events (target `java`) pass down to the most verbose Java logger level;
    // log4j2, which has the levels per logger, has already filtered them.
    let java = levels
        .iter()
        .filter(|(name, _)| !is_tributary(name))
        .map(|(_, l)| l.level.as_str())
        .max_by_key(|l| verbosity(l))
        .unwrap_or("INFO");
    if verbosity(java) > verbosity(&levels[ROOT].level) {
        out.push(format!("java={}", tracing_level(java)));
    }
    for (name, l) in levels {
        if name == ROOT || !is_tributary(name) {
            continue;
        }
        out.push(format!(
            "{}={}",
            name.replace('.', "::"),
            tracing_level(&l.level)
        ));
    }
    // librdkafka's own chatter stays at warn unless asked for.
    out.push("librdkafka=warn".into());
    out.join(",")
}

/// Every logger with an explicitly set level, plus root.
pub fn all() -> BTreeMap<String, LoggerLevel> {
    registry().lock().unwrap().levels.clone()
}

/// The level of one logger: its own, or the closest ancestor's (root at the top). `None` for a
/// logger that does not exist, as Connect answers 404 for a logger nothing has created: a
/// logger exists when it is root, had its level set, or names one of Tributary's own modules
/// (`tributary…`, with `.` or `::`).
pub fn level(name: &str) -> Option<LoggerLevel> {
    let r = registry().lock().unwrap();
    if let Some(l) = r.levels.get(name) {
        return Some(l.clone());
    }
    if !is_tributary(name) {
        return None;
    }
    let mut ns = name;
    while let Some((parent, _)) = ns.rsplit_once('.') {
        if let Some(l) = r.levels.get(parent) {
            return Some(LoggerLevel {
                level: l.level.clone(),
                last_modified: None,
            });
        }
        ns = parent;
    }
    r.levels.get(ROOT).map(|l| LoggerLevel {
        level: l.level.clone(),
        last_modified: None,
    })
}

/// Sets the level of `namespace` and every known logger below it; returns the names changed,
/// sorted. `level` must already be valid ([`parse_level`]).
pub fn set_level(namespace: &str, level: &str, now_ms: i64) -> Vec<String> {
    let mut r = registry().lock().unwrap();
    let mut changed: Vec<String> = r
        .levels
        .keys()
        .filter(|k| {
            namespace == ROOT || k.as_str() == namespace || k.starts_with(&format!("{namespace}."))
        })
        .cloned()
        .collect();
    if !changed.iter().any(|c| c == namespace) {
        changed.push(namespace.to_string());
    }
    for name in &changed {
        r.levels.insert(
            name.clone(),
            LoggerLevel {
                level: level.to_string(),
                last_modified: Some(now_ms),
            },
        );
    }
    let d = directives(&r.levels);
    if let Some(h) = &r.hook {
        h(&d);
    }
    if let Some(java) = &r.java {
        for name in changed.iter().filter(|n| !is_tributary(n)) {
            java(name, level);
        }
    }
    changed.sort();
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_logger_levels_reach_the_java_listener_and_let_java_events_through() {
        set_level("org.example.before", "ERROR", 1);
        let seen = std::sync::Arc::new(Mutex::new(Vec::<(String, String)>::new()));
        let sink = seen.clone();
        on_java_level(move |logger, level| {
            sink.lock()
                .unwrap()
                .push((logger.to_string(), level.to_string()))
        });
        // Root and the levels set before the listener came, then each change as it is made;
        // Tributary's own modules are not Java loggers.
        set_level("io.debezium", "DEBUG", 2);
        set_level("tributary_runtime.herder", "DEBUG", 3);
        let seen = seen.lock().unwrap().clone();
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(seen[0].0, ROOT);
        assert!(
            seen.contains(&pair("org.example.before", "ERROR")),
            "{seen:?}"
        );
        assert!(seen.contains(&pair("io.debezium", "DEBUG")), "{seen:?}");
        assert!(
            !seen.iter().any(|(l, _)| l.starts_with("tributary")),
            "{seen:?}"
        );
        // Java events pass the filter down to DEBUG, the most verbose Java level.
        let d = directives(&all());
        assert!(d.contains("java=debug"), "{d}");
    }

    #[test]
    fn levels_apply_to_descendants_and_build_directives() {
        let changed = set_level("tributary_runtime.worker", "DEBUG", 1);
        assert_eq!(changed, vec!["tributary_runtime.worker".to_string()]);
        assert_eq!(
            level("tributary_runtime.worker.source_task").unwrap().level,
            "DEBUG"
        );
        let d = directives(&all());
        assert!(d.contains("tributary_runtime::worker=debug"), "{d}");
        assert_eq!(parse_level("fatal"), Some("FATAL"));
        assert_eq!(parse_level("LOUD"), None);
        // A logger nothing created does not exist (Connect's 404), until its level is set.
        assert_eq!(level("org.example.never.set"), None);
        let changed = set_level("tributary_runtime", "WARN", 2);
        assert!(
            changed.contains(&"tributary_runtime.worker".to_string())
                && changed.contains(&"tributary_runtime".to_string())
        );
        assert_eq!(
            level("tributary_runtime.worker").unwrap(),
            LoggerLevel {
                level: "WARN".into(),
                last_modified: Some(2)
            }
        );
    }
}
