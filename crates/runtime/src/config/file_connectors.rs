//! Where Connect's file connectors (`FileStreamSource`, `FileStreamSink`, native or hosted)
//! may read and write (issue #42). A principal with the write role over one of them can make
//! the worker read or write any file its user can: under a REST authorization policy that
//! would make every writer an admin (a FileStreamSink appending `alice admin` to the policy,
//! a FileStreamSource reading the worker file's passwords into a failing transformation's
//! trace). So:
//!
//! - the worker's own files are never theirs: every file or directory a worker setting names
//!   (`*.location`, `*.file`, `*.filename`, `*.dir`, `plugin.path`), the worker file itself, the
//!   config providers' `allowed.paths` (under a policy), the JAAS file of `KAFKA_OPTS` and the
//!   users files it names;
//! - with [`ALLOWED_PATHS_CONFIG`] set, only absolute paths under one of its directories;
//! - under a policy, that setting is required: without it the file connectors are refused.
//!
//! Paths are compared as the file system resolves them: the longest existing part with its
//! symbolic links followed, the rest with `.` and `..` removed. The check runs when a config is
//! validated (create, update) and again when the connector and each task start, on the
//! resolved config (a reference may name another file by then).

use std::path::{Component, Path, PathBuf};

use super::worker::WorkerConfig;

/// `tributary.file.connectors.allowed.paths` (LIST of absolute directories; default empty):
/// where the file connectors may read and write.
pub const ALLOWED_PATHS_CONFIG: &str = "tributary.file.connectors.allowed.paths";

/// Connect's file connector classes.
const FILE_CONNECTORS: [&str; 2] = [
    "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "org.apache.kafka.connect.file.FileStreamSinkConnector",
];

/// The rules of one worker.
#[derive(Debug, Clone, Default)]
pub struct FilePaths {
    /// The worker's own files, with what each is.
    own: Vec<(PathBuf, String)>,
    /// [`ALLOWED_PATHS_CONFIG`], when set.
    allowed: Option<Vec<PathBuf>>,
    /// Whether a REST authorization policy is in force.
    policy: bool,
}

impl FilePaths {
    /// The rules of the worker configured by `config` (reads the JAAS file `KAFKA_OPTS` names).
    pub fn of(config: &WorkerConfig) -> FilePaths {
        let raw = config.raw_map();
        let allowed = raw
            .get(ALLOWED_PATHS_CONFIG)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .collect::<Vec<_>>()
            })
            .filter(|dirs| !dirs.is_empty());
        let policy = raw
            .get(crate::rest::authorization::FILE_SETTING)
            .is_some_and(|v| !v.trim().is_empty());
        FilePaths {
            own: own_files(config, policy),
            allowed,
            policy,
        }
    }

    /// Why connector class `class` (its full name) may not use `file`; `None` when it may, or
    /// when it is not a file connector.
    pub fn refusal(&self, class: &str, file: &str) -> Option<String> {
        if !FILE_CONNECTORS.contains(&class) {
            return None;
        }
        let file = file.trim();
        let path = Path::new(file);
        let invalid = |why: String| {
            Some(format!(
                "Invalid value {file} for configuration file: {why}"
            ))
        };
        if (self.policy || self.allowed.is_some()) && !path.is_absolute() {
            return invalid(format!(
                "it must be an absolute path while {} or {ALLOWED_PATHS_CONFIG} is set",
                crate::rest::authorization::FILE_SETTING
            ));
        }
        let real = resolved(path);
        if let Some((_, what)) = self.own.iter().find(|(p, _)| real.starts_with(resolved(p))) {
            return invalid(format!(
                "it is {what}, which no connector may read or write"
            ));
        }
        match &self.allowed {
            Some(dirs) if !dirs.iter().any(|d| real.starts_with(resolved(d))) => invalid(format!(
                "it lies outside {ALLOWED_PATHS_CONFIG} ({})",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            None if self.policy => invalid(format!(
                "under {}, the file connectors may only use the directories of {ALLOWED_PATHS_CONFIG}, which is not set",
                crate::rest::authorization::FILE_SETTING
            )),
            _ => None,
        }
    }
}

/// `path` as the file system resolves it: its longest existing ancestor with symbolic links
/// followed, then the rest with `.` and `..` removed.
fn resolved(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let parts: Vec<Component> = absolute.components().collect();
    for split in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..split].iter().collect();
        if let Ok(real) = head.canonicalize() {
            let tail: PathBuf = parts[split..].iter().collect();
            return super::providers::normalise(&real.join(tail));
        }
    }
    super::providers::normalise(&absolute)
}

