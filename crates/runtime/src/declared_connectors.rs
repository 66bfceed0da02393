//! Connectors declared in files (issue #35, "connectors as code"): reading a directory of
//! connector files, comparing them with what a cluster runs, and the plan of REST calls that
//! makes the cluster match. `tributary apply` and the leader's reconciliation of
//! `tributary.connectors.dir` both use it; this module does no I/O on a cluster.
//!
//! Files are the formats `connect-standalone` reads ([`load_connector_file`]): `.properties`,
//! `{"name","config","initial_state"}` JSON (KIP-980's `initial_state` names the state the
//! connector should be in: `RUNNING`, `PAUSED` or `STOPPED`; the other formats mean `RUNNING`)
//! and flat JSON. Values
//! are compared as written: a `${file:…}` or `${env:…}` reference stays a reference (Connect's
//! `GET /connectors/{c}/config` answers the config as stored, references unresolved).
//!
//! Connectors created or updated from files carry [`MANAGED_KEY`]` = true` in their config (a
//! key Java workers pass to the connector, which ignores it): only those are ever deleted for
//! not being declared, so connectors created over REST by others are left alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::properties::load_connector_file;

/// The config key marking a connector as managed from files; its value is `true`.
pub const MANAGED_KEY: &str = "tributary.managed";

/// The state a file asks for (KIP-980's words for `initial_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DesiredState {
    /// `RUNNING` (the default).
    Running,
    /// `PAUSED`.
    Paused,
    /// `STOPPED` (KIP-875).
    Stopped,
}

impl DesiredState {
    /// Parses `RUNNING`, `PAUSED` or `STOPPED` (case-insensitive).
    pub fn parse(s: &str) -> Option<DesiredState> {
        match s.trim().to_ascii_uppercase().as_str() {
            "RUNNING" => Some(DesiredState::Running),
            "PAUSED" => Some(DesiredState::Paused),
            "STOPPED" => Some(DesiredState::Stopped),
            _ => None,
        }
    }

    /// The state a connector's status (`connector.state` of `GET /connectors/{c}/status`)
    /// shows its target to be: `PAUSED` and `STOPPED` are targets; every other state
    /// (`RUNNING`, `FAILED`, `UNASSIGNED`, `RESTARTING`) belongs to a started connector.
    pub fn of_status(state: &str) -> DesiredState {
        match state {
            "PAUSED" => DesiredState::Paused,
            "STOPPED" => DesiredState::Stopped,
            _ => DesiredState::Running,
        }
    }

    /// `RUNNING`, `PAUSED` or `STOPPED`.
    pub fn as_str(self) -> &'static str {
        match self {
            DesiredState::Running => "RUNNING",
            DesiredState::Paused => "PAUSED",
            DesiredState::Stopped => "STOPPED",
        }
    }
}

impl fmt::Display for DesiredState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connector as a file declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredConnector {
    /// The connector name.
    pub name: String,
    /// Its config as written (with `name`, without [`MANAGED_KEY`]).
    pub config: BTreeMap<String, String>,
    /// The state it should be in.
    pub state: DesiredState,
    /// The file it came from.
    pub file: PathBuf,
}

impl DeclaredConnector {
    /// The config to store: the file's, marked as managed.
    pub fn managed_config(&self) -> BTreeMap<String, String> {
        let mut c = self.config.clone();
        c.insert(MANAGED_KEY.into(), "true".into());
        c
    }
}

/// A connector as the cluster runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningConnector {
    /// The connector name.
    pub name: String,
    /// Its stored config (`GET /connectors/{c}/config`).
    pub config: BTreeMap<String, String>,
    /// The state its target state shows as ([`DesiredState::of_status`]); `None` while its
    /// status is not written yet (a connector created a moment ago): then no state change is
    /// planned for it.
    pub state: Option<DesiredState>,
}

