//! `tributary standalone`: reads the worker and connector files, starts the REST server and
//! the connectors, and runs until SIGINT/SIGTERM, then stops everything cleanly (source tasks
//! commit their offsets).

use std::path::PathBuf;
use std::sync::{mpsc, Arc};

use tributary_runtime::config::properties::load_connector_file;
use tributary_runtime::config::worker::WorkerMode;
use tributary_runtime::herder::standalone::StandaloneHerder;
use tributary_runtime::herder::Herder;
use tributary_runtime::rest::RestState;
use tributary_runtime::storage::offset_file::FileOffsetBackingStore;
use tributary_runtime::storage::status::MemoryStatusBackingStore;
use tributary_runtime::worker::{TargetState, Worker};

use crate::startup::{prepare, shutdown_signal, RestServers};

/// Runs the standalone worker. Errors are configuration or startup problems, naming the file
/// and key where there is one.
pub async fn run(worker_path: PathBuf, connector_paths: Vec<PathBuf>) -> Result<(), String> {
    let connector_files = connector_paths
        .iter()
        .map(|p| load_connector_file(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let p = prepare(WorkerMode::Standalone, &worker_path).await?;
    let offsets_file = p
        .config
        .settings()
        .standalone()
        .ok_or("a standalone worker needs a standalone configuration")?
        .offset_storage_file_filename
        .clone();
    let offsets = Arc::new(
        FileOffsetBackingStore::open(&offsets_file)
            .map_err(|e| format!("{}: key 'offset.storage.file.filename': {e}", p.source))?,
    );
    tracing::info!(
        worker_id = p.worker_id,
        kafka_cluster_id = p.cluster_id,
        "standalone worker starting"
    );

    let (reconfigure_tx, reconfigure_rx) = mpsc::channel::<String>();
    let reconfigure_tx = std::sync::Mutex::new(reconfigure_tx);
    let worker = Arc::new(Worker::new(
        p.worker_id.clone(),
        p.config,
        p.plugins,
        offsets,
        Arc::new(MemoryStatusBackingStore::default()),
        Arc::new(move |name| {
            // The herder, which receives these, is gone only when the worker is stopping.
            reconfigure_tx.lock().unwrap().send(name).ok();
        }),
    ));
    // Connector restarts when config provider values expire, through the herder.
    let reload_herder: tributary_runtime::herder::config_reload::HerderSlot = Arc::default();
    worker.set_config_reload_handler(tributary_runtime::herder::config_reload::handler(
        reload_herder.clone(),
    ));
    let herder = StandaloneHerder::new(worker, Some(p.cluster_id), reconfigure_rx);
    let weak: std::sync::Weak<dyn Herder> = Arc::downgrade(&(herder.clone() as Arc<dyn Herder>));
    reload_herder.set(weak).ok();
    let state = RestState::new(herder.clone() as Arc<dyn Herder>, p.advertised_url.clone())
        .secured(&p.rest_security);
    let servers = RestServers::start(p.bound, p.admin_bound, state);
    tracing::info!("REST server listening on {}", p.advertised_url);

    for (file, path) in connector_files.into_iter().zip(&connector_paths) {
        let h = herder.clone();
        let initial =
            file.initial_state
                .as_deref()
                .map(|s| match s.to_ascii_uppercase().as_str() {
                    "PAUSED" => TargetState::Paused,
                    "STOPPED" => TargetState::Stopped,
                    _ => TargetState::Started,
                });
        let name = file.name.clone();
        let r = tokio::task::spawn_blocking(move || {
            h.put_connector_config(&file.name, file.config, false, initial)
        })
        .await
        .map_err(|e| e.to_string())?;
        if let Err(e) = r {
            stop_herder(herder.clone()).await;
            return Err(format!(
                "{}: failed to create connector {name}: {e}",
                path.display()
            ));
        }
        tracing::info!(connector = name, "created connector");
    }

    shutdown_signal().await;
    tracing::info!("stopping");
    stop_herder(herder.clone()).await;
    servers.stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// Stops every connector and task (on a blocking thread: tasks are joined); a panic while
/// stopping is logged, as the worker is ending either way.
async fn stop_herder(herder: Arc<StandaloneHerder>) {
    if let Err(e) = tokio::task::spawn_blocking(move || herder.stop()).await {
        tracing::error!(error = %e, "stopping the connectors and tasks failed");
    }
}
