//! `tributary mirror-maker mm2.properties [--clusters A B]`: MirrorMaker 2's dedicated mode
//! (Apache's `connect-mirror-maker.sh`, class `org.apache.kafka.connect.mirror.MirrorMaker`),
//! issue #44.
//!
//! Reads MirrorMaker's file format ([`tributary_mirror::maker_config`]) and runs one
//! distributed herder per replication flow whose target cluster this process serves (every
//! cluster of `clusters`, or those named by `--clusters`), as Apache's `MirrorMaker` does: each
//! herder's worker configuration is the flow's (`<source>-mm2` group and `mm2-*.<source>.internal`
//! topics on the target cluster, ByteArrayConverter), so that several processes, Tributary's or
//! Java's, running the same file share each flow's work. Whenever a herder becomes its group's
//! leader, it writes the flow's three connector configurations
//! (`MirrorSourceConnector`, `MirrorCheckpointConnector`, `MirrorHeartbeatConnector`, named by
//! their simple class names) where they differ from the config topic's (Java's `MirrorHerder`).
//! The connectors are Tributary's native ones unless `plugin.path` holds Apache's.
//!
//! There is no public REST API, as in Apache's dedicated mode. With
//! `dedicated.mode.enable.internal.rest=true` (KIP-710) the process serves, on `listeners`
//! (default `http://:8083`; `rest.advertised.*` and the listener's TLS settings as a worker's),
//! the endpoints a follower calls on its group's leader, task configurations and zombie
//! fencing, under each flow's namespace (`/<source>/<target>/connectors/{name}/tasks`, as
//! Java's `MirrorRestServer`), and advertises that URL to its groups; several processes (Java
//! or Tributary) can then share a flow whatever worker runs its connectors. Without it, as
//! in Java, a follower cannot hand task configurations over: run one process per target
//! cluster (`--clusters`), or a single process.

use std::collections::HashMap;

use std::path::PathBuf;
use std::sync::Arc;
use tributary_runtime::rest::{self, RestState};

use tributary_mirror::maker_config::{
    MirrorConnector, MirrorMakerConfig, ENABLE_INTERNAL_REST_CONFIG,
};
use tributary_runtime::config::properties::load_properties;
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};
use tributary_runtime::herder::distributed::DistributedHerder;
use tributary_runtime::herder::Herder;

use crate::startup::{kafka_cluster_id, load_plugins, ShutdownSignal};

/// The URL a herder advertises without an internal REST server (Java's `MirrorMaker` uses
/// the same placeholder).
const NO_REST_URL: &str = "NOTUSED";

/// The flows a process runs: every enabled or heartbeat-emitting `(source, target)` pair whose
/// target is in `targets` (all clusters when empty). Errors as Java's: an unknown cluster is
/// simply not matched, and no flow at all is refused.
pub fn flows_for(
    config: &MirrorMakerConfig,
    targets: &[String],
) -> Result<Vec<(String, String)>, String> {
    let flows: Vec<(String, String)> = config
        .cluster_pairs()
        .into_iter()
        .filter(|(_, target)| targets.is_empty() || targets.contains(target))
        .collect();
    if flows.is_empty() {
        return Err("No source->target replication flows.".to_string());
    }
    Ok(flows)
}

/// One flow's herder and what it needs to configure the flow's connectors.
struct FlowHerder {
    source: String,
    target: String,
    herder: Arc<DistributedHerder>,
}

/// Writes the flow's connector configs that differ from the config topic's (Java's
/// `MirrorHerder.configureConnectors`); blocking (the herder's calls wait for the config
/// topic). A call refused because leadership moved on is logged, as Java logs it.
fn configure_connectors(config: &MirrorMakerConfig, flow: &FlowHerder) {
    for connector in MirrorConnector::ALL {
        let name = connector.simple_name();
        let desired = config.connector_base_config(&flow.source, &flow.target, connector);
        let actual = flow.herder.connector_config(name).ok();
        if actual.as_ref() == Some(&desired) {
            tracing::info!(
                "This node is a leader for {}->{} and configuration for {name} is already up to date.",
                flow.source,
                flow.target
            );
            continue;
        }
        match flow
            .herder
            .put_connector_config(name, desired, true, None)
        {
            Ok(_) => tracing::info!("{name} connector configured for {}->{}.", flow.source, flow.target),
            Err(tributary_runtime::herder_error::HerderError::NotLeader(_)) => tracing::info!(
                "This node lost leadership for {name} while trying to update the connector configuration for {}->{}. Using existing connector configuration.",
                flow.source,
                flow.target
            ),
            Err(e) => tracing::error!(
                "Failed to configure {name} connector for {}->{}: {e}",
                flow.source,
                flow.target
            ),
        }
    }
}