impl RunningConnector {
    /// Whether it carries [`MANAGED_KEY`]` = true`.
    pub fn is_managed(&self) -> bool {
        self.config
            .get(MANAGED_KEY)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

/// One key whose value differs between a file and the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChange {
    /// The key.
    pub key: String,
    /// Its value in the cluster (`None`: absent).
    pub before: Option<String>,
    /// Its value in the file (`None`: absent).
    pub after: Option<String>,
}

/// One step of a [`plan`].
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The cluster lacks the connector: create it (with its state, KIP-980).
    Create {
        /// The connector.
        name: String,
        /// The config to store ([`DeclaredConnector::managed_config`]).
        config: BTreeMap<String, String>,
        /// The state to create it in.
        state: DesiredState,
    },
    /// Its config differs: store the file's (a `PUT` of the whole config).
    Update {
        /// The connector.
        name: String,
        /// The keys that differ, by key.
        changes: Vec<KeyChange>,
        /// The config to store.
        config: BTreeMap<String, String>,
    },
    /// Its state differs: pause, resume or stop it.
    SetState {
        /// The connector.
        name: String,
        /// Its state now.
        from: DesiredState,
        /// The state the file asks for.
        to: DesiredState,
    },
    /// A managed connector no file declares (only with pruning): delete it.
    Delete {
        /// The connector.
        name: String,
    },
}

impl Change {
    /// The connector the change is about.
    pub fn connector(&self) -> &str {
        match self {
            Change::Create { name, .. }
            | Change::Update { name, .. }
            | Change::SetState { name, .. }
            | Change::Delete { name } => name,
        }
    }
}

impl fmt::Display for Change {
    /// One line per change (a line per key for updates), as `tributary apply --dry-run` prints
    /// them: `+ name (created, STATE)`, `~ name: key: before -> after`, `~ name: state: A -> B`,
    /// `- name (deleted)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Option<String>| match v {
            Some(v) => format!("{v:?}"),
            None => "(absent)".to_string(),
        };
        match self {
            Change::Create { name, state, .. } => write!(f, "+ {name} (created, {state})"),
            Change::Update { name, changes, .. } => {
                let lines: Vec<String> = changes
                    .iter()
                    .map(|c| {
                        format!(
                            "~ {name}: {}: {} -> {}",
                            c.key,
                            shown(&c.before),
                            shown(&c.after)
                        )
                    })
                    .collect();
                f.write_str(&lines.join("\n"))
            }
            Change::SetState { name, from, to } => write!(f, "~ {name}: state: {from} -> {to}"),
            Change::Delete { name } => write!(f, "- {name} (deleted)"),
        }
    }
}

/// Why a directory or file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationError {
    /// The file (or directory) at fault.
    pub path: PathBuf,
    /// What is wrong, naming the key where there is one.
    pub message: String,
}

impl fmt::Display for DeclarationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The connector-file loader already names the file.
        if self.message.starts_with(&self.path.display().to_string()) {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path.display(), self.message)
        }
    }
}

/// Whether `path` is a connector file by its name: `.properties` or `.json` (other files of a
/// directory, e.g. a README, are skipped).
pub fn is_connector_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("properties") || e.eq_ignore_ascii_case("json"))
}

/// Reads one connector file. Errors: the loader's (file and key named), an unknown state, the
/// name of [`MANAGED_KEY`] used in the file.
pub fn read_file(path: &Path) -> Result<DeclaredConnector, DeclarationError> {
    let fail = |message: String| DeclarationError {
        path: path.to_path_buf(),
        message,
    };
    let file = load_connector_file(path).map_err(|e| fail(e.0))?;
    let state = match file.initial_state.as_deref() {
        None => DesiredState::Running,
        Some(s) => DesiredState::parse(s).ok_or_else(|| {
            fail(format!(
                "key 'initial_state': {s:?} is not RUNNING, PAUSED or STOPPED"
            ))
        })?,
    };
    let mut config: BTreeMap<String, String> = file.config.into_iter().collect();
    if config.remove(MANAGED_KEY).is_some() {
        return Err(fail(format!(
            "key '{MANAGED_KEY}': set by Tributary on the connectors it manages; remove it from the file"
        )));
    }
    Ok(DeclaredConnector {
        name: file.name,
        config,
        state,
        file: path.to_path_buf(),
    })
}

/// What [`read_paths`] found: the connectors, and the files that could not be read (each
/// left out; a caller that reconciles leaves their connectors as they are).
#[derive(Debug, Default)]
pub struct Declarations {
    /// The connectors declared, by name.
    pub connectors: BTreeMap<String, DeclaredConnector>,
    /// The files that could not be read, and the names they would have declared if known.
    pub errors: Vec<DeclarationError>,
}

