//! `tributary apply` (issue #35): makes a Connect cluster (Tributary or Java) run the
//! connectors declared in files, over the REST API only.
//!
//! For each declared connector: created when missing (`PUT /connectors/{c}/config`, or
//! `POST /connectors` with KIP-980's `initial_state` when it is to start PAUSED or STOPPED),
//! its whole config `PUT` when a key differs (an identical config is never sent, so nothing
//! restarts), then paused, resumed or stopped when its state differs. With `--prune`, managed
//! connectors (`tributary.managed=true`, see `declared_connectors`) that no file declares are deleted; connectors created over
//! REST by others are never touched. `--dry-run` prints the same plan and changes nothing.
//!
//! Exit codes: 0 when the cluster matched (or was made to match), 2 with `--dry-run` when it
//! differs (drift), 1 on an error (an unreadable file, a refused call, no worker answering).
//! A file that cannot be read is reported and its connector, whatever it is, left alone; with
//! such a file, `--prune` deletes nothing (the broken file may declare any connector).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};
use tributary_runtime::declared_connectors::{
    plan, read_paths, Change, DesiredState, RunningConnector,
};

use crate::connect_client::{segment, ConnectClient};

/// The options of `tributary apply`.
#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// A worker's REST URL (repeatable: each is tried in turn when one does not answer).
    #[arg(long = "url", default_value = "http://localhost:8083")]
    pub urls: Vec<String>,
    /// Basic auth as `name:password` (else a URL's user info).
    #[arg(long)]
    pub user: Option<String>,
    /// PEM file of the CA certificates to trust for `https://` URLs.
    #[arg(long)]
    pub cacert: Option<PathBuf>,
    /// Delete the managed connectors that no file declares.
    #[arg(long)]
    pub prune: bool,
    /// Print what would change and change nothing; exit 2 when something would.
    #[arg(long)]
    pub dry_run: bool,
    /// Connector files (`.properties`, `.json`) or directories of them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// Reads the connectors a cluster runs with their configs and states: the names from `GET
/// /connectors`, configs and states from `GET /connectors?expand=info&expand=status` (which
/// Tributary and Java both answer), and for a connector the expansion leaves out (both omit one
/// whose status is not written yet, e.g. one created a moment ago) its config from `GET
/// /connectors/{c}/config`, its state unknown.
pub async fn running_connectors(
    client: &ConnectClient,
) -> Result<BTreeMap<String, RunningConnector>, String> {
    let names = client
        .get("/connectors")
        .await
        .map_err(|e| format!("GET /connectors: {e}"))?;
    let names: Vec<String> = names
        .as_array()
        .ok_or_else(|| format!("GET /connectors: unexpected answer {names}"))?
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    let all = client
        .get("/connectors?expand=info&expand=status")
        .await
        .map_err(|e| format!("GET /connectors: {e}"))?;
    let obj = all
        .as_object()
        .ok_or_else(|| format!("GET /connectors?expand=…: unexpected answer {all}"))?;
    let strings = |v: &serde_json::Value| -> BTreeMap<String, String> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = BTreeMap::new();
    for name in names {
        let (config, state) = match obj.get(&name) {
            Some(v) => (
                strings(&v["info"]["config"]),
                v["status"]["connector"]["state"]
                    .as_str()
                    .map(DesiredState::of_status),
            ),
            None => {
                let path = format!("/connectors/{}/config", segment(&name));
                match client.get(&path).await {
                    Ok(config) => (strings(&config), None),
                    // Deleted meanwhile.
                    Err(e) if e.status == 404 => continue,
                    Err(e) => return Err(format!("GET {path}: {e}")),
                }
            }
        };
        out.insert(
            name.clone(),
            RunningConnector {
                name,
                config,
                state,
            },
        );
    }
    Ok(out)
}

