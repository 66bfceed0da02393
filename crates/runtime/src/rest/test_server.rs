//! For unit tests: the REST API of a standalone worker served on 127.0.0.1, without Kafka (the
//! worker only reaches the broker once a connector runs a task).

use std::collections::HashMap;
use std::sync::{mpsc, Arc};

use crate::config::worker::{WorkerConfig, WorkerMode};
use crate::herder::standalone::StandaloneHerder;
use crate::herder::Herder;
use crate::plugins::Plugins;
use crate::rest::{router, RestState};
use crate::storage::offset_file::FileOffsetBackingStore;
use crate::storage::status::MemoryStatusBackingStore;
use crate::worker::Worker;

/// Serves a fresh standalone worker's API (offsets in `dir`) on a free port of 127.0.0.1 for
/// the rest of the test; returns its base URL.
pub async fn serve(dir: &std::path::Path) -> String {
    serve_with(dir, &[], false).await
}

/// [`serve`] with `extra` worker settings (e.g. config providers); with `run_tasks`, started
/// connectors' task reconfiguration requests reach the herder, so their tasks start too.
pub async fn serve_with(dir: &std::path::Path, extra: &[(&str, &str)], run_tasks: bool) -> String {
    let offsets_file = dir.join("offsets");
    let mut raw: HashMap<String, String> = [
        ("bootstrap.servers", "127.0.0.1:1"),
        (
            "key.converter",
            "org.apache.kafka.connect.storage.StringConverter",
        ),
        (
            "value.converter",
            "org.apache.kafka.connect.storage.StringConverter",
        ),
        (
            "offset.storage.file.filename",
            &offsets_file.display().to_string(),
        ),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    raw.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let config = WorkerConfig::parse(WorkerMode::Standalone, raw, "test").unwrap();
    let offsets = Arc::new(FileOffsetBackingStore::open(&offsets_file).unwrap());
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let worker = Arc::new(Worker::new(
        "127.0.0.1:0".into(),
        config,
        Arc::new(Plugins::new(tributary_plugins::builtin())),
        offsets,
        Arc::new(MemoryStatusBackingStore::default()),
        Arc::new(move |name| {
            if run_tasks {
                // The herder is gone only once the test ends.
                tx.lock().unwrap().send(name).ok();
            }
        }),
    ));
    let herder = StandaloneHerder::new(worker, None, rx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let state = RestState::new(herder as Arc<dyn Herder>, url.clone());
    tokio::spawn(async move { axum::serve(listener, router(state)).await });
    url
}

/// Sends `method path` with a JSON body (when given); the status and the parsed body (`null`
/// when it is not JSON).
pub async fn send(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, serde_json::Value) {
    let mut req = reqwest::Client::new().request(method.parse().unwrap(), format!("{url}{path}"));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(serde_json::Value::Null))
}

/// Polls `cond` every 20 ms until it holds, or panics naming `what` after 30 s.
pub async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