/// Reads `paths`: each a connector file, or a directory whose connector files
/// ([`is_connector_file`]) are read in name order (not recursively). A name declared twice is
/// an error of the second file. A path that does not exist is an error.
pub fn read_paths(paths: &[PathBuf]) -> Declarations {
    let mut out = Declarations::default();
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        if p.is_dir() {
            match std::fs::read_dir(p) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|f| f.is_file() && is_connector_file(f))
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => out.errors.push(DeclarationError {
                    path: p.clone(),
                    message: format!("cannot read directory: {e}"),
                }),
            }
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            out.errors.push(DeclarationError {
                path: p.clone(),
                message: "no such file or directory".into(),
            });
        }
    }
    for f in files {
        match read_file(&f) {
            Ok(c) => {
                if let Some(first) = out.connectors.get(&c.name) {
                    out.errors.push(DeclarationError {
                        path: f.clone(),
                        message: format!(
                            "connector {} is declared in {} already",
                            c.name,
                            first.file.display()
                        ),
                    });
                    continue;
                }
                out.connectors.insert(c.name.clone(), c);
            }
            Err(e) => out.errors.push(e),
        }
    }
    out
}

/// The changes that make `running` match `declared`: for each declared connector, a create,
/// or an update of the keys that differ (the managed marker included: a connector created
/// over REST that a file now declares becomes managed) and a state change; with `prune`,
/// deletes of the managed connectors no file declares. Connectors in `keep` (their file could
/// not be read) are neither changed nor deleted. Creates and updates come before state
/// changes and deletes, each in connector-name order.
pub fn plan(
    declared: &BTreeMap<String, DeclaredConnector>,
    running: &BTreeMap<String, RunningConnector>,
    prune: bool,
    keep: &BTreeSet<String>,
) -> Vec<Change> {
    let mut configs = Vec::new();
    let mut states = Vec::new();
    for (name, d) in declared {
        if keep.contains(name) {
            continue;
        }
        let wanted = d.managed_config();
        match running.get(name) {
            None => configs.push(Change::Create {
                name: name.clone(),
                config: wanted,
                state: d.state,
            }),
            Some(r) => {
                let changes = diff(&r.config, &wanted);
                if !changes.is_empty() {
                    configs.push(Change::Update {
                        name: name.clone(),
                        changes,
                        config: wanted,
                    });
                }
                if let Some(from) = r.state.filter(|from| *from != d.state) {
                    states.push(Change::SetState {
                        name: name.clone(),
                        from,
                        to: d.state,
                    });
                }
            }
        }
    }
    let deletes = running
        .values()
        .filter(|r| {
            prune && r.is_managed() && !declared.contains_key(&r.name) && !keep.contains(&r.name)
        })
        .map(|r| Change::Delete {
            name: r.name.clone(),
        });
    configs.into_iter().chain(states).chain(deletes).collect()
}