/// Carries out one change over REST.
pub async fn carry_out(client: &ConnectClient, change: &Change) -> Result<(), String> {
    let c = segment(change.connector());
    let r = match change {
        Change::Create {
            name,
            config,
            state: DesiredState::Running,
        } => {
            client
                .call(
                    reqwest::Method::PUT,
                    &format!("/connectors/{}/config", segment(name)),
                    Some(&json!(config)),
                )
                .await
        }
        Change::Create {
            name,
            config,
            state,
        } => {
            let body = json!({"name": name, "config": config, "initial_state": state.as_str()});
            client
                .call(reqwest::Method::POST, "/connectors", Some(&body))
                .await
        }
        Change::Update { config, .. } => {
            client
                .call(
                    reqwest::Method::PUT,
                    &format!("/connectors/{c}/config"),
                    Some(&json!(config)),
                )
                .await
        }
        Change::SetState { to, .. } => {
            let verb = match to {
                DesiredState::Running => "resume",
                DesiredState::Paused => "pause",
                DesiredState::Stopped => "stop",
            };
            client
                .call(
                    reqwest::Method::PUT,
                    &format!("/connectors/{c}/{verb}"),
                    None,
                )
                .await
        }
        Change::Delete { .. } => {
            client
                .call(reqwest::Method::DELETE, &format!("/connectors/{c}"), None)
                .await
        }
    };
    r.map(|_: Value| ()).map_err(|e| e.to_string())
}

/// How long `apply` waits for the worker it asked to show what it wrote.
const READ_BACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until the worker shows each created or updated connector with the config written (a
/// worker answers a write once it is in the config topic, and may serve reads from its own
/// view a moment later), so that a run right after this one, or any other read, sees them.
/// Past [`READ_BACK_TIMEOUT`] it says which it did not see, and goes on.
async fn read_back(client: &ConnectClient, written: &[&Change]) {
    let deadline = tokio::time::Instant::now() + READ_BACK_TIMEOUT;
    for change in written {
        let (name, config) = match change {
            Change::Create { name, config, .. } => (name, config),
            Change::Update { name, config, .. } => (name, config),
            _ => continue,
        };
        let path = format!("/connectors/{}/config", segment(name));
        loop {
            let shown = client.get(&path).await.ok().is_some_and(|v| {
                config
                    .iter()
                    .all(|(k, want)| v.get(k).and_then(Value::as_str) == Some(want.as_str()))
            });
            if shown {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                eprintln!(
                    "tributary apply: {name}: written, but not shown yet by the worker after {} s",
                    READ_BACK_TIMEOUT.as_secs()
                );
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// Runs `tributary apply`.
pub async fn run(args: ApplyArgs) -> Result<ExitCode, String> {
    let client = ConnectClient::new(&args.urls, args.user.as_deref(), args.cacert.as_deref())?;
    let declared = read_paths(&args.paths);
    for e in &declared.errors {
        eprintln!("tributary apply: {e} (left out)");
    }
    let broken = !declared.errors.is_empty();
    let running = running_connectors(&client).await?;
    // A broken file may declare any connector: nothing is pruned then.
    let prune = args.prune && !broken;
    if args.prune && broken {
        eprintln!("tributary apply: not pruning: a file could not be read");
    }
    let steps = plan(&declared.connectors, &running, prune, &BTreeSet::new());
    let managed_elsewhere = running
        .values()
        .filter(|r| r.is_managed() && !declared.connectors.contains_key(&r.name))
        .count();
    for s in &steps {
        println!("{s}");
    }
    if args.dry_run {
        println!(
            "{} connector(s) declared, {} change(s){}",
            declared.connectors.len(),
            steps.len(),
            if !args.prune && managed_elsewhere > 0 {
                format!("; {managed_elsewhere} managed connector(s) not declared (--prune deletes them)")
            } else {
                String::new()
            }
        );
        return Ok(if broken {
            ExitCode::from(1)
        } else if steps.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        });
    }
    let mut failed = 0;
    let mut written = Vec::new();
    for s in &steps {
        match carry_out(&client, s).await {
            Ok(()) => written.push(s),
            Err(e) => {
                failed += 1;
                eprintln!("tributary apply: {}: {e}", s.connector());
            }
        }
    }
    read_back(&client, &written).await;
    println!(
        "{} connector(s) declared, {} change(s) applied, {failed} failed",
        declared.connectors.len(),
        steps.len() - failed
    );
    Ok(if failed > 0 || broken {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
