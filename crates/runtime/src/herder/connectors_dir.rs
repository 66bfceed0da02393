//! The leader's reconciliation of `tributary.connectors.dir` (issue #35): while this worker
//! leads its group, the cluster is kept in line with the connector files of the directory —
//! on start (of the leadership), within a second of any file change, and every
//! `tributary.connectors.reconcile.interval.ms` — through the herder's own calls (the same
//! validation as the REST API). The plan is [`crate::declared_connectors::plan`].
//!
//! - A change needed while no file changed since the last pass is drift (a REST edit of a
//!   managed connector): it is reverted, logged at WARN and counted
//!   (`tributary_connectors_drift_total` in `/metrics`, `connectors_dir` in
//!   `/tributary/worker`).
//! - A file that cannot be read, or whose config the herder refuses (validation), leaves its
//!   connector as it runs and is reported (log, live view); while any file cannot be read,
//!   nothing is pruned (it may declare any connector).
//! - With `tributary.connectors.prune` (default true), managed connectors whose file is gone
//!   are deleted; connectors created over REST by others are never touched.
//! - Java workers ignore the setting: in a mixed group only a Tributary leader reconciles.
//!   Every call is idempotent (a PUT of a config, a pause), so a leader change mid-pass
//!   creates nothing twice.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::Herder;
use crate::declared_connectors::{plan, read_paths, Change, DesiredState, RunningConnector};
use crate::herder_error::HerderError;

/// How often the directory is looked at for changes (names, sizes, modification times).
const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// What the reconciliation did, as `/tributary/worker` reports it under `connectors_dir`.
/// Times are epoch milliseconds (0 before the first pass).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConnectorsDirReport {
    /// The directory.
    pub dir: String,
    /// Whether this worker reconciles now (it leads its group).
    pub active: bool,
    /// Passes completed.
    pub passes: u64,
    /// When the last pass ended.
    pub last_pass_ms: u64,
    /// Connectors the files declare (readable files).
    pub declared: usize,
    /// Changes carried out (creates, updates, state changes, deletes).
    pub changes_total: u64,
    /// Changes that reverted drift: a managed connector changed over REST while its file did
    /// not change.
    pub drift_total: u64,
    /// The last drift reverted: `connector: what` lines.
    pub last_drift: Vec<String>,
    /// The problems of the last pass: unreadable files and refused configs, one line each.
    pub errors: Vec<String>,
}

/// Shared between the reconciliation task and the herder's live view.
pub type SharedReport = Arc<Mutex<ConnectorsDirReport>>;

/// The settings of one reconciliation.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `tributary.connectors.dir`.
    pub dir: PathBuf,
    /// `tributary.connectors.reconcile.interval.ms`.
    pub interval: Duration,
    /// `tributary.connectors.prune`.
    pub prune: bool,
}

