//! `tributary distributed`: a worker of a Connect cluster (Connect's `connect-distributed`):
//! joins the group named by `group.id`, shares connectors and tasks with the other workers
//! (Java or Tributary) through the internal topics, and serves the REST API until
//! SIGINT/SIGTERM, when it stops its work and leaves the group.

use std::path::PathBuf;
use std::sync::Arc;

use tributary_runtime::config::worker::WorkerMode;
use tributary_runtime::herder::distributed::DistributedHerder;
use tributary_runtime::herder::Herder;
use tributary_runtime::rest::RestState;

use crate::startup::{prepare, shutdown_signal, RestServers};

/// Runs a distributed worker. Errors are configuration or startup problems.
pub async fn run(worker_path: PathBuf) -> Result<(), String> {
    let p = prepare(WorkerMode::Distributed, &worker_path).await?;
    tracing::info!(
        worker_id = p.worker_id,
        kafka_cluster_id = p.cluster_id,
        "distributed worker starting"
    );
    let herder = DistributedHerder::start(
        p.config,
        p.plugins,
        p.advertised_url.clone(),
        p.worker_id,
        Some(p.cluster_id),
    )
    .await
    .map_err(|e| format!("{}: {e}", p.source))?;
    let state = RestState::new(herder.clone() as Arc<dyn Herder>, p.advertised_url.clone())
        .secured(&p.rest_security);
    let servers = RestServers::start(p.bound, p.admin_bound, state);
    tracing::info!("REST server listening on {}", p.advertised_url);
    shutdown_signal().await;
    tracing::info!("stopping");
    herder.stop().await;
    servers.stop().await;
    tracing::info!("stopped");
    Ok(())
}