/// Watches the herder's rebalances: each time it settles as the new leader, the flow's
/// connectors are configured (Java's `MirrorHerder.rebalanceSuccess`).
async fn lead(config: Arc<MirrorMakerConfig>, flow: Arc<FlowHerder>) {
    let Some(mut membership) = flow.herder.membership() else {
        return;
    };
    let mut was_leader = false;
    loop {
        let m = *membership.borrow_and_update();
        if m.stopping {
            return;
        }
        if !m.rebalancing {
            let leader = flow.herder.leads();
            if leader && !was_leader {
                tracing::info!(
                    "This node is now a leader for {}->{}. Configuring connectors...",
                    flow.source,
                    flow.target
                );
                let (c, f) = (Arc::clone(&config), Arc::clone(&flow));
                if let Err(e) =
                    tokio::task::spawn_blocking(move || configure_connectors(&c, &f)).await
                {
                    tracing::error!("configuring the connectors failed: {e}");
                }
            }
            was_leader = leader;
        }
        if membership.changed().await.is_err() {
            return;
        }
    }
}

/// Runs MirrorMaker 2's dedicated mode until SIGINT/SIGTERM. Errors (naming the file, and the
/// flow or key): a file that cannot be read, a setting refused, a cluster that cannot be
/// reached, no flow to run.
pub async fn run(path: PathBuf, clusters: Vec<String>) -> Result<(), String> {
    let signal = ShutdownSignal::install();
    let file = path.display().to_string();
    let raw = load_properties(&path).map_err(|e| e.to_string())?;
    let config =
        MirrorMakerConfig::parse(raw.into_iter().collect()).map_err(|e| format!("{file}: {e}"))?;
    let internal_rest = config
        .setting(ENABLE_INTERNAL_REST_CONFIG)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let flows = flows_for(&config, &clusters).map_err(|e| format!("{file}: {e}"))?;
    let internal = if internal_rest {
        Some(InternalRest::bind(&config, &flows[0], &file).await?)
    } else {
        None
    };
    let url = internal
        .as_ref()
        .map_or_else(|| NO_REST_URL.to_string(), |i| i.url.clone());
    tracing::info!(
        "Kafka MirrorMaker starting with {} herders: {}",
        flows.len(),
        flows
            .iter()
            .map(|(s, t)| format!("{s}->{t}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let config = Arc::new(config);
    // The herders start together (each reads its internal topics and finds its coordinator),
    // as Java's start them without waiting for one another.
    let mut starting = tokio::task::JoinSet::new();
    for (i, (source, target)) in flows.into_iter().enumerate() {
        let flow_name = format!("{source}->{target}");
        let source_label = format!("{file} ({flow_name})");
        let mut props: HashMap<String, String> =
            config.worker_config(&source, &target).into_iter().collect();
        if internal_rest {
            // The followers' client for the leader's internal REST server: the listener's
            // TLS settings, as Java's RestClient reads them from the top level.
            for (k, v) in config.settings() {
                if k.starts_with("listeners.https.") {
                    props.insert(k.clone(), v.clone());
                }
            }
        }
        let worker = WorkerConfig::parse(WorkerMode::Distributed, props, &source_label)
            .map_err(|e| e.to_string())?;
        let url = url.clone();
        starting.spawn(async move {
            let plugins = Arc::new(load_plugins(&worker, &source_label).await?);
            let w = worker.clone();
            let cluster_id = tokio::task::spawn_blocking(move || kafka_cluster_id(&w))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{source_label}: cluster {target}: {e}"))?;
            let herder = DistributedHerder::start(
                worker,
                plugins,
                url,
                flow_name.clone(),
                Some(cluster_id),
                vec![source.clone(), target.clone()],
            )
            .await
            .map_err(|e| format!("{source_label}: {e}"))?;
            tracing::info!("created herder for {flow_name}");
            Ok::<_, String>((
                i,
                Arc::new(FlowHerder {
                    source,
                    target,
                    herder,
                }),
            ))
        });
    }
    let mut started: Vec<(usize, Arc<FlowHerder>)> = Vec::new();
    let mut failure = None;
    loop {
        tokio::select! {
            next = starting.join_next() => match next {
                None => break,
                Some(Ok(Ok(flow))) => started.push(flow),
                Some(Ok(Err(e))) => {
                    failure.get_or_insert(e);
                }
                Some(Err(e)) => {
                    failure.get_or_insert(e.to_string());
                }
            },
            _ = signal.wait() => {
                tracing::info!("stopping before MirrorMaker started");
                starting.abort_all();
                let herders: Vec<Arc<FlowHerder>> = started.into_iter().map(|(_, f)| f).collect();
                stop_all(&herders).await;
                return Ok(());
            }
        }
    }
    started.sort_by_key(|(i, _)| *i);
    let herders: Vec<Arc<FlowHerder>> = started.into_iter().map(|(_, f)| f).collect();
    if let Some(e) = failure {
        stop_all(&herders).await;
        return Err(e);
    }
    let leaders: Vec<_> = herders
        .iter()
        .map(|f| tokio::spawn(lead(Arc::clone(&config), Arc::clone(f))))
        .collect();
    let server = internal.map(|i| {
        let flows = herders
            .iter()
            .map(|f| {
                (
                    tributary_runtime::peer::namespace_path(&[f.source.clone(), f.target.clone()]),
                    RestState::new(Arc::clone(&f.herder) as Arc<dyn Herder>, i.url.clone())
                        .secured(&i.security),
                )
            })
            .collect();
        tracing::info!("Internal REST server listening on {}", i.url);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(rest::serve_internal(i.bound, flows, async move {
            stopped.await.ok();
        }));
        (stop, handle)
    });
    tracing::info!(
        "Kafka MirrorMaker started; connectors are configured once a herder leads its group"
    );
    signal.wait().await;
    tracing::info!("Kafka MirrorMaker stopping");
    stop_all(&herders).await;
    if let Some((stop, handle)) = server {
        stop.send(()).ok();
        handle.await.ok();
    }
    for l in leaders {
        l.abort();
    }
    tracing::info!("Kafka MirrorMaker stopped.");
    // As `tributary distributed`: everything is written and the groups left.
    for f in herders {
        std::mem::forget(f);
    }
    Ok(())
}

/// The bound listener of KIP-710's internal REST server, and what it advertises.
struct InternalRest {
    bound: rest::BoundListener,
    url: String,
    security: rest::RestSecurity,
}

impl InternalRest {
    /// Binds the first of the file's `listeners` (default `http://:8083`), reading it, the
    /// `rest.advertised.*` settings and the listeners' TLS settings as a worker does (over
    /// the first flow's worker configuration). Errors name the file and key.
    async fn bind(
        config: &MirrorMakerConfig,
        first: &(String, String),
        file: &str,
    ) -> Result<InternalRest, String> {
        let mut props: HashMap<String, String> = config
            .worker_config(&first.0, &first.1)
            .into_iter()
            .collect();
        for (k, v) in config.settings() {
            if k.starts_with("listeners")
                || k.starts_with("rest.")
                || k.starts_with("ssl.")
                || k == "admin.listeners"
            {
                props.insert(k.clone(), v.clone());
            }
        }
        let source = format!("{file} (internal REST)");
        let worker = WorkerConfig::parse(WorkerMode::Distributed, props, &source)
            .map_err(|e| e.to_string())?;
        let kafka_opts = std::env::var("KAFKA_OPTS").ok();
        let security = rest::RestSecurity::from_worker(&worker, kafka_opts.as_deref())
            .map_err(|(key, message)| format!("{file}: key '{key}': {message}"))?;
        let listener = worker
            .settings()
            .listeners
            .first()
            .cloned()
            .ok_or_else(|| format!("{file}: no listener in 'listeners'"))?;
        let bound = rest::bind(&listener).await.map_err(|e| {
            format!(
                "{file}: key 'listeners': cannot bind {}:{}: {e}",
                listener.host, listener.port
            )
        })?;
        let (host, port) = rest::advertised(&worker, &listener, bound.local_addr);
        Ok(InternalRest {
            bound,
            url: format!("{}://{host}:{port}", listener.protocol),
            security,
        })
    }
}

/// Stops every herder at once (each leaves its group within its shutdown timeout).
async fn stop_all(herders: &[Arc<FlowHerder>]) {
    let mut stops = tokio::task::JoinSet::new();
    for f in herders {
        let herder = Arc::clone(&f.herder);
        stops.spawn(async move { herder.stop().await });
    }
    while stops.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> MirrorMakerConfig {
        MirrorMakerConfig::parse(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn a_process_runs_the_flows_into_its_clusters() {
        let c = config(&[
            ("clusters", "A, B, C"),
            ("A->B.enabled", "true"),
            ("emit.heartbeats.enabled", "false"),
            ("B->C.enabled", "true"),
        ]);
        assert_eq!(
            flows_for(&c, &[]).unwrap(),
            [("A".into(), "B".into()), ("B".into(), "C".into())]
        );
        assert_eq!(
            flows_for(&c, &["C".into()]).unwrap(),
            [("B".to_string(), "C".to_string())]
        );
        assert_eq!(
            flows_for(&c, &["A".into()]).unwrap_err(),
            "No source->target replication flows."
        );
    }
}
