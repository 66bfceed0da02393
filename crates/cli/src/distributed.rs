//! `tributary distributed`: a worker of a Connect cluster (Connect's `connect-distributed`):
//! joins the group named by `group.id`, shares connectors and tasks with the other workers
//! (Java or Tributary) through the internal topics, and serves the REST API until
//! SIGINT/SIGTERM, when it stops its work and leaves the group.
//!
//! The signal handlers are installed first: a SIGTERM that arrives while the worker starts
//! (reading its file, creating topics, connecting) ends startup there, and one that arrives
//! while it joins the group is honoured by the herder (see
//! [`DistributedHerder::stop`]), so the worker never starts work it is about to drop.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tributary_runtime::config::worker::WorkerMode;
use tributary_runtime::herder::distributed::DistributedHerder;
use tributary_runtime::herder::Herder;
use tributary_runtime::rest::RestState;

use crate::startup::{prepare, RestServers, ShutdownSignal};

/// How long REST requests still in flight at the end of a stop may take (requests waiting for
/// a rebalance are answered as soon as the stop begins).
const REST_DRAIN: Duration = Duration::from_millis(500);

/// Runs a distributed worker. Errors are configuration or startup problems.
pub async fn run(worker_path: PathBuf) -> Result<(), String> {
    let signal = ShutdownSignal::install();
    let p = tokio::select! {
        p = prepare(WorkerMode::Distributed, &worker_path) => p?,
        _ = signal.wait() => {
            tracing::info!("stopping before the worker started");
            return Ok(());
        }
    };
    tracing::info!(
        worker_id = p.worker_id,
        kafka_cluster_id = p.cluster_id,
        "distributed worker starting"
    );
    let start = DistributedHerder::start(
        p.config,
        p.plugins,
        p.advertised_url.clone(),
        p.worker_id,
        Some(p.cluster_id),
        Vec::new(),
    );
    // Abandoning the start is safe: the worker has not joined the group yet.
    let herder = tokio::select! {
        h = start => h.map_err(|e| format!("{}: {e}", p.source))?,
        _ = signal.wait() => {
            tracing::info!("stopping before the worker started");
            return Ok(());
        }
    };
    let state = RestState::new(herder.clone() as Arc<dyn Herder>, p.advertised_url.clone())
        .secured(&p.rest_security);
    let servers = RestServers::start(p.bound, p.admin_bound, state);
    tracing::info!("REST server listening on {}", p.advertised_url);
    signal.wait().await;
    tracing::info!("stopping");
    herder.stop().await;
    servers.stop_within(Some(REST_DRAIN)).await;
    tracing::info!("stopped");
    // Everything is written and the group left; destroying the herder's Kafka clients one by
    // one would only hold the exit up (by a few hundred ms), and the process ends now.
    std::mem::forget(herder);
    Ok(())
}
