//! `tributary standalone`: reads the worker and connector files, starts the REST server and
//! the connectors, and runs until SIGINT/SIGTERM, then stops everything cleanly (source tasks
//! commit their offsets).

use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use tributary_runtime::config::clients;
use tributary_runtime::config::properties::{load_connector_file, load_properties};
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};
use tributary_runtime::herder::standalone::StandaloneHerder;
use tributary_runtime::herder::Herder;
use tributary_runtime::plugins::Plugins;
use tributary_runtime::rest::{self, RestState};
use tributary_runtime::storage::offset_file::FileOffsetBackingStore;
use tributary_runtime::storage::status::MemoryStatusBackingStore;
use tributary_runtime::worker::{TargetState, Worker};

/// Finds the Kafka cluster id; failing means Kafka is unreachable (Connect fails startup too).
fn kafka_cluster_id(config: &WorkerConfig) -> Result<String, String> {
    use rdkafka::producer::{BaseProducer, Producer};
    let producer: BaseProducer = clients::admin_config(config)
        .create()
        .map_err(|e| format!("cannot create a Kafka client: {e}"))?;
    producer
        .client()
        .fetch_cluster_id(Duration::from_secs(30))
        .ok_or_else(|| {
            format!(
                "could not reach Kafka at {} within 30 s",
                config.bootstrap_servers()
            )
        })
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {},
        _ = term.recv() => {},
    }
}

/// Runs the standalone worker. Errors are configuration or startup problems, naming the file
/// and key where there is one.
pub async fn run(worker_path: PathBuf, connector_paths: Vec<PathBuf>) -> Result<(), String> {
    let source = worker_path.display().to_string();
    let raw = load_properties(&worker_path).map_err(|e| e.to_string())?;
    let config =
        WorkerConfig::parse(WorkerMode::Standalone, raw, &source).map_err(|e| e.to_string())?;
    let connector_files = connector_paths
        .iter()
        .map(|p| load_connector_file(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let plugins = Arc::new(Plugins::builtin());
    for key in ["key.converter", "value.converter"] {
        let class = config.string(key).unwrap_or_default();
        plugins
            .converter_plugin(&class)
            .map_err(|e| format!("{source}: key '{key}': {e}"))?;
    }
    if let Some(class) = config.string("header.converter") {
        plugins
            .header_converter_plugin(&class)
            .map_err(|e| format!("{source}: key 'header.converter': {e}"))?;
    }
    let offsets_file = PathBuf::from(
        config
            .string("offset.storage.file.filename")
            .unwrap_or_default(),
    );
    let offsets = Arc::new(
        FileOffsetBackingStore::open(&offsets_file)
            .map_err(|e| format!("{source}: key 'offset.storage.file.filename': {e}"))?,
    );

    let listener = config
        .listeners()
        .map_err(|e| format!("{source}: {e}"))?
        .remove(0);
    let bound = rest::bind(&listener).await.map_err(|e| {
        format!(
            "{source}: key 'listeners': cannot bind {}:{}: {e}",
            listener.host, listener.port
        )
    })?;
    let (host, port) = rest::advertised(&config, &listener, bound.local_addr);
    let worker_id = format!("{host}:{port}");
    let advertised_url = format!("{}://{host}:{port}", listener.protocol);

    let cfg_for_id = config.clone();
    let cluster_id = tokio::task::spawn_blocking(move || kafka_cluster_id(&cfg_for_id))
        .await
        .map_err(|e| e.to_string())??;
    tracing::info!(
        worker_id,
        kafka_cluster_id = cluster_id,
        "standalone worker starting"
    );

    let (reconfigure_tx, reconfigure_rx) = mpsc::channel::<String>();
    let reconfigure_tx = std::sync::Mutex::new(reconfigure_tx);
    let worker = Arc::new(Worker::new(
        worker_id.clone(),
        config,
        plugins,
        offsets,
        Arc::new(MemoryStatusBackingStore::default()),
        Arc::new(move |name| {
            let _ = reconfigure_tx.lock().unwrap().send(name);
        }),
    ));
    let herder = StandaloneHerder::new(worker, Some(cluster_id), reconfigure_rx);
    let state = RestState {
        herder: herder.clone() as Arc<dyn Herder>,
        advertised_url: Arc::new(advertised_url.clone()),
    };

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(rest::serve(bound, state, async move {
        let _ = stop_rx.await;
    }));
    tracing::info!("REST server listening on {advertised_url}");

    for file in connector_files {
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
            let h = herder.clone();
            let _ = tokio::task::spawn_blocking(move || h.stop()).await;
            return Err(format!("failed to create connector {name}: {e}"));
        }
        tracing::info!(connector = name, "created connector");
    }

    shutdown_signal().await;
    tracing::info!("stopping");
    let h = herder.clone();
    let _ = tokio::task::spawn_blocking(move || h.stop()).await;
    let _ = stop_tx.send(());
    let _ = server.await;
    tracing::info!("stopped");
    Ok(())
}