/// A fingerprint of the directory's connector files (name, size, modification time).
fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let m = e.metadata().ok()?;
                    Some((e.path(), m.len(), m.modified().ok()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The connectors the herder runs, with their stored configs and target states.
fn running(herder: &dyn Herder) -> Result<BTreeMap<String, RunningConnector>, HerderError> {
    let mut out = BTreeMap::new();
    for name in herder.connectors()? {
        let config = match herder.connector_config(&name) {
            Ok(c) => c,
            // Deleted meanwhile.
            Err(HerderError::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        let state = herder
            .connector_status(&name)
            .ok()
            .map(|s| DesiredState::of_status(&s.connector.state));
        out.insert(
            name.clone(),
            RunningConnector {
                name,
                config: config.into_iter().collect(),
                state,
            },
        );
    }
    Ok(out)
}

/// Carries out one change through the herder.
fn carry_out(herder: &dyn Herder, change: &Change) -> Result<(), HerderError> {
    match change {
        Change::Create {
            name,
            config,
            state,
        } => {
            let initial = match state {
                DesiredState::Running => None,
                DesiredState::Paused => Some(crate::worker::TargetState::Paused),
                DesiredState::Stopped => Some(crate::worker::TargetState::Stopped),
            };
            herder
                .put_connector_config(name, config.clone().into_iter().collect(), true, initial)
                .map(|_| ())
        }
        Change::Update { name, config, .. } => herder
            .put_connector_config(name, config.clone().into_iter().collect(), true, None)
            .map(|_| ()),
        Change::SetState { name, to, .. } => match to {
            DesiredState::Running => herder.resume_connector(name),
            DesiredState::Paused => herder.pause_connector(name),
            DesiredState::Stopped => herder.stop_connector(name),
        },
        Change::Delete { name } => match herder.delete_connector(name) {
            Err(HerderError::NotFound(_)) => Ok(()),
            r => r,
        },
    }
}

/// One pass: reads the directory, compares, carries the changes out. `files_changed` says
/// whether the files changed since the last pass (else every change is drift).
pub fn pass(
    herder: &dyn Herder,
    settings: &Settings,
    files_changed: bool,
    report: &SharedReport,
) -> Result<(), HerderError> {
    let declared = read_paths(std::slice::from_ref(&settings.dir));
    let mut errors: Vec<String> = declared.errors.iter().map(|e| e.to_string()).collect();
    let running = running(herder)?;
    let prune = settings.prune && declared.errors.is_empty();
    let steps = plan(&declared.connectors, &running, prune, &BTreeSet::new());
    let mut done = 0u64;
    let mut drift = Vec::new();
    for step in &steps {
        match carry_out(herder, step) {
            Ok(()) => {
                done += 1;
                let line = step.to_string();
                if !files_changed && running.contains_key(step.connector()) {
                    tracing::warn!(
                        connector = step.connector(),
                        dir = %settings.dir.display(),
                        "the connector differed from its file (a change over REST?); reverted: {}",
                        line.replace('\n', "; ")
                    );
                    drift.push(line.replace('\n', "; "));
                } else {
                    tracing::info!(
                        connector = step.connector(),
                        "connectors dir: {}",
                        line.replace('\n', "; ")
                    );
                }
            }
            Err(e) => {
                let file = declared
                    .connectors
                    .get(step.connector())
                    .map(|d| d.file.display().to_string())
                    .unwrap_or_else(|| settings.dir.display().to_string());
                let line = format!("{file}: connector {}: {e}", step.connector());
                tracing::warn!("connectors dir: {line}; the running connector is left as it is");
                errors.push(line);
            }
        }
    }
    for e in &declared.errors {
        tracing::warn!("connectors dir: {e}; left out");
    }
    let mut r = report.lock().unwrap();
    r.passes += 1;
    r.last_pass_ms = u64::try_from(crate::worker::metrics::now_ms()).unwrap_or(0);
    r.declared = declared.connectors.len();
    r.changes_total += done;
    r.drift_total += drift.len() as u64;
    if !drift.is_empty() {
        r.last_drift = drift;
    }
    r.errors = errors;
    Ok(())
}

/// Runs the reconciliation until `stop` holds true or the herder is gone: a pass when this
/// worker becomes leader, within [`WATCH_PERIOD`] of a file change, and every
/// `settings.interval`; nothing while `is_leader` says no.
pub async fn run(
    herder: Weak<dyn Herder>,
    is_leader: impl Fn() -> bool + Send + 'static,
    settings: Settings,
    report: SharedReport,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    report.lock().unwrap().dir = settings.dir.display().to_string();
    tracing::info!(dir = %settings.dir.display(), "the group leader keeps the cluster in line with this directory (tributary.connectors.dir)");
    let mut last_fingerprint = None;
    let mut last_pass: Option<Instant> = None;
    let mut leading = false;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(WATCH_PERIOD) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let leader = is_leader();
        report.lock().unwrap().active = leader;
        if !leader {
            leading = false;
            continue;
        }
        let dir = settings.dir.clone();
        let fp = tokio::task::spawn_blocking(move || fingerprint(&dir))
            .await
            .unwrap_or_default();
        let changed = last_fingerprint.as_ref() != Some(&fp);
        let due = last_pass.is_none_or(|t| t.elapsed() >= settings.interval);
        if leading && !changed && !due {
            continue;
        }
        let Some(h) = herder.upgrade() else {
            return;
        };
        // A worker's first pass is no drift: its files are news to it. A leader that lost
        // leadership for a moment (a rebalance: a connector's config changed, a worker joined)
        // and regained it compares with its own last pass: files changed since are news,
        // anything else differing is drift.
        let files_changed = changed || last_fingerprint.is_none();
        let (s, r) = (settings.clone(), report.clone());
        let outcome =
            tokio::task::spawn_blocking(move || pass(h.as_ref(), &s, files_changed, &r)).await;
        match outcome {
            Ok(Ok(())) => {
                last_fingerprint = Some(fp);
                last_pass = Some(Instant::now());
                leading = true;
            }
            // Not the leader any more, a rebalance, the config topic unreadable: next time.
            Ok(Err(e)) => tracing::info!("connectors dir: pass abandoned, retried: {e}"),
            Err(e) => tracing::error!("connectors dir: pass failed: {e}"),
        }
    }
}