/// The worker's own files: see the module docs. The providers' `allowed.paths` count only under
/// a policy (without one every REST caller may resolve them anyway, and they often share a
/// directory with the data).
fn own_files(config: &WorkerConfig, policy: bool) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for (k, v) in config.raw_map() {
        let named = k.ends_with(".location")
            || k.ends_with(".file")
            || k.ends_with(".filename")
            || k.ends_with(".dir")
            || k == "plugin.path"
            || (policy && k.ends_with(".param.allowed.paths"));
        if !named {
            continue;
        }
        for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            files.push((PathBuf::from(p), format!("the worker's {k}")));
        }
    }
    if let Some(file) = config.file() {
        files.push((file.to_path_buf(), "the worker file".into()));
    }
    let jaas = std::env::var("KAFKA_OPTS").ok().and_then(|opts| {
        opts.split_whitespace()
            .find_map(|o| o.strip_prefix("-Djava.security.auth.login.config="))
            .map(|p| p.trim_matches('"').to_string())
    });
    if let Some(jaas) = jaas {
        if let Ok(text) = std::fs::read_to_string(&jaas) {
            if let Ok(contexts) = tributary_security::jaas::parse_file(&text) {
                for module in contexts.values().flatten() {
                    if let Some(f) = module.options.get("file") {
                        files.push((
                            f.into(),
                            "a credentials file of the worker's JAAS file".into(),
                        ));
                    }
                }
            }
        }
        files.push((jaas.into(), "the worker's JAAS file (KAFKA_OPTS)".into()));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

    fn rules(dir: &Path, allowed: Option<&Path>, policy: bool) -> FilePaths {
        FilePaths {
            own: vec![(
                dir.join("policy.txt"),
                "the worker's tributary.rest.authorization.file".into(),
            )],
            allowed: allowed.map(|a| vec![a.to_path_buf()]),
            policy,
        }
    }

    #[test]
    fn own_files_outside_paths_and_tricks_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path().canonicalize().unwrap();
        std::fs::write(d.join("policy.txt"), "x").unwrap();
        std::fs::create_dir_all(d.join("out")).unwrap();
        std::os::unix::fs::symlink(d.join("policy.txt"), d.join("out").join("link")).unwrap();
        let r = rules(&d, Some(&d.join("out")), true);
        let s = |p: PathBuf| p.display().to_string();
        assert_eq!(r.refusal(SINK, &s(d.join("out/new.txt"))), None);
        assert_eq!(
            r.refusal("com.example.Other", &s(d.join("policy.txt"))),
            None
        );
        for bad in [
            d.join("policy.txt"),
            d.join("out/../policy.txt"),
            d.join("missing/../policy.txt"),
            d.join("out/link"),
            d.join("out//..//policy.txt"),
        ] {
            let why = r.refusal(SINK, &s(bad.clone())).unwrap_or_default();
            assert!(
                why.contains("which no connector may"),
                "{}: {why}",
                bad.display()
            );
        }
        let outside = r.refusal(SINK, &s(d.join("elsewhere.txt"))).unwrap();
        assert!(outside.contains("lies outside"), "{outside}");
        let relative = r.refusal(SINK, "worker.properties").unwrap();
        assert!(relative.contains("absolute"), "{relative}");
        // Under a policy without the setting: refused; without either: only the own files.
        let unset = rules(&d, None, true)
            .refusal(SINK, &s(d.join("out/x")))
            .unwrap();
        assert!(unset.contains("which is not set"), "{unset}");
        let open = rules(&d, None, false);
        assert_eq!(open.refusal(SINK, &s(d.join("out/x"))), None);
        assert!(open.refusal(SINK, &s(d.join("policy.txt"))).is_some());
    }
}