/// The keys whose values differ between `before` and `after`, in key order.
pub fn diff(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<KeyChange> {
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (b, a) = (before.get(k), after.get(k));
            (b != a).then(|| KeyChange {
                key: k.clone(),
                before: b.cloned(),
                after: a.cloned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn declared(name: &str, extra: &[(&str, &str)], state: DesiredState) -> DeclaredConnector {
        let mut config = map(&[("name", name), ("connector.class", "FileStreamSource")]);
        config.extend(map(extra));
        DeclaredConnector {
            name: name.into(),
            config,
            state,
            file: PathBuf::from(format!("{name}.json")),
        }
    }

    fn running(d: &DeclaredConnector, state: DesiredState) -> RunningConnector {
        RunningConnector {
            name: d.name.clone(),
            config: d.managed_config(),
            state: Some(state),
        }
    }

    fn by_name<T>(items: Vec<(String, T)>) -> BTreeMap<String, T> {
        items.into_iter().collect()
    }

    #[test]
    fn a_cluster_matching_its_files_needs_nothing() {
        let a = declared("a", &[("topic", "t")], DesiredState::Paused);
        let plan = plan(
            &by_name(vec![("a".into(), a.clone())]),
            &by_name(vec![("a".into(), running(&a, DesiredState::Paused))]),
            true,
            &BTreeSet::new(),
        );
        assert!(plan.is_empty(), "{plan:?}");
    }

    #[test]
    fn creates_updates_state_changes_and_prunes_only_managed_connectors() {
        let new = declared("new", &[], DesiredState::Stopped);
        let changed = declared("changed", &[("topic", "after")], DesiredState::Running);
        let mut was = running(&changed, DesiredState::Paused);
        was.config.insert("topic".into(), "before".into());
        was.config.insert("tasks.max".into(), "3".into());
        let gone = declared("gone", &[], DesiredState::Running);
        let foreign = RunningConnector {
            name: "rest-made".into(),
            config: map(&[("name", "rest-made")]),
            state: Some(DesiredState::Running),
        };
        let d = by_name(vec![("new".into(), new), ("changed".into(), changed)]);
        let r = by_name(vec![
            ("changed".into(), was),
            ("gone".into(), running(&gone, DesiredState::Running)),
            ("rest-made".into(), foreign),
        ]);
        let steps = plan(&d, &r, true, &BTreeSet::new());
        let text: Vec<String> = steps.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            text,
            [
                "~ changed: tasks.max: \"3\" -> (absent)\n~ changed: topic: \"before\" -> \"after\"",
                "+ new (created, STOPPED)",
                "~ changed: state: PAUSED -> RUNNING",
                "- gone (deleted)",
            ]
        );
        // Without pruning nothing is deleted; a connector kept for a broken file is untouched.
        let steps = plan(&d, &r, false, &BTreeSet::from(["changed".to_string()]));
        assert_eq!(steps.len(), 1);
        assert!(matches!(&steps[0], Change::Create { name, .. } if name == "new"));
    }

    #[test]
    fn a_connector_made_over_rest_that_a_file_declares_becomes_managed() {
        let d = declared("a", &[], DesiredState::Running);
        let mut r = running(&d, DesiredState::Running);
        r.config.remove(MANAGED_KEY);
        let steps = plan(
            &by_name(vec![("a".into(), d)]),
            &by_name(vec![("a".into(), r)]),
            true,
            &BTreeSet::new(),
        );
        assert_eq!(steps.len(), 1);
        let Change::Update { changes, .. } = &steps[0] else {
            panic!("{steps:?}")
        };
        assert_eq!(changes[0].key, MANAGED_KEY);
    }

    #[test]
    fn references_are_compared_as_written() {
        let d = declared(
            "a",
            &[("password", "${file:/secrets.properties:db.password}")],
            DesiredState::Running,
        );
        let same = running(&d, DesiredState::Running);
        let steps = plan(
            &by_name(vec![("a".into(), d.clone())]),
            &by_name(vec![("a".into(), same.clone())]),
            false,
            &BTreeSet::new(),
        );
        assert!(steps.is_empty());
        let mut resolved = same;
        resolved.config.insert("password".into(), "hunter2".into());
        let steps = plan(
            &by_name(vec![("a".into(), d)]),
            &by_name(vec![("a".into(), resolved)]),
            false,
            &BTreeSet::new(),
        );
        assert_eq!(
            steps.len(),
            1,
            "a resolved value is drift from the reference"
        );
    }

    #[test]
    fn files_are_read_from_a_directory_and_broken_ones_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.json"),
            r#"{"name":"a","config":{"connector.class":"FileStreamSource"},"initial_state":"PAUSED"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.properties"),
            "name=b\nconnector.class=FileStreamSink\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("broken.json"), "{not json").unwrap();
        std::fs::write(
            dir.path().join("twice.properties"),
            "name=a\nconnector.class=X\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("bad-state.json"),
            r#"{"name":"c","config":{},"initial_state":"SLEEPING"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "not a connector").unwrap();
        let found = read_paths(&[dir.path().to_path_buf()]);
        assert_eq!(
            found.connectors.keys().collect::<Vec<_>>(),
            ["a", "b"],
            "{:?}",
            found.errors
        );
        assert_eq!(found.connectors["a"].state, DesiredState::Paused);
        assert_eq!(found.connectors["b"].state, DesiredState::Running);
        let errors: Vec<String> = found.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors
            .iter()
            .any(|e| e.contains("broken.json") && e.contains("malformed JSON")));
        assert!(errors
            .iter()
            .any(|e| e.contains("bad-state.json") && e.contains("initial_state")));
        assert!(errors
            .iter()
            .any(|e| e.contains("twice.properties") && e.contains("declared in")));
        let missing = read_paths(&[dir.path().join("nope")]);
        assert!(missing.errors[0].to_string().contains("no such file"));
    }
}
