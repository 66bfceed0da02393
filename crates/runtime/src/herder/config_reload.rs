//! Connector restarts when config-provider values expire (Connect's
//! `WorkerConfigTransformer.scheduleReload` with `Herder.restartConnector(delayMs, name, cb)`):
//! when a connector starts and a provider gave the values of its config a TTL, and its
//! `config.action.reload` is `restart` (the default), the worker hands a [`ConfigReload`] to the
//! handler made here, which restarts the connector (its instance, not its tasks) through the
//! herder once the TTL has passed; a newer reload of the same connector and path replaces a
//! pending one. The restarted connector resolves its config again, and so schedules the next.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::herder::Herder;
use crate::worker::ConfigReload;

/// The herder reloads restart connectors through, filled once the herder exists (the worker is
/// given the handler before: a reload only reads it when it is due).
pub type HerderSlot = Arc<OnceLock<Weak<dyn Herder>>>;

/// The worker's reload handler ([`crate::worker::Worker::set_config_reload_handler`]): each
/// reload waits its delay on the current Tokio runtime, then calls the slot's herder's
/// `restart_connector` on a blocking thread. Outside a runtime, reloads are logged and dropped.
pub fn handler(slot: HerderSlot) -> Arc<dyn Fn(ConfigReload) + Send + Sync> {
    // The newest reload of each connector and path: an older one finds itself replaced when
    // it is due, and does nothing.
    let newest: Arc<Mutex<HashMap<(String, String), u64>>> = Arc::default();
    let count = Arc::new(AtomicU64::new(0));
    let runtime = tokio::runtime::Handle::try_current().ok();
    Arc::new(move |reload: ConfigReload| {
        let Some(runtime) = &runtime else {
            tracing::warn!(
                connector = %reload.connector,
                "no runtime to schedule the restart of connector {} in",
                reload.connector
            );
            return;
        };
        let slot = slot.clone();
        let key = (reload.connector.clone(), reload.path.clone());
        let id = count.fetch_add(1, Ordering::Relaxed);
        newest.lock().unwrap().insert(key.clone(), id);
        let newest = newest.clone();
        runtime.spawn(async move {
            tokio::time::sleep(reload.delay).await;
            {
                // Done with: the restarted connector schedules the next one.
                let mut newest = newest.lock().unwrap();
                if newest.get(&key) != Some(&id) {
                    return;
                }
                newest.remove(&key);
            }
            let Some(herder) = slot.get().and_then(Weak::upgrade) else {
                return;
            };
            let name = reload.connector.clone();
            let restarted =
                tokio::task::spawn_blocking(move || herder.restart_connector(&name)).await;
            match restarted {
                Ok(Ok(())) => tracing::info!(
                    connector = %reload.connector,
                    "restarted connector {} as the values of path '{}' of its config expired",
                    reload.connector,
                    reload.path
                ),
                Ok(Err(e)) => tracing::error!(
                    connector = %reload.connector,
                    "Unexpected error during connector restart: {e}"
                ),
                Err(e) => tracing::error!(
                    connector = %reload.connector,
                    "Unexpected error during connector restart: {e}"
                ),
            }
        });
    })
}
